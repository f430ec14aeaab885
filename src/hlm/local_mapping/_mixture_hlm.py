"""Mixture HLM (paper section 3.1): per-class clustering, then one HLM component per cluster.

For each class k the training objects are clustered into M_k = min(M, n_k)
clusters by a distance-based method (VSH, generalized k-means or Ward,
section 2.2); each cluster's prototype eta_j becomes a component with prior
omega_j = |cluster| / n_k. The squared distances u of the members to their
prototype (prototypes themselves left out) give, through eq. 3 (or eq. 4
with sample weights), a common shape s (or one per class) and a scale b_j
per component, shrunk toward the common value (section 2.1):

    b_j = lam ubar_j / s + (1 - lam) ubar / s,   lam = |I_j| / (|I_j| + 1).

Clusters with fewer than ``min_cluster_size`` objects (prototype included;
section 5.1 uses 3) are left out of the estimate; they still score, with
lam = 0, i.e. the common scale. A class with fewer than ``min_cluster_size``
objects is too small to cluster: every object becomes a prototype (the
Kernel HLM form), and ``fallback_classes_`` records it.

A fitted model needs only the distances from a test object to its
prototypes: :meth:`MixtureHLM.predict_from_prototypes` and the JSON export
(:meth:`MixtureHLM.to_dict` / :class:`HLMModel`).
"""

from __future__ import annotations

import json
import warnings
from dataclasses import asdict, dataclass
from numbers import Integral

import numpy as np
from scipy.special import logsumexp
from sklearn.base import clone
from sklearn.utils._param_validation import Interval, StrOptions

from hlm.base._classifiers import PosteriorClassifier
from hlm.base._grid import group_grid
from hlm.errors import DataError, HLMError
from hlm.local_mapping._gamma import ComponentStats, fit_gamma, log_pseudo_density


@dataclass
class HLMModel:
    """A fitted HLM mixture: everything prediction needs, and nothing else (paper eqs. 5, 6).

    The mixture phi(z | M_k) = sum_{j in F_k} omega_j phi~_j(z) of each class (eq. 5, with the
    pseudo-density of eq. 1) and the class priors pi_k, from which the posteriors follow (eq. 6).
    It scores from the distances to the prototypes alone, and serialises to a few numbers in JSON
    (:meth:`to_json`, :meth:`from_json`), never a pickle. Made by :meth:`MixtureHLM.model` (also
    by the incremental learners' ``model()``).

    ``prototype_index`` are positions in the training set (the pipeline adds
    object ids); ``component_class`` the class index of each component.

    Parameters
    ----------
    classes : list of str
        The class labels (as strings), in score-column order.
    class_prior : list of float
        The class priors pi_k, one per class.
    prototype_index : list of int
        The training position of each component's prototype eta_j (the columns ``log_scores`` expects, in
        this order).
    component_class : list of int
        The class index (into ``classes``) of each component.
    weight : list of float
        The component priors omega_j, within their class (each class's weights sum to 1).
    scale : list of float
        The scales b_j, one per component.
    shape : float or list of float
        The shape s used to score (s*): one value, or one per component (``shape="per_class"``).
    squared : bool, default=True
        u = D^2 (the paper's reading) or u = D (dissertation ch. 3).

    Attributes
    ----------
    classes, class_prior, prototype_index, component_class, weight, scale, shape, squared
        The parameters, stored as given (a dataclass).

    Examples
    --------
    The model of a fitted :class:`MixtureHLM`, written as JSON and read back, classifies new objects from
    their distances to the prototypes only:

    >>> import numpy as np
    >>> from scipy.spatial.distance import cdist
    >>> from hlm.local_mapping import HLMModel, MixtureHLM
    >>> rng = np.random.default_rng(0)
    >>> X_train = np.vstack([rng.normal(0.0, 1.0, (20, 2)), rng.normal(6.0, 1.0, (20, 2))])
    >>> y_train = np.repeat(["a", "b"], 20)
    >>> mix = MixtureHLM(n_components=2, n_init=5).fit(cdist(X_train, X_train), y_train)
    >>> text = mix.model().to_json()
    >>> model = HLMModel.from_json(text)
    >>> model == mix.model(), model.classes, model.component_class, model.shape
    (True, ['a', 'b'], [0, 0, 1, 1], 1.0)
    >>> X_test = np.array([[0.0, 0.0], [6.0, 6.0], [1.0, -1.0], [5.0, 7.0]])
    >>> D_test_proto = cdist(X_test, X_train[model.prototype_index])  # 4 x 4: no other training object
    >>> scores = model.log_scores(D_test_proto)
    >>> scores.shape, [model.classes[k] for k in scores.argmax(axis=1)]
    ((4, 2), ['a', 'b', 'a', 'b'])
    """

    classes: list
    class_prior: list
    prototype_index: list
    component_class: list
    weight: list  # omega_j, within its class
    scale: list  # b_j
    shape: float | list  # s used to score (s*): one value, or one per component (shape="per_class")
    squared: bool = True  # u = D^2 (paper) or D (dissertation, ch. 3)

    def log_scores(self, D_proto) -> np.ndarray:
        """log pi_k + log phi(z | M_k) (eqs. 5, 6) from distances to the prototypes (columns in order).

        Parameters
        ----------
        D_proto : array-like of shape (n_samples, n_prototypes)
            The distances from each object to score (rows) to the prototypes, in ``prototype_index`` order.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            The log class scores (the numerator of eq. 6), columns in ``classes`` order.

        Raises
        ------
        hlm.errors.DataError
            If ``D_proto`` is not 2-D with one column per prototype.
        """
        D = np.asarray(D_proto, dtype=np.float64)
        if D.ndim != 2 or D.shape[1] != len(self.prototype_index):
            raise DataError(
                f"predict: expected distances to the {len(self.prototype_index)} prototypes, got shape {D.shape}"
            )
        u = D**2 if self.squared else D
        comp = np.asarray(self.component_class)
        shape = np.asarray(self.shape, dtype=np.float64)
        terms = np.log(np.asarray(self.weight))[None, :] + log_pseudo_density(u, shape, np.asarray(self.scale))
        scores = np.full((D.shape[0], len(self.classes)), -np.inf)
        for k in range(len(self.classes)):
            cols = comp == k
            if cols.any():
                scores[:, k] = logsumexp(terms[:, cols], axis=1)
        return scores + np.log(np.asarray(self.class_prior))[None, :]

    def to_json(self) -> str:
        """The model as a JSON object (one key per field).

        Returns
        -------
        str
            The JSON text; :meth:`from_json` reads it back.
        """
        return json.dumps(asdict(self), default=_json_default)

    @classmethod
    def from_json(cls, text: str) -> HLMModel:
        """Read a model written by :meth:`to_json`.

        Parameters
        ----------
        text : str
            The JSON text of :meth:`to_json`.

        Returns
        -------
        HLMModel
            The model, equal to the one written.
        """
        return cls(**json.loads(text))


