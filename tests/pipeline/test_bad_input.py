"""Every bad input is one line ``hlm: error: ...`` (exit status 2) naming the data set,
the file and the line or object; the estimators refuse bad ``fit`` input the same way."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

from hlm.cli import main
from hlm.errors import ConfigError, DataError, HLMError
from hlm.pipeline.methods import METHODS

ROOT = Path(__file__).resolve().parents[2]
#: a 4 x 4 distance matrix of 2 classes and its labels
D4 = np.array([[0, 1, 4, 5], [1, 0, 3, 4], [4, 3, 0, 2], [5, 4, 2, 0]], dtype=float)
Y4 = ["a", "a", "b", "b"]


def write(folder: Path, files: dict) -> Path:
    for name, content in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content) if isinstance(content, bytes) else path.write_text(content)
    return folder


def check(tmp_path, capsys, registry: str, name: str):
    """``hlm check name`` in-process: (exit status, stdout, stderr)."""
    (tmp_path / "reg.yaml").write_bytes(registry.encode() if isinstance(registry, str) else registry)
    code = main(["check", name, "--registry", str(tmp_path / "reg.yaml"), "--root", str(tmp_path)])
    out = capsys.readouterr()
    return code, out.out, out.err


def one_line_error(tmp_path, capsys, registry, name, *needles) -> str:
    """The single ``hlm: error:`` line of a failing ``hlm check``, checked to contain every needle."""
    code, out, err = check(tmp_path, capsys, registry, name)
    assert code == 2, (out, err)
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("hlm: error: "), err
    assert "Traceback" not in out + err
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def npy_entry(name, matrix="m.npy", labels="y.txt", kind="distance", extra=""):
    return f"{name}:\n  path: {matrix}\n  format: npy\n  labels_path: {labels}\n  kind: {kind}\n{extra}"


# ---------------------------------------------------------------- tracebacks: text that is not UTF-8
LATIN1_FASTA = ">a|x\nACGT\n>b|caf\xe9\nACGA\n".encode("latin-1")


def test_latin1_fasta_names_data_set_file_line_and_byte(tmp_path, capsys):
    write(tmp_path, {"s.fa": LATIN1_FASTA})
    reg = "seqs:\n  path: s.fa\n  format: fasta\n  kind: sequences\n  distance: hamming\n"
    one_line_error(tmp_path, capsys, reg, "seqs", "dataset 'seqs'", "s.fa", "line 3 is not UTF-8 text",
                   "byte 0xe9 at column 7", "save the file as UTF-8")


def test_latin1_fasta_labels_csv(tmp_path, capsys):
    write(tmp_path, {"s.fa": ">a\nACGT\n>b\nACGA\n", "l.csv": "id,label\na,x\nb,\xe9t\xe9\n".encode("latin-1")})
    reg = "seqs:\n  path: s.fa\n  format: fasta\n  kind: sequences\n  distance: hamming\n  labels_path: l.csv\n"
    one_line_error(tmp_path, capsys, reg, "seqs", "dataset 'seqs'", "l.csv", "line 3 is not UTF-8",
                   "byte 0xe9 at column 3")


def test_latin1_series_csv(tmp_path, capsys):
    write(tmp_path, {"s.csv": "id,label,v1,v2\na,x,1,2\nb,caf\xe9,2,3\n".encode("latin-1")})
    reg = "ser:\n  path: s.csv\n  format: csv\n  kind: series\n  distance: dtw\n"
    one_line_error(tmp_path, capsys, reg, "ser", "dataset 'ser'", "s.csv", "line 3 is not UTF-8",
                   "byte 0xe9 at column 6")


@pytest.mark.parametrize("content, needles", [
    ("1.5\n2,5\xb0\n".encode("latin-1"), ["line 2 is not UTF-8", "byte 0xb0 at column 4"]),
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", ["not a text file", "byte 0x00 at line 3, column 1"]),
    ("1\n2\n".encode("utf-16"), ["UTF-16", "save the file as UTF-8"]),
])
def test_non_utf8_file_in_a_series_folder(tmp_path, capsys, content, needles):
    write(tmp_path, {"f/up/ok.csv": "0,1,2\n", "f/up/other.csv": "0,2,1\n", "f/down/bad.csv": content,
                     "f/down/ok2.csv": "2,1,0\n"})
    reg = "fold:\n  path: f\n  format: folder\n  kind: series\n  distance: dtw\n"
    one_line_error(tmp_path, capsys, reg, "fold", "dataset 'fold'", "bad.csv", *needles)


def test_latin1_labels_file_and_csv_matrix(tmp_path, capsys):
    np.save(tmp_path / "m.npy", D4)
    write(tmp_path, {"y.txt": "label\na\na\nb\n\xe9\n".encode("latin-1"),
                     "m.csv": "0,1,4,5\n1,0,3,4\n4,3,0,2\n5,4,2,0 \xb5\n".encode("latin-1"),
                     "ok.txt": "a\na\nb\nb\n"})
    one_line_error(tmp_path, capsys, npy_entry("lab"), "lab", "dataset 'lab' (y.txt)", "line 5 is not UTF-8",
                   "byte 0xe9 at column 1")
    reg = "mat:\n  path: m.csv\n  format: csv\n  labels_path: ok.txt\n  kind: distance\n"
    one_line_error(tmp_path, capsys, reg, "mat", "dataset 'mat' (m.csv)", "line 4 is not UTF-8",
                   "byte 0xb5 at column 9")


def test_latin1_registry_is_a_config_error(tmp_path, capsys):
    reg = npy_entry("lab", extra="  description: caf\xe9\n").encode("latin-1")
    one_line_error(tmp_path, capsys, reg, "lab", "reg.yaml: line 6 is not UTF-8", "byte 0xe9 at column 19")


def test_utf8_with_byte_order_mark_is_read(tmp_path, capsys):
    np.save(tmp_path / "m.npy", D4)
    write(tmp_path, {"y.txt": "\ufefflabel\na\na\nb\nb\n".encode("utf-8")})
    code, out, err = check(tmp_path, capsys, npy_entry("bom"), "bom")
    assert code == 0, err
    assert "bom: 4 objects, 2 classes (a: 2, b: 2)" in out


# ---------------------------------------------------------------- silently accepted: duplicate YAML keys
def test_registry_entry_pasted_twice(tmp_path, capsys):
    np.save(tmp_path / "m.npy", D4)
    write(tmp_path, {"y.txt": "a\na\nb\nb\n"})
    reg = npy_entry("mine") + "\nother:\n  path: x.mat\n" + npy_entry("mine", matrix="m2.npy")
    one_line_error(tmp_path, capsys, reg, "mine", "reg.yaml", "key 'mine' is given twice (lines 1 and 9)")


def test_registry_field_given_twice(tmp_path, capsys):
    reg = npy_entry("mine", extra="  kind: similarity\n")
    one_line_error(tmp_path, capsys, reg, "mine", "reg.yaml", "key 'kind' is given twice in 'mine' (lines 5 and 6)")


def test_yaml_merge_keys_are_not_duplicates(tmp_path):
    from hlm._yaml import load_yaml

    text = "base: &b {path: m.npy, kind: distance}\nmine:\n  <<: *b\n  kind: similarity\n"
    assert load_yaml(text, "x.yaml")["mine"] == {"path": "m.npy", "kind": "similarity"}


def test_config_file_with_a_repeated_key(tmp_path):
    from hlm.pipeline.config import check_config_file

    write(tmp_path, {"c.yaml": "methods: [knn]\nmethod_params:\n  knn:\n    grid: {n_neighbors: [1]}\n"
                               "    grid: {n_neighbors: [3]}\n"})
    with pytest.raises(ConfigError, match=r"c.yaml: key 'grid' is given twice in 'method_params.knn' "
                                          r"\(lines 4 and 5\)"):
        check_config_file(tmp_path / "c.yaml")
    check_config_file(ROOT / "config" / "config.yaml")
    check_config_file(ROOT / "config" / "paper.yaml")


# ---------------------------------------------------------------- silently accepted: headerless matrix + ids
def test_reordered_labels_with_row_number_ids_are_matched_by_number(tmp_path, capsys):
    from hlm.datasets._prepare import prepare_dataset
    from hlm.datasets._registry import load_registry

    np.save(tmp_path / "m.npy", D4)
    write(tmp_path, {"zero.csv": "id,label\n2,b\n0,a\n3,b\n1,a\n", "one.csv": "id,label\n4,b\n1,a\n3,b\n2,a\n"})
    write(tmp_path, {"reg.yaml": npy_entry("zero", labels="zero.csv") + npy_entry("one", labels="one.csv")})
    reg = load_registry(tmp_path / "reg.yaml")
    zero, one = prepare_dataset(reg["zero"], tmp_path), prepare_dataset(reg["one"], tmp_path)
    assert zero.labels.tolist() == Y4 and zero.ids.tolist() == ["0", "1", "2", "3"]
    assert one.labels.tolist() == Y4 and one.ids.tolist() == ["1", "2", "3", "4"]


def test_reordered_labels_with_named_ids_are_refused(tmp_path, capsys):
    np.save(tmp_path / "m.npy", D4)
    write(tmp_path, {"y.csv": "id,label\nc,b\na,a\nd,b\nb,a\n"})
    one_line_error(tmp_path, capsys, npy_entry("named", labels="y.csv"), "named", "dataset 'named' (y.csv)",
                   "the labels file has ids ('c', 'a', 'd', ... (4 in all)) but the matrix (m.npy) has none",
                   "set field 'labels_order: rows'")


def test_labels_order_rows_takes_the_file_order(tmp_path, capsys):
    np.save(tmp_path / "m.npy", D4)
    write(tmp_path, {"y.csv": "id,label\nw,a\nx,a\ny,b\nz,b\n"})
    code, out, err = check(tmp_path, capsys, npy_entry("rows", labels="y.csv", extra="  labels_order: rows\n"),
                           "rows")
    assert code == 0, err
    assert "rows: 4 objects, 2 classes (a: 2, b: 2)" in out


def test_labels_order_with_a_matrix_that_has_ids(tmp_path, capsys):
    write(tmp_path, {"m.csv": ",p,q,r\np,0,1,2\nq,1,0,3\nr,2,3,0\n", "y.csv": "id,label\nq,a\np,a\nr,b\n"})
    reg = "ids:\n  path: m.csv\n  format: csv\n  labels_path: y.csv\n  kind: distance\n  labels_order: rows\n"
    one_line_error(tmp_path, capsys, reg, "ids", "dataset 'ids' (m.csv)", "the matrix has ids",
                   "remove field 'labels_order'")


def test_labels_order_with_a_labels_file_without_ids(tmp_path, capsys):
    np.save(tmp_path / "m.npy", D4)
    write(tmp_path, {"y.txt": "a\na\nb\nb\n"})
    one_line_error(tmp_path, capsys, npy_entry("noids", extra="  labels_order: rows\n"), "noids",
                   "dataset 'noids' (m.npy)", "the labels file (y.txt) has no ids", "remove field 'labels_order'")


def test_row_number_ids_out_of_range(tmp_path, capsys):
    np.save(tmp_path / "m.npy", D4)
    write(tmp_path, {"y.csv": "id,label\n0,a\n1,a\n2,b\n7,b\n"})
    one_line_error(tmp_path, capsys, npy_entry("gap", labels="y.csv"), "gap", "dataset 'gap' (y.csv)",
                   "1 objects have no label (ids '3')")


# ---------------------------------------------------------------- silently accepted: degenerate matrices
@pytest.mark.parametrize("matrix, kind, needle", [
    (np.zeros((4, 4)), "distance", "every pair of objects is at the same distance (0)"),
    (np.full((4, 4), 2.5) - np.diag(np.full(4, 2.5)), "distance",
     "every pair of objects is at the same distance (2.5)"),
    (np.zeros((4, 4)), "similarity", "every pair of objects has the same similarity (distance 0 after conversion)"),
    (np.full((4, 4), 0.3) + np.diag(np.full(4, 0.7)), "similarity",
     "every pair of objects has the same similarity (distance 0.7 after conversion)"),
])
def test_matrix_without_information_is_an_error(tmp_path, capsys, matrix, kind, needle):
    np.save(tmp_path / "m.npy", matrix)
    write(tmp_path, {"y.txt": "a\na\nb\nb\n"})
    one_line_error(tmp_path, capsys, npy_entry("flat", kind=kind), "flat", "dataset 'flat' (m.npy)", needle,
                   "carries no information")


def test_class_of_copies_warns(tmp_path, capsys):
    D = D4.copy()
    D[0, 1] = D[1, 0] = 0.0  # class 'a': two copies of one object
    np.save(tmp_path / "m.npy", D)
    write(tmp_path, {"y.txt": "a\na\nb\nb\n"})
    code, out, err = check(tmp_path, capsys, npy_entry("copies"), "copies")
    assert code == 0, err
    assert ("warning: dataset 'copies' (m.npy): 1 class(es) whose objects are all at distance 0 from each other "
            "(copies of one object): 'a'") in out


def test_pipeline_data_stage_refuses_a_matrix_without_information(tmp_path):
    from hlm.pipeline.stages.data import preprocess

    np.save(tmp_path / "m.npy", np.ones((4, 4)) - np.eye(4))
    write(tmp_path, {"y.txt": "a\na\nb\nb\n"})
    entry = {"path": "m.npy", "format": "npy", "labels_path": "y.txt", "kind": "distance"}
    with pytest.raises(DataError, match=r"dataset 'flat' \(m.npy\): every pair of objects is at the same distance"):
        preprocess("flat", entry, str(tmp_path / "out.parquet"), root=tmp_path, dtype="float64")
    assert not (tmp_path / "out.parquet").exists()


# ---------------------------------------------------------------- misleading messages
@pytest.mark.parametrize("value", [".nan", ".inf", "-.inf"])
def test_upper_bound_must_be_finite(tmp_path, capsys, value):
    np.save(tmp_path / "m.npy", np.eye(4))
    write(tmp_path, {"y.txt": "a\na\nb\nb\n"})
    reg = npy_entry("ub", kind="similarity", extra=f"  upper_bound: {value}\n")
    line = one_line_error(tmp_path, capsys, reg, "ub", "reg.yaml", "entry 'ub'", "field 'upper_bound' must be a "
                          "finite number")
    assert "below" not in line


def test_similarity_to_distance_refuses_a_non_finite_bound():
    from hlm.distances._conversions import similarity_to_distance

    with pytest.raises(DataError, match=r"^x: upper_bound must be a finite number \(got nan\)$"):
        similarity_to_distance(np.eye(3), "bound_minus", float("nan"), where="x")


@pytest.mark.parametrize("files, entry, needle", [
    ({"m.csv": "0\t1\t4\t5\n1\t0\t3\t4\n4\t3\t0\t2\n5\t4\t2\t0\n", "y.txt": "a\na\nb\nb\n"},
     "  path: m.csv\n  format: csv\n  labels_path: y.txt\n  kind: distance\n", "(m.csv): line 1 uses tabs"),
    ({"m.csv": "0;1,5;4;5\n1,5;0;3;4\n4;3;0;2\n5;4;2;0\n", "y.txt": "a\na\nb\nb\n"},
     "  path: m.csv\n  format: csv\n  labels_path: y.txt\n  kind: distance\n", "(m.csv): line 1 uses ';'"),
    ({"y.tsv": "id\tlabel\n0\ta\n1\ta\n2\tb\n3\tb\n"},
     "  path: m.npy\n  format: npy\n  labels_path: y.tsv\n  kind: distance\n", "(y.tsv): line 1 uses tabs"),
    ({"v.csv": "x;y;label\n1;2;a\n3;4;b\n"},
     "  path: v.csv\n  format: csv\n  kind: vectors\n  label_column: label\n  distance: euclidean\n",
     "(v.csv): line 1 uses ';'"),
    ({"s.csv": "id;label;v1;v2\na;x;1;2\n"}, "  path: s.csv\n  format: csv\n  kind: series\n  distance: dtw\n",
     "s.csv: line 1 uses ';'"),
])
def test_tab_or_semicolon_delimiter_is_named(tmp_path, capsys, files, entry, needle):
    np.save(tmp_path / "m.npy", D4)
    write(tmp_path, files)
    line = one_line_error(tmp_path, capsys, "delim:\n" + entry, "delim", "dataset 'delim'", needle,
                          "as the delimiter, not commas")
    assert "header" not in line


def test_a_label_holding_a_semicolon_is_still_a_label(tmp_path, capsys):
    np.save(tmp_path / "m.npy", D4)
    write(tmp_path, {"y.txt": "a;1\na;1\nb\nb\n"})
    code, out, err = check(tmp_path, capsys, npy_entry("semi"), "semi")
    assert code == 0, err
    assert "(a;1: 2, b: 2)" in out


# ---------------------------------------------------------------- library API, every method as the pipeline builds it
#: 10 points of 2 classes in the plane: vectors, distances and similarities of the same objects
POINTS = np.random.default_rng(3).normal(size=(10, 2)) + np.repeat([[0.0, 0.0], [3.0, 0.0]], 5, axis=0)
DISTANCES = np.sqrt(((POINTS[:, None] - POINTS[None]) ** 2).sum(axis=2))
Y10 = np.repeat(["a", "b"], 5)


def estimators():
    """(estimator, its training matrix) of every method, built as the pipeline does: a similarity
    method also as on distance-only data (wrapped in SimilarityFromDistances)."""
    from hlm.distances._reciprocal import SimilarityFromDistances

    out = []
    for method_id, spec in METHODS.items():
        simplest = spec.grid(None)[0]  # the grid point listed first, set for the fit that must work
        if spec.input == "similarity":
            out.append(pytest.param(spec.make(simplest), np.exp(-DISTANCES), id=f"{method_id}-native"))
            out.append(pytest.param(SimilarityFromDistances(spec.make(simplest)), DISTANCES,
                                    id=f"{method_id}-from-distances"))
        elif spec.input == "relation":  # DistanceTransform: the native similarity, else the distances
            out.append(pytest.param(spec.make({**simplest, "relation": "similarity"}), np.exp(-DISTANCES),
                                    id=f"{method_id}-similarity"))
            out.append(pytest.param(spec.make({**simplest, "relation": "distance"}), DISTANCES,
                                    id=f"{method_id}-distance"))
        else:
            out.append(pytest.param(spec.make(simplest), POINTS if spec.input == "vectors" else DISTANCES,
                                    id=method_id))
    return out


@pytest.mark.parametrize("estimator, X", estimators())
def test_every_estimator_refuses_bad_fit_input_alike(estimator, X):
    with pytest.raises(NotFittedError):
        clone(estimator).predict(X)
    if hasattr(estimator, "predict_proba"):
        with pytest.raises(NotFittedError):
            clone(estimator).predict_proba(X)
    with pytest.raises(DataError, match=r"^fit: y has a single class 'a'; a classifier needs at least 2 classes$"):
        clone(estimator).fit(X, ["a"] * 10)
    with pytest.raises(DataError, match=r"^fit: .*empty.*0 x 0"):
        clone(estimator).fit(np.zeros((0, 0)), [])
    mixed = np.array([1, "a"] * 5, dtype=object)
    with pytest.raises(DataError, match=r"^fit: y mixes label types \(number 1 at position 0, str 'a' at position 1\)"):
        clone(estimator).fit(X, mixed)
    with pytest.raises(DataError, match=r"^fit: y must be 1-D \(one label per object\), got an array of shape "
                                        r"\(10, 2\)$"):
        clone(estimator).fit(X, np.stack([Y10, Y10], axis=1))
    missing = Y10.astype(object)
    missing[2] = None
    with pytest.raises(DataError, match=r"^fit: y has a missing label \(None\) at position 2$"):
        clone(estimator).fit(X, missing)
    with pytest.raises(ValueError):  # DataError is a ValueError, as scikit-learn users expect
        clone(estimator).fit(X, ["a"] * 10)
    model = clone(estimator).fit(X, Y10)  # the same matrix with 2 classes fits and predicts
    assert (model.predict(X) == Y10).mean() >= 0.8


def test_a_one_class_cv_fold_scores_infinity_for_knn_as_for_every_method():
    """k-NN's all-folds CV path steps aside for a one-class fit set, whose fits are refused (inf error)."""
    from hlm.neighbors._knn import KNNClassifier
    from hlm.pipeline.evaluation.cv import cv_errors

    folds = [(np.arange(5), np.arange(5, 10)), (np.arange(2, 8), np.array([0, 1, 8, 9]))]
    assert KNNClassifier().predict_folds(DISTANCES, Y10, folds, [{"n_neighbors": 1}]) is None
    errors = cv_errors(KNNClassifier(), DISTANCES, Y10, [{"n_neighbors": 1}, {"n_neighbors": 3}], folds)
    assert np.isinf(errors[:, 0]).all() and np.isfinite(errors[:, 1]).all()


