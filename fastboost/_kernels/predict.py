"""Compiled prediction on raw (unbinned) X, straight from the fitted records (``rounds_``, ``nodes_``)."""
from collections import namedtuple

import numpy as np
from numba import prange

from .._config import jit, pjit


@jit
def value_goes_left(x, threshold, missing_left, categorical, cat_left):
    """Whether raw value x goes left: x <= threshold (branch-free: NaN compares false, so it goes left only
    with missing_left); categorical: x is a category index (NaN: missing or unknown) in the set cat_left."""
    if categorical:
        if np.isnan(x):
            return missing_left != 0
        c = np.int64(x)
        if c < 0 or c > 255:  # (not a category index: as unknown)
            return missing_left != 0
        return ((cat_left[c >> 6] >> np.uint64(c & 63)) & np.uint64(1)) != 0
    return (np.float64(x) <= threshold) | (np.isnan(x) & (missing_left != 0))


@jit
def stump_output(x, threshold, missing_left, left, right, categorical, cat_left):
    """left or right output of a stump on raw value x."""
    go_left = value_goes_left(x, threshold, missing_left, categorical, cat_left)
    return right + (left - right) * np.int64(go_left)


#: Per-feature step tables of a stump ensemble (``fastboost._steps`` builds them; K outputs, F numeric and C
#: categorical feature entries): the ensemble's sum on each interval between a feature's sorted distinct
#: thresholds, and on each category.
#:   feature int64[F], column int64[F]: the feature of each numeric entry and the output column it adds to
#:   start int64[F + 1]: entry j's thresholds are thresholds[start[j]:start[j + 1]] (sorted, distinct, not NaN)
#:   thresholds float64[S]
#:   values float64[S + 2 F, K]: entry j's m + 1 interval sums (interval i: the values above exactly i of its
#:       m thresholds), then its sum for NaN, at rows start[j] + 2 j ..
#:   cat_feature int64[C], cat_column int64[C]: the feature and output column of each categorical entry
#:   cat_values float64[C, CAT_SLOTS, K]: the sum on each category index 0 .. 255, then on missing / unknown
StepTables = namedtuple("StepTables", ["feature", "column", "start", "thresholds", "values", "values_lo",
                                       "cat_feature", "cat_column", "cat_values", "cat_values_lo"])
#: rows of a categorical entry's table: the category indices 0 .. 255, then missing and unknown categories
CAT_SLOTS = 257


#: rows that look up their intervals together in add_steps
STEP_BLOCK = 64
#: a feature of at most this many thresholds counts the ones below x (vector compares) instead of a binary search
LINEAR_SEARCH = 48


