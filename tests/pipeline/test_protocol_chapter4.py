"""Chapter 4's grid protocol (hlm.pipeline.protocols.subspace_gmm) and HMAC's (hlm.pipeline.protocols.hmac):
rows equal direct refits, simulations are drawn from derived seeds, tables and figures from known numbers."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import oracles.protocol_reference as ref
from hlm.datasets._generated import generate
from hlm.datasets._registry import load_registry
from hlm.pipeline.protocols.chapter4_parts import cv_parts, simulation_parts
from hlm.pipeline.protocols.subspace_gmm.run import (
    SEP_MIN_EXTRA,
    dims_for,
    make_estimator,
    run_subspace_gmm,
)
from hlm.pipeline.protocols.subspace_gmm.table import (
    PAPER_SUBSPACE_GMM,
    best_cells,
    grid_table,
    paper_error,
    subspace_gmm_markdown,
)
from registry_entry import entry_of

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def waveform_spec():
    return load_registry(ROOT / "config/datasets.yaml", names=["waveform"])["waveform"]


def test_dims_keep_the_chapters_and_stay_below_p():
    assert dims_for("sonar", 60) == [2, 3, 5, 7, 9, 11, 13, 15]
    assert dims_for("waveform", 21) == [2, 4, 6, 8, 10, 12, 14, 16]
    assert dims_for("iris", 4) == [2, 3]
    assert dims_for("sonar", 60, [2, 60, 70]) == [2]


def test_simulations_are_fresh_draws_from_derived_seeds(waveform_spec):
    parts = simulation_parts(waveform_spec, 2, 30, 20, seed=7, dataset="waveform")
    assert [p[0].shape for p in parts] == [(30, 21)] * 2 and [p[2].shape for p in parts] == [(20, 21)] * 2
    again = generate("waveform", 20, 21, ref.seed(7, "waveform", 1, "test"))  # the spec's seed, from scratch
    np.testing.assert_array_equal(parts[1][2], again.X)
    assert not np.array_equal(parts[0][0][:20], parts[1][0][:20])


def test_cv_parts_are_stratified_folds_covering_every_object():
    y = np.repeat(["a", "b"], [12, 8])
    X = np.arange(40.0).reshape(20, 2)
    parts = cv_parts(X, y, 4, seed=3, dataset="toy")
    tested = np.concatenate([p[2][:, 0] for p in parts])
    assert sorted(tested) == sorted(X[:, 0]) and all((p[3] == "b").sum() == 2 for p in parts)


def test_rows_equal_direct_refits_and_sep_follows_the_chapters_na(waveform_spec):
    """Every row is the refit of its cell on its part's training objects; GMM-MPCA-SEP with d - (K - 1) < 2
    is NaN, as the chapter's NA (K = 3: d = 2 and 3)."""
    parts = simulation_parts(waveform_spec, 2, 150, 100, seed=11, dataset="waveform")
    frame = run_subspace_gmm(parts, dataset="waveform", seed=11, n_components=[2], n_dims=[2, 3, 5],
                             methods=("gmm_mpca", "gmm_mpca_sep", "mda_rr", "mda_dr_mpca"))
    assert len(frame) == 2 * 4 * 3
    sep = frame[frame.method == "gmm_mpca_sep"]
    assert sep[sep.n_dims < 2 + SEP_MIN_EXTRA].error.isna().all() and sep[sep.n_dims == 5].error.notna().all()
    rows = frame.dropna(subset=["error"])  # every error is checked exactly, against its refit
    for r in rows.itertuples():
        X, y, Xt, yt = parts[r.fold]
        fixed = {"standardize": False, "random_state": ref.seed(11, "waveform", r.fold, "model") % 2**31}
        model = make_estimator(r.method, r.n_components, r.n_dims, fixed).fit(X, y)
        assert r.error == pytest.approx(100 * np.mean(model.predict(Xt) != yt), abs=1e-12)


