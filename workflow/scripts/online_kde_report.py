"""Our online KDE numbers next to the odKDE paper's Table 1 (logic: hlm.stages.online_kde.online_kde_report)."""

from hlm.jobs import run
from hlm.stages.online_kde import online_kde_report

sm = snakemake  # noqa: F821
run(lambda: online_kde_report(list(sm.input.runs), csv_out=sm.output.csv, md_out=sm.output.md), sm.log[0])
