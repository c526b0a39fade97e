"""A fitted model in other tools' formats: shap's dictionary model, ONNX and Treelite.

Every export starts from the same list of trees (stumps as one split and two leaves, each tree's reachable
nodes in depth-first order) with leaf values in raw-score units; each format then adds its own link from the
scores to ``decision_function`` and ``predict_proba``. The packages (onnx, treelite) are optional: a function
that needs one says which extra installs it.
"""
from collections import namedtuple

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ._validation import plain

#: One tree of the ensemble, its nodes in depth-first order (node 0 the root). Leaves have left = right = -1.
Tree = namedtuple("Tree", [
    "left",          # int64[m]  left child (the side of x <= threshold, or of the categories in the set)
    "right",         # int64[m]  right child
    "feature",       # int64[m]  split feature (-1 at leaves)
    "threshold",     # float64[m]  raw threshold (NaN for categorical splits and leaves)
    "missing_left",  # bool[m]  NaN goes left
    "categories",    # list of m tuples: the category indices that go left (categorical splits), else ()
    "value",         # float64[m]  leaf output in raw-score units (alpha * the hypothesis's output), 0 elsewhere
    "target",        # int64[m]  the score column a leaf adds to (0 for two classes)
    "cover",         # float64[m]  each node's cover (NaN when the model has none)
    "round",         # int  the round it comes from (one-vs-rest: within its class's model)
])

#: What the scores of the trees are and how they become decision_function and predict_proba.
Ensemble = namedtuple("Ensemble", [
    "trees",      # list of Tree
    "n_outputs",  # score columns: 1 (two classes), K (SAMME's class sums, one-vs-rest margins)
    "kind",       # "binary", "samme" or "ovr"
    "link",       # "expit" (AdaBoost's q = expit(2 F / total)), "logistic" (loss="logistic": q = expit(F)) or
                  # "clip" (QuadBoost's clip((1 + F) / 2, 0, 1)); one-vs-rest: each class's, with total 1
    "total",      # sum_t |alpha_t| (binary and SAMME), 1 for one-vs-rest and for two classes with leaf="real"
])


def _bits(cat_left):
    words = [int(w) for w in cat_left]
    return tuple(c for c in range(64 * len(words)) if (words[c >> 6] >> (c & 63)) & 1)


def _stump(r, alpha, cover, target, t):
    cover = np.array([cover[0] + cover[1], cover[0], cover[1]]) if cover is not None else np.full(3, np.nan)
    cat = bool(r["categorical"])
    return Tree(left=np.array([1, -1, -1]), right=np.array([2, -1, -1]), feature=np.array([int(r["feature"]), -1, -1]),
                threshold=np.array([np.nan if cat else float(r["threshold"]), np.nan, np.nan]),
                missing_left=np.array([bool(r["missing_left"]), False, False]),
                categories=[_bits(r["cat_left"]) if cat else (), (), ()],
                value=np.array([0.0, alpha * float(r["left"]), alpha * float(r["right"])]),
                target=np.full(3, target, dtype=np.int64), cover=cover, round=t)


def _tree(nodes, alpha, cover, n_classes, target, t):
    order = []
    stack = [0]
    while stack:  # depth first, left before right
        j = stack.pop()
        order.append(j)
        if nodes[j]["left"] >= 0:
            stack += [int(nodes[j]["right"]), int(nodes[j]["left"])]
    new = {j: i for i, j in enumerate(order)}
    nd = nodes[order]
    leaf = nd["left"] < 0
    left = np.array([-1 if lf else new[int(c)] for lf, c in zip(leaf, nd["left"])], dtype=np.int64)
    right = np.array([-1 if lf else new[int(c)] for lf, c in zip(leaf, nd["right"])], dtype=np.int64)
    cat = (nd["categorical"] != 0) & ~leaf
    if n_classes == 2:
        value = np.where(leaf, alpha * nd["value"], 0.0)
        tgt = np.full(len(order), target, dtype=np.int64)
    else:  # SAMME: alpha to the class the leaf names
        value = np.where(leaf, alpha, 0.0)
        tgt = np.where(leaf, nd["class_"], 0).astype(np.int64)
    return Tree(left=left, right=right, feature=np.where(leaf, -1, nd["feature"]),
                threshold=np.where(leaf | cat, np.nan, nd["threshold"]), missing_left=(nd["missing_left"] != 0) & ~leaf,
                categories=[_bits(c) if k else () for c, k in zip(nd["cat_left"], cat)], value=value, target=tgt,
                cover=cover[order] if cover is not None else np.full(len(order), np.nan), round=t)


