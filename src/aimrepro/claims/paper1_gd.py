"""Paper 1's claims about gradient descent, each turned into a measured number (``docs/paper1.md`` §6, §8.6).

The rows are measured on the GD summary tables of the pipeline
(``gd.summary_table``: per α, single-student and averaged errors over the
draws, with the softmax SE error).  The ``claims_paper1_gd`` rule writes them
as one fragment of ``results/{scale}/claims.md``.

Averaging over K students, exactly
----------------------------------
Given the data, the K students are i.i.d. (independent initialisations), so
with m = E[S_k | data] the error of their mean is exactly

    E‖S̄_K − S*‖² = A∞ + (E‖S_k − S*‖² − A∞)/K,    A∞ = E‖m − S*‖²,

and A∞ = (K · averaged − single)/(K − 1) is estimated without bias from the
two measured errors.  A∞ is the error of GD averaged over infinitely many
initialisations: the quantity the paper's "averaging approaches the
Bayes-optimal curve" is about, and one that does not depend on K (quick
scale: K = 8, paper: 32).  From the published numbers (§8.6, d = 200,
K = 32), A∞ − MMSE = 0.044, 0.045, 0.045 at ᾱ_T = 0.20, 0.41, 0.59 (T = 2).

The tolerances are fixed from the published numbers, not from this
pipeline's results:

* A∞ within [−2 std, +0.1] of the SE curve (twice the published excess) for
  ᾱ_T >= 0.04; below, the paper's own averaged GD sits 0.23 above SE
  (ᾱ_T = 0.005) and few sequences make GD erratic (n = 5 at the quick d);
* single GD / MMSE is 1.5–2.2 for ᾱ_T <= 0.25 in the published data: the
  claim "≈ 2 × MMSE at small α" is tested as every ratio within 2 ± 0.5 for
  0.04 <= ᾱ_T <= 0.25 (the points below are listed in the note);
* both errors fall below 1e−3 from ᾱ_T = 1.004 (T = 2) … 1.184 (T = 5, 6) on.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence

import numpy as np

from aimrepro.claims.table import ClaimRow, claim_row
from aimrepro.paper1.thresholds import alpha_perfect_recovery, n_softmax_measurements

#: Points with ᾱ_T below this are left out of the averaged and single rows (see the module notes).
SMALL_ALPHA_T_MIN = 0.04
#: Allowed excess of GD averaged over infinitely many initialisations over SE.
AVERAGED_BAND = 0.1
#: "Below the SE curve" beyond the spread of the draws counts as a failure: this many std, plus ZERO_ERROR.
SPREAD_FACTOR = 2.0

#: Single GD ≈ 2 × MMSE "at small α": ᾱ_T up to here (SE >= 0.69 at ρ = 0.5).
SMALL_ALPHA_T = 0.25
SINGLE_RATIO = 2.0
SINGLE_RATIO_TOLERANCE = 0.5

#: GD's error counts as zero below this (as for AMP beyond α_PR).
ZERO_ERROR = 1e-3
#: ᾱ_T from which the published GD errors are below ZERO_ERROR (§8.6: 1.004 for T = 2 … 1.184 for T = 5, 6).
PUBLISHED_ONSET = (1.0, 1.2)


def infinite_average(single: float, averaged: float, K: int) -> float:
    """A∞ = (K · averaged − single)/(K − 1): the error of the mean of infinitely many students (module notes).

    With K = 1 there is nothing to extrapolate from: NaN.
    """
    return (K * averaged - single) / (K - 1) if K > 1 else math.nan


_row = functools.partial(claim_row, "paper1")


def _describe(curve: Mapping) -> str:
    return f"d={curve['d']}, K={curve['inits']} students, {len(curve['seeds'])} draws"


def _averaged_row(curves, tables):
    inside, outside, worst, below, raw_worst = 0, 0, None, 0, -math.inf
    for curve, table in zip(curves, tables):
        K = curve["inits"]
        for aT, single, mean, std, se, n_clean in zip(table["alphaT"], table["single_mean"],
                                                      table["averaged_mean"], table["averaged_std"],
                                                      table["se_mmse"], table["n_clean"]):
            if aT < SMALL_ALPHA_T_MIN or n_clean == 0:
                continue
            limit = infinite_average(single, mean, K)
            excess = limit - se
            raw_worst = max(raw_worst, mean - se)
            too_low = limit < se - SPREAD_FACTOR * std - ZERO_ERROR
            below += too_low
            ok = excess <= AVERAGED_BAND and not too_low
            inside += ok
            outside += not ok
            if worst is None or excess > worst[0]:
                worst = (excess, curve, aT, single, mean, std, limit, se)
    claim = (f"GD averaged over initialisations lies within {AVERAGED_BAND:g} of the state-evolution curve "
             f"(K -> infinity by the exact identity of the module notes, alpha_T >= {SMALL_ALPHA_T_MIN:g})")
    if worst is None:
        return _row(id="p1-gd-averaged-se", section="§6, §8.6", claim=claim, expected=0.0,
                    measured="no point", tolerance=AVERAGED_BAND, passed=False,
                    note="no GD point with a clean run in range")
    excess, curve, aT, single, mean, std, limit, se = worst
    note = (f"{inside} of {inside + outside} points in [SE - {SPREAD_FACTOR:g} std, SE + {AVERAGED_BAND:g}] "
            f"({_describe(curve)}); largest excess at T={curve['T']}, alpha_T={aT:.3g}: single {single:.4f}, "
            f"mean of K={curve['inits']} {mean:.4f} ± {std:.4f}, K -> infinity {limit:.4f}, SE {se:.4f}; "
            f"largest raw excess of the K-student mean {raw_worst:.4f}; published (d=200, K=32): 0.045")
    if below:
        note += f"; {below} points below SE beyond the spread"
    return _row(id="p1-gd-averaged-se", section="§6, §8.6", claim=claim, expected=0.0, measured=excess,
                tolerance=f"every point: excess <= {AVERAGED_BAND:g}, not below SE", passed=outside == 0,
                note=note)


def _single_row(curves, tables):
    ratios, where, left_out = [], [], []
    for curve, table in zip(curves, tables):
        for aT, single, se in zip(table["alphaT"], table["single_mean"], table["se_mmse"]):
            if aT <= SMALL_ALPHA_T and math.isfinite(single) and se > 0:
                if aT < SMALL_ALPHA_T_MIN:
                    left_out.append(f"T={curve['T']} alpha_T={aT:.3g}: {single / se:.3g}")
                    continue
                ratios.append(single / se)
                where.append(f"T={curve['T']} alpha_T={aT:.3g}")
    claim = (f"a single GD run has about twice the Bayes-optimal error at small alpha "
             f"({SMALL_ALPHA_T_MIN:g} <= alpha_T <= {SMALL_ALPHA_T:g})")
    if not ratios:
        return _row(id="p1-gd-single-twice-mmse", section="§6, §8.6", claim=claim, expected=SINGLE_RATIO,
                    measured="no point", tolerance=SINGLE_RATIO_TOLERANCE, passed=False,
                    note="no GD point at small alpha")
    ratios = np.asarray(ratios)
    lo, hi = int(np.argmin(ratios)), int(np.argmax(ratios))
    ok = np.all(np.abs(ratios - SINGLE_RATIO) <= SINGLE_RATIO_TOLERANCE)
    return _row(id="p1-gd-single-twice-mmse", section="§6, §8.6", claim=claim, expected=SINGLE_RATIO,
                measured=float(np.mean(ratios)), tolerance=f"every ratio within ± {SINGLE_RATIO_TOLERANCE:g}",
                passed=ok,
                note=(f"single GD / SE over {ratios.size} points ({_describe(curves[0])}): mean "
                      f"{np.mean(ratios):.3f}, min {ratios[lo]:.3f} ({where[lo]}), max {ratios[hi]:.3f} "
                      f"({where[hi]}); published 1.5-2.2"
                      + (f"; left out (alpha_T < {SMALL_ALPHA_T_MIN:g}): {', '.join(left_out)}" if left_out else "")))


def _onset(table):
    """(last α_T with an error >= ZERO_ERROR, first α_T from which both errors stay below it), NaN if none."""
    aT = np.asarray(table["alphaT"], float)
    worst = np.fmax(np.asarray(table["single_mean"], float), np.asarray(table["averaged_mean"], float))
    zero = worst < ZERO_ERROR  # NaN (no finished run) compares False: not zero
    if not zero[-1]:
        return (float(aT[-1]) if aT.size else math.nan), math.nan
    first = int(np.flatnonzero(~zero)[-1]) + 1 if (~zero).any() else 0
    return (float(aT[first - 1]) if first > 0 else 0.0), float(aT[first])


def _onset_row(curves, tables):
    lo_pub, hi_pub = PUBLISHED_ONSET
    described, ok, firsts = [], True, []
    for curve, table in zip(curves, tables):
        last_bad, first_zero = _onset(table)
        threshold = alpha_perfect_recovery(curve["rho"], curve["T"]) * n_softmax_measurements(curve["T"])
        firsts.append(first_zero)
        if math.isnan(first_zero):
            ok = False
            described.append(f"T={curve['T']}: never below {ZERO_ERROR:g} (largest alpha_T {last_bad:.3g})")
            continue
        # the onset lies in (last_bad, first_zero]: at the grid's resolution, it must meet the published window
        ok &= last_bad < hi_pub and first_zero >= lo_pub
        described.append(f"T={curve['T']}: ({last_bad:.3g}, {first_zero:.3g}]")
    claim = (f"GD (single and averaged) reaches error < {ZERO_ERROR:g} from alpha_T ~ {lo_pub:g}-{hi_pub:g} on, "
             f"beyond the SE threshold alpha_T,PR = {threshold:.3g}")
    measured = float(np.nanmax(firsts)) if np.isfinite(firsts).any() else "never"
    return _row(id="p1-gd-zero-error-onset", section="§6, §8.6", claim=claim,
                expected=f"{lo_pub:g}-{hi_pub:g}", measured=measured,
                tolerance="onset bracket (last alpha_T with error >= 1e-3, first without] meets the window, every T",
                passed=ok,
                note=(f"onset brackets {'; '.join(described)} ({_describe(curves[0])}); measured = the largest "
                      f"first zero-error alpha_T; published 1.004 (T=2) to 1.184 (T=5, 6)"))


def paper1_gd_claims(curves: Sequence[Mapping], tables: Sequence[Mapping]) -> list[ClaimRow]:
    """All GD rows.

    Parameters
    ----------
    curves : the planned GD curves (T, rho, d, inits, seeds, alphas, ...), as the workflow plans them
    tables : their summary tables (``gd.summary_table`` columns), same order
    """
    if not curves:
        return []
    return [_averaged_row(curves, tables), _single_row(curves, tables), _onset_row(curves, tables)]
