"""Incremental learning with HLM (paper section 4; protocol of section 5.5).

Three learners with the same API, all clustering by VSH:

* :class:`SchemeI` (section 4.1): each batch is clustered on its own into
  ``n_components`` new components per class; the model keeps only each
  component's sufficient statistics (|I_j|, ubar_j) and the running geometric
  mean u~ of all squared distances with its count, updated by
  u~ = u~_1^(N_1/N) (prod_new u_i)^(1/N). Nothing else of the past is kept but
  the prototypes' identities, which prediction needs.
* :class:`SchemeII` (section 4.2): from each existing cluster, v points plus its
  prototype are sampled (all of it if |I_j| <= v; |I_j| counts the cluster's
  points besides its prototype) with weight sqrt((|I_j| + 1) / (v + 1)) (1 if
  |I_j| <= v); new points weigh 1; weighted VSH
  on R = H D clusters the sample and the new batch into 2 more components per
  class than the previous round; the unsampled past points are reassigned to
  their nearest new prototype and eq. 3 is applied to all data
  (``estimate="eq4"``: eq. 4 on the weighted sample and the new batch only).
* :class:`Retrain`: batch Mixture HLM (VSH) on everything seen so far, with
  Scheme II's number of components per class at each round.

Layout: ``_scheme_i``, ``_scheme_ii`` (its sampling of the past clusters: ``SchemeII.draw_sample``),
``_retrain``, the shared bookkeeping in ``_learner`` and the distance look-up in ``_distances``.

Objects are named by ids; distances come from a callable ``distances(rows,
cols)`` (ids in, matrix out), e.g. :class:`MatrixDistances` over a full matrix.
A learner asks only for what its scheme needs, so Scheme I never touches the
distances of past batches. Clusters with fewer than ``min_cluster_size`` objects
(prototype included) are left out of the estimate (section 5.5: 3).

Unlike a classifier's ``fit`` (which refuses a single class), ``partial_fit`` accepts
a batch of a single class, as a later batch can add classes; ``predict`` before any
``partial_fit`` raises scikit-learn's ``NotFittedError``.
"""

from hlm._lazy import lazy_exports

_EXPORTS = {
    "Distances": "hlm.local_mapping.incremental._distances",
    "MatrixDistances": "hlm.local_mapping.incremental._distances",
    "COMPONENT_STEP": "hlm.local_mapping.incremental._learner",
    "INITIAL_COMPONENTS": "hlm.local_mapping.incremental._learner",
    "component_schedule": "hlm.local_mapping.incremental._learner",
    "Retrain": "hlm.local_mapping.incremental._retrain",
    "SchemeI": "hlm.local_mapping.incremental._scheme_i",
    "SAMPLE_SIZE": "hlm.local_mapping.incremental._scheme_ii",
    "SchemeII": "hlm.local_mapping.incremental._scheme_ii",
    "sample_weight": "hlm.local_mapping.incremental._scheme_ii",
}
__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)
