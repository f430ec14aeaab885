"""A model folder logged to MLflow as an MLflow Model (logic: hlm.pipeline.stages.model_log.log_model)."""

from hlm.pipeline.jobs import run
from hlm.pipeline.stages.model_log import log_model

sm = snakemake  # noqa: F821
run(lambda: log_model(dataset=sm.wildcards.dataset, method=sm.wildcards.method, model_dir=sm.input.model,
                      tracking=sm.input.tracking, experiment=sm.params.experiment, out=sm.output[0]), sm.log[0])
