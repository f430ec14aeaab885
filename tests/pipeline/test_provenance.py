"""Config hash and git commit recorded with every result."""

import subprocess

from hlm.pipeline import provenance


def test_config_hash():
    h = provenance.config_hash({"a": 1, "b": [1, 2]})
    assert len(h) == 12 and int(h, 16) >= 0
    assert h == provenance.config_hash({"b": [1, 2], "a": 1})
    assert h != provenance.config_hash({"a": 2, "b": [1, 2]})


def test_git_commit(tmp_path, monkeypatch):
    assert provenance.git_commit(tmp_path) == "unknown"
    outputs = iter(["abc123\n", " M src/x.py\n"])

    def fake_run(cmd, **kw):
        return subprocess.CompletedProcess(cmd, 0, stdout=next(outputs), stderr="")

    monkeypatch.setattr(provenance.subprocess, "run", fake_run)
    assert provenance.git_commit(tmp_path) == "abc123-dirty"
