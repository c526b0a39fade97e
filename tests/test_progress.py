"""verbose progress lines (header, a line every few rounds with the training error of the margins, the
last line saying why the fit ended) and fit callbacks (called between chunks; True ends the fit)."""
import re

import numpy as np
import pytest

from fastboost import AdaBoostClassifier, QuadBoostClassifier, VadaBoostClassifier
from fastboost._driver import report_every
from fastboost.datasets import make_twonorm

LINE = re.compile(r"^\[(\w+)\] round +(\d+)/(\d+) +train error ([0-9.]+)(?: +validation error ([0-9.]+))? +cost ")


@pytest.fixture(scope="module")
def data():
    X, y = make_twonorm(1500, random_state=3)
    w = np.random.default_rng(0).uniform(0.2, 2.0, X.shape[0])
    return X, y, w


def _lines(text):
    return [m.groups() for m in map(LINE.match, text.splitlines()) if m]


@pytest.mark.parametrize("n_rounds", [1, 7, 20, 21, 99, 1000, 123456])
def test_report_interval_gives_at_most_20_lines(n_rounds):
    every = report_every(n_rounds)
    assert n_rounds / every <= 20
    assert every == 1 or n_rounds / every > 20 / 2.5  # the next smaller nice step would exceed 20 lines
    assert int(str(every)[0]) in (1, 2, 5) and set(str(every)[1:]) <= {"0"}


@pytest.mark.parametrize("make, target", [
    (lambda: AdaBoostClassifier(60, verbose=1), "binary"),
    (lambda: VadaBoostClassifier(45, lam=0.3, verbose=1), "binary"),
    (lambda: AdaBoostClassifier(30, max_depth=2, verbose=1), "three"),
    (lambda: QuadBoostClassifier(40, penalty="l2", lam=0.1, reweight_at_end=False, verbose=1), "binary"),
])
def test_lines_report_the_training_error_of_the_model_so_far(data, capsys, make, target):
    X, y, w = data
    if target == "three":
        y = np.digitize(X[:, 0] + X[:, 1], [-0.7, 0.7])
    est = make().fit(X, y, sample_weight=w)
    out = capsys.readouterr().out
    lines = _lines(out)
    T = est.n_estimators
    assert out.splitlines()[0].startswith(f"[{type(est).__name__}] up to {T} rounds on {X.shape[0]} rows")
    assert 1 <= len(lines) <= 21 and int(lines[-1][1]) == est.n_estimators_
    staged = list(est.staged_predict(X))
    for name, done, total, train_error, _ in lines:
        assert name == type(est).__name__ and int(total) == T
        expected = np.average(staged[int(done) - 1] != y, weights=w)
        assert float(train_error) == pytest.approx(expected, abs=6e-5), done  # printed with 4 decimals
    assert out.splitlines()[-1].startswith(f"[{type(est).__name__}] ran all {T} rounds in ")


def test_quadboost_reweighting_restarts_the_training_margins(data, capsys):
    X, y, _ = data
    est = QuadBoostClassifier(40, penalty="l1", lam=1e-3, reweight_every=10, reweight_at_end=False,
                              verbose=1).fit(X, y)
    lines = _lines(capsys.readouterr().out)
    final = np.mean(est.predict(X) != y)  # the last pass moved earlier voters' weights too
    assert int(lines[-1][1]) == est.n_estimators_
    assert float(lines[-1][3]) == pytest.approx(final, abs=6e-5)


def test_early_stop_line_names_the_kept_round(data, capsys):
    X, y, _ = data
    est = VadaBoostClassifier(2000, validation_fraction=0.3, n_iter_no_change=15, random_state=0, verbose=1).fit(X, y)
    out = capsys.readouterr().out.splitlines()
    assert est.stopped_early_
    last = out[-1]
    assert f"early stop at round {len(est.validation_errors_)}" in last
    assert f"kept round {est.n_estimators_} " in last
    best = float(re.search(r"validation error ([0-9.]+)\)", last).group(1))
    assert best == pytest.approx(est.validation_errors_.min(), abs=6e-5)
    assert all(v is not None for *_, v in _lines("\n".join(out)))  # every line has the validation error


def test_rule_stop_line(capsys):
    X = np.arange(40, dtype=float)[:, None]
    y = X[:, 0] > 19.5  # one stump separates the classes: AdaBoost keeps it and stops
    est = AdaBoostClassifier(50, verbose=1).fit(X, y)
    assert est.stopped_by_rule_
    assert "stopped by the algorithm's rule at round 1" in capsys.readouterr().out.splitlines()[-1]


