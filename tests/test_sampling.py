"""Feature and row sampling (colsample_bytree, colsample_bynode, subsample, bootstrap) and interaction constraints.

The draws are re-derived here in plain Python integers from the formula of ``_kernels/sampling.py``
(splitmix64 of the seed, the stream, the round, the node and the index), and every recorded split is
checked against them: a stump's feature among the round's drawn features, a tree node's among the node's,
every root-to-leaf path inside one interaction group, ``n_seen`` the number of drawn rows, and round 0's
stump the one the drawn rows alone give. Small data and few rounds.
"""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fastboost import AdaBoostClassifier, EBBoostClassifier, LPBoostClassifier, QuadBoostClassifier, SABoostClassifier
from fastboost.estimators import sampling_seed

MASK = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15
TREE, NODE, ROWS, BOOT = 1, 2, 3, 4


def mix(z):
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def key(seed, stream, t, node):
    z = mix((seed + GOLDEN * (stream + 1)) & MASK)
    z = mix((z + GOLDEN * (t + 1)) & MASK)
    return mix((z + GOLDEN * (node + 1)) & MASK)


def unit(k, i):
    return (mix((k + GOLDEN * (i + 1)) & MASK) >> 11) * 2.0 ** -53


def draw(k, eligible, fraction):
    """The features drawn among the eligible ones (a set)."""
    eligible = sorted(eligible)
    if fraction >= 1.0 or not eligible:
        return set(eligible)
    n = max(1, min(len(eligible), int(fraction * len(eligible) + 0.5)))
    vals = np.array([unit(k, f) for f in eligible])
    order = np.argsort(vals, kind="stable")
    return {eligible[j] for j in order[:n]}


def round_features(seed, t, d, fraction, grouped=None):
    return draw(key(seed, TREE, t, 0), range(d) if grouped is None else grouped, fraction)


def data(n=120, d=8, seed=0, classes=2):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 6, size=(n, d)).astype(float)  # few values: ties, and bins one per value
    X[rng.random((n, d)) < 0.05] = np.nan
    score = X[:, 0] - X[:, 1] + 0.5 * np.nan_to_num(X[:, 2]) + rng.normal(0, 1.5, n)
    y = np.digitize(np.nan_to_num(score), np.quantile(np.nan_to_num(score), np.linspace(0, 1, classes + 1)[1:-1]))
    return X, y


def paths(nodes):
    """The features on every root-to-leaf path of a tree (NODE_DTYPE row)."""
    out = []

    def walk(node, used):
        nd = nodes[node]
        if nd["left"] < 0:
            out.append(used)
            return
        walk(nd["left"], used | {int(nd["feature"])})
        walk(nd["right"], used | {int(nd["feature"])})
    walk(0, frozenset())
    return out


def same_model(a, b):
    assert a.rounds_.tobytes() == b.rounds_.tobytes()
    assert (a.nodes_ is None and b.nodes_ is None) or a.nodes_.tobytes() == b.nodes_.tobytes()


def test_draw_formula_matches_the_kernel():
    """The compiled draws are the formula above (the re-derivations below rest on it)."""
    from fastboost._kernels.sampling import unit_draws

    out = np.empty(5)
    unit_draws(12345, ROWS, 7, 3, 5, out)
    k = key(12345, ROWS, 7, 3)
    np.testing.assert_array_equal(out, [unit(k, i) for i in range(5)])


def test_colsample_bytree_stumps_use_the_drawn_features():
    X, y = data(d=10)
    m = AdaBoostClassifier(12, colsample_bytree=0.3, random_state=3).fit(X, y)
    seed = sampling_seed(3)
    for t, r in enumerate(m.rounds_):
        drawn = round_features(seed, t, 10, 0.3)
        assert len(drawn) == 3
        assert int(r["feature"]) in drawn
    # and the drawn features do bind: the full fit's first stumps are not all among them
    full = AdaBoostClassifier(12, random_state=3).fit(X, y)
    assert any(int(r["feature"]) not in round_features(seed, t, 10, 0.3) for t, r in enumerate(full.rounds_))


