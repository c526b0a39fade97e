"""The solvers of the totally corrective fits: the soft-margin LP (LPBoost, RLP-Boost) and the
regularised QP (RQP-Boost), on a margin matrix M[j, i] = y_i h_j(x_i) (one row per voter).

Soft-margin LP, with per-example caps D_i (D_i = p_i / nu for the sample-weight distribution p):

    max  rho - sum_i D_i xi_i   s.t.  sum_j a_j M[j, i] + xi_i >= rho,  sum_j a_j = 1,  a >= 0,  xi >= 0

and its dual, the problem column generation works on:

    min  beta   s.t.  sum_i u_i M[j, i] <= beta for every voter j,  sum_i u_i = 1,  0 <= u_i <= D_i.

Regularised QP (weights b, normalised to sum 1 afterwards):

    min  ||b||**2 + sum_i C_i xi_i   s.t.  sum_j b_j M[j, i] + xi_i >= 1,  b >= 0,  xi >= 0,

solved by HiGHS as a QP, or through its bound-constrained dual with L-BFGS-B:

    max over 0 <= u <= C:  sum_i u_i - 1/4 ||max(0, M u)||**2,   b = 1/2 max(0, M u).

HiGHS comes from ``highspy``, the optional extra ``lp``; everything else here is NumPy and SciPy.
"""
import os
import sys
import time
from collections import namedtuple

import numpy as np

_INSTALL = 'needs the HiGHS solver: pip install "fastboost[lp]" (the highspy package)'

class SolverError(RuntimeError):
    """HiGHS (or linprog) found no optimum of a problem it was given: a condition of the data and parameters,
    reported as such (the command line prints it as one line)."""


#: One solve of the master LP: its primal value, dual value beta, voter weights a, example weights u
#: (the duals of the margin rows), simplex iterations and seconds.
LPSolution = namedtuple("LPSolution", ["value", "beta", "weights", "u", "iterations", "seconds"])

#: One solve of the regularised QP: objective, the weights b (not normalised), the dual u (L-BFGS-B only,
#: else None), iterations, seconds and the relative duality gap (L-BFGS-B only, else NaN).
QPSolution = namedtuple("QPSolution", ["objective", "b", "u", "iterations", "seconds", "gap"])


def highspy_module(what="this estimator"):
    """The ``highspy`` module, or an ImportError naming the extra to install."""
    try:
        import highspy
    except ImportError:
        raise ImportError(f"{what} {_INSTALL}.") from None
    return highspy


def new_highs(highspy):
    """A silent ``highspy.Highs()``: HiGHS prints a banner on the C level's stdout when the first one is
    constructed, before any option can be set, so that construction runs with stdout sent to /dev/null."""
    try:
        sys.stdout.flush()
        saved = os.dup(1)
    except (OSError, ValueError, AttributeError):  # no file descriptor 1: nothing to silence
        h = highspy.Highs()
    else:
        try:
            with open(os.devnull, "w") as null:
                os.dup2(null.fileno(), 1)
                h = highspy.Highs()
        finally:
            os.dup2(saved, 1)
            os.close(saved)
    h.setOptionValue("output_flag", False)
    return h


def _check_status(h, highspy, what):
    status = h.getModelStatus()
    if status != highspy.HighsModelStatus.kOptimal:
        raise SolverError(f"HiGHS could not solve the {what}: {h.modelStatusToString(status)}.")


