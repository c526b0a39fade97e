"""Stump ensembles as per-feature step functions: the tables ``add_steps`` predicts from.

A stump ensemble (``rounds_`` without trees, or trees of depth 1) is a sum of step functions of single
features: the stumps on feature f add up to one step function whose steps are at f's distinct thresholds.
Its value on each interval between them (x <= threshold goes left), on NaN (each stump's missing side) and,
for a categorical feature, on each category index, summed once here, makes ``decision_function`` one search
per feature and row (O(d log T) a row instead of O(T)). The tables are derived from the fitted records
(never saved), built on first use and kept per estimator while its records stay the same.

A decision value is the stumps' exact sum rounded once (the tables hold each sum as a pair of float64 and the
kernel compensates each addition), so it does not depend on which features the stumps fall on; the round-by-round
(staged) sum rounds at every round and may differ from it in its last bits.

Deeper trees (numeric splits) predict from a level-order copy of their nodes (``LevelTrees``): every leaf at the
full depth, so a row's path is computed, not followed through child links; the trees are added in round order,
as the round-by-round sum.
"""
import threading
import weakref
from collections import namedtuple

import numpy as np

from ._kernels.predict import CAT_SLOTS, LevelTrees, StepTables, add_level_trees, add_steps
from ._types import CAT_WORDS, NO_VALUES

#: The splits of a stump ensemble, one per non-constant stump: feature, threshold, missing_left, categorical
#: (int64 / float64[S]), cat_left uint64[S, CAT_WORDS], and what each side adds to the K outputs: left, right
#: float64[S, K]; constant the K outputs' sum of the constant stumps (and root-only trees); index int64[S] the
#: round of each split.
Splits = namedtuple("Splits", ["feature", "threshold", "missing_left", "categorical", "cat_left", "left", "right",
                               "constant", "index"])


def is_stump_model(est):
    """True for a fitted single model (not one-vs-rest) whose rounds are stumps: no trees, or trees of depth 1."""
    nodes = est.nodes_
    return nodes is None or nodes.shape[1] == 3


def splits(rounds, nodes, values, n_classes):
    """The Splits of a stump model: ``rounds`` (ROUND_DTYPE) alone, or with ``nodes`` (NODE_DTYPE[T, 3]) whose
    leaves hold a value (two classes), name a class (SAMME), or index ``values`` (K-vector leaves: float64[T, 3,
    K]; NO_VALUES otherwise); the outputs are alpha times the leaves', as ``add_stump`` / ``add_trees`` add."""
    alpha = rounds["alpha"].astype(np.float64)
    if nodes is None:
        rec = rounds
        left = (alpha * rounds["left"])[:, None]
        right = (alpha * rounds["right"])[:, None]
    else:
        T = nodes.shape[0]
        K = values.shape[2] if values.shape[0] else (1 if n_classes == 2 else n_classes)
        rows = np.arange(T)

        def leaf(node):
            """alpha_t times the K outputs of leaf ``node[t]`` of each tree t."""
            if values.shape[0]:
                return alpha[:, None] * values[rows, node]
            if n_classes == 2:
                return (alpha * nodes["value"][rows, node])[:, None]
            out = np.zeros((T, K))
            out[rows, nodes["class_"][rows, node]] = alpha
            return out

        rec = nodes[:, 0]
        split = rec["left"] >= 0
        li = np.where(split, rec["left"], 0)
        ri = np.where(split, rec["right"], 0)
        left, right = leaf(li), leaf(ri)
        left[~split] = right[~split]  # a root-only tree: its one leaf, whichever side
    kept = (left != right).any(axis=1)
    total = np.zeros(left.shape[1])
    for t in np.flatnonzero(~kept):  # round order
        total += left[t]
    return Splits(feature=rec["feature"][kept].astype(np.int64), threshold=rec["threshold"][kept].astype(np.float64),
                  missing_left=rec["missing_left"][kept] != 0, categorical=rec["categorical"][kept] != 0,
                  cat_left=np.ascontiguousarray(rec["cat_left"][kept], dtype=np.uint64).reshape(-1, CAT_WORDS),
                  left=np.ascontiguousarray(left[kept]), right=np.ascontiguousarray(right[kept]), constant=total,
                  index=np.flatnonzero(kept).astype(np.int64))


