"""One incremental scheme on every split of one data set (logic: hlm.stages.incremental)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).resolve().parents[1] / "src"))  # noqa: F821
from hlm.jobs import run  # noqa: E402
from hlm.provenance import run_tags  # noqa: E402
from hlm.stages.incremental import incremental  # noqa: E402

sm = snakemake  # noqa: F821
tags = {**run_tags(), "rule": sm.rule, "wildcards": f"dataset={sm.wildcards.dataset}"}
run(
    lambda: incremental(
        dataset=sm.wildcards.dataset,
        scheme=sm.params.scheme,
        distances=sm.input.distances,
        splits_path=sm.input.splits,
        out=sm.output[0],
        seed=sm.params.seed,
        params=sm.params.learner,
        tags=tags,
    ),
    sm.log[0],
)