def test_colsample_stump_is_the_best_of_its_features():
    """Round 0 (uniform weights) of a sampled stump fit is the stump of the full fit on the drawn columns."""
    X, y = data(d=10, seed=1)
    m = AdaBoostClassifier(1, colsample_bytree=0.4, random_state=5).fit(X, y)
    drawn = sorted(round_features(sampling_seed(5), 0, 10, 0.4))
    sub = AdaBoostClassifier(1).fit(X[:, drawn], y)
    assert drawn[int(sub.rounds_["feature"][0])] == int(m.rounds_["feature"][0])
    assert sub.rounds_["threshold"][0] == m.rounds_["threshold"][0]
    assert sub.rounds_["alpha"][0] == m.rounds_["alpha"][0]


@pytest.mark.parametrize("bytree, bynode", [(1.0, 0.5), (0.6, 0.5)])
def test_colsample_bynode_tree_nodes_use_their_drawn_features(bytree, bynode):
    X, y = data(d=8)
    m = AdaBoostClassifier(6, max_depth=3, colsample_bytree=bytree, colsample_bynode=bynode,
                           random_state=11).fit(X, y)
    seed = sampling_seed(11)
    for t in range(m.n_estimators_):
        tree_feats = round_features(seed, t, 8, bytree)
        for node, nd in enumerate(m.nodes_[t]):
            if nd["left"] >= 0:
                assert int(nd["feature"]) in draw(key(seed, NODE, t, node), tree_feats, bynode)


@pytest.mark.parametrize("depth, bytree, bynode", [(1, 0.2, 1.0), (1, 1.0, 0.2), (2, 0.2, 1.0), (2, 1.0, 0.2)])
def test_a_round_whose_drawn_features_are_rejected_is_learnt_from_every_feature(depth, bytree, bynode):
    """Seven constant columns of ten: a round that draws only those has no hypothesis better than chance, and
    the fit used to stop there (stopped_by_rule_, even an empty model). The round is learnt again from every
    feature, as a rejected round of drawn rows is from every row; the other rounds use their drawn features."""
    X, y = data(n=300, d=10, seed=2)
    X[:, 3:] = 1.0
    m = AdaBoostClassifier(40, max_depth=depth, colsample_bytree=bytree, colsample_bynode=bynode,
                           random_state=4).fit(X, y)
    assert m.n_estimators_ == 40 and not m.stopped_by_rule_
    seed = sampling_seed(4)
    retried = 0
    for t in range(40):
        drawn = draw(key(seed, NODE, t, 0), round_features(seed, t, 10, bytree), bynode)
        root = int(m.rounds_["feature"][t])
        if drawn & {0, 1, 2}:
            assert root in drawn
        else:
            retried += 1
            assert root in (0, 1, 2)
    assert retried >= 3


def test_bynode_on_stumps_draws_at_the_root():
    X, y = data(d=10)
    m = AdaBoostClassifier(8, colsample_bytree=0.8, colsample_bynode=0.5, random_state=2).fit(X, y)
    seed = sampling_seed(2)
    for t, r in enumerate(m.rounds_):
        node = draw(key(seed, NODE, t, 0), round_features(seed, t, 10, 0.8), 0.5)
        assert len(node) == 4 and int(r["feature"]) in node


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(st.integers(0, 7), min_size=1, max_size=4), min_size=1, max_size=3),
       st.integers(2, 4), st.sampled_from([1.0, 0.7]), st.integers(0, 3))
def test_interaction_constraints_every_path_in_one_group(groups, depth, bynode, seed):
    X, y = data(d=8, seed=seed)
    m = AdaBoostClassifier(4, max_depth=depth, interaction_constraints=groups, colsample_bynode=bynode,
                           random_state=seed).fit(X, y)
    sets = [set(g) for g in groups]
    for t in range(m.n_estimators_):
        for used in paths(m.nodes_[t]):
            assert any(used <= g for g in sets), (used, groups)


