"""The Snakemake workflow: lint, dry run, an end-to-end run of a tiny config,
reruns (nothing to do; editing one method reruns only that method) and
one-line errors for bad input. Runs in a copy of the project in a temp dir."""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from hlm.datasets._artifacts import read_distances, read_metadata

pytestmark = pytest.mark.workflow

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
#: the small run's config (.test/config.yaml, as the snakemake-workflows template keeps .test/), on top of the
#: default config
TINY_ARGS = ["--configfile", "config/config.yaml", ".test/config.yaml"]
#: (data set, method) pairs of TINY: the vector method runs on Sonar only
TINY_PAIRS = [(d, m) for d in ("aural_sonar", "sonar") for m in ("knn", "kernel_hlm", "svm_kernel_clip")] + [
    ("sonar", "svm_vector_linear")]


def _env(project=None):
    """The environment of a snakemake run in ``project``: it imports that project's hlm (its src first
    on PYTHONPATH, as the venv's editable install is ROOT's; see workflow/rules/common.smk)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MLFLOW_", "HLM_", "PYTHONPATH"))}
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    if project is not None:
        env["PYTHONPATH"] = str(Path(project) / "src")
    return env


def snakemake(workdir, *args, check=True, env=None):
    cmd = [str(BIN / "snakemake"), "--cores", "2", *args]
    env = _env(workdir) if env is None else env
    proc = subprocess.run(cmd, cwd=workdir, env=env, capture_output=True, text=True, timeout=900)
    if check and proc.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return proc


def job_counts(output: str) -> dict:
    """Parse snakemake's 'Job stats' table."""
    block = output.split("Job stats:", 1)[1]
    counts = {}
    for line in block.splitlines()[3:]:
        m = re.match(r"^(\S+)\s+(\d+)$", line.strip())
        if not m:
            break
        counts[m.group(1)] = int(m.group(2))
    return counts


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """A copy of the project (code, config, raw data) in a temp dir."""
    dest = tmp_path_factory.mktemp("project")
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info")
    for name in ("Snakefile", "workflow", "src", "config", "envs", "data", ".test"):
        src = ROOT / name
        (shutil.copytree(src, dest / name, ignore=ignore) if src.is_dir() else shutil.copy2(src, dest / name))
    return dest


@pytest.fixture(scope="module")
def tiny_run(project):
    proc = snakemake(project, *TINY_ARGS)
    return project, proc


def test_lint_is_clean():
    proc = snakemake(ROOT, "--lint")
    assert "Congratulations" in proc.stdout + proc.stderr


