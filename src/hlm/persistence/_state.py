"""A fitted estimator as JSON and numeric arrays, and back: model files without pickles.

:func:`to_state` walks the estimator's attributes (``vars``: its hyper-parameters and its fitted ``*_``
attributes) and those of the objects it holds, and returns a JSON tree and a dict of numpy arrays; the tree
names each array by a key. :func:`from_state` rebuilds the estimator from them. The tree holds plain JSON
values, and typed nodes ``{"@": type, ...}`` for what JSON lacks:

* ``array``: a numpy array of numbers, booleans or fixed-width strings, stored in the arrays (``.npz``
  without pickles); an array of Python objects is stored as a list of its elements (``objects``);
* ``float``: NaN and the infinities; ``scalar``: a numpy scalar, with its dtype; ``dtype``; ``tuple``;
  ``dict`` with keys that are not strings; ``set``;
* ``object``: an instance of a class of this project or of scikit-learn (``module:qualname``), rebuilt
  without calling its ``__init__`` from its attributes; ``setstate``: one of a compiled class (scikit-learn's
  KD-tree), rebuilt by its ``__setstate__`` from the state its ``__getstate__`` gave; ``type``, ``function``: a
  class or a module-level function of those packages, by name.

Anything else (a lambda, an open file, a class of another package) cannot be saved: :class:`StateError`
names the attribute's path. Loading imports only modules of this project and of scikit-learn, and rebuilds
only this project's classes, scikit-learn's estimators and the compiled trees and metrics they hold, each
named by the module that defines it: the reason model files never hold pickles (a pickle runs what it
names).

Examples
--------
>>> import numpy as np
>>> from hlm.neighbors import KNNClassifier
>>> from hlm.persistence import from_state, to_state
>>> D = np.array([[0.0, 1.0, 4.0, 5.0], [1.0, 0.0, 3.0, 4.0], [4.0, 3.0, 0.0, 1.0], [5.0, 4.0, 1.0, 0.0]])
>>> knn = KNNClassifier(n_neighbors=1).fit(D, ["a", "a", "b", "b"])
>>> tree, arrays = to_state(knn)
>>> tree["@"], tree["class"], "classes_" in arrays
('object', 'hlm.neighbors._knn:KNNClassifier', True)
>>> again = from_state(tree, arrays)
>>> again.predict([[0.5, 0.7, 3.0, 4.2], [4.1, 3.3, 0.4, 0.9]])
array(['a', 'b'], dtype='<U1')
"""

from __future__ import annotations

import math
import types
from importlib import import_module

import numpy as np

from hlm.errors import HLMError

#: the packages whose classes and functions a model file may name
TRUSTED = ("hlm", "sklearn")


class StateError(HLMError):
    """An estimator that cannot be saved (an attribute of an unsupported type), or a damaged state."""


def to_state(obj) -> tuple[dict, dict[str, np.ndarray]]:
    """The JSON tree of ``obj`` and its arrays (keys: attribute paths such as ``estimator_.support_``).

    Parameters
    ----------
    obj : object
        A (fitted) estimator of this project or of scikit-learn.

    Returns
    -------
    tree : dict
        JSON-serialisable; arrays are ``{"@": "array", "key": ...}``.
    arrays : dict of str to ndarray
        The numeric and string arrays, for ``numpy.savez`` (none holds Python objects).

    Raises
    ------
    StateError
        For an attribute that cannot be saved; the message names its path.
    """
    arrays: dict[str, np.ndarray] = {}
    return _encode(obj, "", arrays), arrays


def from_state(tree, arrays) -> object:
    """The object of :func:`to_state`'s ``tree`` and ``arrays``.

    Parameters
    ----------
    tree : dict
        The JSON tree.
    arrays : mapping of str to ndarray
        The arrays it names (e.g. ``numpy.load(path, allow_pickle=False)``).

    Returns
    -------
    object
        The rebuilt object.

    Raises
    ------
    StateError
        For a node of an unknown type, a missing array, or a class or function outside this project and
        scikit-learn.
    """
    return _decode(tree, arrays, "")


