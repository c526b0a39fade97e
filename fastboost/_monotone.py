"""``monotone_constraints``: the parameter as the user gives it, checked and resolved to one direction per feature.

A constraint is +1 (the decision function must not decrease as the feature grows, the others fixed), -1 (must
not increase) or 0 (none), given as a sequence with one entry per feature or as a dict {feature name: direction}
(names as in ``feature_names_in_``; unnamed features are unconstrained). Categorical features have no order and
cannot be constrained. The learners read the result, ``int8[n_features]`` (``_types.Monotone``); see
docs/monotone.md for what the constraint guarantees.
"""
import numbers

import numpy as np

from ._validation import plain

_WHAT = ("monotone_constraints must be None, a sequence of -1, 0 and 1 (one per feature) or a dict "
         "{feature name: -1, 0 or 1}")


def _direction(value, where):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral) or value not in (-1, 0, 1):
        raise ValueError(f"monotone_constraints: {where} has {plain(value)}; each constraint must be -1 "
                         "(decreasing), 0 (none) or 1 (increasing).")
    return int(value)


def check(constraints):
    """The parameter's type and values, without the data (a TypeError or ValueError naming what is wrong)."""
    if constraints is None:
        return
    if isinstance(constraints, dict):
        for name, value in constraints.items():
            if not isinstance(name, str):
                raise TypeError(f"{_WHAT}; the dict has the key {plain(name)} of type {type(name).__name__}.")
            _direction(value, f"feature {name!r}")
        return
    if isinstance(constraints, (str, bytes, set, numbers.Number)) or not hasattr(constraints, "__len__"):
        raise TypeError(f"{_WHAT}; got {plain(constraints)} of type {type(constraints).__name__}.")
    values = list(constraints.tolist() if isinstance(constraints, np.ndarray) else constraints)
    for f, value in enumerate(values):
        if isinstance(value, (np.integer, np.floating)):
            value = value.item()
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        _direction(value, f"feature {f}")


def resolve(constraints, n_features, feature_names=None, categorical=None):
    """int8[n_features] of -1 / 0 / +1, or None when no feature is constrained.

    feature_names: the fitted feature names (``feature_names_in_``) or None; categorical: bool[n_features] or
    None. A ValueError for a sequence of the wrong length, a dict naming unknown features (or any, without
    feature names), and a constraint on a categorical feature.
    """
    check(constraints)
    if constraints is None:
        return None
    direction = np.zeros(n_features, np.int8)
    if isinstance(constraints, dict):
        if constraints and feature_names is None:
            raise ValueError("monotone_constraints as a dict names features, but X has no feature names: pass a "
                             "DataFrame, or give one constraint per feature as a list.")
        index = {str(name): f for f, name in enumerate(feature_names if feature_names is not None else ())}
        unknown = [name for name in constraints if name not in index]
        if unknown:
            raise ValueError(f"monotone_constraints names features not in X: {unknown[:5]}.")
        for name, value in constraints.items():
            direction[index[name]] = int(value)
    else:
        values = np.asarray(constraints, dtype=np.float64).ravel() if len(constraints) else np.zeros(0)
        if values.shape[0] != n_features:
            raise ValueError(f"monotone_constraints has {values.shape[0]} entries, but X has {n_features} features: "
                             "give one per feature (0 for none), or a dict by feature name.")
        direction[:] = values.astype(np.int8)
    if categorical is not None:
        bad = np.flatnonzero(np.asarray(categorical, dtype=bool) & (direction != 0))
        if bad.size:
            f = int(bad[0])
            name = f"feature {f}" + (f" ({feature_names[f]!r})" if feature_names is not None else "")
            raise ValueError(f"monotone_constraints: {name} is categorical; categories have no order, so it "
                             "cannot have a monotone constraint (set it to 0).")
    return direction if direction.any() else None
