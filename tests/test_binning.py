"""BinMapper / bin_edges: edges, codes, input-layout invariance, subsampling, sample weights."""
import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import fastboost._binning as binning_module
from fastboost._binning import BinMapper, bin_edges

try:  # tests/ as a package or as a plain directory on sys.path
    from .naive import bin_edges_naive, map_to_bins_naive
except ImportError:
    from naive import bin_edges_naive, map_to_bins_naive

BIG = np.finfo(np.float64).max


def _mixed_X(rng, n, max_bins=255):
    """Columns: few distinct values, continuous, constant, all-NaN, scattered NaN, ±inf, huge values."""
    cols = [
        rng.integers(-3, 4, n).astype(np.float64),                     # ties, 7 distinct
        rng.normal(size=n),                                            # continuous
        np.full(n, 2.5),                                               # constant
        np.full(n, np.nan),                                            # all NaN
        np.where(rng.random(n) < 0.2, np.nan, rng.integers(0, 40, n)),  # NaN scattered, 40 distinct
        rng.choice([-np.inf, -1.0, 0.0, 1.0, np.inf], n),              # infinities
        rng.choice([-BIG, -1e300, 0.0, 1e300, BIG, np.inf], n),        # huge finite values
        np.round(rng.normal(size=n), 1),                               # ~60 distinct, rounded
    ]
    return np.column_stack(cols)


@pytest.fixture(scope="module")
def mixed():
    rng = np.random.default_rng(1234)
    X = _mixed_X(rng, 3000)
    mapper = BinMapper(max_bins=255).fit(X)
    return X, mapper, mapper.transform(X)


# ----------------------------------------------------------------------------- codes layout
def test_codes_dtype_layout_shape(mixed):
    X, mapper, codes = mixed
    assert codes.dtype == np.uint8
    assert codes.flags.c_contiguous
    assert codes.shape == (X.shape[1], X.shape[0])
    assert mapper.missing_code == 255
    assert mapper.thresholds_.shape == (X.shape[1], 256)
    assert mapper.thresholds_.dtype == np.float64
    assert mapper.n_edges_.shape == mapper.n_value_bins_.shape == (X.shape[1],)


def test_codes_match_naive(mixed):
    X, mapper, codes = mixed
    # edges as the naive reference defines them, then codes = searchsorted(edges, x, "left")
    for f in range(X.shape[1]):
        naive = bin_edges_naive(X[:, f], 255)
        got = mapper.thresholds_[f, : mapper.n_edges_[f]]
        assert got.size == naive.size, f
        # exact regime: any edge in [a, b) is right; check codes and the bracket, not the last bit
        assert np.all(np.isinf(mapper.thresholds_[f, mapper.n_edges_[f]:]))
        assert np.all(np.diff(got) > 0), f"edges of feature {f} not strictly increasing"
    expected = map_to_bins_naive(X, mapper.thresholds_, mapper.n_edges_, mapper.missing_code)
    np.testing.assert_array_equal(codes, expected)
    naive_thr = np.full_like(mapper.thresholds_, np.inf)
    n_edges = np.zeros(X.shape[1], dtype=np.int64)
    for f in range(X.shape[1]):
        e = bin_edges_naive(X[:, f], 255)
        naive_thr[f, : e.size] = e
        n_edges[f] = e.size
    np.testing.assert_array_equal(codes, map_to_bins_naive(X, naive_thr, n_edges, 255))


