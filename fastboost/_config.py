"""Compilation settings shared by every kernel, defined once.

``FASTMATH`` deliberately leaves out ``nnan`` and ``ninf`` (NaN marks a missing
value and ±inf are valid feature values) and ``reassoc`` (sums keep their
written order, so results do not depend on how LLVM vectorises a reduction).
A test fails if a kernel hard-codes its own fastmath set.
"""
import contextlib
import functools
import os
import sys
import warnings

import numba
import numpy as np

FASTMATH = {"nsz", "arcp", "contract", "afn"}


#: serial kernel: the workers that the parallel drivers call per feature / row block
jit = functools.partial(numba.njit, cache=True, nogil=True, fastmath=FASTMATH)
#: parallel driver: every ``prange`` iteration writes only its own output slice
pjit = functools.partial(numba.njit, cache=True, nogil=True, fastmath=FASTMATH, parallel=True)


class typed:
    """A function compiled to one explicit signature (cached on disk), built on first use.

    Used for everything the loop calls through a pointer (the rules, the weak
    learners) and for the loop itself: nothing is compiled at import, and a fit
    compiles only the functions it uses. ``signature`` is one numba signature, or a dict
    ``{codes dtype: signature}`` for functions that take the binned data (uint8 or uint16
    codes, ``signatures.by_codes``). ``f.get(codes)`` is the compiled dispatcher for codes
    of that dtype (what the loop is handed; default uint8); ``f(...)`` calls the variant
    for the codes of its TrainData / ValidData argument. The thread pool is started
    first: cached parallel code links against the pool's scheduler symbols
    ("Symbol not found: allocate_sched").
    """

    def __init__(self, signature, fn, name=None):
        self.signature = signature
        self.py_func = fn
        self.__name__ = name or fn.__name__
        self.__doc__ = fn.__doc__
        self._compiled = {}

    def get(self, codes=None):
        """The compiled dispatcher for binned codes of dtype ``codes`` (a dtype or an array; None: uint8)."""
        if isinstance(self.signature, dict):
            key = np.dtype(np.uint8 if codes is None else getattr(codes, "dtype", codes))
            signature = self.signature[key]
        else:  # one signature for every width of the codes
            key, signature = None, self.signature
        dispatcher = self._compiled.get(key)
        if dispatcher is None:
            start_thread_pool()
            dispatcher = numba.njit(cache=True, nogil=True, fastmath=FASTMATH)(self.py_func)
            if not _in_cache(dispatcher, signature):
                first_use_notice()
            with warnings.catch_warnings():  # first-class functions are "experimental" in numba
                warnings.simplefilter("ignore", numba.NumbaExperimentalFeatureWarning)
                dispatcher.compile(signature)
            dispatcher.disable_compile()
            self._compiled[key] = dispatcher
        return dispatcher

    def __call__(self, *args):
        codes = next((a.codes for a in args if hasattr(a, "codes") and hasattr(a, "_fields")), None)
        return self.get(codes)(*args)


def compiled(signature):
    """Decorator: ``@compiled(SIG)`` makes a :class:`typed` function."""
    return lambda fn: typed(signature, fn)


def _in_cache(dispatcher, signature):
    """True if numba's on-disk cache holds this function for this signature (True when it cannot tell)."""
    try:
        cache = dispatcher._cache
        key = cache._index_key(signature, dispatcher.targetctx.codegen())
        return key in cache._cache_file._load_index()
    except Exception:  # numba internals: no notice is better than a failed fit
        return True


_NOTICE = []


def first_use_notice():
    """One line on stderr, once per process, before the first compilation of a kernel."""
    if _NOTICE or os.environ.get("FASTBOOST_QUIET_COMPILE"):
        return
    _NOTICE.append(True)
    print(COMPILE_NOTICE, file=sys.stderr, flush=True)


COMPILE_NOTICE = ("fastboost: compiling the kernels this fit uses, once (about 10 s for decision stumps, 30 s more "
                  "the first time trees are used); later runs load them from the cache. 'fastboost compile' "
                  "compiles every kernel ahead of time.")


#: environment variables by which a user chooses the OpenMP wait policy; fastboost then leaves it alone
_WAIT_POLICY_VARIABLES = ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")


