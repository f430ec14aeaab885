"""The Snakemake pipeline's code (workflow/ holds the rules and thin scripts): the tables of methods and
protocols, the config, the jobs' set-up, their code inputs, provenance, MLflow tracking, the evaluation,
the stages, the reports. The library (every other package of hlm) never imports it."""
