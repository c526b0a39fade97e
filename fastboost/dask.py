"""Scale out on Dask: the same boosting on rows spread over a ``distributed`` cluster.

``DaskAdaBoostClassifier``, ``DaskVadaBoostClassifier``, ``DaskEBBoostClassifier``,
``DaskLazyBoostClassifier``, ``DaskSABoostClassifier`` and ``DaskQuadBoostClassifier``
are the single-machine estimators of :mod:`fastboost` (same parameters, checks,
rules, round record, prediction) with a ``fit`` that takes row-partitioned
``dask.array`` / ``dask.dataframe`` X, y and sample weights and a
``distributed.Client`` (the current one by default): stumps and trees (every
depth, leaf kind and leaf-size limit), two or more classes (SAMME for
AdaBoost's discrete leaves, one-vs-rest otherwise, as on one machine),
``class_weight``, monotone and interaction constraints, feature and row
sampling (``colsample_bytree``, ``colsample_bynode``, ``subsample``,
``bootstrap``), and a validation set (``eval_set`` as Dask collections, or
``validation_fraction``) with early stopping. Categorical features and weight
trimming are single-machine only (``fit`` says so).

How a fit runs
--------------
1. The partitions of X, y and the sample weights (and of an eval_set) are
   computed (persisted) where Dask puts them; one actor
   (:class:`fastboost._dask_worker.WorkerShard`) is created on each worker
   holding X partitions, with those partitions as arguments, so no row moves
   (y and the weights join X's partitions worker-to-worker if they live
   elsewhere). The actor checks them and returns per partition only counts,
   labels and the largest weight per class. ``validation_fraction`` holds out
   each partition's rows by a generator seeded from ``random_state`` and the
   partition's index (the same rows wherever it lives; not stratified, unlike
   the single-machine split).
2. Binning: with at most 200 000 rows of positive weight, every such row is the
   sample, in row order, so the bin edges equal the single-machine estimator's;
   above that, the sample is the single-machine one too: the 200 000 positive
   rows whose key (a hash of the row's global index, seeded by ``random_state``:
   ``fastboost._binning.sample_keys``) is smallest. Each partition sends its
   rows whose key is below a limit that about 200 000 + 8 standard deviations
   of all rows pass, and the client keeps the 200 000 smallest: O(sample x
   features) bytes to the client, whatever the number of rows. The client fits
   a :class:`fastboost._binning.BinMapper` on it (or takes
   ``fit(..., bin_mapper=...)``), broadcasts it, and every worker maps its rows
   (and its validation rows) to uint8 codes and drops the raw X.
3. Rounds. Every call goes to every actor (actor calls go client <-> worker
   directly, not through the scheduler); the client adds the workers' sums in
   a fixed worker order (never the order of arrival) and makes every decision
   with the compiled functions of the single-machine loop.

   Stumps: ``histograms`` (the previous round's update with the global W_I,
   W_J and alpha, so each worker renormalises by the global Z; its validation
   margins; then the rule's transform and the histograms of the worker's
   rows), the client chooses the stump (``choose_stump``); ``apply``
   (``apply_stump`` on the worker's rows) returns (U_I, U_J, W_I, W_J), and
   the client runs the rule's step and stop and records the round. When the
   learner's weights are the boosting weights (AdaBoost, SABoost) the client
   takes U = W from the summed histograms instead and the workers run
   ``apply_stump`` at the start of the next call: one round trip a round.

   Sampling: the client draws the round's features (``sampling.draw_round``;
   a tree's nodes' in ``choose_level``) and sends them with the round's first
   call; the workers build those features' histograms only. Row draws are
   counter-based per row: each worker draws its rows by their index in the
   whole data (its partitions' first rows, from the per-partition row counts),
   so the rows equal the single-machine fit's for any partitioning. Bootstrap
   maps draws to rows through the cumulative sums of the learner's weights in
   row order: a first call (``weight_sums``, with the previous round's update)
   returns each partition's sum, the client gives each partition its stretch
   of the whole, and each worker makes every draw and keeps those that land on
   its rows (``_dask_worker.draw_shard_rows``). On drawn rows, stump rounds take their
   sums from ``apply`` (never from the histograms), and trees send every row
   to its leaf for the leaves' sums. A rejected round learnt from drawn rows
   is learnt again from every row, as in the compiled loop.

   Trees, one round trip per level, as ``grow_tree``: ``tree_root`` (the
   previous round's update and validation, then the root's histogram), then
   per level the client chooses the splits (``choose_level``) and
   ``tree_level`` partitions each worker's rows and returns the children's
   histograms (the smaller child from its rows, its sibling by subtraction);
   ``tree_leaves`` returns the leaves' sums, from which the client sets the
   leaves (``finish_leaves``) and the round's sums.

   Bytes per round: histograms (features x bins x (classes + 1) float64 per
   node and worker; the round's drawn features only with ``colsample_bytree``
   / ``colsample_bynode``) plus a few numbers (bootstrap: one per partition),
   never O(rows). From
   ``_TREE_MIN_WORKERS`` (9) workers on, stump histograms are summed up a tree
   of workers (fan-out 4, fixed order) and the client receives a single
   histogram per round.
4. QuadBoost's re-weighting pass is one round trip per kept voter (its
   correlation with the residuals, summed over workers; the residual update is
   fused into the next voter's call).

Summation order is the only difference from the single-machine fit: sums are
added per worker, then over workers, so they agree to rounding, and the model
is the same except where two candidates tie to within rounding. Which rows a
worker sums depends on where Dask placed the partitions, so two Dask fits of
the same data agree to rounding too.

A lost worker
-------------
Every call of a fit is kept in a journal. When a worker holding rows is lost
(killed, out of memory, restarted), each of its actors is created again on a
live worker (a restarted one, or the least loaded): its partitions are computed
again from the Dask collections and the new actor replays the journal without
building the histograms, which gives the same rows and the same boosting state
bit for bit. The fit then goes on, and ends with the model an uninterrupted fit
would have made. With no worker left for ``worker_timeout`` seconds
(``LOST_WORKER_TIMEOUT``, 60, by default) it raises :class:`WorkerLostError`
naming the lost workers; so does a loss while stump histograms are summed up a
tree of workers (from 9 workers on). The estimator is then left as it was,
never with a partial model.

Numba on the workers
--------------------
Each worker runs one fastboost kernel call at a time (a process-wide lock):
numba's ``workqueue`` threading layer, which numba falls back to without
OpenMP or TBB, aborts the process when two threads start parallel kernels at
once, and a Dask worker runs several tasks at once. ``dask_stats_`` reports the
layer in use on each worker. Workers load the compiled kernels from numba's
cache, next to the installed package, when they use the same installation as
the client; a fit checks that every worker's kernels are the client's.

The fitted estimator is a plain fastboost estimator: ``predict`` & co. take
NumPy / pandas input as the single-machine ones do, and Dask input lazily
(``map_blocks``); ``to_local()`` returns the equivalent single-machine
estimator, which pickles and loads without Dask installed.
"""
try:
    import dask
    import dask.array as da
    import distributed
except ImportError as e:  # pragma: no cover - exercised by a subprocess test
    raise ImportError(
        "fastboost.dask needs Dask's distributed scheduler, an optional dependency of fastboost: "
        "pip install 'fastboost[dask]' (or pip install 'dask[array,dataframe,distributed]')."
    ) from e

import asyncio
import copy
import time
import uuid
from collections import namedtuple

import numpy as np
from dask.sizeof import sizeof
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from . import _validation as v
from ._algorithms import RULES, quad_penalty
from ._binning import SUBSAMPLE, BinMapper, RowSample, sample_seed
from ._cache import sources_digest
from ._config import n_threads
from ._dask_worker import PartitionLostError, RoundDraw, RoundUpdate, WorkerShard, predict_block
from ._driver import Model, make_sample_scratch, max_nodes_of, pick_step_stop
from ._fit import Fit
from ._kernels.learners import finish_tree_round
from ._kernels.loop import record_round, record_validation
from ._kernels.reweight import kept_weight
from ._kernels.sampling import draw_round, draws_features
from ._kernels.split import add_credit, best_back_step, choose_stump, step_loss, stump_wrong
from ._kernels.tree import choose_level, finish_leaves, reset_tree, root_weight
from ._types import (
    ACCEPT_STOP,
    CAT_WORDS,
    LEAF_LSQ,
    MAX_BINS,
    MAX_CLASSES,
    RAN_ALL,
    REJECT,
    SPLIT_DTYPE,
    STATE_DTYPE,
    STOPPED_BY_RULE,
    STOPPED_EARLY,
    SUMS_DTYPE,
    Limits,
    Monotone,
    SplitScan,
    StumpScratch,
)
from .estimators import (
    AdaBoostClassifier,
    EBBoostClassifier,
    LazyBoostClassifier,
    QuadBoostClassifier,
    SABoostClassifier,
    VadaBoostClassifier,
    check_eval_set_names,
)
from .explain import cover_scale

__all__ = ["DaskAdaBoostClassifier", "DaskEBBoostClassifier", "DaskLazyBoostClassifier", "DaskQuadBoostClassifier",
           "DaskSABoostClassifier", "DaskVadaBoostClassifier", "WorkerLostError"]

