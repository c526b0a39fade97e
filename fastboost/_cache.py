"""Keep numba's on-disk cache consistent with the kernel sources.

numba stamps a cached function with its own source file only; ``boost`` in
``_kernels/loop.py`` links code from the other kernel modules, so an edit there
would leave a stale loop in the cache. At import we hash every source the
compiled code depends on and, when the hash changed, drop the package's cache
files before any kernel is loaded.
"""
import hashlib
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


def ensure_fresh_cache():
    """Delete numba cache files left by other kernel sources; never fails the import."""
    try:
        digest = sources_digest()
        if _STAMP.exists() and _STAMP.read_text() == digest:
            return
        for pattern in ("*.nbi", "*.nbc"):
            for path in _PACKAGE.rglob(f"__pycache__/{pattern}"):
                path.unlink(missing_ok=True)
        _STAMP.parent.mkdir(exist_ok=True)
        _STAMP.write_text(digest)
    except OSError:  # read-only install: numba keeps its own cache elsewhere
        pass
