"""Full-batch gradient descent (Adam) on the two-layer tied student (``docs/paper1.md`` §14.8).

The student has the teacher's architecture (§14.1): two tied factors W₁, W₂ of
the teacher's width r, S_ℓ = W_ℓW_ℓᵀ/√(r d), centred indices H_ℓ, attention
A = c I + softmax(H₁) and output ŷ = softmax(A H₂ Aᵀ), trained on the loss of
paper 1's experiment (§6)

    L = Σ_μ Σ_ab (ŷ_μ,ab − y_μ,ab)² / d

with Adam (``paper1.gd.GDSettings``, PyTorch's update).  K students from
independent initialisations (entries N(0, 1): draws from the prior) are trained
one after the other on the same data; as in §6, *single* is the mean over the
students of ‖S_k,ℓ − S_ℓ‖²_F/d and *averaged* the error of their mean S̄_ℓ, per
layer.  Given the data the students are i.i.d., so the error of the mean of K is
A∞ + (single − A∞)/K, A∞ = (K · averaged − single)/(K − 1) (§6): the error of
the mean over infinitely many initialisations, comparable with the MMSE.

Gradient (backpropagation through the tokens, never a d×d per sample)
----------------------------------------------------------------------
With P_ℓ = X W_ℓ and s = 1/(√(r d) √d), H_ℓ = s(P_ℓP_ℓᵀ − ‖W_ℓ‖² I); G = 2(ŷ − y)/d,
G_M = ŷ ⊙ (G − rowsum(ŷ ⊙ G)), G_H₂ = Aᵀ G_M A, G_A = (G_M + G_Mᵀ) A H₂,
G_H₁ = σ₁ ⊙ (G_A − rowsum(σ₁ ⊙ G_A)) (σ₁ = softmax(H₁)), and for each layer
∇_W L = s[Xᵀ Q − 2 (Σ_μ tr G_H,μ) W] with Q_a = Σ_b (G_H,ab + G_H,ba) P_b
(``paper1.gd``).  O(n T d r) per step and layer (two GEMMs), O(n T³) for the
2×2 products; memory O(n T (d + r)).

A student whose loss or gradient is not finite, or whose Tr S_ℓ/d exceeds
``paper1.gd.DIVERGENCE_TRACE_FACTOR`` times the prior's, is stopped and counted as
diverged; it never enters an average.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from aimrepro.backends import single_threaded
from aimrepro.numerics.softmax import log_softmax
from aimrepro.paper1.gd import DIVERGENCE_TRACE_FACTOR, GDSettings, _adam_update
from aimrepro.paper1.two_layer.fibre import check_skip
from aimrepro.paper1.two_layer.model import TwoLayerDataset, dataset_seed

__all__ = ["TwoLayerGDRun", "load_run_summary", "loss_and_gradient", "run_on_dataset", "save_run", "student_seeds",
           "train_student"]

#: Child of the dataset's seed sequence that seeds the students (children 0–3 draw teachers and data).
_STUDENT_STREAM = 4


def _softmax(logits):
    return np.exp(log_softmax(logits, axis=-1))


def _softmax_backward(probabilities, upstream):
    """∂L/∂logits of a row softmax from ∂L/∂probabilities."""
    return probabilities * (upstream - np.sum(probabilities * upstream, axis=-1, keepdims=True))


def _indices(X_flat, W, n, T, scale):
    P = (X_flat @ W).reshape(n, T, -1)
    h = np.matmul(P, np.swapaxes(P, 1, 2))
    diagonal = np.arange(T)
    h[:, diagonal, diagonal] -= np.sum(W * W)
    return scale * h, P


def _factor_gradient(X_flat, W, P, G_h, scale):
    """∇_W of the loss from its gradient G_h with respect to the indices (module notes)."""
    n, T, r = P.shape
    Q = np.matmul(G_h + np.swapaxes(G_h, 1, 2), P)
    trace = float(np.sum(np.trace(G_h, axis1=1, axis2=2)))
    return scale * (X_flat.T @ Q.reshape(n * T, r) - 2.0 * trace * W)


def loss_and_gradient(W1: np.ndarray, W2: np.ndarray, X: np.ndarray, y: np.ndarray,
                      skip: float) -> tuple[float, np.ndarray, np.ndarray]:
    """The loss Σ‖ŷ − y‖²/d of a two-layer student and its gradients in W₁, W₂ (module notes).

    Parameters
    ----------
    W1, W2 : (d, r) student factors; X : (n, T, d) tokens; y : (n, T, T) labels; skip : c >= 0
    """
    c = check_skip(skip)
    X = np.ascontiguousarray(X, dtype=np.float64)
    n, T, d = X.shape
    W1, W2 = np.asarray(W1, dtype=float), np.asarray(W2, dtype=float)
    if W1.shape[0] != d or W2.shape != W1.shape:
        raise ValueError(f"W1 and W2 must both have shape ({d}, r), got {W1.shape} and {W2.shape}")
    if np.shape(y) != (n, T, T):
        raise ValueError(f"y must have shape {(n, T, T)}, got {np.shape(y)}")
    X_flat = X.reshape(n * T, d)
    scale = 1.0 / (math.sqrt(W1.shape[1] * d) * math.sqrt(d))
    H1, P1 = _indices(X_flat, W1, n, T, scale)
    H2, P2 = _indices(X_flat, W2, n, T, scale)
    sigma = _softmax(H1)
    A = c * np.eye(T) + sigma
    M = A @ H2 @ np.swapaxes(A, 1, 2)
    y_hat = _softmax(M)
    residual = y_hat - y
    loss = float(np.sum(residual * residual) / d)
    G_M = _softmax_backward(y_hat, 2.0 * residual / d)
    G_H2 = np.swapaxes(A, 1, 2) @ G_M @ A
    G_A = (G_M + np.swapaxes(G_M, 1, 2)) @ A @ H2
    G_H1 = _softmax_backward(sigma, G_A)
    return loss, _factor_gradient(X_flat, W1, P1, G_H1, scale), _factor_gradient(X_flat, W2, P2, G_H2, scale)


def student_seeds(base_seed: int, dataset: TwoLayerDataset, n_inits: int) -> list[np.random.SeedSequence]:
    """Seeds of the K students of one dataset: child (4, k) of the dataset's seed sequence (depends on k only)."""
    if isinstance(n_inits, bool) or not isinstance(n_inits, (int, np.integer)) or n_inits < 1:
        raise ValueError(f"n_inits must be an integer >= 1, got {n_inits!r}")
    root = dataset_seed(base_seed, dataset.spec)
    return [np.random.SeedSequence(root.entropy, spawn_key=(*root.spawn_key, _STUDENT_STREAM, k))
            for k in range(n_inits)]


