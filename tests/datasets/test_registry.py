"""Registry loading and schema errors (hlm.datasets._registry)."""

from pathlib import Path

import pytest
import yaml

from hlm.datasets._registry import DatasetSpec, get_spec, load_registry
from hlm.errors import ConfigError
from messages import one_line

ROOT = Path(__file__).resolve().parents[2]
BASE = {"path": "data/raw/my.mat", "format": "mat", "matrix_key": "A", "labels_key": "C", "kind": "similarity"}




def write(tmp_path, entries, name="datasets.yaml"):
    path = tmp_path / name
    path.write_text(yaml.safe_dump(entries) if not isinstance(entries, str) else entries)
    return path


def load_one(tmp_path, **changes):
    entry = {**BASE, **changes}
    entry = {k: v for k, v in entry.items() if v is not None}
    return load_registry(write(tmp_path, {"my_data": entry}))


def test_project_registry_has_every_data_set():
    reg = load_registry(ROOT / "config" / "datasets.yaml")
    assert list(reg) == ["aural_sonar", "protein", "voting", "sonar", "house_votes", "gunpoint", "japanese_vowels",
                         "basic_motions", "italy_power", "dna",
                         "iris", "wine", "pima", "glass", "ionosphere", "breast_cancer", "vehicle", "satellite",
                         "letter", "digits", "dna_indicators", "sonar_mcar5", "ringnorm", "ringnorm_mlbench",
                         "waveform", "ring", "twonorm", "banana", "segment"]
    assert (reg["gunpoint"].kind, reg["gunpoint"].distance, reg["gunpoint"].source) == ("series", "dtw", "GunPoint")
    assert (reg["dna"].kind, reg["dna"].encoding, reg["dna"].distance) == ("sequences", "statlog_indicators",
                                                                          "alignment")
    for spec in reg.values():
        assert isinstance(spec, DatasetSpec) and spec.description and spec.provenance and spec.licence
    assert reg["voting"].matrix_key == "A" and reg["voting"].labels_key == "C"
    assert reg["sonar"].distance == "euclidean" and reg["sonar"].label_column == "Class"
    assert reg["house_votes"].distance == "vdm" and reg["house_votes"].na_value == "abstain"
    bc = reg["breast_cancer"]
    assert (bc.drop_columns, bc.factors, bc.missing, bc.standardize) == (("Id",), "numbers", "drop", None)
    assert reg["pima"].standardize is True and reg["sonar"].standardize is None
    rn = reg["ringnorm"]
    assert (rn.format, rn.generator, rn.n_objects, rn.n_features, rn.kind, rn.path) == (
        "generated", "ringnorm_delve", 7400, 20, "vectors", None)
    mcar = reg["sonar_mcar5"]
    assert (mcar.missing, mcar.remove_at_random.fraction, mcar.remove_at_random.seed) == ("keep", 0.05, 1)
    assert mcar.path == reg["sonar"].path and mcar.sha256 == reg["sonar"].sha256
    assert reg["dna_indicators"].path == reg["dna"].path and reg["dna_indicators"].factors == "numbers"


VECTORS = {"path": "x.rda", "format": "rda", "kind": "vectors", "label_column": "Class", "distance": "euclidean"}


