"""fastboost.dask on a real distributed.LocalCluster (2 worker processes on loopback).

The Dask fit must give the single-machine model (same stumps, alpha to 1e-9) from
unevenly partitioned data, move no O(rows) data to the client, and fail clearly when
a worker is lost. Skipped (except the import test) without the ``dask`` extra.
"""
import os
import pickle
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import HealthCheck, event, example, given, note, settings
from hypothesis import strategies as st
from sklearn.base import clone

from fastboost import (
    AdaBoostClassifier,
    EBBoostClassifier,
    LazyBoostClassifier,
    QuadBoostClassifier,
    SABoostClassifier,
    VadaBoostClassifier,
)
from fastboost._binning import BinMapper
from fastboost._validation import as_distribution
from fastboost.datasets import make_twonorm, make_waveform

try:  # tests/ as a package or as a plain directory on sys.path
    from ._comm_bytes import client_comm_bytes
except ImportError:
    from _comm_bytes import client_comm_bytes

try:
    import dask
    import dask.array as da
    import distributed

    from fastboost import dask as fbd
except ImportError:  # the dask extra is not installed: only the import test runs
    distributed = None

needs_dask = pytest.mark.skipif(distributed is None, reason="needs the dask extra: pip install 'fastboost[dask]'")
slow = pytest.mark.slow  # the default run keeps one case of each kind; ``pytest -m slow`` runs the others


def some_slow(cases, quick):
    """``cases`` ({id: a tuple of parameter values}) as pytest parameters, those not in ``quick`` marked slow."""
    return [pytest.param(*values, id=name, marks=() if name in quick else slow) for name, values in cases.items()]

CHUNKS = (3000, 11000, 6000)  # three uneven row partitions on two workers
EXACT = ("feature", "bin", "threshold", "missing_left", "left", "right")
CLOSE = ("alpha", "error", "learner_error", "edge", "cost")


def test_import_without_dask_names_the_extra(tmp_path):
    code = textwrap.dedent("""
        import sys
        sys.modules["dask"] = None  # as if Dask were not installed
        sys.modules["distributed"] = None
        import fastboost
        try:
            import fastboost.dask
        except ImportError as e:
            print(e)
        else:
            raise SystemExit("fastboost.dask imported without dask")
    """)
    # cwd: not the checkout, so the child imports the installed package (and its kernel cache), as the test does
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=tmp_path).stdout
    assert "pip install 'fastboost[dask]'" in out


# ----------------------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def client():
    if distributed is None:
        pytest.skip("needs the dask extra")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as c:
        yield c


@pytest.fixture(scope="module")
def data():
    X, y = make_twonorm(sum(CHUNKS), 10, random_state=0)
    return X, y


@pytest.fixture(scope="module")
def ddata(data):
    X, y = data
    return da.from_array(X, chunks=(CHUNKS, 10)), da.from_array(y, chunks=(CHUNKS,))


def assert_rounds_identical(a, b):
    assert a.dtype == b.dtype and a.shape == b.shape
    for name in a.dtype.names:  # field by field: NaN equals NaN (val_error)
        np.testing.assert_array_equal(a[name], b[name], err_msg=name)


def assert_same_rounds(a, b):
    """The same splits; alpha, errors and costs to rounding."""
    assert a.shape == b.shape, (a.shape, b.shape)
    for name in EXACT:
        np.testing.assert_array_equal(a[name], b[name], err_msg=name)
    for name in CLOSE:
        np.testing.assert_allclose(a[name], b[name], rtol=1e-9, atol=1e-15, err_msg=name)


def first_different_split(dask_model, model):
    """The first round whose stump or tree differs between the two models in a split or a leaf's output or
    class (None: none does)."""
    a, b = dask_model.rounds_, model.rounds_
    assert a.shape == b.shape, (a.shape, b.shape)
    differ = np.zeros(a.shape[0], bool)
    for name in ("feature", "bin", "missing_left", "left", "right"):
        differ |= a[name] != b[name]
    if model.nodes_ is not None:
        for name in ("feature", "bin", "missing_left", "left", "right", "class_"):
            differ |= (dask_model.nodes_[name] != model.nodes_[name]).any(axis=1)
    return int(np.argmax(differ)) if differ.any() else None


def assert_same_cover(dask_model, model, exact):
    """The same cover_ (each node's summed sample weight), per class's model: bit for bit where the sums are
    exact (integer weights), else to rounding (the partitions' sums are added in partition order)."""
    for a, b in zip(getattr(dask_model, "estimators_", [dask_model]), getattr(model, "estimators_", [model])):
        assert a.cover_.shape == b.cover_.shape
        if exact:
            assert a.cover_.tobytes() == b.cover_.tobytes()
        else:
            np.testing.assert_allclose(a.cover_, b.cover_, rtol=1e-12)


def assert_same_model(dask_model, model):
    assert_same_rounds(dask_model.rounds_, model.rounds_)
    np.testing.assert_allclose(dask_model.initial_cost_, model.initial_cost_, rtol=1e-12)
    assert dask_model.stopped_by_rule_ == model.stopped_by_rule_
    np.testing.assert_array_equal(dask_model.classes_, model.classes_)
    assert dask_model.n_features_in_ == model.n_features_in_


# ----------------------------------------------------------------------------- the same model
CASES = [
    (fbd.DaskAdaBoostClassifier if distributed else None, AdaBoostClassifier, {}),
    (fbd.DaskVadaBoostClassifier if distributed else None, VadaBoostClassifier, {"lam": 0.5}),
    (fbd.DaskQuadBoostClassifier if distributed else None, QuadBoostClassifier,
     {"penalty": "l2", "lam": 0.1, "reweight_every": 10}),
    (fbd.DaskEBBoostClassifier if distributed else None, EBBoostClassifier, {"lam": 0.3}),
    (fbd.DaskLazyBoostClassifier if distributed else None, LazyBoostClassifier, {}),
    (fbd.DaskSABoostClassifier if distributed else None, SABoostClassifier, {"gamma": 1.5}),
    (fbd.DaskQuadBoostClassifier if distributed else None, QuadBoostClassifier, {"penalty": "l1", "lam": 0.002}),
]


CASE_IDS = ["ada", "vada", "quad-l2-reweight", "eb", "lazy", "sa", "quad-l1"]


@needs_dask
@pytest.mark.parametrize("DaskEst, Est, kw", some_slow(dict(zip(CASE_IDS, CASES)), quick=["ada", "quad-l2-reweight"]))
def test_dask_fit_equals_single_machine(client, data, ddata, DaskEst, Est, kw):
    X, y = data
    Xd, yd = ddata
    model = Est(n_estimators=40, **kw).fit(X, y)
    dask_model = DaskEst(n_estimators=40, **kw).fit(Xd, yd)
    assert_same_model(dask_model, model)
    if hasattr(model, "objective_"):
        np.testing.assert_allclose(dask_model.objective_, model.objective_, rtol=1e-9)
    # at most 200 000 rows: the edges come from every row, as the single-machine mapper's
    p = np.full(X.shape[0], 1.0 / X.shape[0])
    np.testing.assert_array_equal(dask_model.bin_mapper_.thresholds_, BinMapper(255).fit(X, p).thresholds_)
    # predictions: NumPy and Dask input, and the single-machine model
    Xt, _ = make_twonorm(3000, 10, random_state=1)
    Xtd = da.from_array(Xt, chunks=((1000, 0, 2000), 10))
    np.testing.assert_array_equal(dask_model.predict(Xt), model.predict(Xt))
    np.testing.assert_array_equal(dask_model.predict(Xtd).compute(), dask_model.predict(Xt))
    margin = dask_model.decision_function(Xt)
    np.testing.assert_array_equal(dask_model.decision_function(Xtd).compute(), margin)
    np.testing.assert_allclose(margin, model.decision_function(Xt), rtol=1e-9, atol=1e-12)  # alpha to rounding
    proba = dask_model.predict_proba(Xtd)
    assert proba.shape == (3000, 2)
    np.testing.assert_array_equal(proba.compute(), dask_model.predict_proba(Xt))


