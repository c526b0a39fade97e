"""Scale out on Dask: the same boosting on rows spread over a ``distributed`` cluster.

``DaskAdaBoostClassifier``, ``DaskVadaBoostClassifier``, ``DaskEBBoostClassifier``,
``DaskLazyBoostClassifier``, ``DaskSABoostClassifier`` and ``DaskQuadBoostClassifier``
are the single-machine estimators of :mod:`fastboost` (same parameters, checks,
rules, round record, prediction) with a ``fit`` that takes row-partitioned
``dask.array`` / ``dask.dataframe`` X, y and sample weights and a
``distributed.Client`` (the current one by default). Binary decision stumps only:
trees (``max_depth > 1``, ``leaf="real"``, ``min_samples_leaf`` /
``min_weight_fraction_leaf``), more than two classes and validation sets are
single-machine features for now (``fit`` says so).

How a fit runs
--------------
1. The partitions of X, y and the sample weights are computed (persisted) where
   Dask puts them; one actor (:class:`fastboost._dask_worker.WorkerShard`) is
   created on each worker holding X partitions, with those partitions as
   arguments, so no row moves (y and the weights join X's partitions
   worker-to-worker if they live elsewhere). The actor checks them and returns
   per partition only counts, labels and the largest weight.
2. Binning: with at most 200 000 rows of positive weight, every such row is the
   sample, in row order, so the bin edges equal the single-machine estimator's;
   above that, each partition draws its share of a uniform sample of 200 000
   rows (shares from a multivariate hypergeometric draw seeded by
   ``random_state``): O(sample x features) bytes to the client, whatever the
   number of rows. The client fits a :class:`fastboost._binning.BinMapper` on it
   (or takes ``fit(..., bin_mapper=...)``), broadcasts it, and every worker maps
   its rows to uint8 codes and drops the raw X.
3. Every round is two round trips, each one call on every actor (actor calls go
   client <-> worker directly, not through the scheduler):

   a. ``histograms``: the previous round's weight update (``update_weights`` with
      the global W_I, W_J and alpha, so each worker renormalises by the global Z;
      or ``update_residuals``), then the rule's transform and the per-class
      histograms of the worker's rows; returns the histograms and the update's
      partial sums. The client adds the histograms in a fixed worker order (never
      the order of arrival) and chooses the stump with the compiled loop's own
      ``choose_stump``.
   b. ``apply``: ``apply_stump`` on the worker's rows; returns its
      (U_I, U_J, W_I, W_J). The client adds them, runs the rule's step and stop,
      and records the round; the previous round's cost is computed when the
      next call returns its update sums.

   Bytes per round: one histogram (features x bins x 2 float64; twice for
   EBBoost) per worker plus a few numbers, never O(rows). From
   ``_TREE_MIN_WORKERS`` (9) workers on, the histograms are summed up a tree of
   workers (fan-out 4, fixed order: each worker adds its children's sums in
   child order) and the client receives a single histogram per round.
4. QuadBoost's re-weighting pass is one round trip per kept voter (its
   correlation with the residuals, summed over workers; the residual update is
   fused into the next voter's call).

Summation order is the only difference from the single-machine fit: sums are
added per worker, then over workers, so they agree to rounding, and the model
is the same except where two stumps tie to within rounding.

A worker lost during ``fit`` makes it raise :class:`WorkerLostError` (the
workers' boosting state cannot be recomputed by Dask); the estimator is then
left unfitted, never with a partial model. The fitted estimator is a plain
fastboost estimator: ``predict`` & co. take NumPy / pandas input as the
single-machine ones do, and Dask input lazily (``map_blocks``); ``to_local()``
returns the equivalent single-machine estimator, which pickles and loads
without Dask installed.
"""
try:
    import dask
    import dask.array as da
    import distributed
    from distributed import wait
except ImportError as e:  # pragma: no cover - exercised by a subprocess test
    raise ImportError(
        "fastboost.dask needs Dask's distributed scheduler, an optional dependency of fastboost: "
        "pip install 'fastboost[dask]' (or pip install 'dask[array,dataframe,distributed]')."
    ) from e

import asyncio
import copy
import time
import uuid

