"""One fit in progress as one object.

A :class:`Fit` holds everything a boosting fit has between its first and its last round: the
configuration record, the algorithm's rules, the state the rounds update (``STATE_DTYPE``), the
fitted records so far (``Model``), the validation bookkeeping and why the fit stopped. It has two
verbs: :meth:`Fit.run` runs rounds up to a given number (again later for a warm start, continuing
where it stopped), :meth:`Fit.finish` returns the kept records as a :class:`FitResult`.

What differs between a fit on this machine and one on Dask is only where the rows are: a
:class:`Fit` runs its rounds through a *rounds engine*, an object with

- ``state``: the ``STATE_DTYPE[1]`` array the rounds update (stop reason, best validation round);
- ``chunk_end(done)``: the round a call started at ``done`` should stop at, at most;
- ``run(fit, start, stop)``: run rounds ``start .. stop - 1`` into ``fit.model`` (growing it as
  needed); return the rounds kept (fewer on a stop; ``state[0].stop`` then says why);
- ``header(n_rounds, start)`` and ``training_error()``: the first progress line and, when verbose, a
  running training error (or None).

:class:`LocalRounds` is the engine of this machine (the one compiled loop over the binned data);
the Dask estimators supply one whose rows live on the workers (``fastboost.dask``). Everything
else -- chunks of rounds, growing the records, the hook between rounds, progress lines,
callbacks, early stopping's kept round, the end-of-fit bookkeeping -- is here, once.

The hook between rounds (:class:`RoundHook`) is how totally corrective fits revise earlier
steps: QuadBoost's coordinate-descent re-weighting pass and LPBoost's master LP run after every
``every`` rounds (and after the last round with ``after_last``); ``finish`` revises the kept
records once at the end (QuadBoost's last pass, the LP estimators' re-weighting).
"""
import time
import warnings
from typing import Any, Callable, NamedTuple, Optional

import numpy as np
from numba import NumbaExperimentalFeatureWarning

from ._config import thread_governor
from ._driver import (
    CALL_SECONDS,
    CHUNK,
    FIRST_CHUNK_ADAPTIVE,
    MAX_CHUNK,
    Progress,
    TrainingError,
    check_memory,
    grow_model,
    kept_model,
    make_model,
    model_values,
    report_every,
)
from ._kernels.loop import boost
from ._types import (
    NODE_DTYPE,
    RAN_ALL,
    ROUND_DTYPE,
    STOPPED_BY_CALLBACK,
    Model,
)

__all__ = ["Fit", "FitResult", "LocalRounds", "NO_HOOK", "RoundHook"]


class RoundHook(NamedTuple):
    """What a fit runs besides its rounds; every field optional.

    every       rounds between calls of ``between`` (None: never)
    after_last  call ``between`` after the last round too
    between     ``between(fit, model)`` with the kept records so far (``model``, a view); may revise their
                steps and the rounds' state, and return a reason to stop (``STOPPED_EARLY``,
                ``STOPPED_BY_RULE``) or None to go on
    finish      ``finish(fit, model) -> model``: revise the kept records once, after the last round
    """
    every: Optional[int] = None
    after_last: bool = False
    between: Optional[Callable] = None
    finish: Optional[Callable] = None


#: a fit with nothing between its rounds
NO_HOOK = RoundHook()


class FitResult(NamedTuple):
    """What a finished fit hands to its estimator.

    model              the kept records (``Model``): with validation, up to the best validation round
    why                why the fit ended (``RAN_ALL``, ``STOPPED_BY_RULE``, ``STOPPED_EARLY``, ``STOPPED_BY_CALLBACK``)
    done               rounds run (kept or not)
    validation_errors  the validation error after each round run (None without validation)
    initial_cost       the cost before the first round
    """
    model: Model
    why: int
    done: int
    validation_errors: Optional[np.ndarray]
    initial_cost: float


