"""The estimators' hyperparameters, declared once: defaults, allowed values and documentation.

``COMMON`` holds the parameters every estimator shares and ``ESTIMATOR_PARAMS``
lists, per public estimator and in the order of its ``__init__`` signature, the
parameters it takes (common ones by name, its own or overridden ones as a
:class:`Param`). From this one table:

- :func:`check_params` validates an estimator's parameters at ``fit``: a
  ``TypeError`` for a value of the wrong type, a ``ValueError`` for one out of
  range, each message naming the parameter, the value and what is allowed;
- :func:`estimator_doc` assembles the numpydoc class docstring (Parameters from
  the table, Attributes, Examples) around an estimator's own description;
- ``tests/test_bad_input.py`` checks that every ``__init__`` signature (names,
  defaults, keyword-only layout) matches the table.

scikit-learn reads the parameters from the ``__init__`` signature, so every
estimator keeps an explicit signature whose body only stores the arguments
(:func:`store_params`). Checks that involve several parameters or the data
(``feature_rank`` > 1 with trees, EBBoost's stumps, ``n_iter_no_change``
without a validation set) stay in ``fit``.
"""
import inspect
import numbers
import textwrap
from dataclasses import dataclass, replace

import numpy as np

from ._algorithms import PENALTIES, SCHEDULES
from ._types import CRITERIA, LEAF_KINDS, MAX_BINS, MAX_BINS_EXACT
from ._validation import check_n_jobs, plain

MAX_DEPTH = 8  # deepest tree the weak learner grows

_DOCS = "docs/algorithms.md"


def _num(x):
    """A bound as written in messages and docs: 0, 0.5, inf."""
    if x == np.inf:
        return "inf"
    if x == -np.inf:
        return "-inf"
    return f"{x:g}" if isinstance(x, float) else str(x)


# ----------------------------------------------------------------------------- constraints
class Constraint:
    """One parameter's allowed values.

    ``check(name, value)`` raises a TypeError (wrong type) or a ValueError (out of range) whose
    message names the parameter, the allowed values and the value given; ``doc_type`` is the
    numpydoc type. ``or_none`` (set by :class:`OrNone`) adds " or None" to both messages.
    """

    doc_type = ""

    def check(self, name, value, or_none=""):
        raise NotImplementedError


def _is_bool(value):
    return isinstance(value, (bool, np.bool_))


def _type_error(name, allowed, value):
    return TypeError(f"{name} must be {allowed}, got {plain(value)} of type {type(value).__name__}.")


#: the largest integer parameter (the fit's configuration holds int64 fields)
INT_MAX = 2 ** 63 - 1


@dataclass(frozen=True)
class Int(Constraint):
    """An int (bool excluded) in [low, high]; high=None for no upper bound."""

    low: int
    high: int = None

    @property
    def range(self):
        return f">= {self.low}" if self.high is None else f"[{self.low}, {self.high}]"

    @property
    def doc_type(self):
        return f"int {self.range}" if self.high is None else f"int in {self.range}"

    def check(self, name, value, or_none=""):
        if _is_bool(value) or not isinstance(value, numbers.Integral):
            raise _type_error(name, f"an {self.doc_type}{or_none}", value)
        if value < self.low or (self.high is not None and value > self.high):
            raise ValueError(f"{name} must be {self.range if self.high is None else 'in ' + self.range}{or_none}, "
                             f"got {value}.")
        if value > INT_MAX:  # (the fit keeps its integers as int64)
            raise ValueError(f"{name} must be at most {INT_MAX} (2**63 - 1){or_none}, got {value}.")


@dataclass(frozen=True)
class Real(Constraint):
    """A real number (ints allowed, bool excluded) in an interval; ``closed`` is "both", "left",
    "right" or "neither". NaN is never in range and an infinite bound is always open."""

    low: float
    high: float
    closed: str = "both"

    @property
    def _closed_low(self):
        return self.closed in ("both", "left") and np.isfinite(self.low)

    @property
    def _closed_high(self):
        return self.closed in ("both", "right") and np.isfinite(self.high)

    @property
    def range(self):
        return (f"{'[' if self._closed_low else '('}{_num(self.low)}, "
                f"{_num(self.high)}{']' if self._closed_high else ')'}")

    @property
    def doc_type(self):
        return f"float in {self.range}"

    def check(self, name, value, or_none=""):
        if _is_bool(value) or not isinstance(value, numbers.Real):
            raise _type_error(name, f"a real number in {self.range}{or_none}", value)
        above = value >= self.low if self._closed_low else value > self.low
        below = value <= self.high if self._closed_high else value < self.high
        if not (above and below):  # NaN fails both
            raise ValueError(f"{name} must be in {self.range}{or_none}, got {value}.")


@dataclass(frozen=True)
class Options(Constraint):
    """One of a fixed set of strings, or None if None is among them (listed in the order given)."""

    options: tuple

    @property
    def doc_type(self):
        return "{" + ", ".join("None" if o is None else f'"{o}"' for o in self.options) + "}"

    def check(self, name, value, or_none=""):
        if not (value is None and None in self.options or isinstance(value, str) and value in self.options):
            raise ValueError(f"{name} must be one of {list(self.options)}, got {plain(value)}.")


@dataclass(frozen=True)
class Bool(Constraint):
    doc_type = "bool"

    def check(self, name, value, or_none=""):
        if not _is_bool(value):
            raise _type_error(name, f"a bool{or_none}", value)


@dataclass(frozen=True)
class OrNone(Constraint):
    """None, or a value that ``inner`` accepts."""

    inner: Constraint

    @property
    def doc_type(self):
        return f"{self.inner.doc_type} or None"

    def check(self, name, value, or_none=""):
        if value is not None:
            self.inner.check(name, value, " or None")


@dataclass(frozen=True)
class OrAuto(Constraint):
    """The string "auto" (the estimator chooses the value from the training data), or a value ``inner``
    accepts."""

    inner: Constraint

    @property
    def doc_type(self):
        return f'"auto" or {self.inner.doc_type}'

    def check(self, name, value, or_none=""):
        if isinstance(value, str) and value == "auto":
            return
        if isinstance(value, str):
            raise ValueError(f'{name} must be "auto" or {self.inner.doc_type}, got {plain(value)}.')
        self.inner.check(name, value, or_none)


