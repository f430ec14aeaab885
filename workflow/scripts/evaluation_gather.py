"""One method's evaluation of one data set from its parts
(logic: hlm.pipeline.stages.evaluate.gather_evaluation)."""

from hlm.pipeline.jobs import run
from hlm.pipeline.stages.evaluate import gather_evaluation

sm = snakemake  # noqa: F821
run(
    lambda: gather_evaluation(evaluations=list(sm.input.evaluations), predictions=list(sm.input.predictions),
                              evaluation_out=sm.output.evaluation, predictions_out=sm.output.predictions),
    sm.log[0],
)