class SoftMarginMaster:
    """The restricted master LP of column generation, kept in one HiGHS model, in its dual form.

    HiGHS holds the dual program (min beta over the capped distributions u): one variable per example
    (u_i in [0, D_i]) plus beta, one row per voter (sum_i u_i M[j, i] - beta <= 0) and the row
    sum_i u_i = 1. A new voter is a new row, so ``add_columns(M)`` appends rows and ``solve()`` re-solves
    with the dual simplex method from the previous basis (it stays dual feasible). The voters' weights a
    are the duals of their rows, the example weights u and beta the solution itself. The master has
    as many rows as voters, not as examples: measured 2-5 times faster than holding the primal (one row
    per example), solved once or round by round.
    """

    def __init__(self, caps, interior=False):
        highspy = highspy_module("LPBoost")
        caps = np.ascontiguousarray(caps, dtype=np.float64)
        m = caps.shape[0]
        self.m = m
        self.caps = caps
        self.n_columns = 0
        self._highspy = highspy
        h = self._h = new_highs(highspy)
        if interior:  # the interior-point method, without crossover to a basis (``degenerate_by_ipm``)
            h.setOptionValue("solver", "ipm")
            h.setOptionValue("run_crossover", "off")
        inf = highspy.kHighsInf
        h.addVars(m + 1, np.r_[np.zeros(m), -inf], np.r_[caps, inf])
        h.changeColsCost(m + 1, np.arange(m + 1, dtype=np.int32), np.r_[np.zeros(m), 1.0])
        h.addRow(1.0, 1.0, m, np.arange(m, dtype=np.int32), np.ones(m))
        self._all = np.arange(m + 1, dtype=np.int32)

    def set_caps(self, caps):
        """Change the caps D_i (another nu): the next ``solve()`` starts from the current basis, which stays
        dual feasible (only the bounds of u moved)."""
        caps = np.ascontiguousarray(caps, dtype=np.float64)
        m = self.m
        self._h.changeColsBounds(m, np.arange(m, dtype=np.int32), np.zeros(m), caps)
        self.caps = caps

    def add_columns(self, M):
        """Append the voters M[j, :] (int8 or float, one row per voter) to the master."""
        M = np.asarray(M)
        k = M.shape[0]
        if k == 0:
            return
        inf = self._highspy.kHighsInf
        m = self.m
        values = np.empty(m + 1)
        values[m] = -1.0
        for j in range(k):  # one voter at a time: no k x m float64 copy
            values[:m] = M[j]
            nz = np.flatnonzero(values).astype(np.int32)
            self._h.addRow(-inf, 0.0, nz.shape[0], nz, values[nz])
        self.n_columns += k

    def solve(self):
        """Re-solve the master; its LPSolution (weights clipped at 0, u into [0, D_i]).

        ``beta`` is the dual program's value, ``value`` the primal's rho - sum_i D_i xi_i computed from
        the duals (rho: the dual of sum u = 1; xi_i: the reduced cost of u_i at its cap): they agree at
        the optimum (strong duality), which the tests check."""
        h = self._h
        started = time.perf_counter()
        h.run()
        seconds = time.perf_counter() - started
        _check_status(h, self._highspy, "LPBoost master problem")
        sol = h.getSolution()
        m = self.m
        x = np.asarray(sol.col_value)
        row_dual = np.asarray(sol.row_dual)
        col_dual = np.asarray(sol.col_dual)[:m]
        weights = np.maximum(-row_dual[1:], 0.0)
        rho = float(row_dual[0])
        value = rho + float(self.caps @ np.minimum(col_dual, 0.0))
        info = h.getInfo()
        return LPSolution(value=value, beta=float(x[m]), weights=weights, u=np.clip(x[:m], 0.0, self.caps),
                          iterations=int(info.simplex_iteration_count), seconds=seconds)


def solve_soft_margin_lp(M, caps):
    """The soft-margin LP over the fixed voters M (RLP-Boost), solved once with HiGHS."""
    lp = SoftMarginMaster(caps)
    lp.add_columns(M)
    return lp.solve()


def linprog_soft_margin_lp(M, caps):
    """The same LP built from scratch and solved with ``scipy.optimize.linprog(method="highs")``:
    the reference for tests and for the warm-start benchmark. Returns an LPSolution."""
    from scipy import sparse
    from scipy.optimize import linprog

    M = np.asarray(M, dtype=np.float64)
    k, m = M.shape
    started = time.perf_counter()
    # z = [a (k), xi (m), rho]; rows: -M^T a - xi + rho <= 0
    A_ub = sparse.hstack([sparse.csr_matrix(-M.T), -sparse.identity(m, format="csr"),
                          sparse.csr_matrix(np.ones((m, 1)))], format="csr")
    A_eq = sparse.csr_matrix(np.r_[np.ones(k), np.zeros(m + 1)][None])
    c = np.r_[np.zeros(k), caps, -1.0]
    res = linprog(c, A_ub=A_ub, b_ub=np.zeros(m), A_eq=A_eq, b_eq=[1.0],
                  bounds=[(0, None)] * (k + m) + [(None, None)], method="highs")
    seconds = time.perf_counter() - started
    if res.status != 0:
        raise SolverError(f"linprog could not solve the soft-margin LP: {res.message}")
    return LPSolution(value=-float(res.fun), beta=-float(res.eqlin.marginals[0]), weights=res.x[:k],
                      u=np.clip(-res.ineqlin.marginals, 0.0, caps), iterations=int(res.nit), seconds=seconds)


