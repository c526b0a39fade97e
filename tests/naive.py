"""Slow, obviously-correct pure-NumPy references for fastboost's kernels.

Written from the specification (module docstrings of ``fastboost._types``,
``fastboost._binning`` and ``fastboost._kernels``), not from the kernel code:
plain loops and NumPy one-liners, no prefix-sum tricks. The tests compare every
compiled kernel with the function here of the same name plus ``_naive``.

Conventions (as in the library):
- codes are ``uint8[n_features, n_samples]`` (uint16 in exact mode); NaN has ``missing_code`` (= max_bins;
  exact mode: the most value bins of any feature);
- y inside the kernels is a class index 0 (y = -1) / 1 (y = +1);
- a histogram is ``float64[n_features, n_bins, 2]`` (class-0 weight, class-1 weight);
- criterion 0 = "error", 1 = "gini".
"""
import math

import numpy as np

CRITERION_ERROR = 0
CRITERION_GINI = 1
ALPHA_EPS = 1e-10  # fastboost._algorithms: the wrong-side sum is floored at ALPHA_EPS * total
MIN_EDGE = 1e-10  # fastboost._algorithms: a relative edge (U_I - U_J) / (U_I + U_J) this small is chance


# ----------------------------------------------------------------------------- binning
def _midpoint(a, b):
    """A value e with a <= e < b between two distinct sorted neighbours (infinities allowed)."""
    a = float(a)
    b = float(b)
    assert a < b
    if a == -math.inf:
        return -math.inf  # only -inf itself is <= the edge
    if b == math.inf:
        return a  # only +inf itself is > the edge
    e = a / 2.0 + b / 2.0  # no overflow for huge finite values
    if not (a <= e < b):  # rounding at the ulp level (subnormals, neighbours)
        e = a
    return e


def bin_edges_naive(col, max_bins):
    """Bin edges of one feature's values (NaN ignored).

    - at most ``max_bins`` distinct values: one edge between every two consecutive
      distinct values (their midpoint), so each distinct value has its own bin;
    - more: for q = j / max_bins (j = 1 .. max_bins - 1), with m sorted values s and
      the CDF F(s[i]) = (i + 1) / m: lo = the first s[i] with F >= q, hi = the first with
      F > q; the edge is their midpoint (lo itself when equal), without duplicates and
      without an edge at or above the largest value.
    """
    col = np.asarray(col, dtype=np.float64)
    col = col[~np.isnan(col)]
    if col.size == 0:
        return np.empty(0, dtype=np.float64)
    distinct = sorted(set(col.tolist()))
    if len(distinct) <= max_bins:
        return np.array([_midpoint(distinct[i], distinct[i + 1]) for i in range(len(distinct) - 1)],
                        dtype=np.float64)
    s = np.sort(col)
    m = s.size
    edges = []
    for j in range(1, max_bins):
        target = float(m) * j / max_bins  # q * m: the rank where F reaches q
        lo = min(max(math.ceil(target) - 1, 0), m - 1)
        hi = min(math.floor(target), m - 1)
        e = s[lo] if s[lo] == s[hi] else _midpoint(s[lo], s[hi])
        if e < s[-1] and e not in edges:
            edges.append(e)
    return np.array(sorted(edges), dtype=np.float64)


def code_of_naive(x, edges):
    """Number of edges strictly below x (NaN handled by the caller)."""
    return sum(1 for e in edges if e < x)


def map_to_bins_naive(X, thresholds, n_edges, missing_code):
    """codes[f, i] = number of edges of feature f strictly below X[i, f]; NaN -> missing_code."""
    X = np.asarray(X, dtype=np.float64)
    n, d = X.shape
    codes = np.empty((d, n), dtype=np.uint8 if max(missing_code, np.max(n_edges, initial=0)) <= 255 else np.uint16)
    for f in range(d):
        edges = np.asarray(thresholds[f, : n_edges[f]], dtype=np.float64)
        col = X[:, f]
        c = np.searchsorted(edges, col, side="left")
        c[np.isnan(col)] = missing_code
        codes[f] = c
    return codes


