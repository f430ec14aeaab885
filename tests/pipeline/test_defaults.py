"""One source of truth for every default: each is written once, and the default run does not change.

Where defaults live:
  - pipeline settings: the config schema (src/hlm/pipeline/config.schema.yaml), filled in
    by hlm.pipeline.config.validate_config; the code reads only the validated config;
  - a method's CV grid and fixed hyper-parameters: its registration in hlm.pipeline.methods
    (``method_params`` in a config only overrides them);
  - the incremental learners' hyper-parameters: the learners' ``__init__`` (hlm.local_mapping.incremental).
"""

import ast
import inspect
import re
from pathlib import Path

import pytest
import yaml
from sklearn.model_selection import ParameterGrid

from hlm.pipeline.config import config_schema, load_config
from hlm.pipeline.incremental import LEARNER_SETTINGS, VECTOR_SCHEMES, learner_params
from hlm.pipeline.incremental.run import SCHEMES, learner_settings
from hlm.pipeline.methods import METHODS

ROOT = Path(__file__).resolve().parents[2]
CONFIG_FILES = [ROOT / "config/config.yaml", ROOT / "config/paper.yaml"]
#: the code the pipeline runs: where a fallback for a setting would hide a second default
SOURCES = sorted([*(ROOT / "src").rglob("*.py"), *(ROOT / "workflow").rglob("*.py"),
                  *(ROOT / "workflow").rglob("*.smk"), ROOT / "Snakefile"])

_MISSING = object()


def _schema_defaults(schema: dict, path: tuple = ()) -> dict[tuple, object]:
    """(path of keys) -> default, for every property of the schema that has one, nested ones too."""
    found = {}
    for name, sub in schema.get("properties", {}).items():
        if "default" in sub:
            found[(*path, name)] = sub["default"]
        found.update(_schema_defaults(sub, (*path, name)))
    return found


SCHEMA_DEFAULTS = _schema_defaults(config_schema())
#: names of the settings that have a default in the schema, and of the learners' settings
DEFAULTED_KEYS = sorted({p[-1] for p in SCHEMA_DEFAULTS} | {k for keys in LEARNER_SETTINGS.values() for k in keys})


def _leaves(data, path=()):
    yield path, data
    if isinstance(data, dict):
        for key, value in data.items():
            yield from _leaves(value, (*path, key))


def _source(path: Path) -> str:
    return path.read_text(encoding="utf-8")


# (1) --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("config_file", CONFIG_FILES, ids=lambda p: p.name)
def test_config_files_do_not_restate_schema_defaults(config_file):
    from hlm.pipeline.config import stage_sections

    data = yaml.safe_load(_source(config_file)) or {}
    # a profile merged over config/config.yaml may restate a default to undo the default profile's value there
    default = {} if config_file == CONFIG_FILES[0] else dict(_leaves(yaml.safe_load(_source(CONFIG_FILES[0]))))
    # an empty stage section names the stage: a profile that sets its data sets runs only the stages it names
    restated = [".".join(path) for path, value in _leaves(data)
                if path and SCHEMA_DEFAULTS.get(path, _MISSING) == value and default.get(path, value) == value
                and not (len(path) == 1 and path[0] in stage_sections() and value == {})]
    assert not restated, (f"{config_file.name} sets {restated} to the schema's default: remove them "
                          "(the schema fills them in)")


# (2) --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("config_file", CONFIG_FILES, ids=lambda p: p.name)
def test_method_params_do_not_restate_a_methods_defaults(config_file):
    data = yaml.safe_load(_source(config_file)) or {}
    restated = []
    for method, params in (data.get("method_params") or {}).items():
        spec = METHODS[method]
        if "grid" in params and spec.grid(params["grid"]) == spec.grid(None):
            restated.append(f"method_params.{method}.grid")
        own = spec.make().get_params(deep=False)  # the method's fixed values and the estimator's defaults
        restated += [f"method_params.{method}.fixed.{k}" for k, v in (params.get("fixed") or {}).items()
                     if own.get(k, _MISSING) == v]
    assert not restated, f"{config_file.name} restates the defaults of hlm.pipeline.methods: {restated}"


