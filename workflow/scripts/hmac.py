"""HMAC at every level on one data set (logic: hlm.stages.hmac.hmac_levels)."""

from hlm.jobs import run
from hlm.provenance import run_tags
from hlm.stages.hmac import hmac_levels

# Guarded: a local Dask cluster (hmac.parallel) starts its workers by "spawn", which imports this file again.
if __name__ == "__main__":
    sm = snakemake  # noqa: F821
    tags = {**run_tags(), "rule": sm.rule, "wildcards": f"dataset={sm.wildcards.dataset}"}
    run(
        lambda: hmac_levels(dataset=sm.wildcards.dataset, entry=sm.params.entry, out=sm.output.levels,
                            figure=sm.output.figure, settings=sm.params.settings, tags=tags, n_jobs=sm.threads),
        sm.log[0],
    )
