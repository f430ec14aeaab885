"""The similarity-to-distance transform and Kernel HLM's scale chosen by CV (docs/beyond-the-paper-spec.md
sections 1-2): closed forms, limits with known answers, the one-standard-error rule, and the evaluation."""

import json
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

from hlm.base._grid import predict_each
from hlm.datasets._artifacts import DistanceArtifact
from hlm.distances._transform import TRANSFORMS, DistanceTransform, _Facts, transform, valid_candidates
from hlm.errors import DataError
from hlm.local_mapping._kernel_hlm import KernelHLM
from hlm.local_mapping._kernel_hlm_folds import predict_transform_folds
from hlm.neighbors._knn import KNNClassifier
from hlm.pipeline.evaluation.cv import make_folds, one_se_choice, select_params
from hlm.pipeline.evaluation.evaluate import applicable_grid, evaluate_method
from hlm.pipeline.methods import METHODS, SCALE_FACTOR_GRID, TRANSFORM_GRID


def blobs(seed=0, n=25, spread=(1.0, 1.0), shift=1.5, dim=3):
    """Two Gaussian classes; Euclidean distances D and the similarity S = 1 - D / (2 max D)."""
    rng = np.random.default_rng(seed)
    X = np.r_[rng.normal(0, spread[0], (n, dim)), rng.normal(shift, spread[1], (n, dim))]
    y = np.repeat(np.array(["a", "b"]), n)
    D = np.sqrt(((X[:, None] - X[None]) ** 2).sum(-1))
    return D, 1.0 - D / (2 * D.max()), y


# ------------------------------------------------------------------ closed forms
def test_each_transform_is_its_closed_form():
    S = np.array([[2.0, 0.5, 1.5], [0.5, 2.0, 1.0], [1.5, 1.0, 2.0]])
    off = ~np.eye(3, dtype=bool)
    expected = {"bound_minus": 2.0 - S, "neg_log": -np.log(S / 2.0), "reciprocal": 1.0 / S,
                "sqrt": np.sqrt(2.0 - S), "square": (2.0 - S) ** 2}
    for name in TRANSFORMS:
        D = transform(S, name, "similarity", bound=2.0, floor=0.5, diagonal=True)
        np.testing.assert_allclose(D[off], expected[name][off], rtol=1e-15)
        assert np.all(np.diag(D) == 0)
    D = np.array([[0.0, 4.0], [4.0, 0.0]])
    for name, value in (("bound_minus", 4.0), ("sqrt", 2.0), ("square", 16.0)):
        assert transform(D, name, "distance", None)[0, 1] == value


def test_fit_bound_is_the_fit_sets_largest_similarity_and_test_rows_are_clipped():
    S_fit = np.array([[1.0, 0.2], [0.2, 0.8]])
    model = DistanceTransform(KNNClassifier(), to_distance="neg_log").fit(S_fit, ["a", "b"])
    assert model.bound_ == 1.0 and model.floor_ == 0.2
    # a test similarity above the bound is at distance 0; one <= 0 is raised to the floor (largest fit distance)
    D_test = model._inner(np.array([[1.5, -0.3]]))
    np.testing.assert_allclose(D_test, [[0.0, -np.log(0.2)]])
    given = DistanceTransform(KNNClassifier(), upper_bound=3.0).fit(S_fit, ["a", "b"])
    assert given.bound_ == 3.0
    with pytest.raises(DataError, match="upper_bound 0.5 is below"):
        DistanceTransform(KNNClassifier(), upper_bound=0.5).fit(S_fit, ["a", "b"])


def test_square_of_a_square_root_similarity_recovers_the_distances_exactly():
    """S = S-bar - sqrt(D): the `square` candidate hands Kernel HLM D itself, so it decides as on D."""
    D, _, y = blobs(seed=3)
    S = 10.0 - np.sqrt(D)
    fit, test = np.arange(0, 50, 2), np.arange(1, 50, 2)
    direct = KernelHLM().fit(D[np.ix_(fit, fit)], y[fit])
    wrapped = DistanceTransform(KernelHLM(), to_distance="square").fit(S[np.ix_(fit, fit)], y[fit])
    np.testing.assert_array_equal(wrapped.predict(S[np.ix_(test, fit)]), direct.predict(D[np.ix_(test, fit)]))
    np.testing.assert_allclose(wrapped.predict_proba(S[np.ix_(test, fit)]),
                               direct.predict_proba(D[np.ix_(test, fit)]), rtol=1e-9, atol=1e-12)
    assert wrapped.estimator_.scale_ == pytest.approx(direct.scale_, rel=1e-12)


