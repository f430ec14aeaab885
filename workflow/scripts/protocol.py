"""A paper's protocol on one data set (logic: hlm.pipeline.stages.protocol.run_protocol)."""

from hlm.pipeline.jobs import run
from hlm.pipeline.provenance import run_tags
from hlm.pipeline.stages.protocol import run_protocol

# Guarded: a local Dask cluster (HMAC's hmac.parallel) starts its workers by "spawn", which imports this file
# again.
if __name__ == "__main__":
    sm = snakemake  # noqa: F821
    part = sm.wildcards.get("part")  # a job of one part (the section's split_jobs)
    tags = {**run_tags(), "rule": sm.rule,
            "wildcards": f"dataset={sm.wildcards.dataset}" + (f", part={part}" if part else "")}
    run(
        lambda: run_protocol(sm.params.protocol, dataset=sm.wildcards.dataset, entry=sm.params.entry,
                             outputs=dict(sm.output.items()), settings=sm.params.settings, tags=tags,
                             n_jobs=sm.threads, **({"part": part} if part else {})),
        sm.log[0],
    )
