"""Chapter 4's grid beside its Tables 4.1-4.2 (logic: hlm.stages.subspace_gmm.subspace_gmm_report)."""

from hlm.jobs import run
from hlm.stages.subspace_gmm import subspace_gmm_report

sm = snakemake  # noqa: F821
run(lambda: subspace_gmm_report(list(sm.input.runs), csv_out=sm.output.csv, md_out=sm.output.md), sm.log[0])
