"""scikit-learn estimators: validate, pick the rule, run the one compiled loop, wrap the result."""
import time

import numpy as np
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from . import _validation as v
from ._algorithms import PENALTIES, RULES, SCHEDULES, quad_penalty
from ._binning import BinMapper
from ._config import n_threads
from ._kernels.loop import get_boost
from ._kernels.predict import add_stump, decision_function as _decision_kernel
from ._kernels.reweight import add_voter, get_reweight
from ._kernels.update import n_blocks, update_validation
from ._types import CRITERIA, CRITERION_EB, MAX_BINS, N_FREC, N_HIST_FIELDS, N_IREC, N_OPTS, N_STATE, N_SUMS
from ._types import OPT_ADDITIVE, OPT_CRITERION, OPT_FEATURE_RANK, OPT_PATIENCE, OPT_USE_Q, R_ALPHA, R_BIN
from ._types import R_EDGE, R_ERROR, R_FEATURE, R_LEARNER_ERROR, R_LEFT, R_LOG_COST, R_MISSING_LEFT, R_RIGHT
from ._types import R_THRESHOLD, R_VAL_ERROR, STATE_BEST_T, STATE_BEST_VAL, STATE_N, STATE_PENALTY
from ._types import STOPPED_BY_RULE, STOPPED_EARLY, Y_DTYPE

#: One record per kept round: the fitted ensemble, as a plain structured array.
ROUND_DTYPE = np.dtype([
    ("feature", np.int64),        # feature index of the stump
    ("bin", np.int64),            # left side is bin code <= bin
    ("threshold", np.float64),    # left side is x <= threshold (raw value)
    ("missing_left", np.int64),   # 1 if NaN goes left
    ("left", np.int64),           # output on the left side (-1 or +1)
    ("right", np.int64),          # output on the right side; the polarity (equal to left: constant)
    ("alpha", np.float64),        # step size (QuadBoost: the voter's final weight)
    ("error", np.float64),        # weighted error under the boosting weights (sum 1); NaN for QuadBoost
    ("learner_error", np.float64),  # weighted error under the weights the learner saw
    ("edge", np.float64),         # U_I - U_J under the learner's weights (QuadBoost: g = <h, r>)
    ("cost", np.float64),         # the algorithm's cost after the round
    ("log_cost", np.float64),     # its log (the cost itself underflows to 0 after many rounds)
    ("val_error", np.float64),    # weighted validation error after the round (NaN without one)
])

_CHUNK = 64  # rounds per compiled call: Python handles Ctrl-C and grows the record in between
_PROGRESS_CHUNK = 10


def _take_rows(X, rows):
    return X.iloc[rows] if v.is_dataframe(X) else X[rows]


