"""Estimator behaviour: labels, input kinds, staged output, persistence, threads, the demo."""
import pickle
import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from naive import assert_rounds_equal

from fastboost import AdaBoostClassifier, VadaBoostClassifier
from fastboost.datasets import make_twonorm

ESTIMATORS = [AdaBoostClassifier, VadaBoostClassifier]


@pytest.fixture(scope="module")
def data():
    X, y = make_twonorm(3000, random_state=0)
    return X[:2000], y[:2000], X[2000:], y[2000:]


@pytest.fixture(params=ESTIMATORS, ids=lambda c: c.__name__)
def Est(request):
    return request.param


@pytest.mark.parametrize(
    "labels",
    [np.array(["cat", "dog"]), np.array([0, 1]), np.array([-1, 1]), np.array([False, True]), np.array([3.0, 7.0])],
    ids=["str", "01", "pm1", "bool", "float"],
)
def test_any_two_labels_give_the_same_model(Est, data, labels):
    X, y, Xt, _ = data
    ref = Est(n_estimators=20).fit(X, y)
    model = Est(n_estimators=20).fit(X, labels[(y > 0).astype(int)])
    np.testing.assert_array_equal(model.classes_, labels)
    assert_rounds_equal(model.rounds_, ref.rounds_)
    np.testing.assert_array_equal(model.predict(Xt), labels[(ref.predict(Xt) > 0).astype(int)])


def test_unsorted_labels_map_to_sorted_classes(Est, data):
    X, y, Xt, _ = data
    labels = np.where(y > 0, "b", "a")
    model = Est(n_estimators=10).fit(X, labels)
    assert list(model.classes_) == ["a", "b"]
    pred = model.predict(Xt)
    margin = model.decision_function(Xt)
    np.testing.assert_array_equal(pred == "b", margin > 0)


_LABEL_DTYPES = st.sampled_from([np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
                                  np.bool_])


def _few_values(dt):
    """Arrays of dtype dt whose values lie within 5 of a drawn value (any of the dtype's, its extremes too)."""
    if dt == np.bool_:
        return hnp.arrays(dt, st.integers(1, 60))
    info = np.iinfo(dt)
    return st.integers(int(info.min), int(info.max) - 5).flatmap(
        lambda lo: hnp.arrays(dt, st.integers(1, 60), elements=st.integers(lo, lo + 5)))


@settings(max_examples=300, deadline=None)
@given(labels=st.one_of(_LABEL_DTYPES.flatmap(lambda dt: hnp.arrays(dt, st.integers(1, 60))),
                        _LABEL_DTYPES.flatmap(_few_values)))
def test_counted_classes_equal_numpys_unique(labels):
    """Integer and boolean labels get their classes and indices by counting when they span few values (near
    any dtype's extremes, uint64 past the signed range included), else by np.unique: the arrays and dtypes
    np.unique gives."""
    from fastboost._validation import classes_and_indices

    classes, index = classes_and_indices(labels)
    ref_classes, ref_index = np.unique(labels, return_inverse=True)
    assert classes.dtype == ref_classes.dtype and index.dtype == ref_index.dtype
    np.testing.assert_array_equal(classes, ref_classes)
    np.testing.assert_array_equal(index, ref_index)


def test_twonorm_accuracy_near_paper(Est, data):
    """Stump boosting on twonorm reaches about 3-4% test error (the paper: 3.2% for AdaBoost)."""
    X, y = make_twonorm(8000, random_state=1)
    model = Est(n_estimators=300).fit(X[:4000], y[:4000])
    assert 1 - model.score(X[4000:], y[4000:]) < 0.05


