"""The truncated slow hierarchy of untied attention ([P App. F.2, eqs. 892–914, Cor. 8]).

Slow phase of untied attention (``docs/paper2.md`` §2.3; [P eqs. 29–32]): with
M = U Vᵀ, A = U Uᵀ, B = V Vᵀ (student) and N = M₂ (teacher, fixed), the
normalised traces μ_α = Tr(Z₁⋯Z_w)/d of words over the alphabet
{M, Mᵀ, A, B, N, Nᵀ} obey, on τ = nα/d,

    dμ_α/dτ = −Σ_i β̄ T_i^bias(μ) − 2 Σ_i Σ_{l,r} [∇_{q⁽ʳ⁾}Φ]_{1l} T_{i,l,r}^diff(μ) − 2γ|α|_𝒦 μ_α,

where each student letter Z_i of α is replaced, one at a time, by its
velocity under the slow matrix flow (:func:`aimrepro.paper2.untied.hierarchy.hierarchy_velocity`,
the substitutions of [P eq. 31] with the transposes restored):

    M  → −β̄(A + B) − 2Σ_l [a_l (M_l B + A M_l) + b_l (M_lᵀ B + A M_lᵀ)],
    Mᵀ → −β̄(A + B) − 2Σ_l [a_l (B M_lᵀ + M_lᵀ A) + b_l (B M_l + M_l A)],
    A  → −β̄(M + Mᵀ) − 2Σ_l [a_l (M_l Mᵀ + M M_lᵀ) + b_l (M_lᵀ Mᵀ + M M_l)],
    B  → −β̄(M + Mᵀ) − 2Σ_l [a_l (M_lᵀ M + Mᵀ M_l) + b_l (M_l M + Mᵀ M_lᵀ)],

M₁ = M, M₂ = N, a = ∇_{q⁽¹⁾}Φ, b = ∇_{q⁽²⁾}Φ (student row, symmetric
convention), β̄ = −ψ/(t^A + t^B), ψ = 2Σ_l (a_l + b_l)(μ(M_l B) + μ(A M_l))
[P eqs. 27, 30].  The teacher letters A₂, B₂ of [P eq. 26] never appear:
no substitution inserts them.

Truncation ([P eqs. 905–907]): keep the words of length ≤ M_trunc, set the
longer ones to zero, start from the true initial moments.  The
coefficients use the *extended* vector field of [P eqs. 538–542]: the
covariances are first projected on the cone 𝔔 = {q⁽¹⁾ ± q⁽²⁾ ⪰ 0}
(:func:`project_covariances`), the slaved mean is m*(P(q)) and the bias is
β^ext of [P eq. 541].  Y_M (words longer than M vanish) is invariant, so
the truncation is that vector field restricted to Y_M, as the paper states.

Which words: the closure, under the substitutions, of the words the
coefficients need (q⁽¹⁾₁₁ = μ(M Mᵀ), q⁽²⁾₁₁ = μ(M M), q⁽¹⁾₁₂ = μ(M Nᵀ),
q⁽²⁾₁₂ = μ(M N), t^A, t^B, μ(M B), μ(A M), μ(N B), μ(A N)) and the mean
μ(M) = m/√d, up to length M_trunc (:class:`UntiedWordBasis`); one moment
per class of words equal under rotation and under reversal with
transposition (Tr(Z₁⋯Z_w) = Tr(Z_wᵀ⋯Z₁ᵀ)).  The teacher-only words
q⁽¹⁾₂₂ = μ(N Nᵀ), q⁽²⁾₂₂ = μ(N N) are in the state with zero velocity.

Numerics
--------
One right-hand side: one Φ evaluation with gradients and the root search
for m* (10–30 evaluations of ∂Φ/∂m), then a gather/``bincount`` over the
precomputed insertion terms, O(n_terms).  Initial moments from dense d×d
matrices by a depth-first walk over the prefixes, O(n_prefixes d³).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.integrate import solve_ivp

from aimrepro.paper2.moments import Word, word_traces
from aimrepro.paper2.population import IndexLaw, Potential
from aimrepro.paper2.trajectory import OrderParameters, Trajectory
from aimrepro.paper2.untied.fast import MeanLandscape, fast_fixed_point

__all__ = [
    "LETTERS",
    "UntiedHierarchyParams",
    "UntiedTruncationRun",
    "UntiedWordBasis",
    "canonical_untied_word",
    "coefficients",
    "project_covariances",
    "untied_hierarchy_rhs",
    "untied_initial_moments",
    "solve_untied_truncation",
]

#: Letters: student M = U Vᵀ, Mᵀ, A = U Uᵀ, B = V Vᵀ; teacher N = M₂, Nᵀ.
LETTERS = ("M", "Mt", "A", "B", "N", "Nt")
_M, _MT, _A, _B, _N, _NT = range(6)
_TRANSPOSE = (_MT, _M, _A, _B, _NT, _N)
_STUDENT = frozenset((_M, _MT, _A, _B))
#: Coefficients of the right-hand side: β̄, a₁₁, b₁₁, a₁₂, b₁₂, γ.
_COEFFICIENTS = ("beta", "a11", "b11", "a12", "b12", "gamma")

# velocity of each student letter: (coefficient, factor, replacement word)
_SUBSTITUTIONS = {
    _M: [("beta", -1, (_A,)), ("beta", -1, (_B,)),
         ("a11", -2, (_M, _B)), ("a11", -2, (_A, _M)), ("b11", -2, (_MT, _B)),
         ("b11", -2, (_A, _MT)), ("a12", -2, (_N, _B)), ("a12", -2, (_A, _N)),
         ("b12", -2, (_NT, _B)), ("b12", -2, (_A, _NT)), ("gamma", -2, (_M,))],
    _MT: [("beta", -1, (_A,)), ("beta", -1, (_B,)),
          ("a11", -2, (_B, _MT)), ("a11", -2, (_MT, _A)), ("b11", -2, (_B, _M)),
          ("b11", -2, (_M, _A)), ("a12", -2, (_B, _NT)), ("a12", -2, (_NT, _A)),
          ("b12", -2, (_B, _N)), ("b12", -2, (_N, _A)), ("gamma", -2, (_MT,))],
    _A: [("beta", -1, (_M,)), ("beta", -1, (_MT,)),
         ("a11", -4, (_M, _MT)), ("b11", -2, (_MT, _MT)), ("b11", -2, (_M, _M)),
         ("a12", -2, (_N, _MT)), ("a12", -2, (_M, _NT)), ("b12", -2, (_NT, _MT)),
         ("b12", -2, (_M, _N)), ("gamma", -2, (_A,))],
    _B: [("beta", -1, (_M,)), ("beta", -1, (_MT,)),
         ("a11", -4, (_MT, _M)), ("b11", -2, (_M, _M)), ("b11", -2, (_MT, _MT)),
         ("a12", -2, (_NT, _M)), ("a12", -2, (_MT, _N)), ("b12", -2, (_N, _M)),
         ("b12", -2, (_MT, _NT)), ("gamma", -2, (_B,))],
}



def _letters(word: Sequence) -> Word:
    out = []
    for z in word:
        if isinstance(z, str):
            if z not in LETTERS:
                raise ValueError(f"letters must be among {LETTERS}, got {z!r}")
            out.append(LETTERS.index(z))
        else:
            out.append(int(z))
    if not out:
        raise ValueError("a word has at least one letter")
    return tuple(out)


def canonical_untied_word(word: Sequence) -> Word:
    """Least rotation of ``word`` or of its transposed reversal (equal traces).

    ``word``: letters of :data:`LETTERS` (names or indices).
    """
    w = _letters(word)
    t = tuple(_TRANSPOSE[z] for z in reversed(w))
    n = len(w)
    return min(min(w[i:] + w[:i] for i in range(n)), min(t[i:] + t[:i] for i in range(n)))


#: Words the coefficients read: q⁽¹⁾, q⁽²⁾ of (student, teacher), t^A, t^B, the bias, the mean.
_REQUIRED = {
    "q1_11": (_M, _MT), "q2_11": (_M, _M), "q1_12": (_M, _NT), "q2_12": (_M, _N),
    "tA": (_A,), "tB": (_B,), "MB": (_M, _B), "AM": (_A, _M), "NB": (_N, _B), "AN": (_A, _N),
    "mean": (_M,), "q1_22": (_N, _NT), "q2_22": (_N, _N),
}


class UntiedWordBasis:
    """Classes of words up to length ``max_length`` reachable from the coefficients' words.

    Parameters
    ----------
    max_length : int
        The truncation order M ≥ 2.

    Attributes
    ----------
    words : tuple of tuples
        Canonical representatives (letter indices of :data:`LETTERS`), by length.
    lengths, n_student : (n_words,) int arrays
        |α| and the number of student letters |α|_𝒦.
    required : dict
        Position of each word the coefficients read (module docstring).
    targets, coef_index, factors, sources : (n_terms,) arrays
        Word ``targets[j]`` has the term factors[j] · coef[coef_index[j]] · μ[sources[j]]
        (``sources[j] = n_words``, a zero slot, for words longer than M).
    """

    def __init__(self, max_length: int) -> None:
        if not (isinstance(max_length, (int, np.integer)) and max_length >= 2):
            raise ValueError(f"max_length (the truncation order M) must be an integer >= 2, "
                             f"got {max_length!r}")
        self.max_length = int(max_length)
        found: set[Word] = set()
        queue = [canonical_untied_word(w) for w in _REQUIRED.values()]
        while queue:
            word = queue.pop()
            if word in found or len(word) > self.max_length:
                continue
            found.add(word)
            for produced in self._substituted(word):
                if len(produced) <= self.max_length and produced not in found:
                    queue.append(produced)
        self.words: tuple[Word, ...] = tuple(sorted(found, key=lambda w: (len(w), w)))
        self._index = {w: i for i, w in enumerate(self.words)}
        self.lengths = np.array([len(w) for w in self.words], dtype=np.int64)
        self.n_student = np.array([sum(z in _STUDENT for z in w) for w in self.words],
                                  dtype=np.int64)
        self.required = {name: self._index[canonical_untied_word(w)]
                         for name, w in _REQUIRED.items()}
        zero = len(self.words)
        targets, coef_index, factors, sources = [], [], [], []
        for target, word in enumerate(self.words):
            for i, z in enumerate(word):
                for coef, factor, replacement in _SUBSTITUTIONS.get(z, ()):
                    produced = canonical_untied_word(word[:i] + replacement + word[i + 1:])
                    targets.append(target)
                    coef_index.append(_COEFFICIENTS.index(coef))
                    factors.append(float(factor))
                    sources.append(self._index.get(produced, zero)
                                   if len(produced) <= self.max_length else zero)
        self.targets = np.array(targets, dtype=np.int64)
        self.coef_index = np.array(coef_index, dtype=np.int64)
        self.factors = np.array(factors, dtype=float)
        self.sources = np.array(sources, dtype=np.int64)

    @staticmethod
    def _substituted(word: Word):
        for i, z in enumerate(word):
            for _, _, replacement in _SUBSTITUTIONS.get(z, ()):
                yield canonical_untied_word(word[:i] + replacement + word[i + 1:])

    def __len__(self) -> int:
        return len(self.words)

    def index(self, word: Sequence) -> int:
        """Position of the class of ``word`` (KeyError if it is not in the basis)."""
        return self._index[canonical_untied_word(word)]

    def restrict(self, mu: np.ndarray, smaller: UntiedWordBasis) -> np.ndarray:
        """The moments of a lower-order basis read off a state of this one."""
        return np.asarray(mu)[..., [self.index(w) for w in smaller.words]]


def project_covariances(q1: np.ndarray, q2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Orthogonal projection of (q⁽¹⁾, q⁽²⁾) on 𝔔 = {q⁽¹⁾ + q⁽²⁾ ⪰ 0, q⁽¹⁾ − q⁽²⁾ ⪰ 0} ([P eq. 536]).

    (q⁽¹⁾, q⁽²⁾) ↦ ((q⁽¹⁾ + q⁽²⁾)/√2, (q⁽¹⁾ − q⁽²⁾)/√2) is orthogonal, so the
    projection projects the two sums on the PSD cone separately.
    """
    def psd(X):
        X = 0.5 * (X + X.T)
        lam, V = np.linalg.eigh(X)
        return X if lam[0] >= 0 else (V * np.clip(lam, 0.0, None)) @ V.T

    s, u = psd(np.asarray(q1) + np.asarray(q2)), psd(np.asarray(q1) - np.asarray(q2))
    return 0.5 * (s + u), 0.5 * (s - u)


