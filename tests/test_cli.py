"""`hlm check`: every bad-input case is one line naming the entry, no traceback."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

HLM = [sys.executable, "-m", "hlm.cli"]


@pytest.fixture()
def registry(tmp_path):
    good = np.array([[0, 1, 2], [1, 0, 1.5], [2, 1.5, 0]])
    np.save(tmp_path / "square.npy", good)
    np.save(tmp_path / "not_square.npy", np.ones((3, 4)))
    nan = good.copy(); nan[0, 2] = np.nan
    np.save(tmp_path / "nan.npy", nan)
    inf = good.copy(); inf[1, 0] = np.inf
    np.save(tmp_path / "inf.npy", inf)
    neg = good.copy(); neg[2, 1] = -0.5
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
