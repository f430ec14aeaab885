"""Compiled per-point loops of odKDE's compression cost (``compression.ClassifierDistance``; spec 14).

Each tried merge touches every cost point a few times: the merged component's density, the candidate's
log p_i, the region, and the parts of eq. 7 where log p_i moved. In numpy that is a dozen calls on arrays
of P points; at the P of Iris or Wine (a few hundred) their overhead is most of a merge's time. Here each is
one loop. The arithmetic is the numpy code's in another order (``compression.merged_terms`` is the numpy
version of :func:`merged_terms`): results agree to rounding, not to the bit. numpy's vectorised exponentials
are faster per point, so above ``compression.EAGER_POINTS`` points the numpy version is used.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

_LOG_2PI = math.log(2.0 * math.pi)


@njit(cache=True)
def merged_gaussian(Wa, ma, Sa, Wb, mb, Sb, H):
    """The moment match (W, m, S) of two components (gaussians.moment_match: it is associative), and the lower
    Cholesky factor L of S + H; ``positive`` False (L unusable) where S + H is not numerically positive definite."""
    d = ma.shape[0]
    W = Wa + Wb
    m = (Wa * ma + Wb * mb) / W
    S = np.empty((d, d))
    for i in range(d):
        for j in range(d):
            S[i, j] = (Wa * (Sa[i, j] + (ma[i] - m[i]) * (ma[j] - m[j]))
                       + Wb * (Sb[i, j] + (mb[i] - m[i]) * (mb[j] - m[j]))) / W
    S = 0.5 * (S + S.T)
    A = S + H
    L = np.zeros((d, d))
    for j in range(d):
        s = A[j, j]
        for k in range(j):
            s -= L[j, k] * L[j, k]
        if not s > 0.0:
            return W, m, S, L, False
        L[j, j] = math.sqrt(s)
        for i in range(j + 1, d):
            t = A[i, j]
            for k in range(j):
                t -= L[i, k] * L[j, k]
            L[i, j] = t / L[j, j]
    return W, m, S, L, True


@njit(cache=True)
def _logaddexp(x: float, y: float) -> float:
    """numpy's logaddexp: log(e^x + e^y), exact where one side is -inf."""
    if x == y:
        return x + math.log(2.0)
    if x > y:
        return x + math.log1p(math.exp(y - x))
    if y > x:
        return y + math.log1p(math.exp(x - y))
    return x - y  # nan


@njit(cache=True)
def merged_terms(X, m, L, log_w, terms, node, a, b, active, log_current, log_floor, inside, cancellation):
    """One tried merge of nodes a and b into N(m, L L^T) of weight e^log_w, at every cost point x:

    - its terms log w N(x; m, L L^T) (whitening by forward substitution) go to row ``node`` of ``terms``;
    - ``candidate``: log p_i after the merge, log(e^s - e^a - e^b + e^new) with s = log p_i before it
      (``log_current``), written s + log(rest) with rest = 1 - e^(a - s) - e^(b - s); where rest is not >=
      ``cancellation`` (the difference lost digits, or NaN where p_i = 0) the log-sum of the other ``active``
      nodes' terms and the new one;
    - ``grown``: the points outside the region (``inside``) where a's, b's or the new term reaches
      ``log_floor`` (none if ``log_floor`` is empty: the region is every point);
    - ``moved``: the points of the grown region where the candidate differs from ``log_current``.
    """
    P, d = X.shape
    candidate = np.empty(P)
    grown, moved = np.zeros(P, dtype=np.bool_), np.zeros(P, dtype=np.bool_)
    const = log_w - 0.5 * d * _LOG_2PI
    for k in range(d):
        const -= math.log(L[k, k])
    use_floor = log_floor.shape[0] == P
    z = np.empty(d)
    for p in range(P):
        q = 0.0
        for i in range(d):
            s = X[p, i] - m[i]
            for k in range(i):
                s -= L[i, k] * z[k]
            z[i] = s / L[i, i]
            q += z[i] * z[i]
        new = const - 0.5 * q
        terms[node, p] = new
        ta, tb, s0 = terms[a, p], terms[b, p], log_current[p]
        if use_floor and not inside[p] and max(ta, tb, new) >= log_floor[p]:
            grown[p] = True
        if ta - s0 < -38.0 and tb - s0 < -38.0:  # e^(a - s), e^(b - s) < 2^-54: rest rounds to 1 exactly
            candidate[p] = _logaddexp(s0, new)
        else:
            rest = 1.0 - math.exp(ta - s0) - math.exp(tb - s0)
            if rest >= cancellation:
                candidate[p] = _logaddexp(s0 + math.log(rest), new)
            else:
                top = new
                for j in active:
                    if j != a and j != b:
                        top = max(top, terms[j, p])
                if top == -np.inf:
                    candidate[p] = -np.inf
                else:
                    total = math.exp(new - top)
                    for j in active:
                        if j != a and j != b:
                            total += math.exp(terms[j, p] - top)
                    candidate[p] = top + math.log(total)
        moved[p] = (inside[p] or grown[p]) and candidate[p] != s0
    return candidate, grown, moved


@njit(cache=True)
def _log_expit(z: float) -> float:
    """log(1 / (1 + e^-z)) without overflow (scipy.special.log_expit)."""
    if z < 0.0:
        return z - math.log1p(math.exp(z))
    return -math.log1p(math.exp(-z))


@njit(cache=True)
def posterior_distance_bound(log_odds_max: float, shift: float) -> float:
    """compression.posterior_distance_bound at one point, without its slack; -1 where it is undefined."""
    t = min(log_odds_max, -0.5 * shift)
    if t > 0.0:
        t, shift = -t, -shift
    bound = 1.0 - (1.0 + math.exp(t + 0.5 * shift)) / math.sqrt((1.0 + math.exp(t)) * (1.0 + math.exp(t + shift)))
    if math.isnan(bound):
        return -1.0
    return max(bound, 0.0)


@njit(cache=True)
def parts(idx, log_p, known, before, offset, root_pos, root_neg, log_odds_max, pw, part, slack, floor):
    """The parts of eq. 7 at the points ``idx`` for class i's log density ``log_p`` there, in ``part`` in place:
    pw D^2 (eq. 5) where the negatives are known (log-odds of C+ = offset + log_p; ``root_pos``, ``root_neg``
    the roots of the posteriors before compression), pw times the bound of D^2 (compression.
    posterior_distance_bound, with ``slack`` of itself and ``floor``) elsewhere. Returns the changes of
    the known parts' sum and of the bounds' sum."""
    exact, bound = 0.0, 0.0
    for p in idx:
        if known[p]:
            z = offset[p] + log_p[p]
            pos, neg = math.exp(0.5 * _log_expit(z)), math.exp(0.5 * _log_expit(-z))
            new = pw[p] * (0.5 * ((root_pos[p] - pos) ** 2 + (root_neg[p] - neg) ** 2))
            exact += new - part[p]
        else:
            b = posterior_distance_bound(log_odds_max[p], log_p[p] - before[p])
            new = pw[p] * (1.0 if b < 0.0 else b * slack + floor)
            bound += new - part[p]
        part[p] = new
    return exact, bound
