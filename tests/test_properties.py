"""Property-based tests: every estimator on small drawn data sets is either a clear error or a sound model.

Each example draws an estimator with valid parameters (AdaBoost, VadaBoost, EBBoost, LazyBoost,
SABoost, QuadBoost; max_depth 1-3 where the algorithm has trees; discrete or real leaves; criterion;
lazy feature ranks; min_samples_leaf / min_weight_fraction_leaf; weight trimming; max_bins; validation
sets; seeded feature and row sampling and interaction constraints),
labels (ints, strings, bools, floats, 20-300 classes, a single class), columns (float64, float32, ints, bools,
pandas nullable Int64 / Float64 / boolean with NA, NaN, +-inf, huge and tiny values, ties, duplicate,
constant and all-missing columns) and sample weights (none, zeros, tiny and huge scales, a class with
no weight, and invalid ones: all zero, negative, NaN, inf, the wrong length). Then ``fit`` either
raises a ValueError / TypeError whose message names the problem in plain words (no NumPy reprs such
as ``np.int64(0)``, nothing from numba), or returns a model for which:

- ``classes_`` are the sorted labels; decision values are finite, also on rows of NaN and +-inf;
- ``predict`` returns members of ``classes_`` and agrees with the decision values; ``predict_proba``
  rows are non-negative and sum to 1;
- staged decision values, predictions and probabilities end at the final ones, up to rounding (stumps sum
  step tables; per class model for one-vs-rest);
- the first round's recorded error is the weighted training error of its predictions (discrete
  leaves): the binned training data and the raw-value prediction agree, and every class is its own;
- the recorded cost never increases where the algorithm guarantees it (two-class AdaBoost, LazyBoost,
  VadaBoost, EBBoost, QuadBoost);
- a refit is bit-identical; multiplying ``sample_weight`` by a positive power of two (or passing
  ``np.full(n, c)`` for no weights) leaves the model unchanged bit for bit; a strictly increasing
  transform of one column leaves the model (all but its thresholds) and the training decision values
  unchanged.

Invalid draws (one class, bad weights) must raise. Any other exception is a failure.

Running it:

- ``pytest tests/test_properties.py``: the quick profile, ``fastboost-quick``: a fixed number of
  derandomized examples (reproducible in CI), about 30 s on 2 cores once numba's kernels are compiled
  (the first run compiles them, about a minute, once).
- ``pytest -m slow tests/test_properties.py``: the ``fastboost-slow`` profile, 5 000 random examples
  (``FASTBOOST_PROPERTY_EXAMPLES=500`` for a shorter trial); it must pass.
- ``HYPOTHESIS_PROFILE=fastboost-slow pytest tests/test_properties.py`` runs the quick test with the
  slow profile.

A failure prints the shrunk example as Python code (estimator, X, y, sample_weight); each distinct
defect found this way has a deterministic regression test in ``tests/test_regressions.py``.
"""
import math
import os
import re
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, event, given, note, settings
from hypothesis import strategies as st
from sklearn.base import clone

from fastboost import (
    AdaBoostClassifier,
    EBBoostClassifier,
    LazyBoostClassifier,
    QuadBoostClassifier,
    SABoostClassifier,
    VadaBoostClassifier,
)

try:  # tests/ as a package or as a plain directory on sys.path
    from .test_constraints import assert_monotone
except ImportError:
    from test_constraints import assert_monotone

_HEALTH = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]
settings.register_profile("fastboost-quick", max_examples=250, derandomize=True, deadline=None, database=None,
                          suppress_health_check=_HEALTH, print_blob=True)
settings.register_profile("fastboost-slow", max_examples=int(os.environ.get("FASTBOOST_PROPERTY_EXAMPLES", 5000)),
                          deadline=None, suppress_health_check=_HEALTH, print_blob=True)
QUICK = settings.get_profile(os.environ.get("HYPOTHESIS_PROFILE", "fastboost-quick"))
SLOW = settings.get_profile("fastboost-slow")

F64_MAX = float(np.finfo(np.float64).max)
F64_TINY = float(np.finfo(np.float64).tiny)  # smallest normal
SUBNORMAL = 5e-324
FLOAT_SPECIALS = (0.0, -0.0, 1.0, -1.0, 0.5, 3.0, np.nan, np.inf, -np.inf, 1e300, -1e300, F64_MAX, -F64_MAX,
                  1e-300, -1e-300, SUBNORMAL, -SUBNORMAL, F64_TINY, 1e-310, 1e30, -1e-30)
WEIGHT_SCALES = (1.0, 1e-300, 1e300, 1e-310, 1e-320, 1e308, 2.0 ** -60, 1e30)
NUMPY_REPR = re.compile(r"\bnp\.[A-Za-z_][A-Za-z0-9_]*\(")
UNPLAIN = ("numba", "nopython", "Traceback", "No matching definition", "<class ")

