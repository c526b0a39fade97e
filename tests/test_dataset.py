"""fastboost.Dataset: built from batches, parquet files or tables, it gives the in-memory fit's model bit for bit."""
import os
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from naive import assert_same_models

from fastboost import (
    AdaBoostClassifier,
    Dataset,
    EBBoostClassifier,
    LPBoostClassifier,
    RLPBoostClassifier,
    VadaBoostClassifier,
    _binning,
)
from fastboost._binning import RowSample, sample_rows

pd = pytest.importorskip("pandas")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")


def same_model(a, b):
    """Equal fitted records (rounds and trees) of two models, one-vs-rest ones class by class, and the same
    cover (predict_contrib's, from the codes) and classes."""
    assert_same_models(a, b)
    for x, z in zip(getattr(a, "estimators_", None) or [a], getattr(b, "estimators_", None) or [b]):
        assert x.cover_.tobytes() == z.cover_.tobytes()
    assert np.array_equal(a.classes_, b.classes_)


def split(n, sizes):
    """Batch boundaries from drawn sizes (0 and 1 included), the last batch taking the rest."""
    bounds, start = [], 0
    for s in sizes:
        if start >= n:
            break
        bounds.append((start, min(n, start + s)))
        start = min(n, start + s)
    if start < n:
        bounds.append((start, n))
    return bounds


def table(n, d, seed, n_levels=3):
    """Features with NaN, ties, a +-inf and a string column; binary labels; weights with zeros."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X[:, 0] = np.round(X[:, 0] * 2)  # ties
    X[rng.random((n, d)) < 0.1] = np.nan
    if n > 3:
        X[1, -1], X[2, -1] = np.inf, -np.inf
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(d)])
    levels = np.array(["a", "b", "c", "d", "e"][:n_levels], dtype=object)
    s = levels[rng.integers(0, n_levels, n)]
    s[rng.random(n) < 0.1] = None
    frame["s"] = s
    y = (np.nan_to_num(X[:, 0]) + rng.normal(size=n) > 0).astype(np.int64)
    if n >= 2:
        y[:2] = [0, 1]
    w = rng.random(n)
    w[rng.random(n) < 0.1] = 0.0
    w[0] = 1.0
    return frame, y, w


@pytest.fixture
def small_sample(monkeypatch):
    """A binning sample of 37 rows: the sampled path at test sizes."""
    monkeypatch.setattr(_binning, "SUBSAMPLE", 37)


# ---------------------------------------------------------------------------------------------- the sample
@settings(max_examples=40, deadline=None)
@given(n=st.integers(0, 3000), size=st.integers(1, 500), seed=st.integers(0, 2**31 - 2),
       batches=st.lists(st.integers(0, 700), min_size=1, max_size=30), drop=st.floats(0, 0.9))
def test_row_sample_is_the_same_for_any_batches(n, size, seed, batches, drop):
    """Offered in any batches, the sample is the rows with the smallest keys: the in-memory sample."""
    rng = np.random.default_rng(seed)
    positive = np.flatnonzero(rng.random(n) >= drop)
    sample = RowSample(seed, size)
    for a, b in split(positive.size, batches):
        sample.offer(positive[a:b], lambda kept, rows=positive[a:b]: rows[kept][:, None] * 2.0)
    rows, payload = sample.result()
    want = sample_rows(seed, size, n, positive)
    assert np.array_equal(rows, want)
    assert np.array_equal(payload[:, 0], 2.0 * want) if rows.size else payload is None
    # the reference: sort every row by its key
    keys = _binning.sample_keys(seed, positive)
    ref = np.sort(positive[np.lexsort((positive, keys))[:size]])
    assert np.array_equal(want, ref)


def test_row_sample_is_uniform():
    """Each row is drawn with probability size / n (a chi-square-free check: counts within 5 sigma)."""
    n, size, reps = 200, 50, 400
    counts = np.zeros(n)
    for seed in range(reps):
        counts[sample_rows(seed, size, n)] += 1
    p = size / n
    assert np.all(np.abs(counts - reps * p) < 5 * np.sqrt(reps * p * (1 - p)))


# ---------------------------------------------------------------------------------------------- same model
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(n=st.integers(2, 160), seed=st.integers(0, 1000), batches=st.lists(st.integers(0, 40), max_size=12),
       kind=st.sampled_from(["numpy", "pandas", "arrow"]), weighted=st.booleans(),
       learner=st.sampled_from(["stumps", "trees"]))
def test_from_batches_equals_in_memory(small_sample, n, seed, batches, kind, weighted, learner):
    frame, y, w = table(n, 3, seed)
    if kind == "numpy":
        frame = frame.drop(columns=["s"]).to_numpy()
    params = dict(n_estimators=8, random_state=seed, max_depth=1 if learner == "stumps" else 2)
    ref = AdaBoostClassifier(**params).fit(frame, y, w if weighted else None)
    bounds = split(n, batches)

    def make_batches():
        for a, b in bounds:
            X = frame[a:b] if kind == "numpy" else frame.iloc[a:b]
            if kind == "arrow":
                X = pa.Table.from_pandas(X, preserve_index=False)
            yield (X, y[a:b], w[a:b]) if weighted else (X, y[a:b])

    ds = Dataset.from_batches(make_batches, random_state=seed)
    model = AdaBoostClassifier(**params).fit(ds)
    same_model(ref, model)
    assert np.array_equal(model.predict_proba(ds), ref.predict_proba(frame))
    assert np.array_equal(model.predict_contrib(ds), ref.predict_contrib(frame))
    assert ds.codes.shape == (frame.shape[1], n)


@pytest.mark.parametrize("est", [
    AdaBoostClassifier(10, random_state=1),  # SAMME trees in the one loop
    AdaBoostClassifier(6, leaf="real", random_state=1),  # one model per class
    AdaBoostClassifier(6, leaf="real", multiclass="mh", loss="logistic", random_state=1),  # its margins per pair
    VadaBoostClassifier(6, lam=0.5, random_state=1),  # one-vs-rest stumps
])
def test_multiclass_categorical_and_eval_set(small_sample, est):
    frame, _, w = table(300, 3, 5)
    rng = np.random.default_rng(5)
    y = np.array(["p", "q", "r"], dtype=object)[rng.integers(0, 3, 300)]
    tr, va = slice(0, 220), slice(220, 300)
    ref = est.__class__(**est.get_params()).set_params(n_iter_no_change=4)
    ref.fit(frame.iloc[tr], y[tr], w[tr], eval_set=(frame.iloc[va], y[va]))
    ds = Dataset(frame.iloc[tr], y[tr], w[tr], random_state=1, batch_rows=33)
    dv = Dataset(frame.iloc[va], y[va], reference=ds, batch_rows=7)
    model = est.__class__(**est.get_params()).set_params(n_iter_no_change=4).fit(ds, eval_set=(dv,))
    same_model(ref, model)
    assert list(model.feature_names_in_) == ["x0", "x1", "x2", "s"]
    assert np.array_equal(model.predict(dv), ref.predict(frame.iloc[va]))
    assert np.array_equal(model.decision_function(dv), ref.decision_function(frame.iloc[va]))
    # a raw eval_set is binned with the Dataset's edges too
    raw = est.__class__(**est.get_params()).set_params(n_iter_no_change=4).fit(ds, eval_set=(frame.iloc[va], y[va]))
    same_model(ref, raw)


def test_exact_mode_lp_and_trimming(small_sample):
    """A Dataset fit equals the in-memory fit in exact mode, for the LP estimators and with weight trimming
    (AdaBoost's with the string column; EBBoost's and the trees' on the numeric columns, whose trimmed learners
    the other tests compile already)."""
    frame, y, w = table(250, 3, 9)
    numeric = frame.drop(columns="s")
    for est, X in ((AdaBoostClassifier(8, max_bins=None, random_state=0), frame),
                   (RLPBoostClassifier(5, random_state=0), frame), (LPBoostClassifier(5, random_state=0), frame),
                   (AdaBoostClassifier(8, weight_trim_rate=0.9, random_state=0), frame),
                   (EBBoostClassifier(6, weight_trim_rate=0.9, random_state=0), numeric),
                   (VadaBoostClassifier(6, max_depth=2, weight_trim_rate=0.9, random_state=0), numeric)):
        ref = est.__class__(**est.get_params()).fit(X, y, w)
        ds = Dataset(X, y, w, max_bins=est.max_bins, random_state=0, batch_rows=17)
        same_model(ref, est.__class__(**est.get_params()).fit(ds))


def test_warm_start_continues_on_the_dataset(small_sample):
    frame, y, w = table(200, 3, 2)
    ds = Dataset(frame, y, w, random_state=0, batch_rows=50)
    model = AdaBoostClassifier(5, warm_start=True, random_state=0).fit(ds)
    model.set_params(n_estimators=12).fit(ds)
    same_model(AdaBoostClassifier(12, random_state=0).fit(frame, y, w), model)


def test_a_refused_one_vs_rest_warm_start_on_a_dataset_keeps_every_class_model(small_sample):
    """Labels swapped between the second and third classes: the first class's model continues, the second's is
    refused; every class's model is then as before, and a warm start on the right data gives the longer fit."""
    frame, _, w = table(300, 3, 5)
    y = np.array(["p", "q", "r"], dtype=object)[np.random.default_rng(5).integers(0, 3, 300)]
    ds = Dataset(frame, y, w, random_state=1, batch_rows=50)
    model = VadaBoostClassifier(4, lam=0.5, warm_start=True, random_state=1).fit(ds)
    before = model.decision_function(ds)
    swapped = y.copy()
    q, r = np.flatnonzero(y == "q")[:5], np.flatnonzero(y == "r")[:5]
    swapped[q], swapped[r] = "r", "q"
    done = []
    with pytest.raises(ValueError, match="same training data"):
        model.set_params(n_estimators=8).fit(Dataset(frame, swapped, w, reference=ds),
                                             callbacks=[lambda n, rounds: done.append(n)])
    assert done[-1] == 8  # (the first class's model had continued)
    assert [m.n_estimators_ for m in model.estimators_] == [4, 4, 4] and model.n_estimators_ == 12
    assert np.array_equal(model.decision_function(ds), before)
    model.fit(ds)
    same_model(VadaBoostClassifier(8, lam=0.5, random_state=1).fit(ds), model)


