"""QuadBoost's voter re-weighting: one coordinate-descent pass over the voters already kept.

For voter j with outputs h_j and weight alpha_j, its correlation with the rest of
the ensemble is c_j = <h_j, r>_p + alpha_j eta_j (eta_j = <h_j, h_j>_p: 1 for +-1 stumps);
the new weight is the algorithm's own step rule evaluated at (g, eta) = (c_j, eta_j), and
the residuals follow: r <- r - (alpha_new - alpha_old) h_j (spec §6, "Re-weighting").
Each update minimises the objective exactly in alpha_j, so a pass never increases it.
The step rule is handed over as a first-class function, as in the loop. Voters are
stumps (``irec``) or least-squares trees (``tree_i``, ``tree_f``).
"""
from numba import prange, types

from .._config import jit, lazy_typed, pjit
from .._types import N_VALUE, R_ALPHA, R_BIN, R_FEATURE, R_LEFT, R_MISSING_LEFT, R_RIGHT, SUM_ETA, SUM_UI, SUM_UJ
from .loop import STEP_SIG, f8_1d, f8_2d, f8_3d, i8_2d, i8_3d, u1_2d
from .tree import leaf_of_codes
from .update import BLOCK, block_total, stump_output_code


@jit
def voter_output(codes, i, irec, tree_i, tree_f, j, missing_code):
    """Output of voter j (a stump of irec, or tree j of tree_i / tree_f when those hold rounds) on binned row i."""
    if tree_i.shape[0] > 0:
        return tree_f[j, leaf_of_codes(codes, i, tree_i[j], missing_code), N_VALUE]
    return stump_output_code(codes[irec[j, R_FEATURE], i], irec[j, R_BIN], irec[j, R_MISSING_LEFT], missing_code,
                             irec[j, R_LEFT], irec[j, R_RIGHT])


@pjit
def voter_correlation(codes, irec, tree_i, tree_f, j, missing_code, r, p, block_sums):
    """(sum_i p_i h_j(x_i) r_i, sum_i p_i h_j(x_i)**2) on the binned rows (fixed blocks: thread-count independent)."""
    n = r.shape[0]
    nb = -(-n // BLOCK)
    for b in prange(nb):
        acc = 0.0
        eta = 0.0
        for i in range(b * BLOCK, min(n, (b + 1) * BLOCK)):
            h = voter_output(codes, i, irec, tree_i, tree_f, j, missing_code)
            acc += p[i] * r[i] * h
            eta += p[i] * h * h
        block_sums[b, 0] = acc
        block_sums[b, 1] = eta
    return block_total(block_sums, nb, 0), block_total(block_sums, nb, 1)


@pjit
def add_voter(codes, irec, tree_i, tree_f, j, missing_code, delta, r):
    """r_i -= delta * h_j(x_i) on the binned rows."""
    for i in prange(r.shape[0]):
        r[i] -= delta * voter_output(codes, i, irec, tree_i, tree_f, j, missing_code)


REWEIGHT_SIG = types.float64(
    u1_2d, types.int64, i8_2d, f8_2d, i8_3d, f8_3d, types.int64,  # codes, missing_code, irec, frec, trees, n
    f8_1d, f8_1d, types.FunctionType(STEP_SIG), f8_1d, f8_1d, f8_2d,  # r, p, step, params, sums, block_sums
)


def _reweight(codes, missing_code, irec, frec, tree_i, tree_f, n_rounds, r, p, step, params, sums, block_sums):
    """One pass over voters 0 .. n_rounds - 1; updates frec[:, R_ALPHA] and r in place.

    codes   uint8[n_features, n_samples]  IN
    irec, frec: the round records (stumps and weights)  IN / IN-OUT (alpha)
    tree_i, tree_f: the trees (zero rounds for stumps)   IN
    r       float64[n_samples]  IN/OUT residuals y - F
    p       float64[n_samples]  IN     sample-weight distribution
    sums    float64[N_SUMS], block_sums float64[n_blocks, >=2]: scratch
    Returns the largest |alpha_new - alpha_old| of the pass.
    """
    largest = 0.0
    for j in range(n_rounds):
        old = frec[j, R_ALPHA]
        corr, eta = voter_correlation(codes, irec, tree_i, tree_f, j, missing_code, r, p, block_sums)
        c = corr + old * eta
        sums[:] = 0.0
        sums[SUM_UI] = max(c, 0.0)
        sums[SUM_UJ] = max(-c, 0.0)
        sums[SUM_ETA] = eta
        new = step(sums, j + 1, params) if eta > 0.0 else 0.0
        if new != old:
            add_voter(codes, irec, tree_i, tree_f, j, missing_code, new - old, r)
            frec[j, R_ALPHA] = new
            largest = max(largest, abs(new - old))
    return largest


#: The typed, cached re-weighting pass (compiled or loaded on first call, as the loop).
get_reweight = lazy_typed(REWEIGHT_SIG, _reweight)