# ----------------------------------------------------------------------------- trees, K classes, validation
ODD_CHUNKS = (2000, 0, 1, 9000, 5999)  # uneven, an empty partition, a one-row one; the first holds one class


@pytest.fixture(scope="module")
def odd_data():
    """twonorm (binary) and waveform (3 classes) ordered so that partition 0 holds a single class, with
    sample weights, and their Dask versions in ODD_CHUNKS."""
    out = {}
    for name, (X, y) in {"binary": make_twonorm(sum(ODD_CHUNKS), 10, random_state=4),
                         "three": make_waveform(sum(ODD_CHUNKS), random_state=4)}.items():
        first = np.flatnonzero(y == y[0])[:ODD_CHUNKS[0]]
        order = np.concatenate([first, np.setdiff1d(np.arange(y.shape[0]), first)])
        X, y = X[order], y[order]
        sw = np.random.default_rng(0).uniform(0.2, 3.0, y.shape[0])
        chunks = (ODD_CHUNKS,)
        out[name] = (X, y, sw, da.from_array(X, chunks=(ODD_CHUNKS, -1)), da.from_array(y, chunks=chunks),
                     da.from_array(sw, chunks=chunks))
    X, y, sw = out["binary"][:3]
    X = X.copy()
    X[:, 3:] = 1.0  # seven constant columns: a round that draws only those learns nothing from them
    out["binary-constant"] = (X, y, sw, da.from_array(X, chunks=(ODD_CHUNKS, -1)), *out["binary"][4:])
    return out


def assert_same_trees(dask_model, model):
    """assert_same_model, plus every tree's nodes (splits exact, leaf values to 1e-9), for each class's model."""
    if hasattr(model, "estimators_"):
        assert len(dask_model.estimators_) == len(model.estimators_)
        for a, b in zip(dask_model.estimators_, model.estimators_):
            assert_same_trees(a, b)
        return
    assert_same_model(dask_model, model)
    if model.nodes_ is not None:
        for name in ("feature", "bin", "missing_left", "left", "right", "class_"):
            np.testing.assert_array_equal(dask_model.nodes_[name], model.nodes_[name], err_msg=name)
        np.testing.assert_allclose(dask_model.nodes_["value"], model.nodes_["value"], rtol=1e-9, atol=1e-12)
    if hasattr(model, "validation_errors_"):
        np.testing.assert_allclose(dask_model.validation_errors_, model.validation_errors_, rtol=1e-9, atol=1e-15)
        assert dask_model.stopped_early_ == model.stopped_early_


LEARNER_CASES = {
    "ada-depth3": ("binary", "AdaBoostClassifier", {"max_depth": 3}),
    "ada-real-depth2": ("binary", "AdaBoostClassifier", {"max_depth": 2, "leaf": "real"}),
    "vada-depth3-minleaf": ("binary", "VadaBoostClassifier", {"max_depth": 3, "min_samples_leaf": 20, "lam": 0.3}),
    "sa-depth2-minweight": ("binary", "SABoostClassifier", {"max_depth": 2, "min_weight_fraction_leaf": 0.01}),
    "quad-depth2-reweight": ("binary", "QuadBoostClassifier", {"max_depth": 2, "reweight_every": 4, "lam": 0.01}),
    "samme-stumps": ("three", "AdaBoostClassifier", {}),
    "samme-depth3": ("three", "AdaBoostClassifier", {"max_depth": 3}),
    "ovr-vada": ("three", "VadaBoostClassifier", {"lam": 0.2}),
    "ovr-eb": ("three", "EBBoostClassifier", {"lam": 0.2}),
    "ovr-ada-real": ("three", "AdaBoostClassifier", {"max_depth": 2, "leaf": "real"}),
    "balanced": ("three", "AdaBoostClassifier", {"max_depth": 2, "class_weight": "balanced"}),
    "monotone-depth3": ("binary", "AdaBoostClassifier", {"max_depth": 3, "monotone_constraints": [1, -1] + [0] * 8}),
    "monotone-stumps": ("binary", "AdaBoostClassifier", {"monotone_constraints": [1, -1] + [0] * 8}),
    "monotone-samme": ("three", "AdaBoostClassifier", {"max_depth": 2, "monotone_constraints": [0] * 4 + [1] * 17}),
    # the re-weighting pass keeps every weight >= 0 under the constraints, as the single machine's
    "quad-monotone-depth2": ("binary", "QuadBoostClassifier", {"max_depth": 2, "lam": 0.001, "reweight_every": 3,
                                                               "monotone_constraints": [1, -1] + [0] * 8}),
}


@needs_dask
@pytest.mark.parametrize("case, weighted", some_slow(
    {f"{case}-{'weighted' if weighted else 'unweighted'}": (case, weighted)
     for case in LEARNER_CASES for weighted in (False, True)},
    quick=["ada-depth3-weighted", "samme-depth3-unweighted", "ovr-vada-unweighted", "monotone-depth3-unweighted",
           "monotone-stumps-unweighted", "quad-monotone-depth2-unweighted"]))
def test_dask_trees_and_classes_equal_single_machine(client, odd_data, case, weighted):
    """Trees (every leaf kind, leaf-size limits), SAMME and one-vs-rest on uneven partitions (one empty, one
    of one row, one of a single class), with and without sample weights: the single-machine model."""
    import fastboost

    which, name, kw = LEARNER_CASES[case]
    X, y, sw, Xd, yd, swd = odd_data[which]
    Est, DaskEst = getattr(fastboost, name), getattr(fbd, "Dask" + name)
    model = Est(n_estimators=12, **kw).fit(X, y, sample_weight=sw if weighted else None)
    dask_model = DaskEst(n_estimators=12, **kw).fit(Xd, yd, sample_weight=swd if weighted else None)
    assert_same_trees(dask_model, model)
    np.testing.assert_allclose(dask_model.predict_proba(X[:500]), model.predict_proba(X[:500]), rtol=1e-9,
                               atol=1e-12)
    assert_same_cover(dask_model, model, exact=not weighted and "class_weight" not in kw)  # (sums of ones: exact)
    phi = dask_model.predict_contrib(X[:300])
    np.testing.assert_allclose(phi, model.predict_contrib(X[:300]), rtol=1e-9, atol=1e-9)
    lazy = dask_model.predict_contrib(da.from_array(X[:300], chunks=((100, 0, 200), -1)))  # an empty block too
    assert isinstance(lazy, da.Array) and lazy.shape == phi.shape
    np.testing.assert_array_equal(lazy.compute(), phi)
    if pytest.importorskip("matplotlib"):  # the mean |contribution| bars of Dask rows: those of the same rows in memory
        import matplotlib

        matplotlib.use("Agg")
        from fastboost.plot import plot_importance

        widths = [[b.get_width() for b in plot_importance(dask_model, X=rows, kind="contrib").patches]
                  for rows in (da.from_array(X[:300], chunks=((100, 0, 200), -1)), X[:300])]
        np.testing.assert_allclose(widths[0], widths[1], rtol=1e-12)
    if which == "three" and not weighted:  # Dask input: K columns, empty blocks too
        Xt = da.from_array(X[:500], chunks=((200, 0, 300), -1))
        np.testing.assert_array_equal(dask_model.predict_proba(Xt).compute(), dask_model.predict_proba(X[:500]))
        np.testing.assert_array_equal(dask_model.decision_function(Xt).compute(),
                                      dask_model.decision_function(X[:500]))
        np.testing.assert_array_equal(dask_model.predict(Xt).compute(), dask_model.predict(X[:500]))


