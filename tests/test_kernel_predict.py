"""Prediction (fastboost/_kernels/predict.py and the estimators' decision_function) against the naive
NumPy reference (tests/naive.py)."""
import numpy as np
import pytest

import fastboost
from fastboost import _steps
from fastboost._binning import BinMapper
from fastboost._kernels.predict import add_level_trees, add_steps, add_stump, add_trees
from fastboost._types import NO_VALUES
from fastboost._validation import read_only

try:  # tests/ as a package or as a plain directory on sys.path
    from . import naive
    from .kernel_cases import SIZES, case, random_rounds, random_trees
except ImportError:
    import naive
    from kernel_cases import SIZES, case, random_rounds, random_trees


def goes_left_naive(x, r):
    """NumPy's value_goes_left: x <= threshold, NaN to the missing side; categorical: x truncated to a category
    index 0 .. 255 in the left set, NaN and other values to the missing side."""
    x = x.astype(np.float64)
    if r["categorical"]:
        inside = (x > -1) & (x < 256)
        c = np.where(inside, x, 0).astype(np.int64)
        bit = (r["cat_left"][c >> 6] >> (c & 63).astype(np.uint64)) & np.uint64(1)
        return np.where(inside, bit != 0, bool(r["missing_left"]))
    return np.where(np.isnan(x), bool(r["missing_left"]), x <= float(r["threshold"]))


def stump_sum_naive(X, rounds, left, right):
    """sum_t (left[t] if stump t goes left else right[t]), float64[n, K], in round order."""
    out = np.zeros((X.shape[0], left.shape[1]))
    for t, r in enumerate(rounds):
        out += np.where(goes_left_naive(X[:, r["feature"]], r)[:, None], left[t], right[t])
    return out


def step_rounds(rng, mapper, n_rounds):
    """random_rounds on features 0 .. 5 (6 and 7 never used), over 48 thresholds on feature 5, duplicate ones, a NaN
    threshold,
    constant stumps, and categorical stumps on feature 0 (a category index per value)."""
    rounds = random_rounds(rng, mapper, n_rounds)
    rounds["feature"] %= 6
    rounds["feature"][40:] = 5  # many thresholds on one feature (a binary search instead of compares)
    rounds["threshold"][40:] = np.round(rng.normal(size=n_rounds - 40), 2)
    rounds["threshold"][2:6] = rounds["threshold"][6]  # duplicates
    rounds["threshold"][7] = np.nan
    rounds["right"][8:10] = rounds["left"][8:10]  # constant
    cat = rounds["feature"] == 0
    rounds["categorical"][cat] = 1
    rounds["threshold"][cat] = np.nan
    rounds["cat_left"][cat] = rng.integers(0, 2 ** 63, (int(cat.sum()), 4), dtype=np.uint64)
    return rounds


