"""Atomic artifact writes: a writer killed mid-way leaves no file behind."""

import os
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest

from hlm.data.artifacts import atomic_path, write_frame


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
