"""Binning: raw X -> uint8 codes (BinMapper.fit_transform), and its two parts apart: the edges (fit, mostly
sorting) and the mapping of every value to its code (transform)."""
from .common import FEATURES, SIZES, THREADS, twonorm


class Binning:
    params = (SIZES, FEATURES)
    param_names = ["n", "d"]
    number = 1
    repeat = (1, 10, 20.0)
    warmup_time = 0
    timeout = 600

    def setup(self, n, d):
        try:
            from fastboost._binning import BinMapper
            from fastboost._config import n_threads
        except ImportError as exc:
            raise NotImplementedError(f"no BinMapper at this commit: {exc}") from None
        self.BinMapper, self.n_threads = BinMapper, n_threads
        self.X = twonorm(n, d)[0]
        with n_threads(THREADS):
            BinMapper(255, random_state=0).fit_transform(self.X[:2_000])  # JIT warm-up
            self.fitted = BinMapper(255, random_state=0).fit(self.X)

    def _bin(self):
        with self.n_threads(THREADS):
            self.BinMapper(255, random_state=0).fit_transform(self.X)

    def time_fit_transform(self, n, d):
        self._bin()

    def peakmem_fit_transform(self, n, d):
        self._bin()

    def time_fit(self, n, d):
        with self.n_threads(THREADS):
            self.BinMapper(255, random_state=0).fit(self.X)

    def time_transform(self, n, d):
        with self.n_threads(THREADS):
            self.fitted.transform(self.X)
