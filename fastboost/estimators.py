"""scikit-learn estimators: validate, pick the rule, run the one compiled loop, wrap the result."""
import os
import time
import warnings

import numba
import numpy as np
from numpy.lib.recfunctions import repack_fields
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from . import _categorical, _driver, _monotone, _steps
from . import _validation as v
from . import dataset as _dataset
from ._algorithms import PENALTIES, RULES, SCHEDULES, quad_penalty
from ._binning import BinMapper
from ._config import n_threads
from ._driver import ValidData
from ._fit import Fit, LocalRounds, RoundHook
from ._kernels.histogram import n_feature_groups
from ._kernels.predict import add_stump, add_trees
from ._kernels.reweight import add_voter
from ._kernels.reweight import reweight as _reweight_pass
from ._kernels.update import n_blocks
from ._lp import (
    C_GRID,
    DEGENERATE,
    FALLBACK_C,
    FALLBACK_NU,
    NU_GRID,
    RQP_SOLVERS,
    SOFT_NU_GRID,
    UNCONVERGED_GAP,
    C_errors,
    SoftMarginMaster,
    auto_seed,
    choose,
    choose_nu_of_folds,
    held_out_folds,
    highspy_module,
    one_row_share,
    soft_margin_caps,
    solve_auto_C,
    solve_auto_nu,
    solve_C_from,
    solve_nu_from,
    solve_soft_margin_lp,
    voter_margins,
)
from ._model_io import register_model_class
from ._model_io import save as save_model
from ._params import ESTIMATOR_PARAMS, changed_params, check_params, estimator_doc, fitted_params, store_params
from ._types import (
    CRITERIA,
    CRITERION_EB,
    CRITERION_GINI,
    CRITERION_LS,
    CRITERION_MH,
    CRITERION_Z,
    LEAF_DISCRETE,
    LEAF_KINDS,
    LEAF_LSQ,
    LEAF_REAL,
    LEAF_VECTOR,
    MAX_BINS,
    MAX_CLASSES,
    NO_VALUES,
    STOPPED_BY_CALLBACK,
    STOPPED_BY_RULE,
    STOPPED_EARLY,
    SUMS_DTYPE,
    Y_DTYPE,
    TrainData,
)

MAX_DEPTH = 8
#: the share of the training rows held out for early stopping when ``n_iter_no_change`` is set without
#: ``eval_set`` or ``validation_fraction`` (scikit-learn's gradient boosting's default validation_fraction)
EARLY_STOPPING_FRACTION = 0.1


_STRUCTURE = ["feature", "bin", "threshold", "missing_left", "left", "right", "categorical", "cat_left"]


def _round_structure(est, as_run=False):
    """Per fitted model (one per class for one-vs-rest): the bytes of each kept round's split and outputs
    (and its tree), without the steps, which QuadBoost's re-weighting passes revise. as_run: of every round
    the fit ran instead (its warm-start state's records, before QuadBoost's finish drops voters of weight 0)."""
    models = getattr(est, "estimators_", None) or [est]
    out = []
    for m in models:
        resume = m.__dict__.get("_resume") if as_run else None
        if resume is None:
            rounds, nodes = m.rounds_, m.nodes_
        else:
            rounds = resume.model.rounds[:resume.done]
            nodes = resume.model.nodes[:resume.done] if resume.model.nodes.shape[0] else None
        rounds = repack_fields(rounds[_STRUCTURE])  # only these fields' bytes
        out.append([rounds[t].tobytes() + (nodes[t].tobytes() if nodes is not None else b"")
                    for t in range(rounds.shape[0])])
    return out


def _replayed_alike(est, replayed):
    """Whether a loaded or unpickled model's kept rounds (``replayed``, by ``_round_structure``) are those its
    fit again on the data made: the first of the kept rounds now; for an estimator whose finish drops voters
    (QuadBoost: weight 0 after its re-weighting, which a longer fit weighs anew) among the rounds run, in order."""
    now = _round_structure(est)
    if len(now) == len(replayed) and all(n[:len(r)] == r for n, r in zip(now, replayed)):
        return True
    if not est._drops_voters:
        return False
    run = _round_structure(est, as_run=True)

    def among(r, n):
        it = iter(n)
        return all(x in it for x in r)

    return len(run) == len(replayed) and all(among(r, n) for r, n in zip(replayed, run))


def _resume_runs(est):
    """The runs of rounds of the fit a warm start would continue (None: none kept)."""
    resume = est.__dict__.get("_resume")
    return None if resume is None else resume.runs


def _restore(est, state, runs):
    """est's attributes as ``state`` after a failed fit; a warm start's working state that a run of rounds has
    changed in place since (``_resume_runs`` was ``runs``) is dropped: a later warm start fits the rounds again
    and checks them, as for a loaded model."""
    est.__dict__.clear()
    est.__dict__.update(state)
    if _resume_runs(est) != runs:
        del est.__dict__["_resume"]


def _check_callbacks(callbacks):
    """fit's callbacks: None or a list of callables, as a tuple (TypeError otherwise)."""
    if callbacks is None:
        return ()
    if callable(callbacks) or not isinstance(callbacks, (list, tuple)):
        raise TypeError(f"callbacks must be a list of functions; got {type(callbacks).__name__}.")
    for cb in callbacks:
        if not callable(cb):
            raise TypeError(f"callbacks must be a list of functions; got an item of type {type(cb).__name__}.")
    return tuple(callbacks)


def _feature_names(X):
    """A DataFrame's column names when they are all strings (as ``feature_names_in_``), else None."""
    if v.is_dataframe(X) and all(isinstance(c, str) for c in X.columns):
        return [str(c) for c in X.columns]
    return None


def check_eval_set_names(X, Xv):
    """ValueError when eval_set's X is a frame whose column names are not those of the training X (when it has
    them), in that order: its columns would otherwise be matched by position."""
    names = _feature_names(X)
    v_names = _feature_names(Xv)
    if names is None or v_names is None or v_names == names:
        return
    unseen = [c for c in v_names if c not in names]
    missing = [c for c in names if c not in v_names]
    raise ValueError("eval_set's X must have X's columns in X's order" + (
        f"; columns not in X: {unseen[:5]}, X's columns it lacks: {missing[:5]}" if unseen or missing
        else f"; X has {names[:10]}, eval_set's X {v_names[:10]}") + ".")


def sampling_seed(random_state):
    """The seed of the feature and row draws: from ``random_state`` (an int, a RandomState), or fresh for None."""
    if random_state is None:
        return int(np.random.default_rng().integers(np.iinfo(np.int32).max))
    return int(check_random_state(random_state).randint(np.iinfo(np.int32).max))


def interaction_matrix(groups, n_features, names=None):
    """``interaction_constraints`` as a 0/1 array [n_groups, n_features]: each group's features by index or by
    name (``names``, the feature names of X); a clear ValueError for an index out of range or an unknown name."""
    out = np.zeros((len(groups), n_features), np.uint8)
    for j, group in enumerate(groups):
        for f in group:
            if isinstance(f, str):
                if names is None:
                    raise ValueError(f"interaction_constraints names the feature {f!r}, but X has no feature names "
                                     "(fit on a DataFrame with string column names, or give feature indices).")
                hits = np.flatnonzero(np.asarray(names, dtype=object) == f)
                if hits.size == 0:
                    raise ValueError(f"interaction_constraints names the feature {f!r}, which is not among X's "
                                     f"feature names.")
                f = int(hits[0])
            elif not 0 <= int(f) < n_features:
                raise ValueError(f"interaction_constraints holds the feature index {int(f)}, but X has {n_features} "
                                 "features.")
            out[j, int(f)] = 1
    return out


