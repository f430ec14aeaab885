"""Which source files a pipeline job depends on: the hlm modules its code imports.

The workflow declares these files as rule inputs, so editing one reruns exactly
the jobs whose code can reach it. They are found by reading the sources (every
``import hlm...`` / ``from hlm... import``, at module level or inside a
function, followed recursively), not by importing anything, so the Snakefile
stays fast to parse. Package ``__init__.py`` files on the way count too.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

#: src/hlm
PACKAGE_DIR = Path(__file__).resolve().parent


def module_sources(*modules: str) -> list[str]:
    """Files (relative to src/hlm) of ``modules`` (dotted names, e.g. ``"hlm.stages.evaluate"``) and of
    every hlm module they import, directly or not; sorted."""
    seen: set[str] = set()
    todo = list(modules)
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        if _path(module) is None:
            raise ValueError(f"module_sources: no source file for module {module!r} under {PACKAGE_DIR}")
        seen.add(module)
        todo.extend(_imports(module) - seen)
    files = {_path(m) for m in seen}
    for module in seen:  # the packages on the way are imported first
        parts = module.split(".")
        files.update(p for i in range(1, len(parts)) if (p := _path(".".join(parts[:i]))) is not None)
    return sorted(str(f.relative_to(PACKAGE_DIR)) for f in files)


@cache
def _path(module: str) -> Path | None:
    """The source file of an hlm module or package, or None (e.g. a function's name)."""
    parts = module.split(".")
    if parts[0] != "hlm":
        return None
    base = PACKAGE_DIR.joinpath(*parts[1:])
    for candidate in (base.with_suffix(".py") if len(parts) > 1 else None, base / "__init__.py"):
        if candidate is not None and candidate.is_file():
            return candidate
    return None


@cache
def _imports(module: str) -> frozenset[str]:
    """The hlm modules named by the import statements anywhere in ``module``'s source."""
    found = set()
    for node in ast.walk(ast.parse(_path(module).read_text(), filename=str(_path(module)))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                raise ValueError(f"module_sources: {module} uses a relative import; use hlm.* names")
            names = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
        else:
            continue
        found.update(name for name in names if _path(name) is not None)
    return frozenset(found)
