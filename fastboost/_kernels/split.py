"""All split search: decision stumps and tree nodes, from histograms.

Side impurities (error, Gini, the confidence-rated Z, least squares) are defined once,
at the top; the stump scan (with EBBoost's exact criterion and the feature ranking of
lazy stumps) and the tree-node scans (two classes with scalar sums, K classes) use them.
``tree.py`` grows trees and calls :func:`level_splits` and :func:`best_feature` only.

A stump on feature f at bin k sends non-missing codes ``<= k`` left and the
missing code to the side given by ``missing_left``; each side outputs -1 or +1.
Candidates need positive learner weight on both sides. For each threshold the
missing-left option is tried before missing-right; among equal criterion values
the lowest feature, then the lowest bin, then missing-left wins. "Equal" allows
for rounding: the same partition reached through different bins or features
sums its weights in a different order, so a later candidate must beat the best
by more than ``TIE_RTOL`` times the total weight.

A categorical feature's split sends a set of categories left. Its categories with
weight are ordered by their share of class 1 (least squares: their mean residual;
K classes: by the share of each class in turn) and the ordered histogram is scanned
as a numeric feature's: the best set is a prefix of that order, which for two
classes is the best of all subsets (Breiman et al. 1984; LightGBM and scikit-learn
do the same). The scans return the prefix length minus one as ``bin`` (K classes:
plus ``n_bins`` times the class of the order); :func:`categorical_left_set` turns
it into the set.

Monotone constraints (``mono`` +1 / -1 for a feature, 0 for none; categorical features are never
constrained) admit only the candidates whose sides' outputs follow the direction: a stump's left output
<= its right one for +1 (>= for -1), with the outputs it would get (the heavier class; EBBoost's polarity);
a tree node's split with its sides' leaf values so ordered (:func:`side_value`: discrete leaves their
class index, confidence-rated and least-squares leaves their value). ``tree.choose_level`` then bounds the
children's leaves (LightGBM's intermediate bounds) so that the whole tree keeps the order. AdaBoost's binary
stumps may also step back (:func:`best_back_step`): a stump of the forbidden polarity at a threshold where the
stumps before it stepped in the allowed direction, its step capped at theirs (the loop caps the step at the
bound the learner reports, ``sums.max_step``).
"""
import numpy as np
from llvmlite import ir as llvm_ir
from numba import carray, prange, types
from numba.extending import intrinsic

from .._config import jit, pjit
from .._types import (
    CRITERION_EB,
    CRITERION_ERROR,
    CRITERION_GINI,
    CRITERION_LS,
    CRITERION_MH,
    CRITERION_Z,
    LEAF_LSQ,
    LEAF_REAL,
)

TIE_RTOL = 1e-12
#: no monotone constraint on any feature (a ``direction`` of length 0)
NO_CONSTRAINTS = np.zeros(0, np.int8)
#: the binary error scan's scratch (5 rows of candidates) lives on the stack up to this many bins
SCAN_STACK_BINS = 256


@intrinsic
def _scan_scratch(typingctx):
    """A pointer to 5 * SCAN_STACK_BINS float64 in the calling function's stack frame (a slot of its entry block,
    not an allocation per call: a scan runs for every feature of every node, and allocating and freeing its
    10 KB scratch took about a fifth of a scan's time)."""
    def codegen(context, builder, signature, args):
        f64 = context.get_value_type(types.float64)
        with builder.goto_entry_block():  # (numba's alloca_once would also fill it with zeros at every call)
            slot = builder.alloca(llvm_ir.ArrayType(f64, 5 * SCAN_STACK_BINS))
        return builder.bitcast(slot, f64.as_pointer())

    return types.CPointer(types.float64)(), codegen


# ----------------------------------------------------------------------------- impurity of one side
@jit(inline="always")
def _impurity_mh(c, n_classes):
    """impurity() of AdaBoost.MH: sum_k 2 sqrt(W+_k W-_k) (inline: also the K-class scan's, _split_value_mh)."""
    z = 0.0
    for k in range(n_classes):
        z += 2.0 * np.sqrt(max(c[k], 0.0) * max(c[n_classes + 1 + k], 0.0))
    return z


@jit
def impurity(c, n_classes, criterion):
    """Weighted impurity of one side with class weights c[:n_classes] (0 for no weight). AdaBoost.MH
    (CRITERION_MH): c[:n_classes] are W+_k, c[n_classes + 1 + k] W-_k (the pair weights (row, class k) of the
    rows of class k and of the other rows) and the impurity is sum_k 2 sqrt(W+_k W-_k)."""
    if criterion == CRITERION_MH:
        return _impurity_mh(c, n_classes)
    total = 0.0
    for k in range(n_classes):
        total += c[k]
    if total <= 0.0:
        return 0.0
    if criterion == CRITERION_GINI:
        s = 0.0
        for k in range(n_classes):
            s += c[k] * c[k]
        return total - s / total
    if criterion == CRITERION_Z:
        return 2.0 * np.sqrt(max(c[0], 0.0) * max(c[1], 0.0))
    if criterion == CRITERION_LS:
        s1 = c[1] - c[0]
        return -s1 * s1 / c[n_classes + 1] if c[n_classes + 1] > 0.0 else 0.0
    top = c[0]
    for k in range(1, n_classes):
        top = max(top, c[k])
    return total - top


@jit
def impurity2(c0, c1, criterion, pw):
    """impurity() for two classes, on scalars (pw: the side's sum of p, least squares only)."""
    if criterion == CRITERION_LS:
        return -(c1 - c0) * (c1 - c0) / pw if pw > 0.0 else 0.0
    total = c0 + c1
    if total <= 0.0:
        return 0.0
    if criterion == CRITERION_GINI:
        return 2.0 * c0 * c1 / total
    if criterion == CRITERION_Z:
        return 2.0 * np.sqrt(max(c0, 0.0) * max(c1, 0.0))
    return min(c0, c1)


@jit
def stump_criterion(l0, l1, r0, r1, criterion):
    """Criterion of a split with class weights (l0, l1) left and (r0, r1) right; lower is better.

    error: weighted misclassification with each side predicting its heavier class;
    gini: weighted Gini impurity 2*l0*l1/(l0+l1) + 2*r0*r1/(r0+r1). (The same side impurity as the
    trees' binary nodes, :func:`impurity2`.)
    """
    return impurity2(l0, l1, criterion, 0.0) + impurity2(r0, r1, criterion, 0.0)


# ----------------------------------------------------------------------------- categorical features
@jit
def _category_key(h, cls, n_classes, criterion):
    """Sort key of one category's histogram row h: the share of class cls (least squares: the mean residual)."""
    if criterion == CRITERION_LS:
        return (h[1] - h[0]) / h[n_classes + 1]
    total = 0.0
    for k in range(n_classes):
        total += h[k]
    return h[cls] / total