@pytest.mark.parametrize("n", SIZES)
def test_step_tables_match_the_stumps_sum(n):
    """decision values from the step tables (add_steps) equal the stump-by-stump sum up to rounding, for one and
    for K outputs, float32 and float64 X; X holds ties at thresholds, NaN, ±inf, and category indices outside
    0 .. 255 (missing)."""
    X, mapper, _, _, _ = case(n, 17)
    rng = np.random.default_rng(n + 2)
    T = 140
    rounds = step_rounds(rng, mapper, T)
    X = X.copy()
    X[:, 0] = rng.choice([0, 1, 2, 5.5, 63, 64, 200, 255, 255.5, 256, -0.5, -1, -3, np.nan], n)
    X[::3, 5] = rng.choice(rounds["threshold"][40:], X[::3, 5].shape[0])  # ties at its thresholds
    assert np.unique(rounds["threshold"][rounds["feature"] == 5]).shape[0] > 48
    with np.errstate(over="ignore"):
        X32 = np.ascontiguousarray(X.astype(np.float32))
    K = 3
    vec = rng.normal(size=(T, 2, K))
    for left, right in (((rounds["alpha"] * rounds["left"])[:, None], (rounds["alpha"] * rounds["right"])[:, None]),
                        (vec[:, 0], vec[:, 1])):
        left[8:10] = right[8:10]
        sp = _steps.Splits(feature=rounds["feature"], threshold=rounds["threshold"],
                           missing_left=rounds["missing_left"] != 0, categorical=rounds["categorical"] != 0,
                           cat_left=rounds["cat_left"], left=left, right=right, constant=np.zeros(left.shape[1]),
                           index=np.arange(T))
        tables = _steps.build(sp)
        scale = np.abs(left).sum() + np.abs(right).sum()
        for Xd in (read_only(np.ascontiguousarray(X)), read_only(X32)):  # read-only, as predict hands the kernels
            out = np.zeros((n, left.shape[1], 1))
            add_steps(Xd, tables, out)
            np.testing.assert_allclose(out[:, :, 0], stump_sum_naive(Xd, rounds, left, right), rtol=1e-12,
                                       atol=1e-13 * scale)
    margin = np.zeros(n)
    for t in range(rounds.shape[0]):  # the staged kernel: the stumps' sum in round order, bit for bit
        add_stump(read_only(np.ascontiguousarray(X)), rounds, t, margin)
    np.testing.assert_array_equal(margin, stump_sum_naive(X, rounds, *(rounds["alpha"][:, None] * rounds[s][:, None]
                                                                         for s in ("left", "right")))[:, 0])


@pytest.mark.skipif(np.finfo(np.longdouble).nmant < 63, reason="long double is no wider than float64 here")
def test_step_tables_sum_as_if_exactly_then_rounded_once():
    """The compensated sums: a decision value is the stumps' exact sum rounded once (math.fsum of the terms), so it
    does not depend on how the stumps fall into features. The first case is a one-vs-rest fit's near-tie: both
    classes' stumps sum to exactly 1/3 (as floats), but on feature tables added naively one came out a unit in the
    last place lower, and predict and predict_proba then disagreed on the row."""
    import math

    third, third_up = 0.3333333333333333, 0.33333333333333337
    X = np.array([[-1.0, -1.0]])
    for feature, alpha, sign in (([0, 1, 1], [third_up, third, third_up], [1.0, -1.0, -1.0]),
                                 ([0, 0, 1], [third, third, third], [-1.0, -1.0, 1.0])):
        left = (np.array(alpha) * np.array(sign))[:, None]
        sp = _steps.Splits(feature=np.array(feature), threshold=np.zeros(3), missing_left=np.zeros(3, bool),
                           categorical=np.zeros(3, bool), cat_left=np.zeros((3, 4), np.uint64), left=left,
                           right=-left, constant=np.zeros(1), index=np.arange(3))
        out = np.zeros((1, 1, 1))
        add_steps(read_only(X), _steps.build(sp), out)
        assert out[0, 0, 0] == math.fsum(left[:, 0]) == -third
    n, T = 300, 140
    X, mapper, _, _, _ = case(n, 17)
    rng = np.random.default_rng(5)
    rounds = step_rounds(rng, mapper, T)
    X = np.ascontiguousarray(X)
    X[:, 0] = rng.choice([0, 1, 2, 63, 64, 255, np.nan], n)
    left, right = rng.normal(size=(T, 1)) * 10.0 ** rng.integers(-8, 8, (T, 1)), rng.normal(size=(T, 1))
    sp = _steps.Splits(feature=rounds["feature"], threshold=rounds["threshold"],
                       missing_left=rounds["missing_left"] != 0, categorical=rounds["categorical"] != 0,
                       cat_left=rounds["cat_left"], left=left, right=right, constant=np.zeros(1), index=np.arange(T))
    out = np.zeros((n, 1, 1))
    add_steps(read_only(X), _steps.build(sp), out)
    exact = [math.fsum(np.where(goes_left_naive(X[i:i + 1, r["feature"]], r), left[t], right[t])[0]
                       for t, r in enumerate(rounds)) for i in range(n)]
    np.testing.assert_array_equal(out[:, 0, 0], exact)


