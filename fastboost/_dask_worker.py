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

import numpy as np

from . import _validation as v
from ._algorithms import RULES
from ._cache import sources_digest
from ._config import n_threads, resolve_n_jobs
from ._driver import make_model, make_workspace, pick_learner
from ._kernels.histogram import build_histograms, build_histograms_q, n_feature_groups
from ._kernels.reweight import add_voter, voter_correlation
from ._kernels.update import apply_stump
from ._types import X_BINNED_DTYPE, Y_DTYPE, Model, TrainData

_NO_NODES = make_model(0, 0).nodes  # stump voters: the re-weighting kernels' empty tree record


#: Seconds between checks that a child of the histogram tree is still in the cluster.
POLL_SECONDS = 1.0


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

    def __init__(self, token, name, algorithm, n_jobs, part_ids, X_parts, y_parts, sw_parts):
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
        self._seq = 0
        self.children = []

    # ------------------------------------------------------------------ call bookkeeping
    def _enter(self, seq):
        if seq != self._seq + 1:
            raise PartitionLostError(
                f"fastboost.dask fit {self.token}: partitions {self.part_ids} expected call {self._seq + 1} but got "
                f"{seq}: this worker's boosting state was lost (worker restarted or actor re-created).")
        self._seq = seq

    # ------------------------------------------------------------------ loading and binning
    def describe(self, seq):
        """Check every partition; return (the digest of this worker's fastboost kernels, per partition
        (id, n_rows, n_features, labels, max weight, positive rows))."""
        self._enter(seq)
        out = []
        for j, part in enumerate(self.part_ids):
            X = self._X[j]
            if not v.is_dataframe(X):
                X = np.asarray(X) if not isinstance(X, np.ndarray) else X
            if len(X.shape) != 2:
                raise ValueError(f"X must be 2-D; partition {part} has shape {X.shape}.")
            n = X.shape[0]
            if n:
                X = v.check_X(X, self.name)
            self._X[j] = X
            y = _as_1d(self._y[j], "y", part, n)
            if n:
                y = v.check_y(y, n, self.name)
            self._y[j] = y
            sw = self._sw[j]
            sw = np.ones(n) if sw is None else _check_weights(_as_1d(sw, "sample_weight", part, n), part)
            self._sw[j] = sw
            out.append((part, n, X.shape[1], np.unique(y) if n else y[:0],
                        float(sw.max()) if n else 0.0, int(np.count_nonzero(sw))))
        return sources_digest(), out

    def prepare(self, seq, classes, sw_max, sample_sizes, seed):
        """Class indices; q = sw / max(sw) and its sum per partition; the binning sample rows.

        sample_sizes: per partition (in part_ids order) the number of rows with positive
        weight to draw, or None for all of them (in row order). Returns per partition
        (id, sum of q, sample rows of X, their q).
        """
        self._enter(seq)
        out = []
        for j, part in enumerate(self.part_ids):
            y = self._y[j]
            self._y[j] = np.searchsorted(classes, y).astype(Y_DTYPE)
            q = self._sw[j] / sw_max
            self._sw[j] = q
            pos = np.flatnonzero(q > 0)
            size = sample_sizes[j]
            if size is not None and size < pos.size:
                pick = np.random.default_rng([seed, part]).choice(pos.size, size, replace=False)
                pos = pos[np.sort(pick)]
            rows = pos if pos.size < q.shape[0] else slice(None)
            out.append((part, q.sum(), _sample_rows(self._X[j], rows), q[rows]))
        return out

    def bin(self, seq, mapper, q_sum, config):
        """Map X to codes with the broadcast mapper, drop X, set up the boosting state; return count_nonzero(p)."""
        self._enter(seq)
        sizes = [X.shape[0] for X in self._X]
        n = int(sum(sizes))
        d = self._X[0].shape[1]
        n_bins = mapper.missing_code + 1
        self.missing_code = mapper.missing_code
        with n_threads(self.n_jobs):
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
        self._y = self._sw = None
        self.p = q / q_sum  # as fastboost._validation.as_distribution: (sw / max) / sum(sw / max)
        # the same configuration, data, workspace and learner functions as the single-machine loop
        config = config.copy()
        config[0]["hist_groups"] = n_feature_groups(d, self.n_jobs)  # this worker's threads (speed only)
        self.config = config
        c = config[0]
        self.use_q = bool(c["use_q"])
        self.data = TrainData(codes, self.y, self.p, np.ascontiguousarray(mapper.n_value_bins_, dtype=np.int64),
                              mapper.thresholds_, mapper.categorical_)
        w = (2.0 * self.y - 1.0) if c["additive"] else self.p.copy()
        self.ws = make_workspace(self.y, w, d, n_bins, config)
        self.learner = pick_learner(config)
        self.no_model = make_model(0, 0)
        return int(np.count_nonzero(self.p))

    @property
    def w(self):
        """The boosting weights (or QuadBoost's residuals) of this shard's rows."""
        return self.ws.w

    # ------------------------------------------------------------------ one boosting round (see loop._boost)
    def _update(self, update):
        """The previous round's update with the global (alpha, W_I, W_J); returns this shard's part of (a, b)."""
        alpha, w_correct, w_wrong = update
        sums = self.ws.sums[0]
        sums["wi"] = w_correct
        sums["wj"] = w_wrong
        return self.learner.update(self.data, self.config[0], self.ws, self.no_model, 0, alpha)

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

    def histograms(self, seq, update):
        """[previous round's update,] transform, histograms of this shard's rows, plus those of its subtree.

        Returns (the update's results of every shard of the subtree, this one first then each child's
        subtree in order; the subtree's summed hist; histq or None). The children start first and
        run in parallel with this shard; their sums are added in child order, never by arrival.
        """
        self._enter(seq)
        pending = [(child, child.histograms(seq, update)) for child in self.children]
        ws = self.ws
        c = self.config[0]
        with n_threads(self.n_jobs):
            done = None if update is None else self._update(update)
            if not c["u_is_w"]:
                self.rule.transform(self.data, c, ws)
            u = ws.w if c["u_is_w"] else ws.u
            if self.use_q:
                build_histograms_q(self.codes, ws.ylab, u, ws.q, ws.hist, ws.histq)
            else:
                build_histograms(self.codes, ws.ylab, u, ws.hist, int(c["hist_groups"]))
        updates = [done]
        hist = ws.hist.copy()
        histq = ws.histq.copy() if self.use_q else None
        for child, future in pending:
            child_updates, child_hist, child_histq = self._child_result(child, future)
            updates.extend(child_updates)
            hist += child_hist
            if self.use_q:
                histq += child_histq
        return updates, hist, histq

    def apply(self, seq, f, k, ml, left, right):
        """apply_stump on this shard's rows: its (U_I, U_J, W_I, W_J)."""
        self._enter(seq)
        ws = self.ws
        u = ws.w if self.config[0]["u_is_w"] else ws.u
        with n_threads(self.n_jobs):
            apply_stump(self.codes[f], k, ml, self.missing_code, left, right, ws.ylab, u, ws.w, ws.yh, ws.block_sums,
                        ws.sums)
        s = ws.sums[0]
        return np.array([s["ui"], s["uj"], s["wi"], s["wj"]])

    def update(self, seq, update):
        """The last round's update alone (end of boosting, before QuadBoost's re-weighting)."""
        self._enter(seq)
        with n_threads(self.n_jobs):
            return self._update(update)

    # ------------------------------------------------------------------ QuadBoost (see reweight._reweight)
    # A voter travels as its round record (ROUND_DTYPE[1], voter index 0); stumps have no tree.
    def _add_voter(self, pending):
        voter, delta = pending
        add_voter(self.codes, Model(voter, _NO_NODES), 0, self.missing_code, delta, self.w)

    def correlation(self, seq, pending, voter):
        """[r -= delta h for the previous voter,] then this shard's part of (<h, r>_p, <h, h>_p) for ``voter``."""
        self._enter(seq)
        with n_threads(self.n_jobs):
            if pending is not None:
                self._add_voter(pending)
            return voter_correlation(self.codes, Model(voter, _NO_NODES), 0, self.missing_code, self.w, self.p,
                                     self.ws.block_sums)

    def finish_voters(self, seq, pending):
        """The pass's last residual update (if any); returns this shard's part of sum_i p_i r_i**2."""
        self._enter(seq)
        with n_threads(self.n_jobs):
            if pending is not None:
                self._add_voter(pending)
        return float(np.dot(self.p, self.w * self.w))

    def reset_residuals(self, seq, rounds):
        """r = y - F of the kept voters, recomputed from the labels (as QuadBoostClassifier._finish)."""
        self._enter(seq)
        self.ws.w[:] = 2.0 * self.y - 1.0
        model = Model(rounds, _NO_NODES)
        with n_threads(self.n_jobs):
            for j in range(rounds.shape[0]):
                add_voter(self.codes, model, j, self.missing_code, rounds[j]["alpha"], self.ws.w)


def predict_block(X, model, method):
    """``model.<method>(X)`` on one block / partition (empty blocks give empty results)."""
    if X.shape[0] == 0:
        if method == "predict":
            return model.classes_[:0]
        if method in ("predict_proba", "predict_log_proba"):
            return np.empty((0, 2), np.float64)
        return np.empty(0, np.float64)
    return getattr(model, method)(X)
