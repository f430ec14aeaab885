"""The row-by-row reference of regularized local SDA (docs/local-sda-family-spec.md section 6), which the
compiled kernels (``_loo_pmfs_nb``, ``_pave_at_nb``, ``_regularized_predict_rows``) repeat.

Obvious numpy code on top of local SDA's reference (tests/oracles/local_sda_reference.py): the
leave-one-out neighbourhoods of the fit objects (``loo_order``), their local SDA models with lambda by
scipy's ``brentq`` from the bracket of the lambda table (``solve_lambda_table``), their pmfs on Omega
(``local_pmf``) and their average P_ave (``average_pmfs``); a test row's local SDA model (local SDA's
``fit_row``), its regularized class scores (``log_scores``) and the decision (``predict_row``).
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import brentq
from scipy.special import logsumexp

from hlm.local_sda._kernels.regularized import LAMBDA_TABLE_T
from oracles.local_sda_pairwise_reference import decided, scored_or_fallback
from oracles.local_sda_reference import (
    BOUNDARY_RTOL,
    XTOL,
    RowModel,
    discrete_log_z,
    discrete_mean,
    fit_row,
    local_centroids,
    support_r,
)
from oracles.local_sda_reference import log_scores as local_log_scores


def loo_order(S: np.ndarray) -> np.ndarray:
    """Per fit object, the other fit objects ranked by (-S[i, j], j)."""
    rows = []
    for i in range(S.shape[0]):
        order = np.argsort(-S[i], kind="stable")
        rows.append(order[order != i])
    return np.array(rows)


def lambda_table(support) -> tuple[np.ndarray, np.ndarray]:
    """The table's lambdas (LAMBDA_TABLE_T / r: 0, +-2^(j/8) / r and the caps +-1e3 / r) and m there."""
    t_lam = LAMBDA_TABLE_T / support_r(support)
    return t_lam, np.array([discrete_mean(lam, support.omega) for lam in t_lam])


def solve_lambda_table(c: float, support, table) -> tuple[float, str]:
    """local SDA's ``solve_lambda`` (statuses "ok", "boundary", "cap"; brentq to xtol 1e-10 / r), the root
    bracketed by bisecting the table instead of doubling from [-1, 1] / r."""
    r = support_r(support)
    tol = BOUNDARY_RTOL * r
    if r <= 0 or c - support.lo <= tol:
        return -np.inf, "boundary"
    if support.hi - c <= tol:
        return np.inf, "boundary"
    t_lam, t_m = table
    f = t_m - c
    if f[0] > 0:
        return t_lam[0], "cap"
    if f[-1] < 0:
        return t_lam[-1], "cap"
    if f[0] == 0.0:
        return t_lam[0], "ok"
    if f[-1] == 0.0:
        return t_lam[-1], "ok"
    a, b = 0, len(t_lam) - 1
    while b - a > 1:
        mid = (a + b) // 2
        if f[mid] == 0.0:
            return t_lam[mid], "ok"
        a, b = (mid, b) if f[mid] < 0 else (a, mid)
    return float(brentq(lambda lam: discrete_mean(lam, support.omega) - c, t_lam[a], t_lam[b], xtol=XTOL / r)), "ok"


def local_pmf(lam: float, status: str, omega: np.ndarray) -> np.ndarray:
    """gamma e^{lambda w} on Omega; a boundary constraint: the point mass at that end of Omega."""
    if status == "boundary":
        p = np.zeros(omega.size)
        p[0 if lam < 0 else -1] = 1.0
        return p
    top = omega[-1] if lam >= 0 else omega[0]
    w = np.exp(lam * (omega - top))
    return w / w.sum()


def loo_models(S, y_idx, support, k: int):
    """Per fit object: (classes of its leave-one-out neighbourhood, c, lambda, status), local SDA's
    centroids and constraints, every constraint solved by ``solve_lambda_table``."""
    table = lambda_table(support)
    models = []
    for i, order in enumerate(loo_order(S)):
        nb = order[:k]
        y_nb = y_idx[nb]
        classes = np.unique(y_nb)
        members = [nb[y_nb == g] for g in classes]
        mu = local_centroids(S, S[i], members)
        c = np.stack([S[np.ix_(m, mu)].mean(axis=0) for m in members])
        solved = [[solve_lambda_table(c_gh, support, table) for c_gh in row] for row in c]
        lam = np.array([[x[0] for x in row] for row in solved])
        status = np.array([[x[1] for x in row] for row in solved], dtype=object)
        models.append((classes, c, lam, status))
    return models


def average_pmfs(S, y_idx, n_classes: int, support, k: int) -> np.ndarray:
    """P_ave[g, h] = the mean of the leave-one-out local pmfs of (g, h) over the fit objects whose
    neighbourhood holds g and h (added in object order); uniform where there are none."""
    r = support.omega.size
    total = np.zeros((n_classes, n_classes, r))
    count = np.zeros((n_classes, n_classes), dtype=np.int64)
    for classes, _, lam, status in loo_models(S, y_idx, support, min(k, S.shape[0] - 1)):
        for g, cg in enumerate(classes):
            for h, ch in enumerate(classes):
                total[cg, ch] += local_pmf(lam[g, h], status[g, h], support.omega)
                count[cg, ch] += 1
    pave = np.full((n_classes, n_classes, r), 1.0 / r)
    for g, h in zip(*np.nonzero(count)):
        pave[g, h] = total[g, h] / count[g, h]
    return pave


