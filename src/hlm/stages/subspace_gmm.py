"""Pipeline stages of chapter 4's grid protocol (workflow/rules/subspace_gmm.smk; docs/subspace-gmm-spec.md)."""

from __future__ import annotations

import logging
from pathlib import Path

import pandas as pd

log = logging.getLogger("hlm")


def subspace_gmm(*, dataset: str, entry: dict, out: str, figure: str, seed: int, settings: dict, tags: dict,
                 n_jobs: int = 1, root: str | Path = ".") -> None:
    """Every method at every (R, d) of the grid on the chapter's partitions (ten fresh simulations of a generated
    data set, else stratified cross-validation), to Parquet; and the 2-D view of the first partition."""
    import numpy as np

    from hlm.evaluation.subspace_gmm import cv_parts, run_subspace_gmm, simulation_parts
    from hlm.reporting.subspace_view import plot_subspace_view
    from hlm.stages.protocol import protocol_vectors, write_protocol

    spec, records = protocol_vectors("subspace GMM protocol", dataset, entry, root)
    if spec.format == "generated":
        design = {"design": "simulations", "n_simulations": settings["n_simulations"],
                  "n_train": settings["n_train"], "n_test": settings["n_test"]}
        parts = simulation_parts(spec, settings["n_simulations"], settings["n_train"], settings["n_test"], seed,
                                 dataset)
    else:
        design = {"design": "cv", "n_folds": settings["n_folds"]}
        parts = cv_parts(np.asarray(records.features, dtype=np.float64), np.asarray(records.labels),
                         settings["n_folds"], seed, dataset)
    standardize = bool(spec.standardize)
    frame = run_subspace_gmm(parts, dataset=dataset, seed=seed, n_components=settings["n_components"],
                             n_dims=settings.get("n_dims"), standardize=standardize, n_jobs=n_jobs)
    write_protocol(frame, out, {"dataset": dataset, "seed": seed, "standardize": standardize, **design}, tags)
    plot_subspace_view(parts[0], figure, dataset=dataset, seed=seed, standardize=standardize)
    for method, g in frame.groupby("method", sort=False):
        cells = g.groupby(["n_components", "n_dims"])["error"].mean()
        log.info("%s/%s: best cell %.2f%% at (R, d) = %s; %.2f s per fit", dataset, method, cells.min(),
                 cells.idxmin() if cells.notna().any() else None, g.fit_seconds.mean())


def subspace_gmm_report(inputs: list[str], *, csv_out: str, md_out: str) -> None:
    """results/tables/subspace_gmm.{csv,md}: error per (R, method, d) beside the chapter's Tables 4.1-4.2."""
    from hlm.data.artifacts import read_metadata, write_text
    from hlm.reporting.subspace_gmm import grid_table, subspace_gmm_markdown

    frames = {Path(p).stem: (pd.read_parquet(p), read_metadata(p)) for p in inputs}
    table = grid_table({k: f for k, (f, _) in frames.items()})
    write_text(table.to_csv(index=False), csv_out)
    write_text(subspace_gmm_markdown(frames, table), md_out)
    log.info("%s written", md_out)
