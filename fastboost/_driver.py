"""The round driver: everything around the compiled loop, once.

The estimators, the Dask driver and the benchmark all fit through these functions:

- :func:`make_config` fills the configuration record the loop and the rules read by name;
- :func:`pick_learner` chooses the weak learner's learn / update / validate functions;
- :func:`make_workspace` allocates the scratch space and state of a fit, in one place;
- :func:`make_model` / :func:`grow_model` allocate and grow the fitted records;
- :class:`Progress` prints a fit's progress lines.

A fit in progress is one object, ``_fit.Fit``, which runs the rounds through these.
"""
import os
import sys
import time

import numpy as np

from ._config import Rules
from ._kernels.learners import LEARNERS, PLAIN_UPDATES, no_validation, update_tree_weights_logistic
from ._kernels.update import n_blocks
from ._types import (
    CONFIG_DTYPE,
    CRITERION_ERROR,
    CRITERION_MH,
    LEAF_LSQ,
    LEAF_REAL,
    LEAF_VECTOR,
    NO_VALUES,
    NODE_DTYPE,
    ROUND_DTYPE,
    STATE_DTYPE,
    STOPPED_BY_CALLBACK,
    STOPPED_BY_RULE,
    STOPPED_EARLY,
    SUMS_DTYPE,
    Y_DTYPE,
    Limits,
    Model,
    Monotone,
    RowState,
    SampleScratch,
    StumpScratch,
    TrainData,
    TreeScratch,
    ValidData,
    Workspace,
)

#: rounds of the first compiled call; later calls take as many rounds as fit in CALL_SECONDS
CHUNK = 64
#: rounds of the first call when the thread count follows the machine's load (``_config.ThreadGovernor``)
FIRST_CHUNK_ADAPTIVE = 8
#: seconds one compiled call aims at: Python handles Ctrl-C, grows the record and reports progress in
#: between, so an interrupt is answered within about this time (or one round, if a round is longer)
CALL_SECONDS = 0.2
#: the most rounds one compiled call runs
MAX_CHUNK = 4096
#: stump rounds between histograms built from every row (in between, from the last round's: see
#: ``_kernels/incremental.py``); 1 builds every round's from every row
HIST_REBUILD_EVERY = 16
#: fewer rows (of positive weight) than this: histograms are not carried (except with weight trimming, whose
#: kept rows go with them). The carried update's passes (the smaller side's rows, their histograms, the
#: re-weighting, the search apart from the histograms) are four parallel loops where a full build is one, and
#: below about this many rows the loops' start and wait cost more than the rows they save (100 rounds on
#: 1 000 x 20: stumps 4.3 ms a fit against 6.0 carried, depth 3 14.3 against 15.2; about even at 5 000 rows;
#: carried 2-3 % faster at 10 000, also with 100 features). Rows, not threads: the model must not depend on n_jobs.
CARRY_MIN_ROWS = 8192

__all__ = ["CHUNK", "Model", "Progress", "TrainData", "ValidData", "Workspace", "grow_model", "make_config",
           "make_model", "make_sums", "make_workspace", "no_validation_data", "pick_learner", "pick_rules"]


def make_config(**fields):
    """A CONFIG_DTYPE record array of one element with the given fields (the others zero)."""
    config = np.zeros(1, dtype=CONFIG_DTYPE)
    for name, value in fields.items():
        config[name] = value  # (the field of the one element; config[0][name] made a record view per field)
    return config


def make_sums(**fields):
    """A SUMS_DTYPE record array of one element with the given fields (the others zero)."""
    sums = np.zeros(1, dtype=SUMS_DTYPE)
    for name, value in fields.items():
        sums[name] = value  # (the field of the one element; sums[0][name] made a record view per field)
    return sums


def max_nodes_of(max_depth):
    """Node slots of a tree of this depth (0: stumps keep no nodes)."""
    return 2 ** (max_depth + 1) - 1 if max_depth else 1


