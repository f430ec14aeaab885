"""Pipeline stages for reports: tables and figures (workflow/rules/report.smk)."""

from __future__ import annotations

import logging

import pandas as pd

from hlm.methods import METHODS

log = logging.getLogger("hlm")


def tables(evaluations: list[str], *, datasets: list[str], methods: list[str], csv_out: str, md_out: str,
           summary_out: str, test_fraction: float) -> None:
    """``results/tables/error_rates.{csv,md}`` (paper Table 2 layout) and the tidy summary CSV."""
    from hlm.reporting.tables import load_evaluations, write_error_rate_tables

    labels = {m: METHODS[m].label for m in methods}
    write_error_rate_tables(load_evaluations(evaluations), datasets, methods, csv_out, md_out, labels=labels,
                            summary_path=summary_out, test_fraction=test_fraction)
    log.info("tables written: %s, %s", csv_out, md_out)


def figure(evaluations: list[str], *, datasets: list[str], methods: list[str], output: str) -> None:
    """``results/figures/error_rates.png``: mean +- sd per method and data set."""
    from hlm.reporting.figures import plot_error_rates
    from hlm.reporting.tables import load_evaluations

    labels = {m: METHODS[m].label for m in methods}
    plot_error_rates(load_evaluations(evaluations), datasets, methods, output, labels=labels)
    log.info("figure written: %s", output)


def cv_components_figure(evaluations: list[str], methods: list[str], *, dataset: str, output: str) -> None:
    """``results/figures/cv_components_{dataset}.png``: CV error against M for split 0."""
    from hlm.reporting.figures import plot_cv_components

    frames = {m: pd.read_parquet(p) for m, p in zip(methods, evaluations)}
    plot_cv_components(frames, output, dataset=dataset, labels={m: METHODS[m].label for m in methods})
    log.info("figure written: %s", output)
