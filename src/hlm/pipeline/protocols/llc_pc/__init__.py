"""The LLC-PC paper's protocol (Chen, Lu and Boedihardjo, section 6; docs/llc-pc-spec.md section 8).

Random stratified partitions of the paper's Table 1 sizes; per partition, Greedy-MPE, k-means, HC and EM subclasses,
the test accuracy at every total K = 1..40 and K chosen by 10-fold CV, beside the paper's Table 2.
"""

from hlm.pipeline.protocols.spec import ProtocolSpec

#: the subclassings compared, Table 2's columns
METHODS = ("llc_pc_mpe", "llc_pc_kmeans", "llc_pc_hc", "llc_pc_em")
#: their names in Table 2
LABELS = {"llc_pc_mpe": "Greedy-MPE", "llc_pc_kmeans": "k-Means", "llc_pc_hc": "HC", "llc_pc_em": "EM"}

PROTOCOL = ProtocolSpec(
    id="llc_pc",
    rule="llc_pc",
    label="LLC-PC",
    refusal="the LLC-PC protocol needs feature vectors",
    table_caption="The LLC-PC paper's protocol (Chen, Lu and Boedihardjo, Table 2): LLC-PC's best accuracy over the "
                  "total number of subclasses and with K chosen by CV, for Greedy-MPE, k-means, HC and EM "
                  "subclasses, beside that paper's numbers.",
    paper_datasets=("glass", "ringnorm", "ring"),  # the paper's Table 2, those of its data sets we have
    settings=("seed", "cv_folds"),
    figure=True,  # Figures 7 and 9; its caption: figure.rst
    threads="job",
    methods=METHODS,
    # the section's split_jobs: one job per subclassing (on Ringnorm the four take about an hour of CPU together)
    parts=METHODS,
)
