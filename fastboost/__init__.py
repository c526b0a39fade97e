"""fastboost: numba-accelerated boosting (AdaBoost family) with scikit-learn estimators."""
from ._cache import ensure_fresh_cache

ensure_fresh_cache()  # before any kernel module is imported

from .estimators import AdaBoostClassifier, VadaBoostClassifier  # noqa: E402

__version__ = "0.1.0"
__all__ = ["AdaBoostClassifier", "VadaBoostClassifier", "__version__"]
