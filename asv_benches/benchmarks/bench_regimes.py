"""Where fixed costs and late rounds show: small data, late rounds, multiclass fits.

- ``SmallData``: whole fits (binning included) of 100 rounds on 1 000 to 100 000 rows, where a fit's fixed
  costs (parallel region launches, allocation, Python between chunks) weigh most;
- ``LateRounds``: the time of a round late in a fit (rounds 100 to 400), apart from the first rounds:
  ((fit of 400 rounds) - (fit of 100 rounds)) / 300, binning excluded, so anything that grows with the round
  number shows;
- ``Multiclass``: SAMME's K-class trees and one-vs-rest stumps (K binary models) on K-class data.
"""
import numpy as np

from .common import FAST, FEATURES, SIZES, THREADS, estimator_class, make, twonorm, warm_up

SMALL = [1_000, 10_000] if FAST else [1_000, 10_000, 100_000]
DEPTHS = [0, 3]  # 0: decision stumps


def _depth(depth):
    return {"max_depth": depth} if depth else {}


class SmallData:
    """fit() of 100 rounds on n x 20 rows, binning included (the whole fit a user times)."""
    params = (SMALL, DEPTHS)
    param_names = ["n", "depth"]
    number = 1
    repeat = (3, 10, 20.0)
    warmup_time = 0
    timeout = 600

    def setup(self, n, depth):
        self.X, self.y, _, _ = twonorm(n, 20)
        warm_up("adaboost", 20, **_depth(depth))

    def time_fit(self, n, depth):
        make("adaboost", 100, **_depth(depth)).fit(self.X, self.y)


class LateRounds:
    """Per-round time of rounds 100 to 400 (not the first ones), binning excluded."""
    params = (SIZES, FEATURES, DEPTHS, ["adaboost", "vadaboost"])
    param_names = ["n", "d", "depth", "algorithm"]
    number = 1
    repeat = 1
    warmup_time = 0
    timeout = 1800
    first, last = (10, 40) if FAST else (100, 400)

    def setup(self, n, d, depth, algorithm):
        self.X, self.y, _, _ = twonorm(n, d)
        warm_up(algorithm, d, **_depth(depth))

    def _train_seconds(self, algorithm, rounds, depth):
        m = make(algorithm, rounds, **_depth(depth)).fit(self.X, self.y)
        if m.n_estimators_ != rounds:
            raise NotImplementedError(f"{algorithm} stopped after {m.n_estimators_} of {rounds} rounds")
        return m.fit_time_ - m.bin_time_

    def track_late_round_ms(self, n, d, depth, algorithm):
        early = self._train_seconds(algorithm, self.first, depth)
        late = self._train_seconds(algorithm, self.last, depth)
        return 1e3 * (late - early) / (self.last - self.first)

    track_late_round_ms.unit = "ms"

    def track_early_round_ms(self, n, d, depth, algorithm):
        return 1e3 * self._train_seconds(algorithm, self.first, depth) / self.first

    track_early_round_ms.unit = "ms"


class Multiclass:
    """fit() of 20 rounds on K-class data (n x 20): SAMME depth-3 trees (one K-class tree a round) and
    one-vs-rest VadaBoost stumps (K binary models), beside a binary fit of the same rounds."""
    params = ([20_000] if FAST else [200_000, 1_000_000], [2, 3, 10], ["samme_depth3", "ovr_stumps"])
    param_names = ["n", "n_classes", "model"]
    number = 1
    repeat = (1, 3, 30.0)
    warmup_time = 0
    timeout = 1200

    def setup(self, n, n_classes, model):
        from sklearn.datasets import make_classification

        self.X, self.y = make_classification(n, 20, n_informative=10, n_redundant=5, n_classes=n_classes,
                                             n_clusters_per_class=1, random_state=0)
        self.model = model
        tiny = np.arange(min(n, 2_000))
        self._fit(self.X[tiny], self.y[tiny], 3)  # compile (or load) what the fit uses

    def _fit(self, X, y, rounds):
        if self.model == "samme_depth3":
            est = estimator_class("adaboost")(n_estimators=rounds, max_depth=3, n_jobs=THREADS)
        else:
            est = estimator_class("vadaboost")(n_estimators=rounds, n_jobs=THREADS)
        return est.fit(X, y)

    def time_fit(self, n, n_classes, model):
        self._fit(self.X, self.y, 20)
