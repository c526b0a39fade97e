"""Plots of fitted models: cost per round, margin distributions, validation curves, importances.

matplotlib is an optional extra: ``pip install "fastboost[plot]"``. Every function takes a fitted
fastboost estimator, draws on ``ax`` (a new figure when None) and returns the matplotlib Axes.
"""
import numbers

import numpy as np
from sklearn.utils.validation import check_is_fitted

__all__ = ["cost_curve", "margin_cdf", "normalized_margins", "plot_cost", "plot_importance", "plot_margins",
           "plot_validation", "staged_errors"]

_INSTALL = 'fastboost.plot needs matplotlib: pip install "fastboost[plot]"'


# ----------------------------------------------------------------------------- checks
def _matplotlib_axes_class():
    """matplotlib's Axes class, imported on first use (ImportError naming the extra if missing)."""
    try:
        from matplotlib.axes import Axes
    except ImportError:
        raise ImportError(_INSTALL) from None
    return Axes


def _check_ax(ax):
    """``ax`` if it is a matplotlib Axes or None (TypeError otherwise)."""
    Axes = _matplotlib_axes_class()
    if ax is not None and not isinstance(ax, Axes):
        raise TypeError(f"ax must be a matplotlib Axes or None, got {type(ax).__name__}.")
    return ax


def _new_axes(ax):
    """``ax``, or the Axes of a new 6 x 4 inch figure when None."""
    if ax is not None:
        return ax
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError(_INSTALL) from None
    return plt.subplots(figsize=(6, 4))[1]


def _fitted(model):
    """A fitted fastboost estimator: TypeError for anything else, NotFittedError before ``fit``."""
    from .estimators import BaseBoostClassifier

    if not isinstance(model, BaseBoostClassifier):
        raise TypeError(f"expected a fastboost estimator, got {type(model).__name__}.")
    check_is_fitted(model)
    return model


def _is_one_vs_rest(model):
    return hasattr(model, "estimators_")


def _binary_models(model):
    """[(class label or None, binary model)]: the model itself, or each class's model of a one-vs-rest fit."""
    if _is_one_vs_rest(model):
        return list(zip(model.classes_, model.estimators_))
    return [(None, model)]


# ----------------------------------------------------------------------------- cost
def _cost_name(model):
    """What ``rounds_["cost"]`` measures for the model's algorithm."""
    algorithm = getattr(model, "_algorithm", None)
    if algorithm in ("vadaboost", "ebboost"):
        return f"variance-penalised cost (lam={model.lam:g})"
    if algorithm == "quadboost":
        return "quadratic risk" + (f" + {model.penalty} penalty" if model.penalty is not None else "")
    if getattr(model, "loss", None) == "logistic":
        return "logistic loss"
    return "exponential loss"


def cost_curve(model):
    """log10 of the cost before boosting (``initial_cost_``) and after each kept round.

    Parameters
    ----------
    model : fitted binary fastboost estimator (or a per-class model of a one-vs-rest fit)

    Returns
    -------
    ndarray of shape (n_estimators_ + 1,)
        Computed from ``rounds_["log_cost"]``, so it stays finite where ``rounds_["cost"]`` has
        underflowed to 0.
    """
    _fitted(model)
    if _is_one_vs_rest(model):
        raise ValueError("cost_curve takes a binary model: pass one of a one-vs-rest model's estimators_.")
    with np.errstate(divide="ignore"):
        log_cost = np.r_[np.log(model.initial_cost_), model.rounds_["log_cost"]]
    return log_cost / np.log(10.0)


def _power_of_ten(value, pos=None):
    return f"$10^{{{value:g}}}$"


