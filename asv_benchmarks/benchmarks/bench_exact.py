"""asv: the exact (non-private) CD kernel."""
import numpy as np

from sparsedp._kernels import kernel_id
from sparsedp._kernels._cd_fast import cd_epochs
from sparsedp._validation import check_X_y
from sparsedp.datafits import Logistic, Squared

from .common import dorothea_like


class CDEpoch:
    """One epoch (p coordinate updates) of the exact CD kernel, dorothea-shaped."""

    params = ["squared", "logistic"]
    param_names = ["datafit"]

    def setup(self, datafit):
        self.datafit = Squared() if datafit == "squared" else Logistic()
        X, y = dorothea_like(logistic=datafit == "logistic")
        self.X, self.y = check_X_y(X, y, self.datafit)
        self.lip = self.datafit.smoothness(self.X)
        self.lam = 0.1 * np.max(np.abs(self.datafit.gradient(self.X, np.zeros(800), self.y)))

    def time_epoch(self, datafit):
        X = self.X
        w, z = np.zeros(X.shape[1]), np.zeros(X.shape[0])
        cd_epochs(kernel_id(self.datafit), X.data, X.indices, X.indptr, self.y, w, z,
                  self.lip, self.lam, 0.0, 1)
