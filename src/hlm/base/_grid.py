"""Predictions of one CV fold at every point of a parameter grid (paper section 5.1).

``predict_each`` is the definition: refit a clone of the estimator at each grid
point and predict the validation rows (the default ``predict_grid`` of the
fast-path protocol, ``hlm.base._classifiers.FastPathMixin``). Estimators whose grid
points share work (an eigendecomposition that does not depend on C, neighbour
sets that do not depend on the ridge, ...) override ``predict_grid`` with a path
that computes the shared part once per fold, grouping the grid by
``group_grid``; each such path is tested against ``predict_each``
(tests/test_grid_paths.py).
"""

from __future__ import annotations

from collections import defaultdict

from sklearn.base import clone

from hlm.errors import HLMError


def predict_each(estimator, X_fit, y, X_val, grid: list[dict]) -> list:
    """[clone(estimator).set_params(**p).fit(X_fit, y).predict(X_val) for p in grid].

    A grid point the data cannot support (``HLMError`` while fitting, e.g. more
    mixture components than any cluster can estimate) gives None.
    """
    out = []
    for params in grid:
        try:
            model = clone(estimator).set_params(**params).fit(X_fit, y)
        except HLMError:
            out.append(None)
            continue
        out.append(model.predict(X_val))
    return out


def group_grid(estimator, grid: list[dict], inner: tuple[str, ...]) -> dict[tuple, list[tuple[int, dict]]]:
    """Grid points grouped by their outer parameters (all but ``inner``), in first-seen order.

    Returns {sorted outer (name, value) items: [(grid index, inner params), ...]}.
    An inner parameter a grid point does not set takes the estimator's value, and
    every grid point is validated (``set_params`` + ``_validate_params`` on a clone),
    so a path raises the same errors as ``predict_each``.
    """
    groups: dict[tuple, list[tuple[int, dict]]] = defaultdict(list)
    current = estimator.get_params(deep=False)
    for g, params in enumerate(grid):
        clone(estimator).set_params(**params)._validate_params()
        outer = tuple(sorted((k, v) for k, v in params.items() if k not in inner))
        groups[outer].append((g, {name: params.get(name, current[name]) for name in inner}))
    return dict(groups)
