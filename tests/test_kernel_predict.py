"""Prediction (fastboost/_kernels/predict.py and the estimators' decision_function) against the naive
NumPy reference (tests/naive.py)."""
import numpy as np
import pytest

import fastboost
from fastboost._binning import BinMapper
from fastboost._kernels.predict import add_stump, decision_function

try:  # tests/ as a package or as a plain directory on sys.path
    from . import naive
    from .kernel_cases import SIZES, case, random_rounds
except ImportError:
    import naive
    from kernel_cases import SIZES, case, random_rounds


@pytest.mark.parametrize("n", SIZES)
def test_decision_function_kernel_matches_naive(n):
    X, mapper, _, _, _ = case(n, 17)
    rng = np.random.default_rng(n + 2)
    rounds = random_rounds(rng, mapper, 40)
    with np.errstate(over="ignore"):
        X32 = np.ascontiguousarray(X.astype(np.float32))
    for Xd in (np.ascontiguousarray(X), X32):
        out = np.empty(n)
        decision_function(Xd, rounds, out)
        np.testing.assert_array_equal(out, naive.decision_function_naive(Xd, rounds))
        margin = np.zeros(n)
        for t in range(rounds.shape[0]):
            add_stump(Xd, rounds, t, margin)
            if t == 4:
                np.testing.assert_array_equal(margin, naive.decision_function_naive(Xd, rounds[:5]))
        np.testing.assert_array_equal(margin, out)  # staged == full, bit for bit


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
        np.testing.assert_array_equal(got, naive.decision_function_naive(Xd, fitted.rounds_))
        staged = list(fitted.staged_decision_function(Xd))
        assert len(staged) == fitted.n_estimators_
        np.testing.assert_array_equal(staged[-1], got)
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
    np.testing.assert_array_equal(fitted.decision_function(X), margin)
