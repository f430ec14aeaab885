"""Subclasses of LLC-PC: Greedy-MPE (Chen, Lu & Boedihardjo, section 5) and the rivals of section 6.1, k-means,
hierarchical clustering (HC) and EM inside each class; spec ``docs/llc-pc-spec.md`` sections 4-5.

Both are *paths*: the subclasses for a total K do not depend on any larger K asked later, so one object
serves every K (``GreedyMPEPath.subclasses(K)``, ``WithinClassPath.subclasses(K)``), and the pairwise models
are kept in a ``PairStore`` keyed by the two subclasses' members.

Randomness: each clustering draws from ``numpy.random.SeedSequence([random_state, purpose, class, key])``:
for Greedy-MPE the key is the split subclass's node in its class's binary split tree (root 1, children
2h and 2h+1), which the split at a step determines, so a step's draws do not depend on K (the path
property of spec 4); for k-means the key is the number of clusters m_i (a class's clustering depends
on (m_i, seed) only); EM starts from that k-means clustering and HC draws nothing.

k-means (2-means for a split) is scipy's ``cluster.vq.kmeans2``: k-means++ seeding, Lloyd's
iterations continued to a fixed point (kmeans2 stops after a fixed number of iterations), ``n_init``
restarts, the run of least inertia kept (ties: the earlier run); runs that leave a cluster empty are
discarded.
"""

from __future__ import annotations

import hashlib
import warnings
from collections import deque
from dataclasses import dataclass, field

import numpy as np
from scipy.cluster.vq import kmeans2, vq

from hlm.llc_pc._mpe import PairModel, cross_pairs, fit_pair, pair_weights

#: SeedSequence purposes
SPLIT, KMEANS = 1, 2
#: EM's covariance floor (scikit-learn's default ``reg_covar``)
REG_COVAR = 1e-6
#: Lloyd iterations per kmeans2 call, and at most in all
LLOYD_BLOCK, LLOYD_MAX = 10, 300


# ---------------------------------------------------------------- k-means
def lloyd(X: np.ndarray, centres: np.ndarray, max_iter: int = LLOYD_MAX) -> tuple[np.ndarray, np.ndarray, float]:
    """Lloyd's k-means from ``centres`` to a fixed point (labels unchanged by one more iteration), by
    ``kmeans2(minit="matrix")``: (labels, centres = the clusters' means, inertia). An emptied cluster keeps
    its centre (kmeans2's rule)."""
    done = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # kmeans2's "One of the clusters is empty"
        while True:
            centres, labels = kmeans2(X, centres, iter=LLOYD_BLOCK, minit="matrix", check_finite=False)
            done += LLOYD_BLOCK
            again = vq(X, centres, check_finite=False)[0]
            if np.array_equal(again, labels) or done >= max_iter:
                break
    inertia = float(((X - centres[labels]) ** 2).sum())
    return labels, centres, inertia


