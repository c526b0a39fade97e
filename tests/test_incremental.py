"""Histograms carried from round to round (fastboost/_kernels/incremental.py).

Between full passes (every ``_driver.HIST_REBUILD_EVERY`` rounds) an AdaBoost stump round's histograms
are the last round's, re-weighted per side and class, from one gathered pass over the smaller side;
a tree round's root histograms likewise, from the smaller of the rows it gets right or wrong (and its
leaves' sums then come from the level histograms, not from the rows).
Checked here: those rows against NumPy; one step of the update against histograms built from
the updated weights; over many rounds, the same stumps and trees as building every round's histograms
from every row, and histograms within 1e-12 of a full build after 1000 rounds with no rebuild at all;
the same model for any thread count.
"""
import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fastboost._driver as driver
from fastboost import (
    AdaBoostClassifier,
    EBBoostClassifier,
    LazyBoostClassifier,
    QuadBoostClassifier,
    SABoostClassifier,
    VadaBoostClassifier,
)
from fastboost._kernels.histogram import build_histograms, build_histograms_rows
from fastboost._kernels.incremental import (
    CHUNK_ROWS,
    next_histograms,
    next_mh_histograms,
    next_real_histograms,
    next_tree_histograms,
    side_rows,
    wrong_rows,
)
from fastboost._kernels.tree import rows_histograms
from fastboost._kernels.update import BLOCK, NO_SET, goes_left, n_blocks, update_pair_weights, update_weights_table
from fastboost._types import TreeRows
from fastboost.datasets import make_twonorm


@settings(max_examples=40, deadline=None)
@given(st.sampled_from([0, 1, 7, CHUNK_ROWS - 1, CHUNK_ROWS, CHUNK_ROWS + 3, 2 * CHUNK_ROWS + 11]),
       st.integers(0, 2 ** 32 - 1), st.booleans(), st.booleans(), st.sampled_from([np.uint8, np.uint16]),
       st.booleans())
def test_side_rows_are_the_smaller_side_in_order(n, seed, missing_left, categorical, dtype, sort):
    rng = np.random.default_rng(seed)
    missing_code = 9 if dtype == np.uint8 else 700
    codes = rng.integers(0, missing_code + 1, n).astype(dtype)
    if sort:  # whole chunks on one side: chunks with none and with only rows of the smaller side
        codes = np.sort(codes)
    k = int(rng.integers(0, missing_code))
    cat_left = NO_SET.copy()
    if categorical:
        codes = np.minimum(codes, 9).astype(dtype)  # category indices < 10, the missing code stays above
        codes[rng.random(n) < 0.1] = missing_code
        cat_left[0] = np.uint64(rng.integers(0, 1 << 10))
    rows = np.full(n, -1, np.int64)
    m, small_left = side_rows(codes, k, int(missing_left), missing_code, categorical, cat_left, rows)
    left = np.array([goes_left(c, k, int(missing_left), missing_code, categorical, cat_left) for c in codes],
                    dtype=bool)
    assert bool(small_left) == (left.sum() <= n - left.sum())
    np.testing.assert_array_equal(rows[:m], np.flatnonzero(left if small_left else ~left))
    # among a subset of the rows (weight trimming's kept rows, increasing): that subset's smaller side
    among = np.flatnonzero(rng.random(n) < rng.choice([0.0, 0.3, 0.9, 1.0])).astype(np.int64)
    rows = np.full(n, -1, np.int64)
    m, small_left = side_rows(codes, k, int(missing_left), missing_code, categorical, cat_left, rows, among)
    sub_left = left[among]
    assert bool(small_left) == (sub_left.sum() <= among.size - sub_left.sum())
    np.testing.assert_array_equal(rows[:m], among[sub_left if small_left else ~sub_left])

def test_codes_past_the_category_set_go_right_without_reading_past_it():
    """Two-byte codes reach past the 256 codes a categorical split's set holds (the side tables are built
    for every code up to the missing one): those codes go right, and nothing past the set is read (here
    the words after it are all ones)."""
    words = np.full(2 * NO_SET.shape[0], np.uint64(2 ** 64 - 1))
    cat_left = words[:NO_SET.shape[0]]
    cat_left[:] = 0
    cat_left[0] = np.uint64(0b101)
    got = [bool(goes_left(c, 0, 0, 700, True, cat_left)) for c in (0, 1, 2, 255, 256, 300, 699)]
    assert got == [True, False, True, False, False, False, False]
    assert goes_left(700, 0, 1, 700, True, cat_left)  # the missing code: missing_left


