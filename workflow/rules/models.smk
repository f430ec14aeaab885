# Models kept for use (hlm.pipeline.stages.model): per data set, the method of lowest mean error
# (checkpoint choose_models, from its evaluations: the error table's winner) and the config's `models`,
# each fitted on all labelled objects with the pipeline's CV and seeds, written as a model folder
# (results/models/{dataset}/{method}/: model.json + arrays.npz, no pickles; `hlm predict` reads it),
# then logged to MLflow as an MLflow Model in the (data set, method) parent run and registered.


checkpoint choose_models:
    input:
        evaluations=lambda wc: [f"results/evaluation/{wc.dataset}/{m}.parquet" for m in dataset_methods(wc.dataset)],
        code=src(*module_sources("hlm.pipeline.jobs", "hlm.pipeline.stages.model")),
    output:
        "results/models/{dataset}/chosen.json",
    params:
        methods=lambda wc: dataset_methods(wc.dataset),
        extra=config["models"],
    resources:
        **cluster_resources("choose_models"),
    log:
        "logs/models/{dataset}/choose.log",
    conda:
        "../../envs/hlm.yaml"
    script:
        "../scripts/choose_models.py"


rule fit_model:
    wildcard_constraints:
        method=names_regex(METHODS),
    input:
        distances="results/distances/{dataset}.parquet",
        matrices="results/distances/{dataset}.npy",
        objects=lambda wc: [f"results/objects/{wc.dataset}.parquet"] if REGISTRY[wc.dataset].kind in RAW_KINDS else [],
        code=lambda wc: src(*model_sources(METHODS[wc.method])),
    output:
        directory("results/models/{dataset}/{method}"),
    params:
        entry=dataset_entry,
        seed=config["seed"],
        cv_folds=config["cv_folds"],
        method_params=lambda wc: config["method_params"].get(wc.method, {}),
    resources:
        **cluster_resources("fit_model"),
    log:
        "logs/models/{dataset}/{method}.log",
    benchmark:
        "logs/benchmarks/models/{dataset}/{method}.tsv",
    conda:
        "../../envs/hlm.yaml"
    script:
        "../scripts/fit_model.py"


rule log_model:
    wildcard_constraints:
        method=names_regex(METHODS),
    input:
        model="results/models/{dataset}/{method}",
        tracking="results/tracking/{dataset}.json",
        code=src(*module_sources("hlm.pipeline.jobs", "hlm.pipeline.stages.model_log"), "pipeline/_pyfunc_code.py"),
    output:
        "results/models/{dataset}/{method}.mlflow.json",
    params:
        experiment=EXPERIMENT,
    resources:
        **cluster_resources("log_model"),
    log:
        "logs/models/{dataset}/{method}.mlflow.log",
    conda:
        "../../envs/hlm.yaml"
    script:
        "../scripts/log_model.py"
