"""HMAC's job (docs/hmac-spec.md): a vector data set clustered at every bandwidth level, nested and (section 5.4)
without nesting, to Parquet, and its figure (the cluster tree and the principal components: ``figure``)."""

from __future__ import annotations

import contextlib
import logging
import time
from pathlib import Path

import numpy as np
import pandas as pd

log = logging.getLogger("hlm")

#: the config's hmac settings passed to hlm.hmac._hmac.hmac
HMAC_OPTIONS = ("tol", "max_iter", "merge_tol", "allow_duplicates")


def run(*, dataset: str, entry: dict, outputs: dict, settings: dict, tags: dict, n_jobs: int = 1,
        root: str | Path = ".") -> None:
    """HMAC at every level of the bandwidth sequence on the registry entry's vectors (z-scored where the
    registry standardizes them), to Parquet (one row per level) and the figure. ``settings``: the config's
    ``hmac`` section."""
    from hlm.base._classifiers import standard_scale
    from hlm.hmac._hmac import bandwidth_sequence, hmac
    from hlm.pipeline.protocols.common import protocol_vectors, write_protocol
    from hlm.pipeline.protocols.hmac.figure import plot_hmac

    spec, records = protocol_vectors("HMAC", dataset, entry, root)
    X = np.asarray(records.features, dtype=np.float64)
    mean, sd = standard_scale(X, bool(spec.standardize))
    X = (X - mean) / sd
    bandwidths = bandwidth_sequence(X, settings["n_levels"], settings["low"], settings["high"])
    options = {k: settings[k] for k in HMAC_OPTIONS if k in settings}
    parallel, scheduler = settings.get("parallel"), settings.get("scheduler")  # a scheduler: all its workers
    workers = n_jobs if parallel and not scheduler else None
    t0 = time.perf_counter()
    with _named(dataset):
        result = hmac(X, bandwidths, parallel=parallel, scheduler=scheduler, **options, n_workers=workers)
    seconds = time.perf_counter() - t0
    flat, flat_seconds = None, None
    if settings["non_nested"]:
        t0 = time.perf_counter()
        with _named(dataset):
            flat = hmac(X, bandwidths, nested=False, parallel=parallel, scheduler=scheduler, **options,
                        n_workers=workers)
        flat_seconds = time.perf_counter() - t0
    frame = levels_frame(result, seconds, flat, flat_seconds)  # flat_seconds None: not run (JSON null)
    approach = parallel or "serial"
    write_protocol(frame, outputs["runs"], {"dataset": dataset, "n": int(X.shape[0]), "p": int(X.shape[1]),
                                "standardize": bool(spec.standardize), "approach": approach,
                                "workers": (int(n_jobs) if not scheduler else "cluster") if parallel else 1,
                                "seconds": seconds, "non_nested_seconds": flat_seconds,
                                "settings": {k: v for k, v in settings.items() if k != "datasets"}}, tags)
    plot_hmac(X, np.asarray(records.labels), frame, outputs["figure"], dataset=dataset)
    log.info("%s: HMAC (%s) at %d levels in %.2f s; clusters per level %s", dataset, approach, len(frame),
             seconds, frame["n_clusters"].tolist())


@contextlib.contextmanager
def _named(dataset: str):
    """Re-raise HMAC's one-line errors with the data set's name (and the config field for duplicates)."""
    from hlm.errors import DataError

    try:
        yield
    except DataError as exc:
        text = str(exc).replace("pass allow_duplicates=True", "set hmac.allow_duplicates: true")
        raise DataError(f"HMAC on data set '{dataset}': {text}") from None


def levels_frame(result, seconds: float, flat=None, flat_seconds: float = float("nan")) -> pd.DataFrame:
    """One row per level: its bandwidth, cluster count, whether it changed, the sizes, labels and parents; with
    ``flat`` (the non-nested run of the same bandwidths), its cluster count and labels at the level and their
    adjusted Rand index with the nested labels."""
    from sklearn.metrics import adjusted_rand_score

    rows = []
    for level, c in enumerate(result.levels):
        row = {"level": level + 1, "bandwidth": float(c.bandwidth), "n_clusters": int(len(c.sizes)),
               "changed": bool(c.changed), "sizes": [int(s) for s in c.sizes],
               "labels": [int(v) for v in c.labels], "parent": [int(v) for v in c.parent],
               "modes": [float(v) for v in np.asarray(c.modes, dtype=np.float64).ravel()],
               "total_seconds": float(seconds)}
        if flat is not None:
            f = flat.levels[level]
            row.update({"n_clusters_non_nested": int(f.n_clusters), "labels_non_nested": [int(v) for v in f.labels],
                        "ari_non_nested": float(adjusted_rand_score(c.labels, f.labels)),
                        "non_nested_seconds": float(flat_seconds)})
        rows.append(row)
    return pd.DataFrame(rows)
