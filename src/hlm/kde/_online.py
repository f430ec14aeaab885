"""oKDE and odKDE classifiers on feature vectors (docs/online-kde-spec.md).

Each class keeps an online KDE (``state.ClassKDE``) learnt one observation at a
time: the observation enters as a Dirac, the class's kernel H is re-estimated
(``bandwidth``), and when the class has more than N_thr components its sample
model is compressed (``compression``). oKDE compresses while the KDE stays
within Hellinger distance ``threshold`` of itself (spec 4); odKDE while the
classifier of that class against the rest stays within ``threshold`` of itself
(the paper's eqs. 4-7, Alg. 1). Classify by prior x density (eq. 9).
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import NotFittedError
from sklearn.utils._param_validation import Interval, StrOptions

from hlm.base._classifiers import CachedParamNames, FastPathMixin, as_vectors, fit_classes, standard_scale
from hlm.errors import DataError
from hlm.kde._bandwidth import kernel_covariance, pooled_kernel
from hlm.kde._compression import ClassifierDistance, bottom_up, local_hellinger, members, merge_tree
from hlm.kde._gaussians import log_gaussians_from, logsumexp, moment_match
from hlm.kde._hellinger import hellinger
from hlm.kde._state import ClassKDE


class _OnlineKDE(ClassifierMixin, FastPathMixin, CachedParamNames, BaseEstimator):
    """Shared machinery of :class:`OKDEClassifier` and :class:`ODKDEClassifier`.

    The hyper-parameters, fitted attributes and examples are documented on the two public classes. The
    compression threshold is D_th of the Hellinger distance (oKDE) or of the classifier distance (odKDE).
    """

    _parameter_constraints = {
        "threshold": [None, Interval(Real, 0, None, closed="both")],
        "n_init": [Interval(Integral, 1, None, closed="left")],
        "forgetting": [Interval(Real, 0, 1, closed="right")],
        "min_components": [Interval(Integral, 1, None, closed="left")],
        "compress": ["boolean"],
        "pilot": [StrOptions({"silverman", "maggot"})],
        "curvature": [StrOptions({"diag", "full"})],
        "amise_form": [StrOptions({"maggot", "wand_jones"})],
        "bandwidth": [None, Interval(Real, 0, None, closed="neither")],
        "standardize": ["boolean"],
    }
    _default_threshold = 0.02

    def __init__(self, threshold: float | None = None, n_init: int = 10, forgetting: float = 1.0,
                 min_components: int = 2, compress: bool = True, pilot: str = "maggot",
                 curvature: str = "diag", amise_form: str = "maggot", bandwidth: float | None = None,
                 standardize: bool = True):
        self.threshold = threshold
        self.n_init = n_init
        self.forgetting = forgetting
        self.min_components = min_components
        self.compress = compress
        self.pilot = pilot
        self.curvature = curvature
        self.amise_form = amise_form
        self.bandwidth = bandwidth
        self.standardize = standardize

    # -- fitting --------------------------------------------------------------------------------
    def fit(self, X, y, *, on_update=None):
        """Initialise each class with its first ``n_init`` rows, then add the others one at a time in order.

        ``fit`` equals the initialisation plus a ``partial_fit`` per remaining row, in the given order
        (spec 11, test 12). A new ``fit`` starts from scratch.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Feature vectors, finite.
        y : array-like of shape (n_samples,)
            Class labels (at least two classes).
        on_update : callable or None, default=None
            Called as ``on_update(self)`` after the initialisation and after each row added, e.g. to record
            ``n_components_`` over time (the odKDE protocol does).

        Returns
        -------
        self
            The fitted classifier.
        """
        self._validate_params()
        X = as_vectors(X, "fit: X")
        self.classes_, y_idx = fit_classes(y, X.shape[0], "rows of X")
        self._fixed_classes = True
        self._start(X)
        Xs = self._scaled(X)
        first = np.zeros(len(y_idx), dtype=bool)
        for c in range(len(self.classes_)):
            first[np.flatnonzero(y_idx == c)[: self.n_init]] = True
        self._initialise(Xs[first], y_idx[first])
        if on_update is not None:
            on_update(self)
        for i in np.flatnonzero(~first):
            self._add_one(Xs[i], int(y_idx[i]))
            if on_update is not None:
                on_update(self)
        return self

    def partial_fit(self, X, y, classes=None):
        """Learn from a batch: the first call initialises, later calls stream one row at a time.

        First call: every class in it starts from its rows as one batch (spec 2). Later calls: the rows arrive
        one at a time, in order; a label not seen before starts a new class (unless ``classes``, given at
        the first call, fixed the label set: then it is an error).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Feature vectors, finite; the features' scaling is set by the first call.
        y : array-like of shape (n_samples,)
            Class labels (one class is enough).
        classes : array-like or None, default=None
            At the first call only: every label the stream will bring. None lets new labels join later.

        Returns
        -------
        self
            The updated classifier.
        """
        X = as_vectors(X, "partial_fit: X")
        labels, _ = fit_classes(y, X.shape[0], "rows of X", min_classes=1)  # 1-D, no missing label
        y = np.asarray(y)
        first = not hasattr(self, "models_")
        if first:
            self._validate_params()
            known = np.unique(classes) if classes is not None else labels
            if not np.isin(labels, known).all():
                raise DataError(f"partial_fit: label {str(np.setdiff1d(labels, known)[0])!r} is not among classes")
            self.classes_, self._fixed_classes = known, classes is not None
            self._start(X)
        else:
            self._check_features(X, "partial_fit")
        new = np.setdiff1d(labels, self.classes_)
        if new.size:
            if self._fixed_classes:
                raise DataError(f"partial_fit: label {str(new[0])!r} is not among the classes given at the first "
                                "call")
            self._add_classes(new)
        y_idx = np.searchsorted(self.classes_, y)
        if first:
            self._initialise(self._scaled(X), y_idx)
            return self
        for x, c in zip(self._scaled(X), y_idx):
            self._add_one(x, int(c))
        return self

    def _add_classes(self, labels: np.ndarray) -> None:
        classes = np.concatenate([self.classes_, labels])
        order = np.argsort(classes, kind="stable")
        models = [*self.models_, *(ClassKDE.empty(self.n_features_in_) for _ in labels)]
        self.classes_, self.models_ = classes[order], [models[i] for i in order]

    def _threshold(self) -> float:
        """The compression threshold: ``threshold``, or the method's default (read at every compression)."""
        return self._default_threshold if self.threshold is None else float(self.threshold)

    def _start(self, X: np.ndarray) -> None:
        self.n_features_in_ = X.shape[1]
        self.mean_, self.scale_ = X.mean(axis=0), standard_scale(X, self.standardize)[1]  # centred in any case
        self.models_ = [ClassKDE.empty(X.shape[1]) for _ in self.classes_]

    def _scaled(self, X: np.ndarray) -> np.ndarray:
        return (X - self.mean_) / self.scale_

    def _initialise(self, X: np.ndarray, y_idx: np.ndarray) -> None:
        for c, model in enumerate(self.models_):
            if np.any(y_idx == c):
                model.add(X[y_idx == c], self.forgetting)
        active = [c for c, m in enumerate(self.models_) if m.n_components]
        for c in active:
            self._set_kernel(c)
        for c in active:
            self._maybe_compress(c)

    def _add_one(self, x: np.ndarray, c: int) -> None:
        self.models_[c].add(x[None], self.forgetting)
        self._set_kernel(c)
        self._maybe_compress(c)

    def _set_kernel(self, c: int) -> None:
        model, d = self.models_[c], self.n_features_in_
        if self.bandwidth is not None:
            model.set_kernel(self.bandwidth**2 * np.eye(d))
            return
        fitted = [m for m in self.models_ if m.n_components]
        n = np.array([m.n for m in fitted])
        parts = [m.moments for m in fitted]
        _, _, cov_pool = moment_match(n / n.sum(), np.array([p[1] for p in parts]), np.array([p[2] for p in parts]))
        h_pool = pooled_kernel(cov_pool, float(n.sum()))
        model.set_kernel(kernel_covariance(model.w, model.mu, model.cov, model.n, h_pool, pilot_kind=self.pilot,
                                           curvature=self.curvature, form=self.amise_form, moments=model.moments))

    def _maybe_compress(self, c: int) -> None:
        model = self.models_[c]
        if not self.compress or model.n_components <= max(model.n_thr, self.min_components):
            return
        self._compress(c)
        m = model.n_components
        if m > model.n_thr:
            model.n_thr *= 1.5
        elif m <= 0.5 * model.n_thr:
            model.n_thr *= 0.6

    def _merge(self, c: int, criterion) -> None:
        """Compress class c along its merge tree; ``criterion(tree)`` gives the bottom-up search's accept."""
        model = self.models_[c]
        n = model.n_components
        tree = merge_tree(model.mu)
        nodes = bottom_up(n, tree, criterion(tree), self.min_components)
        clusters = [members(node, n, tree) for node in nodes]
        halves = [None if node < n else tuple(members(k, n, tree) for k in tree[node - n]) for node in nodes]
        model.merge(clusters, halves)

    # -- prediction -----------------------------------------------------------------------------
    def _check_fitted(self) -> None:
        if not hasattr(self, "models_"):
            raise NotFittedError(f"{type(self).__name__} is not fitted yet; call fit first")

    def _check_features(self, X: np.ndarray, what: str) -> None:
        if X.shape[1] != self.n_features_in_:
            raise DataError(f"{what}: X has {X.shape[1]} features; the model was fitted on {self.n_features_in_}")

    def _log_priors(self) -> np.ndarray:
        n = np.array([m.n for m in self.models_])
        with np.errstate(divide="ignore"):
            return np.log(n / n.sum())

    def _log_joint(self, Xs: np.ndarray) -> np.ndarray:
        """log pi_c + log p_KDE(x | c) for every row of Xs (standardised) and class; -inf for an empty class."""
        out = np.full((Xs.shape[0], len(self.models_)), -np.inf)
        fitted = [c for c, m in enumerate(self.models_) if m.n_components]
        if not fitted:
            return out
        terms = log_gaussians_from(Xs, self._stacked_factors(fitted))  # every class's components at once
        bounds = np.cumsum([0] + [self.models_[c].n_components for c in fitted])
        for c, lo, hi in zip(fitted, bounds[:-1], bounds[1:]):
            out[:, c] = logsumexp(terms[:, lo:hi], axis=1)
        return out

    def _stacked_factors(self, classes: list[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The precision factors of the components of ``classes``, each constant carrying log(pi_c w_j)."""
        priors = self._log_priors()
        parts = [self.models_[c].factors for c in classes]
        return (np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]),
                np.concatenate([p[2] + np.log(self.models_[c].w) + priors[c] for p, c in zip(parts, classes)]))

    def decision_function(self, X) -> np.ndarray:
        """log pi_c + log p_KDE(x | c) (eq. 9), one column per class.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Feature vectors.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            The joint log densities, columns in the order of ``classes_``; -inf for a class without data.
        """
        self._check_fitted()
        X = as_vectors(X, "predict: X")
        self._check_features(X, "predict")
        return self._log_joint(self._scaled(X))

    def predict_proba(self, X) -> np.ndarray:
        """Posteriors p(c | x) by Bayes' rule on the class KDEs (softmax of :meth:`decision_function`; spec 6).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Feature vectors.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Rows sum to 1; columns in the order of ``classes_``.
        """
        s = self.decision_function(X)
        return np.exp(s - logsumexp(s, axis=1)[:, None])

    def predict(self, X) -> np.ndarray:
        """argmax_c pi_c p_KDE(x | c) (eq. 9); ties go to the first (smallest) class label.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Feature vectors.

        Returns
        -------
        ndarray of shape (n_samples,)
            The predicted class labels.
        """
        scores = self.decision_function(X)
        return self.classes_[np.argmax(scores, axis=1)]

    @property
    def n_components_(self) -> np.ndarray:
        """Components per class of the current model."""
        self._check_fitted()
        return np.array([m.n_components for m in self.models_])


class OKDEClassifier(_OnlineKDE):
    """oKDE per class, prior x density (Kristan, Leonardis and Skocaj; docs/online-kde-spec.md sections 1-4, 6).

    Each class keeps an online KDE learnt one observation at a time: the observation enters as a Dirac, the
    class's kernel H is re-estimated by the plug-in rule (spec 3), and when the class has more than N_thr
    components (spec 4.1) its sample model is compressed by the Hellinger distance of each merge (spec 4),
    with revitalisation of components whose detailed model they no longer fit (spec 4.4). Classify by
    argmax_c pi_c p_KDE(x | c), pi_c = N_c / sum N (the odKDE paper's eq. 9; spec 6).

    Parameters
    ----------
    threshold : float or None, default=None
        Compression threshold D_th on a merge's local error, the Hellinger distance between the KDE of the
        merged members and that of their moment match (spec 4.2, 4.3); also the revitalisation threshold
        (spec 4.4). None: 0.02 (Maggot's default). 0 merges only exact duplicates.
    n_init : int, default=10
        ``fit``: each class starts from its first ``n_init`` rows as one batch; the others stream one at a time
        (the paper's protocol, spec 9).
    forgetting : float in (0, 1], default=1.0
        f of the weight update (spec 2); 1 never forgets (every observation has weight 1 / N).
    min_components : int, default=2
        Compression never leaves a class with fewer components (unless it has fewer observations).
    compress : bool, default=True
        False keeps every observation (a plain KDE with the plug-in bandwidth).
    pilot : {"maggot", "silverman"}, default="maggot"
        The bandwidth rule's pilot G (spec 3): "maggot", the toolbox's default; "silverman", Silverman's.
    curvature : {"diag", "full"}, default="diag"
        The bandwidth rule's curvature functional R-hat (spec 3): from the diagonals of the whitened
        covariances, or exact.
    amise_form : {"maggot", "wand_jones"}, default="maggot"
        The bandwidth rule's scale h (spec 3): d' in the denominator (the code's form) or in the numerator
        (the AMISE of Wand & Jones).
    bandwidth : float or None, default=None
        A fixed H = bandwidth^2 I for every class instead of the plug-in (tests, ablations).
    standardize : bool, default=True
        Standardise features with the mean and sd of ``fit``'s X (or the first ``partial_fit`` batch). False
        only centres them (a translation, which changes no density; it keeps the expanded Mahalanobis
        distances of ``gaussians.log_gaussians_from`` accurate): the models' means are in centred coordinates.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels, sorted (a label first seen by a later ``partial_fit`` joins them).
    n_features_in_ : int
        Number of features of ``fit``'s X (or of the first ``partial_fit`` batch).
    mean_, scale_ : ndarray of shape (n_features_in_,)
        The models' coordinates are (x - mean_) / scale_: scale_ is the features' sd with ``standardize``
        (a constant feature keeps sd 1), else 1.
    models_ : list of ClassKDE
        Per class, its online KDE (spec 1): the sample model (weights ``w`` (M,), means ``mu`` (M, d),
        covariances ``cov`` (M, d, d) without the kernel; a Dirac has cov 0), the detailed models, the kernel
        covariance ``H`` (d, d), the effective count ``n`` and the compression trigger ``n_thr`` (spec 4.1).
    n_components_ : ndarray of shape (n_classes,)
        Components per class of the current model (a property).

    See Also
    --------
    ODKDEClassifier : The same learner with the discriminative compression cost.
    KDEClassifier : The batch KDE per class.

    Examples
    --------
    Two well separated classes in two dimensions, 20 objects each:

    >>> import numpy as np
    >>> from hlm.kde import OKDEClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal(0, 1, (20, 2)), rng.normal(6, 1, (20, 2))])
    >>> y = np.repeat([0, 1], 20)
    >>> clf = OKDEClassifier().fit(X, y)
    >>> print(clf.predict([[0.0, 0.0], [6.0, 6.0]]))
    [0 1]
    >>> print(clf.predict_proba([[0.0, 0.0], [6.0, 6.0]]).shape)
    (2, 2)
    >>> print(bool((clf.n_components_ < 20).all()))  # each class compressed below its 20 observations
    True
    """

    _default_threshold = 0.02

    def _compress(self, c: int) -> None:
        model = self.models_[c]
        H, th = model.H, self._threshold()
        two = np.flatnonzero(model.det_w[:, 1] > 0)
        split = np.zeros(model.n_components, dtype=bool)
        for j in two:
            w, mu, cov = model.detailed(j)
            split[j] = hellinger((w, mu, cov + H), (np.ones(1), model.mu[j][None], (model.cov[j] + H)[None])) > th
        if split.any():
            model.revitalise(split)
        self._merge(c, lambda tree: local_hellinger(model.w, model.mu, model.cov, H, th, tree))


class ODKDEClassifier(_OnlineKDE):
    """odKDE, the online discriminative KDE (Kristan and Leonardis; docs/online-kde-spec.md sections 1-3, 5, 6).

    The oKDE of :class:`OKDEClassifier`, but class i is compressed while its classifier against the other
    classes stays within ``threshold`` (D_th = 0.005) of the uncompressed one (the paper's eqs. 2-7, Alg. 1;
    spec 5); no revitalisation. Classify by argmax_c pi_c p_KDE(x | c) (eq. 9; spec 6).

    Parameters
    ----------
    threshold : float or None, default=None
        Compression threshold D_th: the classifier distance D-hat (eqs. 4-7) between class i's
        classifier against the rest before and after the compression (spec 5). None: 0.005 (the paper's).
    n_init : int, default=10
        ``fit``: each class starts from its first ``n_init`` rows as one batch; the others stream one at a time
        (the paper's protocol, spec 9).
    forgetting : float in (0, 1], default=1.0
        f of the weight update (spec 2); 1 never forgets (every observation has weight 1 / N).
    min_components : int, default=2
        Compression never leaves a class with fewer components (unless it has fewer observations).
    compress : bool, default=True
        False keeps every observation (a plain KDE with the plug-in bandwidth).
    pilot : {"maggot", "silverman"}, default="maggot"
        The bandwidth rule's pilot G (spec 3): "maggot", the toolbox's default; "silverman", Silverman's.
    curvature : {"diag", "full"}, default="diag"
        The bandwidth rule's curvature functional R-hat (spec 3): from the diagonals of the whitened
        covariances, or exact.
    amise_form : {"maggot", "wand_jones"}, default="maggot"
        The bandwidth rule's scale h (spec 3): d' in the denominator (the code's form) or in the numerator
        (the AMISE of Wand & Jones).
    bandwidth : float or None, default=None
        A fixed H = bandwidth^2 I for every class instead of the plug-in (tests, ablations).
    standardize : bool, default=True
        Standardise features with the mean and sd of ``fit``'s X (or the first ``partial_fit`` batch). False
        only centres them (a translation, which changes no density; it keeps the expanded Mahalanobis
        distances of ``gaussians.log_gaussians_from`` accurate): the models' means are in centred coordinates.
    cost_region : {"local", "global"}, default="local"
        "local" evaluates the cost only at the points where a merge tried moves class i's density by more than
        ``compression.NEGLIGIBLE`` of p0 (elsewhere it moves the posterior by at most 3e-12 per merge);
        "global" at all of them (the reference).
    cost_points : {"sigma", "means"}, default="sigma"
        Where the cost's expectation under p0 is evaluated (eq. 8): "sigma", the unscented transform's points
        of every component of p0 (the paper); "means", each component's mean alone (Maggot's cheaper option,
        2d times fewer points).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels, sorted (a label first seen by a later ``partial_fit`` joins them).
    n_features_in_ : int
        Number of features of ``fit``'s X (or of the first ``partial_fit`` batch).
    mean_, scale_ : ndarray of shape (n_features_in_,)
        The models' coordinates are (x - mean_) / scale_: scale_ is the features' sd with ``standardize``
        (a constant feature keeps sd 1), else 1.
    models_ : list of ClassKDE
        Per class, its online KDE (spec 1): the sample model (weights ``w`` (M,), means ``mu`` (M, d),
        covariances ``cov`` (M, d, d) without the kernel; a Dirac has cov 0), the detailed models, the kernel
        covariance ``H`` (d, d), the effective count ``n`` and the compression trigger ``n_thr`` (spec 4.1).
    n_components_ : ndarray of shape (n_classes,)
        Components per class of the current model (a property).

    See Also
    --------
    OKDEClassifier : The same learner with the Hellinger (reconstructive) compression.
    OnlineKDELearner : The oKDE and odKDE behind the incremental learners' interface.

    Examples
    --------
    On well separated classes the classifier distance lets each class shrink to ``min_components``
    (spec 11, test 9):

    >>> import numpy as np
    >>> from hlm.kde import ODKDEClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal(0, 1, (20, 2)), rng.normal(6, 1, (20, 2))])
    >>> y = np.repeat([0, 1], 20)
    >>> clf = ODKDEClassifier().fit(X, y)
    >>> print(clf.predict([[0.0, 0.0], [6.0, 6.0]]))
    [0 1]
    >>> print(clf.n_components_)
    [2 2]

    Streaming by ``partial_fit``: the first call initialises each class from its rows, later calls add
    the rows one at a time:

    >>> online = ODKDEClassifier().partial_fit(X[::2], y[::2])
    >>> online = online.partial_fit(X[1::2], y[1::2])
    >>> print(online.predict([[0.0, 0.0], [6.0, 6.0]]), online.predict_proba(X).shape)
    [0 1] (40, 2)
    """

    _default_threshold = 0.005
    _parameter_constraints = {**_OnlineKDE._parameter_constraints, "cost_region": [StrOptions({"local", "global"})],
                              "cost_points": [StrOptions({"sigma", "means"})]}

    def __init__(self, threshold: float | None = None, n_init: int = 10, forgetting: float = 1.0,
                 min_components: int = 2, compress: bool = True, pilot: str = "maggot",
                 curvature: str = "diag", amise_form: str = "maggot", bandwidth: float | None = None,
                 standardize: bool = True, cost_region: str = "local", cost_points: str = "sigma"):
        super().__init__(threshold=threshold, n_init=n_init, forgetting=forgetting, min_components=min_components,
                         compress=compress, pilot=pilot, curvature=curvature, amise_form=amise_form,
                         bandwidth=bandwidth, standardize=standardize)
        self.cost_points = cost_points
        self.cost_region = cost_region

    def _compress(self, c: int) -> None:
        model = self.models_[c]
        priors = self._log_priors()
        parts = [(k, m.quadrature(self.cost_points)) for k, m in enumerate(self.models_) if m.n_components]
        X, F = np.concatenate([q.points for _, q in parts]), np.concatenate([q.features for _, q in parts])
        weights = np.concatenate([(np.exp(priors[k]) * self.models_[k].w[:, None] * q.weights[None, :]).ravel()
                                  for k, q in parts])
        log_terms = log_gaussians_from(X, model.factors, F) + np.log(model.w)
        others = [k for k, m in enumerate(self.models_) if m.n_components and k != c]
        stacked = self._stacked_factors(others) if others else None

        def log_neg_at(idx: np.ndarray) -> np.ndarray:
            if stacked is None:
                return np.full(len(idx), -np.inf)
            return logsumexp(log_gaussians_from(X[idx], stacked, F[idx]), axis=1)

        # the term of the component each point belongs to: a lower bound of p0, and of the negatives off class c
        floor = np.concatenate([priors[k] + q.log_own for k, q in parts])
        neg_floor = np.concatenate([np.full(len(q.log_own), -np.inf) if k == c else priors[k] + q.log_own
                                    for k, q in parts])
        cost = ClassifierDistance(X, weights, log_terms, priors[c], log_neg_at, model.w, model.mu, model.cov,
                                  model.H, self._threshold(), log_floor=floor if self.cost_region == "local" else None,
                                  log_neg_floor=neg_floor)
        self._merge(c, lambda tree: cost.accept)
