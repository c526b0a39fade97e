"""The one compiled boosting loop.

A round is: transform -> learn -> step -> stop -> update -> cost -> validation. The step is the rule's,
times the learning rate, at most the bound the learner reports with its hypothesis (``sums.max_step``).
Each of these is a compiled function handed to the loop as a first-class function
value (``rules``): the algorithm supplies transform, step, stop and cost
(``fastboost._algorithms``), the weak learner learn, update and validate
(``learners.py``). Because they are typed by signature (``signatures.py``), the loop
is compiled once for all algorithms and learners and its machine code is cached on
disk, while each rule is compiled only when a fit uses it.

The loop reads its options from one configuration record (``config``, CONFIG_DTYPE),
its scratch space and state from one workspace (``ws``, built by
``_driver.make_workspace``) and writes the fitted model into ``model`` (ROUND_DTYPE
and NODE_DTYPE arrays, which the estimator keeps as they are).
"""
import numpy as np

from .._config import jit, typed
from .._types import ACCEPT_STOP, RAN_ALL, REJECT, STOPPED_BY_RULE, STOPPED_EARLY
from .sampling import draws_features
from .signatures import LOOP_SIG


@jit
def record_round(rounds, t, alpha, sums, additive):
    """The round's step and its sums into rounds[t] (the learner wrote the split fields; no cost yet).

    sums  SUMS_DTYPE[1]  IN
    """
    s = sums[0]
    r = rounds[t]
    r.alpha = alpha
    r.error = np.nan if additive else s.wj
    total = s.ui + s.uj
    r.learner_error = s.uj / total if total > 0.0 else np.nan  # trees: by the leaves' classes
    r.edge = s.ui - s.uj
    r.val_error = np.nan
    r.lp_value = np.nan  # written between rounds by a master LP (LPBoost), if any
    r.lp_beta = np.nan


@jit
def bounded_step(alpha, sums):
    """The rule's step alpha, at most the weak hypothesis's max_step (sums SUMS_DTYPE record; inf: unbounded;
    a NaN alpha stays NaN, for the stop rule to reject)."""
    if sums.max_step < alpha:
        return sums.max_step
    return alpha


@jit
def record_validation(state, t, err, patience):
    """Track the best validation error after round t (0-based); True when ``patience`` rounds brought no new best."""
    if err < state.best_val:
        state.best_val = err
        state.best_t = t + 1
        state.since_best = 0
        return False
    state.since_best += 1
    return patience > 0 and state.since_best >= patience


def _boost(data, valid, config, rules, ws, model, t_start, t_stop):
    """Run rounds ``t_start .. t_stop - 1``; return the number of rounds kept (``ws.state[0].stop`` says why).

    data    TrainData   IN      the binned training set
    valid   ValidData   IN/OUT  the binned validation set and its margins (no rows: no validation)
    config  CONFIG_DTYPE record  IN
    rules   (transform, step, stop, cost, learn, update, validate)  IN  compiled functions
    ws      Workspace   IN/OUT  boosting weights ws.rows.w, state ws.state; the rest is scratch
    model   Model       OUT     rounds t_start.. of model.rounds (and model.nodes for trees)
    """
    transform, step, stop, cost, learn, update, validate = rules
    state = ws.state[0]
    sums = ws.sums[0]
    rounds = model.rounds
    n_val = valid.y.shape[0]
    for t in range(t_start, t_stop):
        if not config.u_is_w:
            transform(data, config, ws)
        sums.max_step = np.inf  # (the learner may bound its step: a step back on a constrained feature)
        learn(data, config, ws, model, t)
        alpha = bounded_step(step(sums, t + 1, config) * config.learning_rate, sums)
        decision = stop(alpha, sums, t + 1, config)
        if decision == REJECT and (model.rounds[t].n_seen < data.y.shape[0] or draws_features(config)):
            # a hypothesis learnt from part of the rows (weight trimming, row sampling) or of the features (their
            # draws) was rejected: learn from every row and every feature
            state.untrimmed = 1
            sums.max_step = np.inf
            learn(data, config, ws, model, t)
            state.untrimmed = 0
            alpha = bounded_step(step(sums, t + 1, config) * config.learning_rate, sums)
            decision = stop(alpha, sums, t + 1, config)
        if decision == REJECT:
            state.stop = STOPPED_BY_RULE
            return t - t_start
        a, b = update(data, config, ws, model, t, alpha)
        record_round(rounds, t, alpha, ws.sums, config.additive)
        rounds[t].log_cost = cost(state, alpha, a, b, config)
        if n_val > 0:
            err = validate(valid, config, ws, model, t, alpha)
            rounds[t].val_error = err
            if record_validation(state, t, err, config.patience):
                state.stop = STOPPED_EARLY
                return t + 1 - t_start
        if decision == ACCEPT_STOP:
            state.stop = STOPPED_BY_RULE
            return t + 1 - t_start
    state.stop = RAN_ALL
    return t_stop - t_start


#: The typed, cached loop (compiled or loaded from numba's cache on first use).
boost = typed(LOOP_SIG, _boost, name="boost")
