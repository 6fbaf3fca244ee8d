"""The kernels of the numpy backend against the PyTorch one, side by side, on this machine.

Run:  python benchmarks/bench_backends.py [--quick] [--threads N]

Four kernels (``aimrepro.backends``), each timed with numpy and, if PyTorch
is installed (``pip install -e '.[gpu]'``), with PyTorch on its default
device: a GPU when there is one, else the CPU.  The same script runs
unchanged on a GPU machine and prints both columns.

1. ``sgd_d100``: one online-SGD step of tied attention, softmax T = 2,
   ρ = ½, d = 100, B = 256 (drawing the batch included: numpy draws it on
   the host for both backends, so that a seed gives the same data);
2. ``sgd_d400``: the same at d = 400, B = 512 (paper 2, Figure 1);
3. ``gd_d200``: one GD step (forward and backward, no Adam) of a block of
   8 students at the paper's size, d = 200, T = 2, n = 12 000 (α = 0.3);
4. ``amp_d100``: one GAMP-RIE iteration, softmax T = 2, ρ = ½, d = 100,
   n = 27 000 (α = 2.7).

Each time is the best of several repeats of CPU time (``time.process_time``,
all threads of the process) and of wall time (after a device synchronise);
the machine is shared, so the best is the least disturbed.  numpy and PyTorch
run back to back, with ``--threads`` BLAS/PyTorch threads (default 1).  The
script checks that both give the same numbers (relative 1e-10) and writes
``benchmarks/results/backends.json``.
"""

from __future__ import annotations

import argparse
import os
import sys

_THREADS = "1"
if "--threads" in sys.argv:
    _THREADS = sys.argv[sys.argv.index("--threads") + 1]
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = _THREADS

import json  # noqa: E402
import math  # noqa: E402
import platform  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from aimrepro import backends  # noqa: E402
from aimrepro.paper1 import amp, gd  # noqa: E402
from aimrepro.paper1.channels import make_channel  # noqa: E402
from aimrepro.paper1.data import DatasetSpec, sample_dataset  # noqa: E402
from aimrepro.paper2.sgd import ProblemSpec, _numpy_gradients, initial_problem  # noqa: E402


def _synchronise(backend) -> None:
    if not backend.is_numpy and backend.resolved_device().startswith("cuda"):
        import torch

        torch.cuda.synchronize()


def _best(function, backend, calls: int, repeats: int) -> tuple[float, float]:
    """Best CPU and wall seconds per call over ``repeats`` runs of ``calls`` calls (one warm-up call first)."""
    function()
    cpu = wall = math.inf
    for _ in range(repeats):
        _synchronise(backend)
        c0, w0 = time.process_time(), time.perf_counter()
        for _ in range(calls):
            function()
        _synchronise(backend)
        cpu = min(cpu, (time.process_time() - c0) / calls)
        wall = min(wall, (time.perf_counter() - w0) / calls)
    return cpu, wall


def _relative(a, b) -> float:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return float(np.max(np.abs(a - b)) / np.max(np.abs(b)))


def sgd_case(d: int, B: int, backend, calls: int, repeats: int):
    spec = ProblemSpec("tied", "softmax", 2, d, rho=0.5, normalisation="aim")
    student, teacher, rng = initial_problem(spec, 0)
    loss = spec.loss()
    if backend.is_numpy:
        def gradients(X):
            return _numpy_gradients(student, teacher, loss, X)
    else:
        from aimrepro.backends import torch_kernels

        def gradients(X):
            return torch_kernels.sgd_gradients(backend, student, teacher, loss, X)

    def step():
        X = rng.standard_normal((B, 2, d))
        batch_losses, (grad,) = gradients(X)
        float(np.mean(batch_losses))
        student.W -= 0.01 * grad

    check = np.random.default_rng(1).standard_normal((B, 2, d))
    return _best(step, backend, calls, repeats), gradients(check)[1][0]