# ----------------------------------------------------------------------------- exact edges
@pytest.mark.parametrize("max_bins", [2, 3, 17, 255])
def test_exact_edges_each_distinct_value_own_code(max_bins):
    rng = np.random.default_rng(max_bins)
    for m in sorted({1, 2, max_bins // 2 + 1, max_bins}):
        values = np.unique(rng.normal(scale=1e3, size=m * 3))[:m]
        values = rng.permutation(np.concatenate([values, [np.nan]])) if m > 1 else values
        col = rng.choice(values, 400)
        col[:values.size] = values  # every value present
        col = rng.permutation(col)
        mapper = BinMapper(max_bins=max_bins).fit(col[:, None])
        codes = mapper.transform(col[:, None])[0]
        finite = ~np.isnan(col)
        distinct = np.unique(col[finite])
        assert mapper.n_value_bins_[0] == distinct.size
        assert mapper.n_edges_[0] == distinct.size - 1
        # code of each row = rank of its value among the distinct values: own code, monotone
        np.testing.assert_array_equal(codes[finite], np.searchsorted(distinct, col[finite]))
        assert np.all(codes[~finite] == max_bins)
        edges = mapper.thresholds_[0, : mapper.n_edges_[0]]
        assert np.all(distinct[:-1] <= edges) and np.all(edges < distinct[1:])
        # midpoints (up to rounding)
        np.testing.assert_allclose(edges, (distinct[:-1] + distinct[1:]) / 2, rtol=0,
                                   atol=1e-12 * np.abs(distinct).max())


def test_bin_edges_function_exact_and_empty():
    assert bin_edges(np.array([np.nan, np.nan]), 10).size == 0
    assert bin_edges(np.array([3.0, 3.0, np.nan]), 10).size == 0
    col = np.array([0.0, 1.0, 1.0, 4.0, np.nan, 10.0])
    np.testing.assert_array_equal(bin_edges(col, 4), bin_edges_naive(col, 4))
    np.testing.assert_array_equal(bin_edges(col, 4), [0.5, 2.5, 7.0])
    assert bin_edges(col, 3).size <= 2


# ----------------------------------------------------------------------------- quantile edges
@pytest.mark.parametrize("max_bins", [2, 3, 17, 255])
def test_quantile_edges_at_most_max_bins_roughly_equal_counts(max_bins):
    rng = np.random.default_rng(7)
    n = 5000
    col = rng.standard_t(3, size=n)
    edges = bin_edges(col, max_bins)
    assert edges.size <= max_bins - 1
    assert np.all(np.diff(edges) > 0)
    assert edges.size == 0 or (edges[0] >= col.min() and edges[-1] < col.max())
    mapper = BinMapper(max_bins=max_bins).fit(col[:, None])
    codes = mapper.transform(col[:, None])[0]
    assert codes.max() < max_bins
    assert mapper.n_value_bins_[0] == edges.size + 1 <= max_bins
    counts = np.bincount(codes, minlength=mapper.n_value_bins_[0])
    assert counts.size == mapper.n_value_bins_[0]
    # continuous data: the max_bins bins hold n / max_bins values each, up to rounding
    assert mapper.n_value_bins_[0] == max_bins
    np.testing.assert_allclose(counts, n / max_bins, atol=2)


def test_quantile_edges_against_naive_positions():
    """Quantile regime: each edge lies between the neighbouring order statistics of its position."""
    rng = np.random.default_rng(3)
    for n, max_bins in [(1000, 17), (4097, 255), (300, 3), (256, 255)]:
        col = rng.normal(size=n)
        got = bin_edges(col, max_bins)
        ref = bin_edges_naive(col, max_bins)
        assert got.size == ref.size
        s = np.sort(col)
        for j, e in enumerate(got, start=1):
            pos = j * (n - 1) / max_bins
            lo = max(int(np.floor(pos)) - 1, 0)
            hi = min(int(np.floor(pos)) + 2, n - 1)
            assert s[lo] <= e <= s[hi], (n, max_bins, j)


def test_heavy_ties_more_distinct_than_bins():
    rng = np.random.default_rng(5)
    n = 4000
    col = np.where(rng.random(n) < 0.6, 0.0, rng.normal(size=n))  # 60 % zeros + continuous
    for max_bins in (3, 17, 255):
        mapper = BinMapper(max_bins=max_bins).fit(col[:, None])
        codes = mapper.transform(col[:, None])[0]
        edges = mapper.thresholds_[0, : mapper.n_edges_[0]]
        assert mapper.n_value_bins_[0] <= max_bins
        assert codes.max() < max_bins
        assert np.all(np.diff(edges) > 0)
        # all zeros share one code, and no other bin is empty
        assert np.unique(codes[col == 0.0]).size == 1
        assert np.all(np.bincount(codes, minlength=mapper.n_value_bins_[0]) > 0)


# ----------------------------------------------------------------------------- NaN and infinities
@pytest.mark.parametrize("max_bins", [2, 17, 255])
def test_nan_gets_missing_code(max_bins):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(500, 3))
    X[rng.random(500) < 0.3, 0] = np.nan
    X[:, 1] = np.nan
    mapper = BinMapper(max_bins=max_bins).fit(X)
    codes = mapper.transform(X)
    np.testing.assert_array_equal(codes.T == max_bins, np.isnan(X))
    assert mapper.n_value_bins_[1] == 0 and mapper.n_edges_[1] == 0
    assert mapper.n_value_bins_[0] >= 1
    assert codes[[0, 2]][~np.isnan(X[:, [0, 2]].T)].max() < max_bins


def test_infinities_extreme_codes_exact_regime():
    values = np.array([-np.inf, -BIG, -1.0, 0.0, 1.0, BIG, np.inf])
    for max_bins in (7, 8, 255):
        col = np.concatenate([values, values[::-1], [np.nan]])
        mapper = BinMapper(max_bins=max_bins).fit(col[:, None])
        codes = mapper.transform(col[:, None])[0].astype(int)
        # each value its own code, in order; ±inf distinguished from ±BIG
        assert mapper.n_value_bins_[0] == values.size
        np.testing.assert_array_equal(codes[: values.size], np.arange(values.size))
        np.testing.assert_array_equal(codes[values.size: 2 * values.size], np.arange(values.size)[::-1])
        assert codes[-1] == max_bins
    # only infinities
    col = np.array([np.inf, -np.inf, np.inf])
    codes = BinMapper(max_bins=2).fit_transform(col[:, None])[0]
    np.testing.assert_array_equal(codes, [1, 0, 1])
    col = np.array([np.inf, 5.0, np.inf])
    np.testing.assert_array_equal(BinMapper(max_bins=2).fit_transform(col[:, None])[0], [1, 0, 1])
    col = np.array([-np.inf, 5.0, -np.inf])
    np.testing.assert_array_equal(BinMapper(max_bins=2).fit_transform(col[:, None])[0], [0, 1, 0])


def test_infinities_extreme_codes_quantile_regime():
    rng = np.random.default_rng(11)
    col = rng.normal(size=2000)
    col[:50] = np.inf
    col[50:100] = -np.inf
    for max_bins in (3, 17, 255):
        mapper = BinMapper(max_bins=max_bins).fit(col[:, None])
        codes = mapper.transform(col[:, None])[0]
        assert np.all(codes[:50] == codes.max()) and codes.max() == mapper.n_value_bins_[0] - 1
        assert np.all(codes[50:100] == 0)
        assert mapper.n_value_bins_[0] <= max_bins
        assert not np.any(np.isnan(mapper.thresholds_))


# ----------------------------------------------------------------------------- input invariance
@pytest.fixture(scope="module")
def invariance_data():
    rng = np.random.default_rng(99)
    n = 2500
    X32 = np.column_stack([
        rng.normal(size=n), rng.integers(0, 5, n), rng.uniform(-1e3, 1e3, n), rng.integers(-300, 300, n),
    ]).astype(np.float32)
    X32[rng.random(n) < 0.1, 0] = np.nan
    X32[rng.random(n) < 0.05, 2] = np.nan
    X32[3, 2] = np.inf
    X32[4, 2] = -np.inf
    X64 = X32.astype(np.float64)
    ref = BinMapper(max_bins=255).fit(X64)
    return X32, X64, ref, ref.transform(X64)


def _check_same(mapper, codes, ref, ref_codes):
    np.testing.assert_array_equal(mapper.thresholds_, ref.thresholds_)
    np.testing.assert_array_equal(mapper.n_edges_, ref.n_edges_)
    np.testing.assert_array_equal(mapper.n_value_bins_, ref.n_value_bins_)
    assert codes.dtype == np.uint8 and codes.flags.c_contiguous
    np.testing.assert_array_equal(codes, ref_codes)


def test_float32_same_codes_as_float64(invariance_data):
    X32, X64, ref, ref_codes = invariance_data
    m = BinMapper(max_bins=255).fit(X32)
    _check_same(m, m.transform(X32), ref, ref_codes)
    np.testing.assert_array_equal(ref.transform(X32), ref_codes)


def test_c_vs_f_order_and_noncontiguous(invariance_data):
    X32, X64, ref, ref_codes = invariance_data
    for X in (np.asfortranarray(X64), np.asfortranarray(X32), np.ascontiguousarray(X64)):
        m = BinMapper(max_bins=255).fit(X)
        _check_same(m, m.transform(X), ref, ref_codes)
    wide = np.zeros((X64.shape[0], 2 * X64.shape[1]))
    wide[:, ::2] = X64
    view = wide[:, ::2]  # neither C- nor F-contiguous
    m = BinMapper(max_bins=255).fit(view)
    _check_same(m, m.transform(view), ref, ref_codes)


def test_memmap(invariance_data, tmp_path):
    X32, X64, ref, ref_codes = invariance_data
    for dtype, order, data in ((np.float64, "C", X64), (np.float32, "F", X32)):
        path = tmp_path / f"X_{dtype.__name__}_{order}.dat"
        mm = np.memmap(path, dtype=dtype, mode="w+", shape=data.shape, order=order)
        mm[:] = data
        mm.flush()
        ro = np.memmap(path, dtype=dtype, mode="r", shape=data.shape, order=order)
        m = BinMapper(max_bins=255).fit(ro)
        _check_same(m, m.transform(ro), ref, ref_codes)


def test_integer_arrays():
    rng = np.random.default_rng(4)
    Xi = np.column_stack([rng.integers(0, 1000, 3000), rng.integers(0, 3, 3000),
                          rng.integers(0, 2 ** 30, 3000)])
    ref = BinMapper(max_bins=255).fit(Xi.astype(np.float64))
    ref_codes = ref.transform(Xi.astype(np.float64))
    for dtype in (np.int64, np.int32, np.uint32, np.uint64):
        X = Xi.astype(dtype)
        m = BinMapper(max_bins=255).fit(X)
        _check_same(m, m.transform(X), ref, ref_codes)
        Xf = np.asfortranarray(X)
        _check_same(m, m.transform(Xf), ref, ref_codes)
    Xb = rng.random((100, 2)) < 0.5
    Xb[0] = [False, True]
    Xb[1] = [True, False]
    m = BinMapper(max_bins=255).fit(Xb)
    np.testing.assert_array_equal(m.transform(Xb), Xb.T.astype(np.uint8))


def test_dataframe_with_nullable_int(invariance_data):
    X32, X64, ref, ref_codes = invariance_data
    df = pd.DataFrame({f"c{j}": X64[:, j] for j in range(X64.shape[1])})
    m = BinMapper(max_bins=255).fit(df)
    _check_same(m, m.transform(df), ref, ref_codes)
    # nullable Int64 column holding pd.NA, next to a float32 column and a plain int column
    rng = np.random.default_rng(8)
    n = 1500
    ints = rng.integers(-50, 50, n)
    na = rng.random(n) < 0.15
    f32 = rng.normal(size=n).astype(np.float32)
    df = pd.DataFrame({
        "a": pd.array(np.where(na, None, ints).tolist(), dtype="Int64"),
        "b": f32,
        "c": ints,
    })
    assert df["a"].isna().sum() == na.sum()
    Xf = np.column_stack([np.where(na, np.nan, ints.astype(np.float64)), f32.astype(np.float64),
                          ints.astype(np.float64)])
    r = BinMapper(max_bins=255).fit(Xf)
    m = BinMapper(max_bins=255).fit(df)
    _check_same(m, m.transform(df), r, r.transform(Xf))
    assert np.all(m.transform(df)[0][na] == 255)


def test_chunked_transform_matches_single_chunk(invariance_data, monkeypatch):
    """Rows are mapped in chunks of >= 1024 rows: several chunks give the same codes as one."""
    X32, X64, ref, ref_codes = invariance_data
    rng = np.random.default_rng(2)
    X = np.vstack([X64, X64[rng.permutation(X64.shape[0])[:1600]]])  # 4100 rows: 5 chunks
    one = ref.transform(X)
    monkeypatch.setattr(binning_module, "_CHUNK_BYTES", 1)
    for data in (X, np.asfortranarray(X.astype(np.float32)), pd.DataFrame(X)):
        np.testing.assert_array_equal(ref.transform(data), one)
    np.testing.assert_array_equal(one, map_to_bins_naive(X, ref.thresholds_, ref.n_edges_, 255))


# ----------------------------------------------------------------------------- subsample, weights
@pytest.fixture(scope="module")
def big_continuous():
    rng = np.random.default_rng(21)
    X = rng.normal(size=(5000, 3))
    X[rng.random(5000) < 0.1, 1] = np.nan
    return X


def test_subsample_deterministic_for_fixed_seed(big_continuous):
    X = big_continuous
    a = BinMapper(subsample=1000, random_state=0).fit(X)
    b = BinMapper(subsample=1000, random_state=0).fit(X)
    np.testing.assert_array_equal(a.thresholds_, b.thresholds_)
    np.testing.assert_array_equal(a.transform(X), b.transform(X))
    rs = np.random.RandomState(5)
    c = BinMapper(subsample=1000, random_state=np.random.RandomState(5)).fit(X)
    d = BinMapper(subsample=1000, random_state=rs).fit(X)
    np.testing.assert_array_equal(c.thresholds_, d.thresholds_)
    # a different seed draws a different subsample, hence different quantile edges
    e = BinMapper(subsample=1000, random_state=1).fit(X)
    assert not np.array_equal(a.thresholds_, e.thresholds_)
    # a subsample of 1000 rows: the edges are those of 1000 of the rows, not of all 5000
    full = BinMapper(subsample=10_000, random_state=0).fit(X)
    assert not np.array_equal(a.thresholds_, full.thresholds_)
    np.testing.assert_array_equal(a.n_value_bins_, [255, 255, 255])


def test_subsample_not_used_below_threshold(big_continuous):
    X = big_continuous[:1000]
    a = BinMapper(subsample=1000, random_state=0).fit(X)
    b = BinMapper(subsample=1000, random_state=123).fit(X)
    np.testing.assert_array_equal(a.thresholds_, b.thresholds_)
    ref = np.full_like(a.thresholds_, np.inf)
    for f in range(X.shape[1]):
        e = bin_edges(X[:, f], 255)
        ref[f, : e.size] = e
    np.testing.assert_array_equal(a.thresholds_, ref)


def test_zero_weight_rows_ignored_when_fitting_edges():
    rng = np.random.default_rng(31)
    n = 800
    X = np.column_stack([rng.integers(0, 6, n).astype(np.float64), rng.normal(size=n),
                         rng.normal(size=n)])
    sw = rng.integers(1, 4, n).astype(np.float64)
    zero = rng.random(n) < 0.3
    sw[zero] = 0.0
    X[zero, 0] = 100.0 + rng.integers(0, 3, zero.sum())  # values only the zero-weight rows have
    X[zero, 1] = 1e6
    X[zero, 2] = np.nan
    m = BinMapper(max_bins=255).fit(X, sample_weight=sw)
    ref = BinMapper(max_bins=255).fit(X[~zero], sample_weight=sw[~zero])
    np.testing.assert_array_equal(m.thresholds_, ref.thresholds_)
    np.testing.assert_array_equal(m.n_value_bins_, ref.n_value_bins_)
    assert m.n_value_bins_[0] == 6  # the zero-weight values 100..102 got no bins of their own
    assert np.all(m.thresholds_[np.isfinite(m.thresholds_)] < 100.0)
    # weights in {0, 1}: the same as fitting the positive-weight rows without weights
    sw01 = (sw > 0).astype(np.float64)
    np.testing.assert_array_equal(BinMapper(max_bins=255).fit(X, sw01).thresholds_,
                                  BinMapper(max_bins=255).fit(X[~zero]).thresholds_)
    # DataFrame input takes the same path through the weights
    np.testing.assert_array_equal(BinMapper(max_bins=255).fit(pd.DataFrame(X), sw).thresholds_,
                                  m.thresholds_)


def test_integer_weight_equals_repeated_row():
    """Documented in bin_edges: with weights, an integer weight equals repeating the row."""
    rng = np.random.default_rng(12)
    n = 900
    X = np.column_stack([rng.normal(size=n), rng.integers(0, 9, n), np.round(rng.normal(size=n), 2)])
    X[rng.random(n) < 0.1, 0] = np.nan
    sw = rng.integers(1, 5, n)
    for max_bins in (3, 17, 255):
        m = BinMapper(max_bins=max_bins).fit(X, sample_weight=sw.astype(np.float64))
        ref = BinMapper(max_bins=max_bins).fit(np.repeat(X, sw, axis=0))
        np.testing.assert_array_equal(m.thresholds_, ref.thresholds_)
        np.testing.assert_array_equal(m.n_value_bins_, ref.n_value_bins_)


@pytest.mark.parametrize("scale", [0.5, 1.0, 3.0])
def test_uniform_weights_bin_like_no_weights(scale):
    rng = np.random.default_rng(13)
    n, max_bins = 4000, 17
    X = rng.normal(size=(n, 2))
    m = BinMapper(max_bins=max_bins).fit(X, sample_weight=np.full(n, scale))
    np.testing.assert_array_equal(m.n_value_bins_, [max_bins, max_bins])
    codes = m.transform(X)
    for f in range(2):
        np.testing.assert_allclose(np.bincount(codes[f], minlength=max_bins), n / max_bins, rtol=0.02)


def test_weights_summing_to_one_do_not_collapse_bins():
    """Sample weights that sum to 1 (uniform 1/n, or any normalised weights) are as legitimate
    as weights of 1 -- the estimators normalise them to p = sw / sw.sum() anyway -- so they
    must still give max_bins roughly equal-weight bins on continuous data, not 2."""
    rng = np.random.default_rng(13)
    n, max_bins = 4000, 17
    X = rng.normal(size=(n, 2))
    for sw in (np.full(n, 1.0 / n), rng.dirichlet(np.ones(n)), np.full(n, 0.01)):
        m = BinMapper(max_bins=max_bins).fit(X, sample_weight=sw)
        assert list(m.n_value_bins_) == [max_bins, max_bins], (
            f"weights of total {sw.sum():.3g} give {list(m.n_value_bins_)} bins per feature, "
            f"expected {max_bins}")
        codes = m.transform(X)
        if np.ptp(sw) == 0:
            for f in range(2):
                np.testing.assert_allclose(np.bincount(codes[f], minlength=max_bins), n / max_bins,
                                           rtol=0.02)


# ----------------------------------------------------------------------------- code <= k  <=>  x <= threshold
def _check_threshold_consistency(mapper, X):
    codes = mapper.transform(X).astype(np.int64)
    Xd = np.asarray(X, dtype=np.float64)
    for f in range(Xd.shape[1]):
        x = Xd[:, f]
        for k in range(mapper.max_bins):
            thr = mapper.thresholds_[f, k]
            np.testing.assert_array_equal(codes[f] <= k, x <= thr, err_msg=f"feature {f}, k={k}")


def test_code_le_k_iff_x_le_threshold(mixed):
    X, mapper, _ = mixed
    _check_threshold_consistency(mapper, X)
    # on unseen data too (prediction sees new values): values between, below and above the edges
    rng = np.random.default_rng(6)
    Xnew = _mixed_X(rng, 1000)
    Xnew[:, 1] = rng.normal(size=1000) * 3
    Xnew[:, 2] = rng.choice([2.0, 2.5, 3.0, np.nan], 1000)
    _check_threshold_consistency(mapper, Xnew)
    for max_bins in (2, 3, 17):
        m = BinMapper(max_bins=max_bins).fit(X)
        _check_threshold_consistency(m, X)
        with np.errstate(over="ignore"):  # BIG overflows to inf in float32: fine
            X32 = Xnew.astype(np.float32)
        _check_threshold_consistency(m, X32)


_float_values = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True, width=64),
    st.sampled_from([0.0, -0.0, 1.0, -1.0, 5e-324, -5e-324, 1e-323, BIG, -BIG, np.inf, -np.inf, np.nan]),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(col=hnp.arrays(np.float64, st.integers(1, 60), elements=_float_values),
       max_bins=st.sampled_from([2, 3, 5, 17, 255]))
