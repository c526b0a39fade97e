"""LPBoost (column generation): a fit of a fixed number of columns, its time per column split into the
master LP and the weak learner, and one round of the master LP warm-started from its previous basis
against the same LP solved from scratch with scipy.optimize.linprog.

The data are twonorm rows x 20 features in float32. Skipped (NotImplementedError in setup) at commits
without LPBoostClassifier or without highspy installed (the ``lp`` extra).
"""
import functools
import time
import warnings

import numpy as np

from .common import FAST, THREADS

NU = 0.1
#: rows -> columns fitted; the LP's own stop rule comes much later at these sizes (342 columns at 10 000)
COLUMNS = {5_000: 20} if FAST else {10_000: 100, 100_000: 10}
#: the warm-against-scratch master: rows and columns k before the timed round
WARM_ROWS, WARM_K = (5_000, 50) if FAST else (10_000, 200)


def lp_parts():
    """LPBoostClassifier and the master LP's helpers; NotImplementedError (asv: skipped) if absent."""
    import fastboost

    if not hasattr(fastboost, "LPBoostClassifier"):
        raise NotImplementedError("fastboost has no LPBoostClassifier at this commit")
    try:
        import highspy  # noqa: F401
    except ImportError:
        raise NotImplementedError("highspy (fastboost's lp extra) is not installed") from None
    try:
        from fastboost._lp import SoftMarginMaster, linprog_soft_margin_lp, soft_margin_caps
    except ImportError as exc:
        raise NotImplementedError(f"no master LP helpers at this commit: {exc}") from None
    return {"LPBoostClassifier": fastboost.LPBoostClassifier, "SoftMarginMaster": SoftMarginMaster,
            "linprog_soft_margin_lp": linprog_soft_margin_lp, "soft_margin_caps": soft_margin_caps}


@functools.lru_cache(maxsize=3)
def twonorm32(n, seed=0):
    from fastboost.datasets import make_twonorm

    X, y = make_twonorm(n, n_features=20, random_state=seed)
    return X.astype(np.float32), y


class ColumnRecords:
    """Fit callback keeping the records of every column so far (the fitted model drops the voters whose
    weight ends at 0, so ``n_estimators_`` is not the number of columns)."""

    def __init__(self):
        self.rounds = None

    def __call__(self, done, rounds):
        self.rounds = rounds
        return False

    @property
    def count(self):
        return 0 if self.rounds is None else len(self.rounds)


def fit_lpboost(n, columns, seed=0):
    """LPBoostClassifier(nu=0.1) on stumps, up to ``columns`` columns; (model, column records)."""
    X, y = twonorm32(n, seed)
    records = ColumnRecords()
    with warnings.catch_warnings():  # a few columns can leave the LP's value at 0: fastboost warns, asv needn't
        warnings.filterwarnings("ignore", message=".*soft-margin LP's value")
        model = lp_parts()["LPBoostClassifier"](n_estimators=columns, nu=NU, n_jobs=THREADS).fit(
            X, y, callbacks=[records])
    return model, records


def warm_up():
    """Compile (or load from numba's cache) what an LPBoost fit uses."""
    fit_lpboost(2_000, 3, seed=12345)


@functools.lru_cache(maxsize=1)
def lpboost_columns(n, count):
    """The margins y_i h_j(x_i) of the first ``count`` columns LPBoost generates on twonorm(n), int8
    [count, n] (from the stumps' thresholds; twonorm has no missing values), and the LP's caps."""
    model, records = fit_lpboost(n, count)
    if records.count < count:
        raise NotImplementedError(f"LPBoost stopped at {records.count} columns, before {count}")
    X, y = twonorm32(n)
    ys = np.where(y == 1, 1, -1).astype(np.int8)
    M = np.empty((count, n), np.int8)
    for j, r in enumerate(records.rounds[:count]):
        h = np.where(X[:, int(r["feature"])] <= r["threshold"], int(r["left"]), int(r["right"])).astype(np.int8)
        np.multiply(h, ys, out=M[j])
    caps = lp_parts()["soft_margin_caps"](np.full(n, 1.0 / n), NU)
    return M, caps


class LPBoostFit:
    """fit() up to COLUMNS[n] columns, binning included; per column: the master LP (``lp_time_``: the margin
    column, adding it, the warm re-solve) and the rest (the weak learner: fit - binning - LP)."""
    params = list(COLUMNS)
    param_names = ["n"]
    number = 1
    repeat = (1, 3, 60.0)
    warmup_time = 0
    timeout = 1800

    def setup(self, n):
        lp_parts()
        twonorm32(n)
        warm_up()

    def _fit(self, n):
        return fit_lpboost(n, COLUMNS[n])

    def time_fit(self, n):
        self._fit(n)

    def peakmem_fit(self, n):
        self._fit(n)

    def track_lp_ms_per_column(self, n):
        model, records = self._fit(n)
        return 1e3 * model.lp_time_ / max(records.count, 1)

    track_lp_ms_per_column.unit = "ms"

    def track_learner_ms_per_column(self, n):
        model, records = self._fit(n)
        return 1e3 * (model.fit_time_ - model.bin_time_ - model.lp_time_) / max(records.count, 1)

    track_learner_ms_per_column.unit = "ms"

    def track_columns(self, n):
        return self._fit(n)[1].count

    track_columns.unit = "columns"


class WarmAgainstScratch:
    """The master LP holding k LPBoost columns and solved gets column k+1: re-solved from its previous basis
    (time_warm_round) against the k+1 columns' LP built and solved from scratch by linprog. With number = 1
    asv runs setup before every sample, so every warm round starts from the solved k-column master."""
    params = [WARM_K]
    param_names = ["k"]
    number = 1
    repeat = (1, 5, 60.0)
    warmup_time = 0
    timeout = 1800

    def setup(self, k):
        self.parts = lp_parts()
        warm_up()
        self.M, self.caps = lpboost_columns(WARM_ROWS, k + 1)
        self.master = self._solved_master(k)

    def _solved_master(self, k):
        master = self.parts["SoftMarginMaster"](self.caps)
        master.add_columns(self.M[:k])
        master.solve()
        return master

    def time_warm_round(self, k):
        self.master.add_columns(self.M[k:k + 1])
        self.master.solve()

    def time_scratch_linprog(self, k):
        self.parts["linprog_soft_margin_lp"](self.M[:k + 1], self.caps)

    def track_scratch_over_warm(self, k):
        """linprog from scratch / warm round on the same k+1 columns (both reach the same LP value)."""
        master = self._solved_master(k)
        started = time.perf_counter()
        master.add_columns(self.M[k:k + 1])
        warm = master.solve()
        warm_seconds = time.perf_counter() - started
        started = time.perf_counter()
        scratch = self.parts["linprog_soft_margin_lp"](self.M[:k + 1], self.caps)
        scratch_seconds = time.perf_counter() - started
        if abs(warm.value - scratch.value) > 1e-7:
            raise AssertionError(f"warm LP value {warm.value!r} != linprog's {scratch.value!r}")
        return scratch_seconds / warm_seconds

    track_scratch_over_warm.unit = "ratio"
