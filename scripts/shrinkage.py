#!/usr/bin/env python
"""Shrinkage against leaf kind and depth: AdaBoostClassifier's test error at learning rates 0.1, 0.3 and 1.0.

    python scripts/shrinkage.py --part small           # the accuracy table's data sets, 5 splits, T = 300
    python scripts/shrinkage.py --part large           # twonorm, ringnorm, waveform, 10 classes: 50 000 / 20 000 rows
    python scripts/shrinkage.py --part larger          # the same at 200 000 / 50 000 rows
    python scripts/shrinkage.py --table                # rewrite the markdown of the saved results only

Every fit is fastboost's ``AdaBoostClassifier(n_estimators=T, learning_rate=r, max_depth=d, leaf=...)`` at depth 1
(stumps) and 3, for r in 0.1, 0.3, 1.0 and three leaf kinds: ``discrete`` (the default: each leaf names a class;
SAMME with more than two classes), ``real`` (confidence-rated leaves; with more than two classes one model per
class against the rest, K trees a round) and, with more than two classes only, ``mh`` (``leaf="real",
multiclass="mh"``: AdaBoost.MH, one tree a round with a value per class in each leaf). The test error is read
after several round counts of the same fit (``staged_predict``; one-vs-rest: the argmax of its models' staged
margins, each model's rounds counted), at the last round count from ``predict``. The reference is LightGBM at
the same depth (``LGBMClassifier`` as scripts/accuracy.py builds it: ``num_leaves=2**d, max_depth=d``, its
other parameters at their defaults, so at least 20 rows a leaf) at each of the same learning rates, its error
after the same round counts from ``predict(num_iteration=...)``.

Data: ``--part small``: scripts/accuracy.py's data sets, loaded and split by it (2/3 train, 1/3 test, split r:
``random_state=r``), errors averaged over the splits. ``--part large`` and ``--part larger``: one draw (seed 0) of
``fastboost.datasets``' twonorm, ringnorm and waveform and of scripts/multiclass_mh.py's 10-class problem
(``make_classification``), ``--n-train`` training and ``--n-test`` test rows.
Every fit runs on ``--threads`` threads (errors do not depend on it). The results of each part go to
``--json`` (the other parts' are kept) and the tables of every saved part are written between the markers of
``--doc`` (docs/which-estimator.md by default). Run times on one thread of a loaded 2-core machine: small 3 min,
large 7.5 min, larger 24 min.
"""
import argparse
import importlib.util
import json
import os
import platform
import sys
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # this checkout's fastboost, before any installed copy

RATES = (0.1, 0.3, 1.0)
DEPTHS = (1, 3)
KINDS = ("discrete", "real", "mh")
#: the leaf kinds that need more than two classes
MULTICLASS_ONLY = {"mh"}
LARGE_DATASETS = ("twonorm", "ringnorm", "waveform", "classes10")
PARTS = {"small": dict(rounds=300, checkpoints=(100, 300), repeats=5),
         "large": dict(rounds=600, checkpoints=(100, 300, 600), n_train=50_000, n_test=20_000),
         "larger": dict(rounds=600, checkpoints=(100, 300, 600), n_train=200_000, n_test=50_000)}
REFERENCE = "LightGBM"
#: the learning rate the guide suggests with confidence-rated leaves, per depth
SUGGESTED_RATE = {1: 0.3, 3: 0.1}
BEGIN = "<!-- shrinkage: begin (written by scripts/shrinkage.py) -->"
END = "<!-- shrinkage: end -->"
DEFAULT_JSON = ROOT / "docs" / "shrinkage.json"
DEFAULT_DOC = ROOT / "docs" / "which-estimator.md"
KIND_NAMES = {"discrete": "discrete", "real": "real", "mh": "real, MH", REFERENCE: REFERENCE}


