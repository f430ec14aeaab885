"""One method fitted on all labelled objects of one data set (logic: hlm.pipeline.stages.model.fit)."""

from hlm.pipeline.jobs import run
from hlm.pipeline.stages.model import fit

sm = snakemake  # noqa: F821
run(lambda: fit(dataset=sm.wildcards.dataset, method=sm.wildcards.method, entry=sm.params.entry,
                distances=sm.input.distances, objects=sm.input.objects[0] if sm.input.objects else None,
                seed=sm.params.seed, cv_folds=sm.params.cv_folds, method_params=sm.params.method_params,
                out=sm.output[0]), sm.log[0])
