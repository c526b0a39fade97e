"""Breiman's generators (see docs/algorithms.md): moments, balance, determinism, Bayes errors.

Expected moments and reference Bayes errors are computed here independently of
fastboost.datasets (waves, centres and densities are re-derived in this file), so
a wrong constant shared by a generator and its Bayes helper is still caught.
"""
import numpy as np
import pytest
from scipy import integrate
from scipy.special import log_ndtr
from scipy.stats import ncx2, norm

from fastboost.datasets import (
    bayes_predict_ringnorm,
    bayes_predict_threenorm,
    bayes_predict_twonorm,
    bayes_predict_waveform,
    make_ringnorm,
    make_threenorm,
    make_twonorm,
    make_waveform,
)

N_MC = 100_000
Z = 5.0  # moment tolerance in standard errors

# ----------------------------------------------------------------------------- references

_m = np.arange(1, 22, dtype=float)
H1 = np.maximum(6 - np.abs(_m - 11), 0)  # peak at 11
H2 = np.maximum(6 - np.abs((_m - 4) - 11), 0)  # h1(m - 4): peak at 15
H3 = np.maximum(6 - np.abs((_m + 4) - 11), 0)  # h1(m + 4): peak at 7
WAVES = {1: (H1, H2), 2: (H1, H3), 3: (H2, H3)}  # CART class k: u * g + (1 - u) * h + N(0, I)


def _ringnorm_exact(d):
    # Predict +1 iff ||x - (4a/3) 1||^2 > (4/3)(d log 4 + 1/3)  (a = 1/sqrt(d), a^2 d = 1).
    # Class +1, x = 2z: ||z - (2a/3) 1||^2 ~ ncx2(d, 4/9); class -1, x = a 1 + z: ||z - (a/3) 1||^2 ~ ncx2(d, 1/9).
    c = (d * np.log(4) + 1 / 3) / 3
    return 0.5 * (ncx2.cdf(c, d, 4 / 9) + ncx2.sf(4 * c, d, 1 / 9))


def _threenorm_exact():
    # Even d: t1 = sum x / sqrt(d), t2 = sum (-1)^j x_j / sqrt(d) are independent, unit variance;
    # class +1: t1 ~ N(+-2, 1), t2 ~ N(0, 1); class -1: t1 ~ N(0, 1), t2 ~ N(2, 1).
    # Rule: +1 iff log cosh(2 t1) > 2 t2.
    def c(t):
        return (np.logaddexp(2 * t, -2 * t) - np.log(2)) / 2

    e_pos = integrate.quad(lambda t: 0.5 * (norm.pdf(t - 2) + norm.pdf(t + 2)) * norm.sf(c(t)), -np.inf, np.inf)[0]
    e_neg = integrate.quad(lambda t: norm.pdf(t) * norm.cdf(c(t) - 2), -np.inf, np.inf)[0]
    return 0.5 * (e_pos + e_neg)


def _waveform_log_densities_exact(X):
    """Closed form of log int_0^1 phi(x - h - u (g - h)) du (up to a common constant)."""
    out = []
    for k in (1, 2, 3):
        g, h = WAVES[k]
        d = g - h
        dd = d @ d
        R = X - h
        s0 = np.einsum("ij,ij->i", R, R)
        s1 = R @ d
        mu, sd = s1 / dd, 1 / np.sqrt(dd)
        la, lb = log_ndtr((1 - mu) / sd), log_ndtr(-mu / sd)
        out.append(-(s0 - s1**2 / dd) / 2 + 0.5 * np.log(2 * np.pi / dd) + la + np.log1p(-np.exp(lb - la)))
    return np.stack(out, axis=1)


def _check_moments(X, mean, cov, label):
    """Sample mean / covariance equal `mean` / `cov` within Z standard errors, entrywise.

    The standard error of each covariance entry is estimated from the data
    (fourth moments), so it is valid for non-Gaussian classes too.
    """
    n = X.shape[0]
    m = X.mean(axis=0)
    se_m = X.std(axis=0, ddof=1) / np.sqrt(n)
    zm = np.abs(m - mean) / se_m
    assert zm.max() < Z, f"{label}: mean off by {zm.max():.1f} s.e. at feature {zm.argmax()}"
    C = X - m
    S = C.T @ C / (n - 1)
    Q = C * C
    var_prod = np.maximum(Q.T @ Q / n - S**2, 1e-12)
    zc = np.abs(S - cov) / np.sqrt(var_prod / n)
    i, j = np.unravel_index(zc.argmax(), zc.shape)
    assert zc.max() < Z, f"{label}: cov[{i},{j}] = {S[i, j]:.4f}, expected {cov[i, j]:.4f} ({zc.max():.1f} s.e.)"


