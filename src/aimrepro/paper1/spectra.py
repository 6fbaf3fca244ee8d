"""Random-matrix part of the Bayes-optimal theory: the law of Y = S + √Δ Z.

S = W Wᵀ/√(r d) with W ∈ R^{d×r} Gaussian (ρ = r/d) has the spectrum of
√ρ × Marchenko–Pastur; Z is GOE with its semicircle on [−2, 2].  This module
gives the Stieltjes transform G(z) = ∫ μ_Δ(x)/(z − x) dx of Y, its density
μ_Δ, integrals against μ_Δ, the denoising error mmse(Δ; ρ) and the
rotation-invariant estimator (RIE) of S from Y (``docs/paper1.md`` §3.2).

Notes
-----
Free addition gives z = 1/G + R_S(G) + Δ G with R_S(G) = √ρ/(1 − G/√ρ).  In the
reciprocal w = 1/G this is the *monic* cubic

    w³ − (z + s − 1/s) w² + (s z + Δ) w − s Δ = 0,        s = 1/√ρ,

which we solve instead of the cubic in G of the notes: its coefficients stay
O(1) as Δ → 0, where the cubic in G has a leading coefficient s Δ → 0 and
Cardano's formulas lose every digit of the physical root.  The edges of the
support are the real roots of the discriminant quartic of §3.2.

Numerics
--------
* Roots: closed-form (Cardano / trigonometric) for all points at once, then
  one Newton step on the cubic; no per-point ``np.roots``.
* Branch rule (the one place it lives: :func:`_physical_root_on_axis`): on the
  support the physical G has Im G > 0 at z = x − i0 (Im G and Im z have
  opposite signs), density = Im G/π.  Off the support all three roots are real
  and no two of them meet except at an edge, so the physical root keeps its
  rank among the sorted roots on each connected piece of R \\ supp: the
  largest w to the right (G ~ 1/z), the smallest w to the left, and in a gap
  between two bulks the rank of the root closest to the quadrature value of
  ∫ μ(y)/(x − y) dy at the gap's midpoint.  This makes G continuous across the
  edges with no ε shift, which the RIE needs for finite-d eigenvalues that
  fall just outside the support.
* Integrals over μ: on each support interval [a, b] put x = a + (b − a)(1 −
  cos θ)/2 and use Gauss–Legendre nodes in θ ∈ [0, π]; this absorbs the
  square-root edges.  The tests check that doubling the nodes moves ∫μ³ by
  less than 1e−10 over the parameter ranges the pipeline uses.
* Δ → 0 and Δ → ∞ have their own functions (:func:`mmse_small_delta`,
  :func:`mmse_large_delta`); :func:`mmse` refuses Δ outside
  [:data:`DELTA_MIN`, :data:`DELTA_MAX`] instead of running quadrature where
  it is meaningless.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

#: Range of noise variances on which the quadrature is validated by the tests.
DELTA_MIN = 1e-10
DELTA_MAX = 1e6

#: Width ratios on which the state evolution built on this module is validated
#: (``state_evolution`` refuses others).  Measured (softmax at T = 2, 3, 6,
#: hardmax and hardmax_paper, ρ = 10^-7..10^16) against the two limits of the theory.
#: As ρ → 0 at fixed ᾱ = α/ρ the SE error approaches the ρ → 0 curve (off by ≈ 8ρ
#: hardmax, ≲ 0.6√ρ softmax) down to ρ = 1e-4 for every channel (hardmax: 1e-6); below,
#: mmse(Δ) loses its accuracy at small Δ and the softmax SE is off by up to 0.6 at
#: ρ = 10^-4.5..10^-5 (the quadrature fails outright below 4e-8).  As ρ → ∞ the softmax
#: SE matches its closed form to 0.13/ρ, with a floor of 7e-10 at ρ = 1e14; at 1e15 the
#: cubic's cancellation leaves 6e-6, and from ρ ≈ 6e15 the edge quartic fails.
RHO_MIN = 1e-4
RHO_MAX = 1e14

#: Default number of Gauss–Legendre nodes per quadrature piece.
N_NODES = 128

#: A complex edge-quartic root inside the support with |Im| below this fraction
#: of the interval length marks a density dip where the interval is cut.
DIP_FRACTION = 0.25



# ---------------------------------------------------------------------------
# argument checks (public functions call these; private ones assume valid input)


def _check_rho(rho) -> float:
    rho = float(rho)
    if not (math.isfinite(rho) and rho > 0):
        raise ValueError(f"rho must be a finite number > 0, got {rho}")
    return rho


def _check_delta(delta) -> np.ndarray:
    delta = np.asarray(delta, dtype=float)
    if not np.all(np.isfinite(delta)) or np.any(delta <= 0):
        raise ValueError(f"delta must be finite and > 0, got {delta}")
    if np.any(delta < DELTA_MIN) or np.any(delta > DELTA_MAX):
        raise ValueError(
            f"delta must lie in [{DELTA_MIN:g}, {DELTA_MAX:g}] for the quadrature; got "
            f"{delta.min():g}..{delta.max():g} (use mmse_small_delta / mmse_large_delta)"
        )
    return delta


def degrees_of_freedom(rho: float) -> float:
    """D(ρ) = 2ρ − ρ² for ρ < 1, 1 for ρ >= 1: degrees of freedom of S per d² times 2 (§1.6, §4).

    (Not min(2ρ − ρ², 1): 2ρ − ρ² falls back below 1 for ρ > 1, to 0 at ρ = 2.)
    """
    rho = _check_rho(rho)
    return 1.0 if rho >= 1.0 else 2.0 * rho - rho * rho


# ---------------------------------------------------------------------------
# the cubic in w = 1/G


def _w_cubic(x, delta, s):
    """Coefficients (B, C, E) of the monic cubic w³ + B w² + C w + E in w = 1/G."""
    B = -(x + s - 1.0 / s)
    C = s * x + delta
    E = -s * delta + 0.0 * x
    return B, C, E


def _newton_polish(w, B, C, E):
    """One Newton step on the monic cubic; skipped where the derivative vanishes (double root)."""
    f = ((w + B) * w + C) * w + E
    df = (3.0 * w + 2.0 * B) * w + C
    safe = np.abs(df) > 1e-300
    step = np.divide(f, df, out=np.zeros_like(f), where=safe)
    return w - step


def _solve_w_real(x, delta, s):
    """All roots of the w-cubic for real x, arrays broadcast over (x, delta).

    Returns
    -------
    w_pair : complex array
        The root with Im w < 0 where there is a complex pair (z = x on the
        support; this is the physical one, Im G = −Im w/|w|² > 0), NaN elsewhere.
    w_real : (..., 3) float array
        The three sorted real roots where all roots are real, NaN elsewhere.
    """
    B, C, E = _w_cubic(x, delta, s)
    B, C, E = np.broadcast_arrays(B, C, E)
    shift = B / 3.0
    p = C - B * B / 3.0
    q = 2.0 * B**3 / 27.0 - B * C / 3.0 + E
    disc = (q / 2.0) ** 2 + (p / 3.0) ** 3
    one_real = disc > 0

    w_pair = np.full(B.shape, np.nan + 0j)
    w_real = np.full(B.shape + (3,), np.nan)

    if np.any(one_real):
        qq, pp, sh = q[one_real], p[one_real], shift[one_real]
        # u is the cube root without cancellation; v = −p/(3u) is its partner.
        u = -np.sign(qq) * np.cbrt(np.abs(qq) / 2.0 + np.sqrt(disc[one_real]))
        u = np.where(u == 0, np.cbrt(-qq), u)
        v = np.divide(-pp, 3.0 * u, out=np.zeros_like(u), where=u != 0)
        re = -(u + v) / 2.0 - sh
        im = (math.sqrt(3.0) / 2.0) * np.abs(u - v)
        w = re - 1j * im
        w = _newton_polish(w, B[one_real], C[one_real], E[one_real])
        w_pair[one_real] = w.real - 1j * np.abs(w.imag)

    three_real = ~one_real
    if np.any(three_real):
        pp, qq, sh = p[three_real], q[three_real], shift[three_real]
        amp = 2.0 * np.sqrt(np.maximum(-pp / 3.0, 0.0))
        with np.errstate(divide="ignore", invalid="ignore"):
            # p = 0 forces q = 0 here (disc <= 0): a triple root, cos argument irrelevant.
            arg = np.where(pp < 0, (3.0 * qq / (2.0 * pp)) * np.sqrt(-3.0 / np.where(pp < 0, pp, -1.0)), 0.0)
        phi = np.arccos(np.clip(arg, -1.0, 1.0))
        k = np.arange(3)
        roots = amp[:, None] * np.cos((phi[:, None] - 2.0 * np.pi * k) / 3.0) - sh[:, None]
        roots = _newton_polish(roots, B[three_real][:, None], C[three_real][:, None], E[three_real][:, None])
        w_real[three_real] = np.sort(roots, axis=-1)
    return w_pair, w_real


# ---------------------------------------------------------------------------
# support


def _edge_quartic(delta, rho):
    """Coefficients (a4..a0) of the discriminant quartic whose real roots are the edges (§3.2)."""
    k = 1.0 / rho
    sk = math.sqrt(k)
    R = np.asarray(delta, dtype=float)
    a4 = np.full_like(R, k)
    a3 = -2 * sk - 2 * k**1.5 - 2 * sk * R
    a2 = 1 - 2 * k + k**2 + 8 * R - 2 * k * R + R**2
    a1 = -10 * R / sk + 2 * sk * R + 8 * k**1.5 * R - 2 * R**2 / sk + 8 * sk * R**2
    a0 = -12 * R + 4 * R / k + 12 * k * R - 4 * k**2 * R - 20 * R**2 + R**2 / k - 8 * k * R**2 - 4 * R**3
    return np.stack([a4, a3, a2, a1, a0], axis=-1)


def _support_edges(delta, rho):
    """Support intervals for each Δ: array (N, 2, 2) of [a, b] pairs; a missing second bulk is NaN."""
    return _support_and_pieces(delta, rho)[0]


def _support_and_pieces(delta, rho):
    """Support intervals and the quadrature pieces they are cut into, for each Δ.

    The real roots of the quartic are the edges: two give one interval, four
    give two intervals separated by a gap (checked: the cubic has a complex
    pair at the midpoint of each interval and none in the gap).  When only two
    roots are real, the remaining complex pair close to the real axis inside
    the interval marks a nearly closed gap, where the density dips over a
    length |Im root|; the interval is cut there so that the edge-clustered
    nodes of both pieces resolve the dip.  Roots come from batched 4×4
    companion matrices, polished by Newton steps on the quartic.

    Returns
    -------
    edges : (N, 2, 2) support intervals (the second one NaN when absent)
    pieces : (N, 2, 2) integration pieces (the second one NaN when absent)
    """
    delta = np.atleast_1d(np.asarray(delta, dtype=float))
    coef = _edge_quartic(delta, rho)
    n = delta.size
    companion = np.zeros((n, 4, 4))
    companion[:, 0, :] = -coef[:, 1:] / coef[:, :1]
    companion[:, 1, 0] = companion[:, 2, 1] = companion[:, 3, 2] = 1.0
    roots = np.linalg.eigvals(companion)
    # LAPACK returns exactly real eigenvalues of a real matrix as real; a nearly
    # double real root may come back as a conjugate pair with a tiny imaginary
    # part, which the dip cut below treats correctly (two bulks that touch).
    is_real = roots.imag == 0
    n_real = is_real.sum(axis=1)
    real_sorted = np.sort(np.where(is_real, roots.real, np.inf), axis=1)
    real_sorted = _polish_quartic_roots(real_sorted, coef)

    s = 1.0 / math.sqrt(rho)
    two = n_real == 2
    four = n_real == 4
    if not np.all(two | four):
        bad = delta[~(two | four)]
        raise RuntimeError(f"edge quartic at rho={rho} has an odd count of real roots for delta={bad}")
    # midpoints of the three consecutive candidate gaps (inf - inf rows are masked below)
    with np.errstate(invalid="ignore"):
        mids = 0.5 * (real_sorted[:, :-1] + real_sorted[:, 1:])
    mids = np.where(np.isfinite(mids), mids, 0.0)
    w_pair, _ = _solve_w_real(mids, delta[:, None], s)
    in_support = np.isfinite(w_pair)
    separated = four & in_support[:, 0] & ~in_support[:, 1] & in_support[:, 2]
    # four real roots of which the middle two bound no gap: the two bulks touch
    # to rounding accuracy; one interval, cut where they meet
    touching = four & in_support.all(axis=1)
    ok = np.where(four, separated | touching, in_support[:, 0])
    if not np.all(ok):
        raise RuntimeError(f"support of S + sqrt(delta) Z at rho={rho} not recognised for delta={delta[~ok]}")

    edges = np.full((n, 2, 2), np.nan)
    edges[:, 0, 0] = real_sorted[:, 0]
    edges[:, 0, 1] = np.where(touching, real_sorted[:, 3], real_sorted[:, 1])
    edges[separated, 1, 0] = real_sorted[separated, 2]
    edges[separated, 1, 1] = real_sorted[separated, 3]

    pieces = edges.copy()
    pieces[touching, 0, 1] = mids[touching, 1]
    pieces[touching, 1, 0] = mids[touching, 1]
    pieces[touching, 1, 1] = real_sorted[touching, 3]
    # with two real roots the other two are a conjugate pair: a dip candidate
    dip = np.where(is_real, np.nan, roots.real).max(axis=1, initial=-np.inf, where=~is_real)
    dip_width = np.abs(roots.imag).max(axis=1)
    a, b = edges[:, 0, 0], edges[:, 0, 1]
    cut = two & (dip > a) & (dip < b) & (dip_width < DIP_FRACTION * (b - a))
    pieces[cut, 0, 1] = dip[cut]
    pieces[cut, 1, 0] = dip[cut]
    pieces[cut, 1, 1] = b[cut]
    return edges, pieces


def _polish_quartic_roots(r, coef, n_steps=3):
    """Newton steps on the quartics (rows of coef) at the real roots r (inf entries untouched)."""
    finite = np.isfinite(r)
    x = np.where(finite, r, 0.0)
    c = coef[:, :, None]
    for _ in range(n_steps):
        val = (((c[:, 0] * x + c[:, 1]) * x + c[:, 2]) * x + c[:, 3]) * x + c[:, 4]
        der = ((4.0 * c[:, 0] * x + 3.0 * c[:, 1]) * x + 2.0 * c[:, 2]) * x + c[:, 3]
        safe = np.abs(der) > 1e-300
        x = x - np.divide(val, der, out=np.zeros_like(val), where=safe)
    return np.sort(np.where(finite, x, np.inf), axis=1)


@lru_cache(maxsize=16)
def _legendre_theta(n_nodes: int):
    t, w = np.polynomial.legendre.leggauss(n_nodes)
    theta = (t + 1.0) * (np.pi / 2.0)
    return theta, w * (np.pi / 2.0)


def _support_nodes(pieces, n_nodes):
    """Nodes x and weights (with the Jacobian) for ∫ f dx over the quadrature pieces.

    pieces : (N, P, 2).  Returns x, w of shape (N, P, n_nodes); a missing
    piece gets weight 0 and x at the stand-in value 0.
    """
    theta, w_theta = _legendre_theta(n_nodes)
    a = pieces[..., 0:1]
    b = pieces[..., 1:2]
    present = np.isfinite(a)
    a = np.where(present, a, 0.0)
    b = np.where(present, b, 0.0)
    half = (b - a) / 2.0
    x = a + half * (1.0 - np.cos(theta))
    w = np.where(present, half * np.sin(theta) * w_theta, 0.0)
    return x, w


def _density_at(x, delta, s):
    """μ_Δ(x) for x on (or off) the support; zero where all roots are real."""
    w_pair, _ = _solve_w_real(x, delta, s)
    with np.errstate(invalid="ignore"):
        im_g = -w_pair.imag / (w_pair.real**2 + w_pair.imag**2)
    return np.where(np.isfinite(im_g), im_g, 0.0) / np.pi


# ---------------------------------------------------------------------------
# public API


@dataclass(frozen=True)
class Spectrum:
    """Spectral law of Y = S + √Δ Z for S = W Wᵀ/√(r d), ρ = r/d (``docs/paper1.md`` §3.2).

    Parameters
    ----------
    rho : float
        Width ratio ρ = r/d > 0.
    delta : float
        Noise variance Δ in [DELTA_MIN, DELTA_MAX].
    """

    rho: float
    delta: float

    def __post_init__(self):
        _check_rho(self.rho)
        _check_delta(self.delta)

    @property
    def _s(self) -> float:
        return 1.0 / math.sqrt(self.rho)

    def support(self) -> tuple[tuple[float, float], ...]:
        """The one or two intervals carrying the density."""
        edges = _support_edges(np.array([self.delta]), self.rho)[0]
        return tuple((float(a), float(b)) for a, b in edges if np.isfinite(a))

    def density(self, x) -> np.ndarray:
        """μ_Δ(x) for real x of any shape."""
        return _density_at(np.asarray(x, dtype=float), self.delta, self._s)

    def integrate(self, f, n_nodes: int = N_NODES) -> float:
        """∫ f(x) μ_Δ(x) dx by Gauss–Legendre in the edge-absorbing angle θ."""
        x, w = _support_nodes(_support_and_pieces(np.array([self.delta]), self.rho)[1], n_nodes)
        mu = _density_at(x, self.delta, self._s)
        return float(np.sum(w * mu * f(x)))

    def cubed_density_integral(self, n_nodes: int = N_NODES) -> float:
        """∫ μ_Δ(x)³ dx, the quantity entering mmse(Δ)."""
        return float(_cubed_density_integral(np.array([self.delta]), self.rho, n_nodes)[0])

    def stieltjes(self, z) -> np.ndarray:
        """G(z) = ∫ μ(x)/(z − x) dx on the physical branch.

        Real z gives the boundary value at z − i0 (Im G ≥ 0, continuous across
        the edges); complex z with Im z ≠ 0 takes the root of the cubic closest
        to the quadrature value of the integral.
        """
        z = np.asarray(z)
        if np.isrealobj(z) or np.all(np.imag(z) == 0):
            return stieltjes_on_axis(np.real(z), self.delta, self.rho)
        if np.any(np.imag(z) == 0):
            raise ValueError("stieltjes: mix of real and complex z; pass them separately")
        x, w = _support_nodes(_support_and_pieces(np.array([self.delta]), self.rho)[1], N_NODES)
        x, w = x.ravel(), w.ravel()
        mu = _density_at(x, self.delta, self._s)
        approx = np.sum(w * mu / (z[..., None] - x), axis=-1)
        B, C, E = _w_cubic(z, self.delta, self._s)
        coeffs = np.stack(np.broadcast_arrays(np.ones_like(B), B, C, E), axis=-1)
        roots_w = _batched_cubic_roots(coeffs.reshape(-1, 4)).reshape(z.shape + (3,))
        roots_g = 1.0 / roots_w
        pick = np.argmin(np.abs(roots_g - approx[..., None]), axis=-1)
        return np.take_along_axis(roots_g, pick[..., None], axis=-1)[..., 0]


def _batched_cubic_roots(coeffs):
    """Roots of many cubics (rows of a (N, 4) coefficient array) via companion matrices."""
    monic = coeffs[:, 1:] / coeffs[:, :1]
    n = coeffs.shape[0]
    companion = np.zeros((n, 3, 3), dtype=complex)
    companion[:, 0, :] = -monic
    companion[:, 1, 0] = companion[:, 2, 1] = 1.0
    return np.linalg.eigvals(companion)


def _cubed_density_integral(delta, rho, n_nodes):
    """∫ μ_Δ³ for an array of Δ at one ρ (vectorised; private: no checks)."""
    x, w = _support_nodes(_support_and_pieces(delta, rho)[1], n_nodes)
    mu = _density_at(x, delta[:, None, None], 1.0 / math.sqrt(rho))
    return np.sum(w * mu**3, axis=(1, 2))


def stieltjes_on_axis(x, delta: float, rho: float) -> np.ndarray:
    """Boundary value G(x − i0) for real x, continuous across the support edges.

    Parameters
    ----------
    x : array of real numbers, any shape
    delta, rho : float

    Returns
    -------
    complex array of x's shape; Im G = π μ_Δ(x) ≥ 0, real off the support.
    """
    rho = _check_rho(rho)
    delta = float(_check_delta(delta))
    x = np.asarray(x, dtype=float)
    return _physical_root_on_axis(x, delta, rho)


def _physical_root_on_axis(x, delta, rho):
    s = 1.0 / math.sqrt(rho)
    w_pair, w_real = _solve_w_real(x, delta, s)
    g = np.full(x.shape, np.nan + 0j)
    on_support = np.isfinite(w_pair)
    g[on_support] = 1.0 / w_pair[on_support]
    off = ~on_support
    if np.any(off):
        edges = _support_edges(np.array([delta]), rho)[0]
        edges = edges[np.isfinite(edges[:, 0])]
        xo = x[off]
        roots = w_real[off]
        rank = np.where(xo > edges[-1, 1], 2, 0)
        if edges.shape[0] == 2:
            in_gap = (xo > edges[0, 1]) & (xo < edges[1, 0])
            if np.any(in_gap):
                rank = np.where(in_gap, _gap_rank(edges, delta, rho), rank)
        w = np.take_along_axis(roots, rank[:, None], axis=-1)[:, 0]
        g[off] = 1.0 / w
    return g


def _gap_rank(edges, delta, rho):
    """Rank (among the 3 sorted real roots in w) of the physical root inside the gap."""
    mid = 0.5 * (edges[0, 1] + edges[1, 0])
    x, w = _support_nodes(_support_and_pieces(np.array([delta]), rho)[1], N_NODES)
    s = 1.0 / math.sqrt(rho)
    mu = _density_at(x, delta, s)
    hilbert = np.sum(w * mu / (mid - x))
    _, roots = _solve_w_real(np.array([mid]), delta, s)
    return int(np.argmin(np.abs(1.0 / roots[0] - hilbert)))


def mmse(delta, rho: float, *, n_nodes: int = N_NODES) -> np.ndarray:
    """Denoising MMSE of S from Y = S + √Δ Z, per d: mmse(Δ) = Δ − (4π²/3) Δ² ∫ μ_Δ³ (§3.2).

    Parameters
    ----------
    delta : array_like, any shape, each in [DELTA_MIN, DELTA_MAX]
    rho : float > 0

    Returns
    -------
    ndarray of delta's shape, between 0 and Q0 − ρ = 1.

    Notes
    -----
    Runs from Δ·D(ρ) (:func:`degrees_of_freedom`) at small Δ to 1 at large Δ.  I-MMSE:
    d I_den/d(1/Δ) = mmse(Δ)/4 (§3.1).  Vectorised over delta: cost
    O(len(delta) · n_nodes) cubic solves.
    """
    rho = _check_rho(rho)
    delta = _check_delta(delta)
    flat = delta.ravel()
    cubed = _cubed_density_integral(flat, rho, n_nodes)
    out = flat - (4.0 * np.pi**2 / 3.0) * flat**2 * cubed
    return out.reshape(delta.shape)


def mmse_small_delta(delta, rho: float) -> np.ndarray:
    """Leading order of mmse(Δ) as Δ → 0: Δ · D(ρ), D = :func:`degrees_of_freedom` (§3.2).

    The relative correction is O(Δ) for ρ ≠ 1 and O(Δ^{2/3}) at ρ = 1, where
    the Marchenko–Pastur law has its hard edge at 0 (both checked by the tests).
    """
    return np.asarray(delta, dtype=float) * degrees_of_freedom(rho)


def mmse_large_delta(delta, rho: float) -> np.ndarray:
    """mmse(Δ) as Δ → ∞ up to O(1/Δ³): Δ/(1 + Δ) − κ₃²/Δ² with κ₃² = 1/ρ.

    Every entry of S − √ρ I has variance 1/d off the diagonal and 2/d on it,
    the same ratio as the GOE noise, so the best linear estimator divides by
    1 + Δ; the first non-Gaussian correction is the squared third free
    cumulant of S, κ₃(S) = ρ^{−1/2} (the free cumulants of √ρ × Marchenko–Pastur
    are κ_n = ρ^{1 − n/2}).  The tests hold the remainder to O(1/Δ³).
    """
    rho = _check_rho(rho)
    delta = np.asarray(delta, dtype=float)
    return delta / (1.0 + delta) - 1.0 / (rho * delta * delta)


def rie_shrink(eigvals, delta: float, rho: float) -> np.ndarray:
    """RIE eigenvalue map λ ↦ λ − 2Δ Re G(λ − i0) (§5 step 7), vectorised over eigvals."""
    g = stieltjes_on_axis(eigvals, delta, rho)
    return np.asarray(eigvals, dtype=float) - 2.0 * float(delta) * g.real


def rie_denoise(R, delta: float, rho: float) -> np.ndarray:
    """Rotation-invariant estimate of S from the symmetric observation R = S + √Δ Z.

    Eigendecomposes R with ``eigh`` (O(d³)), shrinks the eigenvalues with
    :func:`rie_shrink`, and rebuilds U diag(ξ) Uᵀ.
    """
    R = np.asarray(R, dtype=float)
    if R.ndim != 2 or R.shape[0] != R.shape[1]:
        raise ValueError(f"R must be a square matrix, got shape {R.shape}")
    eigvals, eigvecs = np.linalg.eigh((R + R.T) / 2.0)
    shrunk = rie_shrink(eigvals, delta, rho)
    return (eigvecs * shrunk) @ eigvecs.T
