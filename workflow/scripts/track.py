"""Mirror one data set's results into MLflow (logic: hlm.stages.track)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).resolve().parents[1] / "src"))  # noqa: F821
from hlm.jobs import run  # noqa: E402
from hlm.stages.track import track  # noqa: E402

sm = snakemake  # noqa: F821
run(
    lambda: track(
        dataset=sm.wildcards.dataset,
        evaluations=dict(zip(sm.params.methods, zip(sm.input.evaluations, sm.input.predictions))),
        incremental=dict(zip(sm.params.schemes, sm.input.incremental)),
        run_params=sm.params.run_params,
        incremental_run_params=sm.params.incremental_run_params,
        experiment=sm.params.experiment,
        out=sm.output[0],
    ),
    sm.log[0],
)
