#!/usr/bin/env python
"""Benchmark fastboost.dask: binning time, per-round time, bytes moved per round and peak memory per
worker on a Dask cluster, against the single-machine estimator on the same data.

    python scripts/bench_dask.py                          # 10 000 000 x 50 float32, 2 local workers
    python scripts/bench_dask.py --depths 1 --rows 4000000
    python scripts/bench_dask.py --scheduler tcp://10.0.0.5:8786 --skip-local   # a real cluster

The data (Breiman's twonorm, float32) is generated on the workers, one generator call
per partition, and never exists on the client. Each learner (``--depths``: 1 = stumps,
3 = depth-3 trees) is fitted with AdaBoost; stumps also with two round trips a round
(the sums from the rows instead of the histograms) to show what fusing the round saves.
With a local cluster, the single-machine estimator (``n_jobs`` = all the workers'
threads) is then fitted on the same rows, generated in this process by the same calls,
so both use the same cores.

Per round means the median time between consecutive rounds (the Dask fit's round
callback); bytes per round are those this client's comms received and sent during a
round (measured on distributed's TCP comms), which is all the data a round moves:
there is no worker-to-worker traffic during boosting. Peak RSS per worker is the
high-water mark of each worker process during the fit (reset before it on Linux).
"""
import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the checkout, before any installed copy

import numpy as np  # noqa: E402


def _partition(n_rows, n_features, seed):
    from fastboost.datasets import make_twonorm

    X, y = make_twonorm(n_rows, n_features, random_state=seed)
    return X.astype(np.float32), y


