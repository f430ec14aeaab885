"""LLC-PC (Chen, Lu & Boedihardjo; docs/llc-pc-spec.md section 7): known answers for the criterion, the
pairwise classifiers, the combination schemas, Greedy-MPE and the k-means rival, and the estimator."""

from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import minimize
from sklearn.base import clone
from sklearn.cluster import KMeans
from sklearn.datasets import load_iris
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.metrics import adjusted_rand_score
from sklearn.svm import SVC

from hlm.base._grid import predict_each
from hlm.datasets._prepare import load_vectors
from hlm.datasets._registry import load_registry
from hlm.errors import DataError
from hlm.llc_pc._coupling import (
    combine,
    couple,
    duel_counts,
    minmax_values,
    pair_probabilities,
    subclass_votes,
    vote_winner,
)
from hlm.llc_pc._llc_pc import LLCPairwiseCoupling, decision_values
from hlm.llc_pc._mpe import cross_pairs, lda_pair, mpe, normaliser, pair_weights, svm_pair
from hlm.llc_pc._subclasses import KMEANS, SPLIT, allocate, kmeans, kpp_centres, lloyd, seeded
from hlm.svm._coupling import coupling_matrix

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def glass():
    rec = load_vectors(load_registry(ROOT / "config" / "datasets.yaml", names=["glass"])["glass"], ROOT)
    return rec.features, rec.labels


def blobs(centres, n, sd=1.0, seed=0):
    """n points around each centre; labels = the centre's index."""
    rng = np.random.default_rng(seed)
    centres = np.asarray(centres, dtype=float)
    X = np.concatenate([c + sd * rng.normal(size=(n, centres.shape[1])) for c in centres])
    return X, np.repeat(np.arange(len(centres)), n)


def standardise(X):
    return (X - X.mean(0)) / X.std(0)


def small_three_class(seed=0, n=12):
    """Three overlapping classes in 2-D, n objects each."""
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1, 2], n)
    X = rng.normal(size=(3 * n, 2)) + 1.2 * np.array([[0, 0], [1, 1], [2, 0]])[y]
    return X, y


# ---------------------------------------------------------------- 1. weights of eq. (1)
def test_pair_weights_sum_to_one_and_the_normaliser_ignores_the_subclasses():
    rng = np.random.default_rng(1)
    sub_sizes = [[3, 4, 1], [7], [2, 2, 5, 1]]  # subclasses of three classes
    class_sizes = [sum(s) for s in sub_sizes]
    sizes = np.array([s for c in sub_sizes for s in c])
    sub_class = np.array([i for i, c in enumerate(sub_sizes) for _ in c])
    a, b = cross_pairs(sub_class)
    n = sizes.sum()
    w = pair_weights(sizes[a], sizes[b], n, class_sizes)
    assert w.sum() == pytest.approx(1.0, abs=1e-14)
    # brute force over ordered pairs: P_ij-kp = P_ij P_kp / sum_U P_ij P_kp; the unordered weight is twice it
    P = sizes / n
    ordered = sum(P[s] * P[t] for s in range(len(P)) for t in range(len(P)) if sub_class[s] != sub_class[t])
    assert ordered == pytest.approx(normaliser(class_sizes), rel=1e-14)
    assert normaliser(class_sizes) == pytest.approx(1 - sum((c / n) ** 2 for c in class_sizes), rel=1e-14)
    np.testing.assert_allclose(w, 2 * P[a] * P[b] / ordered, rtol=1e-13)
    # any other split of the same classes: the same normaliser
    for _ in range(5):
        other = [np.diff(np.r_[0, np.sort(rng.choice(np.arange(1, c), rng.integers(0, c - 1), replace=False)), c])
                 if c > 1 else np.array([c]) for c in class_sizes]
        sz = np.concatenate(other)
        sc = np.concatenate([[i] * len(o) for i, o in enumerate(other)])
        total = sum(sz[s] * sz[t] for s in range(len(sz)) for t in range(len(sz)) if sc[s] != sc[t]) / n**2
        assert total == pytest.approx(normaliser(class_sizes), rel=1e-13)


# ---------------------------------------------------------------- 2. MPE-SVM's atomic error, eq. (3)
def test_svm_pair_equals_sklearn_linear_svc():
    X, y = blobs([[0, 0], [1.5, 1]], 15, seed=3)
    Xa, Xb = X[y == 0], X[y == 1]
    w, b, E, f, converged = svm_pair(Xa, Xb, C=100.0, tol=1e-8)
    svc = SVC(kernel="linear", C=100.0, tol=1e-8).fit(X, y)  # decision > 0: class 1 (our b)
    np.testing.assert_allclose(w, -svc.coef_[0], rtol=1e-6)
    assert b == pytest.approx(-svc.intercept_[0], rel=1e-6)
    np.testing.assert_allclose(f, -svc.decision_function(X), atol=1e-6)
    assert converged


@pytest.mark.parametrize("delta", [0.3, 1.0, 4.0])
def test_two_points_give_two_over_delta_squared(delta):
    # the points about the origin, as standardised data are: libsvm keeps the kernel in float32, so
    # entries ~ ||x||^2 >> delta^2 would cost E ~ 1e-7 ||x||^2 / delta^2 in relative precision
    u = np.array([[0.6, -0.8, 0.0]])
    _, _, E, _, _ = svm_pair(-delta / 2 * u, delta / 2 * u, C=100.0, tol=1e-10)
    assert E == pytest.approx(2 / delta**2, rel=1e-6)


def point_segment(p, a, b):
    t = np.clip((p - a) @ (b - a) / ((b - a) @ (b - a)), 0.0, 1.0) if np.any(a != b) else 0.0
    return np.linalg.norm(p - (a + t * (b - a)))


