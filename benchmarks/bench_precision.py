"""CPU time per step in float32 against float64: GD, online SGD (tied, direct, untied) and GAMP-RIE.

Run:  python benchmarks/bench_precision.py [--quick] [--only gd|sgd|amp]

Each case is a kernel family at a size the pipeline runs (the quick scale's
costliest jobs and the paper scale's), on one core (BLAS/OpenMP threads
pinned to 1 before numpy loads), timed in CPU time (``time.process_time``)
with the two float types interleaved, repeat after repeat, and the fastest
repeat kept: the machine is shared, and the least disturbed repeat is the
closest to the kernel's own cost.  ``backend.dtype`` selects the type
(``aimrepro.backends.Backend``); the numbers computed are the package's own
(``docs/design.md``, "Precision").

* ``gd``: one Adam step of K students (:func:`aimrepro.paper1.gd.train_students`):
  the time between the training callbacks, the fastest step of a repeat;
* ``sgd``: :func:`aimrepro.paper2.sgd.run_sgd` over a fixed number of steps with two
  records, per step, and, apart, the batch's normals alone (drawn in float64
  whatever the type, so that a seed gives both types the same tokens): the
  part of a step float32 cannot shorten;
* ``amp``: GAMP-RIE iterations (:func:`aimrepro.paper1.amp.gamp_rie`, a fixed count
  with an unreachable tolerance), per iteration.

Writes ``benchmarks/results/precision.json`` (``--output`` elsewhere) and prints
a table.  The numbers and what they decide: ``docs/benchmarks.md``, "Single precision".
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

from aimrepro.backends import Backend  # noqa: E402

DTYPES = ("float64", "float32")

#: GD: softmax, rho = 0.5, the students of one job (K) on one dataset.
GD_CASES = {
    "quick T=2 (largest alpha)": {"T": 2, "d": 50, "alpha": 0.3, "K": 8, "steps": 12},
    "quick trend T=4, d=100": {"T": 4, "d": 100, "alpha": 0.0085, "K": 32, "steps": 12},
    "paper T=2 (largest alpha)": {"T": 2, "d": 200, "alpha": 0.3, "K": 32, "steps": 3},
}

#: SGD: one token unless T says otherwise; untied at rho = 1, the others at rho = 0.5.
SGD_CASES = {
    "tied h2, quick (Fig. 2)": {"param": "tied", "link": "h2", "T": 1, "d": 100, "B": 512, "steps": 300},
    "tied softmax T=2, quick (Fig. 1)": {"param": "tied", "link": "softmax", "T": 2, "d": 100, "B": 256,
                                         "steps": 300},
    "direct h2, quick (Fig. S3, d=200)": {"param": "direct", "link": "h2", "T": 1, "d": 200, "B": 256,
                                          "steps": 200},
    "untied h2, quick (Fig. S5, d=200)": {"param": "untied", "link": "h2", "T": 1, "d": 200, "B": 256,
                                          "steps": 200},
    "tied h2, paper (Fig. 2)": {"param": "tied", "link": "h2", "T": 1, "d": 400, "B": 512, "steps": 60},
    "tied softmax T=2, paper (Fig. 1)": {"param": "tied", "link": "softmax", "T": 2, "d": 400, "B": 512,
                                         "steps": 40},
    "direct h2, paper (Fig. S3, d=400)": {"param": "direct", "link": "h2", "T": 1, "d": 400, "B": 512,
                                          "steps": 40},
    "untied h2, paper (Fig. 3, d=800)": {"param": "untied", "link": "h2", "T": 1, "d": 800, "B": 4096,
                                         "steps": 4},
}

#: AMP: one dataset per case (test set of 10), a fixed number of iterations.
AMP_CASES = {
    "quick hardmax T=2, rho=0.5, d=50": {"channel": "hardmax", "T": 2, "rho": 0.5, "d": 50, "alpha": 0.3,
                                        "iterations": 40},
    "quick softmax T=3 trend, d=100": {"channel": "softmax", "T": 3, "rho": 0.5, "d": 100, "alpha": 0.06,
                                      "iterations": 20},
    "paper softmax T=2, d=150": {"channel": "softmax", "T": 2, "rho": 0.5, "d": 150, "alpha": 0.25,
                                "iterations": 10},
    "paper hardmax T=2, d=100": {"channel": "hardmax", "T": 2, "rho": 0.5, "d": 100, "alpha": 2.7,
                                 "iterations": 10},
}


def _interleaved(measure, repeats: int) -> dict[str, float]:
    """The fastest of ``repeats`` measurements per float type, the types alternating."""
    best = {dtype: math.inf for dtype in DTYPES}
    for _ in range(repeats):
        for dtype in DTYPES:
            best[dtype] = min(best[dtype], measure(dtype))
    return best


def gd_case(case: dict, repeats: int, quick: bool) -> dict:
    from aimrepro.paper1.data import DatasetSpec, sample_dataset
    from aimrepro.paper1.gd import GDSettings, initial_factors, student_seeds, train_students

    spec = DatasetSpec("softmax", case["T"], 0.5, case["d"], case["alpha"], 0, 10, beta=1.0)
    dataset = sample_dataset(spec, 1)
    X = np.asarray(dataset.X, dtype=np.float64)
    W0 = initial_factors(spec.d, spec.r, student_seeds(1, spec, case["K"]))
    steps = 2 if quick else case["steps"]

    def measure(dtype):
        stamps = []
        train_students(X, dataset.y, W0, GDSettings(lr=0.1, steps=steps, trace_every=0),
                       backend=Backend("numpy", dtype), callback=lambda step, loss: stamps.append(time.process_time()))
        return float(np.min(np.diff(stamps)[:-1]))  # the last interval is the final forward only

    best = _interleaved(measure, repeats)
    return {"n": spec.n, "r": spec.r, "flops_per_step_gemm": 4.0 * case["K"] * spec.n * case["T"] * spec.d * spec.r,
            **{f"{dtype}_seconds_per_step": value for dtype, value in best.items()}}


def sgd_case(case: dict, repeats: int, quick: bool) -> dict:
    from aimrepro.paper2.sgd import ProblemSpec, SGDSettings, initial_problem, run_sgd, step_time

    extra = {"rho": 1.0} if case["param"] == "untied" else {}
    spec = ProblemSpec(case["param"], case["link"], case["T"], case["d"], **extra)
    steps = 2 if quick else case["steps"]
    B, T, d = case["B"], case["T"], case["d"]
    settings = SGDSettings(lr=1e-3, batch=B, horizon=steps * step_time(case["param"], 1e-3, d), n_records=2)

    def measure(dtype):
        student, teacher, rng = initial_problem(spec, 0)
        start = time.process_time()
        run_sgd(student, teacher, spec.loss(), T, settings, rng, backend=Backend("numpy", dtype))
        return (time.process_time() - start) / steps

    best = _interleaved(measure, repeats)
    rng = np.random.default_rng(0)
    normals = math.inf
    for _ in range(repeats):
        start = time.process_time()
        for _ in range(steps):
            rng.standard_normal((B, T, d))
        normals = min(normals, (time.process_time() - start) / steps)
    return {"r": spec.student_width, **{f"{dtype}_seconds_per_step": value for dtype, value in best.items()},
            "normals_seconds_per_step": normals}


def amp_case(case: dict, repeats: int, quick: bool) -> dict:
    from aimrepro.paper1.amp import gamp_rie
    from aimrepro.paper1.channels import make_channel
    from aimrepro.paper1.data import DatasetSpec, sample_dataset

    softmax = case["channel"] == "softmax"
    spec = DatasetSpec("softmax" if softmax else "hardmax", case["T"], case["rho"], case["d"], case["alpha"], 0, 10,
                       **({"beta": 1.0} if softmax else {}))
    dataset = sample_dataset(spec, 1)
    channel = make_channel(case["channel"], T=case["T"], **({"beta": 1.0} if softmax else {}))
    iterations = 2 if quick else case["iterations"]

    def measure(dtype):
        start = time.process_time()
        result = gamp_rie(dataset.X, dataset.y, channel, case["rho"], max_iter=iterations, tol=1e-15,
                          backend=Backend("numpy", dtype))
        return (time.process_time() - start) / max(result.iterations, 1)

    best = _interleaved(measure, repeats)
    return {"n": spec.n, **{f"{dtype}_seconds_per_iteration": value for dtype, value in best.items()}}


FAMILIES = {"gd": (GD_CASES, gd_case), "sgd": (SGD_CASES, sgd_case), "amp": (AMP_CASES, amp_case)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="two steps, one repeat (a smoke run)")
    parser.add_argument("--only", choices=sorted(FAMILIES), action="append", help="these families only")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--output", type=Path, default=Path(__file__).parent / "results" / "precision.json")
    args = parser.parse_args()
    repeats = 1 if args.quick else args.repeats
    load_start = os.getloadavg()
    rows = []
    for family in args.only or list(FAMILIES):
        cases, measure = FAMILIES[family]
        for name, case in cases.items():
            row = {"family": family, "case": name, **case, **measure(case, repeats, args.quick)}
            unit = "iteration" if family == "amp" else "step"
            row["speedup"] = row[f"float64_seconds_per_{unit}"] / row[f"float32_seconds_per_{unit}"]
            rows.append(row)
            floor = (f", normals {row['normals_seconds_per_step'] * 1e3:.3g} ms"
                     if "normals_seconds_per_step" in row else "")
            print(f"{family:>4} {name:<38} float64 {row[f'float64_seconds_per_{unit}'] * 1e3:9.3f} ms  "
                  f"float32 {row[f'float32_seconds_per_{unit}'] * 1e3:9.3f} ms  x{row['speedup']:.2f}{floor}",
                  flush=True)
    record = {"benchmark": "bench_precision", "quick": args.quick, "repeats": repeats,
              "machine": platform.machine(), "python": platform.python_version(), "numpy": np.__version__,
              "cores_used": 1, "load_average_at_start": load_start, "load_average_at_end": os.getloadavg(),
              "cases": rows}
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(record, indent=2) + "\n")
    print(f"load average {load_start[0]:.1f} at the start, {record['load_average_at_end'][0]:.1f} at the end; "
          f"wrote {args.output}")


if __name__ == "__main__":
    main()
