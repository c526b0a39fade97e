"""The binning kernel (fastboost/_kernels/binning.py) against its naive NumPy reference (tests/naive.py)."""
import numpy as np
import pytest

from fastboost._binning import feature_major, map_rows
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
    # two row blocks written at their row offsets: the first by map_rows (the features split over the threads
    # when the block is large), the second by the kernel itself in two ranges of features
    d = X.shape[1]
    direct = np.full((d, n), 254, dtype=codes.dtype)
    cut = n // 2
    if cut:
        map_rows(X[:cut], mapper.thresholds_, mc, direct, 0)
    if n > cut:
        columns = feature_major(X[cut:])
        for f0, f1 in ((0, 3), (3, d)):
            map_to_bins(columns, mapper.thresholds_, mc, direct, cut, f0, f1)
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


def _sortable_columns(rng, n):
    """Columns with ties, infinities, subnormals, huge values, constants, one side's zeros and both zeros."""
    return np.stack([rng.standard_normal(n), rng.integers(-3, 4, n).astype(np.float64),
                     rng.choice([-np.inf, np.inf, 0.0, 5e-324, -5e-324, 1e308, -1e308, 2.5], n), np.full(n, 3.0),
                     np.where(rng.random(n) < 0.5, -0.0, 0.0), -np.abs(rng.standard_normal(n)),
                     np.round(rng.standard_normal(n), 1) * -0.0 + np.round(rng.standard_normal(n), 1)])


@pytest.mark.parametrize("n", [1, 2, 5, 300, 5000])
@pytest.mark.parametrize("by_row", [False, True])
def test_radix_sort_of_columns_equals_numpys_sort(n, by_row):
    """sort_columns against np.sort: the same values bit for bit (signed zeros too) wherever a column does not
    hold both -0.0 and 0.0, and mixed_zeros marks exactly the columns that do."""
    from fastboost._kernels.binning import sort_columns

    rng = np.random.default_rng(n)
    cols = np.ascontiguousarray(_sortable_columns(rng, n))
    out = np.full(cols.shape, np.nan)
    mixed = np.full(cols.shape[0], 7, np.uint8)
    k = cols.shape[0]
    for j0, j1 in ((0, 3), (3, k)):  # two ranges of columns, as the threads take them
        a = np.ascontiguousarray(cols.T) if by_row else cols
        sort_columns(a.view(np.uint64), by_row, out.view(np.uint64), mixed, j0, j1)
    for j, col in enumerate(cols):
        ref = np.sort(col)
        np.testing.assert_array_equal(out[j], ref)
        both = (col == 0).any() and np.signbit(col[col == 0]).any() and not np.signbit(col[col == 0]).all()
        assert mixed[j] == both, j
        if not both:
            np.testing.assert_array_equal(np.signbit(out[j]), np.signbit(ref))


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("columns", [False, True], ids=["block", "columns"])
def test_binning_with_the_radix_sort_equals_numpys(monkeypatch, order, columns):
    """With the radix sort (chosen where NumPy's sort is slow) a mapper fits the same attributes as with NumPy's
    sort, signed zeros included; a column of both zeros goes through NumPy's sort. Both paths: the small sample's
    block, and column by column on threads (a large sample's)."""
    import fastboost._binning as binning

    if columns:
        monkeypatch.setattr(binning, "THREADED_VALUES", 0)
    rng = np.random.default_rng(3)
    X = np.asarray(np.stack(list(_sortable_columns(rng, 4000)) + [rng.standard_normal(4000) * 1e-310], axis=1),
                   order=order)
    monkeypatch.setattr(binning, "RADIX_MIN_VALUES", 1)  # (the sample is small: NumPy would sort it)
    fitted = []
    for radix in (False, True):
        monkeypatch.setattr(binning, "RADIX_SORT", radix)
        fitted.append(binning.BinMapper(max_bins=63).fit(X))
    for name in ("thresholds_", "n_edges_", "n_value_bins_", "n_features_quantised_"):
        np.testing.assert_array_equal(getattr(fitted[0], name), getattr(fitted[1], name), err_msg=name)
    np.testing.assert_array_equal(np.signbit(fitted[0].thresholds_), np.signbit(fitted[1].thresholds_))
    assert fitted[0].n_features_quantised_ > 0


@pytest.mark.parametrize("columns", [False, True], ids=["block", "columns"])
def test_the_radix_sort_sorts_only_samples_of_radix_min_values(monkeypatch, columns):
    """Below RADIX_MIN_VALUES values NumPy sorts the sample even where the radix sort is chosen (a small fit does
    not compile it); from there the radix sort does, for the block and for each column of a large sample."""
    import fastboost._binning as binning

    calls = []
    for name in ("sort_columns", "radix_sort"):
        real = getattr(binning, name)
        monkeypatch.setattr(binning, name, lambda *a, _real=real, _name=name: calls.append(_name) or _real(*a))
    monkeypatch.setattr(binning, "RADIX_SORT", True)
    if columns:
        monkeypatch.setattr(binning, "THREADED_VALUES", 0)
    X = np.random.default_rng(0).standard_normal((1000, 4))
    size = X.shape[0] if columns else X.size  # (the values of a column, or of the block)
    for limit, radix in ((size + 1, False), (size, True)):
        monkeypatch.setattr(binning, "RADIX_MIN_VALUES", limit)
        calls.clear()
        fitted = binning.BinMapper(max_bins=63).fit(X)
        assert calls == ([] if not radix else ["radix_sort"] * 4 if columns else ["sort_columns"]), (limit, calls)
        np.testing.assert_array_equal(fitted.thresholds_, binning.BinMapper(max_bins=63).fit(X).thresholds_)


def test_the_radix_sort_is_chosen_only_for_zen_4(monkeypatch, tmp_path):
    """numpy_sort_is_slow reads the first processor of /proc/cpuinfo: AMD family 25 with AVX-512 (Zen 4) only,
    and not when NumPy's AVX-512 features are disabled."""
    import builtins

    import fastboost._binning as binning

    real_open = builtins.open

    def cpuinfo(vendor, family, flags):
        path = tmp_path / f"{vendor}-{family}-{len(flags)}"
        path.write_bytes(b"processor\t: 0\nvendor_id\t: %s\ncpu family\t: %s\nflags\t\t: %s\n\nprocessor\t: 1\n"
                         b"vendor_id\t: AuthenticAMD\ncpu family\t: 25\nflags\t\t: avx512f\n" % (vendor, family, flags))
        monkeypatch.setattr(builtins, "open",
                            lambda f, *a, **k: real_open(path if f == "/proc/cpuinfo" else f, *a, **k))

    monkeypatch.delenv("NPY_DISABLE_CPU_FEATURES", raising=False)
    cases = [(b"AuthenticAMD", b"25", b"fpu avx2 avx512f avx512dq", True),
             (b"AuthenticAMD", b"25", b"fpu avx2", False),  # Zen 3
             (b"AuthenticAMD", b"26", b"fpu avx2 avx512f", False),  # Zen 5
             (b"GenuineIntel", b"6", b"fpu avx2 avx512f", False)]
    for vendor, family, flags, slow in cases:
        cpuinfo(vendor, family, flags)
        assert binning.numpy_sort_is_slow() is slow, (vendor, family, flags)
    cpuinfo(b"AuthenticAMD", b"25", b"avx512f")
    monkeypatch.setenv("NPY_DISABLE_CPU_FEATURES", "X86_V4")
    assert binning.numpy_sort_is_slow() is False
