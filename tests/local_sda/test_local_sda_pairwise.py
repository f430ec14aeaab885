"""Pairwise local SDA (docs/local-sda-family-spec.md section 4): known answers, brute force, the
row-by-row reference (tests/oracles/local_sda_pairwise_reference.py) and the CV path."""

import math

import numpy as np
import pytest
from sklearn.model_selection import StratifiedKFold, cross_val_score
from test_local_sda import (
    EPS,
    S_DEG,
    S_HAND,
    S_TE_DEG,
    S_TE_HAND,
    S_TE_THREE,
    S_THREE,
    STYLES,
    ULPS,
    Y_DEG,
    Y_HAND,
    Y_THREE,
    _bits_equal,
    _blob_similarity,
    _random_problem,
    assert_solves_moment_constraint,
    blob_accuracy_floor,
    check_bad_input,
    three_point_pmf,
)

import oracles.local_sda_pairwise_reference as ref
from hlm.base._grid import predict_each
from hlm.local_sda._kernels.core import _raise_brent_error
from hlm.local_sda._kernels.pairwise import _pairwise_log_scores_nb, _pairwise_row_nb
from hlm.local_sda._local_sda import LocalSDA, Support
from hlm.local_sda._pairwise import PairwiseLocalSDA
from oracles.local_sda_reference import STATUS_NAMES, support_log_z


# ------------------------------------------------- the compiled row model, called like the reference
def _fit_row_fast(est: PairwiseLocalSDA, s, nb, stop_early=False) -> ref.PairwiseRowModel:
    """``ref.fit_row`` through the compiled ``_pairwise_row_nb`` (for tests)."""
    sup = est.support_
    discrete = sup.omega is not None
    omega = np.ascontiguousarray(sup.omega if discrete else np.empty(0), dtype=np.float64)
    prior = np.log(est.class_prior_) if est.prior == "global" else np.empty(0)
    classes, start, members, c, lam, status, log_prior, err, err_x = _pairwise_row_nb(
        est._S, np.ascontiguousarray(s, dtype=np.float64), np.asarray(nb, dtype=np.int64),
        est._y_idx.astype(np.int64), len(est.classes_), float(sup.lo), float(sup.hi), omega, discrete,
        prior, est.prior == "global", bool(stop_early), np.empty(omega.size), np.empty(nb.size**2),
    )
    _raise_brent_error(err, err_x, 0)
    groups = [members[start[j]:start[j + 1]].astype(np.intp) for j in range(classes.size)]
    return ref.PairwiseRowModel(classes.astype(np.intp), groups, c, lam, STATUS_NAMES[status], log_prior)


def _log_scores_fast(est: PairwiseLocalSDA, model: ref.PairwiseRowModel, s, exact=False) -> np.ndarray:
    """``ref.log_scores`` through the compiled ``_pairwise_log_scores_nb`` (for tests)."""
    sup = est.support_
    discrete = sup.omega is not None
    omega = np.ascontiguousarray(sup.omega if discrete else np.empty(0), dtype=np.float64)
    codes = {name: i for i, name in enumerate(STATUS_NAMES)}
    status = np.vectorize(codes.get, otypes=[np.int64])(model.status)
    start = np.concatenate([[0], np.cumsum([m.size for m in model.members])]).astype(np.int64)
    members = np.concatenate(model.members).astype(np.int64)
    return _pairwise_log_scores_nb(members, start, np.ascontiguousarray(s, dtype=np.float64), model.c, model.lam,
                                   status, np.asarray(model.log_prior, dtype=np.float64), float(sup.lo),
                                   float(sup.hi), omega, discrete, bool(exact), np.empty(omega.size),
                                   np.empty(members.size))


