"""Categorical features: the category-subset split search against brute force over all subsets, the
estimators on DataFrames with string and category columns, unseen categories, model files, and the split
LightGBM chooses on the same data."""
import io
import json
import zipfile

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fastboost
from fastboost import AdaBoostClassifier, VadaBoostClassifier
from fastboost._kernels.split import (
    best_split_one_feature,
    best_split_tree_feature,
    categorical_left_set,
    impurity,
    stump_criterion,
)
from fastboost._types import CAT_WORDS, CRITERION_ERROR, CRITERION_GINI

pd = pytest.importorskip("pandas")

MC = 255  # the missing code (max_bins = 255)


def random_hist(rng, n_cats, fields=2, empty=0.2, ties=True):
    """A categorical feature's histogram: integer weights (ties between categories are common), some
    categories empty, some weight on missing values."""
    h = np.zeros((MC + 1, fields))
    w = rng.integers(0, 6, size=(n_cats, 2)).astype(float) if ties else rng.random((n_cats, 2))
    w[rng.random(n_cats) < empty] = 0.0
    h[:n_cats, :2] = w
    if rng.random() < 0.7:
        h[MC, :2] = rng.integers(0, 4, 2)
    if fields > 2:  # tree histograms: the count of rows with positive weight
        h[:, 2] = (h[:, 0] + h[:, 1] > 0) * rng.integers(1, 5, MC + 1)
    return h


def brute_force(h, n_cats, value_of, n_classes=2):
    """The lowest value_of(left sums, right sums) over every subset of the categories and both sides of the
    missing values (each side with positive weight); inf if no split is valid."""
    best = np.inf
    for mask in range(2 ** n_cats):
        left = np.array([(mask >> c) & 1 for c in range(n_cats)], dtype=bool)
        for missing_left in (0, 1):
            a = h[:n_cats][left].sum(axis=0) + (h[MC] if missing_left else 0)
            b = h[:n_cats][~left].sum(axis=0) + (0 if missing_left else h[MC])
            if a[:n_classes].sum() > 0 and b[:n_classes].sum() > 0:
                best = min(best, value_of(a, b))
    return best


def sides(h, n_cats, bits, missing_left):
    codes = np.arange(n_cats)
    left = ((bits[codes >> 6] >> (codes & 63).astype(np.uint64)) & np.uint64(1)).astype(bool)
    a = h[:n_cats][left].sum(axis=0) + (h[MC] if missing_left else 0)
    b = h[:n_cats][~left].sum(axis=0) + (0 if missing_left else h[MC])
    return a, b


@pytest.mark.parametrize("criterion", [CRITERION_ERROR, CRITERION_GINI])
@given(seed=st.integers(0, 2 ** 32 - 1), n_cats=st.integers(1, 9))
@settings(max_examples=60, deadline=None)
def test_stump_scan_finds_the_best_category_subset(criterion, seed, n_cats):
    rng = np.random.default_rng(seed)
    h = random_hist(rng, n_cats)
    v, k, ml = best_split_one_feature(h, n_cats, MC, criterion, True, 0)
    ref = brute_force(h, n_cats, lambda a, b: stump_criterion(a[0], a[1], b[0], b[1], criterion))
    if not np.isfinite(ref):
        assert not np.isfinite(v)
        return
    assert v == pytest.approx(ref, abs=1e-9)
    bits = np.zeros(CAT_WORDS, np.uint64)
    categorical_left_set(h, n_cats, MC, 2, criterion, k, bits)
    a, b = sides(h, n_cats, bits, ml)  # the set the scan names has the value it reports
    assert stump_criterion(a[0], a[1], b[0], b[1], criterion) == pytest.approx(v, abs=1e-9)


