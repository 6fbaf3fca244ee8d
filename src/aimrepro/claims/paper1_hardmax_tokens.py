"""Beyond paper 1: claims on hardmax attention with T ≥ 3 tokens, each a measured number (``docs/paper1.md`` §3.6).

The paper solves hardmax for T = 2 only; these rows check the tabulated
state evolution of :mod:`aimrepro.paper1.hardmax_tokens` where it can be
checked:

* T = 2: the curve through the estimated table reproduces the exact
  corrected channel within its standard error, at every α of Figure 1 left;
* uniqueness: the fixed-point gap has one root, and the SE iterated from
  three starts reaches it, at every (ρ, α) of a grid, for every tabulated T;
* more tokens, lower error: MMSE_T decreases with T at every point drawn;
* the large-α law MMSE → Q0 (D(ρ)/(2α a_T))² (informational: a limit).

The ``claims_paper1_hardmax_tokens`` rule reads the curves and tables of the
pipeline (rules ``tokens_se_curve``, ``se_curve``, ``fisher_table``).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from aimrepro.claims.table import INFORMATIONAL, ClaimRow, claim_row, format_number
from aimrepro.paper1 import hardmax_tokens as ht

#: T = 2 check: every tabulated point within this many of its standard errors of the exact MMSE.
Z_LIMIT = 3.0
#: Uniqueness: the SE from each start, iterated until a step changes the MMSE by less than
#: ITERATION_TOL, ends within this relative distance of the root (brentq's own xtol is 1e-14
#: absolute, ~1e-9 relative at the smallest MMSE of the grid, ~1e-5).
ITERATION_TOL = 1e-14
START_AGREEMENT = 1e-8
#: SE starts q/Q0 of the uniqueness check: uninformative (q = 0), the paper's q = ρ, near-perfect.
START_FRACTIONS = ("0", "rho", "0.999 Q0")

_row = functools.partial(claim_row, "paper1")
#: Where the claims of hardmax attention with T >= 3 tokens stand (beyond the paper).
SECTION = "§3.6 (beyond the paper)"


def denoising_dof(rho: float) -> float:
    """D(ρ) = 2ρ − ρ² for ρ < 1, else 1: the large-signal slope of the denoising error (§3.3)."""
    return 2.0 * rho - rho * rho if rho < 1.0 else 1.0


def large_alpha_law(alpha, rho: float, a_T: float) -> np.ndarray:
    """MMSE → Q0 (D(ρ)/(2 α a_T))² as α → ∞, a_T = G_T(0) = lim F_T(m)/√(1 − m) (docs/paper1.md §3.6)."""
    return (1.0 + rho) * (denoising_dof(rho) / (2.0 * np.asarray(alpha, float) * a_T)) ** 2


def t2_rows(curves: Sequence[Mapping], exact: Mapping[float, Mapping]) -> list[ClaimRow]:
    """One row per ρ: max |tabulated − exact|/s.e. over the α grid of the T = 2 table curve."""
    rows = []
    for curve in curves:
        if curve["T"] != 2 or curve["rho"] not in exact:
            continue
        table, reference = curve["columns"], exact[curve["rho"]]
        if not np.allclose(table["alpha"], reference["alpha"], rtol=1e-9):
            raise ValueError(f"T = 2 table and exact curves of rho = {curve['rho']} differ in their alpha grid")
        z = (table["mmse"] - reference["mmse"]) / table["mmse_stderr"]
        worst = int(np.argmax(np.abs(z)))
        relative = np.abs(table["mmse"] / reference["mmse"] - 1.0)
        rows.append(_row(
            id=f"p1x-hardmax-tokens-T2-rho{curve['rho']:g}", section=SECTION,
            claim=f"the tabulated SE (Monte-Carlo F_T table) reproduces the exact corrected hardmax T=2 "
                  f"channel within its standard error, rho={curve['rho']:g}",
            expected=0.0, measured=float(abs(z[worst])), tolerance=f"|z| <= {Z_LIMIT:g}",
            passed=bool(np.all(np.abs(z) <= Z_LIMIT)),
            note=f"max |table - exact|/s.e. over {z.size} alphas in [{table['alpha'][0]:g}, "
                 f"{table['alpha'][-1]:g}] (at alpha={table['alpha'][worst]:.3g}); largest relative "
                 f"deviation {format_number(float(relative.max()))}, relative s.e. up to "
                 f"{format_number(float(np.max(table['mmse_stderr'] / table['mmse'])))}; points are "
                 f"correlated (one table)"))
    return rows


def uniqueness_row(fit: ht.FisherFit, rhos: Sequence[float], alphas: Sequence[float]) -> ClaimRow:
    """Roots of the fixed-point gap (log-grid scan) and the SE iterated from three starts, per (ρ, α)."""
    most_roots, fewest_roots, worst_spread, not_converged = 0, np.inf, 0.0, 0
    for rho in rhos:
        Q0 = 1.0 + rho
        for alpha in alphas:
            roots = ht.fixed_points(fit, alpha, rho)
            most_roots, fewest_roots = max(most_roots, roots.size), min(fewest_roots, roots.size)
            if roots.size == 0:
                continue
            for q_start in (0.0, rho, 0.999 * Q0):
                mmse, _, converged = ht.iterate_se(fit, alpha, rho, q_start, tol=ITERATION_TOL)
                not_converged += not converged
                worst_spread = max(worst_spread, abs(mmse / roots[0] - 1.0))
    n_points = len(rhos) * len(alphas)
    unique = most_roots == 1 and fewest_roots == 1
    return _row(
        id=f"p1x-hardmax-tokens-T{fit.T}-unique", section=SECTION,
        claim=f"hardmax T={fit.T}: the SE has a single fixed point (no first-order transition), "
              f"reached from every start",
        expected=1, measured=int(most_roots if most_roots > 1 else fewest_roots),
        tolerance=f"1 root; starts agree to {START_AGREEMENT:g}",
        passed=unique and worst_spread <= START_AGREEMENT and not_converged == 0,
        note=f"{n_points} (rho, alpha) points: rho in {{{', '.join(f'{r:g}' for r in rhos)}}}, alpha in "
             f"{{{', '.join(f'{a:g}' for a in alphas)}}}; roots per point {int(fewest_roots)}-{most_roots} "
             f"(400-point log scan of the gap); SE from q = {', '.join(START_FRACTIONS)}: largest "
             f"relative distance to the root {format_number(worst_spread)}, {not_converged} unconverged")


def ordering_row(curves: Sequence[Mapping]) -> ClaimRow | None:
    """MMSE_T strictly decreasing in T at every (ρ, α) drawn, beyond the error bars."""
    by_rho: dict[float, dict[int, Mapping]] = {}
    for curve in curves:
        by_rho.setdefault(curve["rho"], {})[curve["T"]] = curve["columns"]
    Ts = sorted({curve["T"] for curve in curves})
    if len(Ts) < 2:
        return None
    worst = np.inf
    for tables in by_rho.values():
        for low, high in zip(Ts, Ts[1:]):
            gap = tables[low]["mmse"] - tables[high]["mmse"]
            scale = np.hypot(tables[low]["mmse_stderr"], tables[high]["mmse_stderr"])
            worst = min(worst, float(np.min(gap / scale)))
    return _row(
        id="p1x-hardmax-tokens-more-tokens-lower-error", section=SECTION,
        claim=f"hardmax: more tokens give a lower Bayes-optimal error at every (rho, alpha) (T = {', '.join(map(str, Ts))})",
        expected="> 0", measured=worst, tolerance="gap > 3 s.e.", passed=worst > 3.0,
        note=f"smallest (MMSE_T - MMSE_T+1)/s.e. over {len(by_rho)} rho and every alpha of Figure 1 left")


def large_alpha_row(fit: ht.FisherFit, curves: Sequence[Mapping]) -> ClaimRow:
    """The last α of each curve of this T against the large-α law (informational: a limit, approached like 1/α)."""
    a_T = float(fit.G(0.0))
    ratios = []
    for curve in curves:
        if curve["T"] != fit.T:
            continue
        table = curve["columns"]
        ratios.append(float(table["mmse"][-1] / large_alpha_law(table["alpha"][-1], curve["rho"], a_T)))
    alpha = max(float(c["columns"]["alpha"][-1]) for c in curves if c["T"] == fit.T)
    return _row(
        id=f"p1x-hardmax-tokens-T{fit.T}-large-alpha", section=SECTION,
        claim=f"hardmax T={fit.T}: MMSE -> Q0 (D(rho)/(2 alpha a_T))^2 as alpha -> infinity, "
              f"a_T = lim F_T(m)/sqrt(1-m) = {a_T:.4g}",
        expected=1.0, measured=float(max(ratios, key=lambda r: abs(r - 1.0))), tolerance="limit",
        verdict=INFORMATIONAL,
        note=f"MMSE/law at alpha={alpha:g}, worst over {len(ratios)} rho (ratios "
             f"{', '.join(f'{r:.3f}' for r in ratios)}); a_T is the fit extrapolated to m = 1")


@dataclass(frozen=True)
class TokensInputs:
    """What the ``paper1_hardmax_tokens`` topic judges.

    Attributes
    ----------
    curves : dicts with ``T``, ``rho`` and ``columns`` (a table of rule tokens_se_curve)
    exact : ρ → columns of the exact corrected T = 2 curve on the same α grid (rule se_curve)
    fits : T → FisherFit of that T's table
    rhos, uniqueness_alphas : the (ρ, α) grid of the uniqueness check
    """

    curves: Sequence[Mapping]
    exact: Mapping[float, Mapping]
    fits: Mapping[int, ht.FisherFit]
    rhos: Sequence[float]
    uniqueness_alphas: Sequence[float]


def hardmax_tokens_claims(inputs: TokensInputs) -> list[ClaimRow]:
    """All rows."""
    curves, exact, fits = inputs.curves, inputs.exact, inputs.fits
    rhos, uniqueness_alphas = inputs.rhos, inputs.uniqueness_alphas
    rows = t2_rows(curves, exact)
    for T in sorted(fits):
        rows.append(uniqueness_row(fits[T], rhos, uniqueness_alphas))
    ordering = ordering_row(curves)
    if ordering is not None:
        rows.append(ordering)
    for T in sorted(fits):
        if T >= 3:
            rows.append(large_alpha_row(fits[T], curves))
    return rows