# (3) --------------------------------------------------------------------------------------------
def _fallbacks(text: str) -> list[str]:
    keys = "|".join(map(re.escape, DEFAULTED_KEYS))
    patterns = [
        rf"""\.get\(\s*(["'])({keys})\1\s*,""",  # config.get("key", fallback)
        rf"""\.get\(\s*(["'])({keys})\1\s*\)\s*or\b""",  # config.get("key") or fallback
        rf"""\[\s*(["'])({keys})\1\s*\]\s*or\b""",  # config["key"] or fallback
    ]
    for value in {v for v in SCHEMA_DEFAULTS.values() if isinstance(v, (int, float, str)) and v is not True}:
        if isinstance(value, str):
            literal = rf"""(["']){re.escape(value)}\1"""
        else:
            literal = rf"{re.escape(repr(value))}(?![\w.])"
        patterns.append(rf"\bor\s+{literal}")  # something or <a default>, e.g. spec.block_size or 500
        if isinstance(value, str):
            patterns.append(rf"\bdefault\s*=\s*{literal}")  # argparse: default="config/datasets.yaml"
    return [m.group(0) for p in patterns for m in re.finditer(p, text)]


def test_no_literal_fallback_for_a_setting_in_the_code():
    found = {str(path.relative_to(ROOT)): hits for path in SOURCES if (hits := _fallbacks(_source(path)))}
    assert not found, f"fallbacks restating a default (read the validated config instead): {found}"


def test_the_fallback_scan_finds_what_it_looks_for():
    assert _fallbacks('config.get("distance_block_size", 500)') and _fallbacks("x = spec.block_size or 500")
    assert _fallbacks('_INCREMENTAL.get("n_init", 20)') and _fallbacks('config.get("mlflow", {})')
    assert _fallbacks('add_argument("--registry", default="config/datasets.yaml")')
    assert _fallbacks('config["seed"] or 1')
    assert not _fallbacks('config["distance_block_size"]') and not _fallbacks('meta.get("seed")')


#: parameter name in the library -> the setting whose default it would restate
_PARAMETERS = {"n_splits": "n_splits", "test_fraction": "test_fraction", "n_folds": "cv_folds",
               "cv_folds": "cv_folds", "seed": "seed", "threads_per_job": "threads_per_job",
               "block_size": "distance_block_size", "distance_block_size": "distance_block_size",
               "registry": "registry", "experiment": "experiment", "dtype": "distance_dtype"}
#: known, left alone: the MLflow helpers' own default experiment, and the artifact writer's float64, for library
#: callers and their tests (the pipeline's stages pass the setting)
_KNOWN = {("src/hlm/pipeline/tracking.py", "experiment"), ("src/hlm/datasets/_artifacts.py", "dtype")}


def test_no_function_default_restates_a_setting():
    defaults = {path[-1]: value for path, value in SCHEMA_DEFAULTS.items()}
    found = []
    for path in (ROOT / "src").rglob("*.py"):
        where = str(path.relative_to(ROOT))
        for node in ast.walk(ast.parse(_source(path))):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            args = node.args
            pairs = [*zip(args.args[len(args.args) - len(args.defaults):], args.defaults),
                     *((a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None)]
            for arg, default in pairs:
                setting = _PARAMETERS.get(arg.arg)
                if (setting and isinstance(default, ast.Constant) and default.value == defaults[setting]
                        and (where, arg.arg) not in _KNOWN):
                    found.append(f"{where}: {node.name}({arg.arg}={default.value!r})")
    assert not found, f"function defaults restating a setting's default: {found}"


# (4) --------------------------------------------------------------------------------------------
def _init_parameters(cls) -> set[str]:
    names = set()
    for klass in cls.__mro__:
        if "__init__" in vars(klass):
            names |= {p.name for p in inspect.signature(klass.__init__).parameters.values()
                      if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL) and p.name != "self"}
    return names


def test_the_schema_leaves_the_learners_defaults_to_the_learners():
    section = config_schema()["properties"]["incremental"]["properties"]
    learners = set().union(*(_init_parameters(cls) for cls in SCHEMES.values()))
    restated = sorted(k for k, sub in section.items() if "default" in sub and k in learners)
    assert not restated, f"the schema gives defaults to learner hyper-parameters: {restated}"
    for scheme, keys in LEARNER_SETTINGS.items():
        if scheme in VECTOR_SCHEMES:  # the online KDE learners take no settings from the config
            assert keys == ()
            continue
        assert set(keys) <= _init_parameters(SCHEMES[scheme]) and set(keys) <= set(section)


