"""The batch KDE's bandwidth CV (``hlm.kde._kde_cv``): the direct computation of eq. (1) against
scikit-learn's ``GridSearchCV(KernelDensity())``, the criterion it replaced (docs/online-kde-spec.md section 8).

Tolerance of the score comparisons: both sides compute each held-out log density as a log-sum-exp over the
fold's fit points, in float64 (ours: shifted by the largest exponent; scikit-learn's tree: a running
``logaddexp``), then add the kernel's normalisation and sum over the held-out points and average over the folds.
Each step rounds to a few ulps of the magnitudes involved, which are at most the size of the scores, so
the two agree to about (n_fit + n_held_out) * 1e-16 relative to the largest |score| (measured: < 4e-16).
``RTOL = 1e-10`` of the largest |score| leaves a margin of 1000 or more, while a real difference of the
criterion (a fold, a normalisation, a bandwidth off) changes the scores by far more than that.

scikit-learn's default tree (``rtol=0``) is an exact sum only while the fit part is one leaf (<= 80 points at
``leaf_size=40``); beyond, its search can end early or keep a wrong node bound at small h (a defect of scikit-learn
1.9's tree, shown below), by up to several percent of the score. Hence: against the default ``KernelDensity()`` on
classes of <= 100 objects (5 folds: fit parts <= 80), and on larger ones against ``KernelDensity(leaf_size=n)``,
scikit-learn's same tree made one leaf, i.e. its exact sum.

The classifier's final densities (``decision_function``, ``predict_proba``, ``predict``) on classes of 90 to 300
objects at h = 0.02 to 0.1, where the default tree is wrong, against an oracle written here: per class
log(n_c / n) + ``KernelDensity(bandwidth=h_c, leaf_size=n_c).score_samples`` on features standardised here (and,
for ``kde_log_densities`` itself, a direct numpy loop). Tolerance, per score s: ``RTOL * max(1, |s|)``. Each
exponent -||x - x_j||^2 / (2 h^2) is rounded to ~(d + 3) ulps of itself on both sides (ours: cdist's sum of d
squares; scikit-learn: a square root, then its square), and the log-sum-exp over the n_c centres adds at most
~n_c ulps of max(1, |s|) (scikit-learn's running ``logaddexp``; ours a shifted sum of terms <= 1), so the two
agree to ~(n_c + d + 3) * 2.2e-16 * max(1, |s|) < 1e-13 * max(1, |s|) here (measured: < 2e-15); RTOL = 1e-10
leaves a margin of 1000. A posterior moves by at most about twice the largest change of its row's scores
(softmax), hence ``2 * RTOL * max(1, max |s|)`` per row for ``predict_proba``. The old final model (the default
tree's ``score_samples``) is off there by 0.4 to 7 times max(1, |s|) (measured), far beyond the tolerance, and
changes 2 to 13 of 240-360 classes:
``test_the_default_tree_fails_the_oracle_check`` runs the same check on it and sees it fail.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy.special import logsumexp
from sklearn.base import BaseEstimator
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.neighbors import KernelDensity

from hlm.kde import _kde_cv
from hlm.kde._kde_cv import BANDWIDTHS, BLOCK_BYTES, KDEClassifier, held_out_log_likelihoods, kde_log_densities

RTOL = 1e-10  # relative to the largest |score| (final densities: to max(1, |score|)); see the module docstring
GRID = BANDWIDTHS[::-1]  # the classifier's grid order: larger h first


def _folds(n: int, k: int = 5) -> list:
    return list(KFold(min(k, n), shuffle=True, random_state=0).split(np.zeros((n, 1))))


def _grid_search(X: np.ndarray, kde: KernelDensity, folds: list) -> GridSearchCV:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return GridSearchCV(kde, {"bandwidth": GRID}, cv=folds, n_jobs=1, error_score="raise").fit(X)


def _duplicates_and_outlier(rng) -> np.ndarray:
    """30 distinct points, each three times, and one point so far that every kernel at it underflows
    (||x - x_j||^2 / (2 h^2) > 745 at every h of the grid): its log density must stay finite."""
    X = np.repeat(rng.normal(size=(30, 4)), 3, axis=0)
    X[-1] = [1e3, 0.0, 0.0, 0.0]
    return X


def _data_sets():
    rng = np.random.default_rng(42)
    small = {f"gaussian {n}x{d}": rng.normal(size=(n, d)) for n, d in [(7, 1), (23, 2), (64, 5), (100, 3),
                                                                        (97, 60)]}
    small["duplicates + far outlier"] = _duplicates_and_outlier(rng)
    small["anisotropic"] = rng.normal(size=(80, 3)) * [1e-3, 1.0, 30.0] + 5.0
    large = {f"gaussian {n}x{d}": rng.normal(size=(n, d)) for n, d in [(300, 60), (700, 3), (250, 18)]}
    X = np.repeat(rng.normal(size=(100, 3)), 3, axis=0)
    X[0] = [500.0, -500.0, 0.0]
    large["duplicates + far outlier, 300"] = X
    return small, large


SMALL, LARGE = _data_sets()


def _check_against(X: np.ndarray, kde: KernelDensity):
    folds = _folds(len(X))
    ours = held_out_log_likelihoods(X, GRID, folds)
    search = _grid_search(X, kde, folds)
    ref_folds = np.column_stack([search.cv_results_[f"split{i}_test_score"] for i in range(len(folds))])
    ref = search.cv_results_["mean_test_score"]
    scale = np.abs(ref).max()
    np.testing.assert_allclose(ours, ref_folds, rtol=0, atol=RTOL * scale)
    np.testing.assert_allclose(ours.mean(axis=1), ref, rtol=0, atol=RTOL * scale)
    assert np.isfinite(ours).all()
    # the choice: GridSearchCV's best (rank 1, first in grid order) is ours (first maximum in grid order)
    assert GRID[np.argmax(ours.mean(axis=1))] == search.best_params_["bandwidth"]


@pytest.mark.parametrize("name", list(SMALL))
def test_scores_and_choice_are_grid_search_cv_kernel_density(name):
    """Small classes (fit parts <= 80 points): against the default ``GridSearchCV(KernelDensity())`` itself."""
    _check_against(SMALL[name], KernelDensity())


@pytest.mark.parametrize("name", list(LARGE))
def test_scores_and_choice_are_the_exact_tree_sum_on_larger_classes(name):
    """Larger classes: against scikit-learn's tree as one leaf (``leaf_size=n``), whose sum is exact."""
    X = LARGE[name]
    _check_against(X, KernelDensity(leaf_size=len(X)))


