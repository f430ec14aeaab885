"""Checks on matrices, labels and ids (data preparation, paper section 5.2).

Every failure is a one-line :class:`~hlm.errors.DataError` prefixed by
``dataset 'name' (path)``; row/column positions in messages are 1-based.
A matrix whose off-diagonal distances are all equal (every pair of objects
at one distance, e.g. an all-zero or constant similarity matrix) carries no
information: every method would predict the largest class, so it is an error
(``check_informative``). Three problems are only warnings:

* a distance matrix with a positive diagonal: the self-distance is set to 0
  (a distance's self-distance is 0 by definition) and a warning is issued;
  a negative diagonal is an error like any negative distance;
* a class with a single member (valid, but it can never be in both the
  training and the test part of a split);
* a class whose objects are all at distance 0 from each other (copies of one
  object): k-NN still works, but the HLM models get no spread of that class to
  estimate. Duplicates in general are not warned about (real data sets such as
  Protein and Voting have many).
"""

from __future__ import annotations

import warnings
from collections import Counter

import numpy as np

from hlm.base._blocks import nonfinite, row_blocks
from hlm.errors import DataError

KINDS = ("similarity", "distance")


class DataWarning(UserWarning):
    """Suspicious but usable data (see module docstring)."""


def where_of(name: str | None, path: str | None) -> str:
    """Message prefix ``dataset 'name' (path)``."""
    if name and path:
        return f"dataset '{name}' ({path})"
    if name:
        return f"dataset '{name}'"
    return str(path) if path else "data"


def _few(items, k: int = 3) -> str:
    items = list(items)
    more = f", ... ({len(items)} in all)" if len(items) > k else ""
    shown = (str(x) if isinstance(x, (int, np.integer)) else repr(str(x)) for x in items[:k])
    return ", ".join(shown) + more


def check_matrix(M, *, name: str | None = None, path: str | None = None, kind: str = "distance") -> np.ndarray:
    """Validate a square similarity/distance matrix; return it as float64.

    Errors: not 2-D square, non-numeric, NaN/inf, negative distances.
    A positive distance diagonal is zeroed with a :class:`DataWarning`.
    """
    where = where_of(name, path)
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}")
    try:
        M = np.asarray(M, dtype=np.float64)
    except (TypeError, ValueError):
        raise DataError(f"{where}: matrix is not numeric") from None
    if M.ndim != 2:
        raise DataError(f"{where}: matrix is not 2-D (shape {M.shape})")
    if M.shape[0] != M.shape[1]:
        raise DataError(f"{where}: matrix is not square ({M.shape[0]} x {M.shape[1]})")
    if M.shape[0] == 0:
        raise DataError(f"{where}: matrix is empty")
    bad = nonfinite(M)
    if bad:
        count, i, j = bad
        raise DataError(
            f"{where}: {kind} matrix has {count} NaN/inf entries (first at row {i + 1}, column {j + 1})"
        )
    if kind == "distance":
        negative = sum(int(np.count_nonzero(M[rows] < 0)) for rows in row_blocks(*M.shape))  # no N x N mask
        if negative:
            raise DataError(
                f"{where}: distance matrix has {negative} negative entries "
                f"(min {float(M.min()):g})"
            )
        diag = np.diag(M)
        if (diag != 0).any():
            warnings.warn(
                f"{where}: {int(np.count_nonzero(diag))} non-zero self-distances "
                f"(max {float(diag.max()):g}) set to 0",
                DataWarning,
                stacklevel=2,
            )
            M = M.copy()
            np.fill_diagonal(M, 0.0)
    return M


def _is_missing(x) -> bool:
    if x is None:
        return True
    if isinstance(x, float) and np.isnan(x):
        return True
    return isinstance(x, str) and x.strip() == ""


def check_ids(ids, *, name: str | None = None, path: str | None = None, what: str = "ids") -> np.ndarray:
    """Object ids as a str array; missing or duplicate ids are errors."""
    where = where_of(name, path)
    ids = np.asarray(list(ids), dtype=object)
    missing = [i for i, x in enumerate(ids) if _is_missing(x)]
    if missing:
        raise DataError(f"{where}: {len(missing)} {what} are missing (rows {_few([i + 1 for i in missing])})")
    ids = ids.astype(str)
    dup = sorted(k for k, c in Counter(ids.tolist()).items() if c > 1)
    if dup:
        raise DataError(f"{where}: duplicate {what} {_few(dup)}")
    return ids


