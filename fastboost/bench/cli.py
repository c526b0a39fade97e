"""The command line of ``fastboost bench``: its arguments, their check (``check_args``) and ``run``."""
import argparse
import gc
import os
import sys
import tempfile
import time
from pathlib import Path

from . import adapters
from .adapters import ADAPTERS, COMPETITORS, FASTBOOST_ALGORITHMS, unavailable
from .contention import format_contention, run_contention
from .curve import CURVE_DATASETS, run_curve
from .curve import check_args as check_curve_args
from .measure import default_threads, log, other_load
from .options import BenchArgumentError, check_algorithms, competitor_keys, exit_with, parse_bins, split_names
from .processes import child_task, fastboost_root, parent_clock, run_child, run_task_here, run_task_in_child, save_data
from .profile import profile_kernels
from .report import GBM_NOTE, RSS_METHOD, fmt_rows, machine_info, payload_header, write_outputs, write_report
from .tasks import load_data, run_task


def add_arguments(p):
    g = p.add_argument_group("data")
    g.add_argument("--data", metavar="FILE", nargs="+",
                   help=".npy, .csv or .parquet file with the label in the last column (or --target); default: "
                        "generated twonorm. With --curve: data set names, any of "
                        f"{', '.join(CURVE_DATASETS)} (default: all three)")
    g.add_argument("--target", help="label column name (csv/parquet) or index (npy)")
    g.add_argument("--n", type=int, default=None,
                   help="training rows (twonorm default 100000, --curve 1000000; file: cap)")
    g.add_argument("--n-test", type=int, default=None,
                   help="held-out rows (twonorm: min(n, 100000), another seed; file: 20%%)")
    g.add_argument("--d", type=int, default=20, help="twonorm (and ringnorm) features (default 20)")
    g.add_argument("--dtype", choices=["float32", "float64"], default="float64")
    g.add_argument("--seed", type=int, default=0)
    g = p.add_argument_group("models")
    g.add_argument("--depth", type=int, default=None, help="tree depth for every library (default 1: stumps; "
                   "--curve: per data set, twonorm 1, ringnorm 3, waveform 1)")
    g.add_argument("--rounds", type=int, default=None, help="boosting rounds (default 100; --curve 1000)")
    g.add_argument("--bins", type=parse_bins, default=255,
                   help="bins per feature for every library (2..255); 'exact': fastboost's exact mode "
                        "(max_bins=None) beside fastboost at 255 bins and scikit-learn's AdaBoost (exact splits); "
                        "the histogram libraries have no exact mode and are skipped")
    g.add_argument("--threads", type=int, default=default_threads(), help="threads for every library "
                   "(default: cores available); scikit-learn AdaBoost is single-threaded")
    g.add_argument("--algorithms", nargs="+", default=None,
                   help="fastboost algorithms, space or comma separated (known: "
                        f"{', '.join(FASTBOOST_ALGORITHMS)}; default adaboost vadaboost, --curve adaboost and the "
                        "recommended setting: real on two classes, mh on more; real and mh at learning rate 0.3 "
                        "with stumps, 0.1 with trees); 'none' for no fastboost")
    g.add_argument("--trim", type=float, default=None, metavar="RATE",
                   help="weight trimming: each fastboost algorithm also with weight_trim_rate=RATE (in (0, 1]), "
                        "beside itself untrimmed; the notes say the share of rows its learner read per round")
    g.add_argument("--competitors", nargs="+", default=["all"],
                   help=f"any of {', '.join(COMPETITORS)}, 'all' (default) or 'none'")
    g = p.add_argument_group("measurement")
    g.add_argument("--repeat", type=int, default=3, help="fits per library; medians are reported (default 3; "
                   "--curve fits once)")
    g.add_argument("--slow-rows", type=int, default=200_000,
                   help="from this many rows scikit-learn AdaBoost runs --slow-rounds rounds, extrapolated "
                        "(--curve: its curve stops there)")
    g.add_argument("--slow-rounds", type=int, default=None, help="default 5; --curve 20")
    g.add_argument("--no-subprocess", action="store_true",
                   help="fit everything in this process: no peak RSS, no compile-time measurement")
    g.add_argument("--no-compile-time", action="store_true", help="skip the cold/warm numba first-call runs")
    g.add_argument("--profile", action="store_true",
                   help="also time fastboost's per-round kernels one by one (internal API)")
    g = p.add_argument_group("time to accuracy (--curve)")
    g.add_argument("--curve", action="store_true",
                   help="fit each library once with many rounds and record test error against training time (see "
                        "fastboost/bench/curve.py): per data set a table of each library's best test error and the "
                        "seconds to come within --within points of it, a chart and the curves in the JSON record")
    g.add_argument("--within", type=float, default=None, metavar="POINTS",
                   help="tolerance in percentage points of test error (default 0.1)")
    g.add_argument("--gbm-learning-rate", type=float, default=None,
                   help="learning rate of LightGBM, XGBoost and HistGradientBoosting in --curve (default 0.1, as "
                        "in the per-round benchmark)")
    g = p.add_argument_group("robustness under contention (--contention)")
    g.add_argument("--contention", action="store_true",
                   help="per-round times at 1 and --threads threads, each alone and beside --contention-procs busy "
                        "processes (see fastboost/bench/contention.py); default 100 000 rows, 200 rounds, "
                        "fastboost adaboost and the competitors but scikit-learn's AdaBoost")
    g.add_argument("--contention-procs", type=int, default=1, metavar="K",
                   help="busy processes beside the fit (default 1: each spins one core)")
    g = p.add_argument_group("output")
    g.add_argument("--out", help="JSON path (default bench_results/bench-<timestamp>.json, --curve: "
                   "curve-<timestamp>.json)")
    g.add_argument("--no-plot", action="store_true", help="no PNG chart even with matplotlib")
    return p


