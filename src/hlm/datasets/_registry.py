"""The data set registry (``config/datasets.yaml``).

Each entry names a raw file and says how to turn it into a distance matrix
(paper section 5.2). Entries are validated against the JSON schema shipped
as ``hlm/datasets/registry.schema.yaml``; every problem becomes a one-line
:class:`~hlm.errors.ConfigError` naming the file, the entry and the field.
"""

from __future__ import annotations

import difflib
import math
import re
from dataclasses import asdict, dataclass, fields
from dataclasses import field as dataclass_field
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
    """One validated registry entry (field meanings: config/datasets.yaml).

    A frozen dataclass, made by :func:`validate_entry` (and so :func:`load_registry`) from one entry of the
    registry; its fields are the attributes below, by keyword (``name``, ``format`` and ``kind`` are
    required). The full rules (which field goes with which format and kind) are the comments at the top of
    config/datasets.yaml and docs/data.md; the entry's raw file is turned into distances by
    :func:`hlm.datasets.prepare_dataset` (paper section 5.2).

    Attributes
    ----------
    name : str
        The data set's name (letters, digits, '_' and '-'; used in result file names).
    format : str
        mat, csv, npy, parquet, rda, folder, generated; for raw objects also aeon, fasta.
    kind : str
        similarity, distance, vectors, categorical; for raw objects series, sequences.
    path : str or None, default None
        The raw file (or folder), relative to the project root; None for formats aeon and generated.
    description, provenance, licence : str, default ""
        Free text: what the data set is, where the file comes from, its terms.
    matrix_key, labels_key : str or None, default None
        mat only: the variables holding the matrix and the labels.
    labels_path : str or None, default None
        The labels file of a csv, npy or parquet matrix (or of a folder or FASTA file of objects).
    labels_order : str or None, default None
        ``"rows"``: the labels file's ids name the rows of a matrix without ids, in file order.
    object : str or None, default None
        rda only: the data frame's name when the file holds several.
    to_distance : str or None, default None
        similarity only: auto (None means auto), bound_minus, reciprocal or neg_log (paper section 5.2).
    upper_bound : float or None, default None
        similarity only: S_bar for bound_minus and neg_log (at least max S).
    distance : str or None, default None
        The distance of records or raw objects: euclidean, cityblock, cosine, vdm, dtw, alignment, hamming.
    label_column : str or None, default None
        Record formats: the column holding the class labels.
    na_value : str or None, default None
        categorical: the value standing for a missing entry; vectors: a sentinel read as a missing value.
    drop_columns : tuple of str or None, default None
        Record columns that are not features (e.g. an id code).
    factors : str or None, default None
        vectors only: ``"numbers"``, a factor column whose levels are all numbers becomes those numbers.
    missing : str or None, default None
        vectors only: drop or keep the objects with a missing feature value (None: a missing value is an error).
    remove_at_random : RemoveAtRandom or None, default None
        vectors only: ``fraction`` and ``seed`` of the observed cells blanked once (implies ``missing: keep``).
    standardize : bool or None, default None
        vectors only: z-score each feature with the mean and sd of all objects before the distance.
    sha256 : str or None, default None
        The expected SHA-256 of ``path`` (of a folder's files, of a generated draw); a mismatch is an error.
    source : str or None, default None
        aeon only: the UCR data set inside the aeon package (e.g. ``"GunPoint"``).
    window : float or None, default None
        series: the Sakoe-Chiba band of the elastic distance as a fraction of the series length (None: the
        full window).
    distance_params : dict or None, default None
        series: the parameters of an elastic distance other than ``window`` (aeon's names, e.g. ``{"c": 1.0}``
        for ``msm``), or the alignment's (``mode``, ``substitution_matrix``, gap scores); checked against the
        distance on two short objects when the entry is read.
    alphabet : {"dna", "protein"} or None, default None
        sequences: the letters a FASTA file may hold (None: dna).
    test_path : str or None, default None
        series in an archive format (ts, arff, tsv): the TEST file, pooled with ``path`` (the TRAIN file) into
        one object set (ids ``train-k`` and ``test-k`` say which file each object came from).
    split : {"random", "given"} or None, default None
        ``"given"``: the archive's own train/test split (the TRAIN and TEST parts: ``test_path``, or an aeon
        set) is the only split of the protocol, instead of the random splits (None, ``"random"``).
    header : bool or None, default None
        A record CSV (kinds vectors and categorical): ``False`` when the file has no header row; its
        columns are then ``x1``, ``x2``, ... in file order (``label_column: x21``). None: a header row.
    encoding : str or None, default None
        rda sequences only: ``"statlog_indicators"`` (StatLog DNA's 3 indicator columns per nucleotide).
    block_size : int or None, default None
        Raw objects: rows per distance block (overrides the config's ``distance_block_size``).
    generator : str or None, default None
        generated only: ringnorm, ringnorm_delve or waveform (:func:`hlm.datasets.generate`).
    n_objects, n_features, seed : int or None, default None
        generated only: N, p and the ``RandomState`` seed of the draw.
    where : str
        Property: the prefix of error messages, ``dataset 'x' (data/raw/x.mat)``.

    Examples
    --------
    >>> from hlm.datasets import validate_entry
    >>> spec = validate_entry("toy", {"format": "generated", "kind": "vectors", "distance": "euclidean",
    ...                               "generator": "ringnorm", "n_objects": 6, "n_features": 2, "seed": 0})
    >>> spec.kind, spec.generator, spec.n_objects, spec.path
    ('vectors', 'ringnorm', 6, None)
    >>> spec.where
    "dataset 'toy' (generator ringnorm)"
    """

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
    distance_params: dict | None = dataclass_field(default=None, hash=False)  # a mapping: not part of the hash
    alphabet: str | None = None
    test_path: str | None = None
    split: str | None = None
    header: bool | None = None
    encoding: str | None = None
    block_size: int | None = None
    generator: str | None = None
    n_objects: int | None = None
    n_features: int | None = None
    seed: int | None = None

    @property
    def distance_options(self) -> dict:
        """The options of the entry's distance: ``window`` and ``distance_params`` (none: {})."""
        return {**({"window": self.window} if self.window is not None else {}), **(self.distance_params or {})}

    @property
    def where(self) -> str:
        """Prefix for error messages: ``dataset 'x' (data/raw/x.mat)``; ``(generator ringnorm)`` if drawn."""
        origin = self.path or self.source or (f"generator {self.generator}" if self.generator else None)
        return f"dataset '{self.name}' ({origin})"