@pjit
def add_steps(X, tables, out):
    """out[i, k, column] += each table entry's value at X[i]; threads over blocks of rows (per row the numeric
    entries in order, then the categorical ones, so the sums do not depend on the number of threads).

    X       float32 or float64 [n_samples, n_features], NaN = missing  IN
    tables  StepTables                                                IN
    out     float64[n_samples, K, n_columns]                          IN/OUT
    Each table value is a pair (value, value_lo): its sum, exact to about 2**-64, is value + value_lo. A row's sum is
    compensated: each addition's rounding error (Knuth's two-sum) and each value_lo are added apart and the total
    of them once at the end, so the result is the stumps' sum rounded once (up to errors of order 2**-100 of it),
    whatever the order of the features; two ensembles whose stumps sum to the same number get the same value.
    A numeric entry's interval is the number of its thresholds below x (x <= threshold goes left, as
    ``value_goes_left``: an x equal to a threshold lies in the interval below it), counted by compares for few
    thresholds, else by a binary search that a block of rows takes step by step together (independent loads
    instead of one row's chain of dependent ones); NaN has its own value. A categorical entry reads x as a
    category index as ``value_goes_left`` does (NaN, and indices outside 0 .. 255, read the missing slot).
    """
    feature, column, start, thresholds, values = (tables.feature, tables.column, tables.start, tables.thresholds,
                                                  tables.values)
    cat_feature, cat_column, cat_values = tables.cat_feature, tables.cat_column, tables.cat_values
    values_lo, cat_values_lo = tables.values_lo, tables.cat_values_lo
    K = values.shape[1]
    n = X.shape[0]
    for b in prange(-(-n // STEP_BLOCK)):
        r0 = b * STEP_BLOCK
        rows = min(n, r0 + STEP_BLOCK) - r0
        xs = np.empty(STEP_BLOCK, np.float64)
        pos = np.empty(STEP_BLOCK, np.int64)
        err = np.zeros((rows, K, out.shape[2]))  # the block's compensation terms
        for j in range(feature.shape[0]):
            f = feature[j]
            lo = start[j]
            m = start[j + 1] - lo
            t = thresholds[lo:lo + m]  # (indices from 0: loops the compiler vectorises)
            vals = values[lo + 2 * j:lo + 2 * j + m + 2]
            vals_lo = values_lo[lo + 2 * j:lo + 2 * j + m + 2]
            for r in range(rows):
                xs[r] = X[r0 + r, f]
            if m <= LINEAR_SEARCH:
                for r in range(rows):
                    x = xs[r]
                    below = 0
                    for q in range(m):
                        below += np.int64(t[q] < x)
                    pos[r] = below
            else:
                for r in range(rows):
                    pos[r] = 0
                width = m
                while width > 1:
                    half = width >> 1
                    for r in range(rows):
                        pos[r] += half * np.int64(t[pos[r] + half] < xs[r])
                    width -= half
                for r in range(rows):
                    pos[r] += np.int64(t[pos[r]] < xs[r])
            c = column[j]
            for r in range(rows):
                slot = m + 1 if np.isnan(xs[r]) else pos[r]
                for k in range(K):
                    out[r0 + r, k, c] = _two_sum(out[r0 + r, k, c], vals[slot, k], vals_lo[slot, k], err[r, k], c)
        for j in range(cat_feature.shape[0]):
            f = cat_feature[j]
            c = cat_column[j]
            for r in range(rows):
                x = np.float64(X[r0 + r, f])
                slot = CAT_SLOTS - 1
                if x > -1.0 and x < 256.0:  # (truncated toward 0, the indices 0 .. 255; NaN fails both)
                    slot = np.int64(x)
                for k in range(K):
                    out[r0 + r, k, c] = _two_sum(out[r0 + r, k, c], cat_values[j, slot, k], cat_values_lo[j, slot, k],
                                                 err[r, k], c)
        for r in range(rows):
            for k in range(K):
                for c in range(out.shape[2]):
                    out[r0 + r, k, c] += err[r, k, c]


@jit(inline="always")
def _two_sum(a, v, v_lo, err, c):
    """a + v rounded; its rounding error (exact: Knuth's two-sum, no fused or reordered operation) and v_lo are
    added to err[c]."""
    s = a + v
    bv = s - a
    err[c] += ((a - (s - bv)) + (v - bv)) + v_lo
    return s


@pjit
def add_stump(X, rounds, t, margin):
    """margin[i] += alpha_t * h_t(X[i]) for stump t of ``rounds`` (staged prediction).

    X       float32 or float64 [n_samples, n_features]  IN
    rounds  ROUND_DTYPE[T]                              IN
    margin  float64[n_samples]                          IN/OUT
    """
    r = rounds[t]
    feature = r.feature
    threshold = r.threshold
    missing_left = r.missing_left
    left = r.left
    right = r.right
    alpha = r.alpha
    categorical = r.categorical != 0
    cat_left = rounds[t].cat_left.copy()
    for i in prange(X.shape[0]):
        margin[i] += alpha * stump_output(X[i, feature], threshold, missing_left, left, right, categorical, cat_left)


#: rows that descend one tree together in add_trees
PREDICT_BLOCK = 128


@pjit
def add_trees(X, nodes, rounds, values, n_classes, out):
    """out += sum_t alpha_t * tree_t(X), threads over blocks of rows; trees added in order.

    X       float32/float64[n_samples, n_features], NaN = missing   IN
    nodes   NODE_DTYPE[T, max_nodes]; rounds ROUND_DTYPE[T] (the steps alpha)  IN
    values  float64[T, max_nodes, K]: K-vector leaves' values (Model.values), or shape (0, ., .): none  IN
    out     float64[n_samples, 1] (binary: alpha * leaf value) or [n_samples, K] (K classes:
            alpha added to the score of the class the leaf names; K-vector leaves: alpha * the leaf's
            values)   IN/OUT
    A block of rows goes down a tree level by level (a row at a leaf stays there), so the rows'
    descents are independent work for the CPU to overlap instead of one row's chain of dependent loads.
    """
    n = X.shape[0]
    vector = values.shape[0] > 0
    levels = 0  # max_nodes = 2**(depth + 1) - 1
    while (2 << levels) - 1 < nodes.shape[1]:
        levels += 1
    for b in prange(-(-n // PREDICT_BLOCK)):
        r0 = b * PREDICT_BLOCK
        m = min(n, r0 + PREDICT_BLOCK) - r0
        node = np.empty(m, np.int64)
        for t in range(nodes.shape[0]):
            tree = nodes[t]
            alpha = rounds[t].alpha
            node[:] = 0
            for _ in range(levels):
                for r in range(m):
                    nd = tree[node[r]]
                    left = nd.left
                    right = nd.right
                    x = X[r0 + r, max(nd.feature, 0)]
                    go_left = value_goes_left(x, nd.threshold, nd.missing_left, nd.categorical != 0, nd.cat_left)
                    child = right + (left - right) * np.int64(go_left)
                    node[r] = node[r] if left < 0 else child
            if vector:
                for r in range(m):
                    for k in range(n_classes):
                        out[r0 + r, k] += alpha * values[t, node[r], k]
            elif n_classes == 2:
                for r in range(m):
                    out[r0 + r, 0] += alpha * tree[node[r]].value
            else:
                for r in range(m):
                    out[r0 + r, tree[node[r]].class_] += alpha


#: Trees of depth D <= 6 in level order, every leaf at depth D (``fastboost._steps.level_trees`` builds them):
#: internal node p of a tree (0 .. 2**D - 2) has children 2 p + 1 and 2 p + 2; leaf slot l is node 2**D - 1 + l.
#:   feature int64[T, 2**D - 1], threshold float64[T, 2**D - 1], missing_left int64[T, 2**D - 1]: the splits
#:   (x <= threshold goes left, NaN left where missing_left; a leaf above depth D becomes splits that send
#:   every row right, to copies of its value)
#:   keep int64[2**D - 1]: bit l set for the leaf slots a row that goes right at node p can still reach (all but
#:   those under p's left child)
#:   leaf float64[T, 2**D, K]: what each leaf adds to the K outputs (alpha times its value, or alpha to its class)
LevelTrees = namedtuple("LevelTrees", ["feature", "threshold", "missing_left", "keep", "leaf"])


@jit
def lowest_slot(reach):
    """The index of the lowest set bit of reach (not 0): the popcount of the bits below it."""
    v = (reach & -reach) - 1
    v = v - ((v >> 1) & 0x5555555555555555)
    v = (v & 0x3333333333333333) + ((v >> 2) & 0x3333333333333333)
    v = (v + (v >> 4)) & 0x0F0F0F0F0F0F0F0F
    return ((v * 0x0101010101010101) >> 56) & 63


@pjit
def add_level_trees(X, trees, out):
    """out[i, k] += sum_t trees.leaf[t, leaf_t(X[i]), k], the trees summed in round order (then added to out);
    threads over blocks of rows.

    X      float32/float64[n_samples, n_features], NaN = missing  IN
    trees  LevelTrees (numeric splits only)                      IN
    out    float64[n_samples, K]                                 IN/OUT
    A block's rows are copied feature-major; then every split of a tree is tested on all of them (one feature's
    contiguous values against one threshold) and a row that goes right at a node drops the leaves under its
    left child from its set of reachable leaves (QuickScorer): its leaf is the lowest one left. No row follows
    child links, so the loops run without branches on the data.
    """
    feature, threshold, missing_left, keep, leaf = (trees.feature, trees.threshold, trees.missing_left, trees.keep,
                                                    trees.leaf)
    n, d = X.shape
    T, n_internal = feature.shape
    K = leaf.shape[2]
    every = np.int64(-1)
    for b in prange(-(-n // PREDICT_BLOCK)):
        r0 = b * PREDICT_BLOCK
        rows = min(n, r0 + PREDICT_BLOCK) - r0
        xb = np.zeros((d, PREDICT_BLOCK), np.float64)  # (a last, short block's other rows: zeros, never written)
        for r in range(rows):
            for f in range(d):
                xb[f, r] = X[r0 + r, f]
        reach = np.empty(PREDICT_BLOCK, np.int64)
        acc = np.zeros((K, PREDICT_BLOCK), np.float64)
        for t in range(T):
            for r in range(PREDICT_BLOCK):
                reach[r] = every
            for p in range(n_internal):
                xf = xb[feature[t, p]]
                thr = threshold[t, p]
                ml = np.int64(missing_left[t, p] != 0)
                kp = keep[p]
                for r in range(PREDICT_BLOCK):
                    x = xf[r]
                    left = np.int64(x <= thr) | (ml & np.int64(x != x))
                    reach[r] &= kp | -left
            values = leaf[t]
            for k in range(K):
                acc_k = acc[k]
                for r in range(PREDICT_BLOCK):
                    acc_k[r] += values[lowest_slot(reach[r]), k]
        for r in range(rows):
            for k in range(K):
                out[r0 + r, k] += acc[k, r]