@jit
def category_order(hist_f, n_value_bins, cls, n_classes, criterion, order):
    """Order the categories with weight by their key; return their number.

    hist_f  float64[n_bins, fields]  IN   (fields: class weights, then a count and least squares' sum of p)
    order   int64[n_bins]            OUT  order[:m] the categories with weight, by increasing key
                                          (ties: the lower code first)
    A category has weight when its class weights sum to more than TIE_RTOL times the feature's total
    (a subtracted histogram leaves rounding dust in empty bins).
    """
    total = 0.0
    for b in range(n_value_bins):
        for k in range(n_classes):
            total += hist_f[b, k]
    tol = TIE_RTOL * total
    m = 0
    for b in range(n_value_bins):
        w = 0.0
        for k in range(n_classes):
            w += hist_f[b, k]
        if w > tol and (criterion != CRITERION_LS or hist_f[b, n_classes + 1] > 0.0):
            order[m] = b
            m += 1
    keys = np.empty(m)
    for j in range(m):
        keys[j] = _category_key(hist_f[order[j]], cls, n_classes, criterion)
    rank = np.argsort(keys, kind="mergesort")
    picked = order[:m].copy()
    for j in range(m):
        order[j] = picked[rank[j]]
    return m


@jit
def ordered_histogram(hist_f, order, m, missing_code):
    """hist_f's rows order[:m] in that order, then zeros, and the missing row at missing_code."""
    out = np.zeros((missing_code + 1, hist_f.shape[1]))
    for j in range(m):
        out[j] = hist_f[order[j]]
    out[missing_code] = hist_f[missing_code]
    return out


@jit
def categorical_left_set(hist_f, n_value_bins, missing_code, n_classes, criterion, k, cat_left):
    """The set of categories a categorical scan's answer ``k`` sends left, as a bitset.

    hist_f    the histogram the scan read  IN
    k         the scan's bin: rank of the last category of the prefix (+ n_bins * class, K classes)
    cat_left  uint64[CAT_WORDS]  OUT
    """
    n_bins = missing_code + 1
    cls = k // n_bins if n_classes > 2 else 1
    rank = k % n_bins
    order = np.empty(n_bins, np.int64)
    category_order(hist_f, n_value_bins, cls, n_classes, criterion, order)
    cat_left[:] = 0
    for j in range(rank + 1):
        c = order[j]
        cat_left[c >> 6] |= np.uint64(1) << np.uint64(c & 63)


@jit
def category_in(c, cat_left):
    """1 if code c is in the bitset cat_left."""
    return (cat_left[c >> 6] >> np.uint64(c & 63)) & np.uint64(1)


# ----------------------------------------------------------------------------- stumps
@jit
def eb_terms(l0, l1, lq0, lq1, r0, r1, rq0, rq1, lam):
    """EBBoost's (A, B, W_I, W_J) for the stump predicting -1 left and +1 right (docs/algorithms.md, "EBBoost").

    W: sums of w per side and class; Q: sums of w**2 / p (n w**2 for uniform p).
    A = (1 - lam) W_I**2 + lam Q_I, B likewise on the wrong side J.
    """
    wi = l0 + r1
    wj = l1 + r0
    a = (1.0 - lam) * wi * wi + lam * (lq0 + rq1)
    b = (1.0 - lam) * wj * wj + lam * (lq1 + rq0)
    return a, b, wi, wj


@jit
def eb_criterion(l0, l1, lq0, lq1, r0, r1, rq0, rq1, lam):
    """EBBoost's optimal cost factor V* = 2 sqrt(A B) + 2 (1 - lam) W_I W_J; symmetric in the polarity."""
    a, b, wi, wj = eb_terms(l0, l1, lq0, lq1, r0, r1, rq0, rq1, lam)
    return 2.0 * np.sqrt(max(a * b, 0.0)) + 2.0 * (1.0 - lam) * wi * wj


@jit
def leaf_value(c0, c1):
    """Output of a side: +1 if class 1 is strictly heavier, else -1 (ties go to class 0, as argmax)."""
    return 1 if c1 > c0 else -1


@jit
def best_split_one_feature(hist_f, n_value_bins, missing_code, criterion, categorical=False, mono=0):
    """Best (criterion, bin, missing_left) of one feature; criterion is inf when none is valid.

    hist_f        float64[n_bins, 2]   IN
    n_value_bins  number of non-missing bins of the feature
    categorical   the feature is categorical: bin is the rank of the last category sent left
    mono          the feature's monotone constraint (+1, -1; 0: none): only stumps whose outputs follow it
    """
    return best_split_one_feature_q(hist_f, hist_f, n_value_bins, missing_code, criterion, 0.0, categorical, mono)


@jit
def best_split_one_feature_q(hist_f, histq_f, n_value_bins, missing_code, criterion, lam, categorical, mono,
                             criteria=True):
    """As :func:`best_split_one_feature`; with ``criterion == CRITERION_EB`` also reads histq_f.

    histq_f  float64[n_bins, 2]  IN  per-class sums of w**2 / p (read only for CRITERION_EB)
    lam      EBBoost's lambda (ignored by the other criteria)
    criteria None where criterion is CRITERION_ERROR and mono 0 (numba compiles only that scan), True for any
    """
    if categorical is None or not categorical:  # (None: the fit has no categorical feature, nothing below compiles)
        return _scan_stump(hist_f, histq_f, n_value_bins, missing_code, criterion, lam, mono, criteria)
    order = np.empty(missing_code + 1, np.int64)
    m = category_order(hist_f, n_value_bins, 1, 2, criterion, order)
    hq = ordered_histogram(histq_f, order, m, missing_code) if criterion == CRITERION_EB else histq_f
    return _scan_stump(ordered_histogram(hist_f, order, m, missing_code), hq, m, missing_code, criterion, lam, 0,
                       criteria)


@jit
def stump_outputs(l0, l1, lq0, lq1, r0, r1, rq0, rq1, lam, criterion):
    """The (left, right) outputs a stump with these sides' class weights (and, EBBoost, sums of q) gets: each
    side's heavier class; EBBoost's polarity that makes A >= B (as :func:`stump_from_feature_splits`)."""
    if criterion == CRITERION_EB:
        a, b, wi, wj = eb_terms(l0, l1, lq0, lq1, r0, r1, rq0, rq1, lam)
        left = -1 if a >= b else 1
        return left, -left
    return leaf_value(l0, l1), leaf_value(r0, r1)


@jit
def _stump_follows(l0, l1, lq0, lq1, r0, r1, rq0, rq1, lam, criterion, mono):
    """Whether the stump with these sides follows the monotone constraint mono (always for mono 0)."""
    if mono == 0:
        return True
    left, right = stump_outputs(l0, l1, lq0, lq1, r0, r1, rq0, rq1, lam, criterion)
    return mono * (right - left) >= 0


