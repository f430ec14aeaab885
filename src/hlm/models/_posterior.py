"""Posteriors of a generative classifier from its joint log densities (``decision_function``: log a_k f_k(x),
n x K), shared by the mixture classifiers on feature vectors (two-way GMM, MDA, the subspace-constrained GMMs)."""

from __future__ import annotations

import numpy as np
from scipy.special import logsumexp


class JointDensityPosteriors:
    """Mixin: ``predict``, ``predict_proba``, ``predict_log_proba`` and ``score_samples`` from
    ``decision_function`` (log a_k f_k(x) per class) and ``classes_``."""

    def predict_log_proba(self, X) -> np.ndarray:
        s = self.decision_function(X)
        return s - logsumexp(s, axis=1, keepdims=True)

    def predict_proba(self, X) -> np.ndarray:
        return np.exp(self.predict_log_proba(X))

    def score_samples(self, X) -> np.ndarray:
        """log sum_k a_k f_k(x)."""
        return logsumexp(self.decision_function(X), axis=1)

    def predict(self, X) -> np.ndarray:
        """argmax_k a_k f_k(x); exact ties go to the first (smallest) class label."""
        scores = self.decision_function(X)  # first: NotFittedError before any fitted attribute is read
        return self.classes_[np.argmax(scores, axis=1)]
