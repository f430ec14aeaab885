"""prepare_dataset on the real data sets and on users' own entries (paper 5.2)."""

import warnings
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pyreadr
import pytest
import scipy.io
import yaml

from hlm.data.artifacts import DistanceArtifact, read_distances, write_distances
from hlm.data.prepare import file_sha256, prepare_dataset
from hlm.data.registry import load_registry, validate_entry
from hlm.data.validation import DataWarning
from hlm.errors import DataError

ROOT = Path(__file__).resolve().parents[1]
REGISTRY = load_registry(ROOT / "config" / "datasets.yaml")

S = np.array(
    [
        [1.0, 0.8, 0.2, 0.1],
        [0.8, 1.0, 0.3, 0.2],
        [0.2, 0.3, 1.0, 0.9],
        [0.1, 0.2, 0.9, 1.0],
    ]
)
Y = ["x", "x", "y", "y"]


def one_line(exc, *needles):
    msg = str(exc.value)
    assert "\n" not in msg, msg
    for needle in needles:
        assert needle in msg, msg


def spec(name="mine", **entry):
    return validate_entry(name, entry)


# --- the real data sets ---------------------------------------------------

EXPECTED = {
    "aural_sonar": (100, {"1": 50, "2": 50}),
    "protein": (213, {"1": 72, "2": 72, "3": 39, "4": 30}),
    "voting": (435, {"1": 267, "2": 168}),
    "sonar": (208, {"M": 111, "R": 97}),
    "house_votes": (435, {"democrat": 267, "republican": 168}),
}


@pytest.mark.parametrize("name", list(EXPECTED))
def test_real_data_sets_prepare(name):
    with warnings.catch_warnings():
        warnings.simplefilter("error", DataWarning)
        art = prepare_dataset(REGISTRY[name], ROOT)
    n, counts = EXPECTED[name]
    D = art.distances
    assert D.shape == (n, n) and D.dtype == np.float64
    assert dict(Counter(art.labels.tolist())) == counts
    assert len(set(art.ids.tolist())) == n
    assert np.all(np.diag(D) == 0) and np.all(D >= 0) and np.array_equal(D, D.T)
    meta = art.metadata
    assert meta["dataset"] == name and meta["source"] == REGISTRY[name].path
    assert meta["sha256"] == REGISTRY[name].sha256
    assert meta["symmetrized"] is False
    if REGISTRY[name].format == "mat":
        assert meta["to_distance"] == "bound_minus" and meta["upper_bound"] == 1.0
        A = scipy.io.loadmat(ROOT / REGISTRY[name].path)["A"]
        np.testing.assert_allclose(D, 1.0 - A)
    else:
        assert meta["distance"] == REGISTRY[name].distance


def test_house_votes_vdm_tracks_uw_voting():
    """data/README.md 'house_votes vs voting': 1 - A is close to D / max D (VDM, q = 2)."""
    hv = prepare_dataset(REGISTRY["house_votes"], ROOT)
    vo = prepare_dataset(REGISTRY["voting"], ROOT)
    assert np.array_equal(vo.labels == "1", hv.labels == "democrat")  # same row order
    assert hv.metadata["uses_labels"] is True and hv.metadata["vdm_q"] == 2
    iu = np.triu_indices(435, 1)
    d, a = hv.distances[iu] / hv.distances.max(), vo.distances[iu]
    assert np.corrcoef(d, a)[0, 1] > 0.995
    assert np.median(np.abs(d - a)) < 0.005


def test_artifact_round_trip(tmp_path):
    art = prepare_dataset(REGISTRY["aural_sonar"], ROOT)
    write_distances(art, tmp_path / "a.parquet")
    back = read_distances(tmp_path / "a.parquet")
    np.testing.assert_array_equal(back.distances, art.distances)
    assert back.metadata["to_distance"] == "bound_minus"


# --- users' own entries ---------------------------------------------------


