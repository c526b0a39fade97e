"""The margin matrix of fitted voters: M[j, k] = y_i h_j(x_i) for the rows i = rows[k], from the binned codes.

The totally corrective fits (LPBoost's master, RLP-Boost's and RQP-Boost's re-weighting) read the
voters only through this matrix. Voters are the discrete stumps of ``model.rounds`` or the discrete
trees of ``model.nodes``, so every entry is -1 or +1 and the matrix is int8, one row per voter
(a column of the LP), contiguous per voter.
"""
from numba import prange

from .._config import pjit
from .reweight import voter_output


@pjit
def margin_matrix(codes, y, rows, model, first, missing_code, out):
    """out[j, k] = y_i h_{first + j}(x_i), i = rows[k], y_i = +1 for class index 1 and -1 for 0.

    codes  uint8[n_features, n_samples]  IN   binned training (or validation) rows
    y      uint16[n_samples]             IN   class indices (0 or 1)
    rows   int64[m]                      IN   the rows to evaluate
    model  Model                         IN   the voters
    out    int8[n_voters, m]             OUT  voters first .. first + n_voters - 1
    Parallel over voters when there are several, over rows for one (a column generation round).
    """
    n_voters = out.shape[0]
    m = rows.shape[0]
    if n_voters == 1:
        for k in prange(m):
            i = rows[k]
            h = voter_output(codes, i, model, first, missing_code)
            out[0, k] = h if y[i] == 1 else -h
        return
    for j in prange(n_voters):
        for k in range(m):
            i = rows[k]
            h = voter_output(codes, i, model, first + j, missing_code)
            out[j, k] = h if y[i] == 1 else -h