def test_incremental_learners_accept_a_single_class_batch_and_refuse_predict_before_it():
    from scipy.spatial.distance import cdist

    from hlm.local_mapping.incremental import MatrixDistances, Retrain, SchemeI, SchemeII

    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(0, 1, (20, 2)), rng.normal(6, 1, (20, 2))])
    ids = [f"o{i}" for i in range(40)]
    y = np.array(["a"] * 20 + ["b"] * 20)
    distances = MatrixDistances(cdist(X, X), ids)
    for cls in (SchemeI, SchemeII, Retrain):
        learner = cls(n_init=2)
        with pytest.raises(NotFittedError):
            learner.predict(ids, distances)
        learner.partial_fit(ids[:12], y[:12], distances)  # class 'a' only
        assert (learner.predict(ids, distances) == "a").all()
        learner.partial_fit(ids[20:32], y[20:32], distances)  # 'b' arrives
        assert (learner.predict(ids, distances) == y).mean() > 0.9
        with pytest.raises(DataError, match=r"partial_fit: y must be 1-D .*shape \(2, 1\)"):
            learner.partial_fit(ids[32:34], y[32:34, None], distances)


def test_data_error_is_a_value_error_and_config_error_is_not():
    assert issubclass(DataError, ValueError) and issubclass(DataError, HLMError)
    assert not issubclass(ConfigError, ValueError)


