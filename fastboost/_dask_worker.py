"""Worker side of :mod:`fastboost.dask`: one actor per Dask worker holds that worker's rows.

A :class:`WorkerShard` is created (as a ``distributed`` actor) on the worker that
already holds a set of row partitions of X, y and the sample weights; it keeps
them, in partition order, as one block of rows and from then on owns everything
that is O(rows): the uint8 codes (feature-major), the class indices y, the
sample-weight distribution p, the boosting weights w (or QuadBoost's residuals),
the learner weights u (and q, ylab) and y*h. The client never sees any of it:
every method returns O(features x bins) at most (histograms), usually a few
floats. The per-round methods call the same compiled kernels, in the same order,
as the single-machine loop ``fastboost._kernels.loop._boost``.

Every call carries a sequence number; a shard that did not see the previous call
(a worker that was lost and restarted, an actor re-created by the scheduler)
raises :class:`PartitionLostError` instead of computing on state it does not
have, so a lost worker can never yield a silently wrong model.

This module imports no Dask: it runs wherever fastboost is installed.
"""
import asyncio
import contextlib
import threading
from collections import namedtuple

import numpy as np

from . import _validation as v
from ._algorithms import RULES
from ._binning import sample_keys
from ._cache import sources_digest
from ._config import n_threads, resolve_n_jobs
from ._driver import is_mh, make_model, make_workspace, pick_learner
from ._kernels.histogram import (
    build_histograms,
    build_histograms_q,
    build_histograms_q_rows,
    build_histograms_rows,
    n_feature_groups,
)
from ._kernels.learners import no_validation
from ._kernels.reweight import add_voter, voter_correlation
from ._kernels.sampling import STREAM_BOOT, sample_rows, unit_draws
from ._kernels.tree import rows_histograms, split_level_rows, tree_leaves_all_rows, tree_leaves_rows
from ._kernels.update import apply_stump, correct_wrong_sums
from ._types import X_BINNED_DTYPE, Y_DTYPE, Model, TrainData, TreeRows, ValidData
from .explain import cover_parts, ordered_sum

_NO_NODES = make_model(0, 0).nodes  # stump voters: the re-weighting kernels' empty tree record


#: One compiled kernel call at a time per worker process: numba's ``workqueue`` threading layer (the one it
#: falls back to without OpenMP or TBB) aborts the process when parallel kernels start from two threads at
#: once, and a Dask worker runs tasks (and actors) on several threads.
KERNEL_LOCK = threading.RLock()


def threading_layer():
    """numba's threading layer in this process (after a first parallel kernel), or "not started"."""
    import numba

    try:
        return numba.threading_layer()
    except ValueError:
        return "not started"


#: Seconds between checks that a child of the histogram tree is still in the cluster.
POLL_SECONDS = 1.0


#: The previous round as the workers apply it: its step alpha, the global W_I and W_J, its record
#: (ROUND_DTYPE[1]) and, for trees, its nodes (NODE_DTYPE[max_nodes]), the leaves' global sums of w by
#: class (confidence-rated leaves' Z) and the update's per-leaf factors (least-squares leaves' values).
#: apply: a stump whose sums the client took from the histograms; the workers compute its outputs
#: (apply_stump) before the update, so the round needs no call of its own.
RoundUpdate = namedtuple("RoundUpdate", ["alpha", "w_correct", "w_wrong", "round", "tree", "leaf_w", "factor",
                                         "apply"], defaults=[False])


#: What a round's learner reads (None in a call: every feature and row): ``t`` the round; ``feats`` its features
#: (int64[k], increasing; None: every one); ``rows`` whether its rows are drawn (``subsample`` / ``bootstrap``);
#: bootstrap's ``bounds`` (float64[n_partitions, 2], each training partition's stretch [low, high) of the
#: cumulative sums of the learner's weights, in partition order; None without bootstrap), ``total`` (their sum)
#: and ``n_draws`` (see ``draw_shard_rows``).
RoundDraw = namedtuple("RoundDraw", ["t", "feats", "rows", "bounds", "total", "n_draws"],
                       defaults=[None, False, None, 0.0, 0])


class PartitionLostError(RuntimeError):
    """A worker's boosting state is not what the client expects (lost worker, re-created actor)."""


def _as_1d(a, what, part, n_rows):
    """A partition of y / sample_weight as a 1-D array of n_rows entries."""
    if v.is_dataframe(a):
        if a.shape[1] != 1:
            raise ValueError(f"{what} must be 1-D; partition {part} has {a.shape[1]} columns.")
        a = a.iloc[:, 0]
    a = np.asarray(a)
    if a.ndim == 2 and a.shape[1] == 1:
        a = a[:, 0]
    if a.ndim != 1:
        raise ValueError(f"{what} must be 1-D; partition {part} has shape {a.shape}.")
    if a.shape[0] != n_rows:
        raise ValueError(f"X and {what} are partitioned differently: partition {part} of X has {n_rows} rows and "
                         f"that of {what} {a.shape[0]}. Give {what} the same row chunks / partitions as X.")
    return a