def test_paper_cells_are_the_chapters():
    # Table 4.1(b) Waveform, 3 components, GMM-MPCA at d = 2; Table 4.2(a) Sonar, 4 components, MDA-RR at d = 7
    assert paper_error("waveform", "gmm_mpca", 3, 2) == 15.70
    assert paper_error("sonar", "mda_rr", 4, 7) == 19.27
    assert np.isnan(paper_error("waveform", "gmm_mpca_sep", 3, 2)) and np.isnan(paper_error("waveform", "mda_rr", 3, 3))
    for table in PAPER_SUBSPACE_GMM.values():
        assert all(len(v) == len(table["dims"]) for v in table["rows"].values()) and len(table["rows"]) == 21


def test_table_from_known_numbers():
    """Mean and SE over the parts; the best cell per method against the chapter's best (Sonar GMM-MPCA's:
    17.33 at (4, 13))."""
    rows = [{"fold": f, "method": "gmm_mpca", "n_components": R, "n_dims": d, "error": e}
            for (R, d, errs) in ((4, 13, [18.0, 20.0, 22.0]), (3, 2, [40.0, 40.0, 40.0])) for f, e in enumerate(errs)]
    frame = pd.DataFrame(rows)
    table = grid_table({"sonar": frame})
    cell = table[(table.n_components == 4)].iloc[0]
    assert (cell.error, cell.error_se, cell.paper) == (20.0, pytest.approx(2 / np.sqrt(3)), 17.33)
    best = best_cells(table, "sonar").iloc[0]
    assert best.ours_cell == (4, 13) and best.paper_cell == (4, 13) and best["diff"] == pytest.approx(2.67)
    md = subspace_gmm_markdown({"sonar": (frame, {"design": "cv", "n_folds": 3, "standardize": False})}, table)
    assert "| GMM-MPCA | 20.00 (1.15) | (4, 13) | 17.33 | (4, 13) | 2.67 | **no** |" in md
    assert "| 4 | GMM-MPCA | NA | 20.00 (17.33) |" in md and "3-fold cross-validation" in md


# HMAC's stage (rule hmac) and its MLflow run


@pytest.fixture
def store(tmp_path, monkeypatch):
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{tmp_path}/mlflow.db")
    monkeypatch.delenv("HLM_MLFLOW_ARTIFACTS", raising=False)
    return tmp_path


def test_hmac_stage_writes_the_levels_figure_and_mlflow_run(tmp_path, store):
    """Wine z-scored (its registry standardizes it): the Parquet rows are HMAC's levels at the configured
    bandwidths, nested and not (section 5.4), with their adjusted Rand index; MLflow gets one run whose steps
    are the levels' cluster counts."""
    import mlflow
    from sklearn.metrics import adjusted_rand_score

    from hlm.datasets._artifacts import read_metadata
    from hlm.datasets._prepare import load_vectors
    from hlm.hmac._hmac import bandwidth_sequence, hmac
    from hlm.pipeline import tracking
    from hlm.pipeline.protocols.hmac.run import run as hmac_levels
    from hlm.pipeline.protocols.hmac.table import table as hmac_report

    spec = load_registry(ROOT / "config/datasets.yaml", names=["wine"])["wine"]
    out, fig = tmp_path / "wine.parquet", tmp_path / "hmac_wine.png"
    settings = {"n_levels": 6, "low": 0.2, "high": 1.2, "non_nested": True}
    hmac_levels(dataset="wine", entry=entry_of("wine"), outputs={"runs": str(out), "figure": str(fig)},
                settings=settings, tags={"config_hash": "c", "git_commit": "g"}, root=ROOT)
    frame = pd.read_parquet(out)
    X = np.asarray(load_vectors(spec, ROOT).features, dtype=np.float64)
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    direct = hmac(X, bandwidth_sequence(X, 6, 0.2, 1.2))
    assert frame.n_clusters.tolist() == [int(c) for c in direct.n_clusters]
    assert all(np.array_equal(np.asarray(a), b.labels) for a, b in zip(frame["labels"], direct.levels))
    flat = hmac(X, bandwidth_sequence(X, 6, 0.2, 1.2), nested=False)
    assert frame.n_clusters_non_nested.tolist() == [int(c) for c in flat.n_clusters]
    for a, b, ari, level in zip(frame["labels_non_nested"], flat.levels, frame.ari_non_nested, direct.levels):
        assert np.array_equal(np.asarray(a), b.labels) and ari == adjusted_rand_score(level.labels, b.labels)
    assert fig.read_bytes()[:4] == b"\x89PNG"
    meta = read_metadata(out)
    assert (meta["n"], meta["p"], meta["approach"], meta["standardize"]) == (178, 13, "serial", True)
    tracking.init_store("hlm")
    run_id = tracking.log_hmac(dataset="wine", path=out, tags={"rule": "hmac"}, params={"approach": "serial"})
    client = mlflow.tracking.MlflowClient()
    steps = client.get_metric_history(run_id, "n_clusters")
    assert [int(m.value) for m in sorted(steps, key=lambda m: m.step)] == frame.n_clusters.tolist()
    assert client.get_run(run_id).data.metrics["total_seconds"] == pytest.approx(frame.total_seconds.iloc[0])
    assert tracking.log_hmac(dataset="wine", path=out, tags={}, params={}) == run_id  # same file: not again
    hmac_report([str(out)], csv_out=str(tmp_path / "hmac.csv"), md_out=str(tmp_path / "hmac.md"))
    md = (tmp_path / "hmac.md").read_text()
    assert "## wine" in md and "178 points, 13 features; serial" in md and "Without nesting:" in md
    csv = pd.read_csv(tmp_path / "hmac.csv")
    assert len(csv) == 6 and csv.n_clusters_non_nested.tolist() == frame.n_clusters_non_nested.tolist()


