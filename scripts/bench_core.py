#!/usr/bin/env python
"""Core-engine benchmark: fastboost vs scikit-learn's AdaBoostClassifier, side by side in ONE process.

Measures, on generated twonorm (fastboost.datasets.make_twonorm, 20 features):

* numba warm-up (JIT compilation or on-disk cache load) on tiny data, reported separately;
* for each size in --sizes: fastboost.AdaBoostClassifier(n_estimators=100, n_jobs=2) and
  fastboost.VadaBoostClassifier(lam=0.5, same settings), fitted --repeat times:
  binning time (``bin_time_``), total fit time (``fit_time_``), per-round time
  ``(fit_time_ - bin_time_) / n_estimators_`` (median over repeats) and test accuracy on a
  held-out twonorm sample;
* scikit-learn's AdaBoostClassifier(estimator=DecisionTreeClassifier(max_depth=1),
  n_estimators=R) on the 100 000-row data (and on 1 000 000 rows with --sklearn-1m), with a
  smaller number of rounds R; its per-round time is fit time / R, measured on R rounds;
* the ratio sklearn_per_round / fastboost_per_round at each size where both were measured;
* the machine, and peak RSS (ru_maxrss) after each phase.

Defaults reproduce the numbers of the core-engine issue's closing note:

    python scripts/bench_core.py

Results go to --out as JSON (default bench_results/bench_core.json).
"""
import argparse
import gc
import json
import os
import platform
import resource
import statistics
import sys
import time
from pathlib import Path

import numpy as np

T_START = time.perf_counter()


def log(msg):
    print(f"[{time.perf_counter() - T_START:7.1f} s] {msg}", flush=True)


def peak_rss_mb():
    """Peak resident set size of this process so far, in MB (ru_maxrss is KiB on Linux, bytes on macOS)."""
    r = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return r / (1024 * 1024) if sys.platform == "darwin" else r / 1024


def current_rss_mb():
    try:
        import psutil

        return psutil.Process().memory_info().rss / (1024 * 1024)
    except Exception:  # psutil is optional
        return None


RSS_PHASES = []


def record_rss(phase):
    entry = {"phase": phase, "peak_rss_mb": round(peak_rss_mb(), 1)}
    cur = current_rss_mb()
    if cur is not None:
        entry["current_rss_mb"] = round(cur, 1)
    RSS_PHASES.append(entry)
    extra = f", current RSS {entry['current_rss_mb']:.0f} MB" if cur is not None else ""
    log(f"peak RSS after {phase}: {entry['peak_rss_mb']:.0f} MB{extra}")
    return entry["peak_rss_mb"]


class CpuMeter:
    """CPU time used by OTHER processes while a block runs (system busy time minus this process's).

    On a shared machine another process's load slows a 2-thread fit far more than a
    single-threaded one (a parallel region waits for its slowest thread), so every timed
    fit records how many cores the rest of the machine used meanwhile.
    """

    def __enter__(self):
        self._snap = self._take()
        return self

    def __exit__(self, *exc):
        t1, busy1, own1 = self._take()
        t0, busy0, own0 = self._snap
        self.wall = t1 - t0
        self.own_cpu = None if own1 is None else own1 - own0
        self.other_cores = None
        if busy1 is not None and self.wall > 0:
            self.other_cores = max(0.0, (busy1 - busy0) - (own1 - own0)) / self.wall
        return False

    @staticmethod
    def _take():
        t = time.perf_counter()
        try:
            import psutil

            ct = psutil.cpu_times()
            busy = sum(ct) - ct.idle - getattr(ct, "iowait", 0.0)
            pt = psutil.Process().cpu_times()
            return t, busy, pt.user + pt.system
        except Exception:
            pt = os.times()
            return t, None, pt.user + pt.system


def other_load(seconds=2.0):
    """Cores used by other processes over a short window (None without psutil)."""
    with CpuMeter() as m:
        time.sleep(seconds)
    return m.other_cores


