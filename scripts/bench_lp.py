#!/usr/bin/env python
"""LPBoost on twonorm: time per column (weak learner and master LP apart), peak memory, and a
warm-started round of the master LP against the same LP solved from scratch with
scipy.optimize.linprog.

Per size (default 10 000, 100 000 and 1 000 000 rows x 20 features; float32 X, seed 0), one fresh
child process fits LPBoostClassifier(nu=0.1, n_estimators=--columns) on stumps, after an untimed
fit on 2 000 rows (numba's compilation is not timed). A fit callback runs between rounds and logs
the wall clock and the estimator's running LP seconds, so each column's time splits into the
master LP (the new margin column, adding it, HiGHS's re-solve from the previous basis: what
``lp_time_`` counts) and the rest, the weak learner (the compiled histogram stump search and the
loop around it). Totals come from the fitted attributes: learner = fit_time_ - bin_time_ -
lp_time_. The fit stops after the first column that ends past --budget seconds (a callback); a
child still running at --hard-limit seconds is killed and what it logged is kept. Peak RSS: the
child's high-water mark, reset just before the fit (the data and the warmed-up library are in it).

Warm against scratch (sizes --warm-sizes, default 10 000 and 100 000): the columns the fit
generated, rebuilt from its stumps as margins y_i h_j(x_i). For each k in --ks (and the last k the
fit reached): a master holding the first k columns, solved (untimed), gets column k+1 and is
re-solved (the warm round, timed; median of --repeat runs), against linprog_soft_margin_lp on the
same k+1 columns built and solved from scratch, and the dual master solved from scratch by HiGHS.
The LP values must agree to 1e-7 (with each other and with the fit's own value at column k+1).
Ratio: linprog from scratch / warm round.

    python scripts/bench_lp.py                     # 10k, 100k, 1M; writes bench-lp-results/
    python scripts/bench_lp.py --sizes 1000000 --budget 600 --hard-limit 900
    python scripts/bench_lp.py --quick             # a smoke run in seconds
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections import namedtuple
from pathlib import Path

import numpy as np

SCRIPT = Path(__file__).resolve()
ROOT = SCRIPT.parent.parent
# this checkout's fastboost, before any installed copy; a child (--child) imports its parent's, named in
# FASTBOOST_ROOT, so the two share one build and its compiled kernels
FASTBOOST_ROOT = os.environ.get("FASTBOOST_ROOT", str(ROOT))
if FASTBOOST_ROOT not in sys.path:
    sys.path.insert(0, FASTBOOST_ROOT)

DEFAULT_OUT = "bench-lp-results"
DEFAULT_SIZES = [10_000, 100_000, 1_000_000]
DEFAULT_WARM_SIZES = [10_000, 100_000]
DEFAULT_KS = [25, 50, 100, 200, 400]
#: the LP time per column is reported over the columns up to each of these (and up to the last)
WINDOW_ENDS = [10, 50, 100, 200, 400]
N_FEATURES = 20
NU = 0.1
SEED = 0
WARM_UP_ROWS = 2_000
#: warm and scratch LP values must agree this closely
VALUE_TOLERANCE = 1e-7
#: by default the warm-against-scratch runs are repeated 3 times up to this many rows, once above
REPEAT_ROWS = 20_000
QUICK = {"sizes": [1_000, 2_000], "warm_sizes": [2_000], "columns": 20, "ks": [5, 10, 15], "budget": 60.0,
         "warm_budget": 60.0, "repeat": 2}

#: LPBoost's LP counters read between rounds (seconds: what becomes ``lp_time_``; the last HiGHS run's
#: own seconds and simplex iterations)
LPCounters = namedtuple("LPCounters", ["lp_seconds", "solve_seconds", "simplex_iterations"])
#: one child process: its logged lines, exit code, the time.time() it was killed at the hard limit (None:
#: not killed), its peak RSS as the OS reports it when it ends (MB; None where unknown) and its wall time
ChildRun = namedtuple("ChildRun", ["lines", "exit_code", "killed_epoch", "peak_rss_mb", "wall_seconds"])


# ======================================================================================= memory
from fastboost.bench.measure import current_rss_mb as rss_mb  # noqa: E402  (after the sys.path line)
from fastboost.bench.measure import maxrss_to_mb as _maxrss_mb  # noqa: E402
from fastboost.bench.measure import reset_peak_rss  # noqa: E402
from fastboost.bench.measure import self_peak_rss_mb as peak_rss_mb  # noqa: E402


# ======================================================================================= the child
def twonorm32(n, seed):
    from fastboost.datasets import make_twonorm

    X, y = make_twonorm(n, n_features=N_FEATURES, random_state=seed)
    return X.astype(np.float32), y


def lp_counters(clf):
    """The running LP counters of an LPBoost fit in progress, read between rounds from the fit's working
    state (the fit object's master; None where absent)."""
    fit = clf.__dict__.get("_fitting")
    master = (fit.extra.get("master") if fit is not None else None) or {}
    sol = master.get("solution")
    return LPCounters(master.get("seconds"), getattr(sol, "seconds", None), getattr(sol, "iterations", None))


def stump_margins(X, y, rounds):
    """int8[len(rounds), n]: y_i h_j(x_i) of the stumps in ``rounds`` (h: ``left`` where x <= threshold,
    else ``right``; twonorm has no missing values), y_i = +1 for the class +1."""
    ys = np.where(y == 1, 1, -1).astype(np.int8)
    M = np.empty((len(rounds), X.shape[0]), np.int8)
    for j, r in enumerate(rounds):
        h = np.where(X[:, int(r["feature"])] <= r["threshold"], int(r["left"]), int(r["right"])).astype(np.int8)
        np.multiply(h, ys, out=M[j])
    return M


class Log:
    """The child's output: one JSON object a line, flushed at once (a killed child keeps what it wrote)."""

    def __init__(self, path):
        self.fh = open(path, "a")

    def write(self, kind, **fields):
        self.fh.write(json.dumps({"kind": kind, **fields}) + "\n")
        self.fh.flush()


class ColumnLog:
    """Fit callback: a record per column (called after the master's solve of every round), and a stop once
    the fit has run ``budget`` seconds."""

    def __init__(self, log, budget, n):
        self.log, self.budget, self.n = log, budget, n
        self.clf = None
        self.started = None
        self.rounds = None  # the records of every column (the fitted model drops the voters of weight 0)
        self.next_report = time.perf_counter() + 30.0

    def __call__(self, done, rounds):
        now = time.perf_counter() - self.started
        counters = lp_counters(self.clf)
        self.rounds = rounds
        last = rounds[done - 1]
        self.log.write("round", column=done, seconds=now, lp_seconds=counters.lp_seconds,
                       solve_seconds=counters.solve_seconds, simplex_iterations=counters.simplex_iterations,
                       lp_value=float(last["lp_value"]), n_active=int(last["n_active"]), rss_mb=rss_mb())
        if time.perf_counter() >= self.next_report or done in WINDOW_ENDS:
            self.next_report = time.perf_counter() + 30.0
            lp = f", LP {counters.lp_seconds:.1f} s" if counters.lp_seconds is not None else ""
            print(f"  {self.n} rows: column {done} at {now:.1f} s{lp}", file=sys.stderr, flush=True)
        return now >= self.budget


def warm_up(threads):
    """One small fit and one of each LP solve, untimed: compilation and imports stay out of the timings."""
    from fastboost import LPBoostClassifier
    from fastboost._lp import linprog_soft_margin_lp, soft_margin_caps, solve_soft_margin_lp

    X, y = twonorm32(WARM_UP_ROWS, seed=12345)
    log = ColumnLog(Log(os.devnull), np.inf, WARM_UP_ROWS)
    clf = log.clf = LPBoostClassifier(5, nu=NU, n_jobs=threads)
    log.started = time.perf_counter()
    with warnings.catch_warnings():  # 5 columns may leave the LP's value at 0: fastboost warns, rightly
        warnings.filterwarnings("ignore", message=".*soft-margin LP's value")
        clf.fit(X, y, callbacks=[log])
    M = stump_margins(X, y, log.rounds)
    caps = soft_margin_caps(np.full(len(y), 1.0 / len(y)), NU)
    solve_soft_margin_lp(M, caps)
    linprog_soft_margin_lp(M, caps)


def fit_columns(log, X, y, spec):
    """The timed fit; writes a "round" line per column and a "fit" line; returns the column records."""
    from fastboost import LPBoostClassifier

    columns = ColumnLog(log, spec["budget"], len(y))
    clf = columns.clf = LPBoostClassifier(n_estimators=spec["columns"], nu=NU, n_jobs=spec["threads"])
    reset = reset_peak_rss()
    before = rss_mb()
    log.write("fit_started", epoch=time.time())  # a killed fit: how long its unfinished column ran
    columns.started = time.perf_counter()
    clf.fit(X, y, callbacks=[columns])
    call_seconds = time.perf_counter() - columns.started  # fit_time_ plus input checks before its clock starts
    n_columns = 0 if columns.rounds is None else len(columns.rounds)
    if clf.stopped_by_rule_:
        stop = "rule"
    elif n_columns >= spec["columns"]:
        stop = "cap"
    else:
        stop = "budget"
    log.write("fit", columns=n_columns, kept_voters=int(clf.n_estimators_), call_seconds=call_seconds,
              fit_seconds=clf.fit_time_, bin_seconds=clf.bin_time_, lp_seconds=clf.lp_time_, stop=stop,
              lp_value=float(clf.objective_), rss_before_fit_mb=before, peak_rss_mb=peak_rss_mb(), peak_reset=reset)
    return columns.rounds


def warm_against_scratch(M, caps, k, repeat):
    """Warm round (k columns solved, add column k+1, solve) against linprog and HiGHS from scratch on the
    k+1 columns; ``repeat`` interleaved pairs of the first two (a fresh k-column master for each)."""
    from fastboost._lp import SoftMarginMaster, linprog_soft_margin_lp, solve_soft_margin_lp

    warm_seconds, scratch_seconds = [], []
    for _ in range(repeat):
        master = SoftMarginMaster(caps)
        master.add_columns(M[:k])
        master.solve()
        started = time.perf_counter()
        master.add_columns(M[k:k + 1])
        warm = master.solve()
        warm_seconds.append(time.perf_counter() - started)
        started = time.perf_counter()
        scratch = linprog_soft_margin_lp(M[:k + 1], caps)
        scratch_seconds.append(time.perf_counter() - started)
    started = time.perf_counter()
    cold = solve_soft_margin_lp(M[:k + 1], caps)
    cold_seconds = time.perf_counter() - started
    return {"k": k, "runs": repeat, "warm_seconds": warm_seconds, "scratch_seconds": scratch_seconds,
            "cold_highs_seconds": cold_seconds, "warm_value": warm.value, "warm_beta": warm.beta,
            "scratch_value": scratch.value, "cold_value": cold.value, "warm_iterations": warm.iterations,
            "scratch_iterations": scratch.iterations, "cold_iterations": cold.iterations}


def warm_ks(requested, n_columns):
    """The k of the warm rounds: those requested with a column k+1 to add, and the last k the fit reached."""
    ks = sorted({k for k in requested if 1 <= k < n_columns})
    if n_columns >= 2 and (not ks or ks[-1] < n_columns - 1) and max(requested) >= n_columns:
        ks.append(n_columns - 1)
    return ks


def child_main(spec_path):
    spec = json.loads(Path(spec_path).read_text())
    log = Log(spec["log"])
    started = time.perf_counter()
    warm_up(spec["threads"])
    warm_up_seconds = time.perf_counter() - started
    after_warm_up = rss_mb()
    started = time.perf_counter()
    X, y = twonorm32(spec["n"], SEED)
    log.write("start", n=spec["n"], warm_up_seconds=warm_up_seconds, data_seconds=time.perf_counter() - started,
              rss_after_warm_up_mb=after_warm_up, rss_with_data_mb=rss_mb(), pid=os.getpid())
    rounds = fit_columns(log, X, y, spec)
    if spec["warm"] and rounds is not None:
        from fastboost._lp import soft_margin_caps

        M = stump_margins(X, y, rounds)
        caps = soft_margin_caps(np.full(len(y), 1.0 / len(y)), NU)
        warm_started = time.perf_counter()
        for k in warm_ks(spec["ks"], len(rounds)):
            if time.perf_counter() - warm_started >= spec["warm_budget"]:
                log.write("warm_skipped", k=k, reason=f"warm-against-scratch budget of {spec['warm_budget']:g} s spent")
                continue
            result = warm_against_scratch(M, caps, k, spec["repeat"])
            result["fit_value"] = float(rounds[k]["lp_value"])  # the fit's master over the same k+1 columns
            log.write("warm", n=len(y), **result)
            print(f"  {len(y)} rows, k = {k}: warm {min(result['warm_seconds']):.3f} s, linprog "
                  f"{min(result['scratch_seconds']):.3f} s", file=sys.stderr, flush=True)
    log.write("done", peak_rss_mb=peak_rss_mb())
    return 0


# ======================================================================================= the parent
def run_child(spec, workdir, hard_limit):
    """Run one size in a fresh process; kill it after ``hard_limit`` seconds. Its peak RSS comes from
    wait4 (the kernel's figure for the ended child, killed or not)."""
    n = spec["n"]
    spec = {**spec, "log": str(workdir / f"log-{n}.jsonl")}
    spec_path = workdir / f"spec-{n}.json"
    spec_path.write_text(json.dumps(spec))
    started = time.perf_counter()
    import fastboost

    env = {**os.environ, "FASTBOOST_ROOT": str(Path(fastboost.__file__).resolve().parent.parent)}
    proc = subprocess.Popen([sys.executable, str(SCRIPT), "--child", str(spec_path)], env=env)
    killed, peak = None, None
    if hasattr(os, "wait4"):
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                proc.returncode = os.waitstatus_to_exitcode(status)
                peak = _maxrss_mb(usage.ru_maxrss)
                break
            if killed is None and time.perf_counter() - started > hard_limit:
                proc.kill()
                killed = time.time()
            time.sleep(0.1)
    else:
        try:
            proc.wait(timeout=hard_limit)
        except subprocess.TimeoutExpired:
            proc.kill()
            killed = time.time()
            proc.wait()
    wall = time.perf_counter() - started
    path = Path(spec["log"])
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []
    return ChildRun(lines, proc.returncode, killed, peak, wall)


def _mean(values):
    values = [v for v in values if v is not None]
    return statistics.fmean(values) if values else None


def _mean_ms(part, key):
    mean = _mean([c[key] for c in part])
    return None if mean is None else 1e3 * mean


def per_column(rounds, first_start):
    """Each column's wall time, LP time and learner time (wall - LP), from the round log (its clock starts at
    the fit call). The first column starts ``first_start`` seconds after the call."""
    out = []
    previous = {"seconds": first_start, "lp_seconds": 0.0}
    for r in rounds:
        wall = r["seconds"] - previous["seconds"]
        lp = None if r["lp_seconds"] is None or previous["lp_seconds"] is None \
            else r["lp_seconds"] - previous["lp_seconds"]
        out.append({"column": r["column"], "wall_seconds": wall, "lp_seconds": lp,
                    "learner_seconds": None if lp is None else wall - lp, "solve_seconds": r["solve_seconds"],
                    "simplex_iterations": r["simplex_iterations"], "lp_value": r["lp_value"],
                    "n_active": r["n_active"], "rss_mb": r["rss_mb"]})
        previous = r
    return out


def windows(columns):
    """Mean per-column times over columns 1-10, 11-50, ... (WINDOW_ENDS) and up to the last column."""
    n = len(columns)
    ends = [e for e in WINDOW_ENDS if e < n] + ([n] if n else [])
    out, first = [], 1
    for end in ends:
        part = columns[first - 1:end]
        out.append({"first": first, "last": end, "lp_ms": _mean_ms(part, "lp_seconds"),
                    "learner_ms": _mean_ms(part, "learner_seconds"), "solve_ms": _mean_ms(part, "solve_seconds"),
                    "simplex_iterations": _mean([c["simplex_iterations"] for c in part])})
        first = end + 1
    return out


def size_summary(n, run):
    """One size's numbers from its child's log (a killed child: from the columns it logged)."""
    start = next((line for line in run.lines if line["kind"] == "start"), {})
    fit_started = next((line["epoch"] for line in run.lines if line["kind"] == "fit_started"), None)
    fit = next((line for line in run.lines if line["kind"] == "fit"), None)
    rounds = [line for line in run.lines if line["kind"] == "round"]
    n_columns = len(rounds)
    if fit is not None:
        fit_s, bin_s, lp_s, stop = fit["fit_seconds"], fit["bin_seconds"], fit["lp_seconds"], fit["stop"]
        peak = fit["peak_rss_mb"] if fit["peak_reset"] else None
        before = fit["rss_before_fit_mb"]
    else:  # killed (or failed) during the fit: up to its last logged column, binning not known
        last = rounds[-1] if rounds else {}
        fit_s, bin_s, lp_s = last.get("seconds"), None, last.get("lp_seconds")
        stop = "killed" if run.killed_epoch is not None else f"failed (exit code {run.exit_code})"
        peak, before = run.peak_rss_mb, start.get("rss_with_data_mb")
    learner_s = None if fit_s is None or lp_s is None else fit_s - (bin_s or 0.0) - lp_s
    # the first column starts after the input checks (before fit_time_'s clock) and the binning
    cols = per_column(rounds, 0.0 if fit is None else fit["call_seconds"] - fit_s + bin_s)
    growth = None if peak is None or before is None or not n_columns else (peak - before) * 2 ** 20 / (n_columns * n)
    killed_during = None if run.killed_epoch is None else ("fit" if fit is None else "comparison")
    # killed during the fit: the column after the last logged one had run this long without finishing
    unfinished = None if killed_during != "fit" or fit_started is None \
        else run.killed_epoch - fit_started - (rounds[-1]["seconds"] if rounds else 0.0)

    def per_col_ms(seconds):
        return None if seconds is None or not n_columns else 1e3 * seconds / n_columns

    return {"n": n, "columns": n_columns, "stop": stop, "kept_voters": fit["kept_voters"] if fit else None,
            "fit_seconds": fit_s, "bin_seconds": bin_s, "lp_seconds": lp_s, "learner_seconds": learner_s,
            "binning_in_learner": fit is None, "lp_ms_per_column": per_col_ms(lp_s),
            "learner_ms_per_column": per_col_ms(learner_s),
            "lp_value": fit["lp_value"] if fit else (rounds[-1]["lp_value"] if rounds else None),
            "master_nonzeros": n_columns * n, "peak_growth_bytes_per_entry": growth,
            "rss_after_warm_up_mb": start.get("rss_after_warm_up_mb"),
            "rss_before_fit_mb": before, "fit_peak_rss_mb": peak, "process_peak_rss_mb": run.peak_rss_mb,
            "killed": run.killed_epoch is not None, "killed_during": killed_during,
            "unfinished_column_seconds": unfinished, "exit_code": run.exit_code,
            "process_wall_seconds": run.wall_seconds,
            "warm_up_seconds": start.get("warm_up_seconds"), "windows": windows(cols), "per_column": cols}


def warm_summary(n, run, sizes):
    """The warm-against-scratch records of one size, with medians, ratio and the value checks."""
    by_column = {c["column"]: c for s in sizes if s["n"] == n for c in s["per_column"]}
    out = []
    for line in run.lines:
        if line["kind"] == "warm_skipped":
            out.append({"n": n, "k": line["k"], "skipped": line["reason"]})
            continue
        if line["kind"] != "warm":
            continue
        rec = {key: value for key, value in line.items() if key != "kind"}
        warm, scratch = statistics.median(rec["warm_seconds"]), statistics.median(rec["scratch_seconds"])
        own = by_column.get(rec["k"] + 1, {}).get("lp_seconds")
        values = [rec["scratch_value"], rec["cold_value"], rec["fit_value"]]
        difference = max(abs(v - rec["warm_value"]) for v in values)
        rec.update({"warm_ms": 1e3 * warm, "scratch_ms": 1e3 * scratch,
                    "cold_highs_ms": 1e3 * rec["cold_highs_seconds"],
                    "fit_round_lp_ms": None if own is None else 1e3 * own, "ratio": scratch / warm,
                    "value_difference": difference, "agree": difference <= VALUE_TOLERANCE})
        out.append(rec)
    return out


# ======================================================================================= report
def num(x):
    """A number for the tables: about 3 significant digits, '–' for none."""
    if x is None or not np.isfinite(x):
        return "–"
    a = abs(x)
    if a >= 100:
        return f"{x:.0f}"
    if a >= 10:
        return f"{x:.1f}"
    if a >= 1:
        return f"{x:.2f}"
    return f"{x:.3f}"


def rows(n):
    return f"{n:,}".replace(",", " ")


STOPS = {"rule": "LP rule", "cap": "column cap", "budget": "time budget", "killed": "killed at hard limit"}


def machine_facts(threads):
    import importlib.metadata

    versions = {"python": platform.python_version()}
    for name in ("fastboost", "numpy", "scipy", "numba", "highspy"):
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = None
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as fh:
            cpu = next((line.split(":", 1)[1].strip() for line in fh if line.lower().startswith("model name")), cpu)
    except OSError:
        pass
    try:
        ram = round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2 ** 30, 1)
    except (ValueError, OSError, AttributeError):
        ram = None
    try:
        available = len(os.sched_getaffinity(0))
    except AttributeError:
        available = os.cpu_count()
    return {"platform": platform.platform(), "cpu": cpu, "cpu_count": os.cpu_count(), "cores_available": available,
            "ram_gib": ram, "threads": threads, "versions": versions, "git": git_state()}


