"""Per-feature contributions (SHAP values) of a fitted model's margin, and each node's cover.

The contributions of feature j at x are the SHAP values of the raw margin F(x) = sum_t alpha_t h_t(x) for
the path-dependent value function v(S) = E[F(x) | x_S]: where a split's feature is in S, x's own branch;
otherwise both branches, weighted by the training rows' summed sample weight that reached each (the node's
*cover*, recorded at fit time as ``cover_``). F is linear in the rounds, so the values are sum_t alpha_t
times each round's hypothesis's values: a stump's are alpha (h(x) - E_cover[h]) on its feature, a tree's
come from path-dependent TreeSHAP. docs/explain.md has the definition and the reasons for it.
"""
import math

import numba
import numpy as np
from sklearn.utils.validation import check_is_fitted

from . import _steps, dataset
from ._config import n_threads, split_on_threads
from ._kernels.explain import (
    LeafTables,
    LevelCover,
    build_leaf_tables,
    level_tree_cover,
    stump_cover,
    tree_contrib,
    tree_contrib_tables,
    tree_cover,
    tree_expectations,
)

#: the most memory the leaf tables of predict_contrib may take (deeper trees use TreeSHAP's path walk instead)
TABLE_BYTES = 256 * 2 ** 20

NO_COVER = ("{what} needs each node's cover (the summed sample weight of the training rows that "
             "reached it), recorded by fit; this model has none: it comes from a model file of format version 4 or "
             "older. Fit the model again with this version of fastboost (fastboost.{name}(**model.get_params())"
             ".fit(X, y)) to get a model with cover.")
_NO_COVER_DASK = ("{what} needs each node's cover (the summed sample weight of the training rows "
                  "that reached it), which this Dask model lacks (it was fitted by a fastboost that did not record "
                  "it). Fit it again, or fit the single-machine fastboost.{local}(**model.get_params()).")


#: rows per block of the cover pass (each block's sums are added in order after the pass)
COVER_BLOCK = 4096
#: about how many rows (times trees, or split features) one share of the cover pass covers: a few hundred
#: microseconds of work, against a few microseconds to hand a share to a thread (``split_on_threads``)
COVER_SHARE_ROWS = 1 << 17
#: the most memory the cover pass's per-block sums may take (fewer, larger blocks beyond)
COVER_BYTES = 64 * 2 ** 20


