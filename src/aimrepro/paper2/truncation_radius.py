"""Radius of convergence of the tied truncations in the exactly solvable case (ours; [P App. D.3]).

For ℒ = c (G₁ − G₂)², L = 1, the truncation of order M of the hierarchy is
the Taylor polynomial of degree M − 1 (in t) of the exact moments
([P eqs. 340–341, 346]; ``docs/paper2.md`` §4.2).  Corollary 2 bounds the error
uniformly in time only for γ > γ*; at γ = 0 the Taylor series of the
moments converges for |t| < R only, R the distance from t = 0 to the nearest
complex singularity of t ↦ S₁(t), and "larger M is better" holds for
t < R and fails beyond it.

The Riccati solution (:func:`aimrepro.paper2.moments.riccati_solution`)
is S₁(t) = e^{At} W₀ [I + B W₀ᵀ F(t) W₀]⁻¹ W₀ᵀ e^{At} with A = 2cS* − (γ/4)I,
B = 4c, F(t) = ∫₀ᵗ e^{2As} ds, all entire in t.  Its singularities are the
complex zeros of

    D(t) = det(I_r + B W₀ᵀ F(t) W₀),

and R is the modulus of the zero nearest to 0 (:func:`riccati_radius`).
Without a teacher (A = 0, F = t I) the zeros are t = −1/(B λ_k(S₁(0))):
R = 1/(4c λ_max(S₁(0))), the ``≈ 1/(4λ_max)`` of the issue; the teacher
moves it.

Numerics
--------
Newton's method on log D from starting points spread around the circle
|t| = R₀ = 1/(B λ_max), then the argument principle on circles slightly
inside and outside the root found (the number of zeros inside) confirms
that no nearer zero was missed.  One evaluation of D costs an r×r
determinant after one eigendecomposition of A (O(d³) once, O(d r²) each).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["RiccatiRadius", "riccati_determinant", "riccati_radius"]


def _setup(W0, teacher, prefactor, weight_decay):
    W = np.asarray(W0, dtype=float)
    S = np.asarray(teacher.dense() if hasattr(teacher, "dense") else teacher, dtype=float)
    d = W.shape[0]
    if S.shape != (d, d) or not np.allclose(S, S.T):
        raise ValueError(f"the teacher must be a symmetric {d}×{d} matrix, got shape {S.shape}")
    if not (math.isfinite(prefactor) and prefactor > 0):
        raise ValueError(f"prefactor must be a finite number > 0, got {prefactor}")
    if not (math.isfinite(weight_decay) and weight_decay >= 0):
        raise ValueError(f"weight_decay must be a finite number >= 0, got {weight_decay}")
    a, U = np.linalg.eigh(2.0 * prefactor * S - 0.25 * weight_decay * np.eye(d))
    return U.T @ W, a, 4.0 * prefactor


def _f(a: np.ndarray, t: complex) -> tuple[np.ndarray, np.ndarray]:
    """F(t) = (e^{2at} − 1)/(2a) (→ t as a → 0) and F'(t) = e^{2at}, for complex t."""
    z = 2.0 * a * t
    small = np.abs(z) < 1e-8
    safe = np.where(small, 1.0, z)
    f = np.where(small, t * (1.0 + z / 2.0), np.expm1(safe) / np.where(small, 1.0, 2.0 * a))
    return f, np.exp(z)


def riccati_determinant(W0, teacher, t: complex, *, prefactor: float = 1.0,
                        weight_decay: float = 0.0) -> complex:
    """D(t) = det(I + B W₀ᵀ F(t) W₀) at a complex t (module docstring)."""
    Wr, a, B = _setup(W0, teacher, prefactor, weight_decay)
    f, _ = _f(a, complex(t))
    return complex(np.linalg.det(np.eye(Wr.shape[1]) + B * (Wr.T * f) @ Wr))