SAMPLING_CASES = {
    "stumps-subsample-colsample": ("binary", "AdaBoostClassifier",
                                   {"subsample": 0.5, "colsample_bytree": 0.6, "colsample_bynode": 0.7}),
    "samme-depth2-bootstrap": ("three", "AdaBoostClassifier",
                               {"max_depth": 2, "bootstrap": True, "subsample": 0.7, "colsample_bytree": 0.5}),
    "stumps-bootstrap": ("binary", "AdaBoostClassifier", {"bootstrap": True}),
    # a few rows a round: some rounds' stumps are rejected and learnt again from every row (n_seen: every row)
    "stumps-rejected-then-every-row": ("binary", "AdaBoostClassifier", {"subsample": 0.001, "n_estimators": 30}),
    # rounds that draw only constant columns: rejected, then learnt from every feature (the fit went on)
    "stumps-constant-columns-drawn": ("binary-constant", "AdaBoostClassifier", {"colsample_bytree": 0.2}),
    "depth2-constant-columns-bynode": ("binary-constant", "AdaBoostClassifier",
                                       {"max_depth": 2, "colsample_bynode": 0.2}),
    "eb-subsample": ("binary", "EBBoostClassifier", {"subsample": 0.5, "lam": 0.2}),
    "vada-depth3-bootstrap-bynode": ("binary", "VadaBoostClassifier",
                                     {"max_depth": 3, "bootstrap": True, "subsample": 0.8, "colsample_bynode": 0.5,
                                      "lam": 0.3}),
    "ada-depth3-interaction-subsample": ("binary", "AdaBoostClassifier",
                                         {"max_depth": 3, "subsample": 0.6,
                                          "interaction_constraints": [[0, 1, 2], [2, 3, 4, 5], [6, 7, 8, 9]]}),
    "quad-depth2-subsample": ("binary", "QuadBoostClassifier", {"max_depth": 2, "subsample": 0.5, "lam": 0.01}),
    "ovr-vada-colsample-interaction": ("three", "VadaBoostClassifier",
                                       {"max_depth": 2, "subsample": 0.5, "colsample_bytree": 0.6, "lam": 0.2,
                                        "interaction_constraints": [[0, 1, 2, 3, 4], [4, 5, 6, 7, 8, 9, 10]]}),
    "real-depth2-bootstrap-monotone": ("binary", "AdaBoostClassifier",
                                       {"max_depth": 2, "leaf": "real", "bootstrap": True,
                                        "monotone_constraints": [1, -1] + [0] * 8}),
}


def assert_same_draws(dask_model, model, kw):
    """The same rows read each round (rounds_["n_seen"], for each class's model), fewer than every row when rows
    are drawn."""
    for a, b in zip(getattr(dask_model, "estimators_", [dask_model]), getattr(model, "estimators_", [model])):
        np.testing.assert_array_equal(a.rounds_["n_seen"], b.rounds_["n_seen"])
        if kw.get("subsample", 1.0) < 1.0 or kw.get("bootstrap"):
            assert (b.rounds_["n_seen"] < sum(ODD_CHUNKS)).any()


@needs_dask
@pytest.mark.parametrize("case", some_slow({c: (c,) for c in SAMPLING_CASES},
                                           quick=["stumps-subsample-colsample", "samme-depth2-bootstrap",
                                                  "stumps-rejected-then-every-row",
                                                  "stumps-constant-columns-drawn"]))
def test_dask_sampling_equals_single_machine(client, odd_data, case):
    """Feature and row sampling and interaction constraints on uneven weighted partitions (one empty, one of one
    row): the same drawn features and rows, so the single-machine model (its draws are counter-based: by the
    seed, the round, the node and the feature or row index in the whole data)."""
    import fastboost

    which, name, kw = SAMPLING_CASES[case]
    X, y, sw, Xd, yd, swd = odd_data[which]
    kw = {"n_estimators": 12, **kw, "random_state": 5}
    model = getattr(fastboost, name)(**kw).fit(X, y, sample_weight=sw)
    dask_model = getattr(fbd, "Dask" + name)(**kw).fit(Xd, yd, sample_weight=swd)
    assert_same_trees(dask_model, model)
    assert_same_draws(dask_model, model, kw)
    if "rejected" in case:
        assert (model.rounds_["n_seen"] == sum(ODD_CHUNKS)).any()
    if "constant" in case:
        assert model.n_estimators_ == kw["n_estimators"] and not model.stopped_by_rule_
    if case == "stumps-subsample-colsample":  # the workers send the drawn features' histograms only (4 of 10)
        stats = dask_model.dask_stats_
        boosting = stats["bytes_received"] - stats["bytes_received_binning"]
        every = 12 * len(stats["workers"]) * 10 * (dask_model.bin_mapper_.missing_code + 1) * 2 * 8
        assert 0.4 * every <= boosting < 0.6 * every
        # a RandomState: the draws' seed is its first number, as in memory (the Dask fit took its second)
        assert dask_model.sampling_seed_ == model.sampling_seed_
        kw["random_state"] = np.random.RandomState(5)
        model = getattr(fastboost, name)(**kw).fit(X, y, sample_weight=sw)
        kw["random_state"] = np.random.RandomState(5)
        dask_model = getattr(fbd, "Dask" + name)(**kw).fit(Xd, yd, sample_weight=swd)
        assert dask_model.sampling_seed_ == model.sampling_seed_
        assert_same_trees(dask_model, model)


@needs_dask
@settings(max_examples=25, deadline=None)
@given(sizes=st.lists(st.integers(0, 30), min_size=1, max_size=6).filter(lambda s: sum(s) > 0),
       n_shards=st.integers(1, 3), bootstrap=st.booleans(), fraction=st.sampled_from([0.3, 0.8, 1.0]),
       t=st.integers(0, 50), seed=st.integers(0, 2 ** 16))
