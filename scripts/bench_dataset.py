#!/usr/bin/env python
"""Training data from parquet files that are never all in memory: build time and peak memory.

Generates a directory of parquet files (``--rows`` x ``--features`` float64 features with NaN, a 0/1
target; ``--files`` files), then, each in its own process (so each peak is its own):

- fastboost: ``Dataset.from_parquet`` (codes in memory), then a ``--rounds``-round stump fit;
- fastboost-codes-file: the same with ``codes_path=`` (the codes in a file on disk);
- fastboost-in-memory: the table read whole (pandas), then the in-memory fit (binning included);
- xgboost: ``QuantileDMatrix`` from a ``DataIter`` over the files (one file a batch), then ``xgb.train``
  with depth-1 trees;
- lightgbm: ``Dataset`` from one ``Sequence`` a file (one file's rows cached at a time), then
  ``lgb.train`` with two leaves.

Reported per process: build time, peak RSS after building (the process's maximum resident set since it
started, imports included; the RSS after imports is given too), peak RSS after the fit, and the fit's
time per round. Every library runs on ``--threads`` threads.

    python scripts/bench_dataset.py --rows 200000 --files 8        # small (seconds)
    python scripts/bench_dataset.py --rows 50000000 --files 400     # 8 GB of float64 features

Writes a Markdown table to standard output and, with ``--json PATH``, the figures.
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
LIBRARIES = ["fastboost", "fastboost-codes-file", "fastboost-in-memory", "xgboost", "lightgbm"]


def peak_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def generate(path, rows, features, files, seed=0):
    """Parquet files of float64 features (5 % NaN) and a target from a noisy linear rule, one file in memory."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    coef = rng.normal(size=features)
    bounds = np.linspace(0, rows, files + 1).astype(np.int64)
    for k in range(files):
        m = int(bounds[k + 1] - bounds[k])
        X = rng.normal(size=(m, features))
        y = (np.nan_to_num(X) @ coef + rng.normal(size=m) > 0).astype(np.int64)
        X[rng.random(X.shape) < 0.05] = np.nan
        cols = {f"x{j}": X[:, j] for j in range(features)}
        cols["y"] = y
        pq.write_table(pa.table(cols), path / f"part-{k:05d}.parquet")


def files_of(path):
    return sorted(str(p) for p in Path(path).glob("*.parquet"))


def warm_up(threads):
    """Load (or compile) the kernels a stump fit uses, before anything is measured."""
    from fastboost import AdaBoostClassifier

    X = np.random.default_rng(0).normal(size=(200, 3))
    X[::7, 1] = np.nan
    AdaBoostClassifier(2, n_jobs=threads).fit(X, np.arange(200) % 2)


def run_fastboost(path, args, codes_file):
    from fastboost import AdaBoostClassifier, Dataset

    warm_up(args.threads)
    base = peak_mib()
    t0 = time.perf_counter()
    codes = os.path.join(args.work, "codes.bin") if codes_file else None
    ds = Dataset.from_parquet(path, target="y", codes_path=codes, random_state=0)
    build = time.perf_counter() - t0
    built = peak_mib()
    model = AdaBoostClassifier(args.rounds, random_state=0, n_jobs=args.threads).fit(ds)
    return {"base": base, "build": build, "build_peak": built, "fit_peak": peak_mib(),
            "per_round": model.fit_time_ / max(1, model.n_estimators_), "rounds": model.n_estimators_}


def run_fastboost_in_memory(path, args):
    import pandas as pd

    from fastboost import AdaBoostClassifier

    warm_up(args.threads)
    base = peak_mib()
    t0 = time.perf_counter()
    frame = pd.read_parquet(path)
    y = frame.pop("y").to_numpy()
    X = frame.to_numpy(dtype=np.float64)
    del frame
    model = AdaBoostClassifier(args.rounds, random_state=0, n_jobs=args.threads).fit(X, y)
    return {"base": base, "build": time.perf_counter() - t0 - model.fit_time_ + model.bin_time_,
            "build_peak": None, "fit_peak": peak_mib(),
            "per_round": (model.fit_time_ - model.bin_time_) / max(1, model.n_estimators_),
            "rounds": model.n_estimators_}


def run_xgboost(path, args):
    import pyarrow.parquet as pq
    import xgboost as xgb

    files = files_of(path)

    class Files(xgb.DataIter):
        def __init__(self):
            self.k = 0
            super().__init__()

        def next(self, input_data):
            if self.k == len(files):
                return 0
            t = pq.read_table(files[self.k])
            y = t.column("y").to_numpy()
            X = np.column_stack([t.column(c).to_numpy() for c in t.schema.names if c != "y"])
            input_data(data=X, label=y)
            self.k += 1
            return 1

        def reset(self):
            self.k = 0

    base = peak_mib()
    t0 = time.perf_counter()
    dm = xgb.QuantileDMatrix(Files(), max_bin=256, nthread=args.threads)
    build = time.perf_counter() - t0
    built = peak_mib()
    t0 = time.perf_counter()
    xgb.train({"max_depth": 1, "tree_method": "hist", "nthread": args.threads, "objective": "binary:logistic",
               "max_bin": 256}, dm, args.rounds)
    return {"base": base, "build": build, "build_peak": built, "fit_peak": peak_mib(),
            "per_round": (time.perf_counter() - t0) / args.rounds, "rounds": args.rounds}


