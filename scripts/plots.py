"""Draw the README's figures into docs/images/: margin distributions and cost per round on twonorm.

Usage: python scripts/plots.py [--out DIR]   (needs matplotlib: pip install "fastboost[plot]")
"""
import argparse
import pathlib

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from fastboost import AdaBoostClassifier, VadaBoostClassifier  # noqa: E402
from fastboost.datasets import make_twonorm  # noqa: E402
from fastboost.plot import plot_cost, plot_margins  # noqa: E402


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(pathlib.Path(__file__).resolve().parents[1] / "docs" / "images"))
    out = pathlib.Path(parser.parse_args(argv).out)
    out.mkdir(parents=True, exist_ok=True)
    X, y = make_twonorm(3000, random_state=0)
    Xtr, ytr, Xte, yte = X[:2000], y[:2000], X[2000:], y[2000:]
    models = {"AdaBoost": AdaBoostClassifier(n_estimators=300).fit(Xtr, ytr),
              "VadaBoost (lam=0.5)": VadaBoostClassifier(n_estimators=300, lam=0.5).fit(Xtr, ytr)}
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.6), sharey=True)
    for ax, (name, m) in zip(axes, models.items()):
        plot_margins(m, Xtr, ytr, Xte, yte, ax=ax)
        ax.set_title(f"{name}, twonorm, 300 stumps", fontsize=10)
    fig.tight_layout()
    fig.savefig(out / "margins.png", dpi=90)
    fig, ax = plt.subplots(figsize=(5, 3.6))
    for name, m in models.items():
        plot_cost(m, ax=ax)
        ax.get_lines()[-1].set_label(name)
    ax.set_title("cost per round, twonorm", fontsize=10)
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "cost.png", dpi=90)
    print(f"wrote {out / 'margins.png'} and {out / 'cost.png'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
