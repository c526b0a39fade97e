"""The ``fastboost`` command."""
import argparse
import sys
import time


def demo(args):
    """Train AdaBoost and VadaBoost on generated twonorm; print test error, rounds and fit time."""
    import numpy as np

    from . import AdaBoostClassifier, VadaBoostClassifier
    from .datasets import make_twonorm

    X, y = make_twonorm(args.n_train + args.n_test, random_state=args.seed)
    Xtr, ytr, Xte, yte = X[: args.n_train], y[: args.n_train], X[args.n_train:], y[args.n_train:]
    print(f"twonorm: {args.n_train} training and {args.n_test} test rows, 20 features "
          f"(Bayes error 2.28%); {args.rounds} rounds of decision stumps, n_jobs={args.n_jobs}")
    print(f"{'model':<28}{'test error':>11}{'rounds':>8}{'fit time (s)':>14}")
    models = [("AdaBoost", AdaBoostClassifier(args.rounds, n_jobs=args.n_jobs))]
    models += [(f"VadaBoost (lam={lam:g})", VadaBoostClassifier(args.rounds, lam=lam, n_jobs=args.n_jobs))
               for lam in (0.0, 0.5, 1.0)]
    for name, model in models:
        t = time.perf_counter()
        model.fit(Xtr, ytr)
        elapsed = time.perf_counter() - t
        err = np.mean(model.predict(Xte) != yte)
        print(f"{name:<28}{100 * err:>10.2f}%{model.n_estimators_:>8}{elapsed:>14.3f}")
    print("(the first fit includes numba's one-time compilation unless the cache is warm)")
    return 0


def compile_kernels(args):
    """Compile every kernel ahead of time (they are cached on disk: later fits start at once)."""
    from ._compile import compile_all

    print("fastboost: compiling every kernel group (once per install; cached on disk afterwards)", flush=True)
    total = compile_all(lambda line: print(line, flush=True))
    print(f"done in {total:.1f} s", flush=True)
    return 0


def _bench(args):
    from . import bench

    bench.run(args)
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(prog="fastboost", description=__doc__)
    from . import __version__

    parser.add_argument("--version", action="version", version=f"fastboost {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("demo", help=demo.__doc__)
    p.add_argument("--n-train", type=int, default=20_000)
    p.add_argument("--n-test", type=int, default=20_000)
    p.add_argument("--rounds", type=int, default=300)
    p.add_argument("--n-jobs", type=int, default=None)
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(func=demo)
    p = sub.add_parser("compile", help=compile_kernels.__doc__)
    p.set_defaults(func=compile_kernels)
    from . import bench

    p = sub.add_parser("bench", help="benchmark fastboost against scikit-learn, LightGBM and XGBoost",
                       description=bench.__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    bench.add_arguments(p)
    p.set_defaults(func=_bench)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
