"""Plots of fitted models: cost per round, margin distributions, validation curves, importances.

matplotlib is an optional extra: ``pip install "fastboost[plot]"``. Every function takes a fitted
fastboost estimator, draws on ``ax`` (a new figure when None) and returns the matplotlib Axes.
"""
import numbers

import numpy as np
from sklearn.utils.validation import check_is_fitted


def _axes(ax):
    try:
        import matplotlib.pyplot as plt
        from matplotlib.axes import Axes
    except ImportError:
        raise ImportError('fastboost.plot needs matplotlib: pip install "fastboost[plot]"') from None
    if ax is None:
        return plt.subplots(figsize=(6, 4))[1]
    if not isinstance(ax, Axes):
        raise TypeError(f"ax must be a matplotlib Axes or None, got {type(ax).__name__}.")
    return ax


def _fitted(model):
    if not hasattr(model, "rounds_") and not hasattr(model, "estimators_") and not hasattr(model, "get_params"):
        raise TypeError(f"expected a fitted fastboost estimator, got {type(model).__name__}.")
    check_is_fitted(model)
    return model


def _binary_models(model):
    """[(label, binary model)]: the model itself, or each class's model of a one-vs-rest fit."""
    if hasattr(model, "estimators_"):
        return [(str(c), m) for c, m in zip(model.classes_, model.estimators_)]
    return [(None, model)]


def plot_cost(model, ax=None):
    """The algorithm's cost after each round (round 0: before boosting), log10 scale, as in the VadaBoost
    paper's Figure 2. The costs are drawn from their logarithms (``rounds_["log_cost"]``), which do not
    underflow after many rounds. One line per class for one-vs-rest models."""
    _fitted(model)
    ax = _axes(ax)
    for label, m in _binary_models(model):
        with np.errstate(divide="ignore"):
            log_cost = np.r_[np.log(m.initial_cost_), m.rounds_["log_cost"]]
        ax.plot(np.arange(log_cost.shape[0]), log_cost / np.log(10.0), label=label)
    ax.set_xlabel("round")
    ax.set_ylabel("cost (log10)")
    ax.set_title(f"{type(model).__name__}: cost per round")
    if hasattr(model, "estimators_"):
        ax.legend(title="class")
    return ax


def normalized_margins(model, X, y):
    """Normalised margins in [-1, 1] of labelled rows.

    Two classes: y F(x) / sum |alpha| (y = +1 for ``classes_[1]``). SAMME: the share of the steps voting
    for the true class minus the largest share of another class. One-vs-rest: half the true class's
    normalised margin F_k / sum |alpha_k| minus the largest other one.
    """
    _fitted(model)
    y = np.asarray(y)
    classes = model.classes_
    idx = np.searchsorted(classes, y)
    if np.any(idx >= classes.shape[0]) or np.any(classes[np.minimum(idx, classes.shape[0] - 1)] != y):
        raise ValueError("y holds labels that are not among the model's classes_.")
    if hasattr(model, "estimators_"):
        f = np.column_stack([m.decision_function(X) / np.abs(m.rounds_["alpha"]).sum() for m in model.estimators_])
        return _true_minus_other(f, idx) / 2.0
    s = model.decision_function(X)
    if s.ndim == 1:
        return np.where(idx == 1, 1.0, -1.0) * s / np.abs(model.rounds_["alpha"]).sum()
    k = s.shape[1]
    return (k - 1) / k * _true_minus_other(s, idx)  # symmetric scores -> shares of the steps


def _true_minus_other(scores, idx):
    rows = np.arange(scores.shape[0])
    true = scores[rows, idx]
    other = scores.copy()
    other[rows, idx] = -np.inf
    return true - other.max(axis=1)


def plot_margins(model, X, y, X_test=None, y_test=None, ax=None):
    """Cumulative distribution of the normalised margins (see :func:`normalized_margins`) of the training
    rows and, if given, the test rows, as in Schapire, Freund, Bartlett & Lee (1998)."""
    _fitted(model)
    ax = _axes(ax)
    sets = [("training", X, y)] + ([("test", X_test, y_test)] if X_test is not None else [])
    for name, Xs, ys in sets:
        m = np.sort(normalized_margins(model, Xs, ys))
        ax.step(m, np.arange(1, m.shape[0] + 1) / m.shape[0], where="post", label=name)
    ax.set_xlim(-1.0, 1.0)
    ax.set_ylim(0.0, 1.0)
    ax.set_xlabel("normalised margin")
    ax.set_ylabel("cumulative fraction of rows")
    ax.set_title(f"{type(model).__name__}: margin distribution")
    ax.legend()
    return ax


def plot_validation(model, X=None, y=None, ax=None):
    """Validation error per round (a model fitted with a validation set) and, with X and y, the training
    error of the ensemble per round (from ``staged_predict``), with the kept round marked."""
    _fitted(model)
    if hasattr(model, "estimators_"):
        raise ValueError("plot_validation draws single models; a one-vs-rest model has one per class "
                         "(plot model.estimators_[k]).")
    val = getattr(model, "validation_errors_", None)
    if val is None and X is None:
        raise ValueError("the model was fitted without a validation set: pass X and y to draw the training error, "
                         "or fit with eval_set or validation_fraction.")
    ax = _axes(ax)
    if val is not None:
        ax.plot(np.arange(1, val.shape[0] + 1), 100.0 * val, label="validation")
    if X is not None:
        if y is None:
            raise ValueError("pass y with X.")
        y = np.asarray(y)
        err = [100.0 * np.mean(p != y) for p in model.staged_predict(X)]
        ax.plot(np.arange(1, len(err) + 1), err, label="training")
    ax.axvline(model.n_estimators_, color="grey", linestyle="--", label=f"kept: {model.n_estimators_} rounds")
    ax.set_xlabel("round")
    ax.set_ylabel("error (%)")
    ax.set_title(f"{type(model).__name__}: error per round")
    ax.legend()
    return ax


def plot_importance(model, feature_names=None, max_features=20, ax=None):
    """Horizontal bars of ``feature_importances_``, largest on top (at most ``max_features``)."""
    _fitted(model)
    if isinstance(max_features, bool) or not isinstance(max_features, numbers.Integral) or max_features < 1:
        raise ValueError(f"max_features must be an int >= 1, got {max_features!r}.")
    imp = model.feature_importances_
    if feature_names is None:
        feature_names = getattr(model, "feature_names_in_", None)
    if feature_names is None:
        feature_names = [f"x{j}" for j in range(imp.shape[0])]
    names = [str(n) for n in feature_names]
    if len(names) != imp.shape[0]:
        raise ValueError(f"feature_names has {len(names)} names for {imp.shape[0]} features.")
    order = np.argsort(-imp, kind="stable")[:max_features]
    ax = _axes(ax)
    ax.barh(np.arange(order.shape[0])[::-1], imp[order], tick_label=[names[j] for j in order])
    ax.set_xlabel("importance")
    ax.set_title(f"{type(model).__name__}: feature importances")
    return ax
