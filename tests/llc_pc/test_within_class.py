"""LLC-PC's within-class rivals of section 6.1 (docs/llc-pc-spec.md section 5): hierarchical clustering
against a brute-force agglomeration, EM against the mixture the data were drawn from."""

import itertools

import numpy as np
import pytest
from sklearn.cluster import AgglomerativeClustering
from sklearn.metrics import adjusted_rand_score

from hlm.llc_pc._llc_pc import LLCPairwiseCoupling


def brute_force_average_link(X: np.ndarray) -> dict[int, list[frozenset]]:
    """Every partition of the agglomeration by average link (UPGMA): at each step, merge the two clusters of
    least mean pairwise Euclidean distance. {number of clusters: the clusters}."""
    D = np.sqrt(((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    clusters = [frozenset([i]) for i in range(len(X))]
    partitions = {len(clusters): list(clusters)}
    while len(clusters) > 1:
        a, b = min(itertools.combinations(range(len(clusters)), 2),
                   key=lambda p: D[np.ix_(sorted(clusters[p[0]]), sorted(clusters[p[1]]))].mean())
        merged = clusters[a] | clusters[b]
        clusters = [c for i, c in enumerate(clusters) if i not in (a, b)] + [merged]
        partitions[len(clusters)] = list(clusters)
    return partitions


def groups(labels: np.ndarray) -> set[frozenset]:
    return {frozenset(np.flatnonzero(labels == c).tolist()) for c in np.unique(labels)}


def two_classes(seed=0, n=(18, 14)):
    rng = np.random.default_rng(seed)
    X = np.vstack([rng.normal(size=(n[0], 3)) * [1.0, 2.0, 0.5], rng.normal(size=(n[1], 3)) + 2.5])
    return X, np.repeat([0, 1], n)


def test_hc_subclasses_are_the_average_link_agglomeration_at_every_count():
    X, y = two_classes(seed=1)
    Xs = (X - X.mean(0)) / X.std(0)  # LLC-PC clusters the standardised rows
    oracle = {c: brute_force_average_link(Xs[y == c]) for c in (0, 1)}
    for m0, m1 in [(1, 1), (2, 1), (3, 5), (7, 2), (18, 14)]:
        model = LLCPairwiseCoupling(subclassing="hc", subclasses_per_class=[m0, m1]).fit(X, y)
        for c, m in ((0, m0), (1, m1)):
            assert groups(model.subclass_of_[y == c]) == set(oracle[c][m])  # positions within the class
        np.testing.assert_array_equal(model.subclasses_per_class_, [m0, m1])


def test_hc_by_hand_and_ward_by_scikit_learn():
    # one class on a line: 0, 1 | 10, 11 | 30; average link joins (0, 1) and (10, 11), then those two
    X = np.array([[0.0], [1.0], [10.0], [11.0], [30.0], [100.0], [101.0]])
    y = np.array([0, 0, 0, 0, 0, 1, 1])
    for m, want in [(2, [0, 0, 0, 0, 1]), (3, [0, 0, 1, 1, 2])]:
        model = LLCPairwiseCoupling(subclassing="hc", subclasses_per_class=[m, 1]).fit(X, y)
        assert adjusted_rand_score(model.subclass_of_[:5], want) == 1.0
    Xw, yw = two_classes(seed=4)
    for m in (2, 3, 6):
        model = LLCPairwiseCoupling(subclassing="hc", linkage="ward", subclasses_per_class=[m, 1]).fit(Xw, yw)
        Xs = (Xw - Xw.mean(0)) / Xw.std(0)
        peer = AgglomerativeClustering(n_clusters=m, linkage="ward").fit_predict(Xs[yw == 0])
        assert adjusted_rand_score(model.subclass_of_[yw == 0], peer) == 1.0


def test_em_subclasses_recover_the_components_drawn():
    # class 0: three Gaussian components of different shapes, far apart; class 1: one
    rng = np.random.default_rng(7)
    means = np.array([[0.0, 0.0], [12.0, 0.0], [0.0, 12.0]])
    shapes = [np.diag([1.0, 0.2]), np.array([[1.0, 0.8], [0.8, 1.0]]), np.diag([0.3, 1.5])]
    truth = np.repeat([0, 1, 2], 40)
    A = np.vstack([rng.multivariate_normal(means[k], shapes[k], 40) for k in range(3)])
    B = rng.normal(size=(50, 2)) + [12.0, 12.0]
    X, y = np.vstack([A, B]), np.repeat([0, 1], [120, 50])
    model = LLCPairwiseCoupling(subclassing="em", subclasses_per_class=[3, 1], random_state=2).fit(X, y)
    assert adjusted_rand_score(model.subclass_of_[:120], truth) == 1.0
    assert (model.predict(X) == y).all()
    # K = 6 in total, equal allocation: three per class, the same three components found again
    equal = LLCPairwiseCoupling(n_subclasses=6, subclassing="em", random_state=2).fit(X, y)
    np.testing.assert_array_equal(equal.subclasses_per_class_, [3, 3])
    assert adjusted_rand_score(equal.subclass_of_[:120], truth) == 1.0


def test_em_separates_a_tight_component_from_a_wide_one_where_k_means_cannot():
    # class 0: 60 objects in a tight blob inside the edge of a wide one of 120; k-means cuts the wide blob in two,
    # EM (started from that cut) moves to the two components drawn
    rng = np.random.default_rng(1)
    A = rng.normal(size=(60, 2)) * 0.15 + [2.0, 0.0]
    B = rng.normal(size=(120, 2)) * 2.0
    truth = np.repeat([0, 1], [60, 120])
    X = np.vstack([A, B, rng.normal(size=(30, 2)) + [12.0, 12.0]])
    y = np.repeat([0, 1], [180, 30])
    em = LLCPairwiseCoupling(subclassing="em", subclasses_per_class=[2, 1]).fit(X, y)
    km = LLCPairwiseCoupling(subclassing="kmeans", subclasses_per_class=[2, 1]).fit(X, y)
    assert adjusted_rand_score(em.subclass_of_[:180], truth) > 0.8
    assert adjusted_rand_score(km.subclass_of_[:180], truth) < 0.3


def test_hc_draws_nothing():
    X, y = two_classes(seed=3)
    one = LLCPairwiseCoupling(subclassing="hc", n_subclasses=7, random_state=1).fit(X, y)
    two = LLCPairwiseCoupling(subclassing="hc", n_subclasses=7, random_state=2).fit(X, y)
    np.testing.assert_array_equal(one.subclass_of_, two.subclass_of_)


def test_em_along_the_path_equals_fixed_counts():
    # the K = 6 path's class clusterings are those of explicit counts (3, 3): a clustering depends on (class, m_i)
    X, y = two_classes(seed=5)
    path = LLCPairwiseCoupling(subclassing="em", n_subclasses=6, random_state=4).fit(X, y)
    fixed = LLCPairwiseCoupling(subclassing="em", subclasses_per_class=[3, 3], random_state=4).fit(X, y)
    np.testing.assert_array_equal(path.subclass_of_, fixed.subclass_of_)


@pytest.mark.parametrize("subclassing", ["hc", "em"])
def test_a_class_clustering_depends_on_its_count_only(subclassing):
    X, y = two_classes(seed=3)
    one = LLCPairwiseCoupling(subclassing=subclassing, subclasses_per_class=[3, 1], random_state=5).fit(X, y)
    two = LLCPairwiseCoupling(subclassing=subclassing, subclasses_per_class=[3, 4], random_state=5).fit(X, y)
    np.testing.assert_array_equal(one.subclass_of_[y == 0], two.subclass_of_[y == 0])


def test_subclasses_per_class_refused_for_greedy_mpe():
    X, y = two_classes()
    with pytest.raises(ValueError, match="'kmeans', 'hc' or 'em'"):
        LLCPairwiseCoupling(subclassing="greedy_mpe", subclasses_per_class=[2, 1]).fit(X, y)


def test_em_starts_from_near_singular_clusters():
    # Ringnorm, 20 clusters per class of 200 objects in 20 dimensions: clusters of a few objects, whose
    # covariances are nearly the floor, and whose inverses must still pass scikit-learn's symmetry check
    from hlm.datasets._generated import ringnorm_delve

    X, y = ringnorm_delve(400, 20, 3)
    model = LLCPairwiseCoupling(n_subclasses=40, subclassing="em").fit(X, y)  # a fit, no refusal: a smoke test
    assert model.subclasses_per_class_.sum() <= 40 and model.score(X, y) > 0.9


@pytest.mark.parametrize("method", ["average", "ward", "single", "complete"])
@pytest.mark.parametrize("ties", [False, True])
def test_hc_cut_is_scipys_cut_tree_at_every_count(method, ties):
    # the O(n) cut against scipy's cut_tree on the same linkage; integer data on a 3 x 3 grid give duplicate rows
    # and equal merge heights, where the order of the merges decides the partition
    from scipy.cluster.hierarchy import cut_tree, linkage

    from hlm.llc_pc._subclasses import cut, merge_order

    rng = np.random.default_rng(11)
    for n in (2, 5, 23, 57):
        X = rng.integers(0, 3, size=(n, 2)).astype(float) if ties else rng.normal(size=(n, 3))
        Z = linkage(X, method=method)
        order = merge_order(Z)
        for m in range(1, n + 1):
            assert groups(cut(Z, order, m)) == groups(cut_tree(Z, n_clusters=m)[:, 0])
