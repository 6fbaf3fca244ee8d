"""Paper 1's claims about GAMP-RIE, each turned into a measured number (``docs/paper1.md`` §5, §8.4–8.5, §9).

The rows compare the simulation with our own theory (the state evolution of
the same channel); no published number enters them.  They are measured on

* the AMP summary tables of the pipeline (``amp.summary_table``: mean and std
  over the *usable* runs per α, converged or stationary,
  :data:`aimrepro.paper1.amp.USABLE_STATUSES`, with the SE error of the same
  channel), at the figures' single d: a description of every grid point,
  ``informational`` (one small d against the seed spread judges nothing
  either way: a finite-size excess is expected there, and agreement within a
  wide spread proves little), except ``FAIL`` when a point lies below the
  Bayes-optimal error beyond the spread, which no algorithm can do;
* the finite-size trends (``paper1.trends.amp`` of the config): one α at
  several d, where the excess over the SE is judged on its 1/d trend with the
  error of the mean (:mod:`aimrepro.claims.trends`).  This is where a claim
  "AMP follows the SE" is settled: one small d against the seed spread
  cannot settle it.  The same runs' held-out generalisation errors (Bayes
  prediction on fresh test sequences) are judged the same way against the
  SE generalisation error (``aimrepro.paper1.generalisation``, Figure S2).

Points within :data:`NEAR_THRESHOLD` of the softmax α_PR are left out of both
kinds of row: there the d → ∞ recursion itself needs thousands of iterations
and AMP at finite d does not settle (``amp.StoppingRule``), so neither the SE
value nor a finite-d run is the number the claim is about.  The
``claims_paper1_amp`` rule writes the rows as one fragment of
``results/{scale}/claims.md``.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from aimrepro.claims.table import ERRATUM, FAIL, INFORMATIONAL, ClaimRow, claim_row
from aimrepro.claims.trends import excess_verdict, fit_trend, mean_and_sem
from aimrepro.paper1 import state_evolution as se
from aimrepro.paper1 import thresholds
from aimrepro.paper1.amp import USABLE_STATUSES
from aimrepro.paper1.channels import make_channel
from aimrepro.paper1.generalisation import SOFTMAX_TOKENS, generalisation_curve

#: "Within the seed spread": |mean − SE| at most this many standard deviations of the seeds.
SPREAD_FACTOR = 2.0

#: Softmax beyond α_PR: every run's error below this counts as numerically zero.
PERFECT_RECOVERY_ERROR = 1e-3

#: Absolute slack added to the seed spread: errors below this count as zero
#: (where SE and AMP both vanish the seed spread is ~1e−5 and says nothing).
AGREEMENT_FLOOR = PERFECT_RECOVERY_ERROR

#: Softmax points with |α/α_PR − 1| at most this are left out (module notes).
NEAR_THRESHOLD = 0.02

#: Where the corrected AMP is compared with the published hardmax curve (``docs/paper1.md`` §9 B1).
HARDMAX_CHECK = {"rho": 0.5, "alpha": 0.3}

#: Trend tolerance: |e∞| ≤ max(TREND_RELATIVE · SE, TREND_FLOOR) (+ 2 s.e. of e∞), and the
#: extrapolation must be precise enough to tell: s.e.(e∞) ≤ tolerance/2, else "not decisive".
TREND_RELATIVE = 0.1
TREND_FLOOR = 0.005


_row = functools.partial(claim_row, "paper1")


def _usable(table: Mapping, i: int) -> int:
    stationary = table["n_stationary"][i] if "n_stationary" in table else 0
    return int(table["n_converged"][i]) + int(stationary)


def _near_threshold(curve: Mapping, alpha: float) -> bool:
    if curve["channel"] != "softmax":
        return False
    return abs(alpha / thresholds.alpha_perfect_recovery(curve["rho"], curve["T"]) - 1.0) <= NEAR_THRESHOLD


def _points(curves: Sequence[Mapping], tables: Sequence[Mapping], channel: str):
    """(curve, alpha, mean, std, se, n_usable) for every α of a channel's curves."""
    for curve, table in zip(curves, tables):
        if curve["channel"] != channel:
            continue
        for i, alpha in enumerate(table["alpha"]):
            yield (curve, float(alpha), float(table["error_mean"][i]), float(table["error_std"][i]),
                   float(table["se_mmse"][i]), _usable(table, i))


