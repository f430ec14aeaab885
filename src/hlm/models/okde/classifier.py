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

from hlm.errors import DataError
from hlm.models._base import CachedParamNames, FastPathMixin, as_vectors, fit_classes, standard_scale
from hlm.models.okde.bandwidth import kernel_covariance, pooled_kernel
from hlm.models.okde.compression import ClassifierDistance, bottom_up, local_hellinger, members, merge_tree
from hlm.models.okde.gaussians import log_gaussians_from, logsumexp, moment_match
from hlm.models.okde.hellinger import hellinger
from hlm.models.okde.state import ClassKDE


class _OnlineKDE(ClassifierMixin, FastPathMixin, CachedParamNames, BaseEstimator):
    """Shared machinery of :class:`OKDEClassifier` and :class:`ODKDEClassifier`.

    Parameters
    ----------
    threshold : float
        Compression threshold: D_th (oKDE, Hellinger) or the classifier distance's D_th (odKDE).
    n_init : int
        ``fit``: each class starts from its first ``n_init`` rows as one batch; the others stream one at a time.
    forgetting : float in (0, 1]
        f of the weight update (spec 2); 1 never forgets.
    min_components : int
        Compression never leaves a class with fewer components (unless it has fewer observations).
    compress : bool
        False keeps every observation (a plain KDE with the plug-in bandwidth).
    pilot, curvature, amise_form
        The bandwidth rule's options (spec 3): "maggot" (the toolbox's default) | "silverman"; "diag" | "full";
        "maggot" | "wand_jones".
    bandwidth : None or float
        A fixed H = bandwidth^2 I for every class instead of the plug-in (tests, ablations).
    standardize : bool
        Standardise features with the mean and sd of ``fit``'s X (or the first ``partial_fit`` batch). False
        only centres them (a translation, which changes no density; it keeps the expanded Mahalanobis
        distances of ``gaussians.log_gaussians_from`` accurate): the models' means are in centred coordinates.
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
    def fit(self, X, y):
        """Initialise each class with its first ``n_init`` rows, then add the others one at a time in order."""
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
        for i in np.flatnonzero(~first):
            self._add_one(Xs[i], int(y_idx[i]))
        return self

    def partial_fit(self, X, y, classes=None):
        """First call: every class in it starts from its rows as one batch. Later calls: the rows arrive
        one at a time, in order; a label not seen before starts a new class (unless ``classes``, given at
        the first call, fixed the label set: then it is an error)."""
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
        """log pi_c + log p_KDE(x | c) (eq. 9), one column per class."""
        self._check_fitted()
        X = as_vectors(X, "predict: X")
        self._check_features(X, "predict")
        return self._log_joint(self._scaled(X))

    def predict_proba(self, X) -> np.ndarray:
        """Posteriors p(c | x) by Bayes' rule on the class KDEs (softmax of :meth:`decision_function`)."""
        s = self.decision_function(X)
        return np.exp(s - logsumexp(s, axis=1)[:, None])

    def predict(self, X) -> np.ndarray:
        """argmax_c pi_c p_KDE(x | c); ties go to the first (smallest) class label."""
        scores = self.decision_function(X)
        return self.classes_[np.argmax(scores, axis=1)]

    @property
    def n_components_(self) -> np.ndarray:
        """Components per class of the current model."""
        self._check_fitted()
        return np.array([m.n_components for m in self.models_])


class OKDEClassifier(_OnlineKDE):
    """oKDE per class (Kristan, Leonardis and Skocaj): compression by the Hellinger distance of each merge
    (spec 4), with revitalisation of components whose detailed model they no longer fit (spec 4.4)."""

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
    """odKDE (Kristan and Leonardis): compress class i while its classifier against the other classes stays
    within ``threshold`` (D_th = 0.005) of the uncompressed one (the paper's eqs. 2-7, Alg. 1; spec 5).

    ``cost_points``: where the cost's expectation under p0 is evaluated (eq. 8): "sigma", the unscented
    transform's points of every component of p0 (the paper); "means", each component's mean alone (Maggot's
    cheaper option, 2d times fewer points).
    ``cost_region``: "local" evaluates the cost only at the points where a merge tried moves class i's
    density by more than ``compression.NEGLIGIBLE`` of p0 (elsewhere it moves the posterior by at most 3e-12
    per merge), "global" at all of them (the reference).
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
