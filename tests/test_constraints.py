"""monotone_constraints: the decision function follows each constraint for every algorithm, learner and leaf kind;
the compiled constrained split search against its slow NumPy reference; a binding constraint changes the model;
AdaBoost's capped steps back against a NumPy model of them; bad input."""
import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fastboost import (
    AdaBoostClassifier,
    EBBoostClassifier,
    LazyBoostClassifier,
    LPBoostClassifier,
    QuadBoostClassifier,
    RLPBoostClassifier,
    RQPBoostClassifier,
    SABoostClassifier,
    VadaBoostClassifier,
)
from fastboost._kernels.split import best_split_per_feature_q
from fastboost._types import CRITERION_ERROR, CRITERION_GINI

try:  # tests/ as a package or as a plain directory on sys.path
    from . import naive
    from .test_trees import kernel_tree, random_problem
except ImportError:
    import naive
    from test_trees import kernel_tree, random_problem


# ----------------------------------------------------------------------------- the property
def _thresholds(model, f):
    """Every threshold the model (or its one-vs-rest models) compares feature f with."""
    models = getattr(model, "estimators_", [model])
    out = []
    for m in models:
        r = m.rounds_
        out.append(r["threshold"][(r["feature"] == f) & np.isfinite(r["threshold"])])
        if m.nodes_ is not None:
            nodes = m.nodes_.ravel()
            out.append(nodes["threshold"][(nodes["feature"] == f) & (nodes["left"] >= 0)])
    return np.concatenate(out) if out else np.zeros(0)


def _scores(model, X):
    """What the constraint is about: the margin (binary), each one-vs-rest margin, or SAMME's cumulative class
    scores (the sum over the classes from k on, for each k)."""
    s = model.decision_function(X)
    if s.ndim == 1:
        return s[:, None]
    if hasattr(model, "estimators_"):
        return s
    return np.cumsum(s[:, ::-1], axis=1)[:, ::-1][:, 1:]


def assert_monotone(model, X, direction, rng, n_rows=6, samme_tol=1e-12):
    """Sweep each constrained feature over a grid (the data's values, the model's thresholds and their
    neighbours, +-inf, NaN) with the other features held at drawn rows; the scores never move against the
    constraint between consecutive non-missing values."""
    rows = X[rng.choice(X.shape[0], size=min(n_rows, X.shape[0]), replace=False)]
    for f in np.flatnonzero(direction):
        t = _thresholds(model, f)
        values = np.concatenate([X[:, f], t, np.nextafter(t, -np.inf), np.nextafter(t, np.inf), [-np.inf, np.inf]])
        grid = np.unique(values[~np.isnan(values)])
        Xs = np.repeat(rows, grid.shape[0] + 1, axis=0)
        Xs[:, f] = np.tile(np.append(grid, np.nan), rows.shape[0])
        s = _scores(model, Xs).reshape(rows.shape[0], grid.shape[0] + 1, -1)
        assert np.all(np.isfinite(s)), "a missing value must still get a score"
        steps = np.diff(s[:, :-1], axis=1) * direction[f]
        tol = samme_tol * max(1.0, np.abs(s).max()) if s.shape[2] > 1 and not hasattr(model, "estimators_") else 0.0
        bad = steps < -tol
        assert not bad.any(), (f"feature {f} (constraint {direction[f]}): the score moves against it by "
                               f"{steps.min()!r} at {grid[np.argwhere(bad)[0][1]]!r}")


def _data(seed, n, d, n_classes, nan_frac):
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(n, d)), 1)  # ties
    X[rng.random((n, d)) < nan_frac] = np.nan
    z = np.nan_to_num(X, nan=0.0)
    signal = z[:, 0] - z[:, 1 % d] + np.sin(3 * z[:, -1]) + rng.normal(scale=0.7, size=n)
    y = np.digitize(signal, np.quantile(signal, np.linspace(0, 1, n_classes + 1)[1:-1]))
    return X, y