def _agreement_row(curves, tables, channel, label):
    inside, outside, skipped, near, worst, below = 0, 0, 0, [], None, 0
    for curve, alpha, mean, std, se_value, n_ok in _points(curves, tables, channel):
        if _near_threshold(curve, alpha):
            near.append(f"T={curve['T']} alpha={alpha:.4g}")
            continue
        if n_ok < 2:
            skipped += 1
            continue
        gap = abs(mean - se_value)
        # below the Bayes-optimal error beyond the spread: no algorithm can, whatever d
        below += mean < se_value - SPREAD_FACTOR * std - AGREEMENT_FLOOR
        if gap <= SPREAD_FACTOR * std + AGREEMENT_FLOOR:
            inside += 1
        else:
            outside += 1
        score = gap - SPREAD_FACTOR * std - AGREEMENT_FLOOR  # > 0: outside the allowed band
        if worst is None or score > worst[0]:
            worst = (score, curve, alpha, mean, std, se_value)
    claim = f"GAMP-RIE ({label}) follows the state evolution within the seed spread at the figure's d"
    total = inside + outside
    if total == 0:
        return _row(id=f"p1-amp-se-{channel}", section="§5, §8.4-8.5", claim=claim,
                    expected=1.0, measured="no point with >= 2 usable runs", tolerance="all points",
                    passed=False, note=f"{skipped} points skipped")
    score, curve, alpha, mean, std, se_value = worst
    where = f"T={curve['T']}, rho={curve['rho']:g}" if channel == "softmax" else f"rho={curve['rho']:g}"
    note = (f"{inside} of {total} points within {SPREAD_FACTOR:g} std of the seeds + {AGREEMENT_FLOOR:g} "
            f"(converged or stationary runs, d={curve['d']}, {len(curve['seeds'])} seeds); worst {where}, "
            f"alpha={alpha:.4g}: AMP {mean:.4f} ± {std:.4f}, SE {se_value:.4f}; a single small d is a "
            f"consistency check, the finite-size trend rows (p1-amp-trend-*) settle the claim")
    if skipped:
        note += f"; {skipped} points with < 2 usable runs not counted"
    if near:
        note += (f"; left out within {NEAR_THRESHOLD:.0%} of alpha_PR, where neither the SE recursion nor "
                 f"AMP at finite d settles: {', '.join(near)}")
    if below and channel != "hardmax_paper":
        note += (f"; {below} points below the Bayes-optimal error beyond the spread: an algorithm "
                 "cannot beat it, so this is a real disagreement")
    return _row(id=f"p1-amp-se-{channel}", section="§5, §8.4-8.5", claim=claim,
                expected=1.0, measured=inside / total,
                tolerance=f"all points within {SPREAD_FACTOR:g} std + {AGREEMENT_FLOOR:g}",
                verdict=FAIL if below and channel != "hardmax_paper" else INFORMATIONAL, note=note)


def _perfect_recovery_row(curves, tables):
    worst, n_points, described, near = -math.inf, 0, [], []
    for curve, table in zip(curves, tables):
        if curve["channel"] != "softmax":
            continue
        alpha_pr = thresholds.alpha_perfect_recovery(curve["rho"], curve["T"])
        for alpha, largest, n_diverged in zip(table["alpha"], table["error_max"], table["n_diverged"]):
            if alpha <= alpha_pr:
                continue
            if _near_threshold(curve, float(alpha)):
                near.append(f"T={curve['T']} alpha={alpha:.4g}")
                continue
            n_points += 1
            # a diverged run has no final error: it counts as a failure
            largest = float(largest) if n_diverged == 0 else math.inf
            worst = max(worst, largest)
            described.append(f"T={curve['T']} alpha={alpha:.4g} (alpha_PR={alpha_pr:.4g}): max {largest:.2g}")
    claim = f"softmax GAMP-RIE reaches error < {PERFECT_RECOVERY_ERROR:g} beyond alpha_PR"
    if n_points == 0:
        return _row(id="p1-amp-softmax-perfect-recovery", section="§4, §8.5", claim=claim,
                    expected=PERFECT_RECOVERY_ERROR, measured="no grid point beyond alpha_PR",
                    tolerance="every run", passed=False, note="widen the alpha grid or lower alpha_stride")
    note = "largest final error over all runs: " + "; ".join(described)
    if near:
        note += f"; left out within {NEAR_THRESHOLD:.0%} of alpha_PR: {', '.join(near)}"
    return _row(id="p1-amp-softmax-perfect-recovery", section="§4, §8.5", claim=claim,
                expected=PERFECT_RECOVERY_ERROR, measured=worst, tolerance="every run below expected",
                passed=worst < PERFECT_RECOVERY_ERROR, note=note)


