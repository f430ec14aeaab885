"""The SLURM cluster tests run only under ``make test-cluster`` (HLM_CLUSTER_TESTS=1): they install and start
daemons as root and take about 20 minutes, so the normal test run reports them as skipped."""

import os

import pytest


def pytest_collection_modifyitems(config, items):
    if os.environ.get("HLM_CLUSTER_TESTS") == "1":
        return
    skip = pytest.mark.skip(reason="the SLURM cluster tests: make test-cluster")
    for item in items:
        if "cluster" in item.keywords:
            item.add_marker(skip)