def _check_weights(sw, part):
    if sw.dtype.kind not in "biuf":
        raise TypeError(f"sample_weight must be numeric, got dtype {sw.dtype}.")
    sw = sw.astype(np.float64)
    if not np.all(np.isfinite(sw)):
        raise ValueError(f"sample_weight contains NaN or infinity (partition {part}).")
    if np.any(sw < 0):
        raise ValueError(f"sample_weight must be non-negative; negative weights found (partition {part}).")
    return sw


def _checked_partition(X, y, sw, part, name, what):
    """One partition of X, y and the sample weights (None: ones), checked as the single-machine fit checks
    them; ``what`` prefixes the names in messages ("eval_set's ")."""
    if not v.is_dataframe(X):
        X = np.asarray(X) if not isinstance(X, np.ndarray) else X
    if len(X.shape) != 2:
        raise ValueError(f"{what}X must be 2-D; partition {part} has shape {X.shape}.")
    n = X.shape[0]
    if n:
        X = v.check_X(X, name)
    y = _as_1d(y, f"{what}y", part, n)
    if n:
        y = v.check_y(y, n, name)
    sw = np.ones(n) if sw is None else _check_weights(_as_1d(sw, f"{what}sample_weight", part, n), part)
    return X, y, sw


def _take(X, rows):
    """Rows of a partition (a boolean mask) as the same kind of object."""
    return X.iloc[np.flatnonzero(rows)] if v.is_dataframe(X) else X[rows]


def _held_out(seed, part, n, fraction):
    """validation_fraction on Dask: the rows of partition ``part`` held out for validation, drawn from a
    generator seeded by (seed, part): the same rows wherever the partition is and however many workers."""
    return np.random.default_rng([seed, part, 0x5EED]).random(n) < fraction


def _class_stats(y, sw):
    """(labels, rows of each, the largest sample weight of each) (class_weight scales each class's weights)."""
    labels, inv, counts = np.unique(y, return_inverse=True, return_counts=True)
    top = np.zeros(labels.shape[0])
    np.maximum.at(top, inv, sw)
    return labels, counts, top


def _sample_rows(X, rows):
    """Rows of one partition for the binning sample: X's own dtype for arrays, float64 for DataFrames."""
    if v.is_dataframe(X):
        return X.iloc[rows].to_numpy(dtype=np.float64, na_value=np.nan)
    return np.asarray(X[rows])


