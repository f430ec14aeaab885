"""The plane protocol (hlm.pipeline.protocols.plane): LLC-PC's subclasses and odKDE's components over the plane.

Known answers: the ellipses are odKDE's own mixture in the data's coordinates (its density ratios between
points equal the model's); the partition has the asked sizes and every row's accuracy is its model's on the
test part; a data set of three features is refused in one line; the job writes its rows, table and figure.
"""

import numpy as np
import pandas as pd
import pytest
from scipy.special import logsumexp
from scipy.stats import multivariate_normal

from hlm.errors import DataError
from hlm.pipeline.protocols.plane.figure import component_ellipses
from hlm.pipeline.protocols.plane.run import fit_plane


def _two_moons(n=240, seed=0):
    rng = np.random.default_rng(seed)
    t = rng.uniform(0, np.pi, n)
    X = np.where((np.arange(n) % 2)[:, None] == 0, np.column_stack([np.cos(t), np.sin(t)]),
                 np.column_stack([1 - np.cos(t), 0.4 - np.sin(t)])) * [3.0, 50.0] + [10.0, -5.0]
    return X + rng.normal(scale=[0.3, 5.0], size=(n, 2)), np.where(np.arange(n) % 2 == 0, "a", "b")


@pytest.fixture(scope="module")
def fitted():
    X, y = _two_moons()
    return X, y, *fit_plane(X, y, dataset="moons", seed=0, cv_folds=3, n_train=120)


def test_the_ellipses_are_the_models_mixture(fitted):
    """log p(x1 | c) - log p(x2 | c) from the ellipses (a Gaussian mixture in x) equals the model's, whose
    densities live in standardised coordinates (the Jacobian and the prior cancel in the difference)."""
    X, y, _, models, _ = fitted
    model = models["odkde"]
    comps = component_ellipses(model)
    points = X[:7]
    for c in range(len(model.classes_)):
        mine = [(mu, cov, w) for k, mu, cov, w in comps if k == c]
        logp = logsumexp([np.log(w) + multivariate_normal(mu, cov).logpdf(points) for mu, cov, w in mine], axis=0)
        ours = model.decision_function(points)[:, c]
        np.testing.assert_allclose(logp - logp[0], ours - ours[0], rtol=1e-9, atol=1e-9)
    assert sum(k == 0 for k, *_ in comps) == model.n_components_[0]


def test_the_partition_and_the_rows(fitted):
    X, y, frame, models, (train, test) = fitted
    assert len(train) == 120 and len(test) == 120 and not set(train) & set(test)
    assert sorted(np.unique(y[train], return_counts=True)[1]) == [60, 60]  # stratified
    for r in frame.itertuples():
        assert r.accuracy == 100.0 * np.mean(models[r.method].predict(X[test]) == y[test])
        assert (r.n_train, r.n_test) == (120, 120) and sum(r.parts_per_class) == r.n_parts
    llc = frame.set_index("method").loc["llc_pc_mpe"]
    assert llc.n_parts == models["llc_pc_mpe"].n_subclasses_ and 2 <= llc.n_parts <= 40


def test_three_features_are_refused():
    with pytest.raises(DataError, match="^plane: data set 'x' has 3 features; the figure draws two$"):
        fit_plane(np.zeros((10, 3)), np.array(["a", "b"] * 5), dataset="x", seed=0, cv_folds=3, n_train=6)


def test_the_job_writes_rows_table_and_figure(tmp_path):
    from hlm.pipeline.protocols.plane.run import run
    from hlm.pipeline.protocols.plane.table import table

    X, y = _two_moons(160, seed=1)
    pd.DataFrame({"x1": X[:, 0], "x2": X[:, 1], "class": y}).to_csv(tmp_path / "moons.csv", index=False)
    entry = {"path": "moons.csv", "format": "csv", "kind": "vectors", "label_column": "class",
             "distance": "euclidean"}
    outputs = {"runs": str(tmp_path / "moons.parquet"), "figure": str(tmp_path / "plane_moons.png")}
    run(dataset="moons", entry=entry, outputs=outputs, settings={"seed": 0, "cv_folds": 3, "n_train": 80},
        tags={}, root=tmp_path)
    assert (tmp_path / "plane_moons.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    frame = pd.read_parquet(tmp_path / "moons.parquet")
    assert frame["method"].tolist() == ["llc_pc_mpe", "odkde"]
    table([outputs["runs"]], csv_out=str(tmp_path / "t.csv"), md_out=str(tmp_path / "t.md"))
    md = (tmp_path / "t.md").read_text()
    assert f"| moons | odKDE | {frame.accuracy[1]:.2f} |" in md and "80:80" in md


@pytest.mark.parametrize("n_train", [1, 9])
def test_a_partition_that_would_empty_a_class_is_refused(n_train):
    X, y = _two_moons(10)
    with pytest.raises(DataError, match=f"n_train {n_train} must leave every one of its 2 classes in both parts "
                                        r"\(between 2 and 8 of 10 objects\)"):
        fit_plane(X, y, dataset="x", seed=0, cv_folds=3, n_train=n_train)
