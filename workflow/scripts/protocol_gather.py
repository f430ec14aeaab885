"""A paper's protocol on one data set, gathered from its parts (logic: hlm.pipeline.stages.protocol.gather_protocol)."""

from hlm.pipeline.jobs import run
from hlm.pipeline.provenance import run_tags
from hlm.pipeline.stages.protocol import gather_protocol

sm = snakemake  # noqa: F821
tags = {**run_tags(), "rule": sm.rule, "wildcards": f"dataset={sm.wildcards.dataset}"}
run(
    lambda: gather_protocol(sm.params.protocol, dataset=sm.wildcards.dataset, parts=list(sm.input.parts),
                            outputs=dict(sm.output.items()), settings=sm.params.settings, tags=tags),
    sm.log[0],
)
