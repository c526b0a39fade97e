"""Synthetic benchmark data (Breiman 1996), generated, never downloaded."""
import numpy as np
from sklearn.utils import check_random_state

from ._validation import check_int


def make_twonorm(n_samples, n_features=20, random_state=None):
    """Breiman's twonorm: two Gaussians N(+a 1, I) and N(-a 1, I), a = 2 / sqrt(n_features).

    Exactly n_samples // 2 rows of each class (the odd one, if any, to a random
    class), in random order. Returns X float64[n_samples, n_features] and
    y int64[n_samples] in {-1, +1}, +1 for the class centred at +a 1.
    The Bayes rule is sign(sum_j x_j), with error Phi(-2) ~ 2.28% at 20 features.
    """
    check_int(n_samples, "n_samples", 1)
    check_int(n_features, "n_features", 1)
    rng = check_random_state(random_state)
    a = 2.0 / np.sqrt(n_features)
    y = _balanced_labels(n_samples, rng)
    X = rng.standard_normal((n_samples, n_features))
    X += a * y[:, None]
    return X, y


def _balanced_labels(n_samples, rng):
    # Same convention (and random stream) as make_twonorm: n // 2 of each class,
    # the odd one to a random class, then a random permutation.
    half = n_samples // 2
    y = np.concatenate([np.ones(half, np.int64), -np.ones(half, np.int64)])
    if n_samples % 2:
        y = np.append(y, rng.choice([-1, 1]))
    return y[rng.permutation(n_samples)]


def _as_2d_float(X, name, n_features=None, min_features=1):
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"{name} expects a 2-D array, got {X.ndim}-D (shape={X.shape}).")
    if n_features is not None and X.shape[1] != n_features:
        raise ValueError(f"{name} expects {n_features} features, got {X.shape[1]}.")
    if X.shape[1] < min_features:
        raise ValueError(f"{name} expects at least {min_features} feature(s), got {X.shape[1]}.")
    return X


def make_ringnorm(n_samples, n_features=20, random_state=None):
    """Breiman's ringnorm: N(0, 4 I) (sd 2) against N(a 1, I), a = 1 / sqrt(n_features).

    y = +1 (class 1) ~ N(0, 4 I_d); y = -1 (class 2) ~ N(a 1, I_d).
    Exactly n_samples // 2 rows of each class (the odd one, if any, to a random
    class), in random order, as in make_twonorm. Returns X float64[n_samples,
    n_features] and y int64[n_samples] in {-1, +1}.
    The Bayes rule predicts +1 iff ||x||^2 / 4 + d log 4 < ||x - a 1||^2
    (see bayes_predict_ringnorm); its error is about 1.49% at 20 features.
    """
    check_int(n_samples, "n_samples", 1)
    check_int(n_features, "n_features", 1)
    rng = check_random_state(random_state)
    a = 1.0 / np.sqrt(n_features)
    y = _balanced_labels(n_samples, rng)
    X = rng.standard_normal((n_samples, n_features))
    pos = y == 1
    X *= np.where(pos, 2.0, 1.0)[:, None]
    X += np.where(pos, 0.0, a)[:, None]
    return X, y


def make_threenorm(n_samples, n_features=20, random_state=None):
    """Breiman's threenorm, a = 2 / sqrt(n_features).

    y = +1 (class 1) ~ 1/2 N(a 1, I_d) + 1/2 N(-a 1, I_d) (each row picks its
    component by a fair coin); y = -1 (class 2) ~ N((a, -a, a, -a, ...), I_d).
    Exactly n_samples // 2 rows of each class (the odd one, if any, to a random
    class), in random order, as in make_twonorm. Returns X float64[n_samples,
    n_features] and y int64[n_samples] in {-1, +1}. n_features must be >= 2.
    The Bayes rule predicts +1 iff log cosh(a sum_j x_j) > sum_j (-1)^j a x_j
    (see bayes_predict_threenorm); its error is about 10.5% at 20 features.
    """
    check_int(n_samples, "n_samples", 1)
    check_int(n_features, "n_features", 2)
    rng = check_random_state(random_state)
    a = 2.0 / np.sqrt(n_features)
    y = _balanced_labels(n_samples, rng)
    component = 2 * rng.randint(0, 2, size=n_samples) - 1  # +-1, fair coin per row
    alternating = np.where(np.arange(n_features) % 2 == 0, a, -a)
    X = rng.standard_normal((n_samples, n_features))
    pos = y == 1
    X += np.where(pos[:, None], (a * component)[:, None], alternating[None, :])
    return X, y


