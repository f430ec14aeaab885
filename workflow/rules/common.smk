# Shared set-up: config validation, the data set registry, the method table,
# MLflow settings (environment variables only) and input functions.
#
# The hlm package (the Snakefile's imports and every job script's) is the
# installed one: `make` installs this project with `pip install -e .`, so it is
# this project's src/hlm. Nothing puts src on sys.path. As the rules declare the
# library files their jobs run as inputs (`src()`), the imported package must be
# this project's, else an edit would rerun jobs that run other code: Snakemake
# stops with a one-line error when it is not (e.g. a copy of the project run with
# another checkout's venv; there, `make install` or run with PYTHONPATH=src, which
# the jobs inherit, as the workflow tests do).
#
# Settings are read from the validated config only: hlm.pipeline.config.validate_config
# fills in the defaults of src/hlm/pipeline/config.schema.yaml, the one place where
# they are written.

import os
import sys
import time
from dataclasses import asdict
from pathlib import Path

import hlm
from hlm.datasets._registry import load_registry
from hlm.errors import HLMError, print_error
from hlm.pipeline.config import (check_config_file, check_names, restrict_to_named, typed_command_line, user_settings,
                                 validate_config)
from hlm.pipeline.incremental import learner_params, scheme_applies
from hlm.pipeline.methods import METHODS, method_applies
from hlm.pipeline.protocols import protocols
from hlm.pipeline.provenance import config_hash, git_commit
from hlm.pipeline.resources import Requests
from hlm.pipeline.sources import incremental_report_sources, incremental_sources, method_sources, model_sources
from hlm.pipeline.sources import module_sources
from hlm.pipeline.sources import protocol_sources, protocol_table_sources, run_sources

SRC = Path(workflow.basedir) / "src"
#: a data set's name in a wildcard (every rule's constraint)
DATASET_NAME = "[A-Za-z][A-Za-z0-9_-]*"


def _fail(error):
    # One line, no traceback, exit status 2 (as hlm check, and hlm.pipeline.jobs inside jobs).
    sys.exit(print_error(error))


if Path(hlm.__file__).resolve().parent != (SRC / "hlm").resolve():
    _fail(HLMError(f"the hlm package imported is {Path(hlm.__file__).resolve().parent}, not this project's "
                   f"{SRC / 'hlm'}: install it with `make install` (pip install -e .) or run with PYTHONPATH=src"))

try:
    for _configfile in workflow.configfiles:  # Snakemake's YAML loader keeps the last of a repeated key
        check_config_file(os.path.relpath(_configfile))
    # A subset (--config datasets/methods, or another profile) runs only the stages it names (hlm.pipeline.config)
    # --config's nested values arrive as text: numbers and booleans where the schema wants them
    _COMMAND_LINE = typed_command_line(config, workflow.config_settings.config)
    _OFF = restrict_to_named(config, user_settings(workflow.config_settings.configfiles, _COMMAND_LINE,
                                                   Path(workflow.basedir) / "config/config.yaml"))
    validate_config(config)  # fills in the schema's defaults
    REGISTRY = load_registry(config["registry"])
    check_names(config, known_datasets=REGISTRY, known_methods=METHODS)
except HLMError as exc:
    _fail(exc)

DATASETS = list(config["datasets"])
_KEEP = [d for d in DATASETS if REGISTRY[d].missing == "keep"]
if _KEEP:
    from hlm.errors import ConfigError

    _fail(ConfigError(f"config: field 'datasets': {', '.join(_KEEP)} keep missing values (missing: keep) and have "
                      "no distance matrix; list them under twoway_gmm.datasets only"))
RUN_METHODS = list(config["methods"])
# (data set, method) pairs that run: vector methods only on kind: vectors (paper, end of section 5.3), and a
# method of method_datasets only on its data sets there
PAIRS = [(d, m) for d in DATASETS for m in RUN_METHODS if method_applies(m, REGISTRY[d].kind)
         and d in config["method_datasets"].get(m, DATASETS)]
_SKIPPED = sorted((d, m) for d in DATASETS for m in RUN_METHODS if not method_applies(m, REGISTRY[d].kind))
if _SKIPPED:
    print("hlm: skipping method(s) " + ", ".join(sorted({m for _, m in _SKIPPED}))
          + " on data set(s) " + ", ".join(sorted({d for d, _ in _SKIPPED}))
          + ": they need feature vectors (kind: vectors)", file=sys.stderr)