def test_dry_run_of_default_config(project):
    """The default profile: the HLM paper's four data sets and Iris (on 5 splits), its 15 methods (and Kernel HLM
    with the transform by CV) on the four, its vector SVMs on Sonar, the others where method_datasets puts them,
    the incremental schemes on three of the four and Iris, each protocol once."""
    proc = snakemake(project, "--dry-run")
    counts = job_counts(proc.stdout)
    assert counts["preprocess"] == 5 and counts["splits"] == 5 and "objects" not in counts
    for method in ("knn", "kernel_hlm", "hlm_vsh", "hlm_gknn", "hlm_agg", "hlm_kernel_vsh", "affinity_knn",
                   "kri_knn", "krr_knn", "local_sda", "svm_kernel_clip", "svm_features_linear",
                   "svm_features_rbf", "svm_knn", "psvm", "kernel_hlm_cv"):
        assert counts[method] == 4, method
    for method in ("hlm_vsh_cv", "svm_knn_flip", "svm_knn_shift", "svm_knn_features", "local_sda_bayes",
                   "local_sda_pairwise", "local_sda_pairwise_bayes", "local_sda_regularized",
                   "local_sda_regularized_joint"):  # Aural Sonar
        assert counts[method] == 1, method
    # methods on raw vectors: Iris; the batch KDE and the HLM paper's vector SVMs on Sonar too; the others are
    # skipped, with a message
    for method in ("kde_cv", "svm_vector_linear", "svm_vector_rbf"):
        assert counts[method] == 2, method
    for method in ("llc_pc_mpe", "llc_pc_kmeans", "twoway_gmm", "mda", "gmm_mpca", "gmm_mpca_mean", "gmm_mpca_sep",
                   "mda_rr", "mda_dr_mpca", "okde", "odkde"):
        assert counts[method] == 1, method
    assert "llc_pc_hc" not in counts and "llc_pc_em" not in counts  # in the LLC-PC protocol on Glass only
    assert ("hlm: skipping method(s) gmm_mpca, gmm_mpca_mean, gmm_mpca_sep, kde_cv, llc_pc_em, llc_pc_hc, "
            "llc_pc_kmeans, llc_pc_mpe, mda, mda_dr_mpca, mda_rr, odkde, okde, svm_vector_linear, svm_vector_rbf, "
            "twoway_gmm on data set(s) "
            "aural_sonar, protein, voting: they need feature vectors (kind: vectors)") in proc.stderr
    assert "a subset runs only" not in proc.stderr
    assert counts["error_rate_tables"] == 1 and counts["error_rate_figure"] == 1
    assert counts["probability_tables"] == 1 and counts["reliability_figure"] == 5  # every data set has one
    for scheme in ("scheme_i", "scheme_ii", "retrain"):
        assert counts[f"incremental_{scheme}"] == 4
    for scheme in ("okde", "odkde"):  # the online KDE schemes: vector data sets only (Iris)
        assert counts[f"incremental_{scheme}"] == 1
    assert counts["incremental_report"] == 1
    for rule in ("online_kde", "llc_pc", "twoway_gmm_grid", "subspace_gmm_grid", "subspace_selection", "plane"):
        assert counts[rule] == 1, rule
    assert counts["hmac"] == 2 and counts["hmac_report"] == 1 and "online_kde_part" not in counts


def test_a_subset_runs_only_what_it_names(project):
    """--config datasets/methods: the comparison and its reports only, the stages it names on their data sets."""
    proc = snakemake(project, "--dry-run", "--config", "datasets=[aural_sonar,voting,sonar]", "methods=[knn]")
    counts = job_counts(proc.stdout)
    assert counts["knn"] == 3 and counts["splits"] == 3
    stages = ("incremental", "online_kde", "llc_pc", "twoway_gmm_grid", "subspace_gmm_grid", "hmac", "plane",
              "subspace_selection")
    assert not [rule for rule in counts if rule.startswith(stages)]
    assert ("hlm: a subset runs only the stages it names: not running incremental, hmac, llc_pc, online_kde, plane, "
            "subspace_gmm, subspace_selection, twoway_gmm; name one with its data sets") in proc.stderr
    proc = snakemake(project, "--dry-run", "--config", "datasets=[aural_sonar,voting,sonar]", "methods=[knn]",
                     "hmac={datasets: [sonar]}", "incremental={schemes: [scheme_ii]}")
    counts = job_counts(proc.stdout)
    assert counts["hmac"] == 1 and counts["incremental_scheme_ii"] == 3  # named: its list, or the run's
    assert not [rule for rule in counts if rule.startswith(stages[1:5] + ("plane", "subspace_selection"))]


def test_a_split_job_outside_its_section_is_said(project):
    proc = snakemake(project, "--dry-run", "--config", "datasets=[sonar]", "methods=[knn]",
                     "twoway_gmm={datasets: [sonar], split_jobs: [digits]}")
    assert "hlm: twoway_gmm.split_jobs: digits not among the data sets it runs (sonar)" in proc.stderr
    assert "twoway_gmm_grid_part" not in job_counts(proc.stdout) and job_counts(proc.stdout)["twoway_gmm_grid"] == 1


