"""Time and memory of GAMP-RIE at the paper's largest hardmax sizes.

Run:  python benchmarks/bench_amp.py [--quick]

Each case runs in its own child process on one core (BLAS/OpenMP threads
pinned to 1 before numpy loads), so that its peak resident memory
(``resource.getrusage(...).ru_maxrss``) is its own:

1. hardmax T = 2, d = 100, ρ = 0.5, α = 2.7 (n = 27 000 sequences, the last
   published AMP point): sampling the dataset, then GAMP-RIE for a fixed
   number of iterations; time per iteration and peak memory (resident and
   numpy's allocations through ``tracemalloc``);
2. the same at α = 8 (n = 80 000, the end of the published script's grid,
   where the published implementation needs 25.6 GB per data tensor).

The published implementation materialises the sensing tensor
X ∈ R^{n×d×d×T×T} in float64 for the training and for the test set:
8 n d² T² bytes each (``docs/paper1.md`` §9, "Efficiency"); the table prints that
figure next to ours.  Writes ``benchmarks/results/amp.json``.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import resource  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

CASES = {
    "alpha2.7": {"alpha": 2.7, "iterations": 10},
    "alpha8": {"alpha": 8.0, "iterations": 3},
}
D, T, RHO, TEST_SAMPLES = 100, 2, 0.5, 2000


def one_case(name: str, iterations: int | None) -> dict:
    """Run one case in this process and return its measurements."""
    from aimrepro.paper1 import amp
    from aimrepro.paper1.channels import make_channel
    from aimrepro.paper1.data import DatasetSpec, sample_dataset

    case = CASES[name]
    n_iter = iterations or case["iterations"]
    spec = DatasetSpec("hardmax", T, RHO, D, case["alpha"], 0, TEST_SAMPLES)
    tracemalloc.start()
    start = time.perf_counter()
    dataset = sample_dataset(spec, 1)
    sampling = time.perf_counter() - start
    _, sampling_peak = tracemalloc.get_traced_memory()
    tracemalloc.reset_peak()

    channel = make_channel("hardmax", T=T)
    times = []
    last = [time.perf_counter()]

    def tick(state):
        now = time.perf_counter()
        times.append(now - last[0])
        last[0] = now

    last[0] = time.perf_counter()
    # tol = 0: run exactly n_iter iterations
    result = amp.gamp_rie(dataset.X, dataset.y, channel, RHO, tol=1e-300, max_iter=n_iter,
                          S_true=dataset.S, callback=tick)
    _, amp_peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    # the first iteration pays for converting the float32 tokens to float64
    steady = times[1:] if len(times) > 1 else times
    return {
        "case": name, "alpha": case["alpha"], "n": spec.n, "d": D, "T": T, "rho": RHO,
        "iterations": result.iterations, "status": result.status, "error_after": result.error,
        "sampling_seconds": sampling,
        "seconds_per_iteration": float(np.median(steady)),
        "seconds_per_iteration_max": float(np.max(steady)),
        "first_iteration_seconds": times[0],
        "tracemalloc_peak_mb_sampling": sampling_peak / 1e6,
        "tracemalloc_peak_mb_amp": amp_peak / 1e6,
        "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "published_bytes_per_tensor_gb": 8 * spec.n * D * D * T * T / 1e9,
        "dataset_mb_on_disk": (4 * (spec.n + TEST_SAMPLES) * T * D) / 1e6,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer iterations (a smoke run)")
    parser.add_argument("--one", choices=sorted(CASES), help=argparse.SUPPRESS)
    parser.add_argument("--iterations", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one_case(args.one, args.iterations)))
        return

    results = []
    for name in CASES:
        command = [sys.executable, __file__, "--one", name]
        if args.quick:
            command += ["--iterations", "2"]
        done = subprocess.run(command, capture_output=True, text=True, check=True)
        results.append(json.loads(done.stdout))

    load = os.getloadavg()
    record = {"machine": platform.machine(), "python": platform.python_version(), "numpy": np.__version__,
              "cores_used": 1, "load_average_at_end": load, "cases": results}
    out = Path(__file__).parent / "results" / "amp.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(record, indent=2) + "\n")
    print(f"{'case':>9} {'n':>6} {'s/iter':>7} {'peak RSS MB':>11} {'numpy peak MB':>13} "
          f"{'published GB/tensor':>19}")
    for r in results:
        print(f"{r['case']:>9} {r['n']:>6} {r['seconds_per_iteration']:7.3f} {r['maxrss_mb']:11.0f} "
              f"{r['tracemalloc_peak_mb_amp']:13.0f} {r['published_bytes_per_tensor_gb']:19.1f}")
    print(f"load average at the end: {load[0]:.2f}; wrote {out}")


if __name__ == "__main__":
    main()
