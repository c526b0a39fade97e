"""Weak learners as rules for the one loop: learn, update, validate.

A weak learner is three compiled functions with the loop's signatures
(``signatures.py``), handed to the loop beside the algorithm's rules:

- ``learn(data, config, ws, model, t)``: builds round t's weak hypothesis from the
  learner's weights (``ws.rows.u``, or ``ws.rows.w`` when the rule says u = w), writes it into
  ``model`` (the split fields of ``model.rounds[t]``; trees also ``model.nodes[t]``)
  and its sums into ``ws.sums``;
- ``update(data, config, ws, model, t, alpha)``: adds alpha h_t to the boosting
  state ``ws.rows.w`` (weights w exp(-alpha y h) / Z, or residuals r - alpha h) and returns
  what the cost needs;
- ``validate(valid, config, ws, model, t, alpha)``: adds alpha h_t to the validation
  margins and returns the weighted validation error.

Each is compiled only when a fit uses it: a stump fit never compiles a tree kernel,
and a fit without a validation set compiles no validation pass. :data:`LEARNERS`
names them; ``_driver.pick_learner`` chooses by the fit's options.
"""
import functools
from collections import namedtuple

import numpy as np

from .._config import compiled, jit, typed
from .._types import CRITERION_MH, LEAF_LSQ, LEAF_REAL, LEAF_VECTOR, SplitScan, TreeRows
from .histogram import build_histograms_q, build_histograms_q_rows, build_histograms_rows, histograms_and_splits
from .incremental import (
    next_histograms,
    next_mh_histograms,
    next_real_histograms,
    next_tree_histograms,
    side_rows,
    wrong_rows,
)
from .sampling import draw_round, sample_rows
from .signatures import LEARN_SIG, UPDATE_SIG, VALIDATE_SIG
from .split import (
    add_credit,
    best_back_step,
    choose_stump,
    rescan_constrained,
    step_loss,
    stump_from_feature_splits,
    stump_wrong,
)
from .tree import (
    grow_tree,
    rows_histograms,
    tree_outputs,
    tree_round_sums,
    update_validation_tree,
    update_validation_vector,
)
from .trim import GATHER_MAX_SHARE, RECHOOSE_EVERY, TRIM_SLACK, select_rows
from .update import (
    apply_stump,
    correct_wrong_sums,
    update_logistic_pairs,
    update_pair_weights,
    update_residuals,
    update_residuals_leaves,
    update_validation,
    update_weights,
    update_weights_table,
)

# ----------------------------------------------------------------------------- the learn functions' variants
_STUMP, _STUMP_Q, _TREE = 0, 1, 2  # the learners' bodies: _learn_stump, _learn_stump_q, _learn_tree


@functools.lru_cache(maxsize=None)
def _learn_variant(body, trim, categorical, steps_back=False, plain=False, mh=False, kclass=False, error_scan=False):
    """The loop's learn function (LEARN_SIG) around one learner's body for one kind of fit, made once each.

    The body is called as ``(data, config, ws, model, t, m, categorical)``; a variant compiles only the paths its
    fits take: without weight trimming or row sampling (trim False) no row selection, without categorical features
    (categorical False: the body gets None for them) no scan of categories, without monotone steps back (steps_back
    False: AdaBoost's stumps without ``monotone_steps``' capped steps; the stump body gets None for the constraints
    it would step back on) no search for them. A plain variant (plain True: no carried histograms, no monotone
    constraints, no feature draws, no trimming; ``_driver.pick_learner`` picks it for such fits, the first fit on
    small data among them) compiles none of their code: no feature draw, and the body gets None for its ``extra``
    paths. The plain stump body only ever searches histograms it builds from every row (a cold first stump fit on a
    2-core machine: 35 s instead of 55 s); the plain tree body builds its root histograms every round, lets every
    node split on every feature and compiles no monotone bounds. Only a tree variant with mh True (AdaBoost.MH's
    fits) compiles MH's histogram loop (the tree body gets None for it otherwise), and only one with kclass True
    (more than two classes) the K-class split scan (the tree body gets None for it otherwise: two-class fits compile
    only the binary scan); a stump variant with error_scan True (the error criterion) searches the histograms it
    builds with that criterion's scan alone, as a two-class tree variant with error_scan True (the error criterion,
    no monotone constraint, min_samples_leaf 1) searches its numeric features. numba drops a branch on a closure's
    constant, or on an argument that is None, before it types the code, so neither path's kernels are compiled (a
    cold stump fit compiles about 10 s less). Pass None on unchanged (an argument tested with ``is None`` where it
    is used): a value derived from it, such as ``None if extra is None else x``, is typed as an optional and both
    of its paths are compiled. A named tuple may carry it through functions that only pass it on (``SplitScan``):
    its field is typed None, and the function that tests it takes it as an argument. ``m`` is
    the number of rows chosen (``round_rows``: into ws.tree.rows for trees, ws.stump.kept for stumps), -1 for all.
    First the round's features are drawn (``sampling.draw_round``; nothing to draw without feature sampling).
    The closure holds only constants (numba's on-disk cache keys a closure by them; a function in it
    would pickle differently in every process).
    The bodies (and ``tree.grow_tree``) are inlined into the variant (``inline="always"``): numba optimises and
    emits the machine code of a function together with every function it calls, each time it compiles one on
    its own, so a body compiled apart was emitted twice (once alone, once in its variant); inlined, a cold
    ``fastboost compile`` takes about 15 % less CPU time, with the same models bit for bit.
    """
    def learn(data, config, ws, model, t):
        if plain:  # (every feature: nothing to draw)
            ws.limits.sample.drawn[0] = t
        else:
            draw_round(config, ws.limits.sample, t, body != _TREE, ws.state[0].untrimmed != 0)
        m = round_rows(config, ws, t, ws.tree.rows if body == _TREE else ws.stump.kept) if trim else -1
        cats = data.categorical if categorical else None
        for _ in range(2 if trim and body != _TREE else 1):  # (the body is inlined once)
            if body == _STUMP:
                _learn_stump(data, config, ws, model, t, m, cats, ws.limits.monotone if steps_back else None,
                             None if plain else ws.stump, None if error_scan else True)
            elif body == _STUMP_Q:
                _learn_stump_q(data, config, ws, model, t, m, cats)
            else:
                _learn_tree(data, config, ws, model, t, m, cats, True if mh else None, None if plain else ws.limits,
                            True if kclass else None, None if error_scan else True)
            if body == _TREE or m < 0 or config.trim_rate <= 0.0:
                break
            if not repeats_last_stump(data, config, model.rounds, t):
                break
            # a trimmed stump that is the last round's: its step was computed from every row, which the kept
            # rows need not show (VadaBoost's step leaves it an edge over every row that shrinks about 5 times
            # a round, so trimmed rounds kept taking it with steps near 0); learn again from every row, as the
            # loop does for a rejected round
            ws.state[0].untrimmed = 1
            m = round_rows(config, ws, t, ws.stump.kept)
            ws.state[0].untrimmed = 0
            ws.sums[0].max_step = np.inf

    name = ("learn_stump", "learn_stump_q", "learn_tree")[body]
    back = ", steps_back=True" if steps_back else ""
    back += ", plain=True" if plain else ""
    back += ", mh=True" if mh else ""
    back += ", kclass=True" if kclass else ""
    back += ", error_scan=True" if error_scan else ""
    return typed(LEARN_SIG, learn, name=f"{name}[trim={trim}, categorical={categorical}{back}]")


