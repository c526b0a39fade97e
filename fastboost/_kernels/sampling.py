"""Seeded draws of the features and rows a weak learner may read (colsample_bytree / colsample_bynode,
subsample / bootstrap, interaction constraints).

Every draw is counter-based: a uniform number is a hash (splitmix64's finaliser) of the fit's seed, a
stream (what is drawn), the round t, the tree node and an index (a feature, a row, a draw). So a round's
draws depend on nothing but these numbers: not on the thread count, nor on where a call of the loop
started (a warm start draws what the whole fit would have), and tests re-derive them in NumPy
(``unit_draws`` is the formula).

- Features of a round (``draw_round``): k = max(1, round(colsample_bytree * m)) of the m features some
  interaction group holds (every feature without groups), those with the k smallest draws; the learner
  builds histograms of these only. Per node (``node_features``): of the round's features, those an
  interaction group holding every feature on the node's path also holds, and of them
  max(1, round(colsample_bynode * m')) by the node's draws. Stumps are one node (node 0).
- Rows of a round (``sample_rows``): each row independently with probability ``subsample`` (as
  LightGBM's bagging and XGBoost's subsample), or with ``bootstrap`` round(subsample * n) draws with
  replacement by the learner's weights (the learner sees each drawn row with weight count * sum(u) / draws).
  They are drawn from the rows weight trimming kept, when it runs.
"""
import numpy as np
from numba import prange

from .._config import jit, pjit

#: what is drawn: the round's features, a node's features, the rows (subsample), the bootstrap draws
STREAM_TREE, STREAM_NODE, STREAM_ROWS, STREAM_BOOT = 1, 2, 3, 4
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_S11 = np.uint64(11)
_ONE = np.uint64(1)
#: 2**-53: a uniform in [0, 1) from the top 53 bits
_UNIT = 1.0 / 9007199254740992.0
#: rows per chunk of the parallel row draw (each chunk's rows into its own stretch, then moved together)
CHUNK_ROWS = 65536


@jit(inline="always")
def _mix(z):
    """splitmix64's finaliser (uint64 -> uint64)."""
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


@jit(inline="always")
def stream_key(seed, stream, t, node):
    """The key of the draws of (seed, stream, round t, node)."""
    z = _mix(np.uint64(seed) + _GOLDEN * (np.uint64(stream) + _ONE))
    z = _mix(z + _GOLDEN * (np.uint64(t) + _ONE))
    return _mix(z + _GOLDEN * (np.uint64(node) + _ONE))


@jit(inline="always")
def unit(key, i):
    """Draw i of a key: a uniform number in [0, 1)."""
    return np.float64(_mix(key + _GOLDEN * (np.uint64(i) + _ONE)) >> _S11) * _UNIT


@jit
def unit_draws(seed, stream, t, node, n, out):
    """out[i] = unit(stream_key(seed, stream, t, node), i) for i < n (the formula the tests re-derive)."""
    key = stream_key(seed, stream, t, node)
    for i in range(n):
        out[i] = unit(key, i)


@jit
def draw_features(key, eligible, fraction, out):
    """out[f] = 1 for the k = max(1, round(fraction * m)) of the m eligible features (eligible[f] != 0) with the
    smallest draws unit(key, f) (ties: the lower index), else 0; every eligible one when fraction >= 1.
    Returns the number drawn. eligible and out uint8[n_features] (may be the same array)."""
    d = eligible.shape[0]
    m = 0
    for f in range(d):
        m += np.int64(eligible[f] != 0)
    if fraction >= 1.0 or fraction <= 0.0 or m == 0:
        for f in range(d):
            out[f] = 1 if eligible[f] != 0 else 0
        return m
    k = max(1, min(m, np.int64(fraction * m + 0.5)))
    vals = np.empty(m)
    idx = np.empty(m, np.int64)
    j = 0
    for f in range(d):
        if eligible[f] != 0:
            vals[j] = unit(key, f)
            idx[j] = f
            j += 1
    order = np.argsort(vals, kind="mergesort")
    for f in range(d):
        out[f] = 0
    for j in range(k):
        out[idx[order[j]]] = 1
    return k


@jit
def draws_features(config):
    """Whether a round's learner reads drawn features (colsample_bytree or colsample_bynode below 1)."""
    return config.sample_features != 0 and (0.0 < config.colsample_bytree < 1.0
                                            or 0.0 < config.colsample_bynode < 1.0)


