"""LLC-PC's total cost against the number of subclasses, the LLC-PC paper's Figure 8 (Chen, Lu and Boedihardjo,
section 6.3: "the total computational cost, which contains the clustering, training, and testing time costs", on
Image), for the four subclassings (Greedy-MPE, k-means, HC, EM).

On partition 0 of the LLC-PC protocol (``hlm.pipeline.protocols.llc_pc.run.partition``: 60:40 for a data set
outside the paper's Table 1), at each total K a fresh ``LLCPairwiseCoupling(n_subclasses=K)`` is fitted on the
training part and predicts the test part, as the paper times one classifier per K (the protocol's path shares one
fit among all K, so it has no per-K time). Median of ``--repeats`` runs, in one process, single-threaded BLAS.
Each K's times are printed beside their ratio to Greedy-MPE's at that K, measured in the same run, and drawn to
``--figure``. Absolute times vary between machines and with the load.

The data set is UCI's seven-class Image Segmentation (``segment``, KEEL's copy); the paper's "Image" is a two-class
version whose class grouping it does not give, so K starts at 7 here.

    .venv/bin/python benchmarks/llc_pc_time.py [--dataset segment] [--repeats 3]
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from hlm.base._seeds import derive_seed
from hlm.datasets._prepare import load_vectors
from hlm.datasets._registry import load_registry
from hlm.pipeline.methods import METHODS
from hlm.pipeline.protocols.llc_pc import LABELS
from hlm.pipeline.protocols.llc_pc import METHODS as LLC_METHODS
from hlm.pipeline.protocols.llc_pc.run import partition

ROOT = Path(__file__).resolve().parents[1]
SEED = 20121  # the pipeline's seed (the schema's default)


def total_cost(method: str, K: int, X, y, train, test, state: int) -> tuple[float, float]:
    """(seconds, test accuracy %) of one fit at K on the training part and the test part's predictions."""
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # capped allocations, libsvm max_iter
        model = METHODS[method].make({"n_subclasses": K, "random_state": state}).fit(X[train], y[train])
        accuracy = 100.0 * float(np.mean(model.predict(X[test]) == y[test]))
    return time.perf_counter() - t0, accuracy


def draw(times: dict, ks: list[int], path: Path, dataset: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for method in LLC_METHODS:
        ax.plot(ks, [times[method, k] for k in ks], marker="o", label=LABELS[method])
    ax.set_xlabel("total number of subclasses K")
    ax.set_ylabel("fit + test seconds (median)")
    ax.set_title(f"LLC-PC's total cost against K ({dataset}; the paper's Figure 8)")
    ax.legend()
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dataset", default="segment")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--ks", type=int, nargs="+", default=None, help="total K (default: N, then 10 to 40 by 5)")
    ap.add_argument("--figure", type=Path, default=None, help="default: results/figures/llc_pc_time_<dataset>.png")
    args = ap.parse_args()
    spec = load_registry(ROOT / "config/datasets.yaml", names=[args.dataset])[args.dataset]
    rec = load_vectors(spec, ROOT)
    X, y = rec.features, np.asarray(rec.labels)
    train, test = partition(y, args.dataset, SEED, 0)
    state = derive_seed(SEED, args.dataset, "llc-pc", 0, "model") % 2**31
    n_classes = len(np.unique(y))
    ks = args.ks or [n_classes, *range(10, 41, 5)]
    print(f"{args.dataset}: {len(train)} training, {len(test)} test objects, {X.shape[1]} features, {n_classes} "
          f"classes; median of {args.repeats} runs per cell")
    times, accuracy = {}, {}
    with threadpool_limits(1):
        for K in ks:
            for method in LLC_METHODS:
                runs = [total_cost(method, K, X, y, train, test, state) for _ in range(args.repeats)]
                times[method, K] = float(np.median([s for s, _ in runs]))
                accuracy[method, K] = runs[0][1]
    head = " | ".join(f"{LABELS[m]} s (x MPE)" for m in LLC_METHODS)
    print(f"\n| K | {head} |\n|---|{'---|' * len(LLC_METHODS)}")
    for K in ks:
        base = times["llc_pc_mpe", K]
        cells = " | ".join(f"{times[m, K]:.2f} ({times[m, K] / base:.2f}x)" for m in LLC_METHODS)
        print(f"| {K} | {cells} |")
    print("\ntest accuracy %: " + "; ".join(
        f"{LABELS[m]} " + ", ".join(f"{accuracy[m, K]:.1f}" for K in ks) for m in LLC_METHODS))
    figure = args.figure or ROOT / f"results/figures/llc_pc_time_{args.dataset}.png"
    draw(times, ks, figure, args.dataset)
    print(f"figure: {figure}")


if __name__ == "__main__":
    main()
