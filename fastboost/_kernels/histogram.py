"""Per-feature histograms of the learner's weights, split by class.

The hot kernel of every round. One pass over the rows feeds up to four features at
once (``group_histograms``): the row's weight and class are loaded once for the
group, and the four scatter-adds are independent, so they overlap instead of
queueing behind each other. The threads take whole groups (``n_feature_groups``
balances them over the threads), so every bin of every feature is still summed
over its rows in increasing row order: the histograms are bit-identical to the
one-feature-at-a-time reference (``build_histograms_reference``, kept for the
tests and the benchmark) for any grouping and any thread count.

Measured on the 2-core development machine (1M rows, twonorm codes, 2 threads):
20 features 6.0 -> 4.8 ms, 100 features 32 -> 23 ms. Two things that look
equivalent are much slower and are avoided on purpose: a loop over
``range(start, stop)`` instead of over a whole (sliced) row array, and a
histogram stride known only at run time instead of the literal 2.
"""
import numpy as np
from numba import prange

from .._config import jit, pjit
from .split import best_split_one_feature_q

#: features fed by one pass over the rows
GROUP = 4
#: above this many bins (exact mode) a feature's histogram is 64 KiB or more, and one feature per pass
#: is faster: 1M x 20, 65 536 bins, 2 threads: 13.7 ms a pass against 20.8 ms with groups of 3-4
WIDE_BINS = 4096


