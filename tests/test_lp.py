"""Totally corrective boosting: LPBoost's column generation, RLP-Boost and RQP-Boost.

Column generation must end where the LP over every stump ends (that LP solved directly with
scipy's linprog on the full stump matrix); the master's value never falls; its dual weights are a
capped distribution; primal and dual values agree. RQP's two solvers agree; RLP is LPBoost's
master over AdaBoost's voters.
"""
import sys
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fastboost import AdaBoostClassifier, LPBoostClassifier, RLPBoostClassifier, RQPBoostClassifier, load
from fastboost._binning import BinMapper
from fastboost._driver import Model
from fastboost._lp import (
    SoftMarginMaster,
    linprog_soft_margin_lp,
    qp_objective,
    soft_margin_caps,
    solve_rqp_highs,
    solve_rqp_lbfgs,
    voter_margins,
)
from fastboost._types import NODE_DTYPE
from fastboost.datasets import make_twonorm

SETTINGS = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# ----------------------------------------------------------------------------- references
def lp_value_of(M, caps, a):
    """max over rho of rho - sum_i D_i max(0, rho - m_i), m = M^T a: the primal value of the weights a
    (a concave piecewise-linear function of rho, maximal at one of the margins)."""
    m = M.astype(np.float64).T @ a
    return max(r - caps @ np.maximum(0.0, r - m) for r in np.unique(m))


def all_stumps(X, y):
    """Every stump "x_f <= t gives s, else -s" of integer-valued X (t over the values and beyond the
    last: constant stumps), s = +-1, as a margin matrix M[j, i] = y_i h_j(x_i)."""
    ys = np.where(y == 1, 1, -1)
    cols = []
    for f in range(X.shape[1]):
        for t in np.unique(X[:, f]):
            h = np.where(X[:, f] <= t, 1, -1)
            cols += [h * ys, -h * ys]
    return np.unique(np.array(cols, dtype=np.int8), axis=0)


def small_data(seed, n=60, d=3, values=5, noise=0.25):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, values, (n, d)).astype(np.float64)
    y = ((X[:, 0] + X[:, 1] - values + 1 + rng.normal(0, values * noise, n)) > 0).astype(int)
    if y.min() == y.max():
        y[0] = 1 - y[0]
    return X, y


class AllRounds:
    """A fit callback keeping the records of every round (the fit drops voters whose weight ends at 0)."""

    def __init__(self):
        self.rounds = None

    def __call__(self, done, rounds):
        self.rounds = rounds
        return False


# ----------------------------------------------------------------------------- column generation
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("soft", [{"nu": 0.3}, {"nu": 0.6}, {"nu": 1.0}, {"capping": 20.0}])
def test_column_generation_ends_at_the_lp_over_all_stumps(seed, soft):
    X, y = small_data(seed)
    log = AllRounds()
    clf = LPBoostClassifier(500, tol=1e-9, **soft).fit(X, y, callbacks=[log])
    caps = soft_margin_caps(np.full(len(y), 1.0 / len(y)), soft.get("nu"), soft.get("capping"))
    ref = linprog_soft_margin_lp(all_stumps(X, y), caps)
    assert clf.stopped_by_rule_  # it stopped because no stump prices out, not at n_estimators
    assert clf.objective_ == pytest.approx(ref.value, abs=1e-7)
    values = log.rounds["lp_value"]
    assert np.all(np.diff(values) >= -1e-9)  # the master's value never falls as columns are added
    assert values[-1] == pytest.approx(clf.objective_, abs=1e-12)
    np.testing.assert_allclose(log.rounds["lp_beta"], values, atol=1e-7)  # strong duality, every round
    # the kept voters' weights are a distribution, and that distribution reaches the LP's value
    a = clf.estimator_weights_
    assert np.all(a > 0) and a.sum() == pytest.approx(1.0, abs=1e-9)
    assert clf.rounds_["n_active"][-1] >= clf.n_estimators_ or clf.n_estimators_ == np.count_nonzero(a)
    M = voter_margins_of(clf, X, y)
    assert lp_value_of(M, caps, a) == pytest.approx(ref.value, abs=1e-7)


def voter_margins_of(clf, X, y):
    """M[j, i] = y_i h_j(x_i) of a fitted binary model, from its raw-X predictions (one voter at a time)."""
    ys = np.where(y == clf.classes_[1], 1, -1)
    rows = []
    for raw, _ in _voters(clf, X):
        rows.append(np.sign(raw) * ys)
    return np.array(rows, dtype=np.int8)


def _voters(clf, X):
    prev = np.zeros(X.shape[0])
    for t, (raw, total) in enumerate(clf._staged_raw(clf._check_predict_X(X))):
        yield (raw - prev) / clf.rounds_["alpha"][t], total
        prev = raw


