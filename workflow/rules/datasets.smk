# Raw data set -> distance matrix artifact (paper section 5.2 conversions).


rule preprocess:
    priority: DATA_PRIORITY
    wildcard_constraints:
        dataset=names_regex(MATRIX_DATASETS),
    input:
        raw=dataset_raw_files,
        code=data_sources("preprocess"),
    output:
        "results/distances/{dataset}.parquet",
        "results/distances/{dataset}.npy",
    params:
        entry=dataset_entry,
        dtype=config["distance_dtype"],
    resources:
        **cluster_resources("preprocess"),
    log:
        "logs/preprocess/{dataset}.log",
    benchmark:
        "logs/benchmarks/preprocess/{dataset}.tsv",
    conda:
        "../../envs/hlm.yaml"
    script:
        "../scripts/preprocess.py"


# Raw objects (kind series / sequences): objects -> row blocks of the
# upper triangle (one cached job each, so an interrupted run resumes from the
# finished blocks; `distance_block_size` in config) -> assembled distances.


checkpoint objects:
    priority: DATA_PRIORITY
    wildcard_constraints:
        dataset=names_regex(OBJECT_DATASETS),
    input:
        raw=dataset_raw_files,
        code=data_sources("objects"),
    output:
        "results/objects/{dataset}.parquet",
    params:
        entry=dataset_entry,
    resources:
        **cluster_resources("objects"),
    log:
        "logs/objects/{dataset}.log",
    benchmark:
        "logs/benchmarks/objects/{dataset}.tsv",
    conda:
        "../../envs/hlm.yaml"
    script:
        "../scripts/objects.py"


rule distance_block:
    priority: DATA_PRIORITY
    wildcard_constraints:
        dataset=names_regex(OBJECT_DATASETS),
        i0=r"\d+",
        i1=r"\d+",
    input:
        objects="results/objects/{dataset}.parquet",
        code=data_sources("distance_block"),
    output:
        "results/blocks/{dataset}/rows-{i0}-{i1}.parquet",
    params:
        distance=lambda wc: REGISTRY[wc.dataset].distance,
        options=lambda wc: distance_options(wc.dataset),
        block_size=lambda wc: block_size(wc.dataset),
    resources:
        **cluster_resources("distance_block"),
    log:
        "logs/blocks/{dataset}/rows-{i0}-{i1}.log",
    benchmark:
        "logs/benchmarks/blocks/{dataset}/rows-{i0}-{i1}.tsv",
    conda:
        "../../envs/hlm.yaml"
    script:
        "../scripts/distance_block.py"


rule distances_from_blocks:
    priority: DATA_PRIORITY
    wildcard_constraints:
        dataset=names_regex(OBJECT_DATASETS),
    input:
        objects="results/objects/{dataset}.parquet",
        blocks=distance_blocks,
        code=data_sources("distances_from_blocks"),
    output:
        "results/distances/{dataset}.parquet",
        "results/distances/{dataset}.npy",
    params:
        entry=dataset_entry,
        dtype=config["distance_dtype"],
    resources:
        **cluster_resources("distances_from_blocks"),
    log:
        "logs/preprocess/{dataset}.log",
    benchmark:
        "logs/benchmarks/preprocess/{dataset}.tsv",
    conda:
        "../../envs/hlm.yaml"
    script:
        "../scripts/distances_from_blocks.py"
