"""Series sets through the pipeline by registry entry alone (issue "The field's own data"):

* a multichannel set of unequal lengths, aeon's JapaneseVowels (640 objects, 12 channels, 7 to 29 frames),
  under DTW and under MSM, with k-NN, Kernel HLM and HLM(vsh), 2 splits and 3 CV folds (about 35 s);
* GunPoint under ``split: given``: 1-NN DTW with the full window on the archive's own split gives the
  archive's published error, 9.33% (14 of 150), and the table shows it alone (about 12 s).
"""

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from hlm.datasets._artifacts import read_distances

pytestmark = pytest.mark.workflow

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
ENTRIES = """
vowels_dtw:
  format: aeon
  source: JapaneseVowels
  kind: series
  distance: dtw
gunpoint_given:
  format: aeon
  source: GunPoint
  kind: series
  distance: dtw
  split: given
vowels_msm:
  format: aeon
  source: JapaneseVowels
  kind: series
  distance: msm
  distance_params: {c: 0.5}
"""
METHODS = ("knn", "kernel_hlm", "hlm_vsh")


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """A copy of the project whose registry holds the entries above as well."""
    dest = tmp_path_factory.mktemp("series_project")
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info")
    for name in ("Snakefile", "workflow", "src", "config", "envs", "data"):
        src = ROOT / name
        (shutil.copytree(src, dest / name, ignore=ignore) if src.is_dir() else shutil.copy2(src, dest / name))
    with open(dest / "config/datasets.yaml", "a") as f:  # the registry entries, and nothing else
        f.write(ENTRIES)
    return dest


def _snakemake(project, *args):
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith(("MLFLOW_", "HLM_", "PYTHONPATH"))}
    env.update(PATH=f"{BIN}{os.pathsep}{env.get('PATH', '')}", PYTHONPATH=str(project / "src"))
    proc = subprocess.run([str(BIN / "snakemake"), "--cores", "2", *args], cwd=project, env=env,
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]


def test_gunpoint_on_the_archive_split_gives_the_archives_1nn_dtw_error(project):
    (project / "given.yaml").write_text("datasets: [gunpoint_given]\nmethods: [knn]\n"
                                        "method_params:\n  knn:\n    grid: {n_neighbors: [1]}\n")
    _snakemake(project, "--configfile", "config/config.yaml", "given.yaml", "--", "results/tables/error_rates.csv")
    evaluation = pd.read_parquet(project / "results/evaluation/gunpoint_given/knn.parquet")
    assert evaluation["split"].tolist() == [0] and evaluation["n_train"].tolist() == [50]
    assert evaluation["n_test"].tolist() == [150] and evaluation["params"].tolist() == ['{"n_neighbors": 1}']
    assert evaluation["error_rate"].tolist() == [100 * 14 / 150]  # the archive's 1-NN DTW (full window): 0.0933
    assert (project / "results/tables/error_rates.csv").read_text() == "method,gunpoint_given\nknn,9.33\n"
    md = (project / "results/tables/error_rates.md").read_text()
    assert "gunpoint_given: the archive's own train/test split, one split, so the value alone" in md
    assert "| k-NN | 9.33 |" in md


def test_japanese_vowels_under_dtw_and_msm_end_to_end(project):
    from aeon.distances import msm_distance

    from hlm.datasets._series import load_aeon
    from hlm.distances import dtw

    targets = [f"results/evaluation/{d}/{m}.parquet" for d in ("vowels_dtw", "vowels_msm") for m in METHODS]
    _snakemake(project, "--config", "datasets=[vowels_dtw,vowels_msm]", f"methods=[{','.join(METHODS)}]",
               "n_splits=2", "cv_folds=3", "--", *targets)
    tmp_path = project

    _, series, labels = load_aeon("JapaneseVowels")
    pick = [0, 1, 299, 300, 639]  # lengths 20, 26, 16, 15 and 11 frames
    xs = [series[i] for i in pick]
    for name, expected in (("vowels_dtw", dtw(xs, xs)),
                           ("vowels_msm", np.array([[msm_distance(x, y, c=0.5) for y in xs] for x in xs]))):
        art = read_distances(tmp_path / f"results/distances/{name}.parquet")
        assert art.distances.shape == (640, 640) and list(art.labels) == labels
        np.testing.assert_allclose(art.distances[np.ix_(pick, pick)], expected, rtol=1e-12, atol=1e-12)
    for target in targets:
        evaluation = pd.read_parquet(tmp_path / target)
        assert evaluation["split"].tolist() == [0, 1] and (evaluation["n_train"] == 512).all()
        # nine speakers, the largest class 118 of 640: chance is 82% error; DTW's 1-NN is near 5% (UEA)
        assert (evaluation["error_rate"] < 15).all(), (target, evaluation["error_rate"].tolist())
