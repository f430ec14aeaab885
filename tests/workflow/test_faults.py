"""Faults: a method job and the MLflow ``track`` job SIGKILLed mid-way, then a plain rerun
(it completes, nothing is corrupt, finished jobs are kept, MLflow holds one parent per pair
with one child per split); and the same results on one core as on two.

No kill depends on timing: the job to be killed holds at its fault point (hlm.pipeline.faults: a method
job after its first split, nothing written; a track job after its parent run and first child, both
RUNNING), and signals it by a file; the test kills it then.

Each scenario runs a small config in its own copy of the project (see test_workflow.py)."""

import contextlib
import hashlib
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest
import yaml
from test_workflow import BIN, ROOT, _env, snakemake

pytestmark = pytest.mark.workflow

#: the small run (.test/faults.yaml)
SMALL = yaml.safe_load((ROOT / ".test/faults.yaml").read_text())
DATASETS, METHODS, N_SPLITS = tuple(SMALL["datasets"]), tuple(SMALL["methods"]), SMALL["n_splits"]
#: the small run's config (.test/faults.yaml), on top of the default config
ARGS = ["--configfile", "config/config.yaml", ".test/faults.yaml"]
TIMEOUT = 600  # seconds, for any one wait


def copy_project(dest: Path) -> Path:
    """A copy of the project (code, config, raw data, the small configs of .test/)."""
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info")
    for name in ("Snakefile", "workflow", "src", "config", "envs", "data", ".test"):
        src = ROOT / name
        (shutil.copytree(src, dest / name, ignore=ignore) if src.is_dir() else shutil.copy2(src, dest / name))
    return dest


def files(root: Path) -> dict[str, tuple[int, str]]:
    """Relative path -> (mtime in ns, SHA-256) of every file under ``root``."""
    return {str(p.relative_to(root)): (p.stat().st_mtime_ns, hashlib.sha256(p.read_bytes()).hexdigest())
            for p in sorted(root.rglob("*")) if p.is_file()}


# --------------------------------------------------------------------------- killing one job
def _job_pid(log: Path, snakemake_pid: int) -> int | None:
    """The pid of the job process that has its log file ``log`` open (our jobs open it first thing)."""
    target = str(log.resolve())
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == snakemake_pid:
            continue
        try:
            if any(os.readlink(fd.path) == target for fd in os.scandir(f"/proc/{entry.name}/fd")):
                return int(entry.name)
        except OSError:  # gone, or not ours to look at
            continue
    return None


def _wait(what: str, condition, proc, out: Path, interval: float = 0.02):
    """Poll ``condition()`` until it returns a true value; fail clearly if Snakemake ends first."""
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        if proc.poll() is not None:
            raise AssertionError(f"snakemake ended (status {proc.returncode}) before {what}:\n"
                                 f"{out.read_text()[-3000:]}")
        time.sleep(interval)
    _kill_all(proc)
    raise AssertionError(f"timed out waiting for {what}")


