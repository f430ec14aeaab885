"""The KEEL copies in data/raw/keel (header: false record CSVs): sizes, classes and values as the files hold
them (read here by numpy's own loadtxt), and a record CSV without a header end to end, to hlm predict."""

from pathlib import Path

import numpy as np
import pytest

from hlm.datasets._prepare import load_vectors
from hlm.datasets._registry import load_registry, validate_entry
from hlm.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]
#: data set -> (N, p, class counts), data/README.md
SIZES = {"ring": (7400, 20, {"0": 3664, "1": 3736}), "twonorm": (7400, 20, {"0": 3703, "1": 3697}),
         "banana": (5300, 2, {"-1": 2924, "1": 2376}), "segment": (2310, 19, {str(k): 330 for k in range(1, 8)})}


@pytest.mark.parametrize("name", list(SIZES))
def test_each_copy_reads_as_the_file(name):
    spec = load_registry(ROOT / "config/datasets.yaml")[name]
    rec = load_vectors(spec, ROOT)
    n, p, counts = SIZES[name]
    raw = np.loadtxt(ROOT / spec.path, delimiter=",")
    assert rec.features.shape == (n, p) and raw.shape == (n, p + 1)
    np.testing.assert_array_equal(rec.features, raw[:, :p])
    assert dict(zip(*np.unique(rec.labels, return_counts=True))) == counts
    assert [str(int(v)) for v in raw[:5, p]] == list(rec.labels[:5])


def test_header_belongs_to_record_csvs():
    with pytest.raises(ConfigError, match=r"field 'format' must be one of csv with header \(got 'rda'\)"):
        validate_entry("x", {"path": "a.rda", "format": "rda", "kind": "vectors", "label_column": "y",
                             "distance": "euclidean", "header": False})


def test_a_headerless_model_predicts_a_headerless_file(tmp_path, capsys):
    """hlm fit on a header-less CSV (columns x1..x3, the class x3), hlm predict on a header-less file of the
    same columns without the class: the 1-NN of the Euclidean distance."""
    import pandas as pd

    from hlm.cli import main

    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(0, 1, (20, 2)), rng.normal(4, 1, (20, 2))])
    y = np.repeat([-1.0, 1.0], 20)
    np.savetxt(tmp_path / "train.dat", np.column_stack([X, y]), delimiter=",", fmt="%.6g")
    new = rng.normal(2, 2, (7, 2))
    np.savetxt(tmp_path / "new.dat", new, delimiter=",", fmt="%.6g")
    (tmp_path / "registry.yaml").write_text("toy:\n  path: train.dat\n  format: csv\n  header: false\n"
                                            "  kind: vectors\n  label_column: x3\n  distance: euclidean\n")
    assert main(["fit", "toy", "--method", "knn", "-o", str(tmp_path / "m"), "--root", str(tmp_path),
                 "--registry", "registry.yaml", "--params", '{"n_neighbors": 1}']) == 0
    assert main(["predict", str(tmp_path / "m"), str(tmp_path / "new.dat"), "-o", str(tmp_path / "p.parquet")]) == 0
    Xr, newr = np.loadtxt(tmp_path / "train.dat", delimiter=",")[:, :2], np.loadtxt(tmp_path / "new.dat", delimiter=",")
    nearest = ((newr[:, None, :] - Xr[None]) ** 2).sum(-1).argmin(1)
    expected = np.where(nearest < 20, "-1", "1")
    assert pd.read_parquet(tmp_path / "p.parquet")["predicted"].tolist() == expected.tolist()
