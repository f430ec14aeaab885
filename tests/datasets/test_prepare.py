"""prepare_dataset on the real data sets and on users' own entries (paper 5.2)."""

import re
import warnings
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pyreadr
import pytest
import scipy.io
import yaml

from hlm.datasets._artifacts import DistanceArtifact, read_distances, write_distances
from hlm.datasets._prepare import file_sha256, load_vectors, prepare_dataset
from hlm.datasets._registry import load_registry, validate_entry
from hlm.datasets._validation import DataWarning
from hlm.distances._vdm import value_difference_metric
from hlm.errors import DataError
from messages import one_line

ROOT = Path(__file__).resolve().parents[2]
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
    if REGISTRY[name].kind == "categorical":  # the VDM uses labels: records, built per fit set
        assert art.distances is None and art.records.shape == (n, 16) and art.records.dtype == np.int64
        D = value_difference_metric(art.records, art.labels)
    else:
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
    assert hv.conversion == "vdm" and hv.metadata["values"]["V1"] == ["abstain", "n", "y"]
    D = value_difference_metric(hv.records, hv.labels, q=hv.metadata["vdm_q"])  # all labels, as the UW file
    iu = np.triu_indices(435, 1)
    d, a = D[iu] / D.max(), vo.distances[iu]
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
    assert art.distances is None and art.records.tolist() == [[2, 0], [1, 0], [0, 1], [2, 1]]
    assert art.metadata["values"] == {"v1": ["abstain", "n", "y"], "v2": ["n", "y"]}
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


@pytest.mark.filterwarnings("ignore::hlm.datasets._validation.DataWarning")
def test_records_errors(tmp_path):
    (tmp_path / "t.csv").write_text("f1,f2,cls\n0,a,x\n1,b,y\n")
    entry = dict(path="t.csv", format="csv", kind="vectors", distance="euclidean")
    with pytest.raises(DataError) as exc:
        prepare_dataset(spec(label_column="label", **entry), tmp_path)
    one_line(exc, "dataset 'mine' (t.csv): label column 'label' not found; columns are: f1, f2, cls")
    with pytest.raises(DataError) as exc:
        prepare_dataset(spec(label_column="cls", **entry), tmp_path)
    one_line(exc, "dataset 'mine' (t.csv): kind vectors needs numbers; column 'f2' is not numeric "
             "(value 'a' at row 1); if it is not a feature, drop it with field 'drop_columns'")
    (tmp_path / "u.csv").write_text("f1,cls\n0,x\n,y\n")
    with pytest.raises(DataError) as exc:
        prepare_dataset(spec(label_column="cls", **{**entry, "path": "u.csv"}), tmp_path)
    one_line(exc, "dataset 'mine' (u.csv): 1 missing feature values (first at row 2, column 'f1'); "
             "set field 'missing: drop'")
    (tmp_path / "v.csv").write_text("f1,cls\n0,x\ninf,y\n")
    with pytest.raises(DataError) as exc:  # infinite is never 'missing'
        prepare_dataset(spec(label_column="cls", missing="drop", **{**entry, "path": "v.csv"}), tmp_path)
    one_line(exc, "dataset 'mine' (v.csv): 1 infinite feature values (first at row 2, column 'f1')")


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


# --- kind vectors: factors, drop_columns, missing, constant features, standardize -------------

VEC = dict(path="v.rda", format="rda", kind="vectors", distance="euclidean", label_column="Class")


def write_rda(tmp_path, frame, name="v.rda"):
    pyreadr.write_rdata(str(tmp_path / name), frame, df_name="V")


def factor_frame():
    """Row names p..u; `grade` a factor whose level order is not numeric order, `Id` text."""
    return pd.DataFrame(
        {
            "Id": ["1001", "1002", "1001", "1004", "1005", "1006"],
            "grade": pd.Categorical(["10", "2", "0.5", "2", "10", "0.5"], categories=["2", "10", "0.5"]),
            "size": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
            "Class": ["a", "a", "a", "b", "b", "b"],
        },
        index=list("pqrstu"),
    )


