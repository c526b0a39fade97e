"""predict_contrib and cover: compiled TreeSHAP against Shapley values from their definition, additivity for
every estimator kind, model files with and without cover."""
import io
import itertools
import json
import math
import zipfile

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.exceptions import NotFittedError

import fastboost
from fastboost import _steps
from fastboost._kernels.explain import (
    tree_contrib,
    tree_contrib_tables,
    tree_expectations,
)
from fastboost._types import CAT_WORDS, NODE_DTYPE, ROUND_DTYPE
from fastboost._validation import read_only
from fastboost.explain import leaf_tables, stump_shap

VALUES = np.array([-1.0, 0.0, 0.5, 1.0, np.nan, np.inf, -np.inf])
N_CATEGORIES = 5


# ---------------------------------------------------------------- a slow reference, written from the definitions
def _left(x, nd):
    """Whether raw value x goes left at a split (record with threshold, missing_left, categorical, cat_left)."""
    if nd["categorical"]:
        if math.isnan(x) or not 0 <= x <= 255:
            return bool(nd["missing_left"])
        c = int(x)
        return bool((int(nd["cat_left"][c // 64]) >> (c % 64)) & 1)
    if math.isnan(x):
        return bool(nd["missing_left"])
    return x <= nd["threshold"]


def _ref_cover(X, tree, sw):
    out = np.zeros(tree.shape[0])
    for i in range(X.shape[0]):
        node = 0
        out[0] += sw[i]
        while tree[node]["left"] >= 0:
            node = tree[node]["left"] if _left(X[i, tree[node]["feature"]], tree[node]) else tree[node]["right"]
            out[node] += sw[i]
    return out


def _expect(tree, cover, value, x, S, node=0):
    """E[tree(x) | x_S] along the cover: x's branch where the feature is in S, else both by their cover share."""
    nd = tree[node]
    if nd["left"] < 0:
        return value(nd)
    if nd["feature"] in S:
        child = nd["left"] if _left(x[nd["feature"]], nd) else nd["right"]
        return _expect(tree, cover, value, x, S, child)
    total = cover[node]
    shares = [(cover[c] / total if total > 0 else 0.5) for c in (nd["left"], nd["right"])]
    return sum(s * _expect(tree, cover, value, x, S, c) for s, c in zip(shares, (nd["left"], nd["right"])))


def _shapley(v, n_features):
    """Shapley values of the game v over every coalition, and v(empty set)."""
    phi = np.zeros(n_features)
    cache = {}
    for size in range(n_features + 1):
        for S in itertools.combinations(range(n_features), size):
            cache[frozenset(S)] = v(frozenset(S))
    for j in range(n_features):
        for S, vs in cache.items():
            if j in S:
                continue
            s = len(S)
            weight = math.factorial(s) * math.factorial(n_features - s - 1) / math.factorial(n_features)
            phi[j] += weight * (cache[S | {j}] - vs)
    return phi, cache[frozenset()]


# ---------------------------------------------------------------- drawn trees
@st.composite
def forests(draw):
    n_features = draw(st.integers(1, 8))
    depth = draw(st.integers(1, 4))
    n_trees = draw(st.integers(1, 3))
    n_classes = draw(st.sampled_from([2, 3]))
    categorical = np.array(draw(st.lists(st.booleans(), min_size=n_features, max_size=n_features)))
    max_nodes = 2 ** (depth + 1) - 1
    nodes = np.zeros((n_trees, max_nodes), NODE_DTYPE)
    nodes["left"] = -1
    nodes["right"] = -1
    nodes["feature"] = -1
    for t in range(n_trees):
        tree = nodes[t]
        frontier = [(0, 0)]
        used = 1
        while frontier:
            node, level = frontier.pop(0)
            split = level < depth and (node == 0 or draw(st.booleans()))
            if not split:
                tree[node]["value"] = draw(st.sampled_from([-1.0, 1.0, 0.25, -0.7]))
                tree[node]["class_"] = draw(st.integers(0, n_classes - 1))
                continue
            f = draw(st.integers(0, n_features - 1))
            tree[node]["feature"] = f
            tree[node]["missing_left"] = draw(st.integers(0, 1))
            if categorical[f]:
                tree[node]["categorical"] = 1
                tree[node]["threshold"] = np.nan
                bits = draw(st.integers(0, 2 ** N_CATEGORIES - 1))
                tree[node]["cat_left"] = np.array([bits] + [0] * (CAT_WORDS - 1), np.uint64)
            else:
                tree[node]["threshold"] = draw(st.sampled_from([-1.0, 0.0, 0.5, 1.0]))
            tree[node]["left"], tree[node]["right"] = used, used + 1
            frontier += [(used, level + 1), (used + 1, level + 1)]
            used += 2
    rounds = np.zeros(n_trees, ROUND_DTYPE)
    rounds["alpha"] = draw(st.lists(st.sampled_from([0.3, 1.0, -0.5, 2.0]), min_size=n_trees, max_size=n_trees))
    seed = draw(st.integers(0, 2 ** 31))
    return nodes, rounds, n_classes, categorical, seed


def _draw_X(rng, n, categorical):
    X = rng.choice(VALUES, size=(n, categorical.shape[0]))
    cats = rng.integers(0, N_CATEGORIES + 1, size=X.shape).astype(np.float64)  # N_CATEGORIES: unknown
    cats[rng.random(X.shape) < 0.15] = np.nan
    return np.where(categorical, cats, X)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(forests())
def test_tree_contributions_are_the_shapley_values_of_the_cover_expectation(forest):
    nodes, rounds, n_classes, categorical, seed = forest
    rng = np.random.default_rng(seed)
    n_features = categorical.shape[0]
    Xtr = _draw_X(rng, 40, categorical)
    sw = rng.choice([0.0, 0.5, 1.0, 3.0], size=40)
    sw[0] = 1.0
    cover = np.array([_ref_cover(Xtr, nodes[t], sw) for t in range(nodes.shape[0])])
    X = read_only(_draw_X(rng, 4, categorical))  # read-only, as predict_contrib hands the kernels
    n_out = 1 if n_classes == 2 else n_classes
    out = np.zeros((X.shape[0], n_out, n_features + 1))
    tree_contrib(X, nodes, rounds, cover, n_classes, out)
    by_tables = np.zeros_like(out)  # the leaf tables predict_contrib uses for trees up to TABLE_BYTES
    tree_contrib_tables(X, nodes, leaf_tables(nodes, rounds, cover, n_classes), by_tables)
    expected = np.zeros(n_out)
    tree_expectations(nodes, rounds, cover, n_classes, expected)
    for c in range(n_out):
        def value(nd, c=c):
            return nd["value"] if n_classes == 2 else float(nd["class_"] == c)

        for i in range(X.shape[0]):
            def v(S, i=i):
                return sum(rounds[t]["alpha"] * _expect(nodes[t], cover[t], value, X[i], S)
                           for t in range(nodes.shape[0]))

            phi, base = _shapley(v, n_features)
            np.testing.assert_allclose(out[i, c, :n_features], phi, rtol=1e-9, atol=1e-12)
            np.testing.assert_allclose(by_tables[i, c, :n_features], phi, rtol=1e-9, atol=1e-12)
            np.testing.assert_allclose(expected[c], base, rtol=1e-9, atol=1e-12)
            used = set(nodes["feature"][nodes["left"] >= 0].tolist())
            for j in set(range(n_features)) - used:
                assert out[i, c, j] == 0.0 and by_tables[i, c, j] == 0.0


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 6), st.integers(1, 5), st.integers(0, 2 ** 31))
def test_stump_contributions_are_the_shapley_values(n_features, n_rounds, seed):
    rng = np.random.default_rng(seed)
    categorical = rng.random(n_features) < 0.3
    rounds = np.zeros(n_rounds, ROUND_DTYPE)
    rounds["feature"] = rng.integers(0, n_features, n_rounds)
    rounds["threshold"] = rng.choice([-1.0, 0.0, 1.0], n_rounds)
    rounds["missing_left"] = rng.integers(0, 2, n_rounds)
    rounds["left"] = rng.choice([-1, 1], n_rounds)
    rounds["right"] = rng.choice([-1, 1], n_rounds)
    rounds["alpha"] = rng.choice([0.5, 1.0, -0.25], n_rounds)
    for t in range(n_rounds):
        if categorical[rounds["feature"][t]]:
            rounds["categorical"][t] = 1
            rounds["threshold"][t] = np.nan
            rounds["cat_left"][t, 0] = rng.integers(0, 2 ** N_CATEGORIES)
    Xtr = _draw_X(rng, 30, categorical)
    sw = rng.choice([0.0, 1.0, 2.0], 30)
    sw[0] = 1.0
    cover = np.zeros((n_rounds, 2))
    for t in range(n_rounds):
        left = sum(sw[i] for i in range(30) if _left(Xtr[i, rounds["feature"][t]], rounds[t]))
        cover[t] = left, sw.sum() - left
    X = _draw_X(rng, 5, categorical)
    out = stump_shap(X, _steps.splits(rounds, None, None, 2), None, cover)[:, 0]  # (the step tables)
    for i in range(X.shape[0]):
        def v(S, i=i):
            total = 0.0
            for r, (cl, cr) in zip(rounds, cover):
                if r["feature"] in S:
                    total += r["alpha"] * (r["left"] if _left(X[i, r["feature"]], r) else r["right"])
                else:
                    total += r["alpha"] * (cl * r["left"] + cr * r["right"]) / (cl + cr)
            return total

        phi, _ = _shapley(v, n_features)
        np.testing.assert_allclose(out[i, :n_features], phi, rtol=1e-9, atol=1e-12)


# ---------------------------------------------------------------- estimators
def _data(n=400, n_features=6, n_classes=2, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, n_features)).round(1)  # ties
    X[rng.random(X.shape) < 0.05] = np.nan
    score = np.nan_to_num(X[:, 0]) + np.nan_to_num(X[:, 1]) * np.nan_to_num(X[:, 2])
    y = np.digitize(score, np.quantile(score, np.linspace(0, 1, n_classes + 1)[1:-1]))
    X[:, -1] = 0.0  # never split on
    return X, y


KINDS = [
    ("AdaBoostClassifier", {}, 2),
    ("AdaBoostClassifier", {"max_depth": 3, "learning_rate": 0.5}, 2),
    ("AdaBoostClassifier", {"max_depth": 2, "leaf": "real"}, 2),
    ("AdaBoostClassifier", {"max_depth": 2}, 3),
    ("AdaBoostClassifier", {"leaf": "real", "max_depth": 2, "multiclass": "ovr"}, 3),
    ("LazyBoostClassifier", {}, 3),
    ("VadaBoostClassifier", {"lam": 0.3}, 2),
    ("EBBoostClassifier", {}, 2),
    ("SABoostClassifier", {}, 2),
    ("QuadBoostClassifier", {"penalty": "l2", "lam": 0.01}, 2),
    ("QuadBoostClassifier", {"max_depth": 2}, 2),
    ("RQPBoostClassifier", {}, 2),
]


@pytest.mark.parametrize("name, params, n_classes", KINDS)
def test_contributions_sum_to_decision_function(name, params, n_classes):
    X, y = _data(n_classes=n_classes)
    sw = np.random.default_rng(1).choice([0.0, 1.0, 2.5], size=y.shape[0])
    clf = getattr(fastboost, name)(n_estimators=15, **params).fit(X, y, sample_weight=sw)
    phi = clf.predict_contrib(X)
    df = clf.decision_function(X)
    if n_classes == 2:
        assert phi.shape == (X.shape[0], X.shape[1] + 1)
        total = phi.sum(axis=1)
    else:
        assert phi.shape == (X.shape[0], n_classes, X.shape[1] + 1)
        total = phi.sum(axis=2)
    np.testing.assert_allclose(total, df, rtol=1e-9, atol=1e-12 * max(1.0, np.abs(df).max()))
    assert np.all(phi[..., X.shape[1] - 1] == 0.0)  # the constant feature is never split on
    assert np.all(phi[..., -1] == phi[:1, ..., -1])  # one expected value for every row


@pytest.mark.parametrize("name", ["LPBoostClassifier", "RLPBoostClassifier"])
def test_lp_contributions_sum_to_decision_function(name):
    pytest.importorskip("highspy")
    X, y = _data()
    clf = getattr(fastboost, name)(n_estimators=10, nu=0.5).fit(X, y)
    np.testing.assert_allclose(clf.predict_contrib(X).sum(axis=1), clf.decision_function(X), rtol=1e-9,
                               atol=1e-12)


def test_cover_counts_training_rows_with_class_weights_and_categories():
    pd = pytest.importorskip("pandas")
    X, y = _data(n=300)
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])])
    df["colour"] = pd.Categorical(np.random.default_rng(2).choice(["red", "green", "blue"], size=300))
    y = np.where(df["colour"] == "red", 1 - y, y)
    clf = fastboost.AdaBoostClassifier(10, max_depth=2, class_weight={0: 1.0, 1: 3.0}).fit(df, y)
    assert clf.cover_.shape == clf.nodes_.shape
    np.testing.assert_allclose(clf.cover_[:, 0], np.where(y == 1, 3.0, 1.0).sum())
    internal = clf.nodes_["left"] >= 0
    kids = clf.cover_[np.arange(10)[:, None], np.where(internal, clf.nodes_["left"], 0)] + \
        clf.cover_[np.arange(10)[:, None], np.where(internal, clf.nodes_["right"], 0)]
    np.testing.assert_allclose(kids[internal], clf.cover_[internal])
    phi = clf.predict_contrib(df)
    np.testing.assert_allclose(phi.sum(axis=1), clf.decision_function(df), rtol=1e-9, atol=1e-12)
    stumps = fastboost.AdaBoostClassifier(10).fit(X, y, sample_weight=np.full(300, 0.5))
    np.testing.assert_allclose(stumps.cover_.sum(axis=1), 150.0)


