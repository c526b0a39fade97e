"""A child process of ``fastboost bench``: read the task, load the data, run it, write the result.

``_worker.py`` (run by path in a fresh interpreter, see ``processes.run_child``) loads this module with
its siblings as a stand-in package and calls ``main``. Imports only the standard library, NumPy and its
siblings at the top: a child that fits a competitor never imports fastboost.
"""
import json
import sys
import time
from pathlib import Path

from . import measure
from .adapters import fastboost_class
from .curve import run_curve_task
from .measure import Timer, current_rss_mb, log, self_peak_rss_mb
from .processes import load_data
from .tasks import run_task


def main(task_path):
    """Load the data, record the RSS baseline, run one task, write the result."""
    task = json.loads(Path(task_path).read_text())
    measure.T_START = time.perf_counter() - (time.time() - task["t_start_epoch"])  # the parent's clock for log()
    if task.get("fastboost_root"):
        sys.path.insert(0, task["fastboost_root"])
    if task["key"] == "compile":
        result = compile_task(task)
    else:
        data = load_data(task["data_dir"])
        base = current_rss_mb()
        run = run_curve_task if task.get("mode") == "curve" else run_task
        result = run(task, data, log)
        result["base_rss_mb"] = base
        result["self_peak_rss_mb"] = self_peak_rss_mb()
    Path(task["result_path"]).write_text(json.dumps(result))


def compile_task(task):
    """In a fresh process: import fastboost, first fit + predict of each algorithm (compile or cache
    load), then the same again (already compiled)."""
    with Timer() as ti:
        import fastboost  # noqa: F401
        from fastboost.datasets import make_twonorm
    X, y = make_twonorm(2000, n_features=task["d"], random_state=0)
    out = {"key": "compile", "import_s": ti.s, "first": {}, "second": {}}
    for phase in ("first", "second"):
        for algo in task["algorithms"]:
            cls, _ = fastboost_class(algo)
            if cls is None:
                continue
            with Timer() as t:
                cls(n_estimators=5, max_bins=task["bins"], n_jobs=task["threads"]).fit(X, y).predict(X)
            out[phase][algo] = t.s
    out["first_total_s"] = sum(out["first"].values())
    out["second_total_s"] = sum(out["second"].values())
    return out