@SETTINGS
@given(st.integers(0, 2 ** 31 - 1), st.integers(1, 40), st.integers(20, 120), st.floats(0.05, 1.0))
def test_master_duals_are_a_capped_distribution_and_strong_duality_holds(seed, k, m, nu):
    rng = np.random.default_rng(seed)
    M = np.where(rng.random((k, m)) < rng.uniform(0.3, 0.8, (k, 1)), 1, -1).astype(np.int8)
    p = rng.random(m) + 0.1
    p /= p.sum()
    caps = soft_margin_caps(p, nu)
    master = SoftMarginMaster(caps)
    previous = -np.inf
    for j in range(k):
        master.add_columns(M[j:j + 1])
        sol = master.solve()
        assert sol.value >= previous - 1e-9
        previous = sol.value
    u = sol.u
    assert u.sum() == pytest.approx(1.0, abs=1e-9)
    assert np.all(u >= 0) and np.all(u <= caps * (1 + 1e-9))
    dual = (M.astype(np.float64) @ u).max()  # beta: the largest edge of any column on u
    assert sol.beta == pytest.approx(dual, abs=1e-7)
    assert sol.value == pytest.approx(dual, abs=1e-7)
    assert lp_value_of(M, caps, sol.weights) == pytest.approx(sol.value, abs=1e-7)
    ref = linprog_soft_margin_lp(M, caps)  # from scratch, the same LP
    assert ref.value == pytest.approx(sol.value, abs=1e-7)


def test_warm_started_master_matches_a_fresh_solve_every_round():
    rng = np.random.default_rng(3)
    M = np.where(rng.random((30, 200)) < 0.6, 1, -1).astype(np.int8)
    caps = np.full(200, 1 / (0.2 * 200))
    master = SoftMarginMaster(caps)
    for j in range(30):
        master.add_columns(M[j:j + 1])
        assert master.solve().value == pytest.approx(linprog_soft_margin_lp(M[:j + 1], caps).value, abs=1e-9)


# ----------------------------------------------------------------------------- the margin matrix kernel
@pytest.mark.parametrize("params", [{}, {"max_depth": 3}, {"max_depth": 2, "criterion": "gini"}])
def test_margin_matrix_kernel_matches_raw_predictions(params, replay_data):
    X, y = replay_data
    clf = AdaBoostClassifier(25, **params).fit(X, y)

    mapper = BinMapper(clf.max_bins).fit(X, np.full(len(y), 1.0 / len(y)))
    codes = mapper.transform(X)
    y_idx = (y == clf.classes_[1]).astype(np.uint16)
    rows = np.arange(len(y))[::3].copy()
    nodes = clf.nodes_ if clf.nodes_ is not None else np.zeros((0, 1), NODE_DTYPE)
    model = Model(clf.rounds_, nodes)
    fast = voter_margins(codes, y_idx, rows, model, 0, clf.n_estimators_, mapper.missing_code)
    one = np.vstack([voter_margins(codes, y_idx, rows, model, j, 1, mapper.missing_code)
                     for j in range(clf.n_estimators_)])
    ref = voter_margins_of(clf, X, y)[:, rows]
    np.testing.assert_array_equal(fast, ref)
    np.testing.assert_array_equal(one, ref)


# ----------------------------------------------------------------------------- the estimators
@pytest.fixture(scope="module")
def twonorm():
    X, y = make_twonorm(900, random_state=0)
    return X[:600], y[:600], X[600:], y[600:]


@pytest.mark.parametrize("C", [1e-20, 1e300])
def test_a_qp_highs_cannot_solve_is_an_error_in_bounded_time(C):
    """HiGHS's active-set QP cycles on some problems (C = 1e-20 here: it ran for hours) and reports no status on
    others (1e300): an iteration limit, and an error that names the default solver, which solves both."""
    X, y = make_twonorm(600, random_state=0)
    with pytest.raises(RuntimeError, match=r"HiGHS's QP solver found no optimum .* solver='lbfgs' \(the default\)"):
        RQPBoostClassifier(20, C=C, solver="highs", random_state=0).fit(X, y)


def test_C_auto_passes_over_a_C_highs_cannot_solve(monkeypatch):
    """C="auto" with solver="highs": a fold's C where HiGHS finds no optimum is no candidate (NaN), not the end of
    the fit (or, before the iteration limit, a fit that never ended)."""
    from fastboost import _lp

    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 200)
    M = np.where(rng.random((6, 200)) < 0.7, 1.0, -1.0)  # voters right on 70 % of the rows
    q = np.full(150, 1 / 150)
    real = _lp.RQP_SOLVERS["highs"]

    def fails_at_the_smallest_C(M, caps):
        if caps[0] < 0.002 * caps.shape[0] * q[0]:
            raise RuntimeError("HiGHS's QP solver found no optimum")
        return real(M, caps)

    monkeypatch.setitem(_lp.RQP_SOLVERS, "highs", fails_at_the_smallest_C)
    errors = _lp.C_errors(M[:, :150], q, M[:, 150:], y[150:], np.full(50, 1 / 50), "highs")
    assert np.isnan(errors[0]) and np.all(np.isfinite(errors[1:]))


def test_C_auto_scores_no_C_on_an_uncertified_lbfgs_answer(monkeypatch):
    """C="auto" with L-BFGS-B: a warm-started answer whose duality gap is above UNCONVERGED_GAP is solved again
    from L-BFGS-B's own start; a C still without a certified answer is no candidate (NaN), never scored on
    weights far from the optimum's. Certified answers score as before."""
    from fastboost import _lp

    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 200)
    M = np.clip(rng.normal(0.3, 0.6, (6, 200)), -1.0, 1.0)  # confidence-rated margins: no tied held-out scores
    q = np.full(150, 1 / 150)
    args = (M[:, :150], q, M[:, 150:], y[150:], np.full(50, 1 / 50), "lbfgs")
    reference = _lp.C_errors(*args)
    assert np.all(np.isfinite(reference))
    real, calls = _lp.solve_rqp_lbfgs, []

    def short(M, caps, u0=None):  # stops after 2 iterations: at the C of index 3 always, at index 4 when warm
        at = [np.isclose(caps[0], c) for c in _lp.C_GRID]
        calls.append((at.index(True), u0 is not None))
        return real(M, caps, u0=u0, max_iter=2 if at[3] or (at[4] and u0 is not None) else 15000)

    monkeypatch.setattr(_lp, "solve_rqp_lbfgs", short)
    errors = _lp.C_errors(*args)
    assert np.isnan(errors[3])
    keep = np.arange(errors.shape[0]) != 3
    np.testing.assert_allclose(errors[keep], reference[keep])
    assert [call for call in calls if call[0] in (3, 4)] == [(3, True), (3, False), (4, True), (4, False)]


