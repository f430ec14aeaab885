# The LLC-PC paper's protocol (Chen, Lu and Boedihardjo, section 6; docs/llc-pc-spec.md section 8), a rule
# of its own: random stratified partitions of the paper's Table 1 sizes; per partition, Greedy-MPE and
# k-means subclasses, the test accuracy at every total K = 1..40 and K chosen by 10-fold CV.
# results/llc_pc/{dataset}.parquet per data set, and results/tables/llc_pc.{csv,md} next to Table 2.


rule llc_pc:
    input:
        raw=dataset_raw_files,  # the vectors are read from the registry entry (Ringnorm is generated)
        code=src(*protocol_sources("llc_pc")),
    output:
        "results/llc_pc/{dataset}.parquet",
    params:
        entry=dataset_entry,
        seed=config["seed"],
        cv_folds=config["cv_folds"],
        n_partitions=config["llc_pc"]["n_partitions"],
    threads: config["threads_per_job"]
    log:
        "logs/llc_pc/{dataset}.log",
    benchmark:
        "logs/benchmarks/llc_pc/{dataset}.tsv",
    conda:
        "../../envs/hlm.yaml"
    script:
        "../scripts/llc_pc.py"


rule llc_pc_report:
    input:
        runs=expand("results/llc_pc/{dataset}.parquet", dataset=PROTOCOL_DATASETS["llc_pc"]),
        code=src("stages/llc_pc.py", "reporting/llc_pc.py", "reporting/paper.py"),
    output:
        csv=report("results/tables/llc_pc.csv", caption="../report/llc_pc_table.rst", category="LLC-PC"),
        md="results/tables/llc_pc.md",
    log:
        "logs/report/llc_pc_report.log",
    benchmark:
        "logs/benchmarks/report/llc_pc_report.tsv",
    conda:
        "../../envs/hlm.yaml"
    script:
        "../scripts/llc_pc_report.py"