def test_factor_levels_become_their_numbers_not_codes(tmp_path):
    write_rda(tmp_path, factor_frame())
    art = prepare_dataset(spec(drop_columns=["Id"], factors="numbers", **VEC), tmp_path)
    np.testing.assert_array_equal(art.vectors[:, 0], [10, 2, 0.5, 2, 10, 0.5])  # codes would be 1, 0, 2, ...
    np.testing.assert_array_equal(art.vectors[:, 1], np.arange(1, 7))
    assert art.ids.tolist() == list("pqrstu")
    meta = art.metadata
    assert meta["features"] == ["grade", "size"] and meta["drop_columns"] == ["Id"]
    assert meta["factors"] == "numbers" and meta["factor_columns"] == ["grade"]
    assert np.isclose(art.distances[0, 1], np.hypot(8, 1))


def test_factor_columns_need_the_factors_field(tmp_path):
    write_rda(tmp_path, factor_frame().drop(columns="Id"))
    with pytest.raises(DataError) as exc:
        prepare_dataset(spec(**VEC), tmp_path)
    one_line(exc, "dataset 'mine' (v.rda): column 'grade' is a factor (levels '2', '10', '0.5'); "
             "set field 'factors: numbers'")


def test_a_factor_with_non_numeric_levels_is_an_error(tmp_path):
    frame = factor_frame().drop(columns="Id")
    frame["colour"] = pd.Categorical(["1", "2", "1", "red", "2", "nan"])
    write_rda(tmp_path, frame)
    with pytest.raises(DataError) as exc:
        prepare_dataset(spec(factors="numbers", **VEC), tmp_path)
    # 'nan' parses as a float but is no number
    one_line(exc, "dataset 'mine' (v.rda): kind vectors needs numbers; column 'colour' is a factor with "
             "non-numeric levels ('nan', 'red'; value 'red' at row 4 (id 's'))")


def test_a_text_column_is_an_error_naming_it_and_the_others(tmp_path):
    write_rda(tmp_path, factor_frame())
    with pytest.raises(DataError) as exc:
        prepare_dataset(spec(**VEC), tmp_path)
    one_line(exc, "dataset 'mine' (v.rda): kind vectors needs numbers; column 'Id' is not numeric "
             "(value '1001' at row 1 (id 'p')); if it is not a feature, drop it with field 'drop_columns'; "
             "other columns to fix: 'grade'")


@pytest.mark.parametrize("names, needle", [
    (["Idd"], "field 'drop_columns': column 'Idd' not found (did you mean 'Id'?)"),
    (["zzz"], "field 'drop_columns': column 'zzz' not found; columns are: Id, grade, size, Class"),
    (["Id", "Class"], "field 'drop_columns' names the label column 'Class'"),
])
def test_drop_columns_errors(tmp_path, names, needle):
    write_rda(tmp_path, factor_frame())
    with pytest.raises(DataError) as exc:
        prepare_dataset(spec(drop_columns=names, factors="numbers", **VEC), tmp_path)
    one_line(exc, f"dataset 'mine' (v.rda): {needle}")


def test_drop_columns_refuses_the_id_column_of_a_table(tmp_path):
    (tmp_path / "t.csv").write_text("id,f1,f2,cls\np,0,0,a\nq,3,4,a\nr,6,8,b\ns,0,1,b\n")
    entry = dict(path="t.csv", format="csv", kind="vectors", distance="euclidean", label_column="cls")
    assert prepare_dataset(spec(drop_columns=["f2"], **entry), tmp_path).metadata["features"] == ["f1"]
    with pytest.raises(DataError) as exc:
        prepare_dataset(spec(drop_columns=["id"], **entry), tmp_path)
    one_line(exc, "dataset 'mine' (t.csv): field 'drop_columns': column 'id' holds the object ids")


