"""Multichannel series, (channels x length) arrays (issue "The field's own data", item 3).

Known answers: multichannel DTW is a brute-force dynamic programme over the summed squared differences of
the channels, and equals aeon's ``dtw_distance`` on the same arrays; the lock-step Euclidean distance is
DTW without warping; every elastic distance takes several channels as aeon's pairwise function does. The
readers keep the channels (BasicMotions' .ts file as aeon's loader reads it, a folder file of one column
per channel, the objects Parquet), a saved model classifies new multichannel objects, and mixed channel
counts are refused in one line naming the object.
"""

import shutil
from pathlib import Path

import numpy as np
import pytest

from hlm.distances import pairwise
from hlm.distances._blocks import assemble, compute_block
from hlm.distances._dtw import dtw
from hlm.distances._registry import ELASTIC
from hlm.errors import DataError


def _series(n, channels, lengths, seed):
    rng = np.random.default_rng(seed)
    return [np.cumsum(rng.normal(size=(channels, int(m))), axis=1) for m in rng.integers(*lengths, size=n)]


def _dtw_oracle(x, y):
    """sqrt of the cheapest warping path's cost, a step costing sum_c (x[c, i] - y[c, j])^2; full window."""
    n, m = x.shape[1], y.shape[1]
    C = np.full((n + 1, m + 1), np.inf)
    C[0, 0] = 0.0
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            step = float(np.sum((x[:, i - 1] - y[:, j - 1]) ** 2))
            C[i, j] = step + min(C[i - 1, j], C[i, j - 1], C[i - 1, j - 1])
    return np.sqrt(C[n, m])


def test_multichannel_dtw_is_the_dynamic_programme_and_aeons():
    from aeon.distances import dtw_distance

    xs = _series(6, 3, (8, 14), seed=1)  # three channels, unequal lengths
    D = dtw(xs, xs)
    oracle = np.array([[_dtw_oracle(x, y) for y in xs] for x in xs])
    np.testing.assert_allclose(D, oracle, rtol=1e-12)  # sums of ~40 squares: a few ulps apart at most
    aeon = np.sqrt(np.array([[dtw_distance(x, y) for y in xs] for x in xs]))
    np.testing.assert_array_equal(D, aeon)


def test_one_channel_as_a_2d_array_is_the_1d_series():
    xs = _series(5, 1, (10, 16), seed=2)
    np.testing.assert_array_equal(dtw(xs, xs), dtw([x[0] for x in xs], [x[0] for x in xs]))


def test_the_euclidean_distance_is_dtw_without_warping():
    xs = _series(5, 4, (12, 13), seed=3)  # one length
    E = pairwise(xs, xs, "euclidean")
    np.testing.assert_allclose(E, dtw(xs, xs, window=0.0), rtol=1e-12)
    brute = np.array([[np.sqrt(np.sum((x - y) ** 2)) for y in xs] for x in xs])
    np.testing.assert_allclose(E, brute, rtol=1e-12)


@pytest.mark.aeon
@pytest.mark.parametrize("name", list(ELASTIC))
def test_each_elastic_distance_takes_channels_as_aeon(name):
    import aeon.distances as distances

    xs = _series(5, 2, (12, 13), seed=4)
    expected = getattr(distances, f"{name}_pairwise_distance")(np.stack(xs), window=0.5)
    blocks = [(i0, i1, compute_block(xs, name, i0, i1, {"window": 0.5})) for i0, i1 in ((0, 2), (2, 5))]
    np.testing.assert_array_equal(assemble(blocks, len(xs)), expected)


def test_mixed_channels_are_refused():
    xs = _series(2, 2, (5, 6), seed=5) + _series(1, 3, (5, 6), seed=6)
    with pytest.raises(DataError, match="^series of 2 and 3 channels: every series of a data set has the same"):
        dtw(xs, xs)
    with pytest.raises(DataError, match="^series of 2 and 3 channels"):
        pairwise(xs[:2], xs[2:], "msm")


def _aeon_file(name):
    import aeon.datasets

    return Path(aeon.datasets.__file__).parent / "data" / name.split("_")[0] / name


def test_a_multichannel_ts_file_reads_as_aeons_loader_and_round_trips(tmp_path):
    from aeon.datasets import load_from_ts_file

    from hlm.datasets._objects import load_objects, read_objects, write_objects
    from hlm.datasets._registry import validate_entry

    shutil.copy(_aeon_file("BasicMotions_TRAIN.ts"), tmp_path)
    spec = validate_entry("bm", {"path": "BasicMotions_TRAIN.ts", "format": "ts", "kind": "series",
                                 "distance": "dtw"})
    ids, objects, labels, meta = load_objects(spec, tmp_path)
    X, y = load_from_ts_file(str(tmp_path / "BasicMotions_TRAIN.ts"))
    assert len(objects) == 40 and all(o.shape == (6, 100) for o in objects)
    assert all(np.array_equal(o, x) for o, x in zip(objects, X)) and labels == [str(v) for v in y]
    write_objects(ids, objects, labels, tmp_path / "objects.parquet", meta)
    again = read_objects(tmp_path / "objects.parquet")
    assert again[0] == ids and again[2] == labels
    assert all(a.shape == (6, 100) and np.array_equal(a, o) for a, o in zip(again[1], objects))