def test_fixture_registry_csv_with_ids_and_labels_by_id():
    reg = load_registry(ROOT / "tests" / "data" / "tiny_registry.yaml")
    art = prepare_dataset(reg["tiny"], ROOT / "tests" / "data")
    assert art.ids.tolist() == ["a", "b", "c", "d"]
    assert art.labels.tolist() == ["x", "x", "y", "y"]  # matched by id, not by line
    np.testing.assert_allclose(art.distances, 1.0 - S)
    assert art.metadata["labels_source"] == "tiny_labels.csv"


def test_mat_written_by_user(tmp_path):
    scipy.io.savemat(tmp_path / "my.mat", {"K": S, "lab": np.array([[1], [1], [2], [2]])})
    art = prepare_dataset(
        spec(
            path="my.mat", format="mat", matrix_key="K", labels_key="lab", kind="similarity", to_distance="reciprocal"
        ),
        tmp_path,
    )
    np.testing.assert_allclose(art.distances[0, 1], 1 / 0.8)
    assert art.metadata["to_distance"] == "reciprocal" and art.metadata["upper_bound"] is None


def test_npy_distance_with_plain_labels_and_asymmetry(tmp_path):
    D = 1.0 - S
    D[0, 1] += 0.2  # asymmetric, like Amazon-47 / Patrol
    np.save(tmp_path / "d.npy", D)
    (tmp_path / "y.txt").write_text("\n".join(Y) + "\n")
    art = prepare_dataset(spec(path="d.npy", format="npy", labels_path="y.txt", kind="distance"), tmp_path)
    assert art.metadata["symmetrized"] is True
    np.testing.assert_allclose(art.distances[0, 1], 0.3)
    assert art.ids.tolist() == ["0", "1", "2", "3"]


def test_parquet_square_table(tmp_path):
    pd.DataFrame(1.0 - S, columns=list("abcd")).to_parquet(tmp_path / "d.parquet")
    pd.DataFrame({"label": Y}).to_parquet(tmp_path / "y.parquet")
    art = prepare_dataset(
        spec(path="d.parquet", format="parquet", labels_path="y.parquet", kind="distance"), tmp_path
    )
    np.testing.assert_allclose(art.distances, 1.0 - S)


def test_parquet_distance_artifact_needs_no_labels_file(tmp_path):
    write_distances(DistanceArtifact(np.array(list("abcd")), np.array(Y), 1.0 - S), tmp_path / "d.parquet")
    art = prepare_dataset(spec(path="d.parquet", format="parquet", kind="distance"), tmp_path)
    assert art.labels.tolist() == Y and art.ids.tolist() == list("abcd")


def test_parquet_artifact_with_labels_path_is_an_error(tmp_path):
    write_distances(DistanceArtifact(np.array(list("abcd")), np.array(Y), 1.0 - S), tmp_path / "d.parquet")
    (tmp_path / "y.txt").write_text("\n".join(Y))
    with pytest.raises(DataError) as exc:
        prepare_dataset(spec(path="d.parquet", format="parquet", labels_path="y.txt", kind="distance"), tmp_path)
    one_line(exc, "dataset 'mine' (d.parquet)", "remove field 'labels_path'")


def test_parquet_matrix_without_labels_is_an_error(tmp_path):
    pd.DataFrame(1.0 - S).rename(columns=str).to_parquet(tmp_path / "d.parquet")
    with pytest.raises(DataError) as exc:
        prepare_dataset(spec(path="d.parquet", format="parquet", kind="distance"), tmp_path)
    one_line(exc, "dataset 'mine' (d.parquet): no labels; set field 'labels_path'")


def test_csv_vectors_table(tmp_path):
    (tmp_path / "t.csv").write_text("id,f1,f2,cls\np,0,0,a\nq,3,4,a\nr,6,8,b\ns,0,1,b\n")
    art = prepare_dataset(
        spec(path="t.csv", format="csv", kind="vectors", distance="euclidean", label_column="cls"), tmp_path
    )
    assert art.ids.tolist() == list("pqrs")
    np.testing.assert_allclose(art.distances[0, 1:], [5.0, 10.0, 1.0])


