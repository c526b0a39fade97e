"""Regression tests: the smallest inputs on which tests/test_properties.py found a defect, one test per defect.

Each test is deterministic and states the behaviour the property suite requires on that input.
"""
import re
import warnings

import numpy as np
import pytest

from fastboost import (
    AdaBoostClassifier,
    EBBoostClassifier,
    QuadBoostClassifier,
    VadaBoostClassifier,
)
from fastboost._binning import bin_edges

NUMPY_REPR = re.compile(r"\bnp\.[A-Za-z_][A-Za-z0-9_]*\(")


def _fit(est, X, y, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # e.g. the empty-ensemble UserWarning
        return est.fit(X, y, **kw)


# ----------------------------------------------------------------------------- more than 255 classes
def test_300_classes_predict_the_majority_class():
    """SAMME with 300 classes: a class index must not wrap around at 256 (class 299 became class 43)."""
    y = np.r_[np.arange(300), np.full(20, 299)]
    X = np.zeros((y.size, 1))
    model = _fit(AdaBoostClassifier(n_estimators=3), X, y)
    assert model.decision_function(X).shape == (320, 300)
    np.testing.assert_array_equal(model.predict(X), np.full(320, 299))
    assert model.rounds_["error"][0] == pytest.approx(1 - 21 / 320)


@pytest.mark.parametrize("max_depth", [1, 2])
def test_classes_beyond_255_are_their_own(max_depth):
    """A tree that separates 260 classes by one feature names each class, including those past index 255."""
    y = np.arange(260)
    X = y[:, None].astype(np.float64)
    model = _fit(AdaBoostClassifier(n_estimators=1, max_depth=max_depth), X, y)
    first = next(model.staged_predict(X))
    recorded = model.rounds_["error"][0]
    assert recorded == pytest.approx(np.mean(first != y), abs=1e-12)
    assert set(model.predict(X)) <= set(y)
    assert np.all(model.nodes_["class_"] < 260)


# ----------------------------------------------------------------------------- QuadBoost's trees
@pytest.mark.parametrize("max_depth", [2, 3])
def test_quadboost_trees_on_separable_data_fit_exactly(max_depth):
    """A least-squares tree fits separable labels exactly (residuals 0): the next round must stop, not divide
    by zero."""
    X = np.arange(6.0)[:, None]
    y = np.array([0, 0, 0, 1, 1, 1])
    model = _fit(QuadBoostClassifier(n_estimators=3, max_depth=max_depth, min_samples_leaf=1), X, y)  # leaves of a row
    np.testing.assert_array_equal(model.predict(X), y)
    np.testing.assert_allclose(model.decision_function(X), 2.0 * y - 1.0, atol=1e-12)
    assert model.objective_ == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize("params", [{"max_depth": 2}, {"max_depth": 3}, {"max_depth": 1, "min_samples_leaf": 2}],
                         ids=["depth2", "depth3", "depth1-min_samples_leaf2"])
@pytest.mark.parametrize("X", [np.zeros((4, 1)), np.full((4, 1), np.nan)], ids=["constant", "all-nan"])
def test_quadboost_trees_on_constant_X_predict_the_majority(params, X):
    """Constant or all-missing X: the tree is one leaf (the mean residual); then every residual is the same."""
    y = np.array([0, 1, 1, 1])
    model = _fit(QuadBoostClassifier(n_estimators=3, **params), X, y)
    assert np.all(np.isfinite(model.decision_function(X)))
    np.testing.assert_array_equal(model.predict(X), np.ones(4, dtype=int))


@pytest.mark.parametrize("max_depth", [2, 3])
def test_quadboost_trees_on_two_rows(max_depth):
    X = np.array([[0.0], [1.0]])
    y = np.array(["a", "b"])
    model = _fit(QuadBoostClassifier(n_estimators=5, max_depth=max_depth, min_samples_leaf=1), X, y)
    np.testing.assert_array_equal(model.predict(X), y)


# ----------------------------------------------------------------------------- EBBoost with lam = 1
@pytest.mark.parametrize("X", [np.zeros((4, 1)), np.full((4, 1), np.nan)], ids=["constant", "all-nan"])
def test_ebboost_lam_1_on_constant_features(X):
    """lam = 1 and no split: the constant stump on the majority class is the best (the cost falls from 1 to
    2 sqrt(3) / 4), not a ZeroDivisionError."""
    model = _fit(EBBoostClassifier(n_estimators=3, lam=1.0), X, [0, 1, 1, 1])
    assert np.all(np.isfinite(model.decision_function(X)))
    np.testing.assert_array_equal(model.predict(X), np.ones(4, dtype=int))


def test_ebboost_lam_1_on_constant_balanced_data():
    """No stump beats chance: an empty model (with a warning), predicting the first class."""
    X = np.zeros((4, 1))
    model = _fit(EBBoostClassifier(n_estimators=3, lam=1.0), X, [0, 0, 1, 1])
    assert np.all(np.isfinite(model.decision_function(X)))
    assert set(model.predict(X)) <= {0, 1}


# ----------------------------------------------------------------------------- bin edges of subnormal values
def test_bin_edge_of_a_tied_subnormal_value_is_the_value():
    """Quantile edges between equal order statistics are the value itself. For a subnormal value x with an
    odd last bit, x * 0.5 + x * 0.5 rounds below x and x fell into the bin above its edge."""
    x = 5 * 5e-324
    edges = bin_edges(np.array([0.0, x, x, 3 * x]), 2)
    assert edges.tolist() == [x]


def test_doubling_a_subnormal_column_leaves_the_model_unchanged():
    """A strictly increasing, exact transform (x -> 2x) of a column must not change the fitted partition."""
    x = 5 * 5e-324
    X = np.array([[0.0], [x], [x], [3 * x]])
    y = [0, 1, 1, 1]
    model = _fit(AdaBoostClassifier(n_estimators=1, max_bins=2), X, y)
    doubled = _fit(AdaBoostClassifier(n_estimators=1, max_bins=2), 2.0 * X, y)
    np.testing.assert_array_equal(model.rounds_["bin"], doubled.rounds_["bin"])
    np.testing.assert_array_equal(model.predict(X), doubled.predict(2.0 * X))


# ----------------------------------------------------------------------------- error messages
@pytest.mark.parametrize("y, shown", [
    (np.zeros(4, dtype=np.int64), "0"),
    (np.full(4, 2.0), "2.0"),
    (np.full(4, "a"), "'a'"),
    (np.zeros(4, dtype=bool), "False"),
], ids=["int", "float", "str", "bool"])
def test_error_messages_show_plain_values(y, shown):
    """One class in y: the message names the class as a plain value (``0``, not ``np.int64(0)``)."""
    with pytest.raises(ValueError) as info:
        VadaBoostClassifier(n_estimators=2).fit(np.zeros((4, 1)), y)
    message = str(info.value)
    assert not NUMPY_REPR.search(message), message
    assert f"({shown})" in message, message


@pytest.mark.parametrize("params, error", [
    ({"n_estimators": np.float64(3.0)}, TypeError),
    ({"criterion": np.str_("entropy")}, ValueError),
    ({"reweight_at_end": np.int64(1)}, TypeError),
], ids=["n_estimators", "criterion", "reweight_at_end"])
def test_parameter_error_messages_show_plain_values(params, error):
    X = np.arange(8.0)[:, None]
    y = np.array([0, 1] * 4)
    with pytest.raises(error) as info:
        QuadBoostClassifier(**params).fit(X, y)
    assert not NUMPY_REPR.search(str(info.value)), str(info.value)


@pytest.mark.parametrize("lam", [1.5, 3.0])
def test_ebboost_lam_above_1_never_raises_its_cost(lam):
    """lam > 1, constant X, balanced classes: no stump beats chance (A = B), yet a constant stump was kept with
    the capped step 5.58 and the cost (1 - lam) S1**2 + lam n S2 rose from 4 to 282 838 (lam = 3)."""
    X = np.zeros((2, 1))
    model = _fit(EBBoostClassifier(n_estimators=1, lam=lam), X, [False, True])
    costs = np.r_[model.initial_cost_, model.rounds_["cost"]]
    assert np.all(np.diff(costs) <= 1e-12 * costs[:-1]), costs


def test_trimmed_ebboost_takes_its_step_from_every_row():
    """Weight trimming on rows of one constant feature: EBBoost's step took its sums of q = w**2 / p from the
    kept rows' histograms instead of every row's. Found on 3 rows, 3 classes (a step of 0.67 for 0.30 raised
    the cost from 9 to 9.68); here 3 rows, one of them kept: a step of 1.37 for 0.74."""
    X = np.zeros((3, 1))
    y = np.array([0, 1, 1])
    sw = np.array([1.0, 1.0, 10.0])
    trimmed = _fit(EBBoostClassifier(n_estimators=1, weight_trim_rate=0.5), X, y, sample_weight=sw)
    plain = _fit(EBBoostClassifier(n_estimators=1), X, y, sample_weight=sw)
    assert trimmed.rounds_["n_seen"][0] == 1  # the learner saw the heaviest row only
    costs = np.r_[trimmed.initial_cost_, trimmed.rounds_["cost"]]
    assert np.all(np.diff(costs) <= 1e-12 * costs[:-1]), costs
    np.testing.assert_allclose(trimmed.rounds_["alpha"], plain.rounds_["alpha"], rtol=1e-12)  # the same stump
