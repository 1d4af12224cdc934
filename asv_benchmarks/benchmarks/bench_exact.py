"""asv: the exact (non-private) CD kernel and solver."""
import numpy as np

from sparsedp._kernels import kernel_id
from sparsedp._kernels._cd_fast import cd_epochs
from sparsedp._validation import check_X_y
from sparsedp.datafits import Logistic, Squared
from sparsedp.penalties import L1
from sparsedp.solvers import exact

from .common import datafit_problem, dorothea_like


class CDEpoch:
    """One epoch (p coordinate updates) of the exact CD kernel, dorothea-shaped."""

    params = ["squared", "logistic"]
    param_names = ["datafit"]

    def setup(self, datafit):
        self.datafit, self.X, self.y = datafit_problem(datafit)
        self.lip = self.datafit.smoothness(self.X)
        self.lam = 0.1 * np.max(np.abs(self.datafit.gradient(self.X, np.zeros(800), self.y)))

    def time_epoch(self, datafit):
        X = self.X
        w, z = np.zeros(X.shape[1]), np.zeros(X.shape[0])
        cd_epochs(kernel_id(self.datafit), X.data, X.indices, X.indptr, self.y, w, z,
                  self.lip, self.lam, 0.0, 1)


class ExactSolver:
    """The public ``exact`` end to end (validation, packing, CD epochs to convergence:
    tol 1e-8 for the squared loss, 20 epochs; 1e-4 for the logistic loss, 25 epochs)."""

    params = ["squared", "logistic"]
    param_names = ["datafit"]
    timeout = 120

    def setup(self, datafit):
        self.datafit = Squared() if datafit == "squared" else Logistic()
        self.X, self.y = dorothea_like(logistic=datafit == "logistic")
        Xc, yc = check_X_y(self.X, self.y, self.datafit)
        grad = self.datafit.gradient(Xc, np.zeros(Xc.shape[0]), yc)
        self.penalty = L1(0.1 * np.max(np.abs(grad)))
        self.tol = 1e-8 if datafit == "squared" else 1e-4

    def time_exact(self, datafit):
        exact(self.X, self.y, self.datafit, self.penalty, tol=self.tol, max_epochs=1000)
