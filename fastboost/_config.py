"""Compilation settings shared by every kernel, defined once.

``FASTMATH`` deliberately leaves out ``nnan`` and ``ninf`` (NaN marks a missing
value and ±inf are valid feature values) and ``reassoc`` (sums keep their
written order, so results do not depend on how LLVM vectorises a reduction).
A test fails if a kernel hard-codes its own fastmath set.
"""
import contextlib
import itertools
import os
import sys
import threading
import time
import warnings

import numba
import numpy as np
from numba.core import types
from numba.core.cpu import ParallelOptions
from numba.core.registry import CPUDispatcher
from numba.core.types.function_type import WrapperAddressProtocol
from numba.core.typing.typeof import Purpose, typeof, typeof_impl
from numba.experimental.function_type import _get_wrapper_address

from ._cache import keyed_cache_files
from ._validation import check_n_jobs

FASTMATH = {"nsz", "arcp", "contract", "afn"}


#: Compiled code calls a kernel directly; numba also builds two wrappers around every function it compiles, one
#: that unboxes each argument from a Python object (for calls from Python) and one with a C calling convention
#: (for its address as a function value). A wrapper grows with the arguments: for the loop's workspace (about 40
#: arrays in nested named tuples) the Python one took 0.3 s to compile and the C one 0.06 s, for a function that
#: only returns NaN. Kernels called from compiled code are compiled without them (:class:`_PlainTypesDispatcher`).
NO_WRAPPERS = {"no_cpython_wrapper": True, "no_cfunc_wrapper": True}


class _PlainTypesDispatcher(CPUDispatcher):
    """numba's dispatcher, compiled for the plain types of its arguments at a call from compiled code, without
    the wrappers for calls from Python.

    numba compiles a separate specialisation for every constant a call site passes (``f(x, 0)``
    types the 0 as ``Literal[int](0)``), so a kernel called with a constant in one place and a
    variable in another was compiled twice, callees included (about 20 s of a cold depth-3 fit).
    No kernel needs a literal argument: the constants are typed as ``int64`` / ``bool``.

    A call from compiled code is typed and linked through ``native``, a twin dispatcher of the same function
    compiled with :data:`NO_WRAPPERS` and cached in files of its own; a call from Python (the package's drivers,
    the tests) compiles this dispatcher's own variant, with its wrappers. Only a kernel called both ways is
    compiled twice, each variant once.
    """

    #: the twin compiled code calls (None: this dispatcher is itself a twin, or was rebuilt from a pickle)
    native = None

    def get_call_template(self, args, kws):
        args = tuple(types.unliteral(a) for a in args)
        kws = {k: types.unliteral(v) for k, v in kws.items()}
        if self.native is not None:
            return self.native.get_call_template(args, kws)
        return super().get_call_template(args, kws)

    def get_overload(self, sig):
        """The compiled function a call from compiled code links to (the twin's)."""
        if self.native is not None:
            return self.native.get_overload(sig)
        return super().get_overload(sig)

    def compiled_signatures(self):
        """The argument types compiled so far, for calls from Python and from compiled code."""
        native = self.native.signatures if self.native is not None else []
        return list(self.signatures) + [s for s in native if s not in self.signatures]


def _kernel(cache=True, **options):
    """The decorator of the package's internal kernels: ``numba.njit(cache=True, **options)`` on
    :class:`_PlainTypesDispatcher`; ``@jit`` or ``@jit(inline="always")`` (more options, or cache=False). A
    kernel inlined into its callers (``inline="always"``) has no twin: it is not compiled on its own there."""
    def decorate(fn=None, **more):
        if fn is None:
            return _kernel(**{"cache": cache, **options, **more})
        targetoptions = {"nopython": True, **options}
        dispatcher = _PlainTypesDispatcher(py_func=fn, locals={}, targetoptions=targetoptions)
        if targetoptions.get("inline", "never") == "never":
            dispatcher.native = _PlainTypesDispatcher(py_func=fn, locals={},
                                                      targetoptions={**targetoptions, **NO_WRAPPERS})
        if cache:
            for d, variant in ((dispatcher, None), (dispatcher.native, "native")):
                if d is not None:
                    d.enable_caching()
                    keyed_cache_files(d, variant)
        return dispatcher
    return decorate