def _dense_letters(U: np.ndarray, V: np.ndarray, teacher) -> list[np.ndarray]:
    M = U @ V.T
    N = np.asarray(teacher.dense() if hasattr(teacher, "dense") else teacher, dtype=float)
    return [M, M.T, U @ U.T, V @ V.T, N, N.T]


def untied_initial_moments(basis: UntiedWordBasis, U: np.ndarray, V: np.ndarray,
                           teacher) -> np.ndarray:
    """μ_α = Tr(Z₁⋯Z_w)/d of every class of ``basis`` for student U Vᵀ and ``teacher``.

    Depth-first over the prefixes (shared products): O(n_prefixes d³), memory O(M d²).
    """
    mats = _dense_letters(np.asarray(U, float), np.asarray(V, float), teacher)
    d = mats[0].shape[0]
    if mats[4].shape != (d, d):
        raise ValueError(f"teacher is {mats[4].shape}, student {d}×{d}")
    return word_traces(basis.words, mats, symmetric=False)


@dataclass(frozen=True, eq=False)
class UntiedHierarchyParams:
    """Fixed inputs of the truncated slow hierarchy.

    Attributes
    ----------
    basis : UntiedWordBasis
    potential : Potential
        Φ(m, q⁽¹⁾, q⁽²⁾) of the loss.
    teacher_mean : float
        m₂.
    mean_start : float
        The branch of m*(q): found downhill from this value (the fast phase's limit).
    weight_decay : float
    """

    basis: UntiedWordBasis
    potential: Potential
    teacher_mean: float
    mean_start: float
    weight_decay: float = 0.0


