"""The LLC-PC paper's Figure 5 (section 4.2, "Inappropriate for a Large Number of Subclasses"): the histograms of the
pairwise prototype classifiers' error scores for random subclasses, by LDA (eq. 2, MPE-LDA's atomic error) and by
the SVM (eq. 3, MPE-SVM's), on Ringnorm's 400 training objects with 10 random subclasses per class (K = 20).

The paper: "the pairwise error scores are not well-differentiable"; over "100 different random generalizations
of subclasses" the distributions were similar, so "the value of MPE will not change significantly given different
generalizations of subclasses". Here: partition 0 of the LLC-PC protocol (``hlm.pipeline.protocols.llc_pc.run``,
the paper's 400:7,000), its training part standardised as LLC-PC does; each draw assigns each class's objects to
``--per-class`` subclasses of equal size (within one) at random, seeds from (data set, draw). Draw 0's 100 pairs
are drawn as histograms to ``--figure``; MPE's Q (eq. 1) over ``--draws`` draws is printed with its coefficient of
variation, beside Q of k-means' subclasses at the same K (``LLCPairwiseCoupling(subclassing="kmeans")``).

    .venv/bin/python benchmarks/llc_pc_error_scores.py [--dataset ringnorm] [--draws 100]
"""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from hlm.base._classifiers import standard_scale
from hlm.base._seeds import derive_seed
from hlm.datasets._prepare import load_vectors
from hlm.datasets._registry import load_registry
from hlm.llc_pc import LLCPairwiseCoupling
from hlm.llc_pc._mpe import mpe
from hlm.pipeline.protocols.llc_pc.run import partition

ROOT = Path(__file__).resolve().parents[1]
SEED = 20121  # the pipeline's seed (the schema's default)
C = 100.0  # LLCPairwiseCoupling's default


def random_subclasses(y_idx: np.ndarray, per_class: int, rng: np.random.Generator) -> np.ndarray:
    """Labels class * per_class + j: each class's objects dealt at random into ``per_class`` groups of equal size."""
    out = np.empty(len(y_idx), dtype=np.int64)
    for c in np.unique(y_idx):
        rows = np.flatnonzero(y_idx == c)
        out[rows[rng.permutation(len(rows))]] = c * per_class + np.arange(len(rows)) % per_class
    return out


def draw(scores: dict, path: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(9, 3.6))
    for ax, (name, E) in zip(axes, scores.items()):
        ax.hist(E, bins=20, color="0.4")
        ax.set_xlabel(f"error score E ({name})")
        ax.set_ylabel("pairs")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dataset", default="ringnorm")
    ap.add_argument("--per-class", type=int, default=10)
    ap.add_argument("--draws", type=int, default=100)
    ap.add_argument("--figure", type=Path, default=None, help="default: results/figures/llc_pc_scores_<dataset>.png")
    args = ap.parse_args()
    spec = load_registry(ROOT / "config/datasets.yaml", names=[args.dataset])[args.dataset]
    rec = load_vectors(spec, ROOT)
    X, y = rec.features, np.asarray(rec.labels)
    train, _ = partition(y, args.dataset, SEED, 0)
    mean, scale = standard_scale(X[train])
    Xs = (X[train] - mean) / scale
    y_idx = np.unique(y[train], return_inverse=True)[1]
    K = args.per_class * (int(y_idx.max()) + 1)
    Q = {"lda": [], "svm": []}
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for d in range(args.draws):
            sub = random_subclasses(y_idx, args.per_class, np.random.default_rng(derive_seed(SEED, args.dataset, d)))
            q_lda, e_lda = mpe(Xs, y_idx, sub, criterion="mpe_lda")
            q_svm, e_svm = mpe(Xs, y_idx, sub, criterion="mpe_svm", C=C)
            Q["lda"].append(q_lda)
            Q["svm"].append(q_svm)
            if d == 0:
                first = {"LDA, eq. 2": e_lda, "SVM, eq. 3": e_svm}
        km = LLCPairwiseCoupling(n_subclasses=K, subclassing="kmeans", C=C, random_state=0).fit(X[train], y[train])
    print(f"{args.dataset}: {len(train)} training objects, {args.per_class} random subclasses per class (K = {K}), "
          f"{len(first['SVM, eq. 3'])} pairs")
    for name, E in first.items():
        q = np.percentile(E, [0, 25, 50, 75, 100])
        print(f"  draw 0, {name}: min {q[0]:.4g}, quartiles {q[1]:.4g} {q[2]:.4g} {q[3]:.4g}, max {q[4]:.4g}, "
              f"max / median {q[4] / q[2]:.2f}")
    for name, values in Q.items():
        v = np.asarray(values)
        print(f"  Q (MPE-{name.upper()}) over {len(v)} draws: mean {v.mean():.4g}, sd {v.std(ddof=1):.4g}, "
              f"coefficient of variation {v.std(ddof=1) / v.mean():.1%}, range {v.min():.4g} to {v.max():.4g}")
    print(f"  k-means subclasses at K = {K}: Q (MPE-SVM) {km.mpe_:.4g}")
    figure = args.figure or ROOT / f"results/figures/llc_pc_scores_{args.dataset}.png"
    draw(first, figure, f"{args.dataset}: error scores of the {len(first['SVM, eq. 3'])} pairwise classifiers, "
                        f"{args.per_class} random subclasses per class (the LLC-PC paper's Figure 5)")
    print(f"figure: {figure}")


if __name__ == "__main__":
    main()
