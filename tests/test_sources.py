"""The source files a method's jobs depend on (hlm.sources, hlm.methods.method_sources)."""

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest

from hlm.methods import METHODS, STAGE_MODULES, method_sources
from hlm.sources import PACKAGE_DIR, module_sources


def _runtime_modules(*modules: str) -> set[str]:
    """The hlm source files a fresh interpreter has loaded after importing ``modules``."""
    code = (
        "import importlib, json, sys\n"
        f"for m in {list(modules)!r}: importlib.import_module(m)\n"
        "print(json.dumps(sorted(getattr(m, '__file__', None) or '' for n, m in sys.modules.items()"
        " if n == 'hlm' or n.startswith('hlm.'))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    files = {f for f in json.loads(out) if f}
    return {str(Path(f).resolve().relative_to(PACKAGE_DIR)) for f in files}


@pytest.mark.parametrize("estimator_module", sorted({spec.estimator.split(":")[0] for spec in METHODS.values()}))
def test_static_sources_cover_what_an_evaluation_job_imports(estimator_module):
    """Everything a job loads at run time (the stage and the estimator module) is found by reading the sources."""
    loaded = _runtime_modules(*STAGE_MODULES, estimator_module)
    assert loaded <= set(module_sources(*STAGE_MODULES, estimator_module)), loaded - set(
        module_sources(*STAGE_MODULES, estimator_module))


def test_incremental_sources_cover_what_an_incremental_job_imports():
    """An incremental job loads its protocol and the learners; every file it loads is a declared input,
    except the clusterings it imports but never runs, which are left out on purpose."""
    from hlm.methods import INCREMENTAL_MODULES, INCREMENTAL_NOT_RUN, incremental_sources

    loaded = _runtime_modules(*INCREMENTAL_MODULES, "hlm.stages.incremental")
    declared = set(incremental_sources("scheme_ii"))
    assert loaded - declared <= set(INCREMENTAL_NOT_RUN), loaded - declared
    assert {"incremental/scheme_ii.py", "clustering/vsh.py", "gamma.py"} <= declared
    assert not {"clustering/ward.py", "models/kernel_hlm.py", "reporting/figures.py"} & declared
    assert not any(f.startswith("models/okde") for f in declared)  # the online KDE learner is imported by name
    # the online KDE schemes load their learner by name at run time: declared for them
    loaded = _runtime_modules(*INCREMENTAL_MODULES, "hlm.stages.incremental", "hlm.incremental.online_kde")
    declared = set(incremental_sources("odkde"))
    assert loaded - declared <= set(INCREMENTAL_NOT_RUN), loaded - declared
    assert {"incremental/online_kde.py", "models/okde/compression.py"} <= declared


@pytest.mark.parametrize("protocol,modules,reports", [
    ("online_kde", ("hlm.evaluation.online_kde", "hlm.models.okde", "hlm.models.kde_cv", "hlm.models.svm_similarity"),
     {"reporting/tables.py", "reporting/paper.py"}),
    ("llc_pc", ("hlm.evaluation.llc_pc", "hlm.models.llc_pc"), {"reporting/llc_pc.py", "reporting/paper.py"}),
    ("twoway_gmm", ("hlm.evaluation.twoway_gmm", "hlm.models.twoway_gmm"), {"reporting/twoway_gmm.py"}),
])
def test_protocol_sources_cover_the_protocol_but_not_its_report(protocol, modules, reports):
    """A protocol's jobs depend on what they run (its stage, the shared vector reading, its estimators);
    editing a report table does not rerun them."""
    from hlm.methods import protocol_sources

    loaded = _runtime_modules("hlm.jobs", "hlm.provenance", f"hlm.stages.{protocol}", "hlm.stages.protocol", *modules,
                              "hlm.data.prepare", "hlm.data.registry")
    declared = set(protocol_sources(protocol))
    assert loaded <= declared, loaded - declared
    assert {f"stages/{protocol}.py", "stages/protocol.py", "data/generated.py"} <= declared
    assert not reports & declared


def test_imports_inside_functions_and_packages_count():
    found = module_sources("hlm.models.mixture_hlm")
    assert "models/kernel_hlm.py" in found  # imported inside a method (the "kernel" candidate)
    assert {"clustering/vsh.py", "clustering/kmedoids.py", "clustering/ward.py"} <= set(found)
    assert {"__init__.py", "models/__init__.py", "clustering/__init__.py"} <= set(found)


def test_method_sources_leave_out_only_what_the_method_never_runs():
    for method in ("svm_kernel_clip", "svm_features_rbf", "svm_knn", "svm_vector_linear"):
        assert "models/_libsvm.py" in method_sources(method)  # the direct libsvm fits
    vsh = method_sources("hlm_vsh")
    assert "clustering/vsh.py" in vsh and "clustering/ward.py" not in vsh and "models/kernel_hlm.py" not in vsh
    assert "models/kernel_hlm.py" in method_sources("hlm_kernel_vsh")
    assert "models/from_distances.py" not in method_sources("knn")
    assert "models/from_distances.py" in method_sources("kri_knn")
    assert "models/kri.py" not in method_sources("affinity_knn") and "models/kri.py" in method_sources("kri_knn")
    # its kernel has its own copy of the tie rule (tested equal)
    assert "models/knn.py" not in method_sources("local_sda")
    assert "tracking.py" not in method_sources("knn")  # logged by the track rule, not by method jobs


def test_stale_not_run_entry_is_an_error(monkeypatch):
    monkeypatch.setitem(METHODS, "knn", dataclasses.replace(METHODS["knn"], not_run=("models/psvm/solver.py",)))
    with pytest.raises(ValueError, match="models/psvm/solver.py"):
        method_sources("knn")


def test_unknown_module_is_an_error():
    with pytest.raises(ValueError, match="hlm.no_such_module"):
        module_sources("hlm.no_such_module")
