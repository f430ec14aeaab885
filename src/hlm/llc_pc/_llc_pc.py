"""Locally linear classification by pairwise coupling, LLC-PC (Chen, Lu & Boedihardjo; spec
``docs/llc-pc-spec.md``): each class is split into subclasses, a linear classifier is trained for every
pair of subclasses of different classes (the set U), and the pairwise decisions are combined.

Subclasses by Greedy-MPE (section 5, minimising the MPE criterion of eqs. 1-3) or by k-means, hierarchical
clustering or EM inside each class (the rivals of section 6.1): ``hlm.llc_pc._subclasses``. Pairwise linear SVM
(libsvm, C = 100) or Fisher LDA and the criterion: ``hlm.llc_pc._mpe``. Voting, MinMax and probability schemas
(section 3.1): ``hlm.llc_pc._coupling``.
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.utils._param_validation import Interval, InvalidParameterError, StrOptions

from hlm.base._classifiers import (
    CachedParamNames,
    FastPathMixin,
    as_vectors,
    fit_classes,
    fitted_vectors,
    standard_scale,
)
from hlm.base._grid import group_grid
from hlm.errors import DataError
from hlm.llc_pc._coupling import combine, couple, pair_probabilities, provable
from hlm.llc_pc._subclasses import GreedyMPEPath, PairStore, WithinClassPath
from hlm.svm._similarity import _SVC_CONSTRAINTS, warn_max_iter

#: rows x pairs x features per block of ``decision_values``
_BLOCK = 1 << 22


def decision_values(Xs: np.ndarray, W: np.ndarray, b: np.ndarray) -> np.ndarray:
    """f_p(x) = W_p'x + b_p (objects x pairs), each entry a plain sum over the features (no BLAS), so an
    entry does not depend on which other pairs are evaluated with it (the CV path equals refits)."""
    out = np.empty((Xs.shape[0], W.shape[0]))
    rows = max(1, _BLOCK // max(1, W.shape[0] * W.shape[1]))
    for start in range(0, Xs.shape[0], rows):
        block = Xs[start:start + rows]
        out[start:start + rows] = (block[:, None, :] * W[None, :, :]).sum(axis=2) + b
    return out


def _label(c):
    """A class label as the user wrote it (a numpy scalar as its Python value), for messages."""
    return c.item() if isinstance(c, np.generic) else c


class LLCPairwiseCoupling(ClassifierMixin, FastPathMixin, CachedParamNames, BaseEstimator):
    """LLC-PC on feature vectors: ``fit(X, y)``, ``predict(X)`` (Chen, Lu & Boedihardjo; docs/llc-pc-spec.md).

    Locally linear classification by pairwise coupling: each class C_i is split into subclasses C_ij
    (Greedy-MPE, section 5, minimising the MPE criterion Q of eq. (1) with the pair error of eq. (3) or
    (2); or k-means, HC or EM inside each class, the rivals of section 6.1), a linear classifier f_ij-kp is
    trained for every pair of subclasses of different classes (the set U, section 3.1), and the pairwise
    decisions are combined by voting, MinMax or pairwise coupling (section 3.1). By Theorem 3.1 the
    schemas agree where one subclass wins all its duels (the provable region; for the coupled
    probabilities not guaranteed, spec 2). One subclass per class is a linear classifier; one per
    object is 1-NN (Theorem 3.2).

    Features are standardised with the fit set's mean and sd (a constant feature keeps sd 1 and is 0 after
    centring); subclasses, criterion and pairwise models live in that space.

    Parameters
    ----------
    n_subclasses : int, default=2
        Total number of subclasses K, used as clip(K, N classes, n fit objects).
    subclassing : {"greedy_mpe", "kmeans", "hc", "em"}, default="greedy_mpe"
        Greedy-MPE (section 5), or inside each class (section 6.1) k-means, hierarchical clustering (HC, by
        ``linkage``) or EM (a Gaussian mixture with full covariances, objects to their most probable component).
    classifier : {"svm", "lda"}, default="svm"
        Pairwise linear SVM (libsvm on the pair's linear kernel) or Fisher LDA (eq. 2's w, midpoint threshold).
    C : float, default=100.0
        SVM trade-off, also the C of MPE-SVM (eq. 3); the paper's C = 100 (section 6.1).
    criterion : {"auto", "mpe_svm", "mpe_lda"}, default="auto"
        The pair error E of Q (eq. 1): eq. (3) or eq. (2); "auto" follows ``classifier``.
    selection : {"pair_variance", "aggregate", "gain"}, default="pair_variance"
        Greedy-MPE's choice of the subclass to split (section 5 and its two alternatives).
    pair_error : {"criterion", "training_error"}, default="criterion"
        E in F = P E of steps 2 ("pair_variance") and "aggregate": the criterion's E, or the pair
        classifier's misclassified fraction on its objects. "gain" uses Q's E.
    variance : {"trace", "sse"}, default="trace"
        Intra-class variance of step 3: trace of the covariance, or the sum of squared distances.
    combination : {"voting", "minmax", "probability"}, default="voting"
        Schema of section 3.1.
    pair_probability : {"sigmoid", "platt"}, default="sigmoid"
        r = 1/(1 + e^-f), or Platt's sigmoid fitted on the pair's training decision values.
    tie_break : {"label", "minmax"}, default="label"
        Voting ties: the smallest label, or the tied class whose best subclass has the largest MinMax value.
    allocation : {"equal", "proportional"}, default="equal"
        k-means, HC and EM: subclasses per class for a total K (spec 5).
    subclasses_per_class : None, dict or sequence of int, default=None
        k-means, HC and EM only: explicit counts (a dict label -> count, or one count per class in sorted label
        order); ``n_subclasses`` is then ignored.
    linkage : {"average", "ward", "single", "complete"}, default="average"
        HC's linkage on the Euclidean distances of the standardised rows; the paper's average link (section 6.1).
    n_init : int, default=10
        k-means / 2-means restarts (the paper's "replicates"); EM starts from the k-means clusters.
    tol : float, default=1e-3
        libsvm's stopping tolerance.
    max_iter : int, default=10_000_000
        libsvm's iteration cap (-1: none); hitting it warns (``ConvergenceWarning``).
    cache_size : float, default=200
        libsvm's kernel cache in MB.
    random_state : int, default=0
        All randomness: clusterings draw from SeedSequence([random_state, purpose, class, key]).

    Attributes
    ----------
    classes_ : ndarray of shape (N,)
        The sorted class labels.
    n_features_in_ : int
        Number of features d of X.
    mean_, scale_ : ndarray of shape (d,)
        The fit set's feature means and sds (1 for a constant feature): the models see (X - mean_) / scale_.
    n_subclasses_ : int
        The effective K (below the clipped ``n_subclasses`` if Greedy-MPE stopped or a class was capped).
    subclass_class_ : ndarray (K,)
        Class index (into ``classes_``) of each subclass; subclasses sorted by (class, ``subclass_id_``).
    subclass_id_ : ndarray (K,)
        Creation index of each subclass (Greedy-MPE: classes 0..N-1, then two per split; k-means, HC, EM: the
        cluster's position in its class, by smallest training index).
    subclass_of_ : ndarray (n,)
        Subclass of each training object.
    subclasses_per_class_ : ndarray (N,)
        Number of subclasses N_i of each class.
    pairs_ : ndarray (P, 2)
        The pairs of U (subclass indices a < b, a of the smaller class), lexicographic.
    coef_, intercept_ : ndarray (P, d), (P,)
        f_ab(x) = coef_ . (x - mean_) / scale_ + intercept_, > 0 for subclass a.
    pair_error_ : ndarray (P,)
        E of the criterion (eq. 3 or 2) per pair.
    pair_weight_ : ndarray (P,)
        P_ij-kp of eq. (1) (sums to 1).
    mpe_ : float
        Q of eq. (1).
    splits_ : list of dict
        Greedy-MPE's steps: ``pair`` (creation indices of the pair chosen, None for "aggregate"/"gain"),
        ``split`` (creation index of the subclass split), ``children``, ``mpe`` (Q after). Empty otherwise.
    converged_ : bool
        False if a libsvm fit hit ``max_iter`` (a ConvergenceWarning is emitted).

    Examples
    --------
    XOR: class 0 in two opposite corners, class 1 in the other two; no single hyperplane separates them.

    >>> import numpy as np
    >>> from hlm.llc_pc import LLCPairwiseCoupling
    >>> rng = np.random.default_rng(0)
    >>> centres = np.array([[0.0, 0.0], [4.0, 4.0], [0.0, 4.0], [4.0, 0.0]])
    >>> X = np.vstack([rng.normal(c, 0.5, (10, 2)) for c in centres])
    >>> y = np.repeat([0, 0, 1, 1], 10)
    >>> X_te = centres + rng.normal(0.0, 0.3, centres.shape)  # one test object near each centre

    One subclass per class is one linear SVM, which gets two of the four test objects wrong:

    >>> print(LLCPairwiseCoupling(n_subclasses=2).fit(X, y).predict(X_te))
    [0 1 0 1]

    Greedy-MPE to K = 4 splits each class into its two blobs (two splits), leaving 2 x 2 pairs in U:

    >>> model = LLCPairwiseCoupling(n_subclasses=4, subclassing="greedy_mpe").fit(X, y)
    >>> print(model.predict(X_te))
    [0 0 1 1]
    >>> model.n_subclasses_, model.subclasses_per_class_.tolist(), model.pairs_.shape, len(model.splits_)
    (4, [2, 2], (4, 2), 2)
    >>> blobs = model.subclass_of_.reshape(4, 10)  # the subclass of each training object, one row per blob
    >>> bool((blobs == blobs[:, :1]).all()), sorted(blobs[:, 0].tolist())
    (True, [0, 1, 2, 3])
    >>> print(model.decision_function(X_te))  # two classes: F_2 - F_1 of the vote shares, > 0 is classes_[1]
    [-0.5 -0.5  0.5  0.5]

    One fit serves every K of the path (as refits would), with Q of eq. (1) falling from K = 2 to 4:

    >>> path = model.path_predictions(X_te, [2, 4])
    >>> print(path["predictions"]["voting"])
    [[0 1 0 1]
     [0 0 1 1]]
    >>> bool(path["mpe"][1] < path["mpe"][0])
    True

    k-means subclasses, MinMax combination:

    >>> kmeans = LLCPairwiseCoupling(n_subclasses=4, subclassing="kmeans", combination="minmax").fit(X, y)
    >>> print(kmeans.predict(X_te))
    [0 0 1 1]
    """

    _parameter_constraints = {
        **_SVC_CONSTRAINTS,
        "n_subclasses": [Interval(Integral, 1, None, closed="left")],
        "subclassing": [StrOptions({"greedy_mpe", "kmeans", "hc", "em"})],
        "linkage": [StrOptions({"average", "ward", "single", "complete"})],
        "classifier": [StrOptions({"svm", "lda"})],
        "criterion": [StrOptions({"auto", "mpe_svm", "mpe_lda"})],
        "selection": [StrOptions({"pair_variance", "aggregate", "gain"})],
        "pair_error": [StrOptions({"criterion", "training_error"})],
        "variance": [StrOptions({"trace", "sse"})],
        "combination": [StrOptions({"voting", "minmax", "probability"})],
        "pair_probability": [StrOptions({"sigmoid", "platt"})],
        "tie_break": [StrOptions({"label", "minmax"})],
        "allocation": [StrOptions({"equal", "proportional"})],
        "subclasses_per_class": [None, dict, "array-like"],
        "n_init": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "random_state": [Interval(Integral, 0, None, closed="left")],
    }

    #: one fit to the grid's largest K serves every K (``predict_grid``)
    _path_params = ("n_subclasses",)

    def __init__(self, n_subclasses: int = 2, subclassing: str = "greedy_mpe", classifier: str = "svm",
                 C: float = 100.0, criterion: str = "auto", selection: str = "pair_variance",
                 pair_error: str = "criterion", variance: str = "trace", combination: str = "voting",
                 pair_probability: str = "sigmoid", tie_break: str = "label", allocation: str = "equal",
                 subclasses_per_class=None, linkage: str = "average", n_init: int = 10, tol: float = 1e-3,
                 max_iter: int = 10_000_000, cache_size: float = 200, random_state: int = 0):
        self.n_subclasses = n_subclasses
        self.subclassing = subclassing
        self.classifier = classifier
        self.C = C
        self.criterion = criterion
        self.selection = selection
        self.pair_error = pair_error
        self.variance = variance
        self.combination = combination
        self.pair_probability = pair_probability
        self.tie_break = tie_break
        self.allocation = allocation
        self.subclasses_per_class = subclasses_per_class
        self.linkage = linkage
        self.n_init = n_init
        self.tol = tol
        self.max_iter = max_iter
        self.cache_size = cache_size
        self.random_state = random_state

    # ---------------------------------------------------------------- fit
    def fit(self, X, y):
        """Standardise, make the subclasses (Greedy-MPE to K, or clusters in each class), fit the pairwise
        classifiers of U and compute Q (eq. 1) at the effective K.

        Parameters
        ----------
        X : array-like of shape (n, d)
            Feature vectors of the fit objects.
        y : array-like of shape (n,)
            Class labels (at least 2 classes).

        Returns
        -------
        self : LLCPairwiseCoupling
            The fitted estimator.
        """
        self._validate_params()
        if self.subclasses_per_class is not None and self.subclassing == "greedy_mpe":
            raise InvalidParameterError("LLC-PC: subclasses_per_class applies to subclassing='kmeans', 'hc' or "
                                        "'em' only")
        X = as_vectors(X, "fit: X")
        self.classes_, y_idx = fit_classes(y, X.shape[0], "rows of X")
        self.n_features_in_ = X.shape[1]
        Xs = self._standardise_fit(X)
        criterion = self.criterion if self.criterion != "auto" else f"mpe_{self.classifier}"
        self._store = PairStore(dict(classifier=self.classifier, criterion=criterion, C=float(self.C),
                                     tol=float(self.tol), max_iter=int(self.max_iter),
                                     cache_size=float(self.cache_size), platt=self.pair_probability == "platt"))
        N = len(self.classes_)
        K = int(min(max(self.n_subclasses, N), X.shape[0]))
        if self.subclassing == "greedy_mpe":
            self._path = GreedyMPEPath(Xs, y_idx, N, self._store, self.random_state, selection=self.selection,
                                       pair_error=self.pair_error, variance=self.variance, n_init=self.n_init)
            self._path.extend(K)
            if len(self._path.active) < K:
                warnings.warn(f"LLC-PC (Greedy-MPE): no subclass can be split further (one object or identical "
                              f"objects); stopped at {len(self._path.active)} of the {K} subclasses asked",
                              UserWarning, stacklevel=2)
        else:
            self._path = WithinClassPath(Xs, y_idx, N, self._store, self.random_state, allocation=self.allocation,
                                         n_init=self.n_init, counts=self._explicit_counts(y_idx, Xs),
                                         clustering=self.subclassing, linkage=self.linkage)
            self._warn_capped(K)
        self._set_model(K)
        return self

    def _standardise_fit(self, X: np.ndarray) -> np.ndarray:
        """Standardise with the fit set's mean and sd; a constant feature (warned) is 0 after centring."""
        constant = np.ptp(X, axis=0) == 0
        if constant.all():
            raise DataError(f"fit: every feature of X is constant over the {X.shape[0]} objects; "
                            "LLC-PC has nothing to separate the classes with")
        self.mean_, self.scale_ = standard_scale(X)  # a constant feature: its value and scale 1
        if constant.any():
            warnings.warn(f"LLC-PC: feature(s) {', '.join(map(str, np.flatnonzero(constant)))} are constant in the "
                          "fit set; they are 0 after centring and change no pairwise classifier", UserWarning,
                          stacklevel=3)
        return np.ascontiguousarray((X - self.mean_) / self.scale_)

    def _explicit_counts(self, y_idx: np.ndarray, Xs: np.ndarray) -> np.ndarray | None:
        """``subclasses_per_class`` as one count per class; a one-line DataError for a bad count."""
        given = self.subclasses_per_class
        if given is None:
            return None
        labels = list(self.classes_)
        if isinstance(given, dict):
            unknown = [k for k in given if k not in labels]
            if unknown or len(given) != len(labels):
                raise DataError(f"fit: subclasses_per_class must give a count for each of the classes {labels} "
                                f"(got {sorted(map(str, given))})")
            counts = [given[c] for c in labels]
        else:
            counts = list(np.asarray(given).ravel())
            if len(counts) != len(labels):
                raise DataError(f"fit: subclasses_per_class has {len(counts)} counts for {len(labels)} classes")
        for c, m in zip(labels, counts):
            if not float(m).is_integer() or m < 1:
                raise DataError(f"fit: subclasses_per_class for class {_label(c)!r} is {m}; it must be a positive "
                                "integer")
            i = labels.index(c)
            distinct = len(np.unique(Xs[y_idx == i], axis=0))
            if m > distinct:
                raise DataError(f"fit: subclasses_per_class asks {int(m)} subclasses of class {_label(c)!r}, which has "
                                f"{distinct} distinct objects")
        return np.array(counts, dtype=np.int64)

    def _warn_capped(self, K: int) -> None:
        counts, capped = self._path.counts(K)
        if capped:
            names = ", ".join(f"{_label(self.classes_[i])!r} ({self._path.distinct[i]})" for i in capped)
            label = {"kmeans": "k-means", "hc": "HC", "em": "EM"}[self.subclassing]
            warnings.warn(f"LLC-PC ({label}): class(es) {names} have fewer distinct objects than their share of "
                          f"the {K} subclasses; they get one subclass per distinct object and the excess goes "
                          f"to the next classes ({int(counts.sum())} subclasses in all)", UserWarning, stacklevel=3)

    def _set_model(self, K: int) -> None:
        subs = self._path.subclasses(K)
        a, b, models = self._store.table(subs)
        self._subs = subs
        self.n_subclasses_ = len(subs)
        self.subclass_class_ = np.array([s.cls for s in subs])
        self.subclass_id_ = np.array([s.order for s in subs])
        self.subclass_of_ = np.empty(len(self._path.y_idx), dtype=np.intp)
        for j, s in enumerate(subs):
            self.subclass_of_[s.members] = j
        self.subclasses_per_class_ = np.bincount(self.subclass_class_, minlength=len(self.classes_))
        self.pairs_ = np.column_stack([a, b])
        self.coef_ = np.array([m.coef for m in models])
        self.intercept_ = np.array([m.intercept for m in models])
        self.pair_error_ = np.array([m.error for m in models])
        self.pair_weight_ = self._path.weights(subs, a, b)
        self.mpe_ = float(self.pair_weight_ @ self.pair_error_)
        self._platt = np.array([m.platt for m in models]) if self.pair_probability == "platt" else None
        steps = self._path.splits[:max(K - len(self.classes_), 0)] if self.subclassing == "greedy_mpe" else []
        self.splits_ = [dict(pair=s.pair, split=s.parent.order, children=tuple(c.order for c in s.children),
                             mpe=s.mpe) for s in steps]
        fits = list(self._store.models.values())
        self.converged_ = all(m.converged for m in fits)
        if not self.converged_:
            warn_max_iter("LLC-PC pairwise SVM", self.C, self.max_iter,
                          f" in {sum(not m.converged for m in fits)} of {len(fits)} pair fits")

    # ---------------------------------------------------------------- predict
    def _standardise(self, X) -> np.ndarray:
        X = fitted_vectors(self, X, "coef_")
        return (X - self.mean_) / self.scale_

    def _combine(self, f: np.ndarray, first, second, sub_class, combination: str, platt):
        return combine(f, first, second, sub_class, len(self.classes_), combination, tie_break=self.tie_break,
                       platt=platt)

    def _fitted_combine(self, X, combination: str):
        f = decision_values(self._standardise(X), self.coef_, self.intercept_)
        return self._combine(f, self.pairs_[:, 0], self.pairs_[:, 1], self.subclass_class_, combination,
                             self._platt)

    def predict(self, X) -> np.ndarray:
        """G(x) = argmax_i F_i(x) of the chosen schema (voting: exact fractions; ties: the smallest label).

        Parameters
        ----------
        X : array-like of shape (m, d)
            Feature vectors of the test objects.

        Returns
        -------
        labels : ndarray of shape (m,)
            Predicted labels, values of ``classes_``.
        """
        winner = self._fitted_combine(X, self.combination)[0]
        return self.classes_[winner]

    def decision_function(self, X) -> np.ndarray:
        """F_i(x) of the chosen schema (vote share, MinMax value or coupled maximum), (objects x classes);
        for two classes F_2 - F_1 (> 0 means ``classes_[1]``).

        Parameters
        ----------
        X : array-like of shape (m, d)
            Feature vectors of the test objects.

        Returns
        -------
        F : ndarray of shape (m, N), or (m,) for two classes
            F_i(x) per class of ``classes_``; for two classes F_2(x) - F_1(x).
        """
        F = self._fitted_combine(X, self.combination)[1]
        return F[:, 1] - F[:, 0] if F.shape[1] == 2 else F

    def subclass_proba(self, X) -> np.ndarray:
        """The coupled subclass probabilities p (objects x subclasses, rows sum to 1; section 3.1's
        probability schema, Wu-Lin-Weng's second method on U). Not class posteriors (the schema takes a max).

        Parameters
        ----------
        X : array-like of shape (m, d)
            Feature vectors of the test objects.

        Returns
        -------
        p : ndarray of shape (m, n_subclasses_)
            Columns in the subclass order of ``subclass_class_``; rows sum to 1.
        """
        f = decision_values(self._standardise(X), self.coef_, self.intercept_)
        return couple(pair_probabilities(f, self._platt), self.pairs_[:, 0], self.pairs_[:, 1], self.n_subclasses_)

    # ---------------------------------------------------------------- the path over K
    def path_predictions(self, X, ks, combinations=("voting",)) -> dict:
        """Predictions of X at every total K in ``ks`` from this one fit: what ``clone(self).set_params(
        n_subclasses=k).fit(X_fit, y).predict(X)`` gives, for each k and each schema in ``combinations``.

        The subclasses at K are the prefix of Greedy-MPE's splits (or the cached per-(class, m_i)
        clusterings), and every pairwise model is kept, so a k above the fitted ``n_subclasses`` extends the
        path (the fitted attributes do not change). Returns a dict of arrays, one row per k:

        ``"n_subclasses"`` (len(ks),) the effective K; ``"mpe"`` (len(ks),) Q of eq. (1) on the fit set;
        ``"predictions"`` {schema: (len(ks), m) labels}; ``"provable"`` (len(ks), m) bool: the object lies in
        Theorem 3.1's provable region (a subclass wins all its duels strictly).

        Parameters
        ----------
        X : array-like of shape (m, d)
            Feature vectors of the test objects.
        ks : sequence of int
            Total numbers of subclasses K, each clipped as ``n_subclasses``.
        combinations : sequence of {"voting", "minmax", "probability"}, default=("voting",)
            The schemas to predict with.

        Returns
        -------
        path : dict
            The arrays above, keyed ``"n_subclasses"``, ``"mpe"``, ``"predictions"`` and ``"provable"``.
        """
        Xs = self._standardise(X)
        N, n = len(self.classes_), len(self._path.y_idx)
        clipped = [int(min(max(k, N), n)) for k in ks]
        if self.subclassing == "greedy_mpe":
            self._path.extend(max(clipped))
        tables = []
        for K in clipped:
            subs = self._path.subclasses(K)
            a, b, models = self._store.table(subs)
            tables.append((subs, a, b, models))
        unique = {id(m): m for *_, models in tables for m in models}
        column = {key: j for j, key in enumerate(unique)}
        pool = list(unique.values())
        f_all = decision_values(Xs, np.array([m.coef for m in pool]), np.array([m.intercept for m in pool]))
        out = {"n_subclasses": np.array([len(t[0]) for t in tables]),
               "mpe": np.array([self._path.mpe_at(K) for K in clipped]),
               "predictions": {c: np.empty((len(ks), len(Xs)), dtype=self.classes_.dtype) for c in combinations},
               "provable": np.empty((len(ks), len(Xs)), dtype=bool)}
        for r, (subs, a, b, models) in enumerate(tables):
            f = f_all[:, [column[id(m)] for m in models]]
            sub_class = np.array([s.cls for s in subs])
            platt = np.array([m.platt for m in models]) if self.pair_probability == "platt" else None
            for c in combinations:
                out["predictions"][c][r] = self.classes_[self._combine(f, a, b, sub_class, c, platt)[0]]
            out["provable"][r] = provable(f, a, b, len(subs))
        return out

    def predict_grid(self, X_fit, y, X_val, grid: list[dict]) -> list:
        """One CV fold at every grid point: one fit per setting of the other parameters, to the largest K
        asked, and every K from its path (``path_predictions``); equal to one refit per point (tested).

        Parameters
        ----------
        X_fit : array-like of shape (n, d)
            Feature vectors of the fold's fit objects.
        y : array-like of shape (n,)
            Their labels.
        X_val : array-like of shape (m, d)
            Feature vectors of the fold's validation objects.
        grid : list of dict
            Parameter settings, each with ``n_subclasses``, e.g. ``[{"n_subclasses": 2}, {"n_subclasses": 4}]``.

        Returns
        -------
        predictions : list of ndarray of shape (m,)
            The labels of X_val at each setting, in the order of ``grid``.
        """
        out: list = [None] * len(grid)
        for outer, points in group_grid(self, grid, self._path_params).items():
            ks = [p["n_subclasses"] for _, p in points]
            model = clone(self).set_params(**dict(outer), n_subclasses=max(ks)).fit(X_fit, y)
            labels = model.path_predictions(X_val, ks, (model.combination,))["predictions"][model.combination]
            for (g, _), row in zip(points, labels):
                out[g] = row
        return out
