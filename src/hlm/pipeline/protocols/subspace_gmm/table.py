"""Chapter 4's table (docs/subspace-gmm-spec.md): results/tables/subspace_gmm.{csv,md}, the test error at every
(components per class, method, discriminant dimension) beside the dissertation's Tables 4.1(b) and 4.2(a). The
figure is hlm.pipeline.protocols.subspace_gmm.view's."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pandas as pd

from hlm.pipeline.protocols.chapter4_parts import NAMES
from hlm.pipeline.reporting.numbers import paper_numbers

log = logging.getLogger("hlm")

#: the dissertation's Tables 4.1(b) (Waveform) and 4.2(a) (Sonar): {data set: {"dims": [d, ...],
#: "rows": {(components per class, method): [error % per d, None: NA]}}} (paper.yaml)
PAPER_SUBSPACE_GMM: dict[str, dict] = {
    dataset: {"dims": list(t["dims"]),
              "rows": {(int(r), method): list(errors) for r, methods in t["rows"].items()
                       for method, errors in methods.items()}}
    for dataset, t in paper_numbers(__package__)["tables"].items()}

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
             "its smallest d).", ""]
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


def table(inputs: list[str], *, csv_out: str, md_out: str) -> None:
    """results/tables/subspace_gmm.{csv,md}: error per (R, method, d) beside the chapter's Tables 4.1-4.2."""
    from hlm.datasets._artifacts import read_metadata, write_text

    frames = {Path(p).stem: (pd.read_parquet(p), read_metadata(p)) for p in inputs}
    result = grid_table({k: f for k, (f, _) in frames.items()})
    write_text(result.to_csv(index=False), csv_out)
    write_text(subspace_gmm_markdown(frames, result), md_out)
    log.info("%s written", md_out)
