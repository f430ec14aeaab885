"""Validation of the pipeline configuration (schema + cross-references).

Errors are ``ConfigError`` with one line naming the field, e.g.
``config: field 'n_splits' must be >= 1 (got 0)``.
"""

from __future__ import annotations

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


def load_schema(path: str | Path) -> dict:
    with open(path) as fh:
        return yaml.safe_load(fh)


def validate_config(config: dict, schema: dict, *, known_datasets, known_methods, where: str = "config") -> None:
    """Raise ConfigError for the first problem in ``config``."""
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(config), key=lambda e: list(e.absolute_path))
    if errors:
        raise ConfigError(schema_error_message(where, errors[0]))
    for field, known, values in (
        ("datasets", known_datasets, config["datasets"]),
        ("methods", known_methods, config["methods"]),
        ("incremental.datasets", known_datasets, config.get("incremental", {}).get("datasets", [])),
    ):
        unknown = [v for v in values if v not in known]
        if unknown:
            raise ConfigError(
                f"{where}: field '{field}': unknown {field.rsplit('.', 1)[-1][:-1]} {', '.join(map(repr, unknown))}; "
                f"known: {', '.join(sorted(known))}"
            )
    for method in config.get("method_params", {}):
        if method not in known_methods:
            raise ConfigError(f"{where}: field 'method_params.{method}': unknown method {method!r}")

