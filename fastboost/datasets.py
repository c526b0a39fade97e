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
    half = n_samples // 2
    y = np.concatenate([np.ones(half, np.int64), -np.ones(half, np.int64)])
    if n_samples % 2:
        y = np.append(y, rng.choice([-1, 1]))
    y = y[rng.permutation(n_samples)]
    X = rng.standard_normal((n_samples, n_features))
    X += a * y[:, None]
    return X, y
