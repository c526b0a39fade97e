"""``fastboost compile``: compile every kernel ahead of time (numba keeps them in its on-disk cache).

A fit compiles only the kernels it uses, the first time it uses them; this runs one tiny fit
(and prediction) of every common kind, group by group, so that such later fits never wait for
the compiler (exact mode combined with categorical features or weight trimming, and the joint
real-valued multiclass trees, ``multiclass="joint"`` or ``"mh"`` with ``leaf="real"``, still compile
on first use).
"""
import time
import warnings

import numpy as np


def _data(n=300, d=5, n_classes=2, dtype=np.float64, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)).astype(dtype)
    X[rng.random((n, d)) < 0.05] = np.nan
    y = np.digitize(X[:, 0] + 0.3 * rng.normal(size=n), np.linspace(-1, 1, n_classes - 1)) if n_classes > 2 \
        else (np.nan_to_num(X[:, 0]) + 0.3 * rng.normal(size=n) > 0).astype(int)
    return X, y


def _groups():
    from . import (
        AdaBoostClassifier,
        EBBoostClassifier,
        LazyBoostClassifier,
        QuadBoostClassifier,
        SABoostClassifier,
        VadaBoostClassifier,
    )

    X, y = _data()
    X3, y3 = _data(n_classes=3)
    X32 = X.astype(np.float32)

    def fit_predict(est, X, y, **fit):
        est.fit(X, y, **fit)
        est.predict(X)
        est.predict_proba(X.astype(np.float32))
        list(est.staged_decision_function(X[:5]))

    def stumps():
        fit_predict(AdaBoostClassifier(3), X, y)
        fit_predict(AdaBoostClassifier(3), X32, y)
        fit_predict(LazyBoostClassifier(3), X, y)
        # the stump learner with its options (carried histograms from 8 192 rows, feature draws, monotone
        # constraints); the fits above take the plain one
        fit_predict(AdaBoostClassifier(3, colsample_bytree=0.5), X, y)
        from ._binning import RADIX_MIN_VALUES, sorted_columns, sorted_values

        # where NumPy's sort is slow (_binning.RADIX_SORT), the radix sorts of a larger sample: its block, its columns
        values = np.random.default_rng(0).normal(size=RADIX_MIN_VALUES)
        sorted_columns(values.reshape(-1, 8))
        sorted_values(values)

    def algorithms():
        fit_predict(VadaBoostClassifier(3), X, y)
        fit_predict(EBBoostClassifier(3), X, y)
        fit_predict(EBBoostClassifier(3, colsample_bytree=0.5), X, y)  # (its learner with feature draws)
        fit_predict(SABoostClassifier(3), X, y)
        fit_predict(QuadBoostClassifier(4, penalty="l1", lam=0.01, reweight_every=2), X, y)

    def trees():
        fit_predict(AdaBoostClassifier(3, max_depth=2), X, y)
        fit_predict(AdaBoostClassifier(3, max_depth=2), X3, y3)
        fit_predict(AdaBoostClassifier(3, max_depth=2, leaf="real"), X, y)
        fit_predict(VadaBoostClassifier(3, max_depth=2, leaf="real"), X, y)
        fit_predict(QuadBoostClassifier(4, max_depth=2, reweight_every=2), X, y)
        # the tree learner with its options (carried root histograms from 8 192 rows, feature draws, monotone
        # constraints) and its updates with carried histograms; the fits above take the plain one
        fit_predict(AdaBoostClassifier(3, max_depth=2, colsample_bytree=0.5), X, y)
        fit_predict(AdaBoostClassifier(3, max_depth=2, colsample_bytree=0.5), X3, y3)
        fit_predict(AdaBoostClassifier(3, leaf="real", colsample_bytree=0.5), X, y)  # (real stumps carry too)

    def exact():
        fit_predict(AdaBoostClassifier(3, max_bins=None), X, y)
        fit_predict(AdaBoostClassifier(3, max_bins=None, colsample_bytree=0.5), X, y)
        fit_predict(AdaBoostClassifier(3, max_depth=2, max_bins=None), X, y)
        fit_predict(AdaBoostClassifier(3, max_depth=2, max_bins=None, colsample_bytree=0.5), X, y)
        fit_predict(AdaBoostClassifier(3, max_bins=None, validation_fraction=0.3), X, y)

    def categorical():  # the learners' variants that scan categories
        Xc = X.copy()
        Xc[:, 1] = np.digitize(np.nan_to_num(X[:, 1]), [-1.0, 0.0, 1.0])
        for depth in (1, 2):
            fit_predict(AdaBoostClassifier(3, max_depth=depth, categorical_features=[1]), Xc, y)
        for depth in (1, 2):
            fit_predict(AdaBoostClassifier(3, max_depth=depth, categorical_features=[1], colsample_bytree=0.5), Xc, y)

    def trimming():  # the learners' variants that choose rows
        for depth in (1, 2):
            fit_predict(AdaBoostClassifier(3, max_depth=depth, weight_trim_rate=0.9), X, y)

    def validation():
        fit_predict(AdaBoostClassifier(3, validation_fraction=0.3), X, y)
        fit_predict(AdaBoostClassifier(3, max_depth=2, validation_fraction=0.3), X, y)
        fit_predict(AdaBoostClassifier(3, validation_fraction=0.3), X3, y3)
        fit_predict(QuadBoostClassifier(4, reweight_every=2, validation_fraction=0.3), X, y)

    def totally_corrective():
        from . import LPBoostClassifier, RLPBoostClassifier, RQPBoostClassifier

        fit_predict(LPBoostClassifier(4), X, y)
        fit_predict(LPBoostClassifier(3, max_depth=2, validation_fraction=0.3), X, y)
        fit_predict(RLPBoostClassifier(3), X, y)
        fit_predict(RQPBoostClassifier(3, solver="lbfgs"), X, y)

    # in the order they are started: the stumps beside the trees (they share little: the loop, binning), then
    # exact mode (two-byte codes), which then finds the split searches, leaf values and prediction kernels it
    # shares with the one-byte fits in the cache, then the longest first, so that parallel processes end
    # together. A group compiles what no group before it compiled (the rest loads from the cache), except while
    # two run at once: started beside the stumps, exact mode compiled those shared kernels a second time (about
    # 12 % more CPU time for the whole command)
    groups = [("the loop and decision stumps (AdaBoost, lazy stumps)", stumps),
              ("trees (two and K classes, confidence-rated, least squares)", trees),
              ("exact mode (max_bins=None: two-byte codes)", exact),
              ("categorical features (stumps and trees)", categorical),
              ("weight trimming (stumps and trees)", trimming),
              ("VadaBoost, EBBoost, SABoost, QuadBoost rules", algorithms),
              ("validation and early stopping", validation)]
    try:
        import highspy  # noqa: F401
    except ImportError:  # the LP estimators need the lp extra
        return groups
    return groups + [("LPBoost, RLP-Boost, RQP-Boost (the margin matrix)", totally_corrective)]


