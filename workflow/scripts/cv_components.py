"""Mixture HLM evaluations -> CV error against M figure (logic: hlm.stages.cv_components_figure)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).resolve().parents[1] / "src"))  # noqa: F821
from hlm.jobs import run  # noqa: E402
from hlm.stages.report import cv_components_figure  # noqa: E402

sm = snakemake  # noqa: F821
run(
    lambda: cv_components_figure(list(sm.input.evaluations), sm.params.methods,
                                 dataset=sm.wildcards.dataset, output=sm.output[0]),
    sm.log[0],
)
