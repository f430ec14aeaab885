"""P-SVM (potential support vector machine) on a precomputed similarity matrix.

Spec ``docs/compared-methods-spec.md`` section 6.9 (Hochreiter & Obermayer 2006):

* data matrix K = rows of S_fit (samples to classify) x columns (training
  objects), neither square nor PSD needed [V: abstract];
* columns centred over the rows and scaled to unit Euclidean norm, K~; near
  constant columns dropped; test rows use the fit-set statistics [V: implementation]
  (``normalisation``);
* dual  min_a 1/2 a'Qa - c'a + eps |a|_1,  -C <= a_j <= C,  Q = K~'K~,
  c = K~'y (y centred) [V: implementation], i.e. a box-constrained lasso;
* solved by exact cyclic coordinate descent (single-variable SMO) with a KKT
  stopping rule [P], each block of sweeps followed by an active-set phase on the
  free set (Newton steps with Cholesky updates and downdates; a [P] departure for
  speed only: same solution, same stopping rule) (``solver``);
* b = mean(y) [V]; decision f(u) = k~(u)'a + b;
* multi-class: one-vs-one voting, one P-SVM per class pair [P] (spec 2, 6.9)
  (``estimator``).

The reference solvers the tests compare the solver against (pure coordinate
descent, the earlier Newton-phase solver) are in ``tests/oracles/psvm_reference.py``.
"""

from hlm.svm._psvm.estimator import PSVM, PairModel
from hlm.svm._psvm.normalisation import CONST_COLUMN_RTOL, apply_normalisation, normalise_columns
from hlm.svm._psvm.solver import (
    PIVOT_RTOL,
    dual_path,
    dual_terms,
    kkt_violation,
    psvm_dual,
    solve_dual,
    solver_tolerance,
)

__all__ = [
    "CONST_COLUMN_RTOL",
    "PIVOT_RTOL",
    "PSVM",
    "PairModel",
    "apply_normalisation",
    "dual_path",
    "dual_terms",
    "kkt_violation",
    "normalise_columns",
    "psvm_dual",
    "solve_dual",
    "solver_tolerance",
]