#: Rows in the binning sample (as BinMapper's subsample); at or below it the edges use every row.
_BIN_SUBSAMPLE = SUBSAMPLE
#: Seconds between checks that the actors' workers are still there while waiting for a call.
_POLL_SECONDS = 1.0
#: With at least this many workers the histograms are summed up a tree of workers (fan-out _TREE_FANOUT),
#: so the client receives one histogram per round instead of one per worker (one extra hop per tree level).
_TREE_MIN_WORKERS = 9
_TREE_FANOUT = 4
_CAPACITY = 256  # initial round-record rows (grown by doubling)
#: Seconds a fit waits for a live worker after losing one (a restarting worker, a scaling cluster)
#: before it gives up with WorkerLostError; ``fit(..., worker_timeout=...)`` sets it per fit.
LOST_WORKER_TIMEOUT = 60.0


_TIMEOUTS = (TimeoutError, asyncio.TimeoutError)  # the same class from Python 3.11 on


class WorkerLostError(RuntimeError):
    """A Dask worker holding training rows was lost (or its state reset) during ``fit``; no model was made."""


# ----------------------------------------------------------------------------- input
def _is_dask_frame(a):
    return dask.is_dask_collection(a) and hasattr(a, "npartitions") and hasattr(a, "to_delayed")


def _is_dask(a):
    return isinstance(a, da.Array) or _is_dask_frame(a)


def _x_parts(X, name, what="X"):
    """(delayed row partitions, row chunk sizes or None, an empty X for sklearn's feature checks); what: how errors
    name X (``eval_set's X`` for a validation set)."""
    if isinstance(X, da.Array):
        if X.ndim != 2:
            raise ValueError(f"{'' if what == 'X' else what + ': '}Expected 2D array, got {X.ndim}D dask array "
                             f"instead (shape={X.shape}).")
        if X.dtype.kind not in "biuf":
            raise TypeError(f"{what} must be numeric (bool, int or float), got dtype {X.dtype}.")
        if X.numblocks[1] > 1:  # row partitions only (a worker-to-worker rechunk, never through the client)
            X = X.rechunk({1: -1})
        return list(X.to_delayed()[:, 0]), X.chunks[0], np.empty((0, X.shape[1]), X.dtype)
    if _is_dask_frame(X):
        meta = X._meta
        if not v.is_dataframe(meta):
            raise ValueError(f"{what} must be 2-D: got a dask Series; use a dask DataFrame or a 2-D dask array.")
        bad = [str(c) for c, dt in zip(meta.columns, meta.dtypes) if not v._numeric_dtype(dt)]
        if bad:
            raise TypeError(f"{what} must contain only numeric columns; non-numeric columns: {bad[:10]}")
        return list(X.to_delayed()), None, meta
    if what != "X":
        raise TypeError(f"With Dask input, {what} must be a dask array or dask DataFrame, got {type(X).__name__}.")
    raise TypeError(
        f"{name}.fit takes X as a row-partitioned dask array or dask DataFrame, got {type(X).__name__}. Wrap "
        "NumPy data with dask.array.from_array(X, chunks=(rows_per_chunk, -1)), or use the single-machine "
        "estimator of fastboost.")


def _vector_parts(a, what, n_parts, row_chunks, x="X"):
    """Delayed partitions of y / sample_weight, aligned with the row partitions of X (named x in errors)."""
    if isinstance(a, da.Array):
        if a.ndim not in (1, 2) or (a.ndim == 2 and a.shape[1] != 1):
            raise ValueError(f"{what} must be 1-D, got a dask array of shape {a.shape}.")
        if a.ndim == 2 and a.numblocks[1] > 1:
            a = a.rechunk({1: -1})
        if row_chunks is not None and a.chunks[0] != row_chunks:
            known = not (np.isnan(a.shape[0]) or any(np.isnan(c) for c in row_chunks))
            if known and a.shape[0] != sum(row_chunks):
                raise ValueError(f"{x} and {what} have inconsistent numbers of samples: {x} has {sum(row_chunks)}, "
                                 f"{what} has {a.shape[0]}.")
            if known:
                a = a.rechunk({0: row_chunks})  # worker-to-worker
            else:
                raise ValueError(f"{what} is chunked differently from {x} and a chunk size is unknown: call "
                                 f"{what}.compute_chunk_sizes() or give it X's row chunks.")
        parts = list(a.to_delayed().ravel()) if a.ndim == 1 else list(a.to_delayed()[:, 0])
    elif _is_dask_frame(a):
        parts = list(a.to_delayed())
    else:
        raise TypeError(f"With Dask input, {what} must be a dask array, Series or one-column DataFrame "
                        f"partitioned like {x}, got {type(a).__name__}.")
    if len(parts) != n_parts:
        raise ValueError(f"{x} has {n_parts} row partitions and {what} has {len(parts)}: partition {what} like {x} "
                         f"(a dask array: rechunk it to {x}'s row chunks; dask DataFrames: the same partitions).")
    return parts


# ----------------------------------------------------------------------------- the workers
class _ShardLost(Exception):
    """Internal: actor j's worker was lost (``error`` says how); the fit rebuilds the actor or gives up."""

    def __init__(self, j, error):
        super().__init__(j, error)
        self.j = j
        self.error = error