def test_shard_row_draws_are_the_single_machine_draws(sizes, n_shards, bootstrap, fraction, t, seed):
    """Rows split into partitions (empty ones, ones of zero weight) held by shards (partition j on shard
    j mod n_shards): the rows each shard draws (draw_shard_rows, with the client's stretches) are, together,
    the rows sampling.sample_rows draws from all of them, with the same bootstrap weights. Integer weights
    (zeros and ties included) make every cumulative sum exact, so the two agree exactly."""
    from fastboost._algorithms import RULES
    from fastboost._dask_worker import RoundDraw, draw_shard_rows
    from fastboost._kernels.sampling import sample_rows

    if fraction == 1.0 and not bootstrap:
        fraction = 0.5
    rng = np.random.default_rng(seed)
    n = sum(sizes)
    u = rng.integers(0, 4, n).astype(np.float64)
    u[: sizes[0]] *= rng.integers(0, 2)  # (the first partition sometimes all zero)
    est = AdaBoostClassifier(subsample=fraction, bootstrap=bootstrap, random_state=seed)
    config = est._config(RULES[est._algorithm], BinMapper(255).fit(np.zeros((2, 1))), 2, 1, n)
    c = config[0]
    kept, hu = np.empty(n, np.int64), np.zeros(n)
    m = sample_rows(u, c, t, kept, -1, hu)
    starts = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    bounds, total = fbd._partition_stretches([u[starts[j]:starts[j + 1]].clip(0).sum() for j in range(len(sizes))])
    n_draws = max(1, int(fraction * n + 0.5))
    draw = RoundDraw(t, None, True, bounds if bootstrap else None, total, n_draws)
    rows, weights = [], []
    for shard in range(n_shards):
        parts = [j for j in range(len(sizes)) if j % n_shards == shard]
        if not parts:
            continue
        here = np.concatenate([np.arange(starts[j], starts[j + 1]) for j in parts]).astype(np.int64)
        local = np.cumsum([0] + [sizes[j] for j in parts])
        segs = np.array([[local[i], local[i + 1], starts[j]] for i, j in enumerate(parts)], np.int64).reshape(-1, 3)
        k, h = np.empty(here.shape[0], np.int64), np.zeros(here.shape[0])
        got = draw_shard_rows(u[here], c, segs, parts, draw, k, h)
        rows.append(here[k[:got]])
        weights.append(h[k[:got]])
    rows, weights = np.concatenate(rows), np.concatenate(weights)
    order = np.argsort(rows)
    np.testing.assert_array_equal(rows[order], kept[:m])
    if bootstrap:
        np.testing.assert_array_equal(weights[order], hu[kept[:m]])


@needs_dask
@pytest.mark.parametrize("kw", some_slow({
    "stumps-subsample": ({"subsample": 0.5, "colsample_bytree": 0.5},),
    "depth2-bootstrap": ({"max_depth": 2, "bootstrap": True, "subsample": 0.6, "colsample_bynode": 0.5},),
}, quick=["depth2-bootstrap"]))
def test_dask_row_draws_follow_the_row_not_the_partition(client, odd_data, kw):
    """Two partitionings of the same rows draw the same rows: both Dask fits are the single-machine fit, here
    one fitted in two warm-started halves (a warm start draws what the whole fit draws)."""
    X, y, sw, Xd, yd, swd = odd_data["binary"]
    kw = {**kw, "random_state": 11}
    local = AdaBoostClassifier(6, warm_start=True, **kw).fit(X, y, sample_weight=sw)
    local.set_params(n_estimators=12).fit(X, y, sample_weight=sw)
    other = (8000, 3, 8997)
    for Xp, yp, swp in [(Xd, yd, swd), (da.from_array(X, chunks=(other, -1)), da.from_array(y, chunks=(other,)),
                                        da.from_array(sw, chunks=(other,)))]:
        dask_model = fbd.DaskAdaBoostClassifier(12, **kw).fit(Xp, yp, sample_weight=swp)
        assert_same_trees(dask_model, local)
        assert_same_draws(dask_model, local, kw)


@needs_dask
@pytest.mark.parametrize("case", some_slow({c: (c,) for c in ["ada-depth3", "samme-depth3", "ovr-vada",
                                                                 "quad-depth2-reweight"]}, quick=["samme-depth3"]))
def test_dask_early_stopping_equals_single_machine(client, odd_data, case):
    """eval_set (a Dask collection, partitioned unlike X, one partition empty) with n_iter_no_change: the
    same validation errors, the same early stop, the same kept rounds as the single-machine fit."""
    import fastboost

    which, name, kw = LEARNER_CASES[case]
    X, y, sw, Xd, yd, swd = odd_data[which]
    Xv, yv = X[::3], y[::3]  # (rows also in training: only the bookkeeping is compared)
    swv = sw[::3]
    vchunks = (1000, 0, Xv.shape[0] - 1000)
    eval_dask = (da.from_array(Xv, chunks=(vchunks, -1)), da.from_array(yv, chunks=(vchunks,)),
                 da.from_array(swv, chunks=(vchunks,)))
    kw = {**kw, "n_iter_no_change": 3, "learning_rate": 0.5}
    model = getattr(fastboost, name)(n_estimators=60, **kw).fit(X, y, eval_set=(Xv, yv, swv))
    dask_model = getattr(fbd, "Dask" + name)(n_estimators=60, **kw).fit(Xd, yd, eval_set=eval_dask)
    assert_same_trees(dask_model, model)


@needs_dask
def test_dask_validation_fraction_holds_out_seeded_rows(client, odd_data):
    """validation_fraction on Dask holds out each partition's rows by a generator seeded from random_state
    and the partition: the same model as a single-machine fit on the kept rows with the held-out ones as
    eval_set; the same rows again on a refit."""
    from sklearn.utils import check_random_state

    from fastboost._dask_worker import _held_out

    X, y, sw, Xd, yd, swd = odd_data["binary"]
    kw = {"n_estimators": 40, "max_depth": 2, "validation_fraction": 0.2, "n_iter_no_change": 5, "random_state": 7}
    dask_model = fbd.DaskAdaBoostClassifier(**kw).fit(Xd, yd)
    seed = int(check_random_state(7).randint(np.iinfo(np.int32).max))
    starts = np.cumsum((0,) + ODD_CHUNKS)
    held = np.concatenate([_held_out(seed, i, n, 0.2) for i, n in enumerate(ODD_CHUNKS)])
    assert 0.15 < held.mean() < 0.25 and held[starts[0]:starts[1]].any()
    local = AdaBoostClassifier(**{**kw, "validation_fraction": None}).fit(X[~held], y[~held],
                                                                          eval_set=(X[held], y[held]))
    assert_same_trees(dask_model, local)
    again = fbd.DaskAdaBoostClassifier(**kw).fit(Xd, yd)  # (partitions may sit on other workers: sums to rounding)
    np.testing.assert_allclose(again.validation_errors_, dask_model.validation_errors_, rtol=1e-12)


@needs_dask
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(sizes=st.lists(st.integers(0, 300), min_size=1, max_size=5).filter(lambda s: sum(s) >= 40),
       depth=st.sampled_from([1, 2, 3]), n_classes=st.sampled_from([2, 3, 300]), separable=st.booleans(),
       seed=st.integers(0, 2 ** 16))
