"""Rounds of a fit beside a busy process, n_jobs=2 against n_jobs=1.

For each cell (rows x 20 features of twonorm, stumps or depth-3 trees) this fits AdaBoostClassifier with 5 and
with 105 rounds, whole fits (binning included), alternating the thread counts and the round counts, while
``--busy`` processes each keep a core busy (``fastboost bench --contention``'s spinning loops). A round's time
is (median of the 105-round fits - median of the 5-round fits) / 100, so the fixed costs of a fit cancel; the
table gives it at 1 and 2 threads and their ratio (above 1: the second thread makes the rounds slower).

    python scripts/bench_beside.py [--repeat 15 9 5 3] [--busy 1]
"""
import argparse
import time

import numpy as np

from fastboost import AdaBoostClassifier
from fastboost.bench.contention import BusyProcesses
from fastboost.datasets import make_twonorm

#: (rows, depth) of each cell
CELLS = ((100_000, 1), (100_000, 3), (1_000_000, 1), (1_000_000, 3))


def round_ms(X, y, depth, repeat):
    """{threads: ms a round} from (median 105-round fit - median 5-round fit) / 100."""
    for j in (1, 2):  # compiled and warm
        AdaBoostClassifier(5, max_depth=depth, n_jobs=j).fit(X[:2000], y[:2000])
    times = {(j, T): [] for j in (1, 2) for T in (5, 105)}
    for r in range(repeat):
        for j in ((1, 2) if r % 2 == 0 else (2, 1)):
            for T in ((5, 105) if r % 2 == 0 else (105, 5)):
                t0 = time.perf_counter()
                AdaBoostClassifier(T, max_depth=depth, n_jobs=j).fit(X, y)
                times[j, T].append(time.perf_counter() - t0)
    return {j: (np.median(times[j, 105]) - np.median(times[j, 5])) / 100 * 1e3 for j in (1, 2)}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, nargs=len(CELLS), default=[15, 9, 5, 3],
                   help="fits of each kind per cell (default: 15 9 5 3, more for the shorter fits)")
    p.add_argument("--busy", type=int, default=1, help="busy processes beside the fits (0: idle)")
    args = p.parse_args(argv)
    rows = []
    with BusyProcesses(args.busy):
        for (n, depth), repeat in zip(CELLS, args.repeat):
            X, y = make_twonorm(n, 20, random_state=0)
            ms = round_ms(X, y, depth, repeat)
            rows.append((n, depth, ms[1], ms[2]))
            print(f"{n} rows, depth {depth}: {ms[1]:.3f} / {ms[2]:.3f} ms a round, {ms[2] / ms[1]:.3f}", flush=True)
    print(f"\n| rows x 20, {args.busy} busy | learner | 1 thread (ms a round) | 2 threads | 2 threads / 1 |")
    print("|---|---|---|---|---|")
    for n, depth, one, two in rows:
        print(f"| {n:,} | {'stumps' if depth == 1 else f'depth {depth}'} | {one:.3f} | {two:.3f} | {two / one:.2f} |"
              .replace(",", " "))


if __name__ == "__main__":
    main()
