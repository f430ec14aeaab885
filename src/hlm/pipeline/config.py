"""The pipeline configuration: validation, defaults (schema + cross-references) and strict YAML loading.

The schema (package data ``hlm/pipeline/config.schema.yaml``) is the one place where
a setting's default is written: :func:`validate_config` fills every missing setting
that has a ``default:`` there, nested ones included, so that the pipeline (the
Snakefile), ``hlm check`` and library callers read only ``config[key]``. A method's
grid and fixed hyper-parameters default to its registration (``hlm.pipeline.methods``), an
incremental learner's hyper-parameters to the learner's own (``hlm.pipeline.incremental``).

Errors are ``ConfigError`` with one line naming the field, e.g.
``config: field 'n_splits' must be >= 1 (got 0)``. Users' YAML files (the
registry, config files) are read by :func:`load_yaml`: a key repeated in one
mapping (a pasted second entry, a repeated field) is an error, where PyYAML
would silently keep the last.
"""

from __future__ import annotations

import copy
import re
from functools import lru_cache
from importlib import resources
from pathlib import Path

import jsonschema
import yaml

from hlm._yaml import DuplicateKeyError, _parse, load_yaml, schema_error_message
from hlm.errors import ConfigError


def check_config_file(path: str | Path) -> None:
    """ConfigError for a key given twice in a config file that Snakemake has read (its loader keeps
    the last); the values are checked by :func:`validate_config`."""
    try:
        _parse(Path(path).read_text(encoding="utf-8"))
    except DuplicateKeyError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    except yaml.YAMLError:
        pass  # Snakemake parsed it (e.g. as JSON): nothing more to say here


@lru_cache(maxsize=1)
def _packaged_schema() -> str:
    return resources.files("hlm").joinpath("pipeline/config.schema.yaml").read_text(encoding="utf-8")


def config_schema() -> dict:
    """The JSON schema of the pipeline configuration (package data), a fresh copy."""
    return yaml.safe_load(_packaged_schema())


def _fill_defaults(validator, properties, instance, schema):
    """The ``properties`` keyword, which first sets each missing property that has a ``default``
    (a copy of it; the recipe of jsonschema's FAQ). The validator then descends into the
    properties, so defaults of nested objects are filled too (also inside array items)."""
    if validator.is_type(instance, "object"):
        for name, subschema in properties.items():
            if name not in instance and isinstance(subschema, dict) and "default" in subschema:
                instance[name] = copy.deepcopy(subschema["default"])
    yield from jsonschema.Draft202012Validator.VALIDATORS["properties"](validator, properties, instance, schema)


#: Draft 2020-12 validation that fills the defaults in the instance it validates
_FillingValidator = jsonschema.validators.extend(jsonschema.Draft202012Validator, {"properties": _fill_defaults})


def config_defaults(schema: dict | None = None) -> dict:
    """Every setting that has a default, as the validated config gets it (nested sections included)."""
    defaults: dict = {}
    for _ in _FillingValidator(config_schema() if schema is None else schema).iter_errors(defaults):
        pass  # the user's choices (datasets, methods) are missing: only the filled defaults matter
    return defaults


def validate_config(config: dict, schema: dict | None = None, *, known_datasets=None, known_methods=None,
                    where: str = "config") -> dict:
    """Check ``config`` against the schema and fill in the defaults (in place); return it.

    With ``known_datasets`` / ``known_methods``, also check the names it uses
    (:func:`check_names`). Raises ConfigError for the first problem.
    """
    validator = _FillingValidator(config_schema() if schema is None else schema)
    errors = sorted(validator.iter_errors(config), key=lambda e: list(e.absolute_path))
    if errors:
        raise ConfigError(schema_error_message(where, errors[0]))
    if known_datasets is not None or known_methods is not None:
        check_names(config, known_datasets=known_datasets, known_methods=known_methods, where=where)
    return config


def typed_command_line(config: dict, command_line: dict, schema: dict | None = None) -> dict:
    """Give the scalars of ``--config`` values the types the schema asks for, in ``config`` (in place); returns the
    command line's values so typed.

    Snakemake reads a nested ``--config`` value as YAML with its base loader, so every scalar inside it is text
    (and quotes are gone): ``--config 'dataset_splits={iris: 5}'`` arrives as ``{"iris": "5"}``. Each such text
    becomes the integer, number, boolean or null it reads as (digits, a decimal point or an exponent; YAML 1.1's
    booleans and null; not ``inf`` or ``nan``) where the schema allows that type there, or says nothing of the
    type (as in ``method_params``' grids); elsewhere (names, paths) it stays text. Only the command line's values
    are typed; a config file's are left as they are.
    """
    schema = config_schema() if schema is None else schema
    typed = {key: _typed(value, _subschema(schema, key)) if isinstance(value, (dict, list)) else value
             for key, value in command_line.items()}
    for key, value in typed.items():
        if key in config:
            config[key] = _overlay(config[key], value)
    return typed


