"""A pipeline job's wrapper (hlm.pipeline.jobs.run): its log ends with the job's CPU seconds, which
benchmarks/cpu_by_rule.py sums by rule."""

import resource
import time
from pathlib import Path

from benchmark_scripts import load
from hlm.pipeline.jobs import RESOURCE_PREFIX, run

ROOT = Path(__file__).resolve().parents[2]


def _cpu_by_rule():
    return load("cpu_by_rule")


def _busy(seconds: float) -> None:
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def test_log_ends_with_the_jobs_cpu_seconds_and_they_add_up_by_rule(tmp_path):
    logs = tmp_path / "logs"
    for rel, seconds in (("evaluate/voting/knn.log", 0.3), ("evaluate/sonar/knn.log", 0.2),
                         ("track/voting.log", 0.1), ("incremental/voting/scheme_ii.log", 0.0)):
        (logs / rel).parent.mkdir(parents=True, exist_ok=True)
        before = time.process_time()
        run(lambda s=seconds: _busy(s), str(logs / rel))
        spent = time.process_time() - before
        last = (logs / rel).read_text().strip().splitlines()[-1]
        assert RESOURCE_PREFIX in last
        # the process's CPU time since it started: at least what this job spent
        assert float(last.split("cpu ")[1].split(" s")[0]) >= spent - 0.02
    (logs / "splits").mkdir()
    (logs / "splits/voting.log").write_text("killed before the end\n")
    found, unfinished = _cpu_by_rule().cpu_by_rule(logs)
    assert sorted(found) == ["incremental_scheme_ii", "knn", "track"]
    assert len(found["knn"]) == 2 and unfinished == [logs / "splits/voting.log"]
    jobs, _ = _cpu_by_rule().jobs_by_rule(logs)
    peak_mb = max(resource.getrusage(who).ru_maxrss  # this process ran the jobs: its peaks so far bound theirs
                  for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)) / 1024
    assert [cpu for cpu, _ in jobs["knn"]] == found["knn"]
    assert all(0 < rss <= peak_mb + 1 for rule in jobs for _, rss in jobs[rule])


def test_max_rss_by_rule_from_hand_written_log_lines(tmp_path, capsys):
    """Known lines in, known table out: the rule's largest max RSS, and the total's."""
    logs = tmp_path / "logs"
    for rel, line in (("evaluate/letter/knn.log", "job resources: cpu 1.50 s, max rss 1234 MB"),
                      ("evaluate/sonar/knn.log", "job resources: cpu 0.50 s, max rss 987 MB"),
                      ("preprocess/letter.log", "job resources: cpu 2.00 s, max rss 4739 MB")):
        (logs / rel).parent.mkdir(parents=True, exist_ok=True)
        (logs / rel).write_text(f"some message\n{line}\n")
    module = _cpu_by_rule()
    jobs, unfinished = module.jobs_by_rule(logs)
    assert sorted(jobs["knn"]) == [(0.5, 987), (1.5, 1234)] and jobs["preprocess"] == [(2.0, 4739)]
    assert unfinished == []
    assert module.main(["--logs", str(logs), "--markdown"]) in (0, None)
    table = capsys.readouterr().out
    assert "| preprocess | 1 | 2 | 50.0% | 4,739 |" in table
    assert "| knn | 2 | 2 | 50.0% | 1,234 |" in table
    assert "| all | 3 | 4 | | 4,739 |" in table


def test_cpu_by_rule_without_finished_jobs(tmp_path, capsys):
    (tmp_path / "logs").mkdir()
    _cpu_by_rule().main(["--logs", str(tmp_path / "logs"), "--markdown"])
    assert "| all | 0 | 0 | | 0 |" in capsys.readouterr().out


def test_a_finished_script_job_exits_at_once_after_its_logs_and_workers(tmp_path):
    """In a Snakemake script job (a ``snakemake`` object in ``__main__``), a finished job ends by ``os._exit(0)``:
    status 0, its log complete, joblib's worker processes shut down first; the interpreter's exit handlers do not
    run (so nothing of its teardown can abort the process). A job that fails still exits 2 with its one line."""
    import subprocess
    import sys

    code = f"""
import atexit, sys, types
from pathlib import Path
import __main__
__main__.snakemake = types.SimpleNamespace(rule="knn", wildcards=types.SimpleNamespace(dataset="voting"))
atexit.register(lambda: Path({str(tmp_path / "atexit_ran")!r}).write_text("ran"))
from joblib import Parallel, delayed
from hlm.errors import DataError
from hlm.pipeline.jobs import run

def job():
    assert Parallel(n_jobs=2)(delayed(abs)(-i) for i in range(4)) == [0, 1, 2, 3]  # starts loky workers
    Path({str(tmp_path / "out.txt")!r}).write_text("done")
    if sys.argv[1] == "fail":
        raise DataError("dataset 'voting': bad")

run(job, {str(tmp_path / "job.log")!r})
"""
    ok = subprocess.run([sys.executable, "-c", code, "ok"], capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0, ok.stderr
    assert (tmp_path / "out.txt").read_text() == "done"
    last = (tmp_path / "job.log").read_text().strip().splitlines()[-1]
    assert RESOURCE_PREFIX in last and last.endswith("rule knn, dataset voting")
    assert not (tmp_path / "atexit_ran").exists()  # the teardown was skipped
    bad = subprocess.run([sys.executable, "-c", code, "fail"], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and bad.stderr.strip().splitlines()[-1] == "hlm: error: dataset 'voting': bad"
