"""Evaluation Parquet files -> error-rate figure (logic: hlm.stages.figure)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).resolve().parents[1] / "src"))  # noqa: F821
from hlm.jobs import run  # noqa: E402
from hlm.stages.report import figure  # noqa: E402

sm = snakemake  # noqa: F821
run(lambda: figure(list(sm.input.evaluations), output=sm.output[0], **sm.params), sm.log[0])
