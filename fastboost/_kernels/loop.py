"""The one compiled boosting loop.

Every algorithm is four small njit functions handed to the loop as first-class
function values, plus two flags (see ``fastboost._algorithms``):

- ``transform(w, p, y, u, q, ylab, params)``: what the weak learner sees: its
  weights u (and, for EBBoost, q = w**2 / p) from the boosting state w and the
  initial distribution p; a rule may also set the learner's labels ylab (which
  start equal to y: QuadBoost hands over sign(r) with weights p |r|);
- ``step(sums, t, params) -> alpha``: the step from the round's sums (``SUM_*``);
- ``stop(alpha, sums, t, params) -> CONTINUE | REJECT | ACCEPT_STOP``;
- ``cost(state, alpha, a, b, params) -> log cost``: the algorithm's cost after the
  round from the update's results (a, b) = (Z, sum_i w_i**2 / p_i) for the
  multiplicative update or (sum_i p_i r_i**2, 0) for the additive one; it may keep
  its own running quantities in ``state``;
- ``opts[OPT_ADDITIVE]``: w <- w exp(-alpha y h) / Z (AdaBoost family) or
  residuals r <- r - alpha h (QuadBoost); ``opts[OPT_USE_Q]``: also build the
  w**2 / p histogram (EBBoost's exact search, ``CRITERION_EB``).

Because the rules are typed by signature (``numba.types.FunctionType``), the
loop is compiled once for all algorithms and its machine code is cached on
disk; passing plain dispatchers instead would specialise it per algorithm and
miss the cache in every new process. The typed loop is built on first use
(:func:`get_boost`), after numba's thread pool is up.
"""
import numpy as np
from numba import types

from .._config import jit, lazy_typed
from .._types import ACCEPT_STOP, OPT_ADDITIVE, OPT_CRITERION, OPT_FEATURE_RANK, OPT_PATIENCE
from .._types import OPT_USE_Q, R_ALPHA, R_BIN, R_EDGE, R_ERROR, R_FEATURE, R_LEARNER_ERROR, R_LEFT, R_LOG_COST
from .._types import R_MISSING_LEFT, R_RIGHT, R_THRESHOLD, R_VAL_ERROR, RAN_ALL, REJECT, STATE_BEST_T
from .._types import STATE_BEST_VAL, STATE_SINCE_BEST, STOPPED_BY_RULE, STOPPED_EARLY, SUM_QI, SUM_QJ, SUM_UI
from .._types import FOPT_LEAF_SCALE, FOPT_LEAF_SMOOTHING, FOPT_MIN_WEIGHT_LEAF, LEAF_LSQ, LEAF_REAL, N_BIN
from .._types import N_CLASS, N_FEATURE, OPT_HIST_GROUPS, OPT_NEED_S2, OPT_U_IS_W, SUM_ETA
from .._types import N_LEFT, N_MISSING_LEFT, N_THRESHOLD, N_VALUE, OPT_LEAF, OPT_MAX_DEPTH, OPT_MIN_SAMPLES_LEAF
from .._types import OPT_N_CLASSES, SUM_UJ, SUM_WI, SUM_WJ
from .histogram import build_histograms, build_histograms_q
from .split import choose_stump
from .tree import grow_tree, tree_outputs, tree_round_sums, update_validation_tree
from .update import apply_stump, update_residuals, update_residuals_leaves, update_validation, update_weights
from .update import update_weights_table

f8_1d = types.Array(types.float64, 1, "C")
f8_2d = types.Array(types.float64, 2, "C")
f8_3d = types.Array(types.float64, 3, "C")
f8_4d = types.Array(types.float64, 4, "C")
i8_3d = types.Array(types.int64, 3, "C")
i8_1d = types.Array(types.int64, 1, "C")
i8_2d = types.Array(types.int64, 2, "C")
u1_1d = types.Array(types.uint8, 1, "C")
u1_2d = types.Array(types.uint8, 2, "C")
s1_1d = types.Array(types.int8, 1, "C")

