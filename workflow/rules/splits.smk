# Random train/test partitions, seeded from (seed, dataset, split).


rule splits:
    priority: DATA_PRIORITY
    input:
        distances="results/distances/{dataset}.parquet",
        code=data_sources("splits"),
    output:
        "results/splits/{dataset}.parquet",
    params:
        n_splits=config["n_splits"],
        test_fraction=config["test_fraction"],
        seed=config["seed"],
    log:
        "logs/splits/{dataset}.log",
    benchmark:
        "logs/benchmarks/splits/{dataset}.tsv",
    conda:
        "../../envs/hlm.yaml"
    script:
        "../scripts/splits.py"