# ------------------------------------------------------------------ validity of the candidates
def test_candidates_that_need_positive_similarities_are_left_out_with_a_warning():
    _, S, _ = blobs()
    assert valid_candidates(S, "similarity") == TRANSFORMS
    S_neg = S.copy()
    S_neg[0, 1] = S_neg[1, 0] = -0.1
    assert valid_candidates(S_neg, "similarity") == ("bound_minus", "sqrt", "square")
    S_zero = S.copy()
    S_zero[0, 1] = S_zero[1, 0] = 0.0  # a zero is raised to the smallest positive fit similarity
    assert valid_candidates(S_zero, "similarity") == TRANSFORMS
    model = DistanceTransform(KernelHLM(), to_distance="reciprocal").fit(S_zero, np.repeat(["a", "b"], 25))
    off = ~np.eye(50, dtype=bool)
    assert model.floor_ == S_zero[off][S_zero[off] > 0].min()
    D_fit = model._distances(S_zero, fit=True)
    assert D_fit[0, 1] == 1.0 / model.floor_ == D_fit[off].max()
    assert valid_candidates(S, "distance") == ("bound_minus", "sqrt", "square")
    grid = METHODS["kernel_hlm_cv"].grid(None)
    estimator = DistanceTransform(KernelHLM())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        kept = applicable_grid(estimator, S_neg, grid)
    assert {p["to_distance"] for p in kept} == {"bound_minus", "sqrt", "square"}
    assert len(kept) == 3 * len(SCALE_FACTOR_GRID)
    assert any("neg_log, reciprocal left out" in str(w.message) for w in caught)
    with warnings.catch_warnings(record=True) as caught:  # distances: the two never apply, silently
        warnings.simplefilter("always")
        applicable_grid(DistanceTransform(KernelHLM(), relation="distance"), np.abs(S_neg), grid)
    assert not caught
    with pytest.raises(DataError, match="no to_distance candidate"):
        applicable_grid(estimator, S_neg, [{"to_distance": "neg_log"}])
    with pytest.raises(DataError, match="needs non-negative similarities"):
        DistanceTransform(KernelHLM(), to_distance="reciprocal").fit(S_neg, np.repeat(["a", "b"], 25))


def test_wrapper_follows_scikit_learn_conventions():
    _, S, y = blobs()
    estimator = DistanceTransform(KernelHLM(), to_distance="sqrt")
    with pytest.raises(NotFittedError):
        estimator.predict(S)
    assert clone(estimator).get_params()["estimator__scale_factor"] == 1.0
    model = clone(estimator).set_params(estimator__scale_factor=2.0).fit(S, y)
    assert model.estimator_.scale_factor == 2.0 and list(model.classes_) == ["a", "b"]
    np.testing.assert_allclose(model.predict_proba(S).sum(axis=1), 1.0, rtol=1e-12)


# ------------------------------------------------------------------ Kernel HLM's scale factor
def test_scale_factor_multiplies_the_estimated_scale():
    D, _, y = blobs(seed=1)
    base = KernelHLM().fit(D, y)
    for c in (0.0625, 0.5, 16.0):
        model = KernelHLM(scale_factor=c).fit(D, y)
        assert model.scale_ == c * base.scale_ and model.shape_ == base.shape_
    assert KernelHLM(scale=2.0, shape=1.5, scale_factor=0.5).fit(D, y).scale_ == 1.0


