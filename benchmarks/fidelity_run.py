"""One method on one data set over 20 splits of any split seed, with grid or fixed overrides.

The experiments behind docs/fidelity.md (other split seeds, a fixed k, another Omega): the pipeline's
evaluation (``evaluate_method``: CV on the training part, final fit, test) on the distances of a
finished run, with the splits of ``--seed`` made as the pipeline makes them. Prints the mean and
sd of the test error (%) and the parameters CV chose most often.

    .venv/bin/python benchmarks/fidelity_run.py voting local_sda_regularized --seed 1
    .venv/bin/python benchmarks/fidelity_run.py protein local_sda_bayes --fixed '{"n_bins": 254}'
    .venv/bin/python benchmarks/fidelity_run.py protein svm_knn_features \\
        --grid '{"n_neighbors": [16], "C": [0.001, 0.01, 0.1, 1, 10, 100, 1000, 10000, 100000]}'
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from threadpoolctl import threadpool_limits

from hlm.datasets._artifacts import read_distances
from hlm.pipeline.config import load_config
from hlm.pipeline.evaluation.evaluate import evaluate_method
from hlm.pipeline.evaluation.splits import make_splits

ROOT = Path(__file__).resolve().parents[1]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dataset")
    ap.add_argument("method")
    ap.add_argument("--seed", type=int, default=None, help="split seed (default: the config's)")
    ap.add_argument("--grid", type=json.loads, default=None, help="JSON grid replacing the method's")
    ap.add_argument("--fixed", type=json.loads, default={}, help="JSON parameters added to the fixed ones")
    ap.add_argument("--results", type=Path, default=ROOT / "results")
    args = ap.parse_args(argv)
    config = load_config(ROOT / "config/config.yaml")
    seed = config["seed"] if args.seed is None else args.seed
    params = config["method_params"].get(args.method, {})
    artifact = read_distances(args.results / "distances" / f"{args.dataset}.parquet")
    splits = make_splits(len(artifact.labels), dataset=args.dataset, n_splits=config["n_splits"],
                         test_fraction=config["test_fraction"], seed=seed)
    with threadpool_limits(1):
        res = evaluate_method(
            artifact, splits, args.method, dataset=args.dataset, seed=seed, n_folds=config["cv_folds"],
            grid_config=args.grid if args.grid is not None else params.get("grid"),
            fixed_params={**(params.get("fixed") or {}), **args.fixed}, cv_fixed_params=params.get("cv_fixed"),
        )
    ev = res.evaluation
    grid_keys = set(args.grid or {}) | {"n_neighbors", "C", "zeta", "gamma"}
    chosen = Counter(
        json.dumps({k: v for k, v in json.loads(p).items() if k in grid_keys}, sort_keys=True) for p in ev["params"]
    )
    print(f"{args.dataset} {args.method} seed {seed} {json.dumps(args.fixed) if args.fixed else ''}: "
          f"{ev['error_rate'].mean():.2f} ({ev['error_rate'].std(ddof=1):.2f}) over {len(ev)} splits; "
          f"chosen: {dict(chosen.most_common(3))}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