def test_far_outlier_is_finite_as_kernel_density_gives_it():
    """A held-out point whose every kernel underflows: KernelDensity's log-space sum gives a finite log density
    (no -inf), and so does ours, equal to it."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 2))
    far = np.array([[1e3, 0.0]])
    for h in (0.02, 3.0):
        assert np.exp(-((X - far) ** 2).sum(1) / (2 * h * h)).max() == 0.0  # a naive sum would give -inf
        ref = KernelDensity(bandwidth=h).fit(X).score_samples(far)[0]
        ours = held_out_log_likelihoods(np.vstack([X, far]), [h], [(np.arange(30), np.array([30]))])[0, 0]
        assert np.isfinite(ours)
        np.testing.assert_allclose(ours, ref, rtol=1e-14)


def test_row_blocks_bound_memory_and_do_not_change_the_result(monkeypatch):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(400, 3))
    folds = _folds(len(X))
    whole = held_out_log_likelihoods(X, GRID, folds)
    shapes = []
    cdist = _kde_cv.cdist
    monkeypatch.setattr(_kde_cv, "cdist", lambda A, B, metric: shapes.append((len(A), len(B))) or cdist(A, B, metric))
    budget = 200_000
    blocked = held_out_log_likelihoods(X, GRID, folds, block_bytes=budget)
    np.testing.assert_array_equal(blocked, whole)  # each held-out row's computation does not see the others
    assert len(shapes) > len(folds)  # several blocks per fold
    assert all(8 * rows * n_fit * (len(GRID) + 2) <= budget for rows, n_fit in shapes)
    np.testing.assert_array_equal(held_out_log_likelihoods(X, GRID, folds, block_bytes=1), whole)  # a row a block
    assert BLOCK_BYTES <= 64 * 2**20


class _Scored(BaseEstimator):
    """An estimator whose held-out score is a given number per bandwidth, for GridSearchCV's tie rule."""

    def __init__(self, bandwidth=1.0, table=None):
        self.bandwidth = bandwidth
        self.table = table

    def fit(self, X, y=None):
        return self

    def score(self, X, y=None):
        return self.table[float(self.bandwidth)]


