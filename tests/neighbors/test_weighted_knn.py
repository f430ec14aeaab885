"""Affinity / KRI / KRR k-NN on precomputed similarities: known answers (spec 6.2-6.4, section 9)."""

import itertools
import warnings

import numpy as np
import pytest
from scipy.spatial.distance import cdist
from sklearn.exceptions import ConvergenceWarning
from sklearn.kernel_ridge import KernelRidge
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.neighbors import KNeighborsClassifier
from sklearn.utils._param_validation import InvalidParameterError

from hlm.errors import DataError
from hlm.neighbors import _kri as kri
from hlm.neighbors._knn import KNNClassifier
from hlm.neighbors._weighted import KRIKNN, KRRKNN, AffinityKNN
from oracles.kri_reference import simplex_qp

ALL = (AffinityKNN, KRIKNN, KRRKNN)


def _rbf_data(rng, n_per=20, sep=2.5, m=15):
    """Two Gaussian blobs; RBF similarities in (0, 1], unit diagonal, PSD."""
    X = np.vstack([rng.normal(0, 1, (n_per, 2)), rng.normal(sep, 1, (n_per, 2))])
    y = np.repeat(np.array(["a", "b"]), n_per)
    Xt = rng.normal(sep / 2, 1.5, (m, 2))
    return np.exp(-cdist(X, X, "sqeuclidean") / 4), y, np.exp(-cdist(Xt, X, "sqeuclidean") / 4)


def _indefinite_similarity(rng, n, m):
    """Symmetric similarities in [0, 1] with unit diagonal and (generically) negative eigenvalues."""
    S = rng.uniform(0, 1, (n, n))
    S = (S + S.T) / 2
    np.fill_diagonal(S, 1.0)
    return S, rng.uniform(0, 1, (m, n))


# ---------------------------------------------------------------- simplex QP (spec 6.3)
def _random_pd(rng, k):
    """PD matrix; low rank + small ridge half the time (makes the active set re-release indices)."""
    r = k if rng.uniform() < 0.5 else int(rng.integers(1, 3))
    M = rng.normal(size=(k, r))
    return M @ M.T + 10 ** rng.uniform(-3, 0) * np.eye(k)


def _brute_force_simplex_qp(A, b):
    """Minimum over all supports F of the equality-constrained QP on F, keeping feasible ones."""
    k = len(b)
    best, best_val = None, np.inf
    for size in range(1, k + 1):
        for F in itertools.combinations(range(k), size):
            F = list(F)
            KKT = np.zeros((size + 1, size + 1))
            KKT[:size, :size] = A[np.ix_(F, F)]
            KKT[:size, size] = KKT[size, :size] = 1.0
            sol = np.linalg.solve(KKT, np.append(b[F], 1.0))
            if (sol[:size] < -1e-13).any():
                continue
            w = np.zeros(k)
            w[F] = np.maximum(sol[:size], 0.0)
            val = 0.5 * w @ A @ w - b @ w
            if val < best_val:
                best, best_val = w, val
    return best


def _kkt_residual(A, b, w):
    """Max violation of the simplex-QP optimality conditions."""
    g = A @ w - b
    support = w > 0
    nu = g[support].mean()
    return max(
        np.abs(g[support] - nu).max(),
        max(0.0, -(g[~support] - nu).min(initial=np.inf)),
        abs(w.sum() - 1.0),
        max(0.0, -w.min()),
    )


def _n_released(A, b):
    """How often the compiled solver moved an index from the zero set back into F on (A, b)."""
    tol = kri.KKT_RTOL * max(1.0, np.abs(A).max(), np.abs(b).max())
    *_, n = kri._active_set(A, b, np.linalg.inv(A), tol, kri.default_max_iter(len(b)), kri.REFRESH_EVERY)
    return n


def test_simplex_qp_equals_brute_force_and_satisfies_kkt():
    rng = np.random.default_rng(1)
    sizes, n_released = [], 0
    for trial in range(300):
        k = 1 + trial % 6
        A = _random_pd(rng, k)
        b = rng.normal(0, rng.choice([0.3, 3.0]), k)
        w = simplex_qp(A, b)
        np.testing.assert_allclose(w, _brute_force_simplex_qp(A, b), atol=1e-10)
        assert _kkt_residual(A, b, w) < 1e-10
        sizes.append((k, int((w > 0).sum())))
        n_released += _n_released(A, b) if k > 1 else 0
    # the cases cover sparse and full supports, so the comparison is not trivial
    assert any(s < k for k, s in sizes) and any(s == k > 2 for k, s in sizes)
    assert n_released >= 3  # ... and the path that moves a zero back into F


