"""Every compiled kernel against its naive NumPy reference (tests/naive.py), plus invariants.

Weights are dyadic (multiples of 1/64) where results are compared bit for bit, so every
sum is exact whatever the summation order and ties are real ties; random float weights
are used where only tolerances (or thread-count independence) are claimed.
"""
import contextlib
import functools
import math
import pathlib
import re

import numba
import numpy as np
import pytest

import fastboost
from fastboost._binning import BinMapper
from fastboost._config import FASTMATH
from fastboost._kernels.binning import map_to_bins
from fastboost._kernels.histogram import build_histograms, build_histograms_reference, n_feature_groups
from fastboost._kernels.predict import add_stump, decision_function
from fastboost._kernels.split import (best_feature, best_split_one_feature, best_split_per_feature,
                                      leaf_value, side_weights, stump_criterion)
from fastboost._kernels.update import BLOCK, apply_stump, n_blocks, update_weights

try:  # tests/ as a package or as a plain directory on sys.path
    from . import naive
except ImportError:
    import naive

CRITERIA = (naive.CRITERION_ERROR, naive.CRITERION_GINI)
SIZES = (1, 7, 1023, 4097)
MAX_BINS = (2, 3, 17, 255)


@contextlib.contextmanager
def numba_threads(k):
    previous = numba.get_num_threads()
    numba.set_num_threads(k)
    try:
        yield
    finally:
        numba.set_num_threads(previous)


def raw_X(rng, n):
    """Mixed columns: ties, constant, all-NaN, scattered NaN, ±inf, continuous, and a duplicate."""
    informative = np.where(rng.random(n) < 0.25, np.nan, rng.integers(0, 12, n).astype(np.float64))
    cols = [
        rng.integers(0, 3, n).astype(np.float64),           # 0: few distinct values (ties)
        np.full(n, 7.0),                                    # 1: constant
        np.full(n, np.nan),                                 # 2: all NaN
        informative,                                        # 3: NaN scattered, 12 distinct
        rng.choice([-np.inf, -2.0, 0.0, 3.0, np.inf, np.nan], n),  # 4: ±inf and NaN
        rng.normal(size=n),                                 # 5: continuous
        np.round(rng.normal(size=n), 1),                    # 6: ~60 distinct
        informative.copy(),                                 # 7: duplicate of 3 (feature ties)
    ]
    return np.column_stack(cols)


def dyadic_weights(rng, n):
    """Multiples of 1/64 in [0, 7/64], about one in eight zero: every sum is exact."""
    return rng.integers(0, 8, n) / 64.0


@functools.lru_cache(maxsize=None)
def case(n, max_bins):
    """(X, mapper, codes, y, u) shared by the tests of one (n, max_bins)."""
    rng = np.random.default_rng(1000 * n + max_bins)
    X = raw_X(rng, n)
    mapper = BinMapper(max_bins=max_bins).fit(X)
    codes = mapper.transform(X)
    signal = np.nan_to_num(X[:, 3], nan=20.0) + 3 * X[:, 0] + rng.normal(scale=3.0, size=n)
    y = (signal > 8).astype(np.uint8)
    u = dyadic_weights(rng, n)
    return X, mapper, codes, y, u


def kernel_hist(codes, y, u, n_bins):
    hist = np.empty((codes.shape[0], n_bins, 2), dtype=np.float64)
    build_histograms(codes, y, u, hist, 2)
    return hist


def kernel_best_splits(hist, n_value_bins, missing_code, criterion):
    d = hist.shape[0]
    value = np.empty(d, np.float64)
    bin_ = np.empty(d, np.int64)
    ml = np.empty(d, np.int64)
    best_split_per_feature(hist, n_value_bins, missing_code, criterion, value, bin_, ml)
    return value, bin_, ml


