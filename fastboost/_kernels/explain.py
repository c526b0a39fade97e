"""Compiled explanation passes: each node's cover (on the training rows' bin codes) and per-feature
contributions (on raw X).

Cover is the summed sample weight of the training rows that reach a node (a stump's side), found on the
binned rows the fit read (``update.goes_left``, as the fit's own row passes), so a fit from a ``Dataset``
and one in memory share it. Contributions are the SHAP values of the raw margin: stumps in closed form
(from their step tables, ``fastboost._steps``), trees by path-dependent TreeSHAP (Lundberg et al. 2020,
Algorithm 2) with the cover as the path weights.
"""
from collections import namedtuple

import numpy as np
from numba import prange

from .._config import jit, pjit
from .predict import lowest_slot, value_goes_left
from .update import goes_left

#: Each tree's leaves as build_leaf_tables writes them (T trees, L leaf slots, D the depth):
#: leaf_node, n_path, n_slots, target int64[T, L]; path, side, slot, slot_feature int64[T, L, D];
#: n_leaves int64[T]; table float64[T, L, 2**D, D] (a leaf's SHAP values for each pattern of met conditions).
#: Trees of numeric splits in level order, for the cover pass (T trees of depth D, S = 2**D - 1 internal slots):
#: feature, bin, missing_left int64[T, S] the split at each internal slot (a filler under a shallower leaf: bin -1
#: and missing_left 0, every row goes right); keep int64[S] (``_steps.keep_masks``); leaf int64[T, 2**D] the leaf
#: node each slot at the full depth ends in; left, right int64[T, max_nodes] each node's children (-1: a leaf).
LevelCover = namedtuple("LevelCover", ["feature", "bin", "missing_left", "keep", "leaf", "left", "right"])
LeafTables = namedtuple("LeafTables", ["leaf_node", "path", "side", "slot", "slot_feature", "n_path", "n_slots",
                                       "n_leaves", "target", "table"])


@jit
def stump_cover(codes, rounds, feats, missing_code, sw, out, j0, j1):
    """out[t, 0] / out[t, 1] = summed sw of the rows that stump t sends left / right, for the stumps on the split
    features feats[j0:j1]: for each of them the histogram of sw over its codes (rows in order), then each of its
    stumps' sides summed over the codes in order (``explain.cover_parts`` splits the features over the threads;
    the sums do not depend on the split). One pass over each split feature's codes, not one per stump
    (1 000 000 rows, 400 stumps: 20 passes instead of 400).

    codes         uint8/uint16[n_features, n_samples]  binned training rows (feature-major)  IN
    rounds        ROUND_DTYPE[T]  (feature, bin, missing_left, categorical, cat_left)        IN
    feats         int64[k]  the features some stump splits, increasing                       IN
    missing_code  the bin code of missing values (and unknown categories), the largest code  IN
    sw            float64[n_samples]  sample weights                                         IN
    out           float64[T, 2]  (the rows of the stumps on feats[j0:j1])                    OUT
    """
    n = codes.shape[1]
    T = rounds.shape[0]
    n_codes = missing_code + 1
    hist = np.empty(n_codes)
    for j in range(j0, j1):
        f = feats[j]
        codes_f = codes[f]
        hist[:] = 0.0
        for i in range(n):
            hist[codes_f[i]] += sw[i]
        for t in range(T):
            r = rounds[t]
            if r.feature != f:
                continue
            categorical = r.categorical != 0
            left = 0.0
            right = 0.0
            for c in range(n_codes):
                if goes_left(c, r.bin, r.missing_left, missing_code, categorical, r.cat_left):
                    left += hist[c]
                else:
                    right += hist[c]
            out[t, 0] = left
            out[t, 1] = right