def pick_learner(config, categorical=True):
    """The weak learner's (learn, update, validate) for this configuration; ``categorical``: whether the
    data has a categorical feature (False: the learner is compiled without the categories' scan)."""
    c = config[0]
    if c["max_depth"] == 0:
        if c["additive"]:
            kind = "stump_residuals"
        else:
            kind = "stump_q" if c["use_q"] else "stump"
    elif c["leaf"] == LEAF_LSQ:
        kind = "tree_residuals"
    elif c["leaf"] == LEAF_REAL:
        kind = "tree_real"
    elif c["leaf"] == LEAF_VECTOR:
        kind = "tree_mh" if is_mh(config) else "tree_vector"  # AdaBoost.MH, or SAMME.R
    else:
        kind = "tree" if c["n_classes"] == 2 else "tree_samme"
    learner = LEARNERS[kind]
    # weight trimming and row sampling share the learn variant that reads a chosen set of rows; only the stumps
    # of fits with monotone steps back compile their search; stump and tree fits with none of the learner's
    # options (the first fit on small data, say) compile neither these nor the carried histograms (the plain
    # learner's leaves never come from carried histograms: it is picked only with hist_rebuild <= 1)
    trim = bool(c["trim_rate"] > 0 or c["sample_rows"])
    options = {"steps_back": True} if kind == "stump" and c["monotone_capped"] else {}
    plain = kind in PLAIN_UPDATES and not (trim or c["sample_features"] or c["monotone"] or c["hist_rebuild"] > 1)
    if plain:
        options["plain"] = True
        learner = learner._replace(update=PLAIN_UPDATES[kind])
    # the error criterion's scan alone (numba compiles no other) in the plain learner, a first fit's on small data:
    # the other stump learners search prepared histograms with every criterion's scan anyway, and the other tree
    # learners stay shared with the other criteria (one variant more to compile where both are fitted); a tree's
    # categorical features take the general scan
    error_only = plain and c["criterion"] == CRITERION_ERROR
    if kind in ("stump", "stump_residuals") and error_only:
        options["error_scan"] = True
    if is_mh(config):  # only AdaBoost.MH's learner compiles its histograms
        options["mh"] = True
    # only trees of more than two classes (or K-vector leaves) compile the K-class split scan and vector leaves
    if c["max_depth"] and (c["n_classes"] > 2 or c["leaf"] == LEAF_VECTOR):
        options["kclass"] = True
    elif c["max_depth"] and error_only and not categorical and c["min_samples_leaf"] <= 1:
        options["error_scan"] = True  # two-class trees, without categorical features
    if c["logistic"]:  # confidence-rated leaves on the logistic loss: the weights from the margins
        learner = learner._replace(update=update_tree_weights_logistic)
    return learner._replace(learn=learner.learn(trim, bool(categorical), **options))


def pick_step_stop(rule, config):
    """The step and stop rules of a round: the algorithm's, or for confidence-rated trees (which carry their
    own step) alpha = 1 and a stop once the leaves no longer lower the loss."""
    from ._algorithms import stop_unless_loss_falls, unit_step

    if config[0]["max_depth"] and config[0]["leaf"] in (LEAF_REAL, LEAF_VECTOR):
        return unit_step, stop_unless_loss_falls
    return rule.step, rule.stop


def pick_rules(rule, config, validation, codes=np.uint8, categorical=True):
    """The loop's tuple of compiled functions: the algorithm's rule and the learner's, compiled on first use
    for binned codes of dtype ``codes`` (uint8, or uint16 in exact mode) and, with ``categorical`` False
    (no categorical feature in the data), without the categories' scan.

    Confidence-rated trees carry their own step (alpha = 1) and stop when the leaves no longer
    lower the loss; without validation rows no validation pass is compiled.
    """
    learner = pick_learner(config, categorical)
    step, stop = pick_step_stop(rule, config)
    validate = learner.validate if validation else no_validation
    return Rules(f.address(codes) for f in (rule.transform, step, stop, rule.cost, learner.learn, learner.update,
                                            validate))