def ensemble(clf):
    """The fitted model ``clf`` as an :data:`Ensemble` (NotFittedError if it is not fitted)."""
    from .estimators import BaseBoostClassifier
    from .explain import vector_leaf_model

    if not isinstance(clf, BaseBoostClassifier):
        raise TypeError(f"expected a fitted fastboost classifier, got {type(clf).__name__}.")
    check_is_fitted(clf)
    if callable(getattr(clf, "to_local", None)):
        clf = clf.to_local()
    if getattr(clf, "leaf_values_", None) is not None:
        raise ValueError(f"{vector_leaf_model(clf)} has K-vector leaves, which ONNX, treelite and shap export does "
                         "not cover yet; fit with multiclass='ovr' (one model per class) to export.")
    ovr = hasattr(clf, "estimators_")
    models = clf.estimators_ if ovr else [clf]
    k = clf.classes_.shape[0]
    trees = []
    for target, m in enumerate(models):
        cover = getattr(m, "cover_", None)
        alphas = m.rounds_["alpha"]
        for t in range(m.n_estimators_):
            c = None if cover is None else cover[t]
            if m.nodes_ is None:
                trees.append(_stump(m.rounds_[t], float(alphas[t]), c, target, t))
            else:
                trees.append(_tree(m.nodes_[t], float(alphas[t]), c, m.classes_.shape[0], target, t))
    kind = "ovr" if ovr else ("binary" if k == 2 else "samme")
    link = ("clip" if type(clf).__name__.startswith("QuadBoost") else
            "logistic" if getattr(clf, "loss", "exponential") == "logistic" else "expit")
    total = 1.0 if ovr or clf._unscaled_link() else clf._alpha_total()
    return Ensemble(trees=trees, n_outputs=1 if k == 2 else k, kind=kind, link=link, total=total)


def _feature_name(clf, f):
    names = getattr(clf, "feature_names_in_", None)
    return repr(str(names[f])) if names is not None else str(f)


def _no_categorical(clf, ens, what, instead):
    for tree in ens.trees:
        for f, cats in zip(tree.feature, tree.categories):
            if cats:
                raise ValueError(f"{what} has no set-membership splits: feature {_feature_name(clf, int(f))} is "
                                 f"split by sets of categories. {instead}")


# ============================================================================ shap
def to_shap(clf):
    """The dictionary model ``shap.TreeExplainer`` accepts for a fitted fastboost classifier.

    Its trees give ``decision_function`` (leaf values in its units: SAMME's symmetric, normalised class
    scores included) and ``node_sample_weight`` is each node's cover, so
    ``shap.TreeExplainer(fastboost.to_shap(clf)).shap_values(X)`` equals ``clf.predict_contrib(X)`` without
    its last column (for K > 2 classes shap orders the axes (rows, features, classes)), and the explainer's
    ``expected_value`` is that last column. Categorical splits (sets of categories) have no form in shap's
    trees: a ValueError names the feature. X for shap is numeric, as the estimator's kernels see it.
    """
    ens = ensemble(clf)
    _no_categorical(clf, ens, "shap's tree format", f"{type(clf).__name__}.predict_contrib gives this model's SHAP "
                    "values (it handles categorical splits).")
    if not ens.trees:
        raise ValueError(f"{type(clf).__name__} has no rounds (an empty ensemble): shap's tree format needs a "
                         "tree; predict_contrib gives its contributions (0, and the expected value).")
    from .explain import check_cover

    check_cover(clf, "fastboost.to_shap")
    k = ens.n_outputs
    trees = []
    for tree in ens.trees:
        values = np.zeros((tree.left.shape[0], k))
        if ens.kind == "samme":
            # a round adds (K alpha e_c - |alpha|) / ((K - 1) total) to the symmetric scores
            alpha = float(tree.value[tree.left < 0][0]) if (tree.left < 0).any() else 0.0
            for j in np.flatnonzero(tree.left < 0):
                values[j] = -abs(alpha) / ((k - 1) * ens.total)
                values[j, tree.target[j]] += k * tree.value[j] / ((k - 1) * ens.total)
        else:
            values[np.arange(tree.left.shape[0]), tree.target] = tree.value
        trees.append({
            "children_left": tree.left.astype(np.int32), "children_right": tree.right.astype(np.int32),
            "children_default": np.where(tree.missing_left, tree.left, tree.right).astype(np.int32),
            "features": tree.feature.astype(np.int32), "thresholds": np.nan_to_num(tree.threshold, nan=0.0),
            "values": values, "node_sample_weight": _positive_cover(tree)})
    return {"trees": trees, "base_offset": 0.0 if k == 1 else np.zeros(k), "tree_output": "raw_value",
            "input_dtype": np.float64, "internal_dtype": np.float64}


