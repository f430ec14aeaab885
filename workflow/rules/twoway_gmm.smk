# The two-way GMM's grid protocol (dissertation chapter 2, Tables 2.1-2.3; docs/twoway-gmm-spec.md
# section 8), a rule of its own (twoway_gmm_grid: the method twoway_gmm has its evaluate rule): on the
# project's random 80/20 splits, the two-way GMM at every (components per class, variable clusters) and
# MDA at every number of components, each refitted and tested, plus both chosen by 10-fold CV. results/twoway_gmm/{dataset}.parquet per data set, and
# results/tables/twoway_gmm.{csv,md} in the chapter's layout.


rule twoway_gmm_grid:
    input:
        raw=dataset_raw_files,  # the vectors are read from the registry entry (NaN kept: missing-data EM)
        code=src(*protocol_sources("twoway_gmm")),
    output:
        "results/twoway_gmm/{dataset}.parquet",
    params:
        entry=dataset_entry,
        seed=config["seed"],
        cv_folds=config["cv_folds"],
        n_splits=config["n_splits"],
        test_fraction=config["test_fraction"],
        settings={k: v for k, v in config["twoway_gmm"].items() if k != "datasets"},
    threads: config["threads_per_job"]
    log:
        "logs/twoway_gmm/{dataset}.log",
    benchmark:
        "logs/benchmarks/twoway_gmm/{dataset}.tsv",
    conda:
        "../../envs/hlm.yaml"
    script:
        "../scripts/twoway_gmm.py"


rule twoway_gmm_report:
    input:
        runs=expand("results/twoway_gmm/{dataset}.parquet", dataset=PROTOCOL_DATASETS["twoway_gmm"]),
        code=src("stages/twoway_gmm.py", "reporting/twoway_gmm.py"),
    output:
        csv=report("results/tables/twoway_gmm.csv", caption="../report/twoway_gmm_table.rst", category="Two-way GMM"),
        md="results/tables/twoway_gmm.md",
    log:
        "logs/report/twoway_gmm_report.log",
    benchmark:
        "logs/benchmarks/report/twoway_gmm_report.tsv",
    conda:
        "../../envs/hlm.yaml"
    script:
        "../scripts/twoway_gmm_report.py"