def make_sample_scratch(n, n_features, config, groups=None):
    """The learner's feature and row draws' part of the Workspace (``SampleScratch``): every feature drawn until
    a round draws (``_kernels/sampling.py``). groups: the interaction groups, a 0/1 array [n_groups, n_features]
    (None: none)."""
    c = config[0]
    depth = int(c["max_depth"])
    groups = np.zeros((0, n_features), np.uint8) if groups is None else np.ascontiguousarray(groups, np.uint8)
    grouped = groups.any(axis=0).astype(np.uint8) if groups.shape[0] else np.ones(n_features, np.uint8)
    feats = np.flatnonzero(grouped).astype(np.int64)
    drawn = np.array([0, feats.shape[0], 0], np.int64)
    feats = np.concatenate([feats, np.zeros(n_features - feats.shape[0], np.int64)])
    slots = 2 ** (depth - 1) if depth else 1
    return SampleScratch(
        grouped=grouped, groups=groups, fmask=grouped.copy(), feats=feats, drawn=drawn,
        node_groups=np.ones((max_nodes_of(depth), groups.shape[0]), np.uint8),
        allowed=np.ones((slots, n_features), np.uint8),
        hu=np.zeros(n if c["bootstrap"] else 0, np.float64))


def is_mh(config):
    """Whether the fit is AdaBoost.MH: K-vector leaves on per-class pair weights (CRITERION_MH)."""
    c = config[0]
    return bool(c["max_depth"]) and c["leaf"] == LEAF_VECTOR and c["criterion"] == CRITERION_MH


def mh_pair_weights(w, n_classes):
    """AdaBoost.MH's initial pair weights q[i K + k] = w_i / K (sum 1); w (each row's learner weight, the pair
    of its own class) becomes w / K in place."""
    w /= n_classes
    return np.repeat(w, n_classes)


def make_workspace(y_idx, w, n_features, n_bins, config, n_val=0, monotone=None, groups=None):
    """The scratch space and state of a fit (``Workspace``), allocated once: the per-row state, the round's
    sums and the loop state, the stump learner's and the tree learner's scratch, the validation passes'.

    y_idx  class indices [n], the learner's labels to start from (copied); w float64[n] the initial boosting
    state (weights p, or QuadBoost's residuals; kept, not copied). monotone: int8[n_features], -1 / 0 / +1 per
    feature (None, or all 0: no constraint; config's ``monotone`` says whether any). Arrays a fit does not use have
    length 0 (or shape (1, 1, 1)): the tree scratch of a stump fit, q without EBBoost or least-squares trees.
    groups: the interaction groups (``make_sample_scratch``).
    """
    c = config[0]
    n = y_idx.shape[0]
    depth = int(c["max_depth"])
    n_classes = int(c["n_classes"])
    ls = depth > 0 and c["leaf"] == LEAF_LSQ
    mh = is_mh(config)
    n_fields = 2 * n_classes + 1 if mh else n_classes + 1 + int(ls)
    max_nodes = max_nodes_of(depth)
    slots = 2 ** (depth - 1) if depth else 1
    carried = c["hist_rebuild"] > 1  # the stumps' or the tree root's histograms carried from round to round
    trim = c["trim_rate"] > 0.0 or c["sample_rows"]  # the learner reads chosen rows
    stump = depth == 0
    tree_n = 0 if stump else n
    state = np.zeros(1, STATE_DTYPE)
    state[0]["best_val"] = np.inf
    rows = RowState(
        w=w,
        u=np.empty(n, np.float64),
        q=mh_pair_weights(w, n_classes) if mh else np.empty(n if (c["use_q"] or ls) else 0, np.float64),
        ylab=np.array(y_idx, dtype=Y_DTYPE),
        yh=np.empty(0 if (not stump and carried) else n, np.int8),
        block_sums=np.empty((n_blocks(n), 4), np.float64),
        margin=np.zeros(n * (n_classes if mh else 1) if c["logistic"] else 0, np.float64),
    )
    stump_hist = (n_features, n_bins, 2) if stump else (1, 1, 2)
    stump_scratch = StumpScratch(
        hist=np.empty(stump_hist, np.float64),
        histq=np.empty((n_features, n_bins if c["use_q"] else 1, 2), np.float64),
        fvalue=np.empty(n_features, np.float64),
        fbin=np.empty(n_features, np.int64),
        fmissing_left=np.empty(n_features, np.int64),
        kept=np.empty(n if (stump and trim) else 0, np.int64),
        side_rows=np.empty(n if (stump and carried) else 0, np.int64),
        side_hist=np.empty(stump_hist if carried else (1, 1, 2), np.float64),
    )
    level_shape = (slots, n_features, n_bins, n_fields) if depth else (1, 1, 1, 1)
    root_shape = (n_features, n_bins, n_fields) if (depth and carried) else (1, 1, 1)
    tree_scratch = TreeScratch(
        rows=np.empty(tree_n, np.int64),
        tmp=np.empty(tree_n, np.int64),
        level_a=np.empty(level_shape, np.float64),
        level_b=np.empty(level_shape, np.float64),
        node_range=np.empty((max_nodes, 2), np.int64),
        leaf_of_row=np.zeros(tree_n, np.int64),
        leaf_u=np.zeros((max_nodes, n_classes + 1)),
        leaf_w=np.zeros((max_nodes, n_classes)),
        factor=np.zeros((max_nodes, (2 * n_classes if mh else n_classes) if c["leaf"] == LEAF_VECTOR else 2)),
        root_hist=np.empty(root_shape, np.float64),
        side_hist=np.empty(root_shape, np.float64),
        wrong=np.empty(n if (depth and carried) else 0, np.int8),
    )
    constrained = bool(c["monotone"]) and monotone is not None  # (Dask's workers take no decisions: no directions)
    capped = constrained and bool(c["monotone_capped"]) and stump
    mono = Monotone(direction=np.ascontiguousarray(monotone if constrained else np.zeros(0), dtype=np.int8),
                    bounds=np.zeros((max_nodes if constrained and depth else 0, 2)),
                    credit=np.zeros((n_features, n_bins) if capped else (0, 0)))
    return Workspace(rows=rows, sums=np.zeros(1, SUMS_DTYPE), state=state, stump=stump_scratch, tree=tree_scratch,
                     vblock_sums=np.empty((n_blocks(n_val), 4), np.float64),
                     limits=Limits(monotone=mono, sample=make_sample_scratch(n, n_features, config, groups)))


