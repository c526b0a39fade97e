"""Input checks shared by the estimators: clear errors before any kernel runs."""
import math
import numbers
import os

import numpy as np

_ALLOWED_KINDS = "biuf"  # bool, signed/unsigned int, float


def is_dataframe(X):
    return hasattr(X, "iloc") and hasattr(X, "dtypes") and hasattr(X, "columns")


def as_pandas(X):
    """A polars DataFrame or an Arrow table or record batch as a pandas DataFrame, read as any data frame (its
    text and categorical columns by their types, its column names kept, as a Dataset reads it), else X."""
    if type(X).__module__.split(".")[0] in ("polars", "pyarrow") and hasattr(X, "to_pandas"):
        try:
            if type(X).__module__.startswith("polars"):
                X = X.to_arrow()
            return _decimals_as_float(X).to_pandas(types_mapper=_nullable_bool)
        except ImportError as e:
            raise TypeError(f"X is a {type(X).__name__}, read through pandas, which needs {e.name or 'pandas'}: "
                            f"pip install pandas pyarrow (or pass a NumPy array).") from None
    return X


def _decimals_as_float(table):
    """An Arrow table (or record batch) with its decimal columns as float64, numeric as a Dataset reads them
    (pandas makes them object columns of Decimal values, which would be categorical)."""
    import pyarrow as pa

    if not any(pa.types.is_decimal(t) for t in table.schema.types):
        return table
    if isinstance(table, pa.RecordBatch):
        table = pa.Table.from_batches([table])
    return table.cast(pa.schema([f.with_type(pa.float64()) if pa.types.is_decimal(f.type) else f
                                 for f in table.schema]))


def _nullable_bool(t):
    """Arrow boolean columns as pandas' nullable boolean ones: numeric, as a Dataset reads them (pandas makes a
    boolean column with a missing value an object column, which would be categorical)."""
    import pandas as pd
    import pyarrow as pa

    return pd.BooleanDtype() if pa.types.is_boolean(t) else None


def check_X(X, estimator_name, categorical=None, fitted=False):
    """Return X as a 2-D numeric array or DataFrame without copying float data.

    NumPy arrays (any order, memmaps included) and DataFrames of numeric columns
    pass through unchanged; lists and object arrays are converted once.
    categorical: bool[n_features] or None; those columns may hold strings (DataFrame columns of any
    dtype, object or string arrays), which ``fastboost._categorical.encode`` maps later. fitted: X is for a
    fitted model (prediction), whose categorical features are fixed.
    """
    has_cat = categorical is not None and bool(np.any(categorical))
    if isinstance(X, (str, bytes, os.PathLike)):
        if not fitted:  # fit reads parquet files through a Dataset
            raise TypeError(f"{estimator_name}: X is {os.fspath(X)!r}, a path or text, not an array: to fit parquet "
                            "files, pass fastboost.Dataset.from_parquet(path, target=...).")
        raise TypeError(f"{estimator_name}: X is {os.fspath(X)!r}, a path or text, not an array: a path must name "
                        "parquet files (a .parquet or .pq file, a directory or a glob pattern) that exist.")
    if hasattr(X, "toarray") or type(X).__module__.startswith("scipy.sparse"):
        raise TypeError(
            f"{estimator_name} does not accept sparse input: pass a dense NumPy array or DataFrame "
            "(for example X.toarray())."
        )
    if is_dataframe(X):
        bad = [str(c) for f, (c, dt) in enumerate(zip(X.columns, X.dtypes))
               if not _numeric_dtype(dt) and not (has_cat and f < len(categorical) and categorical[f])]
        if bad and fitted:
            raise TypeError(f"X must contain only numeric columns besides the categorical ones; non-numeric "
                            f"columns: {bad[:10]}. The model was fitted with them as numeric features: pass numbers "
                            "(bool, int or float, NaN where a value is missing; a bool column with a missing value "
                            "is an object column: cast it to float).")
        if bad:
            raise TypeError(f"X must contain only numeric columns besides the categorical ones; non-numeric "
                            f"columns: {bad[:10]}. Name them in categorical_features (the default, "
                            "\"from_dtype\", takes category, string and object columns).")
        shape = X.shape
    else:
        if not isinstance(X, np.ndarray):
            X = np.asarray(X)
        if X.dtype.kind == "c":
            raise ValueError("Complex data not supported: X must be real-valued.")
        if X.dtype.kind in "OUS" and has_cat and X.ndim == 2:
            pass  # mixed columns: encoded column by column
        elif X.dtype.kind == "O":
            X = X.astype(np.float64)  # TypeError / ValueError from NumPy names the bad element
        elif X.dtype.kind not in _ALLOWED_KINDS:
            raise TypeError(f"X must be numeric (bool, int or float), got dtype {X.dtype}.")
        shape = X.shape
    if len(shape) != 2:
        raise ValueError(
            f"Expected 2D array, got {len(shape)}D array instead (shape={shape}). "
            "Reshape your data either using array.reshape(-1, 1) if your data has a single feature "
            "or array.reshape(1, -1) if it contains a single sample."
        )
    if shape[0] == 0:
        raise ValueError(f"Found array with 0 sample(s) (shape={shape}) while a minimum of 1 is required.")
    if shape[1] == 0:
        raise ValueError(f"Found array with 0 feature(s) (shape={shape}) while a minimum of 1 is required.")
    return X


