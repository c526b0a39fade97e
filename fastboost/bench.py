"""``fastboost bench``: fastboost against scikit-learn, LightGBM and XGBoost on the same data.

On generated twonorm (``fastboost.datasets.make_twonorm``) or a .npy/.parquet/.csv file, fits
the selected fastboost algorithms and whichever competitors are installed (scikit-learn's
AdaBoostClassifier on decision trees, LightGBM, XGBoost, scikit-learn's
HistGradientBoostingClassifier) at the same tree depth, number of rounds, number of bins and
number of threads, and reports per library:

* preparation (binning) time, measured on its own: fastboost ``bin_time_``; LightGBM
  ``Dataset(..., free_raw_data=False).construct()``; XGBoost ``QuantileDMatrix`` (every run uses
  ``tree_method="hist"``); HistGradientBoosting's own binning time from its verbose log;
  scikit-learn AdaBoost has none (exact splits on raw values);
* training time per round: median over ``--repeat`` fits of the training time alone divided by
  the number of rounds actually run (slow competitors at many rows run a few rounds and are
  extrapolated, marked so);
* fastboost's first-call (numba compile) time: a fresh process with an empty ``NUMBA_CACHE_DIR``
  (cold) and a second fresh process on that filled cache (warm);
* peak RSS: every library runs in its own child process; the peak is that process's high-water
  mark (VmHWM; ``ru_maxrss`` from ``os.wait4`` where /proc is missing), next to the child's RSS
  after loading the data and before importing the library;
* test accuracy on held-out rows;
* a streaming-bandwidth floor: a numba ``prange`` kernel sums a uint8 array of the size of
  fastboost's binned codes (n_samples x n_features bytes) in the same process as fastboost's
  fits; fastboost's per-round time is reported as a multiple of bytes / bandwidth.

The table goes to stdout, progress to stderr, the full record to a JSON file (default
``bench_results/bench-<timestamp>.json``) and, with matplotlib, a bar chart next to it.

This module imports only the standard library and NumPy at the top: it is also run as a
script in the child processes (by path, so competitors' children never import fastboost).
"""
import argparse
import contextlib
import gc
import importlib
import io
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

WORKER_RUN_NAME = "__fastboost_bench_worker__"

#: ``--algorithms`` names -> fastboost estimator class names. Names whose class is not in the
#: installed fastboost are skipped with a message (a name not listed here is also tried as
#: ``<Name>Classifier``, case-insensitively).
FASTBOOST_ALGORITHMS = {
    "adaboost": "AdaBoostClassifier",
    "vadaboost": "VadaBoostClassifier",
    "ebboost": "EBBoostClassifier",
    "saboost": "SABoostClassifier",
    "quadboost": "QuadBoostClassifier",
    "lazyboost": "LazyBoostClassifier",
}

#: Competitors: key -> (label, module that must import, short name for ratios).
COMPETITORS = {
    "sklearn-adaboost": ("sklearn AdaBoostClassifier", "sklearn.ensemble", "sklearn AdaBoost"),
    "lightgbm": ("LightGBM", "lightgbm", "LightGBM"),
    "xgboost": ("XGBoost", "xgboost", "XGBoost"),
    "sklearn-hgb": ("sklearn HistGradientBoostingClassifier", "sklearn.ensemble", "sklearn HGB"),
}

RSS_METHOD = (
    "every library runs in its own child process (data loaded from .npy files); peak RSS is that "
    "process's high-water mark VmHWM from /proc/self/status at its end (ru_maxrss of the child from "
    "os.wait4 where /proc is missing; on Linux that one also counts the parent's RSS at fork, so it "
    "is not used). It includes Python, NumPy, the train and test data, the library import, a small "
    "warm-up fit, every repeat's preparation and fit, and prediction. 'base' is the child's RSS "
    "after loading the data, before importing the library"
)
GBM_NOTE = ("LightGBM, XGBoost and HistGradientBoosting are gradient boosting (logistic loss, "
            "learning rate 0.1), not AdaBoost: same tree shape, rounds, bins and threads, a different "
            "algorithm")

T_START = time.perf_counter()


# ======================================================================================= utilities
def log(msg):
    print(f"[{time.perf_counter() - T_START:7.1f} s] {msg}", file=sys.stderr, flush=True)


def current_rss_mb():
    """This process's resident set size now, in MB (psutil, else /proc; None if neither works)."""
    try:
        import psutil

        return psutil.Process().memory_info().rss / 2 ** 20
    except Exception:
        pass
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2 ** 20
    except Exception:
        return None


def _maxrss_to_mb(maxrss):
    return maxrss / 2 ** 20 if sys.platform == "darwin" else maxrss / 1024  # bytes on macOS, KiB on Linux


def self_peak_rss_mb():
    """Peak RSS of this process since it started (exec): VmHWM on Linux, else ru_maxrss."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024  # kB
    except Exception:
        pass
    try:
        import resource

        return _maxrss_to_mb(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
    except Exception:
        return None


def reset_peak_rss():
    """Reset this process's peak RSS (VmHWM) to its current RSS; True if the OS allowed it (Linux:
    writing 5 to /proc/self/clear_refs)."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


class _FitMemory:
    """Peak RSS of the timed fits over the RSS just before them (the library imported and warmed up,
    the data loaded): what fitting itself needs beyond its input."""

    def __enter__(self):
        self.ok = reset_peak_rss()
        self.before = current_rss_mb()
        return self

    def __exit__(self, *exc):
        peak = self_peak_rss_mb()
        self.mb = peak - self.before if (self.ok and peak is not None and self.before is not None) else None


def _system_busy_cpu():
    """Busy CPU seconds of the whole machine so far (psutil), or None."""
    try:
        import psutil

        ct = psutil.cpu_times()
        return sum(ct) - ct.idle - getattr(ct, "iowait", 0.0)
    except Exception:
        return None


def _own_cpu():
    t = os.times()
    return t.user + t.system


def _other_load(seconds):
    """Cores used by other processes over ``seconds`` (None without psutil)."""
    busy0, own0, t0 = _system_busy_cpu(), _own_cpu(), time.perf_counter()
    if busy0 is None:
        return None
    time.sleep(seconds)
    wall = time.perf_counter() - t0
    return max(0.0, (_system_busy_cpu() - busy0) - (_own_cpu() - own0)) / wall


def default_threads():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def fmt_rows(n):
    return f"{n:,}".replace(",", " ")


def _median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def _accuracy(pred, y):
    return float(np.mean(np.asarray(pred).astype(np.int64) == y))


