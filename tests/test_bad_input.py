"""Every bad input gets a ValueError/TypeError that names the problem (never a numba error)."""
import inspect

import numpy as np
import pytest
import scipy.sparse as sp
from naive import assert_rounds_equal
from sklearn.exceptions import NotFittedError

from fastboost import (
    AdaBoostClassifier,
    EBBoostClassifier,
    LazyBoostClassifier,
    QuadBoostClassifier,
    RLPBoostClassifier,
    RQPBoostClassifier,
    SABoostClassifier,
    VadaBoostClassifier,
)
from fastboost._params import ESTIMATOR_PARAMS

ESTIMATORS = [AdaBoostClassifier, VadaBoostClassifier]

rng = np.random.default_rng(0)
X = rng.normal(size=(40, 3))
y = np.where(X[:, 0] > 0, 1, -1)


@pytest.fixture(params=ESTIMATORS, ids=lambda c: c.__name__)
def Est(request):
    return request.param


@pytest.mark.parametrize(
    "X_bad, err, match",
    [
        (X[:, 0], ValueError, "Expected 2D array, got 1D array"),
        (X[None], ValueError, "Expected 2D array, got 3D array"),
        (np.float64(1.0), ValueError, "Expected 2D array, got 0D array"),
        (np.empty((0, 3)), ValueError, "0 sample"),
        (np.empty((40, 0)), ValueError, "0 feature"),
        (X.astype(complex), ValueError, "Complex data not supported"),
        (np.array([["a", "b", "c"]] * 40), TypeError, "X must be numeric"),
        (X.astype("datetime64[s]"), TypeError, "X must be numeric"),
        (sp.csr_matrix(X), TypeError, "sparse"),
    ],
    ids=["1d", "3d", "0d", "no-rows", "no-features", "complex", "strings", "datetime", "sparse"],
)
def test_bad_X_at_fit(Est, X_bad, err, match):
    with pytest.raises(err, match=match):
        Est(n_estimators=3).fit(X_bad, y[: len(X_bad)] if np.ndim(X_bad) == 2 else y)


def test_object_X_with_non_number(Est):
    Xo = X.astype(object)
    Xo[0, 0] = {"a": 1}
    with pytest.raises(TypeError, match="must be a string or a real number"):
        Est(n_estimators=3).fit(Xo, y)


def test_dataframe_with_text_column(Est):
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame(X, columns=["a", "b", "c"]).assign(d=["x"] * 40)
    with pytest.raises(TypeError, match=r"non-numeric columns: \['d'\]. Name them in categorical_features"):
        Est(n_estimators=3, categorical_features=None).fit(df, y)
    # by default a text column is categorical
    assert Est(n_estimators=3).fit(df, y).is_categorical_.tolist() == [False, False, False, True]


@pytest.mark.parametrize("categorical", [False, True], ids=["numeric", "with-categorical"])
def test_text_in_a_numeric_column_at_predict_names_the_fit(categorical):
    """A column fitted as numbers that comes as text at predict (a bool column with a missing value is an
    object column): the error says the model reads it as numbers, not to name it in categorical_features, which
    a fitted model cannot change."""
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame(X, columns=["a", "b", "c"]).assign(flag=X[:, 0] > 0)
    if categorical:
        df = df.assign(s=np.array(["u", "v"])[(X[:, 1] > 0).astype(int)])
    model = AdaBoostClassifier(3).fit(df, y)
    bad = df.assign(flag=df["flag"].astype(object))
    bad.loc[3, "flag"] = None
    with pytest.raises(TypeError, match=r"non-numeric columns: \['flag'\]. The model was fitted with them as "
                                        r"numeric features.*cast it to float") as err:
        model.predict(bad)
    assert "categorical_features" not in str(err.value)
    assert model.predict(bad.assign(flag=bad["flag"].astype(float))).shape == (40,)


@pytest.mark.parametrize(
    "y_bad, match",
    [
        (y[:-1], "inconsistent numbers of samples"),
        (np.where(np.arange(40) == 3, np.nan, y.astype(float)), "y contains NaN or infinity"),
        (np.where(np.arange(40) == 3, np.inf, y.astype(float)), "y contains NaN or infinity"),
        (np.ones(40), "at least 2 classes.*got 1 class"),
        (rng.normal(size=40), "Unknown label type"),
        (np.c_[y, y], "y should be a 1d array"),
        (np.array(["a", "b"] * 19 + [None, "a"], dtype=object), r"missing label \(None\) at row 38"),
    ],
    ids=["length", "nan", "inf", "one-class", "continuous", "2d", "none"],
)
def test_bad_y(Est, y_bad, match):
    with pytest.raises(ValueError, match=match):
        Est(n_estimators=3).fit(X, y_bad)


