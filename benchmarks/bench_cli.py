"""Speed of the command line: start-up of one ``aimrepro se`` point, and a 256-point curve.

Run:  python benchmarks/bench_cli.py [--quick] [--before REV] [--authors PATH]

Measures on one core (BLAS/OpenMP threads pinned to 1 before numpy loads):

1. start-up: ``aimrepro se --channel softmax --T 2 --rho 0.5 --alpha 0.1`` (one point)
   as a fresh process, wall time, best and median of ``--repeats`` (default 15)
   after one warm-up run that writes the bytecode caches (``PYTHONDONTWRITEBYTECODE``
   is unset for these processes), for this tree and, with ``--before REV``, for the package at git revision REV
   (``git archive REV src`` into a temporary directory, run with the same
   interpreter; default: the parent of the commit that made the CLI lazy);
2. a 256-point softmax curve (T = 2, ρ = 0.5, α from 1e-5 to α_PR): ``aimrepro se``
   in this process (``cli.main``, output to a buffer), the same as a fresh
   process, the solver alone (``state_evolution.se_curve``), and the former CLI
   path, one ``solve_se`` per α;
3. with ``--authors PATH`` (a local checkout of the authors' repository,
   BO_ExtensiveRankAttention, kept outside this project): their ``SE_softmax.py``
   run as they ship it, in a temporary directory, non-interactive matplotlib
   backend, output discarded, once; it solves a 256-point curve (T = 2, ρ = 0.5,
   α up to 0.25), so its per-point time is its CPU time / 256.  Their script
   imports pandas without using it: where pandas is missing, an empty module
   stands in for it.  Without the checkout that column is skipped.

Writes ``benchmarks/results/cli.json`` (with the load average while measuring)
and prints a table.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import contextlib  # noqa: E402
import importlib.util  # noqa: E402
import io  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import resource  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tarfile  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from aimrepro import cli  # noqa: E402
from aimrepro.paper1 import state_evolution, thresholds  # noqa: E402
from aimrepro.paper1.channels import make_channel  # noqa: E402
from bench_theory import best_of  # noqa: E402  (the sibling script: one timer)

REPOSITORY = Path(__file__).resolve().parents[1]
#: The last commit before the command line imported its science lazily.
BEFORE = "0150d7a"
ONE_POINT = ["se", "--channel", "softmax", "--T", "2", "--rho", "0.5", "--alpha", "0.1"]
#: The CLI's entry point, in a fresh interpreter whose sys.path may start with another src/.
ENTRY = "import sys; from aimrepro.cli import main; sys.exit(main(sys.argv[1:]))"
#: The authors' curve: 256 points (their script's alpha_fine).
AUTHORS_POINTS = 256


def startup_seconds(src: Path | None, repeats: int) -> tuple[float, float]:
    """Best and median wall time of one ``aimrepro se`` point in a fresh process (``src``: package source)."""
    env = _cached_bytecode_env()
    if src is not None:
        env["PYTHONPATH"] = str(src)
        where = subprocess.run([sys.executable, "-c", "import aimrepro; print(aimrepro.__file__)"],
                               env=env, capture_output=True, text=True, check=True).stdout.strip()
        assert where.startswith(str(src)), where
    # one run first: it writes the bytecode caches (__pycache__), as any user's first run does
    subprocess.run([sys.executable, "-c", ENTRY, *ONE_POINT], env=env, capture_output=True, check=True)
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-c", ENTRY, *ONE_POINT], env=env, capture_output=True,
                              text=True, check=True)
        times.append(time.perf_counter() - started)
        assert json.loads(done.stdout)["converged"] is True
    return min(times), float(np.median(times))


def _cached_bytecode_env() -> dict[str, str]:
    """This environment with Python's bytecode cache on (PYTHONDONTWRITEBYTECODE unset): without
    it every import compiles its module again, which is not how a user's command starts."""
    return {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}