def working_memory(n_samples, n_features, n_bins, config, n_val, capacity):
    """The memory a fit allocates beyond its binned data, in bytes, by part (a dict)."""
    c = config[0]
    depth = int(c["max_depth"])
    n_classes = int(c["n_classes"])
    ls = depth > 0 and c["leaf"] == LEAF_LSQ
    per_row = 8 + 8 + np.dtype(Y_DTYPE).itemsize + 1  # w, u, ylab, y*h
    mh = is_mh(config)
    if c["use_q"] or ls:
        per_row += 8
    if mh:
        per_row += 8 * n_classes  # the pair weights (row, class)
    if c["logistic"]:
        per_row += 8 * (n_classes if mh else 1)  # the margins (AdaBoost.MH: of each (row, class) pair)
    parts = {}
    if depth:
        per_row += 3 * 8  # the row order, its partition scratch, each row's leaf
        slots = 2 ** (depth - 1)
        carried = int(c["hist_rebuild"] > 1)  # the root's, carried from round to round, and the update's rows'
        n_fields = 2 * n_classes + 1 if mh else n_classes + 1 + int(ls)
        parts[f"tree histograms ({n_classes} classes x {n_features} features x {n_bins} bins x {slots} nodes x 2"
              f"{' + 2' if carried else ''})"] = (
            (2 * slots + 2 * carried) * n_features * n_bins * n_fields * 8)
    else:
        incremental = c["hist_rebuild"] > 1
        parts[f"stump histograms ({n_features} features x {n_bins} bins)"] = (
            n_features * n_bins * 2 * 8 * (2 if (c["use_q"] or incremental) else 1))
        per_row += 8 * (int(incremental) + int(c["trim_rate"] > 0.0 or c["sample_rows"]))  # a side's, the kept rows
    if c["bootstrap"]:
        per_row += 8  # each drawn row's learner weight
    parts[f"per-row arrays ({n_samples} rows)"] = n_samples * per_row
    if n_val:
        parts[f"validation margins ({n_val} rows x {1 if n_classes == 2 else n_classes})"] = (
            n_val * (1 if n_classes == 2 else n_classes) * 8)
    values = n_classes * 8 if depth and c["leaf"] == LEAF_VECTOR else 0  # K-vector leaves' values per node
    parts[f"round records ({capacity} rounds)"] = capacity * (
        ROUND_DTYPE.itemsize + (max_nodes_of(depth) * (NODE_DTYPE.itemsize + values) if depth else 0))
    return parts