@pytest.mark.parametrize("y_mixed", [np.array(["a", 1] * 20, dtype=object), np.array([1, "a"] * 20, dtype=object),
                                     np.array([np.str_("a"), 2.5] * 20, dtype=object)], ids=["str-first", "int-first",
                                                                                             "numpy-str"])
def test_labels_mixing_strings_and_numbers_are_refused_naming_y(y_mixed):
    """Strings and numbers in one label array: a TypeError naming y and two such rows; sorting the classes gave
    NumPy's "'<' not supported between instances of 'int' and 'str'", or scikit-learn's "Unknown label type",
    by the order of the labels."""
    with pytest.raises(TypeError, match=r"y mixes strings and other labels \(row 0: .*, row 1: .*\)"):
        AdaBoostClassifier(n_estimators=3).fit(X, y_mixed)
    both = np.array([np.str_("a"), "b"] * 20, dtype=object)  # (str and numpy.str_ are both strings)
    assert AdaBoostClassifier(n_estimators=3).fit(X, both).classes_.tolist() == ["a", "b"]


def test_y_none(Est):
    with pytest.raises(ValueError, match="requires y to be passed"):
        Est(n_estimators=3).fit(X, None)


@pytest.mark.parametrize(
    "sw, err, match",
    [
        (-np.ones(40), ValueError, "non-negative"),
        (np.zeros(40), ValueError, "sums to zero"),
        (np.ones(39), ValueError, r"sample_weight.shape == \(39,\), expected \(40,\)"),
        (np.where(np.arange(40) == 0, np.nan, 1.0), ValueError, "NaN or infinity"),
        (np.array(["a"] * 40), TypeError, "sample_weight must be numeric"),
    ],
    ids=["negative", "all-zero", "shape", "nan", "strings"],
)
def test_bad_sample_weight(Est, sw, err, match):
    with pytest.raises(err, match=match):
        Est(n_estimators=3).fit(X, y, sample_weight=sw)


@pytest.mark.parametrize(
    "params, err, match",
    [
        ({"n_estimators": 0}, ValueError, "n_estimators must be >= 1, got 0"),
        ({"n_estimators": -5}, ValueError, "n_estimators must be >= 1"),
        ({"n_estimators": 2.5}, TypeError, "n_estimators must be an int"),
        ({"max_bins": 1}, ValueError, r"max_bins must be in \[2, 65535\] or None, got 1"),
        ({"max_bins": 65536}, ValueError, r"max_bins must be in \[2, 65535\] or None, got 65536"),
        ({"max_bins": "many"}, TypeError, "max_bins must be an int"),
        ({"criterion": "entropy"}, ValueError, "criterion must be one of"),
        ({"n_jobs": 0}, ValueError, "n_jobs"),
        ({"n_jobs": 1.5}, TypeError, "n_jobs must be an int"),
        ({"verbose": -1}, ValueError, "verbose"),
    ],
)
def test_bad_hyperparameters(Est, params, err, match):
    with pytest.raises(err, match=match):
        Est(**params).fit(X, y)


@pytest.mark.parametrize("lam, err", [(-0.1, ValueError), (1.5, ValueError), (np.nan, ValueError), ("x", TypeError)])
def test_lam_outside_unit_interval(lam, err):
    with pytest.raises(err, match="lam must be"):
        VadaBoostClassifier(lam=lam).fit(X, y)


@pytest.mark.parametrize("method", ["predict", "predict_proba", "decision_function", "score"])
def test_predict_before_fit(Est, method):
    args = (X, y) if method == "score" else (X,)
    with pytest.raises(NotFittedError, match="not fitted yet"):
        getattr(Est(), method)(*args)


def test_staged_before_fit(Est):
    with pytest.raises(NotFittedError, match="not fitted yet"):
        next(Est().staged_predict(X))


@pytest.mark.parametrize("method", ["predict", "predict_proba", "decision_function"])
def test_wrong_feature_count_at_predict(Est, method):
    model = Est(n_estimators=3).fit(X, y)
    with pytest.raises(ValueError, match="X has 2 features, but .* is expecting 3 features"):
        getattr(model, method)(X[:, :2])
    with pytest.raises(ValueError, match="Expected 2D array, got 1D array"):
        getattr(model, method)(X[0])