def _json_default(value):
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


class MixtureHLM(PosteriorClassifier):
    """Mixture HLM classifier on precomputed distances (paper section 3.1; eqs. 3-6, shrinkage of section 2.1).

    Each class k is clustered into M_k = min(M, n_k) clusters by a distance-based method (VSH,
    generalized k-means or Ward, section 2.2); each cluster's prototype eta_j becomes a component with
    prior omega_j = |cluster| / n_k. The members' squared distances u to their prototype (prototypes
    left out) give, by eq. 3 (eq. 4 with ``sample_weight``), a common shape s (or one per class) and a
    scale b_j per component, shrunk toward the common value (section 2.1). A class scores z by
    log pi_k + log phi(z | M_k) (eq. 5) and the posteriors follow eq. 6.

    Parameters
    ----------
    n_components : int or "kernel", default=4
        Components per class M (capped at each class's size). "kernel" makes
        the estimator Kernel HLM (section 3.2), so that HLM(kernel-vsh) is a
        CV over ``[1, ..., 16, "kernel"]``.
    clustering : {"vsh", "gknn", "ward", "ward_d"}, default="vsh"
        VSH, generalized k-means (k-center start) or Ward (section 2.2).
        "ward" is SciPy's Ward (Lance-Williams on squared distances, R's ward.D2);
        "ward_d" applies the update to the distances themselves (R's ward.D).
    n_init : int, default=20
        Random restarts of VSH (section 5.1: 20).
    shape : {"common", "per_class"}, default="common"
        One s for all classes (eq. 3 over every cluster) or one per class.
    min_cluster_size : int, default=3
        Clusters smaller than this (prototype included) are left out of the estimate (section 5.1: 3);
        they still score, with the common scale. A class smaller than this is not clustered: every
        object becomes a prototype (the Kernel HLM form).
    squared : bool, default=True
        u = D^2 (the paper's reading, default) or u = D (dissertation ch. 3, D-tilde).
    round_shape : bool, default=True
        Score with s* = floor(2 s + 0.5) / 2 (section 2.1).
    random_state : int, default=0
        Seed of the clustering restarts (class k uses ``random_state + k``).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels, sorted.
    class_prior_ : ndarray of shape (n_classes,)
        The class priors pi_k: the empirical class frequencies.
    n_features_in_ : int
        The number of training objects (the columns ``predict`` expects).
    prototypes_ : ndarray of shape (n_prototypes_,)
        The training index of each component's prototype eta_j, grouped by class.
    component_class_ : ndarray of shape (n_prototypes_,)
        The class index (into ``classes_``) of each component.
    weights_ : ndarray of shape (n_prototypes_,)
        The component priors omega_j within their class (sample-weighted with ``sample_weight``).
    scales_ : ndarray of shape (n_prototypes_,)
        The scales b_j (after shrinkage).
    shape_ : float or ndarray of shape (n_classes,)
        The shape used to score (s*): one value, or one per class when the classes' shapes differ
        (``shape="per_class"``).
    shape_mle_ : float or ndarray of shape (n_classes,)
        The unrounded estimate s-hat: one value (``shape="common"``) or one per class.
    n_prototypes_ : int
        The number of components M-bar, all classes together.
    fallback_classes_ : list of str
        The classes too small to cluster (fewer than ``min_cluster_size`` objects), fitted in the Kernel HLM form.

    See Also
    --------
    KernelHLM : every training object a prototype (section 3.2).
    HLMModel : the fitted mixture as a small serialisable object (:meth:`model`).
    ClaraMixtureHLM : the same model from raw objects, without the N x N matrix.

    Notes
    -----
    ``predict(D_test_train)`` returns the labels of the largest posterior, shape (n_samples,);
    ``predict_proba(D_test_train)`` the posteriors p_k(z) of eq. 6, shape (n_samples, n_classes), columns
    in ``classes_`` order; ``predict_log_proba`` their logarithms. A fitted model reads only the columns
    ``prototypes_`` of ``D_test_train``: :meth:`predict_from_prototypes` takes just those distances.

    Examples
    --------
    Two well separated Gaussian blobs, two components per class:

    >>> import numpy as np
    >>> from scipy.spatial.distance import cdist
    >>> from hlm.local_mapping import MixtureHLM
    >>> rng = np.random.default_rng(0)
    >>> X_train = np.vstack([rng.normal(0.0, 1.0, (20, 2)), rng.normal(6.0, 1.0, (20, 2))])
    >>> y_train = np.repeat(["a", "b"], 20)
    >>> X_test = np.array([[0.0, 0.0], [6.0, 6.0], [1.0, -1.0], [5.0, 7.0]])
    >>> mix = MixtureHLM(n_components=2, n_init=5).fit(cdist(X_train, X_train), y_train)
    >>> mix.predict(cdist(X_test, X_train)).tolist()
    ['a', 'b', 'a', 'b']
    >>> mix.n_prototypes_, mix.component_class_, mix.weights_  # omega_j: cluster sizes / class size
    (4, array([0, 0, 1, 1]), array([0.4 , 0.6 , 0.45, 0.55]))
    >>> mix.predict_proba(cdist(X_test, X_train)).shape
    (4, 2)

    Only the distances to the prototypes are needed to classify:

    >>> mix.predict_from_prototypes(cdist(X_test, X_train[mix.prototypes_])).tolist()
    ['a', 'b', 'a', 'b']
    """

    _parameter_constraints = {
        "n_components": [Interval(Integral, 1, None, closed="left"), StrOptions({"kernel"})],
        "clustering": [StrOptions({"vsh", "gknn", "ward", "ward_d"})],
        "n_init": [Interval(Integral, 1, None, closed="left")],
        "shape": [StrOptions({"common", "per_class"})],
        "min_cluster_size": [Interval(Integral, 2, None, closed="left")],
        "squared": ["boolean"],
        "round_shape": ["boolean"],
        "random_state": [Interval(Integral, 0, None, closed="left")],
    }

    #: the grid parameter whose points share one input check and the class blocks (``predict_grid``)
    _path_params = ("n_components",)

    def __init__(
        self,
        n_components=4,
        clustering: str = "vsh",
        n_init: int = 20,
        shape: str = "common",
        min_cluster_size: int = 3,
        squared: bool = True,
        round_shape: bool = True,
        random_state: int = 0,
    ):
        self.n_components = n_components
        self.clustering = clustering
        self.n_init = n_init
        self.shape = shape
        self.min_cluster_size = min_cluster_size
        self.squared = squared
        self.round_shape = round_shape
        self.random_state = random_state

    # ------------------------------------------------------------------ fit
    def fit(self, D, y, sample_weight=None, prototypes=None):
        """Cluster each class, then estimate (eq. 3, or eq. 4 with ``sample_weight``).

        ``prototypes`` (training indices) skips the clustering: each object is
        assigned to the nearest given prototype of its class (row = object,
        column = prototype).

        Parameters
        ----------
        D : array-like of shape (n_samples, n_samples)
            ``D_train_train``: the distances among the training objects (finite, non-negative).
        y : array-like of shape (n_samples,)
            The class labels (at least 2 classes).
        sample_weight : array-like of shape (n_samples,) or None, default=None
            Positive weights w_i: weighted clustering and the weighted estimate of eq. 4; the
            component priors become the clusters' weight shares. Not used with ``n_components="kernel"``.
        prototypes : array-like of int or None, default=None
            Training indices of given prototypes (at least one per class), instead of clustering.

        Returns
        -------
        self : MixtureHLM
            The fitted estimator.
        """
        self._validate_params()
        D, y_idx = self._check_fit_input(D, y)
        w = _check_weights(sample_weight, D.shape[0])
        if self.n_components == "kernel":
            return self._fit_kernel(D, y)
        return self._fit_components(D, y_idx, w, prototypes)

    def _fit_components(self, D, y_idx, w, prototypes=None, class_blocks=None):
        """``fit`` after its input checks: each class clustered (or given its prototypes), then the estimate.
        ``class_blocks`` (class k -> ``D[np.ix_(idx_k, idx_k)]``, as ``predict_grid`` shares them across M): the
        blocks the clustering would otherwise slice."""
        from hlm.local_mapping._clustering import cluster

        given = None if prototypes is None else np.unique(np.asarray(prototypes, dtype=np.intp))
        protos, comp_class, comp_count, members = [], [], [], []
        self.fallback_classes_ = []
        for k in range(len(self.classes_)):
            idx = np.flatnonzero(y_idx == k)
            n_k = idx.size
            if given is not None:
                result_protos = np.flatnonzero(np.isin(idx, given))
                if result_protos.size == 0:
                    raise DataError(f"fit: no prototype given for class {self.classes_[k]}")
                assignment = np.argmin(D[np.ix_(idx, idx[result_protos])], axis=1)
                assignment[result_protos] = np.arange(result_protos.size)
            elif n_k < self.min_cluster_size:
                self.fallback_classes_.append(str(self.classes_[k]))
                result_protos, assignment = np.arange(n_k), np.arange(n_k)
            else:
                M = min(int(self.n_components), n_k)
                block = D[np.ix_(idx, idx)] if class_blocks is None else class_blocks[k]
                res = cluster(block, M, self.clustering, seed=self.random_state + k,
                              n_init=self.n_init, weights=None if w is None else w[idx])
                result_protos, assignment = res.prototypes, res.assignment
            for j, p in enumerate(result_protos):
                mem = idx[assignment == j]
                protos.append(idx[p])
                comp_class.append(k)
                comp_count.append(mem.size if w is None else w[mem].sum())
                members.append(mem[mem != idx[p]])
        if self.fallback_classes_:
            warnings.warn(
                f"class(es) {', '.join(self.fallback_classes_)} have fewer than {self.min_cluster_size} "
                "training objects: too small to cluster, every object is a prototype (Kernel HLM form)",
                UserWarning,
                stacklevel=3,
            )
        self._estimate(D, np.array(protos), np.array(comp_class), np.array(comp_count, float), members, w)
        return self

    def _estimate(self, D, protos, comp_class, comp_count, members, w) -> None:
        """Eq. 3/4 with shrinkage, from the members' distances to their prototype."""
        dists = [D[mem, protos[j]] for j, mem in enumerate(members)]
        weights = None if w is None else [w[mem] for mem in members]
        self._estimate_from_distances(dists, weights, protos, comp_class, comp_count)

    def _estimate_from_distances(self, dists, weights, protos, comp_class, comp_count) -> None:
        """Eq. 3/4 with shrinkage from per-component sufficient statistics: ``dists[j]`` are the distances
        of component j's members (its prototype left out) to its prototype, ``weights[j]`` their weights
        (None: unweighted). Components with fewer than ``min_cluster_size`` objects are left out."""
        n_comp = len(protos)
        u_parts, c_parts, w_parts = [], [], []
        for j, d in enumerate(dists):
            if d.size + 1 < self.min_cluster_size or d.size == 0:
                continue
            u = d**2 if self.squared else d
            keep = u > 0  # duplicates of the prototype carry no scale information
            u_parts.append(u[keep])
            c_parts.append(np.full(keep.sum(), j))
            w_parts.append(np.ones(keep.sum()) if weights is None else weights[j][keep])
        u_all = np.concatenate(u_parts) if u_parts else np.empty(0)
        if u_all.size == 0:
            raise DataError(
                f"{type(self).__name__}.fit: no cluster with at least "
                f"{self.min_cluster_size} objects and a positive distance to its prototype; "
                "cannot estimate the Gamma shape and scales"
            )
        stats = ComponentStats.from_samples(u_all, np.concatenate(c_parts), n_comp, np.concatenate(w_parts))
        scale, shapes, mle = estimate_scales(stats, comp_class, len(self.classes_), self.shape, self.round_shape)
        self.shape_mle_ = float(mle[0]) if self.shape == "common" else mle
        self._set_model(protos, comp_class, comp_count, scale, shapes)

    def _set_model(self, protos, comp_class, comp_count, scale, class_shape) -> None:
        """Store the components; ``class_shape`` holds the shape used to score, per class."""
        totals = np.bincount(comp_class, comp_count, minlength=len(self.classes_))
        self.prototypes_ = protos
        self.component_class_ = comp_class
        self.weights_ = comp_count / totals[comp_class]
        self.scales_ = scale
        class_shape = np.broadcast_to(np.asarray(class_shape, float), (len(self.classes_),))
        self.shape_ = float(class_shape[0]) if np.all(class_shape == class_shape[0]) else class_shape.copy()
        self.n_prototypes_ = int(len(protos))

    def predict_grid(self, D_fit, y, D_val, grid: list[dict]) -> list:
        """Predictions of ``D_val`` at every grid point after a refit on ``(D_fit, y)`` (one CV fold), the fit's
        input checks and each class's block of distances shared by the points that differ in ``n_components``
        only (on a fold of Letter's 14,400 objects, 0.2 s of each of the 13 refits); the same predictions as
        refits. It holds every class's block for the group (the sum of the squared class sizes: 64 MB on Letter),
        where a refit holds one at a time. A subclass with a ``fit`` of its own takes the plain refits.

        Returns
        -------
        list
            One entry per grid point: the labels predicted for ``D_val``, shape (n_val,), or None where the
            data cannot support the point (the ``FastPathMixin.predict_grid`` contract of ``hlm.base._classifiers``).
        """
        if type(self).fit is not MixtureHLM.fit:
            return super().predict_grid(D_fit, y, D_val, grid)
        out: list = [None] * len(grid)
        for outer, points in group_grid(self, grid, self._path_params).items():
            model = clone(self).set_params(**dict(outer))
            try:
                D, y_idx = model._check_fit_input(D_fit, y)
            except HLMError:  # as predict_each: no fit at any of these points
                continue
            class_blocks = None
            for g, params in points:
                point = clone(model).set_params(**params)
                point.classes_, point.n_features_in_, point.class_prior_ = (model.classes_, model.n_features_in_,
                                                                             model.class_prior_)
                try:
                    if point.n_components == "kernel":
                        point._fit_kernel(D, y)
                    else:
                        if class_blocks is None:
                            class_blocks = [D[np.ix_(idx, idx)] for idx in
                                            (np.flatnonzero(y_idx == k) for k in range(len(model.classes_)))]
                        point._fit_components(D, y_idx, None, class_blocks=class_blocks)
                except HLMError:  # a point the data cannot support (predict_each's None)
                    continue
                out[g] = point.predict(D_val)
        return out

    def _fit_kernel(self, D, y):
        from hlm.local_mapping._kernel_hlm import KernelHLM

        kernel = KernelHLM(round_shape=self.round_shape, squared=self.squared).fit(D, y)
        n = D.shape[0]
        y_idx = kernel._y_idx
        self.fallback_classes_ = []
        self.shape_mle_ = kernel.shape_mle_
        self._set_model(np.arange(n), y_idx, np.ones(n), np.full(n, kernel.scale_), kernel.shape_)
        return self

    # ------------------------------------------------------------------ predict
    def model(self) -> HLMModel:
        """The fitted model as a small, serialisable object.

        Returns
        -------
        HLMModel
            The classes, priors, prototypes (training indices), component classes, weights, scales and shape.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            Before ``fit``.
        """
        if not hasattr(self, "prototypes_"):
            from sklearn.exceptions import NotFittedError

            raise NotFittedError(f"{type(self).__name__} is not fitted yet; call fit first")
        return HLMModel(
            classes=[str(c) for c in self.classes_],
            class_prior=self.class_prior_.tolist(),
            prototype_index=self.prototypes_.tolist(),
            component_class=self.component_class_.tolist(),
            weight=self.weights_.tolist(),
            scale=self.scales_.tolist(),
            shape=float(self.shape_) if np.ndim(self.shape_) == 0 else self.shape_[self.component_class_].tolist(),
            squared=bool(self.squared),
        )

    def predict_log_scores_from_prototypes(self, D_proto) -> np.ndarray:
        """log pi_k + log phi(z | M_k) (eqs. 5, 6) from the distances to the prototypes only.

        Parameters
        ----------
        D_proto : array-like of shape (n_samples, n_prototypes_)
            The distances from each object to score (rows) to the prototypes, columns ordered as ``prototypes_``.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            The log class scores, columns in ``classes_`` order.
        """
        return self.model().log_scores(D_proto)

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
        D = self._check_predict_input(D)
        return self.predict_log_scores_from_prototypes(D[:, self.prototypes_])


    def predict_from_prototypes(self, D_proto):
        """Classify from the test-to-prototype distances only (columns ordered as ``prototypes_``).

        Parameters
        ----------
        D_proto : array-like of shape (n_samples, n_prototypes_)
            The distances from each object to classify (rows) to the prototypes.

        Returns
        -------
        ndarray of shape (n_samples,)
            The predicted labels (the largest posterior of eq. 6), as ``predict`` gives them.
        """
        scores = self.predict_log_scores_from_prototypes(D_proto)  # NotFittedError first
        return self.classes_[np.argmax(scores, axis=1)]

    def to_dict(self) -> dict:
        """The fitted model (:meth:`model`) as a plain dict.

        Returns
        -------
        dict
            The fields of :class:`HLMModel`, by name.
        """
        return asdict(self.model())


