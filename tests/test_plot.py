"""fastboost.plot renders headless (Agg) and draws the model's own numbers, checked against NumPy."""
import copy
import importlib.util
import pathlib
import sys

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from sklearn.ensemble import AdaBoostClassifier as SklearnAdaBoost  # noqa: E402
from sklearn.exceptions import NotFittedError  # noqa: E402

from fastboost import AdaBoostClassifier, QuadBoostClassifier, VadaBoostClassifier  # noqa: E402
from fastboost.datasets import make_twonorm, make_waveform  # noqa: E402
from fastboost.plot import (  # noqa: E402
    cost_curve,
    margin_cdf,
    normalized_margins,
    plot_cost,
    plot_importance,
    plot_margins,
    plot_validation,
)

LN10 = np.log(10.0)
ROOT = pathlib.Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def twonorm():
    X, y = make_twonorm(400, random_state=0)
    return X[:300], y[:300], X[300:], y[300:]


@pytest.fixture(scope="module")
def waveform():
    X, y = make_waveform(400, random_state=1)
    return X[:300], y[:300], X[300:], y[300:]


@pytest.fixture(scope="module")
def ada(twonorm):
    X, y, _, _ = twonorm
    return AdaBoostClassifier(n_estimators=20).fit(X, y)


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def saved(ax, tmp_path):
    """Render the figure to a PNG file; the file must be a non-empty PNG."""
    path = tmp_path / "plot.png"
    ax.figure.savefig(path, dpi=50)
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 1000


# ----------------------------------------------------------------------------- independent evaluation
def stump_margin(rounds, X):
    """F(x) = sum_t alpha_t h_t(x) of decision stumps, from the records."""
    F = np.zeros(X.shape[0])
    for r in rounds:
        x = X[:, r["feature"]]
        go_left = (x <= r["threshold"]) | (np.isnan(x) & (r["missing_left"] == 1))
        F += r["alpha"] * np.where(go_left, r["left"], r["right"])
    return F


def tree_leaf(nodes, X):
    """Index of the leaf every row reaches in one tree (numerical splits)."""
    node = np.zeros(X.shape[0], dtype=np.int64)
    rows = np.arange(X.shape[0])
    for _ in range(nodes.shape[0]):
        internal = nodes["left"][node] >= 0
        x = X[rows, np.maximum(nodes["feature"][node], 0)]
        go_left = (x <= nodes["threshold"][node]) | (np.isnan(x) & (nodes["missing_left"][node] == 1))
        node = np.where(internal, np.where(go_left, nodes["left"][node], nodes["right"][node]), node)
    return node


def signed(model, y):
    return np.where(y == model.classes_[1], 1.0, -1.0)


def class_index(model, y):
    return np.searchsorted(model.classes_, y)


def other_max(a, idx):
    a = a.copy()
    a[np.arange(a.shape[0]), idx] = -np.inf
    return a.max(axis=1)


# ----------------------------------------------------------------------------- plot_cost
def test_cost_is_drawn_from_the_log_costs(twonorm, tmp_path):
    X, y, _, _ = twonorm
    m = VadaBoostClassifier(n_estimators=20, lam=0.5).fit(X, y)
    ax = plot_cost(m)
    (line,) = ax.get_lines()
    assert np.array_equal(line.get_xdata(), np.arange(21))
    expected = np.r_[np.log(m.initial_cost_), m.rounds_["log_cost"]] / LN10
    assert np.allclose(line.get_ydata(), expected)
    assert np.allclose(10.0 ** line.get_ydata()[1:], m.rounds_["cost"], rtol=1e-9)
    assert np.all(np.diff(line.get_ydata()) < 0)  # VadaBoost's cost falls every round
    assert ax.get_xlabel() == "round" and ax.get_ylabel() == "cost (log scale)"
    assert ax.yaxis.get_major_formatter()(3.0, 0) == "$10^{3}$"
    assert ax.get_title() == "VadaBoostClassifier: variance-penalised cost (lam=0.5)"
    assert ax.get_legend() is None
    saved(ax, tmp_path)