def hull_distance(A, B):
    """Distance between the convex hulls of two disjoint 2-D point sets, brute force: the minimum over
    every point of one set and every segment between two points of the other (hull edges among them)."""
    return min(point_segment(p, Q[i], Q[j]) for P, Q in ((A, B), (B, A)) for p in P
               for i in range(len(Q)) for j in range(i, len(Q)))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_separable_sets_give_two_over_hull_distance_squared(seed):
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(6, 2))
    B = rng.normal(size=(5, 2)) + np.array([4.0, 1.0])
    centre = np.vstack([A, B]).mean(0)  # about the origin, as standardised data (libsvm's float32 kernel)
    rho = hull_distance(A, B)
    _, _, E, f, _ = svm_pair(A - centre, B - centre, C=100.0, tol=1e-10)
    assert np.all(f[:6] > 0.999) and np.all(f[6:] < -0.999)  # separated: no slack
    assert E == pytest.approx(2 / rho**2, rel=1e-5)  # libsvm's float32 kernel: ~1e-7 ||x||^2 / rho^2


@pytest.mark.parametrize("C", [0.5, 10.0, 100.0])
def test_inseparable_set_matches_a_generic_primal_qp(C):
    X, y = blobs([[0, 0], [1, 0.5]], 6, seed=5)
    X = X - X.mean(0)
    s = np.where(y == 0, 1.0, -1.0)
    n = len(X)
    # the primal over z = (w1, w2, b, slacks): 1/2 ||w||^2 + C sum(slacks), s (w'x + b) >= 1 - slack, slack >= 0
    cons = [{"type": "ineq", "fun": lambda z: s * (X @ z[:2] + z[2]) - 1 + z[3:],
             "jac": lambda z: np.column_stack([s[:, None] * X, s, np.eye(n)])}]
    res = minimize(lambda z: 0.5 * z[:2] @ z[:2] + C * z[3:].sum(), np.r_[0, 0, 0, np.ones(n)],
                   jac=lambda z: np.r_[z[:2], 0, np.full(n, C)], method="SLSQP",
                   bounds=[(None, None)] * 3 + [(0, None)] * n, constraints=cons,
                   options={"ftol": 1e-15, "maxiter": 1000})
    w, b = res.x[:2], res.x[2]
    margins = s * (X @ w + b)
    primal = 0.5 * w @ w + C * np.maximum(0.0, 1.0 - margins).sum()  # SLSQP's (w, b), slacks made feasible
    _, _, E, _, _ = svm_pair(X[y == 0], X[y == 1], C=C, tol=1e-8)
    assert E == pytest.approx(primal, rel=1e-4)
    assert np.any(margins < 0)  # truly inseparable


# ---------------------------------------------------------------- 3. MPE-LDA, eq. (2)
def test_lda_error_is_two_over_the_mahalanobis_gap_and_direction_is_sklearns():
    rng = np.random.default_rng(4)
    Xa = rng.normal(size=(20, 3)) @ np.array([[1, 0.3, 0], [0, 1, 0.2], [0, 0, 0.5]])
    Xb = rng.normal(size=(15, 3)) + np.array([1.0, -0.5, 0.3])
    SW = np.cov(Xa.T, bias=True) + np.cov(Xb.T, bias=True)
    delta = Xa.mean(0) - Xb.mean(0)
    w, b, E = lda_pair(Xa, Xb, tau=0.0)
    assert E == pytest.approx(2 / (delta @ np.linalg.solve(SW, delta)), rel=1e-10)
    w, b, E_tau = lda_pair(Xa, Xb)  # the default ridge changes nothing visible on regular data
    assert E_tau == pytest.approx(E, rel=1e-6)
    X, y = np.vstack([Xa, Xb]), np.r_[np.zeros(20), np.ones(15)]
    lda = LinearDiscriminantAnalysis(solver="lsqr", priors=[0.5, 0.5]).fit(X, y)  # > 0: class 1 (our b)
    factor = -lda.coef_[0] / w
    np.testing.assert_allclose(factor, factor[0], rtol=1e-6)
    assert factor[0] > 0
    assert -lda.intercept_[0] == pytest.approx(factor[0] * b, rel=1e-6)


# ---------------------------------------------------------------- 4. K = N is the one-vs-one linear SVM
def test_one_subclass_per_class_is_libsvm_one_vs_one(glass):
    iris = load_iris()
    for X, y in ((iris.data, iris.target), glass):
        model = LLCPairwiseCoupling(n_subclasses=1).fit(X, y)
        assert model.n_subclasses_ == len(np.unique(y))
        Xs = (X - model.mean_) / model.scale_
        svc = SVC(kernel="linear", C=100.0).fit(Xs, y)
        rng = np.random.default_rng(0)
        probe = np.vstack([X, X[rng.integers(0, len(X), 100)] + 0.3 * X.std(0) * rng.normal(size=(100, X.shape[1]))])
        np.testing.assert_array_equal(model.predict(probe), svc.predict((probe - model.mean_) / model.scale_))