@jit
def draw_round(config, ss, t, stump, every=False):
    """The features round t's learner reads: ss.fmask (uint8[n_features]) and their indices, increasing, in
    ss.feats[:k]; ss.drawn = (t, k, every). Stumps (one node) also draw their node's features (colsample_bynode).
    every: no draw (every feature an interaction group holds, at the round and at its nodes): the loop's retry
    of a rejected round."""
    ss.drawn[0] = t
    ss.drawn[2] = 1 if every else 0
    if not config.sample_features:  # every feature (ss.feats = 0 .. n_features - 1, set once)
        return
    key = stream_key(config.sample_seed, STREAM_TREE, t, 0)
    draw_features(key, ss.grouped, 1.0 if every else config.colsample_bytree, ss.fmask)
    if stump:
        draw_features(stream_key(config.sample_seed, STREAM_NODE, t, 0), ss.fmask,
                      1.0 if every else config.colsample_bynode, ss.fmask)
    k = 0
    for f in range(ss.fmask.shape[0]):
        if ss.fmask[f] != 0:
            ss.feats[k] = f
            k += 1
    ss.drawn[1] = k


@jit
def node_features(config, ss, node, out):
    """out (uint8[n_features]) = the features tree node ``node`` may split on: of the round's (ss.fmask), those
    some interaction group alive at the node (ss.node_groups[node]) holds, then colsample_bynode of them."""
    d = out.shape[0]
    groups = ss.groups
    ng = groups.shape[0]
    for f in range(d):
        ok = ss.fmask[f] != 0
        if ok and ng > 0:
            ok = False
            for g in range(ng):
                if ss.node_groups[node, g] != 0 and groups[g, f] != 0:
                    ok = True
                    break
        out[f] = 1 if ok else 0
    if config.colsample_bynode > 0.0 and config.colsample_bynode < 1.0 and ss.drawn[2] == 0:
        draw_features(stream_key(config.sample_seed, STREAM_NODE, ss.drawn[0], node), out, config.colsample_bynode,
                      out)


@jit
def child_groups(ss, parent, f, left, right):
    """The interaction groups alive at a split node's children: the parent's that hold the split feature f."""
    for g in range(ss.groups.shape[0]):
        alive = np.uint8(1) if (ss.node_groups[parent, g] != 0 and ss.groups[g, f] != 0) else np.uint8(0)
        ss.node_groups[left, g] = alive
        ss.node_groups[right, g] = alive


@pjit
def sample_rows(u, config, t, kept, m, hu):
    """Row subsampling of round t: the rows the learner reads into kept[:m'] (increasing); returns m'.

    u     float64[n]  IN  the learner's weights
    kept  int64[n]  IN/OUT  with m >= 0 the candidates kept[:m] (weight trimming's rows, increasing); m < 0:
          every row
    hu    float64[n]  OUT (bootstrap)  the learner's weight of each drawn row: its count * sum(u) / draws
    Without bootstrap each candidate is kept when its draw is below config.subsample. With bootstrap,
    round(subsample * n) draws (subsample 0: n) pick candidates with probability u_i / sum(u) (inverse of the
    cumulative sums, which are added in row order), and kept holds the drawn rows once each.
    """
    n = u.shape[0]
    f = config.subsample if config.subsample > 0.0 else 1.0
    if config.bootstrap:
        return _bootstrap(u, config.sample_seed, t, f, kept, m, hu)
    key = stream_key(config.sample_seed, STREAM_ROWS, t, 0)
    if m >= 0:
        j = 0
        for p in range(m):
            i = kept[p]
            if unit(key, i) < f:
                kept[j] = i
                j += 1
        return j
    nc = max(1, -(-n // CHUNK_ROWS))
    counts = np.zeros(nc, np.int64)
    for c in prange(nc):  # each chunk's rows at the start of its own stretch (no races)
        base = c * CHUNK_ROWS
        k = 0
        for i in range(base, min(n, base + CHUNK_ROWS)):
            kept[base + k] = i
            k += np.int64(unit(key, i) < f)
        counts[c] = k
    total = counts[0]
    for c in range(1, nc):  # close the gaps, chunk by chunk
        base = c * CHUNK_ROWS
        for k in range(counts[c]):
            kept[total + k] = kept[base + k]
        total += counts[c]
    return total


@pjit
def _bootstrap(u, seed, t, fraction, kept, m, hu):
    """sample_rows with bootstrap (see there)."""
    n = u.shape[0]
    nc = m if m >= 0 else n
    cum = np.empty(max(nc, 1))
    s = 0.0
    last = -1
    for p in range(nc):
        i = kept[p] if m >= 0 else p
        s += max(u[i], 0.0)
        cum[p] = s
        if u[i] > 0.0:
            last = p
    for i in range(n):
        hu[i] = 0.0
    if last < 0:
        return 0
    n_draws = max(1, np.int64(fraction * n + 0.5))
    key = stream_key(seed, STREAM_BOOT, t, 0)
    pos = np.empty(n_draws, np.int64)
    for j in prange(n_draws):
        p = np.searchsorted(cum[:nc], unit(key, j) * s, side="right")
        pos[j] = min(p, last)
    for j in range(n_draws):  # in draw order: the same counts for any thread count
        p = pos[j]
        hu[kept[p] if m >= 0 else p] += 1.0
    scale = s / n_draws
    k = 0
    for p in range(nc):
        i = kept[p] if m >= 0 else p
        if hu[i] > 0.0:
            hu[i] *= scale
            kept[k] = i
            k += 1
    return k
