"""The report of ``fastboost bench --curve``: a table per data set, the JSON record and the chart of test
error against seconds (one axes per data set, one line per library)."""
import sys

import numpy as np

from .report import fmt_ratio, fmt_rows, write_outputs

#: chart colours of the competitors (fastboost: red, its further settings black, then others)
LIBRARY_COLORS = {"lightgbm": "tab:green", "xgboost": "tab:blue", "sklearn-hgb": "tab:purple",
                  "sklearn-adaboost": "tab:orange"}


def _shape(depth):
    return "stumps" if depth == 1 else f"depth-{depth} trees"


def _secs(s):
    if s is None:
        return "-"
    return f"{s:.3f}" if s < 10 else f"{s:.2f}" if s < 100 else f"{s:.1f}"


def _at(seconds, rnd):
    """'seconds (round)', or 'never'."""
    return "never" if seconds is None else f"{_secs(seconds)} ({rnd})"


def _ratio_note(r, ref, within):
    """What qualifies a time-to-own-best ratio: capped rounds, a best that differs from fastboost's by more than
    the tolerance (a library held to a worse best gets there sooner)."""
    notes = ["capped"] if r["capped"] else []
    diff = 100 * (r["summary"]["best_error"] - ref["summary"]["best_error"])
    if abs(diff) > 100 * within:
        notes.append(f"best {abs(diff):.2f} points {'below' if diff < 0 else 'above'} fastboost's")
    return f" ({', '.join(notes)})" if notes else ""


def _race(r, res):
    """'LightGBM 1.66%: fastboost real 2.41 s, LightGBM 5.93 s (fastboost first)', from the result's race."""
    race = r["summary"]["race"]
    short = {x["key"]: x["short"] for x in res}
    fb = "no fastboost model" if race["fastboost_s"] is None else \
        f"{short[race['fastboost_key']]} {_secs(race['fastboost_s'])} s"
    who = {"fastboost": "fastboost first", "competitor": f"{r['short']} first",
           "never": "fastboost never gets there"}[race["first"]]
    return f"{r['short']} {100 * race['target_error']:.2f}%: {fb}, {r['short']} {_secs(race['competitor_s'])} s ({who})"


def format_curve_table(payload):
    """The tables of every data set, the ratios to fastboost, the skipped libraries and the notes, as text."""
    cfg, m = payload["config"], payload["machine"]
    pts = f"{100 * payload['within']:g}"
    lines = [f"fastboost bench --curve: test error against training time; {cfg['bins']} bins, {cfg['threads']} "
             f"threads, GBM learning rate {cfg['gbm_learning_rate']:g}; one fit per library",
             f"machine: {m['cpu_model']}, {m['cores_available']} cores available, {m['total_ram_gib']} GiB; "
             + ", ".join(f"{k} {v}" for k, v in m["versions"].items())]
    loads = [r["other_load_cores"] for sec in payload["datasets"] for r in sec["results"]
             if r.get("other_load_cores") is not None]
    worst = max(loads + [payload.get("other_load_at_start_cores") or 0.0])
    if worst > 0.25:
        lines.append(f"WARNING: other processes used up to {worst:.1f} of {m['logical_cores']} cores during this run "
                     "('load' column): timings on a busy machine are slow and noisy; re-run on an idle machine "
                     "before quoting them")
    for sec in payload["datasets"]:
        d = sec["data"]
        lines += ["", f"{sec['name']}: {fmt_rows(d['n_train'])} train + {fmt_rows(d['n_test'])} test rows x "
                      f"{d['n_features']} ({d['dtype']}), {d['n_classes']} classes; {_shape(sec['depth'])}, "
                      f"{sec['rounds']} rounds"]
        res = [r for r in sec["results"] if r["status"] == "ok"]
        if not res:
            lines.append("  no library ran")
            continue
        lw = max([len("library")] + [len(r["label"]) for r in res]) + 2
        head = (f"{'library':<{lw}}{'rounds':>7}{'best error':>12}{'at round':>10}{'whole fit s':>13}"
                f"{f'own best+{pts}: s (round)':>25}{'vs fastboost':>14}"
                f"{f'fastboost best+{pts}: s (round)':>32}{'vs fastboost':>14}{'load':>6}  notes")
        lines += [head, "-" * len(head)]
        for r in res:
            s = r["summary"]
            vs = "-" if s["ratio_to_reference"] is None else fmt_ratio(s["ratio_to_reference"])
            load = "-" if r.get("other_load_cores") is None else f"{r['other_load_cores']:.1f}"
            vs_target = "-" if s.get("reference_target_ratio") is None else fmt_ratio(s["reference_target_ratio"])
            target = _at(s.get("seconds_to_reference_target"), s.get("round_to_reference_target")) \
                if sec["reference"] else "-"
            lines.append(f"{r['label']:<{lw}}{r['rounds_run']:>7}{100 * s['best_error']:>11.2f}%{s['best_round']:>10}"
                         f"{_secs(s['whole_fit_s']):>13}{_at(s['seconds_to_within'], s['round_to_within']):>25}"
                         f"{vs:>14}{target:>32}{vs_target:>14}{load:>6}  {r.get('note', '')}")
        ref = next((r for r in res if r["key"] == sec["reference"]), None)
        if ref:
            within = payload["within"]
            parts = [f"{r['short']} {fmt_ratio(r['summary']['ratio_to_reference'])}{_ratio_note(r, ref, within)}"
                     for r in res if r is not ref and r["summary"]["ratio_to_reference"] is not None]
            if parts:
                lines.append(f"time to within {pts} points of its own best, over {ref['short']}'s "
                             f"({_secs(ref['summary']['seconds_to_within'])} s): " + "; ".join(parts))
        else:
            lines.append("ratios: none (no fastboost model ran on this data set)")
        races = [_race(r, res) for r in res if "race" in r["summary"]]
        if races:
            lines.append(f"first to each competitor's own best + {pts} points: " + "; ".join(races))
    for s in payload["skipped"]:
        where = f" on {s['data']}" if s.get("data") else ""
        lines.append(f"skipped {s['label']}{where}: {s['message']}")
    lines.append(f"columns: own best+{pts} = the seconds (and round) at which the test error first comes within "
                 f"{pts} points of the library's own best; fastboost best+{pts} = ... at which it first reaches "
                 f"fastboost's best + {pts} points (never: not in the rounds it ran); vs fastboost = those seconds "
                 "over fastboost's (above 1: fastboost got there sooner); load = cores used by other processes "
                 "meanwhile")
    lines.append("notes: " + payload["notes"][0])
    lines += [f"  {n}" for n in payload["notes"][1:]]
    return "\n".join(lines)


