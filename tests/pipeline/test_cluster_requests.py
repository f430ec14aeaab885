"""What a job asks of a cluster (hlm.pipeline.resources), the memory-kill lines (hlm.pipeline.cluster), and that
every rule of the workflow declares its requests."""

import math
import re
from pathlib import Path

import pytest

from hlm.pipeline.cluster import memory_kills
from hlm.pipeline.forecast import write_costs
from hlm.pipeline.resources import UNMEASURED_MEM_MB, UNMEASURED_MINUTES, Requests

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def requests_(tmp_path):
    path = tmp_path / "costs.tsv"
    write_costs(path, [("knn", "sonar", 1, 3.0, 310), ("knn", "voting", 1, 1200.0, 1990),
                       ("llc_pc", "glass", 1, 900.0, 500)])
    return Requests.from_costs(path)


def test_memory_is_the_measured_peak_with_its_margin_and_grows_with_the_attempt(requests_):
    # 1.5 * 310 + 256 = 721 -> 800; 1.5 * 1990 + 256 = 3241 -> 3300
    assert [requests_.mem_mb("knn", "sonar", a) for a in (1, 2, 3)] == [800, 1600, 2400]
    assert requests_.mem_mb("knn", "voting") == 3300
    # a data set never measured: the rule's largest; a rule never measured: the fixed default
    assert requests_.mem_mb("knn", "letter") == 3300
    assert requests_.mem_mb("psvm", "sonar", 2) == 2 * UNMEASURED_MEM_MB


def test_runtime_is_three_times_the_cpu_over_the_threads_at_least_ten_minutes(requests_):
    assert requests_.runtime("knn", "sonar") == 10  # 9 s of CPU: the floor
    assert requests_.runtime("knn", "voting", threads=1) == 60  # 3 * 1200 s = 60 min
    assert requests_.runtime("knn", "voting", threads=2) == 30
    assert requests_.runtime("knn", "voting", threads=2, attempt=3) == 90
    assert requests_.runtime("psvm") == UNMEASURED_MINUTES


def test_a_part_counts_as_its_whole_job(requests_):
    """``<rule>_part`` has no figure of its own: the whole job's (an upper bound for a part)."""
    assert requests_.mem_mb("llc_pc_part", "glass", like="llc_pc") == 100 * math.ceil((1.5 * 500 + 256) / 100)
    assert requests_.runtime("llc_pc_part", "glass", like="llc_pc") == 45
    assert requests_.mem_mb("llc_pc_part", "glass") == UNMEASURED_MEM_MB


def test_missing_costs_table_asks_the_defaults(tmp_path):
    req = Requests.from_costs(tmp_path / "none.tsv")
    assert (req.mem_mb("knn", "sonar"), req.runtime("knn", "sonar")) == (UNMEASURED_MEM_MB, UNMEASURED_MINUTES)


def _kill_log(root: Path, rule: str, wildcards: str, job: int, used: int, limit: int) -> Path:
    log = root / f"rule_{rule}" / wildcards / f"{job}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text(f"hlm: starting\nslurmstepd-vm: error: StepId={job}.batch exceeded memory limit ({used} > {limit}),"
                   " being killed\nslurmstepd-vm: error: Exceeded job memory limit\n")
    return log


def test_memory_kills_one_line_per_job_for_its_last_attempt(tmp_path):
    mb = 1024 * 1024
    _kill_log(tmp_path, "knn", "sonar", 9, 130 * mb, 100 * mb)
    _kill_log(tmp_path, "knn", "sonar", 10, 144 * mb, 100 * mb)
    _kill_log(tmp_path, "knn", "aural_sonar", 11, 90 * mb, 64 * mb)
    other = tmp_path / "rule_kernel_hlm" / "sonar" / "12.log"  # failed for another reason: not a memory kill
    other.parent.mkdir(parents=True)
    other.write_text("Traceback (most recent call last):\nValueError: bad\n")
    lines = [k.line() for k in memory_kills(tmp_path, since=0)]
    assert lines == [
        "rule knn (aural_sonar), SLURM job 11: killed by SLURM for its memory, 90 MB used of the 64 MB asked "
        "(mem_mb); rerun with more, e.g. --set-resources knn:mem_mb=200",
        "rule knn (sonar), SLURM job 10 (2 attempts): killed by SLURM for its memory, 144 MB used of the 100 MB "
        "asked (mem_mb); rerun with more, e.g. --set-resources knn:mem_mb=300",
    ]


def test_memory_kills_of_earlier_runs_are_not_reported(tmp_path):
    import os

    log = _kill_log(tmp_path, "knn", "sonar", 3, 2 * 1024 * 1024, 1024 * 1024)
    os.utime(log, (1000.0, 1000.0))
    assert memory_kills(tmp_path, since=2000.0) == []
    assert len(memory_kills(tmp_path, since=500.0)) == 1


def test_every_rule_declares_its_cluster_requests():
    """A rule without ``resources: **cluster_resources(...)`` would ask a cluster for its defaults only."""
    blocks = 0
    for smk in sorted((ROOT / "workflow/rules").glob("*.smk")):
        text = smk.read_text()
        starts = [m.start() for m in re.finditer(r"^\s*(?:rule|checkpoint)\b[^\n]*:\s*$", text, re.M)]
        for begin, end in zip(starts, [*starts[1:], len(text)][:len(starts)], strict=True):
            block = text[begin:end]
            if "localrule" in block or block.lstrip().startswith("rule all"):
                continue
            blocks += 1
            assert "**cluster_resources(" in block, f"{smk.name}: {block.splitlines()[0:3]}"
    assert blocks >= 20
