"""results/tables/twoway_gmm.{csv,md}: test error over (M, L) beside MDA, in the layout of the
dissertation's Tables 2.1-2.3 (chapter 2; docs/twoway-gmm-spec.md section 8)."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import wilcoxon

from hlm.pipeline.protocols.twoway_gmm import METHODS_BY_COVARIANCE

log = logging.getLogger("hlm")

GRID_COLUMNS = ["dataset", "n_components", "n_clusters", "method", "n_runs", "error", "error_sd", "clusters_used"]


def grid_table(frames: dict) -> pd.DataFrame:
    """Mean (sd over the splits) test error per (data set, components per class, L, method) of the grid rows;
    MDA's L is -1."""
    rows = []
    for dataset, frame in frames.items():
        grid = frame[frame.selection == "grid"]
        for (m, L, method), g in grid.groupby(["n_components", "n_clusters", "method"], sort=True):
            err = g["error"].dropna()
            rows.append((dataset, int(m), int(L), method, len(err), float(err.mean()) if len(err) else np.nan,
                         float(err.std(ddof=1)) if len(err) > 1 else np.nan,
                         float(g.loc[err.index, "n_clusters_effective"].mean()) if len(err) else np.nan))
    return pd.DataFrame(rows, columns=GRID_COLUMNS)


def _cell(mean: float, sd: float, bold: bool) -> str:
    if not np.isfinite(mean):
        return "n/a"
    text = f"{mean:.2f} ({sd:.2f})" if np.isfinite(sd) else f"{mean:.2f}"
    return f"**{text}**" if bold else text


#: the heading's suffix of each covariance's block: diagonal (Tables 2.1-2.3) and full (Table 2.4)
SUFFIX = {"diag": "", "full": ", full covariance (Table 2.4)"}


def dataset_blocks(dataset: str, frame: pd.DataFrame, table: pd.DataFrame) -> str:
    """The data set's blocks, one per covariance in its rows."""
    methods = set(frame.method)
    return "\n".join(dataset_block(dataset, frame, table, two, mda, SUFFIX[c])
                     for c, (two, mda) in METHODS_BY_COVARIANCE.items() if two in methods)


