"""scikit-learn estimators: validate, pick the rule, run the one compiled loop, wrap the result."""
import time

import numba
import numpy as np
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from . import _validation as v
from ._algorithms import PENALTIES, RULES, SCHEDULES, quad_penalty
from ._binning import BinMapper
from ._config import n_threads
from ._kernels.histogram import n_feature_groups
from ._kernels.loop import get_boost
from ._kernels.predict import add_stump, add_trees, decision_function as _decision_kernel
from ._kernels.reweight import add_voter, get_reweight
from ._kernels.tree import update_validation_tree
from ._kernels.update import n_blocks, update_validation
from ._types import CRITERIA, CRITERION_EB, CRITERION_Z, FOPT_LEAF_SCALE, FOPT_LEAF_SMOOTHING
from ._types import FOPT_MIN_WEIGHT_LEAF, LEAF_KINDS, MAX_BINS, N_BIN, N_CLASS, N_FEATURE, N_FOPTS, N_FREC, N_GAIN
from ._types import N_HIST_FIELDS, N_IREC, N_LEFT, N_MISSING_LEFT, N_NODE_F, N_NODE_I, N_OPTS, N_RIGHT, N_STATE
from ._types import N_SUMS, N_THRESHOLD, N_VALUE, N_WEIGHT, OPT_LEAF, OPT_MAX_DEPTH, OPT_MIN_SAMPLES_LEAF
from ._types import CRITERION_LS, LEAF_LSQ, OPT_HIST_GROUPS, OPT_N_CLASSES, OPT_NEED_S2, OPT_U_IS_W
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

#: Tree nodes, one row of ``nodes_`` per kept round (``max_depth`` > 1, ``leaf="real"`` or K > 2 classes).
NODE_DTYPE = np.dtype([
    ("feature", np.int64),       # split feature (internal nodes; -1 at leaves)
    ("bin", np.int64),           # left is bin code <= bin
    ("threshold", np.float64),   # left is x <= threshold (raw value)
    ("missing_left", np.int64),  # 1 if NaN goes left
    ("left", np.int64),          # index of the left child in the same tree; -1 at a leaf (and unused slots)
    ("right", np.int64),         # index of the right child
    ("class_", np.int64),        # leaf: index into classes_ of the class it names
    ("value", np.float64),       # leaf output (binary: -1 / +1, or the confidence-rated value)
    ("gain", np.float64),        # internal node: decrease of the split criterion
    ("weight", np.float64),      # learner weight of the node's rows
])
_NODE_I_FIELDS = (("feature", N_FEATURE), ("bin", N_BIN), ("missing_left", N_MISSING_LEFT), ("left", N_LEFT),
                  ("right", N_RIGHT), ("class_", N_CLASS))
_NODE_F_FIELDS = (("threshold", N_THRESHOLD), ("value", N_VALUE), ("gain", N_GAIN), ("weight", N_WEIGHT))
MAX_DEPTH = 8

_CHUNK = 64  # rounds per compiled call: Python handles Ctrl-C and grows the record in between
_PROGRESS_CHUNK = 10


def _take_rows(X, rows):
    return X.iloc[rows] if v.is_dataframe(X) else X[rows]


