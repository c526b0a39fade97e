"""Weight trimming: the rows that hold a given share of the learner's weight, without sorting.

AdaBoost's weights concentrate on few rows after some rounds. Building the weak learner's
histograms from the rows that hold, say, 99 % of the weight (Friedman, Hastie & Tibshirani,
2000) skips many rows at a small cost in the split chosen; the round's sums and the weight
update still run over every row, exactly.

The rows are chosen by a histogram of their log-weights read from the weight's bits: a weight's
*key* is its binary exponent and the first ``SUB_BITS`` bits of its mantissa, so the keys cut each
power of two into 8 steps ([2**e (1 + k/8), 2**e (1 + (k+1)/8))) and sort as the weights do. One pass
adds the weight held by each key (fixed chunks of rows added in chunk order, so the result does not
depend on the thread count), then the largest key k* such that the rows with key >= k* hold at least
``rate`` of the total. Those rows are kept, in increasing order: they hold at least ``rate`` of the
weight, and every row left out weighs less than every kept one (a cut at most one step, a factor of
at most 9/8 in weight, below the one a sort would find).
"""
import numpy as np
from numba import prange

from .._config import jit, pjit

#: rows per chunk of the selection pass (the sums are added chunk by chunk in this fixed order)
CHUNK_ROWS = 65536
#: at most this many chunks in the pass that sums the weight per key (each has a table of N_KEYS sums)
MAX_CHUNKS = 64
#: mantissa bits in a key: 2**SUB_BITS steps per power of two
SUB_BITS = 3
#: keys: the biased exponent field of a float64 (0 for subnormals, 0 .. 2047) and SUB_BITS bits
N_KEYS = 2048 << SUB_BITS
#: learners that choose their rows every round (no carried histograms) read every row instead when the
#: chosen rows are more than this share of the rows: one contiguous pass over every row then costs less than
#: choosing the rows and gathering that many (1M x 20 on 2 cores: choosing ~2 ms, a full histogram pass ~5 ms,
#: a gathered one over a third of the rows ~3 ms)
GATHER_MAX_SHARE = 1.0 / 3.0
#: ... and choose again only every this many rounds while the chosen rows stay that many
RECHOOSE_EVERY = 16
#: relative rounding allowed when carried histograms say what share of the weight the kept rows still hold
#: (their sums drift by ~1e-15 a round; without it a rate of 1 would choose its rows again every round)
TRIM_SLACK = 1e-9


@jit(inline="always")
def weight_key(bits):
    """The key of a positive float64 from its bits: its biased exponent and first SUB_BITS mantissa bits."""
    return (bits >> np.int64(52 - SUB_BITS)) & np.int64(N_KEYS - 1)


@pjit
def select_rows(u, rate, rows):
    """rows[:m] = the rows holding at least ``rate`` of sum(u) (see the module); returns m.

    u     float64[n]  IN   learner weights (rows of weight <= 0 are never kept)
    rate  float in (0, 1]  IN
    rows  int64[>= n]  OUT  the kept rows in increasing order
    Two passes over u (the weight per key; the kept rows, branch-free, each chunk into its own stretch
    of rows), reading the key from the weight's bits, then the chunks' rows moved together.
    """
    n = u.shape[0]
    bits = u.view(np.int64)
    ns = min(MAX_CHUNKS, max(1, -(-n // CHUNK_ROWS)))  # the key sums' chunks: at most MAX_CHUNKS tables
    size = -(-n // ns)
    held = np.zeros((ns, N_KEYS))
    for c in prange(ns):
        for i in range(c * size, min(n, (c + 1) * size)):
            x = u[i]
            if x > 0.0:
                held[c, weight_key(bits[i])] += x
    by_key = np.zeros(N_KEYS)
    for c in range(ns):  # chunk order: the same sums for any thread count
        for e in range(N_KEYS):
            by_key[e] += held[c, e]
    total = 0.0
    for e in range(N_KEYS):
        total += by_key[e]
    target = rate * total
    cut = 0
    cum = 0.0
    for e in range(N_KEYS - 1, -1, -1):
        cum += by_key[e]
        if by_key[e] > 0.0:
            cut = e
        if cum >= target:
            break
    nc = max(1, -(-n // CHUNK_ROWS))
    kept = np.zeros(nc, np.int64)
    for c in prange(nc):  # each chunk's kept rows at the start of its own stretch of rows (no races)
        base = c * CHUNK_ROWS
        k = 0
        for i in range(base, min(n, base + CHUNK_ROWS)):
            rows[base + k] = i
            k += np.int64(u[i] > 0.0) & np.int64(weight_key(bits[i]) >= cut)
        kept[c] = k
    m = kept[0]
    for c in range(1, nc):  # close the gaps, chunk by chunk (a chunk only moves towards the start)
        base = c * CHUNK_ROWS
        for k in range(kept[c]):
            rows[m + k] = rows[base + k]
        m += kept[c]
    return m
