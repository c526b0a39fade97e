"""AdaBoost.MH: AdaBoostClassifier(leaf="real", multiclass="mh"), one tree a round with K-vector leaves on
per-(row, class) weights.

The compiled fit against the rule written out in NumPy (trees grown greedily on the same bins by brute force
with the sum over classes of 2 sqrt(W+ W-), the leaves' values, the pair weights' update), and the estimator
around it: probabilities, staged predictions, validation, warm start, model files, thread counts, errors.
The data and options are those of test_samme_r.py, so these fits run the kernels those tests compile.
"""
import io
import math

import numpy as np
import pytest
from scipy.special import expit

import fastboost
from fastboost import AdaBoostClassifier
from fastboost import _driver as driver
from fastboost._binning import BinMapper
from fastboost._kernels.split import TIE_RTOL
from fastboost._types import CRITERION_MH, LEAF_VECTOR

try:  # tests/ as a package or as a plain directory on sys.path
    from .kernel_cases import assert_vector_trees_match, multiclass_problem
except ImportError:
    from kernel_cases import assert_vector_trees_match, multiclass_problem


def _mh_z(pos, neg):
    """sum over classes of 2 sqrt(W+_k W-_k) of one side."""
    return sum(2.0 * math.sqrt(max(a, 0.0) * max(b, 0.0)) for a, b in zip(pos, neg))


def _sides(codes_f, rows, pos, neg, k, ml, missing_code):
    """Per-class (W+, W-) of the left and right side of the split (bin k, missing_left ml) of a node's rows."""
    c = codes_f[rows].astype(np.int64)
    left = np.where(c == missing_code, bool(ml), c <= k)
    return (pos[rows[left]].sum(0), neg[rows[left]].sum(0)), (pos[rows[~left]].sum(0), neg[rows[~left]].sum(0))


def _grow_mh_tree(codes, y, W, n_value_bins, missing_code, depth):
    """A tree grown breadth first by brute force: at each node, every feature, bin and side of the missing values
    (missing left first), the smallest sum over both sides and all classes of 2 sqrt(W+_k W-_k) (a later
    candidate must win by more than TIE_RTOL times the node's weight of the rows' own classes); a node whose rows
    are all of one class, or without a split with weight of its rows' own classes on both sides, is a leaf.
    Returns node dicts in the kernel's order."""
    n, n_classes = W.shape
    own = np.arange(n_classes)[None, :] == y[:, None]
    pos = np.where(own, W, 0.0)  # W+ of each row: the pair of its own class
    neg = np.where(own, 0.0, W)
    nodes = [dict(rows=np.arange(n))]
    level = [0]
    for _ in range(depth):
        nxt = []
        for j in level:
            node = nodes[j]
            rows = node["rows"]
            cw = pos[rows].sum(0)
            total = cw.sum()
            if total <= 0 or cw.max() >= total * (1 - 1e-12):
                continue
            tol = TIE_RTOL * total
            best = None
            for f in range(codes.shape[0]):
                fb = None
                nvb = int(n_value_bins[f])
                for k in range(nvb):
                    for ml in (1, 0):
                        if ml == 1 and k == nvb - 1:
                            continue
                        (lp, ln), (rp, rn) = _sides(codes[f], rows, pos, neg, k, ml, missing_code)
                        if lp.sum() <= 0 or rp.sum() <= 0:
                            continue
                        v = _mh_z(lp, ln) + _mh_z(rp, rn)
                        if fb is None or v < fb[0] - tol:
                            fb = (v, k, ml)
                if fb is None:
                    continue
                v, k, ml = fb
                cf = codes[f, rows].astype(np.int64)
                if pos[rows[cf == missing_code]].sum() <= tol:  # no weighted missing row: the heavier side
                    lw = pos[rows[cf <= k]].sum()
                    ml = 1 if lw >= pos[rows[cf != missing_code]].sum() - lw else 0
                if best is None or v < best[0] - tol:
                    best = (v, f, k, ml)
            if best is None:
                continue
            _, f, k, ml = best
            c = codes[f, rows].astype(np.int64)
            go_left = np.where(c == missing_code, bool(ml), c <= k)
            node.update(feature=f, bin=k, missing_left=ml, left=len(nodes), right=len(nodes) + 1)
            nodes.append(dict(rows=rows[go_left]))
            nodes.append(dict(rows=rows[~go_left]))
            nxt += [node["left"], node["right"]]
        level = nxt
        if not level:
            break
    for node in nodes:
        node.setdefault("left", -1)
        node.setdefault("right", -1)
        node.setdefault("feature", -1)
    return nodes, pos, neg


