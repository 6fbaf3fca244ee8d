"""The machine rates of the cost model (workflow/lib/aimrepro_workflow/costs.py, PRICES).

One core, CPU seconds (``time.process_time``), so that other work on a shared
machine does not count:

* ``flop``: GEMMs of the shapes the expensive jobs run (paper and quick sizes),
  in GFLOP/s (2 m k n operations for an (m × k)(k × n) product);
* ``normal``: float64 standard normals from numpy's default generator;
* ``eigh``: a symmetric eigendecomposition, seconds per d³;
* ``element``: a float64 element of a vectorised expression (``a * b + c``);
* ``small_matmul``: a multiply-add of numpy's matmul on a stack of tiny
  (T × r)(r × T) products, as GD's pair products (T = 2, r = 25);
* ``byte_io``: writing and reading back an uncompressed ``.npz``;
* ``flop32``, ``element32``, ``small_matmul32``: the same three in float32, the
  kernels' arithmetic under ``backend.dtype`` float32 (``docs/design.md``,
  "Precision"), measured beside their float64 twins; ``float32_speedup`` is
  the ratio of each pair, which is what the model's float32 prices use
  (a ratio moves less with the machine's load than either rate).

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
        a32, b32 = a.astype(np.float32), b.astype(np.float32)
        seconds = _cpu(lambda: a @ b, repeats)
        seconds32 = _cpu(lambda: a32 @ b32, repeats)
        gemms.append({"what": what, "shape": [m, k, n], "seconds": seconds,
                      "gflop_per_s": 2.0 * m * k * n / seconds / 1e9,
                      "float32_seconds": seconds32, "float32_gflop_per_s": 2.0 * m * k * n / seconds32 / 1e9})
        print(f"{what}: {gemms[-1]['gflop_per_s']:.1f} GFLOP/s, float32 {gemms[-1]['float32_gflop_per_s']:.1f}")
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
    x32, y32, z32 = (v.astype(np.float32) for v in (x, y, z))
    element32 = _cpu(lambda: x32 * y32 + z32, repeats) / count
    print(f"element: {element * 1e9:.2f} ns, float32 {element32 * 1e9:.2f} ns")
    # GD's pair products: K n stacks of (T × r)(r × T), K n = 8 × 750, T = 2, r = 25
    P = rng.standard_normal((8, 750, 2, 25))
    P32 = P.astype(np.float32)
    madds = P.size * 2
    small = _cpu(lambda: np.matmul(P, np.swapaxes(P, -1, -2)), repeats) / madds
    small32 = _cpu(lambda: np.matmul(P32, np.swapaxes(P32, -1, -2)), repeats) / madds
    print(f"small_matmul: {small * 1e12:.1f} ps per multiply-add, float32 {small32 * 1e12:.1f}")
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
        "element_seconds": element, "byte_io_seconds": byte_io, "small_matmul_seconds": small,
        "float32": {"element_seconds": element32, "small_matmul_seconds": small32},
        "float32_speedup": {
            "flop": float(np.median([g["seconds"] / g["float32_seconds"] for g in gemms])),
            "element": element / element32, "small_matmul": small / small32},
    }
    print("float32 speed-up (median GEMM, element, small matmul): "
          + ", ".join(f"{v:.2f}" for v in record["float32_speedup"].values()))
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(record, indent=2) + "\n")
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