def git_state():
    """The checkout's commit, with "+ changes" when its tracked files differ from it; None outside git."""
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                                check=True).stdout.strip()
        changed = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                                 capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    return commit + (" + changes" if changed else "")


def _load(value):
    return "–" if value is None else " / ".join(f"{v:.2f}" for v in value)


WARM_TABLE_TEXT = (
    "Columns: those each fit generated, in order (rebuilt from its stumps). Warm round: a master holding the first k "
    "columns and solved (untimed) gets column k+1 and is re-solved (adding the column included; median of the "
    "runs). linprog: `linprog_soft_margin_lp` on the same k+1 columns, building the LP included "
    "(`scipy.optimize.linprog(method=\"highs\")`, the primal form; median of the runs, interleaved with the warm "
    "rounds). HiGHS from scratch: the dual master built and solved once from nothing. Fit's round: the LP time of "
    "column k+1 in the fit itself (a warm round that also computes the margin column). Value difference: the largest "
    "gap between the warm round's LP value and linprog's, HiGHS-from-scratch's and the fit's.")


def markdown(payload):
    meta = payload["meta"]
    m = meta["machine"]
    v = m["versions"]
    libs = ", ".join(f"{k} {val}" for k, val in v.items() if k != "python" and val is not None)
    cfg = meta["config"]
    lines = ["# LPBoost: time per column, memory, warm-started master against linprog", "",
             f"Command: `{meta['command']}` (without `--out` the script writes `{DEFAULT_OUT}/`; `--quick` is a "
             "smoke run in seconds)", "",
             f"Machine: {m['platform']}, {m['cpu']}, {m['cpu_count']} cores ({m['cores_available']} available), "
             f"{m['ram_gib']} GiB RAM; Python {v['python']}; {libs}; fastboost checkout {m['git']}. "
             f"Date: {meta['date']}. Run time: "
             f"{meta['elapsed_seconds'] / 60:.1f} min. Load average (1, 5, 15 min) before the run "
             f"{_load(meta['load_average_before'])}, after it {_load(meta['load_average_after'])} (the run "
             "included).", "",
             f"Data: twonorm, {N_FEATURES} features, float32, seed {SEED}. Estimator: "
             f"`LPBoostClassifier(nu={NU}, n_estimators={cfg['columns']}, n_jobs={cfg['threads']})`, stumps, "
             f"one fresh process per size, after an untimed fit on {rows(WARM_UP_ROWS)} rows (compilation not "
             f"timed). Each fit stops at the LP's rule (no stump prices out: the LP over all stumps is solved), "
             f"at the column cap, or after the first column that ends past the time budget "
             f"({cfg['budget']:g} s); a process still running at its hard limit ("
             + ", ".join(f"{s['hard_limit_seconds']:g} s at {rows(s['n'])} rows" for s in payload["sizes"])
             + ") is killed.", "",
             "## Time per column", "",
             "LP: the master's share of the fit (`lp_time_`: the new margin column, adding it, HiGHS's re-solve from "
             "the previous basis). Learner: `fit_time_ - bin_time_ - lp_time_` (the compiled stump search and the "
             "loop around it; when the LP's rule stops a fit, its last learner round found no column and is "
             "included). Per column: divided by the columns fitted. RSS before fit: the process with the library "
             "warmed up and the data loaded; peak: its high-water mark during the fit (reset just before it); "
             "bytes per entry: (peak - before) / (rows x columns), the master's dense rows and everything else "
             "the fit holds.", "",
             "| rows | columns | stopped by | fit s | binning s | LP s | learner s | LP ms/column | "
             "learner ms/column | RSS before fit MB | peak RSS in fit MB | bytes per entry | LP value | "
             "kept voters |", "|---" * 14 + "|"]
    for s in payload["sizes"]:
        lines.append("| " + " | ".join([
            rows(s["n"]), str(s["columns"]), STOPS.get(s["stop"], s["stop"]), num(s["fit_seconds"]),
            num(s["bin_seconds"]), num(s["lp_seconds"]), num(s["learner_seconds"]), num(s["lp_ms_per_column"]),
            num(s["learner_ms_per_column"]), num(s["rss_before_fit_mb"]), num(s["fit_peak_rss_mb"]),
            num(s["peak_growth_bytes_per_entry"]),
            "–" if s["lp_value"] is None else f"{s['lp_value']:.6f}",
            "–" if s["kept_voters"] is None else str(s["kept_voters"])]) + " |")
    for s in payload["sizes"]:
        if not s["binning_in_learner"]:
            continue
        unfinished = s["unfinished_column_seconds"]
        running = "" if unfinished is None else (
            f" Column {s['columns'] + 1} had run {num(unfinished)} s (its learner round and its master re-solve) "
            "without finishing when the process was killed.")
        lines += ["", f"{rows(s['n'])} rows: {STOPS.get(s['stop'], s['stop'])} during the fit. Its times run to the "
                  "last column logged, binning is in the learner's share, and the peak RSS is the whole process's "
                  f"(as the OS reports it for the ended child).{running}"]
    lines += ["", "## LP time per column as the master grows", "",
              "Means over the columns of each range, from the wall clock and the estimator's running LP seconds read "
              "between rounds: LP as above, HiGHS solve (the simplex run alone), learner (the column's wall time "
              "minus its LP time; the first column's starts after the input checks and binning), simplex "
              "iterations per re-solve.", "",
              "| rows | columns | LP ms/column | HiGHS solve ms/column | simplex iterations/solve | "
              "learner ms/column |", "|---" * 6 + "|"]
    for s in payload["sizes"]:
        for w in s["windows"]:
            lines.append(f"| {rows(s['n'])} | {w['first']}–{w['last']} | {num(w['lp_ms'])} | {num(w['solve_ms'])} | "
                         f"{num(w['simplex_iterations'])} | {num(w['learner_ms'])} |")
    lines += ["", "## Warm-started round against linprog from scratch", ""]
    if payload["warm_vs_scratch"]:
        lines += [WARM_TABLE_TEXT, "", "| rows | k | runs | warm round ms | fit's round k+1 LP ms | "
                  "HiGHS from scratch ms | linprog from scratch ms | linprog / warm | value difference | "
                  "agree to 1e-7 |", "|---" * 10 + "|"]
    else:
        lines.append("Not run at these sizes (`--warm-sizes`).")
    for r in payload["warm_vs_scratch"]:
        if "skipped" in r:
            lines.append(f"| {rows(r['n'])} | {r['k']} | 0 | skipped: {r['skipped']} | | | | | | |")
            continue
        lines.append(f"| {rows(r['n'])} | {r['k']} | {r['runs']} | {num(r['warm_ms'])} | {num(r['fit_round_lp_ms'])} | "
                     f"{num(r['cold_highs_ms'])} | {num(r['scratch_ms'])} | {num(r['ratio'])} | "
                     f"{r['value_difference']:.1e} | {'yes' if r['agree'] else '**no**'} |")
    for note in comparison_notes(payload):
        lines += ["", note]
    lines += ["", "## Notes", ""] + [f"- {note}" for note in payload["notes"]] + [""]
    return "\n".join(lines)


