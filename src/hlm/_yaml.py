"""Users' YAML files (the registry, config files), read strictly, and one-line schema errors.

:func:`load_yaml` refuses a key repeated in one mapping (a pasted second entry, a repeated field), where
PyYAML would silently keep the last; :func:`schema_error_message` turns a jsonschema error into one line
naming the field.
"""

from __future__ import annotations

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
