"""Untied attention S = U Vᵀ: the fast–slow mechanism and the weak-recovery dichotomy.

Paper 2 §4 ([P eqs. 24–49], ``paper2.md`` §2.3, §5.3).  The student index
G = xᵀ U Vᵀ x/√d is not centered: its mean m = Tr(U Vᵀ)/√d moves at order α
per SGD step while the normalised moments (q⁽¹⁾ = Tr(M₁M_lᵀ)/d,
q⁽²⁾ = Tr(M₁M_l)/d, t^A = ‖U‖²/d, t^B = ‖V‖²/d, M = U Vᵀ) move at order α/d.
Two time scales follow:

Fast (t = nα, [P eq. 28])
    dm/dt = −(t^A(0) + t^B(0)) ∂Φ/∂m (m, q(0)), the moments frozen.  The
    mean relaxes to the critical point m*(q) reached from m(0)
    (:func:`fast_fixed_point`, :func:`solve_fast_flow`).
Slow (τ = nα/d, [P eqs. 29–32])
    m = m*(q(τ)) is slaved, and the factors follow the matrix flow
    (re-derived here, ``paper2.md`` §2.3)

        dU/dτ = −β̄ V − 2 Σ_l (a_l M_l + b_l M_lᵀ) V − γ U,
        dV/dτ = −β̄ U − 2 Σ_l (a_l M_lᵀ + b_l M_l) U − γ V,

    with a = ∇_{q⁽¹⁾}Φ, b = ∇_{q⁽²⁾}Φ (row of the student, symmetric
    convention) at (m*, q), and the effective bias β̄ = −ψ/(t^A + t^B) of
    [P eqs. 27, 30], ψ = 2 Σ_l (a_l + b_l)(μ(M_l B) + μ(A M_l)).  β̄ is the
    O(1) value of √d ∂Φ/∂m left over after the fast relaxation: it is the
    one value for which d Tr(M₁)/dτ = 0, i.e. for which m stays on the
    critical manifold (:func:`slow_flow_rhs`, :func:`solve_slow_flow`).
    Normalised traces of words of this flow obey the hierarchy [P eq. 32];
    the substitutions of [P eq. 31] (transposes lost in our copy of the
    text) are re-derived in :func:`hierarchy_velocity`.

The un-reduced population flow (:func:`population_flow_rhs`) is gradient
flow of d·Φ(m(U, V), q(U, V)) on τ, with the fast direction kept: β = √d
∂Φ/∂m at the matrices' own mean.  It is stiff (the fast rate is about d
times the slow one; :func:`solve_ros2` treats the stiff direction, which
is rank one, implicitly) and contains both phases.  It converges to the
slaved flow as d → ∞, but slowly: the fast phase moves U, V along (V, U)
by O(d^-1/2), which shifts mixed moments such as μ(M₁(A + B)) by
O(m* μ((A + B)²)/(√d (t^A + t^B))) and β̄ by that times ∂²Φ/∂q: an O(1)
prefactor of several units for h₂ at m* ≈ 2.  At the simulated d it is
therefore the per-run reference (:func:`untied_reference`), and the
slaved flow the d → ∞ limit (:func:`slow_limit`).

Weak recovery ([P Cor. 4, eqs. 42, 48–49]): at an uninformative start the
symmetric overlap s = (q⁽¹⁾₁₂ + q⁽²⁾₁₂)/(q⁽¹⁾₂₂ + q⁽²⁾₂₂) (the overlap of
M₁ + M₁ᵀ with M₂ + M₂ᵀ, normalised by the teacher) has initial slow velocity
−2(t^A + t^B)(a₁₂ + b₁₂), which for one token and MSE is
4c (t^A + t^B) E σ'(Z₁) E σ*'(Z₂) with Z₁ ~ N(m*, v₁) at the mean selected by
the fast phase (:func:`dichotomy`).  For h₂ the symmetric state m* = 0 loses
stability when the teacher mean exceeds m₂ = √(3v₁ − v₂)
(:func:`symmetric_state_threshold`).

Numerics
--------
Flows cost O(d r² + d r r*) per right-hand side (products with the factors,
never a d×d matrix), plus one Φ evaluation and, for the slaved flow, the
10–30 evaluations of ∂Φ/∂m of the root search for m*.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
from scipy import optimize, special
from scipy.integrate import solve_ivp

from aimrepro.dynamics.flows import _blowup_event, _check_times
from aimrepro.dynamics.matrices import FactoredMatrix, trace_products
from aimrepro.dynamics.population import IndexLaw, Potential
from aimrepro.dynamics.sgd import ProblemSpec, initial_problem
from aimrepro.dynamics.trajectory import OrderParameters, Trajectory

__all__ = [
    "Dichotomy",
    "FastFixedPoint",
    "MeanLandscape",
    "UntiedFlowParams",
    "UntiedState",
    "dichotomy",
    "fast_fixed_point",
    "fast_state_table",
    "hierarchy_velocity",
    "limiting_state",
    "population_flow_rhs",
    "population_flow_stiff_part",
    "slow_flow_rhs",
    "slow_limit",
    "solve_fast_flow",
    "solve_population_flow",
    "solve_ros2",
    "solve_slow_flow",
    "symmetric_state_threshold",
    "untied_reference",
    "untied_state",
]


# ---------------------------------------------------------------------------
# State and the potential as a function of the student mean
# ---------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------
# Fast phase [P eq. 28]
# ---------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------
# Slow phase: the matrix flow of U, V
# ---------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class UntiedFlowParams:
    """Fixed inputs of the untied matrix flows.

    Attributes
    ----------
    teacher : FactoredMatrix
        M₂ (may carry a mean shift (m₂/√d) I).
    potential : Potential
        Φ of the loss; a = ``d_Omega``, b = ``d_Psi``, ∂Φ/∂m = ``d_mean``.
    shape : (d, r)
        Shape of U and of V.
    mean_start : float
        Slaved flow: the branch of m*(q), found downhill from this value
        (the fast phase's limit, :func:`fast_fixed_point`).
    weight_decay : float
        γ: −γU, −γV on τ ([P eq. 24] with update (25)).
    """

    teacher: FactoredMatrix
    potential: Potential
    shape: tuple[int, int]
    mean_start: float = 0.0
    weight_decay: float = 0.0

    @functools.cached_property
    def teacher_self(self) -> tuple[float, float, float]:
        """(t₂, Ψ₂₂, Ω₂₂): computed once per flow."""
        return _teacher_self(self.teacher)

    def factors(self, y: np.ndarray) -> _Factors:
        U, V = _split(y, self.shape)
        return _Factors(U, V, self.teacher)


def _split(y: np.ndarray, shape: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    n = shape[0] * shape[1]
    return y[:n].reshape(shape), y[n:].reshape(shape)


class _Factors:
    """The products of U, V with each other and with the teacher's factors, computed once.

    With G_uu = UᵀU, G_vv = VᵀV, G_uv = UᵀV and the projections LᵀU, RᵀU, LᵀV,
    RᵀV on the teacher M₂ = c L Rᵀ + s I, every trace of the state and every
    product of the velocity is a contraction of these: Tr(M₁M₁ᵀ) = Σ G_uu∘G_vv,
    Tr(M₁M₁) = Σ G_uv∘G_uvᵀ, Tr(M₁M₂ᵀ) = c Σ (LᵀU)∘(RᵀV) + s Tr M₁,
    Tr(M₁M₂) = c Σ (RᵀU)∘(LᵀV) + s Tr M₁, M₁V = U G_vv, M₁ᵀV = V G_uv, ...
    Cost O(d r² + d r r*): 3 Gram matrices and 4 projections.
    """

    def __init__(self, U: np.ndarray, V: np.ndarray, teacher: FactoredMatrix) -> None:
        self.U, self.V, self.teacher = U, V, teacher
        self.d = U.shape[0]
        self.Guu, self.Gvv, self.Guv = U.T @ U, V.T @ V, U.T @ V
        L, R = teacher.left, teacher._right
        self.LU, self.RU, self.LV, self.RV = L.T @ U, R.T @ U, L.T @ V, R.T @ V

    def order_parameters(self, teacher_self: tuple[float, float, float]) -> OrderParameters:
        """t, Ψ, Ω of (M₁, M₂) given the teacher's (t₂, Ψ₂₂, Ω₂₂)."""
        c, s, d = self.teacher.scale, self.teacher.shift, self.d
        tr = float(np.trace(self.Guv))
        omega12 = c * float(np.sum(self.LU * self.RV)) + s * tr
        psi12 = c * float(np.sum(self.RU * self.LV)) + s * tr
        t2, psi22, omega22 = teacher_self
        return OrderParameters(
            [tr / d, t2],
            [[float(np.sum(self.Guv * self.Guv.T)) / d, psi12 / d], [psi12 / d, psi22]],
            [[float(np.sum(self.Guu * self.Gvv)) / d, omega12 / d], [omega12 / d, omega22]])

    def state(self, teacher_self: tuple[float, float, float]) -> UntiedState:
        op = self.order_parameters(teacher_self)
        return UntiedState(math.sqrt(self.d) * op.trace, op.Omega, op.Psi,
                           float(np.trace(self.Guu)) / self.d, float(np.trace(self.Gvv)) / self.d)

    def velocity(self, bias: float, a: np.ndarray, b: np.ndarray, gamma: float) -> np.ndarray:
        """(dU, dV) of the module docstring's matrix flow, flattened."""
        U, V, c, s = self.U, self.V, self.teacher.scale, self.teacher.shift
        L, R = self.teacher.left, self.teacher._right
        M1V, M1tV, M1tU, M1U = U @ self.Gvv, V @ self.Guv, V @ self.Guu, U @ self.Guv.T
        M2V, M2tV = c * (L @ self.RV) + s * V, c * (R @ self.LV) + s * V
        M2tU, M2U = c * (R @ self.LU) + s * U, c * (L @ self.RU) + s * U
        a11, a12, b11, b12 = a[0, 0], a[0, 1], b[0, 0], b[0, 1]
        dU = -bias * V - 2.0 * (a11 * M1V + b11 * M1tV + a12 * M2V + b12 * M2tV)
        dV = -bias * U - 2.0 * (a11 * M1tU + b11 * M1U + a12 * M2tU + b12 * M2U)
        if gamma:
            dU -= gamma * U
            dV -= gamma * V
        return np.concatenate([dU.ravel(), dV.ravel()])

    def effective_bias(self, a: np.ndarray, b: np.ndarray) -> float:
        """β̄ = −ψ/(t^A + t^B), ψ = 2 Σ_l (a_l + b_l)(μ(M_l B) + μ(A M_l)) ([P eqs. 27, 30]).

        μ(M_l B) = ⟨V, M_l V⟩/d and μ(A M_l) = ⟨U, M_l U⟩/d; for A, B symmetric
        μ(M_lᵀ B) = μ(M_l B), so the two letters M_l^(r) give the same trace.
        """
        c, s = self.teacher.scale, self.teacher.shift
        norms = float(np.trace(self.Guu) + np.trace(self.Gvv))
        student = float(np.sum(self.Guv * self.Gvv) + np.sum(self.Guu * self.Guv))
        teacher = c * float(np.sum(self.LV * self.RV) + np.sum(self.LU * self.RU)) + s * norms
        psi = 2.0 * ((a[0, 0] + b[0, 0]) * student + (a[0, 1] + b[0, 1]) * teacher)
        return -psi / norms


def _teacher_self(teacher: FactoredMatrix) -> tuple[float, float, float]:
    """(t₂, Ψ₂₂, Ω₂₂) of the teacher: constant along a flow."""
    trace, Psi, Omega = trace_products([teacher])
    return float(trace[0]), float(Psi[0, 0]), float(Omega[0, 0])


def untied_state(U: np.ndarray, V: np.ndarray, teacher: FactoredMatrix) -> UntiedState:
    """The order parameters of student M₁ = U Vᵀ and ``teacher``: O(d r² + d r r*)."""
    return _Factors(U, V, teacher).state(_teacher_self(teacher))


def slaved_mean(params: UntiedFlowParams, state: UntiedState) -> FastFixedPoint:
    """m*(q) on the branch of ``params.mean_start`` ([P eq. 29])."""
    return fast_fixed_point(MeanLandscape.at(params.potential, state), params.mean_start)


def slow_flow_rhs(t: float, y: np.ndarray, params: UntiedFlowParams) -> np.ndarray:
    """d(U, V)/dτ of the slow flow with the mean slaved, flattened (module docstring).

    Conserves Tr(U Vᵀ) exactly (β̄ is the bias that does).
    """
    factors = params.factors(y)
    state = factors.state(params.teacher_self)
    m_star = slaved_mean(params, state).m_star
    value = params.potential.evaluate(IndexLaw.untied([m_star, state.mean[1]], state.q1,
                                                      state.q2, params.potential.T))
    a, b = value.d_Omega, value.d_Psi
    return factors.velocity(factors.effective_bias(a, b), a, b, params.weight_decay)


def population_flow_rhs(t: float, y: np.ndarray, params: UntiedFlowParams) -> np.ndarray:
    """d(U, V)/dτ = −d ∇_{U,V} Φ(m(U, V), q(U, V)) − γ(U, V): the un-reduced (stiff) flow.

    The bias is β = √d ∂Φ/∂m at the matrices' own mean m = Tr(U Vᵀ)/√d; the
    mean direction relaxes d times faster than the moments move.
    """
    factors = params.factors(y)
    state = factors.state(params.teacher_self)
    value = params.potential.evaluate(IndexLaw.untied(state.mean, state.q1, state.q2,
                                                      params.potential.T))
    bias = math.sqrt(factors.d) * float(value.d_mean[0])
    return factors.velocity(bias, value.d_Omega, value.d_Psi, params.weight_decay)


def population_flow_stiff_part(t: float, y: np.ndarray, params: UntiedFlowParams) -> tuple[
        float, np.ndarray]:
    """The stiff part of the population flow's Jacobian, −κ w wᵀ: returns (κ, w).

    The bias term −√d ∂Φ/∂m (V, U) depends on the state through
    m = ⟨U, V⟩/√d, so its Jacobian is −∂²Φ/∂m² w wᵀ with w = (V, U), of
    norm² d (t^A + t^B): the fast eigenvalue.  κ = max(∂²Φ/∂m², 0) (an
    unstable mean direction is not stiff).
    """
    U, V = _split(y, params.shape)
    state = params.factors(y).state(params.teacher_self)
    kappa = MeanLandscape.at(params.potential, state).curvature(float(state.mean[0]))
    return max(kappa, 0.0), np.concatenate([V.ravel(), U.ravel()])


@dataclass
class _Solution:
    """The parts of a ``solve_ivp`` result the trajectory builders read."""

    t: np.ndarray
    y: np.ndarray
    status: int
    nfev: int
    t_events: list
    message: str = ""
    y_events: list | None = None


def solve_ros2(fun, stiff_part, y0: np.ndarray, times: np.ndarray, *, rtol: float = 1e-6,
               atol: float = 1e-9, max_steps: int = 1_000_000, blowup_norm: float = math.inf,
               stop=None) -> _Solution:
    """Linearly implicit two-stage Rosenbrock W-method (ROS2) with a rank-one Jacobian.

    For y' = f(t, y) with an approximate Jacobian J = −κ w wᵀ (from
    ``stiff_part(t, y)``), each step solves (I − γhJ) k₁ = f(y_n),
    (I − γhJ) k₂ = f(y_n + h k₁) − 2k₁ (Sherman–Morrison, O(n)) and sets
    y_{n+1} = y_n + h(3k₁ + k₂)/2, γ = 1 + 1/√2.  ROS2 is of order 2 for any
    J (a W-method) and L-stable for the exact one, so a rank-one J that
    captures the stiff direction removes the step-size limit it would
    impose on an explicit method (Verwer, Spee, Blom & Hundsdorfer, SIAM J.
    Sci. Comput. 20 (1999) 1456).  The error estimate is the difference to
    the embedded first-order solution, h(k₁ + k₂)/2, in the RMS norm with
    weights atol + rtol|y|; steps land on ``times``.

    Parameters
    ----------
    fun : callable f(t, y)
    stiff_part : callable (t, y) -> (κ ≥ 0, w)
    y0 : (n,) ndarray
    times : increasing array
        Output times; the first is the initial time.
    rtol, atol : float
    max_steps : int
    blowup_norm : float
        Stop with status 1 (a terminal event, as ``solve_ivp`` reports it)
        when ‖y‖ exceeds this.
    stop : callable (t, y) -> bool, optional
        Checked at each output time; True ends the integration there
        (status 0, fewer outputs).

    Returns
    -------
    A result with ``t``, ``y`` (n, k), ``status`` (0 done or stopped, 1
    blow-up, −1 step-size or step-count failure), ``nfev``, ``t_events``.
    """
    gamma = 1.0 + 1.0 / math.sqrt(2.0)
    times = _check_times(times)
    t, y = float(times[0]), np.array(y0, dtype=float)
    outputs_t, outputs_y = [t], [y.copy()]
    nfev, steps, h = 0, 0, 1e-4 * float(times[-1] - times[0])
    status, message, t_events = 0, "", [np.empty(0), np.empty(0)]
    for target in times[1:]:
        while t < target and status == 0:
            step = min(h, target - t)
            if steps >= max_steps or step <= 1e-14 * max(1.0, abs(t)):
                status, message = -1, "too many steps or step size underflow"
                break
            kappa, w = stiff_part(t, y)
            c = gamma * step * kappa
            denominator = 1.0 + c * float(w @ w)

            def solve(r):
                return r - (c * float(w @ r) / denominator) * w

            k1 = solve(fun(t, y))
            k2 = solve(fun(t + step, y + step * k1) - 2.0 * k1)
            nfev += 2
            steps += 1
            y_new = y + step * (1.5 * k1 + 0.5 * k2)
            weights = atol + rtol * np.maximum(np.abs(y), np.abs(y_new))
            error = math.sqrt(float(np.mean((0.5 * step * (k1 + k2) / weights) ** 2)))
            if not math.isfinite(error):
                h = 0.2 * step
                continue
            if error <= 1.0:
                t, y = (float(target) if step == target - t else t + step), y_new
                if float(np.linalg.norm(y)) > blowup_norm:
                    status, t_events = 1, [np.array([t]), np.empty(0)]
            h = step * min(5.0, max(0.2, 0.9 / math.sqrt(max(error, 1e-12))))
        if status != 0:
            break
        outputs_t.append(t)
        outputs_y.append(y.copy())
        if stop is not None and stop(t, y):
            break
    return _Solution(np.asarray(outputs_t), np.asarray(outputs_y).T, status, nfev, t_events,
                     message)


def _record(sol, params: UntiedFlowParams, *, slaved: bool) -> Trajectory:
    """Order parameters (and the mean and bias of the flow) at the solver's output times.

    A stop event (``sol.t_events[1]``) adds its time and state as a last row,
    so that the run's last record is at the stop overlap; a blow-up event
    (``sol.t_events[0]``) or a solver failure marks the trajectory blown up.
    """
    d = params.shape[0]
    times, states = list(sol.t), list(sol.y.T)
    events = list(sol.t_events or []) + [np.empty(0)] * 2
    if events[1].size:
        times.append(float(events[1][0]))
        states.append(np.asarray(sol.y_events[1][0]))
    order, m_flow, bias = [], [], []
    for y in states:
        factors = params.factors(y)
        order.append(factors.order_parameters(params.teacher_self).as_vector())
        state = factors.state(params.teacher_self)
        if slaved:
            m_star = slaved_mean(params, state).m_star
            value = params.potential.evaluate(IndexLaw.untied(
                [m_star, state.mean[1]], state.q1, state.q2, params.potential.T))
            m_flow.append(m_star)
            bias.append(factors.effective_bias(value.d_Omega, value.d_Psi))
        else:
            value = params.potential.evaluate(IndexLaw.untied(state.mean, state.q1, state.q2,
                                                              params.potential.T))
            m_flow.append(float(state.mean[0]))
            bias.append(math.sqrt(d) * float(value.d_mean[0]))
    blew_up = sol.status == -1 or events[0].size > 0
    t_blowup = (float(events[0][0]) if events[0].size else float(times[-1])) if blew_up \
        else math.nan
    n = len(times)
    extra = {"m_flow": np.asarray(m_flow, dtype=float), "bias": np.asarray(bias, dtype=float),
             "nfev": np.full(n, sol.nfev, dtype=np.int64),
             "status": np.full(n, sol.status, dtype=np.int64)}
    return Trajectory(np.asarray(times, dtype=float), np.asarray(order).reshape(n, -1), d,
                      bool(blew_up), t_blowup, extra)


def _stop_event(params: UntiedFlowParams, stop_overlap: float):
    """Terminal event |symmetric overlap| = stop_overlap (rising), for ``solve_ivp``."""
    def event(t, y, *args):
        op = params.factors(y).order_parameters(params.teacher_self)
        return abs(op.symmetric_overlap) - stop_overlap
    event.terminal = True
    event.direction = 1
    return event


def _prepare(U0, V0, params: UntiedFlowParams, times) -> tuple[np.ndarray, np.ndarray]:
    times = _check_times(times)
    U0, V0 = np.asarray(U0, dtype=float), np.asarray(V0, dtype=float)
    if U0.shape != V0.shape or U0.shape != tuple(params.shape):
        raise ValueError(f"U0 and V0 must both have shape {params.shape}, got {U0.shape}, "
                         f"{V0.shape}")
    return times, np.concatenate([U0.ravel(), V0.ravel()])


def solve_slow_flow(U0, V0, teacher: FactoredMatrix, potential: Potential, times, *,
                    mean_start: float, weight_decay: float = 0.0, method: str = "RK45",
                    rtol: float = 1e-6, atol: float = 1e-9,
                    blowup_factor: float = 1e3) -> Trajectory:
    """Integrate the slow flow (mean slaved, [P eqs. 29–32]) from U(0), V(0) on τ.

    Not stiff: the fast direction is eliminated.

    Returns
    -------
    Trajectory
        Order parameters of (U Vᵀ, teacher) at ``times``; extra columns
        ``m_flow`` (the slaved m*(q(τ))), ``bias`` (β̄), ``nfev``, ``status``.
    """
    params = UntiedFlowParams(teacher, potential, tuple(np.shape(U0)), float(mean_start),
                              weight_decay)
    times, y0 = _prepare(U0, V0, params, times)
    event = _blowup_event(blowup_factor * float(np.linalg.norm(y0)), np.linalg.norm)
    sol = solve_ivp(slow_flow_rhs, (times[0], times[-1]), y0, method=method, t_eval=times,
                    args=(params,), rtol=rtol, atol=atol, events=event)
    return _record(sol, params, slaved=True)


def solve_population_flow(U0, V0, teacher: FactoredMatrix, potential: Potential, times, *,
                          weight_decay: float = 0.0, method: str = "RK45", rtol: float = 1e-6,
                          atol: float = 1e-9, blowup_factor: float = 1e3,
                          stop_overlap: float | None = None) -> Trajectory:
    """Integrate the un-reduced population flow (stiff: fast rate ≈ d × slow rate) on τ.

    Parameters
    ----------
    method : str
        A :func:`scipy.integrate.solve_ivp` method, or ``ROS2``
        (:func:`solve_ros2` with the rank-one stiff part of
        :func:`population_flow_stiff_part`).  The fast eigenvalue is about
        d (t^A + t^B) ∂²Φ/∂m², so an explicit method (``RK45``) needs
        O(d τ) steps: fine up to d of a few hundred; ``ROS2`` needs a number
        of steps set by the slow dynamics only (2nd order, so use rtol ≈ 1e-4);
        ``Radau`` and ``LSODA`` form a dense 2dr × 2dr Jacobian (small d only).
    stop_overlap : float or None
        Stop once |symmetric overlap| reaches this (escape-time scans need
        no more): the last row is the state at the crossing (``ROS2``: the
        first output time at or past it).

    Returns
    -------
    Trajectory
        Extra columns ``m_flow`` (the matrices' mean Tr(U Vᵀ)/√d), ``bias``
        (√d ∂Φ/∂m, which approaches the slaved flow's β̄ as d → ∞),
        ``nfev``, ``status``.
    """
    params = UntiedFlowParams(teacher, potential, tuple(np.shape(U0)), 0.0, weight_decay)
    times, y0 = _prepare(U0, V0, params, times)
    limit = blowup_factor * float(np.linalg.norm(y0))
    if method == "ROS2":
        stop = None
        if stop_overlap is not None:
            event = _stop_event(params, stop_overlap)

            def stop(t, y):
                return event(t, y) >= 0

        sol = solve_ros2(lambda t, y: population_flow_rhs(t, y, params),
                         lambda t, y: population_flow_stiff_part(t, y, params), y0, times,
                         rtol=rtol, atol=atol, blowup_norm=limit, stop=stop)
    else:
        events = [_blowup_event(limit, np.linalg.norm)]
        if stop_overlap is not None:
            events.append(_stop_event(params, stop_overlap))
        sol = solve_ivp(population_flow_rhs, (times[0], times[-1]), y0, method=method,
                        t_eval=times, args=(params,), rtol=rtol, atol=atol, events=events)
    return _record(sol, params, slaved=False)


# ---------------------------------------------------------------------------
# The moment hierarchy [P eqs. 31–32], re-derived
# ---------------------------------------------------------------------------

#: Letters of the alphabet of [P eq. 26] for K = 2: M, Mᵀ, A = U Uᵀ, B = V Vᵀ of index k.
LETTERS = ("M1", "M1T", "A1", "B1", "M2", "M2T", "A2", "B2")


def hierarchy_velocity(word, matrices: dict[str, np.ndarray], *, bias: float, a: np.ndarray,
                       b: np.ndarray, weight_decay: float = 0.0) -> float:
    """d μ_α/dτ of the slow flow for a word α of letters ([P eq. 32]), with dense matrices.

    Each trainable letter (index 1) of the word is replaced, one at a time, by
    its velocity under the slow flow,

        M  → −β̄ (A + B) − 2 Σ_l [a_l (M_l B + A M_l) + b_l (M_lᵀ B + A M_lᵀ)],
        Mᵀ → −β̄ (A + B) − 2 Σ_l [a_l (B M_lᵀ + M_lᵀ A) + b_l (B M_l + M_l A)],
        A  → −β̄ (M + Mᵀ) − 2 Σ_l [a_l (M_l Mᵀ + M M_lᵀ) + b_l (M_lᵀ Mᵀ + M M_l)],
        B  → −β̄ (M + Mᵀ) − 2 Σ_l [a_l (M_lᵀ M + Mᵀ M_l) + b_l (M_l M + Mᵀ M_lᵀ)],

    minus 2γ times the letter, and the normalised traces are summed.  These
    are [P eq. 31]'s T^bias and T^diff with the transposes restored: for the
    letter Mᵀ the coefficient of q⁽ʳ⁾ multiplies M_l^(r̄) (the paper's
    r̄, 1̄ = 2, 2̄ = 1), for A and B it is M_l^(r) M_kᵀ + M_k (M_l^(r))ᵀ and
    (M_l^(r))ᵀ M_k + M_kᵀ M_l^(r) (``paper2.md`` §2.3).

    Parameters
    ----------
    word : sequence of str
        Letters of :data:`LETTERS`, e.g. ``("M1", "M2T")`` for q⁽¹⁾₁₂.
    matrices : dict
        ``M1, A1, B1, M2, A2, B2``: dense d×d matrices (transposes are taken here).
    bias, a, b, weight_decay
        β̄, ∇_{q⁽¹⁾}Φ, ∇_{q⁽²⁾}Φ (2×2, symmetric convention) and γ.

    Notes
    -----
    Dense d×d products: for tests and small d only (O(w² d³) per word).
    """
    unknown = [z for z in word if z not in LETTERS]
    if unknown:
        raise ValueError(f"letters must be among {LETTERS}, got {unknown}")
    M = {1: matrices["M1"], 2: matrices["M2"]}
    A, B, Mt = matrices["A1"], matrices["B1"], M[1].T
    full = dict(matrices, M1T=M[1].T, M2T=M[2].T)
    velocity = {
        "M1": -bias * (A + B) - 2.0 * sum(a[0, l - 1] * (M[l] @ B + A @ M[l])
                                          + b[0, l - 1] * (M[l].T @ B + A @ M[l].T)
                                          for l in (1, 2)),
        "M1T": -bias * (A + B) - 2.0 * sum(a[0, l - 1] * (B @ M[l].T + M[l].T @ A)
                                           + b[0, l - 1] * (B @ M[l] + M[l] @ A)
                                           for l in (1, 2)),
        "A1": -bias * (M[1] + Mt) - 2.0 * sum(a[0, l - 1] * (M[l] @ Mt + M[1] @ M[l].T)
                                              + b[0, l - 1] * (M[l].T @ Mt + M[1] @ M[l])
                                              for l in (1, 2)),
        "B1": -bias * (M[1] + Mt) - 2.0 * sum(a[0, l - 1] * (M[l].T @ M[1] + Mt @ M[l])
                                              + b[0, l - 1] * (M[l] @ M[1] + Mt @ M[l].T)
                                              for l in (1, 2)),
    }
    d = M[1].shape[0]
    total = 0.0
    for i, letter in enumerate(word):
        if letter not in velocity:
            continue
        product = np.eye(d)
        for j, other in enumerate(word):
            product = product @ (velocity[letter] - 2.0 * weight_decay * full[letter]
                                 if j == i else full[other])
        total += np.trace(product) / d
    return float(total)


# ---------------------------------------------------------------------------
# The dichotomy [P eqs. 42, 48–49]
# ---------------------------------------------------------------------------


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
    ∂²Φ/∂m²(0) = 3v₁ − v₂ − m₂², threshold √(3v₁ − v₂) (``paper2.md`` §5.3).

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


# ---------------------------------------------------------------------------
# Experiments: the theory curves of a run, the fast-state table
# ---------------------------------------------------------------------------


def _initial(spec: ProblemSpec, seed: int, potential: Potential | None):
    if spec.param != "untied":
        raise ValueError(f"untied theory needs param='untied', got {spec.param!r}")
    student, teacher, _ = initial_problem(spec, seed)
    potential = Potential(spec.loss(), spec.T) if potential is None else potential
    state = untied_state(student.U, student.V, teacher)
    landscape = MeanLandscape.at(potential, state)
    return student, teacher, potential, state, landscape


def untied_reference(spec: ProblemSpec, seed: int, times, *, weight_decay: float = 0.0,
                     method: str = "RK45", rtol: float = 1e-6,
                     stop_overlap: float | None = None,
                     potential: Potential | None = None) -> tuple[Trajectory, dict]:
    """The theory curves of one untied SGD replicate, from its own initial state.

    Population flow: the un-reduced flow of U, V at the run's d
    (:func:`solve_population_flow`), which contains both phases and their
    finite-d coupling (the O(d^-1/2) corrections to the slaved flow have
    O(1) prefactors, see the module docstring).  Fast phase: the mean of
    [P eq. 28] at frozen q(0) from the run's m(0), at t = τ d.

    Parameters
    ----------
    spec : ProblemSpec
        ``param`` must be ``untied``.
    seed : int
        Replicate seed of :func:`aimrepro.dynamics.sgd.initial_problem`.
    times : increasing array of τ (``t_ode`` of the SGD run)
    weight_decay, method, rtol, stop_overlap
        Passed to :func:`solve_population_flow`.

    Returns
    -------
    Trajectory
        The population flow's order parameters, with extra columns
        ``m_flow`` (its mean), ``bias`` (√d ∂Φ/∂m), ``m_star`` (m*(q(τ)) at
        its moments, on the fast phase's branch), ``t_fast`` (τ d),
        ``m_fast`` (fast flow at t_fast), ``nfev``, ``status``.
    diagnostics : dict
        The fast fixed point m*(q(0)), the dichotomy at it (one token,
        elementwise links), the initial state and the solvers' status.
    """
    student, teacher, potential, state, landscape = _initial(spec, seed, potential)
    fixed = fast_fixed_point(landscape, float(state.mean[0]))
    flow = solve_population_flow(student.U, student.V, teacher, potential, times,
                                 weight_decay=weight_decay, method=method, rtol=rtol,
                                 atol=1e-3 * rtol, stop_overlap=stop_overlap)
    t_fast = flow.t_ode * spec.d
    m_fast, fast_diag = solve_fast_flow(landscape, float(state.mean[0]), state.rate, t_fast)
    params = UntiedFlowParams(teacher, potential, student.U.shape, fixed.m_star)
    m_star = [slaved_mean(params, _state_of_record(flow, i)).m_star
              for i in range(len(flow))]
    extra = dict(flow.extra)
    extra.update({"t_fast": t_fast, "m_fast": m_fast, "m_star": np.asarray(m_star)})
    trajectory = Trajectory(flow.t_ode, flow.order, spec.d, flow.blew_up, flow.t_blowup, extra)
    diagnostics = _diagnostics(spec, potential, state, fixed, flow)
    diagnostics["fast_flow"] = fast_diag
    diagnostics["converged"] = bool(diagnostics["converged"] and fast_diag["converged"])
    return trajectory, diagnostics


def _state_of_record(trajectory: Trajectory, i: int) -> UntiedState:
    """The order parameters of record i of a flow as an :class:`UntiedState` (t^A, t^B unused)."""
    op = trajectory.at(i)
    return UntiedState(math.sqrt(trajectory.d) * op.trace, op.Omega, op.Psi, math.nan, math.nan)


def _diagnostics(spec, potential, state, fixed, flow) -> dict:
    diagnostics = {"fast_fixed_point": fixed.to_dict(),
                   "flow": {"status": int(flow.extra["status"][0]) if len(flow) else None,
                            "nfev": int(flow.extra["nfev"][0]) if len(flow) else None,
                            "blew_up": flow.blew_up},
                   "initial": {"m1": float(state.mean[0]), "m2": float(state.mean[1]),
                               "tA": state.tA, "tB": state.tB,
                               "v1": float(state.q1[0, 0] + state.q2[0, 0]),
                               "v2": float(state.q1[1, 1] + state.q2[1, 1])},
                   "converged": bool(fixed.converged and not flow.blew_up)}
    if spec.T == 1 and potential.loss.elementwise:
        diagnostics["dichotomy"] = dichotomy(potential, state, fixed.m_star).__dict__
    return diagnostics


def slow_limit(spec: ProblemSpec, seed: int, times, *, weight_decay: float = 0.0,
               potential: Potential | None = None) -> tuple[Trajectory, dict]:
    """The d → ∞ slow phase from a replicate's initial state: the slaved flow ([P eqs. 29–32]).

    The mean is m*(q(τ)) on the branch the fast phase reaches from the
    run's m(0); the factors start at the run's U(0), V(0).

    Returns
    -------
    Trajectory
        Extra columns ``m_flow`` (= m*(q(τ))), ``bias`` (β̄ of [P eq. 30]),
        ``t_fast``, ``nfev``, ``status``.
    diagnostics : dict
    """
    student, teacher, potential, state, landscape = _initial(spec, seed, potential)
    fixed = fast_fixed_point(landscape, float(state.mean[0]))
    flow = solve_slow_flow(student.U, student.V, teacher, potential, times,
                           mean_start=fixed.m_star, weight_decay=weight_decay)
    extra = dict(flow.extra, t_fast=flow.t_ode * spec.d)
    trajectory = Trajectory(flow.t_ode, flow.order, spec.d, flow.blew_up, flow.t_blowup, extra)
    return trajectory, _diagnostics(spec, potential, state, fixed, flow)


def limiting_state(spec: ProblemSpec) -> dict[str, float]:
    """d → ∞ initial variances v_k = (Ω + Ψ)_kk and rate t^A + t^B of an untied problem.

    Factors U, V ~ N(0, s²/d) of width ρ_s d are independent, so q⁽²⁾ → 0,
    q⁽¹⁾₁₁ → ρ_s s_U² s_V², t^A → ρ_s s_U², t^B → ρ_s s_V²; the teacher
    (U*, V* ~ N(0, 1/d)) has v₂ → ρ.  ``unit_variance`` rescales both
    matrices to v = 1 (each factor by v^-1/4), which divides the rate by √v₁.
    """
    if spec.param != "untied":
        raise ValueError(f"limiting_state needs param='untied', got {spec.param!r}")
    student_rho = spec.rho if spec.student_rho is None else spec.student_rho
    v1 = student_rho * spec.init_scale ** 2 * spec.init_scale_v ** 2
    rate = student_rho * (spec.init_scale ** 2 + spec.init_scale_v ** 2)
    if spec.normalisation == "unit_variance":
        return {"v1": 1.0, "v2": 1.0, "rate": rate / math.sqrt(v1)}
    return {"v1": v1, "v2": spec.rho, "rate": rate}


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
