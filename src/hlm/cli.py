"""The ``hlm`` command: check a registry entry before running the pipeline; browse the results.

    hlm check my_data [--registry REGISTRY]

reads the raw file(s), validates them, converts to distances (paper section
5.2) and prints a one-paragraph summary, or a one-line error naming the entry
and the problem (exit status 2). The registry and the distance stage's block
size default to the pipeline's (hlm.pipeline.config: the config schema's defaults).

    hlm ui [--port 5000]

starts MLflow's UI on the pipeline's store (``mlflow.db`` here, or
``MLFLOW_TRACKING_URI``) and prints the address of the runs table of the
experiment, in the view that shows each (data set, method) with its mean error
and chosen parameters (MLflow 3 opens an experiment on its GenAI overview).
"""

from __future__ import annotations

import argparse
import sys
import warnings

import numpy as np

from hlm.errors import HLMError, print_error
from hlm.pipeline.config import config_defaults


def _check(args) -> None:
    from hlm.datasets._prepare import prepare_dataset
    from hlm.datasets._registry import get_spec, load_registry

    registry = args.registry or project_config()["registry"]
    spec = get_spec(load_registry(registry, names=[args.dataset]), args.dataset)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if spec.kind in ("series", "sequences"):
            artifact = objects_artifact(spec, args.root)
        else:
            artifact = prepare_dataset(spec, args.root)
    classes, counts = np.unique(artifact.labels, return_counts=True)
    meta = artifact.metadata
    print(f"{spec.name}: {artifact.n} objects, {len(classes)} classes "
          f"({', '.join(f'{c}: {n}' for c, n in zip(classes, counts))})")
    print(f"  source {meta.get('source')} ({spec.format}, kind {spec.kind}); "
          f"conversion {artifact.conversion}")
    if artifact.distances is None:  # a distance that uses labels (VDM): built per training part
        k = sorted({len(v) for v in meta.get("values", {}).values()}) or [0]
        span = f"{k[0]}" if len(k) == 1 else f"{k[0]}-{k[-1]}"
        print(f"  records: {artifact.records.shape[1]} categorical features ({span} values each); "
              f"{meta.get('distance')} distances are built per training part from its labels only")
    else:
        offdiag = artifact.distances[~np.eye(artifact.n, dtype=bool)]
        print(f"  off-diagonal distances: min {offdiag.min():.4g}, median {np.median(offdiag):.4g}, "
              f"max {offdiag.max():.4g}; zeros: {int((offdiag == 0).sum())}")
    for w in caught:
        print(f"  warning: {w.message}")


def objects_artifact(spec, root):
    """Raw objects -> distances in one process (the pipeline does it in cached row blocks, of the
    entry's ``block_size`` or the config's default ``distance_block_size``; so does this)."""
    from hlm.datasets._objects import artifact_from_matrix, load_objects
    from hlm.distances._blocks import assemble, block_ranges, compute_block

    ids, objs, labels, meta = load_objects(spec, root)
    options = {"window": spec.window} if spec.window is not None else {}
    block_size = spec.block_size or project_config()["distance_block_size"]
    blocks = [(i0, i1, compute_block(objs, spec.distance, i0, i1, options))
              for i0, i1 in block_ranges(len(objs), block_size)]
    return artifact_from_matrix(spec, ids, labels, assemble(blocks, len(objs)), meta)


def project_config() -> dict:
    """The pipeline's settings as ``snakemake`` in this folder would read them: ``config/config.yaml``
    validated, its defaults filled in (only the schema's defaults without that file)."""
    from pathlib import Path

    from hlm.pipeline.config import load_config

    path = Path("config/config.yaml")
    return load_config(path) if path.is_file() else config_defaults()


def _ui(args) -> None:
    """Print the runs table's address, then replace this process by ``mlflow ui`` on the store."""
    import os
    from pathlib import Path

    uri = os.environ.get("MLFLOW_TRACKING_URI") or f"sqlite:///{Path('mlflow.db').resolve()}"
    if uri.startswith("sqlite:///") and not Path(uri.removeprefix("sqlite:///")).exists():
        raise HLMError(f"{uri.removeprefix('sqlite:///')}: no MLflow store here; run the pipeline first "
                       "(make run), or set MLFLOW_TRACKING_URI")
    os.environ["MLFLOW_TRACKING_URI"] = uri
    from mlflow import MlflowClient

    from hlm.pipeline.tracking import init_store, ui_path

    experiment = args.experiment or project_config()["mlflow"]["experiment"]
    if MlflowClient().get_experiment_by_name(experiment) is None:
        raise HLMError(f"{uri}: no experiment '{experiment}' in this MLflow store; run the pipeline first")
    experiment_id = init_store(experiment)  # brings the runs view and the description up to date
    print(f"hlm: the runs table: http://{args.host}:{args.port}/{ui_path(experiment_id)}", flush=True)
    mlflow = Path(sys.executable).with_name("mlflow")
    os.execv(mlflow, [str(mlflow), "ui", "--backend-store-uri", uri, "--host", args.host, "--port", str(args.port)])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="hlm", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    check = sub.add_parser("check", help="validate and summarise one registry entry")
    check.add_argument("dataset")
    check.add_argument("--registry", help="the data set registry (default: the pipeline's, from "
                       "config/config.yaml or the config schema)")
    check.add_argument("--root", default=".", help="directory the entry's paths are relative to")
    ui = sub.add_parser("ui", help="MLflow's UI on the pipeline's store, opening on the results")
    ui.add_argument("--host", default="127.0.0.1")
    ui.add_argument("--port", type=int, default=5000)
    ui.add_argument("--experiment", help="MLflow experiment (default: the pipeline's, from config/config.yaml)")
    args = parser.parse_args(argv)
    try:
        _check(args) if args.command == "check" else _ui(args)
    except HLMError as exc:
        return print_error(exc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