def test_lbfgs_short_of_the_optimum_warns(twonorm):
    """At a large C L-BFGS-B can stop at its iteration limit far from the QP's optimum (2 voters and 69 % training
    accuracy at C = 1e6 where HiGHS keeps 20 and 98.5 %): a warning naming C and the gap, in fit and in
    refit_weights; none where the gap certifies the answer."""
    X, y, _, _ = twonorm
    with pytest.warns(UserWarning, match=r"L-BFGS-B stopped short of the quadratic program's optimum at C=1e\+06 "
                                         r"\(relative duality gap"):
        clf = RQPBoostClassifier(20, C=1e6, random_state=0).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        clf.refit_weights(X, y, C=1.0)
    with pytest.warns(UserWarning, match="stopped short .* at C=1e\\+09"):
        clf.refit_weights(X, y, C=1e9)


def test_rlp_is_the_lpboost_master_over_adaboosts_voters(twonorm):
    X, y, Xt, yt = twonorm
    ada = AdaBoostClassifier(40).fit(X, y)
    rlp = RLPBoostClassifier(40, nu=0.2).fit(X, y)
    M = voter_margins_of(ada, X, y)
    caps = soft_margin_caps(np.full(len(y), 1.0 / len(y)), 0.2)
    master = SoftMarginMaster(caps)
    for j in range(M.shape[0]):  # column by column, as LPBoost adds them
        master.add_columns(M[j:j + 1])
        sol = master.solve()
    assert rlp.objective_ == pytest.approx(sol.value, abs=1e-9)
    assert rlp.objective_ == pytest.approx(linprog_soft_margin_lp(M, caps).value, abs=1e-7)
    # the same voters as AdaBoost (those the LP keeps), re-weighted
    kept = sol.weights > 0
    assert rlp.n_estimators_ == np.count_nonzero(kept)
    np.testing.assert_array_equal(rlp.rounds_["feature"], ada.rounds_["feature"][kept])
    np.testing.assert_array_equal(rlp.rounds_["bin"], ada.rounds_["bin"][kept])
    np.testing.assert_allclose(rlp.estimator_weights_, sol.weights[kept], atol=1e-9)
    assert lp_value_of(voter_margins_of(rlp, X, y), caps, rlp.estimator_weights_) == pytest.approx(sol.value,
                                                                                                     abs=1e-7)


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("C", [0.01, 0.3, 5.0])
def test_rqp_primal_and_dual_solvers_agree(seed, C):
    rng = np.random.default_rng(seed)
    k, m = rng.integers(3, 40), rng.integers(30, 300)
    M = np.where(rng.random((k, m)) < rng.uniform(0.35, 0.8, (k, 1)), 1, -1).astype(np.int8)
    caps = np.full(m, C) * rng.uniform(0.5, 1.5, m)
    primal = solve_rqp_highs(M, caps)
    dual = solve_rqp_lbfgs(M, caps)
    assert qp_objective(M, primal.b, caps) == pytest.approx(primal.objective, abs=1e-7)
    assert dual.objective == pytest.approx(primal.objective, abs=1e-6)
    np.testing.assert_allclose(dual.b, primal.b, atol=1e-5)
    # duality: the dual's value at u, sum u - ||max(0, M u) / 2||**2, closes the gap, as the solver reports
    half = 0.5 * np.maximum(0.0, M.astype(np.float64) @ dual.u)
    assert dual.u.sum() - half @ half == pytest.approx(primal.objective, abs=1e-6)
    assert -1e-12 <= dual.gap <= 1e-9  # the solve stops on a certified gap of 1e-10
    assert dual.gap == pytest.approx((dual.objective - (dual.u.sum() - half @ half)) / max(1.0, dual.objective),
                                     abs=1e-12)


@pytest.mark.parametrize("solver", ["highs", "lbfgs"])
def test_rqp_estimator_weights_solve_the_qp(twonorm, solver):
    X, y, Xt, yt = twonorm
    ada = AdaBoostClassifier(30, max_depth=2).fit(X, y)
    rqp = RQPBoostClassifier(30, C=0.5, solver=solver, max_depth=2).fit(X, y)
    M = voter_margins_of(ada, X, y)
    ref = solve_rqp_highs(M, np.full(len(y), 0.5))
    kept = ref.b > 0
    assert rqp.objective_ == pytest.approx(ref.objective, abs=1e-6)
    np.testing.assert_allclose(rqp.estimator_weights_, ref.b[kept] / ref.b.sum(), atol=1e-5)
    assert rqp.score(Xt, yt) > 0.9