def _covariances(mu: np.ndarray, basis: UntiedWordBasis) -> tuple[np.ndarray, np.ndarray]:
    r = basis.required
    q1 = np.array([[mu[r["q1_11"]], mu[r["q1_12"]]], [mu[r["q1_12"]], mu[r["q1_22"]]]])
    q2 = np.array([[mu[r["q2_11"]], mu[r["q2_12"]]], [mu[r["q2_12"]], mu[r["q2_22"]]]])
    return q1, q2


def coefficients(mu: np.ndarray, params: UntiedHierarchyParams) -> dict[str, float]:
    """β^ext, a, b, γ, m*(P(q)) of the extended field at state ``mu`` ([P eqs. 538–541])."""
    r = params.basis.required
    q1, q2 = project_covariances(*_covariances(mu, params.basis))
    landscape = MeanLandscape(params.potential, params.teacher_mean, q1, q2)
    m_star = fast_fixed_point(landscape, params.mean_start).m_star
    value = params.potential.evaluate(IndexLaw.untied([m_star, params.teacher_mean], q1, q2,
                                                      params.potential.T))
    a, b = value.d_Omega, value.d_Psi
    psi = 2.0 * ((a[0, 0] + b[0, 0]) * (mu[r["MB"]] + mu[r["AM"]])
                 + (a[0, 1] + b[0, 1]) * (mu[r["NB"]] + mu[r["AN"]]))
    rate = mu[r["tA"]] + mu[r["tB"]]
    # outside the domain 𝒰_s of [P eq. 544] (t^A + t^B ≤ 0) the field is undefined: NaN, which
    # the solver rejects and :func:`solve_untied_truncation` records as a blow-up
    beta = -psi / rate if rate > 0 else math.nan
    return {"beta": float(beta), "a11": float(a[0, 0]), "b11": float(b[0, 0]),
            "a12": float(a[0, 1]), "b12": float(b[0, 1]), "gamma": params.weight_decay,
            "m_star": float(m_star)}


