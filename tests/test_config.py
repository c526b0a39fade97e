"""Compilation settings (fastboost/_config.py): one fastmath setting, used by every compiled kernel."""
import pathlib
import re

import numba

import fastboost
from fastboost._config import FASTMATH


def test_fastmath_defined_once():
    root = pathlib.Path(fastboost.__file__).parent
    config = root / "_config.py"
    for path in sorted(root.rglob("*.py")):
        text = path.read_text()
        if path == config:
            continue
        hits = re.findall(r"fastmath\s*=\s*([^,)\n]*)", text)
        assert not hits, f"{path.relative_to(root)} hard-codes fastmath: {hits}"
    flags = {str(f) for f in FASTMATH}
    for bad in ("nnan", "ninf", "fast", "reassoc"):
        assert bad not in flags, f"FASTMATH contains {bad!r}"
    assert FASTMATH is not True


def test_every_kernel_compiled_with_fastmath_config():
    import importlib
    import pkgutil

    import fastboost._kernels as kernels

    modules = [importlib.import_module(f"fastboost._kernels.{m.name}")
               for m in pkgutil.iter_modules(kernels.__path__)]
    modules.append(importlib.import_module("fastboost._algorithms"))
    seen = 0
    for mod in modules:
        for name, obj in vars(mod).items():
            if isinstance(obj, numba.core.registry.CPUDispatcher) and obj.__module__ == mod.__name__:
                seen += 1
                fm = obj.targetoptions.get("fastmath")
                assert fm is not None and fm is not True, f"{mod.__name__}.{name}: fastmath={fm!r}"
                assert set(fm) == set(FASTMATH), f"{mod.__name__}.{name}: fastmath={fm!r}"
    assert seen >= 15


def test_a_constant_argument_compiles_no_specialisation_of_its_own():
    """numba would compile ``inner`` twice here (for ``Literal[int](1)`` and for ``int64``), and every
    kernel below it with it; the package's dispatcher types the constant as a plain int64."""
    from fastboost._config import jit

    @jit(cache=False)  # (compiled here, in this process: a cached outer would not type inner at all)
    def inner(x, k):
        return x + k

    @jit(cache=False)
    def outer(x, k):
        return inner(x, 1) + inner(x, k) + inner(x, True)

    assert outer(1.0, 2) == 2.0 + 3.0 + 2.0
    assert [str(t) for t in inner.signatures] == ["(float64, int64)", "(float64, bool)"]