def _client_comm_bytes(client):
    """tests/_comm_bytes.py's TCP byte counter (a test helper, not part of fastboost), loaded by path."""
    import importlib.util

    path = Path(__file__).resolve().parent.parent / "tests" / "_comm_bytes.py"
    spec = importlib.util.spec_from_file_location("_fastboost_comm_bytes", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.client_comm_bytes(client)


def _sizes(n_rows, n_parts):
    base, extra = divmod(n_rows, n_parts)
    return [base + (i < extra) for i in range(n_parts)]


def _dask_twonorm(sizes, n_features, seed):
    import dask
    import dask.array as da

    parts = [dask.delayed(_partition, nout=2, pure=True)(n, n_features, seed + i) for i, n in enumerate(sizes)]
    X = da.concatenate([da.from_delayed(p[0], shape=(n, n_features), dtype=np.float32) for p, n in zip(parts, sizes)])
    y = da.concatenate([da.from_delayed(p[1], shape=(n,), dtype=np.int64) for p, n in zip(parts, sizes)])
    return X, y


def _fit_dask(client, X, y, rounds, depth, n_jobs, fused, counts):
    """One timed Dask fit; returns (model, per-round seconds, received and sent bytes per round, peak RSS per
    worker, fit seconds)."""
    from fastboost import dask as fbd
    from fastboost.bench.measure import reset_peak_rss, self_peak_rss_mb

    stamps = []
    model = fbd.DaskAdaBoostClassifier(n_estimators=rounds, max_depth=depth, n_jobs=n_jobs)
    model._fuse_rounds = fused
    model._round_callback = lambda done, workers: stamps.append((time.perf_counter(), counts["received"],
                                                                 counts["sent"]))
    client.run(reset_peak_rss)
    t0 = time.perf_counter()
    model.fit(X, y, client=client)
    fit_time = time.perf_counter() - t0
    peaks = client.run(self_peak_rss_mb)  # MB per worker
    del model._round_callback
    stamps = np.array(stamps)
    return (model, np.diff(stamps[:, 0]), np.diff(stamps[:, 1]), np.diff(stamps[:, 2]), peaks, fit_time)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--features", type=int, default=50)
    ap.add_argument("--partitions", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--depths", default="1,3", help="comma-separated tree depths (1: stumps)")
    ap.add_argument("--workers", type=int, default=2, help="local workers (ignored with --scheduler)")
    ap.add_argument("--threads-per-worker", type=int, default=1)
    ap.add_argument("--scheduler", default=None, help="address of a running scheduler (tcp://host:8786)")
    ap.add_argument("--skip-local", action="store_true", help="do not fit the single-machine estimator")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    depths = [int(d) for d in args.depths.split(",")]

    import distributed

    import fastboost
    from fastboost import AdaBoostClassifier
    from fastboost import dask as fbd

    if args.scheduler:
        cluster = None
        client = distributed.Client(args.scheduler)
    else:
        cluster = distributed.LocalCluster(n_workers=args.workers, threads_per_worker=args.threads_per_worker,
                                           processes=True, host="127.0.0.1", dashboard_address=None)
        client = distributed.Client(cluster)
    workers = client.scheduler_info()["workers"]
    n_threads = sum(w["nthreads"] for w in workers.values())
    print(f"fastboost {fastboost.__version__}, dask {distributed.__version__}, {len(workers)} workers, "
          f"{n_threads} threads, {os.cpu_count()} CPUs on the client machine")
    print(f"data: twonorm {args.rows} x {args.features} float32 in {args.partitions} partitions, "
          f"{args.rounds} rounds of AdaBoost, depths {depths}")

    sizes = _sizes(args.rows, args.partitions)
    X, y = _dask_twonorm(sizes, args.features, args.seed)
    t = time.perf_counter()
    X, y = client.persist([X, y])
    distributed.wait([X, y])
    print(f"generated on the workers in {time.perf_counter() - t:.1f} s")

    # warm-up: every process loads (or compiles) the kernels once
    Xw, yw = _dask_twonorm([5000, 5000], args.features, 123)
    for depth in depths:
        fbd.DaskAdaBoostClassifier(n_estimators=3, max_depth=depth).fit(Xw, yw, client=client)

    results = {}
    with _client_comm_bytes(client) as counts:
        for depth in depths:
            for fused in ([True, False] if depth == 1 else [True]):
                results[depth, fused] = _fit_dask(client, X, y, args.rounds, depth, args.threads_per_worker, fused,
                                                  counts)
    for (depth, fused), (model, per_round, received, sent, peaks, fit_time) in results.items():
        s = model.dask_stats_
        n_workers = len(s["workers"])
        learner = "stumps" if depth == 1 else f"depth-{depth} trees"
        how = "" if depth > 1 else (", one round trip a round" if fused else ", two round trips a round")
        nodes = 1 if depth == 1 else 2 ** depth - 1
        fields = 2 if depth == 1 else 3
        hist_bytes = n_workers * nodes * args.features * 256 * fields * 8
        print(f"\nDask fit, {learner}{how}")
        print(f"  rounds kept                  {model.n_estimators_}")
        print(f"  binning                      {model.bin_time_:.2f} s  (load {s['load_time']:.2f} s, sample + edges "
              f"{s['edges_time']:.2f} s, codes on the workers {s['transform_time']:.2f} s)")
        print(f"  per round (median)           {1e3 * np.median(per_round):.1f} ms  (min {1e3 * per_round.min():.1f}, "
              f"max {1e3 * per_round.max():.1f})")
        print(f"  bytes per round (median)     received {np.median(received):,.0f}, sent {np.median(sent):,.0f}  "
              f"(histograms: {n_workers} workers x {nodes} nodes x {args.features} features x 256 bins x "
              f"{fields} x 8 B = {hist_bytes:,})")
        print(f"  round trips                  {s['round_trips']}, fit {fit_time:.2f} s")
        print("  peak RSS per worker          " + ", ".join(f"{v / 1024:.2f} GiB" for v in peaks.values()))

    if args.skip_local:
        client.close()
        if cluster is not None:
            cluster.close()
        return 0
    client.cancel([X, y])
    parts = [_partition(n, args.features, args.seed + i) for i, n in enumerate(sizes)]  # the same rows
    Xl = np.concatenate([p[0] for p in parts])
    yl = np.concatenate([p[1] for p in parts])
    del parts
    client.close()
    if cluster is not None:
        cluster.close()
    Xt, yt = _partition(200_000, args.features, 10_000 + args.seed)
    print(f"\nSingle machine (AdaBoostClassifier, n_jobs={n_threads}, same rows)")
    for depth in depths:
        AdaBoostClassifier(n_estimators=3, max_depth=depth, n_jobs=n_threads).fit(Xl[:10000], yl[:10000])  # warm-up
        local = AdaBoostClassifier(n_estimators=args.rounds, max_depth=depth, n_jobs=n_threads).fit(Xl, yl)
        local_round = (local.fit_time_ - local.bin_time_) / local.n_estimators_
        learner = "stumps" if depth == 1 else f"depth-{depth} trees"
        print(f"  {learner:<14} binning {local.bin_time_:.2f} s, per round (mean) {1e3 * local_round:.1f} ms")
        for fused in ([True, False] if depth == 1 else [True]):
            model, per_round = results[depth, fused][:2]
            how = "" if depth > 1 else (" (one round trip)" if fused else " (two round trips)")
            print(f"    Dask{how} / single machine per round: {np.median(per_round) / local_round:.2f}; "
                  f"test error on 200 000 new rows: Dask {1 - model.score(Xt, yt):.4f}, single machine "
                  f"{1 - local.score(Xt, yt):.4f}")
    from fastboost.bench.measure import self_peak_rss_mb

    print(f"  peak RSS of this process: {self_peak_rss_mb() / 1024:.2f} GiB (the data, its codes and the fits)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
