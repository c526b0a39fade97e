"""Reproduce the VadaBoost paper's stump comparison (Shivaswamy & Jebara, NeurIPS 2011, Table 1).

Protocol (the paper's Section 5): for each data set and
each of R repeats, a random 50/25/25 train/validation/test split; every booster runs
until its validation error has not improved for 100 rounds (the model keeps the best
round); hyperparameters are chosen by validation error (VadaBoost and EBBoost: lambda in
{0, 0.1, ..., 1}; QuadBoost-L1: lambda in 10 log-spaced values in [1e-4, 1]; SABoost:
gamma in {0.5, 1, 1.5}, schedule gamma / t) and the test error at that choice is reported.
The table gives mean ± standard error over the repeats; per data set the best mean is in
bold and the boosters not significantly different from it (paired t-test, 1%) are marked.

    python scripts/reproduce.py --out docs/reproduction.md   # R = 50, the committed table
    python scripts/reproduce.py --repeats 2 --quick          # a smoke run in seconds
                                                             # (writes reproduction-results/)

Data: twonorm and ringnorm (7400 rows, 20 features), waveform (5000 rows, 21 features,
CART class 1 vs the rest), all generated (fastboost.datasets); scikit-learn's breast cancer
(569 x 30); digit pairs 0/9, 1/4, 2/7, 3/8, 5/6 of scikit-learn's 8x8 digits (a proxy
for the paper's MNIST pairs, so those numbers are not comparable with the paper's).
"""
import argparse
import json
import os
import platform
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed

import numpy as np

BOOSTERS = ["AdaBoost", "VadaBoost", "EBBoost", "QuadBoost-L1", "SABoost"]
LAMBDAS = [round(0.1 * i, 1) for i in range(11)]
QB_LAMBDAS = list(np.logspace(-4, 0, 10))
GAMMAS = [0.5, 1.0, 1.5]
READING_MARKER = "<!-- reading: kept when the script rewrites this file -->"
DIGIT_PAIRS = [(0, 9), (1, 4), (2, 7), (3, 8), (5, 6)]
DATASETS = ["twonorm", "ringnorm", "waveform", "breast_cancer"] + [f"digits{a}{b}" for a, b in DIGIT_PAIRS]

#: The paper's Table 1 (stumps; test error %, mean ± s.e.) for the data sets generated here.
PAPER = {
    "twonorm": {"AdaBoost": "3.16±0.1", "EBBoost": "2.98±0.1", "VadaBoost": "3.09±0.1"},
    "ringnorm": {"AdaBoost": "13.16±0.6", "EBBoost": "11.74±0.6", "VadaBoost": "12.46±0.6"},
    "waveform": {"AdaBoost": "10.99±0.1", "EBBoost": "10.96±0.1", "VadaBoost": "10.75±0.1"},
}


def load(name, quick=False):
    """(X, y) of a data set, y in two classes."""
    from fastboost.datasets import make_ringnorm, make_twonorm, make_waveform

    if name == "twonorm":
        X, y = make_twonorm(800 if quick else 7400, random_state=20111)
    elif name == "ringnorm":
        X, y = make_ringnorm(800 if quick else 7400, random_state=20112)
    elif name == "waveform":
        X, y = make_waveform(800 if quick else 5000, random_state=20113, binary=True, positive_class=1)
    elif name == "breast_cancer":
        from sklearn.datasets import load_breast_cancer

        X, y = load_breast_cancer(return_X_y=True)
    else:
        from sklearn.datasets import load_digits

        a, b = int(name[-2]), int(name[-1])
        X, y = load_digits(return_X_y=True)
        keep = (y == a) | (y == b)
        X, y = X[keep], y[keep]
    return np.asarray(X, dtype=np.float64), np.asarray(y)


