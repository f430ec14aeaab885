"""Mixture HLM timing: one split of HLM(vsh), full 10-fold CV included, against k-NN.

Times ONE split of each method exactly as the pipeline runs it
(:func:`hlm.pipeline.evaluation.evaluate.evaluate_method`): 10-fold CV on the training
part over the method's grid (for ``hlm_vsh``: M in {1..10, 12, 14, 16}, 20 VSH
restarts each), the final fit and the prediction of the test part. All
methods run in the same process on the same split, so the baselines are
measured alongside.

Goals (2-core machine):
  - hlm_vsh at most 30 s per split (CV + final fit + predict). The paper's C
    code took about 11 min (660 s) per split on a 3,090-object data set
    (Mirex07); the ratio 660 s / ours is printed. The CV folds run in
    ``--n-jobs`` worker processes (default: one per CPU), as the pipeline's
    Mixture HLM jobs do with their Snakemake threads.
  - Kernel HLM fit + predict no slower than k-NN with its CV.

Data: by default 3,000 points from a seeded 3-class Gaussian mixture in 10
dimensions (several anisotropic components per class, DNA-like class
proportions 25/25/50 %), Euclidean distances -- a stand-in until StatLog DNA
is in the registry. ``--dataset results/distances/<x>.parquet`` runs on a
pipeline artifact instead.

Afterwards ``hlm_vsh`` is run once more under cProfile (top functions by
cumulative and by own time, and a breakdown by kind of work).

    .venv/bin/python benchmarks/bench_mixture_hlm.py
    .venv/bin/python benchmarks/bench_mixture_hlm.py --n 1500 --no-profile
    .venv/bin/python benchmarks/bench_mixture_hlm.py --dataset results/distances/aural_sonar.parquet
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import platform
import pstats
import sys
import time
from pathlib import Path

import numpy as np

from hlm.datasets._artifacts import DistanceArtifact, read_distances
from hlm.pipeline.config import config_defaults
from hlm.pipeline.evaluation.evaluate import evaluate_method
from hlm.pipeline.evaluation.splits import make_splits

#: the pipeline's CV folds (the config schema's default)
CV_FOLDS = config_defaults()["cv_folds"]

#: the paper's reported time per split of HLM(vsh) on StatLog DNA (3,090 objects): about 11 minutes
PAPER_SECONDS_PER_SPLIT = 660.0
#: goal for hlm_vsh, seconds per split on this machine
GOAL_VSH_SECONDS = 30.0
SEED = 20121
#: methods timed after the required ones (hlm_kernel_vsh costs about as much as hlm_vsh)
EXTRA_METHODS = ("hlm_gknn", "hlm_agg", "hlm_kernel_vsh")


# --------------------------------------------------------------------------- data
def gaussian_mixture(
    n: int = 3000,
    *,
    n_classes: int = 3,
    components_per_class: int = 4,
    dim: int = 10,
    spread: float = 1.25,
    class_weights=(0.25, 0.25, 0.5),
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """``n`` points of a seeded Gaussian mixture and their class labels (0..n_classes-1).

    Every class is a mixture of ``components_per_class`` Gaussians with
    diagonal covariance (per-axis standard deviations uniform in [0.6, 1.4]);
    the component means are N(0, spread^2 I), so the components of different
    classes overlap (k-NN makes roughly 10 % errors with the defaults). Class
    proportions follow ``class_weights`` (default: StatLog DNA's 25/25/50 %),
    components share their class's weight unevenly (Dirichlet(5)).
    """
    rng = np.random.default_rng(seed)
    class_weights = np.asarray(class_weights, dtype=np.float64)
    if class_weights.shape != (n_classes,):
        class_weights = np.full(n_classes, 1.0 / n_classes)
    class_weights = class_weights / class_weights.sum()
    n_comp = n_classes * components_per_class
    means = rng.normal(scale=spread, size=(n_comp, dim))
    sds = rng.uniform(0.6, 1.4, size=(n_comp, dim))
    comp_class = np.repeat(np.arange(n_classes), components_per_class)
    within = np.concatenate([rng.dirichlet(np.full(components_per_class, 5.0)) for _ in range(n_classes)])
    weights = class_weights[comp_class] * within
    comp = rng.choice(n_comp, size=n, p=weights / weights.sum())
    X = means[comp] + rng.normal(size=(n, dim)) * sds[comp]
    return X, comp_class[comp]


def euclidean_distances(X: np.ndarray) -> np.ndarray:
    from scipy.spatial.distance import pdist, squareform

    return squareform(pdist(np.asarray(X, dtype=np.float64), metric="euclidean"))


def synthetic_artifact(n: int, seed: int) -> DistanceArtifact:
    X, y = gaussian_mixture(n, seed=seed)
    return DistanceArtifact(
        ids=np.array([f"g{i}" for i in range(n)]),
        labels=np.array([f"c{k}" for k in y]),
        distances=euclidean_distances(X),
        metadata={"source": "bench_mixture_hlm.gaussian_mixture", "distance": "euclidean", "seed": seed},
    )


# --------------------------------------------------------------------------- timing
CV_FIXED: dict = {}  # --cv-n-init: restarts during the CV only (method_params.<m>.cv_fixed)
N_JOBS = {"n": os.cpu_count() or 1}  # --n-jobs: worker processes for the CV folds


def run_method(artifact: DistanceArtifact, splits, method_id: str, dataset: str, seed: int) -> dict:
    t = time.perf_counter()
    cv_fixed = CV_FIXED if method_id in ("hlm_vsh", "hlm_kernel_vsh") else None
    res = evaluate_method(artifact, splits, method_id, dataset=dataset, seed=seed, n_folds=CV_FOLDS, split_ids=[0],
                          cv_fixed_params=cv_fixed, n_jobs=N_JOBS["n"])
    wall = time.perf_counter() - t
    row = res.evaluation.iloc[0]
    params = json.loads(row["params"])
    return {
        "method": method_id,
        "cv": float(row["cv_seconds"]),
        "final_fit": float(row["fit_seconds"] - row["cv_seconds"]),
        "fit": float(row["fit_seconds"]),  # CV + final fit (the paper's "training")
        "predict": float(row["predict_seconds"]),
        "total": float(row["fit_seconds"] + row["predict_seconds"]),
        "wall": wall,
        "error": float(row["error_rate"]),
        "params": params,
        "n_train": int(row["n_train"]),
        "n_test": int(row["n_test"]),
    }


def chosen(params: dict) -> str:
    keys = ("n_neighbors", "n_components", "n_prototypes", "shape", "shape_mle", "scale")
    parts = []
    for k in keys:
        if k in params:
            v = params[k]
            parts.append(f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}")
    return ", ".join(parts)


def print_table(rows: list[dict]) -> None:
    head = f"{'method':<15} {'cv s':>8} {'fit s':>8} {'(final)':>8} {'pred s':>7} {'total s':>8} {'err %':>6}  chosen"
    print(head)
    print("-" * len(head) + "-" * 30)
    for r in rows:
        print(
            f"{r['method']:<15} {r['cv']:8.2f} {r['fit']:8.2f} {r['final_fit']:8.2f} {r['predict']:7.3f} "
            f"{r['total']:8.2f} {r['error']:6.2f}  {chosen(r['params'])}"
        )
    print("(fit s = CV + final fit, as the pipeline's fit_seconds; total = fit + predict)")


# --------------------------------------------------------------------------- profile
#: (label, predicate on pstats key (file, line, name)) -- cumulative time of these functions
BREAKDOWN = [
    ("kmedoids Rust swap search (rand_fasterpam_f64)", lambda f, n: "rand_fasterpam" in n),
    ("kmedoids.fasterpam Python wrapper (cum, Rust included)", lambda f, n: n == "fasterpam" and "kmedoids" in f),
    ("  kmedoids._check_medoids (random init: RandomState.choice)", lambda f, n: n == "_check_medoids"),
    ("clustering.vsh._vsh (cum)", lambda f, n: n == "_vsh" and f.endswith("vsh.py")),
    ("clustering.result.nearest (cum)", lambda f, n: n == "nearest" and f.endswith("result.py")),
    ("clustering.result.check_matrix (cum)", lambda f, n: n == "check_matrix"),
    ("numpy asfortranarray (copy for fasterpam)", lambda f, n: "asfortranarray" in n),
    ("MixtureHLM.fit (cum)", lambda f, n: n == "fit" and f.endswith("mixture_hlm.py")),
    ("MixtureHLM._estimate (cum)", lambda f, n: n == "_estimate"),
    ("_base._check_fit_input (cum)", lambda f, n: n == "_check_fit_input"),
    ("_base._as_matrix (cum; finite/negative checks)", lambda f, n: n == "_as_matrix"),
    ("MixtureHLM.predict (cum)", lambda f, n: n == "predict" and f.endswith("mixture_hlm.py")),
    ("MixtureHLM.predict_proba (cum)", lambda f, n: n == "predict_proba" and f.endswith("mixture_hlm.py")),
    ("sklearn clone (cum)", lambda f, n: n == "clone" and "sklearn" in f),
    ("sklearn set_params (cum)", lambda f, n: n == "set_params" and "sklearn" in f),
    ("sklearn _validate_params (cum)", lambda f, n: n == "_validate_params" and "sklearn" in f),
    ("cv.cv_errors (cum; whole CV)", lambda f, n: n == "cv_errors"),
]


def profile_method(artifact, splits, method_id: str, dataset: str, seed: int, top: int) -> None:
    prof = cProfile.Profile()
    t = time.perf_counter()
    prof.enable()
    evaluate_method(artifact, splits, method_id, dataset=dataset, seed=seed, n_folds=CV_FOLDS, split_ids=[0])  # serial
    prof.disable()
    wall = time.perf_counter() - t
    for order in ("cumulative", "tottime"):
        buf = io.StringIO()
        pstats.Stats(prof, stream=buf).strip_dirs().sort_stats(order).print_stats(top)
        text = buf.getvalue()
        start = text.find("   ncalls")
        print(f"\n--- cProfile of {method_id}, sorted by {order} (top {top}; profiled wall {wall:.1f} s) ---")
        print(text[start:].rstrip() if start >= 0 else text.rstrip())

    stats = pstats.Stats(prof).stats  # {(file, line, name): (cc, nc, tt, ct, callers)}
    total = sum(v[2] for v in stats.values())  # sum of own times = profiled total
    print(f"\n--- where the time of {method_id} goes (serial run) "
          f"(cumulative seconds under the profiler; total {total:.1f} s) ---")
    for label, pred in BREAKDOWN:
        hits = [(k, v) for k, v in stats.items() if pred(k[0], k[2])]
        if not hits:
            continue
        ct = sum(v[3] for _, v in hits)
        calls = sum(v[1] for _, v in hits)
        print(f"  {label:<58} {ct:8.2f} s {100 * ct / total:5.1f} %  ({calls} calls)")
    # own time of everything that is neither the Rust kernel nor numpy/scipy C code
    py_own = sum(v[2] for k, v in stats.items() if f"{os.sep}hlm{os.sep}" in k[0] and "site-packages" not in k[0])
    label = "own time in hlm Python code (all hlm functions, tottime)"
    print(f"  {label:<58} {py_own:8.2f} s {100 * py_own / total:5.1f} %")


# --------------------------------------------------------------------------- main
def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=3000, help="synthetic data size (default 3000)")
    ap.add_argument("--dataset", type=Path, help="a pipeline distance artifact (results/distances/<x>.parquet)")
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--data-seed", type=int, default=0)
    ap.add_argument("--no-extra", action="store_true", help=f"skip {', '.join(EXTRA_METHODS)}")
    ap.add_argument("--no-profile", action="store_true", help="skip the cProfile run of hlm_vsh")
    ap.add_argument("--top", type=int, default=15, help="profile lines to print")
    ap.add_argument("--cv-n-init", type=int, help="VSH restarts during the CV only (default: 20, the paper's)")
    ap.add_argument("--n-jobs", type=int, default=os.cpu_count() or 1,
                    help="worker processes for the CV folds (default: one per CPU; 1 = serial)")
    args = ap.parse_args(argv)
    N_JOBS["n"] = max(1, args.n_jobs)
    if args.cv_n_init:
        CV_FIXED["n_init"] = args.cv_n_init

    t0 = time.perf_counter()
    if args.dataset is not None:
        artifact = read_distances(args.dataset)
        dataset = args.dataset.stem
    else:
        artifact = synthetic_artifact(args.n, args.data_seed)
        dataset = f"gauss_mix_{args.n}"
    n = artifact.n
    splits = make_splits(n, dataset=dataset, n_splits=1, test_fraction=0.2, seed=args.seed)
    classes, counts = np.unique(artifact.labels, return_counts=True)
    print(f"data: {dataset}, N = {n}, classes {dict(zip(classes.tolist(), counts.tolist()))} "
          f"(prepared in {time.perf_counter() - t0:.1f} s)")
    print(f"machine: {platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} CPUs, "
          f"numpy {np.__version__}; one split, 10-fold CV in {N_JOBS['n']} worker process(es), seed {args.seed}\n")

    methods = ["knn", "kernel_hlm", "hlm_vsh"] + ([] if args.no_extra else list(EXTRA_METHODS))
    rows = []
    for m in methods:
        rows.append(run_method(artifact, splits, m, dataset, args.seed))
        print(f"  {m}: {rows[-1]['wall']:.1f} s", file=sys.stderr, flush=True)
    by = {r["method"]: r for r in rows}
    r0 = rows[0]
    print(f"split 0: {r0['n_train']} training / {r0['n_test']} test objects\n")
    print_table(rows)

    vsh, knn, ker = by["hlm_vsh"], by["knn"], by["kernel_hlm"]
    print("\nratios (same run):")
    ok = vsh["total"] <= GOAL_VSH_SECONDS
    print(f"  hlm_vsh per split: {vsh['total']:.1f} s (goal <= {GOAL_VSH_SECONDS:.0f} s: {'MET' if ok else 'NOT MET'}; "
          f"CV {vsh['cv']:.1f} s = {vsh['cv'] / 13 / 10 * 1000:.0f} ms per (M, fold))")
    print(f"  paper C code / ours = {PAPER_SECONDS_PER_SPLIT:.0f} s / {vsh['total']:.1f} s = "
          f"{PAPER_SECONDS_PER_SPLIT / vsh['total']:.1f}x faster (paper: N = 3,090; here N = {n})")
    ratio = ker["total"] / knn["total"]
    print(f"  Kernel HLM (fit + predict) / k-NN (CV + fit + predict) = {ker['total']:.3f} s / {knn['total']:.3f} s = "
          f"{ratio:.3f} (goal <= 1: {'MET' if ratio <= 1 else 'NOT MET'})")
    print(f"  hlm_vsh / k-NN = {vsh['total'] / knn['total']:.0f}x")
    for m in EXTRA_METHODS:
        if m in by:
            print(f"  {m} per split: {by[m]['total']:.1f} s ({by[m]['total'] / vsh['total']:.2f}x hlm_vsh)")

    if not args.no_profile:
        profile_method(artifact, splits, "hlm_vsh", dataset, args.seed, args.top)
    print(f"\nbenchmark wall time: {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
