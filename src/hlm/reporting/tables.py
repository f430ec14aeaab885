"""Error-rate tables in the layout of the paper's Table 2: "mean (sd)" in percent.

The sd is the sample standard deviation (ddof=1) of the per-split test error
rates; a (method, data set) pair without results is shown as "NA".
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from hlm.data.artifacts import read_metadata, write_text

NA = "NA"
SUMMARY_COLUMNS = ["method", "dataset", "to_distance", "n_splits", "mean", "sd", "cell"]


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


def _fmt(value: float) -> str:
    return NA if pd.isna(value) else f"{value:.2f}"


def summarize(long_df: pd.DataFrame, datasets: list, methods: list) -> pd.DataFrame:
    """One row per (method, dataset) in the given orders (methods outer).

    Columns: method, dataset, to_distance, n_splits, mean, sd (ddof=1, NaN for
    fewer than 2 splits), cell ("mean (sd)" with 2 decimals, or "NA" without results).
    """
    stats = (
        long_df.groupby(["method", "dataset"])["error_rate"]
        .agg(n_splits="count", mean="mean", sd=lambda s: s.std(ddof=1))
    )
    conv = (
        long_df.groupby("dataset")["to_distance"].agg(lambda s: "/".join(sorted(set(map(str, s)))))
        if "to_distance" in long_df
        else {}
    )
    rows = []
    for method in methods:
        for dataset in datasets:
            n, mean, sd = stats.loc[(method, dataset)] if (method, dataset) in stats.index else (0, None, None)
            cell = f"{_fmt(mean)} ({_fmt(sd)})" if n else NA
            rows.append((method, dataset, conv.get(dataset, NA), int(n), mean, sd, cell))
    out = pd.DataFrame(rows, columns=SUMMARY_COLUMNS)
    return out.astype({"mean": float, "sd": float})


def error_rate_table(long_df: pd.DataFrame, datasets: list, methods: list) -> pd.DataFrame:
    """Methods as rows, data sets as columns (given orders), cells "mean (sd)" or "NA"."""
    table = summarize(long_df, datasets, methods).pivot(index="method", columns="dataset", values="cell")
    table = table.loc[list(methods), list(datasets)]
    table.index.name, table.columns.name = "method", None
    return table


def _markdown(summary: pd.DataFrame, datasets: list, methods: list, test_pct: int | None,
              labels: dict | None = None) -> str:
    cells = summary.set_index(["method", "dataset"])["cell"]
    counts = sorted(set(summary.loc[summary["n_splits"] > 0, "n_splits"]))
    n = "/".join(map(str, counts)) or "0"
    split = f"random {100 - test_pct}/{test_pct} train/test splits" if test_pct else "random splits"
    esc = lambda s: str(s).replace("|", r"\|")  # noqa: E731
    lines = [
        f"Test error rate in %: mean (sd) over {n} {split}; sd is the sample sd (ddof=1).",
        "",
        "| Classifier | " + " | ".join(map(esc, datasets)) + " |",
        "|---|" + "---:|" * len(datasets),
    ]
    for m in methods:
        lines.append(f"| {esc((labels or {}).get(m, m))} | " + " | ".join(cells[(m, d)] for d in datasets) + " |")
    conv = summary.drop_duplicates("dataset").set_index("dataset")["to_distance"]
    lines += ["", "Distances: " + "; ".join(f"{d}: {conv[d]}" for d in datasets)]
    return "\n".join(lines) + "\n"


def write_error_rate_tables(
    long_df: pd.DataFrame,
    datasets: list,
    methods: list,
    csv_path: str | os.PathLike,
    md_path: str | os.PathLike,
    labels: dict | None = None,
    summary_path: str | os.PathLike | None = None,
    test_fraction: float | None = None,
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
    summary = summarize(long_df, datasets, methods)
    if test_fraction is not None:
        test_pct = int(round(100 * test_fraction))
    elif {"n_train", "n_test"} <= set(long_df.columns) and len(long_df):
        frac = (long_df["n_test"] / (long_df["n_train"] + long_df["n_test"])).median()
        test_pct = int(round(100 * frac))
    else:
        test_pct = None
    write_text(error_rate_table(long_df, datasets, methods).reset_index().to_csv(index=False), csv_path)
    if summary_path is not None:
        write_text(summary.to_csv(index=False), summary_path)
    write_text(_markdown(summary, datasets, methods, test_pct, labels), md_path)
    return summary
