"""scripts/reproduce.py on a tiny setting: the protocols run end to end and write their Markdown tables."""
import json
import pathlib
import sys

import numpy as np
import pytest

SCRIPTS = pathlib.Path(__file__).resolve().parents[1] / "scripts"


def _reproduce():
    sys.path.insert(0, str(SCRIPTS))
    try:
        import reproduce
    finally:
        sys.path.remove(str(SCRIPTS))
    return reproduce


def _cells(line):
    return [c.strip().strip("*") for c in line.split("|")[1:-1]]


@pytest.mark.slow  # the whole stump protocol, 6 runs of every booster (about 40 s)
def test_reproduce_tiny(tmp_path, capsys):
    reproduce = _reproduce()
    out = tmp_path / "repro.md"
    argv = ["--tables", "stumps", "--repeats", "3", "--quick", "--workers", "1", "--patience", "20",
            "--max-rounds", "200", "--datasets", "twonorm", "digits38", "--out", str(out)]
    assert reproduce.main(argv) == 0
    text = out.read_text()
    for booster in reproduce.BOOSTERS:
        assert booster in text
    rows = [line for line in text.splitlines() if line.startswith("| twonorm |") or line.startswith("| digits38 |")]
    assert len(rows) >= 2
    table_row = rows[0].split("|")[2:-1]
    assert len(table_row) == len(reproduce.BOOSTERS)
    assert sum("**" in cell for cell in table_row) == 1, "exactly one best booster per data set"
    results = json.loads(out.with_suffix(".json").read_text())
    assert len(results) == 6
    for r in results:
        for booster in reproduce.BOOSTERS:
            assert 0.0 <= r[booster]["test_error"] <= 1.0
            assert r[booster]["rounds"] <= 200
    assert "[12/12]" in capsys.readouterr().out  # 6 jobs of the five boosters, 6 of RLP/RQP


def test_quick_run_of_every_table(tmp_path):
    """Table 1 with its RLP/RQP columns, Table 2 (trees) and the QuadBoost table, in quick mode."""
    reproduce = _reproduce()
    out = tmp_path / "repro.md"
    argv = ["--quick", "--repeats", "2", "--lp-repeats", "1", "--quad-splits", "2", "--workers", "1",
            "--patience", "5", "--max-rounds", "20", "--datasets", "twonorm", "wine", "--out", str(out)]
    assert reproduce.main(argv) == 0
    lines = out.read_text().splitlines()
    headers = [i for i, line in enumerate(lines) if line.startswith("| data set | AdaBoost |")]
    assert len(headers) == 2, "Table 1 and Table 2"
    table1, table2 = (_cells(lines[i]) for i in headers)
    assert table1[1:] == reproduce.BOOSTERS and {"RLP-Boost", "RQP-Boost"} <= set(table1)
    assert table2[1:] == reproduce.CART_BOOSTERS
    for i in headers:
        row = _cells(lines[i + 2])
        assert row[0] == "twonorm" and len(row) == len(_cells(lines[i]))
        means = [float(c.split("±")[0]) for c in row[1:]]
        assert all(0.0 <= m <= 100.0 for m in means)
        assert sum("**" in c for c in lines[i + 2].split("|")) == 1
    paper = [_cells(line) for line in lines if line.startswith("| twonorm | R")]
    paper = [c for c in paper if len(c) == 4]  # the paper-vs-ours rows (the choice tables have 5 columns)
    assert [c[1] for c in paper] == ["RLP-Boost", "RQP-Boost"] * 2
    assert [c[2] for c in paper] == ["3.29±0.1", "3.07±0.1", "3.50±0.1", "3.38±0.1"]
    quad = [_cells(line) for line in lines if line.startswith("| wine |")]
    assert [q[1] for q in quad] == ["paper", "ours, split 0", "ours, mean of 2"]
    assert [float(v) for v in quad[0][2:]] == reproduce.PAPER_QB["wine"]
    assert all(0.0 <= float(v.split("±")[0]) <= 1.0 for q in quad[1:] for v in q[2:])

    results = json.loads(out.with_suffix(".json").read_text())
    by_table = {t: [r for r in results if r["table"] == t] for t in reproduce.TABLES}
    assert [(r["dataset"], r["repeat"]) for r in by_table["stumps"]] == [("twonorm", 0), ("twonorm", 1)]
    assert set(reproduce.REWEIGHTED) <= set(by_table["stumps"][0]), "RLP/RQP joined to repeat 0's record"
    assert not set(reproduce.REWEIGHTED) & set(by_table["stumps"][1]), "and run on --lp-repeats repeats only"
    assert by_table["stumps"][0]["RLP-Boost"]["choice"].startswith("nu=")
    assert by_table["stumps"][0]["RQP-Boost"]["choice"].startswith("C=")
    assert len(by_table["cart"]) == 2 and len(by_table["quadboost"]) == 2
    for r in results:
        for key, v in r.items():
            if isinstance(v, dict):
                assert 0.0 <= v["test_error"] <= 1.0, (r["table"], key)
    wine = by_table["quadboost"][0]
    assert wine["n_train"] == 89 and wine["n_test"] == 89
    assert set(reproduce.QB_BOOSTERS) <= set(wine)


def test_staged_margins_match_the_estimators():
    """The QuadBoost table's grouped staged margins against the estimators' own staged_decision_function."""
    import fastboost as fb

    reproduce = _reproduce()
    X, y = reproduce.load("wine")
    C = reproduce.stump_codes(X[:100], X)
    assert C.min() == 0 and C.max() == 10 and np.all(C == np.round(C))
    # codes are monotone in each attribute
    for a in range(X.shape[1]):
        order = np.argsort(X[:, a], kind="stable")
        assert np.all(np.diff(C[order, a]) >= 0)
    for model in [fb.AdaBoostClassifier(60), fb.QuadBoostClassifier(60, penalty="l2", lam=3.0, reweight_at_end=False)]:
        model.fit(C[:100], y[:100])
        staged = list(model.staged_decision_function(C[100:]))
        rounds = [1, 7, 30, 60, 500]
        got = reproduce.staged_margins(model, C[100:], rounds)
        for k, T in enumerate(rounds):
            np.testing.assert_allclose(got[k], staged[min(T, len(staged)) - 1], atol=1e-12)


def test_quick_run_writes_outside_the_committed_docs(tmp_path, monkeypatch):
    reproduce = _reproduce()
    monkeypatch.chdir(tmp_path)
    argv = ["--repeats", "1", "--quick", "--workers", "1", "--patience", "5", "--max-rounds", "20",
            "--datasets", "digits38"]
    assert reproduce.main(argv) == 0
    assert (tmp_path / "reproduction-results" / "reproduction.md").exists()
    assert not (tmp_path / "docs").exists()
    assert reproduce.main([*argv, "--out", "elsewhere/"]) == 0  # a directory gets reproduction.md
    assert (tmp_path / "elsewhere" / "reproduction.md").exists()
