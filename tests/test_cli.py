"""The command line: train -> info -> predict on CSV, parquet and .npy; every user error is one line and
exit status 2."""
import subprocess
import sys

import numpy as np
import pytest

from fastboost.cli import main
from fastboost.datasets import make_twonorm

pd = pytest.importorskip("pandas")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli")
    X, y = make_twonorm(1200, random_state=0)
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])])
    frame["label"] = np.where(y == 1, "pos", "neg")
    frame.iloc[:900].to_csv(d / "train.csv", index=False)
    frame.iloc[900:].to_csv(d / "test.csv", index=False)
    np.save(d / "train.npy", np.column_stack([X[:900], y[:900] == 1]).astype(np.float64))
    np.save(d / "test.npy", X[900:])
    text = frame.iloc[:900].copy()
    text["colour"] = np.where(y[:900] == 1, "red", np.where(np.arange(900) % 2, "blue", "green"))
    text.to_csv(d / "text.csv", index=False)
    text["colour"] = [f"c{i}" for i in range(900)]
    text.to_csv(d / "ids.csv", index=False)
    try:
        frame.iloc[:900].to_parquet(d / "train.parquet")
    except ImportError:
        pass
    return d, X, y


def run(*args, cwd):
    return subprocess.run([sys.executable, "-m", "fastboost", *map(str, args)], cwd=cwd, capture_output=True,
                          text=True, timeout=300)


def test_train_info_predict_csv_end_to_end(files):
    d, X, y = files
    r = run("train", "train.csv", "--target", "label", "--algorithm", "vadaboost", "--lam", "0.5", "--min-samples-leaf",
            "3", "--n-estimators", "40", "--valid", "test.csv", "-o", "m.fbm", cwd=d)
    assert r.returncode == 0, r.stderr
    r = run("info", "m.fbm", cwd=d)
    assert r.returncode == 0 and "VadaBoostClassifier" in r.stdout and "lam=0.5" in r.stdout
    assert "validation:" in r.stdout and "top features: f" in r.stdout
    r = run("predict", "m.fbm", "test.csv", "--drop", "label", "-o", "pred.csv", cwd=d)
    assert r.returncode == 0, r.stderr
    pred = pd.read_csv(d / "pred.csv")["prediction"].to_numpy()
    import fastboost

    model = fastboost.load(d / "m.fbm")
    test = pd.read_csv(d / "test.csv").drop(columns=["label"])
    np.testing.assert_array_equal(pred, model.predict(test))
    assert np.mean(pred == np.where(y[900:] == 1, "pos", "neg")) > 0.9


@pytest.mark.parametrize("fmt", ["npy", "parquet"])
def test_train_and_predict_other_formats(files, fmt, capsys):
    d, X, y = files
    if not (d / f"train.{fmt}").exists():
        pytest.skip("pyarrow is not installed")
    target = "20" if fmt == "npy" else "label"
    assert main(["train", str(d / f"train.{fmt}"), "--target", target, "--n-estimators", "20", "-o",
                 str(d / f"{fmt}.fbm")]) == 0
    test = d / ("test.npy" if fmt == "npy" else "test.csv")
    extra = [] if fmt == "npy" else ["--drop", "label"]
    assert main(["predict", str(d / f"{fmt}.fbm"), str(test), "--proba", "-o", str(d / f"{fmt}.csv"), *extra]) == 0
    proba = np.loadtxt(d / f"{fmt}.csv", delimiter=",", skiprows=1)
    assert proba.shape == (300, 2) and np.allclose(proba.sum(axis=1), 1)


def test_max_bins_exact(files, capsys):
    """--max-bins exact is max_bins=None (a threshold between every two distinct values); a typo is one line."""
    d, X, y = files
    assert main(["train", str(d / "train.npy"), "--target", "20", "--n-estimators", "10", "--max-bins", "exact",
                 "-o", str(d / "exact.fbm")]) == 0
    import fastboost

    model = fastboost.load(d / "exact.fbm")
    assert model.max_bins is None and model.n_features_quantised_ == 0
    ref = fastboost.AdaBoostClassifier(n_estimators=10, max_bins=None).fit(X[:900], (y[:900] == 1).astype(float))
    np.testing.assert_array_equal(model.rounds_["threshold"], ref.rounds_["threshold"])
    r = run("train", "train.npy", "--target", "20", "--max-bins", "exakt", cwd=d)
    assert r.returncode == 2 and "expected an integer or 'exact'" in r.stderr


