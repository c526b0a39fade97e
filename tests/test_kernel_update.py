"""The round update (fastboost/_kernels/update.py) against its naive NumPy reference (tests/naive.py)."""
import math

import numba
import numpy as np
import pytest

import fastboost
from fastboost._driver import make_sums
from fastboost._kernels.update import (
    BLOCK,
    apply_stump,
    correct_wrong_sums,
    n_blocks,
    residual_weights,
    squared_weights,
    update_weights,
    variance_weights,
)
from fastboost._types import ROUND_DTYPE, SUMS_DTYPE, RowState

try:  # tests/ as a package or as a plain directory on sys.path
    from . import naive
    from .kernel_cases import SIZES, case
except ImportError:
    import naive
    from kernel_cases import SIZES, case


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
                    record = make_sums(**{name: 99.0 for name in SUMS_DTYPE.names})
                    stump = np.zeros(1, ROUND_DTYPE)[0]
                    stump["feature"], stump["bin"], stump["missing_left"] = f, k, missing_left
                    stump["left"], stump["right"] = left, right
                    rows = RowState(w=w, u=np.full(n, np.nan), q=np.empty(0), ylab=y, yh=yh, block_sums=block_sums)
                    apply_stump(codes[f], stump, mc, rows, u, record)
                    sums = np.array(record[0].tolist()[:8])  # ui, uj, wi, wj, qi, qj, eta, z (not max_step)
                    np.testing.assert_array_equal(yh, yh_ref)
                    np.testing.assert_array_equal(sums[:2], sums_ref[:2])  # dyadic u: exact
                    np.testing.assert_allclose(sums, sums_ref, rtol=1e-12, atol=1e-300)
                    assert np.all(sums[4:] == 0.0)
    h = naive.stump_outputs_naive(codes[3], 2, 1, mc, -1, 1)
    yh, _ = naive.round_sums_naive(h, y, u, w)
    for alpha in (0.0, 0.3, -0.7, 4.0):
        w2 = w.copy()
        correct = yh > 0
        z, s2 = update_weights(w2, p, yh, alpha, w[correct].sum(), w[~correct].sum(), block_sums, True)
        w_ref, z_ref, s2_ref = naive.update_weights_naive(w, p, yh, alpha)
        np.testing.assert_allclose(w2, w_ref, rtol=1e-12, atol=1e-300)
        np.testing.assert_allclose(z, z_ref, rtol=1e-12)
        np.testing.assert_allclose(s2, s2_ref, rtol=1e-12)
        assert math.isclose(w2.sum(), 1.0, rel_tol=1e-12)
        assert np.all(w2[p == 0] == 0.0)


@pytest.mark.parametrize("n", [1, 7, BLOCK, 3 * BLOCK + 11])
def test_correct_wrong_sums_match_numpy_block_by_block(n):
    rng = np.random.default_rng(n)
    x = rng.random(n) ** 8
    x[rng.random(n) < 0.2] = 0.0
    yh = np.where(rng.random(n) < 0.6, 1, -1).astype(np.int8)
    si, sj = correct_wrong_sums(x, yh, np.empty((n_blocks(n), 4)))
    blocks = range(0, n, BLOCK)  # the kernel's order: each block in row order, then the blocks in order
    ref_i = ref_j = 0.0
    for b in blocks:
        ref_i += sum(x[b:b + BLOCK][yh[b:b + BLOCK] > 0].tolist(), 0.0)
        ref_j += sum(x[b:b + BLOCK][yh[b:b + BLOCK] < 0].tolist(), 0.0)
    assert si == ref_i and sj == ref_j


@pytest.mark.parametrize("n", [1, 7, BLOCK, 2 * BLOCK + 5])  # one block on the calling thread, several on threads
def test_transform_passes_match_numpy(n):
    """VadaBoost's, EBBoost's and QuadBoost's transforms (update.variance_weights, squared_weights,
    residual_weights) against the same expressions in NumPy (to a few units in the last place: the kernels may
    fuse a multiply and an add), rows of p = 0 included; bit for bit the same with 1 and 2 threads and as one
    serial loop compiled with the kernels' options; QuadBoost's q left alone when it has no room for every row."""
    rng = np.random.default_rng(n)
    p = rng.random(n) * (rng.random(n) < 0.8)
    p[0] = 0.0
    w = rng.random(n) * rng.choice([1e-9, 1.0, 1e3], n)
    r = rng.normal(size=n)
    r[rng.random(n) < 0.1] = 0.0
    lam = 0.3
    with np.errstate(divide="ignore", invalid="ignore"):
        u_np = np.where(p > 0.0, lam * w * w / p + (1.0 - lam) * w, 0.0)
        q_np = np.where(p > 0.0, w * w / p, 0.0)
    u_serial = np.full(n, np.nan)
    _serial_variance(w, p, lam, u_serial)
    np.testing.assert_allclose(u_serial, u_np, rtol=1e-15, atol=0)
    for threads in (1, 2):
        with fastboost._config.n_threads(threads):
            u = np.full(n, np.nan)
            variance_weights(w, p, lam, u)
            assert u.tobytes() == u_serial.tobytes()
            u = np.full(n, np.nan)
            q = np.full(n, np.nan)
            squared_weights(w, p, u, q)
            assert u.tobytes() == w.tobytes()
            np.testing.assert_allclose(q, q_np, rtol=1e-15, atol=0)
            assert np.all(q[p == 0.0] == 0.0)
            ylab = np.full(n, 7, np.uint16)
            u = np.full(n, np.nan)
            q = np.full(n, np.nan)
            residual_weights(r, p, ylab, u, q)
            np.testing.assert_array_equal(ylab, (r > 0.0).astype(np.uint16))
            assert u.tobytes() == (p * np.abs(r)).tobytes() and q.tobytes() == p.tobytes()
            short = np.full(max(n - 1, 0), -1.0)
            residual_weights(r, p, ylab, u, short)  # (q without a row's room for every row: not written)
            assert np.all(short == -1.0)


@numba.njit(fastmath=fastboost._config.FASTMATH)
def _serial_variance(w, p, lam, u):
    """VadaBoost's transform as one serial loop (as it was before it ran over blocks on the threads)."""
    for i in range(w.shape[0]):
        if p[i] > 0.0:
            u[i] = lam * w[i] * w[i] / p[i] + (1.0 - lam) * w[i]
        else:
            u[i] = 0.0