import numpy as np
from dask.sizeof import sizeof
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from . import _validation as v
from ._algorithms import RULES, quad_penalty
from ._binning import SUBSAMPLE, BinMapper
from ._cache import sources_digest
from ._config import n_threads
from ._dask_worker import PartitionLostError, WorkerShard, predict_block
from ._driver import Model, Progress, grow_model, make_model
from ._kernels.loop import record_round
from ._kernels.split import choose_stump
from ._types import ACCEPT_STOP, CAT_WORDS, RAN_ALL, REJECT, STATE_DTYPE, STOPPED_BY_RULE, SUMS_DTYPE
from .estimators import (
    AdaBoostClassifier,
    EBBoostClassifier,
    LazyBoostClassifier,
    QuadBoostClassifier,
    SABoostClassifier,
    VadaBoostClassifier,
)

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


_TIMEOUTS = (TimeoutError, asyncio.TimeoutError)  # the same class from Python 3.11 on


class WorkerLostError(RuntimeError):
    """A Dask worker holding training rows was lost (or its state reset) during ``fit``; no model was made."""


# ----------------------------------------------------------------------------- input
def _is_dask_frame(a):
    return dask.is_dask_collection(a) and hasattr(a, "npartitions") and hasattr(a, "to_delayed")


def _is_dask(a):
    return isinstance(a, da.Array) or _is_dask_frame(a)


def _x_parts(X, name):
    """(delayed row partitions, row chunk sizes or None, an empty X for sklearn's feature checks)."""
    if isinstance(X, da.Array):
        if X.ndim != 2:
            raise ValueError(f"Expected 2D array, got {X.ndim}D dask array instead (shape={X.shape}).")
        if X.dtype.kind not in "biuf":
            raise TypeError(f"X must be numeric (bool, int or float), got dtype {X.dtype}.")
        if X.numblocks[1] > 1:  # row partitions only (a worker-to-worker rechunk, never through the client)
            X = X.rechunk({1: -1})
        return list(X.to_delayed()[:, 0]), X.chunks[0], np.empty((0, X.shape[1]), X.dtype)
    if _is_dask_frame(X):
        meta = X._meta
        if not v.is_dataframe(meta):
            raise ValueError("X must be 2-D: got a dask Series; use a dask DataFrame or a 2-D dask array.")
        bad = [str(c) for c, dt in zip(meta.columns, meta.dtypes) if not v._numeric_dtype(dt)]
        if bad:
            raise TypeError(f"X must contain only numeric columns; non-numeric columns: {bad[:10]}")
        return list(X.to_delayed()), None, meta
    raise TypeError(
        f"{name}.fit takes X as a row-partitioned dask array or dask DataFrame, got {type(X).__name__}. Wrap "
        "NumPy data with dask.array.from_array(X, chunks=(rows_per_chunk, -1)), or use the single-machine "
        "estimator of fastboost.")


def _vector_parts(a, what, n_parts, row_chunks):
    """Delayed partitions of y / sample_weight, aligned with X's row partitions."""
    if isinstance(a, da.Array):
        if a.ndim not in (1, 2) or (a.ndim == 2 and a.shape[1] != 1):
            raise ValueError(f"{what} must be 1-D, got a dask array of shape {a.shape}.")
        if a.ndim == 2 and a.numblocks[1] > 1:
            a = a.rechunk({1: -1})
        if row_chunks is not None and a.chunks[0] != row_chunks:
            known = not (np.isnan(a.shape[0]) or any(np.isnan(c) for c in row_chunks))
            if known and a.shape[0] != sum(row_chunks):
                raise ValueError(f"X and {what} have inconsistent numbers of samples: X has {sum(row_chunks)}, "
                                 f"{what} has {a.shape[0]}.")
            if known:
                a = a.rechunk({0: row_chunks})  # worker-to-worker
            else:
                raise ValueError(f"{what} is chunked differently from X and a chunk size is unknown: call "
                                 f"{what}.compute_chunk_sizes() or give it X's row chunks.")
        parts = list(a.to_delayed().ravel()) if a.ndim == 1 else list(a.to_delayed()[:, 0])
    elif _is_dask_frame(a):
        parts = list(a.to_delayed())
    else:
        raise TypeError(f"With Dask input, {what} must be a dask array, Series or one-column DataFrame "
                        f"partitioned like X, got {type(a).__name__}.")
    if len(parts) != n_parts:
        raise ValueError(f"X has {n_parts} row partitions and {what} has {len(parts)}: partition {what} like X "
                         f"(a dask array: {what}.rechunk(X.chunks[0]); dask DataFrames: the same partitions).")
    return parts


