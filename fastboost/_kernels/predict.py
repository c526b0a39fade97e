"""Compiled prediction of a stump ensemble on raw (unbinned) X."""
import numpy as np
from numba import prange

from .._config import jit, pjit


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