def run_lightgbm(path, args):
    import lightgbm as lgb
    import pyarrow.parquet as pq

    files = files_of(path)
    cache = {}

    def load(f):
        if f not in cache:
            cache.clear()  # one file's rows at a time
            t = pq.read_table(f, columns=[c for c in pq.read_schema(f).names if c != "y"])
            cache[f] = np.column_stack([t.column(c).to_numpy() for c in t.schema.names])
        return cache[f]

    class FileSequence(lgb.Sequence):
        def __init__(self, f):
            self.f = f
            self.n = pq.ParquetFile(f).metadata.num_rows
            self.batch_size = 65_536

        def __getitem__(self, idx):
            return load(self.f)[idx]

        def __len__(self):
            return self.n

    base = peak_mib()
    t0 = time.perf_counter()
    y = np.concatenate([pq.read_table(f, columns=["y"]).column("y").to_numpy() for f in files])
    ds = lgb.Dataset([FileSequence(f) for f in files], label=y,
                     params={"max_bin": 255, "verbose": -1, "num_threads": args.threads}).construct()
    cache.clear()
    build = time.perf_counter() - t0
    built = peak_mib()
    t0 = time.perf_counter()
    lgb.train({"num_leaves": 2, "max_depth": 1, "verbose": -1, "num_threads": args.threads,
               "objective": "binary"}, ds, args.rounds)
    return {"base": base, "build": build, "build_peak": built, "fit_peak": peak_mib(),
            "per_round": (time.perf_counter() - t0) / args.rounds, "rounds": args.rounds}


def worker(args):
    path = Path(args.data)
    os.environ.setdefault("NUMBA_NUM_THREADS", str(args.threads))
    run = {"fastboost": lambda: run_fastboost(path, args, False),
           "fastboost-codes-file": lambda: run_fastboost(path, args, True),
           "fastboost-in-memory": lambda: run_fastboost_in_memory(path, args),
           "xgboost": lambda: run_xgboost(path, args), "lightgbm": lambda: run_lightgbm(path, args)}[args.worker]
    print(json.dumps(run()))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rows", type=int, default=200_000)
    p.add_argument("--features", type=int, default=20)
    p.add_argument("--files", type=int, default=8)
    p.add_argument("--rounds", type=int, default=100)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--data", default=None, help="an existing directory of generated files (default: a new one)")
    p.add_argument("--only", nargs="*", default=LIBRARIES, choices=LIBRARIES)
    p.add_argument("--json", default=None)
    p.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    p.add_argument("--work", default=None, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        return worker(args)
    with tempfile.TemporaryDirectory(prefix="bench-dataset-") as work:
        data = Path(args.data) if args.data else Path(work) / "data"
        if not args.data:
            t0 = time.perf_counter()
            generate(data, args.rows, args.features, args.files)
            print(f"generated {args.rows} x {args.features} float64 rows in {args.files} files "
                  f"({args.rows * args.features * 8 / 2**30:.2f} GiB raw) in {time.perf_counter() - t0:.1f} s",
                  file=sys.stderr)
        results = {}
        for lib in args.only:
            cmd = [sys.executable, __file__, "--worker", lib, "--data", str(data), "--work", work,
                   "--rounds", str(args.rounds), "--threads", str(args.threads)]
            env = {**os.environ, "OMP_NUM_THREADS": str(args.threads), "NUMBA_NUM_THREADS": str(args.threads)}
            r = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=env)
            if r.returncode:
                print(f"{lib}: failed: {r.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
                continue
            results[lib] = json.loads(r.stdout.strip().splitlines()[-1])
    raw = args.rows * args.features * 8 / 2**20
    print(f"\n{args.rows} rows x {args.features} float64 features in {args.files} parquet files "
          f"({raw:.0f} MiB raw), {args.rounds} rounds of stumps, {args.threads} threads\n")
    print("| library | build (s) | RSS after imports (MiB) | peak RSS, build (MiB) | peak RSS, fit (MiB) "
          "| time per round (ms) |")
    print("|---|---:|---:|---:|---:|---:|")
    for lib, r in results.items():
        bp = "" if r["build_peak"] is None else f"{r['build_peak']:.0f}"
        print(f"| {lib} | {r['build']:.2f} | {r['base']:.0f} | {bp} | {r['fit_peak']:.0f} | "
              f"{1000 * r['per_round']:.2f} |")
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": args.rows, "features": args.features, "files": args.files,
                                               "rounds": args.rounds, "threads": args.threads,
                                               "results": results}, indent=1))


if __name__ == "__main__":
    main()
