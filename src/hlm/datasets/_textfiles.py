"""Reading a user's files, with a one-line error that names the file (and the line).

Every user text file (FASTA, series CSV, a file of a series folder, a labels
file, a CSV matrix or table, the registry) is UTF-8 (a byte-order mark is
allowed); anything else, e.g. Latin-1 from a spreadsheet export or a binary
file, is an error naming the line, the column and the first bad byte.
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

from hlm.errors import DataError, HLMError

#: delimiters other than the comma that a spreadsheet export may use, as named in messages
OTHER_DELIMITERS = {"\t": "tabs", ";": "';'"}


def decode_text(data: bytes, where, error: type[HLMError] = DataError) -> str:
    """``data`` as UTF-8 text; else ``error`` naming the line, column and byte (NUL bytes: a binary file)."""
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        raise error(f"{where}: line 1 starts with a UTF-16 byte-order mark; save the file as UTF-8")
    if b"\0" in data:
        at = data.index(b"\0")
        line, column = _position(data, at)
        raise error(f"{where}: not a text file (binary data: byte 0x00 at line {line}, column {column}); "
                    "expected UTF-8 text")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        start = exc.start + (3 if data.startswith(b"\xef\xbb\xbf") else 0)
        line, column = _position(data, start)
        raise error(f"{where}: line {line} is not UTF-8 text (byte 0x{data[start]:02x} at column {column}); "
                    "save the file as UTF-8") from None


def _position(data: bytes, offset: int) -> tuple[int, int]:
    """1-based (line, column in characters) of byte ``offset``."""
    line_start = data.rfind(b"\n", 0, offset) + 1
    before = data[line_start:offset].decode("utf-8-sig" if line_start == 0 else "utf-8", errors="replace")
    return data.count(b"\n", 0, offset) + 1, len(before) + 1


def read_text(path, where=None, error: type[HLMError] = DataError) -> str:
    """The text of a user's file (UTF-8, see the module docstring); ``where`` prefixes messages (default: the path)."""
    where = where or path
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        raise error(f"{where}: file not found") from None
    except IsADirectoryError:
        raise error(f"{where}: is a directory, not a file") from None
    except OSError as exc:
        raise error(f"{where}: cannot read ({exc.strerror})") from None
    return decode_text(data, where, error)


def other_delimiter(line: str) -> str | None:
    """The tab or ';' a line uses instead of commas, else None.

    Tabs: a line without commas. ';': a line without commas, or whose every comma sits
    between two digits (the decimal commas of a European spreadsheet export).
    """
    if "," not in line:
        return next((d for d in OTHER_DELIMITERS if d in line), None)
    if ";" in line and not re.search(r"(?<!\d),|,(?!\d)", line):
        return ";"
    return None


def delimiter_error(where, delimiter: str) -> DataError:
    return DataError(f"{where}: line 1 uses {OTHER_DELIMITERS[delimiter]} as the delimiter, not commas; "
                     "hlm reads comma-separated values: save the file as CSV with ',' between values "
                     "and '.' as the decimal point")


def csv_rows(path, where=None) -> list[list[str]]:
    """The rows of a CSV file with a header of several columns, as lists of strings.

    A header in tabs or ';' instead of commas is an error saying which delimiter was found.
    """
    text = read_text(path, where)
    delimiter = other_delimiter(text.split("\n", 1)[0])
    if delimiter:
        raise delimiter_error(where or path, delimiter)
    return list(csv.reader(io.StringIO(text, newline="")))


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
