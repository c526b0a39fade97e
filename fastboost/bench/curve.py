"""``fastboost bench --curve``: test error against training time, one fit per library and data set.

Each library is fitted once with many rounds; the time at which each round ends is taken inside
the fit, the test error after each round is computed after the fit (so evaluation never counts as
training time):

* fastboost: ``fit(..., callbacks=[...])`` is called between chunks of rounds (the first chunk 64
  rounds, then about 0.2 s each); the rounds between two calls get linearly interpolated times.
  The first round starts at the fit's input checks plus ``bin_time_``. Test errors come from
  ``staged_predict`` on the test rows;
* LightGBM and XGBoost: a training callback stamps the end of every iteration; test errors from
  the trees' raw scores on the test rows, one iteration at a time (LightGBM ``start_iteration``,
  XGBoost ``iteration_range`` on a test matrix with a zero ``base_margin``), summed;
* scikit-learn's HistGradientBoostingClassifier: ``verbose=2`` writes one line as each iteration
  ends; the lines go to a writer that stamps them. Test errors from ``staged_predict``;
* scikit-learn's AdaBoostClassifier: its decision trees are a subclass whose ``fit`` stamps the
  start of each round (the previous round's end); from ``--slow-rows`` rows on it runs at most
  ``--slow-rounds`` rounds (default 20 here), marked so. Test errors from ``staged_predict``.

Times count from the start of the library's own data preparation (fastboost's fit call, LightGBM's
``Dataset`` construction, XGBoost's ``QuantileDMatrix``, HistGradientBoosting's and AdaBoost's fit
call), after a small warm-up fit (JIT compilation, lazy initialisation). The time spent inside our
own callbacks is subtracted from the times after them.

Each library is fitted through its adapter (``adapters.py``, the same as the per-round timing's).
Imports only the standard library, NumPy and its sibling modules at the top (each library inside its
adapter): the child processes load this module by path (see ``_worker.py``).
"""
import gc
import sys
import tempfile
import time
from collections import namedtuple
from pathlib import Path

import numpy as np

from .adapters import (
    ADAPTERS,
    COMPETITORS,
    Skipped,
    adapter_class,
    algorithm_params,
    fastboost_class,
    unavailable,
    warm_slice,
)
from .measure import RoundStamps, interpolate_round_times, log, other_load
from .options import BenchArgumentError, check_algorithms, competitor_keys, split_names
from .processes import fastboost_root, run_task_here, run_task_in_child, save_data
from .report import machine_info, payload_header

#: A generated data set of the curve benchmark: the ``fastboost.datasets`` generator, its classes, the
#: tree depth and rounds used unless ``--depth`` / ``--rounds`` say otherwise, and whether ``--d`` applies.
CurveData = namedtuple("CurveData", "name generator n_classes depth rounds takes_d description")

CURVE_DATASETS = {
    "twonorm": CurveData("twonorm", "make_twonorm", 2, 1, 1000, True,
                         "Breiman's twonorm (Bayes error 2.28% at 20 features), decision stumps"),
    "ringnorm": CurveData("ringnorm", "make_ringnorm", 2, 3, 1000, True,
                          "Breiman's ringnorm (Bayes error about 1.49% at 20 features), depth-3 trees"),
    "waveform": CurveData("waveform", "make_waveform", 3, 1, 1000, False,
                          "Breiman's waveform, 3 classes, 21 features (Bayes error about 13.2%), decision stumps"),
}
DEFAULT_N = 1_000_000
DEFAULT_N_TEST = 100_000
#: test error within this of a library's own best counts as "reached" (0.1 points)
DEFAULT_WITHIN = 0.001
#: rounds scikit-learn's AdaBoost runs from ``--slow-rows`` rows on, unless ``--slow-rounds`` says otherwise
DEFAULT_SLOW_ROUNDS = 20
DEFAULT_GBM_LEARNING_RATE = 0.1
#: error comparisons allow this much floating-point slack (errors are multiples of 1 / n_test)
_EPS = 1e-9

#: One library's curve: the rounds 1..n, the seconds at which each ended, the test error after each.
Curve = namedtuple("Curve", "rounds seconds test_error")


class CurveError(BenchArgumentError):
    """A bad ``--curve`` argument: ``fastboost bench`` prints it as one line and exits with status 2."""


