"""Compilation settings shared by every kernel, defined once.

``FASTMATH`` deliberately leaves out ``nnan`` and ``ninf`` (NaN marks a missing
value and ±inf are valid feature values) and ``reassoc`` (sums keep their
written order, so results do not depend on how LLVM vectorises a reduction).
A test fails if a kernel hard-codes its own fastmath set.
"""
import contextlib
import functools

import numba

FASTMATH = {"nsz", "arcp", "contract", "afn"}


#: serial kernel: the workers that the parallel drivers call per feature / row block
jit = functools.partial(numba.njit, cache=True, nogil=True, fastmath=FASTMATH)
#: parallel driver: every ``prange`` iteration writes only its own output slice
pjit = functools.partial(numba.njit, cache=True, nogil=True, fastmath=FASTMATH, parallel=True)


def lazy_typed(signature, fn):
    """A getter for ``fn`` compiled to one explicit signature (cached on disk), built on first call.

    Used for the entry points that take rules as first-class functions (the loop,
    QuadBoost's re-weighting). The thread pool is started first: cached parallel
    code links against the pool's scheduler symbols ("Symbol not found: allocate_sched").
    """
    compiled = []

    def get():
        if not compiled:
            numba.get_num_threads()
            compiled.append(numba.njit(signature, cache=True, nogil=True, fastmath=FASTMATH)(fn))
        return compiled[0]

    return get


def resolve_n_jobs(n_jobs):
    """Number of numba threads for a validated ``n_jobs`` (None: all; negative: joblib semantics;
    capped at the pool size). The estimators check the value first."""
    max_threads = numba.config.NUMBA_NUM_THREADS
    if n_jobs is None:
        return max_threads
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
    previous = numba.get_num_threads()
    numba.set_num_threads(wanted)
    try:
        yield wanted
    finally:
        numba.set_num_threads(previous)
