"""The binning kernel (fastboost/_kernels/binning.py) against its naive NumPy reference (tests/naive.py)."""
import numpy as np
import pytest

from fastboost._binning import feature_major
from fastboost._kernels.binning import map_to_bins

try:  # tests/ as a package or as a plain directory on sys.path
    from . import naive
    from .kernel_cases import MAX_BINS, SIZES, case
except ImportError:
    import naive
    from kernel_cases import MAX_BINS, SIZES, case


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("max_bins", MAX_BINS)
def test_map_to_bins_matches_naive(n, max_bins):
    X, mapper, codes, _, _ = case(n, max_bins)
    mc = mapper.missing_code
    expected = naive.map_to_bins_naive(X, mapper.thresholds_, mapper.n_edges_, mc)
    np.testing.assert_array_equal(codes, expected)
    assert codes.dtype == (np.uint16 if max_bins is None else np.uint8)
    # the kernel itself, in two row blocks written at their row offsets
    direct = np.full((X.shape[1], n), 254, dtype=codes.dtype)
    cut = n // 2
    for start, stop in ((0, cut), (cut, n)):
        if stop > start:
            map_to_bins(feature_major(X[start:stop]), mapper.thresholds_,
                        mc, direct, start)
    np.testing.assert_array_equal(direct, expected)
    # edges of the same raw column from the naive edge definition give the same codes
    cap = 65535 if max_bins is None else max_bins
    for f in (0, 3, 4, 5):
        e = naive.bin_edges_naive(X[:, f], cap)
        if np.unique(X[:, f][~np.isnan(X[:, f])]).size <= cap:
            thr = np.full((1, e.size + 1), np.inf)
            thr[0, : e.size] = e
            np.testing.assert_array_equal(
                codes[f], naive.map_to_bins_naive(X[:, [f]], thr, np.array([e.size]), mc)[0])