def test_one_step_equals_the_histograms_of_the_updated_weights():
    rng = np.random.default_rng(3)
    n, d = 5000, 6
    codes = rng.integers(0, 20, (d, n)).astype(np.uint8)
    y = rng.integers(0, 2, n).astype(np.uint16)
    w = rng.random(n) ** 4
    w /= w.sum()
    hist = np.empty((d, 21, 2))
    build_histograms(codes, y, w, hist, 2)
    f, k, left_out, right_out, alpha = 2, 8, -1, 1, 0.37
    rows = np.empty(n, np.int64)
    m, small_left = side_rows(codes[f], k, 0, 20, False, NO_SET, rows)
    side = np.empty_like(hist)
    build_histograms_rows(codes, y, w, rows[:m], side, 2, np.arange(codes.shape[0]))
    go_left = codes[f] <= k
    h = np.where(go_left, left_out, right_out)
    correct = h == np.where(y == 1, 1, -1)
    wi, wj = w[correct].sum(), w[~correct].sum()
    so, oo = (left_out, right_out) if small_left else (right_out, left_out)
    next_histograms(hist, side, so, oo, alpha, wi, wj)
    w2 = w * np.exp(-alpha * np.where(correct, 1.0, -1.0))
    w2 /= w2.sum()
    ref = np.empty_like(hist)
    build_histograms(codes, y, w2, ref, 2)
    np.testing.assert_allclose(hist, ref, rtol=1e-13, atol=1e-17)


@pytest.fixture(autouse=True)
def carry_small_fits(monkeypatch):
    """These fits are small (4 000 rows): carry their histograms as a larger fit would."""
    monkeypatch.setattr(driver, "CARRY_MIN_ROWS", 0)


def test_below_the_row_threshold_histograms_are_built_every_round_unless_trimmed(monkeypatch):
    """Below CARRY_MIN_ROWS rows of positive weight the fit builds every round's histograms from every row (a
    full pass is faster there), with the same stumps and steps; weight trimming carries its kept rows' at any
    size; the threshold counts rows of positive weight, never threads."""
    monkeypatch.setattr(driver, "CARRY_MIN_ROWS", 3000)
    X, y = make_twonorm(3000, 8, random_state=5)
    at = AdaBoostClassifier(60, max_depth=1, warm_start=True).fit(X, y)
    assert at._resume.config[0]["hist_rebuild"] == driver.HIST_REBUILD_EVERY
    sw = np.ones(3000)
    sw[::2] = 0.0  # 1 500 rows of positive weight
    below = AdaBoostClassifier(60, max_depth=1, warm_start=True).fit(X, y, sample_weight=sw)
    assert below._resume.config[0]["hist_rebuild"] == 0
    below3 = AdaBoostClassifier(20, max_depth=3, warm_start=True).fit(X, y, sample_weight=sw)
    assert below3._resume.config[0]["hist_rebuild"] == 0
    trimmed = AdaBoostClassifier(20, weight_trim_rate=0.99, warm_start=True).fit(X, y, sample_weight=sw)
    assert trimmed._resume.config[0]["hist_rebuild"] == driver.HIST_REBUILD_EVERY
    monkeypatch.setattr(driver, "CARRY_MIN_ROWS", 0)
    carried = AdaBoostClassifier(60, max_depth=1, warm_start=True).fit(X, y, sample_weight=sw)
    assert carried._resume.config[0]["hist_rebuild"] == driver.HIST_REBUILD_EVERY
    for name in ("feature", "bin", "missing_left", "left", "right", "alpha"):
        np.testing.assert_array_equal(below.rounds_[name], carried.rounds_[name], err_msg=name)


PLAIN_CASES = [
    ("adaboost", lambda: AdaBoostClassifier(40), 2), ("vadaboost", lambda: VadaBoostClassifier(40), 2),
    ("quadboost", lambda: QuadBoostClassifier(40), 2), ("ebboost", lambda: EBBoostClassifier(40), 2),
    ("tree", lambda: AdaBoostClassifier(15, max_depth=3), 2), ("samme", lambda: AdaBoostClassifier(15, max_depth=2), 3),
    ("real-tree", lambda: AdaBoostClassifier(15, max_depth=2, leaf="real"), 2),
    ("mh-tree", lambda: AdaBoostClassifier(15, max_depth=2, leaf="real", multiclass="mh"), 3),
    ("quadboost-tree", lambda: QuadBoostClassifier(15, max_depth=2), 2)]
#: the learners whose full variant with categorical features only this test compiles (each a learner's whole body
#: more to compile): their categorical comparison runs with the slow tests
SLOW_CATEGORICAL = {"samme", "mh-tree"}