def missing_frame():
    frame = factor_frame().drop(columns="Id")
    frame.loc[["q", "t"], "size"] = np.nan
    frame["grade"] = frame["grade"].cat.add_categories(["7"])  # an unused level
    frame.loc["s", "grade"] = np.nan
    return frame


def test_missing_values_without_a_strategy_name_row_and_column(tmp_path):
    write_rda(tmp_path, missing_frame())
    with pytest.raises(DataError) as exc:
        prepare_dataset(spec(factors="numbers", **VEC), tmp_path)
    one_line(exc, "dataset 'mine' (v.rda): 3 missing feature values (first at row 2 (id 'q'), column 'size'); "
             "set field 'missing: drop' to drop the objects that have one")


def test_missing_drop_drops_those_objects_with_a_warning(tmp_path):
    write_rda(tmp_path, missing_frame())
    with pytest.warns(DataWarning) as caught:
        art = prepare_dataset(spec(factors="numbers", missing="drop", **VEC), tmp_path)
    assert [str(w.message) for w in caught] == [
        "dataset 'mine' (v.rda): missing: drop removed 3 of 6 objects with a missing feature value "
        "(ids 'q', 's', 't'); 3 remain",
        "dataset 'mine' (v.rda): 1 class(es) with a single member: 'b'",  # judged on the objects kept
    ]
    assert art.ids.tolist() == ["p", "r", "u"] and art.labels.tolist() == ["a", "a", "b"]
    np.testing.assert_array_equal(art.vectors, [[10, 1], [0.5, 3], [0.5, 6]])
    assert art.distances.shape == (3, 3)
    meta = art.metadata
    assert meta["missing"] == "drop" and meta["missing_dropped"] == 3
    assert meta["missing_dropped_ids"] == ["q", "s", "t"] and meta["class_counts"] == {"a": 2, "b": 1}


def test_missing_drop_that_leaves_nothing_is_an_error(tmp_path):
    (tmp_path / "t.csv").write_text("f1,f2,cls\n0,,a\n,1,b\n")
    with pytest.raises(DataError) as exc:
        prepare_dataset(spec(path="t.csv", format="csv", kind="vectors", distance="euclidean",
                             label_column="cls", missing="drop"), tmp_path)
    one_line(exc, "dataset 'mine' (t.csv): every object has a missing feature value")


def test_a_constant_feature_warns_and_is_kept(tmp_path):
    (tmp_path / "t.csv").write_text("f1,f2,cls\n0,7,a\n3,7,a\n6,7,b\n0,7,b\n")
    entry = dict(path="t.csv", format="csv", kind="vectors", distance="euclidean", label_column="cls")
    with pytest.warns(DataWarning, match=r"dataset 'mine' \(t.csv\): 1 constant feature column\(s\): 'f2' "
                      r"\(value 7\); kept, they add nothing to the distances"):
        art = prepare_dataset(spec(**entry), tmp_path)
    assert art.vectors.shape == (4, 2) and art.metadata["constant_features"] == ["f2"]
    np.testing.assert_allclose(art.distances[0], [0, 3, 6, 0])
    with pytest.warns(DataWarning, match="constant feature"):
        z = prepare_dataset(spec(standardize=True, **entry), tmp_path)
    assert z.metadata["feature_sd"][1] == 1.0  # sd 1: the column stays at 0 after centring
    np.testing.assert_allclose(z.distances[0], np.array([0, 3, 6, 0]) / np.std([0, 3, 6, 0]))


