"""A paper's protocol: its table over the data sets (logic: hlm.pipeline.stages.protocol.protocol_table)."""

from hlm.pipeline.jobs import run
from hlm.pipeline.stages.protocol import protocol_table

sm = snakemake  # noqa: F821
run(lambda: protocol_table(sm.params.protocol, list(sm.input.runs), csv_out=sm.output.csv, md_out=sm.output.md),
    sm.log[0])
