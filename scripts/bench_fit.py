#!/usr/bin/env python
"""Whole fits on small and medium data against LightGBM and XGBoost, each library in its own process.

    python scripts/bench_fit.py                                  # 1 000, 10 000, 100 000 x 20; stumps, depth 3
    python scripts/bench_fit.py --rows 1000 --depths 3 --alternate 5
    python scripts/bench_fit.py --out fit.jsonl                  # also one JSON line per library and size

A whole fit is what a user waits for: ``fit(X, y)`` on float64 rows, binning (or the competitor's dataset
construction) and validation included, ``--rounds`` rounds of stumps (depth 1) or trees of each ``--depths``
on Breiman's twonorm (``--features`` features, seed 0) with ``--threads`` threads: fastboost's
``AdaBoostClassifier``, LightGBM's ``LGBMClassifier`` (``num_leaves = 2**depth``, ``min_child_samples=1``) and
XGBoost's ``XGBClassifier`` (``tree_method="hist"``). Each library runs in a fresh process, fits once untimed
(fastboost's kernels compiled or loaded, the others' libraries loaded) and then ``--repeats`` times; its time is
the best of those. The processes run one library after the other, ``--alternate`` rounds of all of them (the best
kept), so a loaded machine shows in every library alike. The ratio is fastboost's time over the other's.
"""
import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the checkout, before any installed copy

LIBRARIES = ("fastboost", "lightgbm", "xgboost")


def make_model(lib, rounds, depth, threads):
    """An unfitted model of one library; ImportError when it is not installed."""
    if lib == "fastboost":
        from fastboost import AdaBoostClassifier

        return AdaBoostClassifier(n_estimators=rounds, max_depth=depth, n_jobs=threads)
    if lib == "lightgbm":
        import lightgbm as lgb

        return lgb.LGBMClassifier(n_estimators=rounds, num_leaves=2 ** depth, max_depth=depth, min_child_samples=1,
                                  n_jobs=threads, verbose=-1)
    import xgboost as xgb

    return xgb.XGBClassifier(n_estimators=rounds, max_depth=depth, tree_method="hist", n_jobs=threads)


def child(lib, n, depth, args):
    """Time one library's whole fits; print {"seconds": best} (null: not installed)."""
    import numpy as np

    from fastboost.datasets import make_twonorm

    X, y = make_twonorm(n, args.features, random_state=0)
    X = np.ascontiguousarray(X, dtype=np.float64)
    y = (y > 0).astype(int)
    try:
        make_model(lib, args.rounds, depth, args.threads).fit(X, y)  # compiled kernels, loaded libraries
    except ImportError:
        print(json.dumps({"seconds": None}))
        return
    times = []
    for _ in range(args.repeats):
        model = make_model(lib, args.rounds, depth, args.threads)
        t = time.perf_counter()
        model.fit(X, y)
        times.append(time.perf_counter() - t)
    print(json.dumps({"seconds": min(times)}))


def run_child(lib, n, depth, args):
    cmd = [sys.executable, __file__, "--child", lib, str(n), str(depth), "--rounds", str(args.rounds),
           "--features", str(args.features), "--threads", str(args.threads), "--repeats", str(args.repeats)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, cwd=ROOT).stdout
    return json.loads(out.strip().splitlines()[-1])["seconds"]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", nargs="+", type=int, default=[1_000, 10_000, 100_000], help="training rows")
    ap.add_argument("--depths", nargs="+", type=int, default=[1, 3], help="tree depths (1: stumps)")
    ap.add_argument("--rounds", type=int, default=100)
    ap.add_argument("--features", type=int, default=20)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=15, help="fits timed in each process (best kept)")
    ap.add_argument("--alternate", type=int, default=1, help="processes per library and size (best kept)")
    ap.add_argument("--libraries", nargs="+", default=list(LIBRARIES), choices=LIBRARIES)
    ap.add_argument("--out", help="append one JSON line per library, size and depth")
    ap.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        lib, n, depth = args.child
        child(lib, int(n), int(depth), args)
        return
    print(f"twonorm x {args.features} features, {args.rounds} rounds, {args.threads} threads: whole fits, best of "
          f"{args.repeats} in each of {args.alternate} process(es) per library")
    others = [lib for lib in args.libraries if lib != "fastboost"]
    print(f"{'rows':>8}{'depth':>7}" + "".join(f"{lib + ' ms':>15}" for lib in args.libraries)
          + "".join(f"{'/ ' + lib:>13}" for lib in others))
    for n in args.rows:
        for depth in args.depths:
            times = {lib: None for lib in args.libraries}
            for _ in range(args.alternate):
                for lib in args.libraries:
                    t = run_child(lib, n, depth, args)
                    if t is not None:
                        times[lib] = t if times[lib] is None else min(times[lib], t)
            base = times.get("fastboost")
            cells = "".join(f"{'-' if t is None else f'{1e3 * t:.1f}':>15}" for t in times.values())
            ratios = "".join(f"{'-' if base is None or times[lib] is None else f'{base / times[lib]:.2f}x':>13}"
                             for lib in others)
            print(f"{n:>8}{depth:>7}{cells}{ratios}", flush=True)
            if args.out:
                with open(args.out, "a") as fh:
                    for lib, t in times.items():
                        fh.write(json.dumps({"library": lib, "rows": n, "depth": depth, "rounds": args.rounds,
                                             "features": args.features, "threads": args.threads,
                                             "seconds": t}) + "\n")


if __name__ == "__main__":
    main()
