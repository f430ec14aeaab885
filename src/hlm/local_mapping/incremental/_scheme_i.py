"""HLM incremental Scheme I (paper section 4.1): each batch gets its own components; only their
sufficient statistics and the running geometric mean of the squared distances are kept."""

from __future__ import annotations

import numpy as np

from hlm.local_mapping._gamma import ComponentStats
from hlm.local_mapping.incremental._distances import Distances
from hlm.local_mapping.incremental._learner import INITIAL_COMPONENTS, Incremental, cluster_class


class SchemeI(Incremental):
    """HLM incremental Scheme I (paper section 4.1): new components per batch, sufficient statistics only.

    Each batch is clustered on its own (VSH) into ``n_components`` new components per class. The model
    keeps only each component's sufficient statistics of eq. 3 (|I_j|, ubar_j) and the running geometric
    mean u~ of all squared distances with its count, updated by u~ = u~_1^(N_1/N) (prod_new u_i)^(1/N);
    eq. 3 with the shrinkage of section 2.1 then gives the shape and scales over all components. Nothing
    else of the past is kept but the prototypes' identities, which prediction needs: a batch's
    ``partial_fit`` reads only the distances within that batch.

    State (all of it): ``classes_``, ``class_counts_``, ``n_rounds_``, per component
    ``prototype_ids_``, ``component_class_``, ``cluster_size_`` (|I_j|, prototype
    included), ``n_u_`` / ``mean_u_`` (count and mean of its u > 0 if it is used in
    the estimate, else 0), and the running ``log_geo_mean_u_`` = log u~ over
    ``n_u_total_`` squared distances.

    Parameters
    ----------
    n_components : int, default=4
        New components per class and batch (section 5.5: 4), capped at the class's size in the batch.
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
    cluster_size_ : ndarray of shape (n_components_total,)
        |I_j| of each component, prototype included (the mixing weights).
    n_u_ : ndarray of shape (n_components_total,)
        The count of each component's u > 0 if it is used in the estimate, else 0.
    mean_u_ : ndarray of shape (n_components_total,)
        The mean ubar_j of those u (0 for a component left out).
    log_geo_mean_u_ : float
        log u~, the running log geometric mean of all squared distances used.
    n_u_total_ : int
        The number N of squared distances in u~.

    See Also
    --------
    SchemeII : re-clusters a sample of the past with each batch (section 4.2).
    Retrain : the batch baseline (section 5.5).

    Examples
    --------
    Three batches of two Gaussian blobs, two new components per class and batch; the distance look-up
    records what it is asked for:

    >>> import numpy as np
    >>> from scipy.spatial.distance import cdist
    >>> from hlm.local_mapping import MatrixDistances, SchemeI
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal(0.0, 1.0, (30, 2)), rng.normal(6.0, 1.0, (30, 2)),
    ...                [[0.0, 0.0], [6.0, 6.0], [1.0, -1.0], [5.0, 7.0]]])  # 60 objects to learn, 4 to classify
    >>> y = np.repeat(["a", "b"], 30)
    >>> ids = np.array([f"o{i}" for i in range(64)])
    >>> dist = MatrixDistances(cdist(X, X), ids)
    >>> batches = np.arange(60).reshape(20, 3).T  # 3 batches of 20 objects, 10 of each class
    >>> reads = []
    >>> def recording(rows, cols):
    ...     reads.append((len(rows), len(cols)))
    ...     return dist(rows, cols)
    >>> learner = SchemeI(n_components=2, n_init=5)
    >>> for batch in batches:
    ...     _ = learner.partial_fit(ids[batch], y[batch], recording)
    >>> sorted(set(reads))  # only the 20 x 20 distances within each batch
    [(20, 20)]
    >>> learner.n_rounds_, learner.n_components_, learner.class_counts_
    (3, array([6, 6]), [30, 30])
    >>> " ".join(learner.predict(ids[60:], dist))
    'a b a b'
    """

    def __init__(self, n_components: int = INITIAL_COMPONENTS, **kwargs):
        super().__init__(n_components=n_components, **kwargs)
        self.component_class_ = np.empty(0, dtype=np.intp)
        self.cluster_size_ = np.empty(0)
        self.n_u_ = np.empty(0)
        self.mean_u_ = np.empty(0)
        self.log_geo_mean_u_ = 0.0
        self.n_u_total_ = 0
        self.prototype_ids_ = np.empty(0, dtype=str)

    def partial_fit(self, ids, y, distances: Distances) -> SchemeI:
        """Learn one batch: cluster it per class into new components, then re-estimate by eq. 3.

        Parameters
        ----------
        ids : sequence
            The ids of the batch's objects (unique; compared as strings).
        y : array-like of shape (len(ids),)
            Their labels; a batch may hold a single class, and new classes may appear in any batch.
        distances : callable
            ``distances(rows, cols)`` (ids in, matrix out), e.g. :class:`MatrixDistances`; asked only
            for the distances within the batch.

        Returns
        -------
        self : SchemeI
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
        D = self._lookup(distances, ids, ids, "distances within the batch")
        protos, classes, sizes, n_u, sum_u, log_u = [], [], [], [], [], []
        for k in np.unique(y_idx):
            idx = np.flatnonzero(y_idx == k)
            p, assign = cluster_class(D[np.ix_(idx, idx)], self.n_components, self._round_seed(int(k)),
                                       self.n_init, self.min_cluster_size)
            for j, proto in enumerate(p):
                members = idx[assign == j]
                u = self._u(D[members[members != idx[proto]], idx[proto]])
                u = u[u > 0]
                used = members.size >= self.min_cluster_size and u.size > 0
                protos.append(ids[idx[proto]])
                classes.append(k)
                sizes.append(members.size)
                n_u.append(u.size if used else 0)
                sum_u.append(u.sum() if used else 0.0)
                if used:
                    log_u.append(np.log(u))
        new_log = np.concatenate(log_u) if log_u else np.empty(0)
        # section 4.1: u~ = u~_1^(N_1/N) (prod of the new u)^(1/N), in logs
        N1, N = self.n_u_total_, self.n_u_total_ + new_log.size
        if N:
            self.log_geo_mean_u_ = (N1 * self.log_geo_mean_u_ + new_log.sum()) / N
        self.n_u_total_ = N
        n_u, sum_u = np.asarray(n_u, float), np.asarray(sum_u, float)
        self.prototype_ids_ = np.concatenate([self.prototype_ids_, np.asarray(protos, dtype=str)])
        self.component_class_ = np.concatenate([self.component_class_, np.asarray(classes, dtype=np.intp)])
        self.cluster_size_ = np.concatenate([self.cluster_size_, np.asarray(sizes, float)])
        self.mean_u_ = np.concatenate([self.mean_u_, np.divide(sum_u, n_u, out=np.zeros_like(sum_u), where=n_u > 0)])
        self.n_u_ = np.concatenate([self.n_u_, n_u])
        self._set(self.prototype_ids_, self.component_class_, self.cluster_size_, self.stats())
        return self

    def stats(self) -> ComponentStats:
        """The eq. 3 statistics rebuilt from the stored ones: only the total of log u (= N log u~)
        enters the shape, so it is spread over the components in proportion to their counts.

        Returns
        -------
        ComponentStats
            Per component: the count of u, their sum, and its share of N log u~.
        """
        total = self.n_u_.sum()
        log_share = self.n_u_ / total * self.n_u_total_ * self.log_geo_mean_u_ if total else self.n_u_ * 0.0
        return ComponentStats(self.n_u_.copy(), self.n_u_ * self.mean_u_, log_share)