def comparison_notes(payload):
    """Per warm size: the k its fit did not reach, and the k a killed process did not finish."""
    cfg = payload["meta"]["config"]
    notes = []
    for s in payload["sizes"]:
        if s["n"] not in cfg["warm_sizes"]:
            continue
        measured = warm_ks(cfg["ks"], s["columns"])
        beyond = [k for k in cfg["ks"] if k >= s["columns"]]
        if beyond:
            last = measured[-1] if measured and measured[-1] not in cfg["ks"] else None
            instead = "" if last is None else f"; k = {last}, the last it reached, is added in their place"
            notes.append(f"{rows(s['n'])} rows: k = {', '.join(map(str, beyond))} not reached, the fit ended at "
                         f"{s['columns']} columns ({STOPS.get(s['stop'], s['stop'])}){instead}.")
        done = {r["k"] for r in payload["warm_vs_scratch"] if r["n"] == s["n"]}
        unfinished = [k for k in measured if k not in done]
        if unfinished:
            why = (f"its process was killed at its hard limit ({s['hard_limit_seconds']:g} s) during the comparison"
                   if s["killed_during"] == "comparison" else "its process ended first")
            notes.append(f"{rows(s['n'])} rows: k = {', '.join(map(str, unfinished))} not measured: {why}.")
    return notes


