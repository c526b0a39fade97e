"""scripts/shrinkage.py's core on tiny data: the staged errors it records are those of the fitted models (and of
fits stopped at the earlier round counts), and its tables land between their markers."""
import numpy as np
import pytest
from conftest import load_script


@pytest.fixture(scope="module")
def shrinkage():
    return load_script("shrinkage")


def tiny(n_classes, seed=0, n=60):
    """(X_tr, y_tr, X_te, y_te): float64 features with ties (rounded), labels from a noisy rule."""
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(n, 4)), 1)
    y = (np.digitize(X[:, 0] + 0.5 * X[:, 1] + 0.3 * rng.normal(size=n), [-0.5, 0.5])
         if n_classes == 3 else (X[:, 0] * X[:, 1] + 0.2 * rng.normal(size=n) > 0).astype(int))
    return X[:40], y[:40], X[40:], y[40:]


def error(model, X, y):
    return 100.0 * float(np.mean(model.predict(X) != y))


@pytest.mark.parametrize("n_classes, kind, depth", [(2, "discrete", 1), (2, "real", 1), (2, "discrete", 3),
                                                    (2, "real", 3), (3, "real", 1), (2, "LightGBM", 1)])
def test_recorded_errors_are_the_fitted_models(shrinkage, n_classes, kind, depth):
    """The error after the last round is predict's; after fewer rounds, that of a fit stopped there (a fit's
    first rounds do not depend on how many follow); one-vs-rest (3 classes, real leaves) included."""
    X_tr, y_tr, X_te, y_te = tiny(n_classes)
    rec, model = shrinkage.fit_cell(kind, depth, 0.3, X_tr, y_tr, X_te, y_te, rounds=6, checkpoints=(3, 6))
    assert set(rec["errors"]) == {"3", "6"} and rec["rounds"] == 6
    assert rec["errors"]["6"] == error(model, X_te, y_te)
    shorter = shrinkage.make(kind, depth, 0.3, 3, 1).fit(X_tr, y_tr)
    assert rec["errors"]["3"] == error(shorter, X_te, y_te)
    if kind != "LightGBM":  # a fit that stops early: its later round counts read its last round
        assert rec["rounds_fitted"] <= 6


def test_tables_between_markers(shrinkage, tmp_path):
    records = []
    for name, n_classes in (("two", 2), ("three", 3)):
        X_tr, y_tr, X_te, y_te = tiny(n_classes, seed=1)
        for rec in shrinkage.run_grid(name, [(X_tr, y_tr, X_te, y_te)], depths=[1], rates=[0.3, 1.0],
                                      kinds=["discrete", "real"], rounds=4, checkpoints=[2, 4], threads=1,
                                      log=lambda *a, **k: None):
            records.append({"part": "large", **rec})
    meta = {"command": "python scripts/shrinkage.py --part large", "elapsed_seconds": 1.0, "load_average": [1, 2],
            "rounds": 4, "checkpoints": [2, 4], "rates": [0.3, 1.0], "depths": [1], "kinds": ["discrete", "real"],
            "threads": 1, "n_train": 40, "n_test": 20,
            "datasets": [{"name": "two", "classes": 2}, {"name": "three", "classes": 3}]}
    doc = tmp_path / "page.md"
    doc.write_text("# Page\n\nbefore\n")
    shrinkage.write_doc(doc, {"meta": {"large": meta}, "results": records})
    shrinkage.write_doc(doc, {"meta": {"large": meta}, "results": records})  # rewritten in place, once
    text = doc.read_text()
    assert text.startswith("# Page\n\nbefore\n") and text.count(shrinkage.BEGIN) == 1 and text.count(shrinkage.END) == 1
    summary, tables = text.split("### Large data")
    cells = [c.strip() for c in next(line for line in summary.splitlines() if line.startswith("| two")).split("|")]
    base = next(r for r in records if (r["dataset"], r["kind"], r["rate"]) == ("two", "discrete", 1.0))
    new = next(r for r in records if (r["dataset"], r["kind"], r["rate"]) == ("two", "real", 0.3))
    assert cells[1:6] == ["two", "40", "1", f"{base['errors']['4']:.2f}", f"{new['errors']['4']:.2f} (real, 0.3)"]
    assert float(cells[6]) == pytest.approx(new["errors"]["4"] - base["errors"]["4"], abs=0.005)
    three = [line for line in summary.splitlines() if line.startswith("| three")]
    assert len(three) == 1 and "(real, 0.3)" in three[0]  # one-vs-rest; no MH fit, so no MH row
    rows = {tuple(c.strip() for c in line.split("|")[1:3]): [c.strip() for c in line.split("|")[3:-1]]
            for line in tables.splitlines() if line.startswith("| two") or line.startswith("| three")}
    assert set(rows) == {(name, kind) for name in ("two", "three") for kind in ("discrete", "real", "LightGBM")}
    for (name, kind), cells in rows.items():
        recs = {r["rate"]: r for r in records if r["dataset"] == name and r["kind"] == kind}
        for rate, cell in zip((0.3, 1.0), cells[:2]):
            assert cell == " / ".join(f"{recs[rate]['errors'][c]:.2f}" for c in ("2", "4"))
        best = min((e, c, rate) for rate, r in recs.items() for c, e in ((int(c), e) for c, e in r["errors"].items()))
        assert cells[2].startswith(f"{best[0]:.2f} (")
        ref = min(e for r in records if r["dataset"] == name and r["kind"] == "LightGBM" for e in r["errors"].values())
        if kind == "LightGBM":
            assert cells[3] == ""
        else:  # points from LightGBM's best, signed
            assert cells[3][0] in "+-" and float(cells[3]) == pytest.approx(best[0] - ref, abs=0.005)