class BaseBoostClassifier(ClassifierMixin, BaseEstimator):
    """Shared fit/predict for stump boosting; subclasses name their rule and its parameters."""

    _algorithm = None
    _samme = False  # True: K > 2 classes may be one model (SAMME; SAMME.R with leaf="real"): see multiclass
    _n_classes = 2  # classes the learner of the current fit sees
    _empty_reason = "no weak hypothesis did better than chance on the training weights;"
    _drops_voters = False  # True: the finish drops voters (of weight 0), so a longer fit may keep others

    def _criterion_code(self):
        return CRITERIA[self.criterion]

    def _check_params(self):
        """Every hyperparameter against its constraint in ``_params.ESTIMATOR_PARAMS`` (TypeError for a
        wrong type, ValueError out of range); checks across parameters or with the data are in ``fit``."""
        check_params(self)

    def _check_extras(self):
        """The optional packages a fit needs (ImportError naming the extra), checked before any round; not part of
        ``_check_params``, so a saved model loads and predicts without them."""

    def _joint_multiclass(self):
        """K > 2 classes fitted as one model (SAMME, SAMME.R or AdaBoost.MH with ``leaf="real"``), not
        one-vs-rest."""
        multiclass = getattr(self, "multiclass", "auto")
        real = getattr(self, "leaf", "discrete") == "real"
        if multiclass == "mh" and not real:
            raise ValueError(f"{type(self).__name__}(multiclass='mh') (AdaBoost.MH, real K-vector leaves) needs "
                             "leaf='real'.")
        joint = self._samme and (multiclass in ("joint", "mh") or (multiclass == "auto" and not real))
        constraints = self.monotone_constraints
        if joint and real and constraints is not None and any(
                c != 0 for c in (constraints.values() if isinstance(constraints, dict) else constraints)):
            name = "AdaBoost.MH" if multiclass == "mh" else "SAMME.R"
            raise ValueError(f"{type(self).__name__}(leaf='real', multiclass={multiclass!r}) ({name}) does not take "
                             "monotone_constraints; use multiclass='ovr' (each class's margin is constrained).")
        return joint

    def _mh(self):
        """AdaBoost.MH: K > 2 classes as one model of real K-vector leaves on per-class weights."""
        return getattr(self, "multiclass", "auto") == "mh"

    def _logistic(self):
        """Confidence-rated leaves on the logistic loss (``loss="logistic"``): two classes, one-vs-rest or
        AdaBoost.MH."""
        return getattr(self, "loss", "exponential") == "logistic"

    def _check_loss(self, n_classes):
        """``loss="logistic"`` takes confidence-rated leaves (``leaf="real"``): two classes, one-vs-rest or
        AdaBoost.MH, not SAMME.R; else a ValueError."""
        if not self._logistic():
            return
        name = type(self).__name__
        leaf = getattr(self, "leaf", "discrete")
        if leaf != "real":
            raise ValueError(f"{name}(loss='logistic') weighs the rows by the logistic loss of their margins, which "
                             f"confidence-rated leaves carry; it needs leaf='real' (got leaf={leaf!r}).")
        if n_classes > 2 and getattr(self, "multiclass", "auto") == "joint":
            raise ValueError(f"{name}(loss='logistic') with {n_classes} classes takes multiclass='mh' (AdaBoost.MH, "
                             "one tree a round) or 'ovr' (one model per class); SAMME.R (multiclass='joint') has "
                             "no logistic form here.")

    def _tree_depth(self, n_classes):
        """Depth of the tree learner, or 0 for the binary stump fast path."""
        tree = (n_classes > 2 or self.max_depth > 1 or self._min_leaf() > 1
                or self.min_weight_fraction_leaf > 0 or getattr(self, "leaf", "discrete") == "real")
        if tree and self.feature_rank != 1:  # (LazyBoost's "auto" too: lazy stumps)
            what = f"feature_rank={self.feature_rank!r}" + (" (the default)" if _auto(self.feature_rank) else "")
            raise ValueError(f"{type(self).__name__}: {what} takes lazy stumps, which are binary stumps only: use "
                             "max_depth=1, min_samples_leaf=1, min_weight_fraction_leaf=0, leaf='discrete' and two "
                             "classes, or feature_rank=1 (every feature's best split) for this learner.")
        return self.max_depth if tree else 0

    #: min_samples_leaf="auto" with trees (``max_depth`` > 1) where the estimator resolves it (``_auto_min_leaf``)
    _AUTO_TREE_LEAF = 5

    def _min_leaf(self):
        """``min_samples_leaf`` as the learner reads it: the number, or "auto" resolved by ``_auto_min_leaf``."""
        return self._auto_min_leaf() if _auto(self.min_samples_leaf) else self.min_samples_leaf

    def _auto_min_leaf(self):
        """min_samples_leaf="auto": 5 rows with trees, 1 (the published learner) with stumps."""
        return self._AUTO_TREE_LEAF if self.max_depth > 1 else 1

    def _feature_rank(self, n_features):
        """``feature_rank`` as the learner reads it (LazyBoost resolves "auto" by the number of features)."""
        return self.feature_rank

    # ------------------------------------------------------------------ fit
    def fit(self, X, y=None, sample_weight=None, eval_set=None, callbacks=None):
        """Fit the boosted ensemble.

        X: array-like (n_samples, n_features): NumPy array (float32/float64/int,
        C or F order, memmap) or DataFrame; NaN marks a missing value. Categorical
        columns (``categorical_features``; by default a DataFrame's category, string and
        object columns) may hold strings. Or a ``fastboost.Dataset`` (binned data with its
        labels and weights; y and sample_weight None, eval_set ``(Dataset,)``).
        y: two class labels of any kind. sample_weight: non-negative, not all zero.
        eval_set: (X_val, y_val) or (X_val, y_val, sample_weight_val), a validation
        set (alternatively ``validation_fraction`` holds out a stratified part of X).
        With a validation set the model keeps the round with the lowest validation
        error (the first, among equals), and ``n_iter_no_change`` stops boosting
        after that many rounds without a new best. Validation margins are updated
        inside the compiled loop, round by round.

        callbacks: functions called between chunks of rounds (about every 0.2 s, at each progress
        line and after the last round) as ``callback(n_rounds_done, rounds)``, ``rounds`` a copy of the
        records so far (the ``rounds_`` fields); one returning True ends the fit there, keeping the
        rounds done (``stopped_by_callback_``; ``warm_start``, where the estimator has it, can continue
        it); after the last round it stops nothing. One-vs-rest models call them for each class's fit.

        An interrupted fit (Ctrl-C, any exception) leaves the estimator as it was before.
        """
        callbacks = _check_callbacks(callbacks)
        self._check_warm_params()
        saved, runs = dict(self.__dict__), _resume_runs(self)
        # a model fitted in another process (loaded, unpickled) has no working state to continue from:
        # its rounds are fitted again (bit for bit the same on the same data) and checked
        replayed = (_round_structure(self) if self.warm_start and "_resume" not in self.__dict__
                    and hasattr(self, "rounds_") else None)
        if replayed is not None:  # (its rows and features are drawn again as its fit drew them)
            self._replay_sampling_seed = self.__dict__.get("sampling_seed_")
        try:
            self._callbacks = callbacks
            self._fit(X, y, sample_weight, eval_set)
            if replayed is not None and not _replayed_alike(self, replayed):
                raise ValueError(
                    f"{type(self).__name__}(warm_start=True) continues the fit this model came from; fitted "
                    "again on this data its first rounds differ, so X, y, sample_weight or eval_set are not "
                    "the ones it was fitted on. Set warm_start=False to fit anew.")
            self._fitted_params = fitted_params(self)
            return self
        except BaseException:
            _restore(self, saved, runs)
            raise
        finally:
            self.__dict__.pop("_callbacks", None)
            self.__dict__.pop("_fitting", None)
            self.__dict__.pop("_shared_bins", None)
            self.__dict__.pop("_held_seed", None)
            self.__dict__.pop("_replay_sampling_seed", None)

    def _fit(self, X, y, sample_weight, eval_set):
        self._check_params()
        self._check_extras()
        if isinstance(X, _dataset.Dataset):  # binned already: its codes, edges, labels and weights
            return _dataset.fit(self, X, y, sample_weight, eval_set)
        name = type(self).__name__
        X_in, X = self._encode_fit_X(X)
        n_samples = X.shape[0]
        y = v.check_y(y, n_samples, name)
        classes, y_idx = v.classes_and_indices(y)
        if classes.shape[0] < 2:
            raise ValueError(f"{name} needs samples of at least 2 classes in y; got 1 class ({v.plain(classes[0])}).")
        if classes.shape[0] > MAX_CLASSES:
            raise ValueError(f"{name} takes at most {MAX_CLASSES} classes; y has {classes.shape[0]}.")
        self._check_warm_classes(classes)
        sample_weight = self._class_weighted(sample_weight, y)
        self._check_loss(classes.shape[0])
        if classes.shape[0] > 2 and not self._joint_multiclass():
            return self._fit_one_vs_rest(X, X_in, y, classes, sample_weight, eval_set)
        sw = v.check_sample_weight(sample_weight, n_samples)
        X, y_idx, sw, val = self._validation_split(X, y_idx, sw, classes, eval_set, X_in)
        held = self._held_out_rows(y_idx, sw, eval_set) if val is None else None
        p = v.as_distribution(sw)
        # all input checked: only now replace any earlier fit's state
        resume = self._clear_fitted_state()
        validate_data(self, X=X_in, reset=True, skip_check_array=True)
        self._set_categories()
        self.classes_ = classes
        y_idx = y_idx.astype(Y_DTYPE)

        t0 = time.perf_counter()
        with n_threads(self.n_jobs, fit=True):
            shared = self.__dict__.get("_shared_bins")  # one-vs-rest: the classes' models bin X once
            if shared is not None and shared.get("X") is X_in and np.array_equal(shared["p"], p):
                mapper, codes = shared["mapper"], shared["codes"]
            elif resume is None:
                mapper = BinMapper(self.max_bins, random_state=self.random_state)
                codes = mapper.fit_transform(X, p, self._n_categories(X.shape[1]))
                if shared is not None:
                    shared.update(X=X_in, p=p, mapper=mapper, codes=codes)
            else:
                mapper = resume.mapper
                codes = mapper.transform(X)
            if held is not None:  # binned with every row (as a Dataset is), then the held-out rows set apart
                codes, y_idx, sw, val = _dataset.held_out(codes, y_idx, sw, held)
                p = v.as_distribution(sw)
            elif val is not None:
                same_bins = shared is not None and shared.get("mapper") is mapper
                if same_bins and shared.get("X_val") is eval_set[0]:
                    vcodes = shared["val_codes"]
                else:
                    vcodes = mapper.transform(val[0])
                    if same_bins:
                        shared.update(X_val=eval_set[0], val_codes=vcodes)
                val = (vcodes, val[1], val[2])
            if resume is not None:
                self._check_resume(resume, codes, y_idx, p, val)
            t1 = time.perf_counter()
            model = self._boost(codes, y_idx, p, mapper, val, classes.shape[0], resume)
            self._set_fit_result(model, mapper, t1 - t0, time.perf_counter() - t0)
            self._set_cover(codes, mapper, sw)
        self.fit_time_ = time.perf_counter() - t0  # the cover pass is part of the fit
        return self

    def _set_cover(self, codes, mapper, sw):
        """``cover_``, each node's summed sample weight on the training rows (for predict_contrib), from the bin
        codes the fit read: a fit from a ``Dataset`` and one in memory of the same rows get the same. Called inside
        the fit's ``n_threads`` block: the pass runs on the fit's threads."""
        from .explain import fit_cover

        self.cover_ = fit_cover(self, codes, mapper.missing_code, sw)

    def _clear_fitted_state(self):
        """Drop every fitted attribute (all input has been checked); return the fit a warm start continues
        (a ``_fit.Fit``) or None."""
        for attr in [a for a in vars(self) if a.endswith("_") and not a.startswith("_")]:
            delattr(self, attr)
        resume = self.__dict__.pop("_resume", None)
        return resume if self.warm_start else None

    def _set_fit_result(self, model, mapper, bin_time, fit_time):
        """The fitted records and the fit's timings and binning facts as attributes."""
        self.bin_time_ = bin_time
        self.fit_time_ = fit_time
        self.n_features_quantised_ = mapper.n_features_quantised_
        self._set_rounds(model)

    # ------------------------------------------------------------------ categorical features
    def _encode_fit_X(self, X):
        """(X as given, checked, for its feature names; X for the kernels: categorical columns as category
        indices). Fits the categories, kept in ``_cat`` until the fit replaces the fitted attributes."""
        name = type(self).__name__
        X = v.as_pandas(X)
        if not v.is_dataframe(X) and not isinstance(X, np.ndarray) and not hasattr(X, "toarray"):
            X = np.asarray(X) if not isinstance(X, (str, bytes, os.PathLike)) else X
        if (isinstance(X, (str, bytes, os.PathLike)) or getattr(X, "ndim", 2) != 2
                or 0 in getattr(X, "shape", (1, 1)) or hasattr(X, "toarray")):
            return X, v.check_X(X, name)  # the usual error
        mask = _categorical.resolve(self.categorical_features, X)
        X = v.check_X(X, name, categorical=mask)
        self._cat = _categorical.fit(X, mask, self.max_bins) if mask.any() else None
        return X, (X if self._cat is None else _categorical.encode(X, self._cat))

    def _set_categories(self):
        """``is_categorical_`` and ``categories_`` from the fit's ``_cat`` (None without categorical features)."""
        cats = self.__dict__.pop("_cat", None)
        self.is_categorical_ = None if cats is None else np.array([c is not None for c in cats])
        self.categories_ = cats

    def _n_categories(self, n_features):
        cats = getattr(self, "categories_", None)
        return None if cats is None else np.array([0 if c is None else max(1, c.shape[0]) for c in cats])

    def _encode_X(self, X, name):
        """Checked X for prediction or validation, its categorical columns mapped by ``categories_``."""
        X = v.as_pandas(X)
        cats = getattr(self, "categories_", None)
        if cats is None or isinstance(X, (str, bytes, os.PathLike)):
            return v.check_X(X, name, fitted=True)
        if not v.is_dataframe(X) and not isinstance(X, np.ndarray) and not hasattr(X, "toarray"):
            X = np.asarray(X)
        names = getattr(self, "feature_names_in_", None)
        if names is not None and v.is_dataframe(X) and list(X.columns) != list(names):
            # columns missing or in another order: scikit-learn's error naming them, before the categorical
            # columns are looked for by position
            validate_data(self, X=X, reset=False, skip_check_array=True)
        return v.check_X(X, name, categorical=self.is_categorical_, fitted=True)

    def _class_weighted(self, sample_weight, y):
        """sample_weight times the weights ``class_weight`` gives each row's class (as scikit-learn)."""
        if self.class_weight is None:
            return sample_weight
        from sklearn.utils.class_weight import compute_sample_weight

        sw = v.check_sample_weight(sample_weight, y.shape[0])
        try:
            cw = compute_sample_weight(self.class_weight, y)
        except (ValueError, KeyError) as e:
            raise ValueError(f"class_weight={self.class_weight!r} does not fit the classes of y: {e}") from None
        with np.errstate(over="ignore"):
            weighted = sw * cw
        if not np.all(np.isfinite(weighted)):
            raise ValueError(f"sample_weight times class_weight={self.class_weight!r} overflows float64 (both are "
                             "finite): scale them down (only their ratios matter).")
        return weighted

    def _check_warm_params(self):
        """warm_start on a fitted model: the parameters of its fit (all but ``WARM_FREE``'s), or a clear
        ValueError naming those changed; in this process or after a model file or pickle loads."""
        record = self.__dict__.get("_fitted_params")
        if not self.warm_start or record is None:
            return
        changed = changed_params(record, self)
        if changed:
            raise ValueError(f"{type(self).__name__}(warm_start=True) continues a fit with the same parameters; "
                             f"{', '.join(changed)} changed. Set warm_start=False to start again.")

    def _check_warm_classes(self, classes):
        """warm_start on a fitted model: the classes it was fitted on, or a clear ValueError."""
        if self.warm_start and hasattr(self, "classes_") and not np.array_equal(self.classes_, classes):
            raise ValueError(f"{type(self).__name__}(warm_start=True) continues a fit on the same data; the "
                             "classes of y differ. Set warm_start=False to start again.")

    def _check_resume(self, resume, codes, y_idx, p, val):
        """warm_start: the same data as the fit it continues (its parameters are checked before), or a clear
        ValueError."""
        name = type(self).__name__
        data = resume.data
        same = (codes.shape == data.codes.shape and np.array_equal(codes, data.codes)
                and np.array_equal(y_idx, data.y) and np.array_equal(p, data.p))
        vcodes = resume.valid.codes
        if val is None:
            same = same and vcodes.shape[1] == 0
        else:  # (its rows, labels and weights: the loop keeps validating on those it was given first)
            same = (same and val[0].shape == vcodes.shape and np.array_equal(val[0], vcodes)
                    and np.array_equal(val[1], resume.valid.y) and np.array_equal(val[2], resume.valid.p))
        if not same:
            raise ValueError(f"{name}(warm_start=True) continues a fit on the same training data (and "
                             "validation set); these differ. Set warm_start=False to fit new data.")
        if self.n_estimators < resume.done:
            raise ValueError(f"n_estimators={self.n_estimators} must be >= the {resume.done} rounds already "
                             f"fitted when warm_start=True.")

    def __getstate__(self):
        state = dict(self.__dict__)
        state.pop("_resume", None)  # a warm start's working state is not part of the model
        return state

    def _fit_one_vs_rest(self, X, X_in, y, classes, sample_weight, eval_set):
        """K > 2 classes for the binary algorithms: one model per class against the rest.

        X: the kernels' X (category indices), X_in: as given (its feature names); the per-class models
        are fitted on X, with its category indices as their categories."""

        self._check_params()
        v.check_sample_weight(sample_weight, X.shape[0])
        val = self._one_vs_rest_eval_set(eval_set, X, classes, X_in)
        t0 = time.perf_counter()
        shared = {}  # the binned X (and eval_set), made by the first class's fit, read by the others'
        cats = self.__dict__.get("_cat")
        mask = None if cats is None else [c is not None for c in cats]
        direction = _monotone.resolve(self.monotone_constraints, X.shape[1], _feature_names(X_in), mask)
        per_class = {"class_weight": None, "categorical_features": mask,
                     "monotone_constraints": None if direction is None else direction.tolist()}
        if getattr(self, "interaction_constraints", None) is not None:  # by index: the classes' X has no names
            names = np.asarray(X_in.columns, dtype=object) if v.is_dataframe(X_in) else None
            per_class["interaction_constraints"] = [
                [int(f) for f in np.flatnonzero(g)] for g in self._interaction_groups(X.shape[1], names)]

        def fit_one(model, c):
            fit_val = None if val is None else (val[0], np.where(val[1] == c, 1, 0), val[2])
            model._shared_bins = shared
            return model.fit(X, np.where(y == c, 1, 0), sample_weight, eval_set=fit_val, callbacks=self._callbacks)

        models = self._fit_class_models(classes, per_class, fit_one)
        for attr in [a for a in vars(self) if a.endswith("_") and not a.startswith("_")]:
            delattr(self, attr)
        validate_data(self, X=X_in, reset=True, skip_check_array=True)
        self._set_categories()
        self.classes_ = classes
        self.estimators_ = models
        self.n_estimators_ = sum(m.n_estimators_ for m in models)
        self.n_features_quantised_ = models[0].n_features_quantised_  # (every class's model bins X alike)
        self.fit_time_ = time.perf_counter() - t0
        return self

    def _fit_class_models(self, classes, per_class, fit_one):
        """One-vs-rest: each class's model, ``fit_one(model, label)`` fitting it; on a warm start each continues
        its own fit. Parameters: the estimator's, with ``per_class``'s. If any fit fails, every class's model is
        left as it was (those before the failure had continued their fits) and the error raised."""
        from sklearn.base import clone

        previous = getattr(self, "estimators_", None) if self.warm_start else None
        saved = [] if previous is None else [(m, dict(m.__dict__), _resume_runs(m)) for m in previous]
        models = []
        try:
            for k, c in enumerate(classes):
                if previous is not None:  # (random_state: the class model's own, a copy of the estimator's made
                    # by clone; the estimator's is checked against its fit before this, by identity for a RandomState)
                    params = {key: value for key, value in self.get_params().items() if key != "random_state"}
                    model = previous[k].set_params(**{**params, **per_class})
                else:
                    model = clone(self).set_params(**per_class)
                models.append(fit_one(model, c))
        except BaseException:
            for m, state, runs in saved:
                _restore(m, state, runs)
            raise
        return models

    def _one_vs_rest_eval_set(self, eval_set, X, classes, X_in=None):
        """A one-vs-rest fit's eval_set as (X_val for the kernels, y_val, sample_weight_val or None), checked;
        each class's model validates on it with the labels "this class or not" (``validation_fraction``
        instead holds out a stratified part of each class's problem)."""
        if eval_set is None:
            return None
        if self.validation_fraction is not None:
            raise ValueError("Pass either eval_set or validation_fraction, not both.")
        idx = np.zeros(X.shape[0], dtype=Y_DTYPE)
        Xv, yv_idx, pv = self._validation_split(X, idx, np.ones(X.shape[0]), classes, eval_set, X_in)[3]
        swv = eval_set[2] if len(eval_set) == 3 else None
        return Xv, classes[yv_idx], swv

    def _held_out_fraction(self, eval_set):
        """The share of the training rows held out as the validation set (None: none): ``validation_fraction``,
        or with ``n_iter_no_change`` and no validation set ``EARLY_STOPPING_FRACTION`` (as scikit-learn's
        gradient boosting)."""
        if eval_set is not None:
            return None
        if self.validation_fraction is not None:
            return self.validation_fraction
        return EARLY_STOPPING_FRACTION if self.n_iter_no_change is not None else None

    def _validation_split(self, X, y_idx, sw, classes, eval_set, X_in=None):
        """(X, y_idx, sw, (X_val, y_val_idx uint16, p_val) of eval_set, checked, or None). The rows
        ``validation_fraction`` holds out are set apart after binning (``_held_out_rows``). X_in: the training X as
        given; a validation frame with other column names than its, or in another order, is refused (its columns
        would be matched by position)."""
        name = type(self).__name__
        if eval_set is not None and self.validation_fraction is not None:
            raise ValueError("Pass either eval_set or validation_fraction, not both.")
        if eval_set is None:
            return X, y_idx, sw, None
        v.check_eval_set_form(eval_set)
        if not isinstance(eval_set, (tuple, list)) or len(eval_set) not in (2, 3):
            raise TypeError("eval_set must be a tuple (X_val, y_val) or (X_val, y_val, sample_weight_val).")
        cats = self.__dict__.get("_cat")
        Xv = eval_set[0]
        check_eval_set_names(X_in, Xv)
        if cats is None:
            Xv = v.check_X(Xv, name)
        else:  # the training data's categories
            Xv = np.asarray(Xv) if not (v.is_dataframe(Xv) or isinstance(Xv, np.ndarray)) else Xv
            Xv = _categorical.encode(v.check_X(Xv, name, categorical=[c is not None for c in cats]), cats)
        if Xv.shape[1] != X.shape[1]:
            raise ValueError(f"eval_set's X has {Xv.shape[1]} features, but X has {X.shape[1]}.")
        yv = v.check_y(eval_set[1], Xv.shape[0], name)
        unknown = np.setdiff1d(np.unique(yv), classes)
        if unknown.size:
            raise ValueError(f"eval_set's y has labels not in the training y: {unknown[:5].tolist()}.")
        yv_idx = np.searchsorted(classes, yv)
        swv = v.check_sample_weight(eval_set[2] if len(eval_set) == 3 else None, Xv.shape[0])
        return X, y_idx, sw, (Xv, yv_idx.astype(Y_DTYPE), v.as_distribution(swv))

    def _held_out_name(self, fraction):
        """How errors name the held-out share: the parameter given, or n_iter_no_change's own hold-out."""
        if self.validation_fraction is not None:
            return f"validation_fraction={fraction}"
        return f"n_iter_no_change={self.n_iter_no_change} without eval_set (it holds out {fraction} of the rows)"

    def _held_out_rows(self, y_idx, sw, eval_set):
        """(training rows, validation rows), increasing, that ``validation_fraction`` (or ``n_iter_no_change``
        without a validation set) holds out: a stratified split seeded by ``random_state``, drawn from the
        labels and weights alone (so a ``Dataset`` holds out the same rows); None without a held-out set."""
        fraction = self._held_out_fraction(eval_set)
        if fraction is None:
            return None
        from sklearn.model_selection import train_test_split

        rows = np.arange(y_idx.shape[0])
        resume = self.__dict__.get("_resume") if self.warm_start else None
        seed = None if resume is None else resume.extra.get("held_seed")
        if seed is None and self.warm_start:  # a model loaded or unpickled: the seed its fit kept
            seed = self.__dict__.get("validation_seed_")
        if seed is None:  # (a warm start holds out the rows of the fit it continues: a RandomState has moved on)
            seed = check_random_state(self.random_state).randint(2 ** 31 - 1)
        self._held_seed = seed  # (kept with the fit: ``_boost``)
        try:
            tr, va = train_test_split(rows, test_size=fraction, stratify=y_idx, random_state=seed)
        except ValueError as e:
            raise ValueError(f"{self._held_out_name(fraction)} cannot hold out a stratified validation set from "
                             f"{y_idx.shape[0]} samples: {e}") from None
        tr.sort()
        va.sort()
        if not (np.any(sw[tr] > 0) and np.any(sw[va] > 0)):
            raise ValueError(f"{self._held_out_name(fraction)} left no positive sample weight on one side of the "
                             "split.")
        return tr, va

    def _config(self, rule, mapper, n_classes, n_features, n_nonzero):
        """The fit's configuration record: every option the loop and the rules read, by name."""
        depth = self._tree_depth(n_classes)
        leaf = getattr(self, "leaf", "discrete")
        criterion = self._criterion_code()
        leaf_kind = LEAF_KINDS[leaf]
        if depth and leaf == "real":
            criterion = CRITERION_Z
            if n_classes > 2:  # one tree of K-vector leaves a round: SAMME.R, split by the Gini impurity, or
                leaf_kind = LEAF_VECTOR  # AdaBoost.MH, by its sum over classes of 2 sqrt(W+ W-)
                criterion = CRITERION_MH if self._mh() else CRITERION_GINI
        if depth and rule.additive:  # QuadBoost's trees: least squares on the residuals
            criterion = CRITERION_LS
            leaf_kind = LEAF_LSQ
        return _driver.make_config(
            max_depth=depth, criterion=criterion, feature_rank=self._feature_rank(n_features),
            min_samples_leaf=self._min_leaf(), min_weight_fraction_leaf=self.min_weight_fraction_leaf,
            n_classes=n_classes, leaf=leaf_kind, leaf_scale=self._leaf_scale(),
            leaf_smoothing=0.5 / max(1, n_nonzero), missing_code=mapper.missing_code,
            hist_groups=n_feature_groups(n_features, numba.get_num_threads(), mapper.missing_code + 1),  # speed
            trim_rate=float(getattr(self, "weight_trim_rate", None) or 0.0),
            hist_rebuild=self._hist_rebuild(rule, depth, n_classes, leaf_kind, n_nonzero),
            logistic=bool(depth) and leaf == "real" and criterion in (CRITERION_Z, CRITERION_MH) and self._logistic(),
            additive=rule.additive, use_q=rule.use_q, u_is_w=rule.u_is_w, need_s2=rule.needs_s2,
            patience=self.n_iter_no_change or 0, learning_rate=self.learning_rate,
            monotone=self._monotone_direction(n_features) is not None,
            monotone_capped=self._capped_steps(depth, n_features), **self._rule_fields(n_classes),
            **self._sampling_fields(rule))

    def _capped_steps(self, depth, n_features):
        """Whether constrained stumps may step back, capped (AdaBoost's ``monotone_steps``): not here."""
        return False

    def _monotone_direction(self, n_features):
        """``monotone_constraints`` as int8[n_features] (-1 / 0 / +1), or None without any constraint; checked
        against the fitted feature names and categorical features."""
        names = getattr(self, "feature_names_in_", None)
        return _monotone.resolve(self.monotone_constraints, n_features, None if names is None else list(names),
                                 getattr(self, "is_categorical_", None))

    def _sampling_on(self):
        """Whether the fit draws features or rows, or has interaction constraints."""
        return (getattr(self, "interaction_constraints", None) is not None
                or getattr(self, "colsample_bytree", 1.0) < 1.0 or getattr(self, "colsample_bynode", 1.0) < 1.0
                or getattr(self, "subsample", 1.0) < 1.0 or getattr(self, "bootstrap", False))

    def _sampling_fields(self, rule):
        """The configuration fields of feature and row sampling (``_kernels/sampling.py``); none by default."""
        if not self._sampling_on():
            return {}
        if self.bootstrap and self._mh() and self._n_classes > 2:
            raise ValueError(f"bootstrap=True is not available for {type(self).__name__}(multiclass='mh'): its "
                             "weak learner sums per-class weights; use subsample < 1 without bootstrap.")
        if self.bootstrap and (rule.additive or rule.use_q):
            raise ValueError(f"bootstrap=True is not available for {type(self).__name__}: its weak learner sums "
                             "another quantity than the weights (EBBoost's w**2 / p, QuadBoost's residuals); use "
                             "subsample < 1 without bootstrap.")
        rows = self.subsample < 1.0 or self.bootstrap
        features = (self.interaction_constraints is not None or self.colsample_bytree < 1.0
                    or self.colsample_bynode < 1.0)
        seed = 0
        if rows or self.colsample_bytree < 1.0 or self.colsample_bynode < 1.0:
            seed = self.__dict__.get("_replay_sampling_seed")  # (a loaded or unpickled model's, run again)
            seed = sampling_seed(self.random_state) if seed is None else int(seed)
        return dict(sample_features=features, sample_rows=rows, colsample_bytree=float(self.colsample_bytree),
                    colsample_bynode=float(self.colsample_bynode), subsample=float(self.subsample),
                    bootstrap=bool(self.bootstrap), sample_seed=seed)

    def _keep_sampling_seed(self, config):
        """``sampling_seed_``: the seed of a fit's row and feature draws (a model loaded or unpickled draws them
        again with it when a warm start runs its rounds again); no attribute for a fit without draws."""
        c = config[0]
        if c["sample_rows"] or (c["sample_features"] and min(c["colsample_bytree"], c["colsample_bynode"]) < 1.0):
            self.sampling_seed_ = int(c["sample_seed"])

    def _interaction_groups(self, n_features, names=None):
        """The interaction groups as a 0/1 array [n_groups, n_features] (None without constraints); names: the
        feature names the groups may use (default ``feature_names_in_``)."""
        groups = getattr(self, "interaction_constraints", None)
        if groups is None:
            return None
        return interaction_matrix(groups, n_features, getattr(self, "feature_names_in_", None) if names is None
                                  else names)

    def _hist_rebuild(self, rule, depth, n_classes, leaf_kind, n_rows):
        """Rounds between histograms from every row (``_driver.HIST_REBUILD_EVERY``; in between the stumps' and
        the trees' root histograms come from the last round's) for the rules whose update multiplies each row's
        weight by a factor its class and side (stumps) or its being right or wrong (trees) decide, and whose
        learner reads w itself: not with a transform (VadaBoost), EBBoost's q histograms, QuadBoost's
        residuals, weights re-set between rounds (LPBoost, re-weighting passes), weights from the logistic loss's
        margins (``loss="logistic"``: no factor per side), or trees with confidence-rated
        leaves (but stumps, binary or AdaBoost.MH's), a row count per leaf (min_samples_leaf > 1) or weight
        trimming, nor with feature or row sampling (or interaction constraints: every round reads its own features
        and rows), nor below ``_driver.CARRY_MIN_ROWS`` rows of positive weight (n_rows), where a full build is faster.
        Trimmed stumps carry the histograms of their kept rows (``learners.trimmed_rows``) at any size.
        0: every round's histograms from every row."""
        trimmed = getattr(self, "weight_trim_rate", None) is not None
        if (rule.additive or rule.use_q or not rule.u_is_w or self._corrective or self._logistic()
                or self._reweight_every() is not None or self._sampling_on()):
            return 0
        # stumps with confidence-rated leaves, binary or AdaBoost.MH's: two leaves, a factor per leaf and field
        real_stumps = depth == 1 and (leaf_kind == LEAF_REAL or (leaf_kind == LEAF_VECTOR and self._mh()))
        if depth and ((leaf_kind != LEAF_DISCRETE and not real_stumps) or self._min_leaf() > 1 or trimmed):
            return 0
        if n_rows < _driver.CARRY_MIN_ROWS and not trimmed:
            return 0
        return _driver.HIST_REBUILD_EVERY

    def _rule_fields(self, n_classes):
        """The algorithm's parameters as configuration fields (``lam``, ``gamma``, ...)."""
        return {}

    def _leaf_scale(self):
        """kappa of confidence-rated leaves (leaf="real"): the step rule's factor."""
        return 0.5

    def _reweight_every(self):
        return None

    #: True for column generation (LPBoost): every round's hypothesis enters a master problem that re-weights
    #: all voters between rounds (``_between_rounds``), which also keeps the validation margins
    _corrective = False

    def _round_hook(self):
        """What the fit runs between its rounds and at its end (a ``_fit.RoundHook``): QuadBoost's re-weighting
        passes and LPBoost's master LP revise earlier steps there."""
        return RoundHook(every=self._reweight_every(), after_last=self._corrective, between=self._between_rounds,
                         finish=self._finish)

    def _between_rounds(self, fit, model):
        """After every ``_reweight_every()`` rounds: QuadBoost's re-weighting pass (the kept voters ``model``);
        may return a reason to stop."""
        ws = fit.rounds.ws
        self._reweight(fit.data, fit.config, model, ws.rows.w, ws, fit.valid)

    def _boost(self, codes, y_idx, p, mapper, val, n_classes, resume=None):
        """Run the one compiled loop through a fit object; return the fitted records (a Model).

        resume: the fit (a ``_fit.Fit``) a warm start continues."""
        self._n_classes = n_classes
        if resume is None:
            fit = self._new_fit(codes, y_idx, p, mapper, val, n_classes)
            fit.extra["held_seed"] = self.__dict__.pop("_held_seed", None)  # (the seed of the held-out rows)
        else:
            fit = resume
        fit.verbose = self.verbose
        self._fitting = fit  # (the fit in progress, for callbacks that read its working state; gone after fit)
        fit.run(self.n_estimators, self.__dict__.get("_callbacks", ()))
        # the rounds as run, before a corrective finish (LP, QP) revises their steps: voters fitted on overflowed
        # weights are no model to re-weight
        self._check_overflow(fit.model.rounds[:fit.kept], float(fit.config[0]["learning_rate"]))
        result = fit.finish(keep_state=self.warm_start)
        if not np.all(np.isfinite(result.model.rounds["alpha"])):
            raise ValueError(f"{self._owner_name()}: the fit's revised steps are not finite numbers, so the model "
                             "would be meaningless.")
        if self.warm_start:  # the fit to continue from, untouched by the kept records
            self._resume = fit
        self._apply_fit(result)
        if fit.extra.get("held_seed") is not None:
            self.validation_seed_ = int(fit.extra["held_seed"])
        self._keep_sampling_seed(fit.config)
        return result.model

    def _step_size(self, rate):
        """What sets the size of a round's step, as an overflow error names it."""
        return f"learning_rate={rate:g}"

    def _owner_name(self):
        """The estimator a message names: this one, or the one whose fit runs it (``_owner``: the AdaBoost of an
        LP or QP estimator's held-out folds)."""
        return self.__dict__.get("_owner") or type(self).__name__

    def _check_overflow(self, rounds, rate):
        """ValueError when the fit's numbers overflowed (a step too large for the algorithm: the weights went to
        inf or NaN, and the training cost, the log of its monotone quantity, with them; the model would predict
        NaN or one class); a warning when a learning_rate above 1 made that cost rise, which it never does with
        steps of the algorithm's own size. rate: the fit's learning rate ("auto" resolved)."""
        name = self._owner_name()
        cost = rounds["log_cost"]
        bad = np.flatnonzero(np.isnan(cost) | (cost == np.inf) | ~np.isfinite(rounds["alpha"]))
        if bad.size:
            raise ValueError(f"{name}: the fit overflowed in round {bad[0] + 1}: its weights and training cost are "
                             f"no longer finite numbers, so the model would be meaningless; {self._step_size(rate)} "
                             "is too large for it.")
        if rate > 1 and cost.size > 1:
            rose = np.count_nonzero(cost[1:] > cost[:-1] + 1e-9 * np.maximum(1.0, np.abs(cost[:-1])))
            if rose:
                warnings.warn(f"{name}: with learning_rate={rate:g} the training cost rose in {rose} of "
                              f"{cost.size} rounds: the steps overshoot, and the model may be poor. Each round "
                              "lowers the cost with the algorithm's own steps (learning_rate <= 1).", UserWarning,
                              stacklevel=4)

    def _new_fit(self, codes, y_idx, p, mapper, val, n_classes):
        """The fit object of a new fit: configuration, rules, workspace, validation data."""
        rule = RULES[self._algorithm]
        n_features = codes.shape[0]
        config = self._config(rule, mapper, n_classes, n_features, np.count_nonzero(p))
        data = TrainData(codes, y_idx, p, mapper.n_value_bins_, mapper.thresholds_, mapper.categorical_)
        if val is None:
            valid = _driver.no_validation_data(n_features, codes)
        else:
            vcodes, vy, vp = val
            valid = ValidData(vcodes, vy, vp, np.zeros(vy.shape[0] * (1 if n_classes == 2 else n_classes)))
        # multiplicative rules keep the weights w (sum 1); the additive one the residuals r = y - F
        w = (2.0 * y_idx - 1.0) if rule.additive else p.copy()
        capacity = min(self.n_estimators, 4 * _driver.CHUNK)
        n_val = valid.y.shape[0]
        _driver.check_memory(type(self).__name__, _driver.working_memory(
            y_idx.shape[0], n_features, mapper.missing_code + 1, config, n_val, capacity))
        ws = _driver.make_workspace(y_idx, w, n_features, mapper.missing_code + 1, config, n_val,
                                    self._monotone_direction(n_features), self._interaction_groups(n_features))
        # a totally corrective fit validates between rounds, after its master has re-weighted every voter
        loop_valid = _driver.no_validation_data(n_features, codes) if self._corrective else valid
        categorical = bool(data.categorical.any())
        rules = _driver.pick_rules(rule, config, loop_valid.y.shape[0] > 0, codes.dtype, categorical)
        engine = LocalRounds(data, loop_valid, config, rules, ws, _driver.pick_learner(config, categorical), n_val)
        return Fit(type(self).__name__, rule, config, engine, n_nonzero=np.count_nonzero(p), capacity=capacity,
                   has_validation=n_val > 0, hook=self._round_hook(), verbose=self.verbose, data=data, valid=valid,
                   mapper=mapper)

    def _apply_fit(self, result):
        """The fitted attributes a finished fit (a ``_fit.FitResult``) sets besides the records."""
        self.initial_cost_ = result.initial_cost
        self.stopped_early_ = result.why == STOPPED_EARLY
        self.stopped_by_rule_ = result.why == STOPPED_BY_RULE
        self.stopped_by_callback_ = result.why == STOPPED_BY_CALLBACK
        if result.validation_errors is not None:
            self.validation_errors_ = result.validation_errors

    def _finish(self, fit, model):
        """After the loop, the kept records (QuadBoost re-weights its voters here)."""
        return model

    def _set_rounds(self, model):
        """Keep the fitted records as they are: ``rounds_`` (with its cost column) and ``nodes_``."""
        rounds = model.rounds
        rounds["cost"] = np.exp(rounds["log_cost"])
        self.rounds_ = rounds
        self.n_estimators_ = rounds.shape[0]
        self.estimator_weights_ = rounds["alpha"].copy()
        self.estimator_errors_ = rounds["error"].copy()
        self.nodes_ = model.nodes if model.nodes.shape[0] or (rounds.shape[0] == 0 and model.nodes.shape[1] > 1) \
            else None
        self.leaf_values_ = model.values if model.values.shape[2] > 1 else None
        if self.n_estimators_ == 0:
            import warnings
            warnings.warn(f"{type(self).__name__}: {self._empty_reason} the ensemble is empty and predicts the "
                          "first class.", UserWarning, stacklevel=3)

    # ------------------------------------------------------------------ fitted quantities
    @property
    def feature_importances_(self):
        """Normalised importances: stumps, the sum of |alpha| of the (non-constant) stumps on each feature;
        trees, each tree's criterion gains per feature (normalised per tree) weighted by |alpha|."""
        check_is_fitted(self)
        if hasattr(self, "estimators_"):
            imp = np.sum([m.feature_importances_ for m in self.estimators_], axis=0)
        elif self.nodes_ is not None:
            nodes = self.nodes_
            imp = np.zeros(self.n_features_in_)
            for t in range(nodes.shape[0]):
                internal = nodes["left"][t] >= 0
                gains = np.bincount(nodes["feature"][t][internal], weights=nodes["gain"][t][internal],
                                    minlength=self.n_features_in_)
                if gains.sum() > 0:
                    imp += abs(self.rounds_["alpha"][t]) * gains / gains.sum()
        else:
            r = self.rounds_
            split = r["left"] != r["right"]
            imp = np.bincount(r["feature"][split], weights=np.abs(r["alpha"][split]),
                              minlength=self.n_features_in_).astype(np.float64)
        total = imp.sum()
        return imp / total if total > 0 else imp

    def _check_predict_X(self, X):
        check_is_fitted(self)
        X = self._encode_X(X, type(self).__name__)
        if type(X) is np.ndarray and X.ndim == 2 and getattr(self, "feature_names_in_", None) is None:
            # scikit-learn's validate_data(reset=False) on an array and a model fitted without feature names: the
            # count of features only (its search for a data frame's names took a quarter of predicting one row)
            expected = getattr(self, "n_features_in_", None)
            if expected is not None and X.shape[1] != expected:
                raise ValueError(f"X has {X.shape[1]} features, but {type(self).__name__} is expecting "
                                 f"{expected} features as input.")
        else:
            validate_data(self, X=X, reset=False, skip_check_array=True)
        if getattr(self, "categories_", None) is not None:
            return v.read_only(_categorical.encode(X, self.categories_))
        return v.as_float_array(X)

    def _leaf_values(self, t=None):
        """The K-vector leaves' values (``leaf_values_``; round t only when given), or NO_VALUES for a model whose
        leaves hold one value."""
        values = getattr(self, "leaf_values_", None)
        if values is None:
            return NO_VALUES
        return values if t is None else values[t:t + 1]

    @property
    def _n_scores(self):
        """Columns of the margin: 1 for two classes, K for SAMME and one-vs-rest."""
        return 1 if self.classes_.shape[0] == 2 else self.classes_.shape[0]

    # ------------------------------------------------------------------ prediction
    def _raw_decision(self, X):
        """The ensemble's raw scores on checked X: F(x) = sum_t alpha_t h_t(x) (binary), SAMME's class
        sums S_c(x) (the steps of the rounds whose hypothesis names class c), or the one-vs-rest margins.
        Stumps (and trees of depth 1) sum per-feature step tables (``_steps``): equal to the round-by-round sum
        up to the order of summation."""
        if hasattr(self, "estimators_"):  # (X is checked: each class's margins from it as it is)
            return np.column_stack([m._scores(m._raw_decision(X), m._alpha_total()) for m in self.estimators_])
        with n_threads(self.n_jobs):
            if _steps.is_stump_model(self):
                out = _steps.decision(self, X)
            else:
                out = np.zeros((X.shape[0], self._n_scores), dtype=np.float64)
                if _steps.has_level_trees(self):
                    _steps.tree_decision(self, X, out)
                else:
                    add_trees(X, self.nodes_, self.rounds_, self._leaf_values(), self.classes_.shape[0], out)
        return out[:, 0] if self._n_scores == 1 else out

    def _staged_raw(self, X):
        """(raw scores, sum of |alpha|) after each kept round, added round by round; the last equals
        ``_raw_decision`` up to the order of summation (stumps) or exactly (deeper trees). One-vs-rest: stage t
        is every class's model after its first t rounds (all of them, for a model that stopped earlier), and
        the sum is over all their rounds so far."""
        models, width = self._stage_models()
        margins = [np.zeros((X.shape[0], width), dtype=np.float64) for _ in models]
        total = 0.0
        for t in range(max((m.n_estimators_ for m in models), default=0)):
            total += self._stage_alpha(models, t)
            self._add_stage(models, X, t, margins)
            raw = margins[0] if len(margins) == 1 else np.hstack(margins)
            yield (raw[:, 0].copy() if raw.shape[1] == 1 else raw.copy()), total

    def _stage_models(self):
        """(the models whose rounds the staged scores add, the score columns of each): the model itself, or a
        one-vs-rest model's class models, a column each."""
        if hasattr(self, "estimators_"):
            return list(self.estimators_), 1
        return [self], self._n_scores

    @staticmethod
    def _stage_alpha(models, t):
        """sum of |alpha_t| over the ``_stage_models`` that have a round t."""
        return sum(abs(float(m.rounds_["alpha"][t])) for m in models if t < m.n_estimators_)

    @staticmethod
    def _add_stage(models, X, t, margins):
        """Round t of each of ``models`` that has one added to its margin (``margins``: float64[n, columns] each)
        on the prediction kernels' X."""
        for m, margin in zip(models, margins):
            if t < m.n_estimators_:
                m._add_round(X, t, margin)

    def _add_round(self, X, t, margin):
        """margin (float64[n, 1 or K]) += round t's alpha_t h_t on checked X."""
        with n_threads(self.n_jobs):
            if _steps.has_level_trees(self):
                _steps.tree_decision(self, X, margin, t)
            elif self.nodes_ is not None:
                add_trees(X, self.nodes_[t:t + 1], self.rounds_[t:t + 1], self._leaf_values(t),
                          self.classes_.shape[0], margin)
            else:
                add_stump(X, self.rounds_, t, margin[:, 0])

    def _alpha_total(self):
        """sum_t |alpha_t|, added in round order (as the staged methods add it)."""
        alpha = np.abs(self.rounds_["alpha"])
        return float(np.cumsum(alpha)[-1]) if alpha.shape[0] else 0.0

    def _scores(self, raw, total):
        """decision_function from the raw scores: binary (and one-vs-rest) margins as they are; SAMME's class
        sums in scikit-learn's symmetric coding: a round adds alpha to the class it names and -alpha / (K - 1)
        to the others, normalised by the sum of the steps, so each row sums to 0."""
        if raw.ndim == 1 or hasattr(self, "estimators_") or getattr(self, "leaf_values_", None) is not None:
            return raw  # (K-vector leaves: F itself, whose rows sum to 0)
        k = raw.shape[1]
        if not total > 0.0:
            return np.zeros_like(raw)
        return (k * raw - total) / ((k - 1) * total)

    def decision_function(self, X):
        """Ensemble margin F(x) = sum_t alpha_t h_t(x); positive means ``classes_[1]``.

        With K > 2 classes, an array (n_samples, K): SAMME's class scores in scikit-learn's symmetric
        coding (rows sum to 0, normalised by the sum of the steps, as scikit-learn's AdaBoostClassifier),
        or the one-vs-rest margins.
        """
        if _dataset.is_batched(X):  # a Dataset or parquet files, read batch by batch
            return _dataset.predict(self, X, "decision_function")
        X = self._check_predict_X(X)
        return self._scores(self._raw_decision(X), None if hasattr(self, "estimators_") else self._alpha_total())

    def _staged(self, X):
        """``_staged_raw`` of X as given: in memory, or a Dataset or parquet files read batch by batch."""
        if _dataset.is_batched(X):
            return _dataset.staged_raw(self, X)
        return self._staged_raw(self._check_predict_X(X))

    def staged_decision_function(self, X):
        """``decision_function`` after each kept round, the rounds added one by one; the last equals
        ``decision_function(X)`` (stumps: up to rounding, as that sums per-feature step tables). X may be a
        ``fastboost.Dataset`` or parquet files (read in batches, once per chunk of rounds)."""
        for raw, total in self._staged(X):
            yield self._scores(raw, total)

    def _margin_to_label(self, margin):
        if margin.ndim == 2:
            return self.classes_[np.argmax(margin, axis=1)]
        return self.classes_[(margin > 0).astype(np.intp)]

    def _link(self, margin):
        """A one-vs-rest model's probability of its class from its raw margin: 1 / (1 + exp(-2 F)), the
        exponential loss's; 1 / (1 + exp(-F)) on the logistic loss."""
        return expit(margin if self._logistic() else 2.0 * margin)

    def _unscaled_link(self):
        """Two classes with confidence-rated leaves (``leaf="real"``): q = 1 / (1 + exp(-2 F)), F itself, not
        F / sum |alpha|: Real AdaBoost's F estimates half the log-odds (Friedman, Hastie & Tibshirani 2000), and
        each class's model of a one-vs-rest fit is read so; every step is 1, so dividing by the steps' total drew
        the probabilities towards 1/2 as rounds were added."""
        return getattr(self, "leaf", "discrete") == "real"

    def _margin_to_proba(self, margin, total):
        """Probabilities from the raw scores and the sum of |alpha| of the rounds behind them.

        Binary: q = 1 / (1 + exp(-2 F / sum |alpha|)), scikit-learn's AdaBoost formula (F / sum |alpha|
        lies in [-1, 1] for +-1 hypotheses, so q does too in [0.12, 0.88]: never exactly 0 or 1); with
        confidence-rated leaves 1 / (1 + exp(-2 F)) (``_unscaled_link``).
        SAMME: the softmax of the symmetric scores / (K - 1), as scikit-learn. One-vs-rest: ``_link`` of each
        model's margin F_k (1 / (1 + exp(-2 F_k)), F_k rounded to 12 decimals), normalised to sum 1, so the top
        probability is the predicted class (``_top_stays_top``); AdaBoost.MH the same of its K margins (two
        margins above about 19 both give 1 before normalising: the top one is still the predicted class). On the
        logistic loss (``loss="logistic"``) the loss's own link instead: q = 1 / (1 + exp(-F)), and
        1 / (1 + exp(-F_k)) normalised.
        """
        if margin.ndim == 2:
            if hasattr(self, "estimators_"):  # monotone in each model's margin, as predict's argmax
                q = self._link(np.round(margin, 12))  # margins equal but for rounding: equal (_top_stays_top)
                rows = q.sum(axis=1, keepdims=True)
                return _top_stays_top(np.where(rows > 0, q / np.where(rows > 0, rows, 1.0), 1.0 / q.shape[1]),
                                      margin)
            from scipy.special import softmax

            if getattr(self, "leaf_values_", None) is not None:
                if self._mh():  # AdaBoost.MH: as one-vs-rest, _link(F_k) normalised (in logs: no 0 / 0 when
                    scale = 1.0 if self._logistic() else 2.0  # every F_k is very low)
                    return _top_stays_top(softmax(-np.logaddexp(0.0, -scale * margin), axis=1), margin)
                return softmax(margin / (margin.shape[1] - 1), axis=1)  # SAMME.R: p_k prop. to exp(F_k / (K - 1))
            return softmax(self._scores(margin, total) / (margin.shape[1] - 1), axis=1)
        if self._logistic():  # the logistic loss's own: 1 / (1 + exp(-F))
            return np.column_stack([expit(-margin), expit(margin)])
        if self._unscaled_link():
            total = 1.0
        p1 = expit(2.0 * margin / total) if total > 0.0 else np.full(margin.shape, 0.5)
        return np.column_stack([1.0 - p1, p1])

    def predict_contrib(self, X):
        """Per-feature contributions (SHAP values) to ``decision_function(X)``: column j is feature j's, the
        last column the expected value, and each row sums to ``decision_function(X)``. Two classes: an array
        (n_samples, n_features + 1); K > 2 classes: (n_samples, K, n_features + 1), one block per column of
        ``decision_function``. Path-dependent TreeSHAP over each node's cover (``cover_``, the training rows'
        summed sample weight); see docs/explain.md."""
        from .explain import predict_contrib

        return predict_contrib(self, X)

    def _contrib(self, X):
        """predict_contrib on checked X."""
        from .explain import contrib

        return contrib(self, X)

    def predict(self, X):
        """``classes_[1]`` where F(x) > 0, else ``classes_[0]`` (sgn(0) = -1); K > 2: the top score's class.
        X may be a ``fastboost.Dataset`` or parquet files (a path, directory or pattern): read in batches."""
        if _dataset.is_batched(X):
            return _dataset.predict(self, X, "predict")
        return self._margin_to_label(self._raw_decision(self._check_predict_X(X)))

    def predict_proba(self, X):
        """[1 - q, q] with q = 1 / (1 + exp(-2 F(x) / sum_t |alpha_t|)) (scikit-learn's AdaBoost formula;
        ``leaf="real"``: q = 1 / (1 + exp(-2 F(x))), Real AdaBoost's; ``loss="logistic"``: q = 1 / (1 + exp(-F(x))));
        K > 2 classes: the softmax of SAMME's symmetric scores / (K - 1), or the one-vs-rest models' (AdaBoost.MH's
        classes') probabilities normalised to sum 1."""
        if _dataset.is_batched(X):
            return _dataset.predict(self, X, "predict_proba")
        X = self._check_predict_X(X)
        return self._margin_to_proba(self._raw_decision(X), None if hasattr(self, "estimators_")
                                     else self._alpha_total())

    def predict_log_proba(self, X):
        with np.errstate(divide="ignore"):  # log 0 = -inf (QuadBoost's clipped probabilities)
            return np.log(self.predict_proba(X))

    def staged_predict(self, X):
        for raw, _ in self._staged(X):
            yield self._margin_to_label(raw)

    def staged_predict_proba(self, X):
        for raw, total in self._staged(X):
            yield self._margin_to_proba(raw, total)

    def _score_labels(self, X, y, sample_weight, what):
        if _dataset.is_batched(X):
            return _dataset.labels_and_weights(self, X, y, sample_weight, what)
        if y is None:
            raise ValueError(f"{type(self).__name__}.{what} needs y (only a Dataset brings its own labels).")
        return y, sample_weight

    def score(self, X, y=None, sample_weight=None):
        """Accuracy of ``predict(X)`` against y (scikit-learn's ``score``). X may be a ``fastboost.Dataset``
        (its labels and weights: y=None) or parquet files, read in batches."""
        from sklearn.metrics import accuracy_score

        y, sample_weight = self._score_labels(X, y, sample_weight, "score")
        return float(accuracy_score(y, self.predict(X), sample_weight=sample_weight))

    def staged_score(self, X, y=None, sample_weight=None):
        """Accuracy after each kept round. X may be a ``fastboost.Dataset`` (its labels and weights) or parquet
        files."""
        from sklearn.metrics import accuracy_score

        y, sample_weight = self._score_labels(X, y, sample_weight, "staged_score")
        for pred in self.staged_predict(X):
            yield accuracy_score(y, pred, sample_weight=sample_weight)

    def save(self, path):
        """Write the fitted model to ``path`` (a file name, e.g. ``model.fbm``, or a binary file object) in
        fastboost's model format (docs/model-format.md: a zip of a JSON header and ``.npy`` arrays, no
        pickle); ``fastboost.load(path)`` reads it back and predicts bit for bit as this model. A Dask
        estimator saves its ``to_local()`` model."""
        save_model(self, path)

    def __sklearn_is_fitted__(self):
        return hasattr(self, "n_estimators_")

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags


