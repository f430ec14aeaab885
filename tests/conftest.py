"""Test-session set-up: single-threaded BLAS, as in pipeline jobs (see hlm.jobs)."""

import pytest
from threadpoolctl import threadpool_limits


@pytest.fixture(autouse=True, scope="session")
def _single_threaded_blas():
    with threadpool_limits(limits=1, user_api="blas"):
        yield
