"""Full-batch gradient descent (Adam) on the tied attention student (``docs/paper1.md`` §6).

Student and teacher have the same architecture (the paper's GD experiment):
S = W Wᵀ/√(r d), W ∈ R^{d×r}, with the teacher's width r, indices
h_ab = (x_aᵀ S x_b − δ_ab Tr S)/√d and the row softmax ŷ = softmax(β h),
β taken from the data.  The loss is the paper's

    L(W) = Σ_μ Σ_ab (ŷ_μ,ab − y_μ,ab)² / d            (full batch, no 1/n),

minimised by Adam (PyTorch's update and defaults β₁ = 0.9, β₂ = 0.999,
ε = 1e−8; the paper: lr 0.1, 1000 steps, W₀ entries N(0, 1), so that S₀ is a
draw from the prior).  K students from K initialisations are trained at once
along a leading *replica* axis, W of shape (K, d, r).

* **Single GD** (the paper's '+'): each replica is one GD run; its error is
  ‖S_k − S*‖²_F/d.
* **Averaged GD** ('x'): the error ‖S̄ − S*‖²_F/d of the mean S̄ = (1/K) Σ_k S_k
  of the students (an approximation of the posterior mean).  If the students
  were posterior samples, the Nishimori identity would give single ≈ 2 MMSE
  and averaged ≈ (1 + 1/K) MMSE (``docs/paper1.md`` §6, §8.6).

Gradient (by contraction with the factor; no per-sample d×d matrix)
--------------------------------------------------------------------
With P = X W (n, T, r), s = 1/√(r d²) (so h_ab = s (P_a·P_b − δ_ab ‖W‖²_F)),
G = ∂L/∂ŷ = 2(ŷ − y)/d and the softmax backward
g_ab = ∂L/∂h_ab = β ŷ_ab (G_ab − Σ_c ŷ_ac G_ac):

    ∇_W L = s [ Xᵀ Q − 2 (Σ_μ tr g_μ) W ],    Q_a = Σ_b (g_ab + g_ba) P_b,

where Xᵀ Q contracts the flattened samples, (nT × d)ᵀ(nT × r).  Per step and
replica: two GEMMs of O(n T d r), the pair products O(n T² r), the softmax
O(n T²), Adam O(d r); memory O(n T r) per replica (plus the shared tokens
O(n T d)).

Bit-for-bit batching, blocks and threads
----------------------------------------
Every operation acts on one replica's numbers only, in an order that does
not depend on how many replicas are processed together: the GEMMs are one
BLAS call per replica (``np.matmul`` over the leading axis with the same
operand shapes as a single run), the per-sample T×T products one small
product per sample, reductions run along a contiguous axis of one replica
or column by column over T, everything else is elementwise.  A batched run
therefore gives exactly the bits of K separate runs with the same initial
factors, for any block size (tested).

The K students are split into blocks of ``chunk`` students
(:func:`replica_chunk`), and ``threads`` blocks run at once on a thread
pool (numpy releases the GIL in BLAS and in its loops); results are
gathered in block order.  The whole run holds numpy's BLAS at one thread
(:func:`aimrepro.backends.single_threaded`, threadpoolctl), whatever
``OMP_NUM_THREADS`` said when numpy loaded: multi-threaded OpenBLAS splits
a long inner dimension (nT in the backward GEMM) between threads and sums
in another order, 1e-14 apart at d = 100.  With one thread per BLAS call
and per-replica arithmetic, the same config gives the same bits with any
number of threads and any block size (tested, also through Snakemake).
Memory per step: O(threads · chunk · n T r).

Stacking the students of a block into one (nT × d)(d × k r) GEMM would
leave each column's summation order to the BLAS library (a function of the
stacked width) and, measured in CPU time, saves 10–15 % of the GEMM time at
the paper's size while the (n, T, k, r) layout it imposes makes the
per-sample work slower than it saves (twice slower at the quick size;
``docs/benchmarks.md``, "Paper 1: gradient descent").  It is not used.

Precision
---------
The block kernel computes in the backend's float type
(:class:`aimrepro.backends.Backend`, config ``backend.dtype.gd``).  With
float32 the forward and backward pass (the two GEMMs, the pair products,
the softmax) run in single precision, as the paper's PyTorch code did;
the tokens lose nothing (datasets store them as float32), the labels are
rounded once.  What accumulates or is reported stays float64: the factors
and Adam's moments (the update adds steps of relative size lr/|W|, and
the float32 gradient enters a float64 state), ‖W_k‖²_F (the diagonal
index subtracts it) and the losses (summed in float64), and every error
and generalisation error, computed from the float64 factors after the
run.  One BLAS call per replica on one thread keeps the bits a function
of the config in either type (tested); float32 and float64 runs of one
seed start from the same factors and see the same data.

Divergence
----------
A replica whose loss or gradient is not finite, or whose trace Tr S/d grows
beyond :data:`DIVERGENCE_TRACE_FACTOR` times the prior's √(r/d), is marked
diverged at that step and frozen (no further updates); its loss curve is NaN
from there.  Diverged replicas never enter the averaged student silently:
:class:`GDRun` averages the finished ones and says how many diverged.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from aimrepro.backends import make_backend, single_threaded
from aimrepro.paper1.data import Dataset, DatasetSpec, dataset_seed, training_arrays, write_npz
from aimrepro.model import apply_link, indices, indices_from_factor

__all__ = [
    "ADAM_DEFAULTS",
    "AveragedTrendPoint",
    "averaged_trend_point",
    "DIVERGENCE_TRACE_FACTOR",
    "averaged_error",
    "averaged_matrix",
    "GDResult",
    "GDRun",
    "GDSettings",
    "initial_factors",
    "load_run_summary",
    "loss_and_gradient",
    "replica_chunk",
    "run_on_dataset",
    "save_run",
    "single_errors",
    "student_seeds",
    "summary_table",
    "train_students",
]

#: PyTorch's Adam defaults, which the paper's script uses (``docs/paper1.md`` §6).
ADAM_DEFAULTS = {"adam_beta1": 0.9, "adam_beta2": 0.999, "adam_eps": 1e-8}

#: A replica has diverged once Tr S/d exceeds this multiple of the prior's E Tr S/d = √(r/d).
DIVERGENCE_TRACE_FACTOR = 1e3

#: Default bound on the floats of the largest working arrays of the blocks computed at once
#: (threads · K_block · n T r): 200 MB.
CHUNK_ENTRIES = 25_000_000

#: Entries of one block of the Adam update (per array): 256 KB, so that its dozen passes stay in cache.
ADAM_CHUNK_ENTRIES = 2**15

#: Spawn-key tag of the students' initialisations under a dataset's seed sequence
#: (the dataset itself uses the children 0, 1, 2: teacher, training, test set).
_STUDENT_STREAM = 3

STATUSES = ("finished", "diverged")


# ---------------------------------------------------------------------------
# settings and initialisation


@dataclass(frozen=True)
class GDSettings:
    """Optimiser settings (``docs/paper1.md`` §6: lr 0.1, 1000 steps, init scale 1).

    Parameters
    ----------
    lr : Adam step size, finite > 0
    steps : number of full-batch Adam steps, integer >= 1
    init_scale : standard deviation of the initial factor entries, finite > 0
    adam_beta1, adam_beta2 : moment decay rates in [0, 1)
    adam_eps : Adam's ε, finite > 0
    trace_every : record the estimation errors every this many steps (0: never)
    """

    lr: float = 0.1
    steps: int = 1000
    init_scale: float = 1.0
    adam_beta1: float = ADAM_DEFAULTS["adam_beta1"]
    adam_beta2: float = ADAM_DEFAULTS["adam_beta2"]
    adam_eps: float = ADAM_DEFAULTS["adam_eps"]
    trace_every: int = 50

    def __post_init__(self):
        for name in ("lr", "init_scale", "adam_eps"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float, np.floating)) and math.isfinite(value) and value > 0):
                raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
        for name in ("adam_beta1", "adam_beta2"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float, np.floating)) and 0.0 <= value < 1.0):
                raise ValueError(f"{name} must lie in [0, 1), got {value!r}")
        if not (isinstance(self.steps, (int, np.integer)) and self.steps >= 1):
            raise ValueError(f"steps must be an integer >= 1, got {self.steps!r}")
        if not (isinstance(self.trace_every, (int, np.integer)) and self.trace_every >= 0):
            raise ValueError(f"trace_every must be an integer >= 0, got {self.trace_every!r}")

    def to_dict(self) -> dict:
        return {"lr": float(self.lr), "steps": int(self.steps), "init_scale": float(self.init_scale),
                "adam_beta1": float(self.adam_beta1), "adam_beta2": float(self.adam_beta2),
                "adam_eps": float(self.adam_eps), "trace_every": int(self.trace_every)}


def _check_count(name: str, value, minimum: int = 1) -> None:
    if not (isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value >= minimum):
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")


def student_seeds(base_seed: int, spec: DatasetSpec, n_inits: int) -> list[np.random.SeedSequence]:
    """Seed sequences of the K students trained on one dataset, one per replica.

    Replica k uses the child (3, k) of the dataset's own seed sequence
    (:func:`aimrepro.paper1.data.dataset_seed`, whose children 0–2 draw the teacher
    and the data), so its initialisation depends on (base seed, dataset, k)
    only: not on K, the optimiser settings or the other replicas.  A run with
    K students and K runs with one student each start from the same factors.
    """
    _check_count("n_inits", n_inits)
    root = dataset_seed(base_seed, spec)
    return [np.random.SeedSequence(root.entropy, spawn_key=(*root.spawn_key, _STUDENT_STREAM, k))
            for k in range(n_inits)]


def initial_factors(d: int, width: int, seeds: Sequence, init_scale: float = 1.0) -> np.ndarray:
    """W₀ of K students, (K, d, width), entries i.i.d. N(0, init_scale²), replica k from ``seeds[k]``.

    ``seeds`` are anything ``np.random.default_rng`` accepts (SeedSequences,
    integers); each replica draws from its own generator.
    """
    _check_count("d", d, 2)
    _check_count("width", width)
    if len(seeds) < 1:
        raise ValueError(f"the number of initialisations must be >= 1, got {len(seeds)} seeds")
    if not (math.isfinite(init_scale) and init_scale > 0):
        raise ValueError(f"init_scale must be a finite number > 0, got {init_scale!r}")
    return np.stack([init_scale * np.random.default_rng(s).standard_normal((d, width)) for s in seeds])


def replica_chunk(n: int, T: int, width: int, n_replicas: int, max_entries: int = CHUNK_ENTRIES) -> int:
    """Students per block: K_block · n T r <= max_entries (at least 1), the K students in equal blocks.

    With at most c = max_entries // (n T r) students per block, K splits
    into ⌈K/c⌉ blocks of ⌈K/⌈K/c⌉⌉ students (the last may be smaller).  A
    run with ``threads`` threads uses max_entries = CHUNK_ENTRIES // threads,
    so that the blocks computed at once stay within CHUNK_ENTRIES; the
    numbers do not depend on the blocks (module notes).
    """
    cap = max(1, max_entries // max(1, n * T * width))
    n_blocks = -(-n_replicas // cap)
    return int(max(1, -(-n_replicas // max(1, n_blocks))))


# ---------------------------------------------------------------------------
# loss and gradient


def _check_beta(beta):
    if not (isinstance(beta, (int, float, np.floating)) and math.isfinite(beta) and beta > 0):
        raise ValueError(f"beta must be a finite number > 0, got {beta!r}")
    return float(beta)


def _row_max(A: np.ndarray) -> np.ndarray:
    """max over the last (short, T-long) axis, keepdims, as T − 1 elementwise maxima.

    numpy's reduction over an axis of length T pays a per-row overhead (9×
    slower at T = 6); the column loop is also plainly in a fixed order.
    """
    out = A[..., :1].copy()
    for b in range(1, A.shape[-1]):
        np.maximum(out, A[..., b:b + 1], out=out)
    return out


def _row_sum(A: np.ndarray) -> np.ndarray:
    """Sum over the last (short) axis, keepdims, as ((A_0 + A_1) + A_2) + …: see :func:`_row_max`."""
    out = A[..., :1].copy()
    for b in range(1, A.shape[-1]):
        out += A[..., b:b + 1]
    return out


def _forward(W: np.ndarray, X_flat: np.ndarray, n: int, T: int, y: np.ndarray, beta: float):
    """Loss per replica and what the backward pass needs: (K, d, r) → loss (K,), cache.

    The arithmetic is in the float type of W, X_flat and y (all three the
    same); ‖W_k‖²_F and the loss are summed in float64 whatever it is.  No
    argument checks.  O(K n T d r) (one GEMM per replica) + O(K n T² r).
    """
    K, d, r = W.shape
    s = 1.0 / (math.sqrt(r * d) * math.sqrt(d))
    P = np.matmul(X_flat, W).reshape(K, n, T, r)
    # ‖W_k‖²_F = √(r d) Tr S_k, in float64 whatever W's type: the diagonal index P_a·P_a − ‖W‖²
    # cancels (Tr S is √(d/3) times the index's spread), and the divergence test reads it
    W_sq = np.sum(np.square(W.reshape(K, d * r), dtype=np.float64), axis=1)
    h = np.matmul(P, np.swapaxes(P, -1, -2))  # K n small (T × r)(r × T) products
    diagonal = np.arange(T)
    h[:, :, diagonal, diagonal] -= W_sq[:, None, None]
    h *= s
    logits = beta * h
    logits -= _row_max(logits)
    expo = np.exp(logits)
    y_hat = expo / _row_sum(expo)
    residual = y_hat - y
    loss = np.sum(np.square(residual, dtype=np.float64).reshape(K, n * T * T), axis=1) / d
    return loss, (P, y_hat, residual, W_sq, s)


def _backward(W: np.ndarray, X_flat: np.ndarray, cache, beta: float) -> np.ndarray:
    """∇_W L per replica from the forward cache: (K, d, r).  O(K n T d r) + O(K n T² r); no checks."""
    P, y_hat, residual, _, s = cache
    K, n, T, r = P.shape
    d = W.shape[1]
    G = (2.0 / d) * residual
    g = beta * y_hat * (G - _row_sum(y_hat * G))
    sym = g + np.swapaxes(g, -1, -2)
    Q = np.matmul(sym, P)  # K n small (T × T)(T × r) products
    diagonal = np.arange(T)
    trace_g = np.sum(_row_sum(g[:, :, diagonal, diagonal])[..., 0], axis=1)
    grad = np.matmul(X_flat.T, Q.reshape(K, n * T, r))
    grad -= (2.0 * trace_g)[:, None, None] * W
    grad *= s
    return grad


def loss_and_gradient(W, X, y, *, beta: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """The paper's loss and its gradient for K students at once.

    Parameters
    ----------
    W : (K, d, r) student factors (S_k = W_k W_kᵀ/√(r d)); a (d, r) array is one student
    X : (n, T, d) tokens; y : (n, T, T) labels (rows of a softmax)
    beta : softmax inverse temperature, finite > 0

    Returns
    -------
    loss : (K,) Σ_μ ‖ŷ_μ − y_μ‖²_F / d;  gradient : (K, d, r) ∂loss/∂W (module notes).
    For a (d, r) input: a float and a (d, r) array.  O(K n T d r) time.
    """
    X, y = training_arrays(X, y)
    beta = _check_beta(beta)
    W = np.asarray(W, dtype=np.float64)
    single = W.ndim == 2
    W3 = W[None] if single else W
    n, T, d = X.shape
    if W3.ndim != 3 or W3.shape[1] != d or W3.shape[2] < 1 or W3.shape[0] < 1:
        raise ValueError(f"W must have shape (K, {d}, r) or ({d}, r) with K, r >= 1, got {W.shape}")
    W3 = np.ascontiguousarray(W3)
    X_flat = X.reshape(n * T, d)
    with single_threaded():
        loss, cache = _forward(W3, X_flat, n, T, y, beta)
        grad = _backward(W3, X_flat, cache, beta)
    return (float(loss[0]), grad[0]) if single else (loss, grad)


def _block_kernel(backend, X_flat: np.ndarray, y: np.ndarray, n: int, T: int, beta: float):
    """``kernel(W_block, need_grad) -> (loss (k,), ‖W_k‖²_F (k,), gradient (k, d, r) or None)`` on ``backend``.

    The numpy kernel computes in the backend's float type: float32 casts the
    tokens (float32 numbers in every dataset, so exactly) and the labels
    once, and each block's float64 factors at each call (O(k d r)); the
    losses and norms come back in float64 (:func:`_forward`), the gradient
    in the float type, and the caller's Adam state stays float64.
    """
    if not backend.is_numpy:
        from aimrepro.backends import torch_kernels

        return torch_kernels.gd_block_kernel(backend, X_flat, y, n, T, beta)
    float_type = backend.float_type
    X_flat = X_flat.astype(float_type, copy=False)
    y = y.astype(float_type, copy=False)

    # Each thread keeps its last block's forward arrays until its next forward has allocated its
    # own (as a plain loop does): freed at the kernel's end, they let glibc return the heap top to
    # the system and fault it in again every step (measured at the quick size: 1 360 page faults,
    # 2.7 ms of system time per step, as much as the arithmetic).  Memory as before: two blocks'
    # forward arrays per thread at the peak.
    kept = threading.local()

    def kernel(W_block, need_grad):
        # Overflow or 0/0 in a diverging replica is detected by the caller from the results and recorded.
        W_block = W_block.astype(float_type, copy=False)
        with np.errstate(over="ignore", invalid="ignore"):
            loss, kept.cache = _forward(W_block, X_flat, n, T, y, beta)
            grad = _backward(W_block, X_flat, kept.cache, beta) if need_grad else None
        return loss, kept.cache[3], grad

    return kernel


# ---------------------------------------------------------------------------
# training


@dataclass(frozen=True)
class GDResult:
    """Outcome of :func:`train_students` for K replicas.

    Attributes
    ----------
    W : (K, d, r) the final factors (a diverged replica: its factor when the divergence was detected)
    loss_curve : (K, steps + 1) loss of W_t for t = 0..steps (NaN after a divergence)
    status : (K,) ``"finished"`` or ``"diverged"``
    diverged_step : (K,) step at which a replica diverged, −1 if it did not
    trace_steps : (m,) steps at which the errors were traced (empty without a teacher)
    trace_single : (K, m) ‖S_k − S*‖²_F/d at those steps
    trace_averaged : (m,) ‖S̄ − S*‖²_F/d of the finished replicas at those steps
    settings : the :class:`GDSettings` as a dict, with the chunk size used
    """

    W: np.ndarray
    loss_curve: np.ndarray
    status: np.ndarray
    diverged_step: np.ndarray
    trace_steps: np.ndarray
    trace_single: np.ndarray
    trace_averaged: np.ndarray
    settings: dict = field(default_factory=dict)

    @property
    def finished(self) -> np.ndarray:
        return self.status == "finished"

    @property
    def n_diverged(self) -> int:
        return int(np.sum(~self.finished))

    @property
    def final_loss(self) -> np.ndarray:
        """(K,) training loss of the final factors (NaN for diverged replicas)."""
        return self.loss_curve[:, -1]

    def message(self) -> str:
        if self.n_diverged == 0:
            return f"{len(self.status)} replicas finished {self.settings.get('steps')} steps"
        first = int(np.min(self.diverged_step[~self.finished]))
        return f"{self.n_diverged} of {len(self.status)} replicas diverged (first at step {first})"


def _scale(d: int, r: int) -> float:
    return 1.0 / math.sqrt(r * d)


def single_errors(W: np.ndarray, S_true: np.ndarray) -> np.ndarray:
    """‖S_k − S*‖²_F/d for each replica of W (K, d, r): (K,).

    One d×d difference at a time (O(K d² r) time, O(d²) memory): the
    expanded form ‖S_k‖² − 2⟨S_k, S*⟩ + ‖S*‖² would avoid it but cancels
    catastrophically once the error is small, which is where GD ends.
    """
    K, d, r = W.shape
    c = _scale(d, r)
    return np.array([np.sum(np.square(c * (W[k] @ W[k].T) - S_true)) / d for k in range(K)])


def averaged_matrix(W: np.ndarray) -> np.ndarray:
    """S̄ = (1/K) Σ_k W_k W_kᵀ/√(r d) as one GEMM of the concatenated factors (d × K r): O(K d² r), one d×d."""
    K, d, r = W.shape
    stacked = np.ascontiguousarray(np.swapaxes(W, 0, 1)).reshape(d, K * r)
    return (_scale(d, r) / K) * (stacked @ stacked.T)


def averaged_error(W: np.ndarray, S_true: np.ndarray) -> float:
    """‖S̄ − S*‖²_F/d of the mean of the K students (:func:`averaged_matrix`)."""
    return float(np.sum(np.square(averaged_matrix(W) - S_true)) / W.shape[1])


def _rows_index(rows: np.ndarray) -> slice | np.ndarray:
    """Sorted replica indices as a slice when they are contiguous (views, no copies), else as they are."""
    if rows.size and rows[-1] - rows[0] + 1 == rows.size:
        return slice(int(rows[0]), int(rows[-1]) + 1)
    return rows


def _adam_update(W: np.ndarray, m: np.ndarray, v: np.ndarray, grad: np.ndarray, t: int,
                 settings: GDSettings) -> None:
    """Adam step t >= 1 on (W, m, v) in place, as torch.optim.Adam (no weight decay, amsgrad off).

    m ← β₁ m + (1 − β₁) g,  v ← β₂ v + (1 − β₂) g²,
    W ← W − (lr/(1 − β₁ᵗ)) · m/(√v/√(1 − β₂ᵗ) + ε).  Elementwise, O(K d r); no checks.
    """
    b1, b2 = settings.adam_beta1, settings.adam_beta2
    m *= b1
    m += (1.0 - b1) * grad
    v *= b2
    v += (1.0 - b2) * np.square(grad)
    denom = np.sqrt(v)
    denom /= math.sqrt(1.0 - b2 ** t)
    denom += settings.adam_eps
    update = m / denom
    update *= settings.lr / (1.0 - b1 ** t)
    W -= update


def train_students(X, y, W0, settings: GDSettings, *, beta: float = 1.0, S_true: np.ndarray | None = None,
                   chunk: int | None = None, threads: int = 1, backend=None,
                   callback: Callable[[int, np.ndarray], None] | None = None) -> GDResult:
    """Full-batch Adam on the paper's loss for K students at once (module notes).

    Parameters
    ----------
    X : (n, T, d) tokens; y : (n, T, T) softmax labels
    W0 : (K, d, r) initial factors (:func:`initial_factors`); r >= 1 is the student's width
    settings : :class:`GDSettings`
    beta : softmax inverse temperature of the student (that of the data)
    S_true : (d, d) teacher, to trace the estimation errors every ``settings.trace_every`` steps
    chunk : students per block (default :func:`replica_chunk` with CHUNK_ENTRIES // threads); the
        result does not depend on it
    threads : blocks computed at once on a thread pool, each with one BLAS thread; the result does
        not depend on it (module notes)
    backend : where the block kernel runs (:func:`aimrepro.backends.make_backend`: None or "numpy",
        the reference; "torch" or a mapping {name, dtype, device})
    callback : called as ``callback(step, loss)`` after each step with the (K,) losses of W_step

    Returns
    -------
    GDResult
        Time O(steps · K (n T d r + n T² r)), memory O(n T d + threads · chunk · n T r + K d r).
    """
    if not isinstance(settings, GDSettings):
        raise ValueError(f"settings must be a GDSettings, got {type(settings).__name__}")
    X, y = training_arrays(X, y)
    beta = _check_beta(beta)
    W = np.array(W0, dtype=np.float64)  # a copy: updated in place
    n, T, d = X.shape
    if W.ndim != 3 or W.shape[1] != d:
        raise ValueError(f"W0 must have shape (K, {d}, r), got {np.shape(W0)}")
    K, _, r = W.shape
    if K < 1:
        raise ValueError("the number of initialisations (W0.shape[0]) must be >= 1, got 0")
    if r < 1:
        raise ValueError("the student width (W0.shape[2]) must be >= 1, got 0")
    if not np.all(np.isfinite(W)):
        raise ValueError("W0 must be finite")
    if S_true is not None and np.shape(S_true) != (d, d):
        raise ValueError(f"S_true must be ({d}, {d}), got {np.shape(S_true)}")
    _check_count("threads", threads)
    if chunk is None:
        chunk = replica_chunk(n, T, r, K, CHUNK_ENTRIES // threads)
    _check_count("chunk", chunk)
    backend = make_backend(backend)
    with single_threaded(backend):
        return _train(X, y, W, settings, beta, S_true, chunk, threads, backend, callback)


def _train(X, y, W, settings, beta, S_true, chunk, threads, backend, callback) -> GDResult:
    """The loop of :func:`train_students` on checked arguments (BLAS already single-threaded)."""
    n, T, d = X.shape
    K, _, r = W.shape
    X_flat = X.reshape(n * T, d)
    kernel = _block_kernel(backend, X_flat, y, n, T, beta)
    blocks = [(lo, min(K, lo + chunk)) for lo in range(0, K, chunk)]
    adam_chunk = max(1, ADAM_CHUNK_ENTRIES // (d * r))
    # Tr S/d > factor · √(r/d)  ⇔  ‖W‖²_F = √(r d) Tr S > factor · r d
    trace_limit = DIVERGENCE_TRACE_FACTOR * r * d
    m = np.zeros_like(W)
    v = np.zeros_like(W)
    losses = np.full((K, settings.steps + 1), np.nan)
    diverged_step = np.full(K, -1, dtype=np.int64)
    trace_steps, trace_single, trace_averaged = [], [], []

    def record_errors(step):
        if S_true is None or settings.trace_every == 0:
            return
        if step % settings.trace_every and step != settings.steps:
            return
        ok = diverged_step < 0
        trace_steps.append(step)
        trace_single.append(np.where(ok, single_errors(W, S_true), np.nan))
        trace_averaged.append(averaged_error(W[ok], S_true) if ok.any() else math.nan)

    grad = np.zeros_like(W)

    def run_block(block, need_grad):
        lo, hi = block
        W_block = W[lo:hi]
        dead = diverged_step[lo:hi] >= 0
        if dead.any():  # frozen students keep their slot (the block's shape), with zeros in it
            W_block = W_block.copy()
            W_block[dead] = 0.0
        loss, W_sq, block_grad = kernel(W_block, need_grad)
        if need_grad:
            grad[lo:hi] = block_grad
        return loss, W_sq

    pool = ThreadPoolExecutor(max_workers=threads) if threads > 1 and len(blocks) > 1 else None
    try:
        for step in range(settings.steps + 1):
            last = step == settings.steps
            live = [b for b in blocks if np.any(diverged_step[b[0]:b[1]] < 0)]
            if pool is None:
                outcomes = [run_block(b, not last) for b in live]
            else:
                outcomes = list(pool.map(lambda b: run_block(b, not last), live))
            for (lo, hi), (loss, W_sq) in zip(live, outcomes):
                active = diverged_step[lo:hi] < 0
                bad = ~np.isfinite(loss) | (W_sq > trace_limit)
                if not last:
                    bad |= ~np.all(np.isfinite(grad[lo:hi].reshape(hi - lo, -1)), axis=1)
                losses[lo:hi, step] = np.where(active, np.where(bad, np.nan, loss), losses[lo:hi, step])
                diverged_step[lo:hi] = np.where(active & bad, step, diverged_step[lo:hi])
            record_errors(step)
            if not last:
                running = np.flatnonzero(diverged_step < 0)
                # in blocks of replicas that stay in cache: the update is a dozen passes over them
                for start in range(0, running.size, adam_chunk):
                    rows = _rows_index(running[start:start + adam_chunk])
                    if isinstance(rows, slice):  # views: updated in place
                        _adam_update(W[rows], m[rows], v[rows], grad[rows], step + 1, settings)
                    else:
                        W_rows, m_rows, v_rows = W[rows], m[rows], v[rows]
                        _adam_update(W_rows, m_rows, v_rows, grad[rows], step + 1, settings)
                        W[rows], m[rows], v[rows] = W_rows, m_rows, v_rows
            if callback is not None:
                callback(step, losses[:, step])
    finally:
        if pool is not None:
            pool.shutdown()

    status = np.where(diverged_step < 0, "finished", "diverged")
    n_traced = len(trace_steps)
    return GDResult(
        W=W, loss_curve=losses, status=status, diverged_step=diverged_step,
        trace_steps=np.asarray(trace_steps, dtype=np.int64),
        trace_single=np.asarray(trace_single, dtype=float).T.reshape(K, n_traced),
        trace_averaged=np.asarray(trace_averaged, dtype=float),
        settings={**settings.to_dict(), "chunk": int(chunk), "beta": beta, "backend": backend.name,
                  "dtype": backend.dtype})


# ---------------------------------------------------------------------------
# one run on a stored dataset (what the workflow and the CLI call)


def _generalisation_error_of_factor(X_test, y_test, W, beta) -> float:
    """Plug-in test error (``model.plug_in_test_error``) of S = W Wᵀ/√(r d), from the factor: O(n T d r)."""
    d, r = W.shape
    predicted = apply_link(indices_from_factor(X_test, W, _scale(d, r)), "softmax", beta=beta)
    return float(np.mean(np.sum((y_test - predicted) ** 2, axis=(1, 2))))


@dataclass(frozen=True)
class GDRun:
    """K students trained on one dataset, measured against its teacher and its test set.

    Attributes
    ----------
    result : the :class:`GDResult`
    single_errors : (K,) ‖S_k − S*‖²_F/d (NaN for diverged replicas)
    averaged_error : ‖S̄ − S*‖²_F/d of the mean of the *finished* students
    single_generalisation : (K,) plug-in test error of each student (NaN if diverged)
    averaged_generalisation : plug-in test error of S̄
    """

    result: GDResult
    single_errors: np.ndarray
    averaged_error: float
    single_generalisation: np.ndarray
    averaged_generalisation: float

    @property
    def n_inits(self) -> int:
        return int(self.single_errors.size)

    def summary(self) -> dict:
        """Scalars of the run: means over the finished students, the averaged student, counts."""
        ok = self.result.finished
        mean = (lambda a: float(np.mean(a[ok])) if ok.any() else math.nan)
        return {"single_error": mean(self.single_errors), "averaged_error": self.averaged_error,
                "train_loss": mean(self.result.final_loss),
                "generalisation_error": self.averaged_generalisation,
                "single_generalisation_error": mean(self.single_generalisation),
                "n_inits": self.n_inits, "n_diverged": self.result.n_diverged,
                "finished": self.result.n_diverged == 0}

    def diagnostics(self) -> dict:
        """For a provenance sidecar: GD runs a fixed number of steps; it 'converged' unless a replica diverged."""
        curve = self.result.loss_curve
        steps = curve.shape[1] - 1
        tail = max(1, steps // 10)
        ok = self.result.finished
        with np.errstate(invalid="ignore", divide="ignore"):  # a zero loss gives 0/0: reported as NaN
            change = (curve[:, -1 - tail] - curve[:, -1]) / curve[:, -1 - tail]
        return {"converged": self.result.n_diverged == 0, "status": "diverged" if self.result.n_diverged
                else "finished", "message": self.result.message(), "iterations": steps,
                "n_diverged": self.result.n_diverged,
                "final_loss_max": float(np.max(curve[ok, -1])) if ok.any() else math.nan,
                "loss_relative_drop_last_tenth_min": float(np.nanmin(change[ok])) if ok.any()
                and np.isfinite(change[ok]).any() else math.nan,
                **{k: v for k, v in self.summary().items() if k.endswith("error")}}


def run_on_dataset(dataset: Dataset, n_inits: int, settings: GDSettings, *, width: int | None = None,
                   chunk: int | None = None, threads: int = 1, backend=None,
                   callback: Callable[[int, np.ndarray], None] | None = None) -> GDRun:
    """Train K = ``n_inits`` students on a softmax dataset and measure them (``docs/paper1.md`` §6).

    The students have the teacher's width (unless ``width`` says otherwise)
    and the data's β; their initialisations come from :func:`student_seeds`
    (the dataset's base seed and parameters, replica index k).  Errors are
    against the dataset's teacher; generalisation errors are the plug-in
    test errors on its fresh test set.  ``chunk``, ``threads`` and
    ``backend`` as in :func:`train_students`; the whole run, measurements
    included, uses one BLAS thread per block, so its bits do not depend on
    ``threads``.
    """
    with single_threaded(make_backend(backend)):
        return _run_on_dataset(dataset, n_inits, settings, width, chunk, threads, backend, callback)


def _run_on_dataset(dataset, n_inits, settings, width, chunk, threads, backend, callback) -> GDRun:
    spec = dataset.spec
    if spec.link != "softmax":
        raise ValueError(f"GD trains softmax students: the dataset's link must be softmax, got {spec.link!r}")
    _check_count("n_inits", n_inits)
    width = spec.r if width is None else width
    _check_count("width", width)
    W0 = initial_factors(spec.d, width, student_seeds(dataset.base_seed, spec, n_inits), settings.init_scale)
    S_true = dataset.S
    result = train_students(dataset.X, dataset.y, W0, settings, beta=spec.beta, S_true=S_true, chunk=chunk,
                            threads=threads, backend=backend, callback=callback)
    ok = result.finished
    errors = np.full(n_inits, np.nan)
    errors[ok] = single_errors(result.W[ok], S_true)
    X_test = np.asarray(dataset.X_test, dtype=np.float64)
    gen = np.full(n_inits, np.nan)
    for k in np.flatnonzero(ok):
        gen[k] = _generalisation_error_of_factor(X_test, dataset.y_test, result.W[k], spec.beta)
    if ok.any():
        S_bar = averaged_matrix(result.W[ok])
        avg_error = float(np.sum(np.square(S_bar - S_true)) / spec.d)
        predicted = apply_link(indices(X_test, S_bar), "softmax", beta=spec.beta)
        avg_gen = float(np.mean(np.sum((dataset.y_test - predicted) ** 2, axis=(1, 2))))
    else:
        avg_error = avg_gen = math.nan
    return GDRun(result, errors, avg_error, gen, avg_gen)


def save_run(path, run: GDRun) -> None:
    """Write a GD run as ``.npz`` (byte-reproducible): summary scalars, per-replica arrays and curves.

    Of the final students it keeps the mean S̄ of the finished ones (d × d)
    and the first student's factor W_first (d × r), not all K factors:
    K d r floats are 5 MB per run at the paper's size (13 GB for its 2 560
    runs), S̄ and W_first 0.5 MB.
    """
    r = run.result
    summary = run.summary()
    ok = r.finished
    # one BLAS thread, as in the run: a threaded GEMM may round W Wᵀ differently
    with single_threaded():
        S_bar = averaged_matrix(r.W[ok]) if ok.any() else np.full((r.W.shape[1],) * 2, np.nan)
    write_npz(path, {
        **{key: np.float64(summary[key]) for key in ("single_error", "averaged_error", "train_loss",
                                                     "generalisation_error", "single_generalisation_error")},
        "n_diverged": np.int64(r.n_diverged), "single_errors": run.single_errors,
        "single_generalisation": run.single_generalisation, "final_loss": r.final_loss,
        "status": r.status.astype("U8"), "diverged_step": r.diverged_step, "loss_curve": r.loss_curve,
        "trace_steps": r.trace_steps, "trace_single": r.trace_single, "trace_averaged": r.trace_averaged,
        "S_bar": S_bar, "W_first": r.W[0]})


def load_run_summary(path) -> dict:
    """What a summary needs from a run written by :func:`save_run`."""
    with np.load(path, allow_pickle=False) as archive:
        return {"single_errors": archive["single_errors"].astype(float),
                "single_generalisation": archive["single_generalisation"].astype(float),
                "final_loss": archive["final_loss"].astype(float),
                "averaged_error": float(archive["averaged_error"]),
                "generalisation_error": float(archive["generalisation_error"]),
                "n_diverged": int(archive["n_diverged"])}


# ---------------------------------------------------------------------------
# many runs at one (T, rho, d, K): mean and spread per alpha


def _mean_std(values) -> tuple[float, float]:
    values = np.asarray(values, dtype=float)
    if values.size == 0:
        return math.nan, math.nan
    return float(values.mean()), float(values.std(ddof=1)) if values.size > 1 else 0.0


def summary_table(T: int, rho: float, alphas, runs, *, beta: float = 1.0) -> dict:
    """Mean ± std over draws per α of single and averaged GD, diverged replicas apart, with the SE error.

    Parameters
    ----------
    T, rho, beta : the softmax problem of the runs
    alphas : (k,) sample ratios
    runs : k lists of run summaries (:func:`load_run_summary`), one per draw

    Returns
    -------
    dict of equal-length columns:

    ``alpha``, ``alphaT`` (= α (T² + T − 2)), ``n_runs`` (draws), ``n_inits`` (students per draw),
    ``n_clean`` (draws with no diverged student), ``n_diverged`` (diverged students, all draws);
    ``single_mean``/``single_std``: over every finished student of every draw (each one
    is a single GD run; the std includes the spread over draws and initialisations);
    ``averaged_mean``/``averaged_std``: over the clean draws; ``averaged_unclean_mean``:
    mean averaged error of the draws where some student diverged (their S̄ averages fewer
    students: drawn apart, never mixed in; NaN if none); ``averaged_max``, ``single_max``:
    the largest errors; ``train_loss_mean``, ``gen_single_mean``, ``gen_averaged_mean``;
    ``se_mmse``: the Bayes-optimal error of the softmax state evolution at (α, T, ρ).
    Std with ddof = 1 (0 for one value).
    """
    from aimrepro.paper1.channels import make_channel
    from aimrepro.paper1.thresholds import n_softmax_measurements
    from aimrepro.paper1.state_evolution import se_curve

    alphas = np.asarray(alphas, dtype=float)
    if len(runs) != alphas.size:
        raise ValueError(f"runs must hold one list per alpha: {len(runs)} lists for {alphas.size} alphas")
    names = ("n_runs", "n_inits", "n_clean", "n_diverged", "single_mean", "single_std", "single_max",
             "averaged_mean", "averaged_std", "averaged_max", "averaged_unclean_mean", "train_loss_mean",
             "gen_single_mean", "gen_averaged_mean")
    columns = {name: [] for name in names}
    for per_alpha in runs:
        clean = [r for r in per_alpha if r["n_diverged"] == 0]
        unclean = [r for r in per_alpha if r["n_diverged"] > 0 and math.isfinite(r["averaged_error"])]
        singles = np.concatenate([r["single_errors"] for r in per_alpha]) if per_alpha else np.zeros(0)
        finite = np.isfinite(singles)
        columns["n_runs"].append(len(per_alpha))
        columns["n_inits"].append(max((r["single_errors"].size for r in per_alpha), default=0))
        columns["n_clean"].append(len(clean))
        columns["n_diverged"].append(sum(r["n_diverged"] for r in per_alpha))
        mean, std = _mean_std(singles[finite])
        columns["single_mean"].append(mean)
        columns["single_std"].append(std)
        columns["single_max"].append(float(np.max(singles[finite])) if finite.any() else math.nan)
        mean, std = _mean_std([r["averaged_error"] for r in clean])
        columns["averaged_mean"].append(mean)
        columns["averaged_std"].append(std)
        averaged = [r["averaged_error"] for r in per_alpha if math.isfinite(r["averaged_error"])]
        columns["averaged_max"].append(max(averaged) if averaged else math.nan)
        columns["averaged_unclean_mean"].append(_mean_std([r["averaged_error"] for r in unclean])[0])
        losses = np.concatenate([r["final_loss"] for r in per_alpha]) if per_alpha else np.zeros(0)
        columns["train_loss_mean"].append(_mean_std(losses[np.isfinite(losses)])[0])
        gens = np.concatenate([r["single_generalisation"] for r in per_alpha]) if per_alpha else np.zeros(0)
        columns["gen_single_mean"].append(_mean_std(gens[np.isfinite(gens)])[0])
        columns["gen_averaged_mean"].append(_mean_std([r["generalisation_error"] for r in clean])[0])
    channel = make_channel("softmax", T=T, beta=beta)
    se = np.array([p.mmse for p in se_curve(channel, alphas, rho)]) if alphas.size else np.zeros(0)
    table = {"alpha": alphas, "alphaT": alphas * n_softmax_measurements(T)}
    for name, values in columns.items():
        table[name] = np.asarray(values, dtype=np.int64 if name.startswith("n_") else float)
    table["se_mmse"] = se
    return table


# ---------------------------------------------------------------------------
# the trend point of the claims and of Figure 2: the mean of K against the SE at one d


@dataclass(frozen=True)
class AveragedTrendPoint:
    """The excess of the mean of K students over (1 + 1/K) SE at one d (``docs/paper1.md`` §8.6).

    ``estimate`` ± ``sem`` over ``n`` GD draws; with GAMP-RIE on the same
    datasets (``n_amp`` > 0 draws) it is the control-variate mean of
    :func:`aimrepro.numerics.stats.control_variate_mean` (expectation
    unchanged), and ``paired_*`` (GD − (1 + 1/K) AMP on the same draws) and
    ``amp_*`` (AMP − SE) say what it is made of.  ``plain_sem`` is the error of
    the mean of GD alone, for comparison.
    """

    d: int
    estimate: float
    sem: float
    n: int
    n_amp: int
    plain_sem: float
    paired_mean: float = math.nan
    paired_sem: float = math.nan
    amp_mean: float = math.nan
    amp_sem: float = math.nan


def averaged_trend_point(d: int, gd_runs: Sequence[dict], amp_runs: Sequence[dict], se_value: float,
                         K: int) -> AveragedTrendPoint:
    """The trend point of one d from its GD run summaries and (optionally) AMP run summaries.

    ``gd_runs[i]`` and ``amp_runs[i]`` share draw i's dataset for i < len(gd_runs)
    (``amp_runs`` may hold more draws, or none).  A GD draw in which a
    student diverged is left out; an AMP run that is not usable
    (:data:`aimrepro.paper1.amp.USABLE_STATUSES`) leaves its draw out of
    the pairs and of the AMP mean.
    """
    from aimrepro.numerics.stats import control_variate_mean, mean_and_sem
    from aimrepro.paper1.amp import USABLE_STATUSES

    c = 1.0 + 1.0 / K
    clean = [i for i, run in enumerate(gd_runs) if run["n_diverged"] == 0]
    excess = {i: float(gd_runs[i]["averaged_error"]) - c * se_value for i in clean}
    plain_mean, plain_sem, n_plain = mean_and_sem(list(excess.values()))
    if not amp_runs:
        return AveragedTrendPoint(int(d), plain_mean, plain_sem, n_plain, 0, plain_sem)
    amp = [float(run["error"]) - se_value if run["status"] in USABLE_STATUSES else math.nan for run in amp_runs]
    pairs = [(excess[i], amp[i]) for i in clean if i < len(amp) and math.isfinite(amp[i])]
    usable = [a for a in amp if math.isfinite(a)]
    estimate, sem, n = control_variate_mean([g for g, _ in pairs], [a for _, a in pairs], usable, c)
    paired_mean, paired_sem, _ = mean_and_sem([g - c * a for g, a in pairs])
    amp_mean, amp_sem, m = mean_and_sem(usable)
    return AveragedTrendPoint(int(d), estimate, sem, n, m, plain_sem, paired_mean, paired_sem, amp_mean, amp_sem)
