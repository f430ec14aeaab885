"""Row blocks -> results/distances/{dataset}.parquet (logic: hlm.pipeline.stages.data.distances_from_blocks)."""

from hlm.pipeline.jobs import run
from hlm.pipeline.stages.data import distances_from_blocks

sm = snakemake  # noqa: F821
run(lambda: distances_from_blocks(sm.wildcards.dataset, sm.params.entry, sm.input.objects, list(sm.input.blocks),
                                  sm.output[0], dtype=sm.params.dtype), sm.log[0])
