"""asv: privacy accounting; every calibrator timed cold (target: < 10 ms for T <= 10,000).

The names are looked up with :func:`.common.public`, so the suite follows the
public names wherever the package keeps them.
"""
from .common import clear_caches, public

# Looked up once, here (a failed import of a missing module is slow under an
# editable install): a name that no longer exists fails the discovery.
(PrivacyLedger, calibrate_dp_gcd, calibrate_gaussian, calibrate_gaussian_rdp,
 calibrate_pure_composition, calibrate_sampled_gaussian, calibrate_sampled_gaussian_pld,
 gaussian_epsilon, pure_composition_epsilon, sampled_gaussian_epsilon) = map(public, (
    "PrivacyLedger", "calibrate_dp_gcd", "calibrate_gaussian", "calibrate_gaussian_rdp",
    "calibrate_pure_composition", "calibrate_sampled_gaussian",
    "calibrate_sampled_gaussian_pld", "gaussian_epsilon", "pure_composition_epsilon",
    "sampled_gaussian_epsilon"))

EPSILON, DELTA = 1.0, 1e-6
DP_GCD_DELTA = 1.0 / 800 ** 2  # 1 / n^2 on dorothea
SAMPLING_RATE = 0.01


# name -> a call of one calibrator for T steps (mechanisms, iterations) at epsilon = 1
CALIBRATORS = {
    "calibrate_gaussian":
        lambda T: calibrate_gaussian(EPSILON, DELTA, T),
    "calibrate_gaussian_rdp":
        lambda T: calibrate_gaussian_rdp(EPSILON, DELTA, T),
    "calibrate_sampled_gaussian(q=0.01)":
        lambda T: calibrate_sampled_gaussian(EPSILON, DELTA, SAMPLING_RATE, T),
    "calibrate_pure_composition(optimal)":
        lambda T: calibrate_pure_composition(EPSILON, DELTA, T, method="optimal"),
    "calibrate_pure_composition(best)":
        lambda T: calibrate_pure_composition(EPSILON, DELTA, T, method="best"),
    "calibrate_pure_composition(best, bounded range)":
        lambda T: calibrate_pure_composition(EPSILON, DELTA, T, method="best",
                                           bounded_range=True),
    "calibrate_dp_gcd(laplace)":
        lambda T: calibrate_dp_gcd(EPSILON, DP_GCD_DELTA, T, "laplace"),
    "calibrate_dp_gcd(exponential)":
        lambda T: calibrate_dp_gcd(EPSILON, DP_GCD_DELTA, T, "exponential"),
    "calibrate_dp_gcd(laplace, gaussian gradient)":
        lambda T: calibrate_dp_gcd(EPSILON, DP_GCD_DELTA, T, "laplace", "gaussian"),
}
STEPS = (10, 1000, 10_000)


class Calibration:
    """Each calibrator, cold (its caches cleared), for T = 10, 1,000, 10,000."""

    params = (list(CALIBRATORS), list(STEPS))
    param_names = ["calibrator", "steps"]
    timeout = 120

    def time_cold(self, calibrator, steps):
        clear_caches()
        CALIBRATORS[calibrator](steps)


class PLDCalibration:
    """The PLD calibration of DP-SGD on dorothea's shape (rate 1/800, 1 and 5 passes of
    batch 1), cold: a search on a grid 8 times coarser, then secant steps on the grid
    (:func:`~sparsedp.privacy.calibrate_sampled_gaussian_pld`).  On the 2-core
    development machine (2026-12-07): 0.50 -> 0.22 s at 4,000 steps, 0.56 -> 0.22 s
    at 800."""

    params = [800, 4000]
    param_names = ["steps"]
    timeout = 120

    def time_cold(self, steps):
        clear_caches()
        calibrate_sampled_gaussian_pld(EPSILON, DELTA, 1 / 800, steps)


class Accountants:
    """The epsilon of a composition (the forward direction of the calibrations)."""

    params = [10, 1000, 10_000]
    param_names = ["steps"]

    def setup(self, steps):
        clear_caches()

    def time_gaussian_epsilon(self, steps):
        gaussian_epsilon(10.0, steps, DELTA)

    def time_sampled_gaussian_epsilon(self, steps):
        sampled_gaussian_epsilon(1.0, SAMPLING_RATE, steps, DELTA)

    def time_pure_composition_epsilon(self, steps):
        pure_composition_epsilon(0.01, steps, DELTA)


class Ledger:
    """Total epsilon of a mixed ledger (Gaussian + Laplace + pure)."""

    def setup(self):
        self.ledger = PrivacyLedger(delta=DELTA)
        self.ledger.add_laplace("smoothness constants", noise_multiplier=10.0)
        self.ledger.add_gaussian("coordinate gradients", noise_multiplier=30.0, count=10_000)
        self.ledger.add_pure("report-noisy-max", epsilon0=0.01, count=100)

    def time_ledger_epsilon(self):
        self.ledger.get_epsilon()
