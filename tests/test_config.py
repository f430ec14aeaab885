"""Pipeline config validation: one-line errors naming the field."""

from pathlib import Path

import pytest
import yaml

from hlm.config import load_schema, validate_config
from hlm.errors import ConfigError
from hlm.methods import METHODS

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = load_schema(ROOT / "workflow/schemas/config.schema.yaml")
DATASETS = {"aural_sonar", "protein", "voting", "sonar", "house_votes", "gunpoint", "italy_power", "dna"}


def _config(**changes):
    config = yaml.safe_load((ROOT / "config/config.yaml").read_text())
    config.update(changes)
    return config


def _check(config):
    validate_config(config, SCHEMA, known_datasets=DATASETS, known_methods=METHODS)


def test_default_config_is_valid():
    _check(_config())


@pytest.mark.parametrize(
    "changes,message",
    [
        ({"n_splits": 0}, "field 'n_splits' must be >= 1 (got 0)"),
        ({"test_fraction": 1.0}, "field 'test_fraction' must be < 1 (got 1.0)"),
        ({"test_fraction": 0}, "field 'test_fraction' must be > 0 (got 0)"),
        ({"datasets": ["voting", "nope"]}, "field 'datasets': unknown dataset 'nope'"),
        ({"methods": ["knn", "svm_magic"]}, "field 'methods': unknown method 'svm_magic'"),
        ({"datasets": []}, "field 'datasets' must list at least 1 item"),
        ({"n_splits": "many"}, "field 'n_splits' must be of type integer"),
        ({"nsplits": 3}, "'nsplits' was unexpected"),
    ],
)
def test_bad_config_is_one_line_error(changes, message):
    with pytest.raises(ConfigError) as info:
        _check(_config(**changes))
    text = str(info.value)
    assert message in text and "\n" not in text and text.startswith("config:")


def test_default_and_full_profiles_list_the_registry():
    """The default run: the paper's shared data sets and GunPoint; config/full.yaml: every entry."""
    registry = yaml.safe_load((ROOT / "config/datasets.yaml").read_text())
    full = yaml.safe_load((ROOT / "config/full.yaml").read_text())
    assert set(registry) == DATASETS == set(full["datasets"])
    assert set(_config()["datasets"]) == DATASETS - {"italy_power", "dna"}
    _check({**_config(), **full})


@pytest.mark.parametrize(
    "method,params,message",
    [
        ("knn", {"grid": {"k": [1, 3]}}, "field 'method_params.knn.grid': Invalid parameter 'k'"),
        ("knn", {"grid": {"n_neighbors": [0, 1]}}, "field 'method_params.knn.grid': The 'n_neighbors' parameter"),
        ("knn", {"fixed": {"bogus": 1}}, "field 'method_params.knn.fixed'"),
        ("kernel_hlm", {"fixed": {"shape": -1.0}}, "field 'method_params.kernel_hlm.fixed': The 'shape' parameter"),
    ],
)
def test_bad_method_params_are_one_line_errors(method, params, message):
    from hlm.methods import check_method_params

    with pytest.raises(ConfigError) as info:
        check_method_params(method, params)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_default_method_params_are_valid():
    from hlm.methods import check_method_params

    config = _config()
    assert len(check_method_params("knn", config["method_params"]["knn"])) == 8
    assert check_method_params("kernel_hlm", config["method_params"]["kernel_hlm"]) == [{}]
