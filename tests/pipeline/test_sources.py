"""The source files a method's jobs depend on (hlm.pipeline.sources, hlm.pipeline.methods.method_sources)."""

import dataclasses
import json
import select
import subprocess
import sys
from pathlib import Path

import pytest

from hlm.pipeline.methods import METHODS
from hlm.pipeline.protocols import protocols
from hlm.pipeline.protocols.spec import JOB_MODULES, TABLE_STAGE
from hlm.pipeline.sources import (
    PACKAGE_DIR,
    STAGE_MODULES,
    defining_module,
    estimator_modules,
    incremental_sources,
    module_sources,
    protocol_sources,
    protocol_table_sources,
)
from hlm.pipeline.sources import method_sources as _method_sources

#: the pipeline's plumbing, no numerical code: run once, not again on the other CPU dispatch (Makefile)
pytestmark = pytest.mark.plumbing


def method_sources(method_id: str) -> list[str]:
    return _method_sources(METHODS[method_id])


#: a server that has imported the third-party libraries but nothing of hlm, and forks a child per request
#: (one line of JSON: the modules to import) that answers with the hlm files it then has loaded: each answer is
#: that of a fresh interpreter, without paying numpy's, scipy's and scikit-learn's imports every time
_SERVER = r"""
import json, os, sys
import numpy, pandas, scipy.optimize, scipy.special, scipy.stats, sklearn.base, sklearn.model_selection
for line in sys.stdin:
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        os.dup2(2, 1)  # what an import prints goes to stderr: the server's stdout carries the answers only
        try:
            import importlib
            for m in json.loads(line):
                importlib.import_module(m)
            answer = {"files": sorted(getattr(v, "__file__", None) or "" for n, v in sys.modules.items()
                                      if n == "hlm" or n.startswith("hlm."))}
        except BaseException:
            import traceback
            answer = {"error": traceback.format_exc()}
        os.write(write, json.dumps(answer).encode())
        os._exit(0)
    os.close(write)
    chunks = []
    while chunk := os.read(read, 1 << 16):
        chunks.append(chunk)
    os.close(read)
    os.waitpid(pid, 0)
    print(b"".join(chunks).decode(), flush=True)
"""