@jit
def repeats_last_stump(data, config, rounds, t):
    """True when round t's stump splits the training rows as round t - 1's, with the same outputs: the same
    feature, bin and categories, and the same side for missing values unless the feature has none."""
    if t == 0:
        return False
    a = rounds[t]
    b = rounds[t - 1]
    if (a.feature != b.feature or a.bin != b.bin or a.left != b.left or a.right != b.right
            or a.categorical != b.categorical):
        return False
    for w in range(a.cat_left.shape[0]):
        if a.cat_left[w] != b.cat_left[w]:
            return False
    if a.missing_left != b.missing_left:
        codes = data.codes[a.feature]
        for i in range(codes.shape[0]):
            if codes[i] == config.missing_code:
                return False
    return True


@jit
def round_rows(config, ws, t, kept):
    """The rows round t's learner reads: kept[:m] (increasing), m returned, -1 for every row. Weight trimming
    first (``trimmed_rows``), then row sampling draws from the rows it kept (``sampling.sample_rows``). The
    loop's retry of a rejected round (state.untrimmed) reads every row."""
    m = trimmed_rows(config, ws, t, kept)
    if config.sample_rows and ws.state[0].untrimmed == 0:
        m = sample_rows(ws.rows.w if config.u_is_w else ws.rows.u, config, t, kept, m, ws.limits.sample.hu)
    return m


@jit
def trimmed_rows(config, ws, t, kept):
    """Weight trimming: the number m of rows in kept[:m] holding at least config.trim_rate of the learner's
    weights; -1 (every row) when the loop retries a rejected round (state.untrimmed) or when reading every
    row is cheaper.

    With carried histograms (stumps, config.hist_rebuild > 1) the last round's rows are kept while they still
    hold the share (their carried histograms say what they hold; the weights sum to 1), up to
    config.hist_rebuild rounds, and ws.stump.hist then holds their histograms already (state.hist_ready).
    Otherwise the rows are chosen every round, but when they are more than trim.GATHER_MAX_SHARE of the rows
    the learner reads every row (they hold the share too) and the rows are chosen again only after
    trim.RECHOOSE_EVERY rounds (state.n_kept = -1 meanwhile).
    """
    state = ws.state[0]
    if config.trim_rate <= 0.0 or state.untrimmed != 0:
        state.n_kept = 0
        state.hist_ready = 0
        return -1
    carry = config.hist_rebuild > 1
    if carry and state.hist_ready != 0 and state.n_kept > 0 and t % config.hist_rebuild != 0:
        held = 0.0
        h = ws.stump.hist[0]  # every kept row is in one bin of feature 0
        for b in range(h.shape[0]):
            held += h[b, 0] + h[b, 1]
        if held >= config.trim_rate * (1.0 - TRIM_SLACK):
            return state.n_kept
    if not carry and state.n_kept < 0 and t % RECHOOSE_EVERY != 0:
        return -1  # the rows chosen last were most of them: every row until the next choice
    state.hist_ready = 0
    m = select_rows(ws.rows.w if config.u_is_w else ws.rows.u, config.trim_rate, kept)
    if not carry and m > GATHER_MAX_SHARE * ws.rows.w.shape[0]:
        state.n_kept = -1
        return -1
    state.n_kept = m
    return m


