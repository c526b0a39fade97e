"""numba's on-disk cache: stale entries are dropped, and cached parallel code loads in a new process."""
import os
import shutil
import subprocess
import sys

import pytest

import fastboost._cache as cache


def test_cache_files_dropped_exactly_when_kernel_sources_change(tmp_path, monkeypatch):
    pkg = tmp_path / "pkg"
    for name in cache._SOURCES:
        (pkg / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(cache._PACKAGE / name, pkg / name)
    monkeypatch.setattr(cache, "_PACKAGE", pkg)
    monkeypatch.setattr(cache, "_STAMP", pkg / "__pycache__" / "kernels.sha256")
    entry = pkg / "_kernels" / "__pycache__" / "loop.boost-1.py311.nbi"
    entry.parent.mkdir(parents=True)

    entry.write_text("old")
    cache.ensure_fresh_cache()  # no stamp yet: unknown provenance, dropped
    assert not entry.exists() and cache._STAMP.exists()

    entry.write_text("current")
    cache.ensure_fresh_cache()  # same sources: kept
    assert entry.exists()

    (pkg / "_kernels" / "update.py").write_text((pkg / "_kernels" / "update.py").read_text() + "\n# edit\n")
    cache.ensure_fresh_cache()  # a callee of the loop changed: dropped
    assert not entry.exists()


SCRIPT = """
import numpy as np
from fastboost import AdaBoostClassifier, VadaBoostClassifier
X = np.random.default_rng(0).normal(size=(500, 4)); y = X[:, 0] > 0
for est in (AdaBoostClassifier(5), VadaBoostClassifier(5)):
    assert est.fit(X, y).score(X, y) > 0.9
print("ok")
"""


@pytest.mark.slow  # two fresh processes, the first compiles every kernel cold (about 90 s)
def test_fresh_process_loads_the_cached_kernels(tmp_path):
    """A process that only loads the kernels from numba's cache works. This guards the import
    path that once aborted with "LLVM ERROR: Symbol not found: allocate_sched" (cached parallel
    code loaded before numba's thread pool existed; fixed in _config by starting the pool);
    that abort's exact trigger was not reproduced in isolation. The first process compiles
    with the pool already running, into a private cache directory; the second only loads."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    for prefix in ("import numba; numba.get_num_threads()\n", ""):
        out = subprocess.run([sys.executable, "-c", prefix + SCRIPT], capture_output=True, text=True,
                             timeout=600, env=env, cwd=tmp_path)
        assert out.returncode == 0, out.stderr[-2000:]
        assert out.stdout.strip() == "ok"
    assert any(tmp_path.rglob("*.nbc"))
