"""Untied attention, fast phase: the student mean on the fast time t = n·lr.

Paper 2 §4 ([P eq. 28], ``docs/paper2.md`` §2.3, §5.3).  The student index
G = xᵀ U Vᵀ x/√d is not centered: its mean m = Tr(U Vᵀ)/√d moves at order lr
per SGD step while the normalised moments move at order lr/d.  On the fast
time the moments are frozen (:class:`UntiedState`) and

    dm/dt = −(t^A(0) + t^B(0)) ∂Φ/∂m (m, q(0)):

the mean relaxes to the critical point m*(q) reached from m(0)
(:class:`MeanLandscape`, :func:`fast_fixed_point`, :func:`solve_fast_flow`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import optimize
from scipy.integrate import solve_ivp

from aimrepro.paper2.population import IndexLaw, Potential


@dataclass(frozen=True)
class UntiedState:
    """Order parameters of an untied student against a teacher ([P §4.1]).

    Attributes
    ----------
    mean : (2,) ndarray
        m_k = Tr M_k/√d (student, teacher).
    q1, q2 : (2, 2) ndarrays
        q⁽¹⁾_kl = Tr(M_k M_lᵀ)/d (= Ω), q⁽²⁾_kl = Tr(M_k M_l)/d (= Ψ).
    tA, tB : float
        ‖U‖²_F/d and ‖V‖²_F/d of the student.
    """

    mean: np.ndarray
    q1: np.ndarray
    q2: np.ndarray
    tA: float
    tB: float

    @property
    def rate(self) -> float:
        """t^A + t^B: the mobility of the mean in the fast equation [P eq. 28]."""
        return self.tA + self.tB


@dataclass(frozen=True, eq=False)
class MeanLandscape:
    """Φ(m, m₂, q⁽¹⁾, q⁽²⁾) as a function of the student mean m at frozen moments.

    Parameters
    ----------
    potential : Potential
        Φ of the loss (any T its method supports).
    teacher_mean : float
        m₂ (fixed: the teacher is not trained).
    q1, q2 : (2, 2) array_like
        Frozen q⁽¹⁾ = Ω and q⁽²⁾ = Ψ.
    """

    potential: Potential
    teacher_mean: float
    q1: np.ndarray
    q2: np.ndarray

    def law(self, m: float) -> IndexLaw:
        return IndexLaw.untied([m, self.teacher_mean], self.q1, self.q2, self.potential.T)

    def value(self, m: float) -> float:
        return self.potential.evaluate(self.law(m), gradient=False).value

    def gradient(self, m: float) -> float:
        """∂Φ/∂m₁ (Price: Σ_i E ∂ℒ/∂G_ii1)."""
        return float(self.potential.evaluate(self.law(m)).d_mean[0])

    def curvature(self, m: float, *, step: float = 1e-5) -> float:
        """∂²Φ/∂m₁² by a central difference of the Price gradient."""
        return (self.gradient(m + step) - self.gradient(m - step)) / (2.0 * step)

    @classmethod
    def at(cls, potential: Potential, state: UntiedState) -> MeanLandscape:
        return cls(potential, float(state.mean[1]), state.q1, state.q2)


@dataclass(frozen=True)
class FastFixedPoint:
    """The critical point m* the fast mean flow reaches from ``start``.

    Attributes
    ----------
    m_star : float
    curvature : float
        ∂²Φ/∂m² at m*: > 0 for a stable state (Assumption 5 of the paper).
    stable : bool
    converged : bool
        A sign change of ∂Φ/∂m was found and the root refined to ``residual``.
    iterations : int
        Evaluations of ∂Φ/∂m.
    residual : float
        |∂Φ/∂m(m*)|.
    start : float
    """

    m_star: float
    curvature: float
    stable: bool
    converged: bool
    iterations: int
    residual: float
    start: float

    def to_dict(self) -> dict:
        return {k: (bool(v) if isinstance(v, (bool, np.bool_)) else v)
                for k, v in self.__dict__.items()}


def fast_fixed_point(landscape: MeanLandscape, start: float, *, xtol: float = 1e-12,
                     initial_step: float = 0.05, growth: float = 1.5,
                     max_expansions: int = 60) -> FastFixedPoint:
    """The zero of ∂Φ/∂m that the gradient flow [P eq. 28] reaches from ``start``.

    A one-dimensional gradient flow moves monotonically downhill and stops at
    the first zero of ∂Φ/∂m in that direction: the search steps from
    ``start`` against the sign of the gradient, with steps growing by
    ``growth``, until the gradient changes sign, and refines the root with
    Brent's method.  A start that is already critical is returned as is
    (stable or not: the flow does not move).

    Numerics
    --------
    Two zeros closer together than one search step could be jumped over; the
    first step is ``initial_step`` (0.05 in units of the mean).  Each
    evaluation of ∂Φ/∂m is one Φ evaluation with gradients.
    """
    if not math.isfinite(start):
        raise ValueError(f"start must be finite, got {start}")
    count = 0

    def grad(m: float) -> float:
        nonlocal count
        count += 1
        return landscape.gradient(m)

    g0 = grad(start)
    if g0 == 0.0:
        root, converged = float(start), True
    else:
        direction = -math.copysign(1.0, g0)
        step, lo = initial_step, float(start)
        converged = False
        for _ in range(max_expansions):
            hi = lo + direction * step
            g_hi = grad(hi)
            if not math.isfinite(g_hi):
                break
            if math.copysign(1.0, g_hi) != math.copysign(1.0, g0) or g_hi == 0.0:
                converged = True
                break
            lo, step = hi, step * growth
        if converged:
            a, b = sorted((lo, hi))
            root = optimize.brentq(grad, a, b, xtol=xtol, rtol=4 * np.finfo(float).eps)
        else:
            root = lo
    curvature = landscape.curvature(root)
    count += 2
    residual = abs(landscape.gradient(root))
    count += 1
    return FastFixedPoint(float(root), float(curvature), bool(curvature > 0), converged, count,
                          float(residual), float(start))


def solve_fast_flow(landscape: MeanLandscape, m0: float, rate: float, t_fast,
                    *, rtol: float = 1e-9, atol: float = 1e-12) -> tuple[np.ndarray, dict]:
    """The fast mean dm/dt = −rate · ∂Φ/∂m(m) at frozen moments ([P eq. 28]).

    Parameters
    ----------
    landscape : MeanLandscape
        Φ at the frozen initial moments q(0).
    m0 : float
        m(0).
    rate : float
        t^A(0) + t^B(0) > 0.
    t_fast : increasing array
        Fast times t = nα at which m is returned (starting at 0 or later).

    Returns
    -------
    m : ndarray, same shape as ``t_fast``
    diagnostics : dict
        ``converged`` (solver success), ``status``, ``nfev``.
    """
    if not (math.isfinite(rate) and rate > 0):
        raise ValueError(f"rate must be a finite number > 0, got {rate}")
    t_fast = np.asarray(t_fast, dtype=float)
    if t_fast.ndim != 1 or t_fast.size < 1 or np.any(np.diff(t_fast) < 0) or t_fast[0] < 0:
        raise ValueError("t_fast must be a non-decreasing 1-D array of times >= 0")
    t_end = float(t_fast[-1])
    if t_end == 0.0:
        return np.full(t_fast.shape, float(m0)), {"converged": True, "status": 0, "nfev": 0}
    sol = solve_ivp(lambda t, y: [-rate * landscape.gradient(float(y[0]))], (0.0, t_end),
                    [float(m0)], method="RK45", dense_output=True, rtol=rtol, atol=atol)
    m = sol.sol(t_fast)[0] if sol.status == 0 else np.full(t_fast.shape, np.nan)
    return m, {"converged": sol.status == 0, "status": int(sol.status), "nfev": int(sol.nfev)}
