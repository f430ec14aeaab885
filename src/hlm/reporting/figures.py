"""Figures of the evaluation results (matplotlib Agg, PNG written atomically)."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
from matplotlib import colormaps
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from hlm.data.artifacts import atomic_path
from hlm.reporting.tables import summarize


def plot_error_rates(
    long_df: pd.DataFrame, datasets: list, methods: list, path: str | os.PathLike, labels: dict | None = None
) -> None:
    """Grouped bar chart of the mean test error (%) ± sample sd per method and data set.

    Data sets on the x axis (given order), one colour per method (legend right of
    the axes; methods named by ``labels[method]`` when given); missing
    (method, dataset) pairs are marked "NA" on the axis.
    """
    summary = summarize(long_df, datasets, methods).set_index(["method", "dataset"])
    n_d, n_m = len(datasets), len(methods)
    width = 0.8 / max(n_m, 1)
    x = np.arange(n_d)
    cmap = colormaps["tab10" if n_m <= 10 else "tab20"]

    fig = Figure(figsize=(min(14.0, max(6.0, 1.5 + n_d * (0.3 + 0.2 * n_m))), 4.5), layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    top = 0.0
    for i, method in enumerate(methods):
        rows = summary.loc[method].reindex(datasets)
        mean = rows["mean"].to_numpy(float)
        sd = np.nan_to_num(rows["sd"].to_numpy(float))
        pos = x - 0.4 + width * (i + 0.5)
        ax.bar(pos, np.nan_to_num(mean), width * 0.9, yerr=sd, capsize=2, label=(labels or {}).get(method, method),
               color=cmap(i % cmap.N), error_kw={"elinewidth": 0.8, "ecolor": "0.25"})
        for p in pos[np.isnan(mean)]:
            ax.text(p, 0, "NA", ha="center", va="bottom", fontsize=7, rotation=90, color="0.3")
        if np.isfinite(mean).any():
            top = max(top, np.nanmax(mean + sd))
    ax.set_xticks(x, [str(d) for d in datasets], rotation=30 if n_d > 4 else 0,
                  ha="right" if n_d > 4 else "center")
    ax.set_xlim(-0.6, n_d - 0.4)
    ax.set_ylim(0, top * 1.08 if top > 0 else 1)
    ax.set_ylabel("test error (%)")
    ax.set_title("Test error rate by data set: mean ± sd over splits")
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)
    ax.legend(title="method", loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)

    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=150)
