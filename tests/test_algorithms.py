"""Algorithm-level properties of AdaBoost and VadaBoost (see docs/algorithms.md).

Every reference quantity here is recomputed independently in NumPy from the raw
training data and the fitted ``rounds_`` records (feature, threshold, sides,
alpha): margins, losses, boosting weights and brute-force stump searches. The
only library functions used directly are the rule functions under test
(``*_transform`` / ``*_step``) and the estimators' public API.
"""
import warnings

import numpy as np
import pytest

from fastboost import AdaBoostClassifier, VadaBoostClassifier
from fastboost._algorithms import adaboost_step, vadaboost_step, vadaboost_transform
from fastboost._algorithms import identity_transform as adaboost_transform
from fastboost._driver import make_config, make_sums, make_workspace
from fastboost._types import TrainData
from fastboost.datasets import make_twonorm

FLOAT_FIELDS = ("threshold", "alpha", "error", "learner_error", "cost")


# ----------------------------------------------------------------------------- NumPy references
def signed_labels(y, classes):
    """y in {-1, +1}, +1 for classes_[1] (the estimators' convention)."""
    return np.where(np.asarray(y) == classes[1], 1.0, -1.0)


def stump_predict(X, rec):
    """Output (-1/+1) of one round's stump on raw X: left is x <= threshold, NaN left iff missing_left."""
    x = np.asarray(X, dtype=np.float64)[:, int(rec["feature"])]
    with np.errstate(invalid="ignore"):
        go_left = np.where(np.isnan(x), bool(rec["missing_left"]), x <= rec["threshold"])
    return np.where(go_left, float(rec["left"]), float(rec["right"]))


def staged_margins(X, rounds):
    """F_0 = 0, F_t = F_{t-1} + alpha_t h_t, as an array of shape (T + 1, n)."""
    F = np.zeros(X.shape[0])
    out = [F.copy()]
    for rec in rounds:
        F = F + rec["alpha"] * stump_predict(X, rec)
        out.append(F.copy())
    return np.array(out)


def vada_cost(F, ys, lam):
    """(1 - lam) S1**2 + lam n S2 with l = exp(-y F); F may be (T + 1, n)."""
    loss = np.exp(-ys * F)
    n = ys.shape[0]
    s1 = loss.sum(axis=-1)
    s2 = (loss ** 2).sum(axis=-1)
    return (1.0 - lam) * s1 ** 2 + lam * n * s2


def all_stumps(X):
    """Every stump's output (n_stumps, n) on raw X: x <= v left (each distinct v), NaN left or right,
    both polarities (-1 left / +1 right and the reverse), both sides non-empty."""
    out = []
    for f in range(X.shape[1]):
        x = X[:, f]
        nan = np.isnan(x)
        for v in np.unique(x[~nan]):
            for nan_left in (False, True):
                left = (x <= v) | (nan & nan_left)
                if left.all() or not left.any():
                    continue
                h = np.where(left, -1.0, 1.0)
                out += [h, -h]
    return np.array(out).reshape(-1, X.shape[0])


def min_weighted_error(X, ys, w):
    """Brute force: minimum weighted 0-1 error over every stump of all_stumps plus the two constants."""
    best = min(w[ys > 0].sum(), w[ys < 0].sum())
    H = all_stumps(X)
    return min(best, ((H != ys) * w).sum(axis=1).min()) if len(H) else best


def fit_full_run(model, X, y, T):
    """Fit, check that all T rounds ran and are sane, and return (rounds, signed y, staged margins F)."""
    model.fit(X, y)
    r = model.rounds_
    assert len(r) == T
    check_rounds_sane(model)
    ys = signed_labels(y, model.classes_)
    F = staged_margins(X, r)
    np.testing.assert_allclose(model.decision_function(X), F[-1], rtol=1e-12, atol=1e-12)
    return r, ys, F


