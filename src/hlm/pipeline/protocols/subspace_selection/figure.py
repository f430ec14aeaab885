"""The subspace selection figure (dissertation Figures 4.1-4.2): results/figures/subspace_selection_{dataset}.png."""

from __future__ import annotations

import os

import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from hlm.datasets._artifacts import atomic_path
from hlm.pipeline.protocols.chapter4_parts import NAMES


def plot_selection(frame: pd.DataFrame, path: str | os.PathLike, *, dataset: str, n_components: int) -> None:
    """Per d (columns): the test error (top) and the training log-likelihood (bottom) of every candidate subspace
    against its bandwidth level, one line per method, the maximum-likelihood candidate ringed."""
    sel = frame[frame.kind == "selection"]
    dims = sorted(sel.n_dims.unique())
    fig = Figure(figsize=(3.2 * max(len(dims), 1), 5.6), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(2, max(len(dims), 1), squeeze=False)
    for j, d in enumerate(dims):
        top, bottom = axes[0, j], axes[1, j]
        for method, g in sel[sel.n_dims == d].groupby("method", sort=False):
            g = g.sort_values("level")
            line, = top.plot(g.level, g.test_error, marker="o", ms=3, lw=1, label=NAMES.get(method, method))
            bottom.plot(g.level, g.log_likelihood, marker="o", ms=3, lw=1, color=line.get_color())
            best = g[g.chosen]
            for ax, col in ((top, "test_error"), (bottom, "log_likelihood")):
                ax.scatter(best.level, best[col], s=90, facecolors="none", edgecolors=line.get_color(), lw=1.5)
        top.set_title(f"{dataset}: R = {n_components}, d = {d}", fontsize=9)
        top.set_ylabel("test error (%)")
        bottom.set_ylabel("training log-likelihood")
        bottom.set_xlabel("bandwidth level")
        top.legend(fontsize=7, frameon=False)
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=120)
