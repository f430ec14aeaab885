"""Kernel density classifiers on feature vectors (Kristan & Leonardis; docs/online-kde-spec.md).

* :class:`OKDEClassifier` and :class:`ODKDEClassifier`: the online KDE and the online discriminative KDE,
  one Gaussian mixture per class learnt one object at a time, compressed as it grows.
* :class:`KDEClassifier`: the batch KDE per class with its bandwidth by held-out likelihood.
* :class:`OnlineKDELearner`: oKDE and odKDE behind the interface of HLM's incremental learners.
"""

from hlm._lazy import lazy_exports

_EXPORTS = {
    "OKDEClassifier": "hlm.kde._online",
    "ODKDEClassifier": "hlm.kde._online",
    "KDEClassifier": "hlm.kde._kde_cv",
    "OnlineKDELearner": "hlm.kde._learner",
}
__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)