@pytest.mark.parametrize(
    "changes, needle",
    [
        ({"drop_columns": "Id"}, "field 'drop_columns' must be a list (got 'Id')"),
        ({"drop_columns": []}, "field 'drop_columns' must not be empty"),
        ({"drop_columns": ["Id", "Id"]}, "field 'drop_columns' names a column twice"),
        ({"drop_columns": [3]}, "field 'drop_columns' must be a string (got 3)"),
        ({"factors": "codes"}, "field 'factors' must be one of numbers (got 'codes')"),
        ({"missing": "mean"}, "field 'missing' must be one of drop, keep (got 'mean')"),
        ({"standardize": "yes please"}, "field 'standardize' must be true or false (got 'yes please')"),
        ({"kind": "categorical", "distance": "vdm", "missing": "drop"},
         "field 'missing' is only allowed with kind vectors"),
        ({"kind": "categorical", "distance": "vdm", "standardize": True},
         "field 'standardize' is only allowed with kind vectors"),
        ({"kind": "categorical", "distance": "vdm", "factors": "numbers"},
         "field 'factors' is only allowed with kind vectors"),
    ],
)
def test_vector_fields_are_checked(tmp_path, changes, needle):
    with pytest.raises(ConfigError) as exc:
        load_registry(write(tmp_path, {"d": {**VECTORS, **changes}}))
    one_line(exc, "entry 'd'", needle)


def test_vector_fields_only_with_records(tmp_path):
    with pytest.raises(ConfigError) as exc:
        load_one(tmp_path, drop_columns=["Id"])
    one_line(exc, "entry 'my_data'", "field 'drop_columns' is only allowed with kind vectors/categorical")
    with pytest.raises(ConfigError) as exc:
        load_one(tmp_path, standardize=False)
    one_line(exc, "entry 'my_data'", "field 'standardize' is only allowed with kind vectors")


def test_spec_round_trips_through_asdict():
    """The workflow passes an entry to its job as dataclasses.asdict(spec) (tuples kept)."""
    from dataclasses import asdict

    from hlm.datasets._registry import validate_entry

    names = ["breast_cancer", "sonar_mcar5", "ringnorm"]
    for name, spec in load_registry(ROOT / "config" / "datasets.yaml", names=names).items():
        entry = {k: v for k, v in asdict(spec).items() if v not in (None, "") and k != "name"}
        assert validate_entry(name, entry) == spec
        hash(spec)  # frozen all the way down (remove_at_random too)


def test_valid_entry_becomes_frozen_spec(tmp_path):
    reg = load_one(tmp_path, upper_bound=1, to_distance="bound_minus")
    spec = reg["my_data"]
    assert spec.name == "my_data" and spec.upper_bound == 1.0 and isinstance(spec.upper_bound, float)
    with pytest.raises(AttributeError):
        spec.path = "x"  # frozen
    assert spec.where == "dataset 'my_data' (data/raw/my.mat)"


def test_user_example_registry_in_fixtures():
    reg = load_registry(ROOT / "tests" / "data" / "tiny_registry.yaml")
    assert reg["tiny"].format == "csv" and reg["tiny"].labels_path == "tiny_labels.csv"


@pytest.mark.parametrize(
    "changes, needles",
    [
        (
            {"format": "xls"},
            ["field 'format' must be one of mat, csv, npy, parquet, rda, aeon, fasta, folder, generated, ts, arff, "
             "tsv (got 'xls')"],
        ),
        ({"kind": "kernel"}, ["field 'kind' must be one of"]),
        ({"matrx_key": "A"}, ["unknown field 'matrx_key'", "matrix_key"]),
        ({"matrix_key": None}, ["field 'matrix_key' is required with format mat"]),
        ({"path": None}, ["field 'path' is required"]),
        ({"kind": "vectors"}, ["field 'kind' must be one of similarity, distance with format mat"]),
        ({"to_distance": "log"}, ["field 'to_distance' must be one of auto, bound_minus"]),
        ({"upper_bound": "one"}, ["field 'upper_bound' must be a number (got 'one')"]),
        (
            {"to_distance": "reciprocal", "upper_bound": 2},
            ["field 'upper_bound' is not allowed with to_distance reciprocal"],
        ),
        (
            {"kind": "distance", "to_distance": "reciprocal"},
            ["field 'to_distance' is only allowed with kind similarity"],
        ),
        ({"label_column": "Class"}, ["field 'label_column' is not allowed with kind similarity/distance"]),
        ({"labels_path": "y.csv"}, ["field 'labels_path' is not allowed with format mat"]),
        ({"na_value": "x"}, ["field 'na_value' is only allowed with kind vectors/categorical"]),
        ({"sha256": "abc"}, ["field 'sha256' must be 64 lowercase hex digits"]),
    ],
)
def test_schema_errors_are_one_line_config_errors(tmp_path, changes, needles):
    with pytest.raises(ConfigError) as exc:
        load_one(tmp_path, **changes)
    msg = one_line(exc, "datasets.yaml: entry 'my_data': ", *needles)
    assert "Traceback" not in msg


