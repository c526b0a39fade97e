"""What users can rely on (docs/guarantees.md): any number of classes, memory checked up front,
Ctrl-C answered at once with the estimator left as it was."""
import _thread
import signal
import threading
import time
import warnings

import numpy as np
import pytest
from sklearn.ensemble import AdaBoostClassifier as SkAdaBoost
from sklearn.tree import DecisionTreeClassifier

import fastboost._driver as driver
from fastboost import AdaBoostClassifier, VadaBoostClassifier
from fastboost._types import MAX_CLASSES
from fastboost.datasets import make_twonorm


def many_classes(K, seed):
    """4 K rows of K classes with unequal frequencies (no tied splits), the last class on half the rows;
    integer features with fewer than 255 values, so the bins are exact and the stumps are scikit-learn's."""
    rng = np.random.default_rng(seed)
    n = 4 * K
    y = rng.choice(K, size=n, p=rng.dirichlet(np.ones(K)))
    y[: n // 2] = K - 1
    y[n // 2: n // 2 + K] = np.arange(K)  # every class present
    X = np.column_stack([y // 5, (y * 37) % 251, rng.integers(0, 200, n)]).astype(float)
    return X, y


@pytest.mark.parametrize("K", [300, 1000])
def test_many_classes_give_scikit_learns_samme_predictions(K):
    X, y = many_classes(K, K)
    ours = AdaBoostClassifier(n_estimators=15, criterion="gini").fit(X, y)
    sk = SkAdaBoost(DecisionTreeClassifier(max_depth=1), n_estimators=15, random_state=0).fit(X, y)
    assert ours.n_estimators_ == len(sk.estimators_) == 15
    np.testing.assert_array_equal(ours.predict(X), sk.predict(X))
    np.testing.assert_allclose(2 * ours.estimator_weights_, sk.estimator_weights_, rtol=1e-9)
    assert ours.decision_function(X).shape == (len(y), K)
    assert np.all(np.isin(ours.predict(X), ours.classes_))


def test_many_classes_with_trees_and_validation():
    X, y = many_classes(300, 1)
    model = AdaBoostClassifier(n_estimators=10, max_depth=2, validation_fraction=0.25, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # classes with one row cannot be stratified
        try:
            model.fit(X, y)
        except ValueError as e:  # stratification needs two rows per class: a clear error is fine
            assert "validation_fraction" in str(e)
            return
    assert model.predict(X).dtype == y.dtype
    staged = list(model.staged_predict(X))
    np.testing.assert_array_equal(staged[-1], model.predict(X))


def test_more_classes_than_the_class_index_holds_is_a_clear_error():
    y = np.arange(MAX_CLASSES + 1)
    X = (y % 7).astype(float)[:, None]
    with pytest.raises(ValueError, match=f"at most {MAX_CLASSES} classes; y has {MAX_CLASSES + 1}"):
        AdaBoostClassifier(n_estimators=2).fit(X, y)


def test_memory_is_checked_before_the_first_round(monkeypatch):
    X, y = make_twonorm(2000, random_state=0)
    model = AdaBoostClassifier(n_estimators=5).fit(X, y)
    before = model.rounds_.tobytes()
    monkeypatch.setattr(driver, "available_memory", lambda: 10_000)
    with pytest.raises(MemoryError, match=r"needs about .* of working memory, more than the .* available.*max_bins"):
        model.set_params(max_depth=3).fit(X, y)
    assert model.rounds_.tobytes() == before and model.nodes_ is None  # the previous model is kept


def test_working_memory_counts_the_class_histograms():
    config = driver.make_config(max_depth=3, n_classes=1000)
    parts = driver.working_memory(10_000, 50, 256, config, 0, 64)
    hist = next(v for k, v in parts.items() if k.startswith("tree histograms"))
    assert hist == 2 * 4 * 50 * 256 * 1001 * 8


@pytest.mark.parametrize("fields", [{}, {"trim_rate": 0.9}, {"sample_rows": True},
                                    {"sample_rows": True, "bootstrap": True},
                                    {"max_depth": 3, "sample_rows": True, "bootstrap": True}])
def test_working_memory_counts_every_per_row_array(fields):
    """The estimate's per-row part is at least what make_workspace allocates per row (row sampling and
    bootstrap included)."""
    n, d, n_bins = 1000, 5, 16
    config = driver.make_config(**{"n_classes": 2, "missing_code": n_bins - 1, **fields})
    parts = driver.working_memory(n, d, n_bins, config, 0, 8)
    estimate = next(v for k, v in parts.items() if k.startswith("per-row arrays"))
    ws = driver.make_workspace(np.zeros(n, np.uint16), np.full(n, 1.0 / n), d, n_bins, config)

    def per_row(x):
        if isinstance(x, tuple):
            return sum(per_row(v) for v in x)
        return x.nbytes if isinstance(x, np.ndarray) and x.ndim == 1 and x.shape[0] == n else 0

    assert estimate >= per_row(ws)


def test_ctrl_c_returns_at_once_and_keeps_the_previous_model():
    X, y = make_twonorm(300_000, random_state=0)
    model = VadaBoostClassifier(n_estimators=4).fit(X[:500], y[:500])
    before = (model.rounds_.tobytes(), model.n_features_in_, model.n_estimators_)
    fired = []
    done = threading.Event()

    def interrupt():
        # Ctrl-C until the fit answers (a KeyboardInterrupt that lands in a finalizer run by the
        # garbage collector is swallowed by Python itself)
        while not done.wait(1.0 if not fired else 0.5):
            fired.append(time.perf_counter())
            _thread.interrupt_main()

    model.set_params(n_estimators=10 ** 7)
    # Python's own Ctrl-C handler, as an interactive session has: a test run started in the background
    # by a non-interactive shell inherits SIGINT ignored, and interrupt_main then does nothing
    previous_handler = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Thread(target=interrupt, daemon=True)
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            model.fit(X, y)
        answered = time.perf_counter() - fired[-1]
    finally:
        done.set()
        timer.join()
        try:
            time.sleep(0.05)  # a press fired just as the fit answered lands here
        except KeyboardInterrupt:
            pass
        signal.signal(signal.SIGINT, previous_handler)
    assert answered < 2.0, answered  # compiled calls last about driver.CALL_SECONDS
    assert (model.rounds_.tobytes(), model.n_features_in_, model.n_estimators_) == before
