"""The forecast a run prints before it starts, from the measured costs table."""

from pathlib import Path

import numpy as np
import pytest

from benchmark_scripts import load
from hlm.pipeline.forecast import Forecast, forecast, read_costs, read_rows, write_costs

ROOT = Path(__file__).resolve().parents[2]


def _cpu_by_rule():
    return load("cpu_by_rule")


COSTS = {("knn", "a"): 10.0, ("knn", "b"): 30.0, ("svm", "a"): 100.0}


def test_measured_jobs_count_their_own_figure_others_their_rules_median_or_the_median_job():
    result = forecast([("knn", "a"), ("knn", "c"), ("svm", "a"), ("new", "")], COSTS)
    # 10 (its own) + 20 (knn's median of 10 and 30) + 100 (its own) + 30 (the median of 10, 30, 100)
    assert result == Forecast(jobs=4, cpu_seconds=160.0, by_rule=1, guessed=1, longest=100.0)
    line = result.line(2)
    # the wall time is at least the CPU over the cores: 80 s
    assert line.startswith("hlm: 4 jobs to run, about 2 min 40 s of CPU by the measured figures, so at least "
                           "1 min 20 s on 2 cores")
    assert line.endswith("not measured: 1 at their rule's median, 1 at the median job)")
    assert "at least" not in result.line(None)


def test_a_part_counts_as_its_share_of_the_whole_job_without_a_figure_of_its_own():
    shares = {("svm_part", "a"): ("svm", 0.25), ("svm_part", "z"): ("svm", 0.25)}
    result = forecast([("svm_part", "a")] * 4 + [("svm_part", "z")], {**COSTS, ("svm_part", "b"): 8.0}, shares)
    # a: a quarter of svm's 100 s each; z: no whole figure either, so the part rule's median (8 s)
    assert result == Forecast(jobs=5, cpu_seconds=108.0, by_rule=1, guessed=0, longest=25.0)


def test_an_empty_table_forecasts_nothing_but_the_count():
    assert forecast([("knn", "a")], {}) == Forecast(1, 0.0, 0, 1, 0.0)


def test_the_table_round_trips(tmp_path):
    rows = [("svm", "a", 20, 100.04, 512), ("knn", "", 1, 2.5, 300)]
    write_costs(tmp_path / "costs.tsv", rows)
    assert read_rows(tmp_path / "costs.tsv") == [("knn", "", 1, 2.5, 300), ("svm", "a", 20, 100.0, 512)]
    assert read_costs(tmp_path / "costs.tsv") == {("knn", ""): 2.5, ("svm", "a"): 100.0}
    assert read_rows(tmp_path / "missing.tsv") == []


def test_the_projects_table_names_only_rules_of_the_workflow():
    """workflow/costs.tsv: every rule it names is one of the Snakefile's, every figure positive."""
    import re

    rules = set()
    for smk in (ROOT / "workflow/rules").glob("*.smk"):
        rules |= set(re.findall(r"^(?:rule|checkpoint) (\w+):", smk.read_text(), re.M))
    from hlm.pipeline.methods import METHODS
    from hlm.pipeline.protocols import protocols

    rules |= set(METHODS) | {f"incremental_{s}" for s in ("scheme_i", "scheme_ii", "retrain", "okde", "odkde")}
    rules |= {p.rule for p in protocols().values()} | {f"{p}_report" for p in protocols()}
    rules |= {f"{m}_part" for m in METHODS} | {"evaluation_gather"}
    rules |= {f"{p.rule}_{k}" for p in protocols().values() for k in ("part", "gather")}
    rows = read_rows(ROOT / "workflow/costs.tsv")
    assert rows, "workflow/costs.tsv is missing"
    assert {rule for rule, *_ in rows} <= rules
    assert all(cpu > 0 and jobs >= 1 for _, _, jobs, cpu, _ in rows)


@pytest.mark.parametrize("path,line,job", [
    ("evaluate/sonar/knn.log", "job resources: cpu 1.50 s, max rss 9 MB", ("knn", "sonar")),
    ("twoway_gmm/sonar.log", "job resources: cpu 1.50 s, max rss 9 MB", ("twoway_gmm_grid", "sonar")),
    ("report/reliability_voting.log", "job resources: cpu 1.50 s, max rss 9 MB", ("reliability_figure", "voting")),
    ("models/voting/knn.mlflow.log", "job resources: cpu 1.50 s, max rss 9 MB", ("log_model", "voting")),
    ("preprocess/dna.log", "job resources: cpu 1.50 s, max rss 9 MB, rule distances_from_blocks, dataset dna",
     ("distances_from_blocks", "dna")),
    ("report/error_rate_tables.log", "job resources: cpu 1.50 s, max rss 9 MB, rule error_rate_tables, dataset -",
     ("error_rate_tables", "")),
])
def test_the_costs_rows_name_each_jobs_rule_and_data_set(tmp_path, path, line, job):
    (tmp_path / path).parent.mkdir(parents=True)
    (tmp_path / path).write_text(f"start\n{line}\n")
    assert _cpu_by_rule().costs_rows(tmp_path) == [(*job, 1, 1.5, 9)]


def test_compare_runs_finds_a_one_ulp_difference_and_ignores_the_times(tmp_path):
    import pandas as pd

    module = load("compare_runs")
    ev = pd.DataFrame({"split": [0, 1], "error_rate": [10.0, 12.5], "params": ['{"k": 1}', '{"k": 3}'],
                       "fit_seconds": [1.0, 2.0]})
    pred = pd.DataFrame({"split": [0, 1], "y_true": ["a", "b"], "y_pred": ["a", "a"], "proba_a": [0.9, 0.6]})
    for run, seconds in (("a", 1.0), ("b", 7.0)):
        for kind, frame in (("evaluation", ev.assign(fit_seconds=seconds)), ("predictions", pred)):
            (tmp_path / run / kind / "toy").mkdir(parents=True)
            frame.to_parquet(tmp_path / run / kind / "toy" / "knn.parquet")
        (tmp_path / run / "tables").mkdir()
        (tmp_path / run / "tables" / "error_rates.csv").write_text("method,toy\nknn,11.25\n")
    assert module.compare(tmp_path / "a", tmp_path / "b", ["tables/error_rates.csv"]) == []
    pred.assign(proba_a=[0.9, np.nextafter(0.6, 1)]).to_parquet(tmp_path / "b/predictions/toy/knn.parquet")
    (tmp_path / "b/tables/error_rates.csv").write_text("method,toy\nknn,11.26\n")
    assert module.compare(tmp_path / "a", tmp_path / "b", ["tables/error_rates.csv"]) == [
        "predictions/toy/knn.parquet: the predictions differ", "tables/error_rates.csv: the bytes differ"]
