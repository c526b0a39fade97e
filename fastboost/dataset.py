"""``fastboost.Dataset``: binned training data built from batches, never the whole raw table in memory.

A Dataset holds what a fit reads: the codes (feature-major, one byte a value; two in exact mode), the
labels, the weights, the bin edges and the categories. It is built in two passes over the rows:

1. every batch's labels and weights are kept; the binning sample (the rows ``BinMapper`` would draw from
   the same rows for the same ``random_state``: ``fastboost._binning.RowSample``) and the categories of
   the categorical columns are collected, one batch at a time; the bin edges come from the sample;
2. every batch is binned straight into a preallocated code matrix, in memory or (``codes_path=``) in a
   file on disk that ``Dataset.load`` opens again without binning.

So at most one batch of raw values is in memory (besides the sample, at most 200 000 rows), and a model
fitted on a Dataset is the model fitted on the same rows in memory, bit for bit.
"""
import contextlib
import fnmatch
import glob
import hashlib
import json
import os
import uuid
from pathlib import Path

import numpy as np

from . import _binning, _categorical
from . import _validation as v
from ._binning import BinMapper, RowSample, map_rows, sample_seed
from ._params import RandomState
from ._types import MAX_BINS, MAX_BINS_EXACT, Y_DTYPE

#: rows a batch holds when a Dataset reads an in-memory table or parquet files
BATCH_ROWS = 65_536
#: the codes file's format (its header and the sidecar record it; another version is refused)
FORMAT_VERSION = 1
_MAGIC = b"FBCODES\x00"
_ALIGN = 4096
_CHUNK_BYTES = 1 << 23
_STATE_BYTES_PER_ROW = 40  # labels, weights and a fit's per-row state, about


def _pyarrow(what):
    try:
        import pyarrow
    except ImportError:
        raise ImportError(f"{what} needs pyarrow: pip install 'fastboost[parquet]'") from None
    return pyarrow


def _is_arrow(X):
    return type(X).__module__.startswith("pyarrow") and hasattr(X, "schema") and hasattr(X, "column")


def _is_polars(X):
    return type(X).__module__.startswith("polars") and hasattr(X, "to_arrow")


# ---------------------------------------------------------------------------------------------- one batch
class _Frame:
    """One batch of feature columns, read column by column: ``numeric(f)`` as float64 (NaN missing),
    ``raw(f)`` as the values a categorical column's categories are made of."""

    names = None

    def dtype_names(self):
        raise NotImplementedError

    def text(self):
        """bool[d]: the columns ``categorical_features="from_dtype"`` takes (category, string, object)."""
        raise NotImplementedError


class _NumpyFrame(_Frame):
    def __init__(self, X):
        self.X = X
        self.n, self.d = X.shape

    def dtype_names(self):
        return [str(self.X.dtype)] * self.d

    def text(self):
        return np.zeros(self.d, bool)

    def numeric(self, f, start=0, stop=None):
        col = self.X[start:stop, f]
        try:
            return np.asarray(col, dtype=np.float64)
        except (TypeError, ValueError) as e:
            raise ValueError(f"feature {f} is not numeric ({e}); declare it in categorical_features to treat "
                             "it as categories.") from None

    def raw(self, f, start=0, stop=None):
        return _categorical._raw_values(self.X[start:stop, f])

    def select(self, names):
        return self


class _PandasFrame(_Frame):
    def __init__(self, X):
        self.X = X
        self.n, self.d = X.shape
        self.names = list(X.columns)

    def dtype_names(self):
        return [str(dt) for dt in self.X.dtypes]

    def text(self):
        return np.array([_categorical._is_categorical_dtype(dt) for dt in self.X.dtypes], dtype=bool)

    def numeric(self, f, start=0, stop=None):
        col = self.X.iloc[start:stop, f]
        try:
            return col.to_numpy(dtype=np.float64, na_value=np.nan)
        except (TypeError, ValueError) as e:
            raise ValueError(f"feature {self.names[f]!r} is not numeric ({e}); declare it in "
                             "categorical_features to treat it as categories.") from None

    def raw(self, f, start=0, stop=None):
        return _categorical._raw_values(self.X.iloc[start:stop, f])

    def select(self, names):
        return _PandasFrame(self.X[list(names)])


class _ArrowFrame(_Frame):
    def __init__(self, table):
        self.table = table
        self.n, self.d = table.num_rows, table.num_columns
        self.names = list(table.schema.names)

    def dtype_names(self):
        return [str(t) for t in self.table.schema.types]

    def text(self):
        import pyarrow as pa

        def is_text(t):
            return (pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_dictionary(t)
                    or str(t) == "string_view")

        return np.array([is_text(t) for t in self.table.schema.types], dtype=bool)

    def _col(self, f, start, stop):
        col = self.table.column(f)
        if start or stop is not None:
            stop = self.n if stop is None else stop
            col = col.slice(start, stop - start)
        return col

    def numeric(self, f, start=0, stop=None):
        import pyarrow as pa
        import pyarrow.compute as pc

        col = self._col(f, start, stop)
        t = col.type
        if not (pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_boolean(t)
                or pa.types.is_decimal(t) or pa.types.is_null(t)):
            raise ValueError(f"feature {self.names[f]!r} has type {t}, not numeric; declare it in "
                             "categorical_features to treat it as categories.")
        return np.asarray(pc.cast(col, pa.float64(), safe=False).to_numpy(zero_copy_only=False), dtype=np.float64)

    def raw(self, f, start=0, stop=None):
        import pyarrow as pa
        import pyarrow.compute as pc

        col = self._col(f, start, stop)
        if pa.types.is_dictionary(col.type):
            col = pc.cast(col, col.type.value_type)
        if pa.types.is_integer(col.type) or pa.types.is_floating(col.type) or pa.types.is_boolean(col.type):
            return np.asarray(pc.cast(col, pa.float64(), safe=False).to_numpy(zero_copy_only=False),
                              dtype=np.float64)
        return np.asarray(col.to_numpy(zero_copy_only=False), dtype=object)

    def select(self, names):
        return _ArrowFrame(self.table.select(list(names)))


def _frame(X, where):
    """A batch's features as a _Frame (NumPy, pandas, polars or Arrow)."""
    if _is_polars(X):
        X = X.to_arrow()
    if _is_arrow(X):
        return _ArrowFrame(X)
    if v.is_dataframe(X):
        return _PandasFrame(X)
    if hasattr(X, "toarray") or type(X).__module__.startswith("scipy.sparse"):
        raise TypeError(f"{where}: sparse features are not supported; pass dense batches.")
    X = np.asarray(X)
    if X.ndim != 2:
        raise ValueError(f"{where}: the features must be 2-D (rows x features), got shape {X.shape}.")
    if X.dtype.kind == "c":
        raise ValueError(f"{where}: complex features are not supported.")
    return _NumpyFrame(X)


def _vector(a, where, what):
    """A label or weight column of a batch as a 1-D NumPy array (Arrow, pandas, polars or NumPy)."""
    if a is None:
        return None
    if _is_polars(a) and hasattr(a, "to_numpy"):
        a = a.to_numpy()
    elif type(a).__module__.startswith("pyarrow"):
        a = a.to_numpy(zero_copy_only=False)
    elif hasattr(a, "to_numpy"):
        a = a.to_numpy()
    a = np.asarray(a)
    if a.ndim == 2 and a.shape[1] == 1:
        a = a[:, 0]
    if a.ndim != 1:
        raise ValueError(f"{where}: {what} must be 1-D, got shape {a.shape}.")
    return a


def _missing_labels(y):
    if y.dtype.kind == "f":
        return np.flatnonzero(~np.isfinite(y))
    if y.dtype.kind == "O":
        return np.flatnonzero([v is None or (isinstance(v, float) and not np.isfinite(v)) for v in y.tolist()])
    return np.empty(0, np.int64)


class _Batch:
    """One batch: its features (a _Frame), labels, weights (or None), and where it comes from."""

    __slots__ = ("frame", "y", "w", "where", "row_base")

    def __init__(self, frame, y, w, where, row_base=0):
        self.frame, self.y, self.w, self.where, self.row_base = frame, y, w, where, row_base

    def row(self, i):
        """How row i of the batch reads in an error message."""
        return f"{self.where}, row {self.row_base + int(i)}"


# ---------------------------------------------------------------------------------------------- sources
class _Source:
    """Where a Dataset's rows come from: ``batches()`` yields _Batch objects, afresh each call."""

    has_labels = True

    def describe(self):
        return None

    def changed(self):
        """What has changed since the rows were first read (None: nothing known to)."""
        return None


