"""P-SVM (spec docs/compared-methods-spec.md section 6.9) against known answers (spec section 9) and against the
reference solvers of ``tests/oracles/psvm_reference.py`` (pure coordinate descent, the Newton-phase solver)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize
from sklearn.linear_model import Lasso
from sklearn.model_selection import cross_val_score
from sklearn.utils._param_validation import InvalidParameterError

from hlm.errors import DataError
from hlm.svm._psvm import (
    PSVM,
    apply_normalisation,
    dual_path,
    dual_terms,
    kkt_violation,
    normalise_columns,
    psvm_dual,
    solve_dual,
    solver_tolerance,
)
from oracles.psvm_reference import cd_solve_dual, newton_solve_dual, reference_dual_path


# -- helpers -------------------------------------------------------------------
def _problem(m: int, P: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A normalised random data matrix and +-1 labels that depend on it (so alpha is not tiny)."""
    rng = np.random.default_rng(seed)
    K = rng.normal(size=(m, P))
    y = np.where(K[:, :3].sum(axis=1) + 0.5 * rng.normal(size=m) >= 0, 1.0, -1.0)
    return normalise_columns(K)[0], y


def _spec_terms(K_tilde, y):
    """Q = K~'K~ and c = K~'(y - mean y) of the dual as spec 6.9 writes them (not production's ``dual_terms``)."""
    y = np.asarray(y, dtype=np.float64)
    return K_tilde.T @ K_tilde, K_tilde.T @ (y - y.mean())


def _objective(K_tilde, y, alpha, eps) -> float:
    Q, c = _spec_terms(K_tilde, y)
    return float(0.5 * alpha @ Q @ alpha - c @ alpha + eps * np.abs(alpha).sum())


def _clusters(n_per: int, seed: int, centres=((0, 0), (4, 0), (0, 4))) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = np.vstack([np.asarray(c, float) + 0.5 * rng.normal(size=(n_per, 2)) for c in centres])
    return X, np.repeat(np.arange(len(centres)), n_per)


