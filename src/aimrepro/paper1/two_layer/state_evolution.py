"""State evolution of two attention layers: the replica-symmetric fixed point with a 2×2 overlap (``docs/paper1.md`` §14.4–13.6).

Order parameters: the MMSE matrix V = Q0 − Q of (S₁, S₂) (V_ℓℓ = MMSE_ℓ, V₁₂ the
cross error) and the conjugate Q̂.  The fixed point (§14.4) is

    Q̂ = 2α V^{−1/2} F(V) V^{−1/2}       (output channel: F the whitened Fisher matrix, ``fisher``),
    V = M(Q̂):  V₁₁ = m₁ + Q̂₁₂² s₁ m₂,  V₂₂ = m₂ + Q̂₁₂² s₂ m₁,  V₁₂ = −Q̂₁₂ m₁ m₂   (prior channel),

with m_ℓ = mmse(1/Q̂_ℓℓ; ρ) the one-layer RIE error and s_ℓ the second moment of
its posterior covariance (``prior``): the Bayes-optimal error of the *pair*
(S₁, S₂) under the noise precision Q̂, exact to second order in the cross
precision (§14.4).  The neglected terms are O(κ⁴) relative, κ² = Q̂₁₂²/(Q̂₁₁Q̂₂₂)
(reported per point as ``kappa2``: below 1e−2 at every fixed point computed here).
The cross term enters through corr = V₁₂/√(V₁₁V₂₂) in F (the table's slope) and in V⁻¹.

Solver (per α): the map (log V₁₁, log V₂₂, corr) ↦ (its image) is iterated from
the uninformative point V = I, corr = 0 (MMSE₁ = MMSE₂ = 1), which selects the
branch the published one-layer curves follow, then the fixed point is polished
by a root finder (``scipy.optimize.root``, hybrid Powell) from the last iterate;
near the threshold the iteration slows down critically, the root does not.
Perfect recovery (V → 0 along a ray, §14.5) is recognised when the iterates
fall below :data:`V_PERFECT` with a contraction per step.  Each point reports
its iterations, residual and a converged flag.

Errors: a curve is solved once per replicate table of ``fisher.FisherTable``;
the spread of the replicates over √R is the standard error of each MMSE
(the Monte-Carlo noise of the table carried through the fixed point).

Limits (§14.5), closed forms used by tests and claims:

* threshold: zero error is stable from α = D(ρ)/2 on (T = 2), twice the one-layer
  D(ρ)/4, for every skip c (F₁⁰ + F₂⁰ = 2);
* c → ∞: MMSE₂(α) → m(α) and MMSE₁(α) → 1 for α ≤ D/4, m(α − D/4) beyond, with
  m the one-layer softmax MMSE at T = 2 (:func:`large_skip_limit`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from aimrepro.paper1 import thresholds
from aimrepro.paper1.channels import Softmax
from aimrepro.paper1.state_evolution import _check_alpha, _check_rho, se_curve as one_layer_se_curve
from aimrepro.paper1.two_layer import prior
from aimrepro.paper1.two_layer.fisher import FisherInterpolant, FisherTable, whitening

__all__ = ["CURVE_COLUMNS", "TwoLayerPoint", "conjugate", "large_skip_limit", "one_layer_threshold", "threshold_estimate",
           "se_map", "solve_point", "two_layer_curve", "two_layer_threshold", "V_PERFECT"]

#: Iterates with both MMSEs below this, still contracting, are perfect recovery (MMSE = 0).
V_PERFECT = 1e-12
#: Iterations from the uninformative point before the first root polish, and at most in all.
POLISH_AFTER = 400
MAX_ITERATIONS = 5000
#: Geometric decay below V_GEOMETRIC (log V falling by at least DECAY_KEEP of the previous window's
#: decrement over DECAY_WINDOW steps) is perfect recovery too: it resolves α just above the threshold,
#: where V falls by a factor α_PR/α per step and would need ~10⁴ steps to reach V_PERFECT.
V_GEOMETRIC = 1e-5
DECAY_WINDOW = 100
DECAY_KEEP = 0.9
#: log V below which the map is not evaluated (far below V_PERFECT).
_LOG_V_FLOOR = -300.0
#: Fixed points whose largest |map(x) − x| (in log V and corr) is below this are converged.
TOLERANCE = 1e-9


def one_layer_threshold(rho: float) -> float:
    """Perfect recovery of one softmax layer at T = 2: α = D(ρ)/4 (``docs/paper1.md`` §4)."""
    return thresholds.alpha_perfect_recovery(rho, 2)


def two_layer_threshold(rho: float) -> float:
    """Perfect recovery of two layers at T = 2: α = D(ρ)/2, two numbers per sample for both layers (§14.5)."""
    return 2.0 * one_layer_threshold(rho)


def large_skip_limit(alphas, rho: float) -> tuple[np.ndarray, np.ndarray]:
    """(MMSE₁, MMSE₂) as c → ∞ (§14.5): layer 2 is the one-layer softmax; layer 1 starts at D/4 and
    learns with the measurements layer 2 no longer needs, m(α − D/4)."""
    alphas = _check_alpha(np.atleast_1d(alphas))
    rho = _check_rho(rho)
    channel = Softmax(T=2)
    start = one_layer_threshold(rho)
    second = np.array([p.mmse for p in one_layer_se_curve(channel, alphas, rho)])
    first = np.ones_like(alphas)
    later = alphas > start
    if np.any(later):
        first[later] = [p.mmse for p in one_layer_se_curve(channel, alphas[later] - start, rho)]
    return first, second


# ---------------------------------------------------------------------------
# the two channels of the fixed point


def conjugate(V: np.ndarray, F: np.ndarray, alpha: float) -> np.ndarray:
    """Q̂ = 2α V⁻¹ 𝒩 V⁻¹ = 2α V^{−1/2} F V^{−1/2}, F = (F₁₁, F₂₂, F₁₂) whitened (``fisher``)."""
    W = whitening(V)
    return 2.0 * alpha * W @ np.array([[F[0], F[2]], [F[2], F[1]]]) @ W


def se_map(x: np.ndarray, alpha: float, rho: float, interpolant: FisherInterpolant, *,
           cross: bool = True) -> tuple[np.ndarray, dict]:
    """One step of the SE in x = (log V₁₁, log V₂₂, corr); ``cross=False`` drops the cross term (corr ≡ 0).

    Returns the image and the quantities of the step (F, Q̂, whether F lay outside the table).
    """
    # a root finder may probe far outside the physical range 0 < V <= 1, |corr| < 1: clip, so that the
    # map stays defined there (its value is then no fixed point and the search moves back)
    V1, V2 = (math.exp(min(max(float(v), _LOG_V_FLOOR), 1.0)) for v in x[:2])
    corr = float(np.clip(x[2], -0.9, 0.9)) if cross else 0.0
    off = corr * math.sqrt(V1 * V2)
    V = np.array([[V1, off], [off, V2]])
    F, outside = interpolant(V1, V2, corr)
    if not cross:
        F = np.array([F[0], F[1], 0.0])
    q_hat = conjugate(V, F, alpha)
    if not cross:
        q_hat[0, 1] = q_hat[1, 0] = 0.0
    M = prior.error_matrix(q_hat, rho)
    # V₁₂/√(V₁₁V₂₂) = −Q̂₁₂ √(V₁₁V₂₂): no division by errors that may underflow
    new = np.array([max(math.log(M[0, 0]), _LOG_V_FLOOR) if M[0, 0] > 0 else _LOG_V_FLOOR,
                    max(math.log(M[1, 1]), _LOG_V_FLOOR) if M[1, 1] > 0 else _LOG_V_FLOOR,
                    -q_hat[0, 1] * math.sqrt(M[0, 0] * M[1, 1])])
    return new, {"F": F, "q_hat": q_hat, "outside": outside, "corr": corr}


@dataclass(frozen=True)
class TwoLayerPoint:
    """One SE fixed point of two layers (module notes).

    ``mmse1``/``mmse2``: V₁₁, V₂₂ (0 for perfect recovery); ``corr``: V₁₂/√(V₁₁V₂₂);
    ``q_hat``: (Q̂₁₁, Q̂₂₂, Q̂₁₂); ``F``: (F₁₁, F₂₂, F₁₂) at the point; ``kappa2``:
    Q̂₁₂²/(Q̂₁₁Q̂₂₂), the expansion parameter of the prior channel; ``outside``:
    F came from the V → 0 extrapolation; ``iterations``: map evaluations; ``residual``:
    max |map(x) − x|.
    """

    alpha: float
    mmse1: float
    mmse2: float
    corr: float
    q_hat: tuple
    F: tuple
    kappa2: float
    perfect: bool
    outside: bool
    converged: bool
    iterations: int
    residual: float


def _polish(x, alpha, rho, interpolant, cross):
    """Root of map(x) − x from x (hybrid Powell; in (log V₁₁, log V₂₂) only without the cross term)."""
    from scipy.optimize import root

    size = 3 if cross else 2

    def gap(y):
        full = np.concatenate([y, np.zeros(3 - size)])
        return (se_map(full, alpha, rho, interpolant, cross=cross)[0] - full)[:size]

    solution = root(gap, x[:size], method="hybr", options={"xtol": 1e-13, "maxfev": 400})
    y = solution.x if np.all(np.isfinite(solution.x)) else x[:size]
    return np.concatenate([y, np.zeros(3 - size)]), int(solution.nfev)


def _iterate(x, alpha, rho, interpolant, cross, steps, tol):
    """Plain iteration of the map: (x, steps taken, perfect recovery reached, last step size).

    Perfect recovery: both MMSEs below :data:`V_PERFECT` and falling, or below
    :data:`V_GEOMETRIC` and falling geometrically (the mean decrement of log V over
    the last :data:`DECAY_WINDOW` steps at least :data:`DECAY_KEEP` of the window
    before: a positive fixed point would be approached with vanishing decrements).
    """
    step = math.inf
    history = []
    for taken in range(1, steps + 1):
        new, _ = se_map(x, alpha, rho, interpolant, cross=cross)
        step = float(np.max(np.abs(new - x)))
        falling = new[0] < x[0] and new[1] < x[1]
        if max(new[0], new[1]) < math.log(V_PERFECT) and falling:
            return new, taken, True, step
        history.append(max(new[0], new[1]))
        if len(history) > 2 * DECAY_WINDOW and history[-1] < math.log(V_GEOMETRIC):
            late = history[-1] - history[-DECAY_WINDOW - 1]
            early = history[-DECAY_WINDOW - 1] - history[-2 * DECAY_WINDOW - 1]
            if early < 0.0 and late < DECAY_KEEP * early:
                return new, taken, True, step
        x = new
        if step < tol:
            return x, taken, False, step
    return x, steps, False, step


def _kappa2(q_hat):
    """Q̂₁₂²/(Q̂₁₁Q̂₂₂), 0 when a layer has no information (then nothing couples)."""
    product = q_hat[0, 0] * q_hat[1, 1]
    return float(q_hat[0, 1] ** 2 / product) if product > 0 else 0.0


def _perfect_point(alpha, iterations):
    return TwoLayerPoint(alpha, 0.0, 0.0, math.nan, (math.inf, math.inf, math.nan), (math.nan,) * 3, 0.0,
                         True, True, True, iterations, 0.0)


def solve_point(interpolant: FisherInterpolant, alpha: float, rho: float, *, cross: bool = True,
                tol: float = TOLERANCE) -> TwoLayerPoint:
    """The fixed point reached from the uninformative point at one α (module notes).

    Up to :data:`POLISH_AFTER` iterations from V = I, corr = 0, then a root
    polish; if the root finder does not converge to a positive fixed point,
    the iteration continues up to :data:`MAX_ITERATIONS` (perfect recovery is
    then recognised, or the point is reported unconverged) and is polished again.
    """
    alpha = float(_check_alpha(np.array([alpha]))[0])
    rho = _check_rho(rho)
    x, iterations, perfect, _ = _iterate(np.zeros(3), alpha, rho, interpolant, cross, POLISH_AFTER, 1e-7)
    if perfect:
        return _perfect_point(alpha, iterations)
    residual = math.inf
    for attempt in range(2):
        y, evaluations = _polish(x, alpha, rho, interpolant, cross)
        iterations += evaluations
        image, info = se_map(y, alpha, rho, interpolant, cross=cross)
        residual = float(np.max(np.abs(image - y)))
        if residual < tol and max(y[0], y[1]) > math.log(V_PERFECT):
            x = y
            break
        if attempt == 0:
            x, taken, perfect, _ = _iterate(x, alpha, rho, interpolant, cross, MAX_ITERATIONS - POLISH_AFTER, 1e-12)
            iterations += taken
            if perfect:
                return _perfect_point(alpha, iterations)
    image, info = se_map(x, alpha, rho, interpolant, cross=cross)
    residual = float(np.max(np.abs(image - x)))
    V1, V2 = math.exp(x[0]), math.exp(x[1])
    q_hat = info["q_hat"]
    return TwoLayerPoint(alpha, V1, V2, float(x[2]) if cross else 0.0,
                         (float(q_hat[0, 0]), float(q_hat[1, 1]), float(q_hat[0, 1])),
                         tuple(float(f) for f in info["F"]), _kappa2(q_hat), False,
                         bool(info["outside"]), residual < tol, iterations, residual)


#: Columns of :func:`two_layer_curve`'s table, in order.
CURVE_COLUMNS = ("alpha", "mmse1", "mmse2", "mmse1_stderr", "mmse2_stderr", "corr", "q_hat11", "q_hat22", "q_hat12",
                 "F11", "F22", "F12", "kappa2", "perfect", "outside", "converged", "iterations", "residual",
                 "mmse1_diagonal", "mmse2_diagonal")


def two_layer_curve(table: FisherTable, alphas, *, tol: float = TOLERANCE) -> dict:
    """SE curve of two layers on a grid of α, per replicate of the table, with standard errors.

    Columns (:data:`CURVE_COLUMNS`): the MMSEs are means over the replicate
    tables, ``*_stderr`` their spread over √R; the cross quantities, Q̂, F and
    diagnostics are those of the mean table; ``converged`` requires every
    replicate to converge; ``iterations`` and ``residual`` are the worst over
    replicates; ``mmse*_diagonal`` solve the same SE with the cross term dropped
    (the evidence of §14.4).  Time O(R · len(alphas)) fixed points (~0.1–1 s each).
    """
    alphas = _check_alpha(np.atleast_1d(np.asarray(alphas, dtype=float)))
    rho = table.rho
    columns = {name: [] for name in CURVE_COLUMNS}
    mean_interpolant = table.interpolant()
    replicate_interpolants = [table.interpolant(k) for k in range(table.replicates)]
    for alpha in alphas:
        central = solve_point(mean_interpolant, alpha, rho, tol=tol)
        replicas = [solve_point(f, alpha, rho, tol=tol) for f in replicate_interpolants]
        diagonal = solve_point(mean_interpolant, alpha, rho, cross=False, tol=tol)
        R = len(replicas)
        for ell, name in ((1, "mmse1"), (2, "mmse2")):
            values = np.array([getattr(p, name) for p in replicas])
            columns[name].append(float(values.mean()))
            columns[f"{name}_stderr"].append(float(values.std(ddof=1) / math.sqrt(R)))
            columns[f"{name}_diagonal"].append(getattr(diagonal, name))
        columns["alpha"].append(float(alpha))
        columns["corr"].append(central.corr)
        for k, name in enumerate(("q_hat11", "q_hat22", "q_hat12")):
            columns[name].append(central.q_hat[k])
        for k, name in enumerate(("F11", "F22", "F12")):
            columns[name].append(central.F[k])
        columns["kappa2"].append(central.kappa2)
        columns["perfect"].append(all(p.perfect for p in replicas))
        columns["outside"].append(central.outside)
        columns["converged"].append(central.converged and all(p.converged for p in replicas) and diagonal.converged)
        columns["iterations"].append(max([central.iterations] + [p.iterations for p in replicas]))
        columns["residual"].append(max([central.residual] + [p.residual for p in replicas]))
    out = {}
    for name, values in columns.items():
        if name in ("perfect", "outside", "converged"):
            out[name] = np.array(values, dtype=bool)
        elif name == "iterations":
            out[name] = np.array(values, dtype=np.int64)
        else:
            out[name] = np.array(values, dtype=float)
    return out


def threshold_estimate(rho: float, skip: float, *, v: float = 1e-4, log2_samples: int = 11, replicates: int = 4,
                       seed: int = 0, rule=None) -> dict:
    """The perfect-recovery threshold measured on the fibre integral itself (§14.5).

    Near V = 0 the fixed-point map is homogeneous: V_ℓ ↦ D V_ℓ/(2α F_ℓ(r)), r =
    V₁₁/V₂₂, so zero error becomes stable where both layers contract at the
    ratio r* with F₁(r*) = F₂(r*), at α_c = D(ρ)/(F₁ + F₂).  r* is found on the
    tangent limit (where F₁ + F₂ = 2 holds by construction); F at V = v·(√r*, 1/√r*)
    is then estimated with the full fibre quadrature (``fisher.fisher_estimate``),
    which does not assume the tangent plane: α_c = D/2 is then a measurement.

    Returns a dict: ``alpha_c``, ``alpha_c_stderr`` (delta method on the replicate
    spread), ``r_star``, ``F11``, ``F22``, ``F12``, ``v``, ``expected`` (D/2).
    Time: one Fisher estimate (replicates · 2^k fibre integrals) and ~50 tangent evaluations.
    """
    from scipy.optimize import brentq

    from aimrepro.paper1.spectra import degrees_of_freedom
    from aimrepro.paper1.two_layer.fibre import FibreRule
    from aimrepro.paper1.two_layer.fisher import (LIMIT_LOG_R, fisher_estimate, layer_covariance,
                                                  outer_normals, tangent_limit)

    rho = _check_rho(rho)
    if not (isinstance(v, (int, float)) and 0 < v <= 1e-2):
        raise ValueError(f"v must lie in (0, 0.01], got {v!r}")
    normals = outer_normals(14, seed, 0)

    def balance(log_r):
        F = tangent_limit([log_r], rho, skip, normals)[0]
        return F[0] - F[1]

    log_r_star = brentq(balance, -LIMIT_LOG_R, LIMIT_LOG_R, xtol=1e-6)
    r_star = math.exp(log_r_star)
    V = layer_covariance(v * math.sqrt(r_star), v / math.sqrt(r_star))
    estimate = fisher_estimate(V, rho, skip, log2_samples=log2_samples, replicates=replicates, seed=seed,
                               rule=FibreRule() if rule is None else rule)
    total = estimate.replicates[:, 0] + estimate.replicates[:, 1]
    dof = degrees_of_freedom(rho)
    alpha_c = dof / float(total.mean())
    stderr = dof / float(total.mean()) ** 2 * float(total.std(ddof=1)) / math.sqrt(total.size)
    return {"alpha_c": alpha_c, "alpha_c_stderr": stderr, "r_star": r_star, "F11": float(estimate.value[0]),
            "F22": float(estimate.value[1]), "F12": float(estimate.value[2]), "v": float(v),
            "expected": two_layer_threshold(rho)}