def test_binning_properties_hypothesis(col, max_bins):
    mapper = BinMapper(max_bins=max_bins).fit(col[:, None])
    codes = mapper.transform(col[:, None])[0].astype(np.int64)
    edges = mapper.thresholds_[0, : mapper.n_edges_[0]]
    assert not np.any(np.isnan(mapper.thresholds_))
    assert np.all(np.diff(edges) > 0)
    assert mapper.n_edges_[0] <= max_bins - 1
    nan = np.isnan(col)
    assert np.all(codes[nan] == max_bins)
    assert np.all(codes[~nan] < max(mapper.n_value_bins_[0], 1))
    np.testing.assert_array_equal(codes, map_to_bins_naive(col[:, None], mapper.thresholds_,
                                                           mapper.n_edges_, max_bins)[0])
    for k in range(max_bins):
        np.testing.assert_array_equal(codes <= k, col <= mapper.thresholds_[0, k])
    distinct = np.unique(col[~nan])
    if 0 < distinct.size <= max_bins:
        assert mapper.n_value_bins_[0] == distinct.size
        np.testing.assert_array_equal(codes[~nan], np.searchsorted(distinct, col[~nan]))
    if distinct.size > 0:
        # the extreme values get the extreme codes
        assert codes[~nan][col[~nan] == distinct[0]].min() == 0
        assert codes[~nan][col[~nan] == distinct[-1]].max() == mapper.n_value_bins_[0] - 1


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(col=hnp.arrays(np.float64, st.integers(1, 40), elements=_float_values),
       reps=hnp.arrays(np.int64, 40, elements=st.integers(0, 4)),
       max_bins=st.sampled_from([2, 3, 5, 17]))