@jit
def binary_totals(hist_f, n_value_bins, missing_code):
    """(m0, m1, t0, t1): a binary histogram's class weights in the missing bin and summed over the value bins
    0 .. n_value_bins - 1 in order (every scan's starting point)."""
    t0 = 0.0
    t1 = 0.0
    for b in range(n_value_bins):
        t0 += hist_f[b, 0]
        t1 += hist_f[b, 1]
    return hist_f[missing_code, 0], hist_f[missing_code, 1], t0, t1


@jit
def _scan_stump(hist_f, histq_f, n_value_bins, missing_code, criterion, lam, mono, criteria):
    """The stump scan over the bins 0 .. n_value_bins - 1 in order (see best_split_one_feature_q); with mono
    != 0 only the candidates whose outputs follow the constraint. criteria None: the error criterion without a
    constraint, and only its scan is compiled."""
    if criteria is None or (criterion == CRITERION_ERROR and mono == 0):  # (None: the rest is not compiled)
        return _best_split_binary_error(hist_f, n_value_bins, missing_code, 0.0, False)
    eb = criterion == CRITERION_EB
    m0, m1, t0, t1 = binary_totals(hist_f, n_value_bins, missing_code)
    mq0, mq1, tq0, tq1 = binary_totals(histq_f, n_value_bins, missing_code) if eb else (0.0, 0.0, 0.0, 0.0)
    total = t0 + t1 + m0 + m1
    tol = TIE_RTOL * (total * total if eb else total)
    no_missing = m0 == 0.0 and m1 == 0.0 and mq0 == 0.0 and mq1 == 0.0  # (as in _best_split_binary)
    best = np.inf
    best_bin = -1
    best_ml = 1
    l0 = 0.0
    l1 = 0.0
    lq0 = 0.0
    lq1 = 0.0
    for k in range(n_value_bins):
        h0 = hist_f[k, 0]
        h1 = hist_f[k, 1]
        hq0 = histq_f[k, 0] if eb else 0.0
        hq1 = histq_f[k, 1] if eb else 0.0
        if k > 0 and h0 == 0.0 and h1 == 0.0 and hq0 == 0.0 and hq1 == 0.0:
            continue  # the sides of the bin before (as in _best_split_binary)
        l0 += h0
        l1 += h1
        lq0 += hq0
        lq1 += hq1
        r0 = t0 - l0
        r1 = t1 - l1
        if k < n_value_bins - 1:  # missing left (for k == last, everything would go left)
            a0 = l0 + m0
            a1 = l1 + m1
            if a0 + a1 > 0.0 and r0 + r1 > 0.0 and _stump_follows(a0, a1, lq0 + mq0, lq1 + mq1, r0, r1, tq0 - lq0,
                                                                  tq1 - lq1, lam, criterion, mono):
                if eb:
                    v = eb_criterion(a0, a1, lq0 + mq0, lq1 + mq1, r0, r1, tq0 - lq0, tq1 - lq1, lam)
                else:
                    v = stump_criterion(a0, a1, r0, r1, criterion)
                if v < best - tol:
                    best = v
                    best_bin = k
                    best_ml = 1
        if no_missing:
            continue
        b0 = r0 + m0
        b1 = r1 + m1
        if l0 + l1 > 0.0 and b0 + b1 > 0.0 and _stump_follows(l0, l1, lq0, lq1, b0, b1, tq0 - lq0 + mq0,
                                                              tq1 - lq1 + mq1, lam, criterion, mono):  # missing right
            if eb:
                v = eb_criterion(l0, l1, lq0, lq1, b0, b1, tq0 - lq0 + mq0, tq1 - lq1 + mq1, lam)
            else:
                v = stump_criterion(l0, l1, b0, b1, criterion)
            if v < best - tol:
                best = v
                best_bin = k
                best_ml = 0
    if best_bin >= 0 and m0 + m1 == 0.0:
        # no weight on missing values: send them (at prediction) to the heavier side
        lw = 0.0
        for b in range(best_bin + 1):
            lw += hist_f[b, 0] + hist_f[b, 1]
        best_ml = 1 if lw >= t0 + t1 - lw else 0
    return best, best_bin, best_ml


@jit
def best_split_per_feature(hist, n_value_bins, categorical, missing_code, criterion, value, bin_, missing_left):
    """Per-feature best stumps, threads over features.

    hist          float64[n_features, n_bins, 2]  IN
    n_value_bins  int64[n_features]               IN
    categorical   uint8[n_features] or None       IN  1 for categorical features (None: none is)
    value         float64[n_features]             OUT criterion (inf: no valid split)
    bin_          int64[n_features]               OUT
    missing_left  int64[n_features]               OUT
    """
    best_split_per_feature_q(hist, hist, n_value_bins, categorical, missing_code, criterion, 0.0, value, bin_,
                             missing_left, NO_CONSTRAINTS, np.arange(hist.shape[0]))


@jit
def feature_direction(direction, f):
    """Feature f's monotone constraint (+1, -1, 0) from direction (int8[n_features], or length 0: none)."""
    return np.int64(direction[f]) if direction.shape[0] > 0 else np.int64(0)


@pjit
def best_split_per_feature_q(hist, histq, n_value_bins, categorical, missing_code, criterion, lam, value, bin_,
                             missing_left, direction, feats):
    """As :func:`best_split_per_feature` for the features feats (int64[k], increasing; value inf for the others),
    each with its monotone constraint (direction: int8[n_features], or length 0: none); EBBoost's criterion also
    reads histq (see best_split_one_feature_q)."""
    if feats.shape[0] < hist.shape[0]:
        value[:] = np.inf
    for p in prange(feats.shape[0]):
        f = feats[p]
        mono = feature_direction(direction, f)
        if categorical is None:  # no categorical feature in the fit: the categories' scan is not compiled
            v, b, ml = best_split_one_feature_q(hist[f], histq[f], n_value_bins[f], missing_code, criterion, lam,
                                                None, mono)
        else:
            v, b, ml = best_split_one_feature_q(hist[f], histq[f], n_value_bins[f], missing_code, criterion, lam,
                                                categorical[f] != 0, mono)
        value[f] = v
        bin_[f] = b
        missing_left[f] = ml


@jit
def rescan_constrained(hist, n_value_bins, missing_code, criterion, direction, feats, value, bin_, missing_left):
    """The constrained features' best stumps again, with their constraint (after a search without constraints,
    ``histogram.histograms_and_splits``), among the round's features feats (int64[k]; the others' histograms
    are not built): value, bin_, missing_left [n_features] IN/OUT."""
    for p in range(feats.shape[0]):
        f = feats[p]
        mono = np.int64(direction[f])
        if mono != 0:
            v, b, ml = best_split_one_feature_q(hist[f], hist[f], n_value_bins[f], missing_code, criterion, 0.0, None,
                                                mono)
            value[f] = v
            bin_[f] = b
            missing_left[f] = ml


