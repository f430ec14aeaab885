"""Locally linear classification by pairwise coupling (Chen, Lu & Boedihardjo; docs/llc-pc-spec.md).

:class:`LLCPairwiseCoupling`: each class split into subclasses (Greedy-MPE or k-means), a linear classifier
per pair of subclasses of different classes, combined by voting, MinMax or pairwise coupling.
"""

from hlm._lazy import lazy_exports

_EXPORTS = {
    "LLCPairwiseCoupling": "hlm.llc_pc._llc_pc",
}
__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)