# ----------------------------------------------------------------------------- the workers
class _Shards:
    """The fit's actors, one per worker, in a fixed order (by their first partition); every call goes to all."""

    def __init__(self, client, name):
        self.client = client
        self.name = name
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

    def start(self, xparts, yparts, swparts, algorithm, n_jobs):
        """Persist the partitions where Dask computes them; one actor per worker, created next to its partitions."""
        n = len(xparts)
        futures = self.client.compute(xparts + yparts + (swparts or []))
        self._inputs = futures
        wait(futures)
        for f in futures:
            if f.status != "finished":
                f.result()  # raises the partition's own error (nothing is transferred)
        xf, yf, swf = futures[:n], futures[n:2 * n], futures[2 * n:] or [None] * n
        who_has = self.client.who_has(xf)
        groups = {}
        for i, f in enumerate(xf):
            holders = sorted(who_has.get(f.key, ()))
            if not holders:
                raise WorkerLostError(f"{self.name}: partition {i} of X is on no worker (lost while loading).")
            groups.setdefault(holders[0], []).append(i)
        self.addresses = sorted(groups, key=lambda a: groups[a][0])
        self.part_ids = [groups[a] for a in self.addresses]
        for j, (addr, ids) in enumerate(zip(self.addresses, self.part_ids)):
            self._actor_futures.append(self.client.submit(
                WorkerShard, self.token, self.name, algorithm, n_jobs, ids, [xf[i] for i in ids],
                [yf[i] for i in ids], [swf[i] for i in ids], workers=[addr], allow_other_workers=False,
                actor=True, pure=False, key=f"fastboost-shard-{self.token}-{j}"))
        self.actors = [self._wait(f, j, lambda f: f.result(timeout=_POLL_SECONDS))
                       for j, f in enumerate(self._actor_futures)]
        n_shards = len(self.actors)
        self.tree = n_shards >= _TREE_MIN_WORKERS
        if self.tree:  # heap layout: shard j's children are j * F + 1 .. j * F + F
            kids = [range(j * _TREE_FANOUT + 1, min(n_shards, (j + 1) * _TREE_FANOUT + 1)) for j in range(n_shards)]
            self.call("set_children", each=[([self.actors[c] for c in kid],) for kid in kids])

    def histograms(self, update):
        """The round's first round trip: (every shard's update results, summed hist, summed histq or None)."""
        if self.tree:
            return self.call("histograms", update, only=[0])[0]
        res = self.call("histograms", update)
        updates = [u for r in res for u in r[0]]
        histq = _ordered_sum([r[2] for r in res]) if res[0][2] is not None else None
        return updates, _ordered_sum([r[1] for r in res]), histq

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

    def _lost(self, j, error):
        """The error for a lost worker: the one named by the error (histogram tree), or that left the cluster
        if the scheduler knows it already, else j."""
        if getattr(error, "address", None) in self.addresses:
            return self._lost_error(self.addresses.index(error.address), error)
        try:
            alive = self.client.nthreads(self.addresses)
            j = next((i for i, a in enumerate(self.addresses) if a not in alive), j)
        except Exception:  # noqa: BLE001, S110 - the scheduler may be unreachable too; keep j
            pass
        return self._lost_error(j, error)

    def _lost_error(self, j, error):
        parts = self.part_ids[j]
        return WorkerLostError(
            f"{self.name}: the Dask worker {self.addresses[j]} holding row partitions {parts} was lost during fit "
            f"({type(error).__name__}: {error}). Its binned rows and boosting weights lived only there, so the fit "
            "cannot go on: no model was produced. Restart the fit.")

    def _wait(self, fut, j, get):
        """get(fut) polled every _POLL_SECONDS; a worker that left the cluster ends the wait with WorkerLostError."""
        while True:
            try:
                return get(fut)
            except _TIMEOUTS:  # still waiting: is every worker of the fit still there?
                alive = self.client.nthreads(self.addresses)
                for i, (addr, actor_future) in enumerate(zip(self.addresses, self._actor_futures)):
                    if actor_future.status not in ("pending", "finished"):
                        raise self._lost(i, RuntimeError(f"its actor's status is {actor_future.status!r}")) from None
                    if addr not in alive:
                        raise self._lost(i, RuntimeError("the worker left the cluster")) from None
            except (PartitionLostError, OSError, distributed.client.FutureCancelledError,
                    distributed.scheduler.KilledWorker) as e:
                raise self._lost(j, e) from e

    def call(self, method, *args, each=None, only=None):
        """One round trip: ``method(seq, *args[, *each[j]])`` on every actor (or the actors ``only``, which
        forward it to the others: the histogram tree); results in actor order."""
        self.seq += 1
        futures = []
        for j in range(len(self.actors)) if only is None else only:
            extra = each[j] if each is not None else ()
            try:
                futures.append((j, getattr(self.actors[j], method)(self.seq, *args, *extra)))
            except RuntimeError as e:  # "Worker holding Actor was lost"
                raise self._lost(j, e) from e
        out = [self._wait(f, j, lambda f: f.result(timeout=_POLL_SECONDS)) for j, f in futures]
        self.round_trips += 1
        self.bytes_received += sum(sizeof(r) for r in out)
        return out


