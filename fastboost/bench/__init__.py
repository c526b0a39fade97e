"""``fastboost bench``: fastboost against scikit-learn, LightGBM and XGBoost on the same data.

On generated twonorm (``fastboost.datasets.make_twonorm``) or a .npy/.parquet/.csv file, fits
the selected fastboost algorithms and whichever competitors are installed (scikit-learn's
AdaBoostClassifier on decision trees, LightGBM, XGBoost, scikit-learn's
HistGradientBoostingClassifier) at the same tree depth, number of rounds, number of bins and
number of threads, and reports per library:

* preparation (binning) time, measured on its own: fastboost ``bin_time_``; LightGBM
  ``Dataset(..., free_raw_data=False).construct()``; XGBoost ``QuantileDMatrix`` (every run uses
  ``tree_method="hist"``); HistGradientBoosting's own binning time from its verbose log;
  scikit-learn AdaBoost has none (exact splits on raw values);
* training time per round: median over ``--repeat`` fits of the training time alone divided by
  the number of rounds actually run (slow competitors at many rows run a few rounds and are
  extrapolated, marked so);
* fastboost's first-call (numba compile) time: a fresh process with an empty ``NUMBA_CACHE_DIR``
  (cold) and a second fresh process on that filled cache (warm);
* peak RSS: every library runs in its own child process; the peak is that process's high-water
  mark (VmHWM; ``ru_maxrss`` from ``os.wait4`` where /proc is missing), next to the child's RSS
  after loading the data and before importing the library;
* test accuracy on held-out rows;
* a streaming-bandwidth floor: a numba ``prange`` kernel sums a uint8 array of the size of
  fastboost's binned codes (n_samples x n_features bytes) in the same process as fastboost's
  fits; fastboost's per-round time is reported as a multiple of bytes / bandwidth.

The table goes to stdout, progress to stderr, the full record to a JSON file (default
``bench_results/bench-<timestamp>.json``) and, with matplotlib, a bar chart next to it.

``fastboost bench --curve`` measures time to accuracy instead (``curve.py``): each library fits once
with many rounds on generated twonorm (stumps), ringnorm (depth-3 trees) and 3-class waveform
(stumps), 1 000 000 training rows by default; the end of every round is time-stamped inside the fit
and the test error after every round computed after it (never counted as training time). Per data
set it prints each library's best test error, the seconds it needs to come within 0.1 points of it
(``--within``) and that time over fastboost's, writes the curves to
``bench_results/curve-<timestamp>.json`` and charts test error against seconds.

Every library is driven through its adapter (``adapters.py``: prepare, train with a per-round
callback, predict), the same for the per-round timing and the curves. The package's modules import
only the standard library and NumPy at the top: the child processes load them by path
(``_worker.py``), so competitors' children never import fastboost.
"""
# adapters: one per library; measure: memory, timers, round stamps, load, bandwidth; options: argument helpers;
# tasks: data and the per-round timing; curve: --curve's data, fits and arithmetic; processes and child: the child
# processes; report and curve_report: tables, JSON, charts; contention: --contention; profile: the kernel profile;
# cli: arguments, their check and run.
from .adapters import ADAPTERS, COMPETITORS, FASTBOOST_ALGORITHMS, fastboost_class
from .cli import add_arguments, check_args, main, run
from .curve import CURVE_DATASETS, run_curve, time_to_within
from .measure import bandwidth_probe, current_rss_mb, default_threads, self_peak_rss_mb
from .profile import profile_kernels
from .report import format_profile, format_table, machine_info, write_plot, write_report
from .tasks import load_data, run_task

__all__ = ["ADAPTERS", "COMPETITORS", "CURVE_DATASETS", "FASTBOOST_ALGORITHMS", "add_arguments", "bandwidth_probe",
           "check_args", "current_rss_mb", "default_threads", "fastboost_class", "format_profile", "format_table",
           "load_data", "machine_info", "main", "profile_kernels", "run", "run_curve", "run_task", "self_peak_rss_mb",
           "time_to_within", "write_plot", "write_report"]
