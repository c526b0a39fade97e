"""Compiled prediction on raw (unbinned) X, straight from the fitted records (``rounds_``, ``nodes_``)."""
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


@pjit
def decision_function(X, rounds, out):
    """out[i] = sum_t alpha_t * h_t(X[i]) for the stumps of ``rounds``, threads over rows.

    X       float32 or float64 [n_samples, n_features], NaN = missing  IN
    rounds  ROUND_DTYPE[T]                                             IN
    out     float64[n_samples]                                         OUT
    Rounds are added in order, so the result equals the last staged margin bit for bit.
    """
    n = X.shape[0]
    for i in prange(n):
        acc = 0.0
        for t in range(rounds.shape[0]):
            r = rounds[t]
            acc += r.alpha * stump_output(X[i, r.feature], r.threshold, r.missing_left, r.left, r.right,
                                           r.categorical != 0, rounds[t].cat_left)
        out[i] = acc


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
