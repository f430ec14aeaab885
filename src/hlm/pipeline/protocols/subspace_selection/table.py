"""results/tables/subspace_selection.{csv,md}: Table 4.5 beside the dissertation's, and Figure 4.1's reading (where
the most likely candidate's test error ranks among all candidates')."""

from __future__ import annotations

import logging
from functools import cache
from pathlib import Path

import numpy as np
import pandas as pd

from hlm.pipeline.protocols.chapter4_parts import NAMES
from hlm.pipeline.reporting.numbers import paper_numbers

log = logging.getLogger("hlm")


@cache
def paper_tables() -> dict:
    """The dissertation's Table 4.5 per data set (paper.yaml)."""
    return paper_numbers(__package__)["tables"]


def closeness_markdown(dataset: str, frame: pd.DataFrame) -> list[str]:
    """Table 4.5's layout: per d, "(MPCA, MPCA-MEAN)" at each level the dissertation lists (ours, then its)."""
    close = frame[frame.kind == "closeness"]
    paper = paper_tables().get(dataset)
    levels = paper["levels"] if paper else sorted(close.level.unique())[1::2]
    at = close.set_index(["method", "n_dims", "level"])
    modes = close[close.method == "gmm_mpca"].drop_duplicates("level").set_index("level").n_modes
    lines = ["| bandwidth level | " + " | ".join(map(str, levels)) + " |", "|---|" + "---|" * len(levels)]
    paper_modes = paper["n_modes"] if paper else [None] * len(levels)
    lines.append("| modes, ours (paper) | " + " | ".join(
        f"{int(modes[lv]) if lv in modes.index else '–'}" + (f" ({pm})" if pm is not None else "")
        for lv, pm in zip(levels, paper_modes)) + " |")
    for d in sorted(close.n_dims.unique()):
        cells = []
        for i, lv in enumerate(levels):
            ours = [at.mean_closeness.get((m, d, lv), np.nan) for m in ("gmm_mpca", "gmm_mpca_mean")]
            text = "(" + ", ".join("–" if np.isnan(v) else f"{v:.2f}" for v in ours) + ")"
            theirs = (paper or {}).get("closeness", {}).get(int(d))
            if theirs is not None:
                text += " vs ({:.2f}, {:.2f})".format(*theirs[i])
            cells.append(text)
        lines.append(f"| d = {d} | " + " | ".join(cells) + " |")
    return lines


def selection_summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Per (method, d): the candidates, the chosen one's level and test error, the candidates' error range and the
    chosen error's rank among them (1: lowest; ties share the best rank)."""
    sel = frame[frame.kind == "selection"]
    rows = []
    for (method, d), g in sel.groupby(["method", "n_dims"], sort=False):
        best = g[g.chosen].iloc[0]
        rows.append({"method": method, "n_dims": int(d), "candidates": len(g), "chosen_level": int(best.level),
                     "chosen_error": float(best.test_error), "min_error": float(g.test_error.min()),
                     "max_error": float(g.test_error.max()),
                     "rank": int((g.test_error < best.test_error).sum() + 1)})
    return pd.DataFrame(rows)


def below_count(frame: pd.DataFrame, method: str, than: str = "gmm_mpca") -> tuple[int, int]:
    """(levels where ``method``'s candidate has a lower test error than ``than``'s at the same d and level, levels
    both have): the text's reading of Figure 4.1."""
    sel = frame[frame.kind == "selection"].set_index(["method", "n_dims", "level"]).test_error
    mine, theirs = sel.get(method), sel.get(than)
    if mine is None or theirs is None:
        return 0, 0
    both = mine.index.intersection(theirs.index)
    return int((mine[both] < theirs[both]).sum()), int(len(both))


def selection_markdown(frame: pd.DataFrame) -> list[str]:
    summary = selection_summary(frame)
    lines = ["| method | d | candidates | chosen level | its test error % | range over candidates % | its rank |",
             "|---|---:|---:|---:|---:|---|---:|"]
    for r in summary.itertuples():
        lines.append(f"| {NAMES.get(r.method, r.method)} | {r.n_dims} | {r.candidates} | {r.chosen_level} | "
                     f"{r.chosen_error:.2f} | {r.min_error:.2f}–{r.max_error:.2f} | {r.rank} of {r.candidates} |")
    for method in ("gmm_mpca_mean", "gmm_mpca_sep"):
        k, n = below_count(frame, method)
        if n:
            lines.append(f"\n{NAMES[method]} below GMM-MPCA at {k} of the {n} (d, level) pairs both have.")
    return lines


def selection_table_markdown(frames: dict) -> str:
    lines = ["# Chapter 4: the subspaces' sensitivity to the bandwidth and model selection", "",
             "The first partition of chapter 4's protocol, three components per class (dissertation sections "
             "4.5.3-4.5.4; docs/subspace-gmm-spec.md section 5.1). Figures: results/figures/subspace_selection_"
             "{dataset}.png.", ""]
    for dataset, (frame, _) in frames.items():
        n_train = int(frame.n_train.iloc[0]) if len(frame) else 0
        lines += [f"## {dataset}", "", f"{n_train} training objects.", "",
                  "**Table 4.5**: mean closeness of each level's subspace to those of all preceding levels, "
                  "(MPCA, MPCA-MEAN), ours vs the dissertation's.", "", *closeness_markdown(dataset, frame), "",
                  "**Figure 4.1**: the maximum-likelihood candidate among all candidate subspaces.", "",
                  *selection_markdown(frame), ""]
    return "\n".join(lines)


def table(inputs: list[str], *, csv_out: str, md_out: str) -> None:
    """results/tables/subspace_selection.{csv,md} over the data sets."""
    from hlm.datasets._artifacts import read_metadata, write_text

    frames = {Path(p).stem: (pd.read_parquet(p), read_metadata(p)) for p in inputs}
    rows = pd.concat([f.assign(dataset=d) for d, (f, _) in frames.items()], ignore_index=True) if frames else \
        pd.DataFrame()
    write_text(rows.to_csv(index=False), csv_out)
    write_text(selection_table_markdown(frames), md_out)
    log.info("%s written", md_out)
