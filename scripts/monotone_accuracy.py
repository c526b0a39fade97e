"""What monotone constraints cost on relationships that are truly monotone: test error with and without them.

Three generated problems whose Bayes log-odds is monotone in the constrained features: twonorm (every feature
+1: its two Gaussians differ by a shift along the diagonal), a credit-style problem (income +1, debt ratio -1,
age free, with a non-monotone effect) and an additive logistic one (three monotone features of five). For each
model and problem it prints the mean test error over the seeds unconstrained and constrained, their mean
difference with its standard error (the difference is taken per seed, on the same training and test rows, so
the error counts both the training sample's and the test sample's variation), and how many unconstrained models
move against a constraint (a sweep of each constrained feature over the test rows' values, the other features at
50 test rows). Each seed draws new training and test rows.

    python scripts/monotone_accuracy.py [--seeds 3] [--n-train 2000] [--n-test 10000] [--problems credit ...]
                                        [--models "AdaBoost stumps, 300" ...]
"""
import argparse
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the checkout, before any installed copy

import numpy as np  # noqa: E402

from fastboost import AdaBoostClassifier, QuadBoostClassifier, VadaBoostClassifier  # noqa: E402
from fastboost.datasets import make_twonorm  # noqa: E402


def twonorm(n, rng):
    X, y = make_twonorm(n, random_state=int(rng.integers(2 ** 31 - 1)))
    return X, y, np.ones(X.shape[1], np.int8)


def credit(n, rng):
    income = rng.lognormal(3.5, 0.5, n)
    debt = rng.uniform(0, 1, n)
    age = rng.uniform(18, 80, n)
    logit = 0.06 * income - 3 * debt + 0.5 * np.sin(age / 5) - 1.5
    y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(int)
    return np.column_stack([income, debt, age]), y, np.array([1, -1, 0], np.int8)


def additive(n, rng):
    X = rng.normal(size=(n, 5))
    logit = 1.5 * np.tanh(X[:, 0]) + X[:, 1] ** 3 / 3 - np.exp(X[:, 2] / 2) + np.sin(2 * X[:, 3]) + X[:, 4] ** 2 - 1
    y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(int)
    return X, y, np.array([1, 1, -1, 0, 0], np.int8)


PROBLEMS = {"twonorm": twonorm, "credit": credit, "additive": additive}
MODELS = {
    # (AdaBoost's stumps step back on a constrained feature, capped: monotone_steps="auto"; "forward steps" takes
    # only the stumps of the allowed polarity, as before the option)
    "AdaBoost stumps, 300": lambda mc: AdaBoostClassifier(300, monotone_constraints=mc),
    "AdaBoost stumps, 300, forward steps": lambda mc: AdaBoostClassifier(300, monotone_constraints=mc,
                                                                          monotone_steps="forward"),
    "AdaBoost stumps, 300, lr 0.3": lambda mc: AdaBoostClassifier(300, learning_rate=0.3, monotone_constraints=mc),
    "AdaBoost stumps, 300, lr 0.3, forward steps": lambda mc: AdaBoostClassifier(
        300, learning_rate=0.3, monotone_constraints=mc, monotone_steps="forward"),
    "AdaBoost depth 3, 200": lambda mc: AdaBoostClassifier(200, max_depth=3, monotone_constraints=mc),
    "AdaBoost real depth 3, 200, lr 0.3": lambda mc: AdaBoostClassifier(200, max_depth=3, leaf="real",
                                                                        learning_rate=0.3, monotone_constraints=mc),
    "VadaBoost depth 2, 200": lambda mc: VadaBoostClassifier(200, max_depth=2, monotone_constraints=mc),
    "QuadBoost depth 3, 200": lambda mc: QuadBoostClassifier(200, max_depth=3, monotone_constraints=mc),
}


def violates(model, X, direction, n_rows=50):
    """Whether the decision function moves against a constraint along some constrained feature."""
    rows = X[:n_rows]
    for f in np.flatnonzero(direction):
        grid = np.unique(np.quantile(X[:, f], np.linspace(0, 1, 100)))
        Xs = np.repeat(rows, grid.shape[0], axis=0)
        Xs[:, f] = np.tile(grid, rows.shape[0])
        s = model.decision_function(Xs).reshape(rows.shape[0], -1)
        if (np.diff(s, axis=1) * direction[f] < 0).any():
            return True
    return False


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--n-train", type=int, default=2000)
    parser.add_argument("--n-test", type=int, default=10000)
    parser.add_argument("--problems", nargs="+", choices=sorted(PROBLEMS), default=list(PROBLEMS))
    parser.add_argument("--models", nargs="+", choices=list(MODELS), default=list(MODELS))
    args = parser.parse_args()
    warnings.simplefilter("ignore", UserWarning)
    print(f"{'problem':<10}{'model':<45}{'free %':>8}{'constrained %':>15}{'diff':>7}{'+-se':>6}"
          f"{'free violates':>15}")
    for pname in args.problems:
        make = PROBLEMS[pname]
        for mname in args.models:
            model_of = MODELS[mname]
            free_err, tied_err, viol = [], [], 0
            t = time.perf_counter()
            for seed in range(args.seeds):
                rng = np.random.default_rng(seed)
                X, y, direction = make(args.n_train + args.n_test, rng)
                Xtr, ytr, Xte, yte = X[:args.n_train], y[:args.n_train], X[args.n_train:], y[args.n_train:]
                free = model_of(None).fit(Xtr, ytr)
                tied = model_of(direction.tolist()).fit(Xtr, ytr)
                assert not violates(tied, Xte, direction)
                free_err.append(100 * np.mean(free.predict(Xte) != yte))
                tied_err.append(100 * np.mean(tied.predict(Xte) != yte))
                viol += violates(free, Xte, direction)
            f, c = np.mean(free_err), np.mean(tied_err)
            diff = np.subtract(tied_err, free_err)
            se = diff.std(ddof=1) / np.sqrt(diff.shape[0]) if diff.shape[0] > 1 else np.nan
            print(f"{pname:<10}{mname:<45}{f:>8.2f}{c:>15.2f}{c - f:>+7.2f}{se:>6.2f}{f'{viol}/{args.seeds}':>15}"
                  f"   ({time.perf_counter() - t:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
