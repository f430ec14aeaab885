"""Regularized local SDA (docs/local-sda-family-spec.md section 6): zeta = 0 is local SDA, zeta = 1 is
P_ave alone, P_ave is a pmf and a known average, the row-by-row reference
(tests/oracles/local_sda_regularized_reference.py) and the CV path, in the marginal and the joint form."""

import numpy as np
import pytest
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.utils._param_validation import InvalidParameterError
from test_local_sda import (
    EPS,
    S_DEG,
    S_HAND,
    S_TE_DEG,
    S_TE_THREE,
    S_THREE,
    STYLES,
    ULPS,
    Y_DEG,
    Y_HAND,
    Y_THREE,
    _bits_equal,
    _blob_similarity,
    _fit_row_fast,
    _random_problem,
    _random_support,
    assert_solves_moment_constraint,
    blob_accuracy_floor,
    check_bad_input,
    three_point_pmf,
)

import oracles.local_sda_regularized_reference as ref
from hlm.base._grid import predict_each
from hlm.local_sda._kernels.core import _BRENT_RTOL, LAMBDA_CAP, UNIFORM, XTOL, _solve_lambda_nb
from hlm.local_sda._kernels.regularized import _nearest_nb, _solve_lambda_table_nb
from hlm.local_sda._local_sda import LocalSDA, leave_one_out_order
from hlm.local_sda._regularized import RegularizedLocalSDA, _roots, loo_pmfs
from oracles.local_sda_reference import STATUS_NAMES, fit_row, local_centroids, support_r
from oracles.tie_rules import neighbours, tie_winner

ZETAS = (1e-6, 1e-3, 0.1, 0.5, 0.9, 1.0)


# ---------------------------------------------------------------- zeta = 0 and zeta = 1
@pytest.mark.parametrize("degenerate", ["centroid", "knn", "exact"])
@pytest.mark.parametrize("prior", ["local", "global"])
@pytest.mark.parametrize("form", ["marginal", "joint"])
def test_zeta_zero_is_local_sda_fallback_included(degenerate, prior, form):
    rng = np.random.default_rng(21)
    n_fallback = 0
    for trial in range(6):
        S_fit, y_fit, S_val = _random_problem(rng, 75, 2 + trial % 3, STYLES[trial % 4])
        for k in (1, 2, 3, 6, 12, 30):
            kw = {"n_neighbors": k, "prior": prior, "degenerate": degenerate, "max_support": 1000 if trial % 2 else 25}
            local = LocalSDA(**kw).fit(S_fit, y_fit)
            reg = RegularizedLocalSDA(zeta=0.0, form=form, **kw).fit(S_fit, y_fit)
            np.testing.assert_array_equal(reg.predict(S_val), local.predict(S_val))
            assert reg.n_degenerate_ == local.n_degenerate_
            n_fallback += local.n_degenerate_
    assert n_fallback > 0


def _direct_pave_labels(est: RegularizedLocalSDA, S_te) -> np.ndarray:
    """Classification by P_ave alone, computed directly: argmax_g log P(g) + sum_h log P_ave(omega_j | g, h),
    omega_j the point of Omega nearest to psi(x, mu_h) (local SDA's centroids; spec §5 tie rule)."""
    pave, omega = est.average_pmfs(), est.support_.omega
    out = []
    for s in S_te:
        nb = np.array(neighbours(s, est.n_neighbors))  # from the spec, not est._neighbours
        y_nb = est._y_idx[nb]
        classes = np.unique(y_nb)
        members = [nb[y_nb == g] for g in classes]
        mu = local_centroids(est._S, s, members)
        if est.prior == "local":
            prior = np.log([m.size / nb.size for m in members])
        else:
            prior = np.log(est.class_prior_[classes])
        with np.errstate(divide="ignore"):
            scores = prior + np.array([sum(np.log(pave[g, h, np.argmin(np.abs(omega - s[m]))])
                                           for h, m in zip(classes, mu)) for g in classes])
        full = np.full(len(est.classes_), -np.inf)
        full[classes] = scores if np.isfinite(scores).any() else s[mu]  # all -inf: the centroid rule
        out.append(tie_winner(list(full), list(est.class_prior_), list(y_nb)))
    return est.classes_[np.array(out)]


