"""Mixture HLM without the N x N matrix (docs/scale-spec.md): equal to MixtureHLM where it clusters whole
classes, parameter recovery from samples, the largest distance block, and bad input."""

import numpy as np
import pytest
from scipy.spatial.distance import cdist
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from tests.messages import one_line

from hlm.distances._blocks import pairwise
from hlm.errors import DataError
from hlm.local_mapping._clara import ClaraMixtureHLM
from hlm.local_mapping._mixture_hlm import MixtureHLM


def blobs(n_per: int, d: int, seed: int, centres_per_class: int = 2, spread: float = 4.0, draw: int = 0):
    """3 classes of Gaussian blobs (unit covariance), each class ``centres_per_class`` blobs placed by
    ``seed``; ``draw`` seeds the objects drawn from them."""
    centres = np.random.default_rng(seed).normal(0, spread, size=(3, centres_per_class, d))
    rng = np.random.default_rng([seed, draw])
    X = [centres[k][rng.integers(centres_per_class, size=n_per)] + rng.normal(size=(n_per, d)) for k in range(3)]
    return np.concatenate(X), np.repeat(np.arange(3), n_per)


class Recorder:
    """A Euclidean distance that records the shape of every block asked of it."""

    def __init__(self):
        self.shapes = []

    def __call__(self, rows, cols):
        self.shapes.append((len(rows), len(cols)))
        return cdist(rows, cols)