def _positive_cover(tree):
    """The cover, where a node no training row reached gets a vanishing share (so the cover ratios shap forms
    are 0 and 1/2, as predict_contrib's, instead of 0 / 0, and shap finds every leaf covered): split evenly
    below a node no row reached, and next to a sibling that took all the rows."""
    cover = tree.cover.astype(np.float64).copy()
    for j in range(cover.shape[0]):  # parents come before their children
        if tree.left[j] < 0:
            continue
        if cover[j] == 0.0:
            cover[j] = 1e-300
        a, b = tree.left[j], tree.right[j]
        if cover[a] == 0.0 and cover[b] == 0.0:
            cover[a] = cover[b] = cover[j] / 2
        elif cover[a] == 0.0 or cover[b] == 0.0:
            cover[a if cover[a] == 0.0 else b] = min(1e-300, cover[j] / 2)
    return cover


# ============================================================================ ONNX
#: TreeEnsemble's node modes (ai.onnx.ml opset 5)
_BRANCH_LEQ = 0
_BRANCH_MEMBER = 6
ONNX_OPSET = 21
ONNX_ML_OPSET = 5


def _need(module, extra):
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise ImportError(f"this needs the package {module.split('.')[0]}: pip install 'fastboost[{extra}]'") \
            from None


def float32_thresholds(thresholds):
    """For each float64 threshold t, the largest float32 f <= t: a float32 x satisfies x <= t exactly when
    x <= f, so float32 comparisons split the rows as the model's float64 comparisons (inf stays inf)."""
    t = np.asarray(thresholds, dtype=np.float64)
    with np.errstate(over="ignore"):
        f = t.astype(np.float32)
    above = f.astype(np.float64) > t
    f[above] = np.nextafter(f[above], np.float32(-np.inf))
    return f


def _tree_ensemble_node(ens, n_features, dtype, onnx):
    """One ai.onnx.ml TreeEnsemble node (opset 5) holding every tree: scores = sum of the leaves reached."""
    from onnx import helper, numpy_helper

    roots, feat, modes, splits, tnode, tleaf, fnode, fleaf, missing = [], [], [], [], [], [], [], [], []
    members, leaf_target, leaf_weight = [], [], []
    trees = ens.trees or [Tree(left=np.array([-1]), right=np.array([-1]), feature=np.array([-1]),
                               threshold=np.array([np.nan]), missing_left=np.array([False]), categories=[()],
                               value=np.array([0.0]), target=np.array([0]), cover=np.array([np.nan]), round=0)]
    for tree in trees:
        internal = np.flatnonzero(tree.left >= 0)
        leaves = np.flatnonzero(tree.left < 0)
        node_id = {int(j): len(feat) + i for i, j in enumerate(internal)}
        leaf_id = {int(j): len(leaf_weight) + i for i, j in enumerate(leaves)}
        leaf_target += tree.target[leaves].tolist()
        leaf_weight += tree.value[leaves].tolist()
        if internal.shape[0] == 0:  # a lone leaf: a split that sends every row to it
            roots.append(len(feat))
            feat.append(0)
            modes.append(_BRANCH_LEQ)
            splits.append(np.inf)
            tnode.append(leaf_id[0])
            fnode.append(leaf_id[0])
            tleaf.append(1)
            fleaf.append(1)
            missing.append(1)
            continue
        roots.append(node_id[0])
        for j in internal:
            cats = tree.categories[j]
            feat.append(int(tree.feature[j]))
            if cats:
                modes.append(_BRANCH_MEMBER)
                splits.append(np.nan)
                members += [float(c) for c in cats] + [np.nan]
            else:
                modes.append(_BRANCH_LEQ)
                splits.append(float(tree.threshold[j]))
            for child, ids, leafs in ((tree.left[j], tnode, tleaf), (tree.right[j], fnode, fleaf)):
                is_leaf = tree.left[child] < 0
                ids.append(leaf_id[int(child)] if is_leaf else node_id[int(child)])
                leafs.append(int(is_leaf))
            missing.append(int(tree.missing_left[j]))
    np_dtype = np.dtype(dtype)
    splits = np.array(splits, dtype=np.float64)
    splits = float32_thresholds(splits) if np_dtype == np.float32 else splits
    attrs = dict(n_targets=ens.n_outputs, aggregate_function=1, post_transform=0, tree_roots=roots,
                 nodes_featureids=feat, nodes_modes=numpy_helper.from_array(np.array(modes, np.uint8)),
                 nodes_splits=numpy_helper.from_array(splits.astype(np_dtype)),
                 nodes_truenodeids=tnode, nodes_trueleafs=tleaf, nodes_falsenodeids=fnode, nodes_falseleafs=fleaf,
                 nodes_missing_value_tracks_true=missing, leaf_targetids=leaf_target,
                 leaf_weights=numpy_helper.from_array(np.array(leaf_weight, dtype=np_dtype)))
    if members:
        attrs["membership_values"] = numpy_helper.from_array(np.array(members, dtype=np_dtype))
    return helper.make_node("TreeEnsemble", ["X"], ["scores"], domain="ai.onnx.ml", name="trees", **attrs)