def check_rounds_sane(model):
    """No NaN/inf anywhere in the record; every kept round has alpha > 0 and learner error < 1/2.

    (VadaBoost's learner sees u, not w: its w-weighted error may exceed 1/2.)
    """
    r = model.rounds_
    for name in FLOAT_FIELDS:
        if name == "threshold":
            assert not np.isnan(r[name]).any()
        else:
            assert np.isfinite(r[name]).all(), name
    assert np.all(r["alpha"] > 0)
    assert np.all(r["learner_error"] < 0.5)
    assert np.all((r["error"] >= 0) & (r["error"] <= 1))
    if isinstance(model, AdaBoostClassifier):
        assert np.all(r["error"] < 0.5)
    assert np.isin(r["left"], (-1, 1)).all() and np.isin(r["right"], (-1, 1)).all()
    assert np.isfinite(model.initial_cost_)


# ----------------------------------------------------------------------------- data
def integer_data(n=400, seed=0, nan_frac=0.0):
    """Integer features (few distinct values, many ties, a duplicated column), noisy string labels."""
    rng = np.random.default_rng(seed)
    X = np.column_stack([
        rng.integers(0, 10, n), rng.integers(0, 4, n), rng.integers(0, 2, n),
        rng.integers(-5, 5, n), rng.integers(0, 30, n),
    ]).astype(np.float64)
    X = np.column_stack([X, X[:, 0]])  # identical columns: ties between features
    score = X[:, 0] - 4.5 + 2.0 * (X[:, 1] - 1.5) * (X[:, 2] - 0.5) + 0.3 * X[:, 3] + rng.normal(0, 2.5, n)
    y = np.where(score > 0, "pos", "neg")
    if nan_frac:
        X[rng.random(X.shape) < nan_frac] = np.nan
    return X, y


@pytest.fixture(scope="module")
def twonorm():
    return make_twonorm(3000, 20, random_state=0)


@pytest.fixture(scope="module")
def intdata():
    return integer_data()


# ----------------------------------------------------------------------------- AdaBoost
@pytest.mark.parametrize("dataset", ["twonorm", "intdata"])
def test_adaboost_exponential_loss(dataset, request):
    X, y = request.getfixturevalue(dataset)
    T = 100
    model = AdaBoostClassifier(n_estimators=T)
    r, ys, F = fit_full_run(model, X, y, T)
    n = X.shape[0]
    loss = np.exp(-ys * F).sum(axis=1)
    assert loss[0] == n
    assert model.initial_cost_ == pytest.approx(n, rel=1e-12)
    assert np.all(np.diff(loss) < 0), "exponential loss must strictly decrease every round"
    np.testing.assert_allclose(r["cost"], loss[1:], rtol=1e-9)

    eps = r["error"]
    assert np.all((eps > 0) & (eps < 0.5))
    Z = 2.0 * np.sqrt(eps * (1.0 - eps))
    np.testing.assert_allclose(n * np.cumprod(Z), loss[1:], rtol=1e-9)
    np.testing.assert_allclose(r["alpha"], 0.5 * np.log((1.0 - eps) / eps), rtol=1e-9)
    # training 0-1 error (sgn(0) = -1) <= prod Z_s
    train_err = np.mean(ys * F[1:] <= 0, axis=1)
    assert np.all(train_err <= np.cumprod(Z) + 1e-12)


@pytest.mark.parametrize("nan_frac", [0.0, 0.1])
def test_adaboost_error_stump_is_brute_force_minimum(nan_frac):
    X, y = integer_data(n=300, seed=1, nan_frac=nan_frac)
    T = 30
    model = AdaBoostClassifier(n_estimators=T).fit(X, y)
    r = model.rounds_
    assert len(r) == T
    check_rounds_sane(model)
    ys = signed_labels(y, model.classes_)
    n = X.shape[0]
    w = np.full(n, 1.0 / n)
    for t, rec in enumerate(r):
        h = stump_predict(X, rec)
        err = w[h != ys].sum()
        best = min_weighted_error(X, ys, w)
        assert err == pytest.approx(rec["error"], rel=1e-9), f"round {t}: recorded error"
        assert rec["learner_error"] == pytest.approx(err, rel=1e-9), f"round {t}: learner error (u = w)"
        assert err == pytest.approx(best, rel=1e-9), f"round {t}: stump error {err} > brute-force min {best}"
        alpha = 0.5 * np.log((1.0 - err) / err)
        assert rec["alpha"] == pytest.approx(alpha, rel=1e-9), f"round {t}: alpha"
        w = w * np.exp(-alpha * ys * h)
        w /= w.sum()


