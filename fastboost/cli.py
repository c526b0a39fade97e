"""The ``fastboost`` command."""
import argparse
import contextlib
import errno
import os
import sys
import time

import numpy as np

from ._lp import SolverError


class _Parser(argparse.ArgumentParser):
    """Usage errors as one line and exit status 2 (argparse prints the usage first)."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message}\n")


class _Once(argparse.Action):
    """An option given at most once: a second one is an error rather than replacing the first."""

    def __call__(self, parser, namespace, values, option_string=None):
        if getattr(namespace, self.dest) is not None:
            raise argparse.ArgumentError(self, "given more than once (it takes one column)")
        setattr(namespace, self.dest, values)


def demo(args):
    """Train AdaBoost and VadaBoost on generated twonorm; print test error, rounds and fit time."""
    import numpy as np

    from . import AdaBoostClassifier, VadaBoostClassifier
    from .datasets import make_twonorm

    X, y = make_twonorm(args.n_train + args.n_test, random_state=args.seed)
    Xtr, ytr, Xte, yte = X[: args.n_train], y[: args.n_train], X[args.n_train:], y[args.n_train:]
    if np.unique(ytr).size < 2:  # (before the table's header: the fits would fail)
        raise ValueError(f"--n-train {args.n_train}: the training rows drawn hold one class only; take more rows.")
    print(f"twonorm: {args.n_train} training and {args.n_test} test rows, 20 features "
          f"(Bayes error 2.28%); {args.rounds} rounds of decision stumps, n_jobs={args.n_jobs}")
    print(f"{'model':<28}{'test error':>11}{'rounds':>8}{'fit time (s)':>14}")
    models = [("AdaBoost", AdaBoostClassifier(args.rounds, n_jobs=args.n_jobs))]
    models += [(f"VadaBoost (lam={lam:g})", VadaBoostClassifier(args.rounds, lam=lam, n_jobs=args.n_jobs))
               for lam in (0.0, 0.5, 1.0)]
    for name, model in models:
        t = time.perf_counter()
        model.fit(Xtr, ytr)
        elapsed = time.perf_counter() - t
        err = np.mean(model.predict(Xte) != yte)
        print(f"{name:<28}{100 * err:>10.2f}%{model.n_estimators_:>8}{elapsed:>14.3f}")
    print("(the first fit includes numba's one-time compilation unless the cache is warm)")
    return 0


def compile_kernels(args):
    """Compile the kernels of every common kind of fit ahead of time (cached on disk: later fits start at once)."""
    from ._compile import compile_all

    print("fastboost: compiling every kernel group (once per install; cached on disk afterwards)", flush=True)
    total = compile_all(lambda line: print(line, flush=True), jobs=args.jobs)
    print(f"done in {total:.1f} s", flush=True)
    return 0


ALGORITHMS = {"adaboost": "AdaBoostClassifier", "vadaboost": "VadaBoostClassifier", "ebboost": "EBBoostClassifier",
              "lazyboost": "LazyBoostClassifier", "saboost": "SABoostClassifier", "quadboost": "QuadBoostClassifier",
              "lpboost": "LPBoostClassifier", "rlpboost": "RLPBoostClassifier", "rqpboost": "RQPBoostClassifier"}

def seed(text):
    """--random-state: an integer seed in [0, 2**32 - 1] (what NumPy's RandomState takes)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if not 0 <= value <= 2 ** 32 - 1:
        raise argparse.ArgumentTypeError(f"expected an integer in [0, 2**32 - 1], got {value}")
    return value


def positive_int(text):
    """An integer >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {value}")
    return value


def bins(text):
    """--max-bins: an integer, or "exact" (max_bins=None: a threshold between every two distinct values)."""
    if text.lower() in ("exact", "none"):
        return "exact"
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer or 'exact', got {text!r}") from None


def constraints(text):
    """--monotone-constraints: a direction per feature ("1,0,-1") or by column name ("income:1,debt:-1")."""
    items = [item.strip() for item in text.split(",")]
    if "" in items:  # (an empty entry would shift every later feature's direction)
        raise argparse.ArgumentTypeError(f"an empty entry in {text!r}: give -1, 0 or 1 for every feature")
    try:
        if items and all(":" in item for item in items):
            return {name.strip(): int(value) for name, value in (item.rsplit(":", 1) for item in items)}
        return [int(item) for item in items]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected -1, 0 or 1 per feature (\"1,0,-1\") or by column name "
                                         f"(\"income:1,debt:-1\"), got {text!r}") from None


def feature_groups(text):
    """--interaction-constraints: groups of feature indices or names, as JSON ('[[0, 1], ["age", "income"]]') or
    separated by ';' and ',' ('0,1,2;3,4')."""
    import json

    try:
        value = json.loads(text)
    except ValueError:
        parts = [[f.strip() for f in part.split(",")] for part in text.split(";")]
        if any("" in part for part in parts):
            raise argparse.ArgumentTypeError(f"an empty group or feature in {text!r}: groups such as '0,1,2;3,4'") \
                from None
        value = [[int(f) if f.lstrip("-").isdigit() else f for f in part] for part in parts]
    if not isinstance(value, list) or not all(isinstance(g, list) for g in value):
        raise argparse.ArgumentTypeError(f"expected groups such as '0,1,2;3,4' or '[[0, 1], [2, 3]]', got {text!r}")
    return value


def balanced(text):
    """--class-weight: "balanced" (each class weighted inversely to its frequency), the one value a command
    line can give."""
    if text != "balanced":
        raise argparse.ArgumentTypeError(f"expected 'balanced', got {text!r}")
    return text


def flag(text):
    """A flag option (given: True)."""
    return bool(text)


#: train options -> estimator parameter (each is passed only when given on the command line)
TRAIN_PARAMS = {"n_estimators": int, "learning_rate": float, "max_depth": int, "lam": float, "gamma": float,
                "schedule": str, "penalty": str, "alpha_max": float, "reweight_every": int, "nu": float,
                "capping": float, "tol": float, "C": float, "solver": str, "criterion": str,
                "leaf": str, "multiclass": str, "loss": str, "min_samples_leaf": int, "max_bins": bins,
                "monotone_constraints": constraints,
                "monotone_steps": str,
                "feature_rank": int, "weight_trim_rate": float,
                "validation_fraction": float, "n_iter_no_change": int, "class_weight": balanced, "n_jobs": int,
                "random_state": seed, "verbose": int, "interaction_constraints": feature_groups,
                "colsample_bytree": float, "colsample_bynode": float, "subsample": float, "bootstrap": flag}


class UserError(Exception):
    """A problem with what the user typed or gave: printed as one line, exit status 2."""


def _input_files(given):
    """The files an input names: itself, or for parquet data given as a directory or a pattern the files that
    reading it finds."""
    if given is None:
        return []
    text = str(given)
    if os.path.isdir(text) or (not os.path.exists(text) and any(ch in text for ch in "*?[")):
        from .dataset import parquet_files

        try:
            return parquet_files(text)
        except ValueError:  # (the command's reading of it says what is wrong)
            return []
    return [text]


def _check_output(path, inputs=()):
    """An output ``path`` the command can write: not empty, not one of the files of its ``inputs`` (the model,
    the data it reads, a codes cache), not a directory, in a writable directory; otherwise an error naming
    ``path``. Returns the temporary name beside it to write to (created empty, as the check of the directory)."""
    if not path:
        raise UserError("the output path (-o) is empty")
    if path == "-":
        raise UserError("-o - (standard output) is for the rows of fastboost predict; give a file name")
    for given in inputs:
        files = _input_files(given)
        for f in files:
            if os.path.abspath(path) == os.path.abspath(f) or (
                    os.path.isfile(path) and os.path.isfile(f) and os.path.samefile(path, f)):
                raise UserError(f"{path}: the output would replace the input {f}; write it to another file")
        if given is not None and files and files != [str(given)]:  # parquet data: a directory or a pattern
            from .dataset import check_codes_path

            try:
                check_codes_path(path, given, files, label=f"-o {path}", what="the output")
            except ValueError as e:
                raise UserError(str(e).rstrip(".")) from None
    if os.path.isdir(path):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
    tmp = f"{path}.tmp-{os.getpid()}"
    try:
        open(tmp, "wb").close()
    except OSError as e:
        raise OSError(e.errno, e.strerror, path) from None
    return tmp


@contextlib.contextmanager
def _replacing(path, inputs=()):
    """A temporary file name beside ``path`` to write an output to: it replaces ``path`` when the block
    completes and is removed when the block fails, so a failed command leaves no partial file and an
    existing ``path`` as it was. A bad ``path`` (``_check_output``) is an error naming it, at once."""
    tmp = _check_output(path, inputs)
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


@contextlib.contextmanager
def _csv_output(path, inputs=()):
    """A csv writer to ``path`` (written through _replacing), or to standard output for "-"."""
    import csv

    if path == "-":
        yield csv.writer(sys.stdout)
        return
    with _replacing(path, inputs) as tmp, open(tmp, "w", newline="") as f:
        yield csv.writer(f)


def _is_parquet(path):
    """Parquet files the commands stream (never loading the table): a .parquet / .pq file, a directory or a
    glob pattern."""
    text = str(path)
    return (any(ch in text for ch in "*?[") or os.path.isdir(text)
            or text.lower().endswith((".parquet", ".pq")))


def _train_dataset(args, model):
    """The training Dataset of parquet files, binned as the model bins (from --codes-cache when it holds
    the codes of these files with these options)."""
    from .dataset import Dataset

    opts = dict(max_bins=model.max_bins, random_state=model.random_state,
                categorical_features=model.categorical_features, class_weight=model.class_weight)
    cache = args.codes_cache
    if cache is not None and os.path.exists(cache):
        from .dataset import ParquetSource

        ds = Dataset.load(cache)

        want = ParquetSource(args.data, args.target, args.weight, None, 1).describe()
        have = ds.source_description() or {}
        same = (have.get("files") == want["files"] and have.get("target") == args.target
                and have.get("weight") == args.weight and ds.max_bins == model.max_bins
                and (ds.random_state == model.random_state or model.random_state is None)
                and ds.source_class_weight() == repr(model.class_weight))
        if not same:
            raise UserError(f"{cache}: holds the codes of other data or options (files, target, --max-bins or "
                            "--random-state); delete it or give another --codes-cache")
        return ds
    return Dataset.from_parquet(args.data, target=args.target, weight=args.weight, codes_path=cache, **opts)


def _weight_column(X, weight, path):
    """The --weight column of a validation table X (taken out of X), or None without --weight."""
    if weight is None:
        return None
    if not hasattr(X, "columns") or weight not in X.columns:
        raise UserError(f"{path}: no weight column {weight!r} (--weight names the weight column of the training "
                        "and the validation data)")
    return X.pop(weight).to_numpy(dtype=np.float64)


def train(args):
    """Train a model on a data file (CSV, parquet or .npy) and save it; parquet files (a file, a directory
    or a glob pattern) are read in batches, never all at once."""
    import warnings

    import fastboost

    from ._tables import read_table

    stream = _is_parquet(args.data)
    if not stream and (args.codes_cache is not None or args.weight is not None):
        raise UserError("--codes-cache and --weight need parquet data (a file, directory or pattern)")
    cache = args.codes_cache
    if cache is not None and os.path.isdir(cache):
        raise UserError(f"--codes-cache {cache} is a directory; give a file name (the codes and {cache}.meta.npz "
                        "beside them)")
    if cache is not None and not os.path.isdir(os.path.dirname(os.path.abspath(cache))):
        raise UserError(f"--codes-cache {cache}: its directory {os.path.dirname(os.path.abspath(cache))} does not "
                        "exist")
    inputs = (args.data, args.valid) + (() if cache is None else (cache, f"{cache}.meta.npz"))
    os.remove(_check_output(args.output, inputs))  # a bad output path: an error before the data are read
    if cache is not None and not os.path.exists(cache):  # a new cache where the data are: refused before binning
        from .dataset import check_codes_path

        check_codes_path(cache, args.data, _input_files(args.data), label=f"--codes-cache {cache}")
    if not stream:
        X, y, _ = read_table(args.data, args.target)
        _check_target(y, args.data, args.target)
    cls = getattr(fastboost, ALGORITHMS[args.algorithm])
    given = {name: getattr(args, name) for name in TRAIN_PARAMS if getattr(args, name) is not None}
    if given.get("penalty") == "none":
        given["penalty"] = None
    if given.get("max_bins") == "exact":
        given["max_bins"] = None
    unknown = sorted(set(given) - set(cls().get_params()))
    if unknown:
        raise UserError(f"{args.algorithm} has no option {', '.join('--' + u.replace('_', '-') for u in unknown)}")
    model = cls(**given)
    fit = {}
    if stream:
        from .dataset import Dataset

        X, y = _train_dataset(args, model), None
        n_rows = X.n_rows
        if args.valid is not None:
            if _is_parquet(args.valid):
                fit["eval_set"] = (Dataset.from_parquet(args.valid, target=args.target, weight=args.weight,
                                                        reference=X),)
            else:
                Xv, yv, _ = read_table(args.valid, args.target, text=_text_columns(X.feature_names, X.categories))
                fit["eval_set"] = (Xv, yv, _weight_column(Xv, args.weight, args.valid))
    else:
        n_rows = len(y)
        if args.valid is not None:
            Xv, yv, _ = read_table(args.valid, args.target, text=_frame_text_columns(X))
            fit["eval_set"] = (Xv, yv)
    with _replacing(args.output, inputs) as tmp:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", UserWarning)
            model.fit(X, y, **fit)
        with open(tmp, "wb") as f:
            model.save(f)
    for message in dict.fromkeys(" ".join(str(w.message).split()) for w in caught
                                 if issubclass(w.category, UserWarning)):
        print(f"fastboost train: warning: {message}", file=sys.stderr)  # (the model is saved: a fit that warns)
    print(f"{type(model).__name__}: {model.n_estimators_} rounds on {n_rows} rows x {model.n_features_in_} "
          f"features in {model.fit_time_:.2f} s; saved to {args.output}")
    return 0


def _features(model, X, names, path):
    """X with the model's feature columns, by name when the model has names and X is a table."""
    want = getattr(model, "feature_names_in_", None)
    if want is not None and hasattr(X, "columns"):
        missing = [c for c in want if c not in X.columns]
        if missing:
            raise UserError(f"{path}: the model needs the column(s) {', '.join(map(repr, missing[:5]))}")
        return X[list(want)]
    if X.shape[1] != model.n_features_in_:
        raise UserError(f"{path}: has {X.shape[1]} feature columns; the model takes {model.n_features_in_}")
    return np.asarray(X, dtype=np.float64) if hasattr(X, "columns") else X


def _check_target(y, path, target):
    """A target column of numbers that are not whole (a regression target): an error naming the column, not
    scikit-learn's "Unknown label type"."""
    values = np.asarray(y)
    if values.dtype.kind == "f":
        frac = np.flatnonzero(np.isfinite(values) & (values != np.round(values)))
        if frac.size:
            raise UserError(f"{path}: the target column {target!r} holds values that are not classes, such as "
                            f"{values[frac[0]]!r} in row {frac[0] + 1}; fastboost's estimators are classifiers")


def _text_columns(names, categories):
    """The categorical features fitted on strings, by name (a model's, or a training Dataset's): a CSV of rows
    to predict or validate reads them as text."""
    if names is None or categories is None:
        return ()
    return [str(n) for n, c in zip(names, categories) if c is not None and c.dtype.kind == "U"]


def _frame_text_columns(X):
    """The columns of a training frame read as text (not numbers): its validation file reads them as text too."""
    if not hasattr(X, "dtypes"):
        return ()
    return [str(c) for c, dt in X.dtypes.items() if dt.kind not in "iufb"]


def predict(args):
    """Predict the rows of a data file with a saved model; write a CSV of predictions (or probabilities)."""
    import warnings

    import fastboost

    from ._tables import read_table

    if args.proba and args.contrib:
        raise UserError("pass --proba or --contrib, not both")
    if args.output != "-":  # a bad output path: an error before the data are read
        os.remove(_check_output(args.output, (args.model, args.data)))
    model = fastboost.load(args.model)
    if _is_parquet(args.data):
        return _predict_stream(args, model)
    X, _, names = read_table(args.data, args.drop, text=_text_columns(getattr(model, "feature_names_in_", None),
                                                             getattr(model, "categories_", None)))
    X = _features(model, X, names, args.data)
    with warnings.catch_warnings():
        if not hasattr(X, "columns"):  # .npy rows are taken by position: they cannot have the model's names
            warnings.filterwarnings("ignore", "X does not have valid feature names", UserWarning)
        if args.contrib:
            header, part = _contrib_header(model), _contrib_rows(model.predict_contrib(X))
        elif args.proba:
            header, part = [f"proba_{c}" for c in model.classes_], model.predict_proba(X)
        else:
            header, part = ["prediction"], model.predict(X)  # (predicted here, before any output is opened)
    n = _write_predictions(args, header, [part], args.contrib or args.proba)
    if args.output != "-":
        what = "contribution rows" if args.contrib else "probability rows" if args.proba else "predictions"
        print(f"wrote {n} {what} to {args.output}")
    return 0


def _write_predictions(args, header, parts, columns_out):
    """Write the blocks of predictions ``parts`` (float columns with ``columns_out``, else one column of labels)
    under ``header``: a parquet file for a .parquet / .pq output, else CSV (standard output for "-"); a file is
    written through _replacing. Returns the number of rows."""
    n = 0
    inputs = (args.model, args.data)
    if args.output != "-" and args.output.lower().endswith((".parquet", ".pq")):
        try:
            import pyarrow as pa
            import pyarrow.parquet as pq
        except ImportError:
            raise UserError(f"{args.output}: writing parquet needs pyarrow: pip install pyarrow") from None
        with _replacing(args.output, inputs) as tmp:
            writer = None
            try:
                for part in parts:
                    cols = [part[:, j] for j in range(part.shape[1])] if columns_out else [part]
                    batch = pa.table(dict(zip(header, cols)))
                    if writer is None:
                        writer = pq.ParquetWriter(tmp, batch.schema)
                    writer.write_table(batch)
                    n += len(part)
            finally:
                if writer is not None:
                    writer.close()
            if n == 0:
                raise ValueError(f"{args.data}: no rows to predict")
        return n
    with _csv_output(args.output, inputs) as w:
        w.writerow(header)
        for part in parts:
            if columns_out:
                w.writerows([repr(float(v)) for v in row] for row in part)
            else:
                w.writerows([v] for v in part.tolist())
            n += len(part)
        if n == 0:
            raise ValueError(f"{args.data}: no rows to predict")
    return n


def _contrib_header(model):
    """The columns of predict --contrib: each feature's name (x0, x1, ... without names) and expected_value;
    with K > 2 classes a block of them per class, each prefixed with "<class>:"."""
    names = [str(n) for n in getattr(model, "feature_names_in_", [f"x{j}" for j in range(model.n_features_in_)])]
    names.append("expected_value")
    if model.classes_.shape[0] > 2:
        return [f"{c}:{n}" for c in model.classes_ for n in names]
    return names


def _contrib_rows(phi):
    """predict_contrib's values as rows of the --contrib columns (K > 2 classes: the classes' blocks side by side)."""
    return phi.reshape(phi.shape[0], -1)


def export(args):
    """Export a saved model to ONNX or Treelite (the onnx / treelite extras)."""
    import fastboost

    if args.dtype is not None and args.to != "onnx":
        raise UserError(f"--dtype is the ONNX input type; --to {args.to} takes none")
    model = fastboost.load(args.model)
    with _replacing(args.output, (args.model, getattr(args, "data", None))) as tmp:
        if args.to == "onnx":
            onnx_model = fastboost.to_onnx(model, dtype=np.dtype(args.dtype or "float32"))
            with open(tmp, "wb") as f:
                f.write(onnx_model.SerializeToString())
        else:
            fastboost.to_treelite(model).serialize(tmp)
    print(f"wrote {type(model).__name__} ({model.n_estimators_} rounds) as {args.to} to {args.output}")
    return 0


def _predict_stream(args, model):
    """predict on parquet files, batch by batch; a file output is written through _replacing (an interrupted
    run leaves nothing under the output name)."""
    from . import dataset

    contrib = args.contrib
    names = getattr(model, "feature_names_in_", None)
    columns = None if names is None else [str(c) for c in names]
    if args.drop is not None and columns is not None and args.drop in columns:
        raise UserError(f"{args.data}: the model needs the column(s) {args.drop!r}; it cannot be dropped")
    source = dataset.ParquetSource(args.data, None, None, columns, 65_536)
    if args.drop is not None and args.drop not in source.schema.names:
        raise UserError(f"{source.first}: no column {args.drop!r} to drop (columns: {source.schema.names[:20]})")
    if columns is None and args.drop is not None:
        source = dataset.ParquetSource(args.data, None, None, [c for c in source.columns if c != args.drop], 65_536)
    method = "predict_contrib" if contrib else "predict_proba" if args.proba else "predict"
    header = _contrib_header(model) if contrib else [f"proba_{c}" for c in model.classes_] if args.proba \
        else ["prediction"]
    columns_out = contrib or args.proba  # float columns (else one column of labels)
    parts = (_contrib_rows(part) if contrib else part for part in dataset.iter_predictions(model, source, method))
    n = _write_predictions(args, header, parts, columns_out)
    if args.output != "-":
        what = "contribution rows" if contrib else "probability rows" if args.proba else "predictions"
        print(f"wrote {n} {what} to {args.output}")
    return 0


def info(args):
    """Describe a saved model: algorithm, parameters, rounds, top features, validation curve."""
    import fastboost

    model = fastboost.load(args.model)
    print(f"{type(model).__name__} (fastboost {fastboost.__version__})")
    params = model.get_params()
    print("parameters: " + ", ".join(f"{k}={v!r}" for k, v in sorted(params.items())))
    print(f"classes: {len(model.classes_)} ({', '.join(map(str, model.classes_[:10]))}"
          f"{', ...' if len(model.classes_) > 10 else ''})")
    parts = getattr(model, "estimators_", None)
    first = model if parts is None else parts[0]
    kind = f"trees of depth {model.max_depth}" if getattr(first, "nodes_", None) is not None else "decision stumps"
    if parts is None:
        print(f"rounds: {model.n_estimators_} ({kind}); {_stops(model)}")
    else:
        print(f"rounds: {model.n_estimators_} ({kind}, one model per class)")
        for c, part in zip(model.classes_, parts):
            print(f"  class {c}: {part.n_estimators_} rounds; {_stops(part)}{_validation(part, '; validation: ')}")
    names = getattr(model, "feature_names_in_", None)
    imp = model.feature_importances_
    top = np.argsort(-imp, kind="stable")[:10]
    print("top features: " + ", ".join(f"{names[j] if names is not None else f'x{j}'} {imp[j]:.3f}"
                                        for j in top if imp[j] > 0))
    if parts is None and _validation(model):
        print(_validation(model, "validation: "))
    return 0


def _stops(model):
    """How a (binary or per-class) model's boosting ended, for ``info``."""
    return (f"stopped by the rule: {bool(getattr(model, 'stopped_by_rule_', 0))}, "
            f"early: {bool(getattr(model, 'stopped_early_', 0))}")


def _validation(model, prefix=""):
    """The model's validation curve in a few words for ``info`` ("" without one)."""
    val = getattr(model, "validation_errors_", None)
    if val is None or not len(val):
        return ""
    best = int(np.argmin(val))
    return (f"{prefix}{len(val)} rounds run, lowest error {val[best]:.4f} at round {best + 1} (kept), "
            f"last {val[-1]:.4f}")


def _bench(args):
    from . import bench

    bench.run(args)
    return 0


def build_parser():
    """The ``fastboost`` command's argument parser (its options are also listed in the documentation)."""
    parser = _Parser(prog="fastboost", description=__doc__)
    from . import __version__

    parser.add_argument("--version", action="version", version=f"fastboost {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("demo", help=demo.__doc__)
    p.add_argument("--n-train", type=positive_int, default=20_000)
    p.add_argument("--n-test", type=positive_int, default=20_000)
    p.add_argument("--rounds", type=positive_int, default=300)
    p.add_argument("--n-jobs", type=int, default=None)
    p.add_argument("--seed", type=seed, default=0)
    p.set_defaults(func=demo)
    p = sub.add_parser("compile", help=compile_kernels.__doc__, description=compile_kernels.__doc__)
    p.add_argument("--jobs", type=positive_int, default=None,
                   help="kernel groups compiled at once, each in its own process (default: one per core; "
                        "1: every group in this process)")
    p.set_defaults(func=compile_kernels)
    p = sub.add_parser("train", help=train.__doc__, description=train.__doc__)
    p.add_argument("data", help="training data: .csv, .npy, or parquet (a file, a directory or a quoted glob "
                                "pattern such as 'data/*.parquet', read in batches)")
    p.add_argument("--target", required=True, action=_Once, help="the label column (a name, or an index for .npy)")
    p.add_argument("--weight", default=None, help="parquet data: a column of sample weights")
    p.add_argument("--codes-cache", default=None, metavar="PATH",
                   help="parquet data: keep the binned codes in this file, and reuse them when it exists")
    p.add_argument("--algorithm", choices=sorted(ALGORITHMS), default="adaboost")
    for name, kind in TRAIN_PARAMS.items():
        if kind is flag:
            p.add_argument("--" + name.replace("_", "-"), action="store_true", default=None)
        else:
            p.add_argument("--" + name.replace("_", "-"), type=kind, default=None, metavar=kind.__name__.upper())
    p.add_argument("--valid", help="a validation file with the same columns (early stopping keeps the best round)")
    p.add_argument("-o", "--output", default="model.fbm", help="where to save the model (default model.fbm)")
    p.set_defaults(func=train)
    p = sub.add_parser("predict", help=predict.__doc__, description=predict.__doc__)
    p.add_argument("model", help="a model saved by 'fastboost train' or estimator.save()")
    p.add_argument("data", help="rows to predict: .csv, .npy, or parquet (a file, directory or glob pattern, "
                                "read in batches)")
    p.add_argument("-o", "--output", default="-", help="CSV file (or .parquet / .pq: a parquet file) for the "
                                                       "predictions (default: standard output)")
    p.add_argument("--proba", action="store_true", help="write class probabilities instead of labels")
    p.add_argument("--contrib", action="store_true",
                   help="write each feature's contribution to the margin and the expected value (SHAP values)")
    p.add_argument("--drop", action=_Once, default=None,
                   help="one column of the data to ignore (e.g. the label column)")
    p.set_defaults(func=predict)
    p = sub.add_parser("export", help=export.__doc__, description=export.__doc__)
    p.add_argument("model", help="a model saved by 'fastboost train' or estimator.save()")
    p.add_argument("--to", required=True, choices=["onnx", "treelite"], help="the format")
    p.add_argument("-o", "--output", required=True, help="the file to write (.onnx, or a Treelite checkpoint)")
    p.add_argument("--dtype", choices=["float32", "float64"], default=None,
                   help="ONNX input type (default float32; --to onnx only)")
    p.set_defaults(func=export)
    p = sub.add_parser("info", help=info.__doc__, description=info.__doc__)
    p.add_argument("model")
    p.set_defaults(func=info)
    from . import bench

    p = sub.add_parser("bench", help="benchmark fastboost against scikit-learn, LightGBM and XGBoost",
                       description=bench.__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    bench.add_arguments(p)
    p.set_defaults(func=_bench)
    return parser


#: options whose value may start with a minus sign without being a number ("-1,0,1")
_SIGNED_LISTS = ("--monotone-constraints",)


def _joined_signed_lists(argv):
    """argv with ``--monotone-constraints -1,0,1`` as ``--monotone-constraints=-1,0,1``: argparse reads a value
    that starts with "-" and is not a plain number as another option, and fails with "expected one argument"."""
    out = []
    i = 0
    while i < len(argv):
        if argv[i] in _SIGNED_LISTS and i + 1 < len(argv) and argv[i + 1].startswith("-") \
                and not argv[i + 1].startswith("--"):
            out.append(f"{argv[i]}={argv[i + 1]}")
            i += 2
        else:
            out.append(argv[i])
            i += 1
    return out


def main(argv=None):
    args = build_parser().parse_args(_joined_signed_lists(sys.argv[1:] if argv is None else list(argv)))
    try:
        return args.func(args)
    except BrokenPipeError:  # the reader went away (e.g. piped into head): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:  # (an output being written is left as it was: _replacing)
        print(f"fastboost {args.command}: interrupted", file=sys.stderr)
        return 130
    except (UserError, ValueError, TypeError, OSError, MemoryError, ImportError, SolverError) as e:
        message = " ".join(str(e).split()) or type(e).__name__
        if isinstance(e, OSError) and e.filename is not None:
            message = f"{e.filename}: {e.strerror}"
        print(f"fastboost {args.command}: error: {message}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