def test_weighted_binning_equals_repeated_rows_hypothesis(col, reps, max_bins):
    """Integer sample weights (0 included) bin exactly as the rows repeated that many times."""
    reps = reps[: col.size].copy()
    if reps.sum() == 0:
        reps[0] = 1
    m = BinMapper(max_bins=max_bins).fit(col[:, None], sample_weight=reps.astype(np.float64))
    ref = BinMapper(max_bins=max_bins).fit(np.repeat(col, reps)[:, None])
    np.testing.assert_array_equal(m.thresholds_, ref.thresholds_)
    np.testing.assert_array_equal(m.n_value_bins_, ref.n_value_bins_)
    codes = m.transform(col[:, None])[0].astype(np.int64)
    for k in range(max_bins):
        np.testing.assert_array_equal(codes <= k, col <= m.thresholds_[0, k])


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(block=hnp.arrays(np.float64, st.tuples(st.integers(1, 50), st.integers(1, 4)),
                        elements=_float_values.filter(lambda v: not np.isnan(v))),
       max_bins=st.sampled_from([2, 3, 5, 17, 255]))
def test_columns_binned_together_equal_columns_one_by_one(block, max_bins):
    """A small unweighted sample's columns without NaN get their edges from one sort of the block: the same
    edges (signed zeros included) and distinct counts as column by column."""
    found = binning_module.edges_of_columns(block, max_bins)
    assert len(found) == block.shape[1]
    for f, (edges, n_distinct) in enumerate(found):
        ref, ref_distinct = binning_module.edges_and_distinct(block[:, f].copy(), max_bins)
        assert n_distinct == ref_distinct
        np.testing.assert_array_equal(edges, ref)
        np.testing.assert_array_equal(np.signbit(edges), np.signbit(ref))