@pytest.mark.parametrize("prior", ["local", "global"])
@pytest.mark.parametrize("form", ["marginal", "joint"])
def test_zeta_one_classifies_by_pave_alone(prior, form):
    rng = np.random.default_rng(22)
    for trial in range(6):
        S_fit, y_fit, S_val = _random_problem(rng, 75, 2 + trial % 3, STYLES[trial % 4])
        for k in (2, 6, 20):
            est = RegularizedLocalSDA(n_neighbors=k, zeta=1.0, prior=prior, form=form).fit(S_fit, y_fit)
            np.testing.assert_array_equal(est.predict(S_val), _direct_pave_labels(est, S_val))


# ---------------------------------------------------------------- P_ave
def test_pave_is_a_pmf_for_every_pair():
    rng = np.random.default_rng(23)
    for trial in range(8):
        S_fit, y_fit, _ = _random_problem(rng, 60, 2 + trial % 3, STYLES[trial % 4])
        for k in (1, 3, 10, 60):
            est = RegularizedLocalSDA(n_neighbors=k, max_support=1000 if trial % 2 else 20).fit(S_fit, y_fit)
            pave = est.average_pmfs()
            r = est.support_.omega.size
            assert pave.shape == (len(est.classes_), len(est.classes_), r) and np.all(pave >= 0)
            # a mean of pmfs that each sum to 1 within a few ulp per term
            np.testing.assert_allclose(pave.sum(axis=-1), 1.0, rtol=0, atol=(ULPS + r) * EPS)


def test_pave_on_a_two_point_support_is_the_mean_constraint():
    """On Omega = {0, 1} the pmf with mean c is (1 - c, c): P_ave(1 | g, h) is the mean of the leave-one-out
    c_gh over the objects whose neighbourhood holds g and h, here computed by brute force (sorting,
    centroids, means); a boundary c (0 or 1) is the point mass there, the same (1 - c, c)."""
    for k in (1, 2, 3, 5):
        est = RegularizedLocalSDA(n_neighbors=k).fit(S_HAND, Y_HAND)
        np.testing.assert_array_equal(est.support_.omega, [0.0, 1.0])
        y = est._y_idx
        sums, counts = np.zeros((2, 2)), np.zeros((2, 2))
        for i in range(6):
            others = sorted((j for j in range(6) if j != i), key=lambda j: (-S_HAND[i, j], j))[:k]
            classes = sorted(set(y[others]))
            members = [np.array([j for j in others if y[j] == g]) for g in classes]
            mu = local_centroids(S_HAND, S_HAND[i], members)
            for g, m_g in zip(classes, members):
                for h, mu_h in zip(classes, mu):
                    sums[g, h] += np.mean([S_HAND[z, mu_h] for z in m_g])
                    counts[g, h] += 1
        pave = est.average_pmfs()
        expected = np.where(counts > 0, sums / np.maximum(counts, 1), 0.5)  # never together: uniform
        # lambda to Brent's tolerance: |d p / d lambda| = c (1 - c) <= 1/4
        np.testing.assert_allclose(pave[..., 1], expected, rtol=0, atol=1e-9)
        np.testing.assert_allclose(pave[..., 0], 1 - expected, rtol=0, atol=1e-9)


