"""LLC-PC timing on Glass (docs/llc-pc-spec.md section 8, "Speed").

One whole split as the pipeline runs it (``hlm.pipeline.evaluation.evaluate``), for ``llc_pc_mpe`` (Greedy-MPE) and
``llc_pc_kmeans``: the 80/20 split of ``hlm.pipeline.evaluation.splits`` (171 training objects), the inner 10-fold CV
(``hlm.pipeline.evaluation.cv.select_params``, each fold one path fit to K = 40 and every K = 1..40 from it), the
refit at the chosen K and the test predictions. Goal: <= 10 s per split with Greedy-MPE. Baseline, in the same run: the
plain linear SVM's split (``svm_vector_linear``: the CV over its 9 C's, refit, test), which LLC-PC is at K = N;
the ratio is printed. Also timed: the path alone
(one fit to K = 40 on the training part and the test predictions at every K, ``path_predictions``), with the
pair fits it made and the share of its time in libsvm and in the 2-means / k-means.

Single-threaded BLAS, as in the pipeline's jobs; the CV runs its folds in this process (``n_jobs=1``).
Absolute times vary between machines and with the load.

    .venv/bin/python benchmarks/bench_llc_pc.py [--seed 0] [--repeats 3]
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from threadpoolctl import threadpool_limits

import hlm.llc_pc._mpe as llc_mpe
import hlm.llc_pc._subclasses as llc_sub
from hlm.base._seeds import derive_seed
from hlm.datasets._prepare import load_vectors
from hlm.datasets._registry import load_registry
from hlm.pipeline.evaluation.cv import make_folds, select_params
from hlm.pipeline.evaluation.splits import make_splits, split_indices
from hlm.pipeline.methods import METHODS

GOAL_SECONDS = 10.0
KS = list(range(1, 41))


def one_split(method: str, X, y, train, test, seed: int) -> dict:
    """The pipeline's per-split work for one method: CV over K = 1..40, refit, test predictions."""
    state = derive_seed(seed, "glass", 0, "model") % 2**31
    t0 = time.perf_counter()
    folds = make_folds(y[train], 10, derive_seed(seed, "glass", 0, "cv"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        best, _, means = select_params(METHODS[method].make({"random_state": state}), X[train], y[train],
                                       [{"n_subclasses": k} for k in KS], folds)
    t_cv = time.perf_counter()
    model = METHODS[method].make({**best, "random_state": state}).fit(X[train], y[train])
    accuracy = 100.0 * np.mean(model.predict(X[test]) == y[test])
    t_end = time.perf_counter()
    return {"total": t_end - t0, "cv": t_cv - t0, "refit": t_end - t_cv, "K": best["n_subclasses"],
            "accuracy": accuracy, "folds": len(folds), "cv_error": float(means.min())}


def baseline_split(X, y, train, test, seed: int) -> float:
    """Seconds of the linear SVM's split: CV over its C grid, refit, test (the pipeline's svm_vector_linear)."""
    spec = METHODS["svm_vector_linear"]
    t0 = time.perf_counter()
    folds = make_folds(y[train], 10, derive_seed(seed, "glass", 0, "cv"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        best, _, _ = select_params(spec.make(), X[train], y[train], spec.grid(None), folds)
        spec.make(best).fit(X[train], y[train]).predict(X[test])
    return time.perf_counter() - t0


class Clock:
    """Seconds spent in libsvm pair fits and in the clusterings, by wrapping them (the path timing only)."""

    def __init__(self):
        self.svm = self.kmeans = 0.0
        self.fits = 0

    def __enter__(self):
        self._svm, self._kmeans = llc_mpe.libsvm_fit, llc_sub.kmeans

        def svm(*args, **kwargs):
            t = time.perf_counter()
            try:
                return self._svm(*args, **kwargs)
            finally:
                self.svm += time.perf_counter() - t
                self.fits += 1

        def kmeans(*args, **kwargs):
            t = time.perf_counter()
            try:
                return self._kmeans(*args, **kwargs)
            finally:
                self.kmeans += time.perf_counter() - t

        llc_mpe.libsvm_fit, llc_sub.kmeans = svm, kmeans
        return self

    def __exit__(self, *exc):
        llc_mpe.libsvm_fit, llc_sub.kmeans = self._svm, self._kmeans


def path_only(method: str, X, y, train, test, seed: int) -> dict:
    state = derive_seed(seed, "glass", 0, "model") % 2**31
    with Clock() as clock, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        model = METHODS[method].make({"n_subclasses": KS[-1], "random_state": state}).fit(X[train], y[train])
        t1 = time.perf_counter()
        path = model.path_predictions(X[test], KS)
        t2 = time.perf_counter()
    acc = 100.0 * (path["predictions"]["voting"] == y[test]).mean(axis=1)
    return {"fit": t1 - t0, "predict": t2 - t1, "pairs": len(model._store.models), "svm": clock.svm,
            "kmeans": clock.kmeans, "fits": clock.fits, "best": (KS[int(acc.argmax())], float(acc.max()))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per method (the median is reported)")
    args = parser.parse_args()
    rec = load_vectors(load_registry("config/datasets.yaml", names=["glass"])["glass"])
    X, y = rec.features, rec.labels
    train, test = split_indices(make_splits(len(y), dataset="glass", n_splits=1, test_fraction=0.2,
                                            seed=args.seed), 0)
    print(f"Glass: {len(train)} training, {len(test)} test objects; K = 1..40; 1 thread; "
          f"median of {args.repeats} runs")
    with threadpool_limits(1):
        base = float(np.median([baseline_split(X, y, train, test, args.seed) for _ in range(args.repeats)]))
        print(f"baseline svm_vector_linear: whole split {base:.2f} s")
        for method in ("llc_pc_mpe", "llc_pc_kmeans"):
            paths = [path_only(method, X, y, train, test, args.seed) for _ in range(args.repeats)]
            p = sorted(paths, key=lambda r: r["fit"] + r["predict"])[len(paths) // 2]
            print(f"{method}: path alone (fit to K = 40, test at every K): {p['fit'] + p['predict']:.2f} s "
                  f"(fit {p['fit']:.2f} s, of which libsvm {p['svm']:.2f} s in {p['fits']} pair fits and "
                  f"clustering {p['kmeans']:.2f} s; test predictions {p['predict']:.2f} s; {p['pairs']} pair "
                  f"models); best test K {p['best'][0]} ({p['best'][1]:.1f}%)")
            splits = [one_split(method, X, y, train, test, args.seed) for _ in range(args.repeats)]
            s = sorted(splits, key=lambda r: r["total"])[len(splits) // 2]
            verdict = ("met" if s["total"] <= GOAL_SECONDS else "MISSED") if method == "llc_pc_mpe" else "n/a"
            print(f"{method}: whole split {s['total']:.2f} s (CV {s['cv']:.2f} s over {s['folds']} folds, refit + "
                  f"test {s['refit']:.2f} s); chosen K {s['K']}, CV error {100 * s['cv_error']:.1f}%, test "
                  f"accuracy {s['accuracy']:.1f}%; {s['total'] / base:.1f}x the linear SVM's split; goal <= "
                  f"{GOAL_SECONDS:.0f} s: {verdict}")


if __name__ == "__main__":
    main()