def _run_group(index):
    """Run group ``index`` of :func:`_groups` (in this process or a worker); returns its seconds."""
    import os

    os.environ["FASTBOOST_QUIET_COMPILE"] = "1"  # the command says what it compiles itself
    name, run = _groups()[index]
    t = time.perf_counter()
    with warnings.catch_warnings():  # the tiny fits' own warnings (e.g. LPBoost's soft margin) are noise here
        warnings.simplefilter("ignore")
        run()
    return time.perf_counter() - t


def default_jobs():
    """The processes ``fastboost compile`` runs at once: the cores this process may use."""
    from ._config import usable_cores

    return usable_cores()


def compile_all(say=print, jobs=None):
    """Compile (or load from the cache) every kernel group; one line per group. Returns the seconds taken.

    The groups run in ``jobs`` worker processes at once (default: one per core this process may use), in the
    order of :func:`_groups`; each compiles what no group before it compiled and loads the rest from numba's
    on-disk cache, which processes share safely (numba writes a cache file under a temporary name and renames
    it). ``jobs=1`` compiles every group in this process, one after the other.
    """
    start = time.perf_counter()
    names = [name for name, _ in _groups()]
    jobs = default_jobs() if jobs is None else jobs
    if jobs <= 1:
        for i, name in enumerate(names):
            say(f"  {name}: {_run_group(i):.1f} s")
        return time.perf_counter() - start
    import concurrent.futures
    import multiprocessing

    # spawn: a fresh interpreter per worker (forking a process whose thread pool runs is unsafe)
    with concurrent.futures.ProcessPoolExecutor(min(jobs, len(names)), initializer=_quiet_worker,
                                                mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = {pool.submit(_run_group, i): i for i in range(len(names))}
        for future in concurrent.futures.as_completed(futures):
            say(f"  {names[futures[future]]}: {future.result():.1f} s")
    return time.perf_counter() - start


def _quiet_worker():
    """A worker's warnings and compile notices are the command's noise, not the user's."""
    import os

    os.environ["FASTBOOST_QUIET_COMPILE"] = "1"
    warnings.simplefilter("ignore")
