"""aeon's elastic distances by name (hlm.distances._elastic; issue "The field's own data", item 4).

Known answers: LCSS and EDR of two 3-point series with one mismatch beyond epsilon are 1/3; MSM of two
one-point series is the move |x - y|; ERP (g = 0) and TWE without warping are the city-block distance of
equal-length series. And each distance, by name, in row blocks, equals aeon's own pairwise function.
"""

import shutil
from pathlib import Path

import numpy as np
import pytest

from hlm.distances import pairwise
from hlm.distances._blocks import assemble, compute_block
from hlm.distances._registry import ELASTIC

DATA = Path(__file__).parents[1] / "data"
X, Y = [np.array([0.0, 1.0, 2.0])], [np.array([0.0, 1.0, 5.0])]


@pytest.mark.parametrize("name, params, expected", [
    ("lcss", {"epsilon": 0.5}, 1 / 3),  # 2 of 3 points matched within epsilon
    ("edr", {"epsilon": 0.5}, 1 / 3),  # one edit, over the longer length 3
    ("erp", {"g": 0.0, "window": 0.0}, 3.0),  # no warping: sum |x_i - y_i|
    ("twe", {"nu": 0.001, "lmbda": 1.0, "window": 0.0}, 3.0),  # no warping, no stiffness cost on equal times
])
def test_known_answers(name, params, expected):
    assert pairwise(X, Y, name, params)[0, 0] == pytest.approx(expected, rel=1e-12)


def test_msm_of_one_point_is_the_move():
    assert pairwise([np.array([0.0])], [np.array([1.5])], "msm", {"c": 1.0})[0, 0] == pytest.approx(1.5, rel=1e-12)


def _series(n=7, seed=3):
    rng = np.random.default_rng(seed)
    return [np.cumsum(rng.normal(size=int(m))) for m in rng.integers(12, 20, size=n)]  # unequal lengths


@pytest.mark.parametrize("name", list(ELASTIC))
def test_each_distance_is_aeons_in_row_blocks(name):
    import aeon.distances as distances

    series = _series()
    params = {"window": 0.5} if "window" in ELASTIC[name] else {}
    expected = getattr(distances, f"{name}_pairwise_distance")([x.reshape(1, -1) for x in series],
                                                                 [x.reshape(1, -1) for x in series], **params)
    blocks = [(i0, i1, compute_block(series, name, i0, i1, params)) for i0, i1 in ((0, 3), (3, 7))]
    D = assemble(blocks, len(series))  # the upper triangle in blocks, the lower one by symmetry
    upper = np.triu_indices(len(series))
    np.testing.assert_array_equal(D[upper], expected[upper])  # the same computation, no arithmetic on top
    np.testing.assert_allclose(D, expected, rtol=1e-12, atol=0)  # and aeon's lower triangle: symmetric


def test_an_entry_under_msm_by_registry_alone(tmp_path, capsys):
    """hlm check on the tests' series under MSM: the summary of the matrix aeon computes."""
    from hlm.cli import main
    from hlm.datasets._objects import load_objects
    from hlm.datasets._registry import load_registry

    shutil.copy(DATA / "series.csv", tmp_path / "series.csv")
    (tmp_path / "registry.yaml").write_text("waves:\n  path: series.csv\n  format: csv\n  kind: series\n"
                                            "  distance: msm\n  window: 0.2\n  distance_params: {c: 0.5}\n")
    assert main(["check", "waves", "--registry", str(tmp_path / "registry.yaml"), "--root", str(tmp_path)]) == 0
    spec = load_registry(tmp_path / "registry.yaml")["waves"]
    ids, objects, labels, _ = load_objects(spec, tmp_path)
    D = pairwise(objects, objects, "msm", {"window": 0.2, "c": 0.5})
    off = D[~np.eye(len(D), dtype=bool)]
    assert f"max {off.max():.4g}" in capsys.readouterr().out


@pytest.mark.parametrize("params, message", [
    ("{cc: 1.0}", "distance msm has no parameter 'cc' (its parameters: window, independent, c, itakura_max_slope)"),
    ("{c: abc}", "distance msm's parameter 'c' must be a finite number (got 'abc')"),
    ("{independent: 1}", "distance msm's parameter 'independent' must be a boolean (got 1)"),
])
def test_bad_distance_params_are_one_line(tmp_path, capsys, params, message):
    from hlm.cli import main

    (tmp_path / "registry.yaml").write_text("waves:\n  path: series.csv\n  format: csv\n  kind: series\n"
                                            f"  distance: msm\n  distance_params: {params}\n")
    assert main(["check", "waves", "--registry", str(tmp_path / "registry.yaml"), "--root", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("hlm: error: ") and "\n" not in err and message in err, err


def test_a_value_aeon_refuses_is_one_line(tmp_path, capsys):
    from hlm.cli import main

    (tmp_path / "registry.yaml").write_text("waves:\n  path: series.csv\n  format: csv\n  kind: series\n"
                                            "  distance: shape_dtw\n  distance_params: {descriptor: nope}\n")
    assert main(["check", "waves", "--registry", str(tmp_path / "registry.yaml"), "--root", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert "distance shape_dtw refuses distance_params {'descriptor': 'nope'}: Descriptor invalid" in err
    assert "\n" not in err
