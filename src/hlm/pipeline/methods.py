"""The method table: pipeline method id -> estimator, input kind, parameter grid, sources.

A method is registered here with its defaults: its CV grid (the paper's, listed
simplest first) and the fixed hyper-parameters that make it (e.g. its clustering);
the estimator's own defaults apply to every other hyper-parameter. The config's
``method_params.<id>`` only overrides them (:meth:`MethodSpec.grid`, :meth:`MethodSpec.make`).

``hlm.pipeline.sources.method_sources`` lists the files (relative to ``src/hlm``) whose edit must rerun
a method's jobs; the workflow declares them as rule inputs. They are found from the imports of the evaluation
stage and of the method's estimator module, less the files the method imports but never runs (``not_run``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import import_module

#: Imported by the stage for the similarity methods only (s = 1/d of distance-only data, spec 4.2).
_SIMILARITY_ONLY = ("distances/_reciprocal.py", "distances/_conversions.py")


@dataclass(frozen=True)
class MethodSpec:
    id: str
    label: str  # name in tables and figures, as in the paper
    estimator: str  # "module:Class", imported on use (keeps the Snakefile's parse fast)
    input: str  # "distance", "similarity" (native, else 1/d per fit set; spec 4.2), "vectors" or "relation"
    #: (the native similarity, else the distances, as they are: for a ``DistanceTransform``)
    #: files (relative to src/hlm) its code imports but never runs, e.g. the other clustering methods;
    #: left out of ``method_sources`` so that editing them does not rerun this method
    not_run: tuple[str, ...] = ()
    posteriors: bool = False  # predict_proba is the model's class posterior (e.g. eq. 6)
    #: other class probabilities (docs/beyond-the-paper-spec.md section 3): "shares" (Laplace-corrected vote
    #: or weight shares) or "platt" (Platt scaling, fitted in the final fit only: ``final_fixed``)
    probabilities: str | None = None
    parallel_cv: bool = False  # costly CV: the job gets several threads (worker processes for the folds)
    #: {name: values}, or a list of such dicts (scikit-learn's ParameterGrid) to fix the order of the points
    default_grid: dict | list = field(default_factory=dict)
    default_fixed: dict = field(default_factory=dict)  # what makes the method (e.g. its clustering)
    #: a method whose CV this one extends: its recorded CV errors of the shared grid points are
    #: reused when its estimator, seed and folds are the same (hlm.pipeline.evaluation.reuse)
    cv_from: str | None = None
    #: z-score the features inside the estimator (its ``standardize``) where the registry standardizes the
    #: data set (features in mixed units): for models whose parameters are shared across features
    standardize_as_registry: bool = False
    #: "module:Class" of the classifier a meta-estimator (``estimator``) wraps: its fixed hyper-parameters
    #: are given as ``estimator__<name>``
    wraps: str | None = None
    #: how the CV chooses: "min" (lowest mean CV error) or "one_se" (the first grid point within one
    #: standard error of it: ``hlm.pipeline.evaluation.cv.select_params``)
    cv_rule: str = "min"

    def make(self, fixed: dict | None = None):
        """A fresh estimator with the method's own and the configured fixed hyper-parameters set."""
        params = {**self.default_fixed, **(fixed or {})}
        if self.wraps:
            inner = {k.removeprefix("estimator__"): params.pop(k) for k in list(params) if k.startswith("estimator__")}
            params["estimator"] = _construct(self.wraps, inner)
        return _construct(self.estimator, params)

    @property
    def gives_probabilities(self) -> bool:
        """Its ``predict_proba`` gives class probabilities: stored as ``proba_<class>``, scored by log-loss, Brier."""
        return self.posteriors or self.probabilities is not None

    @property
    def final_fixed(self) -> dict:
        """Hyper-parameters set for the final fit only, not in the CV: Platt scaling's ``probability``."""
        return {"probability": True} if self.probabilities == "platt" else {}

    def grid(self, grid_config: dict | None) -> list[dict]:
        """The CV grid (config overrides the default), listed simplest first."""
        from sklearn.model_selection import ParameterGrid

        grid = self.default_grid if grid_config is None else grid_config
        return list(ParameterGrid(grid)) if grid else [{}]


def _construct(estimator: str, params: dict):
    module, name = estimator.split(":")
    return getattr(import_module(module), name)(**params)