@jit
def tree_cover(codes, nodes, missing_code, sw, block, out, j0, j1):
    """out[b, t, j] = summed sw of the rows of block b that pass node j of tree t, from the training rows'
    bin codes: each row's weight added to its leaf, a split's the sum of its children's; for the (block, tree)
    pairs j0:j1, numbered block by block (``explain.cover_parts`` splits them over the threads and adds the blocks
    in order).

    codes         uint8/uint16[n_features, n_samples]  IN
    nodes         NODE_DTYPE[T, max_nodes]             IN
    missing_code  the bin code of missing values       IN
    sw            float64[n_samples]                   IN
    block         rows per block                       IN
    out           float64[n_blocks, T, max_nodes]  (zeros; unused slots stay 0)  IN/OUT
    """
    n = codes.shape[1]
    m = nodes.shape[1]
    levels = 0  # max_nodes = 2**(depth + 1) - 1
    while (2 << levels) - 1 < m:
        levels += 1
    T = nodes.shape[0]
    for job in range(j0, j1):
        b = job // T
        t = job - b * T
        r0 = b * block
        r1 = min(n, r0 + block)
        tree = nodes[t]
        acc = out[b, t]
        for i in range(r0, r1):
            node = 0
            for _ in range(levels):  # branch-free descent to the row's leaf (a leaf keeps it)
                nd = tree[node]
                left = nd.left
                right = nd.right
                go_left = goes_left(codes[max(nd.feature, 0), i], nd.bin, nd.missing_left, missing_code,
                                    nd.categorical != 0, nd.cat_left)
                child = right + (left - right) * np.int64(go_left)
                node = node if left < 0 else child
            acc[node] += sw[i]
        for j in range(m - 1, -1, -1):  # children come after their parent
            if tree[j].left >= 0:
                acc[j] = acc[tree[j].left] + acc[tree[j].right]


@jit
def level_tree_cover(codes, trees, missing_code, sw, block, out, j0, j1, tally, lanes):
    """tree_cover for trees of numeric splits in level order (LevelCover): the same sums in the same order, without
    following child links. Each split of a tree is tested on all rows of the block (one feature's contiguous codes
    against one bin); a row that goes right at a slot drops the leaf slots under its left child from its set of
    reachable leaves (as ``predict.add_level_trees``), and its weight goes to the leaf of the lowest slot left.
    The (block, tree) pairs j0:j1, as tree_cover's: split over the threads, so that a few blocks still use every
    thread.

    tally  None, or int64[4, 256] scratch where every weight is 1.0 (trees of depth 3 or less): the rows are
           counted by their set of reachable leaves (``_count_to_leaves``), with the same sums
    lanes  uint8[0] for trees of at most 8 leaf slots (depth 3 or less: a row's reachable slots in one byte, 32 rows
           an instruction), else int64[0]: the type of the rows' sets of reachable slots (a fit compiles only its own)
    """
    n = codes.shape[1]
    T = trees.feature.shape[0]
    m = out.shape[2]
    for job in range(j0, j1):
        b = job // T
        t = job - b * T
        r0 = b * block
        nr = min(n, r0 + block) - r0
        acc = out[b, t]
        _add_to_leaves(codes, trees, t, r0, missing_code, sw, np.empty(nr, lanes.dtype), acc, tally)
        for j in range(m - 1, -1, -1):  # children come after their parent
            if trees.left[t, j] >= 0:
                acc[j] = acc[trees.left[t, j]] + acc[trees.right[t, j]]


@jit
def _add_to_leaves(codes, trees, t, r0, missing_code, sw, reach, acc, tally):
    """acc[leaf] += sw of the rows r0 .. r0 + len(reach) - 1 that tree t (LevelCover) sends to it, in row order.
    reach (uint8 for up to 8 leaf slots, else int64; scratch): each row's reachable leaf slots as bits, narrowed
    split by split, the split tested in the codes' own type and the mask chosen in reach's, so that a byte-wide
    reach vectorises 32 rows an instruction (an arithmetic mask, ``kp | (0 - left)``, is typed as int64 by numba and
    ran about 12 times slower). tally: None, or (every weight 1.0, byte-wide reach) ``_count_to_leaves``' scratch."""
    reach[:] = -1
    kbuf = np.empty(2, codes.dtype)  # the bin and the missing code in the codes' type
    kbuf[1] = missing_code
    mc = kbuf[1]
    mbuf = np.empty(2, reach.dtype)  # the slot's keep mask and all bits set, in reach's type
    mbuf[1] = -1  # (np.full would compile its own code: a first fit's about 0.15 s)
    every = mbuf[1]
    for p in range(trees.feature.shape[1]):
        mbuf[0] = trees.keep[p]
        kp = mbuf[0]
        k = trees.bin[t, p]
        if k < 0:  # a filler under a shallower leaf: every row goes right
            for r in range(reach.shape[0]):
                reach[r] &= kp
            continue
        kbuf[0] = k
        kc = kbuf[0]
        codes_f = codes[trees.feature[t, p], r0:r0 + reach.shape[0]]
        ml = trees.missing_left[t, p] != 0
        for r in range(reach.shape[0]):
            c = codes_f[r]
            left = ((c <= kc) & (c != mc)) | (ml & (c == mc))
            reach[r] &= every if left else kp
    leaf = trees.leaf[t]
    if tally is not None:  # (None: this path is not compiled)
        _count_to_leaves(reach, leaf, acc, tally)
        return
    for r in range(reach.shape[0]):
        acc[leaf[lowest_slot(np.int64(reach[r]))]] += sw[r0 + r]


