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

from hlm.models.okde.gaussians import cholesky, log_gaussians, logsumexp, moment_match
from hlm.models.okde.hellinger import hellinger


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
    ``log_neg_at`` is called only for the region, as it grows.
    """

    def __init__(self, points, point_weights, log_terms, log_prior, log_neg_at, w, mu, cov, H, threshold,
                 log_floor: np.ndarray | None = None):
        self.X, self.pw, self.H = points, point_weights, H
        self.w, self.mu, self.cov = w, mu, cov
        n = mu.shape[0]
        self.log_terms = {j: log_terms[:, j] for j in range(n)}
        self.log_current = logsumexp(log_terms, axis=1)  # log p_i at every point, kept for all of them
        self.log_before = self.log_current
        self.log_prior, self._log_neg_at = log_prior, log_neg_at
        P = len(points)
        self.offset = np.full(P, np.nan)  # log-odds of C+ = offset + log p_i(x), on the region
        self.root_post, self.root_post_neg = np.full(P, np.nan), np.full(P, np.nan)  # sqrt p(C+|x), p(C-|x) before
        self.inside = np.zeros(P, dtype=bool)
        self.moments = {j: (w[j], mu[j], cov[j]) for j in range(n)}  # each node's moment match
        self.active = set(range(n))  # the nodes whose terms make up log_current
        self.threshold2 = threshold**2
        self.cost = 0.0
        if log_floor is None:
            self.log_floor = None
            self._include(np.arange(P))
        else:  # a term of class i (times pi_i) below this is negligible against p0
            self.log_floor = np.maximum(log_floor, log_prior + self.log_before) + np.log(NEGLIGIBLE) - log_prior

    def _include(self, idx: np.ndarray) -> None:
        """Add points to the region: their negatives and the posterior before compression."""
        if idx.size == 0:
            return
        self.offset[idx] = self.log_prior - self._log_neg_at(idx)
        z = self.offset[idx] + self.log_before[idx]
        self.root_post[idx], self.root_post_neg[idx] = np.exp(0.5 * log_expit(z)), np.exp(0.5 * log_expit(-z))
        self.inside[idx] = True

    def accept(self, node: int, a: int, b: int) -> bool:
        (Wa, ma, Sa), (Wb, mb, Sb) = self.moments[a], self.moments[b]
        W, m, S = moment_match(np.array([Wa, Wb]), np.stack([ma, mb]), np.stack([Sa, Sb]))  # associative
        log_new = log_gaussians(self.X, m[None], cholesky((S + self.H)[None]))[:, 0] + np.log(W)
        if self.log_floor is not None:  # grow the region to where the merge moves p_i
            top = np.maximum(np.maximum(self.log_terms[a], self.log_terms[b]), log_new)
            self._include(np.flatnonzero(~self.inside & (top >= self.log_floor)))
        s = self.log_current  # every active term is <= it
        rest = 1.0 - np.exp(self.log_terms[a] - s) - np.exp(self.log_terms[b] - s)
        with np.errstate(divide="ignore"):
            candidate = np.logaddexp(s + np.log(np.maximum(rest, 0.0)), log_new)
        lost = rest < _CANCELLATION  # a's and b's terms were nearly all of it: the difference lost digits
        if lost.any():  # there, sum the other active terms and the new one afresh
            terms = [self.log_terms[j][lost] for j in self.active if j not in (a, b)]
            candidate[lost] = logsumexp(np.column_stack([*terms, log_new[lost]]), axis=1)
        r = self.inside
        z = self.offset[r] + candidate[r]
        d2 = 0.5 * ((self.root_post[r] - np.exp(0.5 * log_expit(z))) ** 2
                    + (self.root_post_neg[r] - np.exp(0.5 * log_expit(-z))) ** 2)
        cost = float(self.pw[r] @ d2)
        if cost > self.threshold2:
            return False
        self.cost, self.log_current = cost, candidate
        self.log_terms[node], self.moments[node] = log_new, (W, m, S)
        self.active -= {a, b}
        self.active.add(node)
        return True


#: cost_region "local": a change of class i's density below this share of p0 at a point is left out of the cost
NEGLIGIBLE = 1e-12

#: below this share of a point's density left after removing two merged components, the rest is summed afresh
_CANCELLATION = 1e-6