#: k of the k-NN methods (docs/compared-methods-spec.md, section 3)
K_GRID = [1, 2, 4, 8, 16, 32, 64, 128]
#: k of the local SDA paper's methods: {2, 4, ..., 64, min(n, 128)} for every local classifier, no k = 1
#: (Sadowski, Cazzanti & Gupta, section V.A; docs/local-sda-family-spec.md section 1); k is capped at n
PAPER_K_GRID = K_GRID[1:]

METHODS: dict[str, MethodSpec] = {
    "knn": MethodSpec(
        id="knn",
        label="k-NN",
        estimator="hlm.neighbors:KNNClassifier",
        input="distance",
        not_run=_SIMILARITY_ONLY,
        probabilities="shares",
        default_grid={"n_neighbors": K_GRID},
    ),
    "kernel_hlm": MethodSpec(
        id="kernel_hlm",
        label="Kernel HLM",
        estimator="hlm.local_mapping:KernelHLM",
        input="distance",
        not_run=_SIMILARITY_ONLY,
        posteriors=True,
    ),
}


def check_method_params(method_id: str, method_params: dict) -> list[dict]:
    """The CV grid of a method, every point checked against the estimator's parameters.

    Unknown parameter names and invalid values become a one-line ConfigError
    naming the config field (e.g. ``method_params.knn.grid``).
    """
    from sklearn.utils._param_validation import InvalidParameterError

    from hlm.errors import ConfigError

    spec = METHODS[method_id]
    where = f"config: field 'method_params.{method_id}"
    try:
        estimator = spec.make(method_params.get("fixed"))
        estimator._validate_params()
    except (TypeError, ValueError, InvalidParameterError) as exc:
        raise ConfigError(f"{where}.fixed': {str(exc).splitlines()[0]}") from None
    try:
        spec.make({**(method_params.get("fixed") or {}), **(method_params.get("cv_fixed") or {})})._validate_params()
    except (TypeError, ValueError, InvalidParameterError) as exc:
        raise ConfigError(f"{where}.cv_fixed': {str(exc).splitlines()[0]}") from None
    grid = spec.grid(method_params.get("grid"))
    for point in grid:
        try:
            estimator.set_params(**point)._validate_params()
        except (ValueError, InvalidParameterError) as exc:
            raise ConfigError(f"{where}.grid': {str(exc).splitlines()[0]}") from None
    return grid


def _mixture_hlm(method_id: str, label: str, clustering: str, extra_grid=(), cv_from=None) -> MethodSpec:
    """Mixture HLM with one clustering method; M chosen by CV from {1..10, 12, 14, 16} (section 5.1)."""
    return MethodSpec(
        id=method_id,
        label=label,
        estimator="hlm.local_mapping:MixtureHLM",
        input="distance",
        not_run=(*_SIMILARITY_ONLY,
                 *(f"local_mapping/_clustering/{f}" for c, f in CLUSTERING_SOURCE.items() if c != clustering),
                 *(() if "kernel" in extra_grid else ("local_mapping/_kernel_hlm.py",))),
        posteriors=True,
        parallel_cv=True,
        default_grid={"n_components": [*HLM_COMPONENTS, *extra_grid]},
        default_fixed={"clustering": clustering},
        cv_from=cv_from,
    )


HLM_COMPONENTS = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 14, 16]
CLUSTERING_SOURCE = {"vsh": "vsh.py", "gknn": "generalized_kmeans.py", "ward": "ward.py"}
METHODS.update(
    {
        "hlm_vsh": _mixture_hlm("hlm_vsh", "HLM (vsh)", "vsh"),
        "hlm_gknn": _mixture_hlm("hlm_gknn", "HLM (gknn)", "gknn"),
        "hlm_agg": _mixture_hlm("hlm_agg", "HLM (agg)", "ward"),
        # HLM(kernel-vsh): the candidates gain n_k, i.e. Kernel HLM (section 5.3); the CV errors
        # of M = 1..16 are HLM(vsh)'s (same estimator, seeds and folds), reused when it ran
        "hlm_kernel_vsh": _mixture_hlm("hlm_kernel_vsh", "HLM (kernel-vsh)", "vsh", extra_grid=["kernel"],
                                       cv_from="hlm_vsh"),
    }
)


