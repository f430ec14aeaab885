# The odKDE paper's protocol (Kristan and Leonardis, section 4; docs/online-kde-spec.md
# section 9), a rule of its own: fourfold CV, 3 orderings, each class started from its
# first 10 objects and the rest learnt one at a time; oKDE and odKDE with the batch
# KDE and the SVM-RBF. results/online_kde/{dataset}.parquet per data set, and
# results/tables/online_kde.{csv,md} next to the paper's Table 1.


rule online_kde:
    input:
        raw=dataset_raw_files,  # the vectors are read from the registry entry: no distance matrix
        code=src(*protocol_sources("online_kde")),
    output:
        "results/online_kde/{dataset}.parquet",
    params:
        entry=dataset_entry,
        seed=config["seed"],
        cv_folds=config["cv_folds"],
    threads: 1
    log:
        "logs/online_kde/{dataset}.log",
    benchmark:
        "logs/benchmarks/online_kde/{dataset}.tsv",
    conda:
        "../../envs/hlm.yaml"
    script:
        "../scripts/online_kde.py"


rule online_kde_report:
    input:
        runs=expand("results/online_kde/{dataset}.parquet", dataset=ONLINE_KDE_DATASETS),
        code=src("stages/online_kde.py", "evaluation/online_kde.py", "reporting/tables.py", "reporting/paper.py"),
    output:
        csv=report("results/tables/online_kde.csv", caption="../report/online_kde_table.rst", category="Online KDE"),
        md="results/tables/online_kde.md",
    log:
        "logs/report/online_kde_report.log",
    benchmark:
        "logs/benchmarks/report/online_kde_report.tsv",
    conda:
        "../../envs/hlm.yaml"
    script:
        "../scripts/online_kde_report.py"
