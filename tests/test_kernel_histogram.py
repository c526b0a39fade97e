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