def _reference_simplex_qp(A, b, max_iter=None, stats=None):
    """Plain-numpy primal active set of spec 6.3 step 3, the same method as ``simplex_qp``.

    Dense formulation: B = A_FF^{-1} padded with zeros to k x k, rank-one updates when an
    index enters or leaves F, B recomputed from A_FF every REFRESH_EVERY updates and before
    the stopping test is accepted; tolerance KKT_RTOL * max(1, |A|max, |b|max).
    ``stats`` (a dict) counts releases, multi-index drops and refreshes.
    Returns (w, converged).
    """
    k = len(b)
    if k == 1:
        return np.ones(1), True
    stats = {} if stats is None else stats
    for key in ("released", "multi_drop", "refresh"):
        stats.setdefault(key, 0)
    tol = kri.KKT_RTOL * max(1.0, np.abs(A).max(), np.abs(b).max())
    max_iter = 10 * k + 50 if max_iter is None else max_iter
    w, free = np.full(k, 1.0 / k), np.ones(k, dtype=bool)
    B, n_updates = np.linalg.inv(A), 0
    for _ in range(max_iter):
        if n_updates >= kri.REFRESH_EVERY:
            F = np.flatnonzero(free)
            B = np.zeros_like(A)
            B[np.ix_(F, F)] = np.linalg.inv(A[np.ix_(F, F)])
            n_updates = 0
            stats["refresh"] += 1
        x_b, x_1 = B @ b, B.sum(axis=1)
        nu = (1.0 - x_b.sum()) / x_1.sum()
        w_eq = x_b + nu * x_1
        if (w_eq[free] >= 0).all():
            w = w_eq
            g = A @ w - b - nu
            g[free] = np.inf
            j = int(np.argmin(g))
            if g[j] >= -tol:
                if n_updates == 0:
                    return w, True
                n_updates = kri.REFRESH_EVERY
                continue
            a = np.where(free, A[:, j], 0.0)
            u = B @ a
            schur = A[j, j] - a @ u
            B += np.outer(u / schur, u)
            B[:, j] = B[j, :] = -u / schur
            B[j, j] = 1.0 / schur
            free[j] = True
            stats["released"] += 1
        else:
            d = w_eq - w
            shrinking = free & (d < 0)
            ratios = np.full(k, np.inf)
            ratios[shrinking] = w[shrinking] / -d[shrinking]
            t = ratios.min()
            hit = np.flatnonzero(ratios <= t)
            w = np.maximum(w + t * d, 0.0)
            w[hit] = 0.0
            for p in hit:
                col = B[:, p].copy()
                B -= np.outer(col / col[p], col)
                B[:, p] = B[p, :] = 0.0
            free[hit] = False
            stats["multi_drop"] += len(hit) > 1
        n_updates += 1
    return w / w.sum(), False


