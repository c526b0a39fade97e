"""Model files (``estimator.save`` / ``fastboost.load``): exact round trips for every kind of model, and a loader
that answers every damaged, altered or foreign file with a ValueError and never unpickles anything."""
import io
import json
import os
import pickle
import warnings
import zipfile

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.exceptions import NotFittedError

import fastboost
from fastboost import (
    AdaBoostClassifier,
    EBBoostClassifier,
    LazyBoostClassifier,
    QuadBoostClassifier,
    SABoostClassifier,
    VadaBoostClassifier,
)
from fastboost._model_io import FORMAT_VERSION
from fastboost._types import NODE_DTYPE, ROUND_DTYPE
from fastboost.datasets import make_twonorm

N = 300


@pytest.fixture(scope="module")
def data():
    X, y = make_twonorm(N, random_state=0)
    X = X[:, :8].copy()
    rng = np.random.default_rng(1)
    X[rng.random(X.shape) < 0.03] = np.nan
    score = np.nan_to_num(X[:, 0]) + np.nan_to_num(X[:, 1])
    y4 = np.digitize(score, np.quantile(score, [0.25, 0.5, 0.75]))  # 4 learnable classes
    return X, (y > 0).astype(int), y4


def _labels(kind, y2, y4):
    """Targets of every label kind the tests use, from the binary (y2) and 4-class (y4) targets."""
    return {
        "int": np.where(y2 == 1, 1, -1),
        "int32": np.where(y2 == 1, 7, 3).astype(np.int32),
        "float": np.where(y2 == 1, 2.0, -1.0),
        "bool": y2.astype(bool),
        "str": np.where(y2 == 1, "yes", "no"),
        "object-str": np.array(["yes" if v else "no" for v in y2], dtype=object),
        "4": y4,
        "4-str": np.array(["ant", "bee", "cat", "dog"])[y4],
        "3-object": np.array(["x", "y", "z", "x"], dtype=object)[y4],
    }[kind]


#: (id, estimator, labels, fit keyword arguments)
CASES = [
    ("adaboost-binary-stumps", lambda: AdaBoostClassifier(15), "int", {}),
    ("adaboost-gini-learning-rate", lambda: AdaBoostClassifier(12, criterion="gini", learning_rate=0.5), "int", {}),
    ("samme-trees-4-classes", lambda: AdaBoostClassifier(10, max_depth=2), "4", {}),
    ("samme-trees-str-labels", lambda: AdaBoostClassifier(8, max_depth=3, min_samples_leaf=3), "4-str", {}),
    ("vadaboost-one-vs-rest", lambda: VadaBoostClassifier(8, lam=0.3), "4", {}),
    ("vadaboost-one-vs-rest-object-labels", lambda: VadaBoostClassifier(6, max_depth=2), "3-object", {}),
    ("vadaboost-real-trees", lambda: VadaBoostClassifier(10, max_depth=3, leaf="real"), "int", {}),
    ("adaboost-real-trees", lambda: AdaBoostClassifier(8, max_depth=2, leaf="real"), "str", {}),
    ("ebboost", lambda: EBBoostClassifier(10, lam=0.5), "int", {}),
    ("lazyboost", lambda: LazyBoostClassifier(10, feature_rank=2), "int", {}),
    ("saboost", lambda: SABoostClassifier(10, gamma=0.5, schedule="power"), "bool", {}),
    ("saboost-trees", lambda: SABoostClassifier(8, max_depth=2, min_weight_fraction_leaf=0.01), "int", {}),
    ("quadboost-stumps-reweight",
     lambda: QuadBoostClassifier(15, penalty="l1", lam=0.001, reweight_every=3), "int", {}),
    ("quadboost-trees", lambda: QuadBoostClassifier(10, max_depth=2, penalty="l2", lam=0.1), "int", {}),
    ("quadboost-one-vs-rest", lambda: QuadBoostClassifier(6, penalty="linf", alpha_max=0.5), "4", {}),
    ("validation-fraction",
     lambda: AdaBoostClassifier(30, validation_fraction=0.25, n_iter_no_change=5, random_state=0), "int", {}),
    ("eval-set-vadaboost", lambda: VadaBoostClassifier(20, n_iter_no_change=4), "int", {"eval_set": True}),
    ("class-weight-dict", lambda: AdaBoostClassifier(10, class_weight={1: 2.0, -1: 0.5}), "int", {}),
    ("class-weight-str-keys", lambda: VadaBoostClassifier(10, class_weight={"yes": 3, "no": 1}), "str", {}),
    ("class-weight-balanced", lambda: SABoostClassifier(10, class_weight="balanced"), "int", {}),
    ("labels-int32", lambda: AdaBoostClassifier(10), "int32", {}),
    ("labels-float", lambda: AdaBoostClassifier(10), "float", {}),
    ("labels-object-str", lambda: AdaBoostClassifier(10), "object-str", {}),
    ("dataframe", lambda: AdaBoostClassifier(10, max_depth=2), "object-str", {"dataframe": True}),
    ("dataframe-one-vs-rest", lambda: EBBoostClassifier(6), "4", {"dataframe": True}),
    ("random-state-int", lambda: AdaBoostClassifier(10, random_state=12), "int", {}),
]