# ================================================================================== data
def load_data(args):
    """(X_train, y_train, X_test, y_test, description): y as 0/1 int64, X in the requested dtype."""
    dtype = np.dtype(args.dtype)
    if args.data is None:
        from fastboost.datasets import make_twonorm

        n = 100_000 if args.n is None else args.n
        n_test = min(n, 100_000) if args.n_test is None else args.n_test
        Xtr, ytr = make_twonorm(n, n_features=args.d, random_state=args.seed)
        Xte, yte = make_twonorm(n_test, n_features=args.d, random_state=args.seed + 1)
        desc = {"name": "twonorm", "source": "fastboost.datasets.make_twonorm", "seed": args.seed,
                "test_seed": args.seed + 1}
        Xtr, Xte = Xtr.astype(dtype, copy=False), Xte.astype(dtype, copy=False)
        ytr, yte = (ytr > 0).astype(np.int64), (yte > 0).astype(np.int64)
    else:
        X, y, desc = _load_file(args.data, args.target)
        X = np.ascontiguousarray(X, dtype=dtype)
        classes, y = np.unique(y, return_inverse=True)
        if classes.shape[0] != 2:
            raise SystemExit(f"fastboost bench: the target must have exactly 2 classes; "
                             f"{args.data} has {classes.shape[0]}")
        desc["classes"] = [str(c) for c in classes]
        rng = np.random.default_rng(args.seed)
        perm = rng.permutation(X.shape[0])
        n_test = max(1, X.shape[0] // 5) if args.n_test is None else args.n_test
        if n_test >= X.shape[0]:
            raise SystemExit(f"fastboost bench: --n-test {n_test} leaves no training rows")
        te, tr = perm[:n_test], perm[n_test:]
        if args.n is not None:
            tr = tr[: args.n]
        Xtr, ytr, Xte, yte = X[tr], y[tr].astype(np.int64), X[te], y[te].astype(np.int64)
        desc.update(shuffle_seed=args.seed)
    desc.update(n_train=int(Xtr.shape[0]), n_test=int(Xte.shape[0]), n_features=int(Xtr.shape[1]),
                dtype=dtype.name)
    return np.ascontiguousarray(Xtr), ytr, np.ascontiguousarray(Xte), yte, desc


def _load_file(path, target):
    path = Path(path)
    suffix = path.suffix.lower()
    desc = {"name": path.name, "source": str(path.resolve())}
    if suffix == ".npy":
        a = np.load(path, allow_pickle=False)
        if a.ndim != 2 or a.shape[1] < 2:
            raise SystemExit(f"fastboost bench: {path} must be 2-D with the label in a column")
        col = a.shape[1] - 1 if target is None else int(target)
        desc["target"] = col
        return np.delete(a, col, axis=1), a[:, col], desc
    if suffix in (".csv", ".parquet", ".pq"):
        try:
            import pandas as pd
        except ImportError:
            if suffix != ".csv":
                raise SystemExit("fastboost bench: reading parquet needs pandas (and pyarrow)")
            a = np.genfromtxt(path, delimiter=",", skip_header=1)
            col = a.shape[1] - 1 if target is None else int(target)
            desc["target"] = col
            return np.delete(a, col, axis=1), a[:, col], desc
        try:
            df = pd.read_csv(path) if suffix == ".csv" else pd.read_parquet(path)
        except ImportError as exc:
            raise SystemExit(f"fastboost bench: cannot read {path}: {exc}")
        col = df.columns[-1] if target is None else target
        if col not in df.columns:
            raise SystemExit(f"fastboost bench: no column {target!r} in {path} (columns: {list(df.columns)[:20]})")
        desc["target"] = str(col)
        X = df.drop(columns=[col]).to_numpy(dtype=np.float64, na_value=np.nan)
        return X, df[col].to_numpy(), desc
    raise SystemExit(f"fastboost bench: unsupported data file {path} (use .npy, .csv or .parquet)")


# ================================================================================== bandwidth floor
_SUM_KERNEL = None


def _sum_kernel():
    global _SUM_KERNEL
    if _SUM_KERNEL is None:
        import numba
        from numba import prange

        # not cached: this module runs both as fastboost.bench and, in the children, under another
        # name, and a cache entry written under one name fails to load under the other
        # (integer sums vectorise without any fastmath flag)
        @numba.njit(parallel=True, nogil=True, error_model="numpy", cache=False)
        def sum_blocks(a, out, block):
            n = a.shape[0]
            for b in prange(out.shape[0]):
                c = a[b * block: min(n, (b + 1) * block)]  # a view: the inner loop vectorises
                s = np.uint64(0)
                for i in range(c.shape[0]):
                    s += c[i]
                out[b] = s

        _SUM_KERNEL = sum_blocks
    return _SUM_KERNEL


def bandwidth_probe(n_bytes, threads, runs=9, min_seconds=0.02):
    """Streaming read bandwidth: a numba prange kernel sums a uint8 array of ``n_bytes`` bytes.

    Median over ``runs`` timings (each repeats the sum often enough to last ``min_seconds``),
    after one warm-up call. A small array stays in cache, as the codes of a small data set do.
    """
    import numba

    n_bytes = max(1, int(n_bytes))
    a = np.full(n_bytes, 1, np.uint8)  # every page touched, no temporary (it would count in the peak RSS)
    block = 1 << 16
    out = np.empty(-(-n_bytes // block), np.uint64)
    kernel = _sum_kernel()
    previous = numba.get_num_threads()
    numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
    try:
        kernel(a, out, block)  # compile + warm
        t = time.perf_counter()
        kernel(a, out, block)
        once = max(time.perf_counter() - t, 1e-7)
        reps = max(1, int(min_seconds / once))
        samples = []
        for _ in range(runs):
            t = time.perf_counter()
            for _ in range(reps):
                kernel(a, out, block)
            samples.append((time.perf_counter() - t) / reps)
    finally:
        numba.set_num_threads(previous)
    check = int(out.sum())
    del a
    med = statistics.median(samples)
    return {
        "samples_s": samples,
        "bytes": n_bytes,
        "threads": min(threads, numba.config.NUMBA_NUM_THREADS),
        "runs": runs,
        "reps_per_run": reps,
        "median_s": med,
        "gb_per_s": n_bytes / med / 1e9,
        "best_gb_per_s": n_bytes / min(samples) / 1e9,
        "checksum": check,
        "kernel": "numba njit(parallel=True) prange over 64 KiB blocks, uint64 sum of uint8",
    }


def _pool_probes(probes):
    """One bandwidth record from several probes of the same size: median and best over all samples."""
    samples = [x for p in probes for x in p["samples_s"]]
    med = statistics.median(samples)
    return {**probes[0], "samples_s": samples, "runs": len(samples), "probes": len(probes), "median_s": med,
            "gb_per_s": probes[0]["bytes"] / med / 1e9, "best_gb_per_s": probes[0]["bytes"] / min(samples) / 1e9,
            "probe_medians_gb_per_s": [p["gb_per_s"] for p in probes]}


# ================================================================================== libraries
def fastboost_class(algorithm):
    """The estimator class for an ``--algorithms`` name, or (None, reason)."""
    import fastboost

    name = FASTBOOST_ALGORITHMS.get(algorithm)
    if name is not None and hasattr(fastboost, name):
        return getattr(fastboost, name), None
    wanted = f"{algorithm}classifier".lower()
    for attr in dir(fastboost):
        if attr.lower() == wanted and isinstance(getattr(fastboost, attr), type):
            return getattr(fastboost, attr), None
    known = sorted(a for a in FASTBOOST_ALGORITHMS if hasattr(fastboost, FASTBOOST_ALGORITHMS[a]))
    reason = (f"fastboost {fastboost.__version__} has no {name or algorithm!r} estimator "
              f"(available: {', '.join(known)})")
    return None, reason


class _Timer:
    def __enter__(self):
        self.t0 = time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.s = time.perf_counter() - self.t0
        return False


def _warm_slice(X, y, n=2000):
    """A small slice with both classes, to warm up JIT compilation / lazy initialisation."""
    n = min(n, X.shape[0])
    Xw, yw = X[:n], y[:n]
    if np.unique(yw).size < 2:
        i0, i1 = np.flatnonzero(y == 0)[:n // 2], np.flatnonzero(y == 1)[:n // 2]
        idx = np.sort(np.concatenate([i0, i1]))
        Xw, yw = X[idx], y[idx]
    return Xw, yw


def _time_predict(predict, reps=3):
    """(predictions, median seconds of ``reps`` calls) of a fitted model on the test rows."""
    times = []
    for _ in range(reps):
        with _Timer() as t:
            pred = predict()
        times.append(t.s)
    return pred, _median(times)


def _prepare_train_repeats(task, record, prepare, train, rounds_of):
    """``task["repeat"]`` timed repeats of prepare() -> dataset, then train(dataset) -> model (the previous
    repeat's dataset and model are freed first); returns (the last model, fit +MB)."""
    model = dataset = None
    with _FitMemory() as fit_mem:
        for r in range(task["repeat"]):
            model = dataset = None
            gc.collect()
            with _Timer() as tp:
                dataset = prepare()
            with _Timer() as t:
                model = train(dataset)
            n_run = int(rounds_of(model))
            record(r, {"prep_s": tp.s, "train_s": t.s, "fit_wall_s": tp.s + t.s, "rounds": n_run,
                       "per_round_s": t.s / max(n_run, 1)})
    return model, fit_mem.mb


def run_task(task, data, say=log):
    """Fit one library ``task["repeat"]`` times on ``data``; a JSON-able result dict.

    data: dict with Xtr, ytr (0/1), Xte, yte. The training data are never copied here.
    """
    kind = task["key"]
    Xtr, ytr, Xte, yte = data["Xtr"], data["ytr"], data["Xte"], data["yte"]
    rounds, depth, bins, threads = task["rounds"], task["depth"], task["bins"], task["threads"]
    fit_rounds = task.get("fit_rounds") or rounds
    res = {"key": kind, "status": "ok", "rounds_requested": rounds, "rounds_fitted": fit_rounds,
           "extrapolated": fit_rounds < rounds, "runs": []}
    label = task["label"]

    def record(r, run):
        res["runs"].append(run)
        prep = "-" if run["prep_s"] is None else f"{run['prep_s']:.3f} s"
        say(f"{label} repeat {r + 1}/{task['repeat']}: prep {prep}, train {run['train_s']:.3f} s, "
            f"{run['rounds']} rounds, {1e3 * run['per_round_s']:.3f} ms/round")

    if kind.startswith("fastboost-"):
        import numba

        from fastboost._config import resolve_n_jobs

        cls, reason = fastboost_class(task["algorithm"])
        if cls is None:
            return {**res, "status": "skipped", "message": reason}
        params = {"n_estimators": fit_rounds, "max_bins": bins, "n_jobs": threads, "random_state": task["seed"]}
        est = cls(**params)
        if depth > 1:
            if "max_depth" not in est.get_params():
                return {**res, "status": "skipped",
                        "message": f"{cls.__name__} has no max_depth parameter: fastboost fits stumps only "
                                   f"(depth 1) for now; trees are being built in another issue"}
            params["max_depth"] = depth
        res["params"] = dict(params)
        res["estimator"] = f"fastboost.{cls.__name__}"
        probe_bytes = Xtr.shape[0] * Xtr.shape[1]
        probes = []
        if task.get("probe", True):
            say(f"{label}: streaming-bandwidth probe on {probe_bytes / 1e6:.1f} MB (before the fits)")
            probes.append(bandwidth_probe(probe_bytes, threads))
        Xw, yw = _warm_slice(Xtr, ytr)
        with _Timer() as tw:
            cls(**{**params, "n_estimators": 5}).fit(Xw, yw).predict(Xw[:100])
        res["warmup_s"] = tw.s
        res["threads_used"] = resolve_n_jobs(threads)
        with _FitMemory() as fit_mem:
            for r in range(task["repeat"]):
                gc.collect()
                est = cls(**params)
                with _Timer() as t:
                    est.fit(Xtr, ytr)
                n_run = int(est.n_estimators_)
                train = est.fit_time_ - est.bin_time_
                record(r, {"prep_s": est.bin_time_, "train_s": train, "fit_wall_s": t.s, "rounds": n_run,
                           "per_round_s": train / max(n_run, 1)})
        res["fit_peak_over_start_mb"] = fit_mem.mb
        if n_run < fit_rounds:
            res["note"] = f"stopped early after {n_run} of {fit_rounds} rounds"
        res["prep_what"] = "BinMapper fit_transform (bin_time_)"
        if probes:
            say(f"{label}: streaming-bandwidth probe again (after the fits)")
            probes.append(bandwidth_probe(probe_bytes, threads))
            res["bandwidth"] = _pool_probes(probes)
        try:
            res["numba_threading_layer"] = numba.threading_layer()
        except ValueError:
            pass
        pred, res["predict_s"] = _time_predict(lambda: est.predict(Xte))

    elif kind == "sklearn-adaboost":
        from sklearn.ensemble import AdaBoostClassifier
        from sklearn.tree import DecisionTreeClassifier

        def make(k):
            return AdaBoostClassifier(estimator=DecisionTreeClassifier(max_depth=depth), n_estimators=k,
                                      learning_rate=1.0, random_state=task["seed"])

        res["params"] = {"estimator": f"DecisionTreeClassifier(max_depth={depth})", "n_estimators": fit_rounds,
                         "learning_rate": 1.0}
        res["estimator"] = "sklearn.ensemble.AdaBoostClassifier"
        res["threads_used"] = 1
        res["note"] = "1 thread (no n_jobs), no binning"
        Xw, yw = _warm_slice(Xtr, ytr)
        make(2).fit(Xw, yw)
        with _FitMemory() as fit_mem:
            for r in range(task["repeat"]):
                gc.collect()
                est = make(fit_rounds)
                with _Timer() as t:
                    est.fit(Xtr, ytr)
                n_run = len(est.estimators_)
                record(r, {"prep_s": None, "train_s": t.s, "fit_wall_s": t.s, "rounds": n_run,
                           "per_round_s": t.s / max(n_run, 1)})
        res["fit_peak_over_start_mb"] = fit_mem.mb
        res["prep_what"] = None
        pred, res["predict_s"] = _time_predict(lambda: est.predict(Xte), reps=1)

    elif kind == "lightgbm":
        import lightgbm as lgb

        ds_params = {"max_bin": bins, "verbose": -1, "num_threads": threads, "seed": task["seed"]}
        params = {"objective": "binary", "learning_rate": 0.1, "num_leaves": 2 ** depth, "max_depth": depth,
                  "max_bin": bins, "num_threads": threads, "verbose": -1, "seed": task["seed"]}
        res["params"] = params
        res["estimator"] = f"lightgbm.train (lightgbm {lgb.__version__})"
        res["threads_used"] = threads
        Xw, yw = _warm_slice(Xtr, ytr)
        lgb.train(params, lgb.Dataset(Xw, label=yw, params=ds_params), num_boost_round=2)
        bst, res["fit_peak_over_start_mb"] = _prepare_train_repeats(
            task, record, lambda: lgb.Dataset(Xtr, label=ytr, params=ds_params, free_raw_data=False).construct(),
            lambda ds: lgb.train(params, ds, num_boost_round=fit_rounds), lambda b: b.current_iteration())
        res["prep_what"] = "lgb.Dataset(free_raw_data=False).construct()"
        pred, res["predict_s"] = _time_predict(lambda: bst.predict(Xte, num_threads=threads) > 0.5)

    elif kind == "xgboost":
        import xgboost as xgb

        params = {"objective": "binary:logistic", "tree_method": "hist", "max_depth": depth, "max_bin": bins,
                  "learning_rate": 0.1, "nthread": threads, "verbosity": 0, "seed": task["seed"]}
        res["params"] = params
        res["estimator"] = f"xgboost.train (xgboost {xgb.__version__})"
        res["threads_used"] = threads
        Xw, yw = _warm_slice(Xtr, ytr)
        xgb.train(params, xgb.QuantileDMatrix(Xw, label=yw, max_bin=bins, nthread=threads), num_boost_round=2)
        bst, res["fit_peak_over_start_mb"] = _prepare_train_repeats(
            task, record, lambda: xgb.QuantileDMatrix(Xtr, label=ytr, max_bin=bins, nthread=threads),
            lambda dm: xgb.train(params, dm, num_boost_round=fit_rounds), lambda b: b.num_boosted_rounds())
        res["prep_what"] = "xgboost.QuantileDMatrix(max_bin=bins)"
        pred, res["predict_s"] = _time_predict(lambda: bst.inplace_predict(Xte) > 0.5)

    elif kind == "sklearn-hgb":
        from sklearn.ensemble import HistGradientBoostingClassifier
        from threadpoolctl import threadpool_limits

        params = {"max_iter": fit_rounds, "learning_rate": 0.1, "max_depth": depth,
                  "max_leaf_nodes": max(2, 2 ** depth), "max_bins": bins, "early_stopping": False,
                  "random_state": task["seed"]}
        res["params"] = params
        res["estimator"] = "sklearn.ensemble.HistGradientBoostingClassifier"
        res["threads_used"] = threads
        Xw, yw = _warm_slice(Xtr, ytr)
        with threadpool_limits(threads, user_api="openmp"):
            HistGradientBoostingClassifier(**{**params, "max_iter": 2}).fit(Xw, yw)
            separable = True
            with _FitMemory() as fit_mem:
                for r in range(task["repeat"]):
                    gc.collect()
                    est = HistGradientBoostingClassifier(**params, verbose=1)
                    buf = io.StringIO()
                    with contextlib.redirect_stdout(buf), _Timer() as t:
                        est.fit(Xtr, ytr)
                    m = re.search(r"Binning [\d.]+ GB of training data: ([\d.]+) s", buf.getvalue())
                    n_run = int(est.n_iter_)
                    if m:
                        prep = float(m.group(1))
                        train = t.s - prep
                    else:
                        separable, prep, train = False, None, t.s
                    record(r, {"prep_s": prep, "train_s": train, "fit_wall_s": t.s, "rounds": n_run,
                               "per_round_s": train / max(n_run, 1)})
            res["fit_peak_over_start_mb"] = fit_mem.mb
            pred, res["predict_s"] = _time_predict(lambda: est.predict(Xte))
        if separable:
            res["prep_what"] = "HGB's own binning time, read from its verbose log (fit minus it = train)"
            res["note"] = "prep from HGB's verbose log"
        else:
            res["prep_what"] = None
            res["note"] = "binning not separable: included in train"
    else:
        raise ValueError(f"unknown benchmark task {kind!r}")

    runs = res["runs"]
    res["prep_s"] = _median([r["prep_s"] for r in runs])
    res["train_s"] = _median([r["train_s"] for r in runs])
    res["per_round_s"] = _median([r["per_round_s"] for r in runs])
    res["per_round_min_s"] = min(r["per_round_s"] for r in runs)
    res["per_round_max_s"] = max(r["per_round_s"] for r in runs)
    res["rounds_run"] = runs[-1]["rounds"]
    res["test_accuracy"] = _accuracy(pred, yte)
    if res["extrapolated"]:
        res["note"] = (f"(extrapolated from {fit_rounds} rounds)"
                       + (f"; {res['note']}" if res.get("note") else ""))
        res["accuracy_note"] = f"test accuracy of the {fit_rounds}-round model"
    if "bandwidth" in res:
        bw = res["bandwidth"]
        res["floor_s"] = bw["bytes"] / (bw["gb_per_s"] * 1e9)  # median bandwidth
        res["floor_multiple"] = res["per_round_s"] / res["floor_s"]
        res["best_floor_s"] = bw["bytes"] / (bw["best_gb_per_s"] * 1e9)
        res["best_floor_multiple"] = res["per_round_s"] / res["best_floor_s"]
    return res


# ================================================================================== child processes
def _worker_main(task_path):
    """Child process: load the data, record the RSS baseline, run one task, write the result."""
    task = json.loads(Path(task_path).read_text())
    global T_START
    T_START = time.perf_counter() - (time.time() - task["t_start_epoch"])
    if task.get("fastboost_root"):
        sys.path.insert(0, task["fastboost_root"])
    say = log
    if task["key"] == "compile":
        result = _compile_task(task)
    else:
        d = Path(task["data_dir"])
        data = {k: np.load(d / f"{k}.npy") for k in ("Xtr", "ytr", "Xte", "yte")}
        base = current_rss_mb()
        result = run_task(task, data, say)
        result["base_rss_mb"] = base
        result["self_peak_rss_mb"] = self_peak_rss_mb()
    Path(task["result_path"]).write_text(json.dumps(result))


def _compile_task(task):
    """In a fresh process: import fastboost, first fit + predict of each algorithm (compile or cache
    load), then the same again (already compiled)."""
    with _Timer() as ti:
        import fastboost  # noqa: F401
        from fastboost.datasets import make_twonorm
    X, y = make_twonorm(2000, n_features=task["d"], random_state=0)
    out = {"key": "compile", "import_s": ti.s, "first": {}, "second": {}}
    for phase in ("first", "second"):
        for algo in task["algorithms"]:
            cls, _ = fastboost_class(algo)
            if cls is None:
                continue
            with _Timer() as t:
                cls(n_estimators=5, max_bins=task["bins"], n_jobs=task["threads"]).fit(X, y).predict(X)
            out[phase][algo] = t.s
    out["first_total_s"] = sum(out["first"].values())
    out["second_total_s"] = sum(out["second"].values())
    return out


def _run_child(task, tmp, env_extra=None):
    """Run ``task`` in a fresh interpreter: (result or None, exit code, peak RSS MB, wall s, other processes' cores)."""
    task_path = Path(tmp) / f"task-{task['key']}-{time.monotonic_ns()}.json"
    task["result_path"] = str(task_path.with_suffix(".result.json"))
    task_path.write_text(json.dumps(task))
    env = {**os.environ, "OMP_NUM_THREADS": str(task.get("threads", default_threads())),
           "PYTHONUNBUFFERED": "1"}
    env.update(env_extra or {})
    cmd = [sys.executable, "-c",
           f"import runpy, sys; runpy.run_path(sys.argv[1], run_name={WORKER_RUN_NAME!r})",
           str(Path(__file__).resolve()), str(task_path)]
    busy0, t0 = _system_busy_cpu(), time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=tmp, env=env, stdin=subprocess.DEVNULL)
    rusage_peak = cpu = None
    try:
        if hasattr(os, "wait4"):
            while True:
                try:
                    _, status, ru = os.wait4(proc.pid, 0)
                    break
                except InterruptedError:
                    continue
            proc.returncode = os.waitstatus_to_exitcode(status)
            rusage_peak = _maxrss_to_mb(ru.ru_maxrss)  # on Linux at least the parent's RSS at fork
            cpu = ru.ru_utime + ru.ru_stime
        else:
            proc.wait()
    except BaseException:
        proc.kill()
        raise
    wall = time.perf_counter() - t0
    busy1 = _system_busy_cpu()
    other = None
    if busy0 is not None and cpu is not None and wall > 0:
        other = max(0.0, (busy1 - busy0) - cpu) / wall
    rp = Path(task["result_path"])
    result = json.loads(rp.read_text()) if proc.returncode == 0 and rp.exists() else None
    peak = None
    if result is not None:
        result["rusage_maxrss_mb"] = rusage_peak
        peak = result.get("self_peak_rss_mb") or rusage_peak
    return result, proc.returncode, peak, wall, other


# ================================================================================== profile
def profile_kernels(Xtr, ytr, args, per_round_s=None, say=log):
    """Time the kernels one round of fastboost's loop calls, one by one, on this data (in this process).

    Follows ``fastboost._kernels.loop._boost`` for a multiplicative-update algorithm (AdaBoost's
    rule by default, the first of ``--algorithms`` if it is one): transform, histograms, best split
    per feature, apply the stump, update the weights. These are internal signatures of this
    fastboost version; a {"error": ...} dict comes back when they changed.
    """
    try:
        import numba

        from fastboost._algorithms import RULES
        from fastboost._binning import BinMapper
        from fastboost._config import n_threads
        from fastboost._kernels.histogram import build_histograms, n_feature_groups
        from fastboost._kernels.split import best_split_per_feature_q, kth_best_feature
        from fastboost._kernels.update import apply_stump, n_blocks, update_weights
        from fastboost._types import (
            CRITERIA,
            N_HIST_FIELDS,
            N_SUMS,
            SUM_WI,
            SUM_WJ,
            Y_DTYPE,
        )
    except Exception as exc:  # depends on concurrent kernel work
        return {"error": f"kernels not importable (internal API changed?): {exc!r}"}

    n, d = Xtr.shape
    algo = next((a for a in args.algorithms if a in RULES and not RULES[a].additive), "adaboost")
    out = {"n": n, "d": d, "threads": args.threads, "algorithm": algo, "kernels": {}}

    def timeit(name, fn, reps, nbytes=None):
        fn()
        samples = []
        for _ in range(reps):
            t = time.perf_counter()
            fn()
            samples.append(time.perf_counter() - t)
        med = statistics.median(samples)
        out["kernels"][name] = {"median_s": med, "min_s": min(samples), "reps": reps}
        if nbytes:
            out["kernels"][name]["gb_per_s"] = nbytes / med / 1e9
            out["kernels"][name]["bytes"] = nbytes
        say(f"profile {name}: {1e3 * med:.3f} ms")
        return med

    try:
        with n_threads(args.threads):
            mapper = BinMapper(args.bins, random_state=args.seed)
            with _Timer() as tb:
                codes = mapper.fit_transform(Xtr)
            out["binning_s"] = tb.s
            y = ytr.astype(Y_DTYPE)
            ylab = y.copy()
            p = np.full(n, 1.0 / n)
            w = p.copy()
            u = np.empty(n)
            q = np.empty(n)
            hist = np.empty((d, mapper.missing_code + 1, N_HIST_FIELDS))
            yh = np.empty(n, np.int8)
            block_sums = np.empty((n_blocks(n), 4))
            sums = np.zeros(N_SUMS)
            value = np.empty(d)
            fbin = np.empty(d, np.int64)
            fml = np.empty(d, np.int64)
            params = np.array([0.5, 0.0, 0.0, 0.0])
            rule = RULES[algo]
            reps = 15
            t_tr = timeit(f"transform ({algo})", lambda: rule.transform(w, p, y, u, q, ylab, params), reps)
            groups = n_feature_groups(d, args.threads)
            t_h = timeit("build_histograms (GB/s of codes)", lambda: build_histograms(codes, ylab, u, hist, groups),
                         reps, n * d)
            crit = CRITERIA["error"]
            t_s = timeit("best split per feature + best feature", lambda: (
                best_split_per_feature_q(hist, hist, mapper.n_value_bins_, mapper.missing_code, crit, 0.0,
                                         value, fbin, fml),
                kth_best_feature(value, 1.0, 1)), reps)
            f = max(int(kth_best_feature(value, 1.0, 1)), 0)
            k, ml = int(fbin[f]), int(fml[f])
            t_a = timeit("apply_stump", lambda: apply_stump(codes[f], k, ml, mapper.missing_code, -1, 1, ylab, u, w,
                                                             yh, block_sums, sums), reps, n * (1 + 1 + 8 + 8 + 1))
            wi, wj = float(sums[SUM_WI]), float(sums[SUM_WJ])
            alpha = 0.5 * np.log(wi / wj) if wi > 0 and wj > 0 else 1.0
            wsave = w.copy()

            def upd():
                update_weights(w, p, yh, alpha, wi, wj, block_sums)
                w[:] = wsave  # same weights every call; the copy is timed apart and subtracted

            t_u = timeit("update_weights + restore copy", upd, reps)
            t_c = timeit("restore copy alone", lambda: w.__setitem__(slice(None), wsave), reps)
            t_upd = max(t_u - t_c, 0.0)
            out["kernels"]["update_weights"] = {"median_s": t_upd, "derived": "previous two subtracted",
                                                "gb_per_s": n * (8 + 8 + 1 + 8) / max(t_upd, 1e-12) / 1e9}
            total = t_tr + t_h + t_s + t_a + t_upd
            out["sum_of_kernels_s"] = total
            out["numba_threading_layer"] = numba.threading_layer()
    except Exception as exc:  # depends on concurrent kernel work
        return {**out, "error": f"profile failed (internal API changed?): {exc!r}"}
    if per_round_s:
        out["per_round_s"] = per_round_s
        out["other_s"] = per_round_s - total
    return out


def format_profile(prof):
    if "error" in prof:
        return f"kernel profile: {prof['error']}"
    pr = prof.get("per_round_s")
    reps = next(iter(prof["kernels"].values()))["reps"]
    lines = [(f"kernel profile (fastboost internals, {fmt_rows(prof['n'])} x {prof['d']}, {prof['threads']} threads, "
              f"median of {reps} calls each; binning {prof['binning_s']:.3f} s):")]
    ref = pr or prof["sum_of_kernels_s"]
    for name, k in prof["kernels"].items():
        if "restore copy" in name:
            continue
        bw = f"  {k['gb_per_s']:.1f} GB/s" if "gb_per_s" in k else ""
        lines.append(f"  {name:<40}{1e3 * k['median_s']:>10.3f} ms {100 * k['median_s'] / ref:>6.1f}%{bw}")
    lines.append(f"  {'sum of kernels':<40}{1e3 * prof['sum_of_kernels_s']:>10.3f} ms "
                 f"{100 * prof['sum_of_kernels_s'] / ref:>6.1f}%")
    if pr:
        lines.append(f"  {'fastboost per round (full loop)':<40}{1e3 * pr:>10.3f} ms  100.0%")
        lines.append(f"  {'rest (loop, class sums, records)':<40}{1e3 * prof['other_s']:>10.3f} ms "
                     f"{100 * prof['other_s'] / pr:>6.1f}%")
    return "\n".join(lines)


# ================================================================================== report
def _git_state():
    try:
        import fastboost

        root = Path(fastboost.__file__).resolve().parent.parent

        def run(*cmd):
            return subprocess.run(["git", "-C", str(root), *cmd], capture_output=True, text=True,
                                  timeout=30, check=True).stdout.strip()

        commit = run("rev-parse", "HEAD")
        dirty = run("status", "--porcelain", "--", "fastboost")
        return {"commit": commit, "fastboost_dirty": bool(dirty)}
    except Exception:
        return None


def machine_info(threads):
    import numba
    import sklearn

    import fastboost

    versions = {"fastboost": fastboost.__version__, "numpy": np.__version__, "numba": numba.__version__,
                "scikit-learn": sklearn.__version__}
    for mod in ("lightgbm", "xgboost"):
        m = sys.modules.get(mod)
        if m is not None:
            versions[mod] = getattr(m, "__version__", "?")
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.lower().startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    ram = None
    try:
        import psutil

        ram = round(psutil.virtual_memory().total / 2 ** 30, 1)
    except Exception:
        pass
    return {"cpu_model": cpu, "logical_cores": os.cpu_count(), "cores_available": default_threads(),
            "total_ram_gib": ram, "platform": platform.platform(), "python": platform.python_version(),
            "numba_pool_threads": numba.config.NUMBA_NUM_THREADS, "benchmark_threads": threads,
            "versions": versions, "fastboost_path": str(Path(fastboost.__file__).parent),
            "git": _git_state()}


def _ms(s):
    if s is None:
        return "-"
    ms = 1e3 * s
    return f"{ms:.3f}" if ms < 10 else f"{ms:.2f}" if ms < 100 else f"{ms:.1f}" if ms < 10_000 else f"{ms:.0f}"


def _ratio(x):
    return f"{x:.2f}×" if x < 10 else f"{x:.1f}×" if x < 100 else f"{x:.0f}×"


def format_table(payload):
    cfg, data = payload["config"], payload["data"]
    res = [r for r in payload["results"] if r["status"] == "ok"]
    ref = next((r for r in res if r["library"] == "fastboost"), None)
    lines = []
    lines.append(f"fastboost bench: {data['name']} {fmt_rows(data['n_train'])} train + {fmt_rows(data['n_test'])} "
                 f"test rows x {data['n_features']} features ({data['dtype']}); depth {cfg['depth']}, "
                 f"{cfg['rounds']} rounds, {cfg['bins']} bins, {cfg['threads']} threads; "
                 f"median of {cfg['repeat']} repeats")
    m = payload["machine"]
    lines.append(f"machine: {m['cpu_model']}, {m['cores_available']} cores available, {m['total_ram_gib']} GiB; "
                 + ", ".join(f"{k} {v}" for k, v in m["versions"].items()))
    lw = max([len("library")] + [len(r["label"]) for r in res]) + 2
    head = (f"{'library':<{lw}}{'prep (s)':>9}{'rounds':>8}{'train (s)':>11}{'per round (ms)':>16}"
            f"{'vs fastboost':>14}{'test acc':>10}{'predict (ms)':>14}{'peak RSS MB':>13}{'base':>6}{'fit +MB':>9}"
            f"{'load':>6}  notes")
    loads = [r["other_load_cores"] for r in res if r.get("other_load_cores") is not None]
    worst = max(loads + [payload.get("other_load_at_start_cores") or 0.0])
    if worst > 0.25:
        lines.append(f"WARNING: other processes used up to {worst:.1f} of {m['logical_cores']} cores during this run "
                     "('load' column): multi-threaded timings on a busy machine are slow and noisy; re-run on an "
                     "idle machine before quoting them")
    lines += ["", head, "-" * len(head)]
    for r in res:
        rounds = str(r["rounds_run"])
        prep = "-" if r["prep_s"] is None else f"{r['prep_s']:.3f}"
        vs = _ratio(r["per_round_s"] / ref["per_round_s"]) if ref else "-"
        rss = "-" if r.get("peak_rss_mb") is None else f"{r['peak_rss_mb']:.0f}"
        base = "-" if r.get("base_rss_mb") is None else f"{r['base_rss_mb']:.0f}"
        load = "-" if r.get("other_load_cores") is None else f"{r['other_load_cores']:.1f}"
        notes = r.get("note", "")
        pr = "-" if r.get("predict_s") is None else _ms(r["predict_s"])
        fit_mb = "-" if r.get("fit_peak_over_start_mb") is None else f"{r['fit_peak_over_start_mb']:.0f}"
        lines.append(f"{r['label']:<{lw}}{prep:>9}{rounds:>8}{r['train_s']:>11.3f}{_ms(r['per_round_s']):>16}"
                     f"{vs:>14}{100 * r['test_accuracy']:>9.2f}%{pr:>14}{rss:>13}{base:>6}{fit_mb:>9}{load:>6}  {notes}")
    lines.append("")
    if ref:
        parts = [f"{r['short']}/{ref['short']} per-round = {_ratio(r['per_round_s'] / ref['per_round_s'])}"
                 + (" (extrapolated)" if r["extrapolated"] else "")
                 for r in res if r is not ref]
        if parts:
            lines.append("ratios (same run): " + "; ".join(parts))
        parts = []
        for r in res:
            if r is ref or r["prep_s"] is None or not ref["prep_s"]:
                continue
            parts.append(f"{r['short']}/{ref['short']} prep = {_ratio(r['prep_s'] / ref['prep_s'])}")
        if parts:
            lines.append("prep ratios: " + "; ".join(parts))
        parts = []
        for r in res:
            if r is ref or r["prep_s"] is None or ref["prep_s"] is None or r["extrapolated"]:
                continue
            whole = r["prep_s"] + r["per_round_s"] * r["rounds_requested"]
            mine = ref["prep_s"] + ref["per_round_s"] * ref["rounds_requested"]
            parts.append(f"{r['short']}/{ref['short']} = {_ratio(whole / mine)}")
        if parts:
            lines.append(f"whole fit (prep + {ref['rounds_requested']} rounds) ratios: " + "; ".join(parts))
        parts = [f"{r['short']}/{ref['short']} = {_ratio(r['predict_s'] / ref['predict_s'])}" for r in res
                 if r is not ref and r.get("predict_s") and ref.get("predict_s")]
        if parts:
            lines.append(f"predict ({fmt_rows(data['n_test'])} test rows) ratios: " + "; ".join(parts))
    else:
        lines.append("ratios: none (no fastboost model ran in this configuration)")
    for r in res:
        if "floor_multiple" in r:
            bw = r["bandwidth"]
            lines.append(f"streaming floor ({r['short']}'s process): codes {bw['bytes'] / 1e6:.1f} MB / "
                         f"{bw['gb_per_s']:.1f} GB/s (median of {bw['runs']} timings before and after the fits) "
                         f"= {_ms(r['floor_s'])} ms; per round = {r['floor_multiple']:.1f}× floor "
                         f"(best {bw['best_gb_per_s']:.1f} GB/s: {r['best_floor_multiple']:.1f}× floor)")
    comp = payload.get("compile")
    if comp and comp.get("cold"):
        c, w = comp["cold"], comp.get("warm") or {}

        def first_use(x):
            if not x:
                return "failed"
            return (f"{x['import_s'] + x['first_total_s']:.2f} s (import {x['import_s']:.2f} + "
                    f"first fits {x['first_total_s']:.2f})")

        lines.append(f"fastboost first use in a fresh process (import, then fit + predict 2000 x "
                     f"{data['n_features']}, 5 rounds, {' + '.join(c['first'])}): empty numba cache "
                     f"{first_use(c)}; warm cache {first_use(w)}; the same fits once compiled "
                     f"{c['second_total_s']:.3f} s")
    elif comp and comp.get("message"):
        lines.append(f"fastboost first use: {comp['message']}")
    for s in payload["skipped"]:
        lines.append(f"skipped {s['label']}: {s['message']}")
    lines.append("notes: per round = training time (preparation excluded) / rounds run, median over repeats; "
                 "prep = binning / dataset construction; 'load' = cores used by other processes meanwhile")
    lines.append(f"  {GBM_NOTE}")
    if any(r["key"] == "sklearn-hgb" for r in res):
        lines.append("  sklearn HGB prep = the binning time HGB prints with verbose=1; its train = fit wall time - "
                     "that (so it includes HGB's input validation)")
    lines.append(f"  peak RSS: {payload['rss_method']}")
    lines.append("  fit +MB: the peak RSS during the timed fits (preparation included) over the RSS just before them "
                 "(data loaded, library imported and warmed up): the memory fitting needs beyond its input")
    if ref and ref.get("fit_peak_over_start_mb") is not None:
        codes_mb = data["n_train"] * data["n_features"] / 2 ** 20
        lines.append(f"  fastboost's fit +MB {ref['fit_peak_over_start_mb']:.0f} vs 1.5 x its uint8 codes + 100 MB = "
                     f"{1.5 * codes_mb + 100:.0f} MB")
    return "\n".join(lines)


def write_plot(payload, path):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception:
        return None
    res = [r for r in payload["results"] if r["status"] == "ok"]
    if not res:
        return None
    labels = [r["short"] + (" *" if r["extrapolated"] else "") for r in res]
    fig, axes = plt.subplots(1, 2, figsize=(12, 0.6 * len(res) + 2.0))
    per = [1e3 * r["per_round_s"] for r in res]
    colors = ["tab:red" if r["library"] == "fastboost" else "tab:blue" for r in res]
    ax = axes[0]
    ax.barh(labels, per, color=colors)
    ax.set_xscale("log")
    ax.set_xlim(10 ** np.floor(np.log10(min(per))), 10 ** np.ceil(np.log10(max(per) * 3)))
    ax.set_xlabel("training time per round (ms, log scale)")
    for i, v in enumerate(per):
        ax.text(v, i, f" {v:.3g}", va="center", fontsize=8)
    ax.invert_yaxis()
    ax = axes[1]
    prep = [r["prep_s"] or 0.0 for r in res]
    ax.barh(labels, prep, color=colors)
    ax.set_xlim(0, max(prep + [1e-3]) * 1.25)
    ax.set_xlabel("preparation / binning (s)")
    for i, (v, r) in enumerate(zip(prep, res)):
        ax.text(v, i, " none" if r["prep_s"] is None else f" {v:.3g}", va="center", fontsize=8)
    ax.invert_yaxis()
    data, cfg = payload["data"], payload["config"]
    fig.suptitle(f"{data['name']} {fmt_rows(data['n_train'])} x {data['n_features']} ({data['dtype']}), "
                 f"depth {cfg['depth']}, {cfg['rounds']} rounds, {cfg['bins']} bins, {cfg['threads']} threads"
                 + ("   (* extrapolated)" if any(r["extrapolated"] for r in res) else ""), fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return str(path)


# ================================================================================== main
def add_arguments(p):
    g = p.add_argument_group("data")
    g.add_argument("--data", metavar="FILE", help=".npy, .csv or .parquet file with the label in the last column "
                   "(or --target); default: generated twonorm")
    g.add_argument("--target", help="label column name (csv/parquet) or index (npy)")
    g.add_argument("--n", type=int, default=None, help="training rows (twonorm default 100000; file: cap)")
    g.add_argument("--n-test", type=int, default=None,
                   help="held-out rows (twonorm: min(n, 100000), another seed; file: 20%%)")
    g.add_argument("--d", type=int, default=20, help="twonorm features (default 20)")
    g.add_argument("--dtype", choices=["float32", "float64"], default="float64")
    g.add_argument("--seed", type=int, default=0)
    g = p.add_argument_group("models")
    g.add_argument("--depth", type=int, default=1, help="tree depth for every library (1: stumps)")
    g.add_argument("--rounds", type=int, default=100, help="boosting rounds (default 100)")
    g.add_argument("--bins", type=int, default=255, help="bins per feature for every library (2..255)")
    g.add_argument("--threads", type=int, default=default_threads(), help="threads for every library "
                   "(default: cores available); scikit-learn AdaBoost is single-threaded")
    g.add_argument("--algorithms", nargs="+", default=["adaboost", "vadaboost"],
                   help="fastboost algorithms, space or comma separated (known: "
                        f"{', '.join(FASTBOOST_ALGORITHMS)}); 'none' for no fastboost")
    g.add_argument("--competitors", nargs="+", default=["all"],
                   help=f"any of {', '.join(COMPETITORS)}, 'all' (default) or 'none'")
    g = p.add_argument_group("measurement")
    g.add_argument("--repeat", type=int, default=3, help="fits per library; medians are reported (default 3)")
    g.add_argument("--slow-rows", type=int, default=200_000,
                   help="from this many rows scikit-learn AdaBoost runs --slow-rounds rounds, extrapolated")
    g.add_argument("--slow-rounds", type=int, default=5)
    g.add_argument("--no-subprocess", action="store_true",
                   help="fit everything in this process: no peak RSS, no compile-time measurement")
    g.add_argument("--no-compile-time", action="store_true", help="skip the cold/warm numba first-call runs")
    g.add_argument("--profile", action="store_true",
                   help="also time fastboost's per-round kernels one by one (internal API)")
    g = p.add_argument_group("output")
    g.add_argument("--out", help="JSON path (default bench_results/bench-<timestamp>.json)")
    g.add_argument("--no-plot", action="store_true", help="no PNG chart even with matplotlib")
    return p


def _split_names(values):
    return [v.strip().lower() for item in values for v in item.split(",") if v.strip()]


def run(args, stdout=None):
    """Run the benchmark for parsed ``args``; print the table; return the JSON payload (a dict)."""
    stdout = stdout or sys.stdout
    if not 2 <= args.bins <= 255:
        raise SystemExit("fastboost bench: --bins must be in [2, 255] (fastboost and HistGradientBoosting)")
    if args.depth < 1 or args.rounds < 1 or args.repeat < 1 or args.threads < 1:
        raise SystemExit("fastboost bench: --depth, --rounds, --repeat and --threads must be >= 1")
    args.algorithms = [a for a in _split_names(args.algorithms) if a != "none"]
    comps = _split_names(args.competitors)
    if "all" in comps:
        comps = list(COMPETITORS)
    comps = [c for c in comps if c != "none"]
    unknown = [c for c in comps if c not in COMPETITORS]
    if unknown:
        raise SystemExit(f"fastboost bench: unknown competitor(s) {unknown}; choose from {list(COMPETITORS)}")

    import fastboost

    stamp = time.strftime("%Y%m%d-%H%M%S")
    out = Path(args.out) if args.out else Path("bench_results") / f"bench-{stamp}.json"
    log(f"fastboost bench: fastboost {fastboost.__version__} from {Path(fastboost.__file__).parent}")
    skipped, tasks = [], []
    base = {"rounds": args.rounds, "depth": args.depth, "bins": args.bins, "threads": args.threads,
            "repeat": args.repeat, "seed": args.seed}
    for algo in args.algorithms:
        cls, reason = fastboost_class(algo)
        label = f"fastboost {cls.__name__}" if cls else f"fastboost {algo}"
        if cls is None:
            skipped.append({"key": f"fastboost-{algo}", "label": label, "message": reason})
            log(f"skipping {label}: {reason}")
            continue
        if args.depth > 1 and "max_depth" not in cls().get_params():
            msg = (f"{cls.__name__} has no max_depth parameter: fastboost fits stumps only (depth 1) for now; "
                   f"trees are being built in another issue. The competitors still run at depth {args.depth}.")
            skipped.append({"key": f"fastboost-{algo}", "label": label, "message": msg})
            log(f"skipping {label}: {msg}")
            continue
        tasks.append({**base, "key": f"fastboost-{algo}", "library": "fastboost", "algorithm": algo,
                      "label": label, "short": f"fastboost {algo}"})
    for key in comps:
        label, module, short = COMPETITORS[key]
        try:
            importlib.import_module(module)
        except Exception as exc:
            msg = f"not installed or not importable ({type(exc).__name__}: {exc}); pip install 'fastboost[bench]'"
            skipped.append({"key": key, "label": label, "message": msg})
            log(f"skipping {label}: {msg}")
            continue
        lab = label + (f" (depth {args.depth})" if args.depth > 1 else " (stumps)")
        tasks.append({**base, "key": key, "library": key, "label": lab, "short": short})

    load_start = _other_load(1.0)
    loadavg = list(os.getloadavg()) if hasattr(os, "getloadavg") else None
    if load_start is not None:
        log(f"other processes use {load_start:.2f} cores now (load average {loadavg[0]:.2f})")
    log("preparing data")
    Xtr, ytr, Xte, yte, data_desc = load_data(args)
    n = Xtr.shape[0]
    for t in tasks:
        if t["key"] == "sklearn-adaboost" and n >= args.slow_rows:
            t["fit_rounds"] = min(args.rounds, args.slow_rounds)
    log(f"data: {data_desc['name']} {fmt_rows(n)} x {Xtr.shape[1]} train, {fmt_rows(Xte.shape[0])} test, "
        f"{data_desc['dtype']}")

    compile_info = None
    results = []
    fb_root = str(Path(fastboost.__file__).resolve().parent.parent)
    with tempfile.TemporaryDirectory(prefix="fastboost-bench-") as tmp:
        if args.no_subprocess:
            data = {"Xtr": Xtr, "ytr": ytr, "Xte": Xte, "yte": yte}
            compile_info = {"message": "not measured (--no-subprocess)"}
            for t in tasks:
                log(f"{t['label']}: {t['repeat']} repeats in this process")
                busy0, own0, t0 = _system_busy_cpu(), _own_cpu(), time.perf_counter()
                try:
                    res = run_task(t, data)
                except Exception as exc:
                    res = {"key": t["key"], "status": "failed", "message": f"{type(exc).__name__}: {exc}"}
                wall = time.perf_counter() - t0
                if busy0 is not None:
                    res["other_load_cores"] = max(0.0, (_system_busy_cpu() - busy0) - (_own_cpu() - own0)) / wall
                res["peak_rss_mb"] = None
                results.append((t, res))
        else:
            ddir = Path(tmp) / "data"
            ddir.mkdir()
            for k, a in (("Xtr", Xtr), ("ytr", ytr), ("Xte", Xte), ("yte", yte)):
                np.save(ddir / f"{k}.npy", a)
            profile_data = (Xtr, ytr) if args.profile else None
            del Xtr, Xte
            gc.collect()
            fb_tasks = [t for t in tasks if t["library"] == "fastboost"]
            if fb_tasks and not args.no_compile_time:
                ctask = {"key": "compile", "d": data_desc["n_features"], "bins": args.bins,
                         "threads": args.threads, "algorithms": [t["algorithm"] for t in fb_tasks],
                         "fastboost_root": fb_root, "t_start_epoch": time.time() - (time.perf_counter() - T_START)}
                cache = Path(tmp) / "numba-cache"
                compile_info = {"method": "fresh process, NUMBA_CACHE_DIR=<empty temporary dir> (cold), then a "
                                          "second fresh process on the filled cache (warm); first fit + predict "
                                          "of each algorithm on 2000 rows, 5 rounds"}
                for phase in ("cold", "warm"):
                    log(f"fastboost first-call time, {phase} numba cache (fresh process)")
                    r, rc, _, wall, _ = _run_child(dict(ctask), tmp, {"NUMBA_CACHE_DIR": str(cache)})
                    compile_info[phase] = r
                    if r:
                        log(f"  import {r['import_s']:.2f} s, first fits {r['first_total_s']:.2f} s, "
                            f"second fits {r['second_total_s']:.3f} s (process wall {wall:.1f} s)")
                    else:
                        log(f"  failed (exit code {rc})")
            elif fb_tasks:
                compile_info = {"message": "not measured (--no-compile-time)"}
            for t in tasks:
                log(f"{t['label']}: {t['repeat']} repeats in a child process")
                child = {**t, "data_dir": str(ddir), "fastboost_root": fb_root if t["library"] == "fastboost" else None,
                         "t_start_epoch": time.time() - (time.perf_counter() - T_START)}
                res, rc, peak, wall, other = _run_child(child, tmp)
                if res is None:
                    res = {"key": t["key"], "status": "failed", "message": f"child process exited with code {rc}"}
                res["peak_rss_mb"] = peak
                res["other_load_cores"] = other
                res["process_wall_s"] = wall
                results.append((t, res))
            if profile_data is not None:
                Xtr, ytr = profile_data
    merged = []
    for t, res in results:
        r = {**{k: t[k] for k in ("key", "library", "label", "short")}, **res}
        if r["status"] != "ok":
            skipped.append({"key": r["key"], "label": r["label"], "message": r.get("message", r["status"])})
            log(f"{r['label']}: {r['status']}: {r.get('message')}")
        merged.append(r)
    profile = None
    if args.profile:
        fb = next((r for r in merged if r["library"] == "fastboost" and r["status"] == "ok"), None)
        log("profiling fastboost's kernels in this process")
        profile = profile_kernels(Xtr, ytr, args, fb["per_round_s"] if fb else None)

    payload = {
        "benchmark": "fastboost bench",
        "schema": 1,
        "timestamp_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "argv": sys.argv,
        "config": {"n": args.n, "n_test": args.n_test, "d": args.d, "depth": args.depth, "rounds": args.rounds,
                   "bins": args.bins, "threads": args.threads, "repeat": args.repeat, "dtype": args.dtype,
                   "seed": args.seed, "algorithms": args.algorithms, "competitors": comps,
                   "slow_rows": args.slow_rows, "slow_rounds": args.slow_rounds,
                   "subprocess": not args.no_subprocess, "data": args.data, "target": args.target},
        "data": data_desc,
        "machine": machine_info(args.threads),
        "other_load_at_start_cores": load_start,
        "loadavg_at_start": loadavg,
        "rss_method": RSS_METHOD if not args.no_subprocess else "not measured (--no-subprocess)",
        "compile": compile_info,
        "results": merged,
        "skipped": skipped,
        "profile": profile,
        "notes": [GBM_NOTE],
    }
    table = format_table(payload)
    if profile:
        table += "\n" + format_profile(profile)
    payload["table"] = table
    print(table, file=stdout, flush=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    png = None
    if not args.no_plot:
        try:
            png = write_plot(payload, out.with_suffix(".png"))
        except Exception as exc:  # a chart must never lose the results
            log(f"no chart: {exc!r}")
    payload["plot"] = png
    out.write_text(json.dumps(payload, indent=2, default=str))
    print(f"wrote {out}" + (f" and {png}" if png else ""), file=stdout, flush=True)
    payload["json_path"] = str(out)
    return payload


def main(argv=None):
    parser = argparse.ArgumentParser(prog="fastboost bench", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(parser)
    run(parser.parse_args(argv))
    return 0


if __name__ == WORKER_RUN_NAME:
    _worker_main(sys.argv[2])
elif __name__ == "__main__":
    sys.exit(main())