def candidates(booster, quick):
    """(label, estimator factory) for each hyperparameter value searched on the validation set."""
    import fastboost as fb

    lams = LAMBDAS[::5] if quick else LAMBDAS
    if booster == "AdaBoost":
        return [("", lambda: fb.AdaBoostClassifier)]
    if booster == "VadaBoost":
        return [(f"lam={lam}", lambda lam=lam: lambda **kw: fb.VadaBoostClassifier(lam=lam, **kw)) for lam in lams]
    if booster == "EBBoost":
        return [(f"lam={lam}", lambda lam=lam: lambda **kw: fb.EBBoostClassifier(lam=lam, **kw)) for lam in lams]
    if booster == "QuadBoost-L1":
        qls = QB_LAMBDAS[::4] if quick else QB_LAMBDAS
        return [(f"lam={lam:.2g}", lambda lam=lam: lambda **kw: fb.QuadBoostClassifier(
            penalty="l1", lam=lam, reweight_at_end=False, **kw)) for lam in qls]
    if booster == "SABoost":
        return [(f"gamma={g}", lambda g=g: lambda **kw: fb.SABoostClassifier(gamma=g, **kw)) for g in GAMMAS]
    raise ValueError(booster)


def run_one(name, repeat, max_rounds, patience, quick):
    """One repeat of one data set: every booster, hyperparameters chosen on validation."""
    import warnings

    warnings.filterwarnings("ignore", message=".*the ensemble is empty")  # QuadBoost-L1 with a large lambda
    X, y = load(name, quick)
    rng = np.random.default_rng([repeat, DATASETS.index(name)])
    order = rng.permutation(len(y))
    n_tr, n_va = len(y) // 2, len(y) // 4
    tr, va, te = order[:n_tr], order[n_tr:n_tr + n_va], order[n_tr + n_va:]
    out = {"dataset": name, "repeat": repeat}
    t0 = time.perf_counter()
    for booster in BOOSTERS:
        best = None
        for label, factory in candidates(booster, quick):
            model = factory()(n_estimators=max_rounds, n_iter_no_change=patience, n_jobs=1)
            model.fit(X[tr], y[tr], eval_set=(X[va], y[va]))
            val = float(model.validation_errors_.min()) if model.n_estimators_ else float(np.mean(
                model.predict(X[va]) != y[va]))
            if best is None or val < best[0]:
                best = (val, label, model)
        val, label, model = best
        out[booster] = {"test_error": float(np.mean(model.predict(X[te]) != y[te])), "val_error": val,
                        "choice": label, "rounds": int(model.n_estimators_),
                        "hit_cap": bool(len(getattr(model, "validation_errors_", [])) >= max_rounds)}
    out["seconds"] = time.perf_counter() - t0
    return out


def significance(results, name):
    """Per booster: (mean %, s.e. %, is best, not significantly different from the best at 1%)."""
    from scipy.stats import ttest_rel

    errs = {b: np.array([r[b]["test_error"] for r in results if r["dataset"] == name]) * 100 for b in BOOSTERS}
    means = {b: e.mean() for b, e in errs.items()}
    best = min(BOOSTERS, key=lambda b: means[b])
    out = {}
    for b, e in errs.items():
        se = e.std(ddof=1) / np.sqrt(len(e)) if len(e) > 1 else float("nan")
        if b == best:
            tie = True
        elif np.allclose(e, errs[best]):
            tie = True
        elif len(e) > 1:
            tie = bool(ttest_rel(e, errs[best]).pvalue >= 0.01)
        else:
            tie = False
        out[b] = (means[b], se, b == best, tie)
    return out


