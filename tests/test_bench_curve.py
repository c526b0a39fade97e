"""``fastboost bench --curve``: the time-to-accuracy arithmetic on hand-checkable curves, a tiny in-process run
(curves, errors against an independent refit, the table, the JSON record), bad arguments, a missing competitor."""
import importlib.util
import json
import sys

import numpy as np
import pytest

from fastboost import AdaBoostClassifier, cli
from fastboost.bench.adapters import algorithm_params
from fastboost.bench.curve import (
    CURVE_DATASETS,
    Curve,
    default_algorithms,
    interpolate_round_times,
    make_curve_data,
    summarize,
    time_to_reach,
    time_to_within,
)
from fastboost.bench.curve_report import format_curve_table

N, N_TEST, ROUNDS = 3000, 2000, 30
TINY = ["bench", "--curve", "--n", str(N), "--n-test", str(N_TEST), "--rounds", str(ROUNDS), "--threads", "1",
        "--no-subprocess"]


def _curve(seconds, errors):
    return Curve(np.arange(1, len(errors) + 1), np.asarray(seconds, float), np.asarray(errors, float))


# ================================================================================== arithmetic
def test_time_to_within_on_a_hand_checked_curve():
    c = _curve([0.1, 0.2, 0.4, 0.8, 1.6, 3.2], [0.30, 0.10, 0.0125, 0.0109, 0.0100, 0.0102])
    s = time_to_within(c, 0.001)
    assert s["best_error"] == 0.0100 and s["best_round"] == 5 and s["best_seconds"] == 1.6
    assert s["round_to_within"] == 4 and s["seconds_to_within"] == 0.8 and s["error_at_within"] == 0.0109
    # a looser tolerance is reached sooner; a zero one at the best itself
    assert time_to_within(c, 0.003)["seconds_to_within"] == 0.4
    assert time_to_within(c, 0.0)["seconds_to_within"] == 1.6
    # exactly 0.1 points above the best counts, although 1003/1e5 + 0.001 > 1103/1e5 in floating point
    assert 1003 / 1e5 + 0.001 > 1103 / 1e5
    c = _curve([1.0, 2.0, 3.0], [2000 / 1e5, 1103 / 1e5, 1003 / 1e5])
    assert time_to_within(c, 0.001)["seconds_to_within"] == 2.0
    assert time_to_reach(c, 0.0105) == (3, 3.0)
    assert time_to_reach(c, 0.009) == (None, None)
    with pytest.raises(ValueError, match="empty"):
        time_to_within(_curve([], []), 0.001)


def test_interpolate_round_times_between_callback_points():
    got = interpolate_round_times([(0, 1.0), (4, 3.0), (6, 4.0)], 6)
    np.testing.assert_allclose(got, [1.5, 2.0, 2.5, 3.0, 3.5, 4.0])
    for bad in ([(1, 1.0), (6, 2.0)], [(0, 1.0), (4, 2.0), (4, 3.0), (6, 4.0)], [(0, 1.0), (5, 2.0)]):
        with pytest.raises(ValueError, match="round timestamps"):
            interpolate_round_times(bad, 6)


def _result(key, library, seconds, errors):
    return {"key": key, "library": library, "label": key, "short": key, "status": "ok", "capped": False,
            "rounds_run": len(errors), "curve": {"rounds": list(range(1, len(errors) + 1)), "seconds": seconds,
                                                 "test_error": errors}}


