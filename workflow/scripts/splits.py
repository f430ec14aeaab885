"""Distances -> results/splits/{dataset}.parquet (logic: hlm.stages.splits)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).resolve().parents[1] / "src"))  # noqa: F821
from hlm.jobs import run  # noqa: E402
from hlm.stages.data import splits  # noqa: E402

sm = snakemake  # noqa: F821
run(lambda: splits(sm.input.distances, sm.output[0], dataset=sm.wildcards.dataset, **sm.params), sm.log[0])
