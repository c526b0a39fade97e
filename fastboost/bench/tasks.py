"""The per-round timing of ``fastboost bench``: its data, and ``run_task``, which times one library's fits
through the library's adapter (``adapters.py``) and fills the result the table and JSON record read.

Imports only the standard library, NumPy and its siblings ``measure`` and ``adapters`` at the top: the
child processes load this module by path (see ``_worker.py``), so the children that fit a competitor
never import fastboost.
"""
import gc
import statistics
from pathlib import Path

import numpy as np

from .adapters import Skipped, adapter_class, warm_slice
from .measure import (
    FitMemory,
    RoundStamps,
    Timer,
    bandwidth_probe,
    log,
    phase_round_seconds,
    pool_probes,
    scatter_probe,
)
from .options import BenchArgumentError


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
            raise BenchArgumentError(f"the target must have exactly 2 classes; {args.data} has {classes.shape[0]}")
        desc["classes"] = [str(c) for c in classes]
        rng = np.random.default_rng(args.seed)
        perm = rng.permutation(X.shape[0])
        n_test = max(1, X.shape[0] // 5) if args.n_test is None else args.n_test
        if n_test >= X.shape[0]:
            raise BenchArgumentError(f"--n-test {n_test} leaves no training rows")
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
    ``target`` column, by default the last); a problem with the file is a BenchArgumentError."""
    from fastboost._tables import read_table

    path = Path(path)
    desc = {"name": path.name, "source": str(path.resolve())}
    try:
        X, y, _ = read_table(path, -1 if target is None else target)
    except ValueError as e:
        raise BenchArgumentError(str(e)) from None
    desc["target"] = str(target) if target is not None else "the last column"
    return np.asarray(X, dtype=np.float64), y, desc


# ================================================================================== the timed fits
def _time_predict(predict, reps=3):
    """(predictions, median seconds of ``reps`` calls) of a fitted model on the test rows."""
    times = []
    for _ in range(reps):
        with Timer() as t:
            pred = predict()
        times.append(t.s)
    return pred, _median(times)


def _timed_fits(adapter, task, X, y, record):
    """``task["repeat"]`` timed fits: prepare, then train, each timed (the previous fit's input and model freed
    first), the end of each round stamped as ``--curve`` stamps it (``adapter.round_seconds``) for the early and
    late rounds' times (``measure.phase_round_seconds``; not for an extrapolated fit); ``record(r, run)`` gets each
    run. Returns (the last model, fit +MB)."""
    model = None
    extrapolated = (task.get("fit_rounds") or task["rounds"]) < task["rounds"]
    with FitMemory() as fit_mem:
        for r in range(task["repeat"]):
            model = dataset = None
            gc.collect()
            stamps = RoundStamps()
            stamps.start()
            with Timer() as tp:
                dataset = adapter.prepare(X, y)
            prep_clock = stamps.now()
            with Timer() as t:
                model = adapter.train(dataset, on_round=stamps.stamp)
            fit_clock = stamps.now()
            prep, train = adapter.fit_seconds(model, tp.s, t.s)
            n_run = adapter.rounds_run(model)
            early = late = None
            if not extrapolated and n_run >= 2:
                early, late = phase_round_seconds(adapter.round_seconds(model, stamps, prep_clock, fit_clock, {}))
            record(r, {"prep_s": prep, "train_s": train, "fit_wall_s": tp.s + t.s, "rounds": n_run,
                       "per_round_s": train / max(n_run, 1), "early_per_round_s": early,
                       "late_per_round_s": late})
    return model, fit_mem.mb


def _time_library(task, data, res, record, say):
    """One library's part of ``run_task``: fill ``res`` (params, timed runs via ``record``, memory, predict time;
    fastboost's bandwidth and scatter-add probes around its fits) and return the predictions on ``data["Xte"]``.
    Raises ``Skipped`` when the library cannot run the task."""
    Xtr, ytr, Xte = data["Xtr"], data["ytr"], data["Xte"]
    adapter = adapter_class(task)(task)
    res["params"], res["estimator"] = dict(adapter.params), adapter.estimator
    probe_bytes = Xtr.shape[0] * Xtr.shape[1]  # fastboost's uint8 codes
    probes = []
    if task["library"] == "fastboost" and task.get("probe", True):
        say(f"{task['label']}: streaming-bandwidth probe on {probe_bytes / 1e6:.1f} MB (before the fits)")
        probes.append(bandwidth_probe(probe_bytes, task["threads"]))
    with adapter.session():
        with Timer() as tw:
            adapter.warm_up(*warm_slice(Xtr, ytr))
        res["warmup_s"] = tw.s
        res["threads_used"] = adapter.threads_used()
        model, res["fit_peak_over_start_mb"] = _timed_fits(adapter, task, Xtr, ytr, record)
        adapter.describe_fits(res, model, Xtr.shape[0])
        if probes:
            say(f"{task['label']}: streaming-bandwidth probe again (after the fits)")
            probes.append(bandwidth_probe(probe_bytes, task["threads"]))
            res["bandwidth"] = pool_probes(probes)
            say(f"{task['label']}: scatter-add probe")
            res["scatter"] = scatter_probe(probe_bytes, task["threads"])
        res.update(adapter.runtime())
        pred, res["predict_s"] = _time_predict(lambda: adapter.predict(model, Xte), adapter.predict_reps)
    return pred


def run_task(task, data, say=log):
    """Fit one library ``task["repeat"]`` times on ``data``; a JSON-able result dict.

    data: dict with Xtr, ytr (0/1), Xte, yte. The training data are never copied here. The key of a task
    is its library's key, "fastboost-<algorithm>" for fastboost.
    """
    kind = task["key"]
    adapter_class(task)  # an unknown task is an error, not a skipped library
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
        pred = _time_library(task, data, res, record, say)
    except Skipped as exc:
        return {**res, "status": "skipped", "message": str(exc)}

    runs = res["runs"]
    res["prep_s"] = _median([r["prep_s"] for r in runs])
    res["train_s"] = _median([r["train_s"] for r in runs])
    res["per_round_s"] = _median([r["per_round_s"] for r in runs])
    res["per_round_min_s"] = min(r["per_round_s"] for r in runs)
    res["per_round_max_s"] = max(r["per_round_s"] for r in runs)
    for phase in ("early_per_round_s", "late_per_round_s"):  # (None unless every run has it)
        values = [r[phase] for r in runs]
        res[phase] = None if None in values else _median(values)
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