def check_labels(
    labels, n: int, *, name: str | None = None, path: str | None = None, ids=None
) -> np.ndarray:
    """Validate class labels for ``n`` objects; return them as a str array.

    Errors: count != n, missing labels (None/NaN/empty), fewer than 2 classes.
    Warns (:class:`DataWarning`) for single-member classes.
    """
    where = where_of(name, path)
    labels = np.asarray(list(labels), dtype=object).ravel()
    if len(labels) != n:
        hint = (" (is the first line a header? only 'label' or 'id,label' are recognised)"
                if len(labels) == n + 1 else "")
        raise DataError(f"{where}: {len(labels)} labels for {n} objects{hint}")
    missing = [i for i, x in enumerate(labels) if _is_missing(x)]
    if missing:
        who = [ids[i] for i in missing] if ids is not None else [i + 1 for i in missing]
        kind = "objects" if ids is not None else "rows"
        raise DataError(f"{where}: {len(missing)} objects have no label ({kind} {_few(who)})")
    labels = np.array([str(x).strip() for x in labels], dtype=str)
    counts = Counter(labels.tolist())
    if len(counts) < 2:
        raise DataError(f"{where}: labels have {len(counts)} class(es); at least 2 are needed")
    single = sorted(k for k, c in counts.items() if c == 1)
    if single:
        warnings.warn(
            f"{where}: {len(single)} class(es) with a single member: {_few(single)}",
            DataWarning,
            stacklevel=2,
        )
    return labels


def align_labels(
    ids, label_ids, labels, *, name: str | None = None, path: str | None = None
) -> np.ndarray:
    """Reorder ``labels`` (keyed by ``label_ids``) to the matrix order ``ids``.

    Ids in the matrix but absent from the labels file, and ids in the labels
    file but absent from the matrix, are errors naming a few of them.
    """
    where = where_of(name, path)
    label_ids = check_ids(label_ids, name=name, path=path, what="label ids")
    pos = {k: i for i, k in enumerate(label_ids.tolist())}
    absent = [k for k in ids if k not in pos]
    if absent:
        raise DataError(f"{where}: {len(absent)} objects have no label (ids {_few(absent)})")
    extra = sorted(set(pos) - set(ids))
    if extra:
        raise DataError(f"{where}: labels file has {len(extra)} ids not in the matrix ({_few(extra)})")
    labels = np.asarray(list(labels), dtype=object)
    return labels[[pos[k] for k in ids]]


def check_informative(D: np.ndarray, labels, *, name: str | None = None, path: str | None = None,
                      kind: str = "distance") -> None:
    """DataError when every pair of objects is at the same distance (N >= 3); a DataWarning for
    classes whose objects are all at distance 0 from each other (module docstring).

    ``D`` is the final distance matrix; ``kind`` the data set's (a similarity was converted).
    """
    where = where_of(name, path)
    n = D.shape[0]
    if n >= 3:
        lo, hi = np.inf, -np.inf
        for rows in row_blocks(n, n):  # the off-diagonal extremes, without an N x N temporary
            block = D[rows].copy()
            diag = np.arange(rows.start, rows.stop)
            block[diag - rows.start, diag] = np.inf
            lo = min(lo, float(block.min()))
            block[diag - rows.start, diag] = -np.inf
            hi = max(hi, float(block.max()))
        if hi - lo <= 1e-12 * hi:
            same = (f"has the same similarity (distance {hi:g} after conversion)" if kind == "similarity"
                    else f"is at the same distance ({hi:g})")
            raise DataError(f"{where}: every pair of objects {same}, so the matrix carries no information "
                            "(every method would predict the largest class)")
    labels = np.asarray(labels)
    collapsed = []
    for c in np.unique(labels):
        idx = np.flatnonzero(labels == c)
        if idx.size >= 2 and not D[np.ix_(idx, idx)].any():
            collapsed.append(c)
    if collapsed:
        warnings.warn(
            f"{where}: {len(collapsed)} class(es) whose objects are all at distance 0 from each other "
            f"(copies of one object): {_few(collapsed)}; the HLM models get no spread of them to estimate",
            DataWarning,
            stacklevel=2,
        )
