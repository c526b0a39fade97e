"""Per-feature histograms of the learner's weights, split by class."""
from numba import prange

from .._config import jit, pjit


@jit
def _histogram_one_feature(codes_f, y, u, hist_f):
    """hist_f[b, c] = sum of u[i] over rows with codes_f[i] == b and y[i] == c."""
    hist_f[:] = 0.0
    for i in range(codes_f.shape[0]):
        hist_f[codes_f[i], y[i]] += u[i]


@pjit
def build_histograms(codes, y, u, hist):
    """All features' histograms, threads over features (each owns its slice: no races).

    codes  uint8[n_features, n_samples]          IN
    y      uint8[n_samples]   class index 0/1    IN
    u      float64[n_samples] learner weights    IN
    hist   float64[n_features, n_bins, 2]        OUT

    Each feature's sums run over rows in order, so the result does not depend on
    the number of threads.
    """
    for f in prange(codes.shape[0]):
        _histogram_one_feature(codes[f], y, u, hist[f])


@jit
def _histogram_one_feature_q(codes_f, y, u, q, hist_f, histq_f):
    """hist_f as _histogram_one_feature, and histq_f[b, c] = sum of q[i] over the same rows, in one pass."""
    hist_f[:] = 0.0
    histq_f[:] = 0.0
    for i in range(codes_f.shape[0]):
        b = codes_f[i]
        c = y[i]
        hist_f[b, c] += u[i]
        histq_f[b, c] += q[i]


@pjit
def build_histograms_q(codes, y, u, q, hist, histq):
    """build_histograms plus a second per-class histogram of q (EBBoost's w**2 / p); threads over features.

    q      float64[n_samples]                    IN
    histq  float64[n_features, n_bins, 2]        OUT
    """
    for f in prange(codes.shape[0]):
        _histogram_one_feature_q(codes[f], y, u, q, hist[f], histq[f])
