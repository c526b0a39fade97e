"""The tree learner (depth 1-8, K classes, missing values), SAMME, confidence-rated trees, tree prediction.

The kernel is checked against ``naive.grow_tree_naive`` (brute-force histograms of every node's rows,
so the subtraction trick is checked too), and the estimators against scikit-learn where the
settings coincide.
"""
import warnings

import numba
import numpy as np
import pytest
from sklearn.datasets import load_digits, load_wine
from sklearn.ensemble import AdaBoostClassifier as SkAdaBoost
from sklearn.tree import DecisionTreeClassifier

from fastboost import (
    AdaBoostClassifier,
    EBBoostClassifier,
    LazyBoostClassifier,
    QuadBoostClassifier,
    SABoostClassifier,
    VadaBoostClassifier,
)
from fastboost._driver import make_config, make_model, make_workspace, pick_learner
from fastboost._kernels.tree import level_child_histograms, rows_histograms
from fastboost._types import (
    CRITERION_ERROR,
    CRITERION_GINI,
    CRITERION_Z,
    LEAF_DISCRETE,
    LEAF_REAL,
    Y_DTYPE,
    TrainData,
    TreeRows,
)
from fastboost.datasets import make_twonorm

try:
    from . import naive
except ImportError:
    import naive


def random_problem(n, d, n_classes, max_bins, seed, nan_frac=0.1, zero_frac=0.1):
    """Codes with ties, a constant feature, an all-missing feature, missing values and zero weights
    (uint16 codes, as exact mode's, when max_bins > 255)."""
    rng = np.random.default_rng(seed)
    missing_code = max_bins
    n_value_bins = rng.integers(1, max_bins + 1, d)
    n_value_bins[0] = 1  # constant
    codes = np.empty((d, n), np.uint8 if max_bins <= 255 else np.uint16)
    for f in range(d):
        codes[f] = rng.integers(0, n_value_bins[f], n)
    codes[rng.random((d, n)) < nan_frac] = missing_code
    if d > 2:
        codes[2] = missing_code  # all missing
    y = rng.integers(0, n_classes, n).astype(Y_DTYPE)  # the fit's class indices (and so its kernels' signatures)
    # labels depend on two features so trees have structure
    y[(codes[1] < n_value_bins[1] // 2) & (rng.random(n) < 0.6)] = 0
    u = rng.random(n)
    u[rng.random(n) < zero_frac] = 0.0
    u /= u.sum()
    width = 256 if max_bins <= 255 else 1 << int(max_bins).bit_length()
    thresholds = np.full((d, width), np.inf)
    thresholds[:, :width - 1] = np.arange(width - 1) + 0.5
    return codes, y, u, n_value_bins.astype(np.int64), missing_code, thresholds


@numba.njit(cache=True)
def call_learn(learn, data, config, ws, model):
    """Round 0 of a learn function, called as the loop calls it: through the address of the variant a fit
    compiles (``typed.address``). Its variant for calls from Python (``typed.get``) would be compiled apart,
    a learn function's whole body once more."""
    learn(data, config, ws, model, 0)


def kernel_tree(codes, y, u, n_value_bins, missing_code, thresholds, n_classes, criterion, depth, min_leaf=1,
                min_weight_fraction=0.0, leaf_kind=LEAF_DISCRETE, leaf_scale=0.5, leaf_smoothing=1e-3, monotone=None,
                q=None):
    """grow_tree as a fit calls it (``learn_tree_round``): the node count, the tree, each row's leaf and the
    leaves' weight sums. monotone: int8[d] constraints (None: none); q: least squares' p (default u)."""
    n_nodes, tree, ws = learn_tree_round(codes, y, u, n_value_bins, missing_code, thresholds, n_classes, criterion,
                                         depth, min_leaf, min_weight_fraction, leaf_kind, leaf_scale, leaf_smoothing,
                                         monotone, q)
    return n_nodes, tree, ws.tree.leaf_of_row, ws.tree.leaf_u


def learn_tree_round(codes, y, u, n_value_bins, missing_code, thresholds, n_classes, criterion, depth, min_leaf=1,
                     min_weight_fraction=0.0, leaf_kind=LEAF_DISCRETE, leaf_scale=0.5, leaf_smoothing=1e-3,
                     monotone=None, q=None, hist_rebuild=0):
    """One round of the tree learner as a fit runs it (the learn function a fit compiles for these codes, called
    through its address as the loop calls it, so the test compiles no variant of its own): the node count, the
    tree and the fit's workspace (the learner's scratch: each row's leaf, the leaves' sums). hist_rebuild > 1:
    the root's histograms are built apart first (the carried-histogram path: the leaves' sums then come from the
    level histograms)."""
    d, n = codes.shape
    config = make_config(max_depth=depth, criterion=criterion, min_samples_leaf=min_leaf,
                         min_weight_fraction_leaf=min_weight_fraction, n_classes=n_classes, leaf=leaf_kind,
                         leaf_scale=leaf_scale, leaf_smoothing=leaf_smoothing, missing_code=missing_code,
                         hist_groups=2, monotone=monotone is not None, hist_rebuild=hist_rebuild)
    ws = make_workspace(y, u, d, missing_code + 1, config, monotone=monotone)  # the tree learner's scratch, as a fit's
    ws.rows.u[:] = u
    if ws.rows.q.shape[0]:
        ws.rows.q[:] = u if q is None else q
    model = make_model(1, depth)
    data = TrainData(codes, np.asarray(y, Y_DTYPE), u, n_value_bins, thresholds, np.zeros(d, np.uint8))
    with warnings.catch_warnings():  # first-class functions are "experimental" in numba (as the fit's loop says)
        warnings.simplefilter("ignore", numba.NumbaExperimentalFeatureWarning)
        call_learn(pick_learner(config, categorical=False).learn.address(codes), data, config[0], ws, model)
    tree = model.nodes[0]
    n_nodes, j = 1, 0  # the nodes are numbered level by level, a split's children next to each other
    while j < n_nodes:
        n_nodes += 2 * int(tree[j]["left"] >= 0)
        j += 1
    return n_nodes, tree, ws


@pytest.mark.parametrize("n_classes, criterion", [(2, CRITERION_ERROR), (2, CRITERION_GINI), (2, CRITERION_Z),
                                                  (3, CRITERION_GINI), (5, CRITERION_ERROR)])
@pytest.mark.parametrize("depth, min_leaf, min_wf", [(1, 1, 0.0), (3, 1, 0.0), (4, 5, 0.02), (6, 1, 0.0)])
@pytest.mark.parametrize("seed", [0, 1])
def test_grow_tree_matches_naive(n_classes, criterion, depth, min_leaf, min_wf, seed):
    codes, y, u, nvb, mc, thr = random_problem(700, 6, n_classes, 9, seed)
    n_nodes, tree, leaf_of_row, leaf_u = kernel_tree(codes, y, u, nvb, mc, thr, n_classes, criterion,
                                                               depth, min_leaf, min_wf)
    ref = naive.grow_tree_naive(codes, y, u, nvb, mc, n_classes, criterion, depth, min_leaf, min_wf)
    assert n_nodes == len(ref)
    for j, node in enumerate(ref):
        got = (tree[j]["feature"], tree[j]["left"], tree[j]["right"])
        assert got == (node["feature"], node["left"], node["right"]), f"node {j}"
        if node["left"] >= 0:
            assert (tree[j]["bin"], tree[j]["missing_left"]) == (node["bin"], node["missing_left"]), j
        else:
            assert tree[j]["class_"] == node["class_"], f"leaf {j}"
            np.testing.assert_array_equal(np.flatnonzero(leaf_of_row == j), np.sort(node["rows"]))
            np.testing.assert_allclose(leaf_u[j, :n_classes], [u[node["rows"]][y[node["rows"]] == c].sum()
                                                   for c in range(n_classes)], rtol=1e-12, atol=1e-300)
    assert np.all(np.diff(tree["left"][:n_nodes][tree["left"][:n_nodes] >= 0]) > 0)


@pytest.mark.parametrize("n_classes, criterion, depth", [(2, CRITERION_ERROR, 1), (2, CRITERION_GINI, 3),
                                                         (3, CRITERION_ERROR, 2)])
def test_grow_tree_matches_naive_on_uint16_codes(n_classes, criterion, depth):
    """Exact mode's codes: uint16, 700 value bins (most of them empty in a node), missing code 700."""
    codes, y, u, nvb, mc, thr = random_problem(500, 5, n_classes, 700, depth)
    assert codes.dtype == np.uint16 and codes.max() == mc
    n_nodes, tree, leaf_of_row, leaf_u = kernel_tree(codes, y, u, nvb, mc, thr, n_classes, criterion, depth)
    ref = naive.grow_tree_naive(codes, y, u, nvb, mc, n_classes, criterion, depth)
    assert n_nodes == len(ref)
    for j, node in enumerate(ref):
        assert (tree[j]["feature"], tree[j]["left"], tree[j]["right"]) == (node["feature"], node["left"],
                                                                          node["right"]), f"node {j}"
        if node["left"] >= 0:
            assert (tree[j]["bin"], tree[j]["missing_left"]) == (node["bin"], node["missing_left"]), j
            assert tree[j]["threshold"] == thr[tree[j]["feature"], tree[j]["bin"]]
        else:
            assert tree[j]["class_"] == node["class_"], f"leaf {j}"
            np.testing.assert_array_equal(np.flatnonzero(leaf_of_row == j), np.sort(node["rows"]))


@pytest.mark.parametrize("depth", [1, 3])
def test_tuned_tree_loop_gives_the_reference_model(depth):
    """The whole boosting loop with the tuned kernels (grouped histograms, block partition, the last
    level straight to the leaves, the weight update read from the leaves) against a replay with the
    reference: every round's tree by brute force (``naive.grow_tree_naive``, no subtraction), the step
    and the weight update in NumPy. Random sample weights, ties and NaN; 13 features make groups of 3-4."""
    from fastboost._binning import BinMapper

    rng = np.random.default_rng(depth)
    n, d = 3001, 13
    X = rng.normal(size=(n, d))
    X[:, 5] = np.round(X[:, 5])  # ties
    X[rng.random((n, d)) < 0.05] = np.nan
    y = (np.nan_to_num(X[:, 0]) + np.nan_to_num(X[:, 1]) * np.nan_to_num(X[:, 2]) + rng.normal(0, 1, n) > 0)
    sw = rng.random(n) + 0.05
    model = AdaBoostClassifier(12, max_depth=depth).fit(X, y.astype(int), sample_weight=sw)
    mapper = BinMapper(255).fit(X, sw / sw.sum())
    codes = mapper.transform(X)
    yi = y.astype(np.uint8)
    p = sw / sw.sum()
    w = p.copy()
    rounds = model.rounds_
    assert len(rounds) == 12
    for t in range(len(rounds)):
        ref = naive.grow_tree_naive(codes, yi, w, mapper.n_value_bins_, mapper.missing_code, 2, CRITERION_ERROR,
                                    depth)
        nodes = model.nodes_[t] if depth > 1 else None
        h = np.empty(n)
        for j, node in enumerate(ref):
            if depth > 1:
                got = (nodes["feature"][j], nodes["bin"][j], nodes["missing_left"][j], nodes["left"][j])
                want = (node["feature"], node.get("bin", nodes["bin"][j]), node.get("missing_left", nodes[
                    "missing_left"][j]), node["left"])
                assert got == want, f"round {t} node {j}"
            elif node["left"] >= 0:
                r = rounds[t]
                assert (r["feature"], r["bin"], r["missing_left"]) == (node["feature"], node["bin"],
                                                                        node["missing_left"]), f"round {t}"
            if node["left"] < 0:
                h[node["rows"]] = 1.0 if node["class_"] == 1 else -1.0
        ys = np.where(y, 1.0, -1.0)
        wi, wj = w[ys == h].sum(), w[ys != h].sum()
        alpha = 0.5 * np.log(wi / wj)
        np.testing.assert_allclose(rounds["alpha"][t], alpha, rtol=1e-10, err_msg=f"alpha, round {t}")
        w = w * np.exp(-alpha * ys * h)
        w /= w.sum()


def test_child_histograms_subtraction_equals_brute_force():
    codes, y, u, nvb, mc, thr = random_problem(2000, 5, 3, 17, 4)
    n = len(y)
    idx = np.arange(n)
    rng = np.random.default_rng(0)
    rng.shuffle(idx[:1200])
    idx[:1200].sort()
    idx[1200:].sort()
    parent = np.empty((1, 5, mc + 1, 4))
    rows_histograms(TreeRows(codes, y, u, u, u), np.arange(n), 0, n, 3, True, parent[0], 2, np.arange(5), None)
    children = np.empty((2, 5, mc + 1, 4))
    # the smaller child (rows 1200..n) in slot 1, its sibling by subtraction in slot 0
    level_child_histograms(TreeRows(codes, y, u, u, u), idx, np.array([[1200, n, 1]]), 1, np.array([0]), parent,
                           children, 3, True, 2, np.arange(5), None)
    for slot, rows in ((0, idx[:1200]), (1, idx[1200:])):
        want = naive.node_histogram_naive(codes, y, u, rows, mc + 1, 3)
        np.testing.assert_allclose(children[slot], want, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("d", [2, 3, 6, 9])
def test_grouped_tree_histograms_bit_identical_to_per_feature(d):
    """Binary trees without row counts take the grouped kernel; its class fields equal the per-feature
    kernel's (taken with a row count) bit for bit: the root (all rows, no gather), a gathered node and
    both children of a split (the smaller built, the larger by subtraction); count field 0."""
    codes, y, u, nvb, mc, thr = random_problem(3001, d, 2, 17, d)
    u = u * np.random.default_rng(d).choice([1e-9, 1.0, 1e6], len(u))
    n = len(y)
    idx = np.random.default_rng(1).permutation(n)
    idx[:1100].sort()
    idx[1100:].sort()
    nb = mc + 1
    for groups in (1, 2, d):
        for start, stop, rows in ((0, n, np.arange(n)), (1100, n, idx)):
            fast = np.full((d, nb, 3), np.nan)
            slow = np.full((d, nb, 3), np.nan)
            rows_histograms(TreeRows(codes, y, u, u, u), rows, start, stop, 2, False, fast, groups, np.arange(d), None)
            rows_histograms(TreeRows(codes, y, u, u, u), rows, start, stop, 2, True, slow, groups, np.arange(d), None)
            assert fast[:, :, :2].tobytes() == slow[:, :, :2].tobytes()
            assert np.all(fast[:, :, 2] == 0.0)
        parent = np.empty((1, d, nb, 3))
        rows_histograms(TreeRows(codes, y, u, u, u), np.arange(n), 0, n, 2, False, parent[0], groups, np.arange(d),
                        None)
        fast = np.full((2, d, nb, 3), np.nan)
        level_child_histograms(TreeRows(codes, y, u, u, u), idx, np.array([[1100, n, 1]]), 1, np.array([0]), parent,
                               fast, 2, False, groups, np.arange(d), None)
        for slot, r in ((0, idx[:1100]), (1, idx[1100:])):
            want = naive.node_histogram_naive(codes, y, u, r, nb, 2)
            np.testing.assert_allclose(fast[slot, :, :, :2], want[:, :, :2], rtol=1e-12, atol=1e-15 * u.max())
        small = naive.node_histogram_naive(codes, y, u, idx[1100:], nb, 2)
        assert fast[1, :, :, :2].tobytes() == small[:, :, :2].tobytes()  # built from its rows, in row order


def test_real_leaves_values():
    codes, y, u, nvb, mc, thr = random_problem(600, 4, 2, 7, 3, zero_frac=0.0)
    n_nodes, tree, leaf_of_row, leaf_u = kernel_tree(codes, y, u, nvb, mc, thr, 2, CRITERION_Z, 3,
                                                               leaf_kind=LEAF_REAL, leaf_scale=0.25,
                                                               leaf_smoothing=0.01)
    for j in range(n_nodes):
        if tree[j]["left"] < 0:
            want = 0.25 * np.log((leaf_u[j, 1] + 0.01) / (leaf_u[j, 0] + 0.01))
            assert tree[j]["value"] == pytest.approx(want, rel=1e-12)


# ----------------------------------------------------------------------------- estimators with trees
@pytest.fixture(scope="module")
def digits_pair():
    X, y = load_digits(return_X_y=True)
    keep = (y == 3) | (y == 8)
    X, y = X[keep], y[keep]
    rng = np.random.default_rng(0)
    perm = rng.permutation(len(y))
    X, y = X[perm], y[perm]
    half = len(y) // 2
    return X[:half], y[:half], X[half:], y[half:]


def _best_gini(x, y):
    """Lowest weighted Gini (unit weights) over the thresholds of one feature; inf if x is constant."""
    best = np.inf
    for t in np.unique(x)[:-1]:
        v = 0.0
        for side in (x <= t, x > t):
            q = np.mean(y[side] == y[0])
            v += side.sum() * 2 * q * (1 - q)
        best = min(best, v)
    return best


def test_first_tree_matches_sklearn_decision_tree(digits_pair):
    X, y, _, _ = digits_pair
    model = AdaBoostClassifier(n_estimators=1, max_depth=3, criterion="gini").fit(X, y)
    tree = DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, y).tree_
    nodes = model.nodes_[0]
    # walk both trees together from the roots (sklearn's node order is depth first, ours breadth first)
    stack = [(0, 0, np.ones(len(y), bool))]
    compared = ties = 0
    while stack:
        ours, theirs, rows = stack.pop()
        is_leaf = tree.children_left[theirs] < 0
        assert (nodes["left"][ours] < 0) == is_leaf
        if is_leaf:
            assert nodes["class_"][ours] == np.argmax(tree.value[theirs][0])
            continue
        f = nodes["feature"][ours]
        if f != tree.feature[theirs]:
            # only allowed on an exact tie between the two features (scikit-learn draws among tied features)
            a = _best_gini(X[rows, f], y[rows])
            b = _best_gini(X[rows, tree.feature[theirs]], y[rows])
            assert a == pytest.approx(b, rel=1e-12), f"node {ours}: not a tie ({a} vs {b})"
            ties += 1
            continue
        x = X[:, f]
        below = np.unique(x[rows & (x <= tree.threshold[theirs])]).max()
        above = np.unique(x[rows & (x > tree.threshold[theirs])]).min()
        assert below <= nodes["threshold"][ours] < above, "same partition of the node's training values"
        compared += 1
        go_left = x <= nodes["threshold"][ours]
        stack += [(nodes["left"][ours], tree.children_left[theirs], rows & go_left),
                  (nodes["right"][ours], tree.children_right[theirs], rows & ~go_left)]
    assert compared >= 5 and ties <= 2


@pytest.mark.parametrize("pair, least", [((0, 9), 0.99), ((2, 7), 0.99), ((1, 4), 0.95), ((3, 8), 0.95),
                                         ((5, 6), 0.95)])
def test_depth3_adaboost_agrees_with_sklearn(pair, least):
    """20 rounds of depth-3 Gini trees. Both libraries stop after a perfect tree (usually the first here),
    so agreement is the trees' agreement: 0/9 and 2/7 have no tied splits (>= 99%); on 1/4, 3/8 and 5/6
    scikit-learn draws among exactly tied features (see the first-tree test), which moves a few test rows."""
    X, y = load_digits(return_X_y=True)
    keep = np.isin(y, pair)
    X, y = X[keep], y[keep]
    perm = np.random.default_rng(0).permutation(len(y))
    X, y = X[perm], y[perm]
    h = len(y) // 2
    ours = AdaBoostClassifier(n_estimators=20, max_depth=3, criterion="gini").fit(X[:h], y[:h])
    sk = SkAdaBoost(DecisionTreeClassifier(max_depth=3), n_estimators=20, random_state=0).fit(X[:h], y[:h])
    agree = np.mean(ours.predict(X[h:]) == sk.predict(X[h:]))
    assert agree >= least, agree


@pytest.mark.parametrize("loader", [load_digits, load_wine], ids=["digits", "wine"])
def test_samme_stumps_agree_with_sklearn(loader):
    X, y = loader(return_X_y=True)
    rng = np.random.default_rng(1)
    perm = rng.permutation(len(y))
    X, y = X[perm], y[perm]
    half = len(y) // 2
    ours = AdaBoostClassifier(n_estimators=50, criterion="gini").fit(X[:half], y[:half])
    sk = SkAdaBoost(DecisionTreeClassifier(max_depth=1), n_estimators=50, random_state=0).fit(X[:half], y[:half])
    assert ours.nodes_ is not None and ours.decision_function(X[:3]).shape == (3, len(np.unique(y)))
    np.testing.assert_allclose(2 * ours.estimator_weights_[:len(sk.estimator_weights_)],
                               sk.estimator_weights_[:ours.n_estimators_], rtol=1e-6)
    agree = np.mean(ours.predict(X[half:]) == sk.predict(X[half:]))
    assert agree >= 0.99, agree
    proba = ours.predict_proba(X[half:])
    np.testing.assert_allclose(proba.sum(axis=1), 1)
    np.testing.assert_array_equal(ours.classes_[proba.argmax(axis=1)], ours.predict(X[half:]))


def test_one_vs_rest_for_the_other_algorithms():
    X, y = load_wine(return_X_y=True)
    model = VadaBoostClassifier(n_estimators=30, lam=0.3).fit(X, y)
    assert len(model.estimators_) == 3
    scores = model.decision_function(X)
    for k, m in enumerate(model.estimators_):
        np.testing.assert_allclose(scores[:, k], m.decision_function(X))
    np.testing.assert_array_equal(model.predict(X), model.classes_[scores.argmax(axis=1)])
    proba = model.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1)
    assert np.mean(model.predict(X) == y) > 0.9


@pytest.mark.parametrize("kind", ["plain", "eval_set", "held_out", "categorical"])
def test_one_vs_rest_bins_once_and_each_class_model_is_its_binary_fit(kind, monkeypatch):
    """The classes' models share one binning of X (and of eval_set's X); each is bit for bit the binary fit of
    "this class or not" with the same parameters."""
    from fastboost import _binning

    rng = np.random.default_rng(11)
    n = 600
    X = rng.normal(size=(n, 5))
    X[rng.random((n, 5)) < 0.05] = np.nan
    y = np.argmax(X[:, :3] + 0.7 * rng.normal(size=(n, 3)), axis=1)
    sw = rng.integers(1, 4, n).astype(float)
    params = dict(n_estimators=12, lam=0.2, random_state=3, max_bins=31)
    fit_kw = {}
    if kind == "eval_set":
        Xv = rng.normal(size=(150, 5))
        fit_kw = {"eval_set": (Xv, np.argmax(Xv[:, :3], axis=1))}
    elif kind == "held_out":
        params.update(n_iter_no_change=4)
    elif kind == "categorical":
        X[:, 4] = rng.integers(0, 6, n)
        params.update(categorical_features=[4])
    calls = {"fit": 0, "transform": 0}
    fit, transform = _binning.BinMapper.fit, _binning.BinMapper.transform

    def counted_fit(self, *a, **k):
        calls["fit"] += 1
        return fit(self, *a, **k)

    def counted_transform(self, *a, **k):
        calls["transform"] += 1
        return transform(self, *a, **k)

    monkeypatch.setattr(_binning.BinMapper, "fit", counted_fit)
    monkeypatch.setattr(_binning.BinMapper, "transform", counted_transform)
    model = VadaBoostClassifier(**params).fit(X, y, sample_weight=sw, **fit_kw)
    assert calls == {"fit": 1, "transform": 2 if kind == "eval_set" else 1}  # (X, and eval_set's X once)
    for c, member in zip(model.classes_, model.estimators_):
        kw = dict(fit_kw)
        if kind == "eval_set":
            kw["eval_set"] = (Xv, (np.argmax(Xv[:, :3], axis=1) == c).astype(int))
        alone = VadaBoostClassifier(**params).fit(X, (y == c).astype(int), sample_weight=sw, **kw)
        assert member.rounds_.tobytes() == alone.rounds_.tobytes()
        np.testing.assert_array_equal(member.cover_, alone.cover_)
        assert member.n_features_quantised_ == alone.n_features_quantised_
    assert "_shared_bins" not in vars(model) and all("_shared_bins" not in vars(m) for m in model.estimators_)


def test_missing_values_route_to_the_side_of_their_class():
    rng = np.random.default_rng(5)
    n = 2000
    X = rng.normal(size=(n, 4))
    y = (X[:, 1] + 0.3 * rng.normal(size=n) > 0).astype(int)
    X[y == 1, 0] = np.where(rng.random((y == 1).sum()) < 0.5, np.nan, X[y == 1, 0])  # NaN only in class 1
    X[:, 3] = np.nan  # all missing: never chosen
    for make in (lambda: AdaBoostClassifier(1, max_depth=2), lambda: AdaBoostClassifier(1)):
        model = make().fit(X, y)
        Xq = np.array([[np.nan, -1.0, 0.0, np.nan], [np.nan, -2.0, 0.0, 0.0]])
        if model.nodes_ is not None:
            assert 3 not in model.nodes_["feature"][0]
        # a row whose only class-1 evidence is the missing feature 0 still reaches a class-1 leaf
        # when the model splits on feature 0; either way predicting NaN rows works
        assert model.predict(Xq).shape == (2,)
    deep = AdaBoostClassifier(30, max_depth=3).fit(X, y)
    nodes = deep.nodes_
    used = nodes["feature"][nodes["left"] >= 0]
    assert 3 not in used and 0 in used
    # where feature 0 is split, NaN rows (all class 1) must go to the side that predicts class 1 more often
    miss = np.isnan(X[:, 0])
    assert np.mean(deep.predict(X[miss]) == 1) > 0.95


@pytest.mark.parametrize("make", [lambda: AdaBoostClassifier(40, max_depth=3, leaf="real"),
                                  lambda: AdaBoostClassifier(40, max_depth=3),
                                  lambda: VadaBoostClassifier(40, max_depth=3, lam=0.5, leaf="real"),
                                  lambda: VadaBoostClassifier(40, max_depth=2, lam=0.5),
                                  lambda: SABoostClassifier(40, max_depth=3)])
def test_tree_costs_and_staged(make):
    X, y = make_twonorm(1500, random_state=3)
    model = make().fit(X, y)
    assert model.n_estimators_ == 40
    F = np.array(list(model.staged_decision_function(X)))
    np.testing.assert_array_equal(F[-1], model.decision_function(X))
    ys = np.where(y == model.classes_[1], 1.0, -1.0)
    loss = np.exp(-ys * F)
    lam = getattr(model, "lam", None)
    if lam is None:
        cost = loss.sum(axis=1)
    else:
        n = len(ys)
        cost = (1 - lam) * loss.sum(axis=1) ** 2 + lam * n * (loss ** 2).sum(axis=1)
    np.testing.assert_allclose(model.rounds_["cost"], cost, rtol=1e-8)
    if not isinstance(model, SABoostClassifier):
        assert np.all(np.diff(cost) < 0), "the cost must decrease with every tree"
    imp = model.feature_importances_
    assert imp.shape == (20,) and imp.sum() == pytest.approx(1.0) and np.all(imp >= 0)


def test_tree_feature_importances_by_gain():
    X, y = make_twonorm(800, random_state=4)
    model = AdaBoostClassifier(5, max_depth=2).fit(X, y)
    imp = np.zeros(20)
    for t, tree in enumerate(model.nodes_):
        internal = tree["left"] >= 0
        g = np.bincount(tree["feature"][internal], weights=tree["gain"][internal], minlength=20)
        imp += model.estimator_weights_[t] * g / g.sum()
    np.testing.assert_allclose(model.feature_importances_, imp / imp.sum())
    assert np.all(model.nodes_["gain"][model.nodes_["left"] >= 0] >= -1e-12)


def test_tree_validation_margins_equal_staged():
    X, y = make_twonorm(1500, random_state=6)
    Xv, yv = make_twonorm(700, random_state=7)
    Xv[::7, 2] = np.nan
    for make in (lambda: AdaBoostClassifier(500, max_depth=3, n_iter_no_change=15),
                 lambda: VadaBoostClassifier(500, max_depth=2, leaf="real", n_iter_no_change=15)):
        model = make().fit(X, y, eval_set=(Xv, yv))
        staged = np.array([np.mean(p != yv) for p in model.staged_predict(Xv)])
        np.testing.assert_allclose(staged, model.validation_errors_[:model.n_estimators_], atol=1e-12)
        assert model.n_estimators_ == np.argmin(model.validation_errors_) + 1
    Xd, yd = load_wine(return_X_y=True)
    model = AdaBoostClassifier(300, criterion="gini", n_iter_no_change=10).fit(Xd[::2], yd[::2],
                                                                               eval_set=(Xd[1::2], yd[1::2]))
    staged = np.array([np.mean(p != yd[1::2]) for p in model.staged_predict(Xd[1::2])])
    np.testing.assert_allclose(staged, model.validation_errors_[:model.n_estimators_], atol=1e-12)


def test_tree_errors():
    X, y = make_twonorm(200, random_state=0)
    with pytest.raises(ValueError, match="EBBoost"):
        EBBoostClassifier(max_depth=3).fit(X, y)
    with pytest.raises(ValueError, match="max_depth"):
        AdaBoostClassifier(max_depth=9).fit(X, y)
    with pytest.raises(ValueError, match="feature_rank"):
        LazyBoostClassifier(max_depth=2).fit(X, y)
    with pytest.raises(ValueError, match="leaf"):
        AdaBoostClassifier(leaf="soft").fit(X, y)


@pytest.mark.parametrize("make", [lambda: AdaBoostClassifier(15, max_depth=4, min_samples_leaf=3),
                                  lambda: AdaBoostClassifier(15, max_depth=3),  # grouped histograms: 5 vs 6 groups
                                  lambda: VadaBoostClassifier(15, max_depth=3, leaf="real"),
                                  lambda: AdaBoostClassifier(15, criterion="gini")])
def test_trees_bit_identical_across_thread_counts(make):
    import numba

    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("needs 2 threads")
    X, y = make_twonorm(40_000, random_state=8)
    if make().max_depth == 1:
        X, y = load_digits(return_X_y=True)
    a = make().set_params(n_jobs=1).fit(X, y)
    b = make().set_params(n_jobs=2).fit(X, y)
    naive.assert_rounds_equal(a.rounds_, b.rounds_)
    np.testing.assert_array_equal(a.nodes_.view(np.uint8), b.nodes_.view(np.uint8))


@pytest.mark.parametrize("variant", [dict(penalty=None), dict(penalty="l1", lam=0.01), dict(penalty="l2", lam=0.5),
                                     dict(penalty="linf", alpha_max=0.3)], ids=["vanilla", "l1", "l2", "linf"])
def test_quadboost_least_squares_trees(variant):
    """Least-squares tree voters: leaves are the mean residual, vanilla alpha = 1, exact decrease identities
    with eta = <h, h> (QuadBoost's equations (3) and (7), see docs/algorithms.md), and re-weighting keeps
    the objective from increasing."""
    X, y = make_twonorm(1200, random_state=9)
    X[::11, 4] = np.nan
    ys = np.where(y == 1, 1.0, -1.0)
    model = QuadBoostClassifier(25, max_depth=3, reweight_at_end=False, learning_rate=1.0, **variant).fit(X, y)
    F = np.array([np.zeros(len(y))] + list(model.staged_decision_function(X)))
    lam = variant.get("lam", 0.0)
    pen = variant.get("penalty")
    obj_prev = 1.0
    for t in range(model.n_estimators_):
        h = (F[t + 1] - F[t]) / model.rounds_["alpha"][t]
        r = ys - F[t]
        # the leaves are the mean residual of their rows
        leaves = h.round(12)
        for v in np.unique(leaves):
            assert np.mean(r[leaves == v]) == pytest.approx(v, rel=1e-9, abs=1e-12)
        g, eta = np.mean(h * r), np.mean(h * h)
        a = model.rounds_["alpha"][t]
        if pen is None:
            assert a == pytest.approx(1.0, rel=1e-9)
            dec = g * g / eta
        elif pen == "l1":
            dec = (abs(g) - lam) ** 2 / eta
        elif pen == "l2":
            dec = g * g / (eta + lam)
        else:
            dec = 2 * a * g - a * a * eta
        alphas = model.rounds_["alpha"][: t + 1]
        obj = np.mean((ys - F[t + 1]) ** 2) + (2 * lam * np.abs(alphas).sum() if pen == "l1" else 0.0) + (
            lam * (alphas ** 2).sum() if pen == "l2" else 0.0)
        assert obj_prev - obj == pytest.approx(dec, abs=1e-10), f"round {t}"
        assert model.rounds_["cost"][t] == pytest.approx(obj, rel=1e-9)
        obj_prev = obj
    again = QuadBoostClassifier(25, max_depth=3, reweight_every=5, learning_rate=1.0, **variant).fit(X, y)
    assert again.objective_ <= obj_prev + 1e-12
    Fa = again.decision_function(X)
    alphas = again.rounds_["alpha"]
    obj = np.mean((ys - Fa) ** 2) + (2 * lam * np.abs(alphas).sum() if pen == "l1" else 0.0) + (
        lam * (alphas ** 2).sum() if pen == "l2" else 0.0)
    assert again.objective_ == pytest.approx(obj, rel=1e-9)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("depth, max_bins, n_classes", [(1, 255, 2), (3, 255, 2), (4, 40, 2), (3, 700, 2), (1, 255, 3),
                                                        (3, 40, 4)])
def test_leaf_sums_from_the_histograms_equal_those_from_the_rows(seed, depth, max_bins, n_classes):
    """With the root's histograms built apart (hist_rebuild > 1, the carried-histogram path) the
    leaves' sums come from the level histograms' bins: the same tree, each row in the same leaf, the sums
    equal to the rows' up to rounding (ties, missing values, zero weights, a constant and an all-missing
    feature, exact mode's uint16 codes)."""
    codes, y, u, nvb, mc, thresholds = random_problem(3000, 5, n_classes, max_bins, seed)
    out = []
    for hist_rebuild in (0, 2):
        n_nodes, tree, ws = learn_tree_round(codes, y, u, nvb, mc, thresholds, n_classes, CRITERION_ERROR, depth,
                                             hist_rebuild=hist_rebuild)
        ts = ws.tree
        out.append((n_nodes, tree[:n_nodes], ts.leaf_of_row, ts.leaf_u[:n_nodes], ts.leaf_w[:n_nodes]))
    (na, ta, ra, ua, wa), (nb, tb, rb, ub, wb) = out
    assert na == nb
    for name in ("feature", "bin", "missing_left", "left", "right", "class_"):
        np.testing.assert_array_equal(ta[name], tb[name], err_msg=name)
    np.testing.assert_array_equal(ra, rb)
    leaves = ta["left"] < 0
    np.testing.assert_allclose(ub[leaves, :n_classes], ua[leaves, :n_classes], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(wb[leaves], wa[leaves], rtol=1e-12, atol=1e-15)
