"""Shared cases for the kernel tests (tests/test_kernel_*.py): every compiled kernel against its naive
NumPy reference (tests/naive.py), plus invariants.

Weights are dyadic (multiples of 1/64) where results are compared bit for bit, so every
sum is exact whatever the summation order and ties are real ties; random float weights
are used where only tolerances (or thread-count independence) are claimed.
"""
import functools

import numpy as np

from fastboost._binning import BinMapper
from fastboost._kernels.histogram import build_histograms
from fastboost._kernels.split import best_split_per_feature
from fastboost._types import NODE_DTYPE, ROUND_DTYPE, Y_DTYPE

try:  # tests/ as a package or as a plain directory on sys.path
    from . import naive
except ImportError:
    import naive

CRITERIA = (naive.CRITERION_ERROR, naive.CRITERION_GINI)
SIZES = (1, 7, 1023, 4097)
#: None: exact mode (uint16 codes, a bin per distinct value: up to 4097 of them here)
MAX_BINS = (2, 3, 17, 255, None)


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
    rng = np.random.default_rng(1000 * n + (999 if max_bins is None else max_bins))
    X = raw_X(rng, n)
    mapper = BinMapper(max_bins=max_bins).fit(X)
    codes = mapper.transform(X)
    signal = np.nan_to_num(X[:, 3], nan=20.0) + 3 * X[:, 0] + rng.normal(scale=3.0, size=n)
    y = (signal > 8).astype(Y_DTYPE)  # the fits' class indices: the kernels compiled for them
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
    best_split_per_feature(hist, n_value_bins, np.zeros(hist.shape[0], np.uint8), missing_code, criterion, value, bin_,
                           ml)
    return value, bin_, ml


def random_rounds(rng, mapper, n_rounds):
    d = mapper.thresholds_.shape[0]
    rounds = np.zeros(n_rounds, dtype=ROUND_DTYPE)
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


def random_trees(rng, T, depth, n_features, n_classes):
    """T trees of depth <= ``depth`` in NODE_DTYPE, children stored depth first (not level order), leaves above
    the full depth, thresholds on a coarse grid (ties with X) and ±inf, NaN going either way."""
    m = 2 ** (depth + 1) - 1
    nodes = np.zeros((T, m), NODE_DTYPE)
    nodes["left"] = -1
    nodes["right"] = -1
    nodes["feature"] = -1
    for t in range(T):
        count = [1]

        def grow(node, level, t=t, count=count):
            if level == depth or (level > 0 and rng.random() < 0.25):
                nodes[t, node]["value"] = rng.normal()
                nodes[t, node]["class_"] = rng.integers(0, n_classes)
                return
            left, right = count[0], count[0] + 1
            count[0] += 2
            nodes[t, node]["left"], nodes[t, node]["right"] = left, right
            nodes[t, node]["feature"] = rng.integers(0, n_features)
            nodes[t, node]["threshold"] = rng.choice([-np.inf, np.inf, *np.arange(-2, 2.5, 0.5)])
            nodes[t, node]["missing_left"] = rng.integers(0, 2)
            grow(left, level + 1)
            grow(right, level + 1)

        grow(0, 0)
    rounds = np.zeros(T, ROUND_DTYPE)
    rounds["alpha"] = rng.normal(size=T)
    return nodes, rounds


def multiclass_problem(n, d, k, seed, nan=True):
    """K-class labels that depend on two features, with ties (a rounded column) and missing values."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X[:, 1] = np.round(X[:, 1])
    if nan:
        X[rng.random((n, d)) < 0.05] = np.nan
    score = np.nan_to_num(X[:, 0]) + 0.7 * np.nan_to_num(X[:, 1]) + rng.normal(0, 0.7, n)
    y = np.digitize(score, np.quantile(score, np.linspace(0, 1, k + 1)[1:-1]))
    return X, y


def assert_vector_trees_match(model, ref, rate):
    """A model with K-vector leaves has the reference's trees (``ref``: per round (nodes, leaf values)): the same
    splits node by node, leaf values to rounding, every step ``rate``."""
    for t, (nodes, values) in enumerate(ref):
        got = model.nodes_[t]
        for j, node in enumerate(nodes):
            assert (got["feature"][j], got["left"][j], got["right"][j]) == (node["feature"], node["left"],
                                                                            node["right"]), f"round {t} node {j}"
            if node["left"] >= 0:
                assert (got["bin"][j], got["missing_left"][j]) == (node["bin"], node["missing_left"])
        np.testing.assert_allclose(model.leaf_values_[t], values, rtol=1e-9, atol=1e-12, err_msg=f"round {t}")
    np.testing.assert_array_equal(model.rounds_["alpha"], rate)
