"""Mixture HLM without the N x N matrix (``ClaraMixtureHLM``, docs/scale-spec.md): issue 20's goals.

1. **100,000 objects.** A seeded 20-d Gaussian mixture (5 classes, each of 4 unit-covariance Gaussians),
   one split of the paper's protocol (test 20%), M chosen by 10-fold CV over HLM(vsh)'s grid
   {1..10, 12, 14, 16}, the folds in ``--n-jobs`` worker processes. Prints wall and CPU seconds, the
   peak memory of this process and its workers together (sampled every 0.2 s) and the test error.
   Goal: <= 30 min per split on 2 cores, peak <= 4 GB.
2. **Letter** (20,000 x 16, 26 classes): ``--letter-splits`` splits of the same protocol, the same CV, for
   the sampled option (``sample_size`` ``--sample`` per class) and for whole classes (``sample_size`` at
   least every class: the clustering HLM(vsh) does on the full matrix, tested equal to ``MixtureHLM`` on
   it). On split 0 the whole-class model at its chosen M is checked against ``MixtureHLM`` on the full
   16,000 x 16,000 training matrix: the same prototypes and test predictions.
   Goal: the sampled option's mean error within 1 point of the full matrix's.

Splits and CV folds are the pipeline's (seeds from (seed, data set, split) and (seed, data set, split, "cv")).
Single-threaded BLAS in every process.

    .venv/bin/python benchmarks/bench_matrix_free_hlm.py
    .venv/bin/python benchmarks/bench_matrix_free_hlm.py --no-letter
    .venv/bin/python benchmarks/bench_matrix_free_hlm.py --no-large --letter-splits 20
"""

from __future__ import annotations

import argparse
import os
import threading
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import psutil  # noqa: E402
from joblib import Parallel, delayed, effective_n_jobs  # noqa: E402

from hlm.base._seeds import derive_seed  # noqa: E402
from hlm.local_mapping._clara import ClaraMixtureHLM  # noqa: E402
from hlm.pipeline.evaluation.cv import make_folds  # noqa: E402
from hlm.pipeline.evaluation.splits import make_splits, split_indices  # noqa: E402
from hlm.pipeline.methods import HLM_COMPONENTS  # noqa: E402

SEED = 20121
CV_FOLDS = 10
TEST_FRACTION = 0.2


class PeakMemory:
    """The largest sum of RSS over this process and its children, sampled every ``every`` seconds."""

    def __init__(self, every: float = 0.2):
        self.every, self.peak, self._stop = every, 0, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        me = psutil.Process()
        while not self._stop.is_set():
            total = 0
            for p in [me, *me.children(recursive=True)]:
                try:
                    total += p.memory_info().rss
                except psutil.Error:
                    pass
            self.peak = max(self.peak, total)
            time.sleep(self.every)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


def gaussian_mixture(n: int = 100_000, d: int = 20, n_classes: int = 5, per_class: int = 4, seed: int = 2026):
    rng = np.random.default_rng(seed)
    means = rng.normal(0.0, 1.2, size=(n_classes, per_class, d))
    y = rng.integers(n_classes, size=n)
    X = means[y, rng.integers(per_class, size=n)] + rng.normal(size=(n, d))
    return X, y


def _fold_errors(params: dict, X, y, fit, val, grid) -> tuple[list[float], float]:
    """(validation error per grid point, the CPU seconds of this worker on them)."""
    t0 = time.process_time()
    errors = [float(np.mean(ClaraMixtureHLM(n_components=M, **params).fit(X[fit], y[fit]).predict(X[val]) != y[val]))
              for M in grid]
    return errors, time.process_time() - t0


def one_split(X, y, train, test, params: dict, dataset: str, split: int, n_jobs: int):
    """(chosen M, test error, fitted model, CPU seconds) of the paper's protocol on one split: M by 10-fold CV
    (the pipeline's folds: seeded by (seed, data set, split, "cv"))."""
    grid = HLM_COMPONENTS
    t0 = time.process_time()
    folds = make_folds(y[train], CV_FOLDS, derive_seed(SEED, dataset, split, "cv"))
    Xtr, ytr = X[train], y[train]
    t_cv = time.process_time()
    results = Parallel(n_jobs=n_jobs)(delayed(_fold_errors)(params, Xtr, ytr, f, v, grid) for f, v in folds)
    t_cv = time.process_time() - t_cv  # this process's share of the CV (all of it when the folds ran here)
    M = grid[int(np.argmin(np.mean([errors for errors, _ in results], axis=0)))]
    model = ClaraMixtureHLM(n_components=M, **params).fit(Xtr, ytr)
    err = float(np.mean(model.predict(X[test]) != y[test]))
    workers = sum(cpu for _, cpu in results) if effective_n_jobs(n_jobs) > 1 else 0.0
    return M, err, model, time.process_time() - t0 + workers


