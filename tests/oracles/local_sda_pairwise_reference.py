"""The row-by-row reference of pairwise local SDA (docs/local-sda-family-spec.md section 4), which the
compiled kernel ``_pairwise_predict_rows`` repeats.

Obvious numpy code on top of local SDA's reference (tests/oracles/local_sda_reference.py: the support's
tilted mean and log Z, ``solve_lambda`` with scipy's ``brentq``, the local centroids of the fallback):
one row's pairwise constraints c_gh of eq. (8) and their lambdas (``fit_row``), the log marginal of
eq. (7) (``log_marginal``), the class scores of eqs. (9) and (1) (``log_scores``) and the decision with
local SDA's fallback and tie rules (``predict_row``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import logsumexp

from hlm.neighbors._knn import break_vote_ties
from oracles.local_sda_reference import (
    BOUNDARY_RTOL,
    local_centroids,
    solve_lambda,
    support_log_z,
    support_r,
)


@dataclass
class PairwiseRowModel:
    """One test row's pairwise model: the classes of G_x, their neighbours, c_gh, lambda_gh, statuses."""

    classes: np.ndarray  # class indices of G_x, ascending
    members: list[np.ndarray]  # N_h per class of G_x, in neighbour order
    c: np.ndarray  # c[g, h], eq. (8)
    lam: np.ndarray  # lambda[g, h]
    status: np.ndarray  # "ok" | "boundary" | "cap" | "unsolved" per (g, h)
    log_prior: np.ndarray


def pairwise_constraints(S: np.ndarray, members: list[np.ndarray]) -> np.ndarray:
    """c[g, h] = (1 / (k_g k_h)) sum_{z_i in N_g} sum_{z_j in N_h} S[z_i, z_j] (eq. (8); z_i = z_j counts
    when g = h)."""
    return np.array([[S[np.ix_(m_g, m_h)].mean() for m_h in members] for m_g in members])


def fit_row(S, nb, y_idx, support, prior, stop_early=False) -> PairwiseRowModel:
    """The pairwise constraints and their lambdas for one test row (``nb``: its neighbours, best first;
    ``prior``: log prior per class index, None for the local k_g / k). Degeneracy as local SDA's
    ``fit_row``: boundary constraints first; with ``stop_early`` the solve stops at the first degenerate."""
    y_nb = y_idx[nb]
    classes = np.unique(y_nb)
    members = [nb[y_nb == g] for g in classes]
    k_g = np.array([m.size for m in members], dtype=np.float64)
    c = pairwise_constraints(S, members)
    log_prior = np.log(k_g / nb.size) if prior is None else prior[classes]
    G = classes.size
    lam = np.full((G, G), np.nan)
    status = np.full((G, G), "unsolved", dtype=object)
    r = support_r(support)
    tol = BOUNDARY_RTOL * r
    boundary = (c - support.lo <= tol) | (support.hi - c <= tol) | (r <= 0)
    status[boundary] = "boundary"
    lam[boundary] = np.where(c[boundary] - support.lo <= tol, -np.inf, np.inf)
    if not (stop_early and boundary.any()):
        for g, h in zip(*np.nonzero(~boundary)):
            lam[g, h], status[g, h] = solve_lambda(c[g, h], support)
            if stop_early and status[g, h] != "ok":
                break
    return PairwiseRowModel(classes, members, c, lam, status, log_prior)


def log_marginal(lam: float, t_h: np.ndarray, support) -> float:
    """log of eq. (7): log((1 / k_h) sum_{z in N_h} gamma e^{lambda psi(x, z)}), t_h = psi(x, N_h)."""
    a = lam * t_h
    top = a.max()
    return float((np.log(np.exp(a - top).sum()) + top - np.log(t_h.size)) - support_log_z(support, lam))


