"""Untied attention: the weak-recovery dichotomy of the slow phase.

Paper 2 [P Cor. 4, eqs. 42, 48–49] (``docs/paper2.md`` §5.3).  At an
uninformative start the symmetric overlap s = (q⁽¹⁾₁₂ + q⁽²⁾₁₂)/(q⁽¹⁾₂₂ +
q⁽²⁾₂₂) has initial slow velocity −2(t^A + t^B)(a₁₂ + b₁₂), which for one
token and MSE is 4c (t^A + t^B) E σ'(Z₁) E σ*'(Z₂) with Z₁ ~ N(m*, v₁) at
the mean selected by the fast phase (:func:`dichotomy`).
:func:`fast_state_table` tabulates the fast state and these factors
against the teacher mean; :func:`symmetric_state_threshold` is where the
symmetric state m* = 0 loses stability at the initial moments.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import optimize, special

from aimrepro.paper2.population import IndexLaw, Potential
from aimrepro.paper2.untied.fast import MeanLandscape, UntiedState, fast_fixed_point


@dataclass(frozen=True)
class Dichotomy:
    """The weak-recovery criterion at the state selected by the fast phase (one token).

    Attributes
    ----------
    student_factor, teacher_factor : float
        E σ'(Z₁), Z₁ ~ N(m*, v₁), and E σ*'(Z₂), Z₂ ~ N(m₂, v₂).
    product : float
        Their product: weak recovery on the d²-log-d scale if ≠ 0 [P eq. 49].
    cross_gradient : float
        a₁₂ + b₁₂ = [∇_{q⁽¹⁾}Φ + ∇_{q⁽²⁾}Φ]₁₂ at (m*, q), from the potential.
    slope : float
        Initial slow velocity of the symmetric overlap, −2(t^A + t^B)(a₁₂ + b₁₂)
        ([P eq. 42] summed over r and divided by v₂); its sign is that of
        m*·m₂ for h₂.
    """

    student_factor: float
    teacher_factor: float
    product: float
    cross_gradient: float
    slope: float


def _mean_derivative(link, mean: float, var: float, n_nodes: int = 80) -> float:
    """E σ'(Z), Z ~ N(mean, var), by Gauss–Hermite quadrature (exact for polynomial links)."""
    x, w = special.roots_hermitenorm(n_nodes)
    z = mean + math.sqrt(max(var, 0.0)) * x
    return float(w @ link.jacobian(z) / math.sqrt(2.0 * math.pi))


def dichotomy(potential: Potential, state: UntiedState, m_star: float) -> Dichotomy:
    """The criterion E σ'(Z₁) E σ*'(Z₂) ≠ 0 at the fast state m* ([P eqs. 48–49]; T = 1).

    ``state`` gives the moments (q₁₂ ≈ 0 at an uninformative start), the
    teacher mean m₂ and t^A + t^B.
    """
    if potential.T != 1 or not potential.loss.elementwise:
        raise ValueError("the dichotomy criterion of [P eq. 49] is for one token and an "
                         f"elementwise link, got T = {potential.T}, "
                         f"link {potential.loss.student.name!r}")
    v = state.q1 + state.q2
    student = _mean_derivative(potential.loss.student, m_star, v[0, 0])
    teacher = _mean_derivative(potential.loss.teacher, float(state.mean[1]), v[1, 1])
    value = potential.evaluate(IndexLaw.untied([m_star, state.mean[1]], state.q1, state.q2, 1))
    cross = float(value.d_Omega[0, 1] + value.d_Psi[0, 1])
    return Dichotomy(student, teacher, student * teacher, cross, -2.0 * state.rate * cross)


