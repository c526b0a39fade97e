"""scikit-learn estimators: validate, pick the rule, run the one compiled loop, wrap the result."""
import time

import numpy as np
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from . import _validation as v
from ._algorithms import RULES
from ._binning import BinMapper
from ._config import n_threads
from ._kernels.loop import N_STATE, STATE_N, get_boost
from ._kernels.update import n_blocks
from ._kernels.predict import add_stump, decision_function as _decision_kernel
from ._types import CRITERIA, MAX_BINS, N_FREC, N_HIST_FIELDS, N_IREC, N_SUMS, Y_DTYPE
from ._types import R_ALPHA, R_BIN, R_ERROR, R_FEATURE, R_LEARNER_ERROR, R_LEFT, R_LOG_COST, R_MISSING_LEFT
from ._types import R_RIGHT, R_THRESHOLD

#: One record per kept round: the fitted ensemble, as a plain structured array.
ROUND_DTYPE = np.dtype([
    ("feature", np.int64),        # feature index of the stump
    ("bin", np.int64),            # left side is bin code <= bin
    ("threshold", np.float64),    # left side is x <= threshold (raw value)
    ("missing_left", np.int64),   # 1 if NaN goes left
    ("left", np.int64),           # output on the left side (-1 or +1)
    ("right", np.int64),          # output on the right side; the polarity (equal to left: constant)
    ("alpha", np.float64),        # step size
    ("error", np.float64),        # weighted error under the boosting weights (sum 1)
    ("learner_error", np.float64),  # weighted error under the weights the learner saw
    ("cost", np.float64),         # the algorithm's cost after the round
    ("log_cost", np.float64),     # its log (the cost itself underflows to 0 after many rounds)
])

_CHUNK = 64  # rounds per compiled call: Python handles Ctrl-C and grows the record in between
_PROGRESS_CHUNK = 10


