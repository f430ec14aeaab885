"""results/figures/llc_pc_{dataset}.png: the LLC-PC paper's Figure 7 (test accuracy against the total number of
subclasses K, for each subclassing) and Figure 9 (Greedy-MPE's MPE-SVM criterion and its test accuracy against K,
the paper's way of choosing K), from the protocol's path rows, averaged over the partitions."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from hlm.datasets._artifacts import atomic_path
from hlm.pipeline.protocols.llc_pc import LABELS


def curves(frame: pd.DataFrame) -> pd.DataFrame:
    """Mean and standard error over the partitions of the accuracy, and mean MPE, per (method, K) of the path
    rows: columns method, n_subclasses, accuracy, accuracy_se, mpe."""
    path = frame[frame.selection == "path"]
    g = path.groupby(["method", "n_subclasses"], sort=False)
    out = g.agg(accuracy=("accuracy", "mean"), sd=("accuracy", "std"), n=("accuracy", "size"),
                mpe=("mpe", "mean")).reset_index()
    out["accuracy_se"] = out.sd / np.sqrt(out.n)
    return out[["method", "n_subclasses", "accuracy", "accuracy_se", "mpe"]]


def plot_llc_pc_curves(frame: pd.DataFrame, path: str | os.PathLike, *, dataset: str) -> pd.DataFrame:
    """Draw Figures 7 and 9 side by side; returns the curves drawn (:func:`curves`)."""
    data = curves(frame)
    n = int(frame.partition.nunique())
    fig = Figure(figsize=(10.0, 4.0), layout="constrained")
    FigureCanvasAgg(fig)
    left, right = fig.subplots(1, 2)
    for method, label in LABELS.items():
        c = data[data.method == method]
        if c.empty:
            continue
        left.plot(c.n_subclasses, c.accuracy, lw=1.3, label=label)
        left.fill_between(c.n_subclasses, c.accuracy - c.accuracy_se, c.accuracy + c.accuracy_se, alpha=0.2, lw=0)
    left.set_xlabel("total number of subclasses K")
    left.set_ylabel("test accuracy [%]")
    left.set_title(f"{dataset}: accuracy against K (Figure 7), mean ± SE over {n} partitions", fontsize=9)
    left.legend(fontsize=8, frameon=False)
    mpe = data[data.method == "llc_pc_mpe"]
    if not mpe.empty:
        right.semilogy(mpe.n_subclasses, np.maximum(mpe.mpe, 1e-12), color="k", lw=1.3, label="MPE-SVM, Q (eq. 1)")
        right.set_ylabel("mean MPE-SVM criterion Q (log scale)")
        twin = right.twinx()
        twin.plot(mpe.n_subclasses, mpe.accuracy, color="C0", lw=1.3, label="test accuracy")
        twin.set_ylabel("test accuracy [%]", color="C0")
        right.legend(fontsize=8, frameon=False, loc="upper center")
    right.set_xlabel("total number of subclasses K")
    right.set_title(f"{dataset}: Greedy-MPE's criterion and accuracy against K (Figure 9)", fontsize=9)
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=130)
    return data