@register_model_class
class AdaBoostClassifier(BaseBoostClassifier):
    __doc__ = estimator_doc("AdaBoostClassifier", """Discrete AdaBoost with histogram decision stumps.

    Each round the stump minimising the weighted error (or the weighted Gini
    impurity with ``criterion="gini"``) on the boosting weights w is added with
    alpha = 1/2 log(W_I / W_J); boosting stops early when alpha <= 0 or after a
    perfect stump. The exponential loss sum_i exp(-y_i F(x_i)) decreases every
    round (``rounds_["cost"]``). See docs/algorithms.md, "AdaBoost and SAMME".
    """, multiclass="""With K > 2 classes and discrete leaves it runs SAMME in the one loop: the
    weak learner is a tree whose leaves name classes, alpha = 1/2 (log((1 - eps) / eps) + log(K - 1))
    (half of scikit-learn's SAMME weight, the same predictions) and ``predict_proba`` is the softmax
    of the class scores. With ``leaf="real"`` it fits one model per class against the rest
    (``estimators_``), unless ``multiclass="joint"`` asks for SAMME.R: one tree a round whose leaves hold
    K real values (``leaf_values_``), ``decision_function`` is their sum F and ``predict_proba`` the
    softmax of F / (K - 1), or ``multiclass="mh"`` for AdaBoost.MH: one tree a round with K real values a
    leaf on one weight per row and class, ``predict_proba`` 1 / (1 + exp(-2 F_k)) normalised (more accurate
    than SAMME.R on the data measured). ``multiclass="ovr"`` fits one model per class with discrete leaves
    too.""", extra_attributes=("leaf_values_",), example="""
    >>> clf.feature_importances_.shape
    (20,)
    """)

    _algorithm = "adaboost"

    _samme = True

    def _rule_fields(self, n_classes):
        return {}

    def __init__(self, n_estimators=50, *, learning_rate=1.0, class_weight=None, warm_start=False,
                 weight_trim_rate=None,
                 criterion="error", max_depth=1, leaf="discrete", multiclass="auto", loss="exponential",
                 min_samples_leaf=1,
                 min_weight_fraction_leaf=0.0, max_bins=MAX_BINS, categorical_features="from_dtype",
                 monotone_constraints=None, monotone_steps="auto", feature_rank=1, validation_fraction=None,
                 n_iter_no_change=None, interaction_constraints=None, colsample_bytree=1.0, colsample_bynode=1.0,
                 subsample=1.0, bootstrap=False, n_jobs=None, random_state=None, verbose=0):
        store_params(self, locals())

    def _capped_steps(self, depth, n_features):
        """Whether constrained stumps may step back (``monotone_steps``): binary stumps with the best feature's
        split, under some monotone constraint; a ValueError when "capped" is asked of another fit."""
        mode = self.monotone_steps
        if mode == "forward" or self._monotone_direction(n_features) is None:
            return False
        applies = depth == 0 and self.feature_rank == 1
        if mode == "capped" and not applies:
            raise ValueError(
                f"{type(self).__name__}(monotone_steps='capped') takes binary decision stumps (max_depth=1, "
                "leaf='discrete', min_samples_leaf=1, min_weight_fraction_leaf=0, two classes or multiclass='ovr') "
                "and feature_rank=1; trees keep the constraints through their leaves' bounds. Use "
                "monotone_steps='auto' (capped where it applies) or 'forward'.")
        return applies