@pytest.mark.parametrize("max_depth", [1, 2])
def test_weights_summing_past_the_largest_float_give_a_finite_cover(max_depth):
    """Weights of 1e307 each (the fit takes them: only their ratios matter) summed to inf in the cover: NaN
    contributions, and a model file that save wrote and load refused. The cover is now that of unit weights
    times a power of two."""
    X, y = _data(n=300)
    huge = fastboost.AdaBoostClassifier(5, max_depth=max_depth).fit(X, y, sample_weight=np.full(300, 1e307))
    unit = fastboost.AdaBoostClassifier(5, max_depth=max_depth).fit(X, y)
    assert huge.rounds_.tobytes() == unit.rounds_.tobytes()
    assert np.all(np.isfinite(huge.cover_))
    np.testing.assert_allclose(huge.cover_ / huge.cover_[:, :1], unit.cover_ / unit.cover_[:, :1], rtol=1e-12)
    np.testing.assert_allclose(huge.predict_contrib(X), unit.predict_contrib(X), rtol=1e-9, atol=1e-12)
    buf = io.BytesIO()
    huge.save(buf)
    buf.seek(0)
    np.testing.assert_array_equal(fastboost.load(buf).predict_contrib(X), huge.predict_contrib(X))


@pytest.mark.parametrize("seed", range(4))
def test_depth_one_trees_cover_is_the_row_walks(seed):
    """Trees of depth 1 (confidence-rated stumps) take their cover from each split feature's histogram of the
    weights, as stumps do: the same sums as walking every row down every tree (``_ref_cover`` on the codes), with
    fractional and zero weights, missing values, splits at the last value bin and at the missing code, categorical
    splits and roots that are leaves."""
    rng = np.random.default_rng(seed)
    n, n_features, missing_code, T = 3000, 5, 9, 40
    codes = rng.integers(0, missing_code + 1, size=(n_features, n)).astype(np.uint8)  # (code 9: missing)
    sw = rng.choice([0.0, 0.1, 0.7, 1.0, 2.5], size=n)
    nodes = np.zeros((T, 3), NODE_DTYPE)
    nodes["feature"] = -1
    nodes["left"] = nodes["right"] = -1
    for t in range(T):
        if rng.random() < 0.15:
            continue  # a root that is a leaf
        nd = nodes[t, 0]
        nd["feature"] = rng.integers(0, n_features)
        nd["bin"] = rng.choice([0, 3, missing_code - 1, missing_code])
        nd["missing_left"] = rng.integers(0, 2)
        nd["left"], nd["right"] = (1, 2) if rng.random() < 0.5 else (2, 1)
        if rng.random() < 0.3:
            nd["categorical"] = 1
            nd["cat_left"][0] = rng.integers(0, 2 ** missing_code)
    parts = fastboost.explain.cover_parts(np.zeros(T, ROUND_DTYPE), nodes, codes, missing_code, sw)
    got = fastboost.explain.ordered_sum(parts)
    expect = np.zeros((T, 3))
    for t in range(T):
        nd = nodes[t, 0]
        expect[t, 0] = sw.sum()
        if nd["left"] < 0:
            continue
        c = codes[nd["feature"]].astype(np.int64)
        if nd["categorical"]:
            left = np.where(c == missing_code, nd["missing_left"] == 1,
                            (int(nd["cat_left"][0]) >> np.minimum(c, 63)) & 1 == 1)
        else:
            left = np.where(c == missing_code, nd["missing_left"] == 1, c <= nd["bin"])
        expect[t, nd["left"]] = sw[left].sum()
        expect[t, nd["right"]] = sw[~left].sum()
    np.testing.assert_allclose(got, expect, rtol=1e-13, atol=0)