def test_summarize_ratios_against_fastboost():
    fb = _result("fastboost-adaboost", "fastboost", [0.5, 1.0, 2.0, 4.0], [0.20, 0.05, 0.021, 0.020])
    lgb = _result("lightgbm", "lightgbm", [1.0, 3.0, 5.0, 9.0], [0.30, 0.04, 0.0305, 0.030])
    xgb = _result("xgboost", "xgboost", [1.0, 2.0, 3.0, 4.0], [0.40, 0.02, 0.018, 0.010])
    failed = {"key": "sklearn-hgb", "library": "sklearn-hgb", "label": "HGB", "status": "failed", "message": "x"}
    results = [fb, lgb, xgb, failed]
    assert summarize(results, 0.001) == "fastboost-adaboost"
    # fastboost: best 2.0% at 4 s, within 0.1 points (2.1%) at 2 s
    assert fb["summary"]["seconds_to_within"] == 2.0 and fb["summary"]["ratio_to_reference"] == 1.0
    # LightGBM: best 3.0%, within 0.1 points (3.05% <= 3.1%) at 5 s -> 2.5x; never reaches fastboost's 2.1%
    s = lgb["summary"]
    assert (s["best_error"], s["seconds_to_within"], s["ratio_to_reference"]) == (0.030, 5.0, 2.5)
    assert s["seconds_to_reference_target"] is None and s["reference_target_ratio"] is None
    # XGBoost: best 1.0% only at 4 s (2.0x), but fastboost's 2.1% already at 2 s (1.0x)
    s = xgb["summary"]
    assert (s["seconds_to_within"], s["ratio_to_reference"]) == (4.0, 2.0)
    assert s["round_to_reference_target"] == 2 and s["seconds_to_reference_target"] == 2.0
    assert s["reference_target_ratio"] == 1.0
    assert "summary" not in failed

    payload = {"config": {"bins": 255, "threads": 2, "gbm_learning_rate": 0.1}, "within": 0.001,
               "machine": {"cpu_model": "cpu", "cores_available": 2, "logical_cores": 2, "total_ram_gib": 1,
                           "versions": {}},
               "datasets": [{"name": "twonorm", "depth": 1, "rounds": 4, "reference": "fastboost-adaboost",
                             "data": {"n_train": 10, "n_test": 10, "n_features": 2, "dtype": "float64",
                                      "n_classes": 2}, "results": results}],
               "skipped": [], "notes": ["n"]}
    table = format_curve_table(payload)
    assert ("lightgbm 2.50× (best 1.00 points above fastboost's); xgboost 2.00× (best 1.00 points below "
            "fastboost's)") in table
    lgb_row = next(line for line in table.splitlines() if line.startswith("lightgbm "))
    assert "5.000 (3)" in lgb_row and "never" in lgb_row and "3.00%" in lgb_row

    assert summarize([lgb], 0.001) is None  # no fastboost: no ratios
    assert lgb["summary"]["ratio_to_reference"] is None


def test_race_to_each_competitors_best_takes_the_first_fastboost_setting_to_get_there():
    fb = _result("fastboost-adaboost", "fastboost", [0.5, 1.0, 2.0, 4.0], [0.20, 0.05, 0.021, 0.020])
    real = _result("fastboost-real", "fastboost", [0.4, 0.8, 1.6, 3.2], [0.10, 0.04, 0.015, 0.009])
    lgb = _result("lightgbm", "lightgbm", [1.0, 3.0, 5.0, 9.0], [0.30, 0.04, 0.0305, 0.030])
    xgb = _result("xgboost", "xgboost", [1.0, 2.0, 3.0, 4.0], [0.40, 0.02, 0.018, 0.010])
    hgb = _result("sklearn-hgb", "sklearn-hgb", [1.0, 2.0], [0.005, 0.004])
    quick = _result("sklearn-adaboost", "sklearn-adaboost", [0.1, 0.2], [0.03, 0.03])
    summarize([fb, real, lgb, xgb, hgb, quick], 0.001)
    assert "race" not in fb["summary"] and "race" not in real["summary"]
    # LightGBM's 3.1%: adaboost at 2.0 s, real at 1.6 s (0.015), LightGBM itself at 5 s
    race = lgb["summary"]["race"]
    assert race["target_error"] == pytest.approx(0.031) and race["competitor_s"] == 5.0
    assert (race["fastboost_key"], race["fastboost_round"], race["fastboost_s"], race["first"]) == (
        "fastboost-real", 3, 1.6, "fastboost")
    # XGBoost's 1.1%: only real gets there (3.2 s), before XGBoost (4 s)
    assert (xgb["summary"]["race"]["fastboost_key"], xgb["summary"]["race"]["fastboost_s"],
            xgb["summary"]["race"]["first"]) == ("fastboost-real", 3.2, "fastboost")
    # HGB's 0.5%: no fastboost curve gets there
    assert hgb["summary"]["race"]["fastboost_s"] is None and hgb["summary"]["race"]["first"] == "never"
    # a competitor at its own 3.1% after 0.1 s is first
    assert quick["summary"]["race"]["first"] == "competitor"
    payload = {"config": {"bins": 255, "threads": 2, "gbm_learning_rate": 0.1}, "within": 0.001,
               "machine": {"cpu_model": "cpu", "cores_available": 2, "logical_cores": 2, "total_ram_gib": 1,
                           "versions": {}},
               "datasets": [{"name": "twonorm", "depth": 1, "rounds": 4, "reference": "fastboost-adaboost",
                             "data": {"n_train": 10, "n_test": 10, "n_features": 2, "dtype": "float64",
                                      "n_classes": 2}, "results": [fb, real, lgb, xgb, hgb, quick]}],
               "skipped": [], "notes": ["n"]}
    line = next(x for x in format_curve_table(payload).splitlines() if x.startswith("first to each"))
    assert "lightgbm 3.10%: fastboost-real 1.600 s, lightgbm 5.000 s (fastboost first)" in line
    assert "sklearn-hgb 0.50%: no fastboost model, sklearn-hgb 1.000 s (fastboost never gets there)" in line
    assert "sklearn-adaboost 3.10%: fastboost-real 1.600 s, sklearn-adaboost 0.100 s (sklearn-adaboost first)" in line


