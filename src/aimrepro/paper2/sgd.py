"""Online SGD of attention-indexed models for direct, tied and untied attention (``docs/paper2.md`` §2).

One engine trains a student index S₁ against a fixed teacher S₂ on fresh
Gaussian tokens (or tokens of another law with mean 0 and variance 1,
``ProblemSpec.tokens``, ``docs/paper2.md`` §10), with the teacher–student loss of :mod:`.losses`, for three
parametrisations of the student:

``direct``  S ∈ R^{d×d} itself, centered index ([P App. E, eq. 395]);
``tied``    S = W Wᵀ, W ∈ R^{d×r}, centered index ([P §3.1, eq. 7]);
``untied``  S = U Vᵀ, U, V ∈ R^{d×r}, uncentered index ([P §4.1, eq. 25]).

Each step draws a minibatch of B sequences X (B, T, d), and updates

    θ ← θ − α (∇_θ (1/B) Σ_n ℒ(G(x_n)) + (γ/d) θ),

which is the paper's online SGD with B samples per step: a minibatch of B
at step size α is B online steps at per-sample rate α/B (``docs/paper2.md`` §2.4).

Time variables (``docs/paper2.md`` §2; [P eqs. 9, 28, 396]): one step advances the
paper's time by

    tied: 4α/d,   direct: α/d,   untied (slow time τ): α/d,

reported as ``t_ode``; the untied fast time is ``t_fast`` = nα.  Samples
seen are ``n_samples`` = B·``n_steps``.

Gradients are contractions of the tokens with the factors (``docs/paper2.md`` §7);
no per-sample d×d matrix is formed.  With g = ∂ℒ/∂G (B, T, T), P = X W:

    tied:    ∇_W = [Xᵀ((g + gᵀ) P) − 2 Σ_n tr(g_n) W]/(B√d)            O(B T d r)
    untied:  ∇_U = Xᵀ(g Q)/(B√d), ∇_V = Xᵀ(gᵀ P)/(B√d), Q = X V       O(B T d r)
    direct:  ∇_S = [Xᵀ(g X) − Σ_n tr(g_n) I]/(B√d)                      O(B T d²)

where Xᵀ(·) contracts the flattened batch (B T × d)ᵀ(B T × r).

Blow-up (``docs/paper2.md`` §2.4, §8.6: h₃ runs are stiff) stops the run and is
recorded, never plotted as data: a non-finite batch loss or gradient, or a
batch loss above ``max_loss``.

Precision
---------
The contractions with the tokens (the teacher's and the student's indices,
the gradients' Xᵀ(·)) run in the float type of the batch X: float64, or
float32 when the backend says so (config ``backend.dtype.sgd``), the
batch then drawn in float64 as always and cast, so that both types of one
seed see the same tokens.  The parameters stay float64 (an update moves
them by a relative lr/d or less, 10⁴–10⁶ times), as do Tr S and ‖W‖²_F
subtracted by the centred index, the links and the loss on the (B, T, T)
indices (O(B T²)), and the recorded order parameters and batch losses.
"""

from __future__ import annotations

import hashlib
import logging
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from aimrepro.backends import make_backend
from aimrepro.model import GAUSSIAN, TokenLaw
from aimrepro.paper2.losses import MSELoss, make_link
from aimrepro.paper2.matrices import DenseMatrix, FactoredMatrix, trace_products
from aimrepro.paper2.trajectory import ORDER_NAMES, OrderParameters, Trajectory

__all__ = [
    "NORMALISATIONS",
    "PARAMETRISATIONS",
    "STOP_MEASURES",
    "TIME_FACTOR",
    "DirectStudent",
    "ProblemSpec",
    "SGDRun",
    "SGDSettings",
    "TiedStudent",
    "UntiedStudent",
    "derive_seed",
    "fast_slow_record_times",
    "initial_problem",
    "make_student",
    "make_teacher",
    "run_sgd",
    "step_time",
]

logger = logging.getLogger(__name__)