@pytest.mark.parametrize("case", ["two maxima", "all equal", "all -inf", "-inf and ties"])
def test_ties_go_to_the_larger_bandwidth_as_in_grid_search_cv(monkeypatch, case):
    """Exactly equal mean scores: GridSearchCV takes the first of rank 1 in grid order (``rankdata(method="min")``;
    -inf made the lowest float by ``nan_to_num``), the grid larger h first; ours, ``argmax``'s first maximum."""
    means = {"two maxima": np.where(np.isin(np.arange(26), [4, 9]), -1.0, -2.0), "all equal": np.full(26, -3.0),
             "all -inf": np.full(26, -np.inf),
             "-inf and ties": np.where(np.arange(26) < 3, -np.inf, np.where(np.arange(26) % 5 == 0, -1.0, -7.0))}[case]
    search = _grid_search(np.zeros((10, 1)), _Scored(table=dict(zip(map(float, GRID), means))), _folds(10))
    monkeypatch.setattr(_kde_cv, "held_out_log_likelihoods", lambda X, grid, folds: np.repeat(means[:, None], 5, 1))
    X = np.random.default_rng(2).normal(size=(20, 2))
    h = KDEClassifier().fit(X, np.repeat([0, 1], 10)).bandwidths_
    expected = GRID[np.flatnonzero(means == means.max())[0]]  # the largest h among the maxima
    assert search.best_params_["bandwidth"] == expected
    np.testing.assert_array_equal(h, [expected, expected])


# ------------------------------------------------------------------ the classifier against the old path
class _GridSearchKDE(KDEClassifier):
    """The previous implementation of the bandwidth choice, the oracle: each class's bandwidth by
    ``GridSearchCV(KernelDensity())`` (its code verbatim); everything else (the densities too) is the class's."""

    def _bandwidth(self, Xc: np.ndarray, c: int) -> float:
        if self.bandwidth != "cv" or Xc.shape[0] < 2:
            return super()._bandwidth(Xc, c)
        folds = KFold(min(int(self.cv_folds), Xc.shape[0]), shuffle=True, random_state=0)
        search = GridSearchCV(KernelDensity(), {"bandwidth": BANDWIDTHS[::-1]}, cv=folds)  # ties: larger h
        return float(search.fit(Xc).best_params_["bandwidth"])


def _classes(rng, sizes, d, units, shift=1.5):
    X = np.concatenate([rng.normal(shift * c, 1.0 + 0.3 * c, size=(n, d)) for c, n in enumerate(sizes)])
    y = np.repeat(np.array(["a", "b", "c", "d"])[:len(sizes)], sizes)
    order = rng.permutation(len(y))
    return X[order] * units[0] + units[1], y[order]  # units that the standardisation must undo


@pytest.mark.parametrize(("sizes", "d", "cv_folds"), [((40, 60, 25), 2, 5), ((90, 100), 6, 5), ((30, 45, 2, 60), 3, 5),
                                                      ((150, 120), 2, 5), ((50, 70), 4, 2)])
def test_predictions_are_the_grid_search_implementation(sizes, d, cv_folds):
    rng = np.random.default_rng(sum(sizes) + d)
    units = rng.uniform(0.1, 10.0, d), rng.normal(0, 5, d)
    X, y = _classes(rng, sizes, d, units)
    Z, _ = _classes(rng, [50] * len(sizes), d, units)  # held out
    ours = KDEClassifier(cv_folds=cv_folds).fit(X, y)
    old = _GridSearchKDE(cv_folds=cv_folds).fit(X, y)
    np.testing.assert_array_equal(ours.bandwidths_, old.bandwidths_)
    np.testing.assert_array_equal(ours.predict(Z), old.predict(Z))
    np.testing.assert_array_equal(ours.predict_proba(Z), old.predict_proba(Z))
    np.testing.assert_array_equal(ours.decision_function(Z), old.decision_function(Z))


# ------------------------------------------------------------------ the final densities against an exact oracle
def _clumps(rng, n: int, d: int, shift: float, spread: float) -> np.ndarray:
    """n points around 25 centres (sd ``spread``): a class whose likelihood CV picks a small h."""
    centres = rng.normal(shift, 1.0, size=(25, d))
    return centres[rng.integers(25, size=n)] + rng.normal(0.0, spread, size=(n, d))


