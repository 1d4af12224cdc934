"""asv: privacy accounting (calibration must be fast enough for hyper-parameter grids)."""
from sparsedp import accounting
from sparsedp.accounting import (
    PrivacyLedger,
    calibrate_gaussian,
    calibrate_pure_composition,
    calibrate_sampled_gaussian,
    gaussian_epsilon,
    sampled_gaussian_epsilon,
)


def _clear_caches():
    # The calibrations memoise per-(epsilon, delta) / per-q work; time them cold.
    accounting._gdp_calibrate_mu.cache_clear()
    accounting._sampled_gaussian_table.cache_clear()


class Gaussian:
    """Exact (GDP) Gaussian accounting; target: calibration < 1 ms at 1e5 steps."""

    params = ([1, 1000, 100_000], [0.1, 1.0, 10.0])
    param_names = ["steps", "epsilon"]

    def time_calibrate_gaussian(self, steps, epsilon):
        _clear_caches()
        calibrate_gaussian(epsilon, 1e-6, steps)

    def time_calibrate_gaussian_warm(self, steps, epsilon):
        calibrate_gaussian(epsilon, 1e-6, steps)

    def time_gaussian_epsilon(self, steps, epsilon):
        gaussian_epsilon(10.0, steps, 1e-6)


class SampledGaussian:
    """Poisson-subsampled Gaussian (RDP); target: calibration < 50 ms at 1e5 steps."""

    params = ([100, 100_000], [1e-4, 1e-3, 1e-2])
    param_names = ["steps", "sampling_rate"]
    timeout = 120

    def time_calibrate_sampled_gaussian(self, steps, q):
        _clear_caches()
        calibrate_sampled_gaussian(1.0, 1e-6, q, steps)

    def time_calibrate_sampled_gaussian_warm(self, steps, q):
        calibrate_sampled_gaussian(1.0, 1e-6, q, steps)

    def time_sampled_gaussian_epsilon(self, steps, q):
        sampled_gaussian_epsilon(1.0, q, steps, 1e-6)


class PureComposition:
    """Per-step epsilon of DP-GCD-style compositions of pure-DP mechanisms."""

    params = ([10, 1000, 20_000], ["optimal", "advanced", "zcdp", "best"])
    param_names = ["mechanisms", "method"]
    timeout = 120

    def time_calibrate_pure_composition(self, mechanisms, method):
        calibrate_pure_composition(1.0, 1e-6, mechanisms, method=method)


class Ledger:
    """Total epsilon of a mixed ledger (Gaussian + Laplace + pure)."""

    def setup(self):
        self.ledger = PrivacyLedger(delta=1e-6)
        self.ledger.add_laplace("smoothness constants", noise_multiplier=10.0)
        self.ledger.add_gaussian("coordinate gradients", noise_multiplier=30.0, count=10_000)
        self.ledger.add_pure("report-noisy-max", epsilon0=0.01, count=100)

    def time_ledger_epsilon(self):
        self.ledger.get_epsilon()
