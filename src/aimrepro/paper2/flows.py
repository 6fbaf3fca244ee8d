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


def solve_tied_flow(W0: np.ndarray, teacher: FactoredMatrix, potential: Potential,
                    times, *, weight_decay: float = 0.0, method: str = "RK45",
                    rtol: float = 1e-6, atol: float = 1e-9,
                    blowup_factor: float = 1e3, excess_kurtosis: float = 0.0) -> Trajectory:
    """Integrate the tied matrix flow from W(0) and record the order parameters at ``times``.

    ``excess_kurtosis``: κ₄ of the token law (module notes; T = 1 only).

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
    event = blowup_event(blowup_factor * norm0, np.linalg.norm)
    sol = solve_ivp(tied_flow_rhs, (times[0], times[-1]), W0.ravel(), method=method,
                    t_eval=times, args=(params,), rtol=rtol, atol=atol, events=event)
    order = [OrderParameters(*trace_products([FactoredMatrix(w.reshape(W0.shape)), teacher]))
             .as_vector() for w in sol.y.T]
    return _trajectory(sol, order, W0.shape[0])


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
                     excess_kurtosis: float = 0.0) -> Trajectory:
    """Integrate the closed ODE of direct S from ``initial`` ([P Thm 4]).

    ``d`` only labels the trajectory (for the means m = √d t); the ODE is the
    d → ∞ limit, started from the given (finite-d or limiting) order parameters.
    ``excess_kurtosis``: κ₄ of the token law (module notes; T = 1 only).
    """
    times = check_times(times)
    params = DirectODEParams(potential, weight_decay, _check_kurtosis(excess_kurtosis, potential))
    y0 = initial.as_vector()
    scale0 = float(np.max(np.abs(y0)))
    event = blowup_event(blowup_factor * scale0, lambda y: float(np.max(np.abs(y))))
    sol = solve_ivp(direct_ode_rhs, (times[0], times[-1]), y0, method=method, t_eval=times,
                    args=(params,), rtol=rtol, atol=atol, events=event)
    return _trajectory(sol, list(sol.y.T), d)



def _trajectory(sol, order, d: int) -> Trajectory:
    """Trajectory from a solve_ivp result; a terminal event or failure is a blow-up."""
    n = sol.t.size
    blew_up = sol.status != 0
    t_blowup = math.nan
    if blew_up:
        t_events = [te for te in (sol.t_events or []) if te.size]
        t_blowup = float(t_events[0][0]) if t_events else float(sol.t[-1] if n else 0.0)
    extra = {"nfev": np.full(n, sol.nfev, dtype=np.int64),
             "status": np.full(n, sol.status, dtype=np.int64)}
    return Trajectory(sol.t, np.asarray(order).reshape(n, -1), d, bool(blew_up), t_blowup, extra)


def reference_flow(spec: ProblemSpec, seed: int, times, *, weight_decay: float = 0.0,
                   potential: Potential | None = None) -> Trajectory:
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
    """
    if spec.param == "untied":
        raise ValueError("no reference flow for untied attention here: its fast–slow "
                         "population flow is docs/paper2.md §2.3 (a separate issue)")
    student, teacher, _ = initial_problem(spec, seed)
    potential = Potential(spec.loss(), spec.T) if potential is None else potential
    kurtosis = spec.tokens.excess_kurtosis
    if spec.param == "tied":
        return solve_tied_flow(student.W, teacher, potential, times, weight_decay=weight_decay,
                               excess_kurtosis=kurtosis)
    initial = OrderParameters(*trace_products([student.matrix(), teacher]))
    return solve_direct_ode(initial, potential, times, d=spec.d, weight_decay=weight_decay,
                            excess_kurtosis=kurtosis)
