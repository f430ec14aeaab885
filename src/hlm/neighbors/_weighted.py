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

from hlm.base._classifiers import CompiledKernels, SimilarityClassifier
from hlm.base._grid import group_grid
from hlm.neighbors._knn import break_vote_ties, laplace_shares
from hlm.neighbors._kri import simplex_qp_rows
from hlm.svm._spectrum import clip_eigenpairs, symmetrize

#: Relative eigenvalue cutoff of the KRR pseudo-inverse (spec 6.4): numpy.linalg.pinv's default,
#: i.e. ``pinv(a, hermitian=True)`` with rcond and rtol unset uses rcond = 1e-15 (numpy 2.x source).
#: (``pinv(..., rtol=None)`` would instead use max(M, N) * eps; not used here.)
PINV_RTOL = 1e-15

_K_CONSTRAINT = [Interval(Integral, 1, None, closed="left")]


class _LocalWeightedVote(SimilarityClassifier):
    """Shared fit/predict of the weighted local votes; subclasses define ``_weights``."""

    def fit(self, S, y):
        """Store the fit-set similarities S (n x n) and labels y (spec section 1).

        Parameters
        ----------
        S : array-like of shape (n_samples, n_samples)
            ``S_train_train``: the similarities among the training objects (finite; may be negative).
        y : array-like of shape (n_samples,)
            The training labels, at least 2 classes.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        self._validate_params()
        S, self._y_idx = self._check_fit_input(S, y)
        self._S_sym = symmetrize(S)
        return self

    def _neighbours(self, S_te: np.ndarray) -> np.ndarray:
        """Neighbour indices per row, ranked by (-s_i, i) (spec section 5 [P]); m x k."""
        k = min(int(self.n_neighbors), S_te.shape[1])
        return np.argsort(-S_te, axis=1, kind="stable")[:, :k]

    def neighbour_weights(self, S_te) -> tuple[np.ndarray, np.ndarray]:
        """(neighbours, weights): the ranked neighbour indices and their vote weights, both m x k.

        Parameters
        ----------
        S_te : array-like of shape (n_queries, n_samples)
            ``S_test_train``: similarities of the objects to classify (rows) to the training objects (columns).

        Returns
        -------
        neighbours : ndarray of shape (n_queries, k)
            The training indices of each row's k most similar training objects, ranked by (-s_i, i).
        weights : ndarray of shape (n_queries, k)
            The vote weight w_i of each of them.
        """
        S_te = self._check_predict_input(S_te)
        nb = self._neighbours(S_te)
        return nb, self._weights(S_te, nb)

    def _scores(self, nb: np.ndarray, w: np.ndarray) -> np.ndarray:
        """Class scores sum_i w_i 1[y_i = g] (m x G); -inf for classes absent from N."""
        m, G = nb.shape[0], len(self.classes_)
        labels = self._y_idx[nb]
        rows = np.broadcast_to(np.arange(m)[:, None], labels.shape)
        scores = np.zeros((m, G))
        np.add.at(scores, (rows, labels), w)
        present = np.zeros((m, G), dtype=bool)
        present[rows, labels] = True
        return np.where(present, scores, -np.inf)

    def predict(self, S_te):
        """Class with the largest weighted vote; ties as in spec section 5.

        Parameters
        ----------
        S_te : array-like of shape (n_queries, n_samples)
            ``S_test_train``: similarities of the objects to classify (rows) to the training objects (columns).

        Returns
        -------
        y_pred : ndarray of shape (n_queries,)
            The predicted labels, of ``classes_``; only classes present in the neighbourhood can win.
        """
        nb, w = self.neighbour_weights(S_te)
        winner = break_vote_ties(self._scores(nb, w), self.class_prior_, self._y_idx[nb])
        return self.classes_[winner]

    def predict_proba(self, S_te):
        """The class shares of the weights, Laplace-corrected (``laplace_shares``, k the neighbourhood size).

        w_g = max(score_g, 0) / sum_h max(score_h, 0): only positive class scores count (KRR's weights, and
        affinity weights of negative similarities, can be negative); where no class scores > 0, the plain
        vote shares [P] (docs/beyond-the-paper-spec.md section 3).

        Parameters
        ----------
        S_te : array-like of shape (n_queries, n_samples)
            ``S_test_train``: similarities of the objects to classify (rows) to the training objects (columns).

        Returns
        -------
        proba : ndarray of shape (n_queries, n_classes)
            The corrected shares, columns in the order of ``classes_``; rows sum to 1.
        """
        nb, w = self.neighbour_weights(S_te)
        scores = self._scores(nb, w)
        positive = np.where(scores > 0, scores, 0.0)  # -inf (absent classes) -> 0
        total = positive.sum(axis=1, keepdims=True)
        votes = self._scores(nb, np.ones(nb.shape))
        votes = np.where(np.isfinite(votes), votes, 0.0) / nb.shape[1]
        shares = np.where(total > 0, positive / np.where(total > 0, total, 1.0), votes)
        return laplace_shares(shares, nb.shape[1])

    def predict_grid(self, S_fit, y, S_val, grid: list[dict]) -> list:
        """Grid path of one CV fold: one ranking of the fit set per fold, neighbourhoods
        per k (in increasing k), and the ``_path_params`` (FastPathMixin; the ridge) varied on fixed
        neighbourhoods (``_weights_path``, which may carry state from one k to the next);
        equal to refitting per grid point (tested).

        Parameters
        ----------
        S_fit : array-like of shape (n_fit, n_fit)
            The fold's fit similarities.
        y : array-like of shape (n_fit,)
            The fold's fit labels.
        S_val : array-like of shape (n_val, n_fit)
            Similarities of the validation objects to the fit objects.
        grid : list of dict
            ``set_params`` dicts; a point may leave out a parameter (the estimator's own value holds).

        Returns
        -------
        predictions : list of ndarray of shape (n_val,)
            The labels ``clone(self).set_params(**point).fit(S_fit, y).predict(S_val)`` of every grid point.
        """
        out: list = [None] * len(grid)
        order = None
        warm_by: dict = {}  # per setting of the other parameters: state handed from one k to the next
        groups = group_grid(self, grid, self._path_params)
        k_default = self.get_params(deep=False)["n_neighbors"]

        def k_of(item):
            return int(dict(item[0]).get("n_neighbors", k_default))

        for outer, points in sorted(groups.items(), key=k_of):
            model = clone(self).set_params(**dict(outer)).fit(S_fit, y)
            S_te = model._check_predict_input(S_val)
            if order is None:
                order = np.argsort(-S_te, axis=1, kind="stable")
            nb = order[:, : min(int(model.n_neighbors), S_te.shape[1])]
            warm = warm_by.setdefault(tuple((n, v) for n, v in outer if n != "n_neighbors"), {})
            for (g, _), w in zip(points, model._weights_path(S_te, nb, [p for _, p in points], warm)):
                out[g] = model.classes_[break_vote_ties(model._scores(nb, w), model.class_prior_, model._y_idx[nb])]
        return out

    def _weights_path(
        self, S_te: np.ndarray, nb: np.ndarray, params: list[dict], warm: dict | None = None
    ) -> list[np.ndarray]:
        """Vote weights for each parameter setting in turn (subclasses share work across them).

        ``warm`` (a dict, or None) is kept by ``predict_grid`` across the neighbourhood sizes of
        one fold, visited in increasing k on the same rows; a subclass may read and update it
        (KRI: warm starts). The weights must not depend on it.
        """
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
    """Affinity-weighted k-NN (compared-methods spec §6.2): w_i = s_i / sum_{j in N} s_j.

    The "affinity weights" of the HLM paper's weighted k-NN (Qiao & Li, section 5.1, item 6; Tables 2-3)
    [V: HLM "affinity weights"; R: normalisation, which does not change the argmax]: the neighbourhood N
    is the k most similar training objects, ranked by (-s_i, i), and class g scores
    sum_{i in N} w_i 1[y_i = g]; vote ties as in spec §5.
    If sum_{j in N} s_j <= 0 the row falls back to the unweighted vote [P];
    negative neighbour similarities are kept raw and trigger one warning per
    ``predict`` [P].

    Parameters
    ----------
    n_neighbors : int, default=8
        k; capped at the number of fitted objects.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels of the fit set, sorted.
    class_prior_ : ndarray of shape (n_classes,)
        The fit-set prior pi_g = n_g / n, which breaks vote ties (spec §5).
    n_features_in_ : int
        The number of fitted (training) objects: the columns ``predict`` expects.

    See Also
    --------
    KRIKNN, KRRKNN : Weights that also reward diversity (spec §6.3-6.4).
    KNNClassifier : The unweighted vote, on distances.

    Examples
    --------
    Two well separated Gaussian blobs, similarities exp(-d**2):

    >>> import numpy as np
    >>> from scipy.spatial.distance import cdist
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal(0, 1, (6, 2)), rng.normal(5, 1, (6, 2))])
    >>> y = np.repeat([0, 1], 6)
    >>> X_test = np.array([[0.0, 0.0], [5.0, 5.0]])
    >>> S, S_test = np.exp(-cdist(X, X) ** 2), np.exp(-cdist(X_test, X) ** 2)
    >>> from hlm.neighbors import AffinityKNN
    >>> model = AffinityKNN(n_neighbors=4).fit(S, y)
    >>> print(model.predict(S_test))
    [0 1]
    >>> neighbours, weights = model.neighbour_weights(S_test)
    >>> print(y[neighbours])  # the classes of each row's 4 neighbours, most similar first
    [[0 0 0 0]
     [1 1 1 1]]
    >>> print(weights.sum(axis=1).round(6))
    [1. 1.]
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


