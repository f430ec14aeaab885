"""Evaluation Parquet files -> log-loss and Brier tables (logic: hlm.pipeline.stages.report.probability_tables)."""

from hlm.pipeline.jobs import run
from hlm.pipeline.stages.report import probability_tables

sm = snakemake  # noqa: F821
run(
    lambda: probability_tables(list(sm.input.evaluations), log_loss_csv=sm.output.log_loss_csv,
                               log_loss_md=sm.output.log_loss_md, brier_csv=sm.output.brier_csv,
                               brier_md=sm.output.brier_md, summary_out=sm.output.summary, **sm.params),
    sm.log[0],
)
