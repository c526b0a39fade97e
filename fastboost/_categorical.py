"""Categorical features: which columns they are, their categories, and X with category indices.

A categorical column's categories are its distinct non-missing values in the training data
(strings, or numbers), sorted; the kernels see the column as the index of each row's category
(NaN for a missing value or a category not seen in training), and a split sends a set of
categories left. Everything here runs before binning and before prediction; nothing here
is compiled.
"""
import numbers

import numpy as np

from ._types import MAX_BINS
from ._validation import is_dataframe, plain

FROM_DTYPE = "from_dtype"


def _is_categorical_dtype(dt):
    """pandas ``category``, ``object`` and string columns are categorical under "from_dtype"."""
    if getattr(dt, "name", None) == "category":
        return True
    kind = getattr(dt, "kind", None)
    return kind in ("O", "U", "S") or getattr(dt, "name", "").startswith("str")


def resolve(categorical_features, X, feature_names=None):
    """bool[n_features]: which columns of X are categorical, from the ``categorical_features`` parameter.

    "from_dtype": a DataFrame's ``category``, string and object columns (none for arrays); None: none;
    a boolean mask of length n_features; integer indices; or column names (X must have names).
    """
    d = X.shape[1]
    mask = np.zeros(d, dtype=bool)
    if categorical_features is None:
        return mask
    if isinstance(categorical_features, str):
        if categorical_features != FROM_DTYPE:
            raise ValueError(f"categorical_features must be \"from_dtype\", None, a boolean mask, indices or "
                             f"feature names, got {categorical_features!r}.")
        if is_dataframe(X):
            mask[:] = [_is_categorical_dtype(dt) for dt in X.dtypes]
        return mask
    values = np.asarray(categorical_features)
    if values.ndim != 1:
        raise ValueError(f"categorical_features must be 1-D (a mask, indices or names), got shape {values.shape}.")
    if values.size == 0:
        return mask
    if values.dtype.kind == "b":
        if values.shape[0] != d:
            raise ValueError(f"categorical_features as a boolean mask must have length n_features={d}, got "
                             f"{values.shape[0]}.")
        return values.copy()
    if values.dtype.kind in "iu":
        bad = values[(values < -d) | (values >= d)]
        if bad.size:
            raise ValueError(f"categorical_features holds index {plain(bad[0])}, out of range for {d} features.")
        mask[values] = True
        return mask
    if values.dtype.kind in "UO" and all(isinstance(c, str) for c in values.tolist()):
        names = [str(c) for c in X.columns] if is_dataframe(X) else feature_names
        if names is None:
            raise ValueError("categorical_features names columns, but X has no column names: pass a DataFrame or "
                             "give indices or a boolean mask.")
        index = {n: i for i, n in enumerate(names)}
        unknown = [c for c in values.tolist() if c not in index]
        if unknown:
            raise ValueError(f"categorical_features names columns not in X: {unknown[:5]}.")
        mask[[index[c] for c in values.tolist()]] = True
        return mask
    raise TypeError(f"categorical_features must be \"from_dtype\", None, a boolean mask, integer indices or "
                    f"feature names, got an array of dtype {values.dtype}.")


def _column(X, f):
    return X.iloc[:, f] if is_dataframe(X) else X[:, f]


def _missing(values):
    """Which entries of a 1-D object or numeric array are missing (None, NaN, pandas NA)."""
    if values.dtype.kind == "f":
        return np.isnan(values)
    if values.dtype.kind in "iub":
        return np.zeros(values.shape, bool)
    try:
        import pandas as pd

        return np.asarray(pd.isna(values), dtype=bool)
    except ImportError:
        return np.array([v is None or (isinstance(v, float) and v != v) for v in values], dtype=bool)


def _raw_values(col):
    """A column's values as a NumPy array (object for strings, float64 for numbers)."""
    if hasattr(col, "to_numpy"):
        dt = col.dtype
        if getattr(dt, "name", None) == "category":
            cats = col.cat.categories
            codes = col.cat.codes.to_numpy()
            out = np.empty(codes.shape[0], dtype=object)
            out[:] = None
            taken = codes >= 0
            out[taken] = np.asarray(cats, dtype=object)[codes[taken]]
            return out
        if getattr(dt, "kind", None) in "iufb":
            return col.to_numpy(dtype=np.float64)
        return col.to_numpy(dtype=object, na_value=None)
    col = np.asarray(col)
    if col.dtype.kind in "iufb":
        return col.astype(np.float64)
    return col.astype(object)


#: the values a numeric category may be (NumPy's bools count, as a bool column's)
_NUMBERS = (numbers.Real, np.bool_)


def _sorted_categories(values, name):
    """The sorted distinct categories of non-missing values; strings and numbers cannot mix."""
    present = values[~_missing(values)]
    if present.dtype.kind == "f":
        return np.unique(present)
    items = present.tolist()
    strings = [isinstance(v, str) for v in items]
    if all(strings):
        cats = sorted(set(items))
        if any(c.endswith("\x00") for c in cats):  # (NumPy's strings drop trailing NULs: "a\x00" would be "a")
            raise ValueError(f"categorical feature {name} has a category ending with a NUL character; categories "
                             "are kept as NumPy strings, which drop it.")
        return np.array(cats, dtype=np.str_) if items else np.array([], dtype=np.str_)
    if any(strings):
        raise TypeError(f"categorical feature {name} mixes strings and numbers; give it one type.")
    odd = sorted({type(v).__name__ for v in items if not isinstance(v, _NUMBERS)})
    if odd:  # (NumPy would read a tuple as several numbers, and b"1" as 1)
        kinds = sorted({type(v).__name__ for v in items})
        raise TypeError(f"categorical feature {name} holds values of types {kinds}; categories must be strings "
                        "or numbers.")
    return np.unique(np.asarray(items, dtype=np.float64))