def _kill_all(proc) -> None:
    """SIGKILL Snakemake and every job it started (its own session: nothing outlives a failed test)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def _start(project: Path, fault: str | None = None) -> tuple[subprocess.Popen, Path]:
    """Snakemake on the small config; ``fault``: the fault point (hlm.pipeline.faults) a job holds at."""
    out = project / f"snakemake-{time.monotonic_ns()}.out"
    cmd = [str(BIN / "snakemake"), "--cores", "2", *ARGS]
    env = _env(project)
    if fault:
        env.update(HLM_FAULT_POINT=fault, HLM_FAULT_SIGNAL=str(project / "fault.pid"), HLM_FAULT_WAIT=str(TIMEOUT))
    with open(out, "w") as fh:
        proc = subprocess.Popen(cmd, cwd=project, env=env, stdout=fh, stderr=subprocess.STDOUT,
                                start_new_session=True)
    return proc, out


def _held(project: Path, proc, out: Path) -> int:
    """The pid of the job holding at the fault point, once it has signalled (its file, written whole)."""
    signal_file = project / "fault.pid"
    pid = int(_wait("the job reached its fault point", lambda: signal_file.is_file() and signal_file.read_text(),
                    proc, out))
    signal_file.unlink()
    return pid


def _kill_held(project: Path, proc, out: Path, log: Path, what: str) -> None:
    """SIGKILL the job holding at the fault point; then check it was the job of ``log`` (the killed pid is
    dead, so it cannot have been reused meanwhile)."""
    pid = _held(project, proc, out)
    owner = _job_pid(log, proc.pid)
    _kill(pid, what)
    if owner != pid:
        _kill_all(proc)
        raise AssertionError(f"the process at the fault point ({pid}) is not {what} ({owner})")


def _finish(proc, out: Path) -> str:
    try:
        proc.wait(TIMEOUT)
    except subprocess.TimeoutExpired:
        _kill_all(proc)
        raise
    return out.read_text()


def _kill(pid: int, what: str) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        raise AssertionError(f"{what} ended before it could be killed") from None


def _track_runs(db: Path, dataset: str) -> dict[str, int]:
    """Status -> number of MLflow runs (any lifecycle) of ``dataset``'s pairs, read from the SQLite file.

    Read-write, as MLflow opens it: a killed writer's hot journal is rolled back first.
    """
    if not db.exists():
        return {}
    try:
        with sqlite3.connect(db, timeout=0.05) as con:
            rows = con.execute(
                "SELECT r.status, count(*) FROM runs r JOIN tags t ON t.run_uuid = r.run_uuid "
                "WHERE t.key = 'hlm.pair' AND t.value LIKE ? GROUP BY r.status", (f"{dataset}/%",)).fetchall()
        return dict(rows)
    except sqlite3.OperationalError:  # locked by the writer, or no tables yet
        return {}


@pytest.fixture(scope="module")
def resumed(tmp_path_factory):
    """Run 1: SIGKILL the sonar/kernel_hlm job after its first split. Run 2 (plain rerun): SIGKILL the first
    data set's ``track`` job once it has created its first MLflow runs. Run 3 (plain rerun): completes.

    Returns the project, the files under results/ after runs 1 and 2, the killed data set's
    MLflow runs by status after the kill, and the three runs' output.
    """
    project = copy_project(tmp_path_factory.mktemp("faults"))
    # run 1: a method job
    proc, out = _start(project, fault="evaluate/sonar/kernel_hlm")
    _kill_held(project, proc, out, project / "logs/evaluate/sonar/kernel_hlm.log", "the sonar/kernel_hlm job")
    first = _finish(proc, out)
    assert proc.returncode != 0, f"the killed job was not reported:\n{first[-3000:]}"
    assert "died with <Signals.SIGKILL: 9>" in first and "Error in rule kernel_hlm:" in first, first[-3000:]
    after_first = files(project / "results")

    # run 2: the MLflow job of the first data set whose methods are done
    # sonar's track job: it cannot have run in run 1, whose sonar/kernel_hlm job was killed
    dataset = "sonar"
    assert f"tracking/{dataset}.json" not in after_first
    proc, out = _start(project, fault=f"track/{dataset}")
    _kill_held(project, proc, out, project / f"logs/track/{dataset}.log", f"the {dataset} track job")
    second = _finish(proc, out)
    assert proc.returncode != 0, f"the killed track job was not reported:\n{second[-3000:]}"
    assert "Error in rule track:" in second, second[-3000:]
    killed_runs = _track_runs(project / "mlflow.db", dataset)
    after_second = files(project / "results")

    # a temporary that a job killed mid-write leaves (as in test_artifacts.py), a minute old
    stale = project / "results/evaluation/sonar/.knn.parquet.0a1b2c3d.tmp"
    stale.parent.mkdir(parents=True, exist_ok=True)
    stale.write_bytes(b"PAR1 half-written")
    os.utime(stale, (time.time() - 60,) * 2)

    # run 3: a plain rerun
    proc, out = _start(project)
    third = _finish(proc, out)
    assert proc.returncode == 0, f"the rerun failed:\n{third[-3000:]}"
    return {"project": project, "after_first": after_first, "after_second": after_second, "dataset": dataset,
            "killed_runs": killed_runs, "outputs": (first, second, third), "stale": stale}


def test_killed_jobs_left_no_output(resumed):
    after_first, after_second = resumed["after_first"], resumed["after_second"]
    assert not {"evaluation/sonar/kernel_hlm.parquet", "predictions/sonar/kernel_hlm.parquet"} & set(after_first)
    assert f"tracking/{resumed['dataset']}.json" not in after_second
    # the track job was killed mid-way: it had begun logging and not finished
    assert resumed["killed_runs"].get("RUNNING", 0) >= 1, resumed["killed_runs"]


def test_rerun_completes_and_nothing_is_corrupt(resumed):
    project = resumed["project"]
    third = resumed["outputs"][2]
    assert "hlm: removed results/evaluation/sonar/.knn.parquet.0a1b2c3d.tmp, left by a killed job" in third
    assert not resumed["stale"].exists()
    assert not [p for p in project.rglob("*.tmp")] and not list(project.rglob(".artifact.uploading.*"))
    results = project / "results"
    for d in DATASETS:
        for m in METHODS:
            ev = pq.read_table(results / f"evaluation/{d}/{m}.parquet").to_pandas()
            assert list(ev.split) == list(range(N_SPLITS)) and ev.error_rate.between(0, 60).all()
            pred = pq.read_table(results / f"predictions/{d}/{m}.parquet").to_pandas()
            assert len(pred) == ev.n_test.sum()
    for parquet in results.rglob("*.parquet"):
        pq.read_table(parquet)
    table = pd.read_csv(results / "tables/error_rates.csv")
    assert list(table.method) == list(METHODS) and not table.isna().any().any()
    assert (results / "figures/error_rates.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    proc = snakemake(project, *ARGS, "--dry-run")
    assert "Nothing to be done" in proc.stdout + proc.stderr


def test_results_and_their_mlflow_copies_have_the_umask_mode(resumed):
    """Readable by a group sharing the folder when the umask allows it: not mkstemp's 0600."""
    umask = os.umask(0o022)
    os.umask(umask)
    project = resumed["project"]
    written = [p for root in ("results", "mlruns") for p in (project / root).rglob("*") if p.is_file()]
    assert len([p for p in written if "mlruns" in p.parts]) >= 2 * len(DATASETS) * len(METHODS)
    modes = {oct(p.stat().st_mode & 0o777) for p in written}
    assert modes == {oct(0o666 & ~umask)}


