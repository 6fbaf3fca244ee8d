"""The population loss of attention-indexed models: Gaussian-equivalent indices, Φ and its gradients.

Theorem 1 of paper 2 (``docs/paper2.md`` §3.1, [P eqs. 3–4]): in the extensive-rank
limit the T×T index arrays G_k of K matrices S_k (student k = 1, teacher
k = 2 here) are jointly Gaussian with

    E G_ijk = δ_ij μ_k,   Cov(G_ijk, G_i'j'l) = δ_ii'δ_jj' Ω_kl + δ_ij'δ_ji' Ψ_kl

(i.i.d. tokens, 𝒞 = I), μ_k = Tr S_k/√d (zero for the centered index of
tied and direct attention), Ω_kl = Tr(S_k S_lᵀ)/d, Ψ_kl = Tr(S_k S_l)/d.
The population loss is therefore a function Φ(μ, Ω, Ψ) of finitely many
order parameters; for symmetric S (Ω = Ψ = q) it is the potential Φ(q) of
[P eq. 10], and for untied S = U Vᵀ it is Φ(m, q⁽¹⁾ = Ω, q⁽²⁾ = Ψ).

Gradients follow from Price's theorem (``docs/paper2.md`` §2.1–2.2, [P eqs. 91,
458–459, 570–572]), with the *symmetric convention* of the paper: q_kl and
q_lk count as separate entries, so for Φ written in one variable q₁₂ the
matrix derivative is [∇Φ]₁₂ = ½ ∂Φ/∂q₁₂:

    ∂Φ/∂μ_k = Σ_i E ∂ℒ/∂G_iik,
    [∇_Ω Φ]_kl = ½ Σ_ij E ∂²ℒ/∂G_ijk∂G_ijl,   [∇_Ψ Φ]_kl = ½ Σ_ij E ∂²ℒ/∂G_ijk∂G_jil,

and Γ = ∇_q Φ = ∇_Ω Φ + ∇_Ψ Φ for symmetric matrices.

How Φ is computed (:class:`Potential`):

``quadrature``
    Deterministic tensor Gauss–Hermite rules in two dimensions (student,
    teacher), exact for polynomial links and accurate to ~1e-12 for softmax
    with 60 nodes per dimension.  Available when the dimension allows:
    elementwise links for any T (the entries are independent, two classes:
    diagonal with mean μ and covariance Ω + Ψ, off-diagonal with covariance
    Ω), and row-wise links at T = 2, where row a depends on
    v_a = G_aa − G_ab only, with covariance 2Ω + Ψ (``docs/paper2.md`` §3.3).
    Hardmax at T = 2 is the closed form of :func:`phi_hardmax_t2`.
``monte_carlo``
    Common random numbers: one fixed set of standard normals, transformed by
    the §3.2 recipe for every law, so Φ is a smooth deterministic function of
    (μ, Ω, Ψ) and finite differences and Price estimates are coherent.

Numerics
--------
Quadrature costs O(n_nodes²) per evaluation (3 600 points at the default 60
nodes: ~0.2 ms for h_k, ~1 ms for softmax).  Monte Carlo costs
O(n_samples K T²) (O(n_samples T⁴) for the softmax Hessian) and holds the
2 n_samples K T² normals in memory.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
from scipy import special

from aimrepro.numerics.gauss import ndtr2
from aimrepro.paper2.losses import MSELoss
from aimrepro.paper2.matrices import trace_products

__all__ = [
    "FiniteDLoss",
    "IndexLaw",
    "Potential",
    "PotentialValue",
    "phi_h2",
    "phi_hardmax_t2",
    "phi_linear",
    "phi_softmax_t2",
    "finite_d_loss",
    "law_of_pair",
    "psd_sqrt",
]

METHODS = ("auto", "quadrature", "monte_carlo")


def psd_sqrt(A: np.ndarray) -> np.ndarray:
    """Symmetric square root of the projection of A onto the PSD cone.

    The projection (negative eigenvalues set to zero) is the Γ̃ of
    [P eqs. 92–93]: a truncated moment system can leave the cone, and a
    degenerate law (Ω = Ψ, so no skew channel) is legitimate.
    """
    A = 0.5 * (A + A.T)
    lam, V = np.linalg.eigh(A)
    return (V * np.sqrt(np.clip(lam, 0.0, None))) @ V.T


def _sym(Z: np.ndarray) -> np.ndarray:
    return (Z + np.swapaxes(Z, -1, -2)) / math.sqrt(2.0)


def _skw(Z: np.ndarray) -> np.ndarray:
    return (Z - np.swapaxes(Z, -1, -2)) / math.sqrt(2.0)


@dataclass(frozen=True, eq=False)
class IndexLaw:
    """Gaussian-equivalent law of K index arrays (``docs/paper2.md`` §3.1–3.2, [P eq. 4]).

    Parameters
    ----------
    T : int
        Tokens per sequence.
    mean : (K,) array_like
        μ_k: E G_ijk = δ_ij μ_k.
    Omega, Psi : (K, K) array_like
        Symmetric; (Ω ± Ψ)/2 must be PSD (they are ‖S^±‖_F²/d Gram matrices).
    """

    T: int
    mean: np.ndarray
    Omega: np.ndarray
    Psi: np.ndarray

    def __post_init__(self) -> None:
        if not (isinstance(self.T, (int, np.integer)) and self.T >= 1):
            raise ValueError(f"T must be an integer >= 1, got {self.T!r}")
        mean = np.atleast_1d(np.asarray(self.mean, dtype=float))
        K = mean.size
        Omega = np.asarray(self.Omega, dtype=float)
        Psi = np.asarray(self.Psi, dtype=float)
        if Omega.shape != (K, K) or Psi.shape != (K, K):
            raise ValueError(f"Omega and Psi must be ({K}, {K}) to match the mean, got "
                             f"{Omega.shape} and {Psi.shape}")
        if not (np.all(np.isfinite(mean)) and np.all(np.isfinite(Omega))
                and np.all(np.isfinite(Psi))):
            raise ValueError("mean, Omega and Psi must be finite")
        object.__setattr__(self, "mean", mean)
        object.__setattr__(self, "Omega", 0.5 * (Omega + Omega.T))
        object.__setattr__(self, "Psi", 0.5 * (Psi + Psi.T))

    @classmethod
    def symmetric(cls, q, T: int, mean=None) -> IndexLaw:
        """Law of symmetric matrices: Ω = Ψ = q (tied attention, centered: μ = 0)."""
        q = np.asarray(q, dtype=float)
        return cls(T, np.zeros(q.shape[0]) if mean is None else mean, q, q)

    @classmethod
    def untied(cls, m, q1, q2, T: int) -> IndexLaw:
        """Law of untied S = U Vᵀ: μ = m, Ω = q⁽¹⁾, Ψ = q⁽²⁾ (``docs/paper2.md`` §2.3)."""
        return cls(T, m, q1, q2)

    @property
    def K(self) -> int:
        return self.mean.size

    @property
    def symmetric_channel(self) -> np.ndarray:
        """ω⁺ = (Ω + Ψ)/2."""
        return 0.5 * (self.Omega + self.Psi)

    @property
    def skew_channel(self) -> np.ndarray:
        """ω⁻ = (Ω − Ψ)/2."""
        return 0.5 * (self.Omega - self.Psi)

    def diagonal_cov(self) -> np.ndarray:
        """Covariance (K×K) of (G_aa1, ..., G_aaK): Ω + Ψ."""
        return self.Omega + self.Psi

    def transform(self, Z_sym: np.ndarray, Z_skw: np.ndarray) -> np.ndarray:
        """Indices from standard normals by the §3.2 recipe.

        G_k = μ_k I + Σ_j (√ω⁺)_kj Sym(Z_j) + Σ_j (√ω⁻)_kj Skw(Z'_j), with
        Sym(Z) = (Z + Zᵀ)/√2, Skw(Z) = (Z − Zᵀ)/√2.

        Parameters
        ----------
        Z_sym, Z_skw : (n, K, T, T) ndarrays of i.i.d. N(0, 1)

        Returns
        -------
        (n, K, T, T) ndarray
        """
        A = psd_sqrt(self.symmetric_channel)
        B = psd_sqrt(self.skew_channel)
        G = np.einsum("kj,njab->nkab", A, _sym(Z_sym))
        if np.any(B):
            G += np.einsum("kj,njab->nkab", B, _skw(Z_skw))
        G[..., np.arange(self.T), np.arange(self.T)] += self.mean[:, None]
        return G

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """n draws of the K index arrays, (n, K, T, T)."""
        shape = (n, self.K, self.T, self.T)
        return self.transform(rng.standard_normal(shape), rng.standard_normal(shape))


@dataclass(frozen=True)
class PotentialValue:
    """Φ and its gradients at one law.

    Attributes
    ----------
    value : float
        Φ(μ, Ω, Ψ).
    d_mean : (K,) ndarray
        ∂Φ/∂μ_k (NaN, like the other gradients, when evaluated with ``gradient=False``).
    d_Omega, d_Psi : (K, K) ndarrays
        ∇_Ω Φ, ∇_Ψ Φ in the symmetric convention ([∇Φ]_kl = ½ ∂Φ/∂Ω_kl, k ≠ l,
        for Φ written in one off-diagonal variable).
    method : str
        ``quadrature``, ``closed_form`` or ``monte_carlo``.
    n_points : int
        Quadrature nodes or Monte-Carlo draws.
    stderr : float
        Monte-Carlo standard error of ``value`` (0 for deterministic methods).
    """

    value: float
    d_mean: np.ndarray
    d_Omega: np.ndarray
    d_Psi: np.ndarray
    method: str
    n_points: int
    stderr: float = 0.0

    @property
    def gamma(self) -> np.ndarray:
        """Γ = ∇_q Φ for symmetric matrices (Ω = Ψ = q): ∇_Ω Φ + ∇_Ψ Φ ([P eq. 91])."""
        return self.d_Omega + self.d_Psi


@functools.lru_cache(maxsize=8)
def _hermite_2d(n_nodes: int) -> tuple[np.ndarray, np.ndarray]:
    """Tensor Gauss–Hermite rule for N(0, I₂): nodes (n², 2), weights (n²,), read-only."""
    x, w = special.roots_hermitenorm(n_nodes)
    w = w / math.sqrt(2.0 * math.pi)
    X0, X1 = np.meshgrid(x, x, indexing="ij")
    nodes = np.stack([X0.ravel(), X1.ravel()], axis=-1)
    weights = np.outer(w, w).ravel()
    nodes.setflags(write=False)
    weights.setflags(write=False)
    return nodes, weights


def _gaussian_nodes(mean: np.ndarray, cov: np.ndarray, n_nodes: int) -> tuple[np.ndarray,
                                                                              np.ndarray]:
    """Nodes (n², 2) and weights of N(mean, cov) through the PSD square root of cov."""
    nodes, weights = _hermite_2d(n_nodes)
    return mean + nodes @ psd_sqrt(cov).T, weights


class Potential:
    """The potential Φ(μ, Ω, Ψ) = E ℒ(G) of one loss and T, with Price gradients.

    Parameters
    ----------
    loss : MSELoss
    T : int
    method : {"auto", "quadrature", "monte_carlo"}
        ``auto`` takes quadrature (or the hardmax closed form) where the
        dimension allows it (module docstring) and Monte Carlo otherwise.
    n_nodes : int
        Gauss–Hermite nodes per dimension.
    n_samples : int
        Monte-Carlo draws (common random numbers, fixed at construction).
    seed : int
        Seed of the Monte-Carlo draws.

    Notes
    -----
    Covariances are projected onto the PSD cone (:func:`psd_sqrt`) before
    they are used, so Φ and Γ at a q outside the cone are Γ̃(q) = Γ(Π(q)) of
    [P eqs. 92–93]: truncated moment systems may leave the cone.

    Quadrature accuracy: exact for polynomial links (h_k) with ≥ 6 nodes;
    for softmax it depends on β√Var(v): ~1e-10 at β√Var ≈ 2 and ~1e-5 at
    β√Var ≈ 4 with 60 nodes (the logistic function's complex poles limit
    the convergence).

    Gradients of the piecewise constant hardmax loss come from central
    finite differences of the closed form (T = 2); for T > 2 they are not
    available.  The Monte-Carlo standard error is that of the value; the
    gradients use the same draws.
    """

    def __init__(self, loss: MSELoss, T: int, *, method: str = "auto", n_nodes: int = 60,
                 n_samples: int = 100_000, seed: int = 0) -> None:
        if method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, got {method!r}")
        if not (isinstance(T, (int, np.integer)) and T >= loss.min_T):
            raise ValueError(f"T must be an integer >= {loss.min_T} for links "
                             f"{loss.student.name}/{loss.teacher.name}, got {T!r}")
        for name, value in (("n_nodes", n_nodes), ("n_samples", n_samples)):
            if not (isinstance(value, (int, np.integer)) and value >= 2):
                raise ValueError(f"{name} must be an integer >= 2, got {value!r}")
        quadrature_possible = loss.elementwise or T == 2
        if method == "quadrature" and not quadrature_possible:
            raise ValueError(f"quadrature needs an elementwise link or T = 2, got "
                             f"{loss.student.name} with T = {T}; use method='monte_carlo'")
        self.loss = loss
        self.T = int(T)
        self.method = ("quadrature" if quadrature_possible else "monte_carlo") \
            if method == "auto" else method
        self.n_nodes = int(n_nodes)
        self.n_samples = int(n_samples)
        self.seed = int(seed)
        self._normals: tuple[np.ndarray, np.ndarray] | None = None

    def settings(self) -> dict:
        """Evaluation settings, for sidecars."""
        return {"method": self.method, "n_nodes": self.n_nodes, "n_samples": self.n_samples,
                "seed": self.seed, "T": self.T, "student_link": self.loss.student.label(),
                "teacher_link": self.loss.teacher.label(), "prefactor": self.loss.prefactor}

    # --- public evaluation ------------------------------------------------------

    def evaluate(self, law: IndexLaw, *, gradient: bool = True) -> PotentialValue:
        """Φ (and, if asked, its gradients) at ``law``."""
        if law.T != self.T:
            raise ValueError(f"law has T = {law.T}, the potential T = {self.T}")
        if law.K != 2:
            raise ValueError(f"the teacher–student loss needs K = 2 indices, got {law.K}")
        if not self.loss.smooth:
            return self._nonsmooth(law, gradient)
        if self.method == "monte_carlo":
            return self._monte_carlo(law, gradient)
        if self.loss.elementwise:
            return self._quadrature_elementwise(law, gradient)
        return self._quadrature_rows(law, gradient)

    def tied(self, q) -> PotentialValue:
        """Φ(q) and Γ(q) for centered symmetric matrices ([P eq. 10])."""
        return self.evaluate(IndexLaw.symmetric(q, self.T))

    def gamma(self, q) -> np.ndarray:
        """Γ(q) = ∇_q Φ (K×K), symmetric convention ([P eq. 91])."""
        return self.tied(q).gamma

    # --- quadrature ---------------------------------------------------------------

    def _entry_average(self, mean: np.ndarray, cov: np.ndarray, gradient: bool):
        """E over one entry class of ℓ, ∂ℓ/∂G and the Hessian, by 2-D Gauss–Hermite."""
        nodes, w = _gaussian_nodes(mean, cov, self.n_nodes)
        G = nodes.reshape(-1, 2, 1, 1)
        value = float(w @ self.loss.value(G))
        if not gradient:
            return value, None, None
        grad = np.einsum("n,nk->k", w, self.loss.gradient(G)[:, :, 0, 0])
        hess = np.einsum("n,nkl->kl", w, self.loss.hessian_contractions(G)[0])
        return value, grad, hess

    def _quadrature_elementwise(self, law: IndexLaw, gradient: bool) -> PotentialValue:
        T = self.T
        zero = np.zeros(law.K)
        v_diag, g_diag, h_diag = self._entry_average(law.mean, law.diagonal_cov(), gradient)
        n_off = T * (T - 1)
        if n_off:
            v_off, _, h_off = self._entry_average(zero, law.Omega, gradient)
        else:
            v_off, h_off = 0.0, np.zeros((law.K, law.K))
        value = T * v_diag + n_off * v_off
        n_points = 2 * self.n_nodes ** 2 if n_off else self.n_nodes ** 2
        if not gradient:
            return _value_only(value, "quadrature", n_points)
        d_Omega = 0.5 * (T * h_diag + n_off * h_off)
        d_Psi = 0.5 * T * h_diag
        return PotentialValue(value, T * g_diag, d_Omega, d_Psi, "quadrature", n_points)

    def _quadrature_rows(self, law: IndexLaw, gradient: bool) -> PotentialValue:
        """T = 2 softmax: Φ = 2 E ℓ(v, v*), v_a = G_aa − G_ab ~ N(μ, 2Ω + Ψ) (``docs/paper2.md`` §3.3).

        Row a of the output is (σ(βv_a), 1 − σ(βv_a)), so the row loss is
        ℓ = 2c (σ(β₁v) − σ(β₂v*))², and Price's theorem in v gives
        ∇_{Σ_v} Φ = ½·2 E ∂²ℓ; with Σ_v = 2Ω + Ψ, ∇_Ω Φ = 2 ∇_{Σ_v} Φ and ∇_Ψ Φ = ∇_{Σ_v} Φ.
        """
        nodes, w = _gaussian_nodes(law.mean, 2.0 * law.Omega + law.Psi, self.n_nodes)
        b1, b2 = self.loss.student.beta, self.loss.teacher.beta
        c4 = 4.0 * self.loss.prefactor
        s1, s2 = special.expit(b1 * nodes[:, 0]), special.expit(b2 * nodes[:, 1])
        r = s1 - s2
        value = c4 * float(w @ (r * r))          # 2 rows × 2c (σ − σ*)²
        if not gradient:
            return _value_only(value, "quadrature", self.n_nodes ** 2)
        # Derivatives of σ(βv): β σ(1 − σ) and β² σ(1 − σ)(1 − 2σ).
        d1, d2 = b1 * s1 * (1 - s1), b2 * s2 * (1 - s2)
        dd1, dd2 = b1 * d1 * (1 - 2 * s1), b2 * d2 * (1 - 2 * s2)
        d_mean = 2.0 * c4 * np.array([w @ (r * d1), -(w @ (r * d2))])   # two rows
        h11 = w @ (d1 * d1 + r * dd1)
        h22 = w @ (d2 * d2 - r * dd2)
        h12 = -(w @ (d1 * d2))
        # ℓ = 2c r²: ∂²ℓ = 4c(...); ∇_{Σ_v} Φ = 2 rows × ½ E ∂²ℓ.
        d_cov_v = c4 * np.array([[h11, h12], [h12, h22]])
        return PotentialValue(value, d_mean, 2.0 * d_cov_v, d_cov_v, "quadrature",
                              self.n_nodes ** 2)

    # --- Monte Carlo ----------------------------------------------------------------

    def _draws(self) -> tuple[np.ndarray, np.ndarray]:
        if self._normals is None:
            rng = np.random.default_rng(self.seed)
            shape = (self.n_samples, 2, self.T, self.T)
            self._normals = (rng.standard_normal(shape), rng.standard_normal(shape))
        return self._normals

    def _monte_carlo(self, law: IndexLaw, gradient: bool) -> PotentialValue:
        G = law.transform(*self._draws())
        losses = self.loss.value(G)
        value = float(np.mean(losses))
        stderr = float(np.std(losses) / math.sqrt(losses.size))
        if not gradient:
            return _value_only(value, "monte_carlo", self.n_samples, stderr)
        grad = np.mean(self.loss.gradient(G), axis=0)
        d_mean = np.trace(grad, axis1=-2, axis2=-1)
        omega, psi = self.loss.hessian_contractions(G)
        return PotentialValue(value, d_mean, 0.5 * omega.mean(axis=0), 0.5 * psi.mean(axis=0),
                              "monte_carlo", self.n_samples, stderr)

    # --- hardmax ----------------------------------------------------------------------

    def _nonsmooth(self, law: IndexLaw, gradient: bool) -> PotentialValue:
        both_hardmax = (self.loss.student.name, self.loss.teacher.name) == ("hardmax", "hardmax")
        if not (both_hardmax and self.T == 2 and self.method == "quadrature"):
            if gradient:
                raise ValueError("gradients of a hardmax potential exist for T = 2 with hardmax "
                                 "on both sides only; call with gradient=False")
            G = law.transform(*self._draws())
            losses = self.loss.value(G)
            return _value_only(float(np.mean(losses)), "monte_carlo", self.n_samples,
                               float(np.std(losses) / math.sqrt(losses.size)))

        def phi(lw: IndexLaw) -> float:
            return phi_hardmax_t2(lw, prefactor=self.loss.prefactor)

        value = phi(law)
        if not gradient:
            return _value_only(value, "closed_form", 0)
        return _finite_difference_gradient(phi, law, value)


def _value_only(value: float, method: str, n_points: int, stderr: float = 0.0) -> PotentialValue:
    """Φ without gradients (asked for with ``gradient=False``): the gradients are NaN."""
    nan = np.full(2, np.nan)
    return PotentialValue(value, nan, np.full((2, 2), np.nan), np.full((2, 2), np.nan), method,
                          n_points, stderr)


def _finite_difference_gradient(phi, law: IndexLaw, value: float, *,
                                step: float = 1e-6) -> PotentialValue:
    """Central differences of a deterministic Φ in μ, Ω, Ψ (symmetric convention)."""
    K = law.K
    d_mean = np.zeros(K)
    for k in range(K):
        e = np.zeros(K)
        e[k] = step
        d_mean[k] = (phi(IndexLaw(law.T, law.mean + e, law.Omega, law.Psi))
                     - phi(IndexLaw(law.T, law.mean - e, law.Omega, law.Psi))) / (2 * step)
    grads = []
    for which in ("Omega", "Psi"):
        g = np.zeros((K, K))
        for k in range(K):
            for l in range(k, K):
                E = np.zeros((K, K))
                E[k, l] = E[l, k] = step
                plus = {"Omega": law.Omega, "Psi": law.Psi}
                minus = dict(plus)
                plus[which] = plus[which] + E
                minus[which] = minus[which] - E
                diff = (phi(IndexLaw(law.T, law.mean, plus["Omega"], plus["Psi"]))
                        - phi(IndexLaw(law.T, law.mean, minus["Omega"], minus["Psi"])))
                # Moving both (k, l) and (l, k) changes Φ by 2 [∇Φ]_kl step (k ≠ l).
                g[k, l] = g[l, k] = diff / (2 * step) / (1 if k == l else 2)
        grads.append(g)
    return PotentialValue(value, d_mean, grads[0], grads[1], "closed_form", 0)


# --- closed forms (``docs/paper2.md`` §3.3) ------------------------------------------------


def _check_pair(law: IndexLaw) -> None:
    if law.K != 2:
        raise ValueError(f"closed forms are for one student and one teacher (K = 2), got K = {law.K}")


def phi_linear(law: IndexLaw, *, prefactor: float = 0.5) -> float:
    """Φ for the linear link, any T: c E‖G₁ − G₂‖²_F.

    = c [T (Var_diag(G₁ − G₂) + (μ₁ − μ₂)²) + T(T − 1) Var_off(G₁ − G₂)], with
    Var_diag = (Ω+Ψ)₁₁ + (Ω+Ψ)₂₂ − 2(Ω+Ψ)₁₂ and Var_off the same with Ω; for
    symmetric S this is c T(T + 1) Tr((S₁ − S₂)²)/d (``docs/paper2.md`` §3.3).
    """
    _check_pair(law)
    T = law.T
    diag = law.diagonal_cov()
    var_diag = diag[0, 0] + diag[1, 1] - 2 * diag[0, 1]
    var_off = law.Omega[0, 0] + law.Omega[1, 1] - 2 * law.Omega[0, 1]
    dmu = law.mean[0] - law.mean[1]
    return float(prefactor * (T * (var_diag + dmu * dmu) + T * (T - 1) * var_off))


def phi_h2(law: IndexLaw, *, prefactor: float = 0.5) -> float:
    """Φ for the link h₂(z) = (z² − 1)/√2, any T, centered indices.

    Per entry with variances v, v* and covariance c:
    E(h₂(X) − h₂(Y))² = (3v² + 3v*² − 2vv* − 4c²)/2 (``docs/paper2.md`` §3.3); summed
    over T diagonal entries (covariance Ω + Ψ) and T(T − 1) off-diagonal ones (Ω).
    """
    _check_pair(law)
    if np.any(law.mean != 0):
        raise ValueError("the h2 closed form is for centered indices (mean 0)")

    def entry(C):
        v, vs, c = C[0, 0], C[1, 1], C[0, 1]
        return (3 * v * v + 3 * vs * vs - 2 * v * vs - 4 * c * c) / 2

    T = law.T
    return float(prefactor * (T * entry(law.diagonal_cov()) + T * (T - 1) * entry(law.Omega)))


def phi_hardmax_t2(law: IndexLaw, *, prefactor: float = 0.5) -> float:
    """Φ for hardmax outputs at T = 2: 4c · P(sign v ≠ sign v*), v ~ N(μ, 2Ω + Ψ).

    Each row of the one-hot output differs from the teacher's in two entries
    when the argmax disagrees.  For centered indices and c = ½ this is
    (2/π) arccos(q₁₂/√(q₁₁ q₂₂)) (``docs/paper2.md`` §3.3).
    """
    _check_pair(law)
    if law.T != 2:
        raise ValueError(f"the hardmax closed form is for T = 2, got T = {law.T}")
    cov = 2.0 * law.Omega + law.Psi
    s1, s2 = math.sqrt(cov[0, 0]), math.sqrt(cov[1, 1])
    if s1 == 0 or s2 == 0:
        raise ValueError("the hardmax closed form needs index variances > 0")
    corr = float(np.clip(cov[0, 1] / (s1 * s2), -1 + 1e-15, 1 - 1e-15))
    h1, h2 = law.mean[0] / s1, law.mean[1] / s2
    # P(v < 0 < v*) + P(v* < 0 < v) in standardised variables.
    disagree = ndtr2(-h1, h2, -corr) + ndtr2(h1, -h2, -corr)
    return float(4.0 * prefactor * disagree)


def phi_softmax_t2(law: IndexLaw, *, beta: float = 1.0, prefactor: float = 0.5,
                   n_nodes: int = 60) -> float:
    """Φ for softmax(β) outputs at T = 2 as one 2-D Gauss–Hermite integral.

    Φ = 4c E(σ(βv) − σ(βv*))², (v, v*) ~ N(μ, 2Ω + Ψ): for centered symmetric
    S and c = ½ this is 2 F_β(3q₁₁, 3q₁₂, 3q₂₂) of ``docs/paper2.md`` §3.3.
    """
    _check_pair(law)
    if law.T != 2:
        raise ValueError(f"the softmax closed form is for T = 2, got T = {law.T}")
    nodes, w = _gaussian_nodes(law.mean, 2.0 * law.Omega + law.Psi, n_nodes)
    diff = special.expit(beta * nodes[:, 0]) - special.expit(beta * nodes[:, 1])
    return float(4.0 * prefactor * (w @ (diff * diff)))


# --- Theorem 1 at finite d ----------------------------------------------------------------


def law_of_pair(student, teacher, T: int, *, centered: bool) -> IndexLaw:
    """Gaussian-equivalent law of the indices of two matrices at their finite-d order parameters.

    μ_k = Tr S_k/√d (0 for centered indices), Ω, Ψ from
    :func:`aimrepro.paper2.matrices.trace_products`.
    """
    trace, Psi, Omega = trace_products([student, teacher])
    d = student.d
    mean = np.zeros(2) if centered else math.sqrt(d) * trace
    return IndexLaw(T, mean, Omega, Psi)


@dataclass(frozen=True)
class FiniteDLoss:
    """Monte-Carlo estimate of the finite-d population loss E_x ℒ (Theorem 1, ``docs/paper2.md`` §3.1).

    Attributes
    ----------
    value, stderr : float
        Control-variate estimate and its standard error.
    plain_value, plain_stderr : float
        The plain sample mean and its standard error.
    n_samples : int
    """

    value: float
    stderr: float
    plain_value: float
    plain_stderr: float
    n_samples: int


def finite_d_loss(losses, student, teacher, T: int, n_samples: int,
                  rng: np.random.Generator, *, centered: bool = True,
                  chunk: int = 20_000) -> list[FiniteDLoss]:
    """E_x ℒ(G(x)) over Gaussian tokens at finite d, with Wick-exact control variates.

    The first and second moments of the index array are exact at every d
    (Wick's theorem, ``docs/paper2.md`` §3.1 step 3), so every entry G_ijk and
    every product G_ijk G_i'j'l is a control variate with a known mean; the
    regression on them (least squares on the same draws) removes the part of
    the loss that is quadratic in the indices, which shrinks the standard
    error without biasing the estimate beyond O(1/n).  For a loss that *is*
    quadratic (the linear link) the control-variate value equals Φ by
    construction: compare the plain mean there.

    Parameters
    ----------
    losses : sequence of MSELoss
        Evaluated on the same tokens.
    student, teacher : FactoredMatrix or DenseMatrix
    T, n_samples : int
    rng : numpy.random.Generator
    centered : bool
        Centered index (tied, direct) or not (untied).
    chunk : int
        Sequences per batch of tokens (memory O(chunk T d)).

    Returns
    -------
    list of FiniteDLoss, one per loss.

    Notes
    -----
    Cost O(n_samples T d r) for factored matrices (O(n_samples T d²) dense),
    plus O(n_samples m²) for the m = 2T² + (2T²)(2T² + 1)/2 controls.
    """
    if not (isinstance(n_samples, (int, np.integer)) and n_samples >= 100):
        raise ValueError(f"n_samples must be an integer >= 100, got {n_samples!r}")
    losses = list(losses)
    law = law_of_pair(student, teacher, T, centered=centered)
    mean_vec = (law.mean[:, None, None] * np.eye(T)).ravel()
    eye = np.eye(T)
    cov = (np.einsum("kl,ac,bd->kablcd", law.Omega, eye, eye)
           + np.einsum("kl,ad,bc->kablcd", law.Psi, eye, eye)).reshape(mean_vec.size, -1)
    iu = np.triu_indices(mean_vec.size)
    control_mean = np.concatenate([mean_vec, (cov + np.outer(mean_vec, mean_vec))[iu]])
    m, n_losses = control_mean.size, len(losses)
    sum_y, sum_yy = np.zeros(n_losses), np.zeros(n_losses)
    sum_c, sum_cc, sum_cy = np.zeros(m), np.zeros((m, m)), np.zeros((m, n_losses))
    done = 0
    while done < n_samples:
        n = min(chunk, n_samples - done)
        X = rng.standard_normal((n, T, student.d))
        G = np.stack([student.indices(X, centered=centered),
                      teacher.indices(X, centered=centered)], axis=1)
        y = np.stack([loss.value(G) for loss in losses], axis=1)
        z = G.reshape(n, -1)
        c = np.concatenate([z, (z[:, :, None] * z[:, None, :])[:, iu[0], iu[1]]], axis=1)
        c -= control_mean
        sum_y += y.sum(axis=0)
        sum_yy += np.einsum("ni,ni->i", y, y)
        sum_c += c.sum(axis=0)
        sum_cc += c.T @ c
        sum_cy += c.T @ y
        done += n
    n = n_samples
    y_bar, c_bar = sum_y / n, sum_c / n
    var_y = sum_yy / n - y_bar ** 2
    cov_cc = sum_cc / n - np.outer(c_bar, c_bar)
    cov_cy = sum_cy / n - np.outer(c_bar, y_bar)
    # Products of duplicated entries (G_ab = G_ba for symmetric S) make the
    # controls collinear: the pseudo-inverse regresses on the independent ones.
    beta = np.linalg.pinv(cov_cc, rcond=1e-10) @ cov_cy
    residual_var = np.maximum(var_y - np.einsum("mi,mi->i", cov_cy, beta), 0.0)
    value = y_bar - c_bar @ beta          # c is centred at its exact mean
    return [FiniteDLoss(float(value[i]), math.sqrt(residual_var[i] / n), float(y_bar[i]),
                        math.sqrt(max(var_y[i], 0.0) / n), n) for i in range(n_losses)]