def test_unequal_multichannel_series_of_japanese_vowels():
    from hlm.datasets._series import load_aeon

    ids, objects, labels = load_aeon("JapaneseVowels")
    assert len(objects) == 640 and {o.shape[0] for o in objects} == {12}
    assert min(o.shape[1] for o in objects) == 7 and max(o.shape[1] for o in objects) == 29
    pick = [objects[i] for i in (0, 1, 300)]  # lengths differ: the list path of aeon's pairwise function
    oracle = np.array([[_dtw_oracle(x, y) for y in pick] for x in pick])
    np.testing.assert_allclose(dtw(pick, pick), oracle, rtol=1e-12)


def test_a_folder_file_of_one_column_per_channel(tmp_path):
    from hlm.datasets._series import read_series_folder

    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "s1.csv").write_text("1,10\n2,20\n3,30\n")  # 3 time points, 2 channels
    (tmp_path / "a" / "s2.txt").write_text("0 0\n1 1\n")
    ids, series, labels = read_series_folder(tmp_path)
    assert ids == ["s1", "s2"] and labels == ["a", "a"]
    np.testing.assert_array_equal(series[0], [[1, 2, 3], [10, 20, 30]])
    (tmp_path / "a" / "s3.csv").write_text("1,2,3\n4,5,6\n")  # 3 channels
    with pytest.raises(DataError, match="object 's3' has 3 channels, object 's1' 2: every series of a data set"):
        read_series_folder(tmp_path)


def test_a_saved_model_classifies_new_multichannel_objects(tmp_path, capsys):
    """hlm fit on BasicMotions' TRAIN file, hlm predict on its TEST file: the 1-NN of a direct DTW; a file
    of another channel count is refused in one line."""
    import pandas as pd

    from hlm.cli import main
    from hlm.datasets._series import read_archive_file

    for name in ("BasicMotions_TRAIN.ts", "BasicMotions_TEST.ts", "GunPoint_TEST.ts"):
        shutil.copy(_aeon_file(name), tmp_path)
    (tmp_path / "registry.yaml").write_text("bm:\n  path: BasicMotions_TRAIN.ts\n  format: ts\n  kind: series\n"
                                            "  distance: dtw\n")
    assert main(["fit", "bm", "--method", "knn", "-o", str(tmp_path / "m"), "--root", str(tmp_path),
                 "--registry", "registry.yaml", "--params", '{"n_neighbors": 1}']) == 0
    assert main(["predict", str(tmp_path / "m"), str(tmp_path / "BasicMotions_TEST.ts"), "-o",
                 str(tmp_path / "p.parquet")]) == 0
    _, train, train_labels = read_archive_file(tmp_path / "BasicMotions_TRAIN.ts", "ts", None)
    _, test, test_labels = read_archive_file(tmp_path / "BasicMotions_TEST.ts", "ts", None)
    nearest = np.asarray(train_labels)[dtw(test, train).argmin(axis=1)]
    out = pd.read_parquet(tmp_path / "p.parquet")
    assert out["predicted"].tolist() == nearest.tolist() and out["label"].tolist() == test_labels
    assert "error rate 2.50% (1 of 40 labelled objects)" in capsys.readouterr().out  # UEA's 1-NN DTW_D: 0.975
    assert main(["predict", str(tmp_path / "m"), str(tmp_path / "GunPoint_TEST.ts"), "-o",
                 str(tmp_path / "q.parquet")]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "hlm: error: model of data set 'bm': new object 0 has 1 channel(s); the training series have 6"


def test_new_objects_from_a_ts_file_without_labels(tmp_path):
    """A .ts file with @classLabel false reads without labels; a label-less .tsv is refused (aeon's loader
    would take its first value for the class)."""
    from hlm.datasets._new_objects import read_new_objects

    (tmp_path / "new.ts").write_text("@problemName x\n@timeStamps false\n@missing false\n@univariate false\n"
                                     "@dimensions 2\n@equalLength true\n@seriesLength 3\n@classLabel false\n"
                                     "@data\n1,2,3:4,5,6\n0,0,1:1,0,0\n")
    ids, objects, labels = read_new_objects("series", tmp_path / "new.ts")
    assert ids == ["0", "1"] and labels is None
    np.testing.assert_array_equal(objects[0], [[1, 2, 3], [4, 5, 6]])
    (tmp_path / "new.tsv").write_text("1\t2\t3\n4\t5\t6\n")
    objects = read_new_objects("series", tmp_path / "new.tsv")[1]  # the first column is the class
    np.testing.assert_array_equal(objects[0], [2, 3])
