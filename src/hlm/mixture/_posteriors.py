"""What the mixture classifiers on feature vectors share (two-way GMM, MDA, the subspace-constrained GMMs, MDA-RR-OS):
posteriors from the joint log densities (``decision_function``: log a_k f_k(x), n x K, or that up to a term common
to the classes), the seed of a fit, and a class label as messages print it."""

from __future__ import annotations

from numbers import Integral

import numpy as np
from scipy.special import logsumexp
from sklearn.utils import check_random_state


def label(c):
    """A class label as a plain Python value (for messages)."""
    return c.item() if isinstance(c, np.generic) else c


def base_seed(random_state) -> int:
    """The fit's base seed: an int ``random_state`` itself, else a draw from it."""
    if isinstance(random_state, Integral):
        return int(random_state)
    return int(check_random_state(random_state).randint(2**31 - 1))


class ScorePosteriors:
    """Mixin: ``predict``, ``predict_proba`` and ``predict_log_proba`` from ``decision_function`` (log a_k f_k(x)
    per class, or that up to a term common to the classes) and ``classes_``."""

    def predict_log_proba(self, X) -> np.ndarray:
        """log p(k | x) = log a_k f_k(x) - log sum_k' a_k' f_k'(x), by Bayes' rule.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Feature vectors, as for ``decision_function``.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Log posteriors, columns in the order of ``classes_``.
        """
        s = self.decision_function(X)
        return s - logsumexp(s, axis=1, keepdims=True)

    def predict_proba(self, X) -> np.ndarray:
        """Posteriors p(k | x) by Bayes' rule (the softmax of ``decision_function``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Feature vectors, as for ``decision_function``.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Rows sum to 1; columns in the order of ``classes_``.
        """
        return np.exp(self.predict_log_proba(X))

    def predict(self, X) -> np.ndarray:
        """argmax_k a_k f_k(x); exact ties go to the first (smallest) class label.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Feature vectors, as for ``decision_function``.

        Returns
        -------
        ndarray of shape (n_samples,)
            The predicted class labels.
        """
        scores = self.decision_function(X)  # first: NotFittedError before any fitted attribute is read
        return self.classes_[np.argmax(scores, axis=1)]


class JointDensityPosteriors(ScorePosteriors):
    """Mixin: :class:`ScorePosteriors` and ``score_samples``, where ``decision_function`` is log a_k f_k(x)."""

    def score_samples(self, X) -> np.ndarray:
        """log sum_k a_k f_k(x), the log density of the fitted model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Feature vectors, as for ``decision_function``.

        Returns
        -------
        ndarray of shape (n_samples,)
            The log density of each row.
        """
        return logsumexp(self.decision_function(X), axis=1)
