"""The command line's explanation and export: predict --contrib and export --to onnx / treelite."""
import subprocess
import sys

import numpy as np
import pytest

import fastboost
from fastboost.cli import main

pd = pytest.importorskip("pandas")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("explain_cli")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 4)).round(2)
    X[rng.random(X.shape) < 0.05] = np.nan
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    frame["label"] = np.where(np.nan_to_num(X[:, 0]) + np.nan_to_num(X[:, 1]) > 0, "yes", "no")
    frame.to_csv(d / "train.csv", index=False)
    frame.drop(columns="label").iloc[:50].to_csv(d / "rows.csv", index=False)
    three = frame.copy()
    three["label"] = np.digitize(np.nan_to_num(X[:, 0]), [-0.5, 0.5])
    three.to_csv(d / "three.csv", index=False)
    assert main(["train", str(d / "train.csv"), "--target", "label", "--n-estimators", "10", "--max-depth", "2",
                 "-o", str(d / "model.fbm")]) == 0
    assert main(["train", str(d / "three.csv"), "--target", "label", "--n-estimators", "10", "--max-depth", "2",
                 "-o", str(d / "three.fbm")]) == 0
    return d


def test_predict_contrib_writes_named_columns_that_sum_to_the_margin(files, capsys):
    d = files
    assert main(["predict", str(d / "model.fbm"), str(d / "rows.csv"), "--contrib", "-o", str(d / "c.csv")]) == 0
    out = pd.read_csv(d / "c.csv")
    assert list(out.columns) == ["a", "b", "c", "d", "expected_value"]
    model = fastboost.load(d / "model.fbm")
    rows = pd.read_csv(d / "rows.csv")
    np.testing.assert_allclose(out.to_numpy().sum(axis=1), model.decision_function(rows), rtol=1e-9, atol=1e-12)
    assert main(["predict", str(d / "three.fbm"), str(d / "rows.csv"), "--contrib", "-o", str(d / "c3.csv")]) == 0
    out = pd.read_csv(d / "c3.csv")
    assert out.columns[0] == "0:a" and out.columns[-1] == "2:expected_value" and out.shape[1] == 15
    three = fastboost.load(d / "three.fbm")
    np.testing.assert_allclose(out.to_numpy().reshape(-1, 3, 5).sum(axis=2), three.decision_function(rows),
                               rtol=1e-9, atol=1e-12)
    assert main(["predict", str(d / "model.fbm"), str(d / "rows.csv"), "--contrib", "--proba"]) == 2
    assert "not both" in capsys.readouterr().err


def test_predict_contrib_streams_parquet(files):
    """parquet input is read batch by batch, to CSV or parquet output: the CSV input's contributions."""
    pytest.importorskip("pyarrow")
    d = files
    pd.read_csv(d / "rows.csv").to_parquet(d / "rows.parquet", index=False)
    for model in ("model.fbm", "three.fbm"):
        assert main(["predict", str(d / model), str(d / "rows.csv"), "--contrib", "-o", str(d / "ref.csv")]) == 0
        ref = pd.read_csv(d / "ref.csv")
        assert main(["predict", str(d / model), str(d / "rows.parquet"), "--contrib", "-o", str(d / "s.csv")]) == 0
        assert main(["predict", str(d / model), str(d / "rows.parquet"), "--contrib", "-o",
                     str(d / "s.parquet")]) == 0
        for out in (pd.read_csv(d / "s.csv"), pd.read_parquet(d / "s.parquet")):
            assert list(out.columns) == list(ref.columns)
            np.testing.assert_array_equal(out.to_numpy(), ref.to_numpy())


def test_export_onnx_and_treelite(files):
    ort = pytest.importorskip("onnxruntime")
    treelite = pytest.importorskip("treelite")
    d = files
    model = fastboost.load(d / "model.fbm")
    frame = pd.read_csv(d / "rows.csv")
    rows = frame.to_numpy()
    assert main(["export", str(d / "model.fbm"), "--to", "onnx", "--dtype", "float64", "-o", str(d / "m.onnx")]) == 0
    labels, proba = ort.InferenceSession(str(d / "m.onnx")).run(None, {"X": rows})
    np.testing.assert_array_equal(labels, model.predict(frame))
    np.testing.assert_allclose(proba, model.predict_proba(frame), atol=1e-6)
    assert main(["export", str(d / "model.fbm"), "--to", "treelite", "-o", str(d / "m.tl")]) == 0
    tl = treelite.Model.deserialize(str(d / "m.tl"))
    np.testing.assert_allclose(treelite.gtil.predict(tl, rows, pred_margin=True)[:, 0, 0],
                               model.decision_function(frame), rtol=0, atol=1e-9)


def test_import_fastboost_needs_no_optional_export_package():
    code = ("import sys\n"
            "class Block:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name.split('.')[0] in ('onnx', 'onnxruntime', 'skl2onnx', 'treelite', 'tl2cgen', 'shap'):\n"
            "            raise ImportError('blocked ' + name)\n"
            "sys.meta_path.insert(0, Block())\n"
            "import fastboost\n"
            "try:\n"
            "    fastboost.to_onnx(None)\n"
            "except ImportError as e:\n"
            "    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "fastboost[onnx]" in out.stdout