@pytest.mark.parametrize("make, n_classes, cat", [pytest.param(make, k, None, id=name) for name, make, k in PLAIN_CASES]
                         + [pytest.param(make, k, [4], id=f"{name}-categorical",
                                         marks=[pytest.mark.slow] if name in SLOW_CATEGORICAL else [])
                            for name, make, k in PLAIN_CASES])
def test_fits_without_the_learners_options_take_the_plain_learner_with_the_same_model(monkeypatch, make, n_classes,
                                                                                         cat):
    """A stump or tree fit with no carried histograms, monotone constraints, feature draws or chosen rows runs the
    plain learner (compiled without those paths); the learner that follows the configuration gives the same
    model, bit for bit (numeric features, or with a categorical one; missing values). Any of those options takes
    the full learner."""
    monkeypatch.setattr(driver, "CARRY_MIN_ROWS", 10 ** 9)  # (this module's fits carry histograms otherwise)
    rng = np.random.default_rng(3)
    X, y = make_twonorm(700, 6, random_state=3)
    if n_classes > 2:
        y = np.digitize(X[:, 0] + X[:, 1], [-0.7, 0.7])
    X[rng.random(X.shape) < 0.08] = np.nan
    # feature 4: five levels, scrambled against the classes (as a category it earns splits of its own)
    X[:, 4] = np.where(rng.random(700) < 0.6, np.array([3, 0, 4, 1, 2])[(y + rng.integers(0, 2, 700)) % 5],
                       rng.integers(0, 5, 700))
    picked = []
    pick = driver.pick_learner
    monkeypatch.setattr(driver, "pick_learner", lambda *a, **k: picked.append(pick(*a, **k)) or picked[-1])

    def plain():  # the fit's learner (every pick of the fit the same)
        kinds = {"plain=True" in learner.learn.__name__ and learner.update in driver.PLAIN_UPDATES.values()
                 for learner in picked}
        picked.clear()
        assert len(kinds) == 1
        return kinds.pop()

    def model(est):
        return [getattr(est, name).tobytes() for name in ("rounds_", "nodes_", "leaf_values_")
                if getattr(est, name, None) is not None]

    a = make().set_params(categorical_features=cat).fit(X, y)
    assert plain()
    with monkeypatch.context() as m:
        m.setattr(driver, "PLAIN_UPDATES", {})
        b = make().set_params(categorical_features=cat).fit(X, y)
        assert not plain()
    assert model(a) == model(b)
    if cat is not None:
        assert np.any(a.rounds_["categorical"] if getattr(a, "nodes_", None) is None else a.nodes_["categorical"])
        return
    for options in ({"colsample_bytree": 0.5}, {"subsample": 0.5}, {"monotone_constraints": [1, 0, 0, 0, 0, 0]}):
        if n_classes > 2 and "monotone_constraints" in options:
            continue  # (two classes only)
        make().set_params(**options).fit(X, y)
        assert not plain(), options
    depth = getattr(make(), "max_depth", 1)
    AdaBoostClassifier(10, max_depth=depth, weight_trim_rate=0.9).fit(X, y)
    assert not plain()
    monkeypatch.setattr(driver, "CARRY_MIN_ROWS", 0)
    AdaBoostClassifier(10, max_depth=depth).fit(X, y)  # carried histograms
    assert not plain()


def _fit(K, est, X, y, **kw):
    old = driver.HIST_REBUILD_EVERY
    driver.HIST_REBUILD_EVERY = K
    try:
        return est.set_params(**kw).fit(X, y)
    finally:
        driver.HIST_REBUILD_EVERY = old


@pytest.fixture(scope="module")
def twonorm():
    X, y = make_twonorm(4000, 10, random_state=7)
    X[::13, 3] = np.nan  # a missing bin
    return X, y


@pytest.mark.parametrize("make", [lambda: AdaBoostClassifier(1000), lambda: LazyBoostClassifier(300, feature_rank=2),
                                  lambda: SABoostClassifier(300)], ids=["adaboost", "lazy", "saboost"])
def test_the_same_stumps_as_building_every_round_from_every_row(twonorm, make):
    X, y = twonorm
    full = _fit(1, make(), X, y)
    carried = _fit(driver.HIST_REBUILD_EVERY, make(), X, y)
    a, b = full.rounds_, carried.rounds_
    assert len(a) == len(b)
    for name in ("feature", "bin", "missing_left", "left", "right"):
        np.testing.assert_array_equal(a[name], b[name], err_msg=name)
    np.testing.assert_array_equal(a["alpha"], b["alpha"])  # the round's sums run over the rows: exact