def write_parquet(tmp_path, frame, y, w, bounds):
    d = tmp_path / "data"
    d.mkdir()
    for k, (a, b) in enumerate(bounds):
        part = frame.iloc[a:b].assign(target=y[a:b], weight=w[a:b])
        pq.write_table(pa.Table.from_pandas(part, preserve_index=False), d / f"part-{k:03d}.parquet")
    return d


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(batches=st.lists(st.integers(0, 90), min_size=1, max_size=8), batch_size=st.integers(1, 64))
def test_from_parquet_equals_in_memory(small_sample, tmp_path_factory, batches, batch_size):
    tmp_path = tmp_path_factory.mktemp("pq")
    frame, y, w = table(200, 3, 4)
    bounds = split(200, batches) + [(200, 200)]  # and an empty file
    path = write_parquet(tmp_path, frame, y, w, bounds)
    whole = pd.read_parquet(path)
    X = whole.drop(columns=["target", "weight"])
    ref = AdaBoostClassifier(10, max_depth=2, random_state=3).fit(X, whole["target"], whole["weight"])
    ds = Dataset.from_parquet(path, target="target", weight="weight", batch_size=batch_size, random_state=3,
                              codes_path=tmp_path / "codes.bin")
    model = AdaBoostClassifier(10, max_depth=2, random_state=3).fit(ds)
    same_model(ref, model)
    assert isinstance(ds.codes, np.memmap)
    assert np.array_equal(model.predict(str(path)), ref.predict(X))
    again = Dataset.load(tmp_path / "codes.bin")
    same_model(ref, AdaBoostClassifier(10, max_depth=2, random_state=3).fit(again))
    assert np.array_equal(AdaBoostClassifier(3).fit(again).predict(again), AdaBoostClassifier(3).fit(ds).predict(X))


