"""The numbers the HLM paper and the local SDA paper report, for the main comparison's tables.

Qiao & Li, *Distance-based Mixture Modeling for Classification via Hypothetical Local Mapping*, Tables 2-4
(``papers/hlm.yaml``), and Sadowski, Cazzanti & Gupta, *Bayesian and Pairwise Local Similarity Discriminant
Analysis*, Tables I-II (``papers/local_sda.yaml``): % mean (sd) over 20 random 80/20 splits, keyed by our
method ids and registry data set names. The papers' own protocols keep theirs in their packages
(``hlm.pipeline.protocols.<id>/paper.yaml``).
"""

from __future__ import annotations

import math

from hlm.pipeline.reporting.numbers import paper_numbers

_HLM = paper_numbers("hlm.pipeline.reporting", "papers/hlm.yaml")
_SDA = paper_numbers("hlm.pipeline.reporting", "papers/local_sda.yaml")

#: {(method, dataset): (mean, sd)}
PAPER_ERROR_RATES: dict[tuple[str, str], tuple[float, float]] = {
    (method, dataset): tuple(value)
    for method, values in _HLM["error_rates"]["rows"].items()
    for dataset, value in zip(_HLM["error_rates"]["datasets"], values)
    if value is not None
}
#: where each number comes from
PAPER_SOURCE: str = _HLM["error_rates"]["source"]

#: Table 4's data sets -> number of objects (Table 1)
PAPER_TIME_DATASET_SIZES: dict[str, int] = dict(_HLM["run_times"]["dataset_sizes"])
#: {(method, paper data set): seconds per split} (Table 4)
PAPER_RUN_TIMES: dict[tuple[str, str], float] = {
    (method, dataset): value
    for method, values in _HLM["run_times"]["rows"].items()
    for dataset, value in zip(PAPER_TIME_DATASET_SIZES, values)
    if value is not None
}


def nearest_paper_dataset(n_objects: int, method: str | None = None) -> str | None:
    """The Table 4 data set closest in size on a log scale (among those timed for ``method``)."""
    names = [d for d in PAPER_TIME_DATASET_SIZES if method is None or (method, d) in PAPER_RUN_TIMES]
    if not names:
        return None
    return min(names, key=lambda d: abs(math.log(PAPER_TIME_DATASET_SIZES[d] / n_objects)))


#: the local SDA paper's data sets, in its column order; None: not available here
SDA_DATASETS: dict[str, str | None] = dict(_SDA["datasets"])
#: (table, row label, our method id, (mean, sd) per data set in SDA_DATASETS order)
SDA_ROWS: tuple[tuple[str, str, str, tuple], ...] = tuple(
    (table, row, method, tuple(tuple(cell) for cell in cells)) for table, row, method, cells in _SDA["rows"])
SDA_SOURCE: str = _SDA["source"]
