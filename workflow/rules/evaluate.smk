# One rule per method, named by its id (`snakemake --forcerun kernel_hlm`).
# Each job runs one method on every split of one data set: CV on the training
# part, fit, predict, Parquet outputs (logged to MLflow by rule track).
# The method's own source files are inputs, so editing one reruns only its jobs.
# HLM(kernel-vsh) also reads HLM(vsh)'s evaluation when both run: it reuses those
# CV errors (same estimator, seeds and folds) instead of computing them again.
# Every job's wall time and peak memory (max_rss, MB) go to logs/benchmarks/ (Snakemake's benchmark).
# A data set of the config's evaluation_jobs runs each method as that many jobs, each on a run of consecutive
# splits (<method>_part), and evaluation_gather writes their rows as one job's, so that no job is longer than its
# share of the splits.

for _method in METHODS:

    rule:
        name:
            _method
        wildcard_constraints:
            dataset=WHOLE_EVALUATION,
        input:
            **method_inputs(_method),
        output:
            evaluation=f"results/evaluation/{{dataset}}/{_method}.parquet",
            predictions=f"results/predictions/{{dataset}}/{_method}.parquet",
        params:
            **method_rule_params(_method),
        threads: method_threads(_method)
        priority: method_priority(_method)
        resources:
            **cluster_resources(_method),
        log:
            f"logs/evaluate/{{dataset}}/{_method}.log",
        benchmark:
            f"logs/benchmarks/evaluate/{{dataset}}/{_method}.tsv",
        conda:
            "../../envs/hlm.yaml"
        script:
            "../scripts/evaluate.py"

    # a data set of evaluation_jobs: the same job on a run of its splits
    rule:
        name:
            f"{_method}_part"
        wildcard_constraints:
            dataset=names_regex(EVALUATION_JOBS),
            part=r"\d+",
        input:
            **method_inputs(_method),
        output:
            evaluation=f"results/evaluation/{{dataset}}/{_method}/part-{{part}}.parquet",
            predictions=f"results/predictions/{{dataset}}/{_method}/part-{{part}}.parquet",
        params:
            **method_rule_params(_method),
            split_ids=part_split_ids,
        threads: method_threads(_method)
        priority: method_priority(_method)
        resources:
            **cluster_resources(f"{_method}_part", like=_method),
        log:
            f"logs/evaluate/{{dataset}}/{_method}/part-{{part}}.log",
        benchmark:
            f"logs/benchmarks/evaluate/{{dataset}}/{_method}/part-{{part}}.tsv",
        conda:
            "../../envs/hlm.yaml"
        script:
            "../scripts/evaluate.py"


rule evaluation_gather:
    wildcard_constraints:
        dataset=names_regex(EVALUATION_JOBS),
        method=names_regex(METHODS),
    input:
        evaluations=lambda wc: evaluation_parts(wc, "evaluation"),
        predictions=lambda wc: evaluation_parts(wc, "predictions"),
        code=src(*module_sources("hlm.pipeline.jobs", "hlm.pipeline.stages.evaluate")),
    output:
        evaluation="results/evaluation/{dataset}/{method}.parquet",
        predictions="results/predictions/{dataset}/{method}.parquet",
    resources:
        **cluster_resources("evaluation_gather"),
    log:
        "logs/evaluate/{dataset}/{method}.log",
    benchmark:
        "logs/benchmarks/evaluate/{dataset}/{method}.tsv",
    conda:
        "../../envs/hlm.yaml"
    script:
        "../scripts/evaluation_gather.py"
