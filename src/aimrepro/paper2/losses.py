"""Output links and the teacher–student loss, with the derivatives the dynamics needs.

The loss of paper 2's experiments is the mean-squared error between the
student's and the teacher's outputs (``docs/paper2.md`` §1, [P eq. 22]):

    ℒ(G) = c ‖F_s(G₁) − F_t(G₂)‖²_F,     c = ½ by default,

with G = (G₁, G₂) the T×T index arrays of student (k = 1) and teacher
(k = 2).  The exactly solvable Riccati case of [P App. D.3] is the linear
link with c = 1, ℒ = (G₁ − G₂)².

A :class:`Link` maps an index array to outputs and supplies the
derivatives online SGD (first) and Price's theorem (second) need:

* elementwise links act entry by entry: h₁ (= ``linear``), h₂, h₃
  (``docs/paper2.md`` Fig. 2; h_k = He_k/√(k!));
* row-wise links act on each row a of G: ``softmax`` (β) and ``hardmax``
  (one-hot argmax).  Hardmax is piecewise constant: its derivatives vanish
  almost everywhere, so it has no SGD dynamics and no Price expectation; it
  serves as a teacher link and in the loss landscape (closed form at T = 2).

Shapes: index arrays are (..., T, T); the student/teacher pair is stacked on
an axis of length 2 just before them, G: (..., 2, T, T).

Numerics
--------
Costs per sample: value and student gradient O(T²) (elementwise) or O(T²)
(softmax, through a vector–Jacobian product); the Hessian contractions of
Price's theorem O(T²) (elementwise) or O(T⁴) (softmax: one T×T×T Jacobian
per row), which is negligible for the T ≤ 6 of the papers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from aimrepro.model import HERMITE_LINKS, LINKS, hermite_link
from aimrepro.numerics.softmax import log_softmax

__all__ = ["LINK_NAMES", "Link", "MSELoss", "make_link"]

#: Registry names, equal to the config and CLI strings.
#: The link registry of the model (``aimrepro.model.LINKS``).
LINK_NAMES = LINKS

_SQRT2 = math.sqrt(2.0)
_SQRT6 = math.sqrt(6.0)


@dataclass(frozen=True)
class Link:
    """An output map F of the AIM: elementwise (h₁, h₂, h₃, linear) or row-wise (softmax, hardmax).

    Parameters
    ----------
    name : str
        One of :data:`LINK_NAMES`.
    beta : float
        Inverse temperature of ``softmax`` (ignored otherwise).
    """

    name: str
    beta: float = 1.0

    def __post_init__(self) -> None:
        if self.name not in LINK_NAMES:
            raise ValueError(f"link must be one of {LINK_NAMES}, got {self.name!r}")
        if not (math.isfinite(self.beta) and self.beta > 0):
            raise ValueError(f"beta must be a finite number > 0, got {self.beta}")

    @property
    def elementwise(self) -> bool:
        return self.name not in ("softmax", "hardmax")

    @property
    def smooth(self) -> bool:
        """Whether the link has the derivatives SGD and Price's theorem use."""
        return self.name != "hardmax"

    @property
    def hermite_order(self) -> int:
        """k of h_k; ``linear`` is h₁.  Only for elementwise links."""
        return 1 if self.name == "linear" else HERMITE_LINKS[self.name]

    @property
    def min_T(self) -> int:
        """Row-wise links need T ≥ 2 (a softmax over one token is the constant 1)."""
        return 1 if self.elementwise else 2

    def label(self) -> str:
        """Name for legends: h1, h2, softmax(β=2), ..."""
        if self.name == "softmax" and self.beta != 1.0:
            return f"softmax(β={self.beta:g})"
        return self.name

    # --- values and derivatives ------------------------------------------------

    def apply(self, G: np.ndarray) -> np.ndarray:
        """F(G), same shape (..., T, T)."""
        G = np.asarray(G, dtype=float)
        if self.elementwise:
            return hermite_link(G, self.hermite_order)
        if self.name == "softmax":
            return np.exp(log_softmax(self.beta * G, axis=-1))
        winners = np.argmax(G, axis=-1)
        return (winners[..., None] == np.arange(G.shape[-1])).astype(float)

    def _d1(self, G: np.ndarray) -> np.ndarray:
        """h'(G) entry by entry (elementwise links)."""
        k = self.hermite_order
        if k == 1:
            return np.ones_like(G)
        if k == 2:
            return _SQRT2 * G
        return (3.0 * G * G - 3.0) / _SQRT6

    def _d2(self, G: np.ndarray) -> np.ndarray:
        """h''(G) entry by entry (elementwise links)."""
        k = self.hermite_order
        if k == 1:
            return np.zeros_like(G)
        if k == 2:
            return np.full_like(G, _SQRT2)
        return 6.0 * G / _SQRT6

    def vjp(self, G: np.ndarray, r: np.ndarray, y: np.ndarray | None = None) -> np.ndarray:
        """Σ_{a,c} r_ac ∂F(G)_ac/∂G_·· : the vector–Jacobian product, shape (..., T, T).

        ``y = F(G)`` may be passed to avoid recomputing it (softmax).
        """
        self._require_smooth("its gradient")
        if self.elementwise:
            return r * self._d1(G)
        s = self.apply(G) if y is None else y
        # ∂s_c/∂G_j = β s_c (δ_cj − s_j) within a row.
        return self.beta * s * (r - np.sum(r * s, axis=-1, keepdims=True))

    def jacobian(self, G: np.ndarray) -> np.ndarray:
        """Derivatives of F: elementwise h'(G) (..., T, T); row-wise J[..., a, c, j] = ∂F_ac/∂G_aj."""
        self._require_smooth("its Jacobian")
        if self.elementwise:
            return self._d1(G)
        s = self.apply(G)
        eye = np.eye(G.shape[-1])
        return self.beta * s[..., :, None] * (eye - s[..., None, :])

    def hessian_dot(self, G: np.ndarray, r: np.ndarray) -> np.ndarray:
        """Σ_c r_ac ∂²F_ac/∂G_aj∂G_ak: elementwise r h''(G) (..., T, T); row-wise (..., T, T, T).

        Row-wise (softmax): ∂²s_c/∂u_j∂u_k = β² s_c[(δ_cj − s_j)(δ_ck − s_k) − s_j(δ_jk − s_k)].
        """
        self._require_smooth("its Hessian")
        if self.elementwise:
            return r * self._d2(G)
        s = self.apply(G)
        eye = np.eye(G.shape[-1])
        E = eye - s[..., None, :]                       # E[..., a, c, j] = δ_cj − s_j
        term1 = np.einsum("...c,...cj,...ck->...jk", r * s, E, E)
        rs = np.sum(r * s, axis=-1)                     # Σ_c r_c s_c per row
        term2 = rs[..., None, None] * (s[..., :, None] * (eye - s[..., None, :]))
        return self.beta ** 2 * (term1 - term2)

    def _require_smooth(self, what: str) -> None:
        if not self.smooth:
            raise ValueError(f"link {self.name!r} is piecewise constant: {what} vanishes almost "
                             "everywhere (use it as the teacher link, or softmax with a large beta)")


