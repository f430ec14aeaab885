"""Error-rate tables in the layout of the paper's Table 2: "mean (sd)" in percent.

The sd is the sample standard deviation (ddof=1) of the per-split test error
rates; a (method, data set) pair without results is shown as "NA".

Bold (paper section 5.3): per data set, the method with the lowest mean, and
every method that the one-sided Wilcoxon signed-rank test (alpha = 0.05, on
the paired per-split errors) does not find significantly worse than it.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from hlm.datasets._artifacts import read_metadata, write_text

NA = "NA"
SUMMARY_COLUMNS = ["method", "dataset", "to_distance", "n_splits", "mean", "sd", "cell", "p_worse", "bold"]
#: significance level of the one-sided Wilcoxon test that decides the bold cells
ALPHA = 0.05


def load_evaluations(paths: list[str | os.PathLike]) -> pd.DataFrame:
    """Concatenate ``results/evaluation/{dataset}/{method}.parquet`` files into one long frame.

    Adds ``dataset``, ``method`` and ``to_distance`` from each file's ``hlm``
    metadata (dataset/method fall back to the path's folder and file stem).
    """
    frames = []
    for path in map(Path, paths):
        meta = read_metadata(path)
        df = pd.read_parquet(path)
        df.insert(0, "dataset", str(meta.get("dataset", path.parent.name)))
        df.insert(1, "method", str(meta.get("method", path.stem)))
        df.insert(2, "to_distance", str(meta.get("to_distance", NA)))
        frames.append(df)
    if not frames:
        return pd.DataFrame(columns=["dataset", "method", "to_distance", "split", "error_rate"])
    return pd.concat(frames, ignore_index=True)


def _fmt(value: float, decimals: int = 2) -> str:
    return NA if pd.isna(value) else f"{value:.{decimals}f}"


def summarize(long_df: pd.DataFrame, datasets: list, methods: list, value: str = "error_rate",
              decimals: int = 2, given=()) -> pd.DataFrame:
    """One row per (method, dataset) in the given orders (methods outer), of the per-split ``value``
    (lower is better; NaN: no result).

    Columns: method, dataset, to_distance, n_splits, mean, sd (ddof=1, NaN for
    fewer than 2 splits), cell ("mean (sd)" with ``decimals``, or "NA" without results), p_worse and bold
    (the Wilcoxon test). The data sets in ``given`` are under their archive's own train/test split (registry
    ``split: given``), one split: their cells hold the mean alone, with no test and no bold.
    """
    stats = (
        long_df.groupby(["method", "dataset"])[value]
        .agg(n_splits="count", mean="mean", sd=lambda s: s.std(ddof=1))
    )
    conv = (
        long_df.groupby("dataset")["to_distance"].agg(lambda s: "/".join(sorted(set(map(str, s)))))
        if "to_distance" in long_df
        else {}
    )
    p_worse = {d: not_worse_than_best(long_df[long_df["dataset"] == d], methods, value) if d not in given else {}
               for d in datasets}
    rows = []
    for method in methods:
        for dataset in datasets:
            n, mean, sd = stats.loc[(method, dataset)] if (method, dataset) in stats.index else (0, None, None)
            one = dataset in given  # an archive's own split: no sd, no test
            cell = (_fmt(mean, decimals) if one else f"{_fmt(mean, decimals)} ({_fmt(sd, decimals)})") if n else NA
            p = float("nan") if one else p_worse[dataset].get(method, float("nan"))
            rows.append((method, dataset, conv.get(dataset, NA), int(n), mean, sd, cell, p,
                         bool(n) and not one and p >= ALPHA))
    out = pd.DataFrame(rows, columns=SUMMARY_COLUMNS)
    return out.astype({"mean": float, "sd": float, "p_worse": float, "bold": bool})


def not_worse_than_best(one_dataset: pd.DataFrame, methods: list, value: str = "error_rate") -> dict:
    """{method: p-value of "worse than the best"} on one data set (the best gets 1.0).

    One-sided Wilcoxon signed-rank test, ``wilcoxon(err_m, err_best,
    alternative="greater")``, on the errors (``value``, lower is better) of the
    splits both methods ran (paired by split). All-zero differences count as not
    worse (p = 1).
    """
    from scipy.stats import wilcoxon

    errors = one_dataset.pivot_table(index="split", columns="method", values=value)
    errors = errors[[m for m in methods if m in errors.columns]]
    if errors.empty:
        return {}
    means = errors.mean()
    best = means.idxmin()  # ties: the first in the given method order
    out = {}
    for m in errors.columns:
        pair = errors[[m, best]].dropna()
        diff = pair[m] - pair[best]
        if m == best or not (diff != 0).any():
            out[m] = 1.0
        else:
            out[m] = float(wilcoxon(pair[m], pair[best], alternative="greater").pvalue)
    return out


def _cell(row) -> str:
    return f"**{row.cell}**" if row.bold else row.cell


def error_rate_table(long_df: pd.DataFrame, datasets: list, methods: list, given=()) -> pd.DataFrame:
    """Methods as rows, data sets as columns (given orders), cells "mean (sd)" or "NA" (``given``: the data
    sets under their archive's own split, :func:`summarize`)."""
    summary = summarize(long_df, datasets, methods, given=given)
    summary["cell"] = [_cell(r) for r in summary.itertuples()]
    table = summary.pivot(index="method", columns="dataset", values="cell")
    table = table.loc[list(methods), list(datasets)]
    table.index.name, table.columns.name = "method", None
    return table


def given_note(given, datasets) -> str:
    """The caption's words for the data sets under their archive's own split ("" for none)."""
    names = [d for d in datasets if d in given]
    return (f"{', '.join(names)}: the archive's own train/test split, one split, so the value alone (no sd, "
            "no bold)." if names else "")


def split_counts(summary: pd.DataFrame, given=()) -> str:
    """The caption's number of splits: the data sets' common one, and each other data set's in parentheses
    ("20 (iris: 5)"); a data set's count is its methods' largest; "0" for none."""
    runs = summary.loc[(summary["n_splits"] > 0) & ~summary["dataset"].isin(given)]
    per_dataset = runs.groupby("dataset", sort=False)["n_splits"].max()
    if per_dataset.empty:
        return "0"
    common = int(per_dataset.value_counts().sort_index(ascending=False).idxmax())
    others = [f"{d}: {int(n)}" for d, n in per_dataset.items() if n != common]
    return f"{common} ({', '.join(others)})" if others else str(common)


def _markdown(summary: pd.DataFrame, datasets: list, methods: list, test_pct: int | None,
              labels: dict | None = None, given=()) -> str:
    cells = pd.Series([_cell(r) for r in summary.itertuples()],
                      index=pd.MultiIndex.from_frame(summary[["method", "dataset"]]))
    n = split_counts(summary, given)
    split = f"random {100 - test_pct}/{test_pct} train/test splits" if test_pct else "random splits"
    caption = (f"Test error rate in %: mean (sd) over {n} {split}; sd is the sample sd (ddof=1). "
               f"Bold: the lowest mean per data set and every method not significantly worse "
               f"(one-sided Wilcoxon signed-rank test on the paired split errors, alpha = {ALPHA}).")
    note = given_note(given, datasets)
    if note:
        caption = f"{caption} {note}" if n != "0" else f"Test error rate in %: {note}"
    conv = summary.drop_duplicates("dataset").set_index("dataset")["to_distance"]
    table = _pipe_table(caption, datasets, methods, lambda m, d: cells[(m, d)], labels)
    return table + "\nDistances: " + "; ".join(f"{d}: {conv[d]}" for d in datasets) + "\n"


def write_error_rate_tables(
    long_df: pd.DataFrame,
    datasets: list,
    methods: list,
    csv_path: str | os.PathLike,
    md_path: str | os.PathLike,
    labels: dict | None = None,
    summary_path: str | os.PathLike | None = None,
    test_fraction: float | None = None,
    given=(),
) -> pd.DataFrame:
    """Write the error-rate table (paper Table 2 layout) as CSV and Markdown, atomically.

    CSV: methods as rows (column ``method``, the method id), data sets as
    columns, cells "mean (sd)" in percent (sd with ddof=1) or "NA".
    ``summary_path`` (optional): the tidy numbers, one row per (method, dataset):
    ``method, dataset, to_distance, n_splits, mean, sd, cell``.

    Markdown: a one-line caption (number of splits; the train/test proportion
    from ``test_fraction``, else from the median ``n_test``/(``n_train``+``n_test``)),
    the pipe table (methods shown by ``labels[method]`` when given), and a footer
    line ``Distances: dataset: conversion; ...``. Returns the tidy summary.
    """
    summary = summarize(long_df, datasets, methods, given=given)
    if test_fraction is not None:
        test_pct = int(round(100 * test_fraction))
    elif {"n_train", "n_test"} <= set(long_df.columns) and len(long_df):
        frac = (long_df["n_test"] / (long_df["n_train"] + long_df["n_test"])).median()
        test_pct = int(round(100 * frac))
    else:
        test_pct = None
    write_text(error_rate_table(long_df, datasets, methods, given).reset_index().to_csv(index=False), csv_path)
    if summary_path is not None:
        write_text(summary.to_csv(index=False), summary_path)
    write_text(_markdown(summary, datasets, methods, test_pct, labels, given), md_path)
    return summary


def _esc(text) -> str:
    return str(text).replace("|", r"\|")


def _pipe_table(caption: str, datasets: list, methods: list, cell, labels: dict | None = None) -> str:
    """A caption line and a Markdown pipe table: one row per method, ``cell(method, dataset)`` per column."""
    lines = [caption, "", "| Classifier | " + " | ".join(map(_esc, datasets)) + " |", "|---|" + "---:|" * len(datasets)]
    for m in methods:
        lines.append(f"| {_esc((labels or {}).get(m, m))} | " + " | ".join(cell(m, d) for d in datasets) + " |")
    return "\n".join(lines) + "\n"


# -- our numbers next to the paper's (Tables 2-3) -----------------------------------------
PAPER_COLUMNS = ["method", "dataset", "mean", "sd", "n_splits", "paper_mean", "paper_sd", "diff", "z"]


def paper_comparison(summary: pd.DataFrame, paper: dict, paper_splits: int = 20) -> pd.DataFrame:
    """Our mean next to the paper's, with the difference in standard errors.

    ``z = (mean - paper_mean) / sqrt(sd^2 / n + paper_sd^2 / paper_splits)``;
    NaN where either side has no number. ``paper``: {(method, dataset): (mean, sd)}.
    """
    rows = []
    for r in summary.itertuples():
        pm, ps = paper.get((r.method, r.dataset), (float("nan"), float("nan")))
        diff = r.mean - pm
        se = (r.sd**2 / r.n_splits + ps**2 / paper_splits) ** 0.5 if r.n_splits > 1 else float("nan")
        z = diff / se if se and se > 0 else float("nan")
        rows.append((r.method, r.dataset, r.mean, r.sd, r.n_splits, pm, ps, diff, z))
    return pd.DataFrame(rows, columns=PAPER_COLUMNS).astype({c: float for c in PAPER_COLUMNS[2:] if c != "n_splits"})


def paper_markdown(comparison: pd.DataFrame, datasets: list, methods: list, labels: dict | None = None,
                   source: str = "") -> str:
    """Cells "ours vs paper (z)"; z in standard errors of the difference, |z| > 2 in bold."""
    by = comparison.set_index(["method", "dataset"])

    def cell(m, d) -> str:
        r = by.loc[(m, d)] if (m, d) in by.index else None
        if r is None or pd.isna(r["mean"]):
            return NA if r is None or pd.isna(r["paper_mean"]) else f"NA vs {r['paper_mean']:.2f}"
        if pd.isna(r["paper_mean"]):
            return f"{r['mean']:.2f} vs NA"
        z = f"{r['z']:+.1f}" if pd.notna(r["z"]) else NA
        z = f"**{z}**" if pd.notna(r["z"]) and abs(r["z"]) > 2 else z
        return f"{r['mean']:.2f} vs {r['paper_mean']:.2f} ({z})"

    caption = ("Our test error (%, mean over the splits) vs the paper's; in parentheses the difference in "
               "standard errors, z = (ours - paper) / sqrt(sd^2/n + sd_paper^2/20); |z| > 2 in bold. "
               f"Paper: {source or 'Qiao & Li'}; NA: not reported or not run.")
    return _pipe_table(caption, datasets, methods, cell, labels)


# -- run time (paper Table 4) ----------------------------------------------------------------
RUN_TIME_COLUMNS = ["method", "dataset", "n_splits", "fit_seconds", "cv_seconds", "predict_seconds"]


def run_time_table(long_df: pd.DataFrame, datasets: list, methods: list) -> pd.DataFrame:
    """Mean wall seconds per split: fit (CV included, the paper's training), of which CV, and predict."""
    cols = [c for c in ("fit_seconds", "cv_seconds", "predict_seconds") if c in long_df.columns]
    stats = long_df.groupby(["method", "dataset"])[cols].mean()
    counts = long_df.groupby(["method", "dataset"])["split"].count()
    rows = []
    for m in methods:
        for d in datasets:
            have = (m, d) in stats.index
            values = [stats.loc[(m, d)].get(c, float("nan")) if have else float("nan")
                      for c in ("fit_seconds", "cv_seconds", "predict_seconds")]
            rows.append((m, d, int(counts.get((m, d), 0)), *values))
    return pd.DataFrame(rows, columns=RUN_TIME_COLUMNS)


def format_seconds(seconds: float) -> str:
    """Human-readable duration as in the paper's Table 4: 50 ms, 4.7 s, 2 min 2.9 s."""
    if pd.isna(seconds):
        return NA
    if seconds < 1:
        return f"{seconds * 1000:.3g} ms"
    if seconds < 60:
        return f"{seconds:.3g} s"
    minutes, rest = divmod(seconds, 60)
    return f"{int(minutes)} min {rest:.1f} s"


def run_time_markdown(times: pd.DataFrame, datasets: list, methods: list, labels: dict | None = None) -> str:
    by = times.set_index(["method", "dataset"])

    def cell(m, d) -> str:
        r = by.loc[(m, d)]
        if r["n_splits"] == 0:
            return NA
        return f"{format_seconds(r['fit_seconds'])} / {format_seconds(r['predict_seconds'])}"

    caption = ("Mean wall time per split: training (10-fold CV over the grid + final fit) / testing "
               "(classifying the test part), as in the paper's Table 4. Jobs of the costly methods run "
               "their CV folds in parallel worker processes when config threads_per_job > 1.")
    return _pipe_table(caption, datasets, methods, cell, labels)


# -- our numbers next to the local SDA paper's (Sadowski et al., Tables I-II) --------------
SDA_COLUMNS = ["table", "row", "method", "dataset", "mean", "sd", "n_splits", "paper_mean", "paper_sd", "diff", "z"]


def sda_comparison(summary: pd.DataFrame, rows, datasets: dict, paper_splits: int = 20) -> pd.DataFrame:
    """One line per (paper row, paper data set): our mean for the row's method next to the paper's.

    ``rows``: (table, label, method, (mean, sd) per data set); ``datasets``: paper name -> our data set
    (None: not available here). Our numbers are NaN where the method or data set did not run.
    """
    ours = summary.set_index(["method", "dataset"])
    lines = []
    for table, label, method, values in rows:
        for (paper_name, dataset), (pm, ps) in zip(datasets.items(), values):
            key = (method, dataset)
            r = ours.loc[key] if dataset is not None and key in ours.index else None
            mean, sd, n = (r["mean"], r["sd"], r["n_splits"]) if r is not None else (np.nan, np.nan, 0)
            se = (sd**2 / n + ps**2 / paper_splits) ** 0.5 if n > 1 else np.nan
            z = (mean - pm) / se if se and se > 0 else np.nan
            lines.append((table, label, method, paper_name, mean, sd, n, pm, ps, mean - pm, z))
    return pd.DataFrame(lines, columns=SDA_COLUMNS)


def sda_markdown(comparison: pd.DataFrame, datasets: dict, source: str) -> str:
    """The paper's Tables I and II with our value beside each cell: "ours vs paper (z)"."""
    lines = []
    for table, part in comparison.groupby("table", sort=True):
        lines += [f"**Table {table}**", "", "| row (our method) | " + " | ".join(datasets) + " |",
                  "|---|" + "---:|" * len(datasets)]
        for (label, method), cells in part.groupby(["row", "method"], sort=False):
            by = cells.set_index("dataset")
            out = []
            for name, dataset in datasets.items():
                r = by.loc[name]
                if dataset is None:
                    out.append(f"not available here ({r['paper_mean']:.2f})")
                elif pd.isna(r["mean"]):
                    out.append(f"not run ({r['paper_mean']:.2f})")
                else:
                    z = f"{r['z']:+.1f}" if pd.notna(r["z"]) else NA
                    z = f"**{z}**" if pd.notna(r["z"]) and abs(r["z"]) > 2 else z
                    out.append(f"{r['mean']:.2f} vs {r['paper_mean']:.2f} ({z})")
            lines.append(f"| {_esc(label)} (`{method}`) | " + " | ".join(out) + " |")
        lines.append("")
    caption = ("Our test error (%, mean over the splits) beside each cell of the paper's tables, "
               "in parentheses z = (ours - paper) / sqrt(sd^2/n + sd_paper^2/20); |z| > 2 in bold. "
               f"Paper: {source}. Table I's row labels are matched from the paper's text "
               "(docs/local-sda-family-spec.md section 8); its last two rows are regularized local SDA in "
               "two forms the paper does not tell apart, both compared with ours. The rows of our `local_sda`, "
               "`svm_knn` and `knn` use the HLM comparison's grid, which includes k = 1 (the paper's starts at "
               "k = 2), and our k-NN runs on the distances 1 - S, not on the similarities. Amazon and Patrol are "
               "not available here; the paper's value is in parentheses.")
    return caption + "\n\n" + "\n".join(lines)
