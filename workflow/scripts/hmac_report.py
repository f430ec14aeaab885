"""HMAC's clusters per level on every data set (logic: hlm.stages.hmac.hmac_report)."""

from hlm.jobs import run
from hlm.stages.hmac import hmac_report

sm = snakemake  # noqa: F821
run(lambda: hmac_report(list(sm.input.runs), csv_out=sm.output.csv, md_out=sm.output.md), sm.log[0])