class _Shards:
    """The fit's actors, one per group of partitions, in a fixed order (by their first partition); every
    call goes to all.

    Every call is kept in a journal. When a worker is lost, each of its actors is rebuilt on a live
    worker: its partitions are computed again from the Dask collections, and the new actor replays the
    journal (without building the histograms the client already has), which rebuilds the same rows
    and the same boosting state bit for bit; the call in flight is then sent to it. The actor keeps
    its place in the order, so the client adds the same sums in the same order and the model equals
    that of a fit without the loss.
    """

    def __init__(self, client, name, timeout=None):
        self.client = client
        self.name = name
        self.timeout = LOST_WORKER_TIMEOUT if timeout is None else float(timeout)
        self.token = uuid.uuid4().hex[:12]
        self.seq = 0
        self.round_trips = 0
        self.bytes_received = 0
        self._inputs = []
        self._actor_futures = []
        self.actors = []
        self.addresses = []
        self.part_ids = []
        self.tree = False
        self.journal = []  # (method, args, each, kwargs) of every call since the actors were created
        self.lost = []  # the workers lost during the fit
        self.rebuilt = 0  # actors rebuilt after a loss

    def start(self, xparts, yparts, swparts, algorithm, n_jobs, val=None):
        """Persist the partitions where Dask computes them; one actor per worker, created next to its partitions.

        val: the validation set, None or a dict: ``fraction`` and ``seed`` (each worker holds out a seeded
        share of its rows), or ``xparts``, ``yparts``, ``swparts`` (an eval_set's partitions; each goes to
        the actor on the worker holding it, else to actor ``i mod n_actors``).
        """
        n = len(xparts)
        eval_parts = [] if val is None or "xparts" not in val else val["xparts"] + val["yparts"] + (val["swparts"]
                                                                                                 or [])
        futures = self.client.compute(xparts + yparts + (swparts or []) + eval_parts)
        self._inputs = futures
        _wait_done(futures)
        for f in futures:
            if f.status != "finished":
                f.result()  # raises the partition's own error (nothing is transferred)
        xf, yf, swf = futures[:n], futures[n:2 * n], futures[2 * n:3 * n] if swparts else [None] * n
        who_has = self.client.who_has(xf)
        groups = {}
        for i, f in enumerate(xf):
            holders = sorted(who_has.get(f.key, ()))
            if not holders:
                raise WorkerLostError(f"{self.name}: partition {i} of X is on no worker (lost while loading).")
            groups.setdefault(holders[0], []).append(i)
        self.addresses = sorted(groups, key=lambda a: groups[a][0])
        self.part_ids = [groups[a] for a in self.addresses]
        val_ids = [[] for _ in self.addresses]
        vx = vy = vsw = []
        if eval_parts:
            nv = len(val["xparts"])
            rest = futures[(3 if swparts else 2) * n:]
            vx, vy = rest[:nv], rest[nv:2 * nv]
            vsw = rest[2 * nv:] if val["swparts"] else [None] * nv
            v_who = self.client.who_has(vx)
            for i, f in enumerate(vx):
                holders = [a for a in sorted(v_who.get(f.key, ())) if a in groups]
                val_ids[self.addresses.index(holders[0]) if holders else i % len(self.addresses)].append(i)
        fraction = None if val is None else val.get("fraction")
        seed = 0 if val is None else val.get("seed", 0)
        # what rebuilding actor j needs: the collections' partitions (recomputed from their graphs) and the rest
        self._sources = (xparts, yparts, swparts, val if eval_parts else None)
        self._val_ids = val_ids
        self._args = (algorithm, n_jobs, fraction, seed)
        for j, (addr, ids) in enumerate(zip(self.addresses, self.part_ids)):
            vids = val_ids[j]
            self._actor_futures.append(self._submit_actor(
                j, addr, [xf[i] for i in ids], [yf[i] for i in ids], [swf[i] for i in ids], [vx[i] for i in vids],
                [vy[i] for i in vids], [vsw[i] for i in vids]))
        self.actors = []
        for j, f in enumerate(self._actor_futures):
            try:
                self.actors.append(self._wait(f, j, lambda f: f.result(timeout=_POLL_SECONDS)))
            except _ShardLost as e:
                raise self._lost_error(e.j, e.error) from e.error
        n_shards = len(self.actors)
        self.tree = n_shards >= _TREE_MIN_WORKERS
        if self.tree:  # heap layout: shard j's children are j * F + 1 .. j * F + F
            kids = [range(j * _TREE_FANOUT + 1, min(n_shards, (j + 1) * _TREE_FANOUT + 1)) for j in range(n_shards)]
            self.call("set_children", each=[([self.actors[c] for c in kid],) for kid in kids])

    def _submit_actor(self, j, addr, xf, yf, swf, vxf, vyf, vswf, suffix=""):
        algorithm, n_jobs, fraction, seed = self._args
        return self.client.submit(
            WorkerShard, self.token, self.name, algorithm, n_jobs, self.part_ids[j], xf, yf, swf, self._val_ids[j],
            vxf, vyf, vswf, fraction, seed, j, workers=[addr], allow_other_workers=False, actor=True, pure=False,
            key=f"fastboost-shard-{self.token}-{j}{suffix}")

    def histograms(self, update, draw=None):
        """The round's first round trip (or second, after bootstrap's ``weight_sums``): (every shard's update
        results, summed hist, summed histq or None, the number of drawn rows or -1 without row draws)."""
        if self.tree:
            return self.call("histograms", update, draw, only=[0])[0]
        res = self.call("histograms", update, draw)
        updates = [u for r in res for u in r[0]]
        histq = _ordered_sum([r[2] for r in res]) if res[0][2] is not None else None
        m = sum(r[3] for r in res) if res[0][3] >= 0 else -1
        return updates, _ordered_sum([r[1] for r in res]), histq, m

    def release_inputs(self):
        for f in self._inputs:
            f.release()
        self._inputs = []

    def close(self):
        self.release_inputs()
        self.actors = []
        for f in self._actor_futures:
            f.release()
        self._actor_futures = []

    def _lost_error(self, j, error, why=None):
        """The WorkerLostError of actor j (or of the worker the error names: the histogram tree)."""
        if getattr(error, "address", None) in self.addresses:
            j = self.addresses.index(error.address)
        parts = self.part_ids[j]
        lost = sorted(set(self.lost) | {self.addresses[j]})
        return WorkerLostError(
            f"{self.name}: the Dask worker {self.addresses[j]} holding row partitions {parts} was lost during fit "
            f"({type(error).__name__}: {error}). "
            + (why or "Its binned rows and boosting weights lived only there, so the fit cannot go on")
            + f": no model was produced (workers lost during this fit: {lost}).")

    def _wait(self, fut, j, get):
        """get(fut) polled every _POLL_SECONDS; _ShardLost when actor j's worker left the cluster or failed."""
        while True:
            try:
                return get(fut)
            except _TIMEOUTS:  # still waiting: is actor j's worker still there?
                alive = self.client.nthreads([self.addresses[j]])
                status = self._actor_futures[j].status
                if status not in ("pending", "finished"):
                    raise _ShardLost(j, RuntimeError(f"its actor's status is {status!r}")) from None
                if self.addresses[j] not in alive:
                    raise _ShardLost(j, RuntimeError("the worker left the cluster")) from None
            except (PartitionLostError, OSError, distributed.client.FutureCancelledError,
                    distributed.scheduler.KilledWorker) as e:
                raise _ShardLost(j, e) from e

    def call(self, method, *args, each=None, only=None, kwargs=None):
        """One round trip: ``method(seq, *args[, *each[j]], **kwargs)`` on every actor (or the actors ``only``,
        which forward it to the others: the histogram tree); results in actor order. An actor whose worker
        is lost is rebuilt elsewhere (flat layout) and answers the call all the same."""
        self.seq += 1
        # (arrays copied: the client reuses its split buffers and fills a tree after sending it)
        entry = (method, tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args), each, kwargs or {})
        futures = []
        for j in range(len(self.actors)) if only is None else only:
            try:
                futures.append((j, self._send(j, entry)))
            except RuntimeError as e:  # "Worker holding Actor was lost"
                futures.append((j, _ShardLost(j, e)))
        out = []
        for j, f in futures:
            while True:
                try:
                    if isinstance(f, _ShardLost):
                        raise f
                    out.append(self._wait(f, j, lambda f: f.result(timeout=_POLL_SECONDS)))
                    break
                except _ShardLost as e:
                    if self.tree:
                        raise self._lost_error(e.j, e.error, "Fits summing their histograms up a tree of "
                                               f"workers (from {_TREE_MIN_WORKERS} workers on) do not survive "
                                               "a lost worker") from e.error
                    self._rebuild(j, e.error)
                    try:
                        f = self._send(j, entry)
                    except RuntimeError as e2:
                        f = _ShardLost(j, e2)
        self.journal.append(entry)
        self.round_trips += 1
        self.bytes_received += sum(sizeof(r) for r in out)
        return out

    def _send(self, j, entry):
        method, args, each, kwargs = entry
        extra = each[j] if each is not None else ()
        return getattr(self.actors[j], method)(self.seq, *args, *extra, **kwargs)

    def _rebuild(self, j, error):
        """Actor j again, on a live worker: its partitions recomputed, the journal replayed. WorkerLostError
        when no worker is left within the timeout or the partitions cannot be computed again."""
        lost = self.addresses[j]
        if lost not in self.lost:
            self.lost.append(lost)
        deadline = time.monotonic() + self.timeout
        while True:
            alive = sorted(a for a in self.client.nthreads() if a not in self.lost)
            if alive:
                break
            if time.monotonic() > deadline:
                raise self._lost_error(j, error, f"No worker was left to continue on within {self.timeout:g} s "
                                       "(fastboost.dask.LOST_WORKER_TIMEOUT, or fit(..., worker_timeout=...))")
            time.sleep(min(_POLL_SECONDS, 0.25))
        load = {a: sum(1 for b in self.addresses if b == a) for a in alive}
        target = min(alive, key=lambda a: (load[a], a))
        xparts, yparts, swparts, val = self._sources
        ids, vids = self.part_ids[j], self._val_ids[j]
        pieces = [[xparts[i] for i in ids], [yparts[i] for i in ids], [swparts[i] for i in ids] if swparts else None]
        if val is not None:
            pieces += [[val["xparts"][i] for i in vids], [val["yparts"][i] for i in vids],
                       [val["swparts"][i] for i in vids] if val["swparts"] else None]
        flat = [d for p in pieces if p for d in p]
        try:
            computed = iter(self.client.compute(flat, workers=[target], allow_other_workers=True))
            got = [[next(computed) for _ in p] if p else [None] * (len(ids) if k < 3 else len(vids))
                   for k, p in enumerate(pieces)]
            while len(got) < 6:
                got.append([])
            _wait_done([f for g in got for f in g if f is not None], timeout=self.timeout)
            self.rebuilt += 1
            future = self._submit_actor(j, target, *got, suffix=f"-rebuilt{self.rebuilt}")
            actor = future.result(timeout=self.timeout)
            self.addresses[j] = target
            self._actor_futures[j] = future
            self.actors[j] = actor
            self._wait(actor.replay(self.journal), j, lambda f: f.result(timeout=_POLL_SECONDS))
        except _ShardLost as e:  # the new worker was lost too: try again
            return self._rebuild(j, e.error)
        except Exception as e:  # noqa: BLE001 - the partitions cannot be computed again, or no worker took them
            raise self._lost_error(j, error, f"Rebuilding its rows on {target} failed ({type(e).__name__}: {e})") \
                from e
        finally:
            for g in locals().get("got", []):
                for f in g:
                    if f is not None:
                        f.release()


def _wait_done(futures, timeout=None):
    """Wait until every future is done (finished or failed), through its own client (``distributed.wait``
    would take the default client, which need not be the fit's)."""
    for f in futures:
        try:
            f.exception(timeout=timeout)
        except distributed.client.FutureCancelledError:
            pass


def _dask_cover(shards, model, sw_max):
    """``cover_`` of a Dask fit's kept records (a ``Model``): each training partition's, from its bin codes on its
    worker, added in partition order. Per partition it is the cover the single-machine pass finds on those rows;
    the sum equals the single-machine cover where the weights' sums are exact (integer weights, or none)."""
    nodes = model.nodes if model.nodes.shape[0] else None
    if model.rounds.shape[0] == 0:
        return np.zeros((0, model.nodes.shape[1] if model.nodes.shape[1] > 1 else 2))
    parts = sorted((p for shard in shards.call("cover", model.rounds, nodes, cover_scale(sw_max)) for p in shard),
                   key=lambda p: p[0])
    return _ordered_sum([c for _, c in parts])


def _ordered_sum(arrays):
    """Sum in the given (fixed) order: the result never depends on which worker answered first."""
    total = np.array(arrays[0], dtype=np.float64, copy=True)
    for a in arrays[1:]:
        total += a
    return total


def _choose_stump(scratch, n_value_bins, thresholds, c, direction, feats):
    """The stump of a round from the summed histograms (in ``scratch``, a StumpScratch) of the features
    ``feats`` (int64[k], increasing) under the configuration record ``c`` and the monotone constraints
    ``direction`` (int8, length 0: none): the loop's own compiled ``choose_stump``.

    Returns (f, k, missing_left, left, right, threshold, Q_I, Q_J) as Python scalars.
    """
    numeric = np.zeros(n_value_bins.shape[0], np.uint8)  # (categorical features are not taken on Dask)
    f, k, ml, left, right, threshold, qi, qj, _ = choose_stump(scratch, n_value_bins, numeric, thresholds, c,
                                                               np.zeros(CAT_WORDS, np.uint64), direction, feats)
    return int(f), int(k), int(ml), int(left), int(right), float(threshold), float(qi), float(qj)