SPEC_FIELDS = tuple(f.name for f in fields(DatasetSpec) if f.name != "name")


@lru_cache(maxsize=1)
def entry_schema() -> dict:
    """The JSON schema of one registry entry (package data)."""
    text = resources.files("hlm").joinpath("datasets/registry.schema.yaml").read_text()
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
    """Validate one raw entry (a mapping) and return its :class:`DatasetSpec`.

    The entry is checked against the JSON schema ``hlm/datasets/registry.schema.yaml`` (module docstring);
    the first problem becomes a one-line ConfigError naming the file, the entry and the field.

    Parameters
    ----------
    name : str
        The data set's name: a letter, then letters, digits, '_' and '-'.
    entry : dict
        The entry's fields, as read from the registry (a spec's own tuples and ``RemoveAtRandom`` are
        accepted too, as ``dataclasses.asdict`` gives them back).
    source : str, default "config/datasets.yaml"
        The registry file named in the error messages.

    Returns
    -------
    DatasetSpec
        The validated entry (``upper_bound`` as a float, ``drop_columns`` as a tuple, integer fields as int).

    Raises
    ------
    ConfigError
        For a bad name, an entry that is not a mapping, or a field the schema refuses (unknown, missing,
        of the wrong type, out of range, not finite).

    Examples
    --------
    >>> from hlm.datasets import validate_entry
    >>> spec = validate_entry("toy", {"path": "sim.csv", "format": "csv", "kind": "similarity",
    ...                               "labels_path": "labels.csv", "upper_bound": 1})
    >>> spec.format, spec.kind, spec.upper_bound
    ('csv', 'similarity', 1.0)
    >>> validate_entry("toy", {"path": "sim.csv", "format": "csv", "kind": "similarity",
    ...                        "labels_path": "labels.csv", "upper_bund": 1})
    Traceback (most recent call last):
        ...
    hlm.errors.ConfigError: config/datasets.yaml: entry 'toy': unknown field 'upper_bund' (did you mean 'upper_bound'?)
    """
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
    if entry.get("split") == "given" and entry.get("format") != "aeon" and not entry.get("test_path"):
        raise ConfigError(f"{source}: entry '{name}': split given needs the archive's TEST file in field "
                          "'test_path' (path is the TRAIN file)")
    values = dict(entry)
    if values.get("upper_bound") is not None:
        values["upper_bound"] = float(values["upper_bound"])
    if values.get("drop_columns") is not None:
        values["drop_columns"] = tuple(values["drop_columns"])
    for key in ("n_objects", "n_features", "seed"):  # JSON Schema's integers include 2.0
        if values.get(key) is not None:
            values[key] = int(values[key])
    if values.get("remove_at_random") is not None:
        r = values["remove_at_random"]
        values["remove_at_random"] = RemoveAtRandom(fraction=float(r["fraction"]), seed=int(r["seed"]))
        values.setdefault("missing", "keep")  # the removed cells stay missing
    if values.get("distance_params") is not None or values.get("window") is not None:
        _check_distance_params(values, f"{source}: entry '{name}'")
    return DatasetSpec(name=str(name), **values)


