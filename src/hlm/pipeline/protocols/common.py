"""What the papers' own protocols (online KDE, LLC-PC, two-way GMM) share: their feature vectors, read from
the registry entry (no distance matrix), and their Parquet output with its provenance."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from hlm.datasets._artifacts import write_frame


def protocol_vectors(protocol: str, dataset: str, entry: dict, root: str | Path = "."):
    """The registry entry's ``VectorRecords``; a one-line DataError for a data set that has no feature vectors."""
    from hlm.datasets._prepare import load_vectors
    from hlm.datasets._registry import validate_entry
    from hlm.errors import DataError

    spec = validate_entry(dataset, entry)
    if spec.kind != "vectors":
        raise DataError(f"{protocol}: data set '{dataset}' is of kind '{spec.kind}'; it needs feature "
                        "vectors (kind: vectors)")
    return spec, load_vectors(spec, Path(root))


def write_protocol(frame: pd.DataFrame, out: str, metadata: dict, tags: dict) -> None:
    """The protocol's rows to Parquet, with its settings and the run's provenance tags in the metadata."""
    write_frame(frame, out, metadata={**metadata, **{k: v for k, v in tags.items()
                                                      if k in ("config_hash", "git_commit")}})