class WorkerShard:
    """The rows of the partitions ``part_ids`` (in that order) and their boosting state, on one worker.

    Created by the client with the partitions' futures as arguments, so Dask runs the
    constructor where the data already is; method results go straight back to the
    client (actor calls do not pass through the scheduler).
    """

    def __init__(self, token, name, algorithm, n_jobs, part_ids, X_parts, y_parts, sw_parts, val_ids=(),
                 Xv_parts=(), yv_parts=(), swv_parts=(), val_fraction=None, val_seed=0, shard_index=0):
        self.token = token
        self.name = name
        self.rule = RULES[algorithm]
        if n_jobs is None:
            try:
                from distributed import get_worker

                worker = get_worker()
                n_jobs = getattr(worker, "state", worker).nthreads
            except (ImportError, ValueError):
                n_jobs = None
        self.n_jobs = resolve_n_jobs(n_jobs)
        self.part_ids = list(part_ids)
        self._X = list(X_parts)
        self._y = list(y_parts)
        self._sw = list(sw_parts)
        self._cw = [None] * len(self._sw)
        self._seq = 0
        self.children = []
        # validation rows: eval_set partitions val_ids, or a seeded share val_fraction of every training partition
        self.val_ids = list(val_ids)
        self._Xv = list(Xv_parts)
        self._yv = list(yv_parts)
        self._swv = list(swv_parts)
        self.val_fraction = val_fraction
        self.val_seed = val_seed
        self.valid = None
        self.shard_index = shard_index  # this shard's place in the client's order (its per-shard call arguments)
        self._replaying = False  # rebuilding the state from the journal: the histograms are not built

    @contextlib.contextmanager
    def _kernels(self):
        """Run compiled kernels: this fit's thread count, one kernel call at a time in the process."""
        with KERNEL_LOCK, n_threads(self.n_jobs):
            yield

    # ------------------------------------------------------------------ call bookkeeping
    def _enter(self, seq):
        if seq != self._seq + 1:
            raise PartitionLostError(
                f"fastboost.dask fit {self.token}: partitions {self.part_ids} expected call {self._seq + 1} but got "
                f"{seq}: this worker's boosting state was lost (worker restarted or actor re-created).")
        self._seq = seq

    def replay(self, journal):
        """Rebuild this shard's state after its worker was lost: run every call of the fit so far, in order
        (calls 1 .. len(journal)), without building the histograms the client already summed, except the last
        tree's: a tree's level takes the larger child's histograms as its parent's less the smaller child's, so
        a fit that goes on within that tree needs them. The same rows and calls give the same state, bit for
        bit."""
        last_root = max((i for i, entry in enumerate(journal) if entry[0] == "tree_root"), default=len(journal))
        saved_children, self.children = self.children, []
        try:
            for seq, (method, args, each, kwargs) in enumerate(journal, start=1):
                self._replaying = seq - 1 < last_root
                extra = each[self.shard_index] if each is not None else ()
                if method == "set_children":
                    self._enter(seq)
                    continue
                getattr(self, method)(seq, *args, *extra, **kwargs)
        finally:
            self._replaying = False
            self.children = saved_children

    # ------------------------------------------------------------------ loading and binning
    def describe(self, seq):
        """Check every partition; return (the digest of this worker's fastboost kernels, per partition
        (id, n_rows, n_features, labels, max weight, positive rows))."""
        self._enter(seq)
        out = []
        for j, part in enumerate(self.part_ids):
            X, y, sw = _checked_partition(self._X[j], self._y[j], self._sw[j], part, self.name, "")
            n = X.shape[0]
            self._X[j], self._y[j], self._sw[j] = X, y, sw
            if self.val_fraction is not None and n:  # this partition's held-out rows: a seeded hash of the row
                held = _held_out(self.val_seed, part, n, self.val_fraction)
                self._Xv.append(_take(X, held))
                self._yv.append(y[held])
                self._swv.append(sw[held])
                self.val_ids.append(part)
                keep = ~held
                X, y, sw = _take(X, keep), y[keep], sw[keep]
                self._X[j], self._y[j], self._sw[j] = X, y, sw
                n = X.shape[0]
            out.append((part, n, X.shape[1], np.unique(y) if n else y[:0],
                        float(sw.max()) if n else 0.0, int(np.count_nonzero(sw)), _class_stats(y, sw)))
        return sources_digest(), out, self._describe_validation()

    def _describe_validation(self):
        """Check the validation partitions; per partition (id, n_rows, n_features, labels, max weight)."""
        out = []
        from_eval_set = self.val_fraction is None
        for j, part in enumerate(self.val_ids):
            if from_eval_set:
                self._Xv[j], self._yv[j], self._swv[j] = _checked_partition(
                    self._Xv[j], self._yv[j], self._swv[j], part, self.name, "eval_set's ")
            X, y, sw = self._Xv[j], self._yv[j], self._swv[j]
            n = X.shape[0]
            out.append((part, n, X.shape[1], np.unique(y) if n else y[:0], float(sw.max()) if n else 0.0))
        return out

    def prepare(self, seq, classes, sw_max, sample_sizes, seed, class_weight=None, val_max=None):
        """Class indices; q = sw / max(sw) and its sum per partition; the binning sample rows.

        sample_sizes: per partition (in part_ids order) None for all the rows with positive weight
        (in row order), 0 for none, or (the global index of its first row, a key limit): the
        positive rows whose ``fastboost._binning.sample_keys`` key is at most the limit, among which
        the client picks BinMapper's sample. class_weight: float64[n_classes],
        the weight of each class (the sample weights are multiplied by it), or None. Returns per
        partition (id, sum of q, sample rows of X, their q, their row numbers in the partition), and per
        validation partition
        (id, sum of its q = sw / val_max).
        """
        self._enter(seq)
        out = []
        for j, part in enumerate(self.part_ids):
            y = np.searchsorted(classes, self._y[j]).astype(Y_DTYPE)
            self._y[j] = y
            sw = self._sw[j] if class_weight is None else self._sw[j] * class_weight[y]
            q = sw / sw_max
            self._sw[j] = q
            self._cw[j] = sw  # (the cover's weights)
            pos = np.flatnonzero(q > 0)
            size = sample_sizes[j]
            if isinstance(size, (tuple, list)):  # (first row's global index, key limit): BinMapper's sample rule
                offset, limit = size
                pos = pos[sample_keys(seed, offset + pos) <= np.uint64(limit)]
            elif size is not None and size < pos.size:
                pos = pos[:size]
            rows = pos if pos.size < q.shape[0] else slice(None)
            out.append((part, q.sum(), _sample_rows(self._X[j], rows), q[rows], pos))
        val = []
        for j, part in enumerate(self.val_ids):
            self._yv[j] = np.searchsorted(classes, self._yv[j]).astype(Y_DTYPE)
            self._swv[j] = self._swv[j] / val_max
            val.append((part, self._swv[j].sum()))
        return out, val

    def bin(self, seq, mapper, q_sum, config, vq_sum=None, first_rows=None):
        """Map X (and the validation rows) to codes with the broadcast mapper, drop X, set up the boosting
        state; return count_nonzero(p). first_rows: int64[n_partitions], the index of each training
        partition's first row in the whole fit's rows (the row draws' indices; None: no row draws)."""
        self._enter(seq)
        sizes = [X.shape[0] for X in self._X]
        n = int(sum(sizes))
        d = self._X[0].shape[1]
        self.missing_code = mapper.missing_code
        with self._kernels():
            codes = np.empty((d, n), dtype=X_BINNED_DTYPE)
            start = 0
            for X, size in zip(self._X, sizes):
                if size:
                    codes[:, start:start + size] = mapper.transform(X)
                start += size
        self._X = None  # the raw rows are no longer needed (the client releases its futures too)
        self.codes = codes
        self.y = np.concatenate(self._y).astype(Y_DTYPE) if n else np.empty(0, Y_DTYPE)
        q = np.concatenate(self._sw) if n else np.empty(0)
        self.sw = np.concatenate(self._cw) if n else np.empty(0)  # the class-weighted sample weights
        self.part_sizes = sizes
        # this shard's runs of rows in the whole fit's order: (first row here, end, index in the whole fit)
        starts = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        self.segs = np.array([[starts[j], starts[j + 1], 0 if first_rows is None else first_rows[part]]
                              for j, part in enumerate(self.part_ids)], np.int64).reshape(-1, 3)
        self._y = self._sw = self._cw = None
        self.p = q / q_sum  # as fastboost._validation.as_distribution: (sw / max) / sum(sw / max)
        # the same configuration, data, workspace and learner functions as the single-machine loop
        config = self.config = self._own_config(config)
        c = config[0]
        self.use_q = bool(c["use_q"])
        self.data = TrainData(codes, self.y, self.p, np.ascontiguousarray(mapper.n_value_bins_, dtype=np.int64),
                              mapper.thresholds_, mapper.categorical_)
        self.n_scores = 1 if int(c["n_classes"]) == 2 else int(c["n_classes"])
        if vq_sum is not None:  # validation rows: codes, labels, p (normalised over every worker's rows), margins
            nv = int(sum(X.shape[0] for X in self._Xv))
            with self._kernels():
                vcodes = np.empty((d, nv), dtype=X_BINNED_DTYPE)
                start = 0
                for X in self._Xv:
                    if X.shape[0]:
                        vcodes[:, start:start + X.shape[0]] = mapper.transform(X)
                    start += X.shape[0]
            vy = np.concatenate(self._yv).astype(Y_DTYPE) if nv else np.empty(0, Y_DTYPE)
            vp = (np.concatenate(self._swv) if nv else np.empty(0)) / vq_sum
            self.valid = ValidData(vcodes, vy, vp, np.zeros(nv * self.n_scores))
            self.valid_y_all = vy
        self._Xv = self._yv = self._swv = None
        self.depth = int(c["max_depth"])
        self._start_target(w_from=None)
        return int(np.count_nonzero(self.p)), threading_layer()

    def _own_config(self, config):
        """The fit's configuration as this shard runs it: its threads' feature groups (speed only), and no monotone
        credit (``monotone_capped``): the client keeps the credit steps back may take; this shard's workspace has
        no constraints to keep it by (its update would index their empty arrays)."""
        config = config.copy()
        config[0]["hist_groups"] = n_feature_groups(self.codes.shape[0], self.n_jobs)
        config[0]["monotone_capped"] = False
        return config

    def _start_target(self, w_from):
        """The boosting state of a new fit on this shard's rows (labels self.y, or class w_from against the
        rest for a one-vs-rest fit): workspace, learner, the one-round model the updates read."""
        config = self.config
        c = config[0]
        d, n_bins = self.codes.shape[0], self.missing_code + 1
        y = self.y if w_from is None else (self.y == w_from).astype(Y_DTYPE)
        self.data = self.data._replace(y=y)
        w = (2.0 * y - 1.0) if c["additive"] else self.p.copy()
        n_val = 0 if self.valid is None else self.valid.y.shape[0]
        self.ws = make_workspace(y, w, d, n_bins, config, n_val)
        self.learner = pick_learner(config, bool(self.data.categorical.any()))
        self._mh = True if is_mh(config) else None  # (the tree kernels' switch for AdaBoost.MH's histograms)
        self.validate = self.learner.validate if n_val else no_validation
        self.no_model = make_model(0, 0)
        self.one = make_model(1, self.depth)  # the round the workers' update and validation read
        self.hist_now = self.ws.tree.level_a  # trees: the current level's histograms (swapped level by level)
        self.hist_next = self.ws.tree.level_b
        self._u_ready = False  # u is set for the round's next call (bootstrap: weight_sums, then the histograms)
        self._feats_now = self._feats()  # the round's features
        self._subset = False  # the round's learner reads its drawn rows only (kept[:m])

    def target(self, seq, k, config):
        """One-vs-rest: start the fit of class k against the rest (config: that fit's), validation margins reset."""
        self._enter(seq)
        self.config = self._own_config(config)
        if self.valid is not None:
            vy = self.valid_y_all if k is None else (self.valid_y_all == k).astype(Y_DTYPE)
            self.valid = self.valid._replace(y=vy, margin=np.zeros_like(self.valid.margin))
        self._start_target(w_from=k)

    @property
    def w(self):
        """The boosting weights (or QuadBoost's residuals) of this shard's rows."""
        return self.ws.rows.w

    # ------------------------------------------------------------------ one boosting round (see loop._boost)
    def _update(self, update):
        """The previous round's update and validation (see :class:`fastboost.dask.RoundUpdate`); returns
        this shard's part of the update's (a, b), and of the weighted validation error (or NaN)."""
        ws = self.ws
        self._u_ready = False
        if update.apply:
            self._apply(update.round[0])
        sums = ws.sums[0]
        sums["wi"] = update.w_correct
        sums["wj"] = update.w_wrong
        one = self.one
        one.rounds[0] = update.round[0]
        if update.tree is not None:
            one.nodes[0] = update.tree
            ws.tree.leaf_w[:] = update.leaf_w
            ws.tree.factor[:] = update.factor
        c = self.config[0]
        a, b = self.learner.update(self.data, c, ws, one, 0, update.alpha)
        err = np.nan
        if self.valid is not None:  # (a worker without validation rows adds 0 to the error)
            err = self.validate(self.valid, c, ws, one, 0, update.alpha) if self.valid.y.shape[0] else 0.0
        return a, b, err

    def set_children(self, seq, children):
        """Tree reduction: the shards (actor handles, in a fixed order) whose histograms this one adds to its own."""
        self._enter(seq)
        self.children = list(children)

    def _child_result(self, child, future):
        """A child's histograms; PartitionLostError (never an endless wait) if its worker is gone."""
        while True:
            try:
                return future.result(timeout=POLL_SECONDS)
            except (TimeoutError, asyncio.TimeoutError):  # the same class from Python 3.11 on
                from distributed import get_client

                if get_client().nthreads([child._address]):
                    continue
                error = RuntimeError("the worker left the cluster")
            except (PartitionLostError, OSError) as e:
                error = e
            lost = PartitionLostError(
                f"fastboost.dask fit {self.token}: the worker {child._address} of the histogram tree (below "
                f"partitions {self.part_ids}) was lost ({type(error).__name__}: {error}).")
            lost.address = child._address  # pickled with the exception: the client names this worker
            raise lost from error

    def _learner_weights(self, update, keep=False):
        """[The previous round's update,] then the transform: the learner's weights u; returns the update's
        results (or None). keep: u stays set for the round's next call (bootstrap's ``weight_sums``), which
        then skips the transform; otherwise every call transforms (w may have changed between calls: QuadBoost's
        re-weighting passes)."""
        done = None if update is None else self._update(update)
        c = self.config[0]
        if not c["u_is_w"] and not self._u_ready:
            self.rule.transform(self.data, c, self.ws)
        self._u_ready = keep
        return done

    def _u(self):
        rows = self.ws.rows
        return rows.w if self.config[0]["u_is_w"] else rows.u

    def weight_sums(self, seq, update):
        """Bootstrap's first call of a round: [previous round's update,] transform; returns (the update's results,
        [(partition id, sum of the learner's weights max(u, 0) over its rows)])."""
        self._enter(seq)
        with self._kernels():
            done = self._learner_weights(update, keep=True)
        u = np.maximum(self._u(), 0.0)
        return done, [(part, float(u[a:b].sum())) for part, (a, b, _) in zip(self.part_ids, self.segs)]

    def _draw(self, draw, kept):
        """The round's features (self._feats_now) and rows (kept[:m], m returned; -1: every row) by ``draw``."""
        self._feats_now = self._feats() if draw is None or draw.feats is None else draw.feats
        self._subset = draw is not None and draw.rows
        if not self._subset:
            return -1
        return draw_shard_rows(self._u(), self.config[0], self.segs, self.part_ids, draw, kept,
                               self.ws.limits.sample.hu)

    def histograms(self, seq, update, draw=None):
        """[previous round's update,] transform, histograms of this shard's rows, plus those of its subtree;
        ``draw`` (a RoundDraw, or None): the round's features and rows.

        Returns (the update's results of every shard of the subtree, this one first then each child's
        subtree in order; the subtree's summed hist; histq or None; its number of drawn rows, or -1 without
        row draws). The children start first and run in parallel with this shard; their sums are added in
        child order, never by arrival.
        """
        self._enter(seq)
        pending = [(child, child.histograms(seq, update, draw)) for child in self.children]
        ws = self.ws
        c = self.config[0]
        with self._kernels():
            done = self._learner_weights(update)
            rows, st = ws.rows, ws.stump
            u = self._u()
            m = self._draw(draw, st.kept)
            feats = self._feats_now
            if self._replaying:
                pass
            elif m >= 0:  # the drawn rows (bootstrap: by their counts)
                hu = ws.limits.sample.hu if c["bootstrap"] else u
                if self.use_q:
                    build_histograms_q_rows(self.codes, rows.ylab, u, rows.q, st.kept[:m], st.hist, st.histq, feats)
                else:
                    build_histograms_rows(self.codes, rows.ylab, hu, st.kept[:m], st.hist, int(c["hist_groups"]),
                                          feats)
            elif self.use_q:
                build_histograms_q(self.codes, rows.ylab, u, rows.q, st.hist, st.histq, feats)
            elif feats.shape[0] < self.codes.shape[0]:  # the drawn features only
                build_histograms_rows(self.codes, rows.ylab, u, self._all_rows(), st.hist, int(c["hist_groups"]),
                                      feats)
            else:
                build_histograms(self.codes, rows.ylab, u, st.hist, int(c["hist_groups"]))
        updates = [done]
        hist = self._sent(ws.stump.hist)
        histq = self._sent(ws.stump.histq) if self.use_q else None
        for child, future in pending:
            child_updates, child_hist, child_histq, child_m = self._child_result(child, future)
            updates.extend(child_updates)
            hist += child_hist
            if self.use_q:
                histq += child_histq
            m += child_m if m >= 0 else 0
        return updates, hist, histq, m

    def _sent(self, hist, axis=0):
        """A copy of histograms to send: of the round's drawn features only (along ``axis``) when features are
        drawn (the client puts them in place), else of every feature."""
        feats = self._feats_now
        if feats.shape[0] == self.codes.shape[0]:
            return hist.copy()
        return np.take(hist, feats, axis=axis)

    def _all_rows(self):
        rows = getattr(self, "_every_row", None)
        if rows is None or rows.shape[0] != self.y.shape[0]:
            rows = self._every_row = np.arange(self.y.shape[0], dtype=np.int64)
        return rows

    def _apply(self, r):
        """apply_stump of the stump r (a round record) on this shard's rows: y*h and the sums in ws.sums."""
        ws = self.ws
        u = ws.rows.w if self.config[0]["u_is_w"] else ws.rows.u
        apply_stump(self.codes[r["feature"]], r, self.missing_code, ws.rows, u, ws.sums)

    def apply(self, seq, f, k, ml, left, right):
        """apply_stump on this shard's rows: its (U_I, U_J, W_I, W_J, Q_I, Q_J) (the sums of q, EBBoost's,
        only after a round on drawn rows; else 0)."""
        self._enter(seq)
        ws = self.ws
        r = np.zeros(1, self.one.rounds.dtype)[0]
        r["feature"], r["bin"], r["missing_left"], r["left"], r["right"] = f, k, ml, left, right
        with self._kernels():
            self._apply(r)
            qi = qj = 0.0
            if self.use_q and self._subset:  # (as the single-machine learner: the step's sums of q over every row)
                qi, qj = correct_wrong_sums(ws.rows.q, ws.rows.yh, ws.rows.block_sums)
        s = ws.sums[0]
        return np.array([s["ui"], s["uj"], s["wi"], s["wj"], qi, qj])

    # ------------------------------------------------------------------ one tree (see tree.grow_tree)
    def tree_root(self, seq, update, draw=None):
        """[previous round's update,] transform, the round's features and rows (``draw``, a RoundDraw, or None:
        every one), the root's histogram of this shard's rows: (update results, float64[n_features, n_bins,
        n_classes + 1], the number of drawn rows or -1 without row draws)."""
        self._enter(seq)
        ws = self.ws
        c = self.config[0]
        n = self.y.shape[0]
        with self._kernels():
            done = self._learner_weights(update)
            ts = ws.tree
            m = self._draw(draw, ts.rows)  # (the tree grows on ts.rows[:m], as the single-machine learner's)
            self.hist_now, self.hist_next = ts.level_a, ts.level_b
            ts.node_range[0, 0] = 0
            ts.node_range[0, 1] = n if m < 0 else m
            if not self._replaying:
                rows_histograms(self._grow_rows(), ts.rows, 0, n if m < 0 else m, int(c["n_classes"]),
                                int(c["min_samples_leaf"]) > 1, self.hist_now[0], int(c["hist_groups"]),
                                self._feats_now, self._mh)
        return done, self._sent(self.hist_now[0]), m

    def _feats(self):
        """Every feature."""
        return np.arange(self.codes.shape[0], dtype=np.int64)

    def _grow_rows(self):
        """The rows a tree grows on: ``_tree_rows``, with bootstrap's counts for u on a round of drawn rows."""
        rows = self._tree_rows()
        if self._subset and self.config[0]["bootstrap"]:
            rows = rows._replace(u=self.ws.limits.sample.hu)
        return rows

    def _tree_rows(self):
        """The rows a tree's passes read (``TreeRows``): codes, the learner's labels and weights, q and w."""
        rows = self.ws.rows
        return TreeRows(self.codes, rows.ylab, rows.w if self.config[0]["u_is_w"] else rows.u, rows.q, rows.w)

    def tree_level(self, seq, splits, n_split, first_child, root):
        """Partition the rows of the level's split nodes (``splits``, SPLIT_DTYPE); the children's histograms,
        [2 n_split, ...]."""
        self._enter(seq)
        with self._kernels():  # (on drawn rows the root's rows are ts.rows[:m], not the positions)
            split_level_rows(self._grow_rows(), self.config[0], splits, n_split, first_child,
                             root and not self._subset, self.ws.tree, self.hist_now, self.hist_next,
                             not self._replaying, self._feats_now, self._mh)
        self.hist_now, self.hist_next = self.hist_next, self.hist_now
        return self._sent(self.hist_now[:2 * n_split], axis=1)

    def tree_leaves(self, seq, tree, n_nodes, n_first, splits, n_last, last_root):
        """Each row's leaf; the leaves' sums of u (and q) and of w by class: (leaf_u, leaf_w) [n_nodes, ...]."""
        self._enter(seq)
        ts = self.ws.tree
        ts.leaf_u[:] = 0.0
        ts.leaf_w[:] = 0.0
        with self._kernels():
            if self._subset:  # a tree grown on drawn rows: every row to its leaf by the tree
                tree_leaves_all_rows(self._tree_rows(), self.config[0], tree, ts.leaf_of_row, ts.leaf_u, ts.leaf_w)
            else:
                tree_leaves_rows(self._tree_rows(), self.config[0], tree, n_nodes, n_first, splits, n_last,
                                 last_root, ts, False)  # (the arguments' types as grow_tree's: one compiled variant)
        return ts.leaf_u[:n_nodes].copy(), ts.leaf_w[:n_nodes].copy()

    def update(self, seq, update):
        """The last round's update alone (end of boosting, before QuadBoost's re-weighting)."""
        self._enter(seq)
        with self._kernels():
            return self._update(update)

    # ------------------------------------------------------------------ QuadBoost (see reweight._reweight)
    # A voter travels as (its round record ROUND_DTYPE[1], its tree NODE_DTYPE[1, max_nodes] or None for a stump).
    @staticmethod
    def _voter(voter):
        rounds, nodes = voter
        return Model(rounds, _NO_NODES if nodes is None else nodes)

    def _add_voter(self, pending):
        voter, delta = pending
        add_voter(self.codes, self._voter(voter), 0, self.missing_code, delta, self.w)

    def correlation(self, seq, pending, voter):
        """[r -= delta h for the previous voter,] then this shard's part of (<h, r>_p, <h, h>_p) for ``voter``."""
        self._enter(seq)
        with self._kernels():
            if pending is not None:
                self._add_voter(pending)
            return voter_correlation(self.codes, self._voter(voter), 0, self.missing_code, self.w, self.p,
                                     self.ws.rows.block_sums)

    def finish_voters(self, seq, pending):
        """The pass's last residual update (if any); returns this shard's part of sum_i p_i r_i**2."""
        self._enter(seq)
        with self._kernels():
            if pending is not None:
                self._add_voter(pending)
        return float(np.dot(self.p, self.w * self.w))

    def reset_residuals(self, seq, rounds, nodes):
        """r = y - F of the kept voters, recomputed from the labels (as QuadBoostClassifier._finish)."""
        self._enter(seq)
        self.ws.rows.w[:] = 2.0 * self.data.y - 1.0
        model = Model(rounds, _NO_NODES if nodes is None else nodes)
        with self._kernels():
            for j in range(rounds.shape[0]):
                add_voter(self.codes, model, j, self.missing_code, rounds[j]["alpha"], self.ws.rows.w)

    def revalidate(self, seq, rounds, nodes):
        """The validation margins recomputed from the voters (after a re-weighting pass changed their steps)."""
        self._enter(seq)
        if self.valid is None or self.valid.y.shape[0] == 0:
            return
        self.valid.margin[:] = 0.0
        model = Model(rounds, _NO_NODES if nodes is None else nodes)
        c = self.config[0]
        with self._kernels():
            for j in range(rounds.shape[0]):
                self.validate(self.valid, c, self.ws, model, j, rounds[j]["alpha"])

    def cover(self, seq, rounds, nodes, scale=1.0):
        """The fitted model's cover on each of this shard's training partitions: [(partition id,
        float64[T, 2 or max_nodes])], each the blocks of that partition's rows added in order (as
        ``fastboost.explain.fit_cover`` on its rows alone, the weights times ``scale``: ``cover_scale``); the
        client adds the partitions in id order."""
        self._enter(seq)
        out = []
        start = 0
        with self._kernels():
            for part, size in zip(self.part_ids, self.part_sizes):
                codes = np.ascontiguousarray(self.codes[:, start:start + size])
                sw = self.sw[start:start + size]
                parts = cover_parts(rounds, nodes, codes, self.missing_code, sw if scale == 1.0 else sw * scale)
                out.append((part, ordered_sum(parts)))
                start += size
        return out


