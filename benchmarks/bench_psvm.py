"""P-SVM grid path of one CV fold: new solver vs the reference one, in the same run (spec 6.9).

Builds the class-pair problems of one CV fold exactly as the pipeline does
(split 0, the first of the 10 CV folds of its training part, the configured
(C, epsilon) grid, similarities from distances where needed) and times
``dual_path`` over the grid for every pair, first with the default solver
(active-set phases: additions and cuts with factor updates), then with the
baselines: ``previous`` = ``active_set=False`` (the Newton phases of
``_newton_phase_lapack``, the default before the active-set phase) and
``reference`` = ``legacy=True`` (the scalar numba reference). Prints the times,
the ratios baseline / new, and the largest relative objective difference between
the new solutions and each baseline's over all grid points (all meet the same
KKT tolerance).

    .venv/bin/python benchmarks/bench_psvm.py                      (Italy Power Demand, ~1 min)
    .venv/bin/python benchmarks/bench_psvm.py --datasets voting italy_power
    .venv/bin/python benchmarks/bench_psvm.py --datasets dna --pairs 1 --baselines previous   (DNA: ~1.5 min;
        with the reference too: + ~11 min)

Run on one core (BLAS limited to one thread via threadpoolctl); the two solvers
run one after the other in one process (on a shared machine, repeat to judge noise).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd
import yaml
from threadpoolctl import threadpool_limits

from hlm.data.artifacts import read_distances
from hlm.data.conversions import distance_to_similarity
from hlm.evaluation.cv import make_folds
from hlm.evaluation.evaluate import method_input
from hlm.evaluation.seeds import derive_seed
from hlm.evaluation.splits import split_indices
from hlm.models.psvm import PSVM, dual_path, dual_terms

ROOT = Path(__file__).resolve().parents[1]


def fold_problems(dataset: str, split: int = 0, fold: int = 0):
    """The class-pair problems (Q, c) of one CV fold and the pipeline's (C, epsilon) grid."""
    config = yaml.safe_load((ROOT / "config/config.yaml").read_text())
    grid_cfg = config["method_params"]["psvm"]["grid"]
    points = [(float(C), float(eps)) for eps in grid_cfg["epsilon"] for C in grid_cfg["C"]]
    artifact = read_distances(ROOT / "results/distances" / f"{dataset}.parquet")
    X, wrapped = method_input(artifact, "psvm")
    train, _ = split_indices(pd.read_parquet(ROOT / "results/splits" / f"{dataset}.parquet"), split)
    y = artifact.labels[train]
    fit, _ = make_folds(y, 10, derive_seed(config["seed"], dataset, split, "cv"))[fold]
    D_fit = X[np.ix_(train[fit], train[fit])]
    S_fit = distance_to_similarity(D_fit, where="fit")[0] if wrapped else D_fit  # as SimilarityFromDistances
    model = PSVM()
    S, y_idx = model._check_fit_input(S_fit, y[fit])
    return [dual_terms(pr.K_tilde, pr.y) for pr in model._pair_problems(S, y_idx)], points


SOLVERS = {"new": {}, "previous": {"active_set": False}, "reference": {"legacy": True}}


def time_path(problems, points, **solver) -> tuple[float, list]:
    t0 = time.perf_counter()
    paths = [dual_path(Q, c, points, **solver) for Q, c in problems]
    return time.perf_counter() - t0, paths


def max_rel_objective_difference(problems, points, new, other) -> float:
    worst = 0.0
    for (Q, c), p_new, p_old in zip(problems, new, other):
        for C, eps in points:
            f = [0.5 * a @ Q @ a - c @ a + eps * np.abs(a).sum() for a in (p_new[(C, eps)][0], p_old[(C, eps)][0])]
            worst = max(worst, abs(f[0] - f[1]) / max(1.0, abs(f[1])))
    return worst


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", nargs="+", default=["italy_power"])
    parser.add_argument("--pairs", type=int, default=None, help="only the first N class pairs")
    parser.add_argument("--baselines", nargs="+", default=["previous", "reference"], choices=["previous", "reference"])
    args = parser.parse_args()
    with threadpool_limits(1):
        tiny = dual_terms(np.eye(6)[:, :4] + 0.1, np.array([1.0, -1, 1, -1, 1, -1]))
        for solver in SOLVERS.values():  # compile (numba cache) outside the timings
            dual_path(*tiny, [(1.0, 0.01), (10.0, 0.01)], **solver)
        header = f"{'data set':<14}{'pairs':>6}{'new [s]':>10}"
        for name in args.baselines:
            header += f"{name + ' [s]':>16}{'ratio':>7}{'max rel. obj. diff':>20}"
        print(header)
        for dataset in args.datasets:
            problems, points = fold_problems(dataset)
            problems = problems[: args.pairs] if args.pairs else problems
            t_new, new = time_path(problems, points)
            line = f"{dataset:<14}{len(problems):>6}{t_new:>10.2f}"
            for name in args.baselines:
                t_old, old = time_path(problems, points, **SOLVERS[name])
                worst = max_rel_objective_difference(problems, points, new, old)
                line += f"{t_old:>16.2f}{t_old / t_new:>7.1f}{worst:>20.2e}"
            print(line, flush=True)


if __name__ == "__main__":
    main()
