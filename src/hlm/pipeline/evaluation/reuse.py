"""Reusing another method's recorded CV errors (``MethodSpec.cv_from``).

HLM(kernel-vsh) cross-validates M = 1..16 and "kernel" (paper section 5.3).
For M = 1..16 it is the same estimator as HLM(vsh), with the same folds and
the same seeds (derived from (seed, dataset, split), not from the method), so
its CV errors there are HLM(vsh)'s: they are read from HLM(vsh)'s evaluation
Parquet (column ``cv_error``) instead of being computed again. Only when the
recorded run provably used the same CV: same seed, same number of folds per
split, same training sizes and the same estimator parameters (``cv_estimator``
in the Parquet metadata); otherwise nothing is reused and the reason is logged.
"""

from __future__ import annotations

import json

import pandas as pd

from hlm.pipeline.methods import METHODS


def cv_estimator(method_id: str, fixed: dict | None, cv_fixed: dict | None) -> str:
    """JSON of the estimator's parameters during CV (``random_state`` left out: it is derived per split)."""
    estimator = METHODS[method_id].make(fixed).set_params(**(cv_fixed or {}))
    params = {k: v for k, v in estimator.get_params(deep=False).items() if k != "random_state"}
    return json.dumps(params, sort_keys=True, default=str)


def known_cv_errors(
    prior: pd.DataFrame, prior_meta: dict, *, estimator: str, seed: int, n_folds: int, n_train: dict[int, int],
) -> tuple[dict[int, dict[str, float]], dict[int, float], str | None]:
    """(split -> {grid key: mean CV error}, split -> CV seconds, None) from a prior evaluation,
    or ({}, {}, why not) when it did not use the same CV."""
    checks = [
        (prior_meta.get("cv_estimator") == estimator, "its estimator parameters differ"),
        (str(prior_meta.get("seed")) == str(seed), f"its seed {prior_meta.get('seed')} is not {seed}"),
        (
            str(prior_meta.get("cv_folds")) == str(n_folds),
            f"its cv_folds {prior_meta.get('cv_folds')} is not {n_folds}",
        ),
        (set(n_train) <= set(prior["split"].astype(int)), "it lacks some splits"),
    ]
    for ok, why in checks:
        if not ok:
            return {}, {}, why
    rows = prior.set_index(prior["split"].astype(int))
    for split, n in n_train.items():
        if int(rows.at[split, "n_train"]) != n:
            return {}, {}, f"split {split} had {int(rows.at[split, 'n_train'])} training objects, not {n}"
    errors = {split: {k: float(v) for k, v in json.loads(rows.at[split, "cv_error"]).items()} for split in n_train}
    seconds = {split: float(rows.at[split, "cv_seconds"]) for split in n_train}
    return errors, seconds, None