@pytest.fixture(scope="module")
def _server():
    import os

    # one BLAS thread: no thread pool exists when the server forks
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    proc = subprocess.Popen([sys.executable, "-c", _SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                            env=env)
    yield proc
    proc.stdin.close()
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


_PROC = {}


@pytest.fixture(autouse=True, scope="module")
def _runtime(_server):
    _PROC["server"] = _server
    yield
    _PROC.clear()


def _runtime_modules(*modules: str) -> set[str]:
    """The hlm source files a fresh interpreter has loaded after importing ``modules`` (a forked child of a
    server with no hlm module loaded)."""
    server = _PROC["server"]
    server.stdin.write(json.dumps(list(modules)) + "\n")
    server.stdin.flush()
    # a guard against a hung child, not a measurement: an answer takes about 0.1 s
    if not select.select([server.stdout], [], [], 600)[0]:
        pytest.fail(f"no answer from the import server for {modules} in 600 s")
    line = server.stdout.readline()
    assert line, "the import server died (its traceback is on stderr)"
    answer = json.loads(line)
    assert "error" not in answer, f"importing {modules} failed:\n{answer.get('error')}"
    assert answer["files"], f"importing {modules} loaded no hlm file"
    files = {f for f in answer["files"] if f}
    return {str(Path(f).resolve().relative_to(PACKAGE_DIR)) for f in files}


@pytest.mark.parametrize("estimator_module", sorted({m for spec in METHODS.values() for m in estimator_modules(spec)}))
def test_static_sources_cover_what_an_evaluation_job_imports(estimator_module):
    """Everything a job loads at run time (the stage and the estimator module) is found by reading the sources."""
    loaded = _runtime_modules(*STAGE_MODULES, estimator_module)
    assert loaded <= set(module_sources(*STAGE_MODULES, estimator_module)), loaded - set(
        module_sources(*STAGE_MODULES, estimator_module))


def test_incremental_sources_cover_what_an_incremental_job_imports():
    """An incremental job loads its protocol and the learners; every file it loads is a declared input,
    except the clusterings it imports but never runs, which are left out on purpose."""
    from hlm.pipeline.incremental import INCREMENTAL_MODULES, INCREMENTAL_NOT_RUN

    loaded = _runtime_modules(*INCREMENTAL_MODULES)
    declared = set(incremental_sources("scheme_ii"))
    assert loaded - declared <= set(INCREMENTAL_NOT_RUN), loaded - declared
    assert {"local_mapping/incremental/_scheme_ii.py", "local_mapping/_clustering/vsh.py",
            "local_mapping/_gamma.py"} <= declared
    assert not {"local_mapping/_clustering/ward.py", "local_mapping/_kernel_hlm.py",
                "pipeline/incremental/report.py"} & declared
    assert not any(f.startswith("kde/") for f in declared)  # the online KDE learner is imported by name
    # the online KDE schemes load their learner by name at run time: declared for them
    loaded = _runtime_modules(*INCREMENTAL_MODULES, "hlm.kde._learner")
    declared = set(incremental_sources("odkde"))
    assert loaded - declared <= set(INCREMENTAL_NOT_RUN), loaded - declared
    assert {"kde/_learner.py", "kde/_compression.py"} <= declared


@pytest.mark.parametrize("protocol", sorted(protocols()))
def test_protocol_sources_cover_the_protocol_but_not_its_table(protocol):
    """A protocol's jobs depend on what they run (the job script's imports, its run module, the estimators
    of its methods); editing its table reruns none of them. Its table's job depends on the table module and
    the paper's numbers."""
    spec = protocols()[protocol]
    estimators = [m for method in spec.methods for m in estimator_modules(METHODS[method])]
    loaded = _runtime_modules(*JOB_MODULES, spec.run_module, *estimators)
    declared = set(protocol_sources(spec, METHODS))
    # the entry, the table and the spec are imported and never change a result: left out on purpose
    assert loaded - declared <= set(spec.entry_files), loaded - declared
    assert not set(spec.entry_files) & declared and "distances/_registry.py" not in declared
    assert f"pipeline/protocols/{protocol}/run.py" in declared
    assert f"pipeline/protocols/{protocol}/table.py" not in declared
    assert not any(f.endswith(".yaml") for f in declared)
    tables = set(protocol_table_sources(spec))
    assert _runtime_modules(*TABLE_STAGE, spec.table_module) <= tables
    numbers = f"pipeline/protocols/{protocol}/paper.yaml"
    assert (numbers in tables) == (PACKAGE_DIR / numbers).is_file()


def test_protocols_do_not_depend_on_each_others_code():
    """Chapter 4's two protocols share their partitions and names through a module of their own: editing the
    grid's run module, its view or MDA-RR reruns no subspace selection job, and the selection's code reruns no
    grid job."""
    selection = set(protocol_sources(protocols()["subspace_selection"], METHODS))
    grid = set(protocol_sources(protocols()["subspace_gmm"], METHODS))
    assert "pipeline/protocols/chapter4_parts.py" in selection & grid
    assert not {f for f in selection if f.startswith("pipeline/protocols/subspace_gmm/")}
    assert "mixture/_mda_rr.py" not in selection and "mixture/_mda_rr.py" in grid
    assert not {f for f in grid if f.startswith("pipeline/protocols/subspace_selection/")}
    tables = set(protocol_table_sources(protocols()["subspace_selection"]))
    assert not {f for f in tables if f.startswith("pipeline/protocols/subspace_gmm/")}


def test_protocol_sources_follow_the_methods_estimators():
    """The odKDE protocol makes its estimators by method id: their modules are its jobs' inputs, not other
    families'."""
    declared = set(protocol_sources(protocols()["online_kde"], METHODS))
    assert {"kde/_online.py", "kde/_kde_cv.py", "svm/_similarity.py", "pipeline/protocols/common.py",
            "datasets/_generated.py"} <= declared
    assert not {"local_mapping/_mixture_hlm.py", "llc_pc/_llc_pc.py"} & declared


def test_public_names_count_as_their_defining_module():
    """``from hlm.neighbors import KNNClassifier`` depends on hlm/neighbors/_knn.py, not on the family's other
    modules; the method table's public names resolve the same way."""
    found = set(module_sources("hlm.pipeline.incremental.run"))
    assert {"local_mapping/incremental/__init__.py", "local_mapping/incremental/_scheme_ii.py"} <= found
    assert defining_module("hlm.neighbors", "KNNClassifier") == "hlm.neighbors._knn"
    assert estimator_modules(METHODS["affinity_knn"]) == ("hlm.neighbors._weighted",)
    assert "neighbors/_weighted.py" not in method_sources("knn")


def test_imports_inside_functions_and_packages_count():
    found = module_sources("hlm.local_mapping._mixture_hlm")
    assert "local_mapping/_kernel_hlm.py" in found  # imported inside a method (the "kernel" candidate)
    assert {f"local_mapping/_clustering/{f}.py" for f in ("vsh", "generalized_kmeans", "ward")} <= set(found)
    assert {"__init__.py", "local_mapping/__init__.py", "local_mapping/_clustering/__init__.py"} <= set(found)


def test_method_sources_leave_out_only_what_the_method_never_runs():
    for method in ("svm_kernel_clip", "svm_features_rbf", "svm_knn", "svm_vector_linear"):
        assert "svm/_libsvm.py" in method_sources(method)  # the direct libsvm fits
    vsh = method_sources("hlm_vsh")
    assert "local_mapping/_clustering/vsh.py" in vsh and "local_mapping/_clustering/ward.py" not in vsh
    assert "local_mapping/_kernel_hlm.py" not in vsh
    assert "local_mapping/_kernel_hlm.py" in method_sources("hlm_kernel_vsh")
    assert "distances/_reciprocal.py" not in method_sources("knn")
    assert "distances/_reciprocal.py" in method_sources("kri_knn")
    assert "neighbors/_kri.py" not in method_sources("affinity_knn")
    assert "neighbors/_kri.py" in method_sources("kri_knn")
    # its kernel has its own copy of the tie rule (tested equal)
    assert "neighbors/_knn.py" not in method_sources("local_sda")
    assert "pipeline/tracking.py" not in method_sources("knn")  # logged by the track rule, not by method jobs


def test_stale_not_run_entry_is_an_error(monkeypatch):
    monkeypatch.setitem(METHODS, "knn", dataclasses.replace(METHODS["knn"], not_run=("svm/_psvm/solver.py",)))
    with pytest.raises(ValueError, match="svm/_psvm/solver.py"):
        method_sources("knn")


def test_unknown_module_is_an_error():
    with pytest.raises(ValueError, match="hlm.no_such_module"):
        module_sources("hlm.no_such_module")
