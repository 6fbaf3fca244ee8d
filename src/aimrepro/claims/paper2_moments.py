"""Paper 2's claims about the moment hierarchy as measured rows (``docs/paper2.md`` §4, §6, §8.1).

Topic ``paper2_moments``.  Every number comes from the pipeline's results:
the truncation-error tables of Figure S6 (linear case, exact Riccati
reference), the SGD runs, matrix flows and truncations of Figure 1 (softmax)
and those of Figure 4 (linear case).

The two measurements, :func:`~aimrepro.paper2.moment_experiments.convergence_horizon`
(where "larger M helps" stops) and
:func:`~aimrepro.paper2.moment_experiments.exponential_rate` (κ of
error ∝ e^{−κM}), live with the tables they read.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from aimrepro.claims.table import OVERSTATED, ClaimRow, claim_row
from aimrepro.paper2.moment_experiments import (EXACT_ERROR_FLOOR, FLOW_ERROR_FLOOR,
                                                convergence_horizon, decay_horizon, error_matrix,
                                                exponential_rate, signed_overlap,
                                                truncation_overlap_errors)
from aimrepro.paper2.trajectory import Trajectory

__all__ = [
    "FLOW_SGD_LOSS_TOL",
    "FLOW_SGD_OVERLAP_TOL",
    "RICCATI_SGD_TOL",
    "MomentFigure",
    "MomentsInputs",
    "paper2_moments_claims",
    "radius_rows",
    "truncation_figure_rows",
]

#: |SGD − matrix flow| on the overlap p₁₂/p₂₂, over the whole horizon of Figure 1: the
#: SGD-noise correction is O(αd/B) relative (αd/B = 0.02 at quick scale, ``docs/paper2.md`` §2.4)
#: and the initial moments fluctuate by O(1/√d) between replicates.
FLOW_SGD_OVERLAP_TOL = 0.025
#: Relative |SGD batch loss − Φ(q_flow)|/Φ: adds the finite-d gap of Theorem 1 (≈ 1–3 % for
#: softmax at d = 100, Figure S1) and the Monte-Carlo noise of the batch losses.
FLOW_SGD_LOSS_TOL = 0.05
#: Records per window over which the SGD batch loss is averaged before the comparison.
LOSS_WINDOW = 5
#: Overlap distance within which a truncation counts as agreeing with its reference.
AGREEMENT_TOL = 0.01
#: |SGD − Riccati| relative to the teacher's q₂₂, linear case (Figure 4).
RICCATI_SGD_TOL = 0.02


_row = functools.partial(claim_row, "paper2")


def _fmt(x: float | None, digits: int = 3) -> str:
    if x is None or not math.isfinite(x):
        return "none"
    return f"{x:.{digits}g}"


def _nearest(times: np.ndarray, t: float) -> int:
    return int(np.argmin(np.abs(times - t)))


def _first_exceeding(times: np.ndarray, values: np.ndarray, tol: float) -> float | None:
    """First time at which ``values`` exceeds ``tol`` (NaN counts as exceeding); None if never."""
    above = np.flatnonzero(~(np.asarray(values) <= tol))
    return float(times[above[0]]) if above.size else None


# --- Figure S6: the linear case against its exact solution ----------------------------------


def _blowups(table: Mapping[str, np.ndarray]) -> str:
    """Which orders of one S6 table blew up within its horizon, and when the largest did."""
    order = np.asarray(table["order"])
    blown = np.asarray(table["blew_up"], dtype=bool)
    orders = sorted(set(order[blown].tolist()))
    if not orders:
        return "no truncation blew up"
    t_top = float(np.min(np.asarray(table["t_ode"])[blown & (order == orders[-1])]))
    return (f"blew up: M = {', '.join(map(str, orders))} (M = {orders[-1]} by t = "
            f"{t_top:.3g})")


def s6_rows(tables: Mapping[float, Mapping[str, np.ndarray]], *, short_time: float,
            matrix_scale: float) -> list[ClaimRow]:
    """Exponential decay in M at a short time, and the convergence horizon per weight decay."""
    out = []
    gammas = sorted(tables)
    horizons = {}
    for gamma in gammas:
        orders, times, err = error_matrix(tables[gamma])
        horizons[gamma] = convergence_horizon(times[1:], err[:, 1:], list(orders),
                                              floor=EXACT_ERROR_FLOOR)
    g0 = gammas[0]
    orders, times, err = error_matrix(tables[g0])
    i = _nearest(times, short_time)
    kappa, r2, n = exponential_rate(orders, err[:, i], floor=EXACT_ERROR_FLOOR)
    t_short = float(times[i])
    ratio = err[-1, i] / err[0, i] if err[0, i] > 0 else math.nan
    converging = horizons[g0] is None or horizons[g0] > t_short
    out.append(_row(
        id="p2-trunc-exponential-linear", section="§4.2, [P Cor. 2], §6 S6",
        claim=f"linear case, γ = {g0:g}: on a short horizon the truncation error decays "
              "exponentially in the order M",
        expected="error ∝ e^{−κM} with κ > 0",
        measured=f"κ = {_fmt(kappa)} per order (R² = {_fmt(r2, 3)})",
        tolerance="κ > 0, R² ≥ 0.9, and M_max the best order at that time",
        passed=math.isfinite(kappa) and kappa > 0 and r2 >= 0.9 and converging,
        note=f"error of q12 against the exact Riccati solution at t = {t_short:.3g} (S and S* "
             f"scaled by {matrix_scale:g}); M = {orders[0]}…{orders[-1]}: error "
             f"{_fmt(err[0, i], 2)} → {_fmt(err[-1, i], 2)} (ratio {_fmt(ratio, 2)}), "
             f"{n} orders above the round-off floor {EXACT_ERROR_FLOOR:g}"))
    t_c = horizons[g0]
    per_gamma = "; ".join(f"γ = {g:g}: t_c = {_fmt(horizons[g])}, {_blowups(tables[g])}"
                          for g in gammas)
    out.append(_row(
        id="p2-trunc-horizon-gamma0", section="§4.2, §8 risk 1, [P Cor. 2, Ass. 2.4]",
        claim=f"linear case, γ = {g0:g}: larger M stops helping beyond a finite horizon t_c "
              "(the paper proves uniform-in-time accuracy only for large weight decay)",
        expected="finite t_c beyond the short-horizon regime",
        measured=f"t_c = {_fmt(t_c)}",
        tolerance=f"t_c finite and > {t_short:.3g}",
        passed=t_c is not None and t_c > t_short,
        note=f"t_c = first time at which M = {orders[-1]} is not the most accurate of M = "
             f"{orders[0]}…{orders[-1]} (errors against the exact solution, time grid of the "
             f"table); {per_gamma}. Horizon 'none' = larger M helps over the whole grid "
             f"(t ≤ {times[-1]:.3g})"))
    if len(gammas) > 1:
        g1 = gammas[-1]
        t_hi = horizons[g1] if horizons[g1] is not None else math.inf
        t_lo = horizons[g0] if horizons[g0] is not None else math.inf
        out.append(_row(
            id="p2-trunc-horizon-weight-decay", section="§4.2, [P Cor. 2, Ass. 2.4]",
            claim="weight decay extends the horizon over which larger M helps",
            expected=f"t_c(γ = {g1:g}) > t_c(γ = {g0:g})",
            measured=f"t_c(γ = {g1:g}) = {_fmt(horizons[g1])}, "
                     f"t_c(γ = {g0:g}) = {_fmt(horizons[g0])}",
            tolerance="strictly larger (grid resolution)", passed=t_hi > t_lo,
            note=per_gamma + "; the proof's uniform bound needs γ > γ_* (Assumption 2.4), "
                             "which the tested γ need not reach"))
    return out


# --- Figures 1 and 4: truncations against the reference and SGD ----------------------------


def _mean_overlap(group: Sequence[Trajectory], times: np.ndarray) -> np.ndarray:
    """Mean signed overlap of trajectories, interpolated onto ``times`` (NaN past a run's end)."""
    values = []
    for run in group:
        v = np.interp(times, run.t_ode, signed_overlap(run), right=np.nan)
        values.append(v)
    return np.mean(values, axis=0)


def truncation_figure_rows(*, figure: str, label: str, runs: Sequence[Trajectory],
                           references: Sequence[Trajectory],
                           truncations: Sequence[Mapping[int, Trajectory]],
                           orders: Sequence[int], short_time: float, floor: float,
                           reference_name: str, radius: Mapping[str, float] | None = None
                           ) -> list[ClaimRow]:
    """Exponential decay at a short time and the horizon of "larger M helps", one figure.

    [P Cor. 2] bounds the truncation error uniformly in time only for a weight
    decay γ > γ*; at γ = 0 "larger M helps" is a statement for t < t_c.  The
    second row is therefore ``pass`` when larger M helps over the whole
    displayed horizon, ``overstated`` (with t_c, and the radius of
    convergence R of the Taylor series where ``radius`` gives it, else the
    apparent radius, the zero of κ(t) of
    :func:`~aimrepro.paper2.moment_experiments.decay_horizon`) when it
    holds at short times (the first row passes) but stops at t_c, and
    ``FAIL`` otherwise.
    """
    orders = sorted(orders)
    times, overlaps, err = truncation_overlap_errors(truncations, references, orders)
    i = _nearest(times, short_time)
    kappa, r2, n = exponential_rate(orders, err[:, i], floor=floor)
    t_c = convergence_horizon(times[1:], err[:, 1:], orders, floor=floor)
    t_kappa = decay_horizon(times[1:], err[:, 1:], orders, floor=floor)
    horizon = float(times[-1])
    top_vs_sgd = np.abs(overlaps[:, -1].mean(axis=0) - _mean_overlap(runs, times))
    at_tc = _nearest(times, t_c) if t_c is not None else times.size - 1
    errs = ", ".join(f"M={m}: {_fmt(e, 2)}" for m, e in zip(orders, err[:, i]))
    short_ok = math.isfinite(kappa) and kappa > 0 and r2 >= 0.8
    rows = [_row(
        id=f"p2-{figure}-trunc-exponential", section=f"§4.2, §6 {label}, [P Cor. 2]",
        claim=f"{label}: at a short time the truncation error decays exponentially in M",
        expected="error ∝ e^{−κM} with κ > 0", measured=f"κ = {_fmt(kappa)} per order "
                                                         f"(R² = {_fmt(r2, 3)})",
        tolerance="κ > 0 and R² ≥ 0.8", passed=short_ok,
        note=f"|overlap error| against the {reference_name} from the same initial moments at "
             f"t = {times[i]:.3g}, mean of {len(references)} replicates: {errs}; {n} orders "
             f"above the floor {floor:g}")]
    top_err = top_vs_sgd[at_tc]
    within = "; ".join(f"M={m}: {_fmt(_first_exceeding(times, err[j], AGREEMENT_TOL))}"
                       for j, m in enumerate(orders))
    if t_c is None:
        verdict = {"passed": True}
    elif short_ok and t_c > times[i]:
        verdict = {"verdict": OVERSTATED}
    else:
        verdict = {"passed": False}
    regime = (f"holds for t < t_c = {_fmt(t_c)} only" if t_c is not None
              else f"holds up to t = {horizon:g}")
    if radius is not None and t_c is not None:
        regime += (f", the radius of convergence of the truncations (Taylor polynomials of the "
                   f"exact flow): R = {_fmt(radius['radius'])}, 1/(4cλ_max(S1(0))) = "
                   f"{_fmt(radius['no_teacher_radius'])} (row p2-{figure}-truncation-radius)")
    elif t_c is not None:
        regime += (": the truncations stop converging beyond a finite time at γ = 0; the error "
                   f"stops decaying in M on average (κ(t) = 0, the apparent radius of "
                   f"convergence) at t = {_fmt(t_kappa)} (in the linear case, Fig. 4, the same "
                   "estimate meets the exact radius: row p2-fig4-truncation-radius)")
    rows.append(_row(
        id=f"p2-{figure}-more-orders-better", section=f"§6 {label}, [P Cor. 2], §8 risk 1",
        claim=f"{label}: increasing M improves the agreement (the caption's statement, γ = 0)",
        expected=f"larger M helps up to t = {horizon:g}",
        measured=f"larger M helps up to t_c = {_fmt(t_c) if t_c is not None else 'horizon'}",
        tolerance=f"t_c ≥ horizon {horizon:g}",
        note=f"{regime}. [P Cor. 2] bounds the error uniformly in time only for γ > γ*; the "
             f"figure uses γ = 0. t_c = first time at which M = {orders[-1]} is not the closest "
             f"of M = {', '.join(map(str, orders))} to the {reference_name} (a truncation that "
             f"blew up or left the PSD cone counts as infinitely far); |M = {orders[-1]} − SGD| "
             f"in the overlap at t = {times[at_tc]:.3g}: {_fmt(top_err, 2)}. Time up to which "
             f"each order stays within {AGREEMENT_TOL:g} of the {reference_name}: {within} "
             "('none' = the whole horizon). The paper does not state its figure's horizon",
        **verdict))
    return rows


def radius_rows(*, figure: str, label: str, references: Sequence[Trajectory],
                truncations: Sequence[Mapping[int, Trajectory]], orders: Sequence[int],
                radius: Mapping[str, np.ndarray], floor: float) -> list[ClaimRow]:
    """The horizon of "larger M helps" is the radius of convergence R of the truncations.

    In the exactly solvable case the truncation of order M is the Taylor
    polynomial of degree M − 1 of the exact flow ([P App. D.3]), so larger M
    helps for t < R and not beyond; R is the distance to the nearest complex
    zero of the Riccati determinant (:mod:`aimrepro.paper2.truncation_radius`),
    per replicate.  Passes when the measured t_c lies within two record
    spacings (or 5 %) of the mean R, the error still decays in M at 0.9 R, and
    the zero of κ(t) (:func:`~aimrepro.paper2.moment_experiments.decay_horizon`,
    the estimate that gives Figure 1 its apparent radius) lies within the same
    tolerance of R: this case checks that estimate against the exact answer.
    """
    orders = sorted(orders)
    times, _, err = truncation_overlap_errors(truncations, references, orders)
    t_c = convergence_horizon(times[1:], err[:, 1:], orders, floor=floor)
    t_kappa = decay_horizon(times[1:], err[:, 1:], orders, floor=floor)
    R = np.asarray(radius["radius"], float)
    r_mean = float(R.mean())
    spacing = float(np.median(np.diff(times)))
    tol = max(2 * spacing, 0.05 * r_mean)
    kappas = {}
    for fraction in (0.5, 0.9, 1.3):
        if fraction * r_mean <= times[-1]:
            kappas[fraction] = exponential_rate(orders, err[:, _nearest(times, fraction * r_mean)],
                                                floor=floor)[0]
    decays = math.isfinite(kappas.get(0.9, math.nan)) and kappas[0.9] > 0
    converged = bool(np.all(np.asarray(radius["converged"], bool)))
    return [_row(
        id=f"p2-{figure}-truncation-radius", section="§4.2, [P App. D.3, Cor. 2]",
        claim=f"{label}: larger M helps exactly inside the radius of convergence R of the "
              "truncations (γ = 0)",
        expected=r_mean, measured=t_c if t_c is not None else math.nan,
        tolerance=f"|t_c − R| ≤ {tol:.2g} (2 record spacings or 5 %); κ(0.9R) > 0; "
                  f"|t(κ = 0) − R| ≤ {tol:.2g}",
        passed=(t_c is not None and abs(t_c - r_mean) <= tol and decays and converged
                and t_kappa is not None and abs(t_kappa - r_mean) <= tol),
        note=f"R per replicate {', '.join(f'{r:.4g}' for r in R)} (nearest zero of det(I + 4c "
             f"W0ᵀF(t)W0), on the negative real axis: {bool(np.all(np.abs(radius['singularity_im']) < 1e-9 * R))}); "
             f"without the teacher 1/(4cλ_max) = "
             f"{', '.join(f'{r:.4g}' for r in radius['no_teacher_radius'])}; decay rate κ of the "
             "error in M at "
             + ", ".join(f"{f:g}R: {_fmt(k)}" for f, k in kappas.items())
             + f"; κ(t) = 0 (the error stops decaying in M on average) at t = {_fmt(t_kappa)}"
             + ("" if converged else "; the root search did not converge for every replicate"))]


def flow_sgd_rows(runs: Sequence[Trajectory], flows: Sequence[Trajectory],
                  flow_losses: Sequence[np.ndarray]) -> list[ClaimRow]:
    """Figure 1: the matrix flow (infinite order) follows SGD over the whole horizon."""
    times = flows[0].t_ode
    flow_overlap = np.mean([signed_overlap(f) for f in flows], axis=0)
    sgd = _mean_overlap(runs, times)
    diff = np.abs(sgd - flow_overlap)
    worst = int(np.nanargmax(diff))
    flow_loss = np.mean(flow_losses, axis=0)
    ratios = []
    for run in runs:
        # batch_loss at a record is the mean over the steps since the previous one
        t_mid = np.concatenate([[run.t_ode[0]], 0.5 * (run.t_ode[1:] + run.t_ode[:-1])])
        ratios.append(run.column("batch_loss") / np.interp(t_mid, times, flow_loss) - 1.0)
    n = min(len(r) for r in ratios)
    # record 0 holds the first batch only; average LOSS_WINDOW records against batch noise
    mean_ratio = np.mean([r[1:n] for r in ratios], axis=0)
    n_windows = max(1, mean_ratio.size // LOSS_WINDOW)
    windows = np.array([w.mean() for w in np.array_split(mean_ratio, n_windows)])
    worst_loss = float(np.max(np.abs(windows)))
    blowups = sum(run.blew_up for run in runs) + sum(f.blew_up for f in flows)
    d = runs[0].d
    horizon = float(times[-1])
    return [
        _row(id="p2-fig1-flow-matches-sgd", section="§4.3, §6 Fig. 1",
             claim="the matrix flow (the hierarchy at infinite order) follows SGD over the whole "
                   "horizon: overlap",
             expected=0.0, measured=float(np.nanmax(diff)),
             tolerance=f"max_t |Δ overlap| ≤ {FLOW_SGD_OVERLAP_TOL:g}",
             passed=bool(np.nanmax(diff) <= FLOW_SGD_OVERLAP_TOL) and blowups == 0,
             note=f"mean over {len(runs)} SGD runs against the mean of their matrix flows, "
                  f"t ≤ {horizon:g}, d = {d}; largest gap at t = {times[worst]:.3g} (SGD "
                  f"{sgd[worst]:.4f}, flow {flow_overlap[worst]:.4f})"
                  + (f"; {blowups} blow-up(s)" if blowups else "")),
        _row(id="p2-fig1-flow-matches-sgd-loss", section="§3.1, §4.3, §6 Fig. 1",
             claim="the matrix flow follows SGD over the whole horizon: population loss",
             expected=0.0, measured=worst_loss,
             tolerance=f"max_t |L_SGD/Φ(q_flow) − 1| ≤ {FLOW_SGD_LOSS_TOL:g}",
             passed=worst_loss <= FLOW_SGD_LOSS_TOL,
             note=f"SGD batch losses (mean over runs and over windows of {LOSS_WINDOW} records, "
                  f"{n_windows} windows) against Φ at the flow's q; includes the finite-d gap "
                  "of Theorem 1 (Figure S1); signed relative differences per window: "
                  + ", ".join(f"{w:+.3f}" for w in windows)),
    ]


def riccati_sgd_rows(runs: Sequence[Trajectory], exact: Sequence[Trajectory]) -> list[ClaimRow]:
    """Figure 4: SGD follows the exact Riccati solution of the linear case."""
    times = exact[0].t_ode
    worst = 0.0
    for name in ("t1", "Psi11", "Psi12"):
        sgd = np.mean([np.interp(times, r.t_ode, r.column(name), right=np.nan) for r in runs],
                      axis=0)
        ref = np.mean([e.column(name) for e in exact], axis=0)
        scale = np.mean([e.column("Psi22")[0] for e in exact])
        worst = max(worst, float(np.nanmax(np.abs(sgd - ref)) / scale))
    return [_row(
        id="p2-fig4-riccati-matches-sgd", section="§4.4, [P eq. 343], §6 Fig. 4",
        claim="linear case: SGD follows the exact Riccati matrix flow",
        expected=0.0, measured=worst, tolerance=f"max |Δ| / q22 ≤ {RICCATI_SGD_TOL:g}",
        passed=worst <= RICCATI_SGD_TOL and not any(r.blew_up for r in runs),
        note=f"t1, q11, q12 of the mean of {len(runs)} SGD runs against the closed form from the "
             f"same initial states, t ≤ {times[-1]:.3g}, d = {runs[0].d}")]


@dataclass(frozen=True)
class MomentFigure:
    """The replicates of Figure 1 or 4, each list over the replicates in the same order.

    ``runs`` (SGD), ``references`` (matrix flows for Figure 1, Riccati solutions
    for Figure 4), ``reference_losses`` (Φ along them), ``truncations`` (one
    {order: Trajectory} per replicate), the ``orders`` drawn and the
    ``short_time`` of the exponential fit.
    """

    runs: Sequence[Trajectory]
    references: Sequence[Trajectory]
    reference_losses: Sequence[np.ndarray]
    truncations: Sequence[Mapping[int, Trajectory]]
    orders: Sequence[int]
    short_time: float


@dataclass(frozen=True)
class MomentsInputs:
    """What the ``paper2_moments`` topic judges.

    ``s6_tables`` maps each weight decay to Figure S6's truncation-error table;
    ``figure4_radius`` is the table of :func:`aimrepro.paper2.theory_tables.radius_table`
    at Figure 4's replicates.
    """

    s6_tables: Mapping[float, Mapping[str, np.ndarray]]
    s6_short_time: float
    s6_matrix_scale: float
    figure1: MomentFigure
    figure4: MomentFigure
    figure4_radius: Mapping[str, np.ndarray] | None = None


def paper2_moments_claims(inputs: MomentsInputs) -> list[ClaimRow]:
    """All rows of the ``paper2_moments`` topic."""
    figure1, figure4, figure4_radius = inputs.figure1, inputs.figure4, inputs.figure4_radius
    rows = s6_rows(inputs.s6_tables, short_time=inputs.s6_short_time, matrix_scale=inputs.s6_matrix_scale)
    rows += flow_sgd_rows(figure1.runs, figure1.references, figure1.reference_losses)
    rows += truncation_figure_rows(figure="fig1", label="Fig. 1 (softmax, T = 2)",
                                   runs=figure1.runs, references=figure1.references,
                                   truncations=figure1.truncations, orders=figure1.orders,
                                   short_time=figure1.short_time, floor=FLOW_ERROR_FLOOR,
                                   reference_name="matrix flow")
    rows += riccati_sgd_rows(figure4.runs, figure4.references)
    summary = None
    if figure4_radius is not None:
        summary = {"radius": float(np.mean(figure4_radius["radius"])),
                   "no_teacher_radius": float(np.mean(figure4_radius["no_teacher_radius"]))}
    rows += truncation_figure_rows(figure="fig4", label="Fig. 4 (linear, L = 1)",
                                   runs=figure4.runs, references=figure4.references,
                                   truncations=figure4.truncations, orders=figure4.orders,
                                   short_time=figure4.short_time, floor=EXACT_ERROR_FLOOR,
                                   reference_name="exact Riccati solution", radius=summary)
    if figure4_radius is not None:
        rows += radius_rows(figure="fig4", label="Fig. 4 (linear, L = 1)",
                            references=figure4.references,
                            truncations=figure4.truncations, orders=figure4.orders,
                            radius=figure4_radius, floor=EXACT_ERROR_FLOOR)
    return rows