@register_model_class
class LazyBoostClassifier(AdaBoostClassifier):
    __doc__ = estimator_doc("LazyBoostClassifier", """AdaBoost with sub-optimal "lazy" stumps (Sardana & Birodkar).

    Each round ranks the features by their best stump's weighted error and uses the
    ``feature_rank``-th best one (1 is plain AdaBoost). Its edge never
    exceeds the best stump's; alpha = 1/2 log(W_I / W_J) as AdaBoost. The default
    ``feature_rank="auto"`` is the lazy stump, 2, with at least 8 features, and AdaBoost's
    best stump, 1, with fewer: passing over the best of a handful of features gives up much of
    what stumps can use (iris, 4 features: 5.3 % test error against 2.7 % for AdaBoost, 3.3 %
    with k = 1; docs/accuracy.md, "Every estimator at its defaults"). Tie-breaking by
    feature index and the rule for k beyond the number of features are our own choices (the paper leaves them open). See
    docs/algorithms.md, "Lazy stumps (feature_rank)".
    """, example="""
    >>> clf.get_params()["feature_rank"]
    'auto'
    """)

    _samme = False  # K > 2 classes: one-vs-rest lazy stump models

    def _capped_steps(self, depth, n_features):
        """Lazy stumps take only the allowed polarity on a constrained feature (no ``monotone_steps``)."""
        return False

    #: feature_rank="auto": the lazy stump (2) with at least this many features, the best stump (1) below
    _AUTO_RANK_FEATURES = 8

    def _feature_rank(self, n_features):
        if not _auto(self.feature_rank):
            return self.feature_rank
        return 2 if n_features >= self._AUTO_RANK_FEATURES else 1

    def __init__(self, n_estimators=50, *, learning_rate=1.0, class_weight=None, warm_start=False,
                 weight_trim_rate=None, feature_rank="auto",
                 criterion="error", max_depth=1, leaf="discrete", min_samples_leaf=1, min_weight_fraction_leaf=0.0,
                 max_bins=MAX_BINS, categorical_features="from_dtype", monotone_constraints=None,
                 validation_fraction=None, n_iter_no_change=None, interaction_constraints=None, colsample_bytree=1.0,
                 colsample_bynode=1.0, subsample=1.0, bootstrap=False, n_jobs=None, random_state=None, verbose=0):
        store_params(self, locals())

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # by design it never uses the best feature: on two features only the weaker one
        tags.classifier_tags.poor_score = True
        return tags


