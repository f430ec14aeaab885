"""Missing values in feature vectors: na_value, remove_at_random and missing: keep (docs/twoway-gmm-spec.md 8)."""

import dataclasses
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pyreadr
import pytest
import yaml

from hlm.datasets._prepare import load_vectors, prepare_dataset
from hlm.datasets._registry import RemoveAtRandom, load_registry, validate_entry
from hlm.datasets._validation import DataWarning
from hlm.errors import ConfigError, DataError
from messages import one_line

ROOT = Path(__file__).resolve().parents[2]
REGISTRY = load_registry(ROOT / "config" / "datasets.yaml", names=["sonar", "sonar_mcar5"])
CSV = {"path": "t.csv", "format": "csv", "kind": "vectors", "distance": "euclidean", "label_column": "cls"}




def spec(**entry):
    return validate_entry("mine", {**CSV, **entry})


def quiet_load(spec_, root):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)
        return load_vectors(spec_, root)


# --- remove_at_random ------------------------------------------------------------------------


def test_sonar_mcar5_blanks_624_of_12480_cells_and_nothing_else():
    sonar = load_vectors(REGISTRY["sonar"], ROOT)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mcar = load_vectors(REGISTRY["sonar_mcar5"], ROOT)
    nan = np.isnan(mcar.features)
    assert nan.sum() == 624 == round(0.05 * 208 * 60) and mcar.features.shape == (208, 60)
    np.testing.assert_array_equal(mcar.features[~nan], sonar.features[~nan])  # the other cells as read
    assert mcar.ids.tolist() == sonar.ids.tolist() and mcar.labels.tolist() == sonar.labels.tolist()
    # the definition: RandomState(1).permutation over the 12,480 cells in row-major order, the first 624
    chosen = np.random.RandomState(1).permutation(208 * 60)[:624]
    assert np.array_equal(np.sort(np.flatnonzero(nan.ravel())), np.sort(chosen))
    info = mcar.info
    assert info["remove_at_random"] == {"fraction": 0.05, "seed": 1, "cells_removed": 624, "cells": 12480}
    assert info["missing"] == "keep" and info["missing_cells"] == 624
    # spread over the data: no row or column holds more than a handful (binomial 60 x 0.05, 208 x 0.05)
    assert nan.sum(axis=1).max() <= 12 and nan.sum(axis=0).max() <= 25


def test_removal_is_reproducible_and_depends_on_the_seed():
    base = REGISTRY["sonar_mcar5"]
    masks = [np.isnan(load_vectors(s, ROOT).features) for s in
             (base, base, dataclasses.replace(base, remove_at_random=RemoveAtRandom(0.05, 2)))]
    assert np.array_equal(masks[0], masks[1])
    assert masks[2].sum() == 624 and not np.array_equal(masks[0], masks[2])


@pytest.mark.parametrize("fraction, removed", [(0.3, 6), (0.5, 10), (0.05, 1)])
def test_exact_count_among_the_observed_cells(tmp_path, fraction, removed):
    """round(f N p) cells of N p = 21, drawn among the observed ones: a cell missing in the file stays missing."""
    (tmp_path / "t.csv").write_text("f1,f2,f3,cls\n1,2,3,a\n4,,6,a\n7,8,9,a\n1,5,2,b\n3,3,7,b\n0,9,4,b\n2,2,8,b\n")
    rec = quiet_load(spec(remove_at_random={"fraction": fraction, "seed": 4}), tmp_path)
    nan = np.isnan(rec.features)
    assert nan[1, 1] and nan.sum() == 1 + removed
    assert rec.info["remove_at_random"]["cells_removed"] == removed and rec.info["missing_cells"] == 1 + removed
    observed = np.flatnonzero(np.arange(21) != 4)  # row 2, column f2 is empty in the file
    chosen = observed[np.random.RandomState(4).permutation(20)[:removed]]
    assert np.array_equal(np.flatnonzero(nan.ravel()), np.sort(np.append(chosen, 4)))


def test_removing_no_cell_or_more_than_observed_is_an_error(tmp_path):
    (tmp_path / "t.csv").write_text("f1,f2,cls\n1,2,a\n,,a\n3,4,b\n")
    with pytest.raises(DataError) as exc:
        load_vectors(spec(remove_at_random={"fraction": 0.01, "seed": 1}), tmp_path)
    one_line(exc, "dataset 'mine' (t.csv): field 'remove_at_random': fraction 0.01 of 6 cells removes no cell")
    with pytest.raises(DataError) as exc:
        load_vectors(spec(remove_at_random={"fraction": 0.9, "seed": 1}), tmp_path)
    one_line(exc, "fraction 0.9 of 6 cells is 5 cells, but only 4 are observed")


# --- missing: keep -------------------------------------------------------------------------------