def _overlay(base, top):
    """``top`` over ``base``: mappings merged key by key (as Snakemake merges ``--config`` into the files')."""
    if isinstance(base, dict) and isinstance(top, dict):
        return {**base, **{k: _overlay(base.get(k), v) for k, v in top.items()}}
    return top


def _subschema(schema: dict | None, key) -> dict | None:
    """The schema of an object's property ``key`` (its properties, else its additionalProperties); None: free."""
    if not isinstance(schema, dict):
        return None
    props = schema.get("properties", {})
    if key in props:
        return props[key]
    extra = schema.get("additionalProperties")
    return extra if isinstance(extra, dict) else None


def _typed(value, schema: dict | None):
    if isinstance(value, dict):
        return {k: _typed(v, _subschema(schema, k)) for k, v in value.items()}
    if isinstance(value, list):
        items = schema.get("items") if isinstance(schema, dict) else None
        return [_typed(v, items if isinstance(items, dict) else None) for v in value]
    if not isinstance(value, str):
        return value
    read = _scalar(value)
    if read is value:
        return value
    schema = schema if isinstance(schema, dict) else {}
    if "enum" in schema:
        return read if read in schema["enum"] and value not in schema["enum"] else value
    types = schema.get("type")
    allowed = {types} if isinstance(types, str) else set(types or ())
    if allowed and not _json_type(read) & allowed:
        return value
    if isinstance(read, float) and "integer" in allowed and "number" not in allowed:
        return int(read)  # 1e1 where an integer is asked for
    return read


#: the texts YAML 1.1 (PyYAML's safe loader) reads as booleans and as null, and the shapes of its numbers
_TRUE = {"true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON"}
_FALSE = {"false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF"}
_NULL = {"null", "Null", "NULL", "~"}
_INT = re.compile(r"[-+]?[0-9]+")
_FLOAT = re.compile(r"[-+]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][-+]?[0-9]+)?")


def _scalar(text: str):
    """The integer, number, boolean or null that ``text`` reads as; else ``text`` itself."""
    if _INT.fullmatch(text):
        return int(text)
    if _FLOAT.fullmatch(text):
        return float(text)
    if text in _TRUE or text in _FALSE:
        return text in _TRUE
    return None if text in _NULL else text


def _json_type(value) -> set[str]:
    if value is None:
        return {"null"}
    if isinstance(value, bool):
        return {"boolean"}
    return {"integer", "number"} if isinstance(value, int) or float(value).is_integer() else {"number"}


def check_names(config: dict, *, known_datasets=None, known_methods=None, where: str = "config") -> None:
    """ConfigError for a data set or method name of a validated ``config`` that is not known
    (data sets are not checked without ``known_datasets``, methods not without ``known_methods``)."""
    from hlm.pipeline.protocols import protocols

    for field, known, values in (
        ("datasets", known_datasets, config["datasets"]),
        ("methods", known_methods, config["methods"]),
        ("models", known_methods, config["models"]),
        ("incremental.datasets", known_datasets, config["incremental"].get("datasets", ())),
        *((f"{p}.datasets", known_datasets, config[p].get("datasets", ())) for p in protocols()),
        *((f"{p}.split_jobs", known_datasets, config[p]["split_jobs"]) for p in protocols()
          if "split_jobs" in config[p]),
        ("evaluation_jobs", known_datasets, list(config["evaluation_jobs"])),
        ("dataset_splits", known_datasets, list(config["dataset_splits"])),
    ):
        unknown = [v for v in values if known is not None and v not in known]
        if unknown:
            noun = "method" if known is known_methods else "dataset"
            raise ConfigError(f"{where}: field '{field}': unknown {noun} {', '.join(map(repr, unknown))}; "
                              f"known: {', '.join(sorted(known))}")
    for method, names in config["method_datasets"].items():
        if known_methods is not None and method not in known_methods:
            raise ConfigError(f"{where}: field 'method_datasets.{method}': unknown method {method!r}")
        unlisted = [d for d in names if d not in config["datasets"]]
        if unlisted:
            raise ConfigError(f"{where}: field 'method_datasets.{method}': {unlisted[0]!r} is not among the data "
                              "sets run (field 'datasets')")
    outside = [m for m in config["models"] if m not in config["methods"]]
    if outside:
        raise ConfigError(f"{where}: field 'models': {outside[0]!r} is not among the methods run (field 'methods')")
    for method in config["method_params"] if known_methods is not None else ():
        if method not in known_methods:
            raise ConfigError(f"{where}: field 'method_params.{method}': unknown method {method!r}")