def start_thread_pool():
    """Start numba's thread pool (once per process) with a passive OpenMP wait policy, then return its size.

    GNU OpenMP, numba's default threading layer here, lets a thread that finished its share of a parallel
    loop spin on a core for a while before it sleeps. On a machine where another process is busy that core
    is taken from the thread still working, and every one of a round's parallel loops waits for it:
    100 000 x 20 stumps, one busy process beside the fit, 2 threads took 1.8-2.1x the time of 1 thread
    spinning and 1.03x waiting passively. So unless the user has chosen a policy (OMP_WAIT_POLICY or
    GOMP_SPINCOUNT in the environment; FASTBOOST_WAIT_POLICY=active keeps OpenMP's default), the pool is
    started with OMP_WAIT_POLICY=PASSIVE. GNU OpenMP reads it once, when it is loaded: a library loaded
    into the process earlier (LightGBM shares the system's libgomp) keeps its policy, and one loaded
    later shares this one. ``wait_policy()`` says which policy the pool got.
    """
    from numba.np.ufunc import parallel

    if not parallel._is_initialized:
        global _WAIT_POLICY
        _WAIT_POLICY = _choose_wait_policy()
        if _WAIT_POLICY == "passive (set by fastboost)":
            os.environ["OMP_WAIT_POLICY"] = "PASSIVE"
            try:
                numba.get_num_threads()
            finally:  # only the pool's start reads it: other programs this process starts get the user's environment
                del os.environ["OMP_WAIT_POLICY"]
    return numba.get_num_threads()


_WAIT_POLICY = None


def _choose_wait_policy():
    if any(v in os.environ for v in _WAIT_POLICY_VARIABLES):
        return "as set in the environment (" + ", ".join(
            f"{v}={os.environ[v]}" for v in _WAIT_POLICY_VARIABLES if v in os.environ) + ")"
    if os.environ.get("FASTBOOST_WAIT_POLICY", "").lower() == "active":
        return "OpenMP's default (FASTBOOST_WAIT_POLICY=active)"
    if _libgomp_loaded():
        return "OpenMP's default (GNU OpenMP was loaded before fastboost started its threads)"
    return "passive (set by fastboost)"


def _libgomp_loaded():
    """Whether the system's GNU OpenMP (libgomp.so, the one numba links) is in the process already. Copies
    vendored into wheels (scikit-learn's libgomp-<hash>.so) are separate libraries and do not count."""
    try:
        with open("/proc/self/maps") as f:
            return "/libgomp.so" in f.read()
    except OSError:  # not Linux: nothing to tell
        return False


def wait_policy():
    """How the threads of numba's pool wait between parallel loops (None before the pool started)."""
    return _WAIT_POLICY


def default_n_jobs():
    """Threads of ``n_jobs=None``: the cores this process may run on (its CPU affinity), at most numba's pool,
    and at most OMP_NUM_THREADS when that is set (as joblib's workers and scikit-learn's nested parallelism
    set it, so that a GridSearchCV(n_jobs=k) does not run k x cores threads)."""
    n = numba.config.NUMBA_NUM_THREADS
    try:
        n = min(n, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        pass
    omp = os.environ.get("OMP_NUM_THREADS", "").split(",")[0].strip()
    if omp.isdigit() and int(omp) > 0:
        n = min(n, int(omp))
    return max(1, n)


def resolve_n_jobs(n_jobs):
    """Number of numba threads for a validated ``n_jobs`` (None: ``default_n_jobs()``; negative: joblib
    semantics; capped at the pool size). The estimators check the value first."""
    max_threads = numba.config.NUMBA_NUM_THREADS
    if n_jobs is None:
        return default_n_jobs()
    n_jobs = int(n_jobs)
    if n_jobs < 0:
        n_jobs = max(1, max_threads + 1 + n_jobs)
    return min(n_jobs, max_threads)


@contextlib.contextmanager
def n_threads(n_jobs):
    """Set numba's thread count for the duration of a call and restore it afterwards.

    This also starts numba's thread pool (once per process) before any kernel is
    loaded: cached parallel code links against the pool's scheduler symbols. The
    pool is not started at import, so importing fastboost leaves fork-based
    multiprocessing alone.
    """
    wanted = resolve_n_jobs(n_jobs)
    previous = start_thread_pool()
    numba.set_num_threads(wanted)
    try:
        yield wanted
    finally:
        numba.set_num_threads(previous)
