"""Apply the chosen stump to the training rows; update and renormalise the weights.

The O(n_samples) passes run over fixed blocks of ``BLOCK`` rows in parallel;
each block writes its own partial sums and the partials are added in block
order, so the sums do not depend on the number of threads.
"""
import numpy as np
from numba import prange

from .._config import jit, pjit
from .._types import SUM_UI, SUM_UJ, SUM_WI, SUM_WJ

BLOCK = 16384


def n_blocks(n_samples):
    """Rows of the ``block_sums`` scratch array the kernels below need."""
    return max(1, -(-n_samples // BLOCK))


@jit
def _go_left(c, k, missing_left, missing_code):
    return missing_left if c == missing_code else c <= k


@pjit
def apply_stump(codes_f, k, missing_left, missing_code, left, right, y, u, w, yh, block_sums, sums):
    """Stump outputs on the binned rows and the round's correct/wrong sums, in one pass.

    codes_f     uint8[n_samples]     IN   codes of the stump's feature
    y           uint8[n_samples]     IN   class index (0: y=-1, 1: y=+1)
    u, w        float64[n_samples]   IN   learner and boosting weights
    yh          int8[n_samples]      OUT  y_i * h_i (+1 correct, -1 wrong)
    block_sums  float64[n_blocks, >=4]    scratch
    sums        float64[N_SUMS]      OUT  SUM_UI, SUM_UJ, SUM_WI, SUM_WJ (others zero)
    """
    n = codes_f.shape[0]
    nb = -(-n // BLOCK)
    for b in prange(nb):
        ui = 0.0
        uj = 0.0
        wi = 0.0
        wj = 0.0
        for i in range(b * BLOCK, min(n, (b + 1) * BLOCK)):
            h = left if _go_left(codes_f[i], k, missing_left, missing_code) else right
            correct = (h > 0) == (y[i] == 1)
            yh[i] = 1 if correct else -1
            c = 1.0 if correct else 0.0
            ui += c * u[i]
            uj += (1.0 - c) * u[i]
            wi += c * w[i]
            wj += (1.0 - c) * w[i]
        block_sums[b, 0] = ui
        block_sums[b, 1] = uj
        block_sums[b, 2] = wi
        block_sums[b, 3] = wj
    sums[:] = 0.0
    for b in range(nb):
        sums[SUM_UI] += block_sums[b, 0]
        sums[SUM_UJ] += block_sums[b, 1]
        sums[SUM_WI] += block_sums[b, 2]
        sums[SUM_WJ] += block_sums[b, 3]


@pjit
def update_weights(w, p, yh, alpha, block_sums):
    """w_i <- w_i * exp(-alpha * y_i h_i) / Z, in place.

    w           float64[n_samples]  IN/OUT boosting weights, sum 1 on entry and exit
    p           float64[n_samples]  IN     initial (sample-weight) distribution, sum 1
    yh          int8[n_samples]     IN     y_i * h_i
    block_sums  float64[n_blocks, >=1]     scratch
    Returns (Z, sum_i w_i**2 / p_i over p_i > 0) after normalisation. exp is
    evaluated twice per round, not once per row.
    """
    n = w.shape[0]
    nb = -(-n // BLOCK)
    down = np.exp(-alpha)
    up = np.exp(alpha)
    for b in prange(nb):
        z = 0.0
        for i in range(b * BLOCK, min(n, (b + 1) * BLOCK)):
            w[i] *= down if yh[i] > 0 else up
            z += w[i]
        block_sums[b, 0] = z
    z = 0.0
    for b in range(nb):
        z += block_sums[b, 0]
    inv = 1.0 / z
    for b in prange(nb):
        s2 = 0.0
        for i in range(b * BLOCK, min(n, (b + 1) * BLOCK)):
            w[i] *= inv
            if p[i] > 0.0:
                s2 += w[i] * w[i] / p[i]
        block_sums[b, 0] = s2
    s2 = 0.0
    for b in range(nb):
        s2 += block_sums[b, 0]
    return z, s2