def log_scores(model: PairwiseRowModel, s: np.ndarray, support, exact: bool = False) -> np.ndarray:
    """log P(g) + sum_h log P_h(T_h(x) | g) per class of G_x (eqs. (9), (1)). With ``exact`` a capped lambda
    is used as it is and a boundary constraint is the point mass at c: log(#{z in N_h: |psi(x, z) - c| <=
    1e-9 r} / k_h); without, any degenerate constraint makes the class's score NaN."""
    G = model.classes.size
    scores = model.log_prior.astype(np.float64).copy()
    tol = BOUNDARY_RTOL * support_r(support)
    for g in range(G):
        for h in range(G):
            st, t_h = model.status[g, h], s[model.members[h]]
            if st == "ok" or (exact and st == "cap"):
                scores[g] += log_marginal(model.lam[g, h], t_h, support)
            elif exact and st == "boundary":
                hits = int(np.sum(np.abs(t_h - model.c[g, h]) <= tol))
                scores[g] += np.log(hits / t_h.size) if hits else -np.inf
            else:
                scores[g] = np.nan
    return scores


def predict_row(est, s: np.ndarray, nb: np.ndarray) -> tuple[int, bool, np.ndarray]:
    """(class index, fallback used, log posterior over ``est.classes_``) of one row of a fitted
    ``PairwiseLocalSDA``: |G_x| = 1 -> that class; a degenerate constraint -> local SDA's fallback
    (``exact``: only if every class scores -inf); else the argmax of the scores (spec §5 tie rule) and
    their softmax. A row decided by a rule other than the scores has the posterior 1 at its class."""
    y_nb = est._y_idx[nb]
    if np.all(y_nb == y_nb[0]):
        return decided(est, int(y_nb[0]), False)
    exact = est.degenerate == "exact"
    prior = None if est.prior == "local" else np.log(est.class_prior_)
    model = fit_row(est._S, nb, est._y_idx, est.support_, prior, stop_early=not exact)
    scores = None
    if not (np.any(model.status != "ok") and not exact):
        scores = log_scores(model, s, est.support_, exact=exact)
    mu = local_centroids(est._S, s, model.members)  # local SDA's centroids, for the fallback
    return scored_or_fallback(est, scores, model.classes, y_nb, s[mu])


def decided(est, winner: int, fell_back: bool) -> tuple[int, bool, np.ndarray]:
    """A row decided by a rule other than the scores: its class, whether it fell back, posterior 1 there."""
    one_hot = np.full(len(est.classes_), -np.inf)
    one_hot[winner] = 0.0
    return winner, fell_back, one_hot


def scored_or_fallback(est, scores, classes: np.ndarray, y_nb: np.ndarray, centroid_sims: np.ndarray):
    """The row's decision from its class scores over ``classes`` (argmax, softmax posterior), or, if there
    are none (``scores`` None) or every class scores -inf, the fallback: the neighbours' vote ("knn", k-NN's
    tie rule) or the most similar local centroid (``centroid_sims``, one per class of ``classes``)."""
    if scores is not None and not np.all(scores == -np.inf):
        log_post = np.full(len(est.classes_), -np.inf)
        log_post[classes] = scores - logsumexp(scores)
        return argmax(est, scores, classes, y_nb), False, log_post
    if est.degenerate == "knn":
        votes = np.bincount(y_nb, minlength=len(est.classes_)).astype(np.float64)[None, :]
        return decided(est, int(break_vote_ties(votes, est.class_prior_, y_nb[None, :])[0]), True)
    return decided(est, argmax(est, centroid_sims, classes, y_nb), True)


def argmax(est, values: np.ndarray, classes: np.ndarray, y_nb: np.ndarray) -> int:
    """argmax over G_x with the spec §5 tie rule (isclose, then prior pi_g, then best-ranked neighbour)."""
    full = np.full((1, len(est.classes_)), -np.inf)
    full[0, classes] = values
    return int(break_vote_ties(full, est.class_prior_, y_nb[None, :])[0])


def predict(est, S_te: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``predict_row`` for every row: (labels, fallback used per row, log posteriors)."""
    S_te = est._check_predict_input(S_te)
    rows = [predict_row(est, s, nb) for s, nb in zip(S_te, est._neighbours(S_te))]
    return (est.classes_[np.array([r[0] for r in rows], dtype=np.intp)], np.array([r[1] for r in rows]),
            np.array([r[2] for r in rows]))