def plot_cost(model, ax=None, label=None, **line_kw):
    """The algorithm's cost after each round, on a log scale (as in the VadaBoost paper's Figure 2).

    The curve is drawn from the logarithm of the cost: the y data are log10(cost) (see
    :func:`cost_curve`; round 0 is the empty ensemble), labelled as powers of ten. Unlike
    ``rounds_["cost"]``, which underflows to 0 after many rounds, this never breaks.

    Parameters
    ----------
    model : fitted fastboost estimator
        Binary models and SAMME draw one line; one-vs-rest models one line per class (their
        ``estimators_``), with a legend.
    ax : matplotlib Axes, optional
        Where to draw; a new figure when None.
    label : str, optional
        Legend entry of the line (one-vs-rest: prefixed to each class).
    **line_kw
        Passed on to ``Axes.plot``.

    Returns
    -------
    matplotlib Axes

    Notes
    -----
    The cost is the one the algorithm lowers: the exponential loss (AdaBoost, LazyBoost, SABoost,
    SAMME), (1 - lam) S1**2 + lam n S2 (VadaBoost, EBBoost) or the quadratic risk plus penalty
    (QuadBoost, as recorded during the fit: the final re-weighting pass, reported in ``objective_``,
    and the voters it drops are not in the curve).
    """
    _fitted(model)
    _check_ax(ax)
    curves = [(_line_label(label, c), cost_curve(m)) for c, m in _binary_models(model)]
    ax = _new_axes(ax)
    for name, curve in curves:
        ax.plot(np.arange(curve.shape[0]), curve, label=name, **line_kw)
    from matplotlib.ticker import FuncFormatter

    ax.yaxis.set_major_formatter(FuncFormatter(_power_of_ten))
    ax.set_xlabel("round")
    ax.set_ylabel("cost (log scale)")
    ax.set_title(f"{type(model).__name__}: {_cost_name(model)}")
    if any(name is not None for name, _ in curves):
        ax.legend(title="class" if _is_one_vs_rest(model) and label is None else None)
    return ax


def _line_label(label, cls):
    if cls is None:
        return label
    return str(cls) if label is None else f"{label}: {cls}"


# ----------------------------------------------------------------------------- margins
def _class_index(model, y, n_rows):
    """Index into ``classes_`` of every label of y (ValueError for unknown labels or a wrong length)."""
    y = np.asarray(y)
    if y.ndim != 1 or y.shape[0] != n_rows:
        raise ValueError(f"y must be a 1-d array of {n_rows} labels (one per row of X), got shape {y.shape}.")
    known = np.isin(y, model.classes_)
    if not known.all():
        raise ValueError(f"y holds labels that are not among the model's classes_: {np.unique(y[~known])[:5]}.")
    return np.searchsorted(model.classes_, y)


def _vote_total(model):
    """sum_t |alpha_t| max_x |h_t(x)| of a binary model: the largest |F(x)| its rounds can reach.

    For hypotheses with outputs -1 / +1 (stumps, discrete trees) this is sum_t |alpha_t|; confidence-rated
    leaves and QuadBoost's least-squares trees are scaled by their largest leaf."""
    alpha = np.abs(model.rounds_["alpha"])
    if model.nodes_ is None:
        reach = np.maximum(np.abs(model.rounds_["left"]), np.abs(model.rounds_["right"]))
    else:
        leaves = model.nodes_["left"] < 0
        reach = np.abs(np.where(leaves, model.nodes_["value"], 0.0)).max(axis=1, initial=0.0)
    return float(alpha @ reach)


def _true_minus_best_other(scores, idx):
    rows = np.arange(scores.shape[0])
    other = scores.copy()
    other[rows, idx] = -np.inf
    return scores[rows, idx] - other.max(axis=1)


def _one_vs_rest_margins(F, idx, totals):
    """min over the other classes j of (F_y - F_j) / (A_y + A_j), A_k the k-th model's vote total."""
    rows = np.arange(F.shape[0])
    denom = totals[idx][:, None] + totals[None, :]
    diff = F[rows, idx][:, None] - F
    pair = np.where(denom > 0, diff / np.where(denom > 0, denom, 1.0), 0.0)
    pair[rows, idx] = np.inf
    return pair.min(axis=1)