class _ChosenByNone(_PlainTypesDispatcher):
    """One name for two kernels of one signature: ``when_none`` where the argument at ``position`` is None,
    ``otherwise`` elsewhere; chosen by its type where numba types a call from compiled code, by its value at a
    call from Python. A fit then compiles only the kernel it runs: numba prunes a branch on ``x is None`` inside
    one kernel only where x is typed None, so the fits where x is a bool would compile the None side's loops
    too. Nothing is compiled under this name itself."""

    def __init__(self, position, when_none, otherwise):
        super().__init__(py_func=when_none.py_func, locals={}, targetoptions=dict(when_none.targetoptions))
        self._position = position
        self._choices = (when_none, otherwise)

    def _chosen(self, is_none):
        return self._choices[0 if is_none else 1]

    def get_call_template(self, args, kws):
        return self._chosen(isinstance(args[self._position], types.NoneType)).get_call_template(args, kws)

    def get_overload(self, args):
        return self._chosen(isinstance(args[self._position], types.NoneType)).get_overload(args)

    def __call__(self, *args):
        return self._chosen(args[self._position] is None)(*args)

    def compiled_signatures(self):
        return [s for d in self._choices for s in d.compiled_signatures()]


def chosen_by_none(position, when_none, otherwise):
    """``_ChosenByNone``: the kernel ``when_none`` where argument ``position`` is None, else ``otherwise``."""
    return _ChosenByNone(position, when_none, otherwise)


#: serial kernel: the workers that the parallel drivers call per feature / row block
jit = _kernel(nogil=True, fastmath=FASTMATH)
#: parallel driver: every ``prange`` iteration writes only its own output slice. Only the ``prange`` loops run on
#: the threads: numba's other conversions (``np.zeros``, ``np.arange``, slice assignments, array expressions)
#: would each make a parallel loop of their own, launched on every call for a few values (a depth-3 tree round on
#: 1 000 rows launched about 25 of them, a third of its time), and compiled apart.
pjit = _kernel(nogil=True, fastmath=FASTMATH, parallel=ParallelOptions({
    "prange": True, "fusion": True, "comprehension": False, "reduction": False, "inplace_binop": False,
    "setitem": False, "numpy": False, "stencil": False}))


