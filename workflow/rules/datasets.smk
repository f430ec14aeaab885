# Raw data set -> distance matrix artifact (paper section 5.2 conversions).


rule preprocess:
    input:
        raw=dataset_raw_files,
        code=src(
            "data/readers.py",
            "data/conversions.py",
            "data/validation.py",
            "data/vectors.py",
            "data/prepare.py",
            "data/artifacts.py",
            "data/registry.py",
            "stages/data.py",
        ),
    output:
        "results/distances/{dataset}.parquet",
    params:
        entry=dataset_entry,
    log:
        "logs/preprocess/{dataset}.log",
    conda:
        "../../envs/hlm.yaml"
    script:
        "../scripts/preprocess.py"
