"""One method on every split of one data set (logic: hlm.pipeline.stages.evaluate.evaluate)."""

from hlm.pipeline.jobs import run
from hlm.pipeline.provenance import run_tags
from hlm.pipeline.stages.evaluate import evaluate

sm = snakemake  # noqa: F821
part = sm.wildcards.get("part")  # a job of some of the splits (the config's evaluation_jobs)
cv_from = sm.input.get("cv_from") or []  # the evaluation whose CV errors it reuses (one file, or none)
cv_from = [cv_from] if isinstance(cv_from, str) else list(cv_from)
tags = {**run_tags(), "rule": sm.rule,
        "wildcards": f"dataset={sm.wildcards.dataset}" + (f", part={part}" if part else "")}
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
        cv_from=cv_from[0] if cv_from else None,
        split_ids=sm.params.get("split_ids"),
    ),
    sm.log[0],
)
