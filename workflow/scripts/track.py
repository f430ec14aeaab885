"""Mirror one data set's results into MLflow (logic: hlm.pipeline.stages.track.track)."""

from hlm.pipeline.jobs import run
from hlm.pipeline.stages.track import track

sm = snakemake  # noqa: F821
run(
    lambda: track(
        dataset=sm.wildcards.dataset,
        evaluations=dict(zip(sm.params.methods, zip(sm.input.evaluations, sm.input.predictions))),
        incremental=dict(zip(sm.params.schemes, sm.input.incremental)),
        hmac=sm.input.hmac[0] if sm.input.hmac else None,
        run_params=sm.params.run_params,
        incremental_run_params=sm.params.incremental_run_params,
        experiment=sm.params.experiment,
        out=sm.output[0],
    ),
    sm.log[0],
)
