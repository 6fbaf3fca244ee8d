"""The untied truncated hierarchy against the slaved slow flow, over replicates ([P App. F.2, Cor. 8]).

For each replicate (the initial U, V and teacher of
:func:`aimrepro.paper2.sgd.initial_problem`) the slaved slow flow
(:func:`aimrepro.paper2.untied.slow.solve_slow_flow`, mean slaved to m*(q)
on the branch reached from the replicate's m(0)) and the truncations of
order M = 2 … ``max_order`` (:func:`aimrepro.paper2.untied.truncation.solve_untied_truncation`)
from the same moments are integrated over a short slow-time window.  Corollary 8
says the truncations converge to the flow as M grows; inside their radius of
convergence the error falls geometrically in M (``docs/paper2.md`` §5.3).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence

import numpy as np

from aimrepro.numerics.seeds import check_seeds
from aimrepro.paper2.population import Potential
from aimrepro.paper2.sgd import ProblemSpec, initial_problem
from aimrepro.paper2.untied.slow import solve_slow_flow, untied_state
from aimrepro.paper2.untied.truncation import (UntiedWordBasis, solve_untied_truncation,
                                               untied_initial_moments)

__all__ = ["truncation_error_table"]


def truncation_error_table(spec: ProblemSpec, seeds: Sequence[int], times, *,
                           max_order: int) -> tuple[dict[str, np.ndarray], dict]:
    """s(τ) of the slaved slow flow (``order`` 0) and of the truncations M = 2 … ``max_order``.

    Parameters
    ----------
    spec : ProblemSpec
        Untied, one token, no student mean prescribed (``init_mean`` None).
    seeds : sequence of int
        Replicate seeds.
    times : increasing array of τ, starting at 0
    max_order : int
        Largest truncation order M (2 … 7).

    Returns
    -------
    columns : dict
        Long table: ``seed``, ``order``, ``tau``, ``s`` (the symmetric overlap;
        NaN past a truncation's blow-up), ``q11`` (Ω₁₁).
    diagnostics : dict
        ``converged`` (the slaved flows did not blow up), ``blowups`` per
        order (truncations that left their domain inside the window),
        ``cpu_seconds``.

    Notes
    -----
    Cost per replicate: the initial moments O(n_words d³) with n_words =
    1049 at M = 5, and the hierarchy's right-hand side; seconds at M = 5,
    d = 100.
    """
    if spec.param != "untied" or spec.T != 1:
        raise ValueError(f"the truncation is untied with T = 1, got {spec.param!r}, T = {spec.T}")
    if not (isinstance(max_order, (int, np.integer)) and 2 <= max_order <= 7):
        raise ValueError(f"max_order must be an integer in [2, 7], got {max_order!r}")
    times = np.asarray(times, dtype=float)
    if times.ndim != 1 or times.size < 2 or times[0] != 0 or not np.all(np.diff(times) > 0):
        raise ValueError("times must be an increasing 1-D array starting at 0")
    seeds = check_seeds(seeds)
    start = time.process_time()
    potential = Potential(spec.loss(), spec.T)
    bases = {M: UntiedWordBasis(M) for M in range(2, max_order + 1)}
    rows = {name: [] for name in ("seed", "order", "tau", "s", "q11")}
    blowups = {str(M): 0 for M in bases}
    flows_ok = True

    def add(seed, order, tau, s, q11):
        n = len(tau)
        rows["seed"].append(np.full(n, seed, dtype=np.int64))
        rows["order"].append(np.full(n, order, dtype=np.int64))
        rows["tau"].append(np.asarray(tau, float))
        rows["s"].append(np.asarray(s, float))
        rows["q11"].append(np.asarray(q11, float))

    for seed in seeds:
        student, teacher, _ = initial_problem(spec, seed)
        m0 = float(untied_state(student.U, student.V, teacher).mean[0])
        flow = solve_slow_flow(student.U, student.V, teacher, potential, times, mean_start=m0,
                               rtol=1e-10, atol=1e-12)
        flows_ok &= not flow.blew_up
        add(seed, 0, flow.t_ode, flow.symmetric_overlap, flow.column("Omega11"))
        for M, basis in bases.items():
            mu0 = untied_initial_moments(basis, student.U, student.V, teacher)
            run = solve_untied_truncation(basis, mu0, potential, times, d=spec.d,
                                          teacher_mean=spec.teacher_mean, mean_start=m0)
            blowups[str(M)] += int(run.blew_up)
            traj = run.trajectory()
            s = np.full(times.size, math.nan)
            q11 = np.full(times.size, math.nan)
            s[:len(traj)] = traj.symmetric_overlap
            q11[:len(traj)] = traj.column("Omega11")
            add(seed, M, times, s, q11)
    columns = {name: np.concatenate(parts) for name, parts in rows.items()}
    return columns, {"converged": bool(flows_ok), "blowups": blowups,
                     "cpu_seconds": time.process_time() - start}
