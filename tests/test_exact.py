"""Exact mode (max_bins=None or above 255): uint16 codes, a threshold between every two distinct values.

The kernels themselves are checked on uint16 codes beside the uint8 ones (tests/test_kernel_*.py run
``max_bins=None`` cases, tests/test_trees.py grows trees on uint16 codes against the brute-force
reference) and tests/test_sklearn_parity.py matches scikit-learn's stumps round by round on continuous
data. Here: the binning, the learner against an exhaustive search on raw values, thread counts, model
files, the options around it and its errors.
"""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fastboost
from fastboost import AdaBoostClassifier, QuadBoostClassifier, VadaBoostClassifier
from fastboost._binning import BinMapper
from fastboost.datasets import make_twonorm


def exhaustive_stump_error(X, ys, w):
    """The smallest weighted error of any stump "x_f <= v" (v between two distinct values of f, both
    polarities) or constant, by brute force on the raw values (no missing values here)."""
    best = min(w[ys > 0].sum(), w[ys < 0].sum())
    for f in range(X.shape[1]):
        vals = np.unique(X[:, f])
        for v in vals[:-1]:
            left = X[:, f] <= v
            pos_left = w[left & (ys > 0)].sum()
            neg_left = w[left & (ys < 0)].sum()
            pos_right = w[~left & (ys > 0)].sum()
            neg_right = w[~left & (ys < 0)].sum()
            best = min(best, min(pos_left, neg_left) + min(pos_right, neg_right))
    return best


