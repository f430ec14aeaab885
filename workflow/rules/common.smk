# Shared set-up: config validation, the data set registry, the method table,
# MLflow settings (environment variables only) and input functions.

import os
import sys
from dataclasses import asdict
from pathlib import Path

SRC = Path(workflow.basedir) / "src"
sys.path.insert(0, str(SRC))

from hlm.config import check_config_file, load_schema, validate_config
from hlm.errors import HLMError, print_error
from hlm.data.registry import load_registry
from hlm.methods import METHODS, method_applies, method_sources
from hlm.provenance import config_hash, git_commit


def _fail(error):
    # One line, no traceback, exit status 2 (as hlm check, and hlm.jobs inside jobs).
    sys.exit(print_error(error))


try:
    for _configfile in workflow.configfiles:  # Snakemake's YAML loader keeps the last of a repeated key
        check_config_file(os.path.relpath(_configfile))
    REGISTRY = load_registry(config.get("registry", "config/datasets.yaml"))
    validate_config(
        config,
        load_schema(Path(workflow.basedir) / "workflow/schemas/config.schema.yaml"),
        known_datasets=REGISTRY,
        known_methods=METHODS,
    )
except HLMError as exc:
    _fail(exc)

DATASETS = list(config["datasets"])
RUN_METHODS = list(config["methods"])
# (data set, method) pairs that run: vector methods only on kind: vectors (paper, end of section 5.3)
PAIRS = [(d, m) for d in DATASETS for m in RUN_METHODS if method_applies(m, REGISTRY[d].kind)]
_SKIPPED = sorted({(d, m) for d in DATASETS for m in RUN_METHODS} - set(PAIRS))
if _SKIPPED:
    print("hlm: skipping method(s) " + ", ".join(sorted({m for _, m in _SKIPPED}))
          + " on data set(s) " + ", ".join(sorted({d for d, _ in _SKIPPED}))
          + ": they need feature vectors (kind: vectors)", file=sys.stderr)
# Incremental learning (section 5.5): which schemes, on which data sets (default: all of the run's).
_INCREMENTAL = config.get("incremental", {})
INCREMENTAL_SCHEMES = list(_INCREMENTAL.get("schemes", []))
INCREMENTAL_DATASETS = [d for d in _INCREMENTAL.get("datasets", DATASETS)] if INCREMENTAL_SCHEMES else []
# Mixture HLM methods that ran: they get the CV-error-against-M figure.
MIXTURE_METHODS = [m for m in RUN_METHODS if "n_components" in METHODS[m].default_grid]
EXPERIMENT = config.get("mlflow", {}).get("experiment", "hlm")

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


def init_tracking_store():
    """Create the MLflow store and experiment once, before any job runs."""
    from hlm.tracking import init_store

    init_store(EXPERIMENT)


def src(*relative):
    """Library source files, declared as rule inputs so that editing one reruns the rule.

    Relative to the working directory, so a moved project does not rerun everything.
    """
    return [os.path.relpath(SRC / "hlm" / r) for r in relative]


# Free-text registry fields: editing them must not rerun anything.
_DESCRIPTIVE = ("name", "description", "provenance", "licence")


def dataset_entry(wildcards):
    entry = asdict(REGISTRY[wildcards.dataset])
    return {k: v for k, v in entry.items() if v not in (None, "") and k not in _DESCRIPTIVE}


def dataset_raw_files(wildcards):
    """The entry's raw file(s); a folder (format folder) as its files, so that editing one reruns the job."""
    from hlm.objects._files import visible_files

    spec = REGISTRY[wildcards.dataset]
    files = []
    for p in (spec.path, spec.labels_path):
        if p and Path(p).is_dir():
            files += [str(f) for f in visible_files(p)] or [p]  # an empty folder: the job says so
        elif p:
            files.append(p)
    return files


# Data sets of raw objects (kind series / sequences): their distances come from row blocks.
OBJECT_KINDS = ("series", "sequences")
OBJECT_DATASETS = [d for d in REGISTRY if REGISTRY[d].kind in OBJECT_KINDS]
MATRIX_DATASETS = [d for d in REGISTRY if d not in OBJECT_DATASETS]


