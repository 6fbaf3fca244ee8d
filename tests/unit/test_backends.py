"""The PyTorch backend computes what numpy computes, to 1e-10 (tied, direct, untied SGD; GD; AMP).

Skipped when PyTorch is not installed (the optional extra ``.[gpu]``); on a
machine with a GPU the same tests compare the GPU kernels with numpy.  The
SGD trajectory test also holds numpy's float32 path to its own tolerance.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from aimrepro import backends
from aimrepro.model import apply_link, indices_from_factor
from aimrepro.paper1 import amp, gd
from aimrepro.paper1.channels import make_channel
from aimrepro.paper1.data import DatasetSpec, sample_dataset
from aimrepro.paper2.sgd import ProblemSpec, SGDSettings, SGDRun, initial_problem, _numpy_gradients

needs_torch = pytest.mark.skipif(not backends.available("torch"),
                                 reason="PyTorch is not installed: pip install -e '.[gpu]'")
TOL = 1e-10


def relative(a, b) -> float:
    a, b = np.asarray(a), np.asarray(b)
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300))


def test_the_backend_is_checked():
    assert backends.make_backend(None) is backends.NUMPY
    assert backends.make_backend({"name": "numpy", "dtype": "float64"}) == backends.NUMPY
    with pytest.raises(ValueError, match="backend must be one of"):
        backends.make_backend("jax")
    assert backends.make_backend({"name": "numpy", "dtype": "float32"}).float_type is np.float32
    with pytest.raises(ValueError, match="numpy backend computes on the CPU"):
        backends.make_backend({"name": "numpy", "device": "cuda"})
    with pytest.raises(ValueError, match="backend dtype must be one of"):
        backends.make_backend({"name": "numpy", "dtype": "float16"})
    with pytest.raises(ValueError, match="unknown keys"):
        backends.make_backend({"name": "numpy", "threads": 2})


@needs_torch
@pytest.mark.parametrize("param, link, T, extra", [
    ("tied", "softmax", 2, {}), ("tied", "h2", 3, {}), ("direct", "h2", 2, {}),
    ("direct", "softmax", 3, {}), ("untied", "h2", 2, {"teacher_mean": 1.0}), ("untied", "h3", 2, {}),
])
def test_one_sgd_step_equals_numpy(param, link, T, extra):
    spec = ProblemSpec(param, link, T, 24, **extra)
    student, teacher, rng = initial_problem(spec, 4)
    X = rng.standard_normal((32, T, 24))
    losses, grads = _numpy_gradients(student, teacher, spec.loss(), X)
    from aimrepro.backends import torch_kernels

    losses_t, grads_t = torch_kernels.sgd_gradients(backends.Backend("torch", device="cpu"), student, teacher,
                                                    spec.loss(), X)
    assert relative(losses_t, losses) < TOL
    assert len(grads_t) == len(grads) and all(relative(a, b) < TOL for a, b in zip(grads_t, grads))


@pytest.mark.parametrize("backend, tol", [
    pytest.param({"name": "torch", "device": "cpu"}, TOL, marks=needs_torch, id="torch"),
    # single precision (tests/unit/test_precision.py): float32's 6e-8, a few digits lost in the sums
    pytest.param({"name": "numpy", "dtype": "float32"}, 1e-5, id="numpy-float32"),
])
@pytest.mark.parametrize("param, link", [("tied", "softmax"), ("direct", "h2"), ("untied", "h2")])
def test_an_sgd_run_follows_the_numpy_trajectory(param, link, backend, tol):
    spec = ProblemSpec(param, link, 2, 20)
    settings = SGDSettings(lr=0.05, batch=32, horizon=0.5, n_records=6)
    reference = SGDRun(spec, settings, 2).run()
    accelerated = SGDRun(spec, settings, 2).run(backend=backend)
    assert not reference.blew_up and reference.order.shape == accelerated.order.shape
    assert relative(accelerated.order, reference.order) < tol
    # and it moved: the agreement is not that of the initial state
    assert relative(reference.order[-1], reference.order[0]) > 1e-3


@needs_torch
@pytest.mark.parametrize("T", [2, 4])
def test_the_gd_block_kernel_and_a_gd_run_equal_numpy(T):
    d, r, n = 12, 6, 60
    rng = np.random.default_rng(T)
    X = rng.standard_normal((n, T, d))
    W_star = rng.standard_normal((d, r))
    y = apply_link(indices_from_factor(X, W_star, 1 / math.sqrt(r * d)), "softmax", beta=1.3)
    W0 = gd.initial_factors(d, r, [1, 2, 3])
    torch_cpu = backends.Backend("torch", device="cpu")
    kernel = gd._block_kernel(torch_cpu, X.reshape(n * T, d), y, n, T, 1.3)
    loss_t, W_sq_t, grad_t = kernel(W0, True)
    loss, grad = gd.loss_and_gradient(W0, X, y, beta=1.3)
    assert relative(loss_t, loss) < TOL and relative(grad_t, grad) < TOL
    assert relative(W_sq_t, np.sum(W0 ** 2, axis=(1, 2))) < TOL
    settings = gd.GDSettings(lr=0.05, steps=20)
    reference = gd.train_students(X, y, W0, settings, beta=1.3, chunk=2)
    accelerated = gd.train_students(X, y, W0, settings, beta=1.3, chunk=2, threads=2, backend=torch_cpu)
    assert relative(accelerated.W, reference.W) < TOL
    assert relative(accelerated.loss_curve, reference.loss_curve) < TOL
    assert accelerated.settings["backend"] == "torch"


@needs_torch
def test_an_amp_run_equals_numpy():
    dataset = sample_dataset(DatasetSpec("softmax", 2, 0.5, 20, 1.0, 0, 10, beta=1.0), 3)
    channel = make_channel("softmax", T=2, beta=1.0)
    options = {"damping": 0.5, "tol": 1e-12, "max_iter": 8, "S_true": dataset.S}
    reference = amp.gamp_rie(dataset.X, dataset.y, channel, 0.5, **options)
    accelerated = amp.gamp_rie(dataset.X, dataset.y, channel, 0.5, backend={"name": "torch", "device": "cpu"},
                               **options)
    assert reference.iterations == accelerated.iterations == 8
    # eigenvectors of (nearly) equal eigenvalues may differ, the estimate S_hat may not
    assert relative(accelerated.S_hat, reference.S_hat) < TOL
    assert relative(accelerated.trace["error"], reference.trace["error"]) < TOL
    assert reference.trace["error"][-1] < 0.5 * reference.trace["error"][0]
