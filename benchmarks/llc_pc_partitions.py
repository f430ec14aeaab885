"""The LLC-PC paper's "optimal" accuracy over more partitions than the pipeline's (docs/fidelity.md, LLC-PC).

The paper averages its accuracy curves over 100 random partitions; the pipeline's ``llc_pc`` rule runs 20
(config ``llc_pc.n_partitions``) and a CV on each. This runs only the path (one fit to K = 40 per partition,
tested at every K), with the rule's partitions and seeds, so its first ``llc_pc.n_partitions`` partitions
reproduce the rule's curve. Prints the optimal K and accuracy of the mean curve (mean and standard error
over the partitions) and the accuracy at a K of the paper's.

    .venv/bin/python benchmarks/llc_pc_partitions.py ringnorm --partitions 100 --at 11
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from hlm.datasets._prepare import load_vectors
from hlm.datasets._registry import load_registry
from hlm.pipeline.config import load_config
from hlm.pipeline.methods import SUBCLASS_GRID
from hlm.pipeline.protocols.llc_pc.run import LLC_METHODS, run_llc_pc

ROOT = Path(__file__).resolve().parents[1]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dataset")
    ap.add_argument("--partitions", type=int, default=100)
    ap.add_argument("--method", choices=LLC_METHODS, default="llc_pc_mpe")
    ap.add_argument("--at", type=int, action="append", default=[], help="also print the accuracy at this K")
    ap.add_argument("--curve", action="store_true", help="print the whole mean curve")
    args = ap.parse_args(argv)
    config = load_config(ROOT / "config/config.yaml")
    registry = load_registry(ROOT / "config/datasets.yaml")
    if args.dataset not in registry:
        ap.error(f"data set '{args.dataset}' is not in config/datasets.yaml")
    if args.partitions < 1:
        ap.error(f"--partitions {args.partitions}: at least 1")
    spec = registry[args.dataset]
    if spec.kind != "vectors":
        ap.error(f"data set '{args.dataset}' is of kind '{spec.kind}'; LLC-PC needs feature vectors")
    rec = load_vectors(spec, ROOT)
    k_min = len(np.unique(rec.labels))
    for k in args.at:
        if not k_min <= k <= SUBCLASS_GRID[-1]:
            ap.error(f"--at {k}: K runs from the class count {k_min} to {SUBCLASS_GRID[-1]}")
    with threadpool_limits(1):
        frame = run_llc_pc(rec.features, rec.labels, dataset=args.dataset, seed=config["seed"],
                           cv_folds=config["cv_folds"], n_partitions=args.partitions, methods=(args.method,),
                           cv=False)
    n_rule = config["llc_pc"]["n_partitions"]
    if args.partitions > n_rule:
        part = frame[frame.partition < n_rule].groupby("n_subclasses").accuracy.mean()
        print(f"{args.dataset} {args.method}, the rule's {n_rule} partitions: optimal {part.max():.2f}% "
              f"at K = {part.idxmax()}")
    curve = frame.groupby("n_subclasses").accuracy
    mean, se = curve.mean(), curve.std() / np.sqrt(args.partitions)
    k = mean.idxmax()
    print(f"{args.dataset} {args.method}, mean curve over {args.partitions} partitions: optimal {mean[k]:.2f}% "
          f"(SE {se[k]:.2f}) at K = {k}")
    for k in args.at:
        print(f"  at K = {k}: {mean[k]:.2f} (SE {se[k]:.2f})")
    if args.curve:
        print("  K: mean (SE) " + ", ".join(f"{k}: {mean[k]:.2f} ({se[k]:.2f})" for k in mean.index))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