# ================================================================================== curve arithmetic
def time_to_within(curve, within=DEFAULT_WITHIN):
    """The first point at which ``curve`` is within ``within`` of its own lowest test error.

    Returns a dict: best_error (the lowest error), best_round and best_seconds (where it is first
    reached), within_error (the best + within), and the first point at or below that: round_to_within,
    seconds_to_within and error_at_within.
    """
    err = np.asarray(curve.test_error, dtype=np.float64)
    if err.size == 0:
        raise ValueError("an empty curve has no best error")
    best_i = int(np.argmin(err))
    reach_i = int(np.flatnonzero(err <= err[best_i] + within + _EPS)[0])
    return {"best_error": float(err[best_i]), "best_round": int(curve.rounds[best_i]),
            "best_seconds": float(curve.seconds[best_i]), "within_error": float(err[best_i] + within),
            "round_to_within": int(curve.rounds[reach_i]), "seconds_to_within": float(curve.seconds[reach_i]),
            "error_at_within": float(err[reach_i])}


def time_to_reach(curve, target):
    """(round, seconds) at which ``curve`` first has a test error <= ``target``; (None, None) if never."""
    hit = np.flatnonzero(np.asarray(curve.test_error, dtype=np.float64) <= target + _EPS)
    if hit.size == 0:
        return None, None
    return int(curve.rounds[hit[0]]), float(curve.seconds[hit[0]])


# ================================================================================== data
def make_curve_data(spec, n, n_test, d, seed, dtype):
    """(X_train, y_train, X_test, y_test, description) of a ``CURVE_DATASETS`` entry; y as class indices 0..K-1
    (int64), the test rows drawn with seed + 1."""
    from fastboost import datasets

    gen = getattr(datasets, spec.generator)
    kw = {"n_features": d} if spec.takes_d else {}
    Xtr, ytr = gen(n, random_state=seed, **kw)
    Xte, yte = gen(n_test, random_state=seed + 1, **kw)
    classes = np.unique(np.concatenate([ytr, yte]))
    ytr, yte = np.searchsorted(classes, ytr).astype(np.int64), np.searchsorted(classes, yte).astype(np.int64)
    desc = {"name": spec.name, "source": f"fastboost.datasets.{spec.generator}", "description": spec.description,
            "seed": seed, "test_seed": seed + 1, "classes": classes.tolist(), "n_classes": int(classes.shape[0]),
            "n_train": int(n), "n_test": int(n_test), "n_features": int(Xtr.shape[1]), "dtype": np.dtype(dtype).name}
    return (np.ascontiguousarray(Xtr, dtype=dtype), ytr, np.ascontiguousarray(Xte, dtype=dtype), yte, desc)


# ================================================================================== one fit (child process)
def _fit_curve(task, data, res, say):
    """Fit one library once through its adapter, stamping the end of every round; fill ``res`` (params, timing and
    evaluation methods, prep and fit seconds, a final check) and return its ``Curve``. Raises ``Skipped`` when the
    library cannot run the task."""
    Xtr, ytr, Xte, yte = data["Xtr"], data["ytr"], data["Xte"], data["yte"]
    adapter = adapter_class(task)(task)
    res["params"], res["estimator"] = dict(adapter.params), adapter.estimator
    res["threads_used"] = adapter.threads_used()
    with adapter.session():
        adapter.warm_up(*warm_slice(Xtr, ytr), staged=True)
        gc.collect()
        stamps = RoundStamps()
        stamps.start()
        dataset = adapter.prepare(Xtr, ytr)
        prep_s = stamps.now()
        model = adapter.train(dataset, on_round=stamps.stamp)
        res["fit_s"] = stamps.now()
        dataset = None
        seconds = adapter.round_seconds(model, stamps, prep_s, res["fit_s"], res)
        n_run = seconds.shape[0]
        say(f"{task['label']}: {n_run} rounds in {res['fit_s']:.2f} s; test error per round")
        errors = adapter.errors_per_round(model, Xte, yte, res)
    return Curve(np.arange(1, n_run + 1), seconds, errors)


def run_curve_task(task, data, say=log):
    """Fit one library once on ``data`` and measure its curve; a JSON-able result dict."""
    res = {"key": task["key"], "status": "ok", "rounds_requested": task["rounds"], "rounds_fitted": task["fit_rounds"],
           "capped": task["fit_rounds"] < task["rounds"]}
    try:
        curve = _fit_curve(task, data, res, say)
    except Skipped as exc:
        return {**res, "status": "skipped", "message": str(exc)}
    if curve.rounds.size == 0:
        return {**res, "status": "failed", "message": "the fit kept no round: no curve"}
    if np.any(np.diff(curve.seconds) < 0):
        raise RuntimeError(f"{task['label']}: round times decrease")
    res["curve"] = {"rounds": curve.rounds.tolist(), "seconds": [float(s) for s in curve.seconds],
                    "test_error": [float(e) for e in curve.test_error]}
    res["rounds_run"] = int(curve.rounds[-1])
    if res["capped"]:
        res["note"] = (f"capped at {task['fit_rounds']} of {task['rounds']} rounds (--slow-rows/--slow-rounds): "
                       "its best is that of the rounds it ran")
    return res


