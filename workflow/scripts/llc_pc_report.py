"""LLC-PC's optimal and CV-chosen accuracy next to the paper's Table 2 (logic: hlm.stages.llc_pc.llc_pc_report)."""

from hlm.jobs import run
from hlm.stages.llc_pc import llc_pc_report

sm = snakemake  # noqa: F821
run(lambda: llc_pc_report(list(sm.input.runs), csv_out=sm.output.csv, md_out=sm.output.md), sm.log[0])