def _script(name):
    """scripts/<name>.py as a module (the scripts are not a package)."""
    spec = importlib.util.spec_from_file_location(f"{name}_script", HERE / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


accuracy = _script("accuracy")
multiclass_mh = _script("multiclass_mh")


def make(kind, depth, rate, rounds, threads):
    """The model of one cell: fastboost's AdaBoostClassifier with leaves ``kind``, or the reference."""
    if kind == REFERENCE:
        return accuracy.make("LightGBM", depth, rounds, threads).set_params(learning_rate=rate)
    from fastboost import AdaBoostClassifier

    extra = {"leaf": "real", "multiclass": "mh"} if kind == "mh" else {"leaf": kind}
    return AdaBoostClassifier(rounds, learning_rate=rate, max_depth=depth, n_jobs=threads, random_state=0, **extra)


def _staged_labels(model, X):
    """(round count, labels) after every round of a fastboost model (one-vs-rest: its models' margins side by
    side, a model that stopped early keeping its last margin)."""
    if not hasattr(model, "estimators_"):
        yield from enumerate(model.staged_predict(X), start=1)
        return
    margins = np.zeros((X.shape[0], len(model.estimators_)))
    stages = [m.staged_decision_function(X) for m in model.estimators_]
    for t in range(1, max(m.n_estimators_ for m in model.estimators_) + 1):
        for k, stage in enumerate(stages):
            margins[:, k] = next(stage, margins[:, k])
        yield t, model.classes_[np.argmax(margins, axis=1)]


def staged_errors(model, X, y, checkpoints):
    """{round count: test error %} of a fitted model after each of ``checkpoints`` rounds (a model that stopped
    earlier: its error at the end); the last from ``predict``."""
    last = max(checkpoints)
    errors = {}
    if hasattr(model, "booster_"):  # LightGBM
        for c in checkpoints:
            errors[c] = 100.0 * float(np.mean(model.predict(X, num_iteration=c) != y))
        return errors
    wanted = set(checkpoints) - {last}
    for t, labels in _staged_labels(model, X):
        if t in wanted:
            errors[t] = 100.0 * float(np.mean(labels != y))
    final = 100.0 * float(np.mean(model.predict(X) != y))
    for c in checkpoints:
        errors.setdefault(c, final)
    return errors


def fit_cell(kind, depth, rate, X_tr, y_tr, X_te, y_te, rounds, checkpoints, threads=1):
    """(record, fitted model) of one fit: the test errors after ``checkpoints`` rounds and the fit's seconds."""
    model = make(kind, depth, rate, rounds, threads)
    t0 = time.perf_counter()
    model.fit(X_tr, y_tr)
    seconds = time.perf_counter() - t0
    errors = staged_errors(model, X_te, y_te, checkpoints)
    fitted = getattr(model, "n_estimators_", rounds)
    if hasattr(model, "estimators_"):
        fitted = max(m.n_estimators_ for m in model.estimators_)
    rec = {"kind": kind, "depth": depth, "rate": rate, "rounds": rounds, "rounds_fitted": int(fitted),
           "fit_seconds": seconds, "errors": {str(c): e for c, e in errors.items()},
           "n_train": int(len(y_tr)), "n_test": int(len(y_te))}
    return rec, model


def kinds_for(n_classes, kinds=KINDS):
    return [k for k in kinds if n_classes > 2 or k not in MULTICLASS_ONLY] + [REFERENCE]


def run_grid(name, splits, depths, rates, kinds, rounds, checkpoints, threads, log=print):
    """Every fit of one data set: ``splits`` is a list of (X_tr, y_tr, X_te, y_te); returns the records."""
    records = []
    n_classes = len(np.unique(splits[0][1]))
    for depth in depths:
        for kind in kinds_for(n_classes, kinds):
            X_tr, y_tr = splits[0][0], splits[0][1]  # a small fit first: compiles or loads the kernels
            make(kind, depth, 0.3, 3, threads).fit(X_tr[:2000], y_tr[:2000])
            for rate in rates:
                line = []
                for r, (X_tr, y_tr, X_te, y_te) in enumerate(splits):
                    rec, _ = fit_cell(kind, depth, rate, X_tr, y_tr, X_te, y_te, rounds, checkpoints, threads)
                    rec.update(dataset=name, split=r, n_classes=int(n_classes))
                    records.append(rec)
                    line.append(" ".join(f"{e:.2f}" for e in rec["errors"].values()) + f" ({rec['fit_seconds']:.1f} s)")
                log(f"{name} depth {depth} {kind} rate {rate}: " + "; ".join(line), flush=True)
    return records


def small_splits(name, repeats):
    X, y, how = accuracy.load(name)
    out = []
    for r in range(repeats):
        tr, te = accuracy.split(y, r)
        out.append((X[tr], y[tr], X[te], y[te]))
    return out, how


def large_split(name, n_train, n_test):
    """One draw (seed 0): the first ``n_train`` rows train, the next ``n_test`` test; waveform and the 10-class
    problem as scripts/multiclass_mh.py draws them."""
    if name in multiclass_mh.DATASETS:
        how = "scripts/multiclass_mh.py's " + ("`make_data`: " + ("`fastboost.datasets.make_waveform`, seed 0"
                                                                if name == "waveform" else
                                                                "scikit-learn's `make_classification`, 10 classes, "
                                                                "20 features (10 informative), seed 0"))
        return [multiclass_mh.make_data(name, n_train, n_test)], how
    from fastboost import datasets

    X, y = getattr(datasets, f"make_{name}")(n_train + n_test, random_state=0)
    how = f"`fastboost.datasets.make_{name}({n_train + n_test}, random_state=0)`"
    return [(X[:n_train], y[:n_train], X[n_train:], y[n_train:])], how


# ----------------------------------------------------------------------------- tables
def cell_means(records):
    """{(data set, depth, kind, rate): {round count: mean error % over the splits}}."""
    acc = {}
    for rec in records:
        key = (rec["dataset"], rec["depth"], rec["kind"], rec["rate"])
        for c, e in rec["errors"].items():
            acc.setdefault(key, {}).setdefault(int(c), []).append(e)
    return {k: {c: float(np.mean(v)) for c, v in sorted(d.items())} for k, d in acc.items()}


def _best(means, name, depth, kind):
    """(error, rate, rounds) of the lowest mean error of one row over rates and round counts, or None."""
    found = [(e, rate, c) for (n, d, k, rate), errs in means.items() if (n, d, k) == (name, depth, kind)
             for c, e in errs.items()]
    return min(found, key=lambda f: (f[0], f[2], f[1])) if found else None


def _rows(n):
    return f"{n:,}".replace(",", " ")


def part_markdown(part, records, meta):
    """The tables of one part (small or large data): one per depth."""
    means = cell_means(records)
    rates, checkpoints = meta["rates"], meta["checkpoints"]
    after = " / ".join(str(c) for c in checkpoints)
    if part == "small":
        title = (f"### Small data: the accuracy table's data sets, {meta['repeats']} splits, "
                 f"T = {meta['rounds']}")
        intro = (f"Mean test error (%) over {meta['repeats']} random 2/3–1/3 splits (split r: `random_state=r`) of "
                 + ", ".join(f"{d['name']} ({d['rows']} rows, {d['classes']} classes)" for d in meta["datasets"])
                 + f", after {after} rounds of the same fit.")
    else:
        title = f"### Large data: {_rows(meta['n_train'])} training rows, T = {meta['rounds']}"
        intro = (f"Test error (%) on {_rows(meta['n_test'])} test rows of one draw (seed 0) of "
                 + ", ".join(f"{d['name']} ({d['classes']} classes)" for d in meta["datasets"])
                 + f", after {after} rounds of the same fit.")
    lines = [title, "", intro + f" Run time {meta['elapsed_seconds'] / 60:.1f} min on {meta['threads']} thread"
             f"{'s' if meta['threads'] > 1 else ''}, one-minute load average {meta['load_average'][0]:.1f} before "
             f"and {meta['load_average'][1]:.1f} after. Command: `{meta['command']}`.", ""]
    for depth in meta["depths"]:
        lines += [f"Depth {depth} ({'stumps' if depth == 1 else 'trees'}):", "",
                  "| data set | leaves | " + " | ".join(f"rate {r:g}" for r in rates)
                  + " | best (rate, rounds) | best − LightGBM's best |", "|---" * (len(rates) + 4) + "|"]
        for d in meta["datasets"]:
            ref = _best(means, d["name"], depth, REFERENCE)
            for kind in kinds_for(d["classes"], meta["kinds"]):
                cells = [" / ".join(f"{e:.2f}" for e in means[(d["name"], depth, kind, r)].values())
                         if (d["name"], depth, kind, r) in means else "–" for r in rates]
                best = _best(means, d["name"], depth, kind)
                if best is None:
                    continue
                gap = "" if kind == REFERENCE or ref is None else f"{round(best[0] - ref[0], 2) + 0.0:+.2f}"
                lines.append(f"| {d['name']} | {KIND_NAMES[kind]} | " + " | ".join(cells)
                             + f" | {best[0]:.2f} ({best[1]:g}, {best[2]}) | {gap} |")
        lines.append("")
    return "\n".join(lines)


def _at_last(records, name, depth, kind, rate):
    """{split: error % after the last round count} of one cell."""
    return {r["split"]: r["errors"][str(max(int(c) for c in r["errors"]))] for r in records
            if (r["dataset"], r["depth"], r["kind"], r["rate"]) == (name, depth, kind, rate)}


def _seconds(records, name, depth, kind, rate):
    """Median fit seconds of one cell over the splits."""
    return float(np.median([r["fit_seconds"] for r in records
                            if (r["dataset"], r["depth"], r["kind"], r["rate"]) == (name, depth, kind, rate)]))


def suggested(depth, n_classes):
    """[(leaf kind, learning rate)] the guide suggests: confidence-rated leaves at ``SUGGESTED_RATE[depth]``; with
    more than two classes both their forms, one-vs-rest and AdaBoost.MH."""
    return [(kind, SUGGESTED_RATE[depth]) for kind in (("real", "mh") if n_classes > 2 else ("real",))]


def summary_markdown(saved):
    """One table: the default (discrete leaves, rate 1) against the suggested setting, both after the last round
    count, and the suggested setting's distance from LightGBM's best; small data: the mean over the splits and
    the paired difference's standard error."""
    lines = ["| data | rows (train) | depth | default: discrete, rate 1 | suggested | suggested − default | "
             "suggested − LightGBM's best | fit time / LightGBM's |", "|---" * 8 + "|"]
    for part in PARTS:
        meta = saved["meta"].get(part)
        if meta is None:
            continue
        records = [r for r in saved["results"] if r["part"] == part]
        means = cell_means(records)
        for depth in meta["depths"]:
            for d in meta["datasets"]:
                for kind, rate in suggested(depth, d["classes"]):
                    base = _at_last(records, d["name"], depth, "discrete", 1.0)
                    new = _at_last(records, d["name"], depth, kind, rate)
                    ref = _best(means, d["name"], depth, REFERENCE)
                    if not base or not new or ref is None:
                        continue
                    diff = np.array([new[k] - base[k] for k in sorted(base) if k in new])
                    se = f" ± {diff.std(ddof=1) / np.sqrt(len(diff)):.2f}" if len(diff) > 1 else ""
                    rows = next(r["n_train"] for r in records if r["dataset"] == d["name"])
                    time_ratio = (_seconds(records, d["name"], depth, kind, rate)
                                  / _seconds(records, d["name"], depth, REFERENCE, ref[1]))
                    lines.append(f"| {d['name']} | {_rows(rows)} | {depth} | {np.mean(list(base.values())):.2f} | "
                                 f"{np.mean(list(new.values())):.2f} ({KIND_NAMES[kind]}, {rate:g}) | "
                                 f"{round(diff.mean(), 2) + 0.0:+.2f}{se} | "
                                 f"{round(np.mean(list(new.values())) - ref[0], 2) + 0.0:+.2f} | "
                                 f"{time_ratio:.2f} |")
    return "\n".join(lines)


def markdown(saved):
    """The generated section: the tables of every saved part, between the markers."""
    lines = [BEGIN, "## Learning rate, leaf kind and depth, measured", "",
             "fastboost's `AdaBoostClassifier(learning_rate=r, max_depth=d, leaf=...)` at r = 0.1, 0.3 and 1.0 "
             "(the default), with discrete leaves (the default; SAMME with more than two classes), "
             "confidence-rated leaves (`leaf=\"real\"`; with more than two classes one model per class, so K "
             "trees a round and its round counts are per class) and, with more than two classes, AdaBoost.MH "
             "(`leaf=\"real\", multiclass=\"mh\"`: one tree a round, a value per class in each leaf); LightGBM "
             "(`LGBMClassifier(num_leaves=2**d, max_depth=d)`, other parameters at their defaults) at the same "
             "depth, rates and rounds is the reference. Each cell gives the test error after each round count "
             "of one fit; *best* is the lowest over rates and round counts (ties: the fewest rounds), and the "
             "last column its distance in points from LightGBM's best chosen the same way (both chosen on the test "
             "rows, so both are a little optimistic; choose yours on validation data). Generated by "
             "`scripts/shrinkage.py` (raw results in `docs/shrinkage.json`).", "",
             "In short: test error (%) after the last round count at the default (discrete leaves, rate 1) and "
             "at the suggested setting (confidence-rated leaves, with more than two classes both one-vs-rest and "
             "AdaBoost.MH; rate "
             + " with stumps, ".join(f"{SUGGESTED_RATE[d]:g}" for d in sorted(SUGGESTED_RATE))
             + " with depth-3 trees), neither chosen on the test rows; the last column against LightGBM's best "
             "as below (small data: means over the splits, and ± the standard error of the paired "
             "difference). The fit times are whole fits (binning included) on one thread, the suggested setting's "
             "against LightGBM's at its best learning rate, measured on a shared 2-core machine (the load is "
             "given with each part).", "", summary_markdown(saved), ""]
    for part in PARTS:
        if part in saved["meta"]:
            recs = [r for r in saved["results"] if r["part"] == part]
            lines.append(part_markdown(part, recs, saved["meta"][part]))
    lines.append(END)
    return "\n".join(lines)


def with_section(text, section):
    """``text`` with the generated section replaced (appended when it has none)."""
    if BEGIN in text and END in text:
        return text[:text.index(BEGIN)] + section + text[text.index(END) + len(END):]
    return text.rstrip("\n") + "\n\n" + section + "\n"


def write_doc(doc, saved):
    doc = Path(doc)
    doc.write_text(with_section(doc.read_text() if doc.exists() else "", markdown(saved)))


# ----------------------------------------------------------------------------- command line
def run_part(part, args, command):
    cfg = PARTS[part]
    rounds = args.rounds or cfg["rounds"]
    checkpoints = sorted({c for c in (args.checkpoints or cfg["checkpoints"]) if c < rounds} | {rounds})
    load_before = os.getloadavg()[0]
    start = time.perf_counter()
    records, data = [], []
    names = args.datasets or (accuracy.DATASETS if part == "small" else LARGE_DATASETS)
    for name in names:
        if part == "small":
            splits, how = small_splits(name, args.repeats or cfg["repeats"])
        else:
            splits, how = large_split(name, args.n_train or cfg["n_train"], args.n_test or cfg["n_test"])
        data.append({"name": name, "how": how, "rows": int(len(splits[0][1]) + len(splits[0][3])),
                     "features": int(splits[0][0].shape[1]), "classes": int(len(np.unique(splits[0][1])))})
        for rec in run_grid(name, splits, args.depths, args.rates, args.kinds, rounds, checkpoints, args.threads):
            records.append({"part": part, **rec})
    meta = {"command": command, "date": time.strftime("%Y-%m-%d"), "elapsed_seconds": time.perf_counter() - start,
            "load_average": [load_before, os.getloadavg()[0]], "rounds": rounds, "checkpoints": checkpoints,
            "rates": list(args.rates), "depths": list(args.depths), "kinds": list(args.kinds),
            "threads": args.threads, "datasets": data, "versions": accuracy.versions(),
            "platform": platform.platform(), "cpu_count": os.cpu_count()}
    if part == "small":
        meta["repeats"] = args.repeats or cfg["repeats"]
    else:
        meta.update(n_train=args.n_train or cfg["n_train"], n_test=args.n_test or cfg["n_test"])
    return records, meta


def load_saved(path):
    path = Path(path)
    return json.loads(path.read_text()) if path.exists() else {"meta": {}, "results": []}


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--part", choices=sorted(PARTS), help="which measurement to run (omit with --table)")
    ap.add_argument("--table", action="store_true", help="only rewrite --doc from the saved --json")
    ap.add_argument("--rounds", type=int, help="rounds T (small: 300, large: 600)")
    ap.add_argument("--checkpoints", type=int, nargs="+", help="round counts read (small: 100 300; large: 100 300 "
                                                                "600); T is always one")
    ap.add_argument("--repeats", type=int, help="splits of the small data sets (default 5)")
    ap.add_argument("--n-train", type=int, help="training rows of the large data (50 000; larger: 200 000)")
    ap.add_argument("--n-test", type=int, help="test rows of the large data (20 000; larger: 50 000)")
    ap.add_argument("--datasets", nargs="+")
    ap.add_argument("--depths", type=int, nargs="+", default=list(DEPTHS))
    ap.add_argument("--rates", type=float, nargs="+", default=list(RATES))
    ap.add_argument("--kinds", nargs="+", default=list(KINDS), choices=KINDS)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--json", default=str(DEFAULT_JSON), help="results file (each part's records replaced)")
    ap.add_argument("--doc", default=str(DEFAULT_DOC), help="markdown page whose generated section is rewritten")
    args = ap.parse_args(argv)
    if not args.table and args.part is None:
        ap.error("give --part small, --part large, or --table")
    return args


def main(argv=None):
    args = parse_args(argv)
    command = " ".join(["python scripts/shrinkage.py", *(argv if argv is not None else sys.argv[1:])])
    saved = load_saved(args.json)
    if not args.table:
        warnings.filterwarnings("ignore", message=".*the ensemble is empty")
        records, meta = run_part(args.part, args, command)
        saved["results"] = [r for r in saved["results"] if r["part"] != args.part] + records
        saved["meta"][args.part] = meta
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(saved, indent=1))
    write_doc(args.doc, saved)
    print(markdown(saved))
    return 0


if __name__ == "__main__":
    sys.exit(main())