@pytest.mark.parametrize("depth", [2, 3, 4])
def test_tree_cover_counts_rows_exactly_without_weights(depth):
    """Without sample weights the cover of trees of depth 3 or less is counted by each row's set of reachable
    leaves, not summed row by row: the same counts as walking each row down each tree (``_ref_cover``), and
    half the cover of the same fit with every weight 2.0 (the summed path)."""
    X, y = _data(n=3000, seed=depth)
    unit = fastboost.AdaBoostClassifier(25, max_depth=depth).fit(X, y)
    twice = fastboost.AdaBoostClassifier(25, max_depth=depth).fit(X, y, sample_weight=np.full(3000, 2.0))
    assert _steps.has_level_trees(unit)
    expect = np.array([_ref_cover(X, unit.nodes_[t], np.ones(3000)) for t in range(unit.nodes_.shape[0])])
    np.testing.assert_array_equal(unit.cover_, expect)
    np.testing.assert_array_equal(twice.nodes_, unit.nodes_)
    np.testing.assert_array_equal(twice.cover_, 2.0 * unit.cover_)


def test_samme_and_one_vs_rest_shapes():
    X, y = _data(n_classes=3)
    samme = fastboost.AdaBoostClassifier(10, max_depth=2).fit(X, y)
    ovr = fastboost.AdaBoostClassifier(10, max_depth=2, leaf="real", multiclass="ovr").fit(X, y)
    assert samme.predict_contrib(X).shape == ovr.predict_contrib(X).shape == (X.shape[0], 3, X.shape[1] + 1)
    # SAMME's symmetric scores sum to 0 over the classes; so do their contributions, feature by feature
    np.testing.assert_allclose(samme.predict_contrib(X)[:, :, :-1].sum(axis=1), 0.0, atol=1e-12)
    for k, m in enumerate(ovr.estimators_):
        np.testing.assert_array_equal(ovr.predict_contrib(X)[:, k], m.predict_contrib(X))


