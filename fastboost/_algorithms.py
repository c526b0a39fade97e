"""Algorithms as rules for the one boosting loop (``fastboost._kernels.loop``).

An algorithm is a weight transform (what the weak learner sees), a step rule
(alpha from the round's correct/wrong sums), a stop rule and its cost (as a log,
which cannot underflow), each a small compiled function with the loop's rule
signature (``_kernels/signatures.py``), compiled the first time a fit uses it,
plus two flags: an additive (residual) update instead of the multiplicative one,
and the w**2 histogram. The rules read their parameters from the fit's
configuration record by name (``config.lam``, ``config.gamma``, ...). Adding an
algorithm is a few lines here plus an entry in ``RULES``; it never needs a loop
of its own. docs/algorithms.md states every rule and where it comes from.

Notation: w are the boosting weights (sum 1), p the initial distribution
(uniform 1/n without sample weights), I / J the examples the weak hypothesis
gets right / wrong.
"""
from collections import namedtuple

import numpy as np

from ._config import compiled, jit
from ._kernels.signatures import COST_SIG, STEP_SIG, STOP_SIG, TRANSFORM_SIG
from ._kernels.update import residual_weights, squared_weights, variance_weights
from ._types import ACCEPT_STOP, CONTINUE, REJECT

#: A perfect weak hypothesis (no learner weight on errors) would get an infinite
#: step; the wrong-side sum is floored at ALPHA_EPS times the total instead, which
#: caps alpha at 1/2*log(1/ALPHA_EPS) ~ 11.5 (AdaBoost). The stop rule ends
#: boosting after an exactly perfect round; a nearly perfect one (error below
#: ALPHA_EPS) gets the capped step and boosting goes on. Our choice: the papers leave W_J = 0 open.
ALPHA_EPS = 1e-10

#: A weak hypothesis whose relative edge (U_I - U_J) / (U_I + U_J) is at most
#: MIN_EDGE counts as no better than chance: an edge that small is at the level
#: of the sums' rounding error (an exact error of 1/2 can come out as 1/2 - 1e-16).
MIN_EDGE = 1e-10

#: An algorithm for the loop. Besides the four rules and the flags ``additive`` and ``use_q``, two
#: speed hints: ``u_is_w`` (the transform is u = w: the loop skips it and the learner reads w) and
#: ``needs_s2`` (the cost reads sum_i w_i**2 / p_i, a division per row in the weight update).
Rule = namedtuple("Rule", ["transform", "step", "stop", "cost", "additive", "use_q", "u_is_w", "needs_s2"],
                  defaults=[False, True])


@jit
def _log_ratio(sums):
    """log(U_I / U_J), with U_J floored at ALPHA_EPS * (U_I + U_J)."""
    return _floored_log_ratio(sums.ui, sums.uj)


@jit
def _floored_log_ratio(a, b):
    """log(a / b) with b floored at ALPHA_EPS * (a + b): a finite step for a perfect hypothesis; 0 when
    there is no weight at all (a + b = 0: no step, and the stop rules reject the round)."""
    if not a + b > 0.0:
        return 0.0
    return np.log(a / max(b, ALPHA_EPS * (a + b)))


@jit
def _chance_or_worse(a, b):
    """True if a - b <= MIN_EDGE (a + b): the correct side does not beat the wrong side beyond rounding."""
    return a - b <= MIN_EDGE * (a + b)


# ----------------------------------------------------------------------------- shared rules
@compiled(STOP_SIG)
def stop_on_nonpositive_step(alpha, sums, t, config):
    """Discard the round and stop if alpha <= 0 (edge <= MIN_EDGE); keep it and stop after a perfect hypothesis."""
    if not alpha > 0.0 or _chance_or_worse(sums.ui, sums.uj):
        return REJECT
    if sums.uj == 0.0:
        return ACCEPT_STOP
    return CONTINUE


@compiled(TRANSFORM_SIG)
def identity_transform(data, config, ws):
    """u = w: the learner sees the boosting weights."""
    rows = ws.rows
    for i in range(rows.w.shape[0]):  # a loop: a slice copy would compile numba's shape-mismatch error path
        rows.u[i] = rows.w[i]


@compiled(COST_SIG)
def exponential_log_cost(state, alpha, z, s2, config):
    """log of the exponential loss sum_i exp(-y_i F(x_i)) (n * sum_i p_i exp(-y_i F) with sample weights).

    The loss is multiplied by the round's normaliser Z.
    """
    state.log_mean_loss += np.log(z)
    return np.log(state.n) + state.log_mean_loss