# ----------------------------------------------------------------------------- the regularised QP
def qp_objective(M, b, caps):
    """||b||**2 + sum_i C_i max(0, 1 - (M^T b)_i): the QP's objective at b (xi at its optimum)."""
    margins = np.asarray(M, dtype=np.float64).T @ b
    return float(b @ b + caps @ np.maximum(0.0, 1.0 - margins))


#: HiGHS's QP iterations allowed per variable (voters + examples) before solve_rqp_highs gives up: an active-set
#: method needs about one per variable that changes bounds; on some problems HiGHS's cycles without end
QP_ITERATIONS_PER_VARIABLE = 20


def solve_rqp_highs(M, caps):
    """The regularised QP with HiGHS's QP solver. Variables b (k), then xi (m)."""
    highspy = highspy_module("RQPBoost")
    M = np.asarray(M, dtype=np.float64)
    k, m = M.shape
    inf = highspy.kHighsInf
    started = time.perf_counter()
    lp = highspy.HighsLp()
    lp.num_col_ = k + m
    lp.num_row_ = m
    lp.col_cost_ = np.r_[np.zeros(k), caps]
    lp.col_lower_ = np.zeros(k + m)
    lp.col_upper_ = np.full(k + m, inf)
    lp.row_lower_ = np.ones(m)
    lp.row_upper_ = np.full(m, inf)
    # columns: voter j has M[j, i] in row i; xi_i has 1 in row i
    nz = [np.flatnonzero(M[j]) for j in range(k)]
    starts = np.r_[0, np.cumsum([z.shape[0] for z in nz]), 0][:k + 1]
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = np.r_[starts, starts[-1] + np.arange(1, m + 1)].astype(np.int32)
    lp.a_matrix_.index_ = np.r_[np.concatenate(nz) if k else np.empty(0, int), np.arange(m)].astype(np.int32)
    lp.a_matrix_.value_ = np.r_[np.concatenate([M[j, z] for j, z in enumerate(nz)]) if k else np.empty(0),
                                np.ones(m)]
    hessian = highspy.HighsHessian()
    hessian.dim_ = k + m
    hessian.format_ = highspy.HessianFormat.kTriangular
    hessian.start_ = np.r_[np.arange(k + 1), np.full(m, k)].astype(np.int32)
    hessian.index_ = np.arange(k, dtype=np.int32)
    hessian.value_ = np.full(k, 2.0)  # 1/2 b^T (2 I) b = ||b||**2
    model = highspy.HighsModel()
    model.lp_ = lp
    model.hessian_ = hessian
    h = new_highs(highspy)
    h.setOptionValue("qp_iteration_limit", QP_ITERATIONS_PER_VARIABLE * (k + m) + 1000)
    h.passModel(model)
    h.run()
    status = h.getModelStatus()
    if status != highspy.HighsModelStatus.kOptimal:
        raise SolverError(f"HiGHS's QP solver found no optimum of the RQP-Boost quadratic program (C_i in "
                           f"[{caps.min():.3g}, {caps.max():.3g}]): {h.modelStatusToString(status)}. Its active-set "
                           "method can stall on some problems; solver='lbfgs' (the default) solves the same program.")
    b = np.maximum(np.asarray(h.getSolution().col_value)[:k], 0.0)
    info = h.getInfo()
    return QPSolution(objective=float(info.objective_function_value), b=b, u=None,
                      iterations=int(info.qp_iteration_count), seconds=time.perf_counter() - started,
                      gap=np.nan)


