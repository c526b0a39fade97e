"""Depth-wise tree learner on histograms (binary or K classes).

A tree histogram is ``float64[n_features, n_bins, K + 1]``: per bin the learner
weight of each class and the number of rows with positive weight (rows of zero
weight are absent for the learner, as in scikit-learn; counted only when
min_samples_leaf > 1 asks for it, a side otherwise needs positive weight). Growth is level by level:
each node's split is the best over features (threads over features), bins and the
side of missing values, exactly as the stump search (``split.py``: missing-left
first, ties to the lowest feature, bin, then missing-left; "equal" within
``TIE_RTOL``). A node's rows are a contiguous range of ``idx``, partitioned
stably (rows stay in increasing order) in parallel blocks; the smaller child's
histogram is built from its rows and the larger one's is the parent's minus it
(binary trees without row counts: with the grouped stump kernel of
``histogram.py``). The last level is not partitioned: its rows go straight to
their leaves with the leaves' sums (``leaf_sums``).

Split criteria (lower is better), summed over the two sides:
error ``W - max_c W_c``; gini ``W - sum_c W_c**2 / W``; Z (confidence-rated
leaves, binary) ``2 sqrt(W_0 W_1)``. A split needs ``min_leaf`` positive-weight rows
and ``min_weight`` learner weight on each side. A node becomes a leaf at
``max_depth``, when it is pure (one class carries all its weight) or when no split
is valid.

Monotone constraints (``Monotone``: a direction per feature, an interval [low, high] per node) follow
LightGBM's intermediate bounds: a node's leaves keep their values in its interval (the root's is
unbounded; discrete leaves: their class index, the heaviest class in the interval); a split on a feature
with direction +1 takes only sides whose leaf values are in order (``split.py``), and its children split
the interval at the midpoint m of their (bounded) values: the left child's leaves stay <= m, the right
child's >= m (-1: the other way); a split on another feature passes the interval on. Two rows that differ
only in a constrained feature part at a split on it, so every leaf the larger value reaches is on the
right side of m: the tree's output follows the constraint over the feature's non-missing values.
"""
from collections import namedtuple

import numpy as np
from numba import prange

from .._config import chosen_by_none, jit, pjit
from .._types import CRITERION_LS, LEAF_DISCRETE, LEAF_LSQ, LEAF_REAL, LEAF_VECTOR, SPLIT_DTYPE, FeatureSplits
from .histogram import group_bounds, group_tree_histograms, row_at, sub_group_count
from .sampling import child_groups, node_features
from .split import best_feature, categorical_left_set, impurity, level_splits
from .update import BLOCK, PARALLEL_ROWS, block_total, goes_left

#: no side table: _goes_left compares the code with the split
NO_TABLE = np.zeros(0, np.uint8)
#: a bin every code is at or below (a split that sends every row left)
ALL_LEFT = np.int64(1) << np.int64(62)
#: no monotone bounds on the leaves (finish_leaves)
NO_BOUNDS = np.zeros((0, 2))


@jit
def _rows_histogram_one_feature(rows, f, idx, start, stop, n_classes, with_count, hist_f):
    """hist_f = the tree histogram of feature f over the rows idx[start:stop] (rows: TreeRows)."""
    codes_f = rows.codes[f]
    y = rows.y
    u = rows.u
    q = rows.q
    hist_f[:] = 0.0
    with_q = hist_f.shape[1] == n_classes + 2  # (AdaBoost.MH's 2 K + 1 fields: _mh_group_histograms, not here)
    direct = start == 0 and stop == idx.shape[0]  # the root: all rows in order, no gather
    for j in range(start, stop):
        i = row_at(None, j) if direct else row_at(idx, j)  # (None: the position itself)
        b = codes_f[i]
        hist_f[b, y[i]] += u[i]
        if with_count and u[i] > 0.0:
            hist_f[b, n_classes] += 1.0
        if with_q:
            hist_f[b, n_classes + 1] += q[i]


@jit(inline="always")
def other_class(j, c):
    """The j-th class other than c (j < K - 1), as an unsigned index: j below c, j + 1 from c on. Computed,
    not tested: a loop over all K classes that multiplies by (k != c) is compiled to a branch on k == c, which
    the processor mispredicts for a third of the rows with 3 classes (1.4-1.7x a histogram pass)."""
    m = np.uint64(j)
    return m + np.uint64(m >= c)


@jit(inline="always")
def _mh_rows(rows, idx, start, stop, hist, fidx, g, n_classes, with_count):
    """The row loop of _mh_group_histograms for g (a constant at each call) features fidx[:g]: per row, u_i to its
    class c, the count (with_count: 1.0 for positive weight, else 0.0), then q[i K + k] of each other class k
    to W- of class k, each into the feature's histogram at the row's bin."""
    nf = np.uint64(hist.shape[2])
    h0 = hist[fidx[0]].ravel()
    h1 = hist[fidx[min(1, g - 1)]].ravel()
    h2 = hist[fidx[min(2, g - 1)]].ravel()
    h3 = hist[fidx[min(3, g - 1)]].ravel()
    c0 = rows.codes[fidx[0]]
    c1 = rows.codes[fidx[min(1, g - 1)]]
    c2 = rows.codes[fidx[min(2, g - 1)]]
    c3 = rows.codes[fidx[min(3, g - 1)]]
    direct = start == 0 and stop == idx.shape[0]  # the root: all rows in order, no gather
    y = rows.y
    u = rows.u
    q = rows.q
    kk = np.uint64(n_classes)
    wm = np.uint64(n_classes + 1)
    for j in range(start, stop):
        i = row_at(None, j) if direct else row_at(idx, j)
        c = np.uint64(y[i])
        ui = u[i]
        base = i * kk
        o0 = np.uint64(c0[i]) * nf
        o1 = np.uint64(c1[i]) * nf
        o2 = np.uint64(c2[i]) * nf
        o3 = np.uint64(c3[i]) * nf
        h0[o0 + c] += ui
        if g > 1:
            h1[o1 + c] += ui
        if g > 2:
            h2[o2 + c] += ui
        if g > 3:
            h3[o3 + c] += ui
        if with_count:
            one = 1.0 if ui > 0.0 else 0.0
            h0[o0 + kk] += one
            if g > 1:
                h1[o1 + kk] += one
            if g > 2:
                h2[o2 + kk] += one
            if g > 3:
                h3[o3 + kk] += one
        o0 += wm
        o1 += wm
        o2 += wm
        o3 += wm
        for jk in range(n_classes - 1):
            m = other_class(jk, c)
            v = q[base + m]
            h0[o0 + m] += v
            if g > 1:
                h1[o1 + m] += v
            if g > 2:
                h2[o2 + m] += v
            if g > 3:
                h3[o3 + m] += v


@jit
def _mh_group_histograms(rows, fidx, idx, start, stop, n_classes, with_count, hist):
    """hist[fidx[p]] (p < len(fidx) <= GROUP) = the AdaBoost.MH tree histograms (2K + 1 fields) of the rows
    idx[start:stop] (all rows in order when that is the whole of idx): per bin W+ by class (u of the row's class),
    the count of positive-weight rows, then W- by class (the pair weights q[i K + k] of the row's other classes),
    each bin and field summed over its rows in increasing order. Up to four features a pass: a row's class,
    weight and pair weights are loaded once for them and their scatter-adds are independent (as
    histogram.group_histograms). One feature a pass: 1.5x the time on 200 000 x 21 waveform."""
    g = fidx.shape[0]
    for p in range(g):
        hist[fidx[p]] = 0.0
    if g == 4:  # (g a constant in each copy of the loop: no test per row)
        _mh_rows(rows, idx, start, stop, hist, fidx, 4, n_classes, with_count)
    elif g == 3:
        _mh_rows(rows, idx, start, stop, hist, fidx, 3, n_classes, with_count)
    elif g == 2:
        _mh_rows(rows, idx, start, stop, hist, fidx, 2, n_classes, with_count)
    else:
        _mh_rows(rows, idx, start, stop, hist, fidx, 1, n_classes, with_count)


