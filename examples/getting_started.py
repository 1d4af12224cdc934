"""Getting started: a private sparse logistic regression on sparse data (docs/getting_started.rst)."""
import numpy as np
import scipy.sparse as sp
from sklearn.model_selection import train_test_split

from sparsedp.linear_model import DPLogisticRegression

rng = np.random.default_rng(0)
n, p = 20_000, 20_000
useful = sp.random(n, 10, density=0.3, rng=rng, data_rvs=np.ones)
rest = sp.random(n, p - 10, density=0.002, rng=rng, data_rvs=np.ones)
X = sp.hstack([useful, rest], format="csr")
w = np.r_[[2.0, -2.0] * 5, np.zeros(p - 10)]
y = np.where(X @ w + rng.standard_normal(n) > 0, "spam", "ham")
X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)

clf = DPLogisticRegression(
    penalty="l1", alpha=1e-3,          # a sparse model
    classes=["ham", "spam"],           # public: the labels are declared, not read from y
    epsilon=1.0,                       # delta defaults to 1 / n**2
    random_state=0,
)
clf.fit(X_train, y_train)              # CSR in: converted once to CSC, never densified
print(clf.solver_, clf.classes_, f"test accuracy {clf.score(X_test, y_test):.3f}")
print("nonzero coefficients:", np.flatnonzero(clf.coef_[0]))
print(clf.privacy_)

# The same fit through the functional API (same seed, same coefficients).
from sparsedp.datafits import Logistic  # noqa: E402
from sparsedp.penalties import L1  # noqa: E402
from sparsedp.solvers import dp_gcd  # noqa: E402

yb = np.where(y_train == "spam", 1.0, -1.0)
epsilon, delta = clf.solver_budget_  # what is left after the private constants
res = dp_gcd(X_train, yb, Logistic(), L1(1e-3), epsilon=epsilon, delta=delta,
             random_state=0, **clf.solver_params_)  # fit_intercept=True among them
assert np.array_equal(res.coef, clf.coef_[0]) and res.intercept == clf.intercept_[0]
