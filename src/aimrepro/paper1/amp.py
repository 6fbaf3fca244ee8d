"""GAMP-RIE: approximate message passing for the attention-indexed model (``docs/paper1.md`` §5).

Each sample μ gives m = T(T+1)/2 measurements of the symmetric d×d matrix S
through the sensing matrices (z-scale, ``channels`` module notes)

    A_{μ,aa} = (x_a x_aᵀ − I)/√d,      A_{μ,ab} = (x_a x_bᵀ + x_b x_aᵀ)/√(2d)  (a < b),

so that ⟨A_{μ,ab}, S⟩ = τ_ab h_ab.  One iteration t (damping θ, none at t = 0):

1. V^t = 2 Ĉ^t;
2. ω^t_μ = ⟨A_μ, Ŝ^t⟩ − V^t ḡ^{t−1}_μ  (Onsager term; ḡ^{−1} = 0);
3. g^t_μ = g_out(y_μ, ω^t_μ, V^t) and A_new = (2α/n) Σ_μ p_μ with the sample
   precision p_μ = −tr ∂g_out/∂ω (``OutputChannel.precision``: |g_out|² as in
   §5 for the hardmax channels, the exact (m − 1)/V for softmax);
4. ḡ^t = (1 − θ) g^t + θ ḡ^{t−1},  A^t = (1 − θ) A_new + θ A^{t−1};
5. R^t = Ŝ^t + (1/(d A^t)) Σ_μ Σ_{a≤b} ḡ^t_{μ,ab} A_{μ,ab}  (≈ S* + √Δ^t · GOE noise, Δ^t = 1/(2A^t));
6. Ŝ^{t+1} = (1 − θ) f_RIE(R^t; Δ^t, ρ) + θ Ŝ^t,  Ĉ^{t+1} = (1 − θ) mmse(Δ^t; ρ) + θ Ĉ^t;

stopping by :class:`StoppingRule` (below).  Initialisation: Ŝ⁰ = √ρ I (the
prior mean), Ĉ⁰ = Q0 − ρ = 1 (its error), ḡ^{−1} = 0 (the recommended one of
§5; the published code starts from a random prior draw with Ĉ⁰ = V⁰ = 10).
The SE correspondences V ↔ 2(Q0 − q), A ↔ q̂/2, Ĉ ↔ Q0 − q live in one
place, :class:`SECorrespondence`, used by the iteration and by the tests.

Deviations from §5, measured (d = 100, 6 seeds; docs/findings.md, "Paper 1: GAMP-RIE")
------------------------------------------------------------------------
* *Damping.*  The published code damps ω and V; that breaks the Onsager
  cancellation and, with the correct hardmax channel, sends AMP away from a
  good first estimate (ρ = 0.1, α = 1: error 0.75 ± 0.39 against SE 0.005;
  softmax ρ = 0.5, α = 0.05: 0.90 ± 0.28 against 0.72).  Here the output
  messages (ḡ, A) and the input estimates (Ŝ, Ĉ) are damped instead, the
  damped GAMP of Rangan et al. (2019); the same points give 0.023 ± 0.012
  and 0.73 ± 0.04.
* *Lower spectral edge.*  Below the lower edge a of the support of μ_Δ the
  continuation of f_RIE(λ) = λ − 2Δ Re G(λ) falls steeply (to −0.5 at
  a − 0.1 for ρ = 0.5, Δ = 1): a negative eigenvalue for a positive
  semi-definite S, and at finite d an eigenvalue of R that wanders across the
  edge traps AMP in a limit cycle (residual ~1e−3, never below tol).
  Eigenvalues below a are therefore shrunk as a is (:func:`_denoise`).  The
  upper edge is left alone: there the continuation ≈ λ − 2Δ/λ keeps the
  signal of a large eigenvalue.

Stopping
--------
The published rule, ‖Ŝ^{t+1} − Ŝ^t‖²_F/d < 1e−5, is absolute and looks at
one step: it stops on a slow mode.  Hardmax ρ = 1, α = 2.71 stops at
iteration 24–26 with errors 17 % (up to 44 %) above where the same runs
settle after 550–900 iterations (d = 50, 8 seeds), and near α_PR the step is
small long before the error has settled.  :class:`StoppingRule` instead extrapolates the motion
that is left.  Write c_t = ‖Ŝ^t − Ŝ^{t−1}‖²_F/d and fit log c_s over the last
``window`` iterations by a line: its slope gives the contraction
λ = exp(slope/2) of the step per iteration, and a geometric tail moves the
estimate by a further √c_t · λ/(1 − λ) and the predicted error Ĉ by
|Ĉ_t − Ĉ_{t−1}| · λ/(1 − λ).  The iteration is *settled* when λ < 1 and

    c_t (λ/(1 − λ))² <= tol · E_t,     |Ĉ_t − Ĉ_{t−1}| λ/(1 − λ) <= √tol · E_t,

with E_t = max(Ĉ_t, error_floor), the predicted error (so the rule is
relative: a remaining displacement² of tol·E changes the error by at most a
fraction 2√tol); it stops after ``patience`` consecutive settled
iterations.  A run that keeps moving without contracting (λ >= 1) is
either jittering around a fixed point it cannot reach at finite d (hardmax
ρ = 0.2, d = 50–150: the error swings by 0.2–0.8 %, Ĉ by 1–3 %, for
thousands of iterations) or in a limit cycle.  After 2 ``stationary_window``
iterations it stops as ``"stationary"`` once, for ``patience`` consecutive
iterations and over the last ``stationary_window``, the step has not
contracted (by less than a factor e), and Ĉ has swung by at most
``stationary_tol`` of itself *without a trend*: a straight line explains at
most ``trend_r2`` of its variance (R² ~ 0.05 for the jitter, ~ 0.99 for the
slow mode of hardmax ρ = 1, which is never called stationary).  Otherwise it
stops at ``max_iter`` (``"stationary"`` if the same test passes there,
else ``"max_iter"``).  With the published hardmax g_out (``hardmax_paper``,
erratum B1) the predicted error collapses: Ĉ halves every iteration while
the estimate freezes (the RIE is the identity once Δ < DELTA_MIN) at an
error of 0.55–0.75 (ρ = 0.5, α = 0.31, d = 50–100), and V → 0 ends in
non-finite messages.  The published rule called the frozen estimate
converged after ~10 iterations; here the run is ``"diverged"`` and keeps
that last finite estimate and its error.  Every result records the *residual swing*, max − min
over the last ``window`` iterations of the error (with a teacher) and of Ĉ,
and the last extrapolated remaining displacement relative to E_t.

Numerics
--------
Per iteration O(n T d² + d³) time and O(n T d + d²) memory:
:func:`_indices` is one (nT × d)(d × d) GEMM, :func:`_backproject` one
(d × nT)(nT × d) GEMM, the RIE one ``eigh`` of a d×d matrix and a batched
shrinkage of its eigenvalues.  No sensing matrix and no n×d×d×T×T tensor is
ever formed (the published code builds 8 n d² T² bytes per data tensor).
Where Δ^t falls below ``spectra.DELTA_MIN`` = 1e−10 the RIE is the identity
to that accuracy and R^t is taken as it is.  A non-finite or non-positive
variance V, a non-finite message or an estimate whose norm explodes stops
the iteration with status ``"diverged"`` (never clipped); reaching
``max_iter`` gives status ``"max_iter"``.  Either way ``converged`` is False
and the result says so.

Precision
---------
With the float type float32 (config ``backend.dtype.amp``) the two GEMMs
over the samples, :func:`_indices` and :func:`_backproject`, run in single
precision; their (n, T, T) and (d, d) results return to float64, and the
channel's g_out, the eigendecomposition of the RIE, the damping, the
stopping rule's steps and every error stay float64.  The eigendecomposition
stays float64 because its output is the iteration's state: a float32
``eigh`` of R would put a relative 1e−7 of noise into Ŝ^{t+1} at every
iteration, which the stopping rule (steps of relative size 1e−5 and
below) would read as motion.

The GEMMs' rounding leaves a floor under the step: beyond α_PR, where the
error falls to ~1e−11, a float32 run follows the float64 one step for step
(softmax T = 3, α = 0.09, d = 50: the same error 1.1e−11 at iteration 400)
until c_t stops falling at ~2e−14 = (1.3 ε₃₂)² Q0, ε₃₂ the float32 machine
epsilon; from there λ ≈ 1 and the extrapolated remaining displacement never
meets tol.  Unchecked, the run then went on until V underflowed into a
non-finite estimate (~1 600 iterations, status ``"diverged"``), while Ĉ,
still halving, fell below the step itself.  So a float32 run also stops,
``"converged"`` at its resolution, once the last ``window`` steps all lie
below (``RESOLUTION_EPS`` ε₃₂)² Q0 *and* above the predicted error Ĉ: a
step larger than the error AMP predicts for its estimate is not motion
towards the fixed point but the arithmetic's, and the estimate's error is
already at the float64 run's.  A slow mode still contracting has Ĉ far above
its steps and runs on as in float64.  In float64 the same floor (~1e−31) lies twenty
orders below the rule's targets and is not tested, so float64 runs stop as
they always did.

Generalisation errors (``run_on_dataset``)
-----------------------------------------
On the dataset's fresh test sequences, with ĥ the indices of the final Ŝ:
the *plug-in* error (1/n) Σ ‖y − g(ĥ)‖²_F (``model.plug_in_test_error``,
what the published code meant to compute) and the *Bayes-prediction* error
of ŷ = E_z g(ĥ + √Ĉ z), z ~ GOE_T, with Ĉ the final predicted error: in
h-scale the index of a new sequence is ĥ plus Gaussian noise of variance
‖S − Ŝ‖²_F/d ≈ Ĉ off the diagonal and 2Ĉ on it, which is AMP's z-scale
V = 2Ĉ (``generalisation`` module; softmax T <= 3 and hardmax T = 2, NaN
otherwise).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from aimrepro.backends import Backend, make_backend
from aimrepro.paper1 import spectra
from aimrepro.paper1.channels import OutputChannel, from_z_scale, make_channel, to_z_scale
from aimrepro.paper1.data import Dataset, training_arrays, write_npz
from aimrepro.model import indices, plug_in_test_error
from aimrepro.paper1.generalisation import SOFTMAX_TOKENS, held_out_errors

# The extended-range denoising error (quadrature inside [DELTA_MIN, DELTA_MAX],
# the asymptotic forms outside) is the state evolution's; AMP must use the same.
from aimrepro.paper1.state_evolution import mmse_any, se_curve

#: An estimate with ‖Ŝ‖²_F/d above this multiple of Q0 = E‖S‖²_F/d has diverged.
DIVERGENCE_NORM_FACTOR = 100.0

#: A float32 run is at its resolution once its steps c_t stay below (RESOLUTION_EPS ε₃₂)² Q0
#: (module docstring, "Precision"): ten times the measured floor's amplitude, 1.3 ε₃₂.
RESOLUTION_EPS = 13.0

#: Status values of :class:`AMPResult`; "stationary": not settled, but only jittering at max_iter (see StoppingRule).
STATUSES = ("converged", "stationary", "max_iter", "diverged")

#: Statuses whose final error is a measurement of AMP's fixed point (or of the small finite-d orbit around it).
USABLE_STATUSES = ("converged", "stationary")


@dataclass(frozen=True)
class StoppingRule:
    """When GAMP-RIE stops: relative to its predicted error, with the remaining motion extrapolated.

    See "Stopping" in the module notes for the criterion.

    Parameters
    ----------
    tol : remaining displacement² of Ŝ relative to the predicted error (√tol for Ĉ itself), in (0, 1)
    window : iterations of the contraction fit and of the recorded residual swing, >= 3
    patience : consecutive settled iterations before stopping, >= 1
    max_iter : iteration cap, >= 1
    error_floor : predicted errors below this count as this (beyond α_PR Ĉ → 0 with the step), > 0
    stationary_window : iterations over which an unsettled run is tested for stationarity, >= 3
    stationary_tol : largest swing (max − min) of Ĉ over the stationary window, as a fraction of Ĉ, in (0, 1)
    trend_r2 : largest share of that swing a straight line may explain (R² of a linear fit of Ĉ), in (0, 1)
    """

    tol: float = 1e-5
    window: int = 20
    patience: int = 5
    max_iter: int = 2000
    error_floor: float = 1e-5
    stationary_window: int = 100
    stationary_tol: float = 0.05
    trend_r2: float = 0.5

    def __post_init__(self):
        if not (isinstance(self.tol, (int, float, np.floating)) and 0.0 < self.tol < 1.0):
            raise ValueError(f"tol must lie in (0, 1), got {self.tol!r}")
        for name, minimum in (("window", 3), ("patience", 1), ("max_iter", 1), ("stationary_window", 3)):
            value = getattr(self, name)
            if not (isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value >= minimum):
                raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
        if not (isinstance(self.error_floor, (int, float, np.floating)) and math.isfinite(self.error_floor)
                and self.error_floor > 0):
            raise ValueError(f"error_floor must be a finite number > 0, got {self.error_floor!r}")
        for name in ("stationary_tol", "trend_r2"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float, np.floating)) and 0.0 < value < 1.0):
                raise ValueError(f"{name} must lie in (0, 1), got {value!r}")

    def to_dict(self) -> dict:
        return {"tol": float(self.tol), "window": int(self.window), "patience": int(self.patience),
                "max_iter": int(self.max_iter), "error_floor": float(self.error_floor),
                "stationary_window": int(self.stationary_window), "stationary_tol": float(self.stationary_tol),
                "trend_r2": float(self.trend_r2)}

    def stationary(self, changes: np.ndarray, C_hats: np.ndarray) -> tuple[float, float, float]:
        """Over the stationary window: (step contraction λ, swing of Ĉ / Ĉ, R² of a line through Ĉ); NaN if too short.

        Finite-d jitter neither contracts (λ ~ 1) nor trends (R² ~ 0.05); a
        slow mode contracts or drifts along a line (R² ~ 0.99), and the softmax
        Ĉ, deterministic, stops moving while Ŝ still contracts: neither is
        stationary.  O(stationary_window).
        """
        if C_hats.size < self.stationary_window:
            return math.nan, math.nan, math.nan
        x = np.arange(self.stationary_window) - (self.stationary_window - 1) / 2.0
        steps = np.log(np.maximum(changes[-self.stationary_window:], np.finfo(float).tiny))
        contraction = math.exp(0.5 * float(x @ (steps - steps.mean())) / float(x @ x))
        last = C_hats[-self.stationary_window:]
        centred = last - last.mean()
        spread = float(centred @ centred)
        swing = float(np.max(last) - np.min(last)) / max(float(C_hats[-1]), self.error_floor)
        r2 = float((x @ centred) ** 2 / (x @ x) / spread) if spread > 0.0 else 0.0
        return contraction, swing, r2

    def is_stationary(self, contraction: float, swing: float, r2: float) -> bool:
        """No contraction (the step shrinks by less than e over the window), a small swing, no trend."""
        return (contraction >= math.exp(-1.0 / self.stationary_window) and swing <= self.stationary_tol
                and r2 <= self.trend_r2)

    def remaining(self, changes: np.ndarray, C_hats: np.ndarray) -> tuple[float, float, float]:
        """(λ, remaining displacement²/E, remaining change of Ĉ/E) after the last of the iterations given.

        ``changes`` and ``C_hats`` are the traces up to now; NaN while fewer than
        ``window`` iterations exist, inf when the step does not contract (λ >= 1).
        An exactly zero step (the estimate no longer moves) has nothing left.
        O(window).
        """
        if changes.size < self.window:
            return math.nan, math.nan, math.nan
        last = changes[-self.window:]
        scale = max(float(C_hats[-1]), self.error_floor)
        step_C = abs(float(C_hats[-1] - C_hats[-2]))
        if last[-1] == 0.0:
            return 0.0, 0.0, step_C / scale
        # a zero step inside the window (Ŝ frozen for one iteration) counts as the smallest positive float
        y = np.log(np.maximum(last, np.finfo(float).tiny))
        x = np.arange(self.window) - (self.window - 1) / 2.0
        contraction = math.exp(0.5 * float(x @ (y - y.mean())) / float(x @ x))
        if contraction >= 1.0:
            return contraction, math.inf, math.inf
        factor = contraction / (1.0 - contraction)
        return contraction, float(last[-1]) * factor * factor / scale, step_C * factor / scale

    def at_resolution(self, changes: np.ndarray, C_hats: np.ndarray, resolution: float) -> bool:
        """Whether the last ``window`` steps are rounding: below ``resolution`` (> 0) and above Ĉ.

        ``changes`` and ``C_hats`` are the trace so far.  A step larger than Ĉ
        moves the estimate by more than AMP's own predicted error: no motion
        towards the fixed point does that.  A slow mode still contracting
        (hardmax ρ = 0.5, α = 2.71: steps 3e−12 with Ĉ = 0.013) and the
        published hardmax g_out's frozen estimate (steps falling to 1e−30
        while Ĉ halves) are not at the resolution; nor is any run when
        ``resolution`` is 0 (float64, :func:`_step_resolution`).
        """
        if resolution <= 0 or len(changes) < self.window:
            return False
        last, last_C = changes[-self.window:], C_hats[-self.window:]
        return bool(np.all(last <= resolution) and np.all(last >= last_C))

    def settled(self, remaining_step: float, remaining_C: float) -> bool:
        return remaining_step <= self.tol and remaining_C <= math.sqrt(self.tol)


class AMPDivergence(ArithmeticError):
    """Raised by :func:`_amp_step` when a message or variance is no longer a valid number."""


@dataclass(frozen=True)
class SECorrespondence:
    """AMP's scalars as state-evolution overlaps (``docs/paper1.md`` §5).

    V ↔ 2(Q0 − q), A ↔ q̂/2, Ĉ ↔ Q0 − q: the AMP iteration computes V and
    q̂ through this class, and the tests map SE fixed points to AMP's
    scalars through it.

    Attributes
    ----------
    mmse : Q0 − q, which AMP tracks as its predicted error Ĉ
    q_hat : the conjugate overlap q̂
    """

    mmse: float
    q_hat: float = math.nan

    @classmethod
    def from_amp(cls, *, C_hat: float, A: float = math.nan) -> SECorrespondence:
        return cls(mmse=float(C_hat), q_hat=2.0 * float(A))

    @property
    def C_hat(self) -> float:
        return self.mmse

    @property
    def V(self) -> float:
        """Variance of the z-scale indices given AMP's mean: 2(Q0 − q)."""
        return 2.0 * self.mmse

    @property
    def A(self) -> float:
        return 0.5 * self.q_hat

    @property
    def delta(self) -> float:
        """Noise variance of the effective observation R = S + √Δ Z: Δ = 1/q̂."""
        return 1.0 / self.q_hat


