"""EBBoost, lazy stumps, SABoost and QuadBoost (see docs/algorithms.md), and validation early stopping.

As in test_algorithms.py, every reference is recomputed in NumPy from the raw
training data and the fitted ``rounds_`` (feature, threshold, sides, alpha):
margins, weights, residuals, objectives and brute-force searches over every stump.
"""
import numpy as np
import pytest
from test_algorithms import all_stumps, integer_data, signed_labels, staged_margins, stump_predict, vada_cost

from fastboost import (
    AdaBoostClassifier,
    EBBoostClassifier,
    LazyBoostClassifier,
    QuadBoostClassifier,
    SABoostClassifier,
    VadaBoostClassifier,
)
from fastboost._algorithms import RULES, ebboost_step
from fastboost._driver import make_config, make_sums
from fastboost._kernels.reweight import reweight
from fastboost.datasets import make_twonorm


# ----------------------------------------------------------------------------- EBBoost
def eb_parts(H, ys, w, lam):
    """(V*, alpha, A, B) of every stump in H for normalised w (q = n w**2, uniform p)."""
    n = ys.shape[0]
    correct = H == ys
    wi = (correct * w).sum(axis=1)
    wj = (~correct * w).sum(axis=1)
    qi = (correct * n * w * w).sum(axis=1)
    qj = (~correct * n * w * w).sum(axis=1)
    a = (1 - lam) * wi ** 2 + lam * qi
    b = (1 - lam) * wj ** 2 + lam * qj
    v = 2 * np.sqrt(a * b) + 2 * (1 - lam) * wi * wj
    return v, 0.25 * np.log(a / b), a, b


@pytest.mark.parametrize("lam", [0.0, 0.3, 1.0, 2.5])
@pytest.mark.parametrize("nan_frac", [0.0, 0.1])
def test_ebboost_exact_search_equals_brute_force(lam, nan_frac):
    X, y = integer_data(n=240, seed=3, nan_frac=nan_frac)
    model = EBBoostClassifier(n_estimators=15, lam=lam).fit(X, y)
    ys = signed_labels(y, model.classes_)
    H = all_stumps(X)
    n = X.shape[0]
    w = np.full(n, 1.0 / n)
    assert len(model.rounds_) == 15
    for t, rec in enumerate(model.rounds_):
        v_all, _, _, _ = eb_parts(H, ys, w, lam)
        h = stump_predict(X, rec)
        assert rec["left"] == -rec["right"], "EBBoost stumps have two opposite sides"
        v, alpha, a, b = (x[0] for x in eb_parts(h[None], ys, w, lam))
        assert v == pytest.approx(v_all.min(), rel=1e-9), f"round {t}: V* {v} > brute-force min {v_all.min()}"
        assert a >= b, f"round {t}: polarity must give alpha >= 0"
        assert rec["alpha"] == pytest.approx(alpha, rel=1e-9), f"round {t}: alpha"
        w = w * np.exp(-rec["alpha"] * ys * h)
        w /= w.sum()


def test_ebboost_lam0_is_adaboost():
    X, y = make_twonorm(2000, random_state=5)
    eb = EBBoostClassifier(n_estimators=60, lam=0.0).fit(X, y)
    ada = AdaBoostClassifier(n_estimators=60).fit(X, y)
    a, b = eb.rounds_, ada.rounds_
    assert len(a) == len(b) == 60
    assert np.all(b["left"] == -b["right"]), "the comparison needs AdaBoost stumps with two opposite sides"
    for name in ("feature", "bin", "left", "right"):
        np.testing.assert_array_equal(a[name], b[name], err_msg=name)
    np.testing.assert_allclose(a["alpha"], b["alpha"], rtol=1e-9)


@pytest.mark.parametrize("lam", [0.0, 0.5, 1.0, 2.5])
def test_ebboost_cost_non_increasing_and_recorded(lam):
    X, y = make_twonorm(1500, random_state=2)
    model = EBBoostClassifier(n_estimators=80, lam=lam).fit(X, y)
    ys = signed_labels(y, model.classes_)
    F = staged_margins(X, model.rounds_)
    C = vada_cost(F, ys, lam)
    assert model.initial_cost_ == pytest.approx(C[0], rel=1e-12)
    assert np.all(np.diff(C) <= 1e-12 * C[:-1]), "C_lam must not increase"
    np.testing.assert_allclose(model.rounds_["cost"], C[1:], rtol=1e-8)


