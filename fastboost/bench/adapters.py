"""One adapter per library of ``fastboost bench``: how each one is set up, fed, trained and asked for predictions.

Both measurements use the same adapters: the per-round timing (``tasks.run_task``) and the time-to-accuracy
curves (``curve.run_curve_task``). An adapter is made for one task (a dict: depth, bins, threads, seed,
``fit_rounds``, and for the curves ``n_classes`` and ``gbm_learning_rate``) and offers

* ``prepare(X, y)``: the library's own input (LightGBM's ``Dataset``, XGBoost's ``QuantileDMatrix``; the
  arrays themselves for the estimators that bin inside ``fit``);
* ``train(dataset, on_round=None)``: the fitted model; ``on_round(rounds_done)`` is called as rounds end
  (fastboost: between chunks of rounds; scikit-learn's AdaBoost: as each round's tree starts, that is as
  the round before ends; HistGradientBoosting: as it writes the line that ends an iteration; those two
  pass no count). The per-round timing trains without it;
* ``predict(model, X)``: the predicted classes;

and what the two measurements read from a fitted model: the rounds it ran, the preparation time of a
timed fit where the library measures it inside ``fit`` (``fit_seconds``), the end of each round from the
``on_round`` stamps (``round_seconds``) and the test error after each round (``errors_per_round``).

Imports only the standard library, NumPy and its sibling ``measure`` at the top (each library inside its
adapter's methods): the child processes load this module by path (see ``_worker.py``), so the children
that fit a competitor never import fastboost.
"""
import contextlib
import importlib
import io
import re

import numpy as np

from .measure import interpolate_round_times

#: ``--algorithms`` names -> fastboost estimator class names. Names whose class is not in the
#: installed fastboost are skipped with a message (a name not listed here is also tried as
#: ``<Name>Classifier``, case-insensitively).
FASTBOOST_ALGORITHMS = {
    "adaboost": "AdaBoostClassifier",
    "vadaboost": "VadaBoostClassifier",
    "ebboost": "EBBoostClassifier",
    "saboost": "SABoostClassifier",
    "quadboost": "QuadBoostClassifier",
    "lazyboost": "LazyBoostClassifier",
    "sammer": "AdaBoostClassifier",
    "mh": "AdaBoostClassifier",
    "real": "AdaBoostClassifier",
    "logistic": "AdaBoostClassifier",
}
#: the parameters an ``--algorithms`` name sets beyond its class's defaults: "real", "sammer" and "mh" are AdaBoost
#: with confidence-rated leaves; with more than two classes "real" fits one-vs-rest, "sammer" and "mh" one tree a
#: round with a value per class in each leaf: SAMME.R ("sammer") or AdaBoost.MH on per-class weights ("mh");
#: "logistic" is "mh" on the logistic loss (with two classes: confidence-rated leaves on it)
ALGORITHM_PARAMS = {"real": {"leaf": "real"},
                    "sammer": {"leaf": "real", "multiclass": "joint", "learning_rate": 0.3},
                    "mh": {"leaf": "real", "multiclass": "mh"},
                    "logistic": {"leaf": "real", "multiclass": "mh", "loss": "logistic"}}


def algorithm_params(algorithm, depth):
    """The parameters ``--algorithms`` name ``algorithm`` sets beyond its class's defaults at tree depth ``depth``:
    "real", "mh" and "logistic" take the learning rate docs/which-estimator.md recommends, 0.3 for stumps and 0.1
    for trees."""
    params = dict(ALGORITHM_PARAMS.get(algorithm, {}))
    if algorithm in ("real", "mh", "logistic"):
        params["learning_rate"] = 0.3 if depth == 1 else 0.1
    return params


#: HistGradientBoosting's verbose log line with its binning time
HGB_BINNING = re.compile(r"Binning [\d.]+ GB of training data: ([\d.]+) s")
#: the line HistGradientBoosting writes with ``verbose=2`` as each iteration ends
HGB_ITERATION_END = r"in \d+\.\d+s$"


class Skipped(Exception):
    """Raised by an adapter when its library cannot run this task; the message says why."""


