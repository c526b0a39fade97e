"""scikit-learn's own estimator suite on every fastboost estimator."""
from sklearn.utils.estimator_checks import parametrize_with_checks

from fastboost import (AdaBoostClassifier, EBBoostClassifier, LazyBoostClassifier, QuadBoostClassifier,
                       SABoostClassifier, VadaBoostClassifier)

ESTIMATORS = [
    AdaBoostClassifier(n_estimators=10),
    AdaBoostClassifier(n_estimators=10, criterion="gini"),
    VadaBoostClassifier(n_estimators=10, lam=0.5),
    EBBoostClassifier(n_estimators=10, lam=0.5),
    LazyBoostClassifier(n_estimators=50, feature_rank=2),
    SABoostClassifier(n_estimators=10),
    QuadBoostClassifier(n_estimators=10),
    QuadBoostClassifier(n_estimators=10, penalty="l1", lam=0.01, reweight_every=3),
    AdaBoostClassifier(n_estimators=10, validation_fraction=0.2, n_iter_no_change=3, random_state=0),
]


@parametrize_with_checks(ESTIMATORS)
def test_sklearn_compatible(estimator, check):
    check(estimator)
