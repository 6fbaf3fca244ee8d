"""Strong recovery: the late-time decay rate of the excess loss, on the flows and on SGD.

After weak recovery the excess loss Φ − Φ* of paper 2's dynamics decays
exponentially ([P App. D.5, F.4; Cor. 6, 9]).  The claims of the
``paper2_dynamics`` topic (tied and direct attention: :func:`flow_rate_rows`,
:func:`sgd_rate_rows`) and of the ``paper2_untied`` topic (:func:`untied_rate_rows`)
judge it the same way, with one tolerance (:data:`STRONG_RATE_TOL`): a flow's
fitted rate against its linearisation, and SGD's rate extrapolated to lr → 0
by a weighted line through the step sizes (:func:`rate_at_zero_lr`).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence

import numpy as np

from aimrepro.claims.table import ClaimRow, claim_row
from aimrepro.claims.trends import judge_extrapolation, line_at_zero
from aimrepro.numerics.stats import mean_and_sem
from aimrepro.paper2.losses import MSELoss, make_link
from aimrepro.paper2.population import Potential
from aimrepro.paper2.strong_recovery import excess_loss, late_time_rate
from aimrepro.paper2.trajectory import Trajectory
from aimrepro.records.tables import split_rows

__all__ = ["STRONG_FLOOR", "STRONG_RATE_TOL", "STRONG_SGD_WINDOW", "STRONG_WINDOW", "flow_rate_rows",
           "rate_at_zero_lr", "sgd_rate_rows", "untied_rate_rows"]

_row = functools.partial(claim_row, "paper2")

#: Relative tolerance of a late-time decay rate: a flow's against its linearisation, SGD's
#: (extrapolated to lr → 0) against the prediction or against its flow.
STRONG_RATE_TOL = 0.05


def rate_at_zero_lr(lrs: Sequence[float], per_lr: Sequence[Sequence[float]]
                    ) -> tuple[np.ndarray, np.ndarray, float, float, float]:
    """Rates measured at several step sizes, extrapolated to lr → 0.

    ``per_lr[i]`` holds the values (rates, or gaps to a flow's rate) of the
    runs at ``lrs[i]``.  Returns the mean per step size (NaN unless all its
    values are finite), their errors of the mean, and the weighted line's
    value at lr = 0, its standard error and its slope (NaN unless every mean
    is finite).  With a realizable, noiseless teacher the gradient noise
    vanishes at the minimum, so SGD has no additive loss floor: the step size
    enters as an O(lr) shift of the rate, which the line accounts for.
    """
    means, sems = [], []
    for values in per_lr:
        mean, sem, n = mean_and_sem(values)
        means.append(mean if n == len(values) else math.nan)
        sems.append(sem)
    means, sems = np.asarray(means), np.asarray(sems)
    if not np.all(np.isfinite(means)):
        return means, sems, math.nan, math.nan, math.nan
    return (means, sems, *line_at_zero(np.asarray(lrs, float), means, sems))


# --- tied and direct attention (topic paper2_dynamics) -------------------------------------


#: Excess losses below it are the flows' integration floor, left out of the fit: the matrix flow
#: (rtol 1e-6) is smooth down to ~1e-12, the closed ODE's excess jitters at ~1e-11.
STRONG_FLOOR = {"tied": 1e-10, "direct": 1e-8}
#: The fit window is the last fraction of the flow's records above the floor.
STRONG_WINDOW = 0.125


def flow_rate_rows(ensembles: Mapping[tuple[str, str, int], Sequence[Trajectory]],
                         predicted: Mapping[tuple[str, str, int], Sequence[float]], *,
                         threshold: float, tolerance: float = STRONG_RATE_TOL,
                         floor: Mapping[str, float] = STRONG_FLOOR,
                         window: float = STRONG_WINDOW,
                         prefactor: float = 0.5) -> list[ClaimRow]:
    """[P App. D.5, F.4]: after weak recovery the excess loss decays at the linearised rate.

    ``ensembles`` maps (param, link, d) to the replicates' flows (tied matrix
    flow, direct closed ODE) run to late times; ``predicted`` the same keys to
    each replicate's rate (:func:`aimrepro.paper2.theory_tables.predicted_loss_rate`).
    Per replicate, ln(Φ − Φ*) is fitted on the last ``window`` of the records
    (in time) that lie above ``floor[param]``; the flows are deterministic, so the
    row passes when every replicate's rate is within ``tolerance`` (relative) of
    its own prediction.  A link whose flows do not weakly recover (direct h₃, [P Cor.
    7]) has no late-time regime: no row.  Cost: one Φ per record.
    """
    out = []
    for (param, link, d), runs in sorted(ensembles.items()):
        lowest = floor[param]
        rates = np.asarray(predicted.get((param, link, d), []), float)
        if len(runs) == 0 or rates.size != len(runs):
            continue
        if any(run.weak_recovery_time(threshold) is None for run in runs):
            continue
        potential = Potential(MSELoss(make_link(link), make_link(link), prefactor), 1)
        fitted, windows = [], []
        for run in runs:
            excess = excess_loss(potential, run, kind=param)
            above = np.flatnonzero(np.isfinite(excess) & (excess > lowest))
            t_last = float(run.t_ode[above[-1]]) if above.size else 0.0
            t_start = (1.0 - window) * t_last
            try:
                fit = late_time_rate(run.t_ode, excess, t_start=t_start, t_end=t_last,
                                     floor=lowest)
            except ValueError:
                fitted.append(math.nan)
                windows.append((t_start, t_last))
                continue
            fitted.append(fit.rate)
            windows.append((fit.t_start, fit.t_end))
        fitted = np.asarray(fitted)
        rel = (fitted - rates) / rates
        ok = bool(np.all(np.isfinite(rel)) and np.all(np.abs(rel) <= tolerance))
        unit = "t = 4αn/d" if param == "tied" else "t = αn/d"
        law = ("2 g λ_min(S*), g = Γ11 = −Γ12 at the teacher" if param == "tied"
               else "min(4g, 2 × the slowest symmetric mode) of the closed ODE's Jacobian")
        out.append(_row(
            id=f"p2-strong-rate-{param}-{link}", section="§5.1–5.2, [P App. D.5, F.4]",
            claim=f"{param}, {link}: after weak recovery the excess loss Φ − Φ* decays "
                  f"exponentially at the rate of the flow linearised at the teacher ({law})",
            expected=float(rates.mean()), measured=float(np.nanmean(fitted)),
            tolerance=f"every replicate within {tolerance:g} (relative)", passed=ok,
            note=f"{'matrix flow' if param == 'tied' else 'closed ODE'} from each replicate's "
                 f"initial state, d = {d} ({unit}); fitted rate per replicate "
                 + ", ".join(f"{r:.4g}" for r in fitted) + " against "
                 + ", ".join(f"{r:.4g}" for r in rates) + "; windows "
                 + ", ".join(f"[{a:.3g}, {b:.3g}]" for a, b in windows)
                 + f" (the last {window:g} of the records with Φ − Φ* > {lowest:g}). The rates "
                 "are our linearisation at the teacher (the paper states the exponential decay)"))
    return out


#: The SGD fit window is the last fraction (in time) of the records above the floor.
STRONG_SGD_WINDOW = 0.5


def sgd_rate_rows(runs: Mapping[tuple[str, str, int], Mapping[float, Sequence[Trajectory]]],
                             predicted: Mapping[tuple[str, str, int], Sequence[float]], *,
                             tolerance: float = STRONG_RATE_TOL,
                             floor: Mapping[str, float] = STRONG_FLOOR,
                             window: float = STRONG_SGD_WINDOW,
                             prefactor: float = 0.5) -> list[ClaimRow]:
    """[P App. D.5, Cor. 6]: SGD's excess loss decays at the linearised rate, as lr → 0.

    ``runs`` maps (param, link, d) to the SGD replicates per step size;
    ``predicted`` the same keys to the replicates' linearised rates
    (:func:`aimrepro.paper2.theory_tables.predicted_loss_rate`).  Per run,
    ln(Φ − Φ*) is fitted on the last ``window`` (in time) of the records above
    ``floor[param]``; per step size the mean rate and its error of the mean; a
    weighted line in lr extrapolates to lr → 0.  With a realizable, noiseless
    teacher the gradient noise vanishes at the minimum, so SGD has no additive
    loss floor: the step size enters as an O(lr) shift of the rate (the
    noise term ∝ lr × the excess itself), which the line accounts for.  Passes
    when the extrapolated rate is within ``tolerance`` (relative) of the
    prediction, allowing 2 s.e.
    """
    out = []
    for (param, link, d), by_lr in sorted(runs.items()):
        rates = np.asarray(predicted.get((param, link, d), []), float)
        lrs = sorted(by_lr)
        if len(lrs) < 2 or rates.size == 0:
            continue
        potential = Potential(MSELoss(make_link(link), make_link(link), prefactor), 1)
        lowest = floor[param]
        per_lr, windows, ends = [], [], []
        for lr in lrs:
            fitted = []
            for run in by_lr[lr]:
                excess = excess_loss(potential, run, kind=param)
                above = np.flatnonzero(np.isfinite(excess) & (excess > lowest))
                t_last = float(run.t_ode[above[-1]]) if above.size else 0.0
                try:
                    fit = late_time_rate(run.t_ode, excess, t_start=(1.0 - window) * t_last,
                                         t_end=t_last, floor=lowest)
                except ValueError:
                    fitted.append(math.nan)
                    continue
                fitted.append(fit.rate)
                windows.append((fit.t_start, fit.t_end))
                ends.append(float(excess[-1]))
            per_lr.append(fitted)
        means, sems, limit, limit_se, slope = rate_at_zero_lr(lrs, per_lr)
        target = float(rates.mean())
        passed = math.isfinite(limit) and abs(limit - target) <= tolerance * target + 2 * limit_se
        unit = "t = 4αn/d" if param == "tied" else "t = αn/d"
        note = (f"online SGD, d = {d} ({unit}), from the flows' replicates; fitted rate per step "
                "size (mean ± error of the mean): "
                + ", ".join(f"lr {lr:g}: {m:.4g} ± {e:.2g}" for lr, m, e in zip(lrs, means, sems))
                + f"; line in lr: rate(0) = {limit:.4g} ± {limit_se:.2g}, slope {slope:.3g} per "
                  f"unit lr. "
                + (f"Windows: the last {window:g} of the records with Φ − Φ* > {lowest:g} (from "
                   f"t ≈ {min(a for a, _ in windows):.3g} to ≈ {max(b for _, b in windows):.3g}); "
                   f"excess at the horizon {min(ends):.2g} … {max(ends):.2g}: no additive noise "
                   "floor (noiseless teacher: the gradient noise vanishes at the minimum), the "
                   "step size shifts the rate by O(lr) instead"
                   if windows else "No fit window above the floor"))
        out.append(_row(
            id=f"p2-strong-rate-sgd-{param}-{link}", section="§5.1–5.2, [P App. D.5, Cor. 6]",
            claim=f"{param}, {link}: after weak recovery SGD's excess loss Φ − Φ* decays "
                  "exponentially at the rate of the flow linearised at the teacher",
            expected=target, measured=limit,
            tolerance=f"rate extrapolated to lr → 0 within {tolerance:g} (relative) + 2 s.e.",
            **judge_extrapolation(limit_se, tolerance * target, passed, note)))
    return out


# --- untied attention (topic paper2_untied) ----------------------------------------------


def _late_window(times: np.ndarray, start: float) -> tuple[float, float]:
    """The second half of [start, horizon]: the late part of the decay, where the rate is read."""
    end = float(times[-1])
    return start + 0.5 * (end - start), end


def _rate(times, values, window) -> float:
    try:
        return late_time_rate(times, values, t_start=window[0], t_end=window[1]).rate
    except ValueError:
        return math.nan


def untied_rate_rows(tables: Sequence[tuple[Mapping, Mapping[str, np.ndarray]]],
                         sgd: Sequence[Mapping[float, Mapping[int, Trajectory]]],
                         *, tolerance: float = STRONG_RATE_TOL, prefactor: float = 0.5
                         ) -> list[ClaimRow]:
    """[P App. F.4, Cor. 9]: after weak recovery the untied excess loss decays exponentially.

    ``tables`` pairs a case (``link``, ``teacher_mean``, ``d``, ``window_start``)
    with its table of :func:`aimrepro.paper2.theory_tables.untied_decay_table`;
    ``sgd[i]`` maps each step size to {replicate seed: SGD run} of that case,
    recorded on the table's grid.  The corollary gives no rate (its PL constant
    is unspecified); the prediction is ours, the flow linearised at the
    minimum it reaches.  Rates are fitted to ln Δ on the second half of
    [τ₀, horizon].

    * Flow row: per replicate, the population flow's rate against the rate of
      the linearised decay on the same window, each within ``tolerance``
      (relative).  The slowest mode's 4 g c_min, which the decay approaches only
      once the neighbouring modes have died out, goes in the note.
    * SGD row: per run, the SGD rate minus its replicate's flow rate on the
      same window; per step size the mean and its error of the mean; a
      weighted line in lr extrapolates to lr → 0 (the noise of a noiseless
      teacher vanishes at the minimum, so lr shifts the rate by O(lr) instead of
      adding a floor); passes when |gap(0)| ≤ ``tolerance`` × the mean flow
      rate + 2 s.e., and is informational when that s.e. exceeds half the
      tolerance (:func:`~aimrepro.claims.trends.judge_extrapolation`).
    """
    out = []
    for (case, table), by_lr in zip(tables, sgd):
        link, m2, d = case["link"], float(case["teacher_mean"]), int(case["d"])
        replicates = split_rows(table, "seed")
        window = _late_window(next(iter(replicates.values()))["t_ode"], float(case["window_start"]))
        measured, predicted, slowest, drift = {}, {}, {}, {}
        for sd, rows in replicates.items():
            measured[sd] = _rate(rows["t_ode"], rows["excess"], window)
            predicted[sd] = _rate(rows["t_ode"], rows["predicted"], window)
            slowest[sd] = float(rows["slowest_loss_rate"][0])
            drift[sd] = float(rows["c_min_end"][0] / rows["c_min_start"][0] - 1.0)
        rel = {sd: (measured[sd] - predicted[sd]) / predicted[sd] for sd in replicates}
        ok = all(math.isfinite(r) and abs(r) <= tolerance for r in rel.values())
        tag = f"{link}-m2{m2:g}"
        window_text = f"τ ∈ [{window[0]:.3g}, {window[1]:.3g}]"
        out.append(_row(
            id=f"p2-untied-strong-rate-{tag}", section="§5.4, [P App. F.4, Cor. 9]",
            claim=f"untied {link}, teacher mean {m2:g}: after weak recovery the excess loss "
                  "Φ − Φ* decays exponentially, at the rate of the flow linearised at the "
                  "minimum it reaches",
            expected=float(np.nanmean(list(predicted.values()))),
            measured=float(np.nanmean(list(measured.values()))),
            tolerance=f"every replicate within {tolerance:g} (relative)", passed=ok,
            note=f"population flow of U, V from each replicate's U(0), V(0), d = {d}; rate of ln Δ "
                 f"on {window_text} per replicate: "
                 + ", ".join(f"{measured[sd]:.4g} (linearised {predicted[sd]:.4g})"
                             for sd in replicates)
                 + ". Linearised: ‖E(τ)‖² from E = M⁺ − M₂⁺ at τ₀ = "
                   f"{float(case['window_start']):g} with C = UUᵀ + VVᵀ frozen at the horizon "
                   "(C still moves after weak recovery: c_min changes by "
                 + ", ".join(f"{100 * drift[sd]:+.1f} %" for sd in replicates)
                 + "); the slowest mode's rate 4 g c_min(C) = "
                 + ", ".join(f"{slowest[sd]:.4g}" for sd in replicates)
                 + ", below the fitted rates: the modes next to c_min have not died out by the "
                   "horizon (a continuous spectrum as d → ∞). The paper proves the exponential "
                   "decay under a PL condition and gives no rate; the rate is ours"))
        if not by_lr or len(by_lr) < 2:
            continue
        potential = Potential(MSELoss(make_link(link), make_link(link), prefactor), 1)
        lrs = sorted(by_lr)
        per_lr = []
        for lr in lrs:
            gaps = []
            for sd, run in by_lr[lr].items():
                if sd not in measured or run.blew_up:
                    gaps.append(math.nan)
                    continue
                gaps.append(_rate(run.t_ode, excess_loss(potential, run, kind="untied"), window)
                            - measured[sd])
            per_lr.append(gaps)
        counts = [len(gaps) for gaps in per_lr]
        means, sems, limit, limit_se, slope = rate_at_zero_lr(lrs, per_lr)
        scale = tolerance * float(np.nanmean(list(measured.values())))
        out.append(_row(
            id=f"p2-untied-strong-rate-sgd-{tag}", section="§5.4, [P Thm 3, App. F.4, Cor. 9]",
            claim=f"untied {link}, teacher mean {m2:g}: after weak recovery SGD's excess loss "
                  "decays at its population flow's rate, as lr → 0",
            expected=0.0, measured=limit,
            tolerance=f"|rate(SGD) − rate(flow)| at lr → 0 ≤ {tolerance:g} × the flow's rate "
                      f"({scale:.3g}) + 2 s.e.",
            **judge_extrapolation(
                limit_se, scale, math.isfinite(limit) and abs(limit) <= scale + 2 * limit_se,
                f"online SGD from the flows' replicates (same U(0), V(0)), d = {d}, rate of ln Δ "
                 f"on {window_text}; SGD minus flow per step size (mean ± error of the mean over "
                 "replicates): "
                 + ", ".join(f"lr {lr:g}: {m:+.4f} ± {e:.2g} ({n} runs)"
                             for lr, m, e, n in zip(lrs, means, sems, counts))
                 + f"; line in lr: gap(0) = {limit:+.4f} ± {limit_se:.2g}, slope {slope:.3g} per "
                   "unit lr (a noiseless teacher: no additive noise floor, the step size shifts "
                   "the rate)")))
    return out