@pytest.mark.parametrize("w, lam, expected", [
    ((0.4, 0.3, 0.2, 0.1), 0.0, 1.098612), ((0.4, 0.3, 0.2, 0.1), 0.5, 0.918441),
    ((0.4, 0.3, 0.2, 0.1), 1.0, 0.841824), ((0.25,) * 4, 0.0, 0.549306),
    ((0.25,) * 4, 0.5, 0.358771), ((0.25,) * 4, 1.0, 0.274653),
])
def test_ebboost_spec_test_vectors(w, lam, expected):
    w = np.array(w)
    n = w.shape[0]
    sums = make_sums(ui=w[:3].sum(), uj=w[3], qi=n * (w[:3] ** 2).sum(), qj=n * w[3] ** 2)
    assert ebboost_step(sums[0], 1, make_config(lam=lam)[0]) == pytest.approx(expected, abs=1e-6)


# ----------------------------------------------------------------------------- lazy stumps
def test_lazy_rank_one_is_adaboost():
    X, y = integer_data(n=300, seed=4, nan_frac=0.05)
    a = LazyBoostClassifier(n_estimators=25, feature_rank=1).fit(X, y).rounds_
    b = AdaBoostClassifier(n_estimators=25).fit(X, y).rounds_
    for name in a.dtype.names:
        np.testing.assert_array_equal(a[name], b[name], err_msg=name)


@pytest.mark.parametrize("kw", [{"max_depth": 2}, {"leaf": "real"}, {"max_depth": 2, "feature_rank": 2}])
def test_lazy_stumps_with_trees_are_refused_naming_feature_rank(kw):
    """Lazy stumps are binary stumps only: trees or real leaves with feature_rank "auto" (the default) or > 1 are
    refused naming the value given and the way out (the message said "feature_rank > 1" for the default); with
    feature_rank=1 the learner takes them."""
    X, y = integer_data(n=200, seed=3)
    rank = kw.get("feature_rank", "auto")
    with pytest.raises(ValueError, match=f"feature_rank={rank!r}.*feature_rank=1"):
        LazyBoostClassifier(n_estimators=5, **kw).fit(X, y)
    assert LazyBoostClassifier(n_estimators=5, **{**kw, "feature_rank": 1}).fit(X, y).n_estimators_ == 5


def per_feature_best_errors(X, ys, w):
    """Minimum weighted error of each feature's stumps, each side predicting its heavier class
    (as the learner: both sides may agree); inf if the feature cannot split the rows."""
    out = np.full(X.shape[1], np.inf)
    pos, neg = w * (ys > 0), w * (ys < 0)
    for f in range(X.shape[1]):
        lefts = all_stumps(X[:, [f]])[::2] < 0  # each split once: True = left side
        if len(lefts):
            err = (np.minimum(lefts @ pos, lefts @ neg) + np.minimum(~lefts @ pos, ~lefts @ neg))
            out[f] = err.min()
    return out


@pytest.mark.parametrize("k", [2, 3, 99])
def test_lazy_kth_feature_and_edge_never_above_best(k):
    X, y = integer_data(n=300, seed=6)
    X = X[:, :5]  # no duplicate column: feature ranks are well separated
    model = LazyBoostClassifier(n_estimators=20, feature_rank=k).fit(X, y)
    ys = signed_labels(y, model.classes_)
    n = X.shape[0]
    w = np.full(n, 1.0 / n)
    for t, rec in enumerate(model.rounds_):
        h = stump_predict(X, rec)
        err = w[h != ys].sum()
        best = per_feature_best_errors(X, ys, w)
        order = np.argsort(best, kind="stable")
        usable = order[np.isfinite(best[order])]
        want = usable[min(k, len(usable)) - 1]
        if np.sum(np.isclose(best, best[want], rtol=1e-9, atol=0)) == 1:
            assert rec["feature"] == want, f"round {t}: feature {rec['feature']}, rank-{k} is {want}"
            assert err == pytest.approx(best[want], rel=1e-9)
        assert 1 - 2 * err <= 1 - 2 * best.min() + 1e-12, f"round {t}: edge above the best stump's"
        alpha = 0.5 * np.log((1 - err) / err)
        assert rec["alpha"] == pytest.approx(alpha, rel=1e-9)
        w = w * np.exp(-alpha * ys * h)
        w /= w.sum()


