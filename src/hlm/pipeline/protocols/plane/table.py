"""results/tables/plane.{csv,md}: the plane protocol's accuracy, subclasses and components per data set."""

from __future__ import annotations

import logging
from pathlib import Path

import pandas as pd

log = logging.getLogger("hlm")

LABELS = {"llc_pc_mpe": "LLC-PC (Greedy-MPE, K by CV)", "odkde": "odKDE"}


def plane_markdown(frames: dict) -> str:
    lines = ["| data set | method | test accuracy % | subclasses or components (per class) | train:test |",
             "|---|---|---:|---|---|"]
    for dataset, frame in frames.items():
        for r in frame.itertuples():
            per = " + ".join(map(str, r.parts_per_class))
            lines.append(f"| {dataset} | {LABELS.get(r.method, r.method)} | {r.accuracy:.2f} | {r.n_parts} ({per}) "
                         f"| {r.n_train}:{r.n_test} |")
    return "\n".join(lines) + "\n"


def table(inputs: list[str], *, csv_out: str, md_out: str) -> None:
    """results/tables/plane.{csv,md} over the data sets."""
    from hlm.datasets._artifacts import write_text

    frames = {Path(p).stem: pd.read_parquet(p) for p in inputs}
    rows = [{"dataset": d, **{k: v for k, v in r.items() if k != "parts_per_class"},
             "parts_per_class": " ".join(map(str, r["parts_per_class"]))}
            for d, f in frames.items() for r in f.to_dict("records")]
    write_text(pd.DataFrame(rows).to_csv(index=False), csv_out)
    write_text(plane_markdown(frames), md_out)
    log.info("%s written", md_out)