def test_a_text_column_is_categorical(files, capsys):
    d, _, _ = files
    assert main(["train", str(d / "text.csv"), "--target", "label", "--n-estimators", "5", "-o",
                 str(d / "text.fbm")]) == 0
    assert main(["predict", str(d / "text.fbm"), str(d / "text.csv"), "--drop", "label", "-o",
                 str(d / "text-pred.csv")]) == 0
    labels = np.loadtxt(d / "text-pred.csv", delimiter=",", skiprows=1, dtype=str)
    truth = pd.read_csv(d / "text.csv")["label"].to_numpy()
    assert np.mean(labels == truth) == 1.0  # colour names the class


def test_categories_that_look_like_numbers_stay_text_in_predict_and_valid_files(tmp_path, capsys):
    """A column fitted on the strings "10", "20", "30", "x" is read as text from a predict or validation CSV in
    which no "x" makes pandas see numbers (they matched no category: every prediction wrong, validation error
    0.33 instead of 0); in memory such a column of numbers is a TypeError, never unknown categories."""
    rng = np.random.default_rng(0)
    code = rng.choice(["10", "20", "30", "x"], 600)
    frame = pd.DataFrame({"code": code, "f": rng.normal(size=600), "label": np.isin(code, ["20", "x"]).astype(int)})
    frame.to_csv(tmp_path / "train.csv", index=False)
    numeric = frame[frame.code != "x"]
    numeric.to_csv(tmp_path / "valid.csv", index=False)
    numeric.drop(columns="label").to_csv(tmp_path / "new.csv", index=False)
    assert pd.read_csv(tmp_path / "new.csv").code.dtype.kind == "i"  # (the case)
    assert main(["train", str(tmp_path / "train.csv"), "--target", "label", "--n-estimators", "6", "--valid",
                 str(tmp_path / "valid.csv"), "-o", str(tmp_path / "m.fbm")]) == 0  # (a stump splits the set)
    import fastboost

    model = fastboost.load(tmp_path / "m.fbm")
    assert model.validation_errors_[-1] == 0.0
    assert main(["predict", str(tmp_path / "m.fbm"), str(tmp_path / "new.csv"), "-o", str(tmp_path / "p.csv")]) == 0
    np.testing.assert_array_equal(pd.read_csv(tmp_path / "p.csv").prediction, numeric.label)
    with pytest.raises(TypeError, match="categorical feature 'code' was fitted on strings .* holds numbers"):
        model.predict(pd.read_csv(tmp_path / "new.csv"))


def test_an_output_that_would_replace_an_input_is_refused(files, small_model, capsys, tmp_path):
    """-o naming the model or the data file the command reads: one line, exit 2, and the input kept."""
    import shutil

    d, _, _ = files
    model, data = tmp_path / "m.fbm", tmp_path / "test.csv"
    shutil.copy(small_model, model)
    shutil.copy(d / "test.csv", data)
    before = model.read_bytes(), data.read_bytes()
    for cmd, target in ((["predict", model, data, "--drop", "label", "-o", model], model),
                        (["predict", model, data, "--drop", "label", "-o", data], data),
                        (["export", model, "--to", "onnx", "-o", model], model),
                        (["train", data, "--target", "label", "-o", data], data)):
        assert main([str(c) for c in cmd]) == 2
        err = capsys.readouterr().err.strip()
        assert "\n" not in err and f"{target}: the output would replace the input" in err, err
    assert (model.read_bytes(), data.read_bytes()) == before
    for cmd in (["export", model, "--to", "onnx", "-o", ""], ["predict", model, data, "--drop", "label", "-o", ""]):
        assert main([str(c) for c in cmd]) == 2
        assert capsys.readouterr().err.strip().endswith("the output path (-o) is empty")


