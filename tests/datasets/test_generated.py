"""Generated data sets (format: generated; hlm.datasets._generated): Ringnorm, docs/llc-pc-spec.md 7 test 15."""

import dataclasses
import hashlib
import warnings
from pathlib import Path

import numpy as np
import pytest
import yaml
from scipy.spatial.distance import cdist
from scipy.stats import multivariate_normal

from hlm.datasets._generated import generate, generated_sha256, ringnorm, ringnorm_bayes
from hlm.datasets._prepare import load_vectors, prepare_dataset
from hlm.datasets._registry import load_registry, validate_entry
from hlm.errors import ConfigError, DataError
from messages import one_line

ROOT = Path(__file__).resolve().parents[2]
RINGNORM = load_registry(ROOT / "config" / "datasets.yaml", names=["ringnorm_mlbench"])["ringnorm_mlbench"]
D = 20
A = 1 / np.sqrt(D)
ENTRY = {"format": "generated", "generator": "ringnorm", "n_objects": 40, "n_features": 3, "seed": 7,
         "kind": "vectors", "distance": "euclidean"}




@pytest.fixture(scope="module")
def draw():
    """20,000 Ringnorm objects in 20 dimensions (the spec's Bayes-rule sample)."""
    return ringnorm(20_000, D, seed=11)


@pytest.mark.parametrize("n", [7400, 7401, 2, 3])
def test_class_sizes_are_floor_half_and_the_rest(n):
    X, y = ringnorm(n, 4, seed=0)
    assert X.shape == (n, 4) and X.dtype == np.float64
    assert (y == "2").sum() == n // 2 and (y == "1").sum() == n - n // 2


def test_class_means_and_variances_within_four_standard_errors(draw):
    """Class "2" ~ N(a1, I), a = 1/sqrt(20); class "1" ~ N(0, 4I); per feature, and pooled over features."""
    X, y = draw
    for label, mean, var in (("2", A, 1.0), ("1", 0.0, 4.0)):
        Z = X[y == label]
        n = len(Z)
        assert np.all(np.abs(Z.mean(axis=0) - mean) < 4 * np.sqrt(var / n))
        assert np.all(np.abs(Z.var(axis=0, ddof=1) - var) < 4 * var * np.sqrt(2 / (n - 1)))
        assert abs(Z.mean() - mean) < 4 * np.sqrt(var / Z.size)  # a = 1/sqrt(20), not mlbench 1.x's 2/sqrt(20)
        C = np.corrcoef(Z, rowvar=False)[np.triu_indices(D, 1)]
        assert np.all(np.abs(C) < 4 / np.sqrt(n))  # independent features


def test_bayes_rule_is_the_density_comparison_and_scores_98_5_percent(draw):
    X, y = draw
    head = X[:500]
    brute = np.where(multivariate_normal(np.full(D, A), np.eye(D)).logpdf(head)
                     > multivariate_normal(np.zeros(D), 4 * np.eye(D)).logpdf(head), "2", "1")
    assert ringnorm_bayes(head).tolist() == brute.tolist()
    accuracy = (ringnorm_bayes(X) == y).mean()
    assert abs(accuracy - 0.985) < 0.005, accuracy


def test_same_seed_same_bytes():
    first, again, other = (generate("ringnorm", 300, D, s) for s in (5, 5, 6))
    assert first.sha256 == again.sha256 and np.array_equal(first.X, again.X)
    assert first.sha256 != other.sha256
    # the digest's layout: X as little-endian float64 in C order, then each label + newline, UTF-8
    layout = hashlib.sha256(first.X.astype("<f8").tobytes() + "".join(f"{y}\n" for y in first.labels).encode())
    assert first.sha256 == layout.hexdigest() == generated_sha256(first.X, first.labels)
    assert generated_sha256(first.X, first.labels[::-1]) != first.sha256  # the labels count


