"""A fitted model with what it needs to classify new objects, saved as a folder of JSON and ``.npz``.

:class:`SavedModel` holds a fitted estimator of the method table, the data set's conversion (its kind, its
distance and options, the similarity-to-distance rule and bound, the standardisation) and the reference
objects: the training objects whose distances the estimator reads (:func:`hlm.persistence.reference_index`).
New objects are classified from their raw form (vectors, series, sequences: the distances to the reference
objects are computed here, in row chunks) or from their relation to the reference objects, computed
elsewhere. :func:`save_model` and :func:`load_model` write and read the folder::

    model.json   format and versions, method, parameters, classes, data set, reference ids, the estimator's
                 state (hlm.persistence.to_state)
    arrays.npz   the numeric arrays (numpy.savez; loaded with allow_pickle=False)
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from hlm.distances._channels import channels, length
from hlm.errors import DataError
from hlm.persistence._reference import expand
from hlm.persistence._state import StateError, from_state, to_state

FORMAT = "hlm-model"
FORMAT_VERSION = 1
#: what an estimator takes (SavedModel.input)
INPUTS = ("distances", "similarities", "vectors", "records")
#: new objects classified per chunk: the chunk's relation to the reference objects is in memory at a time
CHUNK_ROWS = 512


@dataclass
class SavedModel:
    """A fitted estimator with its data set's conversion and reference objects (module docstring).

    Attributes
    ----------
    estimator : estimator
        The fitted estimator, as the method table makes it (wrappers included).
    method : str
        The method's id in the method table.
    params : dict
        The hyper-parameters chosen (or fixed) for the fit.
    classes : list of str
        The class labels, in ``predict_proba``'s column order.
    input : {"distances", "similarities", "vectors", "records"}
        What the estimator takes: the data set's distances, its native similarities, its feature vectors,
        or its category codes.
    dataset : dict
        The data set: ``name``, ``kind``, ``distance`` and ``options``, ``to_distance`` and ``upper_bound``,
        ``symmetrized``, ``standardize``, ``sha256``, ``n_objects``.
    n_train : int
        The number of objects the estimator was fitted on.
    reference_ids : list of str
        The ids of the reference objects, in column order.
    reference_index : ndarray of int64
        Their indices among the fit objects.
    reference_objects : list or ndarray or None
        The reference objects themselves (series, sequences, or standardised vectors), or None when new
        objects come as their relation only (a matrix data set) or as what the estimator takes.
    arrays : dict of str to ndarray
        Other numeric arrays of the data set (``feature_mean``, ``feature_sd``).
    info : dict
        Provenance: versions, the CV's choice, the fit time.

    Examples
    --------
    ``hlm fit`` (``hlm.pipeline.fit.fit_model``) makes one from a registry entry; by hand, a 1-NN on four
    points of a line, saved, loaded, and classifying new points from their raw form:

    >>> import tempfile
    >>> import numpy as np
    >>> from hlm.neighbors import KNNClassifier
    >>> from hlm.persistence import SavedModel, load_model, save_model
    >>> X = np.array([[0.0], [1.0], [5.0], [6.0]])
    >>> knn = KNNClassifier(n_neighbors=1).fit(np.abs(X - X.T), ["a", "a", "b", "b"])
    >>> model = SavedModel(estimator=knn, method="knn", params={"n_neighbors": 1}, classes=["a", "b"],
    ...                    input="distances", dataset={"name": "line", "kind": "vectors", "distance": "euclidean"},
    ...                    n_train=4, reference_ids=["p", "q", "r", "s"], reference_index=np.arange(4),
    ...                    reference_objects=X)
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     again = load_model(save_model(model, f"{tmp}/line"))
    >>> print(again.predict([[0.4], [5.8]]), again.n_computed)  # 2 new x 4 reference objects
    ['a' 'b'] 8
    >>> print(again.predict(relation=[[0.4, 0.6, 4.6, 5.6]]))  # or their distances to p, q, r, s
    ['a']
    """

    estimator: object
    method: str
    params: dict
    classes: list
    input: str
    dataset: dict
    n_train: int
    reference_ids: list
    reference_index: np.ndarray
    reference_objects: object = None
    arrays: dict = field(default_factory=dict)
    info: dict = field(default_factory=dict)
    #: distance (or similarity) evaluations made by :meth:`relation` since the model was made or loaded
    n_computed: int = field(default=0, compare=False)

    # ------------------------------------------------------------------ relation of new objects
    @property
    def takes_relation(self) -> bool:
        """New objects are given by their relation to the reference objects (not as vectors or records)."""
        return self.input in ("distances", "similarities")

    def relation(self, objects) -> np.ndarray:
        """The data set's own relation of new raw objects to the reference objects (distances, or the native
        similarities of a similarity data set), one row per object.

        Parameters
        ----------
        objects : sequence
            Series (1-D arrays), sequences (str) or feature vectors (rows, unstandardised), of the data set's
            kind.

        Returns
        -------
        ndarray of shape (len(objects), len(reference_ids))
        """
        from hlm.distances._registry import get_distance

        kind, name = self.dataset["kind"], self.dataset.get("distance")
        if self.reference_objects is None or name is None or name == "vdm":
            raise DataError(f"model of data set '{self.dataset['name']}' (kind {kind}): new objects cannot be "
                            "given as raw objects; give their distances (or similarities) to the reference "
                            "objects (hlm predict --distances; --reference lists them)")
        objects = self._checked_objects(objects)
        distance = get_distance(name)
        options = self.dataset.get("options") or {}
        R = distance.pairwise(objects, self.reference_objects, options)
        self.n_computed += R.size
        if self.dataset.get("symmetrized"):  # the training matrix was (R + R^T) / 2 (paper section 5.2)
            R = 0.5 * (R + distance.pairwise(self.reference_objects, objects, options).T)
            self.n_computed += R.size
        return R

    def _checked_objects(self, objects):
        kind, where = self.dataset["kind"], f"model of data set '{self.dataset['name']}'"
        if kind == "vectors":
            X = np.asarray(objects, dtype=np.float64)
            p = np.asarray(self.reference_objects).shape[1]
            if X.ndim != 2 or X.shape[1] != p:
                raise DataError(f"{where}: new vectors must have {p} features, got shape {X.shape}")
            if self.dataset.get("standardize"):
                X = (X - self.arrays["feature_mean"]) / self.arrays["feature_sd"]
            return X
        if kind == "series":
            out = [np.asarray(x, dtype=np.float64) for x in objects]
            bad = [i for i, x in enumerate(out) if x.ndim not in (1, 2) or x.size == 0 or not np.isfinite(x).all()]
            if bad:
                raise DataError(f"{where}: new object {bad[0]} is not a non-empty series of finite numbers")
            c = channels(self.reference_objects[0])  # the training series' channels
            wrong = [i for i, x in enumerate(out) if channels(x) != c]
            if wrong:
                raise DataError(f"{where}: new object {wrong[0]} has {channels(out[wrong[0]])} channel(s); the "
                                f"training series have {c}")
            lengths = self.dataset.get("series_lengths")  # [min, max] of the training series
            if lengths and lengths[0] == lengths[1]:
                wrong = [i for i, x in enumerate(out) if length(x) != lengths[0]]
                if wrong:
                    raise DataError(f"{where}: new object {wrong[0]} has {length(out[wrong[0]])} values; the "
                                    f"training series all have {lengths[0]}")
            return out
        out = [str(s) for s in objects]
        alphabet = set(self.dataset.get("alphabet") or "".join(self.reference_objects))  # the training letters
        for i, s in enumerate(out):
            if not s or set(s) - alphabet:
                raise DataError(f"{where}: new sequence {i} has letters outside the training alphabet "
                                f"({''.join(sorted(alphabet))})" if s else f"{where}: new sequence {i} is empty")
        if self.dataset.get("distance") == "hamming" and {len(s) for s in out} != {len(self.reference_objects[0])}:
            raise DataError(f"{where}: the Hamming distance needs sequences of length "
                            f"{len(self.reference_objects[0])}")
        return out

    def estimator_input(self, R: np.ndarray) -> np.ndarray:
        """What the estimator takes (fit columns, full width) from the relation to the reference objects:
        a similarity data set's similarities become distances by the data set's rule and bound."""
        R = np.asarray(R, dtype=np.float64)
        if self.input == "distances" and self.dataset.get("native_similarity"):
            rule, bound = self.dataset["to_distance"], self.dataset.get("upper_bound")
            with np.errstate(divide="ignore", invalid="ignore"):
                R = (bound - R if rule == "bound_minus" else 1.0 / R if rule == "reciprocal"
                     else -np.log(R / bound))
        return expand(R, self.reference_index, self.n_train)

    # ------------------------------------------------------------------ predictions
    def predict(self, objects=None, *, relation=None) -> np.ndarray:
        """The predicted labels of new objects, given raw (``objects``) or as their ``relation`` to the
        reference objects (rows: objects, columns: ``reference_ids``).

        Returns
        -------
        ndarray of shape (n_objects,)
        """
        return np.concatenate([self.estimator.predict(X) for X in self._inputs(objects, relation)])

    def predict_proba(self, objects=None, *, relation=None) -> np.ndarray:
        """Class probabilities (columns in ``classes`` order) of new objects; see :meth:`predict`.

        Returns
        -------
        ndarray of shape (n_objects, n_classes)
        """
        if not hasattr(self.estimator, "predict_proba"):
            raise DataError(f"method '{self.method}' gives no class probabilities")
        return np.concatenate([self.estimator.predict_proba(X) for X in self._inputs(objects, relation)])

    def _inputs(self, objects, relation):
        if (objects is None) == (relation is None):
            raise DataError("give the new objects either raw (objects) or as their relation (relation=)")
        if len(objects if objects is not None else relation) == 0:
            raise DataError("no new objects to classify")
        if relation is not None:
            if not self.takes_relation:
                raise DataError(f"method '{self.method}' takes {self.input}, not distances to reference objects")
            R = np.asarray(relation, dtype=np.float64)
            if R.ndim != 2 or R.shape[1] != len(self.reference_ids):
                raise DataError(f"the relation must have {len(self.reference_ids)} columns (the reference "
                                f"objects), got shape {R.shape}")
            for i in range(0, len(R), CHUNK_ROWS):
                yield self.estimator_input(R[i:i + CHUNK_ROWS])
            return
        if not self.takes_relation:  # vectors or records: what the estimator takes
            yield np.asarray(objects)
            return
        objects = list(objects) if self.dataset["kind"] != "vectors" else np.asarray(objects, dtype=np.float64)
        for i in range(0, len(objects), CHUNK_ROWS):
            yield self.estimator_input(self.relation(objects[i:i + CHUNK_ROWS]))


# ---------------------------------------------------------------------- the folder
def save_model(model: SavedModel, path: str | os.PathLike) -> Path:
    """Write ``model`` to the folder ``path`` (``model.json`` and ``arrays.npz``), atomically: a folder that
    exists is replaced only once the new one is complete. New files get the umask's mode.

    Returns
    -------
    Path
        The folder.

    Raises
    ------
    StateError
        If the estimator holds something that cannot be saved (the message names it).
    """
    path = Path(path)
    if path.exists() and not _is_model_folder(path):  # never replace what is not a model
        raise DataError(f"{path}: exists and is not a model folder; give a new path (or a model folder to "
                        "replace)")
    tree, arrays = to_state(model.estimator)
    arrays = {f"estimator/{k}": v for k, v in arrays.items()}
    reference = {"ids": [str(i) for i in model.reference_ids], "index": model.reference_index.tolist()}
    objects = model.reference_objects
    if objects is not None:
        if model.dataset["kind"] == "series":  # one array: the series side by side along time
            lengths = np.array([length(x) for x in objects], dtype=np.int64)
            arrays["reference/series_values"] = np.concatenate(objects, axis=-1).astype(np.float64)
            arrays["reference/series_lengths"] = lengths
            reference["objects"] = "series"
        elif model.dataset["kind"] == "vectors":
            arrays["reference/vectors"] = np.asarray(objects, dtype=np.float64)
            reference["objects"] = "vectors"
        else:
            reference["objects"] = "sequences"
            reference["sequences"] = list(objects)
    arrays.update({f"dataset/{k}": np.asarray(v) for k, v in model.arrays.items()})
    document = {
        "format": FORMAT, "format_version": FORMAT_VERSION, "method": model.method,
        "params": _finite(model.params), "classes": [str(c) for c in model.classes], "input": model.input,
        "dataset": _finite(model.dataset), "n_train": int(model.n_train), "reference": reference,
        "info": _finite(model.info), "estimator": tree,
    }
    text = json.dumps(document, indent=1, allow_nan=False)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", dir=path.parent))
    try:
        os.chmod(tmp, 0o777 & ~_umask())
        (tmp / "model.json").write_text(text)
        with open(tmp / "arrays.npz", "wb") as f:
            np.savez(f, **arrays)
        if path.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{path.name}.old.", dir=path.parent))
            os.rename(path, old / "model")
            os.rename(tmp, path)
            shutil.rmtree(old)
        else:
            os.rename(tmp, path)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)
    return path


def _is_model_folder(path: Path) -> bool:
    try:
        return path.is_dir() and json.loads((path / "model.json").read_text()).get("format") == FORMAT
    except (OSError, ValueError, AttributeError):
        return False


def _finite(value):
    """``value`` with its NaN and infinite floats as the strings "nan", "inf", "-inf" (a record for people:
    the estimator's own state keeps the numbers, as typed nodes)."""
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    if isinstance(value, (float, np.floating)) and not np.isfinite(value):
        return str(float(value))
    return value.item() if isinstance(value, np.generic) else value


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def load_model(path: str | os.PathLike) -> SavedModel:
    """The model saved in the folder ``path`` by :func:`save_model` (or ``hlm fit``).

    Parameters
    ----------
    path : str or Path
        The model folder.

    Returns
    -------
    SavedModel
        Its ``predict`` and ``predict_proba`` classify new objects, raw or by their relation to the reference
        objects; ``estimator`` is the fitted estimator.

    Raises
    ------
    DataError
        For a folder that is not a model, of another format version, or damaged (a one-line message naming
        the file).
    """
    path = Path(path)
    doc_path, arrays_path = path / "model.json", path / "arrays.npz"
    for f in (doc_path, arrays_path):
        if not f.is_file():
            raise DataError(f"{path}: not a model folder (no {f.name}); make one with hlm fit")
    try:
        document = json.loads(doc_path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DataError(f"{doc_path}: damaged model file ({str(exc).splitlines()[0]})") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise DataError(f"{doc_path}: not an hlm model file")
    if document.get("format_version") != FORMAT_VERSION:
        raise DataError(f"{doc_path}: model format version {document.get('format_version')!r}; this version of "
                        f"hlm reads version {FORMAT_VERSION} (refit the model with hlm fit)")
    import zipfile

    try:
        with np.load(arrays_path, allow_pickle=False) as npz:
            arrays = {k: npz[k] for k in npz.files}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
        raise DataError(f"{arrays_path}: damaged model arrays ({str(exc).splitlines()[0]})") from None
    try:
        estimator = from_state(document["estimator"], {k.removeprefix("estimator/"): v for k, v in arrays.items()
                                                        if k.startswith("estimator/")})
        reference = document["reference"]
        objects = None
        kind = reference.get("objects")
        if kind == "series":
            values, lengths = arrays["reference/series_values"], arrays["reference/series_lengths"]
            objects = np.split(values, np.cumsum(lengths)[:-1], axis=-1)
        elif kind == "vectors":
            objects = arrays["reference/vectors"]
        elif kind == "sequences":
            objects = list(reference["sequences"])
        ids, index, n_train = list(reference["ids"]), np.asarray(reference["index"], dtype=np.int64), \
            int(document["n_train"])
        if (len(ids) != len(index) or (len(index) and (index.min() < 0 or index.max() >= n_train))
                or document["input"] not in INPUTS or not hasattr(estimator, "predict")
                or (objects is not None and len(objects) != len(ids))):
            raise DataError(f"{doc_path}: damaged model (its reference objects, input or estimator disagree)")
        return SavedModel(
            estimator=estimator, method=document["method"], params=document["params"],
            classes=document["classes"], input=document["input"], dataset=document["dataset"],
            n_train=n_train, reference_ids=ids, reference_index=index, reference_objects=objects,
            arrays={k.removeprefix("dataset/"): v for k, v in arrays.items() if k.startswith("dataset/")},
            info=document.get("info", {}),
        )
    except StateError as exc:
        raise DataError(f"{doc_path}: damaged model ({exc})") from None
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, RecursionError) as exc:
        raise DataError(f"{path}: damaged model ({type(exc).__name__}: {str(exc)[:120]})") from None