# Waveform base waves, m = 1..21: h1 peaks at 11, h2(m) = h1(m - 4) at 15, h3(m) = h1(m + 4) at 7.
_M = np.arange(1, 22, dtype=np.float64)
_H1 = np.maximum(6.0 - np.abs(_M - 11.0), 0.0)
_H2 = np.maximum(6.0 - np.abs(_M - 15.0), 0.0)
_H3 = np.maximum(6.0 - np.abs(_M - 7.0), 0.0)
# CART class k: x = u * _WAVE_PAIRS[k-1, 0] + (1 - u) * _WAVE_PAIRS[k-1, 1] + noise.
_WAVE_PAIRS = np.stack([np.stack([_H1, _H2]), np.stack([_H1, _H3]), np.stack([_H2, _H3])])
_WAVE_PAIRS.setflags(write=False)


def _check_positive_class(positive_class):
    if (isinstance(positive_class, (bool, np.bool_)) or not isinstance(positive_class, (int, np.integer))
            or positive_class not in (1, 2, 3)):
        raise ValueError(f"positive_class must be the CART class 1, 2 or 3, got {positive_class!r}.")
    return int(positive_class)


def _check_binary(binary):
    if not isinstance(binary, (bool, np.bool_)):
        raise TypeError(f"binary must be a bool, got {binary!r} of type {type(binary).__name__}.")
    return bool(binary)


def make_waveform(n_samples, random_state=None, binary=False, positive_class=1):
    """Breiman's waveform (CART book), 21 features, 3 classes with equal priors.

    Base waves for m = 1..21: h1(m) = max(6 - |m - 11|, 0), h2(m) = h1(m - 4),
    h3(m) = h1(m + 4) (peaks at m = 11, 15 and 7). Each row draws its class
    uniformly from {1, 2, 3} (so the class counts are random), u ~ U(0, 1) and
    eps_m ~ N(0, 1) iid, then
      class 1: x_m = u h1(m) + (1 - u) h2(m) + eps_m   (peaks 11 and 15)
      class 2: x_m = u h1(m) + (1 - u) h3(m) + eps_m   (peaks 11 and 7)
      class 3: x_m = u h2(m) + (1 - u) h3(m) + eps_m   (peaks 15 and 7)

    Label correspondence: y is the CART class. David Aha's UCI generator calls
    these types 2, 1, 0 (Aha type k = CART class 3 - k: type 0 has peaks 7 and
    15, type 1 peaks 7 and 11, type 2 peaks 15 and 11), and R mlbench's class
    k + 1 is Aha type k, i.e. mlbench classes 1, 2, 3 = CART classes 3, 2, 1.

    Returns X float64[n_samples, 21] and y int64[n_samples]: y in {1, 2, 3} if
    binary is False; if binary is True, y in {-1, +1} with +1 for CART class
    positive_class and -1 for the other two (X is the same as with binary=False
    for the same random_state). The Bayes error (bayes_predict_waveform) is about
    13.2% for the 3-class problem and about 8.1%, 8.2% and 9.9% for CART class
    1, 2 and 3 against the rest (Monte Carlo estimates).
    """
    check_int(n_samples, "n_samples", 1)
    binary = _check_binary(binary)
    positive_class = _check_positive_class(positive_class)
    rng = check_random_state(random_state)
    y = rng.randint(1, 4, size=n_samples).astype(np.int64)
    u = rng.random_sample(n_samples)[:, None]
    pairs = _WAVE_PAIRS[y - 1]  # (n, 2, 21)
    X = u * pairs[:, 0] + (1.0 - u) * pairs[:, 1]
    X += rng.standard_normal((n_samples, 21))
    if binary:
        y = np.where(y == positive_class, 1, -1).astype(np.int64)
    return X, y


def bayes_predict_twonorm(X):
    """Bayes rule for make_twonorm (any n_features): sign(sum_j x_j), +1 on ties.

    Error Phi(-2) ~ 2.28%, whatever the number of features.
    """
    X = _as_2d_float(X, "bayes_predict_twonorm")
    return np.where(X.sum(axis=1) >= 0.0, 1, -1).astype(np.int64)