PARAMETRISATIONS = ("direct", "tied", "untied")
#: How teacher and student are scaled (``docs/paper2.md`` §1, "Teacher and student scalings").
NORMALISATIONS = ("unit_variance", "aim")
#: Overlaps a run can stop on (:class:`SGDSettings`).
STOP_MEASURES = ("overlap_ratio", "symmetric_overlap")
#: t_ode per step = TIME_FACTOR · α/d (``docs/paper2.md`` §2).
TIME_FACTOR = {"tied": 4.0, "direct": 1.0, "untied": 1.0}


def step_time(param: str, lr: float, d: int) -> float:
    """Paper time advanced by one SGD step: 4α/d (tied), α/d (direct; untied slow time)."""
    if param not in TIME_FACTOR:
        raise ValueError(f"param must be one of {PARAMETRISATIONS}, got {param!r}")
    return TIME_FACTOR[param] * lr / d


def fast_slow_record_times(horizon: float, n_records: int, d: int, *,
                           fast_horizon: float = 0.0, n_fast: int = 0) -> np.ndarray:
    """Record times (``t_ode``) of an untied run: a slow grid and a fast one.

    n_records on τ ∈ [0, horizon] and n_fast on the fast time t = τ d ∈
    [0, fast_horizon] (capped at the horizon).  The fast records (t = τ d, [P eq. 34]) resolve the mean's boundary layer,
    which lasts τ = O(1/d); the slow ones the moments' motion ([P eq. 35]).
    Sorted, without duplicates.
    """
    if not (math.isfinite(horizon) and horizon > 0):
        raise ValueError(f"horizon must be a finite number > 0, got {horizon}")
    if not (isinstance(n_records, (int, np.integer)) and n_records >= 2):
        raise ValueError(f"n_records must be an integer >= 2, got {n_records!r}")
    if not (isinstance(n_fast, (int, np.integer)) and n_fast >= 0):
        raise ValueError(f"n_fast must be an integer >= 0, got {n_fast!r}")
    if not (math.isfinite(fast_horizon) and fast_horizon >= 0):
        raise ValueError(f"fast_horizon must be a finite number >= 0, got {fast_horizon}")
    times = np.linspace(0.0, horizon, n_records)
    if n_fast:
        fast = np.linspace(0.0, min(fast_horizon / d, horizon), n_fast)
        times = np.union1d(times, fast)
    return times


def derive_seed(seed: int, *keys) -> int:
    """A 63-bit seed from a base seed and job keys (docs/design.md, "Determinism").

    Stable across runs and platforms (sha256 of the keys' ``repr``), so that
    adding a grid point never changes another point's random numbers.
    """
    digest = hashlib.sha256(repr((int(seed), *keys)).encode()).digest()
    return int.from_bytes(digest[:8], "little") >> 1


# ---------------------------------------------------------------------------
# Students: parameters, indices, gradients
# ---------------------------------------------------------------------------


class DirectStudent:
    """Direct S ∈ R^{d×d} with the centered index ([P eq. 396])."""

    param = "direct"
    centered = True

    def __init__(self, S: np.ndarray) -> None:
        self.S = np.array(S, dtype=float)

    @property
    def d(self) -> int:
        return self.S.shape[0]

    def matrix(self) -> DenseMatrix:
        return DenseMatrix(self.S)

    def indices(self, X: np.ndarray) -> np.ndarray:
        """O(B T d²), in the float type of X (module notes, "Precision")."""
        return self.matrix().indices(X, centered=True, dtype=X.dtype)

    def gradient(self, X: np.ndarray, g: np.ndarray) -> tuple[np.ndarray, ...]:
        """∇_S of the batch-mean loss: [Xᵀ(g X) − Σ tr(g) I]/(B√d), O(B T d²), in the float type of X."""
        B, T, d = X.shape
        g = g.astype(X.dtype, copy=False)
        gX = np.matmul(g, X).reshape(B * T, d)
        grad = X.reshape(B * T, d).T @ gX
        grad[np.diag_indices(d)] -= np.trace(g, axis1=1, axis2=2).sum()
        return (grad / (B * math.sqrt(d)),)

    def parameters(self) -> tuple[np.ndarray, ...]:
        return (self.S,)

    def extra_traces(self) -> dict[str, float]:
        return {}


