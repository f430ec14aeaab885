"""Evaluation Parquet files -> error-rate tables (logic: hlm.stages.tables)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).resolve().parents[1] / "src"))  # noqa: F821
from hlm.jobs import run  # noqa: E402
from hlm.stages.report import tables  # noqa: E402

sm = snakemake  # noqa: F821
run(
    lambda: tables(list(sm.input.evaluations), csv_out=sm.output.csv, md_out=sm.output.md,
                   summary_out=sm.output.summary, paper_md_out=sm.output.paper_md,
                   paper_csv_out=sm.output.paper_csv, run_time_csv_out=sm.output.run_time_csv,
                   run_time_md_out=sm.output.run_time_md, **sm.params),
    sm.log[0],
)