@pytest.mark.parametrize(
    "entry, needle",
    [
        (
            {"path": "x.rda", "format": "rda", "kind": "vectors", "label_column": "Class"},
            "field 'distance' is required with kind vectors/categorical",
        ),
        (
            {"path": "x.rda", "format": "rda", "kind": "vectors", "label_column": "Class", "distance": "vdm"},
            "field 'distance' must be one of euclidean, cityblock, cosine with kind vectors (got 'vdm')",
        ),
        (
            {"path": "x.rda", "format": "rda", "kind": "similarity"},
            "field 'kind' must be one of vectors, categorical, sequences with format rda",
        ),
        ({"path": "x.npy", "format": "npy", "kind": "distance"}, "field 'labels_path' is required with format npy"),
        ({"path": "x.csv", "format": "csv", "kind": "distance"}, "field 'labels_path' is required with format csv"),
        (
            {"path": "x.csv", "format": "csv", "kind": "distance", "labels_path": "y", "object": "o"},
            "field 'object' is only allowed with format rda",
        ),
        (
            {"path": "x.csv", "format": "csv", "kind": "series", "distance": "dtw", "labels_path": "y.csv"},
            "field 'labels_path' is not allowed with format csv and kind series (labels are the CSV's label column)",
        ),
    ],
)
def test_conditional_schema_errors(tmp_path, entry, needle):
    with pytest.raises(ConfigError) as exc:
        load_registry(write(tmp_path, {"d": entry}))
    one_line(exc, "entry 'd'", needle)


def test_other_formats_validate(tmp_path):
    entries = {
        "a": {"path": "a.csv", "format": "csv", "kind": "distance", "labels_path": "l.csv"},
        "b": {"path": "b.npy", "format": "npy", "kind": "similarity", "labels_path": "l.npy", "to_distance": "neg_log"},
        "c": {"path": "c.parquet", "format": "parquet", "kind": "distance"},
        "d": {"path": "d.csv", "format": "csv", "kind": "vectors", "label_column": "y", "distance": "euclidean"},
        "e": {
            "path": "e.rda", "format": "rda", "object": "E", "kind": "categorical",
            "label_column": "y", "distance": "vdm",
        },
    }
    assert list(load_registry(write(tmp_path, entries))) == list("abcde")


@pytest.mark.parametrize(
    "text, needle",
    [
        ("a: [1, 2\n", "not valid YAML at line"),
        ("- a\n- b\n", "expected a mapping of data set names"),
        ("", "registry is empty"),
        ("x: 3\n", "entry 'x' must be a mapping of fields (got int)"),
        ("'bad name':\n  path: a\n", "data set name 'bad name' must start with a letter"),
    ],
)
def test_file_level_errors(tmp_path, text, needle):
    with pytest.raises(ConfigError) as exc:
        load_registry(write(tmp_path, text))
    one_line(exc, "datasets.yaml", needle)


def test_missing_registry_file(tmp_path):
    with pytest.raises(ConfigError) as exc:
        load_registry(tmp_path / "nope.yaml")
    one_line(exc, "nope.yaml", "not found")


def test_get_spec_unknown_name_lists_known(tmp_path):
    reg = load_one(tmp_path)
    assert get_spec(reg, "my_data").name == "my_data"
    with pytest.raises(ConfigError) as exc:
        get_spec(reg, "voting")
    one_line(exc, "unknown data set 'voting'", "known data sets: my_data")
