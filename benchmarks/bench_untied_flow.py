"""Cost of the stiff untied population flow: explicit RK45 against the rank-one ROS2 W-method.

Run:  python benchmarks/bench_untied_flow.py [--dims 100 200 400]

The problem of Figure S4 at quick scale (``docs/paper2.md`` §5.3): one token, link
h₂, teacher mean m₂ = 2, student mean m(0) = 0.5, ρ = 1, unit variance,
integrated over τ ∈ [0, 0.1] from the replicate-0 initial state, on one
core (BLAS/OpenMP threads pinned to 1 before numpy loads).  The fast
eigenvalue of the flow is about d (t^A + t^B) ∂²Φ/∂m² ≈ 20 d here, so RK45
needs O(d) steps per unit τ; ROS2 (:func:`aimrepro.numerics.ode.solve_ros2`)
treats that rank-one direction implicitly and needs a number of steps set by
the slow dynamics.

Reports CPU seconds, right-hand-side evaluations and the largest difference
of the symmetric overlap between the two (RK45 at rtol 1e-6, ROS2 at 1e-4,
the configured tolerances of the quick and paper presets).  Writes
``benchmarks/results/untied_flow.json``.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from aimrepro.paper2.population import Potential
from aimrepro.paper2.sgd import ProblemSpec, initial_problem
from aimrepro.paper2.untied.slow import solve_population_flow

SETTINGS = (("RK45", 1e-6), ("ROS2", 1e-4))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dims", type=int, nargs="+", default=[100, 200, 400])
    args = parser.parse_args()
    results = []
    for d in args.dims:
        spec = ProblemSpec("untied", "h2", 1, d, rho=1.0, student_rho=1.0, teacher_mean=2.0,
                           init_mean=0.5)
        student, teacher, _ = initial_problem(spec, 0)
        potential = Potential(spec.loss(), 1)
        times = np.linspace(0.0, 0.1, 31)
        runs = {}
        for method, rtol in SETTINGS:
            start = time.process_time()
            flow = solve_population_flow(student.U, student.V, teacher, potential, times,
                                         method=method, rtol=rtol, atol=1e-3 * rtol)
            runs[method] = {"cpu_seconds": time.process_time() - start,
                            "nfev": int(flow.extra["nfev"][0]), "rtol": rtol,
                            "overlap": flow.symmetric_overlap}
        diff = float(np.max(np.abs(runs["RK45"]["overlap"] - runs["ROS2"]["overlap"])))
        row = {"d": d, "max_overlap_difference": diff,
               **{f"{m}_{k}": v for m, r in runs.items() for k, v in r.items()
                  if k != "overlap"}}
        results.append(row)
        print(f"d={d}: RK45 {row['RK45_cpu_seconds']:.1f} s ({row['RK45_nfev']} rhs), "
              f"ROS2 {row['ROS2_cpu_seconds']:.1f} s ({row['ROS2_nfev']} rhs), "
              f"max |Δs| = {diff:.1e}", flush=True)
    out = Path(__file__).parent / "results" / "untied_flow.json"
    out.write_text(json.dumps({"benchmark": "untied population flow, tau in [0, 0.1]",
                               "python": platform.python_version(), "numpy": np.__version__,
                               "machine": platform.machine(), "threads": 1,
                               "results": results}, indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
