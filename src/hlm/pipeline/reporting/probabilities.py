"""Log-loss and Brier tables and the reliability diagram (docs/beyond-the-paper-spec.md section 3).

Tables as the error table (``hlm.pipeline.reporting.tables``): mean (sd) over the splits
of the per-split score, bold by the same one-sided Wilcoxon rule (lower is
better), "NA" where a method gives no probabilities (its scores are NaN) or did
not run. The log-loss caption states the clip (``EPS``) and the footer counts
the test objects it hit.
"""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from hlm.datasets._artifacts import atomic_path, write_text
from hlm.pipeline.evaluation.probabilities import EPS, N_BINS
from hlm.pipeline.reporting.figures import method_colours
from hlm.pipeline.reporting.tables import ALPHA, NA, _cell, _pipe_table, given_note, split_counts, summarize

#: the scores of the evaluation Parquet tabulated here, with their decimals
METRICS = {"log_loss": 3, "brier": 3}
SUMMARY_COLUMNS = ["method", "dataset", "n_splits", "n_test", "n_clipped",
                   "log_loss_mean", "log_loss_sd", "log_loss_bold", "brier_mean", "brier_sd", "brier_bold"]

_BOLD = (f"Lower is better. Bold: the lowest mean per data set and every method not significantly worse "
         f"(one-sided Wilcoxon signed-rank test on the paired split scores, alpha = {ALPHA}). "
         f"NA: the method gives no class probabilities, or did not run.")
CAPTIONS = {
    "log_loss": ("Log-loss of the test objects' class probabilities, -mean log p(true class): mean (sd) over "
                 f"{{n}} splits. p(true class) is clipped below at {EPS:g} (a probability 0 would give an "
                 f"infinite loss), so each clipped object adds {-np.log(EPS):.1f} / n_test; the clipped "
                 f"objects are counted below. {_BOLD}"),
    "brier": ("Brier score of the test objects' class probabilities, mean over objects of "
              "sum_g (p_g - 1[true class = g])^2, in [0, 2] (0: sure and right; 2: sure and wrong; "
              f"(G-1)/G: uniform over G classes): mean (sd) over {{n}} splits. {_BOLD}"),
}


def _scores(long_df: pd.DataFrame) -> pd.DataFrame:
    """The long frame with the score columns (NaN where an older evaluation lacks them)."""
    missing = [c for c in (*METRICS, "n_clipped") if c not in long_df.columns]
    return long_df.assign(**dict.fromkeys(missing, np.nan)) if missing else long_df


def probability_summary(long_df: pd.DataFrame, datasets: list, methods: list, given=()) -> pd.DataFrame:
    """One row per (method, dataset): splits scored, test objects, clipped objects (all splits), and per
    score its mean, sd and bold flag (``summarize``; ``given``: the data sets under their archive's own split)."""
    long_df = _scores(long_df)
    parts = {m: summarize(long_df, datasets, methods, value=m, decimals=d, given=given).set_index(["method", "dataset"])
             for m, d in METRICS.items()}
    scored = long_df[long_df["log_loss"].notna()]
    n_test = scored.groupby(["method", "dataset"])["n_test"].sum() if "n_test" in scored else pd.Series(dtype=float)
    clipped = scored.groupby(["method", "dataset"])["n_clipped"].sum()
    rows = []
    for method in methods:
        for dataset in datasets:
            key = (method, dataset)
            ll, br = parts["log_loss"].loc[key], parts["brier"].loc[key]
            rows.append((method, dataset, int(ll["n_splits"]), int(n_test.get(key, 0)), int(clipped.get(key, 0)),
                         ll["mean"], ll["sd"], bool(ll["bold"]), br["mean"], br["sd"], bool(br["bold"])))
    return pd.DataFrame(rows, columns=SUMMARY_COLUMNS)


def probability_table(long_df: pd.DataFrame, datasets: list, methods: list, metric: str, given=()) -> pd.DataFrame:
    """Methods as rows, data sets as columns, cells "mean (sd)" (bold as "**...**") or "NA"."""
    summary = summarize(_scores(long_df), datasets, methods, value=metric, decimals=METRICS[metric], given=given)
    summary["cell"] = [_cell(r) for r in summary.itertuples()]
    table = summary.pivot(index="method", columns="dataset", values="cell").loc[list(methods), list(datasets)]
    table.index.name, table.columns.name = "method", None
    return table