OVR_MAX_CLASSES = 25  # one-vs-rest fits one model per class: keep many-class draws of them cheap


# ----------------------------------------------------------------------------- the case
@dataclass
class Case:
    """One drawn example: what ``fit`` gets, what must hold, and how to reproduce it."""

    est: object
    X: object
    y: object
    sample_weight: object
    eval_rows: object = None  # rows of X, y used as eval_set (their weights too, if drawn)
    eval_weighted: bool = False
    expect_error: tuple = ()  # regexes: this draw is invalid and fit must raise one of them
    transform_col: int = 0
    transform: str = "double"
    scale: float = 2.0

    def fit_kwargs(self, X=None, sample_weight="same"):
        X = self.X if X is None else X
        sw = self.sample_weight if isinstance(sample_weight, str) else sample_weight
        kw = {} if sw is None else {"sample_weight": sw}
        if self.eval_rows is not None:
            Xv = X.iloc[self.eval_rows] if isinstance(X, pd.DataFrame) else X[self.eval_rows]
            yv = np.asarray(self.y)[self.eval_rows]
            if self.eval_weighted and self.sample_weight is not None and len(self.sample_weight) == len(self.y):
                kw["eval_set"] = (Xv, yv, np.asarray(self.sample_weight)[self.eval_rows])
            else:
                kw["eval_set"] = (Xv, yv)
        return kw

    def __repr__(self):
        lines = [f"est = {self.est!r}", f"X = {_code(self.X)}", f"y = {_code(self.y)}",
                 f"sample_weight = {_code(self.sample_weight)}"]
        if self.eval_rows is not None:
            lines.append(f"eval_rows = {_code(np.asarray(self.eval_rows))}  # eval_set = (X[eval_rows], y[eval_rows]"
                         f"{', sample_weight[eval_rows]' if self.eval_weighted else ''})")
        lines.append(f"# expected error: {self.expect_error or 'none'}; transform: {self.transform} of column "
                     f"{self.transform_col}; weight scale: {self.scale}")
        return "\n".join(lines)


def _py(v):
    """A Python literal for one value (NaN, inf and NA spelled as code)."""
    if v is pd.NA:
        return "pd.NA"
    if isinstance(v, (bool, np.bool_)):
        return repr(bool(v))
    if isinstance(v, (float, np.floating)):
        v = float(v)
        if math.isnan(v):
            return "np.nan"
        if math.isinf(v):
            return "np.inf" if v > 0 else "-np.inf"
        return repr(v)
    if isinstance(v, (int, np.integer)):
        return repr(int(v))
    if isinstance(v, np.str_):
        return repr(str(v))
    return repr(v)


def _code(obj):
    """Python code that rebuilds a drawn array, list or DataFrame."""
    if obj is None:
        return "None"
    if isinstance(obj, pd.DataFrame):
        cols = ", ".join(f"{c!r}: pd.array([{', '.join(_py(v) for v in obj[c].tolist())}], dtype={str(obj[c].dtype)!r})"
                         for c in obj.columns)
        return f"pd.DataFrame({{{cols}}})"
    if isinstance(obj, list):
        return "[" + ", ".join(_py(v) for v in obj) + "]"
    a = np.asarray(obj)
    body = repr(_nested(a)).replace("'__NAN__'", "np.nan").replace("'__INF__'", "np.inf") \
        .replace("'__NINF__'", "-np.inf")
    order = ", order='F'" if a.ndim == 2 and not a.flags.c_contiguous else ""
    return f"np.array({body}, dtype={str(a.dtype)!r}{order})"


def _nested(a):
    if a.ndim > 1:
        return [_nested(r) for r in a]
    out = []
    for v in a.tolist():
        if isinstance(v, float) and math.isnan(v):
            out.append("__NAN__")
        elif isinstance(v, float) and math.isinf(v):
            out.append("__INF__" if v > 0 else "__NINF__")
        else:
            out.append(v)
    return out


