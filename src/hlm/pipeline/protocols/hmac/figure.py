"""HMAC's figure (docs/hmac-spec.md): the cluster tree and the points in their first two principal components,
results/figures/hmac_{dataset}.png."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
from matplotlib import colormaps
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from sklearn.metrics import adjusted_rand_score

from hlm.datasets._artifacts import atomic_path


def shown_level(frame: pd.DataFrame, n_classes: int) -> int:
    """Index (row) of the level drawn in the scatter: the one whose cluster count is nearest the number of
    classes, the smallest bandwidth among ties."""
    gap = (frame["n_clusters"] - n_classes).abs().to_numpy()
    return int(np.argmin(gap))


def tree_positions(frame: pd.DataFrame) -> list[np.ndarray]:
    """x position of every cluster at every level: the mean rank of its points when they are sorted by their
    clusters from the top level down (so that every cluster's points are contiguous, and the tree does not
    cross)."""
    labels = [np.asarray(v, dtype=np.int64) for v in frame["labels"]]
    order = np.lexsort(tuple(labels))  # the last key (top level) is the primary one
    rank = np.empty(len(order), dtype=np.float64)
    rank[order] = np.arange(len(order))
    return [np.bincount(lab, weights=rank) / np.bincount(lab) for lab in labels]


def plot_hmac(X: np.ndarray, classes: np.ndarray, frame: pd.DataFrame, path: str | os.PathLike, *,
              dataset: str) -> None:
    """Left: the cluster tree (a node per cluster and level, its area the cluster's size, a line to the
    cluster it joins at the next level). Right: the points in their first two principal components coloured by
    the clusters of one level (``shown_level``), the modes as crosses."""
    fig = Figure(figsize=(11.0, 4.6), layout="constrained")
    FigureCanvasAgg(fig)
    tree, scatter = fig.subplots(1, 2, width_ratios=[1.15, 1.0])
    xs = tree_positions(frame)
    n = X.shape[0]
    bw = frame["bandwidth"].to_numpy(float)
    for level in range(len(frame)):
        sizes = np.asarray(frame["sizes"].iloc[level], dtype=float)
        if level + 1 < len(frame):
            parent = np.asarray(frame["parent"].iloc[level + 1], dtype=np.int64)
            for c, p in enumerate(parent):
                tree.plot([xs[level][c], xs[level + 1][p]], [bw[level], bw[level + 1]], color="0.6", lw=0.5)
        tree.scatter(xs[level], np.full(len(sizes), bw[level]), s=4 + 120 * sizes / n, color="C0", zorder=3,
                     edgecolors="k", linewidths=0.2)
    tree.set_xlabel("points, ordered by cluster")
    tree.set_ylabel("bandwidth σ")
    tree.set_xticks([])
    counts = frame["n_clusters"].tolist()
    tree.set_title(f"{dataset}: HMAC cluster tree ({counts[0]} to {counts[-1]} clusters)")
    shown = shown_level(frame, len(np.unique(classes)))
    labels = np.asarray(frame["labels"].iloc[shown], dtype=np.int64)
    modes = np.asarray(frame["modes"].iloc[shown], dtype=np.float64).reshape(-1, X.shape[1])
    mean = X.mean(axis=0)
    _, _, vt = np.linalg.svd(X - mean, full_matrices=False)
    pcs = vt[: min(2, vt.shape[0])].T
    Z, M = (X - mean) @ pcs, (modes - mean) @ pcs
    if Z.shape[1] == 1:
        Z, M = np.column_stack([Z, np.zeros(len(Z))]), np.column_stack([M, np.zeros(len(M))])
    cmap = colormaps["tab10" if len(modes) <= 10 else "tab20"]
    scatter.scatter(Z[:, 0], Z[:, 1], c=[cmap(v % cmap.N) for v in labels], s=8, lw=0)
    scatter.scatter(M[:, 0], M[:, 1], marker="x", color="k", s=40, lw=1.2, label="modes")
    ari = adjusted_rand_score(classes, labels)
    scatter.set_title(f"level {shown + 1} (σ = {bw[shown]:.3g}): {len(modes)} clusters, ARI with classes {ari:.2f}")
    scatter.set_xlabel("PC 1")
    scatter.set_ylabel("PC 2")
    scatter.legend(fontsize=8, frameon=False)
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=130)
