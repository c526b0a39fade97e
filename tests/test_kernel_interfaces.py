"""Kernel interfaces stay narrow: no compiled function of fastboost takes more than 12 parameters (arguments
travel in the named records and tuples of ``fastboost._types``: TrainData, ValidData, the configuration record,
the workspace's parts, TreeRows, a level's SPLIT_DTYPE records)."""
import importlib
import inspect
import pkgutil

from numba.core.dispatcher import Dispatcher

import fastboost
from fastboost._config import typed

MAX_PARAMETERS = 12


def compiled_functions():
    """{qualified name: Python function} of every numba dispatcher and ``typed`` function the package's modules
    define (modules that need a missing optional dependency are skipped)."""
    found = {}
    for info in pkgutil.walk_packages(fastboost.__path__, "fastboost."):
        if info.name.endswith("__main__"):  # (runs the command line)
            continue
        try:
            module = importlib.import_module(info.name)
        except ImportError:
            continue
        for obj in vars(module).values():
            if isinstance(obj, (Dispatcher, typed)):
                fn = obj.py_func
                found[f"{fn.__module__}.{fn.__qualname__}"] = fn
    return found


def test_no_compiled_function_takes_more_than_12_parameters():
    found = compiled_functions()
    # the walk reached the kernels and the loop (a walk that found nothing would pass vacuously)
    assert {"fastboost._kernels.tree.grow_tree", "fastboost._kernels.tree.leaf_sums", "fastboost._kernels.loop._boost",
            "fastboost._kernels.update.apply_stump", "fastboost._algorithms.adaboost_step"} <= set(found)
    assert len(found) > 100
    wide = {name: len(inspect.signature(fn).parameters) for name, fn in found.items()
            if len(inspect.signature(fn).parameters) > MAX_PARAMETERS}
    assert not wide, f"compiled functions with more than {MAX_PARAMETERS} parameters: {wide}"