@dataclass(frozen=True)
class _Student:
    W: np.ndarray            # (2, d, r) final factors
    final_loss: float
    diverged: bool


def train_student(X, y, W0: np.ndarray, skip: float, settings: GDSettings) -> _Student:
    """Full-batch Adam from W0 (2, d, r) for ``settings.steps`` steps (module notes).

    Time O(steps · n T d r); one BLAS thread (the bits do not depend on the machine's threads).
    """
    W = np.array(W0, dtype=float)
    m, v = np.zeros_like(W), np.zeros_like(W)
    d, r = W.shape[1], W.shape[2]
    limit = DIVERGENCE_TRACE_FACTOR * math.sqrt(r / d)
    loss = math.nan
    with single_threaded():
        for t in range(1, settings.steps + 1):
            loss, g1, g2 = loss_and_gradient(W[0], W[1], X, y, skip)
            grad = np.stack([g1, g2])
            traces = np.sum(W * W, axis=(1, 2)) / math.sqrt(r * d) / d
            if not (math.isfinite(loss) and np.all(np.isfinite(grad)) and np.all(traces < limit)):
                return _Student(W, math.nan, True)
            _adam_update(W, m, v, grad, t, settings)
        loss, _, _ = loss_and_gradient(W[0], W[1], X, y, skip)
    return _Student(W, loss, not math.isfinite(loss))


@dataclass(frozen=True)
class TwoLayerGDRun:
    """K students on one dataset: errors per layer (single, averaged, A∞), losses, divergences.

    ``single``: (2,) mean over finished students of ‖S_k,ℓ − S_ℓ‖²_F/d; ``averaged``: (2,)
    error of their mean; ``extrapolated``: (2,) A∞ = (K averaged − single)/(K − 1) (NaN for
    K < 2); ``n_finished``, ``n_diverged``; ``final_loss``: mean final training loss.
    """

    single: np.ndarray
    averaged: np.ndarray
    extrapolated: np.ndarray
    n_finished: int
    n_diverged: int
    final_loss: float
    settings: dict = field(default_factory=dict)

    def summary(self) -> dict:
        return {"single1": float(self.single[0]), "single2": float(self.single[1]),
                "averaged1": float(self.averaged[0]), "averaged2": float(self.averaged[1]),
                "extrapolated1": float(self.extrapolated[0]), "extrapolated2": float(self.extrapolated[1]),
                "n_finished": int(self.n_finished), "n_diverged": int(self.n_diverged),
                "final_loss": float(self.final_loss)}


def run_on_dataset(dataset: TwoLayerDataset, n_inits: int, settings: GDSettings) -> TwoLayerGDRun:
    """Train ``n_inits`` two-layer students on a dataset and score them against its teachers (module notes).

    Time O(n_inits · steps · n T d r).
    """
    spec = dataset.spec
    X = np.asarray(dataset.X, dtype=np.float64)
    teachers = np.stack([dataset.S1, dataset.S2])
    d, r = spec.d, spec.r
    students = []
    for seed in student_seeds(dataset.base_seed, dataset, n_inits):
        W0 = settings.init_scale * np.random.default_rng(seed).standard_normal((2, d, r))
        students.append(train_student(X, dataset.y, W0, spec.skip, settings))
    finished = [s for s in students if not s.diverged]
    if not finished:
        nan2 = np.full(2, math.nan)
        return TwoLayerGDRun(nan2, nan2, nan2, 0, len(students), math.nan, settings.to_dict())
    matrices = np.stack([s.W @ np.swapaxes(s.W, 1, 2) for s in finished]) / math.sqrt(r * d)  # (K, 2, d, d)
    single = np.mean(np.sum((matrices - teachers) ** 2, axis=(2, 3)), axis=0) / d
    averaged = np.sum((matrices.mean(axis=0) - teachers) ** 2, axis=(1, 2)) / d
    K = len(finished)
    extrapolated = (K * averaged - single) / (K - 1) if K > 1 else np.full(2, math.nan)
    return TwoLayerGDRun(single, averaged, extrapolated, K, len(students) - K,
                         float(np.mean([s.final_loss for s in finished])), settings.to_dict())


def save_run(path, run: TwoLayerGDRun) -> None:
    """Write a run's summary (:meth:`TwoLayerGDRun.summary`) as an uncompressed ``.npz``, byte-reproducibly."""
    from aimrepro.paper1.data import write_npz

    write_npz(path, {name: np.asarray(value) for name, value in run.summary().items()})


def load_run_summary(path) -> dict:
    """The summary written by :func:`save_run` (floats and the two counts as ints)."""
    with np.load(path, allow_pickle=False) as archive:
        return {name: (int(archive[name]) if name in ("n_finished", "n_diverged") else float(archive[name]))
                for name in archive.files}
