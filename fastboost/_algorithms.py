"""Algorithms as rules for the one boosting loop (``fastboost._kernels.loop.boost``).

An algorithm is a weight transform (what the weak learner sees), a step rule
(alpha from the round's correct/wrong sums), a stop rule and its cost (as a log,
which cannot underflow), each a small njit function with the loop's rule
signature, plus two flags: an additive (residual) update instead of the
multiplicative one, and the w**2 histogram. Adding an algorithm is a few lines
here plus an entry in ``RULES``; it never needs a loop of its own.

Notation (``../shared/spec/algorithms.md`` §0): w are the boosting weights
(sum 1), p the initial distribution (uniform 1/n without sample weights),
I / J the examples the weak hypothesis gets right / wrong.
"""
from collections import namedtuple

import numpy as np

from ._config import jit
from ._kernels.loop import COST_SIG, STEP_SIG, STOP_SIG, TRANSFORM_SIG
from ._types import ACCEPT_STOP, CONTINUE, REJECT, STATE_LOG_MEAN_LOSS, STATE_N, STATE_PENALTY, SUM_QI, SUM_QJ
from ._types import SUM_ETA, SUM_UI, SUM_UJ

#: A perfect weak hypothesis (no learner weight on errors) would get an infinite
#: step; the wrong-side sum is floored at ALPHA_EPS times the total instead, which
#: caps alpha at 1/2*log(1/ALPHA_EPS) ~ 11.5 (AdaBoost). The stop rule ends
#: boosting after an exactly perfect round; a nearly perfect one (error below
#: ALPHA_EPS) gets the capped step and boosting goes on. [R]: the paper leaves W_J = 0 open.
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
    return _floored_log_ratio(sums[SUM_UI], sums[SUM_UJ])


@jit
def _floored_log_ratio(a, b):
    """log(a / b) with b floored at ALPHA_EPS * (a + b): a finite step for a perfect hypothesis."""
    return np.log(a / max(b, ALPHA_EPS * (a + b)))


@jit
def _chance_or_worse(a, b):
    """True if a - b <= MIN_EDGE (a + b): the correct side does not beat the wrong side beyond rounding."""
    return a - b <= MIN_EDGE * (a + b)


# ----------------------------------------------------------------------------- shared rules
@jit(STOP_SIG)
def stop_on_nonpositive_step(alpha, sums, t, params):
    """Discard the round and stop if alpha <= 0 (edge <= MIN_EDGE); keep it and stop after a perfect hypothesis."""
    if not alpha > 0.0 or _chance_or_worse(sums[SUM_UI], sums[SUM_UJ]):
        return REJECT
    if sums[SUM_UJ] == 0.0:
        return ACCEPT_STOP
    return CONTINUE


@jit(TRANSFORM_SIG)
def identity_transform(w, p, y, u, q, ylab, params):
    """u = w: the learner sees the boosting weights."""
    u[:] = w


@jit(COST_SIG)
def exponential_log_cost(state, alpha, z, s2, params):
    """log of the exponential loss sum_i exp(-y_i F(x_i)) (n * sum_i p_i exp(-y_i F) with sample weights).

    The loss is multiplied by the round's normaliser Z (spec §1 (6)).
    """
    state[STATE_LOG_MEAN_LOSS] += np.log(z)
    return np.log(state[STATE_N]) + state[STATE_LOG_MEAN_LOSS]


@jit(COST_SIG)
def variance_log_cost(state, alpha, z, s2, params):
    """log C_lam, C_lam = (1 - lam) S1**2 + lam n S2 with l_i = exp(-y_i F(x_i)), S1 = sum l, S2 = sum l**2.

    VadaBoost's cost (3), also EBBoost's. From the loop's state: S1 = n M and
    S2 = n**2 M**2 sum_i w_i**2 / p_i / n with M = sum_i p_i l_i, so
    C = n**2 M**2 ((1 - lam) + lam s2).
    """
    lam = params[0]
    state[STATE_LOG_MEAN_LOSS] += np.log(z)
    return 2.0 * (np.log(state[STATE_N]) + state[STATE_LOG_MEAN_LOSS]) + np.log((1.0 - lam) + lam * s2)


