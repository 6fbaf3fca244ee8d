"""GAMP-RIE for two attention layers (``docs/paper1.md`` §14.7).

The one-layer GAMP-RIE of ``paper1.amp`` (§5) with a 2×2 structure in layer
space.  Both layers are measured by the same sensing matrices A_μ (z-scale), so
each sample has two index estimates ω_μ,ℓ = ⟨A_μ, Ŝ_ℓ⟩ − Σ_k V^z_ℓk ḡ_μ,k (Onsager
term with the 2×2 variance V^z = 2Ĉ, Ĉ the predicted error matrix).  One
iteration (damping θ on the output messages and on the estimates, as ``amp``):

1. m_μ = (L ω_μ,1, L ω_μ,2), the prior means of the index differences (``fibre``);
2. the two-layer output function: from the posterior of (d, e) on the fibre of
   u_μ (``fibre.fibre_moments``, warm-started at the previous modes),
   g_μ,ℓ = Lᵀ Σ_k (Ĉ⁻¹)_ℓk Σ⁻¹ E[δ_k], δ₁ = d − m_d, δ₂ = e − m_e, and the
   precision P_μ,ℓk = g_μ,ℓ · g_μ,k (the form of §5; its mean is −E ∂g/∂ω by
   the Nishimori identity).  The posterior-covariance form Ĉ⁻¹ − ½Ĉ⁻¹TĈ⁻¹ has
   less variance but is a difference of nearly equal numbers when a layer
   carries little information (layer 1 at c = 10, F₁₁ ~ 0.02): there the
   quadrature's 1e−3 error in the covariance made it 100 times too small and
   the estimate of layer 1 blew up (error 19 at the first iteration, measured);
3. Â = 2α mean_μ P_μ (2×2; Q̂ = 2Â), B_ℓ = Σ_μ Σ_{a≤b} ḡ_μ,ℓ,ab A_μ,ab (``amp._backproject``);
4. R_ℓ = Ŝ_ℓ + (1/d) Σ_k (Â⁻¹)_ℓk B_k: S_ℓ plus noise of precision Q̂ (2×2);
5. Ŝ = the first-order coupled RIE of the pair (``prior.coupled_denoiser``),
   Ĉ = the error matrix (``prior.error_matrix``).

The Onsager matrix V^z = 2Ĉ is the divergence of this denoiser times the noise
covariance to first order in Q̂₁₂ (§14.7).  Initialisation: Ŝ_ℓ = √ρ I, Ĉ = I,
ḡ = 0.  Stopping: ``amp.StoppingRule`` on the summed change Σ_ℓ ‖ΔŜ_ℓ‖²/d and the
summed predicted error Ĉ₁₁ + Ĉ₂₂.

Costs per iteration: 2 forward GEMMs and 2 back-projections, O(n T d²); 4
eigendecompositions, O(d³); n fibre integrals (``fibre``, ~0.05 ms each at the
default :data:`AMP_RULE`, warm-started).  Memory O(n T d + d²).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from aimrepro.paper1 import amp as one_layer
from aimrepro.paper1.amp import StoppingRule, _backproject, _denoise, _indices
from aimrepro.paper1.data import write_npz
from aimrepro.paper1.two_layer import fibre as fb
from aimrepro.paper1.two_layer import prior
from aimrepro.paper1.two_layer.model import TwoLayerDataset

__all__ = ["AMP_RULE", "TwoLayerAMPResult", "load_run_summary", "output_messages", "run_on_dataset", "save_run",
           "two_layer_gamp"]

#: Fibre quadrature of GAMP-RIE: fewer nodes and Newton steps than the tables (warm starts); the
#: messages carry ~1e−3 relative noise from it, below the finite-size fluctuations.
AMP_RULE = fb.FibreRule(nodes=10, newton_steps=2)

_L = fb.Z_TO_DIFFERENCES


def output_messages(u, omega, C, skip, *, rule: fb.FibreRule = AMP_RULE, start=None):
    """g (n, 2, 3) z-scale, the precisions P = g gᵀ (n, 2, 2) and the fibre modes, for labels u and means ω (n, 2, 3).

    ``C``: the 2×2 predicted error (h-scale), the prior covariance of the indices is C ⊗ GOE.
    """
    omega = np.asarray(omega, dtype=float)
    m = np.concatenate([omega[:, 0] @ _L.T, omega[:, 1] @ _L.T], axis=1)
    moments = fb.fibre_moments(u, m, C, skip, rule=rule, start=start)
    delta = (moments.mean - m).reshape(-1, 2, 2)
    inverse = np.linalg.inv(C)
    whitened = delta @ fb.SIGMA_INV  # Σ⁻¹ δ_k per layer k
    g = np.einsum("lk,nkc,zc->nlz", inverse, whitened, _L.T)
    return g, np.einsum("nlz,nkz->nlk", g, g), moments.modes


@dataclass(frozen=True)
class TwoLayerAMPResult:
    """Outcome of :func:`two_layer_gamp`.

    Attributes
    ----------
    S_hat : (2, d, d) the last estimates
    errors : (2,) ‖Ŝ_ℓ − S_ℓ‖²_F/d (NaN without teachers); cross_error : tr((Ŝ₁ − S₁)(Ŝ₂ − S₂))/d
    C_hat : (2, 2) the last predicted error matrix
    iterations, converged, status, message : as ``amp.AMPResult`` (status in ``amp.STATUSES``)
    trace : per iteration ``error1``, ``error2``, ``cross_error``, ``change``, ``C11``, ``C22``, ``C12``,
        ``contraction``, ``remaining``
    settings : damping, stopping rule, fibre rule
    """

    S_hat: np.ndarray
    errors: np.ndarray
    cross_error: float
    C_hat: np.ndarray
    iterations: int
    converged: bool
    status: str
    message: str
    trace: dict = field(repr=False)
    settings: dict = field(default_factory=dict)

    def summary(self) -> dict:
        return {"error1": float(self.errors[0]), "error2": float(self.errors[1]), "cross_error": self.cross_error,
                "C11": float(self.C_hat[0, 0]), "C22": float(self.C_hat[1, 1]), "C12": float(self.C_hat[0, 1]),
                "iterations": int(self.iterations), "converged": bool(self.converged), "status": self.status}


def _rie(R, delta, rho):
    """The one-layer RIE of ``amp`` without its error quadrature (Ĉ comes from ``prior.error_matrix``)."""
    return _denoise(R, delta, rho, with_error=False)


def _errors(S_hat, teachers, d):
    if teachers is None:
        return np.full(2, math.nan), math.nan
    diff = S_hat - teachers
    return np.array([np.sum(diff[0] ** 2), np.sum(diff[1] ** 2)]) / d, float(np.sum(diff[0] * diff[1]) / d)


def two_layer_gamp(X, u, rho: float, skip: float, *, damping: float = 0.5, stopping: StoppingRule | None = None,
                   teachers=None, rule: fb.FibreRule = AMP_RULE, coupled: bool = False,
                   callback=None) -> TwoLayerAMPResult:
    """Run two-layer GAMP-RIE on tokens X (n, 2, d) and labels u (n, 2) (module notes).

    Parameters
    ----------
    rho : width ratio of both layers; skip : the skip strength c >= 0
    damping : θ in [0, 1)
    stopping : ``amp.StoppingRule`` (default ``StoppingRule()``)
    teachers : optional (2, d, d) teacher matrices (S₁, S₂), to trace the errors
    rule : the fibre quadrature of the output function
    callback : called with (iteration, errors, C_hat) after each iteration

    Returns
    -------
    TwoLayerAMPResult
        Time O(iterations · (n T d² + d³ + n · fibre)), memory O(n T d + d²).
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    u = np.asarray(u, dtype=np.float64)
    if X.ndim != 3 or X.shape[1] != 2:
        raise ValueError(f"X must have shape (n, 2, d), got {X.shape}")
    n, _, d = X.shape
    if u.shape != (n, 2):
        raise ValueError(f"u must have shape ({n}, 2) to match X, got {u.shape}")
    if not (np.all(np.isfinite(X)) and np.all(np.isfinite(u))):
        raise ValueError("X and u must be finite")
    if not (isinstance(rho, (int, float)) and math.isfinite(rho) and rho > 0):
        raise ValueError(f"rho must be a finite number > 0, got {rho!r}")
    skip = fb.check_skip(skip)
    if not 0.0 <= damping < 1.0:
        raise ValueError(f"damping must lie in [0, 1), got {damping!r}")
    rule_stop = StoppingRule() if stopping is None else stopping
    if teachers is not None:
        teachers = np.asarray(teachers, dtype=float)
        if teachers.shape != (2, d, d):
            raise ValueError(f"teachers must have shape (2, {d}, {d}), got {teachers.shape}")
    alpha = n / (d * d)
    S_hat = np.stack([math.sqrt(rho) * np.eye(d)] * 2)
    C_hat = np.eye(2)
    A_hat = None
    g_bar = None
    modes = None
    names = ("error1", "error2", "cross_error", "change", "C11", "C22", "C12", "contraction", "remaining")
    trace = {name: np.full(rule_stop.max_iter, math.nan) for name in names}
    status, message = "max_iter", f"not settled to tol={rule_stop.tol:g} within {rule_stop.max_iter} iterations"
    settled_run = stationary_run = 0
    iteration = 0
    for iteration in range(1, rule_stop.max_iter + 1):
        if not (np.all(np.isfinite(C_hat)) and C_hat[0, 0] > 0 and np.linalg.det(C_hat) > 0):
            status, message = "diverged", f"predicted error matrix not positive definite at iteration {iteration}"
            iteration -= 1
            break
        omega = np.stack([_indices(X, S_hat[0]), _indices(X, S_hat[1])], axis=1)  # (n, 2, 3)
        if g_bar is not None:
            omega -= np.einsum("lk,nkz->nlz", 2.0 * C_hat, g_bar)
        with np.errstate(over="ignore", invalid="ignore"):
            g, P, modes = output_messages(u, omega, C_hat, skip, rule=rule, start=modes)
        A_new = 2.0 * alpha * P.mean(axis=0)
        A_new = 0.5 * (A_new + A_new.T)
        if g_bar is None:
            g_bar, A_hat = g, A_new
        else:
            g_bar = (1.0 - damping) * g + damping * g_bar
            A_hat = (1.0 - damping) * A_new + damping * A_hat
        if not (np.all(np.isfinite(g_bar)) and np.all(np.isfinite(A_hat)) and A_hat[0, 0] > 0
                and np.linalg.det(A_hat) > 0):
            status, message = "diverged", f"non-finite messages or a precision not positive at iteration {iteration}"
            break
        B = np.stack([_backproject(X, g_bar[:, 0]), _backproject(X, g_bar[:, 1])])
        q_hat = 2.0 * A_hat if coupled else np.diag(np.diag(2.0 * A_hat))
        R = S_hat + np.einsum("lk,kij->lij", np.linalg.inv(0.5 * q_hat), B) / d
        S1, S2 = prior.coupled_denoiser(R[0], R[1], q_hat, rho, denoise=_rie)
        C_new = prior.error_matrix(q_hat, rho)
        S_next = np.stack([S1, S2])
        if iteration > 1:
            S_next = (1.0 - damping) * S_next + damping * S_hat
            C_new = (1.0 - damping) * C_new + damping * C_hat
        if not np.all(np.isfinite(S_next)):
            status, message = "diverged", f"non-finite estimate at iteration {iteration}"
            break
        change = float(np.sum((S_next - S_hat) ** 2) / d)
        S_hat, C_hat = S_next, C_new
        errors, cross = _errors(S_hat, teachers, d)
        t = iteration - 1
        for name, value in zip(("error1", "error2", "cross_error", "change", "C11", "C22", "C12"),
                               (errors[0], errors[1], cross, change, C_hat[0, 0], C_hat[1, 1], C_hat[0, 1])):
            trace[name][t] = value
        summed = trace["C11"][:iteration] + trace["C22"][:iteration]
        contraction, remaining, remaining_C = rule_stop.remaining(trace["change"][:iteration], summed)
        trace["contraction"][t], trace["remaining"][t] = contraction, remaining
        if callback is not None:
            callback(iteration, errors, C_hat)
        settled_run = settled_run + 1 if rule_stop.settled(remaining, remaining_C) else 0
        if settled_run >= rule_stop.patience:
            status, message = "converged", f"settled for {rule_stop.patience} iterations at iteration {iteration}"
            break
        if iteration >= 2 * rule_stop.stationary_window:
            lam, swing, r2 = rule_stop.stationary(trace["change"][:iteration], summed)
            stationary_run = stationary_run + 1 if rule_stop.is_stationary(lam, swing, r2) else 0
            if stationary_run >= rule_stop.patience:
                status, message = "stationary", (f"not settling but stationary at iteration {iteration}: the "
                                                 f"predicted error swings by {swing:.2g} of itself without a trend")
                break
    trace = {name: values[:iteration] for name, values in trace.items()}
    errors, cross = _errors(S_hat, teachers, d)
    return TwoLayerAMPResult(S_hat, errors, cross, C_hat, iteration, status == "converged", status, message, trace,
                             {"damping": damping, "coupled": bool(coupled), **rule_stop.to_dict(), **{f"fibre_{k}": v for k, v in
                                                                            rule.to_dict().items()}})