# ----------------------------------------------------------------------------- decision stumps (binary)
@jit(inline="always")
def _learn_stump(data, config, ws, model, t, m, categorical, mono, extra, criteria):
    """The best stump on the learner's weights (histograms, split search, one pass for its sums).

    With weight trimming or row sampling (m >= 0) the histograms hold only the m rows in ws.stump.kept chosen by
    round_rows (built from them, or carried from the last round's; with bootstrap by their counts); the stump's
    sums still run over every row. Only the round's features (ws.limits.sample.feats) have histograms.
    extra: None for the plain learner (no carried histograms, no monotone constraints: numba compiles neither
    path), anything else (ws.stump) for the learner that follows config. criteria: None when config.criterion is
    CRITERION_ERROR (the search as the histograms are built compiles only that criterion's scan), True for any."""
    rows = ws.rows
    st = ws.stump
    u = rows.w if config.u_is_w else rows.u
    state = ws.state[0]
    feats = ws.limits.sample.feats[:ws.limits.sample.drawn[1]]
    prepared = None if extra is None else False  # (None: the plain learner searches as it builds, always)
    if extra is not None and state.hist_ready != 0 and (m >= 0 or t % config.hist_rebuild != 0):
        # the histograms came from the last round's (incremental.py): only the search is left
        prepared = True
    elif m >= 0:
        hu = ws.limits.sample.hu if config.bootstrap else u
        build_histograms_rows(data.codes, rows.ylab, hu, st.kept[:m], st.hist, config.hist_groups, feats)
        prepared = True
    else:  # the histograms and each feature's best split in one parallel loop
        histograms_and_splits(data.codes, rows.ylab, u, st.hist, config, feats, data.n_value_bins, categorical,
                              st.fvalue, st.fbin, st.fmissing_left, criteria)
        if extra is not None and config.monotone:
            # that search had no constraints: the constrained features' again, with theirs
            rescan_constrained(st.hist, data.n_value_bins, config.missing_code, config.criterion,
                               ws.limits.monotone.direction, feats, st.fvalue, st.fbin, st.fmissing_left)
    state.hist_ready = 0
    model.rounds[t].n_seen = u.shape[0] if m < 0 else m
    if extra is None:  # (prepared is None: a constant where it is tested, inlined)
        _finish_stump(data, config, ws, model, t, u, None, categorical, feats, mono)
    else:
        _finish_stump(data, config, ws, model, t, u, prepared, categorical, feats, mono)
    if extra is not None and config.hist_rebuild > 1:  # the smaller side's histograms, for the next round's
        r = model.rounds[t]
        if m >= 0:  # of the kept rows' sides
            k, small_left = side_rows(data.codes[r.feature], r.bin, r.missing_left, config.missing_code,
                                      r.categorical != 0, r.cat_left[:], st.side_rows, st.kept[:m])
        else:
            k, small_left = side_rows(data.codes[r.feature], r.bin, r.missing_left, config.missing_code,
                                      r.categorical != 0, r.cat_left[:], st.side_rows)
        build_histograms_rows(data.codes, rows.ylab, u, st.side_rows[:k], st.side_hist, config.hist_groups, feats)
        state.small_left = small_left


@jit(inline="always")
def _learn_stump_q(data, config, ws, model, t, m, categorical):
    """learn_stump with the second histogram of q = w**2 / p (EBBoost's exact search). With weight trimming
    the stump comes from the kept rows' histograms; its sums of u and of q (the step's) from every row."""
    rows = ws.rows
    st = ws.stump
    u = rows.w if config.u_is_w else rows.u
    feats = ws.limits.sample.feats[:ws.limits.sample.drawn[1]]
    if m >= 0:
        build_histograms_q_rows(data.codes, rows.ylab, u, rows.q, st.kept[:m], st.hist, st.histq, feats)
    else:
        m = u.shape[0]
        build_histograms_q(data.codes, rows.ylab, u, rows.q, st.hist, st.histq, feats)
    model.rounds[t].n_seen = m
    _finish_stump(data, config, ws, model, t, u, True, categorical, feats, None)  # (EBBoost: no steps back)
    if m < u.shape[0]:  # trimmed: the step's sums of q over every row, as those of u (not the kept rows' histq)
        s = ws.sums[0]
        s.qi, s.qj = correct_wrong_sums(rows.q, rows.yh, rows.block_sums)


#: learn_stump(trim, categorical, steps_back=False): learn_stump's learn function for that kind of fit
learn_stump = functools.partial(_learn_variant, _STUMP)


#: learn_stump_q(trim, categorical): learn_stump_q's learn function for that kind of fit
learn_stump_q = functools.partial(_learn_variant, _STUMP_Q)


@jit(inline="always")
def _finish_stump(data, config, ws, model, t, u, prepared, categorical, feats, mono):
    """The stump from the round's histograms of the features feats, its sums over every row and its record.
    prepared: True when the histograms were built without their search (carried, or of chosen rows), False
    when each feature's best split is in ws.stump.fvalue / fbin / fmissing_left already, None for a learner
    whose histograms are always searched as they are built (numba then compiles no separate search into it).
    mono: the monotone constraints (Monotone) when the learner may step back (config.monotone_capped), None for
    a learner that never does (numba then compiles no step back into it)."""
    r = model.rounds[t]
    direction = ws.limits.monotone.direction
    if prepared is not None and prepared:
        f, k, ml, left, right, threshold, qi, qj, cat = choose_stump(
            ws.stump, data.n_value_bins, categorical, data.thresholds, config, r.cat_left, direction, feats)
    else:
        f, k, ml, left, right, threshold, qi, qj, cat = stump_from_feature_splits(
            ws.stump, data.n_value_bins, categorical, data.thresholds, config, r.cat_left, direction, feats)
    r.feature = f
    r.categorical = cat
    r.bin = k
    r.missing_left = ml
    r.left = left
    r.right = right
    r.threshold = threshold
    cap = np.inf
    if mono is not None and config.monotone_capped:
        cap = back_step(ws.stump.hist, data.n_value_bins, data.thresholds, config, mono, feats, r)
    apply_stump(data.codes[r.feature], r, config.missing_code, ws.rows, u, ws.sums)
    s = ws.sums[0]
    s.qi = qi
    s.qj = qj
    s.eta = 1.0
    s.max_step = cap