@pytest.mark.slow
def test_more_than_the_sample_from_parquet_equals_in_memory(tmp_path):
    """Above 200 000 rows (the real sample size), parquet files of drawn sizes give the in-memory model."""
    n = 260_000
    rng = np.random.default_rng(0)
    frame, y, w = table(n, 4, 1)
    cuts = np.sort(rng.choice(np.arange(1, n), 12, replace=False))
    bounds = list(zip(np.r_[0, cuts], np.r_[cuts, n])) + [(n, n)]
    path = write_parquet(tmp_path, frame, y, w, bounds)
    ref = AdaBoostClassifier(20, max_depth=2, random_state=7).fit(frame, y, w)
    ds = Dataset.from_parquet(path, target="target", weight="weight", batch_size=10_007, random_state=7)
    same_model(ref, AdaBoostClassifier(20, max_depth=2, random_state=7).fit(ds))
    ds1 = Dataset.from_batches(lambda: ((frame.iloc[a:b], y[a:b], w[a:b]) for a, b in bounds), random_state=7)
    same_model(ref, AdaBoostClassifier(20, max_depth=2, random_state=7).fit(ds1))


# ---------------------------------------------------------------------------------------------- bad input
def test_parquet_bad_input(tmp_path):
    frame, y, w = table(60, 2, 0)
    path = write_parquet(tmp_path, frame, y, w, [(0, 30), (30, 60)])
    with pytest.raises(ValueError, match="no such file or directory"):
        Dataset.from_parquet(tmp_path / "nothing", target="target")
    with pytest.raises(ValueError, match="no target column 'label'"):
        Dataset.from_parquet(path, target="label")
    # a file whose column has another type
    other = frame.iloc[:5].assign(target=y[:5], weight=w[:5], x1=np.arange(5))
    pq.write_table(pa.Table.from_pandas(other, preserve_index=False), path / "part-009.parquet")
    codes = tmp_path / "codes.bin"
    with pytest.raises(ValueError, match=r"part-009.parquet: column 'x1' has type int64"):
        Dataset.from_parquet(path, target="target", codes_path=codes)
    assert not os.listdir(tmp_path) == [] and not codes.exists()
    assert [p for p in os.listdir(tmp_path) if p.startswith("codes")] == []
    os.remove(path / "part-009.parquet")
    # too many categories: the limit of 255 whatever max_bins is (a smaller max_bins is the limit below it)
    many = pd.DataFrame({"a": np.arange(300.0), "k": pd.Categorical([f"c{i}" for i in range(300)])})
    with pytest.raises(ValueError, match="more than 255 categories; a categorical feature has at most 255"):
        Dataset(many, np.arange(300) % 2, max_bins=None)
    with pytest.raises(ValueError, match=r"more than 20 categories; at most max_bins=20 are supported"):
        Dataset(many, np.arange(300) % 2, max_bins=20)
    # a column of dates: the error names the file
    dates = frame.iloc[:5].assign(target=y[:5], t=pd.date_range("2020-01-01", periods=5)).drop(columns=["s"])
    (tmp_path / "dates").mkdir()
    pq.write_table(pa.Table.from_pandas(dates, preserve_index=False), tmp_path / "dates" / "d.parquet")
    with pytest.raises(ValueError, match=r"d.parquet: feature 't' has type timestamp\[.*\], not numeric"):
        Dataset.from_parquet(tmp_path / "dates", target="target")
    # a missing target
    bad = frame.iloc[:5].assign(target=np.r_[1.0, np.nan, 0, 1, 0], weight=w[:5])
    bad["target"] = bad["target"].astype("float64")
    (tmp_path / "nan").mkdir()
    pq.write_table(pa.Table.from_pandas(bad, preserve_index=False), tmp_path / "nan" / "a.parquet")
    with pytest.raises(ValueError, match=r"a.parquet, row 1: the target is missing"):
        Dataset.from_parquet(tmp_path / "nan", target="target")
    bad["target"] = np.r_[1.0, 0, 0, np.inf, 0]
    pq.write_table(pa.Table.from_pandas(bad, preserve_index=False), tmp_path / "nan" / "a.parquet")
    with pytest.raises(ValueError, match=r"a.parquet, row 3: the target is inf \(not a class\)"):
        Dataset.from_parquet(tmp_path / "nan", target="target")
    bad["target"] = np.r_[0.5, 1.5, 0.5, 2.5, 0.5]  # (a regression target: the fit names where it came from)
    pq.write_table(pa.Table.from_pandas(bad, preserve_index=False), tmp_path / "nan" / "a.parquet")
    with pytest.raises(ValueError, match=r"the target column 'target' of .*a.parquet: Unknown label type"):
        AdaBoostClassifier(2).fit(Dataset.from_parquet(tmp_path / "nan", target="target"))
    # an empty dataset
    (tmp_path / "empty").mkdir()
    pq.write_table(pa.Table.from_pandas(frame.iloc[:0].assign(target=y[:0]), preserve_index=False),
                   tmp_path / "empty" / "e.parquet")
    with pytest.raises(ValueError, match="the dataset is empty"):
        Dataset.from_parquet(tmp_path / "empty", target="target")


def test_batches_bad_input(tmp_path):
    frame, y, w = table(40, 2, 0)
    X = frame.drop(columns=["s"]).to_numpy()
    calls = []

    def changing():
        calls.append(1)
        size = 10 if len(calls) == 1 else 11
        return ((X[a:a + size], y[a:a + size]) for a in range(0, 40, size))

    codes = tmp_path / "c.bin"
    with pytest.raises(ValueError, match="batch 0: 11 rows on the second reading, 10 rows on the first"):
        Dataset.from_batches(changing, codes_path=codes)
    assert os.listdir(tmp_path) == []
    with pytest.raises(ValueError, match="batch 1: its feature columns"):
        Dataset.from_batches(lambda: iter([(X[:5], y[:5]), (X[5:10, :1], y[5:10])]))
    with pytest.raises(ValueError, match="batch 1, row 2: weight -1.0"):
        Dataset.from_batches(lambda: iter([(X[:5], y[:5], w[:5]), (X[5:10], y[5:10], np.r_[1, 1, -1.0, 1, 1])]))
    with pytest.raises(ValueError, match="the dataset is empty"):
        Dataset.from_batches(lambda: iter([]))
    # the second reading must give the first's batches: the same columns, labels and weights (not just as many rows)
    second = {"columns": lambda b: (b[0][:, :1], *b[1:]), "order": lambda b: (b[0][b[0].columns[::-1]], *b[1:]),
              "labels": lambda b: (b[0], b[1][::-1], b[2]), "weights": lambda b: (b[0], b[1], b[2] + 1.0),
              "category": lambda b: (b[0].assign(s="zz"), *b[1:])}
    for what, change in second.items():
        calls.clear()
        data = frame.drop(columns=["s"]) if what == "order" else frame if what == "category" else X

        def reread(change=change, data=data):
            calls.append(1)
            parts = [(data[a:a + 10], y[a:a + 10], w[a:a + 10]) for a in range(0, 40, 10)]
            return iter(parts if len(calls) == 1 else parts[:2] + [change(b) for b in parts[2:]])

        message = ("batch 2: its feature columns" if what in ("columns", "order") else
                   "batch 2: row 0: categorical feature 's' has the category 'zz', which the first reading did not"
                   if what == "category" else f"batch 2: its {what} differ")
        with pytest.raises(ValueError, match=message):
            Dataset.from_batches(reread, codes_path=codes)
        assert os.listdir(tmp_path) == []
    with pytest.raises(TypeError, match="fresh iterator"):
        Dataset.from_batches(iter([(X, y)]))