@jit
def side_weights(hist_f, k, missing_left, missing_code):
    """Class weights (l0, l1, r0, r1) of the stump (k, missing_left) on one feature's histogram."""
    l0 = 0.0
    l1 = 0.0
    r0 = 0.0
    r1 = 0.0
    for b in range(missing_code):
        if b <= k:
            l0 += hist_f[b, 0]
            l1 += hist_f[b, 1]
        else:
            r0 += hist_f[b, 0]
            r1 += hist_f[b, 1]
    if missing_left:
        l0 += hist_f[missing_code, 0]
        l1 += hist_f[missing_code, 1]
    else:
        r0 += hist_f[missing_code, 0]
        r1 += hist_f[missing_code, 1]
    return l0, l1, r0, r1


@jit
def best_feature(value, total):
    """Index of the smallest criterion (lowest index among ties, see TIE_RTOL); -1 if none is finite.

    total: the learner weights' sum, the scale of the criterion values.
    """
    tol = TIE_RTOL * total
    best = np.inf
    best_f = -1
    for f in range(value.shape[0]):
        if value[f] < best - tol:
            best = value[f]
            best_f = f
    return best_f


@jit
def kth_best_feature(value, total, k):
    """Index of the k-th smallest criterion value (k >= 1; ties by lowest index, as best_feature).

    Features with no valid split (inf) are never ranked; k beyond the number of
    ranked features gives the last ranked one; -1 if none is finite.
    value  float64[n_features]  IN/OUT  ranked entries are overwritten with inf
    """
    best_f = best_feature(value, total)
    for _ in range(k - 1):
        if best_f < 0:
            break
        value[best_f] = np.inf
        nxt = best_feature(value, total)
        if nxt < 0:
            break
        best_f = nxt
    return best_f


@jit
def choose_stump(st, n_value_bins, categorical, thresholds, config, cat_left, direction, feats):
    """The round's stump from its histograms: per-feature search, the feature_rank-th best feature, sides.

    st           StumpScratch  IN  hist, histq float64[n_features, n_bins, 2] (histq: w**2 / p sums, read by
                 CRITERION_EB only); fvalue, fbin, fmissing_left scratch [n_features]
    n_value_bins, thresholds  IN  the features' (TrainData's)
    categorical  uint8[n_features] or None  IN  1 for categorical features (None: none is)
    config       the fit's configuration (missing_code, criterion, lam, feature_rank)  IN
    cat_left     uint64[CAT_WORDS]  OUT  a categorical stump's left set (zeros otherwise)
    direction    int8[n_features or 0]  IN  monotone constraints (length 0: none; module docstring)
    feats        int64[k >= 1]  IN  the features the stump may use (increasing; only their histograms are read)
    Returns (feature, bin, missing_left, left, right, threshold, Q_I, Q_J, is_categorical): the sides'
    outputs are the heavier class (EBBoost: opposite, with the polarity that makes A >= B, so
    alpha >= 0); without any feature that splits the weighted rows, the constant hypothesis
    (feature 0, threshold inf). A categorical stump has threshold NaN and bin the size of its left
    set minus one.
    """
    best_split_per_feature_q(st.hist, st.histq, n_value_bins, categorical, config.missing_code, config.criterion,
                             config.lam, st.fvalue, st.fbin, st.fmissing_left, direction, feats)
    return stump_from_feature_splits(st, n_value_bins, categorical, thresholds, config, cat_left, direction, feats)


@jit
def stump_from_feature_splits(st, n_value_bins, categorical, thresholds, config, cat_left, direction, feats):
    """choose_stump after its per-feature search: st.fvalue, st.fbin, st.fmissing_left hold every feature's best
    split (``best_split_per_feature_q``, or the fused ``histogram.histograms_and_splits``); st.fvalue is
    overwritten."""
    hist = st.hist
    histq = st.histq
    fvalue = st.fvalue
    fbin = st.fbin
    fmissing_left = st.fmissing_left
    missing_code = config.missing_code
    criterion = config.criterion
    lam = config.lam
    feature_rank = config.feature_rank
    cat_left[:] = 0
    is_cat = False
    f0 = feats[0]  # class weights of all rows (any built feature's histogram holds them all)
    c0 = 0.0
    c1 = 0.0
    for b in range(missing_code + 1):
        c0 += hist[f0, b, 0]
        c1 += hist[f0, b, 1]
    f = kth_best_feature(fvalue, c0 + c1, feature_rank)
    qi = 0.0
    qj = 0.0
    if f < 0:
        f = 0
        k = missing_code - 1
        ml = 1
        left = leaf_value(c0, c1)
        if criterion == CRITERION_EB:  # the constant hypothesis with EBBoost's polarity (A >= B) and its Q sums
            q0 = 0.0
            q1 = 0.0
            for b in range(missing_code + 1):
                q0 += histq[f0, b, 0]
                q1 += histq[f0, b, 1]
            a, bb, wi, wj = eb_terms(0.0, 0.0, 0.0, 0.0, c0, c1, q0, q1, lam)  # +1 everywhere: "right" side
            left = 1 if a >= bb else -1
            qi = q1 if left > 0 else q0
            qj = q0 if left > 0 else q1
        right = left
        threshold = np.inf
    else:
        k = fbin[f]
        ml = fmissing_left[f]
        hf = hist[f]
        hqf = histq[f]
        if categorical is not None and categorical[f]:  # the sides in the scan's order of the categories
            is_cat = True
            order = np.empty(missing_code + 1, np.int64)
            m = category_order(hf, n_value_bins[f], 1, 2, criterion, order)
            hf = ordered_histogram(hist[f], order, m, missing_code)
            if criterion == CRITERION_EB:
                hqf = ordered_histogram(histq[f], order, m, missing_code)
            categorical_left_set(hist[f], n_value_bins[f], missing_code, 2, criterion, k, cat_left)
            threshold = np.nan
        else:
            threshold = thresholds[f, k]
        l0, l1, r0, r1 = side_weights(hf, k, ml, missing_code)
        if criterion == CRITERION_EB:
            lq0, lq1, rq0, rq1 = side_weights(hqf, k, ml, missing_code)
            a, b, wi, wj = eb_terms(l0, l1, lq0, lq1, r0, r1, rq0, rq1, lam)
            left = -1 if a >= b else 1
            right = -left
            qi = lq0 + rq1 if left < 0 else lq1 + rq0
            qj = lq1 + rq0 if left < 0 else lq0 + rq1
        else:
            left = leaf_value(l0, l1)
            right = leaf_value(r0, r1)
        mono = feature_direction(direction, f)
        if mono * (right - left) < 0:  # (a tie the scan's sums and these broke apart: the constant hypothesis)
            right = left
            if criterion == CRITERION_EB:
                qi = lq0 + rq0 if left < 0 else lq1 + rq1
                qj = lq1 + rq1 if left < 0 else lq0 + rq0
    return f, k, ml, left, right, threshold, qi, qj, is_cat


