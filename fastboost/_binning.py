"""Binning: raw X -> uint8 (or, in exact mode, uint16) codes, feature-major.

Per feature, bin edges come from the non-missing values of a subsample of the
rows with positive sample weight (at most ``subsample`` rows, drawn with
``random_state``; exact mode reads every such row). The subsample is the rows whose
keys are smallest, a key being a seeded hash of the row's index (``sample_keys``):
a uniform sample that a reader of the rows in batches (``fastboost.Dataset``, the
Dask estimators) draws alike, one batch at a time, without knowing the row count:

- at most ``max_bins`` distinct values: one bin per value, edges at the
  midpoints between consecutive distinct values (exact, as a sorted-value
  stump search);
- more: edges at the ``max_bins`` quantiles (midpoints of neighbouring order
  statistics), so at most ``max_bins`` bins.

Code ``k`` holds the values in ``(edges[k-1], edges[k]]``; NaN gets
``missing_code = max_bins``.

Exact mode (``max_bins=None``, or ``max_bins`` above 255, up to 65 535): codes are uint16,
the edges come from every row with positive weight (no subsample), so a feature with at
most ``max_bins`` (None: 65 535) distinct values gets a threshold between every pair of
neighbouring values, the splits of a sorted-value search (scikit-learn's trees). Its missing
code is the largest number of value bins of any feature, so histograms are no wider than
the data needs. A feature with more distinct values gets quantile bins, and the mapper
says which (``n_features_quantised_``). A categorical feature arrives as category indices
``0 .. n_categories - 1`` (NaN: missing or unknown); its edges are the half-integers
between them, so its codes are the indices themselves. ±inf are ordinary values in the extreme bins.
X is read column by column to fit the edges and chunk by chunk to map it, so
at most one chunk of float64 values is made at a time, besides (above
``subsample`` rows of a NumPy array) one gather of the subsampled rows in X's
own dtype, up to 1 GiB. A small unweighted NumPy sample (fewer than ``THREADED_VALUES``
values, 8 MB as float64) is sorted as one block instead: its columns without NaN share one
sort and one set of quantile positions (``edges_of_columns``, the same edges).
"""
import os
from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np
from sklearn.utils import check_random_state

from ._config import split_on_threads
from ._kernels.binning import map_to_bins, radix_sort, sort_columns
from ._types import MAX_BINS, MAX_BINS_EXACT, X_BINNED_DTYPE, X_BINNED_EXACT_DTYPE
from ._validation import is_dataframe

SUBSAMPLE = 200_000
_CHUNK_BYTES = 1 << 23
_KEY_ROWS = 1 << 20  # rows whose keys are made at a time

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)


def _splitmix(z):
    """SplitMix64's output function on uint64 values (wrapping arithmetic)."""
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return z ^ (z >> np.uint64(31))


def sample_seed(random_state):
    """The binning sample's seed from ``random_state`` (an int, None or a RandomState)."""
    return int(check_random_state(random_state).randint(np.iinfo(np.int32).max))


def sample_keys(seed, rows):
    """uint64 keys of global row indices: the subsample is the rows with the smallest keys."""
    base = _splitmix(np.array([seed], dtype=np.uint64))[0]
    with np.errstate(over="ignore"):
        return _splitmix(np.asarray(rows, dtype=np.uint64) * _GOLDEN + base)


