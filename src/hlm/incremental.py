"""Incremental learning with HLM (paper section 4; protocol of section 5.5).

Three learners with the same API, all clustering by VSH:

* :class:`SchemeI` (section 4.1): each batch is clustered on its own into
  ``n_components`` new components per class; the model keeps only each
  component's sufficient statistics (|I_j|, ubar_j) and the running geometric
  mean u~ of all squared distances with its count, updated by
  u~ = u~_1^(N_1/N) (prod_new u_i)^(1/N). Nothing else of the past is kept but
  the prototypes' identities, which prediction needs.
* :class:`SchemeII` (section 4.2): from each existing cluster, v points plus its
  prototype are sampled (all of it if |I_j| <= v; |I_j| counts the cluster's
  points besides its prototype) with weight sqrt((|I_j| + 1) / (v + 1)) (1 if |I_j| <= v); new points weigh 1; weighted VSH
  on R = H D clusters the sample and the new batch into 2 more components per
  class than the previous round; the unsampled past points are reassigned to
  their nearest new prototype and eq. 3 is applied to all data
  (``estimate="eq4"``: eq. 4 on the weighted sample and the new batch only).
* :class:`Retrain`: batch Mixture HLM (VSH) on everything seen so far, with
  Scheme II's number of components per class at each round.

Objects are named by ids; distances come from a callable ``distances(rows,
cols)`` (ids in, matrix out), e.g. :class:`MatrixDistances` over a full matrix.
A learner asks only for what its scheme needs, so Scheme I never touches the
distances of past batches. Clusters with fewer than ``min_cluster_size`` objects
(prototype included) are left out of the estimate (section 5.5: 3).

Unlike a classifier's ``fit`` (which refuses a single class), ``partial_fit`` accepts
a batch of a single class, as a later batch can add classes; ``predict`` before any
``partial_fit`` raises scikit-learn's ``NotFittedError``.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence

import numpy as np

from hlm.clustering import cluster
from hlm.errors import DataError
from hlm.gamma import ComponentStats
from hlm.models._base import fit_classes
from hlm.models.mixture_hlm import HLMModel, MixtureHLM, estimate_scales

Distances = Callable[[np.ndarray, np.ndarray], np.ndarray]

#: section 5.5: components per class at the start (and, in Scheme I, per new batch)
INITIAL_COMPONENTS = 4
#: section 5.5: Scheme II (and Retrain) add this many components per class each round
COMPONENT_STEP = 2
#: section 5.5: Scheme II samples v points per past cluster
SAMPLE_SIZE = 4


class MatrixDistances:
    """``distances(rows, cols)`` from a full distance matrix whose rows/columns are ``ids``."""

    def __init__(self, D, ids: Sequence):
        self._D = np.asarray(D, dtype=np.float64)
        ids = np.asarray(ids).astype(str)
        if self._D.ndim != 2 or self._D.shape != (len(ids), len(ids)):
            raise DataError(f"MatrixDistances: need a {len(ids)} x {len(ids)} matrix, got {self._D.shape}")
        self._pos = {i: k for k, i in enumerate(ids)}
        if len(self._pos) != len(ids):
            raise DataError("MatrixDistances: duplicate ids")

    def __call__(self, rows, cols) -> np.ndarray:
        return self._D[np.ix_(self._positions(rows), self._positions(cols))]

    def _positions(self, ids) -> np.ndarray:
        ids = np.asarray(ids).astype(str)
        missing = [i for i in ids if i not in self._pos]
        if missing:
            raise DataError(f"no distances for object(s) {', '.join(missing[:5])}"
                            f"{' ...' if len(missing) > 5 else ''} ({len(missing)} missing)")
        return np.fromiter((self._pos[i] for i in ids), dtype=np.intp, count=len(ids))


def component_schedule(round_: int, scheme: str) -> int:
    """Components per class after round ``round_`` (1 = the initial batch), section 5.5.

    ``scheme_i``: 4 new ones per batch, so 4 r in total; ``scheme_ii`` and
    ``retrain``: 4 + 2 (r - 1). (Capped by the class size when clustering.)
    """
    if round_ < 1:
        raise ValueError("rounds are numbered from 1")
    if scheme == "scheme_i":
        return INITIAL_COMPONENTS * round_
    return INITIAL_COMPONENTS + COMPONENT_STEP * (round_ - 1)


def sample_weight(cluster_size: int, v: int = SAMPLE_SIZE) -> float:
    """Scheme II weight of a point sampled from a cluster of |I_j| = ``cluster_size`` (section 4.2)."""
    return math.sqrt((cluster_size + 1) / (v + 1)) if cluster_size > v else 1.0


class _Incremental:
    """Shared bookkeeping: classes seen, batch checks, prediction from the prototypes."""

    def __init__(self, n_components: int = INITIAL_COMPONENTS, n_init: int = 20, min_cluster_size: int = 3,
                 squared: bool = True, round_shape: bool = True, random_state: int = 0):
        self.n_components = n_components
        self.n_init = n_init
        self.min_cluster_size = min_cluster_size
        self.squared = squared
        self.round_shape = round_shape
        self.random_state = random_state
        self.classes_: list = []
        self.class_counts_: list[int] = []
        self.n_rounds_ = 0

    # -- input ------------------------------------------------------------------
    def _check_batch(self, ids, y, distances) -> tuple[np.ndarray, np.ndarray] | None:
        """(ids as str, class indices), new classes appended; None (with a warning) for an empty batch."""
        ids = np.asarray(ids).astype(str)
        y = np.asarray(y)
        if y.ndim != 1:
            raise DataError(f"partial_fit: y must be 1-D (one label per object), got an array of shape {y.shape}")
        if ids.ndim != 1 or len(ids) != len(y):
            raise DataError(f"partial_fit: {len(ids)} ids but {len(y)} labels")
        if len(ids) == 0:
            warnings.warn("partial_fit: empty batch, nothing to learn (model unchanged)", UserWarning, stacklevel=3)
            return None
        try:  # missing labels, mixed label types; a batch may hold a single class
            fit_classes(y, len(y), min_classes=1)
        except DataError as exc:
            raise DataError(f"partial_fit{str(exc).removeprefix('fit')}") from None
        if len(set(ids)) != len(ids):
            raise DataError("partial_fit: duplicate ids in the batch")
        if not callable(distances):
            raise DataError("partial_fit: distances must be a callable distances(rows, cols), e.g. MatrixDistances")
        for label in y:
            if label not in self.classes_:  # a class never seen before gets its components now
                self.classes_.append(label)
                self.class_counts_.append(0)
        y_idx = np.array([self.classes_.index(label) for label in y], dtype=np.intp)
        for k in y_idx:
            self.class_counts_[k] += 1
        self.n_rounds_ += 1
        return ids, y_idx

    def _lookup(self, distances: Distances, rows, cols, what: str) -> np.ndarray:
        try:
            D = np.asarray(distances(np.asarray(rows), np.asarray(cols)), dtype=np.float64)
        except (KeyError, IndexError, DataError) as exc:
            raise DataError(f"partial_fit: {what}: {exc}") from None
        if D.shape != (len(rows), len(cols)) or not np.isfinite(D).all() or (D < 0).any():
            raise DataError(f"partial_fit: {what}: expected {len(rows)} x {len(cols)} finite non-negative "
                            f"distances, got shape {D.shape}")
        return D

    def _round_seed(self, k: int) -> int:
        """Seed of this round for class k (k = -1: the sampling), from (random_state, round, k)."""
        return int(np.random.SeedSequence([self.random_state, self.n_rounds_, k + 1]).generate_state(1)[0])

    # -- prediction -------------------------------------------------------------
    def model(self) -> HLMModel:
        """The current mixture (prototypes named by ``prototype_ids_``)."""
        if not self.n_rounds_:
            from sklearn.exceptions import NotFittedError

            raise NotFittedError(f"{type(self).__name__} has seen no data yet; call partial_fit first")
        return self._model

    def predict_log_scores(self, test_ids, distances: Distances) -> np.ndarray:
        model = self.model()
        D = np.asarray(distances(np.asarray(test_ids).astype(str), self.prototype_ids_), dtype=np.float64)
        return model.log_scores(D)

    def predict(self, test_ids, distances: Distances) -> np.ndarray:
        scores = self.predict_log_scores(test_ids, distances)
        return np.asarray(self.classes_, dtype=object)[np.argmax(scores, axis=1)]

    @property
    def n_components_(self) -> np.ndarray:
        """Components per class (in ``classes_`` order)."""
        return np.bincount(self.model().component_class, minlength=len(self.classes_))

    def _set(self, proto_ids, comp_class, comp_count, stats: ComponentStats) -> None:
        """Eq. 3/4 with shrinkage over all components; prototypes named by id."""
        comp_class = np.asarray(comp_class, dtype=np.intp)
        if stats.weight.sum() <= 0:
            raise DataError("partial_fit: no cluster yet has enough objects to estimate the Gamma shape and scales")
        scale, shapes, _ = estimate_scales(stats, comp_class, len(self.classes_), "common", self.round_shape)
        counts = np.asarray(comp_count, dtype=np.float64)
        totals = np.bincount(comp_class, counts, minlength=len(self.classes_))
        n = np.asarray(self.class_counts_, dtype=np.float64)
        self.prototype_ids_ = np.asarray(proto_ids).astype(str)
        self._model = HLMModel(
            classes=[str(c) for c in self.classes_], class_prior=(n / n.sum()).tolist(),
            prototype_index=list(range(len(comp_class))), component_class=comp_class.tolist(),
            weight=(counts / totals[comp_class]).tolist(), scale=scale.tolist(), shape=float(shapes[0]),
            squared=self.squared,
        )

    def _u(self, D_member_proto: np.ndarray) -> np.ndarray:
        return D_member_proto**2 if self.squared else D_member_proto


def _cluster_class(D: np.ndarray, M: int, seed: int, n_init: int, min_cluster_size: int, weights=None):
    """VSH of one class into min(M, n) clusters: (prototype positions, assignment); every object is its
    own prototype when the class has fewer than ``min_cluster_size`` objects (as ``MixtureHLM``)."""
    n = D.shape[0]
    if n < min_cluster_size:
        return np.arange(n), np.arange(n)
    res = cluster(D, min(M, n), "vsh", seed=seed, n_init=n_init, weights=weights)
    return np.asarray(res.prototypes), np.asarray(res.assignment)


class SchemeI(_Incremental):
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

    def partial_fit(self, ids, y, distances: Distances) -> "SchemeI":
        checked = self._check_batch(ids, y, distances)
        if checked is None:
            return self
        ids, y_idx = checked
        D = self._lookup(distances, ids, ids, "distances within the batch")
        protos, classes, sizes, n_u, sum_u, log_u = [], [], [], [], [], []
        for k in np.unique(y_idx):
            idx = np.flatnonzero(y_idx == k)
            p, assign = _cluster_class(D[np.ix_(idx, idx)], self.n_components, self._round_seed(int(k)),
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


class SchemeII(_Incremental):
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

    def partial_fit(self, ids, y, distances: Distances) -> "SchemeII":
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
            p, _ = _cluster_class(D, M, self._round_seed(int(k)), self.n_init, self.min_cluster_size, weights=w)
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


class _BatchMixtureHLM(MixtureHLM):
    """Mixture HLM that also fits a single class: an incremental learner's first batches may hold
    one (a later batch can add classes), unlike a classifier's training set."""

    _min_classes = 1


