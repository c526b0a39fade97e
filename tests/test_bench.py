"""``fastboost bench`` smoke test: a tiny in-process run, its JSON and table; a missing competitor is skipped."""
import importlib.util
import json
import sys

import numpy as np
import pytest

from fastboost import cli

TINY = ["bench", "--n", "2000", "--d", "5", "--rounds", "5", "--repeat", "1", "--threads", "1",
        "--no-subprocess"]


def test_bench_tiny_run_writes_json_and_table(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "lightgbm", None)  # "import lightgbm" now fails as if not installed
    out = tmp_path / "bench.json"
    assert cli.main(TINY + ["--algorithms", "adaboost", "--out", str(out)]) == 0
    printed = capsys.readouterr().out

    payload = json.loads(out.read_text())
    for key in ("config", "data", "machine", "results", "skipped", "compile", "rss_method", "table"):
        assert key in payload
    assert payload["data"]["n_train"] == 2000 and payload["data"]["n_features"] == 5
    by_key = {r["key"]: r for r in payload["results"]}
    fb = by_key["fastboost-adaboost"]
    assert fb["status"] == "ok" and fb["rounds_run"] == 5
    for key in ("prep_s", "train_s", "per_round_s", "test_accuracy", "bandwidth", "floor_multiple", "runs"):
        assert key in fb
    assert fb["test_accuracy"] > 0.8
    sk = by_key["sklearn-adaboost"]  # scikit-learn is a dependency: always runs
    assert sk["status"] == "ok" and sk["prep_s"] is None and not sk["extrapolated"]

    skipped = {s["key"]: s["message"] for s in payload["skipped"]}
    assert "lightgbm" in skipped and "not installed" in skipped["lightgbm"]
    assert "lightgbm" not in by_key

    for r in (fb, sk):  # each round's end stamped: the early rounds' time; no late rounds in a 5-round fit
        assert 0.0 < r["early_per_round_s"] and r["late_per_round_s"] is None
    assert "per round, rounds 2-50 (ms, from each round's end time): " in printed
    assert "early-round ratios: sklearn AdaBoost/fastboost adaboost = " in printed
    assert payload["table"] in printed
    assert "fastboost AdaBoostClassifier" in printed and "sklearn AdaBoost/fastboost adaboost per-round =" in printed
    assert "skipped LightGBM" in printed
    if importlib.util.find_spec("matplotlib") is not None:
        assert (tmp_path / "bench.png").stat().st_size > 0