def test_standardize_z_scores_every_feature_with_all_objects(tmp_path):
    rng = np.random.default_rng(3)
    X = np.column_stack([rng.normal(5, 0.01, 30), rng.normal(-200, 300, 30), rng.integers(0, 3, 30)])
    y = np.repeat(["u", "v"], 15)
    root = tmp_path
    pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "c": X[:, 2], "cls": y}).to_csv(root / "t.csv", index=False)
    entry = dict(path="t.csv", format="csv", kind="vectors", distance="euclidean", label_column="cls")
    rec = load_vectors(spec(standardize=True, **entry), root)
    np.testing.assert_allclose(rec.X.mean(axis=0), 0, atol=1e-12)
    np.testing.assert_allclose(rec.X.std(axis=0), 1)
    art = prepare_dataset(spec(standardize=True, **entry), root)
    mean = [sum(col) / len(col) for col in X.T]
    sd = [(sum((v - m) ** 2 for v in col) / len(col)) ** 0.5 for col, m in zip(X.T, mean)]
    brute = np.array([[sum(((X[i, f] - X[j, f]) / sd[f]) ** 2 for f in range(3)) ** 0.5 for j in range(30)]
                      for i in range(30)])
    np.testing.assert_allclose(art.distances, brute, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(art.vectors, X)  # the vector methods get the raw features (they standardise)
    meta = art.metadata
    assert meta["standardize"] is True and art.conversion == "euclidean (standardized)"
    np.testing.assert_allclose(meta["feature_mean"], mean)
    np.testing.assert_allclose(meta["feature_sd"], sd)
    raw = prepare_dataset(spec(**entry), root)
    assert raw.metadata["standardize"] is False and raw.conversion == "euclidean"
    assert "feature_mean" not in raw.metadata


# --- the vector data sets of the registry (issue 16) ------------------------------------------

#: name -> (N, d, class counts, warning expected or None); letter and satellite are read only
VECTOR_SETS = {
    "iris": (150, 4, {"setosa": 50, "versicolor": 50, "virginica": 50}, None),
    "wine": (178, 13, {"class_0": 59, "class_1": 71, "class_2": 48}, None),
    "pima": (768, 8, {"neg": 500, "pos": 268}, None),
    "glass": (214, 9, {"1": 70, "2": 76, "3": 17, "5": 13, "6": 9, "7": 29}, None),
    "ionosphere": (351, 34, {"bad": 126, "good": 225}, r"1 constant feature column\(s\): 'V2' \(value 0\)"),
    "breast_cancer": (683, 9, {"benign": 444, "malignant": 239},
                      r"missing: drop removed 16 of 699 objects .* \(ids '24', '41', '140', \.\.\. \(16 in all\)\)"),
    "vehicle": (846, 18, {"bus": 218, "opel": 212, "saab": 217, "van": 199}, None),
    "satellite": (6435, 36, {"cotton crop": 703, "damp grey soil": 626, "grey soil": 1358, "red soil": 1533,
                             "vegetation stubble": 707, "very damp grey soil": 1508}, None),
    "letter": (20000, 16, dict(zip("ABCDEFGHIJKLMNOPQRSTUVWXYZ", [
        789, 766, 736, 805, 768, 775, 773, 734, 755, 747, 739, 761, 792,
        783, 753, 803, 783, 758, 748, 796, 813, 764, 752, 787, 786, 734])), None),
    "digits": (1797, 64, dict(zip("0123456789", [178, 182, 177, 183, 181, 182, 181, 179, 174, 180])),
               r"3 constant feature column\(s\): 'pixel_0_0' \(value 0\), 'pixel_4_0' \(value 0\), "
               r"'pixel_4_7' \(value 0\); kept"),
    "dna_indicators": (3186, 180, {"ei": 767, "ie": 765, "n": 1654}, None),
}
READ_ONLY = {"satellite", "letter"}  # a 6,435^2 / 20,000^2 distance matrix is too big for a test
STANDARDIZED = {"wine", "pima", "glass", "vehicle"}


@pytest.mark.parametrize("name", list(VECTOR_SETS))
def test_vector_data_sets_prepare(name):
    n, d, counts, warning = VECTOR_SETS[name]
    spec_ = REGISTRY[name]
    assert spec_.kind == "vectors" and spec_.distance == "euclidean"
    assert bool(spec_.standardize) == (name in STANDARDIZED)
    assert file_sha256(ROOT / spec_.path) == spec_.sha256
    assert spec_.sha256 in (ROOT / "data" / "README.md").read_text()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if name in READ_ONLY:
            rec = load_vectors(spec_, ROOT)
            ids, labels, X = rec.ids, rec.labels, rec.features
        else:
            art = prepare_dataset(spec_, ROOT)
            ids, labels, X = art.ids, art.labels, art.vectors
            assert art.distances.shape == (n, n) and art.metadata["class_counts"] == counts
            assert art.metadata["standardize"] == (name in STANDARDIZED)
    messages = [str(w.message) for w in caught if issubclass(w.category, DataWarning)]
    if warning is None:
        assert messages == []
    else:
        assert len(messages) == 1 and re.search(warning, messages[0]), messages
    assert X.shape == (n, d) and np.isfinite(X).all()
    assert len(set(ids.tolist())) == n
    assert dict(Counter(labels.tolist())) == counts


def test_breast_cancer_and_ionosphere_conversions():
    warnings.simplefilter("ignore", DataWarning)
    bc = load_vectors(REGISTRY["breast_cancer"], ROOT)
    raw = pyreadr.read_r(ROOT / REGISTRY["breast_cancer"].path)["BreastCancer"]
    kept = raw.dropna()
    assert bc.ids.tolist() == kept.index.tolist() and "Id" not in bc.columns
    for j, col in enumerate(bc.columns):  # level values: Mitoses has no level '9', so '10' is code 8
        np.testing.assert_array_equal(bc.features[:, j], kept[col].astype(str).astype(float))
    assert set(bc.features[:, bc.columns.index("Mitoses")]) == {1, 2, 3, 4, 5, 6, 7, 8, 10}
    io = load_vectors(REGISTRY["ionosphere"], ROOT)
    assert io.info["factor_columns"] == ["V1", "V2"] and set(io.features[:, 0]) == {0.0, 1.0}
    assert (io.features[:, 1] == 0).all()


def test_iris_wine_and_digits_are_the_scikit_learn_copies():
    from sklearn.datasets import load_digits, load_iris, load_wine

    for name, loader in (("iris", load_iris), ("wine", load_wine), ("digits", load_digits)):
        bunch = loader()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DataWarning)  # digits' three constant pixels
            rec = load_vectors(REGISTRY[name], ROOT)
        np.testing.assert_array_equal(rec.features, bunch.data)
        assert rec.columns == list(bunch.feature_names)
        assert rec.labels.tolist() == [str(y) for y in bunch.target_names[bunch.target]]  # digits: 0..9