# ----------------------------------------------------------------------------- VadaBoost
@pytest.mark.parametrize("lam", [0.0, 0.5, 1.0])
def test_vadaboost_cost_decreases_and_matches_record(lam, twonorm):
    X, y = twonorm
    T = 100
    model = VadaBoostClassifier(n_estimators=T, lam=lam)
    r, ys, F = fit_full_run(model, X, y, T)
    n = X.shape[0]
    C = vada_cost(F, ys, lam)
    assert C[0] == pytest.approx(n * n, rel=1e-12)
    assert model.initial_cost_ == pytest.approx(n * n, rel=1e-12)
    assert np.all(np.diff(C) < 0), f"VadaBoost cost must strictly decrease every round (lam={lam})"
    np.testing.assert_allclose(r["cost"], C[1:], rtol=1e-8)

    if lam == 0.0:
        # C_0 = S1**2 = (n prod Z^v)**2 with Z^v = (eps(1-eps))^(1/4) (sqrt(eps) + sqrt(1-eps))  [§2 (8)]
        eps = r["error"]
        zv = (eps * (1 - eps)) ** 0.25 * (np.sqrt(eps) + np.sqrt(1 - eps))
        np.testing.assert_allclose(r["cost"], (n * np.cumprod(zv)) ** 2, rtol=1e-8)


@pytest.mark.parametrize("lam", [0.0, 0.5, 1.0])
def test_vadaboost_replay_learner_weights_and_step(lam, intdata):
    """Replay w in NumPy: the learner sees u = lam n w^2 + (1-lam) w; its stump minimises the
    u-weighted error (brute force), alpha = 1/4 log(U_I/U_J), error is the w-weighted error."""
    X, y = intdata
    T = 25
    model = VadaBoostClassifier(n_estimators=T, lam=lam).fit(X, y)
    r = model.rounds_
    assert len(r) == T
    check_rounds_sane(model)
    ys = signed_labels(y, model.classes_)
    n = X.shape[0]
    w = np.full(n, 1.0 / n)
    for t, rec in enumerate(r):
        u = lam * n * w ** 2 + (1.0 - lam) * w
        u /= u.sum()
        h = stump_predict(X, rec)
        wrong = h != ys
        uerr = u[wrong].sum()
        assert rec["learner_error"] == pytest.approx(uerr, rel=1e-9), f"round {t}"
        assert rec["error"] == pytest.approx(w[wrong].sum(), rel=1e-9), f"round {t}"
        best = min_weighted_error(X, ys, u)
        assert uerr == pytest.approx(best, rel=1e-9), f"round {t}: u-error {uerr} > brute-force min {best}"
        alpha = 0.25 * np.log((1.0 - uerr) / uerr)
        assert rec["alpha"] == pytest.approx(alpha, rel=1e-9), f"round {t}"
        w = w * np.exp(-alpha * ys * h)
        w /= w.sum()


def _round_sums(w, correct, transform, lam):
    n = w.shape[0]
    p = np.full(n, 1.0 / n)
    u = np.full(n, np.nan)
    ylab = np.zeros(n, np.uint16)
    config = make_config(lam=lam, n_classes=2)
    ws = make_workspace(ylab, w.copy(), 1, 2, config)
    ws.rows.u[:] = np.nan
    data = TrainData(np.zeros((1, n), np.uint8), ylab, p, np.ones(1, np.int64), np.zeros((1, 256)),
                     np.zeros(1, np.uint8))
    transform(data, config[0], ws)
    u = ws.rows.u
    sums = make_sums(ui=u[correct].sum(), uj=u[~correct].sum(), wi=w[correct].sum(), wj=w[~correct].sum())[0]
    return u, sums


