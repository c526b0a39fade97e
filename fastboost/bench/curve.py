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

Imports only the standard library, NumPy and its sibling modules at the top (each library inside its
runner): the child processes load this module by path (see ``_worker.py``).
"""
import contextlib
import gc
import re
import sys
import tempfile
import time
from collections import namedtuple
from pathlib import Path

import numpy as np

from . import measure
from .measure import _other_load, _own_cpu, _system_busy_cpu, log
from .report import payload_header
from .tasks import COMPETITORS, _run_child, _Skipped, _warm_slice, fastboost_class

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


class CurveError(Exception):
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


def interpolate_round_times(points, n_rounds):
    """Seconds at which rounds 1..n_rounds ended, linear between ``points``: (rounds done, seconds) pairs
    in increasing order, the first of them (0, when round 1 started)."""
    done = np.array([p[0] for p in points], dtype=np.float64)
    secs = np.array([p[1] for p in points], dtype=np.float64)
    if done[0] != 0 or np.any(np.diff(done) <= 0) or done[-1] < n_rounds:
        raise ValueError(f"round timestamps must start at round 0, increase and reach round {n_rounds}; "
                         f"got rounds {done.astype(int).tolist()}")
    return np.interp(np.arange(1, n_rounds + 1, dtype=np.float64), done, secs)


def _error_curve(labels_per_round, y):
    """Test error after each round from an iterable of predicted labels (one array per round)."""
    return np.array([np.count_nonzero(np.asarray(p) != y) for p in labels_per_round], dtype=np.float64) / y.shape[0]


def _labels(raw):
    """Class index from raw scores: > 0 for one column (binary), argmax for K columns."""
    return (raw > 0).astype(np.int64) if raw.ndim == 1 else np.argmax(raw, axis=1)


class _Stamps:
    """Elapsed seconds taken inside a library's callbacks, on a clock that leaves out the callbacks' own time."""

    def __init__(self):
        self.t0 = None
        self.times = []   # elapsed seconds of each stamp
        self.marks = []   # what each stamp marks (a round count, or None)
        self.overhead = 0.0

    def start(self):
        self.t0 = time.perf_counter()

    def now(self):
        """Elapsed seconds since ``start``, callback time left out."""
        return time.perf_counter() - self.t0 - self.overhead

    def stamp(self, mark=None):
        t = time.perf_counter()
        self.times.append(t - self.t0 - self.overhead)
        self.marks.append(mark)
        self.overhead += time.perf_counter() - t


class _StampedWriter:
    """A text stream that stamps each write matching ``pattern`` (HistGradientBoosting's per-iteration line)."""

    def __init__(self, stamps, pattern):
        self.stamps, self.pattern, self.lines = stamps, re.compile(pattern), []

    def write(self, text):
        if self.pattern.search(text):
            self.stamps.stamp()
        self.lines.append(text)
        return len(text)

    def flush(self):
        pass

    def getvalue(self):
        return "".join(self.lines)


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


# ================================================================================== runners (child process)
def curve_fastboost(task, data, res, say):
    """A fastboost estimator: round times from fit callbacks (interpolated), errors from ``staged_predict``."""
    Xtr, ytr, Xte, yte = data["Xtr"], data["ytr"], data["Xte"], data["yte"]
    cls, reason = fastboost_class(task["algorithm"])
    if cls is None:
        raise _Skipped(reason)
    params = {"n_estimators": task["fit_rounds"], "max_bins": task["bins"], "n_jobs": task["threads"],
              "random_state": task["seed"]}
    if "max_depth" in cls().get_params():
        params["max_depth"] = task["depth"]
    elif task["depth"] > 1:
        raise _Skipped(f"{cls.__name__} has no max_depth parameter: fastboost fits stumps only (depth 1)")
    res["params"] = dict(params)
    res["estimator"] = f"fastboost.{cls.__name__}"
    Xw, yw = _warm_slice(Xtr, ytr)
    warm = cls(**{**params, "n_estimators": 5}).fit(Xw, yw, callbacks=[lambda done, rounds: None])
    if hasattr(warm, "estimators_"):
        raise _Skipped(f"{cls.__name__} fits {task['n_classes']} classes one-vs-rest, which has no staged "
                       "predictions (AdaBoostClassifier fits them together with SAMME)")
    list(warm.staged_predict(Xw[:100]))
    gc.collect()

    stamps = _Stamps()
    est = cls(**params)
    stamps.start()
    est.fit(Xtr, ytr, callbacks=[lambda done, rounds: stamps.stamp(done)])
    wall = stamps.now()
    n_run = int(est.n_estimators_)
    before = wall - est.fit_time_  # input checks before fastboost's fit timer (and its tiny bookkeeping after)
    points = [(0, before + est.bin_time_)] + [(d, t) for d, t in zip(stamps.marks, stamps.times) if d <= n_run]
    if points[-1][0] < n_run:  # a stop rule ended the fit after the last callback
        points.append((n_run, before + est.fit_time_))
    seconds = interpolate_round_times(points, n_run)
    gaps = np.diff([p[0] for p in points])
    res["prep_s"] = before + est.bin_time_
    res["prep_what"] = "input checks + BinMapper (bin_time_)"
    res["timing"] = (f"fit callbacks between chunks of rounds: {len(points) - 1} time stamps, {int(gaps.min())} to "
                     f"{int(gaps.max())} rounds apart, the rounds in between interpolated linearly; round 1 starts "
                     "after the input checks and bin_time_ (callback_points: [rounds done, seconds])")
    res["callback_points"] = [list(p) for p in points]
    res["fit_s"] = wall
    say(f"{task['label']}: {n_run} rounds in {wall:.2f} s; test error per round (staged_predict)")
    errors = _error_curve(est.staged_predict(Xte), yte)
    res["evaluation"] = "staged_predict on the test rows after the fit"
    res["final_check"] = {"predict_error": float(np.mean(est.predict(Xte) != yte)), "curve_error": float(errors[-1])}
    return Curve(np.arange(1, n_run + 1), seconds, errors)


def curve_lightgbm(task, data, res, say):
    """``lightgbm.train`` with a callback stamping each iteration; errors from per-iteration raw scores."""
    import lightgbm as lgb

    Xtr, ytr, Xte, yte = data["Xtr"], data["ytr"], data["Xte"], data["yte"]
    depth, bins, threads, k = task["depth"], task["bins"], task["threads"], task["n_classes"]
    objective = {"objective": "binary"} if k == 2 else {"objective": "multiclass", "num_class": k}
    ds_params = {"max_bin": bins, "verbose": -1, "num_threads": threads, "seed": task["seed"]}
    params = {**objective, "learning_rate": task["gbm_learning_rate"], "num_leaves": 2 ** depth,
              "max_depth": depth, "max_bin": bins, "num_threads": threads, "verbose": -1, "seed": task["seed"]}
    res["params"] = params
    res["estimator"] = f"lightgbm.train (lightgbm {lgb.__version__})"
    Xw, yw = _warm_slice(Xtr, ytr)
    lgb.train(params, lgb.Dataset(Xw, label=yw, params=ds_params), num_boost_round=2)
    gc.collect()

    stamps = _Stamps()
    stamps.start()
    ds = lgb.Dataset(Xtr, label=ytr, params=ds_params, free_raw_data=False).construct()
    res["prep_s"] = stamps.now()
    bst = lgb.train(params, ds, num_boost_round=task["fit_rounds"],
                    callbacks=[lambda env: stamps.stamp(env.iteration + 1)])
    res["fit_s"] = stamps.now()
    n_run = bst.current_iteration()
    res["prep_what"] = "lgb.Dataset(free_raw_data=False).construct()"
    res["timing"] = "a training callback stamps the end of every iteration"
    say(f"{task['label']}: {n_run} iterations in {res['fit_s']:.2f} s; test error per iteration")
    raw, errors = None, np.empty(n_run)
    for i in range(n_run):
        part = bst.predict(Xte, start_iteration=i, num_iteration=1, raw_score=True, num_threads=threads)
        raw = part if raw is None else raw + part
        errors[i] = np.mean(_labels(raw) != yte)
    full = _labels(bst.predict(Xte, raw_score=True, num_threads=threads))
    res["evaluation"] = ("after the fit: raw scores of one iteration at a time (predict(start_iteration=i, "
                         "num_iteration=1, raw_score=True)), summed")
    res["final_check"] = {"predict_error": float(np.mean(full != yte)), "curve_error": float(errors[-1]),
                          "label_mismatches": int(np.count_nonzero(full != _labels(raw)))}
    return Curve(np.arange(1, n_run + 1), np.array(stamps.times[:n_run]), errors)


def curve_xgboost(task, data, res, say):
    """``xgboost.train`` (hist) with a callback stamping each iteration; errors from per-iteration margins."""
    import xgboost as xgb

    Xtr, ytr, Xte, yte = data["Xtr"], data["ytr"], data["Xte"], data["yte"]
    depth, bins, threads, k = task["depth"], task["bins"], task["threads"], task["n_classes"]
    objective = {"objective": "binary:logistic"} if k == 2 else {"objective": "multi:softprob", "num_class": k}
    params = {**objective, "tree_method": "hist", "max_depth": depth, "max_bin": bins,
              "learning_rate": task["gbm_learning_rate"], "nthread": threads, "verbosity": 0, "seed": task["seed"]}
    res["params"] = params
    res["estimator"] = f"xgboost.train (xgboost {xgb.__version__})"

    stamps = _Stamps()

    class StampIterations(xgb.callback.TrainingCallback):
        def after_iteration(self, model, epoch, evals_log):
            stamps.stamp(epoch + 1)
            return False

    Xw, yw = _warm_slice(Xtr, ytr)
    xgb.train(params, xgb.QuantileDMatrix(Xw, label=yw, max_bin=bins, nthread=threads), num_boost_round=2)
    gc.collect()

    stamps.start()
    dm = xgb.QuantileDMatrix(Xtr, label=ytr, max_bin=bins, nthread=threads)
    res["prep_s"] = stamps.now()
    bst = xgb.train(params, dm, num_boost_round=task["fit_rounds"], callbacks=[StampIterations()])
    res["fit_s"] = stamps.now()
    n_run = bst.num_boosted_rounds()
    res["prep_what"] = "xgboost.QuantileDMatrix(max_bin=bins)"
    res["timing"] = "a training callback stamps the end of every iteration"
    say(f"{task['label']}: {n_run} iterations in {res['fit_s']:.2f} s; test error per iteration")
    del dm
    shape = (Xte.shape[0],) if k == 2 else (Xte.shape[0], k)
    plain = xgb.DMatrix(Xte, nthread=threads)
    zero = xgb.DMatrix(Xte, base_margin=np.zeros(shape, np.float32), nthread=threads)  # trees only, no base score
    first = {"iteration_range": (0, 1), "output_margin": True}
    raw = (bst.predict(plain, **first) - bst.predict(zero, **first)).astype(np.float64)  # the base score
    errors = np.empty(n_run)
    for i in range(n_run):
        raw += bst.predict(zero, iteration_range=(i, i + 1), output_margin=True)
        errors[i] = np.mean(_labels(raw) != yte)
    full_raw = bst.predict(plain, output_margin=True)
    full = _labels(full_raw)
    res["evaluation"] = ("after the fit: margins of one iteration at a time (iteration_range=(i, i + 1) on a test "
                         "DMatrix with base_margin 0), summed with the base score in float64")
    res["final_check"] = {"predict_error": float(np.mean(full != yte)), "curve_error": float(errors[-1]),
                          "label_mismatches": int(np.count_nonzero(full != _labels(raw))),
                          "max_abs_margin_difference": float(np.max(np.abs(full_raw - raw)))}
    return Curve(np.arange(1, n_run + 1), np.array(stamps.times[:n_run]), errors)


def curve_sklearn_hgb(task, data, res, say):
    """HistGradientBoostingClassifier: ``verbose=2`` lines stamped as written; errors from ``staged_predict``."""
    from sklearn.ensemble import HistGradientBoostingClassifier
    from threadpoolctl import threadpool_limits

    Xtr, ytr, Xte, yte = data["Xtr"], data["ytr"], data["Xte"], data["yte"]
    depth, bins, threads = task["depth"], task["bins"], task["threads"]
    params = {"max_iter": task["fit_rounds"], "learning_rate": task["gbm_learning_rate"], "max_depth": depth,
              "max_leaf_nodes": max(2, 2 ** depth), "max_bins": bins, "early_stopping": False,
              "random_state": task["seed"]}
    res["params"] = params
    res["estimator"] = "sklearn.ensemble.HistGradientBoostingClassifier"
    Xw, yw = _warm_slice(Xtr, ytr)
    with threadpool_limits(threads, user_api="openmp"):
        HistGradientBoostingClassifier(**{**params, "max_iter": 2}).fit(Xw, yw)
        gc.collect()
        stamps = _Stamps()
        writer = _StampedWriter(stamps, r"in \d+\.\d+s$")  # the line that ends each iteration
        est = HistGradientBoostingClassifier(**params, verbose=2)
        stamps.start()
        with contextlib.redirect_stdout(writer):
            est.fit(Xtr, ytr)
        res["fit_s"] = stamps.now()
        n_run = int(est.n_iter_)
        m = re.search(r"Binning [\d.]+ GB of training data: ([\d.]+) s", writer.getvalue())
        res["prep_s"] = float(m.group(1)) if m else None
        res["prep_what"] = "HGB's own binning time from its verbose log" if m else None
        res["timing"] = ("verbose=2: HGB writes a line as each iteration ends; the writes are stamped (the "
                         "line's formatting, microseconds, counts as training time)")
        say(f"{task['label']}: {n_run} iterations in {res['fit_s']:.2f} s; test error per iteration (staged_predict)")
        errors = _error_curve(est.staged_predict(Xte), yte)
        res["final_check"] = {"predict_error": float(np.mean(est.predict(Xte) != yte)),
                              "curve_error": float(errors[-1])}
    res["evaluation"] = "staged_predict on the test rows after the fit"
    if len(stamps.times) != n_run:
        raise RuntimeError(f"HGB wrote {len(stamps.times)} iteration lines for {n_run} iterations")
    return Curve(np.arange(1, n_run + 1), np.array(stamps.times), errors)


def curve_sklearn_adaboost(task, data, res, say):
    """AdaBoostClassifier on decision trees whose ``fit`` stamps each round's start; errors from
    ``staged_predict``. One thread, no binning."""
    from sklearn.ensemble import AdaBoostClassifier
    from sklearn.tree import DecisionTreeClassifier

    Xtr, ytr, Xte, yte = data["Xtr"], data["ytr"], data["Xte"], data["yte"]
    stamps = _Stamps()

    class StampedTree(DecisionTreeClassifier):
        """A decision tree that stamps the time each time a round starts fitting it."""

        def fit(self, X, y, sample_weight=None, check_input=True):
            stamps.stamp()
            return super().fit(X, y, sample_weight=sample_weight, check_input=check_input)

    def make(rounds, tree):
        return AdaBoostClassifier(estimator=tree(max_depth=task["depth"]), n_estimators=rounds, learning_rate=1.0,
                                  random_state=task["seed"])

    res["params"] = {"estimator": f"DecisionTreeClassifier(max_depth={task['depth']})",
                     "n_estimators": task["fit_rounds"], "learning_rate": 1.0}
    res["estimator"] = "sklearn.ensemble.AdaBoostClassifier"
    Xw, yw = _warm_slice(Xtr, ytr)
    make(2, DecisionTreeClassifier).fit(Xw, yw)
    gc.collect()
    est = make(task["fit_rounds"], StampedTree)
    stamps.start()
    est.fit(Xtr, ytr)
    res["fit_s"] = stamps.now()
    n_run = len(est.estimators_)
    ends = (stamps.times[1:] + [res["fit_s"]])[:n_run]  # round t ends when round t + 1 starts, the last with fit
    res["prep_s"] = stamps.times[0]
    res["prep_what"] = "input checks before the first round's tree (no binning)"
    res["timing"] = ("each round's tree stamps the time as its fit starts: round t ends when round t + 1 starts, "
                     "the last when fit returns")
    say(f"{task['label']}: {n_run} rounds in {res['fit_s']:.2f} s; test error per round (staged_predict)")
    errors = _error_curve(est.staged_predict(Xte), yte)
    res["evaluation"] = "staged_predict on the test rows after the fit"
    res["final_check"] = {"predict_error": float(np.mean(est.predict(Xte) != yte)), "curve_error": float(errors[-1])}
    return Curve(np.arange(1, n_run + 1), np.array(ends), errors)


#: The curve runner of each library: ``CURVE_RUNNERS[library](task, data, res, say)`` fits once, fills ``res``
#: (params, timing and evaluation methods, prep and fit seconds, a final check) and returns a ``Curve``; it raises
#: ``_Skipped`` when the library cannot run the task.
CURVE_RUNNERS = {
    "fastboost": curve_fastboost,
    "sklearn-adaboost": curve_sklearn_adaboost,
    "lightgbm": curve_lightgbm,
    "xgboost": curve_xgboost,
    "sklearn-hgb": curve_sklearn_hgb,
}


def run_curve_task(task, data, say=log):
    """Fit one library once on ``data`` and measure its curve; a JSON-able result dict."""
    runner = CURVE_RUNNERS[task["library"]]
    res = {"key": task["key"], "status": "ok", "rounds_requested": task["rounds"], "rounds_fitted": task["fit_rounds"],
           "capped": task["fit_rounds"] < task["rounds"], "threads_used": task["threads"]}
    if task["library"] == "sklearn-adaboost":
        res["threads_used"] = 1
    try:
        curve = runner(task, data, res, say)
    except _Skipped as exc:
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
    return ref["key"] if ref else None


# ================================================================================== the command
def _check_args(args):
    """Resolve ``--curve``'s defaults on ``args``; raise CurveError for a bad argument."""
    given = [args.data] if isinstance(args.data, str) else (args.data or list(CURVE_DATASETS))
    names = [v.strip().lower() for item in given for v in item.split(",") if v.strip()]
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


def _depth_rounds(args, spec):
    """(tree depth, rounds) on data set ``spec``: ``--depth`` / ``--rounds`` if given, else the data set's own."""
    return (spec.depth if args.depth is None else args.depth), (spec.rounds if args.rounds is None else args.rounds)


def _tasks(args, spec, comps, skipped):
    """The tasks of one data set: fastboost algorithms first (the first is the reference), then competitors.
    A library that cannot run at all is added to ``skipped`` once, with why."""
    import importlib

    depth, rounds = _depth_rounds(args, spec)
    base = {"mode": "curve", "data_name": spec.name, "n_classes": spec.n_classes, "depth": depth, "rounds": rounds,
            "fit_rounds": rounds, "bins": args.bins, "threads": args.threads, "seed": args.seed,
            "gbm_learning_rate": args.gbm_learning_rate}
    tasks = []
    for algo in args.algorithms:
        cls, reason = fastboost_class(algo)
        label = f"fastboost {cls.__name__ if cls else algo}"
        if cls is None:
            if not any(s["key"] == f"fastboost-{algo}" for s in skipped):
                skipped.append({"key": f"fastboost-{algo}", "data": None, "label": label, "message": reason})
                log(f"skipping {label}: {reason}")
            continue
        tasks.append({**base, "key": f"fastboost-{algo}", "library": "fastboost", "algorithm": algo,
                      "label": label, "short": f"fastboost {algo}"})
    for key in comps:
        label, module, short = COMPETITORS[key]
        try:
            importlib.import_module(module)
        except Exception as exc:
            if not any(s["key"] == key for s in skipped):
                msg = f"not installed or not importable ({type(exc).__name__}: {exc}); pip install 'fastboost[bench]'"
                skipped.append({"key": key, "data": None, "label": label, "message": msg})
                log(f"skipping {label}: {msg}")
            continue
        task = {**base, "key": key, "library": key, "label": label, "short": short}
        if key == "sklearn-adaboost" and args.n >= args.slow_rows:
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
        busy0, own0, t0 = _system_busy_cpu(), _own_cpu(), time.perf_counter()
        try:
            res = run_curve_task(task, data)
        except Exception as exc:
            res = {"key": task["key"], "status": "failed", "message": f"{type(exc).__name__}: {exc}"}
        wall = time.perf_counter() - t0
        peak = other = None
        if busy0 is not None:
            other = max(0.0, (_system_busy_cpu() - busy0) - (_own_cpu() - own0)) / wall
    else:
        child = {**task, "data_dir": str(ddir), "fastboost_root": fb_root if task["library"] == "fastboost" else None,
                 "t_start_epoch": time.time() - (time.perf_counter() - measure.T_START)}
        res, rc, peak, wall, other = _run_child(child, tmp)
        if res is None:
            res = {"key": task["key"], "status": "failed", "message": f"child process exited with code {rc}"}
    return {**{k: task[k] for k in ("key", "library", "label", "short")}, **res,
            "peak_rss_mb": peak, "process_wall_s": wall, "other_load_cores": other}


def run_curve(args, stdout=None):
    """``fastboost bench --curve`` for parsed ``args``: print the tables, write the JSON record and chart;
    return the record (a dict). A bad argument raises CurveError."""
    from .cli import _split_names
    from .curve_report import write_curve_report
    from .report import machine_info

    stdout = stdout or sys.stdout
    _check_args(args)
    comps = _split_names(args.competitors)
    comps = list(COMPETITORS) if "all" in comps else [c for c in comps if c != "none"]
    unknown = [c for c in comps if c not in COMPETITORS]
    if unknown:
        raise CurveError(f"unknown competitor(s) {', '.join(unknown)}; choose from {', '.join(COMPETITORS)}")
    args.algorithms = [a for a in _split_names(args.algorithms or ["adaboost"]) if a != "none"]

    import fastboost

    stamp = time.strftime("%Y%m%d-%H%M%S")
    out = Path(args.out) if args.out else Path("bench_results") / f"curve-{stamp}.json"
    log(f"fastboost bench --curve: fastboost {fastboost.__version__} from {Path(fastboost.__file__).parent}")
    load_start = _other_load(1.0)
    if load_start is not None:
        log(f"other processes use {load_start:.2f} cores now")
    fb_root = str(Path(fastboost.__file__).resolve().parent.parent)
    skipped, sections = [], []
    with tempfile.TemporaryDirectory(prefix="fastboost-curve-") as tmp:
        for name in args.curve_data:
            spec = CURVE_DATASETS[name]
            tasks = _tasks(args, spec, comps, skipped)
            log(f"{name}: generating {args.n} training + {args.n_test} test rows")
            Xtr, ytr, Xte, yte, desc = make_curve_data(spec, args.n, args.n_test, args.d, args.seed, args.dtype)
            ddir = Path(tmp) / name
            if not args.no_subprocess:
                ddir.mkdir()
                for k, a in (("Xtr", Xtr), ("ytr", ytr), ("Xte", Xte), ("yte", yte)):
                    np.save(ddir / f"{k}.npy", a)
            data = {"Xtr": Xtr, "ytr": ytr, "Xte": Xte, "yte": yte} if args.no_subprocess else None
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
            sections.append({"name": name, "data": desc, "depth": depth, "rounds": rounds,
                             "reference": reference, "results": results})
            data = None
            gc.collect()
            if ddir.exists():
                for f in ddir.iterdir():
                    f.unlink()
    payload = {
        **payload_header("fastboost bench --curve"),
        "config": {"data": args.curve_data, "n": args.n, "n_test": args.n_test, "d": args.d, "dtype": args.dtype,
                   "seed": args.seed, "depth": args.depth, "rounds": args.rounds, "bins": args.bins,
                   "threads": args.threads, "algorithms": args.algorithms, "competitors": comps,
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


__all__ = ["CURVE_DATASETS", "CURVE_RUNNERS", "Curve", "CurveData", "CurveError", "curve_of",
           "interpolate_round_times", "make_curve_data", "run_curve", "run_curve_task", "summarize",
           "time_to_reach", "time_to_within"]
