"""Sample-ratio axes of paper 1 and the closed-form softmax thresholds.

A theory curve is computed on a grid of one *axis variable*; the axis names
appear verbatim in result paths (``alpha_log_0.03_10_n64``).

Axes (``docs/paper1.md`` §1.5, §4, §7):

``alpha``     α = n/d², the sample ratio itself.
``alphabar``  ᾱ_ρ = α/ρ = n/(d r), the small-width rescaling of Figure 1 right.
``alphaT``    ᾱ_T = α (T² + T − 2), the softmax collapse variable of Figure 2 right.
``alphapr``   α/α_PR(ρ, T), the fraction of the softmax perfect-recovery threshold.
"""

from __future__ import annotations

import math

import numpy as np

AXES = ("alpha", "alphabar", "alphaT", "alphapr")


def n_softmax_measurements(T: int) -> int:
    """T² + T − 2: twice the number of linear measurements one softmax sample gives (§3.3)."""
    return T * T + T - 2


def alpha_perfect_recovery(rho: float, T: int) -> float:
    """Softmax perfect-recovery threshold α_PR(ρ, T) = D(ρ)/(T² + T − 2) (§4).

    D(ρ) is the number of degrees of freedom of S per d²: 2ρ − ρ² for ρ < 1
    and 1 for ρ >= 1 (not min(2ρ − ρ², 1), which falls back to 0 at ρ = 2).
    Valid for ρ in (0, ∞]; ρ = inf gives the Gaussian-prior value 1/(T² + T − 2).
    """
    _check_rho(rho, allow_inf=True)
    _check_T(T)
    dof = 1.0 if rho >= 1.0 else 2.0 * rho - rho * rho
    return dof / n_softmax_measurements(T)


def alphas_from_axis(axis: str, x, *, rho: float, T: int) -> np.ndarray:
    """Convert axis values x to sample ratios α.

    For ρ → 0 (``rho == 0``) only ``alphabar`` is meaningful and α = ρ ᾱ = 0:
    the returned α are NaN so that no one mistakes them for data.
    """
    if axis not in AXES:
        raise ValueError(f"axis must be one of {AXES}, got {axis!r}")
    x = np.asarray(x, dtype=float)
    _check_T(T)
    if axis == "alpha":
        return x.copy()
    if axis == "alphaT":
        return x / n_softmax_measurements(T)
    if axis == "alphabar":
        if rho == 0:
            return np.full_like(x, np.nan)
        _check_rho(rho, allow_inf=False)
        return x * rho
    return x * alpha_perfect_recovery(rho, T)


def _check_rho(rho: float, *, allow_inf: bool) -> None:
    upper = "inf" if allow_inf else "a finite value"
    if not (rho > 0) or (not allow_inf and math.isinf(rho)) or math.isnan(rho):
        raise ValueError(f"rho must be > 0 and {upper}, got {rho}")


def _check_T(T: int) -> None:
    if not (isinstance(T, (int, np.integer)) and T >= 2):
        raise ValueError(f"T must be an integer >= 2, got {T!r}")