#: (estimator, extra parameters, whether it takes trees, the classes it runs with)
CASES = [
    (AdaBoostClassifier, {}, True),
    (AdaBoostClassifier, {"leaf": "real"}, True),
    (VadaBoostClassifier, {}, True),
    (VadaBoostClassifier, {"leaf": "real"}, True),
    (EBBoostClassifier, {}, False),
    (LazyBoostClassifier, {}, False),
    (AdaBoostClassifier, {"monotone_steps": "capped", "multiclass": "ovr"}, False),
    (SABoostClassifier, {}, True),
    (QuadBoostClassifier, {"reweight_every": 3, "learning_rate": 1.0}, True),
    (QuadBoostClassifier, {"penalty": "l1", "lam": 0.01}, True),
    (LPBoostClassifier, {"nu": 0.3}, True),
    (RLPBoostClassifier, {"nu": 0.3}, True),
    (RQPBoostClassifier, {"C": 1.0}, True),
]


def _drawn_model_follows(case, seed, depth, d, constraints, three_classes, nan, n=40, rounds=6):
    cls, extra, trees = CASES[case]
    n_classes = 3 if three_classes and cls is not EBBoostClassifier else 2
    X, y = _data(seed, n, d, n_classes, nan)
    direction = np.array(constraints[:d], np.int8)
    if not direction.any():
        direction[0] = 1
    params = dict(extra)
    if trees:
        params["max_depth"] = depth
    model = cls(rounds, monotone_constraints=direction.tolist(), **params).fit(X, y)
    if not hasattr(model, "estimators_"):
        assert np.all(model.rounds_["alpha"] >= 0.0)
    assert_monotone(model, X, direction, np.random.default_rng(seed))


_DRAWS = dict(case=st.sampled_from(range(len(CASES))), seed=st.integers(0, 2 ** 16), d=st.integers(2, 3),
              constraints=st.lists(st.sampled_from([-1, 0, 1]), min_size=3, max_size=3),
              three_classes=st.booleans(), nan=st.sampled_from([0.0, 0.15]))


@pytest.mark.filterwarnings("ignore::UserWarning")  # (empty ensembles, LP values <= 0 on such small data)
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(depth=st.integers(1, 4), **_DRAWS)
def test_decision_function_follows_the_constraints(case, seed, depth, d, constraints, three_classes, nan):
    _drawn_model_follows(case, seed, depth, d, constraints, three_classes, nan)


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::UserWarning")
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(depth=st.integers(1, 8), **_DRAWS)
def test_decision_function_follows_the_constraints_deep(case, seed, depth, d, constraints, three_classes, nan):
    """As the quick test, with trees up to depth 8, more rows and rounds."""
    _drawn_model_follows(case, seed, depth, d, constraints, three_classes, nan, n=300, rounds=25)


def test_samme_class_order():
    """SAMME (K classes, discrete trees): along a constrained feature the trees' classes only move up (+1) in the
    order of classes_, so the top class's score never falls and the bottom class's never rises."""
    X, y = _data(3, 90, 3, 4, 0.1)
    for direction in ([1, 0, 0], [0, -1, 1]):
        model = AdaBoostClassifier(12, max_depth=3, monotone_constraints=direction).fit(X, y)
        assert model.nodes_ is not None and model.decision_function(X).shape[1] == 4
        assert_monotone(model, X, np.array(direction), np.random.default_rng(0))
        s = model.decision_function(np.column_stack([np.linspace(-3, 3, 50), np.zeros(50), np.zeros(50)]))
        if direction[0] == 1:
            assert np.all(np.diff(s[:, -1]) >= -1e-12) and np.all(np.diff(s[:, 0]) <= 1e-12)


# ----------------------------------------------------------------------------- a binding constraint
def _violates(model, X, f, sign):
    grid = np.linspace(np.nanmin(X[:, f]), np.nanmax(X[:, f]), 200)
    Xs = np.repeat(X[:10], grid.shape[0], axis=0)
    Xs[:, f] = np.tile(grid, 10)
    s = model.decision_function(Xs).reshape(10, -1)
    return bool((np.diff(s, axis=1) * sign < 0).any())


