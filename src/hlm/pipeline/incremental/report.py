"""Incremental learning's figure and table: the paper's Figure 1 (results/figures/incremental_{dataset}.png)
and Table 5 (results/tables/incremental_time.{csv,md}), beside the paper's seconds (paper.yaml)."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib import colormaps
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from hlm.datasets._artifacts import atomic_path
from hlm.pipeline.incremental.claims import claims_markdown, claims_table
from hlm.pipeline.reporting.numbers import paper_numbers
from hlm.pipeline.reporting.tables import NA, _pipe_table

log = logging.getLogger("hlm")

#: {(scheme, paper data set): total seconds over all rounds}, the paper's Table 5; Voting is the only one of
#: these data sets we have
PAPER_INCREMENTAL_TIMES: dict[tuple[str, str], float] = {
    (scheme, dataset): seconds for scheme, times in paper_numbers(__package__)["times"].items()
    for dataset, seconds in times.items()}

SCHEME_LABELS = {"scheme_i": "HLM-Incremental (I)", "scheme_ii": "HLM-Incremental (II)", "retrain": "HLM-Retrain",
                 "okde": "oKDE", "odkde": "odKDE"}
INCREMENTAL_TIME_COLUMNS = ["scheme", "dataset", "n_splits", "total_seconds", "total_seconds_sd",
                            "last_round_error", "paper_total_seconds"]


def incremental_time_table(runs: dict, datasets: list, schemes: list, paper: dict | None = None) -> pd.DataFrame:
    """Total update seconds over all rounds, mean (sd) over the splits, per scheme and data set (Table 5).

    ``runs`` maps (scheme, dataset) -> the incremental Parquet frame; the last
    round's mean test error is added for reading the trade-off next to the time.
    """
    rows = []
    for s in schemes:
        for d in datasets:
            frame = runs.get((s, d))
            if frame is None or frame.empty:
                nan = float("nan")
                rows.append((s, d, 0, nan, nan, nan, (paper or {}).get((s, d), nan)))
                continue
            totals = frame.groupby("split")["round_seconds"].sum()
            last = frame[frame["round"] == frame["round"].max()]["error_rate"].mean()
            rows.append((s, d, int(totals.size), float(totals.mean()),
                         float(totals.std(ddof=1)) if totals.size > 1 else float("nan"), float(last),
                         (paper or {}).get((s, d), float("nan"))))
    return pd.DataFrame(rows, columns=INCREMENTAL_TIME_COLUMNS)


def incremental_time_markdown(times: pd.DataFrame, datasets: list, schemes: list) -> str:
    by = times.set_index(["scheme", "dataset"])

    def cell(s, d) -> str:
        r = by.loc[(s, d)]
        if r["n_splits"] == 0:
            return NA
        paper = f" (paper {r['paper_total_seconds']:g} s)" if pd.notna(r["paper_total_seconds"]) else ""
        return f"{r['total_seconds']:.3f} s{paper}; last-round error {r['last_round_error']:.2f}%"

    caption = ("Total wall seconds of the model updates over all 9 incremental rounds (mean over the splits), "
               "as in the paper's Table 5, and the mean test error after the last round.")
    return _pipe_table(caption, datasets, schemes, cell, SCHEME_LABELS)


def plot_incremental(runs: dict, path: str | os.PathLike, *, dataset: str, labels: dict | None = None) -> None:
    """Mean test error per incremental round, ± sd over the splits as a band (paper Figure 1).

    ``runs`` maps scheme -> its incremental frame (split, round, n_seen, error_rate, ...).
    """
    fig = Figure(figsize=(6.5, 4.0), layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    cmap = colormaps["tab10"]
    for i, (scheme, frame) in enumerate(runs.items()):
        stats = frame.groupby("round")["error_rate"].agg(["mean", "std"]).sort_index()
        r = stats.index.to_numpy(float)
        mean, sd = stats["mean"].to_numpy(float), np.nan_to_num(stats["std"].to_numpy(float))
        ax.plot(r, mean, marker="o", ms=3, color=cmap(i), label=(labels or {}).get(scheme, scheme))
        ax.fill_between(r, mean - sd, mean + sd, color=cmap(i), alpha=0.15, lw=0)
    ax.set_xlabel("learning round (1 = initial batch, 20% of the training part; then +10% each)")
    ax.set_ylabel("test error (%)")
    n_splits = max((f["split"].nunique() for f in runs.values()), default=0)
    ax.set_title(f"{dataset}: incremental learning (mean ± sd over {n_splits} splits)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, frameon=False)
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=150)


def report(inputs: list[str], *, datasets: list[str], schemes: list[str], figure_dir: str, csv_out: str,
           md_out: str, claims_out: str) -> None:
    """Figure 1 (one PNG per data set), Table 5 (csv + md) and the paper's claims tested (md) from the
    incremental Parquet files."""
    from hlm.datasets._artifacts import write_text

    runs = {}
    for path in inputs:
        dataset, scheme = Path(path).parent.name, Path(path).stem
        runs[(scheme, dataset)] = pd.read_parquet(path)
    for d in datasets:
        plot_incremental({s: runs[(s, d)] for s in schemes if (s, d) in runs},
                         Path(figure_dir) / f"incremental_{d}.png", dataset=d, labels=SCHEME_LABELS)
    times = incremental_time_table(runs, datasets, schemes, PAPER_INCREMENTAL_TIMES)
    write_text(times.to_csv(index=False), csv_out)
    write_text(incremental_time_markdown(times, datasets, schemes), md_out)
    write_text(claims_markdown(claims_table(runs, datasets)), claims_out)
    log.info("incremental figures and %s written", md_out)