def test_input_kinds_give_identical_models(Est, data, tmp_path):
    X, y, Xt, _ = data
    X32 = X.astype(np.float32)
    ref = Est(n_estimators=15).fit(X32, y)
    mm = np.lib.format.open_memmap(tmp_path / "X.npy", mode="w+", dtype=np.float32, shape=X32.shape)
    mm[:] = X32
    mm.flush()
    variants = {
        "float64": X32.astype(np.float64),
        "fortran": np.asfortranarray(X32),
        "memmap": np.load(tmp_path / "X.npy", mmap_mode="r"),
        "non-contiguous": np.repeat(X32, 2, axis=1)[:, ::2],
    }
    pd = pytest.importorskip("pandas")
    variants["dataframe"] = pd.DataFrame(X32, columns=[f"f{j}" for j in range(X.shape[1])])
    for name, Xv in variants.items():
        model = Est(n_estimators=15).fit(Xv, y)
        assert_rounds_equal(model.rounds_, ref.rounds_, err_msg=name)
        np.testing.assert_array_equal(model.decision_function(Xv), ref.decision_function(X32), err_msg=name)


def test_integer_input(Est):
    rng = np.random.default_rng(0)
    Xi = rng.integers(0, 10, size=(500, 4))
    y = (Xi[:, 0] + rng.integers(0, 3, 500) > 5).astype(int)
    model = Est(n_estimators=10).fit(Xi, y)
    np.testing.assert_array_equal(model.decision_function(Xi), model.decision_function(Xi.astype(float)))


def test_dataframe_feature_names(Est, data):
    pd = pytest.importorskip("pandas")
    X, y, Xt, _ = data
    cols = [f"x{j}" for j in range(X.shape[1])]
    model = Est(n_estimators=5).fit(pd.DataFrame(X, columns=cols), y)
    np.testing.assert_array_equal(model.feature_names_in_, cols)
    with pytest.raises(ValueError, match="feature names should match"):
        model.predict(pd.DataFrame(Xt, columns=cols[::-1]))


def test_staged_outputs_end_at_the_final_model(Est, data):
    X, y, Xt, yt = data
    model = Est(n_estimators=25).fit(X, y)
    staged = list(model.staged_decision_function(Xt))
    assert len(staged) == model.n_estimators_
    # (stumps: decision_function sums step tables, the staged values stump by stump: equal up to rounding)
    np.testing.assert_allclose(staged[-1], model.decision_function(Xt), rtol=1e-12,
                               atol=1e-14 * np.abs(model.estimator_weights_).sum())
    # each stage adds exactly one stump: differences are +-alpha_t
    diffs = np.abs(np.diff(np.vstack([np.zeros(len(Xt))] + staged), axis=0))
    np.testing.assert_allclose(diffs, np.repeat(model.estimator_weights_[:, None], len(Xt), 1), rtol=1e-9)
    np.testing.assert_array_equal(list(model.staged_predict(Xt))[-1], model.predict(Xt))
    np.testing.assert_allclose(list(model.staged_predict_proba(Xt))[-1], model.predict_proba(Xt))
    scores = list(model.staged_score(Xt, yt))
    assert scores[-1] == model.score(Xt, yt)


@pytest.mark.parametrize("params", [{"leaf": "real"}, {"leaf": "real", "max_depth": 2}, {"algorithm": "vadaboost"}])
def test_one_vs_rest_stages_advance_every_class_model_together(params):
    """Stage t of a one-vs-rest model is each class's model after its first t rounds, or all of them once it
    stopped (VadaBoost's setosa model stops after one perfect stump): the class models' own staged margins side
    by side, bit for bit; the last stage is the final model."""
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True)
    params = dict(params)
    Est = VadaBoostClassifier if params.pop("algorithm", None) else AdaBoostClassifier
    model = Est(30, **params).fit(X, y)
    counts = [m.n_estimators_ for m in model.estimators_]
    staged = list(model.staged_decision_function(X))
    assert len(staged) == max(counts)
    if Est is VadaBoostClassifier:
        assert counts[0] == 1 < max(counts)
    own = [list(m.staged_decision_function(X)) for m in model.estimators_]
    for t, got in enumerate(staged):
        np.testing.assert_array_equal(got, np.column_stack([s[min(t, len(s) - 1)] for s in own]))
    np.testing.assert_allclose(staged[-1], model.decision_function(X), rtol=1e-12, atol=1e-12)
    labels = list(model.staged_predict(X))
    assert all(np.array_equal(lab, model.classes_[np.argmax(F, axis=1)]) for lab, F in zip(labels, staged))
    np.testing.assert_array_equal(labels[-1], model.predict(X))
    proba = list(model.staged_predict_proba(X))
    np.testing.assert_allclose(proba[-1], model.predict_proba(X), rtol=1e-9, atol=1e-12)
    assert list(model.staged_score(X, y))[-1] == model.score(X, y)