def _numeric_entry(th, missing_left, left, right):
    """(sorted distinct thresholds, values float64[m + 2, K]) of one feature's numeric stumps: the sum on each
    interval i (x above exactly i thresholds), then on NaN.

    Interval 0 sums every stump's left side (a NaN threshold's right: nothing is <= NaN); each next one adds the
    steps right - left of the stumps at the threshold below it, in order, so a step function whose steps are all
    >= 0 (<= 0) stays non-decreasing (non-increasing) after rounding, as the stump-by-stump sum does."""
    ok = ~np.isnan(th)
    u = np.unique(th[ok])
    m = u.shape[0]
    j = np.full(th.shape[0], -1, np.int64)  # a stump goes left on the intervals 0 .. j (NaN threshold: none)
    j[ok] = np.searchsorted(u, th[ok])
    K = left.shape[1]
    left, right = left.astype(_WIDE), right.astype(_WIDE)
    steps = np.zeros((m + 1, K), _WIDE)
    steps[0] = np.where(ok[:, None], left, right).sum(axis=0)
    np.add.at(steps, j[ok] + 1, right[ok] - left[ok])
    out = np.empty((m + 2, K), _WIDE)
    out[:m + 1] = np.cumsum(steps, axis=0)
    out[m + 1] = np.where(missing_left[:, None], left, right).sum(axis=0)
    return u, out


def _category_entry(cat_left, missing_left, left, right):
    """values float64[CAT_SLOTS, K] of one feature's categorical stumps: the sum on each category index, then on
    missing and unknown categories."""
    codes = np.arange(CAT_SLOTS - 1)
    goes_left = ((cat_left[:, codes >> 6] >> (codes & 63).astype(np.uint64)) & np.uint64(1)) != 0
    left, right = left.astype(_WIDE), right.astype(_WIDE)
    out = np.empty((CAT_SLOTS, left.shape[1]), _WIDE)
    out[:-1] = np.where(goes_left[:, :, None], left[:, None, :], right[:, None, :]).sum(axis=0)
    out[-1] = np.where(missing_left[:, None], left, right).sum(axis=0)
    return out


#: the tables' sums are made in extended precision (x86's 64-bit mantissa; where long double is float64 the pair's
#: low part is 0) and kept as a pair of float64: the rounded sum and what rounding left out
_WIDE = np.longdouble


def _pair(wide):
    """(hi, lo) float64 arrays with hi + lo = wide to about 2**-64 relative; monotone: hi is wide rounded."""
    hi = wide.astype(np.float64)
    return np.ascontiguousarray(hi), np.ascontiguousarray((wide - hi).astype(np.float64))


def build(sp, offsets=None, per_feature=False):
    """The StepTables of Splits ``sp``. per_feature: each feature's entry adds to output column = its feature
    (contributions), else all to column 0. offsets: float64[n_features, K] subtracted from each feature's entries
    (its numeric entry; its categorical one when it has no numeric stumps), e.g. its stumps' expectations."""
    K = sp.left.shape[1]
    num = ~sp.categorical
    feats = np.unique(sp.feature[num])
    start = [0]
    thresholds, values = [], []
    for f in feats:
        sel = num & (sp.feature == f)
        u, vals = _numeric_entry(sp.threshold[sel], sp.missing_left[sel], sp.left[sel], sp.right[sel])
        if offsets is not None:
            vals -= offsets[f]
        thresholds.append(u)
        values.append(vals)
        start.append(start[-1] + u.shape[0])
    cat_feats = np.unique(sp.feature[sp.categorical])
    cat_values = np.zeros((cat_feats.shape[0], CAT_SLOTS, K), _WIDE)
    for j, f in enumerate(cat_feats):
        sel = sp.categorical & (sp.feature == f)
        cat_values[j] = _category_entry(sp.cat_left[sel], sp.missing_left[sel], sp.left[sel], sp.right[sel])
        if offsets is not None and f not in feats:
            cat_values[j] -= offsets[f]
    feats = feats.astype(np.int64)
    cat_feats = cat_feats.astype(np.int64)
    values, values_lo = _pair(np.concatenate(values) if values else np.zeros((0, K), _WIDE))
    cat_values, cat_values_lo = _pair(cat_values)
    return StepTables(feature=feats, column=feats.copy() if per_feature else np.zeros_like(feats),
                      start=np.asarray(start, np.int64),
                      thresholds=np.concatenate(thresholds) if thresholds else np.zeros(0),
                      values=values, values_lo=values_lo,
                      cat_feature=cat_feats, cat_column=cat_feats.copy() if per_feature else np.zeros_like(cat_feats),
                      cat_values=cat_values, cat_values_lo=cat_values_lo)


