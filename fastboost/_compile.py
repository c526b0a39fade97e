"""``fastboost compile``: compile every kernel ahead of time (numba keeps them in its on-disk cache).

A fit compiles only the kernels it uses, the first time it uses them; this runs one tiny fit
(and prediction) of every common kind, group by group, so that such later fits never wait for
the compiler (exact mode combined with categorical features or weight trimming still compiles
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

    def algorithms():
        fit_predict(VadaBoostClassifier(3), X, y)
        fit_predict(EBBoostClassifier(3), X, y)
        fit_predict(SABoostClassifier(3), X, y)
        fit_predict(QuadBoostClassifier(4, penalty="l1", lam=0.01, reweight_every=2), X, y)

    def trees():
        fit_predict(AdaBoostClassifier(3, max_depth=2), X, y)
        fit_predict(AdaBoostClassifier(3, max_depth=2), X3, y3)
        fit_predict(AdaBoostClassifier(3, max_depth=2, leaf="real"), X, y)
        fit_predict(VadaBoostClassifier(3, max_depth=2, leaf="real"), X, y)
        fit_predict(QuadBoostClassifier(4, max_depth=2, reweight_every=2), X, y)

    def exact():
        fit_predict(AdaBoostClassifier(3, max_bins=None), X, y)
        fit_predict(AdaBoostClassifier(3, max_depth=2, max_bins=None), X, y)
        fit_predict(AdaBoostClassifier(3, max_bins=None, validation_fraction=0.3), X, y)

    def variants():  # the learners' variants for categorical features and for weight trimming
        Xc = X.copy()
        Xc[:, 1] = np.digitize(np.nan_to_num(X[:, 1]), [-1.0, 0.0, 1.0])
        for depth in (1, 2):
            fit_predict(AdaBoostClassifier(3, max_depth=depth, categorical_features=[1]), Xc, y)
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

    groups = [("the loop and decision stumps (AdaBoost, lazy stumps)", stumps),
            ("VadaBoost, EBBoost, SABoost, QuadBoost rules", algorithms),
            ("trees (two and K classes, confidence-rated, least squares)", trees),
            ("categorical features and weight trimming (stumps and trees)", variants),
            ("validation and early stopping", validation),
            ("exact mode (max_bins=None: two-byte codes)", exact)]
    try:
        import highspy  # noqa: F401
    except ImportError:  # the LP estimators need the lp extra
        return groups
    return groups + [("LPBoost, RLP-Boost, RQP-Boost (the margin matrix)", totally_corrective)]


def compile_all(say=print):
    """Compile (or load from the cache) every kernel group; one line per group. Returns the seconds taken."""
    import os

    os.environ["FASTBOOST_QUIET_COMPILE"] = "1"  # this command says what it compiles itself
    start = time.perf_counter()
    for name, run in _groups():
        t = time.perf_counter()
        with warnings.catch_warnings():  # the tiny fits' own warnings (e.g. LPBoost's soft margin) are noise here
            warnings.simplefilter("ignore")
            run()
        say(f"  {name}: {time.perf_counter() - t:.1f} s")
    return time.perf_counter() - start
