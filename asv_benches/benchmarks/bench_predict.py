"""Prediction of a fitted ensemble on raw (unbinned) X: a 100-round model, and large ones (many stumps, depth-3
trees)."""
from .common import FAST, FEATURES, SIZES, make, twonorm, warm_up

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


#: the large models of the predict comparison (scripts/bench_predict.py): rounds and depth
LARGE_MODELS = [(100, 1), (100, 3)] if FAST else [(1000, 1), (300, 3)]


class PredictLarge:
    """decision_function of many stumps (per-feature step tables) and of depth-3 trees (level-order walk) on
    SIZES rows; the models are fitted on at most 20 000 rows (their shape, not their fit, is measured)."""
    params = (SIZES, [f"{r}x{d}" for r, d in LARGE_MODELS])
    param_names = ["n", "model"]
    repeat = (3, 10, 20.0)
    timeout = 900

    def setup(self, n, model):
        rounds, depth = (int(v) for v in model.split("x"))
        self.X, y, _, _ = twonorm(n, 20)
        warm_up("adaboost", 20, max_depth=depth)
        self.model = make("adaboost", rounds, max_depth=depth).fit(self.X[:20_000], y[:20_000])
        self.model.decision_function(self.X[:100])  # (the tables are built once per model)

    def time_decision_function(self, n, model):
        self.model.decision_function(self.X)