def test_bench_trim_runs_the_trimmed_algorithm_beside_the_untrimmed(tmp_path, capsys):
    out = tmp_path / "trim.json"
    assert cli.main(TINY + ["--algorithms", "adaboost", "--competitors", "none", "--rounds", "40", "--trim", "0.9",
                            "--no-plot", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    by_key = {r["key"]: r for r in json.loads(out.read_text())["results"]}
    plain, trimmed = by_key["fastboost-adaboost"], by_key["fastboost-adaboost-trim"]
    assert "weight_trim_rate" not in plain["params"] and trimmed["params"]["weight_trim_rate"] == 0.9
    assert 0.0 < trimmed["rows_read_share"] < 1.0  # uniform weights first (every row), fewer later
    assert f"learner read {100 * trimmed['rows_read_share']:.1f} % of the rows" in printed
    assert "fastboost adaboost trim 0.9/fastboost adaboost per-round =" in printed


def _exits_with_one_line(capsys, argv, message):
    """``fastboost bench argv`` ends with exit status 2 and one error line on stderr that says ``message`` (after
    the progress lines, for a data file)."""
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if "error" in line]
    assert exc.value.code == 2 and len(errors) == 1 and err.endswith(errors[0] + "\n"), err
    assert errors[0].startswith("fastboost bench: error: ") and message in errors[0] and "Traceback" not in err, err


@pytest.mark.parametrize("argv, message", [
    (["--trim", "0"], "--trim must be in (0, 1]"),
    (["--trim", "1.5"], "--trim must be in (0, 1]"),
    (["--trim", "0.9", "--bins", "exact"], "--trim goes with the per-round benchmark"),
    (["--bins", "300"], "--bins must be in [2, 255]"),
    (["--rounds", "0"], "--depth, --rounds, --repeat and --threads must be >= 1"),
    (["--within", "0.2"], "--within applies to --curve only"),
    (["--data", "a.csv", "b.csv"], "--data takes one file"),
    (["--algorithms", "adaboost,nosuchboost"], "no 'nosuchboost' estimator (available: "),
    (["--curve", "--algorithms", "nosuchboost"], "no 'nosuchboost' estimator"),
    (["--competitors", "catboost"], "unknown competitor(s) ['catboost']"),
    (["--contention", "--contention-procs", "0"], "--contention-procs must be >= 1"),
    (["--contention", "--no-subprocess"], "--contention runs every fit in a child process"),
])
def test_bad_arguments_are_one_line_and_exit_2(argv, message, capsys):
    """Like every fastboost command's user errors (the --curve ones: test_bench_curve)."""
    _exits_with_one_line(capsys, TINY[:-1] + ["--no-plot"] + argv, message)  # (--contention refuses --no-subprocess)


def test_bad_data_files_are_one_line_and_exit_2(tmp_path, capsys):
    three = tmp_path / "three.csv"
    three.write_text("a,b,label\n" + "".join(f"{i},{i % 7},{i % 3}\n" for i in range(30)))
    _exits_with_one_line(capsys, TINY + ["--data", str(three), "--no-plot"], "exactly 2 classes")
    two = tmp_path / "two.csv"
    two.write_text("a,b,label\n" + "".join(f"{i},{i % 7},{i % 2}\n" for i in range(30)))
    _exits_with_one_line(capsys, TINY + ["--data", str(two), "--n-test", "30", "--no-plot"],
                         "--n-test 30 leaves no training rows")
    _exits_with_one_line(capsys, TINY + ["--data", str(tmp_path / "missing.csv"), "--no-plot"], "missing.csv")


@pytest.mark.slow  # an end-to-end bench run: child processes that compile the tree kernels afresh
def test_bench_depth_above_one_and_extrapolated_competitor(tmp_path, capsys):
    from fastboost import AdaBoostClassifier

    out = tmp_path / "deep.json"
    cli.main(TINY + ["--depth", "2", "--algorithms", "adaboost", "--competitors", "sklearn-adaboost", "--n", "500",
                     "--slow-rows", "400", "--slow-rounds", "2", "--no-plot", "--out", str(out)])
    payload = json.loads(out.read_text())
    by_key = {r["key"]: r for r in payload["results"]}
    sk = by_key["sklearn-adaboost"]
    assert sk["rounds_run"] == 2 and sk["extrapolated"] and sk["params"]["estimator"].endswith("(max_depth=2)")
    assert "(extrapolated from 2 rounds)" in capsys.readouterr().out
    if "max_depth" in AdaBoostClassifier().get_params():  # trees: fastboost runs at depth 2 too
        assert by_key["fastboost-adaboost"]["params"]["max_depth"] == 2
    else:  # stumps only: skipped with a message, the competitors still run
        skipped = {s["key"]: s["message"] for s in payload["skipped"]}
        assert "max_depth" in skipped["fastboost-adaboost"] and "fastboost-adaboost" not in by_key


def test_bench_skips_a_stump_only_estimator_at_depth_above_one(tmp_path, capsys, monkeypatch):
    from sklearn.base import BaseEstimator

    from fastboost.bench import adapters

    class StumpsOnly(BaseEstimator):
        def __init__(self, n_estimators=50, max_bins=255, n_jobs=None, random_state=None):
            self.n_estimators, self.max_bins = n_estimators, max_bins
            self.n_jobs, self.random_state = n_jobs, random_state

    monkeypatch.setattr(adapters, "fastboost_class", lambda name: (StumpsOnly, None))
    out = tmp_path / "stumps.json"
    cli.main(TINY + ["--depth", "3", "--algorithms", "stumpy", "--competitors", "none", "--no-plot", "--out", str(out)])
    payload = json.loads(out.read_text())
    assert payload["results"] == []
    (skip,) = payload["skipped"]
    assert skip["key"] == "fastboost-stumpy" and "no max_depth parameter" in skip["message"]
    assert "ratios: none" in capsys.readouterr().out


def test_scatter_probe_times_the_updates_it_makes():
    from fastboost.bench.measure import scatter_probe

    r = scatter_probe(200_000, 1, n_features=4, runs=2, min_seconds=0.001)
    assert r["updates"] == 200_000 and r["threads"] == 1
    assert 0 < r["best_s_per_update"] <= r["s_per_update"] < float("inf")


def test_phase_round_seconds_are_the_mean_round_times_of_rounds_2_to_50_and_after_100():
    from fastboost.bench.measure import phase_round_seconds

    ends = np.cumsum(np.r_[np.full(50, 2.0), np.full(50, 3.0), np.full(100, 5.0)])  # round t ends at ends[t - 1]
    assert phase_round_seconds(ends) == (2.0, 5.0)
    assert phase_round_seconds(ends[:149]) == (2.0, None)  # late rounds from 150 rounds on
    assert phase_round_seconds(ends[:10]) == (2.0, None)
    assert phase_round_seconds(ends[:1]) == (None, None)
    assert phase_round_seconds(np.r_[1.0, 1.5, 4.5]) == (1.75, None)  # rounds 2 and 3: (4.5 - 1.0) / 2
