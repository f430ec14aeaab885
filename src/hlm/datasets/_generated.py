"""Generated data sets of the registry (``format: generated``): drawn, not read.

An entry names a ``generator`` with ``n_objects``, ``n_features`` and ``seed``;
the draws come from numpy's legacy ``RandomState(seed)``, whose stream numpy
keeps frozen, so one seed gives the same bytes on every numpy version (its
normal draws call the C library's ``log``: a libm that rounds differently
could change a last bit, which the SHA-256 check reports). The entry's
``sha256`` is :func:`generated_sha256` of the draw: the SHA-256 of X as
little-endian float64 in C order, followed by the labels in UTF-8, each ended
by a newline ("1\\n2\\n...").

Generators
----------
``ringnorm`` (Breiman 1996, *Bias, variance, and arcing classifiers*, TR 460, UC Berkeley;
as R's ``mlbench.ringnorm(n, d)``, mlbench 2.1, R/mlbench-class.R): class "2" is
a random subset of floor(n/2) objects drawn from N(a 1, I), a = 1/sqrt(d);
class "1" is the rest, drawn from N(0, 4 I) (sd 2). The Bayes rule
(mlbench's ``bayesclass``) says class "2" iff
||x||^2/4 + d log 4 > ||x - a 1||^2; its error is about 1.5 % at d = 20.

``ringnorm_delve``: the same with a = 2/sqrt(d), DELVE's definition (its ringnorm
description: "Class 2 has mean (a,a,..a) and unit covariance. a = 2/sqrt(20).
Breiman reports the theoretical expected misclassification rate as 1.3%"; 7,400
cases). The LLC-PC paper's Ringnorm is DELVE's (its Table 1), and its linear
classifier's 75.2% fits a = 2/sqrt(20) (about 76% against 64% for 1/sqrt(20),
measured). Bayes error about 1.2 % at d = 20.
The subset is ``permutation(n)[:floor(n/2)]``; then class "1"'s rows, then
class "2"'s, are drawn row by row in index order. R's stream cannot be
reproduced, so the objects are not R's, only their distribution is.

``waveform`` (Breiman, Friedman, Olshen & Stone 1984, *Classification and Regression Trees*, pp. 49-55;
as Hastie, Tibshirani & Friedman, *The Elements of Statistical Learning*, the mixture-discriminant example
the dissertation's chapter 4 cites): 21 features, three equally likely classes, each a random convex
combination of two of the three triangular base waves h1(j) = max(6 - |j - 11|, 0), h2(j) = h1(j - 4),
h3(j) = h1(j + 4), j = 1..21, plus N(0, 1) noise in every feature: class "1" is u h1 + (1 - u) h2,
class "2" u h1 + (1 - u) h3, class "3" u h2 + (1 - u) h3, u ~ U(0, 1) per object. Bayes error about 14 %.
Draw order: the n classes (``randint(3, size=n)``), the n u's, then the n x 21 noise matrix row by row.
UCI's generator names the waves differently (peaks at 7, 15 and 11); its three classes are the same three
pairs of waves, so the two differ only in the class names. ``n_features`` must be 21.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Generated:
    """One draw of a generator: X (n x d float64), labels (n, str), feature names and the SHA-256."""

    X: np.ndarray
    labels: np.ndarray
    columns: list[str]
    sha256: str


def ringnorm(n_objects: int, n_features: int, seed: int, shift: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """(X, labels) of mlbench's ringnorm (module docstring), from ``RandomState(seed)``; class "2"'s mean is
    shift/sqrt(d) in every coordinate (1: mlbench, 2: DELVE)."""
    rs = np.random.RandomState(seed)
    n, d = int(n_objects), int(n_features)
    second = np.zeros(n, dtype=bool)
    second[rs.permutation(n)[: n // 2]] = True
    X = np.empty((n, d), dtype=np.float64)
    X[~second] = rs.normal(0.0, 2.0, size=(n - n // 2, d))
    X[second] = rs.normal(shift / np.sqrt(d), 1.0, size=(n // 2, d))
    return X, np.where(second, "2", "1").astype(object)


def ringnorm_delve(n_objects: int, n_features: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(X, labels) of DELVE's ringnorm: mlbench's with a = 2/sqrt(d) (module docstring)."""
    return ringnorm(n_objects, n_features, seed, shift=2.0)