# The leave-one-out models of S_THREE at k = 5 (each object's neighbourhood: the five others), by hand. Object 0:
# N = (1, 3, 2, 4, 5), N_a = (1,); mu = (1, 3, 4) (b's and c's candidates tie at 1.5: the larger S[0, v] takes 3,
# the lower index 4); c_aa = S[1, 1] = 1, c_ab = S[1, 3] = 0, c_ac = S[1, 4] = 0, c_ba = (S[3, 1] + S[2, 1]) / 2 =
# 1/4, ... The c_gh of objects 0..5 for each pair (g, h):
OMEGA3 = np.array([0.0, 0.5, 1.0])
C_LOO_THREE = {
    (0, 0): [1, 1, .75, .75, .75, .75], (0, 1): [0, 0, .25, .25, .25, .25], (0, 2): [0, 0, 0, .25, .25, 0],
    (1, 0): [.25, .25, 0, 0, .25, .25], (1, 1): [.75, .75, 1, 1, .75, .75], (1, 2): [.25, .25, 0, 0, .25, .25],
    (2, 0): [.25, .25, .25, .25, .5, 0], (2, 1): [0, .25, 0, .25, 0, .5], (2, 2): [.75, .75, .75, .75, 1, 1],
}


def _three_point_local_pmf(c):
    """The local pmf on {0, 1/2, 1} of a leave-one-out constraint: a point mass at a boundary c."""
    return np.array([1.0, 0, 0]) if c == 0 else np.array([0, 0, 1.0]) if c == 1 else three_point_pmf(c, OMEGA3)


def test_three_class_hand_example_on_a_three_point_support():
    """P_ave of S_THREE (k = 6; the leave-one-out models take the 5 others) is the mean of the hand-counted
    local pmfs above; every neighbourhood holds the three classes. The test row's model is local SDA's hand
    example (tests/local_sda/test_local_sda.py: c = 3/4 on the diagonal, 1/4 off it, t = (0.9, 0.6, 0.7)); P_ave is read
    at the nearest points of Omega, (1, 1/2, 1/2), the local pmf at t itself. The marginal form mixes each
    (g, h) pmf, the joint form the products over h."""
    est = RegularizedLocalSDA(n_neighbors=6, zeta=0.3).fit(S_THREE, Y_THREE)
    np.testing.assert_array_equal(est.support_.omega, OMEGA3)
    pave = np.array([[np.mean([_three_point_local_pmf(c) for c in C_LOO_THREE[g, h]], axis=0) for h in range(3)]
                     for g in range(3)])
    np.testing.assert_allclose(est.average_pmfs(), pave, rtol=0, atol=1e-9)  # lambda to Brent's tolerance
    t, j = np.array([0.9, 0.6, 0.7]), [2, 1, 1]
    local = np.array([[three_point_pmf(0.75 if g == h else 0.25, t[h]) for h in range(3)] for g in range(3)])
    ave = pave[:, range(3), j]
    for zeta in (0.0, 0.3, 0.8, 1.0):
        marginal = np.log((1 - zeta) * local + zeta * ave).sum(axis=1)
        joint = np.log((1 - zeta) * local.prod(axis=1) + zeta * ave.prod(axis=1))
        for form, scores in (("marginal", marginal), ("joint", joint)):
            expected = np.exp(scores - np.logaddexp.reduce(scores))
            est = RegularizedLocalSDA(n_neighbors=6, zeta=zeta, form=form).fit(S_THREE, Y_THREE)
            got = est.predict_proba(S_TE_THREE)[0]
            np.testing.assert_allclose(got, expected, rtol=0, atol=1e-9)
            assert est.predict(S_TE_THREE)[0] == "a" and est.n_degenerate_ == 0
        if 0 < zeta < 1:  # the two forms are different models between the ends
            assert np.abs(np.exp(marginal - np.logaddexp.reduce(marginal))
                          - np.exp(joint - np.logaddexp.reduce(joint))).max() > 1e-3


