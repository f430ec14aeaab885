"""Figure 1 and Table 5 of the incremental runs (logic: hlm.stages.incremental.incremental_report)."""

from pathlib import Path

from hlm.jobs import run
from hlm.stages.incremental import incremental_report

sm = snakemake  # noqa: F821
run(
    lambda: incremental_report(
        list(sm.input.runs),
        datasets=sm.params.datasets,
        schemes=sm.params.schemes,
        figure_dir=str(Path(sm.output.figures[0]).parent),
        csv_out=sm.output.csv,
        md_out=sm.output.md,
    ),
    sm.log[0],
)
