"""Options users bring from scikit-learn: learning_rate and class_weight."""
import numpy as np
import pytest
from naive import assert_same_models
from sklearn.ensemble import AdaBoostClassifier as SkAdaBoost
from sklearn.tree import DecisionTreeClassifier
from sklearn.utils.class_weight import compute_sample_weight

from fastboost import (
    AdaBoostClassifier,
    EBBoostClassifier,
    LazyBoostClassifier,
    QuadBoostClassifier,
    SABoostClassifier,
    VadaBoostClassifier,
)
from fastboost.datasets import make_twonorm

ALL = [AdaBoostClassifier, VadaBoostClassifier, EBBoostClassifier, LazyBoostClassifier, SABoostClassifier,
       QuadBoostClassifier]
KINDS = [{}, {"max_depth": 3}, {"max_depth": 2, "leaf": "real"}]


same_model = assert_same_models


@pytest.fixture(scope="module")
def data():
    X, y = make_twonorm(600, random_state=3)
    return X, (y == y.max()).astype(int)


@pytest.mark.parametrize("Est", ALL)
def test_learning_rate_one_is_the_published_algorithm(Est, data):
    X, y = data
    same_model(Est(n_estimators=20).fit(X, y), Est(n_estimators=20, learning_rate=1.0).fit(X, y))


@pytest.mark.parametrize("kind", KINDS, ids=["stumps", "trees", "real"])
def test_learning_rate_shrinks_every_step(kind, data):
    X, y = data
    full = AdaBoostClassifier(n_estimators=1, **kind).fit(X, y)
    half = AdaBoostClassifier(n_estimators=1, learning_rate=0.5, **kind).fit(X, y)
    np.testing.assert_allclose(half.rounds_["alpha"], 0.5 * full.rounds_["alpha"], rtol=1e-15)
    np.testing.assert_allclose(half.decision_function(X), 0.5 * full.decision_function(X), rtol=1e-12, atol=1e-15)
    # and the cost still falls every round
    model = AdaBoostClassifier(n_estimators=30, learning_rate=0.3, **kind).fit(X, y)
    assert np.all(np.diff(model.rounds_["log_cost"]) < 0)


def test_learning_rate_matches_sklearn_samme():
    X, y = make_twonorm(400, random_state=1)
    X = np.round(X, 1)  # fewer than 255 values per feature: exact bins
    ours = AdaBoostClassifier(n_estimators=20, criterion="gini", learning_rate=0.4).fit(X, y)
    sk = SkAdaBoost(DecisionTreeClassifier(max_depth=1), n_estimators=20, learning_rate=0.4,
                    random_state=0).fit(X, y)
    np.testing.assert_allclose(2 * ours.estimator_weights_, sk.estimator_weights_, rtol=1e-9)
    np.testing.assert_array_equal(ours.predict(X), sk.predict(X))


@pytest.mark.parametrize("Est", ALL)
def test_class_weight_balanced_equals_its_sample_weight(Est, data):
    X, y = data
    keep = np.r_[np.flatnonzero(y == 0)[:100], np.flatnonzero(y == 1)]  # unbalanced
    X, y = X[keep], y[keep]
    sw = np.random.default_rng(0).uniform(0.5, 2.0, len(y))
    a = Est(n_estimators=15, class_weight="balanced").fit(X, y, sample_weight=sw)
    b = Est(n_estimators=15).fit(X, y, sample_weight=sw * compute_sample_weight("balanced", y))
    same_model(a, b)


def test_class_weight_dict_one_vs_rest_and_samme():
    X, y = make_twonorm(600, random_state=5)
    y = (y == y.max()).astype(int) + (X[:, 0] > 1)  # three classes
    cw = {0: 1.0, 1: 3.0, 2: 0.5}
    for Est in (AdaBoostClassifier, VadaBoostClassifier):
        a = Est(n_estimators=10, class_weight=cw).fit(X, y)
        b = Est(n_estimators=10).fit(X, y, sample_weight=compute_sample_weight(cw, y))
        np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))