def curve_of(result):
    """The ``Curve`` of a result dict (its JSON lists as arrays)."""
    c = result["curve"]
    return Curve(np.asarray(c["rounds"]), np.asarray(c["seconds"], dtype=np.float64),
                 np.asarray(c["test_error"], dtype=np.float64))


# ================================================================================== summary
def summarize(results, within):
    """Add each ok result's ``summary``: its best error and the seconds to within ``within`` of it, those seconds
    over the reference's (the first fastboost result), and the seconds to reach the reference's best + within."""
    ok = [r for r in results if r["status"] == "ok"]
    ref = next((r for r in ok if r["library"] == "fastboost"), None)
    ref_summary = time_to_within(curve_of(ref), within) if ref else None
    for r in ok:
        s = time_to_within(curve_of(r), within)
        s["whole_fit_s"] = float(r["curve"]["seconds"][-1])
        s["ratio_to_reference"] = (s["seconds_to_within"] / ref_summary["seconds_to_within"]
                                   if ref and ref_summary["seconds_to_within"] > 0 else None)
        if ref:
            rnd, secs = time_to_reach(curve_of(r), ref_summary["within_error"])
            s["reference_target_error"] = ref_summary["within_error"]
            s["round_to_reference_target"], s["seconds_to_reference_target"] = rnd, secs
            s["reference_target_ratio"] = (secs / ref_summary["seconds_to_within"]
                                           if secs is not None and ref_summary["seconds_to_within"] > 0 else None)
        r["summary"] = s
    fastboost = [r for r in ok if r["library"] == "fastboost"]
    for r in ok:
        if r["library"] != "fastboost" and fastboost:
            r["summary"]["race"] = race(r, fastboost)
    return ref["key"] if ref else None


def race(competitor, fastboost):
    """Who first reaches the ``competitor`` result's own best + the tolerance (its summary's ``within_error``):
    the competitor (its ``seconds_to_within``) or the first of the ``fastboost`` results to get there. A dict:
    target_error, competitor_s, fastboost_key, fastboost_round and fastboost_s (None: no fastboost result gets
    there in its rounds), first ("fastboost", "competitor" or "never" when no fastboost result gets there)."""
    s = competitor["summary"]
    target = s["within_error"]
    reached = [(secs, rnd, r["key"]) for r in fastboost
               for rnd, secs in [time_to_reach(curve_of(r), target)] if secs is not None]
    secs, rnd, key = min(reached) if reached else (None, None, None)
    first = "never" if secs is None else "fastboost" if secs < s["seconds_to_within"] else "competitor"
    return {"target_error": target, "competitor_s": s["seconds_to_within"], "fastboost_key": key,
            "fastboost_round": rnd, "fastboost_s": secs, "first": first}


# ================================================================================== the command
def check_args(args):
    """Check ``--curve``'s arguments and resolve their defaults on ``args`` (the data set names in ``curve_data``,
    the competitors' keys in ``competitors``, the tolerance as an error in ``within_error``); raise CurveError for a
    bad argument."""
    given = [args.data] if isinstance(args.data, str) else (args.data or list(CURVE_DATASETS))
    names = split_names(given)
    unknown = [n for n in names if n not in CURVE_DATASETS]
    if unknown or not names:
        raise CurveError(f"--curve --data takes data set names ({', '.join(CURVE_DATASETS)}); got "
                         f"{', '.join(map(repr, unknown or names))}")
    args.curve_data = list(dict.fromkeys(names))
    if args.target is not None:
        raise CurveError("--target does not apply to --curve (its data sets are generated)")
    if args.profile:
        raise CurveError("--profile times the per-round kernels; it does not apply to --curve")
    args.n = DEFAULT_N if args.n is None else args.n
    args.n_test = min(args.n, DEFAULT_N_TEST) if args.n_test is None else args.n_test
    args.slow_rounds = DEFAULT_SLOW_ROUNDS if args.slow_rounds is None else args.slow_rounds
    args.within_error = DEFAULT_WITHIN if args.within is None else args.within / 100
    args.gbm_learning_rate = DEFAULT_GBM_LEARNING_RATE if args.gbm_learning_rate is None else args.gbm_learning_rate
    for name, value, low in (("--n", args.n, 10), ("--n-test", args.n_test, 1), ("--d", args.d, 2),
                             ("--threads", args.threads, 1), ("--slow-rounds", args.slow_rounds, 1)):
        if value < low:
            raise CurveError(f"{name} must be >= {low}; got {value}")
    for name, value in (("--rounds", args.rounds), ("--depth", args.depth)):
        if value is not None and value < 1:
            raise CurveError(f"{name} must be >= 1; got {value}")
    if not 2 <= args.bins <= 255:
        raise CurveError(f"--bins must be in [2, 255]; got {args.bins}")
    if not 0 < args.within_error < 1:
        raise CurveError("--within must be a positive number of percentage points below 100")
    if not args.gbm_learning_rate > 0:
        raise CurveError(f"--gbm-learning-rate must be > 0; got {args.gbm_learning_rate}")
    comps = competitor_keys(args.competitors)
    unknown = [c for c in comps if c not in COMPETITORS]
    if unknown:
        raise CurveError(f"unknown competitor(s) {', '.join(unknown)}; choose from {', '.join(COMPETITORS)}")
    args.competitors = comps
    if args.algorithms is not None:
        args.algorithms = [a for a in split_names(args.algorithms) if a != "none"]
        check_algorithms(args.algorithms)


