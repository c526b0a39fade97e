"""Apply the chosen stump to the training rows; update and renormalise the weights."""
import numpy as np

from .._config import jit
from .._types import SUM_UI, SUM_UJ, SUM_WI, SUM_WJ


@jit
def stump_outputs_binned(codes_f, k, missing_left, missing_code, left, right, out):
    """Stump output (-1/+1) on binned rows.

    codes_f  uint8[n_samples]  IN  codes of the stump's feature
    out      int8[n_samples]   OUT
    """
    for i in range(codes_f.shape[0]):
        c = codes_f[i]
        if c == missing_code:
            go_left = missing_left
        else:
            go_left = c <= k
        out[i] = left if go_left else right


@jit
def round_sums(h, y, u, w, yh, sums):
    """Correct/wrong sums of the learner weights u and boosting weights w.

    h     int8[n_samples]     IN   weak hypothesis output
    y     uint8[n_samples]    IN   class index (0: y=-1, 1: y=+1)
    yh    int8[n_samples]     OUT  y_i * h_i (+1 correct, -1 wrong)
    sums  float64[N_SUMS]     OUT  SUM_UI, SUM_UJ, SUM_WI, SUM_WJ
    """
    ui = 0.0
    uj = 0.0
    wi = 0.0
    wj = 0.0
    for i in range(h.shape[0]):
        correct = (h[i] > 0) == (y[i] == 1)
        if correct:
            yh[i] = 1
            ui += u[i]
            wi += w[i]
        else:
            yh[i] = -1
            uj += u[i]
            wj += w[i]
    sums[:] = 0.0
    sums[SUM_UI] = ui
    sums[SUM_UJ] = uj
    sums[SUM_WI] = wi
    sums[SUM_WJ] = wj


@jit
def update_weights(w, p, yh, alpha):
    """w_i <- w_i * exp(-alpha * y_i h_i) / Z, in place.

    w   float64[n_samples]  IN/OUT  boosting weights, sum 1 on entry and exit
    p   float64[n_samples]  IN      initial (sample-weight) distribution, sum 1
    yh  int8[n_samples]     IN      y_i * h_i
    Returns (Z, sum_i w_i**2 / p_i over p_i > 0) after normalisation. exp is
    evaluated twice per round, not once per row.
    """
    down = np.exp(-alpha)
    up = np.exp(alpha)
    z = 0.0
    for i in range(w.shape[0]):
        w[i] *= down if yh[i] > 0 else up
        z += w[i]
    inv = 1.0 / z
    s2 = 0.0
    for i in range(w.shape[0]):
        w[i] *= inv
        if p[i] > 0.0:
            s2 += w[i] * w[i] / p[i]
    return z, s2
