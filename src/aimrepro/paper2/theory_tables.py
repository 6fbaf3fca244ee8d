"""Theory tables over replicates: flow ensembles, initial velocities, truncation radii.

Each function computes one result table (columns for
:func:`aimrepro.records.tables.write_table`) for one problem at one d over
several replicate seeds, every replicate starting from the initial state of
the SGD replicate of that seed (:func:`aimrepro.paper2.sgd.initial_problem`),
and returns it with a diagnostics dict for the sidecar.  They feed the
finite-size trends of the claims (``docs/design.md``, "Theory ↔ experiment"):
one table per d, the seeds as the sample whose error of the mean the trend
uses.

* :func:`flow_ensemble_table`: the deterministic flows of several replicates
  in one long table (column ``seed``): the Gaussian-equivalent tied matrix
  flow, the closed ODE of direct S, or the exact finite-d tied population
  flow of :mod:`aimrepro.paper2.finite_d_drift` (what SGD follows at
  finite d; ``docs/paper2.md`` §5.1).
* :func:`tied_velocity_table`: dp₁₂/dt at W(0) by [P eq. 17], by the
  matrix flow ([P eq. 356]) and by the exact finite-d SGD drift.
* :func:`untied_velocity_table`: dq₁₂/dτ after the fast phase by [P eq. 42]
  and by the slaved slow flow at the replicate's U(0), V(0).
* :func:`radius_table`: the radius of convergence of the linear-case
  truncations (:mod:`aimrepro.paper2.truncation_radius`).
* :func:`untied_decay_table`: the untied population flow to late times, its
  excess loss and the decay its linearisation at the teacher predicts
  ([P App. F.4, Cor. 9]).
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Mapping, Sequence

import numpy as np

from aimrepro.numerics.seeds import check_seeds
from aimrepro.paper2.finite_d_drift import solve_finite_d_flow, tied_drift
from aimrepro.paper2.flows import reference_flow
from aimrepro.paper2.initial_velocity import (slaved_initial_velocity, tied_initial_velocity,
                                              tied_velocity_terms, untied_initial_velocity)
from aimrepro.paper2.matrices import trace_products
from aimrepro.paper2.moment_experiments import initial_state
from aimrepro.paper2.population import Potential
from aimrepro.paper2.sgd import ProblemSpec, initial_problem
from aimrepro.paper2.strong_recovery import (direct_rates, excess_loss, mode_sum_decay,
                                             optimum_curvature, tied_rates, untied_rates)
from aimrepro.paper2.trajectory import OrderParameters, Trajectory
from aimrepro.paper2.truncation_radius import riccati_radius
from aimrepro.paper2.untied.fast import MeanLandscape, fast_fixed_point
from aimrepro.paper2.untied.slow import solve_population_flow, untied_state
from aimrepro.records.tables import split_rows

__all__ = [
    "FLOWS",
    "POLYNOMIAL_LINKS",
    "flow_ensemble_table",
    "over_dims",
    "predicted_loss_rate",
    "radius_table",
    "read_flow_ensemble",
    "split_by_d",
    "tied_velocity_table",
    "untied_decay_table",
    "untied_velocity_table",
]

#: Flows of :func:`flow_ensemble_table`: tied matrix flow, direct closed ODE, exact finite-d tied flow.
FLOWS = ("tied", "direct", "exact")
#: Links with a polynomial loss, for which the exact finite-d drift is computed.
POLYNOMIAL_LINKS = ("h1", "h2", "h3", "linear")


def flow_ensemble_table(spec: ProblemSpec, seeds: Sequence[int], times, *, flow: str,
                        weight_decay: float = 0.0) -> tuple[dict[str, np.ndarray], dict]:
    """The flows of replicates ``seeds`` of one problem, as one long table.

    Parameters
    ----------
    spec : ProblemSpec
        ``param`` ``tied`` for the flows ``tied`` and ``exact``, ``direct``
        for ``direct``.
    seeds : sequence of int
        Replicate seeds (:func:`aimrepro.paper2.sgd.initial_problem`).
    times : increasing array of t_ode
    flow : {"tied", "direct", "exact"}
        ``tied``/``direct``: :func:`aimrepro.paper2.flows.reference_flow`
        (the d → ∞ equations from the finite-d initial state); ``exact``:
        :func:`aimrepro.paper2.finite_d_drift.solve_finite_d_flow` (polynomial
        links, one token, no weight decay).
    weight_decay : float

    Returns
    -------
    columns : dict
        ``seed`` and the columns of :meth:`Trajectory.columns` of every
        replicate, stacked (:func:`read_flow_ensemble` splits them again).
    diagnostics : dict
        ``converged`` (no flow blew up), ``n_blowups``, ``cpu_seconds``, ``nfev`` per seed.

    Notes
    -----
    Cost per replicate: that of the flow; the exact flow costs O(2^D d³) per
    right-hand side (D the degree of ℓ'), a few seconds at d = 100 for h₃.
    """
    if flow not in FLOWS:
        raise ValueError(f"flow must be one of {FLOWS}, got {flow!r}")
    expected = "direct" if flow == "direct" else "tied"
    if spec.param != expected:
        raise ValueError(f"flow {flow!r} needs spec.param = {expected!r}, got {spec.param!r}")
    if flow == "exact" and (spec.link not in POLYNOMIAL_LINKS or spec.T != 1 or weight_decay):
        raise ValueError("the exact finite-d flow is for one token, a polynomial link "
                         f"{POLYNOMIAL_LINKS} and no weight decay, got link {spec.link!r}, "
                         f"T = {spec.T}, weight_decay = {weight_decay}")
    seeds = check_seeds(seeds)
    start = time.process_time()
    parts, nfev, blowups = [], {}, 0
    for seed in seeds:
        if flow == "exact":
            student, teacher, _ = initial_problem(spec, seed)
            trajectory = solve_finite_d_flow(student.W, teacher, spec.loss(), times)
        else:
            trajectory = reference_flow(spec, seed, times, weight_decay=weight_decay)
        columns = trajectory.columns()
        parts.append({"seed": np.full(len(columns["t_ode"]), seed, dtype=np.int64), **columns})
        nfev[str(seed)] = int(trajectory.extra["nfev"][0]) if len(trajectory) else None
        blowups += int(trajectory.blew_up)
    table = {name: np.concatenate([part[name] for part in parts]) for name in parts[0]}
    return table, {"converged": blowups == 0, "n_blowups": blowups, "nfev": nfev,
                   "cpu_seconds": time.process_time() - start}


def read_flow_ensemble(columns: Mapping[str, np.ndarray], d: int) -> dict[int, Trajectory]:
    """{seed: Trajectory} of a table written from :func:`flow_ensemble_table`."""
    seeds = np.asarray(columns["seed"])
    out = {}
    for seed in dict.fromkeys(seeds.tolist()):
        rows = seeds == seed
        out[int(seed)] = Trajectory.from_columns(
            {name: np.asarray(col)[rows] for name, col in columns.items() if name != "seed"}, d)
    return out


def tied_velocity_table(spec: ProblemSpec, seeds: Sequence[int]) -> tuple[
        dict[str, np.ndarray], dict]:
    """dp₁₂/dt at the initial W of each replicate: [P eq. 17], the matrix flow, the exact SGD drift.

    Columns (one row per seed): ``seed``, ``eq17`` (−2Γ₁₂t₁p₂₂ at the
    replicate's q(0)), ``flow`` (the Gaussian-equivalent matrix flow, [P eq.
    356]; ``centered`` and ``overlap`` are its two terms beyond eq. 17),
    ``exact`` (the exact finite-d expected SGD drift, polynomial links; NaN
    otherwise), ``t1``, ``p22``, ``gamma12``.  Time t = 4αn/d.

    Notes
    -----
    Cost per seed: O(d r² + d r r*) for the flow's terms; the exact drift
    needs the moments of words up to length 7 from dense d×d matrices,
    O(n_prefixes d³) (about 2 s at d = 800).
    """
    if spec.param != "tied":
        raise ValueError(f"the tied identity needs spec.param = 'tied', got {spec.param!r}")
    seeds = check_seeds(seeds)
    start = time.process_time()
    potential = Potential(spec.loss(), spec.T)
    polynomial = spec.T == 1 and spec.link in POLYNOMIAL_LINKS
    rows = {name: [] for name in ("d", "seed", "eq17", "flow", "centered", "overlap", "exact",
                                  "t1", "p22", "gamma12")}
    for seed in seeds:
        student, teacher, _ = initial_problem(spec, seed)
        terms = tied_velocity_terms(potential, student.W, teacher)
        moments = terms.moments
        initial = OrderParameters.symmetric([moments["t1"], moments["t2"]],
                                            [[moments["q11"], moments["q12"]],
                                             [moments["q12"], moments["q22"]]])
        exact = (tied_drift(student.W, teacher, spec.loss()).exact["p12"] if polynomial
                 else math.nan)
        for name, value in (("d", spec.d), ("seed", seed),
                            ("eq17", tied_initial_velocity(potential, initial)),
                            ("flow", terms.total), ("centered", terms.centered),
                            ("overlap", terms.overlap), ("exact", exact), ("t1", moments["t1"]),
                            ("p22", moments["p22"]), ("gamma12", moments["gamma12"])):
            rows[name].append(value)
    columns = {name: np.asarray(values, dtype=np.int64 if name in ("d", "seed") else float)
               for name, values in rows.items()}
    return columns, {"converged": True, "polynomial": polynomial,
                     "cpu_seconds": time.process_time() - start}


def untied_velocity_table(spec: ProblemSpec, seeds: Sequence[int]) -> tuple[
        dict[str, np.ndarray], dict]:
    """dq₁₂/dτ after the fast phase at each replicate: [P eq. 42] and the slaved slow flow.

    Columns: ``seed``, ``m0`` (the replicate's m(0)), ``m_star`` (the fast
    state reached from it at q(0)), ``eq42_1``, ``eq42_2`` (−2D₁Q₂g*),
    ``slaved_1``, ``slaved_2`` (:func:`~aimrepro.paper2.initial_velocity.slaved_initial_velocity`
    at U(0), V(0)), and their sums ``eq42``, ``slaved`` (the velocity of
    q⁽¹⁾₁₂ + q⁽²⁾₁₂, which over q⁽¹⁾₂₂ + q⁽²⁾₂₂ is that of the symmetric overlap).
    """
    if spec.param != "untied":
        raise ValueError(f"[P eq. 42] is untied: spec.param must be 'untied', got {spec.param!r}")
    seeds = check_seeds(seeds)
    start = time.process_time()
    potential = Potential(spec.loss(), spec.T)
    rows = {name: [] for name in ("d", "seed", "m0", "m_star", "eq42_1", "eq42_2", "slaved_1",
                                  "slaved_2", "eq42", "slaved")}
    converged = True
    for seed in seeds:
        student, teacher, _ = initial_problem(spec, seed)
        state = untied_state(student.U, student.V, teacher)
        m0 = float(state.mean[0])
        fixed = fast_fixed_point(MeanLandscape.at(potential, state), m0)
        converged &= fixed.converged
        eq42 = untied_initial_velocity(potential, state, fixed.m_star).velocity
        slaved = slaved_initial_velocity(student.U, student.V, teacher, potential, mean_start=m0)
        for name, value in (("d", spec.d), ("seed", seed), ("m0", m0), ("m_star", fixed.m_star),
                            ("eq42_1", eq42[0]), ("eq42_2", eq42[1]), ("slaved_1", slaved[0]),
                            ("slaved_2", slaved[1]), ("eq42", eq42.sum()),
                            ("slaved", slaved.sum())):
            rows[name].append(value)
    columns = {name: np.asarray(values, dtype=np.int64 if name in ("d", "seed") else float)
               for name, values in rows.items()}
    return columns, {"converged": bool(converged), "cpu_seconds": time.process_time() - start}


def over_dims(make_table, spec: ProblemSpec, dims: Sequence[int], seeds: Sequence[int]
              ) -> tuple[dict[str, np.ndarray], dict]:
    """``make_table`` (:func:`tied_velocity_table` or :func:`untied_velocity_table`) at every d, stacked.

    Returns the stacked columns (their ``d`` column tells the sizes apart)
    and the diagnostics: ``converged`` of all, the others per d.
    """
    dims = [int(d) for d in dims]
    if not dims or len(set(dims)) != len(dims):
        raise ValueError(f"dims must be distinct dimensions, at least one, got {dims}")
    parts, diagnostics = [], {}
    for d in dims:
        columns, diag = make_table(dataclasses.replace(spec, d=d), seeds)
        parts.append(columns)
        diagnostics[str(d)] = diag
    table = {name: np.concatenate([part[name] for part in parts]) for name in parts[0]}
    return table, {"converged": all(diag["converged"] for diag in diagnostics.values()),
                   "per_d": diagnostics}


def split_by_d(columns: Mapping[str, np.ndarray]) -> dict[int, dict[str, np.ndarray]]:
    """{d: the rows of that d} of a table with a ``d`` column (:func:`over_dims`)."""
    return split_rows(columns, "d")


def radius_table(spec: ProblemSpec, seeds: Sequence[int], *, weight_decay: float = 0.0,
                 matrix_scale: float = 1.0) -> tuple[dict[str, np.ndarray], dict]:
    """The radius of convergence R of the linear-case truncations at each replicate's W(0), S*.

    Columns: ``seed``, ``radius`` (|t*|, the nearest zero of the Riccati
    determinant), ``singularity_re``, ``singularity_im``, ``no_teacher_radius``
    (1/(4cλ_max(S₁(0)))), ``converged`` (Newton and the argument-principle
    count agree).  The truncations are Taylor polynomials of the exact flow
    ([P App. D.3]): larger M helps for t < R and not beyond.
    """
    if spec.link not in ("linear", "h1") or spec.T != 1 or spec.param != "tied":
        raise ValueError("the radius is that of the tied linear case (link 'linear' or 'h1', "
                         f"T = 1), got {spec.param!r}, {spec.link!r}, T = {spec.T}")
    seeds = check_seeds(seeds)
    start = time.process_time()
    rows = {name: [] for name in ("seed", "radius", "singularity_re", "singularity_im",
                                  "no_teacher_radius", "converged")}
    iterations = {}
    for seed in seeds:
        W, teacher = initial_state(spec, seed, matrix_scale=matrix_scale)
        found = riccati_radius(W, teacher, prefactor=spec.loss_prefactor,
                               weight_decay=weight_decay)
        iterations[str(seed)] = found.iterations
        for name, value in (("seed", seed), ("radius", found.radius),
                            ("singularity_re", found.singularity.real),
                            ("singularity_im", found.singularity.imag),
                            ("no_teacher_radius", found.no_teacher_radius),
                            ("converged", found.converged)):
            rows[name].append(value)
    columns = {name: np.asarray(values, dtype=(np.int64 if name == "seed" else
                                                bool if name == "converged" else float))
               for name, values in rows.items()}
    return columns, {"converged": bool(np.all(columns["converged"])), "iterations": iterations,
                     "cpu_seconds": time.process_time() - start}


def predicted_loss_rate(spec: ProblemSpec, seed: int) -> float:
    """Late-time decay rate of the excess loss of replicate ``seed``'s flow, linearised at the teacher.

    Tied: 2gλ_min(S*) of :func:`aimrepro.paper2.strong_recovery.tied_rates`
    (time t = 4αn/d); direct: :func:`aimrepro.paper2.strong_recovery.direct_rates`
    at the replicate's teacher and skew part (time t = αn/d) ([P App. D.5]).
    NaN when the tied student is wider than the teacher's rank (the decay is
    then algebraic).  Cost: one d×d eigendecomposition.
    """
    if spec.param not in ("tied", "direct") or spec.T != 1:
        raise ValueError(f"the rates are for tied or direct attention with T = 1, got "
                         f"{spec.param!r}, T = {spec.T}")
    student, teacher, _ = initial_problem(spec, int(seed))
    potential = Potential(spec.loss(), spec.T)
    if spec.param == "tied":
        rates = tied_rates(potential, teacher, student_width=student.W.shape[1])
        return math.nan if rates.algebraic else rates.loss_rate
    op = OrderParameters(*trace_products([student.matrix(), teacher]))
    return direct_rates(potential, float(op.Psi[1, 1]), skew=0.5 * float(op.Omega[0, 0] - op.Psi[0, 0]),
                        teacher_trace=float(op.trace[1])).loss_rate


def _joined(first: Trajectory, rest: Trajectory) -> Trajectory:
    """Two legs of one flow, the second starting at the first's last record (kept once)."""
    extra = {name: np.concatenate([first.extra[name], rest.extra[name][1:]])
             for name in first.extra if name in rest.extra}
    return Trajectory(np.concatenate([first.t_ode, rest.t_ode[1:]]),
                      np.concatenate([first.order, rest.order[1:]]), first.d,
                      first.blew_up or rest.blew_up,
                      rest.t_blowup if rest.blew_up else first.t_blowup, extra)