def test_registry_entry_loads_with_its_pinned_sha256():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rec = load_vectors(RINGNORM, ROOT)
    assert rec.features.shape == (7400, 20) and np.isfinite(rec.features).all()
    assert rec.ids.tolist() == [str(i) for i in range(7400)]
    assert (rec.labels == "1").sum() == 3700 and (rec.labels == "2").sum() == 3700
    assert rec.columns == [f"x.{j}" for j in range(1, 21)]
    assert generated_sha256(rec.features, rec.labels) == RINGNORM.sha256
    assert RINGNORM.sha256 in (ROOT / "data" / "README.md").read_text()
    changed = dataclasses.replace(RINGNORM, seed=RINGNORM.seed + 1)
    with pytest.raises(DataError) as exc:
        load_vectors(changed, ROOT)
    one_line(exc, "dataset 'ringnorm_mlbench' (generator ringnorm): the generated data's SHA-256",
             "does not match field 'sha256'")


def test_prepare_dataset_on_a_small_generated_entry(tmp_path):
    spec = validate_entry("rn", ENTRY)
    art = prepare_dataset(spec, tmp_path)  # reads no file
    X, y = ringnorm(40, 3, seed=7)
    np.testing.assert_allclose(art.distances, cdist(X, X), rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(art.vectors, X)
    assert art.labels.tolist() == y.tolist() and art.ids.tolist() == [str(i) for i in range(40)]
    meta = art.metadata
    assert meta["source"] == "generator ringnorm" and meta["sha256"] == generated_sha256(X, y)
    assert meta["generator"] == {"name": "ringnorm", "n_objects": 40, "n_features": 3, "seed": 7}
    assert meta["class_counts"] == {"1": 20, "2": 20}
    z = prepare_dataset(validate_entry("rn", {**ENTRY, "standardize": True}), tmp_path)
    Z = (X - X.mean(axis=0)) / X.std(axis=0)
    np.testing.assert_allclose(z.distances, cdist(Z, Z), rtol=1e-12, atol=1e-12)


def test_generated_entry_in_a_registry_file(tmp_path):
    (tmp_path / "reg.yaml").write_text(yaml.safe_dump({"rn": {**ENTRY, "seed": 3}}))
    spec = load_registry(tmp_path / "reg.yaml")["rn"]
    assert spec.where == "dataset 'rn' (generator ringnorm)" and isinstance(spec.seed, int)
    assert load_vectors(spec, tmp_path).features.shape == (40, 3)


@pytest.mark.parametrize("changes, needle", [
    ({"path": "x.csv"}, "field 'path' is not allowed with format aeon/generated"),
    ({"seed": None}, "field 'seed' is required with format generated"),
    ({"generator": "twonorm"}, "field 'generator' must be one of ringnorm, ringnorm_delve, waveform (got 'twonorm')"),
    ({"kind": "similarity", "distance": None}, "field 'kind' must be one of vectors with format generated"),
    ({"label_column": "Class"}, "field 'label_column' is not allowed with format generated"),
    ({"factors": "numbers"}, "field 'factors' is not allowed with format generated"),
    ({"n_objects": 1}, "field 'n_objects' must be at least 2 (got 1)"),
    ({"n_features": 0}, "field 'n_features' must be at least 1 (got 0)"),
    ({"n_objects": 7.5}, "field 'n_objects' must be an integer (got 7.5)"),
    ({"seed": -1}, "field 'seed' must be in [0, 4294967295] (got -1)"),
    ({"seed": 2**32}, "field 'seed' must be in [0, 4294967295] (got 4294967296)"),
    ({"distance": None}, "field 'distance' is required with kind vectors/categorical"),
    ({"generator": "waveform", "n_features": 20}, "field 'n_features' must be one of 21 with generator waveform"),
])
def test_generated_fields_are_checked(changes, needle):
    entry = {k: v for k, v in {**ENTRY, **changes}.items() if v is not None}
    with pytest.raises(ConfigError) as exc:
        validate_entry("rn", entry, source="reg.yaml")
    one_line(exc, "reg.yaml: entry 'rn': ", needle)


@pytest.mark.parametrize("field", ["generator", "n_objects", "n_features", "seed"])
def test_generator_fields_only_with_format_generated(field):
    entry = {"path": "x.csv", "format": "csv", "kind": "vectors", "label_column": "y", "distance": "euclidean",
             field: ENTRY[field]}
    with pytest.raises(ConfigError) as exc:
        validate_entry("d", entry)
    one_line(exc, f"field '{field}' is only allowed with format generated")


def test_delve_variant_differs_only_in_the_shift():
    """DELVE's ringnorm (the registry's `ringnorm`, the LLC-PC paper's): class "2" ~ N(2/sqrt(20) 1, I), the
    same draws as mlbench's otherwise; its Bayes rule scores 98.8 % (98.78 % on 200,000 draws, measured)."""
    from hlm.datasets._generated import ringnorm_delve

    X, y = ringnorm_delve(20_000, D, seed=11)
    Xm, ym = ringnorm(20_000, D, seed=11)
    assert y.tolist() == ym.tolist() and np.array_equal(X[y == "1"], Xm[ym == "1"])
    np.testing.assert_allclose(X[y == "2"] - Xm[ym == "2"], 1 / np.sqrt(D), rtol=0, atol=1e-12)
    Z = X[y == "2"]
    assert abs(Z.mean() - 2 / np.sqrt(D)) < 4 * np.sqrt(1 / Z.size)
    assert abs((ringnorm_bayes(X, shift=2.0) == y).mean() - 0.988) < 0.005
    entry = load_registry(ROOT / "config" / "datasets.yaml", names=["ringnorm"])["ringnorm"]
    assert entry.generator == "ringnorm_delve"
    rec = load_vectors(entry, ROOT)
    assert generated_sha256(rec.features, rec.labels) == entry.sha256


# Waveform (docs/subspace-gmm-spec.md; data/README.md): parameter recovery from a large draw.


@pytest.fixture(scope="module")
def waveform_draw():
    from hlm.datasets._generated import waveform

    return waveform(30_000, 21, seed=5)


def test_waveform_base_waves_are_the_triangles():
    from hlm.datasets._generated import waveform_bases

    h = waveform_bases()
    assert h.shape == (3, 21)
    # peaks of height 6 at j = 11, 15, 7 (1-based), support 11 values wide, h2 and h3 are h1 shifted by 4
    assert [int(np.argmax(w)) + 1 for w in h] == [11, 15, 7] and np.all(h.max(axis=1) == 6)
    assert np.array_equal(h[1, 4:], h[0, :-4]) and np.array_equal(h[2, :-4], h[0, 4:])
    assert np.all((h > 0).sum(axis=1) == 11)


def test_waveform_class_moments_match_the_model(waveform_draw):
    """Class k = u h_a + (1-u) h_b + e: mean (h_a + h_b)/2, covariance I + (h_a - h_b)(h_a - h_b)^T / 12.

    Tolerances: 5 standard errors of each mean (sd / sqrt(n_k)) and, for the covariance entries, 5 SE of a
    sample covariance of Gaussian-like variables (sqrt((s_ii s_jj + s_ij^2) / n_k))."""
    from hlm.datasets._generated import WAVEFORM_PAIRS, waveform_bases

    X, y = waveform_draw
    h = waveform_bases()
    sizes = [int((y == str(k + 1)).sum()) for k in range(3)]
    # equally likely classes: each count within 5 binomial SEs of n/3
    n = len(y)
    assert all(abs(m - n / 3) < 5 * np.sqrt(n * (1 / 3) * (2 / 3)) for m in sizes)
    for k, (a, b) in enumerate(WAVEFORM_PAIRS):
        Xk = X[y == str(k + 1)]
        nk = len(Xk)
        diff = h[a] - h[b]
        cov = np.eye(21) + np.outer(diff, diff) / 12.0
        sd = np.sqrt(np.diag(cov))
        assert np.all(np.abs(Xk.mean(axis=0) - (h[a] + h[b]) / 2) < 5 * sd / np.sqrt(nk))
        se = np.sqrt((np.outer(np.diag(cov), np.diag(cov)) + cov**2) / nk)
        assert np.all(np.abs(np.cov(Xk, rowvar=False) - cov) < 5 * se)


def test_waveform_registry_entry_draws_its_pinned_sha():
    entry = load_registry(ROOT / "config" / "datasets.yaml", names=["waveform"])["waveform"]
    g = generate(entry.generator, entry.n_objects, entry.n_features, entry.seed)
    assert g.sha256 == entry.sha256 and g.X.shape == (800, 21)
    assert load_vectors(entry).X.shape == (800, 21)


def test_waveform_needs_21_features():
    from hlm.datasets._generated import waveform

    with pytest.raises(ValueError, match="21"):
        waveform(10, 20, seed=0)
