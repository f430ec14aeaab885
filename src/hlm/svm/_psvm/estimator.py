"""The P-SVM classifier (spec ``docs/compared-methods-spec.md`` 6.9): one binary P-SVM per class pair,
one-vs-one voting; the CV grid path of one fold (``PSVM.predict_grid``); Platt probabilities
(``probability=True``, docs/beyond-the-paper-spec.md section 3)."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import KFold, StratifiedKFold
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.metaestimators import available_if

from hlm.base._classifiers import CompiledKernels, SimilarityClassifier
from hlm.base._grid import group_grid
from hlm.errors import HLMError
from hlm.svm._platt import pair_proba, sigmoid_train
from hlm.svm._psvm.normalisation import normalise_columns
from hlm.svm._psvm.solver import dual_path, dual_terms, kkt_violation, psvm_dual


@dataclass(frozen=True)
class PairModel:
    """One fitted binary P-SVM: class ``a`` (label +1) vs class ``b`` (label -1), a < b as indices."""

    a: int
    b: int
    columns: np.ndarray  # indices of the training objects (columns of S) that were kept
    mean: np.ndarray  # fit-set column means of the kept columns
    scale: np.ndarray  # fit-set std * sqrt(m) of the kept columns
    alpha: np.ndarray
    intercept: float  # b = mean(y) [V]
    n_sweeps: int
    converged: bool

    def decision(self, S_te: np.ndarray) -> np.ndarray:
        """f(u) = k~(u)'alpha + b, k~ normalised with the fit-set statistics (spec 6.9)."""
        K_te = (S_te[:, self.columns] - self.mean) / self.scale
        return K_te @ self.alpha + self.intercept


@dataclass(frozen=True)
class _PairProblem:
    """The normalised data of one class pair, before solving (shared by every (C, epsilon))."""

    a: int
    b: int
    columns: np.ndarray
    mean: np.ndarray
    scale: np.ndarray
    K_tilde: np.ndarray
    y: np.ndarray

    def model(self, alpha: np.ndarray, n_sweeps: int, converged: bool, psvm: PSVM) -> PairModel:
        """The fitted pair (b = mean(y) [V]); warns if the solver stopped at max_sweeps."""
        if not converged:
            violation = kkt_violation(self.K_tilde, self.y, alpha, psvm.C, psvm.epsilon)
            warnings.warn(
                f"P-SVM (C={psvm.C:g}, epsilon={psvm.epsilon:g}) did not converge for class pair "
                f"({psvm.classes_[self.a]}, {psvm.classes_[self.b]}) within max_sweeps={psvm.max_sweeps}; "
                f"max KKT violation {violation:.3g}",
                ConvergenceWarning,
                stacklevel=4,
            )
        return PairModel(self.a, self.b, self.columns, self.mean, self.scale, alpha, float(self.y.mean()),
                         n_sweeps, converged)


