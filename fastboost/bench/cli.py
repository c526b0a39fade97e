"""The command line of ``fastboost bench``: its arguments, and ``run`` (tasks, children, report)."""
import argparse
import gc
import importlib
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from . import measure
from . import tasks as tasks_lib
from .curve import CURVE_DATASETS
from .measure import _other_load, _own_cpu, _system_busy_cpu, default_threads, log
from .profile import profile_kernels
from .report import GBM_NOTE, RSS_METHOD, fmt_rows, machine_info, payload_header, write_outputs, write_report
from .tasks import COMPETITORS, FASTBOOST_ALGORITHMS, _run_child, load_data, run_task


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
    g.add_argument("--bins", type=_bins, default=255,
                   help="bins per feature for every library (2..255); 'exact': fastboost's exact mode "
                        "(max_bins=None) beside fastboost at 255 bins and scikit-learn's AdaBoost (exact splits); "
                        "the histogram libraries have no exact mode and are skipped")
    g.add_argument("--threads", type=int, default=default_threads(), help="threads for every library "
                   "(default: cores available); scikit-learn AdaBoost is single-threaded")
    g.add_argument("--algorithms", nargs="+", default=None,
                   help="fastboost algorithms, space or comma separated (known: "
                        f"{', '.join(FASTBOOST_ALGORITHMS)}; default adaboost vadaboost, --curve adaboost); "
                        "'none' for no fastboost")
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


def _bins(text):
    if text.strip().lower() == "exact":
        return "exact"
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer or 'exact', got {text!r}") from None


#: --bins exact: the competitors that split exactly too
EXACT_COMPETITORS = ("sklearn-adaboost",)


def _split_names(values):
    return [v.strip().lower() for item in values for v in item.split(",") if v.strip()]


def run(args, stdout=None):
    """Run the benchmark for parsed ``args``; print the table; return the JSON payload (a dict)."""
    stdout = stdout or sys.stdout
    if getattr(args, "trim", None) is not None and (getattr(args, "curve", False) or getattr(args, "contention", False)
                                                    or args.bins == "exact"):
        raise SystemExit("fastboost bench: --trim goes with the per-round benchmark at up to 255 bins (not with "
                         "--curve, --contention or --bins exact)")
    if getattr(args, "curve", False):
        from .curve import CurveError, run_curve

        try:
            return run_curve(args, stdout)
        except CurveError as exc:
            print(f"fastboost bench: error: {exc}", file=sys.stderr)
            raise SystemExit(2) from None
    for name in ("within", "gbm_learning_rate"):
        if getattr(args, name, None) is not None:
            raise SystemExit(f"fastboost bench: --{name.replace('_', '-')} applies to --curve only")
    trim = getattr(args, "trim", None)
    if trim is not None and not 0.0 < trim <= 1.0:
        raise SystemExit("fastboost bench: --trim must be in (0, 1]")
    contention = getattr(args, "contention", False)
    if contention:
        if args.no_subprocess:
            raise SystemExit("fastboost bench: --contention runs every fit in a child process (no --no-subprocess)")
        if args.contention_procs < 1:
            raise SystemExit("fastboost bench: --contention-procs must be >= 1")
        args.rounds = 200 if args.rounds is None else args.rounds
        args.algorithms = ["adaboost"] if args.algorithms is None else args.algorithms
        if args.competitors == ["all"]:
            args.competitors = [c for c in COMPETITORS if c != "sklearn-adaboost"]
        args.no_compile_time = True
    args.depth = 1 if args.depth is None else args.depth
    args.rounds = 100 if args.rounds is None else args.rounds
    args.slow_rounds = 5 if args.slow_rounds is None else args.slow_rounds
    args.algorithms = ["adaboost", "vadaboost"] if args.algorithms is None else args.algorithms
    if isinstance(args.data, (list, tuple)):
        if len(args.data) > 1:
            raise SystemExit("fastboost bench: --data takes one file (several data set names go with --curve)")
        args.data = args.data[0]
    exact = args.bins == "exact"
    if not exact and not 2 <= args.bins <= 255:
        raise SystemExit("fastboost bench: --bins must be in [2, 255] (fastboost and HistGradientBoosting) or 'exact'")
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
    kind = "contention" if contention else "bench"
    out = Path(args.out) if args.out else Path("bench_results") / f"{kind}-{stamp}.json"
    log(f"fastboost bench: fastboost {fastboost.__version__} from {Path(fastboost.__file__).parent}")
    skipped, tasks = [], []
    base = {"rounds": args.rounds, "depth": args.depth, "bins": args.bins, "threads": args.threads,
            "repeat": args.repeat, "seed": args.seed}
    for algo in args.algorithms:
        cls, reason = tasks_lib.fastboost_class(algo)
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
        if exact:  # exact mode, and the same algorithm at 255 bins to compare with
            tasks.append({**base, "bins": None, "key": f"fastboost-{algo}", "library": "fastboost", "algorithm": algo,
                          "label": f"{label} (exact)", "short": f"fastboost {algo} exact"})
            tasks.append({**base, "bins": 255, "key": f"fastboost-{algo}-255", "library": "fastboost",
                          "algorithm": algo, "label": f"{label} (255 bins)", "short": f"fastboost {algo} 255"})
            continue
        tasks.append({**base, "key": f"fastboost-{algo}", "library": "fastboost", "algorithm": algo,
                      "label": label, "short": f"fastboost {algo}"})
        if trim is not None:  # the same algorithm with weight trimming, next to it
            tasks.append({**base, "trim": trim, "key": f"fastboost-{algo}-trim", "library": "fastboost",
                          "algorithm": algo, "label": f"{label} (trim {trim:g})",
                          "short": f"fastboost {algo} trim {trim:g}"})
    for key in comps:
        if exact and key not in EXACT_COMPETITORS:
            msg = "no exact mode (histogram bins of at most 255 here); --bins exact compares exact splitters only"
            skipped.append({"key": key, "label": COMPETITORS[key][0], "message": msg})
            log(f"skipping {COMPETITORS[key][0]}: {msg}")
            continue
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
            if contention:
                return _report_contention(args, tasks, ddir, tmp, fb_root, data_desc, skipped, load_start, out,
                                          stdout)
            fb_tasks = [t for t in tasks if t["library"] == "fastboost"]
            if fb_tasks and not args.no_compile_time:
                ctask = {"key": "compile", "d": data_desc["n_features"], "bins": None if exact else args.bins,
                         "threads": args.threads, "algorithms": [t["algorithm"] for t in fb_tasks],
                         "fastboost_root": fb_root,
                         "t_start_epoch": time.time() - (time.perf_counter() - measure.T_START)}
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
                         "t_start_epoch": time.time() - (time.perf_counter() - measure.T_START)}
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
        **payload_header("fastboost bench"),
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
    return write_report(payload, out, plot=not args.no_plot, stdout=stdout)


def _report_contention(args, tasks, ddir, tmp, fb_root, data_desc, skipped, load_start, out, stdout):
    """--contention: every task at 1 and --threads threads, alone and beside busy processes; table and JSON."""
    from .contention import format_contention, run_contention

    def run_child(task):
        child = {**task, "data_dir": str(ddir), "fastboost_root": fb_root if task["library"] == "fastboost" else None,
                 "t_start_epoch": time.time() - (time.perf_counter() - measure.T_START)}
        res, rc, _, _, other = _run_child(child, tmp)
        if res is not None:
            res["other_load_cores"] = other
        return res

    rows = run_contention(tasks, run_child, args.contention_procs, args.threads)
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
