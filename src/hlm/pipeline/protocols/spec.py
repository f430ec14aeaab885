"""A protocol's entry in the table of protocols (``hlm.pipeline.protocols``)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ProtocolSpec:
    """One paper's own protocol: what workflow/rules/protocols.smk needs to make its two rules.

    The protocol's package (``hlm.pipeline.protocols.<id>``) holds this entry (``PROTOCOL``), ``run.py``
    (``run``: the job on one data set), ``table.py`` (``table``: the table over the data sets; a module of
    its own, so that editing a table reruns no protocol job) and, where the paper has numbers to compare
    with, ``paper.yaml``. Its config section is ``<id>`` (src/hlm/pipeline/config.schema.yaml). The entry is
    not a code input of the job: its label and captions change no result, and what does (its settings, its
    methods, its data sets) reaches the rules as params, code inputs and jobs.
    """

    #: the package, the config section, results/<id>/{dataset}.parquet and results/tables/<id>.{csv,md}
    id: str
    #: the job rule's name (``snakemake --forcerun <rule>``); the table's rule is ``<id>_report``
    rule: str
    #: the report's category
    label: str
    #: the end of the one-line error for a data set of another kind in its section (config: field
    #: '<id>.datasets': X not of kind vectors; <refusal>)
    refusal: str
    #: the caption of its table in the HTML report (workflow/report/protocol_table.rst)
    table_caption: str
    #: the kinds of data set it reads (its feature vectors, from the registry entry: no distance matrix)
    kinds: tuple[str, ...] = ("vectors",)
    #: its default data sets: the run's among these; None: every run data set of ``kinds``
    paper_datasets: tuple[str, ...] | None = None
    #: the top-level config settings the job reads besides its section (seed, cv_folds, ...)
    settings: tuple[str, ...] = ("seed",)
    #: the job also draws results/figures/<id>_{dataset}.png; its caption is the package's ``figure.rst`` (a file,
    #: not a job's input: editing it reruns no job)
    figure: bool = False
    #: the job's threads: "one"; "job" (``threads_per_job`` worker processes); "dask" (a local Dask
    #: cluster of ``threads_per_job`` workers when the section sets ``parallel`` without a ``scheduler``)
    threads: str = "one"
    #: the methods (``hlm.pipeline.methods``) whose estimators the job makes by name: their modules are code
    #: inputs of its rule
    methods: tuple[str, ...] = ()

    #: the parts a data set's job can split into (its section's ``split_jobs`` names the data sets): one job per
    #: part, writing results/<id>/{dataset}/{part}.parquet, and one that gathers them (the run module's ``run``
    #: with ``part``, and its ``gather``); a part's rows are those of the whole job
    parts: tuple[str, ...] = ()
    #: instead of ``parts``, one part per random split of the data set (split0, split1, ...: its number of
    #: splits, the config's ``n_splits`` or ``dataset_splits``); the run module's ``run`` takes ``part`` so too
    split_parts: bool = False

    def part_names(self, n_splits: int) -> tuple[str, ...]:
        """The parts of a data set's job: ``parts``, or one per split of its ``n_splits``."""
        return tuple(f"split{s}" for s in range(n_splits)) if self.split_parts else self.parts

    @property
    def has_parts(self) -> bool:
        return bool(self.parts) or self.split_parts

    @property
    def package(self) -> str:
        return f"hlm.pipeline.protocols.{self.id}"

    @property
    def run_module(self) -> str:
        return f"{self.package}.run"

    @property
    def table_module(self) -> str:
        return f"{self.package}.table"

    @property
    def entry_files(self) -> tuple[str, ...]:
        """The table's files the job imports without running them: the entry, the table of protocols, the spec."""
        return (f"pipeline/protocols/{self.id}/__init__.py", "pipeline/protocols/__init__.py",
                "pipeline/protocols/spec.py")

    @property
    def job_modules(self) -> tuple[str, ...]:
        """What its job runs: the job script's imports and its run module (``hlm.pipeline.sources``)."""
        return (*JOB_MODULES, self.run_module)

    @property
    def table_modules(self) -> tuple[str, ...]:
        """What its table's job runs: the script's imports and its table module."""
        return (*TABLE_STAGE, self.table_module)

    def defaults(self, run_datasets: list[str], kinds: dict[str, str]) -> list[str]:
        """Its data sets when the config's section names none: the run's among the paper's (or of its kinds)."""
        if self.paper_datasets is None:
            return [d for d in run_datasets if kinds[d] in self.kinds]
        return [d for d in run_datasets if d in self.paper_datasets]


#: what a protocol job runs besides its run module: the job script's imports (workflow/scripts/protocol.py)
JOB_MODULES = ("hlm.pipeline.jobs", "hlm.pipeline.provenance", "hlm.pipeline.stages.protocol")
#: what a protocol's table job runs besides its table module (workflow/scripts/protocol_table.py)
TABLE_STAGE = ("hlm.pipeline.jobs", "hlm.pipeline.stages.protocol")