def test_log_pave_is_computed_in_the_log_domain():
    """log P_ave where P_ave underflows a float64: one object with a capped lambda on a 1000-point grid has
    pmf e^(-1000) / z at the far end; log P_ave there is -1000 - log z (finite), the mean with a second
    object's point mass is log((e^(-1000) / z) / 2) at that end and log((1 + 1/z) / 2) at the other."""
    from hlm.local_sda._kernels.regularized import _log_pave_at_nb

    omega = np.linspace(0.0, 1.0, 1000)
    lam = LAMBDA_CAP  # r = 1: lambda (omega_0 - top) = -1000 at j = 0
    z = np.exp(lam * (omega - 1.0)).sum()
    lam_all = np.full((2, 1, 1), np.nan)
    z_all = np.full((2, 1, 1), np.nan)
    lam_all[0, 0, 0], z_all[0, 0, 0] = lam, z
    count = np.array([[1]])
    got = _log_pave_at_nb(lam_all, z_all, count, omega, 0, 0, 0)
    assert np.exp(got) == 0.0 and got == pytest.approx(-1000.0 - np.log(z), rel=4 * EPS)
    lam_all[1, 0, 0], z_all[1, 0, 0] = np.inf, 1.0  # a point mass at the top of Omega
    count[0, 0] = 2
    assert _log_pave_at_nb(lam_all, z_all, count, omega, 0, 0, 0) == pytest.approx(
        -1000.0 - np.log(z) - np.log(2.0), rel=4 * EPS)
    assert _log_pave_at_nb(lam_all, z_all, count, omega, 0, 0, 999) == pytest.approx(
        np.log((1.0 + 1.0 / z) / 2.0), rel=4 * EPS)
    count[0, 0] = 0
    assert _log_pave_at_nb(lam_all, z_all, count, omega, 0, 0, 5) == -np.log(1000.0)


def test_pave_equals_reference():
    """The kernel's P_ave == the reference's mean of numpy pmfs: within the lambdas' tolerance (each within
    Brent's of the root: |d p / d lambda| <= p r) and the rounding of the n-term sums."""
    rng = np.random.default_rng(24)
    for trial in range(6):
        S_fit, y_fit, _ = _random_problem(rng, 50, 2 + trial % 3, STYLES[trial % 4])
        for k in (1, 4, 16):
            est = RegularizedLocalSDA(n_neighbors=k, max_support=1000 if trial % 2 else 20).fit(S_fit, y_fit)
            want = ref.average_pmfs(est._S, est._y_idx, len(est.classes_), est.support_, k)
            r = support_r(est.support_)
            dlam = 2.02 * (XTOL / r + _BRENT_RTOL * LAMBDA_CAP / r)
            tol = want * (r * dlam + (ULPS + len(y_fit)) * EPS)
            err = np.abs(est.average_pmfs() - want)
            assert np.all(err <= tol), err.max()


def test_leave_one_out_models_equal_reference():
    """Per fit object and pair: present in the same neighbourhoods, the same boundary and cap decisions, and
    both lambdas meet the moment constraint to Brent's tolerance."""
    rng = np.random.default_rng(25)
    kinds = set()
    for trial in range(6):
        S_fit, y_fit, _ = _random_problem(rng, 50, 2 + trial % 3, STYLES[trial % 4])
        est = RegularizedLocalSDA(max_support=1000 if trial % 2 else 20).fit(S_fit, y_fit)
        sup = est.support_
        for k in (1, 4, 16):
            lam, z, count = loo_pmfs(est._S, est._y_idx, len(est.classes_), sup.omega, leave_one_out_order(est._S), k)
            assert count.sum() == sum(len(cl) ** 2 for cl, *_ in ref.loo_models(est._S, est._y_idx, sup, k))
            for i, (classes, c, lam_r, status) in enumerate(ref.loo_models(est._S, est._y_idx, sup, k)):
                got = lam[i][np.ix_(classes, classes)]
                present = np.zeros(lam.shape[1:], dtype=bool)
                present[np.ix_(classes, classes)] = True
                assert np.all(np.isnan(lam[i][~present])) and not np.isnan(got).any()
                for lam_f, lam_w, c_gh, st in zip(got.ravel(), lam_r.ravel(), c.ravel(), status.ravel()):
                    if st == "ok":
                        assert_solves_moment_constraint(lam_f, c_gh, sup)
                        assert_solves_moment_constraint(lam_w, c_gh, sup)
                    else:
                        assert lam_f == lam_w
                    kinds.add(st)
    assert {"ok", "boundary"} <= kinds


