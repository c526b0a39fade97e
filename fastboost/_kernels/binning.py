"""Map raw feature values to bin codes (uint8, or uint16 in exact mode)."""
import numpy as np
from numba import prange

from .._config import jit, pjit


@jit
def _code_of(x, edges, missing_code):
    """Bin code of one value: the number of edges strictly below ``x``; NaN gets ``missing_code``.

    So ``code <= k`` exactly when ``x <= edges[k]``, the comparison prediction uses.
    ``edges`` has 256 entries, padded with +inf (never below any x), so the search
    is a fixed 8 steps that compile to conditional moves: no data-dependent branches.
    """
    pos = 0
    for step in (128, 64, 32, 16, 8, 4, 2, 1):
        pos += step if edges[pos + step - 1] < x else 0
    return missing_code if np.isnan(x) else pos


@jit
def _code_of_wide(x, edges, missing_code):
    """_code_of for exact mode's wider edge rows (a power of two above 256 entries): log2(width) steps."""
    pos = 0
    step = edges.shape[0] >> 1
    while step > 0:
        pos += step if edges[pos + step - 1] < x else 0
        step >>= 1
    return missing_code if np.isnan(x) else pos


@pjit
def map_to_bins(columns, edges, missing_code, codes, row_start):
    """Bin a block of rows, given feature by feature.

    columns  float64[n_features, n_rows], C-ordered      IN   (``_binning.feature_major``: one layout, read-only,
                                                              so one compiled variant serves every input)
    edges    float64[n_features, width]                  IN   sorted, padded with +inf; width 256 or, in exact
                                                              mode, a larger power of two
    codes    uint8 or uint16 [n_features, n_samples]     OUT  (columns row_start:row_start+n_rows)
    """
    n_features, n_rows = columns.shape
    wide = edges.shape[1] != 256
    for f in prange(n_features):
        e = edges[f]
        out = codes[f]
        col = columns[f]
        if wide:
            for i in range(n_rows):
                out[row_start + i] = _code_of_wide(col[i], e, missing_code)
        else:
            for i in range(n_rows):
                out[row_start + i] = _code_of(col[i], e, missing_code)
