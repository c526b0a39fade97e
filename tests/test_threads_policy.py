"""How fastboost starts numba's threads: the OpenMP wait policy and the threads of n_jobs=None.

Each case runs in a fresh interpreter: the policy is chosen once, when the thread pool starts.
"""
import json
import os
import subprocess
import sys

import pytest

PROBE = """
import json, os
import numba
import fastboost
from fastboost._config import default_n_jobs, n_threads, wait_policy
with n_threads(None):  # what every fit and prediction starts with
    pass
print(json.dumps({"policy": wait_policy(), "env_after": os.environ.get("OMP_WAIT_POLICY"),
                  "layer": numba.threading_layer(), "default_n_jobs": default_n_jobs()}))
"""


def probe(**env):
    full = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT",
                                                              "FASTBOOST_WAIT_POLICY", "OMP_NUM_THREADS")}
    full.update(env)
    r = subprocess.run([sys.executable, "-c", PROBE], env=full, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_passive_by_default_and_the_environment_is_left_as_it_was():
    out = probe()
    if out["layer"] != "omp":
        pytest.skip(f"numba's threading layer here is {out['layer']}, not GNU OpenMP")
    assert out["policy"] == "passive (set by fastboost)"
    assert out["env_after"] is None  # only the pool's start saw it


@pytest.mark.parametrize("env, expected", [
    ({"OMP_WAIT_POLICY": "ACTIVE"}, "as set in the environment (OMP_WAIT_POLICY=ACTIVE)"),
    ({"GOMP_SPINCOUNT": "1000"}, "as set in the environment (GOMP_SPINCOUNT=1000)"),
    ({"FASTBOOST_WAIT_POLICY": "active"}, "OpenMP's default (FASTBOOST_WAIT_POLICY=active)"),
])
def test_a_policy_the_user_chose_is_kept(env, expected):
    out = probe(**env)
    assert out["policy"] == expected
    assert out["env_after"] == env.get("OMP_WAIT_POLICY")


def test_n_jobs_none_follows_omp_num_threads_and_the_cpu_affinity():
    import numba

    assert probe(OMP_NUM_THREADS="1")["default_n_jobs"] == 1
    expected = min(numba.config.NUMBA_NUM_THREADS, len(os.sched_getaffinity(0)))
    assert probe()["default_n_jobs"] == expected
    assert probe(OMP_NUM_THREADS="junk")["default_n_jobs"] == expected
