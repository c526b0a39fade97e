"""scripts/bench_lp.py in its quick mode: the per-column split adds up to the fit, the warm-started and
from-scratch solves reach the same LP value at every k, the Markdown says what the JSON says, and the
fit it reports is the plain LPBoostClassifier fit. No timing is compared with another."""
import json
import statistics

import numpy as np
import pytest
from conftest import load_script

pytest.importorskip("highspy")


@pytest.fixture(scope="module")
def bench_lp():
    return load_script("bench_lp")


@pytest.fixture(scope="module")
def quick_run(bench_lp, tmp_path_factory):
    out = tmp_path_factory.mktemp("bench_lp")
    assert bench_lp.main(["--quick", "--out", str(out)]) == 0
    return json.loads((out / "bench_lp.json").read_text()), (out / "bench_lp.md").read_text()


def markdown_table(text, heading):
    """The rows of the first table under ``## heading``, as {header cell: cell} dicts."""
    section = text.split(f"\n## {heading}\n")[1].split("\n## ")[0]
    lines = [line for line in section.splitlines() if line.startswith("| ")]
    header = [c.strip() for c in lines[0].split("|")[1:-1]]
    return [dict(zip(header, [c.strip() for c in line.split("|")[1:-1]])) for line in lines[1:]]


def shows(cell, value):
    """The table cell is ``value`` as printed: equal up to the rounding of its last digit; '–' for None."""
    if value is None:
        return cell == "–"
    if "e" in cell:  # 2.3e-15
        return float(cell) == pytest.approx(value, rel=0.05, abs=1e-300)
    decimals = len(cell.split(".")[1]) if "." in cell else 0
    return abs(float(cell) - value) <= 0.5 * 10.0 ** -decimals + 1e-9


def rows_of(cell):
    return int(cell.replace(" ", ""))


def test_columns_stay_under_the_cap_and_the_split_adds_up_to_the_fit(quick_run):
    data, _ = quick_run
    cfg = data["meta"]["config"]
    assert [s["n"] for s in data["sizes"]] == cfg["sizes"]
    for s in data["sizes"]:
        assert not s["killed"] and s["exit_code"] == 0
        assert s["stop"] in ("rule", "cap", "budget")
        assert 1 <= s["columns"] <= cfg["columns"]
        assert s["stop"] != "cap" or s["columns"] == cfg["columns"]
        assert 1 <= s["kept_voters"] <= s["columns"]
        per_column = s["per_column"]
        assert [c["column"] for c in per_column] == list(range(1, s["columns"] + 1))
        lp = [c["lp_seconds"] for c in per_column]
        learner = [c["learner_seconds"] for c in per_column]
        assert min(lp) >= 0.0 and min(learner) >= 0.0
        # the columns' LP times are the fit's lp_time_, and with the learner's they fit inside fit_time_
        assert sum(lp) == pytest.approx(s["lp_seconds"], abs=1e-9)
        assert sum(lp) + sum(learner) <= s["fit_seconds"] - s["bin_seconds"] + 1e-9
        assert s["learner_seconds"] == pytest.approx(s["fit_seconds"] - s["bin_seconds"] - s["lp_seconds"])
        assert (s["lp_ms_per_column"] + s["learner_ms_per_column"]) * s["columns"] <= 1e3 * s["fit_seconds"] + 1e-6
        assert s["lp_ms_per_column"] * s["columns"] == pytest.approx(1e3 * s["lp_seconds"])
        # the master's value never falls as columns are added, and the last one is the model's
        values = np.array([c["lp_value"] for c in per_column])
        assert np.all(np.diff(values) >= -1e-9)
        assert values[-1] == pytest.approx(s["lp_value"], abs=1e-12)
        assert s["windows"][-1]["last"] == s["columns"]
        assert sum(w["last"] - w["first"] + 1 for w in s["windows"]) == s["columns"]
        assert s["rss_before_fit_mb"] > 0 and s["fit_peak_rss_mb"] >= s["rss_before_fit_mb"] - 1.0