class _BaseBoostClassifier(ClassifierMixin, BaseEstimator):
    """Shared fit/predict for stump boosting; subclasses name their rule and its parameters."""

    _algorithm = None
    _samme = False  # True: K > 2 classes with SAMME in the one loop (discrete leaves); False: one-vs-rest
    _n_classes = 2  # classes the learner of the current fit sees
    _empty_reason = "no weak hypothesis did better than chance on the training weights;"

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
        v.check_int(self.max_depth, "max_depth", 1, MAX_DEPTH)
        v.check_int(self.min_samples_leaf, "min_samples_leaf", 1)
        v.check_real(self.min_weight_fraction_leaf, "min_weight_fraction_leaf", 0.0, 0.5)
        if getattr(self, "leaf", "discrete") not in LEAF_KINDS:
            raise ValueError(f"leaf must be one of {sorted(LEAF_KINDS)}, got {self.leaf!r}.")

    def _tree_depth(self, n_classes):
        """Depth of the tree learner, or 0 for the binary stump fast path."""
        tree = (n_classes > 2 or self.max_depth > 1 or self.min_samples_leaf > 1
                or self.min_weight_fraction_leaf > 0 or getattr(self, "leaf", "discrete") == "real")
        if tree and self.feature_rank != 1:
            raise ValueError("feature_rank > 1 (lazy stumps) works with binary stumps only: use max_depth=1, "
                             "min_samples_leaf=1, min_weight_fraction_leaf=0 and two classes.")
        return self.max_depth if tree else 0

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
        if classes.shape[0] > 2 and not (self._samme and getattr(self, "leaf", "discrete") == "discrete"):
            return self._fit_one_vs_rest(X, y, classes, sample_weight, eval_set)
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
            irec, frec, tree_i, tree_f = self._boost(codes, y_idx, p, mapper, val, classes.shape[0])
        self.bin_time_ = t1 - t0
        self.fit_time_ = time.perf_counter() - t0
        self._set_rounds(irec, frec, tree_i, tree_f)
        return self

    def _fit_one_vs_rest(self, X, y, classes, sample_weight, eval_set):
        """K > 2 classes for the binary algorithms: one model per class against the rest."""
        from sklearn.base import clone

        self._check_params()
        v.check_sample_weight(sample_weight, X.shape[0])
        if eval_set is not None or self.validation_fraction is not None:
            raise ValueError(f"{type(self).__name__} fits {classes.shape[0]} classes one-vs-rest; validation "
                             "early stopping is available for two classes (and for AdaBoost's SAMME).")
        models = []
        t0 = time.perf_counter()
        for c in classes:
            models.append(clone(self).fit(X, np.where(y == c, 1, 0), sample_weight))
        for attr in [a for a in vars(self) if a.endswith("_") and not a.startswith("_")]:
            delattr(self, attr)
        validate_data(self, X=X, reset=True, skip_check_array=True)
        self.classes_ = classes
        self.estimators_ = models
        self.n_estimators_ = sum(m.n_estimators_ for m in models)
        self.fit_time_ = time.perf_counter() - t0
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
        opts[OPT_HIST_GROUPS] = n_feature_groups(self.n_features_in_, numba.get_num_threads())  # speed only
        opts[OPT_U_IS_W] = int(rule.u_is_w)
        opts[OPT_NEED_S2] = int(rule.needs_s2)
        return opts

    def _leaf_scale(self):
        """kappa of confidence-rated leaves (leaf="real"): the step rule's factor."""
        return 0.5

    def _reweight_every(self):
        return None

    def _boost(self, codes, y_idx, p, mapper, val, n_classes):
        """Run the one compiled loop in chunks of rounds; return the round records (irec, frec, tree_i, tree_f)."""
        boost = get_boost()
        rule = RULES[self._algorithm]
        self._n_classes = n_classes
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
        vmargin = np.zeros(vy.shape[0] * (1 if n_classes == 2 else n_classes), dtype=np.float64)
        opts = self._options(rule, self.n_iter_no_change or 0)
        depth = self._tree_depth(n_classes)
        opts[OPT_MAX_DEPTH] = depth
        opts[OPT_MIN_SAMPLES_LEAF] = self.min_samples_leaf
        opts[OPT_N_CLASSES] = n_classes
        leaf = getattr(self, "leaf", "discrete")
        opts[OPT_LEAF] = LEAF_KINDS[leaf]
        if leaf == "real":
            opts[OPT_CRITERION] = CRITERION_Z
        ls = bool(rule.additive and depth)  # QuadBoost's trees: least squares on the residuals
        if ls:
            opts[OPT_CRITERION] = CRITERION_LS
            opts[OPT_LEAF] = LEAF_LSQ
        n_fields = n_classes + 1 + int(ls)
        fopts = np.zeros(N_FOPTS, dtype=np.float64)
        fopts[FOPT_MIN_WEIGHT_LEAF] = self.min_weight_fraction_leaf
        fopts[FOPT_LEAF_SCALE] = self._leaf_scale()
        fopts[FOPT_LEAF_SMOOTHING] = 0.5 / max(1, np.count_nonzero(p))
        max_nodes = 2 ** (depth + 1) - 1 if depth else 1
        slots = 2 ** (depth - 1) if depth else 1
        tree_scratch = (
            np.empty(n_samples if depth else 0, np.int64),  # idx
            np.empty(n_samples if depth else 0, np.int64),  # tmp
            np.empty((slots, n_features, n_bins, n_fields) if depth else (1, 1, 1, 1), np.float64),  # hist_a
            np.empty((slots, n_features, n_bins, n_fields) if depth else (1, 1, 1, 1), np.float64),  # hist_b
            np.empty((max_nodes, 2), np.int64),  # node_range
            np.zeros(n_samples if depth else 0, np.int64),  # leaf_of_row
            np.zeros((max_nodes, n_classes + 1)),  # leaf_u
            np.zeros((max_nodes, n_classes)),  # leaf_w
            np.zeros((max_nodes, 2)),  # factor
        )
        T = self.n_estimators
        capacity = min(T, 4 * _CHUNK)
        irec = np.zeros((capacity, N_IREC), dtype=np.int64)
        frec = np.zeros((capacity, N_FREC), dtype=np.float64)
        tree_i = np.zeros((capacity if depth else 0, max_nodes, N_NODE_I), dtype=np.int64)
        tree_f = np.zeros((capacity if depth else 0, max_nodes, N_NODE_F), dtype=np.float64)
        scratch = (
            np.empty(n_samples, np.float64),  # u
            np.empty(n_samples if (rule.use_q or ls) else 0, np.float64),  # q
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
                more = capacity - irec.shape[0]
                irec = np.concatenate([irec, np.zeros((more, N_IREC), np.int64)])
                frec = np.concatenate([frec, np.zeros((more, N_FREC), np.float64)])
                if depth:
                    tree_i = np.concatenate([tree_i, np.zeros((more, max_nodes, N_NODE_I), np.int64)])
                    tree_f = np.concatenate([tree_f, np.zeros((more, max_nodes, N_NODE_F), np.float64)])
            kept, why = boost(
                codes, y_idx, p, mapper.n_value_bins_, mapper.missing_code, mapper.thresholds_, opts, fopts,
                rule.transform, rule.step, rule.stop, rule.cost, params,
                w, *scratch, state, vcodes, vy, vp, vmargin, vblock_sums, *tree_scratch,
                done, stop_at, irec, frec, tree_i, tree_f,
            )
            done += kept
            if every and why == 0 and done % every == 0 and done < T:
                self._reweight(codes, mapper.missing_code, irec, frec, tree_i[:done], tree_f[:done], done, w, p,
                               params, state, (vcodes, vy, vp, vmargin, vblock_sums))
            if self.verbose:
                cost = np.exp(frec[done - 1, R_LOG_COST]) if done else self.initial_cost_
                verr = f"  validation error {frec[done - 1, R_VAL_ERROR]:.4f}" if done and val is not None else ""
                print(f"[{type(self).__name__}] round {done}/{T}  cost {cost:.6g}{verr}  "
                      f"{time.perf_counter() - start:.2f} s", flush=True)
            if why != 0:
                break
        self.stopped_early_ = why == STOPPED_EARLY
        self.stopped_by_rule_ = why == STOPPED_BY_RULE
        kept = done
        if val is not None:
            self.validation_errors_ = frec[:done, R_VAL_ERROR].copy()
            kept = int(state[STATE_BEST_T])
        irec, frec, tree_i, tree_f = self._finish(codes, mapper, y_idx, p, params, irec[:kept], frec[:kept],
                                                  tree_i[:kept], tree_f[:kept])
        return irec, frec, (tree_i if depth else None), (tree_f if depth else None)

    def _finish(self, codes, mapper, y_idx, p, params, irec, frec, tree_i, tree_f):
        """Hook after the loop (QuadBoost re-weights its voters here)."""
        return irec, frec, tree_i, tree_f

    def _set_rounds(self, irec, frec, tree_i=None, tree_f=None):
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
        self.nodes_ = None
        if tree_i is not None:
            nodes = np.empty(tree_i.shape[:2], dtype=NODE_DTYPE)
            for name, col in _NODE_I_FIELDS:
                nodes[name] = tree_i[:, :, col]
            for name, col in _NODE_F_FIELDS:
                nodes[name] = tree_f[:, :, col]
            self.nodes_ = nodes
        if self.n_estimators_ == 0:
            import warnings
            warnings.warn(f"{type(self).__name__}: {self._empty_reason} the ensemble is empty and predicts the "
                          "first class.", UserWarning, stacklevel=3)

    # ------------------------------------------------------------------ fitted quantities
    @property
    def feature_importances_(self):
        """Normalised importances: stumps, the sum of |alpha| of the (non-constant) stumps on each feature;
        trees, each tree's criterion gains per feature (normalised per tree) weighted by |alpha|."""
        check_is_fitted(self)
        if hasattr(self, "estimators_"):
            imp = np.sum([m.feature_importances_ for m in self.estimators_], axis=0)
        elif self.nodes_ is not None:
            nodes = self.nodes_
            imp = np.zeros(self.n_features_in_)
            for t in range(nodes.shape[0]):
                internal = nodes["left"][t] >= 0
                gains = np.bincount(nodes["feature"][t][internal], weights=nodes["gain"][t][internal],
                                    minlength=self.n_features_in_)
                if gains.sum() > 0:
                    imp += abs(self.rounds_["alpha"][t]) * gains / gains.sum()
        else:
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

    def _tree_arrays(self):
        nodes = self.nodes_
        node_i = np.empty(nodes.shape + (N_NODE_I,), np.int64)
        node_f = np.empty(nodes.shape + (N_NODE_F,), np.float64)
        for name, col in _NODE_I_FIELDS:
            node_i[:, :, col] = nodes[name]
        for name, col in _NODE_F_FIELDS:
            node_f[:, :, col] = nodes[name]
        return node_i, node_f, np.ascontiguousarray(self.rounds_["alpha"])

    def _check_predict_X(self, X):
        check_is_fitted(self)
        X = v.check_X(X, type(self).__name__)
        validate_data(self, X=X, reset=False, skip_check_array=True)
        return v.as_float_array(X)

    @property
    def _n_scores(self):
        """Columns of the margin: 1 for two classes, K for SAMME and one-vs-rest."""
        return 1 if self.classes_.shape[0] == 2 else self.classes_.shape[0]

    # ------------------------------------------------------------------ prediction
    def decision_function(self, X):
        """Ensemble margin F(x) = sum_t alpha_t h_t(x); positive means ``classes_[1]``.

        With K > 2 classes, an array (n_samples, K): SAMME's class scores (the sum of the
        steps of the rounds whose hypothesis names the class) or the one-vs-rest margins.
        """
        X = self._check_predict_X(X)
        if hasattr(self, "estimators_"):
            return np.column_stack([m.decision_function(X) for m in self.estimators_])
        out = np.zeros((X.shape[0], self._n_scores), dtype=np.float64)
        with n_threads(self.n_jobs):
            if self.nodes_ is not None:
                add_trees(X, *self._tree_arrays(), self.classes_.shape[0], out)
            else:
                _decision_kernel(X, *self._ensemble_arrays(), out[:, 0])
        return out[:, 0] if self._n_scores == 1 else out

    def staged_decision_function(self, X):
        """Margins after each kept round; the last equals ``decision_function(X)``."""
        X = self._check_predict_X(X)
        if hasattr(self, "estimators_"):
            raise NotImplementedError("staged predictions are not available for one-vs-rest models.")
        margin = np.zeros((X.shape[0], self._n_scores), dtype=np.float64)
        if self.nodes_ is not None:
            node_i, node_f, alpha = self._tree_arrays()
            for t in range(self.n_estimators_):
                with n_threads(self.n_jobs):
                    add_trees(X, node_i[t:t + 1], node_f[t:t + 1], alpha[t:t + 1], self.classes_.shape[0], margin)
                yield margin[:, 0].copy() if self._n_scores == 1 else margin.copy()
            return
        feature, threshold, missing_left, left, right, alpha = self._ensemble_arrays()
        m = margin[:, 0]
        for t in range(self.n_estimators_):
            with n_threads(self.n_jobs):
                add_stump(X, feature[t], threshold[t], missing_left[t], left[t], right[t], alpha[t], m)
            yield m.copy()

    def _margin_to_label(self, margin):
        if margin.ndim == 2:
            return self.classes_[np.argmax(margin, axis=1)]
        return self.classes_[(margin > 0).astype(np.intp)]

    def _margin_to_proba(self, margin):
        if margin.ndim == 2:
            if hasattr(self, "estimators_"):  # one-vs-rest: each model's probability of its class, normalised
                q = np.column_stack([m._margin_to_proba(margin[:, k])[:, 1] for k, m in enumerate(self.estimators_)])
                total = q.sum(axis=1, keepdims=True)
                return np.where(total > 0, q / np.where(total > 0, total, 1.0), 1.0 / q.shape[1])
            from scipy.special import softmax

            return softmax(margin, axis=1)  # SAMME's scores
        p1 = expit(2.0 * margin)
        return np.column_stack([1.0 - p1, p1])

    def predict(self, X):
        """``classes_[1]`` where F(x) > 0, else ``classes_[0]`` (sgn(0) = -1); K > 2: the top score's class."""
        return self._margin_to_label(self.decision_function(X))

    def predict_proba(self, X):
        """[1 - q, q] with q = 1 / (1 + exp(-2 F(x))), the exponential loss's link; K > 2 classes: the
        softmax of SAMME's scores, or the one-vs-rest models' probabilities normalised to sum 1."""
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
        return hasattr(self, "n_estimators_")

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags


_COMMON_DOC = """
    n_estimators : int >= 1, maximum number of rounds.
    With K > 2 classes AdaBoostClassifier runs SAMME; the other estimators fit one model
    per class against the rest (``estimators_``) and predict the top margin.
    max_bins : int in [2, 255], bins per feature (a further bin holds missing values).
    feature_rank : int >= 1, use the k-th best feature's best stump (1: the best; "lazy"
        stumps for k >= 2, spec §4: features ranked by their best split's criterion, ties by
        index; k beyond the number of features that can split uses the last of them).
    validation_fraction : float in (0, 1) or None; hold out this stratified fraction of the
        training rows as the validation set (alternative: ``fit(..., eval_set=...)``).
    n_iter_no_change : int >= 1 or None; with a validation set, stop after this many rounds
        without a new lowest validation error (the papers use 100). With a validation set the
        model keeps the best round either way.
    max_depth : int in [1, 8], depth of the weak learner: 1 for decision stumps, more for
        depth-wise trees grown on the same histograms (smaller child built, sibling by subtraction).
    min_samples_leaf : int >= 1, rows with positive weight each leaf of a tree needs.
    min_weight_fraction_leaf : float in [0, 0.5], fraction of the round's learner weight each leaf needs.
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

    _samme = True

    def _rule_params(self):
        return np.array([float(self._n_classes)], dtype=np.float64)

    def __init__(self, n_estimators=50, *, criterion="error", max_depth=1, leaf="discrete", min_samples_leaf=1,
                 min_weight_fraction_leaf=0.0, max_bins=MAX_BINS, feature_rank=1, validation_fraction=None,
                 n_iter_no_change=None, n_jobs=None, random_state=None, verbose=0):
        self.n_estimators = n_estimators
        self.criterion = criterion
        self.max_depth = max_depth
        self.leaf = leaf
        self.min_samples_leaf = min_samples_leaf
        self.min_weight_fraction_leaf = min_weight_fraction_leaf
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

    _samme = False  # K > 2 classes: one-vs-rest lazy stump models

    def __init__(self, n_estimators=50, *, feature_rank=2, criterion="error", max_depth=1, leaf="discrete",
                 min_samples_leaf=1, min_weight_fraction_leaf=0.0, max_bins=MAX_BINS, validation_fraction=None,
                 n_iter_no_change=None, n_jobs=None, random_state=None, verbose=0):
        super().__init__(n_estimators, criterion=criterion, max_depth=max_depth, leaf=leaf,
                         min_samples_leaf=min_samples_leaf, min_weight_fraction_leaf=min_weight_fraction_leaf,
                         max_bins=max_bins, feature_rank=feature_rank, validation_fraction=validation_fraction,
                         n_iter_no_change=n_iter_no_change, n_jobs=n_jobs, random_state=random_state,
                         verbose=verbose)

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
    criterion : "error" (default) or "gini" (ignored with leaf="real").
    leaf : "discrete" or "real" (confidence-rated trees: leaves 1/4 log((U+ + d) / (U- + d)) on the
        learner weights u, split criterion sum 2 sqrt(U+ U-), alpha = 1; spec §2 (7)).""" + _COMMON_DOC

    _algorithm = "vadaboost"

    def __init__(self, n_estimators=50, *, lam=0.5, criterion="error", max_depth=1, leaf="discrete",
                 min_samples_leaf=1, min_weight_fraction_leaf=0.0, max_bins=MAX_BINS, feature_rank=1,
                 validation_fraction=None, n_iter_no_change=None, n_jobs=None, random_state=None, verbose=0):
        self.n_estimators = n_estimators
        self.lam = lam
        self.criterion = criterion
        self.max_depth = max_depth
        self.leaf = leaf
        self.min_samples_leaf = min_samples_leaf
        self.min_weight_fraction_leaf = min_weight_fraction_leaf
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

    def _leaf_scale(self):
        return 0.25


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

    def __init__(self, n_estimators=50, *, lam=0.5, max_depth=1, min_samples_leaf=1, min_weight_fraction_leaf=0.0,
                 max_bins=MAX_BINS, feature_rank=1, validation_fraction=None, n_iter_no_change=None, n_jobs=None,
                 random_state=None, verbose=0):
        self.n_estimators = n_estimators
        self.lam = lam
        self.max_depth = max_depth
        self.min_samples_leaf = min_samples_leaf
        self.min_weight_fraction_leaf = min_weight_fraction_leaf
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

    def _tree_depth(self, n_classes):
        if super()._tree_depth(n_classes):
            raise ValueError("EBBoost enumerates decision stumps exactly and has no tree form (spec §3 (7)): "
                             "use max_depth=1, min_samples_leaf=1 and min_weight_fraction_leaf=0 (for trees, "
                             "VadaBoostClassifier minimises the same cost).")
        return 0

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

    def __init__(self, n_estimators=50, *, gamma=1.0, schedule="inverse", criterion="error", max_depth=1,
                 min_samples_leaf=1, min_weight_fraction_leaf=0.0, max_bins=MAX_BINS, feature_rank=1,
                 validation_fraction=None, n_iter_no_change=None, n_jobs=None, random_state=None, verbose=0):
        self.n_estimators = n_estimators
        self.gamma = gamma
        self.schedule = schedule
        self.criterion = criterion
        self.max_depth = max_depth
        self.min_samples_leaf = min_samples_leaf
        self.min_weight_fraction_leaf = min_weight_fraction_leaf
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

    With ``max_depth`` > 1 the voters are least-squares trees fitted to r (split criterion: the
    p-weighted squared error; leaves: the mean residual), with eta = <h, h>_p in the rules
    (vanilla: alpha = g / eta = 1, spec §6 (7)).

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
    _empty_reason = "no voter improves the objective (with penalty='l1': none has |<h, r>| > lam);"

    def __init__(self, n_estimators=50, *, penalty=None, lam=0.0, alpha_max=1.0, reweight_every=None,
                 reweight_at_end=True, criterion="error", max_depth=1, min_samples_leaf=1,
                 min_weight_fraction_leaf=0.0, max_bins=MAX_BINS, feature_rank=1, validation_fraction=None,
                 n_iter_no_change=None, n_jobs=None, random_state=None, verbose=0):
        self.n_estimators = n_estimators
        self.max_depth = max_depth
        self.min_samples_leaf = min_samples_leaf
        self.min_weight_fraction_leaf = min_weight_fraction_leaf
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

    def _reweight(self, codes, missing_code, irec, frec, tree_i, tree_f, n_rounds, r, p, params, state, val):
        """One coordinate-descent pass over the kept voters; refreshes the penalty and validation margins."""
        rule = RULES[self._algorithm]
        sums = np.zeros(N_SUMS, np.float64)
        get_reweight()(codes, missing_code, irec, frec, tree_i, tree_f, n_rounds, r, p, rule.step, params, sums,
                       np.empty((n_blocks(r.shape[0]), 4), np.float64))
        state[STATE_PENALTY] = sum(quad_penalty(a, params) for a in frec[:n_rounds, R_ALPHA])
        if val is not None and val[1].shape[0]:
            vcodes, vy, vp, vmargin, vblock_sums = val
            vmargin[:] = 0.0
            for j in range(n_rounds):
                if tree_i.shape[0]:
                    update_validation_tree(vcodes, missing_code, tree_i[j], tree_f[j], frec[j, R_ALPHA], 2, vy, vp,
                                           vmargin, vblock_sums)
                else:
                    f, k, ml, left, right = irec[j, [R_FEATURE, R_BIN, R_MISSING_LEFT, R_LEFT, R_RIGHT]]
                    update_validation(vcodes[f], k, ml, missing_code, left, right, frec[j, R_ALPHA], vy, vp,
                                      vmargin, vblock_sums)

    def _finish(self, codes, mapper, y_idx, p, params, irec, frec, tree_i, tree_f):
        """Residuals of the kept voters, the final re-weighting pass, zero-weight voters dropped."""
        r = 2.0 * y_idx - 1.0
        irec = np.ascontiguousarray(irec)
        frec = np.ascontiguousarray(frec)
        tree_i = np.ascontiguousarray(tree_i)
        tree_f = np.ascontiguousarray(tree_f)
        for j in range(irec.shape[0]):
            add_voter(codes, irec, tree_i, tree_f, j, mapper.missing_code, frec[j, R_ALPHA], r)
        if self.reweight_at_end and irec.shape[0]:
            state = np.zeros(N_STATE)
            self._reweight(codes, mapper.missing_code, irec, frec, tree_i, tree_f, irec.shape[0], r, p, params,
                           state, None)
        keep = frec[:, R_ALPHA] != 0.0
        irec, frec = irec[keep], frec[keep]
        if tree_i.shape[0]:
            tree_i, tree_f = tree_i[keep], tree_f[keep]
        self.objective_ = float(np.dot(p, r * r) + sum(quad_penalty(a, params) for a in frec[:, R_ALPHA]))
        return irec, frec, tree_i, tree_f

    def _margin_to_proba(self, margin):
        if margin.ndim == 2:
            return super()._margin_to_proba(margin)
        p1 = np.clip((1.0 + margin) / 2.0, 0.0, 1.0)
        return np.column_stack([1.0 - p1, p1])
