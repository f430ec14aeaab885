"""New objects classified from the distances a saved model needs (issue goal: Mixture HLM computes
1,000 x (its prototypes) DTW distances, not 1,000 x N).

ItalyPowerDemand (aeon's bundled UCR set, 1,096 series of 24 values): the first 96 series are the labelled
set, written as a series CSV with a registry entry in a temporary folder; ``hlm fit`` fits HLM(vsh) and
k-NN on them (parameters by the pipeline's CV); the next 1,000 series are classified raw by
``hlm.load_model(...).predict``. Printed: the DTW evaluations each model made, its reference objects, the
wall time of the prediction, and the ratios of k-NN's figures to Mixture HLM's (same run).

    .venv/bin/python benchmarks/bench_new_objects.py
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import numpy as np

from hlm.datasets._series import load_aeon
from hlm.persistence import load_model, save_model
from hlm.pipeline.config import config_defaults
from hlm.pipeline.fit import fit_model

N_FIT, N_NEW = 96, 1000


def main() -> None:
    ids, series, labels = load_aeon("ItalyPowerDemand")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        rows = [f"{i},{lab}," + ",".join(repr(float(v)) for v in x)
                for i, lab, x in zip(ids[:N_FIT], labels[:N_FIT], series[:N_FIT])]
        (root / "fit.csv").write_text("id,label" + "," * len(series[0]) + "\n" + "\n".join(rows) + "\n")
        (root / "registry.yaml").write_text("italy96:\n  path: fit.csv\n  format: csv\n  kind: series\n"
                                            "  distance: dtw\n")
        config = {**config_defaults(), "registry": "registry.yaml"}
        new, truth = series[N_FIT:N_FIT + N_NEW], np.asarray(labels[N_FIT:N_FIT + N_NEW])
        figures = {}
        for method in ("hlm_vsh", "knn"):
            model = load_model(save_model(fit_model("italy96", method, root=root, config=config), root / method))
            model.predict(new[:2])  # load the compiled DTW before timing
            model.n_computed = 0
            t0 = time.perf_counter()
            predicted = model.predict(new)
            seconds = time.perf_counter() - t0
            figures[method] = (model.n_computed, len(model.reference_ids), seconds)
            print(f"{method:8s} {model.params}: {model.n_computed:,} DTW distances ({N_NEW} new x "
                  f"{len(model.reference_ids)} reference of {model.n_train}), {seconds:.3f} s, "
                  f"error {100 * np.mean(predicted != truth):.2f}%")
    (n_h, r_h, s_h), (n_k, r_k, s_k) = figures["hlm_vsh"], figures["knn"]
    assert n_h == N_NEW * r_h and n_k == N_NEW * r_k
    print(f"k-NN / HLM(vsh): {n_k / n_h:.1f}x the distances, {s_k / s_h:.1f}x the prediction time")


if __name__ == "__main__":
    main()
