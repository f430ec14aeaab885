"""Mixture HLM evaluations -> CV error against M figure (logic: hlm.pipeline.stages.report.cv_components_figure)."""

from hlm.pipeline.jobs import run
from hlm.pipeline.stages.report import cv_components_figure

sm = snakemake  # noqa: F821
run(
    lambda: cv_components_figure(list(sm.input.evaluations), sm.params.methods,
                                 dataset=sm.wildcards.dataset, output=sm.output[0]),
    sm.log[0],
)
