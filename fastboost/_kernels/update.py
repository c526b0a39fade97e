"""Apply the chosen stump to the training rows; update and renormalise the weights.

The O(n_samples) passes run over fixed blocks of ``BLOCK`` rows in parallel;
each block writes its own partial sums and the partials are added in block
order, so the sums do not depend on the number of threads.
"""
import numpy as np
from numba import prange

from .._config import jit, pjit
from .._types import CAT_WORDS

BLOCK = 16384
#: a tree level's pass (tree.partition_level, tree.leaf_sums) over fewer rows than this runs on the calling thread,
#: as do the passes below over one BLOCK: a parallel launch (about 5 us with its threads' hand-over of the rows)
#: costs more than it saves
PARALLEL_ROWS = 4096
#: the empty category set: the default of a numeric split's cat_left
NO_SET = np.zeros(CAT_WORDS, np.uint64)
#: no leaf classes: update_weights_table counts no wrong rows
NO_CLASSES = np.zeros(0, np.int64)
NO_MARKS = np.zeros(0, np.int8)


def n_blocks(n_samples):
    """Rows of the ``block_sums`` scratch array the kernels below need."""
    return max(1, -(-n_samples // BLOCK))


@jit(inline="always")
def block_rows(b, n):
    """Block b's rows of n, as the bounds of a loop: ``for i in range(*block_rows(b, n))``. Unsigned, so numba
    indexes with i without its guard against a negative index, which kept LLVM from vectorising the row loops
    (AdaBoost's weight update over 1M rows, 2 threads: 0.40 -> 0.10 ms)."""
    return np.uint64(b * BLOCK), np.uint64(min(n, (b + 1) * BLOCK))


@jit
def block_total(block_sums, nb, col):
    """sum of block_sums[:nb, col] in block order (the thread-count independent reduction)."""
    total = 0.0
    for b in range(nb):
        total += block_sums[b, col]
    return total


@jit
def goes_left(c, k, missing_left, missing_code, categorical, cat_left):
    """Whether bin code c goes left at the split (k, missing_left) or, categorical, the set cat_left."""
    if c == missing_code:
        return missing_left != 0
    if categorical:  # (a code past the set's words, no category's, goes right)
        w = np.int64(c) >> 6
        return w < cat_left.shape[0] and ((cat_left[w] >> np.uint64(c & 63)) & np.uint64(1)) != 0
    return c <= k


@jit
def _apply_block(codes_f, k, missing_left, categorical, cat_left, left_pos, right_pos, missing_code, rows, u, n, b):
    """apply_stump over block b: its rows' yh and its four sums into rows.block_sums[b] (the stump's fields
    apart: a record does not pass into a parallel loop's body)."""
    ml = missing_left != 0
    y = rows.ylab
    w = rows.w
    yh = rows.yh
    ui = 0.0
    uj = 0.0
    wi = 0.0
    wj = 0.0
    for i in range(*block_rows(b, n)):
        c = codes_f[i]
        if categorical:
            go_left = goes_left(c, k, missing_left, missing_code, True, cat_left)
        else:  # branch-free: the missing code is above every k, so "c <= k" is False for it
            go_left = (c <= k) | ((c == missing_code) & ml)
        h_pos = (go_left & left_pos) | ((not go_left) & right_pos)
        correct = h_pos == (y[i] == 1)
        yh[i] = np.int8(2 * np.int8(correct) - 1)
        cf = np.float64(correct)
        ui += cf * u[i]
        uj += (1.0 - cf) * u[i]
        wi += cf * w[i]
        wj += (1.0 - cf) * w[i]
    rows.block_sums[b, 0] = ui
    rows.block_sums[b, 1] = uj
    rows.block_sums[b, 2] = wi
    rows.block_sums[b, 3] = wj


@pjit
def apply_stump(codes_f, stump, missing_code, rows, u, sums):
    """Stump outputs on the binned rows and the round's correct/wrong sums, in one pass.

    codes_f     uint8[n_samples]     IN   codes of the stump's feature
    stump       ROUND_DTYPE record   IN   the stump: bin, missing_left, left, right (the sides' outputs) and,
                                          categorical, the codes that go left (the bitset cat_left)
    rows        RowState             IN/OUT  ylab (class index, 0: y=-1, 1: y=+1) and w (boosting weights) IN;
                                          yh OUT (y_i * h_i: +1 correct, -1 wrong); block_sums scratch
    u           float64[n_samples]   IN   learner weights
    sums        SUMS_DTYPE[1]        OUT  ui, uj, wi, wj (the others zero)
    """
    block_sums = rows.block_sums
    n = codes_f.shape[0]
    nb = -(-n // BLOCK)
    k = stump.bin
    missing_left = stump.missing_left
    categorical = stump.categorical != 0
    cat_left = stump.cat_left
    left_pos = stump.left > 0
    right_pos = stump.right > 0
    if nb == 1:  # (one block: on the calling thread, no parallel launch)
        _apply_block(codes_f, k, missing_left, categorical, cat_left, left_pos, right_pos, missing_code, rows, u, n,
                     np.uint64(0))
    else:
        for b in prange(nb):
            _apply_block(codes_f, k, missing_left, categorical, cat_left, left_pos, right_pos, missing_code, rows, u,
                         n, np.uint64(b))
    s = sums[0]
    s.ui = block_total(block_sums, nb, 0)
    s.uj = block_total(block_sums, nb, 1)
    s.wi = block_total(block_sums, nb, 2)
    s.wj = block_total(block_sums, nb, 3)
    s.qi = 0.0
    s.qj = 0.0
    s.eta = 0.0
    s.z = 0.0


@pjit
def correct_wrong_sums(x, yh, block_sums):
    """(sum of x over the rows with yh > 0, over those with yh < 0), added block by block in block order.

    x  float64[n_samples]  IN;  yh  int8[n_samples]  IN  (apply_stump's y_i h_i);  block_sums  scratch [n_blocks, >= 2]
    """
    n = x.shape[0]
    nb = -(-n // BLOCK)
    for b in prange(nb):
        si = 0.0
        sj = 0.0
        for i in range(*block_rows(b, n)):
            if yh[i] > 0:
                si += x[i]
            else:
                sj += x[i]
        block_sums[b, 0] = si
        block_sums[b, 1] = sj
    return block_total(block_sums, nb, 0), block_total(block_sums, nb, 1)


@jit
def _weights_block(w, p, yh, down, up, block_sums, need_s2, n, b):
    """update_weights over block b (its sum of w**2 / p into block_sums[b, 0])."""
    s2 = 0.0
    if need_s2:
        for i in range(*block_rows(b, n)):
            wi = w[i] * (down if yh[i] > 0 else up)
            w[i] = wi
            if p[i] > 0.0:
                s2 += wi * wi / p[i]
    else:
        for i in range(*block_rows(b, n)):
            w[i] *= down if yh[i] > 0 else up
    block_sums[b, 0] = s2


@pjit
def update_weights(w, p, yh, alpha, w_correct, w_wrong, block_sums, need_s2=True):
    """w_i <- w_i * exp(-alpha * y_i h_i) / Z, in place, in one pass.

    w           float64[n_samples]  IN/OUT boosting weights, sum 1 on entry and exit
    p           float64[n_samples]  IN     initial (sample-weight) distribution, sum 1
    yh          int8[n_samples]     IN     y_i * h_i
    w_correct, w_wrong                IN     sums of w over correct / wrong rows (this round's W_I, W_J)
    block_sums  float64[n_blocks, >=1]     scratch
    Z = W_I exp(-alpha) + W_J exp(alpha) is known before the pass, so scaling and
    renormalising are one multiplication per row (exp is evaluated twice per round).
    Returns (Z, sum_i w_i**2 / p_i over p_i > 0) after the update; the second is 0.0 without need_s2
    (only the variance costs read it, and its division per row is most of this pass's time).
    """
    n = w.shape[0]
    nb = -(-n // BLOCK)
    down = np.exp(-alpha)
    up = np.exp(alpha)
    z = w_correct * down + w_wrong * up
    down /= z
    up /= z
    if nb == 1:  # (one block: on the calling thread, no parallel launch)
        _weights_block(w, p, yh, down, up, block_sums, need_s2, n, np.uint64(0))
    else:
        for b in prange(nb):
            _weights_block(w, p, yh, down, up, block_sums, need_s2, n, np.uint64(b))
    return z, block_total(block_sums, nb, 0) if need_s2 else 0.0


@pjit
def update_residuals(r, p, yh, ylab, alpha, block_sums):
    """r_i <- r_i - alpha * h_i in place (QuadBoost), with h_i = yh_i * (+1 if ylab_i == 1 else -1).

    r           float64[n_samples]  IN/OUT residuals y - F
    p           float64[n_samples]  IN     sample-weight distribution (sum 1)
    yh          int8[n_samples]     IN     ylab_i * h_i, from apply_stump on the learner's labels
    ylab        uint16[n_samples]    IN     the learner's class index (1 where r > 0)
    block_sums  float64[n_blocks, >=1]     scratch
    Returns (the risk sum_i p_i r_i**2 after the update, 0.0).
    """
    n = r.shape[0]
    nb = -(-n // BLOCK)
    for b in prange(nb):
        risk = 0.0
        for i in range(*block_rows(b, n)):
            h = np.float64(yh[i]) if ylab[i] == 1 else -np.float64(yh[i])
            ri = r[i] - alpha * h
            r[i] = ri
            risk += p[i] * ri * ri
        block_sums[b, 0] = risk
    return block_total(block_sums, nb, 0), 0.0


@jit
def stump_output_code(c, k, missing_left, missing_code, left, right, categorical=False,
                      cat_left=NO_SET):
    """Output (left or right, as float64) of the stump (k, missing_left[, cat_left]) on one bin code."""
    go_left = goes_left(c, k, missing_left, missing_code, categorical, cat_left)
    return np.float64(left) if go_left else np.float64(right)


@pjit
def update_validation(valid, stump, missing_code, alpha, block_sums):
    """margin_i += alpha * h(x_i) on binned validation rows; returns the weighted error sum_i p_i [wrong_i].

    valid   ValidData           IN/OUT  codes, y (class index; a row is predicted class 1 iff its margin > 0),
                                        p (validation weights, sum 1) IN; margin (float64[n_val], updated as the
                                        raw-X prediction adds rounds) IN/OUT
    stump   ROUND_DTYPE record  IN      the stump (feature, bin, missing_left, left, right, categorical, cat_left)
    """
    codes_f = valid.codes[stump.feature]
    k = stump.bin
    missing_left = stump.missing_left
    left = stump.left
    right = stump.right
    categorical = stump.categorical != 0
    cat_left = stump.cat_left
    y = valid.y
    p = valid.p
    margin = valid.margin
    n = codes_f.shape[0]
    nb = -(-n // BLOCK)
    for b in prange(nb):
        err = 0.0
        for i in range(*block_rows(b, n)):
            m = margin[i] + alpha * stump_output_code(codes_f[i], k, missing_left, missing_code, left, right,
                                                      categorical, cat_left)
            margin[i] = m
            if (m > 0.0) != (y[i] == 1):
                err += p[i]
        block_sums[b, 0] = err
    return block_total(block_sums, nb, 0)


@jit
def _table_block(w, p, leaf, y, factor, block_sums, need_s2, leaf_class, wrong, count, n, b):
    """update_weights_table over block b (its sum of w**2 / p and wrong-row count into block_sums[b]; the leaves
    as unsigned indices, like the rows: block_rows)."""
    s2 = 0.0
    n_wrong = 0
    if need_s2:
        for i in range(*block_rows(b, n)):
            wi = w[i] * factor[np.uint64(leaf[i]), y[i]]
            w[i] = wi
            if p[i] > 0.0:
                s2 += wi * wi / p[i]
    elif count:
        for i in range(*block_rows(b, n)):
            node = np.uint64(leaf[i])
            c = y[i]
            w[i] *= factor[node, c]
            bad = np.int8(leaf_class[node] != c)
            wrong[i] = bad
            n_wrong += bad
    else:
        for i in range(*block_rows(b, n)):
            w[i] *= factor[np.uint64(leaf[i]), y[i]]
    if count and need_s2:
        for i in range(*block_rows(b, n)):
            bad = np.int8(leaf_class[np.uint64(leaf[i])] != y[i])
            wrong[i] = bad
            n_wrong += bad
    block_sums[b, 0] = s2
    block_sums[b, 1] = n_wrong


@pjit
def update_weights_table(w, p, leaf, y, factor, block_sums, need_s2=True, leaf_class=NO_CLASSES, wrong=NO_MARKS):
    """w_i <- w_i * factor[leaf_i, y_i] in place (trees: factor = exp(-v_leaf y) / Z, or exp(-+alpha) / Z
    for a leaf that names / does not name the class).

    leaf    int64[n_samples]            IN  leaf node of each row
    factor  float64[n_nodes, n_classes] IN  per leaf and class multiplier, normaliser included
    leaf_class  int64[n_nodes] or empty IN  the class each leaf names: then wrong[i] = 1 where row i's leaf does
            not name its class (else 0; int8[n_samples] OUT) and block_sums[b, 1] counts those rows of block b
            (for incremental.wrong_rows)
    Returns sum_i w_i**2 / p_i over p_i > 0 after the update (0.0 without need_s2).
    """
    n = w.shape[0]
    nb = -(-n // BLOCK)
    count = leaf_class.shape[0] > 0
    if nb == 1:  # (one block: on the calling thread, no parallel launch)
        _table_block(w, p, leaf, y, factor, block_sums, need_s2, leaf_class, wrong, count, n, np.uint64(0))
    else:
        for b in prange(nb):
            _table_block(w, p, leaf, y, factor, block_sums, need_s2, leaf_class, wrong, count, n, np.uint64(b))
    return block_total(block_sums, nb, 0) if need_s2 else 0.0


@pjit
def update_residuals_leaves(r, p, leaf, factor, alpha, block_sums):
    """r_i <- r_i - alpha * v_leaf(i) in place, v = factor[:, 0] (QuadBoost's least-squares trees).

    Returns (the risk sum_i p_i r_i**2 after the update, 0.0).
    """
    n = r.shape[0]
    nb = -(-n // BLOCK)
    for b in prange(nb):
        risk = 0.0
        for i in range(*block_rows(b, n)):
            ri = r[i] - alpha * factor[leaf[i], 0]
            r[i] = ri
            risk += p[i] * ri * ri
        block_sums[b, 0] = risk
    return block_total(block_sums, nb, 0), 0.0


@pjit
def update_pair_weights(q, w, leaf, y, factor):
    """AdaBoost.MH: the pair weights q[i K + k] <- q[i K + k] * factor[leaf_i, k] where k is row i's class y_i,
    else * factor[leaf_i, K + k]; then w_i <- q[i K + y_i] (the learner's weight of the row: its own class's
    pair). Each entry is its own product, so the result does not depend on the thread count.

    q       float64[n_samples * K]  IN/OUT
    w       float64[n_samples]      OUT
    leaf    int64[n_samples]        IN  leaf node of each row
    factor  float64[n_nodes, 2 K]   IN  per leaf: exp(-alpha v_k) / Z (y = +1), then exp(alpha v_k) / Z (y = -1)
    """
    n = w.shape[0]
    n_classes = factor.shape[1] // 2
    nb = -(-n // BLOCK)
    for b in prange(nb):
        for i in range(*block_rows(b, n)):
            node = leaf[i]
            c = y[i]
            base = i * np.uint64(n_classes)
            own = q[base + c] * factor[node, c]
            for k in range(n_classes):  # every pair as another class's, then the row's own (no branch on k == c)
                q[base + np.uint64(k)] *= factor[node, n_classes + k]
            q[base + c] = own
            w[i] = own


#: below this s, log1p(s) is its series to s**5 / 5 (relative error under 2e-16), above it log(1 + s) (relative
#: error under 1e-13): both cheaper than log1p
SMALL_S = 1e-3
#: update_logistic_pairs sums the log(1 + exp(-|m|)) of pairs of rows of one p in one logarithm, up to this many
LOSS_PRODUCT = 512


@jit(inline="always")
def _log1p(s):
    """log(1 + s) for s >= 0, to about 1e-13 relative (see SMALL_S)."""
    if s < SMALL_S:
        return s * (1.0 - s * (0.5 - s * (1.0 / 3.0 - s * (0.25 - s * 0.2))))
    return np.log(1.0 + s)


@jit
def _logistic_block(q, margin, p, leaf, y, step, n_classes, block_sums, n, b):
    """update_logistic_pairs' first pass over block b: its sums of p sigma(-m) and of p log(1 + exp(-m)) into
    block_sums[b, 0] and [b, 1]. log(1 + exp(-m)) = log(1 + a) + max(-m, 0) with a = exp(-|m|) <= 1 (no
    overflow either way). Consecutive pairs of rows of the same p (all rows without sample weights) share their
    log(1 + a) terms in one logarithm of 1 + s for up to LOSS_PRODUCT of them, s = prod (1 + a) - 1 summed as
    s <- s + a (1 + s) (no cancellation: a well classified row's tiny loss is kept); a row of another p starts a
    new run. One logarithm a row, or a pair with two classes, took about half of this pass."""
    total = 0.0
    loss = 0.0
    run_p = 0.0  # the p of the current run of rows, its sum of log(1 + exp(-m)) but the open product's
    run_ell = 0.0
    s = 0.0
    terms = 0  # in the open product
    # (signed indices and b as the parallel loop hands it over: 200 000 rows x 3 classes took 3.4 ms a pass here,
    # against 5.0 ms with every index unsigned and 5.3 ms with b cast to int64 or uint64 first)
    for i in range(b * BLOCK, min(n, (b + 1) * BLOCK)):
        node = leaf[i]
        c = y[i]
        pi = p[i]
        if pi != run_p:
            loss += run_p * (run_ell + _log1p(s))
            run_p = pi
            run_ell = 0.0
            s = 0.0
            terms = 0
        base = i * n_classes
        g_sum = 0.0
        for k in range(n_classes):
            j = base + k
            d = step[node, k]
            m = margin[j] + (d if k == c else -d)
            margin[j] = m
            a = np.exp(-abs(m))
            g = a / (1.0 + a) if m > 0.0 else 1.0 / (1.0 + a)  # sigma(-m)
            q[j] = pi * g
            g_sum += g
            s += a * (1.0 + s)
            run_ell += max(-m, 0.0)
            terms += 1
            if terms == LOSS_PRODUCT:  # (a product of up to 2**512: far from overflowing)
                run_ell += _log1p(s)
                s = 0.0
                terms = 0
        total += pi * g_sum
    block_sums[b, 0] = total
    block_sums[b, 1] = loss + run_p * (run_ell + _log1p(s))


@jit
def _scale_pairs_block(q, w, y, scale, n_classes, n, b):
    """update_logistic_pairs' second pass over block b: q *= scale, and (K > 1) each row's own pair into w."""
    kk = np.uint64(n_classes)
    for i in range(*block_rows(b, n)):
        base = i * kk
        for k in range(n_classes):
            q[base + np.uint64(k)] *= scale
        if n_classes > 1:
            w[i] = q[base + y[i]]


@pjit
def update_logistic_pairs(q, w, margin, p, leaf, y, step, block_sums):
    """Boosting on the logistic loss: each (row, class) pair's margin m_ik = y_ik F_k(x_i) moves by +step[leaf_i, k]
    when k is the row's class y_i, else by -step[leaf_i, k]; its weight becomes q_ik = p_i sigma(-m_ik),
    sigma(z) = 1 / (1 + exp(-z)), normalised to sum 1. AdaBoost.MH (K classes): step = alpha v_k, and
    w_i = q[i K + y_i] (the learner's weight of the row: its own class's pair). Two classes (K = 1, one margin
    a row, y = +1 for class 1): step = -alpha v of each leaf, and q is w itself. Blocks of rows on the threads,
    each block's sums added in block order, so the result does not depend on the thread count.

    q       float64[n_samples * K]  OUT
    w       float64[n_samples]      OUT (K > 1)
    margin  float64[n_samples * K]  IN/OUT
    p       float64[n_samples]      IN  the sample distribution (sum 1)
    leaf    int64[n_samples]        IN  leaf node of each row
    step    float64[n_nodes, >= K]  IN  per leaf and class (the first K columns)
    Returns the mean pair loss after the update, sum_i p_i (1/K) sum_k log(1 + exp(-m_ik)).
    """
    n = w.shape[0]
    n_classes = margin.shape[0] // n if n > 0 else 1
    nb = -(-n // BLOCK)
    if nb == 1:  # (one block: on the calling thread, no parallel launch)
        _logistic_block(q, margin, p, leaf, y, step, n_classes, block_sums, n, 0)
    else:
        for b in prange(nb):
            _logistic_block(q, margin, p, leaf, y, step, n_classes, block_sums, n, b)
    total = block_total(block_sums, nb, 0)
    loss = block_total(block_sums, nb, 1)
    scale = 1.0 / total if total > 0.0 else 1.0  # (0: every pair's weight underflowed; nothing left to weigh)
    if nb == 1:
        _scale_pairs_block(q, w, y, scale, n_classes, n, np.uint64(0))
    else:
        for b in prange(nb):
            _scale_pairs_block(q, w, y, scale, n_classes, n, np.uint64(b))
    return loss / n_classes


# ----------------------------------------------------------------------------- the transforms' row passes
@jit
def _variance_block(w, p, lam, u, n, b):
    for i in range(*block_rows(b, n)):
        if p[i] > 0.0:
            u[i] = lam * w[i] * w[i] / p[i] + (1.0 - lam) * w[i]
        else:
            u[i] = 0.0


@pjit
def variance_weights(w, p, lam, u):
    """u_i = lam w_i**2 / p_i + (1 - lam) w_i (0 where p_i = 0): VadaBoost's learner weights, blocks of rows on the
    threads (one block on the calling thread)."""
    n = w.shape[0]
    nb = -(-n // BLOCK)
    if nb == 1:
        _variance_block(w, p, lam, u, n, np.uint64(0))
    else:
        for b in prange(nb):
            _variance_block(w, p, lam, u, n, np.uint64(b))


@jit
def _squares_block(w, p, u, q, n, b):
    for i in range(*block_rows(b, n)):
        u[i] = w[i]
        q[i] = w[i] * w[i] / p[i] if p[i] > 0.0 else 0.0


@pjit
def squared_weights(w, p, u, q):
    """u = w and q_i = w_i**2 / p_i (0 where p_i = 0): EBBoost's two histograms' weights, as variance_weights."""
    n = w.shape[0]
    nb = -(-n // BLOCK)
    if nb == 1:
        _squares_block(w, p, u, q, n, np.uint64(0))
    else:
        for b in prange(nb):
            _squares_block(w, p, u, q, n, np.uint64(b))


@jit
def _residual_block(r, p, ylab, u, q, with_q, n, b):
    for i in range(*block_rows(b, n)):
        ri = r[i]
        ylab[i] = 1 if ri > 0.0 else 0
        u[i] = p[i] * abs(ri)
        if with_q:
            q[i] = p[i]


@pjit
def residual_weights(r, p, ylab, u, q):
    """The residuals r as a weighted classification: ylab_i = 1 where r_i > 0 (else 0), u_i = p_i |r_i|, and q = p
    when q has a row's room for every row (QuadBoost's), as variance_weights."""
    n = r.shape[0]
    nb = -(-n // BLOCK)
    with_q = q.shape[0] == n
    if nb == 1:
        _residual_block(r, p, ylab, u, q, with_q, n, np.uint64(0))
    else:
        for b in prange(nb):
            _residual_block(r, p, ylab, u, q, with_q, n, np.uint64(b))
