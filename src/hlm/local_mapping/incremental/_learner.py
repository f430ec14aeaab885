"""What the incremental learners share (paper section 4): classes seen, batch checks, the
per-round seeds, the component schedule of section 5.5, VSH per class and prediction from the
prototypes."""

from __future__ import annotations

import warnings

import numpy as np

from hlm.base._classifiers import fit_classes
from hlm.errors import DataError
from hlm.local_mapping._clustering import cluster
from hlm.local_mapping._gamma import ComponentStats
from hlm.local_mapping._mixture_hlm import HLMModel, estimate_scales
from hlm.local_mapping.incremental._distances import Distances

#: section 5.5: components per class at the start (and, in Scheme I, per new batch)
INITIAL_COMPONENTS = 4
#: section 5.5: Scheme II (and Retrain) add this many components per class each round
COMPONENT_STEP = 2


def component_schedule(round_: int, scheme: str) -> int:
    """Components per class after round ``round_`` (1 = the initial batch), section 5.5.

    ``scheme_i``: 4 new ones per batch, so 4 r in total; ``scheme_ii`` and
    ``retrain``: 4 + 2 (r - 1). (Capped by the class size when clustering.)

    Parameters
    ----------
    round_ : int
        The round, from 1.
    scheme : {"scheme_i", "scheme_ii", "retrain"}
        The learner (any other value is read as Scheme II's schedule).

    Returns
    -------
    int
        The number of components per class after that round.

    Examples
    --------
    >>> from hlm.local_mapping.incremental import component_schedule
    >>> [component_schedule(r, "scheme_i") for r in (1, 2, 3)]
    [4, 8, 12]
    >>> [component_schedule(r, "scheme_ii") for r in (1, 2, 3)]
    [4, 6, 8]
    """
    if round_ < 1:
        raise ValueError("rounds are numbered from 1")
    if scheme == "scheme_i":
        return INITIAL_COMPONENTS * round_
    return INITIAL_COMPONENTS + COMPONENT_STEP * (round_ - 1)