def _fit(case, data):
    _, make, labels, how = case
    X, y2, y4 = data
    y = _labels(labels, y2, y4)
    est = make()
    if how.get("dataframe"):
        pd = pytest.importorskip("pandas")
        X = pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])])
        y = pd.Series(y)
    if how.get("eval_set"):
        return est.fit(X[:200], y[:200], eval_set=(X[200:], y[200:])), X
    return est.fit(X, y), X


def _save(est):
    buf = io.BytesIO()
    est.save(buf)
    return buf.getvalue()


def _load(data):
    return fastboost.load(io.BytesIO(data))


def _same_array(a, b, what):
    assert isinstance(b, np.ndarray), what
    assert a.dtype == b.dtype and a.shape == b.shape, (what, a.dtype, b.dtype, a.shape, b.shape)
    if a.dtype.kind == "O":
        assert a.tolist() == b.tolist(), what
        assert [type(v) for v in a.tolist()] == [type(v) for v in b.tolist()], what
    else:
        assert a.tobytes() == b.tobytes(), what  # bit for bit (NaN payloads included)


def _same_value(a, b, what):
    if isinstance(a, np.ndarray):
        _same_array(a, b, what)
    elif isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b), what
        for k, (x, y) in enumerate(zip(a, b)):
            _same_fitted(x, y, f"{what}[{k}]")
    elif isinstance(a, float) and np.isnan(a):
        assert isinstance(b, float) and np.isnan(b), what
    else:
        assert type(a) is type(b) and a == b, (what, a, b)


def _same_fitted(a, b, what="model"):
    assert type(a) is type(b)
    public = sorted(k for k in vars(a) if k.endswith("_") and not k.startswith("_"))
    assert public == sorted(k for k in vars(b) if k.endswith("_") and not k.startswith("_")), what
    for k in public:
        _same_value(vars(a)[k], vars(b)[k], f"{what}.{k}")
    assert a._n_classes == b._n_classes
    if hasattr(a, "rounds_"):
        assert b.rounds_.dtype.isalignedstruct and b.rounds_.flags.c_contiguous and b.rounds_.flags.writeable
        if b.nodes_ is not None:
            assert b.nodes_.dtype.isalignedstruct and b.nodes_.flags.c_contiguous


def _same_predictions(a, b, X):
    for method in ("predict", "predict_proba", "predict_log_proba", "decision_function"):
        _same_array(getattr(a, method)(X), getattr(b, method)(X), method)
    _same_array(a.feature_importances_, b.feature_importances_, "feature_importances_")
    if hasattr(a, "estimators_"):
        return
    for method in ("staged_predict", "staged_predict_proba", "staged_decision_function"):
        sa, sb = list(getattr(a, method)(X)), list(getattr(b, method)(X))
        assert len(sa) == len(sb) == a.n_estimators_
        for t, (u, v) in enumerate(zip(sa, sb)):
            _same_array(u, v, f"{method} round {t}")
    assert list(a.staged_score(X, a.predict(X))) == list(b.staged_score(X, a.predict(X)))


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
@pytest.mark.filterwarnings("ignore:X does not have valid feature names")  # one-vs-rest on a DataFrame, as fitted
def test_round_trip_is_bit_identical(case, data):
    est, X = _fit(case, data)
    saved = _save(est)
    loaded = _load(saved)
    assert type(loaded) is type(est)
    assert repr(loaded.get_params()) == repr(est.get_params())
    _same_fitted(est, loaded)
    _same_predictions(est, loaded, X)
    X_nan = np.array(X, dtype=np.float64)
    X_nan[::3, :4] = np.nan  # missing values follow each split's learned side
    if hasattr(X, "columns"):
        X_nan = type(X)(X_nan, columns=X.columns)
    _same_predictions(est, loaded, X_nan)
    assert _save(loaded) == saved  # the same model saves to the same bytes


def test_label_types_come_back_as_predict_returned_them(data):
    X, y2, y4 = data
    for kind, dtype, py in [("str", "<U3", np.str_), ("object-str", object, str), ("bool", bool, np.bool_),
                            ("int32", np.int32, np.int32), ("float", np.float64, np.float64)]:
        est = AdaBoostClassifier(5).fit(X, _labels(kind, y2, y4))
        pred = _load(_save(est)).predict(X[:4])
        assert pred.dtype == np.dtype(dtype) and type(pred[0]) is py, kind


def test_object_labels_of_one_python_type_come_back_as_that_type(data):
    """scikit-learn fits object labels only when they are str; labels of another single Python type are kept
    too (the format's object-int / object-bool / object-float kinds)."""
    X, y2, _ = data
    for labels in ([-3, 10], [False, True], [0.5, 2.0], ["no", "yes"]):
        est = AdaBoostClassifier(5).fit(X, y2)
        est.classes_ = np.empty(2, dtype=object)
        est.classes_[:] = labels
        loaded = _load(_save(est))
        _same_array(est.classes_, loaded.classes_, "classes_")
        _same_array(est.predict(X), loaded.predict(X), "predict")
        assert type(loaded.predict(X[:1])[0]) is type(labels[0])


