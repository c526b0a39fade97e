"""Compiled prediction of a stump ensemble on raw (unbinned) X."""
import numpy as np
from numba import prange

from .._config import jit, pjit
from .._types import N_CLASS, N_FEATURE, N_LEFT, N_MISSING_LEFT, N_RIGHT, N_THRESHOLD, N_VALUE


@jit
def _stump_output(x, threshold, missing_left, left, right):
    """left or right (branch-free: NaN compares false, so it goes left only with missing_left)."""
    go_left = (np.float64(x) <= threshold) | (np.isnan(x) & (missing_left != 0))
    return right + (left - right) * np.int64(go_left)


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


#: rows that descend one tree together in add_trees
PREDICT_BLOCK = 128


@pjit
def add_trees(X, node_i, node_f, alpha, n_classes, out):
    """out += sum_t alpha[t] * tree_t(X), threads over blocks of rows; trees added in order.

    X       float32/float64[n_samples, n_features], NaN = missing   IN
    node_i  int64[T, max_nodes, N_NODE_I]; node_f float64[T, max_nodes, N_NODE_F]; alpha float64[T]  IN
    out     float64[n_samples, 1] (binary: alpha * leaf value) or [n_samples, K] (K classes:
            alpha added to the score of the class the leaf names)   IN/OUT
    A block of rows goes down a tree level by level (a row at a leaf stays there), so the rows'
    descents are independent work for the CPU to overlap instead of one row's chain of dependent loads.
    """
    n = X.shape[0]
    levels = 0  # max_nodes = 2**(depth + 1) - 1
    while (2 << levels) - 1 < node_i.shape[1]:
        levels += 1
    for b in prange(-(-n // PREDICT_BLOCK)):
        r0 = b * PREDICT_BLOCK
        m = min(n, r0 + PREDICT_BLOCK) - r0
        node = np.empty(m, np.int64)
        for t in range(node_i.shape[0]):
            ni = node_i[t]
            nf = node_f[t]
            node[:] = 0
            for _ in range(levels):
                for r in range(m):
                    nd = node[r]
                    left = ni[nd, N_LEFT]
                    right = ni[nd, N_RIGHT]
                    x = X[r0 + r, max(ni[nd, N_FEATURE], 0)]
                    go_left = (np.float64(x) <= nf[nd, N_THRESHOLD]) | (np.isnan(x) & (ni[nd, N_MISSING_LEFT] != 0))
                    child = right + (left - right) * np.int64(go_left)
                    node[r] = nd if left < 0 else child
            if n_classes == 2:
                for r in range(m):
                    out[r0 + r, 0] += alpha[t] * nf[node[r], N_VALUE]
            else:
                for r in range(m):
                    out[r0 + r, ni[node[r], N_CLASS]] += alpha[t]
