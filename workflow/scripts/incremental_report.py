"""Figure 1 and Table 5 of the incremental runs (logic: hlm.stages.incremental)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).resolve().parents[1] / "src"))  # noqa: F821
from hlm.jobs import run  # noqa: E402
from hlm.stages.incremental import incremental_report  # noqa: E402

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
