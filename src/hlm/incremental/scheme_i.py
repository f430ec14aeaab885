"""HLM incremental Scheme I (paper section 4.1): each batch gets its own components; only their
sufficient statistics and the running geometric mean of the squared distances are kept."""

from __future__ import annotations

import numpy as np

from hlm.gamma import ComponentStats
from hlm.incremental.distances import Distances
from hlm.incremental.learner import INITIAL_COMPONENTS, Incremental, cluster_class


class SchemeI(Incremental):
    """HLM incremental Scheme I (section 4.1): new components per batch, sufficient statistics only.

    State (all of it): ``classes_``, ``class_counts_``, ``n_rounds_``, per component
    ``prototype_ids_``, ``component_class_``, ``cluster_size_`` (|I_j|, prototype
    included), ``n_u_`` / ``mean_u_`` (count and mean of its u > 0 if it is used in
    the estimate, else 0), and the running ``log_geo_mean_u_`` = log u~ over
    ``n_u_total_`` squared distances.
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
        enters the shape, so it is spread over the components in proportion to their counts."""
        total = self.n_u_.sum()
        log_share = self.n_u_ / total * self.n_u_total_ * self.log_geo_mean_u_ if total else self.n_u_ * 0.0
        return ComponentStats(self.n_u_.copy(), self.n_u_ * self.mean_u_, log_share)
