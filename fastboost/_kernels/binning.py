"""Map raw feature values to uint8 bin codes."""
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


@pjit
def map_to_bins(chunk, edges, missing_code, codes, row_start):
    """Bin a block of rows.

    chunk    float64[n_rows, n_features], F-ordered      IN
    edges    float64[n_features, 256]                    IN   sorted, padded with +inf
    codes    uint8[n_features, n_samples]                OUT  (columns row_start:row_start+n_rows)
    """
    n_rows, n_features = chunk.shape
    for f in prange(n_features):
        e = edges[f]
        out = codes[f]
        col = chunk[:, f]
        for i in range(n_rows):
            out[row_start + i] = _code_of(col[i], e, missing_code)