# ---------------------------------------------------------------- hand-made example
# Omega = {0, 1} (S_HAND of tests/local_sda/test_local_sda.py): m(lambda) = sigmoid(lambda), lambda_gh = logit(c_gh) and
# gamma e^{lambda t} = e^{lambda t} / (1 + e^lambda). Test row S_TE_HAND, k = 5: neighbours 3, 0, 4, 1, 2,
# N_a = (0, 1, 2), N_b = (3, 4); T_a = (0.5, 0.1, 0.1), T_b = (0.9, 0.2).
HAND_C = np.array([[4 / 9, 1 / 6], [1 / 3, 1 / 2]])  # the 9, 6, 6 and 4 pairs of S_HAND, counted by hand


def _hand_marginal(c, T):
    """eq. (7) in closed form: mean over T of e^{logit(c) t} / (1 + e^{logit(c)})."""
    lam = math.log(c / (1 - c))
    return math.fsum(math.exp(lam * t) / (1 + math.exp(lam)) for t in T) / len(T)


def _hand_scores(p_a, p_b):
    T = ([0.5, 0.1, 0.1], [0.9, 0.2])
    return np.array([math.log(p) + sum(math.log(_hand_marginal(HAND_C[g, h], T[h])) for h in range(2))
                     for g, p in enumerate((p_a, p_b))])


def test_hand_example_constraints_marginals_and_decision():
    m = PairwiseLocalSDA(n_neighbors=5).fit(S_HAND, Y_HAND)
    s, nb = S_TE_HAND[0], m._neighbours(S_TE_HAND)[0]
    np.testing.assert_array_equal(nb, [3, 0, 4, 1, 2])
    for row in (ref.fit_row(m._S, nb, m._y_idx, m.support_, None), _fit_row_fast(m, s, nb)):
        np.testing.assert_array_equal(row.members[0], [0, 1, 2])
        np.testing.assert_array_equal(row.members[1], [3, 4])
        np.testing.assert_allclose(row.c, HAND_C, rtol=0, atol=4 * EPS)  # self-pairs included on the diagonal
        np.testing.assert_allclose(row.lam, np.log(HAND_C / (1 - HAND_C)), atol=1e-9)
    row = _fit_row_fast(m, s, nb)
    # local prior 3/5, 2/5: a wins by ~0.10; the exp of each log marginal is the closed form of eq. (7)
    expected = _hand_scores(0.6, 0.4)
    np.testing.assert_allclose(_log_scores_fast(m, row, s), expected, atol=1e-9)
    np.testing.assert_allclose(ref.log_scores(row, s, m.support_), expected, atol=1e-9)
    assert expected[0] - expected[1] > 0.1
    assert m.predict(S_TE_HAND)[0] == "a" and m.n_degenerate_ == 0
    np.testing.assert_allclose(m.predict_proba(S_TE_HAND)[0], np.exp(expected - np.logaddexp(*expected)), atol=1e-9)
    # the global prior 1/2, 1/2 flips it to b, by ~0.30
    g = PairwiseLocalSDA(n_neighbors=5, prior="global").fit(S_HAND, Y_HAND)
    expected_g = _hand_scores(0.5, 0.5)
    assert expected_g[1] - expected_g[0] > 0.3 and g.predict(S_TE_HAND)[0] == "b"