def solve_rqp_lbfgs(M, caps, max_iter=15000, gap_tol=1e-10, check_every=50, u0=None):
    """The regularised QP through its bound-constrained dual, maximised with SciPy's L-BFGS-B.

    Every ``check_every`` iterations, once the dual is within 1e-4 of its optimum, the primal b is
    polished on the active sets u identifies (``_polish``); the solve stops as soon as the duality gap
    P(b) - D(u) is at most ``gap_tol`` relative, so the answer carries its own certificate of
    optimality (``QPSolution.gap``). The matrix products run on one BLAS thread: they are small
    (voters x examples), and a multi-threaded BLAS beside other busy processes was measured 10-60x
    slower on 2 cores. ``u0``: the starting dual (clipped into the bounds), e.g. the solution for a
    nearby C; None starts from min(C_i, 1 / m)."""
    from scipy.optimize import minimize
    from threadpoolctl import threadpool_limits

    M = np.asarray(M, dtype=np.float64)
    started = time.perf_counter()
    best = {"b": None, "u": None, "gap": np.inf, "objective": np.inf}

    def negative_dual(u):
        g = np.maximum(0.0, M @ u)  # 2 b
        return 0.25 * (g @ g) - u.sum(), 0.5 * (M.T @ g) - 1.0

    def certify(u):
        """Polish b from u; keep the pair with the smallest relative duality gap. True when within gap_tol."""
        b = 0.5 * np.maximum(0.0, M @ u)
        dual = float(u.sum() - b @ b)
        if (qp_objective(M, b, caps) - dual) > 1e-4 * max(1.0, abs(dual)):
            return False  # too far from the optimum for the active sets to be right
        b = _polish(M, caps, u, b)
        primal = qp_objective(M, b, caps)
        gap = (primal - dual) / max(1.0, abs(primal))
        if gap < best["gap"]:
            best.update(b=b, u=u.copy(), gap=gap, objective=primal)
        return gap <= gap_tol

    iterations = [0]

    def callback(intermediate_result):
        iterations[0] += 1
        if iterations[0] % check_every == 0 and certify(intermediate_result.x):
            raise StopIteration

    u0 = np.minimum(caps, 1.0 / max(1, M.shape[1])) if u0 is None else np.clip(u0, 0.0, caps)
    with threadpool_limits(limits=1, user_api="blas"):
        res = minimize(negative_dual, u0, jac=True, method="L-BFGS-B", callback=callback,
                       bounds=np.column_stack([np.zeros_like(caps), caps]),
                       options={"maxiter": max_iter, "maxfun": 2 * max_iter, "ftol": 0.0, "gtol": 1e-14,
                                "maxcor": 30})
        # ftol 0: on until no step lowers the dual or the gap certifies the polished b
        if best["gap"] > gap_tol:
            certify(res.x)
        if best["b"] is None:  # never close enough to polish: the plain dual solution
            b = 0.5 * np.maximum(0.0, M @ res.x)
            dual = float(res.x.sum() - b @ b)
            primal = qp_objective(M, b, caps)
            best.update(b=b, u=res.x, gap=(primal - dual) / max(1.0, abs(primal)), objective=primal)
    return QPSolution(objective=best["objective"], b=best["b"], u=best["u"], iterations=int(res.nit),
                      seconds=time.perf_counter() - started, gap=best["gap"])


def _polish(M, caps, u, b, rel=1e-6):
    """b refined on the active sets the dual's u identifies: the voters with b_t > 0 (S), the examples
    strictly between the bounds (F: margin exactly 1) and those at C_i (U: violated). On those sets the QP
    is min ||b_S||**2 - r^T b_S subject to A^T b_S = 1 (A = M[S, F], r = M[S, U] C_U), solved exactly:
    b_S = b0 + (I - Q Q^T) r / 2 with b0 the least-norm solution of A^T b = 1 and Q a basis of A's range
    (one thin SVD of A, |S| x |F|). The result replaces b only if it is feasible and has a lower
    objective, so this never makes b worse."""
    S = b > 0
    upper = u >= caps * (1 - rel)
    free = (u > caps * rel) & ~upper
    if not S.any():
        return b
    MS = M[S]
    A = MS[:, free]
    r = MS[:, upper] @ caps[upper]
    if A.shape[1]:
        U, sigma, Vt = np.linalg.svd(A, full_matrices=False)
        keep = sigma > sigma[0] * max(A.shape) * np.finfo(float).eps
        U, sigma, Vt = U[:, keep], sigma[keep], Vt[keep]
        b0 = U @ ((Vt @ np.ones(A.shape[1])) / sigma)
        bs = b0 + 0.5 * (r - U @ (U.T @ r))
    else:
        bs = 0.5 * r
    polished = np.zeros_like(b)
    polished[S] = bs
    if np.all(polished >= 0) and qp_objective(M, polished, caps) < qp_objective(M, b, caps):
        return polished
    return b


