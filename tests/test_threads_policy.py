"""How fastboost starts numba's threads: the OpenMP wait policy and the threads of n_jobs=None.

Each case runs in a fresh interpreter: the policy is chosen once, when the thread pool starts.
"""
import json
import os
import subprocess
import sys

import pytest

from fastboost._config import SPIN_COUNT

PROBE = """
import json, os
import numba
import fastboost
from fastboost._config import default_n_jobs, n_threads, wait_policy
with n_threads(None):  # what every fit and prediction starts with
    pass
print(json.dumps({"policy": wait_policy(), "env_after": os.environ.get("OMP_WAIT_POLICY"),
                  "spin_after": os.environ.get("GOMP_SPINCOUNT"),
                  "layer": numba.threading_layer(), "default_n_jobs": default_n_jobs()}))
"""


def probe(**env):
    full = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT",
                                                              "FASTBOOST_WAIT_POLICY", "OMP_NUM_THREADS")}
    full.update(env)
    r = subprocess.run([sys.executable, "-c", PROBE], env=full, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_a_short_spin_unless_asked_and_the_environment_is_left_as_it_was():
    out = probe()
    assert out["policy"] == f"short spin (GOMP_SPINCOUNT={SPIN_COUNT})"
    assert out["spin_after"] is None  # only the pool's start saw it
    out = probe(FASTBOOST_WAIT_POLICY="passive")
    if out["layer"] != "omp":
        pytest.skip(f"numba's threading layer here is {out['layer']}, not GNU OpenMP")
    assert out["policy"] == "passive (FASTBOOST_WAIT_POLICY=passive)"
    assert out["env_after"] is None  # only the pool's start saw it


@pytest.mark.parametrize("env, expected", [
    ({"OMP_WAIT_POLICY": "ACTIVE"}, "as set in the environment (OMP_WAIT_POLICY=ACTIVE)"),
    ({"GOMP_SPINCOUNT": "1000"}, "as set in the environment (GOMP_SPINCOUNT=1000)"),
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


class FakeClock:
    """Readings of (machine busy s, own CPU s, wall s) the governor sees, set by the test."""

    def __init__(self):
        self.busy = self.own = self.wall = 0.0

    def advance(self, wall, own_cores, other_cores):
        self.wall += wall
        self.own += wall * own_cores
        self.busy += wall * (own_cores + other_cores)

    def reading(self):
        return self.busy, self.own, self.wall


def test_the_governor_gives_busy_cores_up_and_takes_them_back(monkeypatch):
    import numba

    from fastboost import _config

    clock = FakeClock()
    monkeypatch.setattr(_config.ThreadGovernor, "_reading", staticmethod(clock.reading))
    monkeypatch.setattr(_config.ThreadGovernor, "_wall", staticmethod(lambda: clock.wall))
    monkeypatch.setattr(_config.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    monkeypatch.delenv("FASTBOOST_ADAPT_THREADS", raising=False)
    runnable = [0]  # other processes' tasks runnable at the moment of a glance
    glances = []
    monkeypatch.setattr(_config.ThreadGovernor, "_runnable_elsewhere",
                        staticmethod(lambda: glances.append(clock.wall) or runnable[0]))
    monkeypatch.setattr(_config, "_IDLE_SEEN", [-float("inf")])
    calls = []
    monkeypatch.setattr(numba, "set_num_threads", calls.append)
    g = _config.ThreadGovernor(2)
    assert g.enabled
    clock.advance(0.01, 2.0, 1.0)
    # 10 ms: too short a window to trust; the first chunk goes by a glance at the runnable tasks (none)
    assert g.adjust() == 2 and g.history == [(0, 2)] and calls == []
    clock.advance(0.2, 1.6, 1.0)  # another process keeps a core busy
    assert g.adjust() == 1 and calls == [1]
    clock.advance(0.3, 1.0, 0.9)
    assert g.adjust() == 1 and calls == [1]
    clock.advance(0.3, 1.0, 0.1)  # it stopped
    assert g.adjust() == 2 and calls == [1, 2]
    assert [t for _, t in g.history] == [2, 1, 1, 2]
    # a short fit beside a busy process: both glances (the fit's start, its first chunk) see it, and only a
    # window long enough to trust changes that
    runnable[0] = 1
    g = _config.ThreadGovernor(2, glance=True)
    assert g.threads == 1 and calls[-1] == 1
    clock.advance(0.01, 1.0, 1.0)
    assert g.adjust() == 1 and len(g.history) == 2
    runnable[0] = 0
    clock.advance(0.01, 1.0, 1.0)
    assert g.adjust() == 1 and len(g.history) == 2  # (no third glance)
    clock.advance(0.2, 1.0, 0.0)
    assert g.adjust() == 2 and calls[-1] == 2
    # a task runnable at one glance only (a kernel thread's moment) is not a busy process: the fewest seen count
    runnable[0] = 1
    g = _config.ThreadGovernor(2, glance=True)
    assert g.threads == 1
    runnable[0] = 0
    clock.advance(0.01, 2.0, 0.0)
    assert g.adjust() == 2 and calls[-1] == 2
    # back-to-back short fits on an idle machine: a glance that saw no other process is not taken again at the
    # first chunk, and holds for the fits that start within MIN_WINDOW of it (it is not renewed by them)
    clock.advance(1.0, 0.0, 0.0)
    del glances[:]
    g = _config.ThreadGovernor(2, glance=True)
    clock.advance(0.01, 2.0, 0.0)
    assert g.adjust() == 2 and glances == [clock.wall - 0.01]
    g = _config.ThreadGovernor(2, glance=True)
    clock.advance(0.01, 2.0, 0.0)
    assert g.adjust() == 2 and len(glances) == 1 and g.history == [(0, 2)]
    clock.advance(0.035, 2.0, 0.0)
    runnable[0] = 1  # a busy process started: the next fit past MIN_WINDOW of the sighting glances and sees it
    g = _config.ThreadGovernor(2, glance=True)
    assert g.threads == 1 and len(glances) == 2
    monkeypatch.setenv("FASTBOOST_ADAPT_THREADS", "0")
    assert not _config.ThreadGovernor(2).enabled
    assert not _config.ThreadGovernor(1).enabled


def test_the_governor_reads_the_machine_only_where_a_window_can_be_trusted(monkeypatch):
    """/proc/stat is read at a fit's start and then only when MIN_WINDOW has passed since the last reading (a small
    fit reads it once); a governor that is not a fit's reads it at its first adjust, so one that never adjusts (a
    prediction's) reads nothing."""
    from fastboost import _config

    clock = FakeClock()
    readings = []
    monkeypatch.setattr(_config.ThreadGovernor, "_reading",
                        staticmethod(lambda: readings.append(clock.wall) or clock.reading()))
    monkeypatch.setattr(_config.ThreadGovernor, "_wall", staticmethod(lambda: clock.wall))
    monkeypatch.setattr(_config.ThreadGovernor, "_runnable_elsewhere", staticmethod(lambda: 0))
    monkeypatch.setattr(_config.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    monkeypatch.delenv("FASTBOOST_ADAPT_THREADS", raising=False)
    g = _config.ThreadGovernor(2)
    assert g.enabled and readings == []
    clock.advance(0.01, 2.0, 0.0)
    g.adjust()
    assert readings == [0.01]
    g = _config.ThreadGovernor(2, glance=True)
    assert readings == [0.01, 0.01]
    for _ in range(4):  # chunks within MIN_WINDOW of the fit's start
        clock.advance(0.01, 2.0, 0.0)
        assert g.adjust() == 2
    assert len(readings) == 2
    clock.advance(0.2, 2.0, 1.0)  # a window to trust: read, and a busy core taken away
    assert g.adjust() == 1 and readings[2:] == [clock.wall]
    monkeypatch.setattr(_config.ThreadGovernor, "_reading", staticmethod(lambda: None))  # no /proc/stat
    g = _config.ThreadGovernor(2)
    assert g.adjust() == 2 and not g.enabled
    assert not _config.ThreadGovernor(2, glance=True).enabled


def test_the_glance_counts_a_busy_process_and_not_this_ones_threads(monkeypatch):
    import time

    from fastboost import _config

    if _config.ThreadGovernor._runnable_elsewhere() is None:
        pytest.skip("no /proc/loadavg here, or this process runs on some of the CPUs only")
    with monkeypatch.context() as m:  # pinned to fewer CPUs than the machine has: the machine's tasks say nothing
        m.setattr(_config.os, "cpu_count", lambda: len(os.sched_getaffinity(0)) + 1)
        assert _config.ThreadGovernor._runnable_elsewhere() is None
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(0.3)
        # the busy process is runnable at every moment; this process's reading thread is not counted
        assert min(_config.ThreadGovernor._runnable_elsewhere() for _ in range(5)) >= 1
    finally:
        busy.kill()
        busy.wait()