# ----------------------------------------------------------------------------- AdaBoost (spec §1), LazyBoost (§4)
@jit(STEP_SIG)
def adaboost_step(sums, t, params):
    """alpha = 1/2 log(W_I / W_J) + 1/2 log(K - 1), K = params[0] classes (SAMME; the second term is 0 for K = 2)."""
    return 0.5 * (_log_ratio(sums) + np.log(params[0] - 1.0))


@jit(STOP_SIG)
def adaboost_stop(alpha, sums, t, params):
    """As stop_on_nonpositive_step with SAMME's chance level: reject unless (K - 1) W_I beats W_J."""
    k1 = params[0] - 1.0
    if not alpha > 0.0 or _chance_or_worse(k1 * sums[SUM_UI], sums[SUM_UJ]):
        return REJECT
    if sums[SUM_UJ] == 0.0:
        return ACCEPT_STOP
    return CONTINUE


# ----------------------------------------------------------------------------- VadaBoost (spec §2)
@jit(TRANSFORM_SIG)
def vadaboost_transform(w, p, y, u, q, ylab, params):
    """u = lam * n * w**2 + (1 - lam) * w (with sample weights: lam * w**2 / p + (1 - lam) * w).

    With p = 1/n this is the paper's u; with sample weights it is the same cost
    written for the weighted empirical distribution p, so a weight of 2 equals a
    duplicated row and a weight of 0 a removed one.
    """
    lam = params[0]
    for i in range(w.shape[0]):
        if p[i] > 0.0:
            u[i] = lam * w[i] * w[i] / p[i] + (1.0 - lam) * w[i]
        else:
            u[i] = 0.0


@jit(STEP_SIG)
def vadaboost_step(sums, t, params):
    """alpha = 1/4 log(U_I / U_J)."""
    return 0.25 * _log_ratio(sums)


# ----------------------------------------------------------------------------- EBBoost (spec §3)
@jit(TRANSFORM_SIG)
def ebboost_transform(w, p, y, u, q, ylab, params):
    """u = w, and q = w**2 / p (n w**2 for uniform p) for the second histogram."""
    for i in range(w.shape[0]):
        u[i] = w[i]
        q[i] = w[i] * w[i] / p[i] if p[i] > 0.0 else 0.0


@jit
def _eb_ab(sums, lam):
    a = (1.0 - lam) * sums[SUM_UI] * sums[SUM_UI] + lam * sums[SUM_QI]
    b = (1.0 - lam) * sums[SUM_UJ] * sums[SUM_UJ] + lam * sums[SUM_QJ]
    return a, b


@jit(STEP_SIG)
def ebboost_step(sums, t, params):
    """alpha = 1/4 log(A / B), A = (1 - lam) W_I**2 + lam n Q_I, B likewise for J."""
    a, b = _eb_ab(sums, params[0])
    return 0.25 * _floored_log_ratio(a, b)


@jit(STOP_SIG)
def ebboost_stop(alpha, sums, t, params):
    """Stop without the round when A <= B (alpha = 0 up to rounding: no progress, [R]); keep it and stop if perfect."""
    a, b = _eb_ab(sums, params[0])
    if not alpha > 0.0 or _chance_or_worse(a, b):
        return REJECT
    if b == 0.0:
        return ACCEPT_STOP
    return CONTINUE


# ----------------------------------------------------------------------------- SABoost (spec §5)
SCHEDULE_INVERSE = 0  # a_t = gamma / t
SCHEDULE_POWER = 1  # a_t = t ** -gamma
SCHEDULE_CONSTANT = 2  # a_t = gamma
SCHEDULES = {"inverse": SCHEDULE_INVERSE, "power": SCHEDULE_POWER, "constant": SCHEDULE_CONSTANT}


@jit(STEP_SIG)
def saboost_step(sums, t, params):
    """a_t from the deterministic schedule params[1] with gamma = params[0] (t = 1, 2, ...). [R]"""
    gamma = params[0]
    kind = params[1]
    if kind == SCHEDULE_INVERSE:
        return gamma / t
    if kind == SCHEDULE_POWER:
        return np.float64(t) ** -gamma
    return gamma