def log_average_pmfs(S, y_idx, n_classes: int, support, k: int) -> np.ndarray:
    """log P_ave[g, h], in the log domain: scipy's logsumexp of the objects' log pmfs (lambda (omega - top)
    - log sum e^{lambda (omega - top)}, or 0 / -inf for a point mass) minus log of their number; -log r
    where no neighbourhood holds g and h."""
    r = support.omega.size
    terms: dict = {}
    for classes, _, lam, status in loo_models(S, y_idx, support, min(k, S.shape[0] - 1)):
        for g, cg in enumerate(classes):
            for h, ch in enumerate(classes):
                terms.setdefault((cg, ch), []).append(local_log_pmf(lam[g, h], status[g, h], support.omega))
    out = np.full((n_classes, n_classes, r), -np.log(r))
    for (g, h), rows in terms.items():
        out[g, h] = logsumexp(np.array(rows), axis=0) - np.log(len(rows))
    return out


def local_log_pmf(lam: float, status: str, omega: np.ndarray) -> np.ndarray:
    """log gamma e^{lambda w} on Omega; a boundary constraint: 0 at that end of Omega, -inf elsewhere."""
    if status == "boundary":
        p = np.full(omega.size, -np.inf)
        p[0 if lam < 0 else -1] = 0.0
        return p
    top = omega[-1] if lam >= 0 else omega[0]
    t = lam * (omega - top)
    return t - logsumexp(t)


def nearest(omega: np.ndarray, t: float) -> int:
    """The point of Omega nearest to t (the lower one at equal distance; beyond an end, that end)."""
    if t <= omega[0]:
        return 0
    if t >= omega[-1]:
        return omega.size - 1
    return int(np.argmin(np.abs(omega - t)))


def local_terms(model: RowModel, support) -> np.ndarray:
    """log P(psi(x, mu_h) | g) of local SDA per (g, h): lambda t_h - log Z (a capped lambda as it is), or
    the point mass of a boundary constraint (0 if |t_h - c| <= 1e-9 r, else -inf)."""
    G = model.classes.size
    tol = BOUNDARY_RTOL * support_r(support)
    out = np.empty((G, G))
    for g in range(G):
        for h in range(G):
            lam = model.lam[g, h]
            if model.status[g, h] == "boundary":
                out[g, h] = 0.0 if abs(model.t[h] - model.c[g, h]) <= tol else -np.inf
            else:
                out[g, h] = lam * model.t[h] - discrete_log_z(lam, support.omega)
    return out


def log_scores(model: RowModel, support, log_pave: np.ndarray, zeta: float, form: str = "marginal") -> np.ndarray:
    """log P(g) + sum_h log((1 - zeta) P(psi(x, mu_h) | g) + zeta P_ave(omega_j | g, h)) (the marginal form), or
    log P(g) + log((1 - zeta) prod_h P(psi(x, mu_h) | g) + zeta prod_h P_ave(omega_j | g, h)) (the joint form),
    omega_j the point of Omega nearest to psi(x, mu_h), per class of G_x (zeta > 0); ``log_pave`` from
    ``log_average_pmfs``."""
    local = local_terms(model, support)
    scores = model.log_prior.astype(np.float64).copy()
    for g, cg in enumerate(model.classes):
        ave = np.array([log_pave[cg, ch, nearest(support.omega, model.t[h])] for h, ch in enumerate(model.classes)])
        with np.errstate(divide="ignore"):  # log(1 - zeta) = -inf at zeta = 1
            keep, reg = np.log1p(-zeta), np.log(zeta)
            if form == "joint":
                scores[g] += np.logaddexp(keep + local[g].sum(), reg + ave.sum())
            else:
                scores[g] += np.logaddexp(keep + local[g], reg + ave).sum()
    return scores


def predict_row(est, s: np.ndarray, nb: np.ndarray, log_pave: np.ndarray) -> tuple[int, bool, np.ndarray]:
    """(class index, fallback used, log posterior over ``est.classes_``) of one row of a fitted
    ``RegularizedLocalSDA`` with log P_ave ``log_pave``. zeta = 0: local SDA (its reference, fallback included);
    zeta > 0: the regularized scores, the fallback only if every class scores -inf."""
    y_nb = est._y_idx[nb]
    if np.all(y_nb == y_nb[0]):
        return decided(est, int(y_nb[0]), False)
    exact = est.degenerate == "exact"
    prior = None if est.prior == "local" else np.log(est.class_prior_)
    model = fit_row(est._S, s, nb, est._y_idx, est.support_, prior)
    scores = None
    if est.zeta > 0:
        scores = log_scores(model, est.support_, log_pave, float(est.zeta), est.form)
    elif exact or np.all(model.status == "ok"):
        scores = local_log_scores(model, est.support_, exact=exact)
    return scored_or_fallback(est, scores, model.classes, y_nb, model.t)


def predict(est, S_te: np.ndarray, log_pave: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``predict_row`` for every row (log P_ave by ``log_average_pmfs`` unless given): (labels, fallback
    used, log posteriors)."""
    S_te = est._check_predict_input(S_te)
    if log_pave is None:
        log_pave = log_average_pmfs(est._S, est._y_idx, len(est.classes_), est.support_, int(est.n_neighbors))
    rows = [predict_row(est, s, nb, log_pave) for s, nb in zip(S_te, est._neighbours(S_te))]
    return (est.classes_[np.array([r[0] for r in rows], dtype=np.intp)], np.array([r[1] for r in rows]),
            np.array([r[2] for r in rows]))
