"""MDA-RR-OS, reduced-rank MDA by optimal scoring (hlm.mixture.OptimalScoringMDA; docs/subspace-gmm-spec.md
section 6.4): with one subclass per class it is LDA (scikit-learn's) and reduced-rank LDA (our MDA-RR by weighted
rank reduction, an independent implementation); each of its EM steps is the weighted rank reduction's M-step and
E-step (Hastie and Tibshirani 1996); on Waveform it is judged against the Bayes rule (test_subspace_gmm.py)."""

import numpy as np
import pytest
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.exceptions import NotFittedError

from hlm.errors import DataError
from hlm.mixture import OptimalScoringMDA, ReducedRankMDA
from hlm.mixture._mda_os import e_step as os_e_step
from hlm.mixture._mda_os import kmeans_start, m_step, variate_distances
from hlm.mixture._subspace_em import Data, reduced_rank_m_step
from hlm.mixture._subspace_em import e_step as rr_e_step
from messages import one_line

#: posteriors of two float64 implementations of the same closed form (solves of a 5 x 5 system, condition < 1e3)
TOL = 1e-10


def four_classes(seed=0):
    rng = np.random.default_rng(seed)
    sizes = [30, 50, 20, 40]  # unequal priors: the prior term matters
    X = np.vstack([rng.normal(m, 1.0, (n, 5)) for m, n in zip([0.0, 1.0, 2.0, 0.5], sizes)])
    X[:, 1] += X[:, 0]  # correlated features: the covariance matters
    return X, np.repeat(["a", "b", "c", "d"], sizes), rng.normal(1.0, 2.0, (300, 5))


def test_one_subclass_per_class_is_lda():
    X, y, Xt = four_classes()
    os_ = OptimalScoringMDA(n_components=1).fit(X, y)
    lda = LinearDiscriminantAnalysis(solver="lsqr").fit(X, y)  # pooled ML covariance, priors n_k / n
    np.testing.assert_allclose(os_.predict_proba(Xt), lda.predict_proba(Xt), rtol=0, atol=TOL)
    np.testing.assert_array_equal(os_.predict(Xt), lda.predict(Xt))
    assert os_.rank_ == 3 and list(os_.n_components_per_class_) == [1, 1, 1, 1]


@pytest.mark.parametrize("rank", [1, 2])
def test_one_subclass_per_class_at_lower_rank_is_reduced_rank_lda(rank):
    X, y, Xt = four_classes(1)
    os_ = OptimalScoringMDA(n_components=1, rank=rank).fit(X, y)
    rr = ReducedRankMDA(n_components=1, rank=rank, reg_covar=0.0).fit(X, y)
    np.testing.assert_allclose(os_.predict_proba(Xt), rr.predict_proba(Xt), rtol=0, atol=TOL)
    np.testing.assert_array_equal(os_.predict(Xt), rr.predict(Xt))
    assert os_.transform(Xt).shape == (300, rank)


@pytest.mark.parametrize("rank", [1, 2, 4, 8])
def test_an_em_step_is_the_weighted_rank_reductions(rank):
    # from the same hard start, the responsibilities after optimal scoring's M-step and its E-step in the variates'
    # space equal those after MDA-RR's M-step (B.10, B.11) and E-step (4.5) in the whole space: the distances differ
    # by a term common to an object's subclasses
    rng = np.random.default_rng(3)
    X = rng.normal(size=(150, 6))
    X[:50] += 2.0
    X[50:100, :2] -= 2.0
    y = np.repeat([0, 1, 2], 50)
    W, sub_class, _ = kmeans_start(X, y, 3, lambda k: 7 + k)
    H = np.column_stack([np.ones(len(X)), X])
    fit = m_step(H, W, sub_class, rank)
    q_os = os_e_step(variate_distances(H @ fit.coef, fit), W, fit.sub_class, y, fit.log_weights)
    mix, _ = reduced_rank_m_step(Data.of(X - X.mean(0), y, np.full(3, 3)), W, None, min(rank, 6), 0.0, False)
    q_rr, _ = rr_e_step(Data.of(X - X.mean(0), y, np.full(3, 3)), mix)
    assert fit.rank == min(rank, 6)
    np.testing.assert_allclose(q_os, q_rr, rtol=0, atol=TOL)


