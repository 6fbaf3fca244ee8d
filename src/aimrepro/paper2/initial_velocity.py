"""Initial velocities of weak recovery: [P eq. 17] (tied), [P eq. 23] (sign of Γ₁₂), [P eq. 42] (untied).

Tied attention, [P eq. 17] (``docs/paper2.md`` §5.1 T3)
    At an uninformative start (p̄₁₂ = 0 and the mixed centered third moments
    of Assumption 3 vanish) the structural overlap p₁₂ = q₁₂ − t₁t₂ leaves 0
    with velocity dp̄₁₂/dt|₀ = −2 Γ₁₂(q̄(0)) t̄₁(0) p̄₂₂
    (:func:`tied_initial_velocity`).  It is a d → ∞ statement; the matrix
    flow from a finite-d W(0) differs by the centered moments and the initial
    p₁₂ of [P eq. 356] (:func:`tied_velocity_terms`), and finite-d SGD by the
    non-Gaussian corrections of :mod:`aimrepro.paper2.finite_d_drift`.

Sign of Γ₁₂, [P eq. 23]
    For ℒ = c‖F(G₁) − F(G₂)‖² with one link F and q₁₁ = q₂₂ = q, Mehler's
    formula writes −Γ₁₂ as a power series in the correlation ρ = t₁t₂/q with
    non-negative coefficients c_n = ½·2c Σ_{|ν| = n} ν! ‖H_ν‖² (the Hermite
    coefficients H_ν of ∇F(√q B^{1/2} z) B^{1/2}), so Γ₁₂ < 0 at ρ > 0 unless
    ∇F ≡ 0 (:func:`cross_gradient_series`).  With 𝒞 = I the expectation
    factorises over independent scalar channels (ours, ``docs/paper2.md`` §3.2–3.3):

    * elementwise links, any T: T diagonal entries of variance 2q (weight
      B = 2) and T(T − 1) off-diagonal ones of variance q (weight 1), so
      c_n = c n! [2T a_n(√(2q))² + T(T − 1) a_n(√q)²],
      a_n(σ) = E[h'(σZ) He_n(Z)]/n!;
    * row softmax at T = 2: each row depends on v = G_aa − G_ab ~ N(0, 3q)
      only, and c_n = 12 c n! b_n², b_n = E[β σ'(β√(3q) Z) He_n(Z)]/n!
      (σ the logistic function; ``docs/paper2.md`` §3.3: Γ₁₂ = −6β² E σ'σ' at c = ½).

    Hardmax has ∇F = 0 almost everywhere: the series is identically zero
    although the closed-form potential (2/π) arccos(cos) has Γ₁₂ < 0; the
    Hermite representation needs a smooth loss (Price's theorem).

    The identity needs q₁₁ = q₂₂ (the remark after [P eq. 22]); without it
    the sign of Γ₁₂ can flip, e.g. for h₃ at T = 1,
    −Γ₁₂ = (3/2)[(2q₁₁ − 1)(2q₂₂ − 1) + 2(2q₁₂)²] (ours), negative when the
    two index variances straddle 1 (:func:`cross_gradient_sign_table`).

Untied attention, [P eq. 42] (``docs/paper2.md`` §5.3 U2)
    After the fast boundary layer the overlaps q₁₂ = (q⁽¹⁾₁₂, q⁽²⁾₁₂) leave 0
    with slow velocity dq̄₁₂/dτ|₀ = −2 D₁(0) Q₂ g*₁₂, D₁ = t^A + t^B,
    Q₂ = [[q⁽¹⁾₂₂, q⁽²⁾₂₂], [q⁽²⁾₂₂, q⁽¹⁾₂₂]] and g*₁₂ = (∂Φ/∂q⁽¹⁾₁₂,
    ∂Φ/∂q⁽²⁾₁₂) (symmetric convention) at the fast state m*
    (:func:`untied_initial_velocity`); [P eqs. 920–921] give the two rows.

Numerics
--------
Hermite coefficients by Gauss–Hermite quadrature with ``n_nodes`` nodes:
exact for the polynomial links once n_nodes > (order + degree)/2; for the
softmax they converge geometrically.  Everything else is one Φ evaluation.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import special

from aimrepro.paper2.losses import Link, MSELoss, make_link
from aimrepro.paper2.population import IndexLaw, Potential
from aimrepro.paper2.trajectory import OrderParameters

__all__ = [
    "CrossGradientSeries",
    "TiedVelocityTerms",
    "UntiedVelocity",
    "cross_gradient_series",
    "cross_gradient_sign_table",
    "tied_initial_velocity",
    "tied_velocity_terms",
    "untied_initial_velocity",
]


def tied_initial_velocity(potential: Potential, initial: OrderParameters) -> float:
    """dp̄₁₂/dt at t = 0 by [P eq. 17]: −2 Γ₁₂(q(0)) t₁(0) p₂₂.

    Parameters
    ----------
    potential : Potential
        Φ of the tied run's loss and T.
    initial : OrderParameters
        The symmetric initial state (Ψ = Ω = q); finite-d or limiting values.
    """
    q = initial.Psi
    if not np.allclose(initial.Psi, initial.Omega, rtol=1e-9, atol=1e-12):
        raise ValueError("the tied identity [P eq. 17] needs symmetric matrices (Psi = Omega)")
    gamma = potential.gamma(q)
    p22 = float(q[1, 1] - initial.trace[1] ** 2)
    return float(-2.0 * gamma[0, 1] * initial.trace[0] * p22)


@dataclass(frozen=True)
class TiedVelocityTerms:
    """The matrix flow's dp₁₂/dt at a finite-d state, split as in [P eq. 356] (γ = 0).

    dp₁₂/dt = −2Γ₁₁(μ̊₁₁₂ + 2t₁p₁₂) − 2Γ₁₂(μ̊₁₂₂ + t₂p₁₂ + t₁p₂₂), with
    μ̊₁₁₂ = Tr(S̊₁²S̊₂)/d and μ̊₁₂₂ = Tr(S̊₁S̊₂²)/d.

    Attributes
    ----------
    eq17 : float
        −2Γ₁₂ t₁ p₂₂, the only term left under Assumption 3 ([P eq. 17]).
    centered : float
        −2Γ₁₁ μ̊₁₁₂ − 2Γ₁₂ μ̊₁₂₂ (the mixed centered third moments).
    overlap : float
        −2(2Γ₁₁t₁ + Γ₁₂t₂) p₁₂ (the initial structural overlap).
    moments : dict
        t₁, t₂, q₁₁, q₁₂, q₂₂, μ̊₁₁₂, μ̊₁₂₂, p₁₂, p₂₂, Γ₁₁, Γ₁₂.
    """

    eq17: float
    centered: float
    overlap: float
    moments: dict

    @property
    def total(self) -> float:
        return self.eq17 + self.centered + self.overlap


def tied_velocity_terms(potential: Potential, W: np.ndarray, teacher) -> TiedVelocityTerms:
    """[P eq. 356] at the state (W, S₂): the matrix flow's dp₁₂/dt and its three parts.

    Parameters
    ----------
    potential : Potential
    W : (d, r) ndarray
        Student factor, S₁ = W Wᵀ.
    teacher : FactoredMatrix
        Symmetric S₂ = c L Lᵀ + s I.

    Notes
    -----
    O(d r² + d r r*) through the factors (no d×d matrix).
    """
    W = np.asarray(W, dtype=float)
    if teacher.right is not None:
        raise ValueError("the tied identity needs a symmetric teacher (right factor None)")
    d = W.shape[0]
    L, c, s = teacher.left, teacher.scale, teacher.shift
    Gww = W.T @ W
    S2W = c * (L @ (L.T @ W)) + s * W                  # S₂ W
    t1 = float(np.trace(Gww)) / d
    t2 = teacher.trace() / d
    q11 = float(np.sum(Gww * Gww)) / d
    q12 = float(np.sum(W * S2W)) / d
    LtL = L.T @ L
    q22 = (c * c * float(np.sum(LtL * LtL)) + 2 * c * s * float(np.trace(LtL)) + s * s * d) / d
    mu112 = float(np.sum(Gww * (W.T @ S2W))) / d       # Tr(S₁² S₂)/d
    mu122 = float(np.sum(S2W * S2W)) / d               # Tr(S₁ S₂²)/d
    # centered moments, (S − tI) expanded
    c112 = mu112 - t2 * q11 - 2 * t1 * q12 + 2 * t1 * t1 * t2
    c122 = mu122 - 2 * t2 * q12 - t1 * q22 + 2 * t1 * t2 * t2
    p12, p22 = q12 - t1 * t2, q22 - t2 * t2
    gamma = potential.gamma(np.array([[q11, q12], [q12, q22]]))
    g11, g12 = float(gamma[0, 0]), float(gamma[0, 1])
    moments = {"t1": t1, "t2": t2, "q11": q11, "q12": q12, "q22": q22, "c112": c112,
               "c122": c122, "p12": p12, "p22": p22, "gamma11": g11, "gamma12": g12}
    return TiedVelocityTerms(-2 * g12 * t1 * p22, -2 * g11 * c112 - 2 * g12 * c122,
                             -2 * (2 * g11 * t1 + g12 * t2) * p12, moments)


# --- [P eq. 23]: the sign of Γ₁₂ by Mehler's formula ------------------------------------------


@dataclass(frozen=True)
class CrossGradientSeries:
    """−Γ₁₂ = Σ_n c_n ρⁿ at q₁₁ = q₂₂ = q ([P eq. 23]) and the same quantity from Φ.

    Attributes
    ----------
    link : str
    T : int
    q : float
        q₁₁ = q₂₂.
    rho : float
        Correlation q₁₂/q (t₁t₂/q at the tied uninformative point).
    coefficients : (n_terms,) ndarray
        c_n ≥ 0, n = 0 … n_terms − 1.
    series : float
        Σ_n c_n ρⁿ over the computed terms.
    minus_gamma12 : float
        −Γ₁₂ from the potential (quadrature, or the hardmax closed form).
    """

    link: str
    T: int
    q: float
    rho: float
    coefficients: np.ndarray
    series: float
    minus_gamma12: float

    @property
    def sign(self) -> int:
        """Sign of Γ₁₂ from the potential: −1 is the direction [P eq. 23] predicts."""
        return int(np.sign(-self.minus_gamma12))


def _hermite_projection(f, n_terms: int, n_nodes: int) -> np.ndarray:
    """a_n = E[f(Z) He_n(Z)]/n!, n < n_terms, Z ~ N(0, 1), by Gauss–Hermite quadrature."""
    x, w = special.roots_hermitenorm(n_nodes)
    w = w / math.sqrt(2.0 * math.pi)
    fx = f(x)
    coeffs = np.empty(n_terms)
    he_prev, he = np.zeros_like(x), np.ones_like(x)
    for n in range(n_terms):
        coeffs[n] = float(w @ (fx * he)) / math.factorial(n)
        he_prev, he = he, x * he - n * he_prev       # He_{n+1} = x He_n − n He_{n−1}
    return coeffs


def _mehler_coefficients(link: Link, T: int, q: float, prefactor: float, n_terms: int,
                         n_nodes: int) -> np.ndarray:
    """c_n of −Γ₁₂ = Σ c_n ρⁿ (module docstring), one scalar channel per entry class or row."""
    factorials = np.array([math.factorial(n) for n in range(n_terms)], dtype=float)
    if link.elementwise:
        def derivative(scale):
            return lambda z: link.jacobian(scale * np.asarray(z))
        diag = _hermite_projection(derivative(math.sqrt(2.0 * q)), n_terms, n_nodes)
        off = _hermite_projection(derivative(math.sqrt(q)), n_terms, n_nodes)
        return prefactor * factorials * (2 * T * diag ** 2 + T * (T - 1) * off ** 2)
    if link.name == "softmax":
        if T != 2:
            raise ValueError(f"the softmax series is implemented for T = 2, got T = {T}")
        beta = link.beta

        def row(z):
            s = special.expit(beta * math.sqrt(3.0 * q) * np.asarray(z))
            return beta * s * (1.0 - s)
        b = _hermite_projection(row, n_terms, n_nodes)
        return 12.0 * prefactor * factorials * b ** 2
    # hardmax: ∇F = 0 almost everywhere
    return np.zeros(n_terms)


def cross_gradient_series(link: str, T: int, q: float, rho: float, *, beta: float = 1.0,
                          prefactor: float = 0.5, n_terms: int = 30,
                          n_nodes: int = 80) -> CrossGradientSeries:
    """The Hermite (Mehler) series of −Γ₁₂ at q₁₁ = q₂₂ = q, q₁₂ = ρ q ([P eq. 23]).

    Parameters
    ----------
    link : str
        A name of :data:`aimrepro.paper2.losses.LINK_NAMES`.
    T : int
        Tokens (softmax and hardmax: T = 2).
    q : float
        > 0.
    rho : float
        In [−1, 1].
    beta, prefactor : float
        Softmax inverse temperature and the MSE prefactor c.
    n_terms, n_nodes : int
        Terms of the series and Gauss–Hermite nodes of each coefficient.
    """
    if not (math.isfinite(q) and q > 0):
        raise ValueError(f"q must be a finite number > 0, got {q}")
    if not (math.isfinite(rho) and -1.0 <= rho <= 1.0):
        raise ValueError(f"rho must be in [-1, 1], got {rho}")
    for name, value in (("n_terms", n_terms), ("n_nodes", n_nodes)):
        if not (isinstance(value, (int, np.integer)) and value >= 1):
            raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    f = make_link(link, beta=beta)
    if not f.elementwise and T != 2:
        raise ValueError(f"row-wise links are handled at T = 2, got T = {T}")
    coefficients = _mehler_coefficients(f, T, q, prefactor, n_terms, n_nodes)
    series = float(np.sum(coefficients * rho ** np.arange(n_terms)))
    potential = Potential(MSELoss(f, f, prefactor), T)
    law = IndexLaw.symmetric(np.array([[q, rho * q], [rho * q, q]]), T)
    gamma12 = float(potential.evaluate(law).gamma[0, 1])
    return CrossGradientSeries(link, T, float(q), float(rho), coefficients, series, -gamma12)


def cross_gradient_sign_table(links: Sequence[str], *, T_of=None, q11_values=(0.5,),
                              q22: float = 0.5, rho_values=(1.0 / 3.0,), beta: float = 1.0,
                              prefactor: float = 0.5) -> dict[str, np.ndarray]:
    """Γ₁₂ at the tied uninformative point for every link, including q₁₁ ≠ q₂₂.

    The correlation ρ is t₁t₂/√(q₁₁q₂₂) (the uninformative q₁₂ = t₁t₂), so
    q₁₂ = ρ√(q₁₁q₂₂).  [P eq. 23] covers q₁₁ = q₂₂ only; the other rows show
    where its conclusion (Γ₁₂ < 0) still holds.

    Parameters
    ----------
    links : sequence of str
    T_of : callable link → T, optional
        Default: 1 for elementwise links, 2 for row-wise ones.
    q11_values, rho_values : sequences
        Grid of student variances q₁₁ and correlations ρ.
    q22 : float
        Teacher q₂₂.

    Returns
    -------
    dict of columns ``link`` (str), ``T``, ``q11``, ``q22``, ``rho``, ``gamma12``, ``sign``
    (of Γ₁₂: −1, 0 or +1) and ``series`` (the Mehler sum where q₁₁ = q₂₂, NaN otherwise).
    """
    rows = {name: [] for name in ("link", "T", "q11", "q22", "rho", "gamma12", "sign", "series")}
    for link in links:
        f = make_link(link, beta=beta)
        T = (1 if f.elementwise else 2) if T_of is None else int(T_of(link))
        potential = Potential(MSELoss(f, f, prefactor), T)
        for q11 in q11_values:
            for rho in rho_values:
                q12 = rho * math.sqrt(q11 * q22)
                law = IndexLaw.symmetric(np.array([[q11, q12], [q12, q22]]), T)
                gamma12 = float(potential.evaluate(law).gamma[0, 1])
                series = (cross_gradient_series(link, T, q22, rho, beta=beta,
                                                prefactor=prefactor).series
                          if math.isclose(q11, q22) else math.nan)
                for name, value in (("link", link), ("T", T), ("q11", q11), ("q22", q22),
                                    ("rho", rho), ("gamma12", gamma12),
                                    ("sign", float(np.sign(gamma12))), ("series", series)):
                    rows[name].append(value)
    return {name: np.asarray(values) for name, values in rows.items()}


# --- [P eq. 42]: the untied initial slow velocity ---------------------------------------------


@dataclass(frozen=True)
class UntiedVelocity:
    """dq̄₁₂/dτ at τ = 0⁺ by [P eq. 42] and its ingredients.

    Attributes
    ----------
    velocity : (2,) ndarray
        (dq⁽¹⁾₁₂/dτ, dq⁽²⁾₁₂/dτ) = −2 D₁ Q₂ g*.
    gradient : (2,) ndarray
        g* = (a₁₂, b₁₂), [∇_{q⁽¹⁾}Φ]₁₂ and [∇_{q⁽²⁾}Φ]₁₂ at (m*, q(0)).
    rate : float
        D₁ = t^A + t^B.
    teacher_covariance : (2, 2) ndarray
        Q₂.
    m_star : float
    """

    velocity: np.ndarray
    gradient: np.ndarray
    rate: float
    teacher_covariance: np.ndarray
    m_star: float

    @property
    def symmetric(self) -> float:
        """d(q⁽¹⁾₁₂ + q⁽²⁾₁₂)/dτ: divided by q⁽¹⁾₂₂ + q⁽²⁾₂₂ it is the velocity of the symmetric overlap."""
        return float(self.velocity.sum())


def untied_initial_velocity(potential: Potential, state, m_star: float) -> UntiedVelocity:
    """[P eq. 42]: dq̄₁₂/dτ|₀ = −2 D₁(0) Q₂ g*₁₂ at the fast state ``m_star``.

    Parameters
    ----------
    potential : Potential
        Φ(m, q⁽¹⁾, q⁽²⁾) of the loss (any T).
    state : :class:`aimrepro.paper2.untied.fast.UntiedState`
        The initial moments (q⁽¹⁾ = Ω, q⁽²⁾ = Ψ, t^A, t^B) and the teacher mean;
        the student–teacher overlaps q₁₂ enter Φ as given (≈ 0 at a free start).
    m_star : float
        The mean selected by the fast phase (:func:`aimrepro.paper2.untied.fast.fast_fixed_point`).
    """
    if not math.isfinite(m_star):
        raise ValueError(f"m_star must be finite, got {m_star}")
    rate = float(state.tA + state.tB)
    if not rate > 0:
        raise ValueError(f"t^A + t^B must be > 0, got {rate}")
    value = potential.evaluate(IndexLaw.untied([m_star, float(state.mean[1])], state.q1,
                                               state.q2, potential.T))
    g = np.array([value.d_Omega[0, 1], value.d_Psi[0, 1]])
    Q2 = np.array([[state.q1[1, 1], state.q2[1, 1]], [state.q2[1, 1], state.q1[1, 1]]])
    return UntiedVelocity(-2.0 * rate * Q2 @ g, g, rate, Q2, float(m_star))