def _tree_ensemble_regressor(clf, ens, dtype):
    """The trees as one ai.onnx.ml TreeEnsembleRegressor (opset 3, the version skl2onnx writes): output
    ``scores`` in ``dtype`` (the operator's own output is float32; float64 thresholds and leaves need opset 3's
    ``*_as_tensor`` attributes). No set-membership splits: a categorical split is a ValueError naming its
    feature."""
    from onnx import TensorProto, helper, numpy_helper

    _no_categorical(clf, ens, "ai.onnx.ml opset 3's TreeEnsembleRegressor", "to_onnx with ml_opset=5 (the default) "
                    "writes them.")
    cols = {k: [] for k in ("treeids", "nodeids", "featureids", "modes", "values", "true", "false", "missing")}
    tgt = {k: [] for k in ("treeids", "nodeids", "ids", "weights")}
    trees = ens.trees or [Tree(left=np.array([-1]), right=np.array([-1]), feature=np.array([-1]),
                               threshold=np.array([np.nan]), missing_left=np.array([False]), categories=[()],
                               value=np.array([0.0]), target=np.array([0]), cover=np.array([np.nan]), round=0)]
    for ti, tree in enumerate(trees):
        for j in range(tree.left.shape[0]):
            leaf = tree.left[j] < 0
            cols["treeids"].append(ti)
            cols["nodeids"].append(j)
            cols["featureids"].append(0 if leaf else int(tree.feature[j]))
            cols["modes"].append("LEAF" if leaf else "BRANCH_LEQ")
            cols["values"].append(0.0 if leaf else float(tree.threshold[j]))
            cols["true"].append(0 if leaf else int(tree.left[j]))
            cols["false"].append(0 if leaf else int(tree.right[j]))
            cols["missing"].append(int(bool(tree.missing_left[j])))
            if leaf:
                tgt["treeids"].append(ti)
                tgt["nodeids"].append(j)
                tgt["ids"].append(int(tree.target[j]))
                tgt["weights"].append(float(tree.value[j]))
    np_dtype = np.dtype(dtype)
    values = np.array(cols["values"])
    attrs = dict(n_targets=ens.n_outputs, aggregate_function="SUM", post_transform="NONE",
                 nodes_treeids=cols["treeids"], nodes_nodeids=cols["nodeids"], nodes_featureids=cols["featureids"],
                 nodes_modes=cols["modes"], nodes_truenodeids=cols["true"], nodes_falsenodeids=cols["false"],
                 nodes_missing_value_tracks_true=cols["missing"], target_treeids=tgt["treeids"],
                 target_nodeids=tgt["nodeids"], target_ids=tgt["ids"])
    if np_dtype == np.float32:
        attrs.update(nodes_values=float32_thresholds(values).tolist(),
                     target_weights=np.array(tgt["weights"], np.float32).tolist())
        return [helper.make_node("TreeEnsembleRegressor", ["X"], ["scores"], domain="ai.onnx.ml", name="trees",
                                 **attrs)]
    attrs.update(nodes_values_as_tensor=numpy_helper.from_array(values),
                 target_weights_as_tensor=numpy_helper.from_array(np.array(tgt["weights"])))
    return [helper.make_node("TreeEnsembleRegressor", ["X"], ["scores32"], domain="ai.onnx.ml", name="trees",
                             **attrs),
            helper.make_node("Cast", ["scores32"], ["scores"], name="scores", to=TensorProto.DOUBLE)]


