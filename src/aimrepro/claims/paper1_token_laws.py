"""Beyond the papers: do paper 1's predictions hold for tokens that are not Gaussian? (``docs/paper1.md`` §13)

Each trend point (one channel, T, ρ, α) is measured at several d on the same
replicates for Gaussian tokens and for each other law; a replicate's
datasets share the teacher and the normals behind the tokens (common random
numbers, :class:`aimrepro.model.TokenLaw`), so the paired difference
D = error(law) − error(Gaussian) has a small spread.  Rows, per point and law:

``p1-tokens-amp-<point>-<law>-gaussian-se``
    the papers' prediction: GAMP-RIE on the law's tokens reaches the error of
    Gaussian tokens, i.e. D extrapolates to 0 (the Gaussian runs themselves
    follow the Gaussian SE: the AMP trend rows of ``paper1_amp``).  ``FAIL``
    says by how much it does not, and whether the deviation shrinks with d.
``p1-tokens-amp-<point>-<law>-law-se`` (where the law's SE differs: hardmax)
    our corrected theory: D extrapolates to the shift SE_law − SE_Gauss of the
    SE with the law's diagonal variance (:func:`aimrepro.paper1.token_laws.law_se`).
    For laws with E x⁶ = ∞ (Student-t, ν ≤ 6) the approach to that limit is
    slower than 1/d (§13.4) and the row is informational;
``p1-tokens-amp-<point>-<law>-law-se-finite-d``
    the same against the finite-d shift (the SE with the exact law of the
    diagonal's known part at each d, ``token_laws.finite_d_shift``), with the
    shift's Monte-Carlo error added to D's.
``p1-tokens-gd-<law>-gaussian-se``
    the mean of K GD students on the law's tokens reaches that on Gaussian tokens.

Every trend is the fit e∞ + b/d of the per-d means with their errors of the
mean (:mod:`aimrepro.claims.trends`), tolerance max(10 % of the Gaussian SE,
0.005) as the AMP trend rows, judged only when s.e.(e∞) ≤ tolerance/2.  AMP
runs enter a difference when both are usable (converged or stationary); a
law's run that is not usable while its Gaussian partner is counts as a
breakdown of the algorithm on that law, and any breakdown fails the row.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence

import numpy as np

from aimrepro.claims.table import FAIL, INFORMATIONAL, PASS, ClaimRow, claim_row
from aimrepro.claims.trends import NOT_DECISIVE, FiniteSizeTrend, fit_finite_size, mean_and_sem
from aimrepro.model import TokenLaw
from aimrepro.paper1.amp import USABLE_STATUSES
from aimrepro.paper1.channels import make_channel
from aimrepro.paper1.state_evolution import solve_se
from aimrepro.paper1.token_laws import law_se

__all__ = ["TREND_FLOOR", "TREND_RELATIVE", "paper1_token_laws_claims"]

#: Tolerance of every row: max(TREND_RELATIVE · SE_Gauss, TREND_FLOOR) (the AMP trend rows' rule).
TREND_RELATIVE = 0.1
TREND_FLOOR = 0.005

_row = functools.partial(claim_row, "paper1")

_SECTION = "§13 (beyond the papers)"


def _usable(table: Mapping) -> np.ndarray:
    if "status" not in table:
        return np.array([int(n) == 0 for n in table["n_diverged"]], dtype=bool)
    return np.array([str(s) in USABLE_STATUSES for s in table["status"]], dtype=bool)


def _paired(law_table: Mapping, gaussian_table: Mapping, column: str) -> tuple[np.ndarray, int, int]:
    """Law − Gaussian per replicate usable in both; breakdowns (law unusable, Gaussian usable); pairs."""
    law_ok, gauss_ok = _usable(law_table), _usable(gaussian_table)
    law_rows = {int(r): i for i, r in enumerate(law_table["replicate"])}
    gauss_rows = {int(r): i for i, r in enumerate(gaussian_table["replicate"])}
    diffs, breakdowns, pairs = [], 0, 0
    for replicate in sorted(set(law_rows) & set(gauss_rows)):
        i, j = law_rows[replicate], gauss_rows[replicate]
        pairs += 1
        if law_ok[i] and gauss_ok[j]:
            diffs.append(float(law_table[column][i]) - float(gaussian_table[column][j]))
        elif gauss_ok[j]:
            breakdowns += 1
    return np.array(diffs), breakdowns, pairs


def _trend(per_d: Mapping[int, tuple[np.ndarray, float]]) -> FiniteSizeTrend | None:
    """Fit of the per-d mean of (values − offset), the offset's error added to the error of the mean."""
    d, means, sems, counts = [], [], [], []
    for size, (values, offset, offset_se) in sorted(per_d.items()):
        mean, sem, n = mean_and_sem(values)
        if n >= 2 and sem > 0:
            d.append(size); means.append(mean - offset); sems.append(math.hypot(sem, offset_se)); counts.append(n)
    return fit_finite_size(d, means, sems, counts) if len(d) >= 2 else None


