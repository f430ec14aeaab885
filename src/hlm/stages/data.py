"""Pipeline stages for data: raw data set -> distances artifact -> splits (workflow/rules/{datasets,splits}.smk)."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pandas as pd

from hlm.data.artifacts import write_distances, write_frame

log = logging.getLogger("hlm")


def preprocess(name: str, entry: dict, output: str, root: str | Path = ".") -> None:
    """Raw data set -> ``results/distances/{dataset}.parquet`` (paper section 5.2)."""
    from hlm.data.prepare import prepare_dataset
    from hlm.data.registry import validate_entry

    spec = validate_entry(name, entry)
    artifact = prepare_dataset(spec, Path(root))
    write_distances(artifact, output)
    log.info(
        "%s: %d objects, %d classes, conversion %s, written to %s",
        name, artifact.n, len(np.unique(artifact.labels)), artifact.conversion, output,
    )


def splits(distances: str, output: str, *, dataset: str, n_splits: int, test_fraction: float, seed: int) -> None:
    """``results/splits/{dataset}.parquet``: split, index, role."""
    from hlm.evaluation.splits import make_splits

    n = len(pd.read_parquet(distances, columns=["id"]))
    table = make_splits(n, dataset=dataset, n_splits=n_splits, test_fraction=test_fraction, seed=seed)
    write_frame(table, output, metadata={"dataset": dataset, "n": n, "n_splits": n_splits,
                                         "test_fraction": test_fraction, "seed": seed})
    log.info("%s: %d splits of %d objects", dataset, n_splits, n)