def _round_draw(shards, c, ss, t, pending, every_row, stump, n_rows):
    """What round t's learner reads (a ``RoundDraw``), drawn as the single-machine learner draws it: the features
    (``sampling.draw_round`` into the client's SampleScratch ``ss``) and whether the rows are drawn (not when
    ``every_row``: the retry of a rejected round, which reads every feature too). Bootstrap draws by the
    cumulative sums of the learner's weights in row order, so it first asks every shard (``weight_sums``, which
    also applies the pending update) for each partition's sum, and gives each partition its stretch of the whole.
    Returns (the draw, that call's update results or None, the update still pending)."""
    draw_round(c, ss, t, stump, every_row)
    feats = ss.feats[:ss.drawn[1]].copy() if c["sample_features"] else None
    rows = bool(c["sample_rows"]) and not every_row
    if not (rows and c["bootstrap"]):
        return RoundDraw(t, feats, rows), None, pending
    res = shards.call("weight_sums", pending)
    bounds, total = _partition_stretches([s for _, s in sorted(p for r in res for p in r[1])])
    fraction = float(c["subsample"]) if c["subsample"] > 0.0 else 1.0
    n_draws = max(1, int(fraction * n_rows + 0.5))
    return RoundDraw(t, feats, True, bounds, total, n_draws), [r[0] for r in res], None


def _partition_stretches(sums):
    """Each partition's stretch [low, high) of the cumulative sums of the learner's weights (``sums``: each
    partition's sum of max(u, 0), in partition order, which is the rows' order), high inf for the last
    partition of positive weight; returns (float64[n_partitions, 2], the total)."""
    positive = [j for j, s in enumerate(sums) if s > 0.0]
    last = positive[-1] if positive else -1
    bounds = np.zeros((len(sums), 2))
    low = 0.0
    for j, s in enumerate(sums):
        high = low + s
        bounds[j] = (low, np.inf if j == last else high)
        low = high
    return bounds, low


#: the stump learner's scratch the client does not use (trimming's and carried histograms' rows)
_NO_ROWS = np.empty(0, np.int64)
_NO_HIST = np.empty((1, 1, 2))

#: What the client learns about the training data from the workers before binning: the classes, the
#: largest (class-weighted) sample weight, the positive-weight rows per partition, the class weights
#: (or None) and the validation rows' largest sample weight (None without validation).
_Described = namedtuple("_Described", ["classes", "sw_max", "n_positive", "class_weight", "val_max", "n_rows"])

#: A Dask fit's inputs split into row partitions: X's, y's and sample_weight's (None without) delayed parts,
#: X's empty meta (its columns), and the validation set's parts or ``validation_fraction``'s seed (or None).
_DaskInputs = namedtuple("_DaskInputs", ["xparts", "yparts", "swparts", "meta", "val"])


class _StumpLearner:
    """A stump round on Dask: the histograms (with the previous round's update), the compiled
    ``choose_stump`` on their sum, then the round's sums: from ``apply_stump`` on every worker (a second
    round trip), or, when the rule's learner weights are its boosting weights (AdaBoost, SABoost), from
    the summed histograms, with the workers' ``apply_stump`` fused into the next round's call (one round
    trip a round; the sums then add the same weights by bin instead of by row)."""

    def __init__(self, mapper, config, fused=False, direction=None, groups=None, n_rows=0):
        c = config[0]
        self.c = c
        self.direction = np.zeros(0, np.int8) if direction is None else np.ascontiguousarray(direction, np.int8)
        self.fused = fused and not c["sample_rows"]  # (U = W from the histograms only when they hold every row)
        self.n_rows = n_rows
        self.n_seen = n_rows
        self.missing_code = mapper.missing_code
        self.n_value_bins = np.ascontiguousarray(mapper.n_value_bins_, dtype=np.int64)
        self.thresholds = mapper.thresholds_
        d = self.thresholds.shape[0]
        self.fvalue = np.empty(d, np.float64)
        self.fbin = np.empty(d, np.int64)
        self.fmissing_left = np.empty(d, np.int64)
        self.no_histq = np.zeros((d, 1, 2), np.float64)
        self.sums = np.zeros(1, SUMS_DTYPE)
        self.ss = make_sample_scratch(0, d, config, groups)  # the round's features (every one without sampling)
        self.hist = None  # the round's summed histograms
        # monotone_steps: the credit steps back may take, as the single-machine learner's (Monotone.credit)
        capped = bool(c["monotone_capped"]) and self.direction.shape[0] > 0
        self.credit = np.zeros((d, self.missing_code + 1) if capped else (0, 0))

    def start(self, shards, pending, t, every_row=False):
        draw, updates, pending = _round_draw(shards, self.c, self.ss, t, pending, every_row, True, self.n_rows)
        done, hist, histq, m = shards.histograms(pending, draw)
        if draw.feats is not None and draw.feats.shape[0] < self.thresholds.shape[0]:
            # the workers sent the drawn features' histograms only: put them in place (the others are not read)
            if self.hist is None:
                self.hist = np.zeros((self.thresholds.shape[0],) + hist.shape[1:])
                self.sampled_histq = np.zeros((self.thresholds.shape[0],) + histq.shape[1:]) if histq is not None \
                    else None
            self.hist[draw.feats] = hist
            if histq is not None:
                self.sampled_histq[draw.feats] = histq
                histq = self.sampled_histq
        else:
            self.hist = hist
        self.histq = self.no_histq if histq is None else histq
        self.n_seen = self.n_rows if m < 0 else m
        return done if updates is None else updates

    def finish(self, shards, model, t):
        scratch = StumpScratch(self.hist, self.histq, self.fvalue, self.fbin, self.fmissing_left, _NO_ROWS,
                               _NO_ROWS, _NO_HIST)
        f, k, ml, left, right, threshold, qi, qj = _choose_stump(scratch, self.n_value_bins, self.thresholds, self.c,
                                                                 self.direction,
                                                                 self.ss.feats[:self.ss.drawn[1]])
        cap = np.inf
        if self.credit.shape[0]:  # a step back may do better (as learners.back_step)
            f, k, ml, left, right, threshold, cap = self._back_step(f, k, ml, left, right, threshold)
        if self.fused:  # U = W: the weights of the rows the stump gets right / wrong, from the histograms
            # (a constant stump's feature need not be drawn: any drawn feature's histogram holds every row)
            hist = self.hist[f if left != right else int(self.ss.feats[0])]
            bins = np.arange(hist.shape[0])
            go_left = (bins <= k) | ((bins == self.missing_code) & (ml != 0))
            positive = np.where(go_left, left > 0, right > 0)
            ui = float(hist[positive, 1].sum() + hist[~positive, 0].sum())
            uj = float(hist[positive, 0].sum() + hist[~positive, 1].sum())
            wi, wj = ui, uj
        else:
            ui, uj, wi, wj, qi_all, qj_all = _ordered_sum(shards.call("apply", f, k, ml, left, right))
            if self.c["use_q"] and self.n_seen < self.n_rows:  # drawn rows: the step's sums of q over every row
                qi, qj = qi_all, qj_all
        self.sums[0] = (ui, uj, wi, wj, qi, qj, 1.0, 0.0, cap)
        r = model.rounds[t]
        r["feature"], r["bin"], r["missing_left"], r["left"], r["right"], r["threshold"] = (
            f, k, ml, left, right, threshold)
        return self.sums

    def _back_step(self, f, k, ml, left, right, threshold):
        """The round's stump, or a capped step back on a constrained feature that lowers AdaBoost's loss more
        (``learners.back_step`` on the summed histograms); returns it with its threshold and the cap (inf: none)."""
        feats = self.ss.feats[:self.ss.drawn[1]]
        f0 = f if left != right else int(feats[0])  # (a constant stump: any built feature's totals)
        wrong, total = stump_wrong(self.hist[f0], k, ml, self.missing_code, left, right, False,
                                   np.zeros(CAT_WORDS, np.uint64))
        if not total > 0.0:
            return f, k, ml, left, right, threshold, np.inf
        lr = float(self.c["learning_rate"])
        b = best_back_step(self.hist, self.n_value_bins, self.missing_code, self.direction, self.credit, feats, lr,
                           step_loss(wrong / total, np.inf, lr))
        if b[0] < 0:
            return f, k, ml, left, right, threshold, np.inf
        bf, bk, bml, bl, br, cap = (int(b[0]), int(b[1]), int(b[2]), int(b[3]), int(b[4]), float(b[5]))
        return bf, bk, bml, bl, br, float(self.thresholds[bf, bk]), cap

    def update(self, model, t, alpha, sums):
        s = sums[0]
        if self.credit.shape[0]:
            r = model.rounds[t]
            add_credit(self.credit, self.direction, int(r["feature"]), int(r["bin"]), int(r["left"]), int(r["right"]),
                       float(alpha))
        return RoundUpdate(alpha, float(s["wi"]), float(s["wj"]), model.rounds[t:t + 1].copy(), None, None, None,
                           self.fused)


