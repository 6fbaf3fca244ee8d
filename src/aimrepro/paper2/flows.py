"""Deterministic reference flows: the tied matrix flow and the closed ODE of direct S.

Both are pure right-hand sides ``rhs(t, y, params)`` for
:func:`scipy.integrate.solve_ivp`, in the paper's time of the
parametrisation (``docs/paper2.md`` §2), with frozen parameter dataclasses, and a
``solve_*`` wrapper returning a :class:`~aimrepro.paper2.trajectory.Trajectory`.

Tied matrix flow (``docs/paper2.md`` §2.2, §4.3; [P eq. 11] is its moment hierarchy)
    dW/dt = −Σ_l Γ₁ₗ(q) S_l W − (γ/4) W,   S₁ = W Wᵀ, S₂ = S* fixed,
    with Γ = ∇_q Φ at the current q = (Tr S_k S_l / d).  Integrated at a
    moderate d from the same W(0), S* as an SGD run, it is the
    "infinite-order" reference: its moments follow the hierarchy exactly and
    converge to the d → ∞ limit with O(1/d) fluctuations of the initial
    spectrum.  Cost per evaluation: O(d r²) + O(d r r*) + one Γ.

Direct closed ODE (``docs/paper2.md`` §2.1; [P Thm 4, eqs. 402–404])
    on y = (t₁, t₂, Ψ₁₁, Ψ₁₂, Ψ₂₂, Ω₁₁, Ω₁₂, Ω₂₂), trainable set {1}:
    dt = −2 D (A + B) t − γ D t,
    dΨ = −2 [D(AΨ + BΩ) + (D(AΨ + BΩ))ᵀ] − γ(DΨ + ΨD),
    dΩ = −2 [D(AΩ + BΨ) + (D(AΩ + BΨ))ᵀ] − γ(DΩ + ΩD),
    with A = ∇_Ω Φ, B = ∇_Ψ Φ at (Ψ, Ω) (centered index) and D = diag(1, 0).

Tokens that are not Gaussian (``docs/paper2.md`` §10; one token, T = 1)
    With i.i.d. coordinates of excess kurtosis κ₄ the index covariance is
    2[q_kl + (κ₄/2) D_kl] with D_kl = Σ_i (S_k)_ii (S_l)_ii / d, so the
    population loss is Φ at q_eff = q + (κ₄/2) D, and its gradient replaces
    each S_l by S_l + (κ₄/2) Diag(S_l).  ``excess_kurtosis`` = κ₄ (0: the
    papers' Gaussian tokens) gives the tied flow with the exact diagonals and
    the direct ODE with D = t tᵀ (delocalised diagonals).

A run blows up when a norm exceeds ``blowup_factor`` times its initial
value (or the solver fails); the trajectory then stops there and says so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.integrate import solve_ivp

from aimrepro.paper2.matrices import FactoredMatrix, trace_products
from aimrepro.paper2.population import IndexLaw, Potential
from aimrepro.paper2.sgd import ProblemSpec, initial_problem
from aimrepro.paper2.trajectory import OrderParameters, Trajectory
from aimrepro.numerics.ode import blowup_event, check_times

__all__ = [
    "DirectODEParams",
    "TiedFlowParams",
    "direct_ode_rhs",
    "reference_flow",
    "solve_direct_ode",
    "solve_tied_flow",
    "tied_flow_rhs",
]

#: Trainable indices of the student–teacher pair: χ = (1, 0).
_TRAINABLE = np.diag([1.0, 0.0])


@dataclass(frozen=True, eq=False)
class TiedFlowParams:
    """Fixed inputs of the tied matrix flow.

    Attributes
    ----------
    teacher : FactoredMatrix
        S* (symmetric: ``teacher.right is None``).
    potential : Potential
        Φ of the loss at the run's T; Γ = ``potential.gamma(q)``.
    shape : (d, r)
        Shape of the student factor W.
    weight_decay : float
        γ: the flow has −(γ/4) W ([P eq. 7] on the time t = 4αn/d).
    excess_kurtosis : float
        κ₄ of the token coordinates (module notes; 0 for Gaussian tokens).
    """

    teacher: FactoredMatrix
    potential: Potential
    shape: tuple[int, int]
    weight_decay: float = 0.0
    excess_kurtosis: float = 0.0


def _tied_q(W: np.ndarray, teacher: FactoredMatrix) -> np.ndarray:
    """q_kl = Tr(S_k S_l)/d for S₁ = W Wᵀ and the teacher: O(d r² + d r r*)."""
    _, Psi, _ = trace_products([FactoredMatrix(W), teacher])
    return Psi


def _diagonal(matrix: FactoredMatrix) -> np.ndarray:
    """The diagonal of a symmetric S = scale · L Lᵀ + shift · I: O(d r)."""
    return matrix.scale * np.sum(matrix.left * matrix.left, axis=1) + matrix.shift


def tied_flow_rhs(t: float, y: np.ndarray, params: TiedFlowParams) -> np.ndarray:
    """dW/dt = −Γ₁₁ W (WᵀW) − Γ₁₂ S* W − (γ/4) W, flattened (``docs/paper2.md`` §2.2).

    With κ₄ ≠ 0 (§10): Γ at q + (κ₄/2) D and S_l W → (S_l + (κ₄/2) Diag(S_l)) W.
    O(d r² + d r r*) per evaluation.
    """
    W = y.reshape(params.shape)
    teacher = params.teacher
    q = _tied_q(W, teacher)
    half_kurtosis = 0.5 * params.excess_kurtosis
    if half_kurtosis:
        diagonals = np.stack([np.sum(W * W, axis=1), _diagonal(teacher)])
        q = q + half_kurtosis * (diagonals @ diagonals.T) / W.shape[0]
    gamma = params.potential.gamma(q)
    teacher_W = teacher.scale * (teacher.left @ (teacher.left.T @ W)) + teacher.shift * W
    self_W = W @ (W.T @ W)
    if half_kurtosis:
        self_W += half_kurtosis * diagonals[0][:, None] * W
        teacher_W += half_kurtosis * diagonals[1][:, None] * W
    dW = -gamma[0, 0] * self_W - gamma[0, 1] * teacher_W
    if params.weight_decay:
        dW -= 0.25 * params.weight_decay * W
    return dW.ravel()



def _check_kurtosis(excess_kurtosis: float, potential: Potential) -> float:
    if not (math.isfinite(excess_kurtosis) and excess_kurtosis >= -2.0):
        raise ValueError(f"excess_kurtosis must be a finite number >= -2 (a token law's kappa4), "
                         f"got {excess_kurtosis}")
    if excess_kurtosis and potential.T != 1:
        raise ValueError(f"the token-law correction of the flows is derived for one token (T = 1), "
                         f"got T = {potential.T} (docs/paper2.md §10)")
    return float(excess_kurtosis)


def _overlap_stop(stop_overlap: float, order_of):
    """A terminal ``solve_ivp`` event: the overlap ratio |p₁₂|/p₂₂ of the state reaches ``stop_overlap``
    (the flow's counterpart of SGD's ``stop_overlap``); ``order_of`` maps the state to its order parameters."""
    def event(t, y, *args):
        return order_of(y).overlap_ratio - stop_overlap
    event.terminal = True
    event.direction = 1
    return event


def solve_tied_flow(W0: np.ndarray, teacher: FactoredMatrix, potential: Potential,
                    times, *, weight_decay: float = 0.0, method: str = "RK45",
                    rtol: float = 1e-6, atol: float = 1e-9,
                    blowup_factor: float = 1e3, excess_kurtosis: float = 0.0,
                    stop_overlap: float | None = None) -> Trajectory:
    """Integrate the tied matrix flow from W(0) and record the order parameters at ``times``.

    ``excess_kurtosis``: κ₄ of the token law (module notes; T = 1 only).
    ``stop_overlap``: end where the overlap ratio reaches it, with a last record there (as an
    SGD run with that stop); the event costs one O(d² r) trace product per step.

    Returns
    -------
    Trajectory
        With columns ``nfev`` (right-hand sides evaluated so far, constant)
        and the solver status in ``extra["status"]`` (0: reached the end).
    """
    if teacher.right is not None:
        raise ValueError("the tied matrix flow needs a symmetric teacher S* = c W*W*ᵀ")
    if potential.loss.student.name == "hardmax":
        raise ValueError("the hardmax link has no gradient flow")
    times = check_times(times)
    W0 = np.asarray(W0, dtype=float)
    params = TiedFlowParams(teacher, potential, W0.shape, weight_decay,
                            _check_kurtosis(excess_kurtosis, potential))
    norm0 = float(np.linalg.norm(W0))

    def order_of(w: np.ndarray) -> OrderParameters:
        return OrderParameters(*trace_products([FactoredMatrix(w.reshape(W0.shape)), teacher]))

    events = [blowup_event(blowup_factor * norm0, np.linalg.norm)]
    if stop_overlap is not None:
        events.append(_overlap_stop(stop_overlap, order_of))
    sol = solve_ivp(tied_flow_rhs, (times[0], times[-1]), W0.ravel(), method=method,
                    t_eval=times, args=(params,), rtol=rtol, atol=atol, events=events)
    return _trajectory(sol, lambda y: order_of(y).as_vector(), W0.shape[0])


@dataclass(frozen=True, eq=False)
class DirectODEParams:
    """Fixed inputs of the direct closed ODE: Φ, γ (trainable set {1}) and the tokens' κ₄ (module notes)."""

    potential: Potential
    weight_decay: float = 0.0
    excess_kurtosis: float = 0.0