class KRIKNN(CompiledKernels, _LocalWeightedVote):
    """KRI k-NN (clip): kernel ridge interpolation weights on the simplex (compared-methods spec §6.3).

    The "kernel ridge interpolation weights" of the HLM paper's weighted k-NN (Qiao & Li, section 5.1,
    item 6; Tables 2-3), which reward affinity and diversity: the weights of the convex combination of
    the neighbours that best interpolates x, with a ridge penalty.

    Per test row: A0 = Sym(S_N) is clipped locally (``clip_eigenpairs``, the clip of
    ``fit_spectrum(S_N, "clip")``, tau = 1e-12 max|mu|), s~ = P s_N ("consistent" [P])
    or s_N ("raw"), and w = argmin_{w in simplex} 1/2 w^T (S~ + lambda I) w - s~^T w,
    solved exactly by the primal active set of ``simplex_qp_rows`` [P].

    All rows are done at once: one batched ``eigh`` (its clip is reused by the next
    ``predict`` on the same neighbourhood blocks, see ``_local_clip``) and one compiled
    solver call (``simplex_qp_rows``).

    Parameters
    ----------
    n_neighbors : int, default=8
        k; capped at the number of fitted objects.
    ridge : float > 0, default=1.0
        lambda; lambda -> inf gives uniform weights (plain k-NN).
    test_transform : {"consistent", "raw"}, default="consistent"
        How s_N enters the linear term: s~ = P s_N, the projection on the kept eigenvectors ("consistent"
        [P]), or s_N itself ("raw").

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels of the fit set, sorted.
    class_prior_ : ndarray of shape (n_classes,)
        The fit-set prior pi_g = n_g / n, which breaks vote ties (spec §5).
    n_features_in_ : int
        The number of fitted (training) objects: the columns ``predict`` expects.

    See Also
    --------
    AffinityKNN : Weights by affinity only (spec §6.2).
    KRRKNN : Unconstrained kernel ridge regression weights (spec §6.4).

    Examples
    --------
    >>> import numpy as np
    >>> from scipy.spatial.distance import cdist
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal(0, 1, (6, 2)), rng.normal(5, 1, (6, 2))])
    >>> y = np.repeat([0, 1], 6)
    >>> X_test = np.array([[0.0, 0.0], [5.0, 5.0]])
    >>> S, S_test = np.exp(-cdist(X, X) ** 2), np.exp(-cdist(X_test, X) ** 2)
    >>> from hlm.neighbors import KRIKNN
    >>> model = KRIKNN(n_neighbors=4, ridge=1.0).fit(S, y)
    >>> print(model.predict(S_test))
    [0 1]
    >>> _, weights = model.neighbour_weights(S_test)
    >>> print(bool((weights >= 0).all()), weights.sum(axis=1).round(6))  # on the simplex
    True [1. 1.]

    A very large ridge gives uniform weights, the plain k-NN vote:

    >>> _, weights = model.set_params(ridge=1e6).neighbour_weights(S_test)
    >>> print(weights.round(3))
    [[0.25 0.25 0.25 0.25]
     [0.25 0.25 0.25 0.25]]
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

    def _weights_path(
        self, S_te: np.ndarray, nb: np.ndarray, params: list[dict], warm: dict | None = None
    ) -> list[np.ndarray]:
        """Weights for each ridge: one local clip, then the QPs from the largest ridge down.

        The largest ridge starts cold (spec start: every index free; its solution is dense).
        Each smaller ridge is warm-started (``simplex_qp_rows(w0=...)``), per row, from the
        previous ridge's weights or from the same ridge's weights at the previous, smaller k of
        ``warm`` (padded with zeros for the new neighbours; neighbourhoods are nested), whichever
        ``_nearer_start`` expects nearer. The minimiser is unique (A is positive definite), so
        the start changes the active-set path only, not the weights (up to rounding; tested).
        ``warm`` ({ridge: weights m x k}) is updated with this k.
        """
        S_N, s_N = self._local_blocks(S_te, nb)
        m, k = nb.shape
        mu_clip, U_keep, K = _local_clip(S_N)
        if self.test_transform == "consistent":  # b = P s_N with P = U_keep U_keep^T
            b = (U_keep @ (s_N[:, None, :] @ U_keep).transpose(0, 2, 1))[:, :, 0]
        else:
            b = s_N
        lams = [float(p["ridge"]) for p in params]
        weights: list = [None] * len(lams)
        previous = previous_lam = None
        A = np.empty(K.shape)  # one C-ordered buffer for every ridge (the solver does not keep or modify A)
        diagonal = A.reshape(m, k * k)[:, :: k + 1]  # a view of the diagonals (A is C-contiguous)
        for i in sorted(range(len(lams)), key=lambda i: -lams[i]):
            lam = lams[i]
            np.copyto(A, K)
            diagonal += lam  # A = S~ + lambda I
            w0 = _padded_start(warm, lam, m, k, exact_only=previous is None)
            if previous is not None and w0 is None:
                w0 = previous
            elif previous is not None:
                w0 = _nearer_start(previous, w0, _padded_start(warm, previous_lam, m, k, exact_only=False))
            if w0 is not None:
                weights[i] = simplex_qp_rows(A, b, w0=w0)
            else:
                # the solver's starting inverse (F = all indices): A^{-1} = U diag(1 / (mu_clip + lambda)) U^T
                # = I / lambda + U_keep diag(1 / (mu_clip + lambda) - 1 / lambda) U_keep^T
                coef = -mu_clip / (lam * (mu_clip + lam))
                A_inv = (U_keep * coef[:, None, :]) @ U_keep.transpose(0, 2, 1)
                A_inv[:, np.arange(k), np.arange(k)] += 1.0 / lam
                weights[i] = simplex_qp_rows(A, b, A_inv)
            previous, previous_lam = weights[i], lam
        if warm is not None:
            warm.update(zip(lams, weights))
        return weights


#: ``_nearer_start``: the previous ridge's weights are the start where the ridge step changed at
#: most this fraction of the support at the previous k (measured on Voting, Protein, Sonar, House Votes).
_FLAT_RIDGE_STEP = 0.05


def _nearer_start(by_ridge: np.ndarray, by_k: np.ndarray, corner: np.ndarray | None) -> np.ndarray:
    """Per row, the warm start expected to be nearer the solution (fewer active-set steps).

    ``by_ridge``: this k, the previous (larger) ridge; ``by_k``: this ridge, the previous k
    (padded); ``corner``: the previous ridge at the previous k (padded). Where the same ridge
    step hardly changed the support at the previous k (corner -> by_k, at most
    ``_FLAT_RIDGE_STEP`` of it: the ridges are small for the scale of the similarities, e.g.
    1/d similarities), by_ridge is nearly the solution; elsewhere (the support shrinks with the
    ridge: [0, 1] similarities) by_k is, as supports change little with k. Only the number of
    steps depends on this choice, not the weights.
    """
    if corner is None:
        return by_k
    ridge_step = ((by_k > 0) != (corner > 0)).sum(axis=1)
    flat = ridge_step <= _FLAT_RIDGE_STEP * (corner > 0).sum(axis=1)
    return np.where(flat[:, None], by_ridge, by_k)


def _padded_start(warm: dict | None, lam: float, m: int, k: int, exact_only: bool) -> np.ndarray | None:
    """The weights of ridge ``lam`` at a smaller (or the same) k from ``warm``, padded with
    zeros to m x k; None if there are none (or, with ``exact_only``, if their k is smaller)."""
    prev = None if warm is None else warm.get(lam)
    if prev is None or prev.shape[0] != m or prev.shape[1] > k or (exact_only and prev.shape[1] != k):
        return None
    if prev.shape[1] == k:
        return prev
    w0 = np.zeros((m, k))
    w0[:, : prev.shape[1]] = prev
    return w0


#: Largest m * k * k for which ``_local_clip`` keeps its last result (at most 3 arrays of that size,
#: 16 MB each at the cap; e.g. 87 test rows at k = 128 are 1.4e6).
_CLIP_MEMO_MAX_SIZE = 2**21
_clip_memo: tuple | None = None  # (S_N, result) of the last call


def _local_clip(S_N: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The local clip of every row of S_N (m x k x k, blocks of Sym(S)): ``clip_eigenpairs`` of
    one batched ``eigh``.

    Returns (mu_clip, U_keep, K) as ``clip_eigenpairs`` does for a stack: the kept eigenvalues
    and eigenvectors (zeroed where a row keeps fewer than the most-keeping row; P = U_keep
    U_keep^T) and K. A dropped eigenpair contributes nothing to K or P, and 1 / lambda to
    (K + lambda I)^{-1}, see ``KRIKNN._weights_path``.

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
    result = clip_eigenpairs(*np.linalg.eigh(S_N))
    _clip_memo = (S_N.copy(), result) if S_N.size <= _CLIP_MEMO_MAX_SIZE else None
    return result


class KRRKNN(_LocalWeightedVote):
    """KRR k-NN (pinv): w = (Sym(S_N) + lambda I)^+ s_N, unconstrained (compared-methods spec §6.4 [R]).

    The "kernel ridge regression weights" of the HLM paper's weighted k-NN (Qiao & Li, section 5.1,
    item 6; Tables 2-3): a local kernel ridge regression of the one-hot labels of the neighbours,
    evaluated at x, so class g scores sum_{i in N} w_i 1[y_i = g]; the weights may be negative and need
    not sum to 1. Vote ties as in spec §5.

    The pseudo-inverse is U diag(phi(mu + lambda)) U^T with phi(t) = 1/t if
    |t| > rtol * max_j |mu_j + lambda|, else 0, rtol = ``PINV_RTOL`` = 1e-15
    (numpy.linalg.pinv(hermitian=True) default). Vectorised over rows with
    batched ``eigh``.

    Parameters
    ----------
    n_neighbors : int, default=8
        k; capped at the number of fitted objects.
    ridge : float >= 0, default=1.0
        lambda.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels of the fit set, sorted.
    class_prior_ : ndarray of shape (n_classes,)
        The fit-set prior pi_g = n_g / n, which breaks vote ties (spec §5).
    n_features_in_ : int
        The number of fitted (training) objects: the columns ``predict`` expects.

    See Also
    --------
    KRIKNN : The weights constrained to the simplex, on a clipped S_N (spec §6.3).

    Examples
    --------
    >>> import numpy as np
    >>> from scipy.spatial.distance import cdist
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal(0, 1, (6, 2)), rng.normal(5, 1, (6, 2))])
    >>> y = np.repeat([0, 1], 6)
    >>> X_test = np.array([[0.0, 0.0], [5.0, 5.0]])
    >>> S, S_test = np.exp(-cdist(X, X) ** 2), np.exp(-cdist(X_test, X) ** 2)
    >>> from hlm.neighbors import KRRKNN
    >>> model = KRRKNN(n_neighbors=4, ridge=1.0).fit(S, y)
    >>> print(model.predict(S_test))
    [0 1]
    >>> proba = model.predict_proba(S_test)
    >>> print(proba.shape, proba.argmax(axis=1), proba.sum(axis=1).round(6))
    (2, 2) [0 1] [1. 1.]
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

    def _weights_path(
        self, S_te: np.ndarray, nb: np.ndarray, params: list[dict], warm: dict | None = None
    ) -> list[np.ndarray]:
        """One batched ``eigh`` of the neighbourhood blocks serves every ridge (``warm`` unused)."""
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
