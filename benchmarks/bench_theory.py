"""Speed of the Bayes-optimal theory against the published approach (issue: foundation).

Run:  python benchmarks/bench_theory.py [--quick]

Measures on one core (BLAS/OpenMP threads pinned to 1 before numpy loads):

1. a 256-point softmax SE curve (T = 2, ρ = 0.5, α from 1e-5 to α_PR), ours;
2. the published approach for the same curve, re-implemented here from its
   description (``docs/paper1.md`` §9 B6 and "Efficiency"): a damped fixed-point
   iteration per α whose mmse(Δ) needs adaptive ``quad`` (epsabs 1e-4) of μ³
   with ``np.roots`` at every node; timed on a few α and extrapolated;
3. one hardmax T = 2 SE point (ρ = 0.5, α = 0.3) from the uninformative start,
   correct and published channel;
4. the published hardmax approach: Monte Carlo with 25 000 samples per SE
   iteration, one frozen ``scipy.stats.multivariate_normal`` CDF per sample,
   ≥ 150 iterations; one iteration is timed on 500 samples and extrapolated.

Writes ``benchmarks/results/theory.json`` and prints a table.
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
from scipy.integrate import quad  # noqa: E402
from scipy.stats import multivariate_normal  # noqa: E402

from aimrepro.paper1 import thresholds
from aimrepro.paper1 import state_evolution
from aimrepro.paper1.channels import make_channel


def best_of(fn, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


# --- the published approach, re-implemented from its description -------------

def _naive_density(x, delta, rho):
    k = 1.0 / rho
    roots = np.roots([math.sqrt(k) * delta, -(math.sqrt(k) * x + delta), x + math.sqrt(k) - 1 / math.sqrt(k), -1.0])
    return np.max(np.imag(roots)) / np.pi


def _naive_edges(delta, rho):
    k, R = 1.0 / rho, delta
    sk = math.sqrt(k)
    coef = [k, -2 * sk - 2 * k**1.5 - 2 * sk * R, 1 - 2 * k + k**2 + 8 * R - 2 * k * R + R**2,
            -10 * R / sk + 2 * sk * R + 8 * k**1.5 * R - 2 * R**2 / sk + 8 * sk * R**2,
            -12 * R + 4 * R / k + 12 * k * R - 4 * k**2 * R - 20 * R**2 + R**2 / k - 8 * k * R**2 - 4 * R**3]
    roots = np.roots(coef)
    return np.sort(roots[np.abs(roots.imag) < 1e-6].real)


def _naive_mmse(delta, rho):
    edges = _naive_edges(delta, rho)
    total = 0.0
    for a, b in zip(edges[::2], edges[1::2]):
        total += quad(lambda x: _naive_density(x - 1e-8j, delta, rho) ** 3, a, b, epsabs=1e-4, epsrel=1e-4)[0]
    return delta - (4 * np.pi**2 / 3) * delta**2 * total


def naive_softmax_point(alpha, rho, T=2, tol=1e-5, max_iter=1000):
    """Damped fixed-point iteration of the softmax SE with the naive mmse (one point)."""
    Q0 = 1 + rho
    c = T * T + T - 2
    q = rho
    for it in range(max_iter):
        q_hat = c * alpha / (Q0 - q)
        q_new = 0.5 * q + 0.5 * (Q0 - _naive_mmse(1.0 / q_hat, rho))
        if abs(q_new - q) < tol:
            return Q0 - q_new, it + 1
        q = q_new
    return Q0 - q, max_iter


def naive_hardmax_mc_iteration(alpha, q, Q0, n_samples, rng):
    """One Monte-Carlo SE iteration of the published hardmax script (frozen CDF per sample)."""
    acc = 0.0
    for _ in range(n_samples):
        eta = rng.standard_normal(3)
        xi = rng.standard_normal(3)
        w11, w12, w22 = math.sqrt(2 * q) * eta[0], math.sqrt(q) * eta[1], math.sqrt(2 * q) * eta[2]
        h11 = w11 + math.sqrt(2 * (Q0 - q)) * xi[0]
        h12 = w12 + math.sqrt(Q0 - q) * xi[1]
        h22 = w22 + math.sqrt(2 * (Q0 - q)) * xi[2]
        s1 = 1.0 if h11 > h12 else -1.0
        s2 = 1.0 if h22 > h12 else -1.0
        r = math.sqrt(3 * (Q0 - q))
        k1, k2, corr = s1 * (w11 - w12) / r, s2 * (w22 - w12) / r, s1 * s2 / 3
        phi2 = multivariate_normal(mean=[0.0, 0.0], cov=[[1, corr], [corr, 1]]).cdf([k1, k2])
        dens = math.exp(-(k1 * k1 - 2 * corr * k1 * k2 + k2 * k2) / (2 * (1 - corr**2))) / (
            2 * math.pi * math.sqrt(1 - corr**2))
        g11, g22, g12 = s1 * dens / (r * phi2), s2 * dens / (r * phi2), -(s1 + s2) * dens / (r * phi2)
        acc += 2 * g11**2 + 2 * g22**2 + g12**2
    return 2 * alpha * acc / n_samples


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats and baseline samples")
    args = parser.parse_args()
    repeats = 1 if args.quick else 3
    rho, T = 0.5, 2
    softmax = make_channel("softmax", T=T)
    alphas = np.linspace(1e-5, thresholds.alpha_perfect_recovery(rho, T), 256)

    ours_curve = best_of(lambda: state_evolution.se_curve(softmax, alphas, rho), repeats)

    sample_alphas = alphas[[32, 128, 224]]
    start = time.perf_counter()
    naive_iters = [naive_softmax_point(a, rho)[1] for a in sample_alphas]
    naive_per_point = (time.perf_counter() - start) / len(sample_alphas)

    hard_point = {}
    for name in ("hardmax", "hardmax_paper"):
        channel = make_channel(name, T=2)
        hard_point[name] = best_of(lambda: state_evolution.solve_se(channel, 0.3, rho), repeats)
    point = state_evolution.solve_se(make_channel("hardmax", T=2), 0.3, rho)

    n_mc = 200 if args.quick else 500
    start = time.perf_counter()
    naive_hardmax_mc_iteration(0.3, 0.8, 1.5, n_mc, np.random.default_rng(0))
    mc_per_sample = (time.perf_counter() - start) / n_mc
    mc_point = mc_per_sample * 25_000 * 150

    results = {
        "date": time.strftime("%Y-%m-%d"),
        "machine": {"python": platform.python_version(), "numpy": np.__version__, "processor": platform.processor(),
                    "threads": 1},
        "softmax_curve_256_seconds": ours_curve,
        "softmax_naive_seconds_per_point": naive_per_point,
        "softmax_naive_iterations_per_point": naive_iters,
        "softmax_naive_curve_256_seconds_extrapolated": naive_per_point * 256,
        "hardmax_point_seconds": hard_point,
        "hardmax_point_evaluations": point.iterations,
        "hardmax_mc_seconds_per_sample": mc_per_sample,
        "hardmax_mc_point_seconds_extrapolated": mc_point,
    }
    out = Path(__file__).with_name("results") / "theory.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n")

    print(f"{'task (one core)':58s} {'ours':>10s} {'published approach':>20s}")
    print(f"{'softmax SE, 256-point curve (T=2, rho=0.5)':58s} {ours_curve:9.2f}s "
          f"{naive_per_point * 256:18.0f}s*")
    for name, seconds in hard_point.items():
        print(f"{'hardmax SE, one point (alpha=0.3, rho=0.5), ' + name:58s} {seconds:9.2f}s "
              f"{mc_point / 60:17.0f}min*")
    print("* extrapolated: softmax from 3 timed points (damped iteration, quad + np.roots per node);")
    print(f"  hardmax from {n_mc} timed Monte-Carlo samples x 25 000 samples x 150 iterations")
    print(f"written {out}")


if __name__ == "__main__":
    main()
