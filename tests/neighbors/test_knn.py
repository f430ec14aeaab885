"""k-NN on precomputed distances: known answers, and its compiled paths against its definition."""

from pathlib import Path

import numpy as np
import pytest
from scipy.spatial.distance import cdist
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.neighbors import KNeighborsClassifier

from hlm.base._grid import predict_each
from hlm.local_mapping._kernel_hlm import KernelHLM
from hlm.neighbors._knn import KNNClassifier, break_vote_ties
from hlm.pipeline.evaluation.cv import cv_errors, make_folds, select_params
from oracles.tie_rules import nearest, tie_winner


def _blobs(rng, n_per=30, p=3, sep=2.0):
    X = np.vstack([rng.normal(0, 1, (n_per, p)), rng.normal(sep, 1, (n_per, p))])
    y = np.repeat(np.array(["a", "b"]), n_per)
    return X, y


# ---------------------------------------------------------------- k-NN
def test_knn_equals_sklearn_without_ties():
    rng = np.random.default_rng(0)
    X, y = _blobs(rng)
    Xt = rng.normal(1, 1.5, (40, 3))
    D, Dt = cdist(X, X), cdist(Xt, X)
    for k in (1, 3, 7):
        ours = KNNClassifier(n_neighbors=k).fit(D, y).predict(Dt)
        ref = KNeighborsClassifier(n_neighbors=k, metric="precomputed").fit(D, y).predict(Dt)
        np.testing.assert_array_equal(ours, ref)


def test_knn_vote_tie_goes_to_larger_prior():
    # training: class 'x' has 3 objects, 'y' has 2 -> prior(x) > prior(y)
    y = np.array(["y", "y", "x", "x", "x"])
    D = np.ones((5, 5)) - np.eye(5)
    # test object: nearest is a 'y' (0.1), then an 'x' (0.2): k=2 vote is 1-1
    Dt = np.array([[0.1, 0.9, 0.2, 0.9, 0.9]])
    assert KNNClassifier(n_neighbors=2).fit(D, y).predict(Dt)[0] == "x"
    assert KNNClassifier(n_neighbors=1).fit(D, y).predict(Dt)[0] == "y"


def test_knn_equal_prior_tie_goes_to_highest_ranked_neighbour():
    y = np.array(["p", "q", "p", "q"])
    D = np.ones((4, 4)) - np.eye(4)
    Dt = np.array([[0.5, 0.1, 0.9, 0.9], [0.1, 0.5, 0.9, 0.9]])
    np.testing.assert_array_equal(KNNClassifier(n_neighbors=2).fit(D, y).predict(Dt), ["q", "p"])


def test_knn_distance_ties_ranked_by_index_and_k_capped():
    y = np.array(["a", "b", "b"])
    D = np.zeros((3, 3))
    Dt = np.array([[0.3, 0.3, 0.3]])  # all equidistant: k=1 takes index 0
    assert KNNClassifier(n_neighbors=1).fit(D, y).predict(Dt)[0] == "a"
    assert KNNClassifier(n_neighbors=50).fit(D, y).predict(Dt)[0] == "b"


def test_pairwise_tag_lets_sklearn_cv_slice_square_matrices():
    rng = np.random.default_rng(1)
    X, y = _blobs(rng, sep=3.0)
    D = cdist(X, X)
    cv = StratifiedKFold(5, shuffle=True, random_state=0)
    ours = cross_val_score(KNNClassifier(n_neighbors=3), D, y, cv=cv)
    ref = cross_val_score(KNeighborsClassifier(n_neighbors=3, metric="precomputed"), D, y, cv=cv)
    np.testing.assert_allclose(ours, ref)
    assert cross_val_score(KernelHLM(), D, y, cv=cv).mean() > 0.9


# ---------------------------------------------------------------- k-NN: compiled paths = the definition
class ReferenceKNN(KNNClassifier):
    """k-NN by its definition, from the spec (section 5): each row's neighbours by (d_i, i), the vote, the
    prior tie rule, in plain loops that share no code with production; the CV refits per grid point and
    fold."""

    def predict_folds(self, D, y, folds, grid):
        return None  # declined: the per-fold path

    def predict_grid(self, D_fit, y, D_val, grid):
        return predict_each(self, D_fit, y, D_val, grid)

    def predict(self, D):
        D = self._check_predict_input(D)
        out = []
        for d in D:  # the spec's rules written from scratch (tests/oracles/tie_rules.py), one row at a time
            nb_labels = [int(self._y_idx[j]) for j in nearest(d, self.n_neighbors)]
            votes = [float(nb_labels.count(g)) for g in range(len(self.classes_))]
            out.append(tie_winner(votes, list(self.class_prior_), nb_labels))
        return self.classes_[np.array(out, dtype=int)]


