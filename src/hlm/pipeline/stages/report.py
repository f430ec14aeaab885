"""Pipeline stages for reports: tables and figures (workflow/rules/report.smk)."""

from __future__ import annotations

import logging

import pandas as pd

from hlm.pipeline.methods import METHODS

log = logging.getLogger("hlm")


def tables(evaluations: list[str], *, datasets: list[str], methods: list[str], csv_out: str, md_out: str,
           summary_out: str, test_fraction: float, paper_md_out: str | None = None, paper_csv_out: str | None = None,
           run_time_csv_out: str | None = None, run_time_md_out: str | None = None,
           sda_md_out: str | None = None, sda_csv_out: str | None = None, given: list[str] = ()) -> None:
    """The paper's tables from the evaluation Parquet files.

    ``results/tables/error_rates.{csv,md}`` (Table 2 layout, Wilcoxon bold) and
    the tidy summary; ``error_rates_paper.{md,csv}`` (ours next to Tables 2-3);
    ``run_time.{csv,md}`` (Table 4); ``error_rates_sda.{md,csv}`` (ours beside the
    local SDA paper's Tables I-II).
    """
    from hlm.datasets._artifacts import write_text
    from hlm.pipeline.reporting.paper import PAPER_ERROR_RATES, PAPER_SOURCE, SDA_DATASETS, SDA_ROWS, SDA_SOURCE
    from hlm.pipeline.reporting.tables import (
        load_evaluations,
        paper_comparison,
        paper_markdown,
        run_time_markdown,
        run_time_table,
        sda_comparison,
        sda_markdown,
        write_error_rate_tables,
    )

    labels = {m: METHODS[m].label for m in methods}
    long_df = load_evaluations(evaluations)
    summary = write_error_rate_tables(long_df, datasets, methods, csv_out, md_out, labels=labels,
                                      summary_path=summary_out, test_fraction=test_fraction, given=given)
    log.info("tables written: %s, %s", csv_out, md_out)
    if paper_md_out:
        comparison = paper_comparison(summary, PAPER_ERROR_RATES)
        write_text(paper_markdown(comparison, datasets, methods, labels, PAPER_SOURCE), paper_md_out)
        if paper_csv_out:
            write_text(comparison.to_csv(index=False), paper_csv_out)
        log.info("paper comparison written: %s", paper_md_out)
    if run_time_csv_out:
        times = run_time_table(long_df, datasets, methods)
        write_text(times.to_csv(index=False), run_time_csv_out)
        write_text(run_time_markdown(times, datasets, methods, labels), run_time_md_out)
        log.info("run times written: %s, %s", run_time_csv_out, run_time_md_out)
    if sda_md_out:
        sda = sda_comparison(summary, SDA_ROWS, SDA_DATASETS)
        write_text(sda_markdown(sda, SDA_DATASETS, SDA_SOURCE), sda_md_out)
        if sda_csv_out:
            write_text(sda.to_csv(index=False), sda_csv_out)
        log.info("local SDA paper comparison written: %s", sda_md_out)


def figure(evaluations: list[str], *, datasets: list[str], methods: list[str], output: str) -> None:
    """``results/figures/error_rates.png``: mean +- sd per method and data set."""
    from hlm.pipeline.reporting.figures import plot_error_rates
    from hlm.pipeline.reporting.tables import load_evaluations

    labels = {m: METHODS[m].label for m in methods}
    plot_error_rates(load_evaluations(evaluations), datasets, methods, output, labels=labels)
    log.info("figure written: %s", output)


def cv_components_figure(evaluations: list[str], methods: list[str], *, dataset: str, output: str) -> None:
    """``results/figures/cv_components_{dataset}.png``: CV error against M for split 0."""
    from hlm.pipeline.reporting.figures import plot_cv_components

    frames = {m: pd.read_parquet(p) for m, p in zip(methods, evaluations)}
    plot_cv_components(frames, output, dataset=dataset, labels={m: METHODS[m].label for m in methods})
    log.info("figure written: %s", output)


def probability_tables(evaluations: list[str], *, datasets: list[str], methods: list[str], log_loss_csv: str,
                       log_loss_md: str, brier_csv: str, brier_md: str, summary_out: str | None = None,
                       given: list[str] = ()) -> None:
    """``results/tables/log_loss.{csv,md}`` and ``brier.{csv,md}`` (mean (sd) over the splits, Wilcoxon bold,
    NA without probabilities) and the tidy ``probability_summary.csv`` (docs/beyond-the-paper-spec.md section 3)."""
    from hlm.pipeline.reporting.probabilities import write_probability_tables
    from hlm.pipeline.reporting.tables import load_evaluations

    outputs = {"log_loss_csv": log_loss_csv, "log_loss_md": log_loss_md, "brier_csv": brier_csv, "brier_md": brier_md}
    summary = write_probability_tables(load_evaluations(evaluations), datasets, methods, outputs,
                                       labels={m: METHODS[m].label for m in methods}, summary_path=summary_out,
                                       given=given)
    log.info("log-loss and Brier tables written: %s, %s (%d test objects clipped)", log_loss_md, brier_md,
             int(summary["n_clipped"].sum()))


def reliability_figure(predictions: list[str], methods: list[str], *, dataset: str, output: str) -> None:
    """``results/figures/reliability_{dataset}.png``: the reliability diagram of the methods with probabilities."""
    from hlm.pipeline.evaluation.probabilities import predictions_reliability
    from hlm.pipeline.reporting.probabilities import plot_reliability

    bins = {}
    for method, path in zip(methods, predictions):
        frame = predictions_reliability(pd.read_parquet(path))
        if frame is not None:
            bins[method] = frame
    plot_reliability(bins, dataset, output, labels={m: METHODS[m].label for m in methods})
    log.info("figure written: %s (%d methods)", output, len(bins))