# ----------------------------------------------------------------------------- capped steps back (monotone stumps)
@jit
def step_loss(e, cap, learning_rate):
    """AdaBoost's loss factor Z = (1 - e) exp(-a) + e exp(a) after a binary stump of weighted error e (the weights
    summing to 1) at its step a = learning_rate / 2 log((1 - e) / e), at most cap; 1 (no progress) for e >= 1/2."""
    if not e < 0.5:
        return 1.0
    if not e > 0.0:
        return np.exp(-cap)  # (a perfect stump: its step is the cap; 0 without one)
    a = min(0.5 * learning_rate * np.log((1.0 - e) / e), cap)
    return (1.0 - e) * np.exp(-a) + e * np.exp(a)


@jit
def stump_wrong(hist_f, k, missing_left, missing_code, left, right, categorical, cat_left):
    """(the learner weight a binary stump gets wrong, the total) from its feature's histogram: the stump (k,
    missing_left) or, categorical, the set cat_left, with outputs left and right (-1 / +1; equal: constant)."""
    wrong = 0.0
    total = 0.0
    for b in range(missing_code + 1):
        c0 = hist_f[b, 0]
        c1 = hist_f[b, 1]
        total += c0 + c1
        if b == missing_code:
            go_left = missing_left != 0
        elif categorical:
            go_left = category_in(b, cat_left) != 0
        else:
            go_left = b <= k
        out = left if go_left else right
        wrong += c0 if out > 0 else c1
    return wrong, total


@jit
def best_back_step(hist, n_value_bins, missing_code, direction, credit, feats, learning_rate, z_best):
    """The best step back on a constrained feature: a stump of the polarity its constraint forbids (its sides'
    outputs their heavier class, as every stump's), at a bin k whose credit[f, k] > 0 (the steps the stumps
    before put at that threshold in the allowed direction), its step capped at that credit, so the jump of the
    score there stays >= 0. Candidates are scored by AdaBoost's loss factor at their capped step
    (:func:`step_loss`); one wins when its factor is below z_best (the round's stump's, uncapped) by more than
    TIE_RTOL, the first of equals in the order of the scan (features as feats, then bins, missing left first).

    hist    float64[n_features, n_bins, 2]  IN  the round's histograms (of the features feats)
    direction int8[n_features]; credit float64[n_features, n_bins]  IN  (Monotone's)
    Returns (feature, bin, missing_left, left, right, cap), feature -1 when no step back wins.
    """
    best = z_best
    bf = -1
    bk = 0
    bml = 0
    bl = 0
    br = 0
    bcap = np.inf
    for p in range(feats.shape[0]):
        f = feats[p]
        mono = np.int64(direction[f])
        if mono == 0:
            continue
        hf = hist[f]
        nv = n_value_bins[f]
        m0, m1, t0, t1 = binary_totals(hf, nv, missing_code)
        total = t0 + t1 + m0 + m1
        if not total > 0.0:
            continue
        missing = m0 + m1 > 0.0
        l0 = 0.0
        l1 = 0.0
        for k in range(nv):
            l0 += hf[k, 0]
            l1 += hf[k, 1]
            cap = credit[f, k]
            if not cap > 0.0:
                continue
            r0 = t0 - l0
            r1 = t1 - l1
            for ml in (1, 0):
                if ml == 1:
                    if not (missing and k < nv - 1):
                        continue
                    a0, a1, b0, b1 = l0 + m0, l1 + m1, r0, r1
                else:
                    a0, a1, b0, b1 = l0, l1, r0 + m0, r1 + m1
                if not (a0 + a1 > 0.0 and b0 + b1 > 0.0):
                    continue
                left = leaf_value(a0, a1)
                right = leaf_value(b0, b1)
                if mono * (right - left) >= 0:
                    continue
                wrong = (a0 if left > 0 else a1) + (b0 if right > 0 else b1)
                z = step_loss(wrong / total, cap, learning_rate)
                if z < best - TIE_RTOL:
                    best = z
                    bf, bk, bml, bl, br, bcap = f, k, ml, left, right, cap
    if bf >= 0 and not (hist[bf, missing_code, 0] + hist[bf, missing_code, 1] > 0.0):
        # no weight on missing values: send them (at prediction) to the heavier side, as every stump
        lw = 0.0
        tw = 0.0
        for b in range(n_value_bins[bf]):
            w = hist[bf, b, 0] + hist[bf, b, 1]
            tw += w
            if b <= bk:
                lw += w
        bml = 1 if lw >= tw - lw else 0
    return bf, bk, bml, bl, br, bcap


@jit
def add_credit(credit, direction, f, k, left, right, alpha):
    """After a stump (feature f, bin k, outputs left and right) with step alpha: credit[f, k] += direction[f]
    alpha (right - left) / 2 on a constrained feature, rounded down (the next float below the rounded sum), so
    credit stays at most the exact sum of the steps there and a step back capped by it never turns the
    exact jump of the score negative."""
    mono = np.int64(direction[f])
    if mono == 0 or left == right:
        return
    credit[f, k] = np.nextafter(credit[f, k] + mono * alpha * (right - left) / 2, -np.inf)


# ----------------------------------------------------------------------------- tree nodes
@jit(inline="always")  # (inline in _split_value_mh, the K-class scan's hot path)
def _side_ok(c, n_classes, min_leaf, min_weight, floor):
    """As _ok2, for K classes."""
    w = 0.0
    for k in range(n_classes):
        w += c[k]
    return (min_leaf <= 1 or c[n_classes] >= min_leaf) and w >= min_weight and w > floor


@jit
def _ok2(c0, c1, count, min_leaf, min_weight, floor):
    """A side is valid with weight above floor (the rounding dust a subtracted histogram leaves in empty
    bins), >= min_weight, and (min_leaf > 1) >= min_leaf weighted rows."""
    w = c0 + c1
    return (min_leaf <= 1 or count >= min_leaf) and w >= min_weight and w > floor


@jit(inline="always")  # (a call per candidate otherwise: the scan's hot path)
def _split_value2(a0, a1, ac, ap, b0, b1, bc, bp, criterion, min_leaf, min_weight, tol):
    """Criterion of a two-class split with sides (class weights, positive rows, sum of p) a and b; inf
    when a side is not valid."""
    if _ok2(a0, a1, ac, min_leaf, min_weight, tol) and _ok2(b0, b1, bc, min_leaf, min_weight, tol):
        return impurity2(a0, a1, criterion, ap) + impurity2(b0, b1, criterion, bp)
    return np.inf