@example(sizes=[215, 1, 167, 144], depth=2, n_classes=300, separable=False, seed=0)  # a near-tie at round 4
def test_dask_equals_single_machine_on_drawn_partitions(client, sizes, depth, n_classes, separable, seed):
    """Drawn partition sizes (empty ones too), depths and class counts (up to 300), integer-valued features
    full of ties, and perfectly separable labels: the Dask model is the single-machine model, up to a
    near-tie (two splits, or two classes of a leaf) that the order of the floating-point sums decides."""
    rng = np.random.default_rng(seed)
    n = sum(sizes)
    X = rng.integers(0, 6, size=(n, 4)).astype(np.float64)
    y = (X[:, 0] + X[:, 1] > 5).astype(np.int64) if separable else rng.integers(0, n_classes, n)
    if separable and n_classes > 2:
        y = np.minimum(X[:, 0].astype(np.int64), n_classes - 1)
    if np.unique(y).shape[0] < 2:
        y[: n // 2] = 0
        y[n // 2:] = 1
    note(f"classes {np.unique(y).shape[0]}")
    kw = {"n_estimators": 6, "max_depth": depth}
    model = AdaBoostClassifier(**kw).fit(X, y)
    dask_model = fbd.DaskAdaBoostClassifier(**kw).fit(da.from_array(X, chunks=(tuple(sizes), -1)),
                                                     da.from_array(y, chunks=(tuple(sizes),)))
    t = first_different_split(dask_model, model)
    if t is None:
        assert_same_trees(dask_model, model)
        return
    # Two splits, or two classes of a leaf, equally good to within rounding: the order of the
    # floating-point sums (per worker on Dask, per block of rows on one machine) picks one. The rounds
    # before are the same; at round t both trees' errors tie (stumps, leaf classes), or the trees share
    # their root and part ways lower down, where nodes hold few rows of integer features and such ties
    # are common. (Found: 300 classes, a leaf's two classes of one row each, equal weights.)
    event("a near-tie decided by the order of sums")
    note(f"round {t}: errors {dask_model.rounds_['error'][t]!r} and {model.rounds_['error'][t]!r}")
    assert_same_rounds(dask_model.rounds_[:t], model.rounds_[:t])
    tied = np.isclose(dask_model.rounds_["error"][t], model.rounds_["error"][t], rtol=1e-12, atol=1e-15)
    same_root = depth > 1 and all(dask_model.nodes_[t][0][f] == model.nodes_[t][0][f]
                                  for f in ("feature", "bin", "missing_left"))
    assert tied or same_root


@needs_dask
def test_histogram_tree_gives_the_same_model(client, data, ddata, monkeypatch):
    """Histograms summed up a tree of workers (forced here on two workers) give the same model, and the
    client receives one histogram per round (EBBoost: hist and histq) instead of one per worker."""
    monkeypatch.setattr(fbd, "_TREE_MIN_WORKERS", 1)
    X, y = data
    Xd, yd = ddata
    model = EBBoostClassifier(n_estimators=30, lam=0.3).fit(X, y)
    dask_model = fbd.DaskEBBoostClassifier(n_estimators=30, lam=0.3).fit(Xd, yd)
    assert_same_model(dask_model, model)
    s = dask_model.dask_stats_
    assert len(s["workers"]) == 2
    histograms = 2 * X.shape[1] * 256 * 2 * 8  # hist + histq, once
    assert s["bytes_received"] - s["bytes_received_binning"] < 30 * 1.25 * histograms


@needs_dask
def test_dataframe_input_sample_weights_and_given_bin_edges(client, data):
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    X, y = data
    sw = np.random.default_rng(0).integers(0, 3, X.shape[0]).astype(np.float64)  # zeros included
    labels = np.where(y > 0, "pos", "neg")
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])])
    frame["label"] = labels
    frame["w"] = sw
    ddf = dd.from_pandas(frame, npartitions=3, sort=False)
    Xd, yd, swd = ddf[list(frame.columns[:10])], ddf["label"], ddf["w"]
    model = AdaBoostClassifier(n_estimators=30).fit(frame.iloc[:, :10], labels, sample_weight=sw)
    dask_model = fbd.DaskAdaBoostClassifier(n_estimators=30).fit(Xd, yd, sample_weight=swd)
    assert_same_model(dask_model, model)
    np.testing.assert_array_equal(dask_model.feature_names_in_, model.feature_names_in_)
    # the same bin edges handed over directly
    mapper = BinMapper(255).fit(X, as_distribution(sw))
    np.testing.assert_array_equal(dask_model.bin_mapper_.thresholds_, mapper.thresholds_)
    given = fbd.DaskAdaBoostClassifier(n_estimators=30).fit(Xd, yd, sample_weight=swd, bin_mapper=mapper)
    assert_same_model(given, model)
    # prediction on a dask DataFrame; its score (the predictions' chunks have unknown sizes: scikit-learn's score
    # could not measure them)
    np.testing.assert_array_equal(dask_model.predict(Xd).compute(), model.predict(frame.iloc[:, :10]))
    assert dask_model.score(Xd, yd) == model.score(frame.iloc[:, :10], labels)
    assert dask_model.score(Xd, yd, sample_weight=swd) == model.score(frame.iloc[:, :10], labels, sample_weight=sw)
    # integer weights: the cover sums are exact, so the cover is the single-machine one bit for bit
    assert_same_cover(dask_model, model, exact=True)
    # weights near the largest float: both passes scale them by the same power of two (they summed to inf)
    huge = fbd.DaskAdaBoostClassifier(n_estimators=30).fit(Xd, yd, sample_weight=swd * 2.0 ** 1016)
    huge_local = AdaBoostClassifier(n_estimators=30).fit(frame.iloc[:, :10], labels, sample_weight=sw * 2.0 ** 1016)
    assert_same_cover(huge, huge_local, exact=True)
    assert huge.cover_.tobytes() == (model.cover_ / 2).tobytes()  # (weights times 2**1016, cover times 2**-1017)
    phi = dask_model.predict_contrib(Xd)
    assert isinstance(phi, da.Array) and phi.shape[1] == X.shape[1] + 1
    np.testing.assert_array_equal(phi.compute(), dask_model.predict_contrib(frame.iloc[:, :10]))
    # columns renamed or reordered: the single-machine error, when the call is made (not block by block at compute)
    swapped = ddf[["x1", "x0", *frame.columns[2:10]]]
    with pytest.raises(ValueError, match="Feature names must be in the same order as they were in fit"):
        dask_model.predict(swapped)
    with pytest.raises(ValueError, match="Feature names unseen at fit time:\n- w"):
        dask_model.predict_proba(ddf[[*frame.columns[:9], "w"]])
    with pytest.raises(ValueError, match="eval_set's X must have X's columns in X's order"):  # (not by position)
        fbd.DaskAdaBoostClassifier(n_estimators=3).fit(Xd, yd, eval_set=(swapped, yd))


