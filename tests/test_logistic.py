"""Boosting on the logistic loss (``AdaBoostClassifier(leaf="real", loss="logistic")``): the weights are
p_i sigma(-y_i F(x_i)) of the margins, normalised, instead of products of exp(-alpha y h) factors.

The compiled update against NumPy (one margin a row, and AdaBoost.MH's one a (row, class) pair, margins far out
on both sides, rows without weight, several row blocks and thread counts); two classes and one-vs-rest: each
round is the exponential loss's learner on the logistic weights of the rounds before, the loss falls every
round and ``log_cost`` is its logarithm; probabilities by the logistic link. AdaBoost.MH's are in test_mh.py.
"""
import numba
import numpy as np
import pytest
from scipy.special import expit

from fastboost import AdaBoostClassifier
from fastboost._kernels.update import BLOCK, n_blocks, update_logistic_pairs


def _numpy_update(margin, p, leaf, y, step, n_classes):
    """update_logistic_pairs in NumPy: (q, w, margin, the mean loss)."""
    n = p.shape[0]
    k = np.arange(n_classes)[None, :]
    sign = np.where(k == y[:, None], 1.0, -1.0)
    m = margin.reshape(n, n_classes) + sign * step[leaf, :n_classes]
    g = p[:, None] * expit(-m)
    q = g / g.sum()
    loss = np.sum(p[:, None] * np.logaddexp(0.0, -m)) / n_classes
    w = q[np.arange(n), y] if n_classes > 1 else q[:, 0]
    return q.ravel(), w, m.ravel(), loss