def kpp_centres(X: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """k-means++ initial centres as ``kmeans2(minit="++")`` draws them (scipy's ``_kpp``)."""
    from scipy.cluster.vq import _kpp

    return np.asarray(_kpp(X, k, rng, np))


def kmeans(X: np.ndarray, k: int, n_init: int, rng: np.random.Generator) -> np.ndarray | None:
    """Cluster labels 0..k-1 of the rows of X: ``n_init`` k-means++ restarts drawn in turn from ``rng``,
    the least inertia kept among the runs with no empty cluster (ties: the earlier run); None if every
    run left a cluster empty."""
    best, best_inertia = None, np.inf
    for _ in range(n_init):
        labels, _, inertia = lloyd(X, kpp_centres(X, k, rng))
        if inertia < best_inertia and len(np.unique(labels)) == k:
            best, best_inertia = labels, inertia
    return best


def seeded(random_state: int, purpose: int, class_index: int, key: int) -> np.random.Generator:
    """The generator of one clustering: SeedSequence([random_state, purpose, class, key])."""
    return np.random.default_rng(np.random.SeedSequence([int(random_state), purpose, int(class_index), int(key)]))


def distinct_rows(X: np.ndarray) -> int:
    return len(np.unique(X, axis=0))


# ---------------------------------------------------------------- HC's tree
def merge_order(Z: np.ndarray) -> np.ndarray:
    """The merges (rows of the linkage Z) in scipy's ``cut_tree`` order: by height, and among equal heights
    the later first in a breadth-first walk from the root that visits a node's right child (``Z[k, 1]``)
    before its left (``cut_tree`` inserts each node before the nodes of its height already placed)."""
    n = len(Z) + 1
    visit = np.empty(n - 1, dtype=np.int64)
    queue, seen = deque([2 * n - 2]), 0
    while queue:
        node = queue.popleft()
        if node >= n:
            visit[node - n], seen = seen, seen + 1
            queue.append(int(Z[node - n, 1]))
            queue.append(int(Z[node - n, 0]))
    return np.lexsort((-visit, Z[:, 2]))


def cut(Z: np.ndarray, order: np.ndarray, m: int) -> np.ndarray:
    """Cluster labels of the n objects after the first n - m merges of ``order``: ``cut_tree(Z, m)``'s
    partition (each object's cluster is its highest merged ancestor) in O(n log n) rather than O(n^2), for the
    linkages without inversions that LLC-PC offers (``cut_tree``'s own partitions are not nested under the
    inversions of centroid and median linkage)."""
    n = len(Z) + 1
    merged = np.zeros(n - 1, dtype=bool)
    merged[order[:n - m]] = True
    top = np.arange(2 * n - 1)  # a node's highest merged ancestor, itself if none
    for k in range(n - 2, -1, -1):  # parents before children: a merge joins nodes of lower index
        if merged[k] or top[n + k] != n + k:  # merged, or inside a merged ancestor
            top[int(Z[k, 0])] = top[int(Z[k, 1])] = top[n + k]
    return np.unique(top[:n], return_inverse=True)[1].astype(np.intp)


# ---------------------------------------------------------------- subclasses and their pairs
@dataclass(eq=False)
class Subclass:
    """A subclass: its identity ``key`` (its path's caches are stored under it), class index, members
    (sorted training indices, which key its pair models), creation index ``order`` (Greedy-MPE) or position in
    its class (k-means)."""

    key: tuple
    cls: int
    members: np.ndarray
    order: int
    data: np.ndarray = field(repr=False)  # the members' standardised rows
    pair_key: str = field(default="", repr=False)  # members_key(members): its key in the pair store


class PairStore:
    """The pairwise models, fitted on first use and kept (``models``), oriented from the subclass of the
    smaller class index (f > 0 for it). A model is keyed by the two subclasses' members, not their names:
    a pair fit is a function of the two member lists, so the clusterings of one class at different
    counts share the models of the clusters they have in common (HC's cut at m + 1 keeps m - 1 of the
    cut at m) and fit each pair once."""

    def __init__(self, settings: dict):
        self.settings = settings
        self.models: dict[tuple, PairModel] = {}

    def get(self, a: Subclass, b: Subclass) -> PairModel:
        if a.cls > b.cls:
            a, b = b, a
        key = (a.pair_key, b.pair_key)
        model = self.models.get(key)
        if model is None:
            model = self.models[key] = fit_pair(a.data, b.data, **self.settings)
        return model

    def table(self, subs: list[Subclass]) -> tuple[np.ndarray, np.ndarray, list[PairModel]]:
        """(first, second, models) of the pairs of U among ``subs`` (sorted by class), lexicographic."""
        a, b = cross_pairs(np.array([s.cls for s in subs]))
        return a, b, [self.get(subs[i], subs[j]) for i, j in zip(a, b)]


def members_key(members: np.ndarray) -> str:
    """A member list's key in the pair store: a 128-bit digest of its indices (text, as a saved model stores it)."""
    return hashlib.blake2b(np.ascontiguousarray(members, dtype=np.int64).tobytes(), digest_size=16).hexdigest()


def sorted_subclasses(subs) -> list[Subclass]:
    return sorted(subs, key=lambda s: (s.cls, s.order))


class _Path:
    """Shared part of the two paths: the fit set, the pair store and Q (eq. 1) of a set of subclasses."""

    def __init__(self, X: np.ndarray, y_idx: np.ndarray, n_classes: int, store: PairStore, random_state: int):
        self.X, self.y_idx, self.n_classes, self.store = X, y_idx, n_classes, store
        self.random_state = int(random_state)
        self.class_sizes = np.bincount(y_idx, minlength=n_classes)

    def weights(self, subs: list[Subclass], a: np.ndarray, b: np.ndarray) -> np.ndarray:
        sizes = np.array([len(s.members) for s in subs])
        return pair_weights(sizes[a], sizes[b], len(self.y_idx), self.class_sizes)

    def mpe(self, subs: list[Subclass]) -> float:
        a, b, models = self.store.table(subs)
        return float(self.weights(subs, a, b) @ np.array([m.error for m in models]))

    def subclass(self, key: tuple, cls: int, members: np.ndarray, order: int) -> Subclass:
        return Subclass(key, cls, members, order, np.ascontiguousarray(self.X[members]), members_key(members))


# ---------------------------------------------------------------- Greedy-MPE (section 5)
@dataclass
class Split:
    """One Greedy-MPE step: the pair chosen (creation indices; None for selection "aggregate"/"gain"),
    the subclass split, its two children and Q after the split."""

    pair: tuple[int, int] | None
    parent: Subclass
    children: tuple[Subclass, Subclass]
    mpe: float


class GreedyMPEPath(_Path):
    """Greedy-MPE's sequence of splits, extended on demand (``extend``); ``subclasses(K)`` applies the
    first K - N of them to the classes.

    A step (spec 4): the pairs of U in decreasing F = P_ij-kp E (``pair_error``: E of the criterion or
    the classifier's training error; ties: lexicographic order of (class, creation index)); of the first
    pair, the subclass of the larger intra-class variance (``variance``: trace of the covariance, or the
    sum of squared distances; ties: the pair's first) is split by 2-means, the other if it cannot be
    split (one object, identical objects, or every 2-means run empty), else the next pair. Selection
    "aggregate": the subclass of the largest sum_kp P_ij-kp E; "gain": the largest drop of Q by its
    split (ties: the first subclass). The path stops (``stopped``) when nothing can be split.
    """

    def __init__(self, X, y_idx, n_classes, store, random_state, *, selection: str, pair_error: str,
                 variance: str, n_init: int):
        super().__init__(X, y_idx, n_classes, store, random_state)
        self.selection, self.pair_error, self.variance, self.n_init = selection, pair_error, variance, n_init
        self.roots = [self.subclass((i, 1), i, np.flatnonzero(y_idx == i), i) for i in range(n_classes)]
        self.active = list(self.roots)
        self.splits: list[Split] = []
        self.root_mpe = self.mpe(self.roots)
        self.stopped = False
        self._next_order = n_classes
        self._trials: dict[tuple, tuple | None] = {}
        self._variances: dict[tuple, float] = {}

    def extend(self, K: int) -> None:
        """Split until K subclasses or nothing can be split."""
        while len(self.active) < K and not self.stopped:
            self._step()

    def subclasses(self, K: int) -> list[Subclass]:
        """The subclasses at total K (at most the path's length), sorted by (class, creation index)."""
        active = {s.key: s for s in self.roots}
        for split in self.splits[:max(K - self.n_classes, 0)]:
            del active[split.parent.key]
            active.update((c.key, c) for c in split.children)
        return sorted_subclasses(active.values())

    def mpe_at(self, K: int) -> float:
        steps = min(max(K - self.n_classes, 0), len(self.splits))
        return self.splits[steps - 1].mpe if steps else self.root_mpe

    # -- one step -------------------------------------------------------------
    def _step(self) -> None:
        subs = self.active
        a, b, models = self.store.table(subs)
        w = self.weights(subs, a, b)
        if self.selection == "gain":
            self._by_gain(subs, a, b, w, models)
            return
        err = np.array([m.error if self.pair_error == "criterion" else m.train_error for m in models])
        F = w * err
        if self.selection == "aggregate":
            score = np.bincount(a, F, minlength=len(subs)) + np.bincount(b, F, minlength=len(subs))
            for s in np.argsort(-score, kind="stable"):
                if self._commit(subs[s], None):
                    return
        else:
            for p in np.argsort(-F, kind="stable"):
                s, t = subs[a[p]], subs[b[p]]
                for c in ((s, t) if self._variance(s) >= self._variance(t) else (t, s)):
                    if self._commit(c, (s.order, t.order)):
                        return
        self.stopped = True

    def _by_gain(self, subs, a, b, w, models) -> None:
        """Split the subclass whose split lowers Q most (trial splits and their pairs are kept)."""
        gains = np.full(len(subs), -np.inf)
        E = np.array([m.error for m in models])
        before = np.bincount(a, w * E, minlength=len(subs)) + np.bincount(b, w * E, minlength=len(subs))
        for s, sub in enumerate(subs):
            children = self._children(sub)
            if children is None:
                continue
            others = [t for t in subs if t.cls != sub.cls]
            sizes_c = np.repeat([len(c.members) for c in children], len(others))
            sizes_t = np.tile([len(t.members) for t in others], 2)
            E_after = np.array([self.store.get(c, t).error for c in children for t in others])
            gain = before[s] - pair_weights(sizes_c, sizes_t, len(self.y_idx), self.class_sizes) @ E_after
            gains[s] = -np.inf if np.isnan(gain) else gain  # inf - inf (MPE-LDA, coinciding means)
        if (gains > -np.inf).any():
            self._commit(subs[int(np.argmax(gains))], None)
            return
        self.stopped = True

    def _variance(self, sub: Subclass) -> float:
        v = self._variances.get(sub.key)
        if v is None:
            sse = float(((sub.data - sub.data.mean(axis=0)) ** 2).sum())
            v = self._variances[sub.key] = sse / len(sub.members) if self.variance == "trace" else sse
        return v

    def _children(self, sub: Subclass) -> tuple[Subclass, Subclass] | None:
        """The two halves of ``sub`` by 2-means (cached; None: it cannot be split). The half holding the
        smaller training index is child 2h, the other 2h + 1; their creation index is set on commit."""
        if sub.key in self._trials:
            return self._trials[sub.key]
        children = None
        if len(sub.members) >= 2 and (sub.data != sub.data[0]).any():
            labels = kmeans(sub.data, 2, self.n_init, seeded(self.random_state, SPLIT, sub.cls, sub.key[1]))
            if labels is not None:
                halves = sorted((sub.members[labels == c] for c in (0, 1)), key=lambda m: m[0])
                children = tuple(self.subclass((sub.cls, 2 * sub.key[1] + h), sub.cls, m, -1)
                                 for h, m in enumerate(halves))
        self._trials[sub.key] = children
        return children

    def _commit(self, sub: Subclass, pair) -> bool:
        """Split ``sub`` if it can be split; record the step and Q after it."""
        children = self._children(sub)
        if children is None:
            return False
        for child in children:
            child.order = self._next_order
            self._next_order += 1
        self.active = sorted_subclasses([s for s in self.active if s is not sub] + list(children))
        self.splits.append(Split(pair, sub, children, self.mpe(self.active)))
        return True


# ---------------------------------------------------------------- k-means rival (sections 2, 6.1)
def allocate(K: int, class_sizes, distinct, allocation: str = "equal") -> tuple[np.ndarray, list[int]]:
    """Subclasses per class for a total K (spec 5): (counts, classes capped at their distinct objects).

    "equal": floor(K/N) each, the remainder one each to the largest classes (ties: the smaller index);
    "proportional": largest remainder on the class sizes (exact integer quotas K n_i / n), at least 1
    each (ties: the larger class, then the smaller index). Then each count is capped at its class's
    distinct objects, the excess going one at a time to the next classes in the same order (largest first).
    """
    sizes = np.asarray(class_sizes, dtype=np.int64)
    distinct = np.asarray(distinct, dtype=np.int64)
    N = len(sizes)
    order = sorted(range(N), key=lambda i: (-sizes[i], i))
    if allocation == "equal":
        counts = np.full(N, K // N, dtype=np.int64)
        for i in order[:K - N * (K // N)]:
            counts[i] += 1
    else:
        quota, rest = np.divmod(K * sizes, sizes.sum())
        counts = np.maximum(quota, 1)
        by_rest = sorted(range(N), key=lambda i: (-rest[i], -sizes[i], i))
        for i in (by_rest * K)[:max(K - int(counts.sum()), 0)]:
            counts[i] += 1
        for i in reversed(by_rest * K):
            if counts.sum() <= K:
                break
            if counts[i] > 1:
                counts[i] -= 1
    capped = [int(i) for i in np.flatnonzero(counts > distinct)]
    excess = int(np.maximum(counts - distinct, 0).sum())
    counts = np.minimum(counts, distinct)
    while excess > 0 and (counts < distinct).any():
        for i in order:
            if excess and counts[i] < distinct[i]:
                counts[i] += 1
                excess -= 1
    return counts, capped


class WithinClassPath(_Path):
    """Clusters inside each class (the rivals of section 6.1; the same count per class with ``allocation="equal"``
    and K a multiple of the classes): ``subclasses(K)``
    clusters class i into m_i of ``allocate(K, ...)`` (or the explicit ``counts``) clusters, each clustering
    computed once per (class, m_i) and kept; clusters are ordered by their smallest training index.

    ``clustering``: "kmeans" (``n_init`` k-means++ restarts, the least inertia), "hc" (agglomerative, scipy's
    ``linkage`` with ``linkage`` on the Euclidean distances, cut into m_i clusters; one tree per class serves
    every m_i) or "em" (scikit-learn's ``GaussianMixture`` with full covariances, one run started from the
    k-means clusters, each object to its most probable component).
    """

    def __init__(self, X, y_idx, n_classes, store, random_state, *, allocation: str, n_init: int,
                 counts: np.ndarray | None = None, clustering: str = "kmeans", linkage: str = "average"):
        super().__init__(X, y_idx, n_classes, store, random_state)
        self.allocation, self.n_init, self.fixed_counts = allocation, n_init, counts
        self.clustering_method, self.linkage = clustering, linkage
        self.distinct = np.array([distinct_rows(X[y_idx == i]) for i in range(n_classes)])
        self._clusterings: dict[tuple[int, int], list[Subclass]] = {}
        self._trees: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def counts(self, K: int) -> tuple[np.ndarray, list[int]]:
        if self.fixed_counts is not None:
            return np.asarray(self.fixed_counts, dtype=np.int64), []
        return allocate(K, self.class_sizes, self.distinct, self.allocation)

    def subclasses(self, K: int) -> list[Subclass]:
        counts, _ = self.counts(K)
        return [s for i, m in enumerate(counts) for s in self.clustering(i, int(m))]

    def mpe_at(self, K: int) -> float:
        return self.mpe(self.subclasses(K))

    def clustering(self, i: int, m: int) -> list[Subclass]:
        """Class i in m clusters (fewer if k-means or EM left one empty)."""
        if (i, m) not in self._clusterings:
            members = np.flatnonzero(self.y_idx == i)
            labels = np.zeros(len(members), dtype=np.intp)
            if m > 1:
                labels = {"kmeans": self._kmeans, "hc": self._hc, "em": self._em}[self.clustering_method](i, m)
            groups = sorted((members[labels == c] for c in np.unique(labels)), key=lambda g: g[0])
            self._clusterings[i, m] = [self.subclass((i, m, j), i, g, j) for j, g in enumerate(groups)]
        return self._clusterings[i, m]

    def _rows(self, i: int) -> np.ndarray:
        return self.X[self.y_idx == i]

    def _kmeans(self, i: int, m: int) -> np.ndarray:
        X = self._rows(i)
        found = kmeans(X, m, self.n_init, seeded(self.random_state, KMEANS, i, m))
        if found is not None:
            return found
        # every run left a cluster empty: the first run's non-empty clusters
        return lloyd(X, kpp_centres(X, m, seeded(self.random_state, KMEANS, i, m)))[0]

    def _hc(self, i: int, m: int) -> np.ndarray:
        """The class's tree cut into m clusters (m at most its distinct objects, ``allocate``'s cap)."""
        from scipy.cluster.hierarchy import linkage

        if i not in self._trees:
            Z = linkage(self._rows(i), method=self.linkage, metric="euclidean")
            self._trees[i] = (Z, merge_order(Z))
        return cut(*self._trees[i], m)

    def _em(self, i: int, m: int) -> np.ndarray:
        """EM from the class's k-means clusters (their weights, means and covariances + ``REG_COVAR`` I, as
        scikit-learn initialises from hard responsibilities), one run; each object to its most probable
        component."""
        from sklearn.mixture import GaussianMixture

        X, start = self._rows(i), self._kmeans(i, m)
        groups = [X[start == c] for c in np.unique(start)]
        means = np.array([g.mean(axis=0) for g in groups])
        covariances = np.array([np.cov(g, rowvar=False, bias=True).reshape(X.shape[1], X.shape[1])
                                + REG_COVAR * np.eye(X.shape[1]) for g in groups])
        precisions = np.linalg.inv(covariances)
        precisions = (precisions + precisions.transpose(0, 2, 1)) / 2  # exactly symmetric, as scikit-learn checks
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # ConvergenceWarning
            # the three *_init replace scikit-learn's own start, which "random_from_data" makes cheap and seeded
            gm = GaussianMixture(n_components=len(groups), covariance_type="full", reg_covar=REG_COVAR,
                                 weights_init=np.array([len(g) for g in groups]) / len(X), means_init=means,
                                 precisions_init=precisions, init_params="random_from_data", random_state=0)
            return gm.fit(X).predict(X).astype(np.intp)
