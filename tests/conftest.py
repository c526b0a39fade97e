import importlib.util
import os
import pathlib
import sys

import numpy as np
import pytest

SCRIPTS = pathlib.Path(__file__).resolve().parents[1] / "scripts"

# scikit-learn's check_array_api_input (numpy namespace) runs only when SciPy's
# array-API mode is on; it must be set before SciPy is first imported.
os.environ.setdefault("SCIPY_ARRAY_API", "1")

# With the tests spread over one process per core, OpenMP threads that spin between parallel loops take the
# core another process is using: let them sleep at once (fastboost reads this when its threads start; the
# tests of the wait policy run their own processes with an environment of their own).
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.setdefault("FASTBOOST_WAIT_POLICY", "passive")


@pytest.fixture(scope="module")
def replay_data():
    """Integer-valued features (<= 10 distinct values) with a few NaNs; n = 256 keeps 1/n exact."""
    rng = np.random.default_rng(2024)
    n, d = 256, 5
    X = rng.integers(0, 10, (n, d)).astype(np.float64)
    X[:, 4] = rng.integers(0, 3, n)
    X[rng.random((n, d)) < 0.06] = np.nan
    X[:, 2][rng.random(n) < 0.3] = np.nan  # one feature with many NaNs
    score = np.nan_to_num(X[:, 0], nan=4.5) - np.nan_to_num(X[:, 1], nan=4.5) + rng.normal(0, 3, n)
    score += np.where(np.isnan(X[:, 2]), 2.0, 0.0)
    y = np.where(score > 0, 1, -1)
    return X, y


def load_script(name):
    """The module of ``scripts/<name>.py`` (the scripts are not a package), loaded under its own name."""
    spec = importlib.util.spec_from_file_location(f"{name}_script", SCRIPTS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    path = list(sys.path)
    try:
        spec.loader.exec_module(module)
    finally:  # a script puts the checkout first on sys.path; processes this one starts later (Dask's workers)
        sys.path[:] = path  # would inherit it and import (and compile) a second copy of fastboost
    return module
