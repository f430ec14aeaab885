"""Regularized local SDA (Cazzanti & Gupta, "Regularizing the local similarity discriminant analysis
classifier", as reviewed in Sadowski, Cazzanti & Gupta, "Bayesian and Pairwise Local Similarity
Discriminant Analysis", section II) -- docs/local-sda-family-spec.md section 6.

Model [V: section II]: local SDA (spec §6.5 of docs/compared-methods-spec.md) whose marginal pmfs
are each a convex combination with the average of the local pmfs of the training set,

    P~(psi(x, mu_h) | g) = (1 - zeta) P(psi(x, mu_h) | g) + zeta P_ave(s_h | g),   zeta in [0, 1],

P being local SDA's exponential pmf gamma_gh exp(lambda_gh w) on its discrete support Omega, and the
joint the product over h; decision by eq. (1) with 0-1 cost. The paper's grid: zeta in
{1e-6, 1e-3, 0.01, 0.1, 0.5, 0.9}, cross-validated in nested loops with k [V: section V.A].

Details [P: spec §6]:
- P_ave(. | g, h): for every fit object, its leave-one-out neighbourhood (its k most similar other fit
  objects, ranked by (-s_i, i); k capped at n - 1), its local SDA model (centroids, c_gh, lambda_gh)
  and, for each ordered pair (g, h) of classes present in it, the pmf on Omega; P_ave(. | g, h) is
  their mean over the objects whose neighbourhood holds g and h (one of a single class gives its
  (g, g) pmf). A boundary constraint gives the point mass at that end of Omega; a capped lambda its
  capped exponential (a pmf, nearly a point mass). A pair never present together in any
  neighbourhood gets the uniform pmf on Omega. P_ave is estimated on the fit set, per k.
- A test statistic psi(x, mu_h) is not, in general, a point of Omega (a new similarity): P_ave is read
  at the nearest point of Omega (the lower one at equal distance; beyond the ends, the end), while the
  local pmf is evaluated as local SDA evaluates it, gamma e^{lambda psi(x, mu_h)} at the value itself;
  so zeta = 0 is local SDA exactly. A degenerate local pmf is local SDA's point mass (``exact``):
  1 where psi(x, mu_h) lies within 1e-9 r of c_gh, else 0, and a capped lambda is used as it is.
- zeta = 0 is local SDA, its fallback (the ``degenerate`` option) included. For zeta > 0 a degenerate
  constraint is no longer fatal; the row falls back to the ``degenerate`` rule (centroid, knn; exact:
  centroid) only if every class scores -inf (P_ave and the local pmf both 0 somewhere).
- Only the discrete support (spec §2): P_ave is an average of pmfs on Omega.
- The joint form (``form="joint"``) [V: section II, "one could regularize the joint class-conditional pmfs with
  the quantity prod_h P_ave(s_h | g)"]: P~(T(x) | g) = (1 - zeta) prod_h P(psi(x, mu_h) | g) + zeta prod_h
  P_ave(s_h | g), with the same P, P_ave and nearest point of Omega as the marginal form; zeta = 0 and zeta = 1
  are the same classifiers in both forms.
- ``predict_proba``: the posteriors proportional to P(g) prod_h P~(psi(x, mu_h) | g) (the joint form:
  P(g) P~(T(x) | g)) over the classes present in N; 0 for the others; a row of one class or that falls
  back: 1 for its class.
- The leave-one-out models' lambdas are local SDA's roots (same statuses, Brent to the same
  tolerance), but Brent starts from the bracket of a table of m(lambda) at lambda r = 0, +-2^(j/8)
  (1/8 ... 940) and the caps +-1e3, instead of doubling from [-1, 1] / r: P_ave needs ~10x the
  constraints of the test rows, and this takes ~5 evaluations of m per root instead of ~15. On the
  ``max_support`` grid (equally spaced) m and z are evaluated in closed form (a truncated geometric
  distribution, O(1) instead of O(r); equal to the sums to rounding). The test rows' models are local
  SDA's (its bracket and Brent), with m and log Z in that closed form on an equally spaced support
  when zeta > 0; with zeta = 0 they are local SDA's own, so zeta = 0 is local SDA bit for bit. Any
  support exactly equal to ``np.linspace`` of its ends takes the closed form, the max_support grid or
  distinct values that happen to be equally spaced.
- Default zeta = 0.1, a middle point of the paper's grid (the pipeline cross-validates it).

Implementation: compiled kernels in ``_local_sda_kernels.regularized``: ``_loo_pmfs_nb`` (the leave-one-out
models of P_ave, kept as their components lambda and z per object and pair, so P_ave is evaluated only where
a test row reads it, ``_log_pave_at_nb``, in the log domain), ``_regularized_predict_rows`` (the rows, the
logs of the mixture as numpy's ``logaddexp``). A memo per support of the roots already found (``_ROOTS``)
serves the folds of a CV, which mostly share their support; a root depends on c and the support only, so
it changes no result. The row-by-row reference is tests/oracles/local_sda_regularized_reference.py. The CV path
(``predict_grid``) ranks the fit set (leave-one-out) and the validation rows and builds the support
once per fold, computes P_ave and each row's local model once per k, and scores every zeta from them.
"""

