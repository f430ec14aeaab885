"""Online KDE classifiers on feature vectors: oKDE and odKDE (docs/online-kde-spec.md)."""

from hlm.models.okde.classifier import ODKDEClassifier, OKDEClassifier

__all__ = ["OKDEClassifier", "ODKDEClassifier"]
