"""The PyTorch kernels: the same numbers as the numpy reference, on a GPU when there is one.

Each function mirrors a numpy kernel and takes and returns numpy arrays, so
that callers, records and tests see no tensors; data that stay fixed for a
run (the GD tokens, the AMP tokens) move to the device once.  With
``dtype: float32`` a kernel computes in float32 as a whole (GD's loss sums
and SGD's links included, unlike numpy's, ``docs/design.md`` "Precision"),
except AMP's eigendecomposition, float64 in either type; what it returns
enters the caller's float64 state as with numpy.  The formulas
and their costs are those of the numpy kernels cited in each docstring;
agreement to 1e-10 is tested in tests/unit/test_backends.py.

PyTorch is imported here only, and this module only when a run selects
``backend: torch`` (:mod:`aimrepro.backends`).
"""

from __future__ import annotations

import math

import numpy as np
import torch

__all__ = ["AMPKernels", "gd_block_kernel", "sgd_gradients"]

_SQRT2 = math.sqrt(2.0)
_SQRT6 = math.sqrt(6.0)


def _dtype(backend) -> torch.dtype:
    return torch.float64 if backend.dtype == "float64" else torch.float32


def _tensor(array, backend, device) -> torch.Tensor:
    return torch.as_tensor(np.asarray(array), dtype=_dtype(backend), device=device)


def _numpy(tensor: torch.Tensor) -> np.ndarray:
    return tensor.detach().to("cpu", torch.float64).numpy()


# ---------------------------------------------------------------------------
# paper 1: gradient descent (aimrepro.paper1.gd._forward / _backward)


def gd_block_kernel(backend, X_flat: np.ndarray, y: np.ndarray, n: int, T: int, beta: float):
    """The GD block kernel of :func:`aimrepro.paper1.gd._block_kernel` in PyTorch.

    The tokens (nT × d) and labels move to the device once; each call moves
    a block's factors (k, d, r) there and its losses and gradient back.  The
    k students share one stacked (nT × d)(d × k r) GEMM each way, which
    suits a GPU; the numbers equal numpy's to rounding, not bit for bit.
    O(n T d k r) per call, as the numpy kernel.
    """
    device = backend.resolved_device()
    X = _tensor(X_flat, backend, device)
    labels = _tensor(y, backend, device)[:, None]  # (n, 1, T, T)
    eye = torch.eye(T, dtype=X.dtype, device=device)

    def kernel(W_block: np.ndarray, need_grad: bool):
        k, d, r = W_block.shape
        s = 1.0 / (math.sqrt(r * d) * math.sqrt(d))
        W = _tensor(W_block, backend, device)
        W_stacked = W.permute(1, 0, 2).reshape(d, k * r)
        P = (X @ W_stacked).reshape(n, T, k, r).permute(0, 2, 1, 3)  # (n, k, T, r)
        W_sq = torch.sum(torch.square(W.reshape(k, d * r)), dim=1)
        h = (P @ P.transpose(-1, -2) - eye * W_sq[None, :, None, None]) * s
        y_hat = torch.softmax(beta * h, dim=-1)
        residual = y_hat - labels
        loss = torch.sum(torch.square(residual), dim=(0, 2, 3)) / d
        grad = None
        if need_grad:
            G = (2.0 / d) * residual
            g = beta * y_hat * (G - torch.sum(y_hat * G, dim=-1, keepdim=True))
            sym = g + g.transpose(-1, -2)
            Q = (sym @ P).permute(0, 2, 1, 3).reshape(n * T, k * r)
            trace_g = torch.diagonal(g, dim1=-2, dim2=-1).sum(dim=(0, 2))
            full = (X.T @ Q).reshape(d, k, r) - (2.0 * trace_g)[None, :, None] * W.permute(1, 0, 2)
            grad = _numpy((full * s).permute(1, 0, 2))
        return _numpy(loss), _numpy(W_sq), grad

    return kernel


# ---------------------------------------------------------------------------
# paper 1: GAMP-RIE (aimrepro.paper1.amp._indices, _backproject, _denoise)