def _judged(trend: FiniteSizeTrend | None, tolerance: float, breakdowns: Mapping[int, tuple[int, int]],
            *, decidable: str | None = None) -> tuple[str, str]:
    """(verdict, words) of a row: breakdowns fail it; else the trend's own check when decisive."""
    broken = {d: b for d, b in breakdowns.items() if b[0]}
    if broken:
        text = ", ".join(f"d={d}: {b} of {n}" for d, (b, n) in sorted(broken.items()))
        return FAIL, (f"GAMP-RIE breaks down on the law's tokens where the Gaussian partner converges "
                      f"(runs diverged or stopped at the cap: {text})")
    if trend is None:
        return INFORMATIONAL, "fewer than two sizes with >= 2 paired runs: not measured at this scale"
    if decidable is not None:
        return INFORMATIONAL, decidable
    if not trend.decisive(tolerance):
        return INFORMATIONAL, f"{NOT_DECISIVE} (s.e.(e∞) = {trend.limit_se:.2g}, tolerance {tolerance:.3g})"
    if trend.consistent and trend.within(tolerance):
        return PASS, "within the tolerance, the 1/d form consistent"
    shrinks = "shrinks" if trend.shrinks() else "does not shrink"
    return FAIL, (f"deviation e∞ = {trend.limit:+.3g} ± {trend.limit_se:.2g} beyond the tolerance"
                  + ("" if trend.consistent else " (the 1/d form is not consistent with the errors)")
                  + f"; |deviation| from the smallest to the largest d {shrinks}")


def _where(point: Mapping) -> str:
    beta = f", beta={point['beta']:g}" if point.get("beta") is not None else ""
    return f"{point['channel']} T={point['T']}, rho={point['rho']:g}, alpha={point['alpha']:.4g}{beta}"