@pytest.mark.parametrize("kind", ["discrete", "rounded", "grid"])
def test_table_solver_decides_as_local_sdas_and_solves_the_constraint(kind):
    """``_solve_lambda_table_nb`` (Brent from the table's bracket) reaches local SDA's status (boundary, cap,
    ok) and the constraint to Brent's tolerance, as does the reference's brentq from the same bracket."""
    from test_local_sda import _EDGE_Q

    rng = np.random.default_rng({"discrete": 31, "rounded": 32, "grid": 33}[kind])
    statuses = set()
    for _ in range(60):
        sup = _random_support(rng, kind)
        t_lam, t_m, mode, _ = _roots(np.ascontiguousarray(sup.omega))
        assert (mode == UNIFORM) == (kind == "grid" and sup.omega.size >= 2)
        table = ref.lambda_table(sup)
        # the table as the spec writes it (section 6): lambda r in {-cap, -2^(j/8), 0, 2^(j/8), cap}, j = -24..79,
        # ascending, cap = 1e3; built here without the module's constant
        steps = 2.0 ** (np.arange(-24, 80) / 8.0)
        spec_table = np.concatenate([[-1e3], -steps[::-1], [0.0], steps, [1e3]]) / (sup.hi - sup.lo)
        np.testing.assert_array_equal(t_lam, spec_table)
        assert np.all(np.diff(t_lam) > 0) and LAMBDA_CAP == 1e3
        np.testing.assert_array_equal(table[0], spec_table)
        np.testing.assert_allclose(t_m, table[1], rtol=0, atol=ULPS * EPS * max(abs(sup.lo), abs(sup.hi)))
        w = np.empty(sup.omega.size)
        for q in (*rng.uniform(0, 1, 6), *_EDGE_Q):
            c = sup.lo + q * support_r(sup)
            lam, st, err = _solve_lambda_table_nb(c, sup.omega, t_lam, t_m, mode, w)
            assert err == 0
            local = _solve_lambda_nb(c, sup.lo, sup.hi, sup.omega, True, w)
            lam_r, st_r = ref.solve_lambda_table(c, sup, table)
            assert STATUS_NAMES[st] == STATUS_NAMES[local[1]] == st_r, (c, sup.lo, sup.hi)
            if st_r == "ok":
                assert_solves_moment_constraint(lam, c, sup)
                assert_solves_moment_constraint(lam_r, c, sup)
            else:
                assert lam == local[0] == lam_r
            statuses.add(st_r)
    assert statuses == {"ok", "boundary", "cap"}