def normalized_margins(model, X, y):
    """Normalised margins in [-1, 1] of labelled rows; positive where the model predicts the row's label.

    Parameters
    ----------
    model : fitted fastboost estimator
    X : array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
        Labels among ``model.classes_``.

    Returns
    -------
    ndarray of shape (n_samples,)

    Notes
    -----
    - Two classes: y F(x) / sum_t |alpha_t|, y = +1 for ``classes_[1]`` and -1 for ``classes_[0]``,
      F the raw margin of ``decision_function`` (Schapire, Freund, Bartlett & Lee 1998). Hypotheses
      whose outputs are not -1 / +1 (``leaf="real"``, QuadBoost's trees) count as
      |alpha_t| max_x |h_t(x)| in the sum, so the margin stays in [-1, 1].
    - SAMME (K > 2 classes in one model): the share of the total step of the rounds voting for the
      true class minus the largest share of another class. ``decision_function`` gives
      scikit-learn's symmetric scores s_c = (K share_c - 1) / (K - 1), so the margin is
      (K - 1) / K (s_y - max_{c != y} s_c).
    - One-vs-rest (``estimators_``): the smallest over the other classes j of
      (F_y - F_j) / (A_y + A_j), F_k the raw margin of class k's model and A_k its vote total as above:
      the normalised margin of the pair (y, j) that comes closest to outvoting y.
    - K-vector leaves (``leaf_values_``: SAMME.R, AdaBoost.MH): (F_y - max_{c != y} F_c) / sum_t |alpha_t| S_t,
      F the K scores of ``decision_function`` and S_t the largest spread max_k v_k - min_k v_k of a leaf
      of round t, the most that round can move one class's score past another's.
    """
    _fitted(model)
    scores = model.decision_function(X)
    idx = _class_index(model, y, scores.shape[0])
    values = getattr(model, "leaf_values_", None)
    if values is not None:
        leaves = model.nodes_["left"] < 0
        spread = np.where(leaves, values.max(axis=2) - values.min(axis=2), 0.0).max(axis=1, initial=0.0)
        total = float(np.abs(model.rounds_["alpha"]) @ spread)
        diff = _true_minus_best_other(scores, idx)
        return diff / total if total > 0 else np.zeros_like(diff)
    if _is_one_vs_rest(model):
        totals = np.array([_vote_total(m) for m in model.estimators_])
        return _one_vs_rest_margins(scores, idx, totals)
    if scores.ndim == 1:
        total = _vote_total(model)
        signed = np.where(idx == 1, scores, -scores)
        return signed / total if total > 0 else np.zeros_like(signed)
    k = scores.shape[1]
    return (k - 1) / k * _true_minus_best_other(scores, idx)


def margin_cdf(margins):
    """(x, y) of the empirical distribution function of margins, from (-1, 0) to (1, 1), drawn as steps; ValueError
    for a NaN margin (it has no place in the order)."""
    m = np.sort(np.asarray(margins, dtype=np.float64))
    if m.size and np.isnan(m[-1]):  # (the sort puts NaN last)
        raise ValueError("margin_cdf: the margins hold NaN.")
    n = m.shape[0]
    return np.r_[-1.0, m, 1.0], np.r_[0.0, np.arange(1, n + 1) / max(n, 1), 1.0]