class _TreeLearner:
    """A tree round on Dask, level by level as ``grow_tree``: the workers build their rows' histograms
    (the root's with the previous round's update; then each level's children, the smaller one from its
    rows and its sibling by subtraction), the client adds them in worker order and chooses the level's
    splits with the same compiled ``choose_level``; the workers partition their rows, and at the end send
    the leaves' sums, from which the client sets the leaves (``finish_leaves``) and the round's sums."""

    def __init__(self, mapper, config, direction=None, groups=None, n_rows=0):
        c = config[0]
        self.config = config
        self.n_rows = n_rows
        self.n_seen = n_rows
        depth = int(c["max_depth"])
        n_classes = int(c["n_classes"])
        ls = int(c["leaf"]) == LEAF_LSQ
        self.thresholds = mapper.thresholds_
        d = self.thresholds.shape[0]
        n_bins = mapper.missing_code + 1
        slots = 2 ** (depth - 1)
        max_nodes = max_nodes_of(depth)
        self.hist = np.zeros((slots, d, n_bins, n_classes + 1 + int(ls)))
        self.splits = np.zeros(slots, SPLIT_DTYPE)
        self.n_value_bins = np.ascontiguousarray(mapper.n_value_bins_, dtype=np.int64)
        self.categorical = np.zeros(d, np.uint8)  # (categorical features are not taken on Dask)
        self.leaf_u = np.zeros((max_nodes, n_classes + 1))
        self.leaf_w = np.zeros((max_nodes, n_classes))
        self.factor = np.zeros((max_nodes, 2))
        self.sums = np.zeros(1, SUMS_DTYPE)
        self.sums[0]["max_step"] = np.inf  # (a tree's step is never bounded)
        constrained = direction is not None
        monotone = Monotone(np.ascontiguousarray(direction if constrained else np.zeros(0), np.int8),
                            np.zeros((max_nodes if constrained else 0, 2)), np.zeros((0, 0)))
        # the round's features and the nodes' (interaction groups, colsample_bynode), reused round after round
        self.limits = Limits(monotone, make_sample_scratch(0, d, config, groups))

    def start(self, shards, pending, t, every_row=False):
        draw, updates, pending = _round_draw(shards, self.config[0], self.limits.sample, t, pending, every_row,
                                             False, self.n_rows)
        res = shards.call("tree_root", pending, draw)
        # (with drawn features the workers send theirs only; the others are not read)
        self.feats = draw.feats if draw.feats is not None else slice(None)
        self.hist[0][self.feats] = _ordered_sum([r[1] for r in res])
        self.subset = res[0][2] >= 0  # the tree grows on the drawn rows; its leaves' sums come from every row
        self.n_seen = sum(r[2] for r in res) if self.subset else self.n_rows
        return [r[0] for r in res] if updates is None else updates

    def finish(self, shards, model, t):
        config = self.config
        c = config[0]
        tree = model.nodes[t]
        reset_tree(tree)
        ss = self.limits.sample
        total_u = root_weight(self.hist[0], c, ss.feats[0])
        max_depth = int(c["max_depth"])
        level_first, level_count, n_nodes = 0, 1, 1
        n_first, n_last, last_root = -1, 0, False
        for depth in range(max_depth):
            # (extra = the limits again: the client follows config as the full learner does, draws and bounds)
            n_split = int(choose_level(self.hist, level_first, level_count, tree, self.n_value_bins,
                                       self.categorical, self.thresholds, c, self.splits, self.limits,
                                       self.limits, SplitScan(None if int(c["n_classes"]) == 2 else True, True)))
            if n_split == 0:
                break
            first_child = n_nodes
            n_nodes += 2 * n_split
            if depth + 1 == max_depth:  # the children are leaves
                n_first, n_last, last_root = first_child, n_split, depth == 0
                break
            res = shards.call("tree_level", self.splits, n_split, first_child, depth == 0)
            self.hist[:2 * n_split, self.feats] = _ordered_sum(res)
            level_first, level_count = first_child, 2 * n_split
        if n_first < 0:
            n_first = n_nodes
        res = shards.call("tree_leaves", tree, n_nodes, n_first, self.splits, n_last, last_root)
        self.leaf_u[:] = 0.0
        self.leaf_w[:] = 0.0
        self.leaf_u[:n_nodes] = _ordered_sum([r[0] for r in res])
        self.leaf_w[:n_nodes] = _ordered_sum([r[1] for r in res])
        if self.subset:  # (as grow_tree on drawn rows: the leaves' total, in node order)
            total_u = 0.0
            for node in range(n_nodes):
                if tree[node]["left"] < 0:
                    for k in range(int(c["n_classes"])):
                        total_u += float(self.leaf_u[node, k])
        finish_leaves(tree, n_nodes, self.leaf_u, c, total_u, self.limits.monotone.bounds)
        finish_tree_round(tree, n_nodes, c, self.leaf_u, self.leaf_w, self.sums, model.rounds[t:t + 1][0],
                          self.factor)
        return self.sums

    def update(self, model, t, alpha, sums):
        s = sums[0]
        return RoundUpdate(alpha, float(s["wi"]), float(s["wj"]), model.rounds[t:t + 1].copy(), model.nodes[t].copy(),
                           self.leaf_w.copy(), self.factor.copy())


def _bounded(alpha, sums):
    """The step alpha at most the learner's bound sums[0]["max_step"] (as the compiled loop's ``bounded_step``)."""
    cap = float(sums[0]["max_step"])
    return cap if cap < alpha else alpha


class DaskRounds:
    """The rounds engine of a Dask fit (see ``fastboost._fit``): the rows live on the workers.

    A round is the learner's calls to the workers (histograms, then the split, or a tree level by
    level), the compiled loop's own step, stop and record rules on the client, and the round's update,
    which the workers apply with the next round's first call; its cost and validation error arrive with
    that call (or with one ``update`` call at the end of a run of rounds). ``round_callback(rounds_done,
    worker_addresses)`` is called after every round (tests, benchmarks).
    """

    def __init__(self, shards, learner, rule, config, n_rows, has_validation, round_callback=None):
        self.shards = shards
        self.learner = learner
        self.rule = rule
        self.config = config
        self.step, self.stop = pick_step_stop(rule, config)
        self.n_rows = n_rows
        self.has_validation = has_validation
        self.round_callback = round_callback
        self.state = np.zeros(1, STATE_DTYPE)

    def start_run(self):
        pass

    def chunk_end(self, done):
        return done + 2 ** 62  # one call runs every round (a call's end costs a round trip)

    def header(self, T, start):
        return None

    def training_error(self):
        return None

    def _cost(self, alpha, parts):
        """The rule's log cost after a round from the workers' update results (added in worker order)."""
        if self.rule.additive:  # (risk, 0) per worker
            a = float(parts[0][0])
            for p in parts[1:]:
                a += float(p[0])
            b = 0.0
        else:  # (Z, s2) per worker; Z is the same global normaliser on every worker
            a = float(parts[0][0])
            b = float(parts[0][1])
            for p in parts[1:]:
                b += float(p[1])
        return self.rule.cost(self.state[0], alpha, a, b, self.config[0])

    def _account(self, model, t, updates):
        """Round t's cost and validation error from the workers' update results; True when early stopping
        ends the fit after round t."""
        model.rounds[t]["log_cost"] = self._cost(float(model.rounds[t]["alpha"]), updates)
        if not self.has_validation:
            return False
        err = float(updates[0][2])
        for u in updates[1:]:
            err += float(u[2])
        model.rounds[t]["val_error"] = err
        return bool(record_validation(self.state[0], t, err, int(self.config[0]["patience"])))

    def run(self, fit, start, stop):
        shards, learner, c = self.shards, self.learner, self.config[0]
        state = self.state[0]
        state["stop"] = RAN_ALL
        pending = None  # the last kept round (a RoundUpdate), applied by the workers' next call
        done = start
        for t in range(start, stop):
            if t >= fit.model.rounds.shape[0]:  # grow the record (a huge n_estimators costs nothing up front)
                fit.grow(min(fit.target, 2 * fit.model.rounds.shape[0]))
            model = fit.model
            updates = learner.start(shards, pending, t)
            if pending is not None:
                pending = None
                if self._account(model, t - 1, updates):
                    state["stop"] = STOPPED_EARLY
                    return done - start
            sums = learner.finish(shards, model, t)
            alpha = _bounded(self.step(sums[0], t + 1, c) * c["learning_rate"], sums)  # as the compiled loop
            decision = self.stop(alpha, sums[0], t + 1, c)
            if decision == REJECT and (learner.n_seen < self.n_rows or draws_features(c)):
                # (as the compiled loop) a hypothesis learnt from drawn rows or features was rejected: learn from
                # every row and every feature
                learner.start(shards, None, t, every_row=True)
                sums = learner.finish(shards, model, t)
                alpha = _bounded(self.step(sums[0], t + 1, c) * c["learning_rate"], sums)
                decision = self.stop(alpha, sums[0], t + 1, c)
            if decision == REJECT:
                state["stop"] = STOPPED_BY_RULE
                break
            record_round(model.rounds, t, alpha, sums, bool(self.rule.additive))
            model.rounds[t]["n_seen"] = learner.n_seen  # (the drawn rows, or every row)
            pending = learner.update(model, t, alpha, sums)
            done = t + 1
            if decision == ACCEPT_STOP:
                state["stop"] = STOPPED_BY_RULE
                break
            if self.round_callback is not None:
                self.round_callback(done, shards.addresses)
        if pending is not None and self._account(fit.model, done - 1, shards.call("update", pending)):
            state["stop"] = STOPPED_EARLY
        return done - start