def test_three_class_hand_example_on_a_three_point_support():
    """S_THREE of tests/local_sda/test_local_sda.py, k = 6: N_a = (0, 1), N_b = (2, 3), N_c = (4, 5). The pairs
    of eq. (8), counted by hand (4 per class pair, self-pairs included): c_gg = (1 + .5 + .5 + 1) / 4 = 3/4; c_ac
    = (0 + 0 + 0 + .5) / 4 = 1/8 and c_cb = (.5 + 0 + 0 + 0) / 4 = 1/8; every other c_gh = 1/4. On {0, 1/2, 1},
    c = 1/8 solves 7 u^2 + 3 u - 1 = 0, u = (sqrt 37 - 3) / 14. Eq. (7): the mean over N_h of the pmf at
    psi(x, z): (0.9, 0.3) on N_a, (0.6, 0.2) on N_b, (0.1, 0.7) on N_c."""
    u8 = (np.sqrt(37) - 3) / 14

    def pmf(c, t):
        return u8 ** (2 * np.asarray(t)) / (1 + u8 + u8**2) if c == 0.125 else three_point_pmf(c, t)

    C = np.array([[3 / 4, 1 / 4, 1 / 8], [1 / 4, 3 / 4, 1 / 4], [1 / 4, 1 / 8, 3 / 4]])
    T = ([0.9, 0.3], [0.6, 0.2], [0.1, 0.7])
    scores = np.array([math.log(1 / 3) + sum(math.log(np.mean(pmf(C[g, h], T[h]))) for h in range(3))
                       for g in range(3)])
    m = PairwiseLocalSDA(n_neighbors=6).fit(S_THREE, Y_THREE)
    np.testing.assert_array_equal(m.support_.omega, [0.0, 0.5, 1.0])
    expected = np.exp(scores - np.logaddexp.reduce(scores))
    np.testing.assert_allclose(m.predict_proba(S_TE_THREE)[0], expected, rtol=0, atol=1e-9)  # Brent's xtol
    assert expected[0] > expected[1] + 0.2 and expected[1] > expected[2]  # a (0.50), b (0.27), c (0.23)
    assert m.predict(S_TE_THREE)[0] == "a" and m.n_degenerate_ == 0


def test_constraints_and_marginal_equal_brute_force_on_a_neighbourhood():
    """c_gh of eq. (8) by an explicit double loop over the pairs (self-pairs when g = h), and eq. (7) by
    summing gamma e^{lambda psi(x, z)} with gamma = 1 / sum_w e^{lambda w} over a small support."""
    rng = np.random.default_rng(3)
    S = np.round(rng.uniform(0, 1, (9, 9)), 1)  # asymmetric: the order of the pair matters
    np.fill_diagonal(S, 1.0)
    y = np.array([0, 1, 2, 0, 1, 2, 0, 1, 0])
    s = np.round(rng.uniform(0, 1, 9), 2)
    m = PairwiseLocalSDA(n_neighbors=8).fit(S, y)
    nb = m._neighbours(s[None, :])[0]
    row = _fit_row_fast(m, s, nb)
    for g, N_g in enumerate(row.members):
        for h, N_h in enumerate(row.members):
            pairs = [S[i, j] for i in N_g for j in N_h]
            assert len(pairs) == N_g.size * N_h.size
            assert row.c[g, h] == pytest.approx(math.fsum(pairs) / len(pairs), abs=4 * EPS)
    omega = m.support_.omega
    assert row.status.tolist() == [["ok"] * 3] * 3
    scores = _log_scores_fast(m, row, s)
    for g in range(3):
        total = math.log(len(row.members[g]) / nb.size)
        for h, N_h in enumerate(row.members):
            lam = row.lam[g, h]
            gamma = 1 / math.fsum(math.exp(lam * w) for w in omega)
            total += math.log(math.fsum(gamma * math.exp(lam * s[z]) for z in N_h) / N_h.size)
        assert scores[g] == pytest.approx(total, abs=1e-12 * (1 + abs(total)))