def _ordered_sum(arrays):
    """Sum in the given (fixed) order: the result never depends on which worker answered first."""
    total = np.array(arrays[0], dtype=np.float64, copy=True)
    for a in arrays[1:]:
        total += a
    return total


def _choose_stump(hist, histq, n_value_bins, missing_code, thresholds, criterion, lam, feature_rank,
                  fvalue, fbin, fmissing_left):
    """The stump of a round from the summed histograms: the loop's own compiled ``choose_stump``.

    Returns (f, k, missing_left, left, right, threshold, Q_I, Q_J) as Python scalars.
    """
    numeric = np.zeros(n_value_bins.shape[0], np.uint8)  # (categorical features are not taken on Dask)
    f, k, ml, left, right, threshold, qi, qj, _ = choose_stump(hist, histq, n_value_bins, numeric, missing_code,
                                                               thresholds, criterion, lam, feature_rank, fvalue,
                                                               fbin, fmissing_left, np.zeros(CAT_WORDS, np.uint64))
    return int(f), int(k), int(ml), int(left), int(right), float(threshold), float(qi), float(qj)


# ----------------------------------------------------------------------------- the estimators
class _DaskBoostMixin:
    """``fit`` on Dask collections; everything else is the single-machine estimator's."""

    #: called on the client after every round as ``_round_callback(rounds_done, worker_addresses)`` (tests, benchmarks)
    _round_callback = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._local_class = next(c for c in cls.__mro__
                                if c.__module__ == "fastboost.estimators" and not c.__name__.startswith("_"))

    def fit(self, X, y, sample_weight=None, eval_set=None, *, client=None, bin_mapper=None):
        """Fit on row-partitioned Dask data; the result is the single-machine model up to summation order.

        X: dask array (n_samples, n_features) (chunked along rows; column chunks are merged) or dask
        DataFrame of numeric columns. y: dask array, Series or one-column DataFrame with X's row
        partitions. sample_weight: None or as y. client: a ``distributed.Client`` (default: the
        current one). bin_mapper: a fitted :class:`fastboost._binning.BinMapper` (with this
        estimator's ``max_bins``) to use its bin edges instead of computing them.
        Binary stumps only: tree parameters (``max_depth > 1`` ...), more than two classes and
        validation sets (``eval_set``, ``validation_fraction``, ``n_iter_no_change``) raise.
        """
        self._check_params()
        name = type(self).__name__
        if eval_set is not None or self.validation_fraction is not None or self.n_iter_no_change is not None:
            raise NotImplementedError(f"{name} does not support early stopping yet (eval_set, validation_fraction, "
                                      "n_iter_no_change): fit without them.")
        if hasattr(self, "_tree_depth") and self._tree_depth(2):
            raise NotImplementedError(f"{name} fits decision stumps only (max_depth=1, discrete leaves, "
                                      "min_samples_leaf=1, min_weight_fraction_leaf=0); trees are single-machine.")
        if y is None:
            raise ValueError(f"{name} requires y to be passed, but the target y is None.")
        if self.class_weight is not None:
            raise NotImplementedError(f"{name} does not take class_weight yet: multiply the class weights into "
                                      "sample_weight.")
        explicit = not (self.categorical_features is None or isinstance(self.categorical_features, str))
        if explicit or any(getattr(dt, "name", None) == "category" or getattr(dt, "kind", "f") in "OUS"
                           for dt in getattr(X, "dtypes", ())):
            raise NotImplementedError(f"{name} takes numeric features only: categorical features are "
                                      "single-machine (encode them as numbers, or fit on one machine).")
        client = distributed.get_client() if client is None else client
        xparts, row_chunks, meta = _x_parts(X, name)
        yparts = _vector_parts(y, "y", len(xparts), row_chunks)
        swparts = None if sample_weight is None else _vector_parts(sample_weight, "sample_weight", len(xparts),
                                                                   row_chunks)
        n_features = meta.shape[1]
        if bin_mapper is not None:
            if not hasattr(bin_mapper, "thresholds_"):
                raise ValueError("bin_mapper must be a fitted fastboost._binning.BinMapper.")
            if bin_mapper.max_bins != self.max_bins or bin_mapper.thresholds_.shape[0] != n_features:
                raise ValueError(f"bin_mapper has max_bins={bin_mapper.max_bins} and "
                                 f"{bin_mapper.thresholds_.shape[0]} features; this fit needs max_bins="
                                 f"{self.max_bins} and {n_features}.")
        rule = RULES[self._algorithm]
        shards = _Shards(client, name)
        t0 = time.perf_counter()
        stats = {}
        try:
            with n_threads(self.n_jobs):
                shards.start(xparts, yparts, swparts, self._algorithm, self.n_jobs)
                t_load = time.perf_counter()
                classes, sw_max, n_pos_parts = self._dask_describe(shards, n_features)
                mapper, q_sum = self._dask_bin_edges(shards, classes, sw_max, n_pos_parts, bin_mapper)
                t_edges = time.perf_counter()
                # all input checked: only now drop any earlier fit's state (a fit that fails from here on
                # leaves the estimator unfitted, never with a partial model)
                for attr in [a for a in vars(self) if a.endswith("_") and not a.startswith("_")]:
                    delattr(self, attr)
                config = self._config(rule, mapper, 2, n_features, 1)
                n_nonzero = sum(shards.call("bin", mapper, q_sum, config))
                shards.release_inputs()
                t1 = time.perf_counter()
                bytes_before = shards.bytes_received
                model = self._dask_boost(shards, mapper, n_nonzero, config)
                t2 = time.perf_counter()
            stats = {
                "workers": list(shards.addresses), "partitions": [list(p) for p in shards.part_ids],
                "load_time": t_load - t0, "edges_time": t_edges - t_load, "transform_time": t1 - t_edges,
                "boost_time": t2 - t1, "round_trips": shards.round_trips,
                "bytes_received": shards.bytes_received,
                "bytes_received_binning": bytes_before,
            }
        finally:
            shards.close()
        validate_data(self, X=meta, reset=True, skip_check_array=True)
        self.classes_ = classes
        self.bin_mapper_ = mapper
        self.bin_time_ = t1 - t0
        self.fit_time_ = time.perf_counter() - t0
        self.dask_stats_ = stats
        self._set_rounds(model)
        return self

    # ------------------------------------------------------------------ loading and binning
    def _dask_describe(self, shards, n_features):
        """Global checks from the per-partition summaries: (classes, largest weight, positive rows per partition)."""
        name = type(self).__name__
        described = shards.call("describe")
        digest = sources_digest()
        for j, (worker_digest, _) in enumerate(described):
            if worker_digest != digest:
                raise RuntimeError(f"{name}: the fastboost kernels on worker {shards.addresses[j]} differ from the "
                                   "client's: install the same fastboost version on the client and every worker.")
        parts = sorted((p for _, shard in described for p in shard), key=lambda p: p[0])
        for part, _, d, *_ in parts:
            if d != n_features:
                raise ValueError(f"X has {n_features} features but its partition {part} has {d}.")
        n_samples = sum(p[1] for p in parts)
        if n_samples == 0:
            raise ValueError(f"Found array with 0 sample(s) (shape=(0, {n_features})) while a minimum of 1 is "
                             "required.")
        classes = np.unique(np.concatenate([p[3] for p in parts if p[1]]))
        if classes.shape[0] < 2:
            raise ValueError(f"{name} needs samples of at least 2 classes in y; got 1 class ({v.plain(classes[0])}).")
        if classes.shape[0] > 2:
            raise ValueError(
                "Only binary classification is supported on Dask. The type of the target is multiclass: "
                f"y has {classes.shape[0]} classes, and {name} takes two.")
        sw_max = max(p[4] for p in parts)
        if not sw_max > 0:
            raise ValueError("sample_weight sums to zero: at least one sample needs a positive weight.")
        return classes, sw_max, [p[5] for p in parts]

    def _dask_bin_edges(self, shards, classes, sw_max, n_pos_parts, bin_mapper):
        """The binning sample (all positive rows up to _BIN_SUBSAMPLE, else a uniform sample) and its BinMapper."""
        n_pos = sum(n_pos_parts)
        seed = 0
        if bin_mapper is not None:
            sizes = [0] * len(n_pos_parts)
        elif n_pos <= _BIN_SUBSAMPLE:
            sizes = [None] * len(n_pos_parts)
        else:  # seeded as BinMapper's own subsample
            seed = int(check_random_state(self.random_state).randint(np.iinfo(np.int32).max))
            sizes = np.random.default_rng(seed).multivariate_hypergeometric(
                np.asarray(n_pos_parts, dtype=np.int64), _BIN_SUBSAMPLE).tolist()
        each = [([sizes[i] for i in ids], seed) for ids in shards.part_ids]
        parts = sorted((p for shard in shards.call("prepare", classes, sw_max, each=each) for p in shard),
                       key=lambda p: p[0])
        q_sum = float(parts[0][1])
        for p in parts[1:]:
            q_sum += float(p[1])
        if bin_mapper is not None:
            return bin_mapper, q_sum
        sample = np.concatenate([p[2] for p in parts])
        weights = np.concatenate([p[3] for p in parts]) / q_sum  # = p of the sampled rows
        return BinMapper(self.max_bins, random_state=self.random_state).fit(sample, weights), q_sum

    # ------------------------------------------------------------------ boosting (the loop's rules, round by round)
    @staticmethod
    def _dask_cost(rule, state, alpha, parts, config):
        """The rule's log cost after a round from the workers' update results (added in worker order)."""
        if rule.additive:  # (risk, 0) per worker
            a = float(parts[0][0])
            for p in parts[1:]:
                a += float(p[0])
            b = 0.0
        else:  # (Z, s2) per worker; Z is the same global normaliser on every worker
            a = float(parts[0][0])
            b = float(parts[0][1])
            for p in parts[1:]:
                b += float(p[1])
        return rule.cost(state[0], alpha, a, b, config[0])

    def _progress(self, progress, done, model):
        if progress and (progress.due(done) or done == self.n_estimators):
            progress.report(done, np.exp(model.rounds[done - 1]["log_cost"]))

    def _dask_boost(self, shards, mapper, n_nonzero, config):
        """The rounds, two round trips each, with the compiled loop's rules (step, stop, cost, record);
        returns the fitted records as the loop fills them."""
        rule = RULES[self._algorithm]
        self._n_classes = 2
        c = config[0]
        missing_code = mapper.missing_code
        n_value_bins = np.ascontiguousarray(mapper.n_value_bins_, dtype=np.int64)
        thresholds = mapper.thresholds_
        n_features = thresholds.shape[0]
        state = np.zeros(1, STATE_DTYPE)
        state[0]["n"] = n_nonzero
        state[0]["best_val"] = np.inf
        self.initial_cost_ = float(np.exp(rule.cost(state.copy()[0], 0.0, 1.0, 1.0, c)))
        T = self.n_estimators
        model = make_model(min(T, _CAPACITY), 0)
        fvalue = np.empty(n_features, np.float64)
        fbin = np.empty(n_features, np.int64)
        fmissing_left = np.empty(n_features, np.int64)
        no_histq = np.zeros((n_features, 1, 2), np.float64)
        sums = np.zeros(1, SUMS_DTYPE)
        every = self._reweight_every()
        progress = Progress(type(self).__name__, T, self.verbose)
        pending = None  # (alpha, W_I, W_J) of the last kept round, applied by the workers' next call
        done = 0
        why = RAN_ALL
        for t in range(T):
            updates, hist, histq = shards.histograms(pending)
            if pending is not None:
                model.rounds[t - 1]["log_cost"] = self._dask_cost(rule, state, pending[0], updates, config)
                self._progress(progress, t, model)
                pending = None
            if histq is None:
                histq = no_histq
            f, k, ml, left, right, threshold, qi, qj = _choose_stump(
                hist, histq, n_value_bins, missing_code, thresholds, int(c["criterion"]), float(c["lam"]),
                int(c["feature_rank"]), fvalue, fbin, fmissing_left)
            ui, uj, wi, wj = _ordered_sum(shards.call("apply", f, k, ml, left, right))
            sums[0] = (ui, uj, wi, wj, qi, qj, 1.0, 0.0)
            alpha = rule.step(sums[0], t + 1, c) * c["learning_rate"]  # as the compiled loop
            decision = rule.stop(alpha, sums[0], t + 1, c)
            if decision == REJECT:
                why = STOPPED_BY_RULE
                break
            if t >= model.rounds.shape[0]:  # grow the record (a huge n_estimators costs nothing up front)
                model = grow_model(model, min(T, 2 * model.rounds.shape[0]))
            r = model.rounds[t]
            r["feature"], r["bin"], r["missing_left"], r["left"], r["right"], r["threshold"] = (
                f, k, ml, left, right, threshold)
            record_round(model.rounds, t, alpha, sums, bool(rule.additive))
            pending = (alpha, float(wi), float(wj))
            done = t + 1
            if decision == ACCEPT_STOP:
                why = STOPPED_BY_RULE
                break
            if every and done % every == 0 and done < T:
                model.rounds[t]["log_cost"] = self._dask_cost(rule, state, alpha, shards.call("update", pending),
                                                              config)
                pending = None
                self._dask_reweight(shards, model.rounds[:done], config, state)
            if self._round_callback is not None:
                self._round_callback(done, shards.addresses)
        if pending is not None:
            model.rounds[done - 1]["log_cost"] = self._dask_cost(rule, state, pending[0],
                                                                 shards.call("update", pending), config)
            self._progress(progress, done, model)
        self.stopped_early_ = False
        self.stopped_by_rule_ = why == STOPPED_BY_RULE
        progress.finish(why, done)
        return self._dask_finish(shards, config, Model(model.rounds[:done].copy(), model.nodes))

    def _dask_finish(self, shards, config, model):
        """Hook after the rounds (QuadBoost re-weights its voters here), as ``_finish``."""
        return model

    # ------------------------------------------------------------------ prediction
    def to_local(self):
        """The fitted model as the single-machine estimator (same class without Dask; pickles without Dask)."""
        check_is_fitted(self)
        local = self._local_class.__new__(self._local_class)
        state = {k: v for k, v in self.__dict__.items() if k not in ("bin_mapper_", "dask_stats_")}
        local.__dict__.update(copy.deepcopy(state))
        return local

    def _dask_predict(self, X, method):
        check_is_fitted(self)
        local = self.to_local()
        two = method in ("predict_proba", "predict_log_proba")
        dtype = self.classes_.dtype if method == "predict" else np.dtype(np.float64)
        if isinstance(X, da.Array):
            if X.ndim != 2:
                raise ValueError(f"Expected 2D array, got {X.ndim}D dask array instead (shape={X.shape}).")
            if X.numblocks[1] > 1:
                X = X.rechunk({1: -1})
            if two:
                return X.map_blocks(predict_block, local, method, dtype=dtype, chunks=(X.chunks[0], (2,)),
                                    meta=np.empty((0, 2), dtype))
            return X.map_blocks(predict_block, local, method, dtype=dtype, drop_axis=1, meta=np.empty(0, dtype))
        model = dask.delayed(local, pure=True)
        block = dask.delayed(predict_block, pure=True)
        shape = (np.nan, 2) if two else (np.nan,)
        return da.concatenate([da.from_delayed(block(part, model, method), shape=shape, dtype=dtype)
                               for part in X.to_delayed()])

    def decision_function(self, X):
        """F(x) as the single-machine estimator; a lazy dask array for Dask input."""
        return self._dask_predict(X, "decision_function") if _is_dask(X) else super().decision_function(X)

    def predict(self, X):
        return self._dask_predict(X, "predict") if _is_dask(X) else super().predict(X)

    def predict_proba(self, X):
        return self._dask_predict(X, "predict_proba") if _is_dask(X) else super().predict_proba(X)

    def predict_log_proba(self, X):
        return self._dask_predict(X, "predict_log_proba") if _is_dask(X) else super().predict_log_proba(X)

    def staged_decision_function(self, X):
        if _is_dask(X):
            raise TypeError("staged_* methods take NumPy or pandas input; compute the rows you need first.")
        return super().staged_decision_function(X)


