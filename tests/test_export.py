"""Exports checked by the tools that read them: shap's TreeExplainer, onnxruntime and Treelite's GTIL."""
import numpy as np
import pytest

import fastboost


def _data(n=300, n_features=5, n_classes=2, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, n_features)).round(1)  # ties
    X[rng.random(X.shape) < 0.05] = np.nan
    score = np.nan_to_num(X[:, 0]) + np.nan_to_num(X[:, 1]) * np.nan_to_num(X[:, 2])
    y = np.digitize(score, np.quantile(score, np.linspace(0, 1, n_classes + 1)[1:-1]))
    return X, y


MODELS = [
    ("AdaBoostClassifier", {}, 2),
    ("AdaBoostClassifier", {"max_depth": 3, "learning_rate": 0.5}, 2),
    ("AdaBoostClassifier", {"max_depth": 2, "leaf": "real"}, 2),
    ("AdaBoostClassifier", {"max_depth": 2}, 3),
    ("AdaBoostClassifier", {"leaf": "real", "max_depth": 2, "multiclass": "ovr"}, 3),
    ("AdaBoostClassifier", {"max_depth": 2, "leaf": "real", "loss": "logistic"}, 2),
    ("AdaBoostClassifier", {"leaf": "real", "max_depth": 2, "multiclass": "ovr", "loss": "logistic"}, 3),
    ("VadaBoostClassifier", {"lam": 0.3}, 3),
    ("QuadBoostClassifier", {"max_depth": 2}, 2),
    ("QuadBoostClassifier", {}, 3),
]


def _fit(name, params, n_classes, seed=0):
    X, y = _data(n_classes=n_classes, seed=seed)
    sw = np.random.default_rng(seed + 1).choice([0.5, 1.0, 2.0], size=y.shape[0])
    return getattr(fastboost, name)(n_estimators=12, **params).fit(X, y, sample_weight=sw), X


@pytest.mark.parametrize("name, params, n_classes", MODELS)
def test_shap_tree_explainer_gives_predict_contrib(name, params, n_classes):
    shap = pytest.importorskip("shap")
    clf, X = _fit(name, params, n_classes)
    explainer = shap.TreeExplainer(fastboost.to_shap(clf))
    values = np.asarray(explainer.shap_values(X))
    phi = clf.predict_contrib(X)
    if phi.ndim == 3:
        values = np.transpose(values, (0, 2, 1))  # shap: (rows, features, classes)
    np.testing.assert_allclose(values, phi[..., :-1], rtol=0, atol=1e-9)
    np.testing.assert_allclose(explainer.expected_value, phi[0, ..., -1], rtol=0, atol=1e-9)


def test_shap_takes_a_leaf_no_row_reached_and_refuses_an_empty_model():
    """A side no training row reached (cover 0 beside a sibling that took every row) is covered by a vanishing
    share, so shap's explainer works and equals predict_contrib; an empty ensemble is a ValueError, not an
    error inside shap."""
    shap = pytest.importorskip("shap")
    rng = np.random.default_rng(0)
    X = np.ones((50, 3))
    X[:, 1] = rng.normal(size=50)
    y = rng.integers(0, 2, 50)
    for depth, Xf in ((1, np.ones((50, 3))), (3, X)):
        clf = fastboost.AdaBoostClassifier(10, max_depth=depth).fit(Xf, y)
        assert (clf.cover_ == 0).any()
        values = shap.TreeExplainer(fastboost.to_shap(clf)).shap_values(Xf)
        np.testing.assert_allclose(values, clf.predict_contrib(Xf)[:, :-1], rtol=0, atol=1e-9)
    with pytest.warns(UserWarning, match="the ensemble is empty"):
        empty = fastboost.AdaBoostClassifier(10).fit(np.ones((50, 3)), [0, 1] * 25)
    with pytest.raises(ValueError, match=r"no rounds \(an empty ensemble\)"):
        fastboost.to_shap(empty)


def test_shap_refuses_categorical_splits_naming_the_feature():
    pd = pytest.importorskip("pandas")
    X, y = _data()
    df = pd.DataFrame(X, columns=list("abcde"))
    df["colour"] = pd.Categorical(np.where(y == 1, "red", "blue"))
    clf = fastboost.AdaBoostClassifier(5).fit(df, y)
    with pytest.raises(ValueError, match="'colour' is split by sets of categories. AdaBoostClassifier.predict_contrib "
                                         "gives this model's SHAP values"):
        fastboost.to_shap(clf)


