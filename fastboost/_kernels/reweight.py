"""QuadBoost's voter re-weighting: one coordinate-descent pass over the voters already kept.

For voter j with outputs h_j and weight alpha_j, its correlation with the rest of
the ensemble is c_j = <h_j, r>_p + alpha_j eta_j (eta_j = <h_j, h_j>_p: 1 for +-1 stumps);
the new weight is the algorithm's own step rule evaluated at (g, eta) = (c_j, eta_j), and
the residuals follow: r <- r - (alpha_new - alpha_old) h_j.
Each update minimises the objective exactly in alpha_j, so a pass never increases it.
The step rule is handed over as a first-class function, as in the loop. Voters are
stumps (``model.rounds``) or least-squares trees (``model.nodes``).
"""
from numba import prange, types

from .._config import jit, pjit, typed
from .signatures import by_codes, config_t, f8_1d, f8_2d, model_t, step_fn_t, sums_1d
from .tree import leaf_of_codes
from .update import BLOCK, block_total, stump_output_code


@jit
def kept_weight(new, config):
    """A voter's new weight as a pass keeps it: under monotone constraints at least 0 (a negative weight would
    turn the voter against its constraints; the best weight >= 0, as the objective is convex in it)."""
    if config.monotone and new < 0.0:
        return 0.0
    return new


@jit
def voter_output(codes, i, model, j, missing_code):
    """Output of voter j (stump j of model.rounds, or tree j of model.nodes when that holds trees) on binned row i."""
    if model.nodes.shape[0] > 0:
        tree = model.nodes[j]
        return tree[leaf_of_codes(codes, i, tree, missing_code)].value
    r = model.rounds[j]
    return stump_output_code(codes[r.feature, i], r.bin, r.missing_left, missing_code, r.left, r.right,
                             r.categorical != 0, r.cat_left)


@pjit
def voter_correlation(codes, model, j, missing_code, r, p, block_sums):
    """(sum_i p_i h_j(x_i) r_i, sum_i p_i h_j(x_i)**2) on the binned rows (fixed blocks: thread-count independent)."""
    n = r.shape[0]
    nb = -(-n // BLOCK)
    for b in prange(nb):
        acc = 0.0
        eta = 0.0
        for i in range(b * BLOCK, min(n, (b + 1) * BLOCK)):
            h = voter_output(codes, i, model, j, missing_code)
            acc += p[i] * r[i] * h
            eta += p[i] * h * h
        block_sums[b, 0] = acc
        block_sums[b, 1] = eta
    return block_total(block_sums, nb, 0), block_total(block_sums, nb, 1)


@pjit
def add_voter(codes, model, j, missing_code, delta, r):
    """r_i -= delta * h_j(x_i) on the binned rows."""
    for i in prange(r.shape[0]):
        r[i] -= delta * voter_output(codes, i, model, j, missing_code)


REWEIGHT_SIG = by_codes(lambda train, valid: types.float64(
    train, config_t, model_t, types.int64, f8_1d, step_fn_t, sums_1d, f8_2d))


def _reweight(data, config, model, n_rounds, r, step, sums, block_sums):
    """One pass over voters 0 .. n_rounds - 1; updates model.rounds[:n_rounds].alpha and r in place.

    data    TrainData (codes, p)  IN
    model   the kept voters (stumps, or trees in model.nodes) and their weights  IN / IN-OUT (alpha)
    r       float64[n_samples]  IN/OUT residuals y - F
    step    the algorithm's step rule, evaluated at (g, eta) = (c_j, eta_j)
    sums    SUMS_DTYPE[1], block_sums float64[n_blocks, >=2]: scratch
    Returns the largest |alpha_new - alpha_old| of the pass.
    """
    largest = 0.0
    s = sums[0]
    for j in range(n_rounds):
        old = model.rounds[j].alpha
        corr, eta = voter_correlation(data.codes, model, j, config.missing_code, r, data.p, block_sums)
        c = corr + old * eta
        s.ui = max(c, 0.0)
        s.uj = max(-c, 0.0)
        s.wi = 0.0
        s.wj = 0.0
        s.qi = 0.0
        s.qj = 0.0
        s.eta = eta
        s.z = 0.0
        new = kept_weight(step(s, j + 1, config) if eta > 0.0 else 0.0, config)
        if new != old:
            add_voter(data.codes, model, j, config.missing_code, new - old, r)
            model.rounds[j].alpha = new
            largest = max(largest, abs(new - old))
    return largest


#: The typed, cached re-weighting pass (compiled or loaded on first use, as the loop).
reweight = typed(REWEIGHT_SIG, _reweight, name="reweight")
