"""Gaussian mixture classifiers on feature vectors (Qiao's dissertation, chapters 2 and 4).

* :class:`TwoWayGMMClassifier`: the two-way Gaussian mixture with variable clustering and missing values
  (chapter 2; docs/twoway-gmm-spec.md); with ``n_clusters=None``, MDA.
* :class:`SubspaceGMMClassifier`: mixtures whose component means lie in a low-dimensional subspace found
  by modal PCA (GMM-MPCA, -MEAN, -SEP; chapter 4, docs/subspace-gmm-spec.md); :class:`ReducedRankMDA`
  (MDA-RR), :class:`OptimalScoringMDA` (MDA-RR-OS, the same by optimal scoring) and :class:`ProjectedMDA` (MDA
  on the data projected onto that subspace) are its baselines.
* :func:`mpca_subspace`, :func:`mpca_mean_subspace`, :func:`closeness`: modal PCA and the closeness of two
  subspaces.
"""

from hlm._lazy import lazy_exports

_EXPORTS = {
    "TwoWayGMMClassifier": "hlm.mixture._twoway",
    "SubspaceGMMClassifier": "hlm.mixture._subspace",
    "ProjectedMDA": "hlm.mixture._subspace",
    "ReducedRankMDA": "hlm.mixture._mda_rr",
    "OptimalScoringMDA": "hlm.mixture._mda_os",
    "mpca_subspace": "hlm.mixture._mpca",
    "mpca_mean_subspace": "hlm.mixture._mpca",
    "closeness": "hlm.mixture._mpca",
}
__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)
