"""Error-rate tables and figures."""

import numpy as np
import pandas as pd
import pytest

from hlm.datasets._artifacts import write_frame
from hlm.pipeline.reporting.figures import plot_error_rates
from hlm.pipeline.reporting.tables import error_rate_table, load_evaluations, write_error_rate_tables

DATASETS = ["ds1", "ds2"]
METHODS = ["a", "b"]


def _long() -> pd.DataFrame:
    rows = [("ds1", "a", [10.0, 20.0, 30.0]), ("ds2", "a", [5.0, 7.5, 10.0]), ("ds1", "b", [1.0, 2.0, 3.0])]
    return pd.DataFrame(
        [
            {"dataset": d, "method": m, "split": k, "error_rate": e, "n_train": 80, "n_test": 20,
             "to_distance": {"ds1": "bound_minus", "ds2": "reciprocal"}[d]}
            for d, m, errs in rows
            for k, e in enumerate(errs)
        ]
    )


def test_error_rate_table_mean_sd_and_na():
    table = error_rate_table(_long(), DATASETS, METHODS)
    assert list(table.index) == METHODS and list(table.columns) == DATASETS
    # mean 20, sample sd sqrt((100 + 0 + 100) / 2) = 10; bold: b is best on ds1, and a's three
    # positive differences give the exact one-sided Wilcoxon p = 1/8 >= 0.05 (not significantly worse)
    assert table.loc["a", "ds1"] == "**20.00 (10.00)**"
    assert table.loc["a", "ds2"] == "**7.50 (2.50)**"
    assert table.loc["b", "ds1"] == "**2.00 (1.00)**"
    assert table.loc["b", "ds2"] == "NA"


def test_single_split_has_na_sd():
    df = _long().query("split == 0")
    assert error_rate_table(df, ["ds1"], ["a"]).loc["a", "ds1"] == "**10.00 (NA)**"


def test_an_archive_split_shows_the_value_alone_without_bold(tmp_path):
    """A data set under its archive's own split (registry split: given, passed as ``given``) has one split: no
    sd and no Wilcoxon bold, on that data set only, and the captions say which; a random split's data set
    with one result left (ds2 for b) keeps its layout."""
    from hlm.pipeline.reporting.probabilities import write_probability_tables

    df = pd.concat([_long().query("dataset == 'ds1' and split == 0"), _long().query("dataset == 'ds2'")])
    table = error_rate_table(df, DATASETS, METHODS, given=["ds1"])
    assert table.loc["a", "ds1"] == "10.00" and table.loc["b", "ds1"] == "1.00"  # b's better, but not bold
    assert table.loc["a", "ds2"] == "**7.50 (2.50)**"
    assert error_rate_table(df, DATASETS, METHODS).loc["b", "ds1"] == "**1.00 (NA)**"  # not given: as before
    write_error_rate_tables(df, DATASETS, METHODS, tmp_path / "t.csv", tmp_path / "t.md", given=["ds1"])
    md = (tmp_path / "t.md").read_text()
    assert "mean (sd) over 3 random 80/20 train/test splits" in md
    assert "ds1: the archive's own train/test split, one split, so the value alone (no sd, no bold)." in md
    scored = df.assign(log_loss=df["error_rate"] / 100, brier=df["error_rate"] / 50, n_clipped=0)
    outputs = {f"{m}_{e}": tmp_path / f"{m}.{e}" for m in ("log_loss", "brier") for e in ("csv", "md")}
    write_probability_tables(scored, DATASETS, METHODS, outputs, given=["ds1"])
    assert "ds1: the archive's own train/test split" in (tmp_path / "brier.md").read_text()
    assert pd.read_csv(tmp_path / "brier.csv", dtype=str).set_index("method").loc["a", "ds1"] == "0.200"


def test_order_follows_arguments():
    table = error_rate_table(_long(), ["ds2", "ds1"], ["b", "a"])
    assert list(table.index) == ["b", "a"] and list(table.columns) == ["ds2", "ds1"]