def package_at(revision: str, directory: Path) -> Path:
    """src/ of ``revision`` of this repository, unpacked into ``directory``."""
    archive = subprocess.run(["git", "-C", str(REPOSITORY), "archive", revision, "src"],
                             capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(directory, filter="data")
    return directory / "src"


def authors_seconds(checkout: Path, scratch: Path) -> dict:
    """CPU and wall seconds of the authors' SE_softmax.py (its 256-point curve), run once as shipped."""
    script = checkout / "SE_softmax.py"
    env = {**os.environ, "MPLBACKEND": "Agg"}
    if importlib.util.find_spec("pandas") is None:  # imported, never used, by their script
        stub = scratch / "stub"
        stub.mkdir()
        (stub / "pandas.py").write_text("")
        env["PYTHONPATH"] = str(stub)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run([sys.executable, str(script)], cwd=scratch, env=env, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"script": "SE_softmax.py", "points": AUTHORS_POINTS, "cpu_seconds": round(cpu, 3),
            "wall_seconds": round(wall, 3), "cpu_seconds_per_point": cpu / AUTHORS_POINTS}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one repeat of each curve, 5 start-ups")
    parser.add_argument("--repeats", type=int, default=15, help="start-ups timed per tree (default 15)")
    parser.add_argument("--before", default=BEFORE, metavar="REV",
                        help=f"the revision to compare start-up with (default {BEFORE}); '' to skip")
    parser.add_argument("--authors", type=Path, default=None, metavar="PATH",
                        help="a local checkout of the authors' BO_ExtensiveRankAttention (outside this project)")
    args = parser.parse_args()
    repeats = 1 if args.quick else 3
    startups = 5 if args.quick else args.repeats
    rho, T = 0.5, 2
    alphas = np.linspace(1e-5, thresholds.alpha_perfect_recovery(rho, T), 256)
    argv = ["se", "--channel", "softmax", "--T", str(T), "--rho", str(rho),
            "--alpha", *[repr(float(a)) for a in alphas]]
    channel = make_channel("softmax", T=T)

    def in_process():
        with contextlib.redirect_stdout(io.StringIO()) as buffer:
            assert cli.main(argv) == 0
        assert len(buffer.getvalue().splitlines()) == alphas.size

    cpu_of_process = []

    def as_process():
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        done = subprocess.run([sys.executable, "-c", ENTRY, *argv], capture_output=True, text=True,
                              env=_cached_bytecode_env(), check=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu_of_process.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        assert len(done.stdout.splitlines()) == alphas.size

    results = {
        "date": time.strftime("%Y-%m-%d"),
        "machine": {"python": platform.python_version(), "numpy": np.__version__, "threads": 1,
                    "cpus": os.cpu_count()},
        "load_average_1min_start": os.getloadavg()[0],
    }
    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        best, median = startup_seconds(None, startups)
        results["startup_one_point"] = {"this_tree": {"best": best, "median": median}}
        if args.before:
            src = package_at(args.before, scratch / "before")
            best, median = startup_seconds(src, startups)
            results["startup_one_point"]["before"] = {"revision": args.before, "best": best,
                                                      "median": median}
        results["cli_se_curve_256_seconds"] = best_of(in_process, repeats)
        results["cli_se_curve_256_process_seconds"] = best_of(as_process, repeats)
        results["cli_se_curve_256_process_cpu_seconds"] = min(cpu_of_process)
        results["se_curve_256_seconds"] = best_of(lambda: state_evolution.se_curve(channel, alphas, rho),
                                                  repeats)
        results["per_alpha_solve_256_seconds"] = best_of(
            lambda: [state_evolution.solve_se(channel, a, rho) for a in alphas], 1)
        if args.authors is not None and (args.authors / "SE_softmax.py").is_file():
            (scratch / "authors").mkdir()
            authors = authors_seconds(args.authors, scratch / "authors")
            ours = results["cli_se_curve_256_process_cpu_seconds"] / alphas.size
            authors["speedup_per_point_cpu"] = authors["cpu_seconds_per_point"] / ours
            results["authors"] = authors
    results["load_average_1min_end"] = os.getloadavg()[0]
    out = Path(__file__).with_name("results") / "cli.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"load average {results['load_average_1min_start']:.1f} -> {results['load_average_1min_end']:.1f}")
    for tree, timing in results["startup_one_point"].items():
        print(f"start-up, one se point, {tree:10s} best {timing['best']:.3f} s, median {timing['median']:.3f} s")
    for key in ("cli_se_curve_256_seconds", "cli_se_curve_256_process_seconds",
                "cli_se_curve_256_process_cpu_seconds", "se_curve_256_seconds", "per_alpha_solve_256_seconds"):
        print(f"{key:40s} {results[key]:8.3f} s")
    if "authors" in results:
        authors = results["authors"]
        print(f"authors' SE_softmax.py: {authors['cpu_seconds']:.1f} s CPU for {authors['points']} points, "
              f"{authors['cpu_seconds_per_point'] * 1e3:.1f} ms/point; ours "
              f"{results['cli_se_curve_256_process_cpu_seconds'] / 256 * 1e3:.2f} ms/point "
              f"(fresh process, start-up included): {authors['speedup_per_point_cpu']:.0f}x")
    else:
        print("authors' SE_softmax.py: skipped (give --authors PATH, a local checkout)")


if __name__ == "__main__":
    main()
