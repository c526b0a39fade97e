"""The stump search (fastboost/_kernels/split.py) against its naive NumPy reference (tests/naive.py)."""
import numpy as np
import pytest

from fastboost._kernels.split import best_feature, best_split_one_feature, leaf_value, side_weights, stump_criterion
from fastboost._types import Y_DTYPE

try:  # tests/ as a package or as a plain directory on sys.path
    from . import naive
    from .kernel_cases import CRITERIA, MAX_BINS, SIZES, case, kernel_best_splits, kernel_hist
except ImportError:
    import naive
    from kernel_cases import CRITERIA, MAX_BINS, SIZES, case, kernel_best_splits, kernel_hist


def _check_split_kernels(hist, n_value_bins, missing_code, criterion):
    value, bin_, ml = kernel_best_splits(hist, n_value_bins, missing_code, criterion)
    for f in range(hist.shape[0]):
        v, k, m = naive.best_split_feature_naive(hist[f], int(n_value_bins[f]), missing_code, criterion)
        assert (bin_[f], ml[f]) == (k, m), f"feature {f}: kernel ({bin_[f]}, {ml[f]}), naive ({k}, {m})"
        assert value[f] == v, f"feature {f}: kernel value {value[f]!r}, naive {v!r}"
        one = best_split_one_feature(hist[f], n_value_bins[f], missing_code, criterion, False, 0)
        assert (one[0], one[1], one[2]) == (value[f], bin_[f], ml[f])
    best = naive.best_stump_naive(hist, n_value_bins, missing_code, criterion)
    f = best_feature(value, 1.0)
    if best is None:
        assert f == -1
        return None
    assert f == best["feature"]
    l0, l1, r0, r1 = side_weights(hist[f], bin_[f], ml[f], missing_code)
    assert (l0, l1, r0, r1) == naive.side_weights_naive(hist[f], bin_[f], ml[f], missing_code)
    assert leaf_value(l0, l1) == best["left"] and leaf_value(r0, r1) == best["right"]
    return best


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("max_bins", MAX_BINS)
def test_best_split_matches_naive(n, max_bins):
    _, mapper, codes, y, u = case(n, max_bins)
    mc = mapper.missing_code
    hist = kernel_hist(codes, y, u, mc + 1)
    for criterion in CRITERIA:
        _check_split_kernels(hist, mapper.n_value_bins_, mc, criterion)
    # uniform weights (many exact ties) and weights that leave a feature's missing bin empty
    ones = np.ones(n)
    hist1 = kernel_hist(codes, y, ones, mc + 1)
    u2 = u.copy()
    u2[np.isnan(case(n, max_bins)[0][:, 3])] = 0.0
    hist2 = kernel_hist(codes, y, u2, mc + 1)
    for criterion in CRITERIA:
        _check_split_kernels(hist1, mapper.n_value_bins_, mc, criterion)
        _check_split_kernels(hist2, mapper.n_value_bins_, mc, criterion)


@pytest.mark.parametrize("criterion", CRITERIA)
def test_best_split_random_histograms(criterion):
    """Random histograms (zeros, empty missing bins, single-class bins), exact dyadic values."""
    rng = np.random.default_rng(77 + criterion)
    for trial in range(60):
        max_bins = int(rng.choice([2, 3, 5, 17]))
        d = int(rng.integers(1, 5))
        hist = rng.integers(0, 4, (d, max_bins + 1, 2)) / 8.0
        hist *= rng.random(hist.shape) < 0.6  # many zero cells
        nvb = rng.integers(0, max_bins + 1, d)
        for f in range(d):
            hist[f, nvb[f]:max_bins] = 0.0  # no weight on bins a feature does not have
        if trial % 3 == 0:
            hist[:, max_bins] = 0.0  # nothing missing
        _check_split_kernels(hist, nvb.astype(np.int64), max_bins, criterion)


