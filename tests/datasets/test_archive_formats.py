"""Series in the archive's own formats (.ts, .arff, .tsv), read by aeon's loaders; TRAIN and TEST pooled."""

import shutil
from pathlib import Path

import numpy as np
import pytest


def _aeon_file(name):
    import aeon.datasets

    return Path(aeon.datasets.__file__).parent / "data" / name.split("_")[0] / name


@pytest.fixture
def archive(tmp_path):
    for name in ("GunPoint_TRAIN.ts", "GunPoint_TEST.ts", "GunPoint_TRAIN.arff", "GunPoint_TRAIN.tsv",
                 "BasicMotions_TRAIN.ts"):
        shutil.copy(_aeon_file(name), tmp_path / name)
    (tmp_path / "registry.yaml").write_text(
        "gp:\n  path: GunPoint_TRAIN.ts\n  test_path: GunPoint_TEST.ts\n  format: ts\n  kind: series\n  distance: dtw\n"
        + "".join(f"gp_{f}:\n  path: GunPoint_TRAIN.{f}\n  format: {f}\n  kind: series\n  distance: dtw\n"
                  for f in ("ts", "arff", "tsv"))
        + "motions:\n  path: BasicMotions_TRAIN.ts\n  format: ts\n  kind: series\n  distance: dtw\n"
        + "broken:\n  path: broken.ts\n  format: ts\n  kind: series\n  distance: dtw\n")
    return tmp_path


def _objects(root, name):
    from hlm.datasets._objects import load_objects
    from hlm.datasets._registry import load_registry

    return load_objects(load_registry(root / "registry.yaml")[name], root)


def test_train_and_test_files_pool_as_the_bundled_set(archive):
    """TRAIN (path) then TEST (test_path): the 200 objects of aeon's GunPoint, ids train-k and test-k."""
    from hlm.datasets._series import load_aeon

    ids, objects, labels, meta = _objects(archive, "gp")
    expected = load_aeon("GunPoint")
    assert ids == expected[0] and labels == expected[2] and meta["parts"] == {"train": 50, "test": 150}
    assert all(np.array_equal(a, b) for a, b in zip(objects, expected[1]))
    assert meta["test_source"] == "GunPoint_TEST.ts" and len(meta["test_sha256"]) == 64


@pytest.mark.parametrize("fmt", ["arff", "tsv"])
def test_arff_and_tsv_read_as_the_ts_file(archive, fmt):
    ids, objects, labels, _ = _objects(archive, f"gp_{fmt}")
    ts = _objects(archive, "gp_ts")
    assert ids == ts[0] and labels == ts[2] and all(np.array_equal(a, b) for a, b in zip(objects, ts[1]))


@pytest.mark.parametrize("name, text, message", [
    ("broken", "@problemName x\n@timeStamps false\n@univariate true\n@classLabel true a b\n@dat\n1,2,3:a\n",
     "broken.ts: no series read: is the header well formed (its last line @data)?"),
    ("broken", "@problemName x\n@timeStamps false\n@univariate false\n@dimensions 2\n@classLabel true a b\n@data\n"
               "1,2,3:4,5,6:a\n1,2,3:b\n", "broken.ts: series 2 of the file has 1 channel(s), the series before it 2: "
                                           "every series of a data set has the same channels"),  # mixed channels
    ("broken", "@problemName x\n@timeStamps false\n@univariate true\n@targetlabel true\n@data\n1,2,3:0.5\n",
     "broken.ts: the header does not say @classLabel true: not a classification set"),  # a regression set
])
def test_bad_archive_files_are_one_line(archive, capsys, name, text, message):
    from hlm.cli import main

    if text is not None:
        (archive / "broken.ts").write_text(text)
    assert main(["check", name, "--registry", str(archive / "registry.yaml"), "--root", str(archive)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("hlm: error: ") and "\n" not in err and message in err, err


def test_test_path_belongs_to_the_archive_formats(tmp_path):
    from hlm.datasets._registry import validate_entry
    from hlm.errors import ConfigError

    with pytest.raises(ConfigError, match="field 'test_path' is only allowed with format ts, arff or tsv"):
        validate_entry("x", {"path": "a.csv", "test_path": "b.csv", "format": "csv", "kind": "series",
                             "distance": "dtw"})
