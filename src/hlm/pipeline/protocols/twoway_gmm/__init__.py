"""The two-way GMM's grid protocol (dissertation chapter 2, Tables 2.1-2.3; docs/twoway-gmm-spec.md section 8).

On the project's random 80/20 splits, the two-way GMM at every (components per class, variable clusters) and
MDA at every number of components, each refitted and tested, plus both chosen by 10-fold CV. Its rule is
twoway_gmm_grid: the method twoway_gmm has its evaluation rule.
"""

from hlm.pipeline.protocols.spec import ProtocolSpec

#: the two methods of the grid per covariance: (two-way GMM, MDA without variable clustering); the full ones are
#: the diagonal ones after the per-class whitening of section 2.2.2 (Table 2.4; hlm.pipeline.methods.VARIANTS)
METHODS_BY_COVARIANCE = {"diag": ("twoway_gmm", "mda"), "full": ("twoway_gmm_full", "mda_full")}

PROTOCOL = ProtocolSpec(
    id="twoway_gmm",
    rule="twoway_gmm_grid",
    label="Two-way GMM",
    refusal="the two-way GMM protocol needs feature vectors",
    table_caption="The two-way GMM's grid (dissertation Tables 2.1-2.3): test error at every (components per "
                  "class, variable clusters) beside MDA at the same number of components.",
    # the chapter's data sets are not public: stand-ins (spec section 9)
    paper_datasets=("sonar", "satellite", "digits", "dna_indicators", "sonar_mcar5"),
    settings=("seed", "cv_folds", "n_splits", "test_fraction"),
    threads="job",
    methods=("twoway_gmm", "mda"),  # and their full-covariance variants (methods.VARIANTS)
    # the section's split_jobs: one job per split (Digits' full-covariance grid takes about 10 CPU-minutes a split)
    split_parts=True,
)
