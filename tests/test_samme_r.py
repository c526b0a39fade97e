"""SAMME.R: AdaBoostClassifier(leaf="real") with K > 2 classes, one tree a round with K-vector leaves.

The compiled fit against the rule written out in NumPy (trees grown greedily on the same bins by brute
force, the leaves' values, the weight update), and the estimator around it: probabilities, staged
predictions, validation, warm start, model files, thread counts, one-vs-rest kept reachable.
"""
import io

import numpy as np
import pytest
from scipy.special import softmax

import fastboost
from fastboost import AdaBoostClassifier
from fastboost._binning import BinMapper
from fastboost._types import CRITERION_GINI

try:
    from . import naive
    from .kernel_cases import assert_vector_trees_match, multiclass_problem
except ImportError:
    import naive
    from kernel_cases import assert_vector_trees_match, multiclass_problem




def _reference(X, y, sw, n_rounds, depth, learning_rate):
    """SAMME.R in NumPy on the fit's bins: every round's tree by brute force with the weighted Gini impurity
    as criterion, its leaves' values (K - 1) (log(W_k + d) - mean_j log(W_j + d)), d = 1 / (2 n) with n the
    weighted rows, and w <- w exp(-learning_rate h_{y_i}(x_i) / (K - 1)) / Z. Returns per round the node
    dicts and the (max_nodes, K) table of leaf values."""
    k = int(y.max()) + 1
    p = sw / sw.sum()
    mapper = BinMapper(255).fit(X, p)
    codes = mapper.transform(X)
    yi = y.astype(np.uint16)
    delta = 0.5 / np.count_nonzero(p)
    w = p.copy()
    out = []
    for _ in range(n_rounds):
        nodes = naive.grow_tree_naive(codes, yi, w, mapper.n_value_bins_, mapper.missing_code, k, CRITERION_GINI,
                                      depth)
        values = np.zeros((2 ** (depth + 1) - 1, k))
        factor = np.empty(len(y))
        for j, node in enumerate(nodes):
            if node["left"] < 0:
                rows = node["rows"]
                wk = np.array([w[rows][yi[rows] == c].sum() for c in range(k)])
                lg = np.log(wk + delta)
                values[j] = (k - 1) * (lg - lg.mean())
                factor[rows] = np.exp(-learning_rate * values[j][yi[rows]] / (k - 1))
        out.append((nodes, values))
        w = w * factor
        w /= w.sum()
    return out


@pytest.mark.parametrize("depth,k,seed", [(1, 3, 0), (2, 4, 1), (3, 3, 2)])
def test_trees_and_leaf_values_match_the_numpy_rule(depth, k, seed):
    X, y = multiclass_problem(160, 4, k, seed)
    sw = np.random.default_rng(seed).random(len(y)) + 0.1
    sw[::17] = 0.0  # rows without weight
    rate = 0.5
    model = AdaBoostClassifier(6, max_depth=depth, leaf="real", multiclass="joint", learning_rate=rate,
                               n_jobs=1).fit(X, y, sw)
    assert model.leaf_values_ is not None and not hasattr(model, "estimators_")
    assert model.leaf_values_.shape == (model.n_estimators_, 2 ** (depth + 1) - 1, k)
    ref = _reference(X, y, sw, model.n_estimators_, depth, rate)
    assert model.n_estimators_ == 6
    assert_vector_trees_match(model, ref, rate)
    # decision_function is F = sum_t alpha_t h_t (rows sum to 0); predict_proba the softmax of F / (K - 1)
    F = model.decision_function(X)
    np.testing.assert_allclose(F.sum(axis=1), 0.0, atol=1e-9)
    np.testing.assert_allclose(model.predict_proba(X), softmax(F / (k - 1), axis=1), rtol=1e-12)
    np.testing.assert_array_equal(model.predict(X), model.classes_[np.argmax(F, axis=1)])


def test_loss_falls_and_the_errors_are_the_leaves():
    X, y = multiclass_problem(300, 5, 3, 3, nan=False)
    model = AdaBoostClassifier(20, max_depth=2, leaf="real", multiclass="joint", learning_rate=0.3).fit(X, y)
    log_cost = np.r_[np.log(model.initial_cost_), model.rounds_["log_cost"]]
    assert np.all(np.diff(log_cost) < 0), "the loss sum_i exp(-y_i . F(x_i) / K) rises"
    # the first round's error: the boosting weight of the rows whose leaf's top value is not their class
    first = next(iter(model.staged_predict(X)))
    assert np.isclose(model.rounds_["error"][0], np.mean(first != y))


def test_staged_validation_and_warm_start():
    X, y = multiclass_problem(240, 4, 3, 4)
    Xv, yv = multiclass_problem(120, 4, 3, 5)
    model = AdaBoostClassifier(12, max_depth=2, leaf="real", multiclass="joint",
                               learning_rate=0.5).fit(X, y, eval_set=(Xv, yv))
    staged = list(model.staged_predict(Xv))
    errors = [np.mean(p != yv) for p in staged]
    np.testing.assert_allclose(model.validation_errors_[:len(errors)], errors, atol=1e-12)
    np.testing.assert_array_equal(list(model.staged_decision_function(X))[-1], model.decision_function(X))
    np.testing.assert_array_equal(list(model.staged_predict_proba(X))[-1], model.predict_proba(X))
    whole = AdaBoostClassifier(10, max_depth=2, leaf="real", multiclass="joint", learning_rate=0.5).fit(X, y)
    warm = AdaBoostClassifier(4, max_depth=2, leaf="real", multiclass="joint", learning_rate=0.5,
                              warm_start=True).fit(X, y)
    warm.set_params(n_estimators=10).fit(X, y)
    np.testing.assert_array_equal(warm.leaf_values_, whole.leaf_values_)
    np.testing.assert_array_equal(warm.nodes_, whole.nodes_)
    np.testing.assert_array_equal(warm.predict_proba(X), whole.predict_proba(X))


