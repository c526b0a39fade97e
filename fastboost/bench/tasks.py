"""The benchmark tasks of ``fastboost bench``: data loading, one runner function per library (the
``RUNNERS`` table that ``run_task`` dispatches through), the child processes that run each task,
and fastboost's first-call (compile) task.

Imports only the standard library, NumPy and its sibling ``measure`` at the top (each library
inside its runner): the child processes load this module by path (see ``_worker.py``), so the
children that fit a competitor never import fastboost.
"""
import contextlib
import gc
import io
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from . import measure
from .measure import (
    _FitMemory,
    _maxrss_to_mb,
    _pool_probes,
    _system_busy_cpu,
    _Timer,
    bandwidth_probe,
    current_rss_mb,
    default_threads,
    log,
    scatter_probe,
    self_peak_rss_mb,
)

#: ``__name__`` of the child processes' entry module ``_worker.py`` (run by path, see ``_run_child``).
WORKER_RUN_NAME = "__fastboost_bench_worker__"
WORKER_PATH = Path(__file__).resolve().with_name("_worker.py")

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
    """(X float64, y, description) from a data file, read as ``fastboost train`` reads it (the label: the
    ``target`` column, by default the last); a problem with the file ends the command with one line."""
    from fastboost._tables import read_table

    path = Path(path)
    desc = {"name": path.name, "source": str(path.resolve())}
    try:
        X, y, _ = read_table(path, -1 if target is None else target)
    except ValueError as e:
        raise SystemExit(f"fastboost bench: error: {e}") from None
    desc["target"] = str(target) if target is not None else "the last column"
    return np.asarray(X, dtype=np.float64), y, desc


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


class _Skipped(Exception):
    """Raised by a runner when its library cannot run this task; the message says why."""


def run_fastboost(task, data, res, record, say):
    """A fastboost estimator (``task["algorithm"]``), with the bandwidth probe before and after its fits."""
    import numba

    from fastboost._config import resolve_n_jobs

    Xtr, ytr, Xte = data["Xtr"], data["ytr"], data["Xte"]
    depth, bins, threads, fit_rounds = task["depth"], task["bins"], task["threads"], res["rounds_fitted"]
    label = task["label"]
    cls, reason = fastboost_class(task["algorithm"])
    if cls is None:
        raise _Skipped(reason)
    params = {"n_estimators": fit_rounds, "max_bins": bins, "n_jobs": threads, "random_state": task["seed"]}
    est = cls(**params)
    if depth > 1:
        if "max_depth" not in est.get_params():
            raise _Skipped(f"{cls.__name__} has no max_depth parameter: fastboost fits stumps only "
                           f"(depth 1) for now; trees are being built in another issue")
        params["max_depth"] = depth
    if task.get("trim") is not None:
        if "weight_trim_rate" not in est.get_params():
            raise _Skipped(f"{cls.__name__} has no weight_trim_rate parameter (no weight trimming)")
        params["weight_trim_rate"] = task["trim"]
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
    notes = []
    if n_run < fit_rounds:
        notes.append(f"stopped early after {n_run} of {fit_rounds} rounds")
    if task.get("trim") is not None:
        res["rows_read_share"] = float(est.rounds_["n_seen"].mean() / Xtr.shape[0])
        notes.append(f"learner read {100 * res['rows_read_share']:.1f} % of the rows per round")
    if notes:
        res["note"] = "; ".join(notes)
    res["prep_what"] = "BinMapper fit_transform (bin_time_)"
    if probes:
        say(f"{label}: streaming-bandwidth probe again (after the fits)")
        probes.append(bandwidth_probe(probe_bytes, threads))
        res["bandwidth"] = _pool_probes(probes)
        say(f"{label}: scatter-add probe")
        res["scatter"] = scatter_probe(probe_bytes, threads)
    try:
        res["numba_threading_layer"] = numba.threading_layer()
    except ValueError:
        pass
    from fastboost._config import wait_policy

    res["wait_policy"] = wait_policy()
    pred, res["predict_s"] = _time_predict(lambda: est.predict(Xte))
    return pred


def run_sklearn_adaboost(task, data, res, record, say):
    """scikit-learn's AdaBoostClassifier on decision trees: one thread, no binning."""
    from sklearn.ensemble import AdaBoostClassifier
    from sklearn.tree import DecisionTreeClassifier

    Xtr, ytr, Xte = data["Xtr"], data["ytr"], data["Xte"]
    depth, fit_rounds = task["depth"], res["rounds_fitted"]

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
    return pred