def test_interaction_constraints_bind_and_accept_names():
    pd = pytest.importorskip("pandas")
    X, y = data(d=6)
    free = AdaBoostClassifier(5, max_depth=3).fit(X, y)
    assert any(not (used <= {0, 3, 4} or used <= {1, 2, 5}) for t in range(5) for used in paths(free.nodes_[t]))
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(6)])
    named = AdaBoostClassifier(5, max_depth=3, interaction_constraints=[["x0", "x3", "x4"], ["x1", "x2", "x5"]])
    by_index = AdaBoostClassifier(5, max_depth=3, interaction_constraints=[[0, 3, 4], [1, 2, 5]])
    same_model(named.fit(df, y), by_index.fit(X, y))
    for t in range(by_index.n_estimators_):
        for used in paths(by_index.nodes_[t]):
            assert used <= {0, 3, 4} or used <= {1, 2, 5}


def test_features_in_no_group_are_never_used():
    X, y = data(d=6)
    for depth in (1, 3):
        m = AdaBoostClassifier(6, max_depth=depth, interaction_constraints=[[2, 3], [3, 4]]).fit(X, y)
        used = set(m.rounds_["feature"].tolist()) if depth == 1 else {
            int(nd["feature"]) for t in range(m.n_estimators_) for nd in m.nodes_[t] if nd["left"] >= 0}
        assert used <= {2, 3, 4}


def drawn_rows(seed, t, n, fraction):
    k = key(seed, ROWS, t, 0)
    return np.array([i for i in range(n) if unit(k, i) < fraction], dtype=np.int64)


@pytest.mark.parametrize("depth", [1, 2])
def test_subsample_rounds_read_the_drawn_rows(depth):
    X, y = data(n=150)
    m = AdaBoostClassifier(6, max_depth=depth, subsample=0.5, random_state=4).fit(X, y)
    seed = sampling_seed(4)
    for t, r in enumerate(m.rounds_):
        assert r["n_seen"] == drawn_rows(seed, t, 150, 0.5).shape[0]
    # round 0 (uniform weights): the learner of the drawn rows alone, its step over every row
    rows = drawn_rows(seed, 0, 150, 0.5)
    sw = np.zeros(150)
    sw[rows] = 1.0
    sub = AdaBoostClassifier(1, max_depth=depth).fit(X, y, sample_weight=sw)
    if depth == 1:
        assert sub.rounds_[["feature", "bin", "missing_left", "left", "right"]][0] == \
            m.rounds_[["feature", "bin", "missing_left", "left", "right"]][0]
    else:
        fields = ["feature", "bin", "missing_left", "left", "right"]
        np.testing.assert_array_equal(sub.nodes_[0][fields], m.nodes_[0][fields])  # (leaves' classes: every row's)


def test_bootstrap_round_zero_is_the_learner_of_the_counts():
    X, y = data(n=100)
    m = AdaBoostClassifier(5, bootstrap=True, random_state=7).fit(X, y)
    seed = sampling_seed(7)
    cum = np.cumsum(np.full(100, 1.0 / 100))
    k = key(seed, BOOT, 0, 0)
    pos = [min(int(np.searchsorted(cum, unit(k, j) * cum[-1], side="right")), 99) for j in range(100)]
    counts = np.bincount(pos, minlength=100).astype(float)
    assert m.rounds_["n_seen"][0] == np.count_nonzero(counts)
    sub = AdaBoostClassifier(1).fit(X, y, sample_weight=counts)
    fields = ["feature", "bin", "missing_left", "left", "right"]
    assert sub.rounds_[fields][0] == m.rounds_[fields][0]


@pytest.mark.parametrize("params", [
    dict(colsample_bytree=0.5, subsample=0.7),
    dict(max_depth=3, colsample_bytree=0.6, colsample_bynode=0.5, subsample=0.6, interaction_constraints=[[0, 1, 2],
                                                                                                          [2, 3, 4]]),
    dict(max_depth=2, bootstrap=True, colsample_bytree=0.5),
])
def test_thread_count_and_warm_start_bit_identical(params):
    X, y = data(n=160)
    one = AdaBoostClassifier(16, n_jobs=1, random_state=9, **params).fit(X, y)
    two = AdaBoostClassifier(16, n_jobs=2, random_state=9, **params).fit(X, y)
    same_model(one, two)
    warm = AdaBoostClassifier(8, warm_start=True, random_state=9, **params).fit(X, y)
    warm.set_params(n_estimators=16).fit(X, y)
    same_model(one, warm)