TRANSFORM_SIG = types.void(f8_1d, f8_1d, u1_1d, f8_1d, f8_1d, u1_1d, f8_1d)
STEP_SIG = types.float64(f8_1d, types.int64, f8_1d)
STOP_SIG = types.int64(types.float64, f8_1d, types.int64, f8_1d)
COST_SIG = types.float64(f8_1d, types.float64, types.float64, types.float64, f8_1d)

LOOP_SIG = types.UniTuple(types.int64, 2)(
    u1_2d, u1_1d, f8_1d,  # codes, y, p
    i8_1d, types.int64, f8_2d, i8_1d, f8_1d,  # n_value_bins, missing_code, thresholds, opts, fopts
    types.FunctionType(TRANSFORM_SIG), types.FunctionType(STEP_SIG),
    types.FunctionType(STOP_SIG), types.FunctionType(COST_SIG), f8_1d,  # rule, params
    f8_1d, f8_1d, f8_1d, u1_1d, f8_3d, f8_3d, s1_1d, f8_2d, f8_1d,  # w, u, q, ylab, hist, histq, yh, bsums, sums
    f8_1d, i8_1d, i8_1d, f8_1d,  # fvalue, fbin, fmissing_left, state
    u1_2d, u1_1d, f8_1d, f8_1d, f8_2d,  # vcodes, vy, vp, vmargin, vblock_sums
    i8_1d, i8_1d, f8_4d, f8_4d, i8_2d, i8_1d,  # tree scratch: idx, tmp, hist_a, hist_b, node_range, leaf_of_row
    f8_2d, f8_2d, f8_2d,  # leaf_u, leaf_w, factor
    types.int64, types.int64, i8_2d, f8_2d, i8_3d, f8_3d,  # t_start, t_stop, irec, frec, tree_i, tree_f
)


@jit
def record_round(irec, frec, t, f, k, ml, left, right, threshold, alpha, sums, additive):
    """Row t of the round record (trees: the root split) from the round's stump and sums; no cost yet."""
    irec[t, R_FEATURE] = f
    irec[t, R_BIN] = k
    irec[t, R_MISSING_LEFT] = ml
    irec[t, R_LEFT] = left
    irec[t, R_RIGHT] = right
    frec[t, R_THRESHOLD] = threshold
    frec[t, R_ALPHA] = alpha
    frec[t, R_ERROR] = np.nan if additive else sums[SUM_WJ]
    total = sums[SUM_UI] + sums[SUM_UJ]
    frec[t, R_LEARNER_ERROR] = sums[SUM_UJ] / total if total > 0.0 else np.nan  # trees: by the leaves' classes
    frec[t, R_EDGE] = sums[SUM_UI] - sums[SUM_UJ]
    frec[t, R_VAL_ERROR] = np.nan