@dataclass(frozen=True)
class AMPData:
    """Training data as AMP uses them: float64 tokens (n, T, d) and labels (n, T, T)."""

    X: np.ndarray
    y: np.ndarray

    @property
    def n(self) -> int:
        return self.X.shape[0]

    @property
    def T(self) -> int:
        return self.X.shape[1]

    @property
    def d(self) -> int:
        return self.X.shape[2]

    @property
    def alpha(self) -> float:
        """Sample ratio α = n/d²."""
        return self.n / (self.d * self.d)


def amp_data(X, y) -> AMPData:
    """Check shapes and convert the tokens to float64 once (datasets store float32)."""
    return AMPData(*training_arrays(X, y))


@dataclass(frozen=True)
class AMPState:
    """Everything one iteration needs from the previous one.

    ``se`` holds Ĉ^t and q̂ = 2A^{t−1} (NaN before the first step); ``g`` is
    the damped ḡ^{t−1} (None before the first step: ḡ^{−1} = 0); ``V`` is the
    variance used to make this state; ``change`` is ‖Ŝ^t − Ŝ^{t−1}‖²_F/d.
    """

    S_hat: np.ndarray
    se: SECorrespondence
    g: np.ndarray | None = None
    V: float = math.nan
    iteration: int = 0
    change: float = math.nan


