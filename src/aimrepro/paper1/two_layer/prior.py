"""The prior channel of the pair (S₁, S₂): coupled denoising under a 2×2 noise precision (``docs/paper1.md`` §14.4).

At the replica-symmetric fixed point each layer's matrix is seen through a
Gaussian channel, and the two channels are coupled: (S₁, S₂) is observed with
noise of precision Q̂ (2×2 in layer space, GOE in matrix space).  The priors are
independent, S_ℓ = W_ℓW_ℓᵀ/√(r d).  With Q̂₁₂ = 0 each layer is the one-layer
problem, with error m_ℓ = mmse(1/Q̂_ℓℓ; ρ) (``spectra``).  Expanding the error
matrix M = Q0 − Q in the cross precision, with C_ℓ the posterior covariance
operator of layer ℓ alone (on symmetric matrices) and τ the normalised trace:

    M₁₂ = −Q̂₁₂ τ(C₁)τ(C₂) + O(Q̂₁₂³) = −Q̂₁₂ m₁ m₂ + O(Q̂₁₂³),
    M₁₁ = m₁ + Q̂₁₂² τ(C₁²)τ(C₂) + O(Q̂₁₂⁴) = m₁ + Q̂₁₂² s₁ m₂ + O(Q̂₁₂⁴)   (and 1 ↔ 2).

Both lines are exact: the cross covariance responds to the bilinear tilt
−Q̂₁₂⟨S₁, S₂⟩ of two independent posteriors through their covariances only,
and C₁, C₂ are asymptotically free (independent rotation-invariant problems), so
traces of their products factorise.  By Tweedie C_ℓ = Δ_ℓ J_ℓ with J_ℓ the
Jacobian of the rotation-invariant estimator (RIE) λ ↦ f(λ) = λ − 2Δ Re G(λ),
which in the eigenbasis of the observation multiplies the (i, j) entry by the
divided difference Γ_ij = (f(λ_i) − f(λ_j))/(λ_i − λ_j) (Daleckii–Krein), so

    m(Δ) = Δ E[Γ(λ, λ′)],      s(Δ) = τ(C²) = Δ² E[Γ(λ, λ′)²],     λ, λ′ iid ~ μ_Δ.

The first identity is the denoising error itself (checked to 1e−12 against
``spectra.mmse``, a test); the second is computed by the same product rule.
As Δ → 0, C → Δ × (projector on the tangent space of rank D(ρ)), so s → D Δ² and
s/m² → 1/D; as Δ → ∞, s/m² → 1.  The second order matters at the threshold:
there the V → 0 fixed point has κ² = Q̂₁₂²/(Q̂₁₁Q̂₂₂) of a few 1e−3, and without it
the zero-error point would appear at α = (D − corr²)/2, below the counting bound
D/2; with it the bound is met to O(κ⁴) (§14.5).

GAMP-RIE (:func:`coupled_denoiser`) uses the first-order Bayes estimator: the
noise of layer 1 conditioned on that of layer 2 has mean −(Q̂₁₂/Q̂₁₁)N₂ and
variance 1/Q̂₁₁, and N₂ is estimated by R₂ − Ŝ₂.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from scipy.interpolate import CubicSpline

from aimrepro.paper1 import spectra
from aimrepro.paper1.state_evolution import mmse_any

__all__ = ["coupled_denoiser", "error_matrix", "jacobian_second_moment", "mmse", "MMSE_KNOTS", "SECOND_MOMENT_KNOTS"]

#: Knots of the cached mmse(Δ; ρ) spline in log Δ over the quadrature's range (relative error 4e−10, measured).
MMSE_KNOTS = 2049
#: Knots of the spline of log(s/m²) in log Δ, and Gauss–Legendre nodes per support piece of its double
#: integral (the product rule converges to 1e−10 at 32 nodes, measured).
SECOND_MOMENT_KNOTS = 257
SECOND_MOMENT_NODES = 32


def _log_delta_grid(knots):
    log_delta = np.linspace(math.log(spectra.DELTA_MIN), math.log(spectra.DELTA_MAX), knots)
    return log_delta, np.clip(np.exp(log_delta), spectra.DELTA_MIN, spectra.DELTA_MAX)


@lru_cache(maxsize=8)
def _mmse_spline(rho: float) -> CubicSpline:
    """log(mmse(Δ)/Δ) against log Δ: a fixed point needs thousands of mmse values, the quadrature
    costs ~2 ms each, the spline ~5 µs (built once per ρ in ~0.1 s)."""
    log_delta, delta = _log_delta_grid(MMSE_KNOTS)
    return CubicSpline(log_delta, np.log(spectra.mmse(delta, rho) / delta))


def mmse(delta: float, rho: float) -> float:
    """mmse(Δ; ρ): a spline inside the quadrature's range, the asymptotic forms outside (``mmse_any``)."""
    if spectra.DELTA_MIN <= delta <= spectra.DELTA_MAX:
        return float(delta * math.exp(float(_mmse_spline(rho)(math.log(delta)))))
    return float(mmse_any(np.array([delta]), rho)[0])


