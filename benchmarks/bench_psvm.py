"""P-SVM grid path of one CV fold: the solver vs the reference solvers, in the same run (spec 6.9).

Builds the class-pair problems of one CV fold exactly as the pipeline does
(split 0, the first CV fold of its training part, the configured (C, epsilon)
grid, similarities from distances where needed; from the pipeline's artifacts
in results/ if built, else prepared from the raw file of the data set registry)
and times ``dual_path`` over the grid for every pair, first with the production
solver (``hlm.svm._psvm.solver``: coordinate descent with active-set phases),
then with the reference solvers, the test oracles of
``tests/oracles/psvm_reference.py`` along the grid (``reference_dual_path``):
``newton`` = coordinate descent with the earlier Newton phases (scalar numba
pivoted Cholesky), ``cd`` = pure cyclic coordinate descent. Prints the times, the
ratios reference / production, the largest relative objective difference between
the production solutions and each reference's over all grid points (all meet
the same KKT tolerance), and how many grid points a solver left unconverged
(stopped at max_sweeps; pure CD may crawl there, and its objective difference
then shows how far it got).

    .venv/bin/python benchmarks/bench_psvm.py                      (Italy Power Demand; needs results/)
    .venv/bin/python benchmarks/bench_psvm.py --datasets voting protein sonar   (raw data in data/raw)
    .venv/bin/python benchmarks/bench_psvm.py --datasets dna --pairs 1 --baselines newton

The oracles are imported from tests/oracles: this script puts the tests/
directory on ``sys.path`` itself. Runs on one core (BLAS limited to one thread
via threadpoolctl); the solvers run one after the other in one process (on a
shared machine, repeat to judge noise).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from hlm.base._seeds import derive_seed
from hlm.datasets._artifacts import read_distances, take
from hlm.datasets._prepare import prepare_dataset
from hlm.datasets._registry import load_registry
from hlm.distances._conversions import distance_to_similarity
from hlm.pipeline.config import load_config
from hlm.pipeline.evaluation.cv import make_folds
from hlm.pipeline.evaluation.evaluate import method_input
from hlm.pipeline.evaluation.splits import make_splits, split_indices
from hlm.pipeline.methods import check_method_params
from hlm.svm._psvm import PSVM, dual_path, dual_terms, normalise_columns

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # the test oracles (tests/oracles)

from oracles.psvm_reference import cd_solve_dual, reference_dual_path  # noqa: E402 (needs tests/ on sys.path first)


def _artifacts(dataset: str, config: dict):
    """The data set's distance artifact and splits table: the pipeline's, or made as the pipeline does."""
    data, split_file = ROOT / "results/distances" / f"{dataset}.parquet", ROOT / "results/splits" / f"{dataset}.parquet"
    if data.exists() and split_file.exists():
        return read_distances(data), pd.read_parquet(split_file)
    artifact = prepare_dataset(load_registry(ROOT / config["registry"])[dataset], ROOT)
    splits = make_splits(len(artifact.labels), dataset=dataset, n_splits=config["n_splits"],
                         test_fraction=config["test_fraction"], seed=config["seed"])
    return artifact, splits


def fold_problems(dataset: str, split: int = 0, fold: int = 0):
    """The class-pair problems (Q, c) of one CV fold and the pipeline's (C, epsilon) grid."""
    config = load_config(ROOT / "config/config.yaml")
    grid = check_method_params("psvm", config["method_params"].get("psvm") or {})
    points = [(float(p["C"]), float(p["epsilon"])) for p in grid]
    artifact, splits = _artifacts(dataset, config)
    X, wrapped = method_input(artifact, "psvm")
    train, _ = split_indices(splits, split)
    y = artifact.labels[train]
    fit, _ = make_folds(y, config["cv_folds"], derive_seed(config["seed"], dataset, split, "cv"))[fold]
    D_fit = take(X, train[fit], train[fit])
    S_fit = distance_to_similarity(D_fit, where="fit")[0] if wrapped else D_fit  # as SimilarityFromDistances
    model = PSVM()
    S, y_idx = model._check_fit_input(S_fit, y[fit])
    return [dual_terms(pr.K_tilde, pr.y) for pr in model._pair_problems(S, y_idx)], points


SOLVERS = {
    "production": dual_path,
    "newton": reference_dual_path,
    "cd": lambda Q, c, points: reference_dual_path(Q, c, points, solve=cd_solve_dual),
}


def time_path(problems, points, name: str) -> tuple[float, list]:
    t0 = time.perf_counter()
    paths = [SOLVERS[name](Q, c, points) for Q, c in problems]
    return time.perf_counter() - t0, paths


def max_rel_objective_difference(problems, points, new, other) -> float:
    worst = 0.0
    for (Q, c), p_new, p_old in zip(problems, new, other):
        for C, eps in points:
            f = [0.5 * a @ Q @ a - c @ a + eps * np.abs(a).sum() for a in (p_new[(C, eps)][0], p_old[(C, eps)][0])]
            worst = max(worst, abs(f[0] - f[1]) / max(1.0, abs(f[1])))
    return worst


def unconverged(paths) -> int:
    return sum(not converged for path in paths for _, _, converged in path.values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", nargs="+", default=["italy_power"])
    parser.add_argument("--pairs", type=int, default=None, help="only the first N class pairs")
    parser.add_argument("--baselines", nargs="+", default=["newton", "cd"], choices=["newton", "cd"])
    args = parser.parse_args()
    with threadpool_limits(1):
        rng = np.random.default_rng(0)  # a small rank-deficient problem that reaches every phase
        K = rng.normal(size=(20, 40))
        small = dual_terms(normalise_columns(K)[0], np.where(K[:, :3].sum(axis=1) >= 0, 1.0, -1.0))
        for solve in SOLVERS.values():  # compile (or load from numba's cache) outside the timings
            solve(*small, [(1.0, 0.01), (10.0, 0.001)])
        header = f"{'data set':<14}{'pairs':>6}{'production [s]':>16}{'unconv.':>8}"
        for name in args.baselines:
            header += f"{name + ' [s]':>14}{'ratio':>8}{'max rel. obj. diff':>20}{'unconv.':>8}"
        print(header)
        for dataset in args.datasets:
            problems, points = fold_problems(dataset)
            problems = problems[: args.pairs] if args.pairs else problems
            t_new, new = time_path(problems, points, "production")
            line = f"{dataset:<14}{len(problems):>6}{t_new:>16.2f}{unconverged(new):>8}"
            for name in args.baselines:
                t_old, old = time_path(problems, points, name)
                worst = max_rel_objective_difference(problems, points, new, old)
                line += f"{t_old:>14.2f}{t_old / t_new:>8.1f}{worst:>20.2e}{unconverged(old):>8}"
            print(line, flush=True)


if __name__ == "__main__":
    main()
