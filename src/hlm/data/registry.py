"""The data set registry (``config/datasets.yaml``).

Each entry names a raw file and says how to turn it into a distance matrix
(paper section 5.2). Entries are validated against the JSON schema shipped
as ``hlm/schemas/datasets.schema.yaml``; every problem becomes a one-line
:class:`~hlm.errors.ConfigError` naming the file, the entry and the field.
"""

from __future__ import annotations

import difflib
import math
import re
from dataclasses import asdict, dataclass, fields
from functools import lru_cache
from importlib import resources
from pathlib import Path

import jsonschema
import yaml

from hlm.errors import ConfigError

NAME_PATTERN = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")


@dataclass(frozen=True)
class RemoveAtRandom:
    """Field ``remove_at_random``: blank round(fraction * N * p) observed cells, drawn with ``seed``."""

    fraction: float
    seed: int


@dataclass(frozen=True)
class DatasetSpec:
    """One validated registry entry (field meanings: config/datasets.yaml)."""

    name: str
    format: str
    kind: str
    path: str | None = None
    description: str = ""
    provenance: str = ""
    licence: str = ""
    matrix_key: str | None = None
    labels_key: str | None = None
    labels_path: str | None = None
    labels_order: str | None = None
    object: str | None = None
    to_distance: str | None = None
    upper_bound: float | None = None
    distance: str | None = None
    label_column: str | None = None
    na_value: str | None = None
    drop_columns: tuple[str, ...] | None = None
    factors: str | None = None
    missing: str | None = None
    remove_at_random: RemoveAtRandom | None = None
    standardize: bool | None = None
    sha256: str | None = None
    source: str | None = None
    window: float | None = None
    encoding: str | None = None
    block_size: int | None = None
    generator: str | None = None
    n_objects: int | None = None
    n_features: int | None = None
    seed: int | None = None

    @property
    def where(self) -> str:
        """Prefix for error messages: ``dataset 'x' (data/raw/x.mat)``; ``(generator ringnorm)`` if drawn."""
        origin = self.path or self.source or (f"generator {self.generator}" if self.generator else None)
        return f"dataset '{self.name}' ({origin})"


SPEC_FIELDS = tuple(f.name for f in fields(DatasetSpec) if f.name != "name")


@lru_cache(maxsize=1)
def entry_schema() -> dict:
    """The JSON schema of one registry entry (package data)."""
    text = resources.files("hlm").joinpath("schemas/datasets.schema.yaml").read_text()
    return yaml.safe_load(text)


def _show(value) -> str:
    return repr(value) if isinstance(value, str) else str(value)


def _context(schema: dict, error: jsonschema.ValidationError) -> tuple[str | None, str | None]:
    """(branch, x-context) of the deepest if/then/else branch the error came from."""
    node, branch, ctx = schema, None, None
    for step in error.schema_path:
        if not isinstance(node, (dict, list)):
            break
        node = node[step]
        if step in ("then", "else") and isinstance(node, dict):
            branch, ctx = step, node.get("x-context")
    return branch, ctx


def _interval(sub: dict) -> str:
    """The bounds of a number's schema as text: 'in (0, 1)', 'at least 2', ..."""
    lo = ("(", sub["exclusiveMinimum"]) if "exclusiveMinimum" in sub else ("[", sub.get("minimum"))
    hi = (")", sub["exclusiveMaximum"]) if "exclusiveMaximum" in sub else ("]", sub.get("maximum"))
    if lo[1] is not None and hi[1] is not None:
        return f"in {lo[0]}{lo[1]}, {hi[1]}{hi[0]}"
    if lo[1] is not None:
        return f"{'greater than' if lo[0] == '(' else 'at least'} {lo[1]}"
    return f"{'less than' if hi[0] == ')' else 'at most'} {hi[1]}"


def _describe(schema: dict, error: jsonschema.ValidationError) -> str:
    """A short human sentence for one schema violation."""
    branch, ctx = _context(schema, error)
    field = ".".join(p for p in error.path if isinstance(p, str)) or None  # 'remove_at_random.fraction'; no list index
    with_ctx = f" with {ctx}" if ctx else ""
    v = error.validator
    if v == "required":
        missing = [f for f in error.validator_value if f not in error.instance]
        return f"field '{field + '.' if field else ''}{missing[0]}' is required{with_ctx}"
    if v == "additionalProperties" and field:  # a key of a mapping field (remove_at_random)
        extra = sorted(set(error.instance) - set(error.schema["properties"]))
        return f"field '{field}': unknown key '{extra[0]}' (known: {', '.join(error.schema['properties'])})"
    if v in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        return f"field '{field}' must be {_interval(error.schema)} (got {_show(error.instance)})"
    if v == "additionalProperties":
        extra = sorted(set(error.instance) - set(schema["properties"]))
        hint = difflib.get_close_matches(str(extra[0]), SPEC_FIELDS, n=1)
        tip = f" (did you mean '{hint[0]}'?)" if hint else f"; known fields: {', '.join(SPEC_FIELDS)}"
        return f"unknown field '{extra[0]}'{tip}"
    if v in ("enum", "const"):
        allowed = error.validator_value if v == "enum" else [error.validator_value]
        return (
            f"field '{field}' must be one of {', '.join(map(str, allowed))}{with_ctx} "
            f"(got {_show(error.instance)})"
        )
    if v == "not":  # `not: {anyOf: [{required: [field]}, ...]}` forbids fields
        banned = [f for alt in error.validator_value.get("anyOf", []) for f in alt.get("required", [])]
        present = [f for f in banned if f in error.instance] or banned
        verb = "is not allowed" if branch == "then" else "is only allowed"
        return f"field '{present[0]}' {verb} with {ctx}"
    if v == "type":
        want = {"number": "a number", "string": "a string", "object": "a mapping", "boolean": "true or false",
                "array": "a list", "integer": "an integer"}.get(
            error.validator_value, error.validator_value
        )
        return f"field '{field}' must be {want} (got {_show(error.instance)})"
    if v == "pattern" and field == "sha256":
        return f"field 'sha256' must be 64 lowercase hex digits (got {_show(error.instance)})"
    if v in ("minLength", "minItems"):
        return f"field '{field}' must not be empty"
    if v == "uniqueItems":
        return f"field '{field}' names a column twice (got {error.instance})"
    return f"field '{field}': {error.message}"


