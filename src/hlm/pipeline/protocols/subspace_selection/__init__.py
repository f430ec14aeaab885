"""Chapter 4's bandwidth and model-selection experiments (dissertation sections 4.5.3-4.5.4; docs/subspace-gmm-spec.md
section 5.1).

On the first partition of chapter 4's protocol (fold 0 of its cross-validation; simulation 0 of a generated set), with
three components per class:
- Table 4.5: the constrained subspace of MPCA and of MPCA-MEAN at every HMAC level, and its mean closeness to the
  subspaces of all preceding levels, at each d of the table;
- Figures 4.1-4.2: GMM-MPCA's, -MEAN's and -SEP's test error and training log-likelihood under every candidate
  subspace (one per usable level), and which one the maximum likelihood chooses.
"""

from hlm.pipeline.protocols.spec import ProtocolSpec

PROTOCOL = ProtocolSpec(
    id="subspace_selection",
    rule="subspace_selection",
    label="Subspace-constrained GMM",
    refusal="the subspace selection protocol needs feature vectors",
    table_caption="Chapter 4's sections 4.5.3-4.5.4 on one partition, three components per class: the mean closeness "
                  "of each level's subspace to the preceding levels' (Table 4.5, the dissertation's beside), and "
                  "where the maximum-likelihood candidate's test error ranks among all candidates' (Figure 4.1).",
    paper_datasets=("sonar",),  # Table 4.5's data sets that we have (its other, imagery, is not public)
    settings=("seed",),
    figure=True,  # its caption: figure.rst
    methods=("gmm_mpca", "gmm_mpca_mean", "gmm_mpca_sep"),
)
