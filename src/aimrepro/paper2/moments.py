"""The tied matrix-moment hierarchy, its zero truncations, and the exactly solvable Riccati case.

Hierarchy (``docs/paper2.md`` §4.1, [P Thm 2, eq. 11]).  For words
α = (k₁ … k_w) over the K indices (student k = 0, teacher k = 1 here),
μ_α = Tr(S_{k₁} ⋯ S_{k_w})/d obeys, on the time t = 4α_d n/d,

    dμ_α/dt = −Σ_{i: k_i trainable} Σ_l Γ̃_{k_i l}(q) [μ_{α with l inserted before k_i}
                                                    + μ_{α with l inserted after k_i}]
              − (γ/2) |α|_𝒦 μ_α,

with q_kl = μ_(k,l), |α|_𝒦 the number of trainable letters of α and
Γ̃(q) = Γ(Π_{S+}((q + qᵀ)/2)) the gradient of the potential at the PSD
projection of q ([P eqs. 91–93]).  The equation for a word of length w
involves words of length w + 1: the hierarchy does not close
([P App. D.3]).

Truncation (``docs/paper2.md`` §4.2, [P eq. 13, Cor. 2]).  Keep the words with
|α| ≤ M, set μ_α ≡ 0 for |α| > M, start from the true initial moments.
The paper proves exponential accuracy in M uniformly in time only with a
large weight decay; at γ = 0 the truncation converges on short horizons only
(``docs/paper2.md`` §8 risk 1), so a truncated solve is watched for blow-up and
for leaving the PSD cone, and both are recorded.

Words are enumerated once (:class:`WordBasis`).  Because every S_k is
symmetric, μ_α is invariant under rotations and reversal of α (Tr(ABC) =
Tr(BCA) = Tr(CᵀBᵀAᵀ)), so the state holds one moment per *bracelet* class
(2, 3, 4, 6, 8, 13, 18, 30 classes of length 1 … 8 for K = 2: 84 moments at
M = 8 instead of 510 words).  The insertion lists of every class are
precomputed as flat index arrays, so one right-hand side is a gather, a
multiply and a ``bincount`` over the n_terms = Σ_α 2 K |α|_𝒦 insertion terms
(n_terms = 1 056 at M = 8, 11 592 at M = 12), O(n_terms), plus one evaluation of Γ.

Exactly solvable case (``docs/paper2.md`` §4.1, §4.4; [P App. D.3, eqs. 339–348]).
L = 1, linear link, ℒ = c (G₁ − G₂)²: Φ = c(2q₁₁ + 2q₂₂ − 4q₁₂), Γ is constant
(Γ₁₁ = 2c, Γ₁₂ = −2c), the hierarchy is linear and its truncation at order
M is the Taylor polynomial of the exact solution ([P eqs. 340–341, 346]).
The matrix flow is the Riccati equation

    dS/dt = A S + S A − 4c S²,   A = 2c S* − (γ/4) I,

solved in closed form by :func:`riccati_solution` ([P eq. 343] for c = 1,
γ = 0); with S* = c_* I each eigenvalue follows a logistic equation and
μ₁(t) is the spectral integral [P eq. 348] (:func:`spectral_first_moment`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.integrate import solve_ivp

from aimrepro.paper2.trajectory import OrderParameters, Trajectory

__all__ = [
    "HierarchyParams",
    "TruncationRun",
    "WordBasis",
    "canonical_word",
    "explicit_truncation",
    "hierarchy_rhs",
    "initial_moments",
    "project_psd",
    "riccati_moments",
    "riccati_solution",
    "solve_truncation",
    "spectral_first_moment",
    "word_traces",
]

Word = tuple[int, ...]


def canonical_word(word: Sequence[int]) -> Word:
    """Representative of the bracelet class of ``word``: the least rotation of it or its reversal.

    Two words of one class have the same moment for symmetric matrices
    (module docstring).  Cost O(w²) for a word of length w.
    """
    word = tuple(int(k) for k in word)
    if not word:
        raise ValueError("a word has at least one letter")
    n = len(word)
    reverse = word[::-1]
    return min(min(word[i:] + word[:i] for i in range(n)),
               min(reverse[i:] + reverse[:i] for i in range(n)))


class WordBasis:
    """The bracelet classes of words of length 1 … M over K letters, with their insertion lists.

    Parameters
    ----------
    max_length : int
        M ≥ 2, the truncation order.
    trainable : sequence of bool
        One entry per index k (K = its length); default (True, False): a
        trainable student and a fixed teacher.

    Attributes
    ----------
    words : tuple of tuples
        The canonical representatives, by increasing length, then
        lexicographically.
    lengths, n_trainable : (n_words,) int arrays
        |α| and |α|_𝒦.
    q_index : (K, K) int array
        Position of the word (k, l) in the state: q_kl = μ[q_index[k, l]].
    targets, gamma_index, sources : (n_terms,) int arrays
        The right-hand side of word ``targets[j]`` contains the term
        −Γ.ravel()[gamma_index[j]] · μ[sources[j]]; ``sources[j] = n_words``
        (a slot holding 0) for an inserted word longer than M.

    Notes
    -----
    Enumeration: the classes of length w + 1 are the canonical forms of the
    single-letter insertions into the classes of length w (delete a letter of
    any word of length w + 1 and rotate or reflect what is left into its
    representative), so no 2^M enumeration of all words is needed: the cost
    is O(Σ_w n_w · w · K · w²) with n_w the number of classes of length w.
    """

    def __init__(self, max_length: int, trainable: Sequence[bool] = (True, False)) -> None:
        if not (isinstance(max_length, (int, np.integer)) and max_length >= 2):
            raise ValueError(f"max_length (the truncation order M) must be an integer >= 2, "
                             f"got {max_length!r}")
        trainable = tuple(bool(x) for x in trainable)
        if len(trainable) < 1 or not any(trainable):
            raise ValueError(f"trainable must name at least one trainable index, got {trainable}")
        self.max_length = int(max_length)
        self.trainable = trainable
        self.K = len(trainable)
        K = self.K
        by_length: list[list[Word]] = [sorted((k,) for k in range(K))]
        for _ in range(1, self.max_length):
            longer = {canonical_word(w[:i] + (l,) + w[i:])
                      for w in by_length[-1] for i in range(len(w) + 1) for l in range(K)}
            by_length.append(sorted(longer))
        self.words: tuple[Word, ...] = tuple(w for group in by_length for w in group)
        self._index = {w: i for i, w in enumerate(self.words)}
        self.lengths = np.array([len(w) for w in self.words], dtype=np.int64)
        self.n_trainable = np.array([sum(trainable[k] for k in w) for w in self.words],
                                    dtype=np.int64)
        self.q_index = np.array([[self.index((k, l)) for l in range(K)] for k in range(K)],
                                dtype=np.int64)
        targets, gamma_index, sources = [], [], []
        zero_slot = len(self.words)
        for target, word in enumerate(self.words):
            for i, k in enumerate(word):
                if not trainable[k]:
                    continue
                for l in range(K):
                    for inserted in (word[:i] + (l,) + word[i:], word[:i + 1] + (l,) + word[i + 1:]):
                        targets.append(target)
                        gamma_index.append(k * K + l)
                        sources.append(self._index.get(canonical_word(inserted), zero_slot)
                                       if len(inserted) <= self.max_length else zero_slot)
        self.targets = np.array(targets, dtype=np.int64)
        self.gamma_index = np.array(gamma_index, dtype=np.int64)
        self.sources = np.array(sources, dtype=np.int64)

    def __len__(self) -> int:
        return len(self.words)

    def index(self, word: Sequence[int]) -> int:
        """Position of the class of ``word`` in the state vector (KeyError if longer than M)."""
        return self._index[canonical_word(word)]

    def restrict(self, mu: np.ndarray, smaller: WordBasis) -> np.ndarray:
        """The moments of ``smaller`` (a basis of lower order) read off a state ``mu`` of this one."""
        mu = np.asarray(mu)
        return mu[..., [self.index(w) for w in smaller.words]]

    def order_parameters(self, mu: np.ndarray) -> OrderParameters:
        """t = (μ₀, μ₁), Ψ = Ω = q of a K = 2 state (:class:`OrderParameters`)."""
        if self.K != 2:
            raise ValueError(f"order parameters are for K = 2 indices, got K = {self.K}")
        q = np.asarray(mu)[self.q_index]
        return OrderParameters.symmetric(np.asarray(mu)[[self.index((0,)), self.index((1,))]], q)


def project_psd(q: np.ndarray) -> np.ndarray:
    """Π_{S+}((q + qᵀ)/2): the orthogonal projection onto the PSD cone ([P eq. 92])."""
    q = np.asarray(q, dtype=float)
    lam, V = np.linalg.eigh(0.5 * (q + q.T))
    if lam[0] >= 0:
        return 0.5 * (q + q.T)
    return (V * np.clip(lam, 0.0, None)) @ V.T


def word_traces(words: Sequence[Word], matrices: Sequence[np.ndarray], *,
                symmetric: bool) -> np.ndarray:
    """Tr(Z_{k₁} ⋯ Z_{k_w})/d for every word, each prefix product formed once.

    Depth-first over the trie of prefixes: in lexicographic order the words
    sharing a prefix are contiguous, so a stack holds the products along the
    current path (memory O(M d²)) and every prefix product is formed once:
    O(n_prefixes d³), O(d²) per word for the last factor and the trace.
    ``symmetric`` matrices use Tr(P S) = Σ P ∘ S, others Σ P ∘ Zᵀ.
    """
    d = matrices[0].shape[0]
    mu = np.empty(len(words))
    stack: list[tuple[Word, np.ndarray]] = []
    for i in sorted(range(len(words)), key=lambda j: words[j]):
        word = words[i]
        if len(word) == 1:
            mu[i] = np.trace(matrices[word[0]]) / d
            continue
        prefix = word[:-1]
        while stack and stack[-1][0] != prefix[:len(stack[-1][0])]:
            stack.pop()
        while len(stack) < len(prefix):
            j = len(stack)
            product = matrices[prefix[0]] if j == 0 else stack[-1][1] @ matrices[prefix[j]]
            stack.append((prefix[:j + 1], product))
        last = matrices[word[-1]]
        mu[i] = np.sum(stack[-1][1] * (last if symmetric else last.T)) / d
    return mu


def initial_moments(basis: WordBasis, matrices: Sequence) -> np.ndarray:
    """μ_α(0) = Tr(S_{k₁} ⋯ S_{k_w})/d for every class of ``basis``, from the matrices themselves.

    Parameters
    ----------
    basis : WordBasis
    matrices : sequence of K symmetric matrices
        Anything with ``.dense()`` (:class:`~aimrepro.paper2.matrices.FactoredMatrix`)
        or d×d arrays: the same W (S₁ = W Wᵀ) and S* as the SGD run.

    Notes
    -----
    Products of prefixes are shared between words (a depth-first walk over
    the trie of prefixes): cost O(n_prefixes d³) with n_prefixes ≤ Σ_w n_w,
    O(d²) per word for the last factor and the trace, memory O(M d²).
    """
    dense = [np.asarray(m.dense() if hasattr(m, "dense") else m, dtype=float) for m in matrices]
    if len(dense) != basis.K:
        raise ValueError(f"need {basis.K} matrices for the basis, got {len(dense)}")
    d = dense[0].shape[0]
    for S in dense:
        if S.shape != (d, d):
            raise ValueError(f"matrices must all be {d}×{d}, got {S.shape}")
        if not np.allclose(S, S.T, rtol=1e-12, atol=1e-12 * np.abs(S).max()):
            raise ValueError("the tied hierarchy needs symmetric matrices")
    return word_traces(basis.words, dense, symmetric=True)


@dataclass(frozen=True, eq=False)
class HierarchyParams:
    """Fixed inputs of the truncated hierarchy.

    Attributes
    ----------
    basis : WordBasis
    gamma : callable q (K, K) → Γ (K, K)
        Γ = ∇_q Φ in the symmetric convention, e.g. ``Potential.gamma``; it is
        called at the PSD projection of q.
    weight_decay : float
        γ ≥ 0 ([P eq. 11]: −(γ/2)|α|_𝒦 μ_α).
    """

    basis: WordBasis
    gamma: Callable[[np.ndarray], np.ndarray]
    weight_decay: float = 0.0


def hierarchy_rhs(t: float, mu: np.ndarray, params: HierarchyParams) -> np.ndarray:
    """Right-hand side of the truncated hierarchy [P eqs. 11, 13] at state ``mu``.

    Cost O(n_terms) (:class:`WordBasis`) plus one Γ evaluation.
    """
    basis = params.basis
    gamma = np.asarray(params.gamma(project_psd(mu[basis.q_index])), dtype=float)
    extended = np.append(mu, 0.0)           # the zero slot of words longer than M
    terms = gamma.ravel()[basis.gamma_index] * extended[basis.sources]
    rhs = -np.bincount(basis.targets, weights=terms, minlength=len(basis))
    if params.weight_decay:
        rhs -= 0.5 * params.weight_decay * basis.n_trainable * mu
    return rhs


@dataclass(frozen=True, eq=False)
class TruncationRun:
    """A solve of the truncated hierarchy: moments on a time grid, blow-up and PSD exit.

    Attributes
    ----------
    basis : WordBasis
    t_ode : (n,) ndarray
        Times reached (the requested grid, cut at a blow-up).
    moments : (n, n_words) ndarray
    blew_up : bool
        The normalised moment norm max_α |μ_α|/s₀^{|α|} exceeded the bound
        (s₀ = max_α |μ_α(0)|^{1/|α|}), or the solver failed.
    t_blowup : float
        Time of the blow-up (NaN if none).
    t_left_psd : float
        First time q left the PSD cone (NaN if never): from then on the
        truncated state is no moment sequence of any matrices, Γ is taken
        at the projection ([P eq. 93]).
    status, nfev : int
        ``solve_ivp`` status (0: reached the end, 1: blow-up event, −1:
        failure) and right-hand sides evaluated.
    message : str
    """

    basis: WordBasis
    t_ode: np.ndarray
    moments: np.ndarray
    blew_up: bool
    t_blowup: float
    t_left_psd: float
    status: int
    nfev: int
    message: str

    def column(self, word: Sequence[int]) -> np.ndarray:
        """μ_α over time for one word (any member of its class)."""
        return self.moments[:, self.basis.index(word)]

    def trajectory(self, d: int, loss: Callable[[np.ndarray], float] | None = None) -> Trajectory:
        """The order parameters as a :class:`Trajectory` (K = 2), with the blow-up.

        Extra columns: ``q_min_eig`` (smallest eigenvalue of q: negative
        outside the PSD cone), ``loss`` (Φ at the PSD projection of q, if
        ``loss`` is given), ``status``, ``nfev``.
        """
        ops = [self.basis.order_parameters(mu) for mu in self.moments]
        n = len(ops)
        extra = {"q_min_eig": np.array([np.linalg.eigvalsh(op.q)[0] for op in ops]),
                 "status": np.full(n, self.status, dtype=np.int64),
                 "nfev": np.full(n, self.nfev, dtype=np.int64)}
        if loss is not None:
            extra["loss"] = np.array([loss(project_psd(op.q)) for op in ops])
        order = np.array([op.as_vector() for op in ops]).reshape(n, -1)
        return Trajectory(self.t_ode, order, d, self.blew_up, self.t_blowup, extra)


def solve_truncation(basis: WordBasis, mu0: np.ndarray, gamma: Callable[[np.ndarray], np.ndarray],
                     times, *, weight_decay: float = 0.0, method: str = "DOP853",
                     rtol: float = 1e-10, atol: float = 1e-13,
                     blowup_factor: float = 1e3) -> TruncationRun:
    """Integrate the truncated hierarchy of order M = ``basis.max_length`` with ``solve_ivp``.

    Parameters
    ----------
    basis : WordBasis
    mu0 : (n_words,) ndarray
        Initial moments (:func:`initial_moments`, or a restriction of them).
    gamma : callable
        Γ(q), see :class:`HierarchyParams`.
    times : increasing (n,) array of t_ode
    weight_decay : float
    method, rtol : solve_ivp settings
    atol : float
        Absolute tolerance per s₀^{|α|}: moments of length w are of order s₀^w.
    blowup_factor : float
        The solve stops (terminal event) when max_α |μ_α|/s₀^{|α|} reaches
        this: the truncation has left every trajectory of matrices with
        ‖S‖_op ≲ s₀ · blowup_factor^{1/|α|}.

    Returns
    -------
    TruncationRun
    """
    times = np.asarray(times, dtype=float)
    if times.ndim != 1 or times.size < 2 or not np.all(np.diff(times) > 0):
        raise ValueError("times must be an increasing 1-D array with at least two entries")
    mu0 = np.asarray(mu0, dtype=float)
    if mu0.shape != (len(basis),):
        raise ValueError(f"mu0 must have one entry per word class ({len(basis)}), got {mu0.shape}")
    if not np.all(np.isfinite(mu0)):
        raise ValueError("mu0 must be finite")
    if not (math.isfinite(weight_decay) and weight_decay >= 0):
        raise ValueError(f"weight_decay must be a finite number >= 0, got {weight_decay}")
    if not (math.isfinite(blowup_factor) and blowup_factor > 1):
        raise ValueError(f"blowup_factor must be a finite number > 1, got {blowup_factor}")
    params = HierarchyParams(basis, gamma, float(weight_decay))
    nonzero = np.abs(mu0) > 0
    s0 = float(np.max(np.abs(mu0[nonzero]) ** (1.0 / basis.lengths[nonzero]))) if nonzero.any() \
        else 1.0
    weights = s0 ** (-basis.lengths.astype(float))

    def norm_event(t, y, *args):
        value = np.max(np.abs(y) * weights)
        return blowup_factor - value if np.isfinite(value) else -1.0

    norm_event.terminal = True
    norm_event.direction = -1

    q_index = basis.q_index

    def psd_event(t, y, *args):
        return float(np.linalg.eigvalsh(0.5 * (y[q_index] + y[q_index].T))[0])

    psd_event.terminal = False
    psd_event.direction = -1

    # A diverging truncation overflows on its way out; that is the blow-up the
    # event and the status record, not a floating-point error.
    with np.errstate(over="ignore", invalid="ignore"):
        sol = solve_ivp(hierarchy_rhs, (times[0], times[-1]), mu0, method=method, t_eval=times,
                        args=(params,), rtol=rtol, atol=atol * s0 ** basis.lengths,
                        events=(norm_event, psd_event))
    moments = sol.y.T
    finite = np.all(np.isfinite(moments), axis=1)
    blew_up = sol.status != 0 or not finite.all()
    t_blowup = math.nan
    if blew_up:
        if sol.t_events[0].size:
            t_blowup = float(sol.t_events[0][0])
        else:
            t_blowup = float(sol.t[~finite][0]) if not finite.all() else \
                (float(sol.t[-1]) if sol.t.size else float(times[0]))
        keep = finite & (sol.t < t_blowup)
    else:
        keep = finite
    psd_times = sol.t_events[1]
    t_left_psd = float(psd_times[0]) if psd_times.size else math.nan
    if math.isnan(t_left_psd) and psd_event(0.0, mu0) < 0:
        t_left_psd = float(times[0])
    return TruncationRun(basis, sol.t[keep], moments[keep], bool(blew_up), t_blowup, t_left_psd,
                         int(sol.status), int(sol.nfev), str(sol.message))


# --- the exactly solvable case (docs/paper2.md §4.1, §4.4; [P App. D.3]) -------------------------


def explicit_truncation(order: int, mu0: Sequence[float] | dict, times, *,
                        prefactor: float = 1.0) -> dict[str, np.ndarray]:
    """The truncations M = 2 and M = 3 of the linear case as the polynomials of [P eqs. 340–341].

    For ℒ = c (G₁ − G₂)², L = 1, γ = 0 (c = 1 in the paper; Γ₁₁ = 2c, Γ₁₂ = −2c):

    * M = 2: q frozen, μ₁(t) = μ₁ − 2c·2t (q₁₁ − q₁₂);
    * M = 3: q₁₁(t) = q₁₁ − 4c·2t (μ₁₁₁ − μ₁₁₂), q₁₂(t) = q₁₂ − 2c·2t (μ₁₁₂ − μ₁₂₂),
      μ₁(t) = μ₁ − 4ct (q₁₁ − q₁₂) + 8c²t² (2μ₁₁₁ − 3μ₁₁₂ + μ₁₂₂).

    Parameters
    ----------
    order : {2, 3}
    mu0 : mapping with keys ``mu1, q11, q12`` (and ``mu111, mu112, mu122`` for M = 3)
        Initial moments, "1" the student and "2" the teacher.
    times : array_like
    prefactor : float
        c.

    Returns
    -------
    dict with ``mu1``, ``q11``, ``q12`` over ``times``.
    """
    t = np.asarray(times, dtype=float)
    c = float(prefactor)
    m = dict(mu0)
    if order == 2:
        return {"mu1": m["mu1"] - 4 * c * t * (m["q11"] - m["q12"]),
                "q11": np.full_like(t, m["q11"]), "q12": np.full_like(t, m["q12"])}
    if order == 3:
        return {"mu1": (m["mu1"] - 4 * c * t * (m["q11"] - m["q12"])
                        + 8 * c * c * t * t * (2 * m["mu111"] - 3 * m["mu112"] + m["mu122"])),
                "q11": m["q11"] - 8 * c * t * (m["mu111"] - m["mu112"]),
                "q12": m["q12"] - 4 * c * t * (m["mu112"] - m["mu122"])}
    raise ValueError(f"explicit polynomials exist here for order 2 and 3, got {order!r}")


def _student_factor(W: np.ndarray) -> np.ndarray:
    """A d×r' factor of W Wᵀ with r' ≤ d (W itself unless it is wider than tall)."""
    d, r = W.shape
    if r <= d:
        return W
    lam, V = np.linalg.eigh(W @ W.T)
    return V * np.sqrt(np.clip(lam, 0.0, None))


def _teacher_dense(teacher) -> np.ndarray:
    S = np.asarray(teacher.dense() if hasattr(teacher, "dense") else teacher, dtype=float)
    if S.ndim != 2 or S.shape[0] != S.shape[1] or not np.allclose(S, S.T):
        raise ValueError("the teacher must be a symmetric d×d matrix")
    return 0.5 * (S + S.T)


def riccati_solution(W0: np.ndarray, teacher, times, *, prefactor: float = 1.0,
                     weight_decay: float = 0.0) -> np.ndarray:
    """S₁(t) of the Riccati matrix flow of the linear case, in closed form.

    dS/dt = A S + S A − B S² with A = 2c S* − (γ/4) I and B = 4c: the tied flow
    of ``docs/paper2.md`` §2.2 for ℒ = c (G₁ − G₂)², L = 1 ([P eq. 342] for c = 1, γ = 0).

    Parameters
    ----------
    W0 : (d, r) ndarray
        Student factor at t = 0, S₁(0) = W₀ W₀ᵀ.
    teacher : FactoredMatrix or (d, d) ndarray
        The symmetric S* (any spectrum; it need not be invertible).
    times : array_like of t ≥ 0
    prefactor, weight_decay : float
        c > 0 and γ ≥ 0.

    Returns
    -------
    (n_times, d, d) ndarray

    Notes
    -----
    Linearisation S = Y X⁻¹ with Y' = A Y, X' = −A X + B Y, X(0) = I,
    Y(0) = S₀ gives S(t) = e^{At} S₀ [I + B F(t) S₀]⁻¹ e^{At} with
    F(t) = ∫₀ᵗ e^{2As} ds; for c = 1, γ = 0 its inverse is
    e^{−2S*t} S₀⁻¹ e^{−2S*t} + S*⁻¹(I − e^{−4S*t}), [P eq. 343], which needs
    S₀ and S* invertible while this form does not.  With Ŵ = e^{At} W₀ = Q R
    (thin QR) and H = e^{−At} F e^{−At} = g(A), g(a) = (1 − e^{−2at})/(2a)
    (bounded: g(0) = t), the push-through identity gives the symmetric,
    well-conditioned form

        S(t) = Ŵ (I + B Ŵᵀ H Ŵ)⁻¹ Ŵᵀ = Q [R⁻ᵀ R⁻¹ + B Qᵀ H Q]⁻¹ Qᵀ,

    in which the growing directions of e^{At} only make R⁻ᵀR⁻¹ small.  Cost:
    one eigendecomposition of S* (O(d³)), then O(d² r + d r² + r³) per time.
    """
    c, gamma = float(prefactor), float(weight_decay)
    if not (math.isfinite(c) and c > 0):
        raise ValueError(f"prefactor must be a finite number > 0, got {prefactor}")
    if not (math.isfinite(gamma) and gamma >= 0):
        raise ValueError(f"weight_decay must be a finite number >= 0, got {weight_decay}")
    times = np.atleast_1d(np.asarray(times, dtype=float))
    if np.any(times < 0) or not np.all(np.isfinite(times)):
        raise ValueError("times must be finite and >= 0")
    W = _student_factor(np.asarray(W0, dtype=float))
    S_star = _teacher_dense(teacher)
    d = W.shape[0]
    if S_star.shape != (d, d):
        raise ValueError(f"teacher is {S_star.shape}, student factor {W.shape}")
    a, U = np.linalg.eigh(2.0 * c * S_star - 0.25 * gamma * np.eye(d))
    W_eig = U.T @ W                                   # work in the eigenbasis of A
    B = 4.0 * c
    out = np.empty((times.size, d, d))
    for n, t in enumerate(times):
        if t == 0:
            S = W_eig @ W_eig.T
        else:
            at = 2.0 * a * t
            # g(a) = (1 − e^{−2at})/(2a), with g → t as a → 0 (expm1 keeps it accurate)
            small = np.abs(at) < 1e-12
            h = np.where(small, t, -np.expm1(-at) / np.where(small, 1.0, 2.0 * a))
            W_hat = np.exp(a * t)[:, None] * W_eig
            Q, R = np.linalg.qr(W_hat)
            R_inv = np.linalg.solve(R, np.eye(R.shape[0]))
            core = R_inv.T @ R_inv + B * (Q.T * h) @ Q
            S = Q @ np.linalg.solve(core, Q.T)
        out[n] = U @ (0.5 * (S + S.T)) @ U.T
    return out


def riccati_moments(basis: WordBasis, W0: np.ndarray, teacher, times, *, prefactor: float = 1.0,
                    weight_decay: float = 0.0) -> np.ndarray:
    """The moments of ``basis`` along the Riccati solution, (n_times, n_words).

    The exact (infinite-order) reference of the truncations of the linear
    case at the same finite d.  Cost: :func:`riccati_solution` plus
    :func:`initial_moments` per time.
    """
    S_star = _teacher_dense(teacher)
    return np.array([initial_moments(basis, [S, S_star]) for S in
                     riccati_solution(W0, S_star, times, prefactor=prefactor,
                                      weight_decay=weight_decay)])


def spectral_first_moment(eigenvalues, c_teacher: float, times, *, prefactor: float = 1.0,
                          weight_decay: float = 0.0) -> np.ndarray:
    """μ₁(t) = Tr S₁(t)/d for S* = c_* I from the initial spectrum ([P eqs. 347–348]).

    Each eigenvalue follows λ' = a λ − b λ² with a = 4 c c_* − γ/2 and b = 4c
    (c = 1, γ = 0: λ' = 4c_*λ − 4λ², [P eq. 347]), so

        λ(t) = a λ₀ / (b λ₀ + (a − b λ₀) e^{−a t})      (λ₀/(1 + b λ₀ t) if a = 0),

    and μ₁(t) is the mean over the eigenvalues of S₁(0) (the integral
    against the empirical spectral measure ρ₀ of [P eq. 348]).

    Parameters
    ----------
    eigenvalues : (d,) array_like
        Spectrum of S₁(0) (≥ 0).
    c_teacher : float
        c_* > 0.
    times : array_like
    prefactor, weight_decay : float

    Returns
    -------
    (n_times,) ndarray
    """
    lam0 = np.asarray(eigenvalues, dtype=float)
    if np.any(lam0 < 0):
        raise ValueError("the eigenvalues of S1(0) = W Wᵀ must be >= 0")
    if not (math.isfinite(c_teacher) and c_teacher > 0):
        raise ValueError(f"c_teacher must be a finite number > 0, got {c_teacher}")
    t = np.atleast_1d(np.asarray(times, dtype=float))[:, None]
    a = 4.0 * prefactor * c_teacher - 0.5 * weight_decay
    b = 4.0 * prefactor
    if a == 0:
        lam = lam0 / (1.0 + b * lam0 * t)
    else:
        lam = a * lam0 / (b * lam0 + (a - b * lam0) * np.exp(-a * t))
    return lam.mean(axis=1)