def default_algorithms(spec):
    """fastboost's algorithms on data set ``spec`` unless ``--algorithms`` says otherwise: AdaBoost as published
    (the reference), then its recommended setting, confidence-rated leaves: on two classes "real", on more
    both recommended forms, AdaBoost.MH ("mh", one tree a round) and one-vs-rest ("real", a model per class)."""
    return ["adaboost", "real"] if spec.n_classes == 2 else ["adaboost", "mh", "real"]


def _depth_rounds(args, spec):
    """(tree depth, rounds) on data set ``spec``: ``--depth`` / ``--rounds`` if given, else the data set's own."""
    return (spec.depth if args.depth is None else args.depth), (spec.rounds if args.rounds is None else args.rounds)


def _skip_once(skipped, key, label, message):
    """Add a library that cannot run at all to ``skipped``, once for every data set."""
    if not any(s["key"] == key for s in skipped):
        skipped.append({"key": key, "data": None, "label": label, "message": message})
        log(f"skipping {label}: {message}")


def _tasks(args, spec, skipped):
    """The tasks of one data set: fastboost algorithms first (the first is the reference), then competitors.
    A library that cannot run at all is added to ``skipped`` once, with why."""
    depth, rounds = _depth_rounds(args, spec)
    base = {"mode": "curve", "data_name": spec.name, "n_classes": spec.n_classes, "depth": depth, "rounds": rounds,
            "fit_rounds": rounds, "bins": args.bins, "threads": args.threads, "seed": args.seed,
            "gbm_learning_rate": args.gbm_learning_rate}
    tasks = []
    for algo in default_algorithms(spec) if args.algorithms is None else args.algorithms:
        cls, _ = fastboost_class(algo)  # (names checked by check_algorithms)
        label = f"fastboost {cls.__name__}" + (
            "".join(f", {k}={v!r}" for k, v in algorithm_params(algo, depth).items()))
        tasks.append({**base, "key": f"fastboost-{algo}", "library": "fastboost", "algorithm": algo,
                      "label": label, "short": f"fastboost {algo}"})
    for key in args.competitors:
        label, _, short = COMPETITORS[key]
        reason = unavailable(key)
        if reason is not None:
            _skip_once(skipped, key, label, reason)
            continue
        task = {**base, "key": key, "library": key, "label": label, "short": short}
        if ADAPTERS[key].slow and args.n >= args.slow_rows:
            task["fit_rounds"] = min(rounds, args.slow_rounds)
        tasks.append(task)
    return tasks


def _measure(task, data, ddir, tmp, fb_root):
    """Run one task: in a child process on the data saved in ``ddir``, or in this process on ``data`` (a dict of
    arrays, --no-subprocess). The result dict, with the peak RSS (children only), the process's wall time and the
    cores other processes used meanwhile."""
    log(f"{task['data_name']}: {task['label']}, {task['fit_rounds']} rounds, "
        + ("in this process" if data is not None else "in a child process"))
    if data is not None:
        res, wall, other = run_task_here(run_curve_task, task, data)
        peak = None
    else:
        res, peak, wall, other = run_task_in_child(task, ddir, tmp, fb_root)
    return {**{k: task[k] for k in ("key", "library", "label", "short")}, **res,
            "peak_rss_mb": peak, "process_wall_s": wall, "other_load_cores": other}