def test_codes_file_of_another_dataset_is_refused(tmp_path):
    frame, y, w = table(80, 2, 0)
    a = Dataset(frame, y, w, codes_path=tmp_path / "a.bin")
    Dataset(frame.iloc[::-1], y[::-1], codes_path=tmp_path / "b.bin")
    os.replace(tmp_path / "b.bin", tmp_path / "a.bin")  # a's sidecar, b's codes
    with pytest.raises(ValueError, match="another Dataset"):
        Dataset.load(tmp_path / "a.bin")
    other = Dataset(frame * 1, y, max_bins=16)
    c = Dataset(frame, y, w, codes_path=tmp_path / "c.bin")
    with pytest.raises(ValueError, match="other bin edges"):
        Dataset.load(tmp_path / "c.bin", reference=other)
    with pytest.raises(ValueError, match="reference=train"):
        AdaBoostClassifier(3).fit(a, eval_set=(other,))
    assert Dataset.load(tmp_path / "c.bin", reference=c).n_rows == 80
    # another format version
    import json

    meta = dict(np.load(tmp_path / "c.bin.meta.npz"))
    header = json.loads(str(meta["header"]))
    header["version"] = 99
    meta["header"] = np.array(json.dumps(header))
    np.savez(tmp_path / "c.bin.meta.npz", **meta)
    with pytest.raises(ValueError, match="format version 99"):
        Dataset.load(tmp_path / "c.bin")