@dataclass(frozen=True)
class NJobs(Constraint):
    """joblib's n_jobs: None (all cores), an int >= 1, or a negative int (-1: all, -2: all but one, ...)."""

    doc_type = "int or None"

    def check(self, name, value, or_none=""):
        check_n_jobs(name, value)


@dataclass(frozen=True)
class Verbose(Constraint):
    """An int >= 0 or a bool (True counts as 1)."""

    doc_type = "int >= 0 or bool"

    def check(self, name, value, or_none=""):
        if not _is_bool(value):
            Int(0).check(name, value, " or a bool")


@dataclass(frozen=True)
class ClassWeight(Constraint):
    """None, "balanced", or a dict {class label: weight >= 0} (as scikit-learn's class_weight)."""

    doc_type = 'dict, "balanced" or None'

    def check(self, name, value, or_none=""):
        if value is None or (isinstance(value, str) and value == "balanced"):
            return
        if not isinstance(value, dict):
            raise _type_error(name, 'a dict {class: weight}, "balanced" or None', value)
        for label, weight in value.items():
            if _is_bool(weight) or not isinstance(weight, numbers.Real) or not (weight >= 0 and np.isfinite(weight)):
                raise ValueError(f"{name} must map classes to finite weights >= 0; got {plain(weight)} for class "
                                 f"{plain(label)}.")


@dataclass(frozen=True)
class CategoricalFeatures(Constraint):
    """"from_dtype", None, or a 1-D array-like: a boolean mask, integer indices or feature names."""

    doc_type = '"from_dtype", array-like of bool, int or str, or None'

    def check(self, name, value, or_none=""):
        if value is None or (isinstance(value, str) and value == "from_dtype"):
            return
        if isinstance(value, (str, bytes, numbers.Number, dict, set)):
            raise _type_error(name, '"from_dtype", None, a boolean mask, integer indices or feature names', value)
        arr = np.asarray(value)
        if arr.ndim != 1 or not (arr.dtype.kind in "biuU" or arr.size == 0
                                 or all(isinstance(c, str) for c in arr.tolist())):
            raise ValueError(f"{name} must be \"from_dtype\", None, or a 1-D boolean mask, integer indices or "
                             f"feature names; got {plain(value)}.")


@dataclass(frozen=True)
class MonotoneConstraints(Constraint):
    """None, a sequence of -1 / 0 / 1 (one per feature), or a dict {feature name: -1 / 0 / 1}; the length, the
    names and the categorical features are checked against the data at ``fit``."""

    doc_type = "array-like of {-1, 0, 1}, dict {str: -1, 0 or 1} or None"

    def check(self, name, value, or_none=""):
        from ._monotone import check

        check(value)


@dataclass(frozen=True)
class RandomState(Constraint):
    """What ``sklearn.utils.check_random_state`` accepts: None, an int seed, a ``numpy.random.RandomState``."""

    doc_type = "int, RandomState instance or None"

    def check(self, name, value, or_none=""):
        from sklearn.utils import check_random_state

        try:
            check_random_state(value)
        except (TypeError, ValueError) as e:
            raise ValueError(f"{name} must be None, an int in [0, 2**32 - 1] or a numpy.random.RandomState "
                             f"instance, got {plain(value)} ({e}).") from None


@dataclass(frozen=True)
class InteractionGroups(Constraint):
    """None, or a list of feature groups, each a non-empty list of feature indices or feature names."""

    doc_type = "list of lists of int or str, or None"

    def check(self, name, value, or_none=""):
        if value is None:
            return
        if isinstance(value, (str, bytes, numbers.Number, dict)) or not hasattr(value, "__iter__"):
            raise _type_error(name, "a list of feature groups (lists of feature indices or names), or None", value)
        groups = list(value)
        if not groups:
            raise ValueError(f"{name} must hold at least one group of features (None: no constraint), got "
                             f"{plain(value)}.")
        for g in groups:
            if isinstance(g, (str, bytes, numbers.Number, dict)) or not hasattr(g, "__iter__"):
                raise ValueError(f"{name} must be a list of groups, each a list of feature indices or names; got "
                                 f"the group {plain(g)}.")
            items = list(g)
            if not items:
                raise ValueError(f"{name}: every group needs at least one feature; got an empty group.")
            for f in items:
                if _is_bool(f) or not isinstance(f, (numbers.Integral, str)):
                    raise ValueError(f"{name}: a group holds feature indices (ints) or feature names (str); got "
                                     f"{plain(f)} of type {type(f).__name__}.")


# ----------------------------------------------------------------------------- the table
@dataclass(frozen=True)
class Param:
    """A hyperparameter: its default, its allowed values and its numpydoc description."""

    default: object
    constraint: Constraint
    doc: str

    def doc_entry(self, name):
        default = f'"{self.default}"' if isinstance(self.default, str) else repr(self.default)
        return f"{name} : {self.constraint.doc_type}, default={default}\n{_wrap(self.doc)}"


_STOP_RULES = f'{_DOCS}, "Perfect and useless weak hypotheses (stop rules)"'
_LEARNERS = f'{_DOCS}, "Decision stumps and trees (the weak learners)"'
_VALIDATION = f'{_DOCS}, "Validation and early stopping"'