# ---------------------------------------------------------------- 5. Theorem 3.2: one object per subclass = 1-NN
@pytest.mark.parametrize("classifier,C", [("svm", 0.01), ("svm", 100.0), ("lda", 100.0)])
def test_one_object_per_subclass_is_one_nearest_neighbour(classifier, C):
    X, y = small_three_class(seed=2, n=5)
    n = len(y)
    rng = np.random.default_rng(9)
    probe = rng.normal(size=(300, 2)) * 1.5 + 1
    for combination in ("voting", "minmax"):
        model = LLCPairwiseCoupling(n_subclasses=n, classifier=classifier, C=C, combination=combination).fit(X, y)
        assert model.n_subclasses_ == n and len(np.unique(model.subclass_of_)) == n
        Xs, Ps = (X - model.mean_) / model.scale_, (probe - model.mean_) / model.scale_
        d = np.sqrt(((Ps[:, None] - Xs[None]) ** 2).sum(-1))
        first, second = np.sort(d, axis=1)[:, :2].T
        clear = second - first > 1e-6  # no distance tie
        assert clear.mean() > 0.95
        np.testing.assert_array_equal(model.predict(probe)[clear], y[d.argmin(1)][clear])


# ---------------------------------------------------------------- 6. Theorem 3.1
def test_equivalence_theorem_conditions_and_the_provable_region():
    X, y = small_three_class(seed=5, n=20)
    probe = np.random.default_rng(1).normal(size=(400, 2)) * 1.5 + 1
    not_three = 0
    for K in range(3, 13):
        model = LLCPairwiseCoupling(n_subclasses=K, subclassing="kmeans").fit(X, y)
        f = decision_values((probe - model.mean_) / model.scale_, model.coef_, model.intercept_)
        a, b, sc, k = model.pairs_[:, 0], model.pairs_[:, 1], model.subclass_class_, model.n_subclasses_
        votes, duels = subclass_votes(f, a, b, k), duel_counts(a, b, k)
        mm = minmax_values(f, a, b, k)
        p = couple(pair_probabilities(f), a, b, k)
        cond1_strict = np.column_stack([np.all(np.where(a == s, f, np.inf) > 0, axis=1)
                                        & np.all(np.where(b == s, -f, np.inf) > 0, axis=1) for s in range(k)])
        cond1 = votes == duels
        cond2 = mm > 0
        np.testing.assert_array_equal(cond1_strict, cond2)  # (1) <=> (2), exactly
        assert not (f == 0).any()
        np.testing.assert_array_equal(cond1, cond2)  # with delta's ">=", where no f is 0
        cond3 = np.column_stack([np.all(p[:, [s]] > p[:, sc != sc[s]], axis=1) for s in range(k)])
        preds = {c: model.set_params(combination=c).predict(probe) for c in ("voting", "minmax", "probability")}
        region = cond2.any(axis=1)
        winner = model.classes_[sc[cond2.argmax(axis=1)]]
        np.testing.assert_array_equal(preds["voting"][region], winner[region])
        np.testing.assert_array_equal(preds["minmax"][region], winner[region])
        both = (cond1 & cond3).any(axis=1)
        np.testing.assert_array_equal(preds["probability"][both], winner[both])
        not_three += int((region & ~both).sum())
        np.testing.assert_array_equal(model.path_predictions(probe, [K])["provable"][0], region)
    print(f"Theorem 3.1: {not_three} probe points satisfy (1) but not (3)")  # reported, not asserted (spec 2)


# ---------------------------------------------------------------- 7. Wu-Lin-Weng coupling on U
def test_coupling_recovers_consistent_probabilities_and_solves_its_problem():
    sub_class = np.array([0, 0, 1, 1, 1, 2])
    a, b = cross_pairs(sub_class)
    rng = np.random.default_rng(0)
    p_true = rng.dirichlet(np.ones(6), size=4)
    r = p_true[:, a] / (p_true[:, a] + p_true[:, b])
    np.testing.assert_allclose(couple(r, a, b, 6), p_true, atol=1e-10)
    # two subclasses: p = (r, 1 - r)
    np.testing.assert_allclose(couple(np.array([[0.3], [0.8]]), np.array([0]), np.array([1]), 2),
                               [[0.3, 0.7], [0.8, 0.2]], atol=1e-12)
    # random r: a probability vector, the minimiser of the problem, from a regular KKT system
    r = rng.uniform(0.05, 0.95, size=(3, len(a)))
    p = couple(r, a, b, 6)
    np.testing.assert_allclose(p.sum(1), 1, atol=1e-12)
    assert (p >= 0).all()
    Q = coupling_matrix(r, a, b, 6)
    for row in range(3):
        def objective(q, row=row):
            return sum(((1 - r[row, j]) * q[a[j]] - r[row, j] * q[b[j]]) ** 2 for j in range(len(a)))
        res = minimize(objective, np.full(6, 1 / 6), method="SLSQP",
                       constraints=[{"type": "eq", "fun": lambda q: q.sum() - 1}], options={"ftol": 1e-15})
        np.testing.assert_allclose(p[row], res.x, atol=1e-6)
        assert objective(p[row]) == pytest.approx(p[row] @ Q[row] @ p[row], rel=1e-10)
        M = np.block([[Q[row], np.ones((6, 1))], [np.ones((1, 6)), np.zeros((1, 1))]])
        assert np.linalg.matrix_rank(M) == 7


# ---------------------------------------------------------------- 8. votes
def test_exact_vote_tie_goes_to_the_smallest_label_and_minmax_breaks_it():
    # three classes, one subclass each, a cycle: 0 beats 1, 1 beats 2, 2 beats 0 -> one vote each
    a, b, sc = np.array([0, 0, 1]), np.array([1, 2, 2]), np.array([0, 1, 2])
    f = np.array([[0.5, -0.4, 0.3]])  # f_01 > 0, f_02 < 0 (2 wins), f_12 > 0
    winner, F = combine(f, a, b, sc, 3, "voting")
    assert winner[0] == 0 and np.all(F == 0.5)
    # MinMax values: subclass 0: min(0.5, -0.4), 1: min(-0.5, 0.3), 2: min(0.4, -0.3) -> class 2 is best
    assert combine(f, a, b, sc, 3, "voting", tie_break="minmax")[0][0] == 2
    assert combine(f, a, b, sc, 3, "minmax")[0][0] == 2