@dataclass(frozen=True)
class RiccatiRadius:
    """The nearest singularity of the Riccati solution.

    Attributes
    ----------
    radius : float
        |t*|: the radius of convergence of the truncations (Taylor polynomials).
    singularity : complex
        t* (a zero of D).
    no_teacher_radius : float
        1/(B λ_max(S₁(0))): the radius without a teacher.
    zeros_inside, zeros_outside : int
        Zeros of D counted (argument principle) on circles of radius
        (1 − margin)R and (1 + margin)R: 0 and ≥ 1 confirm R.
    converged : bool
        Newton converged and the counts are 0 and ≥ 1.
    iterations : int
    residual : float
        |D(t*)| relative to max |D| on the search circle.
    """

    radius: float
    singularity: complex
    no_teacher_radius: float
    zeros_inside: int
    zeros_outside: int
    converged: bool
    iterations: int
    residual: float


def _count_zeros(logdet_derivative, radius: float, n: int) -> int:
    theta = 2 * np.pi * np.arange(n) / n
    t = radius * np.exp(1j * theta)
    dt = 1j * t * (2 * np.pi / n)
    integral = sum(logdet_derivative(ti) * dti for ti, dti in zip(t, dt))
    return int(round((integral / (2j * np.pi)).real))


def riccati_radius(W0, teacher, *, prefactor: float = 1.0, weight_decay: float = 0.0,
                   n_starts: int = 8, tol: float = 1e-12, max_iter: int = 60,
                   margin: float = 0.05, n_contour: int = 1024) -> RiccatiRadius:
    """Radius of convergence R of the truncations of the linear case (module docstring).

    Parameters
    ----------
    W0 : (d, r) ndarray
        Student factor, S₁(0) = W₀W₀ᵀ.
    teacher : FactoredMatrix or (d, d) ndarray
        S*.
    prefactor, weight_decay : float
        c and γ.
    n_starts : int
        Newton starting points on the circle |t| = 1/(B λ_max).
    margin : float
        Relative width of the argument-principle check around R.
    n_contour : int
        Points of each argument-principle contour (the integrand varies on
        the scale margin·R near the circles: n_contour ≫ 2π/margin).
    """
    Wr, a, B = _setup(W0, teacher, prefactor, weight_decay)
    r = Wr.shape[1]
    lam_max = float(np.linalg.eigvalsh(Wr.T @ Wr)[-1])
    R0 = 1.0 / (B * lam_max)
    eye = np.eye(r)

    def dlog(t: complex) -> complex:
        f, fp = _f(a, t)
        K = eye + B * (Wr.T * f) @ Wr
        return complex(np.trace(np.linalg.solve(K, B * (Wr.T * fp) @ Wr)))

    roots, iterations = [], 0
    for k in range(n_starts):
        t = R0 * np.exp(1j * (np.pi + 2 * np.pi * k / n_starts)) * 1.01
        for _ in range(max_iter):
            iterations += 1
            g = dlog(t)
            if not np.isfinite(g) or g == 0:
                break
            step = 1.0 / g                 # Newton on D: t − D/D' = t − 1/(log D)'
            t = t - step
            if abs(step) < tol * max(1.0, abs(t)):
                roots.append(complex(t))
                break
    if not roots:
        return RiccatiRadius(math.nan, complex(math.nan), R0, -1, -1, False, iterations,
                             math.nan)
    best = min(roots, key=abs)
    R = abs(best)
    inside = _count_zeros(dlog, (1 - margin) * R, n_contour)
    outside = _count_zeros(dlog, (1 + margin) * R, n_contour)
    circle = R * np.exp(1j * np.linspace(0, 2 * np.pi, 64, endpoint=False))
    scale = max(abs(riccati_determinant(W0, teacher, t, prefactor=prefactor,
                                        weight_decay=weight_decay)) for t in circle)
    residual = abs(riccati_determinant(W0, teacher, best, prefactor=prefactor,
                                       weight_decay=weight_decay)) / scale
    return RiccatiRadius(R, best, R0, inside, outside, bool(inside == 0 and outside >= 1),
                         iterations, residual)
