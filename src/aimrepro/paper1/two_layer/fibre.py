"""The two-layer output channel at T = 2: the label as two numbers, and the posterior on its fibre.

``docs/paper1.md`` §14.2–13.3.  With T = 2 tokens the centred indices of layer ℓ
are a symmetric 2×2 array H_ℓ; only its row differences matter,

    d = (H₁,₁₁ − H₁,₁₂, H₁,₂₂ − H₁,₁₂)   (layer 1),    e = the same of H₂   (layer 2),

because a common shift of all entries changes neither softmax.  With
s_i = sigmoid(d_i) (row i of the layer-1 softmax puts s_i on its own token),
κ = c + s₁ + s₂ − 1 and B₀ = [[c + s₁, s₁ − 1], [s₂ − 1, c + s₂]], the label
y = softmax(A H₂ Aᵀ), A = c I + softmax(H₁), is equivalent to its row log-odds

    u = (log y₁₁/y₁₂, log y₂₂/y₂₁) = K(d) e,      K(d) = κ B₀,   det K = (c + 1) κ³.

Given u, every d fixes e = K(d)⁻¹ u: the set of (d, e) compatible with a label
is a two-dimensional *fibre* parametrised by d.  Under a Gaussian prior
(d, e) ~ N(m, V ⊗ Σ), Σ = [[3, 1], [1, 3]] (a row difference of a unit-variance
index array; V the 2×2 covariance of the layers), the density of the label is

    Z_out(u) = ∫ dd N(d; m_d, V₁₁Σ) N(K(d)⁻¹u; m_e + (V₁₂/V₁₁)(d − m_d), V₂|₁Σ) / |det K(d)|,

V₂|₁ = V₂₂ − V₁₂²/V₁₁, and the posterior of (d, e) given u is this integrand
carried onto the fibre.  :func:`fibre_moments` returns log Z_out and the
posterior mean and covariance of (d, e) per sample.

Coordinates of the fibre (§14.3)
--------------------------------
The integrand is singular where κ → 0 (there e = K⁻¹u blows up like 1/κ²);
for c < 1 the line κ = 0 cuts the d-plane in two, and for c ≤ 1 its neighbourhood
carries curved ridges of posterior mass.  For c < :data:`PLANE_SKIP` = 2 the
integral is therefore done per *branch* (sign of κ; one branch for c ≥ 1) in
coordinates (η, θ):

    κ = κ_lo + (κ_hi − κ_lo) sigmoid(η)   (branch +: κ_lo = max(0, c − 1), κ_hi = c + 1),
    κ = (c − 1) sigmoid(η)                (branch −, c < 1),
    θ = d₁ − d₂,

so that level sets of κ, along which the ridges lie, are lines of constant η.
Given (σ = s₁ + s₂ = κ + 1 − c, θ), the share with the lower logit solves a
quadratic (:func:`_lower_share`) and the other is σ minus it; 1 − s₁ and 1 − s₂
come the same way from σ̄ = 2 − σ and −θ, so that saturated shares keep their
relative accuracy.  dd = dκ dθ / (s₁(1 − s₁) + s₂(1 − s₂)).
For c ≥ 2, κ ≥ 1 and nothing is singular: the fibre is integrated in d itself,
where the prior is Gaussian (the (η, θ) map would skew the broad, prior-dominated
posterior of layer 1 at large c; measured: at c = 10, V = I, 10 nodes gave
posterior means off by O(1) in (η, θ) and 1e−4 in d).
In these coordinates the posterior of each branch is a single blob; it is
integrated by a Gauss–Hermite product rule on its Laplace approximation
(mode by Newton steps with finite-difference derivatives, covariance the
inverse Hessian inflated by :attr:`FibreRule.inflation`).  Accuracy (measured
against dense tensor grids, docs/paper1.md §14.3): posterior moments to ~1e−3
with 20 nodes per axis for broad, two-branch posteriors (c = 0, V ~ 1), to
~1e−6 for narrow ones; the Fisher averages built from them to ~2e−3.

Costs
-----
Per sample and branch: a scan of :data:`SCAN_NODES` points, ``newton_steps``
× ~11 evaluations, and ``nodes²`` Gauss–Hermite points; each evaluation is
O(1) vectorised arithmetic (four quadratic solves, logs).  ~0.15 ms per sample
and branch at 20 nodes on one core.  Memory O(chunk · nodes²).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import expit, logit, roots_hermitenorm

__all__ = ["FibreMoments", "FibreRule", "SIGMA", "SIGMA_INV", "branches", "check_skip", "differences", "PLANE_SKIP",
           "differences_from_z", "fibre_moments", "labels_from_differences", "log_abs_det", "posterior_grid",
           "solve_e", "Z_TO_DIFFERENCES"]

#: Covariance of a row-difference pair (h₁₁ − h₁₂, h₂₂ − h₁₂) of a symmetric index array whose
#: off-diagonal entries have unit variance (diagonal ones 2): [[3, 1], [1, 3]].
SIGMA = np.array([[3.0, 1.0], [1.0, 3.0]])
SIGMA_INV = np.linalg.inv(SIGMA)
_SIGMA_CHOL = np.linalg.cholesky(SIGMA)
_LOG_DET_SIGMA = math.log(8.0)

#: The z-scale index (z₁₁, z₁₂, z₂₂) = (h₁₁, √2 h₁₂, h₂₂) of ``channels`` mapped to the differences:
#: d = L z with L L ᵀ = Σ/2.
Z_TO_DIFFERENCES = np.array([[1.0, -1.0 / math.sqrt(2.0), 0.0], [0.0, -1.0 / math.sqrt(2.0), 1.0]])

#: Starting points of the mode search per branch: η on a grid, θ around the prior's mean.
SCAN_ETA = np.linspace(-12.0, 6.0, 13)
SCAN_THETA = np.linspace(-3.0, 3.0, 5)
SCAN_NODES = SCAN_ETA.size * SCAN_THETA.size

#: θ is clipped here before exponentials (|θ| beyond it is e^{−700}: no posterior mass).
_THETA_CLIP = 700.0


def check_skip(skip) -> float:
    """The skip strength c as a float; finite and >= 0 (c I + softmax(H₁) is the layer-1 attention)."""
    if isinstance(skip, bool) or not isinstance(skip, (int, float, np.integer, np.floating)) \
            or not (math.isfinite(skip) and skip >= 0):
        raise ValueError(f"skip (the skip strength c) must be a finite number >= 0, got {skip!r}")
    return float(skip)


# ---------------------------------------------------------------------------
# the T = 2 reduction


def differences(h: np.ndarray) -> np.ndarray:
    """Row differences (h₁₁ − h₁₂, h₂₂ − h₁₂) of symmetric 2×2 arrays: (..., 2, 2) → (..., 2)."""
    h = np.asarray(h, dtype=float)
    if h.shape[-2:] != (2, 2):
        raise ValueError(f"h must have shape (..., 2, 2), got {h.shape}")
    return np.stack([h[..., 0, 0] - h[..., 0, 1], h[..., 1, 1] - h[..., 0, 1]], axis=-1)


def differences_from_z(z: np.ndarray) -> np.ndarray:
    """The same from the z-scale components (z₁₁, z₁₂, z₂₂): (..., 3) → (..., 2)."""
    return np.asarray(z, dtype=float) @ Z_TO_DIFFERENCES.T


def _shares(d):
    s = expit(d)
    return s, expit(-d)


def labels_from_differences(d: np.ndarray, e: np.ndarray, skip: float) -> np.ndarray:
    """u = K(d) e = κ B₀ e, the row log-odds of the two-layer label (module notes): (..., 2)."""
    c = check_skip(skip)
    d = np.asarray(d, dtype=float)
    e = np.asarray(e, dtype=float)
    s, sbar = _shares(d)
    kappa = c + s[..., 0] + s[..., 1] - 1.0
    u1 = kappa * ((c + s[..., 0]) * e[..., 0] - sbar[..., 0] * e[..., 1])
    u2 = kappa * ((c + s[..., 1]) * e[..., 1] - sbar[..., 1] * e[..., 0])
    return np.stack([u1, u2], axis=-1)


def solve_e(d: np.ndarray, u: np.ndarray, skip: float) -> np.ndarray:
    """e = K(d)⁻¹ u = adj(B₀) u / ((c + 1) κ²), the layer-2 differences on the fibre of u at d."""
    c = check_skip(skip)
    s, sbar = _shares(np.asarray(d, dtype=float))
    u = np.asarray(u, dtype=float)
    kappa = c + s[..., 0] + s[..., 1] - 1.0
    den = (c + 1.0) * kappa * kappa
    return np.stack([((c + s[..., 1]) * u[..., 0] + sbar[..., 0] * u[..., 1]) / den,
                     (sbar[..., 1] * u[..., 0] + (c + s[..., 0]) * u[..., 1]) / den], axis=-1)


def log_abs_det(d: np.ndarray, skip: float) -> np.ndarray:
    """log |det K(d)| = log((c + 1)|κ|³) (the Jacobian of e ↦ u at fixed d)."""
    c = check_skip(skip)
    s = expit(np.asarray(d, dtype=float))
    return math.log(c + 1.0) + 3.0 * np.log(np.abs(c + s[..., 0] + s[..., 1] - 1.0))


# ---------------------------------------------------------------------------
# branch coordinates (η, θ)


@dataclass(frozen=True)
class _Branch:
    """κ ∈ (lo, hi) of one sign (``sign`` +1 or −1) in (η, θ); ``sign`` 0: the whole d-plane in d itself."""

    lo: float
    hi: float
    sign: int


#: From this skip on, κ >= c − 1 >= 1 never approaches 0: the fibre is integrated in d itself, where the
#: prior is Gaussian (the (η, θ) map skews a prior-dominated posterior, as layer 1's is at c = 10).
PLANE_SKIP = 2.0


def branches(skip: float) -> tuple[_Branch, ...]:
    """The branches of the fibre: κ > 0, and κ < 0 when c < 1; one d-plane for c >= PLANE_SKIP (module notes)."""
    c = check_skip(skip)
    if c >= PLANE_SKIP:
        return (_Branch(c - 1.0, c + 1.0, 0),)
    out = [_Branch(max(0.0, c - 1.0), c + 1.0, +1)]
    if c < 1.0:
        out.append(_Branch(c - 1.0, 0.0, -1))
    return tuple(out)


def _branch_map(eta, c, branch):
    """κ, σ = s₁ + s₂, σ̄ = 2 − σ and log|dκ/dη| at η, with σ and σ̄ free of cancellation."""
    small = np.exp(-np.abs(eta))
    p_small = small / (1.0 + small)      # sigmoid(−|η|)
    p_large = 1.0 / (1.0 + small)        # sigmoid(|η|)
    p = np.where(eta >= 0.0, p_large, p_small)
    q = np.where(eta >= 0.0, p_small, p_large)
    log_jac = -np.abs(eta) - 2.0 * np.log1p(small)   # log(sigmoid(η) sigmoid(−η))
    if branch.sign > 0:
        width = branch.hi - branch.lo
        kappa = branch.lo + width * p
        sigma = width * p if c >= 1.0 else (1.0 - c) + kappa
        sigma_bar = width * q
    else:
        width = 1.0 - c
        kappa = -width * p
        sigma = width * q
        sigma_bar = (1.0 + c) + width * p
    return kappa, sigma, sigma_bar, math.log(width) + log_jac


def _lower_share(sigma, t):
    """The share with the lower logit: s ∈ (0, 1) with s + s' = σ, logit s' − logit s = |θ|, t = e^{−|θ|}.

    s solves (1 − t)s² + (1 − σ + t(1 + σ))s − tσ = 0; its positive root is taken
    in the form without cancellation for either sign of the linear coefficient.
    The other share, σ − s, is then at least σ/2 (no cancellation either).  O(1) per point.
    """
    b = 1.0 - sigma + t * (1.0 + sigma)
    root = np.sqrt(np.maximum(b * b + 4.0 * (1.0 - t) * t * sigma, 0.0))
    denominator = np.where(b >= 0.0, b + root, 2.0 * (1.0 - t))
    numerator = np.where(b >= 0.0, 2.0 * t * sigma, root - b)
    with np.errstate(divide="ignore", invalid="ignore"):
        return numerator / denominator


@dataclass(frozen=True)
class _Problem:
    """The integrand's data for n samples: labels, prior means, layer covariance, skip."""

    u: np.ndarray        # (n, 2)
    m: np.ndarray        # (n, 4): prior mean of (d, e)
    V: np.ndarray        # (2, 2)
    c: float

    @property
    def slope(self) -> float:
        return float(self.V[0, 1] / self.V[0, 0])

    @property
    def v_cond(self) -> float:
        return float(self.V[1, 1] - self.V[0, 1] ** 2 / self.V[0, 0])

    @property
    def log_const(self) -> float:
        return (-2.0 * math.log(2.0 * math.pi) - _LOG_DET_SIGMA - math.log(self.V[0, 0])
                - math.log(self.v_cond) - math.log(self.c + 1.0))