COMMON = {
    "n_estimators": Param(50, Int(1), (
        "Maximum number of boosting rounds. Boosting may stop earlier (see the stop rules in "
        f"{_STOP_RULES}); ``n_estimators_`` is the number of rounds kept. One-vs-rest models fit "
        "up to this many rounds per class.")),
    "learning_rate": Param(1.0, Real(0.0, np.inf, "neither"), (
        "Shrinks every step: alpha_t is multiplied by it (confidence-rated leaves: their values), so "
        "the weights move by exp(-learning_rate alpha_t y h_t). 1.0 is the algorithm as published; "
        "smaller values need more rounds and often generalise better. QuadBoost's re-weighting passes "
        "refit the weights without it. A fit whose weights overflow (a step far too large) is refused with a "
        "ValueError; above 1, a fit whose training cost rises in some round (the steps overshoot) warns.")),
    "class_weight": Param(None, ClassWeight(), (
        'Weights of the classes, multiplied into ``sample_weight``: a dict {class: weight}, or '
        '"balanced" for n_samples / (n_classes * count of the class), as scikit-learn. One-vs-rest '
        "models apply it to the original classes; with ``validation_fraction`` the held-out rows keep "
        "their weights too.")),
    "warm_start": Param(False, Bool(), (
        "When True, a further ``fit`` on the same data with a larger ``n_estimators`` (and otherwise the "
        "same parameters) continues from the rounds already fitted instead of starting again: fitting 100 "
        "rounds and then 200 gives the model of fitting 200 at once, bit for bit. The fitted estimator then "
        "keeps its working state (about 30 bytes per training row) between fits.")),
    "weight_trim_rate": Param(None, OrNone(Real(0.0, 1.0, "right")), (
        "Weight trimming: each round's weak learner is built from rows that hold at least this share of the "
        "learner's weights (e.g. 0.99; chosen by the binary exponent and the first mantissa bits of each "
        "weight, no sort), while the round's sums, its step and the weight update run over every row. "
        "AdaBoost's weights concentrate on part of the rows after some rounds, so later rounds read fewer "
        "rows. Stumps of AdaBoost, LazyBoost and SABoost keep the chosen rows, and carry their histograms, "
        "from round to round while they still hold the share (choosing again at least every 16 rounds); the "
        "other learners read every row while more than a third of the rows would be kept. "
        "None reads every row (the algorithm as published). ``rounds_['n_seen']`` is the number of rows "
        "each round's learner was built from.")),
    "criterion": Param("error", Options(tuple(CRITERIA)), (
        'Split criterion of the weak learner on the weights it sees: "error" minimises the weighted '
        'error, "gini" the weighted Gini impurity.')),
    "max_depth": Param(1, Int(1, MAX_DEPTH), (
        "Depth of the weak learner: 1 for decision stumps, more for depth-wise trees grown on the "
        "same histograms (the smaller child built, its sibling by subtraction); see "
        f"{_LEARNERS}.")),
    "leaf": Param("discrete", Options(tuple(LEAF_KINDS)), (
        '"discrete": every leaf names a class and the round\'s step alpha follows the algorithm\'s '
        'rule; "real": confidence-rated trees, whose leaves hold 1/2 log((W+ + d) / (W- + d)) on the '
        "learner's weights (d = 1 / (2n) for n weighted rows), split by the smallest sum over leaves "
        "of 2 sqrt(W+ W-), with alpha = 1 (K > 2 classes: SAMME.R's K-vector leaves, see ``multiclass``).")),
    "min_samples_leaf": Param(1, Int(1), (
        "Rows with positive weight each leaf of a tree needs. Values above 1 use the tree learner "
        "(also with ``max_depth=1``).")),
    "min_weight_fraction_leaf": Param(0.0, Real(0.0, 0.5), (
        "Fraction of the round's learner weight each leaf needs. Values above 0 use the tree "
        "learner (also with ``max_depth=1``).")),
    "max_bins": Param(MAX_BINS, OrNone(Int(2, MAX_BINS_EXACT)), (
        "Bins per feature, their edges computed once before boosting (from a sample of 200 000 rows); "
        "one further bin holds the missing values (NaN). A feature with at most ``max_bins`` distinct "
        "values gets one bin per value (thresholds at the midpoints, as a sorted-value search); one with "
        "more gets quantile bins. None is exact mode: 2-byte codes, edges from every row, a threshold "
        "between every two distinct values of a feature (up to 65 535 of them; above that, quantile bins, "
        "and ``n_features_quantised_`` counts such features): the papers' stumps and scikit-learn's "
        "trees. Values from 256 to 65 535 also use exact mode's 2-byte codes and every row. Exact mode "
        "costs memory (twice the codes, histograms as wide as the most distinct values) and time per "
        "round.")),
    "categorical_features": Param("from_dtype", CategoricalFeatures(), (
        'Which features are categorical: "from_dtype" (a DataFrame\'s ``category``, string and object '
        "columns; none for arrays), None, a boolean mask, integer indices or column names. A categorical "
        "feature's categories are its distinct values in the training data (at most ``max_bins``); a "
        "split sends a set of categories left, found by ordering the categories by their share of the "
        "class weights (the best of all subsets for two classes). Missing values and categories not seen "
        "in training go to the same side.")),
    "monotone_constraints": Param(None, MonotoneConstraints(), (
        "Monotone constraints: per feature 1 (the decision function never decreases as the feature grows, the "
        "other features fixed), -1 (never increases) or 0 (none); a sequence with one entry per feature, or a dict "
        "{feature name: direction} (others 0). Stumps take only the allowed polarity (AdaBoost's may also step "
        "back, capped: ``monotone_steps``) and trees bound their "
        "leaves through every split on a constrained feature (LightGBM's intermediate bounds), for every "
        "algorithm, leaf kind and depth. The guarantee is over the feature's non-missing values (NaN keeps the "
        "side it learned); with K > 2 classes it holds for each one-vs-rest margin, and for SAMME's class "
        "scores in the order of ``classes_`` (the sum of the scores of the classes from any k on follows the "
        "constraint). Categorical features cannot be constrained. See docs/monotone.md.")),
    "feature_rank": Param(1, Int(1), (
        "Use the best split of the k-th best feature (1: the best split). k >= 2 gives \"lazy\" "
        "stumps: features ranked by their best split's criterion, ties by feature index; k beyond "
        "the number of features that can split uses the last of them. Binary decision stumps only; "
        f'see {_DOCS}, "Lazy stumps (feature_rank)".')),
    "validation_fraction": Param(None, OrNone(Real(0.0, 1.0, "neither")), (
        "Hold out this stratified fraction of the training rows as the validation set (or pass "
        "``fit(X, y, eval_set=(X_val, y_val))``). With a validation set the model keeps the first "
        "round with the lowest validation error. None: no validation set, except that with "
        "``n_iter_no_change`` and no ``eval_set`` 0.1 of the rows are held out (as scikit-learn's "
        f"gradient boosting); see {_VALIDATION}.")),
    "n_iter_no_change": Param(None, OrNone(Int(1)), (
        "With a validation set, stop after this many rounds without a new lowest validation error "
        "(the papers use 100). The validation set is ``eval_set``, or ``validation_fraction`` of the "
        "training rows (0.1 when it is None).")),
    "interaction_constraints": Param(None, InteractionGroups(), (
        "Groups of features that may interact, as LightGBM's and XGBoost's: a list of lists of feature indices "
        "or names (``feature_names_in_``). Every root-to-leaf path of a tree splits only on features of one "
        "group: a node may split on the features of the groups that hold every feature used above it. Features "
        "in no group are never split on (as LightGBM). Decision stumps use one feature each, so for them this "
        "only leaves out the features in no group. See docs/estimators.md, \"Sampling and interaction "
        "constraints\".")),
    "colsample_bytree": Param(1.0, Real(0.0, 1.0, "right"), (
        "Fraction of the features each round's weak learner reads: max(1, round(fraction * m)) of the m "
        "features (those some ``interaction_constraints`` group holds), drawn anew every round from "
        "``random_state``. Histograms are built for the drawn features only, so a round costs about that "
        "fraction of its histogram work. 1.0 reads every feature.")),
    "colsample_bynode": Param(1.0, Real(0.0, 1.0, "right"), (
        "Fraction of the round's features (``colsample_bytree``) each tree node may split on, drawn anew per "
        "node from ``random_state`` (a stump is one node), among those the interaction constraints allow there. "
        "1.0: every one.")),
    "subsample": Param(1.0, Real(0.0, 1.0, "right"), (
        "Fraction of the rows each round's weak learner is built from: each row independently with this "
        "probability, drawn anew every round from ``random_state`` (as LightGBM's bagging and XGBoost's "
        "subsample). With ``bootstrap=True``: round(subsample * n) draws with replacement. The round's sums, "
        "its step and the weight update still run over every row; ``rounds_['n_seen']`` counts the rows read. "
        "With ``weight_trim_rate`` the rows are drawn from those trimming keeps. 1.0 reads every row.")),
    "bootstrap": Param(False, Bool(), (
        "Boosting by resampling: each round's weak learner is built from rows drawn with replacement with "
        "probability proportional to the learner's weights (round(subsample * n) draws), each drawn row "
        "weighted by its count. Not with EBBoost's or QuadBoost's learners (their histograms hold another "
        "quantity than the weights), nor with AdaBoost.MH (``multiclass='mh'``, its learner sums per-class "
        "weights). A round whose hypothesis the rule rejects is learnt again from every row "
        "(as weight trimming's).")),
    "n_jobs": Param(None, NJobs(), (
        "Threads for fit and predict: None for the cores this process may use (its CPU affinity; at most "
        "OMP_NUM_THREADS when that is set, as joblib sets it in its workers), a negative value as in joblib "
        "(-1: all, -2: all but one), capped at numba's thread count. It is the most threads a fit uses: while "
        "other processes keep cores busy a fit runs its next rounds on the cores left (FASTBOOST_ADAPT_THREADS=0: "
        "always n_jobs). The fitted model does not depend on it.")),
    "random_state": Param(None, RandomState(), (
        "Seeds the binning subsample (drawn above 200 000 rows), the ``validation_fraction`` "
        "split and the feature and row draws of ``colsample_bytree``, ``colsample_bynode``, ``subsample`` and "
        "``bootstrap``; without these boosting itself is deterministic.")),
    "verbose": Param(0, Verbose(), (
        "When > 0 (or True), print a header, then a line every 1, 2 or 5 times a power of ten rounds (at "
        "most 20 a fit) with the round, the training error, the validation error, the cost and the time "
        "elapsed and left, and a last line saying why the fit ended. 0 prints nothing.")),
}

