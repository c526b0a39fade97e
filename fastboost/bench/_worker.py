"""Entry of ``fastboost bench``'s child processes, run by path (``processes.run_child``).

It loads its sibling modules (``child``, and ``tasks``, ``curve``, ``adapters``, ``measure`` through it)
from this directory as the submodules of a stand-in package, without importing fastboost: a child that
fits a competitor never imports fastboost (a fastboost task's child imports it from the adapter).
"""
import importlib
import sys
import types
from pathlib import Path

PACKAGE = "_fastboost_bench_child"


def load(name):
    """Sibling module ``name`` of this directory, as ``_fastboost_bench_child.<name>``."""
    if PACKAGE not in sys.modules:
        package = types.ModuleType(PACKAGE)
        package.__path__ = [str(Path(__file__).resolve().parent)]
        sys.modules[PACKAGE] = package
    return importlib.import_module(f"{PACKAGE}.{name}")


if __name__ == "__fastboost_bench_worker__":  # processes.WORKER_RUN_NAME
    load("child").main(sys.argv[2])