@register_model_class
class VadaBoostClassifier(BaseBoostClassifier):
    __doc__ = estimator_doc("VadaBoostClassifier", """
    VadaBoost (Shivaswamy & Jebara, NeurIPS 2011): variance-penalised boosting.

    The stump learner sees u = lam * n * w**2 + (1 - lam) * w (w sums to 1) and
    alpha = 1/4 log(U_I / U_J). The cost (1 - lam) S1**2 + lam n S2, with
    S1 = sum_i exp(-y_i F(x_i)) and S2 = sum_i exp(-2 y_i F(x_i)), strictly decreases
    every round (``rounds_["cost"]``). lam = 0 squares AdaBoost's loss (with half its steps).
    With sample weights, n w**2 becomes w**2 / p for the sample-weight distribution p.
    See docs/algorithms.md, "VadaBoost".
    """, example_params="lam=0.5", example="""
    >>> import numpy as np
    >>> bool(np.all(np.diff(clf.rounds_["cost"]) < 0))
    True
    """)

    _algorithm = "vadaboost"

    def __init__(self, n_estimators=50, *, learning_rate=1.0, class_weight=None, warm_start=False,
                 weight_trim_rate=None, lam=0.5,
                 criterion="error", max_depth=1, leaf="discrete", min_samples_leaf=1, min_weight_fraction_leaf=0.0,
                 max_bins=MAX_BINS, categorical_features="from_dtype", monotone_constraints=None, feature_rank=1,
                 validation_fraction=None, n_iter_no_change=None, interaction_constraints=None, colsample_bytree=1.0,
                 colsample_bynode=1.0, subsample=1.0, bootstrap=False, n_jobs=None, random_state=None, verbose=0):
        store_params(self, locals())

    def _rule_fields(self, n_classes):
        return {"lam": float(self.lam)}

    def _leaf_scale(self):
        return 0.25


