"""The independent computations the goal models' one-game tests compare the EKF's site with: scipy's
count pmfs, and one dense Newton step on a Gaussian prior with the log-likelihood differentiated
numerically (central differences)."""

from __future__ import annotations

import numpy as np
from scipy.stats import nbinom, poisson


def log_pmf(x, lam, kappa):
    """scipy's Poisson or negative binomial (NB2: size 1 / kappa, mean lam) log pmf."""
    if kappa == 0.0:
        return poisson.logpmf(x, lam)
    r = 1.0 / kappa
    return nbinom.logpmf(x, r, r / (r + lam))


def newton_step(loglik, m, var, h: float = 0.05):
    """``(mean, cov)`` of one Newton step on the log posterior from the prior ``N(m, diag(var))``:
    ``cov = (Sigma^-1 - H)^-1``, ``mean = m + cov grad``, with the gradient and Hessian of ``loglik``
    at ``m`` by central differences of step ``h`` (rating points: the goal models' likelihoods are
    smooth on the scale of hundreds of points, so the error is O(h^2))."""
    m = np.asarray(m, dtype=float)
    eye = np.eye(m.size) * h
    grad = np.array([(loglik(m + e) - loglik(m - e)) / (2 * h) for e in eye])
    hess = np.array([[(loglik(m + e + f) - loglik(m + e - f) - loglik(m - e + f) + loglik(m - e - f)) / (4 * h * h)
                      for f in eye] for e in eye])
    cov = np.linalg.inv(np.diag(1.0 / np.asarray(var, dtype=float)) - hess)
    return m + cov @ grad, cov