@pytest.mark.parametrize("weighted", [False, True])
def test_threaded_edges_equal_the_calling_threads(monkeypatch, weighted):
    """The features' edges are found on threads only from binning_module.THREADED_VALUES sampled values; either
    way every fitted attribute is the same (each thread writes only its own features' entries)."""
    import numba

    rng = np.random.default_rng(11)
    X = _mixed_X(rng, 3000)
    w = rng.random(3000) * (rng.random(3000) < 0.9) if weighted else None
    fitted = []
    for threshold in (10 ** 12, 0):  # never threads, always threads (with more than one)
        monkeypatch.setattr(binning_module, "THREADED_VALUES", threshold)
        before = numba.get_num_threads()
        numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
        try:
            fitted.append(BinMapper(max_bins=63).fit(X, sample_weight=w))
        finally:
            numba.set_num_threads(before)
    serial, threaded = fitted
    for name in ("thresholds_", "n_edges_", "n_value_bins_", "categorical_", "n_features_quantised_"):
        np.testing.assert_array_equal(getattr(serial, name), getattr(threaded, name), err_msg=name)
    assert serial.n_features_quantised_ > 0  # quantile edges as well as one edge per distinct value


def test_block_cut_across_threads_equals_one_block(monkeypatch):
    """A small sample sorted as one block is cut into one block of columns a thread from
    binning_module.BLOCK_THREADED_VALUES values; the fitted attributes are the same either way, with an odd
    number of columns (uneven cuts), NaN columns left to the column-by-column path and signed zeros."""
    import numba

    rng = np.random.default_rng(12)
    X = _mixed_X(rng, 2000)
    X = np.column_stack([X, np.where(rng.random(2000) < 0.5, -0.0, 0.0), rng.normal(size=2000)])  # 11 columns
    fitted = []
    for threshold in (10 ** 12, 0):  # one block, cut
        monkeypatch.setattr(binning_module, "BLOCK_THREADED_VALUES", threshold)
        before = numba.get_num_threads()
        numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
        try:
            fitted.append(BinMapper(max_bins=31).fit(X))
        finally:
            numba.set_num_threads(before)
    whole, cut = fitted
    for name in ("thresholds_", "n_edges_", "n_value_bins_", "n_features_quantised_"):
        np.testing.assert_array_equal(getattr(whole, name), getattr(cut, name), err_msg=name)
    np.testing.assert_array_equal(np.signbit(whole.thresholds_), np.signbit(cut.thresholds_))
    assert whole.n_features_quantised_ > 0