def test_cost_survives_underflow(ada, tmp_path):
    m = copy.deepcopy(ada)
    m.rounds_["log_cost"][-1] = -2000.0  # exp(-2000) underflows: rounds_["cost"] holds 0
    m.rounds_["cost"][-1] = np.exp(-2000.0)
    assert m.rounds_["cost"][-1] == 0.0
    ax = plot_cost(m, label="AdaBoost")
    y = ax.get_lines()[0].get_ydata()
    assert np.all(np.isfinite(y)) and y[-1] == pytest.approx(-2000.0 / LN10)
    assert ax.get_title() == "AdaBoostClassifier: exponential loss"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["AdaBoost"]
    saved(ax, tmp_path)
    assert ax.get_ylim()[0] <= -2000.0 / LN10


def test_cost_of_the_logistic_loss_is_named_so(twonorm):
    """rounds_["cost"] of loss="logistic" is the logistic loss (n log 2 before the first round): the title says so
    (it said exponential loss)."""
    X, y, _, _ = twonorm
    m = AdaBoostClassifier(5, leaf="real", max_depth=2, loss="logistic").fit(X, y)
    assert m.initial_cost_ == pytest.approx(X.shape[0] * np.log(2))
    assert plot_cost(m).get_title() == "AdaBoostClassifier: logistic loss"


def test_validation_curve_refuses_labels_the_model_does_not_know(twonorm, ada):
    """Labels of another type than classes_ ("1" for 1) are a ValueError, as plot_margins gives (every row was
    counted wrong: a curve at 100 %)."""
    X, y, _, _ = twonorm
    with pytest.raises(ValueError, match="not among the model's classes_"):
        plot_validation(ada, X, y.astype(str))


def test_cost_one_line_per_class_for_one_vs_rest(waveform, tmp_path):
    X, y, _, _ = waveform
    m = VadaBoostClassifier(n_estimators=10).fit(X, y)
    assert len(m.estimators_) == 3 and not hasattr(m, "rounds_")
    ax = plot_cost(m)
    lines = ax.get_lines()
    assert len(lines) == 3
    for line, est in zip(lines, m.estimators_):
        expected = np.r_[np.log(est.initial_cost_), est.rounds_["log_cost"]] / LN10
        assert np.allclose(line.get_ydata(), expected)
    legend = ax.get_legend()
    assert [t.get_text() for t in legend.get_texts()] == [str(c) for c in m.classes_]
    assert legend.get_title().get_text() == "class"
    saved(ax, tmp_path)


def test_cost_draws_on_the_given_axes(ada):
    fig, axes = plt.subplots(1, 2)
    assert plot_cost(ada, ax=axes[1], color="red") is axes[1]
    assert len(axes[0].get_lines()) == 0
    assert matplotlib.colors.same_color(axes[1].get_lines()[0].get_color(), "red")


# ----------------------------------------------------------------------------- margins
def test_binary_margins_are_y_F_over_sum_alpha(twonorm, ada, tmp_path):
    X, y, Xt, yt = twonorm
    total = np.abs(ada.rounds_["alpha"]).sum()
    ref = signed(ada, y) * stump_margin(ada.rounds_, X) / total
    ref_test = signed(ada, yt) * stump_margin(ada.rounds_, Xt) / total
    assert np.allclose(normalized_margins(ada, X, y), ref)
    ax = plot_margins(ada, X, y, Xt, yt)
    train, test = ax.get_lines()
    for line, r in [(train, ref), (test, ref_test)]:
        assert np.allclose(line.get_xdata(), np.r_[-1.0, np.sort(r), 1.0])
        n = r.shape[0]
        assert np.allclose(line.get_ydata(), np.r_[0.0, np.arange(1, n + 1) / n, 1.0])
        assert line.get_drawstyle() == "steps-post"
    # the CDF at 0 is the share of rows not predicted correctly (up to margins exactly 0)
    assert np.mean(ref <= 0) == pytest.approx(np.mean(ada.predict(X) != y))
    assert train.get_linestyle() == "-" and test.get_linestyle() == "--"
    assert train.get_color() == test.get_color()
    assert ax.get_xlim() == (-1.0, 1.0) and ax.get_ylim() == (0.0, 1.0)
    assert ax.get_xlabel() == "normalised margin" and ax.get_ylabel() == "cumulative fraction of rows"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["training", "test"]
    saved(ax, tmp_path)


