# The papers' own protocols (hlm.pipeline.protocols: one entry per protocol, as the methods are a table):
# two rules per entry. The job rule (its entry's `rule` name, e.g. twoway_gmm_grid) runs the protocol on
# one data set from the registry entry's feature vectors (no distance matrix) and writes
# results/{protocol}/{dataset}.parquet (and results/figures/{protocol}_{dataset}.png where it draws one);
# {protocol}_report writes results/tables/{protocol}.{csv,md} over the data sets, beside the paper's
# numbers. The job's code inputs are what it runs, not its table: editing a table reruns no protocol job.
# A protocol with parts (ProtocolSpec.parts: the odKDE protocol's (fold, ordering, learner); or split_parts: the
# two-way grid's random splits) runs the data sets of its section's `split_jobs` as one job per part
# (<rule>_part) and one that gathers them (<rule>_gather), so that no job is longer than a part: the same rows as
# one job.

for _protocol in PROTOCOLS.values():

    rule:
        name:
            _protocol.rule
        wildcard_constraints:
            dataset=whole_job_datasets(_protocol),
        input:
            **protocol_inputs(_protocol),
        output:
            **protocol_outputs(_protocol),
        params:
            **protocol_params(_protocol),
        threads: protocol_threads(_protocol)
        resources:
            **cluster_resources(_protocol.rule),
        log:
            f"logs/{_protocol.id}/{{dataset}}.log",
        benchmark:
            f"logs/benchmarks/{_protocol.id}/{{dataset}}.tsv",
        conda:
            "../../envs/hlm.yaml"
        script:
            "../scripts/protocol.py"

    if _protocol.has_parts:  # the data sets of the section's split_jobs: one job per part, and one that gathers them

        rule:
            name:
                f"{_protocol.rule}_part"
            wildcard_constraints:
                dataset=names_regex(SPLIT_JOBS[_protocol.id]),
                part=names_regex(_protocol.part_names(config["n_splits"])),
            input:
                **protocol_inputs(_protocol),
            output:
                runs=f"results/{_protocol.id}/{{dataset}}/{{part}}.parquet",
            params:
                **protocol_params(_protocol),
            threads: protocol_threads(_protocol)
            resources:
                **cluster_resources(f"{_protocol.rule}_part", like=_protocol.rule),
            log:
                f"logs/{_protocol.id}/{{dataset}}/{{part}}.log",
            benchmark:
                f"logs/benchmarks/{_protocol.id}/{{dataset}}/{{part}}.tsv",
            conda:
                "../../envs/hlm.yaml"
            script:
                "../scripts/protocol.py"

        rule:
            name:
                f"{_protocol.rule}_gather"
            wildcard_constraints:
                dataset=names_regex(SPLIT_JOBS[_protocol.id]),
            input:
                parts=protocol_part_files(_protocol),
                code=src(*protocol_sources(_protocol, METHODS)),
            output:
                **protocol_outputs(_protocol),
            params:
                protocol=_protocol.id,
                settings=protocol_settings(_protocol),
            resources:
                **cluster_resources(f"{_protocol.rule}_gather"),
            log:
                f"logs/{_protocol.id}/{{dataset}}.log",
            benchmark:
                f"logs/benchmarks/{_protocol.id}/{{dataset}}.tsv",
            conda:
                "../../envs/hlm.yaml"
            script:
                "../scripts/protocol_gather.py"

    rule:
        name:
            f"{_protocol.id}_report"
        input:
            runs=expand(f"results/{_protocol.id}/{{dataset}}.parquet", dataset=PROTOCOL_DATASETS[_protocol.id]),
            code=src(*protocol_table_sources(_protocol)),
        output:
            csv=report(f"results/tables/{_protocol.id}.csv", caption="../report/protocol_table.rst",
                       category=_protocol.label),
            md=f"results/tables/{_protocol.id}.md",
        params:
            protocol=_protocol.id,
            caption=_protocol.table_caption,
        resources:
            **cluster_resources(f"{_protocol.id}_report"),
        log:
            f"logs/report/{_protocol.id}_report.log",
        benchmark:
            f"logs/benchmarks/report/{_protocol.id}_report.tsv",
        conda:
            "../../envs/hlm.yaml"
        script:
            "../scripts/protocol_table.py"
