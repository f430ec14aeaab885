"""Running a pipeline stage inside a Snakemake job: logging and user-facing errors.

Log records and Python warnings go to the job's ``log:`` file and to stderr.
An ``HLMError`` (bad data, bad config) ends the job with one line,
``hlm: error: <message>``, no traceback and exit status 2 (as ``hlm check``).

BLAS runs single-threaded in a job: a job's parallelism is its CV worker
processes (Snakemake ``threads``), and multithreaded BLAS on the small
matrices of these methods only oversubscribes the cores (measured: a
128 x 128 ``eigh`` took 0.3 s with OpenBLAS threads under load, 5 ms with one).

A Snakemake job that has finished its work ends at once (``os._exit(0)`` once the
logs are flushed and joblib's worker processes are shut down), without the
interpreter's teardown: pyarrow's thread pools can abort a process in that
teardown ("terminate called without an active exception", SIGABRT; a known
defect of Arrow's C++ thread pools), which made Snakemake fail a job whose
outputs were complete (seen once in a ``choose_models`` job under load).
"""

from __future__ import annotations

import logging
import sys
import warnings
from collections.abc import Callable
from pathlib import Path

from hlm.errors import HLMError, error_line, print_error


def setup_logging(log_file: str | None) -> logging.Logger:
    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stderr)]
    if log_file:
        handlers.append(logging.FileHandler(log_file, mode="w"))
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s",
                        handlers=handlers, force=True)
    logging.captureWarnings(True)
    warnings.simplefilter("default")
    for noisy in ("mlflow", "alembic", "urllib3", "matplotlib", "numba"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    return logging.getLogger("hlm")


def run(job: Callable[[], None], log_file: str | None = None) -> None:
    """Run ``job``; turn an HLMError into a one-line message and exit status 2."""
    log = setup_logging(log_file)
    from threadpoolctl import threadpool_limits

    import hlm

    log.info("hlm library: %s", Path(hlm.__file__).parent)
    try:
        with threadpool_limits(limits=1, user_api="blas"):
            job()
    except HLMError as exc:
        log.error("%s", error_line(exc))
        sys.exit(print_error(exc))
    log.info("%s", resource_line())
    if getattr(sys.modules.get("__main__"), "snakemake", None) is not None:  # a script job, not a test's call
        exit_now()


def exit_now() -> None:
    """End a finished job's process with status 0, skipping the interpreter's teardown (the module docstring):
    joblib's reusable worker processes are shut down first, as its exit handler would, then the logs and the
    standard streams are flushed."""
    import os

    reusable = sys.modules.get("joblib.externals.loky.reusable_executor")
    executor = getattr(reusable, "_executor", None)  # the one a CV made, if any (asking for it would make one)
    if executor is not None:
        executor.shutdown(wait=True)
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


#: the last line of a finished job's log (read by benchmarks/cpu_by_rule.py)
RESOURCE_PREFIX = "job resources:"


def resource_line() -> str:
    """``job resources: cpu 12.34 s, max rss 456 MB, rule knn, dataset sonar``: the CPU seconds of this process
    and of its children it has waited for (the CV worker processes), since the process started; in a Snakemake
    job, its rule and data set (the costs of ``hlm.pipeline.forecast``)."""
    import resource

    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime
    rss_mb = max(own.ru_maxrss, children.ru_maxrss) / 1024  # Linux: kilobytes
    line = f"{RESOURCE_PREFIX} cpu {cpu:.2f} s, max rss {rss_mb:.0f} MB"
    job = getattr(sys.modules.get("__main__"), "snakemake", None)  # a script job's (Snakemake's preamble)
    if job is not None:
        line += f", rule {job.rule}, dataset {getattr(job.wildcards, 'dataset', '') or '-'}"
    return line