# ----------------------------------------------------------------------------- strategies
def _float_values(draw, rng, n, earlier, allow_missing=True):
    """float64 values of one column: ties, normal at some scale, special values, constant, a duplicate."""
    patterns = ["ties", "normal", "specials", "constant", "duplicate"] + (["all_missing"] if allow_missing else [])
    pattern = draw(st.sampled_from(patterns))
    if pattern == "duplicate" and not earlier:
        pattern = "ties"
    if pattern == "ties":
        col = rng.integers(0, draw(st.integers(1, 4)), n).astype(np.float64)
    elif pattern == "normal":
        col = rng.standard_normal(n) * draw(st.sampled_from([1.0, 1e300, 1e-300, 1e-310, 1e30, 1e-30, 1e8]))
    elif pattern == "specials":
        pool = draw(st.lists(st.sampled_from(FLOAT_SPECIALS) | st.floats(-1e6, 1e6, allow_nan=False),
                             min_size=1, max_size=6))
        col = np.asarray(pool, dtype=np.float64)[rng.integers(0, len(pool), n)]
    elif pattern == "constant":
        col = np.full(n, draw(st.sampled_from(FLOAT_SPECIALS)), dtype=np.float64)
    elif pattern == "duplicate":
        col = earlier[draw(st.integers(0, len(earlier) - 1))].copy()
    else:
        col = np.full(n, np.nan)
    if allow_missing and pattern != "duplicate":
        frac = draw(st.sampled_from([0.0, 0.0, 0.1, 0.5, 0.9]))
        col[rng.random(n) < frac] = np.nan
    return col


def _int_values(draw, rng, n, earlier, dtype):
    info = np.iinfo(dtype)
    pattern = draw(st.sampled_from(["ties", "wide", "constant", "duplicate"]))
    if pattern == "duplicate" and not earlier:
        pattern = "ties"
    if pattern == "ties":
        return rng.integers(0, draw(st.integers(1, 4)), n).astype(dtype)
    if pattern == "wide":
        return rng.integers(int(info.min), int(info.max), n, dtype=dtype, endpoint=True)
    if pattern == "constant":
        return np.full(n, draw(st.sampled_from([0, 1, int(info.max), int(info.min)])), dtype=dtype)
    return earlier[draw(st.integers(0, len(earlier) - 1))].astype(dtype)


@st.composite
def numpy_X(draw, rng, n, d):
    dtype = draw(st.sampled_from(["float64", "float32", "int64", "bool", "int32", "uint8", "uint64", "int8"]))
    cols = []
    for _ in range(d):
        if dtype in ("float64", "float32"):
            col = _float_values(draw, rng, n, cols)
            if dtype == "float32":
                with np.errstate(over="ignore", under="ignore"):
                    col = col.astype(np.float32)
        elif dtype == "bool":
            col = rng.random(n) < draw(st.sampled_from([0.5, 0.0, 1.0, 0.1]))
        else:
            col = _int_values(draw, rng, n, cols, np.dtype(dtype))
        cols.append(col)
    X = np.column_stack(cols).astype(dtype)
    if draw(st.booleans()):
        X = np.asfortranarray(X)
    return X


@st.composite
def frame_X(draw, rng, n, d):
    string_names = draw(st.booleans())
    data = {}
    earlier = []
    for j in range(d):
        kind = draw(st.sampled_from(["Int64", "Float64", "boolean", "float64", "float32", "int64", "bool", "uint8"]))
        name = f"c{j}" if string_names else j
        na = rng.random(n) < draw(st.sampled_from([0.0, 0.2, 0.6, 1.0]))
        if kind == "Int64":
            vals = _int_values(draw, rng, n, [], np.dtype("int64"))
            col = pd.array(vals, dtype="Int64")
            col[na] = pd.NA
        elif kind == "Float64":
            vals = _float_values(draw, rng, n, earlier, allow_missing=False)
            col = pd.array(vals, dtype="Float64")
            col[na] = pd.NA
        elif kind == "boolean":
            col = pd.array(rng.random(n) < 0.5, dtype="boolean")
            col[na] = pd.NA
        elif kind in ("float64", "float32"):
            vals = _float_values(draw, rng, n, earlier)
            with np.errstate(over="ignore", under="ignore"):
                col = vals.astype(kind)
        elif kind == "bool":
            col = rng.random(n) < 0.5
        else:
            col = _int_values(draw, rng, n, [], np.dtype(kind))
        data[name] = col
        earlier.append(pd.Series(col).to_numpy(dtype=np.float64, na_value=np.nan))
    return pd.DataFrame(data)


def _rarely(draw, k):
    """True about once in k draws (and False when shrinking)."""
    return draw(st.sampled_from([False] * (k - 1) + [True]))


def _distinct(values, bump):
    """The distinct values in order, at least two (a drawn duplicate is bumped instead of filtered)."""
    out = list(dict.fromkeys(values))
    while len(out) < 2:
        out.append(bump(out[-1]))
    return out