@needs_dask
def test_binning_sample_above_subsample_is_seeded(client, data, ddata, monkeypatch):
    """Above the subsample size, the sample is the single-machine one (the rows of the smallest keys, a seeded
    hash of the global row index), so the model is the single-machine model."""
    from fastboost import _binning

    monkeypatch.setattr(fbd, "_BIN_SUBSAMPLE", 4000)
    monkeypatch.setattr(_binning, "SUBSAMPLE", 4000)
    X, y = data
    Xd, yd = ddata
    a = fbd.DaskAdaBoostClassifier(n_estimators=20, random_state=3).fit(Xd, yd)
    b = fbd.DaskAdaBoostClassifier(n_estimators=20, random_state=3).fit(Xd, yd)
    np.testing.assert_array_equal(a.bin_mapper_.thresholds_, b.bin_mapper_.thresholds_)
    assert not np.array_equal(a.bin_mapper_.thresholds_, BinMapper(255).fit(X).thresholds_)
    assert_rounds_identical(a.rounds_, b.rounds_)
    single = AdaBoostClassifier(n_estimators=20, random_state=3).fit(X, y)
    np.testing.assert_array_equal(a.bin_mapper_.thresholds_, BinMapper(255, random_state=3).fit(X).thresholds_)
    assert_same_model(a, single)
    # the sample is about 4000 rows x 10 float64 features (and each row's weight and index), whatever the
    # number of rows
    assert a.dask_stats_["bytes_received_binning"] < 1.2 * 4000 * (10 + 2) * 8 + 50_000
    Xt, yt = make_twonorm(4000, 10, random_state=1)
    assert a.score(Xt, yt) > 0.9


# ----------------------------------------------------------------------------- O(rows) never reaches the client
def _twonorm_on_workers(chunks, n_features, seed):
    """A twonorm dask array whose partitions are generated on the workers (never on the client)."""
    parts = [dask.delayed(make_twonorm, nout=2)(c, n_features, random_state=seed + i) for i, c in enumerate(chunks)]
    X = da.concatenate([da.from_delayed(p[0], shape=(c, n_features), dtype=np.float64)
                        for p, c in zip(parts, chunks)])
    y = da.concatenate([da.from_delayed(p[1], shape=(c,), dtype=np.int64) for p, c in zip(parts, chunks)])
    return X, y


@needs_dask
@pytest.mark.parametrize("learner", ["stumps", "trees-validation"])
def test_client_receives_no_row_data(client, monkeypatch, learner):
    """Bytes received by the client's comms during fit stay O(rounds x workers x features x bins).

    3 000 000 rows: the labels alone (1 byte a row) would be 3 MB and the weights 24 MB;
    the bounds below are under 2 MB. Measured on the TCP comms of this client (its scheduler
    stream and its connections to the workers), so nothing the client receives escapes it.
    Trees: depth 2 (three node histograms of 3 fields a round) with validation_fraction (the
    validation rows and their margins stay on the workers too).
    """
    monkeypatch.setattr(fbd, "_BIN_SUBSAMPLE", 2000)
    trees = learner != "stumps"
    chunks, d, rounds = (700_000, 900_000, 600_000, 800_000), 8, (4 if trees else 10)
    X, y = client.persist(list(_twonorm_on_workers(chunks, d, seed=10)))
    distributed.wait([X, y])
    n_workers = len(client.scheduler_info()["workers"])
    kw = {"max_depth": 2, "validation_fraction": 0.1, "random_state": 0} if trees else {}
    with client_comm_bytes(client) as counts:
        model = fbd.DaskAdaBoostClassifier(n_estimators=rounds, **kw).fit(X, y)
    assert model.n_estimators_ == rounds or trees  # (with validation: the best round's prefix is kept)
    # float64 histograms per worker and round: one of 2 fields (stumps), three of 3 (root and two children)
    histograms = rounds * n_workers * d * 256 * 8 * (9 if trees else 2)
    sample = 2000 * d * 8
    bound = 2 * histograms + sample + 256 * 1024
    assert bound < sum(chunks)  # one byte per row would already exceed it
    assert 0 < counts["received"] <= bound, counts
    assert counts["received"] >= histograms  # the meter does see the histograms
    assert model.dask_stats_["bytes_received"] <= counts["received"]
    if trees:
        assert model.validation_errors_.shape == (rounds,) and np.all(model.validation_errors_ < 0.3)


# ----------------------------------------------------------------------------- the fitted model
@needs_dask
def test_fitted_model_pickles_and_runs_without_dask(client, ddata, data, tmp_path):
    X, _ = data
    Xd, yd = ddata
    model = fbd.DaskVadaBoostClassifier(n_estimators=15).fit(Xd, yd)
    again = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(again.predict(X), model.predict(X))
    local = model.to_local()
    assert type(local) is VadaBoostClassifier
    assert local.get_params() == model.get_params()
    assert_rounds_identical(local.rounds_, model.rounds_)
    path = tmp_path / "model.pkl"
    path.write_bytes(pickle.dumps(local))
    np.save(tmp_path / "X.npy", X[:500])
    code = textwrap.dedent(f"""
        import pickle, sys
        import numpy as np
        sys.modules["dask"] = None
        sys.modules["distributed"] = None
        model = pickle.loads(open({str(path)!r}, "rb").read())
        np.save({str(tmp_path / "pred.npy")!r}, model.decision_function(np.load({str(tmp_path / "X.npy")!r})))
    """)
    subprocess.run([sys.executable, "-c", code], check=True, cwd=tmp_path)
    np.testing.assert_array_equal(np.load(tmp_path / "pred.npy"), model.decision_function(X[:500]))
    # the Dask estimator has exactly the single-machine parameters
    assert clone(model).get_params() == VadaBoostClassifier(n_estimators=15).get_params()
    # staged methods run on one machine: every one refuses dask input alike (not by computing it, or an error of
    # dask's own), and takes NumPy input
    Xdf = pytest.importorskip("dask.dataframe").from_dask_array(Xd)
    for X_in in (Xd, Xdf):
        for staged in (model.staged_decision_function, model.staged_predict, model.staged_predict_proba,
                       lambda X: model.staged_score(X, yd)):
            with pytest.raises(TypeError, match=r"staged_\* methods take NumPy or pandas input"):
                next(iter(staged(X_in)))
    assert len(list(model.staged_predict(X[:5]))) == model.n_estimators_
    # a wrong feature count is refused when the call is made, as the single-machine estimator refuses it (not at
    # compute time, in every block)
    for X_in in (Xd[:, :9], Xdf[list(range(9))]):
        for method in (model.decision_function, model.predict, model.predict_proba, model.predict_contrib):
            with pytest.raises(ValueError, match="X has 9 features, but DaskVadaBoostClassifier is expecting 10"):
                method(X_in)