# ---------------------------------------------------------------- ONNX
def _probes(clf, X, dtype, rng):
    """Rows with values exactly at the model's thresholds (as dtype), one step either side, NaN, +-inf and
    the training rows."""
    from fastboost.export import ensemble

    ens = ensemble(clf)
    thresholds = {}
    for tree in ens.trees:
        for f, t, cats in zip(tree.feature, tree.threshold, tree.categories):
            if f >= 0 and not cats:
                thresholds.setdefault(int(f), []).append(t)
    n = 400
    P = rng.choice(X[~np.isnan(X).any(axis=1)].ravel(), size=(n, X.shape[1])).astype(dtype)
    for f, ts in thresholds.items():
        ts = np.array(ts)
        ts = ts[np.isfinite(ts)]
        if not ts.size:
            continue
        at = ts.astype(dtype)
        values = np.concatenate([at, np.nextafter(at, dtype(np.inf)), np.nextafter(at, dtype(-np.inf)),
                                 [np.nan, np.inf, -np.inf]]).astype(dtype)
        P[:, f] = rng.choice(values, size=n)
    return np.concatenate([P, X.astype(dtype)])


def _labels_agree(clf, X, labels):
    """Labels equal predict, except (float32 sums) where the margin is within float32 rounding of a tie."""
    want = clf.predict(X)
    bad = np.flatnonzero(labels != want)
    if not bad.size:
        return
    assert X.dtype == np.float32, f"labels differ on rows {bad[:10]}"
    raw = clf.decision_function(X[bad])
    scale = (np.abs(clf.estimator_weights_).sum() if not hasattr(clf, "estimators_")
             else max(np.abs(m.estimator_weights_).sum() for m in clf.estimators_))
    gap = np.abs(raw) if raw.ndim == 1 else -np.diff(np.sort(raw, axis=1)[:, -2:], axis=1)[:, 0]
    assert np.all(gap <= 1e-5 * max(scale, 1.0)), f"labels differ on rows {bad[:10]} with margins {gap[:10]}"


@pytest.mark.parametrize("ml_opset", [5, 3])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name, params, n_classes", MODELS)
def test_onnx_matches_predict_and_predict_proba(name, params, n_classes, dtype, ml_opset):
    ort = pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    clf, X = _fit(name, params, n_classes)
    model = fastboost.to_onnx(clf, dtype=dtype, ml_opset=ml_opset)
    trees = [n for n in model.graph.node if n.domain == "ai.onnx.ml"]
    assert len(trees) == 1  # one operator for every round
    assert trees[0].op_type == ("TreeEnsemble" if ml_opset == 5 else "TreeEnsembleRegressor")
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    P = _probes(clf, X, dtype, np.random.default_rng(3))
    labels, proba = sess.run(None, {"X": P})
    assert proba.dtype == dtype
    _labels_agree(clf, P, labels)
    np.testing.assert_allclose(proba, clf.predict_proba(P), rtol=0, atol=1e-6 if dtype == np.float64 else 1e-4)


def test_onnx_categorical_splits_and_string_labels():
    ort = pytest.importorskip("onnxruntime")
    pd = pytest.importorskip("pandas")
    X, y = _data()
    rng = np.random.default_rng(4)
    df = pd.DataFrame(X, columns=list("abcde"))
    colour = rng.choice(["red", "green", "blue", "grey"], size=y.shape[0])
    df["colour"] = pd.Categorical(colour)
    y = np.where(np.isin(colour, ["red", "grey"]), 1, 0) ^ (np.nan_to_num(X[:, 0]) > 1.0)
    labels = np.array(["no", "yes"])[y]
    for params in ({}, {"max_depth": 2}):
        clf = fastboost.AdaBoostClassifier(15, **params).fit(df, labels)
        assert any(any(tree.categories) for tree in fastboost.export.ensemble(clf).trees)
        sess = ort.InferenceSession(fastboost.to_onnx(clf, dtype=np.float64).SerializeToString())
        probe = df.copy()
        probe.loc[:30, "colour"] = np.nan
        codes = clf._check_predict_X(probe)  # category indices, unknown as NaN
        got_labels, proba = sess.run(None, {"X": codes})
        np.testing.assert_array_equal(got_labels, clf.predict(probe))
        np.testing.assert_allclose(proba, clf.predict_proba(probe), atol=1e-6)


