"""Speed of the command line's state-evolution curve (the CLI once used one solve per α).

Run:  python benchmarks/bench_cli.py [--quick]

Measures on one core (BLAS/OpenMP threads pinned to 1 before numpy loads) a
256-point softmax curve (T = 2, ρ = 0.5, α from 1e-5 to α_PR):

1. ``aimrepro se`` in this process (``aimrepro.cli.main``, output to a buffer):
   parsing, the solver and the JSON lines, without Python's start-up;
2. the same as a fresh process, start-up and imports included;
3. the solver alone (``state_evolution.se_curve``), for comparison;
4. the former CLI path, one ``solve_se`` per α, for comparison.

Writes ``benchmarks/results/cli.json`` (with the load average while measuring)
and prints a table.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import contextlib  # noqa: E402
import io  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from aimrepro import cli  # noqa: E402
from aimrepro.paper1 import state_evolution, thresholds  # noqa: E402
from aimrepro.paper1.channels import make_channel  # noqa: E402
from bench_theory import best_of  # noqa: E402  (the sibling script: one timer)




def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one repeat")
    args = parser.parse_args()
    repeats = 1 if args.quick else 3
    rho, T = 0.5, 2
    alphas = np.linspace(1e-5, thresholds.alpha_perfect_recovery(rho, T), 256)
    argv = ["se", "--channel", "softmax", "--T", str(T), "--rho", str(rho),
            "--alpha", *[repr(float(a)) for a in alphas]]
    channel = make_channel("softmax", T=T)

    def in_process():
        with contextlib.redirect_stdout(io.StringIO()) as buffer:
            assert cli.main(argv) == 0
        assert len(buffer.getvalue().splitlines()) == alphas.size

    executable = shutil.which("aimrepro", path=str(Path(sys.executable).parent)) or "aimrepro"

    def as_process():
        done = subprocess.run([executable, *argv], capture_output=True, text=True, check=True)
        assert len(done.stdout.splitlines()) == alphas.size

    results = {
        "date": time.strftime("%Y-%m-%d"),
        "machine": {"python": platform.python_version(), "numpy": np.__version__, "threads": 1},
        "load_average_1min": os.getloadavg()[0],
        "cli_se_curve_256_seconds": best_of(in_process, repeats),
        "cli_se_curve_256_process_seconds": best_of(as_process, repeats),
        "se_curve_256_seconds": best_of(lambda: state_evolution.se_curve(channel, alphas, rho), repeats),
        "per_alpha_solve_256_seconds": best_of(
            lambda: [state_evolution.solve_se(channel, a, rho) for a in alphas], 1),
    }
    out = Path(__file__).with_name("results") / "cli.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"load average {results['load_average_1min']:.1f}")
    for key in ("cli_se_curve_256_seconds", "cli_se_curve_256_process_seconds", "se_curve_256_seconds",
                "per_alpha_solve_256_seconds"):
        print(f"{key:40s} {results[key]:8.3f} s")


if __name__ == "__main__":
    main()