# ================================================================================== argument checks
def check_args(args):
    """Check the parsed ``args`` and resolve their defaults on them (the mode's rounds, algorithms, competitors'
    keys, ...). A bad argument is a BenchArgumentError (``run`` prints it as one line and exits with status 2)."""
    for name, default in (("trim", None), ("curve", False), ("contention", False), ("within", None),
                          ("gbm_learning_rate", None)):
        if not hasattr(args, name):
            setattr(args, name, default)
    if args.trim is not None and (args.curve or args.contention or args.bins == "exact"):
        raise BenchArgumentError("--trim goes with the per-round benchmark at up to 255 bins (not with --curve, "
                                 "--contention or --bins exact)")
    if args.curve:
        check_curve_args(args)
        return
    for name in ("within", "gbm_learning_rate"):
        if getattr(args, name) is not None:
            raise BenchArgumentError(f"--{name.replace('_', '-')} applies to --curve only")
    if args.trim is not None and not 0.0 < args.trim <= 1.0:
        raise BenchArgumentError("--trim must be in (0, 1]")
    if args.contention:
        _contention_defaults(args)
    args.depth = 1 if args.depth is None else args.depth
    args.rounds = 100 if args.rounds is None else args.rounds
    args.slow_rounds = 5 if args.slow_rounds is None else args.slow_rounds
    args.algorithms = ["adaboost", "vadaboost"] if args.algorithms is None else args.algorithms
    if isinstance(args.data, (list, tuple)):
        if len(args.data) > 1:
            raise BenchArgumentError("--data takes one file (several data set names go with --curve)")
        args.data = args.data[0]
    if args.bins != "exact" and not 2 <= args.bins <= 255:
        raise BenchArgumentError("--bins must be in [2, 255] (fastboost and HistGradientBoosting) or 'exact'")
    if args.depth < 1 or args.rounds < 1 or args.repeat < 1 or args.threads < 1:
        raise BenchArgumentError("--depth, --rounds, --repeat and --threads must be >= 1")
    args.algorithms = [a for a in split_names(args.algorithms) if a != "none"]
    check_algorithms(args.algorithms)
    args.competitors = competitor_keys(args.competitors)
    unknown = [c for c in args.competitors if c not in COMPETITORS]
    if unknown:
        raise BenchArgumentError(f"unknown competitor(s) {unknown}; choose from {list(COMPETITORS)}")


