"""Parallel HMAC on Dask (dissertation sections 5.2-5.4; docs/hmac-spec.md section 5).

Both approaches run HMAC's levels as the serial code does (:func:`hlm.hmac._hmac.run_levels`) and
differ only in how the modal EM of a level is computed; the master (this process) merges the modes.

* Approach I (section 5.2): the centred data are split into one chunk ``S_i`` per worker, sent once per
  call to a Dask actor (:class:`ChunkSums`) on that worker. Every MEM iteration sends the current (active)
  points to all workers; worker ``i`` returns its chunk's ``(max log kernel, sum of scaled kernels, sum of
  scaled kernel * x)`` (:func:`hlm.hmac._modal_em.kernel_sums`) and the master combines them by a
  log-sum-exp merge and takes the M-step. Actor calls cost ~2-4 ms per round trip on 2 cores (a task
  through the scheduler ~15 ms); a client with ``direct_to_workers=True`` (the call's own LocalCluster's)
  reaches the workers without the scheduler's hop.
* Approach II (section 5.3): the whole data are broadcast to every worker once per call; at each level
  the starting points are split among the workers (interleaved), each runs the serial MEM on its share.

The workers are a ``LocalCluster`` of ``n_workers`` single-threaded processes created and closed by the
call, or those of an existing scheduler (an address, e.g. a dask-jobqueue ``SLURMCluster``'s, or a
synchronous ``distributed.Client``). Workers must be able to import ``hlm``.
"""

from __future__ import annotations

import asyncio
import contextlib
import numbers
import os

import numpy as np

from hlm.errors import ConfigError
from hlm.hmac._modal_em import (
    BLOCK_BYTES,
    Centred,
    KernelChunk,
    climb,
    climb_steps,
    combine_sums,
    warn_unconverged,
)


def check_workers(n_workers, scheduler) -> int | None:
    """``n_workers`` None or a positive integer, ``scheduler`` None, an address or a Client; else a ConfigError."""
    if scheduler is not None and not isinstance(scheduler, str):
        from distributed import Client

        if not isinstance(scheduler, Client):
            raise ConfigError(f"scheduler must be an address such as 'tcp://host:8786' or a Client, got {scheduler!r}")
    if n_workers is None:
        return None
    if isinstance(n_workers, bool) or not isinstance(n_workers, numbers.Integral) or n_workers < 1:
        raise ConfigError(f"n_workers must be a positive integer, got {n_workers!r}")
    return int(n_workers)


@contextlib.contextmanager
def dask_client(n_workers: int | None = None, scheduler=None, connect_timeout: float = 5.0):
    """A ``distributed.Client``: the given one, one connected to ``scheduler``, or a new LocalCluster's of
    ``n_workers`` processes (default: the machine's cores).

    An address that cannot be reached within ``connect_timeout`` seconds, or a scheduler without workers,
    is a one-line ConfigError naming the address.
    """
    from distributed import Client, LocalCluster

    n_workers = check_workers(n_workers, scheduler)
    if isinstance(scheduler, Client):
        yield scheduler
        return
    if scheduler is not None:
        try:
            client = Client(scheduler, timeout=connect_timeout)
        except (OSError, TimeoutError, ValueError) as exc:
            reason = type(exc).__name__
            raise ConfigError(
                f"scheduler: cannot connect to the Dask scheduler at {scheduler!r} within {connect_timeout:g} s "
                f"({reason})"
            ) from None
        try:
            try:
                client.wait_for_workers(1, timeout=connect_timeout)
            except (OSError, TimeoutError):
                raise ConfigError(
                    f"scheduler: the Dask scheduler at {scheduler!r} has no workers after {connect_timeout:g} s"
                ) from None
            yield client
        finally:
            client.close()
        return
    n = n_workers or len(os.sched_getaffinity(0))  # the cores this process may use
    with (
        LocalCluster(**local_cluster_options(n)) as cluster,
        Client(cluster, direct_to_workers=True) as client,
    ):
        yield client


def local_cluster_options(n_workers: int) -> dict:
    """``LocalCluster`` keywords of the call's own cluster: ``n_workers`` single-threaded processes, no
    dashboard, the scheduler's HTTP server on a free port of 127.0.0.1 (no clash with another cluster's 8787; not
    reachable from other hosts)."""
    return {
        "n_workers": n_workers,
        "threads_per_worker": 1,
        "processes": True,
        "dashboard_address": None,
        "scheduler_kwargs": {"dashboard_address": "127.0.0.1:0"},
    }


def worker_addresses(client, n_workers: int | None = None) -> list[str]:
    """The addresses of the client's workers, sorted (deterministic chunk placement); the first ``n_workers``."""
    return sorted(client.scheduler_info(n_workers=-1)["workers"])[:n_workers]