class _BaseBoostClassifier(ClassifierMixin, BaseEstimator):
    """Shared fit/predict for stump boosting; subclasses name their rule and its parameters."""

    _algorithm = None

    def _rule_params(self):
        return np.zeros(1, dtype=np.float64)

    def _criterion_code(self):
        return CRITERIA[self.criterion]

    def _check_params(self):
        v.check_int(self.n_estimators, "n_estimators", 1)
        v.check_int(self.max_bins, "max_bins", 2, MAX_BINS)
        if "criterion" in self.get_params() and self.criterion not in CRITERIA:
            raise ValueError(f"criterion must be one of {sorted(CRITERIA)}, got {self.criterion!r}.")
        v.check_int(self.feature_rank, "feature_rank", 1)
        if self.n_jobs is not None:
            v.check_int(self.n_jobs, "n_jobs", -(2 ** 31))
            if self.n_jobs == 0:
                raise ValueError("n_jobs must be a positive int, a negative int (as in joblib) or None; got 0.")
        v.check_int(int(self.verbose) if isinstance(self.verbose, bool) else self.verbose, "verbose", 0)
        check_random_state(self.random_state)  # raises ValueError for anything but None, an int or a generator
        if self.validation_fraction is not None:
            v.check_real(self.validation_fraction, "validation_fraction", 0.0, 1.0)
            if not 0.0 < self.validation_fraction < 1.0:
                raise ValueError(f"validation_fraction must be in (0, 1) or None, got {self.validation_fraction}.")
        if self.n_iter_no_change is not None:
            v.check_int(self.n_iter_no_change, "n_iter_no_change", 1)

    # ------------------------------------------------------------------ fit
    def fit(self, X, y, sample_weight=None, eval_set=None):
        """Fit the boosted ensemble.

        X: array-like (n_samples, n_features): NumPy array (float32/float64/int,
        C or F order, memmap) or DataFrame of numeric columns; NaN marks a missing value.
        y: two class labels of any kind. sample_weight: non-negative, not all zero.
        eval_set: (X_val, y_val) or (X_val, y_val, sample_weight_val), a validation
        set (alternatively ``validation_fraction`` holds out a stratified part of X).
        With a validation set the model keeps the round with the lowest validation
        error (the first, among equals), and ``n_iter_no_change`` stops boosting
        after that many rounds without a new best. Validation margins are updated
        inside the compiled loop, round by round.
        """
        self._check_params()
        name = type(self).__name__
        X = v.check_X(X, name)
        n_samples = X.shape[0]
        y = v.check_y(y, n_samples, name)
        classes, y_idx = np.unique(y, return_inverse=True)
        if classes.shape[0] < 2:
            raise ValueError(f"{name} needs samples of at least 2 classes in y; got 1 class ({classes[0]!r}).")
        if classes.shape[0] > 2:
            raise ValueError(
                "Only binary classification is supported. The type of the target is multiclass: "
                f"y has {classes.shape[0]} classes, and {name} takes two (multiclass "
                "support is planned)."
            )
        sw = v.check_sample_weight(sample_weight, n_samples)
        X, y_idx, sw, val = self._validation_split(X, y_idx, sw, classes, eval_set)
        p = v.as_distribution(sw)
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
            if val is not None:
                val = (mapper.transform(val[0]), val[1], val[2])
            t1 = time.perf_counter()
            irec, frec = self._boost(codes, y_idx, p, mapper, val)
        self.bin_time_ = t1 - t0
        self.fit_time_ = time.perf_counter() - t0
        self._set_rounds(irec, frec)
        return self

    def _validation_split(self, X, y_idx, sw, classes, eval_set):
        """(X_train, y_train, sw_train, (X_val, y_val_idx uint8, p_val) or None), all checked."""
        name = type(self).__name__
        if eval_set is not None and self.validation_fraction is not None:
            raise ValueError("Pass either eval_set or validation_fraction, not both.")
        if eval_set is None and self.validation_fraction is None:
            if self.n_iter_no_change is not None:
                raise ValueError("n_iter_no_change needs a validation set: pass eval_set=(X_val, y_val) to fit "
                                 "or set validation_fraction.")
            return X, y_idx, sw, None
        if eval_set is not None:
            if not isinstance(eval_set, (tuple, list)) or len(eval_set) not in (2, 3):
                raise TypeError("eval_set must be a tuple (X_val, y_val) or (X_val, y_val, sample_weight_val).")
            Xv = v.check_X(eval_set[0], name)
            if Xv.shape[1] != X.shape[1]:
                raise ValueError(f"eval_set's X has {Xv.shape[1]} features, but X has {X.shape[1]}.")
            yv = v.check_y(eval_set[1], Xv.shape[0], name)
            unknown = np.setdiff1d(np.unique(yv), classes)
            if unknown.size:
                raise ValueError(f"eval_set's y has labels not in the training y: {unknown[:5].tolist()}.")
            yv_idx = np.searchsorted(classes, yv)
            swv = v.check_sample_weight(eval_set[2] if len(eval_set) == 3 else None, Xv.shape[0])
            return X, y_idx, sw, (Xv, yv_idx.astype(Y_DTYPE), v.as_distribution(swv))
        from sklearn.model_selection import train_test_split

        rows = np.arange(X.shape[0])
        try:
            tr, va = train_test_split(rows, test_size=self.validation_fraction, stratify=y_idx,
                                      random_state=check_random_state(self.random_state).randint(2 ** 31 - 1)
                                      if self.random_state is not None else None)
        except ValueError as e:
            raise ValueError(f"validation_fraction={self.validation_fraction} cannot hold out a stratified "
                             f"validation set from {X.shape[0]} samples: {e}") from None
        tr.sort()
        va.sort()
        if not (np.any(sw[tr] > 0) and np.any(sw[va] > 0)):
            raise ValueError("validation_fraction left no positive sample weight on one side of the split.")
        return (_take_rows(X, tr), y_idx[tr], sw[tr],
                (_take_rows(X, va), y_idx[va].astype(Y_DTYPE), v.as_distribution(sw[va])))

    def _options(self, rule, patience):
        opts = np.zeros(N_OPTS, dtype=np.int64)
        opts[OPT_CRITERION] = self._criterion_code()
        opts[OPT_FEATURE_RANK] = self.feature_rank
        opts[OPT_ADDITIVE] = int(rule.additive)
        opts[OPT_USE_Q] = int(rule.use_q)
        opts[OPT_PATIENCE] = patience
        return opts

    def _reweight_every(self):
        return None

    def _boost(self, codes, y_idx, p, mapper, val):
        """Run the one compiled loop in chunks of rounds; return the (integer, float) round records."""
        boost = get_boost()
        rule = RULES[self._algorithm]
        params = self._rule_params()
        n_features, n_samples = codes.shape
        n_bins = mapper.missing_code + 1
        # multiplicative rules keep the weights w (sum 1); the additive one the residuals r = y - F
        w = (2.0 * y_idx - 1.0) if rule.additive else p.copy()
        state = np.zeros(N_STATE, dtype=np.float64)
        state[STATE_N] = np.count_nonzero(p)
        state[STATE_BEST_VAL] = np.inf
        if val is None:
            vcodes, vy, vp = np.empty((n_features, 0), np.uint8), np.empty(0, np.uint8), np.empty(0)
        else:
            vcodes, vy, vp = val
        vmargin = np.zeros(vy.shape[0], dtype=np.float64)
        opts = self._options(rule, self.n_iter_no_change or 0)
        T = self.n_estimators
        capacity = min(T, 4 * _CHUNK)
        irec = np.zeros((capacity, N_IREC), dtype=np.int64)
        frec = np.zeros((capacity, N_FREC), dtype=np.float64)
        scratch = (
            np.empty(n_samples, np.float64),  # u
            np.empty(n_samples if rule.use_q else 0, np.float64),  # q
            y_idx.copy(),  # ylab
            np.empty((n_features, n_bins, N_HIST_FIELDS), np.float64),  # hist
            np.empty((n_features, n_bins if rule.use_q else 1, N_HIST_FIELDS), np.float64),  # histq
            np.empty(n_samples, np.int8),  # yh
            np.empty((n_blocks(n_samples), 4), np.float64),  # block_sums
            np.zeros(N_SUMS, np.float64),  # sums
            np.empty(n_features, np.float64),  # fvalue
            np.empty(n_features, np.int64),  # fbin
            np.empty(n_features, np.int64),  # fmissing_left
        )
        vblock_sums = np.empty((n_blocks(vy.shape[0]), 4), np.float64)
        self.initial_cost_ = float(np.exp(rule.cost(state.copy(), 0.0, 1.0, 1.0, params)))
        every = self._reweight_every()
        chunk = _PROGRESS_CHUNK if self.verbose else _CHUNK
        done = 0
        why = 0
        start = time.perf_counter()
        while done < T:
            stop_at = min(T, done + chunk)
            if every:
                stop_at = min(stop_at, (done // every + 1) * every)
            if stop_at > irec.shape[0]:  # grow the record (a huge n_estimators costs nothing up front)
                capacity = min(T, max(stop_at, 2 * irec.shape[0]))
                irec = np.concatenate([irec, np.zeros((capacity - irec.shape[0], N_IREC), np.int64)])
                frec = np.concatenate([frec, np.zeros((capacity - frec.shape[0], N_FREC), np.float64)])
            kept, why = boost(
                codes, y_idx, p, mapper.n_value_bins_, mapper.missing_code, mapper.thresholds_, opts,
                rule.transform, rule.step, rule.stop, rule.cost, params,
                w, *scratch, state, vcodes, vy, vp, vmargin, vblock_sums, done, stop_at, irec, frec,
            )
            done += kept
            if every and why == 0 and done % every == 0 and done < T:
                self._reweight(codes, mapper.missing_code, irec, frec, done, w, p, params, state,
                               (vcodes, vy, vp, vmargin, vblock_sums))
            if self.verbose:
                cost = np.exp(frec[done - 1, R_LOG_COST]) if done else self.initial_cost_
                verr = f"  validation error {frec[done - 1, R_VAL_ERROR]:.4f}" if done and val is not None else ""
                print(f"[{type(self).__name__}] round {done}/{T}  cost {cost:.6g}{verr}  "
                      f"{time.perf_counter() - start:.2f} s", flush=True)
            if why != 0:
                break
        self.stopped_early_ = why == STOPPED_EARLY
        self.stopped_by_rule_ = why == STOPPED_BY_RULE
        irec, frec = irec[:done], frec[:done]
        if val is not None:
            self.validation_errors_ = frec[:, R_VAL_ERROR].copy()
            best = int(state[STATE_BEST_T])
            irec, frec = irec[:best], frec[:best]
        return self._finish(codes, mapper, y_idx, p, params, irec, frec)

    def _finish(self, codes, mapper, y_idx, p, params, irec, frec):
        """Hook after the loop (QuadBoost re-weights its voters here)."""
        return irec, frec

    def _set_rounds(self, irec, frec):
        rounds = np.empty(irec.shape[0], dtype=ROUND_DTYPE)
        for name, col in (("feature", R_FEATURE), ("bin", R_BIN), ("missing_left", R_MISSING_LEFT),
                          ("left", R_LEFT), ("right", R_RIGHT)):
            rounds[name] = irec[:, col]
        for name, col in (("threshold", R_THRESHOLD), ("alpha", R_ALPHA), ("error", R_ERROR),
                          ("learner_error", R_LEARNER_ERROR), ("edge", R_EDGE), ("log_cost", R_LOG_COST),
                          ("val_error", R_VAL_ERROR)):
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
        with np.errstate(divide="ignore"):  # log 0 = -inf (QuadBoost's clipped probabilities)
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


_COMMON_DOC = """
    n_estimators : int >= 1, maximum number of rounds.
    max_bins : int in [2, 255], bins per feature (a further bin holds missing values).
    feature_rank : int >= 1, use the k-th best feature's best stump (1: the best; "lazy"
        stumps for k >= 2, spec §4: features ranked by their best split's criterion, ties by
        index; k beyond the number of features that can split uses the last of them).
    validation_fraction : float in (0, 1) or None; hold out this stratified fraction of the
        training rows as the validation set (alternative: ``fit(..., eval_set=...)``).
    n_iter_no_change : int >= 1 or None; with a validation set, stop after this many rounds
        without a new lowest validation error (the papers use 100). With a validation set the
        model keeps the best round either way.
    n_jobs : threads for fit and predict (None: all); results do not depend on it.
    random_state : seeds the binning subsample (used above 200 000 rows) and the validation split.
    verbose : int, print progress every 10 rounds when > 0.
"""


class AdaBoostClassifier(_BaseBoostClassifier):
    __doc__ = """Discrete AdaBoost with histogram decision stumps (spec §1).

    Each round the stump minimising the weighted error (or the weighted Gini
    impurity with ``criterion="gini"``) on the boosting weights w is added with
    alpha = 1/2 log(W_I / W_J); boosting stops early when alpha <= 0 or after a
    perfect stump. The exponential loss sum_i exp(-y_i F(x_i)) decreases every
    round (``rounds_["cost"]``).

    Parameters
    ----------
    criterion : "error" (default) or "gini".""" + _COMMON_DOC

    _algorithm = "adaboost"

    def __init__(self, n_estimators=50, *, criterion="error", max_bins=MAX_BINS, feature_rank=1,
                 validation_fraction=None, n_iter_no_change=None, n_jobs=None, random_state=None, verbose=0):
        self.n_estimators = n_estimators
        self.criterion = criterion
        self.max_bins = max_bins
        self.feature_rank = feature_rank
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose


class LazyBoostClassifier(AdaBoostClassifier):
    __doc__ = """AdaBoost with sub-optimal "lazy" stumps (Sardana & Birodkar; spec §4).

    Each round ranks the features by their best stump's weighted error and uses the
    ``feature_rank``-th best one (default 2; 1 is plain AdaBoost). Its edge never
    exceeds the best stump's; alpha = 1/2 log(W_I / W_J) as AdaBoost. Tie-breaking by
    feature index and the rule for k beyond the number of features are [R].

    Parameters
    ----------
    criterion : "error" (default) or "gini".""" + _COMMON_DOC

    def __init__(self, n_estimators=50, *, feature_rank=2, criterion="error", max_bins=MAX_BINS,
                 validation_fraction=None, n_iter_no_change=None, n_jobs=None, random_state=None, verbose=0):
        super().__init__(n_estimators, criterion=criterion, max_bins=max_bins, feature_rank=feature_rank,
                         validation_fraction=validation_fraction, n_iter_no_change=n_iter_no_change,
                         n_jobs=n_jobs, random_state=random_state, verbose=verbose)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # by design it never uses the best feature: on two features only the weaker one
        tags.classifier_tags.poor_score = True
        return tags


class VadaBoostClassifier(_BaseBoostClassifier):
    __doc__ = """VadaBoost (Shivaswamy & Jebara, NeurIPS 2011): variance-penalised boosting (spec §2).

    The stump learner sees u = lam * n * w**2 + (1 - lam) * w (w sums to 1) and
    alpha = 1/4 log(U_I / U_J). The cost (1 - lam) S1**2 + lam n S2, with
    S1 = sum_i exp(-y_i F(x_i)) and S2 = sum_i exp(-2 y_i F(x_i)), strictly decreases
    every round (``rounds_["cost"]``). lam = 0 squares AdaBoost's loss (with half its steps).
    With sample weights, n w**2 becomes w**2 / p for the sample-weight distribution p.

    Parameters
    ----------
    lam : float in [0, 1], the variance penalty.
    criterion : "error" (default) or "gini".""" + _COMMON_DOC

    _algorithm = "vadaboost"

    def __init__(self, n_estimators=50, *, lam=0.5, criterion="error", max_bins=MAX_BINS, feature_rank=1,
                 validation_fraction=None, n_iter_no_change=None, n_jobs=None, random_state=None, verbose=0):
        self.n_estimators = n_estimators
        self.lam = lam
        self.criterion = criterion
        self.max_bins = max_bins
        self.feature_rank = feature_rank
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    def _check_params(self):
        super()._check_params()
        v.check_real(self.lam, "lam", 0.0, 1.0)

    def _rule_params(self):
        return np.array([float(self.lam)], dtype=np.float64)


class EBBoostClassifier(_BaseBoostClassifier):
    __doc__ = """EBBoost (Shivaswamy & Jebara, AISTATS 2010): empirical-Bernstein boosting (spec §3).

    Each round searches all stumps (features, bin thresholds, missing side and both
    polarities) exactly for the smallest V* = 2 sqrt(A B) + 2 (1 - lam) W_I W_J, with
    A = (1 - lam) W_I**2 + lam n Q_I and B likewise on the errors (Q: sums of w**2;
    with sample weights n w**2 becomes w**2 / p), and adds it with
    alpha = 1/4 log(A / B). This minimises the cost (1 - lam) S1**2 + lam n S2 jointly
    over the stump and its step, so the cost never increases (``rounds_["cost"]``).
    lam = 0 gives AdaBoost's stump and step. The histograms carry per-class sums of w
    and w**2. Stumps only: the search enumerates the learners. Stopping when the best
    alpha is 0 is [R].

    Parameters
    ----------
    lam : float >= 0, the variance penalty (values above 1 are allowed).""" + _COMMON_DOC

    _algorithm = "ebboost"

    def __init__(self, n_estimators=50, *, lam=0.5, max_bins=MAX_BINS, feature_rank=1, validation_fraction=None,
                 n_iter_no_change=None, n_jobs=None, random_state=None, verbose=0):
        self.n_estimators = n_estimators
        self.lam = lam
        self.max_bins = max_bins
        self.feature_rank = feature_rank
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    def _check_params(self):
        super()._check_params()
        v.check_real(self.lam, "lam", 0.0, np.inf)

    def _criterion_code(self):
        return CRITERION_EB

    def _rule_params(self):
        return np.array([float(self.lam)], dtype=np.float64)


class SABoostClassifier(_BaseBoostClassifier):
    __doc__ = """SABoost (Tsao & Chang, CSDA 2007): boosting with stochastic-approximation step sizes (spec §5).

    The stump learner sees weights w proportional to exp(-y F(x)) (as AdaBoost), and
    the ensemble grows by F <- F + a_t h_t with a deterministic schedule a_t instead
    of a line search; there is no alpha <= 0 break (boosting stops only if the best
    stump's weighted error reaches 1/2). Small steps narrow the gap between training
    and test error; large ones overfit.

    **The schedule is a reconstruction [R]**: the paper's formula could not be read.
    The default a_t = gamma / t (Robbins-Monro's canonical choice; it satisfies
    sum a_t = inf, sum a_t**2 < inf for every gamma > 0) fits the trend of the paper's
    tables; ``schedule="power"`` (a_t = t**-gamma) and ``"constant"`` (a_t = gamma)
    are offered so other readings can be tested. No monotone quantity is guaranteed:
    the exponential loss falls at round t iff a_t < log((1 - eps_t) / eps_t).

    Parameters
    ----------
    gamma : float > 0, the schedule's scale (the paper's tables use 0.5, 1.0, 1.5).
    schedule : "inverse" (default, gamma / t), "power" (t ** -gamma) or "constant" (gamma).
    criterion : "error" (default) or "gini".""" + _COMMON_DOC

    _algorithm = "saboost"

    def __init__(self, n_estimators=50, *, gamma=1.0, schedule="inverse", criterion="error", max_bins=MAX_BINS,
                 feature_rank=1, validation_fraction=None, n_iter_no_change=None, n_jobs=None, random_state=None,
                 verbose=0):
        self.n_estimators = n_estimators
        self.gamma = gamma
        self.schedule = schedule
        self.criterion = criterion
        self.max_bins = max_bins
        self.feature_rank = feature_rank
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    def _check_params(self):
        super()._check_params()
        v.check_real(self.gamma, "gamma", 0.0, np.inf)
        if not self.gamma > 0:
            raise ValueError(f"gamma must be > 0, got {self.gamma}.")
        if self.schedule not in SCHEDULES:
            raise ValueError(f"schedule must be one of {sorted(SCHEDULES)}, got {self.schedule!r}.")

    def _rule_params(self):
        return np.array([float(self.gamma), float(SCHEDULES[self.schedule])], dtype=np.float64)


class QuadBoostClassifier(_BaseBoostClassifier):
    __doc__ = """QuadBoost (Fortier-Dubois et al., arXiv 1506.02535): boosting the quadratic risk (spec §6).

    F = sum_j alpha_j h_j is fitted to the labels y in {-1, +1} by the quadratic risk
    R = sum_i p_i (y_i - F(x_i))**2 (p: sample-weight distribution, 1/m without weights).
    Each round the learner is handed the residuals r = y - F as a weighted
    classification (labels sign r, weights p |r|), whose best stump maximises
    g = <h, r>_p; its weight follows the variant:

    - ``penalty=None`` (vanilla): alpha = g;
    - ``"l1"``: objective R + 2 lam ||alpha||_1, alpha = sign(g) max(|g| - lam, 0); boosting
      stops when no stump has |g| > lam;
    - ``"l2"``: objective R + lam ||alpha||_2**2 (the squared norm), alpha = g / (1 + lam);
    - ``"linf"``: R with |alpha_j| <= alpha_max, alpha = clip(g, -alpha_max, alpha_max).

    No per-example exponential weights. Every ``reweight_every`` rounds (if set) and
    once at the end, one coordinate-descent pass re-fits each kept voter's weight by
    the same rule (the objective never increases); voters whose weight becomes 0
    (L1) are dropped. The re-weighting schedule is [R] (the paper says "occasionally").
    Prediction is sgn F with sgn(0) = -1; ``predict_proba`` is clip((1 + F) / 2, 0, 1).
    Use ``criterion="error"`` (default) for the exact reduction.

    Parameters
    ----------
    penalty : None, "l1", "l2" or "linf".
    lam : float >= 0, the L1 / L2 regularisation strength (ignored otherwise).
    alpha_max : float > 0, the L-inf box (ignored otherwise).
    reweight_every : int >= 1 or None, rounds between re-weighting passes.
    reweight_at_end : bool, a last re-weighting pass after boosting (default True).
    criterion : "error" (default) or "gini".""" + _COMMON_DOC

    _algorithm = "quadboost"

    def __init__(self, n_estimators=50, *, penalty=None, lam=0.0, alpha_max=1.0, reweight_every=None,
                 reweight_at_end=True, criterion="error", max_bins=MAX_BINS, feature_rank=1,
                 validation_fraction=None, n_iter_no_change=None, n_jobs=None, random_state=None, verbose=0):
        self.n_estimators = n_estimators
        self.penalty = penalty
        self.lam = lam
        self.alpha_max = alpha_max
        self.reweight_every = reweight_every
        self.reweight_at_end = reweight_at_end
        self.criterion = criterion
        self.max_bins = max_bins
        self.feature_rank = feature_rank
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    def _check_params(self):
        super()._check_params()
        if self.penalty not in PENALTIES:
            raise ValueError(f"penalty must be None, 'l1', 'l2' or 'linf', got {self.penalty!r}.")
        v.check_real(self.lam, "lam", 0.0, np.inf)
        v.check_real(self.alpha_max, "alpha_max", 0.0, np.inf)
        if not self.alpha_max > 0:
            raise ValueError(f"alpha_max must be > 0, got {self.alpha_max}.")
        if self.reweight_every is not None:
            v.check_int(self.reweight_every, "reweight_every", 1)
        if not isinstance(self.reweight_at_end, (bool, np.bool_)):
            raise TypeError(f"reweight_at_end must be a bool, got {self.reweight_at_end!r}.")

    def _rule_params(self):
        return np.array([float(self.lam), float(PENALTIES[self.penalty]), float(self.alpha_max)], dtype=np.float64)

    def _reweight_every(self):
        return self.reweight_every

    def _reweight(self, codes, missing_code, irec, frec, n_rounds, r, p, params, state, val):
        """One coordinate-descent pass over the kept voters; refreshes the penalty and validation margins."""
        rule = RULES[self._algorithm]
        sums = np.zeros(N_SUMS, np.float64)
        get_reweight()(codes, missing_code, irec, frec, n_rounds, r, p, rule.step, params, sums,
                       np.empty((n_blocks(r.shape[0]), 4), np.float64))
        state[STATE_PENALTY] = sum(quad_penalty(a, params) for a in frec[:n_rounds, R_ALPHA])
        if val is not None:
            vcodes, vy, vp, vmargin, vblock_sums = val
            vmargin[:] = 0.0
            for j in range(n_rounds):
                f, k, ml, left, right = irec[j, [R_FEATURE, R_BIN, R_MISSING_LEFT, R_LEFT, R_RIGHT]]
                if vy.shape[0]:
                    update_validation(vcodes[f], k, ml, missing_code, left, right, frec[j, R_ALPHA], vy, vp,
                                      vmargin, vblock_sums)

    def _finish(self, codes, mapper, y_idx, p, params, irec, frec):
        """Residuals of the kept voters, the final re-weighting pass, zero-weight voters dropped."""
        r = 2.0 * y_idx - 1.0
        for j in range(irec.shape[0]):
            f, k, ml, left, right = irec[j, [R_FEATURE, R_BIN, R_MISSING_LEFT, R_LEFT, R_RIGHT]]
            add_voter(codes[f], k, ml, mapper.missing_code, left, right, frec[j, R_ALPHA], r)
        irec = np.ascontiguousarray(irec)
        frec = np.ascontiguousarray(frec)
        if self.reweight_at_end and irec.shape[0]:
            state = np.zeros(N_STATE)
            self._reweight(codes, mapper.missing_code, irec, frec, irec.shape[0], r, p, params, state, None)
        keep = frec[:, R_ALPHA] != 0.0
        irec, frec = irec[keep], frec[keep]
        self.objective_ = float(np.dot(p, r * r) + sum(quad_penalty(a, params) for a in frec[:, R_ALPHA]))
        return irec, frec

    def _margin_to_proba(self, margin):
        p1 = np.clip((1.0 + margin) / 2.0, 0.0, 1.0)
        return np.column_stack([1.0 - p1, p1])
