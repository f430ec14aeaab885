# Random train/test partitions, seeded from (seed, dataset, split); or, for an entry with `split: given`,
# the archive's own train/test split as the only one.


rule splits:
    priority: DATA_PRIORITY
    input:
        distances="results/distances/{dataset}.parquet",
        code=data_sources("splits"),
    output:
        "results/splits/{dataset}.parquet",
    params:  # an archive's own split reads none of the random splits' settings (editing them reruns nothing)
        n_splits=lambda wildcards: None if REGISTRY[wildcards.dataset].split == "given" else n_splits_of(wildcards.dataset),
        test_fraction=lambda wildcards: None if REGISTRY[wildcards.dataset].split == "given" else config["test_fraction"],
        seed=lambda wildcards: None if REGISTRY[wildcards.dataset].split == "given" else config["seed"],
        given=lambda wildcards: REGISTRY[wildcards.dataset].split == "given",
    resources:
        **cluster_resources("splits"),
    log:
        "logs/splits/{dataset}.log",
    benchmark:
        "logs/benchmarks/splits/{dataset}.tsv",
    conda:
        "../../envs/hlm.yaml"
    script:
        "../scripts/splits.py"
