"""Map raw feature values to uint8 bin codes."""
import numpy as np
from numba import prange

from .._config import jit, pjit


@jit
def _code_of(x, edges, n_edges, missing_code):
    """Bin code of one value: the number of edges strictly below ``x``; NaN gets ``missing_code``.

    So ``code <= k`` exactly when ``x <= edges[k]``, the comparison prediction uses.
    """
    if np.isnan(x):
        return missing_code
    lo = 0
    hi = n_edges
    while lo < hi:
        mid = (lo + hi) >> 1
        if edges[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


@pjit
def map_to_bins(chunk, edges, n_edges, missing_code, codes, row_start):
    """Bin a block of rows.

    chunk    float64[n_rows, n_features], F-ordered      IN
    edges    float64[n_features, max_bins - 1]           IN   (row f valid up to n_edges[f])
    n_edges  int64[n_features]                           IN
    codes    uint8[n_features, n_samples]                OUT  (columns row_start:row_start+n_rows)
    """
    n_rows, n_features = chunk.shape
    for f in prange(n_features):
        e = edges[f]
        ne = n_edges[f]
        out = codes[f]
        col = chunk[:, f]
        for i in range(n_rows):
            out[row_start + i] = _code_of(col[i], e, ne, missing_code)