# ----------------------------------------------------------------------------- histograms
def build_histograms_naive(codes, y, u, n_bins):
    """hist[f, b, c] = sum of u[i] over the rows i with codes[f, i] == b and y[i] == c."""
    codes = np.asarray(codes)
    y = np.asarray(y)
    u = np.asarray(u, dtype=np.float64)
    d = codes.shape[0]
    hist = np.zeros((d, n_bins, 2), dtype=np.float64)
    for f in range(d):
        for c in (0, 1):
            rows = y == c
            hist[f, :, c] = np.bincount(codes[f][rows].astype(np.int64), weights=u[rows], minlength=n_bins)
    return hist


# ----------------------------------------------------------------------------- stump search
def criterion_naive(l0, l1, r0, r1, criterion):
    if criterion == CRITERION_GINI:
        return 2.0 * l0 * l1 / (l0 + l1) + 2.0 * r0 * r1 / (r0 + r1)
    return min(l0, l1) + min(r0, r1)


def leaf_value_naive(c0, c1):
    """+1 if the class-1 weight is strictly greater than the class-0 weight, else -1."""
    return 1 if c1 > c0 else -1


def side_weights_naive(hist_f, k, missing_left, missing_code):
    """(l0, l1, r0, r1): left = non-missing codes <= k (+ the missing bin if missing_left)."""
    value_bins = hist_f[:missing_code]
    left = value_bins[: k + 1].sum(axis=0)
    right = value_bins[k + 1:].sum(axis=0)
    if missing_left:
        left = left + hist_f[missing_code]
    else:
        right = right + hist_f[missing_code]
    return float(left[0]), float(left[1]), float(right[0]), float(right[1])


def split_candidates_naive(hist_f, n_value_bins, missing_code, criterion):
    """All valid candidates of one feature, in tie-break order: list of (value, k, missing_left).

    Bins k = 0 .. n_value_bins - 1, missing-left before missing-right; missing-left at the
    last bin is no candidate (everything would go left); both sides need positive weight.
    """
    out = []
    for k in range(n_value_bins):
        for ml in (1, 0):
            if ml == 1 and k == n_value_bins - 1:
                continue
            l0, l1, r0, r1 = side_weights_naive(hist_f, k, ml, missing_code)
            if l0 + l1 > 0.0 and r0 + r1 > 0.0:
                out.append((criterion_naive(l0, l1, r0, r1, criterion), k, ml))
    return out


def reset_missing_left_naive(hist_f, k, missing_left, missing_code):
    """With no weight on the missing bin, missing values go to the heavier side (left on ties)."""
    if hist_f[missing_code].sum() != 0.0:
        return missing_left
    left = hist_f[: k + 1].sum()
    right = hist_f[k + 1: missing_code].sum()
    return 1 if left >= right else 0


def best_split_feature_naive(hist_f, n_value_bins, missing_code, criterion, mono=0):
    """(value, bin, missing_left) of one feature; (inf, -1, 1) when no candidate is valid. mono (+1 / -1): only
    stumps whose outputs (each side's heavier class) do not fall (+1) / rise (-1) from left to right."""
    best = (math.inf, -1, 1)
    for cand in split_candidates_naive(hist_f, n_value_bins, missing_code, criterion):
        if mono:
            l0, l1, r0, r1 = side_weights_naive(hist_f, cand[1], cand[2], missing_code)
            if mono * (leaf_value_naive(r0, r1) - leaf_value_naive(l0, l1)) < 0:
                continue
        if cand[0] < best[0]:  # strict: the first candidate in tie-break order wins ties
            best = cand
    v, k, ml = best
    if k >= 0:
        ml = reset_missing_left_naive(hist_f, k, ml, missing_code)
    return v, k, ml


