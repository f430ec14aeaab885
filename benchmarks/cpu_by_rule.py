"""CPU seconds of a pipeline run, by rule, from the jobs' logs, with each rule's largest job in memory.

Every job ends its log with ``job resources: cpu S s, max rss M MB`` (``hlm.pipeline.jobs.resource_line``:
the CPU time of the job's process and of the children it waited for, and the larger peak resident
memory of the two). This sums the CPU by rule and prints the table of docs/performance.md, largest
first, with each rule's share, the largest peak memory of its jobs and the total; a job without that
line (still running, failed or killed) is counted apart. (Snakemake's own record of every job, wall
time and max_rss included, is in ``logs/benchmarks/``.)

    .venv/bin/python benchmarks/cpu_by_rule.py            (after `make run`, in the project folder)
    .venv/bin/python benchmarks/cpu_by_rule.py --logs path/to/logs --markdown
"""

from __future__ import annotations

import argparse
import re
from collections import defaultdict
from pathlib import Path

from hlm.pipeline.jobs import RESOURCE_PREFIX

LINE = re.compile(re.escape(RESOURCE_PREFIX) + r" cpu ([0-9.]+) s, max rss ([0-9]+) MB")


def rule_of(log: Path, logs: Path) -> str:
    """The rule that wrote ``log`` (the layout of the rules' ``log:`` paths)."""
    parts = log.relative_to(logs).parts
    if parts[0] == "evaluate":  # evaluate/{dataset}/{method}.log: one rule per method
        return log.stem
    if parts[0] == "incremental":  # incremental/{dataset}/{scheme}.log
        return f"incremental_{log.stem}"
    if parts[0] == "report":  # report/{rule}.log, report/cv_components_{dataset}.log
        return "cv_components_figure" if log.stem.startswith("cv_components_") else log.stem
    return {"blocks": "distance_block"}.get(parts[0], parts[0])


def jobs_by_rule(logs: Path) -> tuple[dict[str, list[tuple[float, int]]], list[Path]]:
    """(rule -> (CPU seconds, max RSS in MB) of each finished job, logs without a resource line)."""
    found, unfinished = defaultdict(list), []
    for log in sorted(logs.rglob("*.log")):
        match = LINE.search(log.read_text(errors="replace"))
        if match:
            found[rule_of(log, logs)].append((float(match.group(1)), int(match.group(2))))
        else:
            unfinished.append(log)
    return dict(found), unfinished


def cpu_by_rule(logs: Path) -> tuple[dict[str, list[float]], list[Path]]:
    """(rule -> CPU seconds of each finished job, logs without a resource line)."""
    found, unfinished = jobs_by_rule(logs)
    return {rule: [cpu for cpu, _ in jobs] for rule, jobs in found.items()}, unfinished


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--logs", type=Path, default=Path("logs"))
    parser.add_argument("--markdown", action="store_true", help="a Markdown table")
    args = parser.parse_args(argv)
    found, unfinished = jobs_by_rule(args.logs)
    total = sum(cpu for jobs in found.values() for cpu, _ in jobs)
    share = (lambda cpu: cpu / total) if total else (lambda cpu: 0.0)
    rows = sorted(((sum(c for c, _ in jobs), len(jobs), max(r for _, r in jobs), rule)
                   for rule, jobs in found.items()), reverse=True)
    if args.markdown:
        print("| rule | jobs | CPU-s | share | largest max RSS (MB) |\n|---|---:|---:|---:|---:|")
        for cpu, n, rss, rule in rows:
            print(f"| {rule} | {n} | {cpu:.0f} | {share(cpu):.1%} | {rss:,} |")
        largest = max((rss for _, _, rss, _ in rows), default=0)
        print(f"| all | {sum(n for _, n, _, _ in rows)} | {total:.0f} | | {largest:,} |")
    else:
        for cpu, n, rss, rule in rows:
            print(f"{rule:<24} {n:>4} jobs {cpu:>9.1f} CPU-s {share(cpu):>7.1%} {rss:>7,} MB")
        print(f"{'all':<24} {sum(n for _, n, _, _ in rows):>4} jobs {total:>9.1f} CPU-s")
    if unfinished:
        print(f"{len(unfinished)} log(s) without a resource line (unfinished, failed or killed jobs)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