# ----------------------------------------------------------------------------- the estimators
class _DaskBoostMixin:
    """``fit`` on Dask collections; everything else is the single-machine estimator's."""

    #: called on the client after every round as ``_round_callback(rounds_done, worker_addresses)`` (tests, benchmarks)
    _round_callback = None
    #: stump rounds of AdaBoost and SABoost in one round trip (False: two, with the sums from the rows; benchmarks)
    _fuse_rounds = True

    def _hist_rebuild(self, rule, depth, n_classes, leaf_kind, n_rows):
        """0: the shards build every round's histograms from their rows (histograms are not carried)."""
        return 0

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._local_class = next(c for c in cls.__mro__
                                if c.__module__ == "fastboost.estimators" and not c.__name__.startswith("_"))

    def fit(self, X, y, sample_weight=None, eval_set=None, *, client=None, bin_mapper=None, worker_timeout=None):
        """Fit on row-partitioned Dask data; the result is the single-machine model up to summation order.

        X: dask array (n_samples, n_features) (chunked along rows; column chunks are merged) or dask
        DataFrame of numeric columns. y: dask array, Series or one-column DataFrame with X's row
        partitions. sample_weight: None or as y. eval_set: (X_val, y_val) or (X_val, y_val,
        sample_weight_val) as Dask collections (y_val partitioned like X_val), or use
        ``validation_fraction`` (each worker holds out a seeded share of its rows). client: a
        ``distributed.Client`` (default: the current one). bin_mapper: a fitted
        :class:`fastboost._binning.BinMapper` (with this estimator's ``max_bins``) to use its bin
        edges instead of computing them. worker_timeout: seconds to wait for a live worker after one
        holding rows was lost (default ``LOST_WORKER_TIMEOUT``, 60): the lost rows are rebuilt on it and
        the fit goes on; with none, WorkerLostError. Categorical features are single-machine only.
        """
        self._check_params()
        name = type(self).__name__
        if self._logistic():  # (before any worker starts)
            raise NotImplementedError(f"{name} does not fit the logistic loss (loss='logistic') yet: it is a "
                                      "single-machine option; fit with loss='exponential', or AdaBoostClassifier "
                                      "on one machine.")
        inputs = self._dask_inputs(X, y, sample_weight, eval_set, bin_mapper)
        xparts, yparts, swparts, meta, val = inputs
        n_features = meta.shape[1]
        client = distributed.get_client() if client is None else client
        rule = RULES[self._algorithm]
        shards = _Shards(client, name, worker_timeout)
        t0 = time.perf_counter()
        stats = {}
        try:
            # (as_current: the actors' handles talk through the current client, which need not be the default)
            with client.as_current(), n_threads(self.n_jobs):
                shards.start(xparts, yparts, swparts, self._algorithm, self.n_jobs, val)
                t_load = time.perf_counter()
                d = self._dask_describe(shards, n_features, val is not None)
                n_classes = d.classes.shape[0]
                ovr = n_classes > 2 and not self._joint_multiclass()
                if n_classes > 2 and not ovr and getattr(self, "leaf", "discrete") == "real":
                    raise ValueError(f"{name}: leaf='real' with {n_classes} classes (SAMME.R or AdaBoost.MH, K-vector "
                                     "leaves) is not available on Dask; pass multiclass='ovr' (one model per class), "
                                     "or fit AdaBoostClassifier on one machine.")
                self._tree_depth(2 if ovr else n_classes)  # (feature_rank's check)
                mapper, q_sum, vq_sum = self._dask_bin_edges(shards, d, bin_mapper)
                t_edges = time.perf_counter()
                # all input checked: only now drop any earlier fit's state (a fit that fails from here on
                # leaves the estimator unfitted, never with a partial model)
                for attr in [a for a in vars(self) if a.endswith("_") and not a.startswith("_")]:
                    delattr(self, attr)
                validate_data(self, X=meta, reset=True, skip_check_array=True)  # (the names monotone_constraints reads)
                fit_classes = 2 if ovr else n_classes
                config = self._config(rule, mapper, fit_classes, n_features, 1)
                # each training partition's first row in the whole fit's rows (the row draws' indices)
                first_rows = np.concatenate([[0], np.cumsum(d.n_rows)[:-1]]).astype(np.int64)
                binned = shards.call("bin", mapper, q_sum, config, vq_sum, kwargs={"first_rows": first_rows})
                n_nonzero = sum(b[0] for b in binned)
                seed = config[0]["sample_seed"]  # (the row and feature draws' seed, drawn once, as in memory)
                config = self._config(rule, mapper, fit_classes, n_features, n_nonzero)
                config[0]["sample_seed"] = seed
                shards.release_inputs()
                t1 = time.perf_counter()
                bytes_before = shards.bytes_received
                if ovr:
                    self._dask_one_vs_rest(shards, mapper, n_nonzero, config, d.classes, meta)
                else:
                    shards.call("target", None, config)
                    model = self._dask_boost(shards, mapper, n_nonzero, config, val is not None,
                                             self._interaction_groups(n_features))
                    cover = _dask_cover(shards, model, self._sw_max)
                t2 = time.perf_counter()
            stats = {
                "workers": list(shards.addresses), "partitions": [list(p) for p in shards.part_ids],
                "validation_partitions": [list(p) for p in shards._val_ids],
                "load_time": t_load - t0, "edges_time": t_edges - t_load, "transform_time": t1 - t_edges,
                "boost_time": t2 - t1, "round_trips": shards.round_trips,
                "bytes_received": shards.bytes_received,
                "bytes_received_binning": bytes_before,
                "lost_workers": list(shards.lost), "rebuilt": shards.rebuilt,
                "threading_layers": [b[1] for b in binned],
            }
        finally:
            shards.close()
        validate_data(self, X=meta, reset=True, skip_check_array=True)
        self.classes_ = d.classes
        self.bin_mapper_ = mapper
        self.bin_time_ = t1 - t0
        self.fit_time_ = time.perf_counter() - t0
        self.dask_stats_ = stats
        if not ovr:
            self._set_rounds(model)
            self.cover_ = cover
        return self

    def _dask_inputs(self, X, y, sample_weight, eval_set, bin_mapper):
        """The fit's inputs checked and split into their row partitions (a :class:`_DaskInputs`): what can be
        checked without reading the rows (the rest is checked on the workers, ``_dask_describe``)."""
        name = type(self).__name__
        if y is None:
            raise ValueError(f"{name} requires y to be passed, but the target y is None.")
        if eval_set is not None and self.validation_fraction is not None:
            raise ValueError("Pass either eval_set or validation_fraction, not both.")
        if getattr(self, "weight_trim_rate", None) is not None:
            raise NotImplementedError(f"{name} does not trim weights (weight_trim_rate) yet: it is a "
                                      "single-machine option; fit with weight_trim_rate=None.")
        if self.warm_start:
            raise NotImplementedError(f"{name} does not continue a fit (warm_start=True) yet: it is a "
                                      "single-machine option; fit with warm_start=False and the rounds wanted.")
        if self.max_bins is None or self.max_bins > MAX_BINS:
            raise NotImplementedError(f"{name} bins to at most {MAX_BINS} bins (max_bins={self.max_bins}): exact "
                                      "mode (max_bins=None or above 255) is a single-machine option.")
        explicit = not (self.categorical_features is None or isinstance(self.categorical_features, str))
        if explicit or any(getattr(dt, "name", None) == "category" or getattr(dt, "kind", "f") in "OUS"
                           for dt in getattr(X, "dtypes", ())):
            raise NotImplementedError(f"{name} takes numeric features only: categorical features are "
                                      "single-machine (encode them as numbers, or fit on one machine).")
        xparts, row_chunks, meta = _x_parts(X, name)
        yparts = _vector_parts(y, "y", len(xparts), row_chunks)
        swparts = None if sample_weight is None else _vector_parts(sample_weight, "sample_weight", len(xparts),
                                                                   row_chunks)
        n_features = meta.shape[1]
        val = None
        if eval_set is not None:
            v.check_eval_set_form(eval_set)
            if not isinstance(eval_set, (tuple, list)) or len(eval_set) not in (2, 3):
                raise TypeError("eval_set must be a tuple (X_val, y_val) or (X_val, y_val, sample_weight_val).")
            vx = "eval_set's X"
            vxparts, v_chunks, vmeta = _x_parts(eval_set[0], name, vx)
            if vmeta.shape[1] != n_features:
                raise ValueError(f"eval_set's X has {vmeta.shape[1]} features, but X has {n_features}.")
            check_eval_set_names(meta, vmeta)
            val = {"xparts": vxparts,
                   "yparts": _vector_parts(eval_set[1], "eval_set's y", len(vxparts), v_chunks, vx),
                   "swparts": None if len(eval_set) == 2 or eval_set[2] is None else
                   _vector_parts(eval_set[2], "eval_set's sample_weight", len(vxparts), v_chunks, vx)}
        elif self._held_out_fraction(None) is not None:
            seed = (int(check_random_state(self.random_state).randint(np.iinfo(np.int32).max))
                    if self.random_state is not None else int(np.random.default_rng().integers(2 ** 31 - 1)))
            val = {"fraction": float(self._held_out_fraction(None)), "seed": seed}
        if bin_mapper is not None:
            if not hasattr(bin_mapper, "thresholds_"):
                raise ValueError("bin_mapper must be a fitted fastboost._binning.BinMapper.")
            if bin_mapper.max_bins != self.max_bins or bin_mapper.thresholds_.shape[0] != n_features:
                raise ValueError(f"bin_mapper has max_bins={bin_mapper.max_bins} and "
                                 f"{bin_mapper.thresholds_.shape[0]} features; this fit needs max_bins="
                                 f"{self.max_bins} and {n_features}.")
        return _DaskInputs(xparts, yparts, swparts, meta, val)

    def _dask_one_vs_rest(self, shards, mapper, n_nonzero, config, classes, meta):
        """K > 2 classes for the binary algorithms: one Dask fit per class against the rest, on the rows
        binned once; ``estimators_`` are single-machine models, as a single-machine one-vs-rest fit's."""
        from sklearn.base import clone

        models = []
        for k in range(classes.shape[0]):
            direction = self._monotone_direction(meta.shape[1])
            sub = clone(self).set_params(class_weight=None,
                                         monotone_constraints=None if direction is None else direction.tolist())
            sub._n_rows = self._n_rows
            shards.call("target", k, config)
            model = sub._dask_boost(shards, mapper, n_nonzero, config, self._has_validation,
                                    self._interaction_groups(meta.shape[1]))
            validate_data(sub, X=meta, reset=True, skip_check_array=True)
            sub.classes_ = np.array([0, 1])
            sub._set_rounds(model)
            sub.cover_ = _dask_cover(shards, model, self._sw_max)
            models.append(sub.to_local())
        self.estimators_ = models
        self.n_estimators_ = sum(m.n_estimators_ for m in models)

    # ------------------------------------------------------------------ loading and binning
    def _dask_describe(self, shards, n_features, has_validation):
        """Global checks from the per-partition summaries (a :class:`_Described`)."""
        name = type(self).__name__
        described = shards.call("describe")
        digest = sources_digest()
        for j, (worker_digest, _, _) in enumerate(described):
            if worker_digest != digest:
                raise RuntimeError(f"{name}: the fastboost kernels on worker {shards.addresses[j]} differ from the "
                                   "client's: install the same fastboost version on the client and every worker.")
        parts = sorted((p for _, shard, _ in described for p in shard), key=lambda p: p[0])
        for part, _, dim, *_ in parts:
            if dim != n_features:
                raise ValueError(f"X has {n_features} features but its partition {part} has {dim}.")
        n_samples = sum(p[1] for p in parts)
        if n_samples == 0:
            raise ValueError(f"Found array with 0 sample(s) (shape=(0, {n_features})) while a minimum of 1 is "
                             "required.")
        classes = np.unique(np.concatenate([p[3] for p in parts if p[1]]))
        if classes.shape[0] < 2:
            raise ValueError(f"{name} needs samples of at least 2 classes in y; got 1 class ({v.plain(classes[0])}).")
        if classes.shape[0] > MAX_CLASSES:
            raise ValueError(f"{name} takes at most {MAX_CLASSES} classes; y has {classes.shape[0]}.")
        counts = np.zeros(classes.shape[0], np.int64)
        top = np.zeros(classes.shape[0])
        for p in parts:
            labels, n_rows, biggest = p[6]
            where = np.searchsorted(classes, labels)
            counts[where] += n_rows
            top[where] = np.maximum(top[where], biggest)
        class_weight = None
        if self.class_weight is not None:  # as scikit-learn's compute_sample_weight, from the global counts
            from sklearn.utils.class_weight import compute_class_weight

            y_counts = np.repeat(classes, counts) if self.class_weight == "balanced" else classes
            try:
                class_weight = compute_class_weight(self.class_weight, classes=classes, y=y_counts)
            except (ValueError, KeyError) as e:
                raise ValueError(f"class_weight={self.class_weight!r} does not fit the classes of y: {e}") from None
        with np.errstate(over="ignore"):
            sw_max = float(np.max(top if class_weight is None else top * class_weight))
        if not np.isfinite(sw_max):  # (both finite: as the single machine's _class_weighted)
            raise ValueError(f"sample_weight times class_weight={self.class_weight!r} overflows float64 (both are "
                             "finite): scale them down (only their ratios matter).")
        if not sw_max > 0:
            raise ValueError("sample_weight sums to zero: at least one sample needs a positive weight.")
        val_max = None
        if has_validation:
            vparts = sorted((p for _, _, vs in described for p in vs), key=lambda p: p[0])
            for part, _, dim, *_ in vparts:
                if dim != n_features:
                    raise ValueError(f"eval_set's X has {dim} features in its partition {part}, but X has "
                                     f"{n_features}.")
            if sum(p[1] for p in vparts) == 0:
                raise ValueError("The validation set is empty: validation_fraction held out no row (too few rows "
                                 "or too small a fraction), or eval_set has no rows.")
            vlabels = np.unique(np.concatenate([p[3] for p in vparts if p[1]]))
            unknown = np.setdiff1d(vlabels, classes)
            if unknown.size:
                raise ValueError(f"eval_set's y has labels not in the training y: {unknown[:5].tolist()}.")
            val_max = max(p[4] for p in vparts)
            if not val_max > 0:
                raise ValueError("The validation set's sample weights sum to zero.")
        self._has_validation = has_validation
        self._n_rows = int(n_samples)
        self._sw_max = sw_max  # (the cover pass's scale: ``explain.cover_scale``)
        return _Described(classes, sw_max, [p[5] for p in parts], class_weight, val_max, [p[1] for p in parts])

    def _dask_bin_edges(self, shards, described, bin_mapper):
        """The binning sample (all positive rows up to _BIN_SUBSAMPLE, else a uniform sample) and its BinMapper;
        returns (mapper, sum of q over the training rows, over the validation rows or None)."""
        n_pos_parts = described.n_positive
        n_pos = sum(n_pos_parts)
        seed = 0
        sampled = False
        if bin_mapper is not None:
            sizes = [0] * len(n_pos_parts)
        elif n_pos <= _BIN_SUBSAMPLE:
            sizes = [None] * len(n_pos_parts)
        else:  # BinMapper's own sample: the positive rows of the smallest keys (a hash of the global row index)
            sampled = True
            seed = sample_seed(self.random_state)
            # every partition sends its rows of keys up to a limit that about _BIN_SUBSAMPLE + 8 sd of them pass
            share = min(1.0, (_BIN_SUBSAMPLE + 8 * np.sqrt(_BIN_SUBSAMPLE) + 64) / n_pos)
            limit = int(min(2**64 - 1, share * 2.0**64))
            offsets = np.concatenate([[0], np.cumsum(described.n_rows)[:-1]]).astype(np.int64).tolist()
            sizes = [(offset, limit) for offset in offsets]
        each = [([sizes[i] for i in ids], seed) for ids in shards.part_ids]
        res = shards.call("prepare", described.classes, described.sw_max, each=each,
                          kwargs={"class_weight": described.class_weight, "val_max": described.val_max})
        parts = sorted((p for shard, _ in res for p in shard), key=lambda p: p[0])
        q_sum = float(parts[0][1])
        for p in parts[1:]:
            q_sum += float(p[1])
        vq_sum = None
        if described.val_max is not None:
            vparts = sorted((p for _, vs in res for p in vs), key=lambda p: p[0])
            vq_sum = float(vparts[0][1])
            for p in vparts[1:]:
                vq_sum += float(p[1])
        if bin_mapper is not None:
            return bin_mapper, q_sum, vq_sum
        sample = np.concatenate([p[2] for p in parts])
        weights = np.concatenate([p[3] for p in parts]) / q_sum  # = p of the sampled rows
        if sampled:
            rows = np.concatenate([np.asarray(p[4], dtype=np.int64) + offsets[p[0]] for p in parts])
            if rows.size < _BIN_SUBSAMPLE:  # (8 standard deviations below the expected count)
                raise RuntimeError(f"the binning sample's key limit let only {rows.size} rows through; fit again.")
            picked = RowSample(seed, _BIN_SUBSAMPLE)
            picked.offer(rows)
            at = np.searchsorted(rows, picked.result()[0])
            sample, weights = sample[at], weights[at]
        return BinMapper(self.max_bins, random_state=self.random_state).fit(sample, weights), q_sum, vq_sum

    # ------------------------------------------------------------------ boosting (the loop's rules, round by round)
    def _dask_boost(self, shards, mapper, n_nonzero, config, has_validation=False, groups=None):
        """The rounds through a fit object whose rows are on the workers (``DaskRounds``): stumps in one or two
        round trips, trees in one per level plus the leaves; returns the kept records."""
        rule = RULES[self._algorithm]
        c = config[0]
        self._n_classes = int(c["n_classes"])
        self._has_validation = has_validation
        fused = bool(rule.u_is_w and not rule.additive and not rule.use_q) and self._fuse_rounds
        direction = self._monotone_direction(mapper.thresholds_.shape[0])
        learner = (_TreeLearner(mapper, config, direction, groups, self._n_rows) if int(c["max_depth"])
                   else _StumpLearner(mapper, config, fused, direction, groups, self._n_rows))
        engine = DaskRounds(shards, learner, rule, config, self._n_rows, has_validation, self._round_callback)
        fit = Fit(type(self).__name__, rule, config, engine, n_nonzero=n_nonzero,
                  capacity=min(self.n_estimators, _CAPACITY), has_validation=has_validation,
                  hook=self._round_hook(), verbose=self.verbose)
        result = fit.run(self.n_estimators).finish(keep_state=True)
        self._check_overflow(result.model.rounds, float(c["learning_rate"]))
        self._apply_fit(result)
        self._keep_sampling_seed(config)
        return result.model

    # ------------------------------------------------------------------ prediction
    def to_local(self):
        """The fitted model as the single-machine estimator (same class without Dask; pickles without Dask)."""
        check_is_fitted(self)
        local = self._local_class.__new__(self._local_class)
        state = {k: v for k, v in self.__dict__.items() if k not in ("bin_mapper_", "dask_stats_")}
        local.__dict__.update(copy.deepcopy(state))
        return local

    def _check_dask_features(self, X):
        """The single-machine estimator's check of the feature count (and of a frame's column names), on the
        client when the call is made rather than in every block at compute time."""
        if isinstance(X, da.Array):
            if X.ndim != 2:
                raise ValueError(f"Expected 2D array, got {X.ndim}D dask array instead (shape={X.shape}).")
            if np.isnan(X.shape[1]):  # (columns of unknown size: the blocks check them)
                return
            meta = np.empty((0, int(X.shape[1])), X.dtype)
        else:
            meta = X._meta
        validate_data(self, X=meta, reset=False, skip_check_array=True)

    def _dask_predict(self, X, method):
        check_is_fitted(self)
        local = self.to_local()
        k = self.classes_.shape[0]
        # columns: K for probabilities, and for K > 2 classes' decision_function; none otherwise
        cols = k if method in ("predict_proba", "predict_log_proba") or (method == "decision_function" and k > 2) \
            else 0
        dtype = self.classes_.dtype if method == "predict" else np.dtype(np.float64)
        # contributions: a column per feature and the expected value (and a block of them per class for K > 2)
        contrib = (self.n_features_in_ + 1,) if k == 2 else (k, self.n_features_in_ + 1)
        self._check_dask_features(X)
        if isinstance(X, da.Array):
            if X.numblocks[1] > 1:
                X = X.rechunk({1: -1})
            if method == "predict_contrib":
                extra = {} if k == 2 else {"new_axis": 2}
                return X.map_blocks(predict_block, local, method, dtype=dtype,
                                    chunks=(X.chunks[0], *((c,) for c in contrib)),
                                    meta=np.empty((0, *contrib), dtype), **extra)
            if cols:
                return X.map_blocks(predict_block, local, method, dtype=dtype, chunks=(X.chunks[0], (cols,)),
                                    meta=np.empty((0, cols), dtype))
            return X.map_blocks(predict_block, local, method, dtype=dtype, drop_axis=1, meta=np.empty(0, dtype))
        model = dask.delayed(local, pure=True)
        block = dask.delayed(predict_block, pure=True)
        shape = (np.nan, *contrib) if method == "predict_contrib" else (np.nan, cols) if cols else (np.nan,)
        return da.concatenate([da.from_delayed(block(part, model, method), shape=shape, dtype=dtype)
                               for part in X.to_delayed()])

    def decision_function(self, X):
        """F(x) as the single-machine estimator; a lazy dask array for Dask input."""
        return self._dask_predict(X, "decision_function") if _is_dask(X) else super().decision_function(X)

    def predict(self, X):
        return self._dask_predict(X, "predict") if _is_dask(X) else super().predict(X)

    def predict_proba(self, X):
        return self._dask_predict(X, "predict_proba") if _is_dask(X) else super().predict_proba(X)

    def score(self, X, y, sample_weight=None):
        """Mean accuracy, as scikit-learn's; with Dask input the predictions, y and sample_weight are computed
        first (a dask DataFrame's predictions have chunks of unknown size, which scikit-learn cannot measure)."""
        if not (_is_dask(X) or _is_dask(y) or _is_dask(sample_weight)):
            return super().score(X, y, sample_weight)
        from sklearn.metrics import accuracy_score

        # (one compute each: Dask warns when one call mixes a frame's expressions with an array's graph)
        pred, y, sample_weight = (a.compute() if dask.is_dask_collection(a) else a
                                  for a in (self.predict(X), y, sample_weight))
        return accuracy_score(np.asarray(y), np.asarray(pred), sample_weight=sample_weight)

    def predict_log_proba(self, X):
        return self._dask_predict(X, "predict_log_proba") if _is_dask(X) else super().predict_log_proba(X)

    def predict_contrib(self, X):
        """Per-feature contributions as the single-machine estimator; a lazy dask array for Dask input, of shape
        (n_samples, n_features + 1), or (n_samples, K, n_features + 1) with K > 2 classes."""
        if not _is_dask(X):
            return super().predict_contrib(X)
        from .explain import check_cover

        check_is_fitted(self)
        check_cover(self)
        return self._dask_predict(X, "predict_contrib")

    def staged_decision_function(self, X):
        _not_dask_staged(X)
        return super().staged_decision_function(X)

    def _staged(self, X):  # (staged_predict and staged_predict_proba)
        _not_dask_staged(X)
        return super()._staged(X)

    def staged_score(self, X, y=None, sample_weight=None):
        _not_dask_staged(X, y, sample_weight)
        return super().staged_score(X, y, sample_weight)