# ----------------------------------------------------------------------------- SABoost
@pytest.mark.parametrize("schedule, gamma", [("inverse", 1.0), ("inverse", 0.5), ("power", 0.7),
                                             ("constant", 0.2), ("constant", 1.5)])
def test_saboost_schedule_weights_and_loss(schedule, gamma):
    X, y = make_twonorm(1500, random_state=8)
    T = 60
    model = SABoostClassifier(n_estimators=T, gamma=gamma, schedule=schedule).fit(X, y)
    r = model.rounds_
    assert len(r) == T
    t = np.arange(1, T + 1, dtype=np.float64)
    a = {"inverse": gamma / t, "power": t ** -gamma, "constant": np.full(T, gamma)}[schedule]
    np.testing.assert_allclose(r["alpha"], a, rtol=1e-15)
    ys = signed_labels(y, model.classes_)
    F = staged_margins(X, r)
    np.testing.assert_allclose(model.decision_function(X), F[-1], rtol=1e-12, atol=1e-12)
    loss = np.exp(-ys * F).sum(axis=1)
    np.testing.assert_allclose(r["cost"], loss[1:], rtol=1e-9)
    for s, rec in enumerate(r):
        w = np.exp(-ys * F[s])  # w_t proportional to exp(-y F_{t-1})
        w /= w.sum()
        h = stump_predict(X, rec)
        eps = w[h != ys].sum()
        assert rec["error"] == pytest.approx(eps, rel=1e-9)
        decreased = loss[s + 1] < loss[s]
        assert decreased == (a[s] < np.log((1 - eps) / eps)), f"round {s}"


# ----------------------------------------------------------------------------- QuadBoost
QUAD_VARIANTS = [dict(penalty=None), dict(penalty="l1", lam=0.02), dict(penalty="l2", lam=0.7),
                 dict(penalty="linf", alpha_max=0.03)]


def quad_alpha(g, penalty=None, lam=0.0, alpha_max=1.0):
    if penalty == "l1":
        return np.sign(g) * max(abs(g) - lam, 0.0)
    if penalty == "l2":
        return g / (1 + lam)
    if penalty == "linf":
        return float(np.clip(g, -alpha_max, alpha_max))
    return g


def quad_objective(F, ys, alphas, penalty=None, lam=0.0, alpha_max=1.0):
    risk = np.mean((ys - F) ** 2)
    if penalty == "l1":
        return risk + 2 * lam * np.abs(alphas).sum()
    if penalty == "l2":
        return risk + lam * (alphas ** 2).sum()
    return risk


def quad_decrease(g, alpha, penalty=None, lam=0.0, alpha_max=1.0):
    """QuadBoost's exact per-voter decrease (eta = 1; the table in docs/algorithms.md)."""
    if penalty == "l1":
        return (abs(g) - lam) ** 2
    if penalty == "l2":
        return g ** 2 / (1 + lam)
    if penalty == "linf":
        return 2 * alpha * g - alpha ** 2
    return g ** 2


@pytest.mark.parametrize("variant", QUAD_VARIANTS, ids=lambda v: str(v["penalty"]))
def test_quadboost_step_and_exact_decrease(variant):
    X, y = integer_data(n=300, seed=7, nan_frac=0.05)
    model = QuadBoostClassifier(n_estimators=40, reweight_at_end=False, **variant).fit(X, y)
    r = model.rounds_
    assert len(r) >= 5
    ys = signed_labels(y, model.classes_)
    H = all_stumps(X)
    F = np.zeros(len(ys))
    obj = quad_objective(F, ys, np.zeros(0), **variant)
    assert model.initial_cost_ == pytest.approx(obj, rel=1e-12)
    for t, rec in enumerate(r):
        res = ys - F
        h = stump_predict(X, rec)
        g = np.mean(h * res)
        assert g == pytest.approx(np.abs(H @ res / len(ys)).max(), rel=1e-9), f"round {t}: not the max |<h, r>|"
        alpha = quad_alpha(g, **variant)
        assert rec["alpha"] == pytest.approx(alpha, rel=1e-12, abs=1e-15), f"round {t}"
        F = F + rec["alpha"] * h
        new = quad_objective(F, ys, r["alpha"][: t + 1], **variant)
        assert obj - new == pytest.approx(quad_decrease(g, rec["alpha"], **variant), abs=1e-10), f"round {t}"
        assert rec["cost"] == pytest.approx(new, rel=1e-9, abs=1e-12)
        obj = new


