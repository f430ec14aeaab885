"""Class probabilities, measured (docs/beyond-the-paper-spec.md sections 3 and 6): the k-NN family's
Laplace-corrected shares, local SDA's softmax, Platt scaling of the SVMs, log-loss, Brier score, the
clip count, reliability bins, the tables and the bad inputs. Known answers only."""

import dataclasses
import json
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize
from scipy.spatial.distance import cdist
from scipy.special import softmax
from sklearn.metrics import brier_score_loss
from sklearn.metrics import log_loss as sklearn_log_loss

from hlm.datasets._artifacts import DistanceArtifact
from hlm.distances._reciprocal import SimilarityFromDistances
from hlm.errors import DataError, error_line
from hlm.local_sda._local_sda import LocalSDA
from hlm.neighbors._knn import KNNClassifier
from hlm.neighbors._weighted import KRIKNN, KRRKNN, AffinityKNN
from hlm.pipeline.evaluation import probabilities as prob
from hlm.pipeline.evaluation.evaluate import evaluate_method
from hlm.pipeline.evaluation.splits import make_splits
from hlm.pipeline.methods import METHODS
from hlm.pipeline.reporting.probabilities import probability_markdown, probability_summary, probability_table
from hlm.svm._platt import sigmoid_train
from hlm.svm._psvm import PSVM
from hlm.svm._similarity import SVMSimilarityFeatures, SVMSimilarityKernel, SVMVectors

# ---------------------------------------------------------------- k-NN: (k w_g + 1) / (k + G)
Y6 = np.array(["a", "a", "b", "b", "c", "c"])


def test_knn_probabilities_are_laplace_corrected_vote_counts():
    """G = 3 classes; rows: a three-way tie, a 2-1-1 vote, a class absent from N, a distance tie."""
    D = np.abs(np.subtract.outer(np.arange(6.0), np.arange(6.0)))
    D_te = np.array([
        [1.0, 9.0, 2.0, 9.0, 3.0, 9.0],  # k = 3: a, b, c -> 1 vote each
        [1.0, 2.0, 3.0, 9.0, 4.0, 9.0],  # k = 4: a, a, b, c
        [1.0, 2.0, 9.0, 9.0, 9.0, 9.0],  # k = 3: a, a, then the earliest 9.0 (index 2: b)
    ])
    P3 = KNNClassifier(3).fit(D, Y6).predict_proba(D_te)
    np.testing.assert_allclose(P3[0], [2 / 6, 2 / 6, 2 / 6], rtol=1e-15)  # (1 + 1) / (3 + 3)
    np.testing.assert_allclose(P3[2], [3 / 6, 2 / 6, 1 / 6], rtol=1e-15)  # 2, 1, 0 votes
    P4 = KNNClassifier(4).fit(D, Y6).predict_proba(D_te)
    np.testing.assert_allclose(P4[1], [3 / 7, 2 / 7, 2 / 7], rtol=1e-15)  # (2 + 1) / 7, (1 + 1) / 7
    P1 = KNNClassifier(1).fit(D, Y6).predict_proba(D_te)
    np.testing.assert_allclose(P1, [[2 / 4, 1 / 4, 1 / 4]] * 3, rtol=1e-15)  # 1-NN: never 0 or 1
    P_all = KNNClassifier(100).fit(D, Y6).predict_proba(D_te)  # k capped at 6: every class 2 votes
    np.testing.assert_allclose(P_all, np.full((3, 3), 1 / 3), rtol=1e-15)
    # the tie of row 0 goes to the class of the nearest neighbour (equal priors): a, a probability tied at the top
    assert KNNClassifier(3).fit(D, Y6).predict(D_te)[0] == "a"


def test_weighted_knn_probabilities_are_laplace_corrected_weight_shares():
    """Affinity weights s_i / sum s_j; with a negative similarity only positive class scores count."""
    S = np.eye(6)
    s_te = np.array([[0.5, 0.2, 0.3, 0.0, -0.1, -0.2]])  # k = 3: objects 0 (a), 2 (b), 1 (a)
    P = AffinityKNN(3).fit(S, Y6).predict_proba(s_te)
    np.testing.assert_allclose(P[0], [(3 * 0.7 + 1) / 6, (3 * 0.3 + 1) / 6, 1 / 6], rtol=1e-14)
    s_neg = np.array([[0.6, -0.9, 0.2, -0.9, -0.4, -0.9]])  # k = 3: 0 (a) 0.6, 2 (b) 0.2, 4 (c) -0.4
    with pytest.warns(UserWarning, match="negative neighbour similarities"):
        P = AffinityKNN(3).fit(S, Y6).predict_proba(s_neg)
    # weights 0.6/0.4, 0.2/0.4, -0.4/0.4 = 1.5, 0.5, -1: shares of the positive part 0.75, 0.25, 0
    np.testing.assert_allclose(P[0], [(3 * 0.75 + 1) / 6, (3 * 0.25 + 1) / 6, 1 / 6], rtol=1e-14)


