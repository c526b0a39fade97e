"""Weight trimming: the rows that hold a given share of the learner's weight, without sorting.

AdaBoost's weights concentrate on few rows after some rounds. Building the weak learner's
histograms from the rows that hold, say, 99 % of the weight (Friedman, Hastie & Tibshirani,
2000) skips most rows at a small cost in the split chosen; the round's sums and the weight
update still run over every row, exactly.

The rows are chosen by the binary exponent of their weight: a histogram of the weight held by
each exponent (one pass, fixed chunks of rows added in chunk order, so the result does not depend
on the thread count), then the largest exponent e* such that the rows with exponent >= e* hold at
least ``rate`` of the total. Those rows are kept, in increasing order: they hold at least ``rate``
of the weight, every kept row weighs at least 2**(e* - 1) and every row left out less (a cut at a
power of two instead of at the exact weight a sort would find).
"""
import numpy as np
from numba import prange

from .._config import jit, pjit

#: rows per chunk of the passes (the sums are added chunk by chunk in this fixed order)
CHUNK_ROWS = 65536
#: binades: the biased exponent field of a float64 (0 for subnormals), 0 .. 2047
N_EXP = 2048


@jit(inline="always")
def _binade(bits):
    """The biased exponent of a positive float64 from its bits: x in [2**(e - 1023), 2**(e - 1022))."""
    return (bits >> np.int64(52)) & np.int64(0x7FF)


@pjit
def select_rows(u, rate, rows):
    """rows[:m] = the rows holding at least ``rate`` of sum(u) (see the module); returns m.

    u     float64[n]  IN   learner weights (rows of weight <= 0 are never kept)
    rate  float in (0, 1]  IN
    rows  int64[>= n]  OUT  the kept rows in increasing order
    Two passes over u (the weight per binade; the kept rows, branch-free, each chunk into its own stretch
    of rows), reading the exponent from the weight's bits, then the chunks' rows moved together.
    """
    n = u.shape[0]
    bits = u.view(np.int64)
    nc = max(1, -(-n // CHUNK_ROWS))
    held = np.zeros((nc, N_EXP))
    for c in prange(nc):
        for i in range(c * CHUNK_ROWS, min(n, (c + 1) * CHUNK_ROWS)):
            x = u[i]
            if x > 0.0:
                held[c, _binade(bits[i])] += x
    by_exp = np.zeros(N_EXP)
    for c in range(nc):  # chunk order: the same sums for any thread count
        for e in range(N_EXP):
            by_exp[e] += held[c, e]
    total = 0.0
    for e in range(N_EXP):
        total += by_exp[e]
    target = rate * total
    cut = 0
    cum = 0.0
    for e in range(N_EXP - 1, -1, -1):
        cum += by_exp[e]
        if by_exp[e] > 0.0:
            cut = e
        if cum >= target:
            break
    kept = np.zeros(nc, np.int64)
    for c in prange(nc):  # each chunk's kept rows at the start of its own stretch of rows (no races)
        base = c * CHUNK_ROWS
        k = 0
        for i in range(base, min(n, base + CHUNK_ROWS)):
            rows[base + k] = i
            k += np.int64(u[i] > 0.0) & np.int64(_binade(bits[i]) >= cut)
        kept[c] = k
    m = kept[0]
    for c in range(1, nc):  # close the gaps, chunk by chunk (a chunk only moves towards the start)
        base = c * CHUNK_ROWS
        for k in range(kept[c]):
            rows[m + k] = rows[base + k]
        m += kept[c]
    return m
