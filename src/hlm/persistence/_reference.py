"""The reference objects of a fitted model: the training objects whose distances its predictions read.

A model fitted on precomputed distances predicts from ``D[new, train]``, a column per training object. Most
methods read every column (k-NN, local SDA, the SVMs whose kernel is modified by the training spectrum or
whose features are the similarities to all training objects). Two read fewer:

* Mixture HLM reads its prototypes' columns only (paper section 3.1, eqs. 5-6: each component is centred
  on its prototype), so a model of N objects and P prototypes needs P distances per new object;
* P-SVM reads the columns of its support features only: the decision of each class pair is
  ``k~(u)' alpha + b`` (P-SVM spec 6.9), and a column with ``alpha_j = 0`` adds nothing.

A wrapper that transforms the relation element by element (``DistanceTransform``, ``SimilarityFromDistances``)
reads what its estimator reads. :func:`expand` places the distances to the reference objects in a matrix of
the full width, the other columns filled: the model reads only the reference columns, so its predictions are
those of the full matrix exactly (tested for every method).
"""

from __future__ import annotations

import numpy as np


def reference_index(model, n_train: int) -> np.ndarray:
    """The sorted training indices (fit order) whose columns ``model``'s predictions read.

    Parameters
    ----------
    model : estimator
        A fitted estimator of the method table (wrappers included).
    n_train : int
        The number of objects it was fitted on.

    Returns
    -------
    ndarray of int64
        Indices into the fit objects; ``arange(n_train)`` when the model reads every column.

    Examples
    --------
    >>> import numpy as np
    >>> from hlm.local_mapping import MixtureHLM
    >>> from hlm.persistence import reference_index
    >>> rng = np.random.default_rng(0)
    >>> X = np.r_[rng.normal(0, 1, (12, 2)), rng.normal(6, 1, (12, 2))]
    >>> D = np.sqrt(((X[:, None] - X[None]) ** 2).sum(-1))
    >>> mix = MixtureHLM(n_components=2, random_state=0).fit(D, [0] * 12 + [1] * 12)
    >>> len(reference_index(mix, 24))  # its prototypes
    4
    """
    inner = _unwrapped(model)
    if hasattr(inner, "prototypes_"):  # Mixture HLM
        return np.unique(np.asarray(inner.prototypes_, dtype=np.int64))
    if hasattr(inner, "pair_models_") and all(hasattr(p, "alpha") for p in inner.pair_models_):  # P-SVM
        used = [np.asarray(p.columns)[np.asarray(p.alpha) != 0] for p in inner.pair_models_]
        return np.unique(np.concatenate(used).astype(np.int64)) if used else np.arange(n_train, dtype=np.int64)
    return np.arange(n_train, dtype=np.int64)


def expand(R_reference: np.ndarray, index: np.ndarray, n_train: int, fill: float = 0.0) -> np.ndarray:
    """The (m, n_train) relation whose columns ``index`` are ``R_reference``'s, the others ``fill``.

    Parameters
    ----------
    R_reference : ndarray of shape (m, len(index))
        Distances (or similarities) of m objects to the reference objects, in ``index`` order.
    index : ndarray of int
        The reference objects' fit indices (:func:`reference_index`).
    n_train : int
        The number of fit objects.
    fill : float, default 0.0
        The value of the columns the model does not read.

    Returns
    -------
    ndarray of shape (m, n_train), float64
    """
    R_reference = np.asarray(R_reference, dtype=np.float64)
    if len(index) == n_train:
        return R_reference
    out = np.full((R_reference.shape[0], n_train), fill)
    out[:, index] = R_reference
    return out


def _unwrapped(model):
    """The estimator under the element-wise wrappers (``DistanceTransform``, ``SimilarityFromDistances``)."""
    from hlm.distances._reciprocal import SimilarityFromDistances
    from hlm.distances._transform import DistanceTransform

    while isinstance(model, (DistanceTransform, SimilarityFromDistances)):
        model = model.estimator_
    return model
