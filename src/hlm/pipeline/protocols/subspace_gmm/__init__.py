"""Chapter 4's grid protocol (dissertation Tables 4.1-4.2; docs/subspace-gmm-spec.md).

GMM-MPCA, GMM-MPCA-MEAN, GMM-MPCA-SEP, MDA-RR, MDA-RR-OS and MDA-DR-MPCA(-MEAN) at every (components per class,
discriminant dimension) of the chapter's grid, on ten fresh simulations of a generated data set (Waveform) or
on 5-fold cross-validation; and the 2-D view of the first partition. Its rule is subspace_gmm_grid: the
methods gmm_mpca etc. have their evaluation rules.
"""

from hlm.pipeline.protocols.spec import ProtocolSpec

PROTOCOL = ProtocolSpec(
    id="subspace_gmm",
    rule="subspace_gmm_grid",
    label="Subspace-constrained GMM",
    refusal="the subspace GMM protocol needs feature vectors",
    table_caption="Chapter 4's grid: test error (%) of GMM-MPCA, -MEAN, -SEP, MDA-RR, MDA-RR-OS and "
                  "MDA-DR-MPCA(-MEAN) at every (components per class, discriminant dimension d), mean, sd and SE "
                  "over the partitions, "
                  "with the dissertation's Tables 4.1(b) and 4.2(a) beside (column paper).",
    paper_datasets=("waveform", "sonar", "satellite"),  # the dissertation's Tables 4.1-4.3, those we have
    figure=True,  # its caption: figure.rst
    threads="job",
)