def test_sample_weights_equal_repeated_rows():
    """Caps p_i / nu: a weight of 2 is a repeated row, so at convergence the LP values agree (the duals of
    a degenerate LP, and so the voters on the way, may differ)."""
    X, y = small_data(5, n=80)
    w = np.random.default_rng(0).integers(0, 4, len(y))
    w[:2] = 1
    a = LPBoostClassifier(500, nu=0.4, tol=1e-10).fit(X, y, sample_weight=w)
    b = LPBoostClassifier(500, nu=0.4, tol=1e-10).fit(np.repeat(X, w, axis=0), np.repeat(y, w))
    assert a.stopped_by_rule_ and b.stopped_by_rule_
    assert a.objective_ == pytest.approx(b.objective_, abs=1e-9)
    caps = soft_margin_caps(np.full(w.sum(), 1.0 / w.sum()), 0.4)
    ref = linprog_soft_margin_lp(all_stumps(np.repeat(X, w, axis=0), np.repeat(y, w)), caps)
    assert a.objective_ == pytest.approx(ref.value, abs=1e-7)


def test_lpboost_validation_keeps_the_best_solve(twonorm):
    X, y, Xt, yt = twonorm
    clf = LPBoostClassifier(80, nu=0.3, n_iter_no_change=15).fit(X, y, eval_set=(Xt, yt))
    errors = clf.validation_errors_
    assert not np.isnan(errors).any()
    best = int(np.argmin(errors))
    # the kept model is the master's solution at the best round: its validation error is the minimum
    assert 1.0 - clf.score(Xt, yt) == pytest.approx(errors[best], abs=1e-12)
    assert clf.stopped_early_ == (len(errors) - 1 - best >= 15)


def test_multiclass_one_vs_rest_and_model_files(tmp_path):
    from sklearn.datasets import load_wine

    X, y = load_wine(return_X_y=True)
    for est in (LPBoostClassifier(30, nu=0.1), RLPBoostClassifier(20), RQPBoostClassifier(20, solver="lbfgs")):
        est.fit(X, y)
        assert len(est.estimators_) == 3 and est.score(X, y) > 0.9
        est.save(tmp_path / "m.fbm")
        back = load(tmp_path / "m.fbm")
        np.testing.assert_array_equal(back.predict_proba(X), est.predict_proba(X))
        assert type(back) is type(est) and back.get_params() == est.get_params()


def test_binary_model_file_keeps_the_lp_records(tmp_path, twonorm):
    X, y, Xt, yt = twonorm
    clf = LPBoostClassifier(30, nu=0.3, max_depth=2).fit(X, y)
    clf.save(tmp_path / "m.fbm")
    back = load(tmp_path / "m.fbm")
    assert back.rounds_.tobytes() == clf.rounds_.tobytes()
    assert back.objective_ == clf.objective_
    np.testing.assert_array_equal(back.decision_function(Xt), clf.decision_function(Xt))


def test_staged_and_importances(twonorm):
    X, y, Xt, yt = twonorm
    clf = LPBoostClassifier(40, nu=0.3).fit(X, y)
    staged = list(clf.staged_decision_function(Xt))
    assert len(staged) == clf.n_estimators_
    np.testing.assert_allclose(staged[-1], clf.decision_function(Xt), atol=1e-12)
    assert clf.feature_importances_.sum() == pytest.approx(1.0)


# ----------------------------------------------------------------------------- bad input
def test_nu_and_capping_together_are_refused():
    X, y = small_data(0)
    for cls in (LPBoostClassifier, RLPBoostClassifier):
        with pytest.raises(ValueError, match="nu or capping"):
            cls(5, nu=0.2, capping=5).fit(X, y)
        with pytest.raises(ValueError, match="capping=100 must be at most"):
            cls(5, capping=100).fit(X, y)
    with pytest.raises(ValueError, match="nu"):
        LPBoostClassifier(5, nu=0.0).fit(X, y)


def test_without_highspy_the_lp_estimators_name_the_extra(monkeypatch, tmp_path):
    """Fitting needs the extra (an ImportError naming it, before any round); loading and predicting a saved
    LP model does not (it said the file was damaged)."""
    import fastboost

    X, y = small_data(0)
    fitted = [LPBoostClassifier(5, nu=0.2).fit(X, y), RLPBoostClassifier(5, nu=0.2).fit(X, y)]
    for k, model in enumerate(fitted):
        model.save(tmp_path / f"{k}.fbm")
    monkeypatch.setitem(sys.modules, "highspy", None)
    for est in (LPBoostClassifier(5), RLPBoostClassifier(5), RQPBoostClassifier(5, solver="highs")):
        with pytest.raises(ImportError, match=r'pip install "fastboost\[lp\]"'):
            est.fit(X, y)
    assert RQPBoostClassifier(5).fit(X, y).n_estimators_ >= 1  # the default solver needs only SciPy
    for k, model in enumerate(fitted):
        assert np.array_equal(fastboost.load(tmp_path / f"{k}.fbm").decision_function(X), model.decision_function(X))


def test_one_vs_rest_validates_each_class_on_the_shared_eval_set():
    from sklearn.datasets import load_wine

    X, y = load_wine(return_X_y=True)
    rng = np.random.default_rng(0)
    order = rng.permutation(len(y))
    tr, va = order[:120], order[120:]
    clf = LPBoostClassifier(40, nu=0.1, n_iter_no_change=10).fit(X[tr], y[tr], eval_set=(X[va], y[va]))
    for c, model in zip(clf.classes_, clf.estimators_):
        errors = model.validation_errors_
        assert 1.0 - model.score(X[va], (y[va] == c).astype(int)) == pytest.approx(errors.min(), abs=1e-12)