RQP_SOLVERS = {"highs": solve_rqp_highs, "lbfgs": solve_rqp_lbfgs}


# ----------------------------------------------------------------------------- the margin matrix
def voter_margins(codes, y, rows, model, first, count, missing_code):
    """int8[count, len(rows)]: y_i h_j(x_i) of voters first .. first + count - 1 (compiled, parallel)."""
    from ._kernels.margins import margin_matrix

    out = np.empty((count, rows.shape[0]), np.int8)
    if count and rows.shape[0]:
        margin_matrix(codes, y, rows, model, first, missing_code, out)
    return out


def soft_margin_caps(p, nu=None, capping=None):
    """The per-example caps D_i of the soft-margin LP for the sample-weight distribution p (rows with
    p_i > 0): p_i / nu, or p_i m / capping for m such rows (capping = nu m: the number of examples the
    margin may give up on). ValueError if they cannot hold a distribution (capping > m)."""
    m = p.shape[0]
    if capping is not None:
        if capping > m:
            raise ValueError(f"capping={capping:g} must be at most the number of training examples with positive "
                             f"weight ({m}): the dual weights u_i <= 1 / capping could not sum to 1.")
        return p * (m / capping)
    return p / (0.1 if nu is None else nu)


# ----------------------------------------------------------------------------- nu="auto", C="auto"
#: the values nu="auto" tries (LPBoost, RLP-Boost): from near the hard margin to margin errors on half the rows.
#: Not beyond 1/2: nu bounds the share of rows the LP may give up on, and as nu -> 1 the caps p_i / nu reach p_i,
#: the dual weights must equal p and the LP keeps the single voter of the largest edge; on 3-fold held-out
#: thirds of a few hundred rows that one voter's error is often within a row of the best, and was chosen
#: (diabetes: nu = 0.7, one stump, 1.5-3 points behind AdaBoost).
NU_GRID = (0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5)
#: the values nu="auto" goes on to when the LP is degenerate at every nu of ``NU_GRID`` (noisy data: margin errors on
#: more than half of the rows are the only way to a positive soft margin); at 1 the dual weights are p and the LP
#: keeps the voter of the largest edge, which is positive unless no voter beats chance
SOFT_NU_GRID = (0.6, 0.7, 0.8, 0.9, 1.0)
#: the values C="auto" tries (RQP-Boost), per example (C_i = C p_i n)
C_GRID = (0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1.0, 3.0)
#: folds of the held-out scoring (each value is scored on every fold's held-out third of the rows)
AUTO_FOLDS = 3
#: a soft-margin LP whose value is at most this is degenerate (its weights may cancel out)
DEGENERATE = 1e-9

#: What ``nu="auto"`` / ``C="auto"`` found: the value chosen, the values tried, their mean held-out error over
#: the folds (NaN: degenerate or all-zero weights on some fold) and the number of folds.
AutoChoice = namedtuple("AutoChoice", ["value", "grid", "errors", "folds"])


def auto_seed(random_state):
    """The seed of the held-out folds: drawn from ``random_state`` (0 when it is None, so a fit without a
    seed is still deterministic)."""
    if random_state is None:
        return 0
    from sklearn.utils import check_random_state

    return int(check_random_state(random_state).randint(2 ** 31 - 1))


def _margin_errors(F, y, p):
    """Weighted error of the margins y_i F(x_i) (wrong when < 0, or 0 on class index 1: sgn(0) = -1)."""
    return float(p @ ((F < 0) | ((F == 0) & (y == 1)))) / float(p.sum())


def _stratified_folds(y, seed, folds):
    """(train, held-out) row index pairs of a seeded stratified split into ``folds`` parts, or [] when a class
    has fewer rows than folds."""
    from sklearn.model_selection import StratifiedKFold

    counts = np.bincount(y.astype(np.int64), minlength=2)
    if counts.min() < folds:
        return []
    splitter = StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed)
    return list(splitter.split(np.zeros(y.shape[0]), y))