def plot_margins(model, X, y, X_test=None, y_test=None, ax=None, label=None, **line_kw):
    """Cumulative distribution of the normalised margins of the training rows and, if given, the test rows.

    As in Schapire, Freund, Bartlett & Lee (1998): x is the margin in [-1, 1] (see
    :func:`normalized_margins`), y the fraction of rows with at most that margin; the training curve is
    solid, the test curve dashed in the same colour.

    Parameters
    ----------
    model : fitted fastboost estimator
    X, y : array-like
        Training rows and labels.
    X_test, y_test : array-like, optional
        Test rows and labels (both or neither).
    ax : matplotlib Axes, optional
        Where to draw; a new figure when None.
    label : str, optional
        Prefix of the legend entries ("training", "test"), e.g. the model's name when several are drawn
        on one Axes.
    **line_kw
        Passed on to ``Axes.step`` for both curves (the test curve takes the training curve's colour).

    Returns
    -------
    matplotlib Axes
    """
    _fitted(model)
    _check_ax(ax)
    if (X_test is None) != (y_test is None):
        raise ValueError("pass X_test and y_test together.")
    sets = [("training", X, y)] + ([("test", X_test, y_test)] if X_test is not None else [])
    curves = [(name, margin_cdf(normalized_margins(model, Xs, ys))) for name, Xs, ys in sets]
    ax = _new_axes(ax)
    style = dict(line_kw)
    for (name, (x, cdf)), linestyle in zip(curves, ["-", "--"]):
        line, = ax.step(x, cdf, where="post", label=name if label is None else f"{label}, {name}",
                        **{"linestyle": linestyle, **style})
        style.setdefault("color", line.get_color())
    ax.set_xlim(-1.0, 1.0)
    ax.set_ylim(0.0, 1.0)
    ax.set_xlabel("normalised margin")
    ax.set_ylabel("cumulative fraction of rows")
    ax.set_title(f"{type(model).__name__}: margin distribution")
    ax.legend(loc="upper left")
    return ax


# ----------------------------------------------------------------------------- validation
def staged_errors(model, X, y):
    """Error (fraction of rows of X misclassified) of the ensemble after each kept round."""
    _fitted(model)
    y = np.asarray(y)
    if y.ndim == 1:
        _class_index(model, y, y.shape[0])  # (labels the model does not know: an error, not 100 % error)
    errors = []
    for pred in model.staged_predict(X):
        if y.shape != pred.shape:
            raise ValueError(f"y must be a 1-d array of {pred.shape[0]} labels (one per row of X), "
                             f"got shape {y.shape}.")
        errors.append(np.mean(pred != y))
    return np.array(errors)


def plot_validation(model, X=None, y=None, ax=None):
    """Validation error and training error of the ensemble per round, the kept round marked.

    Parameters
    ----------
    model : fitted fastboost estimator
        Fitted with a validation set (``eval_set`` or ``validation_fraction``) for the validation
        curve (``validation_errors_``: every round run, including those after the best one).
    X, y : array-like, optional
        Rows to draw the ensemble's error on, per kept round (from ``staged_predict``); pass the
        training rows. The rounds after the kept one are not in the model, so this curve ends there.
        ``rounds_["error"]`` is not this: it is each weak hypothesis's weighted error.
    ax : matplotlib Axes, optional
        Where to draw; a new figure when None.

    Returns
    -------
    matplotlib Axes
        Errors in percent; a dashed vertical line at ``n_estimators_``, the rounds kept.

    Raises
    ------
    ValueError
        If the model has no validation errors and no X is given, or if only one of X and y is given. A
        one-vs-rest model draws only the error on X (round t: every class's model after its first t rounds);
        each class's model keeps its own validation errors (``model.estimators_[k]``).
    """
    _fitted(model)
    _check_ax(ax)
    ovr = _is_one_vs_rest(model)
    if ovr and X is None:
        raise ValueError("a one-vs-rest fit has a validation curve per class: pass X and y to draw the error of "
                         "the whole model, or draw model.estimators_[k] for class k.")
    if (X is None) != (y is None):
        raise ValueError("pass X and y together.")
    val = None if ovr else getattr(model, "validation_errors_", None)
    if val is None and X is None:
        raise ValueError("the model was fitted without a validation set: pass X and y to draw the training "
                         "error, or fit with eval_set or validation_fraction.")
    train = staged_errors(model, X, y) if X is not None else None
    ax = _new_axes(ax)
    if val is not None:
        ax.plot(np.arange(1, val.shape[0] + 1), 100.0 * val, label="validation")
    if train is not None:
        ax.plot(np.arange(1, train.shape[0] + 1), 100.0 * train, label="training")
    kept = train.shape[0] if ovr else model.n_estimators_
    done = val.shape[0] if val is not None else kept
    ax.axvline(kept, color="grey", linestyle="--", label=f"kept: {kept} of {done} rounds")
    ax.set_xlabel("round")
    ax.set_ylabel("error (%)")
    stopped = any(m.stopped_early_ for m in model.estimators_) if ovr else model.stopped_early_
    ax.set_title(f"{type(model).__name__}: error per round" + (" (stopped early)" if stopped else ""))
    ax.legend()
    return ax