def _amp_rows(point: Mapping, tables: Mapping[tuple[str, int], Mapping], theory: Mapping | None) -> list[ClaimRow]:
    channel = make_channel(point["channel"], T=point["T"], beta=point.get("beta"))
    gaussian_se = solve_se(channel, point["alpha"], point["rho"]).mmse
    tolerance = max(TREND_RELATIVE * gaussian_se, TREND_FLOOR)
    tolerance_text = (f"|e∞| <= max({TREND_RELATIVE:g} SE_Gauss, {TREND_FLOOR:g}) = {tolerance:.3g} (+ 2 s.e.), "
                      f"s.e.(e∞) <= tolerance/2, no breakdown")
    rows = []
    for token in point["laws"]:
        law = TokenLaw.parse(token)
        if law.is_gaussian:
            continue
        base_id = f"p1-tokens-amp-{point['name']}-{token}"
        diffs, breakdowns, raw = {}, {}, []
        for d in point["dims"]:
            if (token, d) not in tables or ("gaussian", d) not in tables:
                continue
            values, broken, pairs = _paired(tables[(token, d)], tables[("gaussian", d)], "error")
            diffs[d], breakdowns[d] = values, (broken, pairs)
            law_errors = [e for e, ok in zip(tables[(token, d)]["error"], _usable(tables[(token, d)])) if ok]
            raw.append(f"d={d}: {mean_and_sem(np.asarray(law_errors) - gaussian_se)[0]:+.4f}")
        if not diffs:
            rows.append(_row(id=f"{base_id}-gaussian-se", section=_SECTION,
                             claim=f"GAMP-RIE on {token} tokens reaches the Gaussian-token error ({_where(point)})",
                             expected=0.0, measured="not measured at this scale", tolerance=tolerance_text,
                             verdict=INFORMATIONAL, note="no sizes for this law at this scale"))
            continue
        asymptotic = law_se(channel, point["alpha"], point["rho"], law).mmse
        shift_inf = asymptotic - gaussian_se
        checks = [("gaussian-se", "reaches the Gaussian-token error, i.e. the papers' Gaussian SE "
                   f"{gaussian_se:.4f} holds", {d: (v, 0.0, 0.0) for d, v in diffs.items()}, None, 0.0)]
        if abs(shift_inf) > 1e-12:
            heavy = (None if law.sixth_moment_finite else
                     f"not judged on a 1/d trend: E x^6 = inf for this law, so the diagonal's known part "
                     f"approaches its Gaussian limit like d^(1 - nu/4) = d^{1 - law.dof / 4:.3g} (§13.4); the "
                     f"finite-d row tests the theory at the simulated d")
            checks.append(("law-se", f"moves by the shift of the SE with the law's diagonal variance, "
                           f"SE_law - SE_Gauss = {shift_inf:+.4f} (SE_law {asymptotic:.4f}; beyond the papers)",
                           {d: (v, shift_inf, 0.0) for d, v in diffs.items()}, heavy, shift_inf))
            finite = _finite_shifts(theory, token)
            if finite:
                checks.append(("law-se-finite-d", "moves by the shift of the SE with the exact finite-d law of the "
                               "diagonal's known part at each d: the residual extrapolates to 0 (beyond the papers)",
                               {d: (v, *finite[d]) for d, v in diffs.items() if d in finite}, None, 0.0))
        for suffix, words, per_d, decidable, expected_shift in checks:
            trend = _trend(per_d)
            verdict, judged = _judged(trend, tolerance, breakdowns, decidable=decidable)
            offsets = ("" if suffix == "gaussian-se" else "; expected shift per d: " + ", ".join(
                f"d={d}: {o:+.4f} ± {s:.2g}" for d, (_, o, s) in sorted(per_d.items())))
            note = (f"paired difference law - Gaussian (same teacher and normals), mean ± error of the mean: "
                    + "; ".join(f"d = {d}: {mean_and_sem(v)[0]:+.4f} ± {mean_and_sem(v)[1]:.2g} "
                                f"({v.size} pairs)" for d, v in sorted(diffs.items()))
                    + offsets
                    + (f"; {trend.fit_text()} (of the difference minus the expected shift)" if trend else "")
                    + f"; {judged}; law's AMP error - Gaussian SE: {', '.join(raw)}")
            rows.append(_row(id=f"{base_id}-{suffix}", section=_SECTION,
                             claim=f"GAMP-RIE on {token} tokens {words} ({_where(point)})",
                             expected=expected_shift,
                             measured=trend.limit + expected_shift if trend else "too few sizes",
                             tolerance=tolerance_text, verdict=verdict, note=note))
    return rows


def _finite_shifts(theory: Mapping | None, token: str) -> dict[int, tuple[float, float]]:
    """{d: (shift, its s.e.)} of a law from a ``token_laws.law_table`` (finite d only)."""
    if theory is None:
        return {}
    return {int(d): (float(s), float(e)) for law, d, s, e in
            zip(theory["law"], theory["d"], theory["shift"], theory["shift_se"]) if law == token and int(d) > 0}


