"""What a run will cost, printed before it starts: its jobs and their expected CPU time.

The figures are the project's measured ones, ``workflow/costs.tsv``: the CPU seconds of one job of each (rule,
data set) in a run on the machine of ``docs/performance.md`` (a job's log ends with them: ``job resources: cpu S
s``), written by ``benchmarks/cpu_by_rule.py --costs``. A job without a figure of its own counts as the median job of
its rule, and one of a rule never measured as the median of all jobs; the forecast says how many it guessed.
"""

from __future__ import annotations

import csv
import statistics
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from hlm.pipeline.progress import duration

#: the columns of the costs table
COLUMNS = ("rule", "dataset", "jobs", "cpu_seconds", "max_rss_mb")


@dataclass(frozen=True)
class Forecast:
    """A run's jobs and their expected CPU seconds (:func:`forecast`)."""

    jobs: int
    cpu_seconds: float
    #: jobs counted at their rule's median (no figure of their own)
    by_rule: int
    #: jobs counted at the median of all jobs (a rule never measured)
    guessed: int
    #: the longest single job's expected CPU seconds (a cluster's run takes at least its wall time)
    longest: float

    def line(self, cores: int | None) -> str:
        """One line for the user: the jobs, the CPU time and, given ``cores``, the least wall time on them."""
        text = f"hlm: {self.jobs} jobs to run, about {duration(self.cpu_seconds)} of CPU by the measured figures"
        if cores:  # a lower bound when every figure is measured: the cores cannot do more than that CPU time
            text += f", so at least {duration(self.cpu_seconds / cores)} on {cores} core{'s' if cores != 1 else ''}"
        unknown = [f"{n} at their rule's median" for n in (self.by_rule,) if n]
        unknown += [f"{n} at the median job" for n in (self.guessed,) if n]
        return text + f" (workflow/costs.tsv{'; not measured: ' + ', '.join(unknown) if unknown else ''})"


def read_rows(path: str | Path) -> list[tuple[str, str, int, float, int]]:
    """The table's rows (``COLUMNS``); [] when the file is missing."""
    path = Path(path)
    if not path.is_file():
        return []
    with path.open(encoding="utf-8", newline="") as handle:
        return [(row["rule"], row["dataset"], int(row["jobs"]), float(row["cpu_seconds"]), int(row["max_rss_mb"]))
                for row in csv.DictReader(handle, delimiter="\t")]


def read_costs(path: str | Path) -> dict[tuple[str, str], float]:
    """(rule, data set or "") -> the CPU seconds of one job; {} when the file is missing."""
    return {(rule, dataset): cpu for rule, dataset, _, cpu, _ in read_rows(path)}


def write_costs(path: str | Path, rows: Iterable[tuple[str, str, int, float, int]]) -> None:
    """Write the table (``COLUMNS``; per-job CPU seconds, the jobs' largest peak memory), sorted by rule."""
    from hlm.datasets._artifacts import write_text

    lines = ["\t".join(COLUMNS)]
    lines += [f"{rule}\t{dataset}\t{jobs}\t{cpu:.1f}\t{rss}" for rule, dataset, jobs, cpu, rss in sorted(rows)]
    write_text("\n".join(lines) + "\n", path)


def forecast(jobs: Iterable[tuple[str, str]], costs: dict[tuple[str, str], float],
             shares: dict[tuple[str, str], tuple[str, float]] | None = None) -> Forecast:
    """The expected CPU of ``jobs``, each (rule, data set or "").

    ``shares``: for a job that runs a part of another rule's job (``<method>_part``, a protocol's parts), (that
    rule, the part's share of it): without a figure of its own it counts as that share of the whole job's.
    """
    jobs, shares = list(jobs), shares or {}
    per_rule: dict[str, list[float]] = {}
    for (rule, _), cpu in costs.items():
        per_rule.setdefault(rule, []).append(cpu)
    median_rule = {rule: statistics.median(cpus) for rule, cpus in per_rule.items()}
    median_job = statistics.median(costs.values()) if costs else 0.0
    total, by_rule, guessed, longest = 0.0, 0, 0, 0.0
    for rule, dataset in jobs:
        whole, share = shares.get((rule, dataset), (None, 1.0))
        if (rule, dataset) in costs:
            cpu = costs[rule, dataset]
        elif (whole, dataset) in costs:
            cpu = share * costs[whole, dataset]
        elif rule in median_rule:
            cpu, by_rule = median_rule[rule], by_rule + 1
        else:
            cpu, guessed = median_job, guessed + 1
        total += cpu
        longest = max(longest, cpu)
    return Forecast(len(jobs), total, by_rule, guessed, longest)
