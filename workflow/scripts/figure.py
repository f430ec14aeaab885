"""Evaluation Parquet files -> error-rate figure (logic: hlm.stages.report.figure)."""

from hlm.jobs import run
from hlm.stages.report import figure

sm = snakemake  # noqa: F821
run(lambda: figure(list(sm.input.evaluations), output=sm.output[0], **sm.params), sm.log[0])