def estimate_scales(stats: ComponentStats, comp_class: np.ndarray, n_classes: int, shape: str = "common",
                    round_shape: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Eq. 3 (eq. 4 if the statistics are weighted) with the shrinkage of section 2.1.

    From per-component statistics (components with weight 0 were left out of the
    estimate and get the common scale, lam = 0). Returns (scale b_j per component,
    shape used to score per class, shape MLE per class); ``shape`` is "common" (one
    s over every component) or "per_class".
    """
    n_comp = len(comp_class)
    scale = np.empty(n_comp)
    shapes = np.empty(n_classes)
    mle = np.empty(n_classes)
    pools = [np.arange(n_classes)] if shape == "common" else [np.array([k]) for k in range(n_classes)]
    common = _pooled_fit(stats, np.ones(n_comp, bool), round_shape)
    for pool in pools:
        in_pool = np.isin(comp_class, pool)
        # a class without estimable clusters (per_class) uses the common fit
        fit = (_pooled_fit(stats, in_pool, round_shape) if shape == "per_class" else None) or common
        s_hat, s_used, ubar = fit
        ubar_j = np.where(stats.weight > 0, stats.mean_u, ubar)
        lam = stats.weight / (stats.weight + 1.0)
        scale[in_pool] = ((lam * ubar_j + (1 - lam) * ubar) / s_hat)[in_pool]
        shapes[pool], mle[pool] = s_used, s_hat
    return scale, shapes, mle


def _pooled_fit(stats: ComponentStats, mask: np.ndarray, rounding: bool):
    """(s-hat, s used, pooled mean u) from the components in ``mask``; None without data."""
    sub = ComponentStats(stats.weight * mask, stats.sum_u * mask, stats.sum_log_u * mask)
    if sub.weight.sum() <= 0:
        return None
    fit = fit_gamma(sub, rounding=rounding)
    return fit.shape_mle, fit.shape, sub.sum_u.sum() / sub.weight.sum()


def _check_weights(sample_weight, n: int):
    if sample_weight is None:
        return None
    w = np.asarray(sample_weight, dtype=np.float64)
    if w.shape != (n,) or not np.all(np.isfinite(w)) or np.any(w <= 0):
        raise DataError(f"fit: sample_weight must be {n} positive finite numbers")
    return w