def test_small_scale_factor_is_the_nearest_neighbour_rule_and_large_the_prior():
    """Limits of eq. 6: b -> 0 leaves the nearest training object's class; b -> inf the class priors."""
    D, _, y = blobs(seed=2, n=30)
    y = y.copy()
    y[:4] = "b"  # unequal priors: b has 34 of 60
    fit, test = np.arange(0, 60, 2), np.arange(1, 60, 2)
    nn = KNNClassifier(n_neighbors=1).fit(D[np.ix_(fit, fit)], y[fit]).predict(D[np.ix_(test, fit)])
    tiny = KernelHLM(scale_factor=1e-4).fit(D[np.ix_(fit, fit)], y[fit]).predict(D[np.ix_(test, fit)])
    np.testing.assert_array_equal(tiny, nn)
    huge = KernelHLM(scale_factor=1e8).fit(D[np.ix_(fit, fit)], y[fit])
    majority = pd.Series(y[fit]).value_counts().idxmax()
    assert set(huge.predict(D[np.ix_(test, fit)])) == {majority}
    np.testing.assert_allclose(huge.predict_proba(D[np.ix_(test, fit)]),
                               np.broadcast_to(huge.class_prior_, (len(test), 2)), atol=1e-6)


# ------------------------------------------------------------------ the one-standard-error rule
def test_one_se_rule_takes_the_first_point_within_one_standard_error():
    errors = np.array([[0.30, 0.20, 0.25, 0.25],   # mean 0.25: outside
                       [0.22, 0.22, 0.22, 0.22],   # mean 0.22: within one SE of the lowest
                       [0.10, 0.30, 0.20, 0.20]])  # mean 0.20: the lowest, SE = 0.0408
    means = errors.mean(axis=1)
    se = np.std(errors[2], ddof=1) / 2
    assert means[1] <= means[2] + se < means[0]
    assert one_se_choice(errors, means) == 1
    assert one_se_choice(errors[[0, 2]], means[[0, 2]]) == 1  # nothing else within: the lowest


def test_one_se_selection_equals_a_brute_force_cv():
    """select_params(rule="one_se") against per-point refits scored fold by fold (the definition)."""
    _, S, y = blobs(seed=4, n=20, spread=(1.0, 1.6), shift=0.8)
    grid = [{"to_distance": t, "estimator__scale_factor": c}
            for t in ("bound_minus", "square") for c in (1.0, 0.25, 4.0)]
    folds = make_folds(y, 5, 11)
    estimator = DistanceTransform(KernelHLM())
    errors = np.array([[np.mean(clone(estimator).set_params(**p).fit(S[np.ix_(f, f)], y[f])
                                .predict(S[np.ix_(v, f)]) != y[v]) for f, v in folds] for p in grid])
    means = errors.mean(axis=1)
    best, searched, got = select_params(estimator, S, y, grid, folds, rule="one_se")
    np.testing.assert_allclose(got, means, rtol=1e-12)
    se = np.std(errors[np.argmin(means)], ddof=1) / np.sqrt(len(folds))
    assert best == grid[int(np.flatnonzero(means <= means.min() + se)[0])]
    assert select_params(estimator, S, y, grid, folds)[0] == grid[int(np.argmin(means))]
    with pytest.raises(ValueError, match="known means"):
        select_params(estimator, S, y, grid, folds, known={"x": 0.1}, rule="one_se")


def test_grid_orders_the_papers_rule_first():
    grid = METHODS["kernel_hlm_cv"].grid(None)
    assert grid[0] == {"to_distance": "bound_minus", "estimator__scale_factor": 1.0}
    assert [p["to_distance"] for p in grid[:: len(SCALE_FACTOR_GRID)]] == TRANSFORM_GRID == list(TRANSFORMS)
    logs = [abs(np.log2(c)) for c in SCALE_FACTOR_GRID]
    assert logs == sorted(logs) and SCALE_FACTOR_GRID[1] < SCALE_FACTOR_GRID[2]  # then the smaller c
    vsh = METHODS["hlm_vsh_cv"].grid(None)
    assert vsh[0] == {"to_distance": "bound_minus", "estimator__n_components": 1}
    assert METHODS["hlm_vsh_cv"].make().estimator.clustering == "vsh"