def symmetric_state_threshold(potential: Potential, v1: float, v2: float, *,
                              max_mean: float = 10.0, n_scan: int = 200) -> float:
    """Smallest teacher mean m₂ ≥ 0 at which the symmetric fast state m = 0 becomes unstable.

    At an uninformative start (q₁₂ = 0, one token, variances v₁ = q⁽¹⁾₁₁ +
    q⁽²⁾₁₁, v₂) and an even student link, m = 0 is a critical point of Φ in
    m for every m₂; it stops being a minimum where ∂²Φ/∂m² (0; m₂) changes
    sign.  Beyond it the fast phase selects m* ≠ 0, the student factor
    E σ'(Z₁) no longer vanishes and, with E σ*'(Z₂) ≠ 0, the slow phase
    recovers the teacher on the d² log d scale.  For h₂:
    ∂²Φ/∂m²(0) = 3v₁ − v₂ − m₂², threshold √(3v₁ − v₂) (``docs/paper2.md`` §5.3).

    Returns NaN if m = 0 stays stable up to ``max_mean``.

    Raises
    ------
    ValueError
        If m = 0 is not a critical point (odd or non-symmetric links).
    """
    if potential.T != 1:
        raise ValueError(f"the threshold is computed for one token, got T = {potential.T}")
    q1 = np.diag([v1, v2]).astype(float)
    q2 = np.zeros((2, 2))

    def landscape(m2: float) -> MeanLandscape:
        return MeanLandscape(potential, m2, q1, q2)

    scale = math.sqrt(v1 + v2)
    for m2 in (0.0, 0.5 * max_mean, max_mean):
        if abs(landscape(m2).gradient(0.0)) > 1e-10 * max(1.0, scale):
            raise ValueError(f"m = 0 is not a critical point of Phi in m for link "
                             f"{potential.loss.student.name!r} (teacher mean {m2:g}): no "
                             "symmetric fast state")
    grid = np.linspace(0.0, max_mean, n_scan)
    curvature = np.array([landscape(m2).curvature(0.0) for m2 in grid])
    if curvature[0] <= 0:
        return 0.0
    below = np.flatnonzero(curvature <= 0)
    if below.size == 0:
        return math.nan
    i = int(below[0])
    return float(optimize.brentq(lambda m2: landscape(m2).curvature(0.0), grid[i - 1], grid[i],
                                 xtol=1e-12))


def fast_state_table(potential: Potential, teacher_means, *, v1: float, v2: float,
                     rate: float) -> tuple[dict[str, np.ndarray], dict]:
    """The fast state and the dichotomy against the teacher mean, at an uninformative start.

    For each m₂: the fast fixed points reached from m = ±0 (just above and
    below zero, the two signs a finite-d start can have), their curvature
    and that at m = 0 (the rate, over t^A + t^B, at which the mean leaves or
    returns to the symmetric state),
    the dichotomy factors at the positive branch and the predicted initial
    slow slope of the symmetric overlap (``rate`` = t^A + t^B).  The
    threshold of :func:`symmetric_state_threshold` is a constant column (NaN
    when the link has no symmetric state).
    """
    teacher_means = np.asarray(teacher_means, dtype=float)
    if teacher_means.ndim != 1 or teacher_means.size < 1:
        raise ValueError("teacher_means must be a non-empty 1-D array")
    try:
        threshold = symmetric_state_threshold(potential, v1, v2,
                                              max_mean=max(2.0, 2 * np.abs(teacher_means).max()))
    except ValueError:
        threshold = math.nan
    q1 = np.diag([v1, v2]).astype(float)
    q2 = np.zeros((2, 2))
    rows = {name: [] for name in ("m2", "m_star_plus", "m_star_minus", "curvature_plus",
                                  "curvature_zero", "student_factor", "teacher_factor",
                                  "product", "slope", "threshold")}
    all_converged = True
    for m2 in teacher_means:
        landscape = MeanLandscape(potential, float(m2), q1, q2)
        plus = fast_fixed_point(landscape, 1e-6)
        minus = fast_fixed_point(landscape, -1e-6)
        all_converged &= plus.converged and minus.converged
        state = UntiedState(np.array([plus.m_star, m2]), q1, q2, rate / 2, rate / 2)
        crit = dichotomy(potential, state, plus.m_star)
        for name, value in (("m2", m2), ("m_star_plus", plus.m_star),
                            ("m_star_minus", minus.m_star), ("curvature_plus", plus.curvature),
                            ("curvature_zero", landscape.curvature(0.0)),
                            ("student_factor", crit.student_factor),
                            ("teacher_factor", crit.teacher_factor), ("product", crit.product),
                            ("slope", crit.slope), ("threshold", threshold)):
            rows[name].append(value)
    columns = {name: np.asarray(values, dtype=float) for name, values in rows.items()}
    return columns, {"converged": bool(all_converged), "threshold": threshold,
                     "v1": v1, "v2": v2, "rate": rate}