@pytest.mark.parametrize("cw, err, match", [
    ({0: 1.0, 7: 2.0}, ValueError, "class_weight"),
    ({0: -1.0, 1: 1.0}, ValueError, "class_weight must map classes to finite weights >= 0"),
    ("heavy", TypeError, "class_weight"),
    ({0: 0.0, 1: 0.0}, ValueError, "sample_weight sums to zero"),
])
def test_bad_class_weight_is_a_clear_error(cw, err, match, data):
    X, y = data
    with pytest.raises(err, match=match):
        AdaBoostClassifier(n_estimators=3, class_weight=cw).fit(X, y)


@pytest.mark.parametrize("lr", [0.0, -1.0, np.nan, np.inf])
def test_bad_learning_rate_is_a_clear_error(lr, data):
    X, y = data
    with pytest.raises(ValueError, match=r"learning_rate must be in \(0, inf\)"):
        AdaBoostClassifier(learning_rate=lr).fit(X, y)


# ----------------------------------------------------------------------------- warm_start
WARM_CASES = [
    (AdaBoostClassifier, {}), (AdaBoostClassifier, {"max_depth": 3}), (AdaBoostClassifier, {"leaf": "real",
                                                                                            "max_depth": 2}),
    (VadaBoostClassifier, {"lam": 0.3}), (EBBoostClassifier, {}), (SABoostClassifier, {}),
    (LazyBoostClassifier, {}), (QuadBoostClassifier, {"penalty": "l1", "lam": 1e-3, "reweight_every": 10}),
    (QuadBoostClassifier, {"max_depth": 2, "reweight_every": 25}),
    (AdaBoostClassifier, {"validation_fraction": 0.25, "random_state": 0}),
    (AdaBoostClassifier, {"learning_rate": 0.3, "class_weight": "balanced"}),
]


@pytest.mark.parametrize("Est, params", WARM_CASES, ids=lambda c: getattr(c, "__name__", str(c)))
def test_warm_start_continues_bit_for_bit(Est, params, data):
    X, y = data
    once = Est(n_estimators=50, **params).fit(X, y)
    warm = Est(n_estimators=20, warm_start=True, **params).fit(X, y)
    warm.set_params(n_estimators=50).fit(X, y)
    same_model(once, warm)
    np.testing.assert_array_equal(once.decision_function(X), warm.decision_function(X))
    assert once.n_estimators_ == warm.n_estimators_


def test_warm_start_multiclass_and_samme():
    X, y = make_twonorm(600, random_state=5)
    y = (y == y.max()).astype(int) + (X[:, 0] > 1)
    for Est, params in ((AdaBoostClassifier, {"max_depth": 2}), (VadaBoostClassifier, {})):
        once = Est(n_estimators=30, **params).fit(X, y)
        warm = Est(n_estimators=10, warm_start=True, **params).fit(X, y).set_params(n_estimators=30).fit(X, y)
        np.testing.assert_array_equal(once.decision_function(X), warm.decision_function(X))


def test_warm_start_refuses_other_data_and_parameters(data):
    X, y = data
    model = AdaBoostClassifier(n_estimators=10, warm_start=True).fit(X, y)
    with pytest.raises(ValueError, match="same training data"):
        model.set_params(n_estimators=20).fit(X[::-1], y[::-1])
    with pytest.raises(ValueError, match="max_bins changed"):
        model.set_params(max_bins=32).fit(X, y)
    model.set_params(max_bins=255)
    with pytest.raises(ValueError, match="must be >= the 10 rounds already fitted"):
        model.set_params(n_estimators=5).fit(X, y)
    assert model.n_estimators_ == 10  # every refused fit kept the model
    model.set_params(n_estimators=20, warm_start=False).fit(X[::-1], y[::-1])  # a new fit
    assert model.n_estimators_ == 20


