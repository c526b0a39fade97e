"""Weight trimming (``weight_trim_rate``): the learner reads the rows holding a share of the weight.

The row selection against a NumPy reference on drawn weights (ties, zeros, weights spanning hundreds
of powers of two), its independence of the thread count, and the fits: rate 1 reads every row of positive
weight (stumps: the very model of no trimming), every trimmed fit keeps the algorithm's monotone cost
and the same model for any thread count, ``rounds_["n_seen"]`` says how many rows each learner read.
"""
import math

import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastboost import AdaBoostClassifier, EBBoostClassifier, SABoostClassifier, VadaBoostClassifier
from fastboost._kernels.trim import select_rows
from fastboost.datasets import make_twonorm, make_waveform


def select_rows_reference(u, rate):
    """The kept rows by brute force, with the kernel's arithmetic (weights added per key in row order,
    the keys' sums in increasing order for the total, then from the top): the highest key cut whose
    rows hold at least rate of the total."""
    pos = np.flatnonzero(u > 0)
    exps = {}
    for i in pos:
        e = key(u[i])
        exps[e] = exps.get(e, 0.0) + u[i]
    total = 0.0
    for e in sorted(exps):
        total += exps[e]
    cum = 0.0
    cut = None
    for e in sorted(exps, reverse=True):
        cum += exps[e]
        cut = e
        if cum >= rate * total:
            break
    return np.array([i for i in pos if key(u[i]) >= cut], np.int64)


def key(x):
    """A positive float64's key: its biased binary exponent, then the first three bits of its mantissa
    bits (so x in [2**e (1 + k/8), 2**e (1 + (k+1)/8)) has key 8 (e + 1023) + k), by arithmetic."""
    m, ex = math.frexp(x)  # x = m 2**ex, m in [0.5, 1): 2m - 1 in [0, 1) is the mantissa's fraction
    if ex - 1 < -1022:  # subnormal: exponent field 0, the fraction's first bits x / 2**-1022
        return int(x / 2.0 ** -1022 * 8)
    e = ex - 1
    return 8 * (e + 1023) + int((2 * m - 1) * 8)


weights = st.lists(st.one_of(st.just(0.0), st.floats(1e-300, 1e3), st.sampled_from([0.25, 0.5, 1e-9])),
                   min_size=1, max_size=400).map(np.array)


@settings(max_examples=200, deadline=None)
@given(u=weights, rate=st.floats(0.01, 1.0))
def test_select_rows_matches_reference(u, rate):
    rows = np.full(u.shape[0], -1, np.int64)
    m = select_rows(u, rate, rows)
    ref = select_rows_reference(u, rate)
    kept = rows[:m]
    np.testing.assert_array_equal(kept, ref)  # the reference's cut, rows increasing
    if np.any(u > 0):
        assert math.fsum(u[kept]) >= rate * math.fsum(u[u > 0]) * (1 - 1e-12)
        dropped = np.setdiff1d(np.flatnonzero(u > 0), kept)
        if dropped.size and kept.size:
            # a cut at a step (1/8 of a power of two): every row left out weighs less than the lightest kept row's step
            assert key(u[dropped].max()) < key(u[kept].min())
            assert u[dropped].max() < u[kept].min()


def test_select_rows_is_the_same_for_any_thread_count():
    u = np.random.default_rng(0).exponential(size=300_000) ** 6  # many chunks, weights over many powers of two
    out = []
    for threads in (1, numba.config.NUMBA_NUM_THREADS):
        numba.set_num_threads(threads)
        rows = np.empty(u.shape[0], np.int64)
        m = select_rows(u, 0.9, rows)
        out.append(rows[:m].copy())
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    np.testing.assert_array_equal(out[0], out[1])
    assert 0 < out[0].shape[0] < u.shape[0]


@pytest.fixture(scope="module")
def twonorm():
    return make_twonorm(6000, 10, random_state=1)


STUMP_ESTIMATORS = [AdaBoostClassifier, VadaBoostClassifier, EBBoostClassifier, SABoostClassifier]


@pytest.mark.parametrize("Est", STUMP_ESTIMATORS, ids=lambda c: c.__name__)
def test_rate_one_reads_every_positive_row_and_gives_the_untrimmed_stumps(twonorm, Est):
    X, y = twonorm
    plain = Est(n_estimators=40).fit(X, y)
    full = Est(n_estimators=40, weight_trim_rate=1.0).fit(X, y)
    for name in plain.rounds_.dtype.names:
        np.testing.assert_array_equal(full.rounds_[name], plain.rounds_[name], err_msg=name)
    assert np.all(plain.rounds_["n_seen"] == X.shape[0])