def initial_state(d: int, rho: float) -> AMPState:
    """Ŝ⁰ = √ρ I (the prior mean E S), Ĉ⁰ = Q0 − ρ = 1 (its error), no messages yet."""
    return AMPState(S_hat=math.sqrt(rho) * np.eye(d), se=SECorrespondence(mmse=1.0))


class _NumpyOps:
    """The GEMMs and the eigendecomposition of an iteration, in numpy (the reference).

    :class:`aimrepro.backends.torch_kernels.AMPKernels` has the same methods.
    With ``float_type`` float32 the two GEMMs over the samples run in single
    precision (the float64 tokens hold the dataset's float32 numbers, so
    their copy is exact); their results, the eigendecomposition and
    everything else of the iteration stay float64 (module notes, "Precision").
    """

    def __init__(self, X: np.ndarray, float_type=np.float64) -> None:
        self.X = X
        self.float_type = float_type
        self._X_compute = X.astype(float_type, copy=False)

    def indices(self, S: np.ndarray) -> np.ndarray:
        return indices(self._X_compute, S, dtype=self.float_type).astype(np.float64, copy=False)

    def backproject(self, G: np.ndarray) -> np.ndarray:
        X = self._X_compute
        n, T, d = X.shape
        GX = np.einsum("nab,nbd->nad", G.astype(self.float_type, copy=False), X)
        B = (X.reshape(n * T, d).T @ GX.reshape(n * T, d)).astype(np.float64, copy=False)
        B[np.diag_indices(d)] -= np.trace(G, axis1=1, axis2=2).sum()
        return B / math.sqrt(d)

    @staticmethod
    def eigh(M: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return np.linalg.eigh(M)


def _kernels(backend, X: np.ndarray):
    """The iteration's heavy operations on ``backend`` (numpy, or PyTorch: ``aimrepro.backends``)."""
    if backend.is_numpy:
        return _NumpyOps(X, backend.float_type)
    from aimrepro.backends import torch_kernels

    return torch_kernels.AMPKernels(backend, X)


def _indices(X: np.ndarray, S: np.ndarray, ops=None) -> np.ndarray:
    """⟨A_{μ,ab}, S⟩ for every sample and pair a ≤ b: (n, T, d), (d, d) → (n, m), z-scale.

    = τ_ab h_ab with h = (X S Xᵀ − Tr S·I)/√d: one (nT × d)(d × d) GEMM
    (``model.indices``), O(n T d²) time, O(n T d) memory.
    """
    return to_z_scale((ops or _NumpyOps(X)).indices(S))


def _backproject(X: np.ndarray, g: np.ndarray, ops=None) -> np.ndarray:
    """Σ_μ Σ_{a≤b} g_{μ,ab} A_{μ,ab}: (n, T, d), (n, m) → (d, d).

    With G̃_μ the symmetric T×T matrix G̃_aa = g_aa, G̃_ab = g_ab/√2
    (= ``from_z_scale``), the sum is (1/√d)[Xᵀ(G̃X) − (Σ_μ Tr G̃_μ) I] with X
    flattened to (nT × d): one (d × nT)(nT × d) GEMM, O(n T d² + n T² d)
    time, O(n T d) memory.
    """
    return (ops or _NumpyOps(X)).backproject(from_z_scale(g, X.shape[1]))


def _denoise(R: np.ndarray, delta: float, rho: float, ops=_NumpyOps, *,
             with_error: bool = True) -> tuple[np.ndarray, float]:
    """Ŝ = f_RIE(R; Δ, ρ) with eigenvalues below the lower edge shrunk as the edge, and Ĉ = mmse(Δ; ρ).

    O(d³) (one ``eigh``).  For Δ < DELTA_MIN the RIE is the identity to
    1e−10 and R is returned symmetrised.  See the module notes for the edge.
    ``with_error=False`` skips the quadrature of Ĉ (returned as NaN) for callers
    that have their own (``two_layer.amp``).
    """
    if delta < spectra.DELTA_MIN:
        S_hat = (R + R.T) / 2.0
    else:
        eigvals, eigvecs = ops.eigh((R + R.T) / 2.0)
        lower_edge = spectra.Spectrum(rho, delta).support()[0][0]
        shrunk = spectra.rie_shrink(np.maximum(eigvals, lower_edge), delta, rho)
        S_hat = (eigvecs * shrunk) @ eigvecs.T
    return S_hat, float(mmse_any(np.array([delta]), rho)[0]) if with_error else math.nan


def _amp_step(state: AMPState, data: AMPData, channel: OutputChannel, rho: float, *,
              damping: float = 0.5, ops=None) -> AMPState:
    """One GAMP-RIE iteration (steps 1–6 of the module notes); pure: returns a new state.

    Raises
    ------
    AMPDivergence
        If V is not a finite positive number, or a message, q̂ or the
        estimate is not finite (the caller records the run as diverged).
    """
    X, d = data.X, data.d
    ops = ops or _NumpyOps(X)
    V = state.se.V
    if not (math.isfinite(V) and V > 0.0):
        raise AMPDivergence(f"the variance V must be finite and > 0, got V={V} at iteration {state.iteration}")
    omega = _indices(X, state.S_hat, ops)
    if state.g is not None:
        omega -= V * state.g
    if not np.all(np.isfinite(omega)):
        raise AMPDivergence(f"non-finite mean omega at iteration {state.iteration}")

    # A collapsing variance (the published hardmax g_out drives V -> 0) overflows inside g_out;
    # the non-finite messages are detected below and the run is recorded as diverged.
    with np.errstate(over="ignore", invalid="ignore"):
        g = channel.g_out(data.y, omega, V)
        A = 2.0 * data.alpha * float(np.mean(channel.precision(data.y, omega, V)))
    first = state.g is None
    if not first:
        g = (1.0 - damping) * g + damping * state.g
        A = (1.0 - damping) * A + damping * state.se.A
    if not (np.all(np.isfinite(g)) and math.isfinite(A)):
        raise AMPDivergence(f"non-finite g_out at iteration {state.iteration} (V={V})")
    se = SECorrespondence.from_amp(C_hat=state.se.C_hat, A=A)
    if not (math.isfinite(se.q_hat) and se.q_hat > 0.0):
        raise AMPDivergence(f"q_hat = {se.q_hat} at iteration {state.iteration}: the labels carry no information")
    delta = se.delta
    if delta > spectra.DELTA_MAX:
        raise AMPDivergence(f"noise variance 1/q_hat = {delta:g} above {spectra.DELTA_MAX:g} "
                            f"at iteration {state.iteration}")

    R = state.S_hat + _backproject(X, g, ops) / (d * se.A)
    S_next, C_next = _denoise(R, delta, rho, ops)
    if not first:
        S_next = (1.0 - damping) * S_next + damping * state.S_hat
        C_next = (1.0 - damping) * C_next + damping * state.se.C_hat
    if not np.all(np.isfinite(S_next)):
        raise AMPDivergence(f"non-finite estimate at iteration {state.iteration}")
    change = float(np.sum((S_next - state.S_hat) ** 2) / d)
    return AMPState(S_hat=S_next, se=SECorrespondence(mmse=C_next, q_hat=se.q_hat), g=g, V=V,
                    iteration=state.iteration + 1, change=change)


TRACE_FIELDS = ("error", "change", "V", "q_hat", "C_hat", "contraction", "remaining")


@dataclass(frozen=True)
class AMPResult:
    """Outcome of :func:`gamp_rie`.

    Attributes
    ----------
    S_hat : (d, d) the last estimate
    error : ‖Ŝ − S*‖²_F/d of the last estimate (NaN without the teacher)
    iterations : number of completed iterations
    converged : change below tol before max_iter, and no divergence
    status : ``"converged"``, ``"max_iter"`` or ``"diverged"``
    message : why the iteration stopped, in words
    trace : per iteration t = 1..iterations, arrays ``error`` (of Ŝ^t),
        ``change`` (‖Ŝ^t − Ŝ^{t−1}‖²_F/d), ``V`` and ``q_hat`` (= 2A, used
        to make Ŝ^t), ``C_hat`` (the predicted error of Ŝ^t), and the
        stopping rule's ``contraction`` λ and ``remaining`` displacement²/E
        (NaN for the first window − 1 iterations)
    settings : damping and the :class:`StoppingRule`
    swing : max − min over the last ``window`` iterations of ``error`` and ``C_hat``
        (the residual swing of a finished run; NaN without a teacher or iterations)
    """

    S_hat: np.ndarray
    error: float
    iterations: int
    converged: bool
    status: str
    message: str
    trace: dict = field(repr=False)
    settings: dict = field(default_factory=dict)
    swing: dict = field(default_factory=dict)

    @property
    def C_hat(self) -> float:
        """The predicted error of the final estimate (NaN before any iteration)."""
        return float(self.trace["C_hat"][-1]) if self.iterations else math.nan

    def diagnostics(self) -> dict:
        """Scalars for a provenance sidecar."""
        last = (lambda name: float(self.trace[name][-1]) if self.iterations else math.nan)
        return {"converged": self.converged, "status": self.status, "message": self.message,
                "iterations": self.iterations, "residual": last("change"), "error": self.error,
                "C_hat": self.C_hat, "contraction": last("contraction"), "remaining": last("remaining"),
                "swing_error": self.swing.get("error", math.nan), "swing_C_hat": self.swing.get("C_hat", math.nan)}


def _check_settings(rho, damping):
    if not (math.isfinite(rho) and rho > 0):
        raise ValueError(f"rho must be a finite number > 0, got {rho}")
    if not (0.0 <= damping < 1.0):
        raise ValueError(f"damping must lie in [0, 1), got {damping}")


def _swing(values: np.ndarray, window: int) -> float:
    tail = values[-window:]
    return float(np.max(tail) - np.min(tail)) if tail.size and np.all(np.isfinite(tail)) else math.nan


def gamp_rie(X, y, channel: OutputChannel, rho: float, *, damping: float = 0.5,
             stopping: StoppingRule | None = None, S_true: np.ndarray | None = None,
             callback: Callable[[AMPState], None] | None = None, backend=None,
             **stopping_fields) -> AMPResult:
    """Run GAMP-RIE on data (X, y) from the recommended initialisation (module notes).

    Parameters
    ----------
    X : (n, T, d) tokens; y : (n, T, T) labels
    channel : output channel (``channels.make_channel``); its T must match X
    rho : width ratio of the prior S = W Wᵀ/√(r d)
    damping : θ in [0, 1) (0.5 in every published run; applied as in the module notes)
    stopping : the :class:`StoppingRule` (default ``StoppingRule()``); or give its fields
        (``tol``, ``window``, ``patience``, ``max_iter``, ``error_floor``) as keywords
    S_true : the teacher, to trace the estimation error (optional)
    callback : called with each new state (progress logging)
    backend : where the GEMMs and the eigendecomposition run (``aimrepro.backends.make_backend``:
        None or "numpy", the reference; "torch"); the channel's g_out stays in numpy

    Returns
    -------
    AMPResult
        Time O(iterations · (n T d² + d³)), memory O(n T d + d²).
    """
    rho = float(rho)
    _check_settings(rho, damping)
    if stopping is not None and stopping_fields:
        raise ValueError(f"give either stopping or its fields, not both (got {sorted(stopping_fields)})")
    unknown = set(stopping_fields) - set(StoppingRule.__dataclass_fields__)
    if unknown:
        raise ValueError(f"unknown stopping-rule fields {sorted(unknown)}; allowed: "
                         f"{sorted(StoppingRule.__dataclass_fields__)}")
    rule = StoppingRule(**stopping_fields) if stopping is None else stopping
    data = amp_data(X, y)
    if channel.T != data.T:
        raise ValueError(f"the channel is for T={channel.T} but the data have T={data.T}")
    if S_true is not None and np.shape(S_true) != (data.d, data.d):
        raise ValueError(f"S_true must be ({data.d}, {data.d}), got {np.shape(S_true)}")
    Q0 = 1.0 + rho
    backend = make_backend(backend)
    ops = _kernels(backend, data.X)
    state = initial_state(data.d, rho)
    trace = {name: np.full(rule.max_iter, math.nan) for name in TRACE_FIELDS}
    status, message = "max_iter", f"not settled to tol={rule.tol:g} within {rule.max_iter} iterations"
    settled_run = stationary_run = 0
    resolution = _step_resolution(backend, Q0)
    for t in range(rule.max_iter):
        try:
            state = _amp_step(state, data, channel, rho, damping=damping, ops=ops)
        except AMPDivergence as err:
            status, message = "diverged", str(err)
            break
        error = math.nan if S_true is None else float(np.sum((state.S_hat - S_true) ** 2) / data.d)
        for name, value in zip(("error", "change", "V", "q_hat", "C_hat"),
                               (error, state.change, state.V, state.se.q_hat, state.se.C_hat)):
            trace[name][t] = value
        contraction, remaining, remaining_C = rule.remaining(trace["change"][:t + 1], trace["C_hat"][:t + 1])
        trace["contraction"][t], trace["remaining"][t] = contraction, remaining
        if callback is not None:
            callback(state)
        if np.sum(state.S_hat ** 2) / data.d > DIVERGENCE_NORM_FACTOR * Q0:
            status, message = "diverged", (f"|S_hat|_F^2/d above {DIVERGENCE_NORM_FACTOR:g} Q0 "
                                           f"at iteration {state.iteration}")
            break
        settled_run = settled_run + 1 if rule.settled(remaining, remaining_C) else 0
        if rule.at_resolution(trace["change"][:t + 1], trace["C_hat"][:t + 1], resolution):
            status, message = "converged", (f"at the {backend.dtype} resolution at iteration {state.iteration}: "
                                            f"the last {rule.window} steps below {resolution:.2g} and above "
                                            f"the predicted error (|S_hat - S_prev|_F^2/d), motion of rounding")
            break
        if settled_run >= rule.patience:
            status, message = "converged", (f"settled for {rule.patience} iterations at iteration {state.iteration}: "
                                            f"contraction {contraction:.4f}, remaining displacement^2 "
                                            f"{remaining:.3g} of the predicted error (tol={rule.tol:g})")
            break
        if state.iteration >= 2 * rule.stationary_window:
            lam, swing_C, r2 = rule.stationary(trace["change"][:t + 1], trace["C_hat"][:t + 1])
            stationary_run = stationary_run + 1 if rule.is_stationary(lam, swing_C, r2) else 0
            if stationary_run >= rule.patience:
                status, message = "stationary", (f"not settling but stationary at iteration {state.iteration}: "
                                                 f"C_hat swings by {swing_C:.2g} of itself over the last "
                                                 f"{rule.stationary_window} iterations without a trend (R^2 {r2:.2f})")
                break
    trace = {name: values[:state.iteration] for name, values in trace.items()}
    final_error = math.nan if S_true is None else float(np.sum((state.S_hat - S_true) ** 2) / data.d)
    swing = {name: _swing(trace[name], rule.window) for name in ("error", "C_hat")}
    if status == "max_iter":
        lam, swing_C, r2 = rule.stationary(trace["change"], trace["C_hat"])
        if rule.is_stationary(lam, swing_C, r2):
            status, message = "stationary", (f"not settled within {rule.max_iter} iterations, but C_hat swings by "
                                             f"{swing_C:.2g} of itself over the last {rule.stationary_window} "
                                             f"without a trend (R^2 {r2:.2f})")
    return AMPResult(
        S_hat=state.S_hat, error=final_error, iterations=state.iteration, converged=status == "converged",
        status=status, message=message, trace=trace,
        settings={"damping": damping, **rule.to_dict(), "init": "prior_mean",
                  "backend": backend.name, "dtype": backend.dtype}, swing=swing)


def _step_resolution(backend: Backend, Q0: float) -> float:
    """The step c_t below which a run of ``backend``'s float type only moves by rounding; 0 in float64.

    (``RESOLUTION_EPS`` ε)² Q0 with ε the float32 machine epsilon (module
    docstring, "Precision"); float64 runs are never resolution-limited at
    the rule's tolerances, and are not tested, so they stop as before.
    """
    if backend.float_type == np.float64:
        return 0.0
    return float((RESOLUTION_EPS * np.finfo(backend.float_type).eps) ** 2 * Q0)


# ---------------------------------------------------------------------------
# one run on a stored dataset (what the workflow and the CLI call)


#: Which data link each AMP channel reads: ``hardmax_paper`` is the published
#: *derivative* run on data of the correct hardmax model (see ``run_on_dataset``).
CHANNEL_LINK = {"softmax": "softmax", "hardmax": "hardmax", "hardmax_paper": "hardmax"}


@dataclass(frozen=True)
class AMPRun:
    """An AMP run on a dataset: the result and its two generalisation errors on the dataset's test set.

    ``plugin_generalisation_error``: (1/n) Σ ‖y − g(ĥ)‖²_F; ``bayes_generalisation_error``:
    the same with the posterior-mean prediction E_z g(ĥ + √Ĉ z) (module notes; NaN where
    the ``generalisation`` module has no rule, softmax T >= 4).
    """

    channel: str
    beta: float | None
    result: AMPResult
    plugin_generalisation_error: float
    bayes_generalisation_error: float = math.nan

    @property
    def generalisation_error(self) -> float:
        """The plug-in error, under its earlier name (kept for readers of older runs)."""
        return self.plugin_generalisation_error

    def summary(self) -> dict:
        r = self.result
        return {"error": r.error, "generalisation_error": self.plugin_generalisation_error,
                "plugin_generalisation_error": self.plugin_generalisation_error,
                "bayes_generalisation_error": self.bayes_generalisation_error, "C_hat": r.C_hat,
                "swing_error": r.swing.get("error", math.nan), "iterations": r.iterations,
                "converged": r.converged, "status": r.status}


def run_on_dataset(dataset: Dataset, channel_name: str, *, damping: float = 0.5,
                   stopping: StoppingRule | None = None, callback: Callable[[AMPState], None] | None = None,
                   backend=None, **stopping_fields) -> AMPRun:
    """GAMP-RIE with channel ``channel_name`` on a dataset, traced against its teacher.

    ``hardmax_paper`` runs the published g_out (erratum B1) on data of the
    *correct* hardmax model, i.e. the labels of the SE lines; the published
    AMP dots were made on τ-scaled labels (erratum B2), which this project
    does not reproduce.  The generalisation errors (module notes) are measured
    on the dataset's fresh test set with the dataset's link (hardmax for both
    hardmax channels) and the final predicted error Ĉ as posterior variance.
    ``stopping`` or its fields as keywords: see :func:`gamp_rie`.
    """
    if channel_name not in CHANNEL_LINK:
        raise ValueError(f"channel must be one of {sorted(CHANNEL_LINK)}, got {channel_name!r}")
    spec = dataset.spec
    if CHANNEL_LINK[channel_name] != spec.link:
        raise ValueError(f"channel {channel_name!r} needs {CHANNEL_LINK[channel_name]} data, got {spec.link!r}")
    channel = make_channel(channel_name, T=spec.T, beta=spec.beta)
    result = gamp_rie(dataset.X, dataset.y, channel, spec.rho, damping=damping, stopping=stopping,
                      S_true=dataset.S, callback=callback, backend=backend, **stopping_fields)
    beta = 1.0 if spec.beta is None else spec.beta
    if (spec.link == "softmax" and spec.T not in SOFTMAX_TOKENS) or not math.isfinite(result.C_hat):
        plugin = plug_in_test_error(dataset.X_test, dataset.y_test, result.S_hat, spec.link, beta=beta)
        return AMPRun(channel_name, spec.beta, result, plugin, math.nan)
    errors = held_out_errors(make_channel(spec.link, T=spec.T, beta=spec.beta), dataset.X_test, dataset.y_test,
                             result.S_hat, max(result.C_hat, 0.0))
    return AMPRun(channel_name, spec.beta, result, errors.plugin, errors.bayes)


#: Scalars :func:`save_run` writes and :func:`load_run_summary` reads (NaN if absent from an older run).
SUMMARY_FLOATS = ("error", "generalisation_error", "plugin_generalisation_error", "bayes_generalisation_error",
                  "C_hat", "swing_error")


def save_run(path, run: AMPRun) -> None:
    """Write an AMP run as ``.npz``: summary scalars, the trace arrays (``trace_*``) and Ŝ (byte-reproducible)."""
    r = run.result
    summary = run.summary()
    write_npz(path, {**{name: np.float64(summary[name]) for name in SUMMARY_FLOATS},
                     "iterations": np.int64(r.iterations), "converged": np.bool_(r.converged),
                     "status": np.array(r.status), "message": np.array(r.message), "S_hat": r.S_hat,
                     **{f"trace_{k}": v for k, v in r.trace.items()}})


def load_run_summary(path) -> dict:
    """The scalars of a run written by :func:`save_run` (:data:`SUMMARY_FLOATS`, iterations, converged, status)."""
    with np.load(path, allow_pickle=False) as archive:
        floats = {name: float(archive[name]) if name in archive.files else math.nan for name in SUMMARY_FLOATS}
        if math.isnan(floats["plugin_generalisation_error"]):  # a run written before the rename
            floats["plugin_generalisation_error"] = floats["generalisation_error"]
        return {**floats, "iterations": int(archive["iterations"]), "converged": bool(archive["converged"]),
                "status": str(archive["status"])}


# ---------------------------------------------------------------------------
# many runs at one (channel, T, rho, d): mean and spread per alpha


def summary_table(channel_name: str, T: int, rho: float, alphas, runs, *, beta: float | None = None) -> dict:
    """Mean ± std over seeds per α, with the unconverged runs counted apart, and the SE predictions.

    Parameters
    ----------
    channel_name, T, rho, beta : the AMP channel the runs used
    alphas : (k,) sample ratios
    runs : k lists of run summaries (:func:`load_run_summary`), one list per α

    Returns
    -------
    dict of equal-length columns: ``alpha``, ``n_runs``, ``n_converged``,
    ``n_stationary`` (jittering at max_iter, :class:`StoppingRule`), ``n_diverged``,
    ``error_mean``/``error_std``/``error_sem`` over the *usable* runs
    (:data:`USABLE_STATUSES`: converged or stationary; "converged runs" below
    means these) (NaN if none; std with ddof = 1, 0 for a single run;
    sem = std/√n, the error of the mean), ``unconverged_mean`` (mean final
    error of the runs that stopped at max_iter, NaN if none or all diverged),
    ``error_max`` (largest finite final error of all runs), ``C_hat_mean``
    (AMP's own predicted error, converged runs), ``swing_max`` (largest
    residual swing of the error over the last window, converged runs),
    ``gen_mean``/``gen_std`` (the *plug-in* generalisation error, converged
    runs), ``gen_bayes_mean``/``gen_bayes_std`` (the Bayes-prediction one),
    ``iterations_mean``, ``iterations_max``, ``se_mmse`` (the state-evolution
    error of the same channel; for ``hardmax_paper`` the published
    formula's), and ``se_gen_bayes``/``se_gen_plugin``
    (``generalisation.generalisation_curve``; NaN for ``hardmax_paper``,
    whose overlap is not Bayes-optimal, and for softmax T >= 4).
    Unconverged runs are never averaged with converged ones.
    """
    from aimrepro.paper1.generalisation import generalisation_curve

    alphas = np.asarray(alphas, dtype=float)
    if len(runs) != alphas.size:
        raise ValueError(f"runs must hold one list per alpha: {len(runs)} lists for {alphas.size} alphas")
    names = ("n_runs", "n_converged", "n_stationary", "n_diverged", "error_mean", "error_std", "error_sem", "unconverged_mean",
             "error_max", "C_hat_mean", "swing_max", "gen_mean", "gen_std", "gen_bayes_mean", "gen_bayes_std",
             "iterations_mean", "iterations_max")
    columns = {name: [] for name in names}

    def mean_std(values):
        values = np.asarray(values, dtype=float)
        if values.size == 0:
            return math.nan, math.nan
        return float(values.mean()), float(values.std(ddof=1)) if values.size > 1 else 0.0

    for per_alpha in runs:
        ok = [r for r in per_alpha if r["status"] in USABLE_STATUSES]
        stalled = [r for r in per_alpha if r["status"] == "max_iter" and math.isfinite(r["error"])]
        columns["n_runs"].append(len(per_alpha))
        columns["n_converged"].append(sum(r["status"] == "converged" for r in per_alpha))
        columns["n_stationary"].append(sum(r["status"] == "stationary" for r in per_alpha))
        columns["n_diverged"].append(sum(r["status"] == "diverged" for r in per_alpha))
        mean, std = mean_std([r["error"] for r in ok])
        columns["error_mean"].append(mean)
        columns["error_std"].append(std)
        columns["error_sem"].append(std / math.sqrt(len(ok)) if ok else math.nan)
        columns["unconverged_mean"].append(mean_std([r["error"] for r in stalled])[0])
        finite = [r["error"] for r in per_alpha if math.isfinite(r["error"])]
        columns["error_max"].append(max(finite) if finite else math.nan)
        columns["C_hat_mean"].append(mean_std([r.get("C_hat", math.nan) for r in ok])[0])
        swings = [r.get("swing_error", math.nan) for r in ok]
        columns["swing_max"].append(max(swings) if swings and np.all(np.isfinite(swings)) else math.nan)
        for prefix, key in (("gen", "plugin_generalisation_error"), ("gen_bayes", "bayes_generalisation_error")):
            mean, std = mean_std([r.get(key, r.get("generalisation_error", math.nan)) if key.startswith("plugin")
                                  else r.get(key, math.nan) for r in ok])
            columns[f"{prefix}_mean"].append(mean)
            columns[f"{prefix}_std"].append(std)
        columns["iterations_mean"].append(mean_std([r["iterations"] for r in per_alpha])[0])
        columns["iterations_max"].append(max((r["iterations"] for r in per_alpha), default=0))
    channel = make_channel(channel_name, T=T, beta=beta)
    se = np.array([p.mmse for p in se_curve(channel, alphas, rho)]) if alphas.size else np.zeros(0)
    table = {"alpha": alphas}
    for name, values in columns.items():
        integer = name.startswith("n_") or name == "iterations_max"
        table[name] = np.asarray(values, dtype=np.int64 if integer else float)
    table["se_mmse"] = se
    has_theory = channel_name == "hardmax" or (channel_name == "softmax" and T in SOFTMAX_TOKENS)
    if has_theory and alphas.size:
        curve = generalisation_curve(channel, alphas, rho)
        table["se_gen_bayes"], table["se_gen_plugin"] = curve.bayes, curve.plugin
    else:
        table["se_gen_bayes"] = table["se_gen_plugin"] = np.full(alphas.shape, math.nan)
    return table