def test_prepare_refuses_a_data_set_that_keeps_missing_values():
    with pytest.raises(DataError) as exc:
        prepare_dataset(REGISTRY["sonar_mcar5"], ROOT)
    one_line(exc, "dataset 'sonar_mcar5' (data/raw/Sonar.rda): keeps 624 missing feature values (missing: keep), "
             "so it has no distance matrix; only the protocols that read feature vectors (the two-way GMM's) "
             "can use it")


def test_keep_without_missing_values_prepares_as_usual(tmp_path):
    (tmp_path / "t.csv").write_text("f1,f2,cls\n0,0,a\n3,4,a\n6,8,b\n0,1,b\n")
    art = prepare_dataset(spec(missing="keep"), tmp_path)
    np.testing.assert_allclose(art.distances[0], [0, 5, 10, 1])
    assert art.metadata["missing"] == "keep" and art.metadata["missing_cells"] == 0


def test_keep_standardizes_and_finds_constants_on_the_observed_values(tmp_path):
    (tmp_path / "t.csv").write_text("f1,f2,f3,cls\n1,,5,a\n3,10,5,a\n,20,,b\n5,30,5,b\n")
    with pytest.warns(DataWarning, match=r"1 constant feature column\(s\): 'f3' \(value 5\)"):
        rec = load_vectors(spec(missing="keep", standardize=True), tmp_path)
    F = np.array([[1, np.nan, 5], [3, 10, 5], [np.nan, 20, np.nan], [5, 30, 5]])
    np.testing.assert_array_equal(rec.features, F)
    sd1, sd2 = np.std([1, 3, 5]), np.std([10, 20, 30])
    expected = np.array([[-2 / sd1, np.nan, 0], [0, -10 / sd2, 0], [np.nan, 0, np.nan], [2 / sd1, 10 / sd2, 0]])
    np.testing.assert_allclose(rec.X, expected, rtol=1e-12)
    assert rec.info["feature_mean"] == [3.0, 20.0, 5.0] and rec.info["feature_sd"][2] == 1.0


def test_keep_refuses_an_empty_feature_and_warns_on_an_empty_object(tmp_path):
    (tmp_path / "t.csv").write_text("f1,f2,cls\n1,,a\n2,,a\n3,,b\n4,,b\n")
    with pytest.raises(DataError) as exc:
        load_vectors(spec(missing="keep"), tmp_path)
    one_line(exc, "dataset 'mine' (t.csv): feature column(s) 'f2' have no observed value (missing: keep)")
    (tmp_path / "t.csv").write_text("f1,f2,cls\n1,4,a\n,,a\n3,6,b\n5,5,b\n")
    with pytest.warns(DataWarning, match=r"1 object\(s\) with every feature value missing \(ids '1'\)"):
        rec = load_vectors(spec(missing="keep"), tmp_path)
    assert np.isnan(rec.features[1]).all() and len(rec.ids) == 4


def test_without_a_strategy_the_error_offers_keep(tmp_path):
    (tmp_path / "t.csv").write_text("f1,f2,cls\n1,,a\n2,5,b\n")
    with pytest.raises(DataError) as exc:
        load_vectors(spec(), tmp_path)
    one_line(exc, "1 missing feature values (first at row 1, column 'f2')", "'missing: drop'", "'missing: keep'")


# --- na_value for vectors -----------------------------------------------------------------------


def test_a_sentinel_in_a_csv_becomes_nan_and_the_column_numeric(tmp_path):
    (tmp_path / "t.csv").write_text("f1,f2,f3,cls\n1.5,?,x,a\n2,4, ?,a\n?,6,x,b\n3,-1,x,b\n")
    rec = load_vectors(spec(na_value="?", missing="keep", drop_columns=["f3"]), tmp_path)
    np.testing.assert_array_equal(rec.features, [[1.5, np.nan], [2, 4], [np.nan, 6], [3, -1]])
    assert rec.info["na_value"] == "?" and rec.info["na_value_cells"] == 2  # f3 (dropped) not counted
    with pytest.raises(DataError) as exc:  # a text column stays text: the sentinel is not a conversion
        load_vectors(spec(na_value="?", missing="keep"), tmp_path)
    one_line(exc, "column 'f3' is not numeric (value 'x' at row 1)")
    with pytest.raises(DataError) as exc:  # read as NaN, then handled by `missing`
        load_vectors(spec(na_value="?", drop_columns=["f3"]), tmp_path)
    one_line(exc, "2 missing feature values (first at row 1, column 'f2')")
    drop = quiet_load(spec(na_value="?", drop_columns=["f3"], missing="drop"), tmp_path)
    assert drop.ids.tolist() == ["1", "3"]


def test_a_numeric_sentinel_blanks_equal_numbers(tmp_path):
    (tmp_path / "t.csv").write_text("f1,f2,cls\n-999,2,a\n1,-999.0,a\n-99.9,3,b\n4,5,b\n")
    rec = load_vectors(spec(na_value="-999", missing="keep"), tmp_path)
    np.testing.assert_array_equal(rec.features, [[np.nan, 2], [1, np.nan], [-99.9, 3], [4, 5]])
    assert rec.info["na_value_cells"] == 2