@pytest.mark.parametrize("clustering", ["vsh", "gknn", "ward", "ward_d"])
def test_whole_classes_equal_mixture_hlm_on_the_full_matrix(clustering):
    """sample_size >= every class: the same clustering of each class (MixtureHLM's seeds, Ward's own
    partition) and the same distances, so the same prototypes, weights, shape and scales, and decisions."""
    X, y = blobs(60, 5, seed=1)
    order = np.random.default_rng(2).permutation(len(y))  # classes interleaved
    X, y = X[order], y[order]
    Xt, _ = blobs(40, 5, seed=1, draw=1)
    full = MixtureHLM(n_components=4, clustering=clustering).fit(cdist(X, X), y)
    clara = ClaraMixtureHLM(n_components=4, clustering=clustering, sample_size=60).fit(X, y)
    np.testing.assert_array_equal(clara.prototypes_, full.prototypes_)
    np.testing.assert_array_equal(clara.component_class_, full.component_class_)
    np.testing.assert_allclose(clara.weights_, full.weights_, rtol=1e-15)
    assert clara.shape_ == full.shape_
    np.testing.assert_allclose(clara.scales_, full.scales_, rtol=1e-12)
    np.testing.assert_array_equal(clara.predict(Xt), full.predict(cdist(Xt, X)))
    np.testing.assert_allclose(clara.predict_proba(Xt), full.predict_proba(cdist(Xt, X)), rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(clara.prototype_objects_, X[full.prototypes_])


@pytest.mark.parametrize("d", [4, 10])
def test_estimates_from_the_distances_to_the_prototypes(d):
    """One isotropic Gaussian per class (sd 1), one component each, prototypes from samples of 300 of 4,000.
    Brute force: the scales and shape are eq. 3 on u = ||x - eta_j||^2 of all members (log s - psi(s) =
    sum_j (n_j / N) log ubar_j - mean log u; b_j = (lam ubar_j + (1 - lam) ubar) / s, lam = n_j / (n_j + 1)).
    Recovery: u is noncentral chi^2_d with lambda_j = ||eta_j - mu_j||^2, so ubar_j is d + lambda_j within 3%, and the
    sample medoid is central (lambda_j < d / 2)."""
    from scipy.special import digamma

    rng = np.random.default_rng(d)
    X = rng.normal(size=(8000, d))
    y = np.repeat([0, 1], 4000)
    mu = np.where(y == 1, 40.0, 0.0)[:, None] * np.ones(d)
    X += mu
    model = ClaraMixtureHLM(n_components=1, sample_size=300, eval_size=1000).fit(X, y)
    u = [((X[y == j] - model.prototype_objects_[j]) ** 2).sum(axis=1) for j in (0, 1)]
    u = [uj[uj > 0] for uj in u]  # the prototype itself left out
    pooled = np.concatenate(u)
    s = model.shape_mle_
    n_j, ubar_j = np.array([uj.size for uj in u]), np.array([uj.mean() for uj in u])
    np.testing.assert_allclose(np.log(s) - digamma(s), n_j @ np.log(ubar_j) / n_j.sum() - np.log(pooled).mean(),
                               rtol=1e-9)
    lam = n_j / (n_j + 1.0)
    np.testing.assert_allclose(model.scales_, (lam * ubar_j + (1 - lam) * pooled.mean()) / s, rtol=1e-10)
    lam_true = np.array([((model.prototype_objects_[j] - mu[y == j][0]) ** 2).sum() for j in (0, 1)])
    assert (lam_true < d / 2).all()
    np.testing.assert_allclose(ubar_j, d + lam_true, rtol=0.03)


def test_never_forms_the_n_by_n_matrix_and_matches_the_full_fit():
    """3,000 objects, samples of 400 of each class's 1,000: no distance block larger than a sample's, the
    total distance of the prototypes within 1% of VSH on the whole classes, and the test error within
    1 point of MixtureHLM on the full matrix."""
    X, y = blobs(1000, 6, seed=4, centres_per_class=3, spread=2.5)
    Xt, yt = blobs(1000, 6, seed=4, centres_per_class=3, spread=2.5, draw=1)  # the same blobs, new objects
    record = Recorder()
    clara = ClaraMixtureHLM(n_components=3, distance=record, sample_size=400, eval_size=None, block_size=400,
                            n_samples=5).fit(X, y)
    assert max(r * c for r, c in record.shapes) <= 400 * 400
    assert max(r for r, _ in record.shapes) <= 400
    full = MixtureHLM(n_components=3).fit(cdist(X, X), y)

    def total(model):
        return sum(cdist(X[y == k], X[model.prototypes_[model.component_class_ == k]]).min(axis=1).sum()
                   for k in range(3))

    assert abs(total(clara) / total(full) - 1.0) <= 0.01  # VSH is a heuristic too: no order is guaranteed
    n_fit_calls = len(record.shapes)
    err_clara = np.mean(clara.predict(Xt) != yt)
    assert all(c == 9 and r <= 400 for r, c in record.shapes[n_fit_calls:])  # blocks x the 9 prototypes
    err_full = np.mean(full.predict(cdist(Xt, X)) != yt)
    assert 0.01 < err_full < 0.3  # the classes overlap: the comparison is not between two zeros
    assert abs(err_clara - err_full) <= 0.01


def test_more_samples_never_cost_more_on_the_evaluation_sample():
    """The samples come from one stream, so n_samples = 5 tries n_samples = 1's sample and 4 more: without
    refinement (whose draws follow the samples' in the stream), the prototypes it keeps have at most the
    same total distance to the evaluation sample (the whole class here), in every class."""
    X, y = blobs(800, 4, seed=8, centres_per_class=4)
    totals = []
    for n_samples in (1, 5):
        model = ClaraMixtureHLM(n_components=4, sample_size=40, eval_size=None, n_samples=n_samples, n_init=2,
                                refine=0).fit(X, y)
        totals.append([cdist(X[y == k], X[model.prototypes_[model.component_class_ == k]]).min(axis=1).sum()
                       for k in range(3)])
    assert all(five <= one for one, five in zip(*totals))
    assert any(five < one for one, five in zip(*totals))  # the comparison is not between equals


def test_raw_objects_sequences_by_hamming():
    """Strings through a named distance: equal to MixtureHLM on the full Hamming matrix."""
    rng = np.random.default_rng(9)
    motifs = ["ACGTACGTACGTACGTACGT", "TTTTGGGGCCCCAAAATTTT", "GATTACAGATTACAGATTAC"]
    seqs, y = [], []
    for k, motif in enumerate(motifs):
        for _ in range(30):
            s = list(motif)
            for i in rng.choice(len(s), 4, replace=False):
                s[i] = "ACGT"[rng.integers(4)]
            seqs.append("".join(s))
            y.append(k)
    y = np.array(y)
    clara = ClaraMixtureHLM(n_components=2, distance="hamming", sample_size=30).fit(seqs, y)
    full = MixtureHLM(n_components=2).fit(pairwise(seqs, seqs, "hamming"), y)
    np.testing.assert_array_equal(clara.prototypes_, full.prototypes_)
    np.testing.assert_allclose(clara.scales_, full.scales_, rtol=1e-12)
    np.testing.assert_array_equal(clara.predict(seqs[:10]), full.predict(pairwise(seqs[:10], seqs, "hamming")))


def test_estimator_api():
    X, y = blobs(20, 3, seed=10)
    model = ClaraMixtureHLM(n_components=2, sample_size=500)
    assert not model.__sklearn_tags__().input_tags.pairwise
    with pytest.raises(NotFittedError):
        model.predict(X)
    params = clone(model).get_params()
    assert params["sample_size"] == 500 and params["distance"] == "euclidean"
    fitted = model.fit(X, y)
    assert fitted.predict_proba(X).shape == (60, 3)
    np.testing.assert_allclose(fitted.predict_proba(X).sum(axis=1), 1.0)


def test_bad_input_is_one_line():
    X, y = blobs(20, 3, seed=11)
    with pytest.raises(DataError) as exc:
        ClaraMixtureHLM(distance="alignment").fit(X, y)
    one_line(exc, "similarity")
    with pytest.raises(DataError) as exc:
        ClaraMixtureHLM(distance=lambda a, b: -cdist(a, b) - 1.0).fit(X, y)
    one_line(exc, "class 0", "finite and non-negative")
    model = ClaraMixtureHLM(n_components=2).fit(X, y)
    with pytest.raises(DataError) as exc:
        model.predict(X[:, :2])
    one_line(exc, "2 features", "fitted on 3")
    with pytest.raises(DataError) as exc:
        ClaraMixtureHLM().fit(X, y[:-1])
    one_line(exc, "labels")
    with pytest.raises(DataError) as exc:
        ClaraMixtureHLM().fit(np.empty((0, 3)), [])
    one_line(exc, "empty")
    with pytest.raises(DataError) as exc:
        ClaraMixtureHLM(distance="hamming").fit([], [])
    one_line(exc, "at least one object")
    with pytest.raises(DataError) as exc:
        ClaraMixtureHLM(n_components=8, sample_size=5).fit(X, y)
    one_line(exc, "sample_size (5)", "n_components (8)")
    bad = X.copy()
    bad[7, 1] = np.nan
    with pytest.raises(DataError) as exc:
        ClaraMixtureHLM().fit(bad, y)
    one_line(exc, "NaN")
    order = np.random.default_rng(13).permutation(len(y))  # classes interleaved: X's positions are not a block's
    Xp, yp = X[order], y[order]
    first_of_1 = int(np.flatnonzero(yp == 1)[0])

    def broken(a, b):  # negative only between objects of class 1 (their first feature near class 1's)
        D = cdist(a, b)
        return np.where(np.isin(a[:, :1], X[y == 1, :1]) & np.isin(b[:, :1], X[y == 1, :1]).T, -1.0, D)

    with pytest.raises(DataError) as exc:  # objects named by their positions in X, not in a block
        ClaraMixtureHLM(distance=broken).fit(Xp, yp)
    one_line(exc, "class 1", f"between objects {first_of_1} and {first_of_1}")
    fitted = ClaraMixtureHLM(n_components=2, distance=lambda a, b: cdist(a, b)).fit(Xp, yp)
    test = Xp.copy()
    test[5, 0] = np.nan
    with pytest.raises(DataError) as exc:
        fitted.predict(test)
    one_line(exc, "object 5 of X and the prototype")
    assert not hasattr(ClaraMixtureHLM(n_components=2).fit(X, y).fit(list(X), y).set_params(
        distance=lambda a, b: cdist(a, b)).fit(list(X), y), "n_features_in_")  # a refit on other objects
    with pytest.raises(NotFittedError, match="ClaraMixtureHLM"):
        ClaraMixtureHLM().predict(X)
    fitted = ClaraMixtureHLM(n_components=2).fit(X.tolist(), y)  # a list of vectors is read as vectors
    assert fitted.n_features_in_ == 3
    with pytest.raises(DataError) as exc:
        fitted.predict([[1.0, 2.0]])
    one_line(exc, "fitted on 3")


def test_refining_never_raises_the_total_and_whole_classes_need_none():
    """Each accepted alternating step lowers the total distance to the evaluation sample. A class clustered
    whole is at VSH's swap optimum, where each prototype already is its cluster's 1-median (brute force), so
    refining it could not move a prototype (it is skipped)."""
    X, y = blobs(300, 4, seed=12, centres_per_class=3, spread=3.0)
    totals = {}
    for refine in (0, 1, 5):
        model = ClaraMixtureHLM(n_components=3, sample_size=60, eval_size=None, n_samples=2, n_init=2,
                                refine=refine).fit(X, y)
        P = model.prototype_objects_[model.component_class_ == 1]
        members = X[y == 1]
        totals[refine] = cdist(members, P).min(axis=1).sum()
    assert totals[5] <= totals[1] <= totals[0]
    assert totals[5] < totals[0]  # the samples of 60 leave room: the step is taken
    model = ClaraMixtureHLM(n_components=3, sample_size=300, eval_size=None, refine=5).fit(X, y)
    protos = model.prototypes_[model.component_class_ == 0]  # class 0 clustered whole: VSH's swap optimum
    members = np.flatnonzero(y == 0)
    assignment = cdist(X[members], X[protos]).argmin(axis=1)
    for j, p in enumerate(protos):  # at a swap optimum each prototype is its cluster's 1-median
        cluster_ = members[assignment == j]
        assert p == cluster_[cdist(X[cluster_], X[cluster_]).sum(axis=0).argmin()]
