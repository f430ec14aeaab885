"""The distance artifact at scale (issue goal: a matrix a job can memory-map; docs/performance.md).

A seeded N x N Euclidean matrix (default N = 20,000, Letter's size, d = 16) is written in the artifact's
layout (a Parquet of ids and labels, the matrix in the ``.npy`` beside it) and in the earlier layout (the
matrix as a list<double> column of the Parquet). For each, in a fresh process: the time to write it, the
time to read it and slice one split's fit block (80% of the objects, in random order) and test block, as
an evaluation job does, and that process's peak resident memory (``VmHWM``: ``ru_maxrss`` would carry
the parent's over the fork). Pages of the memory-mapped file that were read count as resident too. The
ratios are against the earlier layout measured in the same run.

    .venv/bin/python benchmarks/bench_artifact.py            # N = 20,000: 3.2 GB per layout on disk
    .venv/bin/python benchmarks/bench_artifact.py --n 5000
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from hlm.datasets._artifacts import DistanceArtifact, write_distances

CHILD = """
import json, sys, time
import numpy as np
from hlm.datasets._artifacts import read_distances, take
path, n = sys.argv[1], int(sys.argv[2])
t0 = time.perf_counter()
art = read_distances(path)
order = np.random.default_rng(0).permutation(n)
fit, test = order[: int(0.8 * n)], order[int(0.8 * n):]
D_fit, D_test = take(art.distances, fit, fit), take(art.distances, test, fit)
seconds = time.perf_counter() - t0
hwm = [line for line in open("/proc/self/status") if line.startswith("VmHWM")][0]
print(json.dumps({"seconds": seconds, "peak_mb": int(hwm.split()[1]) / 1024,
                  "check": float(D_fit[:5, :5].sum() + D_test[:5, :5].sum())}))
"""


def matrix(n: int, d: int = 16) -> np.ndarray:
    X = np.random.default_rng(0).normal(size=(n, d))
    sq = (X * X).sum(1)
    D = sq[:, None] + sq[None, :] - 2.0 * (X @ X.T)
    np.maximum(D, 0.0, out=D)
    return np.sqrt(D, out=D)


def write_earlier(ids, labels, D, path: Path) -> None:
    """The earlier layout: one list<double> row per object in the Parquet."""
    n = len(ids)
    offsets = pa.array(np.arange(0, n * n + 1, n, dtype=np.int32))
    rows = pa.ListArray.from_arrays(offsets, pa.array(D.ravel()))
    pq.write_table(pa.table({"id": ids, "label": labels, "distances": rows}), path)


def child(path: Path, n: int) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, str(path), str(n)], capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20_000)
    args = parser.parse_args()
    n = args.n
    D = matrix(n)
    ids = [f"o{i}" for i in range(n)]
    labels = [str(i % 26) for i in range(n)]
    with tempfile.TemporaryDirectory(dir=".") as tmp:
        rows = {}
        for layout in ("earlier", "memory-mapped"):
            path = Path(tmp) / layout / "letter.parquet"
            path.parent.mkdir()
            t0 = time.perf_counter()
            if layout == "earlier":
                write_earlier(ids, labels, D, path)
            else:
                write_distances(DistanceArtifact(np.array(ids), np.array(labels), D), path)
            written = time.perf_counter() - t0
            size = sum(p.stat().st_size for p in path.parent.iterdir()) / 1e9
            rows[layout] = (written, size, child(path, n))
        ref = rows["earlier"]
        print(f"distance artifact, N = {n} ({8 * n * n / 1e9:.2f} GB of float64), peak of the process itself "
              f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB:")
        for layout, (written, size, r) in rows.items():
            print(f"  {layout:14s} write {written:6.1f} s ({written / ref[0]:.2f}x), {size:.2f} GB on disk; "
                  f"read + slice one split {r['seconds']:6.1f} s ({r['seconds'] / ref[2]['seconds']:.2f}x), "
                  f"peak {r['peak_mb']:6.0f} MB ({r['peak_mb'] / ref[2]['peak_mb']:.2f}x)")
        assert rows["earlier"][2]["check"] == rows["memory-mapped"][2]["check"]


if __name__ == "__main__":
    main()
