"""Memory (and step) estimates of every kind of job, from its parameters alone.

Each public ``*_job`` function returns an :class:`Estimate` of one job of the
pipeline (or of the equivalent ``aimrepro`` command): the peak resident memory
in bytes and the number of iterations of its main loop.  The formulas count the
arrays the code allocates (read off the kernels named in each docstring), in
8-byte floats unless said otherwise, plus :data:`BASE_BYTES` for the
interpreter with numpy and scipy loaded.  They are sums of terms, each a
product of the job's sizes, so that an absurd size shows up as an absurd
estimate *before* anything is allocated: the command line and the config
check (the workflow's ``aimrepro_workflow.checks``) compare them with a memory limit.

What an estimate is and is not
------------------------------
* It is the peak of the arrays that scale with the job's parameters, not a
  bound: small arrays (order parameters, Python scalars, per-record rows) are
  left out, and temporaries that numpy frees within one expression are
  counted where they coexist with the large arrays.  Validated against
  tracemalloc peaks and peak RSS at a few sizes (``tests/unit/test_resources.py``
  checks a factor-of-two agreement with tracemalloc at small sizes).
* It does not know the data: a solver that stops early (AMP converging, SGD
  stopping at an overlap) uses less; the estimate takes the worst case.
* Estimates are floats: an absurd input gives an estimate beyond any integer
  size (``math.inf`` when a step count overflows), never an exception.

Functions
---------
:func:`se_curve_job`, :func:`dataset_job`, :func:`amp_job`, :func:`gd_job`,
:func:`sgd_job` (direct, tied, untied), :func:`tied_flow_job`,
:func:`direct_flow_job`, :func:`untied_flow_job`, :func:`theorem1_job`,
:func:`landscape_job`, :func:`moment_truncations_job`, :func:`riccati_job`,
:func:`truncation_error_job`, :func:`fast_states_job`; :func:`sgd_steps`,
:func:`word_count`; :func:`driver` (which parameter makes an estimate large),
:func:`available_memory`.

The module imports nothing beyond the standard library, so that the config
check stays fast.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "BASE_BYTES",
    "GIB",
    "TYPICAL",
    "Estimate",
    "amp_job",
    "available_memory",
    "dataset_job",
    "direct_flow_job",
    "driver",
    "fast_states_job",
    "gd_job",
    "landscape_job",
    "moment_truncations_job",
    "riccati_job",
    "se_curve_job",
    "sgd_job",
    "sgd_steps",
    "theorem1_job",
    "tied_flow_job",
    "truncation_error_job",
    "untied_flow_job",
    "word_count",
]

GIB = 2.0 ** 30
#: Bytes of a float64, float32, bool entry.
F8, F4, B1 = 8.0, 4.0, 1.0
#: Peak RSS of the interpreter with numpy, scipy (integrate, linalg, special) and the
#: aimrepro science modules imported: 80 MB measured (``ru_maxrss``), rounded up.
BASE_BYTES = 100.0 * 2 ** 20

#: Gauss-Legendre nodes per support piece of the spectral quadrature (``spectra.N_NODES``)
#: and the pieces per point (at most two bulks): the softmax SE evaluates the density there.
_SE_NODES = 2 * 128
#: float64 temporaries per quadrature node of ``spectra._cubed_density_integral`` (the
#: cubic's coefficients, its roots real and complex, the Cardano branch and Newton step).
_SE_FLOATS_PER_NODE = 26
#: SE with a generic (hardmax) channel: the channel's 2-D quadrature rules, once (measured
#: 1.5 MB with tracemalloc), and an SEPoint with its table row per point.
_SE_GENERIC_BYTES = 2.0 * 2 ** 20
_SE_GENERIC_BYTES_PER_POINT = 1000.0

#: t_ode per SGD step = TIME_FACTOR · lr/d (``aimrepro.paper2.sgd.TIME_FACTOR``).
_TIME_FACTOR = {"tied": 4.0, "direct": 1.0, "untied": 1.0}
#: Replicas per GD chunk: K_chunk · n T r <= this (``aimrepro.paper1.gd.CHUNK_ENTRIES``).
_GD_CHUNK_ENTRIES = 25_000_000
#: Sequences per Monte-Carlo batch of the Theorem-1 check (``population.finite_d_loss``).
_THEOREM1_CHUNK = 20_000
#: Stages (plus one) whose derivatives the explicit solvers keep: RK45, DOP853.
_RK_STAGES = {"RK45": 7, "DOP853": 13}
#: float64 n×n arrays an implicit solve_ivp method holds for a dense Jacobian of an
#: n-dimensional state: Radau the Jacobian, its real and complex LU (16 bytes) and the
#: finite-difference Jacobian's work arrays; BDF the Jacobian, its LU and the same work;
#: LSODA its Fortran work array.
_DENSE_JACOBIAN_FLOATS = {"Radau": 7, "BDF": 5, "LSODA": 1}
#: The time model of :func:`_loop_seconds`: floating-point operations per second of numpy's
#: BLAS on one core at the sizes of the loops, interpreter overhead per iteration, cost of one
#: standard normal (numpy's ziggurat) and of one pass over a float64 entry of the state
#: (updates, memory bound).  Fitted to online-SGD steps (d 50-3000, B 8-1024; within a
#: factor 3 of the measured time, mostly above it; one core, load ~5 on 2 cores).
_FLOPS_PER_SECOND = 3e10
_SECONDS_PER_ITERATION = 40e-6
_SECONDS_PER_NORMAL = 5e-9
_SECONDS_PER_ENTRY_PASS = 1.5e-9
#: Python bytes per letter of a word of the moment hierarchy's basis (``moments.WordBasis``:
#: word tuples, index dict, the insertion tables as Python lists before their arrays),
#: 140-340 measured with tracemalloc at M = 6..14 (fewer at larger M: small ints are shared).
_WORD_BASIS_BYTES_PER_LETTER = 300.0


@dataclass(frozen=True)
class Estimate:
    """Peak memory and main-loop length of one job.

    Attributes
    ----------
    bytes : float
        Peak resident memory in bytes, :data:`BASE_BYTES` included.
    steps : float
        Iterations of the job's main loop: SGD or Adam steps, AMP iterations
        (the cap), SE points, Monte-Carlo sequences, potential evaluations;
        0 where the job has no loop worth counting.  May be ``math.inf``.
    seconds : float
        CPU seconds of the main loop on one core (:func:`_loop_seconds`), an
        order of magnitude (within a factor 3 of measured SGD runs), for the
        command line's "this will take ~N s" line; 0 where not modelled (the jobs other than SGD, AMP,
        GD and sampling a dataset).  May be ``math.inf``.
    """

    bytes: float
    steps: float = 0.0
    seconds: float = 0.0

    @property
    def gib(self) -> float:
        return self.bytes / GIB

    @staticmethod
    def peak(*estimates: Estimate) -> Estimate:
        """Jobs run one after the other in one process: the largest peak, the summed steps and seconds."""
        return Estimate(max(e.bytes for e in estimates), sum(e.steps for e in estimates),
                        sum(e.seconds for e in estimates))


# ---------------------------------------------------------------------------
# argument checks: sizes may be huge (that is the point), but must be numbers


def _count(name: str, value, minimum: int = 1) -> float:
    """A size as a float; an integer beyond the floats (10**400) is ``math.inf``, not OverflowError."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= minimum:
        return float(value) if value < _FLOAT_LIMIT else math.inf
    if isinstance(value, float) and value == math.inf:  # a size already beyond the floats
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (
            math.isfinite(value) and value >= minimum and float(value).is_integer()):
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return float(value)