def _join(path: str, name) -> str:
    return f"{path}.{name}" if path else str(name)


def _encode(value, path: str, arrays: dict):
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, np.generic):  # before float: np.float64 is one
        return {"@": "scalar", "dtype": value.dtype.str, "value": _encode(value.item(), path, arrays)}
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else {"@": "float", "value": repr(value)}
    if isinstance(value, np.ndarray):
        if value.dtype.kind in "biufcUSV" and not value.dtype.hasobject:  # V: a record array (a KD-tree's nodes)
            key = path or "value"
            arrays[key] = np.ascontiguousarray(value)
            return {"@": "array", "key": key}
        if value.dtype.kind == "O":
            return {"@": "objects", "shape": list(value.shape),
                    "items": [_encode(v, _join(path, i), arrays) for i, v in enumerate(value.ravel().tolist())]}
        raise StateError(f"cannot save {path or 'the object'}: an array of dtype {value.dtype}")
    if isinstance(value, np.dtype):
        return {"@": "dtype", "value": value.str}
    if isinstance(value, list):
        return [_encode(v, _join(path, i), arrays) for i, v in enumerate(value)]
    if isinstance(value, tuple):
        return {"@": "tuple", "items": [_encode(v, _join(path, i), arrays) for i, v in enumerate(value)]}
    if isinstance(value, (set, frozenset)):
        return {"@": "set", "items": [_encode(v, _join(path, i), arrays) for i, v in enumerate(sorted(value))]}
    if isinstance(value, dict):
        if all(isinstance(k, str) and k != "@" for k in value):
            return {k: _encode(v, _join(path, k), arrays) for k, v in value.items()}
        return {"@": "dict", "items": [[_encode(k, path, arrays), _encode(v, _join(path, k), arrays)]
                                       for k, v in value.items()]}
    if isinstance(value, type):
        return {"@": "type", "name": _qualified(value, path)}
    if isinstance(value, types.FunctionType) or hasattr(value, "py_func"):  # a numba dispatcher too
        return {"@": "function", "name": _qualified(value, path)}
    if not isinstance(value, types.ModuleType) and hasattr(value, "__getstate__"):
        name = _qualified(type(value), path)
        state = value.__getstate__()
        if isinstance(state, dict) and hasattr(value, "__dict__"):  # its attributes (scikit-learn's estimators)
            return {"@": "object", "class": name,
                    "state": {k: _encode(v, _join(path, k), arrays) for k, v in vars(value).items()}}
        if state is not None and not isinstance(state, dict):  # a compiled class's own state (a KD-tree)
            return {"@": "setstate", "class": name, "state": _encode(state, path, arrays)}
    raise StateError(f"cannot save {path or 'the object'}: a {type(value).__module__}.{type(value).__qualname__}")


def _qualified(obj, path: str) -> str:
    module, name = getattr(obj, "__module__", None) or "", getattr(obj, "__qualname__", "")
    if module.split(".")[0] not in TRUSTED or "<" in name:
        raise StateError(f"cannot save {path or 'the object'}: {module}.{name} is not a class or module-level "
                         f"function of {' or '.join(TRUSTED)}")
    return f"{module}:{name}"


def _resolve(name: str, path: str):
    """The class or function ``module:qualname`` names, if it is defined there, in hlm or scikit-learn: the
    qualname is followed from the module, and the object found must say it is that module's (so that no
    name reaches another package's object through a module's imports, e.g. ``hlm.x:os.system``)."""
    module, _, qualname = str(name).partition(":")
    where = f"model state at {path or 'the top'}"
    if module.split(".")[0] not in TRUSTED or not qualname:
        raise StateError(f"{where}: {name!r} is not of {' or '.join(TRUSTED)}")
    try:
        obj = import_module(module)
        for part in qualname.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError, ValueError):
        raise StateError(f"{where}: {name} does not exist in this version") from None
    if getattr(obj, "__module__", None) != module or getattr(obj, "__qualname__", None) != qualname:
        raise StateError(f"{where}: {name!r} is not a class or function defined in {module}")
    return obj