def _climb_share(data: Centred, Z: np.ndarray, sigma: float, tol: float, max_iter: int, block_bytes: int):
    """Approach II's task: the serial MEM of one share of the starts against the whole (centred) data."""
    return climb(lambda A: data.step(A, sigma, block_bytes), Z, sigma, tol, max_iter)


class ChunkSums:
    """Approach I's worker state (a Dask actor): one chunk ``S_i`` of the centred data, sent once per call."""

    def __init__(self, C: np.ndarray):
        self.chunk = KernelChunk(C)

    async def sums(self, Z: np.ndarray, inv2s2: float, block_bytes: int) -> np.ndarray:
        """The chunk's ``kernel_sums`` at ``Z`` as one (a, p + 2) array ``[m, s, t]`` (one message frame).

        ``async``: runs on the worker's event loop, without a hop to a thread; a call is milliseconds.
        """
        m, s, t = self.chunk.sums(Z, inv2s2, block_bytes)
        return np.column_stack([m, s, t])


async def _climb_on_loop(actors, Z: np.ndarray, sigma: float, tol: float, max_iter: int, block_bytes: int):
    """Approach I's MEM loop on the client's event loop (``Client.sync``), sparing two thread hops per
    iteration: each iteration awaits every actor's sums for the active points, merges them and steps."""
    inv2s2 = 0.5 / sigma**2
    steps = climb_steps(Z, sigma, tol, max_iter)
    try:
        points = next(steps)
        while True:
            parts = await asyncio.gather(*[actor.sums(points, inv2s2, block_bytes) for actor in actors])
            _, s, t = combine_sums((part[:, 0], part[:, 1], part[:, 2:]) for part in parts)
            points = steps.send(t / s[:, None])
    except StopIteration as done:
        return done.value


def approach_i(client, data: Centred, tol: float, max_iter: int, block_bytes: int = BLOCK_BYTES, n_workers=None):
    """The level climber of approach I: each MEM iteration's sums split over the workers' data chunks.

    Returns ``(climber, handles)``; the actors live as long as ``handles`` (release them after the call).
    """
    workers = worker_addresses(client, n_workers)
    parts = [idx for idx in np.array_split(np.arange(data.C.shape[0]), len(workers)) if idx.size]
    handles = [
        client.submit(ChunkSums, data.C[idx], workers=[w], actor=True, pure=False) for w, idx in zip(workers, parts)
    ]
    actors = [h.result() for h in handles]

    def climber(Z: np.ndarray, sigma: float):
        out = client.sync(_climb_on_loop, actors, Z, sigma, tol, max_iter, block_bytes)
        warn_unconverged(out[2], Z.shape[0], max_iter, sigma)
        return out

    return climber, handles


def approach_ii(client, data: Centred, tol: float, max_iter: int, block_bytes: int = BLOCK_BYTES, n_workers=None):
    """The level climber of approach II: the starts split among the workers, each with all the data."""
    workers = worker_addresses(client, n_workers)
    shared = client.scatter(data, workers=workers, broadcast=True, hash=False)

    def climber(Z: np.ndarray, sigma: float):
        shares = [np.arange(w, Z.shape[0], len(workers)) for w in range(len(workers))]
        shares = [idx for idx in shares if idx.size]
        futures = [
            client.submit(_climb_share, shared, Z[idx], sigma, tol, max_iter, block_bytes, workers=[w], pure=False)
            for w, idx in zip(workers, shares)
        ]
        modes = np.empty_like(Z)
        n_iter = np.zeros(Z.shape[0], dtype=np.intp)
        left = 0
        for idx, (Zi, it, lft) in zip(shares, client.gather(futures)):
            modes[idx], n_iter[idx], left = Zi, it, left + lft
        warn_unconverged(left, Z.shape[0], max_iter, sigma)
        return modes, n_iter, left

    return climber, [shared]


def parallel_hmac(
    X: np.ndarray,
    bandwidths: np.ndarray,
    *,
    approach: str,
    tol: float,
    max_iter: int,
    merge_tol: float,
    nested: bool = True,
    n_workers=None,
    scheduler=None,
    connect_timeout: float = 5.0,
    block_bytes: int = BLOCK_BYTES,
):
    """HMAC with approach ``"I"`` or ``"II"`` on Dask workers (arguments checked by ``hmac``).

    ``n_workers``: the size of the call's own LocalCluster; with ``scheduler``, how many of its workers to use
    (default: all).
    """
    from hlm.hmac._hmac import run_levels

    data = Centred(X)
    make = approach_i if approach == "I" else approach_ii
    with dask_client(n_workers, scheduler, connect_timeout) as client, client.as_current():
        # as_current: the actors of approach I bind to the current client (get_client), which must be this one
        climber, handles = make(client, data, tol, max_iter, block_bytes, n_workers)
        try:
            return run_levels(data, bandwidths, climber, merge_tol, nested)
        finally:
            client.cancel(handles)  # frees the workers' copies on a scheduler that outlives the call