def test_rate_one_trees_have_the_untrimmed_splits(twonorm):
    X, y = twonorm
    plain = AdaBoostClassifier(n_estimators=30, max_depth=3).fit(X, y)
    full = AdaBoostClassifier(n_estimators=30, max_depth=3, weight_trim_rate=1.0).fit(X, y)
    for name in ("feature", "bin", "left", "right", "class_"):
        np.testing.assert_array_equal(full.nodes_[name], plain.nodes_[name], err_msg=name)
    np.testing.assert_allclose(full.rounds_["alpha"], plain.rounds_["alpha"], rtol=1e-12)  # leaf sums by block


@pytest.mark.parametrize("kw", [{}, {"max_depth": 3}, {"max_depth": 2, "leaf": "real"},
                                {"max_depth": 2, "n_classes": 3}], ids=["stumps", "depth3", "real", "samme"])
def test_trimmed_fits_keep_the_monotone_cost_and_read_fewer_rows(kw):
    """Binary fits: the exponential loss falls every round as without trimming (the step and the update
    use every row); all fits read every row first (uniform weights) and far fewer later."""
    kw = dict(kw)
    if kw.pop("n_classes", 2) == 3:
        X, y = make_waveform(6000, random_state=2)
    else:
        X, y = make_twonorm(6000, 10, random_state=2)
    model = AdaBoostClassifier(n_estimators=80, weight_trim_rate=0.9, **kw).fit(X, y)
    cost = model.rounds_["cost"]
    if model.classes_.shape[0] == 2:  # the exponential loss still falls every round (SAMME's cost need not)
        assert np.all(np.diff(cost) <= 1e-12 * cost[:-1])
    seen = model.rounds_["n_seen"]
    assert seen[0] == X.shape[0] and seen[-1] < 0.8 * X.shape[0]  # uniform weights first, then concentrated
    assert model.score(X, y) > 0.8


@pytest.mark.parametrize("kw", [{}, {"max_depth": 3}], ids=["stumps", "depth3"])
def test_trimmed_fits_are_the_same_for_any_thread_count(twonorm, kw):
    X, y = twonorm
    one = AdaBoostClassifier(n_estimators=40, weight_trim_rate=0.95, n_jobs=1, **kw).fit(X, y)
    many = AdaBoostClassifier(n_estimators=40, weight_trim_rate=0.95, n_jobs=-1, **kw).fit(X, y)
    for name in one.rounds_.dtype.names:
        np.testing.assert_array_equal(one.rounds_[name], many.rounds_[name], err_msg=name)
    if kw:
        for name in one.nodes_.dtype.names:
            np.testing.assert_array_equal(one.nodes_[name], many.nodes_[name], err_msg=name)


@pytest.mark.parametrize("bad", [0.0, -0.5, 1.5, "0.9"])
def test_bad_rates_are_refused(twonorm, bad):
    X, y = twonorm
    with pytest.raises((ValueError, TypeError), match="weight_trim_rate"):
        AdaBoostClassifier(weight_trim_rate=bad).fit(X, y)


def test_a_rejected_trimmed_round_learns_from_every_row():
    """A hypothesis learnt from few rows can be no better than chance on all of them: the loop then
    learns the round again from every row (``n_seen`` = n) instead of stopping the fit."""
    X, y = make_twonorm(6000, 10, random_state=3)
    model = AdaBoostClassifier(n_estimators=150, weight_trim_rate=0.5).fit(X, y)
    seen = model.rounds_["n_seen"]
    assert model.n_estimators_ == 150 and not model.stopped_by_rule_
    assert np.any(seen[1:] == X.shape[0]) and np.any(seen[1:] < X.shape[0] // 2)
    error = model.rounds_["error"]
    assert np.all(error < 0.5)  # every kept round beats chance on every row


@pytest.mark.parametrize("seed, lam", [(9, 0.5), (0, 0.75)])
def test_a_trimmed_stump_that_repeats_the_last_round_is_learnt_from_every_row(seed, lam):
    """VadaBoost's step leaves the stump it took an edge over every row, small but not zero, and the
    kept rows need not show how small: trimmed rounds took the same stump again and again, each step
    about 5 times smaller (down to 1e-10: a third of the rounds spent on nothing). A trimmed stump
    that splits the rows as the last round's did is learnt again from every row. The data have no
    missing values, so the side missing values go to does not make another stump (seed 0 repeats its
    stump with the other side)."""
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(300, 5)), 1)
    y = np.where(X[:, 0] + 0.7 * X[:, 1] - 0.5 * X[:, 2] * X[:, 3] + 0.8 * rng.normal(size=300) > 0, 1, -1)
    r = VadaBoostClassifier(n_estimators=30, lam=lam, weight_trim_rate=0.3, n_jobs=1).fit(X, y).rounds_
    trimmed = r["n_seen"] < X.shape[0]
    assert trimmed.sum() >= 3
    same = np.ones(len(r) - 1, bool)
    for name in ("feature", "bin", "left", "right"):
        same &= r[name][1:] == r[name][:-1]
    assert not np.any(same & trimmed[1:]), np.flatnonzero(same & trimmed[1:]) + 1
    assert r["alpha"].min() > 1e-6, r["alpha"].min()


