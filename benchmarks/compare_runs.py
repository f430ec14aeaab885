"""Are two runs' results the same? Every (data set, method) evaluation both hold, compared exactly.

For each ``results/evaluation/{dataset}/{method}.parquet`` present in both runs: the errors, log-losses, Brier
scores, chosen parameters and CV errors of every split, and every prediction (label and class probabilities) of
``results/predictions/``, compared for equality (floats bit for bit); the times are not compared. Then each table
file named with ``--tables`` (e.g. ``tables/error_rates.csv``) byte for byte. A speed-up that must not change the
tables is checked by a run before and after it:

    .venv/bin/python benchmarks/compare_runs.py /path/to/before/results results --tables tables/error_rates.csv

Exit status 1 when anything differs (each difference is printed), 0 otherwise.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

#: the evaluation's columns that a result is (not the times, not the run's warnings)
RESULT_COLUMNS = ("split", "error_rate", "log_loss", "brier", "n_clipped", "n_train", "n_test", "params", "cv_error",
                  "cv_folds")


def _same(a: pd.DataFrame, b: pd.DataFrame) -> bool:
    if list(a.columns) != list(b.columns) or len(a) != len(b):
        return False
    for column in a.columns:
        x, y = a[column].to_numpy(), b[column].to_numpy()
        if x.dtype.kind == "f" and y.dtype.kind == "f":
            if x.dtype != y.dtype or x.tobytes() != y.tobytes():  # bit for bit, NaN included
                return False
        elif not (x == y).all():
            return False
    return True


def compare(before: Path, after: Path, tables: list[str]) -> list[str]:
    """The differences between two results folders (empty: the same)."""
    differences = []
    ours, theirs = ({p.relative_to(run) for p in run.glob("evaluation/*/*.parquet")} for run in (before, after))
    for rel in sorted(ours ^ theirs):
        print(f"{rel}: only in {before if rel in ours else after}, not compared")
    for rel in sorted(ours & theirs):
        a, b = pd.read_parquet(before / rel), pd.read_parquet(after / rel)
        cols = [c for c in RESULT_COLUMNS if c in a.columns]
        if not _same(a[cols], b[[c for c in cols if c in b.columns]]):
            differences.append(f"{rel}: the results differ")
        pred = Path("predictions", *rel.parts[1:])
        if not ((before / pred).is_file() and (after / pred).is_file()):
            differences.append(f"{pred}: missing")
        elif not _same(pd.read_parquet(before / pred), pd.read_parquet(after / pred)):
            differences.append(f"{pred}: the predictions differ")
    pairs = len(ours & theirs)
    for table in tables:
        if (before / table).read_bytes() != (after / table).read_bytes():
            differences.append(f"{table}: the bytes differ")
    print(f"{pairs} (data set, method) evaluations in both runs, {len(tables)} table(s): "
          f"{len(differences) or 'no'} difference(s)")
    return differences


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("before", type=Path, help="a results/ folder")
    parser.add_argument("after", type=Path, help="another results/ folder")
    parser.add_argument("--tables", nargs="*", default=[], help="table files (relative to results/) to compare")
    args = parser.parse_args(argv)
    differences = compare(args.before, args.after, args.tables)
    for line in differences:
        print(line)
    return 1 if differences else 0


if __name__ == "__main__":
    raise SystemExit(main())
