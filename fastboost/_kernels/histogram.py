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


def n_feature_groups(n_features, n_threads, n_bins=256):
    """How many groups of <= GROUP consecutive features the histogram passes use: the fewest, rounded
    up to a multiple of the thread count while features last (2 threads, 20 features: 6 groups of 3-4,
    not 5 groups of 4 that leave one thread idle for a fifth of the pass); one feature a group when the
    histograms have more than WIDE_BINS bins (their scatter-adds would miss the cache). The grouping never
    changes a result, only the speed; the caller passes numba's thread count (``OPT_HIST_GROUPS``). Plain Python:
    only Python calls it, once a fit."""
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


@jit
def row_at(rows, j):
    """The row at position j as an unsigned index: j itself when rows is None, else rows[j]. (A signed index
    loaded from memory makes numba guard every array access against negative wraparound; without the
    guards a gathered pass ran 1.35x faster on the development machine.)"""
    if rows is None:
        return np.uint64(j)
    return np.uint64(rows[j])


@jit
def sub_group_count(n_groups, n_features, k):
    """The groups of a pass over k of the n_features features (the round's drawn features): n_groups scaled
    down in proportion (n_groups as it is for every feature), made valid for k."""
    if k == n_features:
        return group_count(n_groups, k)
    return group_count(max(1, (n_groups * k + n_features - 1) // n_features), k)


@jit
def _slot(fidx, k, by_feature):
    return fidx[k] if by_feature else k


@jit
def group_histograms(codes, fidx, rows, y, u, out, by_feature):
    """out[o_k, b, c] = sum of u[i] over the rows i with codes[fidx[k], i] == b and y[i] == c, for
    k < g = len(fidx) <= 4; o_k = fidx[k] (by_feature) or k.

    codes  uint8[n_features, n_samples]   IN
    fidx   int64[g]  IN  the features (those of a group: consecutive, or the round's drawn ones)
    rows   None (every row, in order) or int64[m] (those rows, in the given order)   IN
    y      uint16[n_samples] class index 0/1; u float64[n_samples]   IN
    out    float64[>= g, n_bins, 2]   OUT (those g slots overwritten)
    ``rows is None`` is resolved when numba compiles, so the all-rows pass has no index load.
    """
    _group_rows(codes, fidx, rows, y, u, out, by_feature, 2)


@jit
def group_tree_histograms(codes, fidx, rows, y, u, out, by_feature):
    """group_histograms into the binary tree histograms' three fields a bin (class 0, class 1, the row count), the
    count left 0 (``tree._grouped_case``: the fits that do not count rows).

    out    float64[>= g, n_bins, 3]   OUT (those g slots overwritten)
    """
    _group_rows(codes, fidx, rows, y, u, out, by_feature, 3)


@jit(inline="always")
def _group_rows(codes, fidx, rows, y, u, out, by_feature, stride):
    """group_histograms with ``stride`` fields a bin (a constant at each call: the loops index with a literal
    stride, as a stride known only at run time ran much slower)."""
    g = fidx.shape[0]
    for k in range(g):
        out[_slot(fidx, k, by_feature)] = 0.0
    m = codes.shape[1] if rows is None else rows.shape[0]
    if g == 4:
        h0 = out[_slot(fidx, 0, by_feature)].ravel()
        h1 = out[_slot(fidx, 1, by_feature)].ravel()
        h2 = out[_slot(fidx, 2, by_feature)].ravel()
        h3 = out[_slot(fidx, 3, by_feature)].ravel()
        c0 = codes[fidx[0]]
        c1 = codes[fidx[1]]
        c2 = codes[fidx[2]]
        c3 = codes[fidx[3]]
        for j in range(m):
            i = row_at(rows, j)
            w = u[i]
            c = y[i]
            h0[stride * c0[i] + c] += w
            h1[stride * c1[i] + c] += w
            h2[stride * c2[i] + c] += w
            h3[stride * c3[i] + c] += w
    elif g == 3:
        h0 = out[_slot(fidx, 0, by_feature)].ravel()
        h1 = out[_slot(fidx, 1, by_feature)].ravel()
        h2 = out[_slot(fidx, 2, by_feature)].ravel()
        c0 = codes[fidx[0]]
        c1 = codes[fidx[1]]
        c2 = codes[fidx[2]]
        for j in range(m):
            i = row_at(rows, j)
            w = u[i]
            c = y[i]
            h0[stride * c0[i] + c] += w
            h1[stride * c1[i] + c] += w
            h2[stride * c2[i] + c] += w
    elif g == 2:
        h0 = out[_slot(fidx, 0, by_feature)].ravel()
        h1 = out[_slot(fidx, 1, by_feature)].ravel()
        c0 = codes[fidx[0]]
        c1 = codes[fidx[1]]
        for j in range(m):
            i = row_at(rows, j)
            w = u[i]
            c = y[i]
            h0[stride * c0[i] + c] += w
            h1[stride * c1[i] + c] += w
    elif g == 1:
        h0 = out[_slot(fidx, 0, by_feature)].ravel()
        c0 = codes[fidx[0]]
        for j in range(m):
            i = row_at(rows, j)
            h0[stride * c0[i] + y[i]] += u[i]


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
    feats = np.arange(d)
    for j in prange(ng):
        f0, f1 = group_bounds(j, ng, d)
        group_histograms(codes, feats[f0:f1], None, y, u, hist, True)


@pjit
def histograms_and_splits(codes, y, u, hist, config, feats, n_value_bins, categorical, value, bin_, missing_left,
                          criteria=True):
    """build_histograms of the features feats (int64[k], increasing: the round's) and then, in the same
    parallel loop, each one's best split (``split.best_split_per_feature``): the thread that summed a group's
    histograms searches them while they are in its cache, and a round has one parallel loop (one wait for
    the slowest thread) less. The outputs equal the two separate calls bit for bit.

    config  the fit's configuration (hist_groups, missing_code, criterion)  IN
    value, bin_, missing_left  float64 / int64 / int64 [n_features]  OUT  as best_split_per_feature's (value
            inf for the features not in feats)
    criteria  None when config.criterion is CRITERION_ERROR (only that criterion's scan is compiled), True for any
    """
    d = codes.shape[0]
    k = feats.shape[0]
    missing_code = config.missing_code
    criterion = config.criterion
    if k < d:
        value[:] = np.inf
    ng = sub_group_count(config.hist_groups, d, k)
    for j in prange(ng):
        g0, g1 = group_bounds(j, ng, k)
        group_histograms(codes, feats[g0:g1], None, y, u, hist, True)
        for p in range(g0, g1):
            f = feats[p]
            if categorical is None:  # no categorical feature in the fit: the categories' scan is not compiled
                v, b, ml = best_split_one_feature_q(hist[f], hist[f], n_value_bins[f], missing_code, criterion,
                                                    0.0, None, 0, criteria)
            else:
                v, b, ml = best_split_one_feature_q(hist[f], hist[f], n_value_bins[f], missing_code, criterion,
                                                    0.0, categorical[f] != 0, 0, criteria)
            value[f] = v
            bin_[f] = b
            missing_left[f] = ml


@pjit
def build_histograms_rows(codes, y, u, rows, hist, n_groups, feats):
    """build_histograms over the rows ``rows`` only (int64[m], increasing: weight trimming, row sampling) and
    the features feats (int64[k], increasing; the others' histograms are not written); every bin is summed
    over those rows in their order, so with every row of positive weight the result is build_histograms'."""
    d = codes.shape[0]
    k = feats.shape[0]
    ng = sub_group_count(n_groups, d, k)
    for j in prange(ng):
        g0, g1 = group_bounds(j, ng, k)
        group_histograms(codes, feats[g0:g1], rows, y, u, hist, True)


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
def build_histograms_q(codes, y, u, q, hist, histq, feats):
    """build_histograms plus a second per-class histogram of q (EBBoost's w**2 / p); threads over the features
    feats (int64[k]; the others' histograms are not written).

    q      float64[n_samples]                    IN
    histq  float64[n_features, n_bins, 2]        OUT
    """
    for p in prange(feats.shape[0]):
        f = feats[p]
        _histogram_one_feature_q(codes[f], y, u, q, hist[f], histq[f])


@pjit
def build_histograms_q_rows(codes, y, u, q, rows, hist, histq, feats):
    """build_histograms_q over the rows ``rows`` only (int64[m], increasing: weight trimming, row sampling)."""
    for p in prange(feats.shape[0]):
        f = feats[p]
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
