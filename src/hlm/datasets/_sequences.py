"""Sequences as objects: StatLog DNA decoding, FASTA reading.

* ``decode_indicators``: the StatLog DNA data set codes each of its 60
  nucleotides by 3 binary indicators, A = 100, C = 010, G = 001, T = 000
  (mlbench ``DNA`` documentation); decoded back into 60-letter strings.
* ``read_fasta``: ids and sequences from a FASTA file, labels from the header
  (``>id|label``) or from a side CSV (``id,label``).

Their distances (alignment, Hamming) are in :mod:`hlm.distances`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from hlm.datasets._textfiles import labels_by_id, read_text
from hlm.errors import DataError

#: StatLog DNA: indicator triplet -> nucleotide
INDICATOR_CODE = {(1, 0, 0): "A", (0, 1, 0): "C", (0, 0, 1): "G", (0, 0, 0): "T"}
DNA_ALPHABET = "ACGT"
#: the amino acids, and B, Z, X (ambiguous), U (selenocysteine), O (pyrrolysine), as in BLOSUM's tables
PROTEIN_ALPHABET = "ACDEFGHIKLMNPQRSTVWYBZXUO"
ALPHABETS = {"dna": DNA_ALPHABET, "protein": PROTEIN_ALPHABET}



def decode_indicators(values, where: str = "indicators") -> list[str]:
    """Rows of 3L binary indicators -> L-letter DNA strings (StatLog coding, A=100 C=010 G=001 T=000)."""
    X = np.asarray(values)
    try:
        X = X.astype(np.int64)
    except (TypeError, ValueError):
        raise DataError(f"{where}: indicator columns must hold 0/1 values") from None
    if X.ndim != 2 or X.shape[1] == 0 or X.shape[1] % 3:
        raise DataError(f"{where}: expected 3 indicator columns per nucleotide, got {X.shape[-1]} columns")
    if not np.isin(X, (0, 1)).all():
        raise DataError(f"{where}: indicator columns must hold 0/1 values")
    triplets = X.reshape(X.shape[0], -1, 3)
    bad = triplets.sum(axis=2) > 1
    if bad.any():
        r, p = map(int, np.argwhere(bad)[0])
        raise DataError(f"{where}: object {r}, nucleotide {p + 1}: indicator triplet "
                        f"{tuple(int(v) for v in triplets[r, p])} codes no nucleotide")
    letters = np.array(["T", "A", "C", "G"])  # index = 1*a + 2*c + 3*g
    codes = triplets[:, :, 0] + 2 * triplets[:, :, 1] + 3 * triplets[:, :, 2]
    return ["".join(row) for row in letters[codes]]


def check_sequences(ids, sequences, alphabet: str = DNA_ALPHABET, where: str = "sequences") -> None:
    """Non-empty sequences over ``alphabet`` with unique ids, else a DataError naming the object."""
    seen = set()
    allowed = set(alphabet)
    for i, s in zip(ids, sequences):
        if i in seen:
            raise DataError(f"{where}: duplicate id {i!r}")
        seen.add(i)
        if not s:
            raise DataError(f"{where}: object {i!r} is an empty sequence")
        unknown = sorted(set(s) - allowed)
        if unknown:
            raise DataError(f"{where}: object {i!r} has unknown letter(s) {''.join(unknown)!r} "
                            f"(alphabet {alphabet})")


def read_fasta(path, labels_path=None, alphabet: str = DNA_ALPHABET,
               labels_required: bool = True) -> tuple[list[str], list[str], list[str]]:
    """(ids, sequences, labels) from a FASTA file.

    Labels: ``>id|label`` headers, or a CSV ``labels_path`` with columns ``id,label``
    (every FASTA id must be in it). Letters are upper-cased; sequences may span lines.
    """
    path = Path(path)
    ids, seqs, header_labels = [], [], []
    lines = read_text(path).splitlines()
    for n, line in enumerate(lines, 1):
        line = line.strip()
        if not line:
            continue
        if line.startswith(">"):
            head = line[1:].split()[0] if line[1:].strip() else ""
            if not head:
                raise DataError(f"{path}, line {n}: FASTA header without an id")
            obj, _, label = head.partition("|")
            ids.append(obj)
            header_labels.append(label)
            seqs.append([])
        elif not ids:
            raise DataError(f"{path}, line {n}: sequence data before the first '>' header")
        else:
            seqs[-1].append(line.upper())
    if not ids:
        raise DataError(f"{path}: no FASTA records")
    sequences = ["".join(parts) for parts in seqs]
    check_sequences(ids, sequences, alphabet, where=str(path))
    if labels_path is None:
        missing = [i for i, lab in zip(ids, header_labels) if not lab]
        if missing and labels_required:  # new objects to classify may have none ("")
            raise DataError(f"{path}: object {missing[0]!r} has no label (write '>id|label' or give labels_path)")
        return ids, sequences, header_labels
    return ids, sequences, labels_by_id(labels_path, ids)
