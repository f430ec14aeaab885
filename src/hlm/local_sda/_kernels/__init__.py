"""Compiled kernels (numba) of the local SDA family: every row of a prediction in one call.

- ``core``: the exponential pmf on Omega (numpy's pairwise summation, the tilted mean and
  log partition function, a port of scipy's ``brentq.c``), the root lambda of one moment
  constraint, and the constants and status codes they all share;
- ``local``: local SDA's row model and decision (hlm.local_sda._local_sda): class groups,
  centroids, constraints, scores, the tie rule and the fallback;
- ``pairwise``, ``regularized``, ``bayes``: the kernels of hlm.local_sda._pairwise,
  local_sda_regularized and local_sda_bayes, built from those parts.

They repeat the floating-point operations of the row-by-row references in tests/oracles/ in
their order, so they take the same decisions and agree with their values to rounding (except
``core.UNIFORM``'s closed forms, which regularized local SDA uses on an equally spaced support:
equal to the sums within a derived bound, so a decision can differ only at a near-tie). A
module whose kernels use another's declares it to ``hlm._numba_cache`` (numba's on-disk cache
would otherwise keep a stale copy of an edited callee). The estimator modules import from
these modules directly; this package imports none of them.
"""
