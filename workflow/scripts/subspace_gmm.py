"""Chapter 4's grid protocol on one data set (logic: hlm.stages.subspace_gmm.subspace_gmm)."""

from hlm.jobs import run
from hlm.provenance import run_tags
from hlm.stages.subspace_gmm import subspace_gmm

sm = snakemake  # noqa: F821
tags = {**run_tags(), "rule": sm.rule, "wildcards": f"dataset={sm.wildcards.dataset}"}
run(
    lambda: subspace_gmm(dataset=sm.wildcards.dataset, entry=sm.params.entry, out=sm.output.runs,
                         figure=sm.output.figure, seed=sm.params.seed, settings=sm.params.settings, tags=tags,
                         n_jobs=sm.threads),
    sm.log[0],
)