def test_bad_input():
    X, y = _data()
    with pytest.raises(NotFittedError):
        fastboost.AdaBoostClassifier().predict_contrib(X)
    clf = fastboost.AdaBoostClassifier(5).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        clf.predict_contrib(X[:, :3])


def test_a_model_file_without_cover_predicts_and_says_how_to_explain(tmp_path):
    X, y = _data()
    clf = fastboost.AdaBoostClassifier(8, max_depth=2).fit(X, y)
    clf.save(tmp_path / "new.fbm")
    loaded = fastboost.load(tmp_path / "new.fbm")
    np.testing.assert_array_equal(loaded.predict_contrib(X), clf.predict_contrib(X))
    with zipfile.ZipFile(tmp_path / "new.fbm") as zin, zipfile.ZipFile(tmp_path / "old.fbm", "w") as zout:
        for name in zin.namelist():
            data = zin.read(name)
            if name == "header.json":
                header = json.loads(data)
                header["format_version"] = 4
                del header["model"]["arrays"]["cover_"]
                data = json.dumps(header).encode()
            elif name == "cover_.npy":
                continue
            zout.writestr(name, data)
    old = fastboost.load(tmp_path / "old.fbm")
    np.testing.assert_array_equal(old.predict_proba(X), clf.predict_proba(X))
    with pytest.raises(ValueError, match="Fit the model again"):
        old.predict_contrib(X)
    # a version 4 file cannot carry cover_; a version 5 file's cover_ is checked
    with zipfile.ZipFile(tmp_path / "new.fbm") as zin, zipfile.ZipFile(tmp_path / "bad.fbm", "w") as zout:
        for name in zin.namelist():
            data = zin.read(name)
            if name == "cover_.npy":
                arr = np.load(io.BytesIO(data))
                arr[0, 0] = -1.0
                buf = io.BytesIO()
                np.save(buf, arr)
                data = buf.getvalue()
            zout.writestr(name, data)
    with pytest.raises(ValueError, match="cover"):
        fastboost.load(tmp_path / "bad.fbm")


