"""Prediction of a fitted ensemble on raw (unbinned) X."""
from .common import FEATURES, SIZES, make, twonorm, warm_up

PREDICT_ROUNDS = [100]


class Predict:
    params = (SIZES, FEATURES, PREDICT_ROUNDS)
    param_names = ["n", "d", "rounds"]
    repeat = (3, 20, 10.0)
    timeout = 900

    def setup(self, n, d, rounds):
        self.X, y, _, _ = twonorm(n, d)
        warm_up("adaboost", d)
        self.model = make("adaboost", rounds).fit(self.X, y)

    def time_predict(self, n, d, rounds):
        self.model.predict(self.X)

    def peakmem_predict(self, n, d, rounds):
        self.model.predict(self.X)