def fastboost_class(algorithm):
    """The estimator class for an ``--algorithms`` name, or (None, reason)."""
    import fastboost

    name = FASTBOOST_ALGORITHMS.get(algorithm)
    if name is not None and hasattr(fastboost, name):
        return getattr(fastboost, name), None
    wanted = f"{algorithm}classifier".lower()
    for attr in dir(fastboost):
        if attr.lower() == wanted and isinstance(getattr(fastboost, attr), type):
            return getattr(fastboost, attr), None
    known = sorted(a for a in FASTBOOST_ALGORITHMS if hasattr(fastboost, FASTBOOST_ALGORITHMS[a]))
    reason = (f"fastboost {fastboost.__version__} has no {name or algorithm!r} estimator "
              f"(available: {', '.join(known)})")
    return None, reason


def warm_slice(X, y, n=2000):
    """A small slice with both classes, to warm up JIT compilation / lazy initialisation."""
    n = min(n, X.shape[0])
    Xw, yw = X[:n], y[:n]
    if np.unique(yw).size < 2:
        i0, i1 = np.flatnonzero(y == 0)[:n // 2], np.flatnonzero(y == 1)[:n // 2]
        idx = np.sort(np.concatenate([i0, i1]))
        Xw, yw = X[idx], y[idx]
    return Xw, yw


def error_curve(labels_per_round, y):
    """Test error after each round from an iterable of predicted labels (one array per round)."""
    return np.array([np.count_nonzero(np.asarray(p) != y) for p in labels_per_round], dtype=np.float64) / y.shape[0]


def labels_of(raw):
    """Class index from raw scores: > 0 for one column (binary), argmax for K columns."""
    return (raw > 0).astype(np.int64) if raw.ndim == 1 else np.argmax(raw, axis=1)


class Adapter:
    """What every adapter shares; the defaults suit scikit-learn-style estimators fitted on the arrays."""

    #: the library's key (a task's ``library``), its label, the module that must import, its short name
    key = label = module = short = None
    #: scikit-learn's AdaBoost: extrapolated (per-round) or capped (curves) from ``--slow-rows`` rows on
    slow = False
    #: it splits on exact values: it runs with ``--bins exact``
    exact = False
    #: predictions timed this many times (the median is reported)
    predict_reps = 3
    #: how the per-round timing's preparation was measured (None: no preparation), and the curves'
    prep_what = None
    curve_prep_what = None
    #: how the curves time each round and evaluate the test error after it
    round_timing = "a training callback stamps the end of every iteration"
    evaluation = "staged_predict on the test rows after the fit"

    def __init__(self, task):
        self.task = task
        self.depth, self.bins, self.threads, self.seed = task["depth"], task["bins"], task["threads"], task["seed"]
        self.rounds = task.get("fit_rounds") or task["rounds"]
        self.n_classes = task.get("n_classes", 2)
        self.learning_rate = task.get("gbm_learning_rate", 0.1)
        #: the parameters the library is given (the JSON record's ``params``) and what is called
        self.params, self.estimator = None, None

    def threads_used(self):
        return self.threads

    def session(self):
        """A context around the warm-up, the fits and the predictions (HistGradientBoosting: its thread limit)."""
        return contextlib.nullcontext()

    def warm_up(self, X, y, staged=False):
        """A small fit (JIT compilation, lazy initialisation); ``staged``: also what the curves call after it."""
        raise NotImplementedError

    def prepare(self, X, y):
        return X, y

    def train(self, dataset, on_round=None):
        raise NotImplementedError

    def rounds_run(self, model):
        raise NotImplementedError

    def predict(self, model, X):
        return model.predict(X)

    def fit_seconds(self, model, prep_s, train_s):
        """(preparation, training) seconds of a timed fit from the times of ``prepare`` and ``train``."""
        return prep_s, train_s

    def describe_fits(self, res, model, n_train):
        """Add the per-round timing's notes on the last fit to ``res``."""
        res["prep_what"] = self.prep_what

    def runtime(self):
        """What the per-round timing records about the library's runtime (threading layer, ...)."""
        return {}

    def round_seconds(self, model, stamps, prep_s, fit_s, res):
        """The seconds at which each round ended, from the ``on_round`` stamps (``stamps.times`` and ``.marks``,
        seconds from the start of ``prepare``), the end of ``prepare`` (``prep_s``) and of ``train`` (``fit_s``).
        Adds ``prep_s``, ``prep_what`` and ``timing`` to ``res``."""
        res["prep_s"], res["prep_what"] = prep_s, self.curve_prep_what or self.prep_what
        res["timing"] = self.round_timing
        return np.array(stamps.times[:self.rounds_run(model)])

    def errors_per_round(self, model, X, y, res):
        """The test error after each round; adds ``evaluation`` and a ``final_check`` to ``res``."""
        errors = error_curve(model.staged_predict(X), y)
        res["evaluation"] = self.evaluation
        res["final_check"] = {"predict_error": float(np.mean(model.predict(X) != y)),
                              "curve_error": float(errors[-1])}
        return errors


class FastboostAdapter(Adapter):
    """A fastboost estimator (``task["algorithm"]``): binning inside ``fit``, ``fit(callbacks=...)`` between
    chunks of rounds, ``staged_predict``."""

    key = "fastboost"
    exact = True
    prep_what = "BinMapper fit_transform (bin_time_)"
    curve_prep_what = "input checks + BinMapper (bin_time_)"

    def __init__(self, task):
        super().__init__(task)
        cls, reason = fastboost_class(task["algorithm"])
        if cls is None:
            raise Skipped(reason)
        params = {"n_estimators": self.rounds, "max_bins": self.bins, "n_jobs": self.threads,
                  "random_state": self.seed}
        known = cls().get_params()
        if "max_depth" in known:
            params["max_depth"] = self.depth
        elif self.depth > 1:
            raise Skipped(f"{cls.__name__} has no max_depth parameter: it fits stumps only (depth 1)")
        if task.get("trim") is not None:
            if "weight_trim_rate" not in known:
                raise Skipped(f"{cls.__name__} has no weight_trim_rate parameter (no weight trimming)")
            params["weight_trim_rate"] = task["trim"]
        params.update(algorithm_params(task["algorithm"], self.depth))
        self.cls, self.params, self.estimator = cls, params, f"fastboost.{cls.__name__}"

    def threads_used(self):
        from fastboost._config import resolve_n_jobs

        return resolve_n_jobs(self.threads)

    def warm_up(self, X, y, staged=False):
        warm = self.cls(**{**self.params, "n_estimators": 5})
        if not staged:
            warm.fit(X, y).predict(X[:100])
            return
        warm.fit(X, y, callbacks=[lambda done, rounds: None])
        list(warm.staged_predict(X[:100]))

    def train(self, dataset, on_round=None):
        est = self.cls(**self.params)
        if on_round is None:
            return est.fit(*dataset)
        return est.fit(*dataset, callbacks=[lambda done, rounds: on_round(done)])

    def rounds_run(self, model):
        """Rounds kept; one-vs-rest: those of the longest class model (its staged predictions' length)."""
        if hasattr(model, "estimators_"):
            return max(int(m.n_estimators_) for m in model.estimators_)
        return int(model.n_estimators_)

    @staticmethod
    def _bin_time(model):
        """Seconds of binning: one-vs-rest, the first class model's (the others reuse its codes)."""
        return model.estimators_[0].bin_time_ if hasattr(model, "estimators_") else model.bin_time_

    def fit_seconds(self, model, prep_s, train_s):
        return self._bin_time(model), model.fit_time_ - self._bin_time(model)

    def describe_fits(self, res, model, n_train):
        super().describe_fits(res, model, n_train)
        notes = []
        n_run = self.rounds_run(model)
        if n_run < self.rounds:
            notes.append(f"stopped early after {n_run} of {self.rounds} rounds")
        if self.task.get("trim") is not None and not hasattr(model, "estimators_"):
            res["rows_read_share"] = float(model.rounds_["n_seen"].mean() / n_train)
            notes.append(f"learner read {100 * res['rows_read_share']:.1f} % of the rows per round")
        if notes:
            res["note"] = "; ".join(notes)

    def runtime(self):
        import numba

        from fastboost._config import wait_policy

        out = {}
        try:
            out["numba_threading_layer"] = numba.threading_layer()
        except ValueError:
            pass
        out["wait_policy"] = wait_policy()
        return out

    def round_seconds(self, model, stamps, prep_s, fit_s, res):
        """Linear between the callback points; round 1 starts after the input checks and ``bin_time_``."""
        n_run = self.rounds_run(model)
        before = fit_s - model.fit_time_  # input checks before fastboost's fit timer (and its tiny bookkeeping after)
        if hasattr(model, "estimators_"):
            return self._one_vs_rest_seconds(model, stamps, before, res)
        points = [(0, before + model.bin_time_)] + [(d, t) for d, t in zip(stamps.marks, stamps.times) if d <= n_run]
        if points[-1][0] < n_run:  # a stop rule ended the fit after the last callback
            points.append((n_run, before + model.fit_time_))
        gaps = np.diff([p[0] for p in points])
        res["prep_s"] = before + model.bin_time_
        res["prep_what"] = self.curve_prep_what
        res["timing"] = (f"fit callbacks between chunks of rounds: {len(points) - 1} time stamps, {int(gaps.min())} "
                         f"to {int(gaps.max())} rounds apart, the rounds in between interpolated linearly; round 1 "
                         "starts after the input checks and bin_time_ (callback_points: [rounds done, seconds])")
        res["callback_points"] = [list(p) for p in points]
        return interpolate_round_times(points, n_run)

    def _one_vs_rest_seconds(self, model, stamps, before, res):
        """A one-vs-rest fit's seconds to round t: the preparation plus, per class model, the seconds its fit
        took to its own round t (to its last, once it stopped), i.e. what a fit of t rounds a class would take.
        The class models are fitted one after the other, each calling the callbacks with its own rounds done, so
        the stamps fall into one run per class; a class's fit starts where the previous class's last stamp is."""
        models = model.estimators_
        runs = []
        for d, t in zip(stamps.marks, stamps.times):
            if not runs or d <= runs[-1][-1][0]:
                runs.append([])
            runs[-1].append((d, t))
        if len(runs) != len(models) or any(r[-1][0] != m.n_estimators_ for r, m in zip(runs, models)):
            raise Skipped("a class model of the one-vs-rest fit stopped before its last callback, so its rounds "
                          "cannot be timed")
        prep = before + self._bin_time(model)
        seconds = np.full(self.rounds_run(model), prep)
        start = prep
        for m, run in zip(models, runs):
            ends = interpolate_round_times([(0, start)] + run, m.n_estimators_) - start
            seconds += np.concatenate([ends, np.full(seconds.shape[0] - ends.shape[0], ends[-1])])
            start = run[-1][1]
        res["prep_s"], res["prep_what"] = prep, self.curve_prep_what
        res["timing"] = (f"one-vs-rest: {len(models)} class models fitted one after the other, each with fit "
                         "callbacks between chunks of rounds (interpolated linearly in between); round t ends at the "
                         "preparation plus each class model's seconds to its round t (callback_points: per class, "
                         "[rounds done, seconds])")
        res["callback_points"] = [[list(p) for p in run] for run in runs]
        return seconds


class SklearnAdaBoostAdapter(Adapter):
    """scikit-learn's AdaBoostClassifier on decision trees: one thread, exact splits (no binning)."""

    key, label, module, short = "sklearn-adaboost", "sklearn AdaBoostClassifier", "sklearn.ensemble", "sklearn AdaBoost"
    slow = exact = True
    predict_reps = 1
    curve_prep_what = "input checks before the first round's tree (no binning)"
    round_timing = ("each round's tree stamps the time as its fit starts: round t ends when round t + 1 starts, "
                    "the last when fit returns")

    def __init__(self, task):
        super().__init__(task)
        self.params = {"estimator": f"DecisionTreeClassifier(max_depth={self.depth})", "n_estimators": self.rounds,
                       "learning_rate": 1.0}
        self.estimator = "sklearn.ensemble.AdaBoostClassifier"

    def threads_used(self):
        return 1

    def _make(self, rounds, tree):
        from sklearn.ensemble import AdaBoostClassifier

        return AdaBoostClassifier(estimator=tree(max_depth=self.depth), n_estimators=rounds, learning_rate=1.0,
                                  random_state=self.seed)

    def warm_up(self, X, y, staged=False):
        from sklearn.tree import DecisionTreeClassifier

        self._make(2, DecisionTreeClassifier).fit(X, y)

    def train(self, dataset, on_round=None):
        from sklearn.tree import DecisionTreeClassifier

        tree = DecisionTreeClassifier
        if on_round is not None:
            class StampedTree(DecisionTreeClassifier):
                """A decision tree that stamps the time each time a round starts fitting it."""

                def fit(self, X, y, sample_weight=None, check_input=True):
                    on_round()
                    return super().fit(X, y, sample_weight=sample_weight, check_input=check_input)

            tree = StampedTree
        return self._make(self.rounds, tree).fit(*dataset)

    def rounds_run(self, model):
        return len(model.estimators_)

    def fit_seconds(self, model, prep_s, train_s):
        return None, train_s

    def describe_fits(self, res, model, n_train):
        super().describe_fits(res, model, n_train)
        res["note"] = "1 thread (no n_jobs), no binning"

    def round_seconds(self, model, stamps, prep_s, fit_s, res):
        super().round_seconds(model, stamps, prep_s, fit_s, res)
        res["prep_s"] = stamps.times[0]
        return np.array((stamps.times[1:] + [fit_s])[:self.rounds_run(model)])  # round t ends as t + 1 starts


class LightGBMAdapter(Adapter):
    """LightGBM's ``lightgbm.train``; preparation = ``Dataset(...).construct()``; test errors from the raw scores of
    one iteration at a time."""

    key, label, module, short = "lightgbm", "LightGBM", "lightgbm", "LightGBM"
    prep_what = "lgb.Dataset(free_raw_data=False).construct()"
    evaluation = ("after the fit: raw scores of one iteration at a time (predict(start_iteration=i, "
                  "num_iteration=1, raw_score=True)), summed")

    def __init__(self, task):
        import lightgbm as lgb

        super().__init__(task)
        k = self.n_classes
        objective = {"objective": "binary"} if k == 2 else {"objective": "multiclass", "num_class": k}
        self.ds_params = {"max_bin": self.bins, "verbose": -1, "num_threads": self.threads, "seed": self.seed}
        self.params = {**objective, "learning_rate": self.learning_rate, "num_leaves": 2 ** self.depth,
                       "max_depth": self.depth, "max_bin": self.bins, "num_threads": self.threads, "verbose": -1,
                       "seed": self.seed}
        self.estimator = f"lightgbm.train (lightgbm {lgb.__version__})"
        self.lgb = lgb

    def warm_up(self, X, y, staged=False):
        self.lgb.train(self.params, self.lgb.Dataset(X, label=y, params=self.ds_params), num_boost_round=2)

    def prepare(self, X, y):
        return self.lgb.Dataset(X, label=y, params=self.ds_params, free_raw_data=False).construct()

    def train(self, dataset, on_round=None):
        callbacks = None if on_round is None else [lambda env: on_round(env.iteration + 1)]
        return self.lgb.train(self.params, dataset, num_boost_round=self.rounds, callbacks=callbacks)

    def rounds_run(self, model):
        return model.current_iteration()

    def predict(self, model, X):
        p = model.predict(X, num_threads=self.threads)
        return p > 0.5 if p.ndim == 1 else np.argmax(p, axis=1)

    def errors_per_round(self, model, X, y, res):
        n_run = self.rounds_run(model)
        raw, errors = None, np.empty(n_run)
        for i in range(n_run):
            part = model.predict(X, start_iteration=i, num_iteration=1, raw_score=True, num_threads=self.threads)
            raw = part if raw is None else raw + part
            errors[i] = np.mean(labels_of(raw) != y)
        full = labels_of(model.predict(X, raw_score=True, num_threads=self.threads))
        res["evaluation"] = self.evaluation
        res["final_check"] = {"predict_error": float(np.mean(full != y)), "curve_error": float(errors[-1]),
                              "label_mismatches": int(np.count_nonzero(full != labels_of(raw)))}
        return errors


class XGBoostAdapter(Adapter):
    """XGBoost's ``xgboost.train`` with ``tree_method="hist"``; preparation = ``QuantileDMatrix``; test errors from the
    margins of one iteration at a time."""

    key, label, module, short = "xgboost", "XGBoost", "xgboost", "XGBoost"
    prep_what = "xgboost.QuantileDMatrix(max_bin=bins)"
    evaluation = ("after the fit: margins of one iteration at a time (iteration_range=(i, i + 1) on a test "
                  "DMatrix with base_margin 0), summed with the base score in float64")

    def __init__(self, task):
        import xgboost as xgb

        super().__init__(task)
        k = self.n_classes
        objective = {"objective": "binary:logistic"} if k == 2 else {"objective": "multi:softprob", "num_class": k}
        self.params = {**objective, "tree_method": "hist", "max_depth": self.depth, "max_bin": self.bins,
                       "learning_rate": self.learning_rate, "nthread": self.threads, "verbosity": 0,
                       "seed": self.seed}
        self.estimator = f"xgboost.train (xgboost {xgb.__version__})"
        self.xgb = xgb

    def warm_up(self, X, y, staged=False):
        xgb = self.xgb
        xgb.train(self.params, xgb.QuantileDMatrix(X, label=y, max_bin=self.bins, nthread=self.threads),
                  num_boost_round=2)

    def prepare(self, X, y):
        return self.xgb.QuantileDMatrix(X, label=y, max_bin=self.bins, nthread=self.threads)

    def train(self, dataset, on_round=None):
        callbacks = None
        if on_round is not None:
            class StampIterations(self.xgb.callback.TrainingCallback):
                def after_iteration(self, model, epoch, evals_log):
                    on_round(epoch + 1)
                    return False

            callbacks = [StampIterations()]
        return self.xgb.train(self.params, dataset, num_boost_round=self.rounds, callbacks=callbacks)

    def rounds_run(self, model):
        return model.num_boosted_rounds()

    def predict(self, model, X):
        p = model.inplace_predict(X)
        return p > 0.5 if p.ndim == 1 else np.argmax(p, axis=1)

    def errors_per_round(self, model, X, y, res):
        xgb, k, n_run = self.xgb, self.n_classes, self.rounds_run(model)
        shape = (X.shape[0],) if k == 2 else (X.shape[0], k)
        plain = xgb.DMatrix(X, nthread=self.threads)
        zero = xgb.DMatrix(X, base_margin=np.zeros(shape, np.float32), nthread=self.threads)  # trees only
        first = {"iteration_range": (0, 1), "output_margin": True}
        raw = (model.predict(plain, **first) - model.predict(zero, **first)).astype(np.float64)  # the base score
        errors = np.empty(n_run)
        for i in range(n_run):
            raw += model.predict(zero, iteration_range=(i, i + 1), output_margin=True)
            errors[i] = np.mean(labels_of(raw) != y)
        full_raw = model.predict(plain, output_margin=True)
        full = labels_of(full_raw)
        res["evaluation"] = self.evaluation
        res["final_check"] = {"predict_error": float(np.mean(full != y)), "curve_error": float(errors[-1]),
                              "label_mismatches": int(np.count_nonzero(full != labels_of(raw))),
                              "max_abs_margin_difference": float(np.max(np.abs(full_raw - raw)))}
        return errors


class _LineStamps:
    """A text stream that calls ``on_line()`` on each write matching ``pattern`` and keeps the text."""

    def __init__(self, on_line, pattern):
        self.on_line, self.pattern, self.lines = on_line, re.compile(pattern), []

    def write(self, text):
        if self.pattern.search(text):
            self.on_line()
        self.lines.append(text)
        return len(text)

    def flush(self):
        pass

    def getvalue(self):
        return "".join(self.lines)


class SklearnHGBAdapter(Adapter):
    """scikit-learn's HistGradientBoostingClassifier: binning inside ``fit`` (its time read from the verbose log);
    with ``on_round``, ``verbose=2`` lines stamped as they are written."""

    key, label, module, short = ("sklearn-hgb", "sklearn HistGradientBoostingClassifier", "sklearn.ensemble",
                                 "sklearn HGB")
    round_timing = ("verbose=2: HGB writes a line as each iteration ends; the writes are stamped (the line's "
                    "formatting, microseconds, counts as training time)")

    def __init__(self, task):
        super().__init__(task)
        self.params = {"max_iter": self.rounds, "learning_rate": self.learning_rate, "max_depth": self.depth,
                       "max_leaf_nodes": max(2, 2 ** self.depth), "max_bins": self.bins, "early_stopping": False,
                       "random_state": self.seed}
        self.estimator = "sklearn.ensemble.HistGradientBoostingClassifier"
        self.log = ""  # the last fit's verbose log

    def session(self):
        from threadpoolctl import threadpool_limits

        return threadpool_limits(self.threads, user_api="openmp")

    def warm_up(self, X, y, staged=False):
        from sklearn.ensemble import HistGradientBoostingClassifier

        HistGradientBoostingClassifier(**{**self.params, "max_iter": 2}).fit(X, y)

    def train(self, dataset, on_round=None):
        from sklearn.ensemble import HistGradientBoostingClassifier

        if on_round is None:
            est, out = HistGradientBoostingClassifier(**self.params, verbose=1), io.StringIO()
        else:
            est, out = HistGradientBoostingClassifier(**self.params, verbose=2), _LineStamps(on_round,
                                                                                              HGB_ITERATION_END)
        with contextlib.redirect_stdout(out):
            est.fit(*dataset)
        self.log = out.getvalue()
        return est

    def rounds_run(self, model):
        return int(model.n_iter_)

    def _binning_s(self):
        m = HGB_BINNING.search(self.log)
        return float(m.group(1)) if m else None

    def fit_seconds(self, model, prep_s, train_s):
        binning = self._binning_s()  # None: not separable, counted as training
        return binning, train_s if binning is None else train_s - binning

    def describe_fits(self, res, model, n_train):
        if all(run["prep_s"] is not None for run in res["runs"]):
            res["prep_what"] = "HGB's own binning time, read from its verbose log (fit minus it = train)"
            res["note"] = "prep from HGB's verbose log"
        else:
            res["prep_what"] = None
            res["note"] = "binning not separable: included in train"

    def round_seconds(self, model, stamps, prep_s, fit_s, res):
        super().round_seconds(model, stamps, prep_s, fit_s, res)
        res["prep_s"] = self._binning_s()
        res["prep_what"] = "HGB's own binning time from its verbose log" if res["prep_s"] is not None else None
        n_run = self.rounds_run(model)
        if len(stamps.times) != n_run:
            raise RuntimeError(f"HGB wrote {len(stamps.times)} iteration lines for {n_run} iterations")
        return np.array(stamps.times)


#: The adapter of each library, by key ("fastboost" for every fastboost algorithm).
ADAPTERS = {a.key: a for a in (FastboostAdapter, SklearnAdaBoostAdapter, LightGBMAdapter, XGBoostAdapter,
                               SklearnHGBAdapter)}

#: Competitors: key -> (label, module that must import, short name for ratios).
COMPETITORS = {a.key: (a.label, a.module, a.short) for a in ADAPTERS.values() if a is not FastboostAdapter}


def adapter_class(task):
    """The adapter class of a task (its key: a competitor's, or "fastboost-<algorithm>"); ValueError if none."""
    key = task["key"]
    adapter = ADAPTERS.get("fastboost" if key.startswith("fastboost-") else key)
    if adapter is None:
        raise ValueError(f"unknown benchmark task {key!r}")
    return adapter


def unavailable(key):
    """Why competitor ``key`` cannot run here (its module does not import), or None."""
    try:
        importlib.import_module(COMPETITORS[key][1])
    except Exception as exc:
        return f"not installed or not importable ({type(exc).__name__}: {exc}); pip install 'fastboost[bench]'"
    return None