# ================================================================================== a tiny run
@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    """Twonorm and waveform, 3000 rows, 30 rounds, in this process; XGBoost blocked as if not installed;
    scikit-learn's AdaBoost capped at 5 rounds (--slow-rows 1000)."""
    out = tmp_path_factory.mktemp("curve") / "curve.json"
    mp = pytest.MonkeyPatch()
    mp.setitem(sys.modules, "xgboost", None)  # "import xgboost" now fails as if not installed
    try:
        import contextlib
        import io

        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            code = cli.main(TINY + ["--data", "twonorm,waveform", "--slow-rows", "1000", "--slow-rounds", "5",
                                    "--out", str(out)])
    finally:
        mp.undo()
    return code, json.loads(out.read_text()), buf.getvalue(), out


def test_curve_run_writes_json_table_and_chart(tiny_run):
    code, payload, printed, out = tiny_run
    assert code == 0
    for key in ("benchmark", "config", "within", "machine", "datasets", "skipped", "notes", "table", "plot"):
        assert key in payload
    assert payload["within"] == 0.001 and payload["config"]["data"] == ["twonorm", "waveform"]
    assert [s["name"] for s in payload["datasets"]] == ["twonorm", "waveform"]
    assert payload["table"] in printed and f"wrote {out}" in printed
    for sec in payload["datasets"]:
        assert sec["reference"] == "fastboost-adaboost" and sec["data"]["n_train"] == N
        by_key = {r["key"]: r for r in sec["results"]}
        assert "xgboost" not in by_key
        assert by_key["fastboost-adaboost"]["summary"]["ratio_to_reference"] == 1.0
        for r in sec["results"]:
            assert r["status"] == "ok", r
            c = r["curve"]
            assert c["rounds"] == list(range(1, r["rounds_run"] + 1))
            assert len(c["seconds"]) == len(c["test_error"]) == r["rounds_run"]
            assert c["seconds"][0] > 0 and np.all(np.diff(c["seconds"]) > 0)  # time only goes on
            assert all(0.0 <= e <= 1.0 for e in c["test_error"])
            assert r["final_check"]["curve_error"] == r["final_check"]["predict_error"]
            assert r["final_check"].get("label_mismatches", 0) == 0
            s = r["summary"]
            assert s["best_error"] == min(c["test_error"]) and s["seconds_to_within"] <= s["best_seconds"]
            assert s["whole_fit_s"] == c["seconds"][-1]
            assert s["ratio_to_reference"] == pytest.approx(
                s["seconds_to_within"] / by_key["fastboost-adaboost"]["summary"]["seconds_to_within"])
        sk = by_key["sklearn-adaboost"]
        assert sk["capped"] and sk["rounds_run"] == 5 and "capped at 5 of 30 rounds" in sk["note"]
        assert by_key["fastboost-adaboost"]["rounds_run"] == ROUNDS
        # with no --algorithms: AdaBoost as published, then the recommended setting for the class count
        recommended = ["fastboost-real"] if sec["data"]["n_classes"] == 2 else ["fastboost-mh", "fastboost-real"]
        assert [k for k in by_key if k.startswith("fastboost")] == ["fastboost-adaboost", *recommended]
        for key in recommended:
            assert by_key[key]["params"]["leaf"] == "real"
            assert by_key[key]["params"]["learning_rate"] == 0.3  # stumps
        assert "twonorm: 3 000 train + 2 000 test rows x 20" in printed
    assert "waveform: 3 000 train + 2 000 test rows x 21 (float64), 3 classes" in printed
    skipped = {s["key"]: s["message"] for s in payload["skipped"]}
    assert "not installed" in skipped["xgboost"] and "skipped XGBoost: not installed" in printed
    if importlib.util.find_spec("matplotlib") is not None:
        assert out.with_suffix(".png").stat().st_size > 0 and payload["plot"] == str(out.with_suffix(".png"))


