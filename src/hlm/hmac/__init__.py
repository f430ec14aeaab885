"""HMAC, hierarchical mode association clustering (Qiao's dissertation, chapters 4.2 and 5; docs/hmac-spec.md).

:func:`hmac` clusters feature vectors by the modes of Gaussian kernel densities at a sequence of bandwidths
(:func:`bandwidth_sequence`), each found by modal EM (:func:`modal_em`), serially or in parallel on Dask
(approaches I and II); the result (:class:`HMACResult`) holds a :class:`ModeClustering` per level.
"""

from hlm._lazy import lazy_exports

_EXPORTS = {
    "hmac": "hlm.hmac._hmac",
    "HMACResult": "hlm.hmac._hmac",
    "ModeClustering": "hlm.hmac._hmac",
    "bandwidth_sequence": "hlm.hmac._hmac",
    "modal_em": "hlm.hmac._modal_em",
}
__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)