def _boost(codes, y, p, n_value_bins, missing_code, thresholds, opts, fopts,
          transform, step, stop, cost, params,
          w, u, q, ylab, hist, histq, yh, block_sums, sums, fvalue, fbin, fmissing_left, state,
          vcodes, vy, vp, vmargin, vblock_sums,
          idx, tmp, hist_a, hist_b, node_range, leaf_of_row, leaf_u, leaf_w, factor,
          t_start, t_stop, irec, frec, tree_i, tree_f):
    """Run rounds ``t_start .. t_stop - 1`` of stump boosting.

    codes         uint8[n_features, n_samples]    IN   binned X, feature-major
    y             uint8[n_samples]                IN   class index 0 (y=-1) / 1 (y=+1)
    p             float64[n_samples]              IN   initial distribution (sample weights, sum 1)
    n_value_bins  int64[n_features]               IN   non-missing bins per feature
    thresholds    float64[n_features, 256]        IN   raw threshold of "code <= k" (inf past the last edge)
    opts          int64[N_OPTS]                   IN   OPT_* (criterion, feature rank, flags, patience, tree)
    fopts         float64[N_FOPTS]                IN   FOPT_* (tree leaves)
    params        float64[:]                      IN   the rule's parameters
    w             float64[n_samples]              IN/OUT boosting weights (sum 1), or residuals (additive)
    ylab          uint8[n_samples]                IN/OUT learner labels (equal to y unless the rule sets them)
    state         float64[N_STATE]                IN/OUT
    vcodes, vy, vp  uint8[n_features, n_val], uint8[n_val], float64[n_val]  IN  binned validation set
    vmargin       float64[n_val]                  IN/OUT validation margins (n_val may be 0)
    u, q, hist, histq, yh, block_sums, sums, fvalue, fbin, fmissing_left, vblock_sums: scratch
    (hist, histq: float64[n_features, n_bins, 2], histq only read with OPT_USE_Q;
    block_sums / vblock_sums: float64[update.n_blocks(n), 4])
    idx .. factor: the tree learner's scratch (see tree.grow_tree); unused by stumps (OPT_MAX_DEPTH 0)
    irec          int64[n_rounds, N_IREC]         OUT  rows t_start.. of the round record (trees: the root split)
    frec          float64[n_rounds, N_FREC]       OUT
    tree_i, tree_f  int64 / float64[n_rounds, max_nodes, N_NODE_I / N_NODE_F]  OUT  the trees (trees only)
    Returns (number of rounds kept, RAN_ALL | STOPPED_BY_RULE | STOPPED_EARLY).
    """
    criterion = opts[OPT_CRITERION]
    use_q = opts[OPT_USE_Q] != 0
    max_depth = opts[OPT_MAX_DEPTH]
    n_classes = opts[OPT_N_CLASSES]
    real_leaves = opts[OPT_LEAF] == LEAF_REAL
    ls_leaves = opts[OPT_LEAF] == LEAF_LSQ
    lam = params[0]  # EBBoost's lambda (only read with CRITERION_EB)
    n_val = vy.shape[0]
    u_is_w = opts[OPT_U_IS_W] != 0
    need_s2 = opts[OPT_NEED_S2] != 0
    lu = w if u_is_w else u  # the learner's weights
    for t in range(t_start, t_stop):
        alpha = 0.0
        decision = 0
        a = 0.0
        bb = 0.0
        if not u_is_w:
            transform(w, p, y, u, q, ylab, params)
        if max_depth > 0:
            # ------------------------------------------------ tree learner
            n_nodes = grow_tree(codes, ylab, lu, q, w, n_value_bins, missing_code, thresholds, n_classes, criterion,
                                max_depth, opts[OPT_MIN_SAMPLES_LEAF], fopts[FOPT_MIN_WEIGHT_LEAF], opts[OPT_LEAF],
                                fopts[FOPT_LEAF_SCALE], fopts[FOPT_LEAF_SMOOTHING], idx, tmp, hist_a, hist_b,
                                tree_i[t], tree_f[t], node_range, leaf_of_row, leaf_u, leaf_w, opts[OPT_HIST_GROUPS])
            tree_round_sums(tree_i[t], n_nodes, n_classes, leaf_u, leaf_w, sums)
            sums[SUM_ETA] = 1.0
            f = max(tree_i[t, 0, N_FEATURE], 0)
            k = tree_i[t, 0, N_BIN]
            ml = tree_i[t, 0, N_MISSING_LEFT]
            left = 0
            right = 0
            threshold = tree_f[t, 0, N_THRESHOLD] if tree_i[t, 0, N_LEFT] >= 0 else np.inf
            if ls_leaves:
                # least-squares voter h = mean residual per leaf: g = <h, r>_p, eta = <h, h>_p (spec §6 (7))
                g = 0.0
                eta = 0.0
                for node in range(n_nodes):
                    if tree_i[t, node, N_LEFT] < 0:
                        v = tree_f[t, node, N_VALUE]
                        g += v * (leaf_u[node, 1] - leaf_u[node, 0])
                        eta += v * v * leaf_u[node, n_classes]
                        factor[node, 0] = v
                sums[SUM_UI] = max(g, 0.0)
                sums[SUM_UJ] = max(-g, 0.0)
                sums[SUM_ETA] = eta
            elif not real_leaves:
                if n_classes > 2:  # (binary: the update reads the leaves directly)
                    tree_outputs(leaf_of_row, tree_i[t], ylab, yh)
            else:
                # confidence-rated leaves, alpha = 1: w <- w exp(-y v_leaf) / Z, Z from the leaves' sums
                z = 0.0
                for node in range(n_nodes):
                    if tree_i[t, node, N_LEFT] < 0:
                        v = tree_f[t, node, N_VALUE]
                        z += leaf_w[node, 1] * np.exp(-v) + leaf_w[node, 0] * np.exp(v)
                if not z < 1.0 - 1e-12:
                    return t - t_start, STOPPED_BY_RULE  # no leaf value lowers the loss
                for node in range(n_nodes):
                    v = tree_f[t, node, N_VALUE]
                    factor[node, 1] = np.exp(-v) / z
                    factor[node, 0] = np.exp(v) / z
                alpha = 1.0
                decision = 0
                a = z
                bb = update_weights_table(w, p, leaf_of_row, ylab, factor, block_sums, True)
        else:
            # ------------------------------------------------ stump fast path (binary)
            if use_q:
                build_histograms_q(codes, ylab, lu, q, hist, histq)
            else:
                build_histograms(codes, ylab, lu, hist, opts[OPT_HIST_GROUPS])
            f, k, ml, left, right, threshold, qi, qj = choose_stump(
                hist, histq, n_value_bins, missing_code, thresholds, criterion, lam, opts[OPT_FEATURE_RANK], fvalue,
                fbin, fmissing_left)
            apply_stump(codes[f], k, ml, missing_code, left, right, ylab, lu, w, yh, block_sums, sums)
            sums[SUM_QI] = qi
            sums[SUM_QJ] = qj
            sums[SUM_ETA] = 1.0
        if not (max_depth > 0 and real_leaves):
            alpha = step(sums, t + 1, params)
            decision = stop(alpha, sums, t + 1, params)
            if decision == REJECT:
                return t - t_start, STOPPED_BY_RULE
            if max_depth > 0 and ls_leaves:
                a, bb = update_residuals_leaves(w, p, leaf_of_row, factor, alpha, block_sums)
            elif max_depth > 0 and n_classes == 2:
                # discrete binary leaves: w_i * exp(-+alpha) / Z by whether row i's leaf names its class,
                # the same products as update_weights on tree_outputs, without the yh pass
                down = np.exp(-alpha)
                up = np.exp(alpha)
                a = sums[SUM_WI] * down + sums[SUM_WJ] * up
                for node in range(n_nodes):
                    right_class = tree_i[t, node, N_CLASS]
                    factor[node, 0] = (down if right_class == 0 else up) / a
                    factor[node, 1] = (down if right_class == 1 else up) / a
                bb = update_weights_table(w, p, leaf_of_row, ylab, factor, block_sums, need_s2)
            elif opts[OPT_ADDITIVE] != 0:
                a, bb = update_residuals(w, p, yh, ylab, alpha, block_sums)
            else:
                a, bb = update_weights(w, p, yh, alpha, sums[SUM_WI], sums[SUM_WJ], block_sums, need_s2)
        record_round(irec, frec, t, f, k, ml, left, right, threshold, alpha, sums, opts[OPT_ADDITIVE] != 0)
        frec[t, R_LOG_COST] = cost(state, alpha, a, bb, params)
        if n_val > 0:
            if max_depth > 0:
                err = update_validation_tree(vcodes, missing_code, tree_i[t], tree_f[t], alpha, n_classes, vy, vp,
                                             vmargin, vblock_sums)
            else:
                err = update_validation(vcodes[f], k, ml, missing_code, left, right, alpha, vy, vp, vmargin,
                                        vblock_sums)
            frec[t, R_VAL_ERROR] = err
            if err < state[STATE_BEST_VAL]:
                state[STATE_BEST_VAL] = err
                state[STATE_BEST_T] = t + 1
                state[STATE_SINCE_BEST] = 0.0
            else:
                state[STATE_SINCE_BEST] += 1.0
                if opts[OPT_PATIENCE] > 0 and state[STATE_SINCE_BEST] >= opts[OPT_PATIENCE]:
                    return t + 1 - t_start, STOPPED_EARLY
        if decision == ACCEPT_STOP:
            return t + 1 - t_start, STOPPED_BY_RULE
    return t_stop - t_start, RAN_ALL


#: The typed, cached loop: ``get_boost()(...)`` (compiled or loaded from numba's cache on first call).
get_boost = lazy_typed(LOOP_SIG, _boost)
