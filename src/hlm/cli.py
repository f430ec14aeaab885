"""The ``hlm`` command: check a registry entry before running the pipeline; browse the results.

    hlm check my_data [--registry REGISTRY]

reads the raw file(s), validates them, converts to distances (paper section
5.2) and prints a one-paragraph summary, or a one-line error naming the entry
and the problem (exit status 2). The registry and the distance stage's block
size default to the pipeline's (hlm.pipeline.config: the config schema's defaults).

    hlm datasets [--aeon]

lists the registry's entries, or the classification sets the installed aeon
bundles (any of them is an entry's `source` with `format: aeon`).

    hlm fit DATASET --method M -o DIR [--params JSON | --from-results]

fits method M on all labelled objects of a registry entry (parameters chosen by
the method's CV grid with the pipeline's CV and seeds, or given) and writes a
model folder: model.json and arrays.npz, no pickles (hlm.persistence).

    hlm predict DIR INPUT -o OUT [--distances]
    hlm predict DIR --reference

classifies new objects: raw, in the data set's own format (series CSV or folder,
an archive .ts/.arff/.tsv file, FASTA, a vector table), or with --distances as their relation (distances, or the
similarities of a similarity data set) to the model's reference objects, by id
(--reference lists them). It computes only the distances the model reads.

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
    """Raw objects -> distances in one process (:func:`hlm.pipeline.fit.objects_artifact`)."""
    from hlm.pipeline.fit import objects_artifact as artifact

    return artifact(spec, root)


def project_config() -> dict:
    """The pipeline's settings in this folder (:func:`hlm.pipeline.fit.project_config`)."""
    from hlm.pipeline.fit import project_config as settings

    return settings(".")


def _datasets(args) -> None:
    """The registry's entries, or (``--aeon``) the classification sets the installed aeon bundles."""
    if args.aeon:
        from aeon.datasets import load_from_ts_file

        from hlm.datasets._series import aeon_sets

        print(f"{'source':24s} {'train':>6s} {'test':>6s} {'classes':>7s} {'channels':>8s} {'length':>9s}")
        for name, ts in aeon_sets().items():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                (X, y), (X_test, _) = load_from_ts_file(str(ts.train)), load_from_ts_file(str(ts.test))
            lengths = sorted({np.shape(x)[-1] for x in [*X, *X_test]})
            span = f"{lengths[0]}" if len(lengths) == 1 else f"{lengths[0]}-{lengths[-1]}"
            print(f"{name:24s} {len(X):6d} {len(X_test):6d} {len(set(map(str, y))):7d} {np.shape(X[0])[0]:8d} "
                  f"{span:>9s}")
        print("hlm: a registry entry names one by `format: aeon` and `source: <name>`")
        return
    from hlm.datasets._registry import load_registry

    registry = load_registry(args.registry or project_config()["registry"])
    for name, spec in registry.items():
        distance = spec.distance or spec.to_distance or ""
        print(f"{name:24s} {spec.kind:12s} {spec.format:10s} {distance}")


def _fit(args) -> None:
    import json
    import time

    from hlm.errors import ConfigError
    from hlm.persistence._model import save_model
    from hlm.pipeline.fit import fit_model

    params = None
    if args.params is not None:
        try:
            params = json.loads(args.params)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"--params: not JSON ({exc.msg}): {args.params}") from None
        if not isinstance(params, dict):
            raise ConfigError(f"--params: expected a JSON object such as '{{\"n_neighbors\": 4}}', got {args.params}")
    t0 = time.perf_counter()
    model = fit_model(args.dataset, args.method, root=args.root, registry=args.registry, params=params,
                      from_results=args.from_results)
    path = save_model(model, args.output)
    chosen = ", ".join(f"{k}={v}" for k, v in model.params.items()) or "none"
    how = {"cv": f"chosen by {model.info['cv_folds']}-fold CV", "given": "given",
           "results": "the pipeline's most frequent choice"}[model.info["params_from"]]
    print(f"{args.dataset}/{args.method}: fitted on {model.n_train} objects, {len(model.classes)} classes; "
          f"parameters {chosen} ({how}); {time.perf_counter() - t0:.1f} s")
    print(f"  reference objects: {len(model.reference_ids)}; model written to {path}")


def _predict(args) -> None:
    from hlm.persistence._model import load_model
    from hlm.persistence._predict import predict_file, reference_listing

    model = load_model(args.model)
    if args.reference:
        print(reference_listing(model), end="")
        return
    if args.input is None or args.output is None:
        raise HLMError("predict: give INPUT and -o OUT (or --reference)")
    for line in predict_file(model, args.input, args.output, distances=args.distances):
        print(line)


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
    datasets = sub.add_parser("datasets", help="list the registry's entries, or the sets aeon bundles (--aeon)")
    datasets.add_argument("--aeon", action="store_true", help="the classification sets the installed aeon ships")
    datasets.add_argument("--registry", help="the data set registry (default: the pipeline's)")
    fit = sub.add_parser("fit", help="fit one method on all labelled objects of a registry entry; save it")
    fit.add_argument("dataset")
    fit.add_argument("--method", required=True, help="a method id of the method table (e.g. hlm_vsh, knn)")
    fit.add_argument("-o", "--output", required=True, help="the model folder to write")
    given = fit.add_mutually_exclusive_group()
    given.add_argument("--params", help="fix the grid parameters instead of the CV, as JSON: '{\"n_neighbors\": 4}'")
    given.add_argument("--from-results", action="store_true",
                       help="the parameters the pipeline chose most often over the splits (results/evaluation)")
    fit.add_argument("--registry", help="the data set registry (default: the pipeline's)")
    fit.add_argument("--root", default=".", help="directory the entry's paths are relative to")
    predict = sub.add_parser("predict", help="classify new objects with a model folder of hlm fit")
    predict.add_argument("model", help="the model folder")
    predict.add_argument("input", nargs="?", help="the new objects, in the data set's format (or --distances)")
    predict.add_argument("-o", "--output", help="the predictions to write (.csv or .parquet)")
    predict.add_argument("--distances", action="store_true",
                         help="INPUT holds the new objects' distances (or similarities) to the reference objects "
                              "(.csv or .parquet with an id column and one column per reference id, or .npy)")
    predict.add_argument("--reference", action="store_true", help="list the reference objects' ids and exit")
    ui = sub.add_parser("ui", help="MLflow's UI on the pipeline's store, opening on the results")
    ui.add_argument("--host", default="127.0.0.1")
    ui.add_argument("--port", type=int, default=5000)
    ui.add_argument("--experiment", help="MLflow experiment (default: the pipeline's, from config/config.yaml)")
    args = parser.parse_args(argv)
    try:
        {"check": _check, "datasets": _datasets, "fit": _fit, "predict": _predict, "ui": _ui}[args.command](args)
    except HLMError as exc:
        return print_error(exc)
    except OSError as exc:  # an output that cannot be written (a read-only folder, a full disk)
        return print_error(HLMError(f"{exc.filename or ''}: {exc.strerror or exc}".lstrip(": ")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
