"""Figures of the evaluation results (matplotlib Agg, PNG written atomically)."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
from matplotlib import colormaps
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from hlm.datasets._artifacts import atomic_path
from hlm.pipeline.reporting.tables import summarize


def method_colours(n: int) -> list:
    """n distinct colours: tab10 up to 10 methods, else tab20, tab20b and tab20c in turn (60 colours),
    then repeated."""
    if n <= 10:
        return [colormaps["tab10"](i) for i in range(n)]
    palette = [colormaps[name](i) for name in ("tab20", "tab20b", "tab20c") for i in range(20)]
    return [palette[i % len(palette)] for i in range(n)]


#: legend entries per column of the error-rate figure (a column more for every this many methods)
_LEGEND_ROWS = 14


def error_rate_figure(long_df: pd.DataFrame, datasets: list, methods: list, labels: dict | None = None) -> Figure:
    """The figure of ``plot_error_rates``: a bar per method and data set, every method in the legend
    (in columns of at most ``_LEGEND_ROWS``, right of the axes, inside the figure)."""
    summary = summarize(long_df, datasets, methods).set_index(["method", "dataset"])
    n_d, n_m = len(datasets), len(methods)
    width = 0.8 / max(n_m, 1)
    x = np.arange(n_d)
    colours = method_colours(n_m)
    n_cols = max(1, -(-n_m // _LEGEND_ROWS))

    fig = Figure(figsize=(min(14.0, max(6.0, 1.5 + n_d * (0.3 + 0.2 * n_m))) + 2.0 * (n_cols - 1), 4.5),
                 layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    top = 0.0
    for i, method in enumerate(methods):
        rows = summary.loc[method].reindex(datasets)
        mean = rows["mean"].to_numpy(float)
        sd = np.nan_to_num(rows["sd"].to_numpy(float))
        pos = x - 0.4 + width * (i + 0.5)
        ax.bar(pos, np.nan_to_num(mean), width * 0.9, yerr=sd, capsize=2, label=(labels or {}).get(method, method),
               color=colours[i], error_kw={"elinewidth": 0.8, "ecolor": "0.25"})
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
    fig.legend(*ax.get_legend_handles_labels(), title="method", loc="outside right upper", ncols=n_cols,
               frameon=False, fontsize=8 if n_m > _LEGEND_ROWS else None)
    return fig


def plot_error_rates(
    long_df: pd.DataFrame, datasets: list, methods: list, path: str | os.PathLike, labels: dict | None = None
) -> None:
    """Grouped bar chart of the mean test error (%) ± sample sd per method and data set (PNG).

    Data sets on the x axis (given order), one colour per method (legend right of
    the axes; methods named by ``labels[method]`` when given); missing
    (method, dataset) pairs are marked "NA" on the axis.
    """
    fig = error_rate_figure(long_df, datasets, methods, labels)
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=150)


def cv_error_by_components(evaluation: pd.DataFrame, split: int = 0) -> pd.Series:
    """Mean CV error (%) against the number of components M for one split.

    Reads the evaluation's ``cv_error`` column (JSON: grid point -> mean CV
    error); the "kernel" candidate of HLM(kernel-vsh) is returned under "kernel".
    """
    import json

    row = evaluation.loc[evaluation["split"] == split].iloc[0]
    points = {json.loads(k)["n_components"]: 100.0 * v for k, v in json.loads(row["cv_error"]).items()}
    return pd.Series(points, dtype=float)


def plot_cv_components(evaluations: dict, path: str | os.PathLike, *, dataset: str, split: int = 0,
                       labels: dict | None = None) -> None:
    """CV error against M (components per class) for one split, one line per Mixture HLM method.

    ``evaluations`` maps method id -> evaluation DataFrame. The chosen M is
    marked; a Kernel HLM candidate (HLM(kernel-vsh)) is drawn as a horizontal line.
    """
    import json

    fig = Figure(figsize=(6.5, 4.0), layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    cmap = colormaps["tab10"]
    for i, (method, ev) in enumerate(evaluations.items()):
        curve = cv_error_by_components(ev, split)
        name = (labels or {}).get(method, method)
        kernel = curve.pop("kernel") if "kernel" in curve.index else None
        m = np.array(curve.index, dtype=float)
        # line styles differ so that identical curves (vsh vs kernel-vsh) stay visible
        ax.plot(m, curve.to_numpy(), marker="o", ms=3, color=cmap(i), label=name,
                ls=("-", "--", "-.", ":")[i % 4], lw=2.2 - 0.4 * (i % 4))
        chosen = json.loads(ev.loc[ev["split"] == split, "params"].iloc[0]).get("n_components")
        if chosen == "kernel" and kernel is not None:
            ax.axhline(kernel, color=cmap(i), ls="--", lw=1, label=f"{name}: Kernel HLM (chosen)")
        elif kernel is not None:
            ax.axhline(kernel, color=cmap(i), ls=":", lw=1, label=f"{name}: Kernel HLM")
        if chosen != "kernel" and chosen in curve.index:
            ax.plot([chosen], [curve[chosen]], marker="*", ms=12, color=cmap(i), mec="k", mew=0.5, ls="none")
    ax.set_xlabel("components per class M")
    ax.set_ylabel("10-fold CV error (%)")
    ax.set_title(f"{dataset}: CV error against M (split {split}; star = chosen)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, frameon=False)
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=150)