@pytest.mark.parametrize("n_jobs, err", [(0, ValueError), (1.5, TypeError), ("2", TypeError)])
def test_n_jobs_set_on_a_fitted_model_is_checked_when_predicting(Est, n_jobs, err):
    """A bad n_jobs set after the fit is named by predict and predict_contrib, not left to numba's thread count."""
    model = Est(n_estimators=3).fit(X, y).set_params(n_jobs=n_jobs)
    for method in ("predict", "predict_proba", "predict_contrib"):
        with pytest.raises(err, match="n_jobs must be"):
            getattr(model, method)(X)


def test_error_types_are_not_numba_errors(Est):
    """The messages above come from Python validation: a numba TypingError is neither."""
    import numba

    with pytest.raises(ValueError) as info:
        Est(n_estimators=3).fit(X.astype(complex), y)
    assert not isinstance(info.value, numba.core.errors.NumbaError)


def test_nan_in_X_is_not_an_error_but_inf_is_a_value(Est):
    """NaN marks missing values and ±inf are ordinary extremes: both fit without NaN in the model."""
    Xn = X.copy()
    Xn[::5, 0] = np.nan
    Xn[1, 1] = np.inf
    Xn[2, 2] = -np.inf
    model = Est(n_estimators=5).fit(Xn, y)
    assert np.all(np.isfinite(model.estimator_weights_))
    assert np.all(np.isfinite(model.decision_function(Xn)))


def test_missing_labels_of_pandas_types_name_the_row(Est):
    pd = pytest.importorskip("pandas")
    with pytest.raises(ValueError, match=r"missing label \(<NA>\) at row 38"):
        Est(n_estimators=3).fit(X, pd.Series(["a", "b"] * 19 + [None, "a"], dtype="string"))


def test_class_weight_times_sample_weight_overflow_is_named(Est):
    with pytest.raises(ValueError, match=r"sample_weight times class_weight=.* overflows float64"):
        Est(n_estimators=3, class_weight={-1: 1e300, 1: 1.0}).fit(X, y, sample_weight=np.full(len(y), 1e300))


def test_an_empty_quadboost_model_says_why_in_its_own_terms():
    """The empty-ensemble warning names lam only for the l1 penalty, whose threshold it is."""
    with pytest.warns(UserWarning, match=r"none has \|<h, r>\| > lam=10\); the ensemble is empty"):
        model = QuadBoostClassifier(5, penalty="l1", lam=10.0).fit(X, y)
    assert model.n_estimators_ == 0
    assert model._empty_reason.startswith("no voter improves the objective (with penalty='l1'")
    model.set_params(penalty=None)
    assert model._empty_reason == "no voter improves the objective;"


def test_a_path_that_names_nothing_is_not_read_as_data(Est, tmp_path):
    """A string or path that names no parquet data, given as X: a TypeError saying so, not one about a str
    dtype or a missing attribute."""
    model = Est(n_estimators=3).fit(X, y)
    for bad in (str(tmp_path / "no" / "such" / "dir/"), tmp_path / "missing"):
        for call in (model.predict, model.decision_function, model.predict_contrib):
            with pytest.raises(TypeError, match="a path or text, not an array: a path must name parquet files"):
                call(bad)
        # fit reads parquet files only through a Dataset, which the message names (for a path that exists too)
        with pytest.raises(TypeError, match=r"a path or text, not an array: to fit parquet files, pass "
                                            r"fastboost.Dataset.from_parquet\(path"):
            Est(3).fit(bad, y)


def test_a_list_of_validation_sets_is_refused_as_such(Est):
    """LightGBM's and XGBoost's eval_set form, a list of (X_val, y_val) pairs: a TypeError saying eval_set is one
    set (a list of two pairs was read as X_val = the first pair). An eval_set of lists of rows still works."""
    for eval_set in ([(X, y), (X, y)], [(X, y)]):
        with pytest.raises(TypeError, match=r"eval_set is one validation set.*got a list of \d such tuples"):
            Est(n_estimators=3).fit(X, y, eval_set=eval_set)
    Est(n_estimators=3).fit(X, y, eval_set=(X[:2].tolist(), y[:2].tolist()))


def test_a_validation_frame_with_other_columns_is_refused(Est):
    """eval_set's X as a frame with X's columns renamed or reordered: a ValueError naming them, as predict gives
    (its columns were matched by position). A validation array beside a training frame still works."""
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    for cols, message in ((["b", "a", "c"], r"in X's order; X has \['a', 'b', 'c'\], eval_set's X \['b', 'a', 'c'\]"),
                          (["a", "b", "d"], r"columns not in X: \['d'\], X's columns it lacks: \['c'\]")):
        with pytest.raises(ValueError, match=message):
            Est(n_estimators=3).fit(frame, y, eval_set=(frame.set_axis(cols, axis=1), y))
    Est(n_estimators=3).fit(frame, y, eval_set=(X, y))