def test_uniform_grid_mean_and_z_in_closed_form_equal_exact_sums():
    """On np.linspace's grid, ``_uniform_mean_nb`` and ``_uniform_z_nb`` (truncated geometric distribution,
    series near lambda = 0) equal the exactly rounded sums (math.fsum) of the weights exp(lam (omega - top)),
    for lambda r from 1e-12 to the cap and across the series' switch. Bound: ULPS ulps of the scale, times
    (1 + |lam| max|omega|), the rounding each weight's exponent carries."""
    import math

    from hlm.local_sda._kernels.core import _SERIES_G, _uniform_mean_nb, _uniform_z_nb

    rng = np.random.default_rng(41)
    for size in (2, 3, 7, 100, 1000, 4000):
        lo, hi = float(rng.uniform(-1, 0.5)), float(rng.uniform(0.6, 2))
        omega, r, scale = np.linspace(lo, hi, size), hi - lo, max(abs(lo), abs(hi))
        switch = _SERIES_G * (size - 1) / size * np.array([1 - 1e-3, 1.0, 1 + 1e-3])  # lambda r where size a = 0.1
        for t in (0.0, *np.logspace(-12, 3, 60), *-np.logspace(-12, 3, 60), *switch, *-switch):
            lam = t / r
            top = hi if lam >= 0 else lo
            w = [math.exp(lam * (x - top)) for x in omega]
            z = math.fsum(w)
            m = math.fsum(x * wi for x, wi in zip(omega, w)) / z
            grow = 1 + abs(lam) * scale
            assert abs(_uniform_mean_nb(lam, lo, hi, size) - m) <= ULPS * EPS * scale * grow, (size, t)
            assert abs(_uniform_z_nb(lam, lo, hi, size) - z) <= ULPS * EPS * z * grow, (size, t)


def test_the_memo_of_roots_changes_nothing():
    """A support's memo (kept across fits, e.g. CV folds) returns what a fresh solve gives."""
    import hlm.local_sda._regularized as reg

    rng = np.random.default_rng(26)
    S_fit, y_fit, S_val = _random_problem(rng, 60, 3, "rounded")
    first = RegularizedLocalSDA(n_neighbors=6).fit(S_fit, y_fit)
    a = (first.average_pmfs(), first.predict_proba(S_val))
    omega_key = first.support_.omega.tobytes()
    assert len(reg._ROOTS[omega_key][-1]) > 0  # the memo holds the roots found
    again = RegularizedLocalSDA(n_neighbors=6).fit(S_fit, y_fit)  # every root from the memo
    reg._ROOTS.clear()
    fresh = RegularizedLocalSDA(n_neighbors=6).fit(S_fit, y_fit)  # every root solved again
    for other in (again, fresh):
        assert _bits_equal(other.average_pmfs(), a[0]) and _bits_equal(other.predict_proba(S_val), a[1])


def test_nearest_point_of_the_support():
    rng = np.random.default_rng(27)
    omega = np.sort(rng.uniform(0, 1, 50))
    ts = [*rng.uniform(-0.2, 1.2, 500), *omega, *(omega[:-1] + omega[1:]) / 2, -1e300, 1e300]
    for t in ts:
        assert _nearest_nb(omega, t) == ref.nearest(omega, t), t
    assert _nearest_nb(np.array([0.0, 1.0]), 0.5) == 0  # equal distance: the lower point


# ---------------------------------------------------------------- compiled kernels == reference
def _score_tolerance(est, s, nb, log_pave: np.ndarray, pave_rel: float) -> float:
    """Bound on a regularized score's difference from the reference's: per (g, h) term, the test row's
    lambda difference times |d/d lambda (lambda t_h - log Z)| = |t_h - m(lambda)| <= |t_h| + max |w|, and
    the difference of log P_ave ``pave_rel`` (logaddexp's two partial derivatives are positive and sum to 1),
    plus ULPS ulp of the magnitudes of the terms added. The joint form's score, logaddexp of the two sums over h,
    differs by at most the larger sum of the differences, so the same bound holds."""
    prior = None if est.prior == "local" else np.log(est.class_prior_)
    want = fit_row(est._S, s, nb, est._y_idx, est.support_, prior)
    got = _fit_row_fast(est._S, s, nb, est._y_idx, len(est.classes_), est.support_, prior)
    with np.errstate(invalid="ignore"):  # inf - inf: the same point mass
        dlam = np.where(got.lam == want.lam, 0.0, np.abs(got.lam - want.lam))
    slope = np.abs(want.t)[None, :] + max(abs(est.support_.lo), abs(est.support_.hi))
    omega, zeta = est.support_.omega, float(est.zeta)
    ave = np.array([[log_pave[cg, ch, ref.nearest(omega, t_h)] for ch, t_h in zip(want.classes, want.t)]
                    for cg in want.classes])
    with np.errstate(divide="ignore"):
        log_weights = abs(np.log(zeta)) + abs(np.log1p(-zeta)) if 0 < zeta < 1 else 0.0
    def finite(x):
        return np.abs(np.where(np.isfinite(x), x, 0.0))

    magnitude = finite(want.log_prior) + np.sum(finite(ref.local_terms(want, est.support_)) + finite(ave)
                                                + log_weights + 1.0, axis=1)
    return float(np.max(np.nansum(dlam * slope, axis=1) + want.classes.size * pave_rel + ULPS * EPS * magnitude))


