"""Support vector machines on similarities (HLM paper's Tables 2-3; the local SDA paper's Table II).

* :class:`SVMSimilarityKernel`: the similarity matrix as the kernel, its spectrum made PSD by clipping,
  flipping, shifting or squaring (:class:`SpectrumTransform`; compared-methods spec, section 6.6).
* :class:`SVMSimilarityFeatures`: each object's similarities to the training objects as its features,
  under a linear or RBF kernel.
* :class:`SVMKNN`: an SVM on each test object's k-neighbourhood, with a clip, flip, shift or features
  local kernel (sections 6.7-6.8).
* :class:`PSVM`: the potential support vector machine, which needs neither a square nor a PSD matrix
  (section 6.9).
* :class:`SVMVectors`: the standard SVM on feature vectors, as the HLM paper's section 5.3 runs it.
"""

from hlm._lazy import lazy_exports

_EXPORTS = {
    "SVMSimilarityKernel": "hlm.svm._similarity",
    "SVMSimilarityFeatures": "hlm.svm._similarity",
    "SVMVectors": "hlm.svm._similarity",
    "SVMKNN": "hlm.svm._svm_knn",
    "PSVM": "hlm.svm._psvm.estimator",
    "SpectrumTransform": "hlm.svm._spectrum",
}
__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)