def test_save_and_load_by_path(tmp_path, data):
    X, y2, _ = data
    est = AdaBoostClassifier(10, max_depth=2).fit(X, y2)
    path = tmp_path / "model.fbm"
    est.save(path)
    est.save(str(path))  # an existing file is replaced
    for p in (path, str(path)):
        _same_predictions(est, fastboost.load(p), X)
    assert sorted(os.listdir(tmp_path)) == ["model.fbm"]  # no temporary file left behind
    with zipfile.ZipFile(path) as zf:
        assert zf.namelist()[0] == "header.json"
        header = json.loads(zf.read("header.json"))
    assert header["format"] == "fastboost-model" and header["format_version"] == FORMAT_VERSION
    assert header["fastboost_version"] == fastboost.__version__
    assert header["model"]["estimator"] == "AdaBoostClassifier"
    assert set(header["model"]["arrays"]) == {"classes_", "rounds_", "nodes_", "estimator_weights_", "cover_",
                                              "estimator_errors_"}
    with pytest.raises(FileNotFoundError):
        fastboost.load(tmp_path / "missing.fbm")
    # the file has the permissions open() gives a new file (the umask's), as np.save's would
    umask = os.umask(0o022)
    os.umask(umask)
    assert os.stat(path).st_mode & 0o777 == 0o666 & ~umask
    with pytest.raises(ValueError, match=r"no-dir.* does not exist"):
        est.save(tmp_path / "no-dir" / "model.fbm")
    assert sorted(os.listdir(tmp_path)) == ["model.fbm"]


def test_one_vs_rest_members_are_under_estimators_k(data):
    X, _, y4 = data
    est = VadaBoostClassifier(5).fit(X, y4)
    with zipfile.ZipFile(io.BytesIO(_save(est))) as zf:
        names = zf.namelist()
    assert "classes_.npy" in names and "rounds_.npy" not in names
    for k in range(4):
        assert f"estimators/{k}/rounds_.npy" in names and f"estimators/{k}/classes_.npy" in names


def test_random_state_instance_is_saved_as_none_with_a_note(data):
    X, y2, _ = data
    est = AdaBoostClassifier(10, random_state=np.random.RandomState(3)).fit(X, y2)
    saved = _save(est)
    header = json.loads(zipfile.ZipFile(io.BytesIO(saved)).read("header.json"))
    assert header["model"]["params"]["random_state"] is None and "RandomState" in header["model"]["notes"][0]
    loaded = _load(saved)
    assert loaded.random_state is None
    _same_predictions(est, loaded, X)


def test_empty_model_round_trips(data):
    X = np.zeros((20, 3))
    y = np.arange(20) % 2
    for est in (AdaBoostClassifier(5), AdaBoostClassifier(5, max_depth=2)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(X, y)
        assert est.n_estimators_ == 0
        loaded = _load(_save(est))
        _same_fitted(est, loaded)
        _same_predictions(est, loaded, X)


def test_dask_estimator_saves_its_local_model(data):
    fbd = pytest.importorskip("fastboost.dask")
    X, y2, _ = data
    local = AdaBoostClassifier(10).fit(X, y2)
    est = fbd.DaskAdaBoostClassifier(10)
    est.__dict__.update(local.__dict__)  # a fitted Dask model's state, without a cluster
    est.bin_mapper_ = object()
    est.dask_stats_ = {"rounds": 10}
    saved = _save(est)
    header = json.loads(zipfile.ZipFile(io.BytesIO(saved)).read("header.json"))
    assert header["saved_from"] == "DaskAdaBoostClassifier"
    loaded = _load(saved)
    assert type(loaded) is AdaBoostClassifier
    _same_predictions(local, loaded, X)


def test_save_refuses_what_the_format_cannot_hold(tmp_path, data):
    X, y2, _ = data
    with pytest.raises(NotFittedError):
        AdaBoostClassifier().save(io.BytesIO())

    class MyBoost(AdaBoostClassifier):
        pass

    with pytest.raises(ValueError, match="subclass of AdaBoostClassifier"):
        MyBoost(5).fit(X, y2).save(io.BytesIO())
    est = AdaBoostClassifier(5).fit(X, y2)
    with pytest.raises(ValueError, match="verbose"):
        est.set_params(verbose=[1]).save(io.BytesIO())
    est.set_params(verbose=0)
    with pytest.raises(ValueError, match="learning_rate"):
        est.set_params(learning_rate=float("nan")).save(io.BytesIO())
    est.set_params(learning_rate=1.0)
    est.classes_ = np.array([1, "a"], dtype=object)
    with pytest.raises(ValueError, match="class labels of types"):
        est.save(io.BytesIO())
    est.classes_ = np.array([0, 1])
    est.extra_thing_ = 1
    with pytest.raises(ValueError, match="extra_thing_"):
        est.save(tmp_path / "m.fbm")
    assert not os.listdir(tmp_path)  # a refused save writes nothing
    with pytest.raises(ValueError, match="directory"):
        AdaBoostClassifier(5).fit(X, y2).save(tmp_path)


# ============================================================================ the loader against bad files
@pytest.fixture(scope="module")
def samples(data):
    """Saved files of a SAMME tree model (with feature names) and of a one-vs-rest stump model."""
    pd = pytest.importorskip("pandas")
    X, y2, y4 = data
    Xdf = pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])])
    trees = AdaBoostClassifier(6, max_depth=2).fit(Xdf, np.array(["a", "b", "c", "d"])[y4])
    ovr = VadaBoostClassifier(3).fit(X[:, :4], y4)
    stumps = QuadBoostClassifier(6).fit(X, y2)
    return {"trees": (trees, _save(trees), Xdf), "ovr": (ovr, _save(ovr), X[:, :4]),
            "stumps": (stumps, _save(stumps), X)}


def _members(data):
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        return {name: zf.read(name) for name in zf.namelist()}