# ----------------------------------------------------------------------------- importances
def _feature_names(model, feature_names, n_features):
    if feature_names is None:
        feature_names = getattr(model, "feature_names_in_", None)
    if feature_names is None:
        return [f"x{j}" for j in range(n_features)]
    if isinstance(feature_names, (str, bytes)) or not hasattr(feature_names, "__len__"):
        raise TypeError(f"feature_names must be a list of names, got {type(feature_names).__name__}.")
    if len(feature_names) != n_features:
        raise ValueError(f"feature_names has {len(feature_names)} names for {n_features} features.")
    return [str(n) for n in feature_names]


def plot_importance(model, feature_names=None, max_features=20, ax=None, *, X=None, kind="importance"):
    """Horizontal bars of ``feature_importances_`` (or of the mean |contribution| on X), the largest on top.

    Parameters
    ----------
    model : fitted fastboost estimator
    feature_names : list of str, optional
        One name per feature; by default ``feature_names_in_`` (fitted on a DataFrame), else x0, x1, ...
    max_features : int, default 20
        Bars drawn: the most important features (ties in feature order).
    ax : matplotlib Axes, optional
        Where to draw; a new figure when None.
    X : array-like, optional
        Rows to explain, for ``kind="contrib"``.
    kind : {"importance", "contrib"}, default "importance"
        ``"importance"``: ``feature_importances_``; ``"contrib"``: each feature's mean absolute
        contribution to ``decision_function`` over the rows of X (``predict_contrib``; summed over the
        classes' columns for K > 2 classes).

    Returns
    -------
    matplotlib Axes
    """
    _fitted(model)
    _check_ax(ax)
    if kind not in ("importance", "contrib"):
        raise ValueError(f'kind must be "importance" or "contrib", got {kind!r}.')
    if (kind == "contrib") != (X is not None):
        raise ValueError('Pass X with kind="contrib" (the rows whose contributions are averaged), and only then.')
    if isinstance(max_features, bool) or not isinstance(max_features, numbers.Integral):
        raise TypeError(f"max_features must be an int, got {type(max_features).__name__}.")
    if max_features < 1:
        raise ValueError(f"max_features must be >= 1, got {max_features}.")
    if kind == "contrib":
        mean = abs(model.predict_contrib(X)[..., :-1]).mean(axis=0)  # ([classes,] features)
        if hasattr(mean, "compute"):  # (a Dask estimator's contributions of Dask rows: lazy)
            mean = mean.compute()
        imp = np.asarray(mean) if mean.ndim == 1 else np.asarray(mean).sum(axis=0)
    else:
        imp = model.feature_importances_
    names = _feature_names(model, feature_names, imp.shape[0])
    order = np.argsort(-imp, kind="stable")[:max_features]
    ax = _new_axes(ax)
    ax.barh(np.arange(order.shape[0])[::-1], imp[order], tick_label=[names[j] for j in order])
    ax.set_xlabel("mean |contribution| to decision_function" if kind == "contrib" else "importance")
    ax.set_title(f"{type(model).__name__}: " + ("mean |contribution| per feature" if kind == "contrib"
                                                  else "feature importances"))
    return ax