NOTES = [
    "The per-column split reads the estimator's running LP seconds (its private `_master` state, the counter "
    "that becomes `lp_time_`) and its last solve (`_solution`) in a fit callback; the totals come from the public "
    "`fit_time_`, `bin_time_` and `lp_time_`.",
    "The master holds every column as a dense row: a stump's margin y_i h(x_i) is +1 or -1 on every example, so "
    "the master has one variable per example and columns x rows nonzeros (`master_nonzeros` in the JSON).",
    "Each size runs in its own process, one after another; other processes on the machine share its cores (see "
    "the load averages).",
]


# ======================================================================================= main
def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", type=int, nargs="+", default=None,
                   help=f"training rows, one fit each (default {' '.join(map(str, DEFAULT_SIZES))})")
    p.add_argument("--columns", type=int, default=None, help="column cap, n_estimators (default 400)")
    p.add_argument("--budget", type=float, default=None,
                   help="seconds per fit: no column is started after it (default 600)")
    p.add_argument("--hard-limit", type=float, default=None,
                   help="seconds per size process before it is killed (default: 2 x (budget + warm budget at a "
                        "warm size) + 300)")
    p.add_argument("--warm-sizes", type=int, nargs="*", default=None,
                   help="sizes with the warm-against-scratch comparison (default 10000 100000; none: no comparison)")
    p.add_argument("--ks", type=int, nargs="+", default=None,
                   help=f"columns k in the master before the warm round (default {' '.join(map(str, DEFAULT_KS))})")
    p.add_argument("--warm-budget", type=float, default=None,
                   help="seconds per size for the comparison: no k is started after it (default 900)")
    p.add_argument("--repeat", type=int, default=None,
                   help=f"warm rounds and linprog solves per k (default 3 up to {rows(REPEAT_ROWS)} rows, 1 above)")
    p.add_argument("--threads", type=int, default=None, help="n_jobs of the fits (default: the cores available)")
    p.add_argument("--out", default=DEFAULT_OUT, help=f"directory for bench_lp.md and bench_lp.json "
                                                      f"(default {DEFAULT_OUT}/)")
    p.add_argument("--quick", action="store_true",
                   help=f"a smoke run: {' and '.join(map(str, QUICK['sizes']))} rows, at most {QUICK['columns']} "
                        f"columns, k = {' '.join(map(str, QUICK['ks']))}")
    p.add_argument("--child", metavar="SPEC", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    defaults = QUICK if args.quick else {"sizes": DEFAULT_SIZES, "warm_sizes": DEFAULT_WARM_SIZES, "columns": 400,
                                         "ks": DEFAULT_KS, "budget": 600.0, "warm_budget": 900.0, "repeat": None}
    for key, value in defaults.items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    if args.threads is None:
        try:
            args.threads = len(os.sched_getaffinity(0))
        except AttributeError:
            args.threads = os.cpu_count() or 1
    if min(args.sizes) < 2 or args.columns < 1 or (args.repeat or 1) < 1 or min(args.ks) < 1 or args.threads < 1:
        p.error("--sizes must be >= 2 and --columns, --repeat, --ks and --threads >= 1")
    return args


def repeats(args, n):
    """Runs of the warm round and of linprog per k at size n."""
    if args.repeat is not None:
        return args.repeat
    return 3 if n <= REPEAT_ROWS else 1


def hard_limit_seconds(args, n):
    """Seconds the process of size n may run before it is killed."""
    if args.hard_limit is not None:
        return args.hard_limit
    return 2 * (args.budget + (args.warm_budget if n in args.warm_sizes else 0.0)) + 300


def main(argv=None):
    args = parse_args(argv)
    if args.child:
        return child_main(args.child)
    command = " ".join(["python scripts/bench_lp.py", *(argv if argv is not None else sys.argv[1:])])
    load_before = list(os.getloadavg()) if hasattr(os, "getloadavg") else None
    started = time.perf_counter()
    sizes, warm = [], []
    with tempfile.TemporaryDirectory(prefix="bench-lp-") as tmp:
        for n in args.sizes:
            spec = {"n": n, "columns": args.columns, "budget": args.budget, "threads": args.threads,
                    "warm": n in args.warm_sizes, "ks": args.ks, "repeat": repeats(args, n),
                    "warm_budget": args.warm_budget}
            print(f"{rows(n)} rows: fitting up to {args.columns} columns (budget {args.budget:g} s)", file=sys.stderr,
                  flush=True)
            limit = hard_limit_seconds(args, n)
            run = run_child(spec, Path(tmp), limit)
            sizes.append({**size_summary(n, run), "hard_limit_seconds": limit})
            warm += warm_summary(n, run, sizes)
            s = sizes[-1]
            print(f"{rows(n)} rows: {s['columns']} columns ({s['stop']}), LP {num(s['lp_ms_per_column'])} ms/column, "
                  f"learner {num(s['learner_ms_per_column'])} ms/column", file=sys.stderr, flush=True)
    elapsed = time.perf_counter() - started
    meta = {"command": command, "date": time.strftime("%Y-%m-%d %H:%M"), "elapsed_seconds": elapsed,
            "machine": machine_facts(args.threads), "load_average_before": load_before,
            "load_average_after": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
            "config": {"sizes": args.sizes, "columns": args.columns, "budget": args.budget,
                       "hard_limit": args.hard_limit, "warm_sizes": args.warm_sizes,
                       "ks": args.ks, "warm_budget": args.warm_budget, "repeat": args.repeat, "threads": args.threads,
                       "nu": NU, "n_features": N_FEATURES, "seed": SEED, "quick": args.quick}}
    payload = {"meta": meta, "sizes": sizes, "warm_vs_scratch": warm, "notes": NOTES}
    text = markdown(payload)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "bench_lp.md").write_text(text)
    with open(out / "bench_lp.json", "w") as fh:
        json.dump(payload, fh, indent=1)
    print(text)
    print(f"wrote {out / 'bench_lp.md'} and {out / 'bench_lp.json'} in {elapsed / 60:.1f} min", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
