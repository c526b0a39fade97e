"""numba types of the loop's named structures and the signatures of the functions handed to the loop.

Every function the loop calls through a pointer (the algorithm's transform, step, stop
and cost, the weak learner's learn, update and validate) is compiled to one of these
signatures, so the loop is compiled once for every algorithm and learner and its
machine code is cached on disk; each rule is compiled only when a fit uses it.

Binned codes come in two widths (``CODES_DTYPES``): ``uint8`` (``max_bins <= 255``, the
default) and ``uint16`` (exact mode: ``max_bins=None`` or up to 65 535). A signature that
takes the training or validation data is therefore a dict ``{codes dtype: signature}``
(:func:`by_codes`); ``typed.get(codes)`` compiles the variant a fit's codes need, so a fit
on uint8 codes never compiles the uint16 one.
"""
import warnings

import numba
import numpy as np
from numba import types

from .._types import (
    CONFIG_DTYPE,
    NODE_DTYPE,
    ROUND_DTYPE,
    STATE_DTYPE,
    SUMS_DTYPE,
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

f8_1d = types.Array(types.float64, 1, "C")
f8_2d = types.Array(types.float64, 2, "C")
f8_3d = types.Array(types.float64, 3, "C")
f8_4d = types.Array(types.float64, 4, "C")
i8_1d = types.Array(types.int64, 1, "C")
i8_2d = types.Array(types.int64, 2, "C")
u2_1d = types.Array(types.uint16, 1, "C")  # class indices (Y_DTYPE)
u1_1d = types.Array(types.uint8, 1, "C")
u1_2d = types.Array(types.uint8, 2, "C")
i1_1d = types.Array(types.int8, 1, "C")

config_t = numba.from_dtype(CONFIG_DTYPE)
sums_t = numba.from_dtype(SUMS_DTYPE)
state_t = numba.from_dtype(STATE_DTYPE)
rounds_t = types.Array(numba.from_dtype(ROUND_DTYPE), 1, "C")
nodes_t = types.Array(numba.from_dtype(NODE_DTYPE), 2, "C")
sums_1d = types.Array(sums_t, 1, "C")
state_1d = types.Array(state_t, 1, "C")

#: the widths binned codes come in: uint8 (max_bins <= 255) and uint16 (exact mode)
CODES_DTYPES = (np.dtype(np.uint8), np.dtype(np.uint16))


def _data_types(codes_dtype):
    """(TrainData, ValidData) numba types for codes of this dtype."""
    codes_2d = types.Array(numba.from_dtype(codes_dtype), 2, "C")
    return (types.NamedTuple([codes_2d, u2_1d, f8_1d, i8_1d, f8_2d, u1_1d], TrainData),
            types.NamedTuple([codes_2d, u2_1d, f8_1d, f8_1d], ValidData))


def by_codes(make):
    """{codes dtype: make(train_t, valid_t)}: one signature per width of the binned codes."""
    return {dt: make(*_data_types(dt)) for dt in CODES_DTYPES}


train_t, valid_t = _data_types(CODES_DTYPES[0])  # the default width's types
model_t = types.NamedTuple([rounds_t, nodes_t, f8_3d], Model)
row_state_t = types.NamedTuple([f8_1d, f8_1d, f8_1d, u2_1d, i1_1d, f8_2d, f8_1d],  # w, u, q, ylab, yh, block_sums,
                               RowState)  # margin
stump_scratch_t = types.NamedTuple([
    f8_3d, f8_3d, f8_1d, i8_1d, i8_1d,  # hist, histq, fvalue, fbin, fmissing_left
    i8_1d, i8_1d, f8_3d,  # kept, side_rows, side_hist
], StumpScratch)
tree_scratch_t = types.NamedTuple([
    i8_1d, i8_1d, f8_4d, f8_4d, i8_2d, i8_1d,  # rows, tmp, level_a, level_b, node_range, leaf_of_row
    f8_2d, f8_2d, f8_2d,  # leaf_u, leaf_w, factor
    f8_3d, f8_3d, i1_1d,  # root_hist, side_hist, wrong
], TreeScratch)
monotone_t = types.NamedTuple([i1_1d, f8_2d, f8_2d], Monotone)  # direction, bounds, credit
sample_scratch_t = types.NamedTuple([
    u1_1d, u1_2d, u1_1d, i8_1d, i8_1d,  # grouped, groups, fmask, feats, drawn
    u1_2d, u1_2d, f8_1d,  # node_groups, allowed, hu
], SampleScratch)
limits_t = types.NamedTuple([monotone_t, sample_scratch_t], Limits)
workspace_t = types.NamedTuple([row_state_t, sums_1d, state_1d, stump_scratch_t, tree_scratch_t, f8_2d, limits_t],
                               Workspace)

#: transform(data, config, ws): the learner's weights ws.rows.u (and q, ylab) from the boosting state ws.rows.w
TRANSFORM_SIG = by_codes(lambda train, valid: types.void(train, config_t, workspace_t))
#: step(sums, t, config) -> alpha, the round's step from its sums (t = 1, 2, ...)
STEP_SIG = types.float64(sums_t, types.int64, config_t)
#: stop(alpha, sums, t, config) -> CONTINUE | REJECT | ACCEPT_STOP
STOP_SIG = types.int64(types.float64, sums_t, types.int64, config_t)
#: cost(state, alpha, a, b, config) -> log of the algorithm's cost after the round, from the update's (a, b)
COST_SIG = types.float64(state_t, types.float64, types.float64, types.float64, config_t)
#: learn(data, config, ws, model, t): the weak hypothesis of round t into model (its split fields, its
#: tree) and its sums into ws.sums
LEARN_SIG = by_codes(lambda train, valid: types.void(train, config_t, workspace_t, model_t, types.int64))
#: update(data, config, ws, model, t, alpha) -> (a, b): the boosting state ws.rows.w after adding alpha h_t;
#: (Z, sum w**2 / p) for multiplicative rules, (risk, 0) for additive ones
UPDATE_SIG = by_codes(lambda train, valid: types.UniTuple(types.float64, 2)(
    train, config_t, workspace_t, model_t, types.int64, types.float64))
#: validate(valid, config, ws, model, t, alpha) -> the weighted validation error after adding alpha h_t
VALIDATE_SIG = by_codes(lambda train, valid: types.float64(
    valid, config_t, workspace_t, model_t, types.int64, types.float64))

with warnings.catch_warnings():  # numba calls first-class function types "experimental"
    warnings.simplefilter("ignore", numba.NumbaExperimentalFeatureWarning)
    rules_t = {dt: types.Tuple([types.FunctionType(sig[dt] if isinstance(sig, dict) else sig) for sig in (
        TRANSFORM_SIG, STEP_SIG, STOP_SIG, COST_SIG, LEARN_SIG, UPDATE_SIG, VALIDATE_SIG)]) for dt in CODES_DTYPES}
    step_fn_t = types.FunctionType(STEP_SIG)

#: boost(data, valid, config, rules, ws, model, t_start, t_stop) -> rounds kept
LOOP_SIG = {dt: types.int64(train, valid, config_t, rules_t[dt], workspace_t, model_t, types.int64, types.int64)
            for dt, (train, valid) in ((dt, _data_types(dt)) for dt in CODES_DTYPES)}