# ---------------------------------------------------------------- degeneracy and the fallback rules
def test_single_neighbour_of_a_class_is_degenerate_and_falls_back_like_local_sda():
    # k = 3: neighbours 3 (b), 0, 1 (a); k_b = 1 -> c_bb = psi(3, 3) = 1 = max Omega (a point mass)
    m = PairwiseLocalSDA(n_neighbors=3).fit(S_DEG, Y_DEG)
    nb = m._neighbours(S_TE_DEG)[0]
    row = _fit_row_fast(m, S_TE_DEG[0], nb)
    assert row.status[1, 1] == "boundary" and row.c[1, 1] == 1.0
    # local nearest centroid (local SDA's centroids): psi(x, mu_b) = 0.9 > psi(x, mu_a) = 0.8 -> b
    assert m.predict(S_TE_DEG)[0] == "b" and m.n_degenerate_ == 1
    np.testing.assert_array_equal(m.predict_proba(S_TE_DEG), [[0.0, 1.0]])  # the fallback's class [P]
    local = LocalSDA(n_neighbors=3).fit(S_DEG, Y_DEG)
    assert local.predict(S_TE_DEG)[0] == "b"
    knn = PairwiseLocalSDA(n_neighbors=3, degenerate="knn").fit(S_DEG, Y_DEG)
    assert knn.predict(S_TE_DEG)[0] == "a" and knn.n_degenerate_ == 1
    # exact: b's marginal is the fraction of N_b at psi = 1 (none: 0.9), so b has probability 0; a's
    # constraints (c_aa = 0.85, c_ab = c_ba = 0.225) are inside Omega
    exact = PairwiseLocalSDA(n_neighbors=3, degenerate="exact").fit(S_DEG, Y_DEG)
    assert exact.predict(S_TE_DEG)[0] == "a" and exact.n_degenerate_ == 0
    np.testing.assert_allclose(row.c[0], [0.85, 0.225], atol=4 * EPS)
    np.testing.assert_array_equal(exact.predict_proba(S_TE_DEG), [[1.0, 0.0]])
    # a test object equal to object 3 meets b's point mass: log(1 / 1) = 0, a finite score
    dup = S_DEG[[3]]
    row = ref.fit_row(exact._S, exact._neighbours(dup)[0], exact._y_idx, exact.support_, None)
    assert np.isfinite(ref.log_scores(row, dup[0], exact.support_, exact=True)[1])


def test_single_class_neighbourhood_is_that_class():
    m = PairwiseLocalSDA(n_neighbors=2).fit(S_DEG, Y_DEG)
    x = np.array([[0.9, 0.8, 0.1, 0.7]])
    assert m.predict(x)[0] == "a" and m.n_degenerate_ == 0
    np.testing.assert_array_equal(m.predict_proba(x), [[1.0, 0.0]])


# ---------------------------------------------------------------- compiled kernel == reference
def _score_tolerance(row: ref.PairwiseRowModel, s, sup: Support) -> np.ndarray:
    """Rounding bound of log P(g) + sum_h (logsumexp(lambda t_h) - log k_h - log Z): ULPS ulp of the sum of
    its terms' magnitudes."""
    lam = np.where(np.isfinite(row.lam), row.lam, 0.0)
    terms = np.abs(row.log_prior).astype(np.float64)
    for g in range(lam.shape[0]):
        for h, N_h in enumerate(row.members):
            terms[g] += (np.abs(lam[g, h] * s[N_h]).max() + np.log(N_h.size) + 1.0
                         + abs(support_log_z(sup, lam[g, h])))
    return ULPS * EPS * (terms + 1.0)