def _label_tensor(classes):
    """The class labels as an ONNX constant's array and element type (int64, double or string; bool labels as
    int64 0 / 1). Labels ONNX cannot hold as they are (bytes, integers outside int64) are a ValueError."""
    from onnx import TensorProto

    values = np.asarray(classes)
    if values.dtype.kind in "biu" or (values.dtype.kind == "O" and all(
            isinstance(c, (bool, int, np.integer, np.bool_)) for c in classes)):
        big = [c for c in classes if not -2 ** 63 <= int(c) < 2 ** 63]
        if big:
            raise ValueError(f"ONNX's integer labels are int64; classes_ holds {plain(big[0])}. Fit with labels "
                             "in int64's range (or strings) to export the model.")
        return np.array([int(c) for c in classes], dtype=np.int64), TensorProto.INT64
    if values.dtype.kind == "f" or (values.dtype.kind == "O" and all(isinstance(c, float) for c in classes)):
        return np.asarray(values, dtype=np.float64), TensorProto.DOUBLE
    if values.dtype.kind == "U" or (values.dtype.kind == "O" and all(isinstance(c, str) for c in classes)):
        return np.array([str(c) for c in classes], dtype=object), TensorProto.STRING
    if values.dtype.kind == "S" or any(isinstance(c, bytes) for c in classes):
        raise ValueError("ONNX's labels are integers, floats or strings; classes_ holds bytes. Fit with the labels "
                         "decoded (y.astype(str), say) to export the model.")
    raise ValueError(f"ONNX labels are integers, floats or strings; classes_ has dtype {values.dtype}.")