def best_stump_naive(hist, n_value_bins, missing_code, criterion):
    """Best stump over all features: dict(feature, bin, missing_left, left, right, value), or None.

    Ties: lowest feature, then lowest bin, then missing-left before missing-right.
    """
    best = None
    for f in range(hist.shape[0]):
        v, k, ml = best_split_feature_naive(hist[f], int(n_value_bins[f]), missing_code, criterion)
        if k >= 0 and (best is None or v < best["value"]):
            l0, l1, r0, r1 = side_weights_naive(hist[f], k, ml, missing_code)
            best = dict(feature=f, bin=k, missing_left=ml, value=v,
                        left=leaf_value_naive(l0, l1), right=leaf_value_naive(r0, r1))
    return best


def all_stumps_naive(hist, n_value_bins, missing_code, criterion):
    """Every valid stump of every feature in tie-break order, as (value, feature, bin, missing_left),
    missing_left already re-set as for a chosen split."""
    out = []
    for f in range(hist.shape[0]):
        for v, k, ml in split_candidates_naive(hist[f], int(n_value_bins[f]), missing_code, criterion):
            out.append((v, f, k, reset_missing_left_naive(hist[f], k, ml, missing_code)))
    return out


# ----------------------------------------------------------------------------- round update
def stump_outputs_naive(codes_f, k, missing_left, missing_code, left, right):
    """int8 outputs: left where the row goes left (code <= k, or missing and missing_left)."""
    codes_f = np.asarray(codes_f).astype(np.int64)
    missing = codes_f == missing_code
    go_left = np.where(missing, bool(missing_left), codes_f <= k)
    return np.where(go_left, left, right).astype(np.int8)


def round_sums_naive(h, y, u, w):
    """(yh, sums): yh = y*h in {-1, +1} with y = +1 for class 1 and -1 for class 0;
    sums[0..3] = (U_I, U_J, W_I, W_J), sums of u and w over correct (I) and wrong (J) rows."""
    ysign = np.where(np.asarray(y) == 1, 1, -1)
    yh = (ysign * np.asarray(h, dtype=np.int64)).astype(np.int8)
    correct = yh > 0
    sums = np.zeros(8, dtype=np.float64)
    sums[0] = math.fsum(np.asarray(u)[correct])
    sums[1] = math.fsum(np.asarray(u)[~correct])
    sums[2] = math.fsum(np.asarray(w)[correct])
    sums[3] = math.fsum(np.asarray(w)[~correct])
    return yh, sums


def update_weights_naive(w, p, yh, alpha):
    """w_i * exp(-alpha * y_i h_i), normalised to sum 1. Returns (new w, Z, sum over p > 0 of w**2 / p)."""
    w = np.asarray(w, dtype=np.float64) * np.exp(-alpha * np.asarray(yh, dtype=np.float64))
    z = math.fsum(w)
    w = w / z
    pos = np.asarray(p) > 0
    s2 = math.fsum(w[pos] ** 2 / np.asarray(p)[pos])
    return w, z, s2


def adaboost_alpha_naive(w_correct, w_wrong):
    """alpha = 1/2 log(W_I / W_J), W_J floored at ALPHA_EPS * (W_I + W_J) (fastboost._algorithms)."""
    w_wrong = max(w_wrong, ALPHA_EPS * (w_correct + w_wrong))
    return 0.5 * math.log(w_correct / w_wrong)


# ----------------------------------------------------------------------------- prediction
def decision_function_naive(X, rounds):
    """Margin on raw X: sum over rounds (in order) of alpha * (left if x <= threshold else right),
    NaN going left iff missing_left."""
    X = np.asarray(X)
    margin = np.zeros(X.shape[0], dtype=np.float64)
    for r in rounds:
        x = X[:, int(r["feature"])].astype(np.float64)
        go_left = np.where(np.isnan(x), bool(r["missing_left"]), x <= float(r["threshold"]))
        out = np.where(go_left, float(r["left"]), float(r["right"]))
        margin = margin + float(r["alpha"]) * out
    return margin


