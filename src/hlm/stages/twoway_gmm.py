"""Pipeline stages of the two-way GMM's grid protocol (workflow/rules/twoway_gmm.smk; docs/twoway-gmm-spec.md 8)."""

from __future__ import annotations

import logging
from pathlib import Path

import pandas as pd

log = logging.getLogger("hlm")


def twoway_gmm(*, dataset: str, entry: dict, out: str, seed: int, cv_folds: int, n_splits: int,
               test_fraction: float, settings: dict, tags: dict, n_jobs: int = 1, root: str | Path = ".") -> None:
    """The two-way GMM at every (M, L) and MDA at every M on the project's splits, plus both chosen by CV,
    to Parquet. ``settings``: the config's ``twoway_gmm`` section (its grids). Features are z-scored inside
    the estimator where the registry standardizes them (mixed units)."""
    from hlm.evaluation.twoway_gmm import run_twoway_gmm
    from hlm.stages.protocol import protocol_vectors, write_protocol

    spec, records = protocol_vectors("two-way GMM protocol", dataset, entry, root)
    grids = {k: settings[k] for k in ("n_components", "n_clusters") if k in settings}
    frame = run_twoway_gmm(records.features, records.labels, dataset=dataset, seed=seed, cv_folds=cv_folds,
                           n_splits=n_splits, test_fraction=test_fraction, standardize=bool(spec.standardize),
                           n_jobs=n_jobs, **grids)
    write_protocol(frame, out, {"dataset": dataset, "seed": seed, "n_splits": n_splits, "cv_folds": cv_folds,
                                "test_fraction": test_fraction, "standardize": bool(spec.standardize)}, tags)
    for (method, selection), g in frame.groupby(["method", "selection"], sort=False):
        log.info("%s/%s (%s): error %.2f%% (mean over %d fits), %.2f s per fit", dataset, method, selection,
                 g.error.mean(), len(g), g.fit_seconds.mean())


def twoway_gmm_report(inputs: list[str], *, csv_out: str, md_out: str) -> None:
    """results/tables/twoway_gmm.{csv,md}: error over (M, L) beside MDA (the chapter's Tables 2.1-2.3)."""
    from hlm.data.artifacts import write_text
    from hlm.reporting.twoway_gmm import grid_table, twoway_gmm_markdown

    frames = {Path(p).stem: pd.read_parquet(p) for p in inputs}
    table = grid_table(frames)
    write_text(table.to_csv(index=False), csv_out)
    write_text(twoway_gmm_markdown(frames, table), md_out)
    log.info("%s written", md_out)
