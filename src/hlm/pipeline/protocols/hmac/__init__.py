"""HMAC at every bandwidth level (dissertation chapters 4.2 and 5; docs/hmac-spec.md).

Each vector data set of hmac.datasets clustered at every bandwidth level, serially or by parallel approach I
or II on Dask (hmac.parallel; hmac.scheduler: an existing scheduler's address, else a local cluster of the
job's threads); the cluster tree and the points in their first two principal components. The level sizes and
the time go to MLflow with the data set's other runs (rule track).
"""

from hlm.pipeline.protocols.spec import ProtocolSpec

PROTOCOL = ProtocolSpec(
    id="hmac",
    rule="hmac",
    label="HMAC",
    table_caption="HMAC's clusters at every bandwidth level, per data set, with the largest cluster and the time "
                  "of all levels.",
    paper_datasets=None,  # every vector data set of the run
    settings=(),
    figure="HMAC (dissertation chapters 4.2 and 5) on one data set: left, the cluster tree over the bandwidth "
           "levels (a node per cluster and level, its area the cluster's size); right, the points in their "
           "first two principal components coloured by the clusters of the level whose number of clusters is "
           "nearest the number of classes, the modes as crosses.",
    threads="dask",
)