@jit
def side_value(c0, c1, pw, leaf, delta):
    """The order of a binary tree side's leaf value as finish_leaves would set it, from its class weights (c0, c1),
    its sum of p (pw, least squares) and the leaves' smoothing delta: discrete leaves their class index (0, 1),
    confidence-rated ones log((c1 + delta) / (c0 + delta)) (their value over leaf_scale > 0), least-squares
    ones the mean residual."""
    if leaf == LEAF_REAL:
        return np.log((c1 + delta) / (c0 + delta))
    if leaf == LEAF_LSQ:
        return (c1 - c0) / pw if pw > 0.0 else 0.0
    return 1.0 if c1 > c0 else 0.0


@jit
def _in_order(a, b, mono):
    """Whether values a (left) and b (right) follow the monotone constraint mono (+1: a <= b, -1: a >= b)."""
    if mono > 0:
        return a <= b
    if mono < 0:
        return a >= b
    return True


@jit
def _follows2(a0, a1, ap, b0, b1, bp, mono, leaf, delta):
    """Whether a binary split with sides a (left) and b follows mono (always for mono 0)."""
    if mono == 0:
        return True
    return _in_order(side_value(a0, a1, ap, leaf, delta), side_value(b0, b1, bp, leaf, delta), mono)


@jit
def heaviest_class(c, n_classes):
    """The first class of largest weight in c[:n_classes] (a discrete K-class leaf's class)."""
    top = 0
    for k in range(1, n_classes):
        if c[k] > c[top]:
            top = k
    return top


@jit
def _classes_follow(a, b, n_classes, mono):
    """Whether a K-class split with sides a (left) and b follows mono: their heaviest classes in order of index."""
    return mono == 0 or _in_order(heaviest_class(a, n_classes), heaviest_class(b, n_classes), mono)


@jit
def _best_split_binary_error(hist_f, n_value_bins, missing_code, min_weight, dust):
    """The error criterion's binary scan without monotone constraints or a least row count (AdaBoost's stumps and
    trees at their defaults): the candidates, values and choice of _best_split_binary (dust True: a tree node's
    sides must outweigh the tie tolerance) or of _scan_stump (dust False: positive weight), bit for bit, in passes
    without data-dependent branches, which a sparse histogram's empty bins would make unpredictable:

    1. the prefix sums of the class weights (and of their sum, for the missing values' side);
    2. every candidate's value (inf where a side is not valid; missing-left at bin k in ``buf[3, k]``, missing-right
       in ``buf[4, k]``, tried after it);
    3. the choice. The scan's rule takes a candidate that beats the best so far by more than tol. If no candidate
       lies in (g, g + tol], g the least value, that rule ends at the first candidate of value g: every candidate
       before it is above g + tol, so it is taken, and none after it is below g - tol. Otherwise (near ties) the
       rule itself runs, skipping blocks of candidates that cannot beat the best.
    """
    n = n_value_bins
    if n <= 0:
        return np.inf, -1, 1
    nn = (n + 3) // 4 * 4
    # rows: per bin: the prefix sums l0, l1, l0 + l1, then the values vl, vr (indexed in place: a view per row
    # would cost two atomic reference counts each)
    if nn <= SCAN_STACK_BINS:
        buf = carray(_scan_scratch(), (5, nn))
    else:
        buf = np.empty((5, nn))
    m0 = hist_f[missing_code, 0]
    m1 = hist_f[missing_code, 1]
    l0 = 0.0
    l1 = 0.0
    lw = 0.0
    for k in range(n):
        h0 = hist_f[k, 0]
        h1 = hist_f[k, 1]
        l0 += h0
        l1 += h1
        lw += h0 + h1
        buf[0, k] = l0
        buf[1, k] = l1
        buf[2, k] = lw
    t0 = l0  # (binary_totals' sums: the same additions in the same order)
    t1 = l1
    tol = TIE_RTOL * (t0 + t1 + m0 + m1)
    floor = tol if dust else 0.0
    no_missing = m0 == 0.0 and m1 == 0.0
    for k in range(n):  # missing left
        r0 = t0 - buf[0, k]
        r1 = t1 - buf[1, k]
        a0 = buf[0, k] + m0
        a1 = buf[1, k] + m1
        wa = a0 + a1
        wb = r0 + r1
        v = min(a0, a1) + min(r0, r1)
        ok = (wa >= min_weight) & (wa > floor) & (wb >= min_weight) & (wb > floor)
        buf[3, k] = v if ok else np.inf
    buf[3, n - 1] = np.inf  # (everything would go left)
    for k in range(n, nn):
        buf[3, k] = np.inf
        buf[4, k] = np.inf
    if not no_missing:  # (without missing weight missing-right has missing-left's sides: never taken)
        for k in range(n):
            b0 = t0 - buf[0, k] + m0
            b1 = t1 - buf[1, k] + m1
            wa = buf[0, k] + buf[1, k]
            wb = b0 + b1
            v = min(buf[0, k], buf[1, k]) + min(b0, b1)
            ok = (wa >= min_weight) & (wa > floor) & (wb >= min_weight) & (wb > floor)
            buf[4, k] = v if ok else np.inf
    g0 = np.inf
    g1 = np.inf
    g2 = np.inf
    g3 = np.inf
    for k in range(0, nn, 4):
        g0 = min(g0, buf[3, k])
        g1 = min(g1, buf[3, k + 1])
        g2 = min(g2, buf[3, k + 2])
        g3 = min(g3, buf[3, k + 3])
    if not no_missing:
        for k in range(0, nn, 4):
            g0 = min(g0, buf[4, k])
            g1 = min(g1, buf[4, k + 1])
            g2 = min(g2, buf[4, k + 2])
            g3 = min(g3, buf[4, k + 3])
    g = min(min(g0, g1), min(g2, g3))
    best = np.inf
    best_bin = -1
    best_ml = 1
    if g < np.inf:
        hi = g + tol
        near = 0
        for k in range(n):
            near += 1 if (buf[3, k] > g) & (buf[3, k] <= hi) else 0
        if not no_missing:
            for k in range(n):
                near += 1 if (buf[4, k] > g) & (buf[4, k] <= hi) else 0
        if near == 0:
            best = g
            for k in range(n):
                if buf[3, k] == g:
                    best_bin = k
                    best_ml = 1
                    break
                if not no_missing and buf[4, k] == g:  # (row 4 is not written without missing weight)
                    best_bin = k
                    best_ml = 0
                    break
        else:
            for k0 in range(0, nn, 4):
                low = min(min(buf[3, k0], buf[3, k0 + 1]), min(buf[3, k0 + 2], buf[3, k0 + 3]))
                if not no_missing:
                    low = min(low, min(min(buf[4, k0], buf[4, k0 + 1]), min(buf[4, k0 + 2], buf[4, k0 + 3])))
                if low >= best - tol:
                    continue
                for k in range(k0, k0 + 4):
                    if buf[3, k] < best - tol:
                        best, best_bin, best_ml = buf[3, k], k, 1
                    if not no_missing and buf[4, k] < best - tol:
                        best, best_bin, best_ml = buf[4, k], k, 0
    if best_bin >= 0 and ((m0 + m1 <= tol) if dust else (m0 + m1 == 0.0)):
        # no weight on missing values (a subtracted histogram's empty bin may hold rounding dust): they go (at
        # prediction) to the heavier side
        lw = buf[2, best_bin]
        best_ml = 1 if lw >= t0 + t1 - lw else 0
    return best, best_bin, best_ml


