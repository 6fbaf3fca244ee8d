"""The exact finite-d mean drift of tied online SGD for polynomial links (ours; ``docs/paper2.md`` §5.1).

[P eq. 17] and the matrix flow of ``docs/paper2.md`` §4.3 evaluate the expected
SGD increment with the *Gaussian-equivalent* indices of Theorem 1.  At finite
d the indices G_k = (xᵀS_kx − Tr S_k)/√d are not Gaussian: their joint
cumulants of order k ≥ 3 are O(d^{1−k/2}).  For a polynomial link (h₁, h₂,
h₃) the exact expectation of the one-step increment over x ~ N(0, I_d) is a
finite combination of joint moments of centered quadratic forms, which this
module computes without sampling.  It is the drift online SGD follows at
fixed d in the limit of a small learning rate (the O(α d/B) noise term aside,
``docs/paper2.md`` §2.4), as opposed to the d → ∞ drift of the flows.

One token (L = 1), loss ℒ = c (h(G₁) − h(G₂))², student S₁ = W Wᵀ, fixed
teacher S₂, time t = 4αn/d ([P eq. 9]).  One SGD step changes S₁ by
δS₁ = −(2α/√d) ℓ' [(xxᵀ − I) S₁ + S₁ (xxᵀ − I)] + O(α²), ℓ' = ∂ℒ/∂G₁, so
per unit of t (ours):

    dt₁/dt  = −E[ℓ' G₁],
    dq₁₂/dt = −E[ℓ' H₁₂],   H₁₂ = xᵀB₁₂x − Tr B₁₂,  B₁₂ = (S₁S₂ + S₂S₁)/(2√d),
    dq₁₁/dt = −2E[ℓ' H₁₁],  H₁₁ = xᵀB₁₁x − Tr B₁₁,  B₁₁ = S₁²/√d,
    dp₁₂/dt = dq₁₂/dt − t₂ dt₁/dt.

Keeping only the second cumulants (Stein's lemma with jointly Gaussian
G₁, G₂, H) gives back the flow, dq₁₂/dt = −2Γ₁₁ μ₁₁₂ − 2Γ₁₂ μ₁₂₂ [P eq. 350].

The full matrix E_x[∇_W ℒ] (:func:`expected_gradient`) is a polynomial in
S₁, S₂ applied to W with the same scalar moments as coefficients; its
gradient flow (:func:`solve_finite_d_flow`, dW/dt = −(d/4) E_x[∇_W ℒ]) is the
exact finite-d population flow that tied SGD follows at small learning
rate, against which the Gaussian-equivalent matrix flow of
:mod:`aimrepro.paper2.flows` is the d → ∞ reference.

Moments of centered quadratic forms Q_i = xᵀA_ix − Tr A_i (A_i symmetric)
come from the cumulant generating function

    log E exp(Σ s_i Q_i) = Σ_{k ≥ 2} (2^{k−1}/k) Tr[(Σ_i s_i A_i)^k]

(the Gaussian log-determinant), exponentiated as a truncated power series in
s: E[Π Q_i^{e_i}] = (Π e_i!) [s^e] exp(K(s)).  Every A_i here is a linear
combination of words in S₁, S₂ divided by √d, so each trace is
d^{1−k/2} μ_α with μ_α = Tr(S_{α₁}⋯S_{α_w})/d the moments of
:mod:`aimrepro.paper2.moments`, and the term of cumulant order k is
O(d^{1−k/2}) at fixed moments.

Numerics
--------
The moments of all bracelet words up to length 7 (h₃: the drift is a
6th-order moment and B₁₂ has two letters) from dense matrices,
O(n_prefixes d³) with n_prefixes ≤ 126; then O(3^6) traces looked up and a
truncated series exponential over ≤ 84 monomials.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from scipy.integrate import solve_ivp

from aimrepro.paper2.losses import MSELoss
from aimrepro.paper2.matrices import FactoredMatrix, trace_products
from aimrepro.paper2.moments import WordBasis, initial_moments
from aimrepro.paper2.trajectory import OrderParameters, Trajectory

__all__ = [
    "FiniteDFlowParams",
    "TiedDrift",
    "expected_gradient",
    "finite_d_flow_rhs",
    "link_polynomial",
    "quadratic_form_moments",
    "solve_finite_d_flow",
    "tied_drift",
]

Monomial = tuple[int, ...]
Poly = dict[Monomial, float]

_HERMITE = {  # h_k = He_k/√(k!) as {power: coefficient}
    1: {1: 1.0},
    2: {2: 1.0 / math.sqrt(2.0), 0: -1.0 / math.sqrt(2.0)},
    3: {3: 1.0 / math.sqrt(6.0), 1: -3.0 / math.sqrt(6.0)},
}


def link_polynomial(order: int) -> dict[int, float]:
    """h_k as {power: coefficient}, k = 1, 2, 3 (``linear`` is h₁)."""
    if order not in _HERMITE:
        raise ValueError(f"polynomial links are h1, h2, h3, got order {order!r}")
    return dict(_HERMITE[order])


def _derivative(p: Mapping[int, float]) -> dict[int, float]:
    return {k - 1: k * c for k, c in p.items() if k > 0}


def _within(e: Monomial, caps: Monomial | None, max_degree: int | None) -> bool:
    return ((caps is None or all(x <= c for x, c in zip(e, caps)))
            and (max_degree is None or sum(e) <= max_degree))


def _poly_mul(a: Poly, b: Poly, caps: Monomial | None = None,
              max_degree: int | None = None) -> Poly:
    out: Poly = {}
    for ea, ca in a.items():
        for eb, cb in b.items():
            e = tuple(x + y for x, y in zip(ea, eb))
            if not _within(e, caps, max_degree):
                continue
            out[e] = out.get(e, 0.0) + ca * cb
    return out


def _poly_add(a: Poly, b: Poly, scale: float = 1.0) -> Poly:
    out = dict(a)
    for e, c in b.items():
        out[e] = out.get(e, 0.0) + scale * c
    return out


def _series_exp(K: Poly, caps: Monomial, max_degree: int) -> Poly:
    """exp(K) truncated to the monomials within ``caps`` and ``max_degree``; K(0) = 0."""
    one = (0,) * len(caps)
    result: Poly = {one: 1.0}
    term: Poly = {one: 1.0}
    for n in range(1, max_degree + 1):
        term = {e: c / n for e, c in _poly_mul(term, K, caps, max_degree).items()}
        if not term:
            break
        result = _poly_add(result, term)
    return result


def quadratic_form_moments(trace, n_forms: int, caps: Monomial, *, max_degree: int | None = None,
                           max_cumulant: int | None = None) -> dict[Monomial, float]:
    """Joint moments E[Π_i Q_i^{e_i}] of centered Gaussian quadratic forms, e ≤ caps, |e| ≤ max_degree.

    Parameters
    ----------
    trace : callable (tuple of form indices) → float
        Tr(A_{i₁} ⋯ A_{i_k}) of the forms' symmetric matrices.
    n_forms : int
    caps : tuple of int
        Largest power of each form.
    max_degree : int or None
        Largest total degree Σ e_i (default Σ caps).
    max_cumulant : int or None
        Keep cumulants up to this order only (2: the Gaussian-equivalent
        moments with the same covariances); None keeps all (exact).

    Returns
    -------
    dict {e: E[Π Q_i^{e_i}]} for every e with e ≤ caps and |e| ≤ max_degree.
    """
    caps = tuple(int(c) for c in caps)
    if len(caps) != n_forms or any(c < 0 for c in caps):
        raise ValueError(f"caps must be {n_forms} integers >= 0, got {caps}")
    max_degree = sum(caps) if max_degree is None else int(max_degree)
    if max_degree < 0:
        raise ValueError(f"max_degree must be >= 0, got {max_degree}")
    top = max_degree if max_cumulant is None else min(max_degree, int(max_cumulant))
    K: Poly = {}
    for k in range(2, top + 1):
        weight = 2.0 ** (k - 1) / k
        for seq in itertools.product(range(n_forms), repeat=k):
            e = tuple(seq.count(i) for i in range(n_forms))
            if not _within(e, caps, None):
                continue
            K[e] = K.get(e, 0.0) + weight * trace(seq)
    series = _series_exp(K, caps, max_degree)
    return {e: series.get(e, 0.0) * math.prod(math.factorial(x) for x in e)
            for e in itertools.product(*(range(c + 1) for c in caps)) if sum(e) <= max_degree}


@dataclass(frozen=True)
class TiedDrift:
    """Mean drift per unit of t of tied online SGD at t = 0, exact and Gaussian-equivalent.

    Attributes
    ----------
    exact : dict
        ``t1``, ``q12``, ``q11``, ``p12``: the exact finite-d expected velocities.
    gaussian : dict
        The same with the indices replaced by their Gaussian equivalents
        (the matrix flow's velocity, [P eqs. 350–351]).
    d : int
    """

    exact: Mapping[str, float]
    gaussian: Mapping[str, float]
    d: int

    @property
    def excess(self) -> float:
        """exact − Gaussian velocity of p₁₂: the non-Gaussian part of the finite-d drift."""
        return float(self.exact["p12"] - self.gaussian["p12"])


def _ell_polynomial(loss: MSELoss) -> Poly:
    """ℓ' = ∂ℒ/∂G₁ = 2c (h_s(G₁) − h_t(G₂)) h_s'(G₁) as {(e₁, e₂): coefficient}."""
    if not (loss.student.elementwise and loss.teacher.elementwise):
        raise ValueError("the exact drift is for polynomial elementwise links (h1, h2, h3)")
    hs = link_polynomial(loss.student.hermite_order)
    ht = link_polynomial(loss.teacher.hermite_order)
    residual: Poly = {(k, 0): c for k, c in hs.items()}
    residual = _poly_add(residual, {(0, k): c for k, c in ht.items()}, -1.0)
    ell = _poly_mul(residual, {(k, 0): c for k, c in _derivative(hs).items()})
    return {e: 2.0 * loss.prefactor * c for e, c in ell.items() if c != 0.0}


def expected_gradient(W: np.ndarray, teacher_dense: np.ndarray, loss: MSELoss) -> np.ndarray:
    """E_x[∇_W ℒ] at finite d for the tied student S₁ = W Wᵀ, one token, polynomial links.

    ∇_W ℒ = ℓ'(G₁, G₂) · 2(xxᵀ − I)W/√d with G_k = xᵀA_kx − Tr A_k, A_k = S_k/√d.
    With Q = (G₁, G₂) and A(s) = s₁A₁ + s₂A₂, the Gaussian identity
    E[e^{s·Q}(xxᵀ − I)] = E[e^{s·Q}] [(I − 2A(s))⁻¹ − I] gives, coefficient by
    coefficient,

        E[G^e (xxᵀ − I)] W = e! Σ_{0 < f ≤ e} m_{e−f} 2^{|f|} R_f,

    m_g = [s^g] E e^{s·Q} (:func:`quadratic_form_moments` without the e!),
    R_f = Σ_{words with letter counts f} A_{w₁}⋯A_{w_k} W, computed by the
    recursion R_f = A₁R_{f−(1,0)} + A₂R_{f−(0,1)}, R₀ = W (ours).

    Cost: one set of moments (words up to the degree D of ℓ', dense d×d
    products, O(2^D d³)) and O(D²) products A·R of cost O(d² r).
    """
    W = np.asarray(W, dtype=float)
    d = W.shape[0]
    S2 = np.asarray(teacher_dense, dtype=float)
    ell = _ell_polynomial(loss)
    degree = max(sum(e) for e in ell)
    A = [W @ W.T / math.sqrt(d), S2 / math.sqrt(d)]
    basis = WordBasis(max(degree, 2))
    mu = initial_moments(basis, [W @ W.T, S2])

    def trace(seq) -> float:
        return d * d ** (-len(seq) / 2) * mu[basis.index(seq)]

    caps = (max(e[0] for e in ell), max(e[1] for e in ell))
    raw = quadratic_form_moments(trace, 2, caps, max_degree=degree)
    m = {e: v / (math.factorial(e[0]) * math.factorial(e[1])) for e, v in raw.items()}
    R: dict[Monomial, np.ndarray] = {(0, 0): W}
    for total in range(1, degree + 1):
        for f1 in range(total + 1):
            f = (f1, total - f1)
            if f1 > caps[0] or f[1] > caps[1]:
                continue
            acc = np.zeros_like(W)
            if f1 > 0:
                acc += A[0] @ R[(f1 - 1, f[1])]
            if f[1] > 0:
                acc += A[1] @ R[(f1, f[1] - 1)]
            R[f] = acc
    out = np.zeros_like(W)
    for e, c in ell.items():
        scale = c * math.factorial(e[0]) * math.factorial(e[1])
        for f1 in range(e[0] + 1):
            for f2 in range(e[1] + 1):
                if f1 + f2 == 0:
                    continue
                out += scale * m[(e[0] - f1, e[1] - f2)] * 2.0 ** (f1 + f2) * R[(f1, f2)]
    return 2.0 / math.sqrt(d) * out


@dataclass(frozen=True, eq=False)
class FiniteDFlowParams:
    """Teacher (dense), loss and the shape of W for :func:`finite_d_flow_rhs`."""

    teacher_dense: np.ndarray
    loss: MSELoss
    shape: tuple[int, int]


def finite_d_flow_rhs(t: float, y: np.ndarray, params: FiniteDFlowParams) -> np.ndarray:
    """dW/dt = −(d/4) E_x[∇_W ℒ] on t = 4αn/d: the exact finite-d population gradient flow.

    The small-learning-rate limit of tied SGD at fixed d (no Gaussian
    equivalence), for polynomial links and one token.
    """
    W = y.reshape(params.shape)
    return (-0.25 * W.shape[0] * expected_gradient(W, params.teacher_dense, params.loss)).ravel()


def tied_drift(W: np.ndarray, teacher, loss: MSELoss) -> TiedDrift:
    """The expected velocity of (t₁, q₁₂, q₁₁, p₁₂) under tied SGD at state W (module docstring).

    Parameters
    ----------
    W : (d, r) ndarray
        Student factor, S₁ = W Wᵀ.
    teacher : FactoredMatrix or (d, d) ndarray
        Symmetric S₂.
    loss : MSELoss
        Both links polynomial (h1, h2, h3, linear) and elementwise; one token.

    Notes
    -----
    Cost: :func:`aimrepro.paper2.moments.initial_moments` of the words up
    to length 7 (O(d³) per prefix, dense), then polynomial algebra.
    """
    ell = _ell_polynomial(loss)
    W = np.asarray(W, dtype=float)
    d = W.shape[0]
    S1 = W @ W.T
    S2 = np.asarray(teacher.dense() if hasattr(teacher, "dense") else teacher, dtype=float)
    if S2.shape != (d, d) or not np.allclose(S2, S2.T):
        raise ValueError("the teacher must be a symmetric d×d matrix matching W")
    degree1 = max(e[0] for e in ell) + 1
    degree2 = max(e[1] for e in ell)
    # forms: G₁, G₂, H₁₂, H₁₁ as words in (S₁, S₂) with weights (÷√d each)
    forms = [{(0,): 1.0}, {(1,): 1.0}, {(0, 1): 0.5, (1, 0): 0.5}, {(0, 0): 1.0}]
    max_degree = max(sum(e) for e in ell) + 1
    # words: up to max_degree forms, the two H's with two letters each
    basis = WordBasis(max_degree + 2)
    mu = initial_moments(basis, [S1, S2])
    scale = 1.0 / math.sqrt(d)

    def trace(seq) -> float:
        total = 0.0
        for parts in itertools.product(*(forms[i].items() for i in seq)):
            word = tuple(k for w, _ in parts for k in w)
            total += math.prod(c for _, c in parts) * mu[basis.index(word)]
        return d * scale ** len(seq) * total

    caps = (degree1, degree2, 1, 1)
    out = {}
    for name, max_cumulant in (("exact", None), ("gaussian", 2)):
        moments = quadratic_form_moments(trace, 4, caps, max_degree=max_degree,
                                         max_cumulant=max_cumulant)

        def expect(extra: Monomial) -> float:
            return sum(c * moments.get((e[0] + extra[0], e[1] + extra[1], extra[2], extra[3]),
                                       0.0) for e, c in ell.items())

        t2 = float(np.trace(S2)) / d
        v_t1 = -expect((1, 0, 0, 0))
        v_q12 = -expect((0, 0, 1, 0))
        v_q11 = -2.0 * expect((0, 0, 0, 1))
        out[name] = {"t1": v_t1, "q12": v_q12, "q11": v_q11, "p12": v_q12 - t2 * v_t1}
    return TiedDrift(out["exact"], out["gaussian"], d)


def solve_finite_d_flow(W0: np.ndarray, teacher, loss: MSELoss, times, *, method: str = "RK45",
                        rtol: float = 1e-6, atol: float = 1e-9) -> Trajectory:
    """Integrate :func:`finite_d_flow_rhs` from W(0); a :class:`~aimrepro.paper2.trajectory.Trajectory`.

    Cost per right-hand side: :func:`expected_gradient` (O(2^D d³) for the
    moments plus O(D² d² r)); use d ≤ 200 or so.
    """
    times = np.asarray(times, dtype=float)
    if times.ndim != 1 or times.size < 2 or not np.all(np.diff(times) > 0):
        raise ValueError("times must be an increasing 1-D array with at least two entries")
    W0 = np.asarray(W0, dtype=float)
    S2 = np.asarray(teacher.dense() if hasattr(teacher, "dense") else teacher, dtype=float)
    params = FiniteDFlowParams(S2, loss, W0.shape)
    sol = solve_ivp(finite_d_flow_rhs, (times[0], times[-1]), W0.ravel(), method=method,
                    t_eval=times, args=(params,), rtol=rtol, atol=atol)
    teacher_matrix = teacher if hasattr(teacher, "dense") else None
    order = []
    for w in sol.y.T:
        W = w.reshape(W0.shape)
        if teacher_matrix is not None:
            op = OrderParameters(*trace_products([FactoredMatrix(W), teacher_matrix]))
        else:
            S1 = W @ W.T
            d = S1.shape[0]
            trace = [np.trace(S1) / d, np.trace(S2) / d]
            q = np.array([[np.sum(S1 * S1), np.sum(S1 * S2)], [np.sum(S1 * S2), np.sum(S2 * S2)]]) / d
            op = OrderParameters.symmetric(trace, q)
        order.append(op.as_vector())
    n = sol.t.size
    extra = {"nfev": np.full(n, sol.nfev, dtype=np.int64),
             "status": np.full(n, sol.status, dtype=np.int64)}
    return Trajectory(sol.t, np.asarray(order).reshape(n, -1), W0.shape[0], sol.status != 0,
                      float(sol.t[-1]) if sol.status != 0 else math.nan, extra)
