#!/usr/bin/env python
"""Per-round time with colsample_bytree against the full round, and against LightGBM and XGBoost at the same fraction.

    python scripts/bench_colsample.py                              # twonorm 1 000 000 x 100, depth 3, 0.3
    python scripts/bench_colsample.py --rows 100000 --rounds 30    # a quick run

Every library fits in its own process (``--worker``), one after the other, on the same generated float32 data
(Breiman's twonorm with the given features), with the same threads and trees of the same depth (LightGBM:
``max_depth`` and ``num_leaves = 2**depth``; XGBoost: ``tree_method="hist"``), 256 bins, once with every feature
and once with the fraction. Only boosting is timed, not binning: fastboost's ``fit_time_ - bin_time_``, LightGBM's
``train`` on a constructed Dataset, XGBoost's ``train`` on a QuantileDMatrix. Reported per round (the median of
``--repeats`` fits), with the ratio fraction / full per library and the machine's load before and after (the
ratios are same-run figures; absolute times on a busy machine are not).
"""
import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the checkout, before any installed copy

LIBRARIES = ("fastboost", "lightgbm", "xgboost")


def _data(rows, features):
    import numpy as np

    from fastboost.datasets import make_twonorm

    X, y = make_twonorm(rows, features, random_state=0)
    return X.astype(np.float32), y


def _fastboost(X, y, fraction, args):
    from fastboost import AdaBoostClassifier

    AdaBoostClassifier(3, max_depth=args.depth, colsample_bytree=fraction, random_state=0).fit(X[:2000], y[:2000])
    m = AdaBoostClassifier(args.rounds, max_depth=args.depth, colsample_bytree=fraction, random_state=0,
                           n_jobs=args.threads).fit(X, y)
    return (m.fit_time_ - m.bin_time_) / m.n_estimators_


def _lightgbm(X, y, fraction, args):
    import lightgbm as lgb

    params = dict(objective="binary", max_depth=args.depth, num_leaves=2 ** args.depth, feature_fraction=fraction,
                  feature_fraction_seed=0, max_bin=255, num_threads=args.threads, verbose=-1,
                  min_data_in_leaf=1, min_sum_hessian_in_leaf=0.0)
    ds = lgb.Dataset(X, (y > 0).astype(int), params={"max_bin": 255, "verbose": -1, "feature_pre_filter": False})
    ds.construct()
    t = time.perf_counter()
    lgb.train(params, ds, num_boost_round=args.rounds)
    return (time.perf_counter() - t) / args.rounds


def _xgboost(X, y, fraction, args):
    import xgboost as xgb

    dm = xgb.QuantileDMatrix(X, (y > 0).astype(int), max_bin=256, nthread=args.threads)
    params = dict(objective="binary:logistic", tree_method="hist", max_depth=args.depth, colsample_bytree=fraction,
                  seed=0, nthread=args.threads, max_bin=256)
    t = time.perf_counter()
    xgb.train(params, dm, num_boost_round=args.rounds)
    return (time.perf_counter() - t) / args.rounds


def worker(args):
    X, y = _data(args.rows, args.features)
    fit = {"fastboost": _fastboost, "lightgbm": _lightgbm, "xgboost": _xgboost}[args.worker]
    out = {str(1.0): [], str(args.fraction): []}
    fit(X[:20000], y[:20000], args.fraction, args)  # warm-up (threads, compiled code)
    for rep in range(args.repeats):  # the two fractions alternate, so a change of load hits both
        for fraction in ((1.0, args.fraction) if rep % 2 == 0 else (args.fraction, 1.0)):
            out[str(fraction)].append(fit(X, y, fraction, args))
    print(json.dumps(out))
    return 0


def _load():
    try:
        return "load average " + ", ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "load average unknown"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--features", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=50)
    ap.add_argument("--depth", type=int, default=3)
    ap.add_argument("--fraction", type=float, default=0.3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--libraries", default=",".join(LIBRARIES), help="comma-separated, of " + ", ".join(LIBRARIES))
    ap.add_argument("--worker", choices=LIBRARIES, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        return worker(args)
    print(f"twonorm {args.rows} x {args.features} float32, depth-{args.depth} trees, {args.rounds} rounds, "
          f"{args.threads} threads, median of {args.repeats}; {_load()}")
    import numpy as np

    for lib in args.libraries.split(","):
        cmd = [sys.executable, __file__, "--worker", lib] + [
            f"--{k}={getattr(args, k)}" for k in ("rows", "features", "rounds", "depth", "fraction", "threads",
                                                  "repeats")]
        res = subprocess.run(cmd, capture_output=True, text=True)
        if res.returncode != 0:
            print(f"  {lib:<10} failed: {res.stderr.strip().splitlines()[-1] if res.stderr.strip() else '?'}")
            continue
        times = json.loads(res.stdout.strip().splitlines()[-1])
        full = float(np.median(times["1.0"]))
        part = float(np.median(times[str(args.fraction)]))
        print(f"  {lib:<10} per round: all features {1e3 * full:8.2f} ms   colsample_bytree={args.fraction} "
              f"{1e3 * part:8.2f} ms   ratio {part / full:.2f}")
    print(f"  after: {_load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
