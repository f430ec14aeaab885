"""Reading a user's files, with a one-line error that names the file."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from hlm.errors import DataError


def read_text(path) -> str:
    try:
        return Path(path).read_text()
    except OSError as exc:
        raise DataError(f"{path}: cannot read ({exc.strerror})") from None


def csv_rows(path) -> list[list[str]]:
    """The rows of a CSV file as lists of strings."""
    return list(csv.reader(io.StringIO(read_text(path), newline="")))


def hidden(path, folder) -> bool:
    """True if a part of ``path`` below ``folder`` starts with '.' (``.DS_Store``, ``.git/``)."""
    return any(part.startswith(".") for part in Path(path).relative_to(folder).parts)


def visible_files(folder) -> list[Path]:
    """The regular files under ``folder`` (recursively), sorted, without hidden ones."""
    folder = Path(folder)
    return sorted(p for p in folder.rglob("*") if p.is_file() and not hidden(p, folder))


def labels_by_id(labels_path, ids) -> list[str]:
    """The labels of ``ids`` from a CSV with columns ``id,label`` (every id must be in it)."""
    labels_path = Path(labels_path)
    table = csv_rows(labels_path)
    if not table or not {"id", "label"} <= set(table[0]):
        raise DataError(f"{labels_path}: expected a header with columns 'id' and 'label'")
    rows = [dict(zip(table[0], row)) for row in table[1:] if row]
    by_id = {r["id"]: r.get("label", "") for r in rows if "id" in r}
    missing = [i for i in ids if i not in by_id]
    if missing:
        few = ", ".join(repr(i) for i in missing[:3]) + (", ..." if len(missing) > 3 else "")
        raise DataError(f"{labels_path}: no label for {len(missing)} object(s), first {few}")
    return [by_id[i] for i in ids]
