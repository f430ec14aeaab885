# One rule per method, named by its id (`snakemake --forcerun kernel_hlm`).
# Each job runs one method on every split of one data set: CV on the training
# part, fit, predict, Parquet outputs (logged to MLflow by rule track).
# The method's own source files are inputs, so editing one reruns only its jobs.
# HLM(kernel-vsh) also reads HLM(vsh)'s evaluation when both run: it reuses those
# CV errors (same estimator, seeds and folds) instead of computing them again.
# Every job's wall time and peak memory (max_rss, MB) go to logs/benchmarks/ (Snakemake's benchmark).

for _method in METHODS:

    rule:
        name:
            _method
        input:
            distances="results/distances/{dataset}.parquet",
            matrices="results/distances/{dataset}.npy",
            splits="results/splits/{dataset}.parquet",
            code=src(*method_sources(METHODS[_method])),
            **cv_from_input(_method),
        output:
            evaluation=f"results/evaluation/{{dataset}}/{_method}.parquet",
            predictions=f"results/predictions/{{dataset}}/{_method}.parquet",
        params:
            method=_method,
            seed=config["seed"],
            cv_folds=config["cv_folds"],
            method_params=config["method_params"].get(_method, {}),
        threads: method_threads(_method)
        priority: method_priority(_method)
        log:
            f"logs/evaluate/{{dataset}}/{_method}.log",
        benchmark:
            f"logs/benchmarks/evaluate/{{dataset}}/{_method}.tsv",
        conda:
            "../../envs/hlm.yaml"
        script:
            "../scripts/evaluate.py"