def _reference(X, y, sw, n_rounds, depth, learning_rate, loss="exponential"):
    """AdaBoost.MH in NumPy on the fit's bins: pair weights W[i, k] = p_i / K; every round's tree by brute force
    (_grow_mh_tree), its leaves' values 1/2 log((W+_k + d) / (W-_k + d)) with d = 1 / (2 n K), n the weighted
    rows, and W[i, k] <- W[i, k] exp(-learning_rate y_ik v_k(x_i)) / Z; on the logistic loss the margins
    F_k(x_i) += learning_rate v_k(x_i) and W[i, k] = p_i / (1 + exp(y_ik F_k(x_i))) / S instead. Returns per
    round the node dicts and the (max_nodes, K) table of leaf values."""
    k = int(y.max()) + 1
    p = sw / sw.sum()
    mapper = BinMapper(255).fit(X, p)
    codes = mapper.transform(X)
    delta = 0.5 / (np.count_nonzero(p) * k)
    W = np.repeat(p[:, None] / k, k, axis=1)
    sign = np.where(np.arange(k)[None, :] == y[:, None], 1.0, -1.0)
    F = np.zeros_like(W)
    out = []
    for _ in range(n_rounds):
        nodes, pos, neg = _grow_mh_tree(codes, y, W, mapper.n_value_bins_, mapper.missing_code, depth)
        values = np.zeros((2 ** (depth + 1) - 1, k))
        h = np.zeros_like(W)
        for j, node in enumerate(nodes):
            if node["left"] < 0:
                rows = node["rows"]
                values[j] = 0.5 * np.log((pos[rows].sum(0) + delta) / (neg[rows].sum(0) + delta))
                h[rows] = values[j]
        out.append((nodes, values))
        if loss == "logistic":
            F += learning_rate * h
            W = p[:, None] * expit(-sign * F)
        else:
            W = W * np.exp(-learning_rate * sign * h)
        W /= W.sum()
    return out


def _mh(n_estimators, **kw):
    return AdaBoostClassifier(n_estimators, leaf="real", multiclass="mh", **kw)


@pytest.mark.parametrize("depth,k,seed", [(1, 3, 0), (2, 4, 1), (3, 3, 2)])
def test_trees_and_leaf_values_match_the_numpy_rule(depth, k, seed):
    X, y = multiclass_problem(160, 4, k, seed)
    sw = np.random.default_rng(seed).random(len(y)) + 0.1
    sw[::17] = 0.0  # rows without weight
    rate = 0.5
    model = _mh(6, max_depth=depth, learning_rate=rate, n_jobs=1).fit(X, y, sw)
    assert model.leaf_values_ is not None and not hasattr(model, "estimators_")
    assert model.leaf_values_.shape == (model.n_estimators_, 2 ** (depth + 1) - 1, k)
    assert model.n_estimators_ == 6
    ref = _reference(X, y, sw, model.n_estimators_, depth, rate)
    assert_vector_trees_match(model, ref, rate)
    # decision_function is F = sum_t alpha_t v(x); predict_proba 1 / (1 + exp(-2 F_k)) normalised; predict argmax F
    F = model.decision_function(X)
    q = expit(2.0 * F)
    np.testing.assert_allclose(model.predict_proba(X), q / q.sum(axis=1, keepdims=True), rtol=1e-12)
    np.testing.assert_array_equal(model.predict(X), model.classes_[np.argmax(F, axis=1)])
    # far below every class (each 1 / (1 + exp(-2 F_k)) underflows to 0): still finite, as the margins say
    low = model._margin_to_proba(np.array([[-800.0, -801.0, -900.0] + [-1000.0] * (k - 3)]), None)
    np.testing.assert_allclose(low[0, :2], [1.0 / (1.0 + np.exp(-2.0)), np.exp(-2.0) / (1.0 + np.exp(-2.0))])


