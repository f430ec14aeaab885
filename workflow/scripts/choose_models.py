"""The models kept of one data set (logic: hlm.pipeline.stages.model.choose)."""

from hlm.pipeline.jobs import run
from hlm.pipeline.stages.model import choose

sm = snakemake  # noqa: F821
run(lambda: choose(dataset=sm.wildcards.dataset, evaluations=dict(zip(sm.params.methods, sm.input.evaluations)),
                   extra=list(sm.params.extra), out=sm.output[0]), sm.log[0])
