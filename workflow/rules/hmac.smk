# HMAC (hierarchical mode association clustering; dissertation chapters 4.2 and 5, docs/hmac-spec.md): each
# vector data set of hmac.datasets clustered at every bandwidth level, serially or by parallel approach I or II
# on Dask (hmac.parallel; hmac.scheduler: an existing scheduler's address, else a local cluster of the job's
# threads). results/hmac/{dataset}.parquet (a row per level) and results/figures/hmac_{dataset}.png (the
# cluster tree, and the points in their first two principal components); results/tables/hmac.{csv,md}. The
# level sizes and the time go to MLflow with the data set's other runs (rule track).


rule hmac:
    input:
        raw=dataset_raw_files,  # the vectors are read from the registry entry
        code=src(*protocol_sources("hmac"), "reporting/hmac.py"),
    output:
        levels="results/hmac/{dataset}.parquet",
        figure=report("results/figures/hmac_{dataset}.png", caption="../report/hmac_figure.rst", category="HMAC"),
    params:
        entry=dataset_entry,
        settings={k: v for k, v in config["hmac"].items() if k != "datasets"},
    threads: HMAC_THREADS
    log:
        "logs/hmac/{dataset}.log",
    benchmark:
        "logs/benchmarks/hmac/{dataset}.tsv",
    conda:
        "../../envs/hlm.yaml"
    script:
        "../scripts/hmac.py"


rule hmac_report:
    input:
        runs=expand("results/hmac/{dataset}.parquet", dataset=HMAC_DATASETS),
        code=src("stages/hmac.py", "reporting/hmac.py"),
    output:
        csv=report("results/tables/hmac.csv", caption="../report/hmac_table.rst", category="HMAC"),
        md="results/tables/hmac.md",
    log:
        "logs/report/hmac_report.log",
    benchmark:
        "logs/benchmarks/report/hmac_report.tsv",
    conda:
        "../../envs/hlm.yaml"
    script:
        "../scripts/hmac_report.py"