@pytest.mark.parametrize("degenerate", ["centroid", "knn", "exact"])
@pytest.mark.parametrize("prior", ["local", "global"])
@pytest.mark.parametrize("form", ["marginal", "joint"])
def test_compiled_predict_equals_reference(degenerate, prior, form):
    """predict and predict_log_proba (compiled) == the row-by-row reference: the same labels and fallback
    rows for every zeta; the log posteriors within twice the bound on the scores' difference; the
    posteriors sum to 1 and are 0 for the classes absent from the neighbourhood."""
    rng = np.random.default_rng(28)
    n_fallback = n_scored = 0
    for trial in range(4):
        S_fit, y_fit, S_val = _random_problem(rng, 60, 2 + trial % 3, STYLES[trial % 4])
        for k in (1, 3, 12):
            base = RegularizedLocalSDA(n_neighbors=k, prior=prior, degenerate=degenerate, form=form,
                                       max_support=1000 if trial % 2 else 25).fit(S_fit, y_fit)
            log_pave = ref.log_average_pmfs(base._S, base._y_idx, len(base.classes_), base.support_, k)
            # test_pave_equals_reference's bound, relative (so on log P_ave): r |lambda difference| + rounding
            pave_rel = 2.02 * (XTOL + _BRENT_RTOL * LAMBDA_CAP) + (ULPS + len(y_fit)) * EPS
            for zeta in (0.0, *ZETAS):
                est = base.set_params(zeta=zeta)  # zeta is not used by fit: the same P_ave
                labels = est.predict(S_val)
                n_deg = est.n_degenerate_
                log_post = est.predict_log_proba(S_val)
                want_labels, want_fallback, want_log_post = ref.predict(est, S_val, log_pave)
                np.testing.assert_array_equal(labels, want_labels, err_msg=f"trial {trial}, k {k}, zeta {zeta}")
                assert n_deg == int(want_fallback.sum())
                np.testing.assert_array_equal(np.isfinite(log_post), np.isfinite(want_log_post))
                for i, (s, nb) in enumerate(zip(S_val, est._neighbours(S_val))):
                    finite = np.isfinite(want_log_post[i])
                    if want_fallback[i] or finite.sum() == 1:
                        assert _bits_equal(log_post[i], want_log_post[i])
                        continue
                    tol = 2 * _score_tolerance(est, s, nb, log_pave, pave_rel)
                    err = np.abs(log_post[i][finite] - want_log_post[i][finite])
                    assert np.all(err <= tol), (err, tol)
                post = np.exp(log_post)
                np.testing.assert_allclose(post.sum(axis=1), 1.0, rtol=0, atol=4 * len(est.classes_) * EPS)
                present = np.zeros_like(post, dtype=bool)
                np.put_along_axis(present, est._y_idx[est._neighbours(S_val)], True, axis=1)
                assert np.all(post[~present] == 0.0)
                n_fallback += n_deg
                n_scored += len(S_val) - n_deg
    assert (n_fallback > 0 or degenerate == "exact") and n_scored > 0  # exact: zeta = 0 falls back only if all -inf