_CRITERION_OR_REAL = replace(COMMON["criterion"], doc=COMMON["criterion"].doc + (
    ' Ignored with ``leaf="real"``, whose trees split by the sum over leaves of 2 sqrt(W+ W-) (K > 2 classes, '
    "SAMME.R: by the weighted Gini impurity)."))
_STUMPS_ONLY = ("EBBoost enumerates decision stumps exactly and has no tree form: only the default is "
                "accepted by ``fit`` (for trees, VadaBoostClassifier minimises the same cost).")


_NU = Param("auto", OrAuto(OrNone(Real(0.0, 1.0, "right"))), (
    "The soft margin: each example's dual weight is capped at p_i / nu (1 / (nu n) without sample weights), "
    "so nu bounds the fraction of examples with margin errors from above; 1 allows the most violations, values "
    "near 0 approach the hard margin. A number runs the published algorithm at that nu (None means 0.1). "
    '"auto" (unless ``capping`` is given) chooses nu from the training rows alone, never one whose LP is '
    "degenerate (value <= 0, when nu is below about twice the training error: the weights may then cancel "
    "out): on each of three seeded stratified folds (``random_state``, 0 when None) AdaBoost is fitted on two "
    "thirds of the rows, and each nu of ``_lp.NU_GRID`` (0.02 to 0.5: beyond 1/2 the LP tends to keep a "
    "single voter; ``_lp.SOFT_NU_GRID``, 0.6 to 1, only where the LP is degenerate at all of them) is scored "
    "by the weighted error on the "
    "held-out third of the soft-margin LP over its voters (re-solved from the previous basis for each nu); the "
    "lowest mean error wins (the smallest nu among equal errors; RLP-Boost counts errors within one held-out row "
    "of the lowest as equal, a single row being no evidence for a softer margin). The fit then runs at that nu. "
    f'The chosen value is ``nu_``; see {_DOCS}, "Choosing nu and C".'))
_CAPPING = Param(None, OrNone(Real(1.0, np.inf, "left")), (
    "The same soft margin in capped form: dual weights at most p_i n / capping (1 / capping without sample "
    "weights), i.e. capping = nu n; at most the number of training examples. Pass nu or capping, not both."))