@pytest.mark.parametrize("depth,k,seed,rate", [(1, 3, 20, 1.0), (2, 4, 21, 0.5), (3, 3, 22, 0.7)])
def test_logistic_trees_and_leaf_values_match_the_numpy_rule(depth, k, seed, rate):
    """loss="logistic": the same learner on the weights p_i sigma(-y_ik F_k(x_i)) of the margins."""
    X, y = multiclass_problem(160, 4, k, seed)
    sw = np.random.default_rng(seed).random(len(y)) + 0.1
    sw[::13] = 0.0
    model = _mh(8, max_depth=depth, learning_rate=rate, loss="logistic", n_jobs=1).fit(X, y, sw)
    assert model.n_estimators_ == 8
    ref = _reference(X, y, sw, model.n_estimators_, depth, rate, loss="logistic")
    assert_vector_trees_match(model, ref, rate)
    exponential = _reference(X, y, sw, model.n_estimators_, depth, rate)
    assert not all(np.allclose(a[1], b[1]) for a, b in zip(ref, exponential)), "the losses gave the same model"
    # predict_proba: the logistic loss's link, 1 / (1 + exp(-F_k)), normalised
    F = model.decision_function(X)
    q = expit(F)
    np.testing.assert_allclose(model.predict_proba(X), q / q.sum(axis=1, keepdims=True), rtol=1e-12)
    low = model._margin_to_proba(np.array([[-800.0, -801.0, -900.0] + [-1000.0] * (k - 3)]), None)
    np.testing.assert_allclose(low[0, :2], [1.0 / (1.0 + np.exp(-1.0)), np.exp(-1.0) / (1.0 + np.exp(-1.0))])


@pytest.mark.parametrize("depth", [1, 3])
def test_logistic_loss_falls_every_round_and_the_cost_is_that_loss(depth):
    """Each round lowers sum_i (1/K) sum_k log(1 + exp(-y_ik F_k(x_i))) (the step is at most the exponential
    bound's minimiser on the logistic weights, which bounds the logistic loss's fall from below), and log_cost
    is its logarithm, from n log 2 at the start."""
    X, y = multiclass_problem(400, 5, 4, 23, nan=False)
    model = _mh(25, max_depth=depth, learning_rate=1.0, loss="logistic").fit(X, y)
    assert np.isclose(model.initial_cost_, len(y) * np.log(2.0), rtol=1e-12)
    log_cost = np.r_[np.log(model.initial_cost_), model.rounds_["log_cost"]]
    assert np.all(np.diff(log_cost) < 0), "the logistic loss rises"
    sign = np.where(np.arange(4)[None, :] == np.searchsorted(model.classes_, y)[:, None], 1.0, -1.0)
    for t, F in enumerate(model.staged_decision_function(X)):
        loss = np.sum(np.logaddexp(0.0, -sign * F)) / 4
        assert np.isclose(np.exp(log_cost[t + 1]), loss, rtol=1e-9), f"round {t}"


def test_loss_falls_and_it_differs_from_samme_r():
    X, y = multiclass_problem(300, 5, 3, 3, nan=False)
    model = _mh(20, max_depth=2, learning_rate=0.3).fit(X, y)
    log_cost = np.r_[np.log(model.initial_cost_), model.rounds_["log_cost"]]
    assert np.all(np.diff(log_cost) < 0), "the loss sum_ik w_ik exp(-y_ik F_k(x_i)) rises"
    # the cost (the product of the rounds' normalisers, times its start) over its start: the mean over
    # (row, class) pairs of exp(-y_ik F_k(x_i))
    F = model.decision_function(X)
    sign = np.where(np.arange(3)[None, :] == np.searchsorted(model.classes_, y)[:, None], 1.0, -1.0)
    assert np.isclose(np.exp(log_cost[-1]) / model.initial_cost_, np.mean(np.exp(-sign * F)), rtol=1e-9)
    # each round's error: the weight of the (row, class) pairs whose leaf value has the wrong sign; the first
    # round's pairs weigh 1 / (n K) each
    first = model.leaf_values_[0]
    v = next(iter(model.staged_decision_function(X))) / 0.3
    assert set(np.unique(v.round(12))) <= set(first.round(12).ravel())
    np.testing.assert_allclose(model.rounds_["error"][0], np.mean(np.where(sign > 0, v <= 0, v > 0)), rtol=1e-12)
    samme_r = AdaBoostClassifier(20, max_depth=2, leaf="real", multiclass="joint", learning_rate=0.3).fit(X, y)
    assert not np.allclose(samme_r.leaf_values_, model.leaf_values_)