class typed:
    """A function compiled to one explicit signature (cached on disk), built on first use.

    Used for everything the loop calls through a pointer (the rules, the weak
    learners) and for the loop itself: nothing is compiled at import, and a fit
    compiles only the functions it uses. ``signature`` is one numba signature, or a dict
    ``{codes dtype: signature}`` for functions that take the binned data (uint8 or uint16
    codes, ``signatures.by_codes``). ``f.address(codes)`` is the function for codes of that
    dtype as the loop is handed it (default uint8), ``f.get(codes)`` the dispatcher to call it
    from Python (a variant of its own, compiled only where Python calls it); ``f(...)`` calls
    ``get``'s variant for the codes of its TrainData / ValidData argument. The thread pool is started
    first: cached parallel code links against the pool's scheduler symbols
    ("Symbol not found: allocate_sched").
    """

    def __init__(self, signature, fn, name=None):
        self.signature = signature
        self.py_func = fn
        self.__name__ = name or fn.__name__
        self.__doc__ = fn.__doc__
        self._compiled = {}
        self._native = {}
        self._addresses = {}

    def get(self, codes=None):
        """The compiled dispatcher for binned codes of dtype ``codes`` (a dtype or an array; None: uint8), to call
        from Python (without the C wrapper: :meth:`address` has a variant of its own)."""
        return self._variant(codes, self._compiled, {"no_cfunc_wrapper": True}, None)

    def address(self, codes=None):
        """The compiled function for binned codes of dtype ``codes`` as compiled code takes it, a
        :class:`FunctionAddress` (made once): a variant of its own, without the wrapper for calls from Python
        (:data:`NO_WRAPPERS`), which the loop never makes."""
        dispatcher = self._variant(codes, self._native, {"no_cpython_wrapper": True}, "native")
        found = self._addresses.get(dispatcher)
        if found is None:
            found = self._addresses[dispatcher] = FunctionAddress(dispatcher)
        return found

    def _variant(self, codes, compiled, options, cache_variant):
        if isinstance(self.signature, dict):
            key = np.dtype(np.uint8 if codes is None else getattr(codes, "dtype", codes))
            signature = self.signature[key]
        else:  # one signature for every width of the codes
            key, signature = None, self.signature
        dispatcher = compiled.get(key)
        if dispatcher is None:
            start_thread_pool()
            dispatcher = keyed_cache_files(numba.njit(cache=True, nogil=True, fastmath=FASTMATH, **options)(
                self.py_func), cache_variant)
            if not _in_cache(dispatcher, signature):
                first_use_notice()
            with warnings.catch_warnings():  # first-class functions are "experimental" in numba
                warnings.simplefilter("ignore", numba.NumbaExperimentalFeatureWarning)
                dispatcher.compile(signature)
            dispatcher.disable_compile()
            compiled[key] = dispatcher
        return dispatcher

    def __call__(self, *args):
        codes = next((a.codes for a in args if hasattr(a, "codes") and hasattr(a, "_fields")), None)
        return self.get(codes)(*args)


class FunctionAddress(WrapperAddressProtocol):
    """A compiled function of one signature as compiled code takes it: the address of its C-callable wrapper,
    looked up once. A dispatcher handed to compiled code is looked up again at every call (numba compiles
    nothing then, but hashes the signature's types twice per function: about 0.5 ms for the loop's seven
    functions, a tenth of a small fit); this object hands over the stored address."""

    __slots__ = ("_address", "_signature", "_type", "dispatcher")

    def __init__(self, dispatcher):
        (args,) = dispatcher.signatures  # (typed functions have exactly one)
        self.dispatcher = dispatcher  # (keeps the compiled code alive)
        self._signature = dispatcher.overloads[args].signature
        self._address = _get_wrapper_address(dispatcher, self._signature)
        self._type = types.FunctionType(self._signature)

    def __wrapper_address__(self):
        return self._address

    def signature(self):
        return self._signature


@typeof_impl.register(FunctionAddress)
def _typeof_function_address(val, c):
    """Its numba type, made once (numba's own typeof builds a FunctionType, naming its signature, at every call)."""
    return val._type


class Rules(tuple):
    """The loop's tuple of compiled functions (FunctionAddress values, each made once), whose numba type is made
    once per combination: numba types an argument it cannot fingerprint in Python at every call, and a tuple
    of function values took about 0.15 ms a call."""

    def numba_type(self):
        key = tuple(self)
        found = _RULES_TYPES.get(key)
        if found is None:
            found = _RULES_TYPES[key] = typeof(key, Purpose.argument)
        return found


_RULES_TYPES = {}


@typeof_impl.register(Rules)
def _typeof_rules(val, c):
    return val.numba_type()


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


COMPILE_NOTICE = ("fastboost: compiling the kernels this fit uses, once (on 2 cores about 15 seconds for "
                  "decision stumps, under a minute the first time trees are used); later runs load them from the "
                  "cache. 'fastboost compile' compiles them ahead of time.")


#: environment variables by which a user chooses the OpenMP wait policy; fastboost then leaves it alone
_WAIT_POLICY_VARIABLES = ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")


