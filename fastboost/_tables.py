"""Reading data files for the command line: CSV, parquet (with pyarrow) and ``.npy``.

Every problem with a file (missing, unknown type, unknown column, a text column, a file that does
not parse) is a ``ValueError`` whose message names the file and the problem.
"""
from pathlib import Path

import numpy as np

SUFFIXES = (".csv", ".parquet", ".pq", ".npy")


def _pandas(path, what):
    try:
        import pandas as pd
    except ImportError:
        raise ValueError(f"{path}: reading {what} needs pandas: pip install pandas") from None
    return pd


def read_table(path, target=None, text=()):
    """(X, y, feature names) from a data file; y is None without ``target``.

    X is a pandas DataFrame of the feature columns for CSV and parquet (a float array when pandas is
    missing, for CSV), the array without the target column for ``.npy``. ``target`` is a column name,
    or for ``.npy`` (and headerless use) a column index. ``text``: the names of CSV columns to read as text
    whatever they look like (categories fitted as strings: "10" stays "10" in a file without a letter in it).
    """
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"{path}: is a directory, not a data file")
    if not path.exists():
        raise ValueError(f"{path}: no such file")
    suffix = path.suffix.lower()
    if suffix not in SUFFIXES:
        raise ValueError(f"{path}: unknown file type {suffix or '(none)'}; use .csv, .parquet or .npy")
    if suffix == ".npy":
        return _read_npy(path, target)
    if suffix == ".csv":
        try:
            pd = _pandas(path, "CSV")
        except ValueError:
            return _read_csv_numpy(path, target)
        try:
            frame = pd.read_csv(path, dtype={str(c): str for c in text} or None)
        except (ValueError, OSError, UnicodeDecodeError, pd.errors.ParserError) as e:
            raise ValueError(f"{path}: not a readable CSV file ({e})".replace("\n", " ")) from None
    else:
        pd = _pandas(path, "parquet")
        try:
            frame = pd.read_parquet(path)
        except ImportError:
            raise ValueError(f"{path}: reading parquet needs pyarrow: pip install pyarrow") from None
        except (ValueError, OSError) as e:
            raise ValueError(f"{path}: not a readable parquet file ({e})".replace("\n", " ")) from None
    return _split_frame(path, frame, target)


def _column(path, columns, target):
    """The name of the target column (a name, or an index given as text or int)."""
    if target in columns:
        return target
    try:
        k = int(target)
    except (TypeError, ValueError):
        k = None
    if k is not None and -len(columns) <= k < len(columns):
        return columns[k]
    shown = ", ".join(map(str, columns[:20])) + (", ..." if len(columns) > 20 else "")
    raise ValueError(f"{path}: no column {target!r} (columns: {shown})")


def _split_frame(path, frame, target):
    columns = list(frame.columns)
    y = None
    if target is not None:
        name = _column(path, columns, target)
        y = frame[name].to_numpy()
        frame = frame.drop(columns=[name])
    if frame.shape[1] == 0:
        raise ValueError(f"{path}: no feature columns")
    if frame.shape[0] == 0:
        raise ValueError(f"{path}: no rows (only the column names)")
    for name in frame.columns:  # text columns are categorical features (the estimators' default)
        kind = frame[name].dtype.kind
        if kind not in "biufOSU" and str(frame[name].dtype) not in ("category", "string"):
            raise ValueError(f"{path}: column {name!r} has type {frame[name].dtype}; fastboost needs numeric or "
                             "text (categorical) columns")
        if kind == "O" or str(frame[name].dtype) == "string":
            _check_not_mistyped(path, name, frame[name])
    return frame, y, [str(c) for c in frame.columns]


#: a text column whose values are numbers but for fewer than this share of them (and fewer than MISTYPED_MAX
#: values) is a numeric column with a bad value, not a categorical one
MISTYPED_SHARE = 0.01
MISTYPED_MAX = 10


def _check_not_mistyped(path, name, column):
    """ValueError naming the first value that is not a number in a column of numbers but for a few values (a
    typo would otherwise make the whole column categorical, and the error come later, about its categories)."""
    import pandas as pd

    values = column.dropna()
    parsed = pd.to_numeric(values, errors="coerce")
    bad = parsed.isna().to_numpy()
    n_bad = int(bad.sum())
    if 0 < n_bad < min(MISTYPED_MAX, MISTYPED_SHARE * values.shape[0]):
        row = values.index[bad][0]
        raise ValueError(f"{path}: column {name!r} holds numbers but for {n_bad} value(s), the first "
                         f"{values[row]!r} in data row {row + 1}: correct it, or leave the cell empty for a missing "
                         "value")


def _read_csv_numpy(path, target):
    """CSV without pandas: a header line, then numeric columns (the target may hold text)."""
    try:
        table = np.genfromtxt(path, delimiter=",", names=True, dtype=None, encoding="utf-8")
    except (ValueError, OSError, UnicodeDecodeError) as e:
        raise ValueError(f"{path}: not a readable CSV file ({e})") from None
    names = list(table.dtype.names or ())
    y = None
    if target is not None:
        name = _column(path, names, target)
        y = table[name]
        names.remove(name)
    for name in names:
        if table.dtype[name].kind not in "biuf":
            raise ValueError(f"{path}: column {name!r} holds text; reading text columns as categories needs pandas")
    X = np.column_stack([table[n].astype(np.float64) for n in names]) if names else None
    if X is None:
        raise ValueError(f"{path}: no feature columns")
    return X, y, names


def _read_npy(path, target):
    try:
        a = np.load(path, allow_pickle=False)
    except (ValueError, OSError, EOFError) as e:
        raise ValueError(f"{path}: not a readable .npy array ({e})") from None
    if a.ndim != 2 or a.dtype.kind not in "biuf":
        raise ValueError(f"{path}: needs a 2-D numeric array; got shape {a.shape} of type {a.dtype}")
    names = [f"x{j}" for j in range(a.shape[1])]
    y = None
    if target is not None:
        name = _column(path, names, target)
        k = names.index(name)
        y = a[:, k]
        a = np.delete(a, k, axis=1)
        names.pop(k)
        if y.dtype.kind == "f" and np.all(y == np.round(y)):
            y = y.astype(np.int64)
    if a.shape[1] == 0:
        raise ValueError(f"{path}: no feature columns")
    return a, y, names