@register_model_class
class EBBoostClassifier(BaseBoostClassifier):
    __doc__ = estimator_doc("EBBoostClassifier", """
    EBBoost (Shivaswamy & Jebara, AISTATS 2010): empirical-Bernstein boosting.

    Each round searches all stumps (features, bin thresholds, missing side and both
    polarities) exactly for the smallest V* = 2 sqrt(A B) + 2 (1 - lam) W_I W_J, with
    A = (1 - lam) W_I**2 + lam n Q_I and B likewise on the errors (Q: sums of w**2;
    with sample weights n w**2 becomes w**2 / p), and adds it with
    alpha = 1/4 log(A / B). This minimises the cost (1 - lam) S1**2 + lam n S2 jointly
    over the stump and its step, so the cost never increases (``rounds_["cost"]``).
    lam = 0 gives AdaBoost's stump and step. The histograms carry per-class sums of w
    and w**2. Stumps only: the search enumerates the learners. Stopping when the best
    alpha is 0 is our reconstruction. See docs/algorithms.md, "EBBoost".
    """, example_params="lam=0.5", example="""
    >>> import numpy as np
    >>> bool(np.all(np.diff(clf.rounds_["cost"]) <= 0))
    True
    """)

    _algorithm = "ebboost"

    def __init__(self, n_estimators=50, *, learning_rate=1.0, class_weight=None, warm_start=False,
                 weight_trim_rate=None, lam=0.5,
                 max_depth=1, min_samples_leaf=1, min_weight_fraction_leaf=0.0, max_bins=MAX_BINS,
                 categorical_features="from_dtype", monotone_constraints=None, feature_rank=1, validation_fraction=None,
                 n_iter_no_change=None, interaction_constraints=None, colsample_bytree=1.0, colsample_bynode=1.0,
                 subsample=1.0, bootstrap=False, n_jobs=None, random_state=None, verbose=0):
        store_params(self, locals())

    def _criterion_code(self):
        return CRITERION_EB

    def _tree_depth(self, n_classes):
        if super()._tree_depth(n_classes):
            raise ValueError("EBBoost enumerates decision stumps exactly and has no tree form: "
                             "use max_depth=1, min_samples_leaf=1 and min_weight_fraction_leaf=0 (for trees, "
                             "VadaBoostClassifier minimises the same cost).")
        return 0

    def _rule_fields(self, n_classes):
        return {"lam": float(self.lam)}


@register_model_class
class SABoostClassifier(BaseBoostClassifier):
    __doc__ = estimator_doc("SABoostClassifier", """
    SABoost (Tsao & Chang, CSDA 2007): boosting with stochastic-approximation step sizes.

    The stump learner sees weights w proportional to exp(-y F(x)) (as AdaBoost), and
    the ensemble grows by F <- F + a_t h_t with a deterministic schedule a_t instead
    of a line search; there is no alpha <= 0 break (boosting stops only if the best
    stump's weighted error reaches 1/2). Small steps narrow the gap between training
    and test error; large ones overfit.

    **The schedule is our reconstruction**: the paper's formula could not be read.
    ``schedule="inverse"``, a_t = gamma / t (Robbins-Monro's canonical choice; it satisfies
    sum a_t = inf, sum a_t**2 < inf for every gamma > 0), fits the trend of the paper's
    tables, but at the default 50 rounds its steps sum to 4.5 gamma, and at gamma = 1 its
    test error was 2-11 points above AdaBoost's on twonorm, ringnorm and digits. The default
    is therefore a_t = 1 / sqrt(t) (``schedule="power"``, ``gamma="auto"`` = 0.5), chosen by
    measuring test errors (docs/accuracy.md), not read in the paper: it keeps sum a_t = inf
    but not sum a_t**2 < inf. ``"constant"`` (a_t = gamma) is offered too, so other
    readings can be tested; explicit values run as given. With trees the default
    ``min_samples_leaf="auto"`` asks 5 rows a leaf (1 with stumps): trees that fit a small training
    set exactly are perfect, and the schedule then keeps stepping on the same tree (wine, depth 3:
    7.2 % test error with 1-row leaves, 2.2 % with 5). No monotone quantity is guaranteed:
    the exponential loss falls at round t iff a_t < log((1 - eps_t) / eps_t).
    See docs/algorithms.md, "SABoost".
    """, example_params='gamma=1.0, schedule="inverse"', example="""
    >>> clf.estimator_weights_[:3].round(3).tolist()
    [1.0, 0.5, 0.333]
    """)

    _algorithm = "saboost"

    def __init__(self, n_estimators=50, *, learning_rate=1.0, class_weight=None, warm_start=False,
                 weight_trim_rate=None, gamma="auto",
                 schedule="power", criterion="error", max_depth=1, min_samples_leaf="auto",
                 min_weight_fraction_leaf=0.0, max_bins=MAX_BINS, categorical_features="from_dtype",
                 monotone_constraints=None, feature_rank=1, validation_fraction=None, n_iter_no_change=None,
                 interaction_constraints=None, colsample_bytree=1.0, colsample_bynode=1.0, subsample=1.0,
                 bootstrap=False, n_jobs=None, random_state=None, verbose=0):
        store_params(self, locals())

    #: gamma="auto" per schedule: a_t = 1 / sqrt(t) for "power", the earlier default 1.0 for the others
    _AUTO_GAMMA = {"power": 0.5, "inverse": 1.0, "constant": 1.0}

    def _step_size(self, rate):
        return (f"the step size (schedule={v.plain(self.schedule)}, gamma={v.plain(self.gamma)}, "
                f"learning_rate={rate:g})")

    def _rule_fields(self, n_classes):
        gamma = self._AUTO_GAMMA[self.schedule] if _auto(self.gamma) else self.gamma
        return {"gamma": float(gamma), "schedule": SCHEDULES[self.schedule]}


@register_model_class
class QuadBoostClassifier(BaseBoostClassifier):
    __doc__ = estimator_doc("QuadBoostClassifier", """
    QuadBoost (Fortier-Dubois et al., arXiv 1506.02535): boosting the quadratic risk.

    F = sum_j alpha_j h_j is fitted to the labels y in {-1, +1} by the quadratic risk
    R = sum_i p_i (y_i - F(x_i))**2 (p: sample-weight distribution, 1/m without weights).
    Each round the learner is handed the residuals r = y - F as a weighted
    classification (labels sign r, weights p |r|), whose best stump maximises
    g = <h, r>_p; its weight follows the variant:

    - ``penalty=None`` (vanilla): alpha = g;
    - ``"l1"``: objective R + 2 lam ||alpha||_1, alpha = sign(g) max(|g| - lam, 0); boosting
      stops when no stump has |g| > lam;
    - ``"l2"``: objective R + lam ||alpha||_2**2 (the squared norm), alpha = g / (1 + lam);
    - ``"linf"``: R with |alpha_j| <= alpha_max, alpha = clip(g, -alpha_max, alpha_max).

    With ``max_depth`` > 1 the voters are least-squares trees fitted to r (split criterion: the
    p-weighted squared error; leaves: the mean residual), with eta = <h, h>_p in the rules
    (vanilla: alpha = g / eta = 1).

    No per-example exponential weights. Every ``reweight_every`` rounds (if set) and
    once at the end, one coordinate-descent pass re-fits each kept voter's weight by
    the same rule (the objective never increases); voters whose weight becomes 0
    (L1) are dropped. The re-weighting schedule is our choice (the paper says "occasionally").
    Prediction is sgn F with sgn(0) = -1; ``predict_proba`` is clip((1 + F) / 2, 0, 1).
    Use ``criterion="error"`` (default) for the exact reduction. With trees the defaults are
    ``learning_rate="auto"`` = 0.1 and ``min_samples_leaf="auto"`` = 5 rows a leaf, so the
    least-squares trees do not fit the training rows exactly (breast cancer, depth 3: 5.4 % test
    error with 1-row leaves, 3.3 % with 5). See docs/algorithms.md, "QuadBoost".
    """, multiclass="""With K > 2 classes, one model per class is fitted against the rest
    (``estimators_``); ``predict`` takes the class with the top margin and ``predict_proba``
    normalises the models' clipped probabilities of their class to sum 1.""",
        extra_attributes=("objective_",), example_params='penalty="l1", lam=0.001', example="""
    >>> clf.objective_ < clf.initial_cost_
    True
    """)

    _algorithm = "quadboost"
    _drops_voters = True
    @property
    def _empty_reason(self):
        if self.penalty == "l1":
            return f"no voter improves the objective (with penalty='l1': none has |<h, r>| > lam={self.lam:g});"
        return "no voter improves the objective;"

    def __init__(self, n_estimators=50, *, learning_rate="auto", class_weight=None, warm_start=False, penalty=None,
                 lam=0.0, alpha_max=1.0, reweight_every=None, reweight_at_end=True, criterion="error", max_depth=1,
                 min_samples_leaf="auto", min_weight_fraction_leaf=0.0, max_bins=MAX_BINS,
                 categorical_features="from_dtype", monotone_constraints=None, feature_rank=1, validation_fraction=None,
                 n_iter_no_change=None, interaction_constraints=None, colsample_bytree=1.0, colsample_bynode=1.0,
                 subsample=1.0, bootstrap=False, n_jobs=None, random_state=None, verbose=0):
        store_params(self, locals())

    def _rule_fields(self, n_classes):
        return {"lam": float(self.lam), "penalty": PENALTIES[self.penalty], "alpha_max": float(self.alpha_max)}

    #: learning_rate="auto" with trees (stumps: 1.0, the published algorithm)
    _AUTO_TREE_RATE = 0.1

    def _config(self, rule, mapper, n_classes, n_features, n_nonzero):
        """The configuration with learning_rate="auto" resolved: 1.0 for stumps, 0.1 for trees (and
        min_samples_leaf="auto": 5 with trees)."""
        if not _auto(self.learning_rate):
            return super()._config(rule, mapper, n_classes, n_features, n_nonzero)
        rate = self._AUTO_TREE_RATE if self._tree_depth(n_classes) > 1 else 1.0
        leaf, given = self._min_leaf(), self.min_samples_leaf  # "auto" reads learning_rate="auto"
        self.learning_rate, self.min_samples_leaf = rate, leaf  # read by the shared configuration; restored after
        try:
            return super()._config(rule, mapper, n_classes, n_features, n_nonzero)
        finally:
            self.learning_rate, self.min_samples_leaf = "auto", given

    def _auto_min_leaf(self):
        """min_samples_leaf="auto": 5 rows with trees at learning_rate="auto" (the tree defaults), else 1."""
        return self._AUTO_TREE_LEAF if self.max_depth > 1 and _auto(self.learning_rate) else 1

    def _reweight_every(self):
        return self.reweight_every

    def _reweight(self, data, config, model, r, ws=None, valid=None):
        """One coordinate-descent pass over the kept voters (model); refreshes the penalty and the
        validation margins."""
        rule = RULES[self._algorithm]
        c = config[0]
        sums = ws.sums if ws is not None else np.zeros(1, SUMS_DTYPE)
        block_sums = ws.rows.block_sums if ws is not None else np.empty((n_blocks(r.shape[0]), 4))
        _reweight_pass(data, c, model, model.rounds.shape[0], r, rule.step.address(), sums, block_sums)
        penalty = sum(quad_penalty(a, c["lam"], c["penalty"]) for a in model.rounds["alpha"])
        if ws is not None:
            ws.state[0]["penalty"] = penalty
        if valid is not None and valid.y.shape[0]:
            from ._kernels.learners import validate_stump, validate_tree

            validate = (validate_tree if model.nodes.shape[0] else validate_stump).get(valid.codes)
            valid.margin[:] = 0.0
            for j in range(model.rounds.shape[0]):
                validate(valid, c, ws, model, j, model.rounds[j]["alpha"])
        return penalty

    def _finish(self, fit, model):
        """Residuals of the kept voters, the final re-weighting pass, zero-weight voters dropped."""
        data, config = fit.data, fit.config
        c = config[0]
        r = 2.0 * data.y - 1.0
        for j in range(model.rounds.shape[0]):
            add_voter(data.codes, model, j, c["missing_code"], model.rounds[j]["alpha"], r)
        if self.reweight_at_end and model.rounds.shape[0]:
            self._reweight(data, config, model, r)
        keep = model.rounds["alpha"] != 0.0
        model = _driver.Model(model.rounds[keep], model.nodes[keep] if model.nodes.shape[0] else model.nodes)
        self.objective_ = float(np.dot(data.p, r * r) + sum(quad_penalty(a, c["lam"], c["penalty"])
                                                            for a in model.rounds["alpha"]))
        return model

    @staticmethod
    def _link(margin):
        return np.clip((1.0 + margin) / 2.0, 0.0, 1.0)

    def _margin_to_proba(self, margin, total):
        if margin.ndim == 2:
            return super()._margin_to_proba(margin, total)
        p1 = self._link(margin)
        return np.column_stack([1.0 - p1, p1])


def _top_stays_top(proba, margin):
    """One-vs-rest probabilities (of margins rounded to 12 decimals) whose argmax is predict's, the argmax of
    the margins. Margins equal but for rounding (an ulp apart) could give probabilities an ulp apart, which
    ``predict_log_proba``'s logarithm may or may not merge (and sort differently); rounded first they are
    equal, and the class predict takes among them (the top raw margin) gets the row's largest probability
    times 1 + 16 machine epsilons, a gap the logarithm keeps."""
    top = np.argmax(margin, axis=1)
    rows = np.flatnonzero(np.argmax(proba, axis=1) != top)
    if rows.shape[0]:
        proba[rows, top[rows]] = proba[rows].max(axis=1) * (1.0 + 16.0 * np.finfo(np.float64).eps)
    return proba