def direct_ode_rhs(t: float, y: np.ndarray, params: DirectODEParams) -> np.ndarray:
    """d/dt of the order-parameter vector under online SGD on S ([P eqs. 402–404]).

    With κ₄ ≠ 0 (§10): Ψ and Ω enter as Ψ + (κ₄/2) t tᵀ, Ω + (κ₄/2) t tᵀ (in Φ and in the
    products), and dt gains the factor 1 + κ₄/2.
    """
    op = OrderParameters.from_vector(y)
    Psi, Omega = op.Psi, op.Omega
    if params.excess_kurtosis:
        shift = 0.5 * params.excess_kurtosis * np.outer(op.trace, op.trace)
        Psi, Omega = Psi + shift, Omega + shift
    value = params.potential.evaluate(IndexLaw(params.potential.T, np.zeros(2), Omega, Psi))
    A, B = value.d_Omega, value.d_Psi
    D, gamma = _TRAINABLE, params.weight_decay
    dt = -2.0 * (1.0 + 0.5 * params.excess_kurtosis) * D @ (A + B) @ op.trace - gamma * D @ op.trace
    flow_psi = D @ (A @ Psi + B @ Omega)
    flow_omega = D @ (A @ Omega + B @ Psi)
    dPsi = -2.0 * (flow_psi + flow_psi.T) - gamma * (D @ Psi + Psi @ D)
    dOmega = -2.0 * (flow_omega + flow_omega.T) - gamma * (D @ Omega + Omega @ D)
    return OrderParameters(dt, dPsi, dOmega).as_vector()