def _published_style_row(curves, tables):
    """AMP run with the published hardmax g_out: no agreement with anything is owed (B1)."""
    diverged, runs, last = 0, 0, []
    for curve, table in zip(curves, tables):
        if curve["channel"] != "hardmax_paper":
            continue
        diverged += int(np.sum(table["n_diverged"]))
        runs += int(np.sum(table["n_runs"]))
        last.extend(float(x) for x in table["error_max"] if math.isfinite(x))
    spread = f"{min(last):.3g}-{max(last):.3g}" if last else "none"
    return _row(
        id="p1-amp-se-hardmax_paper", section="§8.4, §9 B1",
        claim="GAMP-RIE with the published hardmax g_out, against the published-formula SE",
        expected="no agreement owed", measured=f"{diverged} of {runs} runs diverged", tolerance="none",
        verdict=INFORMATIONAL,
        note=(f"the published g_out is not a posterior derivative (B1): AMP's own error estimate collapses "
              f"while the estimate freezes, and the runs end 'diverged'; their last finite errors span "
              f"{spread}; nothing forces them onto the published SE"))


def _nearest(curves, tables, channel, rho, alpha):
    best = None
    for curve, table in zip(curves, tables):
        if curve["channel"] != channel or abs(curve["rho"] - rho) > 1e-12:
            continue
        i = int(np.argmin(np.abs(np.log(np.asarray(table["alpha"]) / alpha))))
        best = (curve, table, i)
    return best


def _beats_published_row(curves, tables):
    rho, target = HARDMAX_CHECK["rho"], HARDMAX_CHECK["alpha"]
    claim_text = (f"the published hardmax curve (rho={rho:g}) is the Bayes-optimal error; erratum B1 "
                  f"if GAMP-RIE with the corrected channel ends below it")
    found = _nearest(curves, tables, "hardmax", rho, target)
    if found is None:
        return _row(id="p1-amp-beats-published-hardmax", section="§9 B1", claim=claim_text,
                    expected="the published formula's SE", measured="no corrected-channel AMP at this rho",
                    tolerance=f"mean + {SPREAD_FACTOR:g} std", passed=False,
                    note="add rho=0.5 to paper1.figure1.amp")
    curve, table, i = found
    alpha = float(table["alpha"][i])
    mean, std = float(table["error_mean"][i]), float(table["error_std"][i])
    published = se.solve_se(make_channel("hardmax_paper", T=2), alpha, rho).mmse
    corrected = float(table["se_mmse"][i])
    beaten = math.isfinite(mean) and mean + SPREAD_FACTOR * std < published
    return _row(
        id="p1-amp-beats-published-hardmax", section="§9 B1", claim=claim_text + f" (alpha={alpha:.4g})",
        expected=published, measured=mean, tolerance=f"erratum when AMP mean + {SPREAD_FACTOR:g} std < expected",
        verdict=ERRATUM if beaten else FAIL,
        note=(f"expected: the published formula's SE {published:.4f} (our implementation reproduces the "
              f"published curve); evidence: the corrected SE {corrected:.4f}, and AMP with the corrected "
              f"channel {mean:.4f} ± {std:.4f} over {_usable(table, i)} usable runs (d={curve['d']}) "
              + ("beats the published 'optimum'" if beaten else
                 "does NOT end below it: the erratum's evidence is missing at this size")))


#: What a trend row compares: the run summary's key, the row id's prefix, the claim's words, the section.
TREND_QUANTITIES = {
    "error": ("error", "p1-amp-trend", "GAMP-RIE's error tends to the SE", "§5, §8.4-8.5"),
    "generalisation": ("bayes_generalisation_error", "p1-amp-gen-trend",
                       "GAMP-RIE's held-out generalisation error (Bayes prediction) tends to the SE's",
                       "§2 (beyond the paper: Figure S2)"),
}


def has_generalisation_theory(channel: str, T: int) -> bool:
    """The SE generalisation error exists for softmax T = 2, 3 and the corrected hardmax."""
    return channel == "hardmax" or (channel == "softmax" and T in SOFTMAX_TOKENS)


