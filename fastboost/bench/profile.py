"""``fastboost bench --profile``: fastboost's per-round kernels timed one by one.

The round's configuration, data and workspace come from the round driver (``fastboost._driver``),
exactly as a fit builds them; the round's steps are then timed one by one.
"""
import statistics
import time

import numpy as np

from .measure import Timer, log


def profile_kernels(Xtr, ytr, args, per_round_s=None, say=log):
    """Time the kernels one round of fastboost's loop calls, one by one, on this data (in this process).

    Follows ``fastboost._kernels.loop._boost`` for a multiplicative-update algorithm (AdaBoost's
    rule by default, the first of ``--algorithms`` if it is one): transform, histograms, best split
    per feature, apply the stump, update the weights.
    """
    import numba

    from fastboost import AdaBoostClassifier, _driver
    from fastboost._algorithms import RULES
    from fastboost._binning import BinMapper
    from fastboost._config import n_threads
    from fastboost._kernels.histogram import build_histograms
    from fastboost._kernels.split import choose_stump
    from fastboost._kernels.update import apply_stump
    from fastboost._types import ROUND_DTYPE, Y_DTYPE, TrainData

    n, d = Xtr.shape
    algo = next((a for a in args.algorithms if a in RULES and not RULES[a].additive), "adaboost")
    out = {"n": n, "d": d, "threads": args.threads, "algorithm": algo, "kernels": {}}

    def timeit(name, fn, reps, nbytes=None):
        fn()
        samples = []
        for _ in range(reps):
            t = time.perf_counter()
            fn()
            samples.append(time.perf_counter() - t)
        med = statistics.median(samples)
        out["kernels"][name] = {"median_s": med, "min_s": min(samples), "reps": reps}
        if nbytes:
            out["kernels"][name]["gb_per_s"] = nbytes / med / 1e9
            out["kernels"][name]["bytes"] = nbytes
        say(f"profile {name}: {1e3 * med:.3f} ms")
        return med

    with n_threads(args.threads):
        # the round's setup exactly as a fit makes it (the round driver's config, data and workspace)
        mapper = BinMapper(args.bins, random_state=args.seed)
        with Timer() as tb:
            codes = mapper.fit_transform(Xtr)
        out["binning_s"] = tb.s
        y = ytr.astype(Y_DTYPE)
        p = np.full(n, 1.0 / n)
        rule = RULES[algo]
        est = AdaBoostClassifier(max_bins=args.bins)
        config = est._config(rule, mapper, 2, d, n)
        config[0]["lam"] = 0.5
        c = config[0]
        data = TrainData(codes, y, p, mapper.n_value_bins_, mapper.thresholds_, mapper.categorical_)
        bits = np.zeros(4, np.uint64)
        ws = _driver.make_workspace(y, p.copy(), d, mapper.missing_code + 1, config)
        model = _driver.make_model(1, 0)
        learner = _driver.pick_learner(config)
        transform, update = rule.transform.get(), learner.update.get()
        u = ws.rows.w if c["u_is_w"] else ws.rows.u
        reps = 15
        t_tr = 0.0 if c["u_is_w"] else timeit(f"transform ({algo})", lambda: transform(data, c, ws), reps)
        t_h = timeit("build_histograms (GB/s of codes)",
                     lambda: build_histograms(codes, ws.rows.ylab, u, ws.stump.hist, int(c["hist_groups"])), reps,
                     n * d)
        t_s = timeit("split search (choose_stump)", lambda: choose_stump(
            ws.stump, mapper.n_value_bins_, mapper.categorical_, mapper.thresholds_, c, bits,
            ws.limits.monotone.direction, ws.limits.sample.feats), reps)
        stump = np.zeros(1, ROUND_DTYPE)[0]
        f, k, ml, left, right = choose_stump(ws.stump, mapper.n_value_bins_, mapper.categorical_, mapper.thresholds_,
                                             c, bits, ws.limits.monotone.direction, ws.limits.sample.feats)[:5]
        stump["feature"], stump["bin"], stump["missing_left"], stump["left"], stump["right"] = f, k, ml, left, right
        t_a = timeit("apply_stump", lambda: apply_stump(codes[f], stump, mapper.missing_code, ws.rows, u, ws.sums),
                     reps, n * (1 + 1 + 8 + 8 + 1))
        s = ws.sums[0]
        wi, wj = float(s["wi"]), float(s["wj"])
        alpha = 0.5 * np.log(wi / wj) if wi > 0 and wj > 0 else 1.0
        wsave = ws.rows.w.copy()

        def upd():
            update(data, c, ws, model, 0, alpha)
            ws.rows.w[:] = wsave  # same weights every call; the copy is timed apart and subtracted

        t_u = timeit("weight update + restore copy", upd, reps)
        t_c = timeit("restore copy alone", lambda: ws.rows.w.__setitem__(slice(None), wsave), reps)
        t_upd = max(t_u - t_c, 0.0)
        out["kernels"]["update_weights"] = {"median_s": t_upd, "derived": "previous two subtracted",
                                            "gb_per_s": n * (8 + 8 + 1 + 8) / max(t_upd, 1e-12) / 1e9}
        total = t_tr + t_h + t_s + t_a + t_upd
        out["sum_of_kernels_s"] = total
        out["numba_threading_layer"] = numba.threading_layer()
    if per_round_s:
        out["per_round_s"] = per_round_s
        out["other_s"] = per_round_s - total
    return out
