# Chapter 4's grid protocol (dissertation Tables 4.1-4.2; docs/subspace-gmm-spec.md): GMM-MPCA, GMM-MPCA-MEAN,
# GMM-MPCA-SEP, MDA-RR and MDA-DR-MPCA(-MEAN) at every (components per class, discriminant dimension) of the
# chapter's grid, on ten fresh simulations of a generated data set (Waveform) or on 5-fold cross-validation.
# A rule of its own (subspace_gmm_grid: the methods gmm_mpca etc. have their evaluate rules).
# results/subspace_gmm/{dataset}.parquet and results/figures/subspace_gmm_{dataset}.png (the 2-D view) per
# data set; results/tables/subspace_gmm.{csv,md} beside the chapter's numbers.


rule subspace_gmm_grid:
    input:
        raw=dataset_raw_files,  # the vectors are read from the registry entry (a generated one is drawn)
        code=src(*protocol_sources("subspace_gmm"), "reporting/subspace_view.py"),
    output:
        runs="results/subspace_gmm/{dataset}.parquet",
        figure=report("results/figures/subspace_gmm_{dataset}.png", caption="../report/subspace_gmm_figure.rst",
                      category="Subspace-constrained GMM"),
    params:
        entry=dataset_entry,
        seed=config["seed"],
        settings={k: v for k, v in config["subspace_gmm"].items() if k != "datasets"},
    threads: config["threads_per_job"]
    log:
        "logs/subspace_gmm/{dataset}.log",
    benchmark:
        "logs/benchmarks/subspace_gmm/{dataset}.tsv",
    conda:
        "../../envs/hlm.yaml"
    script:
        "../scripts/subspace_gmm.py"


rule subspace_gmm_report:
    input:
        runs=expand("results/subspace_gmm/{dataset}.parquet", dataset=PROTOCOL_DATASETS["subspace_gmm"]),
        code=src("stages/subspace_gmm.py", "reporting/subspace_gmm.py", "reporting/paper.py"),
    output:
        csv=report("results/tables/subspace_gmm.csv", caption="../report/subspace_gmm_table.rst",
                   category="Subspace-constrained GMM"),
        md="results/tables/subspace_gmm.md",
    log:
        "logs/report/subspace_gmm_report.log",
    benchmark:
        "logs/benchmarks/report/subspace_gmm_report.tsv",
    conda:
        "../../envs/hlm.yaml"
    script:
        "../scripts/subspace_gmm_report.py"
