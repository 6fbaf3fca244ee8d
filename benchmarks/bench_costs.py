"""The machine rates of the cost model (workflow/lib/aimrepro_workflow/costs.py, PRICES).

One core, CPU seconds (``time.process_time``), so that other work on a shared
machine does not count:

* ``flop``: GEMMs of the shapes the expensive jobs run (paper and quick sizes),
  in GFLOP/s (2 m k n operations for an (m × k)(k × n) product);
* ``normal``: float64 standard normals from numpy's default generator;
* ``eigh``: a symmetric eigendecomposition, seconds per d³;
* ``element``: a float64 element of a vectorised expression (``a * b + c``);
* ``byte_io``: writing and reading back an uncompressed ``.npz``.

Usage: ``.venv/bin/python benchmarks/bench_costs.py [--quick]``; writes
benchmarks/results/costs.json.
"""

from __future__ import annotations

import os

for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_variable] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "costs.json"

#: (what, m, k, n): an (m × k)(k × n) product as a job of the pipeline forms it.
GEMMS = [
    ("untied SGD, paper (B = 4096, d = r = 800)", 4096, 800, 800),
    ("untied SGD, quick (B = 256, d = r = 100)", 256, 100, 100),
    ("tied SGD Fig. 1, paper (B T = 1024, d = 400, r = 200)", 1024, 400, 200),
    ("direct SGD Fig. S3, paper (B = 512, d = 400)", 512, 400, 400),
    ("GD forward, paper (n T = 24 000, d = 200, r = 100)", 24000, 200, 100),
    ("GD backward, paper (d = 200, n T = 24 000, r = 100)", 200, 24000, 100),
    ("AMP forward, paper (n T = 54 000, d = 100)", 54000, 100, 100),
    ("untied flow, paper (d = r = 800)", 800, 800, 800),
]


def _cpu(function, repeats: int) -> float:
    """CPU seconds per call, the median of ``repeats`` after one warm-up call.

    The median, not the best: the jobs the model predicts run on a shared
    machine too, where caches are disturbed.
    """
    function()
    times = []
    for _ in range(repeats):
        start = time.process_time()
        function()
        times.append(time.process_time() - start)
    return float(np.median(times))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one repeat each")
    args = parser.parse_args()
    repeats = 1 if args.quick else 7
    rng = np.random.default_rng(0)
    gemms = []
    for what, m, k, n in GEMMS:
        a, b = rng.standard_normal((m, k)), rng.standard_normal((k, n))
        seconds = _cpu(lambda: a @ b, repeats)
        gemms.append({"what": what, "shape": [m, k, n], "seconds": seconds,
                      "gflop_per_s": 2.0 * m * k * n / seconds / 1e9})
        print(f"{what}: {gemms[-1]['gflop_per_s']:.1f} GFLOP/s")
    count = 4_000_000
    normal = _cpu(lambda: rng.standard_normal(count), repeats) / count
    print(f"normal: {normal * 1e9:.1f} ns")
    eighs = {}
    for d in (100, 200, 400):
        matrix = rng.standard_normal((d, d))
        matrix = matrix + matrix.T
        eighs[d] = _cpu(lambda: np.linalg.eigh(matrix), repeats) / d ** 3
        print(f"eigh d={d}: {eighs[d] * 1e9:.2f} ns per d^3")
    x, y, z = (rng.standard_normal(count) for _ in range(3))
    element = _cpu(lambda: x * y + z, repeats) / count
    print(f"element: {element * 1e9:.2f} ns")
    payload = rng.standard_normal(count * 4).astype(np.float32)
    with tempfile.TemporaryDirectory() as directory:
        target = Path(directory) / "data.npz"

        def write_and_read():
            np.savez(target, x=payload)
            with np.load(target) as loaded:
                loaded["x"].sum()
        byte_io = _cpu(write_and_read, repeats) / payload.nbytes
    print(f"byte_io: {byte_io * 1e9:.2f} ns per byte")
    record = {
        "benchmark": "bench_costs", "quick": args.quick, "machine": platform.machine(),
        "python": platform.python_version(), "numpy": np.__version__,
        "load_average": os.getloadavg(), "gemm": gemms, "normal_seconds": normal,
        "eigh_seconds_per_d3": {str(d): v for d, v in eighs.items()},
        "element_seconds": element, "byte_io_seconds": byte_io,
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(record, indent=2) + "\n")
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