@pytest.mark.parametrize("loss", ["exponential", "logistic"])
def test_the_top_probability_is_the_predicted_class_when_two_margins_are_large(loss):
    """Two classes' margins above about 19 (37 on the logistic loss) both give 1 / (1 + exp(-2 F_k)) = 1 before
    normalising: predict_proba tied them, and its argmax was the lower class where predict took the other."""
    X, y = multiclass_problem(200, 4, 4, 3)
    model = _mh(8, max_depth=2, loss=loss).fit(X, y)
    model.leaf_values_ = model.leaf_values_ + 12.0  # (every class's margin up by 8 * 12: their order kept)
    F = model.decision_function(X)
    top2 = np.sort(F, axis=1)[:, -2:]
    assert np.sum((top2[:, 0] > 40) & (top2[:, 0] < top2[:, 1])) >= 10
    P = model.predict_proba(X)
    np.testing.assert_array_equal(model.classes_[np.argmax(P, axis=1)], model.predict(X))
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-12)
    np.testing.assert_array_equal(np.argmax(model.predict_log_proba(X), axis=1), np.argmax(F, axis=1))


def test_staged_validation_and_warm_start():
    X, y = multiclass_problem(240, 4, 3, 4)
    Xv, yv = multiclass_problem(120, 4, 3, 5)
    model = _mh(12, max_depth=2, learning_rate=0.5).fit(X, y, eval_set=(Xv, yv))
    staged = list(model.staged_predict(Xv))
    errors = [np.mean(p != yv) for p in staged]
    np.testing.assert_allclose(model.validation_errors_[:len(errors)], errors, atol=1e-12)
    np.testing.assert_array_equal(list(model.staged_decision_function(X))[-1], model.decision_function(X))
    np.testing.assert_array_equal(list(model.staged_predict_proba(X))[-1], model.predict_proba(X))
    for loss in ("exponential", "logistic"):
        whole = _mh(10, max_depth=2, learning_rate=0.5, loss=loss).fit(X, y)
        warm = _mh(4, max_depth=2, learning_rate=0.5, warm_start=True, loss=loss).fit(X, y)
        warm.set_params(n_estimators=10).fit(X, y)
        np.testing.assert_array_equal(warm.leaf_values_, whole.leaf_values_)
        np.testing.assert_array_equal(warm.nodes_, whole.nodes_)
        np.testing.assert_array_equal(warm.rounds_["log_cost"], whole.rounds_["log_cost"])
        np.testing.assert_array_equal(warm.predict_proba(X), whole.predict_proba(X))


@pytest.mark.parametrize("loss,n", [("exponential", 3000), ("logistic", 40000)])
def test_thread_counts_give_the_same_model(loss, n):
    X, y = multiclass_problem(n, 6, 4, 6)
    one = _mh(5, max_depth=3, n_jobs=1, loss=loss).fit(X, y)
    two = _mh(5, max_depth=3, n_jobs=2, loss=loss).fit(X, y)
    np.testing.assert_array_equal(one.leaf_values_, two.leaf_values_)
    np.testing.assert_array_equal(one.nodes_, two.nodes_)
    np.testing.assert_array_equal(one.rounds_["log_cost"], two.rounds_["log_cost"])


@pytest.mark.parametrize("loss", ["exponential", "logistic"])
def test_model_files_keep_the_rule(loss):
    X, y = multiclass_problem(200, 4, 3, 7)
    model = _mh(8, max_depth=2, loss=loss).fit(X, y)
    buf = io.BytesIO()
    model.save(buf)
    buf.seek(0)
    loaded = fastboost.load(buf)
    assert loaded.get_params()["multiclass"] == "mh"
    assert loaded.get_params()["loss"] == loss
    np.testing.assert_array_equal(loaded.leaf_values_, model.leaf_values_)
    np.testing.assert_array_equal(loaded.predict_proba(X), model.predict_proba(X))
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))