def write_curve_plot(payload, path):
    """Test error (%) against seconds (log scale), one axes per data set, one line per library; a dot where
    each library comes within the tolerance of its best. None without matplotlib or results."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception:
        return None
    sections = [s for s in payload["datasets"] if any(r["status"] == "ok" for r in s["results"])]
    if not sections:
        return None
    keys = list(dict.fromkeys(r["key"] for s in sections for r in s["results"] if r["status"] == "ok"))
    spare = iter(["black", "tab:brown", "tab:pink", "tab:olive", "tab:cyan", "tab:gray"] * len(keys))
    colors = {}
    for k in keys:  # fastboost's first algorithm red, each competitor its own colour on every axes
        colors[k] = LIBRARY_COLORS.get(k) or ("tab:red" if "tab:red" not in colors.values() else next(spare))
    fig, axes = plt.subplots(1, len(sections), figsize=(max(7.0, 5.5 * len(sections)), 4.8), squeeze=False)
    for ax, sec in zip(axes[0], sections):
        res = [r for r in sec["results"] if r["status"] == "ok"]
        bests = []
        for r in res:
            c, s = r["curve"], r["summary"]
            secs, err = np.asarray(c["seconds"]), 100 * np.asarray(c["test_error"])
            label = r["short"] + (" (capped)" if r["capped"] else "")
            ax.plot(secs, err, color=colors[r["key"]], lw=1.4 if r["library"] == "fastboost" else 1.1, label=label)
            ax.plot([s["seconds_to_within"]], [100 * s["error_at_within"]], "o", color=colors[r["key"]], ms=5)
            bests.append(100 * s["best_error"])
        top = max(100 * max(max(r["curve"]["test_error"]) for r in res), 1e-9)
        ax.set_ylim(0.9 * min(bests), min(top, 2.5 * max(bests) + 1.0))
        ax.set_xscale("log")
        ax.set_xlabel("training seconds (data preparation included; log scale)")
        ax.set_ylabel("test error (%)")
        d = sec["data"]
        ax.set_title(f"{sec['name']} {fmt_rows(d['n_train'])} x {d['n_features']}, {_shape(sec['depth'])}",
                     fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    cfg = payload["config"]
    fig.suptitle(f"test error against training time, {cfg['bins']} bins, {cfg['threads']} threads\n(dot: within "
                 f"{100 * payload['within']:g} points of the library's own best)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return str(path)


def write_curve_report(payload, out, plot=True, stdout=None):
    """Print the tables to ``stdout``; write the JSON record to ``out`` and, with ``plot`` and matplotlib, the chart
    next to it (``.png``). Adds "table", "plot" and "json_path" to ``payload`` and returns it."""
    return write_outputs(payload, format_curve_table(payload), out, write_curve_plot if plot else None,
                         stdout or sys.stdout, indent=1)
