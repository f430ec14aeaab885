"""Evaluation Parquet files -> error-rate tables (logic: hlm.pipeline.stages.report.tables)."""

from hlm.pipeline.jobs import run
from hlm.pipeline.stages.report import tables

sm = snakemake  # noqa: F821
run(
    lambda: tables(list(sm.input.evaluations), csv_out=sm.output.csv, md_out=sm.output.md,
                   summary_out=sm.output.summary, paper_md_out=sm.output.paper_md,
                   paper_csv_out=sm.output.paper_csv, run_time_csv_out=sm.output.run_time_csv,
                   run_time_md_out=sm.output.run_time_md,
                   sda_md_out=sm.output.sda_md, sda_csv_out=sm.output.sda_csv, **sm.params),
    sm.log[0],
)
