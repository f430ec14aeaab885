"""Fitted models saved without pickles (JSON and ``.npz``), and new objects classified with them.

* :func:`save_model`, :func:`load_model`: a :class:`SavedModel` (a fitted estimator, its data set's conversion
  and its reference objects) as a folder; ``hlm fit`` writes one, ``hlm predict`` reads it.
* :func:`reference_index`: the training objects whose distances a fitted model reads.
* :func:`to_state`, :func:`from_state`: a fitted estimator as a JSON tree and numeric arrays, and back.
"""

from hlm._lazy import lazy_exports

_EXPORTS = {
    "SavedModel": "hlm.persistence._model",
    "StateError": "hlm.persistence._state",
    "from_state": "hlm.persistence._state",
    "load_model": "hlm.persistence._model",
    "reference_index": "hlm.persistence._reference",
    "save_model": "hlm.persistence._model",
    "to_state": "hlm.persistence._state",
}
__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)