def run_on_dataset(dataset: TwoLayerDataset, *, damping: float = 0.5, stopping: StoppingRule | None = None,
                   rule: fb.FibreRule = AMP_RULE, coupled: bool = False, callback=None) -> TwoLayerAMPResult:
    """Two-layer GAMP-RIE on a dataset of ``model.sample_dataset``, traced against its teachers."""
    spec = dataset.spec
    return two_layer_gamp(dataset.X, dataset.u, spec.rho, spec.skip, damping=damping, stopping=stopping,
                          teachers=np.stack([dataset.S1, dataset.S2]), rule=rule, coupled=coupled,
                          callback=callback)


#: Scalars of a run summary (:func:`save_run`, :func:`load_run_summary`).
SUMMARY_FLOATS = ("error1", "error2", "cross_error", "C11", "C22", "C12")


def save_run(path, result: TwoLayerAMPResult) -> None:
    """Write a run as ``.npz``: summary scalars, ``trace_*`` arrays and Ŝ (byte-reproducible)."""
    summary = result.summary()
    write_npz(path, {**{name: np.float64(summary[name]) for name in SUMMARY_FLOATS},
                     "iterations": np.int64(result.iterations), "converged": np.bool_(result.converged),
                     "status": np.array(result.status), "message": np.array(result.message),
                     "S_hat": result.S_hat, **{f"trace_{k}": v for k, v in result.trace.items()}})


def load_run_summary(path) -> dict:
    """The scalars of a run written by :func:`save_run`."""
    with np.load(path, allow_pickle=False) as archive:
        return {**{name: float(archive[name]) for name in SUMMARY_FLOATS},
                "iterations": int(archive["iterations"]), "converged": bool(archive["converged"]),
                "status": str(archive["status"])}


#: Statuses whose final errors measure AMP's fixed point (``amp.USABLE_STATUSES``).
USABLE_STATUSES = one_layer.USABLE_STATUSES