def _declare(*names, **own):
    """Parameters in signature order: each name from ``COMMON`` unless ``own`` gives its :class:`Param`."""
    unknown = set(own) - set(names)
    assert not unknown, f"parameters not in the signature order: {unknown}"
    return {name: own[name] if name in own else COMMON[name] for name in names}


_TREE = ("max_depth", "min_samples_leaf", "min_weight_fraction_leaf")


def _auto_leaf(when):
    """min_samples_leaf with an "auto" default: 5 rows with trees ``when`` ..., else 1."""
    return Param("auto", OrAuto(Int(1)), (
        "Rows with positive weight each leaf of a tree needs. Values above 1 use the tree learner (also "
        f'with ``max_depth=1``). "auto": 5 with trees (``max_depth`` > 1){when}, else 1 (stumps, the '
        "published learner): on a few hundred rows depth-3 trees with 1-row leaves fit the training rows "
        "exactly, so their first trees carry the model (breast cancer, iris, wine, diabetes: up to 6 points "
        f'lower test error with 5); see {_DOCS}, "Trees at the defaults".'))
_SAMPLING = ("interaction_constraints", "colsample_bytree", "colsample_bynode", "subsample", "bootstrap")
_TAIL = ("max_bins", "categorical_features", "monotone_constraints", "feature_rank", "validation_fraction",
         "n_iter_no_change", *_SAMPLING, "n_jobs", "random_state", "verbose")

