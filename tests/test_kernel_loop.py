"""The boosting loop (fastboost/_kernels/loop.py): fitted models replayed round by round with the naive
NumPy functions (tests/naive.py); the replay_data fixture is in tests/conftest.py."""
import math

import numpy as np
import pytest

import fastboost
from fastboost._binning import BinMapper

try:  # tests/ as a package or as a plain directory on sys.path
    from . import naive
except ImportError:
    import naive


def test_fit_bit_identical_with_1_and_2_threads(replay_data):
    X, y = replay_data
    w = np.random.default_rng(0).random(X.shape[0]) + 0.1
    fits = [fastboost.AdaBoostClassifier(n_estimators=15, n_jobs=k).fit(X, y, sample_weight=w)
            for k in (1, 2)]
    assert fits[0].rounds_.tobytes() == fits[1].rounds_.tobytes()
    np.testing.assert_array_equal(fits[0].decision_function(X), fits[1].decision_function(X))


def replay_adaboost(model, X, y, criterion):
    """Replay model.rounds_ with the naive functions; returns (exact matches, near-tie rounds)."""
    mapper = BinMapper(max_bins=255).fit(X)
    codes = mapper.transform(X)
    mc = mapper.missing_code
    yi = (y == model.classes_[1]).astype(np.uint8)
    n = X.shape[0]
    p = np.full(n, 1.0 / n)
    w = p.copy()
    log_loss = 0.0
    exact = ties = 0
    rounds = model.rounds_
    for t, r in enumerate(rounds):
        hist = naive.build_histograms_naive(codes, yi, w, mc + 1)
        best = naive.best_stump_naive(hist, mapper.n_value_bins_, mc, criterion)
        assert best is not None
        got = (int(r["feature"]), int(r["bin"]), int(r["missing_left"]))
        if got == (best["feature"], best["bin"], best["missing_left"]):
            exact += 1
        else:
            # only a (rounding-level) tie may be broken differently: the model's stump must be
            # as good as the naive optimum, and must be a valid candidate at all
            cands = [c for c in naive.all_stumps_naive(hist, mapper.n_value_bins_, mc, criterion)
                     if (c[1], c[2], c[3]) == got]
            assert cands, f"round {t}: model's stump {got} is no valid candidate; naive best {best}"
            assert min(c[0] for c in cands) <= best["value"] * (1 + 1e-9) + 1e-300, (
                f"round {t}: model's stump {got} (criterion {min(c[0] for c in cands)!r}) is worse "
                f"than the naive best {best}")
            ties += 1
        f, k, ml = got
        l0, l1, r0, r1 = naive.side_weights_naive(hist[f], k, ml, mc)
        left, right = naive.leaf_value_naive(l0, l1), naive.leaf_value_naive(r0, r1)
        assert (r["left"], r["right"]) == (left, right), t
        assert r["threshold"] == mapper.thresholds_[f, k], t
        h = naive.stump_outputs_naive(codes[f], k, ml, mc, left, right)
        yh, sums = naive.round_sums_naive(h, yi, w, w)
        alpha = naive.adaboost_alpha_naive(sums[2], sums[3])
        assert sums[2] - sums[3] > 0.5 * naive.MIN_EDGE * (sums[2] + sums[3]), f"round {t} kept at chance"
        # rtol 1e-10; plus atol for alphas near 0, where log(W_I / W_J) amplifies the sums' rounding
        np.testing.assert_allclose(r["alpha"], alpha, rtol=1e-10, atol=1e-13, err_msg=f"alpha, round {t}")
        np.testing.assert_allclose(r["error"], sums[3], rtol=1e-10, err_msg=f"error, round {t}")
        np.testing.assert_allclose(r["learner_error"], sums[1] / (sums[0] + sums[1]), rtol=1e-10)
        w, z, _ = naive.update_weights_naive(w, p, yh, alpha)
        log_loss += math.log(z)
        np.testing.assert_allclose(r["cost"], n * math.exp(log_loss), rtol=1e-10, err_msg=f"cost {t}")
        if sums[3] == 0.0:  # a perfect stump ends boosting
            assert t == len(rounds) - 1
    if len(rounds) < model.n_estimators and rounds[-1]["error"] > 0:
        # stopped early: the next round's step must be <= 0
        hist = naive.build_histograms_naive(codes, yi, w, mc + 1)
        best = naive.best_stump_naive(hist, mapper.n_value_bins_, mc, criterion)
        h = naive.stump_outputs_naive(codes[best["feature"]], best["bin"], best["missing_left"], mc,
                                      best["left"], best["right"])
        _, sums = naive.round_sums_naive(h, yi, w, w)
        # ... no better than chance: edge (W_I - W_J) / (W_I + W_J) at most MIN_EDGE (up to rounding)
        assert sums[2] - sums[3] <= 2 * naive.MIN_EDGE * (sums[2] + sums[3])
    return exact, ties


