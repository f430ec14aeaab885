"""What chapter 4's two protocols share (subspace_gmm, subspace_selection): the partitions and the methods'
names. A module of its own, so that neither protocol's job depends on the other's code."""

from __future__ import annotations

import numpy as np

from hlm.base._seeds import derive_seed

#: the chapter's names of its methods
NAMES = {"gmm_mpca": "GMM-MPCA", "gmm_mpca_mean": "GMM-MPCA-MEAN", "gmm_mpca_sep": "GMM-MPCA-SEP",
         "mda_rr": "MDA-RR", "mda_rr_os": "MDA-RR-OS", "mda_dr_mpca": "MDA-DR-MPCA",
         "mda_dr_mpca_mean": "MDA-DR-MPCA-MEAN"}


def simulation_parts(spec, n_simulations: int, n_train: int, n_test: int, seed: int, dataset: str):
    """[(X_train, y_train, X_test, y_test)] of a generated data set, each drawn afresh."""
    from hlm.datasets._generated import generate

    parts = []
    for s in range(n_simulations):
        train = generate(spec.generator, n_train, spec.n_features, derive_seed(seed, dataset, s, "train"))
        test = generate(spec.generator, n_test, spec.n_features, derive_seed(seed, dataset, s, "test"))
        parts.append((train.X, np.asarray(train.labels), test.X, np.asarray(test.labels)))
    return parts


def cv_parts(X: np.ndarray, y: np.ndarray, n_folds: int, seed: int, dataset: str):
    """[(X_train, y_train, X_test, y_test)] of stratified ``n_folds``-fold cross-validation."""
    from hlm.pipeline.evaluation.cv import make_folds

    return [(X[fit], y[fit], X[val], y[val]) for fit, val in make_folds(y, n_folds, derive_seed(seed, dataset,
                                                                                                  "folds"))]