def test_damaged_codes_are_refused_at_the_first_fit(tmp_path):
    """A codes file whose codes (not its header) are damaged loads, but its first fit (or its use as eval_set)
    refuses a code beyond its feature's value bins and the missing code, naming the file and the feature: the fit
    indexes its histograms with them. Codes in range, the missing code included, fit as before; a header whose
    length field is damaged is refused at load."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 3))
    X[::7, 2] = np.nan
    X[:, 1] = rng.integers(0, 4, 120)  # 4 value bins: codes 4..15 are out of range, 16 is the missing code
    y = (X[:, 0] > 0).astype(int)
    path = tmp_path / "c.bin"
    good = Dataset(X, y, codes_path=path, max_bins=16)
    ref = AdaBoostClassifier(5, max_bins=16).fit(good).decision_function(X)
    n = X.shape[0]
    for f, code, ok in ((1, 3, True), (1, 16, True), (1, 4, False), (1, 15, False), (2, 254, False)):
        Dataset(X, y, codes_path=path, max_bins=16)
        with open(path, "r+b") as fh:  # row 5 of feature f (the codes are feature-major, at the file's end)
            fh.seek(-(X.shape[1] - f) * n + 5, os.SEEK_END)
            fh.write(bytes([code]))
        ds = Dataset.load(path)
        assert ds.codes[f, 5] == code
        if ok:
            AdaBoostClassifier(5, max_bins=16).fit(ds)
            continue
        with pytest.raises(ValueError, match=rf"c\.bin: feature {f} holds bin code {code}, beyond its \d+ value bins "
                                             r"and the missing code 16: the codes file is damaged"):
            AdaBoostClassifier(5, max_bins=16).fit(ds)
        with pytest.raises(ValueError, match="the codes file is damaged"):
            AdaBoostClassifier(5, max_bins=16).fit(good, eval_set=(Dataset.load(path, reference=good),))
    Dataset(X, y, codes_path=path, max_bins=16)
    np.testing.assert_array_equal(AdaBoostClassifier(5, max_bins=16).fit(Dataset.load(path)).decision_function(X),
                                  ref)
    with open(path, "r+b") as fh:  # the header's length field
        fh.seek(8)
        fh.write(b"\xff" * 8)
    with pytest.raises(ValueError, match="not a fastboost codes file"):
        Dataset.load(path)


def test_parquet_paths_columns_and_codes_path(tmp_path):
    """Paths as a user gives them: an existing name with '[' is a file, not a pattern; a pattern matching only
    directories stands for their files; a target, weight or feature column named twice, a codes_path that is a
    data file or lies among the files a later reading would find, and a bad random_state are errors naming them."""
    import shutil

    frame, y, w = table(60, 2, 0)
    path = write_parquet(tmp_path, frame, y, w, [(0, 30), (30, 60)])
    whole = Dataset.from_parquet(path, target="target", weight="weight")
    odd = tmp_path / "run[1]"
    shutil.copytree(path, odd)
    shutil.copy(path / "part-000.parquet", tmp_path / "x[1].parquet")
    for named in (odd, tmp_path / "x[1].parquet", str(tmp_path / "dat*")):  # (the pattern: directory data/)
        ds = Dataset.from_parquet(named, target="target", weight="weight")
        if "x[1]" in str(named):  # the first file alone
            assert np.array_equal(ds.label, y[:30]) and ds.n_rows == 30
        else:
            assert np.array_equal(np.asarray(ds.codes), np.asarray(whole.codes))
    # a pattern of directories skips those a directory's reading skips (a writer's _temporary, say)
    days = tmp_path / "days"
    shutil.copytree(path, days / "d1")
    shutil.copytree(path, days / "_tmp")
    assert Dataset.from_parquet(str(days / "*"), target="target").n_rows == 60
    assert Dataset.from_parquet(str(days / "_*"), target="target").n_rows == 60  # (asked for by name)
    with pytest.raises(ValueError, match=r"no file matches this pattern \(it matches only directories without"):
        (tmp_path / "empty-dir").mkdir()
        Dataset.from_parquet(str(tmp_path / "empty-d*"), target="target")
    for kw, message in ((dict(weight="target"), "the target and the weight are one column, 'target'"),
                        (dict(columns=["x0", "target"]), "columns lists the target column 'target'"),
                        (dict(weight="weight", columns=["x0", "weight"]), "columns lists the weight column"),
                        (dict(columns=["x0", "x0"]), "columns lists 'x0' twice"),
                        (dict(random_state=-5), "random_state must be None, an int in")):
        with pytest.raises(ValueError, match=re.escape(message)):
            Dataset.from_parquet(path, target="target", **kw)
    before = {q.name: q.read_bytes() for q in path.iterdir()}
    for codes, message in ((path / "part-000.parquet", "is the data file"),
                           (path / "c.codes", "is among the data files of"),
                           (path / "sub" / "c.codes", "is among the data files of")):
        codes.parent.mkdir(exist_ok=True)
        with pytest.raises(ValueError, match=message):
            Dataset.from_parquet(path, target="target", codes_path=codes)
    with pytest.raises(ValueError, match="is among the data files of"):
        Dataset.from_parquet(str(path / "*.parquet"), target="target", codes_path=path / "c.parquet")
    assert {q.name: q.read_bytes() for q in path.iterdir() if q.is_file()} == before
    Dataset.from_parquet(path, target="target", codes_path=path / "_c.codes")  # (names with '_' are skipped)
    assert Dataset.from_parquet(path, target="target").n_rows == 60


def test_a_loaded_dataset_does_not_read_changed_files(tmp_path):
    """Prediction on a loaded Dataset reads its parquet files again: a file changed since the codes were made is
    an error naming it (its rows would stand beside the old labels), as is a deleted one."""
    frame, y, w = table(60, 2, 0)
    path = write_parquet(tmp_path, frame, y, w, [(0, 30), (30, 60)])
    ds = Dataset.from_parquet(path, target="target", weight="weight", codes_path=tmp_path / "c.codes")
    model = AdaBoostClassifier(5).fit(ds)
    score = model.score(Dataset.load(tmp_path / "c.codes"))
    part = pq.read_table(path / "part-000.parquet").to_pandas()
    part["x0"] = -part["x0"]
    pq.write_table(pa.Table.from_pandas(part, preserve_index=False), path / "part-000.parquet")
    with pytest.raises(ValueError, match=r"part-000.parquet: changed \(size or modification time\) since the codes"):
        model.score(Dataset.load(tmp_path / "c.codes"))
    os.remove(path / "part-001.parquet")
    with pytest.raises(ValueError, match=r"its parquet data cannot be read again: .*part-001.parquet: no such file"):
        model.predict(Dataset.load(tmp_path / "c.codes"))
    assert 0.5 < score <= 1.0
    AdaBoostClassifier(5).fit(Dataset.load(tmp_path / "c.codes"))  # (fitting reads only the codes and labels)


def test_a_built_dataset_does_not_read_changed_files(tmp_path):
    """A Dataset built in this process reads its parquet files again to predict: one changed since (here its rows
    shuffled) is an error naming it, as for a loaded Dataset; the score was wrong without a word."""
    frame, y, w = table(60, 2, 0)
    path = write_parquet(tmp_path, frame, y, w, [(0, 30), (30, 60)])
    ds = Dataset.from_parquet(path, target="target", weight="weight")
    model = AdaBoostClassifier(5).fit(ds)
    model.score(ds)
    part = pq.read_table(path / "part-000.parquet").to_pandas().iloc[::-1]
    os.utime(path / "part-000.parquet", ns=(0, 0))  # (a rewrite in the same clock tick still differs)
    pq.write_table(pa.Table.from_pandas(part, preserve_index=False), path / "part-000.parquet")
    for call in (lambda: model.score(ds), lambda: model.predict(ds)):
        with pytest.raises(ValueError, match=r"part-000.parquet: changed \(size or modification time\) since the "
                                             r"Dataset was built from it"):
            call()


def test_parquet_inputs_of_the_wrong_kind_are_named(tmp_path):
    """A string as columns (it selected its letters), a path or None as a Dataset's table, a path that is not
    one, and an unreadable file after the first: each a clear error, not a wrong selection or an IndexError."""
    frame, y, w = table(60, 2, 0)
    path = write_parquet(tmp_path, frame, y, w, [(0, 30), (30, 60)])
    with pytest.raises(TypeError, match=r"columns must be a list of column names; got 'x0' \(one column: \['x0'\]\)"):
        Dataset.from_parquet(path, target="target", columns="x0")
    assert Dataset.from_parquet(path, target="target", columns=("x0",)).n_features == 1
    for bad in (path, str(path / "part-000.parquet")):
        with pytest.raises(TypeError, match="for parquet files use Dataset.from_parquet"):
            Dataset(bad, y)
    with pytest.raises(TypeError, match="takes a 2-D table .* got NoneType"):
        Dataset(None, y)
    with pytest.raises(TypeError, match="a parquet path is a file, a directory or a glob pattern"):
        Dataset.from_parquet(None, target="target")
    with pytest.raises(TypeError, match=r"to fit parquet files, pass fastboost.Dataset.from_parquet"):
        AdaBoostClassifier(3).fit(str(path), y)
    train = Dataset.from_parquet(path, target="target")
    with pytest.raises(TypeError, match=r"eval_set's X is .* a path or text: for parquet files pass "
                                        r"eval_set=\(Dataset.from_parquet\(path, target=..., reference=train\),\)"):
        AdaBoostClassifier(3).fit(train, eval_set=(str(path), y))
    # strings in one batch, numbers in another, of a column read as categories: the error names the batch
    mixed = pd.DataFrame({"x": np.arange(8.0), "k": pd.Series(["a", "b", "a", "b", 1, 2, 1, 2], dtype=object)})
    with pytest.raises(TypeError, match=r"batch 1: categorical feature 'k' mixes strings and numbers"):
        Dataset.from_batches(lambda: iter([(mixed.iloc[:4], np.arange(4) % 2), (mixed.iloc[4:], np.arange(4) % 2)]),
                             categorical_features=["k"])
    (path / "part-005.parquet").write_bytes(b"PAR1 truncated")
    with pytest.raises(ValueError, match=r"part-005.parquet: not a readable parquet file"):
        Dataset.from_parquet(path, target="target")


def test_predicting_parquet_checks_the_types_the_model_was_fitted_on(tmp_path):
    """A categorical feature fitted on strings that a file holds as numbers read as missing in every row (a
    silently wrong prediction), and a numeric feature given as text: errors naming the file and the column, as
    in memory."""
    frame, y, w = table(60, 2, 0)
    model = AdaBoostClassifier(3).fit(frame, y)
    (tmp_path / "ints").mkdir()
    pq.write_table(pa.table({"x0": frame["x0"], "x1": frame["x1"], "s": pa.array(np.arange(60) % 3)}),
                   tmp_path / "ints" / "a.parquet")
    with pytest.raises(TypeError, match=r"a.parquet: categorical feature 's' was fitted on strings \('a', 'b', "
                                        r"'c'\) but holds numbers here"):
        model.predict(tmp_path / "ints")
    with pytest.raises(TypeError, match=r"categorical feature 's' was fitted on strings"):  # in memory, as before
        model.predict(pd.DataFrame({"x0": frame["x0"], "x1": frame["x1"], "s": np.arange(60) % 3}))
    (tmp_path / "text").mkdir()
    pq.write_table(pa.table({"x0": frame["x0"].astype(str), "x1": frame["x1"], "s": frame["s"]}),
                   tmp_path / "text" / "a.parquet")
    with pytest.raises(ValueError, match=r"a.parquet: feature 'x0' is not numeric, but the model was fitted with it "
                                         "as a numeric feature"):
        model.predict(tmp_path / "text")


def test_arrow_columns_read_alike_in_memory_and_in_a_dataset(small_sample):
    """A boolean column with a missing value and a decimal column are numeric features in memory as in a Dataset
    (pandas made them object columns, so categorical: another model), and a dictionary column of integers is a
    categorical feature in a Dataset as in memory (it was an error)."""
    import decimal

    rng = np.random.default_rng(3)
    n = 300
    b = rng.random(n) < 0.5
    c = rng.integers(0, 4, n)
    table_ = pa.table({"b": pa.array(b, mask=rng.random(n) < 0.1),
                       "d": pa.array([decimal.Decimal(f"{v:.2f}") for v in rng.normal(size=n)], pa.decimal128(6, 2)),
                       "c": pa.array(c).dictionary_encode()})
    y = (b ^ (c > 1) ^ (rng.random(n) < 0.1)).astype(np.int64)
    memory = AdaBoostClassifier(6, random_state=0).fit(table_, y)
    assert memory.is_categorical_.tolist() == [False, False, True]
    same_model(memory, AdaBoostClassifier(6, random_state=0).fit(Dataset(table_, y, random_state=0)))
    np.testing.assert_array_equal(memory.predict(Dataset(table_, y)), memory.predict(table_))


def test_a_codes_path_that_cannot_be_written_is_named(tmp_path):
    X, y = np.zeros((10, 2)), np.arange(10) % 2
    with pytest.raises(ValueError, match=r"codes_path=.*: its directory .*missing.* does not exist"):
        Dataset(X, y, codes_path=tmp_path / "missing" / "c.bin")
    with pytest.raises(ValueError, match="is a directory; name the file"):
        Dataset(X, y, codes_path=tmp_path)
    assert os.listdir(tmp_path) == []


def test_a_dataset_without_features_is_refused():
    """No feature columns: the estimators' ValueError, not a division by zero while binning."""
    y = np.arange(10) % 2
    for data in (np.zeros((10, 0)), pd.DataFrame(index=range(10))):
        with pytest.raises(ValueError, match=r"0 feature\(s\) \(shape=\(10, 0\)\)"):
            Dataset(data, y)


