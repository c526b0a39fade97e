"""Draw the figures of the documentation's Plots page into docs/images/: margins and cost per round on twonorm.

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

N_TRAIN, N_TEST, ROUNDS = 300, 3000, 300


def fit_models(X, y):
    """AdaBoost and VadaBoost (lam = 0.5), decision stumps, ROUNDS rounds each."""
    return {"AdaBoost": AdaBoostClassifier(n_estimators=ROUNDS).fit(X, y),
            "VadaBoost, lam=0.5": VadaBoostClassifier(n_estimators=ROUNDS, lam=0.5).fit(X, y)}


def draw_margins(models, data, path):
    fig, ax = plt.subplots(figsize=(6, 4))
    # the two distributions nearly coincide on twonorm: AdaBoost wide and light, VadaBoost on top
    styles = [{"linewidth": 4, "alpha": 0.35}, {"linewidth": 1.2}]
    for (name, m), style in zip(models.items(), styles):
        plot_margins(m, *data, ax=ax, label=name, **style)
    ax.axvline(0.0, color="grey", linewidth=0.8)
    ax.set_title(f"Margins on twonorm ({N_TRAIN} training rows, {ROUNDS} stumps)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def draw_cost(models, path):
    fig, ax = plt.subplots(figsize=(6, 4))
    for name, m in models.items():
        plot_cost(m, ax=ax, label=name)
    ax.set_title("Each algorithm's cost per round on twonorm", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(pathlib.Path(__file__).resolve().parents[1] / "docs" / "images"),
                        help="directory to write margins.png and cost.png to (default: docs/images)")
    out = pathlib.Path(parser.parse_args(argv).out)
    out.mkdir(parents=True, exist_ok=True)
    X, y = make_twonorm(N_TRAIN + N_TEST, random_state=0)
    train, test = (X[:N_TRAIN], y[:N_TRAIN]), (X[N_TRAIN:], y[N_TRAIN:])
    models = fit_models(*train)
    draw_margins(models, train + test, out / "margins.png")
    draw_cost(models, out / "cost.png")
    print(f"wrote {out / 'margins.png'} and {out / 'cost.png'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