def bayes_predict_ringnorm(X):
    """Bayes rule for make_ringnorm (d = X.shape[1], a = 1 / sqrt(d)).

    +1 (N(0, 4 I)) iff ||x||^2 / 4 + d log 4 < ||x - a 1||^2, else -1. Error ~ 1.49% at d = 20.
    """
    X = _as_2d_float(X, "bayes_predict_ringnorm")
    d = X.shape[1]
    a = 1.0 / np.sqrt(d)
    lhs = np.einsum("ij,ij->i", X, X) / 4.0 + d * np.log(4.0)
    diff = X - a
    rhs = np.einsum("ij,ij->i", diff, diff)
    return np.where(lhs < rhs, 1, -1).astype(np.int64)


def bayes_predict_threenorm(X):
    """Bayes rule for make_threenorm (d = X.shape[1] >= 2, a = 2 / sqrt(d)).

    The class densities share the factor exp(-||x||^2 / 2 - a^2 d / 2), so +1
    iff cosh(a sum_j x_j) > exp(sum_j (-1)^j a x_j) (j from 0), else -1.
    Error ~ 10.5% at d = 20.
    """
    X = _as_2d_float(X, "bayes_predict_threenorm", min_features=2)
    d = X.shape[1]
    a = 2.0 / np.sqrt(d)
    t = a * X.sum(axis=1)
    log_p_pos = np.logaddexp(t, -t) - np.log(2.0)
    alternating = np.where(np.arange(d) % 2 == 0, a, -a)
    log_p_neg = X @ alternating
    return np.where(log_p_pos > log_p_neg, 1, -1).astype(np.int64)


def _waveform_log_densities(X, n_grid=201, chunk=8192):
    """log p(x | CART class k), k = 1, 2, 3, up to a common additive constant.

    p(x | k) = int_0^1 phi_21(x - u g_k - (1 - u) h_k) du with phi_21 the N(0, I)
    density, integrated by the trapezoid rule on n_grid equally spaced u.
    """
    X = _as_2d_float(X, "bayes_predict_waveform", n_features=21)
    grid = np.linspace(0.0, 1.0, n_grid)
    log_w = np.full(n_grid, np.log(1.0 / (n_grid - 1)))
    log_w[[0, -1]] -= np.log(2.0)
    out = np.empty((X.shape[0], 3))
    for k in range(3):  # loop over classes and row blocks, not rows
        g, h = _WAVE_PAIRS[k]
        delta = g - h
        dd = delta @ delta
        for start in range(0, X.shape[0], chunk):
            R = X[start:start + chunk] - h  # x - h; x - h - u delta is the noise
            s0 = np.einsum("ij,ij->i", R, R)
            s1 = R @ delta
            # -||R - u delta||^2 / 2 on the grid, plus the log trapezoid weights
            E = (-0.5 * s0[:, None] + s1[:, None] * grid[None, :]
                 - 0.5 * dd * grid[None, :] ** 2 + log_w[None, :])
            m = E.max(axis=1)
            out[start:start + chunk, k] = m + np.log(np.exp(E - m[:, None]).sum(axis=1))
    return out


def bayes_predict_waveform(X, binary=False, positive_class=1):
    """Bayes rule for make_waveform (equal class priors, X with 21 columns).

    The class-conditional densities are integrals over u in [0, 1] (computed on a
    201-point trapezoid grid). With binary=False returns the CART class
    argmax_k p(x | k) in {1, 2, 3} (error ~ 13.2%); with binary=True returns +1
    iff the posterior of CART class positive_class exceeds 1/2, i.e.
    p(x | positive_class) > sum of the other two densities, else -1 (error ~ 8.1%
    for class 1, 8.2% for class 2, 9.9% for class 3), the coding of
    make_waveform(binary=True, positive_class=...).
    """
    binary = _check_binary(binary)
    positive_class = _check_positive_class(positive_class)
    L = _waveform_log_densities(X)
    if not binary:
        return (np.argmax(L, axis=1) + 1).astype(np.int64)
    k = positive_class - 1
    others = np.delete(L, k, axis=1)
    return np.where(L[:, k] > np.logaddexp(others[:, 0], others[:, 1]), 1, -1).astype(np.int64)