def test_parameters_must_match_the_dataset(small_sample):
    frame, y, w = table(100, 2, 0)
    ds = Dataset(frame, y, random_state=0)
    with pytest.raises(ValueError, match="max_bins=64"):
        AdaBoostClassifier(max_bins=64).fit(ds)
    with pytest.raises(ValueError, match="random_state=1"):
        AdaBoostClassifier(random_state=1).fit(ds)
    with pytest.raises(ValueError, match="either eval_set or validation_fraction"):
        AdaBoostClassifier(validation_fraction=0.2).fit(ds, eval_set=(ds,))
    with pytest.raises(ValueError, match="categorical_features"):
        AdaBoostClassifier(categorical_features=None).fit(ds)
    with pytest.raises(ValueError, match="labels and weights come from the Dataset"):
        AdaBoostClassifier().fit(ds, y)


def test_memory_error_names_the_size_and_codes_path(monkeypatch, tmp_path):
    from fastboost import _driver

    monkeypatch.setattr(_driver, "available_memory", lambda: 1000)
    frame, y, _ = table(100, 2, 0)
    with pytest.raises(MemoryError, match=r"codes of 100 rows x 3 features need .*codes_path="):
        Dataset(frame, y)
    assert Dataset(frame, y, codes_path=tmp_path / "c.bin").codes.shape == (3, 100)


# ---------------------------------------------------------------------------------------------- command line
def test_command_line_streams_parquet(tmp_path, monkeypatch, capsys):
    import fastboost
    from fastboost import dataset
    from fastboost.cli import main

    frame, y, w = table(300, 3, 8)
    labels = np.where(y == 1, "pos", "neg")
    path = write_parquet(tmp_path, frame, labels, w, [(0, 100), (100, 100), (100, 300)])
    model_path, codes = tmp_path / "m.fbm", tmp_path / "codes.bin"
    argv = ["train", str(path / "*.parquet"), "--target", "target", "--weight", "weight", "--n-estimators", "12",
            "--max-depth", "2", "--random-state", "0", "--codes-cache", str(codes), "-o", str(model_path)]
    assert main(argv) == 0 and codes.exists()
    model = fastboost.load(model_path)
    whole = pd.read_parquet(path)
    X = whole.drop(columns=["target", "weight"])
    ref = AdaBoostClassifier(12, max_depth=2, random_state=0).fit(X, whole["target"], whole["weight"])
    same_model(ref, model)
    assert main(argv) == 0  # from the cache
    same_model(ref, fastboost.load(model_path))
    assert main(argv[:-2] + ["--max-bins", "20", "-o", str(model_path)]) == 2
    assert "holds the codes of other data or options" in capsys.readouterr().err
    out = tmp_path / "pred.parquet"
    assert main(["predict", str(model_path), str(path), "--proba", "-o", str(out)]) == 0
    assert np.array_equal(pd.read_parquet(out).to_numpy(), ref.predict_proba(X))
    # interrupted after the first batch: nothing under the output name, no temporary file left
    real = dataset.iter_predictions

    def failing(*args):
        it = real(*args)
        yield next(it)
        raise KeyboardInterrupt

    monkeypatch.setattr(dataset, "iter_predictions", failing)
    out2 = tmp_path / "pred2.parquet"
    assert main(["predict", str(model_path), str(path), "-o", str(out2)]) == 130  # (one line: "interrupted")
    assert capsys.readouterr().err.strip() == "fastboost predict: interrupted"
    assert [p for p in os.listdir(tmp_path) if p.startswith("pred2")] == []


