# Tables and figures a person reads (paper Table 2 layout).


rule error_rate_tables:
    input:
        evaluations=evaluation_files(),
        code=src(*REPORT_SOURCES),
    output:
        csv=report(
            "results/tables/error_rates.csv",
            caption="../report/error_rates_table.rst",
            category="Error rates",
        ),
        summary="results/tables/error_rates_summary.csv",
        md="results/tables/error_rates.md",
        paper_md="results/tables/error_rates_paper.md",
        paper_csv=report(
            "results/tables/error_rates_paper.csv",
            caption="../report/error_rates_paper.rst",
            category="Error rates",
        ),
        run_time_csv=report(
            "results/tables/run_time.csv",
            caption="../report/run_time.rst",
            category="Run time",
        ),
        run_time_md="results/tables/run_time.md",
        sda_md="results/tables/error_rates_sda.md",
        sda_csv="results/tables/error_rates_sda.csv",
    params:
        datasets=DATASETS,
        methods=RUN_METHODS,
        test_fraction=config["test_fraction"],
        given=GIVEN_SPLIT,
    resources:
        **cluster_resources("error_rate_tables"),
    log:
        "logs/report/error_rate_tables.log",
    benchmark:
        "logs/benchmarks/report/error_rate_tables.tsv",
    conda:
        "../../envs/hlm.yaml"
    script:
        "../scripts/tables.py"


rule error_rate_figure:
    input:
        evaluations=evaluation_files(),
        code=src(*REPORT_SOURCES),
    output:
        report(
            "results/figures/error_rates.png",
            caption="../report/error_rates_figure.rst",
            category="Error rates",
        ),
    params:
        datasets=DATASETS,
        methods=RUN_METHODS,
    resources:
        **cluster_resources("error_rate_figure"),
    log:
        "logs/report/error_rate_figure.log",
    benchmark:
        "logs/benchmarks/report/error_rate_figure.tsv",
    conda:
        "../../envs/hlm.yaml"
    script:
        "../scripts/figure.py"


rule cv_components_figure:
    input:
        evaluations=lambda wildcards: [f"results/evaluation/{wildcards.dataset}/{m}.parquet"
                                       for m in mixture_methods(wildcards.dataset)],
        code=src(*REPORT_SOURCES),
    output:
        report(
            "results/figures/cv_components_{dataset}.png",
            caption="../report/cv_components.rst",
            category="Mixture HLM",
        ),
    params:
        methods=lambda wildcards: mixture_methods(wildcards.dataset),
    resources:
        **cluster_resources("cv_components_figure"),
    log:
        "logs/report/cv_components_{dataset}.log",
    benchmark:
        "logs/benchmarks/report/cv_components_{dataset}.tsv",
    conda:
        "../../envs/hlm.yaml"
    script:
        "../scripts/cv_components.py"


# Class probabilities, measured (docs/beyond-the-paper-spec.md section 3): log-loss and Brier tables over
# every method of the run (NA without probabilities), a reliability diagram per data set.
rule probability_tables:
    input:
        evaluations=evaluation_files(),
        code=src(*REPORT_SOURCES),
    output:
        log_loss_csv=report(
            "results/tables/log_loss.csv",
            caption="../report/log_loss_table.rst",
            category="Probabilities",
        ),
        log_loss_md="results/tables/log_loss.md",
        brier_csv=report(
            "results/tables/brier.csv",
            caption="../report/brier_table.rst",
            category="Probabilities",
        ),
        brier_md="results/tables/brier.md",
        summary="results/tables/probability_summary.csv",
    params:
        datasets=DATASETS,
        methods=RUN_METHODS,
        given=GIVEN_SPLIT,
    resources:
        **cluster_resources("probability_tables"),
    log:
        "logs/report/probability_tables.log",
    benchmark:
        "logs/benchmarks/report/probability_tables.tsv",
    conda:
        "../../envs/hlm.yaml"
    script:
        "../scripts/probability_tables.py"


rule reliability_figure:
    input:
        predictions=lambda wildcards: [f"results/predictions/{wildcards.dataset}/{m}.parquet"
                                       for m in probability_methods(wildcards.dataset)],
        code=src(*REPORT_SOURCES),
    output:
        report(
            "results/figures/reliability_{dataset}.png",
            caption="../report/reliability_figure.rst",
            category="Probabilities",
        ),
    params:
        methods=lambda wildcards: probability_methods(wildcards.dataset),
    resources:
        **cluster_resources("reliability_figure"),
    log:
        "logs/report/reliability_{dataset}.log",
    benchmark:
        "logs/benchmarks/report/reliability_{dataset}.tsv",
    conda:
        "../../envs/hlm.yaml"
    script:
        "../scripts/reliability.py"