# ----------------------------------------------------------------------------- binning kernel
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("max_bins", MAX_BINS)
def test_map_to_bins_matches_naive(n, max_bins):
    X, mapper, codes, _, _ = case(n, max_bins)
    expected = naive.map_to_bins_naive(X, mapper.thresholds_, mapper.n_edges_, max_bins)
    np.testing.assert_array_equal(codes, expected)
    # the kernel itself, in two row blocks written at their row offsets
    direct = np.full((X.shape[1], n), 254, dtype=np.uint8)
    cut = n // 2
    for start, stop in ((0, cut), (cut, n)):
        if stop > start:
            map_to_bins(np.asfortranarray(X[start:stop]), mapper.thresholds_,
                        max_bins, direct, start)
    np.testing.assert_array_equal(direct, expected)
    # edges of the same raw column from the naive edge definition give the same codes
    for f in (0, 3, 4):
        e = naive.bin_edges_naive(X[:, f], max_bins)
        if np.unique(X[:, f][~np.isnan(X[:, f])]).size <= max_bins:
            thr = np.full((1, max_bins), np.inf)
            thr[0, : e.size] = e
            np.testing.assert_array_equal(
                codes[f], naive.map_to_bins_naive(X[:, [f]], thr, np.array([e.size]), max_bins)[0])


# ----------------------------------------------------------------------------- histograms
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("max_bins", MAX_BINS)
def test_build_histograms_matches_naive(n, max_bins):
    _, mapper, codes, y, u = case(n, max_bins)
    n_bins = max_bins + 1
    hist = kernel_hist(codes, y, u, n_bins)
    np.testing.assert_array_equal(hist, naive.build_histograms_naive(codes, y, u, n_bins))
    # every feature's histogram holds all the weight (exact: dyadic weights)
    total = math.fsum(u)
    for f in range(codes.shape[0]):
        assert hist[f].sum() == total
        np.testing.assert_array_equal(hist[f].sum(axis=0), [u[y == 0].sum(), u[y == 1].sum()])
    # random float weights: equal up to summation order
    w = np.random.default_rng(n).random(n)
    np.testing.assert_allclose(kernel_hist(codes, y, w, n_bins),
                               naive.build_histograms_naive(codes, y, w, n_bins), rtol=1e-12, atol=0)
    np.testing.assert_allclose(kernel_hist(codes, y, w, n_bins).sum(axis=(1, 2)), w.sum(), rtol=1e-12)
    # the histogram is overwritten, not accumulated into
    stale = np.full((codes.shape[0], n_bins, 2), 123.0)
    build_histograms(codes, y, u, stale, 3)
    np.testing.assert_array_equal(stale, hist)


@pytest.mark.parametrize("d", [1, 2, 3, 4, 5, 7, 9, 20])
def test_tuned_histograms_bit_identical_to_reference(d):
    """The grouped kernel (up to 4 features per pass over the rows) against the one-feature-at-a-time
    reference and the naive per-class bincount, on random float weights (no exact sums to hide a
    different summation order), n not a multiple of 4, ties and the missing bin, for every valid
    number of groups (including ones the kernel must raise to ceil(d / 4)) and 1-2 threads."""
    rng = np.random.default_rng(d)
    for n in (1, 37, 3001):
        codes = rng.integers(0, 9, (d, n)).astype(np.uint8)
        codes[rng.random((d, n)) < 0.1] = 255  # the missing code of max_bins=255
        y = rng.integers(0, 2, n).astype(np.uint8)
        u = rng.random(n) * rng.choice([1e-9, 1.0, 1e6], n)
        want = naive.build_histograms_naive(codes, y, u, 256)
        ref = np.full_like(want, np.nan)
        build_histograms_reference(codes, y, u, ref)
        np.testing.assert_array_equal(ref, want)
        groups = set(range(1, d + 1)) | {n_feature_groups(d, t) for t in (1, 2, 3, 4, 8)}
        for threads in (1, 2):
            with fastboost._config.n_threads(threads):
                for g in sorted(groups):
                    got = np.full_like(want, np.nan)
                    build_histograms(codes, y, u, got, g)
                    assert got.tobytes() == want.tobytes(), f"d={d} n={n} groups={g} threads={threads}"