def test_margins_labels_are_prefixed(twonorm, ada):
    X, y, _, _ = twonorm
    ax = plot_margins(ada, X, y, X, y, label="AdaBoost", linewidth=3, color="red")
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["AdaBoost, training", "AdaBoost, test"]
    for line in ax.get_lines():
        assert line.get_linewidth() == 3 and matplotlib.colors.same_color(line.get_color(), "red")


def test_samme_margins_are_vote_shares(waveform, tmp_path):
    X, y, Xt, yt = waveform
    m = AdaBoostClassifier(n_estimators=15, max_depth=2).fit(X, y)
    k = m.classes_.shape[0]
    votes = np.zeros((X.shape[0], k))
    for t in range(m.n_estimators_):
        named = m.nodes_["class_"][t][tree_leaf(m.nodes_[t], X)]
        votes[np.arange(X.shape[0]), named] += m.rounds_["alpha"][t]
    share = votes / m.rounds_["alpha"].sum()
    idx = class_index(m, y)
    ref = share[np.arange(X.shape[0]), idx] - other_max(share, idx)
    assert np.allclose(normalized_margins(m, X, y), ref)
    assert np.all(np.abs(ref) <= 1.0)
    assert np.array_equal(ref > 0, m.predict(X) == y)  # no ties on these data
    ax = plot_margins(m, X, y)
    assert np.allclose(ax.get_lines()[0].get_xdata()[1:-1], np.sort(ref))
    saved(ax, tmp_path)


def test_one_vs_rest_margins_are_the_closest_pair(waveform):
    X, y, _, _ = waveform
    m = VadaBoostClassifier(n_estimators=10).fit(X, y)
    F = np.column_stack([stump_margin(e.rounds_, X) for e in m.estimators_])
    A = np.array([np.abs(e.rounds_["alpha"]).sum() for e in m.estimators_])
    idx = class_index(m, y)
    rows = np.arange(X.shape[0])
    pair = (F[rows, idx][:, None] - F) / (A[idx][:, None] + A[None, :])
    pair[rows, idx] = np.inf
    ref = pair.min(axis=1)
    got = normalized_margins(m, X, y)
    assert np.allclose(got, ref)
    assert np.all(np.abs(got) <= 1.0)
    assert np.array_equal(got > 0, m.predict(X) == y)


def test_real_leaves_are_scaled_by_their_largest_leaf(twonorm):
    X, y, _, _ = twonorm
    m = AdaBoostClassifier(n_estimators=20, max_depth=2, leaf="real").fit(X, y)
    values = np.where(m.nodes_["left"] < 0, m.nodes_["value"], 0.0)
    F = np.zeros(X.shape[0])
    for t in range(m.n_estimators_):
        F += m.rounds_["alpha"][t] * values[t][tree_leaf(m.nodes_[t], X)]
    total = (np.abs(m.rounds_["alpha"]) * np.abs(values).max(axis=1)).sum()
    ref = signed(m, y) * F / total
    assert np.allclose(normalized_margins(m, X, y), ref)
    assert np.all(np.abs(ref) <= 1.0)