# ============================================================================ totally corrective fits
def _warn_unconverged(est, sol):
    """Warn when L-BFGS-B stopped (at its iteration limit) with the QP's answer not certified optimal: at a large
    C its weights can then be far from the optimum's (a few voters where the optimum has many)."""
    if np.isfinite(sol.gap) and sol.gap > UNCONVERGED_GAP:
        import warnings

        warnings.warn(f"{type(est).__name__}: L-BFGS-B stopped short of the quadratic program's optimum at "
                      f"C={est.C_:g} (relative duality gap {sol.gap:.2g}), so the weights may be far from optimal; "
                      "solver='highs' solves it exactly, or take a smaller C.", UserWarning, stacklevel=4)


def _warn_no_soft_margin(est, value, refit=None):
    """Warn when the soft-margin LP's value is not positive: then no convex combination of the voters has
    a positive soft margin, the LP's weights may cancel out (h and -h) and the model predict one class.
    refit: the nu ``refit_weights`` was given (the fit's nu or capping otherwise)."""
    if value <= 1e-9:
        import warnings

        asked = est.nu if refit is None else refit
        shown = (f"capping={est.capping!r}" if est.capping is not None and refit is None
                 else f"nu={est.nu_:g}" + (' (nu="auto": no nu it tried gave a positive value)'
                                           if _auto(asked) else ""))
        warnings.warn(f"{type(est).__name__}: the soft-margin LP's value is {value:.3g} <= 0 at {shown}: no "
                      "combination of the voters has a positive soft margin, so their weights may cancel out "
                      "and the model predict one class; allow more margin errors (a larger nu, as a rule above "
                      "twice the training error).", UserWarning, stacklevel=4)


def _auto(value):
    """Whether a parameter is "auto" (chosen by the estimator)."""
    return isinstance(value, str) and value == "auto"


def _check_nu_capping(est):
    """nu and capping: not both."""
    if est.nu is not None and not _auto(est.nu) and est.capping is not None:
        raise ValueError(f"Pass nu or capping, not both (nu={est.nu!r}, capping={est.capping!r}): capping "
                         "= nu * n_samples.")


def _nu_auto(est):
    """Whether the fit chooses nu (nu="auto" without ``capping``)."""
    return _auto(est.nu) and est.capping is None


def _given_nu(est):
    """``nu`` for ``soft_margin_caps`` when it is not chosen: the number, None (0.1, or ``capping``)."""
    return None if _auto(est.nu) else est.nu


def _nu_of_caps(est, p):
    """The nu a numeric ``nu`` or ``capping`` amounts to on the distribution p of the rows with weight."""
    if est.capping is not None:
        return est.capping / p.shape[0]
    return 0.1 if est.nu is None else est.nu


def _held_out_fold_errors(est, codes, y_idx, p, mapper, score):
    """nu="auto" / C="auto": per fold of ``held_out_folds`` (seeded by ``random_state``), AdaBoost with the
    estimator's rounds and learner parameters fitted on the fold's training rows (the held-out rows at weight 0,
    so its voters never saw them), and ``score(M_train, q, M_held, y_held, p_held)`` of its voters' margins."""
    rows = np.flatnonzero(p > 0)
    y = y_idx[rows]
    direction = est._monotone_direction(codes.shape[0])
    ada = AdaBoostClassifier(est.n_estimators, learning_rate=est.learning_rate, criterion=est.criterion,
                             max_depth=est.max_depth, min_samples_leaf=est._min_leaf(),
                             min_weight_fraction_leaf=est.min_weight_fraction_leaf, max_bins=est.max_bins,
                             feature_rank=est.feature_rank, n_jobs=est.n_jobs,
                             monotone_constraints=None if direction is None else direction.tolist())
    ada._owner = type(est).__name__  # (its errors and warnings are the estimator's)
    out = []
    for train, held in held_out_folds(y, auto_seed(est.random_state)):
        pf = np.zeros_like(p)
        pf[rows[train]] = p[rows[train]] / p[rows[train]].sum()
        model = ada._boost(codes, y_idx, pf, mapper, None, 2)
        M = voter_margins(codes, y_idx, rows, model, 0, model.rounds.shape[0], mapper.missing_code)
        out.append(score(M[:, train], pf[rows[train]], M[:, held], y[held], p[rows[held]]))
    return out


def _fold_data(*fold):
    """A fold's (M_train, q, M_held, y_held, p_held) as it is (``_held_out_fold_errors``' score for
    ``choose_nu_of_folds``, which scores them)."""
    return fold


def _one_row(est, y_idx, p):
    """RLP-Boost's nu="auto" tolerance: ``one_row_share`` of the rows with weight on the folds of
    ``_held_out_fold_errors``. Not LPBoost's: its folds score the LP over AdaBoost's voters, a stand-in for the
    columns it generates, and at a smaller nu those fit fewer rows harder (docs/algorithms.md, "Choosing nu
    and C")."""
    rows = np.flatnonzero(p > 0)
    return one_row_share(y_idx[rows], p[rows], auto_seed(est.random_state))


def _refit_nu_check(nu):
    """refit_weights' nu: "auto" or a number in (0, 1]."""
    if not _auto(nu):
        if nu is None:
            raise TypeError('refit_weights needs nu: a number in (0, 1] or "auto".')
        ESTIMATOR_PARAMS["LPBoostClassifier"]["nu"].constraint.check("nu", nu)


def _margin_error(ym, y, p):
    """Weighted error of margins y_i F(x_i): wrong when y F < 0, or F = 0 on class index 1 (sgn(0) = -1)."""
    return float(p @ ((ym < 0) | ((ym == 0) & (y == 1))))


class _RefitWeights:
    """``refit_weights``: the LP estimators' master re-solved for another nu or C over the fitted voters."""

    def _refit_margins(self, X, y, sample_weight):
        """(M float64 [voters, rows with weight], labels 0 / 1, distribution p) of the fitted voters on X, y."""
        if self.rounds_.shape[0] == 0:  # (the LP over no voter is unbounded)
            raise ValueError(f"{type(self).__name__}.refit_weights: the model has no voters (its fit kept none), so "
                             "there are no weights to solve for.")
        X = self._check_predict_X(X)
        y_idx = self._refit_class_indices(y, X.shape[0])
        # (class_weight as in fit: the LP's row weights are the sample weights times the class weights)
        sw = v.check_sample_weight(self._class_weighted(sample_weight, self.classes_[y_idx]), X.shape[0])
        rows = np.flatnonzero(sw > 0)
        present = np.unique(y_idx[rows])
        if present.shape[0] < 2:  # (the LP over one class: every voter's margin one-sided, the weights meaningless)
            raise ValueError(f"{type(self).__name__}.refit_weights needs rows (of positive weight) of both classes; "
                             f"y has only {v.plain(self.classes_[present[0]]) if present.size else 'none'}.")
        p = v.as_distribution(sw[rows])
        ones = self.rounds_.copy()
        ones["alpha"] = 1.0
        k = ones.shape[0]
        M = np.zeros((k, rows.shape[0]))
        Xr = X[rows]
        level = _steps.level_trees(self.nodes_, ones, NO_VALUES, 2) if _steps.has_level_trees(self) else None
        with n_threads(self.n_jobs):
            for t in range(k):
                if self.nodes_ is not None:
                    out = np.zeros((rows.shape[0], 1))
                    if level is not None:
                        _steps.each_tree(level, Xr, t, out)
                    else:
                        add_trees(Xr, self.nodes_[t:t + 1], ones[t:t + 1], NO_VALUES, 2, out)
                    M[t] = out[:, 0]
                else:
                    add_stump(Xr, ones, t, M[t])
        yr = y_idx[rows].astype(Y_DTYPE)
        return M * (2.0 * yr - 1.0), yr, p

    def _refit_class_indices(self, y, n_rows):
        """y (n_rows labels) as indices into ``classes_``; ValueError for a label the model was not fitted on."""
        name = type(self).__name__
        y = v.check_y(y, n_rows, name)
        y_idx = np.minimum(np.searchsorted(self.classes_, y), self.classes_.shape[0] - 1)
        if not np.all(self.classes_[y_idx] == y):
            unknown = np.setdiff1d(np.unique(y), self.classes_)
            raise ValueError(f"{name}.refit_weights: y has labels the model was not fitted on: {unknown[:5].tolist()}.")
        return y_idx

    def _refit_one_vs_rest(self, X, y, sample_weight, **value):
        from sklearn.utils.validation import _num_samples

        y = self.classes_[self._refit_class_indices(y, _num_samples(X))]
        missing = np.setdiff1d(self.classes_, y)
        if missing.size:
            raise ValueError(f"{type(self).__name__}.refit_weights: y lacks the class(es) {missing[:5].tolist()}; "
                             "each class's model is re-solved on its class against the rest.")
        sample_weight = self._class_weighted(sample_weight, y)  # (the class models have no class_weight: as fit)
        saved = [{k: a.copy() if isinstance(a, np.ndarray) else a for k, a in vars(m).items()}
                 for m in self.estimators_]
        try:
            for c, model in zip(self.classes_, self.estimators_):
                model.refit_weights(X, np.where(y == c, 1, 0), sample_weight=sample_weight, **value)
        except BaseException:  # (every class's model as it was: a refusal on a later class left earlier ones re-solved)
            for model, state in zip(self.estimators_, saved):
                model.__dict__.clear()
                model.__dict__.update(state)
            raise
        return self

    def _set_refitted(self, weights):
        self.rounds_["alpha"] = weights
        self.estimator_weights_ = self.rounds_["alpha"].copy()


class _RefitNu(_RefitWeights):
    """``refit_weights`` at another ``nu`` (LPBoost, RLP-Boost: the same soft-margin LP over the voters)."""

    def refit_weights(self, X, y, nu, sample_weight=None):
        """Re-solve the soft-margin LP at another ``nu`` over this model's voters, without fitting voters again.

        The voters revisited are those in ``rounds_`` (and ``nodes_``): the ones the fit kept, whose weight was
        positive, plus any an earlier ``refit_weights`` set to 0 (they keep their place); voters the fit
        itself dropped are gone. X, y (and ``sample_weight``) are the rows the LP is solved on, normally the
        training rows. ``nu``: a number in (0, 1], or "auto" (chosen on these rows as in ``fit``). Sets
        ``rounds_["alpha"]``, ``estimator_weights_``, ``nu_`` and ``objective_``; one LP per call (a search
        over nu costs one LP per value, not one fit). One-vs-rest: every class's model. Returns self.
        """
        _refit_nu_check(nu)
        check_is_fitted(self)
        if hasattr(self, "estimators_"):
            return self._refit_one_vs_rest(X, y, sample_weight, nu=nu)
        M, yr, p = self._refit_margins(X, y, sample_weight)
        asked = nu
        if _auto(nu):
            nu, sol, _ = solve_auto_nu(M, yr, p, auto_seed(self.random_state))
        else:
            sol = solve_soft_margin_lp(M, soft_margin_caps(p, nu))
        self.nu_ = float(nu)
        self.objective_ = sol.value
        _warn_no_soft_margin(self, sol.value, refit=asked)
        self._set_refitted(sol.weights)
        return self