# -- the methods the paper compares against (docs/compared-methods-spec.md, section 6; grids: section 3);
# k is capped at the fit-set size
C_GRID = [1e-3, 1e-2, 1e-1, 1.0, 1e1, 1e2, 1e3, 1e4, 1e5]
RIDGE_GRID = [10.0, 1.0, 1e-1, 1e-2, 1e-3]  # simplest (largest lambda) first
GAMMA_GRID = [1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1.0, 1e1, 1e2]
EPSILON_GRID = [1.0, 1e-1, 1e-2, 1e-3]  # simplest (largest epsilon) first
VECTOR_GAMMA_GRID = [1e-4, 1e-3, 1e-2, 1e-1, 1.0]
def _compared(method_id, label, estimator, grid, fixed=None, input="similarity", parallel_cv=False, not_run=(),
              posteriors=False, probabilities=None):
    return MethodSpec(
        id=method_id, label=label, estimator=estimator, input=input,
        not_run=(*not_run, *(_SIMILARITY_ONLY if input != "similarity" else ())),
        default_grid=grid, default_fixed=fixed or {}, parallel_cv=parallel_cv,
        posteriors=posteriors, probabilities=probabilities,
    )


METHODS.update(
    {
        "affinity_knn": _compared("affinity_knn", "affinity k-NN", "hlm.neighbors:AffinityKNN",
                                  {"n_neighbors": K_GRID}, not_run=("neighbors/_kri.py",), probabilities="shares"),
        "kri_knn": _compared("kri_knn", "KRI k-NN (clip)", "hlm.neighbors:KRIKNN",
                             {"n_neighbors": K_GRID, "ridge": RIDGE_GRID}, probabilities="shares"),
        "krr_knn": _compared("krr_knn", "KRR k-NN (pinv)", "hlm.neighbors:KRRKNN",
                             {"n_neighbors": K_GRID, "ridge": RIDGE_GRID}, not_run=("neighbors/_kri.py",),
                             probabilities="shares"),
        "local_sda": _compared("local_sda", "local SDA", "hlm.local_sda:LocalSDA",
                               {"n_neighbors": K_GRID}, posteriors=True),
        "svm_kernel_clip": _compared("svm_kernel_clip", "SVM sims-as-kernel (clip)",
                                     "hlm.svm:SVMSimilarityKernel", {"C": C_GRID},
                                     fixed={"spectrum": "clip"}, probabilities="platt"),
        "svm_features_linear": _compared("svm_features_linear", "SVM sims-as-features (linear)",
                                         "hlm.svm:SVMSimilarityFeatures", {"C": C_GRID},
                                         fixed={"kernel": "linear"}, probabilities="platt"),
        "svm_features_rbf": _compared("svm_features_rbf", "SVM sims-as-features (RBF)",
                                      "hlm.svm:SVMSimilarityFeatures",
                                      {"C": C_GRID, "gamma": GAMMA_GRID}, fixed={"kernel": "rbf"}, parallel_cv=True,
                                      probabilities="platt"),
        "svm_knn": _compared("svm_knn", "SVM-KNN (clip)", "hlm.svm:SVMKNN",
                             {"n_neighbors": K_GRID, "C": C_GRID}, parallel_cv=True),
        "psvm": _compared("psvm", "P-SVM", "hlm.svm:PSVM",
                          {"C": C_GRID, "epsilon": EPSILON_GRID}, parallel_cv=True, probabilities="platt"),
        "svm_vector_linear": _compared("svm_vector_linear", "SVM (vectors, linear)", "hlm.svm:SVMVectors",
                                       {"C": C_GRID}, fixed={"kernel": "linear"}, input="vectors",
                                       probabilities="platt"),
        "svm_vector_rbf": _compared("svm_vector_rbf", "SVM (vectors, RBF)", "hlm.svm:SVMVectors",
                                    {"C": C_GRID, "gamma": VECTOR_GAMMA_GRID}, fixed={"kernel": "rbf"},
                                    input="vectors", probabilities="platt"),
    }
)