def test_a_bad_value_in_a_numeric_column_or_no_rows_is_named(files, small_model, capsys, tmp_path):
    """A column of numbers but for one value (a typo) is an error naming the column, the value and its row, for
    train and predict, not a categorical column with hundreds of categories; a file of column names alone is
    'no rows'. A text column with a few numbers among its words stays categorical."""
    d, _, _ = files
    frame = pd.read_csv(d / "train.csv")
    typo = frame.astype({"f3": object})
    typo.loc[41, "f3"] = "0,25"
    typo.to_csv(tmp_path / "typo.csv", index=False)
    for cmd in (["train", tmp_path / "typo.csv", "--target", "label", "-o", tmp_path / "m.fbm"],
                ["predict", small_model, tmp_path / "typo.csv", "--drop", "label", "-o", tmp_path / "p.csv"]):
        assert main([str(c) for c in cmd]) == 2
        err = capsys.readouterr().err.strip()
        assert "\n" not in err and "typo.csv: column 'f3' holds numbers but for 1 value(s), the first '0,25' in " \
            "data row 42" in err, err
    frame.head(0).to_csv(tmp_path / "header.csv", index=False)
    assert main(["train", str(tmp_path / "header.csv"), "--target", "label", "-o", str(tmp_path / "m.fbm")]) == 2
    assert "header.csv: no rows (only the column names)" in capsys.readouterr().err
    words = pd.read_csv(d / "text.csv")
    words.loc[:4, "colour"] = ["1", "2", "3", "4", "5"]  # 5 of 900: not a typo's share
    words.to_csv(tmp_path / "words.csv", index=False)
    assert main(["train", str(tmp_path / "words.csv"), "--target", "label", "--n-estimators", "3", "-o",
                 str(tmp_path / "w.fbm")]) == 0


def test_train_passes_the_leaf_and_loss_options(files, capsys):
    """--leaf real --loss logistic (and --multiclass) train the model AdaBoostClassifier fits with them."""
    import fastboost

    d, X, y = files
    assert main(["train", str(d / "train.csv"), "--target", "label", "--leaf", "real", "--loss", "logistic",
                 "--multiclass", "ovr", "--max-depth", "2", "--n-estimators", "15", "-o", str(d / "log.fbm")]) == 0
    model = fastboost.load(d / "log.fbm")
    assert model.get_params()["loss"] == "logistic" and model.get_params()["multiclass"] == "ovr"
    train = pd.read_csv(d / "train.csv")
    ref = fastboost.AdaBoostClassifier(15, leaf="real", loss="logistic", multiclass="ovr", max_depth=2).fit(
        train.drop(columns=["label"]), train["label"])
    np.testing.assert_array_equal(model.nodes_, ref.nodes_)


def test_info_describes_each_class_model_of_one_vs_rest(tmp_path, capsys):
    """info on a one-vs-rest model gives each class's rounds, how it stopped and its validation curve (it printed
    "early: False" and no validation for classes that all stopped early)."""
    from fastboost.datasets import make_waveform

    X, y = make_waveform(900, random_state=0)
    frame = pd.DataFrame(X, columns=[f"w{j}" for j in range(X.shape[1])])
    frame["cls"] = np.array(list("abc"))[np.unique(y, return_inverse=True)[1]]
    frame.iloc[:600].to_csv(tmp_path / "train.csv", index=False)
    frame.iloc[600:].to_csv(tmp_path / "valid.csv", index=False)
    assert main(["train", str(tmp_path / "train.csv"), "--target", "cls", "--algorithm", "vadaboost", "--n-estimators",
                 "300", "--n-iter-no-change", "3", "--valid", str(tmp_path / "valid.csv"), "-o",
                 str(tmp_path / "m.fbm")]) == 0
    capsys.readouterr()
    assert main(["info", str(tmp_path / "m.fbm")]) == 0
    out = capsys.readouterr().out
    import fastboost

    model = fastboost.load(tmp_path / "m.fbm")
    for c, part in zip(model.classes_, model.estimators_):
        best = int(np.argmin(part.validation_errors_))
        assert (f"  class {c}: {part.n_estimators_} rounds; stopped by the rule: {bool(part.stopped_by_rule_)}, "
                f"early: {bool(part.stopped_early_)}; validation: {len(part.validation_errors_)} rounds run, lowest "
                f"error {part.validation_errors_[best]:.4f} at round {best + 1}") in out
    assert any(part.stopped_early_ for part in model.estimators_)


