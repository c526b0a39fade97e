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
    assert [str(t) for t in inner.compiled_signatures()] == ["(float64, int64)", "(float64, bool)"]


def test_parallel_kernels_run_only_their_prange_loops_on_threads():
    """In a parallel kernel np.zeros, np.arange and slice assignments stay plain code: each would otherwise be a
    parallel loop of its own, launched at every call. Only the prange loop is one."""
    import numpy as np
    from numba import prange

    from fastboost._config import pjit

    @pjit(cache=False)
    def kernel(x, out):
        scratch = np.zeros(x.shape[0])
        scratch[:] = 1.0
        idx = np.arange(x.shape[0])
        for i in prange(x.shape[0]):
            out[i] = x[idx[i]] * scratch[i]

    x = np.arange(5.0)
    out = np.empty(5)
    kernel(x, out)
    np.testing.assert_array_equal(out, x)
    (sig,) = kernel.signatures
    parfors = kernel.overloads[sig].metadata["parfor_diagnostics"].initial_parfors
    assert len(parfors) == 1


def test_the_loops_rules_get_their_numba_type_once_per_combination():
    """The loop's rules (a Rules tuple of function addresses) type as the plain tuple does, and the type is made
    once: the next fit's tuple of the same functions reuses it."""
    import numpy as np
    from numba.core.typing.typeof import Purpose, typeof

    from fastboost import _driver
    from fastboost._algorithms import RULES
    from fastboost._config import _RULES_TYPES

    config = _driver.make_config(missing_code=3)
    rule = RULES["adaboost"]
    first = _driver.pick_rules(rule, config, False, np.dtype(np.uint8))
    again = _driver.pick_rules(rule, config, False, np.dtype(np.uint8))
    assert first is not again and tuple(first) == tuple(again)
    expected = typeof(tuple(first), Purpose.argument)
    assert typeof(first, Purpose.argument) == expected
    assert typeof(again, Purpose.argument) is _RULES_TYPES[tuple(first)]
