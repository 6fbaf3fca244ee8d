"""The attention-indexed model (AIM): tokens, teachers, indices and links.

``docs/paper1.md`` §1: a sample is a sequence X ∈ R^{T×d} of i.i.d. N(0, 1)
tokens; a symmetric S ∈ R^{d×d} defines the T×T indices

    h_ab = (x_aᵀ S x_b − δ_ab Tr S)/√d,

and the label is y = g(h).  The teacher is S* = W Wᵀ/√(r d) with W ∈ R^{d×r}
Gaussian, r = ρ d.

Beyond both papers (``docs/paper1.md`` §13): the tokens may follow another
law with mean 0 and variance 1 (:class:`TokenLaw`: Rademacher, Bernoulli–Gaussian,
Student-t); the Gaussian law is the default and draws exactly the numbers it
always drew.

Paper 2 (``docs/paper2.md`` §1) adds the Hermite links h₁, h₂, h₃ (applied entry
by entry) and uncentered indices of non-symmetric matrices S = L Rᵀ;
:func:`indices_from_factors` covers both.

Numerics
--------
Everything is a contraction of the token array X (n, T, d) with a d×d matrix
or a d×r factor; no n×d×d×T×T tensor is ever built.  Costs:
:func:`indices` O(n T d²) (one (nT × d)(d × d) GEMM) and O(n T d) memory;
:func:`indices_from_factor` O(n T d r).  The final pairing of token rows,
h_ab = ⟨(XS)_a, x_b⟩, is an ``einsum`` over d (O(n T² d)): a batched
``matmul`` of n tiny T×d by d×T products costs three times the GEMM itself
at T = 2 (measured at n = 27 000, d = 100).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from aimrepro.numerics.softmax import log_softmax

LINKS = ("softmax", "hardmax", "linear", "h1", "h2", "h3")

#: Normalised probabilists' Hermite polynomials h_k = He_k/√(k!) (docs/paper2.md §1, Fig. 2):
#: E h_k(Z)² = 1 and E h_j(Z) h_k(Z) = 0 for Z ~ N(0, 1).
HERMITE_LINKS = {"h1": 1, "h2": 2, "h3": 3}


def _check_positive_int(name, value, minimum=1):
    if not (isinstance(value, (int, np.integer)) and value >= minimum):
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")


#: The token laws (:class:`TokenLaw`), in the order of the CLI choices.
TOKEN_LAWS = ("gaussian", "rademacher", "sparse", "student_t")

#: Degrees of freedom of the Student-t law when none is given.
DEFAULT_STUDENT_DOF = 5.0


@dataclass(frozen=True)
class TokenLaw:
    """The law of every token coordinate: mean 0, variance 1 (``docs/paper1.md`` §13).

    ``gaussian``
        N(0, 1), the papers' law (fourth moment 3).
    ``rademacher``
        ±1 with probability ½ each (fourth moment 1).
    ``sparse``
        Bernoulli–Gaussian: b g/√p with b ~ Bernoulli(p = ``keep_prob``), g ~ N(0, 1)
        (fourth moment 3/p).
    ``student_t``
        Student-t with ν = ``dof`` > 4 degrees of freedom rescaled by √((ν − 2)/ν) to unit
        variance (fourth moment 3(ν − 2)/(ν − 4), finite for ν > 4; 9 at the default ν = 5).

    Every law is drawn *from the same standard normals* g as the Gaussian one
    (same generator, same first draw), transformed: sign(g) (ties at g = 0, of
    probability below 1e-8, go to +1), b g/√p with the Bernoulli b drawn after g,
    and g √((ν − 2)/χ²_ν) with the χ²_ν drawn after g.  The Gaussian law draws g
    only, exactly as before the laws existed.  Coupling the laws through g makes
    data sets of different laws with the same seed strongly correlated: common
    random numbers for the comparison of a law with the Gaussian one.
    """

    name: str = "gaussian"
    keep_prob: float | None = None
    dof: float | None = None

    def __post_init__(self):
        if self.name not in TOKEN_LAWS:
            raise ValueError(f"tokens must be one of {TOKEN_LAWS}, got {self.name!r}")
        if self.name == "sparse":
            p = self.keep_prob
            if not (isinstance(p, (int, float, np.floating)) and not isinstance(p, bool)
                    and 0.0 < p <= 1.0):
                raise ValueError(f"keep_prob must be a number in (0, 1] for sparse tokens, got {p!r}")
            object.__setattr__(self, "keep_prob", float(p))
        elif self.keep_prob is not None:
            raise ValueError(f"keep_prob applies to sparse tokens only, got keep_prob={self.keep_prob!r} "
                             f"for {self.name!r}")
        if self.name == "student_t":
            nu = DEFAULT_STUDENT_DOF if self.dof is None else self.dof
            if not (isinstance(nu, (int, float, np.floating)) and not isinstance(nu, bool)
                    and math.isfinite(nu) and nu > 4):
                raise ValueError(f"dof must be a finite number > 4 for student_t tokens (a finite fourth "
                                 f"moment), got {nu!r}")
            object.__setattr__(self, "dof", float(nu))
        elif self.dof is not None:
            raise ValueError(f"dof applies to student_t tokens only, got dof={self.dof!r} for {self.name!r}")

    @property
    def is_gaussian(self) -> bool:
        return self.name == "gaussian"

    @property
    def fourth_moment(self) -> float:
        """E x⁴ of one coordinate."""
        if self.name == "rademacher":
            return 1.0
        if self.name == "sparse":
            return 3.0 / self.keep_prob
        if self.name == "student_t":
            return 3.0 * (self.dof - 2.0) / (self.dof - 4.0)
        return 3.0

    @property
    def sixth_moment_finite(self) -> bool:
        """E x⁶ < ∞: every law but Student-t with ν <= 6 (the Berry–Esseen rate of ‖x‖² needs it)."""
        return self.name != "student_t" or self.dof > 6.0

    @property
    def excess_kurtosis(self) -> float:
        """κ₄ = E x⁴ − 3: 0 (Gaussian), −2 (Rademacher), 3/p − 3 (sparse), 6/(ν − 4) (Student-t)."""
        return self.fourth_moment - 3.0

    @property
    def token(self) -> str:
        """Path spelling: ``gaussian``, ``rademacher``, ``sparse_p0.5``, ``student_t_nu5`` (numbers with ``:g``)."""
        if self.name == "sparse":
            return f"sparse_p{self.keep_prob:g}"
        if self.name == "student_t":
            return f"student_t_nu{self.dof:g}"
        return self.name

    @property
    def path_suffix(self) -> str:
        """What a result path of this law appends to its problem's directory: ``""`` (Gaussian, today's
        paths) or ``_tok-<token>``, e.g. ``_tok-sparse_p0.5``."""
        return "" if self.is_gaussian else f"_tok-{self.token}"

    @classmethod
    def parse(cls, token: str) -> TokenLaw:
        """Inverse of :attr:`token`."""
        if token.startswith("sparse_p"):
            return cls("sparse", keep_prob=float(token[len("sparse_p"):]))
        if token.startswith("student_t_nu"):
            return cls("student_t", dof=float(token[len("student_t_nu"):]))
        return cls(token)

    def to_dict(self) -> dict:
        """The name and the parameters the law has (for metadata and provenance)."""
        out = {"name": self.name}
        if self.keep_prob is not None:
            out["keep_prob"] = self.keep_prob
        if self.dof is not None:
            out["dof"] = self.dof
        return out

    def sample(self, rng: np.random.Generator, shape, dtype: type = np.float64) -> np.ndarray:
        """An array of i.i.d. coordinates of this law (class notes: all laws transform the same normals).

        O(size) time; the non-Gaussian laws hold one float64 temporary of the array's size.
        """
        g = rng.standard_normal(shape, dtype=dtype)
        if self.name == "gaussian":
            return g
        if self.name == "rademacher":
            return np.where(g >= 0, 1.0, -1.0).astype(dtype)
        if self.name == "sparse":
            keep = rng.random(shape) < self.keep_prob
            return np.where(keep, g / math.sqrt(self.keep_prob), 0.0).astype(dtype)
        chi2 = 2.0 * rng.standard_gamma(0.5 * self.dof, size=shape)
        return (g * np.sqrt((self.dof - 2.0) / chi2)).astype(dtype)


#: The default law of the papers.
GAUSSIAN = TokenLaw()


def token_law(name: str = "gaussian", *, keep_prob: float | None = None,
              dof: float | None = None) -> TokenLaw:
    """A :class:`TokenLaw` from CLI/config fields (a clear ``ValueError`` for a bad one)."""
    return TokenLaw(name, keep_prob=keep_prob, dof=dof)


def sample_tokens(n: int, T: int, d: int, rng: np.random.Generator, *,
                  dtype: type = np.float64, law: TokenLaw = GAUSSIAN) -> np.ndarray:
    """n sequences of T i.i.d. tokens in R^d, coordinates of law ``law``: array (n, T, d).

    The default law is the standard Gaussian of both papers (``docs/paper1.md`` §1.1);
    other laws: :class:`TokenLaw`.  ``dtype`` float32 halves the memory and disk
    of large datasets (``data``); the tokens are then *exactly* the float32
    numbers, and everything computed from them (labels, AMP) uses them as given.
    """
    _check_positive_int("n", n)
    _check_positive_int("T", T, 2)
    _check_positive_int("d", d)
    if np.dtype(dtype) not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise ValueError(f"dtype must be float32 or float64, got {dtype!r}")
    if not isinstance(law, TokenLaw):
        raise ValueError(f"law must be a TokenLaw, got {law!r}")
    return law.sample(rng, (n, T, d), dtype)


def width(d: int, rho: float) -> int:
    """r = round(ρ d), at least 1: the teacher's width."""
    _check_positive_int("d", d)
    if not (math.isfinite(rho) and rho > 0):
        raise ValueError(f"rho must be a finite number > 0, got {rho}")
    return max(1, int(round(rho * d)))


