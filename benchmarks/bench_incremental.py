"""Incremental HLM timing (paper section 5.5, Table 5): Scheme I and II against retraining.

Runs the protocol of section 5.5 (``hlm.pipeline.incremental.run.run_incremental``:
20% initial batch, 8 batches of 10%, 9 rounds, VSH with 20 restarts) for the
three schemes on the same splits in one process and prints, per data set, the
total update seconds over all rounds (mean over the splits), the ratios to
Retrain, and the last round's test error.

Goals, on the largest data set available: Scheme I at most 1/10 of
Retrain's total time, Scheme II at most 1/4, and Scheme II's last-round error
within 5 points of Retrain's. The paper (Table 5) reports 0.84 s, 2.87 s and
22.89 s on Mirex (3,090 objects) and 0.14 s, 0.59 s and 2.04 s on Voting.

Data: the registry's Voting and House Votes from ``results/`` (after ``make
run``), and ``--synthetic N`` objects of a seeded 3-class Gaussian mixture
(the stand-in of ``bench_mixture_hlm.py``, 3,000 by default, Mirex-sized)
until a larger registry data set exists.

    .venv/bin/python benchmarks/bench_incremental.py
    .venv/bin/python benchmarks/bench_incremental.py --splits 1 --synthetic 1500
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd
from threadpoolctl import threadpool_limits

from hlm.datasets._artifacts import read_distances
from hlm.pipeline.evaluation.splits import make_splits
from hlm.pipeline.incremental.report import PAPER_INCREMENTAL_TIMES
from hlm.pipeline.incremental.run import run_incremental

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from bench_mixture_hlm import synthetic_artifact  # noqa: E402

SCHEMES = ("scheme_i", "scheme_ii", "retrain")
GOALS = {"scheme_i": 1 / 10, "scheme_ii": 1 / 4}


def bench(artifact, name: str, n_splits: int, seed: int) -> dict:
    splits = make_splits(artifact.n, dataset=name, n_splits=n_splits, test_fraction=0.2, seed=seed)
    out = {}
    for scheme in SCHEMES:
        with threadpool_limits(1):
            frame = run_incremental(artifact, splits, scheme, dataset=name, seed=seed, params={"n_init": 20})
        out[scheme] = {
            "total": float(frame.groupby("split")["round_seconds"].sum().mean()),
            "error": float(frame[frame["round"] == 9]["error_rate"].mean()),
        }
    retrain = out["retrain"]["total"]
    print(f"\n{name} ({artifact.n} objects, {n_splits} split(s)):")
    for scheme in SCHEMES:
        r = out[scheme]
        paper = PAPER_INCREMENTAL_TIMES.get((scheme, name))
        goal = GOALS.get(scheme)
        verdict = "" if goal is None else ("  goal met" if r["total"] <= goal * retrain else "  goal NOT met")
        print(f"  {scheme:<10} total {r['total']:8.3f} s  = {r['total'] / retrain:6.3f} x retrain"
              f"{f' (goal <= {goal:.2f})' if goal else ''}{verdict}  last-round error {r['error']:6.2f}%"
              + (f"  paper {paper:g} s" if paper is not None else ""))
    gap = out["scheme_ii"]["error"] - out["retrain"]["error"]
    print(f"  Scheme II - Retrain last-round error: {gap:+.2f} points (goal: within 5)")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--results", default=str(ROOT / "results"))
    ap.add_argument("--datasets", nargs="*", default=["voting", "house_votes"])
    ap.add_argument("--synthetic", type=int, default=3000, help="0 to skip")
    ap.add_argument("--splits", type=int, default=3)
    ap.add_argument("--seed", type=int, default=20121)
    args = ap.parse_args()
    for name in args.datasets:
        bench(read_distances(Path(args.results) / "distances" / f"{name}.parquet"), name, args.splits, args.seed)
    if args.synthetic:
        bench(synthetic_artifact(args.synthetic, seed=args.seed), f"synthetic{args.synthetic}", args.splits,
              args.seed)
    pd.set_option("display.width", 120)


if __name__ == "__main__":
    main()