class TiedStudent:
    """Tied S = W Wᵀ, W ∈ R^{d×r}, centered index ([P eqs. 7, 113])."""

    param = "tied"
    centered = True

    def __init__(self, W: np.ndarray) -> None:
        self.W = np.array(W, dtype=float)

    @property
    def d(self) -> int:
        return self.W.shape[0]

    def matrix(self) -> FactoredMatrix:
        return FactoredMatrix(self.W)

    def indices(self, X: np.ndarray) -> np.ndarray:
        """O(B T d r), in the float type of X; ‖W‖²_F, which the diagonal subtracts, from the float64 W."""
        self._W = self.W.astype(X.dtype, copy=False)
        self._P = (X.reshape(-1, self.d) @ self._W).reshape(X.shape[0], X.shape[1], -1)
        h = np.matmul(self._P, np.swapaxes(self._P, 1, 2))
        T = X.shape[1]
        h[:, np.arange(T), np.arange(T)] -= np.sum(self.W * self.W)
        return h / math.sqrt(self.d)

    def gradient(self, X: np.ndarray, g: np.ndarray) -> tuple[np.ndarray, ...]:
        """∇_W = [Xᵀ((g + gᵀ) P) − 2 Σ tr(g) W]/(B√d), P = X W from :meth:`indices`; O(B T d r), type of X."""
        B, T, d = X.shape
        g = g.astype(X.dtype, copy=False)
        sym = g + np.swapaxes(g, 1, 2)
        grad = X.reshape(B * T, d).T @ np.matmul(sym, self._P).reshape(B * T, -1)
        grad -= 2.0 * np.trace(g, axis1=1, axis2=2).sum() * self._W
        return (grad / (B * math.sqrt(d)),)

    def parameters(self) -> tuple[np.ndarray, ...]:
        return (self.W,)

    def extra_traces(self) -> dict[str, float]:
        return {}


class UntiedStudent:
    """Untied S = U Vᵀ, U, V ∈ R^{d×r}, uncentered index ([P eqs. 24–25])."""

    param = "untied"
    centered = False

    def __init__(self, U: np.ndarray, V: np.ndarray) -> None:
        self.U = np.array(U, dtype=float)
        self.V = np.array(V, dtype=float)
        if self.U.shape != self.V.shape:
            raise ValueError(f"U and V must have equal shapes, got {self.U.shape}, {self.V.shape}")

    @property
    def d(self) -> int:
        return self.U.shape[0]

    def matrix(self) -> FactoredMatrix:
        return FactoredMatrix(self.U, self.V)

    def indices(self, X: np.ndarray) -> np.ndarray:
        """G_ab = ⟨x_a U, x_b V⟩/√d; O(B T d r), in the float type of X."""
        B, T, d = X.shape
        flat = X.reshape(B * T, d)
        self._P = (flat @ self.U.astype(X.dtype, copy=False)).reshape(B, T, -1)
        self._Q = (flat @ self.V.astype(X.dtype, copy=False)).reshape(B, T, -1)
        return np.matmul(self._P, np.swapaxes(self._Q, 1, 2)) / math.sqrt(d)

    def gradient(self, X: np.ndarray, g: np.ndarray) -> tuple[np.ndarray, ...]:
        """∇_U = Xᵀ(g Q)/(B√d), ∇_V = Xᵀ(gᵀ P)/(B√d); O(B T d r), in the float type of X."""
        B, T, d = X.shape
        g = g.astype(X.dtype, copy=False)
        flat_t = X.reshape(B * T, d).T
        grad_U = flat_t @ np.matmul(g, self._Q).reshape(B * T, -1)
        grad_V = flat_t @ np.matmul(np.swapaxes(g, 1, 2), self._P).reshape(B * T, -1)
        norm = B * math.sqrt(d)
        return grad_U / norm, grad_V / norm

    def parameters(self) -> tuple[np.ndarray, ...]:
        return self.U, self.V

    def extra_traces(self) -> dict[str, float]:
        """t^A = ‖U‖²/d, t^B = ‖V‖²/d ([P §4.1])."""
        return {"tA": float(np.sum(self.U * self.U) / self.d),
                "tB": float(np.sum(self.V * self.V) / self.d)}