# Incremental learning (section 5.5): which schemes, on which data sets (none set: all of the run's).
INCREMENTAL_SCHEMES = list(config["incremental"]["schemes"])
INCREMENTAL_DATASETS = list(config["incremental"].get("datasets", DATASETS)) if INCREMENTAL_SCHEMES else []
# The papers' own protocols (hlm.pipeline.protocols; workflow/rules/protocols.smk) run on these data sets
# (the config section's, else the run's among that paper's); they read feature vectors.
PROTOCOLS = protocols()
KINDS = {d: REGISTRY[d].kind for d in REGISTRY}
PROTOCOL_DATASETS = {p: list(config[p].get("datasets", spec.defaults(DATASETS, KINDS)))
                     for p, spec in PROTOCOLS.items()}
for _protocol, _names in PROTOCOL_DATASETS.items():
    _WRONG_KIND = [d for d in _names if KINDS[d] not in PROTOCOLS[_protocol].kinds]
    if _WRONG_KIND:
        from hlm.errors import ConfigError

        _fail(ConfigError(f"config: field '{_protocol}.datasets': {', '.join(_WRONG_KIND)} not of kind "
                          f"{' or '.join(PROTOCOLS[_protocol].kinds)}; {PROTOCOLS[_protocol].refusal}"))
if _OFF:
    print(f"hlm: a subset runs only the stages it names: not running {', '.join(_OFF)}; name one with its data "
          "sets, e.g. --config 'hmac={datasets: [sonar]}' (README, \"A subset\")", file=sys.stderr)
# Protocol data sets run as one job per part (a section's split_jobs; ProtocolSpec.parts)
SPLIT_JOBS = {p: [d for d in config[p]["split_jobs"] if d in PROTOCOL_DATASETS[p]] if spec.has_parts else []
              for p, spec in PROTOCOLS.items()}
for _name in [p for p, spec in PROTOCOLS.items() if spec.has_parts]:  # a split_jobs data set that the section
    _IDLE = [d for d in config[_name]["split_jobs"] if d not in SPLIT_JOBS[_name]]  # does not run: said, not dropped
    if _IDLE:
        print(f"hlm: {_name}.split_jobs: {', '.join(_IDLE)} not among the data sets it runs "
              f"({', '.join(PROTOCOL_DATASETS[_name]) or 'none'}); nothing to run in parts there", file=sys.stderr)
# Data sets whose results go to MLflow, in the track rule: the run's and those HMAC clusters (its levels
# are logged with the data set's runs).
TRACKED_DATASETS = DATASETS + [d for d in PROTOCOL_DATASETS["hmac"] if d not in DATASETS]
_NO_VECTORS = sorted({s for s in INCREMENTAL_SCHEMES for d in INCREMENTAL_DATASETS
                      if not scheme_applies(s, REGISTRY[d].kind)})
if _NO_VECTORS:
    print("hlm: skipping incremental scheme(s) " + ", ".join(_NO_VECTORS) + " on the data sets not of kind "
          "vectors: they need feature vectors", file=sys.stderr)
# Mixture HLM methods that ran: they get the CV-error-against-M figure.
MIXTURE_METHODS = [m for m in RUN_METHODS if METHODS[m].estimator == "hlm.local_mapping:MixtureHLM"]


def mixture_methods(dataset):
    """The Mixture HLM methods run on ``dataset`` (method_datasets may leave some out)."""
    return [m for m in MIXTURE_METHODS if (dataset, m) in PAIRS]


EXPERIMENT = config["mlflow"]["experiment"]

# MLflow: an embedded SQLite store in the working directory unless the user
# points MLFLOW_TRACKING_URI elsewhere. Jobs inherit these variables.
os.environ.setdefault("MLFLOW_TRACKING_URI", f"sqlite:///{Path('mlflow.db').resolve()}")
os.environ.setdefault("HLM_MLFLOW_ARTIFACTS", str(Path("mlruns").resolve()))
os.environ.update(MLFLOW_DISABLE_TELEMETRY="true")
# One BLAS thread per process: a job's parallelism is its CV worker processes
# (Snakemake `threads`), and multithreaded BLAS on small matrices only oversubscribes the cores.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
# Provenance tags for every MLflow run, passed as environment variables:
# unlike params they are not rerun triggers, so a new commit reruns nothing.
os.environ.update(HLM_CONFIG_HASH=config_hash(config), HLM_GIT_COMMIT=git_commit(workflow.basedir))


