"""Pipeline stages for data: raw data set -> distances artifact -> splits (workflow/rules/{datasets,splits}.smk)."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pandas as pd

from hlm.datasets._artifacts import write_distances, write_frame

log = logging.getLogger("hlm")


def preprocess(name: str, entry: dict, output: str, root: str | Path = ".", *, dtype: str) -> None:
    """Raw data set -> ``results/distances/{dataset}.parquet`` (paper section 5.2), its matrices stored as
    ``dtype``."""
    from hlm.datasets._prepare import prepare_dataset
    from hlm.datasets._registry import validate_entry

    spec = validate_entry(name, entry)
    artifact = prepare_dataset(spec, Path(root))
    write_distances(artifact, output, dtype)
    log.info(
        "%s: %d objects, %d classes, conversion %s, written to %s (%s)",
        name, artifact.n, len(np.unique(artifact.labels)), artifact.conversion, output, dtype,
    )


def splits(distances: str, output: str, *, dataset: str, n_splits: int | None, test_fraction: float | None,
           seed: int | None, given: bool = False) -> None:
    """``results/splits/{dataset}.parquet``: split, index, role. ``given``: the archive's own train/test
    split as the only one (registry ``split: given``), else ``n_splits`` random ones."""
    from hlm.pipeline.evaluation.splits import given_split, make_splits

    ids = pd.read_parquet(distances, columns=["id"])["id"].tolist()
    n = len(ids)
    if given:
        table = given_split(ids, dataset=dataset)
        meta = {"dataset": dataset, "n": n, "n_splits": 1, "split": "given",
                "n_test": int((table["role"] == "test").sum())}
    else:
        table = make_splits(n, dataset=dataset, n_splits=n_splits, test_fraction=test_fraction, seed=seed)
        meta = {"dataset": dataset, "n": n, "n_splits": n_splits, "test_fraction": test_fraction, "seed": seed}
    write_frame(table, output, metadata=meta)
    log.info("%s: %s of %d objects", dataset, "the archive's own split" if given else f"{n_splits} splits", n)


# -- raw objects (kind series / sequences): objects -> row blocks -> distances ----------------
def objects(name: str, entry: dict, output: str, root: str | Path = ".") -> None:
    """Raw objects of one entry -> ``results/objects/{dataset}.parquet`` (id, label, object)."""
    from hlm.datasets._objects import load_objects, write_objects
    from hlm.datasets._registry import validate_entry

    spec = validate_entry(name, entry)
    ids, objs, labels, meta = load_objects(spec, root)
    write_objects(ids, objs, labels, output, meta)
    log.info("%s: %d objects (%s), %d classes, written to %s", name, len(ids), spec.kind, len(set(labels)), output)


def distance_block(objects_path: str, output: str, *, dataset: str, distance: str, options: dict, i0: int,
                   i1: int, block_size: int) -> None:
    """Rows i0..i1-1 of the upper triangle -> one cached block file (a progress line in the log)."""
    import time

    from hlm.datasets._objects import read_objects
    from hlm.distances._blocks import compute_block

    _, objs, _ = read_objects(objects_path)
    n_blocks, index = -(-len(objs) // block_size), i0 // block_size
    t = time.perf_counter()
    block = compute_block(objs, distance, i0, i1, options)
    write_frame(pd.DataFrame({"row": np.arange(i0, i1), "values": list(block)}), output,
                metadata={"dataset": dataset, "distance": distance, "i0": i0, "i1": i1, "n": len(objs)})
    log.info("%s: block %d of %d (rows %d-%d, %d pairs) done in %.2f s", dataset, index + 1, n_blocks, i0,
             i1 - 1, int(np.isfinite(block).sum()), time.perf_counter() - t)


def distances_from_blocks(name: str, entry: dict, objects_path: str, blocks: list[str], output: str, *,
                          dtype: str) -> None:
    """Assemble the row blocks (lower triangle by symmetry) -> ``results/distances/{dataset}.parquet``, its
    matrices stored as ``dtype``."""
    from hlm.datasets._artifacts import read_metadata
    from hlm.datasets._objects import artifact_from_matrix, read_objects
    from hlm.datasets._registry import validate_entry
    from hlm.distances._blocks import assemble

    spec = validate_entry(name, entry)
    ids, _, labels = read_objects(objects_path)

    def parts():  # one block file in memory at a time
        for path in blocks:
            meta = read_metadata(path)
            yield int(meta["i0"]), int(meta["i1"]), np.stack(pd.read_parquet(path)["values"].to_numpy())

    M = assemble(parts(), len(ids), where=f"dataset '{name}' distance blocks")
    artifact = artifact_from_matrix(spec, ids, labels, M, {**read_metadata(objects_path), "n_blocks": len(blocks)})
    write_distances(artifact, output, dtype)
    log.info("%s: %d x %d %s matrix from %d blocks, conversion %s, written to %s (%s)", name, len(ids), len(ids),
             spec.distance, len(blocks), artifact.conversion, output, dtype)
