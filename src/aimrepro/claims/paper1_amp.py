"""Paper 1's claims about GAMP-RIE, each turned into a measured number (``docs/paper1.md`` §5, §8.4–8.5, §9).

The rows are measured on the AMP summary tables of the pipeline
(``amp.summary_table``: mean and std over seeds per α, converged runs only,
with the SE error of the same channel).  The ``claims_paper1_amp`` rule
writes them as one fragment of ``results/{scale}/claims.md``.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence

import numpy as np

from aimrepro.paper1 import thresholds
from aimrepro.paper1 import state_evolution as se
from aimrepro.paper1.channels import make_channel
from aimrepro.claims.table import ClaimRow, claim_row

#: "Within the seed spread": |mean − SE| at most this many standard deviations of the seeds.
SPREAD_FACTOR = 2.0

#: Softmax beyond α_PR: every run's error below this (``docs/paper1.md`` §8.5: 3e−4 to 6e−4 published).
PERFECT_RECOVERY_ERROR = 1e-3

#: Absolute slack added to the seed spread: errors below this count as zero
#: (where SE and AMP both vanish the seed spread is ~1e−5 and says nothing).
AGREEMENT_FLOOR = PERFECT_RECOVERY_ERROR

#: The published hardmax "MMSE" the corrected AMP is compared with (``docs/paper1.md`` §9 B1).
HARDMAX_CHECK = {"rho": 0.5, "alpha": 0.3}

#: The published AMP dot near that point (``docs/paper1.md`` §8.4, ρ = 0.5, α = 0.3122: 0.615 ± 0.025).
PUBLISHED_AMP_DOT = {"rho": 0.5, "alpha": 0.3122, "mean": 0.615, "std": 0.025}


_row = functools.partial(claim_row, "paper1")


def _points(curves: Sequence[Mapping], tables: Sequence[Mapping], channel: str):
    """(curve, alpha, mean, std, se, n_converged, n_runs) for every α of a channel's curves."""
    for curve, table in zip(curves, tables):
        if curve["channel"] != channel:
            continue
        for i, alpha in enumerate(table["alpha"]):
            yield (curve, float(alpha), float(table["error_mean"][i]), float(table["error_std"][i]),
                   float(table["se_mmse"][i]), int(table["n_converged"][i]), int(table["n_runs"][i]))


def _agreement_row(curves, tables, channel, label, note_extra=""):
    inside, outside, skipped, worst = 0, 0, 0, None
    for curve, alpha, mean, std, se_value, n_ok, n_runs in _points(curves, tables, channel):
        if n_ok < 2:
            skipped += 1
            continue
        gap = abs(mean - se_value)
        if gap <= SPREAD_FACTOR * std + AGREEMENT_FLOOR:
            inside += 1
        else:
            outside += 1
        score = gap - SPREAD_FACTOR * std - AGREEMENT_FLOOR  # > 0: outside the allowed band
        if worst is None or score > worst[0]:
            worst = (score, curve, alpha, mean, std, se_value)
    total = inside + outside
    if total == 0:
        return _row(id=f"p1-amp-se-{channel}", section="§5, §8.4-8.5",
                    claim=f"GAMP-RIE ({label}) follows the state evolution within the seed spread",
                    expected=1.0, measured="no point with >= 2 converged runs", tolerance="all points",
                    passed=False, note=f"{skipped} points skipped")
    score, curve, alpha, mean, std, se_value = worst
    where = f"T={curve['T']}, rho={curve['rho']:g}" if channel == "softmax" else f"rho={curve['rho']:g}"
    note = (f"{inside} of {total} points within {SPREAD_FACTOR:g} std of the seeds + {AGREEMENT_FLOOR:g} "
            f"(converged runs, d={curve['d']}, "
            f"{len(curve['seeds'])} seeds); worst {where}, alpha={alpha:.4g}: AMP {mean:.4f} ± {std:.4f}, "
            f"SE {se_value:.4f}")
    if skipped:
        note += f"; {skipped} points with < 2 converged runs not counted"
    return _row(id=f"p1-amp-se-{channel}", section="§5, §8.4-8.5",
                claim=f"GAMP-RIE ({label}) follows the state evolution within the seed spread",
                expected=1.0, measured=inside / total,
                tolerance=f"all points within {SPREAD_FACTOR:g} std + {AGREEMENT_FLOOR:g}",
                passed=outside == 0, note=note + note_extra)