def _trend_row(trend: Mapping, runs: Sequence[Sequence[Mapping]], quantity: str = "error") -> ClaimRow:
    """AMP against its SE at one α over several d: the excess's 1/d trend (module notes)."""
    key, prefix, words, section = TREND_QUANTITIES[quantity]
    where = (f"{trend['channel']} T={trend['T']}, rho={trend['rho']:g}, alpha={trend['alpha']:.4g}")
    channel = make_channel(trend["channel"], T=trend["T"], beta=trend.get("beta"))
    if quantity == "error":
        se_value = se.solve_se(channel, trend["alpha"], trend["rho"]).mmse
    else:
        se_value = float(generalisation_curve(channel, [trend["alpha"]], trend["rho"]).bayes[0])
    tolerance = max(TREND_RELATIVE * se_value, TREND_FLOOR)
    row = functools.partial(
        _row, id=f"{prefix}-{trend['name']}", section=section,
        claim=f"{words} as d grows ({where}, SE {se_value:.4f})", expected=0.0,
        tolerance=(f"|e_inf| <= max({TREND_RELATIVE:g} SE, {TREND_FLOOR:g}) = {tolerance:.3g} (+ 2 s.e.), "
                   f"finite-size form consistent, s.e.(e_inf) <= tolerance/2"))
    if not trend["points"]:
        return row(measured="not measured at this scale", verdict=INFORMATIONAL,
                   note=(f"no sizes for trend {trend['name']} in scales.<scale>.trends.amp at this scale "
                         f"(left out to keep the scale's budget); measured at the paper scale"))
    if _near_threshold(trend, trend["alpha"]):
        return row(measured="left out", verdict=INFORMATIONAL,
                   note=f"alpha within {NEAR_THRESHOLD:.0%} of alpha_PR: not a point the SE settles")
    d, means, sems, counts, status_text = [], [], [], [], []
    for point, point_runs in zip(trend["points"], runs):
        usable = [r.get(key, math.nan) - se_value for r in point_runs if r["status"] in USABLE_STATUSES]
        mean, sem, n = mean_and_sem(usable)
        status_text.append(f"d={point['d']}: {n}/{len(point_runs)} usable")
        if n >= 2 and sem > 0:
            d.append(point["d"]); means.append(mean); sems.append(sem); counts.append(n)
    if len(d) < 2:
        return row(measured="too few usable sizes", verdict=FAIL,
                   note="fewer than two sizes with >= 2 usable runs: " + "; ".join(status_text))
    fit = fit_trend(d, means, sems, counts)
    verdict, judged = excess_verdict(fit, tolerance)
    return row(measured=fit.limit, verdict=verdict,
               note=(f"excess AMP - SE, mean ± error of the mean over usable runs: {fit.per_d_text()}; "
                     f"{fit.fit_text()}; {judged}; {', '.join(status_text)}"))


@dataclass(frozen=True)
class AMPInputs:
    """What the ``paper1_amp`` topic judges.

    Attributes
    ----------
    curves : the planned AMP curves (channel, T, rho, d, seeds, ...), as the workflow plans them
    tables : their summary tables (``amp.summary_table`` columns), same order
    trends : the planned trend points (``Plan.amp_trends``: name, channel, T, rho, beta, alpha, points)
    trend_runs : per trend, per planned d, the run summaries (``amp.load_run_summary``)
    """

    curves: Sequence[Mapping]
    tables: Sequence[Mapping]
    trends: Sequence[Mapping] = ()
    trend_runs: Sequence[Sequence[Sequence[Mapping]]] = ()


def paper1_amp_claims(inputs: AMPInputs) -> list[ClaimRow]:
    """All AMP rows."""
    curves, tables, trends, trend_runs = inputs.curves, inputs.tables, inputs.trends, inputs.trend_runs
    if len(trends) != len(trend_runs):
        raise ValueError(f"trend_runs must hold one entry per trend: {len(trend_runs)} for {len(trends)}")
    rows = []
    channels = {c["channel"] for c in curves}
    if "hardmax" in channels:
        rows.append(_agreement_row(curves, tables, "hardmax", "corrected hardmax channel"))
    if "softmax" in channels:
        rows.append(_agreement_row(curves, tables, "softmax", "softmax, T = 2, 3, 4"))
        rows.append(_perfect_recovery_row(curves, tables))
    rows.extend(_trend_row(trend, runs) for trend, runs in zip(trends, trend_runs))
    rows.extend(_trend_row(trend, runs, "generalisation") for trend, runs in zip(trends, trend_runs)
                if has_generalisation_theory(trend["channel"], trend["T"]))
    if "hardmax_paper" in channels:
        rows.append(_published_style_row(curves, tables))
    if "hardmax" in channels:
        rows.append(_beats_published_row(curves, tables))
    return rows
