"""Threads, memory and wall-time budgets of the rules that need more than the defaults.

Each function takes a job's wildcards (and, where Snakemake passes it, its
``threads``) and returns a Slurm budget: ``mem_mb`` in MB, ``runtime`` in
minutes.  Budgets are generous limits, not predictions; docs/benchmarks.md
gives the measured costs they are based on.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

__all__ = [
    "amp_mem_mb", "amp_runtime", "dataset_mem_mb", "fisher_table_runtime", "tokens_amp_runtime", "gd_mem_mb", "gd_runtime", "gd_threads",
    "se_runtime", "sgd_runtime", "theorem1_runtime", "truncation_error_runtime",
    "untied_mem_mb", "untied_runtime", "untied_theory_runtime", "untied_threads",
]


def _tokens(wildcards) -> int:
    """Token entries n T d of a dataset."""
    n = max(1, round(float(wildcards.alpha) * int(wildcards.d) ** 2))
    return n * int(wildcards.T) * int(wildcards.d)


def se_runtime(wildcards) -> int:
    """A softmax point is one scalar root, a hardmax point a quadrature-based fixed point."""
    return 10 + int(wildcards.n) // (10 if wildcards.channel == "softmax" else 2)


#: CPU microseconds per estimator sample of a Fisher table, per T (measured ~0.2, 2, 10;
#: docs/paper1.md §3.6), with a margin; larger T: number of possible labels grows ~10x per T.
_FISHER_US_PER_SAMPLE = {2: 1.0, 3: 5.0, 4: 25.0}


def fisher_table_runtime(wildcards) -> int:
    """Samples n_k = nref/x_k on the Chebyshev-Lobatto nodes of [x_min, 1] (hardmax_tokens.table_grid)."""
    nodes, x_min = int(wildcards.nodes), float(wildcards.x_min)
    inverse_sum = sum(1.0 / (x_min + (1.0 - x_min) * (1.0 - math.cos(math.pi * k / (nodes - 1))) / 2.0)
                      for k in range(nodes))
    per_sample = _FISHER_US_PER_SAMPLE.get(int(wildcards.T), 250.0) * 1e-6
    return 5 + math.ceil(int(wildcards.nref) * inverse_sum * per_sample / 60.0)


def tokens_amp_runtime(solver: Mapping[str, Any]) -> Callable:
    """~0.64 us per sample and proposal per iteration (1.1 s at d = 150, n = 6750, K = 256), doubled."""
    def runtime(wildcards) -> int:
        n = max(1, round(float(wildcards.alpha) * int(wildcards.d) ** 2))
        return 10 + math.ceil(solver["max_iter"] * n * int(wildcards.proposals) * 1.3e-6 / 60.0)
    return runtime


def dataset_mem_mb(wildcards) -> int:
    """float32 tokens plus float64 temporaries of the label computation."""
    return 300 + _tokens(wildcards) * 40 // 10**6


def amp_mem_mb(wildcards) -> int:
    """O(n T d) float64 working set: tokens, their product with S, back-projection."""
    return 500 + _tokens(wildcards) * 40 // 10**6


def amp_runtime(solver: Mapping[str, Any]) -> Callable:
    """benchmarks/bench_amp.py: < 0.2 s per iteration at n T d = 5.4e6 on one core."""
    def runtime(wildcards) -> int:
        return 10 + solver["max_iter"] * (1 + _tokens(wildcards) // 10**6) // 60
    return runtime


def _gd_work(wildcards) -> tuple[int, int]:
    """(n T d, K n T r): the token entries and the replicas' working set."""
    d, T, K = int(wildcards.d), int(wildcards.T), int(wildcards.inits)
    n = max(1, round(float(wildcards.alpha) * d * d))
    r = max(1, round(float(wildcards.rho) * d))
    return n * T * d, K * n * T * r


def gd_threads(gd_size: Callable[[str], Mapping | None]) -> Callable:
    def threads(wildcards) -> int:
        return (gd_size(wildcards.scale) or {}).get("threads", 1)
    return threads


def gd_mem_mb(wildcards) -> int:
    """float32 + float64 tokens, and at most gd.CHUNK_ENTRIES floats per working array (about 3 live)."""
    tokens, work = _gd_work(wildcards)
    return 500 + tokens * 12 // 10**6 + 3 * 8 * min(work, 25_000_000) // 10**6


def gd_runtime(steps: int) -> Callable:
    """Minutes for the Adam steps, K n T r (4d + 40T) flops each, at 10 GFLOP/s per thread.

    benchmarks/bench_gd.py measures 31 GFLOP/s of that count on one core at
    d = 200, T = 2, n = 12 000 (2.2 s per step for 32 students): a threefold margin.
    """
    def runtime(wildcards, threads) -> int:
        _, work = _gd_work(wildcards)
        flops = steps * work * (4 * int(wildcards.d) + 40 * int(wildcards.T))
        return 10 + int(flops / (10e9 * threads) / 60)
    return runtime


def sgd_runtime(wildcards) -> int:
    """Steps × (B T d²) at ~1 GFlop/s, plus 10 minutes."""
    d, T, B = int(wildcards.d), int(wildcards.T), int(wildcards.B)
    unit = 4.0 if wildcards.param == "tied" else 1.0
    steps = float(wildcards.horizon) * d / (unit * float(wildcards.lr))
    return 10 + int(steps * 6 * B * T * d * d / 1e9 / 60)


def theorem1_runtime(wildcards) -> int:
    return 10 + int(wildcards.n) * int(wildcards.d) ** 2 // 10**10


def truncation_error_runtime(wildcards) -> int:
    return 10 + int(wildcards.M) ** 2 * int(wildcards.d) // 2000


def untied_threads(wildcards) -> int:
    """One thread at quick scale; 8 for the paper's large GEMMs (B d >= 10^6, e.g. 4096 x 800)."""
    return 8 if int(wildcards.B) * int(wildcards.d) >= 10**6 else 1


def untied_mem_mb(wildcards) -> int:
    return 2000 + int(wildcards.B) * int(wildcards.d) * 8 * 6 // 10**6


def untied_runtime(wildcards, threads) -> int:
    """Steps x 8 B d r flops at ~2 GFlop/s per thread, plus 10 minutes.

    A run that stops at recovery (Figure S5) takes far less than its horizon's steps.
    """
    d, B = int(wildcards.d), int(wildcards.B)
    steps = float(wildcards.horizon) * d / float(wildcards.lr)
    return 10 + int(steps * 8 * B * d * d / (2e9 * threads) / 60)


def untied_theory_runtime(wildcards) -> int:
    return 10 + int(wildcards.d) ** 3 // 10**6
