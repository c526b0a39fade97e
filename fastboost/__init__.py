"""fastboost: numba-accelerated boosting (AdaBoost family) with scikit-learn estimators."""
from .estimators import AdaBoostClassifier, VadaBoostClassifier

__version__ = "0.1.0"
__all__ = ["AdaBoostClassifier", "VadaBoostClassifier", "__version__"]