def print_forecast():
    """Before the first job: how many jobs will run and their expected CPU time (hlm.pipeline.forecast)."""
    from hlm.pipeline.forecast import forecast, read_costs

    jobs = [(job.rule.name, getattr(job.wildcards, "dataset", "")) for job in workflow.dag.needrun_jobs()
            if not job.rule.norun]
    # a part of a method's or a protocol's job counts as its share of the whole job where it has no figure
    whole = {f"{m}_part": m for m in METHODS} | {f"{spec.rule}_part": spec.rule for spec in PROTOCOLS.values()}
    protocols = {spec.rule: spec for spec in PROTOCOLS.values()}

    def n_parts(rule, d):
        spec = protocols.get(rule)
        return len(spec.part_names(n_splits_of(d))) if spec else EVALUATION_JOBS.get(d, 1)

    shares = {(rule, d): (whole[rule], 1 / n_parts(whole[rule], d)) for rule, d in jobs if rule in whole}
    try:
        cores = workflow.cores
    except Exception:  # a cluster run (--jobs N) sets no core count
        cores = None
    try:
        costs = read_costs(Path(workflow.basedir) / "workflow/costs.tsv")
    except (OSError, KeyError, ValueError) as exc:  # a damaged table: the run goes on without its forecast
        print(f"hlm: no forecast: workflow/costs.tsv: {exc}", file=sys.stderr)
        return
    print(forecast(jobs, costs, shares).line(cores), file=sys.stderr)


#: when this run started (the SLURM logs of its own failed jobs: Snakefile, onerror)
RUN_STARTED = time.time()
#: what each job asks of a cluster (hlm.pipeline.resources: memory and run time from workflow/costs.tsv)
CLUSTER_REQUESTS = Requests.from_costs(Path(workflow.basedir) / "workflow/costs.tsv")


def cluster_resources(name, like=None):
    """The ``mem_mb`` and ``runtime`` of the rule called ``name``, its jobs' measured figures with a margin, scaled by
    the attempt (hlm.pipeline.resources). Locally nothing limits them; a cluster's executor passes them on."""
    def dataset(wildcards):
        return getattr(wildcards, "dataset", "")

    return dict(
        mem_mb=lambda wildcards, attempt: CLUSTER_REQUESTS.mem_mb(name, dataset(wildcards), attempt, like),
        runtime=lambda wildcards, threads, attempt: CLUSTER_REQUESTS.runtime(
            name, dataset(wildcards), threads, attempt, like),
    )


def init_tracking_store():
    """Create the MLflow store and experiment once, before any job runs."""
    from hlm.pipeline.tracking import init_store

    init_store(EXPERIMENT)


def src(*relative):
    """Library source files, declared as rule inputs so that editing one reruns the rule.

    Relative to the working directory, so a moved project does not rerun everything.
    """
    return [os.path.relpath(SRC / "hlm" / r) for r in relative]


# Free-text registry fields: editing them must not rerun anything. `split` reaches the splits rule alone (its
# `given` param): editing it must not recompute the objects or the distances.
_DESCRIPTIVE = ("name", "description", "provenance", "licence", "split")
#: the run's data sets under their archive's own train/test split (registry `split: given`)
GIVEN_SPLIT = [d for d in DATASETS if REGISTRY[d].split == "given"]


def dataset_entry(wildcards):
    entry = asdict(REGISTRY[wildcards.dataset])
    return {k: v for k, v in entry.items() if v not in (None, "") and k not in _DESCRIPTIVE}


def dataset_raw_files(wildcards):
    """The entry's raw file(s); a folder (format folder) as its files, so that editing one reruns the job."""
    from hlm.datasets._textfiles import visible_files

    spec = REGISTRY[wildcards.dataset]
    files = []
    for p in (spec.path, spec.labels_path, spec.test_path):
        if p and Path(p).is_dir():
            files += [str(f) for f in visible_files(p)] or [p]  # an empty folder: the job says so
        elif p:
            files.append(p)
    return files