@jit
def back_step(hist, n_value_bins, thresholds, config, mono, feats, r):
    """Monotone constraints with capped steps back (config.monotone_capped, binary AdaBoost stumps): the round's
    stump r (its split fields, from the histograms hist of the features feats) is replaced by a step back on a
    constrained feature when one lowers AdaBoost's loss more (``split.best_back_step``, with the credit
    mono.credit); returns the most that stump's step may be (inf: the round's stump stays, unbounded)."""
    f0 = r.feature if r.left != r.right else feats[0]  # (a constant stump: any built feature's totals)
    wrong, total = stump_wrong(hist[f0], r.bin, r.missing_left, config.missing_code, r.left, r.right,
                               r.categorical != 0, r.cat_left)
    if not total > 0.0:
        return np.inf
    z_best = step_loss(wrong / total, np.inf, config.learning_rate)
    f, k, ml, left, right, cap = best_back_step(hist, n_value_bins, config.missing_code, mono.direction, mono.credit,
                                                feats, config.learning_rate, z_best)
    if f < 0:
        return np.inf
    r.feature = f
    r.categorical = 0
    for j in range(r.cat_left.shape[0]):
        r.cat_left[j] = 0
    r.bin = k
    r.missing_left = ml
    r.left = left
    r.right = right
    r.threshold = thresholds[f, k]
    return cap


@compiled(UPDATE_SIG)
def update_stump_weights(data, config, ws, model, t, alpha):
    """w_i <- w_i exp(-alpha y_i h_i) / Z; returns (Z, sum w**2 / p or 0). With carried histograms
    (config.hist_rebuild > 1) also the next round's histograms (incremental.py)."""
    return _update_stump_weights(data, config, ws, model, t, alpha, ws.stump)


@compiled(UPDATE_SIG)
def update_stump_weights_plain(data, config, ws, model, t, alpha):
    """update_stump_weights for the plain stump learner (``learn_stump(..., plain=True)``): no carried histograms,
    no monotone credit, and none of their code compiled."""
    return _update_stump_weights(data, config, ws, model, t, alpha, None)


@jit(inline="always")
def _update_stump_weights(data, config, ws, model, t, alpha, extra):
    """update_stump_weights; extra None: without the monotone credit's and the carried histograms' paths."""
    s = ws.sums[0]
    rows = ws.rows
    z, s2 = update_weights(rows.w, data.p, rows.yh, alpha, s.wi, s.wj, rows.block_sums, config.need_s2)
    if extra is not None and config.monotone_capped:  # the credit a later step back may take (split.add_credit)
        r = model.rounds[t]
        add_credit(ws.limits.monotone.credit, ws.limits.monotone.direction, r.feature, r.bin, r.left, r.right, alpha)
    if extra is not None and config.hist_rebuild > 1:  # the next round's histograms from this round's
        r = model.rounds[t]
        state = ws.state[0]
        side, other = (r.left, r.right) if state.small_left != 0 else (r.right, r.left)
        next_histograms(ws.stump.hist, ws.stump.side_hist, side, other, alpha, s.wi, s.wj)
        state.hist_ready = 1
    return z, s2


@compiled(UPDATE_SIG)
def update_stump_residuals(data, config, ws, model, t, alpha):
    """r_i <- r_i - alpha h_i (QuadBoost); returns (risk, 0)."""
    rows = ws.rows
    return update_residuals(rows.w, data.p, rows.yh, rows.ylab, alpha, rows.block_sums)


@compiled(VALIDATE_SIG)
def validate_stump(valid, config, ws, model, t, alpha):
    """Validation margins += alpha h_t for stump t; the weighted validation error."""
    return update_validation(valid, model.rounds[t], config.missing_code, alpha, ws.vblock_sums)


# ----------------------------------------------------------------------------- trees (binary or K classes)
@jit(inline="always")
def _learn_tree(data, config, ws, model, t, m, categorical, mh, extra, kclass, criteria):
    """A depth-wise tree on the learner's weights; its sums from the leaves (mh: True for AdaBoost.MH, else None).
    extra: None for the plain learner (no carried root histograms, no monotone constraints, no feature draws:
    numba compiles none of their code), ws.limits for the learner that follows config. kclass: None for two classes
    (only the binary split scan compiled, no K-vector leaves), True for more or for K-vector leaves. criteria: None
    when the splits' search is the error criterion's alone (two classes, no monotone constraint, min_samples_leaf 1:
    only its scan compiled), True otherwise.

    Least-squares leaves (QuadBoost): sums.ui - sums.uj = g = <h, r>_p and sums.eta = <h, h>_p,
    with each leaf's value in ws.tree.factor[:, 0]. Confidence-rated leaves: sums.z, the normaliser
    the leaves' values give.
    """
    rows = ws.rows
    ts = ws.tree
    u = rows.w if config.u_is_w else rows.u
    trows = TreeRows(data.codes, rows.ylab, u, rows.q, rows.w)
    # bootstrap: the tree grows on the drawn rows' counts; its leaves' sums come from u
    grow_rows = TreeRows(data.codes, rows.ylab, ws.limits.sample.hu, rows.q, rows.w) if (config.bootstrap and m >= 0) \
        else trows
    feats = ws.limits.sample.feats[:ws.limits.sample.drawn[1]]
    tree = model.nodes[t]
    # weight trimming (m >= 0): the tree grows on the rows holding config.trim_rate of u; its leaves' sums (and
    # so the leaf values, the step and the update) still come from every row
    carry = config.hist_rebuild > 1  # the root's histograms carried from round to round (incremental.py)
    if extra is not None and carry:
        state = ws.state[0]
        if state.hist_ready == 0 or t % config.hist_rebuild == 0:
            rows_histograms(trows, ts.rows, 0, u.shape[0], config.n_classes, False, ts.root_hist, config.hist_groups,
                            feats, mh)  # (carried: discrete leaves, or AdaBoost.MH's stumps)
        root = ts.level_a[0]
        for f in range(root.shape[0]):  # loops: a slice copy would compile numba's shape-mismatch error path
            for b in range(root.shape[1]):
                for c in range(root.shape[2]):
                    root[f, b, c] = ts.root_hist[f, b, c]
        state.hist_ready = 0
    n_nodes = grow_tree(grow_rows, data, categorical, config, ts, tree, m, ws.limits, trows, mh, extra,
                        SplitScan(kclass, criteria))
    model.rounds[t].n_seen = u.shape[0] if m < 0 else m
    finish_tree_round(tree, n_nodes, config, ts.leaf_u, ts.leaf_w, ws.sums, model.rounds[t], ts.factor)
    if kclass is None:  # (two classes: no K-vector leaves, none of their code compiled)
        return
    if config.leaf == LEAF_VECTOR:
        ws.sums[0].z = vector_leaf_values(tree, n_nodes, config, ts.leaf_u, ts.leaf_w, model.values[t])
        if mh is not None and config.criterion == CRITERION_MH:  # (None: compiled into MH's fits only)
            _mh_round_sums(tree, n_nodes, config.n_classes, ts.leaf_u, ts.leaf_w, model.values[t], ws.sums)