def test_rda_categorical_with_na_value(tmp_path):
    df = pd.DataFrame(
        {"v1": pd.Categorical(["y", "n", None, "y"]), "v2": pd.Categorical(["n", "n", "y", "y"]), "Class": Y}
    )
    pyreadr.write_rdata(str(tmp_path / "c.rda"), df, df_name="Votes")
    entry = dict(path="c.rda", format="rda", kind="categorical", distance="vdm", label_column="Class")
    art = prepare_dataset(spec(na_value="abstain", **entry), tmp_path)
    assert art.metadata["na_value"] == "abstain" and art.metadata["uses_labels"] is True
    assert art.distances.shape == (4, 4)
    with pytest.raises(DataError) as exc:
        prepare_dataset(spec(**entry), tmp_path)
    one_line(exc, "dataset 'mine' (c.rda): 1 missing values (first at row 3, column 'v1')", "na_value")


# --- errors ---------------------------------------------------------------


def test_missing_source_file(tmp_path):
    with pytest.raises(DataError) as exc:
        prepare_dataset(
            spec(path="data/raw/none.mat", format="mat", matrix_key="A", labels_key="C", kind="similarity"), tmp_path
        )
    one_line(exc, "dataset 'mine' (data/raw/none.mat): file not found")


def test_missing_labels_file(tmp_path):
    np.save(tmp_path / "d.npy", 1.0 - S)
    with pytest.raises(DataError) as exc:
        prepare_dataset(spec(path="d.npy", format="npy", labels_path="y.csv", kind="distance"), tmp_path)
    one_line(exc, "dataset 'mine' (y.csv): file not found")


def test_sha256_mismatch(tmp_path):
    np.save(tmp_path / "d.npy", 1.0 - S)
    (tmp_path / "y.txt").write_text("\n".join(Y))
    with pytest.raises(DataError) as exc:
        prepare_dataset(
            spec(path="d.npy", format="npy", labels_path="y.txt", kind="distance", sha256="0" * 64), tmp_path
        )
    one_line(exc, "dataset 'mine' (d.npy): SHA-256", "does not match field 'sha256'")
    assert len(file_sha256(tmp_path / "d.npy")) == 64


def test_label_count_and_ids_mismatch(tmp_path):
    np.save(tmp_path / "d.npy", 1.0 - S)
    (tmp_path / "y.txt").write_text("x\ny\ny\n")
    with pytest.raises(DataError) as exc:
        prepare_dataset(spec(path="d.npy", format="npy", labels_path="y.txt", kind="distance"), tmp_path)
    one_line(exc, "dataset 'mine' (d.npy): 3 labels for 4 objects")
    pd.DataFrame(S, index=list("abcd"), columns=list("abcd")).to_csv(tmp_path / "s.csv")
    (tmp_path / "l.csv").write_text("id,label\na,x\nb,x\nzz,y\n")
    with pytest.raises(DataError) as exc:
        prepare_dataset(spec(path="s.csv", format="csv", labels_path="l.csv", kind="similarity"), tmp_path)
    one_line(exc, "dataset 'mine' (l.csv): 2 objects have no label (ids 'c', 'd')")