def _run_dataset(args, spec, tmp, fb_root, skipped):
    """Generate data set ``spec``, fit every library on it, summarize; its section of the JSON record."""
    name = spec.name
    tasks = _tasks(args, spec, skipped)
    log(f"{name}: generating {args.n} training + {args.n_test} test rows")
    Xtr, ytr, Xte, yte, desc = make_curve_data(spec, args.n, args.n_test, args.d, args.seed, args.dtype)
    ddir = Path(tmp) / name
    data = None
    if args.no_subprocess:
        data = {"Xtr": Xtr, "ytr": ytr, "Xte": Xte, "yte": yte}
    else:
        ddir.mkdir()
        save_data(ddir, Xtr, ytr, Xte, yte)
    del Xtr, Xte
    gc.collect()
    results = [_measure(t, data, ddir, tmp, fb_root) for t in tasks]
    for r in results:
        if r["status"] != "ok":
            skipped.append({"key": r["key"], "data": name, "label": r["label"],
                            "message": r.get("message", r["status"])})
            log(f"{name}: {r['label']}: {r['status']}: {r.get('message')}")
    reference = summarize(results, args.within_error)
    depth, rounds = _depth_rounds(args, spec)
    data = None
    gc.collect()
    if ddir.exists():
        for f in ddir.iterdir():
            f.unlink()
    return {"name": name, "data": desc, "depth": depth, "rounds": rounds, "reference": reference, "results": results}


def run_curve(args, stdout=None):
    """``fastboost bench --curve`` for parsed ``args`` checked by ``check_args``: print the tables, write the JSON
    record and chart; return the record (a dict)."""
    import fastboost

    from .curve_report import write_curve_report

    stdout = stdout or sys.stdout
    stamp = time.strftime("%Y%m%d-%H%M%S")
    out = Path(args.out) if args.out else Path("bench_results") / f"curve-{stamp}.json"
    log(f"fastboost bench --curve: fastboost {fastboost.__version__} from {Path(fastboost.__file__).parent}")
    load_start = other_load(1.0)
    if load_start is not None:
        log(f"other processes use {load_start:.2f} cores now")
    fb_root = fastboost_root()
    skipped = []
    with tempfile.TemporaryDirectory(prefix="fastboost-curve-") as tmp:
        sections = [_run_dataset(args, CURVE_DATASETS[name], tmp, fb_root, skipped) for name in args.curve_data]
    payload = {
        **payload_header("fastboost bench --curve"),
        "config": {"data": args.curve_data, "n": args.n, "n_test": args.n_test, "d": args.d, "dtype": args.dtype,
                   "seed": args.seed, "depth": args.depth, "rounds": args.rounds, "bins": args.bins,
                   "threads": args.threads,
                   "algorithms": args.algorithms or {name: default_algorithms(CURVE_DATASETS[name])
                                                     for name in args.curve_data},
                   "competitors": args.competitors,
                   "slow_rows": args.slow_rows, "slow_rounds": args.slow_rounds,
                   "gbm_learning_rate": args.gbm_learning_rate, "subprocess": not args.no_subprocess},
        "within": args.within_error,
        "machine": machine_info(args.threads),
        "other_load_at_start_cores": load_start,
        "datasets": sections,
        "skipped": skipped,
        "notes": CURVE_NOTES,
    }
    return write_curve_report(payload, out, plot=not args.no_plot, stdout=stdout)


CURVE_NOTES = [
    "one fit per library and data set; seconds count from the start of the library's data preparation "
    "(binning / dataset construction), after a small warm-up fit; test error is computed after the fit and "
    "never counts",
    "fastboost: round times interpolated linearly between its fit callbacks (every chunk of rounds, about "
    "0.2 s); the others: a time stamp per iteration (LightGBM / XGBoost callbacks, HistGradientBoosting's "
    "verbose=2 lines, scikit-learn AdaBoost's per-round tree fits)",
    "best = the lowest test error over the rounds run (chosen on the test rows, for every library alike); "
    "'to best+x' = the first time the test error is within x of it",
    "LightGBM, XGBoost and HistGradientBoosting are gradient boosting (logistic / multinomial loss, the "
    "given learning rate), not AdaBoost: same tree depth, bins and threads; K classes = K trees a round",
]


__all__ = ["CURVE_DATASETS", "Curve", "CurveData", "CurveError", "check_args", "curve_of", "interpolate_round_times",
           "make_curve_data", "run_curve", "run_curve_task", "summarize", "time_to_reach", "time_to_within"]
