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


def pytest_configure(config):
    """With several test processes and no compiled kernels in numba's cache (a fresh install), compile them
    once, as ``fastboost compile`` does (its groups in parallel), before the processes start: each would
    otherwise compile the same kernels for its own first fits. Later runs find them cached and skip this."""
    if os.environ.get("PYTEST_XDIST_WORKER") or not getattr(config.option, "numprocesses", None):
        return
    import subprocess
    import time

    from fastboost import _cache

    dirs = _cache.user_cache_dirs() or [_cache._PACKAGE / "_kernels" / "__pycache__"]
    if any(any(d.glob("*.nbi")) for d in dirs if d.is_dir()):  # (some kernels cached: not a fresh install)
        return
    start = time.perf_counter()
    where = str(_cache._PACKAGE.parent)  # (the fastboost these processes import, not one in the working directory)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([where, *filter(None, [os.environ.get("PYTHONPATH")])])}
    out = subprocess.run([sys.executable, "-m", "fastboost", "compile"], capture_output=True, text=True, env=env,
                         cwd=where)
    done = f"in {time.perf_counter() - start:.0f} s" if out.returncode == 0 else (
        f"failed ({(out.stderr or out.stdout).strip().splitlines()[-1:]}); the test processes compile them")
    sys.stderr.write(f"fastboost compile (the kernels, once for every test process): {done}\n")


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