@pytest.mark.parametrize("Est", [AdaBoostClassifier, SABoostClassifier], ids=lambda c: c.__name__)
def test_carried_kept_rows_hold_the_share_and_are_chosen_again_in_time(twonorm, Est):
    """Stumps with carried histograms keep the last round's rows while they still hold the share, for at most
    ``HIST_REBUILD_EVERY`` rounds: round by round (warm starts of one more round each), every round's rows
    are the last round's if those hold at least the rate of this round's weights, the round is not a
    multiple of HIST_REBUILD_EVERY and the last round was not learnt again from every row, and otherwise
    the selection from this round's weights. The same model as one fit of all the rounds."""
    from fastboost._driver import HIST_REBUILD_EVERY

    X, y = twonorm
    n = X.shape[0]
    rate, n_rounds = 0.95, 70
    est = Est(n_estimators=1, weight_trim_rate=rate, warm_start=True).fit(X, y)
    prev = est._resume.rounds.ws.stump.kept[:est.rounds_["n_seen"][0]].copy()
    carried = 0
    for t in range(1, n_rounds):
        w = est._resume.rounds.ws.rows.w.copy()  # the weights round t learns from (u = w)
        est.set_params(n_estimators=t + 1).fit(X, y)
        ws = est._resume.rounds.ws
        m = ws.state[0]["n_kept"]
        if m == 0:  # round t's trimmed stump was rejected and learnt again from every row
            assert est.rounds_["n_seen"][t] == n
            prev = None
            continue
        assert m == est.rounds_["n_seen"][t]
        kept = ws.stump.kept[:m].copy()
        if prev is not None and t % HIST_REBUILD_EVERY != 0 and math.fsum(w[prev]) >= rate * (1 + 1e-12):
            np.testing.assert_array_equal(kept, prev)
            carried += 1
        else:
            fresh = np.empty(n, np.int64)
            np.testing.assert_array_equal(kept, fresh[:select_rows(w, rate, fresh)])
        assert math.fsum(w[kept]) >= rate * math.fsum(w) * (1 - 1e-9)
        prev = kept
    assert carried > n_rounds // 2  # the rows were carried in most rounds: the test checks that path
    whole = Est(n_estimators=n_rounds, weight_trim_rate=rate).fit(X, y)
    assert whole.rounds_.tobytes() == est.rounds_.tobytes()


@pytest.mark.parametrize("Est, rate", [(VadaBoostClassifier, 0.9), (EBBoostClassifier, 0.6)],
                         ids=["VadaBoost", "EBBoost"])
def test_learners_that_choose_every_round_read_every_row_while_most_rows_are_chosen(twonorm, Est, rate):
    """Without carried histograms the rows are chosen every round, but when more than GATHER_MAX_SHARE of the
    rows are chosen the learner reads every row, and the rows are chosen again only at the next multiple of
    RECHOOSE_EVERY rounds. Round by round (warm starts): each round reads either every row or exactly the
    selection from its learner weights, as that rule says, and the model equals one fit of all the rounds."""
    from fastboost._kernels.trim import GATHER_MAX_SHARE, RECHOOSE_EVERY

    X, y = twonorm
    n = X.shape[0]
    n_rounds = 60
    est = Est(n_estimators=1, weight_trim_rate=rate, warm_start=True).fit(X, y)
    assert est.rounds_["n_seen"][0] == n  # uniform weights: every row is chosen, so every row is read
    dense = True
    kinds = {"dense choice"}
    for t in range(1, n_rounds):
        est.set_params(n_estimators=t + 1).fit(X, y)
        ws = est._resume.rounds.ws
        seen = est.rounds_["n_seen"][t]
        if dense and t % RECHOOSE_EVERY != 0:
            assert seen == n, t
            kinds.add("between choices")
            continue
        fresh = np.empty(n, np.int64)
        m = select_rows(ws.rows.u, rate, fresh)  # ws.rows.u: round t's learner weights
        dense = m > GATHER_MAX_SHARE * n
        if dense:
            assert seen == n, t
            kinds.add("dense choice")
        else:
            assert seen == m, t
            np.testing.assert_array_equal(ws.stump.kept[:m], fresh[:m])
            kinds.add("trimmed")
    assert kinds == {"between choices", "dense choice", "trimmed"}, kinds  # every path ran
    whole = Est(n_estimators=n_rounds, weight_trim_rate=rate).fit(X, y)
    assert whole.rounds_.tobytes() == est.rounds_.tobytes()