def test_a_point_mass_is_not_fatal_when_zeta_is_positive():
    # k = 3: k_b = 1, c_bb = 1 (a point mass) that psi(x, mu_b) = 0.9 misses: local SDA falls back;
    # with zeta > 0, P_ave(1 | b, b) > 0 at the point of Omega nearest to 0.9 (1.0) keeps b's score finite
    local = LocalSDA(n_neighbors=3).fit(S_DEG, Y_DEG)
    local.predict(S_TE_DEG)
    assert local.n_degenerate_ == 1
    for zeta in (1e-6, 0.5, 1.0):
        est = RegularizedLocalSDA(n_neighbors=3, zeta=zeta).fit(S_DEG, Y_DEG)
        proba = est.predict_proba(S_TE_DEG)
        assert est.n_degenerate_ == 0 and np.all(proba > 0) and proba.sum() == pytest.approx(1.0, abs=4 * EPS)
        assert est.average_pmfs()[1, 1, -1] > 0
    np.testing.assert_array_equal(RegularizedLocalSDA(n_neighbors=3, zeta=0.0).fit(S_DEG, Y_DEG)
                                  .predict_proba(S_TE_DEG), [[0.0, 1.0]])  # zeta = 0: the fallback's class


# ---------------------------------------------------------------- the CV path, plumbing, input checks
def test_predict_grid_equals_refits_for_every_option():
    rng = np.random.default_rng(29)
    S_fit, y_fit, S_val = _random_problem(rng, 80, 3, "rounded")
    grid = [{"n_neighbors": k, "zeta": z} for k in (1, 2, 8, 32, 128) for z in (0.0, 1e-6, 0.1, 0.9, 1.0)]
    for degenerate, form in (("centroid", "marginal"), ("knn", "joint"), ("exact", "joint")):
        est = RegularizedLocalSDA(degenerate=degenerate, prior="global", max_support=30, form=form)
        fast, slow = est.predict_grid(S_fit, y_fit, S_val, grid), predict_each(est, S_fit, y_fit, S_val, grid)
        for params, a, b in zip(grid, fast, slow):
            np.testing.assert_array_equal(a, b, err_msg=str(params))
        assert len({tuple(a) for a in fast}) > 1
    mixed = [{"n_neighbors": 4, "max_support": 10}, {"zeta": 0.5}, {"n_neighbors": 4, "prior": "global", "zeta": 0.0},
             {"zeta": 0.5, "form": "joint"}]
    est = RegularizedLocalSDA()
    for a, b in zip(est.predict_grid(S_fit, y_fit, S_val, mixed), predict_each(est, S_fit, y_fit, S_val, mixed)):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(InvalidParameterError):
        est.predict_grid(S_fit, y_fit, S_val, [{"zeta": 1.5}])


def test_cross_val_score_and_posteriors():
    S, y = _blob_similarity()
    assert RegularizedLocalSDA().__sklearn_tags__().input_tags.pairwise
    cv = StratifiedKFold(5, shuffle=True, random_state=0)
    acc = cross_val_score(RegularizedLocalSDA(n_neighbors=8), S, y, cv=cv)
    assert acc.shape == (5,) and acc.mean() >= blob_accuracy_floor()  # the Bayes rule's accuracy less 3 SE
    m = RegularizedLocalSDA(n_neighbors=8).fit(S[::2, ::2], y[::2])
    proba = m.predict_proba(S[1::2, ::2])
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-15)
    decided = np.abs(proba[:, 0] - proba[:, 1]) > 1e-9
    np.testing.assert_array_equal(m.classes_[proba.argmax(axis=1)][decided], m.predict(S[1::2, ::2])[decided])


def test_bad_input_and_params():
    check_bad_input(RegularizedLocalSDA, ({"n_neighbors": 0}, {"zeta": -0.1}, {"zeta": 1.1}, {"prior": "flat"},
                                          {"degenerate": "drop"}, {"max_support": 1}, {"form": "product"}))