def test_errors_name_themulticlass_problem():
    X, y = multiclass_problem(120, 3, 3, 10)
    with pytest.raises(ValueError, match="multiclass='mh'.*needs leaf='real'"):
        AdaBoostClassifier(3, multiclass="mh").fit(X, y)
    with pytest.raises(ValueError, match="AdaBoost.MH.*monotone_constraints.*multiclass='ovr'"):
        _mh(3, monotone_constraints=[1, 0, 0]).fit(X, y)
    with pytest.raises(ValueError, match="bootstrap=True.*multiclass='mh'"):
        _mh(3, bootstrap=True, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="loss='logistic'.*needs leaf='real'"):
        AdaBoostClassifier(3, loss="logistic").fit(X, y)
    with pytest.raises(ValueError, match="loss='logistic'.*multiclass='mh'.*SAMME.R"):
        AdaBoostClassifier(3, leaf="real", multiclass="joint", loss="logistic").fit(X, y)
    with pytest.raises(ValueError, match="loss.*'exponential', 'logistic'"):
        _mh(3, loss="log").fit(X, y)
    # two classes: multiclass is not used (binary real AdaBoost)
    binary = _mh(3, max_depth=2).fit(X, y > 0)
    real = AdaBoostClassifier(3, max_depth=2, leaf="real").fit(X, y > 0)
    np.testing.assert_array_equal(binary.nodes_, real.nodes_)
    np.testing.assert_array_equal(binary.decision_function(X), real.decision_function(X))


@pytest.mark.slow
def test_trimmed_and_subsampled_fits_follow_the_rule_on_every_row():
    """Weight trimming keeps the rows that hold the share of the rows' own-class weights; every row's leaf and the
    leaves' sums still come from all rows, so trimming at rate 1 gives the untrimmed model."""
    X, y = multiclass_problem(400, 4, 3, 11, nan=False)
    full = _mh(6, max_depth=2, learning_rate=0.5).fit(X, y)
    trimmed = _mh(6, max_depth=2, learning_rate=0.5, weight_trim_rate=1.0).fit(X, y)
    np.testing.assert_allclose(trimmed.leaf_values_, full.leaf_values_, rtol=1e-12)
    sub = _mh(6, max_depth=2, learning_rate=0.5, subsample=0.5, random_state=0).fit(X, y)
    assert sub.n_estimators_ == 6 and np.isfinite(sub.leaf_values_).all()


@pytest.mark.parametrize("logistic", [False, True])
def test_the_workspace_holds_the_pair_weights_and_working_memory_counts_them(logistic):
    n, d, n_bins, k = 1000, 5, 16, 5
    config = driver.make_config(max_depth=3, n_classes=k, leaf=LEAF_VECTOR, criterion=CRITERION_MH,
                                missing_code=n_bins - 1, logistic=logistic)
    p = np.random.default_rng(0).random(n)
    p /= p.sum()
    ws = driver.make_workspace(np.arange(n, dtype=np.uint16) % k, p.copy(), d, n_bins, config)
    np.testing.assert_allclose(ws.rows.q.reshape(n, k), np.repeat(p[:, None] / k, k, axis=1), rtol=1e-15)
    np.testing.assert_allclose(ws.rows.w, p / k, rtol=1e-15)  # each row's own-class pair
    assert ws.tree.level_a.shape[-1] == 2 * k + 1 and ws.tree.factor.shape[1] == 2 * k
    np.testing.assert_array_equal(ws.rows.margin, np.zeros(n * k if logistic else 0))
    parts = driver.working_memory(n, d, n_bins, config, 0, 8)
    hist = next(v for key, v in parts.items() if key.startswith("tree histograms"))
    assert hist == 2 * 4 * d * n_bins * (2 * k + 1) * 8
    per_row = next(v for key, v in parts.items() if key.startswith("per-row arrays"))
    allocated = sum(a.nbytes for part in (ws.rows, ws.tree) for a in part
                    if isinstance(a, np.ndarray) and a.ndim == 1 and a.shape[0] in (n, n * k))
    assert per_row >= allocated