@jit(inline="always")
def _count_to_leaves(reach, leaf, acc, tally):
    """_add_to_leaves' sums where every weight is 1.0: the rows counted by their byte of reachable leaf slots, in
    four tables taken in turn (a row does not wait for the count its neighbour just wrote), then each byte's count
    added to the leaf of its lowest slot. Every partial sum is a whole number below 2**53, so acc gets the very sums
    that adding 1.0 row by row gives, without a leaf's slot found for every row."""
    tally[:] = 0
    n = reach.shape[0]
    r = 0
    while r + 4 <= n:
        tally[0, reach[r]] += 1
        tally[1, reach[r + 1]] += 1
        tally[2, reach[r + 2]] += 1
        tally[3, reach[r + 3]] += 1
        r += 4
    while r < n:
        tally[0, reach[r]] += 1
        r += 1
    for v in range(1, 256):
        c = tally[0, v] + tally[1, v] + tally[2, v] + tally[3, v]
        if c > 0:
            acc[leaf[lowest_slot(np.int64(v))]] += c


@jit
def _child_fraction(cover, parent, child):
    """The share of a node's cover that goes to one child; a node no training row reached splits evenly."""
    total = cover[parent]
    return cover[child] / total if total > 0.0 else 0.5


@jit
def tree_expectations(nodes, rounds, cover, n_classes, out):
    """out[c] += alpha_t E_cover[tree_t] per output c: each tree's leaves averaged by cover (a node's
    children by their share of its cover, evenly where no training row reached it).

    nodes  NODE_DTYPE[T, max_nodes]; rounds ROUND_DTYPE[T] (alpha); cover float64[T, max_nodes]  IN
    out    float64[1] (two classes: alpha * leaf value) or [K] (alpha to the class the leaf names)  IN/OUT
    """
    m = nodes.shape[1]
    stack = np.empty(m, np.int64)
    weight = np.empty(m, np.float64)
    for t in range(nodes.shape[0]):
        tree = nodes[t]
        alpha = rounds[t].alpha
        sp = 1
        stack[0] = 0
        weight[0] = 1.0
        while sp > 0:
            sp -= 1
            node = stack[sp]
            w = weight[sp]
            nd = tree[node]
            if nd.left < 0:
                if n_classes == 2:
                    out[0] += alpha * nd.value * w
                else:
                    out[nd.class_] += alpha * w
                continue
            stack[sp] = nd.left
            weight[sp] = w * _child_fraction(cover[t], node, nd.left)
            stack[sp + 1] = nd.right
            weight[sp + 1] = w * _child_fraction(cover[t], node, nd.right)
            sp += 2


@jit
def _extend(feat, zero, one, pw, d, z, o, f):
    """TreeSHAP's EXTEND: append (f, z, o) as element d of the path and update the permutation weights."""
    feat[d] = f
    zero[d] = z
    one[d] = o
    pw[d] = 1.0 if d == 0 else 0.0
    for i in range(d - 1, -1, -1):
        pw[i + 1] += o * pw[i] * (i + 1) / (d + 1)
        pw[i] = z * pw[i] * (d - i) / (d + 1)


