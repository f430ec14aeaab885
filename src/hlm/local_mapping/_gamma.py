"""Gamma shape/scale maximum likelihood from sufficient statistics (paper eqs. 3, 4).

HLM models the squared distance u between a point and its prototype as
Gamma(shape s, scale b_j). With one shared shape and one scale per
component j the MLE solves (eq. 3)

    log s - psi(s) = log( prod_j ubar_j^{|I_j|/N} / (prod_i u_i)^{1/N} ),
    b_j = ubar_j / s,

and with weights w_i (eq. 4) the same with weighted means and exponents.
Eq. 3 is eq. 4 with w_i = 1/N, so everything here works from per-component
weighted sufficient statistics ``(W_j, sum_i w_i u_i, sum_i w_i log u_i)``.

The estimation is a pure function of these statistics: the clustering code,
the incremental schemes and Kernel HLM all reduce their data to them.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from scipy.special import digamma, polygamma

#: Largest shape returned. log s - psi(s) ~ 1/(2s), so c below ~1/(2*MAX_SHAPE)
#: (all u nearly equal) means the data cannot bound the shape.
MAX_SHAPE = 1e6


def solve_shape(c, *, tol: float = 1e-12, max_iter: int = 100) -> np.ndarray:
    """Solve ``log s - psi(s) = c`` for s > 0, elementwise (c > 0).

    Starts from Minka's closed form s0 = (3 - c + sqrt((c - 3)^2 + 24 c)) / (12 c),
    then runs Minka's generalized Newton step on 1/s, which converges in a few
    iterations for every c > 0. Entries with c <= 1/(2 * MAX_SHAPE) return MAX_SHAPE.
    """
    c = np.asarray(c, dtype=np.float64)
    if np.any(~np.isfinite(c)) or np.any(c < 0):
        raise ValueError("solve_shape: c = log(mean u / geometric mean u) must be finite and >= 0")
    flat = np.atleast_1d(c).ravel()
    out = np.full(flat.shape, MAX_SHAPE)
    ok = flat > 0.5 / MAX_SHAPE
    cc = flat[ok]
    s = (3.0 - cc + np.sqrt((cc - 3.0) ** 2 + 24.0 * cc)) / (12.0 * cc)
    for _ in range(max_iter):
        f = np.log(s) - digamma(s) - cc
        fprime = 1.0 / s - polygamma(1, s)
        inv = 1.0 / s + f / (s * s * fprime)
        s_new = 1.0 / inv
        done = np.abs(s_new - s) <= tol * s_new
        s = s_new
        if np.all(done):
            break
    out[ok] = np.minimum(s, MAX_SHAPE)
    return out.reshape(c.shape)


def round_shape(s):
    """Round to a half-integer so that d = 2s is an integer: s* = floor(2s + 0.5)/2, >= 0.5 (section 2.1)."""
    return np.maximum(np.floor(2.0 * np.asarray(s, dtype=np.float64) + 0.5) / 2.0, 0.5)


@dataclass(frozen=True)
class ComponentStats:
    """Weighted sufficient statistics of the squared distances u in each component.

    ``weight[j] = sum w_i``, ``sum_u[j] = sum w_i u_i``, ``sum_log_u[j] = sum w_i log u_i``
    over the members i of component j (prototype excluded, u_i > 0). Unweighted
    statistics use w_i = 1, so ``weight`` is then the count |I_j|.
    """

    weight: np.ndarray
    sum_u: np.ndarray
    sum_log_u: np.ndarray

    @classmethod
    def from_samples(cls, u, component, n_components: int, weights=None) -> ComponentStats:
        """Accumulate statistics from samples ``u`` (> 0) with ``component`` indices."""
        u = np.asarray(u, dtype=np.float64)
        component = np.asarray(component, dtype=np.intp)
        w = np.ones_like(u) if weights is None else np.asarray(weights, dtype=np.float64)
        if np.any(u <= 0):
            raise ValueError("ComponentStats: every u must be > 0 (drop prototypes and zeros first)")
        return cls(
            weight=np.bincount(component, w, minlength=n_components),
            sum_u=np.bincount(component, w * u, minlength=n_components),
            sum_log_u=np.bincount(component, w * np.log(u), minlength=n_components),
        )

    def __add__(self, other: ComponentStats) -> ComponentStats:
        return ComponentStats(
            self.weight + other.weight, self.sum_u + other.sum_u, self.sum_log_u + other.sum_log_u
        )

    @property
    def mean_u(self) -> np.ndarray:
        """Per-component (weighted) mean ubar_j (NaN for empty components)."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return self.sum_u / self.weight