class _TableSource(_Source):
    """An in-memory table (NumPy, pandas, polars, Arrow) read in slices."""

    def __init__(self, X, y, w, batch_rows):
        if _is_polars(X):
            X = X.to_arrow()
        if isinstance(X, (str, bytes, os.PathLike)):
            raise TypeError(f"Dataset(data) takes a table in memory; {os.fspath(X)!r} is a path or text: for parquet "
                            "files use Dataset.from_parquet(path, target=...).")
        if X is None or np.ndim(X) != 2 and not (v.is_dataframe(X) or _is_arrow(X)):
            raise TypeError(f"Dataset(data) takes a 2-D table (a NumPy array, a pandas or polars DataFrame, an Arrow "
                            f"table); got {type(X).__name__}" + (f" of {np.ndim(X)} dimension(s)." if X is not None
                                                                  else "."))
        if isinstance(y, str) or isinstance(w, str):
            if not (v.is_dataframe(X) or _is_arrow(X)):
                raise ValueError("label and weight name columns only of a DataFrame or Arrow table.")
            cols = list(X.columns) if v.is_dataframe(X) else list(X.schema.names)
            for name in (y, w):
                if isinstance(name, str) and name not in cols:
                    raise ValueError(f"no column {name!r} in the data (columns: {cols[:20]}).")
            drop = [c for c in (y, w) if isinstance(c, str)]
            y = X[y] if isinstance(y, str) else y
            w = X[w] if isinstance(w, str) else w
            X = X.drop(columns=drop) if v.is_dataframe(X) else X.drop_columns(drop)
        if not (v.is_dataframe(X) or _is_arrow(X)):
            X = np.asarray(X) if not isinstance(X, np.ndarray) else X
        self.X = X
        self.n = X.num_rows if _is_arrow(X) else X.shape[0]
        self.y = None if y is None else _vector(y, "label", "the label")
        self.w = None if w is None else _vector(w, "weight", "the weight")
        self.has_labels = self.y is not None
        for a, what in ((self.y, "label"), (self.w, "weight")):
            if a is not None and a.shape[0] != self.n:
                raise ValueError(f"the data has {self.n} rows but {what} has {a.shape[0]}.")
        self.batch_rows = batch_rows

    def batches(self):
        X = self.X
        for start in range(0, max(self.n, 1), self.batch_rows):
            stop = min(self.n, start + self.batch_rows)
            if _is_arrow(X):
                part = X.slice(start, stop - start)
            elif v.is_dataframe(X):
                part = X.iloc[start:stop]
            else:
                part = X[start:stop]
            yield _Batch(_frame(part, "the data"), None if self.y is None else self.y[start:stop],
                         None if self.w is None else self.w[start:stop], "the data", start)


class _BatchSource(_Source):
    """``make_batches()``: a fresh iterator of (X, y) or (X, y, w) batches (or X alone, to predict)."""

    def __init__(self, make_batches, labelled=True):
        if not callable(make_batches):
            raise TypeError("from_batches needs a function that returns a fresh iterator of batches (it is "
                            "read twice), got " + type(make_batches).__name__ + ".")
        self.make_batches = make_batches
        self.has_labels = labelled

    def batches(self):
        it = self.make_batches()
        if it is None or not hasattr(it, "__iter__"):
            raise TypeError("make_batches() must return an iterator of (X, y) or (X, y, w) batches.")
        for i, item in enumerate(it):
            where = f"batch {i}"
            if isinstance(item, tuple):
                if len(item) not in ((2, 3) if self.has_labels else (1, 2, 3)):
                    raise ValueError(f"{where}: expected (X, y) or (X, y, w), got a tuple of {len(item)}.")
                X, y, w = (tuple(item) + (None, None))[:3]
            else:
                if self.has_labels:
                    raise ValueError(f"{where}: expected (X, y) or (X, y, w), got {type(item).__name__}.")
                X, y, w = item, None, None
            yield _Batch(_frame(X, where), _vector(y, where, "y"), _vector(w, where, "w"), where)


def parquet_files(path):
    """The parquet files of a path, a glob pattern, a directory (every file below it, hidden and
    underscore names skipped, as pyarrow does) or a list of these; sorted within each; ValueError when
    one does not exist or none is found. An existing path is taken as it is, even with ``*?[`` in its name; a
    pattern that matches only directories stands for the files below them."""
    if isinstance(path, (str, os.PathLike)):
        items = [path]
    elif isinstance(path, (list, tuple)) and all(isinstance(p, (str, os.PathLike)) for p in path):
        items = list(path)
    else:
        raise TypeError(f"a parquet path is a file, a directory or a glob pattern (str or os.PathLike), or a list "
                        f"of them; got {type(path).__name__}.")
    if not items:
        raise ValueError("no parquet path given.")
    files = []
    for item in items:
        text = os.fspath(item)
        p = Path(text)
        if p.is_dir():
            found = _directory_files(p)
            if not found:
                raise ValueError(f"{p}: the directory holds no files.")
            files += found
        elif p.exists():
            files.append(str(p))
        elif any(ch in text for ch in "*?["):
            found = sorted(glob.glob(text, recursive=True))
            matched = [f for f in found if os.path.isfile(f)]
            if not matched:  # directories only: the files below them (as a directory's reading, hidden and
                # underscore names skipped unless the pattern asks for them)
                asked = Path(text).name.startswith(("_", "."))
                matched = [f for d in found if os.path.isdir(d) and (asked or not Path(d).name.startswith(("_", ".")))
                           for f in _directory_files(Path(d))]
            if not matched:
                raise ValueError(f"{text}: no file matches this pattern" + (
                    " (it matches only directories without files)." if found else "."))
            files += matched
        else:
            raise ValueError(f"{p}: no such file or directory.")
    return files


def _directory_files(p):
    """The files below directory p, sorted, those with a hidden or underscore name at any level skipped."""
    return sorted(str(q) for q in p.rglob("*") if q.is_file()
                  and not any(part.startswith((".", "_")) for part in q.relative_to(p).parts))


def _same_file(a, b):
    """Whether paths a and b name one existing file."""
    return os.path.isfile(a) and os.path.isfile(b) and os.path.samefile(a, b)


def check_codes_path(codes_path, path, files, label=None, what="the codes"):
    """ValueError (naming codes_path as ``label``, by default ``codes_path=...``) when a codes file (or another
    output: ``what`` names it) at codes_path would replace one of the source ``files`` (those of ``path``, as
    ``parquet_files`` reads it), or would be among the files a later reading of ``path`` finds (inside a source
    directory, or matching a source pattern): that reading would take it for data."""
    label = label or f"codes_path={codes_path!r}"
    for f in files:
        if _same_file(codes_path, f):
            raise ValueError(f"{label} is the data file {f!r}: {what} would replace it; give another path.")
    target = Path(os.path.abspath(codes_path))
    items = [path] if isinstance(path, (str, os.PathLike)) else list(path)
    for item in items:
        text = os.fspath(item)
        if os.path.isdir(text):
            below = target.is_relative_to(Path(os.path.abspath(text)))
            inside = below and not any(part.startswith((".", "_"))
                                       for part in target.relative_to(os.path.abspath(text)).parts)
        else:
            pattern = os.path.abspath(text)
            inside = (any(ch in text for ch in "*?[") and len(Path(pattern).parts) == len(target.parts)
                      and fnmatch.fnmatch(str(target), pattern))
        if inside:
            raise ValueError(f"{label} is among the data files of {text!r}: the next reading of "
                             f"{text!r} would take {what} for data. Put it elsewhere, or start the file name "
                             "with '_' or '.' (such names are skipped).")


def _fragment_rows(frag):
    """A parquet file's rows, from its footer; ValueError naming it when it cannot be read."""
    try:
        return frag.metadata.num_rows
    except Exception as e:  # pyarrow's own errors (truncated, not parquet)
        raise ValueError(f"{frag.path}: not a readable parquet file ({e}).") from None


def _fragment_schema(frag):
    """A parquet file's schema; ValueError naming it when it cannot be read."""
    try:
        return frag.physical_schema
    except Exception as e:
        raise ValueError(f"{frag.path}: not a readable parquet file ({e}).") from None


