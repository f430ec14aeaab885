"""Kernel HLM (paper section 3.2): every training object is a prototype of its class.

Each training object z_i gets u_i = D^2(z_i, nearest other object of its class).
One common Gamma(s, b) is fitted to all u_i (log s - psi(s) = log(ubar/utilde),
b = ubar/s), then s is rounded to s* (section 2.1) for scoring. As s and b are
common to all classes, the posteriors depend on b alone. ``scale_factor`` c
scores with c·b instead (c = 1: the paper's estimator; ``kernel_hlm_cv``
chooses c by CV, docs/beyond-the-paper-spec.md section 2). A class
k scores z by log pi_k + log sum_i (1/n_k) phi~(z; z_i) with the pseudo-density
of eq. 1, and posteriors follow eq. 6, all in the log domain.
"""

from __future__ import annotations

import warnings
from numbers import Real

import numpy as np
from sklearn.base import clone
from sklearn.utils._param_validation import Interval

from hlm.base._classifiers import PosteriorClassifier
from hlm.errors import DataError
from hlm.local_mapping._gamma import ComponentStats, fit_gamma


class KernelHLM(PosteriorClassifier):
    """Kernel HLM classifier on precomputed distances (paper section 3.2; pseudo-density eq. 1, posteriors eq. 6).

    Every training object z_i is a prototype of its class with weight 1/n_k. Each z_i gets
    u_i = D^2(z_i, nearest other object of its class); one common Gamma(s, b) is fitted to all u_i by
    maximum likelihood, log s - psi(s) = log(ubar / utilde), b = ubar / s (the one-component case of
    eq. 3), and s is rounded to s* (section 2.1) for scoring. Class k scores z by
    log pi_k + log sum_i (1/n_k) phi~(z; z_i), and the posteriors follow eq. 6, in the log domain.

    Parameters
    ----------
    shape : float or None, default=None
        Fix the Gamma shape s (= d/2) instead of estimating it (b is then the MLE given s).
    scale : float or None, default=None
        Fix the Gamma scale b (= 2 sigma^2) instead of estimating it.
    round_shape : bool, default=True
        Round the estimated shape to s* = floor(2s + 0.5)/2 (section 2.1).
    squared : bool, default=True
        u = D^2 (the paper's reading, default) or u = D (dissertation ch. 3, D-tilde).
    scale_factor : float, default=1.0
        Score with b = c·b-hat (c = 1: the paper's estimator); multiplies a fixed ``scale`` too.
        ``kernel_hlm_cv`` chooses c by CV (docs/beyond-the-paper-spec.md section 2).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels, sorted.
    class_prior_ : ndarray of shape (n_classes,)
        The class priors pi_k: the empirical class frequencies.
    n_features_in_ : int
        The number of training objects (the columns ``predict`` expects).
    shape_ : float
        The shape s used to score (s* unless ``round_shape=False`` or ``shape`` is fixed).
    scale_ : float
        The scale b used to score (``scale_factor`` times b-hat, or times the fixed ``scale``).
    shape_mle_ : float
        The unrounded estimate s-hat (NaN when the shape is fixed).
    n_zero_u_ : int
        How many nearest-neighbour distances were zero (duplicates) and left out of the estimate.

    See Also
    --------
    MixtureHLM : the same model with clustered prototypes (section 3.1); ``n_components="kernel"``
        makes it this estimator.

    Notes
    -----
    ``predict(D_test_train)`` returns the labels of the largest posterior, shape (n_samples,);
    ``predict_proba(D_test_train)`` the posteriors p_k(z) of eq. 6, shape (n_samples, n_classes), columns
    in ``classes_`` order; ``predict_log_proba`` their logarithms. A class of one object yields no u but
    still scores with the common (s, b) (with a warning).

    Examples
    --------
    Two well separated Gaussian blobs in the plane, Euclidean distances:

    >>> import numpy as np
    >>> from scipy.spatial.distance import cdist
    >>> from hlm.local_mapping import KernelHLM
    >>> rng = np.random.default_rng(0)
    >>> X_train = np.vstack([rng.normal(0.0, 1.0, (20, 2)), rng.normal(6.0, 1.0, (20, 2))])
    >>> y_train = np.repeat(["a", "b"], 20)
    >>> X_test = np.array([[0.0, 0.0], [6.0, 6.0], [1.0, -1.0], [5.0, 7.0]])
    >>> model = KernelHLM().fit(cdist(X_train, X_train), y_train)
    >>> model.predict(cdist(X_test, X_train)).tolist()
    ['a', 'b', 'a', 'b']
    >>> proba = model.predict_proba(cdist(X_test, X_train))
    >>> proba.shape, bool(np.allclose(proba.sum(axis=1), 1.0))
    ((4, 2), True)
    >>> model.shape_, model.n_zero_u_  # s* (a half-integer), no duplicate objects
    (0.5, 0)
    """

    _parameter_constraints = {
        "shape": [Interval(Real, 0, None, closed="neither"), None],
        "scale": [Interval(Real, 0, None, closed="neither"), None],
        "round_shape": ["boolean"],
        "squared": ["boolean"],
        "scale_factor": [Interval(Real, 0, None, closed="neither")],
    }

    _path_params = ("scale_factor",)  # one fit (u, s, b-hat) serves every c (``predict_grid``)

    def __init__(self, shape: float | None = None, scale: float | None = None, round_shape: bool = True,
                 squared: bool = True, scale_factor: float = 1.0):
        self.shape = shape
        self.scale = scale
        self.round_shape = round_shape
        self.squared = squared
        self.scale_factor = scale_factor

    def fit(self, D, y):
        """Fit the common Gamma (s, b) to the nearest same-class distances (section 3.2).

        Parameters
        ----------
        D : array-like of shape (n_samples, n_samples)
            ``D_train_train``: the distances among the training objects (finite, non-negative).
        y : array-like of shape (n_samples,)
            The class labels (at least 2 classes).

        Returns
        -------
        self : KernelHLM
            The fitted estimator.
        """
        self._validate_params()
        D, y_idx = self._check_fit_input(D, y)
        self._y_idx = y_idx
        counts = np.bincount(y_idx, minlength=len(self.classes_))
        self._class_order = np.argsort(y_idx, kind="stable")  # columns grouped by class, for the scores
        self._class_starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
        self._class_counts = counts
        u = nearest_same_class_sq_distance(D if self.squared else np.sqrt(D), y_idx)
        return self._fit_u(u, y_idx)

    def _fit_u(self, u: np.ndarray, y_idx: np.ndarray) -> KernelHLM:
        """(s, b) from each fit object's u (inf: no other object of its class), as ``fit`` (also
        ``hlm.local_mapping._kernel_hlm_folds``, which finds u without the fit matrix)."""
        singletons = [str(c) for c, n in zip(self.classes_, np.bincount(y_idx)) if n == 1]
        if singletons:
            warnings.warn(
                f"class(es) {', '.join(singletons)} have one training object: no u from them; "
                "their prototype still scores with the common (s, b)",
                UserWarning,
                stacklevel=3,
            )
        has_u = np.isfinite(u)
        zero = has_u & (u == 0)
        self.n_zero_u_ = int(zero.sum())
        if self.n_zero_u_:
            warnings.warn(
                f"{self.n_zero_u_} of {int(has_u.sum())} objects have a duplicate (distance 0) in "
                "their class; their u = 0 is left out of the (s, b) estimate",
                UserWarning,
                stacklevel=3,
            )
        u_pos = u[has_u & ~zero]
        if self.shape is not None and self.scale is not None:
            self.shape_mle_, self.shape_ = np.nan, float(self.shape)
            self.scale_ = float(self.scale_factor) * float(self.scale)
            return self
        if u_pos.size == 0:
            raise DataError(
                "KernelHLM.fit: no positive nearest-neighbour distance within any class "
                "(all classes are singletons or all same-class neighbours are duplicates); "
                "cannot estimate the Gamma shape and scale"
            )
        self._fit_gamma(u_pos)
        return self

    def _fit_gamma(self, u_pos: np.ndarray) -> None:
        stats = ComponentStats.from_samples(u_pos, np.zeros(u_pos.size, dtype=np.intp), 1)
        if self.shape is None:
            fit = fit_gamma(stats, rounding=self.round_shape)
            self.shape_mle_, self.shape_, scale = fit.shape_mle, fit.shape, float(fit.scale[0])
        else:  # fixed shape: b is the MLE given s
            self.shape_mle_, self.shape_ = np.nan, float(self.shape)
            scale = float(stats.mean_u[0] / self.shape_)
        self.scale_ = float(self.scale_factor) * (float(self.scale) if self.scale is not None else scale)

    def predict_grid(self, D_fit, y, D_val, grid: list[dict]) -> list:
        """Grid path of one CV fold over ``scale_factor``: one fit and one set of kernel arguments, then
        every c rescales b (equal to one refit per grid point, tested); other grids refit per point.

        Returns
        -------
        list
            One entry per grid point: the labels predicted for ``D_val``, shape (n_val,)
            (the ``FastPathMixin.predict_grid`` contract of ``hlm.base._classifiers``).
        """
        if any(set(p) - {"scale_factor"} for p in grid):
            return super().predict_grid(D_fit, y, D_val, grid)
        factors = [p.get("scale_factor", self.scale_factor) for p in grid]
        for c in set(factors):  # each value validated as set_params would (the same errors)
            if not (isinstance(c, Real) and not isinstance(c, bool) and c > 0):
                clone(self).set_params(scale_factor=c)._validate_params()
        self._validate_params()
        model = clone(self).set_params(scale_factor=1.0).fit(D_fit, y)
        u, mins = model._test_u(D_val)
        distinct = list(dict.fromkeys(factors))
        scores = model._log_scores(u, mins, np.array([float(c) * model.scale_ for c in distinct]))  # as fit sets
        winners = dict(zip(distinct, model.classes_[np.argmax(scores, axis=2)]))  # scale_ at each c
        return [winners[c] for c in factors]

    def _transform_folds(self, wrapper, R, y, folds, groups: dict, facts) -> list | None:
        """``DistanceTransform.predict_folds`` over (``to_distance``, ``scale_factor``): every candidate, fold
        and c at once (``hlm.local_mapping._kernel_hlm_folds``)."""
        from hlm.local_mapping._kernel_hlm_folds import predict_transform_folds  # it imports distance_transform

        return predict_transform_folds(wrapper, R, y, folds, groups, facts)

    def _warm_up(self) -> None:
        """Load the compiled kernel of the CV path over (transform, c) (``hlm.local_mapping._kernel_hlm_folds``)."""
        from hlm.local_mapping._kernel_hlm_folds import warm_up

        warm_up()

    def _test_u(self, D) -> tuple[np.ndarray, np.ndarray]:
        """(D^2 (or D) of the test rows, columns grouped by class; each row's smallest per class)."""
        D = self._check_predict_input(D)
        u = (D**2 if self.squared else D)[:, self._class_order]
        return u, np.minimum.reduceat(u, self._class_starts, axis=1)

    def _log_scores(self, u: np.ndarray, mins: np.ndarray, scales: np.ndarray) -> np.ndarray:
        """log pi_k + log (1/n_k) sum_i phi~(z; z_i) (eq. 1 and 6) from ``_test_u``, one (row x class) slice
        per scale b of ``scales``, in the log domain: each class's sum is taken relative to its largest
        kernel, exp(-min u / b)."""
        b = scales[:, None, None]
        top = mins[None] / b  # the smallest u / b of each class exactly (division is monotone)
        sums = np.empty(top.shape)
        ends = [*self._class_starts[1:], u.shape[1]]
        for k, (start, end) in enumerate(zip(self._class_starts, ends)):
            x = u[None, :, start:end] / b
            np.subtract(top[:, :, k : k + 1], x, out=x)
            sums[:, :, k] = np.exp(x, out=x).sum(axis=2)
        log_weight = np.log(self.class_prior_) - np.log(self._class_counts)
        return np.log(sums) - top + log_weight - self.shape_ * np.log(np.pi * b)

    def predict_log_scores(self, D) -> np.ndarray:
        """log pi_k + log phi(z | M_k) for every row of ``D_test_train`` and class k (eq. 6 numerator).

        Parameters
        ----------
        D : array-like of shape (n_samples, n_train)
            ``D_test_train``: rows the objects to score, columns the training objects in fit order.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            The log class scores, columns in ``classes_`` order; their argmax is ``predict``.
        """
        return self._log_scores(*self._test_u(D), np.array([self.scale_]))[0]


def nearest_same_class_sq_distance(D: np.ndarray, y_idx: np.ndarray) -> np.ndarray:
    """u_i = D^2(z_i, nearest other object of the same class); inf for a class of one."""
    same = y_idx[:, None] == y_idx[None, :]
    np.fill_diagonal(same, False)
    masked = np.where(same, D, np.inf)
    return masked.min(axis=1) ** 2
