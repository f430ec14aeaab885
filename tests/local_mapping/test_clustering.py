"""Tests of hlm.local_mapping._clustering (paper section 2.2 / 5.1; dissertation section 3.4, Algorithm 1).

Convention: point i assigned to prototype m costs R[i, m] (row = point, column = prototype).
"""

import itertools

import numpy as np
import pytest
from scipy.cluster.hierarchy import fcluster, linkage
from scipy.spatial.distance import cdist

from hlm.errors import DataError
from hlm.local_mapping._clustering import Clustering, cluster, generalized_kmeans, vsh, ward


# --------------------------------------------------------------------------- helpers
def cost(R, protos):
    """p-median objective of a prototype set: sum_i min_m R[i, m]."""
    return R[:, list(protos)].min(axis=1).sum()


def exhaustive(R, k):
    """(optimal cost, first optimal k-subset) of the p-median problem, by enumeration."""
    best = (np.inf, None)
    for S in itertools.combinations(range(R.shape[0]), k):
        c = cost(R, S)
        if c < best[0] - 1e-12:
            best = (c, S)
    return best


def sym_matrix(rng, n):
    X = rng.normal(size=(n, 2))
    return cdist(X, X)


def asym_matrix(rng, n):
    R = rng.random((n, n)) * rng.uniform(0.2, 5.0, size=(n, 1))
    np.fill_diagonal(R, 0.0)
    return R


def check_invariants(res, R, k):
    n = R.shape[0]
    assert isinstance(res, Clustering)
    assert res.prototypes.shape == (k,) and res.assignment.shape == (n,)
    assert np.issubdtype(res.prototypes.dtype, np.integer)
    assert np.issubdtype(res.assignment.dtype, np.integer)
    assert np.all(np.diff(res.prototypes) > 0)  # sorted, distinct
    assert res.prototypes.min() >= 0 and res.prototypes.max() < n
    assert res.assignment.min() >= 0 and res.assignment.max() < k
    np.testing.assert_array_equal(res.assignment[res.prototypes], np.arange(k))
    total = R[np.arange(n), res.prototypes[res.assignment]].sum()
    assert isinstance(res.total_distance, float)
    assert res.total_distance == pytest.approx(total, rel=1e-12, abs=1e-12)


def same_partition(a, b):
    """Equal up to relabelling: the label pairs define a bijection."""
    pairs = set(zip(a.tolist(), b.tolist()))
    return len(pairs) == len(set(a.tolist())) == len(set(b.tolist()))


# --------------------------------------------------------------------------- VSH
@pytest.mark.parametrize("kind", ["sym", "asym"])
def test_vsh_matches_exhaustive_p_median(kind):
    hits, trials = 0, 0
    for seed in range(30):
        rng = np.random.default_rng(seed)
        n = 8 + seed % 5
        R = sym_matrix(rng, n) if kind == "sym" else asym_matrix(rng, n)
        for k in (2, 3):
            opt, _ = exhaustive(R, k)
            res = vsh(R, k, seed=seed)
            check_invariants(res, R, k)
            assert res.total_distance >= opt - 1e-9  # never below the optimum
            hits += res.total_distance <= opt + 1e-9
            trials += 1
    assert hits >= 0.9 * trials


def test_vsh_is_swap_local_optimum():
    """No single prototype/non-prototype exchange lowers the total (Algorithm 1 stops there)."""
    for seed in range(10):
        rng = np.random.default_rng(100 + seed)
        R = asym_matrix(rng, 12)
        res = vsh(R, 3, seed=seed, n_init=1)
        protos = set(res.prototypes.tolist())
        for out in protos:
            for new in set(range(12)) - protos:
                assert cost(R, (protos - {out}) | {new}) >= res.total_distance - 1e-9


def test_weighted_vsh_matches_exhaustive():
    hits, trials = 0, 0
    for seed in range(30):
        rng = np.random.default_rng(1000 + seed)
        n = 8 + seed % 5
        D = sym_matrix(rng, n)
        w = rng.uniform(0.5, 3.0, size=n)
        R = w[:, None] * D  # R = H D
        for k in (1, 2, 3):
            opt, _ = exhaustive(R, k)
            res = cluster(D, k, "vsh", seed=seed, weights=w)
            check_invariants(res, R, k)
            assert res.total_distance >= opt - 1e-9
            hits += res.total_distance <= opt + 1e-9
            trials += 1
    assert hits >= 0.9 * trials


def discriminating_matrix(k):
    """An asymmetric R whose p-median optimum is strictly worse under R.T's optimum."""
    for seed in range(1000):
        rng = np.random.default_rng(seed)
        R = asym_matrix(rng, 10)
        opt, S = exhaustive(R, k)
        _, S_T = exhaustive(R.T, k)
        if cost(R, S_T) > opt + 0.1:
            return R, opt, S
    raise AssertionError("no discriminating matrix found")


@pytest.mark.parametrize("k", [1, 2, 3])
def test_vsh_orientation_asymmetric(k):
    """Would fail if kmedoids' matrix orientation were handled wrongly (k = 1: own code path)."""
    R, opt, S = discriminating_matrix(k)
    res = vsh(R, k, seed=0)
    assert res.total_distance == pytest.approx(opt, rel=1e-12)
    np.testing.assert_array_equal(res.prototypes, S)


