"""Jobs that a SLURM cluster killed for their memory, told to the user in one line each.

SLURM's step daemon writes ``StepId=J.0 exceeded memory limit (USED > LIMIT), being killed`` (bytes) into the
job's log, which Snakemake's SLURM executor keeps under ``.snakemake/slurm_logs/rule_{rule}/{wildcards}/
{jobid}.log`` when the job fails. After a failed run the Snakefile's ``onerror`` prints every such job of that
run: the rule, its wildcards, the memory used and asked for, and the option that asks for more.

Examples
--------
>>> import os, tempfile
>>> from pathlib import Path
>>> from hlm.pipeline.cluster import memory_kills
>>> root = Path(tempfile.mkdtemp())
>>> log = root / "rule_knn" / "sonar" / "12.log"
>>> log.parent.mkdir(parents=True)
>>> _ = log.write_text("slurmstepd-vm: error: StepId=12.0 exceeded memory limit (325058560 > 104857600), "
...                    "being killed\\n")
>>> [kill.line() for kill in memory_kills(root, since=0)]  # doctest: +NORMALIZE_WHITESPACE
['rule knn (sonar), SLURM job 12: killed by SLURM for its memory, 310 MB used of the 100 MB asked (mem_mb);
  rerun with more, e.g. --set-resources knn:mem_mb=700']
>>> _ = (log.parent / "13.log").write_text(log.read_text().replace("12.0", "13.0"))  # the retry, killed too
>>> print(memory_kills(root, since=0)[0].line()[:47])
rule knn (sonar), SLURM job 13 (2 attempts): ki
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from pathlib import Path

#: slurmstepd's line for a step over its memory (jobacct_gather's OverMemoryKill; bytes)
EXCEEDED = re.compile(r"StepId=(\d+)\.\S+ exceeded memory limit \((\d+) > (\d+)\)")
#: the kernel's OOM killer under task/cgroup
OOM = re.compile(r"Detected \d+ oom[_-]kill event")
MB = 1024 * 1024


@dataclass(frozen=True)
class MemoryKill:
    """One job killed for its memory."""

    rule: str
    wildcards: str
    job_id: str
    used_mb: int | None
    asked_mb: int | None
    #: how many of the run's attempts at this job were killed so
    attempts: int = 1

    def line(self) -> str:
        """One line for the user: the rule and wildcards, the last attempt's memory, and how to ask for more.

        The memory used is what SLURM saw when it killed the job, so the job needs more than that: the line
        suggests twice the larger of the memory used and asked."""
        where = f"rule {self.rule}" + (f" ({self.wildcards})" if self.wildcards else "")
        times = f" ({self.attempts} attempts)" if self.attempts > 1 else ""
        if self.used_mb is None or self.asked_mb is None:
            amount, more = "over the memory it asked for (mem_mb)", ""
        else:
            amount = f"{self.used_mb} MB used of the {self.asked_mb} MB asked (mem_mb)"
            suggested = 100 * math.ceil(2 * max(self.used_mb, self.asked_mb) / 100)
            more = f", e.g. --set-resources {self.rule}:mem_mb={suggested}"
        return (f"{where}, SLURM job {self.job_id}{times}: killed by SLURM for its memory, {amount}; "
                f"rerun with more{more}")


def memory_kills(log_root: str | Path, since: float) -> list[MemoryKill]:
    """The jobs whose SLURM logs under ``log_root`` (modified at or after ``since``, a time stamp) say that SLURM
    killed them for their memory: one per (rule, wildcards), its last attempt's, sorted by rule and wildcards."""
    kills = []
    for log in Path(log_root).glob("rule_*/**/*.log"):
        try:
            if log.stat().st_mtime < since:
                continue
            text = log.read_text(errors="replace")
        except OSError:  # removed meanwhile
            continue
        exceeded = EXCEEDED.search(text)
        if not exceeded and not OOM.search(text):
            continue
        rel = log.relative_to(log_root).parts
        rule, wildcards = rel[0].removeprefix("rule_"), "/".join(rel[1:-1])
        used, asked = (int(exceeded[2]) // MB, int(exceeded[3]) // MB) if exceeded else (None, None)
        kills.append(MemoryKill(rule, wildcards, log.stem, used, asked))
    last: dict[tuple[str, str], MemoryKill] = {}
    for kill in sorted(kills, key=lambda k: (len(k.job_id), k.job_id)):  # SLURM's job ids increase
        before = last.get((kill.rule, kill.wildcards))
        last[kill.rule, kill.wildcards] = replace(kill, attempts=before.attempts + 1 if before else 1)
    return [last[key] for key in sorted(last)]