@jit
def vector_leaf_values(tree, n_nodes, config, leaf_u, leaf_w, values):
    """K-vector leaves (SAMME.R): values[leaf, k] = (K - 1) (log(U_k + d) - mean_j log(U_j + d)) from the leaf's
    learner weights U_k by class (leaf_u) and d = config.leaf_smoothing (the weights sum to 1, so d is a share
    of the total); returns the normaliser Z = sum over leaves and classes of W_k exp(-values[leaf, k] / (K - 1))
    with the leaf's boosting weights W_k (leaf_w): the loss after the round at alpha = 1 (Z < 1 unless the
    tree does not help).

    values  float64[max_nodes, K]  OUT  (internal nodes and unused slots: 0)
    """
    n_classes = config.n_classes
    k1 = n_classes - 1.0
    d = config.leaf_smoothing
    z = 0.0
    for node in range(values.shape[0]):
        for k in range(n_classes):
            values[node, k] = 0.0
    if config.criterion == CRITERION_MH:
        return _mh_leaf_values(tree, n_nodes, n_classes, d / n_classes, leaf_u, leaf_w, values)
    for node in range(n_nodes):
        if tree[node].left >= 0:
            continue
        mean = 0.0
        for k in range(n_classes):
            mean += np.log(leaf_u[node, k] + d)
        mean /= n_classes
        for k in range(n_classes):
            h = k1 * (np.log(leaf_u[node, k] + d) - mean)
            values[node, k] = h
            z += leaf_w[node, k] * np.exp(-h / k1)
    return z


@jit
def _mh_leaf_values(tree, n_nodes, n_classes, d, leaf_u, leaf_w, values):
    """AdaBoost.MH's K-vector leaves: values[leaf, k] = 1/2 log((W+_k + d) / (W-_k + d)) from the leaf's pair
    weights of class k, W+_k of its rows of class k (leaf_u[leaf, k]) and W-_k of its other rows
    (leaf_w[leaf, k]), d the smoothing (a share of the total: the pair weights sum to 1); returns
    Z = sum over leaves and classes of W+_k exp(-v_k) + W-_k exp(v_k), the loss after the round at alpha = 1."""
    z = 0.0
    for node in range(n_nodes):
        if tree[node].left >= 0:
            continue
        for k in range(n_classes):
            v = 0.5 * np.log((leaf_u[node, k] + d) / (leaf_w[node, k] + d))
            values[node, k] = v
            z += leaf_u[node, k] * np.exp(-v) + leaf_w[node, k] * np.exp(v)
    return z


@jit
def _mh_round_sums(tree, n_nodes, n_classes, leaf_u, leaf_w, values, sums):
    """AdaBoost.MH's round sums (sums[0].ui = wi, uj = wj): the weight of the (row, class) pairs whose leaf value
    has the sign of their label (y = +1 and v > 0, or y = -1 and v <= 0), and of the others (the round's
    error: the weighted Hamming loss of the signs of the leaf values)."""
    right = 0.0
    wrong = 0.0
    for node in range(n_nodes):
        if tree[node].left >= 0:
            continue
        for k in range(n_classes):
            if values[node, k] > 0.0:
                right += leaf_u[node, k]
                wrong += leaf_w[node, k]
            else:
                right += leaf_w[node, k]
                wrong += leaf_u[node, k]
    s = sums[0]
    s.ui = right
    s.wi = right
    s.uj = wrong
    s.wj = wrong


#: learn_tree(trim, categorical): learn_tree's learn function for that kind of fit
learn_tree = functools.partial(_learn_variant, _TREE)


@jit
def finish_tree_round(tree, n_nodes, config, leaf_u, leaf_w, sums, r, factor):
    """A grown tree's round: its sums (sums[0]) from the leaves, its root split in the round record r, and
    what the update needs (least squares: each leaf's value in factor[:, 0]; confidence-rated: sums.z)."""
    tree_round_sums(tree, n_nodes, config.n_classes, leaf_u, leaf_w, sums)
    s = sums[0]
    s.eta = 1.0
    root = tree[0]
    r.feature = max(root.feature, 0)
    r.categorical = root.categorical
    for j in range(r.cat_left.shape[0]):
        r.cat_left[j] = root.cat_left[j]
    r.bin = root.bin
    r.missing_left = root.missing_left
    r.left = 0
    r.right = 0
    r.threshold = root.threshold if root.left >= 0 else np.inf  # (NaN: a categorical root)
    if config.leaf == LEAF_LSQ:
        # least-squares voter h = mean residual per leaf: g = <h, r>_p, eta = <h, h>_p
        g = 0.0
        eta = 0.0
        for node in range(n_nodes):
            if tree[node].left < 0:
                v = tree[node].value
                g += v * (leaf_u[node, 1] - leaf_u[node, 0])
                eta += v * v * leaf_u[node, config.n_classes]
                factor[node, 0] = v
        s.ui = max(g, 0.0)
        s.uj = max(-g, 0.0)
        s.eta = eta
    elif config.leaf == LEAF_REAL:
        # confidence-rated leaves, alpha = 1: Z = sum over leaves of W+ exp(-v) + W- exp(v)
        z = 0.0
        for node in range(n_nodes):
            if tree[node].left < 0:
                v = tree[node].value
                z += leaf_w[node, 1] * np.exp(-v) + leaf_w[node, 0] * np.exp(v)
        s.z = z