@pytest.mark.parametrize("inner", ["kernel_hlm", "knn"])
def test_fold_path_equals_refits_on_positive_similarities_with_every_candidate(inner):
    """All five candidates apply (similarities in (0, 1]); a fold whose fit part lacks the smallest
    similarity has its own floor, and one object with a larger self-similarity moves S-bar in some folds.
    Kernel HLM takes its own path (``kernel_hlm_folds``), k-NN the generic one (its S-bar branch)."""
    _, S, y = blobs(seed=6, n=15)
    S = S.copy()
    S[3, 3] = 1.2  # S-bar = 1.2 in the folds whose fit part holds object 3, else 1
    S[5, 8] = S[8, 5] = S[9, 20] = S[20, 9] = 0.0  # zeros: raised to each fold's own floor
    if inner == "kernel_hlm":
        estimator, values = DistanceTransform(KernelHLM()), {"estimator__scale_factor": SCALE_FACTOR_GRID}
    else:
        estimator, values = DistanceTransform(KNNClassifier()), {"estimator__n_neighbors": [1, 3, 7]}
    (name, levels), = values.items()
    grid = [{"to_distance": t, name: v} for t in TRANSFORMS for v in levels]
    folds = make_folds(y, 5, 3)
    fast = estimator.predict_folds(S, y, folds, grid)
    shared = predict_transform_folds(estimator, S, y, folds, estimator._grid_groups(grid), _Facts(S))
    assert (shared is not None) == (inner == "kernel_hlm")
    for (fit, val), got in zip(folds, fast):
        want = predict_each(estimator, S[np.ix_(fit, fit)], y[fit], S[np.ix_(val, fit)], grid)
        for params, a, b in zip(grid, got, want):
            np.testing.assert_array_equal(a, b, err_msg=str(params))
    assert all(p is not None for fold in fast for p in fold)
    assert len({clone(estimator).set_params(to_distance="sqrt").fit(S[np.ix_(f, f)], y[f]).bound_
                for f, _ in folds}) == 2  # S-bar differs between folds


def _rare_classes(seed=11):
    """4 classes in 2-D, two of them rare, a duplicate pair, distances spanning orders of magnitude (terms
    that underflow at the smallest scale factors), and 4 folds: class 2 is missing from fold 1's fit part,
    class 3 is a singleton in fold 0's."""
    rng = np.random.default_rng(seed)
    y = np.r_[np.zeros(20, int), np.ones(15, int), np.full(3, 2), np.full(2, 3)]
    X = rng.normal(size=(40, 2)) * np.r_[0.3, 3.0] + np.c_[2.0 * y, np.zeros(40)]
    X[5] = X[4]
    D = np.sqrt(((X[:, None] - X[None]) ** 2).sum(-1))
    fold_of = np.r_[np.arange(35) % 4, 1, 1, 1, 0, 2]
    folds = [(np.flatnonzero(fold_of != f), np.flatnonzero(fold_of == f)) for f in range(4)]
    return D, 1.0 - D / D.max(), y, folds