def feature_name(X, f, feature_names=None):
    if is_dataframe(X):
        return repr(str(X.columns[f]))
    if feature_names is not None:
        return repr(str(feature_names[f]))
    return f"{f}"


def fit(X, mask, max_bins):
    """Per feature, the sorted categories (None for numeric features); ValueError above max_bins (at most
    MAX_BINS, also in exact mode: a split's set of categories is a 256-bit set) of them."""
    limit = MAX_BINS if max_bins is None else min(max_bins, MAX_BINS)
    categories = [None] * X.shape[1]
    for f in np.flatnonzero(mask):
        name = feature_name(X, f)
        cats = _sorted_categories(_raw_values(_column(X, f)), name)
        if cats.shape[0] > limit:
            if max_bins is not None and max_bins < MAX_BINS:
                raise ValueError(f"categorical feature {name} has {cats.shape[0]} categories; at most max_bins="
                                 f"{max_bins} are supported. Merge rare categories, raise max_bins (up to "
                                 f"{MAX_BINS}), or treat the feature as numeric.")
            raise ValueError(f"categorical feature {name} has {cats.shape[0]} categories; a categorical feature has "
                             f"at most {MAX_BINS} (a split's set of categories is a {MAX_BINS + 1}-bit set, whatever "
                             "max_bins is). Merge rare categories or treat the feature as numeric.")
        categories[f] = cats
    return categories


def indices(values, cats, unknown=None):
    """float64 category indices of raw values in the sorted categories; NaN for missing or unknown ones.
    unknown: None, or a bool array of len(values) set True where a value is present but not a category."""
    out = np.full(values.shape[0], np.nan)
    present = ~_missing(values)
    if unknown is not None:
        unknown[:] = present
    if cats.shape[0] == 0:
        return out
    if cats.dtype.kind == "U":
        vals = values[present]
        is_str = np.array([isinstance(v, str) for v in vals.tolist()], dtype=bool)
        lookup = np.full(vals.shape[0], np.nan)
        if is_str.any():
            s = vals[is_str].astype(np.str_)
            pos = np.minimum(np.searchsorted(cats, s), cats.shape[0] - 1)
            lookup[is_str] = np.where(cats[pos] == s, pos, np.nan)
        out[present] = lookup
        if unknown is not None:
            unknown &= np.isnan(out)
        return out
    vals = values[present]
    if vals.dtype.kind in "iufb":
        vals = vals.astype(np.float64)
    else:  # strings where numbers were fitted are unknown categories, even "2" (whatever else the batch holds)
        vals = np.array([v if isinstance(v, _NUMBERS) else np.nan for v in vals.tolist()],
                        dtype=np.float64)
    pos = np.minimum(np.searchsorted(cats, vals), cats.shape[0] - 1)
    out[present] = np.where(cats[pos] == vals, pos, np.nan)
    if unknown is not None:
        unknown &= np.isnan(out)
    return out


def fitted_indices(values, cats, name):
    """``indices`` of a column to predict; TypeError when the feature was fitted on strings and holds numbers
    (none would match: every row would read as missing). name: the feature as an error message names it."""
    more = ", ..." if cats.shape[0] > 4 else ""
    numbers_only = values.dtype.kind in "iufb" and not np.isnan(values.astype(np.float64)).all()
    if cats.dtype.kind == "U" and values.dtype.kind == "O":  # (an object column, a Categorical of numbers)
        present = values[~_missing(values)].tolist()
        numbers_only = bool(present) and not any(isinstance(x, str) for x in present)
    if cats.dtype.kind == "U" and numbers_only:
        shown = ", ".join(repr(str(c)) for c in cats[:4])
        raise TypeError(f"categorical feature {name} was fitted on strings ({shown}{more}) but holds numbers here, "
                        "which match none of them; give it as text (X[column].astype(str), say).")
    if cats.dtype.kind == "f" and values.dtype.kind in "OU":
        present = values[~_missing(values)].tolist()
        if present and all(isinstance(x, str) for x in present):
            shown = ", ".join(f"{c:g}" for c in cats[:4])
            raise TypeError(f"categorical feature {name} was fitted on numbers ({shown}{more}) but holds strings here, "
                            "which match none of them; give it as numbers (X[column].astype(float), say).")
    return indices(values, cats)


def encode(X, categories):
    """X as float64 [n_samples, n_features], C-ordered, with category indices in the categorical columns."""
    n, d = X.shape
    out = np.empty((n, d), dtype=np.float64)
    for f in range(d):
        col = _column(X, f)
        if categories[f] is not None:
            out[:, f] = fitted_indices(_raw_values(col), categories[f], feature_name(X, f))
            continue
        try:
            if hasattr(col, "to_numpy"):
                out[:, f] = col.to_numpy(dtype=np.float64, na_value=np.nan)
            else:
                out[:, f] = np.asarray(col, dtype=np.float64)
        except (TypeError, ValueError) as e:
            raise ValueError(f"feature {feature_name(X, f)} is not numeric ({e}); declare it in "
                             "categorical_features to treat it as categories.") from None
    return out