def test_predict_proba(Est, data):
    X, y, Xt, _ = data
    model = Est(n_estimators=20).fit(X, y)
    proba = model.predict_proba(Xt)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert np.all((proba >= 0) & (proba <= 1))
    np.testing.assert_array_equal(model.classes_[proba.argmax(axis=1)], model.predict(Xt))
    np.testing.assert_allclose(np.log(proba), model.predict_log_proba(Xt))


@pytest.mark.parametrize("Real", [AdaBoostClassifier, VadaBoostClassifier])
def test_confidence_rated_leaves_give_real_adaboosts_probabilities(Real, data):
    """leaf="real", two classes: q = 1 / (1 + exp(-2 F)), as each class's model of a one-vs-rest fit is read, not
    F divided by the steps' total (every step is 1: the probabilities drew towards 1/2 as rounds were added, all
    within [0.47, 0.56] at 200 rounds). Staged and batched probabilities follow, and more rounds sharpen them."""
    from scipy.special import expit

    X, y, Xt, yt = data
    model = Real(n_estimators=60, max_depth=2, leaf="real").fit(X, y)
    F = model.decision_function(Xt)
    np.testing.assert_array_equal(model.predict_proba(Xt)[:, 1], expit(2.0 * F))
    staged = list(model.staged_predict_proba(Xt))
    np.testing.assert_allclose(staged[-1], model.predict_proba(Xt), rtol=1e-12, atol=1e-15)
    spread = [np.abs(p[:, 1] - 0.5).mean() for p in staged]
    assert spread[-1] > spread[5] > 0.05  # (with the steps' total the spread shrank)
    three = Real(n_estimators=20, max_depth=2, leaf="real", **({"multiclass": "ovr"} if Real is AdaBoostClassifier
                                                                else {})).fit(Xt, np.arange(Xt.shape[0]) % 3)
    part = three.estimators_[0]
    np.testing.assert_allclose(part.predict_proba(Xt)[:, 1], three._link(part.decision_function(Xt)), rtol=1e-15)


def test_pickle_round_trip_is_exact(Est, data, tmp_path):
    X, y, Xt, _ = data
    model = Est(n_estimators=30).fit(X, y)
    path = tmp_path / "model.pkl"
    path.write_bytes(pickle.dumps(model))
    loaded = pickle.loads(path.read_bytes())
    assert_rounds_equal(loaded.rounds_, model.rounds_)
    np.testing.assert_array_equal(loaded.decision_function(Xt), model.decision_function(Xt))
    np.testing.assert_array_equal(loaded.predict_proba(Xt), model.predict_proba(Xt))


@pytest.mark.parametrize("kw", [{}, {"criterion": "gini"}])
def test_thread_count_does_not_change_the_model(Est, kw):
    X, y = make_twonorm(20_000, random_state=3)
    X[::7, 3] = np.nan
    models = [Est(n_estimators=40, n_jobs=j, **kw).fit(X, y) for j in (1, 2)]
    assert_rounds_equal(models[0].rounds_, models[1].rounds_)
    np.testing.assert_array_equal(models[0].decision_function(X), models[1].decision_function(X))


def test_n_jobs_restores_numba_threads(Est, data):
    import numba

    X, y, _, _ = data
    before = numba.get_num_threads()
    Est(n_estimators=3, n_jobs=1).fit(X, y).predict(X)
    assert numba.get_num_threads() == before