def _numeric_dtype(dt):
    kind = getattr(dt, "kind", None)
    if kind is None:  # pandas extension dtype
        return getattr(dt, "_is_numeric", False) or getattr(dt, "_is_boolean", False)
    return kind in _ALLOWED_KINDS


def as_float_array(X):
    """X as a C-contiguous float32/float64 array for the prediction kernels, read-only (``read_only``)."""
    if is_dataframe(X):
        return read_only(np.ascontiguousarray(X.to_numpy(dtype=np.float64, na_value=np.nan)))
    if X.dtype not in (np.float32, np.float64):
        X = X.astype(np.float64)
    return read_only(np.ascontiguousarray(X))


def read_only(X):
    """A read-only view of array X (X keeps its own flags). The prediction kernels always get read-only rows, so
    each is compiled once per float type, whether the caller's array was writable or, say, a read-only memmap."""
    view = X.view(np.ndarray)
    view.flags.writeable = False
    return view


def check_eval_set_form(eval_set):
    """TypeError for a list of validation sets (LightGBM's and XGBoost's ``[(X_val, y_val), ...]``): eval_set is one
    set, and the list of two would otherwise be read as X_val = its first pair."""
    if isinstance(eval_set, (tuple, list)) and eval_set and all(
            isinstance(part, (tuple, list)) and len(part) in (2, 3) and getattr(part[0], "ndim", None) == 2
            for part in eval_set):
        raise TypeError(f"eval_set is one validation set, a tuple (X_val, y_val) or (X_val, y_val, "
                        f"sample_weight_val); got a list of {len(eval_set)} such tuples: pass one of them.")


def check_y(y, n_samples, estimator_name="This estimator"):
    """y as a 1-D array of labels; NaN/inf and length mismatches rejected."""
    from sklearn.utils.multiclass import check_classification_targets
    from sklearn.utils.validation import column_or_1d

    if y is None:
        raise ValueError(f"{estimator_name} requires y to be passed, but the target y is None.")
    if not (type(y) is np.ndarray and y.ndim == 1 and y.flags.c_contiguous and y.dtype.kind in "biufUS"):
        y = column_or_1d(y, warn=True)  # (a plain 1-D array would come back as it is: 0.1 ms of a small fit saved)
    if y.shape[0] != n_samples:
        raise ValueError(f"X and y have inconsistent numbers of samples: X has {n_samples}, y has {y.shape[0]}.")
    if y.dtype.kind == "f" and not np.all(np.isfinite(y)):
        raise ValueError("y contains NaN or infinity: every label must be a finite value or a class name.")
    if y.dtype.kind == "O":  # (one pass over the labels)
        first_str = first_other = None
        for i, label in enumerate(y):
            if type(label) is str:  # (the common case, quickly)
                if first_str is None:
                    first_str = i
                continue
            if isinstance(label, str):  # (a str subclass: numpy.str_)
                first_str = i if first_str is None else first_str
                continue
            if first_other is None:
                first_other = i
            if isinstance(label, float) and not math.isfinite(label):
                raise ValueError("y contains NaN or infinity: every label must be a finite value or a class name.")
            if label is None or type(label).__name__ in ("NAType", "NaTType"):
                raise ValueError(f"y has a missing label ({label!r}) at row {i}: every label must be a class name or "
                                 "a finite value.")
        if first_str is not None and first_other is not None:  # (sorting the classes would compare them)
            a, b = sorted((first_str, first_other))
            raise TypeError(f"y mixes strings and other labels (row {a}: {y[a]!r}, row {b}: {y[b]!r}): give every "
                            "label as a string, or every one as a number.")
    if y.dtype.kind not in "biuUS":  # (1-D integer, boolean or string labels are always classes: skip the scan)
        check_classification_targets(y)
    return y