def _contention_defaults(args):
    """--contention: its checks, and its defaults (200 rounds, fastboost adaboost, the competitors but the slow
    one, no compile-time runs)."""
    if args.no_subprocess:
        raise BenchArgumentError("--contention runs every fit in a child process (no --no-subprocess)")
    if args.contention_procs < 1:
        raise BenchArgumentError("--contention-procs must be >= 1")
    args.rounds = 200 if args.rounds is None else args.rounds
    args.algorithms = ["adaboost"] if args.algorithms is None else args.algorithms
    if args.competitors == ["all"]:
        args.competitors = [c for c in COMPETITORS if not ADAPTERS[c].slow]
    args.no_compile_time = True


# ================================================================================== the tasks
def _skip(skipped, key, label, message):
    skipped.append({"key": key, "label": label, "message": message})
    log(f"skipping {label}: {message}")


def _fastboost_tasks(args, algo, base, skipped):
    """The tasks of one fastboost algorithm: itself (with --bins exact: in exact mode and at 255 bins; with --trim:
    also trimmed), or none if it cannot run."""
    cls, _ = adapters.fastboost_class(algo)
    key, label = f"fastboost-{algo}", f"fastboost {cls.__name__}"  # (names checked by check_algorithms)
    if args.depth > 1 and "max_depth" not in cls().get_params():
        _skip(skipped, key, label, f"{cls.__name__} has no max_depth parameter: it fits stumps only (depth 1). The "
                                   f"competitors still run at depth {args.depth}.")
        return []
    task = {**base, "key": key, "library": "fastboost", "algorithm": algo}
    if args.bins == "exact":  # exact mode, and the same algorithm at 255 bins to compare with
        return [{**task, "bins": None, "label": f"{label} (exact)", "short": f"fastboost {algo} exact"},
                {**task, "bins": 255, "key": f"{key}-255", "label": f"{label} (255 bins)",
                 "short": f"fastboost {algo} 255"}]
    tasks = [{**task, "label": label, "short": f"fastboost {algo}"}]
    if args.trim is not None:  # the same algorithm with weight trimming, next to it
        tasks.append({**task, "trim": args.trim, "key": f"{key}-trim", "label": f"{label} (trim {args.trim:g})",
                      "short": f"fastboost {algo} trim {args.trim:g}"})
    return tasks


def _competitor_task(args, key, base, skipped):
    """The task of competitor ``key``, or None if it cannot run (no exact mode with --bins exact, not installed)."""
    label, _, short = COMPETITORS[key]
    if args.bins == "exact" and not ADAPTERS[key].exact:
        _skip(skipped, key, label,
              "no exact mode (histogram bins of at most 255 here); --bins exact compares exact splitters only")
        return None
    reason = unavailable(key)
    if reason is not None:
        _skip(skipped, key, label, reason)
        return None
    label += f" (depth {args.depth})" if args.depth > 1 else " (stumps)"
    return {**base, "key": key, "library": key, "label": label, "short": short}


def _plan(args, skipped):
    """The per-round tasks: the fastboost algorithms first (the first is the reference), then the competitors.
    A library that cannot run is added to ``skipped`` with why."""
    base = {"rounds": args.rounds, "depth": args.depth, "bins": args.bins, "threads": args.threads,
            "repeat": args.repeat, "seed": args.seed}
    tasks = [t for algo in args.algorithms for t in _fastboost_tasks(args, algo, base, skipped)]
    tasks += [t for t in (_competitor_task(args, key, base, skipped) for key in args.competitors) if t]
    return tasks


# ================================================================================== running them
def _data(args, tasks):
    """Load the data; a slow competitor fits --slow-rounds rounds from --slow-rows rows on (extrapolated)."""
    log("preparing data")
    Xtr, ytr, Xte, yte, desc = load_data(args)
    n = Xtr.shape[0]
    for t in tasks:
        if ADAPTERS[t["library"]].slow and n >= args.slow_rows:
            t["fit_rounds"] = min(args.rounds, args.slow_rounds)
    log(f"data: {desc['name']} {fmt_rows(n)} x {Xtr.shape[1]} train, {fmt_rows(Xte.shape[0])} test, {desc['dtype']}")
    return Xtr, ytr, Xte, yte, desc