@pytest.mark.parametrize("cls, params", [(AdaBoostClassifier, {}), (AdaBoostClassifier, {"max_depth": 3}),
                                         (AdaBoostClassifier, {"max_depth": 2, "leaf": "real"}),
                                         (QuadBoostClassifier, {"max_depth": 2})])
def test_a_binding_constraint_changes_the_model(cls, params):
    """y is 1 in a middle band of feature 0: the unconstrained fit rises and falls along it; with +1 it never
    falls, so the models differ."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-2, 2, size=(80, 2))
    y = ((np.abs(X[:, 0]) < 0.8) ^ (rng.random(80) < 0.1)).astype(int)
    free = cls(10, **params).fit(X, y)
    tied = cls(10, monotone_constraints=[1, 0], **params).fit(X, y)
    assert _violates(free, X, 0, 1)
    assert not _violates(tied, X, 0, 1)
    assert not np.array_equal(free.decision_function(X), tied.decision_function(X))


def test_unconstrained_entries_change_nothing():
    """All-zero constraints (or an empty dict) fit the model of no constraints, bit for bit."""
    X, y = _data(1, 60, 3, 2, 0.1)
    ref = AdaBoostClassifier(8, max_depth=2).fit(X, y)
    for mc in ([0, 0, 0], {}):
        m = AdaBoostClassifier(8, max_depth=2, monotone_constraints=mc).fit(X, y)
        np.testing.assert_array_equal(m.decision_function(X), ref.decision_function(X))


def test_warm_start_continues_the_constrained_fit():
    X, y = _data(4, 60, 3, 2, 0.1)
    whole = AdaBoostClassifier(8, max_depth=2, monotone_constraints=[1, 0, -1]).fit(X, y)
    part = AdaBoostClassifier(4, max_depth=2, monotone_constraints=[1, 0, -1], warm_start=True).fit(X, y)
    part.set_params(n_estimators=8).fit(X, y)
    np.testing.assert_array_equal(part.decision_function(X), whole.decision_function(X))
    assert whole.n_estimators_ == 8


@pytest.mark.filterwarnings("ignore:X does not have valid feature names")
def test_dict_by_feature_name_and_one_vs_rest():
    X, y = _data(2, 60, 3, 3, 0.0)
    df = pd.DataFrame(X, columns=["income", "debt", "age"])
    by_name = LazyBoostClassifier(8, monotone_constraints={"income": 1, "debt": -1}).fit(df, y)
    by_list = LazyBoostClassifier(8, monotone_constraints=[1, -1, 0]).fit(X, y)
    np.testing.assert_array_equal(by_name.decision_function(df), by_list.decision_function(X))
    assert_monotone(by_list, X, np.array([1, -1, 0]), np.random.default_rng(0))


# ----------------------------------------------------------------------------- compiled against the reference
@pytest.mark.parametrize("criterion", [CRITERION_ERROR, CRITERION_GINI])
@pytest.mark.parametrize("seed", range(3))
def test_constrained_stump_search_matches_naive(criterion, seed):
    """Per feature, the best stump among those whose outputs follow its constraint: random dyadic histograms
    (exact sums, real ties), empty bins and missing weight."""
    rng = np.random.default_rng(seed)
    d, nvb, mc = 9, 6, 6
    hist = rng.integers(0, 5, size=(d, mc + 1, 2)) / 8.0
    hist[rng.random((d, mc + 1)) < 0.2] = 0.0
    hist[:3, mc] = 0.0
    n_value_bins = np.full(d, nvb, np.int64)
    direction = np.array([1, -1, 0, 1, -1, 0, 1, -1, 1], np.int8)
    value, bin_, ml = np.empty(d), np.empty(d, np.int64), np.empty(d, np.int64)
    best_split_per_feature_q(hist, hist, n_value_bins, None, mc, criterion, 0.0, value, bin_, ml, direction,
                             np.arange(d))
    for f in range(d):
        v, k, m = naive.best_split_feature_naive(hist[f], nvb, mc, criterion, int(direction[f]))
        assert (bin_[f], ml[f]) == (k, m), f"feature {f}"
        assert value[f] == v


@pytest.mark.parametrize("n_classes, criterion, depth", [(2, CRITERION_ERROR, 2), (2, CRITERION_GINI, 4),
                                                         (3, CRITERION_GINI, 3)])
@pytest.mark.parametrize("seed", range(2))
def test_constrained_tree_matches_naive(n_classes, criterion, depth, seed):
    """Discrete trees with constraints against naive.grow_tree_naive's (rows, not histograms): the same splits,
    and every leaf the heaviest class of its interval."""
    codes, y, u, nvb, mc, thr = random_problem(400, 5, n_classes, 9, seed)
    direction = np.array([0, 1, 0, -1, 1], np.int8)
    n_nodes, tree, leaf_of_row, _ = kernel_tree(codes, y, u, nvb, mc, thr, n_classes, criterion, depth,
                                                monotone=direction)
    ref = naive.grow_tree_naive(codes, y, u, nvb, mc, n_classes, criterion, depth, monotone=direction)
    assert n_nodes == len(ref)
    assert any(node.get("feature", -1) in (1, 3, 4) for node in ref)  # (a constrained feature is split)
    for j, node in enumerate(ref):
        assert (tree[j]["feature"], tree[j]["left"], tree[j]["right"]) == (node["feature"], node["left"],
                                                                          node["right"]), f"node {j}"
        if node["left"] >= 0:
            assert (tree[j]["bin"], tree[j]["missing_left"]) == (node["bin"], node["missing_left"]), j
        else:
            assert tree[j]["class_"] == node["class_"], f"leaf {j}"


# ----------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("value, error, match", [
    ([1, 0], ValueError, "has 2 entries, but X has 3 features"),
    ([1, 2, 0], ValueError, "feature 1 has 2"),
    ([1, 0.5, 0], ValueError, "feature 1 has 0.5"),
    ([True, 0, 0], ValueError, "feature 0 has True"),
    ({"nope": 1}, ValueError, "names features not in X"),
    ({"a": 3}, ValueError, "feature 'a' has 3"),
    ({1: 1}, TypeError, "the dict has the key 1"),
    ("1,0,0", TypeError, "monotone_constraints must be None"),
    (1, TypeError, "monotone_constraints must be None"),
])
def test_bad_constraints(value, error, match):
    X = pd.DataFrame(np.random.default_rng(0).normal(size=(30, 3)), columns=["a", "b", "c"])
    y = (X["a"] > 0).astype(int)
    with pytest.raises(error, match=match):
        AdaBoostClassifier(3, monotone_constraints=value).fit(X, y)


@pytest.mark.parametrize("constraints", [[1, 0, -1], {"a": 1, "c": -1}])
def test_model_file_keeps_the_constraints(tmp_path, constraints):
    from fastboost import load

    X = pd.DataFrame(np.random.default_rng(0).normal(size=(40, 3)), columns=["a", "b", "c"])
    y = (X["a"] - X["c"] > 0).astype(int)
    model = AdaBoostClassifier(5, max_depth=2, monotone_constraints=constraints).fit(X, y)
    model.save(tmp_path / "m.fbm")
    loaded = load(tmp_path / "m.fbm")
    assert loaded.monotone_constraints == constraints
    np.testing.assert_array_equal(loaded.decision_function(X), model.decision_function(X))


@pytest.mark.filterwarnings("ignore:X does not have valid feature names")
def test_command_line(tmp_path, capsys):
    from fastboost import load
    from fastboost.cli import main

    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.normal(size=(60, 3)), columns=["income", "age", "debt"])
    frame["label"] = (frame["income"] - frame["debt"] + rng.normal(size=60) > 0).astype(int)
    frame.to_csv(tmp_path / "train.csv", index=False)
    for text, want in (("1,0,-1", [1, 0, -1]), ("income:1,debt:-1", {"income": 1, "debt": -1})):
        out = tmp_path / "m.fbm"
        assert main(["train", str(tmp_path / "train.csv"), "--target", "label", "--max-depth", "2",
                     "--n-estimators", "5", "--monotone-constraints", text, "-o", str(out)]) == 0
        model = load(out)
        assert model.monotone_constraints == want
        assert_monotone(model, frame[["income", "age", "debt"]].to_numpy(), np.array([1, 0, -1]),
                        np.random.default_rng(0))
    assert main(["train", str(tmp_path / "train.csv"), "--target", "label", "--n-estimators", "5",
                 "--monotone-constraints", "1,0,-1", "--monotone-steps", "forward", "-o", str(out)]) == 0
    assert load(out).monotone_steps == "forward"
    with pytest.raises(SystemExit):
        main(["train", str(tmp_path / "train.csv"), "--target", "label", "--monotone-constraints", "up"])
    assert "--monotone-constraints" in capsys.readouterr().err


def test_dict_without_names_and_categorical_feature():
    X = np.random.default_rng(0).normal(size=(30, 2))
    y = (X[:, 0] > 0).astype(int)
    with pytest.raises(ValueError, match="X has no feature names"):
        AdaBoostClassifier(3, monotone_constraints={"a": 1}).fit(X, y)
    df = pd.DataFrame({"x": X[:, 0], "colour": pd.Categorical(np.where(X[:, 1] > 0, "red", "blue"))})
    with pytest.raises(ValueError, match="feature 1 \\('colour'\\) is categorical"):
        AdaBoostClassifier(3, monotone_constraints={"colour": -1}).fit(df, y)


# ----------------------------------------------------------------------------- capped steps back (AdaBoost stumps)
def _credit(seed, n):
    """A credit-style problem (income +1, debt ratio -1, age free) with random sample weights."""
    rng = np.random.default_rng(seed)
    income, debt, age = rng.lognormal(3.5, 0.5, n), rng.uniform(0, 1, n), rng.uniform(18, 80, n)
    logit = 0.06 * income - 3 * debt + 0.5 * np.sin(age / 5) - 1.5
    y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(int)
    return np.column_stack([income, debt, age]), y, rng.uniform(0.5, 1.5, n), np.array([1, -1, 0], np.int8)


def _backward(model, direction):
    """Which rounds are steps back: stumps of the polarity a constraint forbids."""
    r = model.rounds_
    return direction[r["feature"]] * (r["right"] - r["left"]) < 0


def _assert_capped_model(model, X, direction, rng):
    """Every step >= 0, every threshold's exact jump in the allowed direction >= 0, the scores monotone."""
    assert np.all(model.rounds_["alpha"] >= 0.0)
    assert min(naive.exact_jumps_naive(model.rounds_, direction).values(), default=0.0) >= 0.0
    assert_monotone(model, X, direction, rng)


