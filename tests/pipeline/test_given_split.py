"""The archive's own train/test split (registry ``split: given``): the splits stage, its refusals, and the
registry's rules for the field."""

import numpy as np
import pandas as pd
import pytest

from hlm.datasets._registry import validate_entry
from hlm.errors import ConfigError, DataError
from hlm.pipeline.evaluation.splits import given_split, split_indices


def test_the_stage_writes_the_archive_split_as_split_0(tmp_path):
    from hlm.datasets._artifacts import read_metadata
    from hlm.pipeline.stages.data import splits

    ids = [f"train-{k}" for k in range(3)] + [f"test-{k}" for k in range(4)]
    pd.DataFrame({"id": ids}).to_parquet(tmp_path / "d.parquet")
    splits(str(tmp_path / "d.parquet"), str(tmp_path / "s.parquet"), dataset="x", n_splits=None,
           test_fraction=None, seed=None, given=True)
    table = pd.read_parquet(tmp_path / "s.parquet")
    assert table["split"].unique().tolist() == [0]
    train, test = split_indices(table, 0)
    assert train.tolist() == [0, 1, 2] and test.tolist() == [3, 4, 5, 6]
    assert read_metadata(tmp_path / "s.parquet")["split"] == "given"


@pytest.mark.parametrize("ids, message", [
    (["train-0", "7", "test-0"], "dataset 'x': split given, but object '7' is in neither part"),
    (["train-0", "train-1"], "dataset 'x': split given, but no test objects"),
])
def test_ids_outside_the_parts_are_refused(ids, message):
    with pytest.raises(DataError, match=f"^{message}"):
        given_split(ids, dataset="x")


@pytest.mark.parametrize("entry, message", [
    ({"path": "a.ts", "format": "ts"}, "split given needs the archive's TEST file in field 'test_path'"),
    ({"path": "a.csv", "format": "csv"}, "field 'format' must be one of aeon, ts, arff, tsv with split given"),
])
def test_the_registry_rules_of_split(entry, message):
    with pytest.raises(ConfigError, match=message):
        validate_entry("x", {**entry, "kind": "series", "distance": "dtw", "split": "given"})


def test_an_aeon_set_and_a_test_file_take_it():
    assert validate_entry("x", {"format": "aeon", "source": "GunPoint", "kind": "series", "distance": "dtw",
                                "split": "given"}).split == "given"
    assert validate_entry("x", {"path": "a.ts", "test_path": "b.ts", "format": "ts", "kind": "series",
                                "distance": "dtw", "split": "given"}).split == "given"


def test_window_with_the_euclidean_distance_is_refused():
    with pytest.raises(ConfigError, match=r"distance euclidean has no parameter 'window' \(its parameters: none\)"):
        validate_entry("x", {"path": "a.csv", "format": "csv", "kind": "series", "distance": "euclidean",
                             "window": 0.1})


def test_euclidean_on_series_of_two_shapes_is_one_line():
    from hlm.distances import pairwise

    with pytest.raises(DataError, match=r"the Euclidean distance needs objects of one shape \(got \(3,\) and \(4,\)\)"):
        pairwise([np.arange(3.0), np.arange(4.0)], [np.arange(3.0)], "euclidean")