def untied_hierarchy_rhs(t: float, mu: np.ndarray, params: UntiedHierarchyParams) -> np.ndarray:
    """dμ/dτ of the truncated slow hierarchy [P eqs. 542, 905] at state ``mu``.

    Cost O(n_terms) plus one set of :func:`coefficients`.
    """
    basis = params.basis
    coef = coefficients(mu, params)
    values = np.array([coef[name] for name in _COEFFICIENTS])
    extended = np.append(mu, 0.0)
    terms = basis.factors * values[basis.coef_index] * extended[basis.sources]
    return np.bincount(basis.targets, weights=terms, minlength=len(basis))


@dataclass(frozen=True, eq=False)
class UntiedTruncationRun:
    """A solve of the truncated slow hierarchy.

    Attributes
    ----------
    basis : UntiedWordBasis
    tau : (n,) ndarray
        Slow times reached.
    moments : (n, n_words) ndarray
    m_star : (n,) ndarray
        The slaved mean m*(P(q)) at each time.
    blew_up : bool
        max_α |μ_α|/s₀^{|α|} exceeded the bound, t^A + t^B reached 0 (the
        bias is undefined there), or the solver failed.
    t_blowup : float
    t_left_cone : float
        First time (q⁽¹⁾, q⁽²⁾) left 𝔔 (NaN if never): from then on the
        coefficients are those of the projection ([P eq. 538]).
    status, nfev : int
    """

    basis: UntiedWordBasis
    tau: np.ndarray
    moments: np.ndarray
    m_star: np.ndarray
    blew_up: bool
    t_blowup: float
    t_left_cone: float
    status: int
    nfev: int
    d: int
    teacher_mean: float

    def column(self, word: Sequence) -> np.ndarray:
        return self.moments[:, self.basis.index(word)]

    def trajectory(self) -> Trajectory:
        """Order parameters (t = μ(M), Ψ = q⁽²⁾, Ω = q⁽¹⁾ of student and teacher) as a Trajectory.

        Extra columns ``tA``, ``tB``, ``m_flow`` (the slaved m*), ``status``, ``nfev``.
        """
        r = self.basis.required
        t2 = self.teacher_mean / math.sqrt(self.d)
        order = []
        for mu in self.moments:
            q1, q2 = _covariances(mu, self.basis)
            order.append(OrderParameters([mu[r["mean"]], t2], q2, q1).as_vector())
        n = len(self.tau)
        extra = {"tA": self.moments[:, r["tA"]], "tB": self.moments[:, r["tB"]],
                 "m_flow": self.m_star, "status": np.full(n, self.status, dtype=np.int64),
                 "nfev": np.full(n, self.nfev, dtype=np.int64)}
        return Trajectory(self.tau, np.asarray(order).reshape(n, -1), self.d, self.blew_up,
                          self.t_blowup, extra)