def test_a_refused_one_vs_rest_warm_start_keeps_every_class_model():
    """One-vs-rest: a warm start refused for one class (labels swapped between two other classes leave the first
    class's problem as it was) keeps every class's model as it was, its parameters included; the model then
    saves and loads, and continues to the fit of 30 rounds at once."""
    import io

    from fastboost import load
    from fastboost.datasets import make_waveform

    X, y = make_waveform(300, random_state=1)
    model = VadaBoostClassifier(10, warm_start=True).fit(X, y)
    before = model.decision_function(X)
    assert model.classes_.tolist() == [1, 2, 3]
    swapped = y.copy()
    first, second = np.flatnonzero(y == 2)[:5], np.flatnonzero(y == 3)[:5]
    swapped[first], swapped[second] = 3, 2
    done = []
    with pytest.raises(ValueError, match="same training data"):
        model.set_params(n_estimators=30).fit(X, swapped, callbacks=[lambda n, rounds: done.append(n)])
    assert done[-1] == 30  # (the first class's model had continued to 30 rounds)
    assert "_resume" not in vars(model.estimators_[0])  # (its working state had advanced: dropped)
    with pytest.raises(ValueError, match="max_depth changed"):  # (named before its rounds are fitted again)
        model.set_params(max_depth=2).fit(X, y)
    model.set_params(n_estimators=10, max_depth=1)
    assert [m.n_estimators_ for m in model.estimators_] == [10, 10, 10] and model.n_estimators_ == 30
    assert [(m.n_estimators, m.max_depth) for m in model.estimators_] == [(10, 1)] * 3
    np.testing.assert_array_equal(model.decision_function(X), before)
    buf = io.BytesIO()
    model.save(buf)
    buf.seek(0)
    np.testing.assert_array_equal(load(buf).decision_function(X), before)
    model.set_params(n_estimators=30).fit(X, y)
    once = VadaBoostClassifier(30).fit(X, y)
    np.testing.assert_array_equal(model.decision_function(X), once.decision_function(X))


def test_warm_start_refuses_other_validation_labels_or_weights(data):
    """The same X_val with other labels or weights, or a held-out share whose weights changed: the loop would go
    on validating on those of the first fit (a wrong kept round), so it is refused as other data."""
    X, y = data
    Xt, yt, Xv, yv = X[:450], y[:450], X[450:], y[450:]
    for other in ((Xv, 1 - yv), (Xv, yv, np.where(yv == 1, 5.0, 0.2))):
        model = AdaBoostClassifier(10, warm_start=True).fit(Xt, yt, eval_set=(Xv, yv))
        with pytest.raises(ValueError, match="same training data \\(and validation set\\); these differ"):
            model.set_params(n_estimators=20).fit(Xt, yt, eval_set=other)
    model = AdaBoostClassifier(10, warm_start=True, validation_fraction=0.25, random_state=1).fit(X, y)
    heavy = np.where(y == 1, 9.0, 1.0)
    with pytest.raises(ValueError, match="these differ"):  # (the held-out rows' weights among them)
        model.set_params(n_estimators=20).fit(X, y, sample_weight=heavy)


@pytest.mark.parametrize("random_state", ["RandomState", None])
def test_warm_start_holds_out_the_rows_of_the_fit_it_continues(data, random_state):
    """validation_fraction with a RandomState (which the first fit moved on) or no seed: a warm start holds out
    the rows its first fit held out, and continues (it was refused as other data); with a RandomState, to the fit
    of all the rounds at once from a RandomState seeded alike."""
    X, y = data

    def make(n, **kw):
        rs = np.random.RandomState(0) if random_state else None
        return AdaBoostClassifier(n, validation_fraction=0.25, random_state=rs, **kw)

    model = make(10, warm_start=True).fit(X, y)
    copies = _saved_and_pickled(model)
    model.set_params(n_estimators=20).fit(X, y)
    assert model.validation_errors_.shape == (20,)
    if random_state:
        same_model(make(20).fit(X, y), model)
    for copy in copies:  # (the seed is kept with the model: a loaded or unpickled one holds out the same rows)
        same_model(model, copy.set_params(n_estimators=20).fit(X, y))


