"""The local SDA family against its baselines: one split, timed in the same run.

Each new method of docs/local-sda-family-spec.md is timed on split 0 of a data set exactly as
the pipeline runs it (CV over its grid, final fit, test; ``bench_compared.time_split``), next
to its baseline: ``local_sda`` for the generative variants, ``svm_knn`` for the SVM-KNN ones.
Methods and baselines are interleaved and repeated, and the median ratio is compared with the
targets (issue goals): at most 2x ``local_sda``, at most 1.2x ``svm_knn``.

    .venv/bin/python benchmarks/bench_sda_family.py                 (after `make run` made results/)
    .venv/bin/python benchmarks/bench_sda_family.py --dataset protein --repeats 5
"""

from __future__ import annotations

import argparse
import importlib.util
import platform
import statistics
from pathlib import Path

import pandas as pd
from threadpoolctl import threadpool_limits

from hlm.datasets._artifacts import read_distances
from hlm.pipeline.config import load_config

ROOT = Path(__file__).resolve().parents[1]
#: method -> (baseline, the largest ratio to it that meets the goal)
TARGETS = {
    "local_sda_bayes": ("local_sda", 2.0),
    "local_sda_pairwise": ("local_sda", 2.0),
    "local_sda_pairwise_bayes": ("local_sda", 2.0),
    "local_sda_regularized": ("local_sda", 2.0),
    "svm_knn_flip": ("svm_knn", 1.2),
    "svm_knn_shift": ("svm_knn", 1.2),
    "svm_knn_features": ("svm_knn", 1.2),
}


def _time_split():
    spec = importlib.util.spec_from_file_location("bench_compared", ROOT / "benchmarks/bench_compared.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.time_split


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dataset", default="voting")
    ap.add_argument("--results", type=Path, default=ROOT / "results")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    time_split = _time_split()
    config = load_config(ROOT / "config/config.yaml")
    artifact = read_distances(args.results / "distances" / f"{args.dataset}.parquet")
    splits = pd.read_parquet(args.results / "splits" / f"{args.dataset}.parquet")
    methods = [*dict.fromkeys(b for b, _ in TARGETS.values()), *TARGETS]
    totals: dict[str, list[float]] = {m: [] for m in methods}
    print(f"# {args.dataset}, split 0, serial, BLAS 1 thread, {args.repeats} interleaved repeats; "
          f"{platform.processor() or platform.machine()}, Python {platform.python_version()}")
    for _ in range(args.repeats):
        for method in methods:
            with threadpool_limits(1):
                totals[method].append(time_split(artifact, splits, method, args.dataset, config)["total"])
    median = {m: statistics.median(v) for m, v in totals.items()}
    for method in methods:
        line = f"{method:<26} {median[method]:8.3f} s"
        if method in TARGETS:
            baseline, goal = TARGETS[method]
            ratio = median[method] / median[baseline]
            line += f"  {ratio:5.2f}x {baseline} (goal <= {goal:g}x: {'met' if ratio <= goal else 'NOT met'})"
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