def test_command_line_guards_parquet_inputs(tmp_path, capsys):
    """An output among the files a directory or pattern reads, a codes cache given as the output or among the data
    files, a --drop column the files lack or the model needs, and the target as the weight: each one line, exit 2,
    before anything is written; a bad output path before the data are binned (no codes cache left)."""
    from fastboost.cli import main

    frame, y, w = table(80, 3, 1)
    path = write_parquet(tmp_path, frame.drop(columns=["s"]), y, w, [(0, 40), (40, 80)])
    model, cache = tmp_path / "m.fbm", tmp_path / "c.codes"
    assert main(["train", str(path), "--target", "target", "--weight", "weight", "--n-estimators", "3",
                 "-o", str(model)]) == 0
    capsys.readouterr()
    before = {q.name: q.read_bytes() for q in path.iterdir()}

    def refused(argv, message):
        assert main([str(a) for a in argv]) == 2
        err = capsys.readouterr().err.strip()
        assert "\n" not in err and message in err, err

    train = ["train", path, "--target", "target", "--weight", "weight"]
    for data in (path, path / "*.parquet"):
        refused(["predict", model, data, "-o", path / "part-001.parquet"], "the output would replace the input")
        # a new file among those the next reading finds (it would be read as data, or refused as not parquet)
        refused(["predict", model, data, "--drop", "target", "-o", path / "part-002.parquet"],
                "is among the data files of")
    refused(train + ["-o", path / "m.fbm"], "-o " + str(path / "m.fbm") + " is among the data files of")
    refused(train + ["--codes-cache", cache, "-o", cache], "the output would replace the input")
    refused(train + ["--codes-cache", path / "c.codes", "-o", model], "is among the data files of")
    refused(train + ["--codes-cache", tmp_path, "-o", model], f"--codes-cache {tmp_path} is a directory")
    refused(train + ["--codes-cache", tmp_path / "no" / "c.codes", "-o", model],
            f"--codes-cache {tmp_path / 'no' / 'c.codes'}: its directory {tmp_path / 'no'} does not exist")
    refused(train + ["--codes-cache", cache, "-o", tmp_path / "no" / "m.fbm"], "No such file or directory")
    assert not cache.exists() and not (tmp_path / "c.codes.meta.npz").exists()
    refused(["predict", model, path, "--drop", "nope", "-o", tmp_path / "p.csv"], "no column 'nope' to drop")
    refused(["predict", model, path, "--drop", "x1", "-o", tmp_path / "p.csv"], "the model needs the column(s) 'x1'")
    refused(["train", path, "--target", "target", "--weight", "target", "-o", model],
            "the target and the weight are one column")
    assert {q.name: q.read_bytes() for q in path.iterdir()} == before
    assert main([str(a) for a in ("predict", model, path, "--drop", "target", "-o", tmp_path / "p.csv")]) == 0
    # a CSV validation set beside parquet training data: its --weight column is its weights, not a feature
    valid = frame.drop(columns=["s"]).assign(target=y, weight=w)
    valid.to_csv(tmp_path / "v.csv", index=False)
    valid.drop(columns=["weight"]).to_csv(tmp_path / "v2.csv", index=False)
    assert main([str(a) for a in train + ["--valid", tmp_path / "v.csv", "--n-estimators", "3", "-o", model]]) == 0
    capsys.readouterr()
    refused(train + ["--valid", tmp_path / "v2.csv", "-o", model], "v2.csv: no weight column 'weight'")


@pytest.mark.parametrize("weighted", [False, True])
def test_exact_mode_with_many_distinct_values(monkeypatch, weighted):
    """A feature with more distinct values than max_bins in exact mode: quantiles of every positive row's
    value, as in memory (the values wait on disk, one feature at a time)."""
    frame, y, w = table(900, 2, 3)
    ref = AdaBoostClassifier(6, max_bins=300, random_state=0).fit(frame, y, w if weighted else None)
    assert ref.n_features_quantised_ == 1  # x1 (x0 has few distinct values)
    ds = Dataset(frame, y, w if weighted else None, max_bins=300, batch_rows=97)
    same_model(ref, AdaBoostClassifier(6, max_bins=300, random_state=0).fit(ds))


def test_polars_batches(small_sample):
    pl = pytest.importorskip("polars")
    frame, y, w = table(150, 2, 6)
    ref = AdaBoostClassifier(6, max_depth=2, random_state=0).fit(frame, y, w)
    whole = pl.from_pandas(frame)
    ds = Dataset.from_batches(lambda: ((whole[a:a + 40], pl.Series(y[a:a + 40]), w[a:a + 40])
                                       for a in range(0, 150, 40)), random_state=0)
    model = AdaBoostClassifier(6, max_depth=2, random_state=0).fit(ds)
    same_model(ref, model)
    assert np.array_equal(model.predict(ds), ref.predict(frame))


def test_memory_error_before_reading_parquet(monkeypatch, tmp_path):
    """From parquet files the row count comes from their metadata: the MemoryError comes before any row is read."""
    from fastboost import _driver, dataset

    frame, y, w = table(100, 2, 0)
    path = write_parquet(tmp_path, frame, y, w, [(0, 50), (50, 100)])
    monkeypatch.setattr(_driver, "available_memory", lambda: 1000)

    def no_reading(self):
        raise AssertionError("read")

    monkeypatch.setattr(dataset.ParquetSource, "batches", no_reading)
    with pytest.raises(MemoryError, match=r"codes of 100 rows x 4 features need .*codes_path="):
        Dataset.from_parquet(path, target="target")


