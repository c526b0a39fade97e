#!/usr/bin/env python
"""Train and predict on parquet data bigger than the memory the process may use, and check the models.

Generates (or reuses, ``--data``) a directory of parquet files as ``scripts/bench_dataset.py`` does, then
runs, each in its own process under a memory limit of ``--limit-fraction`` (default 0.5) of the raw
table's size (a Linux memory cgroup: resident memory, the page cache included, is held under the limit;
without cgroups, ``--rlimit`` caps the address space instead):

1. ``fastboost train DIR --target y --codes-cache FILE -o cli.fbm`` (streamed, codes in a file on disk);
2. ``fastboost predict cli.fbm DIR --drop y -o pred.parquet`` (streamed);
3. ``AdaBoostClassifier(...).fit(Dataset.from_parquet(DIR, target="y", codes_path=FILE))`` in Python,
   saved as api.fbm.

Then, without a limit, the in-memory fit of the whole table (read with pandas) is the reference: the
script checks that the three models' rounds are bit-identical to it and that the streamed predictions
equal its ``predict`` on every row. Exit status 0 when every check holds.

    python scripts/limited_memory.py --rows 40000000 --files 200    # 6.4 GB of float64 features

Prints a Markdown table (each limited step's time, peak memory and whether it held) and the checks.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

SCRIPTS = Path(__file__).resolve().parent
sys.path.insert(0, str(SCRIPTS))
import bench_dataset  # noqa: E402  (the same generated files as the Dataset benchmark)

CGROUP_V1 = Path("/sys/fs/cgroup/memory")
CGROUP_V2 = Path("/sys/fs/cgroup")


class MemoryCgroup:
    """A fresh memory cgroup with a limit in bytes (cgroup v1 or v2); ``peak()`` is its peak usage."""

    def __init__(self, limit):
        name = f"fastboost-limit-{os.getpid()}"
        if (CGROUP_V1 / "memory.limit_in_bytes").exists():
            self.path, self.v2 = CGROUP_V1 / name, False
        elif (CGROUP_V2 / "cgroup.controllers").exists():
            self.path, self.v2 = CGROUP_V2 / name, True
        else:
            raise OSError("no memory cgroup here (use --rlimit)")
        self.path.mkdir()
        if self.v2:
            (self.path / "memory.max").write_text(str(limit))
            (self.path / "memory.swap.max").write_text("0")
        else:
            (self.path / "memory.limit_in_bytes").write_text(str(limit))

    def enter(self):  # preexec_fn of the child: move it (and everything it starts) into the group
        (self.path / "cgroup.procs").write_text(str(os.getpid()))

    def peak(self):
        f = self.path / ("memory.peak" if self.v2 else "memory.max_usage_in_bytes")
        return int(f.read_text()) if f.exists() else None

    def reset_peak(self):
        if not self.v2:
            (self.path / "memory.max_usage_in_bytes").write_text("0")

    def failcnt(self):
        if self.v2:
            events = dict(line.split() for line in (self.path / "memory.events").read_text().splitlines())
            return int(events.get("oom_kill", 0))
        return int((self.path / "memory.failcnt").read_text())

    def remove(self):
        try:
            self.path.rmdir()
        except OSError:
            pass


def run_limited(cmd, group, rlimit, log):
    """Run cmd in the group (or under an address-space rlimit): (seconds, the group's peak usage in bytes (page
    cache included) or None, return code, the process's peak resident set in bytes)."""
    if group is not None:
        group.reset_peak()
        preexec = group.enter
    else:
        import resource

        def preexec():
            resource.setrlimit(resource.RLIMIT_AS, (rlimit, rlimit))
    start = time.perf_counter()
    with open(log, "w") as out:
        child = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, preexec_fn=preexec)
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
    return (time.perf_counter() - start, (group.peak() if group is not None else None), child.returncode,
            usage.ru_maxrss * 1024)


