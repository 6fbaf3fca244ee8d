"""The state evolution of hardmax attention with T tokens through a fitted Fisher table (§3.2).

One root per (ρ, α), its standard error by the delta method, and a
uniqueness scan; the root search is ``aimrepro.paper1.state_evolution.solve_se``.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace

import numpy as np
from scipy.optimize import brentq

from aimrepro.paper1.state_evolution import mmse_any, solve_se as solve_channel_se

from .channel import HardmaxTokens
from .tables import FisherFit

__all__ = ["HardmaxSEPoint", "curve_columns", "fixed_points", "iterate_se", "se_curve", "solve_se"]



@dataclass(frozen=True)
class HardmaxSEPoint:
    """SE fixed point through the fitted table: MMSE with its standard error from the table's noise.

    ``mmse_stderr`` by the delta method: |∂ MMSE/∂ log F| · σ_F(m*)/F(m*) at
    the fixed point m* (only F(m*) moves the root to first order).
    ``n_fixed_points`` is the number of roots of the fixed-point gap found by
    the scan of :func:`fixed_points` (1 = unique).
    """

    T: int
    alpha: float
    rho: float
    q: float
    q_hat: float
    mmse: float
    mmse_stderr: float
    F: float
    F_stderr: float
    m: float
    extrapolated: bool
    converged: bool
    iterations: int
    residual: float
    n_fixed_points: int

    def to_dict(self) -> dict:
        return asdict(self)


def _gap(channel, alpha, rho, v):
    Q0 = 1.0 + rho
    q_hat = alpha * channel.information(Q0 - v, Q0)
    return v - float(mmse_any(np.array([1.0 / q_hat]), rho)[0])


def fixed_points(fit: FisherFit, alpha: float, rho: float, *, n_grid: int = 400, v_min: float = 1e-7) -> np.ndarray:
    """Every root v = MMSE of the fixed-point gap v − mmse(1/q̂(v)) on (v_min, 1], by a log-grid scan and brentq.

    The SE from the uninformative start converges to the largest root; more
    than one root would mean a first-order transition (§3.1: the
    Bayes-optimal one maximises the free entropy).  O(n_grid) evaluations.
    """
    channel = HardmaxTokens(T=fit.T, fisher=fit)
    v = np.geomspace(v_min, 1.0, n_grid)
    f = np.array([_gap(channel, alpha, rho, vk) for vk in v])
    roots = []
    for k in np.flatnonzero(np.sign(f[:-1]) * np.sign(f[1:]) < 0):
        roots.append(brentq(lambda x: _gap(channel, alpha, rho, x), v[k], v[k + 1], xtol=1e-14))
    if f[-1] == 0.0:
        roots.append(1.0)
    return np.array(sorted(roots, reverse=True))


def iterate_se(fit: FisherFit, alpha: float, rho: float, q_start: float, *, tol: float = 1e-10,
               max_iter: int = 10_000) -> tuple[float, int, bool]:
    """The SE iteration q ← Q0 − mmse(1/q̂(q)) of §3.2 from ``q_start``: (MMSE, iterations, converged).

    The plain (undamped) map, as the paper iterates it from q = ρ; started from
    several q it shows which fixed point each start reaches (the report uses
    0, ρ and 0.999 Q0).  Each step is one evaluation of F and of mmse.
    """
    channel = HardmaxTokens(T=fit.T, fisher=fit)
    Q0 = 1.0 + rho
    if not (0.0 <= q_start < Q0):
        raise ValueError(f"q_start must satisfy 0 <= q_start < Q0 = {Q0}, got {q_start}")
    q = float(q_start)
    for k in range(1, max_iter + 1):
        v = Q0 - q
        v_new = v - _gap(channel, alpha, rho, v)
        if abs(v_new - v) < tol:
            return v_new, k, True
        q = Q0 - v_new
    return Q0 - q, max_iter, False


def solve_se(fit: FisherFit, alpha: float, rho: float, *, tol: float = 1e-10, scan: bool = True,
             relative_step: float = 1e-3) -> HardmaxSEPoint:
    """SE fixed point at (α, ρ) with the fitted F_T: q̂ = 2α F_T(q/Q0)/(Q0 − q), q = Q0 − mmse(1/q̂) (§3.2).

    The root is found by ``state_evolution.solve_se`` (geometric scan from the
    uninformative v = 1, then brentq), the denoising error by ``spectra``.
    The MMSE's standard error comes from the fit's covariance by the delta
    method (the root is re-solved with F scaled by 1 ± ``relative_step``).
    With ``scan`` the fixed-point gap is scanned for other roots.
    """
    if not isinstance(fit, FisherFit):
        raise ValueError(f"fit must be a FisherFit, got {type(fit).__name__}")
    channel = HardmaxTokens(T=fit.T, fisher=fit)
    point = solve_channel_se(channel, alpha, rho, tol=tol)
    Q0 = 1.0 + point.rho
    m = point.q / Q0
    F = float(fit.F(m))
    F_err = float(fit.F_stderr(m))
    up = solve_channel_se(replace(channel, fisher_scale=1.0 + relative_step), alpha, rho, tol=tol).mmse
    down = solve_channel_se(replace(channel, fisher_scale=1.0 - relative_step), alpha, rho, tol=tol).mmse
    slope = (up - down) / (2.0 * relative_step)
    n_roots = fixed_points(fit, alpha, rho).size if scan else -1
    return HardmaxSEPoint(fit.T, float(alpha), float(rho), point.q, point.q_hat, point.mmse,
                          float(abs(slope) * F_err / F), F, F_err, float(m),
                          bool(math.sqrt(max(1.0 - m, 0.0)) < fit.x_min), point.converged, point.iterations,
                          point.residual, int(n_roots))


def se_curve(fit: FisherFit, alphas, rho: float, *, scan: bool = False) -> list[HardmaxSEPoint]:
    """:func:`solve_se` along a grid of α (each point solved from the uninformative start)."""
    return [solve_se(fit, float(a), rho, scan=scan) for a in np.atleast_1d(alphas)]


def curve_columns(points) -> dict:
    """Columns of a table of SE points (:func:`se_curve`): the SE keys of ``state_evolution`` plus the errors.

    ``alpha, mmse, mmse_stderr, q, q_hat, F, F_stderr, m, extrapolated,
    converged, iterations, residual, n_fixed_points`` (−1: not scanned).
    """
    points = list(points)
    if not points:
        raise ValueError("points must hold at least one HardmaxSEPoint")
    names = ("alpha", "mmse", "mmse_stderr", "q", "q_hat", "F", "F_stderr", "m", "extrapolated", "converged",
             "iterations", "residual", "n_fixed_points")
    return {name: np.array([getattr(p, name) for p in points]) for name in names}