def test_feature_importances(Est):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 5))
    y = np.where(X[:, 2] + 0.2 * X[:, 4] > 0, 1, -1)
    model = Est(n_estimators=30).fit(X, y)
    imp = model.feature_importances_
    assert imp.shape == (5,)
    np.testing.assert_allclose(imp.sum(), 1.0)
    assert imp.argmax() == 2
    expected = np.bincount(model.rounds_["feature"], weights=model.rounds_["alpha"], minlength=5)
    np.testing.assert_allclose(imp, expected / expected.sum())


def test_n_estimators_counts_kept_rounds(Est):
    """A perfect stump ends boosting: one kept round, finite alpha."""
    X = np.arange(20, dtype=float)[:, None]
    y = (X[:, 0] >= 10).astype(int)
    model = Est(n_estimators=50).fit(X, y)
    assert model.n_estimators_ == 1
    assert model.rounds_["threshold"][0] == 9.5
    assert np.isfinite(model.estimator_weights_[0]) and model.estimator_weights_[0] > 5
    np.testing.assert_array_equal(model.predict(X), y)


def test_sample_weight_zero_equals_removing_rows(Est, data):
    X, y, Xt, _ = data
    sw = np.ones(len(y))
    sw[::3] = 0
    a = Est(n_estimators=20).fit(X, y, sample_weight=sw)
    b = Est(n_estimators=20).fit(X[sw > 0], y[sw > 0])
    np.testing.assert_array_equal(a.rounds_[["feature", "bin", "threshold", "left", "right"]],
                                  b.rounds_[["feature", "bin", "threshold", "left", "right"]])
    np.testing.assert_allclose(a.decision_function(Xt), b.decision_function(Xt), rtol=1e-10)


def test_integer_sample_weight_equals_repeating_rows(Est, data):
    X, y, Xt, _ = data
    reps = np.random.default_rng(0).integers(1, 4, len(y))
    a = Est(n_estimators=20).fit(X, y, sample_weight=reps)
    b = Est(n_estimators=20).fit(np.repeat(X, reps, axis=0), np.repeat(y, reps))
    np.testing.assert_array_equal(a.rounds_["feature"], b.rounds_["feature"])
    np.testing.assert_allclose(a.decision_function(Xt), b.decision_function(Xt), rtol=1e-8)


def test_fit_makes_no_full_float64_copy_of_float32_X(Est):
    """Binning goes column by column / chunk by chunk: NumPy's peak allocation during fit stays
    well below one float64 copy of X."""
    X, y = make_twonorm(200_000, random_state=0)
    X = X.astype(np.float32)
    Est(n_estimators=2).fit(X[:1000], y[:1000])  # compile outside the trace
    tracemalloc.start()
    try:
        Est(n_estimators=2).fit(X, y)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 2 * X.nbytes, (peak, X.nbytes)


def test_verbose_reports_progress(data, capsys):
    X, y, _, _ = data
    AdaBoostClassifier(n_estimators=25, verbose=1).fit(X, y)
    out = capsys.readouterr().out
    assert "round 10/25" in out and "round 25/25" in out


def test_demo_command_runs(capsys):
    from fastboost.cli import main

    assert main(["demo", "--n-train", "2000", "--n-test", "2000", "--rounds", "20"]) == 0
    out = capsys.readouterr().out
    assert "AdaBoost" in out and "VadaBoost" in out and "test error" in out
    errors = [float(line.split("%")[0].split()[-1]) for line in out.splitlines()
              if line.endswith(tuple("0123456789")) and "%" in line]
    assert len(errors) == 4 and all(0 < e < 15 for e in errors)