def test_defaults_draw_nothing():
    """The defaults fit exactly as without the options (and never consume random_state's generator)."""
    X, y = data()
    rs = np.random.RandomState(0)
    m = AdaBoostClassifier(5, random_state=rs).fit(X, y)
    assert rs.randint(2 ** 31 - 1) == np.random.RandomState(0).randint(2 ** 31 - 1)  # (120 rows: no binning draw)
    drawn = np.random.RandomState(0)
    AdaBoostClassifier(5, subsample=0.5, random_state=drawn).fit(X, y)
    assert drawn.randint(2 ** 31 - 1) != np.random.RandomState(0).randint(2 ** 31 - 1)
    same_model(m, AdaBoostClassifier(5, colsample_bytree=1.0, colsample_bynode=1.0, subsample=1.0).fit(X, y))


@pytest.mark.parametrize("est", [
    AdaBoostClassifier(5, max_depth=2, colsample_bytree=0.5, subsample=0.7, weight_trim_rate=0.9),
    AdaBoostClassifier(5, bootstrap=True, subsample=0.5, weight_trim_rate=0.95),
    # (exact mode and categorical features with row sampling compile learner variants of their own: slow)
    pytest.param(AdaBoostClassifier(5, max_bins=None, colsample_bytree=0.5, subsample=0.7), marks=pytest.mark.slow),
    AdaBoostClassifier(5, max_depth=2, colsample_bynode=0.5, interaction_constraints=[[0, 1], [1, 2, 3]]),
    SABoostClassifier(5, subsample=0.6, colsample_bytree=0.5),
    EBBoostClassifier(5, subsample=0.6, colsample_bytree=0.5),
    QuadBoostClassifier(5, max_depth=2, subsample=0.6, colsample_bytree=0.5),
    LPBoostClassifier(5, nu=0.5, subsample=0.7, colsample_bytree=0.5),
])
def test_option_combinations_give_valid_models(est):
    X, y = data(n=120)
    m = est.set_params(random_state=0).fit(X, y)
    assert m.n_estimators_ >= 1
    assert np.isfinite(m.decision_function(X)).all()
    assert (m.rounds_["n_seen"] <= 120).all()
    if est.subsample < 1.0:
        assert (m.rounds_["n_seen"] < 120).any()


def test_trimming_applies_first():
    """With trimming the drawn rows are a subset of those trimming keeps: never more than trimming alone."""
    X, y = data(n=150)
    trim = AdaBoostClassifier(8, weight_trim_rate=0.8, random_state=1).fit(X, y)
    both = AdaBoostClassifier(8, weight_trim_rate=0.8, subsample=0.5, random_state=1).fit(X, y)
    assert both.rounds_["n_seen"][0] < 150
    assert (both.rounds_["n_seen"][:1] <= trim.rounds_["n_seen"][:1]).all()


def test_multiclass_and_categorical():
    pd = pytest.importorskip("pandas")
    X, y = data(n=150, classes=3)
    samme = AdaBoostClassifier(5, max_depth=2, colsample_bytree=0.5, subsample=0.7, random_state=0).fit(X, y)
    assert samme.nodes_.shape[0] == samme.n_estimators_
    ovr = AdaBoostClassifier(4, leaf="real", max_depth=2, interaction_constraints=[["a", "b"], ["c", "d"]],
                             random_state=0)
    df = pd.DataFrame(X[:, :4], columns=list("abcd"))
    df["e"] = pd.Categorical(np.where(X[:, 4] > 2, "hi", "lo"))
    ovr.fit(df, y)
    for est in ovr.estimators_:
        for t in range(est.n_estimators_):
            for used in paths(est.nodes_[t]):
                assert used <= {0, 1} or used <= {2, 3}
    cat = AdaBoostClassifier(5, colsample_bytree=0.5, colsample_bynode=0.5, random_state=0).fit(df, y == 1)
    assert np.isfinite(cat.decision_function(df)).all()


