"""HMAC timing, serial and parallel on Dask (docs/hmac-spec.md section 10, "Speed goal").

HMAC at every level of the default bandwidth sequence (20 values in [0.1, 2] x the largest column sd) on a
seeded 2,000 x 16 subset of Letter (the registry's ``letter``; integer features, so duplicate rows occur and
``allow_duplicates=True``): serial, approach I (each MEM iteration's sums split over the workers) and
approach II (the starting points split over the workers) on a LocalCluster of 2 single-threaded worker
processes. Each parallel approach is timed (a) as ``hmac(..., parallel=..., n_workers=2)`` runs it, creating
and closing its LocalCluster, and (b) on an already running LocalCluster passed as ``scheduler=`` (the
clustering alone); ``--threads`` adds (c), a LocalCluster of 2 in-process (threaded) workers, whose
messages do not cross processes. Ratios are against the serial time of the same run.

The dissertation's figures (section 5.5: ship-design data, 2,000 x 17, its default HMAC parameters):
serial 1,360.7 s; 20 MPI nodes 34.4 s (approach I) and 17.3 s (approach II). Goal here: <= 17.3 s for each.

What makes it fast (spec section 7): modal EM for all starting points at once, one ``a x n`` kernel block
per iteration from a BLAS product (rows blocked to <= 64 MB, buffer reused), log-domain weights floored at
exp(-700) of the largest (no subnormals, which make exp and BLAS ~10x slower; provably negligible), only the
unconverged points iterated, and later levels starting from the previous level's few modes. Approach I is
bound by latency: one Dask round trip (actor call) per MEM iteration, ~3,000 sequential iterations here.

Single-threaded BLAS in this process, as in the pipeline's jobs (Dask workers are single-threaded by
default). Absolute times vary between machines and with the load.

    .venv/bin/python benchmarks/bench_hmac.py [--seed 0] [--threads]
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from threadpoolctl import threadpool_limits

from hlm.hmac._hmac import HMACResult, hmac

# Dask's worker processes are spawned and re-import this module: the data loader (pandas, pyarrow) is
# imported inside load_letter only, so that worker start-up costs what it costs a library user.

TOL = 1e-6
GOAL = 17.3  # seconds, the dissertation's approach II on 20 nodes


def load_letter(n: int, seed: int) -> np.ndarray:
    """A seeded n-row subset of Letter (rows in their registry order)."""
    from hlm.datasets._prepare import load_vectors
    from hlm.datasets._registry import load_registry

    X = load_vectors(load_registry("config/datasets.yaml")["letter"]).features
    rows = np.sort(np.random.default_rng(seed).choice(X.shape[0], n, replace=False))
    return np.asarray(X[rows], dtype=np.float64)


def timed(label: str, **kwargs) -> tuple[float, HMACResult]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t0 = time.perf_counter()
        res = hmac(kwargs.pop("X"), allow_duplicates=True, tol=TOL, **kwargs)
        seconds = time.perf_counter() - t0
    stopped = [str(w.message).split(" starting")[0].replace("modal EM: ", "") for w in caught]
    note = f"; levels with starts stopped at max_iter: {len(stopped)} ({', '.join(stopped)})" if stopped else ""
    print(f"  {label:<44s} {seconds:7.2f} s{note}")
    return seconds, res


def agreement(ref: HMACResult, res: HMACResult) -> str:
    """Same labels at every level, and the largest mode difference in units of tol * sigma_l."""
    same = all(np.array_equal(a.labels, b.labels) for a, b in zip(ref.levels, res.levels))
    worst = max(np.abs(a.modes - b.modes).max() / (TOL * a.bandwidth) for a, b in zip(ref.levels, res.levels))
    return f"labels {'identical' if same else 'DIFFER'}, modes within {worst:.2g} tol*sigma"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", action="store_true", help="also time a LocalCluster of threaded workers")
    args = parser.parse_args()
    from distributed import Client, LocalCluster

    from hlm.hmac._parallel import local_cluster_options

    X = load_letter(2000, args.seed)
    n_unique = np.unique(X, axis=0).shape[0]
    print(
        f"Letter subset (seed {args.seed}): {X.shape[0]} x {X.shape[1]}, {n_unique} distinct rows; "
        f"20 bandwidths, tol {TOL:g}"
    )
    with threadpool_limits(1):
        t_serial, serial = timed("serial", X=X)
        rows = []
        for approach in ("I", "II"):
            seconds, res = timed(
                f"approach {approach}, own LocalCluster (2 processes)", X=X, parallel=approach, n_workers=2
            )
            rows.append((f"{approach} (a) own cluster", seconds, res))
        t0 = time.perf_counter()
        with LocalCluster(**local_cluster_options(2)) as cluster, Client(cluster, direct_to_workers=True) as client:
            print(f"  (LocalCluster of 2 processes started in {time.perf_counter() - t0:.2f} s)")
            for approach in ("I", "II"):
                seconds, res = timed(
                    f"approach {approach}, running LocalCluster", X=X, parallel=approach, scheduler=client
                )
                rows.append((f"{approach} (b) running cluster", seconds, res))
        if args.threads:
            options = local_cluster_options(2) | {"processes": False}
            with LocalCluster(**options) as cluster, Client(cluster, direct_to_workers=True) as client:
                for approach in ("I", "II"):
                    seconds, res = timed(
                        f"approach {approach}, threaded LocalCluster", X=X, parallel=approach, scheduler=client
                    )
                    rows.append((f"{approach} (c) threaded workers", seconds, res))
    print(f"\nclusters per level (sigma_l / sd_max = {', '.join(f'{s:.1f}' for s in np.linspace(0.1, 2, 20))}):")
    print(f"  {serial.n_clusters.tolist()}")
    print(f"  largest MEM iteration count per level: {serial.n_iter.tolist()} (sum {int(serial.n_iter.sum())})")
    print(f"\nserial {t_serial:.2f} s (dissertation: 1,360.7 s on its 2,000 x 17 data)")
    for label, seconds, res in rows:
        goal = "met" if seconds <= GOAL else "NOT met"
        print(
            f"  {label:<28s} {seconds:7.2f} s = {seconds / t_serial:5.2f} x serial; goal <= {GOAL} s {goal}; "
            f"{agreement(serial, res)}"
        )


if __name__ == "__main__":
    main()