def assert_rounds_equal(a, b, err_msg=""):
    """Two round records are identical field by field (NaN equals NaN, e.g. val_error without validation)."""
    assert a.dtype == b.dtype and a.shape == b.shape, f"{err_msg}: {a.dtype} {a.shape} vs {b.dtype} {b.shape}"
    for name in a.dtype.names:
        np.testing.assert_array_equal(a[name], b[name], err_msg=f"{err_msg} field {name}")


def assert_same_models(a, b):
    """Two fitted models' records (rounds and trees) are the same bytes, one-vs-rest models class by class."""
    ma, mb = getattr(a, "estimators_", None) or [a], getattr(b, "estimators_", None) or [b]
    assert len(ma) == len(mb)
    for x, z in zip(ma, mb):
        assert x.rounds_.tobytes() == z.rounds_.tobytes()
        assert (x.nodes_ is None) == (z.nodes_ is None)
        if x.nodes_ is not None:
            assert x.nodes_.tobytes() == z.nodes_.tobytes()


# ----------------------------------------------------------------------------- trees
CRITERION_Z = 3
TIE_RTOL = 1e-12  # fastboost._kernels.split: candidates within this fraction of the node weight are tied


def impurity_naive(c, criterion):
    """Weighted impurity of one side with class weights c: error W - max, gini W - sum c**2 / W, Z 2 sqrt(c0 c1)."""
    c = np.asarray(c, dtype=np.float64)
    total = c.sum()
    if total <= 0:
        return 0.0
    if criterion == CRITERION_GINI:
        return total - (c ** 2).sum() / total
    if criterion == CRITERION_Z:
        return 2.0 * math.sqrt(max(c[0], 0) * max(c[1], 0))
    return total - c.max()


def impurities_naive(c, criterion):
    """:func:`impurity_naive` of each row of c (class weights [candidates, n_classes])."""
    total = c.sum(axis=1)
    if criterion == CRITERION_GINI:
        out = total - (c ** 2).sum(axis=1) / np.where(total > 0, total, 1.0)
    elif criterion == CRITERION_Z:
        out = 2.0 * np.sqrt(np.maximum(c[:, 0], 0) * np.maximum(c[:, 1], 0))
    else:
        out = total - c.max(axis=1)
    return np.where(total > 0, out, 0.0)


def node_histogram_naive(codes, y, u, rows, n_bins, n_classes):
    """Brute-force histogram of a node's rows: [f, b, class weights..., count of positive-weight rows]."""
    d = codes.shape[0]
    hist = np.zeros((d, n_bins, n_classes + 1))
    pos = rows[u[rows] > 0]
    for f in range(d):
        for c in range(n_classes):
            r = pos[y[pos] == c]
            hist[f, :, c] = np.bincount(codes[f, r].astype(np.int64), weights=u[r], minlength=n_bins)
        hist[f, :, n_classes] = np.bincount(codes[f, pos].astype(np.int64), minlength=n_bins)
    return hist


def _bounded_class_naive(cw, low, high):
    """The first heaviest class whose index is in [low, high]."""
    allowed = [k for k in range(len(cw)) if low <= k <= high]
    return max(allowed, key=lambda k: (cw[k], -k))


