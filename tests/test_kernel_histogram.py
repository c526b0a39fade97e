"""The histogram kernels (fastboost/_kernels/histogram.py) against their naive NumPy reference (tests/naive.py)."""
import math

import numpy as np
import pytest

import fastboost
from fastboost._kernels.histogram import build_histograms, build_histograms_reference, n_feature_groups
from fastboost._types import Y_DTYPE

try:  # tests/ as a package or as a plain directory on sys.path
    from . import naive
    from .kernel_cases import MAX_BINS, SIZES, case, kernel_hist
except ImportError:
    import naive
    from kernel_cases import MAX_BINS, SIZES, case, kernel_hist


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("max_bins", MAX_BINS)
def test_build_histograms_matches_naive(n, max_bins):
    _, mapper, codes, y, u = case(n, max_bins)
    n_bins = mapper.missing_code + 1
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


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
@pytest.mark.parametrize("d", [1, 2, 3, 4, 5, 7, 9, 20])
def test_tuned_histograms_bit_identical_to_reference(d, dtype):
    """The grouped kernel (up to 4 features per pass over the rows) against the one-feature-at-a-time reference
    and the naive per-class bincount, on random float weights (no exact sums to hide a different summation
    order), n not a multiple of 4 or 8, ties, the missing bin and codes with their top bits set, for every
    valid number of groups (including ones the kernel must raise to ceil(d / 4)) and 1-2 threads, for both
    code widths."""
    rng = np.random.default_rng(d)
    missing = 255 if dtype == np.uint8 else 4099  # (uint16: a missing code above 255, as in exact mode)
    for n in (1, 7, 37, 3001):
        codes = rng.integers(0, 9, (d, n)).astype(dtype)
        codes[rng.random((d, n)) < 0.1] = missing
        codes[rng.random((d, n)) < 0.1] = missing - 1
        y = rng.integers(0, 2, n).astype(Y_DTYPE)
        u = rng.random(n) * rng.choice([1e-9, 1.0, 1e6], n)
        want = naive.build_histograms_naive(codes, y, u, missing + 1)
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


def _row_order_histogram(codes_f, y, x, rows, n_bins):
    """hist[b, c] = the sum of x over the rows (in their order) with code b and class c, one row at a time."""
    out = np.zeros((n_bins, 2))
    for i in rows:
        out[codes_f[i], y[i]] += x[i]
    return out


@pytest.mark.parametrize("subset", [False, True])
def test_q_histograms_are_each_bins_row_order_sums(subset):
    """EBBoost's two histograms (of u and of q) in one pass: every bin the sum over its rows in row order, bit for
    bit, for a subset of the features and (weight trimming) of the rows; the features not asked for are left as
    they were."""
    from fastboost._kernels.histogram import build_histograms_q, build_histograms_q_rows

    rng = np.random.default_rng(int(subset))
    n, d, n_bins = 3001, 7, 12
    codes = rng.integers(0, n_bins, size=(d, n)).astype(np.uint8)
    y = rng.integers(0, 2, n).astype(Y_DTYPE)
    u = rng.random(n) * rng.choice([0.0, 1.0, 1e-300, 3.0], size=n)
    q = rng.random(n) ** 3
    feats = np.array([0, 2, 3, 6] if subset else range(d), dtype=np.int64)
    rows = np.sort(rng.choice(n, n // 3, replace=False)).astype(np.int64)
    for kept in (None, rows):
        hist = np.full((d, n_bins, 2), 7.0)
        histq = np.full((d, n_bins, 2), 7.0)
        if kept is None:
            build_histograms_q(codes, y, u, q, hist, histq, feats)
        else:
            build_histograms_q_rows(codes, y, u, q, kept, hist, histq, feats)
        order = np.arange(n) if kept is None else kept
        for f in range(d):
            if f in feats:
                np.testing.assert_array_equal(hist[f], _row_order_histogram(codes[f], y, u, order, n_bins))
                np.testing.assert_array_equal(histq[f], _row_order_histogram(codes[f], y, q, order, n_bins))
            else:
                assert np.all(hist[f] == 7.0) and np.all(histq[f] == 7.0)
