"""Weighted local votes on precomputed similarities: affinity, KRI and KRR k-NN (spec 6.2-6.4).

All three rank the fit-set points by (-s_i, i) (stable sort; spec section 5 [P]),
take the k = min(n_neighbors, n_fit) most similar as the neighbourhood N, give
each neighbour a weight w_i and score class g by sum_{i in N} w_i 1[y_i = g].
The winner is decided by ``break_vote_ties`` (spec section 5: larger prior
[V: Sadowski], then the class of the highest-ranked neighbour [P]; ties detected
with isclose(rtol=1e-12)).

Only classes present in N can win [P]: with KRR or negative similarities the
scores of present classes can be negative, and an absent class (score 0) must
not beat them. This matches k-NN, where absent classes never win.
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import clone
from sklearn.utils._param_validation import Interval, StrOptions

from hlm.models._base import SimilarityClassifier
from hlm.models._grid import group_grid
from hlm.models.knn import break_vote_ties
from hlm.models.kri import simplex_qp_rows
from hlm.models.spectrum import EIG_RTOL, symmetrize

#: Relative eigenvalue cutoff of the KRR pseudo-inverse (spec 6.4): numpy.linalg.pinv's default,
#: i.e. ``pinv(a, hermitian=True)`` with rcond and rtol unset uses rcond = 1e-15 (numpy 2.x source).
#: (``pinv(..., rtol=None)`` would instead use max(M, N) * eps; not used here.)
PINV_RTOL = 1e-15

_K_CONSTRAINT = [Interval(Integral, 1, None, closed="left")]


class _LocalWeightedVote(SimilarityClassifier):
    """Shared fit/predict of the weighted local votes; subclasses define ``_weights``."""

    def fit(self, S, y):
        """Store the fit-set similarities S (n x n) and labels y (spec section 1)."""
        self._validate_params()
        S, self._y_idx = self._check_fit_input(S, y)
        self._S_sym = symmetrize(S)
        return self

    def _neighbours(self, S_te: np.ndarray) -> np.ndarray:
        """Neighbour indices per row, ranked by (-s_i, i) (spec section 5 [P]); m x k."""
        k = min(int(self.n_neighbors), S_te.shape[1])
        return np.argsort(-S_te, axis=1, kind="stable")[:, :k]

    def neighbour_weights(self, S_te) -> tuple[np.ndarray, np.ndarray]:
        """(neighbours, weights): the ranked neighbour indices and their vote weights, both m x k."""
        S_te = self._check_predict_input(S_te)
        nb = self._neighbours(S_te)
        return nb, self._weights(S_te, nb)

    def class_scores(self, S_te) -> np.ndarray:
        """Class scores sum_i w_i 1[y_i = g] (m x G); -inf for classes absent from N."""
        nb, w = self.neighbour_weights(S_te)
        return self._scores(nb, w)

    def _scores(self, nb: np.ndarray, w: np.ndarray) -> np.ndarray:
        m, G = nb.shape[0], len(self.classes_)
        labels = self._y_idx[nb]
        rows = np.broadcast_to(np.arange(m)[:, None], labels.shape)
        scores = np.zeros((m, G))
        np.add.at(scores, (rows, labels), w)
        present = np.zeros((m, G), dtype=bool)
        present[rows, labels] = True
        return np.where(present, scores, -np.inf)

    def predict(self, S_te):
        """Class with the largest weighted vote; ties as in spec section 5."""
        nb, w = self.neighbour_weights(S_te)
        winner = break_vote_ties(self._scores(nb, w), self.class_prior_, self._y_idx[nb])
        return self.classes_[winner]

    #: parameters a CV grid path varies with the neighbourhoods fixed (see ``predict_grid``)
    _path_params: tuple[str, ...] = ()

    def predict_grid(self, S_fit, y, S_val, grid: list[dict]) -> list:
        """Grid path of one CV fold: one ranking of the fit set per fold, neighbourhoods
        per k, and the ``_path_params`` (the ridge) varied on fixed neighbourhoods
        (``_weights_path``); equal to refitting per grid point (tested)."""
        out: list = [None] * len(grid)
        order = None
        for outer, points in group_grid(self, grid, self._path_params).items():
            model = clone(self).set_params(**dict(outer)).fit(S_fit, y)
            S_te = model._check_predict_input(S_val)
            if order is None:
                order = np.argsort(-S_te, axis=1, kind="stable")
            nb = order[:, : min(int(model.n_neighbors), S_te.shape[1])]
            for (g, _), w in zip(points, model._weights_path(S_te, nb, [p for _, p in points])):
                out[g] = model.classes_[break_vote_ties(model._scores(nb, w), model.class_prior_, model._y_idx[nb])]
        return out

    def _weights_path(self, S_te: np.ndarray, nb: np.ndarray, params: list[dict]) -> list[np.ndarray]:
        """Vote weights for each parameter setting in turn (subclasses share work across them)."""
        weights = []
        for p in params:
            self.set_params(**p)
            weights.append(self._weights(S_te, nb))
        return weights

    def _local_blocks(self, S_te: np.ndarray, nb: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Sym(S)[N, N] per row (m x k x k) and s_N (m x k)."""
        S_N = self._S_sym[nb[:, :, None], nb[:, None, :]]
        return S_N, np.take_along_axis(S_te, nb, axis=1)