def _dask_doc(base):
    return (f"""Dask version of :class:`fastboost.{base.__name__}`: the same model, fitted on
    row-partitioned data spread over a ``distributed`` cluster (see :mod:`fastboost.dask`).

    ``fit(X, y, sample_weight=None, *, client=None, bin_mapper=None)`` takes dask arrays /
    DataFrames; prediction takes NumPy, pandas or Dask input; ``to_local()`` returns the
    plain {base.__name__}. Binary decision stumps only: trees (max_depth > 1 and the other
    tree parameters), more than two classes and validation sets / early stopping are
    single-machine only for now.

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

    def _dask_reweight(self, shards, rounds, config, state):
        """One coordinate-descent pass over the voters ``rounds`` (as reweight._reweight, on every worker's
        residuals); updates their alpha; returns sum_i p_i r_i**2 after the pass."""
        rule = RULES[self._algorithm]
        c = config[0]
        sums = np.zeros(1, SUMS_DTYPE)
        pending = None  # (voter, delta): r -= delta h, applied by the workers with the next call
        for j in range(rounds.shape[0]):
            voter = np.ascontiguousarray(rounds[j:j + 1])
            old = float(rounds[j]["alpha"])
            parts = shards.call("correlation", pending, voter)
            pending = None
            corr, eta = float(parts[0][0]), float(parts[0][1])
            for part in parts[1:]:
                corr += float(part[0])
                eta += float(part[1])
            cj = corr + old * eta
            sums[0] = (max(cj, 0.0), max(-cj, 0.0), 0.0, 0.0, 0.0, 0.0, eta, 0.0)
            new = rule.step(sums[0], j + 1, c) if eta > 0.0 else 0.0
            if new != old:
                pending = (voter, new - old)
                rounds[j]["alpha"] = new
        parts = shards.call("finish_voters", pending)
        if state is not None:
            state[0]["penalty"] = sum(quad_penalty(a, c["lam"], c["penalty"]) for a in rounds["alpha"])
        risk = float(parts[0])
        for p in parts[1:]:
            risk += float(p)
        return risk

    def _dask_finish(self, shards, config, model):
        """Residuals of the kept voters, the final re-weighting pass, zero-weight voters dropped (as _finish)."""
        c = config[0]
        rounds = np.ascontiguousarray(model.rounds)
        shards.call("reset_residuals", rounds)
        if self.reweight_at_end and rounds.shape[0]:
            risk = self._dask_reweight(shards, rounds, config, None)
        else:
            risk = sum(shards.call("finish_voters", None))
        rounds = rounds[rounds["alpha"] != 0.0]
        self.objective_ = float(risk + sum(quad_penalty(a, c["lam"], c["penalty"]) for a in rounds["alpha"]))
        return Model(rounds, model.nodes)
