"""Evaluation Parquet files -> error-rate figure (logic: hlm.pipeline.stages.report.figure)."""

from hlm.pipeline.jobs import run
from hlm.pipeline.stages.report import figure

sm = snakemake  # noqa: F821
run(lambda: figure(list(sm.input.evaluations), output=sm.output[0], **sm.params), sm.log[0])