@pytest.mark.parametrize("estimator", [AffinityKNN(4), KRIKNN(4, ridge=0.1), KRRKNN(4, ridge=0.1)], ids=repr)
def test_weighted_knn_probabilities_are_proper_and_agree_with_predict(estimator):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    y = np.where(X[:, 0] > 0, "a", np.where(X[:, 1] > 0, "b", "c"))
    S = np.exp(-cdist(X, X) ** 2)
    model = estimator.fit(S[:30, :30], y[:30])
    P = model.predict_proba(S[30:, :30])
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-12)
    assert (P >= 1 / (4 + 3) - 1e-15).all()  # the Laplace floor 1 / (k + G): never 0
    top = P.max(axis=1)
    chosen = P[np.arange(10), np.searchsorted(model.classes_, model.predict(S[30:, :30]))]
    np.testing.assert_allclose(chosen, top, rtol=1e-12)  # the prediction has the largest probability


# ---------------------------------------------------------------- local SDA: softmax of the class scores
S_HAND = np.array([[1, 0, 0, 0, 0, 0], [1, 1, 0, 0, 0, 0], [0, 0, 1, 1, 0, 0], [0, 0, 1, 1, 0, 0],
                   [1, 0, 0, 0, 1, 0], [0, 0, 0, 0, 0, 1]], dtype=np.float64)
Y_HAND = np.array(["a", "a", "a", "b", "b", "b"])
S_TE_HAND = np.array([[0.5, 0.1, 0.1, 0.9, 0.2, 0.0]])


def test_local_sda_probabilities_are_the_softmax_of_the_hand_scores():
    """tests/local_sda/test_local_sda.py's hand example (Omega = {0, 1}): scores log P(g) + sum_h t_h logit(c_gh)
    + log(1 - c_gh); a degenerate row (fallback) and a one-class neighbourhood get 1 for their class."""
    def term(c, t):
        return t * np.log(c / (1 - c)) + np.log(1 - c)

    scores = np.array([np.log(0.6) + term(2 / 3, 0.5) + term(1 / 3, 0.9),
                       np.log(0.4) + term(1 / 2, 0.5) + term(1 / 2, 0.9)])
    model = LocalSDA(n_neighbors=5).fit(S_HAND, Y_HAND)
    np.testing.assert_allclose(model.predict_proba(S_TE_HAND)[0], softmax(scores), atol=1e-9)
    assert model.predict(S_TE_HAND)[0] == "a" and model.predict_proba(S_TE_HAND)[0, 0] > 0.5
    S_deg = np.array([[1.0, 0.7, 0.3, 0.2], [0.7, 1.0, 0.35, 0.25], [0.3, 0.35, 1.0, 0.1], [0.2, 0.25, 0.1, 1.0]])
    y_deg = np.array(["a", "a", "a", "b"])
    deg = LocalSDA(n_neighbors=3).fit(S_deg, y_deg)
    np.testing.assert_array_equal(deg.predict_proba([[0.8, 0.5, 0.4, 0.9]]), [[0.0, 1.0]])  # fallback: b
    assert deg.n_degenerate_ == 1
    one = LocalSDA(n_neighbors=2).fit(S_deg, y_deg)
    np.testing.assert_array_equal(one.predict_proba([[0.9, 0.8, 0.1, 0.2]]), [[1.0, 0.0]])  # N = {0, 1}: a only


# ---------------------------------------------------------------- log-loss, Brier, the clip
P3 = np.array([[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.3, 0.3, 0.4]])
Y3 = np.array(["a", "b", "a"])
C3 = np.array(["a", "b", "c"])


def test_log_loss_and_brier_by_hand_on_three_objects():
    assert prob.log_loss(Y3, P3, C3) == pytest.approx(-(np.log(0.7) + np.log(0.8) + np.log(0.3)) / 3, rel=1e-14)
    # (0.09 + 0.04 + 0.01) + (0.01 + 0.04 + 0.01) + (0.49 + 0.09 + 0.16) = 0.94
    assert prob.brier_score(Y3, P3, C3) == pytest.approx(0.94 / 3, rel=1e-14)
    assert prob.n_clipped(Y3, P3, C3) == 0
    assert prob.scores(Y3, P3, C3)["log_loss"] == pytest.approx(sklearn_log_loss(Y3, P3, labels=C3), rel=1e-12)