@pytest.mark.parametrize("seed, learning_rate", [(1, 1.0), (2, 0.5)])
@pytest.mark.parametrize("mode", ["capped", "forward"])
def test_capped_steps_match_the_reference(seed, learning_rate, mode):
    """The library's stumps (feature, bin, polarity) and steps are those of the plain NumPy model of AdaBoost's
    stumps under the constraints (naive.monotone_stumps_naive), with and without steps back; with them, some
    rounds step back."""
    from fastboost._binning import BinMapper

    X, y, sw, direction = _credit(seed, 300)
    model = AdaBoostClassifier(60, learning_rate=learning_rate, monotone_constraints=direction.tolist(),
                               monotone_steps=mode).fit(X, y, sample_weight=sw)
    mapper = BinMapper(255).fit(X, sw / sw.sum())
    ref = naive.monotone_stumps_naive(mapper.transform(X), y, direction, 60, mapper.missing_code + 1, mode,
                                      learning_rate, sw)
    r = model.rounds_
    assert r.shape[0] == len(ref)
    np.testing.assert_array_equal(np.column_stack([r["feature"], r["bin"], r["left"], r["right"]]),
                                  np.array([s[:4] for s in ref]))
    np.testing.assert_allclose(r["alpha"], [s[4] for s in ref], rtol=1e-9)
    assert _backward(model, direction).any() == (mode == "capped" and learning_rate == 1.0)
    _assert_capped_model(model, X, direction, np.random.default_rng(seed))