def test_unequal_duel_counts_are_compared_exactly():
    D = np.array([2**30, 2**30 + 1])
    votes = np.array([[2**30 - 1, 2**30]])  # 1 - 2^-30 < 1 - 2^-30 + 2^-60 - ...
    assert votes[0, 1] * D[0] - votes[0, 0] * D[1] == 1
    assert votes[0, 0] / D[0] == votes[0, 1] / D[1]  # float division ties, the fractions do not
    assert np.argmax(votes / D) == 0
    assert vote_winner(votes, D)[0] == 1
    assert vote_winner(np.array([[2, 1]]), np.array([4, 2]))[0] == 0  # an exact tie: the smaller label


# ---------------------------------------------------------------- 9. Theorem 4.1
def test_random_splits_never_raise_mpe_svm():
    # libsvm tol 1e-5: at C = 100 its float32 kernel keeps some fits from reaching 1e-8 (max_iter)
    rng = np.random.default_rng(11)
    for _ in range(20):
        n_classes = int(rng.integers(2, 4))
        y = np.repeat(np.arange(n_classes), 6)
        X = rng.normal(size=(len(y), 2)) + 0.8 * rng.normal(size=(n_classes, 2))[y]
        X -= X.mean(0)  # about the origin, as standardised data
        sub = y * 10 + rng.integers(0, 2, size=len(y))  # up to two subclasses per class
        before, _ = mpe(X, y, sub, tol=1e-5)
        labels, counts = np.unique(sub, return_counts=True)
        target = rng.choice(labels[counts >= 2])
        members = np.flatnonzero(sub == target)
        moved = rng.choice(members, size=rng.integers(1, len(members)), replace=False)
        split = sub.copy()
        split[moved] = 100 + target
        after, _ = mpe(X, y, split, tol=1e-5)
        assert after <= before * (1 + 1e-6)


# ---------------------------------------------------------------- 10. Greedy-MPE against a plain reference
TOL = 1e-4  # libsvm's tolerance in both (C = 100 with its float32 kernel cannot reach much less)
def reference_greedy(X, y, K, selection, pair_error="criterion", C=100.0, random_state=0, n_init=10,
                     two_means=None, variance="trace"):
    """Greedy-MPE written plainly: one SVC per pair, np.var for the variance; the same seeded 2-means, or
    ``two_means(X) -> labels`` (another implementation, for data whose 2-means splits are unambiguous)."""
    Xs = standardise(X)
    n = len(y)
    sizes = np.bincount(y)
    Z = 1 - ((sizes / n) ** 2).sum()
    subs = [dict(cls=i, heap=1, order=i, members=np.flatnonzero(y == i)) for i in range(y.max() + 1)]
    cache, splits, next_order = {}, [], len(subs)

    def pair_E(s, t):
        key = (tuple(s["members"]), tuple(t["members"]))
        if key not in cache:
            Xp = Xs[np.r_[s["members"], t["members"]]]
            lab = np.r_[np.zeros(len(s["members"])), np.ones(len(t["members"]))]
            svc = SVC(kernel="linear", C=C, tol=TOL).fit(Xp, lab)
            f = -svc.decision_function(Xp)
            sgn = np.where(lab == 0, 1, -1)
            E = 0.5 * svc.coef_[0] @ svc.coef_[0] + C * np.maximum(0, 1 - sgn * f).sum()
            cache[key] = (E, np.mean(sgn * f < 0))
        return cache[key]

    def F(s, t):
        E, err = pair_E(s, t)
        return 2 * len(s["members"]) * len(t["members"]) / n**2 / Z * (E if pair_error == "criterion" else err)

    def halves(s):
        if len(s["members"]) < 2:
            return None
        if two_means is not None:
            lab = two_means(Xs[s["members"]])
        else:
            lab = kmeans(Xs[s["members"]], 2, n_init, seeded(random_state, SPLIT, s["cls"], s["heap"]))
        return sorted((s["members"][lab == c] for c in (0, 1)), key=lambda m: m[0])

    while len(subs) < K:
        subs.sort(key=lambda s: (s["cls"], s["order"]))
        pairs = [(s, t) for s in subs for t in subs if s["cls"] < t["cls"]]
        if selection == "pair_variance":
            pairs.sort(key=lambda st: -F(*st))  # stable: lexicographic among equal F
            s, t = pairs[0]
            var = [np.var(Xs[x["members"]], axis=0).sum() * (len(x["members"]) if variance == "sse" else 1)
                   for x in (s, t)]
            chosen, pair = (s if var[0] >= var[1] else t), (s["order"], t["order"])
        elif selection == "aggregate":
            score = [sum(F(x, z) if x["cls"] < z["cls"] else F(z, x) for z in subs if z["cls"] != x["cls"])
                     for x in subs]
            chosen, pair = subs[int(np.argmax(score))], None
        else:
            gains = []
            for x in subs:
                h = halves(x)
                if h is None:
                    gains.append(-np.inf)
                    continue
                others = [z for z in subs if z["cls"] != x["cls"]]
                drop = 0.0
                for z in others:
                    drop += len(x["members"]) * len(z["members"]) * pair_E(x, z)[0]
                    for m in h:
                        drop -= len(m) * len(z["members"]) * pair_E(dict(members=m), z)[0]
                gains.append(drop)
            chosen, pair = subs[int(np.argmax(gains))], None
        h = halves(chosen)
        kids = [dict(cls=chosen["cls"], heap=2 * chosen["heap"] + j, order=next_order + j, members=m)
                for j, m in enumerate(h)]
        next_order += 2
        subs = [x for x in subs if x is not chosen] + kids
        splits.append((pair, chosen["order"], (kids[0]["order"], kids[1]["order"])))
    subs.sort(key=lambda s: (s["cls"], s["order"]))
    labels = np.empty(n, dtype=int)
    for j, s in enumerate(subs):
        labels[s["members"]] = j
    E = [pair_E(s, t)[0] for s in subs for t in subs if s["cls"] < t["cls"]]
    return splits, labels, np.array(E)


