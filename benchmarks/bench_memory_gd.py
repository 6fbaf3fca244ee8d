"""GD's memory estimate (aimrepro.resources.gd_job) against the traced peak of a real run.

Run:  python benchmarks/bench_memory_gd.py

For a few token counts T and test-set sizes (d = 12, K = 2 students, 20 Adam
steps: the probe's shape, where the n T² arrays dominate), runs ``aimrepro
gd`` in this process under ``tracemalloc`` (numpy reports its buffers to it)
and prints the estimate beside the traced peak.  The CLI's default memory
limit keeps a tenth of the available memory for what the estimate leaves out
(the allocator's arenas and rounding): docs/benchmarks.md, "Memory estimates".
"""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import aimrepro.cli as cli
from aimrepro.resources import gd_job

CASES = [(300, 20), (600, 1), (600, 20), (600, 60)]


def traced_peak(T: int, n_test: int) -> float:
    tracemalloc.start()
    try:
        cli.main(["gd", "--T", str(T), "--rho", "0.5", "--alpha", "0.1", "--d", "12", "--inits", "2",
                  "--steps", "20", "--lr", "0.1", "--seed", "1", "--test-samples", str(n_test), "--quiet"])
    except SystemExit:
        pass
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def main() -> None:
    rows = []
    for T, n_test in CASES:
        estimate = gd_job(T=T, d=12, rho=0.5, alpha=0.1, n_test=n_test, inits=2, steps=20).bytes
        peak = traced_peak(T, n_test)
        rows.append({"T": T, "test_samples": n_test, "estimate_mb": round(estimate / 1e6, 1),
                     "traced_peak_mb": round(peak / 1e6, 1), "ratio": round(estimate / peak, 3)})
        print(json.dumps(rows[-1]), flush=True)
    out = Path(__file__).resolve().parent / "results" / "memory_gd.json"
    out.write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
