"""The parameters every private estimator shares, documented once."""

COMMON_PARAMETERS = """\
    epsilon : float, default=1.0
        Privacy budget, > 0 (``inf``: the same algorithm without noise; the
        report then says the fit is not private).
    delta : float in (0, 1) or None, default=None
        None: ``1 / n_samples**2`` (below 1/n, the usual rule, so that no
        single row may be published in the clear).
    solver : {"auto", "cd", "gcd", "scd", "sgd"}, default="auto"
        DP-CD, DP-GCD, DP-SCD or DP-SGD (:mod:`sparsedp.solvers`); "auto" picks
        by the measured rule of :func:`sparsedp.linear_model.choose_solver`
        (with an L1 penalty DP-CD when ``n_samples > 1000 n_features``, else
        DP-GCD; without, DP-CD when ``n_samples > 10 n_features``, else DP-SGD;
        DP-SCD for the hinge loss; :data:`~sparsedp.linear_model.CD_MIN_RATIO`,
        docs/defaults.rst).  After fit, ``solver_`` says which ran.
    passes : float or None, default=None
        The budget of DP-CD, DP-SGD and DP-SCD, as their ``passes``: passes over
        the data (DP-CD: coordinate updates / n_features; DP-SGD and DP-SCD:
        expected epochs).  None: :func:`~sparsedp.linear_model.default_budget`
        (DP-CD: 20 when ``n_samples > n_features``, else 2; DP-SGD, DP-SCD: 20).
        Must be None with DP-GCD.
    n_iter : int or None, default=None
        DP-GCD's budget, its number of greedy iterations.  None: ``n epsilon /
        300`` within [3, 100] when n > p, else ``n epsilon / 600`` within [1, 100]
        (:func:`~sparsedp.linear_model.default_budget`).
        Must be None with the other solvers.
    step_size : float or None, default=None
        gamma in the solvers' step ``gamma / M_j`` (DP-CD, DP-GCD) or ``gamma /
        beta`` (DP-SGD).  None: 1 (DP-CD on the squared loss: 0.3).  DP-SCD has
        no step (leave it None).
    clip : float or None, default=None
        The clipping hyper-parameter C of the solver.  None: ``kappa * unit``,
        ``unit`` the per-sample gradient scale at 0 (``sqrt(tr M / beta)`` times
        ``|loss'(0, y)|``: from public constants when given, else from the
        private estimates, see ``leak_constants``) and ``kappa`` from
        :func:`~sparsedp.linear_model.default_kappa`
        (DP-CD: grows with ``n epsilon``, shrinks with the number of updates;
        DP-GCD, DP-SGD: 1; docs/defaults.rst).  DP-SCD: 1.0.
    rule : {"gs-r", "gs-s", "gs-q"} or None, default=None
        DP-GCD's greedy rule (None: its default, "gs-r").
    selection : {"exponential", "laplace"} or None, default=None
        DP-GCD's noisy max.  None: the exponential mechanism (measured better
        whenever the two differ; docs/defaults.rst).
    smoothness : None, float in (0, 1) or array of shape (n_features,)
        The coordinate-wise smoothness constants M_j.  None: estimated
        privately, inside the budget (docs/defaults.rst, "Private constants":
        per-feature noisy histograms, or for DP-GCD with fewer iterations than
        features the selected coordinates' constants after each selection);
        a float spends that fraction of epsilon on the DP-CD-P estimate
        (DP-CD, DP-GCD; with ``feature_bounds``, else a private bound); an array
        holds public constants (DP-SGD uses their sum, a public bound on its
        global smoothness).
    feature_bounds : None, float or array of shape (n_features,)
        Public bound on ``|X_ij|``, used by the private smoothness estimate
        (None: estimated privately).
    batch_size : int or None, default=None
        DP-SGD and DP-SCD: expected (Poisson) batch size.  None: 64 (at most n).
        ``step_size``, ``rule``, ``selection`` and ``batch_size`` go to the
        solvers that take them; set for another, they raise a ValueError.
    fit_intercept : bool, default=True
        Fit an intercept as the coefficient of an extra public column of
        constant value ``intercept_scaling`` (nothing is computed from the data
        for it; it is private as every coefficient is).  Like liblinear's, this
        intercept is penalised as the other coefficients: a larger
        ``intercept_scaling`` lessens the penalty's effect on it.  DP-CD and
        DP-GCD add the column inside their own layouts of X (their
        ``fit_intercept``: no copy of X); DP-SGD and DP-SCD append it (one copy).
    intercept_scaling : float, default=1.0
        The column's constant, in [1e-140, 1e140].
    solver_options : dict or None, default=None
        Further keyword arguments of the solver (e.g. ``{"averaging": True}``
        for DP-CD, ``{"sampling": "fixed"}`` for DP-SGD); they override the
        estimator's defaults (``DEFAULT_SOLVER_OPTIONS``).
    random_state : None, int or numpy Generator, default=None
        Seeds every random draw of the fit (reproducible).
    warm_start : bool, default=False
        Start from the previous fit's coefficients (DP-CD, DP-GCD, DP-SGD;
        ignored by DP-SCD).  ``privacy_`` covers the last fit only: two fits on
        the same data spend the sum of their budgets (compose their reports
        with :meth:`~sparsedp.privacy.PrivacyLedger.compose`).
    verbose : int, default=0
        Print the solver, the budget of each fit and the privacy report.
    leak_constants : bool, default=False
        Compute every constant the fit needs and was not given (the smoothness
        constants, the clip's scale, the targets' scale, the bounds) from the
        data without budget, as the papers' experiments do: a
        ``PrivacyLeakWarning``, and the report's epsilon is inf.  False (the
        default): they are estimated privately with a share of the budget
        (:data:`~sparsedp.linear_model.CONSTANTS_SHARE` of the GDP budget; the
        ledger lists each estimate as a mechanism).  With per-feature
        constants the fit runs on X clipped to the estimated per-feature bounds
        (``feature_clip_``), and prediction clips X the same way.
"""

