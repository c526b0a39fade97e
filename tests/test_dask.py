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
from fastboost.datasets import make_twonorm

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


def assert_same_model(dask_model, model):
    a, b = dask_model.rounds_, model.rounds_
    assert a.shape == b.shape, (a.shape, b.shape)
    for name in EXACT:
        np.testing.assert_array_equal(a[name], b[name], err_msg=name)
    for name in CLOSE:
        np.testing.assert_allclose(a[name], b[name], rtol=1e-9, atol=1e-15, err_msg=name)
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


@needs_dask
@pytest.mark.parametrize("DaskEst, Est, kw", CASES, ids=["ada", "vada", "quad-l2-reweight", "eb", "lazy", "sa",
                                                         "quad-l1"])
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
    # prediction on a dask DataFrame
    np.testing.assert_array_equal(dask_model.predict(Xd).compute(), model.predict(frame.iloc[:, :10]))


@needs_dask
def test_binning_sample_above_subsample_is_seeded(client, data, ddata, monkeypatch):
    """Above the subsample size, each partition draws its share of a uniform sample (seeded)."""
    monkeypatch.setattr(fbd, "_BIN_SUBSAMPLE", 4000)
    X, _ = data
    Xd, yd = ddata
    a = fbd.DaskAdaBoostClassifier(n_estimators=20, random_state=3).fit(Xd, yd)
    b = fbd.DaskAdaBoostClassifier(n_estimators=20, random_state=3).fit(Xd, yd)
    np.testing.assert_array_equal(a.bin_mapper_.thresholds_, b.bin_mapper_.thresholds_)
    assert not np.array_equal(a.bin_mapper_.thresholds_, BinMapper(255).fit(X).thresholds_)
    assert_rounds_identical(a.rounds_, b.rounds_)
    # the sample is 4000 rows x 10 float64 features, whatever the number of rows
    assert a.dask_stats_["bytes_received_binning"] < 4000 * 10 * 8 + 50_000
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
def test_client_receives_no_row_data(client, monkeypatch):
    """Bytes received by the client's comms during fit stay O(rounds x workers x features x bins).

    3 000 000 rows: the labels alone (1 byte a row) would be 3 MB and the weights 24 MB;
    the bound below is under 2 MB. Measured on the TCP comms of this client (its scheduler
    stream and its connections to the workers), so nothing the client receives escapes it.
    """
    monkeypatch.setattr(fbd, "_BIN_SUBSAMPLE", 2000)
    chunks, d, rounds = (700_000, 900_000, 600_000, 800_000), 8, 10
    X, y = client.persist(list(_twonorm_on_workers(chunks, d, seed=10)))
    distributed.wait([X, y])
    n_workers = len(client.scheduler_info()["workers"])
    with client_comm_bytes(client) as counts:
        model = fbd.DaskAdaBoostClassifier(n_estimators=rounds).fit(X, y)
    assert model.n_estimators_ == rounds
    histograms = rounds * n_workers * d * 256 * 2 * 8  # one float64 histogram per worker and round
    sample = 2000 * d * 8
    bound = 2 * histograms + sample + 256 * 1024
    assert bound < sum(chunks)  # one byte per row would already exceed it
    assert 0 < counts["received"] <= bound, counts
    assert counts["received"] >= histograms  # the meter does see the histograms
    assert model.dask_stats_["bytes_received"] <= counts["received"]


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