def test_leaf_tables_and_path_walk_agree_on_a_fitted_model(monkeypatch):
    import fastboost.explain as explain

    X, y = _data(n_classes=3)
    clf = fastboost.AdaBoostClassifier(8, max_depth=4).fit(X, y)
    by_tables = clf.predict_contrib(X)
    monkeypatch.setattr(explain, "TABLE_BYTES", 0)  # trees too deep for the tables take TreeSHAP's walk
    np.testing.assert_allclose(clf.predict_contrib(X), by_tables, rtol=1e-12, atol=1e-13)


def test_plot_importance_of_contributions():
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    from fastboost.plot import plot_importance

    X, y = _data(n_classes=3)
    clf = fastboost.AdaBoostClassifier(8, max_depth=2).fit(X, y)
    ax = plot_importance(clf, X=X, kind="contrib")
    bars = sorted((p.get_y(), p.get_width()) for p in ax.patches)
    want = np.abs(clf.predict_contrib(X)[..., :-1]).mean(axis=0).sum(axis=0)
    np.testing.assert_allclose([w for _, w in bars][::-1], np.sort(want)[::-1][:len(bars)])
    with pytest.raises(ValueError, match="X"):
        plot_importance(clf, kind="contrib")


def test_a_dask_model_without_cover_says_how_to_get_one():
    pytest.importorskip("dask")
    from fastboost.dask import DaskAdaBoostClassifier

    X, y = _data()
    local = fastboost.AdaBoostClassifier(5).fit(X, y)
    model = DaskAdaBoostClassifier(5)  # a Dask model fitted before Dask fits recorded cover_
    model.__dict__.update({k: v for k, v in local.__dict__.items() if k != "cover_"})
    with pytest.raises(ValueError, match="fastboost.AdaBoostClassifier"):
        model.predict_contrib(X)
    with pytest.raises(ValueError, match="fastboost.to_shap needs each node's cover.*Dask"):
        fastboost.to_shap(model)


