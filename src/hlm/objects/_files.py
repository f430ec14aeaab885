"""Reading a user's text file, with a one-line error that names it."""

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
