"""Pipeline stages of the papers' protocols (workflow/rules/protocols.smk): a protocol's job on one data set
and its table, looked up by the protocol's id (``hlm.pipeline.protocols``)."""

from __future__ import annotations

from importlib import import_module


def run_protocol(protocol: str, **kwargs) -> None:
    """The job of ``protocol`` on one data set: its run module's ``run(**kwargs)``."""
    import_module(f"hlm.pipeline.protocols.{protocol}.run").run(**kwargs)


def gather_protocol(protocol: str, **kwargs) -> None:
    """The job that gathers the parts of ``protocol`` on one data set: its run module's ``gather(**kwargs)``."""
    import_module(f"hlm.pipeline.protocols.{protocol}.run").gather(**kwargs)


def protocol_table(protocol: str, inputs: list[str], *, csv_out: str, md_out: str) -> None:
    """The table of ``protocol`` over its data sets: its table module's ``table``."""
    import_module(f"hlm.pipeline.protocols.{protocol}.table").table(inputs, csv_out=csv_out, md_out=md_out)