def grow_tree_naive(codes, y, u, n_value_bins, missing_code, n_classes, criterion, max_depth, min_leaf=1,
                    min_weight_fraction=0.0, monotone=None):
    """Reference tree, breadth first, from brute-force histograms of every node's rows (no subtraction).

    Returns a list of node dicts in the kernel's order (children appended level by level, left then
    right): feature, bin, missing_left, left, right (-1 at leaves), rows, and for leaves class_
    (heaviest class under u, lowest on ties).
    monotone: -1 / 0 / +1 per feature (discrete leaves): a split on a constrained feature needs its sides'
    heaviest classes in order; each node keeps an interval of class indices, its children's split at the
    midpoint of their classes (each the heaviest in the parent's interval), and a leaf names the heaviest
    class in its interval.
    """
    n_bins = missing_code + 1
    min_weight = min_weight_fraction * u.sum()
    nodes = [dict(rows=np.arange(len(y)), depth=0, low=-math.inf, high=math.inf)]
    level = [0]
    for depth in range(max_depth):
        nxt = []
        for j in level:
            node = nodes[j]
            rows = node["rows"]
            cw = np.array([u[rows][y[rows] == c].sum() for c in range(n_classes)])
            total = cw.sum()
            if total <= 0 or cw.max() >= total * (1 - 1e-12):
                continue
            hist = node_histogram_naive(codes, y, u, rows, n_bins, n_classes)
            tol = TIE_RTOL * total  # the documented tie rule: a later candidate must win by more than this
            best = None
            for f in range(codes.shape[0]):
                fb = None
                hf = hist[f]
                nvb = int(n_value_bins[f])
                mono = 0 if monotone is None else int(monotone[f])
                # every candidate (bin k, missing left or right) at once: the sides' sums over bins <= k and > k
                below = np.cumsum(hf[:nvb], axis=0)
                above = np.zeros_like(below)
                above[:-1] = np.cumsum(hf[nvb - 1:0:-1], axis=0)[::-1]
                value = {}
                for ml in (1, 0):
                    left = below + hf[missing_code] * ml
                    right = above + hf[missing_code] * (1 - ml)
                    ok = np.ones(nvb, bool)
                    for side in (left, right):
                        w_side = side[:, :n_classes].sum(axis=1)
                        ok &= (side[:, n_classes] >= max(1, min_leaf)) & (w_side >= min_weight) & (w_side > 0)
                    if mono:
                        ok &= mono * (np.argmax(right[:, :n_classes], axis=1)
                                      - np.argmax(left[:, :n_classes], axis=1)) >= 0
                    value[ml] = np.where(ok, impurities_naive(left[:, :n_classes], criterion)
                                         + impurities_naive(right[:, :n_classes], criterion), np.nan)
                for k in range(nvb):  # in the kernel's order, a later candidate winning by more than tol
                    for ml in (1, 0):
                        v = value[ml][k]
                        if (ml == 1 and k == nvb - 1) or np.isnan(v):
                            continue
                        if fb is None or v < fb[0] - tol:
                            fb = (v, k, ml)
                if fb is None:
                    continue
                v, k, ml = fb
                if hf[missing_code, n_classes] == 0:
                    lw = hf[: k + 1, :n_classes].sum()
                    ml = 1 if lw >= hf[:nvb, :n_classes].sum() - lw else 0
                if best is None or v < best[0] - tol:
                    best = (v, f, k, ml)
            if best is None:
                continue
            v, f, k, ml = best
            c = codes[f, rows].astype(np.int64)
            go_left = np.where(c == missing_code, bool(ml), c <= k)
            node.update(feature=f, bin=k, missing_left=ml, left=len(nodes), right=len(nodes) + 1)
            low, high = node["low"], node["high"]
            bounds = [(low, high), (low, high)]
            mono = 0 if monotone is None else int(monotone[f])
            if mono:
                kl, kr = (_bounded_class_naive(np.array([u[r][y[r] == c].sum() for c in range(n_classes)]), low, high)
                          for r in (rows[go_left], rows[~go_left]))
                mid = 0.5 * (kl + kr)
                bounds = [(low, mid), (mid, high)] if mono > 0 else [(mid, high), (low, mid)]
            nodes.append(dict(rows=rows[go_left], depth=depth + 1, low=bounds[0][0], high=bounds[0][1]))
            nodes.append(dict(rows=rows[~go_left], depth=depth + 1, low=bounds[1][0], high=bounds[1][1]))
            nxt += [node["left"], node["right"]]
        level = nxt
        if not level:
            break
    for node in nodes:
        if "left" not in node:
            rows = node["rows"]
            node.update(feature=-1, left=-1, right=-1)
            cw = np.array([u[rows][y[rows] == c].sum() for c in range(n_classes)])
            node["class_"] = int(np.argmax(cw)) if monotone is None else _bounded_class_naive(cw, node["low"],
                                                                                                node["high"])
    return nodes


