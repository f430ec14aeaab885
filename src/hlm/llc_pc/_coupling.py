"""Combination schemas of LLC-PC (Chen, Lu & Boedihardjo, section 3.1, Theorem 3.1; spec section 2).

Input everywhere: the pairwise decision values ``f`` (objects x pairs of U) with, per pair, its first
subclass ``first`` (f > 0 votes for it) and second ``second``; f_kp-ij = -f_ij-kp. ``sub_class`` is the
class index of each subclass.

* Voting: F_ij = sum_kp delta(f_ij-kp), delta(z) = 1[z >= 0]; F_i = max_j F_ij / D_i, D_i = K - N_i;
  the fractions compared exactly as integers, ties to the smallest label (``vote_winner``).
* MinMax: F_ij = min_kp f_ij-kp, F_i = max_j F_ij.
* Probability: r_ij-kp = Pr(C_ij | C_ij or C_kp, x), coupled by Wu-Lin-Weng's second method restricted to
  U (``couple``), F_ij = p_ij, F_i = max_j p_ij.
"""

from __future__ import annotations

import numpy as np

from hlm.svm._coupling import couple, incidence, pair_probabilities


def subclass_votes(f: np.ndarray, first: np.ndarray, second: np.ndarray, n_sub: int) -> np.ndarray:
    """F_ij of the voting schema: duels won (delta(z) = 1[z >= 0]) per object and subclass, int64."""
    won = (f >= 0).astype(np.float64) @ incidence(first, n_sub) + (f <= 0).astype(np.float64) @ incidence(second, n_sub)
    return np.rint(won).astype(np.int64)


def duel_counts(first: np.ndarray, second: np.ndarray, n_sub: int) -> np.ndarray:
    """Duels per subclass: D_i = K - N_i for a subclass of class i."""
    return np.bincount(first, minlength=n_sub) + np.bincount(second, minlength=n_sub)


def class_max(values: np.ndarray, sub_class: np.ndarray, n_classes: int) -> np.ndarray:
    """max_j of a per-subclass value within each class: (objects x classes)."""
    out = np.empty((values.shape[0], n_classes), dtype=values.dtype)
    for i in range(n_classes):
        out[:, i] = values[:, sub_class == i].max(axis=1)
    return out


def vote_winner(votes: np.ndarray, duels: np.ndarray) -> np.ndarray:
    """argmax_i votes_i / duels_i per row, compared exactly (v_i D_k vs v_k D_i, int64), ties to the
    smallest class index."""
    votes = np.asarray(votes, dtype=np.int64)
    duels = np.asarray(duels, dtype=np.int64)
    best = np.zeros(votes.shape[0], dtype=np.intp)
    for i in range(1, votes.shape[1]):
        better = votes[:, i] * duels[best] > votes[np.arange(len(best)), best] * duels[i]
        best[better] = i
    return best


def vote_ties(votes: np.ndarray, duels: np.ndarray, winner: np.ndarray) -> np.ndarray:
    """(objects x classes) True where a class's vote share equals the winner's exactly."""
    votes = np.asarray(votes, dtype=np.int64)
    duels = np.asarray(duels, dtype=np.int64)
    v_best = votes[np.arange(len(winner)), winner][:, None]
    return votes * duels[winner][:, None] == v_best * duels[None, :]


def minmax_values(f: np.ndarray, first: np.ndarray, second: np.ndarray, n_sub: int) -> np.ndarray:
    """F_ij of the MinMax schema: min over the subclass's duels of its own decision value."""
    signed = np.concatenate([f, -f], axis=1)
    columns = np.concatenate([first, second])
    out = np.empty((f.shape[0], n_sub))
    for s in range(n_sub):
        out[:, s] = signed[:, columns == s].min(axis=1)
    return out


def provable(f: np.ndarray, first: np.ndarray, second: np.ndarray, n_sub: int) -> np.ndarray:
    """The provable region of Theorem 3.1: some subclass wins every one of its duels strictly (f > 0),
    i.e. condition (1) with strict inequalities, equivalently (2) max_ij F_ij^MinMax > 0."""
    return minmax_values(f, first, second, n_sub).max(axis=1) > 0


def combine(f: np.ndarray, first: np.ndarray, second: np.ndarray, sub_class: np.ndarray, n_classes: int,
            combination: str, *, tie_break: str = "label", platt: np.ndarray | None = None
            ) -> tuple[np.ndarray, np.ndarray]:
    """(class index per object, F_i per object and class) of one schema."""
    n_sub = len(sub_class)
    if combination == "voting":
        duels = duel_counts(first, second, n_sub)
        D = np.array([duels[sub_class == i][0] for i in range(n_classes)])
        votes = class_max(subclass_votes(f, first, second, n_sub), sub_class, n_classes)
        winner = vote_winner(votes, D)
        if tie_break == "minmax":
            ties = vote_ties(votes, D, winner)
            tied = ties.sum(axis=1) > 1
            if tied.any():
                mm = class_max(minmax_values(f[tied], first, second, n_sub), sub_class, n_classes)
                winner[tied] = np.argmax(np.where(ties[tied], mm, -np.inf), axis=1)
        return winner, votes / D
    if combination == "minmax":
        F = class_max(minmax_values(f, first, second, n_sub), sub_class, n_classes)
    else:
        F = class_max(couple(pair_probabilities(f, platt), first, second, n_sub), sub_class, n_classes)
    return np.argmax(F, axis=1), F