@pytest.mark.parametrize("selection,pair_error", [("pair_variance", "criterion"), ("pair_variance", "training_error"),
                                                  ("aggregate", "criterion"), ("gain", "criterion")])
def test_greedy_mpe_matches_a_plain_reference(selection, pair_error):
    X, y = blobs([[0, 0], [3, 0], [0, 3], [3, 3], [1.5, 1.5]], 7, seed=21)
    y = np.array([0, 1, 1, 0, 2])[y]  # an XOR-like layout plus a middle class
    model = LLCPairwiseCoupling(n_subclasses=8, selection=selection, pair_error=pair_error, tol=TOL).fit(X, y)
    splits, labels, E = reference_greedy(X, y, 8, selection, pair_error)
    assert [(s["pair"], s["split"], s["children"]) for s in model.splits_] == splits
    assert adjusted_rand_score(model.subclass_of_, labels) == 1.0
    np.testing.assert_array_equal(model.subclass_of_, labels)
    np.testing.assert_allclose(model.pair_error_, E, rtol=1e-5)


def test_greedy_mpe_sse_variance_splits_the_larger_spread_subclass():
    """Step 3 with variance="sse" (n times the covariance's trace) against "trace": class 0 is 60 tight points
    (sd 1) and class 1 is 6 spread ones (sd 2) beside a third class. The pair's subclass to split differs
    between the two rules (trace: the spread one; SSE: the large one), and each run equals the plain reference
    with that rule."""
    rng = np.random.default_rng(23)
    X = np.vstack([rng.normal(0, 1.0, (60, 2)), rng.normal([5, 0], 2.0, (6, 2)), rng.normal([0, 9], 1.0, (12, 2))])
    y = np.repeat([0, 1, 2], [60, 6, 12])
    runs = {}
    for variance in ("trace", "sse"):
        model = LLCPairwiseCoupling(n_subclasses=4, variance=variance, tol=TOL).fit(X, y)
        splits, labels, _ = reference_greedy(X, y, 4, "pair_variance", variance=variance)
        assert [(s["pair"], s["split"], s["children"]) for s in model.splits_] == splits
        np.testing.assert_array_equal(model.subclass_of_, labels)
        runs[variance] = model.subclasses_per_class_.tolist()
    assert runs["trace"] != runs["sse"], runs


@pytest.mark.parametrize("selection", ["pair_variance", "aggregate", "gain"])
def test_greedy_mpe_matches_the_plain_reference_with_scikit_learns_2_means(selection):
    """The reference with scikit-learn's KMeans for its 2-means, none of production's clustering code: on
    tight blobs 12 sd apart every 2-means split is the same, so the greedy choices, the subclasses and the
    pairs' criteria agree with production's seeded k-means."""
    from sklearn.cluster import KMeans

    X, blob = blobs([[0, 0], [12, 0], [0, 12], [12, 12], [24, 0], [24, 12]], 8, seed=22)
    y = np.array([0, 1, 1, 0, 2, 2])[blob]
    model = LLCPairwiseCoupling(n_subclasses=6, selection=selection, tol=TOL).fit(X, y)
    splits, labels, E = reference_greedy(
        X, y, 6, selection, two_means=lambda Z: KMeans(2, n_init=10, random_state=0).fit_predict(Z))
    assert [(s["pair"], s["split"], s["children"]) for s in model.splits_] == splits
    np.testing.assert_array_equal(model.subclass_of_, labels)
    assert adjusted_rand_score(model.subclass_of_, blob) == 1.0  # the blobs themselves
    np.testing.assert_allclose(model.pair_error_, E, rtol=1e-5)


# ---------------------------------------------------------------- 11. planted subclasses
def test_greedy_mpe_recovers_xor_blobs():
    X, blob = blobs([[0, 0], [10, 10], [0, 10], [10, 0]], 15, seed=1)
    y = blob // 2
    model = LLCPairwiseCoupling(n_subclasses=4).fit(X, y)
    assert adjusted_rand_score(model.subclass_of_, blob) == 1.0
    assert (model.predict(X) == y).all()
    linear = LLCPairwiseCoupling(n_subclasses=2).fit(X, y)
    assert (linear.predict(X) == y).mean() <= 0.75  # a linear rule: at best three of the four blobs


def test_greedy_mpe_splits_only_the_multimodal_class():
    side = 20.0
    corners = np.array([[-side / 2, 0], [side / 2, 0], [0, side * np.sqrt(3) / 2]])
    A, blob = blobs(corners, 15, seed=4)
    B, _ = blobs([corners.mean(0)], 15, sd=0.8, seed=5)
    X, y = np.vstack([A, B]), np.r_[np.zeros(45, int), np.ones(15, int)]
    model = LLCPairwiseCoupling(n_subclasses=4).fit(X, y)
    np.testing.assert_array_equal(model.subclasses_per_class_, [3, 1])
    assert adjusted_rand_score(model.subclass_of_[:45], blob) == 1.0
    assert (model.predict(X) == y).all()
    rival = LLCPairwiseCoupling(n_subclasses=4, subclassing="kmeans").fit(X, y)
    np.testing.assert_array_equal(rival.subclasses_per_class_, [2, 2])