def _not_dask_staged(*inputs):
    """TypeError for dask input to a staged method (they run on one machine, round by round)."""
    if any(_is_dask(x) for x in inputs):
        raise TypeError("staged_* methods take NumPy or pandas input; compute the rows you need first.")


def _dask_doc(base):
    return (f"""Dask version of :class:`fastboost.{base.__name__}`: the same model, fitted on
    row-partitioned data spread over a ``distributed`` cluster (see :mod:`fastboost.dask`).

    ``fit(X, y, sample_weight=None, eval_set=None, *, client=None, bin_mapper=None,
    worker_timeout=None)`` takes dask arrays / DataFrames (an eval_set too); prediction takes
    NumPy, pandas or Dask input; ``to_local()`` returns the plain {base.__name__}. Stumps and
    trees, two or more classes, constraints, feature and row sampling, validation sets and
    early stopping work as on one machine; categorical features and weight trimming are
    single-machine only. A fit survives a lost worker.

    The single-machine documentation follows.

    """ + (base.__doc__ or ""))


class DaskAdaBoostClassifier(_DaskBoostMixin, AdaBoostClassifier):
    __doc__ = _dask_doc(AdaBoostClassifier)


class DaskLazyBoostClassifier(_DaskBoostMixin, LazyBoostClassifier):
    __doc__ = _dask_doc(LazyBoostClassifier)


