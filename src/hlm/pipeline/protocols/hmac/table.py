"""HMAC's table (docs/hmac-spec.md): the clusters per level of every data set, results/tables/hmac.{csv,md}."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pandas as pd

log = logging.getLogger("hlm")

TABLE_COLUMNS = ["dataset", "n", "p", "approach", "workers", "seconds", "level", "bandwidth", "n_clusters",
                 "changed", "largest", "n_clusters_non_nested", "ari_non_nested"]


def hmac_table(frames: dict) -> pd.DataFrame:
    """One row per (data set, level); ``frames``: data set -> (levels frame, Parquet metadata)."""
    rows = []
    for dataset, (frame, meta) in frames.items():
        for _, r in frame.iterrows():
            rows.append({"dataset": dataset, "n": meta.get("n"), "p": meta.get("p"), "approach": meta.get("approach"),
                         "workers": meta.get("workers"), "seconds": float(r["total_seconds"]),
                         "level": int(r["level"]), "bandwidth": float(r["bandwidth"]),
                         "n_clusters": int(r["n_clusters"]), "changed": bool(r["changed"]),
                         "largest": int(max(r["sizes"])),
                         "n_clusters_non_nested": r.get("n_clusters_non_nested", pd.NA),
                         "ari_non_nested": r.get("ari_non_nested", np.nan)})
    return pd.DataFrame(rows, columns=TABLE_COLUMNS)


def hmac_markdown(frames: dict, table: pd.DataFrame) -> str:
    """Per data set: n, p, the approach and its time, then the clusters at every level."""
    lines = ["# HMAC: clusters at every bandwidth level", "",
             "Hierarchical mode association clustering (dissertation chapters 4.2 and 5; docs/hmac-spec.md) of "
             "each data set's feature vectors (z-scored where the registry standardizes them), at the bandwidths "
             "σ equally spaced in [low σ̂, high σ̂] (σ̂: the largest feature sd). A level marked `=` has the "
             "clustering of the level below it. \"Non-nested\": HMAC's option of no nesting (section 5.4), every "
             "level climbed from every point; ARI: its adjusted Rand index with the nested level (1: the same "
             "partition). Figures: results/figures/hmac_{dataset}.png.", ""]
    for dataset, (_, meta) in frames.items():
        t = table[table.dataset == dataset]
        lines += [f"## {dataset}", "",
                  f"{meta.get('n')} points, {meta.get('p')} features; {meta.get('approach')} "
                  f"({meta.get('workers')} worker(s)): {float(meta.get('seconds', np.nan)):.2f} s for all levels.",
                  *([f"Without nesting: {float(meta['non_nested_seconds']):.2f} s for all levels."]
                    if pd.notna(meta.get("non_nested_seconds", np.nan)) else []),
                  "", "| level | σ | clusters | largest | | non-nested clusters | ARI |",
                  "|---|---|---|---|---|---|---|"]
        for _, r in t.iterrows():
            flat = (f"{r.n_clusters_non_nested} | {r.ari_non_nested:.3f}" if pd.notna(r.ari_non_nested) else "– | –")
            lines.append(f"| {r.level} | {r.bandwidth:.4g} | {r.n_clusters} | {r.largest} | "
                         f"{'' if r.changed else '='} | {flat} |")
        lines.append("")
    return "\n".join(lines)


def table(inputs: list[str], *, csv_out: str, md_out: str) -> None:
    """results/tables/hmac.{csv,md}: per data set, the clusters at every level and the time."""
    from hlm.datasets._artifacts import read_metadata, write_text

    frames = {Path(p).stem: (pd.read_parquet(p), read_metadata(p)) for p in inputs}
    result = hmac_table(frames)
    write_text(result.to_csv(index=False), csv_out)
    write_text(hmac_markdown(frames, result), md_out)
    log.info("%s written", md_out)