@pytest.fixture(scope="module")
def fitted(replay_data):
    X, y = replay_data
    return fastboost.AdaBoostClassifier(n_estimators=20).fit(X, y)


def test_estimator_decision_function_matches_naive(fitted, replay_data):
    X, _ = replay_data
    rng = np.random.default_rng(4)
    Xt = np.vstack([X, rng.integers(-1, 11, (100, X.shape[1])) + rng.choice([0, 0.5], (100, X.shape[1]))])
    Xt[rng.random(Xt.shape) < 0.1] = np.nan
    Xt[0, :] = np.nan
    Xt[1, :] = np.inf
    Xt[2, :] = -np.inf
    for Xd in (Xt, Xt.astype(np.float32), np.asfortranarray(Xt)):
        got = fitted.decision_function(Xd)
        scale = np.abs(fitted.rounds_["alpha"]).sum()
        np.testing.assert_allclose(got, naive.decision_function_naive(Xd, fitted.rounds_), rtol=1e-12,
                                   atol=1e-14 * scale)
        staged = list(fitted.staged_decision_function(Xd))  # round by round: the naive sum's order, bit for bit
        assert len(staged) == fitted.n_estimators_
        np.testing.assert_array_equal(staged[-1], naive.decision_function_naive(Xd, fitted.rounds_))
        np.testing.assert_array_equal(staged[4], naive.decision_function_naive(Xd, fitted.rounds_[:5]))


def test_prediction_agrees_with_binned_outputs(fitted, replay_data):
    """Raw-threshold prediction equals the binned stump outputs on the training rows."""
    X, _ = replay_data
    mapper = BinMapper(max_bins=255).fit(X)
    codes = mapper.transform(X)
    margin = np.zeros(X.shape[0])
    for r in fitted.rounds_:
        h = naive.stump_outputs_naive(codes[r["feature"]], r["bin"], r["missing_left"], 255,
                                      r["left"], r["right"])
        margin = margin + r["alpha"] * h
    np.testing.assert_allclose(fitted.decision_function(X), margin, rtol=1e-12,
                               atol=1e-14 * np.abs(fitted.rounds_["alpha"]).sum())


def _level_trees_match_add_trees(dtype):
    rng = np.random.default_rng(5)
    X = read_only(rng.choice([-np.inf, np.inf, np.nan, -2.0, -0.5, 0.0, 0.5, 1.0, 1.25], (300, 4)).astype(dtype))
    for depth, n_classes, vector in ((3, 2, False), (2, 3, False), (3, 3, True)):
        nodes, rounds = random_trees(rng, 7, depth, 4, n_classes)
        values = rng.normal(size=(7, nodes.shape[1], n_classes)) if vector else NO_VALUES
        K = 1 if n_classes == 2 else n_classes
        want = np.zeros((X.shape[0], K))
        add_trees(X, nodes, rounds, values, n_classes, want)
        got = np.zeros((X.shape[0], K))
        add_level_trees(X, _steps.level_trees(nodes, rounds, values, n_classes), got)
        # the trees added in the same order; alpha * leaf value is rounded once, where add_trees' multiply-add
        # may be fused: equal to rounding
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13 * np.abs(rounds["alpha"]).sum())


def test_level_trees_match_add_trees():
    """Level-order trees (add_level_trees) give add_trees' values (to rounding): leaves above the full depth,
    ties at thresholds, NaN to either side, ±inf, two classes, SAMME's class leaves and K-vector leaves."""
    _level_trees_match_add_trees(np.float64)


@pytest.mark.slow
def test_level_trees_match_add_trees_float32():
    _level_trees_match_add_trees(np.float32)