def test_float32_thresholds_split_as_float64():
    from fastboost.export import float32_thresholds

    rng = np.random.default_rng(5)
    t = np.concatenate([rng.normal(size=500) * 10.0 ** rng.integers(-30, 30, 500), [0.0, -0.0, np.inf, -np.inf,
                                                                                    1e300, -1e300, 1e-300]])
    f = float32_thresholds(t)
    with np.errstate(over="ignore"):
        near = t.astype(np.float32)
    for x in (near, np.nextafter(near, np.float32(np.inf)), np.nextafter(near, np.float32(-np.inf))):
        with np.errstate(over="ignore", invalid="ignore"):
            np.testing.assert_array_equal(x.astype(np.float64) <= t, x <= f)


def test_onnx_bad_input():
    pytest.importorskip("onnx")
    clf, _ = _fit("AdaBoostClassifier", {}, 2)
    with pytest.raises(ValueError, match="dtype"):
        fastboost.to_onnx(clf, dtype=np.int32)
    for ml_opset in (3.0, True, "5", 4):
        with pytest.raises(ValueError, match=r"ml_opset must be 3 \(TreeEnsembleRegressor\) or 5"):
            fastboost.to_onnx(clf, ml_opset=ml_opset)
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        fastboost.to_onnx(fastboost.AdaBoostClassifier())


def test_onnx_labels_it_cannot_hold_are_refused_and_bool_labels_are_0_and_1():
    """Labels as predict gives them, or a ValueError: integers beyond int64 and bytes have no ONNX label type
    (they came out wrapped to negative numbers and as the text "b'pos'"); bool labels come out as int64 0 / 1."""
    pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    X, y = _data()
    for labels, match in ((y.astype(np.uint64) * np.uint64(2 ** 63), "int64; classes_ holds 9223372036854775808"),
                          (np.where(y == 1, b"pos", b"neg"), "classes_ holds bytes")):
        clf = fastboost.AdaBoostClassifier(3).fit(X, labels)
        with pytest.raises(ValueError, match=match):
            fastboost.to_onnx(clf, dtype=np.float64)
    clf = fastboost.AdaBoostClassifier(3).fit(X, y == 1)
    sess = ort.InferenceSession(fastboost.to_onnx(clf, dtype=np.float64).SerializeToString())
    label = sess.run(["label"], {"X": X})[0]
    assert label.dtype == np.int64
    np.testing.assert_array_equal(label, clf.predict(X).astype(np.int64))


# ---------------------------------------------------------------- Treelite
def _treelite_expected(clf, X):
    """(margin, prediction) that gtil.predict should give, as fastboost computes them (to_treelite's table)."""
    from fastboost.export import ensemble

    ens = ensemble(clf)
    df = clf.decision_function(X)
    if ens.kind == "binary":
        return df, (df if ens.link == "clip" else clf.predict_proba(X)[:, 1])
    if ens.kind == "samme":
        return df / (df.shape[1] - 1), clf.predict_proba(X)
    if ens.link == "clip":
        return df, df
    return df, 1.0 / (1.0 + np.exp(-(1.0 if ens.link == "logistic" else 2.0) * df))  # each class's, unnormalised


@pytest.mark.parametrize("name, params, n_classes", MODELS)
def test_treelite_gtil_matches_decision_function_and_predict_proba(name, params, n_classes):
    treelite = pytest.importorskip("treelite")
    clf, X = _fit(name, params, n_classes)
    model = fastboost.to_treelite(clf)
    P = _probes(clf, X, np.float64, np.random.default_rng(6))
    margin = treelite.gtil.predict(model, P, pred_margin=True)[:, 0]
    pred = treelite.gtil.predict(model, P)[:, 0]
    want_margin, want_pred = _treelite_expected(clf, P)
    scale = max(1.0, np.abs(want_margin).max())
    np.testing.assert_allclose(margin.reshape(want_margin.shape), want_margin, rtol=0, atol=1e-9 * scale)
    # Treelite's post-processors keep their parameters (sigmoid alpha) in float32
    np.testing.assert_allclose(pred.reshape(want_pred.shape), want_pred, rtol=0, atol=1e-6 * max(1.0, np.abs(
        want_pred).max()))