class DaskVadaBoostClassifier(_DaskBoostMixin, VadaBoostClassifier):
    __doc__ = _dask_doc(VadaBoostClassifier)


class DaskEBBoostClassifier(_DaskBoostMixin, EBBoostClassifier):
    __doc__ = _dask_doc(EBBoostClassifier)


class DaskSABoostClassifier(_DaskBoostMixin, SABoostClassifier):
    __doc__ = _dask_doc(SABoostClassifier)


class DaskQuadBoostClassifier(_DaskBoostMixin, QuadBoostClassifier):
    __doc__ = _dask_doc(QuadBoostClassifier) + """
    Each re-weighting pass (``reweight_every``, ``reweight_at_end``) costs one round trip to the
    workers per kept voter (the voter's correlation with the residuals is a global sum): about
    as much as one boosting round for each voter.
    """

    def _dask_reweight(self, shards, rounds, config, state, nodes=None):
        """One coordinate-descent pass over the voters ``rounds`` (trees: ``nodes``) (as reweight._reweight, on
        every worker's residuals); updates their alpha; returns sum_i p_i r_i**2 after the pass."""
        rule = RULES[self._algorithm]
        c = config[0]
        sums = np.zeros(1, SUMS_DTYPE)
        pending = None  # (voter, delta): r -= delta h, applied by the workers with the next call
        for j in range(rounds.shape[0]):
            voter = (np.ascontiguousarray(rounds[j:j + 1]), None if nodes is None else nodes[j:j + 1].copy())
            old = float(rounds[j]["alpha"])
            parts = shards.call("correlation", pending, voter)
            pending = None
            corr, eta = float(parts[0][0]), float(parts[0][1])
            for part in parts[1:]:
                corr += float(part[0])
                eta += float(part[1])
            cj = corr + old * eta
            sums[0] = (max(cj, 0.0), max(-cj, 0.0), 0.0, 0.0, 0.0, 0.0, eta, 0.0, np.inf)
            new = kept_weight(rule.step(sums[0], j + 1, c) if eta > 0.0 else 0.0, c)  # (as reweight's)
            if new != old:
                pending = (voter, new - old)
                rounds[j]["alpha"] = new
        parts = shards.call("finish_voters", pending)
        if state is not None:
            state[0]["penalty"] = sum(quad_penalty(a, c["lam"], c["penalty"]) for a in rounds["alpha"])
            if self._has_validation:  # as _reweight: the validation margins follow the new steps
                shards.call("revalidate", np.ascontiguousarray(rounds), nodes)
        risk = float(parts[0])
        for p in parts[1:]:
            risk += float(p)
        return risk

    def _between_rounds(self, fit, model):
        """QuadBoost's re-weighting pass on the workers' residuals (as the single-machine ``_between_rounds``)."""
        self._dask_reweight(fit.rounds.shards, model.rounds, fit.config, fit.state,
                            model.nodes if model.nodes.shape[0] else None)

    def _finish(self, fit, model):
        """Residuals of the kept voters, the final re-weighting pass, zero-weight voters dropped (as the
        single-machine ``_finish``)."""
        shards, config = fit.rounds.shards, fit.config
        c = config[0]
        rounds = np.ascontiguousarray(model.rounds)
        nodes = model.nodes if model.nodes.shape[0] else None
        shards.call("reset_residuals", rounds, nodes)
        if self.reweight_at_end and rounds.shape[0]:
            risk = self._dask_reweight(shards, rounds, config, None, nodes)
        else:
            risk = sum(shards.call("finish_voters", None))
        keep = rounds["alpha"] != 0.0
        rounds = rounds[keep]
        self.objective_ = float(risk + sum(quad_penalty(a, c["lam"], c["penalty"]) for a in rounds["alpha"]))
        return Model(rounds, model.nodes[keep] if nodes is not None else model.nodes)
