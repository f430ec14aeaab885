"""The odKDE paper's protocol (Kristan and Leonardis, section 4; docs/online-kde-spec.md section 9).

Fourfold CV, 3 orderings, each class started from its first 10 objects and the rest learnt one at a time;
oKDE and odKDE with the batch KDE and the SVM-RBF, beside the paper's Table 1.
"""

from hlm.pipeline.protocols.spec import ProtocolSpec

N_FOLDS = 4
N_ORDERINGS = 3
#: the compared online learners, in the paper's column order, with odKDE's cheaper cost (at the components' means
#: instead of their sigma points; docs/online-kde-spec.md section 5) beside it
ONLINE_METHODS = ("odkde", "odkde_means", "okde")
#: the batch baselines, fitted once per fold
BATCH_METHODS = ("kde_cv", "svm_vector_rbf")
#: the jobs a data set's run splits into (the section's ``split_jobs``): one per (fold, ordering, online learner)
#: and one per (fold, batch baseline) (on Letter an oKDE run alone takes about an hour)
PARTS = tuple(f"fold{f}-ordering{o}-{m}" for f in range(N_FOLDS) for o in range(N_ORDERINGS)
              for m in ONLINE_METHODS) + tuple(f"fold{f}-{m}" for f in range(N_FOLDS) for m in BATCH_METHODS)


PROTOCOL = ProtocolSpec(
    id="online_kde",
    rule="online_kde",
    label="Online KDE",
    refusal="the online KDE protocol needs feature vectors",
    table_caption="The odKDE paper's protocol (Kristan and Leonardis, Table 1): accuracy and components per class "
                  "of odKDE, oKDE, the batch KDE and the SVM over folds and orderings, beside that paper's numbers.",
    paper_datasets=("iris", "wine", "pima", "letter"),  # the paper's Table 1
    settings=("seed", "cv_folds"),
    methods=("okde", "odkde", "kde_cv", "svm_vector_rbf"),
    parts=PARTS,
    figure=True,  # the components over time; its caption: figure.rst
)