def test_subclasses_recover_a_class_made_of_two_clusters():
    # class 0: two clusters on either side of class 1 along x_1 (LDA cannot separate them); with 2 subclasses per
    # class the test error is the Bayes rule's, within 2 SE of the paired difference (sqrt(discordant) / n)
    from scipy.stats import norm

    rng = np.random.default_rng(5)

    def draw(n):
        side = rng.integers(0, 2, n)
        a = rng.normal(size=(n, 4)) + np.where(side[:, None] == 1, 4.0, -4.0) * np.eye(4)[0]
        return np.vstack([a, rng.normal(size=(n, 4))]), np.repeat([0, 1], n)

    X, y = draw(150)
    Xt, yt = draw(1000)
    bayes = np.where(0.5 * norm.pdf(Xt[:, 0] - 4) + 0.5 * norm.pdf(Xt[:, 0] + 4) > norm.pdf(Xt[:, 0]), 0, 1)
    lda_error = np.mean(OptimalScoringMDA(n_components=1).fit(X, y).predict(Xt) != yt)
    mda = OptimalScoringMDA(n_components=2, random_state=0).fit(X, y)
    pred = mda.predict(Xt)
    assert lda_error > 0.3
    excess = np.mean(pred != yt) - np.mean(bayes != yt)
    assert abs(excess) <= 2 * np.sqrt(np.sum(pred != bayes)) / len(yt) + 1e-12, excess
    assert np.sort(mda.weights_[mda.component_class_ == 0]).round(1).tolist() == [0.5, 0.5]


def test_a_small_class_gets_one_subclass_and_bad_input_one_line():
    rng = np.random.default_rng(2)
    X = np.vstack([rng.normal(size=(20, 3)), rng.normal(size=(3, 3)) + 3])
    y = np.repeat(["big", "small"], [20, 3])
    model = OptimalScoringMDA(n_components=3, random_state=0).fit(X, y)
    assert list(model.n_components_per_class_) == [3, 1]  # as mda's kmeans.start: 3 objects for 3 subclasses
    assert list(model.component_class_) == ["big"] * 3 + ["small"]
    with pytest.raises(DataError) as e:
        model.predict(X[:, :2])
    one_line(e, "2 features")
    with pytest.raises(DataError) as e:
        OptimalScoringMDA().fit(X, np.zeros(len(X)))
    one_line(e, "at least 2 classes")
    with pytest.raises(NotFittedError):
        OptimalScoringMDA().predict(X)


def test_the_em_iterations_and_the_start_kept_matter():
    # EM moves the fit away from the k-means start (n_iter 1 against 5), and the start kept is the one of least
    # training misclassification by the nearest centre among the n_starts drawn (recomputed here from the draws)
    from hlm.base._seeds import derive_seed
    from hlm.mixture._posteriors import base_seed

    rng = np.random.default_rng(8)
    X = np.vstack([rng.normal(size=(60, 3)) * [3.0, 1.0, 1.0], rng.normal(size=(60, 3)) + [0.0, 1.5, 0.0]])
    y = np.repeat(["p", "q"], 60)
    one = OptimalScoringMDA(n_components=3, n_iter=1, random_state=4).fit(X, y)
    five = OptimalScoringMDA(n_components=3, n_iter=5, random_state=4).fit(X, y)
    assert one.start_error_ == five.start_error_
    assert np.abs(one.weights_ - five.weights_).max() > 1e-3
    base = base_seed(4)
    errors = []
    for s in range(5):
        W, sub_class, centres = kmeans_start(X, np.repeat([0, 1], 60), 3,
                                             lambda k, s=s: derive_seed(base, ["p", "q"][k], s, "mda-os") % 2**32)
        nearest = np.argmin(((X[:, None, :] - centres[None]) ** 2).sum(-1), axis=1)
        errors.append(np.mean(sub_class[nearest] != np.repeat([0, 1], 60)))
    assert len(set(errors)) > 1 and five.start_error_ == min(errors)


def test_a_class_with_fewer_distinct_rows_than_subclasses():
    # 12 rows, 2 distinct, 3 subclasses: k-means leaves one empty, the fit drops it, and no warning leaks out
    import warnings

    rng = np.random.default_rng(9)
    X = np.vstack([np.repeat([[0.0, 0.0], [1.0, 1.0]], 6, axis=0), rng.normal(size=(20, 2)) + 4])
    y = np.repeat([0, 1], [12, 20])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = OptimalScoringMDA(n_components=3, random_state=0).fit(X, y)
    assert model.n_components_per_class_.tolist() == [2, 3]
    assert (model.predict(X) == y).all()
