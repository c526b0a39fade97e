#!/usr/bin/env python
"""Joint multiclass boosters against LightGBM's multiclass objective: test error and fit time.

    python scripts/multiclass_mh.py                                   # 200 000 training rows, 600 rounds
    python scripts/multiclass_mh.py --n-train 20000 --rounds 300      # a quick run
    python scripts/multiclass_mh.py --table results.jsonl             # the markdown table of saved results

Data: Breiman's waveform (3 classes, ``fastboost.datasets.make_waveform``) and a 10-class problem from
scikit-learn's ``make_classification`` (20 features, 10 informative, 5 redundant, 2 clusters a class,
``class_sep=1``), ``--n-train`` training and ``--n-test`` test rows of one draw (seed 0). Models:
``mh`` AdaBoostClassifier(leaf="real", multiclass="mh") (AdaBoost.MH), ``sammer`` multiclass="joint" (SAMME.R),
``ovr`` multiclass="ovr" (one-vs-rest confidence-rated trees, K trees a round), ``mh-logistic`` and
``ovr-logistic`` the same on the logistic loss (``loss="logistic"``), ``lightgbm`` LGBMClassifier
(multiclass objective, K trees a round; ``num_leaves = 2**depth``, ``max_depth = depth``, 255 bins), each at every
``--rates`` learning rate, the same rounds, depth and threads. The fit time is the wall time of ``fit`` (binning
included, for every library), after a small fit that compiles or loads fastboost's kernels. Every fit appends one
JSON line to ``--out``; the table gives, per data set, depth and model, the error at the best learning rate, the
fit time of that fit, and the ratios to LightGBM's (its best learning rate). The machine's load is recorded.
"""
import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the checkout, before any installed copy

import numpy as np  # noqa: E402

MODELS = ("mh", "mh-logistic", "sammer", "ovr", "ovr-logistic", "lightgbm")
DATASETS = ("waveform", "classes10")
MULTICLASS = {"mh": "mh", "mh-logistic": "mh", "sammer": "joint", "ovr": "ovr", "ovr-logistic": "ovr"}


def make_data(name, n_train, n_test):
    """(X_train, y_train, X_test, y_test) of one draw with seed 0."""
    n = n_train + n_test
    if name == "waveform":
        from fastboost.datasets import make_waveform

        X, y = make_waveform(n, random_state=0)
    elif name == "classes10":
        from sklearn.datasets import make_classification

        X, y = make_classification(n, n_features=20, n_informative=10, n_redundant=5, n_classes=10,
                                   n_clusters_per_class=2, class_sep=1.0, flip_y=0.0, random_state=0)
    else:
        raise ValueError(f"unknown data set {name!r}; choose from {DATASETS}")
    return X[:n_train], y[:n_train], X[n_train:], y[n_train:]


def make_model(model, depth, rate, rounds, threads):
    if model == "lightgbm":
        import lightgbm as lgb

        return lgb.LGBMClassifier(n_estimators=rounds, learning_rate=rate, num_leaves=2 ** depth, max_depth=depth,
                                  max_bin=255, n_jobs=threads, verbose=-1, random_state=0)
    from fastboost import AdaBoostClassifier

    return AdaBoostClassifier(rounds, leaf="real", multiclass=MULTICLASS[model], max_depth=depth,
                              loss="logistic" if model.endswith("-logistic") else "exponential",
                              learning_rate=rate, n_jobs=threads)


def run(args):
    out = Path(args.out)
    for name in args.datasets:
        Xtr, ytr, Xte, yte = make_data(name, args.n_train, args.n_test)
        for depth in args.depths:
            for model in args.models:
                make_model(model, depth, 0.3, 3, args.threads).fit(Xtr[:2000], ytr[:2000])  # compile / load
                for rate in args.rates:
                    load = os.getloadavg()[0]
                    est = make_model(model, depth, rate, args.rounds, args.threads)
                    t0 = time.perf_counter()
                    est.fit(Xtr, ytr)
                    fit_s = time.perf_counter() - t0
                    err = float(np.mean(est.predict(Xte) != yte))
                    rec = dict(data=name, depth=depth, model=model, rate=rate, error=err, fit_s=fit_s,
                               n_train=args.n_train, n_test=args.n_test, rounds=args.rounds, threads=args.threads,
                               load_before=load, load_after=os.getloadavg()[0])
                    print(json.dumps(rec), flush=True)
                    with out.open("a") as f:
                        f.write(json.dumps(rec) + "\n")


def table(path):
    """The markdown table of the saved results (the best learning rate of each data set, depth and model)."""
    recs = [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
    best = {}
    for r in recs:
        key = (r["data"], r["depth"], r["model"], r["n_train"], r["rounds"])
        if key not in best or r["error"] < best[key]["error"]:
            best[key] = r
    lines = ["| data | depth | rows | rounds | model | best rate | test error % | vs LightGBM (points) | fit s | "
             "fit time / LightGBM's |", "|---|---|---|---|---|---|---|---|---|---|"]
    for key in sorted(best, key=lambda k: (k[0], k[1], k[3], k[4], MODELS.index(k[2]))):
        r = best[key]
        lgb = best.get(key[:2] + ("lightgbm",) + key[3:])
        diff = f"{100 * (r['error'] - lgb['error']):+.2f}" if lgb else ""
        ratio = f"{r['fit_s'] / lgb['fit_s']:.2f}" if lgb else ""
        lines.append(f"| {r['data']} | {r['depth']} | {r['n_train']} | {r['rounds']} | {r['model']} | {r['rate']} | "
                     f"{100 * r['error']:.2f} | {diff} | {r['fit_s']:.1f} | {ratio} |")
    loads = [r["load_before"] for r in recs] + [r["load_after"] for r in recs]
    lines.append("")
    lines.append(f"Load average (1 min) during the runs: {min(loads):.1f} to {max(loads):.1f}.")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n-train", type=int, default=200_000)
    ap.add_argument("--n-test", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=600)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=DATASETS)
    ap.add_argument("--depths", nargs="+", type=int, default=[1, 3])
    ap.add_argument("--models", nargs="+", default=["mh", "lightgbm"], choices=MODELS)
    ap.add_argument("--rates", nargs="+", type=float, default=[0.1, 0.3, 1.0])
    ap.add_argument("--out", default="multiclass_mh.jsonl", help="append one JSON line per fit")
    ap.add_argument("--table", metavar="JSONL", help="print the markdown table of saved results and exit")
    args = ap.parse_args(argv)
    if args.table:
        print(table(args.table))
        return
    run(args)
    print(table(args.out))


if __name__ == "__main__":
    main()