def _log_density(problem, d1, d2, s1, s2, s1_bar, s2_bar, kappa):
    """log of the fibre integrand in d (all constants) and the points (d, e), from the shares and κ.

    Σ⁻¹ = [[3, −1], [−1, 3]]/8 is written out.  O(1) per point; −inf where nothing is finite.
    """
    c = problem.c
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        den = (c + 1.0) * kappa * kappa
        u = problem.u[:, None, :]
        e1 = ((c + s2) * u[..., 0] + s1_bar * u[..., 1]) / den
        e2 = (s2_bar * u[..., 0] + (c + s1) * u[..., 1]) / den
        m = problem.m[:, None, :]
        x1, x2 = d1 - m[..., 0], d2 - m[..., 1]
        r1 = e1 - m[..., 2] - problem.slope * x1
        r2 = e2 - m[..., 3] - problem.slope * x2
        quad_d = (3.0 * x1 * x1 - 2.0 * x1 * x2 + 3.0 * x2 * x2) / 8.0
        quad_e = (3.0 * r1 * r1 - 2.0 * r1 * r2 + 3.0 * r2 * r2) / 8.0
        log_p = (problem.log_const - 0.5 * quad_d / problem.V[0, 0] - 0.5 * quad_e / problem.v_cond
                 - 3.0 * np.log(np.abs(kappa)))
    return np.where(np.isfinite(log_p), log_p, -np.inf), np.stack(np.broadcast_arrays(d1, d2, e1, e2), axis=-1)


