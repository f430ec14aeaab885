"""results/figures/online_kde_{dataset}.png: the odKDE paper's observation (section 4) that its models "reached
the upper bound on their complexity relatively early on during learning ... while their classification
performance further increased": per online learner, the mean components per class against the objects learnt,
and the test accuracy at the recorded checkpoints, each the mean over the folds and orderings."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from hlm.datasets._artifacts import atomic_path

LABELS = {"odkde": "odKDE", "odkde_means": "odKDE (cost at the means)", "okde": "oKDE"}
#: a curve has settled from where it stays within this share of its final value
SETTLED = 0.1


def settled(curve: np.ndarray, within: float = SETTLED) -> int:
    """The first index from which every value of ``curve`` is within ``within`` of its last, relative."""
    outside = np.flatnonzero(np.abs(curve - curve[-1]) > within * abs(curve[-1]))
    return int(outside[-1] + 1) if outside.size else 0


def course(frame: pd.DataFrame) -> dict[str, dict]:
    """{online learner: {"components": mean components per class after the start and after each object,
    "checkpoints": objects learnt, "accuracy": mean test accuracy there, "settled": the number of objects
    learnt from which the components stay within ``SETTLED`` of their final value (:func:`settled`)}}, over the
    learner's runs. Runs of unequal length (folds differ by an object) are cut to the shortest. The accuracy is
    averaged at each checkpoint that every run has, and at the runs' ends, drawn at the shortest run's length."""
    out = {}
    for method, g in frame[frame.components_path.notna()].groupby("method", sort=False):
        paths = [np.asarray(p, dtype=np.float64) for p in g.components_path]
        n = min(len(p) for p in paths)
        components = np.mean([p[:n] for p in paths], axis=0)
        common = sorted(set.intersection(*(set(np.asarray(c)[:-1].tolist()) for c in g.checkpoints)) - {n - 1})
        at = [[dict(zip(np.asarray(c).tolist(), a))[k] for c, a in zip(g.checkpoints, g.accuracy_path)]
              for k in common]
        checkpoints = np.array([*common, n - 1])
        accuracy = np.array([*np.mean(at, axis=1), np.mean([a[-1] for a in g.accuracy_path])])
        settled_at = settled(components)
        out[method] = {"components": components, "checkpoints": checkpoints, "accuracy": accuracy,
                       "settled": settled_at}
    return out


def plot_complexity(frame: pd.DataFrame, path: str | os.PathLike, *, dataset: str) -> dict[str, dict]:
    """Draw :func:`course` (components, left; accuracy, right); returns it."""
    data = course(frame)
    fig = Figure(figsize=(10.0, 4.0), layout="constrained")
    FigureCanvasAgg(fig)
    left, right = fig.subplots(1, 2)
    for i, (method, c) in enumerate(data.items()):
        colour = f"C{i}"
        left.plot(np.arange(len(c["components"])), c["components"], lw=1.3, color=colour,
                  label=f"{LABELS.get(method, method)}: within {SETTLED:.0%} of its final size from {c['settled']}")
        right.plot(c["checkpoints"], c["accuracy"], "o-", ms=3, lw=1.3, color=colour,
                   label=f"{LABELS.get(method, method)}: {c['accuracy'][-1]:.1f}% at the end")
    left.set_xlabel("objects learnt after the start (each class's first objects)")
    left.set_ylabel("components per class (mean)")
    left.set_title(f"{dataset}: model complexity over time", fontsize=9)
    right.set_xscale("symlog", linthresh=1)
    right.set_xlabel("objects learnt after the start (linear to 1, then log scale)")
    right.set_ylabel("test accuracy [%]")
    right.set_title(f"{dataset}: test accuracy over time, mean over folds and orderings", fontsize=9)
    for ax in (left, right):
        ax.legend(fontsize=8, frameon=False)
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=130)
    return data
