"""Distances between objects, by name, and the conversions between similarities and distances.

* The table of distances (:data:`DISTANCES`, :func:`get_distance`, :func:`pairwise`): ``dtw`` (series),
  ``alignment`` (sequences; a similarity) and ``hamming`` (sequences), ``euclidean``, ``cityblock`` and
  ``cosine`` (feature vectors), ``vdm`` (categorical records; it uses the labels). One distance per module.
* Row blocks of the upper triangle (:func:`block_ranges`, :func:`compute_block`, :func:`assemble`): the
  pipeline's resumable distance stage.
* Conversions (paper section 5.2): :func:`similarity_to_distance`, :func:`distance_to_similarity`,
  :func:`symmetrize`.
* Classifier wrappers: :class:`VDMDistances` (the VDM of each fit set's labels only),
  :class:`SimilarityFromDistances` (s = 1/d per fit set, for similarity methods on distance-only data),
  :class:`DistanceTransform` (the similarity-to-distance rule chosen by CV).
"""

from hlm._lazy import lazy_exports

_EXPORTS = {
    "DISTANCES": "hlm.distances._registry",
    "Distance": "hlm.distances._registry",
    "get_distance": "hlm.distances._registry",
    "pairwise": "hlm.distances._registry",
    "block_ranges": "hlm.distances._blocks",
    "compute_block": "hlm.distances._blocks",
    "assemble": "hlm.distances._blocks",
    "dtw": "hlm.distances._dtw",
    "alignment_scores": "hlm.distances._alignment",
    "hamming": "hlm.distances._hamming",
    "euclidean": "hlm.distances._euclidean",
    "value_difference_metric": "hlm.distances._vdm",
    "VDMDistances": "hlm.distances._vdm_classifier",
    "similarity_to_distance": "hlm.distances._conversions",
    "distance_to_similarity": "hlm.distances._conversions",
    "symmetrize": "hlm.distances._conversions",
    "SimilarityFromDistances": "hlm.distances._reciprocal",
    "DistanceTransform": "hlm.distances._transform",
}
__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)