def test_quadboost_l1_stops_exactly_when_no_voter_beats_lam():
    X, y = integer_data(n=300, seed=9)
    lam = 0.05
    model = QuadBoostClassifier(n_estimators=10_000, penalty="l1", lam=lam, reweight_at_end=False).fit(X, y)
    assert model.stopped_by_rule_ and model.n_estimators_ < 10_000
    ys = signed_labels(y, model.classes_)
    H = all_stumps(X)
    F = staged_margins(X, model.rounds_)
    for t in range(model.n_estimators_):
        assert np.abs(H @ (ys - F[t])).max() / len(ys) > lam, f"round {t} was taken with max |g| <= lam"
    assert np.abs(H @ (ys - F[-1])).max() / len(ys) <= lam + 1e-12  # rounding of sum_i |r_i| / n


@pytest.mark.parametrize("variant", QUAD_VARIANTS, ids=lambda v: str(v["penalty"]))
def test_quadboost_reweighting_never_increases_objective(variant):
    X, y = make_twonorm(800, random_state=11)
    model = QuadBoostClassifier(n_estimators=60, reweight_at_end=False, **variant).fit(X, y)
    ys = signed_labels(y, model.classes_)
    r = model.rounds_
    # replay the re-weighting kernel on the binned data and check the objective after each pass
    from fastboost._binning import BinMapper
    from fastboost._driver import make_model
    from fastboost._types import Model, TrainData
    mapper = BinMapper(model.max_bins)
    p = np.full(len(ys), 1.0 / len(ys))
    codes = mapper.fit_transform(X, p)
    voters = Model(r.copy(), make_model(0, 0).nodes)  # the fitted stumps; the kernel re-weights them in place
    data = TrainData(codes, (ys > 0).astype(np.uint16), p, mapper.n_value_bins_, mapper.thresholds_,
                     mapper.categorical_)
    config = model._config(RULES["quadboost"], mapper, 2, X.shape[1], len(ys))
    res = ys - staged_margins(X, r)[-1]
    obj = quad_objective(ys - res, ys, voters.rounds["alpha"], **variant)
    for _ in range(4):
        reweight(data, config[0], voters, len(r), res, RULES["quadboost"].step.address(), make_sums(), np.empty((1, 4)))
        F = staged_margins(X, voters.rounds)[-1]
        np.testing.assert_allclose(ys - F, res, atol=1e-12)
        new = quad_objective(F, ys, voters.rounds["alpha"], **variant)
        assert new <= obj + 1e-12
        obj = new
    fitted = QuadBoostClassifier(n_estimators=60, **variant).fit(X, y)  # with the final pass
    assert fitted.objective_ <= quad_objective(ys - (ys - staged_margins(X, r)[-1]), ys, r["alpha"], **variant)
    F = fitted.decision_function(X)
    assert fitted.objective_ == pytest.approx(quad_objective(F, ys, fitted.rounds_["alpha"], **variant), rel=1e-9)
    assert np.all(fitted.rounds_["alpha"] != 0)


def test_quadboost_periodic_reweighting_and_l1_sparsity():
    X, y = make_twonorm(1000, random_state=12)
    ys = signed_labels(y, np.array([-1, 1]))
    model = QuadBoostClassifier(n_estimators=300, penalty="l1", lam=0.01, reweight_every=20).fit(X, y)
    F = model.decision_function(X)
    assert model.objective_ == pytest.approx(quad_objective(F, ys, model.rounds_["alpha"], "l1", 0.01), rel=1e-9)
    plain = QuadBoostClassifier(n_estimators=300, penalty="l1", lam=0.01, reweight_at_end=False).fit(X, y)
    assert model.objective_ <= quad_objective(plain.decision_function(X), ys, plain.rounds_["alpha"], "l1", 0.01)
    assert np.all(model.rounds_["alpha"] != 0)
    proba = model.predict_proba(X)
    assert np.all((proba >= 0) & (proba <= 1)) and np.allclose(proba.sum(axis=1), 1)


# ----------------------------------------------------------------------------- early stopping
ALL = [AdaBoostClassifier, VadaBoostClassifier, EBBoostClassifier, LazyBoostClassifier, SABoostClassifier,
       lambda **kw: QuadBoostClassifier(penalty="l2", lam=0.1, reweight_at_end=False, **kw)]