@jit
def _unwind(feat, zero, one, pw, d, k):
    """TreeSHAP's UNWIND: remove element k from the path of elements 0 .. d."""
    o = one[k]
    z = zero[k]
    nxt = pw[d]
    for i in range(d - 1, -1, -1):
        if o != 0.0:
            tmp = pw[i]
            pw[i] = nxt * (d + 1) / ((i + 1) * o)
            nxt = tmp - pw[i] * z * (d - i) / (d + 1)
        else:
            pw[i] = pw[i] * (d + 1) / (z * (d - i))
    for i in range(k, d):
        feat[i] = feat[i + 1]
        zero[i] = zero[i + 1]
        one[i] = one[i + 1]


@jit
def _unwound_sum(zero, one, pw, d, k):
    """The sum of the permutation weights the path 0 .. d would have without element k."""
    o = one[k]
    z = zero[k]
    nxt = pw[d]
    total = 0.0
    if o != 0.0:
        for i in range(d - 1, -1, -1):
            tmp = nxt / ((i + 1) * o)
            total += tmp
            nxt = pw[i] - tmp * z * (d - i)
    else:
        for i in range(d - 1, -1, -1):
            total += pw[i] / (z * (d - i))
    return total * (d + 1)


#: rows that share one set of path buffers in tree_contrib
CONTRIB_BLOCK = 64