@pytest.mark.slow
def test_categorical_features_with_row_sampling():
    pd = pytest.importorskip("pandas")
    X, y = data(n=150)
    df = pd.DataFrame(X[:, :4], columns=list("abcd"))
    df["e"] = pd.Categorical(np.where(X[:, 4] > 2, "hi", "lo"))
    for params in (dict(subsample=0.7), dict(bootstrap=True), dict(max_depth=2, subsample=0.6, colsample_bytree=0.5)):
        m = AdaBoostClassifier(5, random_state=0, **params).fit(df, y)
        assert np.isfinite(m.decision_function(df)).all() and (m.rounds_["n_seen"] < 150).all()


@pytest.mark.parametrize("params, message", [
    (dict(interaction_constraints=[[0, 9]]), "index 9"),
    (dict(interaction_constraints=[["age"]]), "no feature names"),
    (dict(interaction_constraints=[[]]), "empty group"),
    (dict(interaction_constraints=[]), "at least one group"),
    (dict(interaction_constraints=[[0.5]]), "feature indices"),
    (dict(interaction_constraints="01"), "list of feature groups"),
    (dict(colsample_bytree=0.0), "colsample_bytree"),
    (dict(colsample_bynode=1.5), "colsample_bynode"),
    (dict(subsample=-0.1), "subsample"),
    (dict(bootstrap="yes"), "bootstrap"),
])
def test_bad_options(params, message):
    X, y = data(n=40, d=4)
    with pytest.raises((ValueError, TypeError), match=message):
        AdaBoostClassifier(2, **params).fit(X, y)


@pytest.mark.parametrize("est", [EBBoostClassifier(2, bootstrap=True), QuadBoostClassifier(2, bootstrap=True)])
def test_bootstrap_needs_a_weighting_learner(est):
    X, y = data(n=40, d=4)
    with pytest.raises(ValueError, match="bootstrap=True is not available"):
        est.fit(X, y)


def test_model_file_keeps_the_options(tmp_path):
    from fastboost import load

    X, y = data(n=60)
    m = AdaBoostClassifier(3, max_depth=2, interaction_constraints=[[0, 1], [2, 3]], colsample_bytree=0.5,
                           subsample=0.8, bootstrap=True, random_state=0).fit(X, y)
    m.save(tmp_path / "m.fbm")
    back = load(tmp_path / "m.fbm")
    assert back.get_params() == m.get_params()
    np.testing.assert_array_equal(back.decision_function(X), m.decision_function(X))


def test_command_line_options(tmp_path):
    from fastboost import load
    from fastboost.cli import main

    X, y = data(n=80, d=5)
    np.save(tmp_path / "train.npy", np.column_stack([np.nan_to_num(X), y]))
    assert main(["train", str(tmp_path / "train.npy"), "--target", "5", "--n-estimators", "4", "--max-depth", "2",
                 "--colsample-bytree", "0.6", "--colsample-bynode", "0.8", "--subsample", "0.7", "--bootstrap",
                 "--interaction-constraints", "0,1,2;2,3,4", "--random-state", "1",
                 "-o", str(tmp_path / "m.fbm")]) == 0
    m = load(tmp_path / "m.fbm")
    assert m.get_params()["interaction_constraints"] == [[0, 1, 2], [2, 3, 4]]
    assert (m.colsample_bytree, m.colsample_bynode, m.subsample, m.bootstrap) == (0.6, 0.8, 0.7, True)
    for t in range(m.n_estimators_):
        for used in paths(m.nodes_[t]):
            assert used <= {0, 1, 2} or used <= {2, 3, 4}


@pytest.mark.slow
@pytest.mark.parametrize("params", [dict(colsample_bytree=0.3, subsample=0.5),
                                    dict(max_depth=3, colsample_bytree=0.5, colsample_bynode=0.5, bootstrap=True)])
def test_warm_start_100_plus_100_is_200(params):
    X, y = data(n=2000, d=20)
    whole = AdaBoostClassifier(200, random_state=3, **params).fit(X, y)
    warm = AdaBoostClassifier(100, warm_start=True, random_state=3, **params).fit(X, y)
    warm.set_params(n_estimators=200).fit(X, y)
    same_model(whole, warm)
    same_model(whole, AdaBoostClassifier(200, random_state=3, n_jobs=1, **params).fit(X, y))