@pytest.mark.parametrize("multiclass", ["joint", "mh"])
def test_k_vector_leaf_margins_are_the_score_lead_over_the_largest_spread(waveform, multiclass):
    """SAMME.R and AdaBoost.MH: (F_y - max other F_c) / sum_t |alpha_t| max over leaves of the K values' spread,
    F summed from leaf_values_ by walking the trees; in [-1, 1] (the scores were taken as SAMME's before: 88 % of
    the rows outside [-1, 1], off the plot), positive exactly where the model predicts y."""
    X, y, _, _ = waveform
    m = AdaBoostClassifier(n_estimators=12, max_depth=2, leaf="real", multiclass=multiclass,
                           learning_rate=0.5).fit(X, y)
    leaves = m.nodes_["left"] < 0
    F = np.zeros((X.shape[0], m.classes_.shape[0]))
    for t in range(m.n_estimators_):
        F += m.rounds_["alpha"][t] * m.leaf_values_[t][tree_leaf(m.nodes_[t], X)]
    spread = np.array([np.ptp(m.leaf_values_[t][leaves[t]], axis=1).max() for t in range(m.n_estimators_)])
    idx = class_index(m, y)
    rows = np.arange(X.shape[0])
    other = F.copy()
    other[rows, idx] = -np.inf
    ref = (F[rows, idx] - other.max(axis=1)) / (np.abs(m.rounds_["alpha"]) @ spread)
    got = normalized_margins(m, X, y)
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-14)
    assert np.all(np.abs(got) <= 1.0) and (got > 0.05).any()
    assert np.array_equal(got > 0, m.predict(X) == y)


def test_quadboost_tree_margins_stay_in_range(twonorm):
    X, y, _, _ = twonorm
    m = QuadBoostClassifier(n_estimators=10, max_depth=3).fit(X, y)
    got = normalized_margins(m, X, y)
    assert np.all(np.abs(got) <= 1.0)
    assert np.array_equal(got > 0, m.predict(X) == y)


# ----------------------------------------------------------------------------- plot_validation
def test_validation_curve_marks_the_kept_round(twonorm, tmp_path):
    X, y, Xt, yt = twonorm
    m = AdaBoostClassifier(n_estimators=60, n_iter_no_change=5).fit(X, y, eval_set=(Xt, yt))
    assert m.stopped_early_ and m.validation_errors_.shape[0] == m.n_estimators_ + 5
    ax = plot_validation(m, X, y)
    val, train, kept = ax.get_lines()
    assert np.allclose(val.get_xdata(), np.arange(1, m.n_estimators_ + 6))
    assert np.allclose(val.get_ydata(), 100 * m.validation_errors_)
    # the kept rounds' validation errors, recomputed from the staged predictions on the validation set
    staged_val = [100 * np.mean(p != yt) for p in m.staged_predict(Xt)]
    assert np.allclose(val.get_ydata()[:m.n_estimators_], staged_val)
    ref_train = [100 * np.mean(np.where(stump_margin(m.rounds_[:t], X) > 0, m.classes_[1], m.classes_[0]) != y)
                 for t in range(1, m.n_estimators_ + 1)]
    assert np.allclose(train.get_xdata(), np.arange(1, m.n_estimators_ + 1))
    assert np.allclose(train.get_ydata(), ref_train)
    assert list(kept.get_xdata()) == [m.n_estimators_, m.n_estimators_]
    assert kept.get_label() == f"kept: {m.n_estimators_} of {m.n_estimators_ + 5} rounds"
    assert ax.get_xlabel() == "round" and ax.get_ylabel() == "error (%)"
    assert "stopped early" in ax.get_title()
    saved(ax, tmp_path)


def test_validation_fraction_without_X(twonorm):
    X, y, _, _ = twonorm
    m = VadaBoostClassifier(n_estimators=15, validation_fraction=0.25, random_state=0).fit(X, y)
    ax = plot_validation(m)
    val, kept = ax.get_lines()
    assert np.allclose(val.get_ydata(), 100 * m.validation_errors_)
    assert np.allclose(m.rounds_["val_error"], m.validation_errors_[:m.n_estimators_])
    assert kept.get_xdata()[0] == m.n_estimators_