@pytest.mark.parametrize("relation", ["similarity", "distance"])
@pytest.mark.parametrize("inner", [KernelHLM(), KernelHLM(squared=False, round_shape=False), KernelHLM(shape=1.0)])
def test_kernel_hlm_fold_path_equals_refits_on_any_grid(relation, inner):
    """The shared path (one exponential per candidate and fold, squarings for halved scale factors) against
    a refit per point and fold: a class missing from some fit parts, duplicates, factors that are not
    powers of 2 (their own exponentials), more halvings than one exponential serves, and the estimator's own
    parameters."""
    D, S, y, folds = _rare_classes()
    R = S if relation == "similarity" else D
    factors = [*SCALE_FACTOR_GRID, 3.0, 1.5, 0.7, 2.0**-5, 2.0**-6, 2.0**-7, 2.0**-8]  # a run of 13 halvings
    grid = [{"to_distance": t, "estimator__scale_factor": c} for t in TRANSFORMS for c in factors]
    estimator = DistanceTransform(inner, relation=relation)
    grid = [p for p in grid if p["to_distance"] in estimator.valid_candidates(R)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fast = predict_transform_folds(estimator, R, y, folds, estimator._grid_groups(grid),
                                       _Facts(R) if relation == "similarity" else None)
        assert fast is not None
        for (fit, val), got in zip(folds, fast):
            want = predict_each(estimator, R[np.ix_(fit, fit)], y[fit], R[np.ix_(val, fit)], grid)
            for params, a, b in zip(grid, got, want):
                np.testing.assert_array_equal(a, b, err_msg=str(params))
    assert len({tuple(p) for fold in fast for p in fold}) > len(folds)  # the points differ


def test_kernel_hlm_fold_path_declines_other_grids_and_broken_folds():
    D, S, y, folds = _rare_classes()
    estimator = DistanceTransform(KernelHLM())
    shape_grid = [{"to_distance": "sqrt", "estimator__shape": 2.0}]
    assert predict_transform_folds(estimator, S, y, folds, estimator._grid_groups(shape_grid), _Facts(S)) is None
    grid = estimator._grid_groups([{"to_distance": "sqrt", "estimator__scale_factor": 2.0}])
    overlapping = [(fit, np.r_[val, fit[:1]]) for fit, val in folds]
    assert predict_transform_folds(estimator, S, y, overlapping, grid, _Facts(S)) is None
    repeated = [(np.r_[fit[:-1], fit[:1]], val) for fit, val in folds]  # one fit object twice, one missing
    assert predict_transform_folds(estimator, S, y, repeated, grid, _Facts(S)) is None
    with pytest.raises(ValueError, match="scale_factor"):
        predict_transform_folds(estimator, S, y, folds, estimator._grid_groups(
            [{"to_distance": "sqrt", "estimator__scale_factor": -1.0}]), _Facts(S))
    own = DistanceTransform(KernelHLM(scale_factor=-1.0))  # the estimator's own value, used by a point
    with pytest.raises(ValueError, match="scale_factor"):
        predict_transform_folds(own, S, y, folds, own._grid_groups([{"to_distance": "sqrt"}]), _Facts(S))


def test_kernel_hlm_fold_path_gives_none_where_a_refit_raises():
    """None where a refit raises, as ``predict_each``: fold 0's fit part is of one class; in fold 1's every
    object's same-class neighbours are duplicates (no u > 0 for the Gamma fit); an upper bound below the
    largest similarity fails every fold. Fold 2 fits."""
    _, S, y = blobs(seed=2, n=8)  # objects 0-7 of class a, 8-15 of class b
    S = S.copy()
    S[4:8, 4:8] = S[8:, 8:] = 1.0  # duplicates
    blocks = [np.arange(8, 16), np.arange(0, 4), np.arange(4, 8)]
    folds = [(np.setdiff1d(np.arange(16), val), val) for val in blocks]
    grid = [{"to_distance": t, "estimator__scale_factor": c} for t in ("bound_minus", "sqrt") for c in (1.0, 0.5)]
    for estimator in (DistanceTransform(KernelHLM()), DistanceTransform(KernelHLM(), upper_bound=0.99)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fast = predict_transform_folds(estimator, S, y, folds, estimator._grid_groups(grid), _Facts(S))
            for (fit, val), got in zip(folds, fast):
                want = predict_each(estimator, S[np.ix_(fit, fit)], y[fit], S[np.ix_(val, fit)], grid)
                for a, b in zip(got, want):
                    assert (a is None) == (b is None)
                    if a is not None:
                        np.testing.assert_array_equal(a, b)
        expected = [True, True, False] if estimator.upper_bound is None else [True, True, True]
        assert [all(p is None for p in fold) for fold in fast] == expected


class Recorder(KNNClassifier):
    """1-NN that records the fit distances and the validation distances it is handed."""

    seen: list = []

    def fit(self, D, y):
        Recorder.seen.append(("fit", np.array(D, copy=True)))
        return super().fit(D, y)

    def predict(self, D):
        Recorder.seen.append(("predict", np.array(D, copy=True)))
        return super().predict(D)

    def predict_grid(self, D_fit, y, D_val, grid):
        return predict_each(self, D_fit, y, D_val, grid)  # every fit and prediction through the recorder

    def predict_folds(self, D, y, folds, grid):
        return None


@pytest.mark.parametrize("symmetric", [True, False])
def test_fold_path_hands_the_inner_estimator_each_folds_own_distances(symmetric):
    """The matrices the fold path gives the inner estimator equal those of a per-fold fit: zeros raised to
    the fold's own floor, also a zero in one triangle only."""
    _, S, y = blobs(seed=7, n=15)
    S = S.copy()  # S-bar = 1 in every fold; the smallest positive pair (6, 16) is missing from one fold's fit part
    S[8, 5] = S[20, 9] = 0.0  # the lower triangle
    if symmetric:
        S[5, 8] = S[9, 20] = 0.0
    folds = make_folds(y, 5, 3)
    grid = [{"to_distance": t} for t in TRANSFORMS]
    estimator = DistanceTransform(Recorder())
    Recorder.seen = []
    estimator.predict_folds(S, y, folds, grid)
    fast = list(Recorder.seen)
    Recorder.seen = []
    for fit, val in folds:
        for params in grid:
            clone(estimator).set_params(**params).fit(S[np.ix_(fit, fit)], y[fit]).predict(S[np.ix_(val, fit)])
    slow = list(Recorder.seen)
    order = [(f, t) for f in range(len(folds)) for t in range(len(grid))]  # fast: fold-major, one fit per point
    assert len(fast) == len(slow) == 2 * len(order)
    for (kind_a, a), (kind_b, b) in zip(fast, slow):
        assert kind_a == kind_b
        np.testing.assert_array_equal(a, b)
    floors = {clone(estimator).set_params(to_distance="reciprocal").fit(S[np.ix_(f, f)], y[f]).floor_
              for f, _ in folds}
    assert len(floors) > 1  # the folds' own floors differ: the branch that transforms a fold itself ran


# ------------------------------------------------------------------ through the evaluation
def _artifact(similarities: bool, seed=5):
    D, S, y = blobs(seed=seed, n=20)
    ids = np.array([f"o{i}" for i in range(len(y))])
    return DistanceArtifact(ids=ids, labels=y, distances=D, metadata={"dataset": "toy"},
                            similarities=S if similarities else None)


def _splits(n, n_splits=2, seed=0):
    rng = np.random.default_rng(seed)
    rows = []
    for s in range(n_splits):
        test = set(rng.choice(n, n // 5, replace=False).tolist())
        rows += [{"split": s, "index": i, "role": "test" if i in test else "train"} for i in range(n)]
    return pd.DataFrame(rows)


@pytest.mark.parametrize("similarities", [True, False])
def test_evaluation_records_the_chosen_transform_and_scale(similarities):
    artifact = _artifact(similarities)
    result = evaluate_method(artifact, _splits(artifact.n), "kernel_hlm_cv", dataset="toy", seed=1, n_folds=5)
    for row in result.evaluation.itertuples():
        params = json.loads(row.params)
        assert params["to_distance"] in (TRANSFORMS if similarities else ("bound_minus", "sqrt", "square"))
        assert params["scale_factor"] in SCALE_FACTOR_GRID
        searched = {json.loads(k)["to_distance"] for k in json.loads(row.cv_error)}
        assert searched == set(TRANSFORMS if similarities else ("bound_minus", "sqrt", "square"))
    assert {"proba_a", "proba_b"} <= set(result.predictions.columns)


def test_kernel_hlm_fold_path_keeps_the_order_of_each_folds_validation_rows():
    D, S, y, folds = _rare_classes()
    estimator = DistanceTransform(KernelHLM())
    grid = estimator._grid_groups([{"to_distance": "sqrt", "estimator__scale_factor": c} for c in (1.0, 0.5)])
    rng = np.random.default_rng(0)
    shuffled = [(rng.permutation(fit), rng.permutation(val)) for fit, val in folds]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ordered = predict_transform_folds(estimator, S, y, folds, grid, _Facts(S))
        got = predict_transform_folds(estimator, S, y, shuffled, grid, _Facts(S))
    for (_, val), (_, val_shuffled), a, b in zip(folds, shuffled, ordered, got):
        for p, q in zip(a, b):
            np.testing.assert_array_equal(q, p[np.argsort(val)][np.searchsorted(np.sort(val), val_shuffled)])
