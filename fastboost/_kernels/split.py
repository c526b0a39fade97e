"""Best decision stump from histograms.

A stump on feature f at bin k sends non-missing codes ``<= k`` left and the
missing code to the side given by ``missing_left``; each side outputs -1 or +1.
Candidates need positive learner weight on both sides. For each threshold the
missing-left option is tried before missing-right; among equal criterion values
the lowest feature, then the lowest bin, then missing-left wins. "Equal" allows
for rounding: the same partition reached through different bins or features
sums its weights in a different order, so a later candidate must beat the best
by more than ``TIE_RTOL`` times the total weight.
"""
import numpy as np
from numba import prange

from .._config import jit, pjit
from .._types import CRITERION_GINI

TIE_RTOL = 1e-12


@jit
def stump_criterion(l0, l1, r0, r1, criterion):
    """Criterion of a split with class weights (l0, l1) left and (r0, r1) right; lower is better.

    error: weighted misclassification with each side predicting its heavier class;
    gini: weighted Gini impurity 2*l0*l1/(l0+l1) + 2*r0*r1/(r0+r1).
    """
    if criterion == CRITERION_GINI:
        return 2.0 * l0 * l1 / (l0 + l1) + 2.0 * r0 * r1 / (r0 + r1)
    return min(l0, l1) + min(r0, r1)


@jit
def leaf_value(c0, c1):
    """Output of a side: +1 if class 1 is strictly heavier, else -1 (ties go to class 0, as argmax)."""
    return 1 if c1 > c0 else -1


@jit
def best_split_one_feature(hist_f, n_value_bins, missing_code, criterion):
    """Best (criterion, bin, missing_left) of one feature; criterion is inf when none is valid.

    hist_f        float64[n_bins, 2]   IN
    n_value_bins  number of non-missing bins of the feature
    """
    m0 = hist_f[missing_code, 0]
    m1 = hist_f[missing_code, 1]
    t0 = 0.0
    t1 = 0.0
    for b in range(n_value_bins):
        t0 += hist_f[b, 0]
        t1 += hist_f[b, 1]
    tol = TIE_RTOL * (t0 + t1 + m0 + m1)
    best = np.inf
    best_bin = -1
    best_ml = 1
    l0 = 0.0
    l1 = 0.0
    for k in range(n_value_bins):
        l0 += hist_f[k, 0]
        l1 += hist_f[k, 1]
        r0 = t0 - l0
        r1 = t1 - l1
        if k < n_value_bins - 1:  # missing left (for k == last, everything would go left)
            a0 = l0 + m0
            a1 = l1 + m1
            if a0 + a1 > 0.0 and r0 + r1 > 0.0:
                v = stump_criterion(a0, a1, r0, r1, criterion)
                if v < best - tol:
                    best = v
                    best_bin = k
                    best_ml = 1
        b0 = r0 + m0
        b1 = r1 + m1
        if l0 + l1 > 0.0 and b0 + b1 > 0.0:  # missing right
            v = stump_criterion(l0, l1, b0, b1, criterion)
            if v < best - tol:
                best = v
                best_bin = k
                best_ml = 0
    if best_bin >= 0 and m0 + m1 == 0.0:
        # no weight on missing values: send them (at prediction) to the heavier side
        lw = 0.0
        for b in range(best_bin + 1):
            lw += hist_f[b, 0] + hist_f[b, 1]
        best_ml = 1 if lw >= t0 + t1 - lw else 0
    return best, best_bin, best_ml


@pjit
def best_split_per_feature(hist, n_value_bins, missing_code, criterion, value, bin_, missing_left):
    """Per-feature best stumps, threads over features.

    hist          float64[n_features, n_bins, 2]  IN
    n_value_bins  int64[n_features]               IN
    value         float64[n_features]             OUT criterion (inf: no valid split)
    bin_          int64[n_features]               OUT
    missing_left  int64[n_features]               OUT
    """
    for f in prange(hist.shape[0]):
        v, b, ml = best_split_one_feature(hist[f], n_value_bins[f], missing_code, criterion)
        value[f] = v
        bin_[f] = b
        missing_left[f] = ml


@jit
def side_weights(hist_f, k, missing_left, missing_code):
    """Class weights (l0, l1, r0, r1) of the stump (k, missing_left) on one feature's histogram."""
    l0 = 0.0
    l1 = 0.0
    r0 = 0.0
    r1 = 0.0
    for b in range(missing_code):
        if b <= k:
            l0 += hist_f[b, 0]
            l1 += hist_f[b, 1]
        else:
            r0 += hist_f[b, 0]
            r1 += hist_f[b, 1]
    if missing_left:
        l0 += hist_f[missing_code, 0]
        l1 += hist_f[missing_code, 1]
    else:
        r0 += hist_f[missing_code, 0]
        r1 += hist_f[missing_code, 1]
    return l0, l1, r0, r1


@jit
def best_feature(value, total):
    """Index of the smallest criterion (lowest index among ties, see TIE_RTOL); -1 if none is finite.

    total: the learner weights' sum, the scale of the criterion values.
    """
    tol = TIE_RTOL * total
    best = np.inf
    best_f = -1
    for f in range(value.shape[0]):
        if value[f] < best - tol:
            best = value[f]
            best_f = f
    return best_f
