#!/usr/bin/env python
"""A sha256 of each fitted model's ``rounds_`` and ``nodes_`` bytes, for a fixed set of fits.

    python scripts/model_hashes.py            # one line per fit: name, hash of rounds_, hash of nodes_
    python scripts/model_hashes.py --dask     # the Dask estimators too (a local cluster of 2 worker processes)

The fits cover the compiled paths a change of the kernels can reach: binary stumps and trees, SAMME with
three classes, every algorithm's rules, categorical features, weight trimming, exact mode, a validation set
with early stopping and (``--dask``) the distributed learners. Small generated data and fixed seeds: a
refactoring that leaves every model bit for bit the same prints the same lines.
"""
import argparse
import hashlib
import importlib.util
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the checkout, before any installed copy

import numpy as np  # noqa: E402


def _bytes(a):
    return b"none" if a is None else np.ascontiguousarray(a).tobytes()  # (stumps keep no nodes: nodes_ None)


def _digest(a):
    return hashlib.sha256(_bytes(a)).hexdigest()[:16]


def model_hash(est):
    """(hash of rounds_, hash of nodes_); one-vs-rest models hash their classes' models in order."""
    if hasattr(est, "rounds_"):
        return _digest(est.rounds_), _digest(est.nodes_)
    parts = est.estimators_
    return (hashlib.sha256(b"".join(_bytes(m.rounds_) for m in parts)).hexdigest()[:16],
            hashlib.sha256(b"".join(_bytes(m.nodes_) for m in parts)).hexdigest()[:16])


def data():
    from fastboost.datasets import make_ringnorm, make_twonorm, make_waveform

    X, y = make_twonorm(3000, 8, random_state=0)
    X[::17, 3] = np.nan  # missing values
    Xr, yr = make_ringnorm(3000, 8, random_state=1)
    Xw, yw = make_waveform(3000, random_state=2)
    rng = np.random.default_rng(3)
    Xc = np.column_stack([rng.integers(0, 12, 3000), rng.integers(0, 5, 3000), rng.standard_normal(3000)])
    yc = np.where((np.isin(Xc[:, 0], [1, 4, 5, 9]) ^ (Xc[:, 2] > 0.3)) ^ (rng.random(3000) < 0.1), 1, -1)
    Xc[::23, 0] = np.nan
    Xwc = Xw.copy()
    Xwc[:, 0] = np.floor(Xwc[:, 0]).clip(-3, 8)  # a few categories
    return {"twonorm": (X, y), "ringnorm": (Xr, yr), "waveform": (Xw, yw), "categorical": (Xc, yc),
            "waveform categorical": (Xwc, yw)}


