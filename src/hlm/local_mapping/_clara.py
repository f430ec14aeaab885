"""Mixture HLM on raw objects without the N x N matrix (docs/scale-spec.md).

HLM needs, once the classes are clustered, only each object's distance to
its prototype (the paper's abstract: "HLM takes as input the distances between
the training data and their corresponding cluster centroids"; eq. 3), and a test
object's distances to the prototypes (eqs. 5, 6). Only the clustering reads
the full per-class matrix. Here it reads samples instead, as CLARA does
(Kaufman and Rousseeuw): for each class,

1. ``n_samples`` random samples of ``sample_size`` objects are clustered by
   VSH (or another :func:`hlm.local_mapping._clustering.cluster` method) on their own
   sample x sample distances;
2. each sample's prototypes are scored by their total distance to a larger
   random sample of ``eval_size`` objects of the class (the whole class when
   it is smaller, or with ``eval_size=None``); the lowest total wins;
2b. up to ``refine`` alternating steps then move each prototype to the
   1-median of a sample of its cluster, while the total falls;
3. every object of the class is assigned to its nearest winning prototype (for
   every clustering method), in blocks of ``block_size`` objects, and the shape
   and scales follow from these distances by eq. 3 with the shrinkage of
   section 2.1, as in :class:`~hlm.local_mapping._mixture_hlm.MixtureHLM`.

The largest distance array is sample_size x sample_size, or min(block_size, n)
x (the prototypes of a class, or of all classes at prediction), never n x n.
Prediction computes each test object's distances to the prototypes only; the
fitted model keeps the prototype objects (``prototype_objects_``), not the
training set.

A class of at most ``sample_size`` objects is clustered whole, in its training
order with MixtureHLM's seed, keeping the clustering's own partition, so the fit
equals MixtureHLM's on the full matrix (tested for VSH, generalized k-means and
Ward).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from numbers import Integral

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from hlm.base._classifiers import as_vectors, fit_classes
from hlm.distances._registry import DISTANCES, SIMILARITIES, VECTOR_DISTANCES, pairwise
from hlm.errors import DataError
from hlm.local_mapping._mixture_hlm import MixtureHLM


class ClaraMixtureHLM(MixtureHLM):
    """Mixture HLM fitted from raw objects and a distance, never forming the N x N matrix (docs/scale-spec.md).

    The model of :class:`~hlm.local_mapping._mixture_hlm.MixtureHLM` (paper section 3.1): once the
    classes are clustered, eq. 3 with the shrinkage of section 2.1 needs only each object's distance to
    its prototype, and eqs. 5, 6 only a test object's distances to the prototypes. The clustering reads
    samples instead of the per-class matrix, as CLARA does (Kaufman and Rousseeuw): per class,
    ``n_samples`` samples of ``sample_size`` objects are clustered, the prototypes with the lowest total
    distance to an evaluation sample of ``eval_size`` objects win, up to ``refine`` steps move them to
    the 1-median of a sample of their cluster, and every object is assigned to its nearest prototype.
    The largest distance array is sample_size x sample_size or min(block_size, n) x (the prototypes).

    ``fit(X, y)`` and ``predict(X)`` take objects: an (n, d) array of vectors, or a sequence of
    series or strings. A class of at most ``sample_size`` objects is clustered whole, so the fit then
    equals MixtureHLM's on the full matrix.

    Parameters
    ----------
    n_components : int, default=4
        Components per class M (capped at each class's size); ``"kernel"`` is not accepted.
    clustering : {"vsh", "gknn", "ward", "ward_d"}, default="vsh"
        The clustering of each sample (as in :class:`~hlm.local_mapping._mixture_hlm.MixtureHLM`).
    n_init : int, default=20
        Random restarts of VSH (section 5.1: 20).
    shape : {"common", "per_class"}, default="common"
        One s for all classes (eq. 3 over every cluster) or one per class.
    min_cluster_size : int, default=3
        Clusters smaller than this (prototype included) are left out of the estimate; a smaller class
        is not clustered (every object a prototype).
    squared : bool, default=True
        u = D^2 (the paper's reading, default) or u = D (dissertation ch. 3, D-tilde).
    round_shape : bool, default=True
        Score with s* = floor(2 s + 0.5) / 2 (section 2.1).
    random_state : int, default=0
        Seed of the samples and the clustering restarts (class k clusters with MixtureHLM's seed
        ``random_state + k``).
    distance : str or callable, default="euclidean"
        A distance of the table :data:`hlm.distances.DISTANCES` ("euclidean", "cityblock", "cosine", "dtw",
        "hamming"), or ``f(rows, cols) -> (len(rows), len(cols))`` array of distances. Similarities are refused.
    distance_options : dict or None, default=None
        Options of a named distance (e.g. ``{"window": 0.1}`` for DTW).
    sample_size : int, default=1000
        Objects per class sample clustered (a class at most this large is clustered whole); at least
        ``n_components``.
    n_samples : int, default=5
        Samples drawn per class; the prototypes with the lowest total distance on the evaluation sample win.
    eval_size : int or None, default=5000
        Objects per class on which the samples' prototypes are scored; None: the whole class.
    refine : int, default=5
        Alternating steps after the samples (each prototype moves to the 1-median of a sample of its
        cluster while the total distance falls); 0: none. Not used where a class is clustered whole.
    block_size : int, default=10_000
        Objects per block when distances to the prototypes are computed (assignment and prediction).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels, sorted.
    class_prior_ : ndarray of shape (n_classes,)
        The class priors pi_k: the empirical class frequencies.
    n_features_in_ : int
        The number of features of the vectors (set only with a named vector distance).
    prototypes_ : ndarray of shape (n_prototypes_,)
        The training index of each component's prototype, grouped by class.
    prototype_objects_ : ndarray or list
        The prototype objects themselves (rows of X, or a list), all that ``predict`` reads of the training set.
    component_class_ : ndarray of shape (n_prototypes_,)
        The class index (into ``classes_``) of each component.
    weights_ : ndarray of shape (n_prototypes_,)
        The component priors omega_j within their class.
    scales_ : ndarray of shape (n_prototypes_,)
        The scales b_j (after shrinkage).
    shape_ : float or ndarray of shape (n_classes,)
        The shape used to score (s*): one value, or one per class.
    shape_mle_ : float or ndarray of shape (n_classes,)
        The unrounded estimate s-hat.
    n_prototypes_ : int
        The number of components, all classes together.
    fallback_classes_ : list of str
        The classes too small to cluster (fewer than ``min_cluster_size`` objects).

    See Also
    --------
    MixtureHLM : the same model on a precomputed N x N matrix.

    Notes
    -----
    ``predict(X)`` returns the labels of the largest posterior (eq. 6), shape (n_samples,);
    ``predict_proba(X)`` the posteriors, shape (n_samples, n_classes). Both compute only the distances
    from X to ``prototype_objects_``, in blocks of ``block_size``.

    Examples
    --------
    Two Gaussian blobs of 60 vectors each, clustered from samples of 20:

    >>> import numpy as np
    >>> from scipy.spatial.distance import cdist
    >>> from hlm.local_mapping import ClaraMixtureHLM, MixtureHLM
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal(0.0, 1.0, (60, 2)), rng.normal(6.0, 1.0, (60, 2))])
    >>> y = np.repeat([0, 1], 60)
    >>> X_test = np.array([[0.0, 0.0], [6.0, 6.0], [1.0, -1.0], [5.0, 7.0]])
    >>> clara = ClaraMixtureHLM(n_components=3, n_init=5, sample_size=20, n_samples=3, eval_size=40).fit(X, y)
    >>> clara.predict(X_test).tolist()
    [0, 1, 0, 1]
    >>> clara.prototype_objects_.shape, clara.predict_proba(X_test).shape
    ((6, 2), (4, 2))

    A class no larger than ``sample_size`` is clustered whole: the fit is MixtureHLM's on the full matrix.

    >>> whole = ClaraMixtureHLM(n_components=3, n_init=5).fit(X, y)
    >>> full = MixtureHLM(n_components=3, n_init=5).fit(cdist(X, X), y)
    >>> bool(np.array_equal(whole.prototypes_, full.prototypes_) and np.allclose(whole.scales_, full.scales_))
    True

    Any distance can be given as a callable on the objects:

    >>> manhattan = ClaraMixtureHLM(n_components=3, n_init=5, distance=lambda a, b: cdist(a, b, "cityblock"))
    >>> manhattan.fit(X, y).predict(X_test).tolist()
    [0, 1, 0, 1]
    """

    _parameter_constraints = {
        **MixtureHLM._parameter_constraints,
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "distance": [StrOptions({name for name, d in DISTANCES.items() if d.function}), callable],
        "distance_options": [None, dict],
        "sample_size": [Interval(Integral, 2, None, closed="left")],
        "n_samples": [Interval(Integral, 1, None, closed="left")],
        "eval_size": [None, Interval(Integral, 1, None, closed="left")],
        "refine": [Interval(Integral, 0, None, closed="left")],
        "block_size": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, n_components: int = 4, clustering: str = "vsh", n_init: int = 20, shape: str = "common",
                 min_cluster_size: int = 3, squared: bool = True, round_shape: bool = True, random_state: int = 0,
                 distance: str | Callable = "euclidean", distance_options: dict | None = None,
                 sample_size: int = 1000, n_samples: int = 5, eval_size: int | None = 5000, refine: int = 5,
                 block_size: int = 10_000):
        super().__init__(n_components=n_components, clustering=clustering, n_init=n_init, shape=shape,
                         min_cluster_size=min_cluster_size, squared=squared, round_shape=round_shape,
                         random_state=random_state)
        self.distance = distance
        self.distance_options = distance_options
        self.sample_size = sample_size
        self.n_samples = n_samples
        self.eval_size = eval_size
        self.refine = refine
        self.block_size = block_size

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = False
        return tags

    # ------------------------------------------------------------------ distances
    def _on_vectors(self) -> bool:
        return isinstance(self.distance, str) and self.distance in VECTOR_DISTANCES

    def _objects(self, X, what: str):
        """Vectors (a named vector distance) as a finite float64 2-D array; other objects as given."""
        if self._on_vectors():
            return as_vectors(X, what)
        return X.to_numpy() if hasattr(X, "to_numpy") else X

    def _distances(self, rows, cols, where: str, row_ids=None, col_ids=None,
                   names: tuple[str, str] = ("objects", "and")) -> np.ndarray:
        """The (len(rows), len(cols)) distances, checked: finite and non-negative. ``row_ids``/``col_ids``
        name the objects in an error (default: positions in the block), with the words ``names``."""
        if callable(self.distance):
            out = np.asarray(self.distance(rows, cols), dtype=np.float64)
        else:
            out = pairwise(rows, cols, self.distance, self.distance_options)
        if out.shape != (len(rows), len(cols)):
            raise DataError(f"{where}: the distance gave shape {out.shape} for {len(rows)} x {len(cols)} objects")
        bad = ~np.isfinite(out) | (out < 0)
        if bad.any():
            i, j = np.argwhere(bad)[0]
            a = i if row_ids is None else row_ids[i]
            b = j if col_ids is None else col_ids[j]
            raise DataError(f"{where}: the distance between {names[0]} {a} {names[1]} {b} is {out[i, j]}; "
                            "distances must be finite and non-negative")
        return out

    def _nearest(self, X, idx: np.ndarray, protos: np.ndarray, where: str) -> tuple[np.ndarray, np.ndarray]:
        """(nearest of ``protos`` by position, its distance) for each object of ``idx``, in blocks."""
        P = _take(X, protos)
        arg, dist = np.empty(idx.size, dtype=np.intp), np.empty(idx.size)
        for lo in range(0, idx.size, self.block_size):
            D = self._distances(_take(X, idx[lo:lo + self.block_size]), P, where, idx[lo:lo + self.block_size],
                                protos)
            arg[lo:lo + D.shape[0]] = np.argmin(D, axis=1)
            dist[lo:lo + D.shape[0]] = D[np.arange(D.shape[0]), arg[lo:lo + D.shape[0]]]
        return arg, dist

    # ------------------------------------------------------------------ fit
    def fit(self, X, y):
        """Cluster samples of each class, keep the best prototypes, assign every object, estimate (eq. 3).

        Parameters
        ----------
        X : ndarray of shape (n_samples, n_features) or sequence
            The training objects: vectors for a named vector distance, else any sequence the distance
            takes (series, strings, ...).
        y : array-like of shape (n_samples,)
            The class labels (at least 2 classes).

        Returns
        -------
        self : ClaraMixtureHLM
            The fitted estimator.
        """
        from hlm.local_mapping._clustering import cluster

        self._validate_params()
        if isinstance(self.distance, str) and self.distance in SIMILARITIES:
            raise DataError(f"fit: {self.distance!r} is a similarity; ClaraMixtureHLM needs a distance")
        if self.sample_size < self.n_components:
            raise DataError(f"fit: sample_size ({self.sample_size}) must be at least n_components "
                            f"({self.n_components}): a sample must hold every prototype")
        X = self._objects(X, "fit: X")
        if self._on_vectors():
            self.n_features_in_ = X.shape[1]
        elif hasattr(self, "n_features_in_"):  # a refit on other objects
            del self.n_features_in_
        self.classes_, y_idx = fit_classes(y, _count(X), "objects")
        counts = np.bincount(y_idx, minlength=len(self.classes_))
        self.class_prior_ = counts / counts.sum()
        protos, comp_class, comp_count, dists = [], [], [], []
        self.fallback_classes_ = []
        for k in range(len(self.classes_)):
            idx = np.flatnonzero(y_idx == k)
            where = f"fit: class {self.classes_[k]}"
            if idx.size < self.min_cluster_size:  # too small to cluster: every object is a prototype
                self.fallback_classes_.append(str(self.classes_[k]))
                class_protos, arg, dist = idx, np.arange(idx.size), np.zeros(idx.size)
            else:
                class_protos, arg, dist = self._cluster_class(X, idx, min(int(self.n_components), idx.size), k,
                                                              cluster, where)
            for j, p in enumerate(class_protos):
                mine = (arg == j) & (idx != p)
                protos.append(p)
                comp_class.append(k)
                comp_count.append(mine.sum() + 1.0)
                dists.append(dist[mine])
        if self.fallback_classes_:
            warnings.warn(f"class(es) {', '.join(self.fallback_classes_)} have fewer than {self.min_cluster_size} "
                          "training objects: too small to cluster, every object is a prototype (Kernel HLM form)",
                          UserWarning, stacklevel=2)
        self._estimate_from_distances(dists, None, np.array(protos), np.array(comp_class),
                                      np.array(comp_count, float))
        self.prototype_objects_ = _take(X, self.prototypes_)
        return self

    def _cluster_class(self, X, idx: np.ndarray, M: int, k: int, cluster, where: str):
        """Class k's prototypes (training indices), each object's prototype (by position) and its distance
        to it. A class of at most ``sample_size`` objects is clustered whole, with MixtureHLM's seed, keeping
        the clustering's own partition (Ward's is not nearest-prototype); else steps 1-3 of the module."""
        seed = self.random_state + k  # MixtureHLM's seed of class k
        if idx.size <= self.sample_size:
            D = self._distances(_take(X, idx), _take(X, idx), where, idx, idx)
            res = cluster(D, M, self.clustering, seed=seed, n_init=self.n_init)
            rows = np.arange(idx.size)
            return idx[res.prototypes], res.assignment, D[rows, res.prototypes[res.assignment]]
        rng = np.random.default_rng([self.random_state, k])
        evaluation = idx if self.eval_size is None or idx.size <= self.eval_size else \
            np.sort(rng.choice(idx, self.eval_size, replace=False))
        best = None
        for s in range(self.n_samples):
            sample = np.sort(rng.choice(idx, self.sample_size, replace=False))
            D = self._distances(_take(X, sample), _take(X, sample), where, sample, sample)
            candidate = sample[cluster(D, M, self.clustering, seed=seed + 7919 * s, n_init=self.n_init).prototypes]
            arg, dist = self._nearest(X, evaluation, candidate, where)
            if best is None or dist.sum() < best[2].sum():  # ties: the first sample
                best = candidate, arg, dist
        best, arg, dist = self._refine(X, evaluation, *best, rng, where)
        if evaluation is not idx:  # else the evaluation pass was the whole class's
            arg, dist = self._nearest(X, idx, best, where)
        arg[np.searchsorted(idx, best)] = np.arange(best.size)  # a prototype is its own (ties, duplicates)
        return best, arg, dist

    def _refine(self, X, evaluation: np.ndarray, protos: np.ndarray, assignment: np.ndarray, dist: np.ndarray,
                rng, where: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Up to ``refine`` alternating steps (generalized k-means' update, section 2.2, on samples): each
        prototype moves to the 1-median of a sample of at most ``sample_size`` of its evaluation objects,
        and the new prototypes are kept while their total distance to the evaluation sample falls. Takes and
        returns the prototypes with the evaluation objects' nearest prototype and distance to it."""
        for _ in range(self.refine):
            moved = protos.copy()
            for j in range(protos.size):
                members = evaluation[assignment == j]
                if members.size > self.sample_size:
                    members = np.sort(rng.choice(members, self.sample_size, replace=False))
                if members.size > 1:
                    moved[j] = members[np.argmin(self._distances(_take(X, members), _take(X, members), where,
                                                                 members, members).sum(axis=0))]
            moved = np.sort(moved)
            if np.unique(moved).size < moved.size:  # two clusters chose one object: stop
                break
            moved_arg, moved_dist = self._nearest(X, evaluation, moved, where)
            if not moved_dist.sum() < dist.sum():
                break
            protos, assignment, dist = moved, moved_arg, moved_dist
        return protos, assignment, dist

    # ------------------------------------------------------------------ predict
    def predict_log_scores(self, X) -> np.ndarray:
        """log pi_k + log phi(x | M_k) (eqs. 5, 6) from each object's distances to the prototypes.

        Parameters
        ----------
        X : ndarray of shape (n_samples, n_features) or sequence
            The objects to score, of the kind ``fit`` took.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            The log class scores, columns in ``classes_`` order; their argmax is ``predict``.
        """
        model = self.model()  # NotFittedError first
        X = self._objects(X, "predict: X")
        if self._on_vectors() and X.shape[1] != self.n_features_in_:
            raise DataError(f"predict: X has {X.shape[1]} features; the model was fitted on {self.n_features_in_}")
        n = _count(X)
        out = np.empty((n, len(self.classes_)))
        for lo in range(0, n, self.block_size):
            rows = np.arange(lo, min(lo + self.block_size, n))
            D = self._distances(_take(X, rows), self.prototype_objects_, "predict", rows, self.prototypes_,
                                ("object", "of X and the prototype (training object)"))
            out[lo:lo + rows.size] = model.log_scores(D)
        return out


def _count(X) -> int:
    if isinstance(X, np.ndarray):
        if X.ndim == 0 or X.shape[0] == 0:
            raise DataError(f"ClaraMixtureHLM: X must hold at least one object, got shape {X.shape}")
        return X.shape[0]
    if len(X) == 0:
        raise DataError("ClaraMixtureHLM: X must hold at least one object")
    return len(X)


def _take(X, idx):
    """The objects of X at ``idx``: rows of an array, or a list."""
    if isinstance(X, np.ndarray):
        return X[idx]
    return [X[i] for i in idx]
