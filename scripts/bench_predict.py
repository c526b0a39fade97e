#!/usr/bin/env python
"""Prediction time against XGBoost and LightGBM, each library in its own process, same run.

    python scripts/bench_predict.py                      # 1 000 000 x 20: 1 000 stumps, 300 depth-3 trees
    python scripts/bench_predict.py --rows 100000 --threads 2 --repeats 5

For each model shape (``--shapes``: rounds x depth; depth 1 is stumps), every library fits its own model of
that shape (as many rounds, trees of that depth) on ``--train`` rows of Breiman's twonorm and predicts
``--rows`` other float64 rows with ``--threads`` threads: fastboost ``decision_function`` (AdaBoost),
XGBoost ``predict_proba`` and LightGBM ``predict_proba`` (scikit-learn interfaces). Each library runs in a
fresh process (kernels compiled and data made before the clock starts); each time is the best of
``--repeats``, and the ratio is fastboost's time over the other's. The processes run one after the other
(``--alternate`` times each, the best kept), so a loaded machine shows in all of them alike.
"""
import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the checkout, before any installed copy

LIBRARIES = ("fastboost", "xgboost", "lightgbm")


def _best(fn, repeats):
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def child(lib, rounds, depth, args):
    """Fit one library's model and time its prediction; print {"seconds": ...} (null: not installed)."""
    import numpy as np

    from fastboost.datasets import make_twonorm

    X, y = make_twonorm(args.train, args.features, random_state=0)
    Xp, _ = make_twonorm(args.rows, args.features, random_state=1)
    Xp = np.ascontiguousarray(Xp, dtype=np.float64)
    y = (y > 0).astype(int)
    try:
        if lib == "fastboost":
            from fastboost import AdaBoostClassifier

            model = AdaBoostClassifier(n_estimators=rounds, max_depth=depth, n_jobs=args.threads).fit(X, y)
            predict = model.decision_function
        elif lib == "xgboost":
            import xgboost as xgb

            model = xgb.XGBClassifier(n_estimators=rounds, max_depth=depth, tree_method="hist",
                                      n_jobs=args.threads).fit(X, y)
            predict = model.predict_proba
        else:
            import lightgbm as lgb

            model = lgb.LGBMClassifier(n_estimators=rounds, num_leaves=2 ** depth, max_depth=depth,
                                       min_child_samples=1, n_jobs=args.threads, verbose=-1).fit(X, y)
            predict = model.predict_proba
    except ImportError:
        print(json.dumps({"seconds": None}))
        return
    predict(Xp[:1000])  # compiled kernels, tables and thread pools ready
    print(json.dumps({"seconds": _best(lambda: predict(Xp), args.repeats)}))


def run_child(lib, rounds, depth, args):
    cmd = [sys.executable, __file__, "--child", lib, str(rounds), str(depth), "--rows", str(args.rows),
           "--train", str(args.train), "--features", str(args.features), "--threads", str(args.threads),
           "--repeats", str(args.repeats)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, cwd=ROOT).stdout
    return json.loads(out.strip().splitlines()[-1])["seconds"]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=1_000_000, help="rows predicted")
    ap.add_argument("--train", type=int, default=100_000, help="rows the models are fitted on")
    ap.add_argument("--features", type=int, default=20)
    ap.add_argument("--shapes", nargs="+", default=["1000x1", "300x3"], help="rounds x depth of each model")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3, help="predictions timed in each process (best kept)")
    ap.add_argument("--alternate", type=int, default=1, help="processes per library and shape (best kept)")
    ap.add_argument("--libraries", nargs="+", default=list(LIBRARIES), choices=LIBRARIES)
    ap.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        lib, rounds, depth = args.child
        child(lib, int(rounds), int(depth), args)
        return
    print(f"twonorm: models fitted on {args.train} x {args.features}; predicting {args.rows} float64 rows with "
          f"{args.threads} threads; best of {args.repeats} in each of {args.alternate} process(es) per library")
    print(f"{'model':<22}{'library':<12}{'seconds':>10}{'fastboost / it':>16}")
    for shape in args.shapes:
        rounds, depth = (int(v) for v in shape.split("x"))
        times = {lib: None for lib in args.libraries}
        for _ in range(args.alternate):
            for lib in args.libraries:
                t = run_child(lib, rounds, depth, args)
                if t is not None:
                    times[lib] = t if times[lib] is None else min(times[lib], t)
        name = f"{rounds} " + ("stumps" if depth == 1 else f"depth-{depth} trees")
        base = times.get("fastboost")
        for lib, t in times.items():
            if t is None:
                continue
            ratio = f"{base / t:.2f}x" if base is not None and lib != "fastboost" else ""
            print(f"{name:<22}{lib:<12}{t:>10.3f}{ratio:>16}")


if __name__ == "__main__":
    main()