#: the widest range of integer labels whose classes are found by counting (a count array of this many entries)
COUNTED_LABELS = 1 << 16


def classes_and_indices(y):
    """``np.unique(y, return_inverse=True)``: the sorted classes (y's dtype) and each label's index among them
    (intp). Integer and boolean labels spanning at most COUNTED_LABELS values are counted instead of sorted
    (NumPy's sort of 10 000 labels took from 0.1 to 1 ms, depending on their order); the same arrays."""
    if y.ndim == 1 and y.size and y.dtype.kind in "biu":
        lo, hi = int(y.min()), int(y.max())
        if hi - lo < COUNTED_LABELS and hi <= np.iinfo(np.intp).max:  # (uint64 labels past intp: sorted)
            offset = y.astype(np.intp) - lo
            present = np.bincount(offset, minlength=hi - lo + 1) > 0
            classes = (np.flatnonzero(present) + lo).astype(y.dtype)
            index = np.cumsum(present, dtype=np.intp) - 1
            return classes, index[offset]
    return np.unique(y, return_inverse=True)


def check_sample_weight(sample_weight, n_samples):
    """Non-negative finite float64 weights with a positive sum, shape (n_samples,)."""
    if sample_weight is None:
        return np.ones(n_samples, dtype=np.float64)
    if isinstance(sample_weight, numbers.Number):
        sample_weight = np.full(n_samples, sample_weight, dtype=np.float64)
    sw = np.asarray(sample_weight)
    if sw.dtype.kind not in "biuf":
        raise TypeError(f"sample_weight must be numeric, got dtype {sw.dtype}.")
    sw = sw.astype(np.float64)
    if sw.ndim != 1 or sw.shape[0] != n_samples:
        raise ValueError(f"sample_weight.shape == {sw.shape}, expected ({n_samples},).")
    if not np.all(np.isfinite(sw)):
        raise ValueError("sample_weight contains NaN or infinity.")
    if np.any(sw < 0):
        raise ValueError("sample_weight must be non-negative; negative weights found.")
    if not np.any(sw > 0):
        raise ValueError("sample_weight sums to zero: at least one sample needs a positive weight.")
    return sw


def as_distribution(sw):
    """sw / sum(sw) without overflow (weights near the float64 maximum) or underflow to all zeros."""
    p = sw / sw.max()
    return p / p.sum()


def check_n_jobs(name, value):
    """joblib's n_jobs: None (all cores), an int >= 1, or a negative int (-1: all, -2: all but one, ...); a
    TypeError or ValueError naming ``name`` otherwise (the parameter's check, and the thread count's at predict)."""
    if value is None:
        return
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int other than 0, or None, got {plain(value)} of type "
                        f"{type(value).__name__}.")
    if value == 0:
        raise ValueError(f"{name} must be an int >= 1, a negative int (-1: all cores, -2: all but one, as in "
                         f"joblib) or None (all cores), got {value}.")


def plain(value):
    """How a value reads in an error message: NumPy scalars as plain Python values (``0``, not
    ``np.int64(0)``), strings quoted."""
    if isinstance(value, np.generic):
        value = value.item()
    return repr(value)


def check_int(value, name, low, high=None):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int, got {plain(value)} of type {type(value).__name__}.")
    if value < low or (high is not None and value > high):
        rng = f"[{low}, {high}]" if high is not None else f">= {low}"
        raise ValueError(f"{name} must be in {rng}, got {value}.")


def check_real(value, name, low, high):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {plain(value)} of type {type(value).__name__}.")
    if not (low <= value <= high):
        raise ValueError(f"{name} must be in [{low}, {high}], got {value}.")
