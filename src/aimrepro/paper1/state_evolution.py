"""State evolution (SE) of the Bayes-optimal estimator of S (``docs/paper1.md`` §3).

The fixed-point equations (§3.2), in the variable v = Q0 − q (the MMSE):

    q̂ = α · channel.information(q, Q0),        v = mmse(1/q̂; ρ),

with Q0 = 1 + ρ.  The SE iterated from the uninformative point q = ρ (as the
paper does) converges monotonically to the *largest* v solving this; the
solvers below compute that point directly with root finders, so they do not
slow down near a transition.

* Softmax (any T, §3.3): q̂ = c α/v with c = T² + T − 2, so with Δ = 1/q̂ the
  equation reads c α = mmse(Δ)/Δ.  The right side decreases from
  D(ρ) = 2ρ − ρ² (ρ < 1) or 1 (ρ >= 1) at Δ → 0 to 0 (Δ → ∞), hence a unique root for α < α_PR and
  MMSE = 0 beyond: the threshold is exact and the MMSE depends on (α, T) only
  through c α.  Solved for all α at once by a vectorised Illinois
  (regula falsi) iteration in log Δ.
* Other channels (hardmax, T = 2): scan v downward from the warm start (v = 1
  at the first point) on a geometric grid until F(v) = v − mmse(1/q̂(v))
  changes sign, then ``scipy.optimize.brentq`` in that bracket.
* ρ → 0 at fixed ᾱ = α/ρ (§3.5): every eigen-direction of S is a strong
  spike; the denoising error becomes t(2 − t) for t < 1 (1 otherwise), with
  t = 1/(ᾱ · information(q, Q0 = 1)); weak recovery at ᾱ_c = 1/information(0, 1).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

import numpy as np

from aimrepro.paper1 import thresholds
from aimrepro.paper1 import spectra
from aimrepro.paper1.channels import OutputChannel, Softmax, make_channel

#: Ratio of the geometric scan in v = Q0 − q for the bracketing search.
SCAN_RATIO = 0.7

#: Smallest v the scan visits before it declares failure.
V_FLOOR = 1e-14


@dataclass(frozen=True)
class SEPoint:
    """One SE fixed point: overlaps, error, and how the solver got there.

    ``alpha`` is the sample ratio α = n/d², except in the ρ → 0 limit where
    it holds ᾱ = α/ρ (``rho == 0``).  ``iterations`` counts evaluations of the
    fixed-point map; ``residual`` is |v − mmse(1/q̂(v))| at the returned point.
    """

    alpha: float
    rho: float
    q: float
    q_hat: float
    mmse: float
    converged: bool
    iterations: int
    residual: float

    def to_dict(self) -> dict:
        return asdict(self)


def mmse_any(delta, rho):
    """mmse(Δ; ρ) for any Δ > 0: quadrature inside its validated range, the asymptotic forms outside."""
    delta = np.asarray(delta, dtype=float)
    out = np.empty_like(delta)
    low = delta < spectra.DELTA_MIN
    high = delta > spectra.DELTA_MAX
    mid = ~(low | high)
    if np.any(mid):
        out[mid] = spectra.mmse(delta[mid], rho)
    out[low] = spectra.mmse_small_delta(delta[low], rho)
    out[high] = spectra.mmse_large_delta(delta[high], rho)
    return out


def _check_alpha(alpha):
    alpha = np.asarray(alpha, dtype=float)
    if not np.all(np.isfinite(alpha)) or np.any(alpha <= 0):
        raise ValueError(f"alpha must be finite and > 0, got {alpha}")
    return alpha


def _check_rho(rho):
    rho = float(rho)
    if not (math.isfinite(rho) and rho > 0):
        raise ValueError(f"rho must be a finite number > 0, got {rho}")
    if not spectra.RHO_MIN <= rho <= spectra.RHO_MAX:
        raise ValueError(f"rho must lie in [{spectra.RHO_MIN:g}, {spectra.RHO_MAX:g}], the range on "
                         f"which the state evolution is validated (spectra.RHO_MIN, RHO_MAX), "
                         f"got {rho:g}")
    return rho


# ---------------------------------------------------------------------------
# softmax: vectorised root in log Δ


def _softmax_points(alphas, rho, T, *, tol=1e-13, max_iter=200):
    alphas = _check_alpha(alphas)
    rho = _check_rho(rho)
    c = thresholds.n_softmax_measurements(T)
    dof = spectra.degrees_of_freedom(rho)
    Q0 = 1.0 + rho
    target = np.log(c * alphas)

    u_lo = math.log(spectra.DELTA_MIN)
    u_hi = math.log(spectra.DELTA_MAX)

    def h(u, tgt):  # decreasing in u; zero where mmse(Δ)/Δ = c α
        delta = np.clip(np.exp(u), spectra.DELTA_MIN, spectra.DELTA_MAX)  # exp(log x) may round outside
        return np.log(spectra.mmse(delta, rho)) - np.log(delta) - tgt

    n = alphas.size
    delta = np.full(n, np.nan)
    iterations = np.zeros(n, dtype=int)
    converged = np.zeros(n, dtype=bool)
    residual = np.zeros(n)

    perfect = c * alphas >= dof
    # below the quadrature range the small-Δ law mmse = dof·Δ(1 + O(Δ)) puts the error under c α · DELTA_MIN
    edge_lo = spectra.mmse(np.array([spectra.DELTA_MIN]), rho)[0] / spectra.DELTA_MIN
    edge_hi = spectra.mmse(np.array([spectra.DELTA_MAX]), rho)[0] / spectra.DELTA_MAX
    near_threshold = ~perfect & (c * alphas >= edge_lo)
    tiny_alpha = c * alphas <= edge_hi
    active = ~(perfect | near_threshold | tiny_alpha)

    delta[near_threshold] = spectra.DELTA_MIN
    converged[near_threshold] = True
    delta[tiny_alpha] = _large_delta_root(c * alphas[tiny_alpha], rho)
    converged[tiny_alpha] = True

    idx = np.flatnonzero(active)
    if idx.size:
        tgt = target[idx]
        a = np.full(idx.size, u_lo)
        b = np.full(idx.size, u_hi)
        fa = h(a, tgt)
        fb = h(b, tgt)
        u = a.copy()
        last_side = np.zeros(idx.size, dtype=int)  # +1: a moved last, -1: b moved last
        done = np.zeros(idx.size, dtype=bool)
        its = np.full(idx.size, 2)
        for _ in range(max_iter):
            live = ~done
            if not np.any(live):
                break
            # Illinois step: regula falsi whose stale end has its value halved
            u[live] = (a[live] * fb[live] - b[live] * fa[live]) / (fb[live] - fa[live])
            fu = h(u[live], tgt[live])
            its[live] += 1
            moves_a = np.sign(fu) == np.sign(fa[live])
            li = np.flatnonzero(live)
            ia, ib = li[moves_a], li[~moves_a]
            fb[ia] = np.where(last_side[ia] == 1, fb[ia] / 2.0, fb[ia])
            fa[ib] = np.where(last_side[ib] == -1, fa[ib] / 2.0, fa[ib])
            a[ia], fa[ia], last_side[ia] = u[ia], fu[moves_a], 1
            b[ib], fb[ib], last_side[ib] = u[ib], fu[~moves_a], -1
            done[li] = (np.abs(fu) < tol) | (np.abs(b[li] - a[li]) < tol)
        delta[idx] = np.exp(u)
        converged[idx] = done
        iterations[idx] = its

    v = np.where(perfect, 0.0, c * alphas * delta)
    fin = ~perfect
    residual[fin] = np.abs(v[fin] - mmse_any(v[fin] / (c * alphas[fin]), rho))
    converged[perfect] = True
    q_hat = np.where(perfect, np.inf, 1.0 / np.where(perfect, 1.0, delta))
    return [
        SEPoint(float(al), rho, float(Q0 - vv), float(qh), float(vv), bool(cv), int(it), float(rs))
        for al, vv, qh, cv, it, rs in zip(alphas, v, q_hat, converged, iterations, residual)
    ]


def _large_delta_root(c_alpha, rho):
    """Δ solving c α Δ = Δ/(1 + Δ) − 1/(ρ Δ²), the large-Δ form of the softmax SE (tiny α)."""
    delta = 1.0 / c_alpha - 1.0
    for _ in range(20):
        f = c_alpha * delta - delta / (1.0 + delta) + 1.0 / (rho * delta**2)
        df = c_alpha - 1.0 / (1.0 + delta) ** 2 - 2.0 / (rho * delta**3)
        delta = delta - f / df
    return delta


# ---------------------------------------------------------------------------
# generic channel: bracket by a geometric scan, then brentq


def _solve_scalar(fixed_point_gap, v_start, *, tol):
    """Largest root v ≤ v_start of F(v) = fixed_point_gap(v), given F(v_start) ≥ 0.

    Returns (v, evaluations, residual, converged).
    """
    evaluations = 0

    def F(v):
        nonlocal evaluations
        evaluations += 1
        return fixed_point_gap(v)

    f_hi = F(v_start)
    if f_hi <= 0.0:
        return v_start, evaluations, abs(f_hi), True
    v_hi = v_start
    v_lo = v_hi * SCAN_RATIO
    f_lo = F(v_lo)
    while f_lo > 0.0:
        if v_lo < V_FLOOR:
            return v_lo, evaluations, abs(f_lo), False
        v_hi, f_hi = v_lo, f_lo
        v_lo = v_hi * SCAN_RATIO
        f_lo = F(v_lo)
    if f_lo == 0.0:
        return v_lo, evaluations, 0.0, True
    # imported here: scipy.optimize costs ~0.1 s per process, and every GAMP-RIE job imports
    # this module for its predicted error, while only the generic (hardmax) solver needs brentq
    from scipy.optimize import brentq
    v, info = brentq(F, v_lo, v_hi, xtol=tol * 1e-2, rtol=4 * np.finfo(float).eps, full_output=True, disp=False)
    res = abs(F(v))
    return v, evaluations, res, bool(info.converged) and res < tol


def _denoising_error(delta, rho):
    """mmse(Δ; ρ); for rho == 0 (the ρ → 0 limit, §3.5) Δ stands for t = 1/(ᾱ·information) and the error is spiked_mmse(t)."""
    if rho == 0.0:
        return float(spiked_mmse(delta))
    return float(mmse_any(np.array([delta]), rho)[0])


def _generic_point(channel, alpha, rho, *, v_start=None, tol=1e-10):
    """One fixed point by bracketing; rho == 0 means the ρ → 0 limit with alpha = ᾱ and Q0 = 1."""
    Q0 = 1.0 + rho
    q_hats = {}

    def gap(v):
        q_hats[v] = alpha * channel.information(Q0 - v, Q0)
        return v - _denoising_error(1.0 / q_hats[v], rho)

    start = 1.0 if v_start is None else min(1.0, v_start)
    if v_start is not None and gap(start) < 0.0:
        start = 1.0
    v, evaluations, residual, converged = _solve_scalar(gap, start, tol=tol)
    return SEPoint(float(alpha), rho, float(Q0 - v), float(q_hats[v]), float(v), bool(converged),
                   int(evaluations), float(residual))


def _warm_started_curve(channel, alphas, rho, tol):
    """Fixed points in increasing α, each scan starting from the previous MMSE (valid: MMSE decreases in α)."""
    points = [None] * alphas.size
    v_start = None
    for i in np.argsort(alphas):
        points[i] = _generic_point(channel, float(alphas[i]), rho, v_start=v_start, tol=tol)
        v_start = points[i].mmse
    return points


# ---------------------------------------------------------------------------
# public API


def solve_se(channel: OutputChannel, alpha: float, rho: float, *, tol: float = 1e-10) -> SEPoint:
    """SE fixed point reached from the uninformative q = ρ at one (α, ρ).

    Parameters
    ----------
    channel : OutputChannel (see ``channels.make_channel``)
    alpha : sample ratio α = n/d² > 0
    rho : width ratio ρ = r/d in [spectra.RHO_MIN, spectra.RHO_MAX] (the validated range)
    tol : tolerance on the fixed-point residual |v − mmse(1/q̂(v))|
    """
    return se_curve(channel, [alpha], rho, tol=tol)[0]


def se_curve(channel: OutputChannel, alphas, rho: float, *, tol: float = 1e-10) -> list[SEPoint]:
    """SE fixed points along a grid of α (any order; warm-started in increasing α)."""
    alphas = _check_alpha(np.atleast_1d(alphas))
    rho = _check_rho(rho)
    if isinstance(channel, Softmax):
        return _softmax_points(alphas, rho, channel.T)
    return _warm_started_curve(channel, alphas, rho, tol)


def spiked_mmse(t):
    """Denoising error in the ρ → 0 limit: t(2 − t) for t < 1, else 1 (§3.5).

    Each eigen-direction of S is a spike of strength θ = ρ^{−1/2} seen through
    noise Δ = 1/q̂ = 1/(ρ ᾱ · information); t = Δ/θ² = 1/(ᾱ · information) is
    noise over squared strength, and 1 − t the squared overlap of each spike
    with its estimate above the BBP point t = 1.
    """
    t = np.asarray(t, dtype=float)
    return np.where(t < 1.0, t * (2.0 - t), 1.0)


def small_width_curve(channel: OutputChannel, alpha_bars, *, tol: float = 1e-10) -> list[SEPoint]:
    """SE in the limit ρ → 0 at fixed ᾱ = α/ρ (§3.5); ``SEPoint.alpha`` holds ᾱ, ``rho`` is 0."""
    alpha_bars = _check_alpha(np.atleast_1d(alpha_bars))
    return _warm_started_curve(channel, alpha_bars, 0.0, tol)


def weak_recovery_threshold(channel: OutputChannel) -> float:
    """ᾱ_c = 1/information(q = 0, Q0 = 1): below it the ρ → 0 MMSE is exactly 1 (§3.5)."""
    return float(1.0 / channel.information(0.0, 1.0))


def softmax_mmse_rho_infinity(alpha, T: int) -> np.ndarray:
    """ρ → ∞ (Gaussian prior) softmax MMSE: max(0, 1 − (T² + T − 2) α) (§4)."""
    alpha = np.asarray(alpha, dtype=float)
    return np.maximum(0.0, 1.0 - thresholds.n_softmax_measurements(T) * alpha)


@dataclass(frozen=True)
class SETable:
    """An SE curve on one axis, ready to be written as a table (see :meth:`columns`)."""

    channel: str
    T: int
    rho: float
    axis: str
    x: np.ndarray
    alpha: np.ndarray
    mmse: np.ndarray
    q: np.ndarray
    q_hat: np.ndarray
    converged: np.ndarray
    iterations: np.ndarray
    residual: np.ndarray
    settings: dict = field(default_factory=dict)

    def columns(self) -> dict:
        return {
            self.axis: self.x, "alpha": self.alpha, "mmse": self.mmse, "q": self.q, "q_hat": self.q_hat,
            "converged": self.converged, "iterations": self.iterations, "residual": self.residual,
        }

    def diagnostics(self) -> dict:
        return {
            "converged": bool(np.all(self.converged)),
            "n_points": int(self.x.size),
            "n_unconverged": int(np.sum(~self.converged)),
            "max_iterations": int(np.max(self.iterations)) if self.x.size else 0,
            "max_residual": float(np.max(self.residual)) if self.x.size else 0.0,
        }


def se_table(channel: str, T: int, rho: float, axis: str, x, *, beta: float = 1.0,
             tol: float = 1e-10) -> SETable:
    """SE curve for a channel name on a grid of one axis variable (see ``grids``).

    ``rho`` is a float > 0, or 0.0 for the ρ → 0 limit (axis ``alphabar``
    only), or ``math.inf`` for ρ → ∞ (softmax only, closed form).
    """
    if axis not in thresholds.AXES:
        raise ValueError(f"axis must be one of {thresholds.AXES}, got {axis!r}")
    ch = make_channel(channel, T=T, beta=beta if channel == "softmax" else None)
    x = np.asarray(x, dtype=float)
    settings = {"tol": tol, "scan_ratio": SCAN_RATIO, "spectral_nodes": spectra.N_NODES}
    if channel != "softmax":
        from aimrepro.paper1.channels import HARDMAX_NODES, HARDMAX_SIGMAS

        settings.update(hardmax_nodes=HARDMAX_NODES, hardmax_sigmas=HARDMAX_SIGMAS)

    if rho == 0.0:
        if axis != "alphabar":
            raise ValueError(f"the rho -> 0 limit is a curve in alphabar = alpha/rho, got axis {axis!r}")
        points = small_width_curve(ch, x, tol=tol)
        alpha = np.full(x.shape, np.nan)
    elif math.isinf(rho):
        if channel != "softmax":
            raise ValueError(f"rho = inf has a closed form for the softmax channel only, got {channel!r}")
        alpha = thresholds.alphas_from_axis(axis, x, rho=rho, T=T)
        m = softmax_mmse_rho_infinity(alpha, T)
        return SETable(channel, T, rho, axis, x, alpha, m, np.full(x.shape, np.nan), np.full(x.shape, np.nan),
                       np.ones(x.shape, bool), np.zeros(x.shape, int), np.zeros(x.shape), settings)
    else:
        alpha = thresholds.alphas_from_axis(axis, x, rho=rho, T=T)
        points = se_curve(ch, alpha, rho, tol=tol)
    return SETable(
        channel, T, rho, axis, x, alpha,
        np.array([p.mmse for p in points]), np.array([p.q for p in points]),
        np.array([p.q_hat for p in points]), np.array([p.converged for p in points]),
        np.array([p.iterations for p in points]), np.array([p.residual for p in points]), settings,
    )