def test_a_step_back_at_its_cap():
    """20 rows on which round 38's step back would be 0.058 but the stumps before put only 0.035 at its
    threshold: the step is that credit, the exact jump there is left at (about) 0, and it is never negative."""
    X = np.array([[0.2, 1.2], [-1.6, -0.6], [-0.8, 0.1], [0.2, -1.3], [0.3, 0.7], [1.8, -0.1], [1.1, -0.3],
                  [-1.3, 0.5], [-1.4, 0.6], [0.5, 1.0], [-0.9, 0.2], [-0.2, 1.0], [1.7, -0.2], [-1.5, -0.8],
                  [-0.1, -1.5], [2.2, 2.4], [-0.5, 0.9], [0.4, 1.2], [1.7, -0.1], [1.5, -1.0]])
    y = np.array([1, 1, 0, 0, 0, 1, 1, 0, 0, 1, 0, 0, 1, 0, 1, 1, 0, 1, 1, 1])
    direction = np.array([1, 1], np.int8)
    model = AdaBoostClassifier(40, monotone_constraints=[1, 1]).fit(X, y)  # ("auto": capped for stumps)
    r = model.rounds_
    uncapped = 0.5 * np.log((1.0 - r["error"]) / r["error"])
    at_cap = _backward(model, direction) & (r["alpha"] < uncapped - 1e-9)
    assert at_cap.any()
    t = int(np.flatnonzero(at_cap)[0])
    jump = naive.exact_jumps_naive(r[:t + 1], direction)[(int(r["feature"][t]), int(r["bin"][t]))]
    assert 0.0 <= jump < 1e-12
    _assert_capped_model(model, X, direction, np.random.default_rng(0))
    forward = AdaBoostClassifier(40, monotone_constraints=[1, 1], monotone_steps="forward").fit(X, y)
    assert not _backward(forward, direction).any()