# ---------------------------------------------------------------- 12. the path
@pytest.mark.parametrize("subclassing", ["greedy_mpe", "kmeans", "hc", "em"])
def test_predict_grid_equals_one_refit_per_k(subclassing):
    X, y = small_three_class(seed=8, n=20)
    fit, val = np.arange(len(y)) % 4 != 0, np.arange(len(y)) % 4 == 0
    grid = [{"n_subclasses": k} for k in (1, 2, 3, 4, 5, 7, 9, 12, 16)]
    for combination in ("voting", "probability"):
        est = LLCPairwiseCoupling(subclassing=subclassing, combination=combination, random_state=3)
        fast = est.predict_grid(X[fit], y[fit], X[val], grid)
        slow = predict_each(est, X[fit], y[fit], X[val], grid)
        for p, q in zip(fast, slow):
            np.testing.assert_array_equal(p, q)


def test_greedy_path_is_a_prefix_and_kmeans_depends_on_its_count_only(glass):
    X, y = glass
    full = LLCPairwiseCoupling(n_subclasses=40).fit(X, y)
    assert full.n_subclasses_ == 40 and len(full.splits_) == 34
    for K in (6, 11, 23):
        model = LLCPairwiseCoupling(n_subclasses=K).fit(X, y)
        assert model.splits_ == full.splits_[:K - 6]
        # the subclasses at K: the full path's leaves merged back up to the first K - 6 splits
        path = full.path_predictions(X[:5], [K])
        assert path["n_subclasses"][0] == K and path["mpe"][0] == pytest.approx(model.mpe_, rel=1e-12)
        assert adjusted_rand_score(model.subclass_of_, _leaves_at(full, K)) == 1.0
    # Q never rises along the path (Theorem 4.1, up to libsvm's tol); each split's Q is the path's at its K
    q = full.path_predictions(X[:1], list(range(6, 41)))["mpe"]
    np.testing.assert_array_equal(q[1:], [s["mpe"] for s in full.splits_])
    assert all(b <= a * (1 + 1e-3) for a, b in zip(q, q[1:]))
    # a class's k-means clustering depends on (m_i, seed) only, not on the other classes' counts
    Xc, yc = small_three_class(seed=3, n=20)
    one = LLCPairwiseCoupling(subclassing="kmeans", subclasses_per_class=[3, 2, 1], random_state=5).fit(Xc, yc)
    two = LLCPairwiseCoupling(subclassing="kmeans", subclasses_per_class=[3, 4, 2], random_state=5).fit(Xc, yc)
    np.testing.assert_array_equal(one.subclass_of_[yc == 0], two.subclass_of_[yc == 0])
    alone = kmeans(((Xc - one.mean_) / one.scale_)[yc == 0], 3, 10, seeded(5, KMEANS, 0, 3))
    assert adjusted_rand_score(alone, one.subclass_of_[yc == 0]) == 1.0


def _leaves_at(model, K):
    """Subclass labels at K from the fitted path's splits: undo the splits after the first K - N."""
    sub = np.array([model.subclass_id_[s] for s in model.subclass_of_])
    for step in reversed(model.splits_[K - len(model.classes_):]):
        for child in step["children"]:
            sub[sub == child] = step["split"]
    return sub


# ---------------------------------------------------------------- 13. allocation
@pytest.mark.parametrize("K,sizes,distinct,allocation,counts,capped", [
    (8, [70, 76, 17, 13, 9, 29], None, "equal", [2, 2, 1, 1, 1, 1], []),
    (40, [70, 76, 17, 13, 9, 29], None, "equal", [7, 7, 7, 6, 6, 7], []),
    (5, [10, 10, 10], None, "equal", [2, 2, 1], []),
    (10, [70, 20, 10], None, "proportional", [7, 2, 1], []),
    (7, [70, 20, 10], None, "proportional", [5, 1, 1], []),
    (3, [97, 2, 1], None, "proportional", [1, 1, 1], []),
    (9, [10, 10, 2], None, "equal", [4, 3, 2], [2]),
    (12, [5, 3, 2], [4, 3, 2], "equal", [4, 3, 2], [1, 2]),
])
def test_allocation_table(K, sizes, distinct, allocation, counts, capped):
    got, cap = allocate(K, sizes, sizes if distinct is None else distinct, allocation)
    np.testing.assert_array_equal(got, counts)
    assert cap == capped


def test_allocation_warning_and_explicit_count_error():
    X, y = small_three_class(seed=1, n=10)
    X, y = X[:23], y[:23]  # class 2 keeps 3 objects
    with pytest.warns(UserWarning, match=r"class\(es\) 2 \(3\)") as caught:
        model = LLCPairwiseCoupling(n_subclasses=15, subclassing="kmeans").fit(X, y)
    assert sum("k-means" in str(w.message) for w in caught) == 1
    np.testing.assert_array_equal(model.subclasses_per_class_, [6, 6, 3])
    with pytest.raises(DataError, match="asks 4 subclasses of class 2, which has 3 distinct objects") as exc:
        LLCPairwiseCoupling(subclassing="kmeans", subclasses_per_class={0: 1, 1: 2, 2: 4}).fit(X, y)
    assert "\n" not in str(exc.value)