def test_log_loss_equals_sklearns_and_brier_twice_its_binary():
    rng = np.random.default_rng(1)
    for G in (2, 3, 5):
        P = rng.dirichlet(np.ones(G), 200)
        classes = np.array([f"k{g}" for g in range(G)])
        y = classes[rng.integers(0, G, 200)]
        assert prob.log_loss(y, P, classes) == pytest.approx(sklearn_log_loss(y, P, labels=classes), rel=1e-12)
        onehot = (y[:, None] == classes[None, :]).astype(float)
        assert prob.brier_score(y, P, classes) == pytest.approx(((P - onehot) ** 2).sum(axis=1).mean(), rel=1e-12)
        if G == 2:
            binary = brier_score_loss(y == "k1", P[:, 1])
            assert prob.brier_score(y, P, classes) == pytest.approx(2 * binary, rel=1e-12)
    assert prob.brier_score(["a"], [[0.0, 1.0]], ["a", "b"]) == 2.0  # sure and wrong: the maximum


def test_a_planted_zero_is_clipped_and_counted():
    P = P3.copy()
    P[2] = [0.0, 0.6, 0.4]  # the true class a of object 2 gets 0
    assert prob.n_clipped(Y3, P, C3) == 1
    expected = -(np.log(0.7) + np.log(0.8) + np.log(1e-15)) / 3
    assert prob.log_loss(Y3, P, C3) == pytest.approx(expected, rel=1e-14)
    assert np.isfinite(prob.log_loss(Y3, P, C3))
    # the same clip given to scikit-learn (its own, at float eps, does nothing then)
    clipped = np.maximum(P, 1e-15)
    assert prob.log_loss(Y3, P, C3) == pytest.approx(
        -np.log(clipped[np.arange(3), [0, 1, 0]]).mean(), rel=1e-14)
    assert prob.n_clipped(Y3, np.where(P == 0, 1e-15, P), C3) == 0  # at eps: not below it


def test_reliability_bins_by_hand():
    P = np.array([[0.95, 0.05], [0.92, 0.08], [0.55, 0.45], [0.5, 0.5], [1.0, 0.0]])
    y = np.array(["a", "b", "a", "b", "a"])
    bins = prob.reliability_bins(y, P, ["a", "b"], y_pred=np.array(["a", "a", "a", "b", "a"]))
    assert bins["count"].tolist() == [0, 0, 0, 0, 0, 2, 0, 0, 0, 3]
    # bin 5: 0.55 (right) and 0.5 (tied; the method predicted b: right)
    assert bins.loc[5, "confidence"] == pytest.approx(0.525) and bins.loc[5, "accuracy"] == 1.0
    assert bins.loc[9, "confidence"] == pytest.approx((0.95 + 0.92 + 1.0) / 3)
    assert bins.loc[9, "accuracy"] == pytest.approx(2 / 3)
    assert np.isnan(bins.loc[0, "accuracy"])
    # without the predictions the tie goes to the first class: wrong
    assert prob.reliability_bins(y, P, ["a", "b"]).loc[5, "accuracy"] == 0.5