@pytest.mark.parametrize("n_classes", [2, 3])
@given(seed=st.integers(0, 2 ** 32 - 1), n_cats=st.integers(1, 8))
@settings(max_examples=40, deadline=None)
def test_tree_node_scan_against_all_subsets(n_classes, seed, n_cats):
    """Two classes: the best subset (Gini). Three classes (one order per class, not an exhaustive search): a
    valid split no better than the best subset, whose named set has the reported value."""
    rng = np.random.default_rng(seed)
    h = np.zeros((MC + 1, n_classes + 1))
    w = rng.integers(0, 5, size=(n_cats, n_classes)).astype(float)
    w[rng.random(n_cats) < 0.2] = 0.0
    h[:n_cats, :n_classes] = w
    h[MC, :n_classes] = rng.integers(0, 3, n_classes) * (rng.random() < 0.6)
    h[:, n_classes] = (h[:, :n_classes].sum(axis=1) > 0) * 1.0

    def value_of(a, b):
        if a[:n_classes].sum() <= 0 or b[:n_classes].sum() <= 0:
            return np.inf
        return impurity(a, n_classes, CRITERION_GINI) + impurity(b, n_classes, CRITERION_GINI)

    v, k, ml = best_split_tree_feature(h, n_cats, MC, n_classes, CRITERION_GINI, 1, 0.0, True, 0, 0, 0.0)
    ref = brute_force(h, n_cats, value_of, n_classes)
    if not np.isfinite(ref):
        assert not np.isfinite(v)
        return
    if n_classes == 2:
        assert v == pytest.approx(ref, abs=1e-9)
    else:
        assert v >= ref - 1e-9
    bits = np.zeros(CAT_WORDS, np.uint64)
    categorical_left_set(h, n_cats, MC, n_classes, CRITERION_GINI, k, bits)
    a, b = sides(h, n_cats, bits, ml)
    assert value_of(a, b) == pytest.approx(v, abs=1e-9)