def test_k1_is_exhaustive_optimum_asymmetric():
    for seed in range(20):
        rng = np.random.default_rng(seed)
        R = asym_matrix(rng, 9)
        opt, S = exhaustive(R, 1)
        for method in ("vsh", "gknn"):
            res = cluster(R, 1, method, seed=seed)
            check_invariants(res, R, 1)
            assert res.total_distance == pytest.approx(opt, rel=1e-12)
            assert res.prototypes[0] == np.argmin(R.sum(axis=0))
            np.testing.assert_array_equal(res.assignment, 0)


def test_vsh_deterministic_given_seed():
    R = asym_matrix(np.random.default_rng(5), 60)
    a, b = vsh(R, 4, seed=7), vsh(R, 4, seed=7)
    np.testing.assert_array_equal(a.prototypes, b.prototypes)
    np.testing.assert_array_equal(a.assignment, b.assignment)
    assert a.total_distance == b.total_distance
    # more restarts extend fewer restarts: never worse
    assert vsh(R, 4, seed=7, n_init=40).total_distance <= a.total_distance
    assert vsh(R, 4, seed=7, n_init=5).total_distance >= a.total_distance


# --------------------------------------------------------------------------- generalized k-means
def one_step(R, protos):
    """Independent assignment + update step; returns the new sorted prototypes and assignment."""
    sub = R[:, protos]
    assignment = sub.argmin(axis=1)
    assignment[protos] = np.arange(len(protos))
    new = []
    for j, p in enumerate(protos):
        members = np.flatnonzero(assignment == j)
        c = R[np.ix_(members, members)].sum(axis=0)
        # keep the current prototype when it attains the minimum
        new.append(p if c[members.tolist().index(p)] <= c.min() else members[np.argmin(c)])
    return np.sort(new), assignment


@pytest.mark.parametrize("kind", ["sym", "asym", "weighted"])
def test_generalized_kmeans_fixed_point(kind):
    for seed in range(20):
        rng = np.random.default_rng(seed)
        n = 12 if seed % 2 else 40
        D = sym_matrix(rng, n) if kind != "asym" else asym_matrix(rng, n)
        w = rng.uniform(0.5, 3.0, size=n) if kind == "weighted" else None
        R = D if w is None else w[:, None] * D
        for k in (2, 3, 5):
            res = generalized_kmeans(D, k, weights=w)
            check_invariants(res, R, k)
            new, assignment = one_step(R, res.prototypes)
            np.testing.assert_array_equal(assignment, res.assignment)
            np.testing.assert_array_equal(new, res.prototypes)
            if n == 12 and k <= 3:
                assert res.total_distance >= exhaustive(R, k)[0] - 1e-9


def test_generalized_kmeans_deterministic():
    R = asym_matrix(np.random.default_rng(3), 50)
    a, b = cluster(R, 4, "gknn", seed=1), cluster(R, 4, "gknn", seed=2)
    np.testing.assert_array_equal(a.prototypes, b.prototypes)
    np.testing.assert_array_equal(a.assignment, b.assignment)


def test_generalized_kmeans_duplicates():
    """Zero distances between duplicates: prototypes stay distinct, each assigned to itself."""
    X = np.repeat(np.random.default_rng(0).normal(size=(4, 2)), 3, axis=0)
    D = cdist(X, X)
    for method in ("gknn", "vsh", "ward"):
        res = cluster(D, 6, method)
        check_invariants(res, D, 6)


# --------------------------------------------------------------------------- Ward
def test_ward_matches_scipy_on_vectors():
    for seed in range(10):
        rng = np.random.default_rng(seed)
        X = rng.normal(size=(40, 3))
        D = cdist(X, X)
        for k in (2, 3, 5, 8):
            res = ward(D, k)
            check_invariants(res, D, k)
            ref = fcluster(linkage(X, method="ward"), k, criterion="maxclust")
            assert same_partition(res.assignment, ref)
            for j, p in enumerate(res.prototypes):  # prototype = cluster medoid
                members = np.flatnonzero(res.assignment == j)
                assert p == members[np.argmin(D[np.ix_(members, members)].sum(axis=0))]


def test_ward_exactly_k_clusters_with_tied_heights():
    X = np.repeat(np.array([[0.0, 0.0], [10.0, 0.0], [0.0, 10.0]]), 2, axis=0)
    D = cdist(X, X)
    ref = fcluster(linkage(X, method="ward"), 4, criterion="maxclust")
    assert len(set(ref)) < 4  # scipy returns fewer clusters here
    res = ward(D, 4)
    check_invariants(res, D, 4)


def test_ward_symmetrizes():
    R = asym_matrix(np.random.default_rng(0), 20)
    a, b = ward(R, 3), ward((R + R.T) / 2, 3)
    assert same_partition(a.assignment, b.assignment)


