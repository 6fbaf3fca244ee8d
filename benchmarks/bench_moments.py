"""Cost of the truncated moment hierarchy: precomputed bracelet insertion lists against a naive loop.

Run:  python benchmarks/bench_moments.py [--quick]

One right-hand side of the tied hierarchy [P eq. 11] truncated at order M
(``docs/paper2.md`` §4.1–4.2), K = 2 (student trainable, teacher fixed), a
constant Γ (so only the hierarchy itself is timed), one core.

* **aimrepro**: :func:`aimrepro.paper2.moments.hierarchy_rhs` — one moment
  per bracelet class (rotation and reversal of the word), the insertion lists
  precomputed once as index arrays, so an evaluation is a gather, a multiply
  and a ``bincount``: O(n_terms).
* **naive**: every word of length ≤ M as its own state entry (2^{M+1} − 2 of
  them) and, at each evaluation, a Python loop over words, trainable letters,
  inserted letters and before/after, looking the inserted word up in a dict.

Both are checked to give the same derivative (relative 1e-12) on the moments
of a random pair of matrices.  Also timed: one whole job of each kind at
quick scale (a Figure 1 truncation table at d = 100, a Figure S6 table at
d = 200, M = 12).  Writes ``benchmarks/results/moments.json``.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import itertools  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from aimrepro.paper2 import moment_experiments, moments
from aimrepro.paper2.sgd import ProblemSpec

GAMMA = np.array([[2.0, -2.0], [-2.0, 2.0]])


def naive_rhs(mu: dict, max_length: int, gamma: np.ndarray) -> dict:
    """[P eq. 11] word by word over all words, with dict look-ups at every evaluation."""
    out = {}
    for word in mu:
        total = 0.0
        for i, k in enumerate(word):
            if k != 0:                                   # only the student is trainable
                continue
            for l in (0, 1):
                for inserted in (word[:i] + (l,) + word[i:], word[:i + 1] + (l,) + word[i + 1:]):
                    if len(inserted) <= max_length:
                        total += gamma[k, l] * mu[inserted]
        out[word] = -total
    return out


def time_call(fn, *, min_seconds: float = 0.3) -> float:
    """Seconds per call, repeated for at least ``min_seconds``."""
    fn()
    n, start = 0, time.perf_counter()
    while True:
        fn()
        n += 1
        elapsed = time.perf_counter() - start
        if elapsed >= min_seconds:
            return elapsed / n


def bench_rhs(max_length: int, rng: np.random.Generator) -> dict:
    d = 30
    A, B = rng.standard_normal((d, d)) / d, rng.standard_normal((d, d)) / d
    S1, S2 = A @ A.T, B @ B.T
    basis = moments.WordBasis(max_length)
    mu = moments.initial_moments(basis, [S1, S2])
    words = [w for n in range(1, max_length + 1) for w in itertools.product((0, 1), repeat=n)]
    mu_naive = {w: mu[basis.index(w)] for w in words}
    params = moments.HierarchyParams(basis, lambda q: GAMMA)
    fast = moments.hierarchy_rhs(0.0, mu, params)
    slow = naive_rhs(mu_naive, max_length, GAMMA)
    diff = max(abs(slow[w] - fast[basis.index(w)]) / max(abs(slow[w]), 1e-300) for w in words
               if abs(slow[w]) > 1e-12)
    assert diff < 1e-12, diff
    return {"M": max_length, "classes": len(basis), "words": len(words),
            "n_terms": int(basis.targets.size),
            "aimrepro_us": 1e6 * time_call(lambda: moments.hierarchy_rhs(0.0, mu, params)),
            "naive_us": 1e6 * time_call(lambda: naive_rhs(mu_naive, max_length, GAMMA)),
            "basis_build_s": time_call(lambda: moments.WordBasis(max_length), min_seconds=0.1),
            "max_rel_diff": diff}


def bench_jobs() -> dict:
    """CPU seconds of one quick-scale job of each kind (the numbers of the sidecars)."""
    softmax = ProblemSpec("tied", "softmax", 2, 100, rho=0.5, normalisation="aim")
    linear = ProblemSpec("tied", "linear", 1, 200, rho=0.5, normalisation="aim",
                         loss_prefactor=1.0)
    start = time.process_time()
    moment_experiments.truncation_table(softmax, 0, np.linspace(0, 2, 41), [2, 3, 4, 6, 8])
    fig1 = time.process_time() - start
    start = time.process_time()
    moment_experiments.truncation_error_table(
        linear, 0, np.concatenate([[0.0], np.geomspace(0.003, 3.0, 49)]), 12,
        matrix_scale=0.3, weight_decay=4.0)
    s6 = time.process_time() - start
    return {"figure1_truncations_d100_M2-8_cpu_s": fig1, "figureS6_table_d200_M12_gamma4_cpu_s": s6}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="orders up to 10, no job timings")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    orders = (6, 8, 10) if args.quick else (6, 8, 10, 12, 14)
    results = [bench_rhs(m, rng) for m in orders]
    record = {"benchmark": "truncated tied moment hierarchy, one right-hand side",
              "python": platform.python_version(), "numpy": np.__version__,
              "machine": platform.machine(), "threads": 1, "rhs": results}
    if not args.quick:
        record["jobs"] = bench_jobs()
    out = Path(__file__).parent / "results" / "moments.json"
    out.write_text(json.dumps(record, indent=2) + "\n")
    print(f"{'M':>3} {'classes':>8} {'words':>7} {'terms':>7} {'aimrepro µs':>12} "
          f"{'naive µs':>10} {'speed-up':>9}")
    for r in results:
        print(f"{r['M']:>3} {r['classes']:>8} {r['words']:>7} {r['n_terms']:>7} "
              f"{r['aimrepro_us']:>12.1f} {r['naive_us']:>10.0f} "
              f"{r['naive_us'] / r['aimrepro_us']:>9.0f}")
    if "jobs" in record:
        print(record["jobs"])
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