@pytest.mark.parametrize("class_weight", ["balanced", {0: 0.0, 1: 2.0}, {"p": 3.0, "q": 0.0}])
def test_class_weight(small_sample, class_weight):
    """The Dataset's bin edges and sample come from the class-weighted rows, as in memory (a class of weight 0
    leaves the sample)."""
    frame, y, w = table(300, 3, 12)
    if isinstance(class_weight, dict) and "p" in class_weight:  # three classes: one model per class
        y = np.array(["p", "q", "r"], dtype=object)[np.random.default_rng(1).integers(0, 3, 300)]
        est = VadaBoostClassifier(6, lam=0.5, class_weight=class_weight, random_state=2)
    else:
        est = AdaBoostClassifier(8, max_depth=2, class_weight=class_weight, random_state=2)
    ref = est.__class__(**est.get_params()).fit(frame, y, w)
    ds = Dataset(frame, y, w, class_weight=class_weight, random_state=2, batch_rows=41)
    same_model(ref, est.__class__(**est.get_params()).fit(ds))
    with pytest.raises(ValueError, match="build the Dataset with the estimator's class_weight"):
        est.__class__(**est.get_params()).set_params(class_weight=None).fit(ds)


# ---------------------------------------------------------------------------------------------- staged, score, contrib
@pytest.mark.parametrize("params, n_classes", [({}, 2), ({"max_depth": 2}, 2), ({"max_depth": 2}, 3)])
def test_staged_score_and_contrib_read_a_dataset_in_batches(small_sample, monkeypatch, tmp_path, params, n_classes):
    """Staged predictions, score and contributions of a Dataset (and of parquet files) equal the in-memory
    ones, with the rows read once per chunk of rounds."""
    from fastboost import dataset

    frame, y, w = table(90, 3, 3)
    if n_classes == 3:
        y = np.random.default_rng(0).integers(0, 3, 90)
    ds = Dataset(frame, y, w, random_state=0, batch_rows=17)
    model = AdaBoostClassifier(7, random_state=0, **params).fit(ds)
    monkeypatch.setattr(dataset, "STAGED_BYTES", 8 * 90 * 3 * (1 if n_classes == 2 else 3))  # 3 rounds a reading
    path = write_parquet(tmp_path, frame, y, w, [(0, 40), (40, 90)])
    for method in ("staged_decision_function", "staged_predict", "staged_predict_proba"):
        ref = list(getattr(model, method)(frame))
        assert len(ref) == model.n_estimators_ == 7
        for X in (ds, str(path)):
            got = list(getattr(model, method)(X))
            assert len(got) == len(ref) and all(np.array_equal(a, b) for a, b in zip(got, ref)), method
    assert model.score(ds) == model.score(frame, y, w)
    assert model.score(str(path), y, w) == model.score(frame, y, w)
    assert list(model.staged_score(ds)) == list(model.staged_score(frame, y, w))
    assert np.array_equal(model.predict_contrib(ds), model.predict_contrib(frame))
    assert np.array_equal(model.predict_contrib(str(path)), model.predict_contrib(frame))
    with pytest.raises(ValueError, match="labels and weights come from the Dataset"):
        model.score(ds, y)
    with pytest.raises(ValueError, match="needs y"):
        model.score(str(path))
    with pytest.raises(ValueError, match="needs y"):
        model.score(frame)


def test_staged_on_a_dataset_of_a_one_vs_rest_model(small_sample, monkeypatch, tmp_path):
    """A one-vs-rest model's staged predictions of a Dataset or parquet files, a few rounds a reading, are the
    in-memory ones bit for bit, the class models' rounds advancing together."""
    from fastboost import dataset

    frame, _, w = table(60, 2, 1)
    y = np.random.default_rng(1).integers(0, 3, 60)
    ds = Dataset(frame, y, w, random_state=0, batch_rows=13)
    model = AdaBoostClassifier(5, leaf="real", random_state=0).fit(ds)
    assert hasattr(model, "estimators_")
    monkeypatch.setattr(dataset, "STAGED_BYTES", 8 * 60 * 3 * 2)  # 2 rounds a reading
    path = write_parquet(tmp_path, frame, y, w, [(0, 25), (25, 60)])
    for method in ("staged_decision_function", "staged_predict", "staged_predict_proba"):
        ref = list(getattr(model, method)(frame))
        assert len(ref) == 5
        for X in (ds, str(path)):
            got = list(getattr(model, method)(X))
            assert len(got) == len(ref) and all(np.array_equal(a, b) for a, b in zip(got, ref)), method
    assert list(model.staged_score(ds)) == list(model.staged_score(frame, y, w))
    assert model.score(ds) == model.score(frame, y, w)
    assert np.array_equal(model.predict_contrib(ds), model.predict_contrib(frame))


@pytest.mark.parametrize("est", [
    AdaBoostClassifier(12, validation_fraction=0.25, n_iter_no_change=3, random_state=4),
    AdaBoostClassifier(10, max_depth=2, n_iter_no_change=2, random_state=5),  # held out: EARLY_STOPPING_FRACTION
    VadaBoostClassifier(6, lam=0.5, validation_fraction=0.3, random_state=6),  # one model per class
])
def test_validation_fraction_holds_out_the_in_memory_rows(small_sample, est):
    """validation_fraction and n_iter_no_change without eval_set hold out the rows the in-memory fit holds out
    (a seeded stratified split of the labels), from codes binned with every row: the same model bit for bit."""
    frame, y, w = table(160, 3, 8)
    if isinstance(est, VadaBoostClassifier):
        y = np.random.default_rng(2).integers(0, 3, 160)
    ref = est.__class__(**est.get_params()).fit(frame, y, w)
    ds = Dataset(frame, y, w, random_state=est.random_state, batch_rows=23)
    model = est.__class__(**est.get_params()).fit(ds)
    same_model(ref, model)
    for a, b in zip(getattr(ref, "estimators_", [ref]), getattr(model, "estimators_", [model])):
        assert np.array_equal(a.validation_errors_, b.validation_errors_)
        assert a.stopped_early_ == b.stopped_early_
        assert a.n_estimators_ < a.validation_errors_.shape[0] or not a.stopped_early_
    assert np.array_equal(model.predict_contrib(ds), ref.predict_contrib(frame))
