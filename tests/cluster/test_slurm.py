"""The pipeline and HLM's Dask on a real one-node SLURM cluster (tests/cluster/slurm.py), started by the tests.

``make test-cluster`` runs them (root, Debian's packages; about 20 minutes, most of it the SLURM executor's status
checks, 40 s apart). The small run (.test/cluster.yaml: two data sets, four methods, the incremental stage, LLC-PC's
protocol, MLflow, the models, the tables) is run three times:

- locally, on 2 cores: the reference;
- on the cluster with one job given too little memory (``--set-resources knn:mem_mb=...``): SLURM kills it, the run
  stops and says which rule and how much memory; nothing written is corrupt;
- on the cluster again, as a plain rerun, with a method job cancelled (``scancel``) when it has reached its fault
  point (hlm.pipeline.faults: it signals by a file, so the cancel cannot race): Snakemake submits it again, and
  the run completes without recomputing what the first cluster run finished.

The cluster's tables and evaluations equal the local ones: ``error_rates.csv`` byte for byte, and every
evaluation's and prediction's Parquet but for the run-time columns, also byte for byte once those are dropped.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workflow"))
from slurm import SlurmCluster  # noqa: E402
from test_faults import copy_project, files  # noqa: E402
from test_workflow import BIN, ROOT, _env  # noqa: E402

pytestmark = pytest.mark.cluster

SMALL = yaml.safe_load((ROOT / ".test/cluster.yaml").read_text())
DATASETS, METHODS, N_SPLITS = tuple(SMALL["datasets"]), tuple(SMALL["methods"]), SMALL["n_splits"]
#: the (data set, method) pairs the small run evaluates: the linear SVM on vectors needs Sonar's features
PAIRS = {(d, m) for d in DATASETS for m in METHODS} - {("aural_sonar", "svm_vector_linear")}
ARGS = ["--configfile", "config/config.yaml", ".test/cluster.yaml"]
TIMEOUT = 1800  # seconds, for one run
#: the job given too little memory: it needs about 300 MB (a Python with numpy and scikit-learn)
STARVED, STARVED_MB = ("knn", "sonar"), 100
#: the job cancelled while it holds at its fault point: the starved one, which the rerun must run
CANCELLED = STARVED


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with SlurmCluster(tmp_path_factory.mktemp("slurm")) as running:
        yield running


def _run(project: Path, *args: str, env: dict | None = None, cluster: SlurmCluster | None = None,
         wait: bool = True):
    cmd = [str(BIN / "snakemake"), *(["--workflow-profile", "profiles/slurm"] if cluster else ["--cores", "2"]),
           *ARGS, *args]
    full_env = {**_env(project), **(cluster.env if cluster else {}), **(env or {})}
    out = project / f"snakemake-{time.monotonic_ns()}.out"
    with open(out, "w") as fh:
        proc = subprocess.Popen(cmd, cwd=project, env=full_env, stdout=fh, stderr=subprocess.STDOUT,
                                start_new_session=True)
    if not wait:
        return proc, out
    try:
        proc.wait(TIMEOUT)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise
    return proc.returncode, out.read_text()


def _without_times(path: Path) -> bytes:
    """The Parquet file's table without its run-time columns (``*_seconds``), written again: its bytes."""
    table = pq.read_table(path)
    table = table.drop_columns([c for c in table.column_names if c.endswith("_seconds")])
    sink = io.BytesIO()
    pq.write_table(table.replace_schema_metadata(None), sink)
    return sink.getvalue()


def _check_artifacts(project: Path) -> None:
    """Nothing half-written: no temporaries, every Parquet readable, every evaluation whole."""
    assert not list(project.rglob("*.tmp")) and not list(project.rglob(".artifact.uploading.*"))
    for parquet in (project / "results").rglob("*.parquet"):
        pq.read_table(parquet)
    for evaluation in (project / "results/evaluation").rglob("*.parquet"):
        assert list(pq.read_table(evaluation).column("split").to_pylist()) == list(range(N_SPLITS)), evaluation


def _check_mlflow(project: Path, pairs: set[tuple[str, str]]) -> None:
    """Exactly one active parent run per (data set, method) of ``pairs`` with one child per split, all finished."""
    from mlflow.entities import ViewType
    from mlflow.tracking import MlflowClient

    client = MlflowClient(f"sqlite:///{project / 'mlflow.db'}")
    exp = client.get_experiment_by_name("hlm")
    runs = client.search_runs([exp.experiment_id], run_view_type=ViewType.ACTIVE_ONLY, max_results=2000)
    parents = [r for r in runs if r.data.tags.get("hlm.role") == "parent"]
    got = sorted(tuple(r.data.tags["hlm.pair"].split("/")) for r in parents)
    assert got == sorted(pairs), got
    for parent in parents:
        children = [r for r in runs if r.data.tags.get("mlflow.parentRunId") == parent.info.run_id]
        assert sorted(int(r.data.tags["hlm.split"]) for r in children) == list(range(N_SPLITS))
        assert {r.info.status for r in [parent, *children]} == {"FINISHED"}


def _slurm_job_of(pid: int) -> str:
    """The SLURM job a process runs in (its SLURM_JOB_ID)."""
    environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    found = [v.split(b"=", 1)[1].decode() for v in environ if v.startswith(b"SLURM_JOB_ID=")]
    assert found, f"process {pid} is not in a SLURM job"
    return found[0]


@pytest.fixture(scope="module")
def local(tmp_path_factory):
    project = copy_project(tmp_path_factory.mktemp("local"))
    code, out = _run(project)
    assert code == 0, out[-3000:]
    return project


