"""Pipeline stages of the LLC-PC paper's protocol (workflow/rules/llc_pc.smk; docs/llc-pc-spec.md 8)."""

from __future__ import annotations

import logging
from pathlib import Path

import pandas as pd

log = logging.getLogger("hlm")


def llc_pc(*, dataset: str, entry: dict, out: str, seed: int, cv_folds: int, n_partitions: int, tags: dict,
           n_jobs: int = 1, root: str | Path = ".") -> None:
    """LLC-PC with Greedy-MPE and k-means subclasses under the paper's protocol on one data set, to Parquet."""
    from hlm.evaluation.llc_pc import run_llc_pc
    from hlm.stages.protocol import protocol_vectors, write_protocol

    _, records = protocol_vectors("LLC-PC protocol", dataset, entry, root)
    frame = run_llc_pc(records.features, records.labels, dataset=dataset, seed=seed, cv_folds=cv_folds,
                       n_partitions=n_partitions, n_jobs=n_jobs)
    write_protocol(frame, out, {"dataset": dataset, "seed": seed, "n_partitions": n_partitions,
                                "cv_folds": cv_folds}, tags)
    for method, g in frame.groupby("method", sort=False):
        curve = g[g.selection == "path"].groupby("n_subclasses").accuracy.mean()
        cv = g[g.selection == "cv"]
        log.info("%s/%s: optimal %.2f%% at K = %d; CV %.2f%% (median K %g)", dataset, method, curve.max(),
                 curve.idxmax(), cv.accuracy.mean(), cv.n_subclasses.median())


def llc_pc_report(inputs: list[str], *, csv_out: str, md_out: str) -> None:
    """results/tables/llc_pc.{csv,md}: our optimal and CV-chosen accuracy next to the paper's Table 2."""
    from hlm.data.artifacts import write_text
    from hlm.reporting.llc_pc import llc_pc_markdown, llc_pc_table
    from hlm.reporting.paper import LLC_PC_SOURCE, PAPER_LLC_PC

    frames = {Path(p).stem: pd.read_parquet(p) for p in inputs}
    table = llc_pc_table(frames, PAPER_LLC_PC)
    write_text(table.to_csv(index=False), csv_out)
    write_text(llc_pc_markdown(table, frames, PAPER_LLC_PC, LLC_PC_SOURCE), md_out)
    log.info("%s written", md_out)