def _labels(draw, rng, n, kind, X64):
    """(y, n_classes drawn); y as an array (or a list) of the drawn kind."""
    if kind == "bool":
        values = [False, True]
    elif kind == "str":
        values = _distinct(draw(st.lists(st.text(st.characters(codec="utf-8", exclude_characters="\x00"),
                                                 max_size=3), min_size=2, max_size=5)), lambda v: v + "+")
    elif kind == "float":  # integral values: scikit-learn reads other floats as a regression target
        values = _distinct([float(v) for v in draw(st.lists(st.integers(-10 ** 6, 10 ** 6), min_size=2, max_size=4))],
                           lambda v: v + 1.0)
    else:
        values = _distinct(draw(st.lists(st.integers(-(2 ** 63), 2 ** 63 - 2), min_size=2, max_size=5)),
                           lambda v: v + 1)
    if _rarely(draw, 16):  # a single class: an error
        values = values[:1]
    k = len(values)
    mode = draw(st.sampled_from(["random", "separable", "balanced"]))
    if mode == "separable" and k > 1:  # classes by quantiles of the first column: a tree separates them
        key = np.nan_to_num(X64[:, 0], nan=-np.inf)
        ranks = np.argsort(np.argsort(key, kind="stable"), kind="stable")
        idx = np.minimum(ranks * k // n, k - 1)
    elif mode == "balanced":
        idx = rng.permutation(np.arange(n) % k)
    else:  # every class at least once (if there are enough rows)
        idx = rng.integers(0, k, n)
        idx[rng.permutation(n)[:k]] = np.arange(min(k, n))
    if kind == "str" and draw(st.booleans()):
        y = np.array(values, dtype=object)[idx]
    else:
        y = np.array(values)[idx]
    if _rarely(draw, 6):
        y = y.tolist()
    return y


def _many_class_labels(draw, rng, k):
    """k classes, each at least once, a few of them popular; ints or strings."""
    idx = np.arange(k)
    popular = draw(st.lists(st.integers(0, k - 1), min_size=1, max_size=3))
    extra = [np.full(draw(st.integers(1, 30)), c) for c in popular]
    idx = rng.permutation(np.concatenate([idx, *extra]))
    if draw(st.booleans()):
        return np.array([f"class{c:03d}" for c in range(k)])[idx]
    return (np.arange(k) * 3 - 7)[idx]


def _float64(X):
    if isinstance(X, pd.DataFrame):
        return X.to_numpy(dtype=np.float64, na_value=np.nan)
    return np.asarray(X, dtype=np.float64)


@st.composite
def estimators(draw, n_classes, n_rows):
    """An estimator with valid parameters for this many classes (SAMME or one-vs-rest)."""
    Est = draw(st.sampled_from([AdaBoostClassifier, VadaBoostClassifier, EBBoostClassifier, LazyBoostClassifier,
                                SABoostClassifier, QuadBoostClassifier]))
    if n_classes > OVR_MAX_CLASSES and Est is not AdaBoostClassifier:
        Est = AdaBoostClassifier
    p = {"n_estimators": draw(st.integers(1, 15))}
    trees = Est not in (EBBoostClassifier, LazyBoostClassifier)
    p["max_depth"] = draw(st.sampled_from([1, 2, 3])) if trees else 1
    if Est in (AdaBoostClassifier, VadaBoostClassifier):
        p["leaf"] = draw(st.sampled_from(["discrete", "real"]))
    if Est is not EBBoostClassifier:
        p["criterion"] = draw(st.sampled_from(["error", "gini"]))
    if n_classes > OVR_MAX_CLASSES:
        p["leaf"] = draw(st.sampled_from(["discrete", "real"]))  # SAMME, SAMME.R or AdaBoost.MH (one model)
        p["multiclass"] = draw(st.sampled_from(["joint", "mh"])) if p["leaf"] == "real" else "joint"
    elif Est is AdaBoostClassifier and n_classes > 2:
        p["multiclass"] = draw(st.sampled_from(["auto", "auto", "joint", "ovr"]
                                               + (["mh"] if p.get("leaf") == "real" else [])))
    if Est is AdaBoostClassifier and p.get("leaf") == "real" and p.get("multiclass") != "joint":
        p["loss"] = draw(st.sampled_from(["exponential", "logistic"]))  # (SAMME.R has no logistic form)
    if trees and _rarely(draw, 4):
        p["min_samples_leaf"] = draw(st.sampled_from([1, 2, 5]))
        p["min_weight_fraction_leaf"] = draw(st.sampled_from([0.0, 0.1, 0.3, 0.5]))
    if Est is VadaBoostClassifier:
        p["lam"] = draw(st.sampled_from([0.0, 0.5, 1.0]) | st.floats(0.0, 1.0))
    elif Est is EBBoostClassifier:
        p["lam"] = draw(st.sampled_from([0.0, 0.5, 1.0, 3.0, 1e6]))
    elif Est is SABoostClassifier:
        p["gamma"] = draw(st.sampled_from([1.0, 0.5, 1.5, 0.1, 10.0]))
        p["schedule"] = draw(st.sampled_from(["inverse", "power", "constant"]))
    elif Est is QuadBoostClassifier:
        p["penalty"] = draw(st.sampled_from([None, "l1", "l2", "linf"]))
        p["lam"] = draw(st.sampled_from([0.0, 1e-3, 0.1, 1.0, 10.0]))
        p["alpha_max"] = draw(st.sampled_from([1.0, 0.1, 5.0]))
        p["reweight_every"] = draw(st.sampled_from([None, 1, 2, 5]))
        p["reweight_at_end"] = draw(st.booleans())
    # SAMME or SAMME.R: one model for all K > 2 classes (not one-vs-rest)
    samme = Est is AdaBoostClassifier and n_classes > 2 and (p.get("multiclass") in ("joint", "mh") or (
        p.get("multiclass") == "auto" and p.get("leaf") == "discrete"))
    plain_stumps = (p["max_depth"] == 1 and p.get("leaf", "discrete") == "discrete"
                    and p.get("min_samples_leaf", 1) == 1 and p.get("min_weight_fraction_leaf", 0.0) == 0.0
                    and not samme)
    if Est is LazyBoostClassifier:
        p["feature_rank"] = draw(st.integers(1, 3))
    elif plain_stumps and _rarely(draw, 4):
        p["feature_rank"] = draw(st.integers(1, 3))
    if Est is not QuadBoostClassifier and _rarely(draw, 4):
        p["weight_trim_rate"] = draw(st.sampled_from([0.5, 0.9, 0.99, 1.0]) | st.floats(0.01, 1.0))
    p["max_bins"] = draw(st.sampled_from([255, 255, 2, 3, 16]))
    p["n_jobs"] = draw(st.sampled_from([1, 1, None, 2]))  # threads spin on a busy machine: mostly 1
    p["random_state"] = draw(st.sampled_from([None, 0, 12345]))
    if _rarely(draw, 4):  # seeded feature and row sampling, interaction constraints (seeded: a refit is the same)
        p["colsample_bytree"] = draw(st.sampled_from([1.0, 0.5, 0.01]))
        p["colsample_bynode"] = draw(st.sampled_from([1.0, 0.5]))
        p["subsample"] = draw(st.sampled_from([1.0, 0.6, 0.02]))
        if Est not in (EBBoostClassifier, QuadBoostClassifier) and p.get("multiclass") != "mh":
            p["bootstrap"] = draw(st.booleans())
        if _rarely(draw, 3):
            p["interaction_constraints"] = [[0]]
        if p["random_state"] is None:
            p["random_state"] = 7
    return Est(**p), samme


@st.composite
def sample_weights(draw, rng, n, y_idx):
    """(sample_weight, expected error regexes); None means no weights."""
    valid = ["none", "random", "integers", "scaled", "one_positive", "class_unweighted"]
    mode = draw(st.sampled_from(valid * 3 + ["all_zero", "negative", "nan", "inf", "wrong_length"]))
    if mode == "none":
        return None, ()
    scale = draw(st.sampled_from(WEIGHT_SCALES))
    if mode == "random":
        sw = rng.random(n)
    elif mode == "integers":
        sw = rng.integers(0, 4, n).astype(np.float64)
        sw[rng.integers(0, n)] = 1.0
    elif mode == "scaled":
        sw = rng.random(n) * scale
        sw[rng.random(n) < 0.3] = 0.0
        sw[rng.integers(0, n)] = scale
    elif mode == "one_positive":
        sw = np.zeros(n)
        sw[rng.integers(0, n)] = scale
    elif mode == "class_unweighted":  # every row of one class has weight 0
        sw = np.full(n, scale)
        sw[y_idx == y_idx[0]] = 0.0
        if not np.any(sw > 0):
            sw[0] = scale
    elif mode == "all_zero":
        return np.zeros(n), (r"sample_weight",)
    elif mode == "negative":
        sw = rng.random(n)
        sw[rng.integers(0, n)] = -draw(st.sampled_from([1.0, 1e-300, 1e300]))
        return sw, (r"sample_weight",)
    elif mode == "nan":
        sw = rng.random(n)
        sw[rng.integers(0, n)] = np.nan
        return sw, (r"sample_weight",)
    elif mode == "inf":
        sw = rng.random(n)
        sw[rng.integers(0, n)] = np.inf
        return sw, (r"sample_weight",)
    else:
        return np.ones(n + draw(st.sampled_from([1, -1]))), (r"sample_weight",)
    if _rarely(draw, 5):
        with np.errstate(over="ignore", under="ignore"):
            sw32 = sw.astype(np.float32)
        if np.all(np.isfinite(sw32)) and np.any(sw32 > 0):
            return sw32, ()
    return sw, ()


@st.composite
def cases(draw):
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    label_kind = draw(st.sampled_from(["int", "str", "bool", "float", "many"]))
    if label_kind == "many":
        k = draw(st.integers(20, 300))
        y = _many_class_labels(draw, rng, k)
        n = y.shape[0]
    else:
        n = draw(st.integers(2, 60))
    d = draw(st.integers(1, 5))
    X = draw(frame_X(rng, n, d) if _rarely(draw, 4) else numpy_X(rng, n, d))
    X64 = _float64(X)
    if label_kind != "many":
        y = _labels(draw, rng, n, label_kind, X64)
    classes, y_idx = np.unique(np.asarray(y), return_inverse=True)
    expect = ()
    if classes.shape[0] < 2:
        expect += (r"2 classes|one class|1 class|single class",)
    est, samme = draw(estimators(classes.shape[0], n))
    sw, sw_expect = draw(sample_weights(rng, n, y_idx))
    expect += sw_expect
    case = Case(est, X, y, sw, expect_error=expect)
    # validation sets: two classes or SAMME (one-vs-rest has none)
    if classes.shape[0] == 2 or samme:
        mode = draw(st.sampled_from(["none", "none", "none", "eval_set", "fraction"]))
        if mode == "eval_set":
            case.eval_rows = np.sort(rng.choice(n, draw(st.integers(1, n)), replace=False))
            case.eval_weighted = draw(st.booleans())
        elif mode == "fraction":
            est.set_params(validation_fraction=draw(st.sampled_from([0.25, 0.5, 0.1])),
                           random_state=draw(st.integers(0, 100)))
        if mode != "none":
            est.set_params(n_iter_no_change=draw(st.sampled_from([None, 1, 3])))
    case.transform_col = draw(st.integers(0, d - 1))
    case.transform = draw(st.sampled_from(["double", "affine", "arctan", "cube_root_shift"]))
    case.scale = draw(st.sampled_from([2.0, 0.5, 8.0, 0.125]))
    if isinstance(X, np.ndarray) and _rarely(draw, 4):  # (numeric columns: any of them may be constrained)
        est.set_params(monotone_constraints=draw(st.lists(st.sampled_from([-1, 0, 1]), min_size=d, max_size=d)))
        if "monotone_steps" in est.get_params() and draw(st.booleans()):  # (AdaBoost: "auto" steps back)
            est.set_params(monotone_steps="forward")
    return case


# ----------------------------------------------------------------------------- checks
def _fit(est, X, y, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(X, y, **kw)


def _call(f, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = f(*args)
        return list(out) if not isinstance(out, np.ndarray) else out


def assert_plain_message(e):
    msg = str(e)
    assert msg.strip(), f"{type(e).__name__} without a message"
    assert not NUMPY_REPR.search(msg), f"the message shows a NumPy repr: {msg!r}"
    for word in UNPLAIN:
        assert word not in msg, f"the message shows {word!r}: {msg!r}"


def _field_equal(a, b, name):
    if a.dtype.kind == "f":
        return np.array_equal(a, b, equal_nan=True) and np.array_equal(np.signbit(a), np.signbit(b))
    return np.array_equal(a, b)


def assert_same_model(a, b, what, ignore=()):
    """Bit-identical fitted models (rounds_, nodes_ and the per-fit values), field by field."""
    assert type(a) is type(b)
    np.testing.assert_array_equal(a.classes_, b.classes_, err_msg=what)
    assert hasattr(a, "estimators_") == hasattr(b, "estimators_"), what
    if hasattr(a, "estimators_"):
        assert len(a.estimators_) == len(b.estimators_), what
        for k, (ma, mb) in enumerate(zip(a.estimators_, b.estimators_)):
            assert_same_model(ma, mb, f"{what}, class model {k}", ignore)
        return
    assert a.n_estimators_ == b.n_estimators_, f"{what}: {a.n_estimators_} vs {b.n_estimators_} rounds"
    for name in a.rounds_.dtype.names:
        if name not in ignore:
            assert _field_equal(a.rounds_[name], b.rounds_[name], name), \
                f"{what}: rounds_[{name!r}] differ:\n{a.rounds_[name]}\n{b.rounds_[name]}"
    assert (a.nodes_ is None) == (b.nodes_ is None), what
    va, vb = getattr(a, "leaf_values_", None), getattr(b, "leaf_values_", None)
    assert (va is None) == (vb is None), what
    if va is not None:
        assert _field_equal(va, vb, "leaf_values_"), f"{what}: leaf_values_ differ"
    if a.nodes_ is not None:
        assert a.nodes_.shape == b.nodes_.shape, what
        for name in a.nodes_.dtype.names:
            if name not in ignore:
                assert _field_equal(a.nodes_[name], b.nodes_[name], name), f"{what}: nodes_[{name!r}] differ"
    for attr in ("validation_errors_", "initial_cost_", "objective_", "stopped_early_", "stopped_by_rule_"):
        if hasattr(a, attr) or hasattr(b, attr):
            va, vb = np.asarray(getattr(a, attr)), np.asarray(getattr(b, attr))
            assert _field_equal(va, vb, attr), f"{what}: {attr} differ: {va} vs {vb}"


def _binary_models(model, y):
    """(binary model, its labels) pairs: the model itself, or the one-vs-rest class models."""
    if hasattr(model, "estimators_"):
        return [(m, np.where(np.asarray(y) == c, 1, 0)) for c, m in zip(model.classes_, model.estimators_)]
    return [(model, np.asarray(y))]


def check_staged(m, X, D, P, pred):
    staged = _call(m.staged_decision_function, X)
    assert len(staged) == m.n_estimators_
    if staged:
        # stumps: decision_function sums per-feature step tables, the staged values round by round: equal up
        # to rounding (deeper trees: bit for bit); a label may differ only where the margin rounds to about 0
        tol = 1e-12 * max(1.0, float(np.abs(m.rounds_["alpha"]).sum()))
        np.testing.assert_allclose(staged[-1], D, rtol=1e-12, atol=tol,
                                   err_msg="the last staged decision values are not the final ones")
        top = np.sort(D, axis=1) if D.ndim == 2 else None
        clear = top[:, -1] - top[:, -2] > 2 * tol if D.ndim == 2 else np.abs(D) > tol
        np.testing.assert_array_equal(_call(m.staged_predict, X)[-1][clear], pred[clear])
        np.testing.assert_allclose(_call(m.staged_predict_proba, X)[-1], P, rtol=1e-9, atol=1e-12)
    else:
        assert np.all(D == 0.0), "an empty ensemble has nonzero decision values"


def check_first_round(m, X, y, p):
    """The first round's recorded error is the p-weighted training error of its predictions."""
    if isinstance(m, QuadBoostClassifier) or getattr(m, "leaf", "discrete") != "discrete" or m.n_estimators_ == 0:
        return
    first = next(iter(_call(m.staged_predict, X)))
    err = float(np.sum(p[first != y]))
    recorded = float(m.rounds_["error"][0])
    assert math.isclose(recorded, err, rel_tol=1e-9, abs_tol=1e-12), \
        f"round 1 records error {recorded!r}, but its predictions have weighted training error {err!r}"


def check_cost(m):
    """Two-class AdaBoost / LazyBoost, VadaBoost, EBBoost, QuadBoost: the cost never increases."""
    if isinstance(m, SABoostClassifier) or (isinstance(m, AdaBoostClassifier) and m.classes_.shape[0] > 2):
        return
    log_cost = np.r_[math.log(m.initial_cost_), m.rounds_["log_cost"]]
    assert not np.any(np.isnan(log_cost) | (log_cost == np.inf)), f"log costs: {log_cost}"  # -inf: a cost of 0
    with np.errstate(invalid="ignore"):  # -inf - -inf
        rises = np.diff(log_cost) > 1e-9 * np.maximum(1.0, np.abs(log_cost[:-1]))
    assert not np.any(rises), f"the cost rises: {np.exp(log_cost)}"


def check_model(case, model, y, p):
    X = case.X
    classes = np.unique(np.asarray(y))
    np.testing.assert_array_equal(model.classes_, classes)
    k = classes.shape[0]
    X64 = _float64(X)
    d = X64.shape[1]
    probe = np.vstack([X64, np.full((1, d), np.nan), np.full((1, d), np.inf), np.full((1, d), -np.inf),
                       np.zeros((1, d))])
    for Z in (X, probe):
        D = _call(model.decision_function, Z)
        assert D.shape == ((Z.shape[0],) if k == 2 else (Z.shape[0], k))
        assert np.all(np.isfinite(D)), f"decision values not finite: {D}"
        pred = _call(model.predict, Z)
        assert pred.shape == (Z.shape[0],)
        assert np.all(np.isin(pred, model.classes_)), f"predict returns labels outside classes_: {pred}"
        expected = model.classes_[np.argmax(D, axis=1)] if k > 2 else model.classes_[(D > 0).astype(int)]
        np.testing.assert_array_equal(pred, expected, err_msg="predict disagrees with decision_function")
        P = _call(model.predict_proba, Z)
        assert P.shape == (Z.shape[0], k)
        assert np.all(np.isfinite(P)) and np.all(P >= 0), f"predict_proba not in [0, inf): {P}"
        np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=0, atol=1e-9, err_msg="predict_proba rows")
    for m, yb in _binary_models(model, y):
        Dm = _call(m.decision_function, X)
        check_staged(m, X, Dm, _call(m.predict_proba, X), _call(m.predict, X))
        check_cost(m)
        if model.get_params()["validation_fraction"] is None:
            check_first_round(m, X, yb, p)


def _distribution(sw, n):
    sw = np.ones(n) if sw is None else np.asarray(sw, dtype=np.float64)
    q = sw / sw.max()
    return q / q.sum()


def _scaled_weights(sw, n, c):
    """sw * c if that is exact for every weight (a power of two away from overflow and underflow)."""
    base = np.ones(n) if sw is None else np.asarray(sw, dtype=np.float64)
    with np.errstate(over="ignore", under="ignore"):
        scaled = base * c
        exact = np.all(np.isfinite(scaled)) and np.array_equal(scaled / c, base)
    return scaled if exact else None


TRANSFORMS = {
    "double": lambda x: 2.0 * x,
    "affine": lambda x: 2.0 * x + 1.0,
    "arctan": np.arctan,
    "cube_root_shift": lambda x: np.cbrt(x) - 3.0,
}


def transformed(case):
    """(name, X as float64 with one column passed through a strictly increasing map, exact), or None.

    The drawn map is used if rounding keeps the column's distinct values distinct and in order, else the
    doubling. Only rows with positive weight are training rows for the bin edges (thresholds are midpoints
    between their values): rows with weight 0 and held-out rows keep their side of every threshold only
    under an exact doubling (no subnormal or overflowing values), ``exact``. With ``validation_fraction``
    only that is tried."""
    X64 = _float64(case.X)
    col = X64[:, case.transform_col]
    values = np.unique(col[~np.isnan(col)])
    finite = np.abs(values[np.isfinite(values) & (values != 0)])
    exact_double = not finite.size or (finite.min() >= 2.0 ** -1020 and finite.max() <= 2.0 ** 1020)
    names = [case.transform, "double"]
    if case.est.get_params()["validation_fraction"] is not None:
        if not exact_double:
            return None
        names = ["double"]
    for name in names:
        with np.errstate(over="ignore", invalid="ignore"):
            new = TRANSFORMS[name](values)
            if values.size and not (np.all(np.diff(new) > 0) and not np.any(np.isnan(new))):
                continue
            Xt = X64.copy()
            Xt[:, case.transform_col] = TRANSFORMS[name](col)
        return name, Xt, name == "double" and exact_double
    return None


def run_case(case):
    note(repr(case))
    est = case.est
    try:
        model = _fit(clone(est), case.X, case.y, **case.fit_kwargs())
    except (ValueError, TypeError) as e:
        event(f"error: {type(e).__name__}")
        note(f"fit raised {type(e).__name__}: {e}")
        assert_plain_message(e)
        if case.expect_error:
            assert any(re.search(pat, str(e)) for pat in case.expect_error), \
                f"expected an error about {case.expect_error}, got {e}"
        return
    assert not case.expect_error, f"fit accepted an invalid input (expected an error about {case.expect_error})"
    event("fitted" + (" one-vs-rest" if hasattr(model, "estimators_") else ""))
    n = len(case.y)
    p = _distribution(case.sample_weight, n)
    check_model(case, model, case.y, p)
    constraints = est.get_params()["monotone_constraints"]
    if constraints is not None:
        assert_monotone(model, _float64(case.X), np.asarray(constraints), np.random.default_rng(0), n_rows=3)

    refit = _fit(clone(est), case.X, case.y, **case.fit_kwargs())
    assert_same_model(model, refit, "a refit")
    np.testing.assert_array_equal(_call(refit.decision_function, case.X), _call(model.decision_function, case.X))

    scaled = _scaled_weights(case.sample_weight, n, case.scale)
    if scaled is not None:
        other = _fit(clone(est), case.X, case.y, **case.fit_kwargs(sample_weight=scaled))
        assert_same_model(model, other, f"sample_weight * {case.scale}")
        np.testing.assert_array_equal(_call(other.decision_function, case.X), _call(model.decision_function, case.X))

    t = transformed(case)
    if t is None:
        event("no increasing transform keeps the values apart")
        return
    name, Xt, exact = t
    other = _fit(clone(est), Xt, case.y, **case.fit_kwargs(X=Xt))
    what = f"{name} of column {case.transform_col}"
    assert_same_model(model, other, what, ignore=("threshold",))
    rows = slice(None) if exact or case.sample_weight is None else np.asarray(case.sample_weight) > 0
    np.testing.assert_array_equal(_call(other.decision_function, Xt)[rows],
                                  _call(model.decision_function, case.X)[rows],
                                  err_msg=f"training decision values change under the {what}")
    np.testing.assert_array_equal(_call(other.predict, Xt)[rows], _call(model.predict, case.X)[rows])


# ----------------------------------------------------------------------------- the tests
@QUICK
@given(case=cases())
def test_fit_is_a_sound_model_or_a_plain_error(case):
    run_case(case)


@pytest.mark.slow
@SLOW
@given(case=cases())
def test_fit_is_a_sound_model_or_a_plain_error_slow(case):
    run_case(case)