from __future__ import annotations

from collections import OrderedDict
from numbers import Integral, Real

import numpy as np
from numba import types
from numba.typed import Dict
from sklearn.base import clone
from sklearn.utils._param_validation import Interval, StrOptions

from hlm.base._classifiers import CompiledKernels, SimilarityClassifier
from hlm.base._grid import group_grid
from hlm.local_sda._kernels.core import _DEGENERATE_CODE, UNIFORM, _raise_brent_error
from hlm.local_sda._kernels.regularized import (
    LAMBDA_TABLE_T,
    _loo_pmfs_nb,
    _mean_table_nb,
    _pave_nb,
    _regularized_predict_rows,
)
from hlm.local_sda._local_sda import leave_one_out_order, make_support

#: per support (the bytes of its points): its lambda table (LAMBDA_TABLE_T / r, m there) and the memo
#: c -> (lambda, status, z) of the leave-one-out models; the folds of a CV mostly share a support, and a
#: root is a function of c and the support only, so the memo saves time and changes no result
#: (FastPathMixin's process rules). The most recently used ``_ROOTS_KEPT`` supports are kept.
_ROOTS: OrderedDict[bytes, tuple] = OrderedDict()
_ROOTS_KEPT = 16
_ROOT_TYPE = types.Tuple((types.float64, types.int64, types.float64))


def _roots(omega: np.ndarray) -> tuple[np.ndarray, np.ndarray, int, Dict]:
    """(table lambdas, m at them, how Brent evaluates m, memo of roots) of a discrete support, made once per
    support. m is evaluated in closed form (``UNIFORM``) on the ``max_support`` grid, ``np.linspace``'s
    equally spaced points, and summed point by point otherwise (1); the table is summed in both cases, so
    the boundary and cap statuses are local SDA's."""
    key = omega.tobytes()
    found = _ROOTS.get(key)
    if found is None:
        r = float(omega[-1] - omega[0])
        t_lam = LAMBDA_TABLE_T / r if r > 0 else LAMBDA_TABLE_T.copy()
        uniform = omega.size >= 2 and np.array_equal(omega, np.linspace(omega[0], omega[-1], omega.size))
        found = (t_lam, _mean_table_nb(t_lam, omega, np.empty(omega.size)), UNIFORM if uniform else 1,
                 Dict.empty(types.float64, _ROOT_TYPE))
        _ROOTS[key] = found
        while len(_ROOTS) > _ROOTS_KEPT:
            _ROOTS.popitem(last=False)
    _ROOTS.move_to_end(key)
    return found