def test_warm_and_scratch_solves_reach_the_same_lp_value_at_every_k(bench_lp, quick_run):
    data, _ = quick_run
    cfg = data["meta"]["config"]
    records = data["warm_vs_scratch"]
    assert {r["n"] for r in records} == set(cfg["warm_sizes"])
    for n in cfg["warm_sizes"]:
        size = next(s for s in data["sizes"] if s["n"] == n)
        ks = [r["k"] for r in records if r["n"] == n]
        assert ks == bench_lp.warm_ks(cfg["ks"], size["columns"]) and ks
        assert max(ks) < size["columns"]
    for r in records:
        assert "skipped" not in r
        for other in ("scratch_value", "cold_value", "fit_value"):
            assert abs(r["warm_value"] - r[other]) <= 1e-7, (r["k"], other)
        assert r["agree"]
        assert abs(r["warm_beta"] - r["warm_value"]) <= 1e-7  # strong duality
        assert len(r["warm_seconds"]) == len(r["scratch_seconds"]) == r["runs"] == cfg["repeat"]
        medians = statistics.median(r["scratch_seconds"]), statistics.median(r["warm_seconds"])
        assert r["ratio"] == pytest.approx(medians[0] / medians[1])


def test_markdown_tables_say_what_the_json_says(quick_run):
    data, text = quick_run
    assert data["meta"]["command"] in text
    per_size = markdown_table(text, "Time per column")
    assert [rows_of(row["rows"]) for row in per_size] == [s["n"] for s in data["sizes"]]
    cells = {"fit s": "fit_seconds", "binning s": "bin_seconds", "LP s": "lp_seconds", "learner s": "learner_seconds",
             "LP ms/column": "lp_ms_per_column", "learner ms/column": "learner_ms_per_column",
             "RSS before fit MB": "rss_before_fit_mb", "peak RSS in fit MB": "fit_peak_rss_mb", "LP value": "lp_value"}
    for row, s in zip(per_size, data["sizes"]):
        assert int(row["columns"]) == s["columns"] and int(row["kept voters"]) == s["kept_voters"]
        for header, key in cells.items():
            assert shows(row[header], s[key]), (header, row[header], s[key])

    growth = markdown_table(text, "LP time per column as the master grows")
    expected = [(s["n"], w) for s in data["sizes"] for w in s["windows"]]
    assert len(growth) == len(expected)
    for row, (n, w) in zip(growth, expected):
        assert rows_of(row["rows"]) == n and row["columns"] == f"{w['first']}–{w['last']}"
        assert shows(row["LP ms/column"], w["lp_ms"]) and shows(row["learner ms/column"], w["learner_ms"])
        assert shows(row["HiGHS solve ms/column"], w["solve_ms"])
        assert shows(row["simplex iterations/solve"], w["simplex_iterations"])

    warm = markdown_table(text, "Warm-started round against linprog from scratch")
    assert len(warm) == len(data["warm_vs_scratch"])
    for row, r in zip(warm, data["warm_vs_scratch"]):
        assert rows_of(row["rows"]) == r["n"] and int(row["k"]) == r["k"] and int(row["runs"]) == r["runs"]
        assert shows(row["warm round ms"], r["warm_ms"]) and shows(row["linprog from scratch ms"], r["scratch_ms"])
        assert shows(row["HiGHS from scratch ms"], r["cold_highs_ms"])
        assert shows(row["fit's round k+1 LP ms"], r["fit_round_lp_ms"])
        assert shows(row["linprog / warm"], r["ratio"]) and shows(row["value difference"], r["value_difference"])
        assert row["agree to 1e-7"] == "yes"


@pytest.mark.filterwarnings("ignore:LPBoostClassifier. the soft-margin LP's value")  # 20 columns on 1 000 rows
def test_the_reported_fit_is_a_plain_lpboost_fit(quick_run):
    """The benchmark's fit (with its logging callback) reaches the LP value of LPBoostClassifier fitted
    directly with the same parameters on the same data."""
    from fastboost import LPBoostClassifier
    from fastboost.datasets import make_twonorm

    data, _ = quick_run
    cfg = data["meta"]["config"]
    s = data["sizes"][0]
    X, y = make_twonorm(s["n"], n_features=cfg["n_features"], random_state=cfg["seed"])
    clf = LPBoostClassifier(n_estimators=cfg["columns"], nu=cfg["nu"]).fit(X.astype(np.float32), y)
    assert clf.objective_ == pytest.approx(s["lp_value"], abs=1e-9)
    assert clf.n_estimators_ == s["kept_voters"]
