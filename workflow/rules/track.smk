# MLflow: one job per data set mirrors its results into the embedded SQLite
# store (created once in `onstart`). It logs each method's evaluation as a
# parent run with a nested run per split, and each incremental scheme as one
# run whose metric steps are the rounds. A file already logged (same SHA-256)
# is skipped, so after editing one method only that method's runs are replaced.
# Logging here rather than in every method job imports MLflow and opens the
# store once per data set instead of once per job (about 3 s of CPU each).


rule track:
    priority: DATA_PRIORITY  # cheap: log a data set as soon as its methods are done, not all at the end
    input:
        evaluations=lambda wc: [f"results/evaluation/{wc.dataset}/{m}.parquet" for m in dataset_methods(wc.dataset)],
        predictions=lambda wc: [f"results/predictions/{wc.dataset}/{m}.parquet" for m in dataset_methods(wc.dataset)],
        incremental=lambda wc: dataset_incremental_files(wc.dataset),
        hmac=lambda wc: dataset_hmac_files(wc.dataset),
        code=src(*module_sources("hlm.pipeline.jobs", "hlm.pipeline.stages.track")),
    output:
        "results/tracking/{dataset}.json",
    params:
        methods=lambda wc: dataset_methods(wc.dataset),
        schemes=lambda wc: dataset_schemes(wc.dataset) if wc.dataset in INCREMENTAL_DATASETS else [],
        run_params=lambda wc: {
            "n_splits": n_splits_of(wc.dataset),
            "test_fraction": config["test_fraction"],
            "cv_folds": config["cv_folds"],
            "seed": config["seed"],
        },
        incremental_run_params=lambda wc: {
            "n_splits": n_splits_of(wc.dataset),
            "test_fraction": config["test_fraction"],
            "seed": config["seed"],
        },
        experiment=EXPERIMENT,
    resources:
        **cluster_resources("track"),
    log:
        "logs/track/{dataset}.log",
    benchmark:
        "logs/benchmarks/track/{dataset}.tsv",
    conda:
        "../../envs/hlm.yaml"
    script:
        "../scripts/track.py"