def _run_here(tasks, data):
    """--no-subprocess: every task in this process (no peak RSS)."""
    results = []
    for t in tasks:
        log(f"{t['label']}: {t['repeat']} repeats in this process")
        res, _, other = run_task_here(run_task, t, data)
        if other is not None:
            res["other_load_cores"] = other
        res["peak_rss_mb"] = None
        results.append((t, res))
    return results


def _run_in_children(tasks, ddir, tmp, fb_root):
    """Every task in its own child process, on the data saved in ``ddir``."""
    results = []
    for t in tasks:
        log(f"{t['label']}: {t['repeat']} repeats in a child process")
        res, peak, wall, other = run_task_in_child(t, ddir, tmp, fb_root)
        res["peak_rss_mb"] = peak
        res["other_load_cores"] = other
        res["process_wall_s"] = wall
        results.append((t, res))
    return results


def _first_use(args, fb_tasks, n_features, tmp, fb_root):
    """fastboost's first-call time: a fresh process on an empty numba cache (cold), then one on the filled cache
    (warm)."""
    if not fb_tasks:
        return None
    if args.no_compile_time:
        return {"message": "not measured (--no-compile-time)"}
    ctask = {"key": "compile", "d": n_features, "bins": None if args.bins == "exact" else args.bins,
             "threads": args.threads, "algorithms": [t["algorithm"] for t in fb_tasks], "fastboost_root": fb_root,
             "t_start_epoch": parent_clock()}
    cache = Path(tmp) / "numba-cache"
    info = {"method": "fresh process, NUMBA_CACHE_DIR=<empty temporary dir> (cold), then a second fresh process on "
                      "the filled cache (warm); first fit + predict of each algorithm on 2000 rows, 5 rounds"}
    for phase in ("cold", "warm"):
        log(f"fastboost first-call time, {phase} numba cache (fresh process)")
        r, rc, _, wall, _ = run_child(dict(ctask), tmp, {"NUMBA_CACHE_DIR": str(cache)})
        info[phase] = r
        if r:
            log(f"  import {r['import_s']:.2f} s, first fits {r['first_total_s']:.2f} s, "
                f"second fits {r['second_total_s']:.3f} s (process wall {wall:.1f} s)")
        else:
            log(f"  failed (exit code {rc})")
    return info


def _merge(results, skipped):
    """One record per task (its labels and its result); a task that did not run is added to ``skipped``."""
    merged = []
    for t, res in results:
        r = {**{k: t[k] for k in ("key", "library", "label", "short")}, **res}
        if r["status"] != "ok":
            skipped.append({"key": r["key"], "label": r["label"], "message": r.get("message", r["status"])})
            log(f"{r['label']}: {r['status']}: {r.get('message')}")
        merged.append(r)
    return merged


def _saved(tmp, Xtr, ytr, Xte, yte):
    """The data saved for the children in ``tmp``/data."""
    ddir = Path(tmp) / "data"
    ddir.mkdir()
    save_data(ddir, Xtr, ytr, Xte, yte)
    return ddir


def _out_path(args, kind):
    stamp = time.strftime("%Y%m%d-%H%M%S")
    return Path(args.out) if args.out else Path("bench_results") / f"{kind}-{stamp}.json"


def _log_fastboost():
    """Log which fastboost runs."""
    import fastboost

    log(f"fastboost bench: fastboost {fastboost.__version__} from {Path(fastboost.__file__).parent}")


def _other_load_now():
    """(cores other processes use now or None, the load averages or None)."""
    load = other_load(1.0)
    loadavg = list(os.getloadavg()) if hasattr(os, "getloadavg") else None
    if load is not None:
        log(f"other processes use {load:.2f} cores now (load average {loadavg[0]:.2f})")
    return load, loadavg


def run(args, stdout=None):
    """Run the benchmark for parsed ``args`` (checked first, see ``check_args``); print the table; return the JSON
    payload (a dict). A bad argument or data file ends the command with one line on stderr and exit status 2."""
    try:
        check_args(args)
        stdout = stdout or sys.stdout
        if args.curve:
            return run_curve(args, stdout)
        if args.contention:
            return run_contention_benchmark(args, stdout)
        return run_per_round(args, stdout)
    except BenchArgumentError as error:
        exit_with(error)