@pytest.mark.parametrize("lam, expected_u, expected_alpha", [
    (0.0, (0.4, 0.3, 0.2, 0.1), 0.549306),
    (0.5, (0.52, 0.33, 0.18, 0.07), 0.672205),
    (1.0, (0.64, 0.36, 0.16, 0.04), 0.841824),
])
def test_vadaboost_spec_test_vector(lam, expected_u, expected_alpha):
    w = np.array([0.4, 0.3, 0.2, 0.1])
    correct = np.array([True, True, True, False])
    u, sums = _round_sums(w, correct, vadaboost_transform, lam)
    np.testing.assert_allclose(u, expected_u, rtol=0, atol=1e-12)
    alpha = vadaboost_step(sums, 1, make_config(lam=lam)[0])
    assert alpha == pytest.approx(expected_alpha, abs=1e-6)
    assert alpha == pytest.approx(0.25 * np.log(u[:3].sum() / u[3]), rel=1e-12)


@pytest.mark.parametrize("lam", [0.0, 0.25, 0.5, 0.75, 1.0])
def test_vadaboost_spec_uniform_vector(lam):
    w = np.full(4, 0.25)
    correct = np.array([True, False, True, True])
    _, sums = _round_sums(w, correct, vadaboost_transform, lam)
    assert vadaboost_step(sums, 1, make_config(lam=lam)[0]) == pytest.approx(0.274653, abs=1e-6)


def test_adaboost_step_on_spec_vector():
    w = np.array([0.4, 0.3, 0.2, 0.1])
    correct = np.array([True, True, True, False])
    u, sums = _round_sums(w, correct, adaboost_transform, 0.0)
    np.testing.assert_array_equal(u, w)
    assert adaboost_step(sums, 1, make_config(n_classes=2)[0]) == pytest.approx(0.5 * np.log(9.0), rel=1e-12)


def test_vadaboost_lam0_normaliser_formula():
    """At lam = 0: Z^v = sum_i w_i exp(-alpha y_i h_i) = (eps(1-eps))^(1/4) (sqrt(eps) + sqrt(1-eps))."""
    rng = np.random.default_rng(7)
    for eps in np.linspace(0.005, 0.495, 50):
        n = int(rng.integers(2, 30))
        correct = np.ones(n, bool)
        correct[rng.choice(n, size=int(rng.integers(1, n)), replace=False)] = False
        w = rng.exponential(size=n)
        w[correct] *= (1 - eps) / w[correct].sum()
        w[~correct] *= eps / w[~correct].sum()
        _, sums = _round_sums(w, correct, vadaboost_transform, 0.0)
        alpha = vadaboost_step(sums, 1, make_config()[0])
        yh = np.where(correct, 1.0, -1.0)
        Z = np.sum(w * np.exp(-alpha * yh))
        formula = (eps * (1 - eps)) ** 0.25 * (np.sqrt(eps) + np.sqrt(1 - eps))
        assert Z == pytest.approx(formula, rel=1e-10)
        assert Z < 1.0