#: public estimator class name -> {parameter: Param}, in the order of its ``__init__`` signature
#: (``n_estimators`` positional, the others keyword-only).
ESTIMATOR_PARAMS = {
    "AdaBoostClassifier": _declare(
        "n_estimators", "learning_rate", "class_weight", "warm_start", "weight_trim_rate",
        "criterion", "max_depth", "leaf", "multiclass", "loss", "min_samples_leaf", "min_weight_fraction_leaf",
        *_TAIL[:3], "monotone_steps", *_TAIL[3:], criterion=_CRITERION_OR_REAL,
        loss=Param("exponential", Options(("exponential", "logistic")), (
            'The loss confidence-rated leaves (``leaf="real"``) lower. "exponential": AdaBoost as published, each '
            'row (AdaBoost.MH: each (row, class) pair) weighted by exp(-y F). "logistic": log(1 + exp(-y F)), '
            "each row weighted by p sigma(-y F), sigma(z) = 1 / (1 + exp(-z)), from its margin (Collins, Schapire "
            "and Singer's sequential update): a row the model gets badly wrong weighs at most its sample weight "
            "instead of growing exponentially, so noise and overlapping classes pull less. The same trees, leaf "
            "values and step on those weights; ``predict_proba`` is then 1 / (1 + exp(-F)) (K > 2 classes: each "
            "class's, normalised). Two classes, one-vs-rest and AdaBoost.MH (``multiclass=\"mh\"``; on 10 "
            "overlapping classes it closes most of AdaBoost.MH's gap to gradient boosting); not SAMME.R, nor "
            f'discrete leaves. See {_DOCS}, "The logistic loss".')),
        monotone_steps=Param("auto", Options(("auto", "capped", "forward")), (
            "With ``monotone_constraints``, which stumps a constrained feature may get. \"forward\": only those "
            "whose outputs follow the constraint. \"capped\": also steps back, a stump of the other polarity at a "
            "threshold where the stumps before it stepped in the allowed direction, its step capped at theirs, so "
            "the score never moves against the constraint (full steps overshoot, and these take the overshoot "
            "back; candidates are compared by the exponential loss at their step). Binary decision stumps only "
            "(two classes or ``multiclass=\"ovr\"``, ``feature_rank=1``); trees bound their leaves instead. "
            "\"auto\": \"capped\" where it applies, else \"forward\". See docs/monotone.md.")),
        multiclass=Param("auto", Options(("auto", "joint", "mh", "ovr")), (
            'K > 2 classes: "joint" fits one tree a round for all classes, SAMME with ``leaf="discrete"`` '
            '(each leaf names a class) and SAMME.R with ``leaf="real"`` (each leaf holds K real values, '
            '``leaf_values_``); "mh" (``leaf="real"`` only) fits one tree a round with K real values a leaf too, '
            "AdaBoost.MH: one weight per row and class, each class's leaf value 1/2 log((W+ + d) / (W- + d)), "
            "more accurate than SAMME.R on the data sets measured; "
            '"ovr" fits one model per class against the rest (``estimators_``); "auto" is '
            'SAMME for discrete leaves and one-vs-rest for real ones. Two classes: not used. '
            f'See {_DOCS}, "SAMME.R: K-vector leaves" and "AdaBoost.MH: K-vector leaves on per-class weights".'))),
    "LazyBoostClassifier": _declare(
        "n_estimators", "learning_rate", "class_weight", "warm_start", "weight_trim_rate",
        "feature_rank", "criterion", "max_depth", "leaf", "min_samples_leaf",
        "min_weight_fraction_leaf", "max_bins", "categorical_features", "monotone_constraints", "validation_fraction",
        "n_iter_no_change", *_SAMPLING, "n_jobs", "random_state", "verbose", criterion=_CRITERION_OR_REAL,
        feature_rank=Param("auto", OrAuto(Int(1)), (
            "Use the best stump of the k-th best feature: features ranked by their best stump's "
            "criterion, ties by feature index; k beyond the number of features that can split uses "
            "the last of them. 1 is plain AdaBoost. \"auto\": 2 (the lazy stump) with at least 8 "
            "features, 1 with fewer (passing over the best of a handful of features gives up much of what "
            "stumps can use: iris, 4 features, 5.3 % test error against 3.3 % with 1). Binary decision stumps "
            "only (the default tree parameters, two classes or one-vs-rest); see "
            f'{_DOCS}, "Lazy stumps (feature_rank)".'))),
    "VadaBoostClassifier": _declare(
        "n_estimators", "learning_rate", "class_weight", "warm_start", "weight_trim_rate",
        "lam", "criterion", "max_depth", "leaf", "min_samples_leaf", "min_weight_fraction_leaf",
        *_TAIL,
        lam=Param(0.5, Real(0.0, 1.0), (
            "The variance penalty: the cost is (1 - lam) S1**2 + lam n S2; lam = 0 squares AdaBoost's "
            "loss (with half its steps).")),
        criterion=replace(COMMON["criterion"], doc=(
            'Split criterion of the weak learner on the learner weights u: "error" minimises the '
            'weighted error, "gini" the weighted Gini impurity. Ignored with ``leaf="real"``.')),
        leaf=replace(COMMON["leaf"], doc=(
            '"discrete": every leaf names a class and alpha = 1/4 log(U_I / U_J); "real": '
            "confidence-rated trees, whose leaves hold 1/4 log((U+ + d) / (U- + d)) on the learner "
            "weights u (d = 1 / (2n) for n weighted rows), split by the smallest sum over leaves of "
            f'2 sqrt(U+ U-), with alpha = 1 (see {_DOCS}, "VadaBoost").'))),
    "EBBoostClassifier": _declare(
        "n_estimators", "learning_rate", "class_weight", "warm_start", "weight_trim_rate",
        "lam", *_TREE, *_TAIL,
        lam=Param(0.5, Real(0.0, np.inf, "left"), "The variance penalty (values above 1 are allowed)."),
        max_depth=replace(COMMON["max_depth"], doc=f"Must be 1. {_STUMPS_ONLY}"),
        min_samples_leaf=replace(COMMON["min_samples_leaf"], doc=f"Must be 1. {_STUMPS_ONLY}"),
        min_weight_fraction_leaf=replace(COMMON["min_weight_fraction_leaf"], doc=f"Must be 0. {_STUMPS_ONLY}")),
    "SABoostClassifier": _declare(
        "n_estimators", "learning_rate", "class_weight", "warm_start", "weight_trim_rate",
        "gamma", "schedule", "criterion", *_TREE, *_TAIL, min_samples_leaf=_auto_leaf(""),
        gamma=Param("auto", OrAuto(Real(0.0, np.inf, "neither")), (
            "The step schedule's scale (the paper's tables use 0.5, 1.0 and 1.5). \"auto\": 0.5 with "
            '``schedule="power"`` (a_t = 1 / sqrt(t)), 1.0 with the other schedules (the earlier default).')),
        schedule=Param("power", Options(tuple(SCHEDULES)), (
            'The step at round t: "power" a_t = t**-gamma (the default, with gamma = 0.5), "inverse" '
            'a_t = gamma / t (Robbins-Monro\'s canonical schedule; the default before), "constant" a_t = gamma. '
            "With 50 rounds a_t = gamma / t sums to 4.5 gamma: too little to fit twonorm, ringnorm or digits "
            f'(2-11 points above AdaBoost\'s test error); see {_DOCS}, "SABoost".'))),
    "QuadBoostClassifier": _declare(
        "n_estimators", "learning_rate", "class_weight", "warm_start",
        "penalty", "lam", "alpha_max", "reweight_every", "reweight_at_end", "criterion", *_TREE,
        *_TAIL, min_samples_leaf=_auto_leaf(' at ``learning_rate="auto"``'),
        learning_rate=Param("auto", OrAuto(Real(0.0, np.inf, "neither")), (
            "Shrinks every step: alpha_t is multiplied by it (the re-weighting passes refit the weights "
            'without it). "auto": 1.0 with decision stumps (the algorithm as published) and 0.1 with trees '
            "(``max_depth`` > 1): a least-squares tree's leaves are the mean residuals of its rows, and at "
            "1.0 the first few trees fit the training labels almost exactly (depth 3, 50 rounds: 2-4 "
            "points above the stumps' test error on twonorm, waveform and breast cancer); at 0.1 trees are "
            f'within a point of stumps or better. See {_DOCS}, "Least-squares trees".')),
        penalty=Param(None, Options(tuple(PENALTIES)), (
            'None (vanilla), "l1", "l2" or "linf": the control of the voters\' weights (see above).')),
        lam=Param(0.0, Real(0.0, np.inf, "left"), (
            'The L1 / L2 regularisation strength (``penalty="l1"`` or ``"l2"``; ignored otherwise).')),
        alpha_max=Param(1.0, Real(0.0, np.inf, "neither"), (
            'The L-inf box on every |alpha_j| (``penalty="linf"``; ignored otherwise).')),
        reweight_every=Param(None, OrNone(Int(1)), (
            "Rounds between coordinate-descent re-weighting passes over the kept voters (None: no pass "
            "during boosting).")),
        reweight_at_end=Param(True, Bool(), "A last re-weighting pass after boosting."),
        criterion=replace(COMMON["criterion"], doc=(
            'Split criterion of the stump learner on the weighted classification it is handed: '
            '"error" (the exact reduction) or "gini". Trees (``max_depth`` > 1) split by the '
            "weighted squared error instead."))),
    "LPBoostClassifier": _declare(
        "n_estimators", "nu", "capping", "tol", "class_weight", "criterion", *_TREE, *_TAIL,
        n_estimators=replace(COMMON["n_estimators"], default=100, doc=(
            "Maximum number of columns (voters) column generation adds; it usually stops earlier, when "
            "no voter can raise the LP's value by more than ``tol``. One-vs-rest models add up to this many "
            "per class.")),
        nu=_NU, capping=_CAPPING,
        tol=Param(1e-6, Real(0.0, np.inf, "left"), (
            "Stop when the best new voter's edge on the dual weights is at most the LP's value beta plus "
            "tol.")),
        criterion=replace(COMMON["criterion"], doc=(
            'Split criterion of the weak learner on the dual weights u: "error" finds the voter with the '
            'largest edge sum_i u_i y_i h(x_i) (column generation\'s pricing step, exact for stumps), "gini" '
            "the weighted Gini impurity."))),
    "RLPBoostClassifier": _declare(
        "n_estimators", "nu", "capping", "learning_rate", "class_weight", "criterion", *_TREE, *_TAIL,
        min_samples_leaf=_auto_leaf(' when nu is chosen (``nu="auto"``, no ``capping``)'),
        n_estimators=replace(COMMON["n_estimators"], default=100, doc=(
            "Maximum number of AdaBoost rounds, whose voters the LP re-weights.")),
        nu=_NU, capping=_CAPPING),
    "RQPBoostClassifier": _declare(
        "n_estimators", "C", "solver", "learning_rate", "class_weight", "criterion", *_TREE, *_TAIL,
        min_samples_leaf=_auto_leaf(' when C is chosen (``C="auto"``)'),
        n_estimators=replace(COMMON["n_estimators"], default=100, doc=(
            "Maximum number of AdaBoost rounds, whose voters the QP re-weights.")),
        C=Param("auto", OrAuto(Real(0.0, np.inf, "neither")), (
            "The price of a unit of margin violation xi_i (C_i = C p_i n with sample weights): larger values "
            "fit the training margins harder, smaller ones keep the weights b small. A number runs the "
            'published algorithm at that C. "auto" chooses C from the training rows alone: on each of three '
            "seeded stratified folds (``random_state``, 0 when None) AdaBoost is fitted on two thirds of the rows, "
            "and each C of ``_lp.C_GRID`` (0.001 to 3) is scored by the weighted error on the held-out third of "
            "the QP over its voters (L-BFGS-B starting from the previous C's dual); the lowest mean error wins "
            "(the middle one among equal errors), never a C whose weights are all 0, and the QP over the voters "
            f'of the fit is solved at that C. The chosen value is ``C_``; see {_DOCS}, "Choosing nu and C".')),
        solver=Param("lbfgs", Options(("lbfgs", "highs")), (
            '"lbfgs": the bound-constrained dual with SciPy\'s L-BFGS-B, then an exact step on the active '
            'sets it finds; "highs": the QP itself with HiGHS\'s QP solver (needs the ``lp`` extra). They '
            "agree to about 1e-6; HiGHS is as fast up to about 1 000 rows and far slower beyond (docs/"
            'algorithms.md, "RLP-Boost and RQP-Boost").'))),
}


