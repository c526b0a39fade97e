"""Shared data and settings for the asv suite.

FASTBOOST_ASV_FAST=1 selects the fast profile (small data, fewer parameters) for a smoke run;
FASTBOOST_ASV_THREADS sets every fit's n_jobs (default: all cores numba sees). On a shared
machine use FASTBOOST_ASV_THREADS=1: while other processes keep a core busy, every parallel
region of a multi-threaded kernel waits a scheduler time slice for its descheduled thread
(a 0.15 ms histogram then reads as 7.9 ms).
Every class warms numba's JIT in ``setup`` (a tiny fit or one kernel call), so the timings
never include compilation. The benchmarks use only fastboost's public estimators and the
kernel entry points of this checkout; anything missing in an older commit raises
NotImplementedError in setup, which asv reports as skipped.
"""
import functools
import os

import numpy as np

FAST = os.environ.get("FASTBOOST_ASV_FAST", "") not in ("", "0")
THREADS = int(os.environ["FASTBOOST_ASV_THREADS"]) if os.environ.get("FASTBOOST_ASV_THREADS") else None

if FAST:
    SIZES = [20_000]
    FEATURES = [20]
    ALGORITHMS = ["adaboost"]
    DEPTHS = [2]
    ROUNDS = 5
    N_TEST = 5_000
else:
    SIZES = [100_000, 1_000_000]
    FEATURES = [20, 100]
    ALGORITHMS = ["adaboost", "vadaboost"]
    DEPTHS = [2, 3]
    ROUNDS = 20
    N_TEST = 100_000

#: --algorithms names of ``fastboost bench`` -> estimator classes (kept here, not imported from
#: fastboost.bench, so the suite also runs on commits that predate it)
ALGORITHM_CLASSES = {
    "adaboost": "AdaBoostClassifier",
    "vadaboost": "VadaBoostClassifier",
    "ebboost": "EBBoostClassifier",
    "saboost": "SABoostClassifier",
    "quadboost": "QuadBoostClassifier",
    "lazyboost": "LazyBoostClassifier",
}


@functools.lru_cache(maxsize=2)
def twonorm(n, d, seed=0):
    """Training data (float64) and a held-out test set, generated (never downloaded)."""
    from fastboost.datasets import make_twonorm

    X, y = make_twonorm(n, n_features=d, random_state=seed)
    Xte, yte = make_twonorm(min(n, N_TEST), n_features=d, random_state=seed + 1)
    return X, y, Xte, yte


def estimator_class(algorithm):
    """The fastboost estimator for an algorithm name; NotImplementedError (asv: skipped) if absent."""
    import fastboost

    cls = getattr(fastboost, ALGORITHM_CLASSES.get(algorithm, ""), None)
    if cls is None:
        raise NotImplementedError(f"fastboost has no {algorithm!r} estimator at this commit")
    return cls


def make(algorithm, n_estimators, **params):
    return estimator_class(algorithm)(n_estimators=n_estimators, **{"n_jobs": THREADS, **params})


def warm_up(algorithm, d, **params):
    """Compile (or load from numba's cache) everything fit and predict use."""
    X, y, _, _ = twonorm(2_000, d, seed=12345)
    make(algorithm, 3, **params).fit(X, y).predict(X)


def accuracy(model, X, y):
    return float(np.mean(model.predict(X) == y))