# (5) --------------------------------------------------------------------------------------------
#: what the default run used before the defaults were moved (config/config.yaml then)
EXPECTED_SETTINGS = {"registry": "config/datasets.yaml", "n_splits": 20, "test_fraction": 0.2, "cv_folds": 10,
                     "seed": 20121, "threads_per_job": 1, "distance_block_size": 500,
                     "mlflow": {"experiment": "hlm"}}
EXPECTED_SCHEMES = ["scheme_i", "scheme_ii", "retrain", "okde", "odkde"]
EXPECTED_LEARNERS = {"scheme_i": {"n_init": 20},
                     "scheme_ii": {"n_init": 20, "step": 2, "v": 4, "estimate": "eq3"},
                     "retrain": {"n_init": 20, "step": 2}}
_K = [1, 2, 4, 8, 16, 32, 64, 128]
_M = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 14, 16]
_C = [1.0e-3, 1.0e-2, 0.1, 1.0, 10.0, 100.0, 1.0e+3, 1.0e+4, 1.0e+5]
_RIDGE = [10.0, 1.0, 0.1, 0.01, 0.001]
EXPECTED_GRIDS = {
    "knn": {"n_neighbors": _K},
    "kernel_hlm": {},
    "hlm_vsh": {"n_components": _M},
    "hlm_gknn": {"n_components": _M},
    "hlm_agg": {"n_components": _M},
    "hlm_kernel_vsh": {"n_components": [*_M, "kernel"]},
    "affinity_knn": {"n_neighbors": _K},
    "kri_knn": {"n_neighbors": _K, "ridge": _RIDGE},
    "krr_knn": {"n_neighbors": _K, "ridge": _RIDGE},
    "local_sda": {"n_neighbors": _K},
    "local_sda_bayes": {"n_neighbors": _K[1:]},
    "local_sda_pairwise_bayes": {"n_neighbors": _K[1:]},
    "local_sda_pairwise": {"n_neighbors": _K[1:]},
    "local_sda_regularized": {"n_neighbors": _K[1:], "zeta": [1.0e-6, 1.0e-3, 0.01, 0.1, 0.5, 0.9]},
    "local_sda_regularized_joint": {"n_neighbors": _K[1:], "zeta": [1.0e-6, 1.0e-3, 0.01, 0.1, 0.5, 0.9]},
    "svm_kernel_clip": {"C": _C},
    "svm_features_linear": {"C": _C},
    "svm_features_rbf": {"C": _C, "gamma": [1.0e-5, 1.0e-4, 1.0e-3, 1.0e-2, 0.1, 1.0, 10.0, 100.0]},
    "svm_knn": {"n_neighbors": _K, "C": _C},
    "svm_knn_flip": {"n_neighbors": _K[1:], "C": _C},
    "svm_knn_shift": {"n_neighbors": _K[1:], "C": _C},
    "svm_knn_features": {"n_neighbors": _K[1:], "C": _C},
    "psvm": {"C": _C, "epsilon": [1.0, 0.1, 0.01, 0.001]},
    "svm_vector_linear": {"C": _C},
    "svm_vector_rbf": {"C": _C, "gamma": [1.0e-4, 1.0e-3, 1.0e-2, 0.1, 1.0]},
    "okde": {},
    "odkde": {},
    "kde_cv": {},
    "llc_pc_mpe": {"n_subclasses": list(range(1, 41))},
    "llc_pc_kmeans": {"n_subclasses": list(range(1, 41))},
    "llc_pc_hc": {"n_subclasses": list(range(1, 41))},
    "llc_pc_em": {"n_subclasses": list(range(1, 41))},
    "twoway_gmm": [{"n_components": [m], "n_clusters": [4, 8, 12, 16, 24, 36, 48, 56]} for m in [1, 2, 4, 6, 8, 10]],
    "mda": {"n_components": [1, 2, 4, 6, 8, 10]},
    "gmm_mpca": {"n_components": [1, 3, 5], "n_dims": [1, 2, 4, 8]},
    "gmm_mpca_mean": {"n_components": [1, 3, 5], "n_dims": [1, 2, 4, 8]},
    "gmm_mpca_sep": {"n_components": [1, 3, 5], "n_dims": [1, 2, 4, 8]},
    "mda_rr": {"n_components": [1, 3, 5], "rank": [1, 2, 4, 8]},
    "mda_dr_mpca": {"n_components": [1, 3, 5], "n_dims": [1, 2, 4, 8]},
    # beyond the paper: the transforms in the spec's order (the paper's first), then c by |log c|, or M
    "kernel_hlm_cv": [{"to_distance": [t], "estimator__scale_factor": [1.0, 0.5, 2.0, 0.25, 4.0, 0.125, 8.0,
                                                                        0.0625, 16.0]}
                      for t in ["bound_minus", "neg_log", "reciprocal", "sqrt", "square"]],
    "hlm_vsh_cv": [{"to_distance": [t], "estimator__n_components": [*range(1, 11), 12, 14, 16]}
                   for t in ["bound_minus", "neg_log", "reciprocal", "sqrt", "square"]],
}
EXPECTED_FIXED = {
    "kernel_hlm": {"round_shape": True},
    "hlm_vsh": {"clustering": "vsh", "n_init": 20},
    "hlm_gknn": {"clustering": "gknn"},
    "hlm_agg": {"clustering": "ward"},
    "hlm_kernel_vsh": {"clustering": "vsh", "n_init": 20},
    "svm_kernel_clip": {"spectrum": "clip"},
    "svm_features_linear": {"kernel": "linear"},
    "svm_features_rbf": {"kernel": "rbf"},
    "svm_knn_flip": {"local_kernel": "flip"},
    "svm_knn_shift": {"local_kernel": "shift"},
    "svm_knn_features": {"local_kernel": "features"},
    "svm_vector_linear": {"kernel": "linear"},
    "svm_vector_rbf": {"kernel": "rbf"},
    "llc_pc_mpe": {"subclassing": "greedy_mpe", "C": 100.0, "combination": "voting"},
    "llc_pc_kmeans": {"subclassing": "kmeans", "C": 100.0, "combination": "voting"},
    "llc_pc_hc": {"subclassing": "hc", "linkage": "average", "C": 100.0, "combination": "voting"},
    "llc_pc_em": {"subclassing": "em", "C": 100.0, "combination": "voting"},
    "twoway_gmm": {"covariance": "diag", "clustering": "class", "init": "random"},
    "mda": {"n_clusters": None, "covariance": "diag"},
    "gmm_mpca": {"subspace": "mpca", "covariance": "full", "gamma": 60, "n_bandwidths": 20},
    "gmm_mpca_mean": {"subspace": "mpca_mean", "covariance": "full", "gamma": 60},
    "gmm_mpca_sep": {"subspace": "sep", "covariance": "full"},
    "mda_rr": {"covariance": "full"},
    "local_sda_regularized_joint": {"form": "joint"},
    "mda_dr_mpca": {"subspace": "mpca", "covariance": "full"},
    "kernel_hlm_cv": {"to_distance": "bound_minus"},
    "hlm_vsh_cv": {"to_distance": "bound_minus"},
}


