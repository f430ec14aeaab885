"""The incremental-learning protocol of paper section 5.5, per data set and split.

For each split: the split's test part (20%) is held out; its training part is
shuffled (seed from (seed, data set, split, "incremental")), its first 20%
is the initial batch and the rest is cut into 8 equal batches. After every
batch the learner is updated (``partial_fit``) and scores the test part: 9
rounds. The online KDE schemes (``VECTOR_SCHEMES``) read feature vectors instead of distances,
standardised with the split's training part. A distance that uses labels (House Votes' VDM) is
built per split from the training part's labels (all its batches': no test label).
``round_seconds`` is the wall time of the update (the paper's Table 5 sums it over the rounds);
``predict_seconds`` that of scoring the test part.
"""

from __future__ import annotations

import logging
import time
from importlib import import_module

import numpy as np
import pandas as pd

from hlm.base._seeds import derive_seed
from hlm.datasets._artifacts import DistanceArtifact
from hlm.distances._vdm import training_vdm
from hlm.errors import DataError
from hlm.local_mapping.incremental import MatrixDistances, Retrain, SchemeI, SchemeII
from hlm.pipeline.evaluation.splits import split_indices
from hlm.pipeline.incremental import ONLINE_KDE_LEARNER, VECTOR_SCHEMES

log = logging.getLogger("hlm")

SCHEMES = {"scheme_i": SchemeI, "scheme_ii": SchemeII, "retrain": Retrain}
# the online KDE learners on feature vectors (hlm.pipeline.incremental.VECTOR_SCHEMES) are imported on use, so that
# the HLM schemes' jobs do not depend on their code
#: section 5.5: the initial batch is 20% of the training part, the rest comes in 8 equal batches
INITIAL_FRACTION = 0.2
N_BATCHES = 8


def _online_kde():
    """The online KDE learners' module, imported by name: the HLM schemes' jobs do not depend on it
    (hlm.pipeline.incremental.incremental_sources)."""
    return import_module(ONLINE_KDE_LEARNER)


def batch_indices(train: np.ndarray, seed: int, initial_fraction: float = INITIAL_FRACTION,
                  n_batches: int = N_BATCHES) -> list[np.ndarray]:
    """The training part in arrival order: a seeded shuffle, cut into the initial batch and ``n_batches``."""
    order = np.random.default_rng(seed).permutation(np.asarray(train))
    first = int(round(initial_fraction * len(order)))
    return [order[:first], *np.array_split(order[first:], n_batches)]


def make_learner(scheme: str, params: dict | None = None, random_state: int = 0):
    """The learner of ``scheme``: ``params`` set, its own defaults for the rest."""
    if scheme in VECTOR_SCHEMES:
        return _online_kde().OnlineKDELearner(VECTOR_SCHEMES[scheme], random_state=random_state, **(params or {}))
    if scheme not in SCHEMES:
        raise ValueError(f"unknown incremental scheme {scheme!r}; expected one of "
                         f"{', '.join([*SCHEMES, *VECTOR_SCHEMES])}")
    return SCHEMES[scheme](random_state=random_state, **(params or {}))


def learner_settings(scheme: str, params: dict | None = None) -> dict:
    """The values the learner of ``scheme`` uses for the config's settings of it
    (hlm.pipeline.incremental.LEARNER_SETTINGS): ``params`` where set, else the learner's defaults. Stored with
    the results."""
    from hlm.pipeline.incremental import LEARNER_SETTINGS

    if scheme in VECTOR_SCHEMES:
        return {}
    learner = make_learner(scheme, params)
    return {k: getattr(learner, k) for k in LEARNER_SETTINGS[scheme]}


def run_incremental(artifact: DistanceArtifact, splits: pd.DataFrame, scheme: str, *, dataset: str, seed: int,
                    params: dict | None = None, split_ids: list[int] | None = None) -> pd.DataFrame:
    """One row per (split, round): split, round, n_seen, error_rate (%), round_seconds, n_components, ..."""
    ids = np.asarray(artifact.ids).astype(str)
    labels = np.asarray(artifact.labels)
    if scheme in VECTOR_SCHEMES and artifact.vectors is None:
        raise DataError(f"incremental scheme '{scheme}' needs feature vectors; data set '{dataset}' is of kind "
                        f"'{artifact.metadata.get('kind', '?')}' (only kind: vectors has them)")
    by_split = scheme in VECTOR_SCHEMES or artifact.records is not None  # built per split, below
    distances = None if by_split else MatrixDistances(artifact.distances, ids)
    rows = []
    for split in split_ids if split_ids is not None else sorted(splits["split"].unique()):
        train, test = split_indices(splits, int(split))
        if scheme in VECTOR_SCHEMES:  # standardised with the split's training part (spec section 9)
            distances = _online_kde().VectorRows(artifact.vectors, ids, ids[train])
        elif artifact.records is not None:  # a distance that uses labels: the training part's only
            distances = MatrixDistances(training_vdm(artifact.records, labels, train,
                                                     artifact.metadata.get("vdm_q", 2)), ids)
        learner = make_learner(scheme, params, derive_seed(seed, dataset, int(split), "incremental-model") % 2**31)
        n_seen = 0
        for r, batch in enumerate(batch_indices(train, derive_seed(seed, dataset, int(split), "incremental")), 1):
            t0 = time.perf_counter()
            learner.partial_fit(ids[batch], labels[batch], distances)
            t1 = time.perf_counter()
            pred = learner.predict(ids[test], distances)
            t2 = time.perf_counter()
            n_seen += len(batch)
            rows.append({
                "split": int(split), "round": r, "n_seen": n_seen,
                "error_rate": 100.0 * float(np.mean(pred.astype(str) != labels[test].astype(str))),
                "round_seconds": t1 - t0, "n_components": int(learner.n_components_.sum()),
                "predict_seconds": t2 - t1,
            })
    return pd.DataFrame(rows)


def run(*, dataset: str, scheme: str, distances: str, splits_path: str, out: str, seed: int, params: dict,
        tags: dict) -> None:
    """One scheme on every split of one data set: 9 rounds each, to Parquet (MLflow: stages.track).

    ``params``: the learner hyper-parameters the config sets; the others keep the learner's
    defaults. The metadata (and MLflow) record the values used (``learner_settings``).
    """
    from hlm.datasets._artifacts import read_distances, write_frame

    artifact = read_distances(distances)
    frame = run_incremental(artifact, pd.read_parquet(splits_path), scheme, dataset=dataset, seed=seed,
                            params=params)
    write_frame(frame, out, metadata={"dataset": dataset, "scheme": scheme,
                                      "params": learner_settings(scheme, params),
                                      **{k: v for k, v in tags.items() if k in ("config_hash", "git_commit")}})
    last = frame[frame["round"] == frame["round"].max()]
    log.info("%s/%s: last-round error %.2f%% (sd %.2f) over %d splits; %.3f s of updates per split",
             dataset, scheme, last.error_rate.mean(), last.error_rate.std(ddof=1) if len(last) > 1 else 0.0,
             len(last), frame.groupby("split")["round_seconds"].sum().mean())