def _check_distance_params(values: dict, where: str) -> None:
    """ConfigError for a parameter the entry's distance does not take (``window`` included), or a
    ``distance_params`` value it refuses (tried on two short series, so that a bad value fails when the entry
    is read, not in the distance jobs; a window alone is the schema's 0..1, which every distance taking one
    accepts)."""
    import numpy as np

    from hlm.distances._registry import get_distance

    distance = get_distance(values.get("distance"))
    if "window" in (values.get("distance_params") or {}):
        raise ConfigError(f"{where}: give the window as the entry's field 'window', not in distance_params")
    params = {**({"window": values["window"]} if values.get("window") is not None else {}),
              **(values.get("distance_params") or {})}
    unknown = sorted(set(params) - set(distance.options))
    if unknown:
        takes = ", ".join(distance.options) or "none"
        raise ConfigError(f"{where}: distance {distance.name} has no parameter {unknown[0]!r} (its parameters: "
                          f"{takes})")
    for key, value in params.items():  # the types aeon's compiled code expects (else numba's long typing error)
        kind = _PARAM_TYPES.get(key, "number")
        ok = (isinstance(value, bool) if kind == "boolean" else isinstance(value, str) if kind == "string"
              else isinstance(value, int) and not isinstance(value, bool) if kind == "integer"
              else isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value))
        if not ok:
            what = {"number": "a finite number", "integer": "an integer"}.get(kind, f"a {kind}")
            raise ConfigError(f"{where}: distance {distance.name}'s parameter {key!r} must be {what} (got {value!r})")
    if not values.get("distance_params"):
        return
    probe = ([np.array([0.0, 1.0, 2.0, 1.0]), np.array([0.0, 0.5, 2.0, 1.0, 0.0])] if distance.kind == "series"
             else ["ACGTAC", "AGTTCA"])
    try:
        R = distance.pairwise(probe, probe, params)
    except Exception as exc:  # noqa: BLE001 - whatever aeon raises for a value it refuses: one line
        message = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise ConfigError(f"{where}: distance {distance.name} refuses distance_params {params}: {message}") from None
    if not distance.similarity and (not np.isfinite(R).all() or (R < 0).any() or np.diag(R).any()):
        raise ConfigError(f"{where}: distance {distance.name} with distance_params {params} is not a distance "
                          f"(on two short series: {np.round(R, 3).tolist()}); a penalty must not be negative")


#: the elastic distances' parameters that are not real numbers
_PARAM_TYPES = {"independent": "boolean", "descriptor": "string", "reach": "integer", "mode": "string",
                "substitution_matrix": "string"}


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

    Parameters
    ----------
    path : str or Path
        The registry, a YAML mapping of data set names to entries (``config/datasets.yaml``; a key given
        twice is an error).
    names : list of str or None, default None
        The entries to validate and return, in that order; None: all of them.

    Returns
    -------
    dict of str to DatasetSpec
        ``{name: DatasetSpec}`` in file order (in the order of ``names`` when given).

    Raises
    ------
    ConfigError
        If the file is missing, empty or not a mapping, a name in ``names`` is unknown, or an entry is
        invalid (:func:`validate_entry`).

    Examples
    --------
    >>> from hlm.datasets import load_registry
    >>> registry = load_registry("config/datasets.yaml", names=["aural_sonar"])
    >>> spec = registry["aural_sonar"]
    >>> spec.format, spec.kind, spec.matrix_key, spec.labels_key
    ('mat', 'similarity', 'A', 'C')
    >>> spec.path
    'data/raw/AuraSonar.mat'

    A registry of one's own:

    >>> import tempfile
    >>> from pathlib import Path
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     _ = (Path(tmp) / "registry.yaml").write_text(
    ...         "toy:\\n  path: sim.csv\\n  format: csv\\n  kind: similarity\\n  labels_path: labels.csv\\n")
    ...     registry = load_registry(Path(tmp) / "registry.yaml")
    >>> list(registry), registry["toy"].labels_path
    (['toy'], 'labels.csv')
    """
    from hlm._yaml import load_yaml
    from hlm.datasets._textfiles import read_text

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
    """The entry called ``name``; ConfigError listing the known names otherwise.

    Parameters
    ----------
    registry : dict of str to DatasetSpec
        A registry, as :func:`load_registry` returns it.
    name : str
        The data set's name.

    Returns
    -------
    DatasetSpec
        The entry.

    Raises
    ------
    ConfigError
        For an unknown name; the message lists the known ones.

    Examples
    --------
    >>> from hlm.datasets import get_spec, load_registry
    >>> registry = load_registry("config/datasets.yaml", names=["aural_sonar", "iris"])
    >>> get_spec(registry, "iris").label_column
    'species'
    >>> get_spec(registry, "sonar")
    Traceback (most recent call last):
        ...
    hlm.errors.ConfigError: unknown data set 'sonar'; known data sets: aural_sonar, iris
    """
    try:
        return registry[name]
    except KeyError:
        known = ", ".join(sorted(registry)) or "(none)"
        raise ConfigError(f"unknown data set '{name}'; known data sets: {known}") from None