def _trusted_class(cls, name: str, path: str):
    """A class a model may hold: one of this project's, a scikit-learn estimator, or one of the compiled
    helpers scikit-learn's estimators hold (trees, distance metrics). Nothing else is rebuilt."""
    from sklearn.base import BaseEstimator
    from sklearn.metrics import DistanceMetric
    from sklearn.neighbors import BallTree, KDTree

    ok = isinstance(cls, type) and (cls.__module__.split(".")[0] == "hlm" or issubclass(cls, BaseEstimator)
                                    or issubclass(cls, (KDTree, BallTree, DistanceMetric)))
    if not ok:
        raise StateError(f"model state at {path or 'the top'}: {name} is not a class a model may hold")
    return cls


def _decode(node, arrays, path: str):
    if node is None or isinstance(node, (bool, int, float, str)):
        return node
    if isinstance(node, list):
        return [_decode(v, arrays, _join(path, i)) for i, v in enumerate(node)]
    if not isinstance(node, dict):
        raise StateError(f"model state at {path or 'the top'}: a {type(node).__name__}")
    kind = node.get("@")
    if kind is None:
        return {k: _decode(v, arrays, _join(path, k)) for k, v in node.items()}
    try:
        return _DECODERS[kind](node, arrays, path)
    except KeyError as exc:
        if kind not in _DECODERS:
            raise StateError(f"model state at {path or 'the top'}: unknown node type {kind!r}") from None
        raise StateError(f"model state at {path or 'the top'}: missing {exc}") from None


def _array(node, arrays, path):
    key = node["key"]
    if key not in arrays:
        raise StateError(f"model state at {path or 'the top'}: the arrays lack {key!r}")
    return np.array(arrays[key])  # a writeable copy, as the fit made it


def _objects(node, arrays, path):
    out = np.empty(len(node["items"]), dtype=object)
    out[:] = [_decode(v, arrays, _join(path, i)) for i, v in enumerate(node["items"])]
    return out.reshape(node["shape"])


def _new(node, path):
    cls = _trusted_class(_resolve(node["class"], path), node["class"], path)
    return cls.__new__(cls)


def _object(node, arrays, path):
    if not isinstance(node.get("state"), dict):
        raise StateError(f"model state at {path or 'the top'}: the state of {node.get('class')} is not a mapping")
    obj = _new(node, path)
    obj.__dict__.update({k: _decode(v, arrays, _join(path, k)) for k, v in node["state"].items()})
    return obj


def _function(name, path):
    obj = _resolve(name, path)
    if isinstance(obj, type) or not callable(obj) or not obj.__module__.startswith("hlm."):
        raise StateError(f"model state at {path or 'the top'}: {name} is not a function of hlm")
    return obj


def _setstate(node, arrays, path):
    obj = _new(node, path)
    obj.__setstate__(_decode(node["state"], arrays, path))
    return obj


_DECODERS = {
    "array": _array,
    "objects": _objects,
    "float": lambda n, a, p: float(n["value"]),
    "scalar": lambda n, a, p: np.dtype(n["dtype"]).type(_decode(n["value"], a, p)),
    "dtype": lambda n, a, p: np.dtype(n["value"]),
    "tuple": lambda n, a, p: tuple(_decode(v, a, _join(p, i)) for i, v in enumerate(n["items"])),
    "set": lambda n, a, p: {_decode(v, a, _join(p, i)) for i, v in enumerate(n["items"])},
    "dict": lambda n, a, p: {_decode(k, a, p): _decode(v, a, _join(p, k)) for k, v in n["items"]},
    "type": lambda n, a, p: _trusted_class(_resolve(n["name"], p), n["name"], p),
    "function": lambda n, a, p: _function(n["name"], p),
    "object": _object,
    "setstate": _setstate,
}
