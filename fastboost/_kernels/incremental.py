"""The next round's stump histograms from this round's, without a pass over every row.

With a multiplicative update and u = w (AdaBoost, lazy stumps, SABoost), a stump round multiplies
the weight of every row by one of two factors, chosen by the row's side of the stump and its class:
``w_i <- w_i * (down if y_i h(x_i) > 0 else up)`` with ``down = exp(-alpha) / Z`` and
``up = exp(alpha) / Z``. So for every feature f, bin b and class c,

    H'[f, b, c] = f_S(c) * H_S[f, b, c] + f_O(c) * (H[f, b, c] - H_S[f, b, c])

where H is this round's histogram, H_S the histogram of the rows on the stump's smaller side
(one gathered pass over at most half of the rows, ``side_rows`` then
``histogram.build_histograms_rows``) and f_S, f_O the two sides' factors. This is exact in real
arithmetic; in floating point the subtraction leaves rounding dust (a negative difference is
clipped to zero), so the learner builds the histograms from every row again every
``config.hist_rebuild`` rounds, which bounds the drift. Every sum has a fixed order (rows in
increasing order, features in parallel, elements independently), so the model is the same for
any thread count.
"""
import numpy as np
from numba import prange

from .._config import pjit
from .update import goes_left

#: rows per chunk of the side pass (each chunk writes its rows into its own stretch of the output)
CHUNK_ROWS = 65536


@pjit
def side_rows(codes_f, k, missing_left, missing_code, categorical, cat_left, rows):
    """rows[:m] = the rows on the stump's smaller side, in increasing order; returns (m, 1 if that is the left).

    codes_f  uint8 / uint16 [n]  IN   codes of the stump's feature
    rows     int64[>= n]         OUT  (rows[m:] is scratch)
    One pass: each chunk of rows writes its left rows forward from the start of its stretch and its right
    rows backward from its end (branch-free: the side is a coin toss for a split near the median); then the
    smaller side's rows are moved together, chunk by chunk.
    """
    n = codes_f.shape[0]
    nc = max(1, -(-n // CHUNK_ROWS))
    n_left = np.zeros(nc, np.int64)
    ml = missing_left != 0
    for c in prange(nc):
        base = c * CHUNK_ROWS
        end = min(n, base + CHUNK_ROWS)
        kl = 0
        kr = 0
        for i in range(base, end):
            code = codes_f[i]
            if categorical:
                left = goes_left(code, k, missing_left, missing_code, True, cat_left)
            else:
                left = (code <= k) | ((code == missing_code) & ml)
            # branch-free: i goes to both ends, and only the end of its side moves on (the other write is
            # overwritten later, or is the same slot when this is the chunk's last row)
            rows[base + kl] = i
            rows[end - 1 - kr] = i
            kl += np.int64(left)
            kr += 1 - np.int64(left)
        n_left[c] = kl
    total_left = 0
    for c in range(nc):
        total_left += n_left[c]
    small_is_left = total_left <= n - total_left
    m = 0
    buf = np.empty(min(n, CHUNK_ROWS), np.int64)
    for c in range(nc):  # chunk by chunk towards the start (m <= base): a later chunk is never overwritten
        base = c * CHUNK_ROWS
        end = min(n, base + CHUNK_ROWS)
        if small_is_left:
            for j in range(n_left[c]):
                rows[m + j] = rows[base + j]
            m += n_left[c]
        else:  # the right rows sit at end - 1, end - 2, ...: through buf, in increasing row order
            n_right = end - base - n_left[c]
            for j in range(n_right):
                buf[j] = rows[end - 1 - j]
            for j in range(n_right):
                rows[m + j] = buf[j]
            m += n_right
    return m, np.int64(small_is_left)


@pjit
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
    d = hist.shape[0]
    nb = hist.shape[1]
    for f in prange(d):
        h = hist[f]
        a = hist_side[f]
        for b in range(nb):
            r0 = h[b, 0] - a[b, 0]
            r1 = h[b, 1] - a[b, 1]
            h[b, 0] = s0 * a[b, 0] + o0 * (r0 if r0 > 0.0 else 0.0)
            h[b, 1] = s1 * a[b, 1] + o1 * (r1 if r1 > 0.0 else 0.0)