def test_scaling_sample_weight_changes_nothing(Est, data):
    X, y, Xt, _ = data
    sw = np.random.default_rng(1).uniform(0.5, 2.0, len(y))
    a = Est(n_estimators=20).fit(X, y, sample_weight=sw)
    b = Est(n_estimators=20).fit(X, y, sample_weight=sw / sw.sum())
    np.testing.assert_array_equal(a.rounds_[["feature", "bin", "threshold", "left", "right"]],
                                  b.rounds_[["feature", "bin", "threshold", "left", "right"]])
    np.testing.assert_allclose(a.decision_function(Xt), b.decision_function(Xt), rtol=1e-9)


def test_huge_n_estimators_allocates_nothing_up_front(Est):
    X = np.arange(20, dtype=float)[:, None]
    y = (X[:, 0] >= 10).astype(int)
    assert Est(n_estimators=10**12).fit(X, y).n_estimators_ == 1


def test_log_cost_keeps_decreasing_after_the_cost_underflows():
    """rounds_["cost"] is exp(rounds_["log_cost"]); the log goes on decreasing where the cost itself
    has underflowed to 0 (AdaBoost's loss on nearly separable data after thousands of rounds)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1000, 2))
    y = (X[:, 0] > 0) & (X[:, 1] > 0)
    model = AdaBoostClassifier(n_estimators=12_000).fit(X, y)
    r = model.rounds_
    np.testing.assert_array_equal(r["cost"], np.exp(r["log_cost"]))
    assert np.all(np.isfinite(r["log_cost"])) and np.all(np.diff(r["log_cost"]) < 0)
    assert r["cost"][-1] == 0.0  # the plain cost no longer tells rounds apart here
    assert np.all(np.isfinite(model.estimator_weights_))


def test_identical_partitions_tie_to_the_lowest_feature():
    """Two features that split the rows identically (one with 2 bins, one with 60) have the same
    criterion up to summation order; the lowest feature index must win every time."""
    for seed in range(40):
        rng = np.random.default_rng(seed)
        group = np.repeat([0, 1], 120)
        sub = group * 100 + np.tile(np.repeat(np.arange(30), 4), 2)
        label = np.where(np.tile([0, 0, 0, 1], 60) == 0, group, 1 - group)
        sw = np.where(np.tile([0, 0, 0, 1], 60) == 0, 0.5 + 0.5 * rng.random(240), 0.5 * rng.random(240))
        perm = rng.permutation(240)
        X = np.c_[group, sub].astype(float)[perm]
        model = AdaBoostClassifier(n_estimators=1).fit(X, label[perm], sample_weight=sw[perm])
        assert model.rounds_["feature"][0] == 0, seed


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs the fork start method")
def test_import_leaves_fork_based_multiprocessing_working(tmp_path):
    """Importing fastboost does not start numba's OpenMP pool, so forked workers can fit."""
    import subprocess
    import sys

    script = (
        "import multiprocessing as mp, numpy as np\n"
        "import fastboost\n"
        "X = np.random.default_rng(0).normal(size=(2000, 5)); y = X[:, 0] > 0\n"
        "def child(_):\n"
        "    return fastboost.AdaBoostClassifier(5).fit(X, y).score(X, y)\n"
        "with mp.get_context('fork').Pool(2) as pool:\n"
        "    print(min(pool.map(child, range(2))))\n"
    )
    # cwd: not the checkout, so the child imports the installed package (and its kernel cache)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                         cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    assert float(out.stdout) > 0.9


def test_one_vs_rest_of_a_frame_predicts_without_feature_name_warnings():
    """A one-vs-rest model fitted on a DataFrame predicts a DataFrame without warnings (each class's model was
    handed the checked array: K copies of "X does not have valid feature names" a call), the same scores."""
    import warnings

    pd = pytest.importorskip("pandas")
    from fastboost.datasets import make_waveform

    X, y = make_waveform(300, random_state=0)
    frame = pd.DataFrame(X, columns=[f"v{j}" for j in range(X.shape[1])])
    model = VadaBoostClassifier(5).fit(frame, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        scores = model.decision_function(frame)
        model.predict(frame), model.predict_proba(frame)
    np.testing.assert_array_equal(scores, np.column_stack([m.decision_function(frame) for m in model.estimators_]))