class PSVM(CompiledKernels, SimilarityClassifier):
    """P-SVM with one-vs-one voting on a precomputed similarity matrix (spec 6.9; HLM paper 5.1, Table 3).

    The potential support vector machine of Hochreiter & Obermayer (Neural Comput. 2006; the HLM
    paper's reference [10]), which needs neither a square nor a PSD data matrix. Per class pair (a, b)
    the data matrix is the rows of S_fit of the pair's objects (y = +1 for a, -1 for b; rectangular with
    ``columns="all"``), its columns centred and scaled to unit norm (K~; near-constant columns dropped;
    test rows use these fit-set statistics); the dual

        min_alpha 1/2 alpha' Q alpha - c' alpha + epsilon |alpha|_1,  -C <= alpha_j <= C,
        Q = K~'K~,  c = K~'y (y centred)

    (a box-constrained lasso) solved by cyclic coordinate descent with a KKT stopping rule and
    active-set phases (``hlm.svm._psvm.solver``); b = mean(y) and f(u) = k~(u)' alpha + b. The pairs
    vote one-vs-one (spec 2, 6.9) [P].

    Parameters
    ----------
    C : float, default=1.0
        Box bound on |alpha_j| (> 0); ``np.inf`` allowed (spec 3 grid: 1e-3..1e5 [P]).
    epsilon : float, default=0.1
        l1 weight on the normalised matrix (>= 0; spec 3 grid: 1e-3..1 [P]). For large epsilon,
        alpha = 0 and each pair predicts its majority class (b = mean(y)).
    columns : {"all", "pair"}, default="all"
        Columns of each pair's data matrix: all fit objects (default) or only
        the pair's own objects (spec 6.9 "Multi-class" [P]).
    tol : float, default=1e-6
        Relative KKT tolerance of the solver (spec 6.9): max violation below tol * max(1, ||c||_inf).
    max_sweeps : int, default=10_000
        Cap on coordinate-descent sweeps per pair; reaching it warns (``ConvergenceWarning``).
    probability : bool, default=False
        Also fit Platt scaling (``predict_proba``) [P]: each pair's sigmoid (libsvm's ``sigmoid_train``)
        on decision values of a 5-fold CV of the fit set (stratified, seed 0; fewer folds for a class
        smaller than 5), each fold a P-SVM with the same parameters; pairs coupled as libsvm does
        (``hlm.svm._platt``). Costs 5 more fits; ``predict`` does not change.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The sorted class labels.
    n_features_in_ : int
        Number of fit objects (the columns ``predict`` expects).
    class_prior_ : ndarray of shape (n_classes,)
        Class frequencies of the fit set.
    pair_models_ : list of PairModel
        One fitted binary P-SVM per class pair a < b (indices into ``classes_``), in the order
        (0, 1), (0, 2), ..., (1, 2), ...: its kept ``columns``, their fit-set ``mean`` and ``scale``,
        ``alpha``, ``intercept`` (b), ``n_sweeps`` and ``converged``.
    platt_ : ndarray of shape (n_pairs, 2)
        Each pair's (A, B) of P(earlier class | f) = 1 / (1 + exp(A f + B)); with ``probability``.

    Examples
    --------
    >>> import numpy as np
    >>> from scipy.spatial.distance import cdist
    >>> from hlm.svm import PSVM
    >>> rng = np.random.default_rng(0)
    >>> centres = np.array([[0.0, 0.0], [4.0, 0.0], [0.0, 4.0]])
    >>> X = np.vstack([rng.normal(c, 0.5, (10, 2)) for c in centres])
    >>> y = np.repeat(["a", "b", "c"], 10)
    >>> X_te = centres + rng.normal(0.0, 0.3, centres.shape)  # one test object near each centre
    >>> S, S_te = np.exp(-cdist(X, X) ** 2), np.exp(-cdist(X_te, X) ** 2)
    >>> model = PSVM(C=1.0, epsilon=0.1).fit(S, y)
    >>> print(model.predict(S_te))
    ['a' 'b' 'c']
    >>> [(m.a, m.b) for m in model.pair_models_], all(m.converged for m in model.pair_models_)
    ([(0, 1), (0, 2), (1, 2)], True)

    Platt probabilities (5 more fits, for the CV of the sigmoids):

    >>> model = PSVM(probability=True).fit(S, y)
    >>> model.platt_.shape, model.predict_proba(S_te).shape
    ((3, 2), (3, 3))
    >>> print(model.predict_proba(S_te).argmax(axis=1))
    [0 1 2]
    """

    _path_params = ("C", "epsilon")  # per class pair: the normalisation and Q, c depend on neither

    _parameter_constraints = {
        "C": [Interval(Real, 0, np.inf, closed="right")],  # C = inf allowed
        "epsilon": [Interval(Real, 0, None, closed="left")],
        "columns": [StrOptions({"all", "pair"})],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_sweeps": [Interval(Integral, 1, None, closed="left")],
        "probability": ["boolean"],
    }

    def __init__(self, C: float = 1.0, epsilon: float = 0.1, columns: str = "all", tol: float = 1e-6,
                 max_sweeps: int = 10_000, probability: bool = False):
        self.C = C
        self.epsilon = epsilon
        self.columns = columns
        self.tol = tol
        self.max_sweeps = max_sweeps
        self.probability = probability

    def fit(self, S, y):
        """Fit one binary P-SVM per class pair (and, with ``probability``, their Platt sigmoids).

        Parameters
        ----------
        S : array-like of shape (n, n)
            Similarities among the fit objects (S_train_train); need not be symmetric or PSD.
        y : array-like of shape (n,)
            Class labels (at least 2 classes).

        Returns
        -------
        self : PSVM
            The fitted estimator.
        """
        self._validate_params()
        S, y_idx = self._check_fit_input(S, y)
        problems = self._pair_problems(S, y_idx)
        self.pair_models_ = [
            problem.model(*psvm_dual(problem.K_tilde, problem.y, self.C, self.epsilon, self.tol, self.max_sweeps),
                          self) for problem in problems
        ]
        if self.probability:
            self.platt_ = self._fit_platt(S, y_idx)
        return self

    def _fit_platt(self, S: np.ndarray, y_idx: np.ndarray) -> np.ndarray:
        """Each pair's sigmoid (A, B) on its objects' decision values of a CV of the fit set (see ``probability``).
        A fold whose P-SVM cannot be fitted (a class missing) gives no values; so does a pair missing in it."""
        counts = np.bincount(y_idx)
        n_folds = min(5, int(counts.min()))
        splitter = (StratifiedKFold(n_folds, shuffle=True, random_state=0) if n_folds >= 2
                    else KFold(min(5, len(y_idx)), shuffle=True, random_state=0))
        decisions = [[] for _ in self.pair_models_]  # per pair: (f, object is of the earlier class)
        inner = clone(self).set_params(probability=False)
        for fit, val in splitter.split(S, y_idx):
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # as in the parameter CV: the final fit's warnings count
                    fold = clone(inner).fit(S[np.ix_(fit, fit)], y_idx[fit])
            except HLMError:
                continue
            where = {int(c): i for i, c in enumerate(fold.classes_)}  # class index -> the fold's
            pairs = {(m.a, m.b): p for p, m in enumerate(fold.pair_models_)}
            F = fold._pair_decisions(S[np.ix_(val, fit)])
            for p, model in enumerate(self.pair_models_):
                if model.a not in where or model.b not in where:
                    continue
                mine = (y_idx[val] == model.a) | (y_idx[val] == model.b)
                decisions[p].append((F[mine, pairs[(where[model.a], where[model.b])]], y_idx[val][mine] == model.a))
        return np.array([sigmoid_train(*(np.concatenate(x) for x in zip(*d))) if d else sigmoid_train([], [])
                         for d in decisions])

    @available_if(lambda self: self.probability)  # as SVC: only with Platt scaling
    def predict_proba(self, S_te):
        """Platt probabilities over ``classes_`` (needs ``probability=True``); their argmax may differ from
        the one-vs-one vote of ``predict`` (as in libsvm).

        Parameters
        ----------
        S_te : array-like of shape (m, n)
            S_test_train, as for ``predict``.

        Returns
        -------
        proba : ndarray of shape (m, n_classes)
            Columns in the order of ``classes_``; rows sum to 1.
        """
        if not hasattr(self, "platt_"):
            self._check_fitted()
            raise ValueError("PSVM: predict_proba needs a fit with probability=True")
        F = self._pair_decisions(S_te)
        first = np.array([m.a for m in self.pair_models_])
        second = np.array([m.b for m in self.pair_models_])
        return pair_proba(F, self.platt_, first, second, len(self.classes_))

    def predict_grid(self, S_fit, y, S_val, grid: list[dict]) -> list:
        """Grid path of one CV fold: each class pair's normalisation and Q, c are computed
        once, and the (C, epsilon) grid is solved warm-started (``dual_path``). The
        solutions meet the same KKT tolerance as refits; predictions equal refits'
        except on test rows within that tolerance of a decision boundary.

        Parameters
        ----------
        S_fit : array-like of shape (n, n)
            Similarities among the fold's fit objects.
        y : array-like of shape (n,)
            Their labels.
        S_val : array-like of shape (m, n)
            Similarities of the fold's validation objects to its fit objects.
        grid : list of dict
            Parameter settings, e.g. ``[{"C": 1.0, "epsilon": 0.1}, {"C": 10.0, "epsilon": 0.1}]``.

        Returns
        -------
        predictions : list of ndarray of shape (m,)
            The labels of S_val at each setting, in the order of ``grid``.
        """
        out: list = [None] * len(grid)
        for outer, points in group_grid(self, grid, self._path_params).items():
            model = clone(self).set_params(**dict(outer))
            S, y_idx = model._check_fit_input(S_fit, y)
            problems = model._pair_problems(S, y_idx)
            grid_points = [(p["C"], p["epsilon"]) for _, p in points]
            paths = [dual_path(*dual_terms(pr.K_tilde, pr.y), grid_points, model.tol, model.max_sweeps)
                     for pr in problems]
            for g, p in points:
                model.set_params(**p)
                key = (float(p["C"]), float(p["epsilon"]))
                model.pair_models_ = [pr.model(*path[key], model) for pr, path in zip(problems, paths)]
                out[g] = model.predict(S_val)
        return out

    def _pair_problems(self, S: np.ndarray, y_idx: np.ndarray) -> list[_PairProblem]:
        """Per class pair a < b: rows = fit objects of a, b with y = +1 / -1, normalised columns (spec 6.9)."""
        problems = []
        G = len(self.classes_)
        for a in range(G):
            for b in range(a + 1, G):
                rows = np.flatnonzero((y_idx == a) | (y_idx == b))
                cols = rows if self.columns == "pair" else np.arange(S.shape[1])
                y_pm = np.where(y_idx[rows] == a, 1.0, -1.0)
                K_tilde, mean, scale, keep = normalise_columns(S[np.ix_(rows, cols)])
                problems.append(_PairProblem(a, b, cols[keep], mean, scale, K_tilde, y_pm))
        return problems

    def _pair_decisions(self, S_te: np.ndarray) -> np.ndarray:
        """(n_test, n_pairs) decision values; positive favours the pair's earlier class."""
        S_te = self._check_predict_input(S_te)
        out = np.empty((S_te.shape[0], len(self.pair_models_)))
        for p, model in enumerate(self.pair_models_):
            out[:, p] = model.decision(S_te)
        return out

    def predict(self, S_te):
        """One-vs-one vote (spec 2, 6.9) [P]: f >= 0 votes for the earlier class; vote ties go to
        the earliest (smallest) class, as in libsvm (spec 8.3).

        Parameters
        ----------
        S_te : array-like of shape (m, n)
            Similarities of the test objects (rows) to the fit objects (columns), S_test_train.

        Returns
        -------
        labels : ndarray of shape (m,)
            Predicted labels, values of ``classes_``.
        """
        F = self._pair_decisions(S_te)
        votes = np.zeros((F.shape[0], len(self.classes_)))
        rows = np.arange(F.shape[0])
        for p, model in enumerate(self.pair_models_):
            np.add.at(votes, (rows, np.where(F[:, p] >= 0.0, model.a, model.b)), 1.0)
        return self.classes_[np.argmax(votes, axis=1)]