class AMPKernels:
    """The GEMMs and the eigendecomposition of a GAMP-RIE iteration, tokens on the device.

    :meth:`indices` is ``model.indices`` (h = (X S Xᵀ − Tr S·I)/√d, (n, T, T)),
    :meth:`backproject` the sum (1/√d)[Xᵀ(G X) − (Σ Tr G) I] of
    ``amp._backproject`` for a symmetric (n, T, T) G, :meth:`eigh` a
    symmetric eigendecomposition.  O(n T d²) and O(d³), as numpy.
    """

    def __init__(self, backend, X: np.ndarray) -> None:
        self.backend = backend
        self.device = backend.resolved_device()
        self.X = _tensor(X, backend, self.device)
        n, T, d = X.shape
        self.shape = (n, T, d)

    def indices(self, S: np.ndarray) -> np.ndarray:
        n, T, d = self.shape
        S_t = _tensor(S, self.backend, self.device)
        XS = (self.X.reshape(n * T, d) @ S_t).reshape(n, T, d)
        h = XS @ self.X.transpose(1, 2)
        h = h - torch.trace(S_t) * torch.eye(T, dtype=h.dtype, device=self.device)
        return _numpy(h / math.sqrt(d))

    def backproject(self, G: np.ndarray) -> np.ndarray:
        n, T, d = self.shape
        G_t = _tensor(G, self.backend, self.device)
        GX = (G_t @ self.X).reshape(n * T, d)
        B = self.X.reshape(n * T, d).T @ GX
        B = B - torch.diagonal(G_t, dim1=1, dim2=2).sum() * torch.eye(d, dtype=B.dtype, device=self.device)
        return _numpy(B / math.sqrt(d))

    def eigh(self, M: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        # float64 whatever the backend's type, as numpy's: its output is the iteration's state
        # (aimrepro.paper1.amp, "Precision")
        values, vectors = torch.linalg.eigh(torch.as_tensor(np.asarray(M), dtype=torch.float64, device=self.device))
        return _numpy(values), _numpy(vectors)


# ---------------------------------------------------------------------------
# paper 2: online SGD (aimrepro.paper2.sgd students, aimrepro.paper2.losses links)


def _link(name: str, beta: float, G: torch.Tensor) -> torch.Tensor:
    """F(G) of ``aimrepro.paper2.losses.Link.apply``: h₁/linear, h₂, h₃ entry by entry, row softmax, hardmax."""
    if name in ("linear", "h1"):
        return G
    if name == "h2":
        return (G * G - 1.0) / _SQRT2
    if name == "h3":
        return (G * G * G - 3.0 * G) / _SQRT6
    if name == "softmax":
        return torch.softmax(beta * G, dim=-1)
    if name == "hardmax":
        return torch.nn.functional.one_hot(torch.argmax(G, dim=-1), G.shape[-1]).to(G.dtype)
    raise ValueError(f"no PyTorch kernel for link {name!r}")


def _vjp(name: str, beta: float, G: torch.Tensor, r: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Σ r ∂F/∂G of ``Link.vjp`` (y = F(G))."""
    if name in ("linear", "h1"):
        return r
    if name == "h2":
        return r * (_SQRT2 * G)
    if name == "h3":
        return r * ((3.0 * G * G - 3.0) / _SQRT6)
    if name == "softmax":
        return beta * y * (r - torch.sum(r * y, dim=-1, keepdim=True))
    raise ValueError(f"link {name!r} has no gradient")


def _factored_indices(X, left, right, scale, shift, centered, d):
    """Indices of S = scale · L Rᵀ + shift · I for tokens X (B, T, d): ``model.indices_from_factors``."""
    B, T, _ = X.shape
    flat = X.reshape(B * T, d)
    P = (flat @ left).reshape(B, T, -1)
    Q = P if right is None else (flat @ right).reshape(B, T, -1)
    h = scale * (P @ Q.transpose(1, 2))
    eye = torch.eye(T, dtype=X.dtype, device=X.device)
    if shift:
        h = h + shift * (X @ X.transpose(1, 2))
    if centered:
        trace = scale * torch.sum(left * (left if right is None else right)) + shift * d
        h = h - trace * eye
    return h / math.sqrt(d), P, Q


def sgd_gradients(backend, student, teacher, loss, X: np.ndarray):
    """Batch losses (B,) and the gradients of one online-SGD step of ``student`` (``aimrepro.paper2.sgd``).

    The same formulas as the students' ``indices``/``gradient`` and
    ``MSELoss.student_gradient``: O(B T d r) (tied, untied) or O(B T d²)
    (direct).  Returns numpy arrays.
    """
    device = backend.resolved_device()
    B, T, d = X.shape
    Xt = _tensor(X, backend, device)
    right = None if teacher.right is None else _tensor(teacher.right, backend, device)
    G_teacher, _, _ = _factored_indices(Xt, _tensor(teacher.left, backend, device), right, teacher.scale,
                                        teacher.shift, student.centered, d)
    y_teacher = _link(loss.teacher.name, loss.teacher.beta, G_teacher)
    flat = Xt.reshape(B * T, d)
    eye = torch.eye(T, dtype=Xt.dtype, device=device)
    if student.param == "direct":
        S = _tensor(student.S, backend, device)
        XS = (flat @ S).reshape(B, T, d)
        G = (XS @ Xt.transpose(1, 2) - torch.trace(S) * eye) / math.sqrt(d)
    elif student.param == "tied":
        W = _tensor(student.W, backend, device)
        G, P, _ = _factored_indices(Xt, W, None, 1.0, 0.0, True, d)
    else:
        U, V = _tensor(student.U, backend, device), _tensor(student.V, backend, device)
        G, P, Q = _factored_indices(Xt, U, V, 1.0, 0.0, False, d)
    y = _link(loss.student.name, loss.student.beta, G)
    residual = y - y_teacher
    batch_losses = loss.prefactor * torch.sum(residual * residual, dim=(-2, -1))
    g = 2.0 * loss.prefactor * _vjp(loss.student.name, loss.student.beta, G, residual, y)
    norm = B * math.sqrt(d)
    trace_g = torch.diagonal(g, dim1=1, dim2=2).sum()
    if student.param == "direct":
        grad = flat.T @ (g @ Xt).reshape(B * T, d) - trace_g * torch.eye(d, dtype=Xt.dtype, device=device)
        grads = (grad / norm,)
    elif student.param == "tied":
        grad = flat.T @ ((g + g.transpose(1, 2)) @ P).reshape(B * T, -1) - 2.0 * trace_g * W
        grads = (grad / norm,)
    else:
        grads = (flat.T @ (g @ Q).reshape(B * T, -1) / norm,
                 flat.T @ (g.transpose(1, 2) @ P).reshape(B * T, -1) / norm)
    return _numpy(batch_losses), tuple(_numpy(grad) for grad in grads)
