"""Running a task of ``fastboost bench`` in a fresh child process or in this one, and the data the children read.

A child is a fresh interpreter that runs ``_worker.py`` by path (``WORKER_RUN_NAME``); it reads its task
from a JSON file and writes its result next to it (``child.py``). Imports only the standard library,
NumPy and its sibling ``measure``.
"""
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from . import measure
from .measure import default_threads, maxrss_to_mb, own_cpu, system_busy_cpu

#: ``__name__`` of the child processes' entry module ``_worker.py`` (run by path, see ``run_child``).
WORKER_RUN_NAME = "__fastboost_bench_worker__"
WORKER_PATH = Path(__file__).resolve().with_name("_worker.py")
#: the arrays a task reads: training and test rows and labels
DATA_NAMES = ("Xtr", "ytr", "Xte", "yte")


def fastboost_root():
    """The directory the installed fastboost package is in (a fastboost task's child imports it from there)."""
    import fastboost

    return str(Path(fastboost.__file__).resolve().parent.parent)


def save_data(ddir, Xtr, ytr, Xte, yte):
    """Write the four arrays as .npy files in ``ddir`` (read by ``load_data``)."""
    for name, a in zip(DATA_NAMES, (Xtr, ytr, Xte, yte)):
        np.save(Path(ddir) / f"{name}.npy", a)


def load_data(ddir):
    """The dict of the four arrays ``save_data`` wrote in ``ddir``."""
    return {name: np.load(Path(ddir) / f"{name}.npy") for name in DATA_NAMES}


def parent_clock():
    """The epoch time at which this process's log clock (``measure.T_START``) started: a child's log lines carry
    the parent's times."""
    return time.time() - (time.perf_counter() - measure.T_START)


def child_task(task, ddir, fb_root):
    """``task`` as a child runs it: the data directory, fastboost's location (fastboost tasks only) and the
    parent's clock."""
    return {**task, "data_dir": str(ddir), "fastboost_root": fb_root if task["library"] == "fastboost" else None,
            "t_start_epoch": parent_clock()}


def run_child(task, tmp, env_extra=None):
    """Run ``task`` in a fresh interpreter: (result or None, exit code, peak RSS MB, wall s, other processes' cores)."""
    task_path = Path(tmp) / f"task-{task['key']}-{time.monotonic_ns()}.json"
    task["result_path"] = str(task_path.with_suffix(".result.json"))
    task_path.write_text(json.dumps(task))
    env = {**os.environ, "OMP_NUM_THREADS": str(task.get("threads", default_threads())),
           "PYTHONUNBUFFERED": "1"}
    env.update(env_extra or {})
    cmd = [sys.executable, "-c",
           f"import runpy, sys; runpy.run_path(sys.argv[1], run_name={WORKER_RUN_NAME!r})",
           str(WORKER_PATH), str(task_path)]
    busy0, t0 = system_busy_cpu(), time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=tmp, env=env, stdin=subprocess.DEVNULL)
    rusage_peak = cpu = None
    try:
        if hasattr(os, "wait4"):
            while True:
                try:
                    _, status, ru = os.wait4(proc.pid, 0)
                    break
                except InterruptedError:
                    continue
            proc.returncode = os.waitstatus_to_exitcode(status)
            rusage_peak = maxrss_to_mb(ru.ru_maxrss)  # on Linux at least the parent's RSS at fork
            cpu = ru.ru_utime + ru.ru_stime
        else:
            proc.wait()
    except BaseException:
        proc.kill()
        raise
    wall = time.perf_counter() - t0
    busy1 = system_busy_cpu()
    other = None
    if busy0 is not None and cpu is not None and wall > 0:
        other = max(0.0, (busy1 - busy0) - cpu) / wall
    rp = Path(task["result_path"])
    result = json.loads(rp.read_text()) if proc.returncode == 0 and rp.exists() else None
    peak = None
    if result is not None:
        result["rusage_maxrss_mb"] = rusage_peak
        peak = result.get("self_peak_rss_mb") or rusage_peak
    return result, proc.returncode, peak, wall, other


def run_task_in_child(task, ddir, tmp, fb_root):
    """Run ``task`` in a child on the data saved in ``ddir``: (result, peak RSS MB, wall s, other processes'
    cores); a child that wrote no result gives a "failed" result."""
    res, rc, peak, wall, other = run_child(child_task(task, ddir, fb_root), tmp)
    if res is None:
        res = {"key": task["key"], "status": "failed", "message": f"child process exited with code {rc}"}
    return res, peak, wall, other


def run_task_here(run, task, data):
    """``run(task, data)`` in this process: (result, wall s, other processes' cores or None); an exception gives a
    "failed" result."""
    busy0, own0, t0 = system_busy_cpu(), own_cpu(), time.perf_counter()
    try:
        res = run(task, data)
    except Exception as exc:
        res = {"key": task["key"], "status": "failed", "message": f"{type(exc).__name__}: {exc}"}
    wall = time.perf_counter() - t0
    other = None
    if busy0 is not None:
        other = max(0.0, (system_busy_cpu() - busy0) - (own_cpu() - own0)) / wall
    return res, wall, other