def test_treelite_categorical_splits():
    treelite = pytest.importorskip("treelite")
    pd = pytest.importorskip("pandas")
    X, y = _data()
    colour = np.random.default_rng(7).choice(["red", "green", "blue"], size=y.shape[0])
    df = pd.DataFrame(X, columns=list("abcde")).assign(colour=pd.Categorical(colour))
    y = np.where(colour == "green", 1, 0) ^ (np.nan_to_num(X[:, 0]) > 1.0)
    clf = fastboost.AdaBoostClassifier(10, max_depth=2).fit(df, y)
    probe = df.copy()
    probe.loc[:20, "colour"] = np.nan
    codes = clf._check_predict_X(probe)
    margin = treelite.gtil.predict(fastboost.to_treelite(clf), codes, pred_margin=True)[:, 0, 0]
    np.testing.assert_allclose(margin, clf.decision_function(probe), rtol=0, atol=1e-12)


@pytest.mark.slow
def test_tl2cgen_compiled_library_predicts_the_same(tmp_path):
    pytest.importorskip("treelite")
    tl2cgen = pytest.importorskip("tl2cgen")
    for name, params, n_classes in (MODELS[1], MODELS[3]):
        clf, X = _fit(name, params, n_classes)
        lib = tmp_path / f"model_{n_classes}.so"
        tl2cgen.export_lib(fastboost.to_treelite(clf), toolchain="gcc", libpath=str(lib), params={})
        predictor = tl2cgen.Predictor(str(lib))
        P = _probes(clf, X, np.float64, np.random.default_rng(8))
        # tl2cgen's generated code marks a missing value by the low 32 bits of the double being -1 (its
        # Entry union), so such values (0.25 - 1 ulp, for one) read as missing: left out
        P = P[~(P.view(np.uint64) & np.uint64(0xFFFFFFFF) == np.uint64(0xFFFFFFFF)).any(axis=1)]
        margin = predictor.predict(tl2cgen.DMatrix(P, dtype="float64"), pred_margin=True)[:, 0]
        want, _ = _treelite_expected(clf, P)
        np.testing.assert_allclose(margin.reshape(want.shape), want, rtol=0, atol=1e-9 * max(1.0, np.abs(want).max()))


def test_skl2onnx_converts_a_pipeline_ending_in_a_fastboost_estimator():
    ort = pytest.importorskip("onnxruntime")
    skl2onnx = pytest.importorskip("skl2onnx")
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from fastboost.export import register_skl2onnx

    register_skl2onnx()
    for n_classes, options in ((2, None), (3, {"zipmap": False}), (3, None)):  # (None: the call docs/explain.md shows)
        X, y = _data(n_classes=n_classes)
        labels = np.array(["low", "mid", "top"])[y]
        pipe = make_pipeline(StandardScaler(), fastboost.AdaBoostClassifier(10, max_depth=2)).fit(X, labels)
        model = skl2onnx.to_onnx(pipe, X[:1], target_opset={"": 21, "ai.onnx.ml": 3},
                                 options=options and {id(pipe[-1]): options})
        sess = ort.InferenceSession(model.SerializeToString())
        got, proba = sess.run(None, {sess.get_inputs()[0].name: X})
        np.testing.assert_array_equal(got, pipe.predict(X))
        np.testing.assert_allclose(proba, pipe.predict_proba(X), atol=1e-6)
    with pytest.raises(Exception, match="zipmap"):  # (ZipMap is never added: asking for it is skl2onnx's error)
        skl2onnx.to_onnx(pipe, X[:1], target_opset={"": 21, "ai.onnx.ml": 3}, options={id(pipe[-1]): {"zipmap": True}})
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame(X, columns=list("abcde")).assign(colour=pd.Categorical(np.where(y == 1, "red", "blue")))
    clf = fastboost.AdaBoostClassifier(5).fit(df, y)
    with pytest.raises(ValueError, match="'colour' is split by sets of categories. to_onnx with ml_opset=5"):
        fastboost.to_onnx(clf, ml_opset=3)