@pjit
def tree_contrib(X, nodes, rounds, cover, n_classes, out):
    """out[i, c, f] += the SHAP value of feature f for output c of sum_t alpha_t tree_t at X[i]
    (path-dependent TreeSHAP over the cover); threads over blocks of rows.

    X       float32/float64[n_samples, n_features], NaN = missing  IN
    nodes   NODE_DTYPE[T, max_nodes]; rounds ROUND_DTYPE[T] (alpha)  IN
    cover   float64[T, max_nodes]  each node's cover               IN
    out     float64[n_samples, 1 or K, n_features + 1]  (two classes: alpha * leaf value; K classes:
            alpha to the class the leaf names); the last column is left to the caller  IN/OUT
    Subtrees that no coalition reaches (zero share of the cover off the row's path) are skipped: they
    add exactly 0.
    """
    n = X.shape[0]
    m = nodes.shape[1]
    levels = 0  # max_nodes = 2**(depth + 1) - 1
    while (2 << levels) - 1 < m:
        levels += 1
    plen = levels + 2
    for b in prange(-(-n // CONTRIB_BLOCK)):
        r0 = b * CONTRIB_BLOCK
        r1 = min(n, r0 + CONTRIB_BLOCK)
        # one path per tree level (a child extends a copy of its parent's)
        feat = np.empty((levels + 1, plen), np.int64)
        zero = np.empty((levels + 1, plen), np.float64)
        one = np.empty((levels + 1, plen), np.float64)
        pw = np.empty((levels + 1, plen), np.float64)
        s_node = np.empty(m, np.int64)
        s_level = np.empty(m, np.int64)
        s_len = np.empty(m, np.int64)
        s_z = np.empty(m, np.float64)
        s_o = np.empty(m, np.float64)
        s_f = np.empty(m, np.int64)
        for i in range(r0, r1):
            for t in range(nodes.shape[0]):
                tree = nodes[t]
                cov = cover[t]
                alpha = rounds[t].alpha
                sp = 1
                s_node[0] = 0
                s_level[0] = 0
                s_len[0] = 0
                s_z[0] = 1.0
                s_o[0] = 1.0
                s_f[0] = -1
                while sp > 0:
                    sp -= 1
                    node = s_node[sp]
                    lvl = s_level[sp]
                    d = s_len[sp]
                    if lvl > 0:
                        for k in range(d):
                            feat[lvl, k] = feat[lvl - 1, k]
                            zero[lvl, k] = zero[lvl - 1, k]
                            one[lvl, k] = one[lvl - 1, k]
                            pw[lvl, k] = pw[lvl - 1, k]
                    _extend(feat[lvl], zero[lvl], one[lvl], pw[lvl], d, s_z[sp], s_o[sp], s_f[sp])
                    nd = tree[node]
                    if nd.left < 0:
                        if n_classes == 2:
                            c = 0
                            value = alpha * nd.value
                        else:
                            c = nd.class_
                            value = alpha
                        for k in range(1, d + 1):
                            w = _unwound_sum(zero[lvl], one[lvl], pw[lvl], d, k)
                            out[i, c, feat[lvl, k]] += w * (one[lvl, k] - zero[lvl, k]) * value
                        continue
                    f = nd.feature
                    if value_goes_left(X[i, f], nd.threshold, nd.missing_left, nd.categorical != 0, nd.cat_left):
                        hot = nd.left
                        cold = nd.right
                    else:
                        hot = nd.right
                        cold = nd.left
                    in_z = 1.0
                    in_o = 1.0
                    for k in range(1, d + 1):
                        if feat[lvl, k] == f:
                            in_z = zero[lvl, k]
                            in_o = one[lvl, k]
                            _unwind(feat[lvl], zero[lvl], one[lvl], pw[lvl], d, k)
                            d -= 1
                            break
                    cz = _child_fraction(cov, node, cold) * in_z
                    hz = _child_fraction(cov, node, hot) * in_z
                    if cz != 0.0:  # (its one-fraction is 0)
                        s_node[sp] = cold
                        s_level[sp] = lvl + 1
                        s_len[sp] = d + 1
                        s_z[sp] = cz
                        s_o[sp] = 0.0
                        s_f[sp] = f
                        sp += 1
                    if hz != 0.0 or in_o != 0.0:
                        s_node[sp] = hot
                        s_level[sp] = lvl + 1
                        s_len[sp] = d + 1
                        s_z[sp] = hz
                        s_o[sp] = in_o
                        s_f[sp] = f
                        sp += 1


@jit
def _leaf_paths(tree, leaf_node, path, side, slot, slot_feature, n_path, n_slots):
    """For tree ``tree``: its leaves (depth first), each one's path of internal nodes from the root, the side
    the path takes at each (1: left), and the distinct features on it (slots; a path node's slot is its
    feature's). Returns the number of leaves.

    leaf_node int64[L]; path, side, slot, slot_feature int64[L, D]; n_path, n_slots int64[L]  OUT
    """
    m = tree.shape[0]
    stack = np.empty(m, np.int64)
    depth_of = np.zeros(m, np.int64)
    parent = np.full(m, -1, np.int64)
    n_leaves = 0
    sp = 1
    stack[0] = 0
    while sp > 0:
        sp -= 1
        node = stack[sp]
        nd = tree[node]
        if nd.left >= 0:
            stack[sp] = nd.right
            stack[sp + 1] = nd.left
            parent[nd.left] = node
            parent[nd.right] = node
            depth_of[nd.left] = depth_of[node] + 1
            depth_of[nd.right] = depth_of[node] + 1
            sp += 2
            continue
        lf = n_leaves
        n_leaves += 1
        leaf_node[lf] = node
        d = depth_of[node]
        n_path[lf] = d
        child = node
        for p in range(d - 1, -1, -1):  # root first
            up = parent[child]
            path[lf, p] = up
            side[lf, p] = 1 if tree[up].left == child else 0
            child = up
        ns = 0
        for p in range(d):
            f = tree[path[lf, p]].feature
            s = -1
            for q in range(ns):
                if slot_feature[lf, q] == f:
                    s = q
            if s < 0:
                s = ns
                slot_feature[lf, s] = f
                ns += 1
            slot[lf, p] = s
        n_slots[lf] = ns
    return n_leaves


@jit
def build_leaf_tables(nodes, rounds, cover, n_classes, tables):
    """Each leaf's SHAP values for every pattern of the row satisfying its path's conditions.

    A leaf's share of path-dependent E[tree(x) | x_S] is v * prod_{j in S} o_j * prod_{j not in S} z_j over the
    distinct features j of its path: o_j = 1 if x meets every split on j along the path (else 0), z_j the
    product of the cover shares those splits send down the path. The Shapley value of feature i of such a
    product game is v (o_i - z_i) sum_{S in U \\ i} |S|! (u - |S| - 1)! / u! prod_S o_j prod_{U \\ i \\ S} z_j; it
    depends on x only through the bits o, so it is tabulated for each of the 2**u patterns (mask bit s = o of
    slot s).

    nodes NODE_DTYPE[T, m]; rounds ROUND_DTYPE[T]; cover float64[T, m]  IN
    leaf_node, n_path, n_slots, target int64[T, L]; path, side, slot, slot_feature int64[T, L, D];
    n_leaves int64[T]; table float64[T, L, 2**D, D]  OUT  (the fields of ``tables``, a LeafTables)
    """
    leaf_node, path, side, slot, slot_feature = (tables.leaf_node, tables.path, tables.side, tables.slot,
                                                 tables.slot_feature)
    n_path, n_slots, n_leaves, target, table = (tables.n_path, tables.n_slots, tables.n_leaves, tables.target,
                                                tables.table)
    D = path.shape[2]
    z = np.empty(D, np.float64)
    coef = np.empty(D + 1, np.float64)
    weight = np.empty(D + 1, np.float64)
    for t in range(nodes.shape[0]):
        tree = nodes[t]
        cov = cover[t]
        alpha = rounds[t].alpha
        nl = _leaf_paths(tree, leaf_node[t], path[t], side[t], slot[t], slot_feature[t], n_path[t], n_slots[t])
        n_leaves[t] = nl
        for lf in range(nl):
            nd = tree[leaf_node[t, lf]]
            if n_classes == 2:
                target[t, lf] = 0
                value = alpha * nd.value
            else:
                target[t, lf] = nd.class_
                value = alpha
            u = n_slots[t, lf]
            for s in range(u):
                z[s] = 1.0
            for p in range(n_path[t, lf]):
                node = path[t, lf, p]
                child = tree[node].left if side[t, lf, p] == 1 else tree[node].right
                z[slot[t, lf, p]] *= _child_fraction(cov, node, child)
            # w(k) = k! (u - k - 1)! / u!
            for k in range(u):
                w = 1.0
                for q in range(1, k + 1):
                    w *= q
                for q in range(1, u - k):
                    w *= q
                for q in range(1, u + 1):
                    w /= q
                weight[k] = w
            for mask in range(1 << u):
                for i in range(u):
                    # coefficients of prod_{j != i} (z_j + o_j t)
                    coef[0] = 1.0
                    deg = 0
                    for j in range(u):
                        if j == i:
                            continue
                        o = 1.0 if (mask >> j) & 1 else 0.0
                        coef[deg + 1] = coef[deg] * o
                        for q in range(deg, 0, -1):
                            coef[q] = coef[q] * z[j] + coef[q - 1] * o
                        coef[0] *= z[j]
                        deg += 1
                    total = 0.0
                    for k in range(deg + 1):
                        total += weight[k] * coef[k]
                    o_i = 1.0 if (mask >> i) & 1 else 0.0
                    table[t, lf, mask, i] = value * (o_i - z[i]) * total


@pjit
def tree_contrib_tables(X, nodes, tables, out):
    """out[i, c, f] += the SHAP values of the trees at X[i] from the leaf tables of build_leaf_tables: each
    split is tested once per row and tree, each leaf's pattern of met conditions looks up its values;
    threads over rows.

    X  float32/float64[n_samples, n_features]  IN;  tables  LeafTables  IN
    out  float64[n_samples, 1 or K, n_features + 1]  IN/OUT (the last column is left to the caller)
    """
    path, side, slot, slot_feature = tables.path, tables.side, tables.slot, tables.slot_feature
    n_path, n_slots, n_leaves, target, table = (tables.n_path, tables.n_slots, tables.n_leaves, tables.target,
                                                tables.table)
    n = X.shape[0]
    m = nodes.shape[1]
    for b in prange(-(-n // CONTRIB_BLOCK)):
        r0 = b * CONTRIB_BLOCK
        r1 = min(n, r0 + CONTRIB_BLOCK)
        go = np.zeros(m, np.int64)
        for i in range(r0, r1):
            for t in range(nodes.shape[0]):
                tree = nodes[t]
                for j in range(m):
                    nd = tree[j]
                    if nd.left >= 0:
                        left = value_goes_left(X[i, nd.feature], nd.threshold, nd.missing_left, nd.categorical != 0,
                                               nd.cat_left)
                        go[j] = 1 if left else 0
                for lf in range(n_leaves[t]):
                    u = n_slots[t, lf]
                    miss = 0  # the slots whose conditions the row fails
                    for p in range(n_path[t, lf]):
                        miss |= (go[path[t, lf, p]] ^ side[t, lf, p]) << slot[t, lf, p]
                    mask = ((1 << u) - 1) & ~miss
                    c = target[t, lf]
                    for s in range(u):
                        out[i, c, slot_feature[t, lf, s]] += table[t, lf, mask, s]