def _similarity(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """A Gaussian similarity between point sets (rows of A vs rows of B)."""
    return np.exp(-((A[:, None, :] - B[None, :, :]) ** 2).sum(axis=2) / 8.0)


# -- normalisation (spec 6.9) -------------------------------------------------------
def test_normalise_columns_centres_scales_and_drops_constant_columns():
    rng = np.random.default_rng(0)
    K = rng.normal(size=(12, 5))
    K[:, 2] = 3.0  # constant column
    K_tilde, mean, scale, keep = normalise_columns(K)
    assert keep.tolist() == [True, True, False, True, True]
    np.testing.assert_allclose(K_tilde.mean(axis=0), 0.0, atol=1e-15)
    np.testing.assert_allclose(np.linalg.norm(K_tilde, axis=0), 1.0, rtol=1e-14)
    np.testing.assert_allclose(scale, K[:, keep].std(axis=0) * np.sqrt(12), rtol=1e-14)
    np.testing.assert_allclose(apply_normalisation(K, mean, scale, keep), K_tilde, rtol=0, atol=1e-15)


def test_test_rows_use_fit_set_statistics():
    """One test row on its own, or a shifted test set, must be mapped with the fit-set mean/scale."""
    X, y = _clusters(8, seed=1, centres=((0, 0), (3, 0)))
    X_te = np.array([[1.0, 0.2], [2.5, -0.4], [0.3, 0.1]])
    S, S_te = _similarity(X, X), _similarity(X_te, X)
    model = PSVM(C=10.0, epsilon=0.01).fit(S, y)

    # known answer: normalise with the statistics of the fit rows, solve, f = k~'alpha + mean(y)
    K_tilde, mean, scale, keep = normalise_columns(S)
    y_pm = np.where(y == 0, 1.0, -1.0)
    alpha, _, converged = psvm_dual(K_tilde, y_pm, 10.0, 0.01)
    assert converged and np.count_nonzero(alpha) > 0
    expected = apply_normalisation(S_te, mean, scale, keep) @ alpha + y_pm.mean()
    np.testing.assert_allclose(model._pair_decisions(S_te)[:, 0], expected, rtol=1e-8, atol=1e-10)
    # the oracle can tell: the test rows' own statistics give other decisions
    own = (S_te[:, keep] - S_te[:, keep].mean(axis=0)) / (S_te[:, keep].std(axis=0) * np.sqrt(len(S_te)))
    assert not np.allclose(own @ alpha + y_pm.mean(), expected, rtol=1e-3)

    # row by row = batch (a single row normalised on its own would be constant -> all columns dropped)
    one_by_one = np.concatenate([model._pair_decisions(S_te[i : i + 1])[:, 0] for i in range(len(S_te))])
    np.testing.assert_allclose(one_by_one, expected, rtol=1e-12, atol=1e-12)


# -- dual solver oracles (spec 9) ---------------------------------------------------
@pytest.mark.parametrize("m, P, eps", [(40, 25, 0.05), (40, 25, 0.3), (20, 35, 0.02)])
@pytest.mark.parametrize("solver", ["production", "pure_cd"])
def test_infinite_C_equals_lasso(m, P, eps, solver):
    """C = inf: the dual is Lasso(alpha=eps/m, fit_intercept=False) on (K~, y - mean y) (spec 6.9);
    the production solver and the pure coordinate descent oracle."""
    K_tilde, y = _problem(m, P, seed=m + P)
    solve = solve_dual if solver == "production" else cd_solve_dual
    alpha, _, converged = solve(*dual_terms(K_tilde, y), np.inf, eps, tol=1e-13, max_sweeps=200_000)
    lasso = Lasso(alpha=eps / m, fit_intercept=False, tol=1e-15, max_iter=1_000_000)
    lasso.fit(K_tilde, y - y.mean())
    assert converged
    assert np.count_nonzero(alpha) >= 3  # a non-trivial solution
    np.testing.assert_allclose(alpha, lasso.coef_, rtol=0, atol=1e-8)


def _lbfgs_split(K_tilde, y, C, eps) -> float:
    """Min of the smooth split-variable dual over alpha+, alpha- in [0, C] (spec 9)."""
    Q, c = _spec_terms(K_tilde, y)
    P = len(c)

    def fun(z):
        a = z[:P] - z[P:]
        Qa = Q @ a
        grad_a = Qa - c
        return 0.5 * a @ Qa - c @ a + eps * z.sum(), np.concatenate([grad_a + eps, -grad_a + eps])

    res = minimize(fun, np.zeros(2 * P), jac=True, method="L-BFGS-B", bounds=[(0.0, C)] * (2 * P),
                   options={"ftol": 1e-15, "gtol": 1e-12, "maxiter": 50_000, "maxcor": 30})
    return float(res.fun)


@pytest.mark.parametrize("m, P, C, eps", [(40, 25, 0.5, 0.05), (20, 35, 0.3, 0.02), (30, 30, 2.0, 0.1)])
def test_finite_C_matches_lbfgsb(m, P, C, eps):
    K_tilde, y = _problem(m, P, seed=3 * m + P)
    alpha, _, converged = psvm_dual(K_tilde, y, C, eps, tol=1e-10)
    assert converged
    assert np.any(np.abs(alpha) == C), "the box must be active for this test to mean something"
    ours, reference = _objective(K_tilde, y, alpha, eps), _lbfgs_split(K_tilde, y, C, eps)
    assert abs(ours - reference) <= 1e-6 * max(1.0, abs(reference))
    assert ours <= reference + 1e-9  # coordinate descent is at least as good


def _check_kkt(K_tilde, y, alpha, C, eps, atol):
    """The four KKT conditions of spec 6.9, checked independently of the solver's code."""
    Q, c = _spec_terms(K_tilde, y)
    g = Q @ alpha - c
    zero, upper, lower = alpha == 0, alpha == C, alpha == -C
    interior = ~(zero | upper | lower)
    assert np.all(np.abs(g[zero]) <= eps + atol)
    assert np.all(np.abs(g[interior] + eps * np.sign(alpha[interior])) <= atol)
    assert np.all(g[upper] + eps <= atol)
    assert np.all(g[lower] - eps >= -atol)
    assert np.all(np.abs(alpha) <= C)


@pytest.mark.parametrize("C, eps", [(np.inf, 0.01), (1e5, 1e-3), (0.2, 0.05), (1e-3, 1e-3)])
def test_kkt_conditions_hold_at_the_solution(C, eps):
    """Includes a rank-deficient Q (fewer rows than columns, a duplicated column)."""
    K_tilde, y = _problem(25, 40, seed=7)
    K_tilde = np.hstack([K_tilde, K_tilde[:, :1]])
    alpha, _, converged = psvm_dual(K_tilde, y, C, eps, tol=1e-9, max_sweeps=100_000)
    assert converged
    _, c = dual_terms(K_tilde, y)
    atol = 1e-9 * max(1.0, np.abs(c).max())
    _check_kkt(K_tilde, y, alpha, C, eps, atol)
    assert kkt_violation(K_tilde, y, alpha, C, eps) <= atol
    # the accelerated and the pure coordinate descent (oracle) reach the same optimum
    pure, _, pure_converged = cd_solve_dual(*dual_terms(K_tilde, y), C, eps, tol=1e-9, max_sweeps=1_000_000)
    assert pure_converged
    assert _objective(K_tilde, y, alpha, eps) == pytest.approx(_objective(K_tilde, y, pure, eps), abs=1e-8)


def test_large_epsilon_gives_zero_alpha_and_majority_class():
    K_tilde, y = _problem(30, 20, seed=2)
    _, c = dual_terms(K_tilde, y)
    alpha, n_sweeps, converged = psvm_dual(K_tilde, y, 1.0, np.abs(c).max())
    assert converged and n_sweeps == 0 and not alpha.any()

    X, labels = _clusters(10, seed=3, centres=((0, 0), (1, 0)))
    keep = np.r_[0:3, 10:20]  # 3 of "a", 10 of "b"
    names = np.array(["a", "b"])[labels[keep]]
    S = _similarity(X[keep], X[keep])
    model = PSVM(C=1.0, epsilon=1e3).fit(S, names)
    assert not model.pair_models_[0].alpha.any()
    assert model.pair_models_[0].intercept == pytest.approx((3 - 10) / 13)
    assert (model.predict(_similarity(X, X[keep])) == "b").all()


# -- classifier ------------------------------------------------------------------------
@pytest.mark.parametrize("columns", ["all", "pair"])
def test_three_separable_classes_zero_training_error(columns):
    X, y = _clusters(10, seed=4)
    S = _similarity(X, X)
    model = PSVM(C=100.0, epsilon=0.01, columns=columns).fit(S, y + 5)
    assert [(p.a, p.b) for p in model.pair_models_] == [(0, 1), (0, 2), (1, 2)]
    assert all(p.converged for p in model.pair_models_)
    np.testing.assert_array_equal(model.predict(S), y + 5)
    if columns == "pair":  # rows and columns are the pair's own objects
        np.testing.assert_array_equal(model.pair_models_[0].columns, np.arange(20))
    X_te, y_te = _clusters(5, seed=5)
    np.testing.assert_array_equal(model.predict(_similarity(X_te, X)), y_te + 5)


def test_vote_ties_go_to_the_smallest_class():
    X, y = _clusters(5, seed=6)
    model = PSVM().fit(_similarity(X, X), y)
    # pairs (0,1), (0,2), (1,2): 0 beats 1, 2 beats 0, 1 beats 2 -> one vote each; f = 0 votes for the earlier class
    model._pair_decisions = lambda S: np.array([[1.0, -1.0, 1.0], [-1.0, 0.0, -1.0], [-1.0, -1.0, 0.0]])
    np.testing.assert_array_equal(model.predict(None), [0, 0, 1])


def test_non_convergence_warns():
    X, y = _clusters(10, seed=7, centres=((0, 0), (1, 0)))
    with pytest.warns(UserWarning, match=r"P-SVM \(C=100000, epsilon=0.001\).*class pair \(0, 1\)"):
        model = PSVM(C=1e5, epsilon=1e-3, max_sweeps=1).fit(_similarity(X, X), y)
    assert not model.pair_models_[0].converged


def test_pairwise_tag_and_cross_val_score():
    X, y = _clusters(8, seed=8)
    S = _similarity(X, X)
    assert PSVM().__sklearn_tags__().input_tags.pairwise
    scores = cross_val_score(PSVM(C=10.0, epsilon=0.01), S, y, cv=4)
    assert scores.shape == (4,) and scores.mean() >= 0.9
    # the same as slicing S[train][:, train] / S[test][:, train] by hand
    from sklearn.model_selection import StratifiedKFold

    manual = []
    for tr, te in StratifiedKFold(4).split(S, y):
        model = PSVM(C=10.0, epsilon=0.01).fit(S[np.ix_(tr, tr)], y[tr])
        manual.append((model.predict(S[np.ix_(te, tr)]) == y[te]).mean())
    np.testing.assert_allclose(scores, manual)


def test_bad_input_and_parameters():
    X, y = _clusters(4, seed=9)
    S = _similarity(X, X)
    bad = S.copy()
    bad[1, 2] = np.nan
    with pytest.raises(DataError):
        PSVM().fit(bad, y)
    with pytest.raises(DataError):
        PSVM().fit(S[:, :-1], y)
    with pytest.raises(DataError):
        PSVM().fit(S, y[:-1])
    model = PSVM().fit(S, y)
    with pytest.raises(DataError):
        model.predict(S[:, :-1])
    with pytest.raises(InvalidParameterError):
        PSVM(C=0.0).fit(S, y)
    with pytest.raises(InvalidParameterError):
        PSVM(columns="rows").fit(S, y)
    PSVM(C=np.inf, epsilon=0.05).fit(S, y)  # C = inf is allowed


# -- the CV grid path (warm starts, reuse once no coordinate is on the box) ------
def test_dual_path_meets_the_kkt_rule_and_the_cold_objective():
    K_tilde, y = _problem(60, 40, seed=5)
    Q, c = dual_terms(K_tilde, y)
    points = [(C, eps) for eps in (1.0, 0.1, 0.01, 0.001) for C in (1e-3, 0.1, 10.0, 1e3, 1e5)]
    path = dual_path(Q, c, points, tol=1e-9, max_sweeps=100_000)
    assert set(path) == set(points)
    for C, eps in points:
        alpha, _, converged = path[(C, eps)]
        assert converged and np.abs(alpha).max(initial=0.0) <= C
        assert kkt_violation(K_tilde, y, alpha, C, eps) <= solver_tolerance(c, 1e-9)
        cold, _, _ = solve_dual(Q, c, C, eps, tol=1e-9, max_sweeps=100_000)
        cold_objective = _objective(K_tilde, y, cold, eps)
        assert _objective(K_tilde, y, alpha, eps) == pytest.approx(cold_objective, rel=1e-7, abs=1e-10)
    costs = sorted({C for C, _ in points})
    reused = sum(path[(C, eps)][0] is path[(before, eps)][0]  # the same array: not solved again
                 for _, eps in points[:: len(costs)] for before, C in zip(costs, costs[1:]))
    assert reused >= 3  # large C: the unbounded solution is reused, not re-solved


@pytest.mark.parametrize("m, P", [(60, 40), (30, 90)])
def test_active_set_first_from_a_neighbouring_epsilon(monkeypatch, m, P):
    """From the solution at the previous epsilon, the active-set phase alone meets the KKT rule (0 CD
    sweeps) with the cold solve's objective; where the phase cannot finish (here: it does nothing), the
    CD blocks take over from its point. dual_path asks for it exactly where a previous epsilon's
    solution at the same C exists."""
    from hlm.svm._psvm import solver

    K_tilde, y = _problem(m, P, seed=11)
    Q, c = dual_terms(K_tilde, y)
    tol = solver_tolerance(c, 1e-9)
    for C, (eps_before, eps) in [(10.0, (0.01, 0.001)), (1.0, (0.1, 0.01)), (np.inf, (0.1, 0.01))]:
        warm, _, _ = solve_dual(Q, c, C, eps_before, tol=1e-9, max_sweeps=100_000)
        cold, _, _ = solve_dual(Q, c, C, eps, tol=1e-9, max_sweeps=100_000)
        alpha, sweeps, converged = solve_dual(Q, c, C, eps, tol=1e-9, max_sweeps=100_000, alpha0=warm,
                                              active_set_first=True)
        assert converged and sweeps == 0 and kkt_violation(K_tilde, y, alpha, C, eps) <= tol
        assert _objective(K_tilde, y, alpha, eps) == pytest.approx(_objective(K_tilde, y, cold, eps), rel=1e-9)
        with monkeypatch.context() as patch:
            patch.setattr(solver, "_active_set_phase", lambda *a, **k: 0)
            alpha, sweeps, converged = solve_dual(Q, c, C, eps, tol=1e-9, max_sweeps=100_000, alpha0=warm,
                                                  active_set_first=True)
        assert converged and sweeps > 0 and kkt_violation(K_tilde, y, alpha, C, eps) <= tol
    calls, solve = [], solver.solve_dual

    def recording(Q, c, C, eps, *args, **kwargs):
        calls.append((C, eps, kwargs["active_set_first"]))
        return solve(Q, c, C, eps, *args, **kwargs)

    monkeypatch.setattr(solver, "solve_dual", recording)
    solver.dual_path(Q, c, [(C, eps) for eps in (1.0, 0.01) for C in (0.1, 1.0, 1e5)])
    assert {first for _, _, first in calls} == {True, False}
    assert all(first == (eps == 0.01) for _, eps, first in calls), calls


@pytest.mark.parametrize("seed", range(6))
def test_rank_deficient_pairs_converge(seed):
    """Fewer rows than columns (Q singular): dependent free coordinates are settled by the
    null-space step instead of crawling (it stalled at ~1.4x the tolerance for 1e5 sweeps)."""
    K_tilde, y = _problem(30, 90, seed=seed)
    for C, eps in [(0.3, 0.05), (1.0, 0.01), (1.0, 0.1)]:
        alpha, n_sweeps, converged = psvm_dual(K_tilde, y, C, eps, tol=1e-9, max_sweeps=3_000)
        assert converged, (C, eps, n_sweeps)
        assert kkt_violation(K_tilde, y, alpha, C, eps) <= 1e-9 * max(1.0, np.abs(dual_terms(K_tilde, y)[1]).max())


# -- the solver vs the reference solvers (tests/oracles); spec 6.9 "Solver" -----------------
def test_dpstrf_factor_matches_the_reference_pivoted_cholesky():
    """The solver's LAPACK pivoted Cholesky (``dpstrf``, upper factor, as in ``_active_set_phase``) vs the
    oracle's scalar one: same pivots, rank and factor on a singular PSD matrix (rank 12 of 30)."""
    from scipy.linalg.lapack import dpstrf

    from hlm.svm._psvm import PIVOT_RTOL
    from oracles.psvm_reference import _pivoted_cholesky

    rng = np.random.default_rng(11)
    B = rng.normal(size=(12, 30))
    A = B.T @ B
    L, piv, rank = _pivoted_cholesky(A, PIVOT_RTOL)
    for lower in (1, 0):
        factor, piv2, rank2, info = dpstrf(A.copy(), lower=lower, tol=PIVOT_RTOL * A.diagonal().max())
        assert rank == rank2 == 12 and info == 1
        np.testing.assert_array_equal(piv[:rank], piv2[:rank] - 1)
        L2 = np.tril(factor[:rank, :rank]) if lower else np.triu(factor[:rank, :rank]).T
        np.testing.assert_allclose(L2, L, rtol=0, atol=1e-10)


def test_reference_cholesky_kernels():
    """The oracle's own factor kernels: solve with L L', delete a row/column by Givens rotations."""
    from oracles.psvm_reference import _cholesky_delete, _cholesky_solve

    rng = np.random.default_rng(12)
    for n in (1, 2, 7, 30):
        B = rng.normal(size=(n + 2, n))
        A = B.T @ B
        L = np.linalg.cholesky(A)
        for q in range(n):
            M = L.copy()
            _cholesky_delete(M, n, q)
            keep = np.delete(np.arange(n), q)
            np.testing.assert_array_equal(M, np.tril(M))
            np.testing.assert_allclose(M[: n - 1, : n - 1] @ M[: n - 1, : n - 1].T, A[np.ix_(keep, keep)],
                                       rtol=1e-12, atol=1e-12)
        b = rng.normal(size=n)
        np.testing.assert_allclose(_cholesky_solve(L, n, b), np.linalg.solve(A, b), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("m, P, seed", [(60, 20, 1), (80, 40, 2), (50, 45, 3)])
@pytest.mark.parametrize("C, eps", [(0.3, 0.05), (10.0, 0.001), (np.inf, 0.01)])
def test_unique_solution_equals_the_references_within_the_kkt_bound(m, P, seed, C, eps):
    """Q nonsingular (more rows than columns): the solution is unique, and a point whose KKT
    violations are at most tol_abs lies within sqrt(P) tol_abs / lambda_min(Q) of it (the violations
    are the distances of 0 to the coordinates' subdifferentials; the dual is lambda_min-strongly
    convex). So the three solvers' solutions are within twice that of each other."""
    K_tilde, y = _problem(m, P, seed)
    Q, c = dual_terms(K_tilde, y)
    tol_abs = solver_tolerance(c, 1e-9)
    bound = 2.0 * np.sqrt(P) * tol_abs / np.linalg.eigvalsh(Q)[0]
    new, _, ok = solve_dual(Q, c, C, eps, tol=1e-9, max_sweeps=100_000)
    assert ok and np.count_nonzero(new) >= 3
    for solve in (cd_solve_dual, newton_solve_dual):
        other, _, other_ok = solve(Q, c, C, eps, tol=1e-9, max_sweeps=1_000_000)
        assert other_ok
        assert np.linalg.norm(new - other) <= bound


def _counting_active_set(monkeypatch):
    """Wrap the solver's ``_active_set_phase`` so that its step counters are summed up (returned array)."""
    from hlm.svm._psvm import solver

    total, phase = np.zeros(6, dtype=np.int64), solver._active_set_phase

    def counting(*a):
        stats = np.zeros(6, dtype=np.int64)
        out = phase(*a, stats=stats)
        total[:] += stats
        return out

    monkeypatch.setattr(solver, "_active_set_phase", counting)
    return total


@pytest.mark.parametrize("m, P, seed", [(40, 25, 1), (25, 40, 2), (30, 90, 3), (60, 60, 4), (80, 200, 5)])
@pytest.mark.parametrize("C, eps", [(0.3, 0.05), (1.0, 0.01), (10.0, 0.001), (np.inf, 0.01)])
def test_solver_matches_the_reference_solvers(monkeypatch, m, P, seed, C, eps):
    """Random and rank-deficient (m < P, a duplicated column) problems: the solver meets the KKT rule
    on the exact gradient and reaches the objective of the Newton-phase and the pure coordinate
    descent references; the active-set phase ran and finished the solve (additions inside the
    phase: see the path test)."""
    K_tilde, y = _problem(m, P, seed)
    K_tilde = np.hstack([K_tilde, K_tilde[:, :1]])  # a duplicated column: rank-deficient
    Q, c = dual_terms(K_tilde, y)
    tol_abs = solver_tolerance(c, 1e-9)
    counts = _counting_active_set(monkeypatch)
    new, new_sweeps, new_ok = solve_dual(Q, c, C, eps, tol=1e-9, max_sweeps=100_000)
    monkeypatch.undo()
    assert counts[0] > 0  # the active-set phase ran and took Newton steps
    assert new_sweeps <= 20  # the phase finished the solve, not CD
    newton, _, newton_ok = newton_solve_dual(Q, c, C, eps, tol=1e-9, max_sweeps=100_000)
    pure, _, pure_ok = cd_solve_dual(Q, c, C, eps, tol=1e-9, max_sweeps=1_000_000)
    assert new_ok and newton_ok and pure_ok
    assert kkt_violation(K_tilde, y, new, C, eps) <= tol_abs
    _check_kkt(K_tilde, y, new, C, eps, tol_abs)
    f_new = _objective(K_tilde, y, new, eps)
    for other in (newton, pure):
        assert f_new == pytest.approx(_objective(K_tilde, y, other, eps), rel=1e-9, abs=1e-10)


def test_active_set_null_space_steps_and_cuts(monkeypatch):
    """Many duplicated columns (Q far from full rank): dependent violators take null-space steps,
    steps are cut, and the solution still meets the KKT rule with the reference objective."""
    rng = np.random.default_rng(21)
    K_tilde, y = _problem(30, 40, seed=21)
    K_tilde = np.hstack([K_tilde, K_tilde[:, rng.integers(0, 40, size=40)]])
    Q, c = dual_terms(K_tilde, y)
    counts = _counting_active_set(monkeypatch)
    for C, eps in [(0.3, 0.05), (1.0, 0.01), (10.0, 0.001)]:
        new, _, ok = solve_dual(Q, c, C, eps, tol=1e-9, max_sweeps=100_000)
        old, _, old_ok = newton_solve_dual(Q, c, C, eps, tol=1e-9, max_sweeps=100_000)
        assert ok and old_ok
        assert kkt_violation(K_tilde, y, new, C, eps) <= solver_tolerance(c, 1e-9)
        assert _objective(K_tilde, y, new, eps) == pytest.approx(_objective(K_tilde, y, old, eps), rel=1e-9, abs=1e-10)
    assert counts[1] > 0 and counts[3] > 0  # cuts and null-space steps


def test_dual_path_matches_the_reference_paths(monkeypatch):
    """The grid path (active-set phases, the better of two warm starts) vs the reference paths
    (Newton-phase and pure coordinate descent solves, the earlier warm-start rule)."""
    K_tilde, y = _problem(30, 70, seed=9)  # rank-deficient
    Q, c = dual_terms(K_tilde, y)
    points = [(C, eps) for eps in (1.0, 0.1, 0.01, 0.001) for C in (1e-3, 0.1, 1.0, 10.0, 1e3, 1e5)]
    counts = _counting_active_set(monkeypatch)
    new = dual_path(Q, c, points, tol=1e-9, max_sweeps=100_000)
    monkeypatch.undo()
    assert counts[2] > 0
    newton = reference_dual_path(Q, c, points, tol=1e-9, max_sweeps=100_000)
    pure = reference_dual_path(Q, c, points, tol=1e-9, max_sweeps=100_000, solve=cd_solve_dual)
    for C, eps in points:
        assert new[(C, eps)][2] and newton[(C, eps)][2] and pure[(C, eps)][2]
        assert kkt_violation(K_tilde, y, new[(C, eps)][0], C, eps) <= solver_tolerance(c, 1e-9)
        f_new = _objective(K_tilde, y, new[(C, eps)][0], eps)
        for path in (newton, pure):
            assert f_new == pytest.approx(_objective(K_tilde, y, path[(C, eps)][0], eps), rel=1e-9, abs=1e-10)


def _pipeline_fold(dataset: str):
    """(estimator, matrix, y, grid, fit, val) of split 0, CV fold 0 of ``dataset`` with the pipeline's
    config (P-SVM grid, protocol), from the pipeline's artifacts if built, else prepared from the raw
    file of the registry (the same distances and splits); skips if neither is there."""
    from pathlib import Path

    import pandas as pd

    from hlm.base._seeds import derive_seed
    from hlm.datasets._artifacts import read_distances
    from hlm.datasets._prepare import prepare_dataset
    from hlm.datasets._registry import load_registry
    from hlm.distances._reciprocal import SimilarityFromDistances
    from hlm.pipeline.config import load_config
    from hlm.pipeline.evaluation.cv import make_folds
    from hlm.pipeline.evaluation.evaluate import _nested, method_input
    from hlm.pipeline.evaluation.splits import make_splits, split_indices
    from hlm.pipeline.methods import check_method_params

    root = Path(__file__).resolve().parents[2]
    config = load_config(root / "config/config.yaml")
    data, split_file = root / f"results/distances/{dataset}.parquet", root / f"results/splits/{dataset}.parquet"
    if data.exists() and split_file.exists():
        artifact, splits = read_distances(data), pd.read_parquet(split_file)
    else:
        spec = load_registry(root / config["registry"]).get(dataset)
        if spec is None or spec.path is None or not (root / spec.path).exists():
            pytest.skip(f"{dataset}: neither pipeline artifacts nor the raw data")
        artifact = prepare_dataset(spec, root)
        splits = make_splits(len(artifact.labels), dataset=dataset, n_splits=config["n_splits"],
                             test_fraction=config["test_fraction"], seed=config["seed"])
    grid = check_method_params("psvm", config["method_params"].get("psvm") or {})
    X, wrapped = method_input(artifact, "psvm")
    train, _ = split_indices(splits, 0)
    y = artifact.labels[train]
    fit, val = make_folds(y, config["cv_folds"], derive_seed(config["seed"], dataset, 0, "cv"))[0]
    estimator = SimilarityFromDistances(PSVM()) if wrapped else PSVM()
    grid = [_nested(p) for p in grid] if wrapped else grid
    return estimator, X[np.ix_(train, train)], y, grid, fit, val


@pytest.mark.parametrize("dataset", ["italy_power", "voting", "protein", "sonar"])
def test_cv_fold_same_errors_as_the_reference_solver(monkeypatch, dataset):
    """On a real CV fold (split 0, fold 0, the pipeline's grid; Italy Power Demand if built, and the
    raw Voting, Protein (4 classes) and Sonar (vectors: similarities from distances)) the solver's
    grid path gives the same validation errors, hence the same chosen (C, epsilon), as the
    Newton-phase reference path."""
    from hlm.pipeline.evaluation.cv import cv_errors
    from hlm.svm._psvm import estimator as psvm_estimator

    estimator, D, y, grid, fit, val = _pipeline_fold(dataset)
    calls = []
    monkeypatch.setattr(psvm_estimator, "dual_path", lambda *a, **k: calls.append("new") or dual_path(*a, **k))
    new = cv_errors(estimator, D, y, grid, [(fit, val)])[:, 0]
    monkeypatch.setattr(
        psvm_estimator, "dual_path", lambda *a, **k: calls.append("ref") or reference_dual_path(*a, **k)
    )
    old = cv_errors(estimator, D, y, grid, [(fit, val)])[:, 0]
    assert "new" in calls and "ref" in calls  # both went through PSVM's grid path
    np.testing.assert_array_equal(new, old)
    assert np.argmin(new) == np.argmin(old)


# -- active-set phase: the upper-factor kernels (``hlm.svm._psvm.cholesky``); spec 6.9 "Solver" ---
def test_upper_factor_kernels():
    """Solves with U (U'U = A) and the deletion of a row/column by Givens rotations of row pairs
    (which also carry the forward-solved right-hand side U'z = b along)."""
    from hlm.svm._psvm.cholesky import _upper_back, _upper_delete, _upper_forward

    rng = np.random.default_rng(13)
    for n in (1, 2, 7, 30):
        B = rng.normal(size=(n + 2, n))
        A = B.T @ B
        U = np.linalg.cholesky(A).T.copy()
        b = rng.normal(size=n)
        np.testing.assert_allclose(_upper_forward(U, n, b), np.linalg.solve(U.T, b), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(_upper_back(U, n, b), np.linalg.solve(U, b), rtol=1e-10, atol=1e-12)
        for q in range(n):
            V = np.zeros((n + 3, n + 3))  # spare capacity, as in the solver
            V[:n, :n] = U
            z = np.linalg.solve(U.T, b)
            _upper_delete(V, n, q, z)
            R = V[: n - 1, : n - 1]
            keep = np.delete(np.arange(n), q)
            if n > 1:  # z follows: R'z_new = b without entry q
                np.testing.assert_allclose(z[: n - 1], np.linalg.solve(R.T, b[keep]), rtol=1e-9, atol=1e-10)
            np.testing.assert_array_equal(R, np.triu(R))
            assert np.all(np.diag(R) > 0.0)
            np.testing.assert_allclose(R.T @ R, A[np.ix_(keep, keep)], rtol=1e-12, atol=1e-12)
            assert not V[n - 1 :].any() and not V[:, n - 1 :].any()