def untied_decay_table(spec: ProblemSpec, seeds: Sequence[int], times, *, window_start: float,
                       method: str = "RK45", rtol: float = 1e-7) -> tuple[dict[str, np.ndarray],
                                                                            dict]:
    """The untied population flow to late τ, its excess loss and its linearised decay (ours).

    [P App. F.4, Cor. 9] proves that after strong recovery sets in the excess
    loss Δ = Φ − Φ* decays exponentially on τ (a Polyak–Łojasiewicz condition
    with an unspecified constant).  Per replicate: the population flow of U, V
    from the replicate's U(0), V(0) (:func:`~aimrepro.paper2.untied.slow.solve_population_flow`,
    the per-run reference at finite d; the slaved flow keeps Tr(U Vᵀ) at its
    initial value and so levels off above Φ* at finite d), stopped at
    ``window_start`` to read the factors there, then continued.  From the
    deviation E = M⁺ − M₂⁺ of the symmetric parts at ``window_start`` the flow
    linearised at the minimum it reaches predicts Δ(τ)/Δ(τ₀) = ‖E(τ)‖²/‖E(τ₀)‖²,
    with C = U Uᵀ + V Vᵀ frozen at its value at the horizon
    (:func:`~aimrepro.paper2.strong_recovery.mode_sum_decay`): the factors are
    not unique at the minimum, so C is that of the minimum this flow reaches,
    and it still moves by a few per cent after weak recovery (C frozen at τ₀
    instead predicts rates up to 14 % low at d = 50).  The slowest rate is
    4 g c_min(C) (:func:`~aimrepro.paper2.strong_recovery.untied_rates`),
    approached only once the modes next to c_min have died out.

    Parameters
    ----------
    spec : ProblemSpec
        Untied, one token (the linearisation is for T = 1 teacher–student MSE).
    seeds : sequence of int
    times : increasing array of τ from 0, ``window_start`` one of them
    window_start : float
        τ₀: where the linearisation starts (after weak recovery).
    method, rtol
        Of :func:`~aimrepro.paper2.untied.slow.solve_population_flow`
        (``atol`` = 1e-3 rtol).

    Returns
    -------
    columns : dict
        ``seed``, ``t_ode`` (τ), ``excess`` (Δ along the flow), ``predicted``
        (Δ(τ₀) times the linearised decay; NaN before τ₀), ``symmetric_overlap``,
        ``m_flow`` (the flow's mean), and per seed (constant over its rows; NaN
        if the flow blew up) ``c_min_start``, ``c_min_end`` (c_min(C) at τ₀ and
        at the horizon) and ``slowest_loss_rate`` (4 g c_min at the horizon).
    diagnostics : dict
        Per seed (string keys): ``g``, the three per-seed columns, ``nfev``,
        ``status``, ``blew_up``; ``converged`` of all; ``cpu_seconds``.

    Cost per replicate: the flow, O(d τ) explicit steps of O(d r²) (stiff fast
    direction), and two d×d eigendecompositions.
    """
    if spec.param != "untied" or spec.T != 1:
        raise ValueError(f"the untied decay table is for untied attention with T = 1, got "
                         f"{spec.param!r}, T = {spec.T}")
    times = np.asarray(times, dtype=float)
    starts = np.flatnonzero(np.isclose(times, window_start, rtol=0.0, atol=1e-12))
    if times[0] != 0.0 or starts.size != 1 or not 0 < starts[0] < times.size - 2:
        raise ValueError(f"times must start at 0 and hold window_start = {window_start:g} with at "
                         "least two records after it")
    i0 = int(starts[0])
    seeds = check_seeds(seeds)
    start = time.process_time()
    potential = Potential(spec.loss(), spec.T)
    names = ("seed", "t_ode", "excess", "predicted", "symmetric_overlap", "m_flow", "c_min_start",
             "c_min_end", "slowest_loss_rate")
    rows = {name: [] for name in names}
    per_seed, converged = {}, True
    for seed in seeds:
        student, teacher, _ = initial_problem(spec, seed)
        flow, (U0, V0) = solve_population_flow(student.U, student.V, teacher, potential,
                                               times[:i0 + 1], method=method, rtol=rtol,
                                               atol=1e-3 * rtol, return_state=True)
        legs = [flow]
        complete = not flow.blew_up and len(flow) == i0 + 1
        if complete:
            rest, end_state = solve_population_flow(U0, V0, teacher, potential, times[i0:],
                                                    method=method, rtol=rtol, atol=1e-3 * rtol,
                                                    return_state=True)
            legs.append(rest)
            complete = not rest.blew_up and len(rest) == times.size - i0
            flow = _joined(flow, rest)
        excess = excess_loss(potential, flow, kind="untied")
        variance = float(flow.at(0).Omega[1, 1] + flow.at(0).Psi[1, 1])
        g = optimum_curvature(potential, variance=variance, mean=spec.teacher_mean)
        predicted = np.full(len(flow), np.nan)
        diag = {"g": g, "blew_up": not complete,
                "nfev": sum(int(leg.extra["nfev"][0]) for leg in legs if len(leg)),
                "status": [int(leg.extra["status"][0]) for leg in legs if len(leg)]}
        if complete:
            deviation = U0 @ V0.T + V0 @ U0.T - (teacher.dense() + teacher.dense().T)
            U_end, V_end = end_state
            spread = U_end @ U_end.T + V_end @ V_end.T
            predicted[i0:] = excess[i0] * mode_sum_decay(deviation, spread, g,
                                                         flow.t_ode[i0:] - flow.t_ode[i0])
            rates = {name: untied_rates(potential, U, V, teacher_mean=spec.teacher_mean,
                                        teacher_variance=variance)
                     for name, (U, V) in (("start", (U0, V0)), ("end", end_state))}
            diag.update(c_min_start=rates["start"].c_min, c_min_end=rates["end"].c_min,
                        slowest_loss_rate=rates["end"].loss_rate)
        converged &= complete
        per_seed[str(seed)] = diag
        for name, column in (("seed", np.full(len(flow), seed)), ("t_ode", flow.t_ode),
                             ("excess", excess), ("predicted", predicted),
                             ("symmetric_overlap", flow.symmetric_overlap),
                             ("m_flow", flow.extra["m_flow"])):
            rows[name].append(column)
        for name in ("c_min_start", "c_min_end", "slowest_loss_rate"):
            rows[name].append(np.full(len(flow), diag.get(name, math.nan)))
    columns = {name: np.concatenate(parts).astype(np.int64 if name == "seed" else float)
               for name, parts in rows.items()}
    return columns, {"converged": bool(converged), "per_seed": per_seed,
                     "cpu_seconds": time.process_time() - start}