def _perfect_recovery_row(curves, tables):
    worst, n_points, described = -math.inf, 0, []
    for curve, table in zip(curves, tables):
        if curve["channel"] != "softmax":
            continue
        alpha_pr = thresholds.alpha_perfect_recovery(curve["rho"], curve["T"])
        for alpha, largest, n_runs, n_diverged in zip(table["alpha"], table["error_max"], table["n_runs"],
                                                      table["n_diverged"]):
            if alpha > alpha_pr:
                n_points += 1
                # a diverged run has no final error: it counts as a failure
                largest = float(largest) if n_diverged == 0 else math.inf
                worst = max(worst, largest)
                described.append(f"T={curve['T']} alpha={alpha:.4g} (alpha_PR={alpha_pr:.4g}): max {largest:.2g}")
    if n_points == 0:
        return _row(id="p1-amp-softmax-perfect-recovery", section="§4, §8.5",
                    claim="softmax GAMP-RIE reaches error < 1e-3 beyond alpha_PR",
                    expected=PERFECT_RECOVERY_ERROR, measured="no grid point beyond alpha_PR",
                    tolerance="every run", passed=False, note="widen the alpha grid or lower alpha_stride")
    return _row(id="p1-amp-softmax-perfect-recovery", section="§4, §8.5",
                claim="softmax GAMP-RIE reaches error < 1e-3 beyond alpha_PR",
                expected=PERFECT_RECOVERY_ERROR, measured=worst, tolerance="every run below expected",
                passed=worst < PERFECT_RECOVERY_ERROR,
                note="largest final error over all runs: " + "; ".join(described))


def _nearest(curves, tables, channel, rho, alpha):
    best = None
    for curve, table in zip(curves, tables):
        if curve["channel"] != channel or abs(curve["rho"] - rho) > 1e-12:
            continue
        i = int(np.argmin(np.abs(np.log(np.asarray(table["alpha"]) / alpha))))
        best = (curve, table, i)
    return best


def _published_mmse_rows(curves, tables):
    rows = []
    rho, target = HARDMAX_CHECK["rho"], HARDMAX_CHECK["alpha"]
    found = _nearest(curves, tables, "hardmax", rho, target)
    if found is None:
        return [_row(id="p1-amp-beats-published-hardmax", section="§9 B1",
                     claim=f"corrected GAMP-RIE beats the published hardmax MMSE at rho={rho:g}",
                     expected="below the published MMSE", measured="no corrected-channel AMP at this rho",
                     tolerance="mean + 2 std", passed=False, note="add rho=0.5 to paper1.figure1.amp")]
    curve, table, i = found
    alpha = float(table["alpha"][i])
    mean, std = float(table["error_mean"][i]), float(table["error_std"][i])
    published = se.solve_se(make_channel("hardmax_paper", T=2), alpha, rho).mmse
    corrected = float(table["se_mmse"][i])
    ok = mean + SPREAD_FACTOR * std < published
    rows.append(_row(
        id="p1-amp-beats-published-hardmax", section="§9 B1",
        claim=(f"erratum B1: GAMP-RIE with the corrected channel ends below the published hardmax "
               f"'MMSE' (rho={rho:g}, alpha={alpha:.4g}), so that curve is not the Bayes-optimal error"),
        expected=published, measured=mean, tolerance=f"mean + {SPREAD_FACTOR:g} std < expected",
        passed=ok, note=(f"AMP {mean:.4f} ± {std:.4f} over {int(table['n_converged'][i])} converged runs "
                         f"(d={curve['d']}); corrected SE {corrected:.4f}; published formula SE {published:.4f}")))

    dot = PUBLISHED_AMP_DOT
    found = _nearest(curves, tables, "hardmax_paper", dot["rho"], dot["alpha"])
    if found is not None:
        curve, table, i = found
        alpha = float(table["alpha"][i])
        mean, std = float(table["error_mean"][i]), float(table["error_std"][i])
        gap = abs(mean - dot["mean"])
        allowed = SPREAD_FACTOR * math.hypot(std, dot["std"])
        rows.append(_row(
            id="p1-amp-published-style-dot", section="§8.4, §9 B1-B2",
            claim=(f"the published AMP dot {dot['mean']} ± {dot['std']} (rho={dot['rho']:g}, "
                   f"alpha={dot['alpha']}) is reproduced by AMP with the published g_out"),
            expected=dot["mean"], measured=mean, tolerance=f"{SPREAD_FACTOR:g} x combined std",
            passed=math.isfinite(gap) and gap <= allowed,
            note=(f"hardmax_paper g_out on data of the correct hardmax model (not the tau-scaled labels "
                  f"of B2), alpha={alpha:.4g}, d={curve['d']}: {mean:.4f} ± {std:.4f}, "
                  f"{int(table['n_converged'][i])}/{int(table['n_runs'][i])} converged")))
    return rows


def paper1_amp_claims(curves: Sequence[Mapping], tables: Sequence[Mapping]) -> list[ClaimRow]:
    """All AMP rows.

    Parameters
    ----------
    curves : the planned AMP curves (channel, T, rho, d, seeds, ...), as the workflow plans them
    tables : their summary tables (``amp.summary_table`` columns), same order
    """
    rows = []
    channels = {c["channel"] for c in curves}
    if "hardmax" in channels:
        rows.append(_agreement_row(curves, tables, "hardmax", "corrected hardmax channel"))
    if "softmax" in channels:
        rows.append(_agreement_row(curves, tables, "softmax", "softmax, T = 2, 3, 4"))
        rows.append(_perfect_recovery_row(curves, tables))
    if "hardmax_paper" in channels:
        rows.append(_agreement_row(
            curves, tables, "hardmax_paper", "published hardmax g_out, against the published-formula SE",
            note_extra="; the published g_out is not a posterior derivative (B1), so nothing forces agreement"))
    if "hardmax" in channels:
        rows.extend(_published_mmse_rows(curves, tables))
    return rows