@dataclass(frozen=True)
class Teacher:
    """Tied teacher S* = W Wᵀ/√(r d) (``docs/paper1.md`` §1.4)."""

    W: np.ndarray

    @property
    def d(self) -> int:
        return self.W.shape[0]

    @property
    def r(self) -> int:
        return self.W.shape[1]

    @property
    def S(self) -> np.ndarray:
        return self.W @ self.W.T / math.sqrt(self.r * self.d)


def sample_teacher(d: int, rho: float, rng: np.random.Generator) -> Teacher:
    """Teacher with W ∈ R^{d×r}, entries i.i.d. N(0, 1), r = round(ρ d)."""
    return Teacher(rng.standard_normal((d, width(d, rho))))


def indices(X: np.ndarray, S: np.ndarray, *, dtype=np.float64) -> np.ndarray:
    """h_ab = (x_aᵀ S x_b − δ_ab Tr S)/√d for every sample: (n, T, d), (d, d) → (n, T, T).

    O(n T d²) time through one (nT × d)(d × d) product; O(n T d) memory.
    The products run in float type ``dtype`` (GAMP-RIE's float32 path); Tr S
    comes from S as given.
    """
    X = np.asarray(X, dtype=dtype)
    n, T, d = X.shape
    if S.shape != (d, d):
        raise ValueError(f"S must be ({d}, {d}) to match the tokens, got {S.shape}")
    XS = (X.reshape(n * T, d) @ S.astype(dtype, copy=False)).reshape(n, T, d)
    h = np.einsum("nad,nbd->nab", XS, X)
    h[:, np.arange(T), np.arange(T)] -= np.trace(S)
    return h / math.sqrt(d)