@compiled(UPDATE_SIG)
def update_tree_weights(data, config, ws, model, t, alpha):
    """Discrete binary leaves: w_i exp(-+alpha) / Z by whether row i's leaf names its class, from the
    leaves (the same products as update_weights on the tree's outputs, without the y*h pass). With carried
    histograms (config.hist_rebuild > 1) also the next round's root histograms (incremental.py)."""
    return _update_discrete_leaves(data, config, ws, model, t, alpha, ws.tree.factor, ws.tree)


@compiled(UPDATE_SIG)
def update_tree_weights_plain(data, config, ws, model, t, alpha):
    """update_tree_weights for the plain tree learner (``learn_tree(..., plain=True)``): no carried histograms,
    and none of their code compiled."""
    return _update_discrete_leaves(data, config, ws, model, t, alpha, ws.tree.factor, None)


@compiled(UPDATE_SIG)
def update_tree_weights_samme(data, config, ws, model, t, alpha):
    """Discrete leaves naming one of K classes: w_i exp(-alpha y_i h_i) / Z with y_i h_i = +1 where the
    leaf names row i's class. With carried histograms as update_tree_weights (a factor per leaf and class)."""
    return _update_samme(data, config, ws, model, t, alpha, ws.tree)


@compiled(UPDATE_SIG)
def update_tree_weights_samme_plain(data, config, ws, model, t, alpha):
    """update_tree_weights_samme for the plain tree learner: no carried histograms, none of their code compiled."""
    return _update_samme(data, config, ws, model, t, alpha, None)


@jit(inline="always")
def _update_samme(data, config, ws, model, t, alpha, extra):
    """update_tree_weights_samme; extra None: without the carried histograms' path."""
    if extra is not None and config.hist_rebuild > 1:
        return _update_discrete_leaves(data, config, ws, model, t, alpha,
                                       np.empty((model.nodes[t].shape[0], config.n_classes)), extra)
    rows = ws.rows
    tree_outputs(ws.tree.leaf_of_row, model.nodes[t], rows.ylab, rows.yh)
    s = ws.sums[0]
    return update_weights(rows.w, data.p, rows.yh, alpha, s.wi, s.wj, rows.block_sums, config.need_s2)


@jit
def _update_discrete_leaves(data, config, ws, model, t, alpha, factor, extra):
    """w_i <- w_i * factor[leaf_i, y_i] with factor = exp(-alpha) / Z where the leaf names the class, else
    exp(alpha) / Z (factor float64[n_nodes, n_classes] OUT); with carried histograms the update also marks
    the rows the tree gets wrong (ws.tree.wrong) and the next round's root histograms follow (incremental.py).
    extra: None for the plain tree learner (no carried histograms: numba compiles none of their code).
    Returns (Z, sum w**2 / p or 0)."""
    tree = model.nodes[t]
    s = ws.sums[0]
    down = np.exp(-alpha)
    up = np.exp(alpha)
    z = s.wi * down + s.wj * up
    for node in range(tree.shape[0]):
        right_class = tree[node].class_
        for c in range(factor.shape[1]):
            factor[node, c] = (down if right_class == c else up) / z
    carry = config.hist_rebuild > 1
    leaf_class = np.empty(tree.shape[0] if carry else 0, np.int64)  # (plain learner: hist_rebuild <= 1)
    for node in range(leaf_class.shape[0]):
        leaf_class[node] = tree[node].class_
    rows = ws.rows
    ts = ws.tree
    s2 = update_weights_table(rows.w, data.p, ts.leaf_of_row, rows.ylab, factor, rows.block_sums, config.need_s2,
                              leaf_class, ts.wrong)
    if extra is not None and carry:  # the next round's root histograms from this round's (incremental.py)
        k, small_wrong = wrong_rows(ts.wrong, rows.block_sums, ts.tmp)
        rows_histograms(TreeRows(data.codes, rows.ylab, rows.w, rows.q, rows.w), ts.tmp, 0, k, config.n_classes,
                        False, ts.side_hist, config.hist_groups, ws.limits.sample.feats[:ws.limits.sample.drawn[1]],
                        None)
        next_tree_histograms(ts.root_hist, ts.side_hist, small_wrong, alpha, s.wi, s.wj)
        ws.state[0].hist_ready = 1
    return z, s2


@compiled(UPDATE_SIG)
def update_tree_weights_real(data, config, ws, model, t, alpha):
    """Confidence-rated leaves: w_i <- w_i exp(-alpha y_i v_leaf) / Z (alpha = 1, or the learning rate);
    returns (Z, sum w**2 / p). With carried histograms (config.hist_rebuild > 1: stumps) also the next round's
    root histograms: a stump's update multiplies a row's weight by a factor its side and class decide, as a
    discrete stump's does (incremental.py)."""
    return _update_real_leaves(data, config, ws, model, t, alpha, ws.tree)


