"""The attention-indexed model (AIM): tokens, teachers, indices and links.

``paper1.md`` §1: a sample is a sequence X ∈ R^{T×d} of i.i.d. N(0, 1)
tokens; a symmetric S ∈ R^{d×d} defines the T×T indices

    h_ab = (x_aᵀ S x_b − δ_ab Tr S)/√d,

and the label is y = g(h).  The teacher is S* = W Wᵀ/√(r d) with W ∈ R^{d×r}
Gaussian, r = ρ d.

Numerics
--------
Everything is a contraction of the token array X (n, T, d) with a d×d matrix
or a d×r factor; no n×d×d×T×T tensor is ever built.  Costs:
:func:`indices` O(n T d²) (one (nT × d)(d × d) GEMM) and O(n T d) memory;
:func:`indices_from_factor` O(n T d r).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import log_softmax

LINKS = ("softmax", "hardmax", "linear")


def _check_positive_int(name, value, minimum=1):
    if not (isinstance(value, (int, np.integer)) and value >= minimum):
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")


def sample_tokens(n: int, T: int, d: int, rng: np.random.Generator) -> np.ndarray:
    """n sequences of T i.i.d. standard Gaussian tokens in R^d: array (n, T, d)."""
    _check_positive_int("n", n)
    _check_positive_int("T", T, 2)
    _check_positive_int("d", d)
    return rng.standard_normal((n, T, d))


def width(d: int, rho: float) -> int:
    """r = round(ρ d), at least 1: the teacher's width."""
    _check_positive_int("d", d)
    if not (math.isfinite(rho) and rho > 0):
        raise ValueError(f"rho must be a finite number > 0, got {rho}")
    return max(1, int(round(rho * d)))


@dataclass(frozen=True)
class Teacher:
    """Tied teacher S* = W Wᵀ/√(r d) (``paper1.md`` §1.4)."""

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


def indices(X: np.ndarray, S: np.ndarray) -> np.ndarray:
    """h_ab = (x_aᵀ S x_b − δ_ab Tr S)/√d for every sample: (n, T, d), (d, d) → (n, T, T).

    O(n T d²) time through one (nT × d)(d × d) product; O(n T d) memory.
    """
    X = np.asarray(X, dtype=float)
    n, T, d = X.shape
    if S.shape != (d, d):
        raise ValueError(f"S must be ({d}, {d}) to match the tokens, got {S.shape}")
    XS = (X.reshape(n * T, d) @ S).reshape(n, T, d)
    h = np.matmul(XS, np.swapaxes(X, 1, 2))
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
    h = np.matmul(XW, np.swapaxes(XW, 1, 2))
    h[:, np.arange(T), np.arange(T)] -= np.sum(W * W)
    return scale * h / math.sqrt(d)


def apply_link(h: np.ndarray, link: str, *, beta: float = 1.0) -> np.ndarray:
    """Labels y = g(h) for the links of §1.3: row softmax(β h), row one-hot argmax, or h itself."""
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
    raise ValueError(f"link must be one of {LINKS}, got {link!r}")