def test_histograms_stay_within_1e_12_of_a_full_build_after_1000_rounds(twonorm):
    """No rebuild at all for 1000 rounds: the carried histograms against a full build from the weights."""
    X, y = twonorm
    model = _fit(10 ** 9, AdaBoostClassifier(1000, warm_start=True), X, y)
    assert model.n_estimators_ == 1000
    ws, data = model._resume.rounds.ws, model._resume.data
    assert ws.state[0]["hist_ready"] == 1
    ref = np.empty_like(ws.stump.hist)
    build_histograms(data.codes, ws.rows.ylab, ws.rows.w, ref, 2)
    scale = ref.sum(axis=(1, 2), keepdims=True)  # 1: every feature's histogram holds all the weight
    np.testing.assert_allclose(ws.stump.hist / scale, ref / scale, rtol=1e-12, atol=1e-12)


def test_trimmed_histograms_stay_within_1e_12_of_their_kept_rows_after_900_rounds(twonorm):
    """Weight trimming, 100 rounds as usual and then 900 with no periodic rebuild (the kept rows change only
    when they no longer hold the share): the carried histograms against a build from those rows' weights."""
    X, y = twonorm
    model = AdaBoostClassifier(100, weight_trim_rate=0.95, warm_start=True).fit(X, y)
    model._resume.config[0]["hist_rebuild"] = 10 ** 9
    model.set_params(n_estimators=1000).fit(X, y)
    assert model.n_estimators_ == 1000 and model._resume.config[0]["hist_rebuild"] == 10 ** 9
    ws, data = model._resume.rounds.ws, model._resume.data
    state = ws.state[0]
    assert state["hist_ready"] == 1 and 0 < state["n_kept"] < X.shape[0]
    kept = ws.stump.kept[:state["n_kept"]]
    ref = np.empty_like(ws.stump.hist)
    build_histograms_rows(data.codes, ws.rows.ylab, ws.rows.w, kept, ref, 2, np.arange(data.codes.shape[0]))
    np.testing.assert_allclose(ws.stump.hist, ref, rtol=1e-12, atol=1e-12 * ws.rows.w[kept].sum())


def test_only_the_rules_it_is_exact_for_carry_histograms(twonorm):
    X, y = twonorm
    y3 = np.where(X[:, 0] > 0.5, 2, (y > 0).astype(int))
    for est, yy in ((AdaBoostClassifier(3, warm_start=True), y),
                    (AdaBoostClassifier(3, max_depth=2, warm_start=True), y),
                    (SABoostClassifier(3, max_depth=3, min_samples_leaf=1, warm_start=True), y),
                    (AdaBoostClassifier(3, warm_start=True), y3),
                    (AdaBoostClassifier(3, max_depth=2, warm_start=True), y3),
                    (AdaBoostClassifier(3, weight_trim_rate=0.99, warm_start=True), y),
                    (AdaBoostClassifier(3, leaf="real", multiclass="mh", warm_start=True), y3),
                    (AdaBoostClassifier(3, leaf="real", warm_start=True), y)):
        assert est.fit(X, yy)._resume.config[0]["hist_rebuild"] > 1, est
    for est, yy in ((VadaBoostClassifier(3, warm_start=True), y),
                    (VadaBoostClassifier(3, max_depth=2, warm_start=True), y),
                    (AdaBoostClassifier(3, max_depth=2, weight_trim_rate=0.99, warm_start=True), y),
                    (AdaBoostClassifier(3, max_depth=2, leaf="real", warm_start=True), y),
                    (AdaBoostClassifier(3, max_depth=2, min_samples_leaf=5, warm_start=True), y3),
                    (AdaBoostClassifier(3, max_depth=2, leaf="real", multiclass="mh", warm_start=True), y3),
                    (AdaBoostClassifier(3, leaf="real", multiclass="mh", min_samples_leaf=5, warm_start=True), y3),
                    (AdaBoostClassifier(3, leaf="real", multiclass="joint", warm_start=True), y3)):
        assert est.fit(X, yy)._resume.config[0]["hist_rebuild"] == 0, est


@pytest.mark.parametrize("make, data", [
    (lambda **kw: AdaBoostClassifier(200, warm_start=True, **kw), "twonorm"),
    (lambda **kw: AdaBoostClassifier(100, max_depth=3, warm_start=True, **kw), "twonorm"),
    (lambda **kw: AdaBoostClassifier(150, leaf="real", multiclass="mh", warm_start=True, **kw), "twonorm3"),
    (lambda **kw: AdaBoostClassifier(150, leaf="real", learning_rate=0.3, warm_start=True, **kw), "twonorm")],
    ids=["stumps", "trees", "mh-stumps", "real-stumps"])