# ---------------------------------------------------------------- Platt scaling
def _three_blobs(n=90, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = np.repeat(["a", "b", "c"], n // 3)
    X[y == "b"] += 1.5
    X[y == "c"] -= 1.5
    return X, y


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("make", [lambda: SVMSimilarityKernel(C=1.0), lambda: SVMSimilarityFeatures(C=1.0),
                                  lambda: SVMSimilarityFeatures(C=1.0, kernel="rbf", gamma=0.1),
                                  lambda: PSVM(C=1.0, epsilon=0.1), lambda: SVMVectors(C=1.0, kernel="rbf")],
                         ids=["kernel", "features_linear", "features_rbf", "psvm", "vectors_rbf"])
def test_platt_leaves_predictions_unchanged_and_rows_sum_to_one(make, n_classes):
    X, y = _three_blobs()
    if n_classes == 2:
        y = np.where(y == "a", "a", "b")
    vectors = isinstance(make(), SVMVectors)
    M = X if vectors else np.exp(-cdist(X, X) ** 2 / 4)
    fit, test = np.arange(0, 90, 2), np.arange(1, 90, 2)
    M_fit, M_te = (M[fit], M[test]) if vectors else (M[np.ix_(fit, fit)], M[np.ix_(test, fit)])
    plain = make().fit(M_fit, y[fit])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning (scikit-learn's deprecation of SVC's probability included)
        platt = make().set_params(probability=True).fit(M_fit, y[fit])
    np.testing.assert_array_equal(platt.predict(M_te), plain.predict(M_te))
    P = platt.predict_proba(M_te)
    assert P.shape == (len(test), n_classes) and (P >= 0).all()
    np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-12)
    again = make().set_params(probability=True).fit(M_fit, y[fit]).predict_proba(M_te)
    np.testing.assert_array_equal(again, P)  # seeded: the same on every fit
    accuracy = np.mean(platt.classes_[P.argmax(axis=1)] == y[test])
    # the probabilities' argmax classifies: it beats the majority rule (2/3 of the test part for two classes,
    # 1/3 for three) by more than that rule's binomial SE; a constant or random argmax does not
    majority = max(np.mean(y[test] == c) for c in np.unique(y[test]))
    assert accuracy > majority + np.sqrt(majority * (1 - majority) / len(test))


def test_platt_sigmoid_minimises_platts_objective():
    """libsvm's Newton method reaches the minimum of the cross-entropy to the regularised targets."""
    rng = np.random.default_rng(3)
    f = np.concatenate([rng.normal(1.0, 1.0, 40), rng.normal(-1.0, 1.0, 30)])
    pos = np.arange(70) < 40
    t = np.where(pos, 41 / 42, 1 / 32)

    def objective(ab):
        z = ab[0] * f + ab[1]
        return np.sum(t * z + np.logaddexp(0, -z))

    A, B = sigmoid_train(f, pos)
    best = minimize(objective, [0.0, 0.0], method="BFGS", options={"gtol": 1e-10}).x
    np.testing.assert_allclose([A, B], best, atol=1e-4)
    assert A < 0  # larger f: more likely positive
    assert sigmoid_train([], []) == (0.0, 0.0)  # no values: probability 1/2


def test_evaluation_fits_platt_in_the_final_fit_only(monkeypatch):
    """Same CV errors, choices and predictions as without probabilities; probabilities stored and scored."""
    X, y = _three_blobs(60)
    art = DistanceArtifact(np.arange(60).astype(str), y, cdist(X, X), {"to_distance": "euclidean"},
                           similarities=np.exp(-cdist(X, X) ** 2 / 4))
    splits = make_splits(60, dataset="toy", n_splits=2, test_fraction=0.25, seed=0)
    run = {"dataset": "toy", "seed": 0, "n_folds": 3, "grid_config": {"C": [0.1, 1.0, 10.0]}}
    with_platt = evaluate_method(art, splits, "svm_kernel_clip", **run)
    monkeypatch.setitem(METHODS, "svm_kernel_clip", dataclasses.replace(METHODS["svm_kernel_clip"],
                                                                       probabilities=None))
    without = evaluate_method(art, splits, "svm_kernel_clip", **run)
    for col in ("error_rate", "params", "cv_error"):
        assert with_platt.evaluation[col].tolist() == without.evaluation[col].tolist()
    assert with_platt.predictions["y_pred"].tolist() == without.predictions["y_pred"].tolist()
    assert without.evaluation["log_loss"].isna().all() and "proba_a" not in without.predictions
    proba = with_platt.predictions[["proba_a", "proba_b", "proba_c"]]
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-12)
    for row in with_platt.evaluation.itertuples():
        part = with_platt.predictions[with_platt.predictions.split == row.split]
        P = part[["proba_a", "proba_b", "proba_c"]].to_numpy()
        assert row.log_loss == pytest.approx(prob.log_loss(part.y_true, P, C3), rel=1e-12)
        assert row.brier == pytest.approx(prob.brier_score(part.y_true, P, C3), rel=1e-12)
        assert row.n_clipped == 0 and json.loads(row.warnings) == []


def test_final_fit_params_name_a_wrapped_estimators_parameter():
    assert prob.final_fit_params(SVMSimilarityKernel(), {"probability": True}) == {"probability": True}
    wrapped = SimilarityFromDistances(SVMSimilarityKernel())
    assert prob.final_fit_params(wrapped, {"probability": True}) == {"estimator__probability": True}
    assert prob.final_fit_params(KNNClassifier(), {}) == {}
    assert METHODS["psvm"].final_fixed == {"probability": True} and METHODS["knn"].final_fixed == {}
    assert not METHODS["svm_knn"].gives_probabilities and METHODS["knn"].gives_probabilities