@jit
def _grouped_case(n_classes, with_count, hist_f):
    """Binary, no row count, no q field: the grouped stump-histogram kernel builds the class fields."""
    return n_classes == 2 and not with_count and hist_f.shape[-1] == 3


@jit
def _group_rows_histograms(rows, fidx, idx, start, stop, out):
    """out[fidx[k]] (k < len(fidx) <= GROUP) = the tree histogram of feature fidx[k] over the rows idx[start:stop]
    (all rows in order when that is the whole of idx) with the grouped kernel, straight into the three fields a
    bin; count field 0."""
    if start == 0 and stop == idx.shape[0]:
        group_tree_histograms(rows.codes, fidx, None, rows.y, rows.u, out, True)
    else:
        group_tree_histograms(rows.codes, fidx, idx[start:stop], rows.y, rows.u, out, True)


@pjit
def _rows_histograms(rows, idx, start, stop, n_classes, with_count, hist, n_groups, feats, mh):
    """Tree histograms of the rows idx[start:stop] and the features feats (int64[k], increasing: the round's;
    the others' are not written); threads over features, rows in order.

    rows   TreeRows  IN  codes, the class index y and the learner weights u (q is summed into the last field
           when hist has n_classes + 2 fields; w is not read)
    idx    int64[n_samples]  IN (not read when start:stop is all rows)
    with_count  count the positive-weight rows in field n_classes (only min_samples_leaf > 1 needs it)
    hist   float64[n_features, n_bins, n_classes + 1 (+1)]  OUT
    n_groups  histogram.n_feature_groups(n_features, threads): the binary case runs the grouped kernel
    mh     None (``rows_histograms`` calls _rows_histograms_mh for AdaBoost.MH's, mh True)
    """
    d = rows.codes.shape[0]
    k = feats.shape[0]
    grouped = _grouped_case(n_classes, with_count, hist)
    ng = sub_group_count(n_groups, d, k) if grouped else k  # (one feature a unit otherwise)
    for j in prange(ng):
        g0, g1 = group_bounds(j, ng, k)
        if grouped:
            _group_rows_histograms(rows, feats[g0:g1], idx, start, stop, hist)
        else:
            _rows_histogram_one_feature(rows, feats[g0], idx, start, stop, n_classes, with_count, hist[feats[g0]])


@pjit
def _rows_histograms_mh(rows, idx, start, stop, n_classes, with_count, hist, n_groups, feats, mh):
    """_rows_histograms for AdaBoost.MH (mh True): its histograms (2 K + 1 fields), groups of features a unit
    (_mh_group_histograms)."""
    k = feats.shape[0]
    ng = sub_group_count(n_groups, rows.codes.shape[0], k)
    for j in prange(ng):
        g0, g1 = group_bounds(j, ng, k)
        _mh_group_histograms(rows, feats[g0:g1], idx, start, stop, n_classes, with_count, hist)


#: rows_histograms(rows, idx, start, stop, n_classes, with_count, hist, n_groups, feats, mh): _rows_histograms
#: where mh is None, _rows_histograms_mh (AdaBoost.MH) where it is True; each fit compiles only its own
rows_histograms = chosen_by_none(9, _rows_histograms, _rows_histograms_mh)


@jit
def _subtract(hp, hs, hl):
    """hl = hp - hs (the larger sibling's histogram from its parent's and the smaller one's); C-contiguous
    arrays, subtracted as one flat run (a loop that vectorises: the inner dimension is a few fields)."""
    a = hp.reshape(-1)
    b = hs.reshape(-1)
    c = hl.reshape(-1)
    for i in range(a.shape[0]):
        c[i] = a[i] - b[i]


@pjit
def _level_child_histograms(rows, idx, small_range, n_split, parent_slot, hist_parent, hist_children, n_classes,
                            with_count, n_groups, feats, mh):
    """Children histograms of a level, threads over features: for split j, the smaller child (slot 2j or
    2j+1, rows small_range[j]) is built from its rows and its sibling is the parent's minus it.

    rows         TreeRows           IN  as rows_histograms
    small_range  int64[n_split, 3]  IN  (start, stop, slot of the smaller child) per split node
    parent_slot  int64[n_split]     IN  the parent's slot in hist_parent
    n_classes, with_count, n_groups, feats, mh     as rows_histograms (mh None: _level_child_histograms_mh is
                 AdaBoost.MH's)
    """
    d = rows.codes.shape[0]
    k = feats.shape[0]
    grouped = _grouped_case(n_classes, with_count, hist_parent)
    ng = sub_group_count(n_groups, d, k) if grouped else k  # (one feature a unit otherwise)
    for jg in prange(ng):
        g0, g1 = group_bounds(jg, ng, k)
        for j in range(n_split):
            small = small_range[j, 2]
            if grouped:
                _group_rows_histograms(rows, feats[g0:g1], idx, small_range[j, 0], small_range[j, 1],
                                       hist_children[small])
            else:
                _rows_histogram_one_feature(rows, feats[g0], idx, small_range[j, 0], small_range[j, 1], n_classes,
                                            with_count, hist_children[small, feats[g0]])
            _sibling_histograms(hist_parent[parent_slot[j]], hist_children, small, 4 * j + 1 - small, feats[g0:g1])


@pjit
def _level_child_histograms_mh(rows, idx, small_range, n_split, parent_slot, hist_parent, hist_children, n_classes,
                               with_count, n_groups, feats, mh):
    """_level_child_histograms for AdaBoost.MH (mh True): its histograms, groups of features a unit."""
    k = feats.shape[0]
    ng = sub_group_count(n_groups, rows.codes.shape[0], k)
    for jg in prange(ng):
        g0, g1 = group_bounds(jg, ng, k)
        for j in range(n_split):
            small = small_range[j, 2]
            _mh_group_histograms(rows, feats[g0:g1], idx, small_range[j, 0], small_range[j, 1], n_classes,
                                 with_count, hist_children[small])
            _sibling_histograms(hist_parent[parent_slot[j]], hist_children, small, 4 * j + 1 - small, feats[g0:g1])


#: level_child_histograms(rows, idx, small_range, n_split, parent_slot, hist_parent, hist_children, n_classes,
#: with_count, n_groups, feats, mh): as rows_histograms, chosen by mh
level_child_histograms = chosen_by_none(11, _level_child_histograms, _level_child_histograms_mh)


@jit(inline="always")
def _sibling_histograms(hist_p, hist_children, small, large, fs):
    """The larger sibling's histograms (slot large) of the features fs: its parent's (hist_p) minus the smaller
    one's (slot small)."""
    for p in range(fs.shape[0]):
        f = fs[p]
        _subtract(hist_p[f], hist_children[small, f], hist_children[large, f])