def ringnorm_bayes(X: np.ndarray, shift: float = 1.0) -> np.ndarray:
    """mlbench's Bayes rule for ringnorm: "2" iff ||x||^2/4 + d log 4 > ||x - a 1||^2, a = shift/sqrt(d)."""
    d = X.shape[1]
    far = (X**2).sum(axis=1) / 4 + d * np.log(4.0)
    near = ((X - shift / np.sqrt(d)) ** 2).sum(axis=1)
    return np.where(far > near, "2", "1").astype(object)


def waveform_bases() -> np.ndarray:
    """(3, 21) base waves h1, h2, h3 of Breiman's waveform: h1(j) = max(6 - |j - 11|, 0), h2(j) = h1(j - 4),
    h3(j) = h1(j + 4), j = 1..21."""
    j = np.arange(1, 22, dtype=np.float64)
    h1 = np.maximum(6.0 - np.abs(j - 11.0), 0.0)
    return np.vstack([h1, np.maximum(6.0 - np.abs(j - 15.0), 0.0), np.maximum(6.0 - np.abs(j - 7.0), 0.0)])


#: the two base waves (indices into waveform_bases) whose mixture makes each class "1", "2", "3"
WAVEFORM_PAIRS = ((0, 1), (0, 2), (1, 2))


def waveform(n_objects: int, n_features: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(X, labels) of Breiman's waveform (module docstring), from ``RandomState(seed)``."""
    if int(n_features) != 21:
        raise ValueError(f"waveform: n_features must be 21, not {n_features}")
    rs = np.random.RandomState(seed)
    n = int(n_objects)
    y = rs.randint(3, size=n)
    u = rs.uniform(0.0, 1.0, size=n)
    noise = rs.normal(0.0, 1.0, size=(n, 21))
    h = waveform_bases()
    pairs = np.asarray(WAVEFORM_PAIRS)
    X = u[:, None] * h[pairs[y, 0]] + (1.0 - u)[:, None] * h[pairs[y, 1]] + noise
    return X, (y + 1).astype(str).astype(object)


GENERATORS = {"ringnorm": ringnorm, "ringnorm_delve": ringnorm_delve, "waveform": waveform}


def generated_sha256(X: np.ndarray, labels) -> str:
    """SHA-256 of X (little-endian float64, C order) and then the labels, each UTF-8 with a newline."""
    digest = hashlib.sha256(np.ascontiguousarray(X, dtype="<f8").tobytes())
    digest.update("".join(f"{y}\n" for y in labels).encode())
    return digest.hexdigest()


def generate(generator: str, n_objects: int, n_features: int, seed: int) -> Generated:
    """Draw a generated data set; its columns are mlbench's names x.1 .. x.d.

    The generators of the module docstring (docs/data.md, "Generated data"): Breiman's ringnorm as R's
    mlbench (``ringnorm``), DELVE's (``ringnorm_delve``), and Breiman's waveform (``waveform``), each from
    numpy's legacy ``RandomState(seed)``.

    Parameters
    ----------
    generator : {"ringnorm", "ringnorm_delve", "waveform"}
        The generator's name (a registry entry's ``generator``).
    n_objects : int
        N, the number of objects drawn.
    n_features : int
        d, the number of features (21 for waveform).
    seed : int
        The ``RandomState`` seed.

    Returns
    -------
    Generated
        A dataclass with ``X`` (N, d) float64, ``labels`` (N,) str (``"1"``, ``"2"``, ...), ``columns``
        (``["x.1", ..., "x.d"]``) and ``sha256``, the hex digest of the draw (:func:`generated_sha256`, the
        value of a registry entry's ``sha256``).

    Raises
    ------
    ValueError
        For waveform with ``n_features`` other than 21.

    Examples
    --------
    >>> from hlm.datasets import generate
    >>> data = generate("ringnorm", n_objects=6, n_features=2, seed=0)
    >>> data.X.shape, data.columns
    ((6, 2), ['x.1', 'x.2'])
    >>> print(data.labels)  # class "2": floor(6/2) objects
    ['1' '2' '2' '1' '1' '2']
    >>> len(data.sha256)
    64
    >>> generate("waveform", 4, 21, seed=0).X.shape
    (4, 21)
    """
    X, labels = GENERATORS[generator](n_objects, n_features, seed)
    columns = [f"x.{j + 1}" for j in range(X.shape[1])]
    return Generated(X=X, labels=labels, columns=columns, sha256=generated_sha256(X, labels))
