"""Raw objects of one data set -> results/objects/{dataset}.parquet (logic: hlm.pipeline.stages.data.objects)."""

from hlm.pipeline.jobs import run
from hlm.pipeline.stages.data import objects

sm = snakemake  # noqa: F821
run(lambda: objects(sm.wildcards.dataset, sm.params.entry, sm.output[0]), sm.log[0])
