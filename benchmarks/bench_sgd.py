"""Time per online-SGD step of tied attention: factor contractions against a naive implementation.

Run:  python benchmarks/bench_sgd.py [--quick]

Tied student S = W Wᵀ, T = 2 tokens, softmax (β = 1) output, MSE loss,
AIM-scaled teacher and student (ρ = ½), on one core (BLAS/OpenMP threads
pinned to 1 before numpy loads).  Two sizes: d = 100 with B = 256 and
d = 400 with B = 512 (the paper's Figure 1 settings, ``docs/paper2.md`` §6).

* **aimrepro**: :class:`aimrepro.paper2.sgd.TiedStudent` — indices and
  gradient are contractions of the tokens with W, O(B T d r) per step
  (``docs/paper2.md`` §7).
* **naive**: forms S = W Wᵀ, computes each sample's indices x_aᵀ S x_b and its
  d×d gradient Σ_ab g_ab (x_a x_bᵀ − δ_ab I)/√d, averages them and multiplies
  by W: O(B T² d²) per step plus B per-sample d×d matrices.

Both include drawing the batch of tokens and the teacher's labels; the
benchmark first checks that both give the same gradient (relative 1e-10).
It also times whole runs of :func:`aimrepro.paper2.sgd.run_sgd` (``loop``:
per step, records included).  Times are CPU time (``time.process_time``),
the best of several repeats: the machine is shared.  Writes
``benchmarks/results/sgd.json`` (or ``--output FILE``, to time another
version of the package through ``PYTHONPATH``) and prints a table.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import platform  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from aimrepro.paper2.sgd import ProblemSpec, SGDSettings, initial_problem, run_sgd, step_time  # noqa: E402

SIZES = ((100, 256), (400, 512))
T = 2
LR = 0.01


def naive_gradient(W: np.ndarray, X: np.ndarray, labels: np.ndarray, loss) -> np.ndarray:
    """∇_W of the batch-mean loss through S and per-sample d×d gradient matrices."""
    B, T_, d = X.shape
    S = W @ W.T
    trace = np.trace(S)
    grad_S = np.zeros((d, d))
    for x, y in zip(X, labels):                   # one sample at a time
        G = (x @ S @ x.T - trace * np.eye(T_)) / math.sqrt(d)
        g = loss.student_gradient(G, y)[1]
        per_sample = np.zeros((d, d))
        for a in range(T_):
            for b in range(T_):
                per_sample += g[a, b] * np.outer(x[a], x[b])
        per_sample -= np.trace(g) * np.eye(d)
        grad_S += per_sample / math.sqrt(d)
    grad_S /= B
    return (grad_S + grad_S.T) @ W


def time_steps(step, n_steps: int, repeats: int = 5) -> float:
    """Best over ``repeats`` of the CPU seconds per call of ``n_steps`` calls."""
    best = math.inf
    for _ in range(repeats):
        start = time.process_time()
        for _ in range(n_steps):
            step()
        best = min(best, (time.process_time() - start) / n_steps)
    return best


def time_loop(d: int, B: int, n_steps: int, repeats: int = 5) -> float:
    """CPU seconds per step of ``run_sgd`` over ``n_steps`` steps (two records), best of ``repeats``."""
    spec = ProblemSpec("tied", "softmax", T, d, rho=0.5, normalisation="aim")
    dt = step_time("tied", LR, d)
    settings = SGDSettings(lr=LR, batch=B, horizon=n_steps * dt, n_records=2)
    best = math.inf
    for _ in range(repeats):
        student, teacher, rng = initial_problem(spec, 0)
        start = time.process_time()
        run_sgd(student, teacher, spec.loss(), T, settings, rng)
        best = min(best, (time.process_time() - start) / n_steps)
    return best


def bench_size(d: int, B: int, *, n_fast: int, n_naive: int) -> dict:
    spec = ProblemSpec("tied", "softmax", T, d, rho=0.5, normalisation="aim")
    student, teacher, rng = initial_problem(spec, 0)
    loss = spec.loss()

    def labels(X):
        return loss.teacher.apply(teacher.indices(X, centered=True))

    # the two gradients agree on one batch
    X = rng.standard_normal((B, T, d))
    y = labels(X)
    _, g = loss.student_gradient(student.indices(X), y)
    fast = student.gradient(X, g)[0]
    slow = naive_gradient(student.W, X, y, loss)
    rel = float(np.linalg.norm(fast - slow) / np.linalg.norm(fast))
    if rel > 1e-10:
        raise AssertionError(f"gradients differ at d = {d}: relative {rel:.2e}")

    def step_fast():
        Xb = rng.standard_normal((B, T, d))
        _, gb = loss.student_gradient(student.indices(Xb), labels(Xb))
        student.W -= LR * student.gradient(Xb, gb)[0]

    def step_naive():
        Xb = rng.standard_normal((B, T, d))
        student.W -= LR * naive_gradient(student.W, Xb, labels(Xb), loss)

    t_fast = time_steps(step_fast, n_fast)
    t_naive = time_steps(step_naive, n_naive, repeats=2)
    t_loop = time_loop(d, B, n_fast)
    return {"d": d, "batch": B, "r": student.W.shape[1], "T": T,
            "aimrepro_ms_per_step": 1e3 * t_fast, "naive_ms_per_step": 1e3 * t_naive,
            "run_sgd_ms_per_step": 1e3 * t_loop,
            "speedup": t_naive / t_fast, "gradient_rel_diff": rel,
            "steps_timed": {"aimrepro": n_fast, "naive": n_naive}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer timed steps")
    parser.add_argument("--output", type=Path, default=Path(__file__).resolve().parent / "results" / "sgd.json",
                        help="where to write the JSON (default benchmarks/results/sgd.json)")
    args = parser.parse_args()
    load_start = os.getloadavg()
    results = []
    for d, B in SIZES:
        n_fast = 20 if args.quick else (200 if d <= 100 else 40)
        n_naive = 1 if args.quick else (10 if d <= 100 else 3)
        results.append(bench_size(d, B, n_fast=n_fast, n_naive=n_naive))
    record = {"benchmark": "tied T=2 softmax SGD step", "python": platform.python_version(),
              "numpy": np.__version__, "machine": platform.machine(), "threads": 1,
              "timing": "CPU time, best of repeats", "load_average_at_start": load_start,
              "load_average_at_end": os.getloadavg(), "results": results}
    out = args.output
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(record, indent=2) + "\n")
    print(f"{'d':>5} {'B':>5} {'aimrepro ms/step':>17} {'run_sgd ms/step':>16} {'naive ms/step':>14} {'speedup':>8}")
    for r in results:
        print(f"{r['d']:>5} {r['batch']:>5} {r['aimrepro_ms_per_step']:>17.2f} {r['run_sgd_ms_per_step']:>16.2f} "
              f"{r['naive_ms_per_step']:>14.1f} {r['speedup']:>8.0f}")
    print(f"load average {load_start[0]:.1f} -> {record['load_average_at_end'][0]:.1f}; wrote {out}")


if __name__ == "__main__":
    main()
