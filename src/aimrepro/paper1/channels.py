"""Output channels of the AIM, shared by the state evolution and GAMP-RIE.

One class per link g (``docs/paper1.md`` §1.3), one contract: ``log_z_out`` and its
gradient ``g_out`` with respect to the mean ω.  The state evolution integrates
the *same* ``g_out`` that AMP evaluates on data (STYLE §2.3).

Conventions (``docs/paper1.md`` §3.2, §5)
-------------------------------------
*z-scale.*  A symmetric T×T index matrix h is stored as its m = T(T+1)/2
upper-triangular entries in row-major order, scaled by τ_aa = 1, τ_{a<b} = √2:
z_ab = τ_ab h_ab.  Every component of z then has variance 2 Q0 under the
prior, and ω, V below are the mean and the (common) variance of z:
z = ω + √V ζ, ζ ~ N(0, I_m).  :func:`to_z_scale` and :func:`from_z_scale`
convert at the boundary; ``amp.py`` uses the same pair.

*SE correspondence.*  At the state-evolution overlap q: ω ~ N(0, 2q I_m),
V = 2(Q0 − q), and the conjugate overlap is q̂ = 4 α E|g_out|² =
α · :meth:`OutputChannel.information`.

*Tokens that are not Gaussian* (``docs/paper1.md`` §13).  With i.i.d. token
coordinates of excess kurtosis κ₄ the law of the labels given ω is unchanged,
but each diagonal component of ω carries an extra variance κ₄ρ, from the known
index of the prior mean √ρ I: ω_aa ~ N(0, 2q + κ₄ρ).  A channel whose SE
information depends on the law of ω takes it as ``diagonal_excess`` (Hardmax2);
the softmax information does not depend on ω.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass
from functools import lru_cache
from typing import ClassVar

import numpy as np

from aimrepro.numerics import gauss as _gauss
from aimrepro.model import apply_link

# ---------------------------------------------------------------------------
# z-scale helpers


@lru_cache(maxsize=32)
def upper_indices(T: int):
    """(rows, cols, τ) of the m upper-triangular entries of a T×T matrix, in z-scale order."""
    rows, cols = np.triu_indices(T)
    tau = np.where(rows == cols, 1.0, math.sqrt(2.0))
    return rows, cols, tau


def n_components(T: int) -> int:
    """m = T(T+1)/2, the number of distinct entries of a symmetric T×T matrix."""
    return T * (T + 1) // 2


def tau_vector(T: int) -> np.ndarray:
    """τ in upper-triangular order: 1 on the diagonal, √2 off it (|τ|² = T²)."""
    return upper_indices(T)[2].copy()


def to_z_scale(h: np.ndarray) -> np.ndarray:
    """Symmetric (..., T, T) → (..., m) upper-triangular entries scaled by τ."""
    h = np.asarray(h)
    T = h.shape[-1]
    rows, cols, tau = upper_indices(T)
    return h[..., rows, cols] * tau


def from_z_scale(z: np.ndarray, T: int) -> np.ndarray:
    """(..., m) z-scale vector → symmetric (..., T, T) matrix (inverse of :func:`to_z_scale`)."""
    z = np.asarray(z, dtype=float)
    rows, cols, tau = upper_indices(T)
    if z.shape[-1] != rows.size:
        raise ValueError(f"z has {z.shape[-1]} components; T={T} needs {rows.size}")
    h = np.empty(z.shape[:-1] + (T, T))
    vals = z / tau
    h[..., rows, cols] = vals
    h[..., cols, rows] = vals
    return h


# ---------------------------------------------------------------------------
# base class


@dataclass(frozen=True)
class OutputChannel(ABC):
    """Output channel P(y | h) of a symmetric T×T index matrix h.

    Subclasses implement :meth:`sample_labels`, :meth:`log_z_out`,
    :meth:`g_out` and :meth:`information`; the names match the config and CLI
    strings through :data:`CHANNELS`.
    """

    T: int
    name: ClassVar[str]

    def __post_init__(self):
        if not (isinstance(self.T, (int, np.integer)) and self.T >= 2):
            raise ValueError(f"T must be an integer >= 2, got {self.T!r}")

    @property
    def m(self) -> int:
        """Number of z-scale components, T(T+1)/2."""
        return n_components(self.T)

    @abstractmethod
    def sample_labels(self, h: np.ndarray, rng: np.random.Generator | None = None) -> np.ndarray:
        """Labels y (..., T, T) for indices h (..., T, T); rng only for noisy channels."""

    @abstractmethod
    def log_z_out(self, y: np.ndarray, omega: np.ndarray, V) -> np.ndarray:
        """log Z_out(y; ω, V) = log E_ζ P(y | from_z(ω + √V ζ)); omega (..., m) → (...)."""

    @abstractmethod
    def g_out(self, y: np.ndarray, omega: np.ndarray, V) -> np.ndarray:
        """g_out = ∂ log Z_out/∂ω, shape (..., m)."""

    @abstractmethod
    def information(self, q: float, Q0: float) -> float:
        """4 E_{ω, y}|g_out|² at the SE overlap q (so that q̂ = α · information)."""

    def precision(self, y: np.ndarray, omega: np.ndarray, V) -> np.ndarray:
        """Per-sample precision −Σ_k ∂g_k/∂ω_k that GAMP-RIE sums into A (``amp``), shape (...).

        The default is |g_out|², the form of ``docs/paper1.md`` §5: equal to
        −tr ∂g_out/∂ω in expectation over y ~ Z_out(·; ω, V) by the Nishimori
        identity (tested for the Bayes channels).  Channels with an exact,
        label-independent value override it (softmax).
        """
        g = self.g_out(y, omega, V)
        return np.sum(g * g, axis=-1)

    def q_hat(self, q: float, Q0: float, alpha: float) -> float:
        """Conjugate overlap q̂ = 4 α E|g_out|² (``docs/paper1.md`` §3.2, z-scale form)."""
        check_overlap(q, Q0)
        if not alpha > 0:
            raise ValueError(f"alpha must be > 0, got {alpha}")
        return alpha * self.information(q, Q0)

    def omega_std(self, q: float) -> np.ndarray:
        """Standard deviation of each z-scale component of ω at the SE overlap q: √(2q) (module notes)."""
        return np.full(self.m, math.sqrt(2.0 * q))

    def q_hat_monte_carlo(self, q: float, Q0: float, alpha: float, n_samples: int,
                          rng: np.random.Generator) -> tuple[float, float]:
        """Generic Monte-Carlo estimate of q̂ and its standard error.

        Draws ω with independent components of standard deviations :meth:`omega_std`
        (√(2q) each for Gaussian tokens), z = ω + √V ζ, y = labels(z) and averages
        4α|g_out(y; ω, V)|².  It uses only the channel's data-side methods, so
        tests can hold every deterministic :meth:`information` override against it.
        """
        check_overlap(q, Q0)
        V = 2.0 * (Q0 - q)
        omega = self.omega_std(q) * rng.standard_normal((n_samples, self.m))
        z = omega + math.sqrt(V) * rng.standard_normal((n_samples, self.m))
        y = self.sample_labels(from_z_scale(z, self.T), rng)
        vals = 4.0 * alpha * np.sum(self.g_out(y, omega, V) ** 2, axis=-1)
        return float(vals.mean()), float(vals.std(ddof=1) / math.sqrt(n_samples))


def check_overlap(q, Q0):
    """ValueError unless 0 <= q < Q0 (a state-evolution overlap)."""
    if not (0.0 <= q < Q0):
        raise ValueError(f"the overlap q must satisfy 0 <= q < Q0 = {Q0}, got q={q}")


def check_variance(V):
    """V as an array; ValueError unless every entry is > 0 (the variance of z given ω)."""
    V = np.asarray(V, dtype=float)
    if np.any(~(V > 0)):
        raise ValueError(f"the variance V must be > 0, got {V}")
    return V


# ---------------------------------------------------------------------------
# softmax


@dataclass(frozen=True)
class Softmax(OutputChannel):
    """Row softmax y_ab = exp(β h_ab)/Σ_c exp(β h_ac), any T ≥ 2, any β > 0 (§3.3).

    The labels fix h up to one global shift of all T² entries (rows are
    shift-invariant, h is symmetric), i.e. up to the direction τ in z-scale.
    With z_y = τ ⊙ ψ/β a particular solution (ψ_ab = φ_ab + φ_Ta,
    φ_ab = log y_ab − log y_aT) and P⊥ the projector orthogonal to τ, the
    channel is a noiseless linear measurement of P⊥ z:

        log Z_out = −|P⊥(ω − z_y)|²/(2V) − (m − 1)/2 · log(2πV),
        g_out = −P⊥(ω − z_y)/V,
        information = 4(m − 1)/V = (T² + T − 2)/(Q0 − q)  (independent of β).

    ``log_z_out`` is a density on the (m − 1)-dimensional label manifold.
    """

    beta: float = 1.0
    name: ClassVar[str] = "softmax"

    def __post_init__(self):
        super().__post_init__()
        if not (math.isfinite(self.beta) and self.beta > 0):
            raise ValueError(f"beta must be a finite number > 0, got {self.beta}")

    def sample_labels(self, h, rng=None):
        return apply_link(h, "softmax", beta=self.beta)

    def _residual(self, y, omega):
        """P⊥(ω − z_y), the part of ω the labels contradict."""
        y = np.asarray(y, dtype=float)
        with np.errstate(divide="ignore"):
            # an underflowed label (y = 0) is an impossible observation here: -inf propagates to the caller
            log_y = np.log(y)
        phi = log_y - log_y[..., -1:]
        psi = phi + np.swapaxes(phi[..., -1:, :], -1, -2)  # ψ_ab = φ_ab + φ_Ta
        z_y = to_z_scale(psi) / self.beta
        tau = tau_vector(self.T)
        diff = np.asarray(omega, dtype=float) - z_y
        return diff - tau * (diff @ tau)[..., None] / (self.T * self.T)

    def log_z_out(self, y, omega, V):
        V = check_variance(V)
        r = self._residual(y, omega)
        return -np.sum(r * r, axis=-1) / (2.0 * V) - 0.5 * (self.m - 1) * np.log(2.0 * np.pi * V)

    def g_out(self, y, omega, V):
        V = check_variance(V)
        return -self._residual(y, omega) / np.asarray(V)[..., None]

    def information(self, q, Q0):
        check_overlap(q, Q0)
        return (self.T * self.T + self.T - 2) / (Q0 - q)

    def precision(self, y, omega, V):
        """Exactly −tr ∂g_out/∂ω = tr P⊥/V = (m − 1)/V for every sample.

        AMP uses this instead of the empirical |g_out|² (whose mean it equals):
        with n(m − 1) terms the latter fluctuates by a few per cent at d = 100,
        and beyond α_PR it lets AMP lock into an over-confident state (error
        0.02 with predicted error 1e−4 at ρ = 0.5, α = 0.25, d = 100; measured).
        """
        V = check_variance(V)
        shape = np.broadcast_shapes(np.shape(omega)[:-1], np.shape(V))
        return np.full(shape, (self.m - 1) / V)


# ---------------------------------------------------------------------------
# hardmax, T = 2

#: Inner nodes per axis of the 2-D rule behind :meth:`Hardmax2.information`.
HARDMAX_NODES = 64

#: Half-width of the inner region of each κ axis, where the integrand has its O(1) structure.
HARDMAX_INNER = 9.0

#: The 2-D rule covers the Gaussian weight out to this many standard deviations.
HARDMAX_SIGMAS = 11.0

#: Hardmax2 with a diagonal excess integrates on principal axes when the minor variance of κ is
#: below this (a ridge the κ tensor rule cannot resolve); both rules agree to 1e-13 from 0.17 to 6,
#: and doubling the nodes moves each by < 1e-12 on its side of the switch (measured, tests).
PRINCIPAL_RULE_BELOW = 1.0

#: Terms of the SE expectation with Φ2 below this are dropped (see _information_integrand).
INFO_MASK = 1e-15


@dataclass(frozen=True)
class Hardmax2(OutputChannel):
    """Hardmax (β → ∞) output for T = 2 with the exact derivative of log Φ2 (§3.4).

    Labels s1 = sign(h11 − h12), s2 = sign(h22 − h12) (row-wise one-hot of the
    argmax).  In z-scale, with m1 = ω11 − ω12/√2, m2 = ω22 − ω12/√2 and
    r = √(3V/2), κ_i = s_i m_i/r and ϱ = s1 s2/3:

        Z_out = Φ2(κ1, κ2; ϱ),
        g11 = s1 L1/r,  g22 = s2 L2/r,  g12 = −(s1 L1 + s2 L2)/(√2 r),

    where L_i = ∂_{κ_i} log Φ2 = φ(κ_i) Φ((κ_j − ϱκ_i)/√(1 − ϱ²))/Φ2.

    ``diagonal_excess`` e is the extra variance of each diagonal ω_aa in the SE
    (``docs/paper1.md`` §13: e = κ₄ρ for tokens of excess kurtosis κ₄; 0, the
    papers' Gaussian tokens, by default).  It changes only :meth:`information`:
    κ then has variances (3q + e)/r² and covariance s1 s2 q/r², r² = 3(Q0 − q).

    Numerics
    --------
    ``log_z_out`` and ``g_out`` work in log space through ``_gauss`` and stay
    finite for |κ| up to the range ``_gauss`` supports (tested at |κ| = 40).
    :meth:`information` reduces the SE expectation over ω ∈ R³ and the four
    labels to two 2-D Gaussian integrals in κ (one per sign of ϱ; the labels
    (s1, s2) and (−s1, −s2) give equal terms) and integrates them with a
    tensor product of composite Gauss–Legendre rules: dense on |κ| ≤ 9, where
    the integrand has its O(1) structure near the label boundaries, and
    coarser beyond, where only the Gaussian weight of variance λ = q/(Q0 − q)
    varies.  Doubling the nodes moves the result by less than 1e−10 up to
    λ = 10³ (tests).
    """

    T: int = 2
    diagonal_excess: float = 0.0
    name: ClassVar[str] = "hardmax"

    def __post_init__(self):
        super().__post_init__()
        if self.T != 2:
            raise ValueError(f"the hardmax channel is implemented for T = 2 only, got T={self.T}")
        if not (isinstance(self.diagonal_excess, (int, float, np.floating)) and math.isfinite(self.diagonal_excess)):
            raise ValueError(f"diagonal_excess must be a finite number, got {self.diagonal_excess!r}")

    def omega_std(self, q):
        std = super().omega_std(q)
        variance = 2.0 * q + self.diagonal_excess
        if variance < -1e-12 * max(1.0, abs(self.diagonal_excess)):  # below rounding of q = Q0 - v
            raise ValueError(f"the diagonal variance of omega, 2q + diagonal_excess = {variance:g}, is negative "
                             f"(q={q:g}, diagonal_excess={self.diagonal_excess:g}): q is below the "
                             f"uninformative overlap of this token law")
        std[[0, 2]] = math.sqrt(max(variance, 0.0))
        return std

    def sample_labels(self, h, rng=None):
        return apply_link(h, "hardmax")

    # -- shared pieces ------------------------------------------------------
    @staticmethod
    def _signs(y):
        y = np.asarray(y, dtype=float)
        s1 = np.where(y[..., 0, 0] > 0.5, 1.0, -1.0)
        s2 = np.where(y[..., 1, 1] > 0.5, 1.0, -1.0)
        return s1, s2

    @staticmethod
    def _kappas(s1, s2, omega, V):
        omega = np.asarray(omega, dtype=float)
        r = np.sqrt(1.5 * V)
        half_off = omega[..., 1] / math.sqrt(2.0)
        k1 = s1 * (omega[..., 0] - half_off) / r
        k2 = s2 * (omega[..., 2] - half_off) / r
        return k1, k2, r

    def _slopes(self, k1, k2, corr, log_phi2):
        """L_i = ∂_{κ_i} log Φ2(κ1, κ2; ϱ), from logs (this is where Hardmax2Paper differs).

        κ is finite here (finite ω, V > 0), so log Φ2 is finite and the
        difference of logs never meets −inf − (−inf); reusing log Φ2 halves the
        cost against ``_gauss.dlog_ndtr2``, which would recompute it.
        """
        log_d1, log_d2 = _gauss.log_dndtr2(k1, k2, corr)
        return np.exp(log_d1 - log_phi2), np.exp(log_d2 - log_phi2)

    # -- contract -----------------------------------------------------------
    def log_z_out(self, y, omega, V):
        V = check_variance(V)
        s1, s2 = self._signs(y)
        k1, k2, _ = self._kappas(s1, s2, omega, V)
        return _gauss.log_ndtr2(k1, k2, s1 * s2 / 3.0)

    def g_out(self, y, omega, V):
        V = check_variance(V)
        s1, s2 = self._signs(y)
        k1, k2, r = self._kappas(s1, s2, omega, V)
        corr = s1 * s2 / 3.0
        l1, l2 = self._slopes(k1, k2, corr, _gauss.log_ndtr2(k1, k2, corr))
        a1 = s1 * l1 / r
        a2 = s2 * l2 / r
        return np.stack([a1, -(a1 + a2) / math.sqrt(2.0), a2], axis=-1)

    def information(self, q, Q0):
        check_overlap(q, Q0)
        return self._information(q, Q0, HARDMAX_NODES)

    def _information(self, q, Q0, n_nodes):
        """4 E|g|² = (8/r²) Σ_{ϱ=±1/3} E_{κ~N(0, λΣ)} Φ2 (L1² + L2² + (L1 + sgn ϱ L2)²/2).

        Σ has unit diagonal and off-diagonal ϱ·3q/(3q + e); λ = (3q + e)/r²
        (λ = q/(Q0 − q) and Σ_12 = ϱ for Gaussian tokens, e = 0).
        """
        r2 = 3.0 * (Q0 - q)
        if self.diagonal_excess:
            self.omega_std(q)  # a negative diagonal variance raises the clear error here
        # without an excess, exactly the Gaussian expression (the same bits as before the token laws)
        lam = (3.0 * q + self.diagonal_excess) / r2 if self.diagonal_excess else q / (Q0 - q)
        total = 0.0
        for corr in (1.0 / 3.0, -1.0 / 3.0):
            if lam == 0.0:
                k1 = k2 = np.zeros(1)
                weights = np.ones(1)
            elif self.diagonal_excess and (2.0 * q + self.diagonal_excess) / r2 < PRINCIPAL_RULE_BELOW:
                # a narrow ridge: principal axes, the shared ω12 (along (1, ±1)) and the
                # diagonal ω_aa, whose variance (2q + e)/r² vanishes at q = ρ for Rademacher
                k1, k2, weights = _principal_rule_2d((4.0 * q + self.diagonal_excess) / r2,
                                                     (2.0 * q + self.diagonal_excess) / r2,
                                                     math.copysign(1.0, corr), n_nodes)
            else:
                weight_corr = corr if not self.diagonal_excess else corr * 3.0 * q / (3.0 * q + self.diagonal_excess)
                k1, k2, weights = _gaussian_rule_2d(lam, weight_corr, n_nodes)
            total += np.sum(weights * self._information_integrand(k1, k2, corr))
        return 8.0 * total / r2

    def _information_integrand(self, k1, k2, corr):
        """Φ2 (L1² + L2² + (L1 + sgn ϱ L2)²/2) = (D1² + D2² + (D1 + sgn ϱ D2)²/2)/Φ2, D_i = ∂_{κ_i}Φ2.

        Only the *absolute* error matters in this expectation, so Φ2 comes from
        Owen's formula (``_gauss.ndtr2``, absolute error ~1e-17) rather than the
        tail-accurate log; where Φ2 < INFO_MASK the term is dropped: it is at most
        Φ2 (|κ| + 2)² ≲ 1e-13 there, and 0/0 would follow.  (This mask lives in
        the SE sum only; ``g_out``, which AMP calls, never masks.)
        """
        phi2 = _gauss.ndtr2(k1, k2, corr)
        d1, d2 = self._derivatives(k1, k2, corr)
        keep = phi2 > INFO_MASK
        numerator = d1 * d1 + d2 * d2 + 0.5 * (d1 + math.copysign(1.0, corr) * d2) ** 2
        return np.divide(numerator, phi2, out=np.zeros_like(phi2), where=keep)

    def _derivatives(self, k1, k2, corr):
        """∂_{κ1}Φ2, ∂_{κ2}Φ2 = φ(κ_i) Φ((κ_j − ϱ κ_i)/√(1 − ϱ²)) (Hardmax2Paper replaces both by φ2)."""
        s = math.sqrt(1.0 - corr * corr)
        from scipy.special import ndtr  # here: the softmax channel never needs scipy (fast start-up)

        return (np.exp(_gauss.log_phi(k1)) * ndtr((k2 - corr * k1) / s),
                np.exp(_gauss.log_phi(k2)) * ndtr((k1 - corr * k2) / s))


@dataclass(frozen=True)
class Hardmax2Paper(Hardmax2):
    """The published hardmax code's channel derivative (erratum B1, ``docs/paper1.md`` §9).

    Identical to :class:`Hardmax2` except that both slopes L1, L2 are replaced
    by φ2(κ1, κ2; ϱ)/Φ2, the bivariate normal *density* over the CDF, as in
    the authors' ``SE_hardmax.py`` and ``AMP_hardmax.py``.  That is not the
    derivative of log Φ2 (finite differences and the Nishimori identity both
    fail, see the tests), and it makes the state evolution report a larger
    error than the Bayes-optimal one: e.g. ρ = 0.5, α = 0.3 gives ≈ 0.63 with
    this formula, as in the published Figure 1, against ≈ 0.37 with the
    correct derivative.  Kept only to regenerate the figure as published.
    ``log_z_out`` is the correct one; only ``g_out`` (and hence the SE) differ.
    """

    name: ClassVar[str] = "hardmax_paper"

    @staticmethod
    def _log_density(k1, k2, corr):
        """log φ2(κ1, κ2; ϱ), the bivariate normal density."""
        corr = np.asarray(corr, dtype=float)
        one_minus = 1.0 - corr * corr
        return (-(k1 * k1 - 2.0 * corr * k1 * k2 + k2 * k2) / (2.0 * one_minus)
                - np.log(2.0 * np.pi * np.sqrt(one_minus)))

    def _slopes(self, k1, k2, corr, log_phi2):
        ratio = np.exp(self._log_density(k1, k2, corr) - log_phi2)
        return ratio, ratio

    def _derivatives(self, k1, k2, corr):
        density = np.exp(self._log_density(k1, k2, corr))
        return density, density


def _axis_rule(half_width: float, n_inner: int, n_outer: int, inner_width: float = HARDMAX_INNER):
    """Composite Gauss–Legendre rule on [−B, B] for one κ axis.

    The integrand varies on an O(1) scale for |κ| ≤ HARDMAX_INNER (the label
    boundaries) and only through the Gaussian weight beyond; the inner part gets
    ``n_inner`` nodes and each outer part ``n_outer``.
    """
    inner = min(half_width, inner_width)
    t, w = np.polynomial.legendre.leggauss(n_inner)
    nodes, weights = [t * inner], [w * inner]
    if half_width > inner:
        t, w = np.polynomial.legendre.leggauss(n_outer)
        half = (half_width - inner) / 2.0
        right = inner + half * (t + 1.0)
        nodes += [-right[::-1], right]
        weights += [w[::-1] * half, w * half]
    order = np.argsort(np.concatenate(nodes))
    return np.concatenate(nodes)[order], np.concatenate(weights)[order]


def _gaussian_rule_2d(lam: float, corr: float, n_nodes: int):
    """Nodes (k1, k2) and weights for E f(κ), κ ~ N(0, λ [[1, ϱ], [ϱ, 1]]).

    Tensor product of :func:`_axis_rule` covering HARDMAX_SIGMAS standard
    deviations of the widest direction; the weights carry the Gaussian density.
    ``n_nodes`` is the inner node count; each outer part gets half of it.
    """
    half_width = HARDMAX_SIGMAS * math.sqrt(lam * (1.0 + abs(corr)))
    k, jac = _axis_rule(half_width, n_nodes, n_nodes // 2)
    k1, k2 = np.meshgrid(k, k, indexing="ij")
    jac2 = np.outer(jac, jac)
    # Beyond |κ| = HARDMAX_INNER in *both* coordinates both labels are decided and
    # the integrand is below e^{-40}: those blocks are dropped.
    keep = (np.abs(k1) <= HARDMAX_INNER) | (np.abs(k2) <= HARDMAX_INNER)
    k1, k2, jac2 = k1[keep], k2[keep], jac2[keep]
    one_minus = 1.0 - corr * corr
    quad_form = (k1 * k1 - 2.0 * corr * k1 * k2 + k2 * k2) / (lam * one_minus)
    density = np.exp(-0.5 * quad_form) / (2.0 * np.pi * lam * math.sqrt(one_minus))
    return k1, k2, density * jac2


def _principal_rule_2d(var_major: float, var_minor: float, sign: float, n_nodes: int):
    """Nodes (k1, k2) and weights for E f(κ), κ = y₁(1, s)/√2 + y₂(1, −s)/√2, y_i ~ N(0, var_i) independent.

    The κ-law of the hardmax SE with a diagonal excess (``Hardmax2``): its
    covariance has equal diagonals and may be singular (var_minor = 0, a
    one-dimensional law along (1, s)), where the tensor rule of
    :func:`_gaussian_rule_2d` in κ fails.  Each principal axis gets the
    composite rule of :func:`_axis_rule` over HARDMAX_SIGMAS standard deviations,
    dense within √2 HARDMAX_INNER (the label boundaries κ_i = 0 cross both axes
    there); a zero variance gets the single node 0.  Cost O(n_nodes²).
    """
    axes = []
    for variance in (var_major, var_minor):
        if variance <= 0.0:
            axes.append((np.zeros(1), np.ones(1)))
            continue
        std = math.sqrt(variance)
        y, jac = _axis_rule(HARDMAX_SIGMAS * std, n_nodes, n_nodes // 2, math.sqrt(2.0) * HARDMAX_INNER)
        axes.append((y, jac * np.exp(-0.5 * (y / std) ** 2) / (math.sqrt(2.0 * np.pi) * std)))
    (y1, w1), (y2, w2) = axes
    y1, y2 = np.meshgrid(y1, y2, indexing="ij")
    k1 = (y1 + y2) / math.sqrt(2.0)
    k2 = sign * (y1 - y2) / math.sqrt(2.0)
    return k1.ravel(), k2.ravel(), np.outer(w1, w2).ravel()


# ---------------------------------------------------------------------------
# registry

CHANNELS: dict[str, type[OutputChannel]] = {c.name: c for c in (Softmax, Hardmax2, Hardmax2Paper)}


def make_channel(name: str, *, T: int, beta: float | None = None) -> OutputChannel:
    """Build a channel from its config/CLI name.

    Parameters
    ----------
    name : one of ``CHANNELS`` ("softmax", "hardmax", "hardmax_paper")
    T : number of tokens (hardmax channels: T = 2)
    beta : inverse temperature, softmax only (default 1)
    """
    if name not in CHANNELS:
        raise ValueError(f"channel must be one of {sorted(CHANNELS)}, got {name!r}")
    if name == "softmax":
        return Softmax(T=T, beta=1.0 if beta is None else float(beta))
    if beta is not None and not math.isinf(beta):
        raise ValueError(f"beta applies to the softmax channel only (hardmax is beta = inf), got beta={beta}")
    return CHANNELS[name](T=T)