def git_state():
    """Commit of the fastboost checkout and whether fastboost/ differs from it (None outside git)."""
    import subprocess

    import fastboost

    root = Path(fastboost.__file__).resolve().parent.parent

    def run(*cmd):
        return subprocess.run(["git", "-C", str(root), *cmd], capture_output=True, text=True,
                              timeout=30, check=True).stdout.strip()

    try:
        commit = run("rev-parse", "HEAD")
        dirty = run("status", "--porcelain", "--", "fastboost")
    except Exception:
        return None
    return {"commit": commit, "fastboost_dirty": bool(dirty), "dirty_files": dirty.splitlines()[:20]}


def describe_git(g):
    if g is None:
        return "unknown (not a git checkout)"
    return f"{g['commit'][:12]}" + (" + uncommitted changes in fastboost/" if g["fastboost_dirty"] else " (clean)")


def cpu_model():
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine_info(n_jobs):
    import numba
    import scipy
    import sklearn

    import fastboost
    from fastboost._config import resolve_n_jobs

    try:
        layer = numba.threading_layer()  # only known after a parallel kernel has run
    except ValueError:
        layer = "unknown (no parallel kernel run yet)"
    try:
        affinity = len(os.sched_getaffinity(0))
    except AttributeError:
        affinity = None
    try:
        import psutil

        physical = psutil.cpu_count(logical=False)
    except Exception:
        physical = None
    try:
        import llvmlite

        llvmlite_version = llvmlite.__version__
    except Exception:
        llvmlite_version = None
    return {
        "cpu_model": cpu_model(),
        "logical_cores": os.cpu_count(),
        "physical_cores": physical,
        "cores_available_to_process": affinity,
        "total_ram_gib": _total_ram_gib(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "numba_threading_layer": layer,
        "numba_num_threads_pool": numba.config.NUMBA_NUM_THREADS,
        "fastboost_fit_threads": resolve_n_jobs(n_jobs),
        "versions": {
            "fastboost": fastboost.__version__,
            "numpy": np.__version__,
            "numba": numba.__version__,
            "llvmlite": llvmlite_version,
            "scipy": scipy.__version__,
            "scikit-learn": sklearn.__version__,
        },
        "env": {k: os.environ[k] for k in ("NUMBA_NUM_THREADS", "NUMBA_THREADING_LAYER", "OMP_NUM_THREADS",
                                           "NUMBA_CACHE_DIR", "NUMBA_DISABLE_JIT") if k in os.environ},
    }


def _total_ram_gib():
    try:
        import psutil

        return round(psutil.virtual_memory().total / 2 ** 30, 1)
    except Exception:
        return None


def make_data(n, seed, dtype):
    from fastboost.datasets import make_twonorm

    X, y = make_twonorm(n, n_features=20, random_state=seed)
    if dtype != np.float64:
        X = X.astype(dtype)
    return X, y


def accuracy(model, X, y):
    return float(np.mean(model.predict(X) == y))


# ---------------------------------------------------------------------------------------- phases
def warm_up(dtype, n_jobs, seed):
    """Compile (or load from numba's on-disk cache) every kernel fit/predict uses, on tiny data."""
    from fastboost import AdaBoostClassifier, VadaBoostClassifier

    X, y = make_data(2_000, seed + 12345, dtype)
    t0 = time.perf_counter()
    for cls, kw in ((AdaBoostClassifier, {}), (VadaBoostClassifier, {"lam": 0.5})):
        m = cls(n_estimators=5, n_jobs=n_jobs, **kw).fit(X, y)
        m.predict(X)
    return time.perf_counter() - t0


def bench_fastboost(cls, kw, X, y, Xte, yte, n_estimators, n_jobs, repeat, label):
    runs = []
    for r in range(repeat):
        gc.collect()
        model = cls(n_estimators=n_estimators, n_jobs=n_jobs, **kw)
        with CpuMeter() as cm:
            model.fit(X, y)
        wall = cm.wall
        per_round = (model.fit_time_ - model.bin_time_) / max(model.n_estimators_, 1)
        acc = accuracy(model, Xte, yte)
        runs.append({
            "bin_time_s": model.bin_time_,
            "fit_time_s": model.fit_time_,
            "fit_wall_s": wall,
            "per_round_s": per_round,
            "n_estimators_": int(model.n_estimators_),
            "test_accuracy": acc,
            "own_cpu_s": cm.own_cpu,
            "other_processes_cores": cm.other_cores,
        })
        log(f"  {label} repeat {r + 1}/{repeat}: bin {model.bin_time_:.3f} s, fit {model.fit_time_:.3f} s "
            f"(wall {wall:.3f} s), {model.n_estimators_} rounds, {1e3 * per_round:.3f} ms/round, "
            f"test acc {100 * acc:.2f}%{_load_note(cm)}")
        del model
    return summarise(runs)


def bench_sklearn(X, y, Xte, yte, rounds, repeat, label, seed):
    from sklearn.ensemble import AdaBoostClassifier as SkAda
    from sklearn.tree import DecisionTreeClassifier

    runs = []
    for r in range(repeat):
        gc.collect()
        model = SkAda(estimator=DecisionTreeClassifier(max_depth=1), n_estimators=rounds, random_state=seed)
        with CpuMeter() as cm:
            model.fit(X, y)
        fit = cm.wall
        n_fit = len(model.estimators_)
        acc = accuracy(model, Xte, yte)
        runs.append({
            "bin_time_s": None,
            "fit_time_s": fit,
            "fit_wall_s": fit,
            "per_round_s": fit / rounds,  # per requested round; see n_estimators_ for early stops
            "n_estimators_": n_fit,
            "test_accuracy": acc,
            "own_cpu_s": cm.own_cpu,
            "other_processes_cores": cm.other_cores,
        })
        log(f"  {label} repeat {r + 1}/{repeat}: fit {fit:.3f} s, {n_fit} rounds, "
            f"{1e3 * fit / rounds:.1f} ms/round (measured on {rounds} rounds), test acc {100 * acc:.2f}%"
            f"{_load_note(cm)}")
        del model
    return summarise(runs)


def _load_note(cm):
    if cm.other_cores is None:
        return ""
    return f", other processes {cm.other_cores:.2f} cores"


def summarise(runs):
    def med(key):
        vals = [r[key] for r in runs if r[key] is not None]
        return statistics.median(vals) if vals else None

    return {
        "runs": runs,
        "median": {k: med(k) for k in ("bin_time_s", "fit_time_s", "fit_wall_s", "per_round_s", "test_accuracy")},
        "min_per_round_s": min(r["per_round_s"] for r in runs),
        "max_per_round_s": max(r["per_round_s"] for r in runs),
        "n_estimators_": [r["n_estimators_"] for r in runs],
        "max_other_processes_cores": max((r["other_processes_cores"] for r in runs
                                          if r["other_processes_cores"] is not None), default=None),
    }


# ---------------------------------------------------------------------------------------- report
def fmt_rows(n):
    return f"{n:,}".replace(",", " ")


def print_table(results):
    head = (f"{'model':<50}{'rows':>11}{'rounds':>8}{'bin (s)':>9}{'fit (s)':>10}"
            f"{'per round (ms)':>16}{'test acc':>10}{'peak RSS':>10}{'other load':>12}")
    lines = [head, "-" * len(head)]
    for res in results:
        m = res["summary"]["median"]
        rounds = res["summary"]["n_estimators_"]
        rounds_s = str(rounds[0]) if len(set(rounds)) == 1 else f"{min(rounds)}-{max(rounds)}"
        bin_s = f"{m['bin_time_s']:.3f}" if m["bin_time_s"] is not None else "-"
        other = res["summary"]["max_other_processes_cores"]
        other_s = "-" if other is None else f"{other:.2f}"
        lines.append(
            f"{res['label']:<50}{fmt_rows(res['n_rows']):>11}{rounds_s:>8}{bin_s:>9}{m['fit_time_s']:>10.3f}"
            f"{1e3 * m['per_round_s']:>16.3f}{100 * m['test_accuracy']:>9.2f}%{res['peak_rss_mb_after']:>7.0f} MB"
            f"{other_s:>12}")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000],
                        help="training rows (default: 100000 1000000)")
    parser.add_argument("--n-features", type=int, default=20, help=argparse.SUPPRESS)
    parser.add_argument("--n-estimators", type=int, default=100, help="fastboost rounds (default 100)")
    parser.add_argument("--n-jobs", type=int, default=2, help="fastboost threads (default 2)")
    parser.add_argument("--repeat", type=int, default=3, help="fits per fastboost model and size (default 3)")
    parser.add_argument("--lam", type=float, default=0.5, help="VadaBoost lam (default 0.5)")
    parser.add_argument("--n-test", type=int, default=100_000, help="held-out test rows (default 100000)")
    parser.add_argument("--also-n-jobs-1", action="store_true",
                        help="also fit fastboost AdaBoost with n_jobs=1 (same thread count as scikit-learn)")
    parser.add_argument("--float32", action="store_true", help="benchmark on float32 X (default float64)")
    parser.add_argument("--sklearn-rounds", type=int, default=10,
                        help="rounds R for scikit-learn (default 10; per-round time = fit time / R)")
    parser.add_argument("--sklearn-repeat", type=int, default=None, help="fits of scikit-learn (default --repeat)")
    parser.add_argument("--sklearn-1m", action="store_true",
                        help="also time scikit-learn on 1 000 000 rows (~4 s per round)")
    parser.add_argument("--no-sklearn", action="store_true", help="skip scikit-learn entirely")
    parser.add_argument("--seed", type=int, default=0, help="data seed (test data uses seed + 1)")
    parser.add_argument("--out", default="bench_results/bench_core.json", help="JSON output path")
    args = parser.parse_args(argv)
    if args.n_features != 20:
        parser.error("twonorm is benchmarked at 20 features")
    dtype = np.float32 if args.float32 else np.float64
    sk_repeat = args.sklearn_repeat if args.sklearn_repeat is not None else args.repeat
    sk_sizes = [] if args.no_sklearn else [n for n in args.sizes if n == 100_000 or (args.sklearn_1m and n == 1_000_000)]
    if args.sklearn_1m and not args.no_sklearn and 1_000_000 not in args.sizes:
        sk_sizes.append(1_000_000)

    log(f"bench_core: sizes {args.sizes}, {args.n_estimators} rounds, n_jobs={args.n_jobs}, repeat {args.repeat}, "
        f"dtype {np.dtype(dtype).name}; scikit-learn: {args.sklearn_rounds} rounds on {sk_sizes or 'none'}")
    record_rss("start (imports)")
    load_before = other_load()
    loadavg_before = os.getloadavg() if hasattr(os, "getloadavg") else None
    if load_before is not None:
        log(f"other processes use {load_before:.2f} cores now (1-min load average "
            f"{loadavg_before[0]:.2f}){'  WARNING: machine not idle, timings will suffer' if load_before > 0.2 else ''}")

    import fastboost
    from fastboost import AdaBoostClassifier, VadaBoostClassifier

    git_before = git_state()
    log(f"fastboost {fastboost.__version__} from {Path(fastboost.__file__).parent}, git {describe_git(git_before)}")

    cache_dir = Path(fastboost.__file__).parent / "_kernels" / "__pycache__"
    n_cache = len(list(cache_dir.glob("*.nbc"))) if cache_dir.is_dir() else 0
    log(f"numba warm-up on 2 000 x 20 ({n_cache} cached .nbc files found in {cache_dir}) ...")
    warm = warm_up(dtype, args.n_jobs, args.seed)
    log(f"numba warm-up: {warm:.2f} s")
    record_rss("warm-up")
    machine = machine_info(args.n_jobs)

    log(f"generating held-out test set: {fmt_rows(args.n_test)} x 20")
    Xte, yte = make_data(args.n_test, args.seed + 1, dtype)

    results = []
    fb_models = [("fastboost AdaBoostClassifier", AdaBoostClassifier, {}),
                 (f"fastboost VadaBoostClassifier(lam={args.lam:g})", VadaBoostClassifier, {"lam": args.lam})]
    for n in args.sizes:
        log(f"generating twonorm {fmt_rows(n)} x 20 (seed {args.seed})")
        X, y = make_data(n, args.seed, dtype)
        record_rss(f"data {fmt_rows(n)}")
        runs = [(name, cls, kw, args.n_jobs) for name, cls, kw in fb_models]
        if args.also_n_jobs_1 and args.n_jobs != 1:
            runs.append((fb_models[0][0], fb_models[0][1], {}, 1))
        for name, cls, kw, jobs in runs:
            label = f"{name} n_jobs={jobs}"
            log(f"{label} on {fmt_rows(n)} x 20, {args.n_estimators} rounds, {args.repeat} repeats")
            summary = bench_fastboost(cls, kw, X, y, Xte, yte, args.n_estimators, jobs, args.repeat, label)
            rss = record_rss(f"{label} {fmt_rows(n)}")
            results.append({"label": label, "library": "fastboost", "model": cls.__name__, "params": kw,
                            "n_rows": n, "n_jobs": jobs, "summary": summary, "peak_rss_mb_after": rss})
        del X, y
        gc.collect()

    for n in sk_sizes:
        log(f"generating twonorm {fmt_rows(n)} x 20 (seed {args.seed}; same data as fastboost)")
        X, y = make_data(n, args.seed, dtype)
        label = f"sklearn AdaBoost(stump) [R={args.sklearn_rounds} rounds]"
        log(f"{label} on {fmt_rows(n)} x 20, {sk_repeat} repeats")
        summary = bench_sklearn(X, y, Xte, yte, args.sklearn_rounds, sk_repeat, label, args.seed)
        rss = record_rss(f"sklearn {fmt_rows(n)}")
        results.append({"label": label, "library": "scikit-learn", "model": "sklearn.ensemble.AdaBoostClassifier",
                        "params": {"estimator": "DecisionTreeClassifier(max_depth=1)",
                                   "n_estimators": args.sklearn_rounds},
                        "n_rows": n, "n_jobs": 1, "per_round_measured_on_rounds": args.sklearn_rounds,
                        "summary": summary, "peak_rss_mb_after": rss})
        del X, y
        gc.collect()

    # ---- ratios
    def find(library, model, n, jobs=None):
        for res in results:
            if (res["library"] == library and res["model"] == model and res["n_rows"] == n
                    and (jobs is None or res["n_jobs"] == jobs)):
                return res
        return None

    ratios = []
    for n in sk_sizes:
        for jobs in dict.fromkeys([args.n_jobs, 1]):
            sk = find("scikit-learn", "sklearn.ensemble.AdaBoostClassifier", n)
            fb = find("fastboost", "AdaBoostClassifier", n, jobs)
            if sk is None or fb is None:
                continue
            skm, fbm = sk["summary"]["median"], fb["summary"]["median"]
            fb_fit_per_round = fbm["fit_time_s"] / fb["summary"]["n_estimators_"][0]  # binning amortised
            ratios.append({
                "n_rows": n,
                "fastboost_n_jobs": jobs,
                "sklearn_per_round_s": skm["per_round_s"],
                "sklearn_rounds_measured": args.sklearn_rounds,
                "fastboost_per_round_s": fbm["per_round_s"],
                "ratio_per_round": skm["per_round_s"] / fbm["per_round_s"],
                "fastboost_fit_time_per_round_incl_binning_s": fb_fit_per_round,
                "ratio_incl_binning": skm["per_round_s"] / fb_fit_per_round,
            })

    scaling = []
    ns = sorted(args.sizes)
    for name, cls, _ in fb_models:
        for a, b in zip(ns, ns[1:]):
            ra, rb = find("fastboost", cls.__name__, a, args.n_jobs), find("fastboost", cls.__name__, b, args.n_jobs)
            ratio = rb["summary"]["median"]["per_round_s"] / ra["summary"]["median"]["per_round_s"]
            scaling.append({"model": cls.__name__, "from_rows": a, "to_rows": b, "rows_ratio": b / a,
                            "per_round_ratio": ratio})

    final_rss = record_rss("end")
    git_after = git_state()
    max_other = max((res["summary"]["max_other_processes_cores"] or 0.0) for res in results) if results else 0.0

    # ---- report
    print("", flush=True)
    print("=" * 118)
    print(f"fastboost core benchmark: twonorm n x 20 ({np.dtype(dtype).name}), held-out test {fmt_rows(args.n_test)} "
          f"rows; fastboost {args.n_estimators} rounds, n_jobs={args.n_jobs}, median of {args.repeat}; "
          f"scikit-learn median of {sk_repeat}")
    print(f"machine: {machine['cpu_model']}, {machine['logical_cores']} logical cores "
          f"({machine['cores_available_to_process']} available), {machine['total_ram_gib']} GiB RAM; "
          f"numba threading layer {machine['numba_threading_layer']}, pool {machine['numba_num_threads_pool']} "
          f"threads, fastboost fit threads {machine['fastboost_fit_threads']}")
    print("versions: " + ", ".join(f"{k} {v}" for k, v in machine["versions"].items())
          + f", Python {machine['python']}")
    code_line = f"fastboost code: git {describe_git(git_before)}"
    if git_after != git_before:
        code_line += f"  WARNING: the checkout changed during the run (now {describe_git(git_after)})"
    print(code_line)
    print(f"numba warm-up (tiny data, compile or cache load; not included below): {warm:.2f} s")
    print("per round: fastboost (fit_time_ - bin_time_) / n_estimators_; scikit-learn fit time / R, "
          f"measured on R={args.sklearn_rounds} rounds")
    print("peak RSS: ru_maxrss of this process after the row's phase (monotone over the run); "
          "other load: most cores used by other processes during any timed fit of the row")
    print()
    print(print_table(results))
    print()
    for r in ratios:
        print(f"ratio at {fmt_rows(r['n_rows'])} rows: sklearn per round / fastboost AdaBoost "
              f"(n_jobs={r['fastboost_n_jobs']}) per round = "
              f"{1e3 * r['sklearn_per_round_s']:.1f} ms (R={r['sklearn_rounds_measured']}) / "
              f"{1e3 * r['fastboost_per_round_s']:.3f} ms = {r['ratio_per_round']:.0f}x "
              f"(binning amortised over {args.n_estimators} rounds: {r['ratio_incl_binning']:.0f}x)")
    for s in scaling:
        print(f"scaling {s['model']}: {fmt_rows(s['from_rows'])} -> {fmt_rows(s['to_rows'])} rows "
              f"(x{s['rows_ratio']:g}): per-round time x{s['per_round_ratio']:.2f}")
    print("peak RSS by phase: " + "; ".join(f"{p['phase']}: {p['peak_rss_mb']:.0f} MB" for p in RSS_PHASES))
    if max_other > 0.2:
        print(f"WARNING: other processes used up to {max_other:.2f} cores during timed fits; fastboost's "
              f"{args.n_jobs}-thread fits are far more sensitive to this than single-threaded scikit-learn. "
              "Re-run on an idle machine before quoting these numbers.")
    print("=" * 118, flush=True)

    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    payload = {
        "benchmark": "bench_core",
        "command": " ".join([Path(sys.executable).name] + sys.argv),
        "timestamp_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "config": {**vars(args), "dtype": np.dtype(dtype).name, "sklearn_sizes": sk_sizes,
                   "sklearn_repeat": sk_repeat},
        "machine": machine,
        "git_before": git_before,
        "git_after": git_after,
        "warmup_s": warm,
        "other_processes_cores_at_start": load_before,
        "loadavg_at_start": loadavg_before,
        "max_other_processes_cores_during_fits": max_other,
        "numba_cache_files_before_run": n_cache,
        "results": results,
        "ratios": ratios,
        "scaling": scaling,
        "rss_phases": RSS_PHASES,
        "peak_rss_mb": final_rss,
        "total_wall_s": time.perf_counter() - T_START,
    }
    out.write_text(json.dumps(payload, indent=2))
    log(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