# -- Bayesian and pairwise Bayesian local SDA (docs/local-sda-family-spec.md, sections 3 and 5; Sadowski et al.
# Table I), with that paper's k grid (PAPER_K_GRID); their class posteriors are stored
METHODS.update(
    {
        "local_sda_bayes": MethodSpec(
            id="local_sda_bayes", label="Bayesian local SDA", input="similarity", posteriors=True,
            estimator="hlm.local_sda:BayesianLocalSDA",
            default_grid={"n_neighbors": PAPER_K_GRID},
        ),
        "local_sda_pairwise_bayes": MethodSpec(
            id="local_sda_pairwise_bayes", label="pairwise Bayesian local SDA", input="similarity", posteriors=True,
            estimator="hlm.local_sda:PairwiseBayesianLocalSDA",
            default_grid={"n_neighbors": PAPER_K_GRID},
        ),
    }
)


# -- SVM-KNN's other local kernels (docs/local-sda-family-spec.md, section 7; Sadowski et al. Table II),
# with that paper's k grid (PAPER_K_GRID)
METHODS.update(
    {
        "svm_knn_flip": _compared("svm_knn_flip", "SVM-KNN (flip)", "hlm.svm:SVMKNN",
                                  {"n_neighbors": PAPER_K_GRID, "C": C_GRID},
                                  fixed={"local_kernel": "flip"}, parallel_cv=True),
        "svm_knn_shift": _compared("svm_knn_shift", "SVM-KNN (shift)", "hlm.svm:SVMKNN",
                                   {"n_neighbors": PAPER_K_GRID, "C": C_GRID},
                                   fixed={"local_kernel": "shift"}, parallel_cv=True),
        "svm_knn_features": _compared("svm_knn_features", "SVM-KNN (sims-as-features)", "hlm.svm:SVMKNN",
                                      {"n_neighbors": PAPER_K_GRID, "C": C_GRID},
                                      fixed={"local_kernel": "features"}, parallel_cv=True),
    }
)


# -- pairwise and regularized local SDA (docs/local-sda-family-spec.md, sections 4 and 6; Sadowski et al.
# Table I), with that paper's k grid (PAPER_K_GRID); the regularized one's grid is k x zeta
ZETA_GRID = [1e-6, 1e-3, 0.01, 0.1, 0.5, 0.9]
METHODS.update(
    {
        "local_sda_pairwise": MethodSpec(
            id="local_sda_pairwise", label="pairwise local SDA", input="similarity", posteriors=True,
            estimator="hlm.local_sda:PairwiseLocalSDA",
            default_grid={"n_neighbors": PAPER_K_GRID},
        ),
        "local_sda_regularized": MethodSpec(
            id="local_sda_regularized", label="regularized local SDA", input="similarity", posteriors=True,
            estimator="hlm.local_sda:RegularizedLocalSDA",
            default_grid={"n_neighbors": PAPER_K_GRID, "zeta": ZETA_GRID},
        ),
        # section II's other form: the joint class-conditional pmf regularized by prod_h P_ave(s_h | g)
        "local_sda_regularized_joint": MethodSpec(
            id="local_sda_regularized_joint", label="regularized local SDA (joint)", input="similarity",
            posteriors=True, estimator="hlm.local_sda:RegularizedLocalSDA",
            default_grid={"n_neighbors": PAPER_K_GRID, "zeta": ZETA_GRID}, default_fixed={"form": "joint"},
        ),
    }
)


# -- the online KDE classifiers and the batch KDE of the odKDE paper's Table 1 (docs/online-kde-spec.md), on
# feature vectors; the online ones learn the training part one object at a time (fit), with the paper's
# fixed thresholds (nothing to choose by CV); their class posteriors are stored
METHODS.update(
    {
        "okde": MethodSpec(id="okde", label="oKDE", estimator="hlm.kde:OKDEClassifier", input="vectors",
                           not_run=_SIMILARITY_ONLY, posteriors=True),
        "odkde": MethodSpec(id="odkde", label="odKDE", estimator="hlm.kde:ODKDEClassifier", input="vectors",
                            not_run=_SIMILARITY_ONLY, posteriors=True),
        "kde_cv": MethodSpec(id="kde_cv", label="KDE (CV bandwidth)", estimator="hlm.kde:KDEClassifier",
                             input="vectors", not_run=_SIMILARITY_ONLY, posteriors=True),
    }
)