@pytest.mark.parametrize("random_state", ["RandomState", None])
def test_a_loaded_warm_start_draws_the_rows_and_features_its_fit_drew(data, random_state):
    """Row and feature sampling with a RandomState or no seed: a model loaded or unpickled runs its rounds again
    with the seed its fit drew (``sampling_seed_``), and continues as in this process (it drew another seed, and
    the warm start was refused as one on other data)."""
    X, y = data
    rs = np.random.RandomState(0) if random_state else None
    model = AdaBoostClassifier(10, warm_start=True, subsample=0.7, colsample_bytree=0.6, random_state=rs).fit(X, y)
    assert isinstance(model.sampling_seed_, int)
    copies = _saved_and_pickled(model)
    model.set_params(n_estimators=20).fit(X, y)
    for copy in copies:
        same_model(model, copy.set_params(n_estimators=20).fit(X, y))
    assert not hasattr(AdaBoostClassifier(5).fit(X, y), "sampling_seed_")  # (no draws)


@pytest.mark.parametrize("params", [{"monotone_constraints": [1, -1, 0, 0, 0, 0, 0, 0]},
                                    {"penalty": "l1", "lam": 0.002}], ids=["monotone", "l1"])
def test_a_loaded_quadboost_that_dropped_voters_continues(params):
    """QuadBoost's finish drops voters its re-weighting leaves at weight 0, and a longer fit weighs them anew
    (keeping some): a loaded or unpickled model's kept rounds are then not the first kept rounds of its fit
    again, but they are among the rounds that fit ran. It was refused as one on other data."""
    from fastboost import QuadBoostClassifier

    rng = np.random.default_rng(0)
    X = np.round(rng.normal(size=(400, 8)), 1)
    X[rng.random(X.shape) < 0.05] = np.nan
    z = np.nan_to_num(X)
    s = z[:, 0] - z[:, 1] + np.sin(3 * z[:, -1]) + rng.normal(scale=0.7, size=400)
    y = (s > np.median(s)).astype(int)
    ten = QuadBoostClassifier(10, max_depth=2, warm_start=True, **params).fit(X, y)
    assert ten.n_estimators_ < 10  # (voters dropped)
    once = QuadBoostClassifier(20, max_depth=2, **params).fit(X, y)
    for copy in _saved_and_pickled(ten):
        same_model(once, copy.set_params(n_estimators=20).fit(X, y))
    with pytest.raises(ValueError, match="first rounds differ"):  # (other data is still refused)
        _saved_and_pickled(ten)[0].set_params(n_estimators=20).fit(X, 1 - y)


def _saved_and_pickled(model):
    """A model loaded from its model file, and one unpickled."""
    import io
    import pickle

    from fastboost import load

    buf = io.BytesIO()
    model.save(buf)
    buf.seek(0)
    return [load(buf), pickle.loads(pickle.dumps(model))]


@pytest.mark.parametrize("random_state", ["RandomState", None])
def test_a_one_vs_rest_warm_start_holds_out_the_rows_of_the_fit_it_continues(data, random_state):
    """One-vs-rest: each class's model keeps its own copy of a RandomState; the estimator's own is checked
    against its fit (a continued fit with the very object was refused as "random_state changed"). With
    validation_fraction each class's model holds out its rows again, in this process, loaded or unpickled."""
    X, y = data
    y3 = _three_classes(X, y)

    def make(n, **kw):
        rs = np.random.RandomState(0) if random_state else None
        return VadaBoostClassifier(n, validation_fraction=0.25, random_state=rs, **kw)

    model = make(10, warm_start=True).fit(X, y3)
    assert all(isinstance(m.validation_seed_, int) for m in model.estimators_)
    copies = _saved_and_pickled(model)
    model.set_params(n_estimators=20).fit(X, y3)
    assert [m.validation_errors_.shape for m in model.estimators_] == [(20,)] * 3
    if random_state:
        once = make(20).fit(X, y3)
        for a, b in zip(once.estimators_, model.estimators_):
            same_model(a, b)
    for copy in copies:
        copy.set_params(n_estimators=20).fit(X, y3)
        for a, b in zip(copy.estimators_, model.estimators_):
            same_model(a, b)
    with pytest.raises(ValueError, match="random_state changed"):  # (another object, even seeded alike)
        model.set_params(n_estimators=30, random_state=np.random.RandomState(0)).fit(X, y3)


