"""The LLC-PC and two-way GMM protocols (hlm.pipeline.protocols.llc_pc, hlm.pipeline.protocols.twoway_gmm): rows
equal direct refits; their tables from known numbers."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.model_selection import train_test_split

import oracles.protocol_reference as ref
from hlm.datasets._prepare import load_vectors
from hlm.datasets._registry import load_registry
from hlm.errors import DataError
from hlm.mixture import TwoWayGMMClassifier
from hlm.pipeline.evaluation.splits import make_splits, split_indices
from hlm.pipeline.methods import METHODS
from hlm.pipeline.protocols.llc_pc.run import partition, run_llc_pc
from hlm.pipeline.protocols.llc_pc.table import LLC_PC_SOURCE, PAPER_LLC_PC, llc_pc_markdown, llc_pc_table
from hlm.pipeline.protocols.twoway_gmm.run import cluster_grid, run_twoway_gmm
from hlm.pipeline.protocols.twoway_gmm.table import grid_table, twoway_gmm_markdown
from registry_entry import entry_of

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def registry():
    return load_registry(ROOT / "config/datasets.yaml")


def test_cluster_grid_keeps_l_below_the_dimension():
    assert cluster_grid([4, 8, 12, 16, 24, 36, 48, 56], 36) == [4, 8, 12, 16, 24]
    assert cluster_grid([4, 8], 4) == []


def test_twoway_rows_equal_direct_refits_with_missing_values(registry):
    """Sonar with 5% of its cells removed: each grid row is the refit of that point on the split's training
    part (same seed, so the same error); the CV row refits the point the house CV chooses."""
    rec = load_vectors(registry["sonar_mcar5"], ROOT)
    X, y = rec.features, rec.labels
    assert np.isnan(X).sum() == 624
    frame = run_twoway_gmm(X, y, dataset="sonar_mcar5", seed=5, cv_folds=3, n_splits=20, test_fraction=0.2,
                           splits=[1], n_components=[1, 2], n_clusters=[4, 60, 64])
    grid = frame[frame.selection == "grid"]
    assert len(grid) == 2 * 1 + 2 and len(frame) == len(grid) + 2  # L >= p = 60 is MDA: left out
    # seeds, split, folds and the CV's choice from the spec, in plain loops (tests/oracles/protocol_reference.py)
    train, test = ref.split(len(y), "sonar_mcar5", 5, 1, 0.2)
    np.testing.assert_array_equal(train, split_indices(make_splits(len(y), dataset="sonar_mcar5", n_splits=20,
                                                                   test_fraction=0.2, seed=5), 1)[0])
    state = ref.seed(5, "sonar_mcar5", 1, "model") % 2**31
    for r in grid.itertuples():
        params = {"n_components": r.n_components, "random_state": state, "standardize": False}
        if r.method == "twoway_gmm":
            params["n_clusters"] = r.n_clusters
        model = METHODS[r.method].make(params).fit(X[train], y[train])
        assert r.error == pytest.approx(100 * np.mean(model.predict(X[test]) != y[test]), abs=1e-12)
    folds = ref.folds(y[train], 3, ref.seed(5, "sonar_mcar5", 1, "cv"))
    best = ref.cv_choice(lambda p: METHODS["twoway_gmm"].make({"random_state": state, "standardize": False, **p}),
                         X[train], y[train], [{"n_components": m, "n_clusters": 4} for m in (1, 2)], folds)
    cv = frame[(frame.selection == "cv") & (frame.method == "twoway_gmm")].iloc[0]
    assert (cv.n_components, cv.n_clusters) == (best["n_components"], 4)
    assert cv.error == grid[(grid.method == "twoway_gmm") & (grid.n_components == cv.n_components)].error.iloc[0]


def test_llc_pc_rows_equal_direct_refits(registry):
    """Iris (3 classes), one 60:40 partition: the path rows start at K = N = 3 (a smaller K is N) and each
    equals a refit at that K; the equivalence columns equal refits with the other schemas; the CV row refits
    the K the house CV chooses over the same range. cv=False gives the same path rows, alone."""
    rec = load_vectors(registry["iris"], ROOT)
    X, y = rec.features, rec.labels
    frame = run_llc_pc(X, y, dataset="iris", seed=3, cv_folds=3, n_partitions=20, k_max=6, partitions=[2])
    train, test = partition(y, "iris", 3, 2)
    assert (len(train), len(test)) == (90, 60) and sorted(set(y[train])) == sorted(set(y))
    # the spec's partition (docs/llc-pc-spec.md 8: stratified, 60:40 for a data set outside Table 1), seeded
    # from (seed, data set, "llc-pc", partition)
    spec_train, _ = train_test_split(np.arange(len(y)), train_size=90, stratify=y,
                                     random_state=ref.seed(3, "iris", "llc-pc", 2) % 2**32)
    np.testing.assert_array_equal(train, np.sort(spec_train))
    state = ref.seed(3, "iris", "llc-pc", 2, "model") % 2**31
    for method in ("llc_pc_mpe", "llc_pc_kmeans", "llc_pc_hc", "llc_pc_em"):
        path = frame[(frame.method == method) & (frame.selection == "path")]
        assert path.n_subclasses.tolist() == [3, 4, 5, 6]
        for r in path.itertuples():
            params = {"n_subclasses": r.n_subclasses, "random_state": state}
            model = METHODS[method].make(params).fit(X[train], y[train])
            vote = model.predict(X[test])
            assert r.accuracy == pytest.approx(100 * np.mean(vote == y[test]), abs=1e-12)
            assert r.mpe == pytest.approx(model.mpe_, rel=1e-12)
            if method == "llc_pc_kmeans":
                minmax = model.set_params(combination="minmax").predict(X[test])
                assert r.agree_minmax == pytest.approx(np.mean(minmax == vote), abs=1e-12)
                assert 0 < r.provable <= 1
        folds = ref.folds(y[train], 3, ref.seed(3, "iris", "llc-pc", 2, "cv"))
        best = ref.cv_choice(lambda p, method=method: METHODS[method].make({"random_state": state, **p}),
                             X[train], y[train], [{"n_subclasses": k} for k in (3, 4, 5, 6)], folds)
        cv = frame[(frame.method == method) & (frame.selection == "cv")].iloc[0]
        assert cv.n_subclasses == best["n_subclasses"]
        assert cv.accuracy == path[path.n_subclasses == cv.n_subclasses].accuracy.iloc[0]
    # cv=False: the same path rows, without the CV's
    paths = run_llc_pc(X, y, dataset="iris", seed=3, cv_folds=3, n_partitions=20, k_max=6, partitions=[2], cv=False)
    expected = frame[frame.selection == "path"].reset_index(drop=True)
    assert (paths.selection == "path").all() and len(paths) == len(expected) == 16
    pd.testing.assert_frame_equal(paths.drop(columns="fit_seconds"), expected.drop(columns="fit_seconds"))


def _twoway_frame(errors_two: dict, errors_mda: dict, cv_two, cv_mda, two="twoway_gmm", mda="mda") -> pd.DataFrame:
    rows = []
    for (m, L), errs in errors_two.items():
        rows += [{"split": s, "method": two, "selection": "grid", "n_components": m, "n_clusters": L,
                  "error": e, "n_clusters_effective": L - 1.0, "n_classes": 3} for s, e in enumerate(errs)]
    for m, errs in errors_mda.items():
        rows += [{"split": s, "method": mda, "selection": "grid", "n_components": m, "n_clusters": -1,
                  "error": e, "n_clusters_effective": 0.0, "n_classes": 3} for s, e in enumerate(errs)]
    for method, errs, L in ((two, cv_two, 8), (mda, cv_mda, -1)):
        rows += [{"split": s, "method": method, "selection": "cv", "n_components": 2, "n_clusters": L, "error": e,
                  "n_clusters_effective": 0.0, "n_classes": 3} for s, e in enumerate(errs)]
    return pd.DataFrame(rows)


def test_twoway_table_from_known_numbers():
    frame = _twoway_frame({(1, 4): [10, 20], (1, 8): [30, 30], (2, 4): [40, 40], (2, 8): [35, 45]},
                          {1: [20, 20], 2: [30, 30]}, cv_two=[1, 2, 3, 4, 5], cv_mda=[2, 4, 6, 8, 10])
    table = grid_table({"toy": frame})
    r = table[(table.n_components == 1) & (table.n_clusters == 4)].iloc[0]
    assert (r.error, r.error_sd, r.n_runs, r.clusters_used) == (15.0, pytest.approx(np.sqrt(50)), 2, 3.0)
    md = twoway_gmm_markdown({"toy": frame}, table)
    assert "| 1 (3) | **15.00 (7.07)** | 30.00 (0.00) | 4 | 20.00 (0.00) | -5.00 |" in md
    assert "| 2 (6) | 40.00 (0.00) | 40.00 (7.07) | 4, 8 | **30.00 (0.00)** | +10.00 |" in md
    assert "at most MDA's error in 1 of 2 rows" in md and "L = 4: 3.0, L = 8: 7.0" in md
    # five splits, two-way lower on each by distinct amounts: the exact one-sided p is 1/2^5
    assert "two-way GMM 3.00 (1.58) [modal M = 2, L = 8, 2KL = 48]" in md and "p = 0.0312 (5 splits)" in md


def test_twoway_table_has_a_block_per_covariance():
    diag = _twoway_frame({(1, 4): [10, 20]}, {1: [20, 20]}, cv_two=[1, 2], cv_mda=[2, 4])
    full = _twoway_frame({(1, 4): [50, 60]}, {1: [5, 5]}, cv_two=[3, 3], cv_mda=[1, 1], two="twoway_gmm_full",
                         mda="mda_full")
    frame = pd.concat([diag, full], ignore_index=True)
    md = twoway_gmm_markdown({"toy": frame}, grid_table({"toy": frame}))
    assert "### toy\n" in md and "### toy, full covariance (Table 2.4)" in md
    assert "| 1 (3) | **15.00 (7.07)** | 4 | 20.00 (0.00) | -5.00 |" in md
    assert "| 1 (3) | 55.00 (7.07) | 4 | **5.00 (0.00)** | +50.00 |" in md
    only = twoway_gmm_markdown({"toy": diag}, grid_table({"toy": diag}))
    assert "full covariance (Table 2.4)" not in only.split("\n\n", 1)[1]


def test_twoway_full_covariance_needs_values_or_the_diagonal_model(registry):
    """Missing values: the full rows are left out beside the diagonal ones, and full alone is a one-line error."""
    rec = load_vectors(registry["sonar_mcar5"], ROOT)
    frame = run_twoway_gmm(rec.features, rec.labels, dataset="sonar_mcar5", seed=5, cv_folds=3, n_splits=20,
                           test_fraction=0.2, splits=[0], n_components=[1], n_clusters=[4],
                           covariance=("diag", "full"))
    assert sorted(set(frame.method)) == ["mda", "twoway_gmm"]
    with pytest.raises(DataError, match="has missing values, and covariance 'full' has no missing-data EM") as e:
        run_twoway_gmm(rec.features, rec.labels, dataset="sonar_mcar5", seed=5, cv_folds=3, n_splits=20,
                       test_fraction=0.2, splits=[0], n_components=[1], n_clusters=[4], covariance=("full",))
    assert "\n" not in str(e.value)


def test_twoway_full_covariance_rows_equal_direct_refits(registry):
    """Sonar, one split: covariance ["diag", "full"] adds Table 2.4's methods, each row the refit of its point
    with covariance "full" (the per-class whitening of section 2.2.2)."""
    rec = load_vectors(registry["sonar"], ROOT)
    X, y = rec.features, rec.labels
    frame = run_twoway_gmm(X, y, dataset="sonar", seed=5, cv_folds=3, n_splits=20, test_fraction=0.2, splits=[0],
                           n_components=[1], n_clusters=[4], covariance=("diag", "full"))
    assert sorted(set(frame.method)) == ["mda", "mda_full", "twoway_gmm", "twoway_gmm_full"]
    train, test = ref.split(len(y), "sonar", 5, 0, 0.2)
    state = ref.seed(5, "sonar", 0, "model") % 2**31
    for r in frame[frame.method.str.endswith("_full")].itertuples():
        params = {"n_components": 1, "random_state": state, "standardize": False, "covariance": "full",
                  "n_clusters": 4 if r.method == "twoway_gmm_full" else None}
        model = TwoWayGMMClassifier(**params).fit(X[train], y[train])
        assert r.error == pytest.approx(100 * np.mean(model.predict(X[test]) != y[test]), abs=1e-12)
    assert frame.error.notna().all() and (frame[frame.method.str.endswith("_full")].n_parameters > 0).all()


def _llc_frame() -> pd.DataFrame:
    rows = []
    curves = {"llc_pc_mpe": {6: [50, 60], 7: [70, 72], 8: [71, 71]}, "llc_pc_kmeans": {6: [50, 60], 7: [40, 40]},
              "llc_pc_hc": {6: [60, 62]}, "llc_pc_em": {6: [30, 40], 12: [64, 64]}}
    for method, curve in curves.items():
        for k, accs in curve.items():
            rows += [{"partition": p, "method": method, "selection": "path", "n_subclasses": k, "accuracy": a,
                      "provable": 0.99 if method == "llc_pc_kmeans" else np.nan, "agree_minmax": 1.0,
                      "agree_probability": 0.98} for p, a in enumerate(accs)]
        rows += [{"partition": p, "method": method, "selection": "cv", "n_subclasses": k, "accuracy": a,
                  "provable": np.nan} for p, (k, a) in enumerate([(7, 65), (8, 69)])]
    return pd.DataFrame(rows)


def test_llc_pc_table_from_known_numbers():
    """Optimal = the best K of the mean curve (the first on a tie: K = 7 and 8 both average 71); CV = the mean
    accuracy at each partition's chosen K, with the median K."""
    frames = {"glass": _llc_frame()}
    table = llc_pc_table(frames, PAPER_LLC_PC).set_index("method")
    mpe = table.loc["llc_pc_mpe"]
    assert (mpe.optimal, mpe.optimal_k, mpe.cv, mpe.cv_k_median, mpe.paper, mpe.paper_k) == (71, 7, 67, 7.5, 70.27, 18)
    assert mpe.optimal_sd == pytest.approx(np.sqrt(2))
    assert table.loc["llc_pc_kmeans"].optimal_k == 6
    md = llc_pc_markdown(table.reset_index(), frames, LLC_PC_SOURCE)
    assert "| glass | 70.27 (18) | 71.00 ± 1.41 (7) | 67.00 ± 2.83 (7.5) | 67.86 (30) | 55.00 ± 7.07 (6) |" in md
    assert "| glass | 99.00% | 99.00% | 99.00% | 1.0000 ± 0.0000 | 0.9800 ± 0.0000 |" in md
    # HC and EM beside the paper's Table 2 cells
    assert ("| 67.28 (36) | 61.00 ± 1.41 (6) | 67.00 ± 2.83 (7.5) | 66.22 (24) | 64.00 ± 0.00 (12) | "
            "67.00 ± 2.83 (7.5) |") in md