class AffinityKNN(_LocalWeightedVote):
    """Affinity-weighted k-NN (spec 6.2): w_i = s_i / sum_{j in N} s_j.

    [V: HLM "affinity weights"; R: normalisation, which does not change the argmax.]
    If sum_{j in N} s_j <= 0 the row falls back to the unweighted vote [P];
    negative neighbour similarities are kept raw and trigger one warning per
    ``predict`` [P].

    Parameters
    ----------
    n_neighbors : int
        k; capped at the number of fitted objects.
    """

    _parameter_constraints = {"n_neighbors": _K_CONSTRAINT}

    def __init__(self, n_neighbors: int = 8):
        self.n_neighbors = n_neighbors

    def _weights(self, S_te: np.ndarray, nb: np.ndarray) -> np.ndarray:
        s_N = np.take_along_axis(S_te, nb, axis=1)
        n_neg = int((s_N < 0).sum())
        if n_neg:
            warnings.warn(
                f"AffinityKNN: {n_neg} negative neighbour similarities cast negative votes "
                "(kept raw, spec 6.2)",
                UserWarning,
                stacklevel=4,
            )
        total = s_N.sum(axis=1, keepdims=True)
        k = nb.shape[1]
        safe = np.where(total > 0, total, 1.0)
        return np.where(total > 0, s_N / safe, 1.0 / k)


class KRIKNN(_LocalWeightedVote):
    """KRI k-NN (clip): kernel ridge interpolation weights on the simplex (spec 6.3).

    Per test row: A0 = Sym(S_N) is clipped locally (the formulas of
    ``fit_spectrum(S_N, "clip")``, tau = 1e-12 max|mu|), s~ = P s_N ("consistent" [P])
    or s_N ("raw"), and w = argmin_{w in simplex} 1/2 w^T (S~ + lambda I) w - s~^T w,
    solved exactly by the primal active set of ``simplex_qp`` [P].

    All rows are done at once: one batched ``eigh`` (its clip is reused by the next
    ``predict`` on the same neighbourhood blocks, see ``_local_clip``) and one compiled
    solver call (``simplex_qp_rows``).

    Parameters
    ----------
    n_neighbors : int
        k; capped at the number of fitted objects.
    ridge : float > 0
        lambda; lambda -> inf gives uniform weights (plain k-NN).
    test_transform : {"consistent", "raw"}
        How s_N enters the linear term.
    """

    _parameter_constraints = {
        "n_neighbors": _K_CONSTRAINT,
        "ridge": [Interval(Real, 0, np.inf, closed="neither")],
        "test_transform": [StrOptions({"consistent", "raw"})],
    }

    _path_params = ("ridge",)  # the local clip is shared across ridges (``_local_clip`` memo)

    def __init__(self, n_neighbors: int = 8, ridge: float = 1.0, test_transform: str = "consistent"):
        self.n_neighbors = n_neighbors
        self.ridge = ridge
        self.test_transform = test_transform

    def _weights(self, S_te: np.ndarray, nb: np.ndarray) -> np.ndarray:
        return self._weights_path(S_te, nb, [{"ridge": self.ridge}])[0]

    def _weights_path(self, S_te: np.ndarray, nb: np.ndarray, params: list[dict]) -> list[np.ndarray]:
        """Weights for each ridge in turn: one local clip, and each QP after the first warm-started
        from the previous ridge's weights (same unique minimiser, shorter active-set path)."""
        S_N, s_N = self._local_blocks(S_te, nb)
        k = nb.shape[1]
        mu_clip, U, U_keep, K = _local_clip(S_N)
        if self.test_transform == "consistent":  # b = P s_N with P = U_keep U_keep^T
            b = np.einsum("rij,rj->ri", U_keep, np.einsum("rji,rj->ri", U_keep, s_N))
        else:
            b = s_N
        weights: list[np.ndarray] = []
        for p in params:
            lam = float(p["ridge"])
            A = K.copy()
            A[:, np.arange(k), np.arange(k)] += lam  # A = S~ + lambda I
            if weights:
                weights.append(simplex_qp_rows(A, b, w0=weights[-1]))
                continue
            # the solver's starting inverse (F = all indices): A^{-1} = U diag(1 / (mu_clip + lambda)) U^T
            A_inv = (U * (1.0 / (mu_clip + lam))[:, None, :]) @ U.transpose(0, 2, 1)
            weights.append(simplex_qp_rows(A, b, A_inv))
        return weights