def solve_direct_ode(initial: OrderParameters, potential: Potential, times, *, d: int,
                     weight_decay: float = 0.0, method: str = "RK45", rtol: float = 1e-8,
                     atol: float = 1e-11, blowup_factor: float = 1e6,
                     excess_kurtosis: float = 0.0, stop_overlap: float | None = None) -> Trajectory:
    """Integrate the closed ODE of direct S from ``initial`` ([P Thm 4]).

    ``d`` only labels the trajectory (for the means m = √d t); the ODE is the
    d → ∞ limit, started from the given (finite-d or limiting) order parameters.
    ``excess_kurtosis``: κ₄ of the token law (module notes; T = 1 only).
    ``stop_overlap``: end where the overlap ratio reaches it, with a last record there.
    """
    times = check_times(times)
    params = DirectODEParams(potential, weight_decay, _check_kurtosis(excess_kurtosis, potential))
    y0 = initial.as_vector()
    scale0 = float(np.max(np.abs(y0)))
    events = [blowup_event(blowup_factor * scale0, lambda y: float(np.max(np.abs(y))))]
    if stop_overlap is not None:
        events.append(_overlap_stop(stop_overlap, OrderParameters.from_vector))
    sol = solve_ivp(direct_ode_rhs, (times[0], times[-1]), y0, method=method, t_eval=times,
                    args=(params,), rtol=rtol, atol=atol, events=events)
    return _trajectory(sol, lambda y: np.asarray(y, dtype=float), d)