class PerFoldKNN(KNNClassifier):
    """The compiled per-fold path only (``predict_grid`` on sliced fold matrices)."""

    def predict_folds(self, D, y, folds, grid):
        return None  # declined: the per-fold path


def _tied_problem(rng, n, n_values, singleton=False):
    """Integer distances (many ties), not symmetric, uneven classes, one class of 2 members (fewer
    than the folds: 2 stratified folds) or of 1 (KFold: a fit set without that class)."""
    D = rng.integers(0, n_values, (n, n)).astype(float)
    np.fill_diagonal(D, 0.0)
    y = rng.choice(np.array(["a", "b", "c"]), n, p=[0.6, 0.3, 0.1])
    y[rng.choice(n, 1 if singleton else 2, replace=False)] = "z"
    return D, y


@pytest.mark.parametrize("seed", range(6))
def test_knn_cv_fast_path_equals_refits_with_tied_distances(seed):
    """cv_errors through predict_folds == per-fold predict_grid == one stable-argsort refit per point."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(30, 160))
    D, y = _tied_problem(rng, n, n_values=int(rng.integers(2, 12)), singleton=seed % 3 == 0)
    grid = [{"n_neighbors": k} for k in (1, 2, 3, 4, 5, 8, 16, 32, 64, 128, 500)]
    for n_folds, fold_seed in ((10, seed), (3, seed + 1)):
        folds = make_folds(y, n_folds, fold_seed)
        if seed % 2:  # stratified folds, every class large enough
            keep = y != "z"
            D, y = D[np.ix_(keep, keep)], y[keep]
            folds = make_folds(y, n_folds, fold_seed)
        assert KNNClassifier().predict_folds(D, y, folds, grid) is not None  # the fast path ran
        fast = cv_errors(KNNClassifier(), D, y, grid, folds)
        np.testing.assert_array_equal(fast, cv_errors(PerFoldKNN(), D, y, grid, folds))
        np.testing.assert_array_equal(fast, cv_errors(ReferenceKNN(), D, y, grid, folds))
        np.testing.assert_array_equal(fast, cv_errors(KNNClassifier(), D, y, grid, folds, n_jobs=2))
        (best, searched, means), (best_ref, searched_ref, means_ref) = (
            select_params(e, D, y, grid, folds) for e in (KNNClassifier(), ReferenceKNN()))
        assert best == best_ref and searched == searched_ref
        np.testing.assert_array_equal(means, means_ref)


@pytest.mark.parametrize("n_values", [1, 2, 5, 1000])
def test_knn_predict_equals_stable_argsort_reference(n_values):
    """predict (and predict_proba) == the stable-argsort definition, for k below, at and above n_fit."""
    rng = np.random.default_rng(n_values)
    D, y = _tied_problem(rng, 120, n_values)
    Dt = rng.integers(0, n_values, (70, 120)).astype(float) + (rng.random((70, 120)) if n_values == 1000 else 0)
    classes, y_idx = np.unique(y, return_inverse=True)
    for k in (1, 2, 3, 7, 16, 29, 31, 64, 119, 120, 300, 10**12, 2**70):  # k above n_fit: capped
        ours, ref = KNNClassifier(k).fit(D, y), ReferenceKNN(k).fit(D, y)
        np.testing.assert_array_equal(ours.predict(Dt), ref.predict(Dt))
        nb = np.argsort(Dt, axis=1, kind="stable")[:, : min(k, 120)]
        np.testing.assert_array_equal(ours._neighbours(Dt), nb)
        votes = (y_idx[nb][:, :, None] == np.arange(len(classes))).sum(axis=1)  # the votes by hand
        expected = (votes + 1) / (nb.shape[1] + len(classes))  # Laplace-corrected vote shares
        np.testing.assert_allclose(ours.predict_proba(Dt), expected, rtol=1e-14)


@pytest.mark.parametrize("bad", [np.nan, -1.0, np.inf, -0.0])
def test_knn_cv_fast_path_on_bad_entries_equals_the_per_fold_checks(bad):
    """A NaN/inf/negative entry: every fold that sees it scores inf, as the per-fold input checks give;
    -0.0 is a valid distance."""
    rng = np.random.default_rng(3)
    D, y = _tied_problem(rng, 60, 6)
    D[7, 30] = bad
    grid = [{"n_neighbors": k} for k in (1, 4, 16)]
    folds = make_folds(y, 5, 0)
    np.testing.assert_array_equal(cv_errors(KNNClassifier(), D, y, grid, folds),
                                  cv_errors(ReferenceKNN(), D, y, grid, folds))


def test_knn_cv_with_unsorted_or_partial_folds_equals_refits():
    rng = np.random.default_rng(5)
    D, y = _tied_problem(rng, 50, 4)
    grid = [{"n_neighbors": k} for k in (1, 2, 8)]
    folds = [(rng.permutation(np.arange(10, 50)), np.arange(10)),  # fit set not increasing
             (np.arange(0, 40, 2), np.arange(41, 50))]  # rows in no validation part
    assert KNNClassifier().predict_folds(D, y, folds[:1], grid) is None
    np.testing.assert_array_equal(cv_errors(KNNClassifier(), D, y, grid, folds),
                                  cv_errors(ReferenceKNN(), D, y, grid, folds))
    D[1, 3] = np.nan  # in a row no fold validates: the fast path must still see it
    np.testing.assert_array_equal(cv_errors(KNNClassifier(), D, y, grid, folds[1:]),
                                  cv_errors(ReferenceKNN(), D, y, grid, folds[1:]))


def test_knn_evaluation_on_voting_equals_the_reference(monkeypatch):
    """A real data set (House Votes, from the pipeline's results/): the evaluation rows and predictions of
    the compiled k-NN equal those of the stable-argsort definition."""
    import pandas as pd

    import hlm.neighbors._knn as knn_module
    from hlm.datasets._artifacts import read_distances
    from hlm.pipeline.evaluation.evaluate import evaluate_method

    root = Path(__file__).resolve().parents[2] / "results"
    if not (root / "distances" / "voting.parquet").exists():
        pytest.skip("needs results/distances/voting.parquet (make run)")
    art = read_distances(root / "distances" / "voting.parquet")
    splits = pd.read_parquet(root / "splits" / "voting.parquet")
    kw = dict(dataset="voting", seed=1, n_folds=10, grid_config={"n_neighbors": [1, 2, 4, 8, 16, 32, 64, 128]},
              split_ids=[0, 1, 2])
    ours = evaluate_method(art, splits, "knn", **kw)
    monkeypatch.setattr(knn_module, "KNNClassifier", ReferenceKNN)
    ref = evaluate_method(art, splits, "knn", **kw)
    same = ["split", "error_rate", "n_train", "n_test", "cv_folds", "params", "cv_error", "cv_reused", "warnings"]
    pd.testing.assert_frame_equal(ours.evaluation[same], ref.evaluation[same])
    pd.testing.assert_frame_equal(ours.predictions, ref.predictions)


def test_knn_grid_paths_cap_a_huge_k():
    """k far above the fit set (10**12, 2**70) is k = n_fit on the grid and CV paths (no huge buffers)."""
    from hlm.pipeline.evaluation.cv import make_folds

    rng = np.random.default_rng(5)
    D, y = _tied_problem(rng, 60, 4)
    grid = [{"n_neighbors": k} for k in (3, 10**12, 2**70)]
    path = KNNClassifier().predict_grid(D[:40, :40], y[:40], D[40:, :40], grid)
    np.testing.assert_array_equal(path[1], KNNClassifier(40).fit(D[:40, :40], y[:40]).predict(D[40:, :40]))
    np.testing.assert_array_equal(path[2], path[1])
    folds = make_folds(y, 3, 11)
    per_fold = KNNClassifier().predict_folds(D, y, folds, grid)
    for (fit, val), pred in zip(folds, per_fold):
        ref = KNNClassifier(len(fit)).fit(D[np.ix_(fit, fit)], y[fit]).predict(D[np.ix_(val, fit)])
        np.testing.assert_array_equal(pred[1], ref)
        np.testing.assert_array_equal(pred[2], ref)


def test_knn_subclass_voting_differently_takes_the_per_fold_path():
    class Farthest(KNNClassifier):
        def _neighbours(self, D):
            return np.argsort(-D, axis=1, kind="stable")[:, : min(int(self.n_neighbors), D.shape[1])]

    rng = np.random.default_rng(2)
    D, y = _tied_problem(rng, 30, 1000)
    assert Farthest().predict_folds(D, y, [(np.arange(20), np.arange(20, 30))], [{"n_neighbors": 3}]) is None




def test_vote_tie_rule_is_the_specs():
    """``break_vote_ties`` (shared by the k-NN family and local SDA's decisions) equals the spec's rule written
    from scratch (section 5: most votes, rtol 1e-12; then the larger prior; then the best-ranked neighbour's
    class) on 2,000 random vote tables full of ties, with -inf entries as local SDA's absent classes."""
    rng = np.random.default_rng(7)
    for _ in range(2000):
        n_classes = int(rng.integers(2, 5))
        votes = rng.integers(0, 4, n_classes).astype(float)
        votes[rng.random(n_classes) < 0.2] = -np.inf
        votes += rng.choice([0.0, 1e-14, 1e-9], n_classes) * np.isfinite(votes)  # within rtol, and not
        prior = rng.choice([0.2, 0.3, 0.5], n_classes)
        ranked = np.concatenate([rng.integers(0, n_classes, 5), rng.permutation(n_classes)])
        assert break_vote_ties(votes[None], prior, ranked[None])[0] == tie_winner(list(votes), list(prior),
                                                                                list(ranked))