def indices_from_factor(X: np.ndarray, W: np.ndarray, scale: float) -> np.ndarray:
    """Indices of S = scale · W Wᵀ without forming S: O(n T d r).

    h_ab = scale (⟨x_a W, x_b W⟩ − δ_ab ‖W‖_F²)/√d.  For the AIM teacher,
    scale = 1/√(r d).
    """
    X = np.asarray(X, dtype=float)
    n, T, d = X.shape
    if W.shape[0] != d:
        raise ValueError(f"W must have {d} rows to match the tokens, got {W.shape}")
    XW = (X.reshape(n * T, d) @ W).reshape(n, T, -1)
    h = np.einsum("nar,nbr->nab", XW, XW)
    h[:, np.arange(T), np.arange(T)] -= np.sum(W * W)
    return scale * h / math.sqrt(d)


def indices_from_factors(X: np.ndarray, left: np.ndarray, right: np.ndarray | None = None, *,
                         scale: float = 1.0, shift: float = 0.0,
                         centered: bool = True, dtype=np.float64) -> np.ndarray:
    """Indices of S = scale · L Rᵀ + shift · I without forming S: O(n T d r + n T² d).

    h_ab = (x_aᵀ S x_b − [centered] δ_ab Tr S)/√d (``docs/paper2.md`` §1: the
    centered index of tied and direct attention, the uncentered one of
    untied attention S = U Vᵀ).  ``right=None`` means R = L (symmetric S).
    The products run in float type ``dtype`` (tokens and factors cast to
    it; online SGD's float32 path); Tr S comes from the factors as given.
    """
    X = np.asarray(X, dtype=dtype)
    scale, shift = float(scale), float(shift)  # Python floats keep a float32 product float32
    n, T, d = X.shape
    if left.shape[0] != d or (right is not None and right.shape != left.shape):
        raise ValueError(f"factors must be ({d}, r) to match the tokens, got {left.shape} "
                         f"and {None if right is None else right.shape}")
    flat = X.reshape(n * T, d)
    P = (flat @ left.astype(dtype, copy=False)).reshape(n, T, -1)
    Q = P if right is None else (flat @ right.astype(dtype, copy=False)).reshape(n, T, -1)
    h = scale * np.matmul(P, np.swapaxes(Q, 1, 2))
    if shift:
        h += shift * np.matmul(X, np.swapaxes(X, 1, 2))
    if centered:
        trace = scale * np.sum(left * (left if right is None else right)) + shift * d
        h[:, np.arange(T), np.arange(T)] -= trace
    return h / math.sqrt(d)