def to_onnx(clf, dtype=np.float32, ml_opset=ONNX_ML_OPSET):
    """The fitted classifier as an ``onnx.ModelProto``: input ``X`` (n, n_features) of ``dtype``
    (float32 or float64), outputs ``label`` (as ``predict``) and ``probabilities`` (as ``predict_proba``).

    One ai.onnx.ml ``TreeEnsemble`` operator (opset 5) holds every round's tree (stumps as one split),
    followed by the few standard operators of the link. Missing values (NaN) go the side the model sends
    them; categorical splits are set-membership tests on the category index (the column as
    ``categories_`` numbers it, unknown categories NaN). For float32 input each threshold t becomes the
    largest float32 <= t, so every float32 value goes the side the model's float64 comparison sends it;
    the scores are then summed in float32, so a margin within float32 rounding of 0 may take the other label.

    ``ml_opset=3`` writes ai.onnx.ml opset 3's ``TreeEnsembleRegressor`` instead (what skl2onnx and older
    runtimes read): the same splits, scores that the operator returns in float32 (then cast to float64 for
    float64 input), and no set-membership splits (a model with categorical splits is a ValueError naming
    the feature). Needs the ``onnx`` extra.
    """
    onnx = _need("onnx", "onnx")
    from onnx import TensorProto, helper, numpy_helper

    np_dtype = np.dtype(dtype)
    if np_dtype not in (np.float32, np.float64):
        raise ValueError(f"dtype must be numpy.float32 or numpy.float64, got {dtype!r}.")
    if isinstance(ml_opset, bool) or not isinstance(ml_opset, int) or ml_opset not in (3, 5):
        raise ValueError(f"ml_opset must be 3 (TreeEnsembleRegressor) or 5 (TreeEnsemble), got {ml_opset!r}.")
    ens = ensemble(clf)
    n_features = int(clf.n_features_in_)
    elem = TensorProto.FLOAT if np_dtype == np.float32 else TensorProto.DOUBLE
    k_classes = clf.classes_.shape[0]
    nodes = ([_tree_ensemble_node(ens, n_features, np_dtype, onnx)] if ml_opset == 5
             else _tree_ensemble_regressor(clf, ens, np_dtype))
    inits = []

    def const(name, value, dt=np_dtype):
        name = f"{name}_{len(inits)}"
        inits.append(numpy_helper.from_array(np.asarray(value, dtype=dt), name))
        return name

    def op(kind, inputs, output, **attrs):
        nodes.append(helper.make_node(kind, inputs, [output], name=output, **attrs))
        return output

    labels, label_elem = _label_tensor(clf.classes_)
    inits.append(numpy_helper.from_array(labels, "classes"))
    if ens.kind == "binary":
        positive = op("Greater", ["scores", const("zero", 0.0)], "positive")
        as_int = op("Cast", [positive], "positive_int", to=TensorProto.INT64)
        idx = op("Reshape", [as_int, const("flat", [-1], np.int64)], "label_index")
        if ens.link == "clip":
            half = op("Mul", [op("Add", ["scores", const("one", 1.0)], "one_plus"), const("half", 0.5)], "half_margin")
            p1 = op("Clip", [half, const("lo", 0.0), const("hi", 1.0)], "p1")
        else:
            scale = 1.0 if ens.link == "logistic" else 2.0 / ens.total if ens.total > 0 else 0.0
            p1 = op("Sigmoid", [op("Mul", ["scores", const("scale", scale)], "scaled")], "p1")
        p0 = op("Sub", [const("one", 1.0), p1], "p0")
        op("Concat", [p0, p1], "probabilities", axis=1)
    else:
        idx = op("ArgMax", ["scores"], "label_index", axis=1, keepdims=0)
        if ens.kind == "samme":
            k = k_classes
            a = k / ((k - 1) * ens.total) if ens.total > 0 else 0.0
            b = 1.0 / (k - 1) if ens.total > 0 else 0.0
            sym = op("Sub", [op("Mul", ["scores", const("a", a)], "scaled"), const("b", b)], "symmetric")
            op("Softmax", [op("Mul", [sym, const("inv_k1", 1.0 / (k - 1))], "softmax_in")], "probabilities", axis=1)
        else:
            if ens.link == "clip":
                half = op("Mul", [op("Add", ["scores", const("one", 1.0)], "one_plus"), const("half", 0.5)], "half")
                q = op("Clip", [half, const("lo", 0.0), const("hi", 1.0)], "q")
            else:
                two = 1.0 if ens.link == "logistic" else 2.0
                q = op("Sigmoid", [op("Mul", ["scores", const("two", two)], "scaled")], "q")
            rows = op("ReduceSum", [q, const("axis1", [1], np.int64)], "rows", keepdims=1)
            some = op("Greater", [rows, const("zero", 0.0)], "some")
            safe = op("Where", [some, rows, const("one", 1.0)], "safe_rows")
            op("Where", [some, op("Div", [q, safe], "normalised"), const("uniform", 1.0 / k_classes)], "probabilities")
    op("Gather", ["classes", idx], "label", axis=0)
    graph = helper.make_graph(
        nodes, f"fastboost_{type(clf).__name__}",
        [helper.make_tensor_value_info("X", elem, [None, n_features])],
        [helper.make_tensor_value_info("label", label_elem, [None]),
         helper.make_tensor_value_info("probabilities", elem, [None, k_classes])], initializer=inits)
    from ._version import __version__

    model = helper.make_model(graph, producer_name="fastboost", producer_version=__version__,
                              opset_imports=[helper.make_opsetid("", ONNX_OPSET),
                                             helper.make_opsetid("ai.onnx.ml", ml_opset)])
    model.ir_version = 10
    names = getattr(clf, "feature_names_in_", None)
    if names is not None:
        helper.set_model_props(model, {"feature_names": ",".join(map(str, names))})
    onnx.checker.check_model(model)
    return model