@jit
def _best_split_binary(hist_f, n_value_bins, missing_code, criterion, min_leaf, min_weight, mono, leaf, delta):
    """best_split_tree_feature for two classes with scalar accumulators (the common case, ~10x faster)."""
    if criterion == CRITERION_ERROR and mono == 0 and min_leaf <= 1:
        return _best_split_binary_error(hist_f, n_value_bins, missing_code, min_weight, True)
    ls = criterion == CRITERION_LS
    m0 = hist_f[missing_code, 0]
    m1 = hist_f[missing_code, 1]
    mc = hist_f[missing_code, 2]
    mp = hist_f[missing_code, 3] if ls else 0.0
    t0 = 0.0
    t1 = 0.0
    tc = 0.0
    tp = 0.0
    for b in range(n_value_bins):
        t0 += hist_f[b, 0]
        t1 += hist_f[b, 1]
        tc += hist_f[b, 2]
        if ls:
            tp += hist_f[b, 3]
    tol = TIE_RTOL * (t0 + t1 + m0 + m1)
    # No missing fields at all (exactly 0.0): missing-right has the same sides as missing-left at every bin (and an
    # empty right side at the last), so it is tried only where missing-left is not. A bin after the first whose
    # fields are all exactly 0.0 leaves the sides as they were at the bin before, whose candidates were tried: the
    # same values cannot beat best - tol, so it is skipped. Both give the splits of the full scan, bit for bit.
    no_missing = m0 == 0.0 and m1 == 0.0 and mc == 0.0 and mp == 0.0
    best = np.inf
    best_bin = -1
    best_ml = 1
    l0 = 0.0
    l1 = 0.0
    lc = 0.0
    lp = 0.0
    for k in range(n_value_bins):
        h0 = hist_f[k, 0]
        h1 = hist_f[k, 1]
        hc = hist_f[k, 2]
        hp = hist_f[k, 3] if ls else 0.0
        if k > 0 and h0 == 0.0 and h1 == 0.0 and hc == 0.0 and hp == 0.0:
            continue
        l0 += h0
        l1 += h1
        lc += hc
        lp += hp
        r0 = t0 - l0
        r1 = t1 - l1
        rc = tc - lc
        rp = tp - lp
        if k < n_value_bins - 1:  # missing left (for k == last, everything would go left)
            v = _split_value2(l0 + m0, l1 + m1, lc + mc, lp + mp, r0, r1, rc, rp, criterion, min_leaf, min_weight,
                              tol)
            if v < best - tol and _follows2(l0 + m0, l1 + m1, lp + mp, r0, r1, rp, mono, leaf, delta):
                best, best_bin, best_ml = v, k, 1
        if no_missing:
            continue
        v = _split_value2(l0, l1, lc, lp, r0 + m0, r1 + m1, rc + mc, rp + mp, criterion, min_leaf, min_weight, tol)
        if v < best - tol and _follows2(l0, l1, lp, r0 + m0, r1 + m1, rp + mp, mono, leaf, delta):  # missing right
            best, best_bin, best_ml = v, k, 0
    if best_bin >= 0 and m0 + m1 <= tol:  # (a subtracted histogram's empty bin may hold rounding dust)
        lw = 0.0
        for b in range(best_bin + 1):
            lw += hist_f[b, 0] + hist_f[b, 1]
        best_ml = 1 if lw >= t0 + t1 - lw else 0
    return best, best_bin, best_ml


@jit
def _split_value(a, b, n_classes, criterion, min_leaf, min_weight, tol):
    """As _split_value2 for K classes, sides a and b as field vectors (class weights, then the row count)."""
    if _side_ok(a, n_classes, min_leaf, min_weight, tol) and _side_ok(b, n_classes, min_leaf, min_weight, tol):
        return impurity(a, n_classes, criterion) + impurity(b, n_classes, criterion)
    return np.inf


@jit(inline="always")
def _split_value_k(a, b, n_classes, criterion, min_leaf, min_weight, tol):
    """_split_value in the K-class scan: AdaBoost.MH's inline (_split_value_mh), the others by a call."""
    if criterion == CRITERION_MH:
        return _split_value_mh(a, b, n_classes, min_leaf, min_weight, tol)
    return _split_value(a, b, n_classes, criterion, min_leaf, min_weight, tol)


@jit(inline="always")
def _split_value_mh(a, b, n_classes, min_leaf, min_weight, tol):
    """_split_value for AdaBoost.MH, inline in the scan: called as a function for every candidate, with its
    criterion tested inside impurity(), the K-class scan took about 100 ns a bin on 3 classes."""
    if _side_ok(a, n_classes, min_leaf, min_weight, tol) and _side_ok(b, n_classes, min_leaf, min_weight, tol):
        return _impurity_mh(a, n_classes) + _impurity_mh(b, n_classes)
    return np.inf


@jit
def best_split_tree_feature(hist_f, n_value_bins, missing_code, n_classes, criterion, min_leaf, min_weight,
                            categorical=False, mono=0, leaf=0, delta=0.0, kclass=True):
    """Best (criterion, bin, missing_left) of one feature of a node; criterion inf when no split is valid.

    hist_f  float64[n_bins, n_classes + 1]  IN
    categorical: scan the categories in the order of their class shares (module docstring)
    mono, leaf, delta: the feature's monotone constraint (0: none), the leaves' kind (LEAF_*) and smoothing:
    only splits whose sides' leaf values follow the constraint (:func:`side_value`; K classes: the sides'
    heaviest classes by index)
    kclass: None when the fit has two classes (only the binary scan is compiled), True otherwise
    """
    if categorical is None or not categorical:  # (None: as in best_split_one_feature_q)
        return _scan_tree_feature(hist_f, n_value_bins, missing_code, n_classes, criterion, min_leaf, min_weight,
                                  mono, leaf, delta, kclass)
    n_bins = missing_code + 1
    order = np.empty(n_bins, np.int64)
    tol = 0.0
    for b in range(n_bins):
        for c in range(n_classes):
            tol += hist_f[b, c]
    tol *= TIE_RTOL
    best = np.inf
    best_bin = -1
    best_ml = 1
    for cls in range(1 if n_classes == 2 else 0, n_classes):  # two classes: one order; K: one per class
        m = category_order(hist_f, n_value_bins, cls, n_classes, criterion, order)
        v, k, ml = _scan_tree_feature(ordered_histogram(hist_f, order, m, missing_code), m, missing_code,
                                      n_classes, criterion, min_leaf, min_weight, 0, leaf, delta, kclass)
        if v < best - tol:
            best = v
            best_bin = k + (cls * n_bins if n_classes > 2 else 0)
            best_ml = ml
    return best, best_bin, best_ml