class Retrain(_Incremental):
    """The baseline of section 5.5: batch Mixture HLM (VSH) on all data seen so far, refitted each round
    with Scheme II's number of components per class (4, 6, 8, ...)."""

    def __init__(self, n_components: int = INITIAL_COMPONENTS, step: int = COMPONENT_STEP, **kwargs):
        super().__init__(n_components=n_components, **kwargs)
        self.step = step
        self.seen_ids_ = np.empty(0, dtype=str)
        self.seen_y_: list = []

    def partial_fit(self, ids, y, distances: Distances) -> "Retrain":
        checked = self._check_batch(ids, y, distances)
        if checked is None:
            return self
        ids, _ = checked
        self.seen_ids_ = np.concatenate([self.seen_ids_, ids])
        self.seen_y_ = [*self.seen_y_, *np.asarray(y).tolist()]
        D = self._lookup(distances, self.seen_ids_, self.seen_ids_, "distances among all seen objects")
        M = self.n_components + self.step * (self.n_rounds_ - 1)
        labels = np.array([self.classes_.index(label) for label in self.seen_y_])
        fit = _BatchMixtureHLM(n_components=M, clustering="vsh", n_init=self.n_init,
                               min_cluster_size=self.min_cluster_size, squared=self.squared,
                               round_shape=self.round_shape, random_state=self._round_seed(0) % 2**31).fit(D, labels)
        model = fit.model()
        # MixtureHLM numbers only the classes present; map them to ours (all are present: all data seen)
        self.prototype_ids_ = self.seen_ids_[fit.prototypes_]
        self._model = HLMModel(
            classes=[str(c) for c in self.classes_], class_prior=model.class_prior,
            prototype_index=list(range(len(fit.prototypes_))),
            component_class=[int(fit.classes_[c]) for c in model.component_class], weight=model.weight,
            scale=model.scale, shape=model.shape, squared=self.squared,
        )
        return self
