"""Two-way GMM timing on Satellite (docs/twoway-gmm-spec.md section 9, "Speed").

(a) One fit + test at the chapter's imagery point, 5 components per class and L = 24, on one 80/20 split
    (the chapter: imagery M = 30, L = 24, one fold 14 s in Matlab).
(b) One whole split as the pipeline runs it (``hlm.pipeline.evaluation.evaluate``): the inner 10-fold CV
    (``hlm.pipeline.evaluation.cv.select_params``) over the default grid, n_components per class {1, 2, 4, 6, 8, 10} x
    n_clusters {4, 8, 12, 16, 24} (the L < p = 36 of {4, ..., 56}), then the refit at the chosen point and the
    test predictions and posteriors. Goal: <= 60 s. GEM iterations are reported per grid point.
    The MDA grid (n_clusters None, the same n_components) is timed beside it, in the same run, as the baseline:
    the ratio two-way / MDA is printed (the chapter's 30-40 min per fold were for its larger data sets).

Single-threaded BLAS, as in the pipeline's jobs; the CV runs its folds in this process (``n_jobs=1``; the
pipeline gives the job two workers). Absolute times vary between machines and with the load.

    .venv/bin/python benchmarks/bench_twoway_gmm.py
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from sklearn.base import clone
from threadpoolctl import threadpool_limits

from hlm.base._seeds import derive_seed
from hlm.datasets._prepare import load_vectors
from hlm.datasets._registry import load_registry
from hlm.mixture._twoway import TwoWayGMMClassifier
from hlm.pipeline.evaluation.cv import make_folds, select_params

COMPONENTS = [1, 2, 4, 6, 8, 10]
CLUSTERS = [4, 8, 12, 16, 24, 36, 48, 56]


def split_80_20(y: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A stratified 80/20 split (as the project's splits)."""
    rng = np.random.default_rng(seed)
    train, test = [], []
    for c in np.unique(y):
        idx = rng.permutation(np.flatnonzero(y == c))
        cut = int(round(0.8 * idx.size))
        train.append(idx[:cut])
        test.append(idx[cut:])
    return np.sort(np.concatenate(train)), np.sort(np.concatenate(test))


def one_fit(X, y, train, test, seed: int) -> None:
    t0 = time.perf_counter()
    model = TwoWayGMMClassifier(n_components=5, n_clusters=24, random_state=seed).fit(X[train], y[train])
    t1 = time.perf_counter()
    err = 100 * np.mean(model.predict(X[test]) != y[test])
    t2 = time.perf_counter()
    print(f"(a) one fit, 5 components per class, L = 24: fit {t1 - t0:.2f} s, test {t2 - t1:.3f} s; "
          f"test error {err:.2f}%; GEM iterations per class {model.n_iter_.tolist()}")


def one_split(X, y, train, test, seed: int, grid: list[dict], name: str) -> float:
    """The pipeline's per-split work for one method; returns its seconds."""
    estimator = TwoWayGMMClassifier(random_state=derive_seed(seed, "satellite", 0, "model") % 2**31)
    iterations = {}

    class Counting(TwoWayGMMClassifier):  # records GEM iterations per grid point; timing as the estimator's
        def fit(self, X, y):
            super().fit(X, y)
            key = (self.n_components, self.n_clusters)
            iterations.setdefault(key, []).append(int(self.n_iter_.sum()))
            return self

    counting = Counting(**estimator.get_params())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t0 = time.perf_counter()
        folds = make_folds(y[train], 10, derive_seed(seed, "satellite", 0, "cv"))
        best, searched, cv_err = select_params(counting, X[train], y[train], grid, folds, n_jobs=1)
        t_cv = time.perf_counter()
        model = clone(estimator).set_params(**best).fit(X[train], y[train])
        y_pred = model.predict(X[test])
        model.predict_proba(X[test])
        t_end = time.perf_counter()
    fits = sum(len(v) for v in iterations.values())
    total_it = sum(sum(v) for v in iterations.values())
    print(f"(b) {name}: one split {t_end - t0:.1f} s (CV {t_cv - t0:.1f} s over {len(searched)} points x "
          f"{len(folds)} folds = {fits} fits, {total_it} class-iterations, "
          f"{1e3 * (t_cv - t0) / max(total_it, 1):.2f} ms each; refit + test {t_end - t_cv:.2f} s)"
          + (f" -- goal <= 60 s: {'met' if t_end - t0 <= 60 else 'NOT met'}" if name == "twoway_gmm" else ""))
    print(f"    chosen {best}, CV error {100 * cv_err.min():.2f}%, test error "
          f"{100 * np.mean(y_pred != y[test]):.2f}%; {len({str(w.message) for w in caught})} distinct warnings")
    print("    mean GEM iterations per class per fit (rows n_components, columns n_clusters):")
    Ls = sorted({p.get("n_clusters") for p in searched}, key=lambda v: np.inf if v is None else v)
    print("      R\\L " + "".join(f"{str(L):>7s}" for L in Ls))
    for R in COMPONENTS:
        cells = [np.mean(iterations.get((R, L), [np.nan])) / len(np.unique(y)) for L in Ls]
        print(f"      {R:3d} " + "".join(f"{c:7.1f}" for c in cells))
    return t_end - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--no-mda", action="store_true", help="skip the MDA split")
    args = parser.parse_args()
    r = load_vectors(load_registry("config/datasets.yaml")["satellite"])
    X, y = r.features, r.labels
    p = X.shape[1]
    train, test = split_80_20(y, args.seed)
    print(f"Satellite: {len(y)} x {p}, {len(np.unique(y))} classes; train {len(train)}, test {len(test)}")
    grid = [{"n_components": R, "n_clusters": L} for R in COMPONENTS for L in CLUSTERS if L < p]
    with threadpool_limits(1):
        one_fit(X, y, train, test, args.seed)
        two = one_split(X, y, train, test, args.seed, grid, "twoway_gmm")
        if not args.no_mda:
            mda = one_split(X, y, train, test, args.seed,
                            [{"n_components": R, "n_clusters": None} for R in COMPONENTS], "mda")
            n_L = sum(L < p for L in CLUSTERS)
            print(f"two-way GMM split / MDA split: {two / mda:.1f}x ({n_L} L values below p per M, and the cluster "
                  "step)")


if __name__ == "__main__":
    main()