def planted(n=3000, n_cats=9, seed=0, noise=0.1):
    """A two-class problem whose rule is a set of categories, with label noise and missing values."""
    rng = np.random.default_rng(seed)
    cat = rng.integers(0, n_cats, n).astype(float)
    good = rng.permutation(n_cats)[: n_cats // 2]
    y = np.isin(cat, good).astype(int)
    flip = rng.random(n) < noise
    y[flip] = 1 - y[flip]
    cat[rng.random(n) < 0.05] = np.nan
    return np.column_stack([cat, rng.normal(size=n)]), y


@pytest.mark.parametrize("seed", range(3))
def test_first_stump_is_the_brute_force_best_subset(seed):
    X, y = planted(seed=seed, n_cats=7)
    m = AdaBoostClassifier(n_estimators=1, categorical_features=[0]).fit(X, y)
    r = m.rounds_[0]
    assert r["feature"] == 0 and r["categorical"] == 1 and np.isnan(r["threshold"])
    cats = m.categories_[0]
    h = np.zeros((MC + 1, 2))
    for c in range(cats.shape[0]):
        h[c] = [np.sum((X[:, 0] == cats[c]) & (y == 0)), np.sum((X[:, 0] == cats[c]) & (y == 1))]
    h[MC] = [np.sum(np.isnan(X[:, 0]) & (y == 0)), np.sum(np.isnan(X[:, 0]) & (y == 1))]
    ref = brute_force(h, cats.shape[0], lambda a, b: min(a[0], a[1]) + min(b[0], b[1]))
    assert np.mean(m.predict(X) != y) == pytest.approx(ref / len(y), abs=1e-12)


def frame(n=1500, seed=1):
    rng = np.random.default_rng(seed)
    colour = rng.choice(["red", "green", "blue", "cyan", "pink"], n)
    size = pd.Categorical(rng.choice(["S", "M", "L"], n))
    x = rng.normal(size=n)
    y = (np.isin(colour, ["red", "cyan"]) * 1.0 + (np.asarray(size) == "L") + (x > 0.5) >= 2).astype(int)
    return pd.DataFrame({"colour": colour, "size": size, "x": x}), y


def test_dataframe_with_string_and_category_columns():
    df, y = frame()
    for depth in (1, 3):
        m = AdaBoostClassifier(n_estimators=40, max_depth=depth).fit(df, y)
        assert m.is_categorical_.tolist() == [True, True, False]
        assert m.categories_[0].tolist() == ["blue", "cyan", "green", "pink", "red"]
        assert m.categories_[1].tolist() == ["L", "M", "S"] and m.categories_[2] is None
        assert np.mean(m.predict(df) == y) > 0.97
        # the same data as category indices and a mask give the same model
        X = np.column_stack([pd.Categorical(df["colour"]).codes, pd.Categorical(df["size"]).codes, df["x"]])
        m2 = AdaBoostClassifier(n_estimators=40, max_depth=depth, categorical_features=[True, True, False]).fit(X, y)
        assert np.array_equal(m2.decision_function(X), m.decision_function(df))


def test_unseen_categories_go_with_missing_values():
    df, y = frame()
    m = VadaBoostClassifier(n_estimators=30, max_depth=2).fit(df, y)
    unseen = df.head(50).copy()
    unseen["colour"] = "purple"
    missing = df.head(50).copy()
    missing["colour"] = None
    assert np.array_equal(m.decision_function(unseen), m.decision_function(missing))


def test_columns_in_another_order_or_missing_get_the_names_error():
    """A frame with categorical columns predicted with its columns reordered or one left out: scikit-learn's
    error about the feature names, not one about non-numeric columns found by position."""
    df, y = frame()
    m = AdaBoostClassifier(n_estimators=5).fit(df, y)
    with pytest.raises(ValueError, match="Feature names must be in the same order"):
        m.predict(df[df.columns[::-1]])
    with pytest.raises(ValueError, match="missing:\n- colour"):
        m.predict(df.drop(columns="colour"))
    np.testing.assert_array_equal(m.predict(df[list(df.columns)]), m.predict(df))


@pytest.mark.parametrize("make", ["polars", "arrow"])
def test_polars_and_arrow_frames_are_read_as_pandas_frames(make):
    """A polars DataFrame or an Arrow table: its text and categorical columns categorical by their types (as a
    Dataset reads them), its names kept: the pandas frame's model, predicting the same on either; a date column
    is refused naming it, not converted to numbers."""
    import datetime

    df, y = frame()
    if make == "polars":
        pl = pytest.importorskip("polars")
        convert = pl.from_pandas
    else:
        pa = pytest.importorskip("pyarrow")
        convert = pa.Table.from_pandas
    ref = AdaBoostClassifier(n_estimators=10).fit(df, y)
    m = AdaBoostClassifier(n_estimators=10).fit(convert(df), y)
    assert m.is_categorical_.tolist() == ref.is_categorical_.tolist() == [True, True, False]
    assert list(m.feature_names_in_) == list(df.columns)
    np.testing.assert_array_equal(m.decision_function(convert(df)), ref.decision_function(df))
    np.testing.assert_array_equal(m.decision_function(df), ref.decision_function(df))
    dated = df.assign(day=[datetime.datetime(2020, 1, 1 + i % 28) for i in range(len(df))])
    with pytest.raises(TypeError, match=r"non-numeric columns: \['day'\]"):
        AdaBoostClassifier(n_estimators=3).fit(convert(dated), y)


def test_a_polars_frame_without_pandas_names_what_to_install():
    class DataFrame:  # a polars frame in an environment without pyarrow
        __module__ = "polars.dataframe.frame"

        def to_pandas(self):
            raise ModuleNotFoundError("No module named 'pyarrow'", name="pyarrow")

        to_arrow = to_pandas

    with pytest.raises(TypeError, match="X is a DataFrame, read through pandas, which needs pyarrow: pip install"):
        AdaBoostClassifier(n_estimators=3).fit(DataFrame(), np.arange(4) % 2)


def test_numeric_categories_given_as_strings_are_a_type_error():
    """A categorical feature fitted on numbers that holds only strings at prediction (a CSV read as text, say):
    none would match, so every row would read as an unknown category; a TypeError says so, as for the reverse.
    A column mixing numbers and strings still maps the strings to unknown categories."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"c": rng.integers(0, 3, 200).astype(float), "x": rng.normal(size=200)})
    y = (df["c"] > 0).astype(int).to_numpy()
    model = AdaBoostClassifier(5, categorical_features=["c"]).fit(df, y)
    with pytest.raises(TypeError, match=r"categorical feature 'c' was fitted on numbers \(0, 1, 2\) but holds strings"):
        model.predict(df.assign(c=df["c"].astype(int).astype(str)))
    mixed = df.assign(c=df["c"].astype(object).where(df.index > 5, "zz"))
    unknown = df.assign(c=df["c"].where(df.index > 5, 7.0))
    np.testing.assert_array_equal(model.decision_function(mixed), model.decision_function(unknown))


def test_a_number_like_string_is_an_unknown_category_whatever_else_the_batch_holds():
    """A feature fitted on numbers, an object column at prediction: "2" is a string, so an unknown category,
    whether the batch also holds "x" or not (it read as category 2 unless some value failed to parse)."""
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"c": rng.integers(0, 3, 200).astype(float), "x": rng.normal(size=200)})
    y = (df["c"] == 2).astype(int).to_numpy()
    model = AdaBoostClassifier(5, categorical_features=["c"]).fit(df, y)
    rows = pd.DataFrame({"c": np.array(["2", 2, "x"], dtype=object), "x": [0.0, 0.0, 0.0]})
    unknown = model.decision_function(rows.assign(c=[7.0, 2.0, 7.0]))
    np.testing.assert_array_equal(model.decision_function(rows), unknown)
    np.testing.assert_array_equal(model.decision_function(rows[:2]), unknown[:2])


def test_string_categories_given_as_numbers_in_an_object_column_are_a_type_error():
    """Fitted on strings, given numbers in an object column or a Categorical of numbers: none would match (every
    row read as missing); a TypeError, as for a numeric column."""
    rng = np.random.default_rng(2)
    df = pd.DataFrame({"c": rng.choice(["1", "2", "3"], 200), "x": rng.normal(size=200)})
    y = (df["c"] == "2").astype(int).to_numpy()
    model = AdaBoostClassifier(5, categorical_features=["c"]).fit(df, y)
    for numbers in (df["c"].astype(int).astype(object), df["c"].astype(int).astype("category")):
        with pytest.raises(TypeError, match=r"categorical feature 'c' was fitted on strings .* but holds numbers"):
            model.predict(df.assign(c=numbers))


@pytest.mark.parametrize("values, error, match", [
    ([(1, 2), (3, 4)] * 50, TypeError, r"holds values of types \['tuple'\]"),
    ([b"1", b"2"] * 50, TypeError, r"holds values of types \['bytes'\]"),
    (["a", "a\x00"] * 50, ValueError, "ending with a NUL character")])
def test_values_that_cannot_be_categories_are_refused(values, error, match):
    """A tuple was read as several numbers (three pairs: categories 1..6, none of which a row held: the feature
    all missing), numeric bytes as numbers, and a string ending with NUL as the same string without it (two
    categories merged, and a model file that would not load)."""
    column = np.empty(len(values), dtype=object)
    column[:] = values
    df = pd.DataFrame({"c": column, "x": np.arange(len(values), dtype=float)})
    with pytest.raises(error, match=match):
        AdaBoostClassifier(3, categorical_features=["c"]).fit(df, np.arange(len(values)) % 2)


def test_validation_error_in_the_loop_equals_prediction():
    """The loop's validation margins (binned codes) and prediction (raw categories) agree."""
    df, y = frame(seed=3)
    tr, va = slice(0, 1000), slice(1000, None)
    for depth in (1, 2):
        m = AdaBoostClassifier(n_estimators=30, max_depth=depth).fit(
            df[tr], y[tr], eval_set=(df[va], y[va]))
        staged = [np.mean(p != y[va]) for p in m.staged_predict(df[va])]
        assert np.allclose(m.validation_errors_[: m.n_estimators_], staged, atol=1e-12)


def test_multiclass_one_vs_rest_and_samme():
    df, _ = frame(seed=4)
    y = pd.Categorical(df["colour"]).codes % 3
    for m in (VadaBoostClassifier(n_estimators=10), AdaBoostClassifier(n_estimators=20, max_depth=2)):
        m.fit(df, y)
        assert np.mean(m.predict(df) == y) == 1.0


def test_warm_start_with_categories_equals_one_fit():
    df, y = frame(seed=5)
    once = AdaBoostClassifier(n_estimators=20, max_depth=2).fit(df, y)
    warm = AdaBoostClassifier(n_estimators=8, max_depth=2, warm_start=True).fit(df, y)
    warm.set_params(n_estimators=20).fit(df, y)
    assert warm.rounds_.tobytes() == once.rounds_.tobytes() and warm.nodes_.tobytes() == once.nodes_.tobytes()


@pytest.mark.parametrize("make", [
    lambda: AdaBoostClassifier(n_estimators=15),
    lambda: AdaBoostClassifier(n_estimators=15, max_depth=3),
    lambda: VadaBoostClassifier(n_estimators=5),
])
def test_model_files_keep_the_categories(make, tmp_path):
    df, y = frame(seed=6)
    y3 = pd.Categorical(df["colour"]).codes % 3 if "Vada" in type(make()).__name__ else y
    m = make().fit(df, y3)
    m.save(tmp_path / "m.fbm")
    loaded = fastboost.load(tmp_path / "m.fbm")
    probe = df.head(200).copy()
    probe.loc[:20, "colour"] = "never seen"
    assert np.array_equal(loaded.predict_proba(probe), m.predict_proba(probe))
    assert [None if c is None else c.tolist() for c in loaded.categories_] == \
        [None if c is None else c.tolist() for c in m.categories_]


@pytest.mark.parametrize("version", [1, 2])
def test_an_older_format_file_loads(tmp_path, version):
    """Files written before categorical splits (format version 1) or before the LP records (version 2), whose
    records lack those fields, still load: the same predictions, the missing fields 0 or NaN."""
    from fastboost._model_io import _OLD_RECORDS

    X, y = planted(seed=2)
    m = AdaBoostClassifier(n_estimators=10, max_depth=2).fit(X, y)
    m.save(tmp_path / "new.fbm")
    with zipfile.ZipFile(tmp_path / "new.fbm") as zin, zipfile.ZipFile(tmp_path / "old.fbm", "w") as zout:
        for name in zin.namelist():
            data = zin.read(name)
            if name == "header.json":
                header = json.loads(data)
                header["format_version"] = version
                header["model"]["arrays"].pop("cover_")  # (version 5's)
                data = json.dumps(header).encode()
            elif name == "cover_.npy":
                continue
            elif name in ("rounds_.npy", "nodes_.npy"):
                arr = np.load(io.BytesIO(data))
                old = np.zeros(arr.shape, _OLD_RECORDS[version]["ROUND_DTYPE" if name == "rounds_.npy"
                                                                else "NODE_DTYPE"])
                for field in old.dtype.names:
                    old[field] = arr[field]
                buf = io.BytesIO()
                np.save(buf, old, allow_pickle=False)
                data = buf.getvalue()
            zout.writestr(name, data)
    old = fastboost.load(tmp_path / "old.fbm")
    assert np.array_equal(old.predict_proba(X), m.predict_proba(X))
    assert np.isnan(old.rounds_["lp_value"]).all() and not old.rounds_["n_active"].any()
    assert np.array_equal(old.rounds_["threshold"], m.rounds_["threshold"])


def test_tampered_categorical_flag_is_refused(tmp_path):
    X, y = planted(seed=2)
    m = AdaBoostClassifier(n_estimators=5).fit(X, y)  # numeric only
    m.rounds_["categorical"][0] = 1
    m.save(tmp_path / "bad.fbm")
    with pytest.raises(ValueError, match="categorical"):
        fastboost.load(tmp_path / "bad.fbm")


def test_lightgbm_chooses_the_same_category_set():
    """Two classes, one categorical feature with a unique best split: LightGBM's categorical split (gradient
    statistics at a zero start, constant hessian: Gini's optimum) and ours send the same categories left (or
    the same partition mirrored)."""
    lgb = pytest.importorskip("lightgbm")
    rng = np.random.default_rng(7)
    share = np.array([0.05, 0.9, 0.3, 0.75, 0.15, 0.6, 0.95, 0.4])
    cat = rng.integers(0, share.shape[0], 4000)
    y = (rng.random(cat.shape[0]) < share[cat]).astype(int)
    X = cat.reshape(-1, 1).astype(float)
    ours = AdaBoostClassifier(n_estimators=1, criterion="gini", categorical_features=[0]).fit(X, y)
    bits = ours.rounds_[0]["cat_left"]
    codes = np.arange(ours.categories_[0].shape[0])
    left = set(ours.categories_[0][((bits[codes >> 6] >> codes.astype(np.uint64)) & np.uint64(1)) == 1]
               .astype(int).tolist())
    gbm = lgb.LGBMClassifier(n_estimators=1, num_leaves=2, max_depth=1, learning_rate=1.0, min_child_samples=1,
                             min_child_weight=0.0, min_data_per_group=1, cat_smooth=0.0, cat_l2=0.0,
                             max_cat_to_onehot=1, max_cat_threshold=64, boost_from_average=False, verbose=-1,
                             n_jobs=1)
    gbm.fit(X, y, categorical_feature=[0])
    node = gbm.booster_.dump_model()["tree_info"][0]["tree_structure"]
    assert node["decision_type"] == "=="
    theirs = {int(c) for c in str(node["threshold"]).split("||")}
    everything = set(range(share.shape[0]))
    assert left in (theirs, everything - theirs)
    # and it is the unique best partition by Gini impurity over all subsets
    n_cats = share.shape[0]
    counts = np.array([[np.sum((cat == c) & (y == 0)), np.sum((cat == c) & (y == 1))] for c in range(n_cats)])
    values = {}
    for mask in range(1, 2 ** (n_cats - 1)):  # each partition once: category n_cats - 1 on the right
        s = frozenset(c for c in range(n_cats) if (mask >> c) & 1)
        a, b = counts[list(s)].sum(axis=0), counts[[c for c in range(n_cats) if c not in s]].sum(axis=0)
        values[s] = stump_criterion(a[0], a[1], b[0], b[1], CRITERION_GINI)
    ranked = sorted(values, key=values.get)
    assert values[ranked[1]] > values[ranked[0]] + 1e-6
    assert left in (set(ranked[0]), everything - ranked[0])


def test_errors_name_the_problem():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 600)
    many = pd.DataFrame({"id": [f"u{i}" for i in range(600)], "x": rng.normal(size=600)})
    with pytest.raises(ValueError, match="'id' has 600 categories; a categorical feature has at most 255"):
        AdaBoostClassifier(n_estimators=2).fit(many, y)
    for max_bins in (None, 1000):  # exact mode, or a wider numeric binning: still 255 categories at most
        with pytest.raises(ValueError, match=r"at most 255 \(a split's set of categories is a 256-bit set"):
            AdaBoostClassifier(n_estimators=2, max_bins=max_bins).fit(many, y)
    with pytest.raises(ValueError, match=r"at most max_bins=64 are supported. Merge rare categories, raise "
                                         r"max_bins \(up to 255\)"):
        AdaBoostClassifier(n_estimators=2, max_bins=64).fit(many.iloc[:100], y[:100])
    mixed = pd.DataFrame({"c": np.array(["a", 1.5] * 300, dtype=object)})
    with pytest.raises(TypeError, match="mixes strings and numbers"):
        AdaBoostClassifier(n_estimators=2).fit(mixed, y)
    with pytest.raises(ValueError, match="index 5, out of range for 2 features"):
        AdaBoostClassifier(categorical_features=[5]).fit(rng.normal(size=(600, 2)), y)
    with pytest.raises(ValueError, match="no column names"):
        AdaBoostClassifier(categorical_features=["a"]).fit(rng.normal(size=(600, 2)), y)
    with pytest.raises(ValueError, match="not in X"):
        AdaBoostClassifier(categorical_features=["nope"]).fit(many, y)
    with pytest.raises(TypeError, match="categorical_features"):
        AdaBoostClassifier(categorical_features=3).fit(rng.normal(size=(600, 2)), y)
    with pytest.raises(TypeError, match="non-numeric columns: \\['id'\\]"):
        AdaBoostClassifier(categorical_features=None).fit(many, y)


def test_categories_up_to_max_bins_and_constant_categorical():
    rng = np.random.default_rng(1)
    n = 5000
    cat = rng.integers(0, 255, n)
    y = (cat % 2).astype(int)
    m = AdaBoostClassifier(n_estimators=3, categorical_features=[0]).fit(np.column_stack([cat, cat * 0]), y)
    assert np.mean(m.predict(np.column_stack([cat, cat * 0])) == y) == 1.0  # odd against even: one set
    X1 = np.column_stack([np.zeros(50), rng.normal(size=50)])
    y1 = rng.integers(0, 2, 50)
    AdaBoostClassifier(n_estimators=3, categorical_features=[0]).fit(X1, y1).predict(X1)  # one category