@jit
def n_feature_groups(n_features, n_threads, n_bins=256):
    """How many groups of <= GROUP consecutive features the histogram passes use: the fewest, rounded
    up to a multiple of the thread count while features last (2 threads, 20 features: 6 groups of 3-4,
    not 5 groups of 4 that leave one thread idle for a fifth of the pass); one feature a group when the
    histograms have more than WIDE_BINS bins (their scatter-adds would miss the cache). The grouping never
    changes a result, only the speed; the caller passes numba's thread count (``OPT_HIST_GROUPS``)."""
    if n_bins > WIDE_BINS:
        return max(1, n_features)
    ng = max(1, (n_features + GROUP - 1) // GROUP)
    t = max(1, n_threads)
    if ng % t != 0:
        ng = max(1, min(n_features, (ng + t - 1) // t * t))
    return ng


@jit
def group_count(n_groups, n_features):
    """n_groups made valid for n_features: at least ceil(n_features / GROUP), at most n_features (>= 1)."""
    return max(1, (n_features + GROUP - 1) // GROUP, min(n_groups, n_features))


@jit
def group_bounds(j, n_groups, n_features):
    """Features f0:f1 of group j when n_features are cut into n_groups groups as even as can be."""
    return j * n_features // n_groups, (j + 1) * n_features // n_groups


@jit(inline="always")
def row_at(rows, j):
    """The row at position j as an unsigned index: j itself when rows is None, else rows[j]. (A signed index
    loaded from memory makes numba guard every array access against negative wraparound; without the
    guards a gathered pass ran 1.35x faster on the development machine.)"""
    if rows is None:
        return np.uint64(j)
    return np.uint64(rows[j])


@jit
def group_histograms(codes, f0, g, rows, y, u, out):
    """out[k, b, c] = sum of u[i] over the rows i with codes[f0 + k, i] == b and y[i] == c, for k < g <= 4.

    codes  uint8[n_features, n_samples]   IN
    rows   None (every row, in order) or int64[m] (those rows, in the given order)   IN
    y      uint16[n_samples] class index 0/1; u float64[n_samples]   IN
    out    float64[>= g, n_bins, 2]   OUT (out[:g] overwritten)
    ``rows is None`` is resolved when numba compiles, so the all-rows pass has no index load.
    """
    out[:g] = 0.0
    m = codes.shape[1] if rows is None else rows.shape[0]
    if g == 4:
        h0 = out[0].ravel()
        h1 = out[1].ravel()
        h2 = out[2].ravel()
        h3 = out[3].ravel()
        c0 = codes[f0]
        c1 = codes[f0 + 1]
        c2 = codes[f0 + 2]
        c3 = codes[f0 + 3]
        for j in range(m):
            i = row_at(rows, j)
            w = u[i]
            c = y[i]
            h0[2 * c0[i] + c] += w
            h1[2 * c1[i] + c] += w
            h2[2 * c2[i] + c] += w
            h3[2 * c3[i] + c] += w
    elif g == 3:
        h0 = out[0].ravel()
        h1 = out[1].ravel()
        h2 = out[2].ravel()
        c0 = codes[f0]
        c1 = codes[f0 + 1]
        c2 = codes[f0 + 2]
        for j in range(m):
            i = row_at(rows, j)
            w = u[i]
            c = y[i]
            h0[2 * c0[i] + c] += w
            h1[2 * c1[i] + c] += w
            h2[2 * c2[i] + c] += w
    elif g == 2:
        h0 = out[0].ravel()
        h1 = out[1].ravel()
        c0 = codes[f0]
        c1 = codes[f0 + 1]
        for j in range(m):
            i = row_at(rows, j)
            w = u[i]
            c = y[i]
            h0[2 * c0[i] + c] += w
            h1[2 * c1[i] + c] += w
    elif g == 1:
        h0 = out[0].ravel()
        c0 = codes[f0]
        for j in range(m):
            i = row_at(rows, j)
            h0[2 * c0[i] + y[i]] += u[i]


@pjit
def build_histograms(codes, y, u, hist, n_groups):
    """All features' histograms, threads over groups of features (each owns its slice: no races).

    codes  uint8[n_features, n_samples]          IN
    y      uint16[n_samples]   class index 0/1    IN
    u      float64[n_samples] learner weights    IN
    hist   float64[n_features, n_bins, 2]        OUT
    n_groups  n_feature_groups(n_features, threads)   IN

    Each feature's sums run over rows in order, so the result does not depend on
    the number of threads (nor on the grouping).
    """
    d = codes.shape[0]
    ng = group_count(n_groups, d)
    for j in prange(ng):
        f0, f1 = group_bounds(j, ng, d)
        group_histograms(codes, f0, f1 - f0, None, y, u, hist[f0:f1])


@pjit
def histograms_and_splits(codes, y, u, hist, n_groups, n_value_bins, categorical, missing_code, criterion, value,
                          bin_, missing_left):
    """build_histograms and then, in the same parallel loop, each feature's best split
    (``split.best_split_per_feature``): the thread that summed a group's histograms searches them while
    they are in its cache, and a round has one parallel loop (one wait for the slowest thread) less.
    The outputs equal the two separate calls bit for bit.

    value, bin_, missing_left  float64 / int64 / int64 [n_features]  OUT  as best_split_per_feature's
    """
    d = codes.shape[0]
    ng = group_count(n_groups, d)
    for j in prange(ng):
        f0, f1 = group_bounds(j, ng, d)
        group_histograms(codes, f0, f1 - f0, None, y, u, hist[f0:f1])
        for f in range(f0, f1):
            if categorical is None:  # no categorical feature in the fit: the categories' scan is not compiled
                v, b, ml = best_split_one_feature_q(hist[f], hist[f], n_value_bins[f], missing_code, criterion,
                                                    0.0, None, 0)
            else:
                v, b, ml = best_split_one_feature_q(hist[f], hist[f], n_value_bins[f], missing_code, criterion,
                                                    0.0, categorical[f] != 0, 0)
            value[f] = v
            bin_[f] = b
            missing_left[f] = ml


@pjit
def build_histograms_rows(codes, y, u, rows, hist, n_groups):
    """build_histograms over the rows ``rows`` only (int64[m], increasing: weight trimming); every bin is
    summed over those rows in their order, so with every row of positive weight the result is
    build_histograms'."""
    d = codes.shape[0]
    ng = group_count(n_groups, d)
    for j in prange(ng):
        f0, f1 = group_bounds(j, ng, d)
        group_histograms(codes, f0, f1 - f0, rows, y, u, hist[f0:f1])


@jit
def _histogram_one_feature(codes_f, y, u, hist_f):
    """hist_f[b, c] = sum of u[i] over rows with codes_f[i] == b and y[i] == c."""
    hist_f[:] = 0.0
    for i in range(codes_f.shape[0]):
        hist_f[codes_f[i], y[i]] += u[i]


@pjit
def build_histograms_reference(codes, y, u, hist, n_groups=1):
    """build_histograms one feature at a time (the untuned kernel): same arguments, bit-identical result."""
    for f in prange(codes.shape[0]):
        _histogram_one_feature(codes[f], y, u, hist[f])


@jit
def _histogram_one_feature_q(codes_f, y, u, q, hist_f, histq_f):
    """hist_f as _histogram_one_feature, and histq_f[b, c] = sum of q[i] over the same rows, in one pass."""
    hist_f[:] = 0.0
    histq_f[:] = 0.0
    for i in range(codes_f.shape[0]):
        b = codes_f[i]
        c = y[i]
        hist_f[b, c] += u[i]
        histq_f[b, c] += q[i]


@pjit
def build_histograms_q(codes, y, u, q, hist, histq):
    """build_histograms plus a second per-class histogram of q (EBBoost's w**2 / p); threads over features.

    q      float64[n_samples]                    IN
    histq  float64[n_features, n_bins, 2]        OUT
    """
    for f in prange(codes.shape[0]):
        _histogram_one_feature_q(codes[f], y, u, q, hist[f], histq[f])


@pjit
def build_histograms_q_rows(codes, y, u, q, rows, hist, histq):
    """build_histograms_q over the rows ``rows`` only (int64[m], increasing: weight trimming)."""
    for f in prange(codes.shape[0]):
        codes_f = codes[f]
        hist_f = hist[f]
        histq_f = histq[f]
        hist_f[:] = 0.0
        histq_f[:] = 0.0
        for j in range(rows.shape[0]):
            i = rows[j]
            b = codes_f[i]
            c = y[i]
            hist_f[b, c] += u[i]
            histq_f[b, c] += q[i]