#: Largest m * k * k for which ``_local_clip`` keeps its last result (4 arrays of that size,
#: 16 MB each at the cap; e.g. 87 test rows at k = 128 are 1.4e6).
_CLIP_MEMO_MAX_SIZE = 2**21
_clip_memo: tuple | None = None  # (S_N, result) of the last call


def _local_clip(S_N: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The local clip of every row of S_N (m x k x k, blocks of Sym(S)), with one batched ``eigh``.

    Returns (mu_clip, U, U_keep, K): eigenvalues with those <= tau = EIG_RTOL max|mu| set to
    0, the eigenvectors, the eigenvectors with the dropped ones zeroed (P = U_keep U_keep^T),
    and the symmetrised K = U_keep diag(mu_clip) U_keep^T. These are the formulas of
    ``fit_spectrum(S_N[r], "clip")`` (eigenvectors zeroed instead of sliced out).

    The last input and result are remembered (one slot): cross-validation predicts the
    same fold with every ridge value in turn (ParameterGrid varies ``ridge`` fastest), and
    none of this depends on the ridge. The input is compared exactly, so a remembered
    result is the one the computation would return; only time is saved. Callers must not
    modify the returned arrays.
    """
    global _clip_memo
    memo = _clip_memo
    if memo is not None and memo[0].shape == S_N.shape and np.array_equal(memo[0], S_N):
        return memo[1]
    mu, U = np.linalg.eigh(S_N)
    tau = EIG_RTOL * np.maximum(np.abs(mu).max(axis=1, initial=0.0), np.finfo(float).tiny)
    keep = mu > tau[:, None]
    mu_clip = np.where(keep, mu, 0.0)
    U_keep = U * keep[:, None, :]
    K = (U_keep * mu_clip[:, None, :]) @ U_keep.transpose(0, 2, 1)
    result = (mu_clip, U, U_keep, (K + K.transpose(0, 2, 1)) / 2.0)
    _clip_memo = (S_N.copy(), result) if S_N.size <= _CLIP_MEMO_MAX_SIZE else None
    return result


class KRRKNN(_LocalWeightedVote):
    """KRR k-NN (pinv): w = (Sym(S_N) + lambda I)^+ s_N, unconstrained (spec 6.4 [R]).

    The pseudo-inverse is U diag(phi(mu + lambda)) U^T with phi(t) = 1/t if
    |t| > rtol * max_j |mu_j + lambda|, else 0, rtol = ``PINV_RTOL`` = 1e-15
    (numpy.linalg.pinv(hermitian=True) default). Vectorised over rows with
    batched ``eigh``.

    Parameters
    ----------
    n_neighbors : int
        k; capped at the number of fitted objects.
    ridge : float >= 0
        lambda.
    """

    _parameter_constraints = {
        "n_neighbors": _K_CONSTRAINT,
        "ridge": [Interval(Real, 0, np.inf, closed="left")],
    }

    _path_params = ("ridge",)

    def __init__(self, n_neighbors: int = 8, ridge: float = 1.0):
        self.n_neighbors = n_neighbors
        self.ridge = ridge

    def _weights(self, S_te: np.ndarray, nb: np.ndarray) -> np.ndarray:
        return self._weights_path(S_te, nb, [{"ridge": self.ridge}])[0]

    def _weights_path(self, S_te: np.ndarray, nb: np.ndarray, params: list[dict]) -> list[np.ndarray]:
        """One batched ``eigh`` of the neighbourhood blocks serves every ridge."""
        S_N, s_N = self._local_blocks(S_te, nb)
        mu, U = np.linalg.eigh(S_N)
        projected = np.einsum("rji,rj->ri", U, s_N)
        weights = []
        for p in params:
            t = mu + float(p["ridge"])
            cutoff = PINV_RTOL * np.abs(t).max(axis=1, keepdims=True)
            keep = np.abs(t) > cutoff
            phi = np.divide(1.0, t, out=np.zeros_like(t), where=keep)
            weights.append(np.einsum("rij,rj->ri", U, projected * phi))
        return weights