# What each data stage's function (hlm.pipeline.stages.data) runs, with the job scripts' hlm.pipeline.jobs
# and the stage module's own imports (the artifacts): its rule's code inputs are the files these import, the
# stage's module, and the data set's distance (hlm.distances, looked up by name). The table of distances counts
# only where the data set has a distance of it: a matrix read from a file computes none.
DATA_STAGES = {
    "preprocess": ("hlm.datasets._prepare", "hlm.datasets._registry"),
    "objects": ("hlm.datasets._objects", "hlm.datasets._registry"),
    "distance_block": ("hlm.distances._blocks", "hlm.datasets._objects"),
    "distances_from_blocks": ("hlm.distances._blocks", "hlm.datasets._objects", "hlm.datasets._registry"),
    "splits": ("hlm.pipeline.evaluation.splits",),
}
_DATA_JOB = ("hlm.pipeline.jobs", "hlm.datasets._artifacts")


def distance_sources(name):
    """The source files of the distance called ``name`` (hlm.distances._registry): the table and the modules
    of its functions, which the table names as strings."""
    from hlm.distances._registry import get_distance

    distance = get_distance(name)
    return module_sources("hlm.distances._registry", *(f.split(":")[0] for f in (distance.function,
                                                                                  distance.matrix) if f))


def data_sources(stage):
    """The code inputs of a data stage's jobs, with their data set's distance (an input function)."""
    def sources(wildcards):
        distance = REGISTRY[wildcards.dataset].distance if stage != "splits" else None
        files = set(module_sources(*_DATA_JOB, *DATA_STAGES[stage])) - {"distances/_registry.py"}
        return src(*sorted({*files, "pipeline/stages/data.py", *(distance_sources(distance) if distance else ())}))

    return sources


#: the report rules' code: what their stage (hlm.pipeline.stages.report) imports, and the papers' numbers
REPORT_SOURCES = [*module_sources("hlm.pipeline.jobs", "hlm.pipeline.stages.report"),
                  "pipeline/reporting/papers/hlm.yaml", "pipeline/reporting/papers/local_sda.yaml"]


# Data sets of raw objects (kind series / sequences): their distances come from row blocks.
OBJECT_KINDS = ("series", "sequences")
OBJECT_DATASETS = [d for d in REGISTRY if REGISTRY[d].kind in OBJECT_KINDS]
MATRIX_DATASETS = [d for d in REGISTRY if d not in OBJECT_DATASETS]


def names_regex(names):
    """A wildcard constraint matching exactly these names (nothing if there are none)."""
    return "|".join(sorted(names)) if names else "(?!x)x"


def block_size(dataset):
    return REGISTRY[dataset].block_size or config["distance_block_size"]


def distance_options(dataset):
    spec = REGISTRY[dataset]
    return spec.distance_options


def distance_blocks(wildcards):
    """The block files of one data set: N is known once the objects checkpoint has run."""
    import pandas as pd

    objects = checkpoints.objects.get(dataset=wildcards.dataset).output[0]
    n = len(pd.read_parquet(objects, columns=["id"]))
    from hlm.distances._blocks import block_ranges

    return [f"results/blocks/{wildcards.dataset}/rows-{i0}-{i1}.parquet"
            for i0, i1 in block_ranges(n, block_size(wildcards.dataset))]


def evaluation_files(methods=None):
    methods = methods or RUN_METHODS
    return [f"results/evaluation/{d}/{m}.parquet" for d, m in PAIRS if m in methods]


def dataset_schemes(dataset):
    """The run's incremental schemes that apply to ``dataset`` (okde/odkde only to kind: vectors)."""
    return [s for s in INCREMENTAL_SCHEMES if scheme_applies(s, REGISTRY[dataset].kind)]


def incremental_files():
    return [f"results/incremental/{d}/{s}.parquet" for d in INCREMENTAL_DATASETS for s in dataset_schemes(d)]


def dataset_methods(dataset):
    """The run's methods that apply to ``dataset`` (vector SVMs only to kind: vectors)."""
    return [m for d, m in PAIRS if d == dataset]


def probability_methods(dataset):
    """The run's methods on ``dataset`` that give class probabilities (its reliability diagram)."""
    return [m for m in dataset_methods(dataset) if METHODS[m].gives_probabilities]


def dataset_hmac_files(dataset):
    return [f"results/hmac/{dataset}.parquet"] if dataset in PROTOCOL_DATASETS["hmac"] else []