Student = DirectStudent | TiedStudent | UntiedStudent


# ---------------------------------------------------------------------------
# Problem set-up: teacher, student, seeds
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ProblemSpec:
    """A teacher–student problem of paper 2: parametrisation, link, sizes and scalings.

    Parameters
    ----------
    param : {"direct", "tied", "untied"}
    link : str
        Student link (:data:`aimrepro.paper2.losses.LINK_NAMES`); also the
        teacher's unless ``teacher_link`` is given.
    T, d : int
        Tokens per sequence and dimension.
    rho : float
        Teacher width ratio r*/d.
    student_rho : float or None
        Width ratio of the student's factors (tied, untied); default ``rho``.
    beta : float
        Softmax inverse temperature (student and teacher).
    teacher_link : str or None
    normalisation : {"unit_variance", "aim"}
        ``unit_variance``: teacher and student scaled so that their diagonal
        index has variance (Ω + Ψ)_kk = 1 exactly at this d (needed for h₃ to
        have information exponent 3, ``docs/paper2.md`` §1); ``aim``: the AIM
        scalings S* = W*W*ᵀ/√(r d), W ~ N(0, 1/√(r d)) (``docs/paper2.md`` §1).
    init_scale, init_scale_v : float
        Direct student entries N(0, s²/d) with s = ``init_scale``; untied
        student U ~ N(0, s_U²/d), V ~ N(0, s_V²/d) with s_U = ``init_scale``,
        s_V = ``init_scale_v`` (unequal: [P Ass. 4.4]).
    teacher_mean : float
        Untied teacher only: S* = U*V*ᵀ (traceless part) + (m₂/√d) I, index
        mean exactly m₂ (``docs/paper2.md`` §5.3).
    init_mean : float or None
        Untied student only: ``None`` keeps the independent Gaussian factors
        (index mean m(0) = Tr(U Vᵀ)/√d = O(d^-1/2)); a number m₀ sets
        m(0) = m₀ exactly by adding a multiple of U to V (the fast-phase
        direction; the moments move by O(1/d), ``docs/paper2.md`` §2.3).
    loss_prefactor : float
        c of ℒ = c‖F(G₁) − F(G₂)‖².
    tokens : aimrepro.model.TokenLaw
        Law of the token coordinates (default Gaussian, the paper's); the data
        stream of a replicate draws the same standard normals whatever the law
        (``model.TokenLaw``: common random numbers across laws).
    """

    param: str
    link: str
    T: int
    d: int
    rho: float = 0.5
    student_rho: float | None = None
    beta: float = 1.0
    teacher_link: str | None = None
    normalisation: str = "unit_variance"
    init_scale: float = 1.0
    init_scale_v: float = 0.9
    teacher_mean: float = 0.0
    loss_prefactor: float = 0.5
    init_mean: float | None = None
    tokens: TokenLaw = GAUSSIAN

    def __post_init__(self) -> None:
        if not isinstance(self.tokens, TokenLaw):
            raise ValueError(f"tokens must be a model.TokenLaw, got {self.tokens!r}")
        if self.param not in PARAMETRISATIONS:
            raise ValueError(f"param must be one of {PARAMETRISATIONS}, got {self.param!r}")
        if self.normalisation not in NORMALISATIONS:
            raise ValueError(f"normalisation must be one of {NORMALISATIONS}, "
                             f"got {self.normalisation!r}")
        for name in ("T", "d"):
            value = getattr(self, name)
            if not (isinstance(value, (int, np.integer)) and value >= 1):
                raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
        for name in ("rho", "init_scale", "init_scale_v", "beta"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0):
                raise ValueError(f"{name} must be a finite number > 0, got {value}")
        if self.student_rho is not None and not (math.isfinite(self.student_rho)
                                                 and self.student_rho > 0):
            raise ValueError(f"student_rho must be a finite number > 0, got {self.student_rho}")
        if self.teacher_mean and self.param != "untied":
            raise ValueError("teacher_mean applies to untied attention only (the tied and direct "
                             "indices are centered)")
        if self.init_mean is not None and (self.param != "untied"
                                           or not math.isfinite(self.init_mean)):
            raise ValueError(f"init_mean applies to untied attention only and must be finite, "
                             f"got {self.init_mean!r} for param {self.param!r}")
        loss = self.loss()  # checks the links
        if self.T < loss.min_T:
            raise ValueError(f"T must be >= {loss.min_T} for link {self.link!r}, got {self.T}")
        if not loss.student.smooth:
            raise ValueError(f"link {self.link!r} is piecewise constant and has no SGD dynamics; "
                             "use it as teacher_link with a softmax student")

    def loss(self) -> MSELoss:
        teacher = self.link if self.teacher_link is None else self.teacher_link
        return MSELoss(make_link(self.link, beta=self.beta), make_link(teacher, beta=self.beta),
                       self.loss_prefactor)

    @property
    def teacher_kind(self) -> str:
        """``untied`` (uncentered, O(1) index mean) for untied students, ``tied`` otherwise."""
        return "untied" if self.param == "untied" else "tied"

    def width(self, ratio: float) -> int:
        return max(1, int(round(ratio * self.d)))

    @property
    def student_width(self) -> int:
        return self.width(self.rho if self.student_rho is None else self.student_rho)


