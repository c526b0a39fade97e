"""Keep numba's on-disk cache consistent with the kernel sources, and safe for processes sharing it.

numba stamps a cached function with its own source file only; ``boost`` in
``_kernels/loop.py`` links code from the other kernel modules, so an edit there
would leave a stale loop in the cache. At import we hash every source the
compiled code depends on and, when the hash changed, drop the package's cache
files before any kernel is loaded.

Several processes compile into one cache at once (the workers of a Dask cluster on one machine, test
runners, a user's own process pool); :func:`keyed_cache_files` makes that safe (see :class:`KeyedCacheFile`).
"""
import contextlib
import hashlib
import os
import pathlib

from numba.core.caching import IndexDataCacheFile

_PACKAGE = pathlib.Path(__file__).resolve().parent
_SOURCES = ["_config.py", "_types.py", "_algorithms.py", *sorted(
    str(p.relative_to(_PACKAGE)) for p in (_PACKAGE / "_kernels").glob("*.py"))]
_STAMP = _PACKAGE / "__pycache__" / "kernels.sha256"


def sources_digest():
    h = hashlib.sha256()
    for name in _SOURCES:
        h.update(name.encode())
        h.update((_PACKAGE / name).read_bytes())
    return h.hexdigest()


def user_cache_dirs():
    """The directories numba caches the package's kernels in when NUMBA_CACHE_DIR is set (else []): one per
    source directory (the package and ``_kernels``), named as numba names them."""
    try:
        from numba.core import config
        from numba.core.caching import _CacheLocator

        if not config.CACHE_DIR:
            return []
        root = pathlib.Path(os.path.abspath(config.CACHE_DIR))
        return [root / _CacheLocator.get_suitable_cache_subpath(str(_PACKAGE / name))
                for name in ("_config.py", "_kernels/loop.py")]
    except Exception:  # numba's internals moved: the package's own __pycache__ is still handled
        return []


def ensure_fresh_cache():
    """Delete numba cache files left by other kernel sources; never fails the import.

    The cache is the package's ``__pycache__`` folders or, with NUMBA_CACHE_DIR set, numba's folders for the
    package's sources there; the stamp lies beside the files it vouches for."""
    try:
        digest = sources_digest()
        user = user_cache_dirs()
        stamp = user[0] / "kernels.sha256" if user else _STAMP
        if stamp.exists() and stamp.read_text() == digest:
            return
        for pattern in ("*.nbi", "*.nbc"):
            for path in ([p for d in user for p in d.glob(pattern)] if user
                         else _PACKAGE.rglob(f"__pycache__/{pattern}")):
                path.unlink(missing_ok=True)
        stamp.parent.mkdir(parents=True, exist_ok=True)
        stamp.write_text(digest)
    except OSError:  # read-only install: numba keeps its own cache elsewhere
        pass


class KeyedCacheFile(IndexDataCacheFile):
    """numba's cache files of one function (an index of its compiled variants, a data file each), with data
    files named after their variant's key and the index updated under a lock.

    numba numbers the data files of a function's variants (the signatures of the codes' widths, the
    learners' closures) in the order they are saved: it reads the index, takes the first free number,
    writes the index, then the data. Two processes saving different variants at once take the same number,
    and the index can end up pointing one variant's key at the other's machine code: a later process that
    loads it runs code compiled for other argument types or another learner, which writes past its
    buffers. Here a variant's data file is named by a hash of its key, written (atomically, as numba writes
    it) before the index names it, and the index is read, extended and written again while holding a lock
    on the cache directory (where the platform has ``fcntl``; without it an entry another process saved at
    the same moment may be dropped from the index, and is compiled again when next needed, never swapped).
    """

    def save(self, key, data):
        name = self._keyed_name(key)
        self._save_data(name, data)
        with _locked(os.path.join(self._cache_path, "fastboost-index.lock")):
            overloads = self._load_index()
            if overloads.get(key) != name:
                overloads[key] = name
                self._save_index(overloads)

    def _keyed_name(self, key):
        base = self._index_name[: -len(".nbi")]
        return f"{base}.{hashlib.sha256(repr(key).encode()).hexdigest()[:24]}.nbc"


def keyed_cache_files(dispatcher, variant=None):
    """``dispatcher`` (a numba dispatcher with caching enabled) saved through :class:`KeyedCacheFile`; a
    ``variant`` name gives it files of its own (numba names the files after the function alone, and its key for
    a compiled variant does not hold the compile options: a function compiled without the wrapper for calls from
    Python must never be loaded where one with it is wanted)."""
    cache = getattr(dispatcher, "_cache", None)
    cache_file = getattr(cache, "_cache_file", None)
    if type(cache_file) is IndexDataCacheFile:
        cache_file.__class__ = KeyedCacheFile
        if variant:
            cache_file._index_name = f"{cache_file._index_name[:-len('.nbi')]}.{variant}.nbi"
            cache_file._index_path = os.path.join(cache_file._cache_path, cache_file._index_name)
    return dispatcher


@contextlib.contextmanager
def _locked(path):
    """An exclusive lock on the file ``path`` (created if missing) while the block runs; no lock where the
    platform has no ``fcntl`` or the file cannot be opened."""
    try:
        import fcntl

        f = open(path, "a+b")
    except (ImportError, OSError):
        yield
        return
    try:
        fcntl.flock(f, fcntl.LOCK_EX)
        yield
    finally:
        f.close()  # (closing releases the lock)