@needs_dask
def test_clear_errors(client, ddata, data):
    X, y = data
    Xd, yd = ddata
    est = fbd.DaskAdaBoostClassifier(n_estimators=5)
    with pytest.raises(TypeError, match="dask array or dask DataFrame"):
        est.fit(X, y)
    with pytest.raises(TypeError, match="dask array"):
        est.fit(Xd, y)
    with pytest.raises(NotImplementedError, match="early stopping"):
        est.fit(Xd, yd, eval_set=(X, y))
    with pytest.raises(NotImplementedError, match="early stopping"):
        fbd.DaskAdaBoostClassifier(validation_fraction=0.2).fit(Xd, yd)
    if "max_depth" in est.get_params():
        with pytest.raises(NotImplementedError, match="stumps only"):
            fbd.DaskAdaBoostClassifier(max_depth=2).fit(Xd, yd)
    with pytest.raises(ValueError, match="chunked differently"):
        est.fit(Xd, da.from_delayed(dask.delayed(np.asarray)(y), shape=(np.nan,), dtype=y.dtype))
    with pytest.raises(ValueError, match="max_bins"):
        est.fit(Xd, yd, bin_mapper=BinMapper(16).fit(X))
    with pytest.raises(ValueError, match="binary classification"):
        est.fit(Xd, da.from_array(np.arange(y.shape[0]) % 3, chunks=(CHUNKS,)))
    with pytest.raises(ValueError, match="at least 2 classes"):
        est.fit(Xd, da.from_array(np.ones_like(y), chunks=(CHUNKS,)))
    assert not hasattr(est, "rounds_")


# ----------------------------------------------------------------------------- a worker lost mid-fit (last)
@needs_dask
@pytest.mark.parametrize("tree, victim", [(False, 0), (True, 1)], ids=["flat", "tree-child"])
def test_worker_lost_mid_fit_raises_and_leaves_no_model(client, ddata, monkeypatch, tree, victim):
    """SIGKILL one worker after three rounds: a clear error, no model (flat: the first worker; with the
    histogram tree: the child, which only its parent talks to during the histogram call)."""
    if tree:
        monkeypatch.setattr(fbd, "_TREE_MIN_WORKERS", 1)
    Xd, yd = ddata
    pids = client.run(os.getpid)
    model = fbd.DaskAdaBoostClassifier(n_estimators=40)
    killed = []

    def kill_after_three_rounds(done, workers):
        if done == 3:
            killed.append(workers[victim])
            os.kill(pids[workers[victim]], signal.SIGKILL)

    model._round_callback = kill_after_three_rounds
    try:
        with pytest.raises(fbd.WorkerLostError, match="was lost during fit.*no model was produced") as err:
            model.fit(Xd, yd)
        assert not hasattr(model, "rounds_")
    finally:
        client.wait_for_workers(2, timeout=60)  # the nanny restarts the killed worker
    assert f"worker {killed[0]} holding" in str(err.value)  # names the worker that was lost
    del model._round_callback
    assert model.fit(Xd, yd).n_estimators_ == 40


def test_readme_example_runs_with_the_dask_extra(client, tmp_path, monkeypatch):
    """The README's Dask example as written (on a small X.npy / y.npy), with the module's cluster as Client()."""
    import pathlib
    import re

    readme = (pathlib.Path(__file__).resolve().parents[1] / "README.md").read_text()
    section = readme[readme.index("## Scale out on Dask"):]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    X, y = make_twonorm(3000, 8, random_state=1)
    np.save(tmp_path / "X.npy", X)
    np.save(tmp_path / "y.npy", y)
    monkeypatch.chdir(tmp_path)
    code = code.replace("n_estimators=500", "n_estimators=20").replace("chunks=(250_000", "chunks=(1000")
    scope = {"Client": lambda *a, **k: client}
    exec(compile(code.replace("from distributed import Client\n", ""), "README.md", "exec"), scope)
    local = VadaBoostClassifier(n_estimators=20, lam=0.5).fit(X, y)
    fitted = scope["clf"].to_local()
    np.testing.assert_array_equal(fitted.rounds_["feature"], local.rounds_["feature"])
    np.testing.assert_allclose(fitted.rounds_["alpha"], local.rounds_["alpha"], rtol=1e-9)
    assert np.mean(scope["clf"].predict(scope["X"]).compute() == y) > 0.9  # lazy on the dask array