def test_command_line_trains_lpboost(tmp_path, capsys):
    from fastboost.cli import main

    X, y = small_data(1)
    np.save(tmp_path / "d.npy", np.column_stack([X, y]))
    assert main(["train", str(tmp_path / "d.npy"), "--target", "3", "--algorithm", "lpboost", "--nu", "0.3",
                 "-o", str(tmp_path / "m.fbm")]) == 0
    assert type(load(tmp_path / "m.fbm")) is LPBoostClassifier
    assert main(["train", str(tmp_path / "d.npy"), "--target", "3", "--algorithm", "rqpboost", "--nu", "0.3",
                 "-o", str(tmp_path / "m.fbm")]) == 2
    assert "rqpboost has no option --nu" in capsys.readouterr().err


@pytest.mark.parametrize("cls", [RLPBoostClassifier, LPBoostClassifier])
def test_no_positive_soft_margin_is_a_warning_not_a_silent_constant_model(cls):
    from fastboost.datasets import make_waveform

    X, y = make_waveform(600, random_state=3, binary=True, positive_class=1)  # Bayes error about 10%
    with pytest.warns(UserWarning, match="soft-margin LP's value .* <= 0 at nu=0.01"):
        small = cls(40, nu=0.01).fit(X, y)
    assert small.objective_ <= 1e-9
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        large = cls(40, nu=0.4).fit(X, y)
    assert large.objective_ > 0
    assert len(np.unique(large.predict(X))) == 2


# ----------------------------------------------------------------------------- nu="auto", C="auto", refit_weights
def test_master_re_solved_at_other_caps_matches_a_fresh_lp():
    """set_caps moves only the bounds of u: the re-solve from the previous basis reaches the LP of the new caps."""
    rng = np.random.default_rng(3)
    M = np.sign(rng.normal(0.3, 1.0, (25, 120))).astype(np.int8)
    p = rng.random(120)
    p /= p.sum()
    master = SoftMarginMaster(p / 0.5)
    master.add_columns(M)
    for nu in (0.5, 0.05, 0.9, 0.2, 0.02, 0.6):
        master.set_caps(p / nu)
        sol = master.solve()
        ref = linprog_soft_margin_lp(M, p / nu)
        assert sol.value == pytest.approx(ref.value, abs=1e-8)
        assert sol.beta == pytest.approx(sol.value, abs=1e-8)
        assert np.all(sol.u <= p / nu + 1e-12) and sol.u.sum() == pytest.approx(1.0)


@pytest.mark.parametrize("seed, ipm_check", [(0, False), (1, False), (0, True), (1, True)])
def test_choose_nu_scores_each_nu_by_held_out_error_of_the_fold_lps(seed, ipm_check, monkeypatch):
    """choose_nu against a plain reference: each fold's LP solved from scratch with linprog at every nu (real
    margins make each optimum unique), its weighted held-out error, NaN for a degenerate LP, averaged. The same
    with the interior-point check of a possibly degenerate LP (large margin matrices) on: it finds the degenerate
    ones, which the simplex method then never solves."""
    from sklearn.model_selection import StratifiedKFold

    from fastboost import _lp
    from fastboost._lp import AUTO_FOLDS, NU_GRID, choose_nu

    found = []
    if ipm_check:
        monkeypatch.setattr(_lp, "IPM_CHECK_ENTRIES", 0)
        check = _lp.degenerate_by_ipm
        monkeypatch.setattr(_lp, "degenerate_by_ipm", lambda *a: found.append(check(*a)) or found[-1])
    rng = np.random.default_rng(seed)
    n, k = 150, 12
    y = (rng.random(n) < 0.4).astype(np.uint8)
    M = rng.normal(0.4, 1.0, (k, n))  # degenerate at the smaller nu of the grid, not at the larger
    p = rng.random(n) + 0.5
    p /= p.sum()
    choice = choose_nu(M, y, p, seed=7)
    ref = np.zeros(len(NU_GRID))
    folds = StratifiedKFold(n_splits=AUTO_FOLDS, shuffle=True, random_state=7).split(np.zeros(n), y)
    for train, held in folds:
        q = p[train] / p[train].sum()
        for g, nu in enumerate(NU_GRID):
            sol = linprog_soft_margin_lp(M[:, train], q / nu)
            F = sol.weights @ M[:, held]
            wrong = (F < 0) | ((F == 0) & (y[held] == 1))
            ref[g] += np.nan if sol.value <= 1e-9 else (p[held] @ wrong) / p[held].sum() / AUTO_FOLDS
    np.testing.assert_allclose(choice.errors, ref, atol=1e-12)
    ok = np.isfinite(ref)
    assert ok.any()
    best = ref[ok].min()
    folds = StratifiedKFold(n_splits=AUTO_FOLDS, shuffle=True, random_state=7).split(np.zeros(n), y)
    one_row = max(p[held].max() / p[held].sum() for _, held in folds) / AUTO_FOLDS
    tied = [nu for nu, e in zip(NU_GRID, ref) if np.isfinite(e) and e <= best + one_row + 1e-12]
    assert choice.value == tied[0]  # among errors within one held-out row of the lowest the smallest nu
    if ipm_check:
        assert True in found  # (a degenerate nu found by the check, on some fold)


