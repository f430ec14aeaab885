"""The neighbourhood and the vote-tie rule of docs/compared-methods-spec.md section 5, written from the spec in
plain loops: no code shared with production (``hlm.neighbors._knn.break_vote_ties``, the estimators'
``_neighbours``), so the references that use these catch a bug in either."""

from __future__ import annotations

import math


def neighbours(s, k: int) -> list[int]:
    """The k most similar fit objects of one row of similarities: sorted by (-s_i, i), k capped at the row's
    length."""
    order = sorted(range(len(s)), key=lambda i: (-float(s[i]), i))
    return order[:min(int(k), len(s))]


def nearest(d, k: int) -> list[int]:
    """The k nearest fit objects of one row of distances: sorted by (d_i, i)."""
    order = sorted(range(len(d)), key=lambda i: (float(d[i]), i))
    return order[:min(int(k), len(d))]


def tie_winner(values, prior, ranked_classes) -> int:
    """The class of the largest value; values within rtol 1e-12 of the largest tie, decided by the larger
    prior, then by the class of the highest-ranked neighbour (``ranked_classes``: the neighbours' classes, best
    first)."""
    best = max(values)
    tied = [g for g, v in enumerate(values)
            if v == best or (math.isfinite(best) and abs(v - best) <= 1e-12 * abs(best))]
    top_prior = max(prior[g] for g in tied)
    tied = [g for g in tied if prior[g] == top_prior]
    if len(tied) == 1:
        return tied[0]
    return next(int(g) for g in ranked_classes if g in tied)