def _gd_rows(point: Mapping, tables: Mapping[tuple[str, int], Mapping]) -> list[ClaimRow]:
    channel = make_channel("softmax", T=point["T"], beta=point.get("beta", 1.0))
    gaussian_se = solve_se(channel, point["alpha"], point["rho"]).mmse
    tolerance = max(TREND_RELATIVE * gaussian_se, TREND_FLOOR)
    where = f"T={point['T']}, rho={point['rho']:g}, alpha_T={point['alphaT']:.3g}, K={point['inits']}"
    rows = []
    for token in point["laws"]:
        if TokenLaw.parse(token).is_gaussian:
            continue
        per_d, breakdowns, targets = {}, {}, []
        for d in point["dims"]:
            if (token, d) not in tables or ("gaussian", d) not in tables:
                continue
            values, broken, pairs = _paired(tables[(token, d)], tables[("gaussian", d)], "averaged_error")
            per_d[d], breakdowns[d] = (values, 0.0, 0.0), (broken, pairs)
            target = (1 + 1 / point["inits"]) * gaussian_se
            targets.append(f"d={d}: {mean_and_sem(np.asarray(tables[(token, d)]['averaged_error']) - target)[0]:+.3f}")
        trend = _trend(per_d)
        verdict, judged = _judged(trend, tolerance, {})
        if any(b for b, _ in breakdowns.values()):
            verdict, judged = FAIL, "students diverged on the law's tokens where the Gaussian ones did not"
        rows.append(_row(
            id=f"p1-tokens-gd-{token}-gaussian-se", section=_SECTION + ", §6",
            claim=f"the mean of K GD students on {token} tokens reaches that on Gaussian tokens as d grows ({where})",
            expected=0.0, measured=trend.limit if trend else "too few sizes",
            tolerance=(f"|e∞| <= max({TREND_RELATIVE:g} SE_Gauss, {TREND_FLOOR:g}) = {tolerance:.3g} (+ 2 s.e.), "
                       f"s.e.(e∞) <= tolerance/2"),
            verdict=verdict,
            note=(f"paired difference of the averaged error, law - Gaussian: "
                  + "; ".join(f"d = {d}: {mean_and_sem(v)[0]:+.4f} ± {mean_and_sem(v)[1]:.2g} ({v.size} draws)"
                              for d, (v, _, _) in sorted(per_d.items()))
                  + (f"; {trend.fit_text()}" if trend else "") + f"; {judged}; the law's mean of K minus "
                  f"(1 + 1/K) SE_Gauss: {', '.join(targets)}")))
    return rows


def paper1_token_laws_claims(amp_points: Sequence[Mapping] = (),
                             amp_tables: Sequence[Mapping[tuple[str, int], Mapping]] = (),
                             theory: Sequence[Mapping | None] = (), *, gd_point: Mapping | None = None,
                             gd_tables: Mapping[tuple[str, int], Mapping] | None = None) -> list[ClaimRow]:
    """All token-law rows of paper 1 (module notes).

    Parameters
    ----------
    amp_points : the trend points: ``name``, ``channel``, ``T``, ``rho``, ``alpha``, ``beta`` (softmax),
        ``laws`` (path tokens, ``gaussian`` among them), ``dims``
    amp_tables : per point, {(law token, d): ``token_law_runs.amp_replicates`` table}
    theory : per point, its ``token_laws.law_table`` (or None: no finite-d row)
    gd_point : ``T``, ``rho``, ``alpha``, ``alphaT``, ``beta``, ``inits``, ``laws``, ``dims``
    gd_tables : {(law token, d): ``token_law_runs.gd_replicates`` table}
    """
    if not (len(amp_points) == len(amp_tables) and (not theory or len(theory) == len(amp_points))):
        raise ValueError(f"amp_tables and theory must hold one entry per point: {len(amp_tables)}, "
                         f"{len(theory)} for {len(amp_points)}")
    rows = []
    for i, point in enumerate(amp_points):
        rows += _amp_rows(point, amp_tables[i], theory[i] if theory else None)
    if gd_point is not None:
        rows += _gd_rows(gd_point, gd_tables or {})
    return rows
