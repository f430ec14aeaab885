"""Job granularity: one Snakemake job per (dataset, method) pair vs one per split.

Measures, in this run:
  - the fixed cost of a job: a fresh Python process importing what an
    evaluation job imports (numpy, pandas, sklearn, mlflow, hlm);
  - the compute per split (CV + fit + predict) for each method on each data set;
  - MLflow logging of a pair with 20 nested split runs vs 1 split run.
and prints the projected pipeline time of both granularities and their ratio.

    .venv/bin/python benchmarks/job_granularity.py   (after `make run` made results/)
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
IMPORTS = (
    "import numpy, pandas, sklearn, hlm.pipeline.stages.evaluate, hlm.pipeline.tracking, "
    "hlm.pipeline.evaluation.evaluate, "
    "hlm.neighbors._knn, hlm.local_mapping._kernel_hlm"
)


def job_start_seconds(repeats: int = 5) -> float:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", IMPORTS], check=True)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def mlflow_seconds(n_splits: int, evaluation: Path, predictions: Path) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["MLFLOW_TRACKING_URI"] = f"sqlite:///{tmp}/mlflow.db"
        os.environ["HLM_MLFLOW_ARTIFACTS"] = f"{tmp}/mlruns"
        from hlm.datasets._artifacts import write_frame
        from hlm.pipeline import tracking

        tracking.init_store("bench")
        ev = pd.read_parquet(evaluation).head(n_splits)
        pr = pd.read_parquet(predictions)
        pr = pr[pr.split < n_splits]
        write_frame(ev, f"{tmp}/ev.parquet", metadata={"dataset": "d", "method": "m", "to_distance": "x"})
        write_frame(pr, f"{tmp}/pr.parquet")
        tracking.log_pair(dataset="d", method="m", evaluation_path=f"{tmp}/ev.parquet",
                          prediction_path=f"{tmp}/pr.parquet", tags={}, params={}, experiment="bench")
        t = time.perf_counter()
        tracking.log_pair(dataset="d", method="m", evaluation_path=f"{tmp}/ev.parquet",
                          prediction_path=f"{tmp}/pr.parquet", tags={}, params={}, experiment="bench")
        return time.perf_counter() - t


def main() -> None:
    evals = sorted((ROOT / "results/evaluation").glob("*/*.parquet"))
    if not evals:
        sys.exit("run the pipeline first (make run): results/evaluation is empty")
    start = job_start_seconds()
    compute = {f"{p.parent.name}/{p.stem}": pd.read_parquet(p) for p in evals}
    per_split = {k: float((ev.fit_seconds + ev.predict_seconds).mean()) for k, ev in compute.items()}
    n_splits = int(max(len(ev) for ev in compute.values()))
    some = evals[0]
    pred = ROOT / "results/predictions" / some.parent.name / some.name
    log_pair_20 = mlflow_seconds(n_splits, some, pred)
    log_pair_1 = mlflow_seconds(1, some, pred)

    pairs = len(compute)
    compute_total = sum(v * n_splits for v in per_split.values())
    per_pair_total = pairs * (start + log_pair_20) + compute_total
    per_split_total = pairs * n_splits * (start + log_pair_1) + compute_total
    print(f"job start (fresh interpreter + imports), median of 5: {start:.2f} s")
    print(f"MLflow log_pair with {n_splits} split runs: {log_pair_20:.2f} s; with 1 split run: {log_pair_1:.2f} s")
    for k, v in sorted(per_split.items()):
        print(f"compute per split {k:28s} {1000 * v:8.1f} ms")
    print(f"{pairs} pairs x {n_splits} splits: compute {compute_total:.1f} s in total")
    print(f"projected CPU time, one job per pair : {per_pair_total:7.1f} s ({pairs} jobs)")
    print(f"projected CPU time, one job per split: {per_split_total:7.1f} s ({pairs * n_splits} jobs)")
    print(f"ratio per-split / per-pair: {per_split_total / per_pair_total:.1f}x")


if __name__ == "__main__":
    main()
