"""Every classification set the installed aeon bundles, by name (hlm.datasets._series.aeon_sets)."""

import numpy as np
import pytest

from hlm.datasets._series import aeon_sets, load_aeon


def test_gunpoint_reads_as_aeons_own_loader():
    """The generic reader gives GunPoint exactly as aeon's load_gunpoint: today's matrix stays bit for bit."""
    from aeon.datasets import load_gunpoint

    ids, series, labels = load_aeon("GunPoint")
    parts = [load_gunpoint(split=p) for p in ("train", "test")]
    expected = [x.reshape(-1) for X, _ in parts for x in X]
    assert len(series) == len(expected) == 200 and ids[0] == "train-0" and ids[50] == "test-0"
    assert all(np.array_equal(a, b) for a, b in zip(series, expected))
    assert labels == [str(v) for _, y in parts for v in y]


def test_the_bundled_sets_and_their_kinds():
    sets = aeon_sets()
    assert {"GunPoint", "ItalyPowerDemand", "ArrowHead", "OSULeaf", "UnitTest", "PickupGestureWiimoteZ"} <= set(sets)
    assert not sets["BasicMotions"].univariate and not sets["JapaneseVowels"].equal_length
    assert "Covid3Month" not in sets  # a regression set (no class labels)
    ids, series, labels = load_aeon("PickupGestureWiimoteZ")  # one channel, unequal lengths
    assert len(ids) == 100 and len({len(x) for x in series}) > 1 and len(set(labels)) == 10


@pytest.mark.parametrize("name, message", [
    ("Nope", "aeon data set 'Nope' is not bundled with the installed aeon; bundled classification sets: ACSF1"),
])
def test_an_unknown_set_is_one_line(tmp_path, capsys, name, message):
    from hlm.cli import main

    (tmp_path / "registry.yaml").write_text(f"x:\n  format: aeon\n  source: {name}\n  kind: series\n  distance: dtw\n")
    assert main(["check", "x", "--registry", str(tmp_path / "registry.yaml")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("hlm: error: ") and "\n" not in err and message in err, err


@pytest.mark.aeon  # compiles aeon's MSM
def test_a_bundled_set_by_registry_entry_and_the_listing(tmp_path, capsys):
    from hlm.cli import main

    (tmp_path / "registry.yaml").write_text("unit:\n  format: aeon\n  source: UnitTest\n  kind: series\n"
                                            "  distance: msm\n")
    assert main(["check", "unit", "--registry", str(tmp_path / "registry.yaml")]) == 0
    assert capsys.readouterr().out.startswith("unit: 42 objects, 2 classes")
    assert main(["datasets", "--aeon"]) == 0
    listing = capsys.readouterr().out
    assert "GunPoint                     50    150       2        1       150\n" in listing
    assert "BasicMotions                 40     40       4        6       100\n" in listing
    assert "JapaneseVowels              270    370       9       12      7-29\n" in listing
