"""Kernel HLM with the transform and the scale chosen by CV (docs/beyond-the-paper-spec.md section 5, "Speed").

One whole split as the pipeline runs it (``hlm.pipeline.evaluation.evaluate.evaluate_method``: the inner 10-fold CV,
the refit at the chosen point, the test predictions) for ``kernel_hlm_cv`` (5 transforms x 9 scale factors,
those that apply), against two baselines measured in the same run: ``knn`` with its CV over k (the goal:
``kernel_hlm_cv`` at most 3x) and the paper's ``kernel_hlm`` (nothing to choose). The median of
``--repeats`` runs of each; the ratios are printed. Also the floor of any exact computation: the
exponentials the CV cannot avoid (one per validation row, fit column and applicable transform; the scale
factors share them) plus ``kernel_hlm``'s whole split (the final fit and the test predictions).

Reads the pipeline's artifacts: run ``snakemake --cores 2 results/distances/voting.parquet
results/splits/voting.parquet`` first (and for DNA, paper profile: ``--configfile config/paper.yaml``; its
distance stage takes a few minutes). Single-threaded BLAS, as in the pipeline's jobs. Absolute times vary
between machines and with the load.

    .venv/bin/python benchmarks/bench_transform_cv.py [--datasets voting dna] [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from hlm.datasets._artifacts import read_distances, take
from hlm.distances._transform import valid_candidates
from hlm.pipeline.evaluation.evaluate import evaluate_method

ROOT = Path(__file__).resolve().parents[1]
METHODS = ("knn", "kernel_hlm", "kernel_hlm_cv")
GOAL_RATIO = 3.0


def one_split(artifact, splits, method: str, dataset: str) -> tuple[float, float, str]:
    """(seconds, test error %, chosen params) of split 0."""
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = evaluate_method(artifact, splits, method, dataset=dataset, seed=20121, n_folds=10, split_ids=[0])
    row = result.evaluation.iloc[0]
    return time.perf_counter() - t0, float(row.error_rate), str(row.params)


def exponentials_seconds(artifact, splits, repeats: int) -> float:
    """The median time of ``np.exp`` over n_train x 0.9 n_train entries (each row against its fold's fit
    part) once per transform that applies to split 0: every exact kernel_hlm_cv CV evaluates these (the
    scale factors can share them)."""
    train = splits.loc[(splits["split"] == 0) & (splits["role"] == "train"), "index"].to_numpy()
    relation = "similarity" if artifact.similarities is not None else "distance"
    R = take(artifact.similarities if relation == "similarity" else artifact.distances, train, train)
    x = np.abs(R[:, : len(R) - round(len(R) / 10)])  # a validation row against its fit part (10 folds);
    # any values: the time of exp does not depend on them (no overflow here)
    out = np.empty_like(x)
    n_candidates = len(valid_candidates(R, relation))
    runs = []
    with threadpool_limits(1):
        for _ in range(repeats):
            t0 = time.perf_counter()
            for _ in range(n_candidates):
                np.exp(np.negative(x, out=out), out=out)
            runs.append(time.perf_counter() - t0)
    return statistics.median(runs)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["voting", "dna"])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    status = 0
    for dataset in args.datasets:
        path = ROOT / "results" / "distances" / f"{dataset}.parquet"
        if not path.exists():
            print(f"{dataset}: {path} missing; run its distance stage first (see the docstring)")
            status = 1
            continue
        artifact = read_distances(path)
        splits = pd.read_parquet(ROOT / "results" / "splits" / f"{dataset}.parquet")
        n_train = int(((splits["split"] == 0) & (splits["role"] == "train")).sum())
        seconds = {}
        with threadpool_limits(1):
            for method in METHODS:
                one_split(artifact, splits, method, dataset)  # compiled kernels, caches: once per process
                runs = [one_split(artifact, splits, method, dataset) for _ in range(args.repeats)]
                seconds[method] = statistics.median(r[0] for r in runs)
                print(f"{dataset} (n_train {n_train}) {method:14s} {seconds[method]:7.3f} s  "
                      f"error {runs[0][1]:5.2f}%  {runs[0][2]}")
        exps = exponentials_seconds(artifact, splits, args.repeats)
        floor = seconds["kernel_hlm"] + exps
        print(f"{dataset}: the exponentials an exact CV evaluates (one per validation row, fit column and "
              f"transform) {exps:.3f} s; with kernel_hlm's split, a floor of {floor / seconds['knn']:.2f} x knn")
        ratio = seconds["kernel_hlm_cv"] / seconds["knn"]
        print(f"{dataset}: kernel_hlm_cv / knn = {ratio:.2f} (goal <= {GOAL_RATIO:g}: "
              f"{'met' if ratio <= GOAL_RATIO else 'NOT met'}); "
              f"kernel_hlm_cv / kernel_hlm = {seconds['kernel_hlm_cv'] / seconds['kernel_hlm']:.1f}")
    return status


if __name__ == "__main__":
    sys.exit(main())