def _rezip(members):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def _with_header(data, change):
    members = _members(data)
    header = json.loads(members["header.json"])
    change(header)
    members["header.json"] = json.dumps(header).encode()
    return _rezip(members)


def _with_member(data, name, array=None, raw=None):
    members = _members(data)
    if raw is None:
        buf = io.BytesIO()
        np.save(buf, array, allow_pickle=True)
        raw = buf.getvalue()
    members[name] = raw
    return _rezip(members)


def _npy(data, name):
    return np.load(io.BytesIO(_members(data)[name]), allow_pickle=False)


def _refused(data, match=None):
    """load raises exactly ValueError (with ``match`` in its message if given)."""
    with pytest.raises(ValueError) as info:
        _load(data)
    assert type(info.value) is ValueError
    if match is not None:
        assert match in str(info.value), str(info.value)
    return str(info.value)


def _refused_or_same(data, est, X):
    """A damaged file is refused with a ValueError, or (damage in bytes the zip format ignores) loads the
    same model."""
    try:
        loaded = _load(data)
    except ValueError as e:
        assert type(e) is ValueError
        return True
    _same_fitted(est, loaded)
    _same_array(est.decision_function(X), loaded.decision_function(X), "decision_function")
    return False


@pytest.mark.parametrize("kind", ["trees", "ovr", "stumps"])
def test_every_truncation_is_refused(samples, kind):
    _, data, _ = samples[kind]
    for k in list(range(0, len(data), 7)) + list(range(len(data) - 40, len(data))):
        _refused(data[:k])