# ---------------------------------------------------------------- 14. k-means by kmeans2
def test_kmeans2_lloyd_equals_sklearn_kmeans_from_the_same_centres_and_is_seeded():
    X, _ = blobs([[0, 0, 0], [3, 0, 1], [0, 3, 2], [2, 2, 2]], 25, sd=1.2, seed=6)
    for k in (2, 3, 5):
        centres = kpp_centres(X, k, seeded(0, KMEANS, 1, k))
        labels, means, inertia = lloyd(X, centres)
        ref = KMeans(k, init=centres, n_init=1, tol=0.0, max_iter=300).fit(X)
        np.testing.assert_array_equal(labels, ref.labels_)
        assert inertia == pytest.approx(ref.inertia_, rel=1e-10)
        np.testing.assert_allclose(means, ref.cluster_centers_, atol=1e-12)
        # restarts drawn in turn from one seeded generator, the least inertia kept; reproducible
        chosen = kmeans(X, k, 10, seeded(7, KMEANS, 0, k))
        np.testing.assert_array_equal(chosen, kmeans(X, k, 10, seeded(7, KMEANS, 0, k)))
        rng = seeded(7, KMEANS, 0, k)
        runs = [lloyd(X, kpp_centres(X, k, rng)) for _ in range(10)]
        np.testing.assert_array_equal(chosen, runs[int(np.argmin([r[2] for r in runs]))][0])


# ---------------------------------------------------------------- 16. the estimator
def test_defaults_follow_the_spec_and_clone_keeps_them():
    est = LLCPairwiseCoupling()
    assert est.get_params() == dict(
        n_subclasses=2, subclassing="greedy_mpe", classifier="svm", C=100.0, criterion="auto",
        selection="pair_variance", pair_error="criterion", variance="trace", combination="voting",
        pair_probability="sigmoid", tie_break="label", allocation="equal", subclasses_per_class=None, linkage="average",
        n_init=10,
        tol=1e-3, max_iter=10_000_000, cache_size=200, random_state=0)
    other = LLCPairwiseCoupling(n_subclasses=7, combination="minmax")
    assert clone(other).get_params() == other.get_params()
    with pytest.raises(NotFittedError):
        est.predict(np.zeros((1, 2)))


def one_line_error(exc_info, *needles):
    msg = str(exc_info.value)
    assert "\n" not in msg
    for needle in needles:
        assert needle in msg, msg


def test_bad_input_is_one_line_data_error():
    X, y = small_three_class(n=6)
    with pytest.raises(DataError) as exc:
        LLCPairwiseCoupling().fit(X, np.zeros(len(y)))
    one_line_error(exc, "single class")
    for bad in (np.nan, np.inf):
        Xb = X.copy()
        Xb[3, 1] = bad
        with pytest.raises(DataError) as exc:
            LLCPairwiseCoupling().fit(Xb, y)
        one_line_error(exc, "NaN/inf")
    model = LLCPairwiseCoupling(n_subclasses=3).fit(X, y)
    with pytest.raises(DataError) as exc:
        model.predict(np.zeros((2, 3)))
    one_line_error(exc, "3 features", "fitted on 2")
    with pytest.raises(DataError) as exc:
        LLCPairwiseCoupling().fit(np.ones((len(y), 2)), y)
    one_line_error(exc, "every feature of X is constant")
    with pytest.raises(DataError) as exc:
        LLCPairwiseCoupling(subclassing="kmeans", subclasses_per_class=[1, 7, 1]).fit(X, y)
    one_line_error(exc, "asks 7 subclasses of class 1")
    with pytest.raises(ValueError, match="kmeans"):
        LLCPairwiseCoupling(subclasses_per_class=[1, 1, 1]).fit(X, y)


def test_documented_warnings():
    X, y = small_three_class(n=8)
    Xc = np.column_stack([X, np.full(len(y), 0.1), X[:, 0]])
    with pytest.warns(UserWarning, match=r"feature\(s\) 2 are constant") as caught:
        model = LLCPairwiseCoupling(n_subclasses=5).fit(Xc, y)
    assert len(caught) == 1
    assert np.all(model.coef_[:, 2] == 0)  # 0 after centring: no weight
    reference = LLCPairwiseCoupling(n_subclasses=5).fit(np.column_stack([X, X[:, 0]]), y)
    probe = np.random.default_rng(0).normal(size=(50, 2)) + 1
    np.testing.assert_array_equal(model.predict(np.column_stack([probe, np.full(50, 7.0), probe[:, 0]])),
                                  reference.predict(np.column_stack([probe, probe[:, 0]])))
    # Greedy-MPE that cannot reach K: identical objects
    Xd = np.repeat([[0.0, 0.0], [1.0, 1.0], [0.0, 1.0]], 3, axis=0)
    yd = np.array([0, 0, 0, 1, 1, 1, 0, 0, 0])
    with pytest.warns(UserWarning, match="stopped at 3 of the 5"):
        model = LLCPairwiseCoupling(n_subclasses=5).fit(Xd, yd)
    assert model.n_subclasses_ == 3
    with pytest.warns(ConvergenceWarning, match="max_iter=1"):
        model = LLCPairwiseCoupling(n_subclasses=3, max_iter=1).fit(*small_three_class(n=15))
    assert not model.converged_