@pytest.mark.parametrize("n", [1, 37, 2 * BLOCK + 5])
@pytest.mark.parametrize("n_classes", [1, 4])
@pytest.mark.parametrize("weights", ["random", "equal", "equal, well classified"])
def test_the_update_matches_numpy_far_out_margins_and_rows_without_weight_included(n, n_classes, weights):
    """Random p (a logarithm a row), equal p with rows of weight 0 among them (runs of rows sharing their
    logarithms, LOSS_PRODUCT terms at most), and well classified rows, whose tiny losses must not be lost."""
    rng = np.random.default_rng(n + n_classes)
    n_nodes = 7
    leaf = rng.integers(0, n_nodes, n).astype(np.int64)
    y = rng.integers(0, 2 if n_classes == 1 else n_classes, n).astype(np.uint16)
    p = (rng.random(n) if weights == "random" else np.ones(n)) * (rng.random(n) < 0.8)
    p[0] = 1.0
    p /= p.sum()
    margin = rng.normal(0, 3, n * n_classes)
    margin[rng.random(margin.shape) < 0.05] = 800.0  # exp(800) overflows: either branch must avoid it
    margin[rng.random(margin.shape) < 0.05] = -800.0
    margin[rng.random(margin.shape) < 0.05] = 0.0
    if weights == "equal, well classified":  # losses about 1e-17 to 1e-9, summed without losing them
        margin = rng.uniform(20.0, 40.0, n * n_classes)
    step = rng.normal(0, 1, (n_nodes, 2 * n_classes))
    step[2] = 0.0
    q_ref, w_ref, m_ref, loss_ref = _numpy_update(margin, p, leaf, y, step, n_classes)
    results = []
    threads = [1, 2] if numba.config.NUMBA_NUM_THREADS >= 2 else [1]
    before = numba.get_num_threads()
    try:
        for t in threads:
            numba.set_num_threads(t)
            m = margin.copy()
            w = np.full(n, np.nan)
            q = w if n_classes == 1 else np.full(n * n_classes, np.nan)
            loss = update_logistic_pairs(q, w, m, p, leaf, y, step, np.full((n_blocks(n), 4), np.nan))
            results.append((q.copy(), w.copy(), m.copy(), loss))
    finally:
        numba.set_num_threads(before)
    q, w, m, loss = results[0]
    np.testing.assert_array_equal(m, m_ref)
    np.testing.assert_allclose(q, q_ref, rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(w, w_ref, rtol=1e-12, atol=1e-300)
    assert np.isclose(loss, loss_ref, rtol=1e-12)
    assert np.all(np.isfinite(q)) and np.isclose(q.sum(), 1.0, rtol=1e-12)
    assert np.all(q[np.repeat(p, n_classes) == 0.0] == 0.0)
    for other in results[1:]:  # the same bits on any thread count
        for a, b in zip(other, results[0]):
            np.testing.assert_array_equal(a, b)


def _integer_problem(n=500, seed=0, n_classes=2):
    """Few distinct values a feature (so the bins do not depend on the sample weights), a noisy label."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 12, (n, 4)).astype(np.float64)
    score = X[:, 0] - X[:, 1] * 0.5 + rng.normal(0, 3, n)
    y = np.digitize(score, np.quantile(score, np.linspace(0, 1, n_classes + 1)[1:-1]))
    sw = rng.random(n) + 0.2
    sw[::11] = 0.0
    return X, y, sw


@pytest.mark.parametrize("depth,rate", [(1, 1.0), (3, 0.4)])
def test_two_class_rounds_are_the_learner_on_the_logistic_weights_of_the_rounds_before(depth, rate):
    """Round t + 1 of the logistic fit is the tree a one-round fit with the exponential loss grows on the sample
    weights p_i sigma(-y_i F_t(x_i)) (the same learner, leaves and smoothing: only the weights differ)."""
    X, y, sw = _integer_problem()
    model = AdaBoostClassifier(8, leaf="real", max_depth=depth, learning_rate=rate, loss="logistic",
                               n_jobs=1).fit(X, y, sw)
    assert model.n_estimators_ == 8
    sign = np.where(y == 1, 1.0, -1.0)
    p = sw / sw.sum()
    staged = [np.zeros(len(y))] + list(model.staged_decision_function(X))
    exponential = AdaBoostClassifier(8, leaf="real", max_depth=depth, learning_rate=rate, n_jobs=1).fit(X, y, sw)
    assert not np.allclose(exponential.nodes_["value"], model.nodes_["value"]), "the losses gave the same model"
    for t in range(model.n_estimators_):
        one = AdaBoostClassifier(1, leaf="real", max_depth=depth, learning_rate=rate, n_jobs=1).fit(
            X, y, p * expit(-sign * staged[t]))
        for field in ("feature", "bin", "missing_left", "left", "right"):
            np.testing.assert_array_equal(one.nodes_[0][field], model.nodes_[t][field], err_msg=f"round {t}")
        np.testing.assert_allclose(one.nodes_[0]["value"], model.nodes_[t]["value"], rtol=1e-9, atol=1e-12,
                                   err_msg=f"round {t}")
    # the cost is the logistic loss sum_i n p_i log(1 + exp(-y_i F(x_i))) (n the weighted rows); it falls
    n = np.count_nonzero(sw)
    log_cost = np.r_[np.log(model.initial_cost_), model.rounds_["log_cost"]]
    assert np.isclose(model.initial_cost_, n * np.log(2.0), rtol=1e-12)
    assert np.all(np.diff(log_cost) < 0), "the logistic loss rises"
    for t in range(1, len(staged)):
        assert np.isclose(np.exp(log_cost[t]), n * np.sum(p * np.logaddexp(0.0, -sign * staged[t])), rtol=1e-9)
    # probabilities: the logistic link of the margin, 1 / (1 + exp(-F))
    F = model.decision_function(X)
    np.testing.assert_allclose(model.predict_proba(X), np.column_stack([expit(-F), expit(F)]), rtol=1e-12)


def test_one_vs_rest_models_are_the_two_class_fits_and_their_probabilities_the_logistic_link():
    X, y, sw = _integer_problem(n=600, seed=1, n_classes=3)
    model = AdaBoostClassifier(6, leaf="real", max_depth=2, loss="logistic").fit(X, y, sw)
    assert hasattr(model, "estimators_") and len(model.estimators_) == 3
    for k, est in enumerate(model.estimators_):
        alone = AdaBoostClassifier(6, leaf="real", max_depth=2, loss="logistic").fit(X, (y == k).astype(int), sw)
        np.testing.assert_array_equal(est.nodes_, alone.nodes_)
    F = model.decision_function(X)
    q = expit(F)
    np.testing.assert_allclose(model.predict_proba(X), q / q.sum(axis=1, keepdims=True), rtol=1e-12)
