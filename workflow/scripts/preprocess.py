"""Raw data set -> results/distances/{dataset}.parquet (logic: hlm.pipeline.stages.data.preprocess)."""

from hlm.pipeline.jobs import run
from hlm.pipeline.stages.data import preprocess

sm = snakemake  # noqa: F821
run(lambda: preprocess(sm.wildcards.dataset, sm.params.entry, sm.output[0], dtype=sm.params.dtype), sm.log[0])