def gd_case(backend, calls: int, repeats: int):
    spec = DatasetSpec("softmax", 2, 0.5, 200, 0.3, 0, 10, beta=1.0)
    dataset = sample_dataset(spec, 1)
    X = np.asarray(dataset.X, dtype=np.float64)
    n, T, d = X.shape
    W = gd.initial_factors(d, spec.r, gd.student_seeds(1, spec, 8))
    kernel = gd._block_kernel(backend, X.reshape(n * T, d), dataset.y, n, T, 1.0)
    return _best(lambda: kernel(W, True), backend, calls, repeats), kernel(W, True)[2]


def amp_case(backend, calls: int, repeats: int):
    spec = DatasetSpec("softmax", 2, 0.5, 100, 2.7, 0, 10, beta=1.0)
    dataset = sample_dataset(spec, 1)
    data = amp.amp_data(dataset.X, dataset.y)
    channel = make_channel("softmax", T=2, beta=1.0)
    ops = amp._kernels(backend, data.X)
    # the state after two iterations: messages and variances of a running iteration
    state = amp.initial_state(data.d, 0.5)
    for _ in range(2):
        state = amp._amp_step(state, data, channel, 0.5, ops=ops)
    timing = _best(lambda: amp._amp_step(state, data, channel, 0.5, ops=ops), backend, calls, repeats)
    return timing, amp._amp_step(state, data, channel, 0.5, ops=ops).S_hat


CASES = {
    "sgd_d100": ("tied SGD step, d=100, B=256", lambda b, q: sgd_case(100, 256, b, 20 if q else 200, 2 if q else 5)),
    "sgd_d400": ("tied SGD step, d=400, B=512", lambda b, q: sgd_case(400, 512, b, 3 if q else 20, 2 if q else 5)),
    "gd_d200": ("GD step of 8 students, d=200, n=12000", lambda b, q: gd_case(b, 1, 2 if q else 4)),
    "amp_d100": ("AMP iteration, d=100, n=27000", lambda b, q: amp_case(b, 1, 2 if q else 5)),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats (a smoke run)")
    parser.add_argument("--threads", type=int, default=1, help="BLAS and PyTorch threads (default 1)")
    parser.add_argument("--cases", nargs="+", choices=sorted(CASES), default=list(CASES))
    args = parser.parse_args()
    names = ["numpy"] + (["torch"] if backends.available("torch") else [])
    if "torch" in names:
        import torch

        torch.set_num_threads(args.threads)
    load_start = os.getloadavg()
    results = []
    for case in args.cases:
        label, run = CASES[case]
        row = {"case": case, "what": label}
        reference = None
        for name in names:
            backend = backends.Backend(name)
            (cpu, wall), value = run(backend, args.quick)
            row[name] = {"cpu_ms": 1e3 * cpu, "wall_ms": 1e3 * wall, "device": backend.resolved_device()}
            if reference is None:
                reference = value
            else:
                row[name]["relative_difference"] = _relative(value, reference)
                if row[name]["relative_difference"] > 1e-10:
                    raise AssertionError(f"{case}: {name} differs from numpy by {row[name]['relative_difference']:.2e}")
        results.append(row)
        print(json.dumps(row), flush=True)
    load_end = os.getloadavg()
    versions = {"numpy": np.__version__}
    if "torch" in names:
        versions["torch"] = torch.__version__
    record = {"machine": platform.machine(), "processor": platform.processor(), "python": platform.python_version(),
              "versions": versions, "threads": args.threads, "load_average_at_start": load_start,
              "load_average_at_end": load_end, "results": results}
    out = Path(__file__).resolve().parent / "results" / "backends.json"
    out.write_text(json.dumps(record, indent=2) + "\n")
    header = f"{'kernel':<40}" + "".join(f"{name + ' cpu ms':>14}{name + ' wall ms':>15}" for name in names)
    print(header)
    for row in results:
        print(f"{row['what']:<40}" + "".join(f"{row[name]['cpu_ms']:14.3f}{row[name]['wall_ms']:15.3f}"
                                             for name in names))
    devices = ", ".join(f"{name} on {results[0][name]['device']}" for name in names) if results else ""
    print(f"{devices}; {args.threads} thread(s); load average {load_start[0]:.1f} -> {load_end[0]:.1f}; wrote {out}")


if __name__ == "__main__":
    main()
