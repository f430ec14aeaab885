"""One method on every split of one data set (logic: hlm.stages.evaluate)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).resolve().parents[1] / "src"))  # noqa: F821
from hlm.jobs import run  # noqa: E402
from hlm.stages.evaluate import evaluate  # noqa: E402
from hlm.provenance import run_tags  # noqa: E402

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