def _three_classes(X, y):
    return y + (X[:, 0] > 1)


@pytest.mark.parametrize("case", ["binary-to-three", "three-to-binary", "samme-to-ovr", "ovr-to-samme",
                                  "samme-real-to-mh"])
def test_a_warm_start_refuses_another_class_layout(data, case):
    """The classes of y, and how K classes are fitted (one model, or one per class), are those of the fit a warm
    start continues; a change is refused, naming it, before anything is fitted, and the model stays as it was
    (it used to start a new fit silently)."""
    X, y = data
    y3 = _three_classes(X, y)
    first_y, then_y, change, match = {
        "binary-to-three": (y, y3, {}, "classes of y differ"),
        "three-to-binary": (y3, y, {}, "classes of y differ"),
        "samme-to-ovr": (y3, y3, {"multiclass": "ovr"}, "multiclass changed"),
        "ovr-to-samme": (y3, y3, {"multiclass": "auto"}, "multiclass changed"),
        "samme-real-to-mh": (y3, y3, {"multiclass": "mh"}, "multiclass changed"),
    }[case]
    params = {"multiclass": "ovr"} if case == "ovr-to-samme" else {}
    if case == "samme-real-to-mh":
        params = {"leaf": "real", "multiclass": "joint"}
    Est = VadaBoostClassifier if case.startswith(("binary", "three")) else AdaBoostClassifier
    model = Est(5, warm_start=True, **params).fit(X, first_y)
    before, state, n_rounds, fitted = (model.decision_function(X), sorted(vars(model)), model.n_estimators_,
                                       model.get_params())
    with pytest.raises(ValueError, match=match):
        model.set_params(n_estimators=10, **change).fit(X, then_y)
    assert sorted(vars(model)) == state and model.n_estimators_ == n_rounds
    np.testing.assert_array_equal(model.decision_function(X), before)
    model.set_params(**fitted).set_params(n_estimators=10).fit(X, first_y)  # continues as before
    same_model(Est(10, **params).fit(X, first_y), model)


@pytest.mark.parametrize("change, match", [({"max_depth": 2}, "max_depth changed"),
                                           ({"learning_rate": 0.5}, "learning_rate changed"),
                                           ({"categorical_features": [0]}, "categorical_features changed")])
@pytest.mark.parametrize("how", ["pickled", "interrupted"])
def test_a_warm_start_names_the_changed_parameter_without_its_working_state(data, change, match, how):
    """A model without the working state of its fit (unpickled, or after an interrupted warm start) is fitted
    again to continue; a changed parameter is named before that, as in the process of the fit, not reported as
    first rounds that differ."""
    import pickle

    X, y = data
    model = AdaBoostClassifier(10, warm_start=True).fit(X, y)
    fitted = model.get_params()
    if how == "pickled":
        model = pickle.loads(pickle.dumps(model))
    else:
        def interrupt(n_done, rounds):
            raise KeyboardInterrupt

        with pytest.raises(KeyboardInterrupt):
            model.set_params(n_estimators=30).fit(X, y, callbacks=[interrupt])
    assert "_resume" not in vars(model)
    with pytest.raises(ValueError, match=match):
        model.set_params(n_estimators=20, **change).fit(X, y)
    model.set_params(**fitted).set_params(n_estimators=20).fit(X, y)  # as it was: continues
    same_model(AdaBoostClassifier(20).fit(X, y), model)


