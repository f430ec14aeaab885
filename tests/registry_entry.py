"""A registry entry as the pipeline passes it to a protocol's job (workflow/rules/common.smk dataset_entry)."""

from dataclasses import asdict
from pathlib import Path

from hlm.datasets._registry import load_registry

ROOT = Path(__file__).resolve().parents[1]


def entry_of(name: str) -> dict:
    """The entry of data set ``name`` in config/datasets.yaml, the fields the pipeline leaves out left out."""
    spec = load_registry(ROOT / "config/datasets.yaml", names=[name])[name]
    return {k: v for k, v in asdict(spec).items()
            if v not in (None, "") and k not in ("name", "description", "provenance", "licence", "split")}
