"""Boosting rounds: a full fit with a fixed number of rounds, stumps and (when fastboost has them) trees."""
from .common import ALGORITHMS, DEPTHS, FEATURES, ROUNDS, SIZES, accuracy, estimator_class, make, twonorm, warm_up


class _Fit:
    number = 1
    repeat = (1, 5, 30.0)
    warmup_time = 0
    timeout = 900
    extra = {}

    def _setup(self, n, d, algorithm, **extra):
        self.extra = extra
        self.X, self.y, self.Xte, self.yte = twonorm(n, d)
        self.algorithm = algorithm
        warm_up(algorithm, d, **extra)

    def _fit(self):
        return make(self.algorithm, ROUNDS, **self.extra).fit(self.X, self.y)

    def _per_round_ms(self):
        """Training time per round, binning excluded: (fit_time_ - bin_time_) / n_estimators_."""
        m = self._fit()
        return 1e3 * (m.fit_time_ - m.bin_time_) / max(m.n_estimators_, 1)


class StumpRounds(_Fit):
    """fit() with ROUNDS rounds of decision stumps (binning included; see track_per_round_ms)."""
    params = (SIZES, FEATURES, ALGORITHMS)
    param_names = ["n", "d", "algorithm"]

    def setup(self, n, d, algorithm):
        self._setup(n, d, algorithm)

    def time_fit(self, n, d, algorithm):
        self._fit()

    def peakmem_fit(self, n, d, algorithm):
        self._fit()

    def track_per_round_ms(self, n, d, algorithm):
        """Training time per round, binning excluded (fit_time_ - bin_time_) / n_estimators_."""
        return self._per_round_ms()

    track_per_round_ms.unit = "ms"

    def track_test_accuracy(self, n, d, algorithm):
        return accuracy(self._fit(), self.Xte, self.yte)

    track_test_accuracy.unit = "accuracy"

    def track_rounds_run(self, n, d, algorithm):
        return self._fit().n_estimators_

    track_rounds_run.unit = "rounds"


class TreeRounds(_Fit):
    """fit() with ROUNDS rounds of depth-`depth` trees; skipped while fastboost has no max_depth."""
    params = (SIZES, FEATURES, DEPTHS, ALGORITHMS)
    param_names = ["n", "d", "depth", "algorithm"]

    def setup(self, n, d, depth, algorithm):
        if "max_depth" not in estimator_class(algorithm)().get_params():
            raise NotImplementedError("fastboost fits stumps only at this commit (no max_depth parameter)")
        self._setup(n, d, algorithm, max_depth=depth)

    def time_fit(self, n, d, depth, algorithm):
        self._fit()

    def peakmem_fit(self, n, d, depth, algorithm):
        self._fit()

    def track_test_accuracy(self, n, d, depth, algorithm):
        return accuracy(self._fit(), self.Xte, self.yte)

    track_test_accuracy.unit = "accuracy"


class TrimmedStumpRounds(_Fit):
    """fit() with ROUNDS rounds of AdaBoost stumps with weight trimming (``weight_trim_rate``), against the
    untrimmed fit (rate None) at the same size: time, per-round time, the rows the learner read and the
    test accuracy. Skipped while fastboost has no weight_trim_rate."""
    params = (SIZES, [None, 0.99, 0.9])
    param_names = ["n", "rate"]

    def setup(self, n, rate):
        if "weight_trim_rate" not in estimator_class("adaboost")().get_params():
            raise NotImplementedError("no weight_trim_rate in this fastboost")
        self._setup(n, 20, "adaboost", weight_trim_rate=rate)

    def time_fit(self, n, rate):
        self._fit()

    def track_per_round_ms(self, n, rate):
        return self._per_round_ms()

    track_per_round_ms.unit = "ms"

    def track_rows_read_percent(self, n, rate):
        """The mean share of rows each round's learner read (rounds_["n_seen"])."""
        return 100.0 * float(self._fit().rounds_["n_seen"].mean()) / n

    track_rows_read_percent.unit = "percent"

    def track_test_accuracy(self, n, rate):
        return accuracy(self._fit(), self.Xte, self.yte)

    track_test_accuracy.unit = "accuracy"


class ExactStumpRounds(_Fit):
    """fit() with ROUNDS rounds of AdaBoost stumps in exact mode (max_bins=None: two-byte codes, a bin per
    distinct value up to 65 535) against the default 255 bins: time, per-round time, binning time and test
    accuracy. Skipped while fastboost has no exact mode."""
    params = (SIZES, [255, None])
    param_names = ["n", "max_bins"]

    def setup(self, n, max_bins):
        from fastboost._binning import BinMapper

        if max_bins is None and not hasattr(BinMapper, "exact"):
            raise NotImplementedError("no exact mode (max_bins=None) in this fastboost")
        self._setup(n, 20, "adaboost", max_bins=max_bins)

    def time_fit(self, n, max_bins):
        self._fit()

    def peakmem_fit(self, n, max_bins):
        self._fit()

    def track_per_round_ms(self, n, max_bins):
        return self._per_round_ms()

    track_per_round_ms.unit = "ms"

    def track_bin_seconds(self, n, max_bins):
        return self._fit().bin_time_

    track_bin_seconds.unit = "s"

    def track_test_accuracy(self, n, max_bins):
        return accuracy(self._fit(), self.Xte, self.yte)

    track_test_accuracy.unit = "accuracy"


class ContendedStumpRounds(_Fit):
    """Per-round time of AdaBoost stumps at 1 and 2 threads with one busy process beside the fit (a Python
    loop spinning a core, started in setup and stopped in teardown): the case of a GridSearchCV(n_jobs=2)
    or a notebook next to other work. Compare with StumpRounds for the same size without the neighbour."""
    params = ([100_000] if not SIZES[0] < 100_000 else SIZES, [1, 2])
    param_names = ["n", "threads"]

    def setup(self, n, threads):
        import subprocess
        import sys

        self._setup(n, 20, "adaboost", n_jobs=threads)
        self.busy = subprocess.Popen([sys.executable, "-c", "while True: pass"], stdin=subprocess.DEVNULL)

    def teardown(self, n, threads):
        self.busy.kill()
        self.busy.wait()

    def track_per_round_ms(self, n, threads):
        return self._per_round_ms()

    track_per_round_ms.unit = "ms"


class CarriedTreeRounds(_Fit):
    """Per-round time of AdaBoost depth-3 trees whose root histograms are carried from round to round (the
    default: rebuilt from every row every ``_driver.HIST_REBUILD_EVERY`` rounds) against building every
    round's root from every row; the two fits grow the same trees. Skipped while fastboost carries no tree
    histograms."""
    params = (SIZES, FEATURES, [True, False])
    param_names = ["n", "d", "carried"]

    def setup(self, n, d, carried):
        from fastboost import _driver
        from fastboost._kernels import incremental

        if not hasattr(incremental, "next_tree_histograms"):
            raise NotImplementedError("trees do not carry their root histograms in this fastboost")
        self.driver = _driver
        self.every = _driver.HIST_REBUILD_EVERY
        _driver.HIST_REBUILD_EVERY = self.every if carried else 1
        self._setup(n, d, "adaboost", max_depth=3)

    def teardown(self, n, d, carried):
        self.driver.HIST_REBUILD_EVERY = self.every

    def time_fit(self, n, d, carried):
        self._fit()

    def track_per_round_ms(self, n, d, carried):
        return self._per_round_ms()

    track_per_round_ms.unit = "ms"
