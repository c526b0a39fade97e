"""``fastboost bench --contention``: per-round times with and without a busy process beside the fit.

Users fit beside other work: ``GridSearchCV(n_jobs=2)``, a notebook next to a build, a Dask worker
sharing its machine. For each library (the fastboost algorithms and competitors selected as usual)
and for 1 and ``--threads`` threads, the per-round time is measured twice in a fresh child process,
as the plain benchmark does: once on its own and once with ``--contention-procs`` busy processes (each
spins one core in a tight Python loop) started before the child and stopped after it. The table gives
the four times and two ratios:

* ``busy Nt / busy 1t``: does using N threads still pay when another process is busy? (above 1: the
  extra threads make the round slower than one thread would);
* ``busy Nt / idle Nt``: how much the busy neighbour costs at N threads.

Like every figure of ``fastboost bench``, the ratios hold for the machine and the moment they were
measured; the JSON record says how busy the machine was besides the spinning processes.
"""
import subprocess
import sys
import time

from .measure import log

#: one busy core: a tight loop in a fresh interpreter (no threads, no memory traffic)
SPIN = "while True: pass"


class BusyProcesses:
    """``n`` processes that each keep one core busy, from ``__enter__`` to ``__exit__``."""

    def __init__(self, n):
        self.n = n
        self.procs = []

    def __enter__(self):
        self.procs = [subprocess.Popen([sys.executable, "-c", SPIN], stdin=subprocess.DEVNULL)
                      for _ in range(self.n)]
        time.sleep(0.3)  # running before the child starts
        return self

    def __exit__(self, *exc):
        for p in self.procs:
            p.kill()
        for p in self.procs:
            p.wait()
        return False


def thread_counts(threads):
    """1 and ``threads`` (just 1 when threads is 1)."""
    return sorted({1, max(1, int(threads))})


def run_contention(tasks, run_child, n_busy, threads):
    """Per-round times of every task at 1 and ``threads`` threads, alone and beside ``n_busy`` busy processes.

    run_child(task) -> the child's result dict or None (the plain benchmark's runner).
    Returns one row per task: {"key", "label", "times": {"idle 1t": s, "busy 1t": s, ...}, "ratios": {...},
    "results": {...}} with None where a child failed.
    """
    rows = []
    counts = thread_counts(threads)
    for task in tasks:
        times, results = {}, {}
        for busy in (False, True):
            for k in counts:
                name = f"{'busy' if busy else 'idle'} {k}t"
                log(f"{task['label']}: {name}" + (f" ({n_busy} busy process{'es' if n_busy > 1 else ''})"
                                                  if busy else ""))
                child = {**task, "threads": k, "variant": name}
                if busy:
                    with BusyProcesses(n_busy):
                        res = run_child(child)
                else:
                    res = run_child(child)
                ok = res is not None and res.get("status") == "ok"
                times[name] = res["per_round_s"] if ok else None
                results[name] = res
        rows.append({"key": task["key"], "label": task["label"], "times": times, "results": results,
                     "ratios": contention_ratios(times, counts[-1])})
    return rows


def contention_ratios(times, n):
    """The table's ratios from the four times (None where a time is missing, or with one thread only)."""
    def ratio(a, b):
        return times[a] / times[b] if times.get(a) and times.get(b) else None

    if n == 1:
        return {"busy 1t / idle 1t": ratio("busy 1t", "idle 1t")}
    return {f"busy {n}t / busy 1t": ratio(f"busy {n}t", "busy 1t"),
            f"busy {n}t / idle {n}t": ratio(f"busy {n}t", f"idle {n}t"),
            f"idle {n}t / idle 1t": ratio(f"idle {n}t", "idle 1t")}


def format_contention(rows, n_busy, header):
    """The --contention table: per-round milliseconds and the ratios, one line per library."""
    if not rows:
        return header + "\n(no library ran)"
    names = list(rows[0]["times"])
    ratio_names = list(rows[0]["ratios"])
    width = max(len(r["label"]) for r in rows)
    lines = [header,
             f"per round, ms ({n_busy} busy process{'es' if n_busy > 1 else ''} beside the fit in the 'busy' "
             "columns)",
             f"{'':<{width}}  " + "  ".join(f"{n:>9}" for n in names) + "  " + "  ".join(
                 f"{n:>19}" for n in ratio_names)]
    for r in rows:
        cells = [f"{r['times'][n] * 1e3:9.2f}" if r["times"][n] else f"{'failed':>9}" for n in names]
        ratios = [f"{r['ratios'][n]:19.2f}" if r["ratios"][n] else f"{'-':>19}" for n in ratio_names]
        lines.append(f"{r['label']:<{width}}  " + "  ".join(cells) + "  " + "  ".join(ratios))
    return "\n".join(lines)