@pytest.mark.filterwarnings("ignore:.*no weak hypothesis did better than chance")
@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2 ** 31 - 1), st.integers(2, 400), st.integers(1, 4), st.sampled_from([3, 50, 1000]))
def test_exact_stumps_are_the_exhaustive_minimum(seed, n, d, n_distinct):
    """Every round's stump has the least weighted error over all thresholds between distinct raw values
    (replayed weights), on drawn data with up to 1000 distinct values a feature and heavy ties."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, n_distinct, (n, d)) * 0.37 + rng.integers(0, 2, (n, d)) * 1e-9
    y = (X[:, 0] + rng.normal(scale=0.5 * X[:, 0].std() + 1e-3, size=n) > np.median(X[:, 0])).astype(int)
    if y.min() == y.max():
        y[0] = 1 - y[0]
    model = AdaBoostClassifier(n_estimators=8, max_bins=None).fit(X, y)
    assert model.n_features_quantised_ == 0
    ys = np.where(y == model.classes_[1], 1.0, -1.0)
    w = np.full(n, 1.0 / n)
    for rec in model.rounds_:
        x = X[:, rec["feature"]]
        h = np.where(x <= rec["threshold"], rec["left"], rec["right"]).astype(float)
        err = w[h != ys].sum()
        assert err == pytest.approx(exhaustive_stump_error(X, ys, w), rel=1e-9, abs=1e-15)
        if err == 0.0:
            break
        alpha = 0.5 * np.log((1 - err) / err)
        w = w * np.exp(-alpha * ys * h)
        w /= w.sum()


def test_binning_has_an_edge_between_every_two_distinct_values():
    rng = np.random.default_rng(0)
    n = 20_000
    X = np.column_stack([rng.normal(size=n),                       # 20 000 distinct values
                         rng.integers(0, 700, n).astype(float),    # 700
                         np.where(rng.random(n) < 0.1, np.nan, rng.normal(size=n)),  # missing values
                         np.full(n, 3.0)])                         # constant
    mapper = BinMapper(max_bins=None).fit(X)
    codes = mapper.transform(X)
    assert codes.dtype == np.uint16 and mapper.codes_dtype == np.uint16
    for f in range(3):
        vals = np.unique(X[:, f][~np.isnan(X[:, f])])
        edges = mapper.thresholds_[f, : mapper.n_edges_[f]]
        assert edges.size == vals.size - 1
        assert np.all((vals[:-1] <= edges) & (edges < vals[1:]))
        # code = rank of the value among the distinct values
        ok = ~np.isnan(X[:, f])
        np.testing.assert_array_equal(codes[f, ok], np.searchsorted(vals, X[ok, f]))
    assert mapper.missing_code == 20_000  # the most value bins of any feature, not 65 535
    assert np.all(codes[2, np.isnan(X[:, 2])] == mapper.missing_code)
    assert mapper.n_value_bins_[3] == 1 and mapper.n_features_quantised_ == 0
    assert mapper.thresholds_.shape[1] == 32768  # the smallest power of two above the edges


def test_more_distinct_values_than_uint16_are_quantile_binned_and_counted():
    rng = np.random.default_rng(1)
    X = np.column_stack([rng.normal(size=70_000), rng.integers(0, 10, 70_000)])
    y = (X[:, 0] > 0).astype(int)
    model = AdaBoostClassifier(n_estimators=3, max_bins=None).fit(X, y)
    assert model.n_features_quantised_ == 1
    mapper = BinMapper(max_bins=None).fit(X)
    assert mapper.n_value_bins_[0] <= 65535 and mapper.n_value_bins_[1] == 10
    assert mapper.missing_code <= 65535
    # the default quantises too, and says so
    assert AdaBoostClassifier(n_estimators=3).fit(X, y).n_features_quantised_ == 1


def test_max_bins_between_256_and_65535_uses_two_byte_codes():
    X, y = make_twonorm(3000, 5, random_state=2)
    mapper = BinMapper(max_bins=1000).fit(X)
    assert mapper.codes_dtype == np.uint16 and mapper.n_value_bins_.max() <= 1000
    assert mapper.missing_code == mapper.n_value_bins_.max()
    model = AdaBoostClassifier(n_estimators=20, max_bins=1000).fit(X, y)
    assert model.n_features_quantised_ == 5
    assert model.score(X, y) > 0.9


@pytest.mark.parametrize("value, error", [(65536, ValueError), (1, ValueError), (2.5, TypeError),
                                          ("exact", TypeError)])
def test_bad_max_bins(value, error):
    X, y = make_twonorm(100, 3, random_state=0)
    with pytest.raises(error, match="max_bins"):
        AdaBoostClassifier(max_bins=value).fit(X, y)


@pytest.mark.parametrize("max_depth", [1, pytest.param(3, marks=pytest.mark.slow)])
def test_exact_mode_is_the_same_for_any_thread_count(max_depth):
    import numba

    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("needs 2 threads")
    X, y = make_twonorm(5000, 8, random_state=3)
    X[::7, 2] = np.nan
    a = AdaBoostClassifier(n_estimators=25, max_depth=max_depth, max_bins=None, n_jobs=1).fit(X, y)
    b = AdaBoostClassifier(n_estimators=25, max_depth=max_depth, max_bins=None, n_jobs=2).fit(X, y)
    assert a.rounds_.tobytes() == b.rounds_.tobytes()
    if max_depth > 1:
        assert a.nodes_.tobytes() == b.nodes_.tobytes()


def test_exact_mode_with_validation_save_load_and_warm_start(tmp_path):
    X, y = make_twonorm(4000, 6, random_state=4)
    Xv, yv = make_twonorm(1000, 6, random_state=5)
    model = VadaBoostClassifier(n_estimators=30, max_bins=None, lam=0.1, n_iter_no_change=10)
    model.fit(X, y, eval_set=(Xv, yv))
    assert np.isfinite(model.rounds_["val_error"]).all()
    path = tmp_path / "exact.fbm"
    model.save(path)
    loaded = fastboost.load(path)
    assert loaded.max_bins is None and loaded.n_features_quantised_ == 0
    np.testing.assert_array_equal(loaded.decision_function(Xv), model.decision_function(Xv))
    # a warm start continues on the same uint16 codes: 15 + 15 rounds equal 30 rounds
    a = AdaBoostClassifier(n_estimators=15, max_bins=None, warm_start=True).fit(X, y)
    a.set_params(n_estimators=30).fit(X, y)
    b = AdaBoostClassifier(n_estimators=30, max_bins=None).fit(X, y)
    assert a.rounds_.tobytes() == b.rounds_.tobytes()


@pytest.mark.slow  # compiles its own learner (exact codes and categories): about 10 s
def test_exact_mode_with_categorical_features():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(6)
    n = 3000
    frame = pd.DataFrame({"x": rng.normal(size=n), "colour": pd.Categorical(rng.choice(["r", "g", "b"], n))})
    y = ((frame["x"] > 0.5) | (frame["colour"] == "r")).astype(int).to_numpy()
    model = AdaBoostClassifier(n_estimators=40, max_bins=None).fit(frame, y)  # stumps: no uint16 tree compile
    assert model.score(frame, y) > 0.95
    r = model.rounds_
    assert r["categorical"].any() and np.isfinite(r["threshold"][r["feature"] == 0]).all()


@pytest.mark.slow
def test_exact_mode_for_every_learner():
    """Trees, K classes (SAMME), confidence-rated leaves, QuadBoost's re-weighting, on uint16 codes: the
    fits run and beat the quantised model's training error or match it."""
    from sklearn.datasets import load_breast_cancer, load_wine

    X, y = load_breast_cancer(return_X_y=True)
    Xw, yw = load_wine(return_X_y=True)
    for est, data in [(AdaBoostClassifier(30, max_depth=3, max_bins=None), (X, y)),
                      (AdaBoostClassifier(30, max_depth=2, leaf="real", max_bins=None), (X, y)),
                      (AdaBoostClassifier(30, max_depth=2, max_bins=None), (Xw, yw)),
                      (QuadBoostClassifier(30, max_depth=2, reweight_every=5, max_bins=None), (X, y))]:
        est.fit(*data)
        assert est.score(*data) > 0.9, est


