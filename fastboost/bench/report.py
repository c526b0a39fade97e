"""The report of ``fastboost bench``: the table and its ratios, the kernel profile, the machine
record, the JSON file and the PNG chart."""
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from .measure import default_threads, log

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


def fmt_rows(n):
    return f"{n:,}".replace(",", " ")


def _ms(s):
    if s is None:
        return "-"
    ms = 1e3 * s
    return f"{ms:.3f}" if ms < 10 else f"{ms:.2f}" if ms < 100 else f"{ms:.1f}" if ms < 10_000 else f"{ms:.0f}"


def fmt_ratio(x):
    return f"{x:.2f}×" if x < 10 else f"{x:.1f}×" if x < 100 else f"{x:.0f}×"


# ================================================================================== machine
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


# ================================================================================== table
def _phase_lines(res, ref):
    """The early and late rounds' times (``measure.phase_round_seconds``) and their ratios to fastboost's."""
    from .measure import EARLY_UNTIL, LATE_AFTER

    lines = []
    timed = [r for r in res if r.get("early_per_round_s") is not None]
    if not timed:
        return lines
    n_late = {r["rounds_run"] for r in timed if r.get("late_per_round_s") is not None}
    late_span = f" / rounds {LATE_AFTER + 1}-{max(n_late)}" if n_late else ""
    parts = [f"{r['short']} {_ms(r['early_per_round_s'])}"
             + (f" / {_ms(r['late_per_round_s'])}" if r.get("late_per_round_s") is not None else "") for r in timed]
    lines.append(f"per round, rounds 2-{EARLY_UNTIL}{late_span} (ms, from each round's end time): " + "; ".join(parts))
    for phase, name in (("early_per_round_s", "early"), ("late_per_round_s", "late")):
        if ref is None or ref.get(phase) is None:
            continue
        parts = [f"{r['short']}/{ref['short']} = {fmt_ratio(r[phase] / ref[phase])}" for r in timed
                 if r is not ref and r.get(phase) is not None]
        if parts:
            lines.append(f"{name}-round ratios: " + "; ".join(parts))
    return lines


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
        vs = fmt_ratio(r["per_round_s"] / ref["per_round_s"]) if ref else "-"
        rss = "-" if r.get("peak_rss_mb") is None else f"{r['peak_rss_mb']:.0f}"
        base = "-" if r.get("base_rss_mb") is None else f"{r['base_rss_mb']:.0f}"
        load = "-" if r.get("other_load_cores") is None else f"{r['other_load_cores']:.1f}"
        notes = r.get("note", "")
        pr = "-" if r.get("predict_s") is None else _ms(r["predict_s"])
        fit_mb = "-" if r.get("fit_peak_over_start_mb") is None else f"{r['fit_peak_over_start_mb']:.0f}"
        lines.append(f"{r['label']:<{lw}}{prep:>9}{rounds:>8}{r['train_s']:>11.3f}{_ms(r['per_round_s']):>16}"
                     f"{vs:>14}{100 * r['test_accuracy']:>9.2f}%{pr:>14}{rss:>13}{base:>6}{fit_mb:>9}{load:>6}"
                     f"  {notes}")
    lines.append("")
    if ref:
        parts = [f"{r['short']}/{ref['short']} per-round = {fmt_ratio(r['per_round_s'] / ref['per_round_s'])}"
                 + (" (extrapolated)" if r["extrapolated"] else "")
                 for r in res if r is not ref]
        if parts:
            lines.append("ratios (same run): " + "; ".join(parts))
        lines += _phase_lines(res, ref)
        parts = []
        for r in res:
            if r is ref or r["prep_s"] is None or not ref["prep_s"]:
                continue
            parts.append(f"{r['short']}/{ref['short']} prep = {fmt_ratio(r['prep_s'] / ref['prep_s'])}")
        if parts:
            lines.append("prep ratios: " + "; ".join(parts))
        parts = []
        for r in res:
            if r is ref or r["prep_s"] is None or ref["prep_s"] is None or r["extrapolated"]:
                continue
            whole = r["prep_s"] + r["per_round_s"] * r["rounds_requested"]
            mine = ref["prep_s"] + ref["per_round_s"] * ref["rounds_requested"]
            parts.append(f"{r['short']}/{ref['short']} = {fmt_ratio(whole / mine)}")
        if parts:
            lines.append(f"whole fit (prep + {ref['rounds_requested']} rounds) ratios: " + "; ".join(parts))
        parts = [f"{r['short']}/{ref['short']} = {fmt_ratio(r['predict_s'] / ref['predict_s'])}" for r in res
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
        if "scatter_floor_multiple" in r:
            sc = r["scatter"]
            updates = r["scatter_floor_s"] / sc["s_per_update"]  # rows x features (tasks.py)
            lines.append(f"scatter-add floor ({r['short']}'s process): {updates / 1e6:.1f} M updates (rows x "
                         f"features) x {sc['s_per_update'] * 1e9:.2f} ns each (a bare one-feature-a-pass histogram "
                         f"kernel, {sc['threads']} threads) = {_ms(r['scatter_floor_s'])} ms; per round = "
                         f"{r['scatter_floor_multiple']:.2f}× floor")
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
    if any(r.get("early_per_round_s") is not None for r in res):
        lines.append("  early / late rounds: the mean time a round over rounds 2-50 and after round 100 (fits of 150 "
                     "rounds or more), from the end time of each round as --curve stamps it (fastboost: its fit "
                     "callbacks between chunks of rounds, linear in between)")
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


# ================================================================================== output
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


def write_report(payload, out, plot=True, stdout=None):
    """Print the table (and the kernel profile, if any) to ``stdout``; write the JSON record to ``out`` and,
    with ``plot`` and matplotlib, the chart next to it. Adds "table", "plot" and "json_path" to ``payload``."""
    stdout = stdout or sys.stdout
    table = format_table(payload)
    if payload.get("profile"):
        table += "\n" + format_profile(payload["profile"])
    return write_outputs(payload, table, out, write_plot if plot else None, stdout)


def payload_header(benchmark):
    """The fields every JSON record of ``fastboost bench`` starts with."""
    return {"benchmark": benchmark, "schema": 1, "timestamp_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "argv": sys.argv}


def write_outputs(payload, table, out, plotter, stdout, indent=2):
    """Print ``table``; write ``payload`` as JSON to ``out`` and, with a ``plotter(payload, png_path)``, the chart
    next to it (a failed chart is logged, never loses the results). Adds "table", "plot" and "json_path"."""
    payload["table"] = table
    print(table, file=stdout, flush=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    png = None
    if plotter is not None:
        try:
            png = plotter(payload, out.with_suffix(".png"))
        except Exception as exc:  # a chart must never lose the results
            log(f"no chart: {exc!r}")
    payload["plot"] = png
    out.write_text(json.dumps(payload, indent=indent, default=str))
    print(f"wrote {out}" + (f" and {png}" if png else ""), file=stdout, flush=True)
    payload["json_path"] = str(out)
    return payload