def test_failed_refit_keeps_the_previous_model(Est):
    """A refit whose input is rejected leaves the fitted model as it was."""
    model = Est(n_estimators=5).fit(X, y)
    before = model.rounds_.copy()
    with pytest.raises(ValueError, match="at least 2 classes"):
        model.fit(X[:, :1], np.zeros(len(X)))
    assert model.n_features_in_ == 3
    assert_rounds_equal(model.rounds_, before)
    with pytest.raises(ValueError, match="X has 1 features"):
        model.predict(X[:, :1])


def test_failed_first_fit_leaves_an_unfitted_model(Est):
    model = Est(n_estimators=5)
    with pytest.raises(ValueError):
        model.fit(X, np.ones(len(X)))
    with pytest.raises(NotFittedError):
        model.predict(X)


@pytest.mark.parametrize("make, y_fit", [
    (lambda: AdaBoostClassifier(20, learning_rate=1e308), y),
    (lambda: VadaBoostClassifier(20, learning_rate=1e308), y),
    (lambda: QuadBoostClassifier(20, learning_rate=1e308), y),
    (lambda: SABoostClassifier(20, learning_rate=1e307), y),
    (lambda: RQPBoostClassifier(20, C=1.0, learning_rate=1e308), y),
    (lambda: RQPBoostClassifier(20, learning_rate=1e308), y),
    (lambda: RLPBoostClassifier(20, nu=0.2, learning_rate=1e308), y),
], ids=["adaboost", "vadaboost", "quadboost", "saboost", "rqpboost", "rqpboost-auto", "rlpboost"])
def test_a_fit_whose_weights_overflow_is_refused(make, y_fit):
    """A step so large that the weights overflow (the model would predict NaN or one class): ValueError naming
    the estimator and learning_rate, and the estimator stays as it was. RQP-Boost re-weighted the voters fitted
    on overflowed weights into a poor model without a word; with C="auto" the error named the AdaBoost of its
    held-out folds."""
    model = make()
    with pytest.raises(ValueError, match=rf"^{type(model).__name__}: the fit overflowed in round \d+: .* "
                                         r"learning_rate=1e\+30[78]\)? is too large"):
        model.fit(X, y_fit)
    with pytest.raises(NotFittedError):
        model.predict(X)


def test_an_saboost_overflow_names_the_schedule_and_gamma():
    """SABoost's step is its schedule's, times learning_rate: an overflow names all three (it blamed
    learning_rate=1 for gamma=1000)."""
    with pytest.raises(ValueError, match=r"the step size \(schedule='constant', gamma=1000, learning_rate=1\) is too"):
        SABoostClassifier(5, schedule="constant", gamma=1000).fit(X, y)


def test_a_learning_rate_that_makes_the_cost_rise_warns():
    """Above 1, a learning rate whose steps overshoot (the training cost rises) warns; one whose cost keeps
    falling does not, and neither does any fit at 1 or below."""
    with pytest.warns(UserWarning, match=r"learning_rate=10 the training cost rose in \d+ of 20 rounds"):
        QuadBoostClassifier(20, learning_rate=10).fit(X, y)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = AdaBoostClassifier(20, learning_rate=1.5).fit(X, y)
        assert np.all(np.diff(model.rounds_["log_cost"]) < 0)
        QuadBoostClassifier(20).fit(X, y)


@pytest.mark.parametrize("scale", [1e308, 1e-310, 5e-324])
def test_extreme_sample_weights_are_rescaled_not_overflowed(Est, scale):
    ref = Est(n_estimators=5).fit(X, y)
    model = Est(n_estimators=5).fit(X, y, sample_weight=np.full(len(y), scale))
    np.testing.assert_array_equal(model.rounds_["feature"], ref.rounds_["feature"])
    np.testing.assert_allclose(model.estimator_weights_, ref.estimator_weights_, rtol=1e-12)


def test_random_state_is_checked_at_fit(Est):
    with pytest.raises(ValueError, match="cannot be used to seed"):
        Est(random_state="abc").fit(X, y)


def test_verbose_accepts_bool(Est, capsys):
    Est(n_estimators=3, verbose=True).fit(X, y)
    assert "round" in capsys.readouterr().out


# ----------------------------------------------------------------------------- the parameter table
ALL_ESTIMATORS = [AdaBoostClassifier, LazyBoostClassifier, VadaBoostClassifier, EBBoostClassifier,
                  SABoostClassifier, QuadBoostClassifier]


