"""One incremental scheme on every split of one data set (logic: hlm.stages.incremental.incremental)."""

from hlm.jobs import run
from hlm.provenance import run_tags
from hlm.stages.incremental import incremental

sm = snakemake  # noqa: F821
tags = {**run_tags(), "rule": sm.rule, "wildcards": f"dataset={sm.wildcards.dataset}"}
run(
    lambda: incremental(
        dataset=sm.wildcards.dataset,
        scheme=sm.params.scheme,
        distances=sm.input.distances,
        splits_path=sm.input.splits,
        out=sm.output[0],
        seed=sm.params.seed,
        params=sm.params.learner,
        tags=tags,
    ),
    sm.log[0],
)