def test_thread_counts_give_the_same_model():
    X, y = multiclass_problem(3000, 6, 4, 6)
    one = AdaBoostClassifier(5, max_depth=3, leaf="real", multiclass="joint", n_jobs=1).fit(X, y)
    two = AdaBoostClassifier(5, max_depth=3, leaf="real", multiclass="joint", n_jobs=2).fit(X, y)
    np.testing.assert_array_equal(one.leaf_values_, two.leaf_values_)
    np.testing.assert_array_equal(one.nodes_, two.nodes_)
    np.testing.assert_array_equal(one.rounds_["log_cost"], two.rounds_["log_cost"])


def test_model_files_and_one_vs_rest():
    X, y = multiclass_problem(200, 4, 3, 7)
    model = AdaBoostClassifier(8, max_depth=2, leaf="real", multiclass="joint").fit(X, y)
    buf = io.BytesIO()
    model.save(buf)
    buf.seek(0)
    loaded = fastboost.load(buf)
    np.testing.assert_array_equal(loaded.leaf_values_, model.leaf_values_)
    np.testing.assert_array_equal(loaded.predict_proba(X), model.predict_proba(X))
    assert loaded.get_params()["multiclass"] == "joint"
    ovr = AdaBoostClassifier(8, max_depth=2, leaf="real", multiclass="ovr").fit(X, y)
    assert len(ovr.estimators_) == 3 and getattr(ovr, "leaf_values_", None) is None
    buf = io.BytesIO()
    ovr.save(buf)
    buf.seek(0)
    again = fastboost.load(buf)
    assert again.get_params()["multiclass"] == "ovr"
    np.testing.assert_array_equal(again.predict_proba(X), ovr.predict_proba(X))
    # SAMME with multiclass="ovr": discrete one-vs-rest models
    assert len(AdaBoostClassifier(3, multiclass="ovr").fit(X, y).estimators_) == 3
    # "auto" (the default): SAMME for discrete leaves, one-vs-rest for real ones, as before SAMME.R existed
    auto = AdaBoostClassifier(8, max_depth=2, leaf="real").fit(X, y)
    np.testing.assert_array_equal(auto.predict_proba(X), ovr.predict_proba(X))
    assert not hasattr(AdaBoostClassifier(3).fit(X, y), "estimators_")


def test_old_one_vs_rest_files_load_as_ovr():
    """A format 5 file of AdaBoostClassifier(leaf="real") with 3 classes (one-vs-rest then) loads with
    multiclass="ovr" and predicts as saved."""
    import json
    import zipfile

    X, y = multiclass_problem(150, 3, 3, 8)
    ovr = AdaBoostClassifier(5, leaf="real", multiclass="ovr").fit(X, y)
    buf = io.BytesIO()
    ovr.save(buf)
    old = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(buf.getvalue())) as src, zipfile.ZipFile(old, "w") as dst:
        for item in src.infolist():
            data = src.read(item.filename)
            if item.filename == "header.json":
                header = json.loads(data)
                header["format_version"] = 5

                def drop(rec):
                    rec["params"].pop("multiclass", None)
                    for sub in rec.get("estimators", []):
                        drop(sub)

                drop(header["model"])
                data = json.dumps(header).encode()
            dst.writestr(item, data)
    old.seek(0)
    loaded = fastboost.load(old)
    assert loaded.get_params()["multiclass"] == "ovr"
    np.testing.assert_array_equal(loaded.predict_proba(X), ovr.predict_proba(X))


def test_exports_name_the_limitation():
    X, y = multiclass_problem(120, 3, 3, 9)
    from fastboost.export import ensemble

    for multiclass, kind in (("joint", "SAMME.R"), ("mh", "AdaBoost.MH")):
        model = AdaBoostClassifier(3, max_depth=2, leaf="real", multiclass=multiclass).fit(X, y)
        named = rf"multiclass='{multiclass}'\) of 3 classes \({kind}\) has K-vector leaves"
        with pytest.raises(ValueError, match=named):
            model.predict_contrib(X)
        with pytest.raises(ValueError, match=named):
            ensemble(model)
    from sklearn.linear_model import LogisticRegression

    with pytest.raises(TypeError, match="expected a fitted fastboost classifier, got LogisticRegression"):
        fastboost.to_shap(LogisticRegression().fit(np.nan_to_num(X), y))
    with pytest.raises(ValueError, match="multiclass must be one of"):
        AdaBoostClassifier(multiclass="one").fit(X, y)


def test_monotone_constraints_are_refused_with_k_vector_leaves():
    X, y = multiclass_problem(120, 3, 3, 10)
    with pytest.raises(ValueError, match="SAMME.R.*monotone_constraints.*multiclass='ovr'"):
        AdaBoostClassifier(3, leaf="real", multiclass="joint", monotone_constraints=[1, 0, 0]).fit(X, y)
    # zero constraints constrain nothing; one-vs-rest takes them
    AdaBoostClassifier(3, leaf="real", multiclass="joint", monotone_constraints=[0, 0, 0]).fit(X, y)
    AdaBoostClassifier(3, leaf="real", monotone_constraints=[1, 0, 0]).fit(X, y)