def test_vadaboost_bound_V_le_U():
    """Spec §2 (6) / Theorem 3 for the rule as implemented: 200 random trials.

    w comes from random margins (w = exp(-yF) / S1), so V(alpha) is also checked against the cost
    itself: C(F + alpha h) = S1**2 V(alpha). u comes from vadaboost_transform.
    """
    rng = np.random.default_rng(12345)
    n_lam1 = 0
    for trial in range(200):
        n = int(rng.integers(2, 60))
        lam = 1.0 if trial % 5 == 0 else (0.0 if trial % 7 == 0 else float(rng.uniform()))
        n_lam1 += lam == 1.0
        m = rng.normal(0.0, rng.uniform(0.1, 3.0), n)  # margins y_i F(x_i)
        S1 = np.exp(-m).sum()
        w = np.exp(-m) / S1
        correct = rng.random(n) < rng.uniform(0.05, 0.95)
        if correct.all() or not correct.any():
            correct[0] = not correct[0]
        u, sums = _round_sums(w, correct, vadaboost_transform, lam)
        # u = lam n w^2 + (1 - lam) w, independently
        np.testing.assert_allclose(u, lam * n * w ** 2 + (1 - lam) * w, rtol=1e-14, atol=0)
        WI, WJ = w[correct].sum(), w[~correct].sum()
        QI, QJ = (w[correct] ** 2).sum(), (w[~correct] ** 2).sum()
        UI, UJ = sums["ui"], sums["uj"]
        yh = np.where(correct, 1.0, -1.0)

        def V(a, WI=WI, WJ=WJ, QI=QI, QJ=QJ, lam=lam, n=n):
            first = (WI * np.exp(-a) + WJ * np.exp(a)) ** 2
            return first + lam * (n * (QI * np.exp(-2 * a) + QJ * np.exp(2 * a)) - first)

        def U(a, UI=UI, UJ=UJ):
            return UI * np.exp(-2 * a) + UJ * np.exp(2 * a)

        alphas = np.concatenate([rng.uniform(-3, 3, 8), rng.normal(0, 0.1, 4)])
        for a in alphas:
            v, uu = V(a), U(a)
            cost_after = vada_cost(m + a * yh, np.ones(n), lam)  # l_i = exp(-(m_i + a y_i h_i))
            assert cost_after == pytest.approx(S1 ** 2 * v, rel=1e-10)
            assert v <= uu * (1 + 1e-12), f"trial {trial}: V({a}) = {v} > U = {uu}, lam={lam}"
            if lam == 1.0:
                assert v == pytest.approx(uu, rel=1e-10)
        assert V(0.0) == pytest.approx(U(0.0), rel=1e-12)

        # the implemented step minimises U, and the cost strictly decreases when U_I > U_J
        alpha = vadaboost_step(sums, 1, make_config(lam=lam)[0])
        assert alpha == pytest.approx(0.25 * np.log(UI / UJ), rel=1e-12, abs=1e-15)
        for d in (1e-3, -1e-3):
            assert U(alpha) <= U(alpha + d)
        if UI > UJ * (1 + 1e-9):
            assert V(alpha) < V(0.0)
        if lam == 1.0:
            # the lam = 1 step is a stationary point of C along h: dV/da = 2n(-Q_I e^-2a + Q_J e^2a) = 0
            dV = 2 * n * (-QI * np.exp(-2 * alpha) + QJ * np.exp(2 * alpha))
            assert abs(dV) <= 1e-10 * 2 * n * (QI + QJ) * np.exp(2 * abs(alpha))
    assert n_lam1 >= 20