FITTED_ATTRIBUTES = """\
    privacy_ : PrivacyLedger
        What the fit spent: the total (epsilon, delta), the neighbouring
        relation, every mechanism with its count, sensitivity and noise, and
        leaks if any (``print(est.privacy_)``; ``est.privacy_.to_dict()``).
    solver_ : str
        The solver that ran.
    delta_ : float
        The delta the fit was calibrated for.
    n_iter_ : int or ndarray
        The solver's iteration count (per class for classifiers).
    solver_params_ : dict
        The keyword arguments the solver was called with (besides the data,
        the model, the budget and the seed): calling it with them, the budget
        ``solver_budget_`` and the same seed reproduces the fit (one model; on
        X clipped to ``feature_clip_`` when that is set).
    solver_budget_ : tuple of float
        The ``(epsilon, delta)`` each solver call was given: the request less
        what the private constants and (one-vs-rest) the other models spent.
    solver_info_ : list of dict
        The solver's public values (noise multipliers, clipping thresholds,
        step sizes...), one per fitted model.
    feature_clip_ : ndarray of shape (n_features,) or None
        The private per-feature bounds X was clipped to for the fit (and is for
        prediction), or None (no clipping).
    target_bound_ : float or None
        The squared loss's bound on ``|y_i|`` the fit knew: ``target_bound``,
        else its private estimate (the highest bin of the noisy histogram of
        ``|y_i|`` that stood out), else None (what
        :class:`~sparsedp.model_selection.PrivateSearch` clips a squared error to).
    n_features_in_ : int
"""

TARGET_BOUND = """\
    target_bound : float or None, default=None
        A public bound on ``|y|``, the scale of the default clipping threshold
        (None: ``rms(y)`` estimated privately, or from the data with
        ``leak_constants``; or give ``clip``).
"""