@pytest.mark.parametrize("name, key, params", [
    ("twonorm", "fastboost-adaboost", {}),
    ("waveform", "fastboost-adaboost", {}),
    ("twonorm", "fastboost-real", {"leaf": "real", "learning_rate": 0.3}),
    ("waveform", "fastboost-mh", {"leaf": "real", "multiclass": "mh", "learning_rate": 0.3}),
])
def test_fastboost_curve_equals_refits(tiny_run, name, key, params):
    """The error after round k equals the test error of a model fitted afresh with k rounds."""
    _, payload, _, _ = tiny_run
    sec = next(s for s in payload["datasets"] if s["name"] == name)
    fb = next(r for r in sec["results"] if r["key"] == key)
    errors = fb["curve"]["test_error"]
    Xtr, ytr, Xte, yte, _ = make_curve_data(CURVE_DATASETS[name], N, N_TEST, 20, 0, "float64")
    for k in (1, 7, ROUNDS):
        model = AdaBoostClassifier(n_estimators=k, max_bins=255, n_jobs=1, random_state=0, **params).fit(Xtr, ytr)
        assert errors[k - 1] == pytest.approx(1.0 - model.score(Xte, yte), abs=1e-12)
    assert fb["params"]["n_estimators"] == ROUNDS and fb["params"]["max_depth"] == 1
    # round times: interpolated between the callback points, which they pass through
    points = fb["callback_points"]
    assert points[0][0] == 0 and points[-1][0] == ROUNDS
    assert fb["curve"]["seconds"][-1] == points[-1][1]


def test_one_vs_rest_curve_stages_and_times_every_class_model(tiny_run):
    """One-vs-rest confidence-rated stumps on waveform: the error after round k is that of a fit of k rounds a
    class, and round k's seconds add each class model's seconds to its round k (its callbacks, a run per class)."""
    _, payload, _, _ = tiny_run
    sec = next(s for s in payload["datasets"] if s["name"] == "waveform")
    fb = next(r for r in sec["results"] if r["key"] == "fastboost-real")
    assert fb["status"] == "ok" and fb["rounds_run"] == ROUNDS
    Xtr, ytr, Xte, yte, _ = make_curve_data(CURVE_DATASETS["waveform"], N, N_TEST, 20, 0, "float64")
    for k in (1, 7, ROUNDS):
        model = AdaBoostClassifier(n_estimators=k, max_bins=255, n_jobs=1, random_state=0, leaf="real",
                                   learning_rate=0.3).fit(Xtr, ytr)
        assert len(model.estimators_) == 3
        assert fb["curve"]["test_error"][k - 1] == pytest.approx(1.0 - model.score(Xte, yte), abs=1e-12)
    runs = fb["callback_points"]
    assert len(runs) == 3 and all(run[-1][0] == ROUNDS for run in runs)
    starts = [fb["prep_s"]] + [run[-1][1] for run in runs[:-1]]
    ref = np.full(ROUNDS, fb["prep_s"])
    for run, start in zip(runs, starts):
        ref += interpolate_round_times([(0, start)] + [tuple(p) for p in run], ROUNDS) - start
    np.testing.assert_allclose(fb["curve"]["seconds"], ref, rtol=1e-12)
    assert fb["curve"]["seconds"][-1] == pytest.approx(runs[-1][-1][1])  # the classes' runs follow each other
    assert np.all(np.diff(fb["curve"]["seconds"]) > 0)


