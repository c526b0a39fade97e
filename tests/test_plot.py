"""fastboost.plot renders headless (Agg) and draws the model's own numbers."""
import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from sklearn.exceptions import NotFittedError  # noqa: E402

from fastboost import AdaBoostClassifier, VadaBoostClassifier  # noqa: E402
from fastboost.datasets import make_twonorm, make_waveform  # noqa: E402
from fastboost.plot import (  # noqa: E402
    normalized_margins,
    plot_cost,
    plot_importance,
    plot_margins,
    plot_validation,
)


@pytest.fixture(scope="module")
def twonorm():
    X, y = make_twonorm(400, random_state=0)
    return X[:300], y[:300], X[300:], y[300:]


def saved(ax, tmp_path):
    path = tmp_path / "plot.png"
    ax.figure.savefig(path)
    plt.close(ax.figure)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_cost_is_drawn_from_the_log_costs(twonorm, tmp_path):
    X, y, _, _ = twonorm
    m = VadaBoostClassifier(n_estimators=20).fit(X, y)
    ax = plot_cost(m)
    line = ax.get_lines()[0]
    assert np.array_equal(line.get_xdata(), np.arange(21))
    expected = np.r_[np.log(m.initial_cost_), m.rounds_["log_cost"]] / np.log(10)
    assert np.allclose(line.get_ydata(), expected)
    assert np.all(np.diff(line.get_ydata()) <= 1e-12)  # VadaBoost's cost never rises
    assert "cost" in ax.get_ylabel() and ax.get_xlabel() == "round"
    saved(ax, tmp_path)


def test_one_line_per_class_for_one_vs_rest(tmp_path):
    X, y = make_waveform(300, random_state=0)
    m = VadaBoostClassifier(n_estimators=10).fit(X, y)
    ax = plot_cost(m)
    assert len(ax.get_lines()) == 3
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [str(c) for c in m.classes_]
    saved(ax, tmp_path)


def test_margins_are_the_normalised_margins(twonorm, tmp_path):
    X, y, Xt, yt = twonorm
    m = AdaBoostClassifier(n_estimators=20).fit(X, y)
    # y F(x) / sum |alpha| computed from the rounds by hand
    F = np.zeros(X.shape[0])
    for r in m.rounds_:
        go_left = (X[:, r["feature"]] <= r["threshold"]) | (np.isnan(X[:, r["feature"]]) & (r["missing_left"] == 1))
        F += r["alpha"] * np.where(go_left, r["left"], r["right"])
    ref = np.where(y == m.classes_[1], 1, -1) * F / np.abs(m.rounds_["alpha"]).sum()
    assert np.allclose(normalized_margins(m, X, y), ref)
    ax = plot_margins(m, X, y, Xt, yt)
    train, test = ax.get_lines()[:2]
    assert np.allclose(train.get_xdata(), np.sort(ref))
    assert np.allclose(train.get_ydata(), np.arange(1, 301) / 300)
    assert test.get_xdata().shape == (100,)
    assert ax.get_xlim() == (-1.0, 1.0)
    saved(ax, tmp_path)


def test_samme_margins_are_vote_shares():
    X, y = make_waveform(300, random_state=1)
    m = AdaBoostClassifier(n_estimators=15, max_depth=2).fit(X, y)
    s = m.decision_function(X)
    share = (2 * s + 1) / 3  # symmetric scores (rows sum to 0) -> shares of the steps (rows sum to 1)
    assert np.allclose(share.sum(axis=1), 1.0)
    idx = np.searchsorted(m.classes_, y)
    other = share.copy()
    other[np.arange(len(y)), idx] = -np.inf
    ref = share[np.arange(len(y)), idx] - other.max(axis=1)
    assert np.allclose(normalized_margins(m, X, y), ref)
    assert np.all(np.abs(ref) <= 1 + 1e-12)


def test_validation_curve_marks_the_kept_round(twonorm, tmp_path):
    X, y, Xt, yt = twonorm
    m = AdaBoostClassifier(n_estimators=60, n_iter_no_change=5).fit(X, y, eval_set=(Xt, yt))
    ax = plot_validation(m, X, y)
    val, train, kept = ax.get_lines()
    assert np.allclose(val.get_ydata(), 100 * m.validation_errors_)
    assert np.allclose(train.get_ydata(), [100 * np.mean(p != y) for p in m.staged_predict(X)])
    assert list(kept.get_xdata()) == [m.n_estimators_, m.n_estimators_]
    saved(ax, tmp_path)


def test_importance_bars(tmp_path):
    pd = pytest.importorskip("pandas")
    X, y = make_twonorm(300, random_state=2)
    df = pd.DataFrame(X, columns=[f"col{j}" for j in range(X.shape[1])])
    m = AdaBoostClassifier(n_estimators=30).fit(df, y)
    ax = plot_importance(m, max_features=5)
    heights = [p.get_width() for p in ax.patches]
    order = np.argsort(-m.feature_importances_, kind="stable")[:5]
    assert np.allclose(heights, m.feature_importances_[order])
    ax.figure.canvas.draw()
    labels = {t.get_text() for t in ax.get_yticklabels()}
    assert labels == {f"col{j}" for j in order}
    saved(ax, tmp_path)


def test_errors(twonorm):
    X, y, _, _ = twonorm
    with pytest.raises(NotFittedError):
        plot_cost(AdaBoostClassifier())
    m = AdaBoostClassifier(n_estimators=5).fit(X, y)
    with pytest.raises(ValueError, match="without a validation set"):
        plot_validation(m)
    with pytest.raises(TypeError, match="matplotlib Axes"):
        plot_cost(m, ax="axes")
    with pytest.raises(ValueError, match="not among the model's classes_"):
        normalized_margins(m, X, np.full(X.shape[0], 7))
    with pytest.raises(ValueError, match="max_features"):
        plot_importance(m, max_features=0)
    plt.close("all")
