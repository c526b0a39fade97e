"""scripts/reproduce.py on a tiny setting: the protocol runs end to end and writes its Markdown table."""
import json
import pathlib
import sys

import pytest

SCRIPTS = pathlib.Path(__file__).resolve().parents[1] / "scripts"


@pytest.mark.slow  # the whole reproduction protocol, 6 runs of every booster (about 35 s)
def test_reproduce_tiny(tmp_path, capsys):
    sys.path.insert(0, str(SCRIPTS))
    try:
        import reproduce
    finally:
        sys.path.remove(str(SCRIPTS))
    out = tmp_path / "repro.md"
    argv = ["--repeats", "3", "--quick", "--workers", "1", "--patience", "20", "--max-rounds", "200",
            "--datasets", "twonorm", "digits38", "--out", str(out)]
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
    assert "[6/6]" in capsys.readouterr().out


def test_quick_run_writes_outside_the_committed_docs(tmp_path, monkeypatch):
    sys.path.insert(0, str(SCRIPTS))
    try:
        import reproduce
    finally:
        sys.path.remove(str(SCRIPTS))
    monkeypatch.chdir(tmp_path)
    argv = ["--repeats", "1", "--quick", "--workers", "1", "--patience", "5", "--max-rounds", "20",
            "--datasets", "digits38"]
    assert reproduce.main(argv) == 0
    assert (tmp_path / "reproduction-results" / "reproduction.md").exists()
    assert not (tmp_path / "docs").exists()
    assert reproduce.main([*argv, "--out", "elsewhere/"]) == 0  # a directory gets reproduction.md
    assert (tmp_path / "elsewhere" / "reproduction.md").exists()
