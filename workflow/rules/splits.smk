# Random train/test partitions, seeded from (seed, dataset, split); or, for an entry with `split: given`,
# the archive's own train/test split as the only one.


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
        given=lambda wildcards: REGISTRY[wildcards.dataset].split == "given",
    log:
        "logs/splits/{dataset}.log",
    benchmark:
        "logs/benchmarks/splits/{dataset}.tsv",
    conda:
        "../../envs/hlm.yaml"
    script:
        "../scripts/splits.py"