@jit
def _scan_tree_feature(hist_f, n_value_bins, missing_code, n_classes, criterion, min_leaf, min_weight, mono, leaf,
                       delta, kclass):
    """The tree-node scan over the bins 0 .. n_value_bins - 1 in order (see best_split_tree_feature). kclass None:
    two classes, and only the binary scan is compiled."""
    if kclass is None or n_classes == 2:  # (None: the K-class scan below is not compiled)
        return _best_split_binary(hist_f, n_value_bins, missing_code, criterion, min_leaf, min_weight, mono, leaf,
                                  delta)
    nf = hist_f.shape[1]
    tot = np.zeros(nf)
    left = np.zeros(nf)
    a = np.empty(nf)
    b = np.empty(nf)
    for bb in range(n_value_bins):
        for k in range(nf):
            tot[k] += hist_f[bb, k]
    scale = 0.0
    for k in range(n_classes):
        scale += tot[k] + hist_f[missing_code, k]
    tol = TIE_RTOL * scale
    # no missing fields at all (exactly 0.0): both sides of missing-left and missing-right are the same sums, so
    # missing-right never beats missing-left at the same bin and is tried only where missing-left is not
    no_missing = True
    for k in range(nf):
        no_missing = no_missing and hist_f[missing_code, k] == 0.0
    best = np.inf
    best_bin = -1
    best_ml = 1
    for kb in range(n_value_bins):
        empty = kb > 0
        for k in range(nf):
            empty = empty and hist_f[kb, k] == 0.0
        if empty:
            continue  # the sides of the bin before (as in _best_split_binary)
        for k in range(nf):
            left[k] += hist_f[kb, k]
        if kb < n_value_bins - 1:  # missing left
            for k in range(nf):
                a[k] = left[k] + hist_f[missing_code, k]
                b[k] = tot[k] - left[k]
            v = _split_value_k(a, b, n_classes, criterion, min_leaf, min_weight, tol)
            if v < best - tol and _classes_follow(a, b, n_classes, mono):
                best, best_bin, best_ml = v, kb, 1
            if no_missing:
                continue
        for k in range(nf):  # missing right
            a[k] = left[k]
            b[k] = tot[k] - left[k] + hist_f[missing_code, k]
        v = _split_value_k(a, b, n_classes, criterion, min_leaf, min_weight, tol)
        if v < best - tol and _classes_follow(a, b, n_classes, mono):
            best, best_bin, best_ml = v, kb, 0
    mw = 0.0
    for k in range(n_classes):
        mw += hist_f[missing_code, k]
    if best_bin >= 0 and mw <= tol:  # (a subtracted histogram's empty bin may hold rounding dust)
        # no weighted missing rows here: missing values (zero-weight rows, prediction) go to the heavier side
        lw = 0.0
        for bb in range(best_bin + 1):
            for k in range(n_classes):
                lw += hist_f[bb, k]
        tw = 0.0
        for k in range(n_classes):
            tw += tot[k]
        best_ml = 1 if lw >= tw - lw else 0
    return best, best_bin, best_ml


@pjit
def level_splits(hist, n_nodes, active, n_value_bins, categorical, config, root_u, best, limits, kclass=True,
                 criteria=True):
    """Per-feature best splits of every active node of a level, threads over features (one launch per level).

    hist    float64[slots, n_features, n_bins, n_classes + 1]  IN   the level's node histograms
    categorical  uint8[n_features] or None  IN  1 for categorical features (None: none is)
    config  the fit's configuration (missing_code, n_classes, criterion, min_samples_leaf, leaf)  IN
    active  uint8[slots]  IN  1 for the nodes to split
    best    FeatureSplits  OUT  value, bin, missing_left [slots, n_features]: as best_split_per_feature, per node
            (value inf where the node may not split on the feature)
    limits  Limits  IN  limits.monotone.direction: monotone constraints (int8[n_features or 0], length 0: none);
            limits.sample.allowed: uint8[slots, n_features], 1 where node s may split on feature f
            (sampling.node_features)
    root_u  the root's weight, sum(u): min_weight_fraction_leaf and the leaves' smoothing scale it
    kclass  None: two classes (only the binary scan compiled); True: any number of classes
    criteria  None: two classes, the error criterion, no monotone constraint and min_samples_leaf 1 (a numeric
            feature's scan is then the error criterion's alone, and only it is compiled); True: any
    """
    min_weight = config.min_weight_fraction_leaf * root_u  # (root_weight's sum: tree[0].weight)
    delta = config.leaf_smoothing * root_u
    missing_code = config.missing_code
    n_classes = config.n_classes
    criterion = config.criterion
    min_leaf = config.min_samples_leaf
    leaf = config.leaf
    direction = limits.monotone.direction
    allowed = limits.sample.allowed
    value = best.value
    bin_ = best.bin
    missing_left = best.missing_left
    for f in prange(hist.shape[1]):
        mono = feature_direction(direction, f)
        for s in range(n_nodes):
            if not active[s]:
                continue
            if allowed[s, f] == 0:
                value[s, f] = np.inf
                continue
            if categorical is None and criteria is None:  # (None: the other criteria's scans are not compiled)
                v, bb, ml = _best_split_binary_error(hist[s, f], n_value_bins[f], missing_code, min_weight, True)
            elif categorical is None:  # no categorical feature in the fit: the categories' scan is not compiled
                v, bb, ml = best_split_tree_feature(hist[s, f], n_value_bins[f], missing_code, n_classes,
                                                    criterion, min_leaf, min_weight, None, mono, leaf, delta, kclass)
            else:
                v, bb, ml = best_split_tree_feature(hist[s, f], n_value_bins[f], missing_code, n_classes,
                                                    criterion, min_leaf, min_weight, categorical[f] != 0, mono, leaf,
                                                    delta, kclass)
            value[s, f] = v
            bin_[s, f] = bb
            missing_left[s, f] = ml