def run_per_round(args, stdout):
    """The per-round benchmark for checked ``args``: every task timed, in child processes unless --no-subprocess;
    the table, JSON record and chart."""
    out = _out_path(args, "bench")
    _log_fastboost()
    skipped = []
    tasks = _plan(args, skipped)
    load_start, loadavg = _other_load_now()
    Xtr, ytr, Xte, yte, data_desc = _data(args, tasks)
    compile_info = {"message": "not measured (--no-subprocess)"}
    with tempfile.TemporaryDirectory(prefix="fastboost-bench-") as tmp:
        if args.no_subprocess:
            results = _run_here(tasks, {"Xtr": Xtr, "ytr": ytr, "Xte": Xte, "yte": yte})
        else:
            fb_root = fastboost_root()
            ddir = _saved(tmp, Xtr, ytr, Xte, yte)
            if not args.profile:  # the children read the files: free this process's copies
                Xtr = ytr = None
            Xte = yte = None
            gc.collect()
            compile_info = _first_use(args, [t for t in tasks if t["library"] == "fastboost"],
                                      data_desc["n_features"], tmp, fb_root)
            results = _run_in_children(tasks, ddir, tmp, fb_root)
    merged = _merge(results, skipped)
    profile = None
    if args.profile:
        fb = next((r for r in merged if r["library"] == "fastboost" and r["status"] == "ok"), None)
        log("profiling fastboost's kernels in this process")
        profile = profile_kernels(Xtr, ytr, args, fb["per_round_s"] if fb else None)
    payload = {
        **payload_header("fastboost bench"),
        "config": {"n": args.n, "n_test": args.n_test, "d": args.d, "depth": args.depth, "rounds": args.rounds,
                   "bins": args.bins, "threads": args.threads, "repeat": args.repeat, "dtype": args.dtype,
                   "seed": args.seed, "algorithms": args.algorithms, "competitors": args.competitors,
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
    return write_report(payload, out, plot=not args.no_plot, stdout=stdout)


def run_contention_benchmark(args, stdout):
    """--contention for checked ``args``: every task at 1 and --threads threads, alone and beside busy processes,
    each in a child process; the table and JSON record."""
    out = _out_path(args, "contention")
    _log_fastboost()
    skipped = []
    tasks = _plan(args, skipped)
    load_start, _ = _other_load_now()
    Xtr, ytr, Xte, yte, data_desc = _data(args, tasks)
    fb_root = fastboost_root()
    with tempfile.TemporaryDirectory(prefix="fastboost-bench-") as tmp:
        ddir = _saved(tmp, Xtr, ytr, Xte, yte)
        del Xtr, ytr, Xte, yte
        gc.collect()

        def run_one(task):
            res, _, _, _, other = run_child(child_task(task, ddir, fb_root), tmp)
            if res is not None:
                res["other_load_cores"] = other
            return res

        rows = run_contention(tasks, run_one, args.contention_procs, args.threads)
    policy = next((r["results"][k].get("wait_policy") for r in rows for k in r["results"]
                   if r["key"].startswith("fastboost") and r["results"][k]), None)
    header = (f"fastboost bench --contention: {data_desc['name']} {fmt_rows(data_desc['n_train'])} x "
              f"{data_desc['n_features']} {data_desc['dtype']}, depth {args.depth}, {args.rounds} rounds, median of "
              f"{args.repeat} fits; fastboost's threads wait: {policy}")
    payload = {**payload_header("fastboost bench --contention"),
               "config": {"n": args.n, "d": args.d, "depth": args.depth, "rounds": args.rounds, "bins": args.bins,
                          "threads": args.threads, "repeat": args.repeat, "dtype": args.dtype, "seed": args.seed,
                          "busy_processes": args.contention_procs, "busy_process": "python -c 'while True: pass'"},
               "data": data_desc, "machine": machine_info(args.threads), "other_load_at_start_cores": load_start,
               "fastboost_wait_policy": policy, "rows": rows, "skipped": skipped}
    return write_outputs(payload, format_contention(rows, args.contention_procs, header), out, None, stdout)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="fastboost bench", description=sys.modules[__package__].__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(parser)
    run(parser.parse_args(argv))
    return 0