@compiled(UPDATE_SIG)
def update_tree_weights_real_plain(data, config, ws, model, t, alpha):
    """update_tree_weights_real for the plain tree learner: no carried histograms, none of their code compiled."""
    return _update_real_leaves(data, config, ws, model, t, alpha, None)


@jit
def _update_real_leaves(data, config, ws, model, t, alpha, extra):
    """update_tree_weights_real; extra None: without the carried histograms' path."""
    tree = model.nodes[t]
    ts = ws.tree
    n_nodes = _grown_nodes(tree)
    z = 0.0  # as learn_tree's sums.z, with the leaf values times alpha
    for node in range(n_nodes):
        if tree[node].left < 0:
            v = alpha * tree[node].value
            z += ts.leaf_w[node, 1] * np.exp(-v) + ts.leaf_w[node, 0] * np.exp(v)
    for node in range(tree.shape[0]):
        v = alpha * tree[node].value
        ts.factor[node, 1] = np.exp(-v) / z
        ts.factor[node, 0] = np.exp(v) / z
    rows = ws.rows
    carry = config.hist_rebuild > 1 and n_nodes == 3  # a stump that splits: two leaves, a factor per class each
    side = other = 0
    if extra is not None and carry:  # (the plain learner: none of this compiled)
        side, other = _stump_side_histograms(data, config, ws, tree, rows.w, None)
    # (no leaf classes: the same specialisation as the discrete leaves' call, ts.wrong left untouched)
    s2 = update_weights_table(rows.w, data.p, ts.leaf_of_row, rows.ylab, ts.factor, rows.block_sums, True,
                              np.empty(0, np.int64), ts.wrong)
    if extra is not None and carry:
        next_real_histograms(ts.root_hist, ts.side_hist, ts.factor, side, other)
        ws.state[0].hist_ready = 1
    return z, s2


@jit
def _stump_side_histograms(data, config, ws, tree, u, mh):
    """Before a stump tree's update (carried root histograms): the rows of its smaller side (ws.tree.tmp) and their
    histograms of the learner weights u (ws.tree.side_hist; mh: True for AdaBoost.MH's fields, else None).
    Returns (the smaller side's leaf, the other leaf)."""
    root = tree[0]
    ts = ws.tree
    rows = ws.rows
    m, small_left = side_rows(data.codes[root.feature], root.bin, root.missing_left, config.missing_code,
                              root.categorical != 0, root.cat_left, ts.tmp)
    rows_histograms(TreeRows(data.codes, rows.ylab, u, rows.q, rows.w), ts.tmp, 0, m, config.n_classes, False,
                    ts.side_hist, config.hist_groups, ws.limits.sample.feats[:ws.limits.sample.drawn[1]], mh)
    side = root.left if small_left else root.right
    return side, root.left + root.right - side


@compiled(UPDATE_SIG)
def update_tree_weights_vector(data, config, ws, model, t, alpha):
    """K-vector leaves (SAMME.R): w_i <- w_i exp(-alpha h_{y_i}(x_i) / (K - 1)) / Z, i.e. w_i exp(-alpha / K
    y_i . h(x_i)) with y_i's K-vector coding (1 for its class, -1 / (K - 1) for the others; the values sum to
    0 in a leaf); returns (Z, sum w**2 / p or 0)."""
    values = model.values[t]
    ts = ws.tree
    n_classes = config.n_classes
    k1 = n_classes - 1.0
    tree = model.nodes[t]
    n_nodes = _grown_nodes(tree)
    z = 0.0  # as vector_leaf_values' Z, with the values times alpha
    for node in range(values.shape[0]):
        leaf = node < n_nodes and tree[node].left < 0
        for k in range(n_classes):
            ts.factor[node, k] = np.exp(-alpha * values[node, k] / k1)
            if leaf:
                z += ts.leaf_w[node, k] * ts.factor[node, k]
    for node in range(values.shape[0]):
        for k in range(n_classes):
            ts.factor[node, k] /= z
    rows = ws.rows
    s2 = update_weights_table(rows.w, data.p, ts.leaf_of_row, rows.ylab, ts.factor, rows.block_sums, config.need_s2)
    return z, s2


@jit(inline="always")
def _grown_nodes(tree):
    """The node slots tree uses: nodes are numbered as grown, the root, then two children per internal node."""
    n_nodes = 1
    for node in range(tree.shape[0]):
        if tree[node].left >= 0:
            n_nodes += 2
    return n_nodes


@compiled(UPDATE_SIG)
def update_tree_weights_mh(data, config, ws, model, t, alpha):
    """AdaBoost.MH's K-vector leaves (_update_mh), with carried histograms where config says (stumps); returns
    (Z, 0)."""
    tree = model.nodes[t]
    return _update_mh(data, config, ws, tree, _grown_nodes(tree), model.values[t], alpha, ws.limits), 0.0


@compiled(UPDATE_SIG)
def update_tree_weights_mh_plain(data, config, ws, model, t, alpha):
    """update_tree_weights_mh for the plain learner: no carried histograms, none of their code compiled."""
    tree = model.nodes[t]
    return _update_mh(data, config, ws, tree, _grown_nodes(tree), model.values[t], alpha, None), 0.0


