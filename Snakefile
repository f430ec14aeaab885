"""hlm: the comparison of Qiao & Li, "Distance-based Mixture Modeling for
Classification via Hypothetical Local Mapping", rerun on real data.

    raw data -> distances -> 20 random 80/20 splits -> every method with 10-fold CV
             -> Parquet + MLflow -> tables and figures

Run `snakemake --cores 2` (or `make run`). Configuration: config/config.yaml,
data sets: config/datasets.yaml.
"""

from snakemake.utils import min_version

min_version("9.0")


configfile: "config/config.yaml"


include: "workflow/rules/common.smk"
include: "workflow/rules/datasets.smk"
include: "workflow/rules/splits.smk"
include: "workflow/rules/evaluate.smk"
include: "workflow/rules/incremental.smk"
include: "workflow/rules/protocols.smk"
include: "workflow/rules/report.smk"
include: "workflow/rules/track.smk"
include: "workflow/rules/models.smk"


onstart:
    # temporaries that killed jobs left beside their outputs (hlm.datasets._artifacts.remove_stale_temps)
    from hlm.datasets._artifacts import remove_stale_temps

    for stale in remove_stale_temps("results"):
        print(f"hlm: removed {stale}, left by a killed job", file=sys.stderr)
    print_forecast()
    init_tracking_store()


onerror:
    # on a SLURM cluster: the jobs it killed for their memory, one line each (hlm.pipeline.cluster)
    from hlm.pipeline.cluster import memory_kills

    for kill in memory_kills(".snakemake/slurm_logs", since=RUN_STARTED):
        print(f"hlm: error: {kill.line()}", file=sys.stderr)


rule all:
    input:
        final_outputs(),
        model_outputs,
    default_target: True