def test_llc_pc_curves_are_the_path_rows_means(tmp_path):
    """Figures 7 and 9: per (method, K) the mean accuracy over the partitions, its SE and the mean MPE."""
    from hlm.pipeline.protocols.llc_pc.figure import plot_llc_pc_curves

    rows = [{"partition": p, "method": m, "selection": "path", "n_subclasses": k, "accuracy": acc, "mpe": q}
            for m, table in (("llc_pc_mpe", {2: ([70, 80], [4.0, 2.0]), 3: ([90, 90], [1.0, 1.0])}),
                             ("llc_pc_hc", {2: ([60, 66], [5.0, 5.0])}))
            for k, (accs, qs) in table.items() for p, (acc, q) in enumerate(zip(accs, qs))]
    rows.append({"partition": 0, "method": "llc_pc_mpe", "selection": "cv", "n_subclasses": 3, "accuracy": 0.0,
                 "mpe": 99.0})
    drawn = plot_llc_pc_curves(pd.DataFrame(rows), tmp_path / "f.png", dataset="toy").set_index(["method",
                                                                                                  "n_subclasses"])
    assert drawn.loc[("llc_pc_mpe", 2)].tolist() == [75.0, pytest.approx(5.0), 3.0]
    assert drawn.loc[("llc_pc_mpe", 3)].tolist() == [90.0, 0.0, 1.0]
    assert drawn.loc[("llc_pc_hc", 2)].tolist() == [63.0, pytest.approx(3.0), 5.0]
    assert (tmp_path / "f.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_llc_pc_in_parts_gathers_the_rows_of_one_job(registry, tmp_path):
    """split_jobs: one part per subclassing, run alone and gathered from their files in any order, are the rows
    of the whole run in its order (but the fit times), and the gather draws the figure."""
    from hlm.pipeline.protocols.llc_pc import PROTOCOL
    from hlm.pipeline.protocols.llc_pc.run import gather

    rec = load_vectors(registry["iris"], ROOT)
    X, y = rec.features, rec.labels
    whole = run_llc_pc(X, y, dataset="iris", seed=3, cv_folds=3, n_partitions=2, k_max=5)
    paths = []
    for part in reversed(PROTOCOL.parts):
        paths.append(tmp_path / f"{part}.parquet")
        run_llc_pc(X, y, dataset="iris", seed=3, cv_folds=3, n_partitions=2, k_max=5,
                   methods=(part,)).to_parquet(paths[-1])
    outputs = {"runs": str(tmp_path / "iris.parquet"), "figure": str(tmp_path / "iris.png")}
    gather(dataset="iris", parts=[str(p) for p in paths], outputs=outputs,
           settings={"seed": 3, "cv_folds": 3, "n_partitions": 2}, tags={})
    gathered = pd.read_parquet(outputs["runs"])
    same = [c for c in whole.columns if c != "fit_seconds"]
    pd.testing.assert_frame_equal(gathered[same], whole[same])
    assert (tmp_path / "iris.png").stat().st_size > 0


def test_twoway_in_parts_gathers_the_rows_of_one_job(registry, tmp_path):
    """split_jobs: one part per split, each run by ``run`` with its part, gathered from their files in any order,
    are the rows of the whole job in its order (but the fit times), with the whole job's metadata."""
    from hlm.datasets._artifacts import read_metadata
    from hlm.pipeline.protocols.twoway_gmm import PROTOCOL
    from hlm.pipeline.protocols.twoway_gmm.run import gather, run

    entry = entry_of("iris")
    settings = {"seed": 5, "cv_folds": 3, "n_splits": 3, "test_fraction": 0.2, "n_components": [1, 2],
                "n_clusters": [2], "covariance": ["diag", "full"]}
    whole = tmp_path / "whole.parquet"
    run(dataset="iris", entry=entry, outputs={"runs": str(whole)}, settings=settings, tags={}, root=ROOT)
    parts = list(PROTOCOL.part_names(settings["n_splits"]))
    assert parts == ["split0", "split1", "split2"]
    paths = []
    for part in reversed(parts):
        paths.append(tmp_path / f"{part}.parquet")
        run(dataset="iris", entry=entry, outputs={"runs": str(paths[-1])}, settings=settings, tags={}, root=ROOT,
            part=part)
        assert read_metadata(paths[-1])["part"] == part
    gathered = tmp_path / "iris.parquet"
    gather(dataset="iris", parts=[str(p) for p in paths], outputs={"runs": str(gathered)}, settings=settings,
           tags={})
    one, got = pd.read_parquet(whole), pd.read_parquet(gathered)
    assert sorted(set(one.split)) == [0, 1, 2] and len(one) == 3 * 2 * (2 * 1 + 2 + 2)
    same = [c for c in one.columns if c != "fit_seconds"]
    pd.testing.assert_frame_equal(got[same], one[same])
    assert read_metadata(gathered) == read_metadata(whole)