def test_a_warm_start_compares_parameters_by_value():
    """A tuple is the list a model file gives back and a NumPy integer is the number: neither is a change."""
    X, y = make_twonorm(300, random_state=2)
    y = (y == y.max()).astype(int)
    model = AdaBoostClassifier(5, warm_start=True, random_state=np.int64(3), subsample=0.5,
                               monotone_constraints=(1,) + (0,) * (X.shape[1] - 1)).fit(X, y)
    model.set_params(n_estimators=8, random_state=3, monotone_constraints=[1] + [0] * (X.shape[1] - 1)).fit(X, y)
    assert model.n_estimators_ == 8
    with pytest.raises(ValueError, match="random_state changed"):
        model.set_params(n_estimators=9, random_state=4).fit(X, y)
    # a set by its items (their order in a set differs between processes, as for strings)
    from fastboost._params import _param_key

    assert _param_key([{"x1", "x0"}]) == _param_key([frozenset(["x0", "x1"])]) != _param_key([{"x0"}])
    # a RandomState: an unpickled model's is its own; another one is a change
    import pickle

    model = pickle.loads(pickle.dumps(AdaBoostClassifier(5, warm_start=True,
                                                         random_state=np.random.RandomState(0)).fit(X, y)))
    assert model.set_params(n_estimators=8).fit(X, y).n_estimators_ == 8
    with pytest.raises(ValueError, match="random_state changed"):
        model.set_params(n_estimators=9, random_state=np.random.RandomState(0)).fit(X, y)


@pytest.mark.parametrize("make", [lambda: AdaBoostClassifier(10, warm_start=True),
                                  lambda: VadaBoostClassifier(10, max_depth=2, warm_start=True)],
                         ids=["stumps", "trees"])
def test_a_warm_start_interrupted_part_way_continues_as_one_fit(data, make):
    """Ctrl-C (here raised by a callback between chunks of rounds) part way through a warm start: the model is
    the one before, and a later warm start gives the fit of 30 rounds at once, although the interrupted run had
    advanced the weights it continues from."""
    X, y = data
    model = make().fit(X, y)
    before = model.decision_function(X)

    def interrupt(n_done, rounds):
        if n_done > 10:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        model.set_params(n_estimators=30).fit(X, y, callbacks=[interrupt])
    assert model.n_estimators_ == 10
    np.testing.assert_array_equal(model.decision_function(X), before)
    model.fit(X, y)
    once = make().set_params(n_estimators=30, warm_start=False).fit(X, y)
    same_model(once, model)


def test_a_list_parameter_edited_in_place_is_a_change(data):
    """A warm start compares the parameters of the fit it continues with a copy taken then: a constraints list
    edited in place since is a changed parameter, not the same object compared with itself."""
    X, y = data
    constraints = [1] + [0] * (X.shape[1] - 1)
    model = AdaBoostClassifier(10, warm_start=True, monotone_constraints=constraints).fit(X, y)
    constraints[0] = -1
    with pytest.raises(ValueError, match="monotone_constraints changed"):
        model.set_params(n_estimators=20).fit(X, y)
    # a RandomState is the same object, not a copy that would compare as another
    model = AdaBoostClassifier(10, warm_start=True, subsample=0.5, random_state=np.random.RandomState(0)).fit(X, y)
    assert model.set_params(n_estimators=20).fit(X, y).n_estimators_ == 20


def test_warm_start_runs_only_the_new_rounds(data, monkeypatch):
    from fastboost._fit import Fit

    starts = []
    run = Fit.run

    def spy(fit, n_rounds, *args, **kwargs):
        starts.append((fit.done, n_rounds))
        return run(fit, n_rounds, *args, **kwargs)

    monkeypatch.setattr(Fit, "run", spy)
    X, y = data
    model = AdaBoostClassifier(n_estimators=20, warm_start=True).fit(X, y)
    model.set_params(n_estimators=50).fit(X, y)
    model.set_params(n_estimators=50).fit(X, y)  # nothing left to do
    assert starts == [(0, 20), (20, 50), (50, 50)]