def start_thread_pool():
    """Start numba's thread pool (once per process), then return its size.

    GNU OpenMP, numba's default threading layer here, lets a thread that finished its share of a parallel
    loop spin on its core for a while before it sleeps. That is the fastest on an idle machine, and the
    slowest beside a busy process: the spinning takes the core from the thread still working, and every
    parallel loop of a round waits for it (100 000 x 20 stumps beside one spinning process: 2 threads
    1.8-18x the time of 1). fastboost answers that with fewer threads while other processes are busy
    (:class:`ThreadGovernor`), and by starting the pool with a short spin, ``GOMP_SPINCOUNT`` =
    ``SPIN_COUNT`` (a tenth of OpenMP's default 300 000, about half a millisecond here): as fast between the
    parallel loops of a round (whole fits of 1 000 to 100 000 rows, rounds at 1 000 000 rows: the same or
    faster), and the threads of the pool that ``split_on_threads`` uses right after the rounds no longer wait
    for cores that spinning threads hold (a cover pass on 10 000 rows, 100 depth-3 trees: 2.1-2.3 ms with
    OpenMP's default, 1.2-1.4 ms with it). ``FASTBOOST_WAIT_POLICY=passive`` starts the pool with
    ``OMP_WAIT_POLICY=PASSIVE`` instead (threads sleep at once: beside a busy process 2 threads took
    0.87-1.10x the 1-thread round, but on an idle machine a depth-3 round took 1.9x as long, its many
    short parallel loops each waiting for a thread to wake). A policy set in the environment
    (OMP_WAIT_POLICY, GOMP_SPINCOUNT) is left alone. GNU OpenMP reads it once, when it is loaded: a library
    loaded into the process earlier (LightGBM shares the system's libgomp) keeps its policy, one loaded
    later shares this one. ``wait_policy()`` says which policy the pool got.
    """
    from numba.np.ufunc import parallel

    if not parallel._is_initialized:
        global _WAIT_POLICY
        _WAIT_POLICY = _choose_wait_policy()
        variable = {_PASSIVE: ("OMP_WAIT_POLICY", "PASSIVE"),
                    _SHORT_SPIN: ("GOMP_SPINCOUNT", str(SPIN_COUNT))}.get(_WAIT_POLICY)
        if variable is not None:
            os.environ[variable[0]] = variable[1]
            try:
                numba.get_num_threads()
            finally:  # only the pool's start reads it: other programs this process starts get the user's environment
                del os.environ[variable[0]]
    return numba.get_num_threads()


#: the spin count numba's GNU OpenMP threads start with, unless the user sets a policy (``start_thread_pool``)
SPIN_COUNT = 30_000
_PASSIVE = "passive (FASTBOOST_WAIT_POLICY=passive)"
_SHORT_SPIN = f"short spin (GOMP_SPINCOUNT={SPIN_COUNT})"


_WAIT_POLICY = None


def _choose_wait_policy():
    if any(v in os.environ for v in _WAIT_POLICY_VARIABLES):
        return "as set in the environment (" + ", ".join(
            f"{v}={os.environ[v]}" for v in _WAIT_POLICY_VARIABLES if v in os.environ) + ")"
    if _libgomp_loaded():
        return "OpenMP's default (GNU OpenMP was loaded before fastboost started its threads)"
    if os.environ.get("FASTBOOST_WAIT_POLICY", "").lower() != "passive":
        return _SHORT_SPIN
    return _PASSIVE


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


def _busy_jiffies():
    """Busy CPU time of the whole machine in seconds (Linux /proc/stat), or None. Its first line read as bytes
    with os.read (a text file object took about twice as long, 50 us)."""
    try:
        fd = os.open("/proc/stat", os.O_RDONLY)
        try:
            head = os.read(fd, 256)
        finally:
            os.close(fd)
        v = [int(x) for x in head[:head.index(b"\n")].split()[1:]]
    except (OSError, ValueError):
        return None
    return (sum(v[:8]) - v[3] - v[4]) / _CLOCK_TICKS  # all but idle and iowait (guest time is in user already)