def test_silent_without_verbose_and_the_same_model_with_it(data, capsys):
    X, y, w = data
    quiet = AdaBoostClassifier(150, max_depth=2).fit(X, y, sample_weight=w)
    assert capsys.readouterr().out == ""
    loud = AdaBoostClassifier(150, max_depth=2, verbose=1).fit(X, y, sample_weight=w)
    assert capsys.readouterr().out
    assert quiet.rounds_.tobytes() == loud.rounds_.tobytes()
    assert quiet.nodes_.tobytes() == loud.nodes_.tobytes()


# ----------------------------------------------------------------------------- callbacks
def test_callback_stops_the_fit_keeping_the_rounds_done(data, capsys):
    X, y, w = data
    calls = []

    def stop_after_30(done, rounds):
        calls.append((done, rounds))
        return done >= 30

    est = VadaBoostClassifier(10_000, lam=0.5, verbose=1).fit(X, y, sample_weight=w, callbacks=[stop_after_30])
    done = calls[-1][0]
    assert done >= 30 and all(d < 30 for d, _ in calls[:-1])
    assert [d for d, _ in calls] == sorted({d for d, _ in calls})
    assert est.stopped_by_callback_ and not est.stopped_by_rule_ and est.n_estimators_ == done
    full = VadaBoostClassifier(done, lam=0.5).fit(X, y, sample_weight=w)
    assert est.rounds_.tobytes() == full.rounds_.tobytes()
    for d, rounds in calls:  # each call saw the records of the rounds done, as copies
        assert rounds.shape == (d,) and rounds.tobytes() == full.rounds_[:d].tobytes()
    assert f"stopped by a callback at round {done} in " in capsys.readouterr().out.splitlines()[-1]


def test_true_after_the_last_round_is_not_a_stop(data, capsys):
    """A callback is called after the last round too; True there cuts nothing short, so the fit ran all
    its rounds (not stopped_by_callback_) and says so."""
    X, y, _ = data
    calls = []
    est = AdaBoostClassifier(20, verbose=1).fit(X, y, callbacks=[lambda done, rounds: calls.append(done) or done == 20])
    assert calls[-1] == 20 and est.n_estimators_ == 20 and not est.stopped_by_callback_
    assert "stopped by a callback" not in capsys.readouterr().out


def test_every_callback_is_called_and_any_true_stops(data):
    X, y, _ = data
    seen = {"a": 0, "b": 0}

    def a(done, rounds):
        seen["a"] += 1
        return False

    def b(done, rounds):
        seen["b"] += 1
        return True

    est = AdaBoostClassifier(500).fit(X, y, callbacks=[a, b])
    assert seen == {"a": 1, "b": 1} and est.stopped_by_callback_


def test_callbacks_see_the_last_rounds_however_the_fit_ends(data):
    """Early stopping and the stop rule end a fit too: every callback sees its last rounds (it was never called
    when the fit ended within its first chunk, and missed the rounds after the last chunk's end)."""
    X, y, _ = data
    calls = []
    est = AdaBoostClassifier(500, n_iter_no_change=2, random_state=0).fit(
        X, y, callbacks=[lambda done, rounds: calls.append((done, rounds.shape[0]))])
    assert est.stopped_early_ and calls[-1] == (est.validation_errors_.shape[0],) * 2
    calls.clear()
    est = QuadBoostClassifier(500, penalty="l1", lam=0.2).fit(
        X, y, callbacks=[lambda done, rounds: calls.append((done, rounds.shape[0]))])
    assert est.stopped_by_rule_ and calls[-1] == (est.n_estimators_,) * 2


def test_warm_start_continues_after_a_callback_stop(data):
    X, y, _ = data
    # stop at the first call, wherever it falls: the chunks' sizes follow the machine's load and speed
    est = AdaBoostClassifier(200, warm_start=True).fit(X, y, callbacks=[lambda done, rounds: True])
    assert est.stopped_by_callback_ and 0 < est.n_estimators_ < 200
    est.fit(X, y)
    assert est.n_estimators_ == 200 and not est.stopped_by_callback_
    assert est.rounds_.tobytes() == AdaBoostClassifier(200).fit(X, y).rounds_.tobytes()


def test_one_vs_rest_calls_the_callbacks_for_each_class(data):
    X, _, _ = data
    y = np.digitize(X[:, 0], [-0.5, 0.5])
    counts = []
    VadaBoostClassifier(20).fit(X, y, callbacks=[lambda done, rounds: counts.append(done) and False])
    assert counts.count(20) == 3


@pytest.mark.parametrize("bad", [lambda d, r: False, [1], "print", {"a": print}])
def test_callbacks_must_be_a_list_of_functions(data, bad):
    X, y, _ = data
    est = AdaBoostClassifier(5)
    with pytest.raises(TypeError, match="callbacks must be a list of functions"):
        est.fit(X, y, callbacks=bad)
    assert not hasattr(est, "rounds_")
