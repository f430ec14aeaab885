"""One row block of a data set's distances (logic: hlm.pipeline.stages.data.distance_block)."""

from hlm.pipeline.jobs import run
from hlm.pipeline.stages.data import distance_block

sm = snakemake  # noqa: F821
run(lambda: distance_block(sm.input.objects, sm.output[0], dataset=sm.wildcards.dataset,
                           distance=sm.params.distance, options=dict(sm.params.options), i0=int(sm.wildcards.i0),
                           i1=int(sm.wildcards.i1), block_size=int(sm.params.block_size)), sm.log[0])
