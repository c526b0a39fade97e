"""scikit-learn's own estimator suite on every fastboost estimator."""
from sklearn.utils.estimator_checks import parametrize_with_checks

from fastboost import AdaBoostClassifier, VadaBoostClassifier

ESTIMATORS = [
    AdaBoostClassifier(n_estimators=10),
    AdaBoostClassifier(n_estimators=10, criterion="gini"),
    VadaBoostClassifier(n_estimators=10, lam=0.5),
]


@parametrize_with_checks(ESTIMATORS)
def test_sklearn_compatible(estimator, check):
    check(estimator)
