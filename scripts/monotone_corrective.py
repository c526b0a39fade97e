"""Why monotone AdaBoost stumps can lose accuracy, and what would win it back: a NumPy model of AdaBoost's
discrete stumps (not the library's code) fitted three ways on the problems of ``monotone_accuracy.py``.

- free: every stump;
- constrained: as the library's ``monotone_constraints``, only stumps whose outputs follow the constraint;
- corrective: also a stump of the opposite polarity on a constrained feature, but only at a threshold where
  the stumps before it have put weight in the allowed direction, and with its step capped at that weight, so
  the model stays monotone (every jump of the score along the feature stays >= 0).

Candidates are compared by AdaBoost's loss factor Z at their (capped) step. On the same bins, seeds and rows,
the free and constrained fits give the library's test errors (``monotone_accuracy.py``'s "AdaBoost stumps,
300" rows).

    python scripts/monotone_corrective.py [--problem credit] [--seeds 20] [--rounds 300] [--learning-rate 1]
"""
import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the checkout, before any installed copy
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
from monotone_accuracy import PROBLEMS  # noqa: E402

from fastboost._binning import BinMapper  # noqa: E402

MODES = ("free", "constrained", "corrective")


def fit(codes, y, direction, rounds, mode, n_bins, learning_rate=1.0):
    """The stumps (feature, bin, left, right, alpha): left for codes <= bin; no missing values."""
    d, n = codes.shape
    w = np.full(n, 1.0 / n)
    sign = 2 * y - 1
    jump = np.zeros((d, n_bins - 1))  # the weight of the stumps at (feature, bin): alpha (right - left) / 2 summed
    model = []
    for _ in range(rounds):
        best = None
        for f in range(d):
            h0 = np.bincount(codes[f], weights=w * (y == 0), minlength=n_bins)
            h1 = np.bincount(codes[f], weights=w * (y == 1), minlength=n_bins)
            l0, l1 = np.cumsum(h0)[:-1], np.cumsum(h1)[:-1]
            r0, r1 = h0.sum() - l0, h1.sum() - l1
            left = np.where(l1 > l0, 1, -1)
            right = np.where(r1 > r0, 1, -1)
            err = np.clip(np.where(left == 1, l0, l1) + np.where(right == 1, r0, r1), 1e-12, 1 - 1e-12)
            alpha = learning_rate * 0.5 * np.log((1 - err) / err)
            ok = alpha > 0
            mono = direction[f]
            if mono != 0 and mode != "free":
                against = mono * (right - left) < 0
                if mode == "constrained":
                    ok &= ~against
                else:  # a step back, at most as far as the stumps at that threshold went
                    ok &= ~against | (mono * jump[f] > 0)
                    alpha = np.where(against, np.minimum(alpha, np.abs(jump[f])), alpha)
            if not ok.any():
                continue
            z = np.where(ok, (1 - err) * np.exp(-alpha) + err * np.exp(alpha), np.inf)
            b = int(np.argmin(z))
            if best is None or z[b] < best[0]:
                best = (z[b], f, b, left[b], right[b], alpha[b])
        if best is None:
            break
        _, f, b, lo, ro, a = best
        w = w * np.exp(-a * sign * np.where(codes[f] <= b, lo, ro))
        w /= w.sum()
        jump[f, b] += a * (ro - lo) / 2
        model.append((f, b, lo, ro, a))
    return model


def predict(model, codes):
    score = np.zeros(codes.shape[1])
    for f, b, lo, ro, a in model:
        score += a * np.where(codes[f] <= b, lo, ro)
    return (score > 0).astype(int)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problem", choices=sorted(PROBLEMS), default="credit")
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument("--learning-rate", type=float, default=1.0)
    parser.add_argument("--n-train", type=int, default=2000)
    parser.add_argument("--n-test", type=int, default=10000)
    args = parser.parse_args()
    errors = {m: [] for m in MODES}
    for seed in range(args.seeds):  # the rows of monotone_accuracy.py's seeds
        X, y, direction = PROBLEMS[args.problem](args.n_train + args.n_test, np.random.default_rng(seed))
        y = np.unique(y, return_inverse=True)[1]  # classes 0 and 1
        n = args.n_train
        mapper = BinMapper(255).fit(X[:n], np.full(n, 1.0 / n))
        train, test = mapper.transform(X[:n]), mapper.transform(X[n:])
        for mode in MODES:
            model = fit(train, y[:n], direction, args.rounds, mode, mapper.missing_code + 1, args.learning_rate)
            errors[mode].append(100 * np.mean(predict(model, test) != y[n:]))
    free = np.array(errors["free"])
    print(f"{args.problem}, {args.rounds} stumps, learning rate {args.learning_rate:g}, {args.seeds} seeds")
    print(f"{'':<12}{'test error %':>13}{'minus free':>12}{'+-se':>6}")
    for mode in MODES:
        e = np.array(errors[mode])
        diff = e - free
        se = diff.std(ddof=1) / np.sqrt(diff.shape[0]) if diff.shape[0] > 1 else np.nan
        print(f"{mode:<12}{e.mean():>13.2f}{diff.mean():>+12.2f}{se:>6.2f}")


if __name__ == "__main__":
    main()
