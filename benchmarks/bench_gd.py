"""Time of one full-batch Adam step of GD on the tied student, K replicas batched vs K single runs.

Run:  python benchmarks/bench_gd.py [--quick]

Cases (softmax, ρ = 0.5, one core: BLAS/OpenMP threads pinned to 1 before
numpy loads; each case in its own child process, so that its peak resident
memory is its own):

1. ``paper``: d = 200, T = 2, α = 0.3, i.e. n = 12 000 sequences (the
   largest GD point of paper 1, Figure 2 right, at T = 2), K = 32 students;
2. ``small_n``: d = 200, T = 2, α = 0.0012, n = 48 (the smallest GD point),
   K = 32: the two GEMMs are small, the d × r arrays of 32 replicas are not;
3. ``quick``: d = 50, T = 2, α = 0.3, n = 750, K = 8 (the largest T = 2 job
   of the quick scale), where a single run's step is mostly interpreter
   overhead.

For each case: ``aimrepro.paper1.gd.train_students`` on all K initial factors at once
(blocks of ``gd.replica_chunk`` students, one GEMM per student), and K runs of one
student each from the same factors, one after the other.  The time of a step
(forward, backward and Adam update) is the CPU time (``time.process_time``)
between the training callbacks, the smallest over the steps after the first
(the machine is shared: the least disturbed step); the sequential time is the
sum over the K single runs of their fastest step.  The benchmark reports the
largest relative difference between the batched and the single factors
(zero: every student keeps its own GEMM; a stacked version was 2e-13 apart)
and, where ``train_students`` takes ``threads``, whether two threads give the
same bits as one.

``--output FILE`` writes elsewhere than ``benchmarks/results/gd.json`` (to
time another version of the package with the same script, e.g. through
``PYTHONPATH``).
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import importlib.util  # noqa: E402
import inspect  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import resource  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

CASES = {
    "paper": {"d": 200, "alpha": 0.3, "K": 32, "steps": 4},
    "small_n": {"d": 200, "alpha": 0.0012, "K": 32, "steps": 20},
    "quick": {"d": 50, "alpha": 0.3, "K": 8, "steps": 40},
}
T, RHO = 2, 0.5


def _step_times(X, y, W0, steps, **options):
    from aimrepro.paper1.gd import GDSettings, train_students

    stamps = []
    result = train_students(X, y, W0, GDSettings(lr=0.1, steps=steps, trace_every=0),
                            callback=lambda step, loss: stamps.append(time.process_time()), **options)
    # the callback after step 0 closes the first step; drop it (first-touch of the buffers)
    intervals = np.diff(stamps)[1:-1]  # the last interval is the final forward only
    return result, intervals


def one_case(name: str, steps: int | None) -> dict:
    """Run one case in this process and return its measurements."""
    from aimrepro.paper1.data import DatasetSpec, sample_dataset
    from aimrepro.paper1.gd import initial_factors, replica_chunk, student_seeds, train_students

    case = CASES[name]
    n_steps = steps or case["steps"]
    D, K = case["d"], case["K"]
    spec = DatasetSpec("softmax", T, RHO, D, case["alpha"], 0, 10, beta=1.0)
    dataset = sample_dataset(spec, 1)
    X = np.asarray(dataset.X, dtype=np.float64)
    W0 = initial_factors(D, spec.r, student_seeds(1, spec, K))

    batched, batched_steps = _step_times(X, dataset.y, W0, n_steps)
    single_best, difference = [], 0.0
    for k in range(K):
        alone, alone_steps = _step_times(X, dataset.y, W0[k:k + 1], n_steps)
        single_best.append(float(np.min(alone_steps)))
        difference = max(difference, float(np.max(np.abs(alone.W[0] - batched.W[k])) / np.max(np.abs(alone.W[0]))))
    threads = {}
    if "threads" in inspect.signature(train_students).parameters:
        two, _ = _step_times(X, dataset.y, W0, 2, threads=2)
        one, _ = _step_times(X, dataset.y, W0, 2, threads=1)
        threads = {"same_bits_with_2_threads": bool(np.array_equal(one.W, two.W))}
    batched_step = float(np.min(batched_steps))
    sequential_step = float(np.sum(single_best))
    return {
        "case": name, "alpha": case["alpha"], "n": spec.n, "d": D, "T": T, "r": spec.r, "K": K,
        "steps_timed": len(batched_steps), "chunk": replica_chunk(spec.n, T, spec.r, K),
        "batched_cpu_seconds_per_step": batched_step,
        "batched_cpu_seconds_per_step_median": float(np.median(batched_steps)),
        "sequential_cpu_seconds_per_step": sequential_step,
        "single_run_cpu_seconds_per_step": float(np.median(single_best)),
        "speedup": sequential_step / batched_step,
        "max_relative_difference_to_single_runs": difference,
        **threads,
        "flops_per_step_gemm": 4.0 * K * spec.n * T * D * spec.r,
        "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer steps (a smoke run)")
    parser.add_argument("--one", choices=sorted(CASES), help=argparse.SUPPRESS)
    parser.add_argument("--steps", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--output", type=Path, default=Path(__file__).parent / "results" / "gd.json",
                        help="where to write the JSON (default benchmarks/results/gd.json)")
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one_case(args.one, args.steps)))
        return

    load_start = os.getloadavg()
    results = []
    for name in CASES:
        command = [sys.executable, __file__, "--one", name]
        if args.quick:
            command += ["--steps", "3"]
        done = subprocess.run(command, capture_output=True, text=True, check=True)
        results.append(json.loads(done.stdout))
    load = os.getloadavg()
    record = {"machine": platform.machine(), "python": platform.python_version(), "numpy": np.__version__,
              "aimrepro": importlib.util.find_spec("aimrepro").origin,
              "cores_used": 1, "load_average_at_start": load_start, "load_average_at_end": load,
              "cases": results}
    out = args.output
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(record, indent=2) + "\n")
    print(f"{'case':>8} {'d':>4} {'n':>6} {'K':>3} {'batched cpu s/step':>18} {'K singles':>10} {'speed-up':>8} "
          f"{'GFLOP/s':>7} {'rel. diff':>9} {'peak RSS MB':>11}")
    for r in results:
        print(f"{r['case']:>8} {r['d']:>4} {r['n']:>6} {r['K']:>3} {r['batched_cpu_seconds_per_step']:18.4f} "
              f"{r['sequential_cpu_seconds_per_step']:10.4f} {r['speedup']:8.2f} "
              f"{r['flops_per_step_gemm'] / r['batched_cpu_seconds_per_step'] / 1e9:7.1f} "
              f"{r['max_relative_difference_to_single_runs']:9.1e} {r['maxrss_mb']:11.0f}")
    print(f"load average at start {load_start[0]:.2f}, at the end {load[0]:.2f}; wrote {out}")


if __name__ == "__main__":
    main()
