"""Measurements for ``fastboost bench``: RSS and peak memory, timers and per-round time stamps, the load of
other processes, CPU accounting and the streaming-bandwidth and scatter-add probes.

Imports only the standard library and NumPy at the top (numba and psutil inside the functions
that use them): the child processes load this module by path (see ``_worker.py``).
"""
import os
import statistics
import sys
import time

import numpy as np

T_START = time.perf_counter()


# ======================================================================================= progress and timers
def log(msg):
    print(f"[{time.perf_counter() - T_START:7.1f} s] {msg}", file=sys.stderr, flush=True)


class Timer:
    """``with Timer() as t: ...``: the block's wall seconds in ``t.s``."""

    def __enter__(self):
        self.t0 = time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.s = time.perf_counter() - self.t0
        return False


class RoundStamps:
    """Elapsed seconds taken inside a library's per-round callbacks, on a clock that leaves out the callbacks'
    own time: ``start()``, then ``stamp(mark)`` from the callbacks (``times``: the seconds, ``marks``: what each
    marks, a round count or None); ``now()`` reads the clock."""

    def __init__(self):
        self.t0 = None
        self.times = []   # elapsed seconds of each stamp
        self.marks = []   # what each stamp marks (a round count, or None)
        self.overhead = 0.0

    def start(self):
        self.t0 = time.perf_counter()

    def now(self):
        """Elapsed seconds since ``start``, callback time left out."""
        return time.perf_counter() - self.t0 - self.overhead

    def stamp(self, mark=None):
        t = time.perf_counter()
        self.times.append(t - self.t0 - self.overhead)
        self.marks.append(mark)
        self.overhead += time.perf_counter() - t


def interpolate_round_times(points, n_rounds):
    """Seconds at which rounds 1..n_rounds ended, linear between ``points``: (rounds done, seconds) pairs
    in increasing order, the first of them (0, when round 1 started)."""
    done = np.array([p[0] for p in points], dtype=np.float64)
    secs = np.array([p[1] for p in points], dtype=np.float64)
    if done[0] != 0 or np.any(np.diff(done) <= 0) or done[-1] < n_rounds:
        raise ValueError(f"round timestamps must start at round 0, increase and reach round {n_rounds}; "
                         f"got rounds {done.astype(int).tolist()}")
    return np.interp(np.arange(1, n_rounds + 1, dtype=np.float64), done, secs)


#: ``fastboost bench``'s early rounds end at this round; its late rounds are those after LATE_AFTER, reported once a
#: fit runs at least LATE_MIN rounds
EARLY_UNTIL, LATE_AFTER, LATE_MIN = 50, 100, 150


def phase_round_seconds(ends):
    """(early, late): the mean seconds a round over rounds 2 .. 50 and over rounds 101 .. n, from the seconds at
    which rounds 1 .. n ended (``ends``); early is None under 2 rounds, late None under LATE_MIN rounds."""
    n = len(ends)
    k = min(n, EARLY_UNTIL)
    early = float(ends[k - 1] - ends[0]) / (k - 1) if k >= 2 else None
    late = float(ends[n - 1] - ends[LATE_AFTER - 1]) / (n - LATE_AFTER) if n >= LATE_MIN else None
    return early, late


def default_threads():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


# ======================================================================================= memory
def current_rss_mb():
    """This process's resident set size now, in MB (psutil, else /proc; None if neither works)."""
    try:
        import psutil

        return psutil.Process().memory_info().rss / 2 ** 20
    except Exception:
        pass
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2 ** 20
    except Exception:
        return None


def maxrss_to_mb(maxrss):
    """``ru_maxrss`` in MB (bytes on macOS, KiB on Linux)."""
    return maxrss / 2 ** 20 if sys.platform == "darwin" else maxrss / 1024  # bytes on macOS, KiB on Linux


def self_peak_rss_mb():
    """Peak RSS of this process since it started (exec): VmHWM on Linux, else ru_maxrss."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024  # kB
    except Exception:
        pass
    try:
        import resource

        return maxrss_to_mb(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
    except Exception:
        return None


def reset_peak_rss():
    """Reset this process's peak RSS (VmHWM) to its current RSS; True if the OS allowed it (Linux:
    writing 5 to /proc/self/clear_refs)."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


class FitMemory:
    """Peak RSS of the timed fits over the RSS just before them (the library imported and warmed up,
    the data loaded): what fitting itself needs beyond its input."""

    def __enter__(self):
        self.ok = reset_peak_rss()
        self.before = current_rss_mb()
        return self

    def __exit__(self, *exc):
        peak = self_peak_rss_mb()
        self.mb = peak - self.before if (self.ok and peak is not None and self.before is not None) else None


# ======================================================================================= CPU accounting
def system_busy_cpu():
    """Busy CPU seconds of the whole machine so far (psutil), or None."""
    try:
        import psutil

        ct = psutil.cpu_times()
        return sum(ct) - ct.idle - getattr(ct, "iowait", 0.0)
    except Exception:
        return None


def own_cpu():
    """CPU seconds (user + system) this process has used so far."""
    t = os.times()
    return t.user + t.system


def other_load(seconds):
    """Cores used by other processes over ``seconds`` (None without psutil)."""
    busy0, own0, t0 = system_busy_cpu(), own_cpu(), time.perf_counter()
    if busy0 is None:
        return None
    time.sleep(seconds)
    wall = time.perf_counter() - t0
    return max(0.0, (system_busy_cpu() - busy0) - (own_cpu() - own0)) / wall


# ================================================================================== bandwidth floor
_SUM_KERNEL = None