def test_cover_is_the_same_for_any_thread_count(monkeypatch):
    import fastboost.explain as explain

    monkeypatch.setattr(explain, "COVER_BLOCK", 37)  # many blocks on few rows
    X, y = _data()
    sw = np.random.default_rng(3).random(y.shape[0]) * 1e3 ** np.random.default_rng(4).random(y.shape[0])
    for params in ({}, {"max_depth": 3}):
        one = fastboost.AdaBoostClassifier(10, n_jobs=1, **params).fit(X, y, sample_weight=sw)
        two = fastboost.AdaBoostClassifier(10, n_jobs=2, **params).fit(X, y, sample_weight=sw)
        assert one.cover_.tobytes() == two.cover_.tobytes()
        np.testing.assert_allclose(one.cover_[:, :2].sum(axis=1) if not params else one.cover_[:, 0], sw.sum(),
                                   rtol=1e-12)


@pytest.mark.parametrize("max_depth, categorical", [(1, True), (3, True), (1, False), (3, False)])
def test_cover_from_the_codes_is_the_raw_rows_cover(monkeypatch, max_depth, categorical):
    """cover_ is found on the bin codes; every training row's code goes the way its raw value goes (ties at an
    edge, NaN, +-inf, categories), so it is the cover of the raw rows, summed from the definition. Without
    categories the trees' cover comes from the level-order pass (leaves above the full depth too)."""
    import fastboost.explain as explain

    monkeypatch.setattr(explain, "COVER_BLOCK", 23)  # several blocks
    rng = np.random.default_rng(5)
    X = rng.normal(size=(120, 4)).round(1)
    X[rng.random(X.shape) < 0.1] = np.nan
    X[:3, 1] = [np.inf, -np.inf, np.inf]
    X[:, 3] = rng.integers(0, 5, 120)  # categorical
    X[::11, 3] = np.nan
    y = (np.nan_to_num(X[:, 0]) + np.isin(X[:, 3], [1, 3]) + 0.3 * rng.normal(size=120) > 0.5).astype(int)
    sw = rng.choice([0.0, 0.5, 1.0, 3.0], size=120)
    leaf_rows = 12 if max_depth > 1 and not categorical else 1
    clf = fastboost.AdaBoostClassifier(8 if categorical else 9, max_depth=max_depth, min_samples_leaf=leaf_rows,
                                       categorical_features=[3] if categorical else None).fit(X, y, sample_weight=sw)
    Xk = clf._check_predict_X(X)  # (categories as the kernels see them)
    if clf.nodes_ is None:
        for t, r in enumerate(clf.rounds_):
            left = sum(sw[i] for i in range(120) if _left(Xk[i, r["feature"]], r))
            np.testing.assert_allclose(clf.cover_[t], [left, sw.sum() - left], rtol=1e-12)
    else:
        for t in range(clf.nodes_.shape[0]):
            np.testing.assert_allclose(clf.cover_[t], _ref_cover(Xk, clf.nodes_[t], sw), rtol=1e-12)
    splits = clf.rounds_ if clf.nodes_ is None else clf.nodes_[clf.nodes_["left"] >= 0]
    assert (splits["categorical"] == 1).any() == categorical and np.isin(splits["feature"], [0, 1]).any()
    if max_depth > 1 and not categorical:  # some leaf above the full depth
        depth_of = np.zeros(clf.nodes_.shape, np.int64)
        for j in range(clf.nodes_.shape[1]):
            for side in ("left", "right"):
                kids = clf.nodes_[side][:, j]
                depth_of[kids >= 0, kids[kids >= 0]] = depth_of[kids >= 0, j] + 1
        leaves = (clf.nodes_["left"] < 0) & (np.arange(clf.nodes_.shape[1]) < 2 ** (max_depth + 1) - 1)
        reached = leaves & (clf.cover_ > 0)
        assert (depth_of[reached] < max_depth).any()