# ============================================================================ Treelite
def to_treelite(clf):
    """The fitted classifier as a ``treelite.Model`` (float64 thresholds and leaves), built with Treelite's
    model builder; ``treelite.gtil.predict`` runs it and ``tl2cgen`` compiles it to a shared library.

    What ``gtil.predict(model, X, pred_margin=True)`` and ``gtil.predict(model, X)`` give, by kind:

    - two classes (AdaBoost's link): the margin is ``decision_function(X)``; the prediction the probability of
      ``classes_[1]``, ``predict_proba(X)[:, 1]`` (sigmoid with alpha = 2 / sum |alpha_t|; with confidence-rated
      leaves, ``leaf="real"``, alpha = 2; on the logistic loss, ``loss="logistic"``, alpha = 1);
    - SAMME (K > 2 classes in one model): the margin is ``decision_function(X) / (K - 1)``, the prediction
      ``predict_proba(X)`` (Treelite's softmax has no scale of its own);
    - one-vs-rest: the margin is ``decision_function(X)``, the prediction each class's 1 / (1 + exp(-2 F_k))
      (logistic loss: 1 / (1 + exp(-F_k))), which ``predict_proba`` then divides by the row's sum;
    - QuadBoost (its clipped link has no Treelite form): the margin, unchanged by the prediction.

    Categorical splits are Treelite categorical tests on the category index (unknown categories NaN).
    Needs the ``treelite`` extra.
    """
    treelite = _need("treelite", "treelite")
    from treelite.model_builder import Metadata, ModelBuilder, PostProcessorFunc, TreeAnnotation

    ens = ensemble(clf)
    k = clf.classes_.shape[0]
    n_out = ens.n_outputs
    trees = ens.trees or [Tree(left=np.array([-1]), right=np.array([-1]), feature=np.array([-1]),
                               threshold=np.array([np.nan]), missing_left=np.array([False]), categories=[()],
                               value=np.array([0.0]), target=np.array([0]), cover=np.array([np.nan]), round=0)]
    scale = np.ones(n_out)
    if ens.kind == "binary":
        metadata = Metadata(num_feature=int(clf.n_features_in_), task_type="kBinaryClf", average_tree_output=False,
                            num_target=1, num_class=[1], leaf_vector_shape=(1, 1))
        post = (PostProcessorFunc("identity") if ens.link == "clip" else
                PostProcessorFunc("sigmoid", sigmoid_alpha=1.0 if ens.link == "logistic" else
                                  2.0 / ens.total if ens.total > 0 else 1.0))
        base = [0.0]
    else:
        metadata = Metadata(num_feature=int(clf.n_features_in_), task_type="kMultiClf", average_tree_output=False,
                            num_target=1, num_class=[k], leaf_vector_shape=(1, k))
        if ens.kind == "samme":
            post = PostProcessorFunc("softmax")
            # leaves of decision_function / (K - 1): a round adds (K alpha e_c - |alpha|) / ((K - 1) total)
            total = ens.total if ens.total > 0 else 1.0
            scale = np.full(k, k / ((k - 1) * total * (k - 1)))
        elif ens.link == "clip":
            post = PostProcessorFunc("identity_multiclass")
        else:
            post = PostProcessorFunc("multiclass_ova", sigmoid_alpha=1.0 if ens.link == "logistic" else 2.0)
        base = [0.0] * k
    builder = ModelBuilder(threshold_type="float64", leaf_output_type="float64", metadata=metadata,
                           tree_annotation=TreeAnnotation(num_tree=len(trees), target_id=[0] * len(trees),
                                                          class_id=[-1 if n_out > 1 else 0] * len(trees)),
                           postprocessor=post, base_scores=base)
    for tree in trees:
        builder.start_tree()
        shift = 0.0
        if ens.kind == "samme" and ens.total > 0:
            alpha = float(tree.value[tree.left < 0][0])
            shift = -abs(alpha) / ((k - 1) * ens.total * (k - 1))
        for j in range(tree.left.shape[0]):
            builder.start_node(j)
            if tree.left[j] < 0:
                if n_out == 1:
                    builder.leaf(float(tree.value[j]))
                else:
                    out = np.zeros(k)
                    out[tree.target[j]] = tree.value[j] * scale[tree.target[j]]
                    builder.leaf((out + shift).tolist())
            elif tree.categories[j]:
                builder.categorical_test(int(tree.feature[j]), default_left=bool(tree.missing_left[j]),
                                         category_list=list(tree.categories[j]), category_list_right_child=False,
                                         left_child_key=int(tree.left[j]), right_child_key=int(tree.right[j]))
            else:
                builder.numerical_test(int(tree.feature[j]), float(tree.threshold[j]),
                                       default_left=bool(tree.missing_left[j]), opname="<=",
                                       left_child_key=int(tree.left[j]), right_child_key=int(tree.right[j]))
            builder.end_node()
        builder.end_tree()
    del treelite
    return builder.commit()


