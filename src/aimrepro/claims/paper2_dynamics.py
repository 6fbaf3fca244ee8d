"""Paper 2's landscape and weak-recovery claims as measured rows (``docs/paper2.md`` §3.1, §5.1–5.2).

Every row's measured number comes from the pipeline's own results (the
Theorem-1 tables, the Figure 2 and Figure S3 SGD runs); where a measurement
contradicts the paper (or the paper's d → ∞ statement does not yet hold at
the simulated d) the row fails and its note gives both numbers.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence

import numpy as np

from aimrepro.claims.table import ClaimRow, claim_row, format_number
from aimrepro.paper2.population import Potential
from aimrepro.paper2.sgd import ProblemSpec
from aimrepro.paper2.trajectory import Trajectory
from aimrepro.paper2.analysis import initial_slope, recovery_summary

__all__ = [
    "initial_slope_rows",
    "paper2_dynamics_claims",
    "theorem1_rows",
    "weak_recovery_rows",
]

#: Relative tolerance of the initial-slope identity [P eq. 17] at the simulated d.
SLOPE_REL_TOL = 0.2
#: Fit window (t_ode) of the initial slope.
SLOPE_WINDOW = 0.1


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


# --- initial slope of p12 (tied) -----------------------------------------------------------




def initial_slope_rows(runs: Mapping[str, Sequence[Trajectory]], *, T: int, d: int,
                       window: float = SLOPE_WINDOW) -> list[ClaimRow]:
    """[P eq. 17]: dp₁₂/dt|₀ = −2Γ₁₂ t₁ p₂₂ for tied attention, measured on SGD runs.

    ``runs`` maps a link to its tied SGD replicates.  The prediction uses Γ at
    each replicate's initial q and its t₁, p₂₂; both sides are averaged over
    replicates.
    """
    out = []
    for link, group in runs.items():
        potential = Potential(ProblemSpec("tied", link, T, d).loss(), T)
        measured = np.array([initial_slope(run, window=window) for run in group])
        predicted = []
        for run in group:
            op = run.at(0)
            predicted.append(-2.0 * potential.gamma(op.Psi)[0, 1] * op.trace[0]
                             * op.p_Omega[1, 1])
        m, p = float(measured.mean()), float(np.mean(predicted))
        se = float(measured.std(ddof=1) / math.sqrt(measured.size)) if measured.size > 1 else 0.0
        passed = abs(m - p) <= SLOPE_REL_TOL * abs(p)
        fitted = max(window, float(group[0].t_ode[min(4, len(group[0]) - 1)]))
        note = (f"quadratic fit of SGD p12 over t ≤ {fitted:g}, mean of {measured.size} runs "
                f"(s.e. {format_number(se, 2)}), d = {d}; eq. 17 is a d → ∞ identity: its finite-d "
                "corrections are the mixed centered moments of Assumption 3, O(d^-1/2)")
        if not passed:
            note += f"; measured {format_number(m)} vs predicted {format_number(p)} ({(m - p) / p:+.0%})"
        out.append(_row(
            id=f"p2-tied-initial-slope-{link}", section="§5.1 T3",
            claim=f"tied, {link}: dp12/dt at t = 0 equals −2Γ12 t1 p22",
            expected=p, measured=m, tolerance=f"rel {SLOPE_REL_TOL}", passed=passed, note=note))
    return out


# --- weak recovery ------------------------------------------------------------------------------




def _mean_sd(values: np.ndarray) -> tuple[float, float]:
    ok = values[np.isfinite(values)]
    if ok.size == 0:
        return math.nan, math.nan
    return float(ok.mean()), float(ok.std(ddof=1)) if ok.size > 1 else 0.0


def _spread_over_d(values: Mapping[int, np.ndarray]) -> tuple[list[float], list[float], float,
                                                               float]:
    """Per-d means and s.d. over seeds, the spread of the means and the pooled s.d."""
    means, sds = zip(*(_mean_sd(values[d]) for d in sorted(values)))
    return list(means), list(sds), max(means) - min(means), math.sqrt(np.nanmean(np.square(sds)))


def _flow_times(flows: Mapping[tuple[str, str, int], Sequence[Trajectory]], key,
                threshold: float) -> str:
    """Mean weak-recovery time of the reference flows of one (param, link, d), as text."""
    times = recovery_summary(flows.get(key, []), threshold)["times"]
    if times.size == 0:
        return "n/a"
    ok = times[np.isfinite(times)]
    return f"{ok.mean():.3f}" if ok.size == times.size else f"≥ horizon in {times.size - ok.size}"


def weak_recovery_rows(scan: Mapping[tuple[str, str, int], Sequence[Trajectory]],
                       figure2: Mapping[tuple[str, str], Sequence[Trajectory]], *,
                       threshold: float, eta: float, horizon: Mapping[str, float],
                       scan_flows: Mapping[tuple[str, str, int], Sequence[Trajectory]]
                       | None = None) -> list[ClaimRow]:
    """Weak recovery of tied and direct attention ([P Cor. 3, Cor. 7], ``docs/paper2.md`` §5.1–5.2).

    ``scan`` holds the Figure S3 runs per (param, link, d), with per-sample
    rate α/B = η/(d ln d); ``scan_flows`` their reference flows (the notes
    quote the flows' weak-recovery times); ``figure2`` the Figure 2 runs per
    (param, link).
    """
    scan_flows = {} if scan_flows is None else scan_flows
    out = []
    links = sorted({link for _, link, _ in scan})
    for link in links:
        # tied: T_wr flat in d
        dims = sorted(d for p, l, d in scan if p == "tied" and l == link)
        summaries = {d: recovery_summary(scan[("tied", link, d)], threshold) for d in dims}
        means, sds, spread, pooled = _spread_over_d({d: summaries[d]["times"] for d in dims})
        all_recovered = all(s["n_recovered"] == s["n_runs"] for s in summaries.values())
        per_d = "; ".join(f"d={d}: {m:.3f}±{s:.3f}" for d, m, s in zip(dims, means, sds))
        out.append(_row(
            id=f"p2-tied-twr-flat-{link}", section="§5.1 T1, [P Cor. 3]",
            claim=f"tied, {link}: the weak-recovery time in ODE units does not depend on d",
            expected="spread over d within the seed spread",
            measured=f"spread {spread:.3f}, pooled seed s.d. {pooled:.3f}",
            tolerance="spread ≤ 2 × pooled s.d.", passed=all_recovered and spread <= 2 * pooled,
            note=f"T_wr (|p12|/p22 ≥ {threshold}) mean ± s.d.: {per_d}"
                 + ("" if all_recovered else "; some runs did not recover within the horizon")
                 + "; matrix flow from the same initial states: "
                 + ", ".join(f"d={d}: {_flow_times(scan_flows, ('tied', link, d), threshold)}"
                             for d in dims)))
        # sample complexity, same runs expressed in samples
        smeans, _, sspread, spooled = _spread_over_d(
            {d: summaries[d]["samples"] / (d * d * math.log(d)) for d in dims})
        out.append(_row(
            id=f"p2-tied-samples-d2logd-{link}", section="§2.4, [P eq. 21]",
            claim=f"tied, {link}: with α_d = η/(d log d), N_wr/(d² log d) is flat in d",
            expected="spread over d within the seed spread",
            measured=f"spread {sspread:.4g}, pooled seed s.d. {spooled:.4g}",
            tolerance="spread ≤ 2 × pooled s.d.", passed=all_recovered and sspread <= 2 * spooled,
            note="N_wr/(d² ln d) mean: " + "; ".join(f"d={d}: {m:.4g}" for d, m in
                                                    zip(dims, smeans))
                 + f"; with per-sample rate η/(d ln d), η = {eta:g}, this equals T_wr/(4η): the "
                   "same runs as the T_wr row, in samples"))
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
    out += _figure2_rows(figure2, threshold)
    return out


def _figure2_rows(figure2: Mapping[tuple[str, str], Sequence[Trajectory]],
                  threshold: float) -> list[ClaimRow]:
    """Fig. 2 statements: h₁ recovers in both; higher-order links stay uninformative for direct S."""
    out = []
    links = sorted({link for _, link in figure2})
    for link in links:
        tied = recovery_summary(figure2.get(("tied", link), []), threshold)
        direct = recovery_summary(figure2.get(("direct", link), []), threshold)
        horizon = max((run.t_ode[-1] for run in figure2.get(("direct", link), [])), default=0.0)
        max_direct = max((float(np.max(run.overlap_ratio)) for run in
                          figure2.get(("direct", link), []) if len(run)), default=math.nan)
        t_mean, _ = _mean_sd(tied["times"])
        d_mean, _ = _mean_sd(direct["times"])
        blowups = tied["n_blowups"] + direct["n_blowups"]
        blow_note = f"; {blowups} run(s) blew up" if blowups else ""
        if link in ("h1", "linear"):
            passed = (tied["n_recovered"] == tied["n_runs"]
                      and direct["n_recovered"] == direct["n_runs"])
            out.append(_row(
                id=f"p2-fig2-both-recover-{link}", section="§6 Fig. 2",
                claim=f"{link}: tied and direct attention both recover the teacher",
                expected="all runs reach the threshold",
                measured=f"tied {tied['n_recovered']}/{tied['n_runs']} (T_wr {format_number(t_mean)}), "
                         f"direct {direct['n_recovered']}/{direct['n_runs']} (T_wr {format_number(d_mean)})",
                tolerance=f"|p12|/p22 ≥ {threshold}", passed=passed, note=blow_note.lstrip("; ")))
            continue
        passed = (direct["n_recovered"] == 0 and tied["n_recovered"] == tied["n_runs"])
        note = (f"direct max overlap {format_number(max_direct)} over t ≤ {horizon:g}; tied T_wr "
                f"{format_number(t_mean)}")
        if direct["n_recovered"]:
            note += (f"; direct recovered in {direct['n_recovered']}/{direct['n_runs']} runs at "
                     f"T_wr {format_number(d_mean)}: at this d the escape through finite-d fluctuations "
                     "(growing with d, see p2-direct-twr-grows) is within the displayed horizon")
        out.append(_row(
            id=f"p2-fig2-direct-uninformative-{link}", section="§6 Fig. 2, §5.2",
            claim=f"{link}: direct S stays uninformative on the displayed scale while tied "
                  "attention recovers",
            expected="direct 0 recovered; tied all recovered",
            measured=f"direct {direct['n_recovered']}/{direct['n_runs']}, tied "
                     f"{tied['n_recovered']}/{tied['n_runs']}",
            tolerance=f"|p12|/p22 ≥ {threshold} within t ≤ {horizon:g}", passed=passed,
            note=note + blow_note))
    return out


def paper2_dynamics_claims(*, theorem1: Sequence[Mapping[str, float]], theorem1_links,
                           figure2: Mapping[tuple[str, str], Sequence[Trajectory]],
                           scan: Mapping[tuple[str, str, int], Sequence[Trajectory]],
                           scan_flows: Mapping[tuple[str, str, int], Sequence[Trajectory]],
                           threshold: float, eta: float, T: int, d: int,
                           horizon: Mapping[str, float]) -> list[ClaimRow]:
    """All rows of the ``paper2_dynamics`` topic."""
    tied_runs = {link: runs for (param, link), runs in figure2.items() if param == "tied"}
    return (theorem1_rows(theorem1, theorem1_links)
            + initial_slope_rows(tied_runs, T=T, d=d)
            + weak_recovery_rows(scan, figure2, threshold=threshold, eta=eta, horizon=horizon,
                                 scan_flows=scan_flows))
