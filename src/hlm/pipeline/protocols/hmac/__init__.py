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
    refusal="HMAC clusters feature vectors",
    table_caption="HMAC's clusters at every bandwidth level, per data set, with the largest cluster and the time "
                  "of all levels.",
    paper_datasets=None,  # every vector data set of the run
    settings=(),
    figure=True,  # its caption: figure.rst
    threads="dask",
)
