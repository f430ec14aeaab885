"""The two-way GMM's error over (M, L) beside MDA (logic: hlm.stages.twoway_gmm.twoway_gmm_report)."""

from hlm.jobs import run
from hlm.stages.twoway_gmm import twoway_gmm_report

sm = snakemake  # noqa: F821
run(lambda: twoway_gmm_report(list(sm.input.runs), csv_out=sm.output.csv, md_out=sm.output.md), sm.log[0])
