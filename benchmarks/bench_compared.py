"""Run time of every method for one split, against k-NN and against the paper's Table 4.

Times ONE split of each method exactly as the pipeline runs it
(:func:`hlm.pipeline.evaluation.evaluate.evaluate_method`: 10-fold CV on the training
part over the method's configured grid, the final fit, the prediction of the
test part), serially in one process, on Voting and on the largest data set
whose distances the pipeline has made (DNA, 3,186 objects, after the full
profile; House Votes, 435, after the default run). k-NN runs in the same
process on the same split, so the ratio to k-NN is measured alongside.

The paper's Table 4 (2.66 GHz CPU; C, C++ and Matlab/MEX) times k-NN, local
SDA, SVM (rbf), HLM (vsh) and Kernel HLM on Amazon-47 (204 objects),
Color-signature (600), Imagery (1,400) and Mirex (3,090). Each method is
compared with the Table 4 data set nearest in size on a log scale; the goal is
a speed-up of at least 10x. Methods the paper does not time show "-".

    .venv/bin/python benchmarks/bench_compared.py            (after `make run` made results/)
    .venv/bin/python benchmarks/bench_compared.py --datasets voting --methods knn psvm svm_knn
"""

from __future__ import annotations

import argparse
import platform
import time
from pathlib import Path

import pandas as pd
from threadpoolctl import threadpool_limits

from hlm.datasets._artifacts import read_distances
from hlm.pipeline.config import load_config
from hlm.pipeline.evaluation.evaluate import evaluate_method
from hlm.pipeline.methods import METHODS, method_applies
from hlm.pipeline.reporting.paper import PAPER_RUN_TIMES, PAPER_TIME_DATASET_SIZES, nearest_paper_dataset

ROOT = Path(__file__).resolve().parents[1]
GOAL_SPEEDUP = 10.0


def time_split(artifact, splits, method_id: str, dataset: str, config: dict) -> dict:
    params = config["method_params"].get(method_id, {})
    t = time.perf_counter()
    res = evaluate_method(
        artifact, splits, method_id, dataset=dataset, seed=config["seed"], n_folds=config["cv_folds"],
        grid_config=params.get("grid"), fixed_params=params.get("fixed"), cv_fixed_params=params.get("cv_fixed"),
        split_ids=[0],
    )
    row = res.evaluation.iloc[0]
    return {
        "fit": float(row["fit_seconds"]),
        "predict": float(row["predict_seconds"]),
        "total": float(row["fit_seconds"] + row["predict_seconds"]),
        "wall": time.perf_counter() - t,
        "error": float(row["error_rate"]),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", default=str(ROOT / "config" / "config.yaml"))
    ap.add_argument("--results", default=str(ROOT / "results"), help="pipeline results (distances/, splits/)")
    ap.add_argument("--datasets", nargs="+", default=None,
                    help="default: voting and the largest data set in RESULTS/distances")
    ap.add_argument("--methods", nargs="+", default=None, help="default: the config's methods")
    args = ap.parse_args()

    config = load_config(args.config)  # defaults filled in (hlm.pipeline.config)
    methods = args.methods or list(config["methods"])
    datasets = args.datasets or ["voting", largest_dataset(Path(args.results) / "distances")]
    if "knn" not in methods:
        methods = ["knn", *methods]
    print(f"# bench_compared: one split (split 0) per method, serial, BLAS 1 thread; "
          f"{platform.processor() or platform.machine()}, Python {platform.python_version()}")
    rows = []
    for dataset in dict.fromkeys(datasets):
        artifact = read_distances(Path(args.results) / "distances" / f"{dataset}.parquet")
        splits = pd.read_parquet(Path(args.results) / "splits" / f"{dataset}.parquet")
        n = len(artifact.labels)
        kind = artifact.metadata.get("kind", "")
        knn_total = None
        for method_id in methods:
            if not method_applies(method_id, kind):
                continue
            with threadpool_limits(1):
                r = time_split(artifact, splits, method_id, dataset, config)
            if method_id == "knn":
                knn_total = r["total"]
            paper_set = nearest_paper_dataset(n, method_id)
            paper = PAPER_RUN_TIMES.get((method_id, paper_set)) if paper_set else None
            rows.append({
                "dataset": dataset, "n": n, "method": method_id, "label": METHODS[method_id].label, **r,
                "vs_knn": r["total"] / knn_total if knn_total else float("nan"),
                "paper_dataset": paper_set if paper is not None else None,
                "paper_seconds": paper,
                "speedup": paper / r["total"] if paper is not None else None,
            })
            print_row(rows[-1], flush=True)
    print_summary(rows)


def largest_dataset(folder: Path) -> str:
    """The data set with the most objects among the distance artifacts in ``folder``."""
    from hlm.datasets._artifacts import read_metadata

    sizes = {p.stem: read_metadata(p).get("shape", [0])[0] for p in folder.glob("*.parquet")}
    if not sizes:
        raise SystemExit(f"bench_compared: no distance artifacts in {folder}; run the pipeline first")
    return max(sizes, key=lambda d: (sizes[d], d != "voting"))  # a tie with Voting: the other one


def print_row(r: dict, flush: bool = False) -> None:
    paper = (f"{r['paper_seconds']:>9.3g} s ({r['paper_dataset']}, n={PAPER_TIME_DATASET_SIZES[r['paper_dataset']]}) "
             f"-> {r['speedup']:7.1f}x" if r["paper_seconds"] is not None else "-")
    print(f"{r['dataset']:<12} {r['method']:<20} fit {r['fit']:8.3f} s  predict {r['predict']:7.4f} s  "
          f"total {r['total']:8.3f} s  {r['vs_knn']:7.1f}x k-NN  err {r['error']:5.2f}%  paper {paper}", flush=flush)


def print_summary(rows: list[dict]) -> None:
    timed = [r for r in rows if r["speedup"] is not None]
    print("\n# goal: every method the paper times at least "
          f"{GOAL_SPEEDUP:g}x faster than Table 4 for the data set nearest in size")
    for r in timed:
        verdict = "met" if r["speedup"] >= GOAL_SPEEDUP else "NOT met"
        print(f"{r['dataset']:<12} {r['method']:<20} {r['speedup']:8.1f}x vs {r['paper_dataset']:<16} {verdict}")
    slowest = sorted(rows, key=lambda r: -r["total"])[:5]
    print("# slowest per split: " + ", ".join(f"{r['method']} on {r['dataset']} {r['total']:.2f} s" for r in slowest))


if __name__ == "__main__":
    main()