def _evaluate_plane(problem, d1, d2):
    """log integrand in d itself (the d-plane branch, c >= PLANE_SKIP), d and e; arrays (n, k)."""
    small1, small2 = np.exp(-np.abs(d1)), np.exp(-np.abs(d2))
    low1, high1 = small1 / (1.0 + small1), 1.0 / (1.0 + small1)
    low2, high2 = small2 / (1.0 + small2), 1.0 / (1.0 + small2)
    s1, s1_bar = np.where(d1 >= 0, high1, low1), np.where(d1 >= 0, low1, high1)
    s2, s2_bar = np.where(d2 >= 0, high2, low2), np.where(d2 >= 0, low2, high2)
    return _log_density(problem, d1, d2, s1, s2, s1_bar, s2_bar, (problem.c - 1.0) + s1 + s2)


def _evaluate(problem, branch, eta, theta):
    """log integrand in the branch's coordinates (log Z_out density, all constants), d and e; (n, k) points.

    (η, θ) for the κ branches, d itself for the plane (then ``eta``, ``theta`` are d₁, d₂).
    O(n k) elementwise work: two share solves and a few logs per point.
    """
    if branch.sign == 0:
        return _evaluate_plane(problem, eta, theta)
    c = problem.c
    theta = np.clip(theta, -_THETA_CLIP, _THETA_CLIP)
    kappa, sigma, sigma_bar, log_jac = _branch_map(eta, c, branch)
    t = np.exp(-np.abs(theta))
    positive = theta > 0.0
    # θ = logit s₁ − logit s₂ and −θ = logit(1 − s₁) − logit(1 − s₂): one quadratic per pair
    low = _lower_share(sigma, t)
    low_bar = _lower_share(sigma_bar, t)
    s1 = np.where(positive, sigma - low, low)
    s2 = np.where(positive, low, sigma - low)
    s1_bar = np.where(positive, low_bar, sigma_bar - low_bar)
    s2_bar = np.where(positive, sigma_bar - low_bar, low_bar)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        d1 = np.log(s1) - np.log(s1_bar)
        d2 = np.log(s2) - np.log(s2_bar)
        jacobian = log_jac - np.log(s1 * s1_bar + s2 * s2_bar)
    log_p, points = _log_density(problem, d1, d2, s1, s2, s1_bar, s2_bar, kappa)
    return np.where(np.isfinite(jacobian), log_p + jacobian, -np.inf), points


