"""Test-session set-up: single-threaded BLAS, as in pipeline jobs (see hlm.pipeline.jobs), a header line naming
the CPU code paths the numerical tests ran on (``make test`` runs them on two), and the SLURM cluster tests
(marker ``cluster``) skipped unless ``make test-cluster`` asks for them (HLM_CLUSTER_TESTS=1): they install and
start daemons as root and take about 10 minutes. (One conftest for the whole tree: tests/ is on sys.path, so a
second conftest module would clash with this one by name.)"""

import os

import pytest
from threadpoolctl import threadpool_info, threadpool_limits


def pytest_report_header(config):
    import numba
    import numpy as np

    features = np._core._multiarray_umath.__cpu_features__
    simd = [name for name in ("AVX2", "AVX512F", "AVX512_SKX") if features.get(name)]
    blas = sorted({str(info.get("architecture")) for info in threadpool_info() if info.get("user_api") == "blas"})
    numba_cpu = os.environ.get("NUMBA_CPU_NAME") or numba.config.CPU_NAME or "host"
    return (f"CPU dispatch: numpy SIMD {' '.join(simd) or 'baseline'}"
            f"{' (NPY_DISABLE_CPU_FEATURES set)' if os.environ.get('NPY_DISABLE_CPU_FEATURES') else ''}; "
            f"OpenBLAS {', '.join(blas)}; numba CPU {numba_cpu}")


@pytest.fixture(autouse=True, scope="session")
def _single_threaded_blas():
    with threadpool_limits(limits=1, user_api="blas"):
        yield


def pytest_collection_modifyitems(config, items):
    if os.environ.get("HLM_CLUSTER_TESTS") == "1":
        return
    skip = pytest.mark.skip(reason="the SLURM cluster tests: make test-cluster")
    for item in items:
        if "cluster" in item.keywords:
            item.add_marker(skip)