@jit
def _range_tasks(nodes, count, node_range, is_leaf):
    """Tasks of <= BLOCK consecutive positions covering the ranges of nodes[:count] (is_leaf: only those
    with is_leaf[node], for a node list of all nodes; empty: every node); int64[n_tasks, 6]: index into nodes,
    start, stop, and three free columns. An empty range gets one empty task. Tasks follow the node order, then
    position."""
    every = is_leaf.shape[0] == 0
    n_tasks = 0
    for j in range(count):
        node = nodes[j]
        if every or is_leaf[node]:
            n_tasks += max(1, -(-(node_range[node, 1] - node_range[node, 0]) // BLOCK))
    task = np.zeros((n_tasks, 6), np.int64)
    t = 0
    for j in range(count):
        node = nodes[j]
        if every or is_leaf[node]:
            for a in range(node_range[node, 0], max(node_range[node, 1], node_range[node, 0] + 1), BLOCK):
                task[t, 0] = j
                task[t, 1] = a
                task[t, 2] = min(a + BLOCK, node_range[node, 1])
                t += 1
    return task


@jit(inline="always")  # (a call per row otherwise, in every pass that sends rows down a split)
def _goes_left(c, k, missing_left, missing_code, categorical, cat_left, table=NO_TABLE):
    """Whether code c goes left: table[c] when the split has a table (side_tables), else from the split."""
    if table.shape[0] > 0:
        return table[c] != 0
    if categorical:
        return goes_left(c, k, missing_left, missing_code, True, cat_left)
    return ((c <= k) & (c != missing_code)) | ((c == missing_code) & missing_left)


@jit
def _split_nodes(splits, n_split):
    """int64[n_split]: the node of each split (splits SPLIT_DTYPE[>= n_split])."""
    nodes = np.empty(n_split, np.int64)
    for j in range(n_split):
        nodes[j] = splits[j].node
    return nodes


@jit
def _split_rows(splits, n_split, node_range):
    """The number of rows of the split nodes."""
    n_rows = 0
    for j in range(n_split):
        node = splits[j].node
        n_rows += node_range[node, 1] - node_range[node, 0]
    return n_rows


@jit
def side_tables(splits, n_split, missing_code, n_rows):
    """uint8[n_split, missing_code + 1]: 1 where a code goes left at split j (a look-up per row is cheaper than
    the split's comparisons). Empty (n_split, 0) when the tables would cost more than a quarter of a pass
    over the level's n_rows rows (many bins and splits, few rows): then each row compares."""
    width = missing_code + 1
    if n_split * width * 4 > n_rows:
        return np.zeros((n_split, 0), np.uint8)
    table = np.empty((n_split, width), np.uint8)
    for j in range(n_split):
        sp = splits[j]
        for c in range(width):
            table[j, c] = np.uint8(goes_left(c, sp.bin, sp.missing_left, missing_code, sp.categorical != 0,
                                             sp.cat_left))
    return table


@jit
def _split_block(codes_f, sp, missing_code, table, idx, a, b, dst):
    """The rows idx[a:b] of the split sp (a SPLIT_DTYPE record) into dst[a:b]: the left ones forward from a,
    the right ones backward from b - 1, one branch-free store each. Returns the number going left."""
    k = sp.bin
    ml = sp.missing_left != 0
    cat = sp.categorical != 0
    cat_left = sp.cat_left
    lo = a
    ro = b - 1
    for p in range(np.uint64(a), np.uint64(b)):  # (unsigned positions: no negative-index guards, see row_at)
        i = row_at(idx, p)
        left = np.int64(_goes_left(codes_f[i], k, ml, missing_code, cat, cat_left, table))
        dst[np.uint64(lo if left else ro)] = i
        lo += left
        ro -= 1 - left
    return lo - a


@jit
def _count_left(codes_f, sp, missing_code, table, a, b):
    """The number of rows a:b (positions: the root's rows) that go left at the split sp."""
    k = sp.bin
    ml = sp.missing_left != 0
    cat = sp.categorical != 0
    cat_left = sp.cat_left
    n_left = 0
    for i in range(np.uint64(a), np.uint64(b)):
        n_left += np.int64(_goes_left(codes_f[i], k, ml, missing_code, cat, cat_left, table))
    return n_left


@jit
def _place_rows(codes_f, sp, missing_code, table, a, b, lo, ro, idx):
    """Rows a:b (the root's: positions) into idx, the left ones at the split sp forward from lo, the right ones
    from ro."""
    k = sp.bin
    ml = sp.missing_left != 0
    cat = sp.categorical != 0
    cat_left = sp.cat_left
    for i in range(np.uint64(a), np.uint64(b)):
        left = np.int64(_goes_left(codes_f[i], k, ml, missing_code, cat, cat_left, table))
        idx[np.uint64(lo if left else ro)] = i
        lo += left
        ro += 1 - left


@jit
def _count_task(codes, splits, missing_code, table, idx, tmp, task, t, root):
    """partition_level's first pass over task t: its left count into task[t, 3] (its rows split into tmp below
    the root)."""
    j = task[t, 0]
    sp = splits[j]
    if root:  # count only: the rows are the positions, so they go straight to their places in idx afterwards
        task[t, 3] = _count_left(codes[sp.feature], sp, missing_code, table[j], task[t, 1], task[t, 2])
    else:
        task[t, 3] = _split_block(codes[sp.feature], sp, missing_code, table[j], idx, task[t, 1], task[t, 2], tmp)


@jit
def _place_task(codes, splits, missing_code, table, idx, tmp, task, t, root):
    """partition_level's second pass over task t: its rows to their places in idx."""
    a = task[t, 1]
    b = task[t, 2]
    nl = task[t, 3]
    lo = task[t, 4]
    ro = task[t, 5]
    if root:
        sp = splits[task[t, 0]]
        _place_rows(codes[sp.feature], sp, missing_code, table[task[t, 0]], a, b, lo, ro, idx)
        return
    ua = np.uint64(a)
    ub = np.uint64(b - 1)
    ulo = np.uint64(lo)
    uro = np.uint64(ro)
    for p in range(np.uint64(nl)):  # (unsigned: no negative-index guards, see row_at)
        idx[ulo + p] = tmp[ua + p]
    for p in range(np.uint64(b - a - nl)):
        idx[uro + p] = tmp[ub - p]


@pjit
def partition_level(codes, splits, n_split, missing_code, node_range, root, idx, tmp, n_left):
    """Stable partition of the rows of every node split on this level, written to idx (tmp: scratch).

    splits  SPLIT_DTYPE[>= n_split]  IN  the level's splits (choose_level)
    root  the level is the root's (idx not filled yet: the rows are the positions)
    n_left  int64[n_split]  OUT  rows going left
    Threads over blocks of BLOCK positions of all the nodes: each block splits its rows into tmp (left
    ones first, right ones reversed at its end), then, at offsets from the blocks' left counts, both
    runs are copied to idx in row order. Balanced however unequal the nodes are. At the root (rows =
    positions) the blocks only count first and then write their rows straight to their places in idx.
    A level of one block, or of fewer than PARALLEL_ROWS rows, runs on the calling thread (no parallel launch).
    """
    # split, start, stop, left count, left offset, right offset
    task = _range_tasks(_split_nodes(splits, n_split), n_split, node_range, np.empty(0, np.bool_))
    n_tasks = task.shape[0]
    n_rows = _split_rows(splits, n_split, node_range)
    table = side_tables(splits, n_split, missing_code, n_rows)
    serial = n_tasks == 1 or n_rows < PARALLEL_ROWS
    if serial:  # (t as np.uint64 in both loops: one compiled task function for both)
        for t in range(n_tasks):
            _count_task(codes, splits, missing_code, table, idx, tmp, task, np.uint64(t), root)
    else:
        for t in prange(n_tasks):
            _count_task(codes, splits, missing_code, table, idx, tmp, task, np.uint64(t), root)
    for j in range(n_split):
        n_left[j] = 0
    for t in range(n_tasks):
        n_left[task[t, 0]] += task[t, 3]
    lo = 0
    ro = 0
    for t in range(n_tasks):
        j = task[t, 0]
        if t == 0 or task[t - 1, 0] != j:  # the split's first block
            lo = node_range[splits[j].node, 0]
            ro = lo + n_left[j]
        task[t, 4] = lo
        task[t, 5] = ro
        lo += task[t, 3]
        ro += task[t, 2] - task[t, 1] - task[t, 3]
    if serial:
        for t in range(n_tasks):
            _place_task(codes, splits, missing_code, table, idx, tmp, task, np.uint64(t), root)
    else:
        for t in prange(n_tasks):
            _place_task(codes, splits, missing_code, table, idx, tmp, task, np.uint64(t), root)


@jit
def _node_class_weights(hist, missing_code, n_classes, out, f):
    """Class weights and positive-weight row count of a node from any built feature's histogram (feature f).
    The binary histograms' three fields are summed in registers: summed into out, which numba cannot prove apart
    from hist, every addition waited for the store before it. The same additions in the same order."""
    h = hist[f]
    if h.shape[1] == 3:
        s0 = 0.0
        s1 = 0.0
        s2 = 0.0
        for b in range(missing_code + 1):
            s0 += h[b, 0]
            s1 += h[b, 1]
            s2 += h[b, 2]
        out[0] = s0
        out[1] = s1
        out[2] = s2
        return
    out[:] = 0.0
    for b in range(missing_code + 1):
        for k in range(h.shape[1]):
            out[k] += h[b, k]


@jit
def _leaf_rows(codes_f, sp, missing_code, table, idx, root, a, b, lc, leaf_of_row):
    """Rows at positions a:b to their leaf as _leaf_row_sums, without the sums."""
    k = sp.bin
    ml = sp.missing_left != 0
    cat = sp.categorical != 0
    cat_left = sp.cat_left
    for p in range(np.uint64(a), np.uint64(b)):
        i = row_at(None, p) if root else row_at(idx, p)
        left = np.int64(_goes_left(codes_f[i], k, ml, missing_code, cat, cat_left, table))
        leaf_of_row[i] = lc + 1 - left


@jit
def _leaf_row_sums(rows, sp, missing_code, table, idx, root, a, b, lc, ls, leaf_of_row, part):
    """Rows at positions a:b (idx[p], or p at the root) to their leaf, and the leaves' sums.

    rows  TreeRows  IN;  sp  SPLIT_DTYPE record  IN
    The rows are split by sp (its feature, bin, missing_left, categories) or its side table: left to leaf lc,
    right to lc + 1 (a split at bin ALL_LEFT with missing_code = -1 and no table sends all of them to lc).
    part float64[2, n_classes + 1 + n_classes]  OUT  per side: sums of u by class, of q, then of w by class
    (rows in order; q only for least squares, ls).
    """
    codes_f = rows.codes[sp.feature]
    k = sp.bin
    missing_left = sp.missing_left != 0
    categorical = sp.categorical != 0
    cat_left = sp.cat_left
    y = rows.y
    u = rows.u
    q = rows.q
    w = rows.w
    n_classes = part.shape[1] // 2
    nu = n_classes + 1
    part[:, :] = 0.0
    if n_classes == 2 and not ls:  # scalar sums (adding 0.0 * u is exact: each sum is its rows' in order)
        lu0 = 0.0
        lu1 = 0.0
        lw0 = 0.0
        lw1 = 0.0
        ru0 = 0.0
        ru1 = 0.0
        rw0 = 0.0
        rw1 = 0.0
        for p in range(np.uint64(a), np.uint64(b)):
            i = row_at(None, p) if root else row_at(idx, p)
            left = np.float64(_goes_left(codes_f[i], k, missing_left, missing_code, categorical, cat_left, table))
            leaf_of_row[i] = lc + 1 - np.int64(left)
            one = np.float64(y[i])
            ui = u[i]
            wi = w[i]
            lu1 += left * one * ui
            lu0 += left * (1.0 - one) * ui
            lw1 += left * one * wi
            lw0 += left * (1.0 - one) * wi
            ru1 += (1.0 - left) * one * ui
            ru0 += (1.0 - left) * (1.0 - one) * ui
            rw1 += (1.0 - left) * one * wi
            rw0 += (1.0 - left) * (1.0 - one) * wi
        part[0, 0] = lu0
        part[0, 1] = lu1
        part[0, nu] = lw0
        part[0, nu + 1] = lw1
        part[1, 0] = ru0
        part[1, 1] = ru1
        part[1, nu] = rw0
        part[1, nu + 1] = rw1
        return
    mh = q.shape[0] > u.shape[0]  # AdaBoost.MH: per leaf W+ by class (u) and W- by class (the pair weights q)
    for p in range(np.uint64(a), np.uint64(b)):
        i = row_at(None, p) if root else row_at(idx, p)
        side = 0 if _goes_left(codes_f[i], k, missing_left, missing_code, categorical, cat_left, table) else 1
        leaf_of_row[i] = lc + side
        part[side, y[i]] += u[i]
        if mh:
            c = np.uint64(y[i])
            base = i * np.uint64(n_classes)
            for jk in range(n_classes - 1):  # W- by class: the row's pairs of the other classes
                m = other_class(jk, c)
                part[side, np.uint64(nu) + m] += q[base + m]
        else:
            part[side, nu + y[i]] += w[i]
        if ls:
            part[side, n_classes] += q[i]


@jit
def _set_all_left(sp):
    """sp (a SPLIT_DTYPE record) <- a split of feature 0 at bin ALL_LEFT: with missing_code -1 and no side table
    every code goes left."""
    sp.slot = 0
    sp.node = 0
    sp.feature = 0
    sp.bin = ALL_LEFT
    sp.missing_left = 0
    sp.categorical = 0
    for b in range(sp.cat_left.shape[0]):
        sp.cat_left[b] = 0


#: what leaf_sums' tasks share: the plain leaves' tasks and the last level's splits' (_range_tasks), the splits'
#: side tables, the missing code, least squares (sums of q too), root (the splits' rows are the positions) and the
#: first child of the last level's splits (a namedtuple: a record does not pass into a parallel loop's body)
LeafTasks = namedtuple("LeafTasks", "plain split_tasks table missing_code ls root first_child")


@jit
def _leaf_task(rows, ts, tasks, splits, parts, leaf, t):
    """leaf_sums' task t (tasks a LeafTasks): its rows to their leaves (ts.leaf_of_row) and (parts not empty) its
    partial sums into parts[t], its leaves into leaf[t]. Tasks t < len(tasks.plain) are plain leaves' ranges, the
    others the last level's splits'."""
    idx = ts.rows
    leaf_of_row = ts.leaf_of_row
    ls = tasks.ls
    plain = tasks.plain
    n_plain = plain.shape[0]
    if t < n_plain:
        # the plain leaves' rows all go "left" (to the leaf itself): feature 0 at bin ALL_LEFT, no missing code
        all_left = np.empty(1, SPLIT_DTYPE)  # (np.zeros of a record dtype does not compile in a parallel function)
        _set_all_left(all_left[0])
        node = plain[t, 0]
        no_table = np.empty(0, np.uint8)  # (writable, as a split's table: NO_TABLE, a global, is read-only to numba
        if parts.shape[0] == 0:           # and would compile _leaf_rows and _leaf_row_sums a second time)
            _leaf_rows(rows.codes[0], all_left[0], -1, no_table, idx, False, plain[t, 1], plain[t, 2], node,
                       leaf_of_row)
        else:
            leaf[t, 0] = node
            _leaf_row_sums(rows, all_left[0], -1, no_table, idx, False, plain[t, 1], plain[t, 2], node, ls,
                           leaf_of_row, parts[t])
        return
    missing_code = tasks.missing_code
    root = tasks.root
    j = tasks.split_tasks[t - n_plain, 0]
    lc = tasks.first_child + 2 * j
    a = tasks.split_tasks[t - n_plain, 1]
    b = tasks.split_tasks[t - n_plain, 2]
    table = tasks.table[j]
    if parts.shape[0] == 0:
        sp = splits[j]
        _leaf_rows(rows.codes[sp.feature], sp, missing_code, table, idx, root, a, b, lc, leaf_of_row)
    else:
        leaf[t, 0] = lc
        leaf[t, 1] = lc + 1
        _leaf_row_sums(rows, splits[j], missing_code, table, idx, root, a, b, lc, ls, leaf_of_row, parts[t])


@pjit
def leaf_sums(rows, config, tree, ts, n_first, splits, n_split, root, assign_only=False):
    """Each leaf's rows get its index; per leaf and class sums of u and w (and of q for least squares).

    rows  TreeRows  IN;  ts  TreeScratch  IN/OUT  (rows, node_range IN; leaf_of_row, leaf_u, leaf_w OUT)
    Two kinds of leaves: those among nodes 0 .. n_first - 1 (their rows are the range ts.node_range[node]
    of ts.rows), and the children of the last level's splits j < n_split (splits[j], a SPLIT_DTYPE record:
    left rows to leaf n_first + 2j, right ones to n_first + 2j + 1, straight from the parent's range, without
    partitioning it; root: the parent is the root and ts.rows is not filled, its rows are the positions).
    Threads over tasks of <= BLOCK consecutive positions of one range (leaves differ in size, so threads
    over leaves would leave one idle); a leaf's sum adds its tasks' partial sums in position order,
    which is row order: the result does not depend on the number of threads.
    assign_only: only each row's leaf; leaf_u and leaf_w are not written.
    """
    idx = ts.rows
    node_range = ts.node_range
    leaf_u = ts.leaf_u
    leaf_w = ts.leaf_w
    missing_code = config.missing_code
    n_classes = config.n_classes
    first_child = n_first
    is_leaf = np.empty(tree.shape[0], np.bool_)
    for node in range(tree.shape[0]):
        is_leaf[node] = tree[node].left < 0
    first = np.empty(n_first, np.int64)  # (np.arange, np.ones and np.full would each compile code of their own)
    for node in range(n_first):
        first[node] = node
    plain = _range_tasks(first, n_first, node_range, is_leaf)
    split_tasks = _range_tasks(_split_nodes(splits, n_split), n_split, node_range, np.empty(0, np.bool_))
    table = side_tables(splits, n_split, missing_code, _split_rows(splits, n_split, node_range))
    n_plain = plain.shape[0]
    n_tasks = n_plain + split_tasks.shape[0]
    serial = n_tasks == 1 or idx.shape[0] < PARALLEL_ROWS
    parts = np.empty((0 if assign_only else n_tasks, 2, leaf_u.shape[1] + n_classes))  # (none: rows to leaves only)
    leaf = np.empty((parts.shape[0], 2), np.int64)
    for j in range(parts.shape[0]):
        leaf[j, 0] = -1
        leaf[j, 1] = -1
    tasks = LeafTasks(plain, split_tasks, table, missing_code, config.criterion == CRITERION_LS, root, first_child)
    if serial:  # (t as np.uint64 in both loops: one compiled task function for both)
        for t in range(n_tasks):
            _leaf_task(rows, ts, tasks, splits, parts, leaf, np.uint64(t))
    else:
        for t in prange(n_tasks):
            _leaf_task(rows, ts, tasks, splits, parts, leaf, np.uint64(t))
    if assign_only:
        return
    for t in range(n_tasks):
        for side in range(2):
            if leaf[t, side] >= 0:
                leaf_u[leaf[t, side], :] = 0.0
                leaf_w[leaf[t, side], :] = 0.0
    nu = leaf_u.shape[1]
    for t in range(n_tasks):  # tasks in order: each leaf's parts in position order
        for side in range(2):
            node = leaf[t, side]
            if node < 0:
                continue
            for k in range(nu):
                leaf_u[node, k] += parts[t, side, k]
            for k in range(leaf_w.shape[1]):
                leaf_w[node, k] += parts[t, side, nu + k]


@jit
def reset_tree(tree):
    """Every node of ``tree`` a blank leaf (no split, no class, no value)."""
    for node in range(tree.shape[0]):
        nd = tree[node]
        nd.feature = -1
        nd.bin = -1
        nd.missing_left = -1
        nd.left = -1
        nd.right = -1
        nd.class_ = -1
        nd.threshold = 0.0
        nd.categorical = 0
        nd.cat_left[:] = 0
        nd.value = 0.0
        nd.gain = 0.0
        nd.weight = 0.0


@jit
def root_weight(hist_root, config, f):
    """The learner weight sum(u) of all rows, from the root's histogram of a built feature f (min_weight_fraction_leaf's
    scale)."""
    cw = np.zeros(hist_root.shape[2])
    _node_class_weights(hist_root, config.missing_code, config.n_classes, cw, f)
    total_u = 0.0
    for k in range(config.n_classes):
        total_u += cw[k]
    return total_u


@jit
def _child_bounds(hist_f, sp, config, delta, direction, bounds, first_child):
    """The children first_child, first_child + 1 of a split sp (SPLIT_DTYPE) of node sp.node on a feature with
    direction +1 / -1: their intervals split their parent's at the midpoint of their leaf values (bounded by it);
    direction 0: the parent's interval for both."""
    node = sp.node
    lo = bounds[node, 0]
    hi = bounds[node, 1]
    lc = first_child
    rc = first_child + 1
    if direction == 0:
        bounds[lc, 0] = lo
        bounds[lc, 1] = hi
        bounds[rc, 0] = lo
        bounds[rc, 1] = hi
        return
    n_classes = config.n_classes
    nf = hist_f.shape[1]
    sides = np.zeros((2, n_classes + 2))
    missing_code = config.missing_code
    for b in range(missing_code + 1):
        left = b <= sp.bin if b != missing_code else sp.missing_left != 0
        for k in range(n_classes):
            sides[0 if left else 1, k] += hist_f[b, k]
        if nf > n_classes + 1:
            sides[0 if left else 1, n_classes + 1] += hist_f[b, n_classes + 1]
    bounds[lc, 0] = lo
    bounds[lc, 1] = hi
    bounds[rc, 0] = lo
    bounds[rc, 1] = hi
    kl, vl = _leaf_output(sides[0], config, delta, bounds, lc)
    kr, vr = _leaf_output(sides[1], config, delta, bounds, rc)
    if config.leaf == LEAF_DISCRETE:  # discrete leaves are bounded by their class index
        vl = np.float64(kl)
        vr = np.float64(kr)
    mid = 0.5 * (vl + vr)
    if direction > 0:
        bounds[lc, 1] = mid
        bounds[rc, 0] = mid
    else:
        bounds[lc, 0] = mid
        bounds[rc, 1] = mid


@jit
def choose_level(hist, level_first, level_count, tree, n_value_bins, categorical, thresholds, config, splits, limits,
                 extra, scan):
    """The splits of one level from its node histograms: the decisions of a level, no rows touched.

    hist   float64[slots, n_features, n_bins, n_classes + 1]  IN  the histograms of the level's nodes
           level_first .. level_first + level_count - 1 (slot s <-> node level_first + s)
    (the level is the last one grown: the children of the j-th split are nodes n + 2j and n + 2j + 1, n =
    level_first + level_count the nodes so far)
    tree   OUT  each level node's weight; each split node's split, children, threshold and gain (IN at levels
           below the root: the root's weight, sum(u), which min_weight_fraction_leaf scales)
    splits SPLIT_DTYPE[slots]  OUT  per split j: the node's slot and index, its feature, bin, missing_left and
           (categorical splits) the set of categories that go left
    limits Limits  IN/OUT  limits.monotone: the features' monotone constraints (direction of length 0: none) and
           the level's intervals (bounds: the root's set here, the children's written); limits.sample: the
           round's features (feats[:drawn[1]] built, fmask), the interaction groups alive at the level's nodes
           (node_groups: set here for the root and the children), scratch
    extra  None for the plain tree learner's fits (no monotone constraints, no feature draws, no interaction
           groups: every node may split on every feature, and numba compiles none of their code), limits for a
           learner that follows config
    scan   SplitScan  the split scans the fit compiles (None in a field: that scan is not compiled; level_splits)
    Returns the number of splits (0: the level's nodes are all leaves). A node is split when it is not
    empty or pure (least squares: has weight) and some split is valid; it splits on the features
    sampling.node_features allows it.
    """
    n_nodes = level_first + level_count  # the nodes so far (the level is the last one grown)
    mono = limits.monotone
    ss = limits.sample
    missing_code = config.missing_code
    n_classes = config.n_classes
    criterion = config.criterion
    slots = hist.shape[0]
    n_features = hist.shape[1]
    value = np.empty((slots, n_features))
    bin_ = np.empty((slots, n_features), np.int64)
    missing_left = np.empty((slots, n_features), np.int64)
    best = FeatureSplits(value, bin_, missing_left)
    active = np.zeros(slots, np.uint8)
    node_total = np.zeros(slots)
    node_imp = np.zeros(slots)
    cw = np.zeros(hist.shape[3])
    ls = criterion == CRITERION_LS
    any_active = False
    for s in range(level_count):
        _node_class_weights(hist[s], missing_code, n_classes, cw, ss.feats[0])
        total = 0.0
        top = 0.0
        for k in range(n_classes):
            total += cw[k]
            top = max(top, cw[k])
        tree[level_first + s].weight = total
        node_total[s] = total
        node_imp[s] = impurity(cw, n_classes, criterion)
        if ls:  # least squares: split while the node has residual weight (sides must be valid)
            active[s] = 1 if total > 0.0 else 0
        else:  # empty or pure: a leaf
            active[s] = 1 if (total > 0.0 and top < total * (1.0 - 1e-12)) else 0
        any_active = any_active or active[s] == 1
    direction = mono.direction
    constrained = direction.shape[0] > 0
    if constrained and level_first == 0:  # the root: unbounded
        mono.bounds[0, 0] = -np.inf
        mono.bounds[0, 1] = np.inf
    if not any_active:
        return 0
    delta = config.leaf_smoothing * tree[0].weight  # (the root's weight: finish_leaves' total_u)
    if level_first == 0:  # the root: every interaction group alive
        ss.node_groups[0, :] = 1
    for s in range(level_count):
        if extra is not None:
            node_features(config, ss, level_first + s, ss.allowed[s])
        else:
            for f in range(n_features):
                ss.allowed[s, f] = 1
    level_splits(hist, level_count, active, n_value_bins, categorical, config, tree[0].weight, best, limits,
                 scan.kclass, scan.criteria)
    n_split = 0
    for s in range(level_count):
        if not active[s]:
            continue
        f = best_feature(value[s], node_total[s])
        if f < 0:
            continue
        j = n_split
        sp = splits[j]
        sp.slot = s
        sp.node = level_first + s
        sp.feature = f
        sp.bin = bin_[s, f]
        sp.missing_left = missing_left[s, f]
        sp.categorical = 0
        if categorical is not None and categorical[f]:  # the set from the scan's order; bin: its size - 1
            sp.categorical = 1
            categorical_left_set(hist[s, f], n_value_bins[f], missing_code, n_classes, criterion, bin_[s, f],
                                 sp.cat_left)
            sp.bin = bin_[s, f] % (missing_code + 1)
        nd = tree[level_first + s]
        nd.feature = f
        nd.bin = sp.bin
        nd.missing_left = sp.missing_left
        nd.left = n_nodes + 2 * j
        nd.right = n_nodes + 2 * j + 1
        nd.categorical = sp.categorical
        if nd.categorical:
            for b in range(nd.cat_left.shape[0]):
                nd.cat_left[b] = sp.cat_left[b]
            nd.threshold = np.nan
        else:
            nd.threshold = thresholds[f, sp.bin]
        nd.gain = node_imp[s] - value[s, f]
        if extra is not None and constrained:
            _child_bounds(hist[s, f], sp, config, delta, direction[f], mono.bounds, nd.left)
        if extra is not None:
            child_groups(ss, level_first + s, f, nd.left, nd.right)
        n_split += 1
    return n_split


@jit
def hist_leaf_sums(hist, level_first, level_count, tree, missing_code, last, leaf_u, leaf_w):
    """The class sums of the leaves a level gives, from its node histograms (u = w, no row count): a node
    of the level that is not split is a leaf, its sums its histogram's; at the last level (last) a split
    node's children are leaves, their sums its split feature's bins on either side.

    hist  float64[slots, n_features, n_bins, n_classes + 1]  IN  the level's histograms (slot s <-> node
          level_first + s)
    tree  IN  the level's splits (choose_level)
    leaf_u float64[n_nodes, n_classes + 1], leaf_w float64[n_nodes, n_classes]  OUT  for those leaves: the
          sums by class (u = w; the q column 0)
    """
    for s in range(level_count):
        node = level_first + s
        nd = tree[node]
        if nd.left < 0:
            _leaf_sums_from(hist[s, 0], missing_code, -1, ALL_LEFT, False, False, nd.cat_left, node, -1, leaf_u,
                            leaf_w)
        elif last:
            _leaf_sums_from(hist[s, nd.feature], missing_code, missing_code, nd.bin, nd.missing_left != 0,
                            nd.categorical != 0, nd.cat_left, nd.left, nd.right, leaf_u, leaf_w)


#: a class sum of a leaf below this share of the total weight, read from the histograms, may be a rounding
#: residue of a true zero (a pure leaf, separable data): the leaves' sums are then taken from the rows
NEAR_ZERO_SUM = 1e-9


@jit
def _near_zero_leaf_sum(tree, n_nodes, leaf_u, n_classes, total_u):
    """Whether some leaf's sum of some class (leaf_u, from the histograms) is below NEAR_ZERO_SUM * total_u."""
    for node in range(n_nodes):
        if tree[node].left < 0:
            for c in range(n_classes):
                if leaf_u[node, c] < NEAR_ZERO_SUM * total_u:
                    return True
    return False


@jit
def _leaf_sums_from(hist_f, n_bins_code, missing_code, k, missing_left, categorical, cat_left, left, right, leaf_u,
                    leaf_w):
    """leaf_u / leaf_w of node left (right: -1 for none) from one feature's histogram: bin b to the left
    when it goes left at the split (k, missing_left, missing_code[, cat_left]), else to the right."""
    n_classes = leaf_w.shape[1]
    sums = np.zeros((2, n_classes))
    for b in range(n_bins_code + 1):
        side = 0 if _goes_left(b, k, missing_left, missing_code, categorical, cat_left) else 1
        for c in range(n_classes):
            sums[side, c] += hist_f[b, c]
    for side in range(2):
        node = left if side == 0 else right
        if node < 0:
            continue
        for c in range(n_classes):
            leaf_u[node, c] = sums[side, c]
            leaf_w[node, c] = sums[side, c]
        leaf_u[node, n_classes] = 0.0


@jit(inline="always")  # (into grow_tree: compiled apart, it emitted its kernels' code once more)
def split_level_rows(rows, config, splits, n_split, first_child, root, ts, hist_parent, hist_children,
                     with_histograms, feats, mh):
    """The rows' side of a level that is not the last: partition the split nodes' rows (children
    first_child + 2j, first_child + 2j + 1 of split j; ts.rows, ts.tmp, ts.node_range) and, with_histograms,
    build the children's histograms into hist_children[2j], hist_children[2j + 1] (the smaller child from its
    rows, its sibling by subtraction from hist_parent). root: the level is the root's (ts.rows not filled yet).
    rows TreeRows IN; splits SPLIT_DTYPE[>= n_split] IN; feats int64[k] IN the features whose histograms are built;
    mh: True for AdaBoost.MH's histograms, else None (rows_histograms).
    """
    node_range = ts.node_range
    n_left = np.empty(max(n_split, 1), np.int64)
    small_range = np.empty((max(n_split, 1), 3), np.int64)
    parent_slot = np.empty(max(n_split, 1), np.int64)
    partition_level(rows.codes, splits, n_split, config.missing_code, node_range, root, ts.rows, ts.tmp, n_left)
    for j in range(n_split):
        node = splits[j].node
        nl = n_left[j]
        start = node_range[node, 0]
        stop = node_range[node, 1]
        lc = first_child + 2 * j
        rc = lc + 1
        node_range[lc, 0] = start
        node_range[lc, 1] = start + nl
        node_range[rc, 0] = start + nl
        node_range[rc, 1] = stop
        left_small = nl <= stop - start - nl
        small_range[j, 0] = start if left_small else start + nl
        small_range[j, 1] = start + nl if left_small else stop
        small_range[j, 2] = 2 * j + (0 if left_small else 1)
        parent_slot[j] = splits[j].slot
    if with_histograms:
        level_child_histograms(rows, ts.rows, small_range, n_split, parent_slot, hist_parent, hist_children,
                               config.n_classes, config.min_samples_leaf > 1, config.hist_groups, feats, mh)


@jit(inline="always")  # (into grow_tree: compiled apart, it emitted its kernels' code once more)
def tree_leaves_rows(rows, config, tree, n_nodes, n_first, splits, n_last, last_root, ts, assign_only=False):
    """The rows' side of the leaves: each row's leaf and the leaves' sums (see leaf_sums).

    n_first: the leaves among nodes < n_first are found by their ranges; the n_last splits of the last
    level (last_root: that level is the root's) send their rows straight to their children n_first + 2j.
    assign_only: only each row's leaf (ts.leaf_u and ts.leaf_w are left as they are).
    """
    if n_nodes == 1:  # the root is a leaf: its rows were never partitioned into ts.rows
        for i in range(rows.u.shape[0]):
            ts.rows[i] = i
    leaf_sums(rows, config, tree, ts, n_first, splits, n_last, last_root, assign_only)


@jit
def _bounded_class(c, n_classes, low, high):
    """The first heaviest class k of c[:n_classes] with low <= k <= high."""
    best_k = -1
    for k in range(n_classes):
        if low <= k <= high and (best_k < 0 or c[k] > c[best_k]):
            best_k = k
    return best_k


@jit
def _leaf_output(c, config, delta, bounds, node):
    """(class, value) of a leaf with sums c (by class, then the row count and least squares' sum of p), as
    finish_leaves sets them; with bounds (a row per node, Monotone.bounds) the value, a discrete leaf's class,
    kept in bounds[node]."""
    n_classes = config.n_classes
    leaf_kind = config.leaf
    bounded = bounds.shape[0] > 0
    best_k = 0
    for k in range(1, n_classes):
        if c[k] > c[best_k]:
            best_k = k
    if bounded and leaf_kind == LEAF_DISCRETE:
        best_k = _bounded_class(c, n_classes, bounds[node, 0], bounds[node, 1])
    if leaf_kind == LEAF_REAL:
        value = config.leaf_scale * np.log((c[1] + delta) / (c[0] + delta))
    elif leaf_kind == LEAF_LSQ:
        pw = c[n_classes + 1]
        value = (c[1] - c[0]) / pw if pw > 0.0 else 0.0
    elif leaf_kind == LEAF_VECTOR:
        value = 0.0  # the leaf's K values: vector_leaf_values, into Model.values
    else:
        value = 1.0 if best_k == 1 else -1.0
    if bounded and leaf_kind != LEAF_DISCRETE:
        value = min(max(value, bounds[node, 0]), bounds[node, 1])
    return best_k, value


@jit
def finish_leaves(tree, n_nodes, leaf_u, config, total_u, bounds):
    """Each leaf's class, value and weight from its sums ``leaf_u`` (see grow_tree); with monotone constraints
    (bounds float64[max_nodes, 2], Monotone.bounds; length 0: none) kept in its node's interval."""
    n_classes = config.n_classes
    delta = config.leaf_smoothing * total_u
    c = np.zeros(n_classes + 2)
    for node in range(n_nodes):
        nd = tree[node]
        if nd.left >= 0:
            continue
        for k in range(n_classes):
            c[k] = leaf_u[node, k]
        c[n_classes + 1] = leaf_u[node, n_classes]  # (leaf_u: the sum of p follows the classes)
        nd.class_, nd.value = _leaf_output(c, config, delta, bounds, node)
        tw = 0.0
        for k in range(n_classes):
            tw += leaf_u[node, k]
        nd.weight = tw


@jit(inline="always")  # into the tree learner (learners._learn_variant says why)
def grow_tree(rows, data, categorical, config, ts, tree, n_seen, limits, leaf_rows, mh, extra, scan):
    """Grow one tree on the learner weights rows.u into ``tree``; return its number of nodes.

    rows     TreeRows  IN  codes uint8 / uint16 [n_features, n_samples]; y uint16[n_samples] (class index
             < config.n_classes); u, w float64[n_samples], learner weights (for the splits) and boosting
             weights (leaf sums); q float64[n_samples], least-squares trees (LEAF_LSQ, CRITERION_LS): the
             sample distribution p
    data     TrainData  IN  its n_value_bins and thresholds (the features)
    categorical  IN  data.categorical, or None when no feature is categorical
    config   the fit's configuration (max_depth, criterion, min_samples_leaf, min_weight_fraction_leaf,
             n_classes, leaf, leaf_scale, leaf_smoothing, missing_code, hist_groups)  IN
    ts       TreeScratch: rows, tmp (row order of the nodes), level_a, level_b
             (float64[2**(max_depth-1), n_features, n_bins, n_classes + 1], one level each) and node_range are
             scratch; OUT leaf_of_row (node index of each row's leaf), leaf_u (per leaf: sums of u per class, then
             of q) and leaf_w (per leaf and class: sums of w), rows in increasing order, filled for leaves only
    tree     NODE_DTYPE[2**(max_depth+1) - 1]   OUT the tree (node 0 the root)
    A split needs min_samples_leaf positive-weight rows and min_weight_fraction_leaf * sum(u) weight per
    side (sum(u) from the root's histogram).
    Leaf values: discrete leaves name their heaviest class under u (ties: the lowest; binary:
    value = -1 / +1); LEAF_REAL: value = leaf_scale * log((U1 + d) / (U0 + d)) with
    d = leaf_smoothing * sum(u); LEAF_LSQ: value = (U1 - U0) / sum q, the mean residual.
    Per level there are three parallel launches: split search and children histograms over features,
    the partition over the level's nodes.

    n_seen   >= 0: weight trimming, the tree grows on the rows ts.rows[:n_seen] only (IN, increasing); every
             row then goes to its leaf by the tree and the leaves' sums run over all rows
             (tree_leaves_all_rows), so the leaves' values and the round's sums are exact.
    limits   Limits  IN/OUT  limits.sample: the features the round reads (histograms of feats[:drawn[1]] only) and
             each node may split on (choose_level); limits.monotone: the features' monotone constraints (direction
             of length 0: none), OUT its bounds, each node's interval (module docstring)
    leaf_rows  TreeRows  IN  the rows whose u the leaves' sums add when the tree grows on a subset (n_seen >= 0): rows
             with the learner's weights where rows.u holds bootstrap counts, else rows itself
    mh       True for AdaBoost.MH (its histograms), None for every other tree (no MH histogram loop compiled)
    extra    None for the plain tree learner, whose root histograms are never carried (config.hist_rebuild <= 1) and
             which has no monotone constraints, feature draws or interaction groups: numba then compiles no leaf
             sums from histograms and none of those options' code (choose_level); limits for the learner that
             follows config
    scan     SplitScan  the split scans the fit compiles (choose_level)
    With carried histograms (config.hist_rebuild > 1) ts.level_a[0] holds the root's histograms already
    (incremental.py); then u is w, the leaves discrete, no row counts, and the leaves' sums come from the level
    histograms (hist_leaf_sums: bins, not rows, so they carry the histograms' rounding) and the pass over the
    rows only finds each row's leaf, unless a class is nearly absent from a leaf (a sum below NEAR_ZERO_SUM of
    the total, perhaps a rounding residue of zero): then they come from the rows.
    Growth alternates two sides, kept apart so that fastboost.dask runs the same functions with the
    rows on its workers and the decisions on the client: the rows' side (rows_histograms,
    split_level_rows, tree_leaves_rows) reads and partitions rows; the decisions' side (root_weight,
    choose_level, finish_leaves) sees only histograms and sums.
    """
    subset = n_seen >= 0
    n = n_seen if subset else rows.u.shape[0]  # the rows the tree grows on: ts.rows[:n] (all rows: positions)
    hist_a = ts.level_a
    hist_b = ts.level_b
    leaf_u = ts.leaf_u
    reset_tree(tree)
    ts.node_range[0, 0] = 0
    ts.node_range[0, 1] = n
    slots = hist_a.shape[0]
    splits = np.zeros(slots, SPLIT_DTYPE)  # the level's splits
    ss = limits.sample
    mono = limits.monotone
    feats = ss.feats[:ss.drawn[1]]
    root_ready = config.hist_rebuild > 1  # (the plain learner: never)
    if extra is None or not root_ready:
        rows_histograms(rows, ts.rows, 0, n, config.n_classes, config.min_samples_leaf > 1, hist_a[0],
                        config.hist_groups, feats, mh)
    total_u = root_weight(hist_a[0], config, feats[0])
    level_first = 0  # node indices of the current level: level_first .. level_first + level_count - 1
    level_count = 1
    n_nodes = 1
    n_first = -1  # leaf_sums: the leaves among nodes < n_first by their ranges, the last level's by its splits
    n_last = 0
    last_root = False
    # the leaves' sums from the level histograms (hist_leaf_sums), not from the rows (AdaBoost.MH: from the rows)
    from_hist = root_ready if mh is None else False
    for depth in range(config.max_depth):
        n_split = choose_level(hist_a, level_first, level_count, tree, data.n_value_bins, categorical,
                               data.thresholds, config, splits, limits, extra, scan)
        last = n_split == 0 or depth + 1 == config.max_depth
        if extra is not None and from_hist:
            hist_leaf_sums(hist_a, level_first, level_count, tree, config.missing_code, last, leaf_u, ts.leaf_w)
        if n_split == 0:
            break
        first_child = n_nodes
        n_nodes += 2 * n_split
        if depth + 1 == config.max_depth:  # the children are leaves: leaf_sums takes the rows straight to them
            n_first = first_child
            n_last = n_split
            last_root = depth == 0 and not subset
            break
        split_level_rows(rows, config, splits, n_split, first_child, depth == 0 and not subset, ts, hist_a, hist_b,
                         True, feats, mh)
        level_first = first_child
        level_count = 2 * n_split
        hist_a, hist_b = hist_b, hist_a
    if n_first < 0:  # the last level was not reached
        n_first = n_nodes
    # leaves: row assignment and per-class sums (rows in increasing order within each leaf)
    if subset:
        tree_leaves_all_rows(leaf_rows, config, tree, ts.leaf_of_row, leaf_u, ts.leaf_w)
        total_u = 0.0
        for node in range(n_nodes):
            if tree[node].left < 0:
                for k in range(config.n_classes):
                    total_u += leaf_u[node, k]
    else:
        if extra is not None and from_hist and _near_zero_leaf_sum(tree, n_nodes, leaf_u, config.n_classes, total_u):
            from_hist = False  # a class nearly absent from a leaf: its sum from the rows, exactly (zero stays zero)
        tree_leaves_rows(rows, config, tree, n_nodes, n_first, splits, n_last, last_root, ts, from_hist)
    finish_leaves(tree, n_nodes, leaf_u, config, total_u, mono.bounds if mono.direction.shape[0] > 0 else NO_BOUNDS)
    return n_nodes


@pjit
def tree_leaves_all_rows(rows, config, tree, leaf_of_row, leaf_u, leaf_w):
    """Every row to its leaf by the tree (a trimmed tree's rows were not all partitioned) and the leaves'
    sums over all rows, as leaf_sums: u (and q for least squares) and w by class. Threads over blocks of
    BLOCK rows, whose partial sums are added in block order (the same result for any thread count)."""
    codes = rows.codes
    y = rows.y
    u = rows.u
    q = rows.q
    w = rows.w
    missing_code = config.missing_code
    n_classes = config.n_classes
    ls = config.criterion == CRITERION_LS
    n = u.shape[0]
    mh = q.shape[0] > n  # AdaBoost.MH: leaf_w holds W- by class, from the pair weights q
    nb = max(1, -(-n // BLOCK))
    nu = leaf_u.shape[1]
    parts = np.zeros((nb, tree.shape[0], nu + n_classes))
    for b in prange(nb):
        for i in range(b * BLOCK, min(n, (b + 1) * BLOCK)):
            leaf = leaf_of_codes(codes, i, tree, missing_code)
            leaf_of_row[i] = leaf
            parts[b, leaf, y[i]] += u[i]
            if mh:
                c = np.uint64(y[i])
                base = np.uint64(i * n_classes)
                for jk in range(n_classes - 1):  # W- by class: the row's pairs of the other classes
                    m = other_class(jk, c)
                    parts[b, leaf, np.uint64(nu) + m] += q[base + m]
            else:
                parts[b, leaf, nu + y[i]] += w[i]
            if ls:
                parts[b, leaf, n_classes] += q[i]
    leaf_u[:] = 0.0
    leaf_w[:] = 0.0
    for b in range(nb):
        for node in range(tree.shape[0]):
            for k in range(nu):
                leaf_u[node, k] += parts[b, node, k]
            for k in range(n_classes):
                leaf_w[node, k] += parts[b, node, nu + k]


@pjit
def tree_outputs(leaf_of_row, tree, y, yh):
    """yh_i = +1 if the class named by row i's leaf is y_i, else -1 (discrete leaves)."""
    for i in prange(y.shape[0]):
        yh[i] = 1 if tree[leaf_of_row[i]].class_ == y[i] else -1


@jit
def tree_round_sums(tree, n_nodes, n_classes, leaf_u, leaf_w, sums):
    """The round's sums (ui, uj, wi, wj; the others zero) from the leaves' class sums (leaves in node order).

    sums  SUMS_DTYPE[1]  OUT
    """
    ui = 0.0
    uj = 0.0
    wi = 0.0
    wj = 0.0
    for node in range(n_nodes):
        if tree[node].left >= 0:
            continue
        c = tree[node].class_
        for k in range(n_classes):
            if k == c:
                ui += leaf_u[node, k]
                wi += leaf_w[node, k]
            else:
                uj += leaf_u[node, k]
                wj += leaf_w[node, k]
    s = sums[0]
    s.ui = ui
    s.uj = uj
    s.wi = wi
    s.wj = wj
    s.qi = 0.0
    s.qj = 0.0
    s.eta = 0.0
    s.z = 0.0


@jit
def leaf_of_codes(codes, i, tree, missing_code):
    """Leaf node reached by binned row i (codes uint8[n_features, n_rows])."""
    node = 0
    while tree[node].left >= 0:
        nd = tree[node]
        c = codes[nd.feature, i]
        go_left = goes_left(c, nd.bin, nd.missing_left, missing_code, nd.categorical != 0, nd.cat_left)
        node = nd.left if go_left else nd.right
    return node


@pjit
def update_validation_tree(valid, tree, missing_code, alpha, n_classes, block_sums):
    """Add alpha * tree to the binned validation rows' margins; return the weighted error sum_i p_i [wrong_i].

    Binary (n_classes == 2): margin[i] += alpha * leaf value, class 1 iff margin > 0.
    K classes: margin[i * K + leaf class] += alpha, the prediction is the first argmax.
    valid  ValidData  IN/OUT  codes [n_features, n_val], y, p [n_val]; margin float64[n_val * (1 or K)] IN/OUT
    """
    codes = valid.codes
    y = valid.y
    p = valid.p
    margin = valid.margin
    n = y.shape[0]
    nb = -(-n // BLOCK)
    for b in prange(nb):
        err = 0.0
        for i in range(b * BLOCK, min(n, (b + 1) * BLOCK)):
            leaf = leaf_of_codes(codes, i, tree, missing_code)
            if n_classes == 2:
                m = margin[i] + alpha * tree[leaf].value
                margin[i] = m
                wrong = (m > 0.0) != (y[i] == 1)
            else:
                margin[i * n_classes + tree[leaf].class_] += alpha
                top = 0
                for k in range(1, n_classes):
                    if margin[i * n_classes + k] > margin[i * n_classes + top]:
                        top = k
                wrong = top != y[i]
            if wrong:
                err += p[i]
        block_sums[b, 0] = err
    return block_total(block_sums, nb, 0)


@pjit
def update_validation_vector(valid, tree, values, missing_code, alpha, block_sums):
    """K-vector leaves: margin[i * K + k] += alpha * values[leaf, k] on the binned validation rows; return the
    weighted error sum_i p_i [first argmax of row i's margins != y_i].

    values  float64[max_nodes, K]  IN  the tree's leaf values (Model.values[t])
    valid   as update_validation_tree (margins float64[n_val * K])
    """
    codes = valid.codes
    y = valid.y
    p = valid.p
    margin = valid.margin
    n_classes = values.shape[1]
    n = y.shape[0]
    nb = -(-n // BLOCK)
    for b in prange(nb):
        err = 0.0
        for i in range(b * BLOCK, min(n, (b + 1) * BLOCK)):
            leaf = leaf_of_codes(codes, i, tree, missing_code)
            top = 0
            for k in range(n_classes):
                m = margin[i * n_classes + k] + alpha * values[leaf, k]
                margin[i * n_classes + k] = m
                if m > margin[i * n_classes + top]:
                    top = k
            if top != y[i]:
                err += p[i]
        block_sums[b, 0] = err
    return block_total(block_sums, nb, 0)