def _clumped_classes(sizes, d, spread, seed):
    """Training classes of the given sizes (features in different units) and 120 test points per class: 60
    around clumps of their own (elsewhere: far from the centres), 60 next to training points."""
    rng = np.random.default_rng(seed)
    units = rng.uniform(0.5, 5.0, d)
    X = np.vstack([_clumps(rng, n, d, c, spread) for c, n in enumerate(sizes)]) * units
    y = np.repeat(np.array(["p", "q", "r"])[:len(sizes)], sizes)
    Z = np.vstack([_clumps(rng, 60, d, 0.5 * c, spread) for c in range(len(sizes))]) * units
    near = X[rng.choice(len(X), 60 * len(sizes), replace=False)] + rng.normal(0.0, 0.01, (60 * len(sizes), d))
    return X, y, np.vstack([Z, near])


def _oracle_scores(X, y, Z, bandwidths) -> tuple[np.ndarray, np.ndarray]:
    """log(n_c / n) + scikit-learn's one-leaf KDE (an exact sum) of class c at h_c, features z-scored here."""
    mean, sd = X.mean(axis=0), X.std(axis=0)
    Xs, Zs = (X - mean) / sd, (Z - mean) / sd
    classes = np.unique(y)
    scores = [np.log(np.mean(y == c)) + KernelDensity(bandwidth=h, leaf_size=int(np.sum(y == c)))
              .fit(Xs[y == c]).score_samples(Zs) for c, h in zip(classes, bandwidths)]
    return classes, np.column_stack(scores)


class _TreeDensities(KDEClassifier):
    """The previous final model: each class's density by scikit-learn's default ``KernelDensity`` (its code)."""

    def decision_function(self, X):
        Xs = (np.asarray(X, dtype=float) - self.mean_) / self.scale_
        return np.column_stack([lp + KernelDensity(bandwidth=float(h)).fit(Xc).score_samples(Xs) for lp, Xc, h in
                                zip(self.class_log_prior_, self.points_, self.bandwidths_)])


def _check_final_model(clf, X, y, Z):
    classes, ref = _oracle_scores(X, y, Z, clf.bandwidths_)
    tol = RTOL * np.maximum(1.0, np.abs(ref))
    s = clf.decision_function(Z)
    assert np.all(np.abs(s - ref) <= tol), f"largest |s - oracle| / tol: {np.max(np.abs(s - ref) / tol):.3g}"
    P, P_ref = clf.predict_proba(Z), np.exp(ref - logsumexp(ref, axis=1, keepdims=True))
    assert np.all(np.abs(P - P_ref) <= 2 * tol.max(axis=1, keepdims=True))
    top2 = np.sort(ref, axis=1)[:, -2:]
    assert np.all(top2[:, 1] - top2[:, 0] > 2 * tol.max(axis=1))  # no near-tie: the oracle's classes are defined
    np.testing.assert_array_equal(clf.predict(Z), classes[np.argmax(ref, axis=1)])


#: (class sizes, d, sd of the clumps, bandwidth): every class > 80 objects (several leaves of the default tree)
FINAL_CASES = {"2-d, 120 + 150, cv": ((120, 150), 2, 0.02, "cv"), "2-d, 120 + 150, h 0.05": ((120, 150), 2, 0.02, 0.05),
               "3-d, 200 + 90 + 130, cv": ((200, 90, 130), 3, 0.03, "cv"),
               "3-d, 200 + 90 + 130, h 0.02": ((200, 90, 130), 3, 0.03, 0.02),
               "5-d, 300 + 100, cv": ((300, 100), 5, 0.05, "cv"), "5-d, 300 + 100, h 0.1": ((300, 100), 5, 0.05, 0.1)}


def _final_case(name):
    sizes, d, spread, bandwidth = FINAL_CASES[name]
    X, y, Z = _clumped_classes(sizes, d, spread, seed=sum(sizes) + d)
    return bandwidth, X, y, Z


