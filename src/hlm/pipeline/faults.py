"""Fault points: where a test holds a job in order to kill it there (tests/workflow/test_faults.py).

A job that reaches the point named by the environment variable ``HLM_FAULT_POINT`` (e.g. ``track/sonar``)
writes its process id to the file ``HLM_FAULT_SIGNAL`` (atomically: the file appears whole) and waits there,
for at most ``HLM_FAULT_WAIT`` seconds (default 600), for the test to kill it; then it goes on. One process
holds at a point, once: the first claims it by a file beside the signal, so that the job's retry (a cluster's
executor resubmits a killed job) goes on past it. So the kill lands at that point on any machine, however fast
the job: the test waits for the signal, not for luck.
Without the variables a point costs one lookup.

Examples
--------
>>> import os
>>> from hlm.pipeline.faults import fault_point
>>> fault_point("track/sonar")  # no HLM_FAULT_POINT: nothing happens
>>> os.environ.update(HLM_FAULT_POINT="x", HLM_FAULT_SIGNAL=os.devnull + ".never")
>>> fault_point("track/sonar")  # another point: nothing happens either
>>> del os.environ["HLM_FAULT_POINT"], os.environ["HLM_FAULT_SIGNAL"]
"""

from __future__ import annotations

import os
import time


def fault_point(name: str) -> None:
    """Hold here to be killed when ``HLM_FAULT_POINT`` names this point (module docstring)."""
    if os.environ.get("HLM_FAULT_POINT") != name:
        return
    del os.environ["HLM_FAULT_POINT"]  # a process holds once (a method job passes its point after every split)
    signal_file = os.environ["HLM_FAULT_SIGNAL"]
    try:  # and only the first process to get here: a retry of the killed job goes on
        os.close(os.open(f"{signal_file}.{name.replace('/', '_')}.held", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return
    tmp = f"{signal_file}.{os.getpid()}.tmp"
    with open(tmp, "w") as f:
        f.write(f"{os.getpid()}\n")
    os.replace(tmp, signal_file)
    time.sleep(float(os.environ.get("HLM_FAULT_WAIT", "600")))
