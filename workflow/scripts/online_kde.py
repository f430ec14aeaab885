"""The odKDE paper's protocol on one data set (logic: hlm.stages.online_kde.online_kde)."""

from hlm.jobs import run
from hlm.provenance import run_tags
from hlm.stages.online_kde import online_kde

sm = snakemake  # noqa: F821
tags = {**run_tags(), "rule": sm.rule, "wildcards": f"dataset={sm.wildcards.dataset}"}
run(
    lambda: online_kde(dataset=sm.wildcards.dataset, entry=sm.params.entry, out=sm.output[0],
                       seed=sm.params.seed, cv_folds=sm.params.cv_folds, tags=tags),
    sm.log[0],
)