def monotone_stumps_naive(codes, y, direction, rounds, n_bins, mode, learning_rate=1.0, p=None):
    """AdaBoost's discrete binary stumps under monotone constraints, written plainly (no missing values):
    mode "free" (every stump), "forward" (a constrained feature only the polarity its constraint allows) or
    "capped" (also a stump of the other polarity at a bin k where the stumps before it put weight in the allowed
    direction, jump[f, k] = sum of alpha (right - left) / 2 there, its step capped at that weight). Every
    candidate is scored by AdaBoost's loss factor Z = (1 - e) exp(-a) + e exp(a) at its (capped) step a; the
    lowest wins, the first in (feature, bin) order among those within 1e-12 of it. p: the initial weights
    (uniform when None). Returns [(feature, bin, left, right, alpha)]."""
    d, n = codes.shape
    w = np.full(n, 1.0 / n) if p is None else np.asarray(p, np.float64) / np.sum(p)
    sign = 2 * y - 1
    jump = np.zeros((d, n_bins - 1))
    model = []
    for _ in range(rounds):
        best = None
        for f in range(d):
            h0 = np.bincount(codes[f], weights=w * (y == 0), minlength=n_bins)
            h1 = np.bincount(codes[f], weights=w * (y == 1), minlength=n_bins)
            l0, l1 = np.cumsum(h0)[:-1], np.cumsum(h1)[:-1]
            r0, r1 = h0.sum() - l0, h1.sum() - l1
            left = np.where(l1 > l0, 1, -1)
            right = np.where(r1 > r0, 1, -1)
            err = np.clip(np.where(left == 1, l0, l1) + np.where(right == 1, r0, r1), 1e-12, 1 - 1e-12)
            alpha = learning_rate * 0.5 * np.log((1 - err) / err)
            ok = (alpha > 0) & (l0 + l1 > 0) & (r0 + r1 > 0)
            mono = direction[f]
            if mono != 0 and mode != "free":
                against = mono * (right - left) < 0
                if mode == "forward":
                    ok &= ~against
                else:
                    ok &= ~against | (mono * jump[f] > 0)
                    alpha = np.where(against, np.minimum(alpha, np.abs(jump[f])), alpha)
            if not ok.any():
                continue
            z = np.where(ok, (1 - err) * np.exp(-alpha) + err * np.exp(alpha), np.inf)
            b = int(np.flatnonzero(z <= z.min() + 1e-12)[0])
            if best is None or z[b] < best[0] - 1e-12:
                best = (z[b], f, b, int(left[b]), int(right[b]), float(alpha[b]))
        if best is None:
            break
        _, f, b, lo, ro, a = best
        w = w * np.exp(-a * sign * np.where(codes[f] <= b, lo, ro))
        w /= w.sum()
        jump[f, b] += a * (ro - lo) / 2
        model.append((f, b, lo, ro, a))
    return model


def exact_jumps_naive(rounds, direction):
    """{(feature, bin): the exact sum (math.fsum) of direction * alpha * (right - left) over the stumps at that
    threshold} for the constrained features: a monotone stump model has every entry >= 0."""
    out = {}
    for f in np.flatnonzero(direction):
        sel = (rounds["feature"] == f) & (rounds["left"] != rounds["right"])
        for k in np.unique(rounds["bin"][sel]):
            at = sel & (rounds["bin"] == k)
            steps = direction[f] * rounds["alpha"][at] * (rounds["right"][at] - rounds["left"][at])
            out[(int(f), int(k))] = math.fsum(steps)
    return out
