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


def gathered_rows(parts: list[str], methods, before: tuple[str, ...], after: tuple[str, ...] = ()) -> pd.DataFrame:
    """The rows of a protocol's parts' files in the order of one whole job: by the columns ``before``, then the
    method in the order of ``methods``, then the columns ``after`` (stable: a part's own order is kept within)."""
    frame = pd.concat([pd.read_parquet(p) for p in parts], ignore_index=True)
    rank = frame.method.map({m: i for i, m in enumerate(methods)}).rename("_rank")
    keys = [*before, "_rank", *after]
    order = pd.concat([frame[list(before)], rank, frame[list(after)]], axis=1).sort_values(keys, kind="stable").index
    return frame.loc[order].reset_index(drop=True)