def shape_statistic(stats: ComponentStats) -> float:
    """Right-hand side of eqs. 3/4: sum_j W_j log ubar_j - sum_i w_i log u_i, with sum w = 1."""
    used = stats.weight > 0
    total = stats.weight[used].sum()
    if total <= 0:
        raise ValueError("no positive squared distance to estimate the shape from")
    w = stats.weight[used] / total
    c = float(np.sum(w * np.log(stats.sum_u[used] / stats.weight[used])) - stats.sum_log_u[used].sum() / total)
    # Jensen guarantees c >= 0; clip round-off.
    return max(c, 0.0)


@dataclass(frozen=True)
class GammaFit:
    """Result of the HLM Gamma fit: estimated shape, shape used, and scales (paper eqs. 3, 4; section 2.1).

    Returned by :func:`fit_gamma` (frozen). Under HLM the squared distance u of a point to its
    prototype follows Gamma(shape s = d/2, scale b_j = 2 sigma_j^2) (section 2.1), so a fit also
    gives the dimension d = 2 s of the hypothetical Euclidean space and sigma_j^2 = b_j / 2.

    Parameters
    ----------
    shape_mle : float
        The maximum likelihood shape s-hat of eq. 3 (eq. 4 for weighted statistics), unrounded.
    shape : float
        The shape used to score: s* = floor(2 s-hat + 0.5) / 2 (section 2.1), or s-hat when
        :func:`fit_gamma` was called with ``rounding=False``.
    scale : ndarray of shape (n_components,)
        b_j = ubar_j / s-hat per component, with the unrounded s-hat as in eq. 3 (shrunk toward the
        common value with ``shrinkage=True``); NaN for components without data.

    Attributes
    ----------
    shape_mle : float
        As given: s-hat.
    shape : float
        As given: the shape used to score.
    scale : ndarray of shape (n_components,)
        As given: b_j per component.

    See Also
    --------
    fit_gamma : computes it from per-component sufficient statistics.

    Examples
    --------
    Squared distances drawn from Gamma(s = 2, b = 3), one component:

    >>> import numpy as np
    >>> from hlm.local_mapping import fit_gamma
    >>> from hlm.local_mapping import ComponentStats
    >>> u = np.random.default_rng(0).gamma(shape=2.0, scale=3.0, size=1000)
    >>> fit = fit_gamma(ComponentStats.from_samples(u, np.zeros(u.size, dtype=int), n_components=1))
    >>> fit.shape, 2 * fit.shape  # s*, and the dimension d = 2 s*
    (2.0, 4.0)
    >>> round(fit.shape_mle, 2), fit.scale.round(2)
    (2.0, array([3.01]))
    """

    shape_mle: float  # s-hat of eq. 3/4
    shape: float  # the shape used to score (rounded s* unless rounding is off)
    scale: np.ndarray  # b_j = ubar_j / s-hat per component (NaN for components without data)