def dataset_n_splits(config: dict, dataset: str) -> int:
    """A data set's number of random splits: ``n_splits``, or its ``dataset_splits`` where fewer."""
    n = config["n_splits"]
    return min(n, config["dataset_splits"].get(dataset, n))


def stage_sections() -> tuple[str, ...]:
    """The config sections of the stages besides the comparison: ``incremental`` and every protocol's section
    (``hlm.pipeline.protocols``)."""
    from hlm.pipeline.protocols import protocols

    return ("incremental", *protocols())


def restrict_to_named(config: dict, user: dict) -> list[str]:
    """A subset runs only what it names; return the sections it turns off.

    ``user`` holds the user's own settings: the command line's ``--config`` and any ``--configfile`` beyond the
    default profile (config/config.yaml). When they set ``datasets`` or ``methods`` (a subset, or another
    profile), the default profile's choice of stages no longer applies: each stage section (:func:`stage_sections`)
    that ``user`` does not set runs on no data set, and one it sets runs on the data sets it lists there, else on
    the section's default (the run's among its paper's), never on the default profile's list; its other settings
    are the user's and the schema's defaults, none of the default profile's (its smaller grids, fewer partitions,
    HMAC's allow_duplicates). Likewise only the user's ``method_datasets`` and ``dataset_splits`` apply. Changes
    ``config`` (Snakemake's, before :func:`validate_config`) in place.
    """
    if "datasets" not in user and "methods" not in user:
        return []
    # the default profile's method_datasets and dataset_splits are for its own run (a value not a mapping: the
    # schema says so)
    for key in ("method_datasets", "dataset_splits"):
        named = user[key] if key in user else {}
        config[key] = dict(named) if isinstance(named, dict) else named
    off = []
    for section in stage_sections():
        named = user.get(section)
        if not isinstance(config.get(section, {}), dict):
            continue  # validate_config names the field
        if isinstance(named, dict):  # the user's settings over the schema's defaults, none of the default profile's
            config[section] = copy.deepcopy(named)
            continue
        off.append(section)
        config[section] = {"datasets": []}
    return off


def _merge(into: dict, data: dict) -> dict:
    """Snakemake's merge of config files: ``data``'s settings replace ``into``'s, sections merged key by key."""
    for key, value in data.items():
        if isinstance(value, dict):
            value = _merge(dict(into[key]) if isinstance(into.get(key), dict) else {}, value)
        into[key] = value
    return into


def _read_settings(path: str | Path) -> dict:
    data = load_yaml(Path(path).read_text(encoding="utf-8"), str(path)) or {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: must be a mapping of settings")
    return data


def user_settings(configfiles, command_line: dict, default_profile: str | Path) -> dict:
    """The settings a run's user chose: its ``--configfile`` files other than ``default_profile`` (the Snakefile's
    own), merged in order, then its ``--config`` values (:func:`restrict_to_named`)."""
    user: dict = {}
    for path in configfiles:
        if Path(path).resolve() != Path(default_profile).resolve():
            _merge(user, _read_settings(path))
    return _merge(user, dict(command_line))


def load_config(*paths: str | Path, known_datasets=None, known_methods=None) -> dict:
    """The validated config (defaults filled) of one or more YAML files, as Snakemake reads
    ``--configfile a.yaml b.yaml``: a later file's settings replace the earlier ones', and its
    sections (mappings) are merged into theirs. With several, the first is the default profile and the
    others are the user's (:func:`restrict_to_named`)."""
    config: dict = {}
    for path in paths:
        _merge(config, _read_settings(path))
    if len(paths) > 1:  # the first is the default profile (the Snakefile's own), the others the user's
        restrict_to_named(config, user_settings(paths[1:], {}, paths[0]))
    return validate_config(config, known_datasets=known_datasets, known_methods=known_methods,
                           where=", ".join(map(str, paths)) or "config")