def test_dna_indicators_are_the_statlog_indicators_of_dna():
    """The 180 factor columns become their 0/1 levels; decoded three at a time they give `dna`'s sequences."""
    from hlm.datasets._objects import load_objects

    rec = load_vectors(REGISTRY["dna_indicators"], ROOT)
    raw = pyreadr.read_r(ROOT / REGISTRY["dna_indicators"].path)["DNA"]
    assert rec.columns == [f"V{j}" for j in range(1, 181)] and rec.info["factor_columns"] == rec.columns
    np.testing.assert_array_equal(rec.features, raw.drop(columns="Class").astype(str).astype(float))
    assert set(np.unique(rec.features)) == {0.0, 1.0}
    triples = rec.features.reshape(len(rec.ids), 60, 3)
    assert (triples.sum(axis=2) <= 1).all()  # at most one indicator per nucleotide (T = 000)
    ids, seqs, labels, _ = load_objects(REGISTRY["dna"], ROOT)
    code = {(1, 0, 0): "A", (0, 1, 0): "C", (0, 0, 1): "G", (0, 0, 0): "T"}
    for i in (0, 1, 1000, 3185):
        assert "".join(code[tuple(t)] for t in triples[i].astype(int)) == str(seqs[i])
    assert list(ids) == rec.ids.tolist() and list(labels) == rec.labels.tolist()