def _index_variance(matrix) -> float:
    """(Ω + Ψ)_kk = (‖S‖_F² + Tr S²)/d: variance of a diagonal index entry."""
    _, Psi, Omega = trace_products([matrix])
    return float(Psi[0, 0] + Omega[0, 0])


def make_teacher(spec: ProblemSpec, rng: np.random.Generator) -> FactoredMatrix:
    """The fixed teacher S₂ of ``spec`` (``docs/paper2.md`` §1).

    Tied kind: S* = c W*W*ᵀ, W* ∈ R^{d×r*} standard Gaussian, c = 1/√(r* d)
    (``aim``) or such that (Ω + Ψ)₂₂ = 2q₂₂ = 1 (``unit_variance``).  Untied
    kind: S* = c (U*V*ᵀ − (Tr(U*V*ᵀ)/d) I) + (m₂/√d) I with U*, V* entries
    N(0, 1/d): index mean exactly m₂; c = 1 (``aim``) or normalised like the
    tied one (before the m₂ shift, which adds 2m₂²/d to the variance).
    """
    d = spec.d
    r = spec.width(spec.rho)
    if spec.teacher_kind == "tied":
        W = rng.standard_normal((d, r))
        teacher = FactoredMatrix(W, None, 1.0 / math.sqrt(r * d))
    else:
        U = rng.standard_normal((d, r)) / math.sqrt(d)
        V = rng.standard_normal((d, r)) / math.sqrt(d)
        # Centered: the O(d^-1/2) index mean Tr(U*V*ᵀ)/√d would blur m₂, the
        # control parameter of the untied dichotomy (docs/paper2.md §5.3).
        teacher = FactoredMatrix(U, V, 1.0, -float(np.sum(U * V)) / d)
    if spec.normalisation == "unit_variance":
        teacher = teacher.scaled(1.0 / math.sqrt(_index_variance(teacher)))
    if spec.teacher_mean:
        teacher = FactoredMatrix(teacher.left, teacher.right, teacher.scale,
                                 teacher.shift + spec.teacher_mean / math.sqrt(d))
    return teacher


