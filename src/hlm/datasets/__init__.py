"""Data sets: the registry (config/datasets.yaml), the readers of every format, and the distance artifact.

* :func:`load_registry`, :func:`get_spec`, :class:`DatasetSpec`: registry entries, checked against
  ``registry.schema.yaml`` with one-line errors.
* :func:`prepare_dataset`: a matrix or vector entry read, validated and converted into a
  :class:`DistanceArtifact` (paper section 5.2); :func:`load_vectors`: an entry's feature vectors;
  :func:`load_objects`: raw series or sequences (their distances: :mod:`hlm.distances`).
* :func:`read_distances`, :func:`write_distances`: the artifact on disk (Parquet and a memory-mapped .npy).
* :func:`generate`: the generated data sets (Ringnorm, Waveform).
"""

from hlm._lazy import lazy_exports

_EXPORTS = {
    "load_registry": "hlm.datasets._registry",
    "get_spec": "hlm.datasets._registry",
    "validate_entry": "hlm.datasets._registry",
    "DatasetSpec": "hlm.datasets._registry",
    "prepare_dataset": "hlm.datasets._prepare",
    "load_vectors": "hlm.datasets._prepare",
    "load_objects": "hlm.datasets._objects",
    "DistanceArtifact": "hlm.datasets._artifacts",
    "read_distances": "hlm.datasets._artifacts",
    "write_distances": "hlm.datasets._artifacts",
    "generate": "hlm.datasets._generated",
}
__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)
