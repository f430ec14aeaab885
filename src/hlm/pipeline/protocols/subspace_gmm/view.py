"""Chapter 4's figure (docs/subspace-gmm-spec.md): results/figures/subspace_gmm_{dataset}.png, test objects and
component means in the 2-D discriminant subspace learned by GMM-MPCA and GMM-MPCA-MEAN."""

from __future__ import annotations

import os

import numpy as np
from matplotlib import colormaps
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from hlm.datasets._artifacts import atomic_path
from hlm.pipeline.protocols.chapter4_parts import NAMES

VIEW_METHODS = ("gmm_mpca", "gmm_mpca_mean")


def plot_subspace_view(part, path: str | os.PathLike, *, dataset: str, seed: int, standardize: bool,
                       make_estimator, n_components: int = 3) -> None:
    """Test objects (coloured by class) and the component means (crosses, by class) in the 2-D discriminant
    subspace of GMM-MPCA and GMM-MPCA-MEAN, fitted with d = 2 on the first partition's training part
    (``make_estimator(method, n_components, n_dims, fixed)``: the protocol's estimators)."""
    import warnings

    from hlm.base._seeds import derive_seed

    X_train, y_train, X_test, y_test = part
    fig = Figure(figsize=(10.0, 4.4), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, len(VIEW_METHODS))
    classes = np.unique(y_train)
    cmap = colormaps["tab10"]
    fixed = {"standardize": standardize, "random_state": derive_seed(seed, dataset, 0, "model") % 2**31}
    for ax, method in zip(axes, VIEW_METHODS):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = make_estimator(method, n_components, 2, fixed).fit(X_train, y_train)
        Z = model.transform(X_test)
        M = model.transform(model.component_means())
        error = 100.0 * float(np.mean(model.predict(X_test) != y_test))
        for i, c in enumerate(classes):
            ax.scatter(Z[y_test == c, 0], Z[y_test == c, 1], s=8, lw=0, color=cmap(i % 10), alpha=0.7,
                       label=f"class {c}")
            mine = np.asarray(model.component_class_) == c
            ax.scatter(M[mine, 0], M[mine, 1], marker="X", s=90, color=cmap(i % 10), edgecolors="k", lw=0.8)
        ax.set_title(f"{dataset}: {NAMES[method]}, R = {n_components}, d = 2 (test error {error:.1f}%)", fontsize=9)
        ax.set_xlabel("discriminant coordinate 1")
        ax.set_ylabel("discriminant coordinate 2")
        ax.legend(fontsize=7, frameon=False, markerscale=1.5)
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=130)