def test_feature_scale_and_order_preserving_relabelling_change_nothing():
    X, y = small_three_class(seed=4, n=15)
    probe = np.random.default_rng(2).normal(size=(200, 2)) * 1.5 + 1
    scale = np.array([1000.0, 1e-3])
    for subclassing in ("greedy_mpe", "kmeans"):
        for combination in ("voting", "minmax", "probability"):
            base = LLCPairwiseCoupling(n_subclasses=7, subclassing=subclassing, combination=combination)
            model = clone(base).fit(X, y)
            scaled = clone(base).fit(X * scale + 3.0, y)
            np.testing.assert_array_equal(model.subclass_of_, scaled.subclass_of_)
            np.testing.assert_allclose(model.pair_error_, scaled.pair_error_, rtol=1e-3)
            pred = model.predict(probe)
            np.testing.assert_array_equal(pred, scaled.predict(probe * scale + 3.0))
            names = np.array(["ant", "bee", "cat"])
            relabelled = clone(base).fit(X, names[y])
            np.testing.assert_array_equal(relabelled.predict(probe), names[pred])


def test_decision_function_is_the_schemas_class_score():
    X, y = small_three_class(seed=6, n=15)
    probe = np.random.default_rng(3).normal(size=(100, 2)) * 1.5 + 1
    for combination in ("voting", "minmax", "probability"):
        model = LLCPairwiseCoupling(n_subclasses=7, combination=combination).fit(X, y)
        F = model.decision_function(probe)
        assert F.shape == (100, 3)
        np.testing.assert_array_equal(model.predict(probe), model.classes_[F.argmax(1)])
        if combination == "voting":  # vote shares: the best subclass's duels won over D_i = K - N_i
            D = model.n_subclasses_ - model.subclasses_per_class_
            np.testing.assert_array_equal(np.rint(F * D), F * D)
            assert F.max() <= 1.0


def test_two_classes_decision_function_and_subclass_proba():
    X, y = small_three_class(seed=6, n=15)
    X, y = X[y < 2], y[y < 2]
    for combination in ("voting", "minmax", "probability"):
        model = LLCPairwiseCoupling(n_subclasses=5, combination=combination).fit(X, y)
        dec = model.decision_function(X)
        assert dec.shape == (len(y),)
        clear = dec != 0
        np.testing.assert_array_equal(model.predict(X)[clear], np.where(dec > 0, 1, 0)[clear])
    p = model.subclass_proba(X)
    assert p.shape == (len(y), model.n_subclasses_)
    np.testing.assert_allclose(p.sum(1), 1, atol=1e-10)


def test_criterion_and_classifier_can_differ():
    X, y = small_three_class(seed=7, n=10)
    both = LLCPairwiseCoupling(n_subclasses=5, criterion="mpe_lda").fit(X, y)
    svm = LLCPairwiseCoupling(n_subclasses=3).fit(X, y)  # no split yet: the same pairs of classes
    at_n = LLCPairwiseCoupling(n_subclasses=3, criterion="mpe_lda").fit(X, y)
    np.testing.assert_allclose(at_n.coef_, svm.coef_)
    Xs = (X - at_n.mean_) / at_n.scale_
    expected = [lda_pair(Xs[y == i], Xs[y == j])[2] for i, j in ((0, 1), (0, 2), (1, 2))]
    np.testing.assert_allclose(at_n.pair_error_, expected, rtol=1e-12)
    assert both.n_subclasses_ == 5
    lda = LLCPairwiseCoupling(n_subclasses=5, classifier="lda", pair_probability="platt",
                              combination="probability").fit(X, y)
    # a floor from the data: the Bayes rule of small_three_class's Gaussians (unit covariance: the nearest of the
    # means 1.2 (0, 0), (1, 1), (2, 0)) on the same objects, less 3 of its binomial SE
    means = 1.2 * np.array([[0, 0], [1, 1], [2, 0]])
    bayes = np.mean(np.argmin(((X[:, None, :] - means[None]) ** 2).sum(-1), axis=1) == y)
    assert (lda.predict(X) == y).mean() >= bayes - 3 * np.sqrt(bayes * (1 - bayes) / len(y))


def test_platt_pair_probability_is_platts_sigmoid_of_the_decision_value():
    """pair_probability="platt" with one pair (two classes, K = 2): the subclass probability of subclass a is
    1 / (1 + exp(A f + B)) with f = coef_ . x~ + intercept_ and (A, B) minimising the cross-entropy with
    Platt's targets (N+ + 1) / (N+ + 2) and 1 / (N- + 2) on the training decision values, here found from
    scratch by scipy's BFGS (not scikit-learn's calibration code production calls)."""
    from scipy.optimize import minimize

    X, y = small_three_class(seed=8, n=25)
    X, y = X[y < 2], y[y < 2]
    model = LLCPairwiseCoupling(n_subclasses=2, pair_probability="platt", combination="probability").fit(X, y)
    assert model.pairs_.tolist() == [[0, 1]]
    Xs = (X - model.mean_) / model.scale_
    f = Xs @ model.coef_[0] + model.intercept_[0]
    a = model.subclass_class_[model.pairs_[0, 0]]
    t = np.where(y == model.classes_[a], (np.sum(y == model.classes_[a]) + 1) / (np.sum(y == model.classes_[a]) + 2),
                 1 / (np.sum(y != model.classes_[a]) + 2))

    def loss(p):
        z = p[0] * f + p[1]
        return np.sum(t * np.logaddexp(0, z) + (1 - t) * np.logaddexp(0, -z))

    A, B = minimize(loss, np.zeros(2), method="BFGS", options={"gtol": 1e-10}).x
    Z = np.random.default_rng(9).normal(size=(20, 2)) + 1.0
    fz = ((Z - model.mean_) / model.scale_) @ model.coef_[0] + model.intercept_[0]
    np.testing.assert_allclose(model.subclass_proba(Z)[:, model.pairs_[0, 0]], 1 / (1 + np.exp(A * fz + B)),
                               rtol=1e-4, atol=1e-6)  # the two optimisers' tolerances
    assert A < 0  # f > 0 favours a
