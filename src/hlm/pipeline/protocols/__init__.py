"""The table of the papers' own protocols, as :mod:`hlm.pipeline.methods` is the table of methods.

Each protocol is a package here: ``__init__.py`` holds its entry (``PROTOCOL``, a
:class:`~hlm.pipeline.protocols.spec.ProtocolSpec`), ``run.py`` the job on one data set, ``table.py`` the
table over the data sets (a module of its own, so that editing a table reruns no protocol job) and
``paper.yaml`` the paper's numbers. workflow/rules/protocols.smk makes two rules of every entry. Adding a
protocol: its package, a config section (src/hlm/pipeline/config.schema.yaml) and a test.
"""

from __future__ import annotations

import pkgutil
from functools import cache
from importlib import import_module


@cache
def protocols() -> dict:
    """{protocol id: ProtocolSpec} of every protocol package here, by id."""
    found = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.ispkg:
            spec = import_module(f"{__name__}.{info.name}").PROTOCOL
            if spec.id != info.name:
                raise ValueError(f"protocol package {info.name!r} holds the entry of {spec.id!r}")
            found[spec.id] = spec
    return found
