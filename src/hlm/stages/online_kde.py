"""Pipeline stages of the odKDE paper's protocol (workflow/rules/online_kde.smk; docs/online-kde-spec.md 9)."""

from __future__ import annotations

import logging
from pathlib import Path

import pandas as pd

log = logging.getLogger("hlm")


def online_kde(*, dataset: str, entry: dict, out: str, seed: int, cv_folds: int, tags: dict,
               root: str | Path = ".") -> None:
    """oKDE, odKDE and the batch baselines under the paper's protocol on one data set, to Parquet.

    The feature vectors are read from the registry entry (no distance matrix: Letter's would be 3.2 GB).
    """
    from hlm.evaluation.online_kde import N_FOLDS, N_INIT, N_ORDERINGS, run_online_kde
    from hlm.stages.protocol import protocol_vectors, write_protocol

    _, records = protocol_vectors("online KDE protocol", dataset, entry, root)
    frame = run_online_kde(records.features, records.labels, dataset=dataset, seed=seed, cv_folds=cv_folds)
    write_protocol(frame, out, {"dataset": dataset, "seed": seed, "folds": N_FOLDS, "orderings": N_ORDERINGS,
                                "n_init": N_INIT, "cv_folds": cv_folds}, tags)
    for method, g in frame.groupby("method", sort=False):
        log.info("%s/%s: accuracy %.2f%% (sd %.2f), %.1f components per class, %.2f s per fit", dataset, method,
                 g.accuracy.mean(), g.accuracy.std(ddof=1), g.components_per_class.mean(), g.fit_seconds.mean())


def online_kde_report(inputs: list[str], *, csv_out: str, md_out: str) -> None:
    """results/tables/online_kde.{csv,md}: our numbers next to the paper's Table 1."""
    from hlm.data.artifacts import write_text
    from hlm.evaluation.online_kde import BATCH_METHODS, ONLINE_METHODS
    from hlm.reporting.paper import PAPER_ONLINE_KDE, PAPER_ONLINE_KDE_OTHERS
    from hlm.reporting.tables import online_kde_markdown, online_kde_table

    frames = {Path(p).stem: pd.read_parquet(p) for p in inputs}
    table = online_kde_table(frames, PAPER_ONLINE_KDE)
    write_text(table.to_csv(index=False), csv_out)
    write_text(online_kde_markdown(table, list(frames), [*ONLINE_METHODS, *BATCH_METHODS], PAPER_ONLINE_KDE_OTHERS),
               md_out)
    log.info("%s written", md_out)