@pytest.mark.parametrize("seed", range(6))
def test_tail_mean_is_the_lp_value_of_fixed_voter_weights(seed):
    """tail_mean of a combination's margins equals the soft-margin LP's objective maximised over rho for those
    weights (the reference tries every margin as rho), with tied margins and uneven row weights."""
    from fastboost._lp import tail_mean

    rng = np.random.default_rng(seed)
    k, n = 4, 40
    M = rng.integers(-2, 3, (k, n)).astype(np.int8)  # (many ties)
    a = rng.random(k)
    a /= a.sum()
    q = rng.random(n) + 0.1
    q /= q.sum()
    for nu in (0.02, 0.1, 0.3, 0.5, 1.0):
        assert tail_mean(a @ M, q, nu) == pytest.approx(lp_value_of(M, q / nu, a), abs=1e-12)


@pytest.mark.parametrize("seed", range(8))
def test_a_positive_value_shown_by_fixed_weights_is_never_a_degenerate_lp(seed):
    """positive_value_shown is a lower bound: where it says the LP's value is positive, the LP solved agrees; and
    it says so for a nu where a single voter has a positive soft margin."""
    from fastboost._lp import DEGENERATE, positive_value_shown, solve_soft_margin_lp

    rng = np.random.default_rng(seed)
    M = np.sign(rng.normal(np.linspace(-0.2, 0.9, 10)[:, None], 1.0, (10, 80))).astype(np.int8)
    q = np.full(80, 1 / 80)
    weights, shown, degenerate = None, 0, 0
    for nu in (0.5, 0.4, 0.3, 0.2, 0.1, 0.05, 0.02):
        sol = solve_soft_margin_lp(M, q / nu)
        if positive_value_shown(M, q, nu, weights):
            assert sol.value > DEGENERATE
            shown += 1
        degenerate += sol.value <= DEGENERATE
        weights = sol.weights
    assert shown and degenerate  # (both cases met)
    best = M[np.argmax(M.sum(axis=1))]  # (a voter of error e < 1/4 has a positive soft margin at nu = 1/2)
    assert (best < 0).mean() < 0.25 and positive_value_shown(M, q, 0.5)


def test_choose_takes_the_smallest_nu_within_the_tolerance_and_the_middle_C_of_exact_ties():
    from fastboost._lp import choose, one_row_share

    grid = [0.02, 0.05, 0.1, 0.2, 0.5]
    folds = [np.array([0.10, 0.10, np.nan, 0.08, 0.07]), np.array([0.12, 0.11, 0.10, 0.10, 0.10])]
    # mean errors 0.11, 0.105, NaN, 0.09, 0.085: 0.2 is within 0.006 of the lowest, 0.05 is not; NaN never
    assert choose(grid, folds, larger=True).value == 0.5
    assert choose(grid, folds, larger=True, tolerance=0.006).value == 0.2
    assert choose(grid, folds, larger=True, tolerance=0.03).value == 0.02
    assert choose(grid, [np.array([0.3, 0.2, 0.2, 0.2, 0.3])], larger=False).value == 0.1  # the middle tie
    assert choose(grid, [], larger=True).value is None
    # one row's share: 1 / (fold size * folds) without weights; the heaviest row's share of its fold with them
    y = np.repeat(np.array([0, 1], np.uint8), [30, 30])
    assert one_row_share(y, np.full(60, 1 / 60), seed=0) == pytest.approx(1 / 20 / 3)
    p = np.full(60, 1.0)
    p[5] = 11.0  # 11 of its fold's 30
    assert one_row_share(y, p / p.sum(), seed=0) == pytest.approx(11 / 30 / 3)
    assert one_row_share(y[:32], np.full(32, 1 / 32), seed=0) == 0.0  # two rows of class 1: no folds