def usable_cores():
    """The cores this process may run on: its CPU affinity (Linux), else the machine's CPUs."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not Linux
        return max(1, os.cpu_count() or 1)


def _running_threads():
    """This process's threads in state R (running or runnable), from /proc/self/task (read as bytes with
    os.read: a text file object costs about twice as much per thread, and a fit glances twice)."""
    own = 0
    for tid in os.listdir("/proc/self/task"):
        fd = os.open(f"/proc/self/task/{tid}/stat", os.O_RDONLY)
        try:
            stat = os.read(fd, 4096)
        finally:
            os.close(fd)
        own += stat[stat.rindex(b")") + 2:].startswith(b"R")
    return own


def _runnable_tasks():
    """The machine's runnable tasks now (the fourth field of /proc/loadavg, before the slash)."""
    with open("/proc/loadavg") as f:
        return int(f.read().split()[3].split("/")[0])


try:
    _CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
except (AttributeError, ValueError, OSError):
    _CLOCK_TICKS = 100


class ThreadGovernor:
    """Fewer threads while other processes keep cores busy; all of ``n_jobs`` again when they stop.

    Between chunks of rounds the driver calls :meth:`adjust`: the cores other processes used since the
    last reading (the machine's busy time from /proc/stat minus this process's CPU time) are taken
    from the cores this process may run on, and numba's thread count for the next chunk becomes what
    is left (at least 1, at most the fit's threads). A parallel loop waits for its slowest thread, and a
    thread sharing its core with a busy process is slow, so this keeps a round from taking many times
    its 1-thread time. The model does not depend on the thread count. Readings over less than
    ``MIN_WINDOW`` seconds are not trusted (the clock ticks in 10 ms steps): the window then grows. A fit's
    governor (``glance``) first counts the other processes' tasks runnable at that moment, so that binning
    and the first chunk run on the cores left (without it a fit of 100 000 stumps, shorter than one window,
    kept both threads beside a busy process).
    Off where /proc/stat is missing, with one thread, or with FASTBOOST_ADAPT_THREADS=0.
    """

    MIN_WINDOW = 0.05

    def __init__(self, max_threads, glance=False):
        self.max_threads = max_threads
        self.threads = max_threads
        self.enabled = max_threads > 1 and os.environ.get("FASTBOOST_ADAPT_THREADS", "1") != "0"
        self.history = []  # (other processes' cores, threads chosen) of every reading
        # the window's start: a fit's governor reads at once (its first window covers the binning); any other's at
        # its first adjust, so one that never adjusts (a prediction's, the cover pass's) reads nothing. /proc/stat is
        # read again only when the window is long enough to trust: a small fit reads it once.
        self._mark = self._reading() if self.enabled and glance else None
        self._glances = []  # other processes' runnable tasks at each glance, until a window is read
        self._windowed = False
        if glance and self._mark is None:
            self.enabled = False  # (no /proc/stat)
        elif glance and self.enabled:  # a fit: what comes before its rounds (binning) already runs on the cores left
            self._glance(self._mark[2])

    def _glance(self, wall):
        """Follow the fewest runnable tasks of other processes seen at a glance (at the fit's start and at its
        first chunk): a task runnable for a moment, as a kernel thread's, is not a busy process. A glance that
        saw none is not taken again (the fewest stays none), and one that saw none less than ``MIN_WINDOW``
        seconds before ``wall`` (the reading's clock), in this process, still holds: right after a fit this
        process's own threads still spin, so a glance reads each of its threads' state (about 0.2 ms on a
        2-core machine), and back-to-back small fits (a cross-validation) glanced twice each."""
        if self._glances and min(self._glances) == 0:
            return self.threads
        if 0.0 <= wall - _IDLE_SEEN[0] < self.MIN_WINDOW:
            other = 0  # (not a new sighting: it does not extend the time it holds)
        else:
            other = self._runnable_elsewhere()
            if other == 0:
                _IDLE_SEEN[0] = wall
        if other is None:
            self._windowed = True  # (nothing to glance at: wait for a window)
            return self.threads
        self._glances.append(other)
        return self._follow(min(self._glances))

    def _follow(self, other):
        """Run on the cores left beside ``other`` busy cores (at least 1, at most the fit's threads)."""
        wanted = max(1, min(self.max_threads, int(usable_cores() - other + 0.5)))
        self.history.append((round(other, 2), wanted))
        if wanted != self.threads:
            numba.set_num_threads(wanted)
            self.threads = wanted
        return wanted

    @staticmethod
    def _wall():
        """The readings' wall clock (seconds)."""
        return time.perf_counter()

    @staticmethod
    def _reading():
        """(the machine's busy CPU seconds, this process's CPU seconds, the wall clock), or None."""
        busy = _busy_jiffies()
        if busy is None:
            return None
        return busy, time.process_time(), time.perf_counter()

    @staticmethod
    def _runnable_elsewhere():
        """Tasks of other processes runnable right now, or None: the runnable tasks of /proc/loadavg (Linux) less
        this process's threads in state R, counted before and after it. No thread of this process starts running
        meanwhile (no parallel loop starts), so equal counts are the count at that moment; a thread of the pool
        that stops spinning in between makes them differ, and the reading is taken again (the last one counts
        such a thread as another process's: ``adjust`` then takes the fewer of two glances). One runnable task
        is the thread reading: none elsewhere. None too when the process may run on only some of the machine's
        CPUs (a pinned container): the machine's runnable tasks may then run on the others."""
        try:
            if usable_cores() < (os.cpu_count() or 1):
                return None
            if _runnable_tasks() <= 1:  # only the reading thread: an idle machine, one file read
                return 0
            for _ in range(3):
                before = _running_threads()
                runnable = _runnable_tasks()
                if runnable <= 1:
                    return 0
                after = _running_threads()
                if after == before:
                    break
            return max(0, runnable - after)
        except (AttributeError, OSError, ValueError, IndexError):
            return None

    def adjust(self):
        """Set numba's threads for the next chunk of rounds from the load since the last reading (before the
        first reading a window can be trusted, from the processes runnable right now)."""
        if not self.enabled:
            return self.threads
        if self._mark is None:  # the first: the window starts here (and is too short to trust)
            self._mark = self._reading()
            if self._mark is None:  # no /proc/stat
                self.enabled = False
                return self.threads
        busy0, own0, t0 = self._mark
        wall_now = self._wall()
        if wall_now - t0 < self.MIN_WINDOW:  # (too short to trust: not read)
            return self.threads if self._windowed or len(self._glances) >= 2 else self._glance(wall_now)
        now = self._reading()
        if now is None:
            return self.threads
        wall = now[2] - t0
        self._mark = now
        self._windowed = True
        return self._follow(max(0.0, (now[0] - busy0) - (now[1] - own0)) / wall)


