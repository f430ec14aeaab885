"""HLM incremental Scheme II (paper section 4.2): weighted VSH on a sample of each past cluster
(``SchemeII.draw_sample``, weights :func:`sample_weight`) plus the new batch."""

from __future__ import annotations

import math

import numpy as np

from hlm.local_mapping._gamma import ComponentStats
from hlm.local_mapping.incremental._distances import Distances
from hlm.local_mapping.incremental._learner import COMPONENT_STEP, INITIAL_COMPONENTS, Incremental, cluster_class

#: section 5.5: Scheme II samples v points per past cluster
SAMPLE_SIZE = 4


def sample_weight(cluster_size: int, v: int = SAMPLE_SIZE) -> float:
    """Scheme II weight of a point sampled from a cluster of |I_j| = ``cluster_size`` (section 4.2).

    w_i = sqrt((|I_j| + 1) / (v + 1)) if |I_j| > v, else 1 (the whole cluster is then taken).

    Parameters
    ----------
    cluster_size : int
        |I_j|: the cluster's points besides its prototype.
    v : int, default=4
        Points sampled per past cluster (``SAMPLE_SIZE``, section 5.5).

    Returns
    -------
    float
        The weight of each point sampled from that cluster (its prototype included).

    Examples
    --------
    >>> from hlm.local_mapping.incremental import sample_weight
    >>> sample_weight(3)  # |I_j| <= v: all of the cluster, weight 1
    1.0
    >>> round(sample_weight(24), 3)  # sqrt(25 / 5)
    2.236
    """
    return math.sqrt((cluster_size + 1) / (v + 1)) if cluster_size > v else 1.0


