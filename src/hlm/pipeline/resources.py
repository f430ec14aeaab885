"""What a job asks of a cluster: its memory and its run time, from the measured figures.

The figures are ``workflow/costs.tsv`` (:mod:`hlm.pipeline.forecast`): one job's CPU seconds and peak memory
(max RSS) per (rule, data set), measured on the machine of ``docs/performance.md``. A job asks for

- ``mem_mb``: 1.5 times its peak plus 256 MB, rounded up to 100 MB (the largest figure of its rule for a data set
  never measured, 2,000 MB for a rule never measured), times the attempt: a job that SLURM kills for its memory
  asks for twice as much when Snakemake retries it;
- ``runtime`` (minutes): three times its CPU time spread over its threads (another machine can be twice as slow),
  at least 10 minutes (60 for a job never measured), times the attempt.

Snakemake runs locally without these limits; an executor plugin passes them to the cluster (SLURM: ``--mem`` and
``-t``). ``--set-resources RULE:mem_mb=N`` on the command line wins over them.

Examples
--------
>>> from hlm.pipeline.resources import Requests
>>> req = Requests({("knn", "sonar"): (3.0, 310)})
>>> req.mem_mb("knn", "sonar", attempt=1), req.mem_mb("knn", "sonar", attempt=2)
(800, 1600)
>>> req.mem_mb("knn", "letter", attempt=1)  # not measured on Letter: the rule's largest figure
800
>>> req.runtime("knn", "sonar", threads=1, attempt=1), req.runtime("psvm", "sonar", threads=1, attempt=1)
(10, 60)
"""

from __future__ import annotations

import math
from pathlib import Path

from hlm.pipeline.forecast import read_rows

#: what a job of a rule never measured asks for
UNMEASURED_MEM_MB, UNMEASURED_MINUTES = 2000, 60
#: the margins over a measured job
MEM_FACTOR, MEM_EXTRA_MB, TIME_FACTOR, MIN_MINUTES = 1.5, 256, 3.0, 10


class Requests:
    """Per-job requests from measured figures: ``{(rule, data set or ""): (cpu seconds, max RSS in MB)}``."""

    def __init__(self, figures: dict[tuple[str, str], tuple[float, int]]):
        self.figures = dict(figures)
        self._rule_max: dict[str, tuple[float, int]] = {}
        for (rule, _), (cpu, rss) in self.figures.items():
            old = self._rule_max.get(rule, (0.0, 0))
            self._rule_max[rule] = (max(old[0], cpu), max(old[1], rss))

    @classmethod
    def from_costs(cls, path: str | Path) -> Requests:
        """The requests from a costs table (``workflow/costs.tsv``); every job unmeasured if it is missing."""
        return cls({(rule, dataset): (cpu, rss) for rule, dataset, _, cpu, rss in read_rows(path)})

    def _figure(self, rule: str, dataset: str, like: str | None) -> tuple[float, int] | None:
        names = (rule,) if like is None else (rule, like)
        for figure in [self.figures.get((name, dataset)) for name in names] + [self._rule_max.get(n) for n in names]:
            if figure is not None:
                return figure
        return None

    def mem_mb(self, rule: str, dataset: str = "", attempt: int = 1, like: str | None = None) -> int:
        """Memory to ask for (MB) on the given attempt (1 for the first); ``like``: a rule whose figures count for
        a rule that has none (a part of a method's job counts as the whole job)."""
        figure = self._figure(rule, dataset, like)
        if figure is None:
            return UNMEASURED_MEM_MB * attempt
        return 100 * math.ceil((MEM_FACTOR * figure[1] + MEM_EXTRA_MB) / 100) * attempt

    def runtime(self, rule: str, dataset: str = "", threads: int = 1, attempt: int = 1,
                like: str | None = None) -> int:
        """Run time to ask for (minutes) on the given attempt (``like``: as for :meth:`mem_mb`)."""
        figure = self._figure(rule, dataset, like)
        if figure is None:
            return UNMEASURED_MINUTES * attempt
        return max(MIN_MINUTES, math.ceil(TIME_FACTOR * figure[0] / max(threads, 1) / 60)) * attempt
