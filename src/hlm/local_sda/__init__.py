"""Local similarity discriminant analysis and its family (Cazzanti & Gupta; Sadowski, Cazzanti & Gupta).

* :class:`LocalSDA`: per test object, an exponential model of the similarities to each class's centroid in
  its k-neighbourhood (compared-methods spec, section 6.5).
* :class:`PairwiseLocalSDA`, :class:`RegularizedLocalSDA`, :class:`BayesianLocalSDA`,
  :class:`PairwiseBayesianLocalSDA`: the variants of *Bayesian and pairwise local similarity discriminant
  analysis* (docs/local-sda-family-spec.md); the Bayesian ones with a Dirichlet-multinomial (Polya) prior
  fitted by maximum likelihood (:func:`fit_polya`).
"""

from hlm._lazy import lazy_exports

_EXPORTS = {
    "LocalSDA": "hlm.local_sda._local_sda",
    "PairwiseLocalSDA": "hlm.local_sda._pairwise",
    "RegularizedLocalSDA": "hlm.local_sda._regularized",
    "BayesianLocalSDA": "hlm.local_sda._bayes",
    "PairwiseBayesianLocalSDA": "hlm.local_sda._bayes",
    "PolyaFit": "hlm.local_sda._dirichlet",
    "fit_polya": "hlm.local_sda._dirichlet",
}
__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)