@register_model_class
class LPBoostClassifier(_RefitNu, BaseBoostClassifier):
    __doc__ = estimator_doc("LPBoostClassifier", """
    LPBoost (Demiriz, Bennett & Shawe-Taylor 2002): totally corrective boosting by column generation.

    The voters' weights a solve the soft-margin linear program over the voters found so far

        max  rho - sum_i D_i xi_i  s.t.  y_i sum_j a_j h_j(x_i) + xi_i >= rho,  sum_j a_j = 1,  a, xi >= 0,

    with D_i = p_i / nu (p: the sample-weight distribution; 1 / (nu n) without weights). Each round
    the weak learner (the same histogram stump or tree learner as every estimator) is handed the
    LP's dual example weights u (they sum to 1, each at most D_i) and finds the voter with the
    largest edge sum_i u_i y_i h(x_i); the master LP is then re-solved with HiGHS from its previous
    basis and every weight is revised. Boosting stops when the best new edge is at most the LP's
    value beta plus ``tol`` (the LP over all voters is then solved), or after ``n_estimators``
    columns. The LP value never decreases (``rounds_["lp_value"]``); voters with weight 0 at the
    end are dropped. The master has one variable per training example: see docs/algorithms.md,
    "LPBoost" for where it stops being practical. A voter with no training error (margin 1 on
    every row) is the LP's whole solution at every nu, and column generation stops after it; that
    is kept (it is the LP's optimum), though with one-vs-rest on small data such single-voter class
    models tie (docs/algorithms.md, "Perfect hypotheses in the LP estimators"). Needs the ``lp``
    extra (highspy).
    """, extra_attributes=("nu_", "objective_", "lp_time_"), example_params="nu=0.1", example="""
    >>> import numpy as np
    >>> bool(np.all(np.diff(clf.rounds_["lp_value"]) >= -1e-9))
    True
    """)

    _algorithm = "lpboost"
    _corrective = True
    _empty_reason = "no weak hypothesis has a positive edge on the master's dual weights;"
    warm_start = False  # not a parameter: the master LP is not kept between fits
    learning_rate = 1.0  # not a parameter: the master sets every weight

    def __init__(self, n_estimators=100, *, nu="auto", capping=None, tol=1e-6, class_weight=None, criterion="error",
                 max_depth=1, min_samples_leaf=1, min_weight_fraction_leaf=0.0, max_bins=MAX_BINS,
                 categorical_features="from_dtype", monotone_constraints=None, feature_rank=1, validation_fraction=None,
                 n_iter_no_change=None, interaction_constraints=None, colsample_bytree=1.0, colsample_bynode=1.0,
                 subsample=1.0, bootstrap=False, n_jobs=None, random_state=None, verbose=0):
        store_params(self, locals())

    def _check_params(self):
        super()._check_params()
        _check_nu_capping(self)

    def _check_extras(self):
        highspy_module(type(self).__name__)

    def _rule_fields(self, n_classes):
        return {"lp_tol": float(self.tol), "lp_beta": -np.inf}

    def _reweight_every(self):
        return 1

    def _boost(self, codes, y_idx, p, mapper, val, n_classes, resume=None):
        soft_margin_caps(p[p > 0], _given_nu(self), self.capping)  # ValueError before any round
        if _nu_auto(self):  # nu from held-out folds first, then column generation at that nu
            choice = choose_nu_of_folds(_held_out_fold_errors(self, codes, y_idx, p, mapper, _fold_data))
            self._auto_nu = FALLBACK_NU if choice.value is None else choice.value
        try:
            return super()._boost(codes, y_idx, p, mapper, val, n_classes, resume)
        finally:
            self.__dict__.pop("_auto_nu", None)

    def _between_rounds(self, fit, model):
        """Add the new column(s) to the master, re-solve it, set every weight and the learner's next weights
        u; record the round's LP value, beta, active columns and validation error."""
        data, config, ws, valid = fit.data, fit.config, fit.rounds.ws, fit.valid
        master = fit.extra.get("master")
        if master is None:
            rows = np.flatnonzero(data.p > 0)
            nu = self._auto_nu if _nu_auto(self) else _given_nu(self)
            caps = soft_margin_caps(data.p[rows], nu, self.capping)
            master = fit.extra["master"] = {"lp": SoftMarginMaster(caps), "rows": rows, "valid": []}
        lp, rows = master["lp"], master["rows"]
        c = config[0]
        done = model.rounds.shape[0]
        first = lp.n_columns
        started = time.perf_counter()
        lp.add_columns(voter_margins(data.codes, data.y, rows, model, first, done - first, c["missing_code"]))
        sol = lp.solve()
        master["seconds"] = master.get("seconds", 0.0) + time.perf_counter() - started
        rounds = model.rounds
        rounds["alpha"] = sol.weights
        ws.rows.w[:] = 0.0
        ws.rows.w[rows] = sol.u / sol.u.sum()
        config[0]["lp_beta"] = sol.beta  # the stop rule of the next round reads it
        last = rounds[done - 1]
        last["lp_value"] = sol.value
        last["lp_beta"] = sol.beta
        last["n_active"] = np.count_nonzero(sol.weights)
        last["log_cost"] = np.log(max(1.0 - sol.value, 0.0)) if sol.value < 1.0 else -np.inf
        master["solution"] = sol
        if not valid.y.shape[0]:
            return None
        vrows = np.arange(valid.y.shape[0])
        master["valid"].append(voter_margins(valid.codes, valid.y, vrows, model, first, done - first,
                                             c["missing_code"]))
        V = np.concatenate(master["valid"]) if len(master["valid"]) > 1 else master["valid"][0]
        master["valid"] = [V]
        err = _margin_error(sol.weights @ V, valid.y, valid.p)
        last["val_error"] = err
        state = ws.state[0]
        if err < state["best_val"]:
            state["best_val"] = err
            state["best_t"] = done
            state["since_best"] = 0
            master["best"] = sol
            return None
        state["since_best"] += 1
        return STOPPED_EARLY if c["patience"] > 0 and state["since_best"] >= c["patience"] else None

    def _finish(self, fit, model):
        """The weights of the kept round's solve (nu="auto": of the LP at the chosen nu over the kept columns);
        voters with weight 0 dropped."""
        master = fit.extra.get("master")
        self.lp_time_ = master.get("seconds", 0.0) if master is not None else 0.0
        sol = None if master is None else master.get("best") or master.get("solution")
        n = model.rounds.shape[0]
        rows = None if master is None else master["rows"]
        self.nu_ = float(self._auto_nu if _nu_auto(self) else _nu_of_caps(
            self, fit.data.p[rows] if rows is not None else fit.data.p[fit.data.p > 0]))
        if sol is None or n == 0:
            self.objective_ = np.nan
            return model
        if _nu_auto(self) and sol.value <= DEGENERATE:  # never kept under "auto": a softer margin, same columns
            data = fit.data
            M = voter_margins(data.codes, data.y, rows, model, 0, n, fit.config[0]["missing_code"])
            larger = [g for g in NU_GRID + SOFT_NU_GRID if g > self.nu_]
            if larger:
                nu, sol = solve_nu_from(M, data.p[rows], larger[0])
                self.nu_ = float(nu)
        model.rounds["alpha"] = sol.weights[:n]
        self.objective_ = sol.value
        _warn_no_soft_margin(self, sol.value)
        keep = model.rounds["alpha"] > 0.0
        return _driver.Model(model.rounds[keep], model.nodes[keep] if model.nodes.shape[0] else model.nodes)

    def _set_rounds(self, model):
        super()._set_rounds(model)
        self.rounds_["cost"] = 1.0 - self.rounds_["lp_value"]  # exact where exp(log) would round


class _ReweightedAdaBoost(BaseBoostClassifier):
    """AdaBoost (stumps or trees, with its validation early stopping), then only the voters' weights
    re-learnt by a regularised LP or QP over AdaBoost's fixed voters (the subclass's ``_solve``)."""

    _algorithm = "adaboost"
    _samme = False  # K > 2 classes: one-vs-rest
    warm_start = False  # not a parameter: the re-weighting is redone on every fit

    def _finish(self, fit, model):
        data, config = fit.data, fit.config
        n = model.rounds.shape[0]
        rows = np.flatnonzero(data.p > 0)
        if n == 0:
            self.objective_ = np.nan
            self.lp_time_ = 0.0
            self._set_unchosen(data.p[rows])
            return model
        started = time.perf_counter()
        M = voter_margins(data.codes, data.y, rows, model, 0, n, config[0]["missing_code"])
        weights, self.objective_ = self._solve(M, data.p[rows], data.y[rows], fit)
        self.lp_time_ = time.perf_counter() - started
        model.rounds["alpha"] = weights
        keep = weights > 0.0
        return _driver.Model(model.rounds[keep], model.nodes[keep] if model.nodes.shape[0] else model.nodes)


@register_model_class
class RLPBoostClassifier(_RefitNu, _ReweightedAdaBoost):
    __doc__ = estimator_doc("RLPBoostClassifier", """
    RLP-Boost (Raetsch, Onoda & Mueller 2001, LP_reg-AdaBoost): AdaBoost's voters re-weighted by the
    soft-margin LP.

    AdaBoost runs first (stumps or trees, with validation early stopping if asked); then only the
    combination weights of its voters are re-learnt: a solves

        max  rho - sum_i D_i xi_i  s.t.  y_i sum_t a_t h_t(x_i) + xi_i >= rho,  sum_t a_t = 1,  a, xi >= 0

    with D_i = p_i / nu, the master problem of LPBoostClassifier over AdaBoost's fixed voters, solved
    with HiGHS. No new voters are generated; voters with weight 0 are dropped. ``rounds_`` keeps
    AdaBoost's records (its errors, costs and validation errors) with ``alpha`` replaced by the LP's
    weights. A voter with no training error gets all the weight (the LP's optimum); with trees and
    nu="auto" the default ``min_samples_leaf="auto"`` asks 5 rows a leaf, so that small training sets
    are not fitted exactly by one tree (docs/algorithms.md, "Trees at the defaults"). Needs the ``lp``
    extra (highspy). See docs/algorithms.md, "RLP-Boost and RQP-Boost".
    """, extra_attributes=("nu_", "objective_", "lp_time_"), example_params="nu=0.1", example="""
    >>> round(float(clf.estimator_weights_.sum()), 9)
    1.0
    """)

    def __init__(self, n_estimators=100, *, nu="auto", capping=None, learning_rate=1.0, class_weight=None,
                 criterion="error", max_depth=1, min_samples_leaf="auto", min_weight_fraction_leaf=0.0,
                 max_bins=MAX_BINS,
                 categorical_features="from_dtype", monotone_constraints=None, feature_rank=1, validation_fraction=None,
                 n_iter_no_change=None, interaction_constraints=None, colsample_bytree=1.0, colsample_bynode=1.0,
                 subsample=1.0, bootstrap=False, n_jobs=None, random_state=None, verbose=0):
        store_params(self, locals())

    def _check_params(self):
        super()._check_params()
        _check_nu_capping(self)

    def _check_extras(self):
        highspy_module(type(self).__name__)

    def _boost(self, codes, y_idx, p, mapper, val, n_classes, resume=None):
        soft_margin_caps(p[p > 0], _given_nu(self), self.capping)  # ValueError before boosting
        return super()._boost(codes, y_idx, p, mapper, val, n_classes, resume)

    def _set_unchosen(self, p):
        self.nu_ = float(_nu_of_caps(self, p)) if not _nu_auto(self) else np.nan

    def _auto_min_leaf(self):
        """min_samples_leaf="auto": 5 rows with trees when nu is chosen (nu="auto"), else 1."""
        return self._AUTO_TREE_LEAF if self.max_depth > 1 and _nu_auto(self) else 1

    def _solve(self, M, p, y, fit):
        if _nu_auto(self):
            data = fit.data
            choice = choose_nu_of_folds(_held_out_fold_errors(self, data.codes, data.y, data.p, fit.mapper,
                                                              _fold_data), _one_row(self, data.y, data.p))
            nu, sol = solve_nu_from(M, p, FALLBACK_NU if choice.value is None else choice.value)
            self.nu_ = float(nu)
        else:
            sol = solve_soft_margin_lp(M, soft_margin_caps(p, _given_nu(self), self.capping))
            self.nu_ = float(_nu_of_caps(self, p))
        _warn_no_soft_margin(self, sol.value)
        return sol.weights, sol.value



@register_model_class
class RQPBoostClassifier(_RefitWeights, _ReweightedAdaBoost):
    __doc__ = estimator_doc("RQPBoostClassifier", """
    RQP-Boost (Raetsch, Onoda & Mueller 2001, QP_reg-AdaBoost): AdaBoost's voters re-weighted by a
    regularised quadratic program.

    AdaBoost runs first (stumps or trees, with validation early stopping if asked); then only the
    combination weights of its voters are re-learnt: b solves

        min  ||b||**2 + sum_i C_i xi_i  s.t.  y_i sum_t b_t h_t(x_i) + xi_i >= 1,  b, xi >= 0

    with C_i = C p_i n (C for every example without sample weights), and the weights are
    b / sum(b). ``solver="lbfgs"`` (default) maximises its bound-constrained dual with SciPy's
    L-BFGS-B; ``"highs"`` hands the QP to HiGHS's QP solver (the ``lp`` extra), exact but much slower
    beyond a few thousand rows. Voters with weight 0 are dropped; ``rounds_`` keeps AdaBoost's records
    with ``alpha`` replaced. ``objective_`` is the QP's objective. See docs/algorithms.md,
    "RLP-Boost and RQP-Boost".
    """, extra_attributes=("C_", "objective_", "lp_time_"), example_params="C=1.0", example="""
    >>> round(float(clf.estimator_weights_.sum()), 9)
    1.0
    """)

    _empty_reason = ("the QP's weights are all 0 (C is too small for any margin to pay for a voter, or, at a large "
                     "C, L-BFGS-B stopped short of the optimum);")

    def __init__(self, n_estimators=100, *, C="auto", solver="lbfgs", learning_rate=1.0, class_weight=None,
                 criterion="error", max_depth=1, min_samples_leaf="auto", min_weight_fraction_leaf=0.0,
                 max_bins=MAX_BINS,
                 categorical_features="from_dtype", monotone_constraints=None, feature_rank=1, validation_fraction=None,
                 n_iter_no_change=None, interaction_constraints=None, colsample_bytree=1.0, colsample_bynode=1.0,
                 subsample=1.0, bootstrap=False, n_jobs=None, random_state=None, verbose=0):
        store_params(self, locals())

    def _check_extras(self):
        if self.solver == "highs":
            highspy_module(f'{type(self).__name__}(solver="highs")')

    def _set_unchosen(self, p):
        self.C_ = np.nan if _auto(self.C) else float(self.C)

    def _auto_min_leaf(self):
        """min_samples_leaf="auto": 5 rows with trees when C is chosen (C="auto"), else 1."""
        return self._AUTO_TREE_LEAF if self.max_depth > 1 and _auto(self.C) else 1

    def _solve(self, M, p, y, fit):
        if _auto(self.C):
            data = fit.data

            def score(Mt, q, Mh, yh, ph):
                return C_errors(Mt, q, Mh, yh, ph, self.solver)

            choice = choose(C_GRID, _held_out_fold_errors(self, data.codes, data.y, data.p, fit.mapper, score),
                            larger=False)
            C, sol = solve_C_from(M, p, FALLBACK_C if choice.value is None else choice.value, self.solver)
            self.C_ = float(C)
        else:
            sol = RQP_SOLVERS[self.solver](M, self.C * p * p.shape[0])
            self.C_ = float(self.C)
        _warn_unconverged(self, sol)
        total = sol.b.sum()
        return (sol.b / total if total > 0 else sol.b), sol.objective

    def refit_weights(self, X, y, C, sample_weight=None):
        """Re-solve the regularised QP at another ``C`` over this model's voters, without fitting AdaBoost again.

        The voters revisited are those in ``rounds_`` (and ``nodes_``): the AdaBoost voters the fit kept
        (weight > 0), plus any an earlier ``refit_weights`` set to 0 (they keep their place); voters the fit
        dropped are gone. X, y (and ``sample_weight``) are the rows the QP is solved on, normally the training
        rows. ``C``: a positive number, or "auto" (chosen on these rows as in ``fit``). Sets
        ``rounds_["alpha"]``, ``estimator_weights_``, ``C_`` and ``objective_``. One-vs-rest: every class's
        model. Returns self.
        """
        if not _auto(C):
            ESTIMATOR_PARAMS["RQPBoostClassifier"]["C"].constraint.inner.check("C", C)
        check_is_fitted(self)
        if hasattr(self, "estimators_"):
            return self._refit_one_vs_rest(X, y, sample_weight, C=C)
        M, yr, p = self._refit_margins(X, y, sample_weight)
        if _auto(C):
            C, sol, _ = solve_auto_C(M, yr, p, auto_seed(self.random_state), self.solver)
        else:
            sol = RQP_SOLVERS[self.solver](M, C * p * p.shape[0])
        self.C_ = float(C)
        _warn_unconverged(self, sol)
        total = sol.b.sum()
        self.objective_ = sol.objective
        self._set_refitted(sol.b / total if total > 0 else sol.b)
        return self