def names_regex(names):
    """A wildcard constraint matching exactly these names (nothing if there are none)."""
    return "|".join(sorted(names)) if names else "(?!x)x"


def block_size(dataset):
    return REGISTRY[dataset].block_size or config.get("distance_block_size", 500)


def distance_options(dataset):
    spec = REGISTRY[dataset]
    return {"window": spec.window} if spec.window is not None else {}


def distance_blocks(wildcards):
    """The block files of one data set: N is known once the objects checkpoint has run."""
    import pandas as pd

    objects = checkpoints.objects.get(dataset=wildcards.dataset).output[0]
    n = len(pd.read_parquet(objects, columns=["id"]))
    from hlm.objects.blocks import block_ranges

    return [f"results/blocks/{wildcards.dataset}/rows-{i0}-{i1}.parquet"
            for i0, i1 in block_ranges(n, block_size(wildcards.dataset))]


def evaluation_files(methods=None):
    methods = methods or RUN_METHODS
    return [f"results/evaluation/{d}/{m}.parquet" for d, m in PAIRS if m in methods]


def incremental_files():
    return [f"results/incremental/{d}/{s}.parquet" for d in INCREMENTAL_DATASETS for s in INCREMENTAL_SCHEMES]


def dataset_methods(dataset):
    """The run's methods that apply to ``dataset`` (vector SVMs only to kind: vectors)."""
    return [m for d, m in PAIRS if d == dataset]


def dataset_incremental_files(dataset):
    return [f"results/incremental/{dataset}/{s}.parquet" for s in INCREMENTAL_SCHEMES] \
        if dataset in INCREMENTAL_DATASETS else []


def incremental_params(scheme):
    """Learner settings of one scheme: n_init for all; v, step and estimate for Scheme II; step for retrain."""
    params = {"n_init": _INCREMENTAL.get("n_init", 20)}
    if scheme in ("scheme_ii", "retrain"):
        params["step"] = _INCREMENTAL.get("step", 2)
    if scheme == "scheme_ii":
        params.update(v=_INCREMENTAL.get("v", 4), estimate=_INCREMENTAL.get("estimate", "eq3"))
    return params


def cv_from_input(method):
    """{"cv_from": evaluation of the method whose CV errors ``method`` reuses}, if it runs too."""
    source = METHODS[method].cv_from
    if source in config["methods"]:
        return {"cv_from": f"results/evaluation/{{dataset}}/{source}.parquet"}
    return {}


# Scheduling: among ready jobs Snakemake starts the highest priority first. The
# data stages unblock everything; the costliest methods start before the cheap
# ones, so that the run does not end on one long job while the other cores idle
# (longest first). HLM(vsh) goes first of all: HLM(kernel-vsh) waits for it.
DATA_PRIORITY = 100
COSTLY_METHODS = {"hlm_vsh": 20, "svm_knn": 10, "kri_knn": 10, "psvm": 10, "svm_features_rbf": 5, "krr_knn": 5,
                  "hlm_gknn": 5, "hlm_agg": 5}


def method_priority(method):
    return COSTLY_METHODS.get(method, 0)


def method_threads(method):
    """Threads (CV worker processes) of a method's jobs; Snakemake caps them at --cores."""
    return config.get("threads_per_job", 1) if METHODS[method].parallel_cv else 1


def final_outputs():
    return [
        *evaluation_files(),
        *expand("results/tracking/{dataset}.json", dataset=DATASETS),
        "results/tables/error_rates.csv",
        "results/tables/error_rates.md",
        "results/tables/error_rates_paper.md",
        "results/tables/run_time.csv",
        "results/figures/error_rates.png",
        *(expand("results/figures/cv_components_{dataset}.png", dataset=DATASETS) if MIXTURE_METHODS else []),
        *(["results/tables/incremental_time.csv", "results/tables/incremental_time.md",
           *expand("results/figures/incremental_{dataset}.png", dataset=INCREMENTAL_DATASETS)]
          if INCREMENTAL_DATASETS else []),
    ]


wildcard_constraints:
    dataset="[A-Za-z][A-Za-z0-9_-]*",