class RowSample:
    """The ``size`` rows with the smallest keys among the rows offered so far (equal keys: the lower row),
    with a payload per row (their values, or nothing). Rows may be offered in any number of batches; the
    result depends only on the set of rows offered."""

    def __init__(self, seed, size):
        self.seed = seed
        self.size = size
        self._limit = np.iinfo(np.uint64).max  # a key above it cannot be among the smallest
        self._keys, self._rows, self._payload = [], [], []
        self._held = 0

    def offer(self, rows, payload=None):
        """rows: int64 global indices; payload: None, or a function of the positions (in ``rows``) of the
        rows that may be among the smallest, returning an array with one row per position (only those
        rows' values are read)."""
        keys = sample_keys(self.seed, rows)
        kept = np.flatnonzero(keys <= self._limit)
        if kept.size == 0:
            return
        if kept.size < rows.size:
            keys, rows = keys[kept], rows[kept]
        payload = None if payload is None else payload(kept)
        self._keys.append(keys)
        self._rows.append(np.asarray(rows, dtype=np.int64))
        self._payload.append(payload)
        self._held += rows.size
        if self._held > self.size + max(self.size // 2, 1):
            self._compact()

    def _compact(self):
        keys = np.concatenate(self._keys)
        rows = np.concatenate(self._rows)
        pick = None
        if keys.size > self.size:
            kth = np.partition(keys, self.size - 1)[self.size - 1]
            below = np.flatnonzero(keys < kth)
            tied = np.flatnonzero(keys == kth)
            tied = tied[np.argsort(rows[tied], kind="stable")[: self.size - below.size]]
            pick = np.sort(np.concatenate([below, tied]))
            keys, rows = keys[pick], rows[pick]
            self._limit = kth
        payload = None
        if self._payload[0] is not None:  # the picked rows gathered piece by piece: no copy of all held rows
            pieces = self._payload
            if pick is None:
                payload = pieces[0] if len(pieces) == 1 else np.concatenate(pieces)
            else:
                payload = np.empty((pick.size,) + pieces[0].shape[1:], dtype=pieces[0].dtype)
                ends = np.cumsum([p.shape[0] for p in pieces])
                cut = np.searchsorted(pick, ends)
                start = 0
                for k, piece in enumerate(pieces):
                    lo, hi = (cut[k - 1] if k else 0), cut[k]
                    payload[lo:hi] = piece[pick[lo:hi] - start]
                    start = ends[k]
                    pieces[k] = None
        self._keys, self._rows, self._payload = [keys], [rows], [payload]
        self._held = keys.size

    def result(self):
        """(rows sorted, their payload in that order or None)."""
        if not self._keys:
            return np.empty(0, np.int64), None
        self._compact()
        rows, payload = self._rows[0], self._payload[0]
        if np.all(rows[1:] > rows[:-1]):  # rows offered in order stay in order: no copy
            return rows, payload
        order = np.argsort(rows, kind="stable")
        return rows[order], None if payload is None else payload[order]


#: values in the binning sample (rows x features) from which the features' edges are found on threads
THREADED_VALUES = 1_000_000
#: values from which a block sorted at once (below THREADED_VALUES) is cut into one block of columns a thread:
#: starting the threads costs about 0.4 ms, sorting 100 000 values about 2 ms on one
BLOCK_THREADED_VALUES = 100_000
#: about how many values one share of a block's mapping to codes (whole features) covers: a value takes about 2 ns,
#: handing a share to a thread a few microseconds (a block of fewer is mapped on the calling thread)
MAP_SHARE_VALUES = 1 << 15
#: about how many values one share of a block's sort (whole columns) covers (the radix sort: about 12 ns a value)
SORT_SHARE_VALUES = 1 << 12


def numpy_sort_is_slow():
    """Whether NumPy sorts float64 slowly on this processor: AMD's Zen 4 (family 25 with AVX-512), where NumPy's
    AVX-512 sort runs on an instruction (a compressing store to memory) the processor executes as a slow
    microcode sequence. There 10 000 values took 255 us, about five times its AVX2 sort's 51 us (with
    NPY_DISABLE_CPU_FEATURES=X86_V4), and a radix sort (``sort_columns``) takes 100 us. Elsewhere, and when the
    AVX-512 features are disabled in NumPy, its own sort is the faster."""
    disabled = os.environ.get("NPY_DISABLE_CPU_FEATURES", "")
    if "X86_V4" in disabled or "AVX512" in disabled:
        return False
    try:
        with open("/proc/cpuinfo", "rb") as f:
            first = f.read(1 << 16).split(b"\n\n", 1)[0]  # the first processor's fields
    except OSError:  # not Linux
        return False
    fields = {}
    for line in first.splitlines():
        key, _, value = line.partition(b":")
        fields[key.strip()] = value.strip()
    return (fields.get(b"vendor_id") == b"AuthenticAMD" and fields.get(b"cpu family") == b"25"
            and b"avx512f" in fields.get(b"flags", b"").split())


#: the binning sample (a small one's block, a large one's columns) is sorted by the radix sort instead of NumPy's
#: (the same values)
RADIX_SORT = numpy_sort_is_slow()
#: fewer values than this (a block, or a column) are sorted by NumPy even where RADIX_SORT holds: on Zen 4 its sort of
#: 1 000 x 20 values takes about 0.24 ms against the radix sort's 0.16 ms (2 000 x 20: 0.65 against 0.28 ms), while
#: compiling the radix sort costs a first fit about a second
RADIX_MIN_VALUES = 1 << 15


def sample_rows(seed, size, n, positive=None):
    """The binning subsample of ``n`` rows (or of the rows ``positive``, sorted), as sorted row indices."""
    sample = RowSample(seed, size)
    total = n if positive is None else positive.size
    for start in range(0, total, _KEY_ROWS):
        stop = min(total, start + _KEY_ROWS)
        sample.offer(np.arange(start, stop, dtype=np.int64) if positive is None else positive[start:stop])
    return sample.result()[0]


def _safe_midpoints(a, b):
    """Edges between sorted distinct neighbours a < b such that a <= edge < b, infinities included."""
    with np.errstate(invalid="ignore", over="ignore"):
        mid = a * 0.5 + b * 0.5
    # (a subnormal a == b with an odd last bit halves and adds up to less than a: the edge is then a itself)
    mid = np.where(np.isposinf(b) | (mid >= b) | (mid < a) | np.isnan(mid), a, mid)
    return np.where(np.isneginf(a), -np.inf, mid)


def bin_edges(col, max_bins, weights=None):
    """Bin edges of one feature's sample (float64 1-D, NaN allowed); at most max_bins - 1 edges.

    Quantile edges follow the (weighted) empirical CDF F: for q = j / max_bins the
    edge lies between the smallest value with F >= q and the smallest with F > q
    (their midpoint, or the value itself when they coincide: NumPy's
    "averaged_inverted_cdf"). Only the CDF matters, so scaling the weights changes
    nothing and an integer weight equals repeating the row.
    """
    return edges_and_distinct(col, max_bins, weights)[0]


def edges_and_distinct(col, max_bins, weights=None):
    """(bin_edges(col, max_bins, weights), the number of distinct non-missing values)."""
    keep = ~np.isnan(col)
    if not keep.all():  # (no copy of a column without NaN)
        col = col[keep]
        if weights is not None:
            weights = weights[keep]
    if col.size == 0:
        return np.empty(0, dtype=np.float64), 0
    if weights is None:
        s = sorted_values(col)
    else:
        order = np.argsort(col, kind="stable")
        s = col[order]
    new = s[1:] != s[:-1]
    n_distinct = 1 + int(np.count_nonzero(new))
    if n_distinct <= max_bins:
        distinct = s[np.r_[True, new]]
        return _safe_midpoints(distinct[:-1], distinct[1:]), n_distinct
    lo, hi = (_uniform_quantile_positions(s.size, max_bins) if weights is None
              else _quantile_positions(np.cumsum(weights[order]), max_bins))
    edges = np.unique(_safe_midpoints(s[lo], s[hi]))  # equal neighbours give the value itself
    return edges[edges < s[-1]], n_distinct


def _quantile_positions(cum, max_bins):
    """(lo, hi): for each quantile q = j / max_bins of the empirical CDF given by the cumulative weights cum of
    the sorted values, the positions of the smallest value with F >= q and of the smallest with F > q."""
    targets = cum[-1] * np.arange(1.0, max_bins) / max_bins
    lo = np.minimum(np.searchsorted(cum, targets, side="left"), cum.size - 1)
    hi = np.minimum(np.searchsorted(cum, targets, side="right"), cum.size - 1)
    return lo, hi


def _uniform_quantile_positions(n, max_bins):
    """_quantile_positions of n equal weights (cum = 1, 2, ..., n) without the cumulative array: the first position
    whose cum reaches a target t is ceil(t) - 1 and the first whose cum passes it is floor(t), the same integers
    searchsorted finds (the comparisons of t with whole numbers are exact)."""
    targets = float(n) * np.arange(1.0, max_bins) / max_bins
    lo = np.minimum(np.ceil(targets).astype(np.int64) - 1, n - 1)
    hi = np.minimum(np.floor(targets).astype(np.int64), n - 1)
    return lo, hi


def sorted_values(col):
    """np.sort(col) of a float64 column without NaN; with RADIX_SORT from ``radix_sort`` (on the calling thread,
    without the GIL: the columns of a large sample are sorted on threads), unless the column holds both -0.0
    and 0.0 or fewer than RADIX_MIN_VALUES values."""
    if not RADIX_SORT or col.size < RADIX_MIN_VALUES:
        return np.sort(col)
    col = np.ascontiguousarray(col, dtype=np.float64)
    out = np.empty_like(col)
    return np.sort(col) if radix_sort(col.view(np.uint64), out.view(np.uint64)) else out


def sorted_columns(block):
    """np.sort(block, axis=0) of a float64 block without NaN; with RADIX_SORT (and at least RADIX_MIN_VALUES values)
    from ``sort_columns`` (threads over the columns), except the columns holding both -0.0 and 0.0, which NumPy
    sorts (the order of equal values is its own: only there could the two sorts differ)."""
    if not RADIX_SORT or block.size < RADIX_MIN_VALUES:
        return np.sort(block, axis=0)
    n, k = block.shape
    out = np.empty((k, n))
    mixed_zeros = np.zeros(k, np.uint8)
    by_row = block.flags.c_contiguous
    a = block if by_row else np.ascontiguousarray(block.T)
    bits, out_bits = a.view(np.uint64), out.view(np.uint64)
    split_on_threads(lambda j0, j1: sort_columns(bits, by_row, out_bits, mixed_zeros, j0, j1), k,
                     numba.get_num_threads(), max(1, SORT_SHARE_VALUES // max(1, n)))
    for j in np.flatnonzero(mixed_zeros):
        out[j] = np.sort(block[:, j])
    return out.T


def edges_of_columns(block, max_bins):
    """edges_and_distinct of every column of a float64 block [n_rows >= 1, k] without NaN, unweighted: the same
    arrays, from one sort of the whole block and the quantile positions shared by its columns (a few NumPy calls
    a column instead of a dozen, which is most of a small fit's binning)."""
    s = sorted_columns(block)
    new = s[1:] != s[:-1]
    n_distinct = 1 + np.count_nonzero(new, axis=0)
    out = [None] * block.shape[1]
    many = np.flatnonzero(n_distinct > max_bins)
    if many.size:
        lo, hi = _uniform_quantile_positions(s.shape[0], max_bins)
        mids = _safe_midpoints(s[lo][:, many], s[hi][:, many])
        # np.unique of each column without its sort: the midpoints are sorted already (quantile j's lower
        # position is at or past quantile j - 1's upper one, so each midpoint is at or above the one before), and
        # their distinct values are where they change. Which of -0.0 and 0.0 np.unique keeps depends on its sort,
        # so a column holding both still goes through it (the same edges, signed zeros included).
        keep = np.ones(mids.shape, dtype=bool)
        keep[1:] = mids[1:] != mids[:-1]
        keep &= mids < s[-1, many]
        zero = mids == 0.0
        signed = np.signbit(mids)
        both_zeros = (zero & signed).any(axis=0) & (zero & ~signed).any(axis=0)
        for j, f in enumerate(many):
            if both_zeros[j]:
                edges = np.unique(mids[:, j])
                out[f] = edges[edges < s[-1, f]], int(n_distinct[f])
            else:
                out[f] = mids[keep[:, j], j], int(n_distinct[f])
    for f in np.flatnonzero(n_distinct <= max_bins):
        distinct = s[np.r_[True, new[:, f]], f]
        out[f] = _safe_midpoints(distinct[:-1], distinct[1:]), int(n_distinct[f])
    return out


def _edges_of_block(block, max_bins):
    """edges_of_columns of the block, its columns cut into one block a thread from BLOCK_THREADED_VALUES values
    (NumPy's sort releases the GIL; each column's edges are its own, so the cut changes none). With RADIX_SORT
    the block stays whole: its sort is split over the threads (``sorted_columns``)."""
    k = block.shape[1]
    n_workers = 1 if RADIX_SORT or block.size < BLOCK_THREADED_VALUES else min(k, numba.get_num_threads())
    if n_workers <= 1:
        return edges_of_columns(block, max_bins)
    cuts = [block[:, j * k // n_workers:(j + 1) * k // n_workers] for j in range(n_workers)]
    with ThreadPoolExecutor(n_workers) as pool:
        parts = list(pool.map(lambda part: edges_of_columns(part, max_bins), cuts))
    return [edges for part in parts for edges in part]


def _column(X, f, rows):
    if is_dataframe(X):
        col = X.iloc[:, f] if rows is None else X.iloc[rows, f]
        return col.to_numpy(dtype=np.float64, na_value=np.nan)
    col = X[:, f] if rows is None else X[rows, f]
    return np.asarray(col, dtype=np.float64)


def _row_chunk(X, start, stop):
    """Rows start:stop as a float64 F-ordered array (one chunk: the only float copy)."""
    if is_dataframe(X):
        block = X.iloc[start:stop].to_numpy(dtype=np.float64, na_value=np.nan)
    else:
        block = X[start:stop]
    return np.asfortranarray(block, dtype=np.float64)


def feature_major(block):
    """A float64 block of rows [n_rows, n_features] as the binning kernel reads it: feature by feature
    [n_features, n_rows], C-ordered, read-only (a view of ``block`` when it is F-ordered float64). Whether
    ``block`` was writable, one row or one column, the kernel sees one array type, so it is compiled once."""
    columns = np.asfortranarray(block, dtype=np.float64).T
    columns.flags.writeable = False  # a view: the caller's array keeps its flags
    return columns


def map_rows(block, thresholds, missing_code, codes, start):
    """codes[:, start:start + n_rows] = the bin codes of float64 ``block`` [n_rows, n_features], the features
    split over numba's thread count in shares of about MAP_SHARE_VALUES values."""
    columns = feature_major(block)
    split_on_threads(lambda f0, f1: map_to_bins(columns, thresholds, missing_code, codes, start, f0, f1),
                     columns.shape[0], numba.get_num_threads(), max(1, MAP_SHARE_VALUES // max(1, columns.shape[1])))


class BinMapper:
    """Fit per-feature bin edges and map X to uint8 codes (uint16 in exact mode).

    Fitted attributes:
      thresholds_   float64[n_features, width]: edges in the first n_edges_[f]
                    entries, +inf after (the raw threshold of split "code <= k";
                    a fixed power-of-two width keeps the binning search branch-free;
                    256, or in exact mode the smallest power of two above every
                    feature's number of edges)
      n_edges_      int64[n_features]
      n_value_bins_ int64[n_features]: non-missing bins (0 for an all-NaN feature; a categorical
                    feature: its number of categories)
      categorical_  uint8[n_features]: 1 for categorical features
      n_features_quantised_  features with more distinct values than bins (quantile edges)
      missing_code  = max_bins (exact mode: the most value bins of any feature)
    """

    def __init__(self, max_bins=MAX_BINS, subsample=None, random_state=None):
        self.max_bins = max_bins
        self.subsample = subsample
        self.random_state = random_state

    @property
    def exact(self):
        """Exact mode: uint16 codes, edges from every row (max_bins None or above 255)."""
        return self.max_bins is None or self.max_bins > MAX_BINS

    @property
    def codes_dtype(self):
        return np.dtype(X_BINNED_EXACT_DTYPE if self.exact else X_BINNED_DTYPE)

    @property
    def missing_code(self):
        if not self.exact:
            return self.max_bins
        return int(max(1, self.n_value_bins_.max(initial=1)))

    def fit(self, X, sample_weight=None, n_categories=None):
        """n_categories: int[n_features], > 0 for the categorical features (X holds their category indices)."""
        n, d = X.shape
        n_categories = np.zeros(d, np.int64) if n_categories is None else np.asarray(n_categories, np.int64)
        self.categorical_ = (n_categories > 0).astype(np.uint8)
        cap = MAX_BINS_EXACT if self.max_bins is None else self.max_bins
        rows = None
        if sample_weight is not None and np.any(sample_weight == 0):
            rows = np.flatnonzero(sample_weight > 0)
        n_rows = n if rows is None else rows.size
        subsample = SUBSAMPLE if self.subsample is None else self.subsample  # (None: the module's, read now)
        if n_rows > subsample and not self.exact:
            rows = sample_rows(sample_seed(self.random_state), subsample, n, rows)
        n_sample = n_rows if rows is None else rows.size
        weights = None  # equal weights give the unweighted CDF: skip the slower weighted path
        if sample_weight is not None:
            weights = sample_weight if rows is None else sample_weight[rows]
            if weights.min() == weights.max():
                weights = None
        sample = X
        if rows is not None and not is_dataframe(X) and rows.size * d * 8 <= 1 << 30:
            sample, rows = X[rows], None  # one gather of the subsample, then columns from it
        edges_of = [None] * d
        self.n_value_bins_ = np.zeros(d, dtype=np.int64)
        quantised = np.zeros(d, dtype=bool)
        found = {}  # small unweighted samples: the numeric columns without NaN all at once
        if weights is None and rows is None and not is_dataframe(sample) and 0 < n_sample * d < THREADED_VALUES:
            numeric = np.flatnonzero(n_categories == 0)
            block = np.asarray(sample if numeric.size == d else sample[:, numeric], dtype=np.float64)
            whole = ~np.isnan(block.min(axis=0))  # (a column's minimum is NaN when it holds a NaN)
            if whole.any():  # (all of them: the block itself, no copy)
                found = dict(zip(numeric[whole].tolist(),
                                 _edges_of_block(block if whole.all() else block[:, whole], cap)))

        def fit_column(f):  # writes only entry f of the outputs
            if n_categories[f]:  # category indices: one code each
                edges_of[f] = np.arange(n_categories[f] - 1) + 0.5
                self.n_value_bins_[f] = n_categories[f]
                return
            if f in found:
                edges, n_distinct = found[f]
            else:
                edges, n_distinct = edges_and_distinct(_column(sample, f, rows), cap, weights)
            edges_of[f] = edges
            self.n_value_bins_[f] = edges.size + 1 if n_distinct else 0
            quantised[f] = n_distinct > cap

        # NumPy's sort releases the GIL: columns run on numba's thread count, results per column (threads pay
        # from about a million values: below, starting them costs more than they save)
        n_workers = min(d, numba.get_num_threads()) if n_sample * d >= THREADED_VALUES else 1
        if n_workers > 1:
            with ThreadPoolExecutor(n_workers) as pool:
                list(pool.map(fit_column, range(d)))
        else:
            for f in range(d):
                fit_column(f)
        return self.set_edges(edges_of, self.n_value_bins_, quantised)

    def set_edges(self, edges_of, n_value_bins, quantised):
        """The fitted attributes from each feature's edges (float64 arrays), its number of value bins and
        whether its edges are quantiles."""
        d = len(edges_of)
        self.n_value_bins_ = np.asarray(n_value_bins, dtype=np.int64)
        self.n_edges_ = np.array([e.size for e in edges_of], dtype=np.int64)
        width = MAX_BINS + 1
        while width <= self.n_edges_.max(initial=0):
            width *= 2
        self.thresholds_ = np.full((d, width), np.inf, dtype=np.float64)
        for f, edges in enumerate(edges_of):
            self.thresholds_[f, : edges.size] = edges
        self.n_features_quantised_ = int(np.count_nonzero(quantised))
        return self

    def transform(self, X):
        """Codes uint8 (exact mode: uint16) [n_features, n_samples], C-contiguous."""
        n, d = X.shape
        codes = np.empty((d, n), dtype=self.codes_dtype)
        step = max(1024, _CHUNK_BYTES // (8 * d))
        for start in range(0, n, step):
            stop = min(n, start + step)
            map_rows(_row_chunk(X, start, stop), self.thresholds_, self.missing_code, codes, start)
        return codes

    def fit_transform(self, X, sample_weight=None, n_categories=None):
        return self.fit(X, sample_weight, n_categories).transform(X)
