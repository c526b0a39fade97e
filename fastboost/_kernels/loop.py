"""The one compiled boosting loop.

Every algorithm is four small njit functions handed to :func:`boost` as
first-class function values (see ``fastboost._algorithms``):

- ``transform(w, p, u, params)``: the learner's weights u from the boosting
  weights w (sum 1) and the initial distribution p;
- ``step(sums, t, params) -> alpha``: the step from the round's correct/wrong sums;
- ``stop(alpha, sums, t, params) -> CONTINUE | REJECT | ACCEPT_STOP``;
- ``log_cost(log_mean_loss, s2, n, params) -> float``: log of the algorithm's
  cost, from log(sum_i p_i exp(-y_i F_i)), s2 = sum_i w_i**2 / p_i and n.

Because the rules are typed by signature (``numba.types.FunctionType``), the
loop is compiled once for all algorithms and its machine code is cached on
disk; passing plain dispatchers instead would specialise it per algorithm and
miss the cache in every new process. The typed loop is built on first use
(:func:`get_boost`), after numba's thread pool is up.
"""
import numba
import numpy as np
from numba import njit, types

from .._config import FASTMATH
from .._types import ACCEPT_STOP, R_ALPHA, R_BIN, R_ERROR, R_FEATURE, R_LEARNER_ERROR, R_LEFT
from .._types import R_LOG_COST, R_MISSING_LEFT, R_RIGHT, R_THRESHOLD, REJECT, SUM_UI, SUM_UJ, SUM_WI, SUM_WJ
from .histogram import build_histograms
from .split import best_feature, best_split_per_feature, leaf_value, side_weights
from .update import apply_stump, update_weights

f8_1d = types.Array(types.float64, 1, "C")
f8_2d = types.Array(types.float64, 2, "C")
f8_3d = types.Array(types.float64, 3, "C")
i8_1d = types.Array(types.int64, 1, "C")
i8_2d = types.Array(types.int64, 2, "C")
u1_1d = types.Array(types.uint8, 1, "C")
u1_2d = types.Array(types.uint8, 2, "C")
s1_1d = types.Array(types.int8, 1, "C")

TRANSFORM_SIG = types.void(f8_1d, f8_1d, f8_1d, f8_1d)
STEP_SIG = types.float64(f8_1d, types.int64, f8_1d)
STOP_SIG = types.int64(types.float64, f8_1d, types.int64, f8_1d)
COST_SIG = types.float64(types.float64, types.float64, types.float64, f8_1d)

STATE_LOG_MEAN_LOSS = 0  # log(sum_i p_i exp(-y_i F(x_i)))
STATE_N = 1  # number of examples with positive sample weight
N_STATE = 2

LOOP_SIG = types.UniTuple(types.int64, 2)(
    u1_2d, u1_1d, f8_1d,  # codes, y, p
    i8_1d, types.int64, f8_2d, types.int64,  # n_value_bins, missing_code, thresholds, criterion
    types.FunctionType(TRANSFORM_SIG), types.FunctionType(STEP_SIG),
    types.FunctionType(STOP_SIG), types.FunctionType(COST_SIG), f8_1d,  # rule (log_cost), params
    f8_1d, f8_1d, f8_3d, s1_1d, f8_2d, f8_1d,  # w, u, hist, yh, block_sums, sums
    f8_1d, i8_1d, i8_1d, f8_1d,  # fvalue, fbin, fmissing_left, state
    types.int64, types.int64, i8_2d, f8_2d,  # t_start, t_stop, irec, frec
)


def _boost(codes, y, p, n_value_bins, missing_code, thresholds, criterion,
          transform, step, stop, log_cost, params,
          w, u, hist, yh, block_sums, sums, fvalue, fbin, fmissing_left, state,
          t_start, t_stop, irec, frec):
    """Run rounds ``t_start .. t_stop - 1`` of stump boosting.

    codes         uint8[n_features, n_samples]    IN   binned X, feature-major
    y             uint8[n_samples]                IN   class index 0 (y=-1) / 1 (y=+1)
    p             float64[n_samples]              IN   initial distribution (sample weights, sum 1)
    n_value_bins  int64[n_features]               IN   non-missing bins per feature
    thresholds    float64[n_features, 256]        IN   raw threshold of "code <= k" (inf past the last edge)
    w             float64[n_samples]              IN/OUT boosting weights (sum 1)
    state         float64[N_STATE]                IN/OUT
    u, hist, yh, block_sums, sums, fvalue, fbin, fmissing_left: scratch, preallocated
    (block_sums: float64[update.n_blocks(n_samples), 4])
    irec          int64[n_rounds, N_IREC]         OUT  rows t_start.. of the round record
    frec          float64[n_rounds, N_FREC]       OUT
    Returns (number of rounds kept, 1 if the stop rule ended boosting else 0).
    """
    for t in range(t_start, t_stop):
        transform(w, p, u, params)
        build_histograms(codes, y, u, hist)
        best_split_per_feature(hist, n_value_bins, missing_code, criterion, fvalue, fbin, fmissing_left)
        c0 = 0.0  # class weights of all rows (any feature's histogram holds them all)
        c1 = 0.0
        for b in range(missing_code + 1):
            c0 += hist[0, b, 0]
            c1 += hist[0, b, 1]
        f = best_feature(fvalue, c0 + c1)
        if f < 0:
            # no feature splits the weighted rows: fall back to the constant weak hypothesis
            f = 0
            k = missing_code - 1
            ml = 1
            left = leaf_value(c0, c1)
            right = left
            threshold = np.inf
        else:
            k = fbin[f]
            ml = fmissing_left[f]
            l0, l1, r0, r1 = side_weights(hist[f], k, ml, missing_code)
            left = leaf_value(l0, l1)
            right = leaf_value(r0, r1)
            threshold = thresholds[f, k]
        apply_stump(codes[f], k, ml, missing_code, left, right, y, u, w, yh, block_sums, sums)
        alpha = step(sums, t + 1, params)
        decision = stop(alpha, sums, t + 1, params)
        if decision == REJECT:
            return t - t_start, 1
        z, s2 = update_weights(w, p, yh, alpha, sums[SUM_WI], sums[SUM_WJ], block_sums)
        state[STATE_LOG_MEAN_LOSS] += np.log(z)
        irec[t, R_FEATURE] = f
        irec[t, R_BIN] = k
        irec[t, R_MISSING_LEFT] = ml
        irec[t, R_LEFT] = left
        irec[t, R_RIGHT] = right
        frec[t, R_THRESHOLD] = threshold
        frec[t, R_ALPHA] = alpha
        frec[t, R_ERROR] = sums[SUM_WJ]
        frec[t, R_LEARNER_ERROR] = sums[SUM_UJ] / (sums[SUM_UI] + sums[SUM_UJ])
        frec[t, R_LOG_COST] = log_cost(state[STATE_LOG_MEAN_LOSS], s2, state[STATE_N], params)
        if decision == ACCEPT_STOP:
            return t + 1 - t_start, 1
    return t_stop - t_start, 0


_boost_typed = None


def get_boost():
    """The typed, cached loop; compiled or loaded from numba's cache on first call.

    Starts numba's thread pool first: cached parallel code links against the
    pool's scheduler symbols ("Symbol not found: allocate_sched" otherwise).
    """
    global _boost_typed
    if _boost_typed is None:
        numba.get_num_threads()
        _boost_typed = njit(LOOP_SIG, cache=True, nogil=True, fastmath=FASTMATH)(_boost)
    return _boost_typed
