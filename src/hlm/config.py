"""The pipeline configuration: validation, defaults (schema + cross-references) and strict YAML loading.

The schema (package data ``hlm/schemas/config.schema.yaml``) is the one place where
a setting's default is written: :func:`validate_config` fills every missing setting
that has a ``default:`` there, nested ones included, so that the pipeline (the
Snakefile), ``hlm check`` and library callers read only ``config[key]``. A method's
grid and fixed hyper-parameters default to its registration (``hlm.methods``), an
incremental learner's hyper-parameters to the learner's own (``hlm.incremental``).

Errors are ``ConfigError`` with one line naming the field, e.g.
``config: field 'n_splits' must be >= 1 (got 0)``. Users' YAML files (the
registry, config files) are read by :func:`load_yaml`: a key repeated in one
mapping (a pasted second entry, a repeated field) is an error, where PyYAML
would silently keep the last.
"""

from __future__ import annotations

import copy
from functools import lru_cache
from importlib import resources
from pathlib import Path

import jsonschema
import yaml

from hlm.errors import ConfigError


def schema_error_message(where: str, error: jsonschema.ValidationError) -> str:
    """One line for a jsonschema error: where, which field, what is wrong."""
    field = ".".join(str(p) for p in error.absolute_path) or "(top level)"
    v, kw, arg = error.instance, error.validator, error.validator_value
    if kw in ("required", "additionalProperties"):
        return f"{where}: {error.message}"
    templates = {
        "minimum": "must be >= {arg} (got {v!r})",
        "exclusiveMinimum": "must be > {arg} (got {v!r})",
        "maximum": "must be <= {arg} (got {v!r})",
        "exclusiveMaximum": "must be < {arg} (got {v!r})",
        "type": "must be of type {arg} (got {v!r})",
        "minItems": "must list at least {arg} item(s)",
        "minLength": "must not be empty",
        "uniqueItems": "must not repeat items",
    }
    what = templates[kw].format(arg=arg, v=v) if kw in templates else error.message
    return f"{where}: field '{field}' {what}"


class _UniqueKeyLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that refuses a key given twice in one mapping (see :func:`load_yaml`)."""

    def construct_document(self, node):
        self._check_unique_keys(node, (), set())
        return super().construct_document(node)

    def _check_unique_keys(self, node, path: tuple, seen: set) -> None:
        if id(node) in seen:  # an alias seen before
            return
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            first = {}
            for key_node, value_node in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge" or not isinstance(key_node, yaml.ScalarNode):
                    self._check_unique_keys(value_node, path, seen)
                    continue
                key = self.construct_object(key_node)
                line = key_node.start_mark.line + 1
                if key in first:
                    where = f" in '{'.'.join(map(str, path))}'" if path else ""
                    raise DuplicateKeyError(f"key {key!r} is given twice{where} (lines {first[key]} and {line}); "
                                            "YAML would silently keep only the second, so remove one")
                first[key] = line
                self._check_unique_keys(value_node, (*path, key), seen)
        elif isinstance(node, yaml.SequenceNode):
            for item in node.value:
                self._check_unique_keys(item, path, seen)


class DuplicateKeyError(yaml.YAMLError):
    """A key given twice in one YAML mapping."""


def _parse(text: str):
    loader = _UniqueKeyLoader(text)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


def load_yaml(text: str, source: str):
    """Parse a user's YAML text strictly (duplicate keys refused); errors: one-line ConfigErrors naming ``source``."""
    try:
        return _parse(text)
    except DuplicateKeyError as exc:
        raise ConfigError(f"{source}: {exc}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or "invalid YAML"
        raise ConfigError(f"{source}: not valid YAML{at}: {problem}") from None


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
    return resources.files("hlm").joinpath("schemas/config.schema.yaml").read_text(encoding="utf-8")


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


def check_names(config: dict, *, known_datasets=None, known_methods=None, where: str = "config") -> None:
    """ConfigError for a data set or method name of a validated ``config`` that is not known
    (data sets are not checked without ``known_datasets``, methods not without ``known_methods``)."""
    for field, known, values in (
        ("datasets", known_datasets, config["datasets"]),
        ("methods", known_methods, config["methods"]),
        ("incremental.datasets", known_datasets, config["incremental"].get("datasets", ())),
        ("online_kde.datasets", known_datasets, config["online_kde"].get("datasets", ())),
        ("llc_pc.datasets", known_datasets, config["llc_pc"].get("datasets", ())),
        ("twoway_gmm.datasets", known_datasets, config["twoway_gmm"].get("datasets", ())),
        ("subspace_gmm.datasets", known_datasets, config["subspace_gmm"].get("datasets", ())),
        ("hmac.datasets", known_datasets, config["hmac"].get("datasets", ())),
    ):
        unknown = [v for v in values if known is not None and v not in known]
        if unknown:
            raise ConfigError(
                f"{where}: field '{field}': unknown {field.rsplit('.', 1)[-1][:-1]} {', '.join(map(repr, unknown))}; "
                f"known: {', '.join(sorted(known))}"
            )
    for method in config["method_params"] if known_methods is not None else ():
        if method not in known_methods:
            raise ConfigError(f"{where}: field 'method_params.{method}': unknown method {method!r}")


def load_config(*paths: str | Path, known_datasets=None, known_methods=None) -> dict:
    """The validated config (defaults filled) of one or more YAML files, as Snakemake reads
    ``--configfile a.yaml b.yaml``: a later file's settings replace the earlier ones', and its
    sections (mappings) are merged into theirs."""
    def merge(into: dict, data: dict) -> dict:
        for key, value in data.items():
            if isinstance(value, dict):
                value = merge(dict(into[key]) if isinstance(into.get(key), dict) else {}, value)
            into[key] = value
        return into

    config: dict = {}
    for path in paths:
        data = load_yaml(Path(path).read_text(encoding="utf-8"), str(path)) or {}
        if not isinstance(data, dict):
            raise ConfigError(f"{path}: must be a mapping of settings")
        merge(config, data)
    return validate_config(config, known_datasets=known_datasets, known_methods=known_methods,
                           where=", ".join(map(str, paths)) or "config")


#: The config's ``incremental`` settings that each scheme's learner takes (hlm.incremental:
#: SchemeI, SchemeII, Retrain). Those the config leaves out keep the learner's default.
LEARNER_SETTINGS = {
    "scheme_i": ("n_init",),
    "scheme_ii": ("n_init", "step", "v", "estimate"),
    "retrain": ("n_init", "step"),
    "okde": (),  # the online KDE learners: their own defaults (docs/online-kde-spec.md)
    "odkde": (),
}


def learner_params(config: dict, scheme: str) -> dict:
    """The hyper-parameters a validated ``config`` sets for the learner of ``scheme`` (only those it sets)."""
    section = config["incremental"]
    return {k: section[k] for k in LEARNER_SETTINGS[scheme] if k in section}