def run_lightgbm(task, data, res, record, say):
    """LightGBM's ``lightgbm.train``; preparation = ``Dataset(...).construct()``."""
    import lightgbm as lgb

    Xtr, ytr, Xte = data["Xtr"], data["ytr"], data["Xte"]
    depth, bins, threads, fit_rounds = task["depth"], task["bins"], task["threads"], res["rounds_fitted"]
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
    return pred


def run_xgboost(task, data, res, record, say):
    """XGBoost's ``xgboost.train`` with ``tree_method="hist"``; preparation = ``QuantileDMatrix``."""
    import xgboost as xgb

    Xtr, ytr, Xte = data["Xtr"], data["ytr"], data["Xte"]
    depth, bins, threads, fit_rounds = task["depth"], task["bins"], task["threads"], res["rounds_fitted"]
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
    return pred


def run_sklearn_hgb(task, data, res, record, say):
    """scikit-learn's HistGradientBoostingClassifier; preparation = the binning time of its verbose log."""
    from sklearn.ensemble import HistGradientBoostingClassifier
    from threadpoolctl import threadpool_limits

    Xtr, ytr, Xte = data["Xtr"], data["ytr"], data["Xte"]
    depth, bins, threads, fit_rounds = task["depth"], task["bins"], task["threads"], res["rounds_fitted"]
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
    return pred


#: Runner of each library: ``run_task`` calls ``RUNNERS[library](task, data, res, record, say)``, which
#: fills ``res`` (params, timed runs via ``record``, memory, predict time) and returns the predictions on
#: ``data["Xte"]``; it raises ``_Skipped`` when the library cannot run the task. The key of a task is its
#: library's key, "fastboost-<algorithm>" for fastboost.
RUNNERS = {
    "fastboost": run_fastboost,
    "sklearn-adaboost": run_sklearn_adaboost,
    "lightgbm": run_lightgbm,
    "xgboost": run_xgboost,
    "sklearn-hgb": run_sklearn_hgb,
}


def run_task(task, data, say=log):
    """Fit one library ``task["repeat"]`` times on ``data``; a JSON-able result dict.

    data: dict with Xtr, ytr (0/1), Xte, yte. The training data are never copied here.
    """
    kind = task["key"]
    runner = RUNNERS.get("fastboost" if kind.startswith("fastboost-") else kind)
    if runner is None:
        raise ValueError(f"unknown benchmark task {kind!r}")
    yte = data["yte"]
    rounds = task["rounds"]
    fit_rounds = task.get("fit_rounds") or rounds
    res = {"key": kind, "status": "ok", "rounds_requested": rounds, "rounds_fitted": fit_rounds,
           "extrapolated": fit_rounds < rounds, "runs": []}
    label = task["label"]

    def record(r, run):
        res["runs"].append(run)
        prep = "-" if run["prep_s"] is None else f"{run['prep_s']:.3f} s"
        say(f"{label} repeat {r + 1}/{task['repeat']}: prep {prep}, train {run['train_s']:.3f} s, "
            f"{run['rounds']} rounds, {1e3 * run['per_round_s']:.3f} ms/round")

    try:
        pred = runner(task, data, res, record, say)
    except _Skipped as exc:
        return {**res, "status": "skipped", "message": str(exc)}

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
    if "scatter" in res:  # one scatter-add per row and feature (the stump histogram's work)
        res["scatter_floor_s"] = res["scatter"]["s_per_update"] * bw["bytes"]
        res["scatter_floor_multiple"] = res["per_round_s"] / res["scatter_floor_s"]
    return res


# ================================================================================== child processes
def _worker_main(task_path):
    """Child process: load the data, record the RSS baseline, run one task, write the result."""
    task = json.loads(Path(task_path).read_text())
    measure.T_START = time.perf_counter() - (time.time() - task["t_start_epoch"])  # the parent's clock for log()
    if task.get("fastboost_root"):
        sys.path.insert(0, task["fastboost_root"])
    say = log
    if task["key"] == "compile":
        result = _compile_task(task)
    else:
        d = Path(task["data_dir"])
        data = {k: np.load(d / f"{k}.npy") for k in ("Xtr", "ytr", "Xte", "yte")}
        base = current_rss_mb()
        if task.get("mode") == "curve":  # fastboost bench --curve (curve.py imports this module)
            from .curve import run_curve_task

            result = run_curve_task(task, data, say)
        else:
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
           str(WORKER_PATH), str(task_path)]
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