def nu_errors(M_train, q, M_held, y_held, p_held, grid=NU_GRID):
    """The weighted held-out error (labels ``y_held`` 0 / 1, weights ``p_held``) of the soft-margin LP over the
    voters solved on the other rows (margins ``M_train``, distribution ``q``) at every nu of ``grid``: one
    master, re-solved from its last basis for each nu (the softest first); NaN where the LP is degenerate
    (value <= ``DEGENERATE``). The LP's value never grows as nu falls (the caps q / nu only widen the set of
    distributions its dual minimises over), so once it is degenerate the smaller nu are too and are not solved."""
    grid = np.asarray(grid, dtype=np.float64)
    errors = np.full(grid.shape[0], np.nan)
    if M_train.shape[0] == 0:
        return errors
    master = SoftMarginMaster(q / grid[-1])
    master.add_columns(M_train)
    large = M_train.shape[0] * M_train.shape[1] >= IPM_CHECK_ENTRIES
    weights = None
    for g in range(grid.shape[0] - 1, -1, -1):
        if large and not positive_value_shown(M_train, q, grid[g], weights) and degenerate_by_ipm(M_train, q / grid[g]):
            break
        master.set_caps(q / grid[g])
        sol = master.solve()
        if sol.value <= DEGENERATE:
            break
        weights = sol.weights
        if np.any(sol.weights > 0):
            errors[g] = _margin_errors(sol.weights @ M_held, y_held, p_held)
    return errors


#: margin matrices of at least this many entries (voters x rows) have the soft-margin LP at a nu that may be
#: degenerate checked by the interior-point method before the dual simplex method solves it (``nu_errors``)
IPM_CHECK_ENTRIES = 200_000


def tail_mean(F, q, nu):
    """The soft-margin LP's objective rho - sum_i (q_i / nu) (rho - F_i)_+ at rho the nu-quantile (by weight
    ``q``) of the margins F of voter weights summing to 1: the best value those fixed weights reach, a lower bound
    on the LP's."""
    order = np.argsort(F, kind="stable")
    below = min(int((np.cumsum(q[order]) < nu).sum()), F.shape[0] - 1)
    rho = F[order[below]]
    return float(rho - (np.maximum(rho - F, 0.0) @ q) / nu)


def positive_value_shown(M, q, nu, weights=None):
    """Whether some fixed voter weights give the soft-margin LP over M at ``nu`` a value above ``DEGENERATE``:
    ``weights`` (the LP's at the previous nu), then each voter alone. False says nothing."""
    if weights is not None and weights.sum() > 0 and \
            tail_mean((weights / weights.sum()) @ M, q, nu) > DEGENERATE:
        return True
    return any(tail_mean(np.asarray(M[j], dtype=np.float64), q, nu) > DEGENERATE for j in range(M.shape[0]))


def degenerate_by_ipm(M, caps):
    """Whether the soft-margin LP over M with caps D is degenerate (value and beta at most ``DEGENERATE``), by the
    interior-point method: on a large degenerate LP the dual simplex method takes many times its usual
    iterations (13 333 rows, 100 voters: about 9 500 against 500, about 15 times the interior-point time). False
    when it cannot tell (no optimum found); the simplex method then decides."""
    lp = SoftMarginMaster(caps, interior=True)
    lp.add_columns(M)
    try:
        sol = lp.solve()
    except RuntimeError:
        return False
    return sol.value <= DEGENERATE and sol.beta <= DEGENERATE


#: a relative duality gap of L-BFGS-B's QP answer above this is not a certified optimum: a fit reports it, and
#: ``C_errors`` scores no C on such an answer
UNCONVERGED_GAP = 1e-6


