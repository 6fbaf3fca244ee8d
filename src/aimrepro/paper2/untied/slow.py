"""Untied attention, slow phase: the factors U, V on the slow time τ = n·lr/d.

Paper 2 §4 ([P eqs. 29–32], ``docs/paper2.md`` §2.3).  The mean is slaved to
the fast fixed point, m = m*(q(τ)), and the factors follow the matrix flow
(re-derived here)

    dU/dτ = −β̄ V − 2 Σ_l (a_l M_l + b_l M_lᵀ) V − γ U,
    dV/dτ = −β̄ U − 2 Σ_l (a_l M_lᵀ + b_l M_l) U − γ V,

with a = ∇_{q⁽¹⁾}Φ, b = ∇_{q⁽²⁾}Φ (row of the student, symmetric
convention) at (m*, q), and the effective bias β̄ = −ψ/(t^A + t^B) of
[P eqs. 27, 30], ψ = 2 Σ_l (a_l + b_l)(μ(M_l B) + μ(A M_l)).  β̄ is the
O(1) value of √d ∂Φ/∂m left over after the fast relaxation: the one value
for which d Tr(M₁)/dτ = 0, i.e. for which m stays on the critical manifold
(:func:`slow_flow_rhs`, :func:`solve_slow_flow`, :func:`slow_limit`).

The un-reduced population flow (:func:`population_flow_rhs`) is gradient
flow of d·Φ(m(U, V), q(U, V)) on τ, with the fast direction kept: β = √d
∂Φ/∂m at the matrices' own mean.  It is stiff (the fast rate is about d
times the slow one; ``aimrepro.numerics.ode.solve_ros2`` treats the
stiff direction, which is rank one, implicitly) and contains both phases.
It converges to the slaved flow as d → ∞, but slowly: the fast phase moves
U, V along (V, U) by O(d^-1/2), which shifts mixed moments such as
μ(M₁(A + B)) by O(m* μ((A + B)²)/(√d (t^A + t^B))) and β̄ by that times
∂²Φ/∂q: an O(1) prefactor of several units for h₂ at m* ≈ 2.  At the
simulated d it is therefore the per-run reference (:func:`untied_reference`),
and the slaved flow the d → ∞ limit (:func:`slow_limit`).

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
from scipy.integrate import solve_ivp

from aimrepro.paper2.matrices import FactoredMatrix, trace_products
from aimrepro.paper2.population import IndexLaw, Potential
from aimrepro.paper2.sgd import ProblemSpec, initial_problem
from aimrepro.paper2.trajectory import OrderParameters, Trajectory
from aimrepro.numerics.ode import blowup_event, check_times, solve_ros2
from aimrepro.paper2.untied.dichotomy import dichotomy
from aimrepro.paper2.untied.fast import (FastFixedPoint, MeanLandscape, UntiedState,
                                         fast_fixed_point, solve_fast_flow)


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
    times = check_times(times)
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
    event = blowup_event(blowup_factor * float(np.linalg.norm(y0)), np.linalg.norm)
    sol = solve_ivp(slow_flow_rhs, (times[0], times[-1]), y0, method=method, t_eval=times,
                    args=(params,), rtol=rtol, atol=atol, events=event)
    return _record(sol, params, slaved=True)


def solve_population_flow(U0, V0, teacher: FactoredMatrix, potential: Potential, times, *,
                          weight_decay: float = 0.0, method: str = "RK45", rtol: float = 1e-6,
                          atol: float = 1e-9, blowup_factor: float = 1e3,
                          stop_overlap: float | None = None, return_state: bool = False
                          ) -> Trajectory | tuple[Trajectory, tuple[np.ndarray, np.ndarray]]:
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
    return_state : bool
        Also return the factors (U, V) at the last record, to continue the
        flow or to linearise it there.

    Returns
    -------
    Trajectory
        Extra columns ``m_flow`` (the matrices' mean Tr(U Vᵀ)/√d), ``bias``
        (√d ∂Φ/∂m, which approaches the slaved flow's β̄ as d → ∞),
        ``nfev``, ``status``.
    (U, V) : tuple of (d, r) ndarrays
        Only with ``return_state``.
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
        events = [blowup_event(limit, np.linalg.norm)]
        if stop_overlap is not None:
            events.append(_stop_event(params, stop_overlap))
        sol = solve_ivp(population_flow_rhs, (times[0], times[-1]), y0, method=method,
                        t_eval=times, args=(params,), rtol=rtol, atol=atol, events=events)
    trajectory = _record(sol, params, slaved=False)
    if not return_state:
        return trajectory
    # solve_ivp's stop event (index 1) ends on the crossing, which is the last record; ROS2
    # records its last output time
    stopped = list(getattr(sol, "t_events", None) or []) + [np.empty(0)] * 2
    last = np.asarray(sol.y_events[1][0]) if stopped[1].size else sol.y[:, -1]
    U, V = _split(np.array(last, dtype=float), params.shape)
    return trajectory, (U, V)


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
        Replicate seed of :func:`aimrepro.paper2.sgd.initial_problem`.
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