# ----------------------------------------------------------------------------- edge cases of the step
def _separable(n, seed, flip):
    rng = np.random.default_rng(seed)
    y = np.repeat(["a", "b"], n // 2)
    rng.shuffle(y)
    X = rng.normal(size=(n, 4))
    pos = (y == "b") != flip
    # few distinct values (exact bins) with a gap between the classes: one stump separates them
    X[:, 2] = np.where(pos, rng.integers(2, 40, n), rng.integers(-40, 1, n)) / 8.0
    return X, y


@pytest.mark.parametrize("flip", [False, True])
@pytest.mark.parametrize("make", [
    lambda: AdaBoostClassifier(n_estimators=20),
    lambda: AdaBoostClassifier(n_estimators=20, criterion="gini"),
    lambda: VadaBoostClassifier(n_estimators=20, lam=0.0),
    lambda: VadaBoostClassifier(n_estimators=20, lam=0.5),
    lambda: VadaBoostClassifier(n_estimators=20, lam=1.0),
])
def test_perfect_stump_kept_once_with_finite_alpha(make, flip):
    X, y = _separable(300, 3, flip)
    model = make().fit(X, y)
    r = model.rounds_
    assert len(r) == 1
    assert r["feature"][0] == 2
    assert r["error"][0] == 0.0 and r["learner_error"][0] == 0.0
    assert np.isfinite(r["alpha"][0]) and r["alpha"][0] > 0
    for name in FLOAT_FIELDS:
        assert np.isfinite(r[name]).all(), name
    ys = signed_labels(y, model.classes_)
    F = model.decision_function(X)
    np.testing.assert_allclose(F, staged_margins(X, r)[-1], rtol=1e-12)
    lam = getattr(model, "lam", None)
    recomputed = np.exp(-ys * F).sum() if lam is None else vada_cost(F, ys, lam)
    assert np.isfinite(r["cost"][0]) and 0 < r["cost"][0] < model.initial_cost_
    assert r["cost"][0] == pytest.approx(recomputed, rel=1e-9)
    np.testing.assert_array_equal(model.predict(X), y)
    Xt, yt = _separable(200, 4, flip)
    np.testing.assert_array_equal(model.predict(Xt), yt)
    proba = model.predict_proba(Xt)
    assert np.isfinite(proba).all()


@pytest.mark.parametrize("make", [
    lambda: AdaBoostClassifier(n_estimators=10),
    lambda: AdaBoostClassifier(n_estimators=10, criterion="gini"),
    lambda: VadaBoostClassifier(n_estimators=10, lam=0.5),
    lambda: VadaBoostClassifier(n_estimators=10, lam=1.0),
])
@pytest.mark.parametrize("kind", ["constant", "xor"])
def test_no_stump_beats_chance_gives_empty_ensemble(make, kind):
    if kind == "constant":  # y independent of a constant X, balanced
        X = np.full((100, 3), 7.0)
        y = np.tile([0, 1], 50)
    else:  # every stump has weighted error exactly 1/2
        X = np.tile([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]], (25, 1))
        y = np.tile([0, 1, 1, 0], 25)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        model = make().fit(X, y)
    assert len(model.rounds_) == 0
    assert model.n_estimators_ == 0
    assert np.isfinite(model.initial_cost_)
    F = model.decision_function(X)
    np.testing.assert_array_equal(F, 0.0)
    np.testing.assert_array_equal(model.predict(X), model.classes_[0])
    proba = model.predict_proba(X)
    assert not np.isnan(proba).any()
    np.testing.assert_allclose(proba, 0.5)


def test_round_with_error_exactly_half_is_not_kept():
    """Spec §1 (5): alpha <= 0, i.e. eps >= 1/2, breaks before adding h.

    One binary feature; left side 3 neg / 1 pos, right side 1 neg / 3 pos. Round 1 takes the
    split (eps = 1/4); afterwards every stump (and both constants) has weighted error exactly 1/2,
    so the exact step of any round-2 candidate is 0 and boosting must stop with one round.
    """
    X = np.r_[np.zeros(4), np.ones(4)][:, None]
    y = np.array([0, 0, 0, 1, 0, 1, 1, 1])
    model = AdaBoostClassifier(n_estimators=10).fit(X, y)
    r = model.rounds_
    assert r["error"][0] == pytest.approx(0.25)
    assert np.all(r["error"] < 0.5), f"kept rounds with error >= 1/2: {r}"
    assert len(r) == 1, f"expected 1 kept round, got {len(r)}: {r}"


# ----------------------------------------------------------------------------- determinism
@pytest.mark.parametrize("make", [
    lambda **kw: AdaBoostClassifier(n_estimators=40, **kw),
    lambda **kw: AdaBoostClassifier(n_estimators=40, criterion="gini", **kw),
    lambda **kw: VadaBoostClassifier(n_estimators=40, lam=0.5, **kw),
])
def test_n_jobs_bit_identical(make):
    X, y = make_twonorm(20_000, 20, random_state=1)
    X[::97, 3] = np.nan  # a feature with missing values
    m1 = make(n_jobs=1, random_state=0).fit(X, y)
    m2 = make(n_jobs=2, random_state=0).fit(X, y)
    assert len(m1.rounds_) == 40
    assert m1.rounds_.tobytes() == m2.rounds_.tobytes()
    assert m1.initial_cost_ == m2.initial_cost_
    d1 = m1.decision_function(X)
    d2 = m2.decision_function(X)
    assert d1.tobytes() == d2.tobytes()
    m1.set_params(n_jobs=2)
    assert m1.decision_function(X).tobytes() == d1.tobytes()
