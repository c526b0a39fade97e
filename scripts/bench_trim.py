#!/usr/bin/env python
"""Weight trimming against no trimming: fit time and test error, side by side in one process.

    python scripts/bench_trim.py                      # twonorm 1 000 000 x 20, 500 AdaBoost stump rounds, 0.99
    python scripts/bench_trim.py --depth 3 --rounds 200

Both fits see the same float32 data (Breiman's twonorm, generated here), the same
parameters and the same threads; the trimmed one runs first and second in alternate
repeats. Reported: the whole fit's time (binning included), the ratio trimmed / untrimmed,
the test error on 200 000 new rows after the last round, and the share of rows the
trimmed learner read (``rounds_["n_seen"]``) over the fit.
"""
import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the checkout, before any installed copy

import numpy as np  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--features", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=500)
    ap.add_argument("--depth", type=int, default=1)
    ap.add_argument("--rate", type=float, default=0.99)
    ap.add_argument("--repeats", type=int, default=2)
    args = ap.parse_args(argv)

    from fastboost import AdaBoostClassifier
    from fastboost.datasets import make_twonorm

    X, y = make_twonorm(args.rows, args.features, random_state=0)
    X = X.astype(np.float32)
    Xt, yt = make_twonorm(200_000, args.features, random_state=1)
    Xt = Xt.astype(np.float32)
    AdaBoostClassifier(n_estimators=3, max_depth=args.depth, weight_trim_rate=args.rate).fit(X[:5000], y[:5000])
    AdaBoostClassifier(n_estimators=3, max_depth=args.depth).fit(X[:5000], y[:5000])  # compile / load both
    times = {None: [], args.rate: []}
    models = {}
    for rep in range(args.repeats):
        for rate in ((args.rate, None) if rep % 2 == 0 else (None, args.rate)):
            t = time.perf_counter()
            models[rate] = AdaBoostClassifier(n_estimators=args.rounds, max_depth=args.depth,
                                              weight_trim_rate=rate).fit(X, y)
            times[rate].append(time.perf_counter() - t)
    learner = "stumps" if args.depth == 1 else f"depth-{args.depth} trees"
    print(f"twonorm {args.rows} x {args.features} float32, AdaBoost {learner}, {args.rounds} rounds, "
          f"{args.repeats} repeats (median)")
    for rate in (None, args.rate):
        m = models[rate]
        seen = m.rounds_["n_seen"].mean() / args.rows
        print(f"  weight_trim_rate={rate!s:<5} fit {np.median(times[rate]):7.2f} s   test error "
              f"{1 - m.score(Xt, yt):.4f}   rounds {m.n_estimators_}   rows read per round {100 * seen:5.1f} %")
    ratio = np.median(times[args.rate]) / np.median(times[None])
    diff = 100 * ((1 - models[args.rate].score(Xt, yt)) - (1 - models[None].score(Xt, yt)))
    print(f"  trimmed / untrimmed fit time: {ratio:.2f}; test error difference {diff:+.3f} points")
    return 0


if __name__ == "__main__":
    sys.exit(main())