def test_finished_jobs_are_not_recomputed(resumed):
    now = files(resumed["project"] / "results")
    for before in (resumed["after_first"], resumed["after_second"]):
        changed = sorted(path for path, stamp in before.items() if now.get(path) != stamp)
        assert not changed, f"rewritten or removed by a rerun: {changed}"
    # the rerun ran what was left: the killed method job and the killed track job
    assert "evaluation/sonar/kernel_hlm.parquet" in now and f"tracking/{resumed['dataset']}.json" in now


def test_mlflow_has_one_parent_per_pair_and_one_child_per_split(resumed):
    from mlflow.entities import ViewType
    from mlflow.tracking import MlflowClient

    project = resumed["project"]
    client = MlflowClient(f"sqlite:///{project / 'mlflow.db'}")
    exp = client.get_experiment_by_name("hlm")
    runs = client.search_runs([exp.experiment_id], run_view_type=ViewType.ACTIVE_ONLY, max_results=1000)
    parents = [r for r in runs if r.data.tags.get("hlm.role") == "parent"]
    pairs = sorted(r.data.tags["hlm.pair"] for r in parents)
    assert pairs == sorted(f"{d}/{m}" for d in DATASETS for m in METHODS), "a pair is duplicated or missing"
    for parent in parents:
        children = [r for r in runs if r.data.tags.get("mlflow.parentRunId") == parent.info.run_id]
        assert sorted(int(r.data.tags["hlm.split"]) for r in children) == list(range(N_SPLITS)), \
            parent.data.tags["hlm.pair"]
        # its artifact copy is the result file, whole
        dataset, method = parent.data.tags["hlm.pair"].split("/")
        local = Path(client.download_artifacts(parent.info.run_id, f"evaluation/{method}.parquet", str(
            project / "downloads" / parent.info.run_id)))
        assert local.read_bytes() == (project / f"results/evaluation/{dataset}/{method}.parquet").read_bytes()
    assert len(runs) == len(parents) * (1 + N_SPLITS), "children without an active parent"
    assert {r.info.status for r in runs} == {"FINISHED"}
    # the killed job's half-logged runs were replaced, not kept
    deleted = client.search_runs([exp.experiment_id], run_view_type=ViewType.DELETED_ONLY, max_results=1000)
    assert {r.info.status for r in deleted} >= {"RUNNING"}
    # the tracking files name the active parents
    logged = {}
    for d in DATASETS:
        logged.update(json.loads((project / f"results/tracking/{d}.json").read_text())["runs"])
    assert logged == {r.data.tags["hlm.pair"]: r.info.run_id for r in parents}


# --------------------------------------------------------------------------- core count
@pytest.fixture(scope="module")
def one_core(tmp_path_factory):
    """The run on one core, uninterrupted, in its own copy of the project; and Snakemake's output."""
    project = copy_project(tmp_path_factory.mktemp("cores1"))
    proc = subprocess.run([str(BIN / "snakemake"), "--cores", "1", *ARGS], cwd=project, env=_env(project),
                          capture_output=True, text=True, timeout=TIMEOUT)
    assert proc.returncode == 0, f"--cores 1 failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return project, proc.stdout + proc.stderr


def _results(project: Path, kind: str, dataset: str, method: str) -> pd.DataFrame:
    frame = pd.read_parquet(project / f"results/{kind}/{dataset}/{method}.parquet")
    return frame.drop(columns=[c for c in frame.columns if c.endswith("_seconds")])  # run times differ


def test_same_result_on_any_core_count(one_core, resumed):
    """``--cores 1`` and ``--cores 2`` give byte-identical tables and the same per-split errors, chosen
    parameters and predictions. The two-core side is the killed and resumed run (one run fewer to
    wait for): this also shows that killing and resuming changes no result."""
    one, one_out = one_core
    two, two_out = resumed["project"], "".join(resumed["outputs"])
    # the CV of svm_features_rbf ran in 2 worker processes on 2 cores (one job per data set), in 1 on one
    assert two_out.count("threads: 2") == len(DATASETS) and "threads: 2" not in one_out
    assert "rule svm_features_rbf:" in one_out
    table = "results/tables/error_rates.csv"
    assert (one / table).read_bytes() == (two / table).read_bytes()
    for d in DATASETS:
        for m in METHODS:
            for kind in ("evaluation", "predictions"):
                pd.testing.assert_frame_equal(_results(one, kind, d, m), _results(two, kind, d, m))
