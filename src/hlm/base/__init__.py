"""What every estimator shares: scikit-learn plumbing on precomputed matrices and the CV fast paths.

* :class:`PrecomputedClassifier` (distances), :class:`SimilarityClassifier` (similarities),
  :class:`PosteriorClassifier` (class posteriors from log densities): input checks, the pairwise tag,
  ``NotFittedError``.
* :class:`FastPathMixin`: the fast-path protocol the CV calls (docs/architecture.md).
* :func:`derive_seed`: seeds derived from (seed, data set, split, fold, ...) by hashing.
"""

from hlm._lazy import lazy_exports

_EXPORTS = {
    "PrecomputedClassifier": "hlm.base._classifiers",
    "SimilarityClassifier": "hlm.base._classifiers",
    "PosteriorClassifier": "hlm.base._classifiers",
    "FastPathMixin": "hlm.base._classifiers",
    "derive_seed": "hlm.base._seeds",
}
__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)
