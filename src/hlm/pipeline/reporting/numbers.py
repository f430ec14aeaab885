"""The papers' numbers, kept as data (YAML) beside the code that compares with them."""

from __future__ import annotations

from importlib import resources

import yaml


def paper_numbers(package: str, name: str = "paper.yaml") -> dict:
    """The YAML file ``name`` of package ``package`` (e.g. ``hlm.pipeline.protocols.llc_pc``), parsed."""
    return yaml.safe_load(resources.files(package).joinpath(name).read_text(encoding="utf-8"))