def test_split_ties_explicit():
    """Equal criterion values: lowest feature, then lowest bin, then missing-left."""
    mc = 4
    h = np.zeros((mc + 1, 2))
    # bins 0 and 2 are empty: splits after bin 0 and after bin 1 separate the same rows
    h[1] = [3.0, 0.0]
    h[3] = [0.0, 3.0]
    h[mc] = [1.0, 1.0]  # missing: one of each class, both sides are equally good
    for criterion in CRITERIA:
        v, k, ml = best_split_one_feature(h, 4, mc, criterion, False, 0)
        assert (k, ml) == naive.best_split_feature_naive(h, 4, mc, criterion)[1:]
        assert (k, ml) == (1, 1)  # bins 1 and 2 tie (bin 2 empty): bin 1; missing sides tie: left
    # missing-left at the last bin is not a candidate; missing-right there is
    h = np.zeros((mc + 1, 2))
    h[0] = [2.0, 0.0]
    h[mc] = [0.0, 2.0]
    for criterion in CRITERIA:
        v, k, ml = best_split_one_feature(h, 1, mc, criterion, False, 0)
        assert (v, k, ml) == (0.0, 0, 0) == naive.best_split_feature_naive(h, 1, mc, criterion)
        # nothing but missing values: no candidate at all
        assert best_split_one_feature(h * [[0], [1], [1], [1], [1]], 1, mc, criterion, False, 0)[1] == -1
    # identical features: the lowest index wins
    hist = np.zeros((3, mc + 1, 2))
    hist[:, 0] = [1.0, 0.0]
    hist[:, 1] = [0.0, 1.0]
    hist[0, 1] = [0.5, 0.5]  # feature 0 is worse; features 1 and 2 tie
    nvb = np.array([2, 2, 2])
    for criterion in CRITERIA:
        value, bin_, ml = kernel_best_splits(hist, nvb, mc, criterion)
        assert best_feature(value, 1.0) == 1 == naive.best_stump_naive(hist, nvb, mc, criterion)["feature"]
    assert best_feature(np.array([np.inf, np.inf]), 1.0) == -1
    # missing bin empty: missing goes to the heavier side, left on equal weight
    h = np.zeros((mc + 1, 2))
    h[0] = [1.0, 0.0]
    h[1] = [0.0, 1.0]
    assert best_split_one_feature(h, 2, mc, 0, False, 0)[1:] == (0, 1)
    h[1] = [0.0, 1.5]
    assert best_split_one_feature(h, 2, mc, 0, False, 0)[1:] == (0, 0)
    # leaf values: ties go to class 0 (-1)
    assert leaf_value(1.0, 1.0) == -1 and leaf_value(0.0, 0.0) == -1
    assert leaf_value(1.0, 2.0) == 1 and leaf_value(2.0, 1.0) == -1


def test_stump_criterion_matches_naive():
    rng = np.random.default_rng(5)
    for _ in range(200):
        l0, l1, r0, r1 = rng.random(4) * rng.choice([0, 1], 4) + [1e-3, 0, 1e-3, 0]
        for criterion in CRITERIA:
            assert stump_criterion(l0, l1, r0, r1, criterion) == naive.criterion_naive(l0, l1, r0, r1,
                                                                                       criterion)


@pytest.mark.parametrize("criterion", CRITERIA)
def test_best_split_float_weights_near_optimal(criterion):
    """Non-dyadic weights: the kernel's split is (up to rounding) the naive optimum."""
    _, mapper, codes, y, _ = case(4097, 17)
    rng = np.random.default_rng(3)
    u = rng.random(codes.shape[1]) * (rng.random(codes.shape[1]) < 0.9)
    hist = kernel_hist(codes, y, u, 18)
    value, bin_, ml = kernel_best_splits(hist, mapper.n_value_bins_, 17, criterion)
    for f in range(codes.shape[0]):
        cands = naive.split_candidates_naive(hist[f], int(mapper.n_value_bins_[f]), 17, criterion)
        if not cands:
            assert bin_[f] == -1 and value[f] == np.inf
            continue
        best = min(c[0] for c in cands)
        np.testing.assert_allclose(value[f], best, rtol=1e-12)
        mine = [c for c in cands if c[1] == bin_[f]
                and naive.reset_missing_left_naive(hist[f], c[1], c[2], 17) == ml[f]]
        assert mine and min(c[0] for c in mine) <= best * (1 + 1e-12)


