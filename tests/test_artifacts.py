"""Atomic artifact writes: a writer killed mid-way leaves no file behind, only a temporary that
the next run removes; artifacts get the umask's mode."""

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest

from hlm.data.artifacts import atomic_path, remove_stale_temps, write_frame, write_text


def test_exception_leaves_no_partial_file(tmp_path):
    target = tmp_path / "out.parquet"
    with pytest.raises(RuntimeError):
        with atomic_path(target) as tmp:
            tmp.write_bytes(b"half")
            raise RuntimeError("boom")
    assert list(tmp_path.iterdir()) == []


def test_existing_artifact_survives_failed_rewrite(tmp_path):
    target = tmp_path / "out.parquet"
    write_frame(pd.DataFrame({"a": [1, 2]}), target)
    with pytest.raises(RuntimeError):
        with atomic_path(target) as tmp:
            tmp.write_bytes(b"garbage")
            raise RuntimeError("boom")
    assert pd.read_parquet(target)["a"].tolist() == [1, 2]


def test_killed_process_leaves_no_destination(tmp_path):
    """SIGKILL while writing: the destination never exists half-written."""
    target = tmp_path / "big.parquet"
    code = textwrap.dedent(f"""
        import time
        from hlm.data.artifacts import atomic_path
        with atomic_path({str(target)!r}) as tmp:
            with open(tmp, "wb") as fh:
                fh.write(b"x" * 1000)
                fh.flush()
                print("writing", flush=True)
                time.sleep(60)
    """)
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "writing"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert not target.exists()
    # only the hidden temporary file can remain; no reader takes it for the artifact
    assert all(p.name.startswith(".big.parquet.") for p in tmp_path.iterdir())


@pytest.fixture(params=[0o022, 0o002], ids=["umask022", "umask002"])
def umask(request):
    """Run the test under this umask (restored afterwards)."""
    old = os.umask(request.param)
    try:
        yield request.param
    finally:
        os.umask(old)


def test_artifacts_get_the_umask_mode(tmp_path, umask):
    """Not mkstemp's 0600: what open(path, "w") gives, so a group sharing results/ can read them."""
    expected = 0o666 & ~umask
    write_frame(pd.DataFrame({"a": [1]}), tmp_path / "a.parquet")
    write_text("x\n", tmp_path / "b.txt")
    with atomic_path(tmp_path / "c.png") as tmp:
        tmp.write_bytes(b"png")
    (tmp_path / "plain.txt").write_text("y")  # the reference: a plain open(path, "w")
    modes = {p.name: p.stat().st_mode & 0o777 for p in tmp_path.iterdir()}
    assert modes == {"a.parquet": expected, "b.txt": expected, "c.png": expected, "plain.txt": expected}
    # rewriting an artifact keeps the umask's mode too
    write_frame(pd.DataFrame({"a": [2]}), tmp_path / "a.parquet")
    assert (tmp_path / "a.parquet").stat().st_mode & 0o777 == expected


def _backdate(path, seconds=60):
    t = path.stat().st_mtime - seconds
    os.utime(path, (t, t))


def test_remove_stale_temps(tmp_path):
    """Only our temporaries, only when no writer holds them and they are not brand new."""
    sub = tmp_path / "evaluation/ds"
    sub.mkdir(parents=True)
    stale = [sub / ".knn.parquet.ab12cd9f.tmp", tmp_path / ".error_rates.csv.0123abcd.tmp"]
    young = sub / ".svm.parquet.deadbeef.tmp"
    others = [sub / "knn.parquet", sub / "notes.tmp", sub / ".knn.parquet.tmp", tmp_path / ".x.toolongname.tmp"]
    for p in [*stale, young, *others]:
        p.write_bytes(b"x")
    for p in [*stale, *others]:
        _backdate(p)
    with atomic_path(sub / "live.parquet") as live:  # a writer at work: locked, even if old
        live.write_bytes(b"half")
        _backdate(live)
        assert remove_stale_temps(tmp_path) == sorted(stale)
        assert live.exists()
    assert (sub / "live.parquet").read_bytes() == b"half"
    assert sorted(p for p in tmp_path.rglob("*") if p.is_file()) == sorted(
        [young, *others, sub / "live.parquet"])
    assert remove_stale_temps(tmp_path, min_age=0) == [young]
    assert remove_stale_temps(tmp_path / "missing") == []


def test_temp_of_killed_writer_is_removed(tmp_path):
    """A live writer in another process keeps its temporary; once SIGKILLed, it is stale."""
    target = tmp_path / "big.parquet"
    code = textwrap.dedent(f"""
        import time
        from hlm.data.artifacts import atomic_path
        with atomic_path({str(target)!r}) as tmp:
            tmp.write_bytes(b"x" * 1000)
            print(tmp, flush=True)
            time.sleep(60)
    """)
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        tmp = Path(proc.stdout.readline().strip())
        _backdate(tmp)
        assert remove_stale_temps(tmp_path) == [] and tmp.exists()
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    assert remove_stale_temps(tmp_path) == [tmp] and list(tmp_path.iterdir()) == []