@pytest.mark.parametrize("kind", ["trees", "ovr", "stumps"])
def test_flipped_bytes_are_refused_or_harmless(samples, kind):
    est, data, X = samples[kind]
    X = X[:20]
    refused = 0
    positions = range(0, len(data), max(3, len(data) // 700))  # ~700 positions spread over the whole file
    for pos in positions:
        for mask in (0x01, 0x80):
            bad = bytearray(data)
            bad[pos] ^= mask
            refused += _refused_or_same(bytes(bad), est, X)
    assert refused > 0.75 * 2 * len(positions)  # all but zip bookkeeping (times, version fields) is checked


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pos=st.integers(0, 10 ** 9), mask=st.integers(1, 255), cut=st.integers(0, 10 ** 9), chop=st.booleans())
def test_random_damage_gives_only_value_errors(samples, pos, mask, cut, chop):
    est, data, X = samples["trees"]
    bad = bytearray(data)
    bad[pos % len(bad)] ^= mask
    if chop:
        bad = bad[:cut % len(bad)]
    _refused_or_same(bytes(bad), est, X[:10])


def test_foreign_files_are_refused(tmp_path, samples):
    _refused(b"", "not a fastboost model file")
    _refused(np.random.default_rng(0).bytes(5000), "not a fastboost model file")
    _refused(b"PK\x03\x04" + np.random.default_rng(1).bytes(300))
    buf = io.BytesIO()
    np.savez(buf, a=np.arange(3))
    _refused(buf.getvalue(), "no header.json")
    _refused(_rezip({"header.json": b"[]"}), "not a fastboost model file")
    _refused(_rezip({"header.json": b"\xff\xfe"}), "not UTF-8")
    _refused(_rezip({"header.json": b'{"format": "fastboost-model", '}), "not valid JSON")
    _refused(_rezip({"header.json": json.dumps({"format": "other", "format_version": 1}).encode()}),
             "names format 'other'")
    _refused(_rezip({"header.json": b"[" * 100000}))
    with pytest.raises(ValueError, match="is a directory"):
        fastboost.load(tmp_path)
    est = samples["stumps"][0]
    path = tmp_path / "model.fbm"
    path.write_bytes(pickle.dumps(est))  # a pickle renamed to .fbm
    with pytest.raises(ValueError, match="not a fastboost model file"):
        fastboost.load(path)


def test_text_mode_files_are_a_type_error(tmp_path, samples):
    """A model file is bytes: a file object opened in text mode is a TypeError saying so (it was Python's own
    error about str and bytes from inside zipfile), and nothing is written."""
    est = samples["stumps"][0]
    path = tmp_path / "model.fbm"
    with open(path, "w") as f, pytest.raises(TypeError, match=r"binary mode \(open\(path, 'wb'\)"):
        est.save(f)
    assert path.read_bytes() == b""
    est.save(path)
    with open(path) as f, pytest.raises(TypeError, match=r"binary mode \(open\(path, 'rb'\)"):
        fastboost.load(f)
    with pytest.raises(TypeError, match="text-mode StringIO"):
        est.save(io.StringIO())
    with open(path, "rb") as f:  # binary: loads
        _same_fitted(est, fastboost.load(f))


class _Marker:
    """Unpickling this creates the file ``path``: proof that something was unpickled."""

    def __init__(self, path):
        self.path = str(path)

    def __reduce__(self):
        return (open, (self.path, "w"))


def test_pickles_are_never_unpickled(tmp_path, samples):
    marker = tmp_path / "unpickled"
    evil = pickle.dumps(_Marker(marker))
    _, data, _ = samples["stumps"]
    attempts = [evil, evil[:-1]]
    attempts.append(_rezip({"header.json": evil}))
    attempts.append(_with_member(data, "rounds_.npy", raw=evil))
    obj = np.empty(6, dtype=object)
    obj[:] = [_Marker(marker)] * 6
    attempts.append(_with_member(data, "rounds_.npy", array=obj))
    attempts.append(_with_member(data, "classes_.npy", array=np.array([_Marker(marker), 1], dtype=object)))
    attempts.append(_with_header(_with_member(data, "classes_.npy", array=np.array([_Marker(marker), 1],
                                                                                   dtype=object)),
                                 lambda h: h["model"]["arrays"]["classes_"].update(dtype="|O")))
    for bad in attempts:
        path = tmp_path / "model.fbm"
        path.write_bytes(bad)
        with pytest.raises(ValueError):
            fastboost.load(path)
    assert not marker.exists()
    with open(tmp_path / "model.fbm", "rb") as f:  # the same from a file object
        with pytest.raises(ValueError):
            fastboost.load(f)
    assert not marker.exists()


def _set(path, value):
    """A header change: set the entry at ``path`` (keys from the top) to ``value`` (or delete it: ``...``)."""
    def change(header):
        node = header
        for key in path[:-1]:
            node = node[key]
        if value is ...:
            del node[path[-1]]
        else:
            node[path[-1]] = value
    return change


M = ("model",)
HEADER_CHANGES = [
    (("format_version",), FORMAT_VERSION + 1, f"newer than version {FORMAT_VERSION}"),
    (("format_version",), "1", "format_version must be an int"),
    (("format_version",), 0, "format_version must be an int >= 1"),
    (("format_version",), True, "format_version must be an int"),
    (("format_version",), ..., "format_version must be an int"),
    (("fastboost_version",), 1, "fastboost_version must be a string"),
    (("surprise",), 1, "unknown field"),
    (M, [], "expected an object"),
    (M, ..., "model entry is missing"),
    (M + ("estimator",), "os.system", "unknown estimator class"),
    (M + ("estimator",), "BaseEstimator", "unknown estimator class"),
    (M + ("estimator",), ["AdaBoostClassifier"], "unknown estimator class"),
    (M + ("estimator",), "VadaBoostClassifier", "has no parameter(s) ['loss', 'monotone_steps', 'multiclass']"),
    (M + ("params",), [], "params must be an object"),
    (M + ("params", "n_estimators"), "ten", "n_estimators"),
    (M + ("params", "max_depth"), 99, "max_depth"),
    (M + ("params", "criterion"), "entropy", "criterion"),
    (M + ("params", "learning_rate"), -1.0, "learning_rate"),
    (M + ("params", "learning_rate"), float("inf"), "contains Infinity"),
    (M + ("params", "class_weight"), {"dict": [[0, 1.0], [0, 2.0]]}, "repeats a key"),
    (M + ("params", "class_weight"), {"code": "print(1)"}, "class_weight"),
    (M + ("params", "class_weight"), {"dict": [[0, -1.0]]}, "class_weight"),
    (M + ("params", "__class__"), "x", "has no parameter"),
    (M + ("attributes",), None, "attributes must be an object"),
    (M + ("attributes", "n_estimators_"), 7, "must have shape"),
    (M + ("attributes", "n_estimators_"), -1, "n_estimators_ must be >= 0"),
    (M + ("attributes", "n_estimators_"), "6", "must be an int"),
    (M + ("attributes", "n_estimators_"), 6.0, "must be an int"),
    (M + ("attributes", "n_estimators_"), ..., "n_estimators_ is missing"),
    (M + ("attributes", "n_features_in_"), 0, "n_features_in_ must be >= 1"),
    (M + ("attributes", "n_features_in_"), 10 ** 30, "feature_names_in_ must have shape"),
    (M + ("attributes", "stopped_early_"), 1, "true or false"),
    (M + ("attributes", "fit_time_"), "soon", "must be a number"),
    (M + ("attributes", "secret_"), 1, "unknown fitted attribute"),
    (M + ("attributes", "validation_seed_"), -1, "validation_seed_ must be in"),
    (M + ("attributes", "validation_seed_"), 2 ** 31, "validation_seed_ must be in"),
    (M + ("classes",), {"kind": "pickle"}, "classes must be"),
    (M + ("classes", "kind"), "object-int", "cannot have dtype"),
    (M + ("arrays", "classes_", "dtype"), "|O", "cannot have dtype"),
    (M + ("arrays", "classes_", "dtype"), "<U2", "holds dtype"),
    (M + ("arrays", "classes_", "shape"), [1], "2 <= K"),
    (M + ("arrays", "classes_", "shape"), [5], "has shape"),
    (M + ("arrays", "classes_", "shape"), [-4], "shape must be a list"),
    (M + ("arrays", "rounds_", "dtype"), "<f8", "must have dtype 'ROUND_DTYPE'"),
    (M + ("arrays", "rounds_", "shape"), [6, 1], "must have shape"),
    (M + ("arrays", "rounds_"), ..., "rounds_ is missing"),
    (M + ("arrays", "nodes_", "shape"), [6, 8], "nodes_ must have shape"),
    (M + ("arrays", "nodes_", "shape"), [6, 15], "shape"),
    (M + ("arrays", "nodes_"), ..., "needs its trees"),
    (M + ("arrays", "feature_names_in_", "dtype"), "<i8", "feature_names_in_ must have"),
    (M + ("arrays", "validation_errors_"), {"dtype": "<f8", "shape": [6]}, "member validation_errors_.npy is"),
    (M + ("arrays", "evil_"), {"dtype": "<f8", "shape": [1]}, "unexpected array"),
    (M + ("estimators",), [], "unexpected array 'rounds_' in a one-vs-rest model"),
]


def test_a_file_without_the_loss_parameter_loads_with_the_exponential_loss(samples):
    """``loss`` came without a new format version: a file written before it loads with "exponential", the only
    loss there was, and predicts as saved."""
    est, data, X = samples["trees"]

    def change(header):
        del header["model"]["params"]["loss"]

    loaded = _load(_with_header(data, change))
    assert loaded.get_params()["loss"] == "exponential"
    np.testing.assert_array_equal(loaded.predict_proba(X), est.predict_proba(X))


def test_a_single_model_of_k_classes_is_refused_for_a_one_vs_rest_class(samples):
    _, data, _ = samples["trees"]

    def change(header):
        header["model"]["estimator"] = "VadaBoostClassifier"
        del header["model"]["params"]["multiclass"]
        del header["model"]["params"]["monotone_steps"]
        del header["model"]["params"]["loss"]

    _refused(_with_header(data, change), "is one-vs-rest")


@pytest.mark.parametrize("path, value, match", HEADER_CHANGES, ids=[f"{'.'.join(p)}={v!r:.20}"
                                                                    for p, v, _ in HEADER_CHANGES])
def test_wrong_header_fields_are_refused(samples, path, value, match):
    _, data, _ = samples["trees"]
    _refused(_with_header(data, _set(path, value)), match)


LAYOUT_CHANGES = [
    ("trees", M + ("params", "multiclass"), "ovr", "fit one model per class, but it holds one for all"),
    ("trees", M + ("params", "leaf"), "real", "(multiclass='auto', leaf='real') fit one model per class"),
    ("trees", M + ("params", "max_depth"), 3, "max_depth = 3 does not match its trees of depth 2"),
    ("trees", M + ("params", "max_depth"), 1, "max_depth = 1 does not match its trees of depth 2"),
    ("stumps", M + ("params", "max_depth"), 2, "max_depth = 2 does not match its decision stumps"),
    ("ovr", ("model", "estimators", 1, "params", "max_depth"), 3, "max_depth = 3 does not match its decision"),
    ("samme-ovr", M + ("params", "multiclass"), "auto", "fit one model for all classes, but it holds one per"),
]


@pytest.mark.parametrize("kind, path, value, match", LAYOUT_CHANGES,
                         ids=[f"{k}-{p[-1]}={v!r}" for k, p, v, _ in LAYOUT_CHANGES])
def test_parameters_that_contradict_the_arrays_are_refused(samples, data, kind, path, value, match):
    """A header's parameters describe the model get_params reports and a warm start continues: parameters that
    say another kind of model than the arrays hold (it would predict by the arrays) are refused."""
    if kind == "samme-ovr":
        X, _, y4 = data
        file = _save(AdaBoostClassifier(3, multiclass="ovr").fit(X[:, :4], y4))
    else:
        file = samples[kind][1]
    _load(file)  # as saved: loads
    _refused(_with_header(file, _set(path, value)), match)


OVR = ("model", "estimators")
OVR_CHANGES = [
    (OVR, [{}], "one model per class"),
    (OVR + (0, "estimator"), "AdaBoostClassifier", "one-vs-rest VadaBoostClassifier holds a AdaBoostClassifier"),
    (OVR + (1, "attributes", "n_features_in_"), 5, "fitted on other features"),
    (OVR + (2, "estimators"), [], "cannot be one-vs-rest"),
    (("model", "attributes", "n_estimators_"), 1, "not the sum"),
    (("model", "arrays", "rounds_"), {"dtype": "ROUND_DTYPE", "shape": [3]}, "unexpected array"),
]


@pytest.mark.parametrize("path, value, match", OVR_CHANGES, ids=[".".join(map(str, p)) for p, _, _ in OVR_CHANGES])
def test_wrong_one_vs_rest_fields_are_refused(samples, path, value, match):
    _, data, _ = samples["ovr"]
    _refused(_with_header(data, _set(path, value)), match)


def test_wrong_members_are_refused(samples):
    _, data, _ = samples["trees"]
    members = _members(data)
    _refused(_rezip({k: v for k, v in members.items() if k != "rounds_.npy"}), "member rounds_.npy is missing")
    _refused(_rezip({**members, "extra.npy": members["rounds_.npy"]}), "unexpected member")
    _refused(_rezip({**members, "estimators/0/rounds_.npy": members["rounds_.npy"]}), "unexpected member")
    rounds = _npy(data, "rounds_.npy")
    _refused(_with_member(data, "rounds_.npy", rounds.astype([(n, "<f8") for n in rounds.dtype.names])),
             "holds dtype")
    _refused(_with_member(data, "rounds_.npy", rounds[:-1]), "has shape")
    _refused(_with_member(data, "estimator_weights_.npy", np.zeros(6, np.float32)), "holds dtype")
    _refused(_with_member(data, "rounds_.npy", raw=members["rounds_.npy"] + b"\0" * 8), "bytes of array data")
    _refused(_with_member(data, "rounds_.npy", raw=members["rounds_.npy"][:-8]), "bytes of array data")
    _refused(_with_member(data, "rounds_.npy", raw=b"\x93NUMPY\x09\x00" + members["rounds_.npy"][8:]),
             ".npy format version")
    _refused(_with_member(data, "rounds_.npy", raw=b"\x93NUMPY\x01\x00\x10\x00{'descr': 'x'}    "))
    _refused(_with_member(data, "classes_.npy", np.array(["b", "a", "c", "d"])), "unique and sorted")
    _refused(_with_member(data, "classes_.npy", np.array(["a", "a", "c", "d"])), "unique and sorted")
    names = _npy(data, "feature_names_in_.npy")
    _refused(_with_member(data, "feature_names_in_.npy", names.astype("<U9")), "holds dtype")


def _with_nodes(data, change):
    nodes = _npy(data, "nodes_.npy").copy()
    change(nodes)
    return _with_member(data, "nodes_.npy", nodes)


def _node_field(field, t, j, value):
    def change(nodes):
        nodes[field][t, j] = value
    return change


NODE_CHANGES = [
    ("left", 0, 0, 1000, "child index out of range"),
    ("right", 0, 0, 7, "child index out of range"),
    ("right", 1, 0, -5, "child index out of range"),
    ("left", 0, 0, 0, "child index out of range"),  # a cycle
    ("left", 2, 1, 1, "child index out of range"),  # a cycle
    ("left", 0, 3, -2, "a leaf must have"),
    ("right", 0, 3, 2, "a leaf must have"),
    ("feature", 0, 0, 8, "feature index 8 out of range"),
    ("feature", 0, 0, -1, "feature index -1 out of range [0, 8)"),
    ("feature", 0, 5, 10 ** 9, "out of range"),
    ("feature", 3, 6, -7, "out of range"),
    ("class_", 0, 3, 4, "class index is out of range"),
    ("class_", 0, 3, -1, "class index is out of range"),
]


@pytest.mark.parametrize("field, t, j, value, match", NODE_CHANGES, ids=[f"{f}[{t},{j}]={v}"
                                                                         for f, t, j, v, _ in NODE_CHANGES])
def test_out_of_range_tree_indices_are_refused(samples, field, t, j, value, match):
    est, data, _ = samples["trees"]
    nodes = est.nodes_
    assert nodes["left"][0, 0] == 1 and nodes["left"][0, 3] == -1  # the layout the changes assume
    _refused(_with_nodes(data, _node_field(field, t, j, value)), match)


@pytest.mark.parametrize("kind, member, field, where, value, match", [
    ("stumps", "rounds_.npy", "alpha", 2, np.nan, "'alpha' must be finite"),
    ("stumps", "rounds_.npy", "alpha", 0, np.inf, "'alpha' must be finite"),
    ("stumps", "rounds_.npy", "threshold", 3, np.nan, "numeric split's threshold must not be NaN"),
    ("trees", "rounds_.npy", "alpha", 1, np.nan, "'alpha' must be finite"),
    ("trees", "nodes_.npy", "value", (0, 3), np.nan, "tree 0, node 3: a leaf's value must be finite"),
    ("trees", "nodes_.npy", "value", (2, 6), np.inf, "tree 2, node 6: a leaf's value must be finite"),
    ("trees", "nodes_.npy", "threshold", (1, 0), np.nan, "numeric split's threshold must not be NaN"),
], ids=lambda x: str(x) if not isinstance(x, str) or len(x) < 12 else None)
def test_numbers_prediction_reads_must_be_numbers(samples, kind, member, field, where, value, match):
    """A step or a leaf's value that is not finite, or a numeric split's NaN threshold, would
    make the model predict NaN: refused, as non-finite K-vector leaves are. ±inf thresholds stay valid."""
    est, data, X = samples[kind]
    records = _npy(data, member).copy()
    records[field][where] = value
    _refused(_with_member(data, member, records), match)
    records = _npy(data, member).copy()
    records["threshold"][where] = -np.inf
    loaded = _load(_with_member(data, member, records))
    assert np.all(np.isfinite(loaded.decision_function(X)))


@pytest.mark.parametrize("kind", ["stumps", "trees"])
def test_steps_whose_sum_overflows_are_refused(samples, kind):
    """Every step finite but their magnitudes summing near the largest float: the scores would overflow to NaN.
    Up to MAX_ALPHA_SUM they are a model."""
    from fastboost._model_io import MAX_ALPHA_SUM

    est, data, X = samples[kind]
    records = _npy(data, "rounds_.npy").copy()
    records["alpha"][:] = 1e308
    _refused(_with_member(data, "rounds_.npy", records), "sum to more than 1e+300")
    records["alpha"][:] = MAX_ALPHA_SUM / records.shape[0]
    assert not np.any(np.isnan(_load(_with_member(data, "rounds_.npy", records)).decision_function(X)))


def test_leaves_whose_scores_overflow_are_refused(data):
    """A finite step times a finite leaf value (or stump side) near the largest float: the scores would overflow
    to NaN although each number is finite."""
    X, y2, _ = data
    trees = _save(AdaBoostClassifier(4, max_depth=2).fit(X, y2))
    nodes = _npy(trees, "nodes_.npy").copy()
    nodes["value"][0, nodes["left"][0] == -1] = 1e308
    _refused(_with_member(trees, "nodes_.npy", nodes), "nodes_.npy: the steps times their rounds' largest outputs "
                                                         "sum to more than 1e+300")
    stumps = _save(AdaBoostClassifier(4).fit(X, y2))
    rounds = _npy(stumps, "rounds_.npy").copy()
    rounds["left"][0], rounds["alpha"][0] = 2 ** 62, 1e290
    _refused(_with_member(stumps, "rounds_.npy", rounds), "rounds_.npy: the steps times their rounds' largest")
    for file in (trees, stumps):
        assert np.all(np.isfinite(_load(file).decision_function(X)))


def test_trees_deeper_than_their_slots_and_stump_features_are_refused(samples):
    est, data, _ = samples["trees"]

    def chain(nodes):  # 0 -> 1 -> 3 -> 4 (depth 3 in a depth-2 tree of 7 slots): the kernel would stop early
        nodes[0, 3] = nodes[0, 1]
        nodes["left"][0, 3], nodes["right"][0, 3] = 4, 5
        nodes["feature"][0, 3] = 0
    _refused(_with_nodes(data, chain), "a split at depth 2")
    _, data, _ = samples["stumps"]
    rounds = _npy(data, "rounds_.npy").copy()
    for bad in (8, -1, 2 ** 62):
        rounds["feature"][2] = bad
        _refused(_with_member(data, "rounds_.npy", rounds), "rounds_.npy: feature index")


def test_unexpected_exceptions_become_value_errors_but_ctrl_c_does_not(samples, monkeypatch):
    _, data, _ = samples["stumps"]

    def boom(*args, **kwargs):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(np, "load", boom)
    message = _refused(data, "the file is damaged: RuntimeError: disk on fire")
    assert "model file" in message

    def interrupt(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(np, "load", interrupt)
    with pytest.raises(KeyboardInterrupt):
        _load(data)


def test_record_dtypes_are_the_documented_ones():
    """docs/model-format.md lists the record fields; a change to them is a new format version."""
    assert [(n, ROUND_DTYPE[n].base.str) for n in ROUND_DTYPE.names] == [
        ("feature", "<i8"), ("bin", "<i8"), ("threshold", "<f8"), ("missing_left", "<i8"), ("left", "<i8"),
        ("right", "<i8"), ("alpha", "<f8"), ("error", "<f8"), ("learner_error", "<f8"), ("edge", "<f8"),
        ("cost", "<f8"), ("log_cost", "<f8"), ("val_error", "<f8"), ("categorical", "<i8"), ("cat_left", "<u8"),
        ("lp_value", "<f8"), ("lp_beta", "<f8"), ("n_active", "<i8"), ("n_seen", "<i8")]
    assert [(n, NODE_DTYPE[n].base.str) for n in NODE_DTYPE.names] == [
        ("feature", "<i8"), ("bin", "<i8"), ("threshold", "<f8"), ("missing_left", "<i8"), ("left", "<i8"),
        ("right", "<i8"), ("class_", "<i8"), ("value", "<f8"), ("gain", "<f8"), ("weight", "<f8"),
        ("categorical", "<i8"), ("cat_left", "<u8")]
    assert ROUND_DTYPE["cat_left"].shape == NODE_DTYPE["cat_left"].shape == (4,)
    assert ROUND_DTYPE.itemsize == 176 and NODE_DTYPE.itemsize == 120
    doc = open(os.path.join(os.path.dirname(__file__), "..", "docs", "model-format.md")).read()
    for name in ROUND_DTYPE.names + NODE_DTYPE.names:
        assert f"`{name}`" in doc


@pytest.mark.parametrize("make", [
    lambda: AdaBoostClassifier(15, warm_start=True),
    lambda: VadaBoostClassifier(12, max_depth=2, warm_start=True),
    lambda: QuadBoostClassifier(12, penalty="l1", lam=1e-3, reweight_every=5, warm_start=True),
], ids=["adaboost", "vadaboost-trees", "quadboost-reweight"])
def test_a_loaded_model_continues_training(make, data):
    X, y2, y4 = data
    y = y4 if "Vada" in type(make()).__name__ else y2
    est = make().fit(X, y)
    loaded = _load(_save(est))
    assert not hasattr(loaded, "_resume")
    loaded.set_params(n_estimators=30).fit(X, y)
    longer = make().set_params(n_estimators=30, warm_start=False).fit(X, y)
    _same_model(longer, loaded, X)
    with pytest.raises(ValueError, match="first rounds differ"):
        _load(_save(est)).set_params(n_estimators=30).fit(X, np.roll(y, 7))  # other labels
    other = _load(_save(est))
    with pytest.raises(ValueError, match="first rounds differ"):
        other.set_params(n_estimators=30).fit(X + 1e3 * (X > 0), y)  # the same order, other thresholds
    with pytest.raises(ValueError, match="learning_rate changed"):  # named, before any round is fitted again
        other.set_params(n_estimators=30, learning_rate=0.5).fit(X, y)
    other.set_params(learning_rate=est.learning_rate)
    _same_fitted(est, other)  # a refused continuation leaves the loaded model as it was


def _same_model(a, b, X):
    """The same fitted ensemble (fit times aside): records, trees and outputs bit for bit."""
    for x, y in zip(getattr(a, "estimators_", [a]), getattr(b, "estimators_", [b]), strict=True):
        assert x.rounds_.tobytes() == y.rounds_.tobytes()
        assert (x.nodes_ is None and y.nodes_ is None) or x.nodes_.tobytes() == y.nodes_.tobytes()
    assert a.n_estimators_ == b.n_estimators_
    _same_array(a.decision_function(X), b.decision_function(X), "decision_function")