@pytest.mark.parametrize("criterion", ["error", "gini"])
def test_boost_loop_replayed_with_naive_functions(replay_data, criterion):
    X, y = replay_data
    model = fastboost.AdaBoostClassifier(n_estimators=20, criterion=criterion).fit(X, y)
    assert model.rounds_.shape[0] == 20
    code = {"error": naive.CRITERION_ERROR, "gini": naive.CRITERION_GINI}[criterion]
    exact, ties = replay_adaboost(model, X, y, code)
    assert exact + ties == 20
    assert exact >= 1  # round 1 (weights 1/256, exact sums) is never a rounding tie
    np.testing.assert_array_equal(model.estimator_weights_, model.rounds_["alpha"])


def test_boost_loop_string_labels_and_nan_only_split():
    """String labels map to class indices in sorted order; a feature whose only split is
    NaN vs. one value is replayed like any other."""
    rng = np.random.default_rng(8)
    X = np.full((64, 2), 3.0)
    X[::7, 1] = np.nan
    y = np.where(rng.random(64) < 0.75, "b", "a")
    y[:2] = ["a", "b"]
    y[::7] = "a"
    model = fastboost.AdaBoostClassifier(n_estimators=5).fit(X, y)
    assert list(model.classes_) == ["a", "b"]
    replay_adaboost(model, X, y, naive.CRITERION_ERROR)
    r = model.rounds_[0]
    assert (r["feature"], r["bin"], r["missing_left"], r["left"], r["right"]) == (1, 0, 0, 1, -1)


def test_boost_loop_replay_early_stops():
    """Replay runs that end early: at chance level (edge <= MIN_EDGE), and after a perfect stump."""
    rng = np.random.default_rng(12)
    n = 250
    X = rng.integers(0, 2, (n, 1)).astype(np.float64)  # one binary feature: the edges shrink fast
    y = np.where(rng.random(n) < 0.8, X[:, 0], 1 - X[:, 0])
    model = fastboost.AdaBoostClassifier(n_estimators=50).fit(X, y)
    assert 1 <= model.n_estimators_ < 50
    replay_adaboost(model, X, y, naive.CRITERION_ERROR)
    # separable on feature 1: one perfect stump, alpha from the floored W_J, then stop
    X = rng.normal(size=(n, 3))
    y = (X[:, 1] > 0.3).astype(int)
    model = fastboost.AdaBoostClassifier(n_estimators=10).fit(X, y)
    assert model.n_estimators_ == 1 and model.rounds_["feature"][0] == 1
    np.testing.assert_allclose(model.rounds_["alpha"][0], 0.5 * math.log(1 / naive.ALPHA_EPS), rtol=1e-9)
    replay_adaboost(model, X, y, naive.CRITERION_ERROR)


def test_constant_features_give_one_constant_stump_then_stop():
    """No feature splits the rows: the loop falls back to the constant stump (majority class).
    Its step is 1/2 log(majority / minority); after it W_I == W_J, so alpha == 0 and boosting
    stops (AdaBoostClassifier: "boosting stops early when alpha <= 0")."""
    rng = np.random.default_rng(8)
    y = np.where(rng.random(64) < 0.75, "b", "a")
    y[:2] = ["a", "b"]
    Xc = np.full((64, 1), 3.0)
    model = fastboost.AdaBoostClassifier(n_estimators=5).fit(Xc, y)
    r = model.rounds_
    n_b = np.count_nonzero(y == "b")
    assert r["left"][0] == r["right"][0] == 1 and r["threshold"][0] == np.inf
    np.testing.assert_allclose(r["alpha"][0], 0.5 * math.log(n_b / (64 - n_b)), rtol=1e-12)
    np.testing.assert_array_equal(model.decision_function(Xc), naive.decision_function_naive(Xc, r))
    assert np.all(np.abs(r["alpha"][1:]) < 1e-12)  # anything after the first round is noise ...
    assert r.shape[0] == 1, (  # ... and should not be there at all
        f"{r.shape[0]} rounds kept; after the constant stump the steps are rounding noise: "
        f"alpha={r['alpha'][1:].tolist()}, error={r['error'][1:].tolist()}, "
        f"left={r['left'][1:].tolist()}")