@needs_dask
def test_clear_errors(client, ddata, data):
    X, y = data
    Xd, yd = ddata
    est = fbd.DaskAdaBoostClassifier(n_estimators=5)
    with pytest.raises(TypeError, match="dask array or dask DataFrame"):
        est.fit(X, y)
    with pytest.raises(TypeError, match="dask array"):
        est.fit(Xd, y)
    with pytest.raises(TypeError, match="dask array or dask DataFrame"):
        est.fit(Xd, yd, eval_set=(X, y))
    with pytest.raises(ValueError, match="either eval_set or validation_fraction"):
        fbd.DaskAdaBoostClassifier(validation_fraction=0.2).fit(Xd, yd, eval_set=(Xd, yd))
    # early stopping without a validation set holds out 0.1 of each worker's rows, as validation_fraction=0.1
    held = fbd.DaskAdaBoostClassifier(n_estimators=5, n_iter_no_change=3, random_state=0).fit(Xd, yd)
    same = fbd.DaskAdaBoostClassifier(n_estimators=5, n_iter_no_change=3, validation_fraction=0.1,
                                      random_state=0).fit(Xd, yd)
    assert held.validation_errors_.shape == (5,) or held.stopped_early_
    # (each worker sums the partitions it holds, and which worker holds which can change between two fits: the
    # same held-out rows, their errors summed in another grouping)
    np.testing.assert_allclose(held.validation_errors_, same.validation_errors_, rtol=1e-12, atol=0)
    with pytest.raises(ValueError, match="labels not in the training y"):
        est.fit(Xd, yd, eval_set=(Xd, yd + 5))
    with pytest.raises(ValueError, match="eval_set's X has 3 features"):
        est.fit(Xd, yd, eval_set=(Xd[:, :3], yd))
    # a bad validation set is named as such (not as the training X)
    with pytest.raises(ValueError, match="^eval_set's X: Expected 2D array, got 1D"):
        est.fit(Xd, yd, eval_set=(Xd[:, 0], yd))
    with pytest.raises(TypeError, match="^eval_set's X must be numeric"):
        est.fit(Xd, yd, eval_set=(Xd.astype(str), yd))
    with pytest.raises(TypeError, match="^With Dask input, eval_set's X must be a dask array or dask DataFrame"):
        est.fit(Xd, yd, eval_set=(X, yd))
    with pytest.raises(ValueError, match="^eval_set's X and eval_set's y have inconsistent numbers of samples"):
        est.fit(Xd, yd, eval_set=(Xd[:CHUNKS[0]], yd))
    with pytest.raises(TypeError, match="eval_set is one validation set"):  # LightGBM's list of sets
        est.fit(Xd, yd, eval_set=[(Xd, yd), (Xd, yd)])
    with pytest.raises(ValueError, match="validation set is empty"):
        fbd.DaskAdaBoostClassifier(validation_fraction=1e-9, random_state=0).fit(Xd, yd)
    with pytest.raises(NotImplementedError, match="weight_trim_rate"):
        fbd.DaskAdaBoostClassifier(weight_trim_rate=0.9).fit(Xd, yd)
    with pytest.raises(NotImplementedError, match=r"does not continue a fit \(warm_start=True\)"):
        fbd.DaskAdaBoostClassifier(warm_start=True).fit(Xd, yd)
    with pytest.raises(NotImplementedError, match="logistic loss.*single-machine"):
        fbd.DaskAdaBoostClassifier(leaf="real", max_depth=2, loss="logistic").fit(Xd, yd)
    with pytest.raises(NotImplementedError, match="numeric features only"):
        fbd.DaskAdaBoostClassifier(categorical_features=[0]).fit(Xd, yd)
    with pytest.raises(ValueError, match="feature_rank=2 takes lazy stumps"):
        fbd.DaskLazyBoostClassifier(feature_rank=2, max_depth=2).fit(Xd, yd)
    with pytest.raises(ValueError, match=r"overflows float64 \(both are finite\)"):  # (as the single machine)
        fbd.DaskAdaBoostClassifier(class_weight={-1: 1, 1: 10}).fit(Xd, yd, sample_weight=da.full_like(yd, 1e308,
                                                                                                      dtype=float))
    with pytest.raises(ValueError, match="chunked differently"):
        est.fit(Xd, da.from_delayed(dask.delayed(np.asarray)(y), shape=(np.nan,), dtype=y.dtype))
    with pytest.raises(ValueError, match="max_bins"):
        est.fit(Xd, yd, bin_mapper=BinMapper(16).fit(X))
    with pytest.raises(ValueError, match="at least 2 classes"):
        est.fit(Xd, da.from_array(np.ones_like(y), chunks=(CHUNKS,)))
    y3 = da.from_array(np.where(X[:, 0] > 1.0, 2, y), chunks=(CHUNKS,))
    for multiclass in ("joint", "mh"):
        with pytest.raises(ValueError, match="AdaBoost.MH, K-vector leaves.*not available on Dask.*multiclass='ovr'"):
            fbd.DaskAdaBoostClassifier(n_estimators=5, leaf="real", multiclass=multiclass).fit(Xd, y3)
    with pytest.raises(ValueError, match=r"overflowed in round 1: .* learning_rate=1e\+308 is too large"):
        est.set_params(learning_rate=1e308).fit(Xd, yd)
    assert not hasattr(est, "rounds_")


@needs_dask
@slow
def test_workqueue_threading_layer_workers_fit_and_predict_at_once():
    """Workers on numba's workqueue layer (which aborts when two threads start parallel kernels at once),
    two threads each: a fit and many prediction tasks run side by side on them without a crash; the fit
    reports each worker's layer."""
    with distributed.LocalCluster(n_workers=2, threads_per_worker=2, processes=True, host="127.0.0.1",
                                  dashboard_address=None, env={"NUMBA_THREADING_LAYER": "workqueue"}) as cluster, \
            distributed.Client(cluster, set_as_default=False) as c:
        X, y = make_twonorm(40_000, 10, random_state=5)
        Xd, yd = da.from_array(X, chunks=(5000, 10)), da.from_array(y, chunks=(5000,))
        first = fbd.DaskAdaBoostClassifier(n_estimators=5, max_depth=2).fit(Xd, yd, client=c)
        assert first.dask_stats_["threading_layers"] == ["workqueue"] * len(first.dask_stats_["workers"])
        many = da.concatenate([Xd] * 8).rechunk((1000, 10))
        predictions = c.compute(first.decision_function(many))  # tasks on both threads of each worker
        model = fbd.DaskAdaBoostClassifier(n_estimators=30, max_depth=2).fit(Xd, yd, client=c)
        np.testing.assert_array_equal(predictions.result(), np.tile(first.decision_function(X), 8))
        assert model.n_estimators_ == 30


# ----------------------------------------------------------------------------- a worker lost mid-fit (last)
@pytest.fixture(scope="module")
def cluster3():
    """A cluster of its own for the tests that kill or retire workers: 3 worker processes with nannies."""
    if distributed is None:
        pytest.skip("needs the dask extra")
    with distributed.LocalCluster(n_workers=3, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster, set_as_default=False) as c:  # (the other tests keep their client)
        yield c


LOSS_CASES = {"vada-stumps": (fbd.DaskVadaBoostClassifier if distributed else None, {"lam": 0.3}, False),
              "ada-stumps-one-round-trip": (fbd.DaskAdaBoostClassifier if distributed else None, {}, False),
              "ada-depth3-validation": (fbd.DaskAdaBoostClassifier if distributed else None,
                                        {"max_depth": 3, "n_iter_no_change": 50}, True),
              # the journal's bootstrap calls (weight_sums) and drawn features replayed too
              "ada-depth2-bootstrap-colsample": (fbd.DaskAdaBoostClassifier if distributed else None,
                                                 {"max_depth": 2, "bootstrap": True, "subsample": 0.7,
                                                  "colsample_bytree": 0.6, "random_state": 1}, False),
              # killed within a tree, before a level: the rebuilt shard's parent histograms are built again
              "ada-depth2-within-a-tree": (fbd.DaskAdaBoostClassifier if distributed else None, {"max_depth": 2},
                                           False)}