class ParquetSource(_Source):
    """Parquet files read through ``pyarrow.dataset``, one record batch at a time."""

    def __init__(self, path, target, weight, columns, batch_rows):
        _pyarrow("from_parquet")
        import pyarrow.dataset as pads

        if target is not None and target == weight:
            raise ValueError(f"the target and the weight are one column, {target!r}; name another weight column.")
        if columns is not None:
            if isinstance(columns, (str, bytes)) or not hasattr(columns, "__iter__"):
                raise TypeError(f"columns must be a list of column names; got {columns!r}"
                                + (f" (one column: [{columns!r}])." if isinstance(columns, str) else "."))
            columns = list(columns)
            for what, name in (("target", target), ("weight", weight)):
                if name is not None and name in columns:
                    raise ValueError(f"columns lists the {what} column {name!r}; the features are the other "
                                     "columns.")
            twice = [c for i, c in enumerate(columns) if c in columns[:i]]
            if twice:
                raise ValueError(f"columns lists {twice[0]!r} twice.")
        self.path = path
        self.files = parquet_files(path)
        self.stamps = self._stamps()  # (a Dataset reading its rows again checks them: changed())
        self.target, self.weight, self.batch_rows = target, weight, batch_rows
        self.has_labels = target is not None
        try:
            self.dataset = pads.dataset(self.files, format="parquet")
        except Exception as e:  # pyarrow's own errors (not a parquet file, unreadable)
            raise ValueError(f"{_first_named(e, self.files)}: not a readable parquet file ({e}).") from None
        self.fragments = list(self.dataset.get_fragments())
        self.scan_options = pads.ParquetFragmentScanOptions(pre_buffer=False)
        # the column types of the first file with rows (an empty file's may be null placeholders)
        ref = next((frag for frag in self.fragments if _fragment_rows(frag)), self.fragments[0])
        schema = _fragment_schema(ref)
        self.schema = schema
        names = list(schema.names)
        first = ref.path
        self.first = first
        for what, name in (("target", target), ("weight", weight)):
            if name is not None and name not in names:
                raise ValueError(f"{first}: no {what} column {name!r} (columns: {names[:20]}).")
        if columns is None:
            columns = [c for c in names if c not in (target, weight)]
        else:
            columns = list(columns)
            missing = [c for c in columns if c not in names]
            if missing:
                raise ValueError(f"{first}: no column {missing[0]!r} (columns: {names[:20]}).")
        if not columns:
            raise ValueError(f"{first}: no feature columns.")
        self.columns = columns
        self.read = columns + [c for c in (target, weight) if c is not None]
        self.types = {name: schema.field(name).type for name in self.read}

    def _stamps(self):
        return [[f, os.path.getsize(f), os.path.getmtime(f)] for f in self.files]

    def describe(self):
        """The files as they were when this source first listed them (sizes and modification times)."""
        return {"parquet": self.files, "target": self.target, "weight": self.weight, "columns": self.columns,
                "batch_rows": self.batch_rows, "files": [list(f) for f in self.stamps]}

    def changed(self):
        """The first file whose size or modification time differs from the time the source listed it, or None."""
        for was in self.stamps:
            try:
                now = [was[0], os.path.getsize(was[0]), os.path.getmtime(was[0])]
            except OSError:
                return was[0]
            if now != was:
                return was[0]
        return None

    def check_fragment(self, frag):
        schema = _fragment_schema(frag)
        for name in self.read:
            if name not in schema.names:
                raise ValueError(f"{frag.path}: no column {name!r}, which the first file ({self.first}) has.")
            t = schema.field(name).type
            if t != self.types[name]:
                raise ValueError(f"{frag.path}: column {name!r} has type {t}; in the first file "
                                 f"({self.first}) it has type {self.types[name]}.")

    def n_rows(self):
        """Rows of every file, from the files' metadata."""
        return [_fragment_rows(frag) for frag in self.fragments]

    def batches(self):
        for frag in self.fragments:
            if _fragment_rows(frag) == 0:  # an empty file's types may be placeholders (null)
                continue
            self.check_fragment(frag)
            start = 0
            # no read-ahead and no pre-buffering (which would hold the whole file's column chunks): one batch of
            # raw values at a time, and one row group's compressed pages
            for rb in frag.to_batches(columns=self.read, batch_size=self.batch_rows, use_threads=False,
                                      batch_readahead=0, fragment_readahead=0,
                                      fragment_scan_options=self.scan_options):
                if rb.num_rows == 0:
                    continue
                y = rb.column(self.target).to_numpy(zero_copy_only=False) if self.has_labels else None
                w = rb.column(self.weight).to_numpy(zero_copy_only=False) if self.weight is not None else None
                yield _Batch(_ArrowFrame(rb.select(self.columns)), y, w, frag.path, start)
                start += rb.num_rows


def _first_named(error, files):
    text = str(error)
    for f in files:
        if f in text:
            return f
    return files[0] if len(files) == 1 else "parquet files"


# ---------------------------------------------------------------------------------------------- checks
def _names(frame):
    """A batch's column names as text (None without names)."""
    return None if frame.names is None else [str(c) for c in frame.names]


def _feature_names(frame):
    """A batch's column names as the estimators' ``feature_names_in_`` (None unless every name is text)."""
    names = frame.names
    return None if names is None or not all(isinstance(c, str) for c in names) else list(names)


def _check_schema(batch, first, names, dtypes, strict_dtypes):
    frame = batch.frame
    if frame.d != first.d or _names(frame) != names:
        got = frame.names if frame.names is not None else f"{frame.d} columns"
        want = names if names is not None else f"{first.d} columns"
        raise ValueError(f"{batch.where}: its feature columns ({got}) differ from the first batch's ({want}).")
    if strict_dtypes:
        for f, (a, b) in enumerate(zip(frame.dtype_names(), dtypes)):
            if a != b:
                col = repr(names[f]) if names is not None else str(f)
                raise ValueError(f"{batch.where}: column {col} has type {a}; in the first batch it has type {b}.")


@contextlib.contextmanager
def _naming(batch):
    """A ValueError about a batch's values names the batch (its file, for parquet) when it does not already."""
    try:
        yield
    except ValueError as e:
        if str(e).startswith(batch.where):
            raise
        raise ValueError(f"{batch.where}: {e}") from None


def _check_labels(batch, has_labels, has_weights, index):
    n = batch.frame.n
    if has_labels:
        if batch.y is None:
            raise ValueError(f"{batch.where}: has no labels.")
        if batch.y.shape[0] != n:
            raise ValueError(f"{batch.where}: {n} rows of features but {batch.y.shape[0]} labels.")
        bad = _missing_labels(batch.y)
        if bad.size:
            label = batch.y[bad[0]]
            what = "is missing (NaN or null)" if label is None or label != label else f"is {label} (not a class)"
            raise ValueError(f"{batch.row(bad[0])}: the target {what}; every row needs a label.")
    if has_weights != (batch.w is not None) and index > 0:
        raise ValueError(f"{batch.where}: {'has' if batch.w is not None else 'lacks'} weights, unlike the first "
                         "batch.")
    if batch.w is not None:
        w = batch.w
        if w.shape[0] != n:
            raise ValueError(f"{batch.where}: {n} rows of features but {w.shape[0]} weights.")
        if w.dtype.kind not in "biuf":
            bad = [i for i, x in enumerate(w.tolist()) if x is None]
            if bad:
                raise ValueError(f"{batch.row(bad[0])}: the weight is missing (null).")
            raise ValueError(f"{batch.where}: weights must be numeric, got dtype {w.dtype}.")
        w = w.astype(np.float64)
        bad = np.flatnonzero(~np.isfinite(w) | (w < 0))
        if bad.size:
            raise ValueError(f"{batch.row(bad[0])}: weight {v.plain(w[bad[0]])}; weights must be finite and "
                             "non-negative.")
        batch.w = w


def _check_memory(n, d, dtype):
    """MemoryError when the codes of n rows x d features and a fit's state would not fit in memory."""
    from ._driver import available_memory, format_bytes

    size = n * d * np.dtype(dtype).itemsize
    available = available_memory()
    if available is not None and size + n * _STATE_BYTES_PER_ROW > available:
        raise MemoryError(f"the codes of {n} rows x {d} features need {format_bytes(size)} (and a fit about "
                          f"{format_bytes(n * _STATE_BYTES_PER_ROW)} more), more than the {format_bytes(available)} "
                          "available: give codes_path= to keep the codes in a file on disk.")


def _digest(mapper, categories):
    """A digest of the bin edges and categories: the codes' meaning."""
    h = hashlib.sha256()
    for a in (mapper.thresholds_, mapper.n_edges_, mapper.n_value_bins_, mapper.categorical_):
        h.update(np.ascontiguousarray(a).tobytes())
    h.update(str(mapper.max_bins).encode())
    h.update(str(mapper.missing_code).encode())
    for c in categories:
        h.update(b"-" if c is None else repr(c.tolist()).encode())
    return h.hexdigest()


def _resolve_categorical(categorical_features, text, names):
    d = text.shape[0]
    if isinstance(categorical_features, str) and categorical_features == _categorical.FROM_DTYPE:
        return text.copy()
    return _categorical.resolve(categorical_features, np.empty((0, d)), feature_names=names)


