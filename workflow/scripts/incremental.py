"""One incremental scheme on every split of one data set (logic: hlm.pipeline.incremental.run.run)."""

from hlm.pipeline.incremental.run import run as incremental
from hlm.pipeline.jobs import run
from hlm.pipeline.provenance import run_tags

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