def hermite_link(z: np.ndarray, order: int) -> np.ndarray:
    """h_k(z) = He_k(z)/√(k!) for k = 1, 2, 3: z, (z² − 1)/√2, (z³ − 3z)/√6."""
    z = np.asarray(z, dtype=float)
    if order == 1:
        return z.copy()
    if order == 2:
        return (z * z - 1.0) / math.sqrt(2.0)
    if order == 3:
        return (z * z * z - 3.0 * z) / math.sqrt(6.0)
    raise ValueError(f"Hermite order must be 1, 2 or 3, got {order!r}")


def apply_link(h: np.ndarray, link: str, *, beta: float = 1.0) -> np.ndarray:
    """Labels y = g(h): row softmax(β h), row one-hot argmax, h itself, or h_k entry by entry.

    ``linear`` and ``h1`` are the same map (paper 1 and paper 2 names).
    """
    h = np.asarray(h, dtype=float)
    if link == "softmax":
        if not (math.isfinite(beta) and beta > 0):
            raise ValueError(f"beta must be a finite number > 0, got {beta}")
        return np.exp(log_softmax(beta * h, axis=-1))
    if link == "hardmax":
        winners = np.argmax(h, axis=-1)
        return (winners[..., None] == np.arange(h.shape[-1])).astype(float)
    if link == "linear":
        return h.copy()
    if link in HERMITE_LINKS:
        return hermite_link(h, HERMITE_LINKS[link])
    raise ValueError(f"link must be one of {LINKS}, got {link!r}")


def plug_in_test_error(X: np.ndarray, y: np.ndarray, S: np.ndarray, link: str, *,
                       beta: float = 1.0) -> float:
    """Plug-in generalisation error of an estimate S on labelled sequences (X, y).

    E_gen = (1/n) Σ_μ ‖y_μ − g(h_μ(S))‖²_F, the squared Frobenius error per
    sequence of the labels predicted with the estimate in place of the teacher
    (the quantity the published ``AMP_softmax.py`` meant to compute, without
    its √2 bug B3; ``docs/paper1.md`` §2 leaves the normalisation open).  For the
    hardmax link each wrong row costs 2, so E_gen = 2 × (wrong rows per
    sequence).  O(n T d²) through :func:`indices`.

    Parameters
    ----------
    X : (n, T, d) tokens; y : (n, T, T) labels; S : (d, d) symmetric estimate
    link, beta : as in :func:`apply_link`
    """
    X = np.asarray(X)
    y = np.asarray(y, dtype=float)
    if y.shape != X.shape[:1] + (X.shape[1], X.shape[1]):
        raise ValueError(f"y must have shape {(X.shape[0], X.shape[1], X.shape[1])} to match X, got {y.shape}")
    predicted = apply_link(indices(X, S), link, beta=beta)
    return float(np.mean(np.sum((y - predicted) ** 2, axis=(1, 2))))
