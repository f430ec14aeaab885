"""`hlm check`: every bad-input case is one line naming the entry, no traceback."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

#: the pipeline's plumbing: no numerical result is checked here (hlm check runs DTW, whose values the distance
#: tests check on both CPU dispatches); run once, not again on the other dispatch (Makefile)
pytestmark = pytest.mark.plumbing

HLM = [sys.executable, "-m", "hlm.cli"]


@pytest.fixture()
def registry(tmp_path):
    good = np.array([[0, 1, 2], [1, 0, 1.5], [2, 1.5, 0]])
    np.save(tmp_path / "square.npy", good)
    np.save(tmp_path / "not_square.npy", np.ones((3, 4)))
    nan = good.copy()
    nan[0, 2] = np.nan
    np.save(tmp_path / "nan.npy", nan)
    inf = good.copy()
    inf[1, 0] = np.inf
    np.save(tmp_path / "inf.npy", inf)
    neg = good.copy()
    neg[2, 1] = -0.5
    np.save(tmp_path / "neg.npy", neg)
    np.save(tmp_path / "labels3.npy", np.array(["a", "b", "b"]))
    np.save(tmp_path / "labels2.npy", np.array(["a", "b"]))
    (tmp_path / "labels_missing.csv").write_text("id,label\n0,a\n1,b\n")
    (tmp_path / "labels_empty.csv").write_text("label\na\n\nb\n")
    entries = {
        "ok": ("square.npy", "labels3.npy"),
        "not_square": ("not_square.npy", "labels3.npy"),
        "has_nan": ("nan.npy", "labels3.npy"),
        "has_inf": ("inf.npy", "labels3.npy"),
        "negative": ("neg.npy", "labels3.npy"),
        "label_count": ("square.npy", "labels2.npy"),
        "labels_missing": ("square.npy", "labels_missing.csv"),
        "labels_empty": ("square.npy", "labels_empty.csv"),
    }
    text = "".join(
        f"{name}:\n  path: {m}\n  format: npy\n  labels_path: {lab}\n  kind: distance\n"
        for name, (m, lab) in entries.items()
    )
    (tmp_path / "registry.yaml").write_text(text)
    return tmp_path


def run(registry, name):
    return subprocess.run([*HLM, "check", name, "--registry", str(registry / "registry.yaml"),
                           "--root", str(registry)], capture_output=True, text=True)


def test_good_entry_summary(registry):
    proc = run(registry, "ok")
    assert proc.returncode == 0, proc.stderr
    assert "ok: 3 objects, 2 classes" in proc.stdout


@pytest.mark.parametrize("name,problem", [
    ("not_square", "not square"),
    ("has_nan", "NaN"),
    ("has_inf", "inf"),
    ("negative", "negative"),
    ("label_count", "3"),
    ("labels_missing", "objects have no label"),
    ("labels_empty", "no label"),
    ("no_such_entry", "unknown data set"),
])
def test_bad_input_is_one_line(registry, name, problem):
    proc = run(registry, name)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("hlm: error:") and name in lines[0] and problem in lines[0]
    assert "Traceback" not in proc.stderr


def test_check_ignores_broken_unrelated_entries(registry):
    text = (registry / "registry.yaml").read_text()
    (registry / "registry.yaml").write_text(text + "broken:\n  path: x\n  format: xls\n  kind: distance\n")
    assert run(registry, "ok").returncode == 0
    proc = run(registry, "broken")
    assert proc.returncode == 2 and "field 'format'" in proc.stderr


def test_check_takes_the_pipelines_settings(tmp_path, monkeypatch, capsys):
    """The registry and the distance stage's block size are the pipeline's: config/config.yaml's
    when the folder has one, else the config schema's defaults; never values of the command's own."""
    import shutil

    import hlm.distances._blocks as blocks
    from hlm import cli
    from hlm.pipeline.config import config_defaults

    sizes = []
    original = blocks.block_ranges
    monkeypatch.setattr(blocks, "block_ranges", lambda n, size: sizes.append(size) or original(n, size))
    data = Path(__file__).parents[1] / "data"
    for name in ("tiny_registry.yaml", "series.csv"):
        shutil.copy(data / name, tmp_path / name)
    monkeypatch.chdir(tmp_path)
    # no config/config.yaml: the schema's defaults (its registry, config/datasets.yaml, is not here)
    assert cli.main(["check", "tiny_series"]) == 2
    assert config_defaults()["registry"] in capsys.readouterr().err
    assert cli.main(["check", "tiny_series", "--registry", "tiny_registry.yaml"]) == 0
    assert sizes == [config_defaults()["distance_block_size"]]
    # the project's config: its registry and block size
    (tmp_path / "config").mkdir()
    (tmp_path / "config/config.yaml").write_text(
        "datasets: [tiny_series]\nmethods: [knn]\nregistry: tiny_registry.yaml\ndistance_block_size: 5\n")
    sizes.clear()
    assert cli.main(["check", "tiny_series"]) == 0, capsys.readouterr().err
    assert sizes == [5] and "tiny_series: 12 objects" in capsys.readouterr().out


def test_ui_without_a_store_is_one_line(tmp_path, monkeypatch, capsys):
    from hlm.cli import main

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    assert main(["ui"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("hlm: error: ") and "mlflow.db: no MLflow store here" in err[0]


def test_ui_prints_the_runs_view_and_starts_mlflow_on_the_store(tmp_path, monkeypatch, capsys):
    """The printed address opens the saved runs view of the pipeline's experiment; the process
    becomes ``mlflow ui`` on that store (os.execv, replaced here)."""
    import hlm.cli
    from hlm.pipeline.tracking import VIEW_KEY

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HLM_MLFLOW_ARTIFACTS", str(tmp_path / "mlruns"))
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    from hlm.pipeline.tracking import init_store

    init_store("hlm")  # the pipeline's onstart made the store
    calls = []
    import os

    monkeypatch.setattr(os, "execv", lambda path, argv: calls.append((str(path), argv)))
    assert hlm.cli.main(["ui", "--port", "5099"]) == 0
    out = capsys.readouterr().out
    url = f"http://127.0.0.1:5099/#/experiments/1/runs?workflowType=machine_learning&viewStateShareKey={VIEW_KEY}"
    assert url in out
    (path, argv), = calls
    assert Path(path).name == "mlflow" and argv[1:] == ["ui", "--backend-store-uri", uri, "--host", "127.0.0.1",
                                                         "--port", "5099"]
