"""Attention matrices as factors, and their trace order parameters (``docs/paper2.md`` §1).

Every quantity the dynamics needs from a d×d matrix S is a contraction that
the factors give without forming S:

* the indices h_ab = (x_aᵀ S x_b − [centered] δ_ab Tr S)/√d of a batch of tokens;
* the traces t = Tr S/d and the products Ψ_kl = Tr(S_k S_l)/d,
  Ω_kl = Tr(S_k S_lᵀ)/d of student and teacher (``docs/paper2.md`` §1, [P eq. 397]).

Two representations share one interface:

:class:`FactoredMatrix`
    S = scale · L Rᵀ + shift · I with L, R ∈ R^{d×r}: the tied student W Wᵀ
    (L = R = W), the untied student U Vᵀ, the teachers (the untied teacher of
    ``docs/paper2.md`` §5.3 carries a mean shift (m₂/√d) I).
:class:`DenseMatrix`
    S itself, for direct optimisation of S (``docs/paper2.md`` §2.1), whose cost is
    O(d²) per sample anyway.

Numerics
--------
Trace products of two factored matrices cost O(d r r'), of a dense and a
factored one O(d² r'), of two dense ones O(d²).  Indices cost O(n T d r)
(factored) or O(n T d²) (dense) through one GEMM over the flattened batch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from aimrepro.model import indices_from_factors

__all__ = ["DenseMatrix", "FactoredMatrix", "trace_products"]


@dataclass(frozen=True, eq=False)
class FactoredMatrix:
    """S = scale · L Rᵀ + shift · I_d, never formed.

    Parameters
    ----------
    left : (d, r) ndarray
    right : (d, r) ndarray or None
        ``None`` means R = L: S is symmetric positive semi-definite when
        scale > 0 and shift ≥ 0 (the tied case S = W Wᵀ).
    scale, shift : float
    """

    left: np.ndarray
    right: np.ndarray | None = None
    scale: float = 1.0
    shift: float = 0.0

    def __post_init__(self) -> None:
        if self.left.ndim != 2:
            raise ValueError(f"left factor must be a (d, r) array, got shape {self.left.shape}")
        if self.right is not None and self.right.shape != self.left.shape:
            raise ValueError(f"factors must have equal shapes, got {self.left.shape} "
                             f"and {self.right.shape}")
        if not (math.isfinite(self.scale) and math.isfinite(self.shift)):
            raise ValueError(f"scale and shift must be finite, got {self.scale}, {self.shift}")

    @property
    def d(self) -> int:
        return self.left.shape[0]

    @property
    def rank(self) -> int:
        return self.left.shape[1]

    @property
    def symmetric(self) -> bool:
        return self.right is None

    @property
    def _right(self) -> np.ndarray:
        return self.left if self.right is None else self.right

    def trace(self) -> float:
        """Tr S: O(d r)."""
        return float(self.scale * np.sum(self.left * self._right) + self.shift * self.d)

    def indices(self, X: np.ndarray, *, centered: bool, dtype=np.float64) -> np.ndarray:
        """h_ab for tokens X (n, T, d) → (n, T, T); O(n T d r), in float type ``dtype``."""
        return indices_from_factors(X, self.left, self.right, scale=self.scale,
                                    shift=self.shift, centered=centered, dtype=dtype)

    def dense(self) -> np.ndarray:
        """S as a d×d array (tests, naive baselines and direct students only)."""
        S = self.scale * (self.left @ self._right.T)
        if self.shift:
            S[np.diag_indices(self.d)] += self.shift
        return S

    def scaled(self, factor: float) -> FactoredMatrix:
        """factor · S (scale and shift multiplied; factors shared, not copied)."""
        return FactoredMatrix(self.left, self.right, self.scale * factor, self.shift * factor)


@dataclass(frozen=True, eq=False)
class DenseMatrix:
    """S ∈ R^{d×d} stored as is (direct optimisation of S)."""

    S: np.ndarray

    def __post_init__(self) -> None:
        if self.S.ndim != 2 or self.S.shape[0] != self.S.shape[1]:
            raise ValueError(f"S must be a square matrix, got shape {self.S.shape}")

    @property
    def d(self) -> int:
        return self.S.shape[0]

    @property
    def symmetric(self) -> bool:
        return False

    def trace(self) -> float:
        return float(np.trace(self.S))

    def indices(self, X: np.ndarray, *, centered: bool, dtype=np.float64) -> np.ndarray:
        """h_ab for tokens X (n, T, d) → (n, T, T); O(n T d²), in float type ``dtype`` (Tr S from S as stored)."""
        X = np.asarray(X, dtype=dtype)
        n, T, d = X.shape
        XS = (X.reshape(n * T, d) @ self.S.astype(dtype, copy=False)).reshape(n, T, d)
        h = np.matmul(XS, np.swapaxes(X, 1, 2))
        if centered:
            h[:, np.arange(T), np.arange(T)] -= np.trace(self.S)
        return h / math.sqrt(d)

    def dense(self) -> np.ndarray:
        return self.S

    def scaled(self, factor: float) -> DenseMatrix:
        return DenseMatrix(self.S * factor)


Matrix = FactoredMatrix | DenseMatrix


def _trace_product(A: Matrix, B: Matrix, *, transpose_b: bool) -> float:
    """Tr(A B) or Tr(A Bᵀ) from the representations (no d×d product formed)."""
    if isinstance(A, DenseMatrix) and isinstance(B, DenseMatrix):
        return float(np.sum(A.S * (B.S if transpose_b else B.S.T)))
    if isinstance(A, FactoredMatrix) and isinstance(B, DenseMatrix):
        # Tr(A B) = Tr(B A) and Tr(A Bᵀ) = Tr(B Aᵀ): put the dense one first.
        return _dense_factored(B.S, A, transpose_b=transpose_b)
    if isinstance(A, DenseMatrix):
        return _dense_factored(A.S, B, transpose_b=transpose_b)
    L1, R1, L2, R2 = A.left, A._right, B.left, B._right
    if transpose_b:
        # Tr(L1 R1ᵀ R2 L2ᵀ) = Σ (L1ᵀ L2) ∘ (R1ᵀ R2)
        core = np.sum((L1.T @ L2) * (R1.T @ R2))
    else:
        # Tr(L1 R1ᵀ L2 R2ᵀ) = Tr((R1ᵀ L2)(R2ᵀ L1))
        core = np.sum((R1.T @ L2) * (R2.T @ L1).T)
    value = A.scale * B.scale * core
    if A.shift:
        value += A.shift * B.scale * np.sum(L2 * R2)
    if B.shift:
        value += B.shift * A.scale * np.sum(L1 * R1)
    if A.shift and B.shift:
        value += A.shift * B.shift * A.d
    return float(value)


def _dense_factored(S: np.ndarray, B: FactoredMatrix, *, transpose_b: bool) -> float:
    """Tr(S B) or Tr(S Bᵀ) for dense S: O(d² r)."""
    if transpose_b:
        # Tr(S R Lᵀ) = Σ L ∘ (S R)
        core = np.sum(B.left * (S @ B._right))
    else:
        # Tr(S L Rᵀ) = Σ R ∘ (S L)
        core = np.sum(B._right * (S @ B.left))
    return float(B.scale * core + B.shift * np.trace(S))


def trace_products(matrices: tuple[Matrix, ...] | list[Matrix]) -> tuple[np.ndarray, np.ndarray,
                                                                            np.ndarray]:
    """Traces and trace products of K matrices, normalised by d.

    Returns
    -------
    trace : (K,) ndarray
        t_k = Tr S_k / d.
    Psi : (K, K) ndarray
        Ψ_kl = Tr(S_k S_l)/d (symmetric in k, l).
    Omega : (K, K) ndarray
        Ω_kl = Tr(S_k S_lᵀ)/d (symmetric in k, l).

    Notes
    -----
    ``docs/paper2.md`` §1 and [P eq. 397].  For symmetric S_k, S_l the two
    products coincide, Ψ_kl = Ω_kl = q_kl.
    """
    d = matrices[0].d
    if any(m.d != d for m in matrices):
        raise ValueError(f"all matrices must be {d}×{d}, got {[m.d for m in matrices]}")
    K = len(matrices)
    trace = np.array([m.trace() for m in matrices]) / d
    Psi = np.empty((K, K))
    Omega = np.empty((K, K))
    for k in range(K):
        for l in range(k, K):
            Psi[k, l] = Psi[l, k] = _trace_product(matrices[k], matrices[l], transpose_b=False) / d
            # Tr(A Bᵀ) = Tr(A B) as soon as one of the two is symmetric.
            Omega[k, l] = Omega[l, k] = (
                Psi[k, l] if matrices[k].symmetric or matrices[l].symmetric
                else _trace_product(matrices[k], matrices[l], transpose_b=True) / d)
    return trace, Psi, Omega
