"""Paper 2's landscape and weak-recovery claims as measured rows (``docs/paper2.md`` §3.1, §5.1–5.2).

Every row's measured number comes from the pipeline's own results: the
Theorem-1 tables, the Figure 2 and Figure S3 SGD runs and their reference
flows, the flow ensembles over d (the exact finite-d tied flow, the
Gaussian-equivalent matrix flow, the direct closed ODE) and the tables of
initial velocities.  Claims the paper makes for d → ∞ are judged on
finite-size trends (``aimrepro.claims.trends``): at each d the mean over
replicates and its error of the mean, never one small d against the seed
spread.  A statement that holds only in a regime (large enough d for the
displayed sample scale) is ``overstated`` with the regime measured.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from scipy import stats

from aimrepro.claims.strong_recovery import flow_rate_rows, sgd_rate_rows
from aimrepro.claims.table import INFORMATIONAL, OVERSTATED, ClaimRow, claim_row, format_number
from aimrepro.claims.trends import FiniteSizeTrend, fit_trend, judge_trend, log_slope, mean_and_sem
from aimrepro.paper2.analysis import overlap_change, recovery_summary
from aimrepro.paper2.initial_velocity import cross_gradient_sign_table
from aimrepro.paper2.sgd import ProblemSpec
from aimrepro.paper2.theory_tables import predicted_loss_rate
from aimrepro.paper2.trajectory import Trajectory

__all__ = [
    "EQ17_REL_TOL",
    "FLOW_TWR_REL_TOL",
    "DynamicsInputs",
    "Replicates",
    "eq17_rows",
    "eq23_rows",
    "eq23_tables",
    "exact_flow_rows",
    "figure2_flow_rows",
    "flow_trend_rows",
    "paper2_dynamics_claims",
    "scan_flow_rows",
    "theorem1_rows",
    "weak_recovery_rows",
]

#: |e∞| of the relative excess of a velocity over [P eq. 17] (or eq. 42) in the d → ∞ fit.
EQ17_REL_TOL = 0.05
#: |T_wr(SGD) − T_wr(flow)| relative to the flow's, beyond the 95 % interval of the mean:
#: the SGD noise correction is O(α d/B) = 0.001 at Figure 2's settings, so what remains is the
#: record spacing and the amplification of the noise at the unstable start.
FLOW_TWR_REL_TOL = 0.1
#: The early window [0, t] on which SGD's change of p12 is compared with its flows'.
EARLY_WINDOW = 0.05
#: Links of eq. 23's table, with the T their potential is computed at.
EQ23_LINKS = ("h1", "h2", "h3", "linear", "softmax", "hardmax")


_row = functools.partial(claim_row, "paper2")


# --- Theorem 1 ----------------------------------------------------------------------------


def theorem1_rows(rows: Sequence[Mapping[str, float]], links: Sequence[str]) -> list[ClaimRow]:
    """Theorem 1 [P eqs. 3–4]: the finite-d loss approaches Φ(q) as d grows.

    Non-quadratic links: the gap |L_d − Φ| at the largest d is smaller than
    at the smallest d by more than twice their combined standard error, and
    the least-squares slope of log|gap| against log d is reported.  Linear
    link: the loss is quadratic in the indices, so Wick's theorem makes the
    gap vanish at every d; the plain Monte-Carlo mean must agree with Φ
    within 3 standard errors at every d.
    """
    rows = sorted(rows, key=lambda r: r["d"])
    d = np.array([r["d"] for r in rows], dtype=float)
    out = []
    for link in links:
        if link in ("linear", "h1"):
            z = np.array([abs(r[f"{link}_plain"] - r[f"{link}_phi"]) / r[f"{link}_plain_stderr"]
                          for r in rows])
            out.append(_row(
                id=f"p2-thm1-{link}-exact", section="§3.1, §3.3",
                claim=f"{link} link: the finite-d population loss equals Φ(q) at every d (Wick)",
                expected="|gap| < 3 s.e. at every d", measured=f"max |gap|/s.e. = {z.max():.2f}",
                tolerance="3 s.e.", passed=bool(np.all(z < 3.0)),
                note=f"d = {', '.join(str(int(x)) for x in d)}; plain Monte-Carlo means"))
            continue
        gap = np.array([r[f"{link}_mc"] - r[f"{link}_phi"] for r in rows])
        se = np.array([r[f"{link}_mc_stderr"] for r in rows])
        phi = np.array([r[f"{link}_phi"] for r in rows])
        shrinks = abs(gap[-1]) + 2 * math.hypot(se[0], se[-1]) < abs(gap[0])
        positive = np.abs(gap) > 0
        slope = (float(np.polyfit(np.log(d[positive]), np.log(np.abs(gap[positive])), 1)[0])
                 if positive.sum() >= 2 else math.nan)
        values = "; ".join(f"d={int(x)}: {g / p:+.2%}±{s / p:.2%}"
                           for x, g, s, p in zip(d, gap, se, phi))
        out.append(_row(
            id=f"p2-thm1-gap-{link}", section="§3.1, §4.4 item 5",
            claim=f"Theorem 1 ({link}, T = 2): the finite-d loss approaches Φ(q) as d grows",
            expected="gap → 0", measured=f"log-log slope {format_number(slope)}",
            tolerance="|gap(d_max)| + 2 s.e. < |gap(d_min)|", passed=shrinks,
            note=f"relative gap (L_d − Φ)/Φ: {values}"))
    return out


# --- [P eq. 17]: the initial velocity of p12 (tied) ------------------------------------------


def _relative_excess(tables: Mapping[int, Mapping[str, np.ndarray]], column: str
                     ) -> dict[int, np.ndarray]:
    """(column − eq17)/eq17 per seed, for each d."""
    return {d: (np.asarray(t[column], float) - np.asarray(t["eq17"], float))
            / np.asarray(t["eq17"], float) for d, t in tables.items()}


def _trend(values: Mapping[int, np.ndarray]) -> FiniteSizeTrend:
    """The trend fit (e∞ + b/d, or + c/d², :func:`aimrepro.claims.trends.fit_trend`) of the per-d means of ``values``."""
    dims = sorted(values)
    stats = [mean_and_sem(values[d]) for d in dims]
    return fit_trend(dims, [m for m, _, _ in stats], [s for _, s, _ in stats],
                           [n for _, _, n in stats])


def eq17_rows(velocity: Mapping[tuple[str, int], Mapping[str, np.ndarray]], *,
              tolerance: float = EQ17_REL_TOL) -> list[ClaimRow]:
    """[P eq. 17] measured where it holds: on the matrix flow, and SGD's drift approaching it in d.

    ``velocity`` maps (link, d) to a table of
    :func:`aimrepro.paper2.theory_tables.tied_velocity_table` (one row per
    replicate: ``eq17``, ``flow``, ``exact``).  Eq. 17 is a d → ∞ identity of
    the flow: at finite d the matrix flow's dp₁₂/dt differs from it by the
    mixed centered moments of Assumption 3 and the initial p₁₂ ([P eq. 356]),
    and the exact SGD drift further by the non-Gaussian finite-d index,
    amplified by the link's degree (``docs/paper2.md`` §5.1).  Both are judged
    on the finite-size trend of the relative excess over eq. 17 (mean and
    error of the mean over replicates at each d, fit e∞ + b/d): e∞ within
    ``tolerance``, and the flow's mean |excess| shrinking with d.
    """
    out = []
    links = list(dict.fromkeys(link for link, _ in velocity))
    for link in links:
        tables = {d: t for (l, d), t in velocity.items() if l == link}
        if len(tables) < 2:
            continue
        flow = _relative_excess(tables, "flow")
        trend = _trend(flow)
        spread = _trend({d: np.abs(v) for d, v in flow.items()})
        exact = _relative_excess(tables, "exact")
        same = all(np.allclose(tables[d]["exact"], tables[d]["flow"], rtol=1e-8, atol=1e-12)
                   for d in tables)
        note = (f"relative excess (flow − eq17)/eq17 per d: {trend.per_d_text()}; {trend.fit_text()}; "
                f"mean |excess|: {spread.per_d_text()}. The excess is the mixed centered third "
                "moments and the initial p12 of [P eq. 356], zero under Assumption 3 (d → ∞)")
        if same:
            note += ("; the exact finite-d SGD drift equals the flow's here (a quadratic loss in "
                     "the indices: no cumulant beyond the second enters)")
        out.append(_row(
            id=f"p2-tied-eq17-flow-{link}", section="§5.1 T3, [P eqs. 17, 356]",
            claim=f"tied, {link}: at the uninformative start the matrix flow leaves with "
                  "dp12/dt = −2Γ12 t1 p22 as d → ∞",
            expected=0.0, measured=trend.limit,
            tolerance=f"|e∞| ≤ {tolerance:g} + 2 s.e., mean |excess| shrinking with d",
            **judge_trend(trend, tolerance, trend.within(tolerance) and spread.shrinks(), note)))
        if same or not all(np.all(np.isfinite(v)) for v in exact.values()):
            continue
        drift = _trend(exact)
        slope = _loglog_slope(drift)
        out.append(_row(
            id=f"p2-tied-sgd-drift-{link}", section="§5.1 T3, [P eq. 17]",
            claim=f"tied, {link}: SGD's expected initial drift of p12 at finite d approaches "
                  "eq. 17 as d → ∞ (its excess falls like 1/d)",
            expected=0.0, measured=drift.limit,
            tolerance=f"|e∞| ≤ {tolerance:g} + 2 s.e. of the fit {drift.form}",
            **judge_trend(
                drift, tolerance, drift.within(tolerance),
                f"exact finite-d expected SGD step at W(0) (aimrepro.paper2.finite_d_drift: all "
                f"cumulants of the quadratic-form indices), relative excess over eq. 17 per d: "
                f"{drift.per_d_text()}; {drift.fit_text()}; log-log slope of the mean excess "
                f"{format_number(slope)}. At d = {drift.d[0]} SGD starts "
                f"{1 + drift.mean[0]:.2g} times faster than eq. 17: the non-Gaussian index, "
                "amplified by the link's degree, not the O(d^-1/2) mixed moments (row "
                f"p2-tied-eq17-flow-{link})")))
    return out


def _loglog_slope(trend: FiniteSizeTrend) -> float:
    """Least-squares slope of ln|mean| against ln d (NaN with a zero mean)."""
    mean = np.abs(np.asarray(trend.mean))
    if np.any(mean <= 0):
        return math.nan
    return float(np.polyfit(np.log(trend.d), np.log(mean), 1)[0])


# --- [P eq. 23]: the sign of the cross-gradient ---------------------------------------------


def eq23_rows(table: Mapping[str, np.ndarray], *, off_diagonal: Mapping[str, np.ndarray]
              | None = None) -> list[ClaimRow]:
    """[P eq. 23]: Γ₁₂ < 0 at q₁₁ = q₂₂ for every link, and the Mehler series equals −Γ₁₂.

    ``table`` is :func:`aimrepro.paper2.initial_velocity.cross_gradient_sign_table`
    at q₁₁ = q₂₂ (one row per link); ``off_diagonal`` the same at q₁₁ ≠ q₂₂,
    where eq. 23 does not apply (an informational row says where the sign
    still holds).
    """
    links = [str(x) for x in table["link"]]
    gamma = np.asarray(table["gamma12"], float)
    series = np.asarray(table["series"], float)
    negative = gamma < 0
    smooth = [i for i, link in enumerate(links) if link != "hardmax"]
    agree = [abs(series[i] + gamma[i]) <= 1e-6 * max(1.0, abs(gamma[i])) for i in smooth]
    per_link = "; ".join(f"{link}: Γ12 = {gamma[i]:.4g}, series {series[i]:.4g}"
                         for i, link in enumerate(links))
    out = [_row(
        id="p2-eq23-cross-gradient-sign", section="§5.1, [P eqs. 22–23]",
        claim="for the MSE with one link on both sides and q11 = q22, Γ12 < 0 at the tied "
              "uninformative point for every link, −Γ12 = Σ c_n ρ^n with c_n ≥ 0",
        expected="Γ12 < 0 for every link; series = −Γ12 (smooth links)",
        measured=f"{int(negative.sum())}/{len(links)} negative; series agrees for "
                 f"{sum(agree)}/{len(smooth)} smooth links",
        tolerance="sign; series to 1e-6 relative",
        passed=bool(negative.all() and all(agree)),
        note=f"q11 = q22 = {float(table['q22'][0]):g}, ρ = {float(table['rho'][0]):.4g} (the tied "
             f"uninformative correlation t1t2/q); {per_link}. Hardmax has ∇F = 0 almost "
             "everywhere: its Hermite series is identically 0, yet its closed-form Φ gives Γ12 < 0 "
             "(eq. 23 needs a smooth loss)")]
    if off_diagonal is not None:
        links_off = [str(x) for x in off_diagonal["link"]]
        g = np.asarray(off_diagonal["gamma12"], float)
        positive = [f"{link} at q11 = {q11:g}, q22 = {q22:g}: Γ12 = {value:+.3g}"
                    for link, q11, q22, value in zip(links_off, off_diagonal["q11"],
                                                     off_diagonal["q22"], g) if value > 0]
        out.append(_row(
            id="p2-eq23-unequal-variances", section="§5.1, remark after [P eq. 22]",
            claim="eq. 23 assumes q11 = q22; with unequal student and teacher variances the sign "
                  "of Γ12 is not guaranteed",
            expected="informational", measured=f"{len(positive)} positive of {g.size}",
            tolerance="none", verdict=INFORMATIONAL,
            note=("Γ12 > 0 for " + "; ".join(positive) if positive else
                  "Γ12 < 0 at every tested pair") + "; h3 at T = 1 (ours): −Γ12 = (3/2)"
            "[(2q11 − 1)(2q22 − 1) + 2(2q12)²], negative when the index variances 2q straddle 1"))
    return out


# --- weak recovery ------------------------------------------------------------------------------




def _mean_sd(values: np.ndarray) -> tuple[float, float]:
    ok = values[np.isfinite(values)]
    if ok.size == 0:
        return math.nan, math.nan
    return float(ok.mean()), float(ok.std(ddof=1)) if ok.size > 1 else 0.0


def _flow_times(flows: Mapping[tuple[str, str, int], Sequence[Trajectory]], key,
                threshold: float) -> str:
    """Mean weak-recovery time of the reference flows of one (param, link, d), as text."""
    times = recovery_summary(flows.get(key, []), threshold)["times"]
    if times.size == 0:
        return "n/a"
    ok = times[np.isfinite(times)]
    return f"{ok.mean():.3f}" if ok.size == times.size else f"≥ horizon in {times.size - ok.size}"


def _tied_flat_row(claim_id: str, section: str, claim: str, values: Mapping[int, np.ndarray], flow_value: float,
                   unit: str, *, all_recovered: bool, flows_text: str, eta: float, samples_row: bool) -> ClaimRow:
    """A tied "flat in d" row ([P Cor. 3], a d → ∞ statement), judged where the paper makes it.

    The per-d means of SGD's ``values`` (T_wr, or the same runs in samples)
    are fitted as e∞ + b/d with their errors of the mean; the row passes when
    the form is consistent and e∞ is the reference flows' d-independent value
    (their mean over d; row ``p2-tied-flow-twr-flat`` checks they do not grow)
    within :data:`FLOW_TWR_REL_TOL` of it + 2 s.e.  At finite d SGD escapes
    earlier than its flow (by O(1/d), rows ``p2-s3-sgd-follows-flow-tied``),
    so its T_wr rises with d toward the flow's: a spread of the means is not
    evidence against the claim, and the note reports it with its errors.
    """
    dims = sorted(values)
    stats_per_d = {d: mean_and_sem(np.asarray(values[d])[np.isfinite(values[d])]) for d in dims}
    usable = [d for d in dims if stats_per_d[d][2] >= 2 and stats_per_d[d][1] > 0]
    tolerance = FLOW_TWR_REL_TOL * flow_value
    per_d = "; ".join(f"d={d}: {m:.4g} ± {se:.2g} ({n} runs)" for d, (m, se, n) in stats_per_d.items())
    rise = ""
    if len(usable) >= 2:
        (m0, se0, _), (m1, se1, _) = stats_per_d[usable[0]], stats_per_d[usable[-1]]
        rise = f"; from d = {usable[0]} to {usable[-1]} the mean changes by {m1 - m0:+.3g} ± {math.hypot(se0, se1):.2g}"
    note = (f"{unit} mean ± error of the mean: {per_d}{rise}; reference flows' T_wr from the same initial states: "
            f"{flows_text}" + ("" if all_recovered else "; some runs did not recover within the horizon"))
    if samples_row:
        note += (f"; with per-sample rate η/(d ln d), η = {eta:g}, N_wr/(d² ln d) = T_wr/(4η): the same runs as "
                 "the T_wr row, in samples")
    tolerance_text = (f"e∞ of e∞ + b/d within {FLOW_TWR_REL_TOL:g} × the flows' d-independent value "
                      f"(+ 2 s.e.), the form consistent, s.e.(e∞) <= tolerance/2")
    if len(usable) < 3 or not math.isfinite(flow_value) or not all_recovered:
        why = ("some runs did not recover" if not all_recovered else
               "no reference flow" if not math.isfinite(flow_value) else "fewer than three sizes")
        return _row(id=claim_id, section=section, claim=claim, expected=flow_value, measured="not judged",
                    tolerance=tolerance_text, verdict=INFORMATIONAL, note=f"{note}; not judged: {why}")
    trend = fit_trend(usable, [stats_per_d[d][0] for d in usable], [stats_per_d[d][1] for d in usable],
                      [stats_per_d[d][2] for d in usable])
    passed = trend.consistent and abs(trend.limit - flow_value) <= tolerance + 2 * trend.limit_se
    return _row(id=claim_id, section=section, claim=claim, expected=flow_value, measured=trend.limit,
                tolerance=tolerance_text,
                **judge_trend(trend, tolerance, passed, f"{note}; {trend.fit_text()}"))


def weak_recovery_rows(scan: Mapping[tuple[str, str, int], Sequence[Trajectory]],
                       figure2: Mapping[tuple[str, str], Sequence[Trajectory]], *,
                       threshold: float, eta: float, horizon: Mapping[str, float],
                       scan_flows: Mapping[tuple[str, str, int], Sequence[Trajectory]]
                       | None = None, direct_growth: Mapping[str, ClaimRow] | None = None,
                       samples: float | None = None) -> list[ClaimRow]:
    """Weak recovery of tied and direct attention ([P Cor. 3, Cor. 7], ``docs/paper2.md`` §5.1–5.2).

    ``scan`` holds the Figure S3 runs per (param, link, d), with per-sample
    rate α/B = η/(d ln d); ``scan_flows`` their reference flows (the notes
    quote the flows' weak-recovery times); ``figure2`` the Figure 2 runs per
    (param, link), all on one sample axis of ``samples`` samples.
    ``direct_growth`` maps a link to the row that measures the growth of the
    direct weak-recovery time with d (:func:`flow_trend_rows`): where direct
    SGD escapes within Figure 2's samples at the simulated d but that row
    passes, the Figure 2 statement is ``overstated`` (it holds from some d on).
    """
    scan_flows = {} if scan_flows is None else scan_flows
    out = []
    links = sorted({link for _, link, _ in scan})
    for link in links:
        # tied: T_wr flat in d, as d -> infinity ([P Cor. 3]): SGD's mean T_wr per d extrapolated
        # (e∞ + b/d) against the reference flows' d-independent T_wr
        dims = sorted(d for p, l, d in scan if p == "tied" and l == link)
        summaries = {d: recovery_summary(scan[("tied", link, d)], threshold) for d in dims}
        all_recovered = all(s["n_recovered"] == s["n_runs"] for s in summaries.values())
        flow_times = np.concatenate([recovery_summary(scan_flows.get(("tied", link, d), []), threshold)["times"]
                                     for d in dims] or [np.array([])])
        flow_twr = float(np.mean(flow_times)) if flow_times.size and np.all(np.isfinite(flow_times)) else math.nan
        flows_text = ", ".join(f"d={d}: {_flow_times(scan_flows, ('tied', link, d), threshold)}" for d in dims)
        tied_times = {d: summaries[d]["times"] for d in dims}
        tied_samples = {d: summaries[d]["samples"] / (d * d * math.log(d)) for d in dims}
        for claim_id, section, claim, values, expected, unit, samples_row in (
                (f"p2-tied-twr-flat-{link}", "§5.1 T1, [P Cor. 3]",
                 f"tied, {link}: the weak-recovery time in ODE units does not depend on d (d → ∞)", tied_times,
                 flow_twr, "T_wr", False),
                (f"p2-tied-samples-d2logd-{link}", "§2.4, [P eq. 21]",
                 f"tied, {link}: with α_d = η/(d log d), N_wr/(d² log d) is flat in d (d → ∞)", tied_samples,
                 flow_twr * (1.0 / (4 * eta)), "N_wr/(d² ln d)", True)):
            out.append(_tied_flat_row(claim_id, section, claim, values, expected, unit,
                                      all_recovered=all_recovered, flows_text=flows_text, eta=eta,
                                      samples_row=samples_row))
        # direct: T_wr grows with d (or the runs stay trapped)
        dims = sorted(d for p, l, d in scan if p == "direct" and l == link)
        if len(dims) >= 2:
            dsum = {d: recovery_summary(scan[("direct", link, d)], threshold) for d in dims}
            # not recovered within the horizon counts as T_wr >= horizon (a lower bound)
            capped = {d: np.where(np.isfinite(dsum[d]["times"]), dsum[d]["times"],
                                  horizon["direct"]) for d in dims}
            dmeans = np.array([capped[d].mean() for d in dims])
            dses = np.array([capped[d].std(ddof=1) / math.sqrt(capped[d].size) for d in dims])
            slope, intercept = np.polyfit(np.log(dims), dmeans, 1)
            grows = dmeans[-1] - dmeans[0] > 2 * math.hypot(dses[0], dses[-1])
            per_d = "; ".join(f"d={d}: {m:.3f}±{s:.3f} ({dsum[d]['n_recovered']}/"
                              f"{dsum[d]['n_runs']} recovered)"
                              for d, m, s in zip(dims, dmeans, dses))
            out.append(_row(
                id=f"p2-direct-twr-grows-{link}", section="§5.2 S1, [P Cor. 7]",
                claim=f"direct S, {link}: the weak-recovery time in ODE units grows with d",
                expected="T_wr(d_max) − T_wr(d_min) > 2 s.e.",
                measured=f"dT_wr/d ln d = {slope:.3f}",
                tolerance="difference > 2 s.e.", passed=grows,
                note=f"T_wr mean ± s.e. (not recovered = horizon {horizon['direct']:g}): {per_d}"
                     + "; closed ODE from the runs' initial order parameters: "
                     + ", ".join(f"d={d}: {_flow_times(scan_flows, ('direct', link, d), threshold)}"
                                 for d in dims)))
    out += _figure2_rows(figure2, threshold, direct_growth or {}, samples)
    return out


def _figure2_rows(figure2: Mapping[tuple[str, str], Sequence[Trajectory]], threshold: float,
                  direct_growth: Mapping[str, ClaimRow], samples: float | None) -> list[ClaimRow]:
    """Fig. 2 statements: h₁ recovers in both; higher-order links stay uninformative for direct S."""
    out = []
    links = sorted({link for _, link in figure2})
    shown = (f"{samples:.3g} samples" if samples else "the displayed horizon")
    for link in links:
        tied = recovery_summary(figure2.get(("tied", link), []), threshold)
        direct = recovery_summary(figure2.get(("direct", link), []), threshold)
        horizon = max((run.t_ode[-1] for run in figure2.get(("direct", link), [])), default=0.0)
        max_direct = max((float(np.max(run.overlap_ratio)) for run in
                          figure2.get(("direct", link), []) if len(run)), default=math.nan)
        t_mean, _ = _mean_sd(tied["times"])
        d_mean, _ = _mean_sd(direct["times"])
        n_mean, _ = _mean_sd(direct["samples"])
        blowups = tied["n_blowups"] + direct["n_blowups"]
        blow_note = f"; {blowups} run(s) blew up" if blowups else ""
        d = next(iter(figure2.get(("direct", link), figure2.get(("tied", link), []))), None)
        d = d.d if d is not None else 0
        if link in ("h1", "linear"):
            passed = (tied["n_recovered"] == tied["n_runs"]
                      and direct["n_recovered"] == direct["n_runs"])
            out.append(_row(
                id=f"p2-fig2-both-recover-{link}", section="§6 Fig. 2",
                claim=f"{link}: tied and direct attention both recover the teacher on the "
                      "displayed sample scale",
                expected="all runs reach the threshold",
                measured=f"tied {tied['n_recovered']}/{tied['n_runs']} (T_wr {format_number(t_mean)}), "
                         f"direct {direct['n_recovered']}/{direct['n_runs']} (T_wr {format_number(d_mean)})",
                tolerance=f"|p12|/p22 ≥ {threshold} within {shown}", passed=passed,
                note=f"d = {d}, one step size and batch for both, {shown}" + blow_note))
            continue
        held = direct["n_recovered"] == 0 and tied["n_recovered"] == tied["n_runs"]
        note = (f"d = {d}, {shown} (direct t ≤ {horizon:g}); direct max overlap "
                f"{format_number(max_direct)}; tied T_wr {format_number(t_mean)}")
        growth = direct_growth.get(link)
        verdict = {"passed": held}
        if not held and tied["n_recovered"] == tied["n_runs"] and growth is not None \
                and growth.passed:
            verdict = {"verdict": OVERSTATED}
            note += (f"; direct recovered in {direct['n_recovered']}/{direct['n_runs']} runs at "
                     f"T_wr {format_number(d_mean)} (N ≈ {format_number(n_mean)} samples): at "
                     f"d = {d} the finite-d escape falls inside the displayed scale. Its time grows "
                     f"with d ({growth.id}: {growth.measured}), so the statement holds only from "
                     "larger d on, as [P Cor. 7] (d → ∞) says; the paper draws d = 400")
        elif direct["n_recovered"]:
            note += (f"; direct recovered in {direct['n_recovered']}/{direct['n_runs']} runs at "
                     f"T_wr {format_number(d_mean)}")
        out.append(_row(
            id=f"p2-fig2-direct-uninformative-{link}", section="§6 Fig. 2, §3.2, [P Cor. 7]",
            claim=f"{link}: direct S stays uninformative on the displayed sample scale while tied "
                  "attention recovers",
            expected="direct 0 recovered; tied all recovered",
            measured=f"direct {direct['n_recovered']}/{direct['n_runs']}, tied "
                     f"{tied['n_recovered']}/{tied['n_runs']}",
            tolerance=f"|p12|/p22 ≥ {threshold} within {shown}", note=note + blow_note,
            **verdict))
    return out


def _crossing(run: Trajectory, threshold: float, horizon: float) -> tuple[float, bool]:
    """(T_wr, reached); a run that does not reach the threshold counts as ``horizon``."""
    t = run.weak_recovery_time(threshold)
    return (horizon, False) if t is None else (float(t), True)


def _t_interval(values: np.ndarray) -> float:
    """Half width of the 95 % interval of the mean of ``values`` (Student t), NaN below 2 values."""
    values = np.asarray(values, float)
    if values.size < 2:
        return math.nan
    return float(stats.t.ppf(0.975, values.size - 1) * values.std(ddof=1) / math.sqrt(values.size))


def figure2_flow_rows(runs: Mapping[tuple[str, str], Sequence[Trajectory]],
                      flows: Mapping[tuple[str, str], Sequence[Trajectory]],
                      exact: Mapping[str, Sequence[Trajectory]], *, threshold: float,
                      tolerance: float = FLOW_TWR_REL_TOL,
                      window: float = EARLY_WINDOW) -> list[ClaimRow]:
    """Figure 2: SGD follows its finite-d flow, per link (tied) and for direct h₁.

    ``runs`` and ``flows`` are Figure 2's SGD replicates and their per-replicate
    Gaussian-equivalent flows per (param, link); ``exact`` the exact finite-d
    tied flows from the same W(0) per link, in replicate order.  Per
    replicate the difference T_wr(SGD) − T_wr(flow); the row passes when its
    mean is within ``tolerance`` of the flow's T_wr, beyond its 95 % interval.
    A second row per link compares the change of p₁₂ over [0, ``window``]:
    SGD against the exact flow (within the 95 % interval of the mean
    difference), with the Gaussian flow's for contrast.
    """
    out = []
    for link, group in ((link, g) for (param, link), g in runs.items() if param == "tied"):
        reference = list(exact.get(link, []))
        if len(reference) != len(group) or not group:
            continue
        horizon = float(group[0].t_ode[-1])
        sgd = [_crossing(run, threshold, horizon) for run in group]
        flow = [_crossing(run, threshold, horizon) for run in reference]
        gauss = [_crossing(run, threshold, horizon) for run in flows.get(("tied", link), [])]
        diff = np.array([a[0] - b[0] for a, b in zip(sgd, flow)])
        t_exact = float(np.mean([b[0] for b in flow]))
        half = _t_interval(diff)
        reached = all(a[1] for a in sgd) and all(b[1] for b in flow)
        passed = reached and abs(diff.mean()) <= tolerance * t_exact + (0 if math.isnan(half)
                                                                        else half)
        gauss_text = ", ".join(f"{g[0]:.3f}" if g[1] else f"≥ {horizon:g}" for g in gauss)
        out.append(_row(
            id=f"p2-fig2-sgd-follows-flow-{link}", section="§6 Fig. 2, §5.1",
            claim=f"tied, {link}: SGD crosses the weak-recovery threshold when its finite-d "
                  "population flow does",
            expected=0.0, measured=float(diff.mean()),
            tolerance=f"|mean ΔT_wr| ≤ {tolerance:g} T_wr(flow) + 95 % interval",
            passed=passed,
            note=f"T_wr SGD {', '.join(f'{a[0]:.3f}' for a in sgd)}; exact finite-d flow from the "
                 f"same W(0) {', '.join(f'{b[0]:.3f}' for b in flow)} (mean ΔT_wr "
                 f"{diff.mean():+.3f} ± {half:.2g}); Gaussian-equivalent matrix flow (the d → ∞ "
                 f"equations) {gauss_text}; d = {group[0].d}"
                 + ("" if reached else "; some runs or flows did not cross (counted at the horizon)")))
        early_sgd = np.array([overlap_change(run, window) for run in group])
        early_exact = np.array([overlap_change(run, window) for run in reference])
        early_gauss = np.array([overlap_change(run, window) for run in flows.get(("tied", link),
                                                                                  [])])
        delta = early_sgd - early_exact
        half = _t_interval(delta)
        sem = float(delta.std(ddof=1) / math.sqrt(delta.size)) if delta.size > 1 else math.nan
        apart = ((early_sgd.mean() - early_gauss.mean()) / sem
                 if early_gauss.size and sem > 0 else math.nan)
        out.append(_row(
            id=f"p2-fig2-sgd-initial-drift-{link}", section="§5.1 T3, §6 Fig. 2",
            claim=f"tied, {link}: SGD's initial rise of p12 is that of its exact finite-d flow",
            expected=float(early_exact.mean()), measured=float(early_sgd.mean()),
            tolerance="95 % interval of the mean difference",
            passed=bool(np.all(np.isfinite(delta)) and abs(delta.mean()) <= half),
            note=f"p12(t) − p12(0) at t = {window:g}, mean of {delta.size} replicates: SGD "
                 f"{early_sgd.mean():.4g}, exact finite-d flow {early_exact.mean():.4g} (mean "
                 f"difference {delta.mean():+.2g} ± {half:.2g}), Gaussian-equivalent flow "
                 f"{early_gauss.mean():.4g} ({format_number(apart)} s.e. from SGD)"))
    direct = runs.get(("direct", "h1")) or runs.get(("direct", "linear"))
    if direct:
        link = "h1" if ("direct", "h1") in runs else "linear"
        horizon = float(direct[0].t_ode[-1])
        sgd = [_crossing(run, threshold, horizon) for run in direct]
        ode = [_crossing(run, threshold, horizon) for run in flows.get(("direct", link), [])]
        if len(ode) == len(sgd):
            diff = np.array([a[0] - b[0] for a, b in zip(sgd, ode)])
            t_ode = float(np.mean([b[0] for b in ode]))
            half = _t_interval(diff)
            reached = all(a[1] for a in sgd) and all(b[1] for b in ode)
            out.append(_row(
                id=f"p2-fig2-direct-sgd-follows-ode-{link}", section="§6 Fig. 2, [P Thm 4]",
                claim=f"direct S, {link}: SGD crosses the threshold when the closed ODE from its "
                      "initial order parameters does",
                expected=0.0, measured=float(diff.mean()),
                tolerance=f"|mean ΔT_wr| ≤ {tolerance:g} T_wr(ODE) + 95 % interval",
                passed=reached and abs(diff.mean()) <= tolerance * t_ode
                + (0 if math.isnan(half) else half),
                note=f"T_wr SGD {', '.join(f'{a[0]:.4f}' for a in sgd)}; closed ODE "
                     f"{', '.join(f'{b[0]:.4f}' for b in ode)}; d = {direct[0].d}"))
    return out


def _gap_trend(exact: Mapping[int, Sequence[Trajectory]], gauss: Mapping[int, Sequence[Trajectory]],
               threshold: float) -> tuple[FiniteSizeTrend | None, dict[int, int]]:
    """Per d: T_wr(Gaussian flow) − T_wr(exact flow) per replicate; censored counts per d."""
    gaps, censored = {}, {}
    for d in sorted(exact):
        if d not in gauss:
            continue
        horizon = float(exact[d][0].t_ode[-1])
        pairs = [(_crossing(e, threshold, horizon), _crossing(g, threshold, horizon))
                 for e, g in zip(exact[d], gauss[d])]
        gaps[d] = np.array([g[0] - e[0] for e, g in pairs])
        censored[d] = sum(not (e[1] and g[1]) for e, g in pairs)
    if len(gaps) < 2 or any(v.size < 2 or np.std(v) == 0 for v in gaps.values()):
        return None, censored
    return _trend(gaps), censored


def exact_flow_rows(ensembles: Mapping[tuple[str, str, int], Sequence[Trajectory]], *,
                    threshold: float) -> list[ClaimRow]:
    """SGD's flow approaches the d → ∞ flow: T_wr of the exact finite-d and Gaussian tied flows over d.

    ``ensembles`` maps (flow, link, d) to the replicates' flows, flow
    ``exact`` or ``tied`` (Gaussian-equivalent), paired by replicate.  For
    each link the gap T_wr(Gaussian) − T_wr(exact) must shrink with d (a
    flow that does not cross counts at the horizon, a lower bound of the
    gap).  For h₁ the two flows are the same equations (a quadratic loss).
    """
    out = []
    links = list(dict.fromkeys(link for _, link, _ in ensembles))
    for link in links:
        exact = {d: runs for (flow, l, d), runs in ensembles.items() if flow == "exact" and l == link}
        gauss = {d: runs for (flow, l, d), runs in ensembles.items() if flow == "tied" and l == link}
        if len(exact) < 2:
            continue
        if link in ("h1", "linear"):
            gap = max(float(np.max(np.abs(e.overlap_ratio - g.overlap_ratio)))
                      for d in exact for e, g in zip(exact[d], gauss.get(d, [])))
            out.append(_row(
                id=f"p2-fig2-exact-flow-limit-{link}", section="§5.1, §6 Fig. 2",
                claim=f"tied, {link}: the exact finite-d flow is the Gaussian-equivalent flow "
                      "(a loss quadratic in the indices: Theorem 1 is exact)",
                expected=0.0, measured=gap, tolerance="max |Δ overlap| ≤ 1e-4",
                passed=gap <= 1e-4,
                note=f"d = {', '.join(map(str, sorted(exact)))}, every replicate, whole horizon"))
            continue
        trend, censored = _gap_trend(exact, gauss, threshold)
        if trend is None:
            continue
        decreasing = all(a > b for a, b in zip(trend.mean, trend.mean[1:]))
        out.append(_row(
            id=f"p2-fig2-exact-flow-limit-{link}", section="§5.1, §6 Fig. 2",
            claim=f"tied, {link}: the finite-d flow SGD follows approaches the Gaussian-equivalent "
                  "matrix flow (the paper's d → ∞ theory) as d grows",
            expected="T_wr gap shrinking with d", measured=trend.per_d_text(),
            tolerance="decreasing in d and |gap(d_max)| < |gap(d_min)| beyond errors",
            passed=decreasing and trend.shrinks(),
            note=f"T_wr(Gaussian flow) − T_wr(exact finite-d flow) per replicate, from the same "
                 f"W(0); {trend.fit_text()}; flows not crossing by the horizon (counted there, a "
                 f"lower bound): {', '.join(f'd={d}: {n}' for d, n in censored.items())}. The "
                 "exact drift exceeds the Gaussian one by ~b/d at W(0) (p2-tied-sgd-drift); for "
                 "a link of high degree the excess is still O(1) at these d, so the gap falls "
                 "slower than 1/d here"))
    return out


def scan_flow_rows(scan: Mapping[tuple[str, str, int], Sequence[Trajectory]],
                   scan_flows: Mapping[tuple[str, str, int], Sequence[Trajectory]], *,
                   threshold: float, tolerance: float = FLOW_TWR_REL_TOL,
                   id_prefix: str = "p2-s3-sgd-follows-flow",
                   section: str = "§5.1–5.2, §6 Fig. S3, [P Thm 2, Thm 4]") -> list[ClaimRow]:
    """SGD follows its reference flow, as a finite-size trend over Figure S3's d ([P Thm 2, Thm 4]).

    ``scan`` and ``scan_flows`` map (param, link, d) to the Figure S3 SGD
    replicates and their reference flows from the same initial state (tied:
    the Gaussian-equivalent matrix flow; direct: the closed ODE), paired in
    order.  Per replicate the gap T_wr(SGD) − T_wr(flow) (a run or flow that
    does not cross counts at its horizon); per d its mean and error of the
    mean; the fit e∞ + b/d, + c/d² where 1/d alone is rejected (:func:`aimrepro.claims.trends.fit_trend`).
    The theorems make SGD's order parameters converge to the flow's as d → ∞,
    so the row passes when the 1/d form is consistent with the errors of the
    mean and e∞ is within ``tolerance`` times the flow's mean T_wr at the
    largest d (plus 2 s.e.).  Needs two d with a spread at each.  ``id_prefix``
    and ``section`` name the rows (Figure S3's link, or the links scanned for
    Figure 2 only).
    """
    out = []
    for param, link in sorted({(p, l) for p, l, _ in scan}):
        gaps, flow_times, censored = {}, {}, {}
        for (p, l, d), runs in scan.items():
            flows = list(scan_flows.get((p, l, d), []))
            if (p, l) != (param, link) or not runs or len(flows) != len(runs):
                continue
            pairs = [(_crossing(run, threshold, float(run.t_ode[-1])),
                      _crossing(flow, threshold, float(flow.t_ode[-1])))
                     for run, flow in zip(runs, flows)]
            gaps[d] = np.array([a[0] - b[0] for a, b in pairs])
            flow_times[d] = float(np.mean([b[0] for _, b in pairs]))
            censored[d] = sum(not (a[1] and b[1]) for a, b in pairs)
        if len(gaps) < 2 or any(v.size < 2 or np.std(v) == 0 for v in gaps.values()):
            continue
        trend = _trend(gaps)
        scale = tolerance * flow_times[max(gaps)]
        flow = "Gaussian-equivalent matrix flow" if param == "tied" else "closed ODE"
        unit = "t = 4αn/d" if param == "tied" else "t = αn/d"
        out.append(_row(
            id=f"{id_prefix}-{param}-{link}", section=section,
            claim=f"{param}, {link}: SGD crosses the weak-recovery threshold when its reference "
                  f"flow ({flow}, same initial state) does, in the limit d → ∞",
            expected=0.0, measured=trend.limit,
            tolerance=f"finite-size form consistent (p ≥ 0.01); |e∞| ≤ {tolerance:g} T_wr(flow, "
                      f"d = {max(gaps)}) = {scale:.3g} + 2 s.e.",
            **judge_trend(
                trend, scale, trend.consistent and trend.within(scale),
                f"T_wr(SGD) − T_wr(flow) per replicate ({unit}, |p12|/p22 ≥ {threshold:g}), "
                f"mean ± error of the mean: {trend.per_d_text()}; {trend.fit_text()}; flow T_wr "
                + ", ".join(f"d={d}: {t:.3f}" for d, t in sorted(flow_times.items()))
                + ("; pairs with a run or flow not crossing (counted at its horizon): "
                   + ", ".join(f"d={d}: {n}" for d, n in sorted(censored.items()) if n)
                   if any(censored.values()) else ""))))
    return out


def flow_trend_rows(ensembles: Mapping[tuple[str, str, int], Sequence[Trajectory]], *,
                    threshold: float) -> list[ClaimRow]:
    """Weak-recovery time of the reference flows against d, from finite-d initial states (S3).

    Direct S ([P Cor. 7]): on the uninformative manifold the closed ODE does
    not move; from a finite-d start its overlap O(1/d) is amplified, so T_wr
    grows with d (slope in ln d > 2 s.e.).  Tied ([P Cor. 3]): T_wr stays
    bounded (slope ≤ 2 s.e.).  Per d the mean over replicates and its error
    of the mean; a flow that does not cross counts at its horizon.
    """
    out = []
    keys = sorted({(param, link) for param, link, _ in ensembles})
    for param, link in keys:
        groups = {d: runs for (p, l, d), runs in ensembles.items() if p == param and l == link}
        if len(groups) < 3:
            continue
        horizon = {d: float(runs[0].t_ode[-1]) for d, runs in groups.items()}
        times = {d: np.array([_crossing(run, threshold, horizon[d])[0] for run in runs])
                 for d, runs in groups.items()}
        censored = {d: sum(not _crossing(run, threshold, horizon[d])[1] for run in runs)
                    for d, runs in groups.items()}
        slope, se, rows = log_slope(times)
        per_d = "; ".join(f"d = {d}: {m:.3f} ± {e:.2g} ({n} flows"
                          + (f", {censored[d]} not crossing" if censored[d] else "") + ")"
                          for d, m, e, n in rows)
        if param == "direct":
            out.append(_row(
                id=f"p2-direct-flow-twr-grows-{link}", section="§5.2 S1, [P Cor. 7]",
                claim=f"direct S, {link}: the closed ODE from finite-d uninformative starts "
                      "recovers later as d grows (no recovery on the d² log d scale as d → ∞)",
                expected="slope in ln d > 2 s.e.",
                measured=f"dT_wr/d ln d = {slope:.3f} ± {se:.2g}",
                tolerance="slope > 2 s.e.", passed=slope > 2 * se,
                note=f"T_wr (|p12|/p22 ≥ {threshold}) mean ± s.e.: {per_d}. The issue quoted "
                     "0.82, 1.00, 1.17, 1.35, 1.52 at d = 100 … 1600 for this ODE; over replicates "
                     "we measure the values here (larger, with a seed spread from the O(1/d) "
                     "initial overlap): the growth with d is what the paper's statement needs"))
        else:
            out.append(_row(
                id=f"p2-tied-flow-twr-flat-{link}", section="§5.1 T1, [P Cor. 3]",
                claim=f"tied, {link}: the matrix flow from finite-d starts recovers at a time that "
                      "does not grow with d",
                expected="slope in ln d ≤ 2 s.e.",
                measured=f"dT_wr/d ln d = {slope:.3f} ± {se:.2g}",
                tolerance="slope ≤ 2 s.e.", passed=slope <= 2 * se,
                note=f"T_wr mean ± s.e.: {per_d}"))
    return out


def eq23_tables(*, q: float = 0.5, rho: float = 1.0 / 3.0,
                links: Sequence[str] = EQ23_LINKS) -> tuple[dict, dict]:
    """Γ₁₂ at q₁₁ = q₂₂ = q (with the Mehler series) and at q₁₁ ≠ q₂₂, for :func:`eq23_rows`.

    Defaults: the tied uninformative point of unit-variance indices (T = 1:
    Var G = 2q = 1; ρ = t₁t₂/q = 1/3 at teacher width ρ = ½).
    """
    equal = cross_gradient_sign_table(links, q11_values=(q,), q22=q, rho_values=(rho,))
    unequal = cross_gradient_sign_table(links, q11_values=(q / 2, 2 * q), q22=2 * q,
                                        rho_values=(rho,))
    keep = ~np.isclose(unequal["q11"], unequal["q22"])
    return equal, {name: np.asarray(col)[keep] for name, col in unequal.items()}


#: Runs keyed by (parametrisation, link) (Figure 2), by (parametrisation, link, d) (a d-scan, a
#: strong-recovery problem), or by (flow, link, d) (a flow ensemble: flow tied, direct or exact).
Runs = Mapping[tuple, Sequence[Trajectory]]


@dataclass(frozen=True)
class Replicates:
    """Replicates of one problem: its spec, their seeds and their trajectories, in seed order."""

    problem: ProblemSpec
    seeds: Sequence[int]
    runs: Sequence[Trajectory]


@dataclass(frozen=True)
class DynamicsInputs:
    """What the ``paper2_dynamics`` topic judges, as its rule reads it.

    Attributes
    ----------
    theorem1, theorem1_links : Figure S1's rows (one per d) and its links
    figure2, figure2_flows : Figure 2's SGD runs and reference flows by (param, link)
    scan, scan_flows : Figure S3's runs and reference flows by (param, link, d)
    follow, follow_flows : the same scan for ``paper2.figureS3.follow_links`` (claims only:
        the "SGD follows its reference flow" trend rows)
    threshold, eta, horizon : the weak-recovery threshold, Figure S3's η and horizon per param
    figure2_ensembles : flows by (flow, link, d) over ``flow_dims``: exact finite-d and
        Gaussian tied; at Figure 2's d the exact ones are the reference of the "SGD follows its
        flow" rows
    s3_ensembles : Figure S3's trend flows by (param, link, d)
    velocity : the initial-velocity tables by (link, d)
    samples : the samples n of Figure 2's runs (one sample axis), or None
    strong : late-time flows by (param, link, d), with their problem and seeds (the
        predicted rates are computed here, :func:`paper2_dynamics_claims`)
    strong_sgd : late-time SGD runs by (param, link, d), then step size
    """

    theorem1: Sequence[Mapping[str, float]]
    theorem1_links: Sequence[str]
    figure2: Runs
    scan: Runs
    scan_flows: Runs
    threshold: float
    eta: float
    horizon: Mapping[str, float]
    figure2_flows: Runs = field(default_factory=dict)
    figure2_ensembles: Runs = field(default_factory=dict)
    s3_ensembles: Runs = field(default_factory=dict)
    velocity: Mapping[tuple[str, int], Mapping[str, np.ndarray]] = field(default_factory=dict)
    samples: float | None = None
    strong: Mapping[tuple[str, str, int], Replicates] = field(default_factory=dict)
    strong_sgd: Mapping[tuple[str, str, int], Mapping[float, Replicates]] = field(default_factory=dict)
    follow: Runs = field(default_factory=dict)
    follow_flows: Runs = field(default_factory=dict)


def paper2_dynamics_claims(inputs: DynamicsInputs) -> list[ClaimRow]:
    """All rows of the ``paper2_dynamics`` topic.

    The strong-recovery rows compare each replicate with the rate of its flow
    linearised at the teacher (:func:`aimrepro.paper2.theory_tables.predicted_loss_rate`,
    one d×d eigendecomposition per replicate), computed here from the
    replicates' problems and seeds.
    """
    i = inputs
    trend = flow_trend_rows(i.s3_ensembles, threshold=i.threshold)
    growth = {row.id.removeprefix("p2-direct-flow-twr-grows-"): row for row in trend
              if row.id.startswith("p2-direct-flow-twr-grows-")}
    d2 = next((runs[0].d for runs in i.figure2.values() if runs), None)
    exact = {link: runs for (flow, link, d), runs in i.figure2_ensembles.items()
             if flow == "exact" and d == d2}
    equal, unequal = eq23_tables()
    strong_predicted = {key: [predicted_loss_rate(rep.problem, seed) for seed in rep.seeds]
                        for key, rep in i.strong.items()}
    sgd_predicted = {key: [predicted_loss_rate(rep.problem, seed) for rep in by_lr.values()
                           for seed in rep.seeds] for key, by_lr in i.strong_sgd.items()}
    return (theorem1_rows(i.theorem1, i.theorem1_links)
            + eq17_rows(i.velocity)
            + eq23_rows(equal, off_diagonal=unequal)
            + weak_recovery_rows(i.scan, i.figure2, threshold=i.threshold, eta=i.eta, horizon=i.horizon,
                                 scan_flows=i.scan_flows, direct_growth=growth, samples=i.samples)
            + trend
            + figure2_flow_rows(i.figure2, i.figure2_flows, exact, threshold=i.threshold)
            + exact_flow_rows(i.figure2_ensembles, threshold=i.threshold)
            + flow_rate_rows({key: rep.runs for key, rep in i.strong.items()}, strong_predicted,
                             threshold=i.threshold)
            + sgd_rate_rows({key: {lr: rep.runs for lr, rep in by_lr.items()}
                             for key, by_lr in i.strong_sgd.items()}, sgd_predicted)
            + scan_flow_rows(i.scan, i.scan_flows, threshold=i.threshold)
            + scan_flow_rows(i.follow, i.follow_flows, threshold=i.threshold,
                             id_prefix="p2-sgd-follows-flow-trend",
                             section="§5.1–5.2, §6 Fig. 2 (on Fig. S3's scan), [P Thm 2, Thm 4]"))
