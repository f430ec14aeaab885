"""The LLC-PC paper's protocol on one data set (logic: hlm.stages.llc_pc.llc_pc)."""

from hlm.jobs import run
from hlm.provenance import run_tags
from hlm.stages.llc_pc import llc_pc

sm = snakemake  # noqa: F821
tags = {**run_tags(), "rule": sm.rule, "wildcards": f"dataset={sm.wildcards.dataset}"}
run(
    lambda: llc_pc(dataset=sm.wildcards.dataset, entry=sm.params.entry, out=sm.output[0], seed=sm.params.seed,
                   cv_folds=sm.params.cv_folds, n_partitions=sm.params.n_partitions, tags=tags, n_jobs=sm.threads),
    sm.log[0],
)