def test_hmac_stage_names_the_data_set_and_the_config_field_for_duplicates(tmp_path):
    from hlm.errors import DataError
    from hlm.pipeline.protocols.hmac.run import run as hmac_levels
    from messages import one_line

    with pytest.raises(DataError) as exc:
        hmac_levels(dataset="iris", entry=entry_of("iris"),
                    outputs={"runs": str(tmp_path / "a.parquet"), "figure": str(tmp_path / "a.png")},
                    settings={"n_levels": 3, "low": 0.1, "high": 1.0, "non_nested": True}, tags={}, root=ROOT)
    one_line(exc, "HMAC on data set 'iris': X: rows 101 and 142 are identical (duplicate points); set "
                        "hmac.allow_duplicates: true to cluster them together")


def test_subspace_selection_table_on_hand_made_rows():
    """The subspace selection protocol's numbers (Table 4.5, Figure 4.1's reading) on rows whose answers are known:
    the mean closeness over the preceding levels; the chosen candidate's rank among the candidates' errors (ties
    share the best rank); the count of levels where a method is below GMM-MPCA."""
    from hlm.pipeline.protocols.subspace_selection.run import mean_closeness
    from hlm.pipeline.protocols.subspace_selection.table import below_count, selection_summary

    e = np.eye(3)
    V = [e[:, :2], e[:, :2], e[:, [0, 2]]]  # closeness(V0, V1) = 2, closeness(V2, V0) = closeness(V2, V1) = 1
    got = mean_closeness(V)
    assert np.isnan(got[0]) and got[1:] == [2.0, 1.0]
    sel = pd.DataFrame({"kind": "selection", "method": ["gmm_mpca"] * 3 + ["gmm_mpca_mean"] * 3, "n_dims": 2,
                        "level": [1, 2, 3] * 2, "test_error": [30.0, 20.0, 20.0, 25.0, 25.0, 10.0],
                        "chosen": [False, False, True, True, False, False]})
    summary = selection_summary(sel).set_index("method")
    assert summary.loc["gmm_mpca", "rank"] == 1 and summary.loc["gmm_mpca", "chosen_level"] == 3  # tied best
    assert summary.loc["gmm_mpca_mean", "rank"] == 2 and summary.loc["gmm_mpca_mean", "max_error"] == 25.0
    assert below_count(sel, "gmm_mpca_mean") == (2, 3) and below_count(sel, "gmm_mpca_sep") == (0, 0)