# ---------------------------------------------------------------- tables
def _long(scores: dict) -> pd.DataFrame:
    """{(method, dataset): per-split log-loss} -> an evaluation long frame (Brier = log-loss / 2)."""
    rows = []
    for (method, dataset), values in scores.items():
        for split, v in enumerate(values):
            rows.append({"dataset": dataset, "method": method, "split": split, "error_rate": 10.0, "n_test": 20,
                         "log_loss": v, "brier": v / 2 if pd.notna(v) else np.nan,
                         "n_clipped": (1 if v > 5 else 0) if pd.notna(v) else np.nan})
    return pd.DataFrame(rows)


def test_probability_tables_bold_na_and_clip_count():
    good = [0.30, 0.32, 0.28, 0.31, 0.29, 0.33, 0.30, 0.27]
    long_df = _long({
        ("kernel_hlm", "d1"): good,
        ("knn", "d1"): [v + 0.1 for v in good],  # worse on every split: not bold
        ("psvm", "d1"): [v + (0.01 if i % 2 else -0.01) for i, v in enumerate(good)],  # as good: bold
        ("svm_knn", "d1"): [np.nan] * 8,  # no probabilities: NA
        ("kernel_hlm", "d2"): [0.5] * 7 + [6.0],  # one split with a clipped object
    })
    methods, datasets = ["kernel_hlm", "knn", "psvm", "svm_knn"], ["d1", "d2"]
    table = probability_table(long_df, datasets, methods, "log_loss")
    assert table.loc["kernel_hlm", "d1"] == f"**{np.mean(good):.3f} ({np.std(good, ddof=1):.3f})**"
    assert not table.loc["knn", "d1"].startswith("**") and table.loc["psvm", "d1"].startswith("**")
    assert table.loc["svm_knn", "d1"] == "NA" and table.loc["knn", "d2"] == "NA"
    summary = probability_summary(long_df, datasets, methods).set_index(["method", "dataset"])
    assert summary.loc[("kernel_hlm", "d2"), "n_clipped"] == 1 and summary.loc[("kernel_hlm", "d2"), "n_test"] == 160
    assert summary.loc[("svm_knn", "d1"), "n_splits"] == 0
    md = probability_markdown(long_df, datasets, methods, "log_loss", labels={"kernel_hlm": "Kernel HLM"})
    assert "clipped below at 1e-15" in md and "d2 / Kernel HLM: 1 of 160" in md
    assert "| svm_knn | NA | NA |" in md
    brier = probability_markdown(long_df, datasets, methods, "brier")
    assert "in [0, 2]" in brier and "Clipped" not in brier


# ---------------------------------------------------------------- bad input
def test_nan_probabilities_are_one_line_errors_and_warned_in_the_evaluation():
    P = P3.copy()
    P[1, 2] = np.nan
    with pytest.raises(DataError) as info:
        prob.log_loss(Y3, P, C3)
    assert error_line(info.value) == "hlm: error: probabilities: 1 NaN/inf entries, first at object 1, class 'c'"
    with pytest.warns(UserWarning, match=r"^probabilities: 1 NaN/inf entries.*; log_loss and brier are NaN"):
        _, scores = prob.score_split(P, C3, Y3, C3)
    assert all(np.isnan(v) for v in scores.values())
    with pytest.raises(DataError, match=r"^probabilities: 1 rows do not sum to 1, first object 0"):
        prob.brier_score(Y3, np.vstack([[0.3, 0.2, 0.1], P3[1:]]), C3)
    with pytest.raises(DataError, match=r"^probabilities: entries outside \[0, 1\], first at object 2"):
        prob.brier_score(Y3, np.vstack([P3[:2], [1.2, -0.1, -0.1]]), C3)
    with pytest.raises(DataError, match=r"^probabilities: true label 'z' is not among the classes"):
        prob.log_loss(["a", "b", "z"], P3, C3)
    with pytest.raises(DataError, match=r"^probabilities: expected 3 x 3"):
        prob.log_loss(Y3, P3[:, :2], C3)


def test_a_class_absent_from_the_training_part_gets_probability_zero():
    """Its column is 0 (every class of the data set has one); a test object of it is clipped, with a warning."""
    fitted = np.array(["a", "b"])
    proba = np.array([[0.9, 0.1], [0.2, 0.8], [0.5, 0.5]])
    with pytest.warns(UserWarning, match=r"classes \['c'\] are not in the training part"):
        P, scores = prob.score_split(proba, fitted, np.array(["a", "b", "c"]), C3)
    np.testing.assert_array_equal(P[:, 2], 0.0)
    assert scores["n_clipped"] == 1
    assert scores["log_loss"] == pytest.approx(-(np.log(0.9) + np.log(0.8) + np.log(1e-15)) / 3)
    assert prob.score_split(None, fitted, Y3, C3)[0] is None  # no probabilities: NaN scores, no warning