@compiled(COST_SIG)
def variance_log_cost(state, alpha, z, s2, config):
    """log C_lam, C_lam = (1 - lam) S1**2 + lam n S2 with l_i = exp(-y_i F(x_i)), S1 = sum l, S2 = sum l**2.

    VadaBoost's cost, also EBBoost's. From the loop's state: S1 = n M and
    S2 = n**2 M**2 sum_i w_i**2 / p_i / n with M = sum_i p_i l_i, so
    C = n**2 M**2 ((1 - lam) + lam s2).
    """
    lam = config.lam
    state.log_mean_loss += np.log(z)
    return 2.0 * (np.log(state.n) + state.log_mean_loss) + np.log((1.0 - lam) + lam * s2)


# ----------------------------------------------------------------------------- confidence-rated trees
@compiled(STEP_SIG)
def unit_step(sums, t, config):
    """alpha = 1: confidence-rated leaves carry their own step."""
    return 1.0


@compiled(STOP_SIG)
def stop_unless_loss_falls(alpha, sums, t, config):
    """Confidence-rated trees: discard the round and stop unless the leaves lower the loss (Z < 1)."""
    if not sums.z < 1.0 - 1e-12:
        return REJECT
    return CONTINUE


# ----------------------------------------------------------------------------- AdaBoost, lazy stumps
@compiled(STEP_SIG)
def adaboost_step(sums, t, config):
    """alpha = 1/2 log(W_I / W_J) + 1/2 log(K - 1), K classes (SAMME; the second term is 0 for K = 2)."""
    return 0.5 * (_log_ratio(sums) + np.log(config.n_classes - 1.0))


@compiled(STOP_SIG)
def adaboost_stop(alpha, sums, t, config):
    """As stop_on_nonpositive_step with SAMME's chance level: reject unless (K - 1) W_I beats W_J."""
    k1 = config.n_classes - 1.0
    if not alpha > 0.0 or _chance_or_worse(k1 * sums.ui, sums.uj):
        return REJECT
    if sums.uj == 0.0:
        return ACCEPT_STOP
    return CONTINUE


# ----------------------------------------------------------------------------- VadaBoost
@compiled(TRANSFORM_SIG)
def vadaboost_transform(data, config, ws):
    """u = lam * n * w**2 + (1 - lam) * w (with sample weights: lam * w**2 / p + (1 - lam) * w).

    With p = 1/n this is the paper's u; with sample weights it is the same cost
    written for the weighted empirical distribution p, so a weight of 2 equals a
    duplicated row and a weight of 0 a removed one.
    """
    variance_weights(ws.rows.w, data.p, config.lam, ws.rows.u)


@compiled(STEP_SIG)
def vadaboost_step(sums, t, config):
    """alpha = 1/4 log(U_I / U_J)."""
    return 0.25 * _log_ratio(sums)


# ----------------------------------------------------------------------------- EBBoost
@compiled(TRANSFORM_SIG)
def ebboost_transform(data, config, ws):
    """u = w, and q = w**2 / p (n w**2 for uniform p) for the second histogram."""
    squared_weights(ws.rows.w, data.p, ws.rows.u, ws.rows.q)


@jit
def _eb_ab(sums, lam):
    a = (1.0 - lam) * sums.ui * sums.ui + lam * sums.qi
    b = (1.0 - lam) * sums.uj * sums.uj + lam * sums.qj
    return a, b


@compiled(STEP_SIG)
def ebboost_step(sums, t, config):
    """alpha = 1/4 log(A / B), A = (1 - lam) W_I**2 + lam n Q_I, B likewise for J."""
    a, b = _eb_ab(sums, config.lam)
    return 0.25 * _floored_log_ratio(a, b)


@compiled(STOP_SIG)
def ebboost_stop(alpha, sums, t, config):
    """Stop without the round when A <= B (alpha = 0 up to rounding: no progress); keep it and stop if perfect."""
    a, b = _eb_ab(sums, config.lam)
    if not alpha > 0.0 or _chance_or_worse(a, b):
        return REJECT
    if b == 0.0:
        return ACCEPT_STOP
    return CONTINUE


# ----------------------------------------------------------------------------- SABoost
SCHEDULE_INVERSE = 0  # a_t = gamma / t
SCHEDULE_POWER = 1  # a_t = t ** -gamma
SCHEDULE_CONSTANT = 2  # a_t = gamma
SCHEDULES = {"inverse": SCHEDULE_INVERSE, "power": SCHEDULE_POWER, "constant": SCHEDULE_CONSTANT}


@compiled(STEP_SIG)
def saboost_step(sums, t, config):
    """a_t from the deterministic schedule config.schedule with scale config.gamma (t = 1, 2, ...)."""
    gamma = config.gamma
    kind = config.schedule
    if kind == SCHEDULE_INVERSE:
        return gamma / t
    if kind == SCHEDULE_POWER:
        return np.float64(t) ** -gamma
    return gamma


@compiled(STOP_SIG)
def saboost_stop(alpha, sums, t, config):
    """No alpha <= 0 break; stop (without the round) only when the learner's error reaches 1/2."""
    if _chance_or_worse(sums.ui, sums.uj):
        return REJECT
    return CONTINUE


