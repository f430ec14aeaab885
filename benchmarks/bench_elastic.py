"""The distance stage under aeon's elastic distances against aeon's own pairwise function, same data, same run.

Issue "The field's own data": a distance stage of 1,000 series of length 500 under each of DTW, MSM and TWE,
ours within 1.2x of aeon's ``<name>_pairwise_distance``, the blocks' overhead included. Ours is the
pipeline's data stages run in this process: every row block of ``--block-size`` rows read from the objects
Parquet, computed (``hlm.distances.compute_block``) and written to its Parquet file, then the blocks
assembled into the distance artifact (``distances_from_blocks``). Each Snakemake job also starts a Python
process (about 2 s each, docs/performance.md), not counted here. aeon's side is one call on the whole
(n, 1, length) array, which computes the upper triangle as the blocks do. Random-walk series, seeded; both
sides compiled before timing. The matrices are compared too (DTW: ours is the square root of aeon's cost).

    .venv/bin/python benchmarks/bench_elastic.py                       # the issue's size (about 90 min)
    .venv/bin/python benchmarks/bench_elastic.py --n 250 --block-size 125
"""

from __future__ import annotations

import argparse
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits


def _ours(objects, name: str, block_size: int, work: Path) -> np.ndarray:
    from hlm.datasets._artifacts import read_distances
    from hlm.datasets._objects import write_objects
    from hlm.distances._blocks import block_ranges
    from hlm.pipeline.stages.data import distance_block, distances_from_blocks

    n = len(objects)
    ids, labels = [str(i) for i in range(n)], ["a", "b"] * (n // 2) + ["a"] * (n % 2)
    entry = {"format": "csv", "path": "x.csv", "kind": "series", "distance": name}
    write_objects(ids, objects, labels, work / "objects.parquet", {"dataset": "bench", "kind": "series"})
    blocks = []
    for i0, i1 in block_ranges(n, block_size):
        out = work / f"rows-{i0}-{i1}.parquet"
        distance_block(str(work / "objects.parquet"), str(out), dataset="bench", distance=name, options={},
                       i0=i0, i1=i1, block_size=block_size)
        blocks.append(str(out))
    distances_from_blocks("bench", entry, str(work / "objects.parquet"), blocks, str(work / "d.parquet"),
                          dtype="float64")
    return read_distances(work / "d.parquet").distances


def main(argv=None) -> int:
    import aeon.distances as distances

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--length", type=int, default=500)
    ap.add_argument("--block-size", type=int, default=500, help="rows per block (the config's default: 500)")
    ap.add_argument("--distances", nargs="+", default=["dtw", "msm", "twe"])
    args = ap.parse_args(argv)
    rng = np.random.default_rng(20261202)
    X = np.cumsum(rng.normal(size=(args.n, 1, args.length)), axis=2)
    objects = [x[0] for x in X]
    print(f"{args.n} series of length {args.length}, blocks of {args.block_size} rows, one thread")
    print(f"{'distance':10s} {'aeon s':>9s} {'ours s':>9s} {'ratio':>7s}  max |difference|")
    with threadpool_limits(1), warnings.catch_warnings(), tempfile.TemporaryDirectory() as tmp:
        warnings.simplefilter("ignore")  # numba's cast notices inside aeon; the artifact's checks
        for name in args.distances:
            function = getattr(distances, f"{name}_pairwise_distance")
            function(X[:3])  # compile both paths before timing
            _ours(objects[:4], name, 2, Path(tmp))
            t = time.perf_counter()
            theirs = function(X)
            t_aeon = time.perf_counter() - t
            t = time.perf_counter()
            ours = _ours(objects, name, args.block_size, Path(tmp))
            t_ours = time.perf_counter() - t
            expected = np.sqrt(theirs) if name == "dtw" else theirs
            diff = float(np.max(np.abs(ours - expected)))
            print(f"{name:10s} {t_aeon:9.2f} {t_ours:9.2f} {t_ours / t_aeon:7.3f}  {diff:.3g}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