@pytest.mark.parametrize("cls", [RLPBoostClassifier, LPBoostClassifier])
def test_auto_nu_is_never_a_degenerate_lp(cls):
    """Where nu=0.01 gives an LP of value 0 (the case above), nu="auto" (the default) does not, and warns nothing."""
    from fastboost._lp import NU_GRID
    from fastboost.datasets import make_waveform

    X, y = make_waveform(600, random_state=3, binary=True, positive_class=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        clf = cls(40).fit(X, y)
    assert clf.get_params()["nu"] == "auto"
    assert clf.nu_ in NU_GRID and clf.objective_ > 1e-9
    assert len(np.unique(clf.predict(X))) == 2
    # the weights are the LP over the kept voters at nu_ (checked independently with linprog)
    M = voter_margins_of(clf, X, y)
    caps = soft_margin_caps(np.full(len(y), 1.0 / len(y)), clf.nu_)
    assert clf.objective_ == pytest.approx(linprog_soft_margin_lp(M, caps).value, abs=1e-7)
    if cls is LPBoostClassifier:  # column generation ran at the chosen nu: the published algorithm at nu_
        assert np.all(np.diff(clf.rounds_["lp_value"]) >= -1e-9)
        assert clf.rounds_["lp_value"][-1] == pytest.approx(clf.objective_, abs=1e-9)


@pytest.mark.parametrize("cls", [RLPBoostClassifier, LPBoostClassifier])
def test_auto_nu_goes_past_one_half_only_where_every_smaller_nu_is_degenerate(cls, monkeypatch):
    """Noisy data (about 35 % error) where the LP is degenerate at every nu up to 1/2: nu="auto" takes a softer
    nu (SOFT_NU_GRID) with a positive value, warns nothing, and predicts as well as AdaBoost (it kept a
    degenerate LP at 0.5 before: 38 % test accuracy on seed 3). The soft values are scored only there."""
    from fastboost import _lp
    from fastboost._lp import NU_GRID, SOFT_NU_GRID
    from fastboost.datasets import make_waveform

    scored = []
    real = _lp.nu_errors
    monkeypatch.setattr(_lp, "nu_errors", lambda *a: scored.append(tuple(a[-1])) or real(*a))
    for seed in (3, 4):
        rng = np.random.default_rng(seed)
        X = rng.normal(size=(2600, 4))
        y = ((X[:, 0] * X[:, 1] + 0.6 * X[:, 2] + rng.normal(size=2600)) > 0).astype(int)
        scored.clear()
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            clf = cls(30).fit(X[:600], y[:600])
        assert clf.nu_ in SOFT_NU_GRID and clf.objective_ > 1e-9
        assert set(scored) == {NU_GRID, SOFT_NU_GRID}
        ada = AdaBoostClassifier(30).fit(X[:600], y[:600])
        assert clf.score(X[600:], y[600:]) >= ada.score(X[600:], y[600:]) - 0.02
    X, y = make_waveform(600, random_state=3, binary=True, positive_class=1)  # (the case above: NU_GRID only)
    scored.clear()
    assert cls(40).fit(X, y).nu_ in NU_GRID and set(scored) == {NU_GRID}


@pytest.mark.filterwarnings("ignore:.*soft-margin LP's value")
def test_numeric_nu_sets_nu_and_capping_sets_its_nu():
    X, y = small_data(1, n=80)
    assert RLPBoostClassifier(10, nu=0.3).fit(X, y).nu_ == 0.3
    assert RLPBoostClassifier(10, nu=None).fit(X, y).nu_ == 0.1
    assert LPBoostClassifier(10, capping=20.0).fit(X, y).nu_ == pytest.approx(20.0 / 80)
    assert RQPBoostClassifier(10, C=0.5).fit(X, y).C_ == 0.5


def test_auto_C_is_chosen_on_held_out_folds_and_refit_weights_resolves_the_qp(twonorm):
    from fastboost._lp import C_GRID

    X, y, Xt, yt = twonorm
    clf = RQPBoostClassifier(30).fit(X, y)
    assert clf.get_params()["C"] == "auto" and clf.C_ in C_GRID
    assert clf.estimator_weights_.sum() == pytest.approx(1.0)
    M = voter_margins_of(clf, X, y).astype(np.float64)
    p = np.full(len(y), 1.0 / len(y))
    for C in (clf.C_, 0.05):
        clf.refit_weights(X, y, C=C)
        ref = solve_rqp_highs(M, C * p * len(y))
        assert clf.C_ == C
        assert clf.objective_ == pytest.approx(ref.objective, rel=1e-6, abs=1e-8)
        assert clf.n_estimators_ == M.shape[0]  # voters set to 0 keep their place


@pytest.mark.parametrize("cls", [RLPBoostClassifier, LPBoostClassifier])
def test_refit_weights_solves_the_lp_over_the_fitted_voters(cls, twonorm):
    X, y, Xt, yt = twonorm
    clf = cls(40, nu=0.3).fit(X, y)
    value = clf.objective_
    M = voter_margins_of(clf, X, y)
    p = np.full(len(y), 1.0 / len(y))
    assert clf.refit_weights(X, y, nu=0.3) is clf
    assert clf.objective_ == pytest.approx(value, abs=1e-9)  # the dropped voters had weight 0
    for nu in (0.05, 0.6):
        clf.refit_weights(X, y, nu=nu)
        assert clf.nu_ == nu
        assert clf.objective_ == pytest.approx(linprog_soft_margin_lp(M, soft_margin_caps(p, nu)).value, abs=1e-7)
        assert lp_value_of(M, soft_margin_caps(p, nu), clf.estimator_weights_) == pytest.approx(clf.objective_,
                                                                                                 abs=1e-7)
        np.testing.assert_array_equal(clf.estimator_weights_, clf.rounds_["alpha"])
    # sample weights: a weight of 2 is a repeated row
    w = np.r_[np.full(300, 2), np.ones(len(y) - 300)]
    clf.refit_weights(X, y, nu=0.2, sample_weight=w)
    a = clf.objective_
    clf.refit_weights(np.r_[X, X[:300]], np.r_[y, y[:300]], nu=0.2)
    assert clf.objective_ == pytest.approx(a, abs=1e-9)
    clf.refit_weights(X, y, nu="auto")
    assert 0 < clf.nu_ < 1
    with pytest.raises(ValueError, match="nu must be"):
        clf.refit_weights(X, y, nu=1.5)
    with pytest.raises(ValueError, match="labels the model was not fitted on"):
        clf.refit_weights(X, np.where(y == 1, 5, 0), nu=0.2)
    # rows of one class only (or one class at weight 0): refused, as fit refuses them, and nothing changes
    before = clf.decision_function(X)
    low, high = clf.classes_
    with pytest.raises(ValueError, match=r"refit_weights needs rows \(of positive weight\) of both classes; y has "
                                         rf"only {high}"):
        clf.refit_weights(X[y == high], y[y == high], nu=0.2)
    with pytest.raises(ValueError, match=f"of both classes; y has only {low}"):
        clf.refit_weights(X, y, nu=0.2, sample_weight=(y == low).astype(float))
    np.testing.assert_array_equal(clf.decision_function(X), before)


def test_refit_weights_one_vs_rest_and_model_files_keep_auto_and_the_chosen_values(tmp_path):
    from sklearn.datasets import load_wine

    X, y = load_wine(return_X_y=True)
    clf = RLPBoostClassifier(15).fit(X, y)
    clf.save(tmp_path / "m.fbm")
    back = load(tmp_path / "m.fbm")
    assert back.get_params()["nu"] == "auto"
    assert [m.nu_ for m in back.estimators_] == [m.nu_ for m in clf.estimators_]
    clf.refit_weights(X, y, nu=0.4)
    assert [m.nu_ for m in clf.estimators_] == [0.4] * 3
    # labels the model was not fitted on (or of another type) are refused, as for two classes, and change nothing
    before = clf.decision_function(X)
    for bad in (np.full(y.shape, "zzz"), y.astype(str), np.where(y == 2, 7, y)):
        with pytest.raises(ValueError, match="labels the model was not fitted on"):
            clf.refit_weights(X, bad, nu=0.3)
    with pytest.raises(ValueError, match="inconsistent numbers of samples|samples"):
        clf.refit_weights(X, y[:-1], nu=0.3)
    with pytest.raises(ValueError, match=r"y lacks the class\(es\) \[2\]"):
        clf.refit_weights(X[y < 2], y[y < 2], nu=0.3)
    np.testing.assert_array_equal(clf.decision_function(X), before)
    binary = RQPBoostClassifier(15).fit(X, (y == 1).astype(int))
    binary.save(tmp_path / "b.fbm")
    assert load(tmp_path / "b.fbm").C_ == binary.C_
    # a refusal on a later class (class 2 at weight 0: its LP has one class) leaves every class's model as it was;
    # the earlier classes had been re-solved
    with pytest.raises(ValueError, match="of both classes"):
        clf.refit_weights(X, y, nu=0.5, sample_weight=(y != 2).astype(float))
    assert [m.nu_ for m in clf.estimators_] == [0.4] * 3
    np.testing.assert_array_equal(clf.decision_function(X), before)


@pytest.mark.parametrize("fit_params", [{"capping": 150}, {}], ids=["capping", "auto"])
def test_the_degenerate_lp_warning_of_a_refit_names_the_nu_it_solved(fit_params):
    """refit_weights(nu=0.02) at a degenerate LP: the warning names nu=0.02, not the fit's capping, and does not
    say nu="auto" tried every value (it named the fit's settings)."""
    from fastboost.datasets import make_twonorm

    X, y = make_twonorm(300, random_state=0)
    y = np.where(np.random.default_rng(0).random(300) < 0.2, -y, y)
    clf = RLPBoostClassifier(30, random_state=0, **fit_params).fit(X, y)
    with pytest.warns(UserWarning, match=r"<= 0 at nu=0.02: no combination") as record:
        clf.refit_weights(X, y, nu=0.02)
    assert not any("capping" in str(w.message) or "auto" in str(w.message) for w in record)


@pytest.mark.parametrize("cls, key", [(RLPBoostClassifier, "nu"), (RQPBoostClassifier, "C")])
def test_refit_weights_of_a_model_without_voters_is_refused(cls, key):
    """No feature splits the rows: the fit keeps no voter (with a warning); re-solving over no voters was HiGHS's
    raw "Unbounded" (RLP-Boost) or silently nothing (RQP-Boost)."""
    X = np.ones((60, 3))
    y = np.r_[np.zeros(30, int), np.ones(30, int)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = cls(10, **{key: 0.3}).fit(X, y)
    assert clf.n_estimators_ == 0
    with pytest.raises(ValueError, match="refit_weights: the model has no voters"):
        clf.refit_weights(X, y, **{key: 0.3})


@pytest.mark.parametrize("cls, key, value", [(RLPBoostClassifier, "nu", 0.2), (LPBoostClassifier, "nu", 0.2),
                                             (RQPBoostClassifier, "C", 0.1)])
def test_refit_weights_at_the_fitted_value_weighs_the_classes_as_the_fit(cls, key, value):
    """class_weight: the fit's LP / QP weighs each row by its sample weight times its class's weight, and
    refit_weights on the training rows at the fitted nu / C gives the fit's weights back (it left the class
    weights out: another LP, weights moved by up to 0.83). One-vs-rest as well."""
    from sklearn.datasets import load_wine

    X, y = load_wine(return_X_y=True)
    for labels, weights in (((y == 2).astype(int), "balanced"), (y, {0: 1.0, 1: 1.0, 2: 5.0})):
        clf = cls(15, class_weight=weights, random_state=0, **{key: value}).fit(X, labels)
        before, decision = clf.__dict__.get("objective_"), clf.decision_function(X)
        clf.refit_weights(X, labels, **{key: value})
        if before is not None:
            assert clf.objective_ == pytest.approx(before, rel=1e-9, abs=1e-12)
        np.testing.assert_allclose(clf.decision_function(X), decision, rtol=1e-7, atol=1e-9)
