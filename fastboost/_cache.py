"""Keep numba's on-disk cache consistent with the kernel sources.

numba stamps a cached function with its own source file only; ``boost`` in
``_kernels/loop.py`` links code from the other kernel modules, so an edit there
would leave a stale loop in the cache. At import we hash every source the
compiled code depends on and, when the hash changed, drop the package's cache
files before any kernel is loaded.
"""
import hashlib
import os
import pathlib

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
