"""Predictions Parquet files -> reliability diagram (logic: hlm.pipeline.stages.report.reliability_figure)."""

from hlm.pipeline.jobs import run
from hlm.pipeline.stages.report import reliability_figure

sm = snakemake  # noqa: F821
run(
    lambda: reliability_figure(list(sm.input.predictions), sm.params.methods, dataset=sm.wildcards.dataset,
                               output=sm.output[0]),
    sm.log[0],
)