def fit_gamma(stats: ComponentStats, *, shrinkage: bool = False, rounding: bool = True) -> GammaFit:
    """Common-shape Gamma MLE from component statistics (paper eq. 3, or eq. 4 if weighted; section 2.1).

    Solves log s - psi(s) = log( prod_j ubar_j^{W_j} / prod_i u_i^{w_i} ) (sum w = 1) for the
    shape s-hat. The scales are b_j = ubar_j / s-hat with the unrounded MLE s-hat, as in eq. 3;
    ``rounding`` then adjusts the shape used to score to s* (section 2.1: "we
    adjust the estimation s-hat above to s*"), leaving b_j as estimated.
    ``shrinkage`` applies section 2.1's b_j = lam ubar_j/s + (1 - lam) ubar/s with
    lam = |I_j| / (|I_j| + 1) (|I_j| taken as ``stats.weight``).

    Parameters
    ----------
    stats : ComponentStats
        Per-component (weighted) sufficient statistics ``(W_j, sum_i w_i u_i, sum_i w_i log u_i)`` of
        the squared distances u > 0 (``hlm.local_mapping._gamma.ComponentStats``). Unit weights give
        eq. 3, other weights eq. 4; eq. 3 is eq. 4 with w_i = 1/N.
    shrinkage : bool, default=False
        Shrink each b_j toward the common ubar / s-hat with lam = |I_j| / (|I_j| + 1) (section 2.1).
    rounding : bool, default=True
        Score with the half-integer s* = floor(2 s-hat + 0.5) / 2 (so that d = 2 s* is an integer);
        False: with s-hat itself.

    Returns
    -------
    GammaFit
        ``shape_mle`` (s-hat), ``shape`` (the shape used to score) and ``scale`` (b_j per component,
        NaN for components without data).

    Raises
    ------
    ValueError
        If no component holds a positive weight (nothing to estimate from).

    Warns
    -----
    RuntimeWarning
        If all u are (nearly) equal: the shape is unbounded and ``MAX_SHAPE`` (1e6) is used.

    Examples
    --------
    Two components with scales b_1 = 1 and b_2 = 4 and a common shape s = 2:

    >>> import numpy as np
    >>> from hlm.local_mapping import fit_gamma
    >>> from hlm.local_mapping import ComponentStats
    >>> rng = np.random.default_rng(0)
    >>> u = np.concatenate([rng.gamma(2.0, 1.0, 500), rng.gamma(2.0, 4.0, 500)])
    >>> component = np.repeat([0, 1], 500)
    >>> stats = ComponentStats.from_samples(u, component, n_components=2)
    >>> fit = fit_gamma(stats)
    >>> fit.shape, fit.scale.round(1)
    (2.0, array([0.9, 4.2]))

    Eq. 3 is eq. 4 with w_i = 1/N; shrinkage pulls every b_j toward the common value:

    >>> weighted = ComponentStats.from_samples(u, component, 2, weights=np.full(u.size, 1 / u.size))
    >>> bool(np.isclose(fit_gamma(weighted).shape_mle, fit.shape_mle))
    True
    >>> shrunk = fit_gamma(stats, shrinkage=True)
    >>> bool(shrunk.scale[0] > fit.scale[0] and shrunk.scale[1] < fit.scale[1])
    True
    >>> fit_gamma(stats, rounding=False).shape == fit.shape_mle
    True
    """
    c = shape_statistic(stats)
    if c <= 0.5 / MAX_SHAPE:
        warnings.warn(
            "all squared distances u are (nearly) equal: the Gamma shape is unbounded; "
            f"using s = {MAX_SHAPE:g}",
            RuntimeWarning,
            stacklevel=2,
        )
    s_hat = float(solve_shape(c))
    s = float(round_shape(s_hat)) if rounding else s_hat
    mean_j = stats.mean_u
    if shrinkage:
        used = stats.weight > 0
        grand = stats.sum_u[used].sum() / stats.weight[used].sum()
        lam = stats.weight / (stats.weight + 1.0)
        mean_j = lam * mean_j + (1.0 - lam) * grand
    return GammaFit(shape_mle=s_hat, shape=s, scale=mean_j / s_hat)


def log_pseudo_density(sq_dist, shape: float, scale) -> np.ndarray:
    """log of eq. 1: -s log(pi b) - D^2 / b, broadcasting ``scale`` over the last axis."""
    scale = np.asarray(scale, dtype=np.float64)
    return -shape * np.log(np.pi * scale) - np.asarray(sq_dist, dtype=np.float64) / scale
