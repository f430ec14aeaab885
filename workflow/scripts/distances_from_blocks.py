"""Row blocks -> results/distances/{dataset}.parquet (logic: hlm.stages.data)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).resolve().parents[1] / "src"))  # noqa: F821
from hlm.jobs import run  # noqa: E402
from hlm.stages.data import distances_from_blocks  # noqa: E402

sm = snakemake  # noqa: F821
run(lambda: distances_from_blocks(sm.wildcards.dataset, sm.params.entry, sm.input.objects, list(sm.input.blocks),
                                  sm.output[0]), sm.log[0])
