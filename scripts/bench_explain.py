#!/usr/bin/env python
"""Contributions and exported models: time per row against fastboost's own decision_function, same run.

    python scripts/bench_explain.py                          # twonorm 1 000 000 x 20, 300 rounds
    python scripts/bench_explain.py --rows 100000 --shap-rows 5000

For AdaBoost stumps and depth-3 trees (``--depths``) fitted on ``--train`` rows of Breiman's
twonorm, every method predicts the same float32 rows with the same threads (``--threads``):
fastboost ``decision_function`` (the reference, ratio 1), ``predict_contrib``, onnxruntime on
``to_onnx(clf)``, shap's ``TreeExplainer`` on ``to_shap(clf)`` (the same trees; it runs on
``--shap-rows`` rows and is scaled to all of them) and LightGBM / XGBoost ``pred_contrib`` on their
own models of the same shape (as many rounds, stumps or depth-3 trees, fitted on the same rows).
Each time is the best of ``--repeats``. Packages that are not installed are skipped.
"""
import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the checkout, before any installed copy

import numpy as np  # noqa: E402


def best(fn, repeats):
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=1_000_000, help="rows predicted")
    ap.add_argument("--train", type=int, default=100_000, help="rows the models are fitted on")
    ap.add_argument("--features", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=300)
    ap.add_argument("--depths", type=int, nargs="+", default=[1, 3])
    ap.add_argument("--shap-rows", type=int, default=20_000, help="rows shap's TreeExplainer explains (scaled)")
    ap.add_argument("--threads", type=int, default=None, help="threads for every method (default: all cores)")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)

    import os

    from fastboost.datasets import make_twonorm

    threads = args.threads or os.cpu_count()
    X, y = make_twonorm(args.train, args.features, random_state=0)
    X = X.astype(np.float32)
    Xp, _ = make_twonorm(args.rows, args.features, random_state=1)
    Xp = Xp.astype(np.float32)
    Xs = Xp[: args.shap_rows]
    print(f"twonorm: fitted on {args.train} x {args.features}, {args.rounds} rounds; predicting {args.rows} float32 "
          f"rows with {threads} threads; best of {args.repeats}")
    print(f"{'model':<18}{'method':<34}{'seconds':>10}{'ratio':>8}")
    for depth in args.depths:
        run(depth, args, threads, X, y, Xp, Xs)


def run(depth, args, threads, X, y, Xp, Xs):
    """Fit the models of one depth and print one table row per method."""
    from fastboost import AdaBoostClassifier, to_onnx, to_shap

    clf = AdaBoostClassifier(n_estimators=args.rounds, max_depth=depth, n_jobs=threads).fit(X, y)
    clf.predict_contrib(Xp[:1000])  # compile / load the kernels
    shape = "stumps" if depth == 1 else f"depth-{depth} trees"
    base = best(lambda: clf.decision_function(Xp), args.repeats)
    rows = [("fastboost decision_function", base)]
    rows.append(("fastboost predict_contrib", best(lambda: clf.predict_contrib(Xp), args.repeats)))
    try:
        import onnxruntime as ort

        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        sess = ort.InferenceSession(to_onnx(clf, dtype=np.float32).SerializeToString(), opts,
                                    providers=["CPUExecutionProvider"])
        rows.append(("onnxruntime (label, proba)", best(lambda: sess.run(None, {"X": Xp}), args.repeats)))
    except ImportError:
        pass
    try:
        import shap

        explainer = shap.TreeExplainer(to_shap(clf))
        t = best(lambda: explainer.shap_values(Xs.astype(np.float64)), 1)
        rows.append((f"shap TreeExplainer (x{args.rows / Xs.shape[0]:g})", t * args.rows / Xs.shape[0]))
    except ImportError:
        pass
    try:
        import lightgbm as lgb

        booster = lgb.LGBMClassifier(n_estimators=args.rounds, num_leaves=2 ** depth, max_depth=depth,
                                     min_child_samples=1, n_jobs=threads, verbose=-1).fit(X, y)
        rows.append(("LightGBM pred_contrib", best(lambda: booster.predict(Xp, pred_contrib=True),
                                                  args.repeats)))
    except ImportError:
        pass
    try:
        import xgboost as xgb

        model = xgb.XGBClassifier(n_estimators=args.rounds, max_depth=depth, tree_method="hist",
                                  n_jobs=threads).fit(X, (y > 0).astype(int))
        dm = xgb.DMatrix(Xp, nthread=threads)
        rows.append(("XGBoost pred_contribs", best(lambda: model.get_booster().predict(dm, pred_contribs=True),
                                                   args.repeats)))
    except ImportError:
        pass
    for name, seconds in rows:
        print(f"{shape:<18}{name:<34}{seconds:>10.3f}{seconds / base:>8.2f}")


if __name__ == "__main__":
    main()