def test_lightgbm_curve_when_installed(tiny_run):
    if importlib.util.find_spec("lightgbm") is None:
        pytest.skip("LightGBM not installed")
    _, payload, _, _ = tiny_run
    for sec in payload["datasets"]:
        lgb = next(r for r in sec["results"] if r["key"] == "lightgbm")
        assert lgb["rounds_run"] == ROUNDS and lgb["params"]["objective"] == (
            "binary" if sec["data"]["n_classes"] == 2 else "multiclass")


def test_recommended_settings_take_the_guides_learning_rate_by_depth():
    assert algorithm_params("real", 1) == {"leaf": "real", "learning_rate": 0.3}
    assert algorithm_params("real", 3) == {"leaf": "real", "learning_rate": 0.1}
    assert algorithm_params("mh", 3) == {"leaf": "real", "multiclass": "mh", "learning_rate": 0.1}
    assert algorithm_params("logistic", 1) == {"leaf": "real", "multiclass": "mh", "loss": "logistic",
                                               "learning_rate": 0.3}
    assert algorithm_params("sammer", 3)["learning_rate"] == 0.3 and algorithm_params("adaboost", 3) == {}
    assert default_algorithms(CURVE_DATASETS["ringnorm"]) == ["adaboost", "real"]
    assert default_algorithms(CURVE_DATASETS["waveform"]) == ["adaboost", "mh", "real"]


# ================================================================================== arguments
@pytest.mark.parametrize("argv, message", [
    (["--data", "iris"], "--curve --data takes data set names (twonorm, ringnorm, waveform); got 'iris'"),
    (["--data", "twonorm", "--target", "y"], "--target does not apply to --curve"),
    (["--within", "0"], "--within must be a positive number"),
    (["--gbm-learning-rate", "-1"], "--gbm-learning-rate must be > 0"),
    (["--competitors", "catboost"], "unknown competitor(s) catboost"),
    (["--rounds", "0"], "--rounds must be >= 1"),
    (["--n", "5"], "--n must be >= 10"),
    (["--bins", "300"], "--bins must be in [2, 255]"),
    (["--profile"], "--profile times the per-round kernels"),
])
def test_bad_curve_arguments_are_one_line_and_exit_2(argv, message, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["bench", "--curve", "--no-plot", *argv])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("fastboost bench: error: ") and message in err and err.count("\n") == 1


# ================================================================================== child processes
@pytest.mark.slow  # child processes: fresh interpreters import (and may compile) fastboost and LightGBM
def test_curve_in_child_processes(tmp_path, capsys):
    out = tmp_path / "child.json"
    argv = [a for a in TINY if a != "--no-subprocess"]
    assert cli.main(argv + ["--data", "ringnorm", "--competitors", "sklearn-hgb", "--no-plot", "--out", str(out)]) == 0
    (sec,) = json.loads(out.read_text())["datasets"]
    assert sec["depth"] == 3
    for r in sec["results"]:
        assert r["status"] == "ok" and r["peak_rss_mb"] > 0 and r["rounds_run"] == ROUNDS
        assert r["process_wall_s"] > r["curve"]["seconds"][-1]
    assert "ringnorm: 3 000 train" in capsys.readouterr().out
