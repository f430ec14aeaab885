"""The public names of a family package, loaded on first use (as scikit-learn's top-level ``__init__``).

A package's ``__init__.py`` lists its public names and the private module that defines each one::

    _EXPORTS = {"KNNClassifier": "hlm.neighbors._knn", ...}
    __getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)

``from hlm.neighbors import KNNClassifier`` then imports ``hlm.neighbors._knn`` only, so importing one
estimator does not import its family's others, and ``hlm.pipeline.sources`` (which reads ``_EXPORTS``)
tracks an edit of one module to the jobs that run it.
"""

from __future__ import annotations

from importlib import import_module


def lazy_exports(package: str, exports: dict[str, str]):
    """``(__getattr__, __dir__, __all__)`` of ``package`` whose public names are the keys of ``exports``."""

    def __getattr__(name: str):
        try:
            module = exports[name]
        except KeyError:
            raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
        return getattr(import_module(module), name)

    def __dir__() -> list[str]:
        return sorted(exports)

    return __getattr__, __dir__, sorted(exports)