def C_errors(M_train, q, M_held, y_held, p_held, solver, grid=C_GRID):
    """As ``nu_errors`` for the regularised QP at every C of ``grid`` (C_i = C q_i n; L-BFGS-B starts from the
    previous C's dual, and from its own start again when that answer's gap is above ``UNCONVERGED_GAP``); NaN
    where its weights are all 0, where L-BFGS-B's answer is still not certified, or where HiGHS finds no
    optimum: such a C is no candidate."""
    grid = np.asarray(grid, dtype=np.float64)
    errors = np.full(grid.shape[0], np.nan)
    if M_train.shape[0] == 0:
        return errors
    Mt = np.asarray(M_train, dtype=np.float64)
    n = Mt.shape[1]
    u = None
    for g in range(grid.shape[0]):
        caps = grid[g] * q * n
        if solver == "lbfgs":
            sol = solve_rqp_lbfgs(Mt, caps, u0=u)
            if not sol.gap <= UNCONVERGED_GAP and u is not None:
                sol = solve_rqp_lbfgs(Mt, caps)
            u = sol.u
            if not sol.gap <= UNCONVERGED_GAP:
                continue
        else:
            try:
                sol = RQP_SOLVERS[solver](Mt, caps)
            except RuntimeError:  # (HiGHS found no optimum at this C on this fold: not a candidate)
                continue
        if np.any(sol.b > 0):
            errors[g] = _margin_errors(sol.b @ M_held, y_held, p_held)
    return errors


def held_out_folds(y, seed, folds=AUTO_FOLDS):
    """(train, held-out) index pairs of a seeded stratified split of the rows into ``folds`` parts (each row
    held out once), or [] when a class has fewer rows than folds."""
    return _stratified_folds(y, seed, folds)


def choose(grid, fold_errors, larger, tolerance=0.0):
    """The AutoChoice of the per-fold errors (a list of arrays over ``grid``): the value with the lowest mean
    error, never one that is NaN (degenerate) on some fold; among errors within ``tolerance`` of the lowest
    (``one_row_share`` for RLP-Boost's nu, else 0) the smallest nu (``larger``: the grid of nu) or, among
    equal errors, the middle C (``_pick``)."""
    grid = np.asarray(grid, dtype=np.float64)
    if not fold_errors:
        return AutoChoice(None, grid, np.full(grid.shape[0], np.nan), 0)
    errors = np.mean(fold_errors, axis=0)
    return AutoChoice(_pick(grid, errors, larger, tolerance), grid, errors, len(fold_errors))


def one_row_share(y, p, seed, folds=AUTO_FOLDS):
    """The most one held-out row can move the mean held-out error over the folds of ``held_out_folds`` (rows
    with labels ``y``, weights ``p`` > 0): max over folds of the row's share of its fold's held-out weight,
    divided by the number of folds (about 1 / n without sample weights); 0 when nothing can be scored."""
    pairs = held_out_folds(y, seed, folds)
    if not pairs:
        return 0.0
    return max(float(p[held].max() / p[held].sum()) for _, held in pairs) / len(pairs)


def choose_nu(M, y, p, seed, grid=NU_GRID, folds=AUTO_FOLDS):
    """nu="auto" over fixed voters M (int8 or float [voters, rows], margins y_i h_j(x_i)) of the rows with labels
    ``y`` (0 / 1) and weights ``p`` > 0: every nu of ``grid`` scored by ``nu_errors`` on each fold of
    ``held_out_folds``, chosen by ``choose`` (among errors within one held-out row of the lowest, the
    smallest; ``SOFT_NU_GRID`` when the LP is degenerate at every nu of NU_GRID: ``choose_nu_of_folds``). The
    estimators' fits use voters fitted without each fold's held-out rows instead; this one scores the voters at
    hand (``refit_weights(nu="auto")``, LPBoost's too: they are the model's own)."""
    fold_data = []
    for train, held in held_out_folds(y, seed, folds):
        q = p[train] / p[train].sum()
        fold_data.append((M[:, train], q, M[:, held], y[held], p[held]))
    return choose_nu_of_folds(fold_data, one_row_share(y, p, seed, folds), grid)


def choose_nu_of_folds(fold_data, tolerance=0.0, grid=NU_GRID):
    """``choose`` over the nu of ``grid`` scored by ``nu_errors`` on each fold's (M_train, q, M_held, y_held,
    p_held); when the LP is degenerate at every one of them (on some fold), over ``SOFT_NU_GRID`` instead, so a
    softer margin is chosen rather than none (then the fit would fall back to a nu where the LP is degenerate
    too). The soft values are scored only then, each fold's LP solved afresh: a choice within ``grid`` is as
    it was without them."""
    choice = choose(grid, [nu_errors(*f, grid) for f in fold_data], larger=True, tolerance=tolerance)
    if choice.value is None and fold_data and grid == NU_GRID:
        soft = choose(SOFT_NU_GRID, [nu_errors(*f, SOFT_NU_GRID) for f in fold_data], larger=True,
                      tolerance=tolerance)
        if soft.value is not None:
            return soft
    return choice