def test_one_vs_rest_error_per_round(tmp_path):
    """A one-vs-rest model draws its error on X per round, every class's model after its first t rounds (iris:
    VadaBoost's setosa model stops after one perfect stump and keeps its vote)."""
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True)
    m = VadaBoostClassifier(n_estimators=12).fit(X, y)
    rounds = [e.n_estimators_ for e in m.estimators_]
    assert min(rounds) < max(rounds) == 12
    ax = plot_validation(m, X, y)
    train, kept = ax.get_lines()
    own = [list(e.staged_decision_function(X)) for e in m.estimators_]
    ref = [100 * np.mean(m.classes_[np.argmax(np.column_stack([s[min(t, len(s) - 1)] for s in own]), axis=1)] != y)
           for t in range(12)]
    assert np.allclose(train.get_xdata(), np.arange(1, 13)) and np.allclose(train.get_ydata(), ref)
    assert kept.get_label() == "kept: 12 of 12 rounds"
    saved(ax, tmp_path)


def test_training_error_alone(twonorm, ada):
    X, y, _, _ = twonorm
    ax = plot_validation(ada, X, y)
    train, kept = ax.get_lines()
    assert train.get_label() == "training" and train.get_ydata().shape == (ada.n_estimators_,)
    assert train.get_ydata()[-1] == pytest.approx(100 * np.mean(ada.predict(X) != y))


# ----------------------------------------------------------------------------- plot_importance
def test_importance_bars(tmp_path):
    pd = pytest.importorskip("pandas")
    X, y = make_twonorm(300, random_state=2)
    df = pd.DataFrame(X, columns=[f"col{j}" for j in range(X.shape[1])])
    m = AdaBoostClassifier(n_estimators=30).fit(df, y)
    ax = plot_importance(m, max_features=5)
    bars = sorted(ax.patches, key=lambda p: -p.get_y())  # top to bottom
    order = np.argsort(-m.feature_importances_, kind="stable")[:5]
    assert len(bars) == 5
    assert np.allclose([b.get_width() for b in bars], m.feature_importances_[order])
    assert np.all(np.diff([b.get_width() for b in bars]) <= 0)
    ticks = sorted(zip(ax.get_yticks(), [t.get_text() for t in ax.get_yticklabels()]), reverse=True)
    assert [name for _, name in ticks] == [f"col{j}" for j in order]
    assert ax.get_xlabel() == "importance"
    saved(ax, tmp_path)


def test_importance_names(ada):
    n = ada.n_features_in_
    ax = plot_importance(ada, max_features=n)
    assert len(ax.patches) == n
    assert sorted(t.get_text() for t in ax.get_yticklabels()) == sorted(f"x{j}" for j in range(n))
    names = [f"f{j}" for j in range(n)]
    ax = plot_importance(ada, feature_names=names, max_features=1)
    top = int(np.argmax(ada.feature_importances_))
    assert [t.get_text() for t in ax.get_yticklabels()] == [f"f{top}"]


# ----------------------------------------------------------------------------- errors
@pytest.mark.parametrize("plot", [plot_cost, plot_validation, plot_importance])
def test_unfitted_model(plot):
    with pytest.raises(NotFittedError):
        plot(AdaBoostClassifier())


def test_cost_curve_and_margin_cdf_refuse_what_they_cannot_draw(waveform, ada):
    """cost_curve of an unfitted model, of a one-vs-rest model (one curve per class: pass a class's model) and
    margin_cdf of NaN margins: clear errors; a class's model and finite margins work."""
    with pytest.raises(NotFittedError):
        cost_curve(AdaBoostClassifier())
    ovr = VadaBoostClassifier(n_estimators=3).fit(*waveform[:2])
    with pytest.raises(ValueError, match="binary model"):
        cost_curve(ovr)
    assert cost_curve(ovr.estimators_[0]).shape == (ovr.estimators_[0].n_estimators_ + 1,)
    with pytest.raises(ValueError, match="margins hold NaN"):
        margin_cdf([0.5, np.nan, -0.2])
    x, y = margin_cdf([0.5, -0.2])
    np.testing.assert_array_equal(x, [-1.0, -0.2, 0.5, 1.0])
    np.testing.assert_array_equal(y, [0.0, 0.5, 1.0, 1.0])