# ----------------------------------------------------------------------------- QuadBoost
PENALTY_NONE = 0
PENALTY_L1 = 1
PENALTY_L2 = 2
PENALTY_LINF = 3
PENALTIES = {None: PENALTY_NONE, "l1": PENALTY_L1, "l2": PENALTY_L2, "linf": PENALTY_LINF}


@compiled(TRANSFORM_SIG)
def quadboost_transform(data, config, ws):
    """The residuals r = y - F (held in w) as a weighted classification: labels sign(r), weights p |r|
    (and q = p when allocated: least-squares trees need sum p per bin)."""
    rows = ws.rows
    residual_weights(rows.w, data.p, rows.ylab, rows.u, rows.q)


@jit
def quad_alpha(g, eta, lam, penalty, alpha_max):
    """The variant's minimiser along a voter with correlation g = <h, r>_p and eta = <h, h>_p."""
    if penalty == PENALTY_L1:
        return np.sign(g) * max(abs(g) - lam, 0.0) / eta
    if penalty == PENALTY_L2:
        return g / (eta + lam)
    if penalty == PENALTY_LINF:
        return min(max(g / eta, -alpha_max), alpha_max)
    return g / eta


@compiled(STEP_SIG)
def quadboost_step(sums, t, config):
    """alpha = rule(g, eta) with g = U_I - U_J = sum_i p_i h_i r_i (the residual reduction)
    and eta = sums.eta (1 for +-1 voters); 0 for a voter that is 0 on every weighted row (eta = 0:
    a least-squares tree once the residuals are all 0), which the stop rule rejects."""
    if not sums.eta > 0.0:
        return 0.0
    return quad_alpha(sums.ui - sums.uj, sums.eta, config.lam, config.penalty, config.alpha_max)


@compiled(STOP_SIG)
def quadboost_stop(alpha, sums, t, config):
    """Stop without the round when alpha = 0 (L1: |g| <= lam) or the voter has no edge beyond rounding."""
    if alpha == 0.0 or _chance_or_worse(sums.ui, sums.uj):
        return REJECT
    return CONTINUE


@jit
def quad_penalty(alpha, lam, penalty):
    """The variant's penalty of one weight: 2 lam |alpha| (L1), lam alpha**2 (L2), 0 (vanilla, box)."""
    if penalty == PENALTY_L1:
        return 2.0 * lam * abs(alpha)
    if penalty == PENALTY_L2:
        return lam * alpha * alpha
    return 0.0


@compiled(COST_SIG)
def quadboost_log_cost(state, alpha, risk, unused, config):
    """log of the objective: risk sum_i p_i (y_i - F_i)**2 plus the penalty of all weights."""
    state.penalty += quad_penalty(alpha, config.lam, config.penalty)
    return np.log(risk + state.penalty)


# ----------------------------------------------------------------------------- LPBoost (column generation)
#: Edges within this of the master's beta count as equal to it (the LP's values are exact to about 1e-15).
LP_ROUNDING = 1e-12

@compiled(STEP_SIG)
def column_step(sums, t, config):
    """0: a new column enters the master LP at weight 0; the master's solve between rounds sets every weight."""
    return 0.0


@compiled(STOP_SIG)
def column_stop(alpha, sums, t, config):
    """Discard the column and stop when its edge sum_i u_i y_i h(x_i) on the master's dual weights u is at
    most beta + tol: no column can raise the master's value by more than tol (the LP is solved). A margin of
    LP_ROUNDING on top of tol keeps tol = 0 from re-adding a column whose edge is beta up to rounding."""
    if sums.ui - sums.uj <= config.lp_beta + config.lp_tol + LP_ROUNDING:
        return REJECT
    return CONTINUE


@compiled(COST_SIG)
def column_log_cost(state, alpha, z, s2, config):
    """NaN: the cost of a column generation round is known only after the master's solve between rounds."""
    return np.nan


RULES = {
    "adaboost": Rule(identity_transform, adaboost_step, adaboost_stop, exponential_log_cost, False, False,
                     u_is_w=True, needs_s2=False),
    "vadaboost": Rule(vadaboost_transform, vadaboost_step, stop_on_nonpositive_step, variance_log_cost, False, False),
    "ebboost": Rule(ebboost_transform, ebboost_step, ebboost_stop, variance_log_cost, False, True),
    "saboost": Rule(identity_transform, saboost_step, saboost_stop, exponential_log_cost, False, False,
                    u_is_w=True, needs_s2=False),
    "quadboost": Rule(quadboost_transform, quadboost_step, quadboost_stop, quadboost_log_cost, True, False),
    # the learner sees the master's dual weights u, held in w between rounds (a step of 0 leaves them)
    "lpboost": Rule(identity_transform, column_step, column_stop, column_log_cost, False, False,
                    u_is_w=True, needs_s2=False),
}