@pytest.mark.parametrize("support", ["discrete", "continuous"])
@pytest.mark.parametrize("prior", ["local", "global"])
def test_compiled_row_model_and_scores_equal_reference(support, prior):
    """The same classes, neighbour groups and statuses (decisions); c to rounding; every lambda of both
    meets its moment constraint to Brent's tolerance; the scores agree up to the rounding of their
    terms, and with each side's own lambdas up to |lambda difference| x |d score / d lambda|."""
    rng = np.random.default_rng(11)
    n_rows, statuses = 0, set()
    for trial in range(8):
        S_fit, y_fit, S_val = _random_problem(rng, 60, 2 + trial % 3, STYLES[trial % 4])
        m = PairwiseLocalSDA(n_neighbors=4 + 5 * (trial % 3), support=support, prior=prior,
                             max_support=1000 if trial % 2 else 20).fit(S_fit, y_fit)
        sup = m.support_
        log_prior = None if prior == "local" else np.log(m.class_prior_)
        s_scale = np.abs(m._S).max()
        for s, nb in zip(S_val, m._neighbours(S_val)):
            if np.all(m._y_idx[nb] == m._y_idx[nb[0]]):
                continue
            for stop_early in (False, True):
                want = ref.fit_row(m._S, nb, m._y_idx, sup, log_prior, stop_early=stop_early)
                got = _fit_row_fast(m, s, nb, stop_early)
                assert _bits_equal(want.classes, got.classes) and _bits_equal(want.status, got.status)
                assert all(_bits_equal(a, b) for a, b in zip(want.members, got.members))
                np.testing.assert_allclose(got.c, want.c, rtol=0, atol=ULPS * EPS * s_scale)
                np.testing.assert_allclose(got.log_prior, want.log_prior, rtol=ULPS * EPS, atol=ULPS * EPS)
                solved = want.status == "ok"
                for lam_f, lam_r, c in zip(got.lam[solved], want.lam[solved], want.c[solved]):
                    assert_solves_moment_constraint(lam_f, c, sup)
                    assert_solves_moment_constraint(lam_r, c, sup)
                assert _bits_equal(got.lam[~solved], want.lam[~solved])
                statuses |= set(want.status.ravel())
                n_rows += 1
                if stop_early:
                    continue
                for exact in (False, True):
                    w_scores = ref.log_scores(want, s, sup, exact=exact)
                    finite = np.isfinite(w_scores)
                    g_scores = _log_scores_fast(m, want, s, exact=exact)  # the same lambdas: rounding only
                    assert _bits_equal(np.isfinite(g_scores), finite)
                    _assert_within(g_scores[finite], w_scores[finite], _score_tolerance(want, s, sup)[finite])
                    g_scores = _log_scores_fast(m, got, s, exact=exact)  # its own lambdas
                    _assert_within(g_scores[finite], w_scores[finite], _own_lambda_tolerance(got, want, s, sup)[finite])
    assert n_rows > 100 and {"ok", "boundary"} <= statuses


def _own_lambda_tolerance(got: ref.PairwiseRowModel, want: ref.PairwiseRowModel, s, sup: Support) -> np.ndarray:
    """Bound on |score(got's lambdas) - score(want's lambdas)|: the rounding, plus |lambda difference| times
    |d/d lambda (logsumexp(lambda t_h) - log Z(lambda))| = |E_softmax[t_h] - m(lambda)| <= max |t_h| + max |w|."""
    with np.errstate(invalid="ignore"):  # inf - inf where both are the same point mass
        dlam = np.where(got.lam == want.lam, 0.0, np.abs(got.lam - want.lam))
    slope = np.array([[np.abs(s[N_h]).max() + max(abs(sup.lo), abs(sup.hi)) for N_h in want.members]])
    return _score_tolerance(want, s, sup) + np.nansum(dlam * slope, axis=1)


def _assert_within(got, want, atol):
    err = np.abs(np.asarray(got) - np.asarray(want))
    assert np.all(err <= atol), (got, want, err, atol)