@pytest.fixture(scope="module")
def on_cluster(cluster, tmp_path_factory):
    """The two cluster runs of the module docstring, in one copy of the project."""
    project = copy_project(tmp_path_factory.mktemp("on_cluster"))
    (project / "profiles").mkdir()
    (project / "profiles/slurm").symlink_to(ROOT / "profiles/slurm", target_is_directory=True)
    rule, dataset = STARVED
    code, starved_out = _run(project, "--set-resources", f"{rule}:mem_mb={STARVED_MB}", cluster=cluster)
    after_starved = files(project / "results")
    _check_artifacts(project)

    # the plain rerun, with CANCELLED's job held at its fault point and cancelled there
    method, dataset = CANCELLED
    signal_file = project / "fault.pid"
    proc, out = _run(project, cluster=cluster, wait=False,
                     env={"HLM_FAULT_POINT": f"evaluate/{dataset}/{method}", "HLM_FAULT_SIGNAL": str(signal_file)})
    deadline = time.monotonic() + TIMEOUT
    while not (signal_file.is_file() and signal_file.read_text()):
        assert proc.poll() is None, f"the rerun ended before {method}/{dataset} reached its fault point:\n" \
                                    f"{out.read_text()[-3000:]}"
        assert time.monotonic() < deadline, "timed out waiting for the fault point"
        time.sleep(0.2)
    job = _slurm_job_of(int(signal_file.read_text()))
    cluster.run("scancel", job)
    proc.wait(TIMEOUT)
    return {"project": project, "starved": (code, starved_out), "after_starved": after_starved,
            "rerun": (proc.returncode, out.read_text()), "cancelled_job": job}


def test_the_memory_kill_stops_the_run_and_says_why(on_cluster):
    code, out = on_cluster["starved"]
    rule, dataset = STARVED
    assert code != 0, out[-3000:]
    assert f"Error in rule {rule}:" in out
    lines = [ln for ln in out.splitlines() if ln.startswith(f"hlm: error: rule {rule} ({dataset})")]
    assert len(lines) == 1, out[-3000:]  # one line per job, for its last attempt (the profile retries twice)
    line = lines[0]
    assert "(3 attempts): killed by SLURM for its memory" in line, line
    assert f"of the {STARVED_MB} MB asked (mem_mb)" in line, line
    assert f"--set-resources {rule}:mem_mb=" in line
    assert f"evaluation/{dataset}/{rule}.parquet" not in on_cluster["after_starved"]


def test_the_cancelled_job_is_retried_and_the_rerun_completes(on_cluster):
    code, out = on_cluster["rerun"]
    assert code == 0, out[-3000:]
    job = on_cluster["cancelled_job"]
    assert f"SLURM-job '{job}' failed, SLURM status is: 'CANCELLED'" in out, out[-3000:]
    assert "Trying to restart job" in out
    _check_artifacts(on_cluster["project"])
    _check_mlflow(on_cluster["project"], PAIRS)


def test_the_rerun_recomputed_nothing_that_had_finished(on_cluster):
    now = files(on_cluster["project"] / "results")
    changed = sorted(p for p, stamp in on_cluster["after_starved"].items() if now.get(p) != stamp)
    assert not changed, f"rewritten or removed by the rerun: {changed}"
    assert len(on_cluster["after_starved"]) > 10  # the starved run had finished other jobs


def test_cluster_results_equal_local(local, on_cluster):
    cluster_project = on_cluster["project"]
    table = "results/tables/error_rates.csv"
    assert (cluster_project / table).read_bytes() == (local / table).read_bytes()
    compared = 0
    for kind in ("evaluation", "predictions", "incremental", "llc_pc"):
        for path in sorted((local / "results" / kind).rglob("*.parquet")):
            other = cluster_project / path.relative_to(local)
            assert _without_times(other) == _without_times(path), path.relative_to(local)
            compared += 1
    assert compared == 2 * len(PAIRS) + 2  # evaluations, predictions, the incremental scheme, LLC-PC on Glass


def test_hmac_on_dask_jobqueue_equals_serial(cluster):
    """Approaches I and II on workers that dask-jobqueue's SLURMCluster submits as SLURM jobs: the labels are the
    serial ones, and the scheduler and its dashboard listen on 127.0.0.1."""
    from dask_jobqueue import SLURMCluster
    from distributed import Client
    from sklearn.datasets import load_iris

    from hlm.hmac import bandwidth_sequence, hmac

    X = np.unique(load_iris().data, axis=0)
    bandwidths = bandwidth_sequence(X, n_levels=6)
    serial = hmac(X, bandwidths)
    os.environ.update(cluster.env)
    with SLURMCluster(cores=1, processes=1, memory="1GB", account="hlm", queue="hlm", walltime="00:20:00",
                      python=str(BIN / "python"), log_directory=str(cluster.root / "dask-logs"),
                      scheduler_options={"host": "127.0.0.1", "dashboard_address": "127.0.0.1:0"},
                      worker_extra_args=["--host", "127.0.0.1"]) as slurm:
        assert slurm.scheduler_address.startswith("tcp://127.0.0.1:")
        slurm.scale(2)
        with Client(slurm) as client:
            client.wait_for_workers(2, timeout=300)
            jobs = cluster.run("squeue", "-h", "-o", "%j").stdout.split()
            assert len([j for j in jobs if j.startswith("dask")]) == 2, jobs
            for approach in ("I", "II"):
                parallel = hmac(X, bandwidths, parallel=approach, scheduler=slurm.scheduler_address,
                                connect_timeout=60)
                assert len(parallel.levels) == len(serial.levels)
                for level, (a, b) in enumerate(zip(serial.levels, parallel.levels, strict=True)):
                    np.testing.assert_array_equal(a.labels, b.labels, err_msg=f"approach {approach}, level {level}")