def test_carried_histograms_give_the_same_model_for_any_thread_count(request, make, data):
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("needs 2 threads")
    X, y = request.getfixturevalue(data)
    a = make(n_jobs=1).fit(X, y)
    b = make(n_jobs=2).fit(X, y)
    assert a._resume.config[0]["hist_rebuild"] > 1
    for name in ("rounds_", "nodes_", "leaf_values_"):  # (stumps have no nodes_, discrete leaves no leaf_values_)
        x, z = getattr(a, name), getattr(b, name)
        assert (x is None and z is None) or x.tobytes() == z.tobytes(), name


@settings(max_examples=40, deadline=None)
@given(st.sampled_from([0, 1, 5, BLOCK - 1, BLOCK, BLOCK + 1, 3 * BLOCK + 7]), st.integers(0, 2 ** 32 - 1),
       st.floats(0.0, 1.0))
def test_wrong_rows_are_the_smaller_set_in_order(n, seed, share):
    rng = np.random.default_rng(seed)
    wrong = (rng.random(n) < share).astype(np.int8)
    block_sums = np.zeros((n_blocks(n), 4))
    for b in range(-(-n // BLOCK)):
        block_sums[b, 1] = wrong[b * BLOCK:(b + 1) * BLOCK].sum()
    rows = np.full(n, -1, np.int64)
    m, small_wrong = wrong_rows(wrong, block_sums, rows)
    assert bool(small_wrong) == (wrong.sum() <= n - wrong.sum())
    np.testing.assert_array_equal(rows[:m], np.flatnonzero(wrong == (1 if small_wrong else 0)))


def test_one_tree_step_equals_the_root_histograms_of_the_updated_weights():
    """A discrete binary tree's update marks the rows it gets wrong; the histograms of the smaller set's
    updated weights and this round's root histograms give the next round's root histograms."""
    rng = np.random.default_rng(5)
    n, d, n_nodes = 3 * BLOCK + 100, 5, 7
    codes = rng.integers(0, 30, (d, n)).astype(np.uint8)
    y = rng.integers(0, 2, n).astype(np.uint16)
    w = rng.random(n) ** 4
    w /= w.sum()
    leaf = rng.integers(3, n_nodes, n)  # rows in leaves 3..6
    leaf_class = np.array([-1, -1, -1, 0, 1, 1, 0])
    correct = leaf_class[leaf] == y
    alpha = 0.41
    wi, wj = w[correct].sum(), w[~correct].sum()
    z = wi * np.exp(-alpha) + wj * np.exp(alpha)
    factor = np.empty((n_nodes, 2))
    for node in range(n_nodes):
        for c in range(2):
            factor[node, c] = np.exp(-alpha if leaf_class[node] == c else alpha) / z
    idx = np.empty(n, np.int64)
    hist = np.empty((d, 31, 3))
    rows_histograms(TreeRows(codes, y, w, w, w), idx, 0, n, 2, False, hist, 2, np.arange(codes.shape[0]), None)
    w2 = w.copy()
    marks = np.full(n, 7, np.int8)
    block_sums = np.zeros((n_blocks(n), 4))
    update_weights_table(w2, w, leaf, y, factor, block_sums, False, leaf_class, marks)
    np.testing.assert_array_equal(marks, (~correct).astype(np.int8))
    np.testing.assert_allclose(w2, w * factor[leaf, y], rtol=0, atol=0)
    m, small_wrong = wrong_rows(marks, block_sums, idx)
    side = np.empty_like(hist)
    rows_histograms(TreeRows(codes, y, w2, w2, w2), idx, 0, m, 2, False, side, 2, np.arange(codes.shape[0]), None)
    next_tree_histograms(hist, side, small_wrong, alpha, wi, wj)
    ref = np.empty_like(hist)
    rows_histograms(TreeRows(codes, y, w2, w2, w2), idx, 0, n, 2, False, ref, 2, np.arange(codes.shape[0]), None)
    np.testing.assert_allclose(hist, ref, rtol=1e-12, atol=1e-18)


@pytest.mark.parametrize("depth, n_rounds, n_classes", [(2, 300, 2), (3, 200, 2), (1, 200, 3), (3, 100, 4)])
def test_the_same_trees_as_building_every_root_from_every_row(twonorm, depth, n_rounds, n_classes):
    X, y = twonorm
    if n_classes > 2:  # SAMME: classes by the first features' quantiles
        s = X[:, 0] + X[:, 1]
        y = np.digitize(s, np.nanquantile(s, np.linspace(0, 1, n_classes + 1)[1:-1]))
    full = _fit(1, AdaBoostClassifier(n_rounds, max_depth=depth, warm_start=True), X, y)
    carried = _fit(driver.HIST_REBUILD_EVERY, AdaBoostClassifier(n_rounds, max_depth=depth, warm_start=True), X, y)
    assert carried._resume.config[0]["hist_rebuild"] > 1 and full._resume.config[0]["hist_rebuild"] == 1
    assert full.n_estimators_ == carried.n_estimators_
    a = full._resume.model.nodes[:full.n_estimators_]
    b = carried._resume.model.nodes[:carried.n_estimators_]
    for name in ("feature", "bin", "missing_left", "left", "right", "class_", "value"):
        np.testing.assert_array_equal(a[name], b[name], err_msg=name)
    # carried, the leaves' sums come from the histograms' bins, not the rows: equal up to rounding
    np.testing.assert_allclose(a["weight"], b["weight"], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(full.rounds_["alpha"], carried.rounds_["alpha"], rtol=1e-12)


def test_tree_root_histograms_stay_within_1e_12_of_a_full_build_after_1000_rounds(twonorm):
    X, y = twonorm
    model = _fit(10 ** 9, AdaBoostClassifier(1000, max_depth=2, warm_start=True), X, y)
    assert model.n_estimators_ == 1000
    ws, data = model._resume.rounds.ws, model._resume.data
    assert ws.state[0]["hist_ready"] == 1
    ref = np.empty_like(ws.tree.root_hist)
    w = ws.rows.w
    rows_histograms(TreeRows(data.codes, ws.rows.ylab, w, w, w), ws.tree.rows, 0, w.shape[0], 2, False, ref, 2,
                    np.arange(data.codes.shape[0]), None)
    scale = ref.sum(axis=(1, 2), keepdims=True)
    np.testing.assert_allclose(ws.tree.root_hist / scale, ref / scale, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_pure_leaves_on_separable_data_take_their_sums_from_the_rows(n_classes):
    """A pure leaf's other classes sum to exactly zero (the rows), never to a rounding residue read from
    the carried histograms: on separable data the carried fit stops and weighs its trees as the full build."""
    rng = np.random.default_rng(2)
    X = rng.integers(0, 6, size=(3000, 4)).astype(np.float64)
    y = np.minimum(X[:, 0].astype(np.int64), n_classes - 1) if n_classes > 2 else (X[:, 0] + X[:, 1] > 5).astype(int)
    full = _fit(1, AdaBoostClassifier(20, max_depth=3), X, y)
    carried = _fit(driver.HIST_REBUILD_EVERY, AdaBoostClassifier(20, max_depth=3), X, y)
    assert full.n_estimators_ == carried.n_estimators_
    assert full.stopped_by_rule_ == carried.stopped_by_rule_
    np.testing.assert_array_equal(full.rounds_["alpha"], carried.rounds_["alpha"])
    leaves = full.nodes_["left"] < 0  # (a split node's weight is its histogram's: carried, equal to rounding)
    np.testing.assert_array_equal(full.nodes_["weight"][leaves], carried.nodes_["weight"][leaves])


def _mh_histograms(codes, y, q, n_classes):
    """AdaBoost.MH's root histograms of all rows from the pair weights q (the row's own class's pair is its u)."""
    n = y.shape[0]
    u = q.reshape(n, n_classes)[np.arange(n), y].copy()
    hist = np.empty((codes.shape[0], int(codes.max()) + 2, 2 * n_classes + 1))
    rows_histograms(TreeRows(codes, y, u, q, u), np.empty(n, np.int64), 0, n, n_classes, False, hist, 2,
                    np.arange(codes.shape[0]), True)
    return hist


@pytest.mark.parametrize("n_classes, missing_left", [(3, 1), (4, 0), (7, 1)])
def test_one_mh_stump_step_equals_the_root_histograms_of_the_updated_weights(n_classes, missing_left):
    """An AdaBoost.MH stump: this round's root histograms and the smaller side's (its rows' weights before the
    update) give, each field scaled by its leaf's factor, the histograms of the updated pair weights."""
    rng = np.random.default_rng(n_classes)
    n, d, missing_code = 3 * CHUNK_ROWS // 2 + 77, 5, 40
    codes = rng.integers(0, missing_code + 1, (d, n)).astype(np.uint8)
    y = rng.integers(0, n_classes, n).astype(np.uint16)
    q = rng.random(n * n_classes) ** 3
    q /= q.sum()
    hist = _mh_histograms(codes, y, q, n_classes)
    f, k = 2, 17
    left = np.array([goes_left(c, k, missing_left, missing_code, False, NO_SET) for c in codes[f]])
    leaf = np.where(left, 1, 2).astype(np.int64)
    factor = np.vstack([np.ones(2 * n_classes), rng.uniform(0.3, 3.0, (2, 2 * n_classes))])
    idx = np.empty(n, np.int64)
    m, small_left = side_rows(codes[f], k, missing_left, missing_code, False, NO_SET, idx)
    assert m == min(left.sum(), n - left.sum())
    u = q.reshape(n, n_classes)[np.arange(n), y].copy()
    side = np.empty_like(hist)
    rows_histograms(TreeRows(codes, y, u, q, u), idx, 0, m, n_classes, False, side, 2, np.arange(d), True)
    q2 = q.copy()
    w2 = np.empty(n)
    update_pair_weights(q2, w2, leaf, y, factor)
    own = np.arange(n_classes)[None, :] == y[:, None]
    expect = q.reshape(n, n_classes) * np.where(own, factor[leaf, :n_classes], factor[leaf, n_classes:])
    np.testing.assert_array_equal(q2.reshape(n, n_classes), expect)
    np.testing.assert_array_equal(w2, expect[np.arange(n), y])
    next_mh_histograms(hist, side, factor, 1 if small_left else 2, 2 if small_left else 1, n_classes)
    np.testing.assert_allclose(hist, _mh_histograms(codes, y, q2, n_classes), rtol=1e-12, atol=1e-18)


def _tree_histograms(codes, y, w):
    """The binary tree learner's root histograms of weights w (fields: class 0, class 1, row count)."""
    n = w.shape[0]
    hist = np.empty((codes.shape[0], int(codes.max()) + 1, 3))
    rows_histograms(TreeRows(codes, y, w, w, w), np.arange(n, dtype=np.int64), 0, n, 2, False, hist, 2,
                    np.arange(codes.shape[0]), None)
    return hist


@pytest.mark.parametrize("missing_left", [0, 1])
def test_one_real_stump_step_equals_the_root_histograms_of_the_updated_weights(missing_left):
    """A stump with confidence-rated leaves: this round's root histograms and the smaller side's (its rows'
    weights before the update) give, each class's field scaled by its side's factor, the histograms of the
    updated weights; the row counts stay."""
    rng = np.random.default_rng(5 + missing_left)
    n, d, missing_code = 3 * CHUNK_ROWS // 2 + 31, 5, 40
    codes = rng.integers(0, missing_code + 1, (d, n)).astype(np.uint8)
    y = rng.integers(0, 2, n).astype(np.uint16)
    w = rng.random(n) ** 3
    w /= w.sum()
    hist = _tree_histograms(codes, y, w)
    f, k = 3, 22
    left = np.array([goes_left(c, k, missing_left, missing_code, False, NO_SET) for c in codes[f]])
    leaf = np.where(left, 1, 2).astype(np.int64)
    factor = np.vstack([np.ones(2), rng.uniform(0.3, 3.0, (2, 2))])  # per leaf, class 0 and class 1
    idx = np.empty(n, np.int64)
    m, small_left = side_rows(codes[f], k, missing_left, missing_code, False, NO_SET, idx)
    assert m == min(left.sum(), n - left.sum())
    side = np.empty_like(hist)
    rows_histograms(TreeRows(codes, y, w, w, w), idx, 0, m, 2, False, side, 2, np.arange(d), None)
    w2 = w.copy()
    update_weights_table(w2, np.full(n, 1.0 / n), leaf, y, factor, np.empty((n_blocks(n), 2)), False)
    np.testing.assert_array_equal(w2, w * factor[leaf, y])
    next_real_histograms(hist, side, factor, 1 if small_left else 2, 2 if small_left else 1)
    ref = _tree_histograms(codes, y, w2)
    np.testing.assert_allclose(hist[:, :, :2], ref[:, :, :2], rtol=1e-12, atol=1e-18)
    np.testing.assert_array_equal(hist[:, :, 2], ref[:, :, 2])


@pytest.mark.parametrize("learning_rate", [1.0, 0.3])
def test_the_same_real_stumps_as_building_every_root_from_every_row(twonorm, learning_rate):
    """Binary stumps with confidence-rated leaves and carried root histograms: the same splits; the leaves' sums
    come from the histograms' bins, so the leaf values and the nodes' weights are equal up to rounding."""
    X, y = twonorm
    make = lambda: AdaBoostClassifier(300, leaf="real", learning_rate=learning_rate, warm_start=True)  # noqa: E731
    full = _fit(1, make(), X, y)
    carried = _fit(driver.HIST_REBUILD_EVERY, make(), X, y)
    assert carried._resume.config[0]["hist_rebuild"] > 1 and full._resume.config[0]["hist_rebuild"] == 1
    assert full.n_estimators_ == carried.n_estimators_ == 300
    a, b = full.nodes_, carried.nodes_
    for name in ("feature", "bin", "missing_left", "left", "right"):
        np.testing.assert_array_equal(a[name], b[name], err_msg=name)
    np.testing.assert_allclose(a["value"], b["value"], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(a["weight"], b["weight"], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(full.decision_function(X), carried.decision_function(X), rtol=1e-9, atol=1e-12)


def test_real_stump_root_histograms_stay_within_1e_12_of_a_full_build_after_1000_rounds(twonorm):
    X, y = twonorm
    model = _fit(10 ** 9, AdaBoostClassifier(1000, leaf="real", learning_rate=0.3, warm_start=True), X, y)
    assert model.n_estimators_ == 1000
    ws, data = model._resume.rounds.ws, model._resume.data
    assert ws.state[0]["hist_ready"] == 1
    ref = _tree_histograms(data.codes, ws.rows.ylab, ws.rows.w)[:, :ws.tree.root_hist.shape[1]]
    scale = ref[:, :, :2].sum(axis=(1, 2), keepdims=True)  # 1: every feature's histogram holds all the weight
    np.testing.assert_allclose(ws.tree.root_hist[:, :, :2] / scale, ref[:, :, :2] / scale, rtol=0, atol=1e-12)


@pytest.fixture(scope="module")
def twonorm3(twonorm):
    X, y = twonorm
    s = X[:, 0] + X[:, 1]
    return X, np.digitize(s, np.nanquantile(s, [1 / 3, 2 / 3]))


def _mh_stumps(n_rounds, **kw):
    return AdaBoostClassifier(n_rounds, leaf="real", multiclass="mh", warm_start=True, **kw)


@pytest.mark.parametrize("learning_rate", [1.0, 0.3])
def test_the_same_mh_stumps_as_building_every_root_from_every_row(twonorm3, learning_rate):
    """AdaBoost.MH's stumps with carried root histograms: the same splits, and the same leaf values and steps
    bit for bit (the leaves' sums come from the rows); the nodes' weights and gains up to rounding."""
    X, y = twonorm3
    full = _fit(1, _mh_stumps(300, learning_rate=learning_rate), X, y)
    carried = _fit(driver.HIST_REBUILD_EVERY, _mh_stumps(300, learning_rate=learning_rate), X, y)
    assert carried._resume.config[0]["hist_rebuild"] > 1 and full._resume.config[0]["hist_rebuild"] == 1
    assert full.n_estimators_ == carried.n_estimators_ == 300
    a, b = full.nodes_, carried.nodes_
    for name in ("feature", "bin", "missing_left", "left", "right"):
        np.testing.assert_array_equal(a[name], b[name], err_msg=name)
    np.testing.assert_array_equal(full.leaf_values_, carried.leaf_values_)
    np.testing.assert_array_equal(full.rounds_["alpha"], carried.rounds_["alpha"])
    np.testing.assert_allclose(a["weight"], b["weight"], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(a["gain"], b["gain"], rtol=1e-9, atol=1e-15)


@pytest.mark.parametrize("learning_rate", [0.5, 1.0])
def test_mh_root_histograms_stay_within_1e_13_of_a_full_build_after_100_rounds(twonorm3, learning_rate):
    """No rebuild for 100 rounds (six times the rebuild period): the carried histograms against a full build from
    the pair weights, relative to the feature's total weight. (The pair weights spread far faster than AdaBoost's
    weights: with no rebuild at all, after 1000 rounds at rate 1 the difference reaches about 1e-9.)"""
    X, y = twonorm3
    model = _fit(10 ** 9, _mh_stumps(100, learning_rate=learning_rate), X, y)
    assert model.n_estimators_ == 100
    ws, data = model._resume.rounds.ws, model._resume.data
    assert ws.state[0]["hist_ready"] == 1
    ref = _mh_histograms(data.codes, ws.rows.ylab, ws.rows.q, 3)[:, :ws.tree.root_hist.shape[1]]
    total = ref[:, :, [0, 1, 2, 4, 5, 6]].sum(axis=(1, 2), keepdims=True)  # W+ and W- of every class: 1
    np.testing.assert_allclose(ws.tree.root_hist / total, ref / total, rtol=0, atol=1e-13)

