"""The state evolution for tokens that are not Gaussian (``docs/paper1.md`` §13; beyond both papers).

With i.i.d. token coordinates of mean 0, variance 1 and excess kurtosis κ₄
(:class:`aimrepro.model.TokenLaw`), the index of the prior mean √ρ I is known
to the estimator but its law changes: h_aa contains t·c_a with t = Tr S/d → √ρ
and c_a = (‖x_a‖² − d)/√d, of variance 2 + κ₄ instead of 2.  What the labels
say given the estimate is unchanged, so in the SE only the law of the
estimate's diagonal components changes (§13.2):

    ω_aa ~ N(0, 2q + κ₄ρ)  instead of N(0, 2q),  off-diagonal ω and the noise unchanged.

* Softmax (any T): the information (T² + T − 2)/(Q0 − q) does not depend on
  the law of ω, so the SE, its threshold and the MMSE are those of Gaussian
  tokens (:func:`law_channel` returns the channel itself).
* Hardmax, T = 2: the information does depend on it; :func:`law_channel`
  gives ``Hardmax2(diagonal_excess=κ₄ρ)`` and :func:`law_se` its SE.
  Rademacher tokens (κ₄ = −2) make ‖x‖² = d exactly: the known part vanishes,
  the labels are less predictable and carry more information (a lower MMSE);
  heavier tails than Gaussian raise the MMSE.

**Finite d** (§13.4).  c_a is a sum of d independent terms x_i² − 1; it
approaches its Gaussian law at the Berry–Esseen rate d^{−1/2} when E|x|⁶ < ∞,
but only like d^{1 − ν/4} for Student-t tokens with 4 < ν < 6, whose E x⁶ is
infinite (d^{−1/4} at ν = 5).  :func:`finite_d_se` is the SE in which c_a
has its exact law at the simulated d (sampled) instead of its Gaussian
limit; :func:`finite_d_shift` the difference of two laws' finite-d SEs with
common random numbers, the quantity GAMP-RIE's paired differences between
laws estimate.

Numerics
--------
The finite-d information is a Monte-Carlo average over n draws of
(c₁, c₂, ξ₁, ξ₂, η) with the four T = 2 label patterns summed exactly
(Z_out-weighted |g_out|²), so it is a smooth function of q for fixed draws;
the SE root is found by the secant method from the asymptotic law SE (a few
evaluations), each O(n) Owen's-T evaluations.  Drawing c costs O(n d).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from aimrepro.model import GAUSSIAN, TokenLaw
from aimrepro.paper1.channels import Hardmax2, OutputChannel, Softmax, make_channel
from aimrepro.paper1.state_evolution import SEPoint, mmse_any, solve_se

__all__ = ["FiniteDPoint", "KnownPart", "diagonal_excess", "finite_d_se", "finite_d_shift", "known_part",
           "law_channel", "law_se", "law_se_curve", "law_table"]

#: Relative change of the information used to differentiate the SE root (delta method).
_DELTA_STEP = 1e-3

#: Token coordinates drawn at once when sampling c (memory O(this)).
_CHUNK_ENTRIES = 4_000_000


def _check_law(law) -> TokenLaw:
    if not isinstance(law, TokenLaw):
        raise ValueError(f"law must be a model.TokenLaw, got {law!r}")
    return law


def diagonal_excess(law: TokenLaw, rho: float) -> float:
    """κ₄ ρ: the extra variance of each diagonal SE mean ω_aa under the law (§13.2)."""
    _check_law(law)
    if not (math.isfinite(rho) and rho > 0):
        raise ValueError(f"rho must be a finite number > 0, got {rho}")
    return law.excess_kurtosis * rho


def law_channel(channel: OutputChannel, law: TokenLaw, rho: float) -> OutputChannel:
    """The channel whose SE is that of tokens of ``law`` (module notes).

    Softmax: the channel itself (its information does not depend on the law
    of ω); Hardmax2 (and the published-formula variant): the same channel
    with ``diagonal_excess`` = κ₄ρ.  Other channels have no law correction here.
    """
    excess = diagonal_excess(law, rho)
    if isinstance(channel, Softmax):
        return channel
    if isinstance(channel, Hardmax2):
        return replace(channel, diagonal_excess=excess)
    raise ValueError(f"no token-law state evolution for the {type(channel).__name__} channel "
                     f"(softmax and hardmax T = 2 only)")


def law_se(channel: OutputChannel, alpha: float, rho: float, law: TokenLaw, *, tol: float = 1e-10) -> SEPoint:
    """The SE fixed point for tokens of ``law`` as d → ∞ (``solve_se`` of :func:`law_channel`)."""
    return solve_se(law_channel(channel, law, rho), alpha, rho, tol=tol)


# ---------------------------------------------------------------------------
# finite d: the exact law of the diagonal's known part


@dataclass(frozen=True)
class KnownPart:
    """Draws for the finite-d information: c (n, 2) of the law at d, ξ (n, 2), η (n,).

    ``d`` is None for the d → ∞ limit (c Gaussian with variance 2 + κ₄).
    """

    law: TokenLaw
    d: int | None
    c: np.ndarray
    xi: np.ndarray
    eta: np.ndarray

    @property
    def n(self) -> int:
        return self.c.shape[0]


def _check_sizes(d, n_samples):
    if d is not None and not (isinstance(d, (int, np.integer)) and d >= 2):
        raise ValueError(f"d must be an integer >= 2 or None (d -> infinity), got {d!r}")
    if not (isinstance(n_samples, (int, np.integer)) and n_samples >= 100):
        raise ValueError(f"n_samples must be an integer >= 100, got {n_samples!r}")


def known_part(law: TokenLaw, d: int | None, n_samples: int, seed: int) -> KnownPart:
    """n draws of c_a = (‖x_a‖² − d)/√d for a = 1, 2 (tokens of ``law`` in R^d) and of the Gaussian ξ, η.

    Common random numbers: ξ, η and the standard normals behind the tokens
    (``TokenLaw.sample`` transforms the same normals for every law) depend on
    (seed, d) only, so two laws' draws at one d are coupled.  O(n d) time,
    O(min(n d, 4e6)) memory.
    """
    _check_law(law)
    _check_sizes(d, n_samples)
    rng = np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=(0 if d is None else int(d),)))
    xi = rng.standard_normal((n_samples, 2))
    eta = rng.standard_normal(n_samples)
    if d is None:
        c = math.sqrt(2.0 + law.excess_kurtosis) * rng.standard_normal((n_samples, 2))
    else:
        c = np.empty((n_samples, 2))
        rows = max(1, _CHUNK_ENTRIES // (2 * d))
        for start in range(0, n_samples, rows):
            stop = min(n_samples, start + rows)
            x = law.sample(rng, (stop - start, 2, d))
            c[start:stop] = (np.einsum("nad,nad->na", x, x) - d) / math.sqrt(d)
    return KnownPart(law, d, c, xi, eta)


def _label_patterns(n: int) -> list[np.ndarray]:
    """The four T = 2 hardmax labels (row winners), each repeated n times: (n, 2, 2)."""
    patterns = []
    for first in (0, 1):
        for second in (0, 1):
            y = np.zeros((n, 2, 2))
            y[:, 0, first] = 1.0
            y[:, 1, second] = 1.0
            patterns.append(y)
    return patterns


def _information_samples(channel: Hardmax2, q: float, Q0: float, rho: float, draws: KnownPart) -> np.ndarray:
    """Per-draw values of 4 Σ_y Z_out |g_out|² at overlap q (z-scale; their mean is the information).

    ω₁₁ = √ρ c₁ + √(2(q − ρ)) ξ₁, ω₂₂ likewise, ω₁₂ = √(2q) η (z-scale), V = 2(Q0 − q).
    """
    if not (rho <= q < Q0):
        raise ValueError(f"the overlap must satisfy rho = {rho} <= q < Q0 = {Q0}, got q={q}")
    spread = math.sqrt(2.0 * (q - rho))
    omega = np.empty((draws.n, 3))
    omega[:, 0] = math.sqrt(rho) * draws.c[:, 0] + spread * draws.xi[:, 0]
    omega[:, 1] = math.sqrt(2.0 * q) * draws.eta
    omega[:, 2] = math.sqrt(rho) * draws.c[:, 1] + spread * draws.xi[:, 1]
    V = 2.0 * (Q0 - q)
    total = np.zeros(draws.n)
    for y in _label_patterns(draws.n):
        g = channel.g_out(y, omega, V)
        total += np.exp(channel.log_z_out(y, omega, V)) * np.sum(g * g, axis=1)
    return 4.0 * total


@dataclass(frozen=True)
class FiniteDPoint:
    """The finite-d SE of one law at one d: MMSE, its Monte-Carlo error, and the solver's state.

    ``d`` is None for the d → ∞ limit sampled the same way (a check of the
    sampler against :func:`law_se`).  ``gradient`` is dv/d log(information) at
    the root (delta method); ``samples`` the per-draw information values there.
    """

    law: TokenLaw
    d: int | None
    alpha: float
    rho: float
    mmse: float
    mmse_se: float
    information: float
    converged: bool
    iterations: int
    residual: float
    gradient: float
    samples: np.ndarray

    def to_dict(self) -> dict:
        return {"law": self.law.token, "d": self.d, "alpha": self.alpha, "rho": self.rho, "mmse": self.mmse,
                "mmse_se": self.mmse_se, "information": self.information, "converged": self.converged,
                "iterations": self.iterations, "residual": self.residual}


def _root(gap, v0: float, *, tol: float, max_iter: int = 30):
    """Secant iteration on gap(v) = 0 from v0 (kept in (0, 1]); returns v, evaluations, residual, converged."""
    v_prev, f_prev = v0, gap(v0)
    v = min(1.0, v0 * 1.02) if v0 < 1.0 else v0 * 0.98
    evaluations = 1
    for _ in range(max_iter):
        f = gap(v)
        evaluations += 1
        if abs(f) < tol or f == f_prev:
            return v, evaluations, abs(f), abs(f) < tol
        v_next = v - f * (v - v_prev) / (f - f_prev)
        v_prev, f_prev = v, f
        v = min(1.0, max(1e-12, v_next))
    return v, evaluations, abs(f), False


def _solve_sampled(channel: Hardmax2, alpha: float, rho: float, draws: KnownPart, v0: float, *, tol: float,
                   scale: float = 1.0):
    Q0 = 1.0 + rho
    memo = {}

    def gap(v):
        info = scale * float(np.mean(_information_samples(channel, Q0 - v, Q0, rho, draws)))
        memo[v] = info
        return v - float(mmse_any(np.array([1.0 / (alpha * info)]), rho)[0])

    v, evaluations, residual, converged = _root(gap, v0, tol=tol)
    return v, memo[v], evaluations, residual, converged


def finite_d_se(alpha: float, rho: float, law: TokenLaw, d: int | None, *, n_samples: int = 50_000,
                seed: int = 0, tol: float = 1e-9, draws: KnownPart | None = None) -> FiniteDPoint:
    """The hardmax (T = 2) SE with the diagonal's known part drawn from its exact law at d (module notes).

    Parameters
    ----------
    alpha, rho : the SE point (α = n/d², ρ = r/d)
    law : the token law; d : the dimension (None: the d → ∞ Gaussian limit, sampled)
    n_samples, seed : Monte-Carlo draws (:func:`known_part`), or ``draws`` given directly
    tol : residual of the fixed point |v − mmse(1/q̂(v))| (for the sampled information)

    Returns
    -------
    FiniteDPoint
        ``mmse_se`` propagates the information's Monte-Carlo error through the
        root (the root re-solved with the information scaled by 1 + 10⁻³).
    """
    _check_law(law)
    if not (math.isfinite(alpha) and alpha > 0):
        raise ValueError(f"alpha must be a finite number > 0, got {alpha}")
    if draws is None:
        draws = known_part(law, d, n_samples, seed)
    elif draws.law != law or draws.d != d:
        raise ValueError(f"the draws are for {draws.law.token} at d={draws.d}, not {law.token} at d={d}")
    channel = Hardmax2()
    start = law_se(channel, alpha, rho, law).mmse
    v, info, evaluations, residual, converged = _solve_sampled(channel, alpha, rho, draws, start, tol=tol)
    v_up, *_ = _solve_sampled(channel, alpha, rho, draws, v, tol=tol, scale=1.0 + _DELTA_STEP)
    gradient = (v_up - v) / math.log1p(_DELTA_STEP)
    samples = _information_samples(channel, 1.0 + rho - v, 1.0 + rho, rho, draws)
    relative_se = float(np.std(samples, ddof=1) / math.sqrt(draws.n) / np.mean(samples))
    return FiniteDPoint(law, d, float(alpha), float(rho), float(v), abs(gradient) * relative_se, float(info),
                        bool(converged), int(evaluations), float(residual), float(gradient), samples)


def finite_d_shift(alpha: float, rho: float, law: TokenLaw, d: int | None, *, n_samples: int = 50_000,
                   seed: int = 0, reference: TokenLaw = GAUSSIAN) -> tuple[float, float, FiniteDPoint, FiniteDPoint]:
    """SE_law(d) − SE_reference(d) with common random numbers, its Monte-Carlo error, and both points.

    The draws of the two laws share ξ, η and the normals behind the tokens
    (:func:`known_part` with one seed), so the error of the difference is that
    of the per-draw difference of the linearised roots (delta method).
    """
    points = [finite_d_se(alpha, rho, which, d, draws=known_part(which, d, n_samples, seed))
              for which in (law, reference)]
    law_point, ref_point = points
    per_draw = (law_point.gradient * law_point.samples / law_point.information
                - ref_point.gradient * ref_point.samples / ref_point.information)
    se = float(np.std(per_draw, ddof=1) / math.sqrt(per_draw.size))
    return law_point.mmse - ref_point.mmse, se, law_point, ref_point


def law_table(channel_name: str, T: int, rho: float, alpha: float, laws, dims, *, beta: float | None = None,
              n_samples: int = 50_000, seed: int = 0) -> dict[str, np.ndarray]:
    """The theory of one trend point for several laws: Gaussian SE, law SE, and the finite-d shifts.

    Columns, one row per (law, d) with d = 0 standing for d → ∞ (the law SE
    itself, no sampling): ``law`` (path token), ``d``, ``gaussian_se``, ``law_se``,
    ``shift`` (law minus Gaussian, finite-d SEs with common random numbers;
    law SE − Gaussian SE at d = 0), ``shift_se`` (its Monte-Carlo error; 0 at
    d = 0 and wherever the law of ω does not matter: softmax, and Rademacher,
    whose known part is exactly 0 at every d, against itself).  For softmax
    every shift is 0 (module notes), nothing is sampled.  Cost: two finite-d SE
    solves per (law, d) for hardmax, each O(n_samples (d + 40)).
    """
    channel = make_channel(channel_name, T=T, beta=beta)
    gaussian = solve_se(channel, alpha, rho).mmse
    rows = []
    for law in laws:
        law = _check_law(law)
        asymptotic = law_se(channel, alpha, rho, law).mmse
        rows.append((law.token, 0, gaussian, asymptotic, asymptotic - gaussian, 0.0))
        for d in dims:
            if isinstance(channel, Softmax) or law.is_gaussian:
                shift, se = 0.0, 0.0
            else:
                shift, se, *_ = finite_d_shift(alpha, rho, law, int(d), n_samples=n_samples, seed=seed)
            rows.append((law.token, int(d), gaussian, asymptotic, shift, se))
    names = ("law", "d", "gaussian_se", "law_se", "shift", "shift_se")
    return {name: np.array([row[i] for row in rows]) for i, name in enumerate(names)}


def law_se_curve(channel_name: str, T: int, rho: float, alphas, law: TokenLaw, *,
                 beta: float | None = None) -> dict[str, np.ndarray]:
    """The law's SE along a grid of α (d → ∞): columns ``alpha``, ``mmse``, ``converged`` (for the figure)."""
    from aimrepro.paper1.state_evolution import se_curve

    channel = law_channel(make_channel(channel_name, T=T, beta=beta), _check_law(law), rho)
    points = se_curve(channel, np.asarray(alphas, dtype=float), rho)
    return {"alpha": np.array([p.alpha for p in points]), "mmse": np.array([p.mmse for p in points]),
            "converged": np.array([p.converged for p in points])}