def test_train_prints_the_fits_warnings_and_keeps_the_model(files, capsys):
    """A fit that warns (overshooting steps here) still saves its model, and says why on stderr, a line each
    (the command line hid them: a degenerate LP or an empty ensemble was saved without a word)."""
    d, _, _ = files
    assert main(["train", str(d / "train.csv"), "--target", "label", "--learning-rate", "5", "--n-estimators", "20",
                 "-o", str(d / "warned.fbm")]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("fastboost train: warning: AdaBoostClassifier: with learning_rate=5")
    assert (d / "warned.fbm").exists()


def test_a_solver_failure_and_an_interrupt_are_one_line(files, small_model, capsys, monkeypatch):
    """HiGHS finding no optimum is one line and exit 2; Ctrl-C is one line and exit 130, the output kept as it was."""
    import fastboost
    from fastboost import _lp

    d, _, _ = files

    def fails(M, caps):
        raise _lp.SolverError("HiGHS's QP solver found no optimum of the RQP-Boost quadratic program (test).")

    monkeypatch.setitem(_lp.RQP_SOLVERS, "highs", fails)
    assert main(["train", str(d / "train.csv"), "--target", "label", "--algorithm", "rqpboost", "--solver", "highs",
                 "--C", "1", "--n-estimators", "3", "-o", str(d / "rqp.fbm")]) == 2
    assert capsys.readouterr().err.strip() == ("fastboost train: error: HiGHS's QP solver found no optimum of the "
                                               "RQP-Boost quadratic program (test).")
    before = small_model.read_bytes()

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(fastboost.AdaBoostClassifier, "fit", interrupted)
    assert main(["train", str(d / "train.csv"), "--target", "label", "--n-estimators", "3", "-o",
                 str(small_model)]) == 130
    assert capsys.readouterr().err.strip() == "fastboost train: interrupted"
    assert small_model.read_bytes() == before


@pytest.mark.parametrize("argv, message", [
    (["train", "missing.csv", "--target", "label"], "missing.csv: no such file"),
    (["train", "ids.csv", "--target", "label"], "'colour' has 900 categories; a categorical feature has at most 255"),
    (["train", "train.csv", "--target", "nope"], "no column 'nope'"),
    (["train", "train.csv", "--target", "label", "--gamma", "2"], "adaboost has no option --gamma"),
    (["train", "train.csv", "--target", "label", "--loss", "logistic"], "loss='logistic'"),
    (["train", "train.csv", "--target", "label", "--leaf", "real", "--loss", "hinge"], "loss must be one of"),
    (["train", "train.csv", "--target", "label", "--algorithm", "vadaboost", "--lam", "7"], "lam must be in [0, 1]"),
    (["train", "train.txt", "--target", "label"], "no such file"),
    (["predict", "train.csv", "test.csv"], "not a fastboost model file"),
    (["info", "nothing.fbm"], "nothing.fbm"),
    (["train", "train.csv", "--target", "f0"], "the target column 'f0' holds values that are not classes, such as"),
    (["train", "train.csv", "--target", "label", "-o", "-"], "-o - (standard output) is for the rows of fastboost "
                                                                "predict"),
    (["export", "small.fbm", "--to", "treelite", "--dtype", "float64", "-o", "m.tl"], "--to treelite takes none"),
    (["export", "small.fbm", "--to", "onnx", "-o", "-"], "-o - (standard output) is for the rows"),
])
def test_user_errors_are_one_line_and_exit_2(files, small_model, argv, message, capsys, monkeypatch):
    d, _, _ = files
    monkeypatch.chdir(d)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err and "Traceback" not in err, err


def test_usage_errors_are_one_line_and_exit_2(files, capsys, monkeypatch):
    d, _, _ = files
    r = run("train", "train.csv", cwd=d)  # --target is required
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "--target" in r.stderr, r.stderr
    for argv, message in ((["train", "train.csv", "--target", "label", "--target", "f0"],
                           "--target: given more than once"),
                          (["demo", "--seed", "-5"], "--seed: expected an integer in [0, 2**32 - 1], got -5")):
        monkeypatch.chdir(d)
        with pytest.raises(SystemExit) as exit_info:
            main(argv)
        assert exit_info.value.code == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and message in err, err
    r = run("--version", cwd=d)
    assert r.returncode == 0 and r.stdout.startswith("fastboost ")


def test_compile_jobs_must_be_a_positive_integer(capsys):
    for bad in ("0", "-1", "two"):
        with pytest.raises(SystemExit) as e:
            main(["compile", "--jobs", bad])
        assert e.value.code == 2
        err = capsys.readouterr().err
        assert "--jobs" in err and ("expected an integer" in err), err


@pytest.mark.parametrize("option", ["--n-train", "--n-test", "--rounds"])
def test_demo_sizes_must_be_positive_integers(option, capsys):
    for bad in ("0", "-1"):
        with pytest.raises(SystemExit) as e:
            main(["demo", option, bad])
        assert e.value.code == 2
        out, err = capsys.readouterr()
        assert out == "" and err.count("\n") == 1 and f"argument {option}: expected an integer >= 1" in err, err


def test_demo_with_training_rows_of_one_class_is_one_line_before_any_output(capsys):
    assert main(["demo", "--n-train", "1", "--n-test", "5"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "--n-train 1" in err and "one class" in err, (out, err)


@pytest.fixture(scope="module")
def small_model(files):
    """A model of 5 rounds trained on train.csv (it has feature names)."""
    d, _, _ = files
    assert main(["train", str(d / "train.csv"), "--target", "label", "--n-estimators", "5", "-o",
                 str(d / "small.fbm")]) == 0
    return d / "small.fbm"


@pytest.mark.parametrize("data, flags", [("bad.csv", []), ("test.csv", ["--proba", "--contrib"]),
                                         ("test.npy", ["--proba", "--contrib"])])
def test_a_failed_predict_keeps_the_output_file(files, small_model, data, flags, capsys):
    """A value that is not a number or refused flags: one line, and the previous predictions stay."""
    d, _, _ = files
    bad = pd.read_csv(d / "test.csv").astype({"f1": object})
    bad.loc[3, "f1"] = "0,123"
    bad.to_csv(d / "bad.csv", index=False)
    assert main(["predict", str(small_model), str(d / "test.csv"), "-o", str(d / "keep.csv")]) == 0
    before = (d / "keep.csv").read_bytes()
    capsys.readouterr()
    assert main(["predict", str(small_model), str(d / data), *flags, "-o", str(d / "keep.csv")]) == 2
    assert capsys.readouterr().err.count("\n") == 1
    assert (d / "keep.csv").read_bytes() == before
    assert not list(d.glob("keep.csv.tmp*"))


@pytest.mark.parametrize("command", ["train", "predict", "predict-parquet", "export"])
def test_an_output_in_a_missing_directory_names_the_given_path(files, small_model, command, capsys):
    d, _, _ = files
    out = str(d / "no-such-dir" / "out.file")
    argv = {"train": ["train", str(d / "train.npy"), "--target", "20", "--n-estimators", "5"],
            "predict": ["predict", str(small_model), str(d / "test.csv")],
            "predict-parquet": ["predict", str(small_model), str(d / "train.parquet")],
            "export": ["export", str(small_model), "--to", "treelite"]}[command]
    if command == "predict-parquet" and not (d / "train.parquet").exists():
        pytest.skip("pyarrow is not installed")
    if command == "export":
        pytest.importorskip("treelite")
    assert main([*argv, "-o", out]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{out}: No such file or directory" in err and ".tmp" not in err, err


def test_predict_checks_the_output_before_reading_and_writes_parquet_for_any_input(files, small_model, capsys):
    """An output in a missing directory is the error even when the data are bad (it came after the data error);
    -o NAME.parquet from CSV or .npy rows writes parquet (it wrote CSV text under that name)."""
    d, _, _ = files
    out = str(d / "no-such-dir" / "p.csv")
    assert main(["predict", str(small_model), str(d / "missing.csv"), "-o", out]) == 2
    assert f"{out}: No such file or directory" in capsys.readouterr().err
    pq = pytest.importorskip("pyarrow.parquet")
    assert main(["predict", str(small_model), str(d / "test.csv"), "--proba", "-o", str(d / "p.csv")]) == 0
    assert main(["predict", str(small_model), str(d / "test.csv"), "--proba", "-o", str(d / "p.parquet")]) == 0
    table = pq.read_table(d / "p.parquet").to_pandas()
    want = pd.read_csv(d / "p.csv")
    assert list(table.columns) == list(want.columns)
    np.testing.assert_array_equal(table.to_numpy(), want.to_numpy())


def test_class_weight_takes_balanced(files, capsys):
    d, _, _ = files
    with pytest.raises(SystemExit) as e:
        main(["train", str(d / "train.npy"), "--target", "20", "--class-weight", "{0: 2}"])
    err = capsys.readouterr().err
    assert e.value.code == 2 and err.count("\n") == 1 and "'balanced'" in err and "dict" not in err, err
    assert main(["train", str(d / "train.npy"), "--target", "20", "--n-estimators", "5", "--class-weight",
                 "balanced", "-o", str(d / "balanced.fbm")]) == 0


def test_monotone_constraints_may_start_with_a_minus_sign(files):
    """``--monotone-constraints -1,0,...`` as docs/monotone.md writes it (argparse took "-1,0,..." for an option
    and failed with "expected one argument"; only the "=" form worked)."""
    import fastboost

    d, _, _ = files
    directions = "-1," + ",".join(["0"] * 18) + ",1"
    assert main(["train", str(d / "train.npy"), "--target", "20", "--n-estimators", "5", "--monotone-constraints",
                 directions, "-o", str(d / "signed.fbm")]) == 0
    assert list(fastboost.load(d / "signed.fbm").monotone_constraints) == [-1] + [0] * 18 + [1]


def test_drop_is_given_once(files, small_model, capsys):
    """--drop takes one column: a second one is refused rather than replacing the first."""
    d, _, _ = files
    with pytest.raises(SystemExit) as e:
        main(["predict", str(small_model), str(d / "test.csv"), "--drop", "f0", "--drop", "label"])
    err = capsys.readouterr().err
    assert e.value.code == 2 and err.count("\n") == 1 and "--drop" in err, err


@pytest.mark.parametrize("option, value, message", [
    ("--monotone-constraints", "1,,0", "an empty"), ("--monotone-constraints", "1,0,", "an empty"),
    ("--interaction-constraints", "0,1;;2", "an empty"), ("--interaction-constraints", "0,,1;2", "an empty"),
    ("--random-state", "-5", "expected an integer in [0, 2**32 - 1], got -5")])
def test_option_values_are_checked_where_given(files, option, value, message, capsys):
    """An empty constraint entry would shift every later feature's direction, or drop a group; a seed out of
    NumPy's range failed with NumPy's words: usage errors naming the option, not a model or a message of
    another's."""
    d, _, _ = files
    with pytest.raises(SystemExit) as e:
        main(["train", str(d / "train.csv"), "--target", "label", option, value, "-o", str(d / "never.fbm")])
    err = capsys.readouterr().err
    assert e.value.code == 2 and err.count("\n") == 1 and message in err and option in err, err
    assert not (d / "never.fbm").exists()


def test_predicting_npy_with_a_named_model_prints_no_warning(files, small_model):
    """.npy rows are taken by position: no warning that they have no feature names."""
    d, _, _ = files
    r = run("predict", small_model, "test.npy", "-o", "npy-pred.csv", cwd=d)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert len(pd.read_csv(d / "npy-pred.csv")) == 300
