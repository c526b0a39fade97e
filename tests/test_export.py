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
    ("AdaBoostClassifier", {"leaf": "real", "max_depth": 2}, 3),
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


def test_shap_refuses_categorical_splits_naming_the_feature():
    pd = pytest.importorskip("pandas")
    X, y = _data()
    df = pd.DataFrame(X, columns=list("abcde"))
    df["colour"] = pd.Categorical(np.where(y == 1, "red", "blue"))
    clf = fastboost.AdaBoostClassifier(5).fit(df, y)
    with pytest.raises(ValueError, match="'colour'"):
        fastboost.to_shap(clf)