def test_write_tables(tmp_path):
    csv, md, tidy = tmp_path / "t.csv", tmp_path / "t.md", tmp_path / "tidy.csv"
    write_error_rate_tables(_long(), DATASETS, METHODS, csv, md, summary_path=tidy)
    wide = pd.read_csv(csv, keep_default_na=False)
    assert list(wide.columns) == ["method", "ds1", "ds2"]
    assert wide.values.tolist() == [["a", "**20.00 (10.00)**", "**7.50 (2.50)**"], ["b", "**2.00 (1.00)**", "NA"]]
    df = pd.read_csv(tidy, keep_default_na=False, na_values=[""])
    assert list(df.columns) == ["method", "dataset", "to_distance", "n_splits", "mean", "sd", "cell", "p_worse", "bold"]
    assert list(zip(df.method, df.dataset)) == [("a", "ds1"), ("a", "ds2"), ("b", "ds1"), ("b", "ds2")]
    row = df.iloc[0]
    assert (row["mean"], row["sd"], row["n_splits"], row["cell"]) == (20.0, 10.0, 3, "20.00 (10.00)")
    assert df.iloc[3]["n_splits"] == 0 and pd.isna(df.iloc[3]["mean"]) and df.iloc[3]["cell"] == "NA"

    lines = md.read_text().splitlines()
    assert lines[0].startswith("Test error rate in %: mean (sd) over 3 random 80/20 train/test splits")
    assert "| Classifier | ds1 | ds2 |" in lines
    assert "| a | **20.00 (10.00)** | **7.50 (2.50)** |" in lines
    assert "| b | **2.00 (1.00)** | NA |" in lines
    assert lines[-1] == "Distances: ds1: bound_minus; ds2: reciprocal"
    assert not list(tmp_path.glob("*.tmp"))


def test_load_evaluations(tmp_path):
    ev = pd.DataFrame({"split": [0, 1], "error_rate": [10.0, 20.0], "n_train": 8, "n_test": 2,
                       "fit_seconds": 0.1, "predict_seconds": 0.01, "params": "{}"})
    write_frame(ev, tmp_path / "evaluation/ds1/a.parquet",
                {"dataset": "ds1", "method": "a", "to_distance": "bound_minus"})
    write_frame(ev, tmp_path / "evaluation/ds2/b.parquet")  # no metadata: taken from the path
    long = load_evaluations(sorted(tmp_path.glob("evaluation/*/*.parquet")))
    assert len(long) == 4
    assert list(long[["dataset", "method", "to_distance"]].drop_duplicates().itertuples(index=False)) == [
        ("ds1", "a", "bound_minus"), ("ds2", "b", "NA")]
    assert error_rate_table(long, ["ds1"], ["a"]).loc["a", "ds1"] == "**15.00 (7.07)**"


@pytest.mark.parametrize("methods", [METHODS, ["a", "b", "c"]])
def test_plot_error_rates_png(tmp_path, methods):
    path = tmp_path / "fig" / "errors.png"
    plot_error_rates(_long(), DATASETS, methods, path)
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 1000
    assert [p.name for p in path.parent.iterdir()] == ["errors.png"]


@pytest.mark.parametrize("n_methods", [3, 14, 15, 24, 41])
def test_error_rate_figure_shows_every_method_in_its_own_colour(n_methods):
    """Every method is in the legend, under its label, the legend lies inside the figure (24 methods
    overflowed one column), and no two methods share a colour."""
    from matplotlib.colors import to_hex

    from hlm.pipeline.reporting.figures import error_rate_figure

    methods = [f"m{i}" for i in range(n_methods)]
    rng = np.random.default_rng(n_methods)
    long = pd.DataFrame([{"dataset": d, "method": m, "split": s, "error_rate": rng.uniform(0, 40)}
                         for d in DATASETS for m in methods for s in range(3)])
    labels = {m: f"method number {i}" for i, m in enumerate(methods)}
    fig = error_rate_figure(long, DATASETS, methods, labels)
    fig.canvas.draw()
    (legend,) = fig.legends
    assert [t.get_text() for t in legend.get_texts()] == [labels[m] for m in methods]
    box, page = legend.get_window_extent(), fig.bbox
    assert page.x0 <= box.x0 and box.x1 <= page.x1 and page.y0 <= box.y0 and box.y1 <= page.y1
    ax = fig.axes[0]
    colours = [to_hex(c.patches[0].get_facecolor()) for c in ax.containers if hasattr(c, "patches")]
    assert len(colours) == n_methods and len(set(colours)) == n_methods