def _sum_kernel():
    global _SUM_KERNEL
    if _SUM_KERNEL is None:
        import numba
        from numba import prange

        # not cached: this module runs both as fastboost.bench.measure and, in the children, under
        # another package name, and a cache entry written under one name fails to load under the other
        # (integer sums vectorise without any fastmath flag)
        @numba.njit(parallel=True, nogil=True, error_model="numpy", cache=False)
        def sum_blocks(a, out, block):
            n = a.shape[0]
            for b in prange(out.shape[0]):
                c = a[b * block: min(n, (b + 1) * block)]  # a view: the inner loop vectorises
                s = np.uint64(0)
                for i in range(c.shape[0]):
                    s += c[i]
                out[b] = s

        _SUM_KERNEL = sum_blocks
    return _SUM_KERNEL


def bandwidth_probe(n_bytes, threads, runs=9, min_seconds=0.02):
    """Streaming read bandwidth: a numba prange kernel sums a uint8 array of ``n_bytes`` bytes.

    Median over ``runs`` timings (each repeats the sum often enough to last ``min_seconds``),
    after one warm-up call. A small array stays in cache, as the codes of a small data set do.
    """
    import numba

    n_bytes = max(1, int(n_bytes))
    a = np.full(n_bytes, 1, np.uint8)  # every page touched, no temporary (it would count in the peak RSS)
    block = 1 << 16
    out = np.empty(-(-n_bytes // block), np.uint64)
    kernel = _sum_kernel()
    try:  # the pool as fastboost's fits start it (its wait policy), when fastboost is importable
        from fastboost._config import start_thread_pool

        previous = start_thread_pool()
    except ImportError:
        previous = numba.get_num_threads()
    numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
    try:
        kernel(a, out, block)  # compile + warm
        t = time.perf_counter()
        kernel(a, out, block)
        once = max(time.perf_counter() - t, 1e-7)
        reps = max(1, int(min_seconds / once))
        samples = []
        for _ in range(runs):
            t = time.perf_counter()
            for _ in range(reps):
                kernel(a, out, block)
            samples.append((time.perf_counter() - t) / reps)
    finally:
        numba.set_num_threads(previous)
    check = int(out.sum())
    del a
    med = statistics.median(samples)
    return {
        "samples_s": samples,
        "bytes": n_bytes,
        "threads": min(threads, numba.config.NUMBA_NUM_THREADS),
        "runs": runs,
        "reps_per_run": reps,
        "median_s": med,
        "gb_per_s": n_bytes / med / 1e9,
        "best_gb_per_s": n_bytes / min(samples) / 1e9,
        "checksum": check,
        "kernel": "numba njit(parallel=True) prange over 64 KiB blocks, uint64 sum of uint8",
    }


_SCATTER_KERNEL = None


def _scatter_kernel():
    global _SCATTER_KERNEL
    if _SCATTER_KERNEL is None:
        import numba
        from numba import prange

        @numba.njit(parallel=True, nogil=True, error_model="numpy", cache=False)
        def scatter(codes, y, w, out):
            for f in prange(codes.shape[0]):
                h = out[f].ravel()
                h[:] = 0.0
                c = codes[f]
                for i in range(c.shape[0]):
                    h[2 * c[i] + y[i]] += w[i]

        _SCATTER_KERNEL = scatter
    return _SCATTER_KERNEL


def scatter_probe(n_updates, threads, n_features=8, runs=5, min_seconds=0.02, seed=0):
    """Seconds per scatter-add: the bare histogram update ``h[2 * code + y] += w`` (one feature a pass, codes
    uniform over 255 bins), timed on about ``n_updates`` updates (at most 2**25) over ``n_features`` features
    and the given threads. A stump round makes n_rows x n_features of them: that many times this rate is the
    round's scatter-add floor. Median over ``runs`` timings after a warm-up call."""
    import numba

    n = max(1, min(int(n_updates), 1 << 25) // n_features)
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, 255, (n_features, n), dtype=np.uint8)
    y = rng.integers(0, 2, n).astype(np.uint16)
    w = rng.random(n)
    out = np.empty((n_features, 256, 2))
    kernel = _scatter_kernel()
    try:
        from fastboost._config import start_thread_pool

        previous = start_thread_pool()
    except ImportError:
        previous = numba.get_num_threads()
    numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
    try:
        kernel(codes, y, w, out)
        t = time.perf_counter()
        kernel(codes, y, w, out)
        reps = max(1, int(min_seconds / max(time.perf_counter() - t, 1e-7)))
        samples = []
        for _ in range(runs):
            t = time.perf_counter()
            for _ in range(reps):
                kernel(codes, y, w, out)
            samples.append((time.perf_counter() - t) / reps / (n * n_features))
    finally:
        numba.set_num_threads(previous)
    return {"s_per_update": statistics.median(samples), "best_s_per_update": min(samples), "updates": n * n_features,
            "threads": min(threads, numba.config.NUMBA_NUM_THREADS), "runs": runs,
            "kernel": "numba prange over features, h[2 * code + y] += w, uniform random codes"}


def pool_probes(probes):
    """One bandwidth record from several probes of the same size: median and best over all samples."""
    samples = [x for p in probes for x in p["samples_s"]]
    med = statistics.median(samples)
    return {**probes[0], "samples_s": samples, "runs": len(samples), "probes": len(probes), "median_s": med,
            "gb_per_s": probes[0]["bytes"] / med / 1e9, "best_gb_per_s": probes[0]["bytes"] / min(samples) / 1e9,
            "probe_medians_gb_per_s": [p["gb_per_s"] for p in probes]}