def test_the_paper_profile_splits_its_longest_jobs(project):
    """Letter's odKDE protocol in 44 parts, the two-way grid on Satellite, Digits and DNA's indicators in one part
    per split, DNA's 25 methods in 4 jobs each, every other job whole."""
    proc = snakemake(project, "--dry-run", "--configfile", "config/paper.yaml")
    counts = job_counts(proc.stdout)
    assert counts["online_kde_part"] == 44 and counts["online_kde_gather"] == 1 and counts["online_kde"] == 3
    assert counts["twoway_gmm_grid_part"] == 3 * 20 and counts["twoway_gmm_grid_gather"] == 3
    assert counts["twoway_gmm_grid"] == 2  # Sonar and its copy with missing values, whole
    assert counts["knn"] == 14 and counts["knn_part"] == 4 and counts["evaluation_gather"] == 25
    assert counts["gmm_mpca"] == 8 and "gmm_mpca_part" not in counts and "a subset runs only" not in proc.stderr


def test_end_to_end_outputs(tiny_run):
    project, _ = tiny_run
    dist = read_distances(project / "results/distances/aural_sonar.parquet")
    assert dist.distances.shape == (100, 100)
    assert dist.metadata["to_distance"] == "bound_minus" and dist.metadata["shape"] == [100, 100]
    np.testing.assert_allclose(np.diag(dist.distances), 0.0)
    splits = pd.read_parquet(project / "results/splits/aural_sonar.parquet")
    assert list(splits.columns) == ["split", "index", "role"]
    assert (splits[splits.role == "test"].groupby("split").size() == 20).all()
    for ds in ("aural_sonar", "sonar"):
        for method in ("knn", "kernel_hlm"):
            ev = pd.read_parquet(project / f"results/evaluation/{ds}/{method}.parquet")
            assert list(ev.split) == [0, 1, 2]
            for col in ("error_rate", "n_train", "n_test", "fit_seconds", "predict_seconds", "params"):
                assert col in ev.columns
            assert ev.error_rate.between(0, 45).all()
            pred = pd.read_parquet(project / f"results/predictions/{ds}/{method}.parquet")
            assert len(pred) == ev.n_test.sum()
            assert read_metadata(project / f"results/evaluation/{ds}/{method}.parquet")["to_distance"]
    table = (project / "results/tables/error_rates.md").read_text()
    assert "aural_sonar" in table and "| Kernel HLM |" in table and "| k-NN |" in table
    # the native similarity is kept for the compared methods; Sonar's vectors too
    assert dist.similarities is not None and dist.similarities[0, 0] == 1.0
    sonar = read_distances(project / "results/distances/sonar.parquet")
    assert sonar.similarities is None and sonar.vectors.shape == (208, 60)
    ev = pd.read_parquet(project / "results/evaluation/sonar/svm_kernel_clip.parquet")
    assert "upper_bound" in json.loads(ev.params[0])  # 1/d with the fit set's bound (spec 4.2)
    assert not (project / "results/evaluation/aural_sonar/svm_vector_linear.parquet").exists()
    assert "| SVM (vectors, linear) | NA |" in table
    paper = (project / "results/tables/error_rates_paper.md").read_text()
    assert "| k-NN | " in paper and " vs 17.25 (" in paper  # the paper's Table 2 k-NN value on Aural Sonar
    times = pd.read_csv(project / "results/tables/run_time.csv")
    assert set(times.columns) >= {"method", "dataset", "fit_seconds", "predict_seconds"}
    assert (times.dropna().fit_seconds > 0).all() and len(times.dropna()) == len(TINY_PAIRS)
    png = (project / "results/figures/error_rates.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    # class probabilities, measured: every method of TINY has them (Platt for the SVMs)
    log_loss = (project / "results/tables/log_loss.md").read_text()
    assert "clipped below at 1e-15" in log_loss and "| Kernel HLM |" in log_loss
    assert "| SVM (vectors, linear) | NA |" in log_loss  # not run on Aural Sonar
    assert "| k-NN |" in (project / "results/tables/brier.md").read_text()
    ev = pd.read_parquet(project / "results/evaluation/sonar/svm_kernel_clip.parquet")
    assert (ev.log_loss >= 0).all() and np.isfinite(ev.log_loss).all() and ev.brier.between(0, 2).all() \
        and (ev.n_clipped >= 0).all()
    for ds in ("aural_sonar", "sonar"):
        assert (project / f"results/figures/reliability_{ds}.png").read_bytes()[:4] == b"\x89PNG"
    # incremental learning (section 5.5): 9 rounds per split, the seen objects add up to the training part
    inc = pd.read_parquet(project / "results/incremental/aural_sonar/scheme_ii.parquet")
    assert list(inc.columns[:6]) == ["split", "round", "n_seen", "error_rate", "round_seconds", "n_components"]
    assert (inc.groupby("split")["round"].apply(list) == [list(range(1, 10))] * 3).all()
    assert (inc[inc["round"] == 9].n_seen == 80).all() and (inc[inc["round"] == 1].n_seen == 16).all()
    assert (inc[inc["round"] == 9].n_components == 2 * 20).all()  # 4 + 2 * 8 per class, 2 classes
    assert (project / "results/figures/incremental_aural_sonar.png").read_bytes()[:4] == b"\x89PNG"
    assert "| HLM-Incremental (II) |" in (project / "results/tables/incremental_time.md").read_text()
    # the small run has Scheme II alone, and every claim compares the three schemes
    assert "No data set of the run has all three HLM schemes" in (project / "results/tables/incremental_claims.md"
                                                                  ).read_text()
    # the odKDE paper's protocol on Iris, from its vectors (no distance matrix), next to that paper's Table 1
    assert not (project / "results/distances/iris.parquet").exists()
    online = pd.read_parquet(project / "results/online_kde/iris.parquet")
    assert len(online) == 4 * (3 * 3 + 2) and online.accuracy.between(80, 100).all()  # odKDE, its means variant, oKDE
    assert "| odKDE | " in (md := (project / "results/tables/online_kde.md").read_text()) and "paper 97 [6.5]" in md
    assert "| odKDE (cost at the means) | " in md
    assert (project / "results/figures/online_kde_iris.png").stat().st_size > 0  # the components over time
    # the LLC-PC paper's protocol on one Glass partition: K = 6..40 on the path, and the CV's K, per method
    llc = pd.read_parquet(project / "results/llc_pc/glass.parquet")
    for method in ("llc_pc_mpe", "llc_pc_kmeans", "llc_pc_hc", "llc_pc_em"):
        rows = llc[llc.method == method]
        assert rows[rows.selection == "path"].n_subclasses.tolist() == list(range(6, 41))
        assert (rows.selection == "cv").sum() == 1 and rows.accuracy.between(40, 90).all()
    assert "| glass | 70.27 (18) | " in (project / "results/tables/llc_pc.md").read_text()
    assert (project / "results/figures/llc_pc_glass.png").stat().st_size > 0  # Figures 7 and 9
    # the two-way GMM's grid on Sonar with 5% of its values missing (no distance matrix): 3 splits
    grid = pd.read_parquet(project / "results/twoway_gmm/sonar_mcar5.parquet")
    assert len(grid) == 3 * (2 * 2 + 2 + 2) and grid.error.between(0, 50).all()
    assert not (project / "results/distances/sonar_mcar5.parquet").exists()
    assert "### sonar_mcar5" in (project / "results/tables/twoway_gmm.md").read_text()
    # chapter 4's grid on two fresh Waveform simulations (generated: no file), 7 methods x 1 x 2 cells
    sub = pd.read_parquet(project / "results/subspace_gmm/waveform.parquet")
    assert len(sub) == 2 * 7 * 2 and sub.dropna(subset=["error"]).error.between(0, 45).all()
    assert "mda_rr_os" in set(sub.method) and "| 2 | MDA-RR-OS |" in (project / "results/tables/subspace_gmm.md"
                                                                    ).read_text()
    sep = sub[sub.method == "gmm_mpca_sep"]  # d - (K - 1) < 2 is the chapter's NA: d = 2 of K = 3 classes
    assert sep[sep.n_dims == 2].error.isna().all() and sep[sep.n_dims == 4].error.notna().all()
    assert "## waveform" in (project / "results/tables/subspace_gmm.md").read_text()
    assert (project / "results/figures/subspace_gmm_waveform.png").read_bytes()[:4] == b"\x89PNG"
    # Table 4.5 and Figures 4.1-4.2 on one Waveform simulation: every level's subspace for MPCA and MPCA-MEAN,
    # every candidate's test error, one chosen per (method, d); SEP only at d = 4 (d - (K - 1) >= 2)
    sel = pd.read_parquet(project / "results/subspace_selection/waveform.parquet")
    close = sel[sel.kind == "closeness"]
    assert set(close.method) == {"gmm_mpca", "gmm_mpca_mean"}
    first = close.level == close.level.min()  # no preceding level: NaN; else within [0, d]
    assert close[first].mean_closeness.isna().all() and close[~first].mean_closeness.notna().all()
    assert (close[~first].mean_closeness <= close[~first].n_dims + 1e-9).all()
    choice = sel[sel.kind == "selection"].groupby(["method", "n_dims"]).chosen.sum()
    assert (choice == 1).all() and set(choice.index) == {("gmm_mpca", 2), ("gmm_mpca", 4), ("gmm_mpca_mean", 2),
                                                         ("gmm_mpca_mean", 4), ("gmm_mpca_sep", 4)}
    assert "**Table 4.5**" in (project / "results/tables/subspace_selection.md").read_text()
    assert (project / "results/figures/subspace_selection_waveform.png").read_bytes()[:4] == b"\x89PNG"
    # HMAC on the run's vector data set (Sonar) at the tiny config's 5 levels, by approach II on a local Dask
    # cluster of the job's 2 threads (its workers are spawned: the job script is guarded)
    levels = pd.read_parquet(project / "results/hmac/sonar.parquet")
    assert len(levels) == 5 and levels.n_clusters.is_monotonic_decreasing
    assert read_metadata(project / "results/hmac/sonar.parquet")["approach"] == "II"
    assert (project / "results/figures/hmac_sonar.png").read_bytes()[:4] == b"\x89PNG"
    assert "## sonar" in (project / "results/tables/hmac.md").read_text()


def test_jobs_run_the_checkouts_own_code(tiny_run):
    project, _ = tiny_run
    for log in ("logs/preprocess/aural_sonar.log", "logs/evaluate/sonar/knn.log"):
        text = (project / log).read_text()
        assert f"hlm library: {(project / 'src/hlm').resolve()}" in text, text[:500]


def _runs(project):
    import mlflow

    mlflow.set_tracking_uri(f"sqlite:///{project / 'mlflow.db'}")
    try:
        return mlflow.search_runs(experiment_names=["hlm"])
    finally:
        mlflow.set_tracking_uri(None)


def test_mlflow_runs(tiny_run):
    project, _ = tiny_run
    runs = _runs(project)
    parents = runs[runs["tags.hlm.role"] == "parent"]
    assert sorted(parents["tags.hlm.pair"]) == sorted(f"{d}/{m}" for d, m in TINY_PAIRS)
    assert len(runs) == len(TINY_PAIRS) * (1 + 3) + 2  # + the incremental run and HMAC's
    hmac = runs[runs["tags.hlm.role"] == "hmac"]
    assert list(hmac["tags.hlm.pair"]) == ["sonar/hmac"] and hmac["metrics.n_levels"].iloc[0] == 5
    inc = runs[runs["tags.hlm.role"] == "incremental"]
    assert list(inc["tags.hlm.pair"]) == ["aural_sonar/scheme_ii"]
    from mlflow.tracking import MlflowClient

    history = MlflowClient(f"sqlite:///{project / 'mlflow.db'}").get_metric_history(inc.run_id.iloc[0],
                                                                                     "error_rate_mean")
    assert sorted(m.step for m in history) == list(range(1, 10))  # the learning curve, one step per round
    row = parents[parents["tags.hlm.pair"] == "aural_sonar/knn"].iloc[0]
    assert row["tags.rule"] == "knn" and "aural_sonar" in row["tags.wildcards"]
    assert len(row["tags.config_hash"]) == 12 and row["tags.git_commit"]
    assert row["params.to_distance"] == "bound_minus"
    ev = pd.read_parquet(project / "results/evaluation/aural_sonar/knn.parquet")
    assert row["metrics.error_rate_mean"] == pytest.approx(ev.error_rate.mean())
    assert row["metrics.log_loss_mean"] == pytest.approx(ev.log_loss.mean())
    assert row["metrics.brier_mean"] == pytest.approx(ev.brier.mean())
    child = runs[(runs["tags.hlm.pair"] == "aural_sonar/knn") & (runs["tags.hlm.split"] == "0")].iloc[0]
    assert child["metrics.log_loss"] == pytest.approx(ev.log_loss[0])
    assert child["metrics.brier"] == pytest.approx(ev.brier[0])


def test_models_of_the_winners_in_folders_and_mlflow(tiny_run):
    """Each data set's winner (lowest mean error over its evaluations) is fitted on all objects, kept as a
    model folder that predicts as hlm.load_model, and logged to MLflow as a registered MLflow Model whose
    pyfunc predicts the same from a DataFrame of similarities to the reference objects."""
    import json

    import mlflow

    from hlm.datasets._artifacts import read_distances
    from hlm.persistence import load_model

    project, _ = tiny_run
    for dataset in ("aural_sonar", "sonar"):
        means = {m: pd.read_parquet(project / f"results/evaluation/{dataset}/{m}.parquet").error_rate.mean()
                 for d, m in TINY_PAIRS if d == dataset}
        chosen = json.loads((project / f"results/models/{dataset}/chosen.json").read_text())
        assert chosen["winner"] == min(means, key=means.get) and chosen["methods"] == [chosen["winner"]]
        model = load_model(project / f"results/models/{dataset}/{chosen['winner']}")
        assert model.n_train == read_distances(project / f"results/distances/{dataset}.parquet").n
        record = json.loads((project / f"results/models/{dataset}/{chosen['winner']}.mlflow.json").read_text())
        runs = _runs(project)
        parent = runs[runs.run_id == record["run_id"]].iloc[0]
        assert parent["tags.hlm.pair"] == f"{dataset}/{chosen['winner']}" and parent["status"] == "FINISHED"
    artifact = read_distances(project / "results/distances/aural_sonar.parquet")
    winner = json.loads((project / "results/models/aural_sonar/chosen.json").read_text())["winner"]
    model = load_model(project / f"results/models/aural_sonar/{winner}")
    record = json.loads((project / f"results/models/aural_sonar/{winner}.mlflow.json").read_text())
    R = (artifact.similarities if model.dataset["native_similarity"] else artifact.distances)[:, model.reference_index]
    mlflow.set_tracking_uri(f"sqlite:///{project / 'mlflow.db'}")
    try:
        pyfunc = mlflow.pyfunc.load_model(record["model_uri"])
        out = pyfunc.predict(pd.DataFrame(R, columns=model.reference_ids))
        versions = mlflow.MlflowClient().search_model_versions(f"name='{record['registered_name']}'")
    finally:
        mlflow.set_tracking_uri(None)
    np.testing.assert_array_equal(out["predicted"].to_numpy(), model.predict(relation=R).astype(str))
    assert record["registered_name"] == f"aural_sonar.{model.method}" and len(versions) >= 1


def test_second_run_has_nothing_to_do(tiny_run):
    project, _ = tiny_run
    proc = snakemake(project, *TINY_ARGS)
    assert "Nothing to be done" in proc.stdout + proc.stderr
    # a config change that touches no job's work (new config hash, same registry
    # entries) reruns nothing: provenance tags are environment variables, not params
    registry = (project / "config/datasets.yaml").read_text()
    # editing a free-text field of an entry reruns nothing
    (project / "config/copy.yaml").write_text(
        registry.replace("Aural Sonar (Philips, Pitton and Atlas 2006)", "Aural Sonar, edited description"))
    proc = snakemake(project, *TINY_ARGS, "--config", "registry=config/copy.yaml")
    assert "Nothing to be done" in proc.stdout + proc.stderr


def test_moved_project_has_nothing_to_do(tiny_run, tmp_path):
    project, _ = tiny_run
    moved = tmp_path / "moved"
    shutil.copytree(project, moved, symlinks=True)
    proc = snakemake(moved, *TINY_ARGS, "--dry-run")
    assert "Nothing to be done" in proc.stdout + proc.stderr


def test_hlm_kernel_vsh_reuses_hlm_vshs_cv_errors_in_parts(project):
    """HLM (kernel-vsh) reads HLM (vsh)'s whole evaluation (its cv_from input) in each of its parts (Aural Sonar
    runs in two: .test/config.yaml), and reuses its CV errors on every split."""
    target = "results/evaluation/aural_sonar/hlm_kernel_vsh.parquet"
    snakemake(project, *TINY_ARGS, "--config", "methods=[hlm_vsh,hlm_kernel_vsh]", "--", target)
    evaluation = pd.read_parquet(project / target)
    assert evaluation["split"].tolist() == [0, 1, 2] and (evaluation["cv_reused"] > 0).all()


def test_forcerun_replaces_mlflow_runs(tiny_run):
    project, _ = tiny_run
    before = _runs(project)
    snakemake(project, *TINY_ARGS, "--forcerun", "knn", "knn_part")  # Aural Sonar's knn runs in parts
    after = _runs(project)
    assert len(after) == len(before)  # replaced, not duplicated
    knn_parents = after[(after["tags.hlm.role"] == "parent") & (after["tags.rule"] == "knn")]
    assert len(knn_parents) == 2
    assert not set(knn_parents.run_id) & set(before.run_id)


def test_editing_knn_reruns_only_knn_and_reports(tiny_run):
    project, _ = tiny_run
    knn = project / "src/hlm/neighbors/_knn.py"
    knn.write_text(knn.read_text() + "\n# an edit\n")
    proc = snakemake(project, *TINY_ARGS, "--dry-run")
    counts = job_counts(proc.stdout)
    # Sonar's knn job and Aural Sonar's two parts and their gathering (evaluation_jobs), + the two data sets'
    # MLflow jobs, which log the new knn results only (same files are skipped), and their choice of the models to
    # keep (whose fits and MLflow models follow once it has run: a checkpoint)
    assert counts == {"knn": 1, "knn_part": 2, "evaluation_gather": 1, "track": 2, "error_rate_tables": 1,
                      "error_rate_figure": 1, "probability_tables": 1, "reliability_figure": 2, "choose_models": 2,
                      "all": 1, "total": 14}


def test_another_projects_hlm_is_one_line_error(project):
    """The copy without PYTHONPATH imports the venv's hlm (ROOT's editable install), not its own
    src/hlm, whose files its rules declare as inputs: Snakemake stops before any job."""
    proc = snakemake(project, "--dry-run", check=False, env=_env())
    assert proc.returncode == 2
    line = next(l for l in proc.stderr.splitlines() if l.startswith("hlm: error:"))
    assert line.startswith(f"hlm: error: the hlm package imported is {(ROOT / 'src/hlm').resolve()}, "
                           "not this project's ")
    assert line.endswith("src/hlm: install it with `make install` (pip install -e .) or run with PYTHONPATH=src")
    assert "Traceback" not in proc.stdout + proc.stderr


def test_bad_config_is_one_line_error(project):
    proc = snakemake(project, "--dry-run", "--config", "n_splits=0", check=False)
    assert proc.returncode == 2  # common.smk's _fail, before any job
    assert "hlm: error: config: field 'n_splits' must be >= 1 (got 0)" in proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr


def test_unknown_dataset_is_one_line_error(project):
    proc = snakemake(project, "--dry-run", "--config", "datasets=[nope]", check=False)
    assert proc.returncode == 2  # common.smk's _fail, before any job
    assert "hlm: error: config: field 'datasets': unknown dataset 'nope'" in proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr


def test_online_kde_on_distances_is_one_line_error(project):
    """The odKDE paper's protocol needs feature vectors: a distance data set in online_kde.datasets fails
    before any job, naming it."""
    proc = snakemake(project, "--dry-run", "--config", "online_kde={datasets: [voting]}", check=False)
    assert proc.returncode == 2
    assert ("hlm: error: config: field 'online_kde.datasets': voting not of kind vectors; the online KDE "
            "protocol needs feature vectors") in proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr


@pytest.mark.parametrize("config,message", [
    ("llc_pc={datasets: [protein]}", "field 'llc_pc.datasets': protein not of kind vectors; the LLC-PC protocol "
                                     "needs feature vectors"),
    ("datasets=[sonar_mcar5]", "field 'datasets': sonar_mcar5 keep missing values (missing: keep) and have no "
                               "distance matrix; list them under twoway_gmm.datasets only"),
])
def test_protocol_and_missing_value_configs_are_one_line_errors(project, config, message):
    """A distance data set in a vector protocol, and a data set with missing values in the comparison (it has
    no distance matrix), fail before any job, naming the data set."""
    proc = snakemake(project, "--dry-run", "--config", config, check=False)
    assert proc.returncode == 2 and f"hlm: error: config: {message}" in proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr


def test_bad_matrix_is_one_line_error(project):
    np.save(project / "data/bad.npy", np.ones((3, 4)))
    np.save(project / "data/bad_labels.npy", np.array([0, 1, 1]))
    (project / "config/bad.yaml").write_text(
        "bad:\n  path: data/bad.npy\n  format: npy\n  labels_path: data/bad_labels.npy\n  kind: distance\n"
    )
    proc = snakemake(project, "--config", "registry=config/bad.yaml", "datasets=[bad]", "methods=[knn]",
                     "subspace_gmm={datasets: []}", check=False)
    assert proc.returncode == 1  # Snakemake's own status when a job fails
    lines = [l for l in proc.stderr.splitlines() if l.startswith("hlm: error:")]
    assert len(lines) == 1 and "dataset 'bad'" in lines[0] and "not square" in lines[0]
    assert "returned non-zero exit status 2." in proc.stderr  # the job's status (hlm.pipeline.jobs)
    assert "Traceback" not in proc.stdout + proc.stderr
    assert not (project / "results/distances/bad.parquet").exists()


def test_distance_stage_in_blocks_resumes(project):
    """GunPoint under DTW in row blocks of 64: 4 cached block jobs, the upper triangle only, the
    assembled matrix equals a direct computation, and a lost block is the only one recomputed."""
    from hlm.datasets._series import load_aeon
    from hlm.distances._dtw import dtw

    snakemake(project, "--config", "distance_block_size=64", "--", "results/distances/gunpoint.parquet")
    blocks = sorted((project / "results/blocks/gunpoint").glob("rows-*.parquet"))
    assert [b.name for b in blocks] == ["rows-0-64.parquet", "rows-128-192.parquet", "rows-192-200.parquet",
                                        "rows-64-128.parquet"]
    log = (project / "logs/blocks/gunpoint/rows-64-128.log").read_text()
    assert "gunpoint: block 2 of 4 (rows 64-127, " in log
    art = read_distances(project / "results/distances/gunpoint.parquet")
    assert art.distances.shape == (200, 200) and art.metadata["to_distance"] == "identity"
    _, series, labels = load_aeon("GunPoint")
    pick = [0, 5, 70, 130, 199]
    np.testing.assert_allclose(art.distances[np.ix_(pick, pick)], dtw([series[i] for i in pick],
                                                                      [series[i] for i in pick]), atol=1e-9)
    assert list(art.labels[:3]) == labels[:3]
    before = {b.name: b.stat().st_mtime_ns for b in blocks}
    # an interrupted run: one block and the assembled matrix are missing
    (project / "results/blocks/gunpoint/rows-64-128.parquet").unlink()
    (project / "results/distances/gunpoint.parquet").unlink()
    snakemake(project, "--config", "distance_block_size=64", "--", "results/distances/gunpoint.parquet")
    after = {b.name: b.stat().st_mtime_ns for b in (project / "results/blocks/gunpoint").glob("rows-*.parquet")}
    assert set(after) == set(before)
    recomputed = sorted(name for name in after if after[name] != before[name])
    assert recomputed == ["rows-64-128.parquet"]  # the finished blocks were kept