def _to_branch_coordinates(d, c, branch):
    """(η, θ) of points d (n, 2) in ``branch`` (NaN η for points of the other branch); d for the plane."""
    if branch.sign == 0:
        return d[:, 0], d[:, 1]
    s = expit(d)
    kappa = c + s[:, 0] + s[:, 1] - 1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        if branch.sign > 0:
            eta = logit((kappa - branch.lo) / (branch.hi - branch.lo))
        else:
            eta = logit(kappa / (c - 1.0))
    inside = (kappa > 0.0) if branch.sign > 0 else (kappa < 0.0)
    return np.where(inside, eta, np.nan), d[:, 0] - d[:, 1]


# ---------------------------------------------------------------------------
# Laplace approximation per branch and Gauss–Hermite integration


@dataclass(frozen=True)
class FibreRule:
    """Quadrature settings of :func:`fibre_moments` (docs/paper1.md §14.3).

    Parameters
    ----------
    nodes : Gauss–Hermite nodes per axis of each branch's Laplace rule, >= 2
    newton_steps : Newton steps of the mode search, >= 1
    inflation : factor on the Laplace standard deviations, >= 1 (heavier tails than the Laplace fit)
    chunk : samples integrated at once (memory O(chunk · nodes²)), >= 1
    """

    nodes: int = 20
    newton_steps: int = 6
    inflation: float = 1.2
    chunk: int = 512

    def __post_init__(self):
        for name, minimum in (("nodes", 2), ("newton_steps", 1), ("chunk", 1)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
                raise ValueError(f"FibreRule.{name} must be an integer >= {minimum}, got {value!r}")
        if not (isinstance(self.inflation, (int, float)) and math.isfinite(self.inflation)
                and self.inflation >= 1.0):
            raise ValueError(f"FibreRule.inflation must be a finite number >= 1, got {self.inflation!r}")

    def to_dict(self) -> dict:
        return {"nodes": int(self.nodes), "newton_steps": int(self.newton_steps),
                "inflation": float(self.inflation), "chunk": int(self.chunk)}


def _newton(problem, branch, x, steps):
    """Maximise the log integrand over (η, θ) per sample: finite-difference Newton with backtracking.

    The difference step follows the current posterior width (0.2 standard
    deviations), so narrow and broad blobs are both resolved.  Returns the
    modes (n, 2) and the negative Hessians (n, 2, 2), clipped to be positive
    definite.  O(n · steps) evaluations of 9 + up to 6 points.
    """
    n = x.shape[0]
    h = np.full((n, 2), 1e-2)
    H = np.broadcast_to(np.eye(2), (n, 2, 2)).copy()
    for _ in range(steps):
        e0, t0 = x[:, 0:1], x[:, 1:2]
        he, ht = h[:, 0:1], h[:, 1:2]
        eta = np.concatenate([e0, e0 + he, e0 - he, e0, e0, e0 + he, e0 - he, e0 + he, e0 - he], axis=1)
        theta = np.concatenate([t0, t0, t0, t0 + ht, t0 - ht, t0 + ht, t0 - ht, t0 - ht, t0 + ht], axis=1)
        f, _ = _evaluate(problem, branch, eta, theta)
        f0 = f[:, 0]
        with np.errstate(invalid="ignore"):
            grad = np.stack([(f[:, 1] - f[:, 2]) / (2.0 * he[:, 0]), (f[:, 3] - f[:, 4]) / (2.0 * ht[:, 0])], 1)
            hee = (f[:, 1] - 2.0 * f0 + f[:, 2]) / he[:, 0] ** 2
            htt = (f[:, 3] - 2.0 * f0 + f[:, 4]) / ht[:, 0] ** 2
            het = (f[:, 5] + f[:, 6] - f[:, 7] - f[:, 8]) / (4.0 * he[:, 0] * ht[:, 0])
        H = -np.stack([np.stack([hee, het], -1), np.stack([het, htt], -1)], -2)
        ok = np.all(np.isfinite(H), axis=(1, 2)) & np.all(np.isfinite(grad), axis=1)
        H = np.where(ok[:, None, None], H, np.eye(2))
        grad = np.where(ok[:, None], grad, 0.0)
        w, Q = np.linalg.eigh(H)
        # curvatures between that of a posterior 10 units wide and one 1e−8 wide: H stays invertible
        w = np.clip(w, 1e-2, 1e16)
        H = (Q * w[:, None, :]) @ np.swapaxes(Q, 1, 2)
        step = np.einsum("nij,nj->ni", Q, np.einsum("nji,nj->ni", Q, grad) / w)
        length = np.sqrt(np.einsum("ni,nij,nj->n", step, H, step))
        step *= np.minimum(1.0, 3.0 / np.maximum(length, 1e-300))[:, None]
        scale = np.ones(n)
        for _ in range(6):
            trial, _ = _evaluate(problem, branch, (x[:, 0] + scale * step[:, 0])[:, None],
                                 (x[:, 1] + scale * step[:, 1])[:, None])
            worse = ~(trial[:, 0] >= f0)
            if not worse.any():
                break
            scale = np.where(worse, scale / 4.0, scale)
        better = trial[:, 0] >= f0
        x = np.where(better[:, None], x + scale[:, None] * step, x)
        cov = (Q / w[:, None, :]) @ np.swapaxes(Q, 1, 2)
        h = np.clip(0.2 * np.sqrt(np.stack([cov[:, 0, 0], cov[:, 1, 1]], 1)), 1e-7, 1.0)
    return x, H


def _start(problem, branch, starts, scan=True):
    """Best of the scan grid (if ``scan``) and the given starting points (each (n, 2), NaN rows ignored).

    The plane's scan is a 5×5 grid of ±2 prior standard deviations around m_d.
    """
    n = problem.u.shape[0]
    theta0 = problem.m[:, 0] - problem.m[:, 1]
    spread = 2.0 * math.sqrt(problem.V[0, 0])
    candidates_eta, candidates_theta = [], []
    if branch.sign == 0:
        offsets = math.sqrt(3.0 * problem.V[0, 0]) * np.linspace(-2.0, 2.0, 5)
        grid1, grid2 = np.meshgrid(offsets, offsets, indexing="ij")
        candidates_eta.append(problem.m[:, 0:1] + grid1.ravel()[None, :])
        candidates_theta.append(problem.m[:, 1:2] + grid2.ravel()[None, :])
        scan = False
        theta0 = problem.m[:, 1]
    if scan:
        candidates_eta.append(np.broadcast_to(np.repeat(SCAN_ETA, SCAN_THETA.size), (n, SCAN_NODES)))
        candidates_theta.append(theta0[:, None] + spread * np.tile(SCAN_THETA, SCAN_ETA.size)[None, :])
    elif branch.sign != 0:
        candidates_eta.append(np.broadcast_to(SCAN_ETA, (n, SCAN_ETA.size)))
        candidates_theta.append(np.repeat(theta0[:, None], SCAN_ETA.size, axis=1))
    for start in starts:
        if start is None:
            continue
        usable = np.all(np.isfinite(start), axis=1)
        fallback = problem.m[:, 0] if branch.sign == 0 else SCAN_ETA[0]
        candidates_eta.append(np.where(usable, start[:, 0], fallback)[:, None])
        candidates_theta.append(np.where(usable, start[:, 1], theta0)[:, None])
    eta = np.concatenate(candidates_eta, axis=1)
    theta = np.concatenate(candidates_theta, axis=1)
    f, _ = _evaluate(problem, branch, eta, theta)
    best = np.argmax(f, axis=1)
    rows = np.arange(n)
    return np.stack([eta[rows, best], theta[rows, best]], axis=1)


@dataclass(frozen=True)
class FibreMoments:
    """Posterior of (d, e) given the labels, per sample (module notes).

    Attributes
    ----------
    log_z : (n,) log Z_out(u), the log density of the label u given the prior N(m, V ⊗ Σ)
    mean : (n, 4) posterior mean of (d₁, d₂, e₁, e₂)
    cov : (n, 4, 4) posterior covariance
    modes : (n, B, 2) the modes (η, θ) found per branch, for warm starts (:func:`fibre_moments`)
    """

    log_z: np.ndarray
    mean: np.ndarray
    cov: np.ndarray
    modes: np.ndarray


@dataclass(frozen=True)
class _GaussHermite:
    x: np.ndarray
    y: np.ndarray
    log_w: np.ndarray


def _gauss_hermite_2d(nodes):
    t, w = roots_hermitenorm(nodes)
    w = w / w.sum()
    X, Y = np.meshgrid(t, t, indexing="ij")
    return _GaussHermite(X.ravel(), Y.ravel(), np.log(np.outer(w, w).ravel()) + 0.5 * (X ** 2 + Y ** 2).ravel())


def _check_problem(u, m, V, skip):
    c = check_skip(skip)
    u = np.atleast_2d(np.asarray(u, dtype=float))
    m = np.atleast_2d(np.asarray(m, dtype=float))
    V = np.asarray(V, dtype=float)
    if u.ndim != 2 or u.shape[1] != 2:
        raise ValueError(f"u must have shape (n, 2), got {u.shape}")
    if m.shape != (u.shape[0], 4):
        raise ValueError(f"m must have shape ({u.shape[0]}, 4) to match u, got {m.shape}")
    if V.shape != (2, 2) or not np.allclose(V, V.T):
        raise ValueError(f"V must be a symmetric 2x2 matrix, got {V!r}")
    if not (np.all(np.isfinite(V)) and V[0, 0] > 0 and V[1, 1] - V[0, 1] ** 2 / V[0, 0] > 0):
        raise ValueError(f"V must be positive definite (layer covariance of the indices), got {V.tolist()}")
    if not (np.all(np.isfinite(u)) and np.all(np.isfinite(m))):
        raise ValueError("u and m must be finite")
    return _Problem(u, m, V, c)


def fibre_moments(u, m, V, skip, *, rule: FibreRule = FibreRule(), truth=None, start=None) -> FibreMoments:
    """log Z_out and the posterior mean and covariance of (d, e) on the fibre of each label.

    Parameters
    ----------
    u : (n, 2) labels as row log-odds (:func:`labels_from_differences`)
    m : (n, 4) prior means of (d₁, d₂, e₁, e₂)
    V : (2, 2) layer covariance of the indices (positive definite; the prior covariance is V ⊗ Σ)
    skip : the skip strength c >= 0
    rule : :class:`FibreRule`
    truth : optional (n, 4) points on the fibres (the teacher's (d, e) in the SE: a posterior draw),
        used as starting points of the mode search in their own branch
    start : optional (n, B, 2) modes of an earlier call (``FibreMoments.modes``), as warm starts

    Returns
    -------
    FibreMoments
        Time O(n · B · (SCAN_NODES + 11 newton_steps + nodes²)), B branches; memory O(chunk · nodes²).
    """
    problem = _check_problem(u, m, V, skip)
    n = problem.u.shape[0]
    branch_list = branches(problem.c)
    if truth is not None:
        truth = np.asarray(truth, dtype=float)
        if truth.shape != (n, 4):
            raise ValueError(f"truth must have shape ({n}, 4), got {truth.shape}")
    if start is not None:
        start = np.asarray(start, dtype=float)
        if start.shape != (n, len(branch_list), 2):
            raise ValueError(f"start must have shape ({n}, {len(branch_list)}, 2), got {start.shape}")
    log_z = np.empty(n)
    mean = np.empty((n, 4))
    cov = np.empty((n, 4, 4))
    modes = np.empty((n, len(branch_list), 2))
    rule_points = _gauss_hermite_2d(rule.nodes)
    for lo in range(0, n, rule.chunk):
        rows = slice(lo, min(n, lo + rule.chunk))
        part = _Problem(problem.u[rows], problem.m[rows], problem.V, problem.c)
        out = _integrate(part, branch_list, rule, rule_points,
                         None if truth is None else truth[rows], None if start is None else start[rows])
        log_z[rows], mean[rows], cov[rows], modes[rows] = out
    return FibreMoments(log_z, mean, cov, modes)


def _integrate(problem, branch_list, rule, gh, truth, start):
    pieces, found = [], []
    for b, branch in enumerate(branch_list):
        starts = [None if start is None else start[:, b]]
        if truth is not None:
            eta, theta = _to_branch_coordinates(truth[:, :2], problem.c, branch)
            starts.append(np.stack([eta, theta], axis=1))
        # a warm start (modes of the previous call) replaces the full scan by a line of η at the prior's θ
        x = _start(problem, branch, starts, scan=start is None)
        x, H = _newton(problem, branch, x, rule.newton_steps)
        found.append(x)
        w, Q = np.linalg.eigh(H)
        L = np.linalg.cholesky((Q / w[:, None, :]) @ np.swapaxes(Q, 1, 2)) * rule.inflation
        eta = x[:, 0:1] + L[:, 0, 0:1] * gh.x[None] + L[:, 0, 1:2] * gh.y[None]
        theta = x[:, 1:2] + L[:, 1, 0:1] * gh.x[None] + L[:, 1, 1:2] * gh.y[None]
        log_p, points = _evaluate(problem, branch, eta, theta)
        log_volume = np.log(L[:, 0, 0] * L[:, 1, 1]) + math.log(2.0 * math.pi)
        pieces.append((log_p + gh.log_w[None] + log_volume[:, None], points))
    log_w = np.concatenate([p[0] for p in pieces], axis=1)
    points = np.concatenate([p[1] for p in pieces], axis=1)
    top = np.max(log_w, axis=1, keepdims=True)
    weights = np.exp(log_w - top)
    total = weights.sum(axis=1)
    weights /= total[:, None]
    points = np.where(weights[..., None] > 0.0, points, 0.0)  # no inf * 0 from nodes without mass
    mean = np.matmul(weights[:, None, :], points)[:, 0, :]
    centred = points - mean[:, None, :]
    cov = np.matmul(np.swapaxes(centred * weights[..., None], 1, 2), centred)
    return np.log(total) + top[:, 0], mean, cov, np.stack(found, axis=1)


def posterior_grid(u, m, V, skip, *, n: int = 600, eta_range=(-25.0, 12.0), theta_halfwidth=None):
    """Reference: log Z_out and posterior mean of (d, e) of ONE sample by a dense uniform grid per branch.

    For tests and accuracy measurements only: O(B n²) evaluations.
    """
    problem = _check_problem(u, m, V, skip)
    if problem.u.shape[0] != 1:
        raise ValueError("posterior_grid integrates one sample")
    theta0 = problem.m[0, 0] - problem.m[0, 1]
    half = theta_halfwidth if theta_halfwidth is not None else 14.0 * math.sqrt(problem.V[0, 0]) + 6.0
    eta = np.linspace(*eta_range, n)
    theta = np.linspace(theta0 - half, theta0 + half, n)
    E, Th = np.meshgrid(eta, theta, indexing="ij")
    cell = (eta[1] - eta[0]) * (theta[1] - theta[0])
    logs, points = [], []
    for branch in branches(problem.c):
        log_p, pts = _evaluate(problem, branch, E.ravel()[None], Th.ravel()[None])
        logs.append(log_p[0])
        points.append(pts[0])
    log_p = np.concatenate(logs)
    pts = np.concatenate(points)
    top = log_p.max()
    w = np.exp(log_p - top)
    pts = np.where(w[:, None] > 0, pts, 0.0)
    return math.log(w.sum() * cell) + top, (w[:, None] * pts).sum(0) / w.sum()