def protocol_outputs(protocol):
    """A protocol job's outputs: its runs, and its figure where it draws one."""
    outputs = {"runs": f"results/{protocol.id}/{{dataset}}.parquet"}
    if protocol.figure:
        outputs["figure"] = report(f"results/figures/{protocol.id}_{{dataset}}.png",
                                   caption=f"../../src/hlm/pipeline/protocols/{protocol.id}/figure.rst",
                                   category=protocol.label)
    return outputs


def protocol_settings(protocol):
    """What a protocol's job reads of the config, a function of the wildcards: the top-level settings it names
    (n_splits: the data set's, n_splits_of) and its section (but the data sets, and which of them run in parts)."""
    section = {k: v for k, v in config[protocol.id].items() if k not in ("datasets", "split_jobs")}

    def settings(wildcards):
        top = {k: n_splits_of(wildcards.dataset) if k == "n_splits" else config[k] for k in protocol.settings}
        return {**top, **section}

    return settings


def protocol_part_files(protocol):
    """The parts' files that a protocol's gather job reads, a function of the wildcards (a data set's parts are
    its splits where the protocol runs in one part per split)."""
    def files(wildcards):
        return [f"results/{protocol.id}/{wildcards.dataset}/{part}.parquet"
                for part in protocol.part_names(n_splits_of(wildcards.dataset))]

    return files


def whole_job_datasets(protocol):
    """The data set wildcard of a protocol's one-job rule: any name but those its section runs in parts (in its
    outputs a "." follows the name: results/<id>/{dataset}.parquet, results/figures/<id>_{dataset}.png)."""
    split = SPLIT_JOBS[protocol.id]
    return f"(?!(?:{'|'.join(sorted(split))})\\.){DATASET_NAME}" if split else DATASET_NAME


def protocol_threads(protocol):
    """Threads of a protocol's jobs ("dask": a local cluster of threads_per_job workers when the section asks
    for a parallel approach without a running scheduler's address)."""
    section = config[protocol.id]
    if protocol.threads == "job" or (protocol.threads == "dask" and section.get("parallel")
                                     and not section.get("scheduler")):
        return config["threads_per_job"]
    return 1


def dataset_incremental_files(dataset):
    return [f"results/incremental/{dataset}/{s}.parquet" for s in dataset_schemes(dataset)] \
        if dataset in INCREMENTAL_DATASETS else []


def incremental_params(scheme):
    """The learner hyper-parameters the config sets for one scheme (n_init for all; v, step and estimate
    for Scheme II; step for retrain); the others keep the learner's defaults (hlm.local_mapping.incremental)."""
    return learner_params(config, scheme)


def method_inputs(method):
    """A method job's inputs, in both of its rules (one job, <method>_part). The data set's artifacts, its code,
    the CV errors it may reuse."""
    return {"distances": "results/distances/{dataset}.parquet", "matrices": "results/distances/{dataset}.npy",
            "splits": "results/splits/{dataset}.parquet", "code": src(*method_sources(METHODS[method])),
            **cv_from_input(method)}


def method_rule_params(method):
    """A method job's params: what it reads of the config."""
    return {"method": method, "seed": config["seed"], "cv_folds": config["cv_folds"],
            "method_params": config["method_params"].get(method, {})}


def protocol_inputs(protocol):
    """A protocol job's inputs, in both of its rules (one job, its parts). The raw files and its code."""
    return {"raw": dataset_raw_files, "code": src(*protocol_sources(protocol, METHODS))}


def protocol_params(protocol):
    """A protocol job's params: its id, the data set's registry entry, the settings it reads."""
    return {"protocol": protocol.id, "entry": dataset_entry, "settings": protocol_settings(protocol)}


def cv_from_input(method):
    """{"cv_from": evaluation of the method whose CV errors ``method`` reuses}, where it runs on the data set too."""
    source = METHODS[method].cv_from
    if source in config["methods"]:
        return {"cv_from": lambda wc: [f"results/evaluation/{wc.dataset}/{source}.parquet"]
                if (wc.dataset, source) in PAIRS else []}
    return {}


def n_splits_of(dataset):
    """The splits of a data set: one under its archive's own split, else n_splits or its dataset_splits if fewer."""
    from hlm.pipeline.config import dataset_n_splits

    return 1 if dataset in GIVEN_SPLIT else dataset_n_splits(config, dataset)