def fits(highs):
    import fastboost as fb

    common = {"random_state": 0}
    out = [
        ("adaboost stumps", "twonorm", fb.AdaBoostClassifier(60, **common)),
        ("adaboost depth 3", "ringnorm", fb.AdaBoostClassifier(40, max_depth=3, **common)),
        ("adaboost depth 3 gini min_samples_leaf", "ringnorm",
         fb.AdaBoostClassifier(30, max_depth=3, criterion="gini", min_samples_leaf=5, **common)),
        ("adaboost depth 2 real leaves", "twonorm", fb.AdaBoostClassifier(30, max_depth=2, leaf="real", **common)),
        ("samme 3 classes depth 2", "waveform", fb.AdaBoostClassifier(40, max_depth=2, **common)),
        ("samme 3 classes depth 2 trimmed", "waveform",
         fb.AdaBoostClassifier(40, max_depth=2, weight_trim_rate=0.99, **common)),
        ("vadaboost stumps", "twonorm", fb.VadaBoostClassifier(40, **common)),
        ("vadaboost depth 2", "ringnorm", fb.VadaBoostClassifier(30, max_depth=2, **common)),
        ("ebboost stumps", "twonorm", fb.EBBoostClassifier(40, **common)),
        ("ebboost stumps trimmed", "twonorm", fb.EBBoostClassifier(40, weight_trim_rate=0.99, **common)),
        ("saboost stumps", "twonorm", fb.SABoostClassifier(40, gamma=1.0, schedule="inverse", **common)),
        ("lazyboost stumps", "twonorm", fb.LazyBoostClassifier(40, **common)),
        ("quadboost stumps", "twonorm", fb.QuadBoostClassifier(40, penalty="l2", lam=0.1, reweight_every=10,
                                                               **common)),
        ("quadboost depth 2", "ringnorm", fb.QuadBoostClassifier(30, max_depth=2, penalty="l1", lam=0.01,
                                                                 reweight_every=10, learning_rate=1.0, **common)),
        ("adaboost stumps categorical", "categorical",
         fb.AdaBoostClassifier(40, categorical_features=[0, 1], **common)),
        ("adaboost depth 3 categorical", "categorical",
         fb.AdaBoostClassifier(30, max_depth=3, categorical_features=[0, 1], **common)),
        ("samme depth 2 categorical", "waveform categorical",
         fb.AdaBoostClassifier(20, max_depth=2, categorical_features=[0], max_bins=16, **common)),
        ("adaboost stumps trimmed 0.99", "twonorm", fb.AdaBoostClassifier(60, weight_trim_rate=0.99, **common)),
        ("adaboost depth 3 trimmed 0.99", "ringnorm",
         fb.AdaBoostClassifier(40, max_depth=3, weight_trim_rate=0.99, **common)),
        ("adaboost stumps trimmed 0.9", "twonorm", fb.AdaBoostClassifier(60, weight_trim_rate=0.9, **common)),
        ("adaboost depth 3 trimmed 0.9", "ringnorm",
         fb.AdaBoostClassifier(40, max_depth=3, weight_trim_rate=0.9, **common)),
        ("ebboost stumps trimmed 0.9", "twonorm", fb.EBBoostClassifier(40, weight_trim_rate=0.9, **common)),
        ("adaboost depth 3 trimmed 0.5", "ringnorm",
         fb.AdaBoostClassifier(60, max_depth=3, weight_trim_rate=0.5, **common)),
        ("samme depth 2 trimmed 0.5", "waveform", fb.AdaBoostClassifier(40, max_depth=2, weight_trim_rate=0.5,
                                                                        **common)),
        ("ebboost stumps trimmed 0.5", "twonorm", fb.EBBoostClassifier(60, weight_trim_rate=0.5, **common)),
        ("vadaboost stumps trimmed 0.99", "twonorm", fb.VadaBoostClassifier(40, weight_trim_rate=0.99, **common)),
        ("adaboost stumps exact", "twonorm", fb.AdaBoostClassifier(30, max_bins=None, **common)),
        ("adaboost depth 2 exact", "ringnorm", fb.AdaBoostClassifier(20, max_depth=2, max_bins=None, **common)),
        ("adaboost stumps early stopping", "twonorm",
         fb.AdaBoostClassifier(200, validation_fraction=0.2, n_iter_no_change=10, **common)),
        ("adaboost depth 3 early stopping", "ringnorm",
         fb.AdaBoostClassifier(100, max_depth=3, validation_fraction=0.2, n_iter_no_change=5, **common)),
        ("samme depth 2 validation", "waveform", fb.AdaBoostClassifier(30, max_depth=2, validation_fraction=0.2,
                                                                       **common)),
    ]
    if highs:
        out.append(("lpboost stumps", "twonorm", fb.LPBoostClassifier(30, nu=0.1, **common)))
        out.append(("lpboost depth 2", "ringnorm", fb.LPBoostClassifier(20, nu=0.1, max_depth=2, **common)))
    return out


def dask_fits(client, sets):
    import dask.array as da

    import fastboost.dask as fd

    specs = [
        ("dask adaboost stumps", "twonorm", fd.DaskAdaBoostClassifier(40, random_state=0)),
        ("dask adaboost depth 3", "ringnorm", fd.DaskAdaBoostClassifier(20, max_depth=3, random_state=0)),
        ("dask samme depth 2", "waveform", fd.DaskAdaBoostClassifier(20, max_depth=2, random_state=0)),
        ("dask ebboost stumps", "twonorm", fd.DaskEBBoostClassifier(20, random_state=0)),
        ("dask quadboost depth 2", "ringnorm", fd.DaskQuadBoostClassifier(20, max_depth=2, penalty="l2", lam=0.1,
                                                                          learning_rate=1.0, reweight_every=5,
                                                                          random_state=0)),
    ]
    for name, key, est in specs:
        X, y = sets[key]
        est.fit(da.from_array(X, chunks=(1000, X.shape[1])), da.from_array(y, chunks=(1000,)), client=client)
        yield name, est


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dask", action="store_true", help="also the Dask estimators (a local cluster)")
    ap.add_argument("--only", default="", help="only the fits whose name contains this")
    args = ap.parse_args(argv)
    sets = data()
    highs = importlib.util.find_spec("highspy") is not None
    for name, key, est in fits(highs):
        if args.only not in name:
            continue
        X, y = sets[key]
        est.fit(X, y)
        r, n = model_hash(est)
        print(f"{name:40s} {r} {n}", flush=True)
    if args.dask:
        import distributed

        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                      dashboard_address=None) as cluster, distributed.Client(cluster) as client:
            for name, est in dask_fits(client, sets):
                r, n = model_hash(est)
                print(f"{name:40s} {r} {n}", flush=True)


if __name__ == "__main__":
    main()