class _BaseBoostClassifier(ClassifierMixin, BaseEstimator):
    """Shared fit/predict for stump boosting; subclasses name their rule and its parameters."""

    _algorithm = None

    def _rule_params(self):
        return np.zeros(1, dtype=np.float64)

    def _check_params(self):
        v.check_int(self.n_estimators, "n_estimators", 1)
        v.check_int(self.max_bins, "max_bins", 2, MAX_BINS)
        if self.criterion not in CRITERIA:
            raise ValueError(f"criterion must be one of {sorted(CRITERIA)}, got {self.criterion!r}.")
        if self.n_jobs is not None:
            v.check_int(self.n_jobs, "n_jobs", -(2 ** 31))
            if self.n_jobs == 0:
                raise ValueError("n_jobs must be a positive int, a negative int (as in joblib) or None; got 0.")
        v.check_int(int(self.verbose) if isinstance(self.verbose, bool) else self.verbose, "verbose", 0)
        check_random_state(self.random_state)  # raises ValueError for anything but None, an int or a generator

    # ------------------------------------------------------------------ fit
    def fit(self, X, y, sample_weight=None):
        """Fit the boosted ensemble.

        X: array-like (n_samples, n_features): NumPy array (float32/float64/int,
        C or F order, memmap) or DataFrame of numeric columns; NaN marks a missing value.
        y: two class labels of any kind. sample_weight: non-negative, not all zero.
        """
        self._check_params()
        X = v.check_X(X, type(self).__name__)
        n_samples = X.shape[0]
        y = v.check_y(y, n_samples, type(self).__name__)
        classes, y_idx = np.unique(y, return_inverse=True)
        if classes.shape[0] < 2:
            raise ValueError(
                f"{type(self).__name__} needs samples of at least 2 classes in y; got 1 class ({classes[0]!r})."
            )
        if classes.shape[0] > 2:
            raise ValueError(
                "Only binary classification is supported. The type of the target is multiclass: "
                f"y has {classes.shape[0]} classes, and {type(self).__name__} takes two (multiclass "
                "support is planned)."
            )
        p = v.as_distribution(v.check_sample_weight(sample_weight, n_samples))
        # all input checked: only now replace any earlier fit's state
        for attr in [a for a in vars(self) if a.endswith("_") and not a.startswith("_")]:
            delattr(self, attr)
        validate_data(self, X=X, reset=True, skip_check_array=True)
        self.classes_ = classes
        y_idx = y_idx.astype(Y_DTYPE)

        t0 = time.perf_counter()
        with n_threads(self.n_jobs):
            mapper = BinMapper(self.max_bins, random_state=self.random_state)
            codes = mapper.fit_transform(X, p)
            t1 = time.perf_counter()
            rounds = self._boost(codes, y_idx, p, mapper)
        self.bin_time_ = t1 - t0
        self.fit_time_ = time.perf_counter() - t0
        self._set_rounds(*rounds)
        return self

    def _boost(self, codes, y_idx, p, mapper):
        """Run the one compiled loop in chunks of rounds; return the (integer, float) round records."""
        boost = get_boost()
        rule = RULES[self._algorithm]
        params = self._rule_params()
        n_features, n_samples = codes.shape
        w = p.copy()
        state = np.zeros(N_STATE, dtype=np.float64)
        state[STATE_N] = np.count_nonzero(p)
        T = self.n_estimators
        capacity = min(T, 4 * _CHUNK)
        irec = np.zeros((capacity, N_IREC), dtype=np.int64)
        frec = np.zeros((capacity, N_FREC), dtype=np.float64)
        scratch = (
            np.empty(n_samples, np.float64),  # u
            np.empty((n_features, mapper.missing_code + 1, N_HIST_FIELDS), np.float64),  # hist
            np.empty(n_samples, np.int8),  # yh
            np.empty((n_blocks(n_samples), 4), np.float64),  # block_sums
            np.zeros(N_SUMS, np.float64),  # sums
            np.empty(n_features, np.float64),  # fvalue
            np.empty(n_features, np.int64),  # fbin
            np.empty(n_features, np.int64),  # fmissing_left
        )
        self.initial_cost_ = float(np.exp(rule.log_cost(0.0, 1.0, state[STATE_N], params)))
        chunk = _PROGRESS_CHUNK if self.verbose else _CHUNK
        done = 0
        start = time.perf_counter()
        while done < T:
            stop_at = min(T, done + chunk)
            if stop_at > irec.shape[0]:  # grow the record (a huge n_estimators costs nothing up front)
                capacity = min(T, max(stop_at, 2 * irec.shape[0]))
                irec = np.concatenate([irec, np.zeros((capacity - irec.shape[0], N_IREC), np.int64)])
                frec = np.concatenate([frec, np.zeros((capacity - frec.shape[0], N_FREC), np.float64)])
            kept, stopped = boost(
                codes, y_idx, p, mapper.n_value_bins_, mapper.missing_code, mapper.thresholds_,
                CRITERIA[self.criterion], rule.transform, rule.step, rule.stop, rule.log_cost, params,
                w, *scratch, state, done, stop_at, irec, frec,
            )
            done += kept
            if self.verbose:
                cost = np.exp(frec[done - 1, R_LOG_COST]) if done else self.initial_cost_
                print(f"[{type(self).__name__}] round {done}/{T}  cost {cost:.6g}  "
                      f"{time.perf_counter() - start:.2f} s", flush=True)
            if stopped:
                break
        return irec[:done], frec[:done]

    def _set_rounds(self, irec, frec):
        rounds = np.empty(irec.shape[0], dtype=ROUND_DTYPE)
        for name, col in (("feature", R_FEATURE), ("bin", R_BIN), ("missing_left", R_MISSING_LEFT),
                          ("left", R_LEFT), ("right", R_RIGHT)):
            rounds[name] = irec[:, col]
        for name, col in (("threshold", R_THRESHOLD), ("alpha", R_ALPHA), ("error", R_ERROR),
                          ("learner_error", R_LEARNER_ERROR), ("log_cost", R_LOG_COST)):
            rounds[name] = frec[:, col]
        rounds["cost"] = np.exp(rounds["log_cost"])
        self.rounds_ = rounds
        self.n_estimators_ = rounds.shape[0]
        self.estimator_weights_ = rounds["alpha"].copy()
        self.estimator_errors_ = rounds["error"].copy()
        if self.n_estimators_ == 0:
            import warnings
            warnings.warn(
                f"{type(self).__name__}: no weak hypothesis did better than chance on the training "
                "weights; the ensemble is empty and predicts the first class.", UserWarning, stacklevel=3)

    # ------------------------------------------------------------------ fitted quantities
    @property
    def feature_importances_(self):
        """Sum of the step sizes of the (non-constant) stumps on each feature, normalised to 1."""
        check_is_fitted(self)
        r = self.rounds_
        split = r["left"] != r["right"]
        imp = np.bincount(r["feature"][split], weights=np.abs(r["alpha"][split]),
                          minlength=self.n_features_in_).astype(np.float64)
        total = imp.sum()
        return imp / total if total > 0 else imp

    def _ensemble_arrays(self):
        r = self.rounds_
        return tuple(np.ascontiguousarray(r[name]) for name in
                     ("feature", "threshold", "missing_left", "left", "right", "alpha"))

    def _check_predict_X(self, X):
        check_is_fitted(self)
        X = v.check_X(X, type(self).__name__)
        validate_data(self, X=X, reset=False, skip_check_array=True)
        return v.as_float_array(X)

    # ------------------------------------------------------------------ prediction
    def decision_function(self, X):
        """Ensemble margin F(x) = sum_t alpha_t h_t(x); positive means ``classes_[1]``."""
        X = self._check_predict_X(X)
        out = np.empty(X.shape[0], dtype=np.float64)
        with n_threads(self.n_jobs):
            _decision_kernel(X, *self._ensemble_arrays(), out)
        return out

    def staged_decision_function(self, X):
        """Margins after each kept round; the last equals ``decision_function(X)``."""
        X = self._check_predict_X(X)
        margin = np.zeros(X.shape[0], dtype=np.float64)
        feature, threshold, missing_left, left, right, alpha = self._ensemble_arrays()
        for t in range(self.n_estimators_):
            with n_threads(self.n_jobs):
                add_stump(X, feature[t], threshold[t], missing_left[t], left[t], right[t], alpha[t], margin)
            yield margin.copy()

    def _margin_to_label(self, margin):
        return self.classes_[(margin > 0).astype(np.intp)]

    @staticmethod
    def _margin_to_proba(margin):
        p1 = expit(2.0 * margin)
        return np.column_stack([1.0 - p1, p1])

    def predict(self, X):
        """``classes_[1]`` where F(x) > 0, else ``classes_[0]`` (sgn(0) = -1)."""
        return self._margin_to_label(self.decision_function(X))

    def predict_proba(self, X):
        """[1 - q, q] with q = 1 / (1 + exp(-2 F(x))), the exponential loss's link."""
        return self._margin_to_proba(self.decision_function(X))

    def predict_log_proba(self, X):
        return np.log(self.predict_proba(X))

    def staged_predict(self, X):
        for margin in self.staged_decision_function(X):
            yield self._margin_to_label(margin)

    def staged_predict_proba(self, X):
        for margin in self.staged_decision_function(X):
            yield self._margin_to_proba(margin)

    def staged_score(self, X, y, sample_weight=None):
        """Accuracy after each kept round."""
        from sklearn.metrics import accuracy_score

        for pred in self.staged_predict(X):
            yield accuracy_score(y, pred, sample_weight=sample_weight)

    def __sklearn_is_fitted__(self):
        return hasattr(self, "rounds_")

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.classifier_tags.multi_class = False
        return tags