@needs_dask
@pytest.mark.parametrize("case", some_slow({c: (c,) for c in LOSS_CASES},
                                           quick=["ada-stumps-one-round-trip", "ada-depth2-within-a-tree"]))
def test_fit_survives_a_killed_worker(cluster3, case, monkeypatch):
    """SIGKILL a worker holding rows after three rounds: its rows are computed again from the collection on
    a live worker, its state rebuilt from the rounds kept, and the fit ends with the very model of the
    uninterrupted fit (bit for bit: the same rows per actor, the same order of sums)."""
    client = cluster3
    client.wait_for_workers(3, timeout=60)
    DaskEst, kw, with_validation = LOSS_CASES[case]
    chunks = (5000, 0, 4000, 6000, 5000)
    X, y = make_twonorm(sum(chunks), 10, random_state=8)
    Xd, yd = client.persist([da.from_array(X, chunks=(chunks, 10)), da.from_array(y, chunks=(chunks,))])
    fit_kw = {}
    if with_validation:
        Xv, yv = make_twonorm(3000, 10, random_state=9)
        fit_kw["eval_set"] = tuple(client.persist([da.from_array(Xv, chunks=(1500, 10)),
                                                   da.from_array(yv, chunks=(1500,))]))  # (placed once, as X)
    fit_kw["client"] = client
    reference = DaskEst(n_estimators=25, **kw).fit(Xd, yd, **fit_kw)
    pids = client.run(os.getpid)
    model = DaskEst(n_estimators=25, **kw)
    killed = []

    def kill_after_three_rounds(done, workers):
        if done == 3 and not killed:
            killed.append(workers[0])
            os.kill(pids[workers[0]], signal.SIGKILL)

    if case.endswith("within-a-tree"):  # after round 4's root, before its first level
        call = fbd._Shards.call

        def kill_before_a_level(shards, method, *args, **kwargs):
            if method == "tree_level" and not killed and sum(e[0] == "tree_root" for e in shards.journal) == 4:
                killed.append(shards.addresses[0])
                os.kill(pids[shards.addresses[0]], signal.SIGKILL)
            return call(shards, method, *args, **kwargs)

        monkeypatch.setattr(fbd._Shards, "call", kill_before_a_level)
    else:
        model._round_callback = kill_after_three_rounds
    model.fit(Xd, yd, **fit_kw)
    assert killed and killed[0] not in model.dask_stats_["workers"]  # actor 0 now lives elsewhere
    assert model.dask_stats_["lost_workers"] == killed and model.dask_stats_["rebuilt"] >= 1
    def rows_per_actor(m):
        return m.dask_stats_["partitions"], m.dask_stats_["validation_partitions"]

    client.wait_for_workers(3, timeout=60)  # the nanny restarts the killed worker: refit on as many workers
    for _ in range(5):  # the same rows per actor as the reference (Dask may place a fit's partitions anew)
        if rows_per_actor(reference) == rows_per_actor(model):
            break
        reference = DaskEst(n_estimators=25, **kw).fit(Xd, yd, **fit_kw)
    if rows_per_actor(reference) != rows_per_actor(model):  # the comparison's precondition, not the behaviour
        pytest.skip(f"Dask placed the partitions differently for the reference fits ({rows_per_actor(reference)}) "
                    f"than for the interrupted one ({rows_per_actor(model)}): bit-for-bit needs the same rows "
                    "per actor")
    assert_rounds_identical(model.rounds_, reference.rounds_)
    if with_validation or "tree" in case:
        assert_rounds_identical(model.nodes_, reference.nodes_)
    if with_validation:
        np.testing.assert_array_equal(model.validation_errors_, reference.validation_errors_)
    client.wait_for_workers(3, timeout=60)  # the nanny restarts the killed worker


@needs_dask
@slow
def test_fit_with_every_worker_gone_fails_clearly_within_the_timeout(cluster3):
    """Every worker gone mid-fit: WorkerLostError naming the lost workers after worker_timeout seconds,
    never a hang, and no model (run last: the cluster keeps no worker)."""
    import time

    client = cluster3
    client.wait_for_workers(3, timeout=60)
    Xd, yd = [client.persist(a) for a in (da.from_array(np.random.default_rng(0).normal(size=(9000, 5)),
                                                        chunks=(3000, 5)),
                                          da.from_array(np.arange(9000) % 2, chunks=(3000,)))]
    model = fbd.DaskAdaBoostClassifier(n_estimators=20)
    gone = {}

    def retire_everyone(done, workers):
        if done == 2 and not gone:
            gone["workers"] = sorted(client.scheduler_info()["workers"])
            client.cluster.scale(0)  # workers and their nannies close: nothing restarts them
            gone["at"] = time.monotonic()

    model._round_callback = retire_everyone
    with pytest.raises(fbd.WorkerLostError, match="No worker was left to continue on within 3 s") as err:
        model.fit(Xd, yd, client=client, worker_timeout=3)
    assert time.monotonic() - gone["at"] < 30
    assert any(w in str(err.value) for w in gone["workers"])
    assert not hasattr(model, "rounds_")


def test_docs_example_runs_with_the_dask_extra(client, tmp_path, monkeypatch):
    """The Dask page's example as written (on a small X.npy / y.npy), with the module's cluster as Client()."""
    import pathlib
    import re

    page = (pathlib.Path(__file__).resolve().parents[1] / "docs" / "dask.md").read_text()
    code = re.search(r"```python\n(.*?)```", page, re.S).group(1)
    code = code.replace("client.close()\n", "")  # the module's cluster stays up for the other tests
    X, y = make_twonorm(3000, 8, random_state=1)
    np.save(tmp_path / "X.npy", X)
    np.save(tmp_path / "y.npy", y)
    monkeypatch.chdir(tmp_path)
    code = code.replace("n_estimators=500", "n_estimators=20").replace("chunks=(250_000", "chunks=(1000")
    scope = {"Client": lambda *a, **k: client}
    exec(compile(code.replace("from distributed import Client\n", ""), "dask.md", "exec"), scope)
    local = VadaBoostClassifier(n_estimators=20, lam=0.5).fit(X, y)
    fitted = scope["clf"].to_local()
    np.testing.assert_array_equal(fitted.rounds_["feature"], local.rounds_["feature"])
    np.testing.assert_allclose(fitted.rounds_["alpha"], local.rounds_["alpha"], rtol=1e-9)
    assert np.mean(scope["clf"].predict(scope["X"]).compute() == y) > 0.9  # lazy on the dask array


@needs_dask
@pytest.mark.slow
def test_more_rows_than_the_binning_sample_equal_the_single_machine_fit(client):
    """276 000 rows (above the 200 000-row binning sample), depth-3 trees: the Dask model is the single-machine
    model."""
    X, y = make_twonorm(276_000, 6, random_state=0)
    Xd, yd = da.from_array(X, chunks=(100_000, 6)), da.from_array(y, chunks=(100_000,))
    model = AdaBoostClassifier(n_estimators=10, max_depth=3, random_state=0).fit(X, y)
    dask_model = fbd.DaskAdaBoostClassifier(n_estimators=10, max_depth=3, random_state=0).fit(Xd, yd)
    assert_same_model(dask_model, model)
