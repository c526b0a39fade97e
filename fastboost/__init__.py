"""fastboost: numba-accelerated boosting (AdaBoost family) with scikit-learn estimators."""
from ._cache import ensure_fresh_cache

ensure_fresh_cache()  # before any kernel module is imported

from ._model_io import load  # noqa: E402
from ._version import __version__  # noqa: E402
from .dataset import Dataset  # noqa: E402
from .estimators import (  # noqa: E402
                         AdaBoostClassifier,
                         EBBoostClassifier,
                         LazyBoostClassifier,
                         LPBoostClassifier,
                         QuadBoostClassifier,
                         RLPBoostClassifier,
                         RQPBoostClassifier,
                         SABoostClassifier,
                         VadaBoostClassifier,
)
from .export import to_onnx, to_shap, to_treelite  # noqa: E402

#: submodules imported on first use as ``fastboost.<name>`` (their extras only then): ``fastboost.plot.plot_cost``
#: works after ``import fastboost`` alone
_SUBMODULES = ("dask", "datasets", "explain", "plot")


def __getattr__(name):
    if name in _SUBMODULES:
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["Dataset", "AdaBoostClassifier", "EBBoostClassifier", "LazyBoostClassifier", "LPBoostClassifier",
           "QuadBoostClassifier", "RLPBoostClassifier", "RQPBoostClassifier", "SABoostClassifier",
           "VadaBoostClassifier", "load", "to_onnx", "to_shap", "to_treelite", "__version__"]