def _clip_footer(summary: pd.DataFrame, labels: dict | None) -> str:
    hit = summary[summary["n_clipped"] > 0]
    if hit.empty:
        return f"Clipped (p(true class) < {EPS:g}): no test object.\n"
    parts = [f"{r.dataset} / {(labels or {}).get(r.method, r.method)}: {r.n_clipped} of {r.n_test}"
             for r in hit.itertuples()]
    return f"Clipped (p(true class) < {EPS:g}), test objects over all splits: " + "; ".join(parts) + ".\n"


def probability_markdown(long_df: pd.DataFrame, datasets: list, methods: list, metric: str,
                         labels: dict | None = None, given=()) -> str:
    """A caption, the pipe table (methods shown by ``labels``) and, for the log-loss, the clip count."""
    table = probability_table(long_df, datasets, methods, metric, given)
    summary = probability_summary(long_df, datasets, methods, given)
    caption = " ".join(filter(None, [CAPTIONS[metric].format(n=split_counts(summary, given)),
                                     given_note(given, datasets)]))
    out = _pipe_table(caption, datasets, methods, lambda m, d: table.loc[m, d], labels)
    return out + ("\n" + _clip_footer(summary, labels) if metric == "log_loss" else "")


def write_probability_tables(long_df: pd.DataFrame, datasets: list, methods: list, outputs: dict,
                             labels: dict | None = None, summary_path: str | os.PathLike | None = None,
                             given=()) -> pd.DataFrame:
    """Write ``outputs[f"{metric}_csv"]`` and ``outputs[f"{metric}_md"]`` for the log-loss and the Brier score
    (and the tidy summary to ``summary_path``), atomically; returns the summary."""
    for metric in METRICS:
        table = probability_table(long_df, datasets, methods, metric, given)
        write_text(table.reset_index().to_csv(index=False), outputs[f"{metric}_csv"])
        write_text(probability_markdown(long_df, datasets, methods, metric, labels, given), outputs[f"{metric}_md"])
    summary = probability_summary(long_df, datasets, methods, given)
    if summary_path is not None:
        write_text(summary.to_csv(index=False), summary_path)
    return summary


# ----------------------------------------------------------------- reliability diagram
def reliability_figure(bins: dict, dataset: str, labels: dict | None = None) -> Figure:
    """Accuracy against mean confidence per bin (one line per method; ``bins``: method -> the frame of
    ``hlm.pipeline.evaluation.probabilities.reliability_bins``), and below, the objects per bin."""
    fig = Figure(figsize=(9.0, 7.0), layout="constrained")
    FigureCanvasAgg(fig)
    top, bottom = fig.subplots(2, 1, height_ratios=[3, 1], sharex=True)
    top.plot([0, 1], [0, 1], color="0.6", lw=0.8, ls="--", label="calibrated")
    colours = method_colours(len(bins))
    centres = (np.arange(N_BINS) + 0.5) / N_BINS
    for colour, (method, frame) in zip(colours, bins.items()):
        name = (labels or {}).get(method, method)
        seen = frame["count"].to_numpy() > 0
        top.plot(frame["confidence"][seen], frame["accuracy"][seen], marker="o", ms=3, lw=1.2, color=colour,
                 label=name)
        bottom.plot(centres, frame["count"], marker=".", lw=1.0, color=colour)
    top.set_xlim(0, 1)
    top.set_ylim(0, 1.02)
    top.set_ylabel("accuracy of the top label")
    top.set_title(f"{dataset}: reliability of the class probabilities (test objects of all splits, "
                  f"{N_BINS} confidence bins)", fontsize=10)
    top.grid(alpha=0.3)
    bottom.set_xlabel("top-label confidence (bin mean above, bin centre below)")
    bottom.set_ylabel("objects per bin")
    bottom.set_yscale("symlog", linthresh=1)
    bottom.set_ylim(0, 2.0 * max([1, *(int(f["count"].max()) for f in bins.values())]))
    bottom.grid(alpha=0.3)
    n_cols = max(1, -(-(len(bins) + 1) // 16))
    fig.legend(*top.get_legend_handles_labels(), loc="outside right upper", ncols=n_cols, frameon=False,
               fontsize=8)
    return fig


def plot_reliability(bins: dict, dataset: str, path: str | os.PathLike, labels: dict | None = None) -> None:
    """``reliability_figure`` as PNG, written atomically; a figure saying so when no method has probabilities."""
    fig = reliability_figure(bins, dataset, labels)
    if not bins:
        fig.axes[0].text(0.5, 0.5, NA + ": no method of this run gives class probabilities", ha="center")
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=150)