# ---------------------------------------------------------------- exit status 2 in pipeline jobs
def test_pipeline_job_exits_2_with_one_line(tmp_path):
    script = ("from hlm.pipeline.jobs import run\nfrom hlm.errors import DataError\n"
              "def job():\n    raise DataError(\"dataset 'x' (x.npy): matrix is not square (3 x 4)\\nmore\")\n"
              f"run(job, {str(tmp_path / 'job.log')!r})\n")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert proc.returncode == 2
    errors = [line for line in proc.stderr.splitlines() if line.startswith("hlm: error:")]
    assert errors == ["hlm: error: dataset 'x' (x.npy): matrix is not square (3 x 4)"]
    assert "Traceback" not in proc.stderr
    assert "matrix is not square" in (tmp_path / "job.log").read_text()


@pytest.mark.workflow
@pytest.mark.parametrize("config, registry, needle", [
    ("datasets: [aural_sonar]\nmethods: [knn]\nmethods: [kernel_hlm]\n", None,
     "key 'methods' is given twice (lines 2 and 3)"),
    ("datasets: [mine]\nmethods: [knn]\n",
     "mine:\n  path: m.npy\n  format: npy\n  kind: distance\n  labels_path: y.txt\n  format: csv\n",
     "key 'format' is given twice in 'mine' (lines 3 and 6)"),
])
def test_snakemake_refuses_repeated_keys_before_any_job(tmp_path, config, registry, needle):
    """Parse-time errors (config file, registry) end Snakemake itself with status 2 and one line."""
    if registry is not None:
        write(tmp_path, {"reg.yaml": registry})
        config += f"registry: {tmp_path / 'reg.yaml'}\n"
    write(tmp_path, {"c.yaml": config})
    snakemake = Path(sys.executable).parent / "snakemake"
    proc = subprocess.run([str(snakemake), "--snakefile", str(ROOT / "Snakefile"), "--directory", str(tmp_path),
                           "--configfile", str(tmp_path / "c.yaml"), "--cores", "1", "--dry-run"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("hlm: error:")]
    assert len(errors) == 1 and needle in errors[0], proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr


# ---------------------------------------------------------------- records of kind vectors
VECTORS_ENTRY = "vec:\n  path: v.csv\n  format: csv\n  kind: vectors\n  label_column: label\n  distance: euclidean\n"


@pytest.mark.parametrize("csv, extra, needles", [
    ("x,y,label\n1,2,a\n3,,a\n5,6,b\n7,8,b\n", "",
     ["dataset 'vec' (v.csv): 1 missing feature values (first at row 2, column 'y')", "'missing: drop'"]),
    ("x,y,label\n1,2,a\n3,4,a\n5,6,b\n7,8,b\n", "  drop_columns: [z]\n",
     ["dataset 'vec' (v.csv): field 'drop_columns': column 'z' not found"]),
    ("x,kind,label\n1,red,a\n3,blue,a\n5,red,b\n7,red,b\n", "",
     ["dataset 'vec' (v.csv): kind vectors needs numbers; column 'kind' is not numeric (value 'red' at row 1)"]),
    ("x,y,label\n1,2,a\n3,4,a\n5,6,b\n7,8,b\n", "  missing: em\n",
     ["entry 'vec': field 'missing' must be one of drop, keep (got 'em')"]),
])
def test_vector_records_errors_are_one_line(tmp_path, capsys, csv, extra, needles):
    write(tmp_path, {"v.csv": csv})
    one_line_error(tmp_path, capsys, VECTORS_ENTRY + extra, "vec", *needles)


def test_missing_drop_and_a_constant_feature_are_warnings_in_hlm_check(tmp_path, capsys):
    write(tmp_path, {"v.csv": "x,y,c,label\n1,2,0,a\n3,,0,a\n5,6,0,a\n7,8,0,b\n9,9,0,b\n"})
    code, out, err = check(tmp_path, capsys, VECTORS_ENTRY + "  missing: drop\n  standardize: true\n", "vec")
    assert code == 0, err
    assert "vec: 4 objects, 2 classes (a: 2, b: 2)" in out and "conversion euclidean (standardized)" in out
    assert "warning: dataset 'vec' (v.csv): missing: drop removed 1 of 5 objects with a missing feature value " \
           "(ids '1'); 4 remain" in out
    assert "warning: dataset 'vec' (v.csv): 1 constant feature column(s): 'c' (value 0)" in out