def make_link(name: str, *, beta: float = 1.0) -> Link:
    """The link called ``name`` (``beta`` for softmax only)."""
    return Link(name, beta if name == "softmax" else 1.0)


@dataclass(frozen=True)
class MSELoss:
    """ℒ(G₁, G₂) = c ‖F_s(G₁) − F_t(G₂)‖²_F (``docs/paper2.md`` §1, [P eq. 22]).

    Parameters
    ----------
    student, teacher : Link
        Both elementwise or both row-wise.
    prefactor : float
        c > 0; ½ is the paper's MSE, 1 gives the Riccati example ℒ = (G₁ − G₂)².
    """

    student: Link
    teacher: Link
    prefactor: float = 0.5

    def __post_init__(self) -> None:
        if self.student.elementwise != self.teacher.elementwise:
            raise ValueError(f"student and teacher links must both be elementwise or both "
                             f"row-wise, got {self.student.name!r} and {self.teacher.name!r}")
        if not (math.isfinite(self.prefactor) and self.prefactor > 0):
            raise ValueError(f"prefactor must be a finite number > 0, got {self.prefactor}")

    @property
    def elementwise(self) -> bool:
        return self.student.elementwise

    @property
    def smooth(self) -> bool:
        return self.student.smooth and self.teacher.smooth

    @property
    def min_T(self) -> int:
        return self.student.min_T

    def value(self, G: np.ndarray) -> np.ndarray:
        """ℒ for G (..., 2, T, T) → (...)."""
        r = self.student.apply(G[..., 0, :, :]) - self.teacher.apply(G[..., 1, :, :])
        return self.prefactor * np.sum(r * r, axis=(-2, -1))

    def student_gradient(self, G1: np.ndarray, y_teacher: np.ndarray) -> tuple[np.ndarray,
                                                                               np.ndarray]:
        """(ℒ, ∂ℒ/∂G₁) given the student indices G₁ (..., T, T) and teacher outputs F_t(G₂).

        Used by SGD, where the teacher outputs are the labels of the batch.
        """
        y = self.student.apply(G1)
        r = y - y_teacher
        loss = self.prefactor * np.sum(r * r, axis=(-2, -1))
        return loss, 2.0 * self.prefactor * self.student.vjp(G1, r, y)

    def gradient(self, G: np.ndarray) -> np.ndarray:
        """∂ℒ/∂G for both indices, (..., 2, T, T)."""
        G1, G2 = G[..., 0, :, :], G[..., 1, :, :]
        y1, y2 = self.student.apply(G1), self.teacher.apply(G2)
        r = y1 - y2
        c2 = 2.0 * self.prefactor
        return np.stack([c2 * self.student.vjp(G1, r, y1), -c2 * self.teacher.vjp(G2, r, y2)],
                        axis=-3)

    def hessian_contractions(self, G: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The two contractions of ∂²ℒ/∂G_{ijk}∂G_{i'j'l} that Price's theorem needs (𝒞 = I).

        Returns
        -------
        omega_part : (..., 2, 2)
            Σ_{ij} ∂²ℒ/∂G_{ijk}∂G_{ijl}.
        psi_part : (..., 2, 2)
            Σ_{ij} ∂²ℒ/∂G_{ijk}∂G_{jil}.

        Notes
        -----
        ``docs/paper2.md`` §2.1, §9 and [P eqs. 458–459, 571–572]: with 𝒞 = I,
        ∇_Ω Φ = ½ E[omega_part] and ∇_Ψ Φ = ½ E[psi_part].  The Hessian of
        an elementwise loss is diagonal in the entry (ij), and that of a
        row-wise loss is block diagonal in the row i, so in both cases the Ψ
        contraction keeps the diagonal entries i = j only.
        """
        if not self.smooth:
            raise ValueError("Price's theorem needs a smooth loss; the hardmax link has none")
        G1, G2 = G[..., 0, :, :], G[..., 1, :, :]
        y1, y2 = self.student.apply(G1), self.teacher.apply(G2)
        r = y1 - y2
        c2 = 2.0 * self.prefactor
        # Entries (a, a) with a < number of rows: the arrays may have fewer rows than
        # columns (one row of a row-wise loss, Potential's T = 2 quadrature).
        diag = np.arange(min(G.shape[-2], G.shape[-1]))
        if self.elementwise:
            j1, j2 = self.student.jacobian(G1), self.teacher.jacobian(G2)
            h11 = c2 * (j1 * j1 + self.student.hessian_dot(G1, r))
            h22 = c2 * (j2 * j2 - self.teacher.hessian_dot(G2, r))
            h12 = -c2 * j1 * j2
            blocks = [[h11, h12], [h12, h22]]
            omega = [[np.sum(b, axis=(-2, -1)) for b in row] for row in blocks]
            psi = [[np.sum(b[..., diag, diag], axis=-1) for b in row] for row in blocks]
        else:
            J1, J2 = self.student.jacobian(G1), self.teacher.jacobian(G2)   # [..., a, c, j]
            h11 = c2 * (np.einsum("...acj,...ack->...ajk", J1, J1)
                        + self.student.hessian_dot(G1, r))
            h22 = c2 * (np.einsum("...acj,...ack->...ajk", J2, J2)
                        - self.teacher.hessian_dot(G2, r))
            h12 = -c2 * np.einsum("...acj,...ack->...ajk", J1, J2)
            h21 = np.swapaxes(h12, -1, -2)
            blocks = [[h11, h12], [h21, h22]]
            # Row a, entries (a, j) and (a, k): Ω keeps j = k, Ψ keeps j = k = a.
            omega = [[np.trace(b, axis1=-2, axis2=-1).sum(axis=-1) for b in row]
                     for row in blocks]
            psi = [[b[..., diag, diag, diag].sum(axis=-1) for b in row] for row in blocks]
        return np.stack([np.stack(row, axis=-1) for row in omega], axis=-2), \
            np.stack([np.stack(row, axis=-1) for row in psi], axis=-2)