@pytest.mark.parametrize("support", ["discrete", "continuous"])
@pytest.mark.parametrize("degenerate", ["centroid", "knn", "exact"])
@pytest.mark.parametrize("prior", ["local", "global"])
def test_compiled_predict_equals_reference(support, degenerate, prior):
    """predict (compiled) == the row-by-row reference: the same labels and fallback rows; the log
    posteriors agree within twice the bound on the scores' difference (scores - logsumexp(scores) moves by
    at most twice the largest score change), the one-hot ones of rules other than the scores exactly;
    the posteriors sum to 1 and are 0 for the classes absent from the neighbourhood."""
    rng = np.random.default_rng(12)
    n_fallback = n_scored = 0
    for trial in range(8):
        S_fit, y_fit, S_val = _random_problem(rng, 75, 2 + trial % 3, STYLES[trial % 4])
        for k in (1, 2, 3, 6, 12, 30):
            m = PairwiseLocalSDA(n_neighbors=k, support=support, prior=prior, degenerate=degenerate,
                                 max_support=1000 if trial % 2 else 25).fit(S_fit, y_fit)
            labels = m.predict(S_val)
            n_deg = m.n_degenerate_
            log_post = m.predict_log_proba(S_val)
            want_labels, want_fallback, want_log_post = ref.predict(m, S_val)
            np.testing.assert_array_equal(labels, want_labels, err_msg=f"trial {trial}, k {k}")
            assert n_deg == m.n_degenerate_ == int(want_fallback.sum())
            np.testing.assert_array_equal(np.isfinite(log_post), np.isfinite(want_log_post))
            log_prior = None if prior == "local" else np.log(m.class_prior_)
            for i, (s, nb) in enumerate(zip(S_val, m._neighbours(S_val))):
                finite = np.isfinite(want_log_post[i])
                if want_fallback[i] or finite.sum() == 1:  # decided by a rule: one-hot
                    assert _bits_equal(log_post[i], want_log_post[i])
                    continue
                want = ref.fit_row(m._S, nb, m._y_idx, m.support_, log_prior)
                tol = 2 * _own_lambda_tolerance(_fit_row_fast(m, s, nb), want, s, m.support_).max()
                _assert_within(log_post[i][finite], want_log_post[i][finite], tol)
            post = np.exp(log_post)
            np.testing.assert_allclose(post.sum(axis=1), 1.0, rtol=0, atol=4 * len(m.classes_) * EPS)
            present = np.zeros_like(post, dtype=bool)
            np.put_along_axis(present, m._y_idx[m._neighbours(S_val)], True, axis=1)
            assert np.all(post[~present] == 0.0)
            n_fallback += n_deg
            n_scored += len(S_val) - n_deg
    assert n_fallback > 0 and n_scored > 0


# ---------------------------------------------------------------- the CV path, plumbing, input checks
def test_predict_grid_equals_refits_for_every_option():
    rng = np.random.default_rng(13)
    S_fit, y_fit, S_val = _random_problem(rng, 90, 3, "rounded")
    grid = [{"n_neighbors": k} for k in (1, 2, 4, 8, 16, 32, 64, 128)]
    for support in ("discrete", "continuous"):
        for degenerate in ("centroid", "knn", "exact"):
            est = PairwiseLocalSDA(support=support, degenerate=degenerate, prior="global")
            fast, slow = est.predict_grid(S_fit, y_fit, S_val, grid), predict_each(est, S_fit, y_fit, S_val, grid)
            for a, b in zip(fast, slow):
                np.testing.assert_array_equal(a, b)
            assert len({tuple(a) for a in fast}) > 1


@pytest.mark.parametrize("support", ["discrete", "continuous"])
def test_cross_val_score_and_posteriors(support):
    S, y = _blob_similarity()
    assert PairwiseLocalSDA().__sklearn_tags__().input_tags.pairwise
    cv = StratifiedKFold(5, shuffle=True, random_state=0)
    acc = cross_val_score(PairwiseLocalSDA(n_neighbors=8, support=support), S, y, cv=cv)
    assert acc.shape == (5,) and acc.mean() >= blob_accuracy_floor()  # the Bayes rule's accuracy less 3 SE
    m = PairwiseLocalSDA(n_neighbors=8, support=support).fit(S[::2, ::2], y[::2])
    proba = m.predict_proba(S[1::2, ::2])
    assert proba.shape == (S.shape[0] // 2, 2)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-15)
    decided = np.abs(proba[:, 0] - proba[:, 1]) > 1e-9  # the argmax is the prediction where not tied
    np.testing.assert_array_equal(m.classes_[proba.argmax(axis=1)][decided], m.predict(S[1::2, ::2])[decided])


def test_bad_input_and_params():
    check_bad_input(PairwiseLocalSDA, ({"n_neighbors": 0}, {"support": "histogram"}, {"prior": "flat"},
                                       {"degenerate": "drop"}, {"max_support": 1}))
