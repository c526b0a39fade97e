"""The next round's root histograms from this round's, without a pass over every row.

With a multiplicative update and u = w (AdaBoost, lazy stumps, SABoost), a round multiplies the
weight of every row by one of two factors: ``w_i <- w_i * (down if y_i h(x_i) > 0 else up)`` with
``down = exp(-alpha) / Z`` and ``up = exp(alpha) / Z``. Split the rows into a set S and the rest O
on which the factor depends only on the class: for a stump, its two sides (each side outputs one
label); for a tree with discrete leaves, the rows it gets right and those it gets wrong. Then for
every feature f, bin b and class c,

    H'[f, b, c] = f_S(c) * H_S[f, b, c] + f_O(c) * (H[f, b, c] - H_S[f, b, c])

where H is this round's histogram and H_S the histogram of the rows of S, the smaller set (one
gathered pass over at most half of the rows: ``side_rows`` or ``wrong_rows``, then a histogram of
those rows). This is exact in real arithmetic; in floating point the subtraction leaves rounding
dust (a negative difference is clipped to zero), so the learner builds the histograms from every
row again every ``config.hist_rebuild`` rounds, which bounds the drift. Every sum has a fixed order
(rows in increasing order, features in parallel, elements independently), so the model is the
same for any thread count.

Stumps with confidence-rated leaves (``next_real_histograms``) are the same, with a factor per side and
class from the side's leaf value instead of its label. AdaBoost.MH's stumps (``next_mh_histograms``)
multiply each pair weight by a factor its leaf and its being the row's own class or another decide: every
field of the histograms (W+ and W- of each class) has its own factor per side. For both the smaller side's
histograms are those of its rows before the update.
"""
import numpy as np
from numba import prange

from .._config import jit, pjit
from .histogram import row_at
from .update import BLOCK, goes_left

#: rows per chunk of the side passes (each chunk writes its rows into its own stretch of the output)
CHUNK_ROWS = 65536


