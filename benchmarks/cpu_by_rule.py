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

from hlm.pipeline.forecast import write_costs
from hlm.pipeline.jobs import RESOURCE_PREFIX
from hlm.pipeline.protocols import protocols

LINE = re.compile(re.escape(RESOURCE_PREFIX) + r" cpu ([0-9.]+) s, max rss ([0-9]+) MB"
                  r"(?:, rule (\S+), dataset (\S+))?")
#: a protocol's log folder (logs/<id>/{dataset}.log) -> its rule
PROTOCOL_RULES = {spec.id: spec.rule for spec in protocols().values()}
#: logs/report/<stem>.log with a data set in the stem -> (rule, the stem's prefix)
REPORT_RULES = {"cv_components_": "cv_components_figure", "reliability_": "reliability_figure"}


def job_of(log: Path, logs: Path) -> tuple[str, str]:
    """(rule, data set or "") of the job that wrote ``log``, from the layout of the rules' ``log:`` paths (for
    logs whose resource line does not name them; ``preprocess/`` holds distances_from_blocks' logs too)."""
    parts = log.relative_to(logs).parts
    folder, stem = parts[0], log.stem
    if folder == "evaluate":  # evaluate/{dataset}/{method}.log: one rule per method
        return stem, parts[1]
    if folder == "incremental":  # incremental/{dataset}/{scheme}.log
        return f"incremental_{stem}", parts[1]
    if folder == "report":  # report/{rule}.log, report/cv_components_{dataset}.log, report/reliability_{dataset}.log
        for prefix, rule in REPORT_RULES.items():
            if stem.startswith(prefix):
                return rule, stem[len(prefix):]
        return stem, ""
    if folder == "blocks":  # blocks/{dataset}/rows-{i0}-{i1}.log
        return "distance_block", parts[1]
    if folder == "models":  # models/{dataset}/choose.log, {method}.log, {method}.mlflow.log
        rule = "choose_models" if stem == "choose" else "log_model" if stem.endswith(".mlflow") else "fit_model"
        return rule, parts[1]
    return PROTOCOL_RULES.get(folder, folder), stem


def rule_of(log: Path, logs: Path) -> str:
    """The rule that wrote ``log`` (:func:`job_of`)."""
    return job_of(log, logs)[0]


def jobs_by_dataset(logs: Path) -> tuple[dict[tuple[str, str], list[tuple[float, int]]], list[Path]]:
    """((rule, data set) -> (CPU seconds, max RSS in MB) of each finished job, logs without a resource line)."""
    found, unfinished = defaultdict(list), []
    for log in sorted(logs.rglob("*.log")):
        match = LINE.search(log.read_text(errors="replace"))
        if match:
            rule, dataset = match.group(3, 4) if match.group(3) else job_of(log, logs)
            found[rule, "" if dataset == "-" else dataset].append((float(match.group(1)), int(match.group(2))))
        else:
            unfinished.append(log)
    return dict(found), unfinished


def jobs_by_rule(logs: Path) -> tuple[dict[str, list[tuple[float, int]]], list[Path]]:
    """(rule -> (CPU seconds, max RSS in MB) of each finished job, logs without a resource line)."""
    by_dataset, unfinished = jobs_by_dataset(logs)
    found = defaultdict(list)
    for (rule, _), jobs in by_dataset.items():
        found[rule] += jobs
    return dict(found), unfinished


def costs_rows(logs: Path) -> list[tuple[str, str, int, float, int]]:
    """The rows of workflow/costs.tsv (``hlm.pipeline.forecast``): per (rule, data set) the jobs, the mean CPU
    seconds of one and their largest max RSS."""
    by_dataset, _ = jobs_by_dataset(logs)
    return [(rule, dataset, len(jobs), sum(c for c, _ in jobs) / len(jobs), max(r for _, r in jobs))
            for (rule, dataset), jobs in by_dataset.items()]


def cpu_by_rule(logs: Path) -> tuple[dict[str, list[float]], list[Path]]:
    """(rule -> CPU seconds of each finished job, logs without a resource line)."""
    found, unfinished = jobs_by_rule(logs)
    return {rule: [cpu for cpu, _ in jobs] for rule, jobs in found.items()}, unfinished


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--logs", type=Path, default=Path("logs"))
    parser.add_argument("--markdown", action="store_true", help="a Markdown table")
    parser.add_argument("--costs", type=Path, metavar="TSV",
                        help="also update this costs table (workflow/costs.tsv) with the run's jobs: each (rule, data "
                             "set) it ran replaces its row, the others are kept")
    args = parser.parse_args(argv)
    if args.costs:
        from hlm.pipeline.forecast import read_rows

        rows = {(r[0], r[1]): r for r in read_rows(args.costs)}
        rows.update({(r[0], r[1]): r for r in costs_rows(args.logs)})
        write_costs(args.costs, rows.values())
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
