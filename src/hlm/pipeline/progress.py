"""Progress lines a user can follow: the elapsed time of a job and an estimate of the time left, after each
of its splits, partitions or folds (docs/pipeline.md, "Following a run").

Examples
--------
>>> from hlm.pipeline.progress import Progress
>>> ticks = iter([0.0, 30.0, 75.0])
>>> progress = Progress(4, clock=lambda: next(ticks))  # started at t = 0
>>> progress(1)  # one of four done at t = 30 s: three more at 30 s each
'1 of 4, elapsed 30 s, about 1 min 30 s left'
>>> progress(2)
'2 of 4, elapsed 1 min 15 s, about 1 min 15 s left'
"""

from __future__ import annotations

import time
from collections.abc import Callable


def duration(seconds: float) -> str:
    """``42 s``, ``3 min 05 s``, ``1 h 02 min``: seconds as a person reads them."""
    seconds = int(round(max(0.0, float(seconds))))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        minutes, secs = divmod(seconds, 60)
        return f"{minutes} min {secs:02d} s" if secs else f"{minutes} min"
    hours, minutes = divmod(int(round(seconds / 60)), 60)
    return f"{hours} h {minutes:02d} min"


class Progress:
    """``progress(done)``: "done of total, elapsed ..., about ... left", the time left at the mean pace so far.

    Parameters
    ----------
    total : int
        How many units (splits, partitions, folds) the job runs.
    clock : callable, default time.perf_counter
        The clock; read once here (the start) and once per call.
    """

    def __init__(self, total: int, clock: Callable[[], float] = time.perf_counter):
        self.total, self.clock, self.start = int(total), clock, clock()

    def __call__(self, done: int) -> str:
        elapsed = self.clock() - self.start
        tail = ""
        if 0 < done < self.total:  # the mean pace so far, over what is left
            tail = f", about {duration(elapsed / done * (self.total - done))} left"
        return f"{done} of {self.total}, elapsed {duration(elapsed)}{tail}"
