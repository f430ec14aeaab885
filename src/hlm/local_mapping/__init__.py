"""Hypothetical Local Mapping: Kernel HLM and Mixture HLM (Qiao & Li; dissertation chapter 3).

* :class:`KernelHLM` (section 3.2): every training object a component, its Gamma shape and scale fitted by
  maximum likelihood (eqs. 3, 4), class posteriors by eq. 6.
* :class:`MixtureHLM` (section 3.1): each class clustered into M components by VSH, generalized k-means
  (k-center start) or Ward (its private clusterers, ``_clustering``); :class:`HLMModel` is the fitted
  mixture, which classifies from the distances to its prototypes alone.
* :class:`ClaraMixtureHLM`: Mixture HLM from raw objects and a distance, clustering samples (CLARA) so that
  the N x N matrix is never formed.
* Schemes I and II of incremental learning (section 4) and retraining: :mod:`hlm.local_mapping.incremental`.
"""

from hlm._lazy import lazy_exports

_EXPORTS = {
    "KernelHLM": "hlm.local_mapping._kernel_hlm",
    "MixtureHLM": "hlm.local_mapping._mixture_hlm",
    "HLMModel": "hlm.local_mapping._mixture_hlm",
    "ClaraMixtureHLM": "hlm.local_mapping._clara",
    "ComponentStats": "hlm.local_mapping._gamma",
    "GammaFit": "hlm.local_mapping._gamma",
    "fit_gamma": "hlm.local_mapping._gamma",
    "SchemeI": "hlm.local_mapping.incremental._scheme_i",
    "SchemeII": "hlm.local_mapping.incremental._scheme_ii",
    "Retrain": "hlm.local_mapping.incremental._retrain",
    "MatrixDistances": "hlm.local_mapping.incremental._distances",
}
__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)