def markdown(results, args, elapsed, command):
    lines = ["# Reproducing the VadaBoost paper's Table 1 (decision stumps)", ""]
    lines += [f"Command: `{command}`", "",
              f"Machine: {platform.platform()}, {os.cpu_count()} cores, Python {platform.python_version()}; "
              f"{args.workers} worker processes, one thread each. Run time: {elapsed / 60:.1f} min. "
              f"R = {args.repeats} repeats. Date: {time.strftime('%Y-%m-%d')}.", "",
              "Protocol: random 50/25/25 train/validation/test splits; every booster runs until its validation "
              f"error has not improved for {args.patience} rounds (at most {args.max_rounds}) and keeps its best "
              "round; lambda (VadaBoost, EBBoost: {0, 0.1, ..., 1}; QuadBoost-L1: 10 log-spaced values in "
              "[1e-4, 1]) and SABoost's gamma ({0.5, 1, 1.5}, schedule gamma/t) are chosen by validation error. "
              "Test error in %, mean ± standard error. **Bold**: lowest mean; *italics*: not significantly "
              "different from it (paired t-test at 1%). Stumps, 255 bins.", ""]
    lines += ["| data set | " + " | ".join(BOOSTERS) + " |", "|---" * (len(BOOSTERS) + 1) + "|"]
    for name in DATASETS:
        if not any(r["dataset"] == name for r in results):
            continue
        sig = significance(results, name)
        cells = []
        for b in BOOSTERS:
            m, se, is_best, tie = sig[b]
            text = f"{m:.2f} ± {se:.2f}"
            cells.append(f"**{text}**" if is_best else (f"*{text}*" if tie else text))
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines += ["", "## The paper's numbers beside ours (same generators, same protocol)", "",
              "| data set | booster | paper | fastboost |", "|---|---|---|---|"]
    for name, row in PAPER.items():
        if not any(r["dataset"] == name for r in results):
            continue
        sig = significance(results, name)
        for b, paper in row.items():
            m, se, _, _ = sig[b]
            lines.append(f"| {name} | {b} | {paper} | {m:.2f} ± {se:.2f} |")
    lines += ["", "## Choices and rounds", "",
              "| data set | booster | most frequent choice | median rounds kept | runs that hit the round cap |",
              "|---|---|---|---|---|"]
    for name in DATASETS:
        rs = [r for r in results if r["dataset"] == name]
        if not rs:
            continue
        for b in BOOSTERS:
            choices = [r[b]["choice"] for r in rs]
            top = max(set(choices), key=choices.count) if choices[0] else "-"
            lines.append(f"| {name} | {b} | {top} | {int(np.median([r[b]['rounds'] for r in rs]))} | "
                         f"{sum(r[b]['hit_cap'] for r in rs)} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=50)
    parser.add_argument("--datasets", nargs="*", default=DATASETS, choices=DATASETS)
    parser.add_argument("--patience", type=int, default=100)
    parser.add_argument("--max-rounds", type=int, default=10_000)
    parser.add_argument("--workers", type=int, default=os.cpu_count())
    parser.add_argument("--quick", action="store_true", help="small data and grids (a smoke run)")
    parser.add_argument("--out", default=os.path.join("reproduction-results", "reproduction.md"),
                        help="the Markdown table (its .json beside it); a directory gets reproduction.md. "
                             "The committed docs/ copy is written only when named here.")
    args = parser.parse_args(argv)
    if args.out.endswith(("/", os.sep)) or os.path.isdir(args.out):
        args.out = os.path.join(args.out, "reproduction.md")
    command = " ".join(["python scripts/reproduce.py", *(argv if argv is not None else sys.argv[1:])])
    jobs = [(name, r) for r in range(args.repeats) for name in args.datasets]
    results = []
    start = time.perf_counter()
    print(f"{len(jobs)} jobs ({len(args.datasets)} data sets x {args.repeats} repeats) on {args.workers} "
          "processes", flush=True)
    if args.workers > 1:
        import multiprocessing

        with ProcessPoolExecutor(args.workers, mp_context=multiprocessing.get_context("spawn")) as pool:
            futures = [pool.submit(run_one, name, r, args.max_rounds, args.patience, args.quick) for name, r in jobs]
            for fut in as_completed(futures):
                results.append(fut.result())
                _progress(results, jobs, start)
    else:
        for name, r in jobs:
            results.append(run_one(name, r, args.max_rounds, args.patience, args.quick))
            _progress(results, jobs, start)
    results.sort(key=lambda r: (DATASETS.index(r["dataset"]), r["repeat"]))
    elapsed = time.perf_counter() - start
    text = markdown(results, args, elapsed, command)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    if os.path.exists(args.out):  # keep the hand-written reading of the results below the marker
        with open(args.out) as fh:
            old = fh.read()
        if READING_MARKER in old:
            text += "\n" + old[old.index(READING_MARKER):]
    with open(args.out, "w") as fh:
        fh.write(text)
    with open(os.path.splitext(args.out)[0] + ".json", "w") as fh:
        json.dump(results, fh, indent=0)
    print(text)
    print(f"wrote {args.out} in {elapsed / 60:.1f} min")
    return 0


def _progress(results, jobs, start):
    done = len(results)
    el = time.perf_counter() - start
    last = results[-1]
    errs = "  ".join(f"{b} {100 * last[b]['test_error']:.2f}%" for b in BOOSTERS)
    print(f"[{done}/{len(jobs)}] {last['dataset']} repeat {last['repeat']}: {errs}  "
          f"({el / 60:.1f} min, ~{el / done * (len(jobs) - done) / 60:.1f} min left)", flush=True)


if __name__ == "__main__":
    sys.exit(main())
