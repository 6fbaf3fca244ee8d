"""The two-layer channel's 2×2 Fisher information: estimate, V → 0 limit and table (``docs/paper1.md`` §14.4, §14.6).

At the state-evolution point with layer covariance V (2×2, the MMSE matrix) the
teacher's index differences and the estimate's mean are jointly Gaussian:

    m = (m_d, m_e) ~ N(0, Q ⊗ Σ),  Q = Q0 − V,  Q0 = [[1 + ρ, ρ], [ρ, 1 + ρ]],
    (d, e) = m + N(0, V ⊗ Σ),      u = K(d) e          (fibre.py, Σ = [[3, 1], [1, 3]]).

The conjugate overlap is Q̂ = 2α V⁻¹ 𝒩 V⁻¹ with 𝒩_ab = E[E[δ_a|u, m]ᵀ Σ⁻¹ E[δ_b|u, m]],
δ₁ = d − m_d, δ₂ = e − m_e.  This module tabulates the whitened matrix

    F = V^{−1/2} 𝒩 V^{−1/2}     (symmetric square root; F_ab = 𝒩_ab/√(V_aa V_bb) when V₁₂ = 0;
                                  F = 2 per layer for the one-layer softmax),

stored as (F₁₁, F₂₂, F₁₂), so that Q̂ = 2α V^{−1/2} F V^{−1/2}.  Whitening makes
tr F = 2 exact in the limit V → 0 for every cross correlation (below), which a
first-order model of F in the correlation then keeps.  Since E[δ_aᵀ Σ⁻¹ δ_b] =
2 V_ab exactly, the estimator averages the Rao–Blackwellised form

    𝒩_ab = 2 V_ab − E tr Σ⁻¹ Cov(δ_a, δ_b | u, m)

with the posterior covariance from :func:`fibre.fibre_moments` (3–25 times less
variance than |E δ|², measured); the outer average over (m, d, e) ∈ R⁸ is
randomised quasi-Monte Carlo (scrambled Sobol points mapped to normals), with
independent scrambles as replicates: their spread is the standard error, and a
state evolution solved per replicate carries it to the MMSE (§14.6).

V → 0 (:func:`tangent_limit`): the posterior becomes the Gaussian prior restricted
to the tangent plane of the fibre at the teacher, so in whitened coordinates the
posterior covariance is the projector on the null space of A = [√r ∂u/∂d L, K L]
(L L ᵀ = Σ, r = V₁₁/V₂₂, V₁₂ = 0) and

    F₁₁⁰ = tr P_dd,   F₂₂⁰ = tr P_ee,   F₁₂⁰ = tr P_de,   P = Aᵀ(AAᵀ)⁻¹A,

a function of r alone with F₁₁⁰ + F₂₂⁰ = 2 exactly: the two noiseless numbers of a
sample are shared between the layers (§14.5).  With V₁₂ ≠ 0 the same argument in
the coordinates whitened by V gives tr F = 2.

Table (:func:`fisher_table`): Chebyshev–Lobatto nodes in log V₁, log V₂ on
[log v_min, 0], at V₁₂ = 0 and at the correlation V₁₂/√(V₁₁V₂₂) = ``corr_step``
(common random numbers, a forward difference for the first-order slope in the
cross covariance), and the limit F⁰ on Chebyshev nodes in log r.  Every node of a
table, and every skip and ρ, uses the same scrambles, so the interpolant is
smooth and the replicate spread is the error of the whole table.

Costs: :func:`fibre.fibre_moments` per outer point, ~0.15–0.3 ms (one or two
branches) on an idle core at the default rule; a table costs
2 · nodes² · replicates · n_samples of them.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np
from scipy.special import expit, ndtri
from scipy.stats import qmc

from aimrepro.paper1.data import keyed_seed
from aimrepro.paper1.two_layer import fibre as fb

__all__ = ["FisherEstimate", "FisherInterpolant", "FisherTable", "chebyshev_lobatto", "fisher_estimate",
           "fisher_samples", "fisher_table", "layer_covariance", "outer_normals", "prior_overlap",
           "tangent_limit", "ESTIMATORS", "TABLE_DEFAULTS", "estimated_table_seconds", "load_table", "save_table",
           "whitening"]

#: Components (F₁₁, F₂₂, F₁₂), the order of every array of this module.
COMPONENTS = ("F11", "F22", "F12")

#: Outer dimension: prior means (4) and noise (4) of (d₁, d₂, e₁, e₂).
OUTER_DIM = 8

#: Nodes in log r of the V → 0 limit, its range, and the QMC points per node and replicate (2^k).
LIMIT_NODES = 33
LIMIT_LOG_R = 14.0
LIMIT_LOG2_SAMPLES = 14

#: Default table: nodes per axis, smallest V, QMC points per replicate (2^k), replicates, slope step.
TABLE_DEFAULTS = {"nodes": 9, "v_min": 1e-4, "log2_samples": 11, "replicates": 4, "corr_step": 0.05}


def prior_overlap(rho: float) -> np.ndarray:
    """Q0 = lim Tr(S_a S_b)/d = [[1 + ρ, ρ], [ρ, 1 + ρ]]: the layers share the prior mean √ρ I (§14.1)."""
    return np.array([[1.0 + rho, rho], [rho, 1.0 + rho]])


def layer_covariance(V1: float, V2: float, corr: float = 0.0) -> np.ndarray:
    """V = [[V₁, c√(V₁V₂)], [c√(V₁V₂), V₂]] from the diagonal and the correlation c."""
    off = corr * math.sqrt(V1 * V2)
    return np.array([[V1, off], [off, V2]])


def _psd_sqrt(M):
    w, Q = np.linalg.eigh(M)
    return (Q * np.sqrt(np.maximum(w, 0.0))) @ Q.T


def _check_state(V, rho):
    V = np.asarray(V, dtype=float)
    if V.shape != (2, 2) or not np.allclose(V, V.T):
        raise ValueError(f"V must be a symmetric 2x2 matrix, got {V!r}")
    if not (V[0, 0] > 0 and V[1, 1] > 0 and np.linalg.det(V) > 0):
        raise ValueError(f"V must be positive definite, got {V.tolist()}")
    if not (isinstance(rho, (int, float, np.floating)) and math.isfinite(rho) and rho > 0):
        raise ValueError(f"rho must be a finite number > 0, got {rho!r}")
    Q = prior_overlap(rho) - V
    if np.min(np.linalg.eigvalsh(Q)) < -1e-12:
        raise ValueError(f"V = {V.tolist()} is not below Q0 = {prior_overlap(rho).tolist()}: Q0 - V must be "
                         f"positive semi-definite (an overlap)")
    return V, Q


def outer_normals(log2_samples: int, seed: int, replicate: int) -> np.ndarray:
    """(2^k, 8) standard normals from one scrambled Sobol sequence, fixed by (seed, replicate).

    The scramble depends on nothing else, so every node of a table, every skip
    and every ρ reuse the same points (common random numbers).  O(2^k).
    """
    for name, value, minimum in (("log2_samples", log2_samples, 1), ("seed", seed, 0), ("replicate", replicate, 0)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
            raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    rng = np.random.default_rng(keyed_seed(int(seed), f"aim-two-layer-fisher|replicate={int(replicate)}"))
    points = qmc.Sobol(d=OUTER_DIM, scramble=True, seed=rng).random_base2(int(log2_samples))
    return ndtri(np.clip(points, 1e-16, 1.0 - 1e-16))


def _outer_points(V, Q, normals):
    """Prior means m, teacher points (d, e) (both (n, 4)) from standard normals (n, 8)."""
    z = normals.reshape(-1, 2, 2, 2)  # (n, mean/noise, layer, component)
    mean = np.einsum("ab,nbc->nac", _psd_sqrt(Q), z[:, 0]) @ fb._SIGMA_CHOL.T
    noise = np.einsum("ab,nbc->nac", _psd_sqrt(V), z[:, 1]) @ fb._SIGMA_CHOL.T
    m = mean.reshape(-1, 4)
    return m, m + noise.reshape(-1, 4)


#: Estimators of :func:`fisher_samples`: the Rao–Blackwellised posterior-covariance form (the tables'),
#: and the direct |E δ|² form, free of its cancellation when F is small (the tables' check).
ESTIMATORS = ("rao_blackwell", "direct")


def fisher_samples(V, rho: float, skip: float, normals: np.ndarray, *, rule: fb.FibreRule = fb.FibreRule(),
                   estimator: str = "rao_blackwell") -> np.ndarray | dict:
    """Per outer point the whitened (F₁₁, F₂₂, F₁₂) (module notes): (n, 3); ``estimator="both"`` gives a dict.

    ``normals``: (n, 8) standard normals (:func:`outer_normals`).  The two estimators
    have the same expectation; with exact quadrature they differ only by noise,
    so their difference on a table measures the quadrature's bias (the
    Rao–Blackwell form is 2 − a posterior variance, which loses relative
    accuracy where F is small).  O(n) fibre integrals.
    """
    if estimator not in ESTIMATORS + ("both",):
        raise ValueError(f"estimator must be one of {ESTIMATORS + ('both',)}, got {estimator!r}")
    V, Q = _check_state(V, rho)
    normals = np.asarray(normals, dtype=float)
    if normals.ndim != 2 or normals.shape[1] != OUTER_DIM:
        raise ValueError(f"normals must have shape (n, {OUTER_DIM}), got {normals.shape}")
    m, truth = _outer_points(V, Q, normals)
    u = fb.labels_from_differences(truth[:, :2], truth[:, 2:], skip)
    moments = fb.fibre_moments(u, m, V, skip, rule=rule, truth=truth)
    shift = (moments.mean - m).reshape(-1, 2, 2)
    N = {"rao_blackwell": np.empty((normals.shape[0], 2, 2)),
         "direct": np.einsum("nai,ij,nbj->nab", shift, fb.SIGMA_INV, shift)}
    for a in range(2):
        for b in range(2):
            block = moments.cov[:, 2 * a:2 * a + 2, 2 * b:2 * b + 2]
            N["rao_blackwell"][:, a, b] = 2.0 * V[a, b] - np.einsum("ij,nji->n", fb.SIGMA_INV, block)
    W = whitening(V)
    out = {}
    for name, values in N.items():
        F = W @ values @ W
        out[name] = np.stack([F[:, 0, 0], F[:, 1, 1], 0.5 * (F[:, 0, 1] + F[:, 1, 0])], axis=1)
    return out if estimator == "both" else out[estimator]


def whitening(V: np.ndarray) -> np.ndarray:
    """V^{−1/2}, the symmetric inverse square root of a positive definite 2×2 matrix."""
    w, Q = np.linalg.eigh(np.asarray(V, dtype=float))
    return (Q / np.sqrt(w)) @ Q.T


@dataclass(frozen=True)
class FisherEstimate:
    """(F₁₁, F₂₂, F₁₂) at one V: the mean over replicates, its standard error and the replicates."""

    V: np.ndarray
    value: np.ndarray
    stderr: np.ndarray
    replicates: np.ndarray
    n_samples: int

    def to_dict(self) -> dict:
        return {"V": self.V.tolist(), **{k: float(v) for k, v in zip(COMPONENTS, self.value)},
                **{f"{k}_stderr": float(s) for k, s in zip(COMPONENTS, self.stderr)},
                "n_samples": int(self.n_samples), "replicates": int(self.replicates.shape[0])}


def fisher_estimate(V, rho: float, skip: float, *, log2_samples: int = 12, replicates: int = 4, seed: int = 0,
                    rule: fb.FibreRule = fb.FibreRule()) -> FisherEstimate:
    """(F₁₁, F₂₂, F₁₂) at V by randomised QMC: ``replicates`` scrambles of 2^``log2_samples`` points.

    The standard error is the spread of the replicates over √replicates.
    Time O(replicates · 2^k) fibre integrals.
    """
    if isinstance(replicates, bool) or not isinstance(replicates, (int, np.integer)) or replicates < 2:
        raise ValueError(f"replicates must be an integer >= 2 (the error comes from their spread), got {replicates!r}")
    V, _ = _check_state(V, rho)
    values = np.array([fisher_samples(V, rho, skip, outer_normals(log2_samples, seed, k), rule=rule).mean(axis=0)
                       for k in range(replicates)])
    return FisherEstimate(V, values.mean(axis=0), values.std(axis=0, ddof=1) / math.sqrt(replicates), values,
                          replicates * 2 ** log2_samples)


# ---------------------------------------------------------------------------
# V → 0: the tangent-plane limit


def _tangent_traces(d, e, skip, log_r):
    """Per teacher point and ratio: (tr P_dd, tr P_ee, tr P_de) of the row-space projector of A (module notes)."""
    c = skip
    s, sbar = expit(d), expit(-d)
    spread = s * sbar
    kappa = c + s[:, 0] + s[:, 1] - 1.0
    B0 = np.empty((d.shape[0], 2, 2))
    B0[:, 0, 0], B0[:, 0, 1] = c + s[:, 0], -sbar[:, 0]
    B0[:, 1, 0], B0[:, 1, 1] = -sbar[:, 1], c + s[:, 1]
    B0e = np.einsum("nij,nj->ni", B0, e)
    total = e[:, 0] + e[:, 1]
    # ∂u/∂d_i = s_i(1 − s_i) (B₀e + κ ∂B₀/∂s_i e), ∂B₀/∂s₁ e = (e₁ + e₂, 0), ∂B₀/∂s₂ e = (0, e₁ + e₂)
    J = np.empty((d.shape[0], 2, 2))
    J[:, :, 0] = spread[:, 0:1] * (B0e + kappa[:, None] * np.stack([total, np.zeros_like(total)], 1))
    J[:, :, 1] = spread[:, 1:2] * (B0e + kappa[:, None] * np.stack([np.zeros_like(total), total], 1))
    K = kappa[:, None, None] * B0
    L = fb._SIGMA_CHOL
    out = []
    for lr in np.atleast_1d(log_r):
        A = np.concatenate([math.exp(0.5 * lr) * (J @ L), K @ L], axis=2)  # (n, 2, 4)
        # the row space of A by QR (its rows may differ in scale by e^{|log r|/2}: no normal equations)
        basis, _ = np.linalg.qr(np.swapaxes(A, 1, 2))
        P = basis @ np.swapaxes(basis, 1, 2)
        out.append(np.stack([np.trace(P[:, :2, :2], axis1=1, axis2=2), np.trace(P[:, 2:, 2:], axis1=1, axis2=2),
                             np.trace(P[:, :2, 2:], axis1=1, axis2=2)], axis=1))
    return np.stack(out, axis=1)  # (n, n_r, 3)


def tangent_limit(log_r, rho: float, skip: float, normals: np.ndarray) -> np.ndarray:
    """F⁰(r) = lim_{V→0, V₁₁/V₂₂ = r} F (module notes) at each log r, averaged over the given normals.

    ``normals``: (n, 8) (the first four set the teacher (d, e) ~ N(0, Q0 ⊗ Σ)).
    Returns (len(log_r), 3).  O(n · len(log_r)), no fibre integral.
    """
    c = fb.check_skip(skip)
    normals = np.asarray(normals, dtype=float)
    z = normals[:, :4].reshape(-1, 2, 2)
    x = (np.einsum("ab,nbc->nac", _psd_sqrt(prior_overlap(rho)), z) @ fb._SIGMA_CHOL.T)
    with np.errstate(divide="ignore", invalid="ignore"):
        traces = _tangent_traces(x[:, 0], x[:, 1], c, np.asarray(log_r, dtype=float))
    finite = np.all(np.isfinite(traces), axis=(1, 2))  # κ = 0 exactly has probability 0
    return traces[finite].mean(axis=0)


# ---------------------------------------------------------------------------
# the table and its interpolant


def chebyshev_lobatto(n: int, lo: float, hi: float) -> np.ndarray:
    """n >= 2 Chebyshev–Lobatto points on [lo, hi], increasing."""
    k = np.arange(n)
    return lo + (hi - lo) * (1.0 - np.cos(np.pi * k / (n - 1))) / 2.0


def _barycentric_matrix(nodes, x):
    """Interpolation weights (len(x), n) of Chebyshev–Lobatto nodes at points x (exact at nodes)."""
    n = nodes.size
    w = (-1.0) ** np.arange(n)
    w[0] *= 0.5
    w[-1] *= 0.5
    diff = np.asarray(x, dtype=float)[:, None] - nodes[None, :]
    exact = diff == 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = w / diff
    terms = np.where(exact.any(axis=1, keepdims=True), exact.astype(float), terms)
    return terms / terms.sum(axis=1, keepdims=True)


@dataclass(frozen=True)
class FisherTable:
    """Tabulated F at (V₁, V₂) on Chebyshev–Lobatto nodes in log V, its cross slope, and the V → 0 limit.

    Attributes
    ----------
    rho, skip : the model
    log_v : (n,) nodes of log V₁ and of log V₂
    F : (R, n, n, 3) per replicate, F at V = diag(V₁, V₂)
    slope : (R, n, n, 3) ∂F/∂corr at corr = 0 (forward difference with ``corr_step``)
    log_r : (k,) nodes of the limit in log(V₁/V₂); limit : (R, k, 3)
    settings : the rule, sample sizes, seed; cpu_seconds : its cost
    direct : (R, n, n, 3) F at corr = 0 by the direct estimator on the same points (the quadrature check,
        :meth:`quadrature_check`)
    """

    rho: float
    skip: float
    log_v: np.ndarray
    F: np.ndarray
    slope: np.ndarray
    log_r: np.ndarray
    limit: np.ndarray
    settings: dict = field(default_factory=dict)
    cpu_seconds: float = math.nan
    direct: np.ndarray | None = None

    @property
    def replicates(self) -> int:
        return int(self.F.shape[0])

    def quadrature_check(self) -> dict:
        """Largest |F(Rao–Blackwell) − F(direct)| over the nodes, per component, in units of its standard error.

        The two estimators share their points, so the difference's replicate spread
        is its noise; a difference many times that is the quadrature's bias.
        """
        if self.direct is None:
            return {}
        difference = self.F - self.direct
        mean = difference.mean(axis=0)
        stderr = difference.std(axis=0, ddof=1) / math.sqrt(self.replicates)
        z = np.abs(mean) / np.maximum(stderr, 1e-300)
        return {name: {"max_abs": float(np.max(np.abs(mean[..., k]))), "max_z": float(np.max(z[..., k]))}
                for k, name in enumerate(COMPONENTS)}

    def arrays(self) -> dict:
        """The arrays to store (``.npz``), with the scalars as 0-d arrays."""
        arrays = {"rho": np.float64(self.rho), "skip": np.float64(self.skip), "log_v": self.log_v, "F": self.F,
                  "slope": self.slope, "log_r": self.log_r, "limit": self.limit,
                  "cpu_seconds": np.float64(self.cpu_seconds),
                  "settings": np.array(repr(sorted(self.settings.items())))}
        if self.direct is not None:
            arrays["direct"] = self.direct
        return arrays

    @classmethod
    def from_arrays(cls, arrays) -> "FisherTable":
        import ast

        settings = dict(ast.literal_eval(str(arrays["settings"]))) if "settings" in arrays else {}
        return cls(float(arrays["rho"]), float(arrays["skip"]), np.asarray(arrays["log_v"]), np.asarray(arrays["F"]),
                   np.asarray(arrays["slope"]), np.asarray(arrays["log_r"]), np.asarray(arrays["limit"]), settings,
                   float(arrays["cpu_seconds"]), np.asarray(arrays["direct"]) if "direct" in arrays else None)

    def interpolant(self, replicate: int | None = None) -> "FisherInterpolant":
        """The interpolant of one replicate, or (None) of the mean over replicates."""
        if replicate is None:
            return FisherInterpolant(self.log_v, self.F.mean(0), self.slope.mean(0), self.log_r,
                                     self.limit.mean(0))
        return FisherInterpolant(self.log_v, self.F[replicate], self.slope[replicate], self.log_r,
                                 self.limit[replicate])


@dataclass(frozen=True)
class FisherInterpolant:
    """F(V₁, V₂, corr) ≈ F(V₁, V₂) + corr · slope(V₁, V₂) from one table (module notes).

    Inside [v_min, 1]² a tensor barycentric interpolant in log V; below v_min the
    V → 0 limit F⁰(V₁/V₂) plus the correction F − F⁰ at the nearest table point,
    scaled by the posterior-width proxy h = V₁V₂/(V₁ + V₂) (the correction
    vanishes linearly in V, measured, §14.6), and the cross slope of that point
    (F⁰ is the limit at corr = 0; the slope keeps the cross term's stabilising
    2 corr of F₁₂ there).  ``__call__`` returns (F₁₁, F₂₂, F₁₂)
    and whether the point lay outside the table.
    """

    log_v: np.ndarray
    F: np.ndarray
    slope: np.ndarray
    log_r: np.ndarray
    limit: np.ndarray

    def limit_at(self, log_r: float) -> np.ndarray:
        x = float(np.clip(log_r, self.log_r[0], self.log_r[-1]))
        return (_barycentric_matrix(self.log_r, [x]) @ self.limit)[0]

    def _grid(self, values, x1, x2):
        w1 = _barycentric_matrix(self.log_v, [x1])[0]
        w2 = _barycentric_matrix(self.log_v, [x2])[0]
        return np.einsum("i,j,ijk->k", w1, w2, values)

    def __call__(self, V1: float, V2: float, corr: float = 0.0) -> tuple[np.ndarray, bool]:
        if not (V1 > 0 and V2 > 0 and math.isfinite(V1) and math.isfinite(V2)):
            raise ValueError(f"V1 and V2 must be finite and > 0, got {V1}, {V2}")
        x1, x2 = math.log(V1), math.log(V2)
        lo, hi = self.log_v[0], self.log_v[-1]
        c1, c2 = min(max(x1, lo), hi), min(max(x2, lo), hi)
        F = self._grid(self.F, c1, c2)
        cross = corr * self._grid(self.slope, c1, c2)
        outside = (c1, c2) != (x1, x2)
        if outside:
            correction = F - self.limit_at(c1 - c2)
            h = V1 * V2 / (V1 + V2)
            h_clamped = math.exp(c1) * math.exp(c2) / (math.exp(c1) + math.exp(c2))
            F = self.limit_at(x1 - x2) + correction * min(1.0, h / h_clamped)
        return F + cross, outside


def save_table(path, table: "FisherTable") -> None:
    """Write a table as an uncompressed ``.npz``, byte-reproducibly (``paper1.data.write_npz``)."""
    from aimrepro.paper1.data import write_npz

    write_npz(path, table.arrays())


def load_table(path) -> "FisherTable":
    """Read a table written by :func:`save_table`."""
    with np.load(path, allow_pickle=False) as archive:
        return FisherTable.from_arrays({name: archive[name] for name in archive.files})


#: CPU seconds per fibre integral of a table at the default rule (one core), by the number of branches
#: and the coordinates: the quick tables of benchmarks/bench_two_layer.py, measured on the shared
#: 2-core machine under load ~20 (CPU time inflated by contention; an upper estimate, docs/benchmarks.md).
_SECONDS_PER_INTEGRAL = {"two_branches": 2.0e-4, "one_branch": 1.2e-4, "plane": 7.5e-5}


def estimated_table_seconds(skip: float, *, nodes: int = TABLE_DEFAULTS["nodes"],
                            log2_samples: int = TABLE_DEFAULTS["log2_samples"],
                            replicates: int = TABLE_DEFAULTS["replicates"]) -> float:
    """CPU seconds of :func:`fisher_table` at these settings (cost model, before anything runs)."""
    c = fb.check_skip(skip)
    kind = "plane" if c >= fb.PLANE_SKIP else ("two_branches" if c < 1.0 else "one_branch")
    return 2.0 * nodes * nodes * replicates * 2 ** log2_samples * _SECONDS_PER_INTEGRAL[kind]


def fisher_table(rho: float, skip: float, *, nodes: int = TABLE_DEFAULTS["nodes"],
                 v_min: float = TABLE_DEFAULTS["v_min"], log2_samples: int = TABLE_DEFAULTS["log2_samples"],
                 replicates: int = TABLE_DEFAULTS["replicates"], seed: int = 0,
                 corr_step: float = TABLE_DEFAULTS["corr_step"], rule: fb.FibreRule = fb.FibreRule(),
                 progress=None) -> FisherTable:
    """Tabulate F on nodes² points (×2 for the slope) and the V → 0 limit, ``replicates`` scrambles each.

    Parameters
    ----------
    rho : width ratio; skip : the skip strength c
    nodes : Chebyshev–Lobatto nodes per axis in log V on [log v_min, 0], >= 3
    v_min : smallest tabulated V, in (0, 0.1]
    log2_samples : QMC points per node and replicate, 2^k
    replicates : independent scrambles (>= 2: the error is their spread)
    corr_step : correlation of the forward difference for the cross slope, in (0, 0.5]
    progress : optional callable(done, total) (logging)

    Returns
    -------
    FisherTable
        Time O(2 nodes² · replicates · 2^k) fibre integrals (module notes).
    """
    c = fb.check_skip(skip)
    if isinstance(nodes, bool) or not isinstance(nodes, (int, np.integer)) or nodes < 3:
        raise ValueError(f"nodes must be an integer >= 3, got {nodes!r}")
    if not (isinstance(v_min, (int, float)) and 0 < v_min <= 0.1):
        raise ValueError(f"v_min must lie in (0, 0.1], got {v_min!r}")
    if not (isinstance(corr_step, (int, float)) and 0 < corr_step <= 0.5):
        raise ValueError(f"corr_step must lie in (0, 0.5], got {corr_step!r}")
    if isinstance(replicates, bool) or not isinstance(replicates, (int, np.integer)) or replicates < 2:
        raise ValueError(f"replicates must be an integer >= 2, got {replicates!r}")
    _check_state(np.eye(2), rho)
    started = time.process_time()
    log_v = chebyshev_lobatto(nodes, math.log(v_min), 0.0)
    log_r = chebyshev_lobatto(LIMIT_NODES, -LIMIT_LOG_R, LIMIT_LOG_R)
    F = np.empty((replicates, nodes, nodes, 3))
    slope = np.empty_like(F)
    direct = np.empty_like(F)
    limit = np.empty((replicates, LIMIT_NODES, 3))
    total, done = replicates * nodes * nodes, 0
    for k in range(replicates):
        normals = outer_normals(log2_samples, seed, k)
        limit[k] = tangent_limit(log_r, rho, c, outer_normals(LIMIT_LOG2_SAMPLES, seed, k))
        for i, x1 in enumerate(log_v):
            for j, x2 in enumerate(log_v):
                V1, V2 = math.exp(x1), math.exp(x2)
                both = fisher_samples(layer_covariance(V1, V2), rho, c, normals, rule=rule, estimator="both")
                at_zero = both["rao_blackwell"].mean(axis=0)
                stepped = fisher_samples(layer_covariance(V1, V2, corr_step), rho, c, normals,
                                         rule=rule).mean(axis=0)
                F[k, i, j] = at_zero
                direct[k, i, j] = both["direct"].mean(axis=0)
                slope[k, i, j] = (stepped - at_zero) / corr_step
                done += 1
                if progress is not None:
                    progress(done, total)
    settings = {"nodes": int(nodes), "v_min": float(v_min), "log2_samples": int(log2_samples),
                "replicates": int(replicates), "seed": int(seed), "corr_step": float(corr_step),
                "limit_nodes": LIMIT_NODES, "limit_log_r": LIMIT_LOG_R, "limit_log2_samples": LIMIT_LOG2_SAMPLES,
                **{f"rule_{k}": v for k, v in rule.to_dict().items()}}
    return FisherTable(float(rho), c, log_v, F, slope, log_r, limit, settings, time.process_time() - started, direct)