def _similarity_qp(rng, k):
    """KRI-like problem: unit-diagonal PSD similarities (often low rank, with duplicate rows) + ridge."""
    r = k if rng.uniform() < 0.4 else int(rng.integers(1, 4))
    X = rng.normal(size=(k, r))
    n_dup = int(rng.integers(0, k // 2 + 1)) if rng.uniform() < 0.5 else 0
    for _ in range(n_dup):  # duplicate neighbours (Voting, Protein)
        X[rng.integers(k)] = X[rng.integers(k)]
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    lam = rng.choice([1e-3, 1e-2, 0.1, 1.0, 10.0, 1e3])
    A = X @ X.T + lam * np.eye(k)
    z = rng.normal(size=r)
    b = X @ (z / np.linalg.norm(z)) if rng.uniform() < 0.7 else rng.normal(0, rng.choice([0.3, 3.0]), k)
    return A, b


def _assert_same_minimiser(A, b, w, ref):
    """w and ref are the same simplex-QP minimiser, to what their KKT residuals allow.

    The support is a decision: identical, with exact zeros off it. On the support F the
    minimiser solves A_FF w - nu 1 = b_F with 1'w = 1, so two points whose stationarity
    residuals are rho_w and rho_ref differ by at most (rho_w + rho_ref) sqrt|F| / lambda_min(A_FF)
    (the projected Hessian Z'A_FF Z has no smaller eigenvalue). The bound follows from the
    problem's conditioning, not from the CPU's last bits (numpy's and numba's LAPACK kernels differ).
    """
    np.testing.assert_array_equal(w > 0, ref > 0)
    F = ref > 0
    lam_min = np.linalg.eigvalsh(A[np.ix_(F, F)]).min()
    rounding = 64 * np.finfo(float).eps * max(1.0, np.abs(A).max(), np.abs(b).max())
    rho = _kkt_residual(A, b, w) + _kkt_residual(A, b, ref) + rounding
    bound = rho * np.sqrt(F.sum()) / lam_min
    assert np.abs(w - ref).max() <= bound, (np.abs(w - ref).max(), bound)


def test_compiled_simplex_qp_equals_numpy_reference_and_brute_force():
    rng = np.random.default_rng(13)
    stats, supports, n_brute = {}, [], 0
    problems = []
    for trial in range(200):
        k = int(rng.choice([2, 3, 4, 5, 6, 8, 12, 16, 24, 33, 48, 64]))
        problems.append(_similarity_qp(rng, k) if trial % 4 else (_random_pd(rng, k), rng.normal(0, 1.0, k)))
    for k in (4, 7, 16, 40):  # exact ties: several weights reach 0 in the same step
        problems.append((rng.choice([1e-2, 1.0]) * np.eye(k), rng.integers(0, 3, k).astype(float)))
    for A, b in problems:
        k = len(b)
        ref, converged = _reference_simplex_qp(A, b, stats=stats)
        assert converged
        w = simplex_qp(A, b)
        _assert_same_minimiser(A, b, w, ref)
        assert w.min() >= 0 and abs(w.sum() - 1) < 1e-12
        if k <= 8:
            np.testing.assert_allclose(w, _brute_force_simplex_qp(A, b), atol=1e-10)
            n_brute += 1
        supports.append((k, int((w > 0).sum())))
    # the stacked solver gives the same weights as one call per problem
    for k in (5, 64):
        same_k = [(A, b) for A, b in problems if len(b) == k]
        W = kri.simplex_qp_rows(np.stack([A for A, _ in same_k]), np.stack([b for _, b in same_k]))
        np.testing.assert_allclose(W, [simplex_qp(A, b) for A, b in same_k], rtol=0, atol=1e-14)
    # every path of the method was taken: releases, several indices hitting 0 in one step,
    # periodic refreshes of A_FF^{-1}, sparse and full supports at large k
    assert stats["released"] >= 10 and stats["multi_drop"] >= 3 and stats["refresh"] >= 20, stats
    assert n_brute >= 50
    assert any(k >= 33 and s == k for k, s in supports) and any(k >= 33 and s <= 3 for k, s in supports)


def test_warm_started_simplex_qp_equals_cold():
    """simplex_qp_rows(w0=...) starts at w0 with F = its support; the minimiser is unique, so
    warm starts from another ridge's solution, from uniform weights and from a vertex agree."""
    rng = np.random.default_rng(21)
    for k in (3, 8, 24, 64):
        pairs = [_similarity_qp(rng, k) for _ in range(12)]
        A, b = np.stack([p[0] for p in pairs]), np.stack([p[1] for p in pairs])
        cold = kri.simplex_qp_rows(A, b)
        shifted = A + 5.0 * np.eye(k)  # another ridge: the CV path's warm start
        for w0 in (kri.simplex_qp_rows(shifted, b), np.full((12, k), 1.0 / k), np.eye(k)[np.zeros(12, int)]):
            warm = kri.simplex_qp_rows(A, b, w0=w0)
            np.testing.assert_allclose(warm, cold, rtol=0, atol=1e-10)  # rounding: A_FF^-1 in another slot order
            np.testing.assert_array_equal(warm > 0, cold > 0)


def test_warm_start_from_padded_smaller_k_solution_equals_cold():
    """The KRI CV path's warm start: the solution of the leading k' x k' block (the k'-NN
    neighbourhood), padded with zeros, starts the k problem; nested problems with duplicated
    neighbours (singular S_N, ties) included. Same weights and support as the cold start."""
    rng = np.random.default_rng(22)
    for K in (2, 5, 16, 48, 128):
        pairs = [_similarity_qp(rng, K) for _ in range(10)]
        A, b = np.stack([p[0] for p in pairs]), np.stack([p[1] for p in pairs])
        cold = kri.simplex_qp_rows(A, b)
        for k_small in sorted({1, 2, K // 4, K // 2, K - 1, K} - {0}):
            if k_small == 1:
                small = np.ones((10, 1))
            else:
                small = kri.simplex_qp_rows(A[:, :k_small, :k_small], b[:, :k_small])
            w0 = np.zeros((10, K))
            w0[:, :k_small] = small
            warm = kri.simplex_qp_rows(A, b, w0=w0)
            np.testing.assert_allclose(warm, cold, rtol=0, atol=1e-10, err_msg=f"K={K} k'={k_small}")
            np.testing.assert_array_equal(warm > 0, cold > 0)
    # exactly duplicated neighbours: the duplicates get equal weights either way
    X = rng.normal(size=(8, 3))
    X = X[[0, 1, 1, 2, 3, 3, 3, 4, 5, 6, 7, 7]]
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    A = (X @ X.T + 1e-3 * np.eye(12))[None]
    b = (X @ np.array([0.6, 0.8, 0.0]))[None]
    cold = kri.simplex_qp_rows(A, b)
    for k_small in (1, 2, 3, 5, 6, 11):
        w0 = np.zeros((1, 12))
        small = np.ones((1, 1)) if k_small == 1 else kri.simplex_qp_rows(A[:, :k_small, :k_small], b[:, :k_small])
        w0[:, :k_small] = small
        warm = kri.simplex_qp_rows(A, b, w0=w0)
        np.testing.assert_allclose(warm, cold, rtol=0, atol=1e-10)
        np.testing.assert_allclose(warm[0, [1, 4, 10]], warm[0, [2, 5, 11]], rtol=0, atol=1e-10)


def test_simplex_qp_warns_when_the_iteration_cap_is_hit():
    rng = np.random.default_rng(14)
    A, b = _similarity_qp(rng, 40)
    A = A + 1e-3 * np.eye(40)
    b = rng.normal(0, 3.0, 40)  # far from uniform: many steps needed
    with pytest.warns(ConvergenceWarning, match="did not terminate in 3 iterations"):
        w = simplex_qp(A, b, max_iter=3)
    ref, converged = _reference_simplex_qp(A, b, max_iter=3)
    assert not converged
    np.testing.assert_allclose(w, ref, rtol=0, atol=1e-12)
    assert w.min() >= 0 and abs(w.sum() - 1) < 1e-12
    with pytest.warns(ConvergenceWarning, match="for 2 problems"):
        kri.simplex_qp_rows(np.stack([A, A]), np.stack([b, b]), max_iter=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        simplex_qp(A, b)


def test_simplex_qp_limits():
    rng = np.random.default_rng(2)
    assert simplex_qp(np.array([[3.0]]), np.array([-7.0])).tolist() == [1.0]
    A, b = _random_pd(rng, 5), rng.normal(size=5)
    np.testing.assert_allclose(simplex_qp(A + 1e8 * np.eye(5), b), np.full(5, 0.2), atol=1e-7)
    # a dominant linear term puts all weight on its largest entry (a vertex)
    np.testing.assert_allclose(simplex_qp(np.eye(4), np.array([0.0, 100.0, 1.0, 2.0])), [0, 1, 0, 0])


# ---------------------------------------------------------------- KRI k-NN (spec 6.3)
def test_kri_weights_are_the_clipped_qp_solution():
    rng = np.random.default_rng(3)
    S, S_te = _indefinite_similarity(rng, 12, 8)
    n_indefinite, W_by = 0, {}
    for transform in ("consistent", "raw"):
        model = KRIKNN(n_neighbors=5, ridge=0.1, test_transform=transform).fit(S, np.arange(12) % 3)
        nb, W = W_by[transform] = model.neighbour_weights(S_te)
        for r in range(len(S_te)):
            mu, U = np.linalg.eigh(S[np.ix_(nb[r], nb[r])])
            n_indefinite += bool((mu < 0).any())
            keep = mu > 1e-12 * np.abs(mu).max()
            K = (U[:, keep] * mu[keep]) @ U[:, keep].T
            s = S_te[r, nb[r]]
            b = U[:, keep] @ (U[:, keep].T @ s) if transform == "consistent" else s
            np.testing.assert_allclose(W[r], _brute_force_simplex_qp(K + 0.1 * np.eye(5), b), atol=1e-10)
    assert n_indefinite >= 2  # some neighbourhoods really needed the clip ...
    assert np.abs(W_by["consistent"][1] - W_by["raw"][1]).max() > 1e-3  # ... and P s_N mattered


def test_kri_batched_weights_equal_per_row_fit_spectrum_and_reference_qp(monkeypatch):
    """Large k, indefinite similarities with duplicate objects: the batched clip + compiled
    solver give the weights of fit_spectrum(S_N, "clip") + the plain-numpy active set, per row."""
    from hlm.neighbors import _weighted as weighted_knn
    from hlm.svm._spectrum import fit_spectrum

    rng = np.random.default_rng(15)
    S, S_te = _indefinite_similarity(rng, 70, 12)
    S[60:], S[:, 60:] = S[:10], S[:, :10]  # objects 60..69 duplicate 0..9
    S_te[:, 60:] = S_te[:, :10]
    y = np.arange(70) % 3
    n_sparse = 0
    for k, lam, transform in [(48, 1e-3, "consistent"), (48, 10.0, "consistent"), (64, 0.1, "raw")]:
        model = KRIKNN(n_neighbors=k, ridge=lam, test_transform=transform).fit(S, y)
        nb, W = model.neighbour_weights(S_te)
        for r in range(len(S_te)):
            clip = fit_spectrum(S[np.ix_(nb[r], nb[r])], "clip")
            s = S_te[r, nb[r]]
            b = clip.projector @ s if transform == "consistent" else s
            ref, _ = _reference_simplex_qp(clip.kernel + lam * np.eye(k), b)
            np.testing.assert_allclose(W[r], ref, rtol=0, atol=1e-10)
            n_sparse += (ref > 0).sum() < k
        # the remembered clip of these neighbourhood blocks (used by the next call) changes nothing
        assert weighted_knn._clip_memo is not None
        np.testing.assert_array_equal(model.neighbour_weights(S_te)[1], W)
        monkeypatch.setattr(weighted_knn, "_clip_memo", None)
        np.testing.assert_array_equal(model.neighbour_weights(S_te)[1], W)
    assert n_sparse >= 10
    # a different fit set of the same shape does not reuse the remembered clip
    S2, S2_te = _indefinite_similarity(rng, 70, 12)
    model = KRIKNN(n_neighbors=64, ridge=0.1, test_transform="raw").fit(S2, y)
    W_memo = model.neighbour_weights(S2_te)[1]
    monkeypatch.setattr(weighted_knn, "_clip_memo", None)
    np.testing.assert_array_equal(model.neighbour_weights(S2_te)[1], W_memo)


def test_kri_grid_path_weights_equal_per_point_weights(monkeypatch):
    """``_weights_path`` as ``predict_grid`` runs it (k increasing, the ``warm`` state carried
    from one k to the next, ridges in any order) gives the weights of one fit per grid point.
    Indefinite similarities with duplicated objects (singular neighbourhood blocks), on the
    [0, 1] scale and scaled up (as 1/d similarities: the ridges are then small, the supports
    hardly change with the ridge, and both warm starts of ``_nearer_start`` are taken)."""
    from hlm.neighbors import _weighted as weighted_knn

    chosen = []

    def recording(by_ridge, by_k, corner):
        w0 = weighted_knn_nearer(by_ridge, by_k, corner)
        chosen.extend((w0 == by_ridge).all(axis=1) & (by_ridge != by_k).any(axis=1))
        return w0

    weighted_knn_nearer = weighted_knn._nearer_start
    monkeypatch.setattr(weighted_knn, "_nearer_start", recording)
    rng = np.random.default_rng(16)
    S, S_te = _indefinite_similarity(rng, 80, 15)
    S[60:], S[:, 60:] = S[:20], S[:, :20]  # objects 60..79 duplicate 0..19
    S_te[:, 60:] = S_te[:, :20]
    y = np.arange(80) % 3
    ridges = [0.01, 10.0, 0.001, 1.0, 0.1]  # not sorted: the path orders them itself
    for transform, scale in (("consistent", 1.0), ("raw", 1.0), ("consistent", 300.0)):
        S, S_te = scale * S, scale * S_te
        warm: dict = {}
        for k in (1, 2, 4, 8, 16, 32, 64, 80):
            model = KRIKNN(n_neighbors=k, test_transform=transform).fit(S, y)
            nb = model._neighbours(S_te)
            path = model._weights_path(S_te, nb, [{"ridge": lam} for lam in ridges], warm)
            assert sorted(warm) == sorted(ridges) and all(w.shape == (15, k) for w in warm.values())
            for lam, W in zip(ridges, path):
                ref = KRIKNN(n_neighbors=k, ridge=lam, test_transform=transform).fit(S, y).neighbour_weights(S_te)[1]
                # scaled: A is ill-conditioned (cond up to ~1e7 at ridge 1e-3), rounding is amplified
                atol = 1e-10 if scale == 1.0 else 1e-7
                np.testing.assert_allclose(W, ref, rtol=0, atol=atol, err_msg=f"k={k} ridge={lam}")
                if scale == 1.0:
                    np.testing.assert_array_equal(W > 0, ref > 0)
        S, S_te = S / scale, S_te / scale
    assert 5 <= sum(chosen) <= len(chosen) - 5  # both starts (where they differ) were taken
    # state from other rows, or from a larger k, is not used as a start
    model = KRIKNN(n_neighbors=8, ridge=0.1).fit(S, y)
    nb = model._neighbours(S_te)
    ref = model.neighbour_weights(S_te)[1]
    for warm in ({0.1: np.full((3, 4), 0.25)}, {0.1: np.full((15, 16), 1 / 16)}):
        np.testing.assert_allclose(model._weights_path(S_te, nb, [{"ridge": 0.1}, {"ridge": 1.0}], warm)[0], ref,
                                   rtol=0, atol=1e-10)


def test_kri_huge_ridge_is_the_knn_vote():
    rng = np.random.default_rng(4)
    S, y, S_te = _rbf_data(rng)
    for k in (1, 3, 7):
        model = KRIKNN(n_neighbors=k, ridge=1e8).fit(S, y)
        _, W = model.neighbour_weights(S_te)
        np.testing.assert_allclose(W, 1.0 / k, atol=1e-7)
        ref = KNNClassifier(n_neighbors=k).fit(1 - S, y).predict(1 - S_te)
        np.testing.assert_array_equal(model.predict(S_te), ref)


def test_kri_one_neighbour_has_weight_one():
    rng = np.random.default_rng(5)
    S, S_te = _indefinite_similarity(rng, 10, 4)
    y = np.arange(10) % 2
    model = KRIKNN(n_neighbors=1, ridge=0.01).fit(S, y)
    nb, W = model.neighbour_weights(S_te)
    np.testing.assert_array_equal(W, 1.0)
    np.testing.assert_array_equal(model.predict(S_te), y[np.argmax(S_te, axis=1)])


def test_kri_consistent_equals_raw_on_positive_definite_neighbourhoods():
    rng = np.random.default_rng(6)
    S, y, S_te = _rbf_data(rng, n_per=6, sep=6.0)
    a = KRIKNN(n_neighbors=4, ridge=0.01).fit(S, y).neighbour_weights(S_te)[1]
    b = KRIKNN(n_neighbors=4, ridge=0.01, test_transform="raw").fit(S, y).neighbour_weights(S_te)[1]
    np.testing.assert_allclose(a, b, atol=1e-9)


# ---------------------------------------------------------------- KRR k-NN (spec 6.4)
def test_krr_equals_kernel_ridge_when_well_conditioned():
    rng = np.random.default_rng(7)
    S, y, S_te = _rbf_data(rng)
    k, lam = 6, 0.5
    model = KRRKNN(n_neighbors=k, ridge=lam).fit(S, y)
    nb, W = model.neighbour_weights(S_te)
    scores = model._scores(nb, W)  # class scores sum_i w_i 1[y_i = g]; -inf for absent classes
    for r in range(len(S_te)):
        S_N, s_N, y_N = S[np.ix_(nb[r], nb[r])], S_te[r, nb[r]][None, :], y[nb[r]]
        kr = KernelRidge(alpha=lam, kernel="precomputed")
        np.testing.assert_allclose(W[r], kr.fit(S_N, np.eye(k)).predict(s_N)[0], rtol=1e-10, atol=1e-12)
        onehot = (y_N[:, None] == model.classes_[None, :]).astype(float)
        ref = kr.fit(S_N, onehot).predict(s_N)[0]
        present = np.isin(model.classes_, y_N)
        np.testing.assert_allclose(scores[r, present], ref[present], rtol=1e-10, atol=1e-12)
        assert np.all(scores[r, ~present] == -np.inf)
    np.testing.assert_array_equal(model.predict(S_te), model.classes_[np.argmax(scores, axis=1)])


def test_krr_zero_ridge_uses_the_hermitian_pseudo_inverse():
    rng = np.random.default_rng(8)
    X = rng.normal(size=(8, 2))
    X[1], X[5] = X[0], X[4]  # duplicates: singular S_N
    S = np.exp(-cdist(X, X, "sqeuclidean"))
    s = np.exp(-cdist(X[:1] + 0.1, X, "sqeuclidean"))
    model = KRRKNN(n_neighbors=8, ridge=0.0).fit(S, np.arange(8) % 2)
    nb, W = model.neighbour_weights(s)
    S_N = S[np.ix_(nb[0], nb[0])]
    np.testing.assert_allclose(W[0], np.linalg.pinv(S_N, hermitian=True) @ s[0, nb[0]], atol=1e-8)


def test_krr_on_indefinite_asymmetric_similarities_uses_sym_plus_ridge():
    rng = np.random.default_rng(12)
    S = rng.uniform(0, 1, (15, 15))  # asymmetric; Sym(S_N) indefinite
    np.fill_diagonal(S, 1.0)
    S_te = rng.uniform(0, 1, (5, 15))
    model = KRRKNN(n_neighbors=7, ridge=0.2).fit(S, np.arange(15) % 3)
    nb, W = model.neighbour_weights(S_te)
    n_indefinite = 0
    for r in range(5):
        S_N = S[np.ix_(nb[r], nb[r])]
        A = (S_N + S_N.T) / 2 + 0.2 * np.eye(7)
        n_indefinite += bool((np.linalg.eigvalsh(A) < 0).any())
        np.testing.assert_allclose(W[r], np.linalg.pinv(A, hermitian=True) @ S_te[r, nb[r]], rtol=1e-9, atol=1e-9)
    assert n_indefinite >= 1


# ---------------------------------------------------------------- affinity k-NN (spec 6.2)
def test_knn_on_one_minus_s_equals_sklearn_and_shares_the_ranking():
    rng = np.random.default_rng(9)
    S, y, S_te = _rbf_data(rng)
    for k in (1, 3, 5):
        ref = KNeighborsClassifier(n_neighbors=k, metric="precomputed").fit(1 - S, y)
        pred = KNNClassifier(n_neighbors=k).fit(1 - S, y).predict(1 - S_te)
        np.testing.assert_array_equal(pred, ref.predict(1 - S_te))
        nb, _ = AffinityKNN(n_neighbors=k).fit(S, y).neighbour_weights(S_te)
        np.testing.assert_array_equal(nb, ref.kneighbors(1 - S_te, return_distance=False))


def test_affinity_equals_knn_when_neighbour_similarities_are_equal():
    rng = np.random.default_rng(10)
    n, m = 30, 60
    y = np.array(["a"] * 14 + ["b"] * 10 + ["c"] * 6)
    S, _ = _indefinite_similarity(rng, n, 0)
    for k in (2, 3, 4, 6):  # even k: count ties, decided by the section-5 rule in both
        S_te = rng.uniform(0, 0.5, (m, n))
        for r in range(m):
            S_te[r, rng.choice(n, k, replace=False)] = 0.7
        ours = AffinityKNN(n_neighbors=k).fit(S, y).predict(S_te)
        ref = KNNClassifier(n_neighbors=k).fit(1 - S, y).predict(1 - S_te)
        np.testing.assert_array_equal(ours, ref)


def test_affinity_weights_change_the_vote():
    S = np.eye(3)
    y = np.array(["a", "b", "b"])
    s = np.array([[0.9, 0.2, 0.2]])
    assert AffinityKNN(n_neighbors=3).fit(S, y).predict(s)[0] == "a"
    assert KNNClassifier(n_neighbors=3).fit(1 - S, y).predict(1 - s)[0] == "b"


def test_affinity_nonpositive_sum_falls_back_to_unweighted_vote_and_warns_on_negatives():
    S = np.eye(4)
    y = np.array(["b", "b", "a", "a"])
    model = AffinityKNN(n_neighbors=3).fit(S, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        nb, W = model.neighbour_weights(np.zeros((1, 4)))
    np.testing.assert_array_equal(nb, [[0, 1, 2]])
    np.testing.assert_array_equal(W, 1 / 3)
    assert model.predict(np.zeros((1, 4)))[0] == "b"
    s_neg = np.array([[0.1, -0.5, -0.6, 0.2]])  # neighbours 3 (a), 0 (b), 1 (b); sum -0.2
    with pytest.warns(UserWarning, match="negative neighbour similarities"):
        assert model.predict(s_neg)[0] == "b"
    s_neg_pos = np.array([[0.1, -0.05, -0.6, 0.9]])  # sum 0.95 > 0: raw weights, a wins
    with pytest.warns(UserWarning, match="1 negative"):
        assert model.predict(s_neg_pos)[0] == "a"


# ---------------------------------------------------------------- vote ties (spec section 5)
@pytest.mark.parametrize("cls", ALL)
def test_vote_tie_goes_to_larger_prior_then_highest_ranked(cls):
    S = 0.1 + 0.9 * np.eye(5)
    s = np.array([[0.5, 0.5, 0.1, 0.1, 0.1]])  # neighbours 0, 1 with equal weights
    model = cls(n_neighbors=2).fit(S, ["b", "a", "a", "b", "a"])  # prior a = 3/5
    assert model.predict(s)[0] == "a"
    S4 = 0.1 + 0.9 * np.eye(4)
    model = cls(n_neighbors=2).fit(S4, ["q", "p", "p", "q"])  # equal priors
    rows = np.array([[0.5, 0.5, 0.1, 0.1], [0.1, 0.1, 0.5, 0.5]])
    np.testing.assert_array_equal(model.predict(rows), ["q", "p"])


def test_weighted_tie_detected_with_rtol():
    S = np.eye(3)
    model = AffinityKNN(n_neighbors=3).fit(S, ["b", "a", "a"])  # prior a = 2/3
    assert model.predict(np.array([[0.6, 0.3, 0.3]]))[0] == "a"  # 0.5 vs 0.25 + 0.25
    assert model.predict(np.array([[0.6, 0.3, 0.29]]))[0] == "b"


# ---------------------------------------------------------------- sklearn plumbing
@pytest.mark.parametrize("cls", ALL)
def test_pairwise_tag_slices_square_matrices_in_cross_val_score(cls):
    rng = np.random.default_rng(11)
    S, y, _ = _rbf_data(rng, n_per=15, sep=4.0)
    cv = StratifiedKFold(5, shuffle=True, random_state=0)
    scores = cross_val_score(cls(n_neighbors=3), S, y, cv=cv)
    manual = [
        np.mean(cls(n_neighbors=3).fit(S[np.ix_(tr, tr)], y[tr]).predict(S[np.ix_(te, tr)]) == y[te])
        for tr, te in cv.split(S, y)
    ]
    np.testing.assert_allclose(scores, manual)
    assert scores.mean() > 0.8


@pytest.mark.parametrize("cls", ALL)
def test_bad_input_raises_data_error(cls):
    S = np.eye(4)
    y = [0, 0, 1, 1]
    with pytest.raises(DataError):
        cls().fit(np.ones((4, 3)), y)
    with pytest.raises(DataError):
        cls().fit(S, [0, 1])
    bad = S.copy()
    bad[1, 2] = np.nan
    with pytest.raises(DataError):
        cls().fit(bad, y)
    model = cls().fit(S, y)
    with pytest.raises(DataError):
        model.predict(np.ones((2, 3)))
    with pytest.raises(DataError):
        model.predict(np.full((2, 4), np.inf))


@pytest.mark.parametrize(
    "model",
    [
        KRIKNN(ridge=0.0),
        KRIKNN(ridge=-1.0),
        KRIKNN(ridge=np.inf),
        KRIKNN(test_transform="flip"),
        KRRKNN(ridge=-1e-3),
        KRRKNN(ridge=np.nan),
        AffinityKNN(n_neighbors=0),
        KRRKNN(n_neighbors=2.5),
    ],
)
def test_invalid_parameters_rejected(model):
    with pytest.raises(InvalidParameterError):
        model.fit(np.eye(4), [0, 0, 1, 1])


def test_k_is_capped_at_fit_set_size():
    S = np.eye(3)
    model = KRRKNN(n_neighbors=50, ridge=0.0).fit(S, ["a", "b", "b"])
    nb, W = model.neighbour_weights(np.array([[0.9, 0.0, 0.0]]))
    assert nb.shape == (1, 3)
    assert model.predict(np.array([[0.9, 0.0, 0.0]]))[0] == "a"


def test_local_clip_is_the_clip_of_fit_spectrum(monkeypatch):
    """One clip (``spectrum.clip_eigenpairs``) serves KRI k-NN's batched local clips and
    ``fit_spectrum``: per block the same kept eigenvalues, and K and P to rounding; for one
    matrix it returns exactly the kept eigenpairs."""
    from hlm.neighbors import _weighted as weighted_knn
    from hlm.svm._spectrum import clip_eigenpairs, fit_spectrum

    rng = np.random.default_rng(21)
    k = 12
    blocks = []
    for rank in (1, 3, 7, k):  # PSD blocks of several ranks, and indefinite ones
        X = rng.normal(size=(k, rank))
        blocks.append(X @ X.T)
        B = rng.normal(size=(k, k))
        blocks.append((B + B.T) / 2.0)
    blocks = np.stack(blocks)
    monkeypatch.setattr(weighted_knn, "_clip_memo", None)
    mu_clip, U_keep, K = weighted_knn._local_clip(blocks)
    for r, block in enumerate(blocks):
        t = fit_spectrum(block, "clip")
        scale = np.abs(t.eigenvalues).max()
        tau = 1e-12 * scale
        assert (mu_clip[r] != 0).sum() == (t.eigenvalues > tau).sum()
        np.testing.assert_allclose(K[r], t.kernel, rtol=0, atol=1e-12 * scale)
        np.testing.assert_allclose(U_keep[r] @ U_keep[r].T, t.projector, rtol=0, atol=1e-12)
        mu, U = np.linalg.eigh(block)
        one_mu, one_U, one_K = clip_eigenpairs(mu, U)
        keep = mu > tau
        assert np.array_equal(one_mu, mu[keep]) and np.array_equal(one_U, U[:, keep])
        assert np.array_equal(one_K, t.kernel)