@pytest.mark.filterwarnings("ignore::UserWarning")  # (empty ensembles on such small data)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2 ** 16), d=st.integers(2, 3), nan=st.sampled_from([0.0, 0.15]),
       constraints=st.lists(st.sampled_from([-1, 0, 1]), min_size=3, max_size=3),
       learning_rate=st.sampled_from([1.0, 0.5]), three_classes=st.booleans())
def test_capped_steps_follow_the_constraints(seed, d, nan, constraints, learning_rate, three_classes):
    """The property with steps back, on small data and many rounds (so that some rounds step back): binary
    stumps, and one model per class against the rest."""
    X, y = _data(seed, 40, d, 3 if three_classes else 2, nan)
    direction = np.array(constraints[:d], np.int8)
    if not direction.any():
        direction[0] = 1
    model = AdaBoostClassifier(40, learning_rate=learning_rate, monotone_constraints=direction.tolist(),
                               monotone_steps="capped", multiclass="ovr").fit(X, y)
    for m in getattr(model, "estimators_", [model]):
        assert min(naive.exact_jumps_naive(m.rounds_, direction).values(), default=0.0) >= 0.0
    assert_monotone(model, X, direction, np.random.default_rng(seed))


def test_capped_steps_warm_start_and_threads():
    """With steps back: 30 + 30 rounds of a warm start are the 60 rounds of one fit, and 1 or 2 threads fit the
    same model, bit for bit (the credit is the learner's scratch, kept from call to call)."""
    X, y, sw, direction = _credit(3, 300)
    params = dict(monotone_constraints=direction.tolist(), monotone_steps="capped")
    whole = AdaBoostClassifier(60, n_jobs=1, **params).fit(X, y, sample_weight=sw)
    assert _backward(whole, direction).any()
    part = AdaBoostClassifier(30, warm_start=True, n_jobs=1, **params).fit(X, y, sample_weight=sw)
    part.set_params(n_estimators=60).fit(X, y, sample_weight=sw)
    naive.assert_rounds_equal(part.rounds_, whole.rounds_, "warm start")
    two = AdaBoostClassifier(60, n_jobs=2, **params).fit(X, y, sample_weight=sw)
    naive.assert_rounds_equal(two.rounds_, whole.rounds_, "n_jobs=2")