@pytest.mark.parametrize("max_bins", [3, 17])
@pytest.mark.parametrize("criterion", CRITERIA)
def test_planted_split_found_at_every_bin(max_bins, criterion):
    """y is determined by one feature's bin (code > k); that stump is found for every k."""
    rng = np.random.default_rng(max_bins)
    n, d, planted = 300, 4, 2
    mc = max_bins
    nvb = np.full(d, max_bins, dtype=np.int64)
    for k in range(max_bins):
        for missing in ("none", "class1", "class0"):
            codes = rng.integers(0, max_bins, (d, n)).astype(np.uint8)
            codes[planted, :max_bins] = np.arange(max_bins)  # every bin non-empty
            y = (codes[planted] > k).astype(Y_DTYPE)
            if missing != "none":
                rows = rng.permutation(n)[: n // 10]
                rows = rows[rows >= max_bins]
                codes[planted, rows] = mc
                y[rows] = 1 if missing == "class1" else 0
            if y.min() == y.max() or (missing == "class0" and k == max_bins - 1):
                continue  # one class only / no perfect stump
            for flip in (False, True):
                yy = 1 - y if flip else y
                u = np.ones(n)
                hist = kernel_hist(np.ascontiguousarray(codes), yy, u, mc + 1)
                value, bin_, ml = kernel_best_splits(hist, nvb, mc, criterion)
                f = best_feature(value, 1.0)
                assert (f, bin_[f], value[f]) == (planted, k, 0.0), (k, missing, flip)
                if missing == "class1":
                    assert ml[f] == 0
                elif missing == "class0":
                    assert ml[f] == 1
                else:  # missing values go to the heavier side
                    left = np.count_nonzero(codes[planted] <= k)
                    assert ml[f] == (1 if left >= n - left else 0)
                l0, l1, r0, r1 = side_weights(hist[f], k, ml[f], mc)
                assert (leaf_value(l0, l1), leaf_value(r0, r1)) == ((1, -1) if flip else (-1, 1))
                best = naive.best_stump_naive(hist, nvb, mc, criterion)
                assert (best["feature"], best["bin"], best["missing_left"]) == (f, k, ml[f])


def test_split_independent_of_row_order():
    _, mapper, codes, y, u = case(1023, 17)
    rng = np.random.default_rng(9)
    ref_hist = kernel_hist(codes, y, u, 18)
    refs = [kernel_best_splits(ref_hist, mapper.n_value_bins_, 17, c) for c in CRITERIA]
    for _ in range(3):
        perm = rng.permutation(codes.shape[1])
        hist = kernel_hist(np.ascontiguousarray(codes[:, perm]), y[perm], u[perm], 18)
        np.testing.assert_array_equal(hist, ref_hist)
        for c, ref in zip(CRITERIA, refs):
            for a, b in zip(kernel_best_splits(hist, mapper.n_value_bins_, 17, c), ref):
                np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("max_bins", [17, None])
def test_fused_histograms_and_splits_equal_the_two_passes(max_bins):
    """histograms_and_splits (one parallel loop) gives build_histograms' histograms and
    best_split_per_feature's splits bit for bit, for every grouping, on uint8 and uint16 codes, and so with the
    error criterion's scan alone (criteria None)."""
    from fastboost._driver import make_config
    from fastboost._kernels.histogram import histograms_and_splits
    from fastboost._types import CRITERION_ERROR

    _, mapper, codes, y, u = case(4097, max_bins)
    mc = mapper.missing_code
    w = np.random.default_rng(5).random(codes.shape[1]) ** 3  # non-dyadic: the summation order would show
    d = codes.shape[0]
    cat = np.zeros(d, np.uint8)
    for criterion in CRITERIA:
        ref_hist = kernel_hist(codes, y, w, mc + 1)
        ref = kernel_best_splits(ref_hist, mapper.n_value_bins_, mc, criterion)
        for groups in (1, 2, 3, d):
            hist = np.full((d, mc + 1, 2), np.nan)
            value, bin_, ml = np.empty(d), np.empty(d, np.int64), np.empty(d, np.int64)
            config = make_config(hist_groups=groups, missing_code=mc, criterion=criterion)
            # criteria None: the error criterion's scan alone compiled (a two-class stump fit's first fit)
            for criteria in (True, None) if criterion == CRITERION_ERROR else (True,):
                hist[:] = np.nan
                histograms_and_splits(codes, y, w, hist, config[0], np.arange(d), mapper.n_value_bins_, cat, value,
                                      bin_, ml, criteria)
                np.testing.assert_array_equal(hist, ref_hist)
                for got, want in zip((value, bin_, ml), ref):
                    np.testing.assert_array_equal(got, want)


def _error_scan_rule(h, nvb, mc, min_weight, dust):
    """The error criterion's binary scan written out candidate by candidate (the module docstring's rule, with the
    kernels' sums in their order): a later candidate is taken only if it beats the best by more than the tie
    tolerance; a tree node's sides (dust) must also outweigh that tolerance. Returns (value, bin, missing_left) and
    whether a plain "first least value" would have chosen otherwise."""
    m0, m1 = float(h[mc, 0]), float(h[mc, 1])
    pre, l0, l1 = [], 0.0, 0.0
    for k in range(nvb):
        l0 += float(h[k, 0])
        l1 += float(h[k, 1])
        pre.append((l0, l1))
    t0, t1 = l0, l1
    tol = 1e-12 * (t0 + t1 + m0 + m1)
    floor = tol if dust else 0.0
    cands = []
    for k, (l0, l1) in enumerate(pre):
        r0, r1 = t0 - l0, t1 - l1
        sides = [] if k == nvb - 1 else [((l0 + m0, l1 + m1), (r0, r1), 1)]
        if not (m0 == 0.0 and m1 == 0.0):
            sides.append(((l0, l1), (r0 + m0, r1 + m1), 0))
        for a, b, ml in sides:
            if all(s[0] + s[1] >= min_weight and s[0] + s[1] > floor for s in (a, b)):
                cands.append((min(a) + min(b), k, ml))
    best = (np.inf, -1, 1)
    for c in cands:
        if c[0] < best[0] - tol:
            best = c
    plain = min(cands, default=best)
    v, k, ml = best
    if k >= 0 and ((m0 + m1 <= tol) if dust else (m0 + m1 == 0.0)):
        lw = 0.0
        for b in range(k + 1):
            lw += float(h[b, 0]) + float(h[b, 1])
        ml = 1 if lw >= t0 + t1 - lw else 0
    return (v, k, ml), plain[1:] != best[1:]


def test_error_scan_near_ties_follow_the_tie_rule():
    """AdaBoost's error scan (stumps and tree nodes) finds the least value in passes without branches and falls
    back to the candidate-by-candidate rule when values lie within the tie tolerance of it: both against the rule
    written out, on histograms of non-dyadic weights whose equal partitions sum to values a rounding apart."""
    from fastboost._kernels.split import best_split_tree_feature
    from fastboost._types import CRITERION_ERROR

    rng = np.random.default_rng(31)
    mc = 40
    near = 0
    for trial in range(300):
        nvb = int(rng.integers(1, mc + 1))
        h = np.zeros((mc + 1, 3))
        h[:nvb, :2] = rng.choice([0.0, 0.1, 0.2, 0.3, 0.7], size=(nvb, 2), p=[0.4, 0.15, 0.15, 0.15, 0.15])
        if trial % 2:
            h[mc, :2] = rng.choice([0.0, 0.1, 0.3], size=2)
        h[:, 2] = (h[:, :2] > 0).sum(axis=1)
        want, differs = _error_scan_rule(h, nvb, mc, 0.0, False)
        assert best_split_one_feature(h[:, :2].copy(), nvb, mc, CRITERION_ERROR, False, 0) == want, trial
        min_weight = float(rng.choice([0.0, 0.0, 0.25]))
        want_tree, differs_tree = _error_scan_rule(h, nvb, mc, min_weight, True)
        assert best_split_tree_feature(h, nvb, mc, 2, CRITERION_ERROR, 1, min_weight, False, 0, 0, 0.0) == want_tree
        near += differs + differs_tree
    assert near >= 5  # the tie rule chose otherwise than the least value often enough to be tested
