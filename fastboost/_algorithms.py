"""Algorithms as rules for the one boosting loop (``fastboost._kernels.loop.boost``).

An algorithm is a weight transform (what the weak learner sees), a step rule
(alpha from the round's correct/wrong sums), a stop rule and its cost (as a log,
which cannot underflow), each a
small njit function with the loop's rule signature. Adding an algorithm is a
few lines here plus an entry in ``RULES``; it never needs a loop of its own.

Notation (``../shared/spec/algorithms.md`` §0): w are the boosting weights
(sum 1), p the initial distribution (uniform 1/n without sample weights),
I / J the examples the weak hypothesis gets right / wrong.
"""
from collections import namedtuple

import numpy as np

from ._config import jit
from ._kernels.loop import COST_SIG, STEP_SIG, STOP_SIG, TRANSFORM_SIG
from ._types import ACCEPT_STOP, CONTINUE, REJECT, SUM_UI, SUM_UJ

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

Rule = namedtuple("Rule", ["transform", "step", "stop", "log_cost"])


@jit
def _log_ratio(sums):
    """log(U_I / U_J), with U_J floored at ALPHA_EPS * (U_I + U_J)."""
    ui = sums[SUM_UI]
    uj = max(sums[SUM_UJ], ALPHA_EPS * (ui + sums[SUM_UJ]))
    return np.log(ui / uj)


# ----------------------------------------------------------------------------- shared rules
@jit(STOP_SIG)
def stop_on_nonpositive_step(alpha, sums, t, params):
    """Discard the round and stop if alpha <= 0 (edge <= MIN_EDGE); keep it and stop after a perfect hypothesis."""
    ui = sums[SUM_UI]
    uj = sums[SUM_UJ]
    if not alpha > 0.0 or ui - uj <= MIN_EDGE * (ui + uj):
        return REJECT
    if sums[SUM_UJ] == 0.0:
        return ACCEPT_STOP
    return CONTINUE


# ----------------------------------------------------------------------------- AdaBoost (spec §1)
@jit(TRANSFORM_SIG)
def adaboost_transform(w, p, u, params):
    """u = w."""
    u[:] = w


@jit(STEP_SIG)
def adaboost_step(sums, t, params):
    """alpha = 1/2 log(W_I / W_J)."""
    return 0.5 * _log_ratio(sums)


@jit(COST_SIG)
def adaboost_log_cost(log_mean_loss, s2, n, params):
    """log of the exponential loss sum_i exp(-y_i F(x_i)) (n * sum_i p_i exp(-y_i F) with sample weights)."""
    return np.log(n) + log_mean_loss


# ----------------------------------------------------------------------------- VadaBoost (spec §2)
@jit(TRANSFORM_SIG)
def vadaboost_transform(w, p, u, params):
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


@jit(COST_SIG)
def vadaboost_log_cost(log_mean_loss, s2, n, params):
    """log C, C = (1 - lam) S1**2 + lam n S2 with l_i = exp(-y_i F(x_i)), S1 = sum l, S2 = sum l**2.

    From the loop's state: S1 = n M and S2 = n**2 M**2 sum_i w_i**2 / p_i / n with
    M = sum_i p_i l_i, so C = n**2 M**2 ((1 - lam) + lam s2).
    """
    lam = params[0]
    return 2.0 * (np.log(n) + log_mean_loss) + np.log((1.0 - lam) + lam * s2)


RULES = {
    "adaboost": Rule(adaboost_transform, adaboost_step, stop_on_nonpositive_step, adaboost_log_cost),
    "vadaboost": Rule(vadaboost_transform, vadaboost_step, stop_on_nonpositive_step, vadaboost_log_cost),
}