def test_monotone_steps_options(tmp_path):
    """"capped" takes binary stumps only (a clear error otherwise, "auto" then takes forward steps); a model file
    written before the parameter loads with "forward", as its stumps were fitted."""
    import io
    import json
    import zipfile

    from fastboost import load

    X, y = _data(5, 60, 3, 3, 0.0)
    with pytest.raises(ValueError, match="monotone_steps='capped'\\) takes binary decision stumps"):
        AdaBoostClassifier(3, max_depth=2, monotone_constraints=[1, 0, 0], monotone_steps="capped").fit(X, y)
    with pytest.raises(ValueError, match="monotone_steps='capped'\\) takes binary decision stumps"):
        AdaBoostClassifier(3, monotone_constraints=[1, 0, 0], monotone_steps="capped").fit(X, y)  # (SAMME: trees)
    with pytest.raises(ValueError, match="monotone_steps must be one of"):
        AdaBoostClassifier(3, monotone_constraints=[1, 0, 0], monotone_steps="back").fit(X, y)
    AdaBoostClassifier(3, max_depth=2, monotone_steps="capped").fit(X, y)  # (no constraint: nothing to cap)
    X2, y2, _, direction = _credit(4, 200)
    model = AdaBoostClassifier(20, monotone_constraints=direction.tolist(), monotone_steps="forward").fit(X2, y2)
    model.save(tmp_path / "m.fbm")
    with zipfile.ZipFile(tmp_path / "m.fbm") as zf:
        members = {name: zf.read(name) for name in zf.namelist()}
    header = json.loads(members["header.json"])
    assert header["model"]["params"].pop("monotone_steps") == "forward"
    members["header.json"] = json.dumps(header).encode()
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    (tmp_path / "old.fbm").write_bytes(buf.getvalue())
    old = load(tmp_path / "old.fbm")
    assert old.monotone_steps == "forward"
    np.testing.assert_array_equal(old.decision_function(X2), model.decision_function(X2))


@pytest.mark.slow
@pytest.mark.parametrize("extra", [{"weight_trim_rate": 0.9}, {"subsample": 0.7, "random_state": 0},
                                   {"colsample_bytree": 0.7, "subsample": 0.8, "random_state": 1},
                                   {"bootstrap": True, "random_state": 2}])
def test_capped_steps_with_trimming_and_sampling(extra):
    """Steps back from the kept or drawn rows' histograms (missing values too): still monotone, every exact
    jump >= 0, and 1 or 2 threads fit the same model."""
    X, y, sw, direction = _credit(5, 600)
    X[::29, 1] = np.nan
    params = dict(monotone_constraints=direction.tolist(), monotone_steps="capped", **extra)
    model = AdaBoostClassifier(150, n_jobs=1, **params).fit(X, y, sample_weight=sw)
    assert _backward(model, direction).any()
    _assert_capped_model(model, X, direction, np.random.default_rng(0))
    two = AdaBoostClassifier(150, n_jobs=2, **params).fit(X, y, sample_weight=sw)
    naive.assert_rounds_equal(two.rounds_, model.rounds_, "n_jobs=2")
