"""Chapter 4's outputs (docs/subspace-gmm-spec.md): results/tables/subspace_gmm.{csv,md}, the test error at every
(components per class, method, discriminant dimension) beside the dissertation's Tables 4.1(b) and 4.2(a), and
results/figures/subspace_gmm_{dataset}.png, test data and component means in the learned 2-D subspace."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
from matplotlib import colormaps
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from hlm.data.artifacts import atomic_path
from hlm.reporting.paper import PAPER_SUBSPACE_GMM

NAMES = {"gmm_mpca": "GMM-MPCA", "gmm_mpca_mean": "GMM-MPCA-MEAN", "gmm_mpca_sep": "GMM-MPCA-SEP",
         "mda_rr": "MDA-RR", "mda_rr_os": "MDA-RR-OS", "mda_dr_mpca": "MDA-DR-MPCA",
         "mda_dr_mpca_mean": "MDA-DR-MPCA-MEAN"}
GRID_COLUMNS = ["dataset", "method", "n_components", "n_dims", "n_runs", "error", "error_sd", "error_se", "paper"]
#: the fidelity goal: each method's best cell within this many points of the chapter's best
GOAL_POINTS = 2.0


def paper_error(dataset: str, method: str, R: int, d: int) -> float:
    """The chapter's error at one cell, NaN where it has none (NA, or not in its grid)."""
    table = PAPER_SUBSPACE_GMM.get(dataset)
    if table is None or d not in table["dims"] or (R, method) not in table["rows"]:
        return np.nan
    value = table["rows"][(R, method)][table["dims"].index(d)]
    return np.nan if value is None else float(value)


def grid_table(frames: dict) -> pd.DataFrame:
    """Mean, sd and SE over the partitions of the test error per (data set, method, R, d), and the chapter's."""
    rows = []
    for dataset, frame in frames.items():
        for (method, R, d), g in frame.groupby(["method", "n_components", "n_dims"], sort=False):
            err = g["error"].dropna()
            n = len(err)
            rows.append((dataset, method, int(R), int(d), n, float(err.mean()) if n else np.nan,
                         float(err.std(ddof=1)) if n > 1 else np.nan,
                         float(err.std(ddof=1) / np.sqrt(n)) if n > 1 else np.nan,
                         paper_error(dataset, method, int(R), int(d))))
    return pd.DataFrame(rows, columns=GRID_COLUMNS)


def best_cells(table: pd.DataFrame, dataset: str) -> pd.DataFrame:
    """Per method: our best cell and its error (SE), the chapter's best cell, and the difference."""
    rows = []
    t = table[table.dataset == dataset]
    for method, g in t.groupby("method", sort=False):
        ours = g.dropna(subset=["error"])
        if ours.empty:
            continue
        best = ours.loc[ours["error"].idxmin()]
        paper = g.dropna(subset=["paper"])
        pb = paper.loc[paper["paper"].idxmin()] if not paper.empty else None
        rows.append({"method": method, "ours": best.error, "ours_se": best.error_se,
                     "ours_cell": (int(best.n_components), int(best.n_dims)),
                     "paper": pb.paper if pb is not None else np.nan,
                     "paper_cell": (int(pb.n_components), int(pb.n_dims)) if pb is not None else None})
    out = pd.DataFrame(rows)
    if not out.empty:
        out["diff"] = out["ours"] - out["paper"]
    return out


def _fmt(value: float, digits: int = 2) -> str:
    return f"{value:.{digits}f}" if np.isfinite(value) else "NA"


def subspace_gmm_markdown(frames: dict, table: pd.DataFrame) -> str:
    """Per data set: the best cell of each method against the chapter's, then every cell, ours (chapter's)."""
    lines = ["# GMM with subspace-constrained means, reduced-rank and projected MDA", "",
             "Dissertation chapter 4 (docs/subspace-gmm-spec.md). Test error (%) at every (components per class "
             "R, discriminant dimension d): mean over the partitions, ours and, in brackets, the chapter's "
             "(Tables 4.1(b) Waveform, 4.2(a) Sonar). NA: the method has no model there (GMM-MPCA-SEP below "
             "its smallest d). MDA-RR-OS (optimal scoring) is not implemented.", ""]
    for dataset, (_, meta) in frames.items():
        design = (f"{meta.get('n_simulations')} simulations of {meta.get('n_train')} training and "
                  f"{meta.get('n_test')} test objects" if meta.get("design") == "simulations"
                  else f"{meta.get('n_folds')}-fold cross-validation")
        lines += [f"## {dataset}", "", f"{design}; features z-scored: {bool(meta.get('standardize'))}.", ""]
        best = best_cells(table, dataset)
        if not best.empty:
            lines += ["Best cell of each method (the fidelity goal: within "
                      f"{GOAL_POINTS:g} points of the chapter's best):", "",
                      "| method | ours (SE) | at (R, d) | chapter | at (R, d) | diff | within |",
                      "|---|---|---|---|---|---|---|"]
            for r in best.itertuples():
                within = "yes" if np.isfinite(r.diff) and abs(r.diff) <= GOAL_POINTS else (
                    "n/a" if not np.isfinite(r.diff) else "**no**")
                lines.append(f"| {NAMES.get(r.method, r.method)} | {_fmt(r.ours)} ({_fmt(r.ours_se)}) | "
                             f"{r.ours_cell} | {_fmt(r.paper)} | {r.paper_cell or ''} | {_fmt(r.diff)} | {within} |")
            lines.append("")
        t = table[table.dataset == dataset]
        dims = sorted(t.n_dims.unique())
        lines += ["| R | method | " + " | ".join(f"d={d}" for d in dims) + " |",
                  "|---|---|" + "---|" * len(dims)]
        for R in sorted(t.n_components.unique()):
            for method in t.method.unique():
                g = t[(t.n_components == R) & (t.method == method)].set_index("n_dims")
                cells = []
                for d in dims:
                    ours = float(g.loc[d, "error"]) if d in g.index else np.nan
                    paper = float(g.loc[d, "paper"]) if d in g.index else np.nan
                    cells.append(_fmt(ours) + (f" ({_fmt(paper)})" if np.isfinite(paper) else ""))
                lines.append(f"| {R} | {NAMES.get(method, method)} | " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


VIEW_METHODS = ("gmm_mpca", "gmm_mpca_mean")


def plot_subspace_view(part, path: str | os.PathLike, *, dataset: str, seed: int, standardize: bool,
                       n_components: int = 3) -> None:
    """Test objects (coloured by class) and the component means (crosses, by class) in the 2-D discriminant
    subspace of GMM-MPCA and GMM-MPCA-MEAN, fitted with d = 2 on the first partition's training part."""
    import warnings

    from hlm.evaluation.seeds import derive_seed
    from hlm.evaluation.subspace_gmm import make_estimator

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