@pytest.mark.parametrize("files", [CONFIG_FILES[:1], CONFIG_FILES], ids=["default", "paper"])
def test_the_effective_defaults_are_the_runs_of_before(files):
    config = load_config(*files)
    assert {k: config[k] for k in EXPECTED_SETTINGS} == EXPECTED_SETTINGS
    assert config["incremental"]["schemes"] == EXPECTED_SCHEMES
    # the default profile's on three of the HLM paper's data sets and Iris; the paper profile's on every data set
    # of its run
    assert config["incremental"].get("datasets") == (["aural_sonar", "protein", "voting", "iris"]
                                                     if len(files) == 1 else None)
    for scheme, expected in EXPECTED_LEARNERS.items():
        assert learner_settings(scheme, learner_params(config, scheme)) == expected
    assert set(EXPECTED_GRIDS) == set(METHODS)
    for method, spec in METHODS.items():
        params = config["method_params"].get(method, {})
        assert spec.grid(params.get("grid")) == (list(ParameterGrid(EXPECTED_GRIDS[method])) or [{}]), method
        used = spec.make(params.get("fixed")).get_params(deep=False)
        assert {k: used[k] for k in EXPECTED_FIXED.get(method, {})} == EXPECTED_FIXED.get(method, {}), method
    inner = {"kernel_hlm_cv": {"round_shape": True, "scale_factor": 1.0},
             "hlm_vsh_cv": {"clustering": "vsh", "n_init": 20}}
    for method, expected in inner.items():  # the wrapped classifier's own defaults
        used = METHODS[method].make().estimator.get_params(deep=False)
        assert {k: used[k] for k in expected} == expected, method