def make_student(spec: ProblemSpec, rng: np.random.Generator) -> Student:
    """The student at initialisation, independent of the teacher (uninformative, ``docs/paper2.md`` §1)."""
    d = spec.d
    if spec.param == "direct":
        student = DirectStudent(spec.init_scale * rng.standard_normal((d, d)) / math.sqrt(d))
        factor = 1.0 / math.sqrt(_index_variance(student.matrix()))
        if spec.normalisation == "unit_variance":
            student.S *= factor
        return student
    r = spec.student_width
    if spec.param == "tied":
        student = TiedStudent(rng.standard_normal((d, r)) / (r * d) ** 0.25)
    else:
        student = UntiedStudent(spec.init_scale * rng.standard_normal((d, r)) / math.sqrt(d),
                                spec.init_scale_v * rng.standard_normal((d, r)) / math.sqrt(d))
    if spec.normalisation == "unit_variance":
        # S is quadratic in the factors: scale each factor by c^(1/2) to scale S by c.
        c = 1.0 / math.sqrt(_index_variance(student.matrix()))
        for theta in student.parameters():
            theta *= math.sqrt(c)
    if spec.param == "untied" and spec.init_mean is not None:
        # V += c U moves Tr(U Vᵀ) by c ‖U‖²: the direction of the fast mean flow.
        U, V = student.U, student.V
        V += ((spec.init_mean * math.sqrt(d) - np.sum(U * V)) / np.sum(U * U)) * U
    return student


def initial_problem(spec: ProblemSpec, seed: int) -> tuple[Student, FactoredMatrix,
                                                           np.random.Generator]:
    """Student, teacher and data stream of replicate ``seed``.

    Three independent generators derived from (seed, what, parameters): the
    teacher depends on (kind, d, ρ) only, so that tied and direct students of
    the same replicate face the same teacher; the student on (param, d,
    width); the data on (param, T, d).
    """
    teacher_rng = np.random.default_rng(derive_seed(seed, "teacher", spec.teacher_kind, spec.d,
                                                    spec.rho))
    student_rng = np.random.default_rng(derive_seed(seed, "student", spec.param, spec.d,
                                                    spec.student_width))
    data_rng = np.random.default_rng(derive_seed(seed, "data", spec.param, spec.T, spec.d))
    return make_student(spec, student_rng), make_teacher(spec, teacher_rng), data_rng


# ---------------------------------------------------------------------------
# The SGD loop
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class SGDSettings:
    """Optimiser and recording settings.

    Parameters
    ----------
    lr : float
        Step size α of one minibatch step (per-sample rate α/B).
    batch : int
        Minibatch size B.
    horizon : float
        Final time in ``t_ode`` units (``docs/paper2.md`` §2).
    weight_decay : float
        γ ≥ 0 (update −α(γ/d)θ).
    n_records : int
        Records on a uniform ``t_ode`` grid from 0 to ``horizon`` (inclusive),
        rounded to whole steps; ignored if ``record_times`` is given.
    record_times : tuple of float or None
        Explicit record times (rounded to whole steps, duplicates dropped).
    max_loss : float
        Batch loss above which the run counts as blown up.
    stop_overlap : float or None
        Stop (not a blow-up) at the first record whose overlap ratio reaches
        this value: weak-recovery-time scans need no more.
    stop_measure : {"overlap_ratio", "symmetric_overlap"}
        The overlap ``stop_overlap`` applies to (in absolute value), a property
        of :class:`~aimrepro.paper2.trajectory.OrderParameters`.
    """

    lr: float
    batch: int
    horizon: float
    weight_decay: float = 0.0
    n_records: int = 101
    record_times: tuple[float, ...] | None = None
    max_loss: float = 1e12
    stop_overlap: float | None = None
    stop_measure: str = "overlap_ratio"

    def __post_init__(self) -> None:
        if self.stop_measure not in STOP_MEASURES:
            raise ValueError(f"stop_measure must be one of {STOP_MEASURES}, "
                             f"got {self.stop_measure!r}")
        for name in ("lr", "horizon", "max_loss"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0):
                raise ValueError(f"{name} must be a finite number > 0, got {value}")
        if self.stop_overlap is not None and not (math.isfinite(self.stop_overlap)
                                                  and self.stop_overlap > 0):
            raise ValueError(f"stop_overlap must be a finite number > 0, got {self.stop_overlap}")
        if not (math.isfinite(self.weight_decay) and self.weight_decay >= 0):
            raise ValueError(f"weight_decay must be a finite number >= 0, got {self.weight_decay}")
        for name in ("batch", "n_records"):
            value = getattr(self, name)
            if not (isinstance(value, (int, np.integer)) and value >= (1 if name == "batch" else 2)):
                raise ValueError(f"{name} must be an integer >= {1 if name == 'batch' else 2}, "
                                 f"got {value!r}")

    def record_steps(self, dt: float) -> np.ndarray:
        """Step indices of the records (sorted, unique, within [0, total steps])."""
        n_total = self.n_steps(dt)
        times = (np.linspace(0.0, self.horizon, self.n_records) if self.record_times is None
                 else np.asarray(self.record_times, dtype=float))
        return np.unique(np.clip(np.rint(times / dt).astype(np.int64), 0, n_total))

    def n_steps(self, dt: float) -> int:
        return int(round(self.horizon / dt))


