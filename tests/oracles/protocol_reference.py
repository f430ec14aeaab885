"""The pipeline's protocol written from docs/pipeline.md and the specs in plain loops: seeds, splits, folds and
the CV's choice, sharing no code with ``hlm.base.derive_seed``, ``hlm.pipeline.evaluation.splits`` or
``hlm.pipeline.evaluation.cv``. The protocols' "rows equal direct refits" tests use these, so that a bug in the
runner's seeds, folds or choice is not repeated by the check."""

from __future__ import annotations

import hashlib
import math

import numpy as np
from sklearn.model_selection import StratifiedKFold


def seed(*parts) -> int:
    """A seed from (seed, data set, split, fold, ...): the first 4 bytes, little-endian, of the SHA-256 of the
    parts' string forms joined by '/'."""
    digest = hashlib.sha256("/".join(str(p) for p in parts).encode()).digest()
    return digest[0] + 256 * digest[1] + 65536 * digest[2] + 16777216 * digest[3]


def split(n: int, dataset: str, base_seed: int, index: int, test_fraction: float) -> tuple[np.ndarray, np.ndarray]:
    """Split ``index``: a permutation of the n objects by numpy's default generator seeded from (seed, data set,
    split); its first ceil(test_fraction n) objects are the test part. (train, test), sorted."""
    perm = np.random.default_rng(seed(base_seed, dataset, index)).permutation(n)
    n_test = math.ceil(test_fraction * n)
    return np.sort(perm[n_test:]), np.sort(perm[:n_test])


def folds(y, n_folds: int, fold_seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Stratified, shuffled folds: scikit-learn's StratifiedKFold itself (every class with >= n_folds members)."""
    y = np.asarray(y)
    return list(StratifiedKFold(n_folds, shuffle=True, random_state=fold_seed).split(np.zeros(len(y)), y))


def cv_choice(make, X, y, grid: list[dict], fold_list) -> dict:
    """The grid point of the lowest mean validation error over the folds, the earlier one on a tie: one refit of
    ``make(point)`` per point and fold."""
    best, best_error = None, math.inf
    for point in grid:
        errors = []
        for fit, val in fold_list:
            model = make(point).fit(X[fit], y[fit])
            errors.append(float(np.mean(model.predict(X[val]) != y[val])))
        mean = sum(errors) / len(errors)
        if mean < best_error:
            best, best_error = point, mean
    return best
