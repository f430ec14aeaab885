"""Figure 1 and Table 5 of the incremental runs (logic: hlm.pipeline.incremental.report.report)."""

from pathlib import Path

from hlm.pipeline.incremental.report import report as incremental_report
from hlm.pipeline.jobs import run

sm = snakemake  # noqa: F821
run(
    lambda: incremental_report(
        list(sm.input.runs),
        datasets=sm.params.datasets,
        schemes=sm.params.schemes,
        figure_dir=str(Path(sm.output.figures[0]).parent),
        csv_out=sm.output.csv,
        md_out=sm.output.md,
        claims_out=sm.output.claims,
    ),
    sm.log[0],
)