#: when a glance last saw no runnable task of another process (the governors' reading clock, time.perf_counter)
_IDLE_SEEN = [-float("inf")]


def default_n_jobs():
    """Threads of ``n_jobs=None``: the cores this process may run on (its CPU affinity), at most numba's pool,
    and at most OMP_NUM_THREADS when that is set (as joblib's workers and scikit-learn's nested parallelism
    set it, so that a GridSearchCV(n_jobs=k) does not run k x cores threads)."""
    n = min(numba.config.NUMBA_NUM_THREADS, usable_cores())
    omp = os.environ.get("OMP_NUM_THREADS", "").split(",")[0].strip()
    if omp.isdigit() and int(omp) > 0:
        n = min(n, int(omp))
    return max(1, n)


def resolve_n_jobs(n_jobs):
    """Number of numba threads for ``n_jobs`` (None: ``default_n_jobs()``; negative: joblib semantics; capped at
    the pool size). The value is checked here too, for one set on a fitted model before predicting."""
    check_n_jobs("n_jobs", n_jobs)
    max_threads = numba.config.NUMBA_NUM_THREADS
    if n_jobs is None:
        return default_n_jobs()
    n_jobs = int(n_jobs)
    if n_jobs < 0:
        n_jobs = max(1, max_threads + 1 + n_jobs)
    return min(n_jobs, max_threads)