class SchemeII(Incremental):
    """HLM incremental Scheme II (paper section 4.2): weighted VSH on a sample of the past plus the new batch.

    From each existing cluster, v points plus its prototype are sampled (all of it if |I_j| <= v; |I_j|
    counts the cluster's points besides its prototype) with weight sqrt((|I_j| + 1) / (v + 1))
    (:func:`sample_weight`); new points weigh 1. Weighted VSH on R = H D clusters the sample and the new
    batch into ``step`` more components per class than the previous round; the unsampled past points are
    reassigned to their nearest new prototype, and eq. 3 is applied to all data (``estimate="eq4"``:
    eq. 4 on the weighted sample and the new batch only), with the shrinkage of section 2.1.

    Keeps the ids and labels of everything seen and each one's current cluster (the
    sampling and the reassignment need them). ``v`` points are sampled per past
    cluster; ``estimate`` is "eq3" (the Gamma statistics of all data, after
    reassignment; the paper's default) or "eq4" (of the weighted sample and the new
    batch only: fewer squared distances to accumulate; the reassignment is still
    done, as the next round samples from the clusters). Mixing weights are the
    cluster sizes after reassignment in both cases.
    ``n_components`` is the initial number per class; each round adds ``step``.

    Parameters
    ----------
    n_components : int, default=4
        Components per class after the first batch (section 5.5: 4).
    step : int, default=2
        Components added per class each round (section 5.5: 2), so 4, 6, 8, ... by default.
    v : int, default=4
        Points sampled per past cluster, besides its prototype (``SAMPLE_SIZE``, section 5.5).
    estimate : {"eq3", "eq4"}, default="eq3"
        The Gamma statistics of all data after reassignment (eq. 3, the paper's default), or of the
        weighted sample and the new batch only (eq. 4).
    n_init : int, default=20
        Random restarts of VSH (section 5.1: 20).
    min_cluster_size : int, default=3
        Clusters with fewer objects (prototype included) are left out of the estimate (section 5.5: 3);
        a class with fewer objects is not clustered (every object a prototype).
    squared : bool, default=True
        u = D^2 (the paper's reading) or u = D (dissertation ch. 3).
    round_shape : bool, default=True
        Score with s* = floor(2 s + 0.5) / 2 (section 2.1).
    random_state : int, default=0
        Seed of the clustering (and sampling) of every round, mixed with the round and the class.

    Attributes
    ----------
    classes_ : list
        The class labels, in the order they first appeared (the score columns' order).
    class_counts_ : list of int
        The objects seen per class (their frequencies are the class priors pi_k).
    n_rounds_ : int
        The batches learned (empty batches not counted).
    prototype_ids_ : ndarray of str
        The id of each component's prototype (the columns ``predict`` asks ``distances`` for).
    n_components_ : ndarray of shape (n_classes,)
        Components per class, in ``classes_`` order.
    component_class_ : ndarray of shape (n_components_total,)
        The class index (into ``classes_``) of each component.
    seen_ids_ : ndarray of str
        The ids of every object seen, in arrival order.
    seen_class_ : ndarray of int
        Their class indices (into ``classes_``).
    assignment_ : ndarray of int
        The component of each seen object (after this round's reassignment).
    last_sample_ : dict
        This round's clustered sample and new batch: ``"positions"`` (in ``seen_ids_``) and ``"weights"``.

    Raises
    ------
    ValueError
        If ``estimate`` is not "eq3" or "eq4".

    See Also
    --------
    SchemeI : clusters each batch on its own (section 4.1).
    Retrain : the batch baseline (section 5.5).

    Examples
    --------
    Three batches of two Gaussian blobs, two components per class at first, then 4 and 6:

    >>> import numpy as np
    >>> from scipy.spatial.distance import cdist
    >>> from hlm.local_mapping import MatrixDistances, SchemeII
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal(0.0, 1.0, (30, 2)), rng.normal(6.0, 1.0, (30, 2)),
    ...                [[0.0, 0.0], [6.0, 6.0], [1.0, -1.0], [5.0, 7.0]]])  # 60 objects to learn, 4 to classify
    >>> y = np.repeat(["a", "b"], 30)
    >>> ids = np.array([f"o{i}" for i in range(64)])
    >>> dist = MatrixDistances(cdist(X, X), ids)
    >>> batches = np.arange(60).reshape(20, 3).T  # 3 batches of 20 objects, 10 of each class
    >>> learner = SchemeII(n_components=2, n_init=5)
    >>> for batch in batches:
    ...     _ = learner.partial_fit(ids[batch], y[batch], dist)
    >>> learner.n_rounds_, learner.n_components_, learner.assignment_.shape
    (3, array([6, 6]), (60,))
    >>> " ".join(learner.predict(ids[60:], dist))
    'a b a b'
    """

    def __init__(self, n_components: int = INITIAL_COMPONENTS, step: int = COMPONENT_STEP, v: int = SAMPLE_SIZE,
                 estimate: str = "eq3", **kwargs):
        super().__init__(n_components=n_components, **kwargs)
        if estimate not in ("eq3", "eq4"):
            raise ValueError(f"SchemeII: estimate must be 'eq3' or 'eq4', got {estimate!r}")
        self.step = step
        self.v = v
        self.estimate = estimate
        self.seen_ids_ = np.empty(0, dtype=str)
        self.seen_class_ = np.empty(0, dtype=np.intp)
        self.assignment_ = np.empty(0, dtype=np.intp)  # component of each seen object
        self.prototype_ids_ = np.empty(0, dtype=str)
        self.component_class_ = np.empty(0, dtype=np.intp)
        self.last_sample_: dict = {}

    def target_components(self) -> int:
        """Components per class this round (4, 6, 8, ...; section 5.5).

        Returns
        -------
        int
            ``n_components + step * (n_rounds_ - 1)``.
        """
        return self.n_components + self.step * (self.n_rounds_ - 1)

    def draw_sample(self, rng: np.random.Generator, component: int) -> tuple[np.ndarray, np.ndarray]:
        """(positions in ``seen_ids_``, weights) sampled from one past cluster (section 4.2).

        Parameters
        ----------
        rng : numpy.random.Generator
            The source of the sample.
        component : int
            The past cluster (index into ``prototype_ids_``).

        Returns
        -------
        positions : ndarray of int
            In ``seen_ids_``: the prototype and ``v`` other members drawn without replacement, or all the
            members if |I_j| <= ``v``.
        weights : ndarray of float
            Their weights, :func:`sample_weight` (1 for a cluster taken whole).
        """
        members = np.flatnonzero(self.assignment_ == component)
        proto = np.flatnonzero(self.seen_ids_ == self.prototype_ids_[component])
        others = np.setdiff1d(members, proto)
        size = others.size  # |I_j|: the cluster's points besides its prototype (as in eq. 3)
        if size <= self.v:
            return members, np.ones(members.size)
        picked = rng.choice(others, size=self.v, replace=False)
        chosen = np.concatenate([proto, np.sort(picked)])
        return chosen, np.full(chosen.size, sample_weight(size, self.v))

    def partial_fit(self, ids, y, distances: Distances) -> SchemeII:
        """Learn one batch: weighted VSH on a sample of each past cluster plus the batch, reassign, estimate.

        Parameters
        ----------
        ids : sequence
            The ids of the batch's objects (unique; compared as strings).
        y : array-like of shape (len(ids),)
            Their labels; a batch may hold a single class, and new classes may appear in any batch.
        distances : callable
            ``distances(rows, cols)`` (ids in, matrix out), e.g. :class:`MatrixDistances`; asked for the
            distances among each class's sample and new objects, and from every seen object to the new
            prototypes of its class.

        Returns
        -------
        self : SchemeII
            The updated learner (unchanged, with a warning, for an empty batch).

        Raises
        ------
        hlm.errors.DataError
            For a malformed batch, bad distances, or while no cluster has enough objects to estimate from.
        """
        checked = self._check_batch(ids, y, distances)
        if checked is None:
            return self
        ids, y_idx = checked
        rng = np.random.default_rng(self._round_seed(-1))
        M = self.target_components()
        new_protos, new_class, sample_pos, sample_w = [], [], [], []
        past_n = self.seen_ids_.size
        all_ids = np.concatenate([self.seen_ids_, ids])
        all_class = np.concatenate([self.seen_class_, y_idx])
        for k in np.unique(all_class):
            pos, w = [], []
            for c in np.flatnonzero(self.component_class_ == k):
                p, weights = self.draw_sample(rng, int(c))
                pos.append(p)
                w.append(weights)
            pos.append(past_n + np.flatnonzero(y_idx == k))  # the new batch, weight 1
            w.append(np.ones(int((y_idx == k).sum())))
            pos, w = np.concatenate(pos).astype(np.intp), np.concatenate(w)
            D = self._lookup(distances, all_ids[pos], all_ids[pos], "distances among the sample and the new batch")
            p, _ = cluster_class(D, M, self._round_seed(int(k)), self.n_init, self.min_cluster_size, weights=w)
            new_protos.extend(all_ids[pos[p]])
            new_class.extend([k] * len(p))
            sample_pos.append(pos)
            sample_w.append(w)
        new_protos = np.asarray(new_protos, dtype=str)
        new_class = np.asarray(new_class, dtype=np.intp)
        self.last_sample_ = {"positions": np.concatenate(sample_pos), "weights": np.concatenate(sample_w)}
        # every object seen so far goes to its nearest new prototype of its class
        assignment = np.empty(all_ids.size, dtype=np.intp)
        D_all = np.empty(all_ids.size)
        for k in np.unique(all_class):
            rows, cols = np.flatnonzero(all_class == k), np.flatnonzero(new_class == k)
            D = self._lookup(distances, all_ids[rows], new_protos[cols], "distances to the new prototypes")
            is_proto = all_ids[rows][:, None] == new_protos[cols][None, :]
            D = np.where(is_proto, -1.0, D)  # a prototype belongs to its own cluster
            near = np.argmin(D, axis=1)
            assignment[rows] = cols[near]
            D_all[rows] = np.maximum(D[np.arange(rows.size), near], 0.0)
        self.seen_ids_, self.seen_class_, self.assignment_ = all_ids, all_class, assignment
        self.prototype_ids_, self.component_class_ = new_protos, new_class
        sizes = np.bincount(assignment, minlength=new_protos.size).astype(float)  # mixing weights: all data
        if self.estimate == "eq3":
            members, weights = np.arange(all_ids.size), np.ones(all_ids.size)
        else:  # eq. 4: the Gamma statistics from the weighted sample and the new batch only
            members, weights = self.last_sample_["positions"], self.last_sample_["weights"]
        self._set(new_protos, new_class, sizes, self._stats(members, weights, assignment, D_all, new_protos.size))
        return self

    def _stats(self, members, weights, assignment, d, n_comp) -> ComponentStats:
        comp = assignment[members]
        u = self._u(d[members])
        cluster_n = np.bincount(assignment, minlength=n_comp)
        keep = (u > 0) & (cluster_n[comp] >= self.min_cluster_size)
        return ComponentStats.from_samples(u[keep], comp[keep], n_comp, weights[keep])
