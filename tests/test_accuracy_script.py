"""scripts/accuracy.py in its quick mode: the tables and the raw results are written and agree with a direct fit."""
import json
import math
import pathlib

import numpy as np
import pytest
from conftest import load_script

ROOT = pathlib.Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def accuracy():
    return load_script("accuracy")


@pytest.fixture(scope="module")
def quick_run(accuracy, tmp_path_factory):
    out = tmp_path_factory.mktemp("accuracy")
    assert accuracy.main(["--quick", "--out", str(out)]) == 0
    return out


def table_rows(text, depth):
    """{data set: [cells]} of the Markdown table of one depth, and its header cells."""
    section = text.split(f"## Depth {depth} ")[1].split("\n## ")[0]
    lines = [line for line in section.splitlines() if line.startswith("| ")]
    header = [c.strip() for c in lines[0].split("|")[1:-1]]
    rows = {}
    for line in lines[1:]:
        cells = [c.strip() for c in line.split("|")[1:-1]]
        rows[cells[0]] = dict(zip(header[1:], cells[1:]))
    return header[1:], rows


# the quick run fits every estimator at depths 1 and 3 beside the other libraries (about 80 s cold, most of it
# compiling); the default run keeps the script's one-estimator run below (test_a_missing_competitor_...)
@pytest.mark.slow
def test_quick_run_writes_markdown_and_json(accuracy, quick_run):
    text = (quick_run / "accuracy.md").read_text()
    data = json.loads((quick_run / "accuracy.json").read_text())
    meta, results = data["meta"], data["results"]
    assert meta["rounds"] == 20 and meta["repeats"] == 1 and meta["quick"]
    assert [d["name"] for d in meta["datasets"]] == accuracy.QUICK_DATASETS
    assert "cores" in text and "T = 20" in text and "untimed" in text
    for est, why in meta["skipped"].items():  # a library that is not installed is named, not an error
        assert f"Skipped {est}" in text and why
    for depth in accuracy.DEPTHS:
        header, rows = table_rows(text, depth)
        assert set(rows) == set(accuracy.QUICK_DATASETS)
        for name, cells in rows.items():
            for est in accuracy.FASTBOOST:
                cell = cells[est]
                if (depth > 1 and est in accuracy.STUMPS_ONLY) or (
                        est in accuracy.MULTICLASS_ONLY and accuracy.load(name, quick=True)[1].max() == 1):
                    assert cell == "–"
                    continue
                err = float(cell.split()[0].strip("*"))  # "3.50 (0.012 s)": one split, so no spread
                assert 0.0 <= err <= 100.0
                assert cell.endswith(" s)")
    assert results, "no fits recorded"
    for r in results:
        assert "failed" not in r, r
        assert 0.0 <= r["test_error"] <= 100.0
        assert r["fit_seconds"] > 0.0
        assert math.isfinite(r["test_error"])


@pytest.mark.slow  # the quick run above
def test_adaboost_error_equals_a_direct_fit(quick_run):
    """The recorded test error is that of fastboost's AdaBoost fitted here on the same split, data and parameters."""
    from sklearn.model_selection import train_test_split

    from fastboost import AdaBoostClassifier
    from fastboost.datasets import make_twonorm

    data = json.loads((quick_run / "accuracy.json").read_text())
    rec = next(r for r in data["results"]
               if r["dataset"] == "twonorm" and r["estimator"] == "AdaBoost" and r["depth"] == 1)
    X, y = make_twonorm(600, random_state=20111)  # the quick twonorm: 600 rows, the script's seed
    tr, te = train_test_split(np.arange(len(y)), test_size=1 / 3, random_state=rec["split_seed"], stratify=y)
    assert (len(tr), len(te)) == (rec["n_train"], rec["n_test"])
    clf = AdaBoostClassifier(n_estimators=20, max_depth=1, n_jobs=2, random_state=0).fit(X[tr], y[tr])
    error = 100.0 * np.mean(clf.predict(X[te]) != y[te])
    assert rec["test_error"] == pytest.approx(error, abs=1e-12)


def test_default_output_is_not_the_committed_docs(accuracy):
    out = pathlib.Path(accuracy.parse_args(["--quick"]).out)
    assert out.resolve() != (ROOT / "docs").resolve()
    assert "docs" not in out.parts
    assert pathlib.Path(accuracy.parse_args([]).out) == out


def test_a_missing_competitor_is_skipped_with_a_note(accuracy, tmp_path, monkeypatch):
    monkeypatch.setitem(accuracy.REQUIRES, "LightGBM", "no_such_module_for_this_test")
    argv = ["--quick", "--out", str(tmp_path), "--datasets", "twonorm", "--depths", "1",
            "--estimators", "AdaBoost", "LightGBM"]
    assert accuracy.main(argv) == 0
    text = (tmp_path / "accuracy.md").read_text()
    assert "Skipped LightGBM: not installed" in text
    header, rows = table_rows(text, 1)
    assert header == ["AdaBoost"]
    meta = json.loads((tmp_path / "accuracy.json").read_text())["meta"]
    assert list(meta["skipped"]) == ["LightGBM"]