def test_a_sentinel_factor_level_becomes_nan(tmp_path):
    df = pd.DataFrame({"g": pd.Categorical(["1", "unknown", "3", "10"]), "h": [0.5, 1.5, 2.5, 3.5],
                       "Class": ["a", "a", "b", "b"]})
    pyreadr.write_rdata(str(tmp_path / "v.rda"), df, df_name="V")
    entry = {"path": "v.rda", "format": "rda", "kind": "vectors", "distance": "euclidean", "label_column": "Class"}
    rec = load_vectors(validate_entry("mine", {**entry, "na_value": "unknown", "factors": "numbers",
                                               "missing": "keep"}), tmp_path)
    np.testing.assert_array_equal(rec.features[:, 0], [1, np.nan, 3, 10])
    assert rec.info["na_value_cells"] == 1 and rec.info["factor_columns"] == ["g"]
    with pytest.raises(DataError) as exc:  # without the sentinel the level is a non-numeric one
        load_vectors(validate_entry("mine", {**entry, "factors": "numbers"}), tmp_path)
    one_line(exc, "factor with non-numeric levels ('unknown'; value 'unknown' at row 2)")


# --- the registry fields ---------------------------------------------------------------------------


VECTORS = {"path": "x.rda", "format": "rda", "kind": "vectors", "label_column": "Class", "distance": "euclidean"}


@pytest.mark.parametrize("changes, needle", [
    ({"remove_at_random": {"fraction": 0, "seed": 1}}, "field 'remove_at_random.fraction' must be in (0, 1) (got 0)"),
    ({"remove_at_random": {"fraction": 1, "seed": 1}}, "field 'remove_at_random.fraction' must be in (0, 1) (got 1)"),
    ({"remove_at_random": {"fraction": -0.1, "seed": 1}}, "must be in (0, 1) (got -0.1)"),
    ({"remove_at_random": {"fraction": 1.5, "seed": 1}}, "must be in (0, 1) (got 1.5)"),
    ({"remove_at_random": {"fraction": "5%", "seed": 1}}, "field 'remove_at_random.fraction' must be a number"),
    ({"remove_at_random": {"fraction": float("nan"), "seed": 1}},
     "field 'remove_at_random.fraction' must be a finite number (got nan)"),
    ({"remove_at_random": {"fraction": 0.05, "seed": -1}},
     "field 'remove_at_random.seed' must be in [0, 4294967295] (got -1)"),
    ({"remove_at_random": {"fraction": 0.05, "seed": 1.5}}, "field 'remove_at_random.seed' must be an integer"),
    ({"remove_at_random": {"fraction": 0.05}}, "field 'remove_at_random.seed' is required"),
    ({"remove_at_random": {"fraction": 0.05, "seed": 1, "sed": 2}},
     "field 'remove_at_random': unknown key 'sed' (known: fraction, seed)"),
    ({"remove_at_random": 0.05}, "field 'remove_at_random' must be a mapping (got 0.05)"),
    ({"remove_at_random": {"fraction": 0.05, "seed": 1}, "missing": "drop"},
     "field 'missing' must be one of keep with remove_at_random (got 'drop')"),
    ({"kind": "categorical", "distance": "vdm", "remove_at_random": {"fraction": 0.05, "seed": 1}},
     "field 'remove_at_random' is only allowed with kind vectors"),
    ({"kind": "categorical", "distance": "vdm", "missing": "keep"},
     "field 'missing' is only allowed with kind vectors"),
    ({"na_value": ""}, "field 'na_value' must not be empty"),
])
def test_missing_value_fields_are_checked(tmp_path, changes, needle):
    (tmp_path / "reg.yaml").write_text(yaml.safe_dump({"d": {**VECTORS, **changes}}))
    with pytest.raises(ConfigError) as exc:
        load_registry(tmp_path / "reg.yaml")
    one_line(exc, "reg.yaml: entry 'd': ", needle)


def test_remove_at_random_implies_keep_and_na_value_is_allowed_for_vectors():
    s = validate_entry("d", {**VECTORS, "remove_at_random": {"fraction": 0.05, "seed": 1}})
    assert s.missing == "keep" and s.remove_at_random == RemoveAtRandom(fraction=0.05, seed=1)
    assert validate_entry("d", {**VECTORS, "na_value": "?", "missing": "keep"}).na_value == "?"
    with pytest.raises(ConfigError) as exc:
        validate_entry("d", {"path": "a.mat", "format": "mat", "matrix_key": "A", "labels_key": "C",
                             "kind": "similarity", "na_value": "?"})
    one_line(exc, "field 'na_value' is only allowed with kind vectors/categorical")
