# Incremental learning (paper section 5.5): one rule per scheme (the HLM schemes, and
# the online KDE classifiers okde/odkde on the data sets of kind vectors), named
# incremental_{scheme} (`snakemake --forcerun incremental_retrain`). Each job runs
# the 9 rounds of one scheme on every split of one data set, writes
# results/incremental/{dataset}/{scheme}.parquet; rule track logs it as one MLflow
# run whose metric steps are the rounds (the learning curve in the MLflow UI).

for _scheme in INCREMENTAL_SCHEMES:

    rule:
        name:
            f"incremental_{_scheme}"
        input:
            distances="results/distances/{dataset}.parquet",
            matrices="results/distances/{dataset}.npy",
            splits="results/splits/{dataset}.parquet",
            code=src(*incremental_sources(_scheme)),
        output:
            f"results/incremental/{{dataset}}/{_scheme}.parquet",
        params:
            scheme=_scheme,
            seed=config["seed"],
            # only what the config sets; the learner's defaults apply to the rest
            learner=incremental_params(_scheme),
        resources:
            **cluster_resources(f"incremental_{_scheme}"),
        log:
            f"logs/incremental/{{dataset}}/{_scheme}.log",
        benchmark:
            f"logs/benchmarks/incremental/{{dataset}}/{_scheme}.tsv",
        conda:
            "../../envs/hlm.yaml"
        script:
            "../scripts/incremental.py"


rule incremental_report:
    input:
        runs=incremental_files(),
        code=src(*incremental_report_sources()),
    output:
        figures=report(
            expand("results/figures/incremental_{dataset}.png", dataset=INCREMENTAL_DATASETS),
            caption="../report/incremental_figure.rst",
            category="Incremental learning",
        ),
        csv=report(
            "results/tables/incremental_time.csv",
            caption="../report/incremental_time.rst",
            category="Incremental learning",
        ),
        md="results/tables/incremental_time.md",
        claims=report(
            "results/tables/incremental_claims.md",
            caption="../report/incremental_claims.rst",
            category="Incremental learning",
        ),
    params:
        datasets=INCREMENTAL_DATASETS,
        schemes=INCREMENTAL_SCHEMES,
    resources:
        **cluster_resources("incremental_report"),
    log:
        "logs/report/incremental_report.log",
    benchmark:
        "logs/benchmarks/report/incremental_report.tsv",
    conda:
        "../../envs/hlm.yaml"
    script:
        "../scripts/incremental_report.py"
