"""numba's on-disk cache: stale entries are dropped, and cached parallel code loads in a new process."""
import os
import shutil
import subprocess
import sys

import pytest

import fastboost._cache as cache


@pytest.fixture
def pkg(tmp_path, monkeypatch):
    """A copy of the kernel sources that fastboost._cache reads as the package's."""
    pkg = tmp_path / "pkg"
    for name in cache._SOURCES:
        (pkg / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(cache._PACKAGE / name, pkg / name)
    monkeypatch.setattr(cache, "_PACKAGE", pkg)
    monkeypatch.setattr(cache, "_STAMP", pkg / "__pycache__" / "kernels.sha256")
    return pkg


def test_cache_files_dropped_exactly_when_kernel_sources_change(pkg, monkeypatch):
    from numba.core import config

    monkeypatch.setattr(config, "CACHE_DIR", "")  # the package's own __pycache__ (NUMBA_CACHE_DIR is the next test)
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


def test_with_numba_cache_dir_its_entries_are_dropped_when_kernel_sources_change(pkg, tmp_path, monkeypatch):
    """NUMBA_CACHE_DIR: numba keeps the kernels in its own folders there (one per source folder); a stale
    loop there would link old callees too, so the same stamp check runs on those folders."""
    from numba.core import config

    monkeypatch.setattr(config, "CACHE_DIR", str(tmp_path / "numba-cache"))
    dirs = cache.user_cache_dirs()
    assert len(dirs) == 2 and all(d.parent == tmp_path / "numba-cache" for d in dirs)
    entries = [d / "loop.boost-1.py311.nbi" for d in dirs]
    for e in entries:
        e.parent.mkdir(parents=True, exist_ok=True)
        e.write_text("old")
    cache.ensure_fresh_cache()  # no stamp yet: dropped; the package's own __pycache__ is not the cache here
    assert not any(e.exists() for e in entries) and not cache._STAMP.exists()
    for e in entries:
        e.write_text("current")
    cache.ensure_fresh_cache()
    assert all(e.exists() for e in entries)
    (pkg / "_kernels" / "tree.py").write_text((pkg / "_kernels" / "tree.py").read_text() + "\n# edit\n")
    cache.ensure_fresh_cache()
    assert not any(e.exists() for e in entries)


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


KERNELS = """
import numpy as np
from fastboost._config import jit, typed
from numba import types

@jit
def inner(x, k):
    return x * k + 1.0

@jit
def outer(x, k):
    return inner(x, k) + inner(x, 2.0)

def _rule(x, k):
    return inner(x, k) - 1.0

rule = typed(types.float64(types.float64, types.float64), _rule)
"""

TWINS = """
import sys
import kernels
step = sys.argv[1]
if step == "compiled":  # inner is compiled for compiled code only, and the rule for its address only
    assert kernels.outer(1.5, 3.0) == 5.5 + 4.0
    assert kernels.rule.address().__wrapper_address__() != 0
    print(len(kernels.inner.signatures), len(kernels.inner.native.signatures), len(kernels.rule._compiled))
else:  # a later process calls them from Python, on the cache the first one filled
    print(kernels.inner(1.5, 3.0), kernels.rule(1.5, 3.0), kernels.outer(1.5, 3.0))
"""


def test_a_kernel_compiled_for_compiled_code_is_never_loaded_for_a_call_from_python(tmp_path):
    """Kernels called from compiled code are compiled without numba's wrapper for calls from Python (and the
    loop's rules are compiled for their address without it): cheaper to compile, but code without the wrapper
    crashes the interpreter if Python calls it. Such a variant is cached in files of its own, so a later process
    calling the same kernel from Python compiles (or loads) the variant with the wrapper, never this one."""
    (tmp_path / "kernels.py").write_text(KERNELS)
    (tmp_path / "twins.py").write_text(TWINS)
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache"), "FASTBOOST_QUIET_COMPILE": "1"}
    run = [subprocess.run([sys.executable, "twins.py", step], capture_output=True, text=True, timeout=300,
                          env=env, cwd=tmp_path) for step in ("compiled", "python", "python")]
    for out in run:
        assert out.returncode == 0, out.stderr[-2000:]
    assert run[0].stdout.split() == ["0", "1", "0"]  # (the Python-facing variants were never compiled)
    assert run[1].stdout.split() == run[2].stdout.split() == ["5.5", "4.5", "9.5"]
    names = {p.name for p in (tmp_path / "cache").rglob("*.nbi")}
    assert {"kernels.inner-6.py311.nbi", "kernels.inner-6.py311.native.nbi"} <= names


COLD_FITS = """
import numpy as np
from fastboost import AdaBoostClassifier
from fastboost._kernels import incremental, sampling, split, trim

def compiled():
    return len(split.category_order.compiled_signatures()), len(trim.select_rows.compiled_signatures())

def stump_options():  # carried histograms, the search of prepared histograms, feature draws
    return [len(f.compiled_signatures()) for f in (incremental.side_rows, incremental.next_histograms,
                                                   split.choose_stump, sampling.draw_features)]

rng = np.random.default_rng(0)
X = rng.normal(size=(300, 4))
y = (X[:, 0] > 0).astype(int)
AdaBoostClassifier(n_estimators=3).fit(X, y)
print(*stump_options())
AdaBoostClassifier(n_estimators=3, max_depth=2).fit(X, y)
print(*compiled())
AdaBoostClassifier(n_estimators=3, weight_trim_rate=0.9).fit(X, y)
Xc = X.copy()
Xc[:, 1] = rng.integers(0, 5, 300)
AdaBoostClassifier(n_estimators=3, categorical_features=[1]).fit(Xc, y)
print(*compiled())
AdaBoostClassifier(n_estimators=3, colsample_bytree=0.5).fit(X, y)
print(*stump_options())
"""


@pytest.mark.slow  # a fresh process compiles the stump and tree learners cold (about 60 s)
def test_a_numeric_fit_without_trimming_compiles_neither_categories_nor_row_selection(tmp_path):
    """The learner a fit is given compiles only the paths the fit takes: numeric data without weight
    trimming compiles no scan of categories and no row selection; a categorical and a trimmed fit do. A
    stump fit without the learner's options (carried histograms, feature draws, monotone constraints)
    compiles none of their kernels; a fit with one of them does."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path), "FASTBOOST_QUIET_COMPILE": "1"}
    out = subprocess.run([sys.executable, "-c", COLD_FITS], capture_output=True, text=True, timeout=900, env=env,
                         cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    plain, before, after, options = (line.split() for line in out.stdout.strip().splitlines())
    assert plain == ["0", "0", "0", "0"]
    assert before == ["0", "0"]
    assert int(after[0]) > 0 and int(after[1]) > 0
    assert all(int(n) > 0 for n in options), options


ONE_VARIANT = """
import numpy as np
from fastboost import AdaBoostClassifier, VadaBoostClassifier
from fastboost._kernels import learners, split, tree, update

rng = np.random.default_rng(0)
for n in (300, 40000):  # one block of rows and one task (serial loops), then several (parallel loops)
    X = rng.normal(size=(n, 5))
    y = (X[:, 0] + 0.5 * rng.normal(size=n) > 0).astype(int)
    AdaBoostClassifier(n_estimators=3).fit(X, y)
    if n == 300:  # the first fit (the plain stump learner, the error criterion): no general stump scan
        general_scan = len(split._stump_follows.compiled_signatures())
    VadaBoostClassifier(n_estimators=3).fit(X, y)
    AdaBoostClassifier(n_estimators=3, max_depth=3).fit(X, y)
    if n == 300:  # the plain tree learner on the error criterion: no other criterion's binary tree scan
        general_tree_scan = len(split._best_split_binary.compiled_signatures())
tasks = (update._apply_block, update._weights_block, update._variance_block, update._table_block, tree._count_task,
         tree._place_task, tree._leaf_task, tree._leaf_rows, tree._leaf_row_sums)
print(*[len(f.compiled_signatures()) for f in tasks], len(learners._mh_round_sums.compiled_signatures()),
      len(tree._rows_histograms_mh.compiled_signatures()), len(tree._level_child_histograms_mh.compiled_signatures()),
      len(split._split_value.compiled_signatures()), len(learners.vector_leaf_values.compiled_signatures()),
      general_scan, general_tree_scan)
"""


@pytest.mark.slow  # a fresh process compiles the stump and tree learners cold (about 60 s)
def test_a_task_function_compiles_once_for_its_serial_and_its_parallel_loop(tmp_path):
    """The row-block and task functions that a kernel runs in a serial loop (one block, or few rows) and in a
    parallel loop are given the same argument types in both, so each is compiled once, not twice (a second
    variant cost about half a second of a cold fit each); binary tree fits compile none of AdaBoost.MH's sums and
    histogram kernels, no K-class split scan and no K-vector leaves, the first stump fit on the error criterion
    no other criterion's scan, and the first depth-3 fit on the error criterion no other criterion's binary tree
    scan."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path), "FASTBOOST_QUIET_COMPILE": "1"}
    out = subprocess.run([sys.executable, "-c", ONE_VARIANT], capture_output=True, text=True, timeout=900, env=env,
                         cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["1"] * 9 + ["0"] * 7


MH_ONLY = """
import numpy as np
from fastboost import AdaBoostClassifier
from fastboost._kernels import histogram, tree

rng = np.random.default_rng(0)
for n in (300, 40000):
    X = rng.normal(size=(n, 5))
    y = (X[:, 0] > 0).astype(int) + (X[:, 1] > 0.5 * rng.normal(size=n))
    AdaBoostClassifier(n_estimators=3, max_depth=3, leaf="real", multiclass="mh").fit(X, y)
    AdaBoostClassifier(n_estimators=3, max_depth=3, leaf="real", multiclass="mh", loss="logistic").fit(X, y)
print(*[len(f.compiled_signatures()) for f in (tree._rows_histograms_mh, tree._level_child_histograms_mh)])
print(*[len(f.compiled_signatures()) for f in (tree._rows_histograms, tree._level_child_histograms,
                                               tree._group_rows_histograms, tree._rows_histogram_one_feature,
                                               histogram.group_tree_histograms)])
"""


@pytest.mark.slow  # a fresh process compiles AdaBoost.MH's tree learner cold (about 40 s)
def test_an_adaboost_mh_tree_fit_compiles_none_of_the_binary_histogram_kernels(tmp_path):
    """rows_histograms and level_child_histograms are each two kernels chosen by the type of ``mh`` where numba
    types the call: AdaBoost.MH's tree fits compile only theirs (a branch on ``mh`` in one kernel compiled the
    binary and K-class histogram loops into them too, about 3 s of a cold fit), binary ones only theirs (the
    test above)."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path), "FASTBOOST_QUIET_COMPILE": "1"}
    out = subprocess.run([sys.executable, "-c", MH_ONLY], capture_output=True, text=True, timeout=900, env=env,
                         cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    used, unused = (line.split() for line in out.stdout.strip().splitlines())
    assert used == ["1", "1"]
    assert unused == ["0"] * 5


AFTER_COMPILE = """
import numpy as np
from fastboost import AdaBoostClassifier, SABoostClassifier, VadaBoostClassifier

rng = np.random.default_rng(1)
X = rng.normal(size=(400, 6))
y = (X[:, 0] > 0).astype(int)
Xc = X.copy()
Xc[:, 2] = rng.integers(0, 4, 400)
for depth in (1, 3):
    AdaBoostClassifier(5, max_depth=depth).fit(X, y).predict(X)
    AdaBoostClassifier(5, max_depth=depth, categorical_features=[2]).fit(Xc, y).predict(Xc)
    AdaBoostClassifier(5, max_depth=depth, weight_trim_rate=0.95).fit(X, y).predict(X)
    AdaBoostClassifier(5, max_depth=depth, validation_fraction=0.2).fit(X, y).predict(X)
    AdaBoostClassifier(5, max_depth=depth).fit(X, rng.integers(0, 3, 400)).predict(X)
Xb = rng.normal(size=(9000, 6))  # histograms carried between rounds (8 192 rows and more)
yb = (Xb[:, 0] > 0).astype(int)
for depth in (1, 3):
    AdaBoostClassifier(5, max_depth=depth).fit(Xb, yb).predict(Xb)
AdaBoostClassifier(5, colsample_bytree=0.5).fit(X, y).predict(X)
VadaBoostClassifier(5).fit(X, y)
SABoostClassifier(5).fit(X, y)
AdaBoostClassifier(5, max_bins=None).fit(X, y)
print("ok")
"""


@pytest.mark.slow  # fastboost compile from an empty cache (about 2.5 min), then a fresh process
def test_after_fastboost_compile_the_common_fits_compile_nothing(tmp_path):
    """fastboost compile leaves nothing for the common fits to compile: stumps and trees, categorical
    features, weight trimming, validation, K classes, the other rules, exact mode. A fit that compiles
    prints the first-use notice on stderr, so the second process must print none."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    env.pop("FASTBOOST_QUIET_COMPILE", None)
    out = subprocess.run([sys.executable, "-m", "fastboost", "compile"], capture_output=True, text=True,
                         timeout=1200, env=env, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "Warning" not in out.stderr, out.stderr[-2000:]
    out = subprocess.run([sys.executable, "-c", AFTER_COMPILE], capture_output=True, text=True, timeout=600,
                         env=env, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "ok"
    assert "compiling" not in out.stderr, out.stderr[-2000:]


SAVER = """
import importlib.util
import sys
from numba.core.caching import IndexDataCacheFile

spec = importlib.util.spec_from_file_location("fastboost_cache", sys.argv[4])  # (the module alone: no kernels)
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
KeyedCacheFile = module.KeyedCacheFile

cls = KeyedCacheFile if sys.argv[3] == "keyed" else IndexDataCacheFile
f = cls(cache_path=sys.argv[1], filename_base="kernel", source_stamp=(1.0, 10))
p = int(sys.argv[2])
sys.stdout.write("ready\\n")
sys.stdout.flush()
sys.stdin.readline()
for i in range(150):
    f.save(("sig", p, i), (p, i, bytes(2000 + 7 * i)))
"""


def _save_at_once(directory, kind):
    """Two processes saving 150 variants each of one function into one cache directory, started together."""
    procs = [subprocess.Popen([sys.executable, "-c", SAVER, str(directory), str(p), kind, cache.__file__],
                              stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True) for p in (0, 1)]
    for proc in procs:
        assert proc.stdout.readline() == "ready\n"
    for proc in procs:
        proc.stdin.write("go\n")
        proc.stdin.flush()
    for proc in procs:
        proc.communicate(timeout=120)
        assert proc.returncode == 0


def test_processes_saving_variants_at_once_never_swap_their_code(tmp_path):
    """numba numbers a function's data files in the order its variants are saved, so two processes saving at
    once can leave the index pointing one variant's key at another's code (which, loaded later, writes past
    its buffers). The package's cache files name the data by the key and update the index under a lock:
    every variant loads back as itself and none is lost."""
    pytest.importorskip("fcntl")  # (without it the index may drop an entry, still never swap one)
    _save_at_once(tmp_path, "keyed")
    f = cache.KeyedCacheFile(cache_path=str(tmp_path), filename_base="kernel", source_stamp=(1.0, 10))
    for p in (0, 1):
        for i in range(150):
            assert f.load(("sig", p, i)) == (p, i, bytes(2000 + 7 * i))