def available_memory():
    """Bytes of memory available to this process now (MemAvailable on Linux), or None when unknown."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def format_bytes(n_bytes):
    return f"{n_bytes / 2 ** 30:.3g} GiB" if n_bytes >= 2 ** 28 else f"{n_bytes / 2 ** 20:.3g} MiB"


def check_memory(name, parts, hint="lower max_depth or max_bins (the histograms grow with both, and with the "
                                  "number of classes), or fit on fewer rows"):
    """MemoryError naming the size a fit needs, before it starts, when that exceeds the available memory."""
    available = available_memory()
    total = sum(parts.values())
    if available is None or total <= available:
        return
    largest = max(parts, key=parts.get)
    raise MemoryError(f"{name}: this fit needs about {format_bytes(total)} of working memory, more than the "
                      f"{format_bytes(available)} available (the largest part: {largest}, "
                      f"{format_bytes(parts[largest])}); {hint}.")


def make_model(capacity, max_depth, n_values=0):
    """Empty fitted records for ``capacity`` rounds (trees: ``NODE_DTYPE[capacity, max_nodes]``; K-vector
    leaves, n_values = K: their values ``float64[capacity, max_nodes, K]``)."""
    nodes_shape = (capacity, max_nodes_of(max_depth)) if max_depth else (0, 1)
    values = np.zeros((capacity, nodes_shape[1], n_values)) if n_values else NO_VALUES
    return Model(np.zeros(capacity, ROUND_DTYPE), np.zeros(nodes_shape, NODE_DTYPE), values)


def model_values(config):
    """The values per leaf a fit's model keeps beside its nodes: K for K-vector leaves, else 0 (make_model)."""
    c = config[0]
    return int(c["n_classes"]) if c["max_depth"] and c["leaf"] == LEAF_VECTOR else 0


def grow_model(model, capacity):
    """The same records with room for ``capacity`` rounds (the kept rounds copied)."""
    n = model.rounds.shape[0]
    if capacity <= n:
        return model
    rounds = np.zeros(capacity, ROUND_DTYPE)
    rounds[:n] = model.rounds
    nodes = model.nodes
    if nodes.shape[0]:
        nodes = np.zeros((capacity, nodes.shape[1]), NODE_DTYPE)
        nodes[:n] = model.nodes
    values = model.values
    if values.shape[0]:
        values = np.zeros((capacity,) + values.shape[1:])
        values[:n] = model.values
    return Model(rounds, nodes, values)


def kept_model(model, n_rounds):
    """The first ``n_rounds`` rounds, as contiguous arrays."""
    nodes = model.nodes[:n_rounds] if model.nodes.shape[0] else model.nodes
    values = model.values[:n_rounds] if model.values.shape[0] else model.values
    return Model(np.ascontiguousarray(model.rounds[:n_rounds]), np.ascontiguousarray(nodes),
                 np.ascontiguousarray(values))


def no_validation_data(n_features, codes=np.uint8):
    """A ValidData with no rows (codes of the training codes' dtype): the loop then never validates."""
    return ValidData(np.empty((n_features, 0), getattr(codes, "dtype", codes)), np.empty(0, Y_DTYPE), np.empty(0),
                     np.zeros(0))


def report_every(n_rounds):
    """Rounds between progress lines: 1, 2 or 5 times a power of ten, so a fit prints at most 20 lines."""
    step = 1
    while n_rounds / step > 20:
        step = _next_nice(step)
    return step


def _next_nice(step):
    """1 -> 2 -> 5 -> 10 -> 20 -> 50 -> ..."""
    digits = len(str(int(step))) - 1
    lead = int(step) // 10 ** digits
    return {1: 2, 2: 5, 5: 10}[lead] * 10 ** digits


