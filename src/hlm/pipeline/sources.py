"""Which source files a pipeline job depends on: the hlm modules its code imports.

The workflow declares these files as rule inputs, so editing one reruns exactly
the jobs whose code can reach it. No job imports this module: its functions run
when the Snakefile is parsed. The files are found by reading the sources (every
``import hlm...`` / ``from hlm... import``, at module level or inside a
function, followed recursively), not by importing anything, so the Snakefile
stays fast to parse. The packages on the way count too, with what they import.
A family's public name (``from hlm.neighbors import KNNClassifier``) counts as
the private module that defines it: the package's ``_EXPORTS`` table
(``hlm._lazy``) says which.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

#: src/hlm
PACKAGE_DIR = Path(__file__).resolve().parents[1]


def module_sources(*modules: str) -> list[str]:
    """Files (relative to src/hlm) of ``modules`` (dotted names, e.g. ``"hlm.pipeline.stages.evaluate"``) and of
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
        parts = module.split(".")  # the packages on the way are imported first
        todo.extend(p for i in range(1, len(parts)) if _path(p := ".".join(parts[:i])) is not None)
        todo.extend(_imports(module) - seen)
    return sorted(str(_path(m).relative_to(PACKAGE_DIR)) for m in seen)


def run_sources(what: str, modules: tuple[str, ...], not_run: tuple[str, ...] = ()) -> list[str]:
    """The files ``modules`` import (:func:`module_sources`), less ``not_run``: files the code imports but
    never runs. A ``not_run`` entry the code does not import is an error (a stale entry)."""
    imported = module_sources(*modules)
    stale = sorted(set(not_run) - set(imported))
    if stale:
        raise ValueError(f"{what}: not_run lists files its code does not import: {stale}")
    return [f for f in imported if f not in not_run]


#: the table of distances (hlm.distances): an input only of the jobs that compute a distance of it
DISTANCE_TABLE = "distances/_registry.py"

#: What an evaluation job runs besides its method's estimator module: the job script's imports
#: (workflow/scripts/evaluate.py) and the evaluation stage.
STAGE_MODULES = ("hlm.pipeline.jobs", "hlm.pipeline.provenance", "hlm.pipeline.stages.evaluate")


def estimator_modules(method) -> tuple[str, ...]:
    """The modules that define a method's estimator and the classifier it wraps (``method``: its
    ``MethodSpec``): a family's public name (``hlm.neighbors:KNNClassifier``) resolved to its private module
    (``hlm.neighbors._knn``)."""
    return tuple(defining_module(*e.split(":")) for e in (method.estimator, method.wraps) if e)


def method_sources(method) -> list[str]:
    """The source files a method's jobs depend on (``method``: its ``MethodSpec``): everything the evaluation
    stage and its estimator's modules import, less its ``not_run``."""
    return run_sources(f"method {method.id!r}", (*STAGE_MODULES, *estimator_modules(method)), method.not_run)


#: the model stage's (hlm.pipeline.stages.model.fit) imports it never runs: it reads the run's artifacts, so the
#: readers of raw files, the distance table and the row blocks (``hlm fit``'s path) are not its code
MODEL_NOT_RUN = ("datasets/_prepare.py", "datasets/_readers.py", "datasets/_generated.py", "datasets/_series.py",
                 "datasets/_sequences.py", "distances/_blocks.py", "distances/_registry.py")


def model_sources(method) -> list[str]:
    """The source files a method's model fit (rule fit_model) depends on: the model stage's and its estimator's
    modules, less the method's ``not_run`` and :data:`MODEL_NOT_RUN`."""
    return run_sources(f"model of method {method.id!r}",
                       ("hlm.pipeline.jobs", "hlm.pipeline.stages.model", *estimator_modules(method)),
                       (*method.not_run, *MODEL_NOT_RUN))


def incremental_sources(scheme: str) -> list[str]:
    """The source files an incremental scheme's jobs depend on (as ``method_sources``); the online KDE schemes
    add their learner's, which the job imports by name."""
    from hlm.pipeline.incremental import INCREMENTAL_MODULES, INCREMENTAL_NOT_RUN, ONLINE_KDE_LEARNER, VECTOR_SCHEMES

    extra = (ONLINE_KDE_LEARNER,) if scheme in VECTOR_SCHEMES else ()
    return run_sources("the incremental jobs", (*INCREMENTAL_MODULES, *extra), INCREMENTAL_NOT_RUN)


def incremental_report_sources() -> list[str]:
    """The source files of the incremental report (figure and table), with the paper's numbers."""
    return [*module_sources("hlm.pipeline.jobs", "hlm.pipeline.incremental.report"), "pipeline/incremental/paper.yaml"]


def defining_module(module: str, name: str) -> str:
    """The module that defines ``module.name``: for a family's public name, the private module its package's
    ``_EXPORTS`` names; else ``module`` itself."""
    return _exports(module).get(name, module)


def protocol_sources(protocol, methods: dict) -> list[str]:
    """The source files a protocol's jobs depend on (``protocol``: its ``ProtocolSpec``; ``methods``: the method
    table): what the job script and its run module import, and the estimators of its methods; not its table."""
    estimators = [m for method in protocol.methods for m in estimator_modules(methods[method])]
    # the protocols read feature vectors, never a distance of the table (which the data set readers import)
    return run_sources(f"the {protocol.id} protocol", (*protocol.job_modules, *estimators),
                       (DISTANCE_TABLE, *protocol.entry_files))


def protocol_table_sources(protocol) -> list[str]:
    """The source files of a protocol's table job, with the paper's numbers (``paper.yaml``) where it has them."""
    numbers = Path(*protocol.package.split(".")[1:], "paper.yaml")
    return [*module_sources(*protocol.table_modules),
            *([str(numbers)] if (PACKAGE_DIR / numbers).is_file() else [])]


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
def _tree(module: str) -> ast.Module:
    return ast.parse(_path(module).read_text(), filename=str(_path(module)))


@cache
def _exports(module: str) -> dict[str, str]:
    """A package's ``_EXPORTS`` table (public name -> defining module), read from its ``__init__.py``."""
    path = _path(module)
    if path is None or path.name != "__init__.py":
        return {}
    for node in _tree(module).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "_EXPORTS" for t in node.targets):
            return ast.literal_eval(node.value)
    return {}


@cache
def _imports(module: str) -> frozenset[str]:
    """The hlm modules named by the import statements anywhere in ``module``'s source (a package's public
    name: the module its ``_EXPORTS`` names)."""
    found = set()
    for node in ast.walk(_tree(module)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                raise ValueError(f"module_sources: {module} uses a relative import; use hlm.* names")
            names = [node.module, *(_exports(node.module).get(alias.name, f"{node.module}.{alias.name}")
                                    for alias in node.names)]
        else:
            continue
        found.update(name for name in names if _path(name) is not None)
    return frozenset(found)
