"""One method on every split of one data set (logic: hlm.pipeline.stages.evaluate.evaluate)."""

from hlm.pipeline.jobs import run
from hlm.pipeline.provenance import run_tags
from hlm.pipeline.stages.evaluate import evaluate

sm = snakemake  # noqa: F821
tags = {**run_tags(), "rule": sm.rule, "wildcards": f"dataset={sm.wildcards.dataset}"}
run(
    lambda: evaluate(
        dataset=sm.wildcards.dataset,
        method=sm.params.method,
        distances=sm.input.distances,
        splits_path=sm.input.splits,
        evaluation_out=sm.output.evaluation,
        predictions_out=sm.output.predictions,
        seed=sm.params.seed,
        cv_folds=sm.params.cv_folds,
        method_params=sm.params.method_params,
        tags=tags,
        n_jobs=sm.threads,
        cv_from=sm.input.get("cv_from"),
    ),
    sm.log[0],
)