API_FIT = """
import sys
from fastboost import AdaBoostClassifier, Dataset
data, codes, rounds, depth, out = sys.argv[1:6]
ds = Dataset.from_parquet(data, target="y", codes_path=codes, random_state=0)
AdaBoostClassifier(int(rounds), max_depth=int(depth), random_state=0).fit(ds).save(out)
"""


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rows", type=int, default=2_000_000)
    p.add_argument("--features", type=int, default=20)
    p.add_argument("--files", type=int, default=20)
    p.add_argument("--rounds", type=int, default=100)
    p.add_argument("--max-depth", type=int, default=1)
    p.add_argument("--data", default=None, help="an existing directory of generated files (default: a new one)")
    p.add_argument("--limit-fraction", type=float, default=0.5, help="the limit as a fraction of the raw size")
    p.add_argument("--rlimit", action="store_true", help="cap the address space (RLIMIT_AS) instead of a cgroup")
    p.add_argument("--json", default=None)
    args = p.parse_args()

    work = Path(tempfile.mkdtemp(prefix="fastboost-limited-"))
    data = Path(args.data) if args.data else work / "data"
    if not args.data:
        t = time.perf_counter()
        bench_dataset.generate(data, args.rows, args.features, args.files)
        print(f"generated {args.rows} rows in {time.perf_counter() - t:.0f} s", file=sys.stderr)
    import pyarrow.dataset as pads

    n_rows = pads.dataset(str(data), format="parquet").count_rows()
    raw = n_rows * args.features * 8
    limit = int(args.limit_fraction * raw)
    group = None if args.rlimit else MemoryCgroup(limit)
    fb = [sys.executable, "-m", "fastboost"]
    steps = [
        ("fastboost train (streamed, codes file)",
         fb + ["train", str(data), "--target", "y", "--codes-cache", str(work / "cli.codes"), "--n-estimators",
               str(args.rounds), "--max-depth", str(args.max_depth), "--random-state", "0", "-o",
               str(work / "cli.fbm")]),
        ("fastboost predict (streamed)",
         fb + ["predict", str(work / "cli.fbm"), str(data), "--drop", "y", "-o", str(work / "pred.parquet")]),
        ("fit(Dataset.from_parquet(...), codes_path=...)",
         [sys.executable, "-c", API_FIT, str(data), str(work / "api.codes"), str(args.rounds),
          str(args.max_depth), str(work / "api.fbm")]),
    ]
    rows = []
    try:
        for name, cmd in steps:
            seconds, peak, code, rss = run_limited(cmd, group, limit, work / f"step{len(rows)}.log")
            rows.append({"step": name, "seconds": seconds, "peak_bytes": peak, "peak_rss_bytes": rss,
                         "exit_code": code,
                         "limit_hits": group.failcnt() if group is not None else None,
                         "log_tail": (work / f"step{len(rows)}.log").read_text()[-1500:] if code else ""})
            print(f"{name}: {seconds:.0f} s, exit {code}", file=sys.stderr)
    finally:
        if group is not None:
            group.remove()

    # the reference: the in-memory fit of the whole table, no limit
    import pandas as pd

    from fastboost import AdaBoostClassifier, load

    frame = pd.read_parquet(data)
    X, y = frame.drop(columns="y").to_numpy(np.float64), frame["y"].to_numpy()
    del frame
    t = time.perf_counter()
    reference = AdaBoostClassifier(args.rounds, max_depth=args.max_depth, random_state=0).fit(X, y)
    in_memory_seconds = time.perf_counter() - t
    checks = {}
    for name in ("cli", "api"):
        path = work / f"{name}.fbm"
        model = load(path) if path.exists() else None
        checks[f"{name} model equals the in-memory model"] = model is not None and all(
            np.array_equal(model.rounds_[f], reference.rounds_[f], equal_nan=True)
            for f in reference.rounds_.dtype.names) and (reference.nodes_ is None or np.array_equal(
                model.nodes_, reference.nodes_))
    pred = work / "pred.parquet"
    if pred.exists():
        streamed = pd.read_parquet(pred).iloc[:, 0].to_numpy()
        checks["streamed predictions equal the in-memory predict"] = np.array_equal(streamed, reference.predict(X))
    else:
        checks["streamed predictions equal the in-memory predict"] = False

    mib = 2.0 ** 20
    print(f"\n{n_rows:,} rows x {args.features} float64 features: raw {raw / mib:,.0f} MiB, limit "
          f"{limit / mib:,.0f} MiB ({'address space' if args.rlimit else 'memory cgroup'})\n")
    print("| step | seconds | peak RSS (MiB) | cgroup peak, page cache included (MiB) | finished |")
    print("|---|---|---|---|---|")
    for r in rows:
        peak = "–" if r["peak_bytes"] is None else f"{r['peak_bytes'] / mib:,.0f}"
        print(f"| {r['step']} | {r['seconds']:.0f} | {r['peak_rss_bytes'] / mib:,.0f} | {peak} | "
              f"{'yes' if r['exit_code'] == 0 else 'no'} |")
    print(f"\nin-memory reference fit (no limit): {in_memory_seconds:.0f} s")
    for name, ok in checks.items():
        print(f"- {name}: {'yes' if ok else 'NO'}")
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": n_rows, "features": args.features, "raw_bytes": raw,
                                               "limit_bytes": limit, "steps": rows, "checks": checks,
                                               "in_memory_seconds": in_memory_seconds}, indent=1))
    for r in rows:
        if r["exit_code"]:
            print(f"\n{r['step']} failed:\n{r['log_tail']}", file=sys.stderr)
    return 0 if all(r["exit_code"] == 0 for r in rows) and all(checks.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