#: the tables of each estimator: {estimator: {kind: (the records they were built from, tables)}}, dropped with it
_CACHE = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def _records(est):
    """What the tables derive from: the record arrays themselves (a fit or a load sets new ones) and the steps
    alpha (``refit_weights`` changes them in place)."""
    return (est.rounds_, est.nodes_, getattr(est, "leaf_values_", None), est.rounds_["alpha"].tobytes())


def _same(a, b):
    return all(x is y for x, y in zip(a[:3], b[:3])) and a[3] == b[3]


def _cached(est, kind, make):
    """``make()`` for fitted ``est``, built on first use and kept while its records stay the same."""
    key = _records(est)
    with _LOCK:
        hit = _CACHE.get(est, {}).get(kind)
    if hit is not None and _same(hit[0], key):
        return hit[1]
    value = make()
    with _LOCK:
        entry = _CACHE.setdefault(est, {})
        entry[kind] = (key, value)
    return value


def tables_of(est):
    """(Splits, StepTables) of a fitted stump model ``est``, built on first use and kept while its records
    stay the same."""
    def make():
        values = getattr(est, "leaf_values_", None)
        sp = splits(est.rounds_, est.nodes_, NO_VALUES if values is None else values, est.classes_.shape[0])
        return sp, build(sp)
    return _cached(est, "steps", make)


def level_slots(nodes):
    """(inner, leaf): the node at each level-order slot of the trees ``nodes`` (NODE_DTYPE[T, 2**(D + 1) - 1]):
    inner int64[T, 2**D - 1] the split at each internal slot (-1: a filler under a shallower leaf, a split that
    sends every row right), leaf int64[T, 2**D] the leaf each slot at the full depth ends in (a shallower leaf
    repeats below). Built level by level for all trees at once."""
    T, m = nodes.shape
    D = int(np.log2(m + 1)) - 1
    inner = np.full((T, 2 ** D - 1), -1, np.int64)
    trees = np.arange(T)[:, None]
    left_of = nodes["left"]  # (the fields gathered one by one: a gather of whole records copies every field)
    right_of = nodes["right"]
    at = np.zeros((T, 1), np.int64)  # the node at each slot of the level
    for level in range(D):
        left = left_of[trees, at]
        split = left >= 0
        inner[:, 2 ** level - 1:2 ** (level + 1) - 1] = np.where(split, at, -1)
        children = np.empty((T, 2 ** level, 2), np.int64)  # (the slots' children side by side: left, right)
        np.copyto(children[:, :, 0], np.where(split, left, at))
        np.copyto(children[:, :, 1], np.where(split, right_of[trees, at], at))
        at = children.reshape(T, 2 ** (level + 1))
    return inner, at


def keep_masks(D):
    """int64[2**D - 1]: for each internal slot p of a level-order tree of depth D, every bit but those of the leaf
    slots under p's left child (a row that goes right at p can no longer reach them). A new array each call (each
    depth's built once)."""
    keep = _KEEP_MASKS.get(D)
    if keep is None:
        keep = _KEEP_MASKS[D] = _keep_masks(D)
    return keep.copy()


_KEEP_MASKS = {}


def _keep_masks(D):
    n_internal = 2 ** D - 1
    keep = np.zeros(n_internal, np.int64)
    for p in range(n_internal):  # the leaf slots under p's left child: a run of 2**(D - depth - 1) from `first`
        depth = int(np.log2(p + 1))
        first = 2 * p + 1
        for _ in range(D - depth - 1):
            first = 2 * first + 1
        gone = sum(1 << s for s in range(first - n_internal, first - n_internal + 2 ** (D - depth - 1)))
        keep[p] = np.array((2 ** 64 - 1) & ~gone, dtype=np.uint64).view(np.int64)
    return keep


