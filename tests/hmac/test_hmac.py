"""HMAC and modal EM (docs/hmac-spec.md section 9): known modes, stationarity, ascent, the level structure,
serial == approach I == approach II on Dask, and one-line errors for bad input.

One module-scoped ``LocalCluster`` (2 single-threaded worker processes, the layout ``hmac`` itself makes)
serves the parallel tests, through a ``Client`` and through its address; one more test lets ``hmac``
create and close its own cluster. Start-up is ~1-4 s each on 2 cores, so processes (the default being
tested) are affordable.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import logsumexp
from sklearn.exceptions import ConvergenceWarning

from hlm.errors import ConfigError, DataError
from hlm.hmac._hmac import HMACResult, ModeClustering, bandwidth_sequence, hmac, modal_em
from messages import one_line

SD = 0.5  # component sd of the known-modes data
N_PER = 100  # points per component


def blobs(p: int, seed: int = 0):
    """3 well-separated spherical Gaussian components (sd SD, means 10 SD apart), N_PER points each."""
    rng = np.random.default_rng(seed)
    means = np.zeros((3, p))
    means[1, 0] = means[2, 1] = 10 * SD
    means[2, 0] = 5 * SD
    y = np.repeat(np.arange(3), N_PER)
    return means[y] + SD * rng.standard_normal((y.size, p)), y, means


def log_kde(X, z, h):
    """Closed-form log of the Gaussian KDE (weights 1/n, covariance h^2 I) at the rows of z."""
    d2 = ((z[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    n, p = X.shape
    return logsumexp(-d2 / (2 * h * h), axis=1) - np.log(n) - 0.5 * p * np.log(2 * np.pi * h * h)


def grad_log_kde(X, z, h):
    """Closed-form gradient of log KDE: (weighted mean of X - z) / h^2, weights the kernel posteriors."""
    d2 = ((z[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    w = np.exp(-d2 / (2 * h * h) - logsumexp(-d2 / (2 * h * h), axis=1, keepdims=True))
    return (w @ X - z) / (h * h)


def mode_sd(s: float, h: float, p: int, n: int) -> float:
    """Sampling sd of one coordinate of the KDE mode of n points from N(mu, s^2 I) at bandwidth h.

    Linearising the MEM fixed point at mu: mode - mu ~ (kernel-weighted mean - mu) / (1 - J), J = s^2/(s^2+h^2)
    the population MEM map's Jacobian; the weighted mean's variance is E[w^2 u^2] / (n E[w]^2) with
    w = exp(-|u|^2 / 2h^2), u ~ N(0, s^2 I): E[w] = r1^(p/2), E[w^2 u_1^2] = s^2 r2^(3/2) r2^((p-1)/2),
    r1 = h^2/(h^2+s^2), r2 = h^2/(h^2+2s^2).
    """
    r1, r2 = h * h / (h * h + s * s), h * h / (h * h + 2 * s * s)
    var = s * s * r2 ** ((p + 2) / 2) / (n * r1**p)
    return float(np.sqrt(var) * (s * s + h * h) / (h * h))


# --- modal EM ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("p", [2, 5])
def test_modal_em_finds_the_component_modes(p):
    X, y, means = blobs(p)
    h = SD
    modes = modal_em(X, X, h, tol=1e-8)
    found = np.unique(np.round(modes / (1e-4 * h)), axis=0) * 1e-4 * h
    assert found.shape[0] == 3  # one mode per component, every point climbs to one of them
    nearest = np.argmin(((modes[:, None, :] - means[None]) ** 2).sum(-1), axis=1)
    np.testing.assert_array_equal(nearest, y)  # each point's mode is its own component's
    # within 5 sampling sds (per coordinate) of the component mean; the other components are >= 10 SD away,
    # their pull on the mode below exp(-40)
    for k in range(3):
        mode = modes[y == k].mean(axis=0)
        assert np.abs(mode - means[k]).max() <= 5 * mode_sd(SD, h, p, N_PER)
        np.testing.assert_allclose(modes[y == k], np.broadcast_to(mode, (N_PER, p)), atol=1e-5 * h)


def test_modal_em_stops_at_a_stationary_point_above_its_start():
    X, _, _ = blobs(2, seed=1)
    h, tol = 0.8 * SD, 1e-7
    starts = X[::7] + 0.3 * SD
    modes = modal_em(X, starts, h, tol=tol)
    # |grad log f| * h^2 is the next MEM step, below tol * h once the step before it was (rate < 1)
    assert np.abs(grad_log_kde(X, modes, h)).max() * h * h < tol * h
    assert (log_kde(X, modes, h) >= log_kde(X, starts, h)).all()


def test_modal_em_agrees_with_a_quasi_newton_optimizer():
    X, _, _ = blobs(2, seed=2)
    h = SD
    starts = X[[0, 150, 299]] + 0.2
    modes = modal_em(X, starts, h, tol=1e-9)
    for start, mode in zip(starts, modes):
        res = minimize(
            lambda z: -log_kde(X, z[None], h)[0],
            start,
            method="BFGS",
            jac=lambda z: -grad_log_kde(X, z[None], h)[0],
            options={"gtol": 1e-10},
        )
        np.testing.assert_allclose(mode, res.x, atol=1e-5 * h)


def test_modal_em_ascends_monotonically():
    X, _, _ = blobs(2, seed=3)
    h = 2.5 * SD  # components merge: long, slow climbs
    starts = X[[0, 100, 200]] + np.array([1.0, -1.0])
    path = [starts]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for k in range(1, 60):  # modal_em with max_iter=k returns the k-th MEM iterate
            path.append(modal_em(X, starts, h, tol=1e-12, max_iter=k))
    dens = np.array([log_kde(X, z, h) for z in path])
    assert (np.diff(dens, axis=0) >= -1e-12).all()
    assert (dens[-1] > dens[0]).all()


def test_modal_em_warns_at_max_iter():
    X, _, _ = blobs(2)
    with pytest.warns(ConvergenceWarning, match="max_iter=2"):
        modal_em(X, X[:5] + 1.0, SD, max_iter=2)


# --- HMAC levels ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def blobs2():
    return blobs(2)


@pytest.fixture(scope="module")
def serial2(blobs2):
    return hmac(blobs2[0])


def test_bandwidth_sequence_is_the_chapters_default(blobs2):
    X = blobs2[0]
    s = X.std(axis=0, ddof=1).max()
    np.testing.assert_allclose(bandwidth_sequence(X), np.linspace(0.1 * s, 2 * s, 20))
    np.testing.assert_allclose(bandwidth_sequence(X, 3, 1.0, 2.0), [s, 1.5 * s, 2 * s])


def test_hmac_levels_are_nested_and_canonical(blobs2, serial2):
    X = blobs2[0]
    n = X.shape[0]
    res = serial2
    assert isinstance(res, HMACResult) and len(res.levels) == 20
    np.testing.assert_array_equal(res.bandwidths, bandwidth_sequence(X))
    prev_labels, prev_m = np.arange(n), n
    for level in res.levels:
        assert isinstance(level, ModeClustering)
        m = level.n_clusters
        assert level.modes.shape == (m, 2) and level.density.shape == (m,) and level.parent.shape == (prev_m,)
        np.testing.assert_array_equal(level.labels, level.parent[prev_labels])  # nested
        np.testing.assert_array_equal(level.sizes, np.bincount(level.labels, minlength=m))
        assert level.sizes.min() >= 1 and level.sizes.sum() == n
        np.testing.assert_allclose(level.weights.sum(), 1.0)
        _, first = np.unique(level.labels, return_index=True)
        assert (np.diff(first) > 0).all()  # clusters ordered by smallest member
        assert level.changed == (m < prev_m)
        np.testing.assert_allclose(level.density, log_kde(X, level.modes, level.bandwidth), rtol=1e-12)
        assert not level.modes.flags.writeable and not level.labels.flags.writeable
        prev_labels, prev_m = level.labels, m
    assert (np.diff(res.n_clusters) <= 0).all()
    np.testing.assert_array_equal(res.levels[0].parent, res.levels[0].labels)
    assert 3 in res.n_clusters  # the three components are one level
    three = res.levels[int(np.flatnonzero(res.n_clusters == 3)[0])]
    np.testing.assert_array_equal(three.labels, blobs2[1])


def test_hmac_extreme_bandwidths(blobs2):
    X = blobs2[0]
    d = np.sqrt(((X[:, None] - X[None]) ** 2).sum(-1))
    tiny = 0.01 * d[d > 0].min()
    res = hmac(X, [tiny, 100 * X.std()])
    assert res.n_clusters.tolist() == [X.shape[0], 1]
    np.testing.assert_array_equal(res.levels[0].labels, np.arange(X.shape[0]))
    np.testing.assert_allclose(res.levels[0].modes, X, atol=1e-6 * tiny)
    assert res.levels[0].changed is False and res.levels[1].changed is True


def test_hmac_duplicates_allowed_share_a_cluster(blobs2):
    X = np.vstack([blobs2[0], blobs2[0][[5]]])
    res = hmac(X, [0.01 * SD, SD], allow_duplicates=True)
    assert res.levels[0].labels[-1] == res.levels[0].labels[5]
    # the copies alone merging is no change: at a bandwidth far below the smallest distance between distinct
    # points, level 1 has as many clusters as distinct points and is not flagged
    d = np.sqrt(((X[:, None] - X[None]) ** 2).sum(-1))
    tiny = hmac(X, [0.01 * d[d > 0].min(), SD], allow_duplicates=True).levels[0]
    assert tiny.n_clusters == X.shape[0] - 1 and tiny.changed is False
    assert res.levels[0].changed == (res.levels[0].n_clusters < X.shape[0] - 1)


def test_non_nested_levels_are_each_the_one_level_hmac_of_their_bandwidth(blobs2):
    """Section 5.4's option of no nesting: every level climbs from the points, so level l is the first (and
    only) level of HMAC at sigma_l alone, bit for bit (the same climb of the same starts); a level's parent is
    its labels (it starts from the singletons), and ``changed`` says whether the partition moved."""
    X = blobs2[0]
    bw = bandwidth_sequence(X, 8)
    flat = hmac(X, bw, nested=False)
    assert flat.nested is False and hmac(X, bw).nested is True
    prev = None
    for sigma, level in zip(bw, flat.levels):
        alone = hmac(X, [sigma]).levels[0]
        np.testing.assert_array_equal(level.labels, alone.labels)
        np.testing.assert_array_equal(level.modes, alone.modes)
        np.testing.assert_array_equal(level.density, alone.density)
        np.testing.assert_array_equal(level.parent, level.labels)
        np.testing.assert_allclose(level.density, log_kde(X, level.modes, level.bandwidth), rtol=1e-12)
        assert level.changed == (alone.changed if prev is None else not np.array_equal(level.labels, prev))
        prev = level.labels
    # three separated components: both ways find them, as the same partition, at the same levels
    nested = hmac(X, bw)
    assert 3 in nested.n_clusters and 3 in flat.n_clusters
    for a, b in zip(nested.levels, flat.levels):
        if a.n_clusters == 3 or b.n_clusters == 3:
            assert a.n_clusters == b.n_clusters == 3
            np.testing.assert_array_equal(a.labels, b.labels)
            np.testing.assert_array_equal(b.labels, blobs2[1])


# --- parallel approaches on Dask --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def dask_cluster():
    from distributed import Client, LocalCluster

    from hlm.hmac._parallel import local_cluster_options

    with (
        LocalCluster(**local_cluster_options(2)) as cluster,
        Client(cluster) as client,
    ):
        yield cluster, client


def assert_same(a: HMACResult, b: HMACResult, tol: float):
    """Identical labels, parents and sizes; modes within 100 * tol * sigma_l (spec section 5: near-coincident
    converged points may elect a different member of highest density; each is within ~tol sigma/(1 - rate))."""
    np.testing.assert_array_equal(a.bandwidths, b.bandwidths)
    for la, lb in zip(a.levels, b.levels):
        np.testing.assert_array_equal(la.labels, lb.labels)
        np.testing.assert_array_equal(la.parent, lb.parent)
        np.testing.assert_array_equal(la.sizes, lb.sizes)
        np.testing.assert_allclose(la.modes, lb.modes, rtol=0, atol=100 * tol * la.bandwidth)
        assert la.changed == lb.changed


@pytest.mark.parametrize("approach", ["I", "II"])
def test_parallel_equals_serial(blobs2, serial2, dask_cluster, approach):
    _, client = dask_cluster
    assert_same(serial2, hmac(blobs2[0], parallel=approach, scheduler=client), 1e-6)


def test_parallel_in_5d_through_the_scheduler_address(dask_cluster):
    cluster, _ = dask_cluster
    X = blobs(5, seed=4)[0]
    bw = bandwidth_sequence(X, 8)
    serial = hmac(X, bw)
    for approach in ("I", "II"):
        assert_same(serial, hmac(X, bw, parallel=approach, scheduler=cluster.scheduler_address), 1e-6)
    for approach in ("I", "II"):  # the non-nested levels, each climbed in parallel
        assert_same(hmac(X, bw, nested=False),
                    hmac(X, bw, nested=False, parallel=approach, scheduler=cluster.scheduler_address), 1e-6)
    # n_workers with a scheduler: how many of its workers to use
    assert_same(serial, hmac(X, bw, parallel="I", scheduler=cluster.scheduler_address, n_workers=1), 1e-6)


def test_parallel_with_its_own_local_cluster(blobs2):
    X = blobs2[0]
    bw = bandwidth_sequence(X, 4)
    assert_same(hmac(X, bw), hmac(X, bw, parallel="II", n_workers=2), 1e-6)


# --- bad input --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("bandwidth", [0.0, -1.0, np.nan, np.inf, "1"])
def test_bad_bandwidth(blobs2, bandwidth):
    X = blobs2[0]
    with pytest.raises(DataError) as exc:
        modal_em(X, X[:2], bandwidth)
    one_line(exc, "bandwidth")
    with pytest.raises(DataError) as exc:
        hmac(X, [1.0, bandwidth])
    one_line(exc, "bandwidths")


def test_bad_data(blobs2):
    X = blobs2[0]
    cases = [
        (X[:1], "X", "1 x 2"),
        (np.where(np.arange(X.size).reshape(X.shape) == 7, np.nan, X), "X", "NaN/inf", "[3, 1]"),
        (np.where(np.arange(X.size).reshape(X.shape) == 8, np.inf, X), "X", "NaN/inf", "[4, 0]"),
        (np.vstack([X, X[[17]], X[[3]]]), "X", "rows 17 and 300", "allow_duplicates"),
        (X[:, 0], "X", "2-D"),
    ]
    for data, *needles in cases:
        with pytest.raises(DataError) as exc:
            hmac(data)
        one_line(exc, *needles)
    with pytest.raises(DataError) as exc:
        modal_em(X, X[:2, :1], 1.0)
    one_line(exc, "starts", "dimensions")
    with pytest.raises(DataError) as exc:
        hmac(X, [2.0, 1.0])
    one_line(exc, "strictly increasing")
    for kwargs, needle in [({"tol": 0}, "tol"), ({"max_iter": 0}, "max_iter"), ({"merge_tol": -1}, "merge_tol")]:
        with pytest.raises(DataError) as exc:
            hmac(X, **kwargs)
        one_line(exc, needle)


def test_bad_parallel_options(blobs2):
    X = blobs2[0]
    for kwargs, needle in [
        ({"parallel": "III"}, "parallel"),
        ({"n_workers": 2}, "parallel="),
        ({"parallel": "I", "n_workers": 0}, "n_workers"),
        ({"parallel": "I", "n_workers": 1.5}, "n_workers"),
        ({"parallel": "II", "scheduler": 8786}, "scheduler"),
        ({"nested": "no"}, "nested"),
    ]:
        with pytest.raises(ConfigError) as exc:
            hmac(X, **kwargs)
        one_line(exc, needle)


def test_unreachable_scheduler_is_one_line(blobs2):
    """A scheduler address nothing listens on: a port this test holds bound but not listening, so the connection
    is refused (no port is assumed closed, and nothing waits for a timeout to pass)."""
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as held:
        held.bind(("127.0.0.1", 0))
        address = f"tcp://127.0.0.1:{held.getsockname()[1]}"
        with pytest.raises(ConfigError) as exc:
            hmac(blobs2[0], parallel="I", scheduler=address, connect_timeout=1.0)
    one_line(exc, f"'{address}'", "Dask scheduler")


@pytest.mark.parametrize("block_bytes", [8 * 7, 8 * 7 * 3, 8 * 7 * 100])
def test_kernel_sums_by_row_blocks_equal_the_direct_sums(block_bytes):
    """``kernel_sums`` over blocks of rows of the starts (one row of 7 kernels per 56 bytes: blocks of 1, 3 and
    all 12 rows, the last one short) against the sums written directly: m = max_k l_k, s = sum_k exp(l_k - m),
    t = sum_k exp(l_k - m) c_k, with l_k = -|z - c_k|^2 / (2 sigma^2)."""
    from hlm.hmac._modal_em import block_rows, kernel_sums

    rng = np.random.default_rng(41)
    C, Z, sigma = rng.normal(size=(7, 3)), rng.normal(size=(12, 3)) * 2, 0.8
    assert block_rows(7, block_bytes) == block_bytes // 56
    m, s, t = kernel_sums(C, (C**2).sum(1), Z, 1 / (2 * sigma**2), block_bytes)
    L = -((Z[:, None, :] - C[None, :, :]) ** 2).sum(-1) / (2 * sigma**2)
    m_ref = L.max(axis=1)
    E = np.exp(L - m_ref[:, None])
    # |z - c|^2 is formed as |z|^2 - 2 z.c + |c|^2: its rounding, relative to the largest of those terms
    scale = ((Z**2).sum(1)[:, None] + (C**2).sum(1)[None, :]).max() / (2 * sigma**2)
    np.testing.assert_allclose(m, m_ref, rtol=0, atol=8 * np.finfo(float).eps * scale)
    np.testing.assert_allclose(s, E.sum(1), rtol=16 * np.finfo(float).eps * scale)
    np.testing.assert_allclose(t, E @ C, rtol=16 * np.finfo(float).eps * scale, atol=1e-14)
