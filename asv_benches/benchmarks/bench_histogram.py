"""The histogram kernel: per-feature, per-class sums of the learner's weights over all rows."""
import numpy as np

from .common import FEATURES, SIZES, THREADS, twonorm


class Histogram:
    params = (SIZES, FEATURES)
    param_names = ["n", "d"]
    repeat = (3, 20, 10.0)
    timeout = 600

    def setup(self, n, d):
        try:
            from fastboost._binning import BinMapper
            from fastboost._config import n_threads
            from fastboost._kernels.histogram import build_histograms
        except ImportError as exc:
            raise NotImplementedError(f"no histogram kernel at this commit: {exc}") from None
        try:  # commits with the grouped kernel take the number of feature groups
            from fastboost._config import resolve_n_jobs
            from fastboost._kernels.histogram import n_feature_groups
            extra = (n_feature_groups(d, resolve_n_jobs(THREADS)),)
        except ImportError:
            extra = ()
        X, y, _, _ = twonorm(n, d)
        self.n_threads = n_threads
        self.kernel = build_histograms
        with n_threads(THREADS):
            mapper = BinMapper(255, random_state=0)
            self.codes = mapper.fit_transform(X)
            self.y = (y > 0).astype(np.uint8)
            self.u = np.full(n, 1.0 / n)
            self.hist = np.empty((d, mapper.missing_code + 1, 2))
            self.args = (self.codes, self.y, self.u, self.hist) + extra
            self.kernel(*self.args)  # JIT warm-up

    def time_build_histograms(self, n, d):
        with self.n_threads(THREADS):
            self.kernel(*self.args)

    def track_codes_mb(self, n, d):
        return self.codes.nbytes / 1e6

    track_codes_mb.unit = "MB"
