"""The parallel kernels (binning, histograms, stump search, prediction) give bit-identical results
with 1 and 2 numba threads."""
import contextlib

import numba
import numpy as np

from fastboost import _steps
from fastboost._binning import feature_major
from fastboost._kernels.binning import map_to_bins
from fastboost._kernels.predict import add_level_trees, add_steps, add_stump
from fastboost._types import NO_VALUES
from fastboost._validation import read_only

try:  # tests/ as a package or as a plain directory on sys.path
    from .kernel_cases import CRITERIA, case, kernel_best_splits, kernel_hist, random_rounds, random_trees
except ImportError:
    from kernel_cases import CRITERIA, case, kernel_best_splits, kernel_hist, random_rounds, random_trees


@contextlib.contextmanager
def numba_threads(k):
    previous = numba.get_num_threads()
    numba.set_num_threads(k)
    try:
        yield
    finally:
        numba.set_num_threads(previous)


def test_kernels_bit_identical_with_1_and_2_threads():
    X, mapper, codes, y, _ = case(4097, 255)
    rng = np.random.default_rng(17)
    w = rng.random(codes.shape[1]) ** 3  # non-dyadic: summation order would show
    rounds = random_rounds(rng, mapper, 25)
    tables = _steps.build(_steps.splits(rounds, None, None, 2))
    nodes, tree_rounds = random_trees(rng, 9, 3, X.shape[1], 2)
    trees = _steps.level_trees(nodes, tree_rounds, NO_VALUES, 2)
    results = []
    for k in (1, min(2, numba.config.NUMBA_NUM_THREADS)):
        with numba_threads(k):
            res = {}
            res["codes"] = np.zeros_like(codes)
            map_to_bins(feature_major(X), mapper.thresholds_, 255, res["codes"], 0)
            res["hist"] = kernel_hist(codes, y, w, 256)
            for c in CRITERIA:
                res[f"split{c}"] = kernel_best_splits(res["hist"], mapper.n_value_bins_, 255, c)
            res["df"] = np.zeros((X.shape[0], 1, 1))
            add_steps(read_only(np.ascontiguousarray(X)), tables, res["df"])
            res["trees"] = np.zeros((X.shape[0], 1))
            add_level_trees(read_only(np.ascontiguousarray(X)), trees, res["trees"])
            res["staged"] = np.zeros(X.shape[0])
            add_stump(read_only(np.ascontiguousarray(X)), rounds, 3, res["staged"])
        results.append(res)
    for key in results[0]:
        a, b = results[0][key], results[1][key]
        if isinstance(a, tuple):
            for x, z in zip(a, b):
                np.testing.assert_array_equal(x, z, err_msg=key)
        else:
            np.testing.assert_array_equal(a, b, err_msg=key)
    np.testing.assert_array_equal(results[0]["codes"], codes)