def loo_pmfs(S: np.ndarray, y_idx: np.ndarray, n_classes: int, omega: np.ndarray, order: np.ndarray,
             k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The fit objects' leave-one-out local pmfs behind P_ave [P: spec §6], as components: lambda and z
    per object and pair (g, h) (n x n_classes x n_classes; NaN where the pair is absent; lambda = -/+inf:
    the point mass at that end of Omega), and the number of objects per pair. The pmf of a solved
    constraint is exp(lambda (omega - top)) / z, top the end of Omega where lambda omega is largest."""
    omega = np.ascontiguousarray(omega, dtype=np.float64)
    t_lam, t_m, mode, memo = _roots(omega)
    lam, z, count, err, err_row, err_x = _loo_pmfs_nb(
        np.ascontiguousarray(S, dtype=np.float64), order, min(int(k), order.shape[1]),
        np.ascontiguousarray(y_idx, dtype=np.int64), int(n_classes), omega, t_lam, t_m, mode, memo,
        np.empty(omega.size),
    )
    _raise_brent_error(err, err_x, err_row)
    return lam, z, count


class RegularizedLocalSDA(CompiledKernels, SimilarityClassifier):
    """Regularized local similarity discriminant analysis on precomputed similarities (local-sda-family spec §6).

    Cazzanti & Gupta, "Regularizing the local similarity discriminant analysis classifier", as reviewed
    in Sadowski, Cazzanti & Gupta, section II: local SDA (``LocalSDA``, compared-methods spec §6.5)
    whose marginal pmfs are each a convex combination with the average of the local pmfs of the
    training set,

        P~(psi(x, mu_h) | g) = (1 - zeta) P(psi(x, mu_h) | g) + zeta P_ave(s_h | g),   zeta in [0, 1],

    P being local SDA's exponential pmf on its discrete support Omega; the joint is the product over h
    and the decision is eq. (1) with 0-1 cost. The joint form regularizes the product instead,
    P~(T(x) | g) = (1 - zeta) prod_h P(psi(x, mu_h) | g) + zeta prod_h P_ave(s_h | g) (section II).
    P_ave(. | g, h) is the mean of the pmfs of the fit
    objects' leave-one-out local SDA models (estimated on the fit set, per k) [P]. A degenerate local
    pmf is no longer fatal for zeta > 0: a row falls back only if every class scores -inf.

    Parameters
    ----------
    n_neighbors : int, default=8
        k, of the test neighbourhoods and of the fit objects' leave-one-out ones (capped at n and
        n - 1); neighbours ranked by (-s_i, i).
    zeta : float in [0, 1], default=0.1
        The weight of P_ave in the convex combination; 0 is local SDA, 1 classifies by P_ave alone.
        The default is a middle point of the paper's grid {1e-6, 1e-3, 0.01, 0.1, 0.5, 0.9}
        (section V.A).
    max_support : int, default=1000
        Omega is local SDA's discrete support: the unique fit-set similarities, or this many equally
        spaced points when there are more [P].
    prior : {"local", "global"}, default="local"
        P(g) = k_g / k (default) or the fit-set prior pi_g [P].
    degenerate : {"centroid", "knn", "exact"}, default="centroid"
        Local SDA's fallback rule, used for zeta = 0 as local SDA uses it, and for zeta > 0 when every
        class scores -inf ("exact": the centroid rule) [P].
    form : {"marginal", "joint"}, default="marginal"
        What the convex combination regularizes: each marginal pmf (the form above), or the joint
        class-conditional pmf, the product over h (the other form of section II).

    Attributes
    ----------
    support_ : Support
        Omega, from the fit set: ``lo`` and ``hi`` (min S and max S) and ``omega``, its sorted points.
    n_degenerate_ : int
        Rows of the last ``predict`` (or ``predict_proba``) call that used the fallback rule.
    classes_ : ndarray of shape (n_classes,)
        The class labels of the fit set, sorted.
    class_prior_ : ndarray of shape (n_classes,)
        The fit-set prior pi_g = n_g / n: P(g) with ``prior="global"``; it breaks ties of the decision.
    n_features_in_ : int
        The number of fitted (training) objects: the columns ``predict`` expects.

    See Also
    --------
    LocalSDA : The unregularized model (zeta = 0).
    BayesianLocalSDA : Regularization by a Dirichlet prior instead (Sadowski et al., section III).

    Examples
    --------
    Two well separated Gaussian blobs, similarities exp(-d**2): the similarities across the blobs are
    within 1e-9 r of min Omega (r = 1 here), a degenerate constraint, so with zeta = 0 (local SDA) both
    rows fall back to the local nearest centroid, and with zeta = 0.1 neither does:

    >>> import numpy as np
    >>> from scipy.spatial.distance import cdist
    >>> from hlm.local_sda import RegularizedLocalSDA
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal(0, 1, (6, 2)), rng.normal(5, 1, (6, 2))])
    >>> y = np.repeat([0, 1], 6)
    >>> X_test = np.array([[0.0, 0.0], [5.0, 5.0]])
    >>> S, S_test = np.exp(-cdist(X, X) ** 2), np.exp(-cdist(X_test, X) ** 2)
    >>> model = RegularizedLocalSDA(n_neighbors=8, zeta=0.0).fit(S, y)
    >>> print(model.predict(S_test), model.n_degenerate_)
    [0 1] 2
    >>> model = RegularizedLocalSDA(n_neighbors=8, zeta=0.1).fit(S, y)
    >>> print(model.predict(S_test), model.n_degenerate_)
    [0 1] 0

    P_ave(. | g, h), one pmf on Omega per ordered class pair:

    >>> P_ave = model.average_pmfs()
    >>> print(P_ave.shape[:2], P_ave.shape[2] == model.support_.omega.size)
    (2, 2) True
    >>> print(P_ave.sum(axis=2).round(6))
    [[1. 1.]
     [1. 1.]]

    The joint form mixes the products over h instead:

    >>> joint = RegularizedLocalSDA(n_neighbors=8, zeta=0.1, form="joint").fit(S, y)
    >>> print(joint.predict(S_test), joint.n_degenerate_)
    [0 1] 0
    """

    _parameter_constraints = {
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
        "zeta": [Interval(Real, 0, 1, closed="both")],
        "max_support": [Interval(Integral, 2, None, closed="left")],
        "prior": [StrOptions({"local", "global"})],
        "degenerate": [StrOptions({"centroid", "knn", "exact"})],
        "form": [StrOptions({"marginal", "joint"})],
    }

    _path_params = ("zeta",)  # one fit (P_ave) per k serves every zeta; one ranking serves every k

    def __init__(
        self,
        n_neighbors: int = 8,
        zeta: float = 0.1,
        max_support: int = 1000,
        prior: str = "local",
        degenerate: str = "centroid",
        form: str = "marginal",
    ):
        self.n_neighbors = n_neighbors
        self.zeta = zeta
        self.max_support = max_support
        self.prior = prior
        self.degenerate = degenerate
        self.form = form

    def fit(self, S, y):
        """Omega and P_ave from the fit set (spec §1: estimated on the fit set only).

        Parameters
        ----------
        S : array-like of shape (n_samples, n_samples)
            ``S_train_train``: the similarities among the training objects (finite; may be negative).
        y : array-like of shape (n_samples,)
            The training labels, at least 2 classes.

        Returns
        -------
        self : RegularizedLocalSDA
            The fitted estimator (``support_`` set).
        """
        return self._fit(S, y)

    def _fit(self, S, y, shared: dict | None = None):
        """``fit``; ``shared`` (the CV path's, per fold) keeps what does not depend on k across its calls:
        the leave-one-out ranking of S and the support per ``max_support``."""
        self._validate_params()
        S, self._y_idx = self._check_fit_input(S, y)
        self._S = S
        shared = {} if shared is None else shared
        if (support := shared.get(("support", int(self.max_support)))) is None:
            support = shared[("support", int(self.max_support))] = make_support(S, "discrete", int(self.max_support))
        if (order := shared.get("order")) is None:
            order = shared["order"] = leave_one_out_order(S)
        self.support_ = support
        self._loo = loo_pmfs(S, self._y_idx, len(self.classes_), support.omega, order, int(self.n_neighbors))
        return self

    def average_pmfs(self) -> np.ndarray:
        """P_ave(omega | g, h) on Omega, [g, h, j] for class indices g, h and the j-th point of Omega
        (uniform for a pair no leave-one-out neighbourhood holds). Each [g, h] is a pmf.

        Returns
        -------
        P_ave : ndarray of shape (n_classes, n_classes, r)
            The pmfs [g, h] on the r = ``support_.omega.size`` points of Omega; class indices in the order of
            ``classes_``.
        """
        self._check_fitted()
        return _pave_nb(*self._loo, np.ascontiguousarray(self.support_.omega, dtype=np.float64))

    def _neighbours(self, S_te: np.ndarray) -> np.ndarray:
        """Indices of the k most similar fit objects per row, by (-s_i, i) (spec §5)."""
        k = min(int(self.n_neighbors), S_te.shape[1])
        return np.argsort(-S_te, axis=1, kind="stable")[:, :k]

    def predict(self, S_te):
        """The class of the largest regularized score (eq. (1) with 0-1 cost) per row, or of the fallback
        rule where every class scores -inf (zeta = 0: where a constraint is degenerate); sets
        ``n_degenerate_``.

        Parameters
        ----------
        S_te : array-like of shape (n_queries, n_samples)
            ``S_test_train``: similarities of the objects to classify (rows) to the training objects (columns).

        Returns
        -------
        y_pred : ndarray of shape (n_queries,)
            The predicted labels, of ``classes_``; classes absent from a row's neighbourhood never win.
        """
        S_te = self._check_predict_input(S_te)
        out, fell_back, _ = self._predict_all(S_te, self._neighbours(S_te), [float(self.zeta)])
        self.n_degenerate_ = int(fell_back.sum())
        return self.classes_[out[0]]

    def predict_log_proba(self, S_te):
        """log P(g | x) over ``classes_`` (-inf for the classes absent from N; a row that falls back
        or has one class in N: 0 for the class its rule chose) [P].

        Parameters
        ----------
        S_te : array-like of shape (n_queries, n_samples)
            ``S_test_train``: similarities of the objects to classify (rows) to the training objects (columns).

        Returns
        -------
        log_proba : ndarray of shape (n_queries, n_classes)
            Columns in the order of ``classes_``.
        """
        S_te = self._check_predict_input(S_te)
        _, fell_back, log_post = self._predict_all(S_te, self._neighbours(S_te), [float(self.zeta)])
        self.n_degenerate_ = int(fell_back.sum())
        return log_post[0]

    def predict_proba(self, S_te):
        """Class posteriors over ``classes_`` (the regularized joint of each class times its prior,
        normalised); rows sum to 1.

        Parameters
        ----------
        S_te : array-like of shape (n_queries, n_samples)
            ``S_test_train``: similarities of the objects to classify (rows) to the training objects (columns).

        Returns
        -------
        proba : ndarray of shape (n_queries, n_classes)
            Columns in the order of ``classes_``; 0 for the classes absent from a row's neighbourhood.
        """
        return np.exp(self.predict_log_proba(S_te))

    def predict_grid(self, S_fit, y, S_val, grid: list[dict]) -> list:
        """Grid path of one CV fold: the leave-one-out ranking of the fit set and the ranking of the
        validation rows once, P_ave and the rows' local models once per k, every zeta from them
        (equal to refitting per grid point, tested).

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
        groups = group_grid(self, grid, self._path_params)  # validates every grid point
        shared: dict = {}
        ranking = None
        for outer, points in groups.items():
            model = clone(self).set_params(**dict(outer))._fit(S_fit, y, shared)
            S = model._check_predict_input(S_val)
            if ranking is None:
                ranking = np.argsort(-S, axis=1, kind="stable")
            nbs = ranking[:, : min(int(model.n_neighbors), S.shape[1])]
            labels, _, _ = model._predict_all(S, nbs, [float(p["zeta"]) for _, p in points])
            for (g, _), idx in zip(points, labels):
                out[g] = model.classes_[idx]
        return out

    def _predict_all(self, S_te: np.ndarray, nbs: np.ndarray, zetas) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(class index, fallback used, log posteriors), each with one entry per zeta first, from
        ``_regularized_predict_rows``. zeta = 0 is local SDA bit for bit (m and Z summed); the other zetas
        use the support's own evaluation (closed form on an equally spaced one), in a pass of their own,
        so that a zeta's result does not depend on the other zetas of the call."""
        zetas = np.asarray(zetas, dtype=np.float64)
        omega = np.ascontiguousarray(self.support_.omega, dtype=np.float64)
        support_mode = _roots(omega)[2]
        passes = [(zetas == 0, 1), (zetas > 0, support_mode)]
        if support_mode == 1 or not (zetas == 0).any() or not (zetas > 0).any():
            passes = [(np.ones(zetas.size, dtype=bool), support_mode if (zetas > 0).all() else 1)]
        m, n_classes = S_te.shape[0], len(self.classes_)
        out = np.empty((zetas.size, m), dtype=np.intp)
        fell_back = np.empty((zetas.size, m), dtype=bool)
        log_post = np.empty((zetas.size, m, n_classes))
        for which, mode in passes:
            out[which], fell_back[which], log_post[which] = self._predict_rows(S_te, nbs, zetas[which], mode)
        return out, fell_back, log_post

    def _predict_rows(self, S_te: np.ndarray, nbs: np.ndarray, zetas: np.ndarray, support_mode: int):
        """``_regularized_predict_rows`` for the zetas given, m and Z evaluated by ``support_mode``."""
        log_prior = np.log(self.class_prior_) if self.prior == "global" else np.empty(0)
        out, fell_back, log_post, err, err_row, err_x = _regularized_predict_rows(
            np.ascontiguousarray(self._S, dtype=np.float64),
            np.ascontiguousarray(S_te, dtype=np.float64),
            np.ascontiguousarray(nbs, dtype=np.int64),
            np.ascontiguousarray(self._y_idx, dtype=np.int64),
            len(self.classes_), np.ascontiguousarray(self.support_.omega, dtype=np.float64), support_mode,
            np.ascontiguousarray(log_prior, dtype=np.float64), self.prior == "global",
            _DEGENERATE_CODE[self.degenerate], np.ascontiguousarray(self.class_prior_, dtype=np.float64),
            *self._loo, zetas, self.form == "joint",
        )
        _raise_brent_error(err, err_x, err_row)
        return out.astype(np.intp), fell_back, log_post