def test_feature_groups_balance_threads():
    assert n_feature_groups(20, 2) == 6 and n_feature_groups(100, 2) == 26 and n_feature_groups(20, 1) == 5
    for d in range(1, 40):
        for t in (1, 2, 3, 8):
            g = n_feature_groups(d, t)
            assert -(-d // 4) <= g <= d  # groups of at most 4 features, none empty
            assert g % t == 0 or g == d


# ----------------------------------------------------------------------------- stump search
def _check_split_kernels(hist, n_value_bins, missing_code, criterion):
    value, bin_, ml = kernel_best_splits(hist, n_value_bins, missing_code, criterion)
    for f in range(hist.shape[0]):
        v, k, m = naive.best_split_feature_naive(hist[f], int(n_value_bins[f]), missing_code, criterion)
        assert (bin_[f], ml[f]) == (k, m), f"feature {f}: kernel ({bin_[f]}, {ml[f]}), naive ({k}, {m})"
        assert value[f] == v, f"feature {f}: kernel value {value[f]!r}, naive {v!r}"
        one = best_split_one_feature(hist[f], n_value_bins[f], missing_code, criterion)
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
    hist = kernel_hist(codes, y, u, max_bins + 1)
    for criterion in CRITERIA:
        _check_split_kernels(hist, mapper.n_value_bins_, max_bins, criterion)
    # uniform weights (many exact ties) and weights that leave a feature's missing bin empty
    ones = np.ones(n)
    hist1 = kernel_hist(codes, y, ones, max_bins + 1)
    u2 = u.copy()
    u2[np.isnan(case(n, max_bins)[0][:, 3])] = 0.0
    hist2 = kernel_hist(codes, y, u2, max_bins + 1)
    for criterion in CRITERIA:
        _check_split_kernels(hist1, mapper.n_value_bins_, max_bins, criterion)
        _check_split_kernels(hist2, mapper.n_value_bins_, max_bins, criterion)


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
        v, k, ml = best_split_one_feature(h, 4, mc, criterion)
        assert (k, ml) == naive.best_split_feature_naive(h, 4, mc, criterion)[1:]
        assert (k, ml) == (1, 1)  # bins 1 and 2 tie (bin 2 empty): bin 1; missing sides tie: left
    # missing-left at the last bin is not a candidate; missing-right there is
    h = np.zeros((mc + 1, 2))
    h[0] = [2.0, 0.0]
    h[mc] = [0.0, 2.0]
    for criterion in CRITERIA:
        v, k, ml = best_split_one_feature(h, 1, mc, criterion)
        assert (v, k, ml) == (0.0, 0, 0) == naive.best_split_feature_naive(h, 1, mc, criterion)
        # nothing but missing values: no candidate at all
        assert best_split_one_feature(h * [[0], [1], [1], [1], [1]], 1, mc, criterion)[1] == -1
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
    assert best_split_one_feature(h, 2, mc, 0)[1:] == (0, 1)
    h[1] = [0.0, 1.5]
    assert best_split_one_feature(h, 2, mc, 0)[1:] == (0, 0)
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
            y = (codes[planted] > k).astype(np.uint8)
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


# ----------------------------------------------------------------------------- round update
@pytest.mark.parametrize("n", list(SIZES) + [2 * BLOCK + 5])  # several row blocks of the parallel passes
def test_outputs_sums_and_weight_update_match_naive(n):
    X, mapper, codes, y, u = case(n, 17)
    rng = np.random.default_rng(n + 1)
    p = rng.random(n) * (rng.random(n) < 0.9)
    if p.sum() == 0:
        p[0] = 1.0
    p /= p.sum()
    w = p * np.exp(rng.normal(size=n))
    w /= w.sum()
    mc = 17
    block_sums = np.empty((n_blocks(n), 4))
    for f in (0, 3, 4, 5):
        for k in (0, int(mapper.n_value_bins_[f]) - 1, 1):
            for missing_left in (0, 1):
                for left, right in ((-1, 1), (1, -1), (1, 1)):
                    h_ref = naive.stump_outputs_naive(codes[f], k, missing_left, mc, left, right)
                    yh_ref, sums_ref = naive.round_sums_naive(h_ref, y, u, w)
                    yh = np.empty(n, np.int8)
                    sums = np.full(8, 99.0)
                    apply_stump(codes[f], k, missing_left, mc, left, right, y, u, w, yh, block_sums, sums)
                    np.testing.assert_array_equal(yh, yh_ref)
                    np.testing.assert_array_equal(sums[:2], sums_ref[:2])  # dyadic u: exact
                    np.testing.assert_allclose(sums, sums_ref, rtol=1e-12, atol=1e-300)
                    assert np.all(sums[4:] == 0.0)
    h = naive.stump_outputs_naive(codes[3], 2, 1, mc, -1, 1)
    yh, _ = naive.round_sums_naive(h, y, u, w)
    for alpha in (0.0, 0.3, -0.7, 4.0):
        w2 = w.copy()
        correct = yh > 0
        z, s2 = update_weights(w2, p, yh, alpha, w[correct].sum(), w[~correct].sum(), block_sums)
        w_ref, z_ref, s2_ref = naive.update_weights_naive(w, p, yh, alpha)
        np.testing.assert_allclose(w2, w_ref, rtol=1e-12, atol=1e-300)
        np.testing.assert_allclose(z, z_ref, rtol=1e-12)
        np.testing.assert_allclose(s2, s2_ref, rtol=1e-12)
        assert math.isclose(w2.sum(), 1.0, rel_tol=1e-12)
        assert np.all(w2[p == 0] == 0.0)


# ----------------------------------------------------------------------------- prediction
def random_rounds(rng, mapper, n_rounds):
    d = mapper.thresholds_.shape[0]
    rounds = np.zeros(n_rounds, dtype=[("feature", np.int64), ("threshold", np.float64),
                                       ("missing_left", np.int64), ("left", np.int64),
                                       ("right", np.int64), ("alpha", np.float64)])
    rounds["feature"] = rng.integers(0, d, n_rounds)
    for t, f in enumerate(rounds["feature"]):
        k = int(rng.integers(0, mapper.max_bins))
        rounds["threshold"][t] = mapper.thresholds_[f, k] if rng.random() < 0.8 else rng.normal()
    rounds["threshold"][:2] = [np.inf, -np.inf]
    rounds["missing_left"] = rng.integers(0, 2, n_rounds)
    rounds["left"] = rng.choice([-1, 1], n_rounds)
    rounds["right"] = rng.choice([-1, 1], n_rounds)
    rounds["alpha"] = rng.normal(size=n_rounds) * np.exp(rng.normal(size=n_rounds) * 3)
    return rounds


def _ensemble(rounds):
    return tuple(np.ascontiguousarray(rounds[k]) for k in
                 ("feature", "threshold", "missing_left", "left", "right", "alpha"))


@pytest.mark.parametrize("n", SIZES)
def test_decision_function_kernel_matches_naive(n):
    X, mapper, _, _, _ = case(n, 17)
    rng = np.random.default_rng(n + 2)
    rounds = random_rounds(rng, mapper, 40)
    with np.errstate(over="ignore"):
        X32 = np.ascontiguousarray(X.astype(np.float32))
    for Xd in (np.ascontiguousarray(X), X32):
        out = np.empty(n)
        decision_function(Xd, *_ensemble(rounds), out)
        np.testing.assert_array_equal(out, naive.decision_function_naive(Xd, rounds))
        margin = np.zeros(n)
        for t in range(rounds.shape[0]):
            add_stump(Xd, *(a[t] for a in _ensemble(rounds)), margin)
            if t == 4:
                np.testing.assert_array_equal(margin, naive.decision_function_naive(Xd, rounds[:5]))
        np.testing.assert_array_equal(margin, out)  # staged == full, bit for bit


# ----------------------------------------------------------------------------- threads
def test_kernels_bit_identical_with_1_and_2_threads():
    X, mapper, codes, y, _ = case(4097, 255)
    rng = np.random.default_rng(17)
    w = rng.random(codes.shape[1]) ** 3  # non-dyadic: summation order would show
    rounds = random_rounds(rng, mapper, 25)
    results = []
    for k in (1, min(2, numba.config.NUMBA_NUM_THREADS)):
        with numba_threads(k):
            res = {}
            res["codes"] = np.zeros_like(codes)
            map_to_bins(np.asfortranarray(X), mapper.thresholds_, 255, res["codes"], 0)
            res["hist"] = kernel_hist(codes, y, w, 256)
            for c in CRITERIA:
                res[f"split{c}"] = kernel_best_splits(res["hist"], mapper.n_value_bins_, 255, c)
            res["df"] = np.empty(X.shape[0])
            decision_function(np.ascontiguousarray(X), *_ensemble(rounds), res["df"])
            res["staged"] = np.zeros(X.shape[0])
            add_stump(np.ascontiguousarray(X), *(a[3] for a in _ensemble(rounds)), res["staged"])
        results.append(res)
    for key in results[0]:
        a, b = results[0][key], results[1][key]
        if isinstance(a, tuple):
            for x, z in zip(a, b):
                np.testing.assert_array_equal(x, z, err_msg=key)
        else:
            np.testing.assert_array_equal(a, b, err_msg=key)
    np.testing.assert_array_equal(results[0]["codes"], codes)


def test_fit_bit_identical_with_1_and_2_threads(replay_data):
    X, y = replay_data
    w = np.random.default_rng(0).random(X.shape[0]) + 0.1
    fits = [fastboost.AdaBoostClassifier(n_estimators=15, n_jobs=k).fit(X, y, sample_weight=w)
            for k in (1, 2)]
    assert fits[0].rounds_.tobytes() == fits[1].rounds_.tobytes()
    np.testing.assert_array_equal(fits[0].decision_function(X), fits[1].decision_function(X))


# ----------------------------------------------------------------------------- the boosting loop
@pytest.fixture(scope="module")
def replay_data():
    """Integer-valued features (<= 10 distinct values) with a few NaNs; n = 256 keeps 1/n exact."""
    rng = np.random.default_rng(2024)
    n, d = 256, 5
    X = rng.integers(0, 10, (n, d)).astype(np.float64)
    X[:, 4] = rng.integers(0, 3, n)
    X[rng.random((n, d)) < 0.06] = np.nan
    X[:, 2][rng.random(n) < 0.3] = np.nan  # one feature with many NaNs
    score = np.nan_to_num(X[:, 0], nan=4.5) - np.nan_to_num(X[:, 1], nan=4.5) + rng.normal(0, 3, n)
    score += np.where(np.isnan(X[:, 2]), 2.0, 0.0)
    y = np.where(score > 0, 1, -1)
    return X, y


def replay_adaboost(model, X, y, criterion):
    """Replay model.rounds_ with the naive functions; returns (exact matches, near-tie rounds)."""
    mapper = BinMapper(max_bins=255).fit(X)
    codes = mapper.transform(X)
    mc = mapper.missing_code
    yi = (y == model.classes_[1]).astype(np.uint8)
    n = X.shape[0]
    p = np.full(n, 1.0 / n)
    w = p.copy()
    log_loss = 0.0
    exact = ties = 0
    rounds = model.rounds_
    for t, r in enumerate(rounds):
        hist = naive.build_histograms_naive(codes, yi, w, mc + 1)
        best = naive.best_stump_naive(hist, mapper.n_value_bins_, mc, criterion)
        assert best is not None
        got = (int(r["feature"]), int(r["bin"]), int(r["missing_left"]))
        if got == (best["feature"], best["bin"], best["missing_left"]):
            exact += 1
        else:
            # only a (rounding-level) tie may be broken differently: the model's stump must be
            # as good as the naive optimum, and must be a valid candidate at all
            cands = [c for c in naive.all_stumps_naive(hist, mapper.n_value_bins_, mc, criterion)
                     if (c[1], c[2], c[3]) == got]
            assert cands, f"round {t}: model's stump {got} is no valid candidate; naive best {best}"
            assert min(c[0] for c in cands) <= best["value"] * (1 + 1e-9) + 1e-300, (
                f"round {t}: model's stump {got} (criterion {min(c[0] for c in cands)!r}) is worse "
                f"than the naive best {best}")
            ties += 1
        f, k, ml = got
        l0, l1, r0, r1 = naive.side_weights_naive(hist[f], k, ml, mc)
        left, right = naive.leaf_value_naive(l0, l1), naive.leaf_value_naive(r0, r1)
        assert (r["left"], r["right"]) == (left, right), t
        assert r["threshold"] == mapper.thresholds_[f, k], t
        h = naive.stump_outputs_naive(codes[f], k, ml, mc, left, right)
        yh, sums = naive.round_sums_naive(h, yi, w, w)
        alpha = naive.adaboost_alpha_naive(sums[2], sums[3])
        assert sums[2] - sums[3] > 0.5 * naive.MIN_EDGE * (sums[2] + sums[3]), f"round {t} kept at chance"
        # rtol 1e-10; plus atol for alphas near 0, where log(W_I / W_J) amplifies the sums' rounding
        np.testing.assert_allclose(r["alpha"], alpha, rtol=1e-10, atol=1e-13, err_msg=f"alpha, round {t}")
        np.testing.assert_allclose(r["error"], sums[3], rtol=1e-10, err_msg=f"error, round {t}")
        np.testing.assert_allclose(r["learner_error"], sums[1] / (sums[0] + sums[1]), rtol=1e-10)
        w, z, _ = naive.update_weights_naive(w, p, yh, alpha)
        log_loss += math.log(z)
        np.testing.assert_allclose(r["cost"], n * math.exp(log_loss), rtol=1e-10, err_msg=f"cost {t}")
        if sums[3] == 0.0:  # a perfect stump ends boosting
            assert t == len(rounds) - 1
    if len(rounds) < model.n_estimators and rounds[-1]["error"] > 0:
        # stopped early: the next round's step must be <= 0
        hist = naive.build_histograms_naive(codes, yi, w, mc + 1)
        best = naive.best_stump_naive(hist, mapper.n_value_bins_, mc, criterion)
        h = naive.stump_outputs_naive(codes[best["feature"]], best["bin"], best["missing_left"], mc,
                                      best["left"], best["right"])
        _, sums = naive.round_sums_naive(h, yi, w, w)
        # ... no better than chance: edge (W_I - W_J) / (W_I + W_J) at most MIN_EDGE (up to rounding)
        assert sums[2] - sums[3] <= 2 * naive.MIN_EDGE * (sums[2] + sums[3])
    return exact, ties


@pytest.mark.parametrize("criterion", ["error", "gini"])
def test_boost_loop_replayed_with_naive_functions(replay_data, criterion):
    X, y = replay_data
    model = fastboost.AdaBoostClassifier(n_estimators=20, criterion=criterion).fit(X, y)
    assert model.rounds_.shape[0] == 20
    code = {"error": naive.CRITERION_ERROR, "gini": naive.CRITERION_GINI}[criterion]
    exact, ties = replay_adaboost(model, X, y, code)
    assert exact + ties == 20
    assert exact >= 1  # round 1 (weights 1/256, exact sums) is never a rounding tie
    np.testing.assert_array_equal(model.estimator_weights_, model.rounds_["alpha"])


def test_boost_loop_string_labels_and_nan_only_split():
    """String labels map to class indices in sorted order; a feature whose only split is
    NaN vs. one value is replayed like any other."""
    rng = np.random.default_rng(8)
    X = np.full((64, 2), 3.0)
    X[::7, 1] = np.nan
    y = np.where(rng.random(64) < 0.75, "b", "a")
    y[:2] = ["a", "b"]
    y[::7] = "a"
    model = fastboost.AdaBoostClassifier(n_estimators=5).fit(X, y)
    assert list(model.classes_) == ["a", "b"]
    replay_adaboost(model, X, y, naive.CRITERION_ERROR)
    r = model.rounds_[0]
    assert (r["feature"], r["bin"], r["missing_left"], r["left"], r["right"]) == (1, 0, 0, 1, -1)


def test_boost_loop_replay_early_stops():
    """Replay runs that end early: at chance level (edge <= MIN_EDGE), and after a perfect stump."""
    rng = np.random.default_rng(12)
    n = 250
    X = rng.integers(0, 2, (n, 1)).astype(np.float64)  # one binary feature: the edges shrink fast
    y = np.where(rng.random(n) < 0.8, X[:, 0], 1 - X[:, 0])
    model = fastboost.AdaBoostClassifier(n_estimators=50).fit(X, y)
    assert 1 <= model.n_estimators_ < 50
    replay_adaboost(model, X, y, naive.CRITERION_ERROR)
    # separable on feature 1: one perfect stump, alpha from the floored W_J, then stop
    X = rng.normal(size=(n, 3))
    y = (X[:, 1] > 0.3).astype(int)
    model = fastboost.AdaBoostClassifier(n_estimators=10).fit(X, y)
    assert model.n_estimators_ == 1 and model.rounds_["feature"][0] == 1
    np.testing.assert_allclose(model.rounds_["alpha"][0], 0.5 * math.log(1 / naive.ALPHA_EPS), rtol=1e-9)
    replay_adaboost(model, X, y, naive.CRITERION_ERROR)


def test_constant_features_give_one_constant_stump_then_stop():
    """No feature splits the rows: the loop falls back to the constant stump (majority class).
    Its step is 1/2 log(majority / minority); after it W_I == W_J, so alpha == 0 and boosting
    stops (AdaBoostClassifier: "boosting stops early when alpha <= 0")."""
    rng = np.random.default_rng(8)
    y = np.where(rng.random(64) < 0.75, "b", "a")
    y[:2] = ["a", "b"]
    Xc = np.full((64, 1), 3.0)
    model = fastboost.AdaBoostClassifier(n_estimators=5).fit(Xc, y)
    r = model.rounds_
    n_b = np.count_nonzero(y == "b")
    assert r["left"][0] == r["right"][0] == 1 and r["threshold"][0] == np.inf
    np.testing.assert_allclose(r["alpha"][0], 0.5 * math.log(n_b / (64 - n_b)), rtol=1e-12)
    np.testing.assert_array_equal(model.decision_function(Xc), naive.decision_function_naive(Xc, r))
    assert np.all(np.abs(r["alpha"][1:]) < 1e-12)  # anything after the first round is noise ...
    assert r.shape[0] == 1, (  # ... and should not be there at all
        f"{r.shape[0]} rounds kept; after the constant stump the steps are rounding noise: "
        f"alpha={r['alpha'][1:].tolist()}, error={r['error'][1:].tolist()}, "
        f"left={r['left'][1:].tolist()}")


@pytest.fixture(scope="module")
def fitted(replay_data):
    X, y = replay_data
    return fastboost.AdaBoostClassifier(n_estimators=20).fit(X, y)


def test_estimator_decision_function_matches_naive(fitted, replay_data):
    X, _ = replay_data
    rng = np.random.default_rng(4)
    Xt = np.vstack([X, rng.integers(-1, 11, (100, X.shape[1])) + rng.choice([0, 0.5], (100, X.shape[1]))])
    Xt[rng.random(Xt.shape) < 0.1] = np.nan
    Xt[0, :] = np.nan
    Xt[1, :] = np.inf
    Xt[2, :] = -np.inf
    for Xd in (Xt, Xt.astype(np.float32), np.asfortranarray(Xt)):
        got = fitted.decision_function(Xd)
        np.testing.assert_array_equal(got, naive.decision_function_naive(Xd, fitted.rounds_))
        staged = list(fitted.staged_decision_function(Xd))
        assert len(staged) == fitted.n_estimators_
        np.testing.assert_array_equal(staged[-1], got)
        np.testing.assert_array_equal(staged[4], naive.decision_function_naive(Xd, fitted.rounds_[:5]))


def test_prediction_agrees_with_binned_outputs(fitted, replay_data):
    """Raw-threshold prediction equals the binned stump outputs on the training rows."""
    X, _ = replay_data
    mapper = BinMapper(max_bins=255).fit(X)
    codes = mapper.transform(X)
    margin = np.zeros(X.shape[0])
    for r in fitted.rounds_:
        h = naive.stump_outputs_naive(codes[r["feature"]], r["bin"], r["missing_left"], 255,
                                      r["left"], r["right"])
        margin = margin + r["alpha"] * h
    np.testing.assert_array_equal(fitted.decision_function(X), margin)


# ----------------------------------------------------------------------------- compilation settings
def test_fastmath_defined_once():
    root = pathlib.Path(fastboost.__file__).parent
    config = root / "_config.py"
    for path in sorted(root.rglob("*.py")):
        text = path.read_text()
        if path == config:
            continue
        hits = re.findall(r"fastmath\s*=\s*([^,)\n]*)", text)
        assert not hits, f"{path.relative_to(root)} hard-codes fastmath: {hits}"
    flags = {str(f) for f in FASTMATH}
    for bad in ("nnan", "ninf", "fast", "reassoc"):
        assert bad not in flags, f"FASTMATH contains {bad!r}"
    assert FASTMATH is not True


def test_every_kernel_compiled_with_fastmath_config():
    import importlib
    import pkgutil

    import fastboost._kernels as kernels

    modules = [importlib.import_module(f"fastboost._kernels.{m.name}")
               for m in pkgutil.iter_modules(kernels.__path__)]
    modules.append(importlib.import_module("fastboost._algorithms"))
    seen = 0
    for mod in modules:
        for name, obj in vars(mod).items():
            if isinstance(obj, numba.core.registry.CPUDispatcher) and obj.__module__ == mod.__name__:
                seen += 1
                fm = obj.targetoptions.get("fastmath")
                assert fm is not None and fm is not True, f"{mod.__name__}.{name}: fastmath={fm!r}"
                assert set(fm) == set(FASTMATH), f"{mod.__name__}.{name}: fastmath={fm!r}"
    assert seen >= 15