# -- subclass classifiers on feature vectors: LLC-PC (Chen, Lu and Boedihardjo; docs/llc-pc-spec.md) with
# Greedy-MPE, k-means, HC or EM subclasses, K = 1..40 in total; the two-way GMM (dissertation chapter 2;
# docs/twoway-gmm-spec.md) over (components per class, variable clusters), and MDA without variable clustering
SUBCLASS_GRID = list(range(1, 41))  # simplest first: CV ties go to the smaller K
TWOWAY_COMPONENTS_GRID = [1, 2, 4, 6, 8, 10]  # per class
TWOWAY_CLUSTERS_GRID = [4, 8, 12, 16, 24, 36, 48, 56]  # those at or above the dimension are MDA (spec 3.6)
#: simplest first, M before L (spec 5): CV ties go to fewer components, then fewer clusters
TWOWAY_GRID = [{"n_components": [m], "n_clusters": TWOWAY_CLUSTERS_GRID} for m in TWOWAY_COMPONENTS_GRID]
METHODS.update(
    {
        **{f"llc_pc_{name}": MethodSpec(id=f"llc_pc_{name}", label=f"LLC-PC ({label})", input="vectors",
                                        estimator="hlm.llc_pc:LLCPairwiseCoupling", not_run=_SIMILARITY_ONLY,
                                        default_grid={"n_subclasses": SUBCLASS_GRID},
                                        default_fixed={"subclassing": subclassing}, parallel_cv=True)
           for name, label, subclassing in (("mpe", "Greedy-MPE", "greedy_mpe"), ("kmeans", "k-means", "kmeans"),
                                            ("hc", "HC", "hc"), ("em", "EM", "em"))},
        "twoway_gmm": MethodSpec(id="twoway_gmm", label="two-way GMM", input="vectors", posteriors=True,
                                 estimator="hlm.mixture:TwoWayGMMClassifier", not_run=_SIMILARITY_ONLY,
                                 default_grid=TWOWAY_GRID, parallel_cv=True, standardize_as_registry=True),
        "mda": MethodSpec(id="mda", label="MDA (n.v.c.)", input="vectors", posteriors=True,
                          estimator="hlm.mixture:TwoWayGMMClassifier", not_run=_SIMILARITY_ONLY,
                          default_grid={"n_components": TWOWAY_COMPONENTS_GRID},
                          default_fixed={"n_clusters": None}, parallel_cv=True, standardize_as_registry=True),
    }
)


# -- Gaussian mixtures with subspace-constrained means (dissertation chapter 4; docs/subspace-gmm-spec.md):
# GMM-MPCA, -MPCA-MEAN and -MPCA-SEP, and the chapter's baselines MDA-RR (reduced rank) and MDA-DR-MPCA (MDA on
# the data projected onto GMM-MPCA's subspace); CV over (components per class, discriminant dimension d)
#: one component per class (reduced-rank LDA) first, for CV ties, then the chapter's smallest and largest (its
#: tables' 3, 4, 5); d values at or above a data set's dimension fail, and the CV skips them (as any point the
#: data cannot fit). 12 points: the fits cost 0.1-1 s each (docs/performance.md)
SUBSPACE_COMPONENTS_GRID = [1, 3, 5]
SUBSPACE_DIMS_GRID = [1, 2, 4, 8]
SUBSPACE_GRID = {"n_components": SUBSPACE_COMPONENTS_GRID, "n_dims": SUBSPACE_DIMS_GRID}
_SUBSPACE = "hlm.mixture:SubspaceGMMClassifier"
#: HMAC's files: imported by MDA-RR through the shared subspace-GMM helpers, never run by it (no modes)
_HMAC = ("hmac/_hmac.py", "hmac/_modal_em.py", "hmac/_parallel.py")
METHODS.update(
    {
        "gmm_mpca": MethodSpec(id="gmm_mpca", label="GMM-MPCA", input="vectors", posteriors=True,
                               estimator=_SUBSPACE, not_run=_SIMILARITY_ONLY, default_grid=SUBSPACE_GRID,
                               default_fixed={"subspace": "mpca"}, parallel_cv=True, standardize_as_registry=True),
        "gmm_mpca_mean": MethodSpec(id="gmm_mpca_mean", label="GMM-MPCA-MEAN", input="vectors", posteriors=True,
                                    estimator=_SUBSPACE, not_run=_SIMILARITY_ONLY, default_grid=SUBSPACE_GRID,
                                    default_fixed={"subspace": "mpca_mean"}, parallel_cv=True,
                                    standardize_as_registry=True),
        "gmm_mpca_sep": MethodSpec(id="gmm_mpca_sep", label="GMM-MPCA-SEP", input="vectors", posteriors=True,
                                   estimator=_SUBSPACE, not_run=_SIMILARITY_ONLY, default_grid=SUBSPACE_GRID,
                                   default_fixed={"subspace": "sep"}, parallel_cv=True,
                                   standardize_as_registry=True),
        "mda_rr": MethodSpec(id="mda_rr", label="MDA-RR", input="vectors", posteriors=True,
                             estimator="hlm.mixture:ReducedRankMDA", not_run=(*_SIMILARITY_ONLY, *_HMAC),
                             default_grid={"n_components": SUBSPACE_COMPONENTS_GRID, "rank": SUBSPACE_DIMS_GRID},
                             parallel_cv=True, standardize_as_registry=True),
        "mda_dr_mpca": MethodSpec(id="mda_dr_mpca", label="MDA-DR-MPCA", input="vectors", posteriors=True,
                                  estimator="hlm.mixture:ProjectedMDA", not_run=_SIMILARITY_ONLY,
                                  default_grid=SUBSPACE_GRID, default_fixed={"subspace": "mpca"}, parallel_cv=True,
                                  standardize_as_registry=True),
    }
)