#: Integers from here on have no float (``float(2**1024)`` raises OverflowError).
_FLOAT_LIMIT = 2 ** 1023


def _positive(name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (
            math.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return float(value)


def _rounded(value: float) -> float:
    """round(value) as a float, at least 1; ``math.inf`` beyond the floats (never OverflowError)."""
    return max(1.0, float(round(value))) if math.isfinite(value) else math.inf


def _width(d: float, rho: float) -> float:
    """r = round(ρ d), at least 1 (``model.width``, ``ProblemSpec.width``)."""
    return _rounded(rho * d)


def _sequences(d: float, alpha: float) -> float:
    """n = round(α d²), at least 1 (``data.DatasetSpec.n``)."""
    return _rounded(alpha * d * d)


def _total(*terms: float) -> float:
    return BASE_BYTES + math.fsum(terms)


def _loop_seconds(iterations: float, *, flops: float = 0.0, normals: float = 0.0,
                  entry_passes: float = 0.0) -> float:
    """Seconds of ``iterations`` of a loop, each doing ``flops`` of BLAS work, drawing ``normals``
    and making ``entry_passes`` passes over float64 entries (see :data:`_FLOPS_PER_SECOND`).

    A product of overflow-safe floats: inf for an absurd size, never an exception.
    """
    per_iteration = (_SECONDS_PER_ITERATION + flops / _FLOPS_PER_SECOND + _SECONDS_PER_NORMAL * normals
                     + _SECONDS_PER_ENTRY_PASS * entry_passes)
    return iterations * per_iteration if iterations else 0.0


# ---------------------------------------------------------------------------
# paper 1: SE curves, datasets, AMP, GD


def se_curve_job(*, channel: str, n_points) -> Estimate:
    """One state-evolution curve (rule ``se_curve``; ``aimrepro se`` runs one point at a time).

    softmax: the fixed point is a vectorised root search in Δ over all points at
    once (``state_evolution._softmax_points``), each evaluation of mmse(Δ) holding
    ~26 float64 temporaries on 2 × 128 quadrature nodes per point: 53 KB per
    point (tracemalloc measures 52.6 KB).  Other channels are solved point by
    point (warm started): their quadrature rules once, and a table row per point.
    Steps: the points.
    """
    n = _count("n_points", n_points)
    if channel == "softmax":
        return Estimate(_total(F8 * _SE_FLOATS_PER_NODE * _SE_NODES * n), n)
    return Estimate(_total(_SE_GENERIC_BYTES, _SE_GENERIC_BYTES_PER_POINT * n), n)


def _label_bytes(m: float, T: float, d: float, r: float) -> float:
    """Peak of ``data._labels`` on m float32 sequences (``model.indices_from_factor`` + the link).

    The tokens converted to float64 (m T d), X W (m T r) and the index array with
    two temporaries of its scaling (3 m T²); then the link: β h, log-softmax's
    intermediates and the result (6 m T²).
    """
    return max(F8 * m * T * (d + r + 3 * T), F8 * 6 * m * T * T)


def dataset_job(*, T, d, rho, alpha, n_test) -> Estimate:
    """Sampling one AIM dataset (rule ``aim_dataset``, ``data.sample_dataset``).

    Teacher W (d r), float32 training tokens (4 n T d) and their labels
    (:func:`_label_bytes`), then with the training set and its labels (n T²)
    held, the float32 test tokens and their labels.  n = round(α d²).
    """
    T, d, n_test = _count("T", T, 2), _count("d", d, 2), _count("n_test", n_test)
    rho, alpha = _positive("rho", rho), _positive("alpha", alpha)
    n, r = _sequences(d, alpha), _width(d, rho)
    train = F4 * n * T * d + _label_bytes(n, T, d, r)
    test = F4 * n * T * d + F8 * n * T * T + F4 * n_test * T * d + _label_bytes(n_test, T, d, r)
    # the tokens' normals and their projection X W, in one pass
    seconds = _loop_seconds(1, flops=2 * (n + n_test) * T * d * r, normals=(n + n_test) * T * d)
    return Estimate(_total(F8 * d * r, max(train, test)), 0.0, seconds)


def _stored_dataset(n: float, n_test: float, T: float, d: float, r: float) -> float:
    """A dataset in memory (``data.load_dataset``): W, float32 tokens, float64 labels."""
    return F8 * d * r + F4 * (n + n_test) * T * d + F8 * (n + n_test) * T * T


def _plug_in_bytes(n_test: float, T: float, d: float) -> float:
    """``model.plug_in_test_error`` with a d×d estimate: the test tokens as float64, X S,
    the indices with their scaling, the link's intermediates and the squared error."""
    return F8 * n_test * T * (2 * d + 10 * T)


def amp_job(*, T, d, rho, alpha, n_test, max_iter, channel: str = "hardmax") -> Estimate:
    """One GAMP-RIE run on a stored dataset (rule ``amp_run``, ``amp.run_on_dataset``).

    The loaded dataset (:func:`_stored_dataset`), the float64 training tokens
    (``amp.amp_data``, n T d) and, in an iteration, the messages ω, g and the
    previous g (3 n m, m = T(T + 1)/2) with the largest of the index pass
    (X S: n T d, the indices and their scaling: 2 n T²), the channel's g_out
    temporaries (softmax: 3 n T² + 4 n m; hardmax: ~30 n) and the
    back-projection (G X: n T d, G: n T²);
    the d×d matrices (estimate, teacher, R, its eigendecomposition and LAPACK
    work: ~10 d²); the per-iteration trace (5 Python floats, 32 bytes each).
    After the run the plug-in test error (:func:`_plug_in_bytes`).  Steps: the
    iteration cap (a converging run stops earlier).
    """
    T, d, n_test = _count("T", T, 2), _count("d", d, 2), _count("n_test", n_test)
    iterations = _count("max_iter", max_iter)
    rho, alpha = _positive("rho", rho), _positive("alpha", alpha)
    n, r = _sequences(d, alpha), _width(d, rho)
    m = T * (T + 1) / 2
    channel_temps = F8 * n * (3 * T * T + 4 * m) if channel == "softmax" else F8 * 30 * n
    # the index pass, g_out, the back-projection: one after the other; the messages
    # (omega, g and the previous g: 3 n m) live across them
    iteration = F8 * 3 * n * m + max(F8 * n * T * (d + 2 * T), channel_temps,
                                     F8 * n * T * (d + T))
    during = F8 * n * T * d + iteration + F8 * 10 * d * d + 5 * 32.0 * iterations
    after = _plug_in_bytes(n_test, T, d) + F8 * 3 * d * d
    # an iteration: the index pass X S and the back-projection (2 n T d² each), the
    # eigendecomposition of the d×d estimate (~10 d³) and g_out on the n T² indices
    seconds = _loop_seconds(iterations, flops=4 * n * T * d * d + 10 * d * d * d,
                            entry_passes=channel_temps / F8 + 10 * d * d)
    return Estimate(_total(_stored_dataset(n, n_test, T, d, r), max(during, after)), iterations, seconds)


def gd_job(*, T, d, rho, alpha, n_test, inits, steps, trace: bool = True) -> Estimate:
    """K tied students trained by full-batch Adam on a stored dataset (rule ``gd_run``).

    ``gd.run_on_dataset``: the loaded dataset, the float64 training tokens
    (n T d), the teacher S* (d²), the factors W₀, W, Adam's m and v and the
    gradient (5 K d r), the loss curve (K (steps + 1)); per chunk of K_c
    replicas (K_c n T r <= 25e6, ``gd.replica_chunk``) the forward and
    backward working set: P = X W and Q (2 K_c n T r), the index, softmax and
    residual arrays (7 K_c n T²) and the chunk's gradient (K_c d r); the
    error trace (``trace``: d×d products, 3 d²).  After training: the test
    tokens as float64 and the plug-in errors of the students and of their mean
    (:func:`_plug_in_bytes`, the stacked factors K d r).  Steps: the Adam steps.
    """
    T, d, n_test = _count("T", T, 2), _count("d", d, 2), _count("n_test", n_test)
    K, n_steps = _count("inits", inits), _count("steps", steps)
    rho, alpha = _positive("rho", rho), _positive("alpha", alpha)
    n, r = _sequences(d, alpha), _width(d, rho)
    chunk = max(1.0, min(K, float(_GD_CHUNK_ENTRIES // max(1.0, n * T * r))))
    held = F8 * (n * T * d + d * d + 5 * K * d * r + K * (n_steps + 1))
    working = F8 * chunk * (2 * n * T * r + 7 * n * T * T + d * r) + (F8 * 3 * d * d if trace else 0.0)
    after = _plug_in_bytes(n_test, T, d) + F8 * (K * d * r + 3 * d * d)
    # an Adam step of K students: forward X W and backward (3 products of 2 n T d r flops),
    # the softmax and residual arrays (~7 n T² entries) and Adam's update (~12 passes over K d r)
    seconds = _loop_seconds(n_steps, flops=K * 6 * n * T * d * r,
                            entry_passes=K * (7 * n * T * T + 12 * d * r))
    return Estimate(_total(_stored_dataset(n, n_test, T, d, r), held + max(working, after)), n_steps,
                    seconds)


# ---------------------------------------------------------------------------
# paper 2: online SGD and its theory


def sgd_steps(*, param: str, d, lr, horizon) -> float:
    """Steps of an SGD run to ``horizon``: round(horizon / (TIME_FACTOR · lr/d)); may be inf."""
    if param not in _TIME_FACTOR:
        raise ValueError(f"param must be one of {tuple(_TIME_FACTOR)}, got {param!r}")
    d = _count("d", d)
    lr, horizon = _positive("lr", lr), _positive("horizon", horizon)
    dt = _TIME_FACTOR[param] * lr / d
    steps = horizon / dt if dt > 0 else math.inf
    return float(round(steps)) if math.isfinite(steps) else math.inf


def sgd_job(*, param: str, T, d, rho, batch, lr, horizon, records, student_rho=None) -> Estimate:
    """One online-SGD run (rules ``sgd_run``, ``untied_sgd_run``; ``dynamics.sgd.run_sgd``).

    Parameters: the teacher's factors (tied: d r*, untied: 2 d r*, r* = round(ρ d)),
    the student (direct: S, its gradient and the update's temporaries, 4 d², also
    the peak of its initialisation; tied: W, its gradient and temporaries, 4 d r;
    untied: U, V, 6 d r).  Per step: the batch X (B T d); the student's
    projections, kept from the indices to the gradient (tied P = X W: B T r;
    untied P, Q: 2 B T r), with either the teacher's (B T r*, untied 2 B T r*)
    or the gradient's products (as the student's), whichever is larger (direct:
    X S, then g X: B T d); ~12 index-sized arrays (B T²: indices, link, loss
    gradient).  At the records (and the teacher's normalisation) the order
    parameters contract the factors (``matrices.trace_products``): Gram matrices
    Lᵀ L' of the widths and their product, 2 max(r, r*)² (numpy reuses the
    first temporary; direct: the teacher's, 2 r*²), while the last batch is
    still held.  Bookkeeping: one bool per step
    (``is_record``, steps + 1 bytes, allocated but untouched until a record:
    counted, since an allocation beyond the machine's memory fails) and the
    record grid (6 float64 per requested record).  Steps: round(horizon d/(TIME_FACTOR lr)).
    """
    if param not in _TIME_FACTOR:
        raise ValueError(f"param must be one of {tuple(_TIME_FACTOR)}, got {param!r}")
    T, d = _count("T", T), _count("d", d)
    B, R = _count("batch", batch), _count("records", records, 2)
    rho = _positive("rho", rho)
    r_teacher = _width(d, rho)
    r = _width(d, rho if student_rho is None else _positive("student_rho", student_rho))
    steps = sgd_steps(param=param, d=d, lr=lr, horizon=horizon)
    if param == "direct":
        parameters = F8 * (d * r_teacher + 4 * d * d)
        projections = F8 * B * T * max(d, r_teacher)
        grams = F8 * 2 * r_teacher * r_teacher
    elif param == "tied":
        parameters = F8 * (d * r_teacher + 4 * d * r)
        projections = F8 * B * T * (r + max(r_teacher, r))
        grams = F8 * 2 * max(r, r_teacher) * max(r, r_teacher)  # a product: inf, never OverflowError
    else:
        parameters = F8 * (2 * d * r_teacher + 6 * d * r)
        projections = F8 * B * T * (2 * r + 2 * max(r_teacher, r))
        grams = F8 * 2 * max(r, r_teacher) * max(r, r_teacher)  # a product: inf, never OverflowError
    per_step = F8 * B * T * d + projections + F8 * 12 * B * T * T
    bookkeeping = B1 * (steps + 1) + F8 * 6 * R
    # a step: the batch's normals, the projections and the gradient's product (2 B T d w
    # flops each, w the projections' width: student and teacher) and the parameters' update
    width = projections / (F8 * B * T)
    seconds = _loop_seconds(steps, flops=4 * B * T * d * width, normals=B * T * d,
                            entry_passes=parameters / F8)
    return Estimate(_total(parameters, per_step, grams, bookkeeping), steps, seconds)


def _explicit_solver(n: float, records: float, method: str, rhs_arrays: float) -> float:
    """solve_ivp on an n-dimensional state: stages (explicit) or a dense Jacobian (implicit),
    the right-hand side's temporaries (``rhs_arrays`` × n) and the output at the records
    (twice: the list of states and its stacked copy)."""
    if method in _DENSE_JACOBIAN_FLOATS:
        solver = F8 * (_DENSE_JACOBIAN_FLOATS[method] * n * n + 10 * n)
    elif method == "ROS2":  # k1, k2, the trial state, the error weights and its temporaries
        solver = F8 * 8 * n
    else:
        solver = F8 * (_RK_STAGES.get(method, 13) + 4) * n
    return solver + F8 * rhs_arrays * n + F8 * 2 * records * n


def tied_flow_job(*, d, rho, records, method: str = "RK45") -> Estimate:
    """The tied matrix flow of one replicate (rule ``reference_flow``, ``flows.solve_tied_flow``).

    State W (d r); the right-hand side forms W(WᵀW), S*W and their sum (~6 d r)
    and the order parameters' Gram matrices (4 r²); the initial problem's
    teacher (d r*).  See :func:`_explicit_solver`.
    """
    d, R = _count("d", d), _count("records", records, 2)
    r = _width(d, _positive("rho", rho))
    return Estimate(_total(F8 * (d * r + 4 * r * r), _explicit_solver(d * r, R, method, 6)))


def direct_flow_job(*, d, rho) -> Estimate:
    """The closed ODE of direct S (rule ``reference_flow``, param direct).

    The ODE has a handful of order parameters; the job's memory is the initial
    problem: the direct student's d×d S with its initialisation temporaries
    (3 d², tracemalloc: 2.7 d²) and the teacher (d r*).
    """
    d = _count("d", d)
    r = _width(d, _positive("rho", rho))
    return Estimate(_total(F8 * (3 * d * d + d * r)))


def untied_flow_job(*, d, rho, records, method: str = "RK45", student_rho=None) -> Estimate:
    """The untied population or slow flow of one replicate (rule ``untied_theory``).

    State (U, V): n = 2 d r; the velocity forms eight d×r products and the
    two updates (~12 d r = 6 n) from the Gram matrices and projections on the
    teacher (4 r² + 4 r r*); the teacher (2 d r*).  Radau, BDF and LSODA hold a
    dense n×n Jacobian (:data:`_DENSE_JACOBIAN_FLOATS`): small d only.
    """
    d, R = _count("d", d), _count("records", records, 2)
    rho = _positive("rho", rho)
    r = _width(d, rho if student_rho is None else _positive("student_rho", student_rho))
    r_teacher = _width(d, rho)
    n = 2 * d * r
    return Estimate(_total(F8 * (2 * d * r_teacher + 4 * r * r + 4 * r * r_teacher),
                           _explicit_solver(n, R, method, 6)))


def theorem1_job(*, T, d, rho, n_samples, n_links: int = 3) -> Estimate:
    """Finite-d population loss of Figure S1 at one d (rule ``theorem1``, ``population.finite_d_loss``).

    Batches of c = min(20 000, n_samples) sequences: the tokens (c T d) with
    either the student's projection and its indices (width 2r: c T (2r) and
    3 c T²) or the control variates: the k = 2T² stacked indices (2 c k), the
    products of the entries (c k²), their upper triangle and the concatenation
    (2 c m, m = k + k(k + 1)/2) and the loss values (c per link).
    Factors: W*, W', the student's [W*, W'] and its SVD (6 d r), the order
    parameters' Gram matrices of the width 2r (3 (2r)²).  Steps: the sequences.
    """
    T, d = _count("T", T), _count("d", d)
    n = _count("n_samples", n_samples)
    r = _width(d, _positive("rho", rho))
    c = min(float(_THEOREM1_CHUNK), n)
    k = 2 * T * T
    m = k + k * (k + 1) / 2
    per_sequence = T * d + max(2 * T * r + 3 * T * T, k * k + 2 * m + 2 * k + n_links)
    return Estimate(_total(F8 * c * per_sequence, F8 * (6 * d * r + 12 * r * r)), n)


def landscape_job(*, n_grid) -> Estimate:
    """Φ on an n_grid × n_grid grid of (q₁₁, q₁₂) (rule ``landscape``, ``experiments.landscape_table``).

    Each point is one quadrature (60² nodes, fixed); the rows are Python lists of
    five floats (~160 bytes a row).  Steps: the potential evaluations.
    """
    n = _count("n_grid", n_grid, 3)
    points = n * n
    return Estimate(_total(F8 * 10 * 3600, 160.0 * points), points)


def fast_states_job(*, n_grid) -> Estimate:
    """The untied fast-state table on n_grid teacher means (rule ``untied_fast_states``).

    One mean landscape and its fixed points per teacher mean: constant memory, a
    table row (~30 floats) per mean.  Steps: the teacher means.
    """
    n = _count("n_grid", n_grid, 2)
    return Estimate(_total(F8 * 10 * 3600, F8 * 30 * n), n)


def word_count(max_order) -> tuple[float, float]:
    """(words, letters) of the tied hierarchy's basis up to length M (``moments.WordBasis``, K = 2).

    The classes are binary bracelets (words up to rotation and reversal, the
    symmetries of Tr(S_{k₁} ⋯ S_{k_w}) for symmetric S): B(w) = N(w)/2 + 3·2^{w/2}/4
    (w even) or N(w)/2 + 2^{(w−1)/2} (w odd), N(w) = (1/w) Σ_{j | w} φ(j) 2^{w/j} the
    necklaces.  Returns Σ_w B(w) and Σ_w w B(w); beyond M = 200 (B(200) ≈ 4e57) both
    are ``math.inf``.
    """
    M = int(_count("max_order", max_order, 1))
    if M > 200:
        return math.inf, math.inf
    words = letters = 0.0
    for w in range(1, M + 1):
        necklaces = sum(_totient(j) * 2.0 ** (w // j) for j in range(1, w + 1) if w % j == 0) / w
        bracelets = necklaces / 2 + (0.75 * 2.0 ** (w // 2) if w % 2 == 0 else 2.0 ** ((w - 1) // 2))
        words += bracelets
        letters += w * bracelets
    return words, letters


def _totient(n: int) -> int:
    result, p, m = n, 2, n
    while p * p <= m:
        if m % p == 0:
            while m % p == 0:
                m //= p
            result -= result // p
        p += 1
    if m > 1:
        result -= result // m
    return result


def _initial_moments_bytes(d: float, max_order: float) -> float:
    """``moments.initial_moments``: S₁ = W Wᵀ and S* dense, the prefix products along one
    path of the trie (M − 1) and the elementwise product of the trace (M + 2 d²)."""
    return F8 * (max_order + 2) * d * d


def moment_truncations_job(*, d, rho, records, max_order) -> Estimate:
    """The truncated hierarchies of orders up to M of one replicate (rule ``moment_truncations``).

    The initial moments (:func:`_initial_moments_bytes`), the word basis of
    order M (Python tables, :data:`_WORD_BASIS_BYTES_PER_LETTER` per letter of
    :func:`word_count`) and the DOP853 solve on the words (13 stages and the
    records, :func:`_explicit_solver`); the initial problem's factors (2 d r).
    """
    d, R = _count("d", d), _count("records", records, 2)
    M = _count("max_order", max_order, 2)
    r = _width(d, _positive("rho", rho))
    words, letters = word_count(M)
    return Estimate(_total(F8 * 2 * d * r, _initial_moments_bytes(d, M),
                           _WORD_BASIS_BYTES_PER_LETTER * letters,
                           _explicit_solver(words, R, "DOP853", 12)))


def riccati_job(*, d, rho, records) -> Estimate:
    """The Riccati closed form of the linear case (rule ``riccati_flow``, ``moments.riccati_solution``).

    S₁(t) at every record is kept (records d²), with S*, the eigendecomposition
    of A and its work arrays, and ``initial_moments``' symmetric checks (~8 d²).
    """
    d, R = _count("d", d), _count("records", records, 2)
    r = _width(d, _positive("rho", rho))
    return Estimate(_total(F8 * (R + 8) * d * d, F8 * 2 * d * r))


def truncation_error_job(*, d, rho, records, max_order) -> Estimate:
    """Truncation errors of orders 2..M against the Riccati flow (rule ``truncation_error``).

    The Riccati solution at the records (:func:`riccati_job`) and then the
    truncations of order up to M (:func:`moment_truncations_job`).
    """
    exact = riccati_job(d=d, rho=rho, records=records)
    truncations = moment_truncations_job(d=d, rho=rho, records=records, max_order=max_order)
    return Estimate(max(exact.bytes, truncations.bytes))


# ---------------------------------------------------------------------------
# which parameter makes an estimate large


#: Quick-scale sizes of each parameter (and the default solver): only used by
#: :func:`driver`, to tell which of a job's parameters is responsible for a large estimate.
TYPICAL: Mapping[str, Any] = {
    "T": 2, "d": 100, "rho": 0.5, "student_rho": 0.5, "alpha": 0.1, "n_test": 1000,
    "max_iter": 500, "inits": 8, "steps": 1000, "batch": 256, "lr": 0.05, "horizon": 3.0,
    "records": 101, "n_points": 64, "n_samples": 200_000, "n_grid": 81, "max_order": 8,
    "method": "RK45",
}


def driver(estimate: Callable[..., Estimate], params: Mapping, candidates: Sequence[str], *,
           typical: Mapping[str, Any] = TYPICAL) -> str | None:
    """The parameter among ``candidates`` whose typical value would shrink the estimate most.

    ``estimate(**params)`` is recomputed with each candidate set to its value in
    ``typical`` (its quick-scale size); the candidate leaving the smallest
    memory (then the fewest steps; ties: the first listed) is the one to name
    in a refusal.  None if no candidate's typical value lowers the memory: the
    sizes are ordinary, and a refusal should name the limit instead.
    Candidates without a typical value are skipped.
    """
    original = estimate(**params).bytes
    best, best_key = None, None
    for name in candidates:
        if name not in typical or name not in params:
            continue
        result = estimate(**{**params, name: typical[name]})
        key = (result.bytes, result.steps)
        if best_key is None or key < best_key:
            best, best_key = name, key
    if best is None:
        raise ValueError(f"none of the candidates {list(candidates)} has a typical value")
    return best if best_key[0] < original else None


def available_memory() -> float:
    """Memory a new allocation of this process may use, bytes: the smallest of

    * MemAvailable of /proc/meminfo (else the free physical pages, ``os.sysconf``);
    * the container's cgroup limit less its usage (cgroup v2 ``memory.max`` −
      ``memory.current``, v1 ``memory.limit_in_bytes`` − ``memory.usage_in_bytes``,
      at the mount root as the process sees it), where one is set;
    * the soft address-space limit (``ulimit -v``) less the address space in use.

    ``math.inf`` when none is known (no limit).
    """
    candidates = [_meminfo_available(), _cgroup_available(), _address_space_available()]
    known = [value for value in candidates if value is not None]
    return max(0.0, min(known)) if known else math.inf


def _read_number(path: str) -> float | None:
    try:
        with open(path, encoding="ascii") as handle:
            text = handle.read().strip()
    except OSError:
        return None
    try:
        return float(text)
    except ValueError:  # "max": no limit
        return None


def _meminfo_available() -> float | None:
    try:
        with open("/proc/meminfo", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return float(line.split()[1]) * 1024.0
    except (OSError, ValueError, IndexError):
        pass
    try:
        return float(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return None


#: A cgroup v1 "limit" at or above this is the kernel's way of saying none.
_NO_CGROUP_LIMIT = 2.0 ** 60


def _cgroup_available() -> float | None:
    for limit_path, usage_path in (("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
                                   ("/sys/fs/cgroup/memory/memory.limit_in_bytes",
                                    "/sys/fs/cgroup/memory/memory.usage_in_bytes")):
        limit = _read_number(limit_path)
        if limit is not None and limit < _NO_CGROUP_LIMIT:
            return limit - (_read_number(usage_path) or 0.0)
    return None


def _address_space_available() -> float | None:
    try:
        import resource
        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    except (ImportError, OSError, ValueError):
        return None
    if soft == resource.RLIM_INFINITY or soft < 0:
        return None
    in_use = 0.0
    try:
        with open("/proc/self/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("VmSize:"):
                    in_use = float(line.split()[1]) * 1024.0
    except (OSError, ValueError, IndexError):
        pass
    return float(soft) - in_use