def _cone_margin(mu: np.ndarray, params: UntiedHierarchyParams) -> float:
    q1, q2 = _covariances(mu, params.basis)
    return float(min(np.linalg.eigvalsh(q1 + q2)[0], np.linalg.eigvalsh(q1 - q2)[0]))


def solve_untied_truncation(basis: UntiedWordBasis, mu0: np.ndarray, potential: Potential,
                            times, *, d: int, teacher_mean: float, mean_start: float,
                            weight_decay: float = 0.0, method: str = "RK45",
                            rtol: float = 1e-8, atol: float = 1e-11,
                            blowup_factor: float = 1e3) -> UntiedTruncationRun:
    """Integrate the truncated slow hierarchy of order M = ``basis.max_length`` ([P Cor. 8]).

    Parameters
    ----------
    basis : UntiedWordBasis
    mu0 : (n_words,) ndarray
        Initial moments (:func:`untied_initial_moments`).
    potential : Potential
    times : increasing array of τ
    d : int
        Dimension of the initial matrices (labels the trajectory: t₁ = m/√d).
    teacher_mean : float
        m₂.
    mean_start : float
        Branch of the slaved mean (the fast phase's limit, as for
        :func:`aimrepro.paper2.untied.slow.solve_slow_flow`).
    weight_decay, method, rtol : solve_ivp settings and γ
    atol : float
        Per s₀^{|α|} (moments of length w are of order s₀^w).
    blowup_factor : float
        Stop when max_α |μ_α|/s₀^{|α|} reaches this.
    """
    times = np.asarray(times, dtype=float)
    if times.ndim != 1 or times.size < 2 or not np.all(np.diff(times) > 0):
        raise ValueError("times must be an increasing 1-D array with at least two entries")
    mu0 = np.asarray(mu0, dtype=float)
    if mu0.shape != (len(basis),) or not np.all(np.isfinite(mu0)):
        raise ValueError(f"mu0 must be {len(basis)} finite moments, got shape {mu0.shape}")
    if not (isinstance(d, (int, np.integer)) and d >= 1):
        raise ValueError(f"d must be an integer >= 1, got {d!r}")
    if not (math.isfinite(weight_decay) and weight_decay >= 0):
        raise ValueError(f"weight_decay must be a finite number >= 0, got {weight_decay}")
    params = UntiedHierarchyParams(basis, potential, float(teacher_mean), float(mean_start),
                                   float(weight_decay))
    nonzero = np.abs(mu0) > 0
    s0 = float(np.max(np.abs(mu0[nonzero]) ** (1.0 / basis.lengths[nonzero])))
    weights = s0 ** (-basis.lengths.astype(float))

    def norm_event(t, y, *args):
        value = np.max(np.abs(y) * weights)
        return blowup_factor - value if np.isfinite(value) else -1.0

    norm_event.terminal = True
    norm_event.direction = -1

    def cone_event(t, y, *args):
        return _cone_margin(y, params)

    cone_event.terminal = False
    cone_event.direction = -1
    r = basis.required

    def domain_event(t, y, *args):
        return float(y[r["tA"]] + y[r["tB"]])

    domain_event.terminal = True
    domain_event.direction = -1
    with np.errstate(over="ignore", invalid="ignore"):
        sol = solve_ivp(untied_hierarchy_rhs, (times[0], times[-1]), mu0, method=method,
                        t_eval=times, args=(params,), rtol=rtol,
                        atol=atol * s0 ** basis.lengths,
                        events=(norm_event, cone_event, domain_event))
    moments = sol.y.T
    finite = np.all(np.isfinite(moments), axis=1)
    blew_up = sol.status != 0 or not finite.all()
    t_blowup = math.nan
    if blew_up:
        ends = [te[0] for te in (sol.t_events[0], sol.t_events[2]) if te.size]
        t_blowup = (float(min(ends)) if ends
                    else float(sol.t[~finite][0]) if not finite.all()
                    else float(sol.t[-1]) if sol.t.size else float(times[0]))
    keep = finite & (sol.t < t_blowup) if blew_up else finite
    cone_times = sol.t_events[1]
    t_left = float(cone_times[0]) if cone_times.size else math.nan
    if math.isnan(t_left) and _cone_margin(mu0, params) < 0:
        t_left = float(times[0])
    m_star = np.array([coefficients(mu, params)["m_star"] for mu in moments[keep]])
    return UntiedTruncationRun(basis, sol.t[keep], moments[keep], m_star, bool(blew_up),
                               t_blowup, t_left, int(sol.status), int(sol.nfev), int(d),
                               float(teacher_mean))
