"""QuadBoost's voter re-weighting: one coordinate-descent pass over the voters already kept.

For voter j with output h_j (+-1) and weight alpha_j, its correlation with the
rest of the ensemble is c_j = <h_j, r>_p + alpha_j eta_j (eta_j = sum_i p_i h_j(x_i)**2 = 1);
the new weight is the algorithm's own step rule evaluated at g = c_j, and the
residuals follow: r <- r - (alpha_new - alpha_old) h_j (spec §6, "Re-weighting").
Each update minimises the objective exactly in alpha_j, so a pass never increases it.
The step rule is handed over as a first-class function, as in the loop.
"""
from numba import prange, types

from .._config import lazy_typed, pjit
from .._types import R_ALPHA, R_BIN, R_FEATURE, R_LEFT, R_MISSING_LEFT, R_RIGHT, SUM_UI, SUM_UJ
from .loop import STEP_SIG, f8_1d, f8_2d, i8_2d, u1_2d
from .update import BLOCK, stump_output_code


@pjit
def voter_correlation(codes_f, k, missing_left, missing_code, left, right, r, p, block_sums):
    """sum_i p_i h(x_i) r_i for one stump on the binned rows (fixed blocks: thread-count independent)."""
    n = codes_f.shape[0]
    nb = -(-n // BLOCK)
    for b in prange(nb):
        acc = 0.0
        for i in range(b * BLOCK, min(n, (b + 1) * BLOCK)):
            acc += p[i] * r[i] * stump_output_code(codes_f[i], k, missing_left, missing_code, left, right)
        block_sums[b, 0] = acc
    acc = 0.0
    for b in range(nb):
        acc += block_sums[b, 0]
    return acc


@pjit
def add_voter(codes_f, k, missing_left, missing_code, left, right, delta, r):
    """r_i -= delta * h(x_i) for one stump on the binned rows."""
    for i in prange(codes_f.shape[0]):
        r[i] -= delta * stump_output_code(codes_f[i], k, missing_left, missing_code, left, right)


REWEIGHT_SIG = types.float64(
    u1_2d, types.int64, i8_2d, f8_2d, types.int64, f8_1d, f8_1d,  # codes, missing_code, irec, frec, n, r, p
    types.FunctionType(STEP_SIG), f8_1d, f8_1d, f8_2d,  # step, params, sums, block_sums
)


def _reweight(codes, missing_code, irec, frec, n_rounds, r, p, step, params, sums, block_sums):
    """One pass over voters 0 .. n_rounds - 1; updates frec[:, R_ALPHA] and r in place.

    codes   uint8[n_features, n_samples]  IN
    irec, frec: the round records (stumps and weights)  IN / IN-OUT (alpha)
    r       float64[n_samples]  IN/OUT residuals y - F
    p       float64[n_samples]  IN     sample-weight distribution
    sums    float64[N_SUMS], block_sums float64[n_blocks, >=1]: scratch
    Returns the largest |alpha_new - alpha_old| of the pass.
    """
    largest = 0.0
    for j in range(n_rounds):
        f = irec[j, R_FEATURE]
        k = irec[j, R_BIN]
        ml = irec[j, R_MISSING_LEFT]
        left = irec[j, R_LEFT]
        right = irec[j, R_RIGHT]
        old = frec[j, R_ALPHA]
        c = voter_correlation(codes[f], k, ml, missing_code, left, right, r, p, block_sums) + old
        sums[:] = 0.0
        sums[SUM_UI] = max(c, 0.0)
        sums[SUM_UJ] = max(-c, 0.0)
        new = step(sums, j + 1, params)
        if new != old:
            add_voter(codes[f], k, ml, missing_code, left, right, new - old, r)
            frec[j, R_ALPHA] = new
            largest = max(largest, abs(new - old))
    return largest


#: The typed, cached re-weighting pass (compiled or loaded on first call, as the loop).
get_reweight = lazy_typed(REWEIGHT_SIG, _reweight)