def level_trees(nodes, rounds, values, n_classes):
    """The LevelTrees of ``nodes`` (NODE_DTYPE[T, 2**(D + 1) - 1], numeric splits) with the steps of ``rounds``:
    each leaf adds alpha times its value (two classes), alpha to its class (SAMME), or alpha times its row of
    ``values`` (K-vector leaves; NO_VALUES otherwise)."""
    T, m = nodes.shape
    D = int(np.log2(m + 1)) - 1
    n_internal = 2 ** D - 1
    K = values.shape[2] if values.shape[0] else (1 if n_classes == 2 else n_classes)
    inner, at = level_slots(nodes)
    trees = np.arange(T)[:, None]
    slot = (trees, np.maximum(inner, 0))  # (each field gathered alone, as level_slots does)
    split = inner >= 0
    feature = np.where(split, nodes["feature"][slot], 0).astype(np.int64)
    threshold = np.where(split, nodes["threshold"][slot], np.nan)  # (a filler split: nothing is <= NaN: all go right)
    missing_left = np.where(split, nodes["missing_left"][slot], 0).astype(np.int64)
    alpha = rounds["alpha"].astype(np.float64)
    if values.shape[0]:
        leaf = alpha[:, None, None] * values[trees, at]
    elif n_classes == 2:
        leaf = (alpha[:, None] * nodes["value"][trees, at])[:, :, None]
    else:
        leaf = np.zeros((T, n_internal + 1, K))
        leaf[trees, np.arange(n_internal + 1)[None, :], nodes["class_"][trees, at]] = alpha[:, None]
    return LevelTrees(feature=feature, threshold=threshold, missing_left=missing_left, keep=keep_masks(D),
                      leaf=np.ascontiguousarray(leaf, dtype=np.float64))


def trees_of(est):
    """The LevelTrees of fitted ``est`` (trees with numeric splits only), built on first use and kept."""
    def make():
        values = getattr(est, "leaf_values_", None)
        return level_trees(est.nodes_, est.rounds_, NO_VALUES if values is None else values, est.classes_.shape[0])
    return _cached(est, "trees", make)


#: the deepest trees LevelTrees holds (a row's reachable leaves are the bits of one int64)
LEVEL_DEPTH = 6


def numeric_level_trees(nodes):
    """True for trees ``nodes`` (NODE_DTYPE[T, max_nodes], or None) of depth 2 .. LEVEL_DEPTH whose splits are
    all numeric: the trees the level-order passes take."""
    return (nodes is not None and 3 < nodes.shape[1] < 2 ** (LEVEL_DEPTH + 2) - 1
            and not np.any((nodes["categorical"] != 0) & (nodes["left"] >= 0)))


def has_level_trees(est):
    """True for a fitted model of trees of depth 2 .. LEVEL_DEPTH whose splits are all numeric."""
    return numeric_level_trees(est.nodes_)


def tree_decision(est, X, out, t=None):
    """out (float64[n, K]) += the trees of fitted ``est`` (``has_level_trees``) at checked X, summed in round
    order (round t alone when given)."""
    if X.shape[0] and est.nodes_.shape[0]:
        if t is None:
            add_level_trees(X, trees_of(est), out)
        else:
            each_tree(trees_of(est), X, t, out)


def each_tree(trees, X, t, out):
    """out (float64[n, K]) += tree t of LevelTrees ``trees`` at checked X."""
    if X.shape[0]:
        add_level_trees(X, LevelTrees(*(a[t:t + 1] if a.ndim > 1 else a for a in trees)), out)


def decision(est, X):
    """The raw scores float64[n, K] of fitted stump model ``est`` on checked X (K = 1 for two classes), summed
    from its step tables: per row the constant stumps' sum, then each feature's value in feature order.
    Runs on the threads of the caller's ``n_threads``."""
    sp, tables = tables_of(est)
    out = np.empty((X.shape[0], sp.left.shape[1], 1))
    out[:] = sp.constant[None, :, None]
    if X.shape[0]:
        add_steps(X, tables, out)
    return out[:, :, 0]


def contributions(sp, X, expected):
    """Each feature's contribution float64[n, K, n_features + 1] at checked X to the sum of the splits of Splits
    ``sp``: its step function minus ``expected`` (float64[n_features, K], e.g. its stumps' expectation over the
    cover); the last column is left 0 for the caller. Runs on the caller's threads."""
    tables = build(sp, offsets=expected, per_feature=True)
    out = np.zeros((X.shape[0], sp.left.shape[1], X.shape[1] + 1))
    if X.shape[0]:
        add_steps(X, tables, out)
    return out