def dataset_block(dataset: str, frame: pd.DataFrame, table: pd.DataFrame, two_method: str = "twoway_gmm",
                  mda_method: str = "mda", suffix: str = "") -> str:
    """One data set: rows M per class, columns the L values, best L, MDA and diff (best - MDA, Table 2.2)."""
    t = table[table.dataset == dataset]
    two = t[t.method == two_method].pivot(index="n_components", columns="n_clusters", values="error")
    two_sd = t[t.method == two_method].pivot(index="n_components", columns="n_clusters", values="error_sd")
    mda = t[t.method == mda_method].set_index("n_components")
    n_classes = int(frame["n_classes"].iloc[0])
    Ls = [int(L) for L in two.columns]
    head = ["M per class (total)", *(f"L={L}" for L in Ls), "best L", "MDA (n.v.c.)", "diff"]
    lines = [f"### {dataset}{suffix}", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    wins = n_rows = 0
    for m in sorted(set(two.index) | set(mda.index)):
        row = two.loc[m] if m in two.index else pd.Series(dtype=float)
        mda_err = float(mda.loc[m, "error"]) if m in mda.index else np.nan
        mda_sd = float(mda.loc[m, "error_sd"]) if m in mda.index else np.nan
        values = [float(row.get(L, np.nan)) for L in Ls]
        finite = [v for v in values if np.isfinite(v)]
        best = min(finite) if finite else np.nan
        row_min = np.nanmin([best, mda_err]) if np.isfinite(best) or np.isfinite(mda_err) else np.nan
        cells = [_cell(v, float(two_sd.loc[m].get(L, np.nan)) if m in two_sd.index else np.nan, v == row_min)
                 for v, L in zip(values, Ls)]
        best_L = ", ".join(str(L) for L, v in zip(Ls, values) if v == best) if finite else "n/a"
        diff = best - mda_err
        wins += bool(np.isfinite(diff) and diff <= 0)
        n_rows += 1
        lines.append(f"| {m} ({m * n_classes}) | " + " | ".join(cells)
                     + f" | {best_L} | {_cell(mda_err, mda_sd, mda_err == row_min)} | "
                     + (f"{diff:+.2f}" if np.isfinite(diff) else "n/a") + " |")
    used = t[t.method == two_method].groupby("n_clusters")["clusters_used"].mean()
    lines += ["", f"Two-way GMM at its best L at most MDA's error in {wins} of {n_rows} rows. Variable clusters "
              "holding a variable, per class (mean over the rows and splits; the random start can leave some "
              "empty): " + ", ".join(f"L = {L}: {used[L]:.1f}" for L in Ls if L in used.index) + ".", ""]
    lines.append(_cv_line(frame, n_classes, two_method, mda_method))
    return "\n".join(lines) + "\n"


def _cv_line(frame: pd.DataFrame, n_classes: int, two_method: str = "twoway_gmm", mda_method: str = "mda") -> str:
    """The CV-chosen two-way GMM and MDA: mean error (sd), the modal choice, and the one-sided Wilcoxon
    signed-rank p-value of 'two-way < MDA' over the splits."""
    cv = frame[frame.selection == "cv"]
    parts = []
    paired = {}
    for method, label in ((two_method, "two-way GMM"), (mda_method, "MDA")):
        g = cv[cv.method == method].sort_values("split")
        if g.empty:
            continue
        paired[method] = g.set_index("split")["error"]
        modal = g.groupby(["n_components", "n_clusters"]).size().idxmax()
        choice = f"M = {modal[0]}" + (f", L = {modal[1]}, 2KL = {2 * n_classes * modal[1]}" if modal[1] >= 0 else "")
        parts.append(f"{label} {g.error.mean():.2f} ({g.error.std(ddof=1):.2f}) [modal {choice}]")
    text = "Chosen by 10-fold CV on each training part: " + "; ".join(parts)
    if len(paired) == 2:
        a, b = paired[two_method].align(paired[mda_method], join="inner")
        diff = (a - b).to_numpy()
        if np.any(diff != 0):
            p = wilcoxon(a, b, alternative="less", zero_method="wilcox").pvalue
            text += f"; Wilcoxon signed-rank, two-way < MDA: p = {p:.3g} ({len(diff)} splits)"
        else:
            text += "; equal on every split"
    return text + "."


def twoway_gmm_markdown(frames: dict, table: pd.DataFrame) -> str:
    caption = ("Test error [%], mean (sd) over the random 80/20 splits, of the two-way GMM (diagonal, variable "
               "clusters per class) at every (components per class M, variable clusters L), and of MDA without "
               "variable clustering (MDA-n.v.c.) at the same M; bold: the row's minimum; diff = best two-way - MDA "
               "(Qiao, *Mixture Modeling for Complex and Large-Scale Data with Applications*, chapter 2, Tables "
               "2.1-2.3; with full covariance, after the per-class whitening of section 2.2.2, Table 2.4). Every "
               "grid point is tested, as the chapter's tables are, so 'best L' picks on the test errors; the "
               "CV-chosen line under each block does not.")
    return "\n".join([caption, "", *(dataset_blocks(d, f, table) for d, f in frames.items())])


def table(inputs: list[str], *, csv_out: str, md_out: str) -> None:
    """results/tables/twoway_gmm.{csv,md}: error over (M, L) beside MDA (the chapter's Tables 2.1-2.3)."""
    from hlm.datasets._artifacts import write_text

    frames = {Path(p).stem: pd.read_parquet(p) for p in inputs}
    result = grid_table(frames)
    write_text(result.to_csv(index=False), csv_out)
    write_text(twoway_gmm_markdown(frames, result), md_out)
    log.info("%s written", md_out)
