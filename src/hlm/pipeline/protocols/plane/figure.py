"""The plane protocol's figure, results/figures/plane_{dataset}.png (its caption: figure.rst)."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
from matplotlib import colormaps
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure
from matplotlib.patches import Ellipse

from hlm.datasets._artifacts import atomic_path

#: one marker per class (cycled), the class colours of the right panel
MARKERS = ("o", "^", "s", "D", "v", "P")


def component_ellipses(model) -> list[tuple[int, np.ndarray, np.ndarray, float]]:
    """(class index, mean, covariance, weight) of every odKDE component in the data's own coordinates: the
    kernel of a component is its sample covariance plus the class bandwidth H, both in the model's standardised
    coordinates z = (x - mean_) / scale_, so x's covariance is diag(scale_) (cov + H) diag(scale_)."""
    scale = np.asarray(model.scale_, dtype=np.float64)
    out = []
    for c, kde in enumerate(model.models_):
        for w, mu, cov in zip(kde.w, kde.mu, kde.cov):
            out.append((c, mu * scale + model.mean_, (cov + kde.H) * np.outer(scale, scale), float(w)))
    return out


def _grid(X: np.ndarray, n: int = 220):
    lo, hi = X.min(axis=0), X.max(axis=0)
    pad = 0.04 * (hi - lo)
    xs, ys = np.linspace(lo[0] - pad[0], hi[0] + pad[0], n), np.linspace(lo[1] - pad[1], hi[1] + pad[1], n)
    gx, gy = np.meshgrid(xs, ys)
    return gx, gy, np.column_stack([gx.ravel(), gy.ravel()])


def _regions(ax, model, classes, gx, gy, points, colours) -> None:
    index = {c: i for i, c in enumerate(classes)}
    z = np.array([index[v] for v in model.predict(points)]).reshape(gx.shape)
    ax.contourf(gx, gy, z, levels=np.arange(len(classes) + 1) - 0.5, cmap=ListedColormap(colours), alpha=0.18)


def plot_plane(X: np.ndarray, y: np.ndarray, train: np.ndarray, test: np.ndarray, models: dict,
               frame: pd.DataFrame, path: str | os.PathLike, *, dataset: str) -> None:
    """Left: LLC-PC's subclasses (training objects by subclass) over its regions; right: odKDE's components
    (two-sd ellipses) over its regions and the test objects."""
    classes = np.unique(y)
    colours = [colormaps["tab10"](i) for i in range(len(classes))]
    fig = Figure(figsize=(11.0, 4.8), layout="constrained")
    FigureCanvasAgg(fig)
    left, right = fig.subplots(1, 2, sharex=True, sharey=True)
    gx, gy, points = _grid(X)
    acc = frame.set_index("method")["accuracy"]
    llc, odkde = models["llc_pc_mpe"], models["odkde"]
    _regions(left, llc, classes, gx, gy, points, colours)
    sub = colormaps["tab20"]
    subclass = llc.subclass_of_  # per training object, in training order
    for i, c in enumerate(classes):
        mine = y[train] == c
        left.scatter(X[train][mine, 0], X[train][mine, 1], c=[sub(s % 20) for s in subclass[mine]], s=14,
                     marker=MARKERS[i % len(MARKERS)], edgecolors="none")
        left.scatter([], [], color="0.4", marker=MARKERS[i % len(MARKERS)], s=14, label=f"class {c}")
    left.set_title(f"LLC-PC (Greedy-MPE): K = {llc.n_subclasses_} subclasses "
                   f"({', '.join(map(str, llc.subclasses_per_class_))}); test {acc['llc_pc_mpe']:.2f}%")
    left.legend(loc="upper right", fontsize=8)
    _regions(right, odkde, classes, gx, gy, points, colours)
    for i, c in enumerate(classes):
        mine = y[test] == c
        right.scatter(X[test][mine, 0], X[test][mine, 1], color=colours[i], s=3, alpha=0.25, edgecolors="none",
                      marker=MARKERS[i % len(MARKERS)])
    comps = component_ellipses(odkde)
    top = max(w for *_, w in comps)
    for c, mu, cov, w in comps:
        vals, vecs = np.linalg.eigh(cov)
        angle = np.degrees(np.arctan2(vecs[1, 1], vecs[0, 1]))
        right.add_patch(Ellipse(mu, 4 * np.sqrt(vals[1]), 4 * np.sqrt(vals[0]), angle=angle, fill=False,
                                color=colours[c], lw=0.6 + 2.4 * w / top))
        right.plot(*mu, marker="+", color=colours[c], ms=5)
    right.set_title(f"odKDE: {' + '.join(map(str, odkde.n_components_))} components; test "
                    f"{acc['odkde']:.2f}%")
    for ax in (left, right):
        ax.set_xlabel("x1")
        ax.set_xlim(gx.min(), gx.max())
        ax.set_ylim(gy.min(), gy.max())
    left.set_ylabel("x2")
    fig.suptitle(f"{dataset}: {len(train)} training and {len(test)} test objects")
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=110)