@contextlib.contextmanager
def n_threads(n_jobs, fit=False):
    """Set numba's thread count for the duration of a call and restore it afterwards (``fit``: a fit's, whose
    thread governor looks at the other processes' runnable tasks at once, so that binning runs on the cores left).

    This also starts numba's thread pool (once per process) before any kernel is
    loaded: cached parallel code links against the pool's scheduler symbols. The
    pool is not started at import, so importing fastboost leaves fork-based
    multiprocessing alone.
    """
    wanted = resolve_n_jobs(n_jobs)
    previous = start_thread_pool()
    numba.set_num_threads(wanted)
    outer = getattr(_CURRENT, "governor", None)
    _CURRENT.governor = ThreadGovernor(wanted, fit)  # a fit's first reading covers what comes before the rounds
    try:
        yield wanted
    finally:
        _CURRENT.governor = outer
        numba.set_num_threads(previous)


_CURRENT = threading.local()


def split_on_threads(work, n_items, n_threads, chunk=1):
    """work(lo, hi) over ranges of at most ``chunk`` items covering range(n_items), on up to ``n_threads`` threads:
    the calling thread and threads of a pool kept for the process each take the next range until none is left.

    For the kernels Python calls once a fit or a block (binning, the cover pass): serial kernels compiled with
    ``nogil`` run in parallel on Python's threads as well as in a ``prange`` loop, and each ``prange`` kernel cost
    about a second more to compile (a cold first stump fit compiled three: about 19.5 s in all, 16 s without
    them). The ranges are handed out as threads come for them, so a thread that starts late (one of the pool
    waits for a core while numba's threads still spin after a parallel loop: ``start_thread_pool``) takes
    fewer. Each range must write only its own outputs, so that nothing depends on the number of threads or the
    order of the ranges. An error in any range (or Ctrl-C) stops the threads from taking more; it is raised once
    the ranges under way have ended.
    """
    chunk = max(1, int(chunk))
    n_chunks = -(-int(n_items) // chunk)
    k = max(1, min(int(n_threads), n_chunks))
    if k == 1 or threading.current_thread().name.startswith(_POOL_NAME):  # (a range that splits again: on its
        if n_items > 0:                                                     # thread, not waiting on the pool it is in)
            work(0, n_items)
        return
    taken = itertools.count()  # (next() on it is atomic: one call of C code under the GIL)
    failed = []  # once a share raised (an error, Ctrl-C on the calling thread), no thread takes another

    def run():
        try:
            c = next(taken)
            while c < n_chunks and not failed:
                work(c * chunk, min(n_items, (c + 1) * chunk))
                c = next(taken)
        except BaseException:
            failed.append(True)
            raise

    pool = _thread_pool()
    futures = [pool.submit(run) for _ in range(k - 1)]
    try:
        run()
    finally:
        for future in futures:  # (every range ends before the outputs are used or freed)
            future.result()


#: (the process id it was made in, the pool) of split_on_threads: a forked child makes a pool of its own, as its
#: parent's threads do not exist in it
_POOL = [None, None]
_POOL_NAME = "fastboost-split"
_POOL_LOCK = [threading.Lock()]


def _thread_pool():
    from concurrent.futures import ThreadPoolExecutor

    with _POOL_LOCK[0]:
        if _POOL[0] != os.getpid():
            _POOL[0] = os.getpid()
            _POOL[1] = ThreadPoolExecutor(max(1, numba.config.NUMBA_NUM_THREADS - 1), _POOL_NAME)
        return _POOL[1]


def _forget_pool_in_child():
    """After a fork: the parent's pool threads do not exist here, and its lock may have been held at the fork."""
    _POOL[:] = [None, None]
    _POOL_LOCK[0] = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool_in_child)


def thread_governor():
    """The governor of the innermost ``n_threads`` block of this thread (a new one outside any)."""
    governor = getattr(_CURRENT, "governor", None)
    return governor if governor is not None else ThreadGovernor(numba.get_num_threads())