def large(n_jobs: int) -> None:
    X, y = gaussian_mixture()
    train, test = split_indices(make_splits(len(y), dataset="gauss100k", n_splits=1, test_fraction=TEST_FRACTION,
                                            seed=SEED), 0)
    t0 = time.perf_counter()
    with PeakMemory() as peak:
        M, err, model, cpu = one_split(X, y, train, test, {}, "gauss100k", 0, n_jobs)
    wall = time.perf_counter() - t0
    print(f"100,000 x 20 Gaussian mixture, one split ({len(train)} train, {len(test)} test), {CV_FOLDS}-fold CV over "
          f"M in {HLM_COMPONENTS}, {n_jobs} worker(s):")
    print(f"  chosen M = {M}, test error {100 * err:.2f}%, {model.n_prototypes_} prototypes")
    print(f"  wall {wall:.0f} s (goal <= 1800 s: {'met' if wall <= 1800 else 'NOT met'}); "
          f"CPU {cpu:.0f} s (this process and the CV workers)")
    print(f"  peak memory, an upper bound: the largest sum of RSS over the processes, sampled every 0.2 s (shared "
          f"pages counted in each) {peak.peak / 2**30:.2f} GiB (goal <= 4 GB: "
          f"{'met' if peak.peak <= 4e9 else 'NOT met'})")


def letter(n_splits: int, sample: int, n_jobs: int) -> None:
    from scipy.spatial.distance import cdist

    from hlm.datasets._prepare import load_vectors
    from hlm.datasets._registry import load_registry
    from hlm.local_mapping._mixture_hlm import MixtureHLM

    r = load_vectors(load_registry("config/datasets.yaml")["letter"])
    X, y = r.features, np.asarray(r.labels)
    splits = make_splits(len(y), dataset="letter", n_splits=n_splits, test_fraction=TEST_FRACTION, seed=SEED)
    variants = {"sampled": {"sample_size": sample}, "whole classes": {"sample_size": len(y)}}
    rows = {name: [] for name in variants}
    print(f"\nLetter (20,000 x 16, 26 classes), {n_splits} split(s), {CV_FOLDS}-fold CV over M:")
    for split in range(n_splits):
        train, test = split_indices(splits, split)
        for name, params in variants.items():
            t0 = time.perf_counter()
            M, err, model, _ = one_split(X, y, train, test, params, "letter", split, n_jobs)
            rows[name].append((M, err, time.perf_counter() - t0))
            print(f"  split {split:2d} {name:13s} M = {M:2d}  error {100 * err:5.2f}%  {rows[name][-1][2]:.0f} s",
                  flush=True)
            if split == 0 and name == "whole classes":
                D = cdist(X[train], X[train])
                full = MixtureHLM(n_components=M).fit(D, y[train])
                del D
                same = np.array_equal(full.prototypes_, model.prototypes_) and np.array_equal(
                    full.predict(cdist(X[test], X[train])), model.predict(X[test]))
                print(f"    MixtureHLM on the full {len(train)} x {len(train)} matrix, M = {M}: "
                      f"{'the same prototypes and predictions' if same else 'DIFFERENT'}", flush=True)
                if not same:
                    raise SystemExit("the whole-class fit differs from MixtureHLM on the full matrix")
    e = {name: 100 * np.array([row[1] for row in rs]) for name, rs in rows.items()}
    diff = e["sampled"] - e["whole classes"]
    se = diff.std(ddof=1) / np.sqrt(len(diff)) if len(diff) > 1 else float("nan")
    print(f"  mean error: sampled (sample_size {sample}) {e['sampled'].mean():.2f}%, full matrix "
          f"{e['whole classes'].mean():.2f}%; difference {diff.mean():+.2f} points (SE {se:.2f}; goal within 1: "
          f"{'met' if abs(diff.mean()) <= 1 else 'NOT met'})")
    print(f"  seconds per split: sampled {np.mean([r[2] for r in rows['sampled']]):.0f}, whole classes "
          f"{np.mean([r[2] for r in rows['whole classes']]):.0f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-large", action="store_true")
    parser.add_argument("--no-letter", action="store_true")
    parser.add_argument("--letter-splits", type=int, default=5)
    parser.add_argument("--sample", type=int, default=200, help="sample_size of the sampled option on Letter")
    parser.add_argument("--n-jobs", type=int, default=os.cpu_count())
    args = parser.parse_args()
    if not args.no_large:
        large(args.n_jobs)
    if not args.no_letter:
        letter(args.letter_splits, args.sample, args.n_jobs)


if __name__ == "__main__":
    main()