def test_cv_components_curve_and_figure(tmp_path):
    import json

    from hlm.pipeline.reporting.figures import cv_error_by_components, plot_cv_components

    grid = [{"n_components": m} for m in (1, 2, 4)] + [{"n_components": "kernel"}]
    cv = {json.dumps(p, sort_keys=True): e for p, e in zip(grid, (0.30, 0.20, 0.25, 0.10))}
    ev = pd.DataFrame({"split": [0], "cv_error": [json.dumps(cv)], "params": [json.dumps({"n_components": "kernel"})]})
    curve = cv_error_by_components(ev)
    assert curve.to_dict() == {1: 30.0, 2: 20.0, 4: 25.0, "kernel": 10.0}
    out = tmp_path / "cv.png"
    plot_cv_components({"hlm_kernel_vsh": ev}, out, dataset="toy")
    assert out.read_bytes()[:4] == b"\x89PNG"


def _exact_wilcoxon_greater(diff) -> float:
    """Brute-force one-sided signed-rank p-value: share of the 2^n sign patterns with W+ >= observed."""
    import itertools

    import numpy as np
    from scipy.stats import rankdata

    diff = np.asarray(diff, dtype=float)
    ranks = rankdata(np.abs(diff))
    observed = ranks[diff > 0].sum()
    totals = [sum(r for r, s in zip(ranks, signs) if s) for signs in itertools.product([0, 1], repeat=len(diff))]
    return float(np.mean(np.array(totals) >= observed - 1e-12))


@pytest.mark.parametrize("seed", range(5))
def test_bold_follows_exact_one_sided_wilcoxon(seed):
    import numpy as np

    from hlm.pipeline.reporting.tables import ALPHA, not_worse_than_best, summarize

    rng = np.random.default_rng(seed)
    n = 9
    best = rng.uniform(5, 15, n)
    diffs = {"close": rng.normal(0.5, 3, n), "far": rng.uniform(0.5, 4, n) * rng.choice([1, 1, 1, -1], n)}
    rows = [{"dataset": "d", "method": "best", "split": k, "error_rate": e} for k, e in enumerate(best)]
    for m, d in diffs.items():
        rows += [{"dataset": "d", "method": m, "split": k, "error_rate": e} for k, e in enumerate(best + d)]
    long = pd.DataFrame(rows)
    methods = ["far", "close", "best"]
    p = not_worse_than_best(long, methods)
    top = long.groupby("method")["error_rate"].mean()[methods].idxmin()
    assert p[top] == 1.0
    for m in methods:
        if m != top:
            d = long[long.method == m].error_rate.to_numpy() - long[long.method == top].error_rate.to_numpy()
            assert p[m] == pytest.approx(_exact_wilcoxon_greater(d), abs=1e-12)
    bold = summarize(long, ["d"], methods).set_index("method")["bold"]
    assert all(bold[m] == (p[m] >= ALPHA) for m in methods)


def test_twenty_splits_all_worse_is_not_bold_and_equal_is_bold():
    import numpy as np

    base = np.linspace(5, 20, 20)
    rows = [{"dataset": "d", "method": m, "split": k, "error_rate": e}
            for m, errs in {"best": base, "worse": base + np.arange(1, 21) / 10, "same": base}.items()
            for k, e in enumerate(errs)]
    s = __import__("hlm.pipeline.reporting.tables", fromlist=["summarize"]).summarize(
        pd.DataFrame(rows), ["d"], ["best", "worse", "same"]).set_index("method")
    assert s.loc["worse", "p_worse"] == pytest.approx(2.0 ** -20)
    assert not s.loc["worse", "bold"] and s.loc["same", "bold"] and s.loc["best", "bold"]


def test_paper_comparison_z_and_markdown():
    from hlm.pipeline.reporting.tables import paper_comparison, paper_markdown, summarize

    summary = summarize(_long(), DATASETS, METHODS)
    comp = paper_comparison(summary, {("a", "ds1"): (14.0, 6.0), ("b", "ds2"): (3.0, 1.0)}).set_index(
        ["method", "dataset"])
    # ours 20 (sd 10, n 3) vs 14 (sd 6, n 20): z = 6 / sqrt(100/3 + 36/20)
    assert comp.loc[("a", "ds1"), "z"] == pytest.approx(6 / (100 / 3 + 36 / 20) ** 0.5)
    assert pd.isna(comp.loc[("a", "ds2"), "paper_mean"]) and pd.isna(comp.loc[("b", "ds2"), "mean"])
    md = paper_markdown(comp.reset_index(), DATASETS, METHODS)
    assert "| a | 20.00 vs 14.00 (+1.0) | 7.50 vs NA |" in md
    assert "| b | 2.00 vs NA | NA vs 3.00 |" in md


