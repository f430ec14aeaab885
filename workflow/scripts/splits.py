"""Distances -> results/splits/{dataset}.parquet (logic: hlm.pipeline.stages.data.splits)."""

from hlm.pipeline.jobs import run
from hlm.pipeline.stages.data import splits

sm = snakemake  # noqa: F821
run(lambda: splits(sm.input.distances, sm.output[0], dataset=sm.wildcards.dataset, **sm.params), sm.log[0])
