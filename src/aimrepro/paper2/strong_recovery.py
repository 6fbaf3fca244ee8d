"""Strong recovery: predicted late-time rates by linearising the flows at the teacher (ours).

[P App. D.5, Cor. 6] (tied) and [P App. F.4, Cor. 9] (untied) prove, under
a Polyak–Łojasiewicz condition with an unspecified constant c, that the
excess loss Δ = Φ − Φ* decays like e^{−2c t}.  They give no value of c.
Here the rate is predicted by linearising the deterministic flow at the
global minimum, for the teacher–student MSE ℒ = c_ℓ‖h(G₁) − h(G₂)‖² with
one link and one token (T = 1), where the minimum is the teacher itself
(Φ* = 0, q₁₁ = q₁₂ = q₂₂ = q*).  At that point Price's theorem gives

    Γ₁₁ = −Γ₁₂ = g := 2c_ℓ E[h'(G)²],   G ~ N(m₂, v*)    (v* = 2q* or q⁽¹⁾ + q⁽²⁾),

and, to second order in the deviation E of the symmetric parts,
Φ − Φ* = g‖E‖²_F/d + O((Tr(S₂E)/d)²) (tied: dΦ = Γ₁₁dq₁₁ + 2Γ₁₂dq₁₂ with
δq₁₁ = (2Tr(S₂E) + Tr E²)/d, δq₁₂ = Tr(S₂E)/d).  All formulas below are
ours; the paper's D.5 example (ℒ = (G₁ − G₂)², Φ − Φ* ∝ Tr((S₁ − S₂)²)/d,
PL constant ∝ λ_min(S₁)) is the linear case.

Tied (time t = 4αn/d): dS/dt = −Γ₁₁(S S + S S) − Γ₁₂(S* S + S S*); at
S = S* + E, dE/dt = −g(S*E + ES*) + (rank one along S*²).  In the
eigenbasis of S* the entries E_ij decay at g(λ_i + λ_j); with a student of
the teacher's rank r* the tangent space holds the range–range and
range–null blocks, so the slowest mode is g λ_min⁺ (the smallest non-zero
eigenvalue of S*) and Δ ∝ ‖E‖² decays at **2 g λ_min⁺(S*)**.  A wider
student adds null–null directions with no linear restoring force
(algebraic, ~1/t, decay) (:func:`tied_rates`).

Direct S (t = αn/d): the closed ODE [P eqs. 402–404] at its fixed point;
the symmetric deviation E = S⁺ − S* decays at 2g except along S*, so Δ
decays at **min(4g, 2r_S*)** with r_S* the rate of ⟨S*, E⟩
(:func:`direct_rates`: the eigenvalues of the closed ODE's Jacobian).

Untied (τ = αn/d, mean slaved): dU/dτ = −β̄V − g E V + ..., E = M⁺ − M₂⁺;
dE/dτ = −g(EC + CE) + 2g(Tr(EC)/Tr C) C + ..., C = U Uᵀ + V Vᵀ, so the modes
decay at g(c_i + c_j) and Δ at **4 g c_min(C)**, C at the end of the
run (the factors are not unique at the minimum, C is whatever the flow
reached) (:func:`untied_rates`).

Continuous spectra (d → ∞) make the approach to the slowest rate
sub-exponential (a density vanishing like a square root at λ_min gives a
t^{−3/2} prefactor); at finite d the smallest eigenvalue is isolated and
the decay becomes a clean exponential once the next modes have died out,
which for the near-edge eigenvalues of Wishart-like S* or C takes tens of
1/rate.  :func:`late_time_rate` fits the local rate −d ln Δ/dt on a window;
:func:`mode_sum_decay` predicts the whole decay Σ_ij E_ij² e^{−2g(c_i+c_j)t}
from the deviation at the start of the window.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special

from aimrepro.paper2.flows import DirectODEParams, direct_ode_rhs
from aimrepro.paper2.population import IndexLaw, Potential
from aimrepro.paper2.trajectory import OrderParameters, Trajectory

__all__ = [
    "DirectRates",
    "RateFit",
    "TiedRates",
    "UntiedRates",
    "direct_rates",
    "excess_loss",
    "late_time_rate",
    "mode_sum_decay",
    "optimum_curvature",
    "tied_rates",
    "untied_rates",
]


def optimum_curvature(potential: Potential, *, variance: float, mean: float = 0.0,
                      n_nodes: int = 80) -> float:
    """g = Γ₁₁ = −Γ₁₂ at the teacher: 2c E[h'(G)²], G ~ N(mean, variance), one token.

    Checked against the potential's Γ at q₁₁ = q₁₂ = q₂₂ (a :class:`ValueError`
    if Γ₁₁ ≠ −Γ₁₂ there, i.e. if the teacher is not a critical point).
    """
    if potential.T != 1 or not potential.loss.elementwise:
        raise ValueError("the rates are derived for one token and an elementwise link")
    if potential.loss.student.name != potential.loss.teacher.name:
        raise ValueError("the teacher is the minimum only for the same link on both sides")
    if not (math.isfinite(variance) and variance > 0):
        raise ValueError(f"variance must be a finite number > 0, got {variance}")
    x, w = special.roots_hermitenorm(n_nodes)
    w = w / math.sqrt(2 * math.pi)
    h = potential.loss.student.jacobian(mean + math.sqrt(variance) * x)
    g = 2.0 * potential.loss.prefactor * float(w @ (h * h))
    # the potential at the teacher: Γ = ½ E∂²ℒ (Ω) + ½ E∂²ℒ (Ψ) for T = 1
    q = 0.5 * variance
    value = potential.evaluate(IndexLaw(1, np.array([mean, mean]), np.full((2, 2), q),
                                        np.full((2, 2), q)))
    gamma = value.gamma
    if not (math.isclose(gamma[0, 0], g, rel_tol=1e-6, abs_tol=1e-10)
            and math.isclose(gamma[0, 1], -g, rel_tol=1e-6, abs_tol=1e-10)):
        raise ValueError(f"Γ at the teacher is {gamma.tolist()}, expected ±{g}")
    return g


# --- tied -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class TiedRates:
    """Linearised rates of the tied flow at S₁ = S* (time t = 4αn/d).

    Attributes
    ----------
    g : float
        Γ₁₁ = −Γ₁₂ at the teacher.
    lambda_min : float
        Smallest non-zero eigenvalue of S*.
    slowest : float
        g λ_min: the slowest mode of E = S₁ − S*.
    loss_rate : float
        2 g λ_min: the late-time rate of Φ − Φ*.
    algebraic : bool
        The student is wider than the teacher's rank: null–null directions
        decay algebraically and ``loss_rate`` is not reached.
    teacher_rank : int
    """

    g: float
    lambda_min: float
    slowest: float
    loss_rate: float
    algebraic: bool
    teacher_rank: int


def tied_rates(potential: Potential, teacher, *, student_width: int,
               rank_tol: float = 1e-9) -> TiedRates:
    """Late-time rates of the tied matrix flow at the teacher (module docstring).

    Parameters
    ----------
    potential : Potential
        T = 1, elementwise link, same on both sides.
    teacher : FactoredMatrix or (d, d) array
        S* (symmetric PSD).
    student_width : int
        Columns of W.
    """
    S = np.asarray(teacher.dense() if hasattr(teacher, "dense") else teacher, dtype=float)
    d = S.shape[0]
    lam = np.linalg.eigvalsh(0.5 * (S + S.T))
    if lam[0] < -rank_tol * max(lam[-1], 1.0):
        raise ValueError("the tied teacher must be PSD")
    positive = lam[lam > rank_tol * lam[-1]]
    q_star = float(np.sum(lam * lam)) / d
    g = optimum_curvature(potential, variance=2.0 * q_star)
    rank = int(positive.size)
    if not (isinstance(student_width, (int, np.integer)) and student_width >= rank):
        raise ValueError(f"student_width must be an integer >= the teacher rank {rank} "
                         f"(else S* is not reachable), got {student_width!r}")
    lam_min = float(positive[0])
    return TiedRates(g, lam_min, g * lam_min, 2.0 * g * lam_min,
                     bool(student_width > rank and rank < d), rank)


# --- direct ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class DirectRates:
    """Linearised rates of the direct closed ODE at its fixed point (time t = αn/d).

    Attributes
    ----------
    g : float
    eigenvalues : ndarray
        Decay rates (−eigenvalues of the Jacobian) of the trainable coordinates
        (t₁, Ψ₁₁, Ψ₁₂, Ω₁₁, Ω₁₂); the inert skew part gives zeros.
    loss_rate : float
        Late-time rate of Φ − Φ*: min(4g, 2 r_S*) (module docstring), from the
        Jacobian's modes.
    """

    g: float
    eigenvalues: np.ndarray
    loss_rate: float


def direct_rates(potential: Potential, q_star: float, *, skew: float = 0.0,
                 teacher_trace: float = 0.0, step: float = 1e-6) -> DirectRates:
    """Rates of the direct closed ODE ([P eqs. 402–404]) at the teacher, by its Jacobian.

    Parameters
    ----------
    potential : Potential
        T = 1, elementwise link, same on both sides.
    q_star : float
        Tr(S*²)/d of the (symmetric) teacher.
    skew : float
        ‖S₁⁻‖²_F/d of the student's skew part (inert for one token).
    teacher_trace : float
        t₂ = Tr S*/d.
    """
    if not (math.isfinite(q_star) and q_star > 0):
        raise ValueError(f"q_star must be a finite number > 0, got {q_star}")
    g = optimum_curvature(potential, variance=2.0 * q_star)
    t2 = float(teacher_trace)
    fixed = OrderParameters([t2, t2], [[q_star - skew, q_star], [q_star, q_star]],
                            [[q_star + skew, q_star], [q_star, q_star]])
    params = DirectODEParams(potential)
    y0 = fixed.as_vector()
    trainable = [0, 2, 3, 5, 6]          # t1, Psi11, Psi12, Omega11, Omega12
    J = np.empty((len(trainable), len(trainable)))
    for col, i in enumerate(trainable):
        e = np.zeros_like(y0)
        e[i] = step
        J[:, col] = (direct_ode_rhs(0.0, y0 + e, params)
                     - direct_ode_rhs(0.0, y0 - e, params))[trainable] / (2 * step)
    rates = np.sort(-np.linalg.eigvals(J).real)
    # Φ − Φ* is linear in δ(ω₁₁ − 2ω₁₂) (rate 4g) and quadratic in δω₁₂ (twice its rate)
    symmetric = [1, 2, 3, 4]
    Js = J[np.ix_(symmetric, symmetric)]
    mode_rates = -np.linalg.eigvals(Js).real
    positive = np.sort(mode_rates[mode_rates > 1e-8 * g])
    candidates = [4.0 * g] + [2.0 * r for r in positive if not math.isclose(r, 4 * g, rel_tol=1e-4)]
    return DirectRates(g, rates, float(min(candidates)))


# --- untied ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class UntiedRates:
    """Linearised rates of the slaved untied flow at M₁⁺ = M₂⁺ (time τ = αn/d).

    Attributes
    ----------
    g : float
    c_min : float
        Smallest eigenvalue of C = U Uᵀ + V Vᵀ at the state given.
    slowest : float
        2 g c_min.
    loss_rate : float
        4 g c_min.
    """

    g: float
    c_min: float
    slowest: float
    loss_rate: float


def untied_rates(potential: Potential, U: np.ndarray, V: np.ndarray, *, teacher_mean: float,
                 teacher_variance: float) -> UntiedRates:
    """Rates of the untied slow flow near the minimum, with C from the factors U, V given.

    ``teacher_variance`` is v₂ = q⁽¹⁾₂₂ + q⁽²⁾₂₂ (the index variance at the minimum).
    """
    U, V = np.asarray(U, dtype=float), np.asarray(V, dtype=float)
    if U.shape != V.shape:
        raise ValueError(f"U and V must have equal shapes, got {U.shape} and {V.shape}")
    g = optimum_curvature(potential, variance=float(teacher_variance), mean=float(teacher_mean))
    # eigenvalues of U Uᵀ + V Vᵀ = [U V][U V]ᵀ: from the 2r×2r Gram when 2r < d
    F = np.concatenate([U, V], axis=1)
    d = U.shape[0]
    if F.shape[1] >= d:
        c = np.linalg.eigvalsh(F @ F.T)
    else:
        c = np.concatenate([np.linalg.eigvalsh(F.T @ F), np.zeros(d - F.shape[1])])
    c_min = float(max(c[0], 0.0))
    return UntiedRates(g, c_min, 2.0 * g * c_min, 4.0 * g * c_min)


def mode_sum_decay(E0: np.ndarray, C: np.ndarray, g: float, times) -> np.ndarray:
    """‖E(t)‖²_F/‖E(0)‖²_F under the linearised flow dE/dt = −g(EC + CE), C frozen.

    In the eigenbasis of C, E_ij(t) = E_ij(0) e^{−g(c_i + c_j)t}, so
    ‖E(t)‖² = Σ_ij E_ij(0)² e^{−2g(c_i + c_j)t}: the whole late-time decay of
    the excess loss (∝ ‖E‖², module docstring), not only its slowest rate.
    C = S* (tied) or U Uᵀ + V Vᵀ (untied); the rank-one terms along C are
    left out (they only change the decay of the component along C).

    Parameters
    ----------
    E0 : (d, d) symmetric ndarray
        The deviation at the start of the window (S₁ − S*, or M₁⁺ − M₂⁺).
    C : (d, d) symmetric PSD ndarray
    g : float
    times : array of t − t₀ ≥ 0
    """
    E0 = np.asarray(E0, dtype=float)
    C = np.asarray(C, dtype=float)
    if E0.shape != C.shape or E0.ndim != 2 or E0.shape[0] != E0.shape[1]:
        raise ValueError(f"E0 and C must be square matrices of one shape, got {E0.shape}, "
                         f"{C.shape}")
    c, Q = np.linalg.eigh(0.5 * (C + C.T))
    weights = (Q.T @ (0.5 * (E0 + E0.T)) @ Q) ** 2
    pair = (c[:, None] + c[None, :]).ravel()
    t = np.atleast_1d(np.asarray(times, dtype=float))
    total = weights.sum()
    if total == 0:
        raise ValueError("E0 is zero: nothing decays")
    return np.exp(-2.0 * g * np.outer(t, pair)) @ weights.ravel() / total


# --- measuring the decay ----------------------------------------------------------------------


def excess_loss(potential: Potential, run: Trajectory, *, kind: str) -> np.ndarray:
    """Φ(order parameters) − Φ* along a trajectory (Φ* = 0: realizable teacher–student MSE).

    ``kind``: ``tied``/``direct`` (centered index, law from Ψ, Ω) or ``untied``
    (law from (Ω, Ψ) = (q⁽¹⁾, q⁽²⁾); student mean from the column ``m_flow``
    when the run has it, else √d t₁).  The slaved flow keeps Tr(U Vᵀ) at its
    initial value while its mean is m*(q) (``m_flow``): the matrices' own
    trace would add the constant ½(m(0) − m*)² of the boundary layer.
    """
    if kind not in ("tied", "direct", "untied"):
        raise ValueError(f"kind must be tied, direct or untied, got {kind!r}")
    flow_mean = run.extra.get("m_flow") if kind == "untied" else None
    out = np.empty(len(run))
    for i in range(len(run)):
        op = run.at(i)
        mean = np.zeros(2)
        if kind == "untied":
            mean = op.mean(run.d)
            if flow_mean is not None:
                mean[0] = float(flow_mean[i])
        law = IndexLaw(potential.T, mean, op.Omega, op.Psi)
        out[i] = potential.evaluate(law, gradient=False).value
    return out


@dataclass(frozen=True)
class RateFit:
    """Least-squares fit of ln Δ = a − rate · t on a window.

    Attributes
    ----------
    rate, stderr : float
        Fitted decay rate and its standard error.
    t_start, t_end : float
    n_points : int
    local_rates : ndarray
        −Δ ln Δ/Δt between consecutive points of the window.
    """

    rate: float
    stderr: float
    t_start: float
    t_end: float
    n_points: int
    local_rates: np.ndarray


def late_time_rate(times, excess, *, t_start: float, t_end: float | None = None,
                   floor: float = 0.0) -> RateFit:
    """Fit the exponential decay rate of ``excess`` on [t_start, t_end] (values above ``floor``).

    ``floor`` excludes the records where Δ has reached a noise floor (SGD):
    only values > floor enter the fit.
    """
    t = np.asarray(times, dtype=float)
    y = np.asarray(excess, dtype=float)
    if t.shape != y.shape or t.ndim != 1:
        raise ValueError("times and excess must be 1-D arrays of equal length")
    t_end = float(t[-1]) if t_end is None else float(t_end)
    keep = (t >= t_start) & (t <= t_end) & np.isfinite(y) & (y > floor)
    if keep.sum() < 3:
        raise ValueError(f"need >= 3 records with excess > {floor} in [{t_start}, {t_end}], "
                         f"got {int(keep.sum())}")
    tk, ly = t[keep], np.log(y[keep])
    A = np.stack([np.ones_like(tk), tk], axis=1)
    coef, *_ = np.linalg.lstsq(A, ly, rcond=None)
    residual = ly - A @ coef
    dof = max(tk.size - 2, 1)
    cov = float(np.sum(residual ** 2)) / dof * np.linalg.inv(A.T @ A)
    local = -np.diff(ly) / np.diff(tk)
    return RateFit(float(-coef[1]), math.sqrt(max(cov[1, 1], 0.0)), float(tk[0]), float(tk[-1]),
                   int(tk.size), local)
