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
from messages import check_refuses

pytestmark = pytest.mark.aeon

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
    """Series of one length: aeon's pairwise function, in blocks."""
    import aeon.distances as distances

    params = {"window": 0.5} if "window" in ELASTIC[name] else {}
    one = [x[:12] for x in _series()]
    expected = getattr(distances, f"{name}_pairwise_distance")(np.stack([x.reshape(1, -1) for x in one]),
                                                                 **params)
    blocks = [(i0, i1, compute_block(one, name, i0, i1, params)) for i0, i1 in ((0, 3), (3, 7))]
    np.testing.assert_array_equal(assemble(blocks, len(one)), expected)


#: the distances whose aeon pairwise functions gave inf or other values for rows of several lengths against
#: columns of one (aeon 1.6); each is compiled for single pairs here (a few seconds each), so not all ten
MIXED = ("msm", "twe", "lcss", "ddtw")


@pytest.mark.parametrize("name", MIXED)
def test_series_of_several_lengths_pair_by_pair(name):
    """The first five series one length, the rest another, so that a block's rows may share a length its
    columns do not: aeon's distance pair by pair, in any blocks, and against a set of one length (hlm
    predict's reference objects), all finite."""
    import aeon.distances as distances

    params = {"window": 0.5}
    rng = np.random.default_rng(4)
    mixed = [np.cumsum(rng.normal(size=m)) for m in (14,) * 5 + (19,) * 4]
    pair = getattr(distances, f"{name}_distance")
    expected = np.array([[pair(x.reshape(1, -1), y.reshape(1, -1), **params) for y in mixed] for x in mixed])
    for ranges in (((0, 4), (4, 9)), ((0, 5), (5, 9)), ((0, 9),)):
        blocks = [(i0, i1, compute_block(mixed, name, i0, i1, params)) for i0, i1 in ranges]
        D = assemble(blocks, len(mixed))
        upper = np.triu_indices(len(mixed))
        np.testing.assert_array_equal(D[upper], expected[upper])
        assert np.isfinite(D).all()
    np.testing.assert_array_equal(pairwise(mixed, mixed[:5], name, params), expected[:, :5])


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
    ("{c: -1.0}", "distance msm with distance_params {'c': -1.0} is not a distance"),  # negative self-distances
    ("{window: 0.5}", "give the window as the entry's field 'window', not in distance_params"),
])
def test_bad_distance_params_are_one_line(tmp_path, capsys, params, message):
    check_refuses(tmp_path, capsys, "waves:\n  path: series.csv\n  format: csv\n  kind: series\n"
                  f"  distance: msm\n  distance_params: {params}\n", message)


def test_a_value_aeon_refuses_is_one_line(tmp_path, capsys):
    check_refuses(tmp_path, capsys, "waves:\n  path: series.csv\n  format: csv\n  kind: series\n"
                  "  distance: shape_dtw\n  distance_params: {descriptor: nope}\n",
                  "distance shape_dtw refuses distance_params {'descriptor': 'nope'}: Descriptor invalid")