@jit
def _update_mh(data, config, ws, tree, n_nodes, values, alpha, extra):
    """AdaBoost.MH: the pair weights w_ik <- w_ik exp(-alpha y_ik v_k(x_i)) / Z (y_ik = +1 for the row's class,
    -1 for the others; ws.rows.q), and each row's learner weight ws.rows.w from them; returns Z. With carried
    histograms (config.hist_rebuild > 1: stumps) also the next round's root histograms: those of the stump's
    smaller side, built before the update, and this round's, each field scaled by its leaf's factor
    (incremental.next_mh_histograms); extra None: without that path."""
    ts = ws.tree
    n_classes = config.n_classes
    z = 0.0
    for node in range(values.shape[0]):
        leaf = node < n_nodes and tree[node].left < 0
        for k in range(n_classes):
            ts.factor[node, k] = np.exp(-alpha * values[node, k])
            ts.factor[node, n_classes + k] = np.exp(alpha * values[node, k])
            if leaf:
                z += ts.leaf_u[node, k] * ts.factor[node, k] + ts.leaf_w[node, k] * ts.factor[node, n_classes + k]
    for node in range(values.shape[0]):
        for k in range(2 * n_classes):
            ts.factor[node, k] /= z
    rows = ws.rows
    carry = extra is not None and config.hist_rebuild > 1 and n_nodes == 3  # a stump that splits: two leaves
    side = other = 0
    if carry:
        side, other = _stump_side_histograms(data, config, ws, tree, rows.w if config.u_is_w else rows.u, True)
    update_pair_weights(rows.q, rows.w, ts.leaf_of_row, rows.ylab, ts.factor)
    if carry:
        next_mh_histograms(ts.root_hist, ts.side_hist, ts.factor, side, other, n_classes)
        ws.state[0].hist_ready = 1
    return z


@compiled(UPDATE_SIG)
def update_tree_weights_logistic(data, config, ws, model, t, alpha):
    """Confidence-rated leaves on the logistic loss (config.logistic; picked instead of the leaves' own update,
    so only these fits compile it): the margins move by alpha times the leaf values, and the weights are
    p sigma(-margin), normalised (update_logistic_pairs). Two classes: one margin a row, y_i F(x_i), whose
    weight is w_i. AdaBoost.MH (K-vector leaves): one a (row, class) pair, y_ik F_k(x_i), weighted in ws.rows.q,
    and w_i its own class's pair. Returns (the mean loss after the round / the one before (the loop state's
    log_mean_loss), 0)."""
    ts = ws.tree
    rows = ws.rows
    tree = model.nodes[t]
    if config.leaf == LEAF_VECTOR:
        values = model.values[t]
        for node in range(values.shape[0]):
            for k in range(config.n_classes):
                ts.factor[node, k] = alpha * values[node, k]
        loss = update_logistic_pairs(rows.q, rows.w, rows.margin, data.p, ts.leaf_of_row, rows.ylab, ts.factor,
                                     rows.block_sums)
    else:
        for node in range(tree.shape[0]):
            ts.factor[node, 0] = -alpha * tree[node].value  # (the one pair of a row is class 0's: y = -1)
        loss = update_logistic_pairs(rows.w, rows.w, rows.margin, data.p, ts.leaf_of_row, rows.ylab, ts.factor,
                                     rows.block_sums)
    return loss / np.exp(ws.state[0].log_mean_loss), 0.0


@compiled(VALIDATE_SIG)
def validate_tree_vector(valid, config, ws, model, t, alpha):
    """K-vector leaves: validation margins += alpha values of tree t's leaf; the weighted validation error."""
    return update_validation_vector(valid, model.nodes[t], model.values[t], config.missing_code, alpha,
                                    ws.vblock_sums)


@compiled(UPDATE_SIG)
def update_tree_residuals(data, config, ws, model, t, alpha):
    """Least-squares leaves: r_i <- r_i - alpha v_leaf(i); returns (risk, 0)."""
    return update_residuals_leaves(ws.rows.w, data.p, ws.tree.leaf_of_row, ws.tree.factor, alpha,
                                   ws.rows.block_sums)


@compiled(VALIDATE_SIG)
def validate_tree(valid, config, ws, model, t, alpha):
    """Validation margins += alpha tree_t; the weighted validation error."""
    return update_validation_tree(valid, model.nodes[t], config.missing_code, alpha, config.n_classes, ws.vblock_sums)


# ----------------------------------------------------------------------------- no validation set
@compiled(VALIDATE_SIG)
def no_validation(valid, config, ws, model, t, alpha):
    """Never called (the loop validates only with validation rows); the loop needs a function all the same."""
    return np.nan


#: A weak learner for the loop: its learn, update and validate functions (``learn`` as made by
#: ``Learner.learn(trim, categorical)`` for the kind of fit, see _learn_variant).
Learner = namedtuple("Learner", ["learn", "update", "validate"])

LEARNERS = {
    "stump": Learner(learn_stump, update_stump_weights, validate_stump),
    "stump_q": Learner(learn_stump_q, update_stump_weights, validate_stump),
    "stump_residuals": Learner(learn_stump, update_stump_residuals, validate_stump),
    "tree": Learner(learn_tree, update_tree_weights, validate_tree),
    "tree_samme": Learner(learn_tree, update_tree_weights_samme, validate_tree),
    "tree_real": Learner(learn_tree, update_tree_weights_real, validate_tree),
    "tree_residuals": Learner(learn_tree, update_tree_residuals, validate_tree),
    "tree_vector": Learner(learn_tree, update_tree_weights_vector, validate_tree_vector),
    "tree_mh": Learner(learn_tree, update_tree_weights_mh, validate_tree_vector),
}

#: the learners with a plain variant (``learn(False, categorical, plain=True)``, for fits without carried
#: histograms, monotone constraints, feature draws or chosen rows), with that variant's update function
PLAIN_UPDATES = {"stump": update_stump_weights_plain, "stump_q": update_stump_weights_plain,
                 "stump_residuals": update_stump_residuals, "tree": update_tree_weights_plain,
                 "tree_samme": update_tree_weights_samme_plain, "tree_real": update_tree_weights_real_plain,
                 "tree_residuals": update_tree_residuals, "tree_vector": update_tree_weights_vector,
                 "tree_mh": update_tree_weights_mh_plain}