def _divided_difference_moments(delta: float, rho: float, nodes: int) -> tuple[float, float]:
    """(Δ E Γ, Δ² E Γ²) over λ, λ′ iid μ_Δ by a product of the support rules of ``spectra`` (module notes).

    The diagonal of the product grid takes Γ(λ, λ) = f′(λ) (central difference of Re G).
    O(nodes² · pieces²) evaluations.
    """
    x, w = spectra._support_nodes(spectra._support_and_pieces(np.array([delta]), rho)[1], nodes)
    x, w = x.ravel(), w.ravel()
    keep = w > 0
    x, w = x[keep], w[keep]
    g = spectra.stieltjes_on_axis(x, delta, rho)
    weight = w * g.imag / np.pi
    f = x - 2.0 * delta * g.real
    step = 1e-6 * (1.0 + np.abs(x))
    slope = 1.0 - 2.0 * delta * (spectra.stieltjes_on_axis(x + step, delta, rho).real
                                 - spectra.stieltjes_on_axis(x - step, delta, rho).real) / (2.0 * step)
    gap = x[:, None] - x[None, :]
    same = gap == 0.0
    gamma = np.where(same, slope[:, None], (f[:, None] - f[None, :]) / np.where(same, 1.0, gap))
    pair = np.outer(weight, weight)
    pair /= pair.sum()
    return float(delta * np.sum(pair * gamma)), float(delta * delta * np.sum(pair * gamma * gamma))


@lru_cache(maxsize=8)
def _second_moment_spline(rho: float) -> CubicSpline:
    """log(s/m²) against log Δ (module notes); built once per ρ (~0.5 s)."""
    log_delta, delta = _log_delta_grid(SECOND_MOMENT_KNOTS)
    values = []
    for dlt in delta:
        first, second = _divided_difference_moments(float(dlt), rho, SECOND_MOMENT_NODES)
        values.append(math.log(second / first ** 2))
    return CubicSpline(log_delta, np.array(values))


def jacobian_second_moment(delta: float, rho: float) -> float:
    """s(Δ; ρ) = τ(C²) = Δ² E[Γ²] (module notes); outside the quadrature's range its limits
    s = m²/D(ρ) (Δ → 0) and s = m² (Δ → ∞)."""
    m = mmse(delta, rho)
    if delta < spectra.DELTA_MIN:
        return m * m / spectra.degrees_of_freedom(rho)
    if delta > spectra.DELTA_MAX:
        return m * m
    return float(m * m * math.exp(float(_second_moment_spline(rho)(math.log(delta)))))


def error_matrix(q_hat: np.ndarray, rho: float) -> np.ndarray:
    """Error matrix M of (S₁, S₂) under noise precision Q̂, exact to second order in Q̂₁₂ (module notes).

    A non-positive Q̂_ℓℓ (no information, or a table's noise around zero) gives m_ℓ = 1, the prior's
    error, and s_ℓ = 1.
    """
    q_hat = np.asarray(q_hat, dtype=float)
    m = np.ones(2)
    s = np.ones(2)
    for ell in range(2):
        if q_hat[ell, ell] > 0:
            delta = 1.0 / q_hat[ell, ell]
            m[ell] = mmse(delta, rho)
            s[ell] = jacobian_second_moment(delta, rho)
    # in the scaled cross precision k = Q̂₁₂ √(m₁m₂) (O(1) even when Q̂ ~ 1/V is huge): no overflow
    root = math.sqrt(m[0] * m[1])
    k = q_hat[0, 1] * root
    return np.array([[m[0] + k * k * s[0] / m[0], -k * root],
                     [-k * root, m[1] + k * k * s[1] / m[1]]])


def coupled_denoiser(R1: np.ndarray, R2: np.ndarray, q_hat: np.ndarray, rho: float, *,
                     denoise) -> tuple[np.ndarray, np.ndarray]:
    """First-order Bayes estimates of (S₁, S₂) from R_ℓ = S_ℓ + noise of precision Q̂ (module notes).

    Ŝ₁ = f(R₁ + (Q̂₁₂/Q̂₁₁)(R₂ − f(R₂; Δ₂ᵐ)); 1/Q̂₁₁), and 1 ↔ 2, with f the RIE
    ``denoise(R, Δ, ρ) -> (Ŝ, error)`` and Δ_ℓᵐ = (Q̂⁻¹)_ℓℓ the marginal noise of R_ℓ.
    Four eigendecompositions, two when Q̂₁₂ = 0: O(d³).
    """
    q_hat = np.asarray(q_hat, dtype=float)
    if q_hat[0, 1] == 0.0:  # uncoupled: the two one-layer estimators (two eigendecompositions)
        return denoise(R1, float(1.0 / q_hat[0, 0]), rho)[0], denoise(R2, float(1.0 / q_hat[1, 1]), rho)[0]
    marginal = np.diag(np.linalg.inv(q_hat))
    first, _ = denoise(R1, float(marginal[0]), rho)
    second, _ = denoise(R2, float(marginal[1]), rho)
    S1, _ = denoise(R1 + (q_hat[0, 1] / q_hat[0, 0]) * (R2 - second), float(1.0 / q_hat[0, 0]), rho)
    S2, _ = denoise(R2 + (q_hat[0, 1] / q_hat[1, 1]) * (R1 - first), float(1.0 / q_hat[1, 1]), rho)
    return S1, S2
