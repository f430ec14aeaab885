"""The ``hlm`` command: check a registry entry before running the pipeline.

    hlm check my_data [--registry config/datasets.yaml]

reads the raw file(s), validates them, converts to distances (paper section
5.2) and prints a one-paragraph summary, or a one-line error naming the entry
and the problem (exit status 2).
"""

from __future__ import annotations

import argparse
import sys
import warnings

import numpy as np

from hlm.errors import HLMError, print_error


def _check(args) -> None:
    from hlm.data.prepare import prepare_dataset
    from hlm.data.registry import get_spec, load_registry

    spec = get_spec(load_registry(args.registry, names=[args.dataset]), args.dataset)
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
    offdiag = artifact.distances[~np.eye(artifact.n, dtype=bool)]
    print(f"  off-diagonal distances: min {offdiag.min():.4g}, median {np.median(offdiag):.4g}, "
          f"max {offdiag.max():.4g}; zeros: {int((offdiag == 0).sum())}")
    for w in caught:
        print(f"  warning: {w.message}")


def objects_artifact(spec, root):
    """Raw objects -> distances in one process (the pipeline does it in cached row blocks)."""
    from hlm.objects.blocks import assemble, block_ranges, compute_block
    from hlm.objects.load import artifact_from_matrix, load_objects

    ids, objs, labels, meta = load_objects(spec, root)
    options = {"window": spec.window} if spec.window is not None else {}
    blocks = [(i0, i1, compute_block(objs, spec.distance, i0, i1, options))
              for i0, i1 in block_ranges(len(objs), spec.block_size or 500)]
    return artifact_from_matrix(spec, ids, labels, assemble(blocks, len(objs)), meta)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="hlm", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    check = sub.add_parser("check", help="validate and summarise one registry entry")
    check.add_argument("dataset")
    check.add_argument("--registry", default="config/datasets.yaml")
    check.add_argument("--root", default=".", help="directory the entry's paths are relative to")
    args = parser.parse_args(argv)
    try:
        _check(args)
    except HLMError as exc:
        return print_error(exc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