def draw_shard_rows(u, c, segs, part_ids, draw, kept, hu):
    """The rows of a round's draw (``draw``, a RoundDraw with rows) among a shard's rows: the rows the
    single-machine ``sampling.sample_rows`` draws there. Returns m, the drawn rows in kept[:m] (increasing).

    u     float64[n]  the learner's weights of the shard's rows;  c  the fit's configuration record
    segs  int64[k, 3]  the shard's runs of rows, one per partition ``part_ids[j]``: (first row here, end, its
          index in the whole fit), in the whole fit's order
    hu    float64[n]  OUT (bootstrap)  each drawn row's learner weight, count * total / draws
    Without bootstrap each row is drawn by its index in the whole fit (sample_rows on those indices). With
    bootstrap every draw of the whole fit is made (``sampling.unit_draws``), x = unit * total; a draw in a
    partition's stretch [low, high) of draw.bounds picks the partition's first row whose cumulative sum of
    max(u, 0), added in row order from low, exceeds x (at most its last row of positive weight).
    """
    if not c["bootstrap"]:
        m = 0
        for lo, hi, first in segs:
            kept[m:m + hi - lo] = np.arange(first, first + hi - lo)
            m += hi - lo
        m = sample_rows(u, c, int(draw.t), kept, m, hu)
        drawn = kept[:m]  # (indices in the whole fit, increasing) -> the shard's rows
        run = np.searchsorted(segs[:, 2], drawn, side="right") - 1
        drawn += segs[run, 0] - segs[run, 2]
        return m
    u = np.maximum(u, 0.0)
    hu[:] = 0.0
    x = np.empty(draw.n_draws)
    unit_draws(int(c["sample_seed"]), STREAM_BOOT, int(draw.t), 0, int(draw.n_draws), x)
    x *= draw.total
    for (lo, hi, _), (low, high) in zip(segs, draw.bounds[list(part_ids)]):
        positive = np.flatnonzero(u[lo:hi] > 0.0)
        mine = x[(x >= low) & (x < high)] if positive.shape[0] else x[:0]
        if mine.shape[0]:
            cum = np.cumsum(np.concatenate(([low], u[lo:hi])))[1:]  # (added in row order, from low)
            at = np.minimum(np.searchsorted(cum, mine, side="right"), positive[-1])
            hu[lo:hi] += np.bincount(at, minlength=hi - lo)
    hu *= draw.total / draw.n_draws
    drawn = np.flatnonzero(hu > 0.0)
    kept[:drawn.shape[0]] = drawn
    return drawn.shape[0]


def predict_block(X, model, method):
    """``model.<method>(X)`` on one block / partition (empty blocks give empty results)."""
    if X.shape[0] == 0:
        k = model.classes_.shape[0]
        if method == "predict":
            return model.classes_[:0]
        if method in ("predict_proba", "predict_log_proba"):
            return np.empty((0, k), np.float64)
        if method == "predict_contrib":
            d = model.n_features_in_ + 1
            return np.empty((0, k, d) if k > 2 else (0, d), np.float64)
        return np.empty((0, k) if k > 2 else 0, np.float64)
    with KERNEL_LOCK:
        return getattr(model, method)(X)