def test_bad_matrix_errors_name_the_entry(tmp_path):
    np.save(tmp_path / "r.npy", np.ones((4, 3)))
    (tmp_path / "y.txt").write_text("\n".join(Y))
    with pytest.raises(DataError) as exc:
        prepare_dataset(spec(path="r.npy", format="npy", labels_path="y.txt", kind="distance"), tmp_path)
    one_line(exc, "dataset 'mine' (r.npy): matrix is not square (4 x 3)")
    bad = 1.0 - S
    bad[2, 3] = -0.5
    np.save(tmp_path / "n.npy", bad)
    with pytest.raises(DataError) as exc:
        prepare_dataset(spec(path="n.npy", format="npy", labels_path="y.txt", kind="distance"), tmp_path)
    one_line(exc, "dataset 'mine' (n.npy): distance matrix has 1 negative entries")
    zero = S.copy()
    zero[0, 3] = zero[3, 0] = 0.0
    zero[0, 0] = 0.9  # no obvious upper bound -> auto = reciprocal -> zero similarity is an error
    np.save(tmp_path / "z.npy", zero)
    with pytest.raises(DataError) as exc:
        prepare_dataset(spec(path="z.npy", format="npy", labels_path="y.txt", kind="similarity"), tmp_path)
    one_line(exc, "dataset 'mine' (z.npy): to_distance reciprocal needs positive similarities")


@pytest.mark.filterwarnings("ignore::hlm.data.validation.DataWarning")
def test_records_errors(tmp_path):
    (tmp_path / "t.csv").write_text("f1,f2,cls\n0,a,x\n1,b,y\n")
    entry = dict(path="t.csv", format="csv", kind="vectors", distance="euclidean")
    with pytest.raises(DataError) as exc:
        prepare_dataset(spec(label_column="label", **entry), tmp_path)
    one_line(exc, "dataset 'mine' (t.csv): label column 'label' not found; columns are: f1, f2, cls")
    with pytest.raises(DataError) as exc:
        prepare_dataset(spec(label_column="cls", **entry), tmp_path)
    one_line(exc, "dataset 'mine' (t.csv): kind vectors needs numeric columns; non-numeric: f2")
    (tmp_path / "u.csv").write_text("f1,cls\n0,x\n,y\n")
    with pytest.raises(DataError) as exc:
        prepare_dataset(spec(label_column="cls", **{**entry, "path": "u.csv"}), tmp_path)
    one_line(exc, "dataset 'mine' (u.csv): 1 missing/non-finite feature values (first at row 2, column 'f1')")


def test_one_class_and_single_member_class(tmp_path):
    np.save(tmp_path / "d.npy", 1.0 - S)
    (tmp_path / "y.txt").write_text("x\nx\nx\nx\n")
    entry = spec(path="d.npy", format="npy", labels_path="y.txt", kind="distance")
    with pytest.raises(DataError) as exc:
        prepare_dataset(entry, tmp_path)
    one_line(exc, "dataset 'mine' (d.npy): labels have 1 class(es)")
    (tmp_path / "y.txt").write_text("x\nx\nx\ny\n")
    with pytest.warns(DataWarning, match="single member"):
        prepare_dataset(entry, tmp_path)


def test_registry_yaml_end_to_end(tmp_path):
    """A new data set needs only a registry entry (no code)."""
    scipy.io.savemat(tmp_path / "mine.mat", {"A": S, "C": np.array([1, 1, 2, 2])})
    (tmp_path / "reg.yaml").write_text(
        yaml.safe_dump(
            {
                "my_data": {
                    "path": "mine.mat", "format": "mat", "matrix_key": "A", "labels_key": "C", "kind": "similarity"
                }
            }
        )
    )
    art = prepare_dataset(load_registry(tmp_path / "reg.yaml")["my_data"], tmp_path)
    assert art.metadata["to_distance"] == "bound_minus" and art.labels.tolist() == ["1", "1", "2", "2"]


def test_duplicate_ids_in_record_table(tmp_path):
    (tmp_path / "t.csv").write_text("id,f1,cls\np,0,a\np,1,a\nr,2,b\ns,3,b\n")
    with pytest.raises(DataError) as exc:
        prepare_dataset(
            spec(path="t.csv", format="csv", kind="vectors", distance="euclidean", label_column="cls"), tmp_path
        )
    one_line(exc, "dataset 'mine' (t.csv): duplicate ids 'p'")
