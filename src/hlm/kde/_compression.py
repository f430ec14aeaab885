"""Compression of a class's sample model by pairwise merging along a binary tree (spec 4.3, 5).

The tree: centroid linkage of the component means (each coordinate divided by
its sd across the means). The bottom-up search visits the internal nodes in
merge order; a node is merged iff both children are merged (leaves are) and
the criterion accepts it. oKDE's criterion is local (the Hellinger distance
between the node's members and their moment match, :func:`local_hellinger`);
odKDE's is cumulative (:class:`ClassifierDistance`, the paper's eqs. 4-7).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy.cluster.hierarchy import linkage
from scipy.special import log_expit

from hlm.kde import _compression_loops as kernels
from hlm.kde._gaussians import cholesky, log_gaussians, logsumexp, moment_match
from hlm.kde._hellinger import hellinger


def merge_tree(mu: np.ndarray) -> list[tuple[int, int]]:
    """Children (a, b) of internal node M + t for t = 0..M-2, in merge order (scipy's linkage numbering)."""
    M = mu.shape[0]
    if M < 2:
        return []
    sd = mu.std(axis=0)
    Z = linkage(mu / np.where(sd > 0, sd, 1.0), method="centroid")
    return [(int(a), int(b)) for a, b in Z[:, :2]]


def bottom_up(n_leaves: int, tree: list[tuple[int, int]], accept: Callable[[int, int, int], bool],
              min_components: int) -> list[int]:
    """The maximal merged nodes of the bottom-up search (spec 4.3): node M + t is merged iff its
    children are and ``accept(node, a, b)``; a rejected node blocks its ancestors. Nodes are then
    split (highest first) until there are at least ``min_components`` (or only leaves)."""
    merged = [True] * n_leaves + [False] * len(tree)
    for t, (a, b) in enumerate(tree):
        node = n_leaves + t
        merged[node] = merged[a] and merged[b] and accept(node, a, b)
    out, stack = [], [n_leaves + len(tree) - 1] if tree else list(range(n_leaves))
    while stack:
        node = stack.pop()
        if merged[node]:
            out.append(node)
        else:
            stack.extend(tree[node - n_leaves])
    while len(out) < min_components and max(out) >= n_leaves:
        top = max(out)
        out.remove(top)
        out.extend(tree[top - n_leaves])
    return sorted(out)


def members(node: int, n_leaves: int, tree: list[tuple[int, int]]) -> list[int]:
    """The leaves under ``node``."""
    if node < n_leaves:
        return [node]
    a, b = tree[node - n_leaves]
    return members(a, n_leaves, tree) + members(b, n_leaves, tree)


def local_hellinger(w: np.ndarray, mu: np.ndarray, cov: np.ndarray, H: np.ndarray, threshold: float,
                    tree: list[tuple[int, int]]) -> Callable[[int, int, int], bool]:
    """oKDE's criterion: D_H(members' KDE, KDE of their moment match) <= threshold (spec 4.3)."""
    n = mu.shape[0]

    def accept(node: int, a: int, b: int) -> bool:
        idx = members(node, n, tree)
        W, m, S = moment_match(w[idx], mu[idx], cov[idx])
        return hellinger((w[idx] / W, mu[idx], cov[idx] + H), (np.ones(1), m[None], (S + H)[None])) <= threshold

    return accept


class ClassifierDistance:
    """odKDE's compression cost (the paper's eqs. 4-7): the expected Hellinger-type distance between the
    two-class posteriors p(C+ | x) of class i against the rest, before and after compression.

    ``points``/``point_weights`` are the quadrature points of p0 = sum_c pi_c p_KDE(x | c) (sigma points or
    component means) and their weights omega_i W_j;
    ``log_terms`` (P, M) the log w_j N(x; mu_j, Sigma_j + H) of class i's components there,
    ``log_prior`` log pi_i, and ``log_neg_at(index)`` log sum_{c != i} pi_c p_KDE(x | c) at those points.

    ``log_floor`` None: the cost sums over every point (cost_region global). Else (P,) a lower bound of
    log p0 at each point (the term of the component the point belongs to), and the cost sums over
    the region where a merge tried so far moves class i's density by more than ``NEGLIGIBLE`` of p0: the
    points where pi_i times a merged member's or the merged component's term exceeds ``NEGLIGIBLE`` times
    the floor (or times pi_i p_i, also a lower bound of p0). Elsewhere a merge moves p(C+ | x) by at most
    3 ``NEGLIGIBLE``, so the points left out add at most 3 ``NEGLIGIBLE`` per accepted merge to the cost.

    ``log_neg_floor`` (P,): a lower bound of log sum_{c != i} pi_c p_KDE(x | c) at each point (-inf where none
    is known). :meth:`accept` decides by certified bounds (spec 14, "Decisions by bounds"): a point's
    negatives, the expensive part, are evaluated only where the bound of its D^2 from the ones known
    so far cannot settle the decision, and each point at most once per compression.
    """

    def __init__(self, points, point_weights, log_terms, log_prior, log_neg_at, w, mu, cov, H, threshold,
                 log_floor: np.ndarray | None = None, log_neg_floor: np.ndarray | None = None):
        self.X, self.pw, self.H = points, point_weights, H
        n, P = mu.shape[0], len(points)
        self.n_leaves = n
        # every node's terms log w_j N(x; mu_j, Sigma_j + H) as rows (leaves first, node M + t of the tree next)
        self.terms = np.empty((max(2 * n - 1, 1), P))
        self.terms[:n] = log_terms.T
        self.is_active = np.zeros(len(self.terms), dtype=bool)  # the nodes whose terms make up log_current
        self.is_active[:n] = True
        self.log_current = logsumexp(log_terms, axis=1)  # log p_i at every point, kept for all of them
        self.log_before = self.log_current
        self.log_prior, self._log_neg_at = log_prior, log_neg_at
        # the largest log-odds of C+ before compression that the floor allows: offset <= log pi_i - floor
        # (+ _FLOOR_MARGIN: the negatives' expanded quadratic form may fall below the floor by its rounding)
        self.log_odds_max = (np.full(P, np.inf) if log_neg_floor is None
                             else log_prior - log_neg_floor + self.log_before + _FLOOR_MARGIN)
        self.offset = np.full(P, np.nan)  # log-odds of C+ = offset + log p_i(x), where known
        self.root_post, self.root_post_neg = np.full(P, np.nan), np.full(P, np.nan)  # sqrt p(C+|x), p(C-|x) before
        self.known = np.zeros(P, dtype=bool)  # the points whose negatives have been evaluated
        # the accepted model's weighted D^2 (known points) or its bound (the others), on the region, and their sums
        self.part = np.zeros(P)
        self.exact_sum, self.bound_sum = 0.0, 0.0
        self.moments = {j: (w[j], mu[j], cov[j]) for j in range(n)}  # each node's moment match
        self.threshold2 = threshold**2
        self._accepted_region = np.zeros(P, dtype=bool)  # the region of the last accepted merge (cost = 0 before)
        self._cost = 0.0
        self.inside = np.zeros(P, dtype=bool)
        self.eager = P <= EAGER_POINTS  # every point's negatives at once costs less than bounding them
        if self.eager:
            self._evaluate(np.arange(P))
        if log_floor is None:
            self.log_floor = None
            self._join(np.arange(P))
        else:  # a term of class i (times pi_i) below this is negligible against p0
            self.log_floor = np.maximum(log_floor, log_prior + self.log_before) + np.log(NEGLIGIBLE) - log_prior

    def _join(self, idx: np.ndarray) -> None:
        """Add points to the region: their parts of the accepted model's cost join the sums (exact where their
        negatives are known, bounds elsewhere)."""
        self.inside[idx] = True
        d_exact, d_bound = self._parts(idx, self.log_current, self.part)
        self.exact_sum += d_exact
        self.bound_sum += d_bound

    def _parts(self, idx: np.ndarray, log_p: np.ndarray, part: np.ndarray) -> tuple[float, float]:
        """``part`` at the points ``idx`` for class i's density ``log_p`` (weighted D^2, or its bound where the
        negatives are unknown), in place; the changes of the known parts' sum and of the bounds' sum."""
        return kernels.parts(idx, log_p, self.known, self.log_before, self.offset, self.root_post,
                             self.root_post_neg, self.log_odds_max, self.pw, part, _BOUND_SLACK, _BOUND_FLOOR)

    @property
    def cost(self) -> float:
        """The cost of the merges accepted so far (eq. 7 on their region), evaluated exactly on demand."""
        if self._cost is None:  # without marking points known: the sums of the parts stay as they are
            r = np.flatnonzero(self._accepted_region)
            offset = self.log_prior - self._log_neg_at(r)
            self._cost = float(self.pw[r] @ posterior_distance(offset + self.log_before[r],
                                                                self.log_current[r] - self.log_before[r]))
        return self._cost

    def _evaluate(self, idx: np.ndarray) -> None:
        """Evaluate the points' negatives and their posteriors before compression."""
        if idx.size == 0:
            return
        self.offset[idx] = self.log_prior - self._log_neg_at(idx)
        self.root_post[idx], self.root_post_neg[idx] = _root_posteriors(self.offset[idx] + self.log_before[idx])
        self.known[idx] = True

    def accept(self, node: int, a: int, b: int) -> bool:
        n = len(self.terms)
        if not (self.n_leaves <= node < n and 0 <= a < n and 0 <= b < n and a != b and not self.is_active[node]
                and self.is_active[a] and self.is_active[b]):  # the compiled code writes row ``node`` unchecked
            raise IndexError(f"cannot merge nodes {a} and {b} into node {node}: two active nodes into a new "
                             f"one in [{self.n_leaves}, {len(self.terms)}) are needed")
        W, m, S, L, positive = kernels.merged_gaussian(*self.moments[a], *self.moments[b], self.H)
        if not positive:  # not positive definite in the compiled factorisation: LAPACK's, with jitter if need be
            L = cholesky((S + self.H)[None])[0]
        args = (self.X, m, L, np.log(W), self.terms, node, a, b, np.flatnonzero(self.is_active), self.log_current,
                _NO_FLOOR if self.log_floor is None else self.log_floor, self.inside, _CANCELLATION)
        # compiled where the numpy calls' overhead dominates, numpy's vectorised transcendentals above
        candidate, grown, moved = (kernels.merged_terms if self.eager else merged_terms)(*args)
        if self.log_floor is not None:  # grow the region to where the merge moves p_i
            self._join(np.flatnonzero(grown))
        if not self._within(candidate, np.flatnonzero(moved)):
            return False
        self._accepted_region = self.inside.copy()
        self._cost = None
        self.log_current = candidate
        self.moments[node] = (W, m, S)
        self.is_active[[a, b]] = False
        self.is_active[node] = True
        return True

    def _within(self, candidate: np.ndarray, moved: np.ndarray) -> bool:
        """Whether the candidate's cost over the region is at most the threshold, and if so make it the accepted
        model's. Only the points ``moved`` (in the region, where the candidate's log p_i differs from the
        accepted model's) change their parts; where the negatives are unknown the parts are bounds, and the
        points with the largest bounds are evaluated until the bounds decide."""
        part = self.part.copy()  # the candidate's parts
        d_exact, d_bound = self._parts(moved, candidate, part)
        exact, bound = self.exact_sum + d_exact, self.bound_sum + d_bound
        evaluated = []
        while exact <= self.threshold2 < exact + bound:
            todo = np.flatnonzero(self.inside & ~self.known)
            bound = float(part[todo].sum())  # afresh, against the drift of the updated sum
            if exact + bound <= self.threshold2:
                break
            slack = self.threshold2 - exact
            big = todo[part[todo] > slack / len(todo)]  # the others' bounds sum to at most the slack
            big = big[np.argsort(-part[big], kind="stable")] if big.size else todo
            rest = bound - np.concatenate([[0.0], np.cumsum(part[big])])  # the bounds left after big[:n]
            n = min(max(int(np.searchsorted(-rest, -slack, side="left")), _MIN_BATCH), len(big))
            batch = big[:n]
            self._evaluate(batch)
            bound -= float(part[batch].sum())
            self._parts(batch, candidate, part)
            exact += float(part[batch].sum())
            evaluated.append(batch)
        if exact > self.threshold2:  # rejected: the points evaluated join the accepted model's exact sum
            if evaluated:
                batch = np.concatenate(evaluated)
                self.bound_sum -= float(self.part[batch].sum())
                self._parts(batch, self.log_current, self.part)
                self.exact_sum += float(self.part[batch].sum())
            return False
        self.part, self.exact_sum, self.bound_sum = part, exact, bound
        return True


def merged_terms(X, m, L, log_w, terms, node, a, b, active, log_current, log_floor, inside, cancellation):
    """numpy's :func:`kernels.merged_terms` (the same outputs, to rounding; vectorised, for many points)."""
    log_new = log_gaussians(X, m[None], L[None])[:, 0] + log_w
    terms[node] = log_new
    grown = np.zeros(len(X), dtype=bool)
    if len(log_floor):
        grown = ~inside & (np.maximum(np.maximum(terms[a], terms[b]), log_new) >= log_floor)
    s = log_current
    with np.errstate(divide="ignore", invalid="ignore"):  # NaN where p_i is 0 (s = -inf): summed afresh below
        rest = 1.0 - np.exp(terms[a] - s) - np.exp(terms[b] - s)
        candidate = np.logaddexp(s + np.log(np.maximum(rest, 0.0)), log_new)
    lost = np.flatnonzero(~(rest >= cancellation))
    if lost.size:  # a's and b's terms were nearly all of p_i: there, sum the others and the new one afresh
        others = active[(active != a) & (active != b)]
        candidate[lost] = logsumexp(np.concatenate([terms[np.ix_(others, lost)], log_new[None, lost]]), axis=0)
    return candidate, grown, (inside | grown) & (candidate != log_current)


def posterior_distance(log_odds: np.ndarray, shift: np.ndarray) -> np.ndarray:
    """D^2 of eq. 5 at a point: the squared Hellinger distance of Bernoulli(sigmoid(t)) and
    Bernoulli(sigmoid(t + s)), t the log-odds of C+ before compression and s the change of log p_i."""
    pos0, neg0 = _root_posteriors(log_odds)
    pos1, neg1 = _root_posteriors(log_odds + shift)
    return 0.5 * ((pos0 - pos1) ** 2 + (neg0 - neg1) ** 2)


def posterior_distance_bound(log_odds_max: np.ndarray, shift: np.ndarray) -> np.ndarray:
    """The largest :func:`posterior_distance` over log-odds t <= ``log_odds_max``, for changes s of log p_i.
    As a function of t, D^2 is symmetric about t = -s/2 (swap C+ and C-), rises to its maximum there and falls
    beyond, so the bound is its value at t = min(log_odds_max, -s/2). It is evaluated in the closed form
    D^2 = 1 - (1 + e^(t + s/2)) / sqrt((1 + e^t)(1 + e^(t + s))) (with t <= 0, swapping C+ and C- if not), which
    costs two exponentials but loses digits to the difference from 1: the bound is raised by ``_BOUND_SLACK`` of
    itself and ``_BOUND_FLOOR``, above both evaluations' rounding; 1 (D^2's bound) where it is undefined."""
    t = np.minimum(log_odds_max, -0.5 * shift)
    swap = t > 0
    t, shift = np.where(swap, -t, t), np.where(swap, -shift, shift)
    with np.errstate(invalid="ignore", over="ignore"):  # each exponential apart: e^t may underflow, e^(t+s) not
        bound = 1.0 - (1.0 + np.exp(t + 0.5 * shift)) / np.sqrt((1.0 + np.exp(t)) * (1.0 + np.exp(t + shift)))
    return np.where(np.isnan(bound), 1.0, np.maximum(bound, 0.0) * _BOUND_SLACK + _BOUND_FLOOR)


def _root_posteriors(z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """sqrt(sigmoid(z)) and sqrt(sigmoid(-z)), in the log domain."""
    return np.exp(0.5 * log_expit(z)), np.exp(0.5 * log_expit(-z))


#: cost_region "local": a change of class i's density below this share of p0 at a point is left out of the cost
NEGLIGIBLE = 1e-12

#: below this share of a point's density left after removing two merged components, the rest is summed afresh
_CANCELLATION = 1e-6

#: a bound of D^2 is raised by this factor and this term, above the rounding of the two ways of evaluating it
_BOUND_SLACK = 1.0 + 1e-9
_BOUND_FLOOR = 2e-15

#: added to the largest log-odds: above the error of gaussians.log_gaussians_from (up to 1e-7 for a component of
#: condition number 1e7) by which the evaluated negatives may fall below their floor
_FLOOR_MARGIN = 1e-6

#: merged_terms' log_floor when the region is every point
_NO_FLOOR = np.empty(0)

#: up to this many points in all, the negatives are evaluated as points join the region, without bounds
EAGER_POINTS = 2000

#: the fewest points whose negatives one evaluation asks for (the matrix product's overhead)
_MIN_BATCH = 32