def params_for(cls):
    """The parameter table of an estimator class: its own, or that of the nearest public estimator
    it derives from (the Dask classes, user subclasses); the common parameters as a last resort."""
    for klass in cls.__mro__:
        if klass.__module__.startswith("fastboost.") and klass.__name__ in ESTIMATOR_PARAMS:
            return ESTIMATOR_PARAMS[klass.__name__]
    return COMMON


def check_params(estimator):
    """Validate every table parameter the estimator has; TypeError for a wrong type, ValueError out of range."""
    for name, param in params_for(type(estimator)).items():
        if hasattr(estimator, name):
            param.constraint.check(name, getattr(estimator, name))


#: parameters a warm start may change (the others must stay as they were)
WARM_FREE = ("n_estimators", "warm_start", "verbose", "n_jobs")


def _param_key(value):
    """A parameter's value as a warm start compares it with the fit it continues: containers by their contents
    (a tuple as the list a model file gives back, a NumPy number as the Python number), numbers, strings and
    None by their ``repr`` (1 and 1.0 differ), any other object (a RandomState) as itself: another one is a
    change, while a pickled model's record and parameter unpickle as one object."""
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, (list, tuple)):
        return [_param_key(x) for x in value]
    if isinstance(value, (set, frozenset)):  # (by its items: a set's order differs between processes)
        return sorted(repr(_param_key(x)) for x in value)
    if isinstance(value, dict):
        return {repr(_param_key(k)): _param_key(x) for k, x in value.items()}
    if value is None or isinstance(value, (bool, numbers.Number, str)):
        return repr(value)
    return value


def fitted_params(estimator):
    """The record of the parameters a fit used, kept with the fitted model (and made again when a model file
    loads), for a later warm start to name any parameter changed since."""
    return {name: _param_key(value) for name, value in estimator.get_params(deep=False).items()}


def changed_params(record, estimator):
    """The parameters, other than ``WARM_FREE``'s, whose value differs from the fit ``record`` describes."""
    now = fitted_params(estimator)
    return sorted(k for k in now if k not in WARM_FREE and now[k] != record.get(k))


def store_params(estimator, arguments):
    """The body of every ``__init__``: ``store_params(self, locals())`` stores each argument unchanged
    (scikit-learn's contract: no validation or conversion in ``__init__``)."""
    for name, value in arguments.items():
        if name != "self" and not name.startswith("__"):
            setattr(estimator, name, value)


