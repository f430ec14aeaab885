"""HLM incremental Scheme II (paper section 4.2): weighted VSH on a sample of each past cluster
(``SchemeII.draw_sample``, weights :func:`sample_weight`) plus the new batch."""

from __future__ import annotations

import math

import numpy as np

from hlm.gamma import ComponentStats
from hlm.incremental.distances import Distances
from hlm.incremental.learner import COMPONENT_STEP, INITIAL_COMPONENTS, Incremental, cluster_class

#: section 5.5: Scheme II samples v points per past cluster
SAMPLE_SIZE = 4


def sample_weight(cluster_size: int, v: int = SAMPLE_SIZE) -> float:
    """Scheme II weight of a point sampled from a cluster of |I_j| = ``cluster_size`` (section 4.2)."""
    return math.sqrt((cluster_size + 1) / (v + 1)) if cluster_size > v else 1.0


class SchemeII(Incremental):
    """HLM incremental Scheme II (section 4.2): weighted VSH on a sample of the past plus the new batch.

    Keeps the ids and labels of everything seen and each one's current cluster (the
    sampling and the reassignment need them). ``v`` points are sampled per past
    cluster; ``estimate`` is "eq3" (the Gamma statistics of all data, after
    reassignment; the paper's default) or "eq4" (of the weighted sample and the new
    batch only: fewer squared distances to accumulate; the reassignment is still
    done, as the next round samples from the clusters). Mixing weights are the
    cluster sizes after reassignment in both cases.
    ``n_components`` is the initial number per class; each round adds ``step``.
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
        """Components per class this round (4, 6, 8, ...; section 5.5)."""
        return self.n_components + self.step * (self.n_rounds_ - 1)

    def draw_sample(self, rng: np.random.Generator, component: int) -> tuple[np.ndarray, np.ndarray]:
        """(positions in ``seen_ids_``, weights) sampled from one past cluster (section 4.2)."""
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