def _check_error(err, n, reference, extra, label):
    se = np.sqrt(reference * (1 - reference) / n)
    tol = 4 * se + extra
    assert abs(err - reference) <= tol, f"{label}: Bayes error {err:.4%}, expected {reference:.4%} +- {tol:.4%}"


GENERATORS_PM = [make_twonorm, make_ringnorm, make_threenorm]


# ----------------------------------------------------------------------------- shapes, balance, determinism


@pytest.mark.parametrize("gen", GENERATORS_PM)
@pytest.mark.parametrize("n", [1, 2, 101, 1000])
def test_pm_shapes_dtypes_balance(gen, n):
    X, y = gen(n, n_features=7, random_state=3)
    assert X.shape == (n, 7) and X.dtype == np.float64 and np.all(np.isfinite(X))
    assert y.shape == (n,) and y.dtype == np.int64
    assert set(np.unique(y)) <= {-1, 1}
    counts = sorted([(y == 1).sum(), (y == -1).sum()])
    assert counts == [n // 2, n - n // 2]


@pytest.mark.parametrize("gen", GENERATORS_PM)
def test_pm_same_label_convention_as_twonorm(gen):
    # Same labelling stream as make_twonorm: exactly n // 2 per class, odd one random, random order.
    for seed in range(5):
        _, y_ref = make_twonorm(51, n_features=4, random_state=seed)
        _, y = gen(51, n_features=4, random_state=seed)
        np.testing.assert_array_equal(y, y_ref)
    odd = {int(gen(3, n_features=2, random_state=s)[1].sum()) for s in range(40)}
    assert odd == {-1, 1}  # the odd row goes to either class
    _, y = gen(1000, n_features=2, random_state=0)
    assert 0 < np.argmax(y != y[0]) < 20  # shuffled, not blocks


@pytest.mark.parametrize("gen", [*GENERATORS_PM, make_waveform])
def test_determinism(gen):
    a = gen(200, random_state=11)
    b = gen(200, random_state=11)
    c = gen(200, random_state=np.random.RandomState(11))
    d = gen(200, random_state=12)
    for u, v in zip(a, b):
        np.testing.assert_array_equal(u, v)
    for u, v in zip(a, c):
        np.testing.assert_array_equal(u, v)
    assert not np.array_equal(a[0], d[0])
    X1, _ = gen(50)
    X2, _ = gen(50)
    assert not np.array_equal(X1, X2)


def test_waveform_shapes_dtypes_and_priors():
    X, y = make_waveform(N_MC, random_state=0)
    assert X.shape == (N_MC, 21) and X.dtype == np.float64 and np.all(np.isfinite(X))
    assert y.dtype == np.int64 and set(np.unique(y)) == {1, 2, 3}
    se = np.sqrt((1 / 3) * (2 / 3) / N_MC)
    for k in (1, 2, 3):
        assert abs((y == k).mean() - 1 / 3) < Z * se, k
    X1, y1 = make_waveform(1, random_state=0)
    assert X1.shape == (1, 21) and y1.shape == (1,)


@pytest.mark.parametrize("k", [1, 2, 3])
def test_waveform_binary_relabels_same_data(k):
    X, y = make_waveform(3000, random_state=5)
    Xb, yb = make_waveform(3000, random_state=5, binary=True, positive_class=k)
    np.testing.assert_array_equal(Xb, X)
    assert yb.dtype == np.int64
    np.testing.assert_array_equal(yb, np.where(y == k, 1, -1))
    assert set(np.unique(yb)) == {-1, 1}


# ----------------------------------------------------------------------------- class-conditional moments


@pytest.mark.parametrize("d", [20, 5])
def test_twonorm_moments(d):
    X, y = make_twonorm(N_MC, n_features=d, random_state=1)
    a = 2 / np.sqrt(d)
    _check_moments(X[y == 1], np.full(d, a), np.eye(d), "twonorm +1")
    _check_moments(X[y == -1], np.full(d, -a), np.eye(d), "twonorm -1")


@pytest.mark.parametrize("d", [20, 5])
def test_ringnorm_moments(d):
    X, y = make_ringnorm(N_MC, n_features=d, random_state=2)
    a = 1 / np.sqrt(d)
    _check_moments(X[y == 1], np.zeros(d), 4 * np.eye(d), "ringnorm +1 = N(0, 4I)")
    _check_moments(X[y == -1], np.full(d, a), np.eye(d), "ringnorm -1 = N(a1, I)")


@pytest.mark.parametrize("d", [20, 5])
def test_threenorm_moments(d):
    X, y = make_threenorm(N_MC, n_features=d, random_state=3)
    a = 2 / np.sqrt(d)
    # +1: equal mixture of N(+-a 1, I): mean 0, covariance I + a^2 1 1^T.
    _check_moments(X[y == 1], np.zeros(d), np.eye(d) + a * a, "threenorm +1")
    alt = a * (-1.0) ** np.arange(d)  # (a, -a, a, ...)
    _check_moments(X[y == -1], alt, np.eye(d), "threenorm -1")
    # the mixture really has two components at +-a 1 (not, e.g., a Gaussian with that covariance)
    s = X[y == 1].mean(axis=1) / a  # ~ N(+-1, 1 / (a^2 d)) = N(+-1, 1/4)
    assert abs(np.mean(s > 0) - 0.5) < Z * np.sqrt(0.25 / s.size)
    # E|N(1, 1/4)| = 0.5 sqrt(2/pi) exp(-2) + 1 - 2 Phi(-2) ~ 1.0085 (a single N(0, I + a^2 11^T) would give ~0.80)
    expected = 0.5 * np.sqrt(2 / np.pi) * np.exp(-2) + 1 - 2 * norm.cdf(-2)
    assert abs(np.mean(np.abs(s)) - expected) < Z * np.abs(s).std() / np.sqrt(s.size)


def test_waveform_moments():
    X, y = make_waveform(N_MC, random_state=4)
    for k in (1, 2, 3):
        g, h = WAVES[k]
        d = g - h
        # x = h + u d + eps, u ~ U(0, 1): mean (g + h) / 2, covariance I + d d^T / 12.
        _check_moments(X[y == k], (g + h) / 2, np.eye(21) + np.outer(d, d) / 12, f"waveform class {k}")


# ----------------------------------------------------------------------------- Bayes rules

TWONORM_EXACT = norm.cdf(-2)  # 2.275%
RINGNORM_EXACT = _ringnorm_exact(20)  # 1.497%
THREENORM_EXACT = _threenorm_exact()  # 10.46%


def test_reference_values_match_spec():
    assert abs(TWONORM_EXACT - 0.0228) < 5e-5
    assert abs(RINGNORM_EXACT - 0.0149) < 1e-3
    assert abs(THREENORM_EXACT - 0.105) < 1e-3


@pytest.mark.parametrize(
    "gen, rule, spec, exact, seed",
    [
        (make_twonorm, bayes_predict_twonorm, 0.0228, TWONORM_EXACT, 10),
        (make_ringnorm, bayes_predict_ringnorm, 0.0149, RINGNORM_EXACT, 11),
        (make_threenorm, bayes_predict_threenorm, 0.105, THREENORM_EXACT, 12),
    ],
    ids=["twonorm", "ringnorm", "threenorm"],
)
def test_bayes_error_pm(gen, rule, spec, exact, seed):
    X, y = gen(N_MC, random_state=seed)
    pred = rule(X)
    assert pred.dtype == np.int64 and set(np.unique(pred)) <= {-1, 1}
    err = np.mean(pred != y)
    _check_error(err, N_MC, spec, 0.003, "vs spec MC")
    _check_error(err, N_MC, exact, 0.0, "vs exact")


@pytest.fixture(scope="module")
def waveform_sample():
    return make_waveform(N_MC, random_state=13)


def test_bayes_error_waveform_3class(waveform_sample):
    X, y = waveform_sample
    pred = bayes_predict_waveform(X)
    assert pred.dtype == np.int64 and set(np.unique(pred)) == {1, 2, 3}
    _check_error(np.mean(pred != y), N_MC, 0.132, 0.003, "waveform 3-class")


def test_bayes_error_waveform_binary_class1(waveform_sample):
    X, y = waveform_sample
    pred = bayes_predict_waveform(X, binary=True, positive_class=1)
    assert pred.dtype == np.int64 and set(np.unique(pred)) == {-1, 1}
    _check_error(np.mean(pred != np.where(y == 1, 1, -1)), N_MC, 0.081, 0.003, "waveform class 1 vs rest")


def test_bayes_rules_match_densities():
    """Each helper equals the rule 'larger class density' computed from scratch here."""
    rng = np.random.RandomState(0)
    d = 20
    X = rng.standard_normal((5000, d)) * rng.uniform(0.5, 2.5, size=(5000, 1)) + rng.uniform(-0.5, 0.5, size=(5000, 1))

    def logphi(X, mean, sd=1.0):
        return -0.5 * np.sum(((X - mean) / sd) ** 2, axis=1) - X.shape[1] * np.log(sd)

    a2 = 2 / np.sqrt(d)
    ref = np.where(logphi(X, a2) >= logphi(X, -a2), 1, -1)
    np.testing.assert_array_equal(bayes_predict_twonorm(X), ref)

    a1 = 1 / np.sqrt(d)
    ref = np.where(logphi(X, 0.0, 2.0) > logphi(X, a1), 1, -1)
    np.testing.assert_array_equal(bayes_predict_ringnorm(X), ref)

    alt = a2 * (-1.0) ** np.arange(d)
    ref = np.where(np.logaddexp(logphi(X, a2), logphi(X, -a2)) - np.log(2) > logphi(X, alt), 1, -1)
    np.testing.assert_array_equal(bayes_predict_threenorm(X), ref)


def test_waveform_bayes_matches_closed_form():
    X, _ = make_waveform(10_000, random_state=21)
    X[:1000] += np.random.RandomState(1).standard_normal((1000, 21))  # also off-distribution points
    # points near the centre of the triangle h1, h2, h3, where all three densities compete (there
    # "largest density" and "posterior > 1/2" differ)
    X = np.vstack([X, (H1 + H2 + H3) / 3 + np.random.RandomState(2).standard_normal((2000, 21))])
    L = _waveform_log_densities_exact(X)
    sure = 0.1  # decisions with a log-density margin above this must not depend on the u-grid
    pred = bayes_predict_waveform(X)
    top2 = np.sort(L, axis=1)[:, -2:]
    clear = top2[:, 1] - top2[:, 0] > sure
    np.testing.assert_array_equal(pred[clear], L.argmax(axis=1)[clear] + 1)
    assert np.mean(pred == L.argmax(axis=1) + 1) > 0.999
    for k in (1, 2, 3):
        others = np.delete(L, k - 1, axis=1)
        margin = L[:, k - 1] - np.logaddexp(others[:, 0], others[:, 1])  # log posterior odds of class k
        pb = bayes_predict_waveform(X, binary=True, positive_class=k)
        clear = np.abs(margin) > sure
        np.testing.assert_array_equal(pb[clear], np.where(margin > 0, 1, -1)[clear], err_msg=f"class {k}")
        assert np.mean(pb == np.where(margin > 0, 1, -1)) > 0.999, k
        assert np.all(pred[pb == 1] == k)  # posterior > 1/2 implies the 3-class argmax


# ----------------------------------------------------------------------------- bad arguments


@pytest.mark.parametrize("gen", [*GENERATORS_PM, make_waveform])
@pytest.mark.parametrize("n", [0, -3])
def test_bad_n_samples(gen, n):
    with pytest.raises(ValueError):
        gen(n)


@pytest.mark.parametrize("gen", [*GENERATORS_PM, make_waveform])
def test_non_integer_n_samples(gen):
    with pytest.raises(TypeError):
        gen(10.0)


@pytest.mark.parametrize("gen", GENERATORS_PM)
def test_bad_n_features(gen):
    with pytest.raises(ValueError):
        gen(10, n_features=0)
    with pytest.raises(TypeError):
        gen(10, n_features=2.0)


def test_threenorm_needs_two_features():
    with pytest.raises(ValueError):
        make_threenorm(10, n_features=1)
    X, _ = make_threenorm(10, n_features=2, random_state=0)
    assert X.shape == (10, 2)
    assert make_twonorm(4, n_features=1)[0].shape == (4, 1)
    assert make_ringnorm(4, n_features=1)[0].shape == (4, 1)


@pytest.mark.parametrize("pc", [0, 4, -1, "1", 1.0, True, None])
def test_bad_positive_class(pc):
    with pytest.raises(ValueError):
        make_waveform(10, binary=True, positive_class=pc)
    with pytest.raises(ValueError):
        bayes_predict_waveform(np.zeros((2, 21)), binary=True, positive_class=pc)


def test_positive_class_numpy_int_ok_and_bad_binary():
    _, y = make_waveform(10, random_state=0, binary=True, positive_class=np.int64(2))
    assert set(np.unique(y)) <= {-1, 1}
    with pytest.raises(TypeError):
        make_waveform(10, binary="yes")


def test_bayes_helpers_bad_shapes():
    with pytest.raises(ValueError):
        bayes_predict_waveform(np.zeros((3, 20)))
    with pytest.raises(ValueError):
        bayes_predict_threenorm(np.zeros((3, 1)))
    for rule in (bayes_predict_twonorm, bayes_predict_ringnorm, bayes_predict_threenorm, bayes_predict_waveform):
        with pytest.raises(ValueError):
            rule(np.zeros(21))