@jit(STOP_SIG)
def saboost_stop(alpha, sums, t, params):
    """No alpha <= 0 break; stop (without the round) only when the learner's error reaches 1/2 ([R], spec §5 (5))."""
    if _chance_or_worse(sums[SUM_UI], sums[SUM_UJ]):
        return REJECT
    return CONTINUE


# ----------------------------------------------------------------------------- QuadBoost (spec §6)
PENALTY_NONE = 0
PENALTY_L1 = 1
PENALTY_L2 = 2
PENALTY_LINF = 3
PENALTIES = {None: PENALTY_NONE, "l1": PENALTY_L1, "l2": PENALTY_L2, "linf": PENALTY_LINF}


@jit(TRANSFORM_SIG)
def quadboost_transform(w, p, y, u, q, ylab, params):
    """The residuals r = y - F (held in w) as a weighted classification: labels sign(r), weights p |r|
    (and q = p when allocated: least-squares trees need sum p per bin)."""
    with_q = q.shape[0] == w.shape[0]
    for i in range(w.shape[0]):
        r = w[i]
        ylab[i] = 1 if r > 0.0 else 0
        u[i] = p[i] * abs(r)
        if with_q:
            q[i] = p[i]


@jit
def quad_alpha(g, eta, params):
    """The variant's minimiser along a voter with correlation g = <h, r>_p and eta = <h, h>_p (spec §6 (3))."""
    lam = params[0]
    kind = params[1]
    if kind == PENALTY_L1:
        return np.sign(g) * max(abs(g) - lam, 0.0) / eta
    if kind == PENALTY_L2:
        return g / (eta + lam)
    if kind == PENALTY_LINF:
        return min(max(g / eta, -params[2]), params[2])
    return g / eta


@jit(STEP_SIG)
def quadboost_step(sums, t, params):
    """alpha = rule(g, eta) with g = U_I - U_J = sum_i p_i h_i r_i (the residual reduction, spec §6 (2))
    and eta = SUM_ETA (1 for +-1 voters)."""
    return quad_alpha(sums[SUM_UI] - sums[SUM_UJ], sums[SUM_ETA], params)


@jit(STOP_SIG)
def quadboost_stop(alpha, sums, t, params):
    """Stop without the round when alpha = 0 (L1: |g| <= lam) or the voter has no edge beyond rounding."""
    if alpha == 0.0 or _chance_or_worse(sums[SUM_UI], sums[SUM_UJ]):
        return REJECT
    return CONTINUE


@jit
def quad_penalty(alpha, params):
    """The variant's penalty of one weight: 2 lam |alpha| (L1), lam alpha**2 (L2), 0 (vanilla, box)."""
    kind = params[1]
    if kind == PENALTY_L1:
        return 2.0 * params[0] * abs(alpha)
    if kind == PENALTY_L2:
        return params[0] * alpha * alpha
    return 0.0


@jit(COST_SIG)
def quadboost_log_cost(state, alpha, risk, unused, params):
    """log of the objective: risk sum_i p_i (y_i - F_i)**2 plus the penalty of all weights."""
    state[STATE_PENALTY] += quad_penalty(alpha, params)
    return np.log(risk + state[STATE_PENALTY])


RULES = {
    "adaboost": Rule(identity_transform, adaboost_step, adaboost_stop, exponential_log_cost, False, False,
                     u_is_w=True, needs_s2=False),
    "vadaboost": Rule(vadaboost_transform, vadaboost_step, stop_on_nonpositive_step, variance_log_cost, False, False),
    "ebboost": Rule(ebboost_transform, ebboost_step, ebboost_stop, variance_log_cost, False, True),
    "saboost": Rule(identity_transform, saboost_step, saboost_stop, exponential_log_cost, False, False,
                    u_is_w=True, needs_s2=False),
    "quadboost": Rule(quadboost_transform, quadboost_step, quadboost_stop, quadboost_log_cost, True, False),
}