def validate_entry(name: str, entry, source: str = "config/datasets.yaml") -> DatasetSpec:
    """Validate one raw entry (a mapping) and return its :class:`DatasetSpec`."""
    if not NAME_PATTERN.match(str(name)):
        raise ConfigError(
            f"{source}: data set name {_show(name)} must start with a letter and contain "
            "only letters, digits, '_' and '-'"
        )
    if not isinstance(entry, dict):
        raise ConfigError(
            f"{source}: entry '{name}' must be a mapping of fields (got {type(entry).__name__})"
        )
    # a spec's tuples (drop_columns) come back as such through dataclasses.asdict (workflow params),
    # its RemoveAtRandom as a dict there, or as itself from dataclasses.replace
    entry = {k: list(v) if isinstance(v, tuple) else asdict(v) if isinstance(v, RemoveAtRandom) else v
             for k, v in entry.items()}
    schema = entry_schema()
    validator = jsonschema.Draft202012Validator(schema)
    rank = {"additionalProperties": 0, "type": 1, "enum": 2, "const": 2, "required": 3}
    errors = sorted(
        validator.iter_errors(entry),
        key=lambda e: (rank.get(e.validator, 4), list(map(str, e.schema_path))),
    )
    if errors:
        more = f" (and {len(errors) - 1} more problem(s))" if len(errors) > 1 else ""
        raise ConfigError(f"{source}: entry '{name}': {_describe(schema, errors[0])}{more}")
    _check_finite(schema, entry, f"{source}: entry '{name}'")
    values = dict(entry)
    if values.get("upper_bound") is not None:
        values["upper_bound"] = float(values["upper_bound"])
    if values.get("drop_columns") is not None:
        values["drop_columns"] = tuple(values["drop_columns"])
    for field in ("n_objects", "n_features", "seed"):  # JSON Schema's integers include 2.0
        if values.get(field) is not None:
            values[field] = int(values[field])
    if values.get("remove_at_random") is not None:
        r = values["remove_at_random"]
        values["remove_at_random"] = RemoveAtRandom(fraction=float(r["fraction"]), seed=int(r["seed"]))
        values.setdefault("missing", "keep")  # the removed cells stay missing
    return DatasetSpec(name=str(name), **values)


def _check_finite(schema: dict, entry: dict, where: str, prefix: str = "") -> None:
    """ConfigError for a .nan or .inf in a number field (the schema's numbers admit them)."""
    for field, value in entry.items():
        sub = schema.get("properties", {}).get(field, {})
        if sub.get("type") == "object" and isinstance(value, dict):
            _check_finite(sub, value, where, f"{prefix}{field}.")
        elif sub.get("type") == "number" and not math.isfinite(value):
            raise ConfigError(f"{where}: field '{prefix}{field}' must be a finite number (got {value})")


def load_registry(path: str | Path, names: list[str] | None = None) -> dict[str, DatasetSpec]:
    """Read and validate a registry file; returns ``{name: DatasetSpec}`` in file order.

    With ``names``, only those entries are validated and returned (an unknown
    name is a ConfigError listing the known ones).
    """
    from hlm.config import load_yaml
    from hlm.data.textfiles import read_text

    source = str(path)
    if not Path(path).exists():
        raise ConfigError(f"{source}: data set registry not found")
    raw = load_yaml(read_text(path, error=ConfigError), source)
    if raw is None:
        raise ConfigError(f"{source}: data set registry is empty")
    if not isinstance(raw, dict):
        raise ConfigError(
            f"{source}: expected a mapping of data set names to entries (got {type(raw).__name__})"
        )
    if names is not None:
        missing = [n for n in names if n not in raw]
        if missing:
            known = ", ".join(sorted(map(str, raw)))
            raise ConfigError(f"{source}: unknown data set '{missing[0]}'; known data sets: {known}")
        raw = {n: raw[n] for n in names}
    return {str(name): validate_entry(name, entry, source) for name, entry in raw.items()}


def get_spec(registry: dict[str, DatasetSpec], name: str) -> DatasetSpec:
    """The entry called ``name``; ConfigError listing the known names otherwise."""
    try:
        return registry[name]
    except KeyError:
        known = ", ".join(sorted(registry)) or "(none)"
        raise ConfigError(f"unknown data set '{name}'; known data sets: {known}") from None
