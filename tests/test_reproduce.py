"""scripts/reproduce.py: its pieces (the QuadBoost protocol's stump codes, the staged scores its
T-grids rely on) and, on a tiny setting, every protocol end to end."""
import json

import numpy as np
import pytest
from conftest import load_script

import fastboost as fb
from fastboost.datasets import make_twonorm


@pytest.fixture(scope="module")
def reproduce():
    return load_script("reproduce")


def test_stump_codes_cut_tanh_features_at_ten_even_thresholds(reproduce):
    rng = np.random.default_rng(0)
    X_train = rng.normal(3.0, 2.0, (60, 4)) * np.array([1.0, 10.0, 0.1, 1.0])
    X_train[:, 3] = 5.0  # a constant feature: one code on the training rows
    X = np.vstack([X_train, rng.normal(3.0, 8.0, (40, 4))])  # test rows beyond the training range too
    codes = reproduce.stump_codes(X_train, X)
    assert codes.shape == X.shape and codes.min() >= 0 and codes.max() <= 10
    assert np.all(codes[:60, 3] == 0)
    for a in range(3):
        z = np.tanh((X[:, a] - X_train[:, a].mean()) / X_train[:, a].std())
        zt = z[:60]
        cuts = zt.min() + (zt.max() - zt.min()) * np.arange(1, 11) / 11
        np.testing.assert_array_equal(codes[:, a], (z[:, None] > cuts[None]).sum(axis=1))
        order = np.argsort(X[:, a], kind="stable")  # monotone in x: a stump on codes is a threshold on x
        assert np.all(np.diff(codes[order, a]) >= 0)
        assert codes[X[:, a].argmin(), a] == 0 and codes[X[:, a].argmax(), a] == 10


@pytest.mark.parametrize("make", [
    lambda t: fb.AdaBoostClassifier(t, n_jobs=1),
    lambda t: fb.QuadBoostClassifier(t, penalty="l2", lam=3.0, reweight_at_end=False, n_jobs=1),
])
def test_staged_errors_are_the_errors_of_shorter_fits(reproduce, make):
    X, y = make_twonorm(300, random_state=1)
    Xv, yv = make_twonorm(200, random_state=2)
    big = make(40).fit(X, y)
    errors = reproduce.staged_errors(big, Xv, yv, [1, 7, 40, 500])
    for t in (1, 7, 40):
        assert errors[t] == np.mean(make(t).fit(X, y).predict(Xv) != yv)
    assert errors[500] == errors[40]  # beyond the last round: the whole model


@pytest.mark.slow  # every protocol on tiny data and grids (about 15 s)
def test_reproduce_tiny(reproduce, tmp_path, capsys):
    out = tmp_path / "repro.md"
    argv = ["--repeats", "2", "--quick", "--workers", "1", "--patience", "10", "--max-rounds", "100",
            "--datasets", "twonorm", "digits38", "wine", "--out", str(out)]
    assert reproduce.main(argv) == 0
    text = out.read_text()
    results = json.loads(out.with_suffix(".json").read_text())
    expected = {"stumps": ["twonorm", "digits38"], "cart": ["twonorm"], "quadboost": ["wine"]}
    assert len(results) == 2 * sum(len(v) for v in expected.values())
    for key, names in expected.items():
        proto = reproduce.PROTOCOLS[key]
        section = text.split(f"## {proto.title}")[1].split("\n## ")[0]
        for name in names:
            row = next(line for line in section.splitlines() if line.startswith(f"| {name} |"))
            cells = row.split("|")[2:-1]
            assert len(cells) == len(proto.boosters)
            assert sum("**" in cell for cell in cells) == 1, "exactly one best booster per data set"
            runs = [r for r in results if r["protocol"] == key and r["dataset"] == name]
            assert sorted(r["repeat"] for r in runs) == [0, 1]
            for booster in proto.boosters:
                errors = np.array([r[booster]["test_error"] for r in runs])
                assert np.all((errors >= 0) & (errors <= 1))
                mean = float(cells[proto.boosters.index(booster)].strip(" *").split(" ± ")[0])
                assert mean == pytest.approx(100 * errors.mean(), abs=0.006)
                if key != "quadboost":
                    assert all(r[booster]["rounds"] <= 100 for r in runs)
    assert "| twonorm | RQP-Boost | 3.07±0.1 |" in text  # the paper's numbers beside ours
    assert "| wine | LPBoost | 6.7 |" in text
    assert "[8/8]" in capsys.readouterr().out


def test_quick_run_writes_outside_the_committed_docs(reproduce, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    argv = ["--repeats", "1", "--quick", "--workers", "1", "--patience", "5", "--max-rounds", "20",
            "--protocols", "stumps", "--datasets", "digits38"]
    assert reproduce.main(argv) == 0
    assert (tmp_path / "reproduction-results" / "reproduction.md").exists()
    assert not (tmp_path / "docs").exists()
    assert reproduce.main([*argv, "--out", "elsewhere/"]) == 0  # a directory gets reproduction.md
    assert (tmp_path / "elsewhere" / "reproduction.md").exists()