# --------------------------------------------------------------------------- edge cases / errors
@pytest.mark.parametrize("method", ["vsh", "gknn", "ward"])
def test_k_equals_n(method):
    D = sym_matrix(np.random.default_rng(0), 7)
    res = cluster(D, 7, method)
    np.testing.assert_array_equal(res.prototypes, np.arange(7))
    np.testing.assert_array_equal(res.assignment, np.arange(7))
    assert res.total_distance == 0.0


@pytest.mark.parametrize("method", ["vsh", "gknn", "ward"])
def test_invariants_all_methods(method):
    rng = np.random.default_rng(11)
    D = sym_matrix(rng, 30)
    for k in (1, 2, 4, 29):
        res = cluster(D, k, method, seed=3)
        check_invariants(res, D, k)
        with pytest.raises(ValueError):
            res.assignment[0] = 1  # read-only


@pytest.mark.parametrize("k", [0, -1, 6, 2.5, True, "2"])
def test_k_out_of_range(k):
    D = sym_matrix(np.random.default_rng(0), 5)
    for method in ("vsh", "gknn", "ward"):
        with pytest.raises(ValueError):
            cluster(D, k, method)


def test_bad_inputs():
    D = sym_matrix(np.random.default_rng(0), 5)
    with pytest.raises(ValueError, match="unknown method"):
        cluster(D, 2, "kmeans")
    with pytest.raises(ValueError, match="weights"):
        cluster(D, 2, "ward", weights=np.ones(5))
    with pytest.raises(ValueError, match="weights"):
        cluster(D, 2, "vsh", weights=np.ones(4))
    with pytest.raises(ValueError, match="weights"):
        cluster(D, 2, "gknn", weights=-np.ones(5))
    with pytest.raises(ValueError, match="n_init"):
        cluster(D, 2, "vsh", n_init=0)
    with pytest.raises(DataError):
        cluster(D[:4], 2)
    bad = D.copy()
    bad[0, 1] = np.nan
    with pytest.raises(DataError):
        cluster(bad, 2)
    with pytest.raises(DataError):
        cluster(np.zeros((0, 0)), 1)


def _naive_lance_williams_ward(D, k):
    """Brute-force agglomeration with Ward's Lance-Williams update applied to the entries of D."""
    n = len(D)
    clusters = {i: [i] for i in range(n)}
    d = {(i, j): D[i, j] for i in range(n) for j in range(i + 1, n)}
    nxt = n
    while len(clusters) > k:
        (a, b), _ = min(d.items(), key=lambda kv: kv[1])
        na, nb = len(clusters[a]), len(clusters[b])
        new = {}
        for c in clusters:
            if c in (a, b):
                continue
            nc = len(clusters[c])
            dac, dbc = d[tuple(sorted((a, c)))], d[tuple(sorted((b, c)))]
            new[c] = ((na + nc) * dac + (nb + nc) * dbc - nc * d[(a, b)]) / (na + nb + nc)
        clusters[nxt] = clusters.pop(a) + clusters.pop(b)
        d = {key: v for key, v in d.items() if a not in key and b not in key}
        for c, v in new.items():
            d[(c, nxt)] = v
        nxt += 1
    return sorted(sorted(members) for members in clusters.values())


@pytest.mark.parametrize("seed", range(4))
def test_ward_variants_equal_brute_force_lance_williams(seed):
    """ward (update on D^2, R's ward.D2) and ward_d (update on D, R's ward.D) on a non-Euclidean D."""
    rng = np.random.default_rng(seed)
    n = 10
    A = rng.uniform(0.1, 1.0, (n, n))
    D = (A + A.T) / 2
    np.fill_diagonal(D, 0.0)
    for k in (2, 3, 5):
        for method, expected in (("ward_d", _naive_lance_williams_ward(D, k)),
                                 ("ward", _naive_lance_williams_ward(D**2, k))):
            res = cluster(D, k, method)
            got = sorted(sorted(np.flatnonzero(res.assignment == j).tolist()) for j in range(k))
            assert got == expected, (method, k)


@pytest.mark.parametrize("n,k", [(12, 2), (40, 3), (150, 7)])
def test_vsh_restarts_are_kmedoids_fasterpam_exactly(n, k):
    """The direct call (vsh._fasterpam) gives kmedoids.fasterpam's medoids restart by restart, and leaves the
    random stream where fasterpam leaves it: on symmetric and on weighted (asymmetric) matrices."""
    import kmedoids

    from hlm.local_mapping._clustering.vsh import _MAX_SWEEPS, _fasterpam

    rng = np.random.default_rng(n)
    X = rng.normal(size=(n, 3))
    D = np.sqrt(((X[:, None] - X[None]) ** 2).sum(-1))
    for R in (D, rng.uniform(0.5, 2.0, n)[:, None] * D):
        R = np.asfortranarray(R)
        ours, theirs = (np.random.RandomState(np.random.MT19937(7)) for _ in range(2))
        for _ in range(25):
            expected = kmedoids.fasterpam(R, k, max_iter=_MAX_SWEEPS, init="random", random_state=theirs, n_cpu=1)
            np.testing.assert_array_equal(_fasterpam(R, k, ours), expected.medoids)
        assert ours.randint(0, 2**31 - 1) == theirs.randint(0, 2**31 - 1)