def _numpy_gradients(student: Student, teacher: FactoredMatrix, loss: MSELoss, X: np.ndarray):
    """Batch losses (B,) and gradients of one step, numpy (the reference): O(B T d r) or O(B T d²).

    The contractions with the tokens run in the float type of X (module
    notes, "Precision"); the links and the loss act on the (B, T, T)
    indices in float64 (O(B T²)), and the gradients come back in the type of X.
    """
    G_teacher = teacher.indices(X, centered=student.centered, dtype=X.dtype)
    y_teacher = loss.teacher.apply(G_teacher.astype(np.float64, copy=False))
    G_student = student.indices(X).astype(np.float64, copy=False)
    batch_losses, g = loss.student_gradient(G_student, y_teacher)
    return batch_losses, student.gradient(X, g)


def run_sgd(student: Student, teacher: FactoredMatrix, loss: MSELoss, T: int,
            settings: SGDSettings, rng: np.random.Generator, *,
            progress_every: int = 0, backend=None, tokens: TokenLaw = GAUSSIAN,
            progress: Callable[[int, int], None] | None = None) -> Trajectory:
    """Online SGD of ``student`` against ``teacher``; the student is updated in place.

    Parameters
    ----------
    student : DirectStudent, TiedStudent or UntiedStudent
    teacher : FactoredMatrix
        Fixed S₂; its index is centered like the student's.
    loss : MSELoss
    T : int
    settings : SGDSettings
    rng : numpy.random.Generator
        The data stream: each step draws one (B, T, d) array of tokens.
    tokens : aimrepro.model.TokenLaw
        Their law (default: standard Gaussian, drawn exactly as before the laws existed).
    progress_every : int
        Log a progress line every this many records (0: never).
    backend : None, str, mapping or :class:`aimrepro.backends.Backend`
        Where the step's indices and gradients are computed (default numpy,
        the reference; ``"torch"``: :mod:`aimrepro.backends.torch_kernels`),
        and in which float type (module notes, "Precision").  The tokens are
        drawn by ``rng`` on the host, in float64, either way.
    progress : callable, optional
        Called as ``progress(steps_done, steps_total)`` about 200 times along
        the run and at its end (a progress bar); it sees nothing of the state
        and changes no number.

    Returns
    -------
    Trajectory
        Order parameters at the record steps, with columns ``n_steps``,
        ``n_samples``, ``t_fast`` (= α n) and ``batch_loss`` (mean batch loss
        since the previous record; at step 0 the loss of the first batch),
        and ``tA``, ``tB`` for untied students.

    Notes
    -----
    Cost per step: O(B T d r) (tied, untied; r the larger width of student and
    teacher) or O(B T d²) (direct), plus the B T d normals of the batch.
    Order parameters cost O(d r²) (O(d² r*) direct) per record.
    """
    d = student.d
    if teacher.d != d:
        raise ValueError(f"teacher is {teacher.d}×{teacher.d}, student {d}×{d}")
    if not isinstance(tokens, TokenLaw):
        raise ValueError(f"tokens must be a model.TokenLaw, got {tokens!r}")
    if not (isinstance(T, (int, np.integer)) and T >= loss.min_T):
        raise ValueError(f"T must be an integer >= {loss.min_T}, got {T!r}")
    backend = make_backend(backend)
    cast_tokens = backend.is_numpy and backend.dtype == "float32"
    if backend.is_numpy:
        gradients = _numpy_gradients
    else:
        from aimrepro.backends import torch_kernels

        def gradients(student, teacher, loss, X):
            return torch_kernels.sgd_gradients(backend, student, teacher, loss, X)
    lr, B, gamma = settings.lr, settings.batch, settings.weight_decay
    dt = step_time(student.param, lr, d)
    n_total = settings.n_steps(dt)
    record_at = settings.record_steps(dt)
    is_record = np.zeros(n_total + 1, dtype=bool)
    is_record[record_at] = True

    records: list[np.ndarray] = []
    extra: dict[str, list[float]] = {"n_steps": [], "batch_loss": []}
    loss_sum, loss_count = 0.0, 0
    blew_up, t_blowup = False, math.nan
    decay = 1.0 - lr * gamma / d

    def record(n: int) -> bool:
        """Record the state after n steps; True if the run should stop there."""
        mean_loss = loss_sum / loss_count if loss_count else math.nan
        op = OrderParameters(*trace_products([student.matrix(), teacher]))
        records.append(op.as_vector())
        extra["n_steps"].append(n)
        extra["batch_loss"].append(mean_loss)
        for name, value in student.extra_traces().items():
            extra.setdefault(name, []).append(value)
        if progress_every and len(records) % progress_every == 0:
            logger.info("%s step %d/%d t=%.4g overlap=%.4f batch loss=%.4g", student.param, n,
                        n_total, n * dt, op.overlap_ratio, mean_loss)
        return (settings.stop_overlap is not None
                and abs(getattr(op, settings.stop_measure)) >= settings.stop_overlap)

    # Overflow and NaN are expected when a run blows up; they are detected below
    # from the values and recorded, not raised as floating-point warnings.
    progress_stride = max(1, n_total // 200) if progress is not None else 0
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        for n in range(n_total + 1):
            if progress_stride and n % progress_stride == 0:
                progress(n, n_total)
            if is_record[n] and n > 0:
                stop = record(n)
                loss_sum, loss_count = 0.0, 0
                if stop:
                    break
            if n == n_total:
                break
            # drawn in float64 whatever the float type, so that both types of one seed see the same tokens
            X = tokens.sample(rng, (B, T, d))
            if cast_tokens:
                X = X.astype(np.float32)
            batch_losses, grads = gradients(student, teacher, loss, X)
            batch_loss = float(np.mean(batch_losses))
            if n == 0:
                loss_sum, loss_count = batch_loss, 1
                record(0)
                loss_sum, loss_count = 0.0, 0
            if not (math.isfinite(batch_loss) and batch_loss <= settings.max_loss
                    and all(np.all(np.isfinite(gr)) for gr in grads)):
                blew_up, t_blowup = True, n * dt
                logger.warning("%s SGD blew up at step %d (t_ode = %.4g): batch loss %r",
                               student.param, n, t_blowup, batch_loss)
                break
            loss_sum += batch_loss
            loss_count += 1
            for theta, gr in zip(student.parameters(), grads):
                if gamma:
                    theta *= decay
                theta -= lr * gr

    if progress is not None:
        progress(n_total, n_total)
    steps = np.asarray(extra.pop("n_steps"), dtype=np.int64)
    columns = {"n_steps": steps, "n_samples": steps * B, "t_fast": steps * lr}
    columns.update({name: np.asarray(values, dtype=float) for name, values in extra.items()})
    order = np.asarray(records).reshape(-1, len(ORDER_NAMES))
    return Trajectory(steps * dt, order, d, blew_up, t_blowup, columns)


@dataclass(frozen=True)
class SGDRun:
    """A reproducible SGD run: problem, optimiser settings and replicate seed."""

    spec: ProblemSpec
    settings: SGDSettings
    seed: int

    def run(self, *, progress_every: int = 0, backend=None,
            progress: Callable[[int, int], None] | None = None) -> Trajectory:
        student, teacher, data_rng = initial_problem(self.spec, self.seed)
        return run_sgd(student, teacher, self.spec.loss(), self.spec.T, self.settings, data_rng,
                       progress_every=progress_every, backend=backend, tokens=self.spec.tokens,
                       progress=progress)