# ----------------------------------------------------------------------------- docstrings
#: fitted attributes: name -> (numpydoc type, description)
ATTRIBUTES = {
    "classes_": ("ndarray of shape (n_classes,)", "The class labels, sorted."),
    "n_features_in_": ("int", "Number of features seen during ``fit``."),
    "feature_names_in_": ("ndarray of shape (n_features_in_,)",
                          "Names of the features seen during ``fit``; set only when X is a DataFrame with "
                          "string column names."),
    "is_categorical_": ("ndarray of bool of shape (n_features_in_,) or None",
                        "Which features are categorical (``categorical_features``); None when none is."),
    "categories_": ("list of ndarray or None",
                    "Per feature, its sorted categories (None for numeric features); a categorical feature's "
                    "splits send sets of these left. None without categorical features."),
    "rounds_": ("structured ndarray of shape (n_estimators_,)",
                "One record per kept round: ``feature``, ``bin``, ``threshold``, ``missing_left``, ``left``, "
                "``right`` (the stump; for trees, see ``nodes_``), ``alpha`` (the step), ``error``, "
                "``learner_error``, ``edge``, ``cost`` and ``log_cost`` (the algorithm's cost after the round) "
                "and ``val_error`` (NaN without a validation set)."),
    "nodes_": ("structured ndarray of shape (n_estimators_, n_nodes) or None",
               "The tree of every kept round (fields ``feature``, ``bin``, ``threshold``, ``missing_left``, "
               "``left``, ``right``, ``class_``, ``value``, ``gain``, ``weight``); None for decision stumps."),
    "leaf_values_": ("ndarray of shape (n_estimators_, n_nodes, n_classes) or None",
                     "SAMME.R (``leaf=\"real\"``, K > 2 classes, ``multiclass=\"joint\"``): the K values of every "
                     "leaf of every kept tree (``nodes_``), (K - 1) (log p_k - mean_j log p_j) of the leaf's "
                     "smoothed class shares p; AdaBoost.MH (``multiclass=\"mh\"``): 1/2 log((W+_k + d) / "
                     "(W-_k + d)) of the leaf's per-class weights; None for every other "
                     "model."),
    "n_estimators_": ("int", "Number of rounds kept (one-vs-rest: the sum over the per-class models)."),
    "estimator_weights_": ("ndarray of shape (n_estimators_,)",
                           "The step alpha of every kept round (``rounds_[\"alpha\"]``)."),
    "estimator_errors_": ("ndarray of shape (n_estimators_,)",
                          "Weighted error of every kept round's weak hypothesis under the boosting weights "
                          "(``rounds_[\"error\"]``)."),
    "feature_importances_": ("ndarray of shape (n_features_in_,)",
                             "Normalised importances: for stumps, the sum of |alpha| of the (non-constant) "
                             "stumps on each feature; for trees, each tree's split gains per feature "
                             "(normalised per tree) weighted by |alpha|."),
    "validation_errors_": ("ndarray of shape (n_rounds_run,)",
                           "Weighted validation error after every round run, including those after the best "
                           "one; set only when fitted with a validation set."),
    "stopped_early_": ("bool", "Whether ``n_iter_no_change`` ended boosting."),
    "stopped_by_rule_": ("bool",
                         f"Whether the algorithm's stop rule ended boosting before ``n_estimators`` rounds "
                         f"(see {_STOP_RULES})."),
    "initial_cost_": ("float", "The algorithm's cost of the empty ensemble (F = 0)."),
    "objective_": ("float",
                   "The final objective: QuadBoost's quadratic risk sum_i p_i (y_i - F(x_i))**2 plus the "
                   "penalty; LPBoost's and RLP-Boost's LP value rho - sum_i D_i xi_i; RQP-Boost's QP objective."),
    "nu_": ("float", "The nu of the soft-margin LP the weights solve: the one ``nu=\"auto\"`` chose, else ``nu`` "
                     "(0.1 for None) or ``capping`` / n (n: the rows with weight)."),
    "C_": ("float", "The C of the regularised QP the weights solve: the one ``C=\"auto\"`` chose, else ``C``."),
    "lp_time_": ("float", "Seconds spent building the margin matrix and solving the LP / QP (included in "
                             "``fit_time_``; the rest is binning and the weak learners)."),
    "bin_time_": ("float", "Seconds spent binning X (and the validation set)."),
    "fit_time_": ("float", "Seconds spent in ``fit``."),
    "estimators_": ("list of estimators",
                    "One-vs-rest only (K > 2 classes): one fitted binary model per class, in the order of "
                    "``classes_``. A one-vs-rest model itself sets only ``classes_``, ``n_features_in_`` "
                    "(``feature_names_in_``), ``n_estimators_``, ``feature_importances_``, ``fit_time_`` and "
                    "``estimators_``; the per-class models hold the per-round attributes."),
}

_BINARY_ATTRIBUTES = ("classes_", "n_features_in_", "feature_names_in_", "rounds_", "nodes_", "n_estimators_",
                      "estimator_weights_", "estimator_errors_", "feature_importances_", "validation_errors_",
                      "stopped_early_", "stopped_by_rule_", "initial_cost_")
_TIMES = ("bin_time_", "fit_time_", "estimators_")


_WIDTH = 84  # docstring lines, after the class body's indentation


def _wrap(text):
    return textwrap.fill(text, _WIDTH, initial_indent="    ", subsequent_indent="    ", break_on_hyphens=False)


def _section(title, body):
    return f"{title}\n{'-' * len(title)}\n{body}"


_MULTICLASS_OVR = ("With K > 2 classes, one model per class is fitted against the rest (``estimators_``); "
                   "``predict`` takes the class with the top margin and ``predict_proba`` normalises the "
                   "models' probabilities of their class to sum 1.")


def estimator_doc(name, description, *, multiclass=_MULTICLASS_OVR, extra_attributes=(), example_params="",
                  example=""):
    """The numpydoc docstring of the public estimator ``name``.

    ``description``: the summary line, a blank line and the extended summary (any
    indentation); ``multiclass``: a paragraph on K > 2 classes (default: one-vs-rest).
    The Parameters section comes from ``ESTIMATOR_PARAMS[name]``; Attributes are the
    shared ones plus ``extra_attributes``; Examples fit ``name(n_estimators=100,
    example_params)`` on twonorm data, followed by the doctest lines ``example``.
    """
    summary = inspect.cleandoc(description) + "\n\n" + textwrap.fill(" ".join(multiclass.split()), _WIDTH + 4,
                                                                       break_on_hyphens=False)
    summary += "\n\n" + textwrap.fill(f"See {_DOCS} for the rules of every algorithm, the weak learners, "
                                       "the stop rules and validation.", _WIDTH + 4)
    parameters = "\n".join(param.doc_entry(p) for p, param in ESTIMATOR_PARAMS[name].items())
    attributes = "\n".join(f"{a} : {ATTRIBUTES[a][0]}\n{_wrap(ATTRIBUTES[a][1])}"
                           for a in _BINARY_ATTRIBUTES + tuple(extra_attributes) + _TIMES)
    args = "n_estimators=100" + (", " + example_params if example_params else "")
    examples = (f">>> from fastboost import {name}\n"
                ">>> from fastboost.datasets import make_twonorm\n"
                ">>> X, y = make_twonorm(1000, random_state=0)\n"
                f">>> clf = {name}({args}).fit(X[:750], y[:750])\n"
                ">>> clf.score(X[750:], y[750:]) > 0.9\n"
                "True\n"
                ">>> clf.predict_proba(X[:3]).shape\n"
                "(3, 2)")
    if example:
        examples += "\n" + inspect.cleandoc(example)
    text = "\n\n".join([summary, _section("Parameters", parameters), _section("Attributes", attributes),
                         _section("Examples", examples)])
    first, _, rest = text.partition("\n")
    return first + "\n" + textwrap.indent(rest, "    ") + "\n    "