class AdaBoostClassifier(_BaseBoostClassifier):
    """Discrete AdaBoost with histogram decision stumps.

    Each round the stump minimising the weighted error (or the weighted Gini
    impurity with ``criterion="gini"``) on the boosting weights w is added with
    alpha = 1/2 log(W_I / W_J); boosting stops early when alpha <= 0 or after a
    perfect stump. The exponential loss sum_i exp(-y_i F(x_i)) decreases every
    round (``rounds_["cost"]``).

    Parameters
    ----------
    n_estimators : int >= 1, maximum number of rounds.
    criterion : "error" (default) or "gini".
    max_bins : int in [2, 255], bins per feature (a further bin holds missing values).
    n_jobs : threads for fit and predict (None: all); results do not depend on it.
    random_state : seeds the binning subsample (used above 200 000 rows).
    verbose : int, print progress every 10 rounds when > 0.
    """

    _algorithm = "adaboost"

    def __init__(self, n_estimators=50, *, criterion="error", max_bins=MAX_BINS, n_jobs=None,
                 random_state=None, verbose=0):
        self.n_estimators = n_estimators
        self.criterion = criterion
        self.max_bins = max_bins
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose


class VadaBoostClassifier(_BaseBoostClassifier):
    """VadaBoost (Shivaswamy & Jebara, NeurIPS 2011): variance-penalised boosting.

    The stump learner sees u = lam * n * w**2 + (1 - lam) * w (w sums to 1) and
    alpha = 1/4 log(U_I / U_J). The cost (1 - lam) S1**2 + lam n S2, with
    S1 = sum_i exp(-y_i F(x_i)) and S2 = sum_i exp(-2 y_i F(x_i)), strictly decreases
    every round (``rounds_["cost"]``). lam = 0 squares AdaBoost's loss (with half its steps).
    With sample weights, n w**2 becomes w**2 / p for the sample-weight distribution p.

    Parameters
    ----------
    lam : float in [0, 1], the variance penalty.
    Other parameters as :class:`AdaBoostClassifier`.
    """

    _algorithm = "vadaboost"

    def __init__(self, n_estimators=50, *, lam=0.5, criterion="error", max_bins=MAX_BINS, n_jobs=None,
                 random_state=None, verbose=0):
        self.n_estimators = n_estimators
        self.lam = lam
        self.criterion = criterion
        self.max_bins = max_bins
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    def _check_params(self):
        super()._check_params()
        v.check_real(self.lam, "lam", 0.0, 1.0)

    def _rule_params(self):
        return np.array([float(self.lam)], dtype=np.float64)