#: data sets whose method jobs run as several jobs of consecutive splits (evaluation_jobs), and their number (at
#: most one per split)
EVALUATION_JOBS = {d: min(n, n_splits_of(d)) for d, n in config["evaluation_jobs"].items()
                   if d in DATASETS and min(n, n_splits_of(d)) > 1}
#: the data set wildcard of a method's one-job rule: any name but those (a "/" follows it in its outputs)
WHOLE_EVALUATION = (f"(?!(?:{'|'.join(sorted(EVALUATION_JOBS))})/){DATASET_NAME}" if EVALUATION_JOBS
                    else DATASET_NAME)


def part_split_ids(wildcards):
    """The splits of a <method>_part job (hlm.pipeline.stages.evaluate.part_splits)."""
    from hlm.pipeline.stages.evaluate import part_splits

    return part_splits(n_splits_of(wildcards.dataset), EVALUATION_JOBS[wildcards.dataset], int(wildcards.part))


def evaluation_parts(wildcards, kind):
    """The parts of one method's evaluation ("evaluation") or predictions of a data set of evaluation_jobs."""
    return [f"results/{kind}/{wildcards.dataset}/{wildcards.method}/part-{k}.parquet"
            for k in range(EVALUATION_JOBS[wildcards.dataset])]


# Scheduling: among ready jobs Snakemake starts the highest priority first. The
# data stages unblock everything; the costliest methods start before the cheap
# ones, so that the run does not end on one long job while the other cores idle
# (longest first). HLM(vsh) goes first of all: HLM(kernel-vsh) waits for it.
DATA_PRIORITY = 100
COSTLY_METHODS = {"hlm_vsh": 20, "svm_knn": 10, "kri_knn": 10, "psvm": 10, "svm_features_rbf": 5, "krr_knn": 5,
                  "hlm_gknn": 5, "hlm_agg": 5, "svm_knn_features": 10, "svm_knn_flip": 10, "svm_knn_shift": 5,
                  "local_sda_regularized": 10, "local_sda_regularized_joint": 10}


def method_priority(method):
    return COSTLY_METHODS.get(method, 0)


def method_threads(method):
    """Threads (CV worker processes) of a method's jobs; Snakemake caps them at --cores."""
    return config["threads_per_job"] if METHODS[method].parallel_cv else 1


#: kinds whose raw objects the pipeline reads (results/objects/{dataset}.parquet)
RAW_KINDS = ("series", "sequences")


def model_outputs(wildcards):
    """The model folders and their MLflow records: per data set, the methods its choose_models checkpoint
    keeps (the winner of its evaluations, and the config's models)."""
    import json

    out = []
    for dataset in DATASETS:
        chosen = json.loads(Path(checkpoints.choose_models.get(dataset=dataset).output[0]).read_text())
        out += [f"results/models/{dataset}/{m}.mlflow.json" for m in chosen["methods"]]
    return out


def final_outputs():
    return [
        *evaluation_files(),
        *expand("results/tracking/{dataset}.json", dataset=TRACKED_DATASETS),
        *expand("results/models/{dataset}/chosen.json", dataset=DATASETS),  # then model_outputs
        "results/tables/error_rates.csv",
        "results/tables/error_rates.md",
        "results/tables/error_rates_paper.md",
        "results/tables/run_time.csv",
        "results/figures/error_rates.png",
        *(f"results/figures/cv_components_{d}.png" for d in DATASETS if mixture_methods(d)),
        *(f"results/tables/{t}.{ext}" for t in ("log_loss", "brier") for ext in ("csv", "md")),
        *(f"results/figures/reliability_{d}.png" for d in DATASETS if probability_methods(d)),
        *(["results/tables/incremental_time.csv", "results/tables/incremental_time.md",
           "results/tables/incremental_claims.md",
           *expand("results/figures/incremental_{dataset}.png", dataset=INCREMENTAL_DATASETS)]
          if INCREMENTAL_DATASETS else []),
        *(f"results/tables/{p}.{ext}" for p, names in PROTOCOL_DATASETS.items() if names for ext in ("csv", "md")),
        *(f"results/figures/{p}_{d}.png" for p, names in PROTOCOL_DATASETS.items() if PROTOCOLS[p].figure
          for d in names),
    ]


wildcard_constraints:
    dataset=DATASET_NAME,
