"""The two-way GMM's grid protocol on one data set (logic: hlm.stages.twoway_gmm.twoway_gmm)."""

from hlm.jobs import run
from hlm.provenance import run_tags
from hlm.stages.twoway_gmm import twoway_gmm

sm = snakemake  # noqa: F821
tags = {**run_tags(), "rule": sm.rule, "wildcards": f"dataset={sm.wildcards.dataset}"}
run(
    lambda: twoway_gmm(dataset=sm.wildcards.dataset, entry=sm.params.entry, out=sm.output[0], seed=sm.params.seed,
                       cv_folds=sm.params.cv_folds, n_splits=sm.params.n_splits,
                       test_fraction=sm.params.test_fraction, settings=sm.params.settings, tags=tags,
                       n_jobs=sm.threads),
    sm.log[0],
)