@pytest.mark.parametrize(
    "seconds, text", [(0.05, "50 ms"), (4.7, "4.7 s"), (122.9, "2 min 2.9 s"), (float("nan"), "NA")]
)
def test_format_seconds_like_the_paper(seconds, text):
    from hlm.pipeline.reporting.tables import format_seconds

    assert format_seconds(seconds) == text


def test_run_time_table_means():
    from hlm.pipeline.reporting.tables import run_time_table

    long = _long().assign(fit_seconds=lambda d: d.split + 1.0, cv_seconds=0.5, predict_seconds=0.01)
    t = run_time_table(long, DATASETS, METHODS).set_index(["method", "dataset"])
    assert t.loc[("a", "ds1"), "fit_seconds"] == pytest.approx(2.0) and t.loc[("a", "ds1"), "n_splits"] == 3
    assert t.loc[("b", "ds2"), "n_splits"] == 0 and pd.isna(t.loc[("b", "ds2"), "fit_seconds"])


def test_sda_table_puts_ours_beside_each_cell_of_the_papers_tables():
    """Tables I-II of the local SDA paper: each row's method, our mean and z = diff / SE; data sets
    we lack say so; rows whose method did not run say 'not run'."""
    from hlm.pipeline.reporting.paper import SDA_DATASETS, SDA_ROWS, SDA_SOURCE
    from hlm.pipeline.reporting.tables import sda_comparison, sda_markdown

    summary = pd.DataFrame({"method": ["local_sda", "local_sda", "svm_knn_flip"],
                            "dataset": ["aural_sonar", "voting", "protein"],
                            "mean": [18.75, 8.90, 1.74], "sd": [7.05, 2.33, 2.49], "n_splits": [20, 20, 20]})
    comparison = sda_comparison(summary, SDA_ROWS, SDA_DATASETS)
    assert len(comparison) == len(SDA_ROWS) * len(SDA_DATASETS)
    row = comparison[(comparison.row == "local SDA") & (comparison.dataset == "Voting")].iloc[0]
    assert row["paper_mean"] == 6.90 and row["z"] == pytest.approx(2.0 / np.sqrt(2 * 2.33**2 / 20))
    same = comparison[(comparison.row == "local SDA") & (comparison.dataset == "Aural Sonar")].iloc[0]
    assert same["z"] == 0.0
    text = sda_markdown(comparison, SDA_DATASETS, SDA_SOURCE)
    assert "| local SDA (`local_sda`) | not available here (12.37) | 18.75 vs 18.75 (+0.0) |" in text
    assert "8.90 vs 6.90 (**+2.7**)" in text
    assert "| KNN-SVM (flip) (`svm_knn_flip`) | not available here (7.63) | not run (14.00) |" in text
    assert "1.74 vs 1.74 (+0.0)" in text and "**Table I**" in text and "**Table II**" in text


def test_the_caption_names_a_data_set_on_fewer_splits(tmp_path):
    """The config's dataset_splits: the common count, and each other data set's (its methods' largest)."""
    from hlm.pipeline.reporting.tables import split_counts

    summary = pd.DataFrame({"dataset": ["ds1", "ds1", "ds2", "ds3", "ds4"], "n_splits": [20, 20, 5, 20, 0]})
    assert split_counts(summary) == "20 (ds2: 5)"
    assert split_counts(summary, given=["ds2"]) == "20"
    assert split_counts(summary.iloc[[2]]) == "5"
    assert split_counts(summary.iloc[[4]]) == "0"
    # two counts as common: the larger is the caption's
    assert split_counts(pd.DataFrame({"dataset": ["a", "b"], "n_splits": [5, 20]})) == "20 (a: 5)"
    df = _long()  # 3 splits on ds1 and ds2; ds2 on 2 of them only
    df = df[~((df["dataset"] == "ds2") & (df["split"] == 2))]
    write_error_rate_tables(df, DATASETS, METHODS, tmp_path / "t.csv", tmp_path / "t.md")
    caption = (tmp_path / "t.md").read_text().splitlines()[0]
    assert caption.startswith("Test error rate in %: mean (sd) over 3 (ds2: 2) random 80/20 train/test splits")