@pjit
def side_rows(codes_f, k, missing_left, missing_code, categorical, cat_left, rows, among=None):
    """rows[:m] = the rows on the stump's smaller side, in increasing order; returns (m, 1 if that is the left).

    codes_f  uint8 / uint16 [n]  IN   codes of the stump's feature
    among    None (every row) or int64[m0] (weight trimming's kept rows, increasing)  IN  the rows to split
    rows     int64[>= n]         OUT  (rows[m:] is scratch)
    A table of the codes' sides (one byte per code) replaces the split's comparisons. Two parallel passes over
    chunks of rows (of ``among``'s positions): the first counts each chunk's left rows, the second writes
    each chunk's rows of the smaller side from the offset the counts before it give. The write is
    branch-free (the side is a coin toss for a split near the median): every row is stored at the chunk's
    next slot and only a row of the smaller side moves the slot on; a store past the chunk's last slot goes
    to that last slot instead (never into the next chunk's), and the chunk's last row of the side is put
    back there at the end.
    """
    n = codes_f.shape[0] if among is None else among.shape[0]
    nc = max(1, -(-n // CHUNK_ROWS))
    table = np.empty(missing_code + 1, np.uint8)  # 1 for the codes that go left
    for b in range(missing_code + 1):
        table[b] = np.uint8(goes_left(b, k, missing_left, missing_code, categorical, cat_left))
    n_left = np.zeros(nc, np.int64)
    for c in prange(nc):
        kl = 0
        for j in range(c * CHUNK_ROWS, min(n, (c + 1) * CHUNK_ROWS)):
            kl += np.int64(table[codes_f[row_at(among, j)]])
        n_left[c] = kl
    total_left = 0
    for c in range(nc):
        total_left += n_left[c]
    small_left = total_left <= n - total_left
    start = np.zeros(nc + 1, np.int64)
    for c in range(nc):
        size = min(n, (c + 1) * CHUNK_ROWS) - c * CHUNK_ROWS
        start[c + 1] = start[c] + (n_left[c] if small_left else size - n_left[c])
    if not small_left:  # from here on the table marks the smaller side's codes
        for b in range(missing_code + 1):
            table[b] = np.uint8(1 - table[b])
    for c in prange(nc):
        lo = start[c]
        hi = start[c + 1] - 1  # the chunk's last slot
        if hi < lo:
            continue  # no row of the smaller side here
        o = lo
        last = np.int64(0)
        for j in range(c * CHUNK_ROWS, min(n, (c + 1) * CHUNK_ROWS)):
            i = row_at(among, j)
            on = np.int64(table[codes_f[i]])
            rows[min(o, hi)] = np.int64(i)
            o += on
            last = np.int64(i) if on != 0 else last
        rows[hi] = last
    return start[nc], np.int64(small_left)


@pjit
def wrong_rows(wrong, block_sums, rows):
    """rows[:m] = the smaller of the rows a tree gets wrong and those it gets right, in increasing order;
    returns (m, 1 if those are the wrong ones).

    wrong        int8[n]                  IN   1 where the tree gets the row wrong, else 0
    block_sums   float64[n_blocks, >= 2]  IN   column 1: the wrong rows of each block of update.BLOCK rows
                                               (update_weights_table marks and counts them)
    rows         int64[>= n]              OUT
    Each block writes its rows from an offset its predecessors' counts give: no serial pass over rows.
    """
    n = wrong.shape[0]
    nb = -(-n // BLOCK)
    start = np.zeros(nb + 1, np.int64)
    for b in range(nb):
        start[b + 1] = start[b] + np.int64(block_sums[b, 1])
    small_wrong = start[nb] <= n - start[nb]
    keep_value = np.int8(1 if small_wrong else 0)
    for b in prange(nb):
        first = b * BLOCK
        o = start[b] if small_wrong else first - start[b]  # the block's right rows start after its predecessors'
        last = min(n, first + BLOCK) - 1  # the block's last kept row: no stray write past it
        while last >= first and wrong[last] != keep_value:
            last -= 1
        for i in range(first, last + 1):
            rows[o] = i  # branch-free: a row not kept is overwritten by the next kept one
            o += np.int64(wrong[i] == keep_value)
    m = start[nb] if small_wrong else n - start[nb]
    return m, np.int64(small_wrong)


@jit
def next_histograms(hist, hist_side, side_output, other_output, alpha, w_correct, w_wrong):
    """hist <- the next round's histograms (see the module): f_S * hist_side + f_O * max(hist - hist_side, 0).

    hist        float64[n_features, n_bins, 2]  IN/OUT  this round's histograms of w, then the next round's
    hist_side   float64[n_features, n_bins, 2]  IN      the smaller side's histograms of w (this round)
    side_output, other_output  -1 / +1                   the stump's outputs on that side and the other
    alpha, w_correct, w_wrong                            the round's step and W_I, W_J (as update_weights)
    """
    down = np.exp(-alpha)
    up = np.exp(alpha)
    z = w_correct * down + w_wrong * up
    down /= z
    up /= z
    # class 0 is y = -1, class 1 is y = +1: a row is correct when the side's output is its y
    s0 = up if side_output > 0 else down
    s1 = down if side_output > 0 else up
    o0 = up if other_output > 0 else down
    o1 = down if other_output > 0 else up
    combine(hist, hist_side, np.array([s0, s1]), np.array([o0, o1]), 1.0)  # (one specialisation)


@jit
def next_tree_histograms(hist, hist_side, side_wrong, alpha, w_correct, w_wrong):
    """hist <- the next round's root histograms after a tree with discrete leaves (see the module).

    hist       float64[n_features, n_bins, n_fields]  IN/OUT  this round's root histograms of w, then the next's
    hist_side  float64[n_features, n_bins, n_fields]  IN  the histograms of the UPDATED weights of the rows
               wrong_rows returned (divided by their factor, this round's, they are those rows' histograms of w)
    side_wrong  1: those rows are the ones the tree gets wrong (else right)
    Every field is scaled alike (the classes' weights; a row-count field holds 0 and stays 0).
    """
    down = np.exp(-alpha)
    up = np.exp(alpha)
    z = w_correct * down + w_wrong * up
    fs = (up if side_wrong else down) / z
    fo = (down if side_wrong else up) / z
    k = hist.shape[2]
    combine(hist, hist_side, np.full(k, fs), np.full(k, fo), 1.0 / fs)


@jit
def next_mh_histograms(hist, hist_side, factor, side, other, n_classes):
    """hist <- the next round's root histograms after an AdaBoost.MH stump (see the module): each field scaled by
    its leaf's factor, W+ of class k by factor[leaf, k], W- of class k by factor[leaf, K + k] (the update's
    factors, update.update_pair_weights), the row count by 1.

    hist       float64[n_features, n_bins, 2 K + 1]  IN/OUT  this round's root histograms, then the next round's
    hist_side  float64[n_features, n_bins, 2 K + 1]  IN      this round's histograms of the smaller side's rows
    factor     float64[n_nodes, 2 K]                 IN      per leaf: the factors of the row's own class, then
                                                             of the other classes
    side, other  the leaves of the smaller side and of the other
    """
    nf = hist.shape[2]
    fs = np.ones(nf)
    fo = np.ones(nf)
    for k in range(n_classes):
        fs[k] = factor[side, k]
        fo[k] = factor[other, k]
        fs[n_classes + 1 + k] = factor[side, n_classes + k]
        fo[n_classes + 1 + k] = factor[other, n_classes + k]
    combine(hist, hist_side, fs, fo, 1.0)


@jit
def next_real_histograms(hist, hist_side, factor, side, other):
    """hist <- the next round's root histograms after a binary stump with confidence-rated leaves (see the
    module): class c's field scaled by factor[leaf, c] of its side's leaf (the update's factors, exp(-+alpha v) /
    Z), the row count by 1.

    hist       float64[n_features, n_bins, 3]  IN/OUT  this round's root histograms of w, then the next round's
    hist_side  float64[n_features, n_bins, 3]  IN      this round's histograms of the smaller side's rows
    factor     float64[n_nodes, >= 2]          IN      per leaf: the factors of class 0 and class 1
    side, other  the leaves of the smaller side and of the other
    """
    nf = hist.shape[2]
    fs = np.ones(nf)
    fo = np.ones(nf)
    for c in range(2):
        fs[c] = factor[side, c]
        fo[c] = factor[other, c]
    combine(hist, hist_side, fs, fo, 1.0)


@pjit
def combine(hist, hist_side, side_factor, other_factor, side_scale=1.0):
    """hist[f, b, c] <- side_factor[c] * a + other_factor[c] * max(hist[f, b, c] - a, 0) with
    a = side_scale * hist_side[f, b, c] (hist_side is not written)."""
    d = hist.shape[0]
    nb = hist.shape[1]
    k = hist.shape[2]
    for f in prange(d):
        h = hist[f]
        s = hist_side[f]
        if k == 2:  # (the classes' factors in registers: a loop over bins that vectorises)
            s0 = side_factor[0]
            s1 = side_factor[1]
            o0 = other_factor[0]
            o1 = other_factor[1]
            for b in range(nb):
                a = side_scale * s[b, 0]
                r = h[b, 0] - a
                h[b, 0] = s0 * a + o0 * (r if r > 0.0 else 0.0)
                a = side_scale * s[b, 1]
                r = h[b, 1] - a
                h[b, 1] = s1 * a + o1 * (r if r > 0.0 else 0.0)
            continue
        for b in range(nb):
            for c in range(k):
                a = side_scale * s[b, c]
                r = h[b, c] - a
                h[b, c] = side_factor[c] * a + other_factor[c] * (r if r > 0.0 else 0.0)