@pytest.mark.parametrize("cls", ALL_ESTIMATORS, ids=lambda c: c.__name__)
def test_signature_matches_the_parameter_table(cls):
    """Each explicit ``__init__`` lists the table's parameters in order, with its defaults; only n_estimators
    is positional."""
    table = ESTIMATOR_PARAMS[cls.__name__]
    params = list(inspect.signature(cls.__init__).parameters.values())[1:]
    assert [p.name for p in params] == list(table)
    assert {p.name: p.default for p in params} == {name: param.default for name, param in table.items()}
    assert [p.kind for p in params] == [inspect.Parameter.POSITIONAL_OR_KEYWORD] + \
        [inspect.Parameter.KEYWORD_ONLY] * (len(params) - 1)
    assert cls().get_params() == {name: param.default for name, param in table.items()}


@pytest.mark.parametrize("cls", ALL_ESTIMATORS, ids=lambda c: c.__name__)
def test_numpydoc_docstring(cls):
    doc = inspect.getdoc(cls)
    for section in ("Parameters", "Attributes", "Examples"):
        assert f"\n{section}\n{'-' * len(section)}\n" in doc
    parameters = doc.split("\nParameters\n")[1].split("\nAttributes\n")[0]
    documented = [line.split(" : ")[0] for line in parameters.splitlines() if " : " in line
                  and not line.startswith(" ")]
    assert documented == list(ESTIMATOR_PARAMS[cls.__name__])
    assert "make_twonorm" in doc and "docs/algorithms.md" in doc
    assert "§" not in doc  # sections are named, in docs/algorithms.md


@pytest.mark.parametrize("make, err, match", [
    (lambda: AdaBoostClassifier(max_depth=0), ValueError, r"^max_depth must be in \[1, 8\], got 0\.$"),
    (lambda: AdaBoostClassifier(n_iter_no_change=2 ** 63), ValueError,
     r"^n_iter_no_change must be at most 9223372036854775807 \(2\*\*63 - 1\) or None, got 9223372036854775808\.$"),
    (lambda: AdaBoostClassifier(max_depth=2.0), TypeError, r"max_depth must be an int in \[1, 8\], got 2\.0"),
    (lambda: AdaBoostClassifier(min_weight_fraction_leaf=0.6), ValueError,
     r"min_weight_fraction_leaf must be in \[0, 0\.5\], got 0\.6"),
    (lambda: AdaBoostClassifier(validation_fraction=0.0), ValueError,
     r"validation_fraction must be in \(0, 1\) or None, got 0\.0"),
    (lambda: AdaBoostClassifier(n_iter_no_change=0), ValueError, r"n_iter_no_change must be >= 1 or None, got 0"),
    (lambda: AdaBoostClassifier(5, n_iter_no_change=3).fit(np.arange(40.0)[:, None], np.r_[0, np.ones(39)]),
     ValueError, r"^n_iter_no_change=3 without eval_set \(it holds out 0.1 of the rows\) cannot hold out a "
                 r"stratified validation set from 40 samples"),
    (lambda: AdaBoostClassifier(leaf="soft"), ValueError, r"leaf must be one of \['discrete', 'real'\], got 'soft'"),
    (lambda: AdaBoostClassifier(verbose="yes"), TypeError, "verbose must be an int >= 0 or a bool"),
    (lambda: EBBoostClassifier(lam=np.inf), ValueError, r"lam must be in \[0, inf\), got inf"),
    (lambda: SABoostClassifier(gamma=0), ValueError, r"gamma must be in \(0, inf\), got 0"),
    (lambda: SABoostClassifier(schedule=None), ValueError, r"schedule must be one of \['inverse', 'power', "),
    (lambda: QuadBoostClassifier(penalty="l3"), ValueError, r"penalty must be one of \[None, 'l1', 'l2', 'linf'\]"),
    (lambda: QuadBoostClassifier(reweight_every=2.5), TypeError, "reweight_every must be an int >= 1 or None"),
    (lambda: QuadBoostClassifier(reweight_at_end=1), TypeError, "reweight_at_end must be a bool, got 1"),
    (lambda: LazyBoostClassifier(feature_rank=True), TypeError, "feature_rank must be an int >= 1, got True"),
    (lambda: AdaBoostClassifier(random_state=-1), ValueError, r"random_state must be None, an int in \[0, 2\*\*32"),
])
def test_messages_name_the_parameter_the_value_and_the_range(make, err, match):
    with pytest.raises(err, match=match):
        make().fit(X, y)
