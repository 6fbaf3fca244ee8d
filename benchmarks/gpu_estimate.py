"""A labelled estimate, not a measurement: the paper scale's GEMM-bound jobs on one GPU.

The cost model (workflow/lib/aimrepro_workflow/costs.py) counts each job's work
by kind (GEMM flops, normals drawn, elementwise operations, Python-level steps).
This script prices the same counts at the published throughput of one NVIDIA
A100 (SXM, 80 GB) instead of one CPU core, for the rules whose work is dense
linear algebra (online SGD, untied SGD, gradient descent); everything else
(state evolution, flows, quadratures, AMP) stays on CPU cores and is reported
as core-hours beside it.

Assumptions (each one a number below, with its source):

* float64 GEMM: the A100's FP64 tensor-core peak is 19.5 TFLOP/s (9.7 without
  tensor cores; NVIDIA A100 datasheet); we assume 10 TFLOP/s sustained on the
  pipeline's shapes (4096 × 800 × 800 for untied SGD, 24 000 × 200 × 100 for GD),
  about half the peak;
* elementwise work and tiny batched matmuls are bound by memory bandwidth
  (2.0 TB/s on the 80 GB part): 24 bytes moved per element, 80 G elements/s;
* normals: drawn on the host by numpy, as the PyTorch backend does so that a
  seed gives the same data on every device (aimrepro.paper2.sgd.run_sgd), at
  the CPU price of the cost model, plus their copy to the device (8 bytes at
  25 GB/s, PCIe 4);
* a Python-level step (one SGD or Adam step) launches some 30 kernels at
  about 10 µs each: 0.3 ms per step, whatever its size;
* a job pays 5 s to start (interpreter, CUDA context) instead of its CPU start-up.

None of this is measured here: no GPU was available; the PyTorch backend
(aimrepro.backends) ran on this CPU only.  The CPU figures beside it are the
model's.

Usage: ``.venv/bin/python benchmarks/gpu_estimate.py``; writes benchmarks/results/gpu_estimate.json.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "workflow" / "lib"))

from aimrepro.config import validate_config  # noqa: E402
from aimrepro_workflow import costs  # noqa: E402

RESULTS = REPO / "benchmarks" / "results" / "gpu_estimate.json"

#: Seconds per unit of work on one A100 (see the module notes).
GPU_PRICES = {
    "flop": 1.0 / 10e12,
    "element": 1.0 / 80e9,
    "small_matmul": 1.0 / 80e9,
    "normal": costs.PRICES["normal"] + 8.0 / 25e9,  # host draws and their copy
    "byte_io": 1.0e-9,          # reading a dataset from disk does not get faster
    "sgd_step": 0.3e-3,
    "sgd_step_untied": 0.3e-3,
    "sgd_sample_softmax": 1.0 / 80e9,
    "gd_step": 0.3e-3,
    "gd_replica_step": 0.0,     # the replicas share the step's kernels
    "startup": 5.0,
}
#: The rules whose work is dense linear algebra, priced on the GPU.
GPU_RULES = ("untied_sgd_run", "sgd_run", "gd_run")


def main() -> None:
    schema = yaml.safe_load((REPO / "workflow" / "schemas" / "config.schema.yaml").read_text())
    config = validate_config(yaml.safe_load((REPO / "config.yaml").read_text()), schema)
    model = costs.CostModel(config)
    gpu, cpu = defaultdict(float), defaultdict(float)
    for rule, wildcards in model.planned_jobs("paper"):
        group = costs._group(rule)
        cpu[group] += model.job(rule, wildcards).cpu_seconds
        if group in GPU_RULES:
            _, units = model.units(rule, wildcards)
            unknown = set(units) - set(GPU_PRICES)
            if unknown:
                raise SystemExit(f"{rule}: no GPU price for {sorted(unknown)}")
            gpu[group] += sum(amount * GPU_PRICES[unit] for unit, amount in units.items())
    rows = []
    print(f"{'rule':18s} {'CPU core-hours':>15s} {'A100 hours (estimate)':>22s}")
    for rule in sorted(cpu, key=lambda r: -cpu[r]):
        rows.append({"rule": rule, "cpu_core_hours": cpu[rule] / 3600,
                     "gpu_hours": gpu[rule] / 3600 if rule in GPU_RULES else None})
        shown = f"{gpu[rule] / 3600:22.2f}" if rule in GPU_RULES else f"{'(CPU)':>22s}"
        print(f"{rule:18s} {cpu[rule] / 3600:15.2f} {shown}")
    on_gpu = sum(gpu.values()) / 3600
    elsewhere = sum(v for r, v in cpu.items() if r not in GPU_RULES) / 3600
    print(f"\nGPU rules on one A100: {on_gpu:.1f} h (estimate); the other rules: "
          f"{elsewhere:.1f} core-hours on CPU")
    RESULTS.write_text(json.dumps({
        "estimate": "not measured: published A100 throughput and the assumptions in "
                    "benchmarks/gpu_estimate.py", "gpu_prices": GPU_PRICES, "rules": rows,
        "gpu_hours": on_gpu, "other_cpu_core_hours": elsewhere}, indent=2) + "\n")


if __name__ == "__main__":
    main()