def choose_C(M, y, p, seed, solver, grid=C_GRID, folds=AUTO_FOLDS):
    """C="auto" over fixed voters M, as ``choose_nu``."""
    out = []
    for train, held in held_out_folds(y, seed, folds):
        q = p[train] / p[train].sum()
        out.append(C_errors(M[:, train], q, M[:, held], y[held], p[held], solver, grid))
    return choose(grid, out, larger=False)


def _pick(grid, errors, larger=None, tolerance=0.0):
    """The grid value with the lowest error (NaN: never). Ties mean the folds cannot tell the values apart (a
    fold's AdaBoost that stopped after one perfect tree gives every nu the same error). Among equal errors:
    for nu (``larger`` True: larger values allow more margin errors) the smallest tied value, the hardest
    margin the held-out rows found no cost in (the large end, where the LP keeps fewer voters, was the worst
    guess: on iris with depth-3 trees the middle of the ties gave LPBoost 6.0 % test error, the smallest
    2.0 %); for C the middle one (the lower median of the tied values). Errors within ``tolerance`` of the
    lowest count as equal: ``one_row_share`` for RLP-Boost's nu and in ``choose_nu``, the most one held-out
    row can move the mean, since one row is the least difference the held-out rows can show and no evidence
    for a softer margin (on iris with stumps one row in one fold of 33 had RLP-Boost take nu = 0.15 or 0.2
    for a class over 0.02); 0 for LPBoost's nu and for C."""
    ok = np.flatnonzero(np.isfinite(errors))
    if ok.shape[0] == 0:
        return None
    best = errors[ok].min()
    tied = ok[errors[ok] <= best + tolerance + 1e-12]
    return float(grid[tied[0] if larger else tied[(tied.shape[0] - 1) // 2]])


#: where nu="auto" starts when no nu could be scored (a class with fewer rows than folds)
FALLBACK_NU = 0.2
#: where C="auto" starts when no C could be scored
FALLBACK_C = 0.1


def solve_nu_from(M, p, start):
    """The soft-margin LP over M on the distribution p at ``start``, or, should it be degenerate, at the next
    larger nu of ``NU_GRID`` and then of ``SOFT_NU_GRID`` that is not. Returns (nu, LPSolution)."""
    master = SoftMarginMaster(p / start)
    master.add_columns(M)
    for nu in [start] + [g for g in NU_GRID + SOFT_NU_GRID if g > start]:
        master.set_caps(p / nu)
        sol = master.solve()
        if sol.value > DEGENERATE:
            break
    return nu, sol


def solve_C_from(M, p, start, solver):
    """The QP over M at ``start``, or at the next larger C of ``C_GRID`` while its weights are all 0.
    Returns (C, QPSolution)."""
    Mf = np.asarray(M, dtype=np.float64)
    for C in [start] + [g for g in C_GRID if g > start]:
        sol = RQP_SOLVERS[solver](Mf, C * p * p.shape[0])
        if np.any(sol.b > 0):
            break
    return C, sol


def solve_auto_nu(M, y, p, seed):
    """nu="auto" over the voters at hand: ``choose_nu``, then ``solve_nu_from`` on all the rows (from
    ``FALLBACK_NU`` when nothing could be scored). Returns (nu, LPSolution, AutoChoice)."""
    choice = choose_nu(M, y, p, seed)
    nu, sol = solve_nu_from(M, p, FALLBACK_NU if choice.value is None else choice.value)
    return nu, sol, choice


def solve_auto_C(M, y, p, seed, solver):
    """C="auto" over the voters at hand: ``choose_C``, then ``solve_C_from``. Returns (C, QPSolution, AutoChoice)."""
    choice = choose_C(M, y, p, seed, solver)
    C, sol = solve_C_from(M, p, FALLBACK_C if choice.value is None else choice.value, solver)
    return C, sol, choice