def _duration(seconds):
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, seconds = divmod(int(round(seconds)), 60)
    if minutes < 60:
        return f"{minutes} min {seconds:02d} s"
    return f"{minutes // 60} h {minutes % 60:02d} min"


class TrainingError:
    """The weighted training error of the margins, kept up to date round by round for progress reports.

    The training rows are run through the learner's validation pass (the same compiled code that keeps
    a validation set's margins), into margins of their own: O(n) per round, only when ``verbose``.
    ``reset()`` recomputes from the first round (after QuadBoost's re-weighting changed earlier steps).
    """

    def __init__(self, data, config, ws, learner):
        n = data.y.shape[0]
        n_scores = 1 if int(config[0]["n_classes"]) == 2 else int(config[0]["n_classes"])
        self.rows = ValidData(data.codes, data.y, data.p, np.zeros(n * n_scores))
        self.ws = ws._replace(vblock_sums=np.zeros((n_blocks(n), 4)))  # (the validation pass's scratch)
        self.config = config[0]
        self.validate = learner.validate.get(data.codes)
        self.added = 0
        self.error = np.nan

    def reset(self):
        self.rows.margin[:] = 0.0
        self.added = 0

    def update(self, model, done):
        for t in range(self.added, done):
            self.error = float(self.validate(self.rows, self.config, self.ws, model, t, model.rounds[t]["alpha"]))
        self.added = max(self.added, done)
        return self.error


class Progress:
    """verbose > 0: a header, a line every :func:`report_every` rounds (round, training and validation
    error, cost, time elapsed and left) and a last line saying why the fit ended."""

    def __init__(self, name, n_rounds, verbose, stream=None, *, start=0, header=None, training_error=None):
        self.name = name
        self.n_rounds = n_rounds
        self.verbose = verbose
        self.stream = stream or sys.stdout
        self.start = time.perf_counter()
        self.first_round = start
        self.every = report_every(max(1, n_rounds - start))
        self.next_report = (start // self.every + 1) * self.every
        self.training_error = training_error
        if verbose and header:
            self._print(header)

    def __bool__(self):
        return bool(self.verbose)

    def _print(self, text):
        print(f"[{self.name}] {text}", file=self.stream, flush=True)

    def due(self, done):
        """Whether a line is due after ``done`` rounds."""
        return bool(self.verbose) and done >= self.next_report

    def report(self, done, cost, val_error=None, model=None):
        if not self.verbose:
            return
        self.next_report = (done // self.every + 1) * self.every
        parts = [f"round {done:>{len(str(self.n_rounds))}}/{self.n_rounds}"]
        if self.training_error is not None and model is not None:
            parts.append(f"train error {self.training_error.update(model, done):.4f}")
        if val_error is not None:
            parts.append(f"validation error {val_error:.4f}")
        parts.append(f"cost {cost:.6g}")
        elapsed = time.perf_counter() - self.start
        ran = done - self.first_round
        left = elapsed / ran * (self.n_rounds - done) if ran > 0 else np.nan
        parts.append(f"{_duration(elapsed)} elapsed" + (f", {_duration(left)} left" if done < self.n_rounds else ""))
        self._print("  ".join(parts))

    def finish(self, why, done, kept=None, best_error=None):
        """The last line: all rounds ran, a stop rule or a callback ended the fit, or early stopping."""
        if not self.verbose:
            return
        elapsed = _duration(time.perf_counter() - self.start)
        if why == STOPPED_EARLY:
            text = (f"early stop at round {done}: no new best validation error for the patience window; "
                    f"kept round {kept} (validation error {best_error:.4f})")
        elif why == STOPPED_BY_RULE:
            text = (f"stopped by the algorithm's rule at round {done} (a weak hypothesis no better than chance, "
                    f"a perfect one, or no further decrease of the cost)")
        elif why == STOPPED_BY_CALLBACK:
            text = f"stopped by a callback at round {done}"
        else:
            text = f"ran all {done} rounds"
        if kept is not None and why != STOPPED_EARLY:
            text += f"; kept round {kept} (best validation error {best_error:.4f})"
        self._print(f"{text} in {elapsed}")