@pytest.mark.parametrize("make", ALL, ids=["ada", "vada", "eb", "lazy", "sa", "quad"])
def test_early_stopping_keeps_best_round(make):
    X, y = make_twonorm(1200, random_state=13)
    Xv, yv = make_twonorm(600, random_state=14)
    Xv[:5, 3] = np.nan
    model = make(n_estimators=3000, n_iter_no_change=30).fit(X, y, eval_set=(Xv, yv))
    errs = model.validation_errors_
    best = model.n_estimators_
    assert model.stopped_early_ and len(errs) == best + 30
    assert best == np.argmin(errs) + 1, "n_estimators_ must be the first round with the lowest validation error"
    staged = np.array([np.mean(p != yv) for p in model.staged_predict(Xv)])
    np.testing.assert_allclose(staged, errs[:best], atol=1e-12)  # incremental margins equal re-predicting
    assert staged[-1] == staged.min()
    np.testing.assert_array_equal(model.rounds_["val_error"], errs[:best])


def test_validation_fraction_and_argument_errors():
    X, y = make_twonorm(1000, random_state=15)
    a = AdaBoostClassifier(500, validation_fraction=0.2, n_iter_no_change=20, random_state=0).fit(X, y)
    b = AdaBoostClassifier(500, validation_fraction=0.2, n_iter_no_change=20, random_state=0).fit(X, y)
    np.testing.assert_array_equal(a.rounds_["feature"], b.rounds_["feature"])
    assert a.n_estimators_ == np.argmin(a.validation_errors_) + 1
    # early stopping without a validation set holds out 0.1 of the rows, as validation_fraction=0.1 does
    c = AdaBoostClassifier(500, n_iter_no_change=5, random_state=0).fit(X, y)
    d = AdaBoostClassifier(500, n_iter_no_change=5, validation_fraction=0.1, random_state=0).fit(X, y)
    assert c.validation_errors_.shape[0] > c.n_estimators_ - 1 and c.stopped_early_
    assert c.rounds_.tobytes() == d.rounds_.tobytes()
    np.testing.assert_array_equal(c.validation_errors_, d.validation_errors_)
    assert AdaBoostClassifier(500, random_state=0).fit(X, y).n_estimators_ == 500  # no early stopping: no hold-out
    with pytest.raises(ValueError, match="either eval_set or validation_fraction"):
        AdaBoostClassifier(validation_fraction=0.2).fit(X, y, eval_set=(X, y))
    with pytest.raises(ValueError, match="features"):
        AdaBoostClassifier().fit(X, y, eval_set=(X[:, :3], y))
    with pytest.raises(ValueError, match="labels not in the training y"):
        AdaBoostClassifier().fit(X, y, eval_set=(X, y * 7))
    with pytest.raises(ValueError, match="validation_fraction"):
        AdaBoostClassifier(validation_fraction=1.0).fit(X, y)


@pytest.mark.parametrize("make, message", [
    (lambda: EBBoostClassifier(lam=-1), "lam"), (lambda: SABoostClassifier(gamma=0), "gamma"),
    (lambda: SABoostClassifier(schedule="log"), "schedule"), (lambda: QuadBoostClassifier(penalty="l3"), "penalty"),
    (lambda: QuadBoostClassifier(alpha_max=0), "alpha_max"), (lambda: QuadBoostClassifier(reweight_every=0),
                                                              "reweight_every"),
    (lambda: LazyBoostClassifier(feature_rank=0), "feature_rank"), (lambda: VadaBoostClassifier(lam=1.5), "lam"),
])
def test_bad_hyperparameters(make, message):
    X, y = make_twonorm(100, random_state=0)
    with pytest.raises(ValueError, match=message):
        make().fit(X, y)


@pytest.mark.parametrize("make", [lambda: EBBoostClassifier(40, lam=0.7),
                                  lambda: QuadBoostClassifier(40, penalty="l1", lam=0.001, reweight_every=7),
                                  lambda: SABoostClassifier(40), lambda: LazyBoostClassifier(40, feature_rank=3)])
def test_new_rules_bit_identical_across_thread_counts(make):
    import numba

    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("needs 2 threads")
    X, y = make_twonorm(40_000, random_state=16)  # > 2 blocks of rows
    a = make().set_params(n_jobs=1).fit(X, y).rounds_
    b = make().set_params(n_jobs=2).fit(X, y).rounds_
    for name in a.dtype.names:
        np.testing.assert_array_equal(a[name], b[name], err_msg=name)
