"""Random train/test partitions (paper section 5.1: 20 random 80/20 splits), or an archive's own split.

Each split is a plain random partition (as in the paper), seeded from
(seed, dataset, split). The test part has ceil(test_fraction * N) objects,
which gives the paper's test sizes 20 / 43 / 87 for Aural Sonar, Protein
and Voting.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from hlm.base._seeds import derive_seed
from hlm.errors import ConfigError, DataError


def make_splits(n: int, *, dataset: str, n_splits: int, test_fraction: float, seed: int) -> pd.DataFrame:
    """Long table with columns ``split``, ``index``, ``role`` ('train'/'test')."""
    if not 0 < test_fraction < 1:
        raise ConfigError(f"config: field 'test_fraction' must be in (0, 1) (got {test_fraction})")
    n_test = math.ceil(test_fraction * n)
    if not 0 < n_test < n:
        raise DataError(
            f"dataset '{dataset}': {n} objects cannot be split into train and test parts "
            f"with test_fraction {test_fraction} ({n_test} test objects)"
        )
    frames = []
    for split in range(n_splits):
        perm = np.random.default_rng(derive_seed(seed, dataset, split)).permutation(n)
        role = np.full(n, "train", dtype=object)
        role[perm[:n_test]] = "test"
        frames.append(pd.DataFrame({"split": split, "index": np.arange(n), "role": role}))
    out = pd.concat(frames, ignore_index=True)
    out["split"] = out["split"].astype("int64")
    out["index"] = out["index"].astype("int64")
    out["role"] = out["role"].astype(str)
    return out


def given_split(ids, *, dataset: str) -> pd.DataFrame:
    """The archive's own train/test split as the protocol's only split (registry ``split: given``): the
    objects ``train-k`` train, ``test-k`` test (the ids of pooled TRAIN and TEST parts). Same columns as
    :func:`make_splits`, with ``split`` 0 only.

    Examples
    --------
    >>> given_split(["train-0", "train-1", "test-0"], dataset="x")["role"].tolist()
    ['train', 'train', 'test']
    """
    ids = [str(i) for i in ids]
    role = np.array([i.split("-", 1)[0] for i in ids], dtype=object)
    other = [i for i, r in zip(ids, role) if r not in ("train", "test")]
    if other:
        raise DataError(f"dataset '{dataset}': split given, but object {other[0]!r} is in neither part (the "
                        "ids of the archive's parts are train-k and test-k)")
    if not {"train", "test"} <= set(role):
        raise DataError(f"dataset '{dataset}': split given, but no {'test' if 'train' in role else 'train'} objects")
    out = pd.DataFrame({"split": np.zeros(len(ids), dtype=np.int64), "index": np.arange(len(ids), dtype=np.int64),
                        "role": role.astype(str)})
    return out


def split_indices(splits: pd.DataFrame, split: int) -> tuple[np.ndarray, np.ndarray]:
    """Sorted (train, test) object indices of one split."""
    part = splits[splits["split"] == split]
    train = np.sort(part.loc[part["role"] == "train", "index"].to_numpy())
    test = np.sort(part.loc[part["role"] == "test", "index"].to_numpy())
    return train, test