class Fit:
    """One boosting fit: configuration, rules, state, records, validation and why it stopped.

    name            the estimator's name (progress lines, errors)
    rule            the algorithm's rules (``_algorithms.Rule``): its cost gives the initial cost
    config          ``CONFIG_DTYPE[1]``, the options the rounds read by name
    rounds          the rounds engine (:class:`LocalRounds`, or the Dask one)
    n_nonzero       training rows with positive weight
    capacity        rows of round records allocated up front (grown as needed)
    has_validation  whether the fit keeps the round with the lowest validation error
    hook            a :class:`RoundHook`
    verbose         progress lines (``_driver.Progress``)
    data, valid, mapper
                    the binned training and validation data and the bin mapper (None on Dask); kept so a
                    warm start can check it continues the same fit, and for the hook
    """

    def __init__(self, name, rule, config, rounds, *, n_nonzero, capacity, has_validation=False, hook=NO_HOOK,
                 verbose=0, data=None, valid=None, mapper=None):
        self.name = name
        self.rule = rule
        self.config = config
        self.rounds = rounds
        self.hook = hook
        self.verbose = verbose
        self.has_validation = bool(has_validation)
        self.data = data
        self.valid = valid
        self.mapper = mapper
        self.state = rounds.state
        self.state[0]["n"] = n_nonzero
        self.state[0]["best_val"] = np.inf
        if config[0]["logistic"]:  # the mean pair loss log(1 + exp(-m)) at the margins 0 is log 2
            self.state[0]["log_mean_loss"] = np.log(np.log(2.0))
        self.initial_cost = float(np.exp(rule.cost(self.state.copy()[0], 0.0, 1.0, 1.0, config[0])))
        self.model = make_model(capacity, int(config[0]["max_depth"]), model_values(config))
        self.done = 0
        self.why = RAN_ALL
        self.progress = None
        self.target = 0  # the rounds the current run goes up to
        self.runs = 0  # the runs that ran rounds (one stopped part way, by Ctrl-C say, has changed the state in place)
        #: free for the estimator (the parameters a warm start must keep, the hook's own state)
        self.extra: dict[str, Any] = {}

    # ------------------------------------------------------------------ running
    def run(self, n_rounds, callbacks=()):
        """Run rounds ``done .. n_rounds - 1`` in chunks (none after a stop); return self.

        Between chunks Python grows the records, runs the hook, reports progress and calls
        ``callbacks`` as ``callback(done, rounds)`` (a copy of the records so far, ``cost`` filled in);
        one returning True ends the fit there (``STOPPED_BY_CALLBACK``, which a later ``run`` may
        continue). A huge ``n_rounds`` costs nothing up front.
        """
        if self.why == STOPPED_BY_CALLBACK:  # a callback's stop: more rounds may follow
            self.why = RAN_ALL
        start = self.done
        T = n_rounds if self.why == RAN_ALL else start
        self.target = T
        engine = self.rounds
        training_error = engine.training_error() if self.verbose else None
        self.progress = progress = Progress(self.name, T, self.verbose, start=start,
                                            header=engine.header(T, start) if self.verbose else None,
                                            training_error=training_error)
        hook = self.hook
        every = hook.every
        done = start
        why = RAN_ALL
        if start and every and start % every == 0 and start < T:
            hook.between(self, kept_model(self.model, start))  # the pass a longer fit would have made here
        if start < T:
            self.runs += 1
        engine.start_run()
        while done < T:
            stop_at = min(T, engine.chunk_end(done))
            if every:
                stop_at = min(stop_at, (done // every + 1) * every)
            if progress:
                stop_at = min(stop_at, progress.next_report)
            done += engine.run(self, done, stop_at)
            why = int(self.state[0]["stop"])
            if every and why == RAN_ALL and done % every == 0 and (done < T or hook.after_last):
                why = hook.between(self, kept_model(self.model, done)) or RAN_ALL
                if training_error is not None:
                    training_error.reset()  # the pass changed earlier steps
            if progress and (progress.due(done) or why != RAN_ALL or done >= T):
                model = self.model
                cost = np.exp(model.rounds[done - 1]["log_cost"]) if done else self.initial_cost
                verr = float(model.rounds[done - 1]["val_error"]) if done and self.has_validation else None
                progress.report(done, cost, verr, model)
            # every callback sees the last rounds too, however the fit ends (its stop rule, early stopping, the
            # hook); True after the last round stops nothing
            if callbacks and _callbacks_stop(callbacks, done, self.model.rounds) and why == RAN_ALL and done < T:
                why = STOPPED_BY_CALLBACK
            if why != RAN_ALL:
                break
        if T > start:  # (nothing run: the previous run's reason stands)
            self.why = why
        self.done = done
        return self

    def grow(self, capacity):
        """Room in the records for ``capacity`` rounds (the kept rounds copied)."""
        self.model = grow_model(self.model, capacity)

    # ------------------------------------------------------------------ finishing
    @property
    def kept(self):
        """Rounds kept: with validation, those up to the best validation round; else every round run."""
        return int(self.state[0]["best_t"]) if self.has_validation else self.done

    def finish(self, keep_state=False):
        """The fit's result (:class:`FitResult`): the kept records, revised by the hook's ``finish``.

        keep_state: the kept records are copies, so the fit can be run further (a warm start) with its
        own records untouched.
        """
        done, why = self.done, self.why
        if self.progress is not None:
            if self.has_validation:
                self.progress.finish(why, done, self.kept, float(self.state[0]["best_val"]))
            else:
                self.progress.finish(why, done)
        model = kept_model(self.model, self.kept)
        if keep_state:
            model = Model(model.rounds.copy(), model.nodes.copy(), model.values.copy())
        if self.hook.finish is not None:
            model = self.hook.finish(self, model)
        errors = self.model.rounds["val_error"][:done].copy() if self.has_validation else None
        return FitResult(model, why, done, errors, self.initial_cost)


def _callbacks_stop(callbacks, done, rounds):
    """Call every callback with the rounds done (a copy, cost filled in as in ``rounds_``); any True stops."""
    stop = False
    for cb in callbacks:
        records = rounds[:done].copy()
        records["cost"] = np.exp(records["log_cost"])
        stop |= bool(cb(done, records))
    return stop


class LocalRounds:
    """The rounds engine of this machine: the one compiled loop over the binned data in memory.

    data    TrainData; valid  ValidData the loop validates on (no rows: none); config  CONFIG_DTYPE[1];
    rules   the loop's compiled functions (``_driver.pick_rules``); ws  Workspace; learner  the weak learner's
    functions (``_driver.pick_learner``), for the verbose training error; n_val  the validation rows of the
    fit (for the progress header; a corrective fit validates between rounds, not in the loop).

    Calls are chunks of rounds sized to take about ``CALL_SECONDS`` each (the first ``CHUNK`` rounds, or
    ``FIRST_CHUNK_ADAPTIVE`` when the thread count follows the machine's load), so Python answers
    Ctrl-C, grows the records and reports progress in between.
    """

    def __init__(self, data, valid, config, rules, ws, learner, n_val=0):
        self.data = data
        self.valid = valid
        self.config = config
        self.rules = rules
        self.ws = ws
        self.learner = learner
        self.n_val = n_val
        self.state = ws.state
        self.loop = boost.get(data.codes)
        self.governor = None
        self.chunk = CHUNK

    def start_run(self):
        self.governor = thread_governor()
        # a first short call: the thread count follows the machine's load from the second call on
        self.chunk = FIRST_CHUNK_ADAPTIVE if self.governor.enabled else CHUNK

    def chunk_end(self, done):
        return done + self.chunk

    def run(self, fit, start, stop):
        model = fit.model
        if stop > model.rounds.shape[0]:
            capacity = min(fit.target, max(stop, 2 * model.rounds.shape[0]))
            nodes_per_round = model.nodes.shape[1] * NODE_DTYPE.itemsize if model.nodes.shape[0] else 0
            check_memory(fit.name,
                         {f"round records ({capacity} rounds)": capacity * (ROUND_DTYPE.itemsize + nodes_per_round)},
                         hint="lower n_estimators or use early stopping (n_iter_no_change)")
            fit.grow(capacity)
        self.governor.adjust()
        started = time.perf_counter()
        with warnings.catch_warnings():  # numba calls passing first-class functions "experimental"
            warnings.simplefilter("ignore", NumbaExperimentalFeatureWarning)
            kept = self.loop(self.data, self.valid, self.config[0], self.rules, self.ws, fit.model, start, stop)
        seconds = time.perf_counter() - started
        if kept:  # the next call: as many rounds as take about CALL_SECONDS (never the model)
            self.chunk = int(min(MAX_CHUNK, max(1, CALL_SECONDS * kept / max(seconds, 1e-9))))
        return kept

    def header(self, T, start):
        """The first line of a fit's progress report."""
        depth = int(self.config[0]["max_depth"])
        n_features, n = self.data.codes.shape
        what = f"{n} rows x {n_features} features, {int(self.config[0]['n_classes'])} classes, "
        what += "stumps" if depth == 0 else f"trees of depth {depth}"
        if self.n_val:
            what += f", {self.n_val} validation rows"
        rounds = f"rounds {start + 1} to {T}" if start else f"up to {T} rounds"
        return f"{rounds} on {what}; a line every {report_every(max(1, T - start))} rounds"

    def training_error(self):
        return TrainingError(self.data, self.config, self.ws, self.learner)