@pytest.mark.parametrize("name", list(FINAL_CASES))
def test_final_densities_are_the_exact_sum(name):
    """Classes of 90-300 objects (several tree leaves) at small h: scores, posteriors and classes are the
    one-leaf ``KernelDensity``'s (module docstring: the tolerance)."""
    bandwidth, X, y, Z = _final_case(name)
    clf = KDEClassifier(bandwidth=bandwidth).fit(X, y)
    assert min(np.unique(y, return_counts=True)[1]) > 80 and clf.bandwidths_.min() <= 0.1
    _check_final_model(clf, X, y, Z)


@pytest.mark.parametrize("name", list(FINAL_CASES))
def test_the_default_tree_fails_the_oracle_check(name):
    """The same check on the previous final model (default ``KernelDensity().score_samples``) fails: its
    scores are off by more than 1e3 times the tolerance, so the test above would have failed on the old code."""
    bandwidth, X, y, Z = _final_case(name)
    old = _TreeDensities(bandwidth=bandwidth).fit(X, y)
    _, ref = _oracle_scores(X, y, Z, old.bandwidths_)
    assert np.max(np.abs(old.decision_function(Z) - ref) / np.maximum(1.0, np.abs(ref))) > 1e3 * RTOL
    with pytest.raises(AssertionError):
        _check_final_model(old, X, y, Z)


def test_the_default_tree_changes_classes_where_ours_are_the_oracles():
    """On the 3-class case at h = 0.02 the default tree's errors change predicted classes; ours do not."""
    bandwidth, X, y, Z = _final_case("3-d, 200 + 90 + 130, h 0.02")
    ours, old = KDEClassifier(bandwidth=bandwidth).fit(X, y), _TreeDensities(bandwidth=bandwidth).fit(X, y)
    classes, ref = _oracle_scores(X, y, Z, ours.bandwidths_)
    expected = classes[np.argmax(ref, axis=1)]
    np.testing.assert_array_equal(ours.predict(Z), expected)
    assert np.sum(old.predict(Z) != expected) >= 5


def test_kde_log_densities_are_a_direct_sum():
    """eq. (1) against a direct numpy loop over the query points (explicit differences, scipy's logsumexp), on
    300 centres at h = 0.03 and 1.0, and a point so far that every kernel underflows (finite, as its log-sum)."""
    rng = np.random.default_rng(11)
    X = rng.normal(size=(300, 3))
    Z = np.vstack([rng.normal(size=(40, 3)), X[:5] + 1e-3, [[60.0, 0.0, 0.0]]])
    h = np.array([0.03, 1.0])
    ours = kde_log_densities(Z, X, h)
    for k, hk in enumerate(h):
        ref = np.array([logsumexp(-0.5 * ((z - X) ** 2).sum(axis=1) / hk ** 2) for z in Z])
        ref += -np.log(len(X)) - 1.5 * np.log(2 * np.pi * hk ** 2)
        np.testing.assert_array_less(np.abs(ours[k] - ref), RTOL * np.maximum(1.0, np.abs(ref)))
    assert np.isfinite(ours).all()
    np.testing.assert_array_equal(kde_log_densities(Z, X, h, block_bytes=1), ours)  # blocks change nothing


def test_saved_and_loaded_model_predicts_as_before(tmp_path):
    """hlm.persistence's state of a fitted model (JSON + npz, no pickles) holds the points and bandwidths,
    no scikit-learn tree; loaded, it gives the same scores, posteriors and classes, to the bit."""
    import json

    from hlm.persistence import from_state, to_state

    _, X, y, Z = _final_case("3-d, 200 + 90 + 130, cv")
    clf = KDEClassifier().fit(X, y)
    tree, arrays = to_state(clf)
    (tmp_path / "model.json").write_text(json.dumps(tree))
    np.savez(tmp_path / "arrays.npz", **arrays)
    assert "KernelDensity" not in (tmp_path / "model.json").read_text()
    with np.load(tmp_path / "arrays.npz", allow_pickle=False) as npz:
        again = from_state(json.loads((tmp_path / "model.json").read_text()), dict(npz))
    assert sorted(k for k in arrays if k.startswith("points_")) == ["points_.0", "points_.1", "points_.2"]
    np.testing.assert_array_equal(again.bandwidths_, clf.bandwidths_)
    np.testing.assert_array_equal(again.decision_function(Z), clf.decision_function(Z))
    np.testing.assert_array_equal(again.predict_proba(Z), clf.predict_proba(Z))
    np.testing.assert_array_equal(again.predict(Z), clf.predict(Z))
