"""Compiled prediction of a stump ensemble on raw (unbinned) X."""
import numpy as np
from numba import prange

from .._config import jit, pjit
from .._types import N_CLASS, N_FEATURE, N_LEFT, N_MISSING_LEFT, N_RIGHT, N_THRESHOLD, N_VALUE


@jit
def _stump_output(x, threshold, missing_left, left, right):
    if np.isnan(x):
        go_left = missing_left
    else:
        go_left = np.float64(x) <= threshold
    return left if go_left else right


@pjit
def decision_function(X, feature, threshold, missing_left, left, right, alpha, out):
    """out[i] = sum_t alpha[t] * h_t(X[i]), threads over rows.

    X             float32 or float64 [n_samples, n_features], NaN = missing  IN
    feature       int64[T]; threshold float64[T]; missing_left, left, right int64[T]; alpha float64[T]  IN
    out           float64[n_samples]                                          OUT
    Rounds are added in order, so the result equals the last staged margin bit for bit.
    """
    n = X.shape[0]
    for i in prange(n):
        acc = 0.0
        for t in range(feature.shape[0]):
            acc += alpha[t] * _stump_output(X[i, feature[t]], threshold[t], missing_left[t], left[t], right[t])
        out[i] = acc


@pjit
def add_stump(X, feature, threshold, missing_left, left, right, alpha, margin):
    """margin[i] += alpha * h(X[i]) for one stump (staged prediction, validation margins).

    X       float32 or float64 [n_samples, n_features]  IN
    margin  float64[n_samples]                          IN/OUT
    """
    for i in prange(X.shape[0]):
        margin[i] += alpha * _stump_output(X[i, feature], threshold, missing_left, left, right)


@jit
def _tree_leaf(x_row, node_i, node_f):
    """Leaf node of one tree reached by a raw row (left: x <= threshold; NaN: the node's missing side)."""
    node = 0
    while node_i[node, N_LEFT] >= 0:
        x = x_row[node_i[node, N_FEATURE]]
        if np.isnan(x):
            go_left = node_i[node, N_MISSING_LEFT] != 0
        else:
            go_left = np.float64(x) <= node_f[node, N_THRESHOLD]
        node = node_i[node, N_LEFT] if go_left else node_i[node, N_RIGHT]
    return node


@pjit
def add_trees(X, node_i, node_f, alpha, n_classes, out):
    """out += sum_t alpha[t] * tree_t(X), threads over rows; trees added in order.

    X       float32/float64[n_samples, n_features], NaN = missing   IN
    node_i  int64[T, max_nodes, N_NODE_I]; node_f float64[T, max_nodes, N_NODE_F]; alpha float64[T]  IN
    out     float64[n_samples, 1] (binary: alpha * leaf value) or [n_samples, K] (K classes:
            alpha added to the score of the class the leaf names)   IN/OUT
    """
    for i in prange(X.shape[0]):
        for t in range(node_i.shape[0]):
            leaf = _tree_leaf(X[i], node_i[t], node_f[t])
            if n_classes == 2:
                out[i, 0] += alpha[t] * node_f[t, leaf, N_VALUE]
            else:
                out[i, node_i[t, leaf, N_CLASS]] += alpha[t]