# ============================================================================ skl2onnx
def register_skl2onnx():
    """Register a converter of every fastboost classifier with skl2onnx, so that ``skl2onnx.to_onnx`` converts
    a scikit-learn ``Pipeline`` ending in one (its outputs ``label`` and ``probabilities``, never through
    ZipMap: fastboost's own parser declares them, so the option ``zipmap`` takes only False).
    The trees are ai.onnx.ml opset 3's ``TreeEnsembleRegressor`` (``to_onnx(clf, ml_opset=3)``; skl2onnx
    writes no later ai.onnx.ml version), so models with categorical splits do not convert this way.
    Needs skl2onnx (the ``onnx`` extra).
    """
    skl2onnx = _need("skl2onnx", "onnx")
    from . import estimators

    for name in ("AdaBoostClassifier", "EBBoostClassifier", "LazyBoostClassifier", "LPBoostClassifier",
                 "QuadBoostClassifier", "RLPBoostClassifier", "RQPBoostClassifier", "SABoostClassifier",
                 "VadaBoostClassifier"):
        skl2onnx.update_registered_converter(getattr(estimators, name), f"Fastboost{name}", _skl2onnx_shape,
                                             _skl2onnx_convert, parser=_skl2onnx_parser(f"Fastboost{name}"),
                                             options={"zipmap": [False]})


def _skl2onnx_parser(alias):
    """skl2onnx's parser of one estimator: its operator with the outputs ``label`` and ``probabilities`` (their
    types set by ``_skl2onnx_shape``). skl2onnx's parser of classifiers would add ZipMap after them."""

    def parse(scope, model, inputs, custom_parsers=None):
        from skl2onnx.common.data_types import FloatTensorType, Int64TensorType

        operator = scope.declare_local_operator(alias, model)
        operator.inputs = inputs
        operator.outputs.append(scope.declare_local_variable("label", Int64TensorType()))
        operator.outputs.append(scope.declare_local_variable("probabilities", FloatTensorType()))
        return operator.outputs

    return parse


def _skl2onnx_shape(operator):
    from skl2onnx.common.data_types import DoubleTensorType, FloatTensorType, Int64TensorType, StringTensorType

    clf = operator.raw_operator
    n = operator.inputs[0].get_first_dimension()
    labels, _ = _label_tensor(clf.classes_)
    kind = {np.dtype(np.int64): Int64TensorType, np.dtype(np.float64): DoubleTensorType}.get(labels.dtype,
                                                                                            StringTensorType)
    operator.outputs[0].type = kind([n])
    proba = DoubleTensorType if isinstance(operator.inputs[0].type, DoubleTensorType) else FloatTensorType
    operator.outputs[1].type = proba([n, clf.classes_.shape[0]])


def _skl2onnx_convert(scope, operator, container):
    """Copy to_onnx's graph into skl2onnx's container, its names made unique in the scope."""
    from onnx import helper, numpy_helper
    from skl2onnx.common.data_types import DoubleTensorType

    clf = operator.raw_operator
    dtype = np.float64 if isinstance(operator.inputs[0].type, DoubleTensorType) else np.float32
    graph = to_onnx(clf, dtype=dtype, ml_opset=3).graph
    names = {"X": operator.inputs[0].full_name, "label": operator.outputs[0].full_name,
             "probabilities": operator.outputs[1].full_name}
    for init in graph.initializer:
        names[init.name] = scope.get_unique_variable_name(init.name)
        value = numpy_helper.to_array(init)
        container.add_initializer(names[init.name], init.data_type, list(value.shape), value.ravel().tolist())
    for node in graph.node:
        outputs = [names.setdefault(o, scope.get_unique_variable_name(o)) for o in node.output]
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        container.add_node(node.op_type, [names[i] for i in node.input], outputs,
                           op_domain=node.domain, op_version=3 if node.domain else None,
                           name=scope.get_unique_operator_name(node.name or node.op_type), **attrs)