# ---------------------------------------------------------------------------------------------- Dataset
class Dataset:
    """Binned training (or validation) data: codes, labels, weights, bin edges and categories.

    ``Dataset(data, label, weight)`` reads a NumPy array, a pandas or polars DataFrame or an Arrow table
    (``label`` and ``weight``: arrays, or names of the table's columns) in batches of ``batch_rows``;
    ``Dataset.from_batches`` and ``Dataset.from_parquet`` read batches that never are all in memory.

    max_bins, random_state, categorical_features: as the estimators' parameters; an estimator fitting the
    Dataset must have the same ones (its random_state may be None). reference: a Dataset to take the bin
    edges and categories from (a validation set for ``eval_set``). codes_path: keep the codes in this
    file (``np.memmap``) instead of in memory; ``Dataset.load(codes_path)`` opens it again.

    Attributes: ``codes`` (uint8, exact mode uint16, [n_features, n_rows]), ``label``, ``weight`` (None:
    all 1), ``mapper`` (the BinMapper), ``categories`` (per feature, None for numeric ones),
    ``feature_names`` (None without column names), ``n_rows``, ``n_features``.
    """

    def __init__(self, data, label=None, weight=None, *, reference=None, max_bins=MAX_BINS, random_state=None,
                 categorical_features="from_dtype", class_weight=None, codes_path=None, batch_rows=BATCH_ROWS):
        if isinstance(data, Dataset):
            raise TypeError("data is already a Dataset.")
        v.check_int(batch_rows, "batch_rows", 1)
        source = _TableSource(data, label, weight, batch_rows)
        self._build(source, reference, max_bins, random_state, categorical_features, codes_path, class_weight)

    # -------------------------------------------------------------- constructors
    @classmethod
    def from_batches(cls, make_batches, *, reference=None, max_bins=MAX_BINS, random_state=None,
                     categorical_features="from_dtype", class_weight=None, codes_path=None):
        """A Dataset from ``make_batches()``, a fresh iterator (it is read twice) of ``(X, y)`` or ``(X, y, w)``
        batches: X a NumPy array, a pandas or polars DataFrame or an Arrow table or record batch; every batch
        with the columns of the first. Rows are numbered in the order the batches come."""
        self = cls.__new__(cls)
        self._build(_BatchSource(make_batches), reference, max_bins, random_state, categorical_features,
                    codes_path, class_weight)
        return self

    @classmethod
    def from_parquet(cls, path, target, weight=None, columns=None, batch_size=BATCH_ROWS, *, reference=None,
                     max_bins=MAX_BINS, random_state=None, categorical_features="from_dtype", class_weight=None,
                     codes_path=None):
        """A Dataset from parquet files (the ``parquet`` extra: pyarrow): a file, a directory (every file below
        it, sorted by path), a glob pattern, or a list of these. target: the label column; weight: a weight
        column or None; columns: the feature columns (default: all others). Every file must have the first
        file's columns with the same types. Read ``batch_size`` rows at a time."""
        v.check_int(batch_size, "batch_size", 1)
        self = cls.__new__(cls)
        source = ParquetSource(path, target, weight, columns, batch_size)
        self._build(source, reference, max_bins, random_state, categorical_features, codes_path, class_weight)
        return self

    # -------------------------------------------------------------- building
    def _build(self, source, reference, max_bins, random_state, categorical_features, codes_path, class_weight):
        import time

        t0 = time.perf_counter()
        if reference is not None and not isinstance(reference, Dataset):
            raise TypeError(f"reference must be a Dataset, got {type(reference).__name__}.")
        if reference is None:
            if max_bins is not None:
                v.check_int(max_bins, "max_bins", 2, MAX_BINS_EXACT)
            RandomState().check("random_state", random_state)
        else:
            max_bins, random_state = reference.max_bins, reference.random_state
        self._source = source
        self.class_weight = None if reference is not None else class_weight
        self.max_bins = max_bins
        self.random_state = random_state
        self.codes_path = None if codes_path is None else os.fspath(codes_path)
        if self.codes_path is not None:
            folder = os.path.dirname(os.path.abspath(self.codes_path))
            if os.path.isdir(self.codes_path) or not os.path.isdir(folder):
                raise ValueError(f"codes_path={self.codes_path!r}: " + (
                    "is a directory; name the file to write the codes to" if os.path.isdir(self.codes_path)
                    else f"its directory {folder!r} does not exist"))
        if self.codes_path is not None and isinstance(source, ParquetSource):
            check_codes_path(self.codes_path, source.path, source.files)
        if self.codes_path is None and isinstance(source, ParquetSource):  # the row count from the metadata
            _check_memory(sum(source.n_rows()), len(source.columns), BinMapper(max_bins).codes_dtype)
        scan = self._scan(source, reference, categorical_features)
        self._bin(source, scan, reference)
        self.build_time_ = time.perf_counter() - t0

    def _scan(self, source, reference, categorical_features):
        """Pass 1: labels, weights, row counts per batch, categories and the binning sample."""
        mapper = BinMapper(self.max_bins, random_state=self.random_state)
        exact = mapper.exact
        cap = MAX_BINS_EXACT if self.max_bins is None else self.max_bins
        seed = None if (reference is not None or exact) else sample_seed(self.random_state)
        sample = None if seed is None else RowSample(seed, _binning.SUBSAMPLE)
        strict = isinstance(source, ParquetSource)
        spill = None
        if exact and reference is None:  # each feature's values, for the features with too many distinct ones
            import tempfile

            spill = tempfile.mkdtemp(prefix="fastboost-exact-", dir=None if self.codes_path is None
                                     else os.path.dirname(os.path.abspath(self.codes_path)))
        try:
            return self._scan_batches(source, reference, categorical_features, exact, cap, sample, strict, spill)
        finally:
            if spill is not None:
                import shutil

                shutil.rmtree(spill, ignore_errors=True)

    def _scan_batches(self, source, reference, categorical_features, exact, cap, sample, strict, spill):
        first = names = dtypes = mask = numeric = None
        sizes, ys, ws = [], [], []
        cat_values = {}
        distinct = {}
        n = 0
        has_weights = False
        for i, batch in enumerate(source.batches()):
            frame = batch.frame
            if frame.n == 0:  # nothing to read (its column types may be placeholders, e.g. Arrow's null)
                sizes.append(0)
                continue
            if first is None:
                first, names, dtypes = frame, _names(frame), frame.dtype_names()
                if frame.d == 0:
                    raise ValueError(f"Found data with 0 feature(s) (shape=({frame.n}, 0)) while a minimum of 1 is "
                                     "required.")
                feature_names = _feature_names(frame)
                text = frame.text()
                has_weights = batch.w is not None
                if reference is not None:
                    self._check_reference_columns(batch, reference)
                    mask = reference.is_categorical
                else:
                    mask = _resolve_categorical(categorical_features, text, feature_names)
                numeric = np.flatnonzero(~mask)
                cat_values = {int(f): [] for f in np.flatnonzero(mask)}
                distinct = {int(f): np.empty(0) for f in numeric} if exact else {}
            else:
                _check_schema(batch, first, names, dtypes, strict)
            _check_labels(batch, source.has_labels, has_weights, i)
            m = frame.n
            sizes.append(m)
            if source.has_labels:
                ys.append(batch.y)
            if has_weights:
                ws.append(batch.w)
            if reference is None and m:
                offered = _offered(batch.w, batch.y, self.class_weight)
                positive = None if offered is None else np.flatnonzero(offered)
                with _naming(batch):
                    self._collect(batch, positive, n, cat_values, distinct, sample, numeric, cap, names, spill)
            n += m
        if first is None or n == 0:
            raise ValueError("the dataset is empty: no rows" + (f" in {', '.join(source.files[:5])}"
                                                                  if isinstance(source, ParquetSource) else "")
                             + ".")
        self.n_rows, self.n_features = n, first.d
        self.feature_names = feature_names
        self.dtypes = dtypes
        self.text_columns = text
        self.label = _concat_labels(ys) if source.has_labels else None
        self.weight = np.concatenate(ws) if has_weights else None
        self._fit_weight = self.weight
        if self.class_weight is not None and self.label is not None:  # as the estimators' class_weight
            from sklearn.utils.class_weight import compute_sample_weight

            try:
                cw = compute_sample_weight(self.class_weight, self.label)
            except (ValueError, KeyError) as e:
                raise ValueError(f"class_weight={self.class_weight!r} does not fit the classes of y: {e}") from None
            self._fit_weight = cw if self.weight is None else self.weight * cw
        if self._fit_weight is not None and not np.any(self._fit_weight > 0):
            raise ValueError("every weight is zero: at least one row needs a positive weight.")
        p = v.as_distribution(self._fit_weight) if self._fit_weight is not None else None
        offered = _offered(self.weight, self.label, self.class_weight)
        if p is not None and not np.array_equal(p > 0, np.ones(n, bool) if offered is None else offered):
            raise ValueError("the weights span more than the float64 range (a positive weight is 0 relative to "
                             "the largest); rescale them.")
        if reference is not None:
            self.is_categorical = reference.is_categorical
            self.categories = reference.categories
            self.mapper = reference.mapper
            return {"sizes": sizes, "schema": (first, names, dtypes, strict)}
        self.is_categorical = mask
        self.categories = [None] * first.d
        for f, parts in cat_values.items():
            name = _categorical.feature_name(None, f, names)
            values = np.concatenate(parts) if parts else np.empty(0)
            cats = _categorical._sorted_categories(values.astype(object) if values.dtype.kind == "U" else values,
                                                   name)
            self.categories[f] = cats
        n_categories = np.array([0 if c is None else max(1, c.shape[0]) for c in self.categories], np.int64)
        if exact:
            longest = max([a.size for a in distinct.values() if a is not None], default=0)
            S = np.full((max(longest, 1), first.d), np.nan)
            for f, a in distinct.items():
                if a is not None:
                    S[: a.size, f] = a
            mapper = BinMapper(self.max_bins, random_state=self.random_state).fit(S, None, n_categories)
            many = [f for f, a in distinct.items() if a is None]
            if many:  # quantiles of every positive row's value, as in memory: one feature's column at a time
                weights = None if p is None else p[p > 0]
                if weights is not None and weights.min() == weights.max():
                    weights = None
                edges_of = [mapper.thresholds_[f, : mapper.n_edges_[f]] for f in range(first.d)]
                n_value_bins = mapper.n_value_bins_.copy()
                quantised = np.zeros(first.d, bool)
                for f in many:
                    col = np.fromfile(os.path.join(spill, f"{f}.bin"), dtype=np.float64)
                    edges, n_distinct = _binning.edges_and_distinct(col, cap, weights)
                    del col
                    edges_of[f], quantised[f] = edges, n_distinct > cap
                    n_value_bins[f] = edges.size + 1 if n_distinct else 0
                mapper.set_edges(edges_of, n_value_bins, quantised)
            self.mapper = mapper
        else:
            rows, values = sample.result()
            S = np.full((rows.size, first.d), np.nan)
            if values is not None:
                S[:, numeric] = values
            weights = None if p is None else p[rows]
            self.mapper = BinMapper(self.max_bins, random_state=self.random_state).fit(S, weights, n_categories)
        return {"sizes": sizes, "schema": (first, names, dtypes, strict)}

    def _collect(self, batch, positive, offset, cat_values, distinct, sample, numeric, cap, names, spill):
        frame = batch.frame
        for f, parts in cat_values.items():
            name = _categorical.feature_name(None, f, names)
            try:
                cats = _categorical._sorted_categories(frame.raw(f), name)
            except TypeError as e:  # (values of a kind that cannot be categories)
                raise TypeError(f"{batch.where}: {e}") from None
            parts.append(cats.astype(object) if cats.dtype.kind == "U" else cats)
            try:
                merged = _categorical._sorted_categories(np.concatenate(parts), name)
            except TypeError as e:  # (strings here, numbers in an earlier batch, or the reverse)
                raise TypeError(f"{batch.where}: {e}") from None
            parts[:] = [merged.astype(object) if merged.dtype.kind == "U" else merged]
            limit = MAX_BINS if self.max_bins is None else min(self.max_bins, MAX_BINS)
            if merged.shape[0] > limit:
                raise ValueError(f"{batch.where}: categorical feature {name} has more than {limit} categories; " + (
                    f"at most max_bins={self.max_bins} are supported. Merge rare categories, raise max_bins (up "
                    f"to {MAX_BINS}), or treat the feature as numeric." if limit < MAX_BINS else
                    f"a categorical feature has at most {MAX_BINS} (a split's set of categories is a "
                    f"{MAX_BINS + 1}-bit set, whatever max_bins is). Merge rare categories or treat the feature "
                    "as numeric."))
        if distinct:
            for f in distinct:
                col = frame.numeric(int(f))
                if positive is not None:
                    col = col[positive]
                with open(os.path.join(spill, f"{f}.bin"), "ab") as fh:
                    fh.write(np.ascontiguousarray(col).tobytes())
                if distinct[f] is not None:
                    merged = np.union1d(distinct[f], np.unique(col[~np.isnan(col)]))
                    distinct[f] = merged if merged.size <= cap else None  # None: quantiles of the spilled values
        if sample is not None:
            local = np.arange(frame.n, dtype=np.int64) if positive is None else positive

            def values(kept):
                rows = local[kept]
                out = np.empty((rows.size, numeric.size))
                for j, f in enumerate(numeric):
                    out[:, j] = frame.numeric(int(f))[rows]
                return out

            sample.offer(local + offset, values)

    def _check_reference_columns(self, batch, reference):
        frame = batch.frame
        if frame.d != reference.n_features:
            raise ValueError(f"{batch.where}: {frame.d} feature columns; the reference Dataset has "
                             f"{reference.n_features}.")
        if reference.feature_names is not None and frame.names is not None and \
                [str(c) for c in frame.names] != reference.feature_names:
            diff = next(f for f, (a, b) in enumerate(zip(frame.names, reference.feature_names)) if str(a) != b)
            raise ValueError(f"{batch.where}: column {diff} is {frame.names[diff]!r}; in the reference Dataset it "
                             f"is {reference.feature_names[diff]!r}.")

    def _bin(self, source, scan, reference):
        """Pass 2: every batch binned into the codes (in memory, or in codes_path under a temporary name)."""
        from ._config import n_threads

        mapper = self.mapper
        n, d = self.n_rows, self.n_features
        dtype = mapper.codes_dtype
        if self.codes_path is None:
            _check_memory(n, d, dtype)
        self.edges_digest = _digest(mapper, self.categories)
        self.dataset_id = uuid.uuid4().hex
        tmp = None
        try:
            if self.codes_path is None:
                codes = np.empty((d, n), dtype=dtype)
            else:
                tmp = f"{self.codes_path}.tmp-{os.getpid()}-{self.dataset_id[:8]}"
                codes = _create_codes_file(tmp, self._header(), (d, n), dtype)
            sizes = scan["sizes"]
            thresholds, missing = mapper.thresholds_, mapper.missing_code
            step = max(1024, _CHUNK_BYTES // (8 * d))
            start = 0
            k = -1
            with n_threads(None):
                for k, batch in enumerate(source.batches()):
                    m = batch.frame.n
                    if k >= len(sizes) or m != sizes[k]:
                        was = f"{sizes[k]} rows" if k < len(sizes) else "no such batch"
                        raise ValueError(f"{batch.where}: {m} rows on the second reading, {was} on the first; "
                                         "the batches must be the same every time they are read.")
                    if m:
                        self._check_second_reading(batch, scan["schema"], start)
                    for a in range(0, m, step):
                        b = min(m, a + step)
                        with _naming(batch):
                            rows = self._encode(batch.frame, a, b, reference is None)
                        map_rows(rows, thresholds, missing, codes, start + a)
                    start += m
            if k + 1 != len(sizes):
                raise ValueError(f"the second reading gave {k + 1} batches, the first {len(sizes)}; the batches "
                                 "must be the same every time they are read.")
            if tmp is not None:
                codes.flush()
                del codes
                _write_meta(tmp + ".meta.npz", self)
                os.replace(tmp + ".meta.npz", self.codes_path + ".meta.npz")
                os.replace(tmp, self.codes_path)
                tmp = None
                codes = _open_codes(self.codes_path, self._header())
        finally:
            if tmp is not None:
                for f in (tmp, tmp + ".meta.npz"):
                    if os.path.exists(f):
                        os.remove(f)
        self.codes = codes

    def _check_second_reading(self, batch, schema, start):
        """A batch of pass 2 as it was in pass 1: its columns (names, order and, where checked, types), and its
        labels and weights (rows start.. of the first reading's). Otherwise its codes would be binned under
        another column's edges, or stand beside other rows' labels, without a word."""
        _check_schema(batch, *schema)
        m = batch.frame.n
        again = "; the batches must be the same every time they are read (a generator that shuffles or draws " \
                "afresh on each call gives other rows the second time)."
        if self.label is not None and not np.array_equal(np.asarray(batch.y), self.label[start:start + m]):
            raise ValueError(f"{batch.where}: its labels differ from the first reading's{again}")
        if self.weight is not None and not np.array_equal(np.asarray(batch.w), self.weight[start:start + m]):
            raise ValueError(f"{batch.where}: its weights differ from the first reading's{again}")

    def _encode(self, frame, a, b, seen=False):
        """Rows a:b of a batch as float64, F-ordered, categorical columns as category indices. seen: every category
        was seen in the first reading (the Dataset's own categories), so one that was not is an error."""
        out = np.empty((b - a, frame.d), dtype=np.float64, order="F")
        for f in range(frame.d):
            cats = self.categories[f]
            if cats is None:
                out[:, f] = frame.numeric(f, a, b)
            else:
                raw = frame.raw(f, a, b)
                unknown = np.empty(b - a, bool) if seen else None
                out[:, f] = _categorical.indices(raw, cats, unknown)
                if seen:
                    new = np.flatnonzero(unknown)
                    if new.size:
                        name = _categorical.feature_name(None, f, _names(frame))
                        raise ValueError(f"row {a + new[0]}: categorical feature {name} has the category "
                                         f"{raw[new[0]]!r}, which the first reading did not have; the batches must "
                                         "be the same every time they are read.")
        return out

    def _header(self):
        return {"format": "fastboost codes", "version": FORMAT_VERSION, "shape": [self.n_features, self.n_rows],
                "dtype": self.mapper.codes_dtype.name, "edges": self.edges_digest, "dataset": self.dataset_id}

    # -------------------------------------------------------------- loading
    @classmethod
    def load(cls, codes_path, reference=None):
        """The Dataset whose codes ``codes_path`` holds (written by a build with ``codes_path=``), opened
        without binning; its codes stay on disk (``np.memmap``). ValueError for a file of another format
        version, a codes file and sidecar of different builds, or (with reference) other bin edges."""
        path = os.fspath(codes_path)
        meta_path = path + ".meta.npz"
        for p in (path, meta_path):
            if not os.path.exists(p):
                raise ValueError(f"{p}: no such file (a Dataset built with codes_path={path!r} writes it).")
        self = cls.__new__(cls)
        try:
            meta = np.load(meta_path, allow_pickle=False)
            header = json.loads(str(meta["header"]))
        except (OSError, ValueError, KeyError) as e:
            raise ValueError(f"{meta_path}: not a fastboost codes sidecar ({e}).") from None
        if header.get("format") != "fastboost codes" or header.get("version") != FORMAT_VERSION:
            raise ValueError(f"{meta_path}: codes of format version {header.get('version')!r}; this fastboost "
                             f"reads version {FORMAT_VERSION}. Build the Dataset again.")
        mapper = BinMapper(header["max_bins"], random_state=header["random_state"])
        mapper.thresholds_ = meta["thresholds"]
        mapper.n_edges_ = meta["n_edges"]
        mapper.n_value_bins_ = meta["n_value_bins"]
        mapper.categorical_ = meta["categorical"]
        mapper.n_features_quantised_ = int(header["n_features_quantised"])
        self.mapper = mapper
        self.max_bins, self.random_state = header["max_bins"], header["random_state"]
        self.n_features, self.n_rows = header["shape"]
        self.feature_names = header["feature_names"]
        self.dtypes = header["dtypes"]
        self.is_categorical = meta["is_categorical"]
        self.text_columns = meta["text_columns"]
        self.categories = [None] * self.n_features
        for f in np.flatnonzero(self.is_categorical):
            self.categories[f] = meta[f"categories_{f}"]
        self.label = meta["label"] if "label" in meta else None
        if self.label is not None and header.get("label_object"):
            self.label = self.label.astype(object)
        self.weight = meta["weight"] if "weight" in meta else None
        self._fit_weight = meta["fit_weight"] if "fit_weight" in meta else self.weight
        self.class_weight = None
        self._class_weight_text = header.get("class_weight", "None")
        self.edges_digest = _digest(mapper, self.categories)
        self.dataset_id = header["dataset"]
        if self.edges_digest != header["edges"]:
            raise ValueError(f"{meta_path}: its bin edges do not match its recorded digest; the file is damaged.")
        if reference is not None and reference.edges_digest != self.edges_digest:
            raise ValueError(f"{path}: its codes were binned with other bin edges or categories than the "
                             "reference Dataset's.")
        self.codes_path = path
        self.codes = _open_codes(path, self._header())
        self._codes_checked = False  # (read in full by the first fit: _checked_codes)
        desc = header.get("source")
        self._source = None
        self._source_problem = None  # why the rows cannot be read again (iter_batches says it)
        if desc and desc.get("parquet"):
            try:
                source = ParquetSource(desc["parquet"], desc["target"], desc["weight"], desc["columns"],
                                       desc["batch_rows"])
            except (ValueError, ImportError) as e:
                self._source_problem = f"its parquet data cannot be read again: {e}"
            else:
                was = {f[0]: list(f[1:]) for f in desc.get("files") or []}
                changed = [f[0] for f in source.describe()["files"] if was.get(f[0], list(f[1:])) != list(f[1:])]
                if changed:
                    self._source_problem = (f"{changed[0]}: changed (size or modification time) since the codes in "
                                            f"{path} were made from it; build the Dataset again")
                else:
                    self._source = source
        self._source_description = desc
        self.build_time_ = 0.0
        return self

    def _checked_codes(self):
        """The codes, every feature's checked once (at the first fit of codes loaded from a file) to be one of its
        value bins or the missing code: the fit indexes its histograms with them, so a damaged file must stop
        here. ValueError naming the file and the feature otherwise."""
        if not getattr(self, "_codes_checked", True):
            _check_codes(self.codes_path, self.codes, self.mapper, self.feature_names)
            self._codes_checked = True
        return self.codes

    def source_description(self):
        """What the rows came from (parquet files with their sizes and times, the columns), or None."""
        desc = getattr(self, "_source_description", None)
        if desc is None and self._source is not None:
            desc = self._source.describe()
        return desc

    def source_class_weight(self):
        """The class_weight the Dataset was built with, as text."""
        return _class_weight_text(self)

    def __repr__(self):
        where = f", codes_path={self.codes_path!r}" if self.codes_path else ""
        return f"Dataset({self.n_rows} rows x {self.n_features} features, max_bins={self.max_bins}{where})"

    # -------------------------------------------------------------- for the estimators
    def _p(self):
        """The fit's distribution over the rows: the weights (times the class weights), normalised."""
        w = self._fit_weight
        return v.as_distribution(w if w is not None else np.ones(self.n_rows))

    def iter_batches(self):
        """The Dataset's rows again, one batch at a time (to predict them)."""
        if self._source is None:
            raise ValueError(getattr(self, "_source_problem", None) or (
                "this Dataset cannot read its rows again (it was loaded from codes of batches); predict the batches, "
                "or a parquet path."))
        changed = self._source.changed()
        if changed is not None:  # its rows would stand beside the labels and codes of the old ones
            raise ValueError(f"{changed}: changed (size or modification time) since the Dataset was built from it; "
                             "build the Dataset again.")
        return self._source.batches()


def _offered(w, y, class_weight):
    """bool mask of the rows with positive weight (after a dict class_weight), or None for all rows."""
    keep = None if w is None else w > 0
    if isinstance(class_weight, dict) and y is not None and y.shape[0]:
        u, inv = np.unique(y, return_inverse=True)
        cw = np.array([float(class_weight.get(c.item() if isinstance(c, np.generic) else c, 1.0)) for c in u])
        pos = (cw > 0)[inv.reshape(-1)]
        keep = pos if keep is None else keep & pos
    return keep


def _concat_labels(ys):
    kinds = {y.dtype.kind for y in ys}
    if len(kinds) > 1 and kinds & {"O", "U", "S"}:
        return np.concatenate([y.astype(object) for y in ys])
    return np.concatenate(ys)


# ---------------------------------------------------------------------------------------------- codes files
def _create_codes_file(path, header, shape, dtype):
    """A codes file: magic, header length, JSON header padded to _ALIGN bytes, then the C-ordered codes."""
    text = json.dumps(header).encode()
    offset = -(-(len(_MAGIC) + 8 + len(text)) // _ALIGN) * _ALIGN
    with open(path, "wb") as fh:
        fh.write(_MAGIC + np.uint64(len(text)).tobytes() + text)
        fh.write(b"\0" * (offset - fh.tell()))
    return np.memmap(path, dtype=dtype, mode="r+", offset=offset, shape=shape, order="C")


def _open_codes(path, expect):
    """The codes of a codes file as a read-only memmap; ValueError unless its header is ``expect``."""
    with open(path, "rb") as fh:
        magic = fh.read(len(_MAGIC))
        if magic != _MAGIC:
            raise ValueError(f"{path}: not a fastboost codes file.")
        size = fh.read(8)
        length = int(np.frombuffer(size, np.uint64)[0]) if len(size) == 8 else -1
        if not 0 <= length <= os.path.getsize(path):
            raise ValueError(f"{path}: not a fastboost codes file (unreadable header).")
        try:
            header = json.loads(fh.read(length))
        except ValueError:
            raise ValueError(f"{path}: not a fastboost codes file (unreadable header).") from None
    if header.get("version") != expect["version"]:
        raise ValueError(f"{path}: codes of format version {header.get('version')!r}; this fastboost reads "
                         f"version {expect['version']}. Build the Dataset again.")
    if header.get("dataset") != expect["dataset"]:
        raise ValueError(f"{path}: these codes come from another Dataset than its sidecar "
                         f"{path}.meta.npz describes.")
    if header.get("edges") != expect["edges"] or header.get("shape") != expect["shape"] or \
            header.get("dtype") != expect["dtype"]:
        raise ValueError(f"{path}: these codes were binned with other bin edges, shape or type than its sidecar "
                         "records.")
    offset = -(-(len(_MAGIC) + 8 + length) // _ALIGN) * _ALIGN
    d, n = header["shape"]
    if os.path.getsize(path) != offset + d * n * np.dtype(header["dtype"]).itemsize:
        raise ValueError(f"{path}: truncated codes file.")
    # copy-on-write: writable for the kernels' signatures, the file is never changed
    return np.memmap(path, dtype=header["dtype"], mode="c", offset=offset, shape=(d, n), order="C")


def _check_codes(path, codes, mapper, feature_names):
    """ValueError unless each code of feature f is below its number of value bins or is the missing code (read a
    block of rows at a time)."""
    n_value_bins, missing = mapper.n_value_bins_, mapper.missing_code
    step = 1 << 22
    for f in range(codes.shape[0]):
        bins = int(n_value_bins[f])
        for a in range(0, codes.shape[1], step):
            c = codes[f, a:a + step]
            top = int(c.max())
            if top < bins or top == missing and np.count_nonzero(c >= bins) == np.count_nonzero(c == missing):
                continue
            bad = int(c[(c >= bins) & (c != missing)][0])
            name = f"{f}" if feature_names is None else f"{f} ({feature_names[f]!r})"
            raise ValueError(f"{path}: feature {name} holds bin code {bad}, beyond its {bins} value bins and the "
                             f"missing code {missing}: the codes file is damaged. Build the Dataset again.")


def _write_meta(path, ds):
    m = ds.mapper
    header = {**ds._header(), "max_bins": ds.max_bins,
              "random_state": ds.random_state if isinstance(ds.random_state, int) or ds.random_state is None
              else None,
              "n_features_quantised": int(m.n_features_quantised_), "feature_names": ds.feature_names,
              "dtypes": ds.dtypes, "source": ds._source.describe() if ds._source is not None else None,
              "label_object": ds.label is not None and ds.label.dtype.kind == "O",
              "class_weight": _class_weight_text(ds)}
    arrays = {"header": np.array(json.dumps(header)), "thresholds": m.thresholds_, "n_edges": m.n_edges_,
              "n_value_bins": m.n_value_bins_, "categorical": m.categorical_, "is_categorical": ds.is_categorical,
              "text_columns": ds.text_columns}
    for f, c in enumerate(ds.categories):
        if c is not None:
            arrays[f"categories_{f}"] = c
    if ds.label is not None:
        label = ds.label
        if label.dtype.kind == "O":
            try:
                label = label.astype(np.str_) if all(isinstance(x, str) for x in label.tolist()) else \
                    label.astype(np.float64)
            except (TypeError, ValueError):
                raise ValueError("labels of mixed types cannot be kept in a codes file.") from None
        arrays["label"] = label
    if ds.weight is not None:
        arrays["weight"] = ds.weight
    if ds._fit_weight is not None and ds._fit_weight is not ds.weight:
        arrays["fit_weight"] = ds._fit_weight
    with open(path, "wb") as fh:
        np.savez(fh, **arrays)


# ---------------------------------------------------------------------------------------------- fitting
def check_for_fit(est, ds):
    """ValueError when the estimator's parameters do not match the ones the Dataset was binned with."""
    name = type(est).__name__
    if ds.label is None:
        raise ValueError(f"{name}.fit: the Dataset has no labels (build it with a target).")
    if est.max_bins != ds.max_bins:
        raise ValueError(f"{name}(max_bins={est.max_bins}) cannot fit a Dataset binned with max_bins="
                         f"{ds.max_bins}; build the Dataset with the estimator's max_bins.")
    rs, drs = est.random_state, ds.random_state
    sampled = not ds.mapper.exact and np.count_nonzero(ds._p()) > _binning.SUBSAMPLE
    if sampled and isinstance(rs, (int, np.integer)) and rs != drs:
        raise ValueError(f"{name}(random_state={rs}) cannot fit a Dataset whose bin edges come from a sample "
                         f"drawn with random_state={drs}; build the Dataset with the estimator's random_state.")
    try:
        mask = _resolve_categorical(est.categorical_features, ds.text_columns, ds.feature_names)
    except (ValueError, TypeError) as e:
        raise ValueError(f"{name}: categorical_features does not fit the Dataset: {e}") from None
    if not np.array_equal(mask, ds.is_categorical):
        raise ValueError(f"{name}: categorical_features names other columns than the Dataset's categorical "
                         "features; give the estimator's categorical_features when building the Dataset.")
    if repr(est.class_weight) != _class_weight_text(ds):
        raise ValueError(f"{name}(class_weight={est.class_weight!r}) cannot fit a Dataset built with class_weight="
                         f"{_class_weight_text(ds)} (its bin edges come from the class-weighted rows); build the "
                         "Dataset with the estimator's class_weight.")


def held_out(codes, y_idx, sw, rows):
    """(training codes, labels, weights, (validation codes, labels, distribution)) of binned rows split into
    ``rows`` = (training rows, validation rows)."""
    tr, va = rows
    return (np.ascontiguousarray(codes[:, tr]), y_idx[tr], sw[tr],
            (np.ascontiguousarray(codes[:, va]), y_idx[va].astype(Y_DTYPE), v.as_distribution(sw[va])))


def _class_weight_text(ds):
    return getattr(ds, "_class_weight_text", None) or repr(ds.class_weight)


def _eval_dataset(est, ds, eval_set):
    """eval_set of a Dataset fit as a Dataset binned like ``ds`` (None without one)."""
    if eval_set is None:
        return None
    v.check_eval_set_form(eval_set)
    if not isinstance(eval_set, (tuple, list)) or len(eval_set) not in (1, 2, 3):
        raise TypeError("eval_set must be (Dataset,), or (X_val, y_val) or (X_val, y_val, sample_weight_val).")
    if isinstance(eval_set[0], Dataset):
        val = eval_set[0]
        if len(eval_set) > 1 and any(x is not None for x in eval_set[1:]):
            raise ValueError("eval_set=(Dataset,) takes its labels and weights from the Dataset.")
        if val.edges_digest != ds.edges_digest:
            raise ValueError("eval_set's Dataset was binned with other bin edges or categories than the training "
                             "Dataset: build it with reference=train.")
        if val.label is None:
            raise ValueError("eval_set's Dataset has no labels.")
        return val
    if len(eval_set) == 1:
        raise TypeError("eval_set must be (Dataset,), or (X_val, y_val) or (X_val, y_val, sample_weight_val).")
    if isinstance(eval_set[0], (str, bytes, os.PathLike)):
        raise TypeError(f"eval_set's X is {os.fspath(eval_set[0])!r}, a path or text: for parquet files pass "
                        "eval_set=(Dataset.from_parquet(path, target=..., reference=train),).")
    try:
        return Dataset(eval_set[0], eval_set[1], eval_set[2] if len(eval_set) == 3 else None, reference=ds)
    except ValueError as e:  # (its rows are "the data" to the Dataset: here they are the validation set's)
        text = str(e)
        raise ValueError("eval_set's X" + text[len("the data"):] if text.startswith("the data")
                         else f"eval_set: {text}") from None


def _set_input_attrs(est, ds):
    est.n_features_in_ = ds.n_features
    names = ds.feature_names
    if names is not None and all(isinstance(c, str) for c in names):
        est.feature_names_in_ = np.asarray(names, dtype=object)
    elif hasattr(est, "feature_names_in_"):
        del est.feature_names_in_


def fit(est, ds, y, sample_weight, eval_set):
    """An estimator's ``_fit`` on a Dataset: its codes, bin edges, labels, weights and categories stand for
    X encoded and binned; everything after is the in-memory fit's."""
    from ._config import n_threads

    with n_threads(est.n_jobs, fit=True):  # (the governor's first reading covers the checks, as binning in memory)
        return _fit(est, ds, y, sample_weight, eval_set)


def _fit(est, ds, y, sample_weight, eval_set):
    import time

    from ._types import MAX_CLASSES

    est._check_params()
    name = type(est).__name__
    if y is not None or sample_weight is not None:
        raise ValueError(f"{name}.fit(Dataset): the labels and weights come from the Dataset; pass y=None and "
                         "sample_weight=None.")
    check_for_fit(est, ds)
    ds._checked_codes()
    try:
        labels = v.check_y(ds.label, ds.n_rows, name)
    except ValueError as e:  # (classes of a float target, say: named with where the labels came from)
        desc = ds.source_description() or {}
        files = desc.get("parquet") or []
        where = (f"the target column {desc.get('target')!r} of {files[0]}" + (f" (and {len(files) - 1} more files)"
                                                                              if len(files) > 1 else "")
                 if files else "the Dataset's labels")
        raise ValueError(f"{where}: {e}") from None
    classes, y_idx = np.unique(labels, return_inverse=True)
    if classes.shape[0] < 2:
        raise ValueError(f"{name} needs samples of at least 2 classes in y; got 1 class ({v.plain(classes[0])}).")
    if classes.shape[0] > MAX_CLASSES:
        raise ValueError(f"{name} takes at most {MAX_CLASSES} classes; y has {classes.shape[0]}.")
    est._check_warm_classes(classes)
    val_ds = _eval_dataset(est, ds, eval_set)
    if val_ds is not None:
        val_ds._checked_codes()
    est._check_loss(classes.shape[0])
    if classes.shape[0] > 2 and not est._joint_multiclass():
        return _fit_one_vs_rest(est, ds, labels, classes, val_ds)
    if eval_set is not None and est.validation_fraction is not None:
        raise ValueError("Pass either eval_set or validation_fraction, not both.")
    sw = ds._fit_weight if ds._fit_weight is not None else np.ones(ds.n_rows)
    # validation_fraction (or n_iter_no_change alone): the rows the in-memory fit holds out, by the labels
    held = est._held_out_rows(y_idx, sw, eval_set)
    val = None
    if val_ds is not None:
        yv = v.check_y(val_ds.label, val_ds.n_rows, name)
        unknown = np.setdiff1d(np.unique(yv), classes)
        if unknown.size:
            raise ValueError(f"eval_set's y has labels not in the training y: {unknown[:5].tolist()}.")
        val = (val_ds.codes, np.searchsorted(classes, yv).astype(Y_DTYPE), val_ds._p())
    p = ds._p()
    resume = est._clear_fitted_state()
    _set_input_attrs(est, ds)
    est._cat = ds.categories if ds.is_categorical.any() else None
    est._set_categories()
    est.classes_ = classes
    y_idx = y_idx.astype(Y_DTYPE)
    t0 = time.perf_counter()
    mapper = ds.mapper
    if resume is not None and _digest(resume.mapper, ds.categories) != ds.edges_digest:
        raise ValueError(f"{name}(warm_start=True) continues a fit on the same training data; this Dataset was "
                         "binned with other bin edges. Set warm_start=False to fit new data.")
    codes = ds.codes
    if held is not None:  # (the training rows' codes copied into memory)
        codes, y_idx, sw, val = held_out(codes, y_idx, sw, held)
        p = v.as_distribution(sw)
    if resume is not None:
        est._check_resume(resume, codes, y_idx, p, val)
    model = est._boost(codes, y_idx, p, mapper, val, classes.shape[0], resume)
    est._set_fit_result(model, mapper, 0.0, time.perf_counter() - t0)  # (binned when the Dataset was built)
    est._set_cover(codes, mapper, sw)
    est.fit_time_ = time.perf_counter() - t0  # the cover pass is part of the fit
    return est


class _Relabelled(Dataset):
    """A Dataset's codes and bin edges with other labels and categories (a one-vs-rest class's problem)."""

    def __init__(self, ds, label, categories, feature_names):
        self.__dict__.update(ds.__dict__)
        self.class_weight, self._class_weight_text = None, None  # (the weights keep the class weights)
        self.label = label
        self.categories = categories
        self.feature_names = feature_names
        self.edges_digest = _digest(ds.mapper, categories)


def _class_view(ds, label):
    """The Dataset a one-vs-rest class's model fits: its categories the category indices (as the in-memory
    fit's per-class models see the encoded X), no column names."""
    cats = [None if c is None else np.arange(c.shape[0], dtype=np.float64) for c in ds.categories]
    return _Relabelled(ds, label, cats, None)


def _fit_one_vs_rest(est, ds, labels, classes, val_ds):
    """K > 2 classes for the binary algorithms on a Dataset, as ``_fit_one_vs_rest`` in memory."""
    import time

    if val_ds is not None:
        yv = v.check_y(val_ds.label, val_ds.n_rows, type(est).__name__)
        unknown = np.setdiff1d(np.unique(yv), classes)
        if unknown.size:
            raise ValueError(f"eval_set's y has labels not in the training y: {unknown[:5].tolist()}.")
    t0 = time.perf_counter()
    per_class = {"class_weight": None, "categorical_features": [bool(c) for c in ds.is_categorical]}

    def fit_one(model, c):
        view = _class_view(ds, np.where(labels == c, 1, 0))
        fit_val = None if val_ds is None else (_class_view(val_ds, np.where(val_ds.label == c, 1, 0)),)
        return model.fit(view, None, None, eval_set=fit_val, callbacks=est._callbacks)

    models = est._fit_class_models(classes, per_class, fit_one)
    for attr in [a for a in vars(est) if a.endswith("_") and not a.startswith("_")]:
        delattr(est, attr)
    _set_input_attrs(est, ds)
    est._cat = ds.categories if ds.is_categorical.any() else None
    est._set_categories()
    est.classes_ = classes
    est.estimators_ = models
    est.n_estimators_ = sum(m.n_estimators_ for m in models)
    est.n_features_quantised_ = models[0].n_features_quantised_
    est.fit_time_ = time.perf_counter() - t0
    return est


# ---------------------------------------------------------------------------------------------- prediction
def is_batched(X):
    """True for what the estimators predict batch by batch: a Dataset, or a parquet path (or list of them)."""
    if isinstance(X, Dataset):
        return True

    def is_path(x):
        if not isinstance(x, (str, os.PathLike)):
            return False
        text = os.fspath(x)
        return os.path.exists(text) or any(ch in text for ch in "*?[") or text.lower().endswith((".parquet", ".pq"))

    if isinstance(X, (str, os.PathLike)):
        return is_path(X)
    return isinstance(X, list) and bool(X) and all(is_path(x) for x in X)


def _source_of(est, X, batch_rows=BATCH_ROWS):
    """A Dataset as it is, or parquet paths as a source of the model's columns (by name)."""
    if isinstance(X, (Dataset, _Source)):
        return X
    names = getattr(est, "feature_names_in_", None)
    return ParquetSource(X, None, None, None if names is None else [str(c) for c in names], batch_rows)


def _batches_of(est, X, batch_rows=BATCH_ROWS):
    """The batches of a Dataset, a source or parquet paths (only the model's columns, by name)."""
    X = _source_of(est, X, batch_rows)
    return X.iter_batches() if isinstance(X, Dataset) else X.batches()


def encoded_batches(est, X, batch_rows=BATCH_ROWS):
    """The rows of a Dataset or parquet paths, one batch at a time, as the prediction kernels read them
    (float64, categorical columns as category indices); empty batches skipped."""
    for batch in _batches_of(est, X, batch_rows):
        if batch.frame.n:
            yield _encoded(est, batch.frame, batch.where)


def _encoded(est, frame, where):
    """A batch as the prediction kernels' float64 rows: the model's columns (by name when it has names),
    categorical columns as category indices. where: the batch's origin, as errors name it."""
    from sklearn.utils.validation import check_is_fitted

    check_is_fitted(est)
    want = getattr(est, "feature_names_in_", None)
    if want is not None and frame.names is not None:
        names = [str(c) for c in frame.names]
        missing = [c for c in want if c not in names]
        if missing:
            raise ValueError(f"{where}: the data lacks the model's feature column(s) {missing[:5]}.")
        if list(want) != names:
            frame = frame.select([frame.names[names.index(c)] for c in want])
    if frame.d != est.n_features_in_:
        raise ValueError(f"{where}: X has {frame.d} features, but {type(est).__name__} is expecting "
                         f"{est.n_features_in_} features as input.")
    cats = getattr(est, "categories_", None)
    out = np.empty((frame.n, frame.d), dtype=np.float64)
    for f in range(frame.d):
        name = repr(str(frame.names[f])) if frame.names is not None else str(f)
        if cats is not None and cats[f] is not None:
            try:
                out[:, f] = _categorical.fitted_indices(frame.raw(f), cats[f], name)
            except TypeError as e:
                raise TypeError(f"{where}: {e}") from None
            continue
        try:
            out[:, f] = frame.numeric(f)
        except ValueError:  # text where the model was fitted on numbers
            raise ValueError(f"{where}: feature {name} is not numeric, but the model was fitted with it as a numeric "
                             "feature: give it as numbers (NaN where a value is missing).") from None
    return v.read_only(out)


def iter_predictions(est, X, method, batch_rows=BATCH_ROWS):
    """``method`` ("predict", "predict_proba", "decision_function", "predict_contrib") of every batch of X,
    in order."""
    total = None if hasattr(est, "estimators_") else est._alpha_total()
    for Xb in encoded_batches(est, X, batch_rows):
        if method == "predict_contrib":
            yield est._contrib(Xb)
            continue
        raw = est._raw_decision(Xb)
        if method == "predict":
            yield est._margin_to_label(raw)
        elif method == "predict_proba":
            yield est._margin_to_proba(raw, total)
        else:
            yield est._scores(raw, total)


def predict(est, X, method):
    """An estimator's ``method`` on a Dataset or parquet path, read batch by batch."""
    parts = list(iter_predictions(est, X, method))
    if not parts:
        raise ValueError("nothing to predict: the data has no rows.")
    return np.concatenate(parts)


#: the most memory the staged outputs of one reading of the data may take (more rounds: more readings)
STAGED_BYTES = 256 * 2 ** 20


def _n_rows(src):
    return src.n_rows if isinstance(src, Dataset) else int(sum(src.n_rows()))


def staged_raw(est, X, batch_rows=BATCH_ROWS):
    """(raw scores of every row, sum of |alpha|) after each kept round, as ``_staged_raw`` in memory, on a
    Dataset or parquet paths: the rows are read batch by batch, once per chunk of rounds whose staged scores
    fit in ``STAGED_BYTES``; each batch's scores carry over from chunk to chunk, so every round's scores are
    the in-memory ones bit for bit."""
    src = _source_of(est, X, batch_rows)
    models, width = est._stage_models()  # (one-vs-rest: its class models, a column each)
    k = width * len(models)
    T = max((m.n_estimators_ for m in models), default=0)
    chunk = max(1, STAGED_BYTES // (8 * k * max(1, _n_rows(src))))
    carried = []  # each batch's scores after the last chunk, per model
    total = 0.0
    for t0 in range(0, T, chunk):
        t1 = min(T, t0 + chunk)
        stages = []
        for b, Xb in enumerate(encoded_batches(est, src, batch_rows)):
            if t0 == 0:
                carried.append([np.zeros((Xb.shape[0], width), dtype=np.float64) for _ in models])
            margins = carried[b]
            out = np.empty((t1 - t0, Xb.shape[0], k), dtype=np.float64)
            for t in range(t0, t1):
                est._add_stage(models, Xb, t, margins)
                out[t - t0] = margins[0] if len(margins) == 1 else np.hstack(margins)
            stages.append(out)
        if not stages:
            raise ValueError("nothing to predict: the data has no rows.")
        for t in range(t0, t1):
            total += est._stage_alpha(models, t)
            raw = np.concatenate([part[t - t0] for part in stages])
            yield (raw[:, 0] if k == 1 else raw), total


def labels_and_weights(est, X, y, sample_weight, what):
    """(y, sample_weight) to score predictions on X against: a Dataset's own labels and weights, or the given
    ones for parquet paths."""
    if isinstance(X, Dataset):
        if y is not None or sample_weight is not None:
            raise ValueError(f"{type(est).__name__}.{what}(Dataset): the labels and weights come from the Dataset; "
                             "pass y=None and sample_weight=None.")
        if X.label is None:
            raise ValueError(f"{type(est).__name__}.{what}: the Dataset has no labels (build it with a target).")
        return X.label, X.weight
    if y is None:
        raise ValueError(f"{type(est).__name__}.{what} of parquet paths needs y.")
    return y, sample_weight
