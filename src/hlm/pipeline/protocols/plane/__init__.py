"""Subclasses and components over the plane: LLC-PC's subclasses and odKDE's components on a two-feature data
set, drawn with their decision regions (issue "The field's own data": KEEL's Banana).

One stratified partition of ``n_train`` training objects (Rätsch's IDA benchmark splits Banana 400:4,900);
LLC-PC with Greedy-MPE subclasses, K chosen by the inner CV over K = N..40 as in the LLC-PC protocol, and
odKDE learnt from the training part in its order; the test accuracy of both, the subclasses and components per
class, and the figure results/figures/plane_{dataset}.png.
"""

from hlm.pipeline.protocols.spec import ProtocolSpec

PROTOCOL = ProtocolSpec(
    id="plane",
    rule="plane",
    label="Over the plane",
    refusal="the plane figure draws feature vectors of two features",
    table_caption="LLC-PC (Greedy-MPE subclasses, K by CV) and odKDE on a two-feature data set, one partition: "
                  "test accuracy, subclasses and components per class (the figure draws them).",
    paper_datasets=("banana",),
    settings=("seed", "cv_folds"),
    figure=True,  # its caption: figure.rst
    methods=("llc_pc_mpe", "odkde"),
)