class Incremental:
    """Shared bookkeeping: classes seen, batch checks, prediction from the prototypes."""

    def __init__(self, n_components: int = INITIAL_COMPONENTS, n_init: int = 20, min_cluster_size: int = 3,
                 squared: bool = True, round_shape: bool = True, random_state: int = 0):
        self.n_components = n_components
        self.n_init = n_init
        self.min_cluster_size = min_cluster_size
        self.squared = squared
        self.round_shape = round_shape
        self.random_state = random_state
        self.classes_: list = []
        self.class_counts_: list[int] = []
        self.n_rounds_ = 0

    # -- input ------------------------------------------------------------------
    def _check_batch(self, ids, y, distances) -> tuple[np.ndarray, np.ndarray] | None:
        """(ids as str, class indices), new classes appended; None (with a warning) for an empty batch."""
        ids = np.asarray(ids).astype(str)
        y = np.asarray(y)
        if y.ndim != 1:
            raise DataError(f"partial_fit: y must be 1-D (one label per object), got an array of shape {y.shape}")
        if ids.ndim != 1 or len(ids) != len(y):
            raise DataError(f"partial_fit: {len(ids)} ids but {len(y)} labels")
        if len(ids) == 0:
            warnings.warn("partial_fit: empty batch, nothing to learn (model unchanged)", UserWarning, stacklevel=3)
            return None
        try:  # missing labels, mixed label types; a batch may hold a single class
            fit_classes(y, len(y), min_classes=1)
        except DataError as exc:
            raise DataError(f"partial_fit{str(exc).removeprefix('fit')}") from None
        if len(set(ids)) != len(ids):
            raise DataError("partial_fit: duplicate ids in the batch")
        if not callable(distances):
            raise DataError("partial_fit: distances must be a callable distances(rows, cols), e.g. MatrixDistances")
        for label in y:
            if label not in self.classes_:  # a class never seen before gets its components now
                self.classes_.append(label)
                self.class_counts_.append(0)
        y_idx = np.array([self.classes_.index(label) for label in y], dtype=np.intp)
        for k in y_idx:
            self.class_counts_[k] += 1
        self.n_rounds_ += 1
        return ids, y_idx

    def _lookup(self, distances: Distances, rows, cols, what: str) -> np.ndarray:
        try:
            D = np.asarray(distances(np.asarray(rows), np.asarray(cols)), dtype=np.float64)
        except (KeyError, IndexError, DataError) as exc:
            raise DataError(f"partial_fit: {what}: {exc}") from None
        if D.shape != (len(rows), len(cols)) or not np.isfinite(D).all() or (D < 0).any():
            raise DataError(f"partial_fit: {what}: expected {len(rows)} x {len(cols)} finite non-negative "
                            f"distances, got shape {D.shape}")
        return D

    def _round_seed(self, k: int) -> int:
        """Seed of this round for class k (k = -1: the sampling), from (random_state, round, k)."""
        return int(np.random.SeedSequence([self.random_state, self.n_rounds_, k + 1]).generate_state(1)[0])

    # -- prediction -------------------------------------------------------------
    def model(self) -> HLMModel:
        """The current mixture (prototypes named by ``prototype_ids_``).

        Returns
        -------
        HLMModel
            The fitted mixture; its ``prototype_index`` are positions in ``prototype_ids_``.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            Before any ``partial_fit``.
        """
        if not self.n_rounds_:
            from sklearn.exceptions import NotFittedError

            raise NotFittedError(f"{type(self).__name__} has seen no data yet; call partial_fit first")
        return self._model

    def predict_log_scores(self, test_ids, distances: Distances) -> np.ndarray:
        """log pi_k + log phi(z | M_k) (eqs. 5, 6) of each test object, from its distances to the prototypes.

        Parameters
        ----------
        test_ids : sequence
            The ids of the objects to score.
        distances : callable
            ``distances(rows, cols)`` (ids in, matrix out), e.g. :class:`MatrixDistances`; asked only for
            the test-to-prototype distances.

        Returns
        -------
        ndarray of shape (len(test_ids), n_classes)
            The log class scores, columns in ``classes_`` order.
        """
        model = self.model()
        D = np.asarray(distances(np.asarray(test_ids).astype(str), self.prototype_ids_), dtype=np.float64)
        return model.log_scores(D)

    def predict(self, test_ids, distances: Distances) -> np.ndarray:
        """Classify objects by the largest posterior (eq. 6), from their distances to the prototypes only.

        Parameters
        ----------
        test_ids : sequence
            The ids of the objects to classify.
        distances : callable
            ``distances(rows, cols)`` (ids in, matrix out), e.g. :class:`MatrixDistances`.

        Returns
        -------
        ndarray of shape (len(test_ids),)
            The predicted labels (dtype object).
        """
        scores = self.predict_log_scores(test_ids, distances)
        return np.asarray(self.classes_, dtype=object)[np.argmax(scores, axis=1)]

    @property
    def n_components_(self) -> np.ndarray:
        """Components per class (in ``classes_`` order)."""
        return np.bincount(self.model().component_class, minlength=len(self.classes_))

    def _set(self, proto_ids, comp_class, comp_count, stats: ComponentStats) -> None:
        """Eq. 3/4 with shrinkage over all components; prototypes named by id."""
        comp_class = np.asarray(comp_class, dtype=np.intp)
        if stats.weight.sum() <= 0:
            raise DataError("partial_fit: no cluster yet has enough objects to estimate the Gamma shape and scales")
        scale, shapes, _ = estimate_scales(stats, comp_class, len(self.classes_), "common", self.round_shape)
        counts = np.asarray(comp_count, dtype=np.float64)
        totals = np.bincount(comp_class, counts, minlength=len(self.classes_))
        n = np.asarray(self.class_counts_, dtype=np.float64)
        self.prototype_ids_ = np.asarray(proto_ids).astype(str)
        self._model = HLMModel(
            classes=[str(c) for c in self.classes_], class_prior=(n / n.sum()).tolist(),
            prototype_index=list(range(len(comp_class))), component_class=comp_class.tolist(),
            weight=(counts / totals[comp_class]).tolist(), scale=scale.tolist(), shape=float(shapes[0]),
            squared=self.squared,
        )

    def _u(self, D_member_proto: np.ndarray) -> np.ndarray:
        return D_member_proto**2 if self.squared else D_member_proto


def cluster_class(D: np.ndarray, M: int, seed: int, n_init: int, min_cluster_size: int, weights=None):
    """VSH of one class into min(M, n) clusters: (prototype positions, assignment); every object is its
    own prototype when the class has fewer than ``min_cluster_size`` objects (as ``MixtureHLM``)."""
    n = D.shape[0]
    if n < min_cluster_size:
        return np.arange(n), np.arange(n)
    res = cluster(D, min(M, n), "vsh", seed=seed, n_init=n_init, weights=weights)
    return np.asarray(res.prototypes), np.asarray(res.assignment)