def test_dask_says_exact_mode_is_single_machine():
    da = pytest.importorskip("dask.array")
    from fastboost.dask import DaskAdaBoostClassifier

    X, y = make_twonorm(200, 3, random_state=0)
    with pytest.raises(NotImplementedError, match="exact mode"):
        DaskAdaBoostClassifier(max_bins=None).fit(da.from_array(X, chunks=100), da.from_array(y, chunks=100))


@pytest.mark.slow  # compiles the tree kernels for exact (two-byte) codes: about 45 s
def test_tree_leaves_before_the_last_level_keep_rows_with_codes_above_255():
    """A node that stops splitting before the last level is a leaf found by its range of rows; its sums
    count every row, whatever the code of feature 0 (in exact mode codes go above 255)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(4000, 3))
    y = np.where(X[:, 1] > 0, 1, np.where(X[:, 2] > 0.3, 1, 0))  # x1 > 0: pure, a leaf at depth 1
    model = AdaBoostClassifier(1, max_depth=3, max_bins=None, warm_start=True).fit(X, y)
    data = model._resume.data
    assert data.codes.dtype == np.uint16 and data.codes[0].max() > 255
    tree = model._resume.model.nodes[0]
    from fastboost._kernels.tree import leaf_of_codes

    leaf = np.array([leaf_of_codes(data.codes, i, tree, int(model._resume.config[0]["missing_code"]))
                     for i in range(X.shape[0])])
    depth = np.zeros(tree.shape[0], int)
    for node in range(tree.shape[0]):
        if tree[node]["left"] >= 0:
            depth[tree[node]["left"]] = depth[tree[node]["right"]] = depth[node] + 1
    assert any(depth[node] < 3 for node in np.unique(leaf)), "the data should give a leaf before the last level"
    for node in np.unique(leaf):
        assert tree[node]["weight"] == pytest.approx(data.p[leaf == node].sum(), rel=1e-12, abs=1e-15)
