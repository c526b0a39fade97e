"""Every estimator at its defaults gives a sound first fit: on docs/accuracy.md's data sets and three more real
ones bundled with scikit-learn (wine, iris, diabetes cut at its median), each fastboost estimator at its default
parameters (stumps, and max_depth=3 where it has trees) reaches a mean test error within 1.5 points of
AdaBoostClassifier's at its defaults, or of the best of the others (scripts/accuracy.py --defaults, the same
code that writes docs/accuracy.md's defaults table), and the LP estimators' fits raise no warning."""
import numpy as np
import pytest
from conftest import load_script

pytest.importorskip("highspy")


@pytest.fixture(scope="module")
def accuracy():
    return load_script("accuracy")


def test_the_check_flags_an_estimator_far_behind(accuracy):
    """The verdict itself: within the margin of AdaBoost or of the best of the others passes, beyond both fails."""
    def verdicts(errors):
        rec = [{"dataset": "d", "depth": 1, "estimator": e, "test_error": err, "repeat": r}
               for e, errs in errors.items() for r, err in enumerate(errs)]
        return {k[2]: v[3] for k, v in accuracy.defaults_verdicts(rec, margin=1.5).items()}

    v = verdicts({"AdaBoostClassifier": [10.0, 10.0], "A": [11.0, 11.8], "B": [11.0, 12.2], "C": [8.0, 8.0]})
    assert v == {"AdaBoostClassifier": True, "A": True, "B": False, "C": True}  # B: mean 11.6 > 10 + 1.5
    # AdaBoost far ahead: the others are within 1.5 of AdaBoost or of the best of the rest
    v = verdicts({"AdaBoostClassifier": [5.0], "A": [6.4], "B": [7.8], "C": [8.0]})
    assert v == {"AdaBoostClassifier": True, "A": True, "B": True, "C": False}  # B: 7.8 <= 6.4 + 1.5


@pytest.mark.slow
def test_every_estimator_at_its_defaults_is_close_to_adaboost(accuracy):
    records = accuracy.run_defaults(accuracy.DEFAULTS_DATASETS, repeats=3, log=lambda *a, **k: None)
    verdicts = accuracy.defaults_verdicts(records)
    assert len(verdicts) == len(accuracy.DEFAULTS_DATASETS) * (2 * len(accuracy.DEFAULTS_ESTIMATORS)
                                                                - len(accuracy.DEFAULTS_STUMPS_ONLY))
    failed = {k: np.round(v[:3], 2).tolist() for k, v in verdicts.items() if not v[3]}
    assert not failed, f"(data set, depth, estimator): [mean error, AdaBoost's, best other's] {failed}"
    lp = {"LPBoostClassifier", "RLPBoostClassifier", "RQPBoostClassifier"}
    warned = [(r["dataset"], r["depth"], r["estimator"], r["warnings"]) for r in records
              if r["estimator"] in lp and r["warnings"]]
    assert not warned