# -- beyond the paper (docs/beyond-the-paper-spec.md sections 1-2): the similarity-to-distance transform
# chosen by CV (``DistanceTransform``, on the data set's native relation), jointly with Kernel HLM's scale
# factor c (b = c * b-hat) or Mixture HLM's M; the transforms first in the table's order (the paper's rule
# wins a CV tie), then c by |log c| (c = 1, the paper's estimator, first), then the smaller c
TRANSFORM_GRID = ["bound_minus", "neg_log", "reciprocal", "sqrt", "square"]
SCALE_FACTOR_GRID = [1.0, 0.5, 2.0, 0.25, 4.0, 0.125, 8.0, 0.0625, 16.0]
_TRANSFORM = "hlm.distances:DistanceTransform"
METHODS.update(
    {
        "kernel_hlm_cv": MethodSpec(
            id="kernel_hlm_cv", label="Kernel HLM (CV transform, scale)", estimator=_TRANSFORM,
            wraps="hlm.local_mapping:KernelHLM", input="relation", posteriors=True, cv_rule="one_se",
            default_grid=[{"to_distance": [t], "estimator__scale_factor": SCALE_FACTOR_GRID} for t in TRANSFORM_GRID],
        ),
        "hlm_vsh_cv": MethodSpec(
            id="hlm_vsh_cv", label="HLM (vsh, CV transform)", estimator=_TRANSFORM,
            wraps="hlm.local_mapping:MixtureHLM", input="relation", posteriors=True, parallel_cv=True,
            cv_rule="one_se",
            not_run=(*(f"local_mapping/_clustering/{f}" for c, f in CLUSTERING_SOURCE.items() if c != "vsh"),
                     "local_mapping/_kernel_hlm.py"),
            default_grid=[{"to_distance": [t], "estimator__n_components": HLM_COMPONENTS} for t in TRANSFORM_GRID],
            default_fixed={"estimator__clustering": "vsh"},
        ),
    }
)


#: the protocols' variants of a compared method (not compared themselves): id -> (method, its fixed
#: hyper-parameters). odKDE with its cost at the means (the odKDE protocol); the two-way GMM and MDA after the
#: per-class whitening of the dissertation's section 2.2.2 (the two-way GMM's grid, Table 2.4)
VARIANTS = {"odkde_means": ("odkde", {"cost_points": "means"}),
            "twoway_gmm_full": ("twoway_gmm", {"covariance": "full"}),
            "mda_full": ("mda", {"covariance": "full"})}


def make_method(method_id: str, params: dict | None = None):
    """The estimator of a method or of a variant (its method's, with the variant's fixed parameters on top)."""
    base, fixed = VARIANTS.get(method_id, (method_id, {}))
    return METHODS[base].make({**(params or {}), **fixed})


def method_applies(method_id: str, dataset_kind: str) -> bool:
    """Vector methods run only on data sets of kind: vectors (paper, end of section 5.3)."""
    return METHODS[method_id].input != "vectors" or dataset_kind == "vectors"