def cover_blocks(n, n_rounds, width):
    """(number of blocks, rows per block) of the cover pass over n rows: ``COVER_BLOCK`` rows a block, fewer
    larger blocks when the per-block sums would pass ``COVER_BYTES``. They depend on the data and the model
    only, so the sums do not depend on the number of threads."""
    n_blocks = max(1, min(-(-n // COVER_BLOCK), COVER_BYTES // (8 * max(n_rounds, 1) * width)))
    return n_blocks, max(1, -(-n // n_blocks))


def level_cover(nodes):
    """The LevelCover of trees ``nodes`` (numeric splits, ``_steps.numeric_level_trees``)."""
    T, m = nodes.shape
    inner, leaf = _steps.level_slots(nodes)
    at = (np.arange(T)[:, None], np.maximum(inner, 0))
    split = inner >= 0
    return LevelCover(feature=np.where(split, nodes["feature"][at], 0).astype(np.int64),
                      bin=np.where(split, nodes["bin"][at], -1).astype(np.int64),
                      missing_left=(split & (nodes["missing_left"][at] != 0)).astype(np.int64),
                      keep=_steps.keep_masks(int(np.log2(m + 1)) - 1), leaf=leaf,
                      left=np.ascontiguousarray(nodes["left"], dtype=np.int64),
                      right=np.ascontiguousarray(nodes["right"], dtype=np.int64))


def cover_parts(rounds, nodes, codes, missing_code, sw):
    """Each block's cover of one model's nodes on binned rows: float64[n_blocks, T, max_nodes] for trees, to be
    added in block order (``ordered_sum``); float64[1, T, 2] (left, right) for stumps.

    rounds, nodes: a fitted single model's ``rounds_`` and ``nodes_`` (None for stumps); codes: the rows' bin
    codes, feature-major, as the fit read them; missing_code: their missing code; sw: the rows'
    (class-)weighted sample weights. Runs on the threads of the caller's ``n_threads``."""
    sw = np.ascontiguousarray(sw, dtype=np.float64)
    T = rounds.shape[0]
    if nodes is None:  # stumps: one part, from each split feature's histogram of sw
        parts = np.zeros((1, T, 2))
        _stump_sides(rounds, codes, missing_code, sw, parts[0])
        return parts
    if nodes.shape[1] == 3:  # trees of depth 1 (confidence-rated stumps): as stumps, not a walk per tree and row
        return _depth_one_cover(nodes, codes, missing_code, sw)
    threads = numba.get_num_threads()
    n_blocks, block = cover_blocks(codes.shape[1], T, nodes.shape[1])
    share = max(1, COVER_SHARE_ROWS // block)  # (block, tree) pairs a share
    parts = np.zeros((n_blocks, T, nodes.shape[1]))
    if T and codes.shape[1]:
        if _steps.numeric_level_trees(nodes):
            trees = level_cover(nodes)
            byte = trees.leaf.shape[1] <= 8  # (depth <= 3: a row's reachable leaf slots in one byte)
            unit = byte and bool(np.all(sw == 1.0))  # (the rows counted, not summed)
            lanes = np.empty(0, np.uint8 if byte else np.int64)
            split_on_threads(lambda j0, j1: level_tree_cover(codes, trees, missing_code, sw, block, parts, j0, j1,
                                                             np.empty((4, 256), np.int64) if unit else None, lanes),
                             n_blocks * T, threads, share)
        else:
            split_on_threads(lambda j0, j1: tree_cover(codes, nodes, missing_code, sw, block, parts, j0, j1),
                             n_blocks * T, threads, share)
    return parts


def _stump_sides(splits, codes, missing_code, sw, out):
    """out[t] = (left, right): the summed sw of the rows that split t (ROUND_DTYPE or NODE_DTYPE records; feature
    -1: none, left as it is) sends left and right; one histogram of sw a split feature (``stump_cover``)."""
    if not (splits.shape[0] and codes.shape[1]):
        return
    used = np.zeros(codes.shape[0], dtype=bool)
    used[splits["feature"][splits["feature"] >= 0]] = True
    feats = np.flatnonzero(used)
    split_on_threads(lambda j0, j1: stump_cover(codes, splits, feats, missing_code, sw, out, j0, j1),
                     feats.size, numba.get_num_threads(), max(1, COVER_SHARE_ROWS // codes.shape[1]))


def _depth_one_cover(nodes, codes, missing_code, sw):
    """cover_parts of trees of depth 1 (NODE_DTYPE[T, 3]): one part, float64[1, T, 3]. A root that splits gets its
    children's sides from ``_stump_sides`` and their sum; a root that is a leaf, the sum of sw."""
    T = nodes.shape[0]
    roots = np.array(nodes[:, 0], copy=True)  # (a copy even of one tree: the model's nodes stay as they are)
    split = roots["left"] >= 0
    roots["feature"][~split] = -1
    sides = np.zeros((T, 2))
    _stump_sides(roots, codes, missing_code, sw, sides)
    parts = np.zeros((1, T, 3))
    t = np.flatnonzero(split)
    parts[0, t, roots["left"][t]] = sides[t, 0]
    parts[0, t, roots["right"][t]] = sides[t, 1]
    parts[0, t, 0] = sides[t, 0] + sides[t, 1]
    parts[0, ~split, 0] = sw.sum()
    return parts


def ordered_sum(parts):
    """parts[0] + parts[1] + ... added in this order (the reduction that makes the cover thread-count free)."""
    out = np.array(parts[0], dtype=np.float64, copy=True)
    for b in range(1, len(parts)):
        out += parts[b]
    return out


def fit_cover(est, codes, missing_code, sample_weight):
    """Each node's cover on the training rows: float64[T, 2] (stumps: left, right) or [T, max_nodes] (trees).

    est: a fitted single model (not one-vs-rest); codes: the training rows' bin codes (a ``Dataset``'s or the
    in-memory fit's, the same for the same rows); sample_weight: the rows' (class-)weighted sample weights.
    Runs on the threads of the caller's ``n_threads`` block (the fit's). Weights near the largest float are scaled
    by a power of two first (``cover_scale``): only the cover's ratios are read."""
    scale = cover_scale(float(sample_weight.max()) if sample_weight.shape[0] else 0.0)
    if scale != 1.0:
        sample_weight = sample_weight * scale
    return ordered_sum(cover_parts(est.rounds_, est.nodes_, codes, missing_code, sample_weight))


#: weights up to this are summed into the cover as they are (their sums stay far from overflowing for any
#: number of rows); a larger largest weight scales them all by a power of two (``cover_scale``)
COVER_WEIGHT_LIMIT = 2.0 ** 900


def cover_scale(sw_max):
    """The power of two the cover pass multiplies the weights by: 1 up to ``COVER_WEIGHT_LIMIT``, else the one
    that brings the largest weight ``sw_max`` into (1/2, 1] (exact: the cover's ratios are unchanged). Fits on one
    machine and on Dask scale alike, from the largest training weight alone."""
    return 1.0 if sw_max <= COVER_WEIGHT_LIMIT else float(2.0 ** -np.ceil(np.log2(sw_max)))


def _cover_of(model, name):
    cover = getattr(model, "cover_", None)
    if cover is None:
        raise ValueError(NO_COVER.format(name=name, what=f"{name}.predict_contrib"))
    return cover


def vector_leaf_model(est):
    """How an error names a model with K-vector leaves: its estimator, the options that made it and the algorithm
    (AdaBoost.MH with multiclass='mh', else SAMME.R)."""
    multiclass = est.get_params().get("multiclass")
    kind = "AdaBoost.MH" if multiclass == "mh" else "SAMME.R"
    return (f"{type(est).__name__}(leaf='real', multiclass={multiclass!r}) of {est.classes_.shape[0]} classes "
            f"({kind})")


def check_cover(est, what=None):
    """ValueError saying how to get a model with cover when ``est`` (or a one-vs-rest part) has none; ``what``:
    what needs it (default ``{name}.predict_contrib``)."""
    name = type(est).__name__
    what = what or f"{name}.predict_contrib"
    local = getattr(est, "_local_class", None)
    models = getattr(est, "estimators_", None) or [est]
    if any(getattr(m, "cover_", None) is None for m in models):
        if local is not None:
            raise ValueError(_NO_COVER_DASK.format(name=name, what=what, local=local.__name__))
        raise ValueError(NO_COVER.format(name=name, what=what))


def stump_means(rounds, cover):
    """E_cover[h_t] of each stump: its outputs averaged over the cover of its sides."""
    total = cover[:, 0] + cover[:, 1]
    safe = np.where(total > 0, total, 1.0)
    mean = (cover[:, 0] * rounds["left"] + cover[:, 1] * rounds["right"]) / safe
    return np.where(total > 0, mean, 0.5 * (rounds["left"] + rounds["right"]))


def raw_contrib(model, X, name):
    """SHAP values of one model's raw scores at checked X: float64[n, n_outputs, n_features + 1], the last
    column the expected value (n_outputs: 1 for two classes, K for SAMME's class sums)."""
    cover = _cover_of(model, name)
    n, d = X.shape
    rounds = model.rounds_
    nodes = model.nodes_
    k = model.classes_.shape[0]
    with n_threads(model.n_jobs):
        if _steps.is_stump_model(model):  # each feature's step function minus its expectation
            out = stump_shap(X, _steps.tables_of(model)[0], nodes, cover)
            if nodes is None:
                # (fsum: correctly rounded, so the same on every machine; BLAS's dot may differ in its last bit)
                out[:, 0, d] = math.fsum(rounds["alpha"] * stump_means(rounds, cover)) if rounds.shape[0] else 0.0
                return out
        else:
            n_out = 1 if k == 2 else k
            out = np.zeros((n, n_out, d + 1), dtype=np.float64)
            if nodes.shape[0]:
                tree_shap(X, nodes, rounds, cover, k, out)
        expected = np.zeros(out.shape[1], dtype=np.float64)
        if nodes.shape[0]:
            tree_expectations(nodes, rounds, cover, k, expected)
        out[:, :, d] = expected
    return out


def stump_shap(X, sp, nodes, cover):
    """The SHAP values float64[n, K, n_features + 1] of the stumps ``sp`` (``_steps.Splits``) at checked X: each
    feature's step function minus its stumps' expectations (``stump_expectations``); the last column left 0."""
    expected = stump_expectations(sp, nodes, cover)
    per_feature = np.zeros((X.shape[1], sp.left.shape[1]))
    for s in range(sp.feature.shape[0]):  # round order
        per_feature[sp.feature[s]] += expected[s]
    return _steps.contributions(sp, X, per_feature)


def stump_expectations(sp, nodes, cover):
    """E_cover of each split of Splits ``sp`` (float64[S, K]): its two sides' outputs weighted by their share
    of its cover (evenly where no training row reached it). nodes: the depth-1 trees (None: stumps, whose
    cover is [T, 2], left and right)."""
    t = sp.index
    if nodes is None:
        c_left, c_right = cover[t, 0], cover[t, 1]
    else:
        c_left, c_right = cover[t, nodes["left"][t, 0]], cover[t, nodes["right"][t, 0]]
    total = c_left + c_right
    share = np.where(total > 0, c_left / np.where(total > 0, total, 1.0), 0.5)[:, None]
    return share * sp.left + (1.0 - share) * sp.right


def leaf_tables(nodes, rounds, cover, n_classes):
    """Each leaf's path and SHAP values per pattern (a ``LeafTables``), for ``tree_contrib_tables``."""
    T, m = nodes.shape
    depth = int(np.log2(m + 1)) - 1
    L = (m + 1) // 2
    shape = (T, L, depth)
    tables = LeafTables(leaf_node=np.zeros((T, L), np.int64), path=np.zeros(shape, np.int64),
                        side=np.zeros(shape, np.int64), slot=np.zeros(shape, np.int64),
                        slot_feature=np.zeros(shape, np.int64), n_path=np.zeros((T, L), np.int64),
                        n_slots=np.zeros((T, L), np.int64), n_leaves=np.zeros(T, np.int64),
                        target=np.zeros((T, L), np.int64), table=np.zeros((T, L, 2 ** depth, depth)))
    build_leaf_tables(nodes, rounds, cover, n_classes, tables)
    return tables


def tree_shap(X, nodes, rounds, cover, n_classes, out):
    """out += the trees' SHAP values at X: by leaf tables when they fit in TABLE_BYTES, else TreeSHAP's walk."""
    T, m = nodes.shape
    depth = int(np.log2(m + 1)) - 1
    if T * ((m + 1) // 2) * 2 ** depth * depth * 8 <= TABLE_BYTES:
        tree_contrib_tables(X, nodes, leaf_tables(nodes, rounds, cover, n_classes), out)
    else:
        tree_contrib(X, nodes, rounds, cover, n_classes, out)


def predict_contrib(est, X):
    """Per-feature contributions to ``est.decision_function(X)`` and the expected value (last column).

    Two classes: float64[n, n_features + 1]; SAMME and one-vs-rest: [n, n_classes, n_features + 1]. Each
    row (each class) sums to decision_function(X). X may be a ``fastboost.Dataset`` or parquet files."""
    check_is_fitted(est)
    if getattr(est, "leaf_values_", None) is not None:
        raise ValueError(f"{vector_leaf_model(est)} has K-vector leaves, for which predict_contrib is not "
                         "available; fit with multiclass='ovr' (one model per class) for contributions.")
    check_cover(est)
    if dataset.is_batched(X):  # a Dataset or parquet files, read batch by batch
        return dataset.predict(est, X, "predict_contrib")
    return contrib(est, est._check_predict_X(X))


def contrib(est, Xk):
    """``predict_contrib`` on checked X (the prediction kernels' rows)."""
    name = type(est).__name__
    if hasattr(est, "estimators_"):
        return np.concatenate([raw_contrib(m, Xk, name) for m in est.estimators_], axis=1)
    out = raw_contrib(est, Xk, name)
    if out.shape[1] == 1:
        return out[:, 0, :]
    # SAMME: decision_function = (K raw - total) / ((K - 1) total), linear in the class sums raw
    k = out.shape[1]
    total = est._alpha_total()
    if not total > 0.0:
        return np.zeros_like(out)
    out *= k / ((k - 1) * total)
    out[:, :, -1] -= 1.0 / (k - 1)
    return out
