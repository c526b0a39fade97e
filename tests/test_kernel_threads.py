"""The parallel kernels (binning, histograms, stump search, prediction) give bit-identical results
with 1 and 2 numba threads."""
import contextlib
import os
import threading
import time

import numba
import numpy as np
import pytest

from fastboost import AdaBoostClassifier, _steps
from fastboost._binning import BinMapper, feature_major
from fastboost._config import split_on_threads
from fastboost._kernels.binning import map_to_bins
from fastboost._kernels.predict import add_level_trees, add_steps, add_stump
from fastboost._types import NO_VALUES
from fastboost._validation import read_only
from fastboost.explain import cover_parts

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
            res["codes"] = out = np.zeros_like(codes)
            split_on_threads(lambda f0, f1, out=out: map_to_bins(feature_major(X), mapper.thresholds_, 255, out, 0,
                                                                 f0, f1), X.shape[1], k)
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



def test_cover_pass_bit_identical_with_1_and_2_threads():
    """The cover pass (stumps by split feature, trees by (block, tree) pairs: numeric level-order trees and trees
    with a categorical split) gives the sums of one thread bit for bit."""
    X, _, _, y, _ = case(4097, 255)
    X = np.nan_to_num(X[:, :6])
    X[:, 5] = np.arange(X.shape[0]) % 7  # a categorical feature
    n_categories = np.array([0, 0, 0, 0, 0, 7])
    codes = BinMapper().fit_transform(X, n_categories=n_categories)
    sw = np.random.default_rng(5).random(X.shape[0]) ** 3  # non-dyadic: the order of additions would show
    fits = [(AdaBoostClassifier(n_estimators=25, random_state=0).fit(X, y), False),
            (AdaBoostClassifier(n_estimators=20, max_depth=3, random_state=0).fit(X, y), True),
            (AdaBoostClassifier(n_estimators=20, max_depth=2, categorical_features=[5], random_state=0).fit(X, y),
             True)]
    assert fits[2][0].nodes_["categorical"].any()
    for m, trees in fits:
        parts = []
        for k in (1, min(2, numba.config.NUMBA_NUM_THREADS)):
            with numba_threads(k):
                parts.append(cover_parts(m.rounds_, m.nodes_ if trees else None, codes, 255, sw))
        np.testing.assert_array_equal(parts[0], parts[1])
        assert parts[0].sum() > 0


def test_split_on_threads_covers_every_item_once_and_raises_errors():
    for n_items, k, chunk in ((0, 2, 1), (1, 2, 1), (5, 1, 1), (5, 2, 1), (7, 3, 2), (3, 8, 1), (100, 2, 7)):
        seen = np.zeros(n_items, np.int64)
        ranges = []

        def work(lo, hi, seen=seen, ranges=ranges):
            ranges.append(hi - lo)
            seen[lo:hi] += 1

        split_on_threads(work, n_items, k, chunk)
        np.testing.assert_array_equal(seen, 1)
        assert max(ranges, default=0) <= (n_items if k == 1 else chunk)

    def fail(lo, hi):
        if lo > 0:
            raise ValueError("the second range")

    with pytest.raises(ValueError, match="the second range"):
        split_on_threads(fail, 10, 2)

    pool_calls = []  # an error on the calling thread (as Ctrl-C there) stops the pool's threads taking more shares

    def main_fails(lo, hi):
        if threading.current_thread() is threading.main_thread():
            raise KeyboardInterrupt
        pool_calls.append(lo)
        time.sleep(0.002)

    with pytest.raises(KeyboardInterrupt):
        split_on_threads(main_fails, 400, 2)
    assert len(pool_calls) < 40, len(pool_calls)

    inner = []  # a range that splits again (on a pool thread: on its own thread, not waiting on the pool it is in)
    split_on_threads(lambda lo, hi: split_on_threads(lambda a, b: inner.extend((lo, i) for i in range(a, b)), 4, 2,
                                                     chunk=2), 2, 2)
    assert sorted(inner) == [(0, 0), (0, 1), (0, 2), (0, 3), (1, 0), (1, 1), (1, 2), (1, 3)]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_split_on_threads_in_a_forked_child():
    """A child forked after the pool started makes a pool of its own (the parent's threads are not in it)."""
    split_on_threads(lambda lo, hi: None, 4, 2)  # the parent's pool exists
    pid = os.fork()
    if pid == 0:  # the child: split work over threads, exit 0 only when every item was done once
        try:
            seen = np.zeros(40, np.int64)

            def work(lo, hi):
                seen[lo:hi] += 1

            split_on_threads(work, 40, 2, chunk=3)
            os._exit(0 if (seen == 1).all() else 1)
        except BaseException:
            os._exit(2)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
