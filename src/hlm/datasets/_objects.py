"""Registry entries of raw objects (kind series / sequences) -> objects table -> distance artifact.

``load_objects`` reads the objects of one entry (aeon UCR set, CSV or folder of
series, FASTA, StatLog DNA indicators in an R data file); ``write_objects`` /
``read_objects`` store them as ``results/objects/{dataset}.parquet`` (columns
``id``, ``label``, ``object``: a list of floats or a string); ``artifact_from_matrix``
turns the assembled block matrix into the usual distance artifact (an alignment
score is a similarity: converted by the data set's ``to_distance``, paper
section 5.2, and kept as the native similarity).
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd

from hlm.datasets._artifacts import DistanceArtifact, write_frame
from hlm.datasets._registry import DatasetSpec
from hlm.datasets._validation import check_informative, check_labels, check_matrix
from hlm.distances._conversions import similarity_to_distance, symmetrize
from hlm.distances._registry import SIMILARITIES
from hlm.errors import DataError


def load_objects(spec: DatasetSpec, root: str | Path = ".") -> tuple[list[str], list, list[str], dict]:
    """(ids, objects, labels, metadata) of a series or sequences entry, checked.

    The raw objects whose distances the pipeline computes itself, in row blocks
    (:func:`hlm.distances.compute_block`; docs/data.md, "Raw objects"): series from an aeon UCR set, a CSV
    (``id,label,`` then the values) or a folder of series files; sequences from a FASTA file (labels in the
    headers ``>id|label`` or in ``labels_path``) or StatLog DNA's indicator columns in an R data file.

    Parameters
    ----------
    spec : DatasetSpec
        An entry of kind series or sequences.
    root : str or Path, default "."
        The folder the entry's ``path`` and ``labels_path`` are relative to.

    Returns
    -------
    ids : list of str
        The objects' ids.
    objects : list
        The series (1-D float64 arrays; lengths may differ) or sequences (str).
    labels : list of str
        The class labels, one per object.
    metadata : dict
        ``dataset``, ``format``, ``kind``, ``distance`` and the ``source`` with its ``sha256`` (and the labels
        file's, if any): the start of the distance artifact's metadata.

    Raises
    ------
    DataError
        If the file, its SHA-256, an object or the labels are refused (the message names the data set), or
        the Hamming distance meets sequences of different lengths.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from hlm.datasets import load_objects, validate_entry
    >>> spec = validate_entry("dna", {"path": "dna.fa", "format": "fasta", "kind": "sequences",
    ...                               "distance": "hamming"})
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     _ = (Path(tmp) / "dna.fa").write_text(
    ...         ">s1|donor\\nACGTAC\\n>s2|donor\\nACGTTC\\n>s3|acceptor\\nTCGTAA\\n>s4|acceptor\\nTCGAAA\\n")
    ...     ids, objects, labels, metadata = load_objects(spec, root=tmp)
    >>> print(*ids, *objects, *labels)
    s1 s2 s3 s4 ACGTAC ACGTTC TCGTAA TCGAAA donor donor acceptor acceptor
    >>> metadata["source"], metadata["distance"]
    ('dna.fa', 'hamming')

    Series of different lengths, one per CSV row:

    >>> spec = validate_entry("waves", {"path": "waves.csv", "format": "csv", "kind": "series", "distance": "dtw"})
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     _ = (Path(tmp) / "waves.csv").write_text(
    ...         "id,label,,,,\\nx1,up,0,1,2,1\\nx2,up,0,0,1,2,1\\nx3,down,2,1,0,1\\nx4,down,2,2,1,0,1\\n")
    ...     ids, objects, labels, metadata = load_objects(spec, root=tmp)
    >>> [len(x) for x in objects], labels == ["up", "up", "down", "down"]
    ([4, 5, 4, 5], True)
    >>> from hlm.distances import pairwise
    >>> print(pairwise(objects, objects, "dtw").round(3))
    [[0.    0.    2.449 2.449]
     [0.    0.    2.449 3.162]
     [2.449 2.449 0.    0.   ]
     [2.449 3.162 0.    0.   ]]
    """
    from hlm.datasets import _sequences as sequences
    from hlm.datasets import _series as series
    from hlm.datasets._prepare import file_sha256, source_sha256

    root = Path(root)
    w = spec.where
    meta = {"dataset": spec.name, "format": spec.format, "kind": spec.kind, "distance": spec.distance}
    if spec.format == "aeon":
        ids, objects, labels = series.load_aeon(spec.source)
        meta["source"] = f"aeon.datasets ({spec.source}, train + test)"
    else:
        src = root / spec.path
        meta.update(source=spec.path, sha256=source_sha256(src, w))
        if spec.sha256 and meta["sha256"] != spec.sha256:
            raise DataError(f"{w}: SHA-256 {meta['sha256'][:12]}... does not match field 'sha256'")
        labels_path = root / spec.labels_path if spec.labels_path else None
        if labels_path is not None:
            lw = f"dataset '{spec.name}' ({spec.labels_path})"
            meta.update(labels_source=spec.labels_path, labels_sha256=file_sha256(labels_path, lw))
        if spec.format in series.TS_FORMATS:  # the archive's TRAIN (path) and TEST (test_path) files, pooled
            ids, objects, labels = series.read_archive_file(src, spec.format, "train" if spec.test_path else None)
            if spec.test_path:
                tw = f"dataset '{spec.name}' ({spec.test_path})"
                meta.update(test_source=spec.test_path, test_sha256=file_sha256(root / spec.test_path, tw))
                more = series.read_archive_file(root / spec.test_path, spec.format, "test")
                ids, objects, labels = ids + more[0], objects + more[1], labels + more[2]
                meta["parts"] = {"train": len(ids) - len(more[0]), "test": len(more[0])}  # ids train-k, test-k
        elif spec.format in ("folder", "csv", "fasta"):
            try:  # their messages name the file (and line or object); add the data set
                if spec.format == "folder":
                    ids, objects, labels = series.read_series_folder(src, labels_path)
                elif spec.kind == "series":
                    ids, objects, labels = series.read_series_csv(src)
                else:
                    ids, objects, labels = sequences.read_fasta(src, labels_path,
                                                                sequences.ALPHABETS[spec.alphabet or "dna"])
            except DataError as exc:  # paths as in the registry: relative to root
                message = str(exc) if str(root) == "." else str(exc).replace(f"{root}{os.sep}", "")
                raise DataError(f"dataset '{spec.name}': {message}") from None
        else:  # rda with StatLog indicator columns
            from hlm.datasets._readers import labels_to_str, read_rda

            frame = read_rda(src, object=spec.object, where=w)
            if spec.label_column not in frame.columns:
                raise DataError(f"{w}: label column '{spec.label_column}' not found")
            labels = list(labels_to_str(frame.pop(spec.label_column).to_numpy(dtype=object)))
            objects = sequences.decode_indicators(frame.astype(int).to_numpy(), where=w)
            ids = [str(i) for i in frame.index]
            sequences.check_sequences(ids, objects, where=w)
    if spec.kind == "series":
        series.check_series(ids, objects, where=w, equal_length=spec.distance == "euclidean")
    if spec.distance == "hamming":
        lengths = {len(s) for s in objects}
        if len(lengths) > 1:
            raise DataError(f"{w}: the Hamming distance needs sequences of one length, got {sorted(lengths)[:5]}")
    labels = check_labels(np.asarray(labels, dtype=object), len(ids), name=spec.name, path=spec.path or spec.source,
                          ids=np.asarray(ids, dtype=object))
    return list(ids), list(objects), list(labels), meta


def write_objects(ids, objects, labels, path, metadata: dict) -> None:
    column = [np.asarray(o, dtype=np.float64).tolist() if not isinstance(o, str) else o for o in objects]
    write_frame(pd.DataFrame({"id": ids, "label": labels, "object": column}), path, metadata=metadata)


def read_objects(path) -> tuple[list[str], list, list[str]]:
    frame = pd.read_parquet(path)
    objects = [o if isinstance(o, str) else _series_array(o) for o in frame["object"]]
    return frame["id"].astype(str).tolist(), objects, frame["label"].astype(str).tolist()


def _series_array(values) -> np.ndarray:
    """A series as Parquet gives it back: 1-D values, or (multichannel) an array of channels' arrays."""
    values = np.asarray(values)
    if values.dtype == object:  # list<list<double>>: one array per channel
        return np.stack([np.asarray(c, dtype=np.float64) for c in values])
    return values.astype(np.float64, copy=False)


def artifact_from_matrix(spec: DatasetSpec, ids, labels, M: np.ndarray, meta: dict) -> DistanceArtifact:
    """The distance artifact from the assembled matrix (similarities converted, paper section 5.2)."""
    meta = {**meta, "to_distance": None, "upper_bound": None, "symmetrized": False}
    native = {}
    name, path = spec.name, spec.path or spec.source
    if spec.distance in SIMILARITIES:
        M = check_matrix(M, name=name, path=path, kind="similarity")
        D, info = similarity_to_distance(M, spec.to_distance or "auto", spec.upper_bound, where=spec.where)
        meta.update(info)
        native = {"similarities": M}
    else:
        D = M
        meta["to_distance"] = "identity"
    D, meta["symmetrized"] = symmetrize(D)
    D = check_matrix(D, name=name, path=path, kind="distance")
    labels = np.asarray(labels, dtype=object)
    check_informative(D, labels, name=name, path=path, kind="similarity" if native else "distance")
    meta["class_counts"] = dict(sorted(Counter(labels.tolist()).items()))
    meta["native"] = sorted(native)
    return DistanceArtifact(ids=np.asarray(ids, dtype=object), labels=labels, distances=D, metadata=meta, **native)