def test_unfitted_model_margins(twonorm):
    X, y, _, _ = twonorm
    with pytest.raises(NotFittedError):
        plot_margins(VadaBoostClassifier(), X, y)


def test_bad_input(twonorm, waveform, ada):
    X, y, Xt, _ = twonorm
    with pytest.raises(ValueError, match="without a validation set"):
        plot_validation(ada)
    with pytest.raises(ValueError, match="X and y together"):
        plot_validation(ada, X)
    with pytest.raises(ValueError, match="one-vs-rest"):
        plot_validation(VadaBoostClassifier(n_estimators=3).fit(*waveform[:2]))
    with pytest.raises(TypeError, match="matplotlib Axes"):
        plot_cost(ada, ax="axes")
    with pytest.raises(TypeError, match="matplotlib Axes"):
        plot_margins(ada, X, y, ax=plt.figure())
    with pytest.raises(TypeError, match="fastboost estimator"):
        plot_cost(SklearnAdaBoost(n_estimators=2).fit(X, y))
    with pytest.raises(ValueError, match="not among the model's classes_"):
        normalized_margins(ada, X, np.full(X.shape[0], 7))
    with pytest.raises(ValueError, match="one per row of X"):
        normalized_margins(ada, X, y[:10])
    with pytest.raises(ValueError, match="X_test and y_test together"):
        plot_margins(ada, X, y, Xt)
    with pytest.raises(ValueError, match="max_features must be >= 1"):
        plot_importance(ada, max_features=0)
    with pytest.raises(TypeError, match="max_features must be an int"):
        plot_importance(ada, max_features=2.5)
    with pytest.raises(ValueError, match="3 names for 20 features"):
        plot_importance(ada, feature_names=["a", "b", "c"])
    with pytest.raises(TypeError, match="feature_names"):
        plot_importance(ada, feature_names="abc")
    assert plt.get_fignums() == [1]  # only the plt.figure() above: no figure is left behind by an error


def test_without_matplotlib(ada, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib.axes", None)
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(ImportError, match=r'pip install "fastboost\[plot\]"'):
        plot_cost(ada)


# ----------------------------------------------------------------------------- the Plots page and scripts/plots.py
def test_docs_example(twonorm, ada, tmp_path, monkeypatch):
    """The Plots page's example writes both figures; the page shows the committed ones."""
    section = (ROOT / "docs" / "plots.md").read_text()
    code = section.split("```python\n")[1].split("```")[0]
    X, y, Xt, yt = twonorm
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "plots.md", "exec"), {"clf": ada, "X_train": X, "y_train": y, "X_test": Xt, "y_test": yt})
    for name in ("margins.png", "cost.png"):
        assert (tmp_path / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert f"(images/{name})" in section and (ROOT / "docs" / "images" / name).is_file()


def test_plots_script(tmp_path):
    spec = importlib.util.spec_from_file_location("plots_script", ROOT / "scripts" / "plots.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.main(["--out", str(tmp_path)]) == 0
    for name in ("margins.png", "cost.png"):
        data = (tmp_path / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and 5_000 < len(data) < 100_000


def test_the_plot_module_is_reached_from_the_package():
    """``fastboost.plot.plot_importance(...)`` after ``import fastboost`` alone, as the pages write it (it was an
    AttributeError in a new process): the submodule is imported on first use."""
    import subprocess

    code = ("import sys, fastboost; assert 'fastboost.plot' not in sys.modules; "
            "print(fastboost.plot.plot_importance.__module__, fastboost.datasets.__name__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["fastboost.plot", "fastboost.datasets"]
    import fastboost

    with pytest.raises(AttributeError, match="has no attribute 'plots'"):
        fastboost.plots  # noqa: B018