def _trajectory(sol, order_of, d: int) -> Trajectory:
    """Trajectory from a solve_ivp result (``order_of``: a state to its order-parameter vector).

    Events: [blow-up] or [blow-up, overlap stop].  A failure or the blow-up event is a
    blow-up; the stop event ends the run normally, with its state as a last record
    (status 0, as a run that reached its end).
    """
    t_events = list(sol.t_events or [])
    stopped = sol.status == 1 and len(t_events) > 1 and t_events[1].size > 0
    times, states = list(sol.t), list(sol.y.T)
    if stopped and (not times or t_events[1][0] > times[-1]):
        times.append(float(t_events[1][0]))
        states.append(sol.y_events[1][0])
    n = len(times)
    blew_up = sol.status != 0 and not stopped
    t_blowup = math.nan
    if blew_up:
        fired = [te for te in t_events if te.size]
        t_blowup = float(fired[0][0]) if fired else float(sol.t[-1] if sol.t.size else 0.0)
    status = 0 if stopped else sol.status
    extra = {"nfev": np.full(n, sol.nfev, dtype=np.int64),
             "status": np.full(n, status, dtype=np.int64)}
    order = np.asarray([order_of(y) for y in states], dtype=float).reshape(n, -1)
    return Trajectory(np.asarray(times, dtype=float), order, d, bool(blew_up), t_blowup, extra)


def reference_flow(spec: ProblemSpec, seed: int, times, *, weight_decay: float = 0.0,
                   potential: Potential | None = None, stop_overlap: float | None = None) -> Trajectory:
    """The theory curve of replicate ``seed`` of an SGD problem, from the same initial state.

    Tied: the matrix flow from the run's W(0) and S*; direct: the closed ODE
    from the run's initial order parameters (``docs/paper2.md`` §4.3).  The
    untied population flow belongs to the fast–slow analysis (§2.3) and is
    not provided here.  The flow is that of the spec's token law
    (``spec.tokens``: its κ₄, §10); ``replace(spec, tokens=GAUSSIAN)`` gives the
    Gaussian flow from the same initial state.

    Parameters
    ----------
    spec : ProblemSpec
    seed : int
        Replicate seed, as passed to :func:`aimrepro.paper2.sgd.initial_problem`.
    times : increasing array of ``t_ode``
    weight_decay : float
    potential : Potential or None
        Default: ``Potential(spec.loss(), spec.T)``.
    stop_overlap : float or None
        End where |p₁₂|/p₂₂ reaches it (the flow's counterpart of SGD's stop).
    """
    if spec.param == "untied":
        raise ValueError("no reference flow for untied attention here: its fast–slow "
                         "population flow is docs/paper2.md §2.3 (a separate issue)")
    student, teacher, _ = initial_problem(spec, seed)
    potential = Potential(spec.loss(), spec.T) if potential is None else potential
    kurtosis = spec.tokens.excess_kurtosis
    if spec.param == "tied":
        return solve_tied_flow(student.W, teacher, potential, times, weight_decay=weight_decay,
                               excess_kurtosis=kurtosis, stop_overlap=stop_overlap)
    initial = OrderParameters(*trace_products([student.matrix(), teacher]))
    return solve_direct_ode(initial, potential, times, d=spec.d, weight_decay=weight_decay,
                            excess_kurtosis=kurtosis, stop_overlap=stop_overlap)
