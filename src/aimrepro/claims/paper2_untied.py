"""Paper 2's untied-attention claims as measured rows (``docs/paper2.md`` §5.3; [P §4, Fig. 3]).

Every number comes from the pipeline's own results: the SGD runs of Figures
3, S4 and S5, their population flows, the slaved d → ∞ flows of Figure S4 and
the fast-state table.  Where a measurement contradicts the paper or the
notes' expectation the row fails and its note gives both numbers.

Measures (all on one-token untied runs):

* the symmetric overlap s = Tr(S̊₁⁺S̊₂⁺)/Tr(S̊₂⁺²), S⁺ = M + Mᵀ
  (:attr:`~aimrepro.paper2.trajectory.Trajectory.symmetric_overlap`),
  and the escape time τ_esc, the first slow time with |s| ≥ threshold;
* the student mean m = √d t₁ on the fast time t = lr n (column ``t_fast``).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from aimrepro.claims.strong_recovery import untied_rate_rows
from aimrepro.claims.table import OVERSTATED, ClaimRow, claim_row
from aimrepro.claims.table import format_number
from aimrepro.claims.trends import fit_finite_size, fit_trend, judge_trend, mean_and_sem
from aimrepro.paper2.analysis import (escape_time, instability_time, mean_at, plateau_level,
                                      student_mean)
from aimrepro.paper2.losses import MSELoss, make_link
from aimrepro.paper2.population import Potential
from aimrepro.paper2.trajectory import Trajectory

__all__ = [
    "EQ42_REL_TOL",
    "PLATEAU_TOL",
    "collapse_errors",
    "eq42_rows",
    "escape_trend",
    "Collapse",
    "Dichotomy",
    "Plateau",
    "ReplicateTable",
    "UntiedInputs",
    "paper2_untied_claims",
    "plateau_rows",
    "symmetric_stall_rows",
    "truncation_sgd_rows",
]


_row = functools.partial(claim_row, "paper2")


#: |∂²Φ/∂m²(0)| from which the fast state is reached by the read time: the mean leaves
#: (or returns to) m = 0 at rate (t^A + t^B)|∂²Φ/∂m²(0)| ≈ 2 per unit of t.
FAST_CURVATURE_MIN = 1.0
#: |e∞| of the relative difference of the slaved flow's initial velocity from [P eq. 42].
EQ42_REL_TOL = 0.05
#: Fraction of the slow instability time d·τ_inst (on t, smallest d) the fast-collapse window may span.
FAST_WINDOW_FRACTION = 1.0 / 3.0
#: |s| at which Figure S4's overlap counts as escaped (escape times in the notes).
ESCAPE_OVERLAP = 0.3
#: |e∞| of the late overlap plateau of a link without teacher signal (a finite-d effect).
PLATEAU_TOL = 0.02








def _seed_mean(runs: Sequence[Trajectory], x_of, y_of, grid: np.ndarray) -> np.ndarray:
    """Mean over replicates of y(x), each interpolated onto ``grid`` (NaN outside a run)."""
    values = []
    for run in runs:
        x, y = x_of(run), y_of(run)
        values.append(np.where(grid <= x[-1] + 1e-12, np.interp(grid, x, y), np.nan))
    return np.mean(values, axis=0)


def collapse_errors(groups: Mapping[int, Sequence[Trajectory]], *, axis: str, quantity: str,
                    window: float, n_grid: int = 201) -> dict[int, float]:
    """Max |y_d(x) − y_dmax(x)| over x ∈ [0, window] for each d below the largest.

    Parameters
    ----------
    groups : {d: replicates}
    axis : {"fast", "slow"}
        x = t = τ d (fast) or x = τ (slow).
    quantity : {"mean", "overlap", "abs_overlap"}
        y = m (the student mean), the symmetric overlap s or |s|; seed means.  For an
        even link (h₂) S → −S is a symmetry and the branch a replicate escapes on
        (the sign of m*·m₂, set by its initial state) is random: the seed mean of s
        would mix the branches, that of |s| does not.
    window : float
        Right end of the x window.
    """
    x_of = (lambda run: run.t_ode * run.d) if axis == "fast" else (lambda run: run.t_ode)
    if quantity not in ("mean", "overlap", "abs_overlap"):
        raise ValueError(f"quantity must be 'mean', 'overlap' or 'abs_overlap', got {quantity!r}")
    y_of = {"mean": student_mean, "overlap": lambda run: run.symmetric_overlap,
            "abs_overlap": lambda run: np.abs(run.symmetric_overlap)}[quantity]
    grid = np.linspace(0.0, window, n_grid)
    largest = max(groups)
    reference = _seed_mean(groups[largest], x_of, y_of, grid)
    errors = {}
    for d, runs in sorted(groups.items()):
        if d == largest:
            continue
        diff = np.abs(_seed_mean(runs, x_of, y_of, grid) - reference)
        errors[d] = float(np.nanmax(diff)) if np.any(np.isfinite(diff)) else math.nan
    return errors


def escape_trend(times: Mapping[int, Sequence[float]], horizon: float) -> dict:
    """Least-squares slope of τ_esc against ln d over all replicates, with its standard error.

    Replicates that did not escape count as the horizon (a lower bound).
    """
    x, y = [], []
    for d, values in times.items():
        for value in values:
            x.append(math.log(d))
            y.append(horizon if not math.isfinite(value) else value)
    x, y = np.asarray(x), np.asarray(y)
    design = np.stack([np.ones_like(x), x], axis=1)
    coef, residual, *_ = np.linalg.lstsq(design, y, rcond=None)
    dof = max(x.size - 2, 1)
    sigma2 = float(np.sum((y - design @ coef) ** 2)) / dof
    cov = sigma2 * np.linalg.inv(design.T @ design)
    means = {d: float(np.mean([horizon if not math.isfinite(v) else v for v in values]))
             for d, values in sorted(times.items())}
    return {"slope": float(coef[1]), "stderr": math.sqrt(max(cov[1, 1], 0.0)), "means": means,
            "n_censored": int(sum(not math.isfinite(v) for vs in times.values() for v in vs))}


def _fields(row: ClaimRow) -> dict:
    """The fields of ``row`` that :func:`claim_row` takes (``paper`` is set by ``_row``)."""
    fields = dataclasses.asdict(row)
    del fields["paper"]
    return fields


def _per_d(values: Mapping[int, float], digits: int = 3) -> str:
    return ", ".join(f"d={d}: {format_number(v, digits)}" for d, v in sorted(values.items()))


# --- Figure S4: the two collapses -------------------------------------------------------------


def _collapse_row(row_id, section, claim, names, errors, wrong, d_max, window, wrong_window,
                  note):
    """One collapse row: deviations from the largest d on the right axis and on the wrong one."""
    quantity, axis, other = names
    dims = sorted(errors)
    passed = (all(errors[d] < wrong[d] for d in dims) and errors[dims[-1]] <= errors[dims[0]])
    return _row(
        id=row_id, section=section, claim=claim,
        expected=f"deviation from the largest d shrinks with d and is smaller than on {other}",
        measured=f"max |{quantity}_d − {quantity}_{d_max}| on {axis} ≤ {window:g}: "
                 f"{_per_d(errors)}",
        tolerance=f"decreasing in d; < the same on {other}", passed=passed,
        note=f"same curves against {other} over {other} ≤ {wrong_window:g}: {_per_d(wrong)}"
             + note)



def _instability_times(flows: Sequence[Trajectory], link: str, teacher_mean: float | None,
                      prefactor: float = 0.5) -> list[float]:
    """τ_inst of each population flow (m = 0 loses stability); empty without a teacher mean."""
    if teacher_mean is None:
        return []
    potential = Potential(MSELoss(make_link(link), make_link(link), prefactor), 1)
    return [instability_time(flow, potential, teacher_mean) for flow in flows]


def collapse_rows(runs: Mapping[int, Sequence[Trajectory]],
                  flows: Mapping[int, Sequence[Trajectory]], limits: Sequence[Trajectory], *,
                  link: str, fast_horizon: float, horizon: float,
                  teacher_mean: float | None = None) -> list[ClaimRow]:
    """U1 ([P Thm 3], ``docs/paper2.md`` §5.3): m collapses on t = lr n, the overlap on τ = lr n/d.

    [P Thm 3] holds while Φ stays strongly convex in m along the slow
    trajectory [P Ass. 5].  Below the threshold √(3v₁ − v₂) the slow flow
    shrinks v₁ until m = 0 loses stability at τ_inst (``teacher_mean``
    given: measured on each population flow), and the overlap escapes
    shortly after; from there the escape time varies between replicates
    with their initial state.  Hence (i) the fast collapse is compared on
    t ≤ min(fast_horizon, ⅓ d_min τ_inst), τ_inst the earliest of the
    smallest d's flows: by then the curvature of Φ at m = 0, which falls
    about linearly to 0 at τ_inst, has lost at most a third, so the fast
    phase still runs at nearly frozen moments (with fast_horizon = 2 at
    d = 50 the window reached τ = 0.04 against τ_inst ≈ 0.056, and the
    d = 50 means turned back up inside it);
    (ii) the SGD-against-flow row is judged on τ ≤ the earliest τ_inst of
    the largest d's flows, the regime of [P Ass. 5], with the gap over the
    whole window and the escape times reported beside.  Without
    ``teacher_mean`` both use the whole windows.
    """
    dims = sorted(runs)
    d_min, d_max = dims[0], dims[-1]
    inst_min = _instability_times(flows[d_min], link, teacher_mean)
    inst_max = _instability_times(flows[d_max], link, teacher_mean)
    # τ_inst = 0: m = 0 unstable from the start, the fast phase goes to a stable m* ≠ 0 and
    # [P Ass. 5] holds there; NaN: m = 0 stays stable.  Neither limits the windows.
    inst_min = [t for t in inst_min if math.isfinite(t) and t > 0]
    inst_max = [t for t in inst_max if math.isfinite(t) and t > 0]
    fast_window = (fast_horizon if not inst_min
                   else min(fast_horizon, FAST_WINDOW_FRACTION * d_min * min(inst_min)))
    regime = ("" if not inst_min else
              f"; window t ≤ min(t_fast = {fast_horizon:g}, {FAST_WINDOW_FRACTION:.2g} d τ_inst) "
              f"with d = {d_min} and τ_inst = {format_number(min(inst_min))}, the earliest "
              "instability time of its population flows (the fast phase at frozen moments, "
              "before the slow flow destabilises m = 0)")
    fast = collapse_errors(runs, axis="fast", quantity="mean", window=fast_window)
    fast_wrong = collapse_errors(runs, axis="slow", quantity="mean", window=fast_window / d_min)
    slow = collapse_errors(runs, axis="slow", quantity="abs_overlap", window=horizon)
    slow_wrong = collapse_errors(runs, axis="fast", quantity="abs_overlap",
                                 window=horizon * d_min)
    slow_flows = collapse_errors(flows, axis="slow", quantity="abs_overlap", window=horizon)
    m_range = float(np.ptp(np.concatenate([student_mean(r) for r in runs[d_max]])))
    escape_stats = {d: mean_and_sem([escape_time(run, ESCAPE_OVERLAP) for run in runs[d]])
                    for d in dims}
    escape_text = ", ".join(f"d={d}: {format_number(m)} ± {format_number(e, 2)}"
                            for d, (m, e, _) in escape_stats.items())
    slow_row = _collapse_row(
        f"p2-untied-slow-collapse-{link}", "§5.3 U1, [P eqs. 29–32, 38]",
        f"untied {link}: the symmetric overlap collapses for different d on the slow time "
        "τ = lr n/d", ("|s|", "τ", "t"), slow, slow_wrong, d_max, horizon, horizon * d_min,
        f"; seed means of |s| over {', '.join(str(len(runs[d])) for d in dims)} replicates "
        f"(the escape branch, the sign of s, differs between replicates); the population flows "
        f"from the same initial states: {_per_d(slow_flows)}; escape time (|s| ≥ "
        f"{ESCAPE_OVERLAP:g}) on τ, mean ± s.e.: {escape_text}")
    if not slow_row.passed and inst_max and horizon > min(inst_max):
        # the escape lies beyond τ_inst, where Φ is no longer strongly convex in m [P Ass. 5]:
        # outside Theorem 3, the escape time drifts with d and scatters with the initial state
        slow_row = _row(**{**_fields(slow_row), "verdict": OVERSTATED,
                           "note": slow_row.note + (
                               f". Overstated: the window reaches past τ_inst (earliest "
                               f"{format_number(min(inst_max))} at d = {d_max}), where m = 0 "
                               "loses stability and [P Ass. 5] fails; the escape follows τ_inst, "
                               "which scatters between replicates and whose mean drifts with d "
                               "(docs/paper2.md §5.3), so the curves collapse on τ only before "
                               "the escape")})
    fast_row = _collapse_row(f"p2-untied-fast-collapse-{link}", "§5.3 U1, [P eqs. 28, 36]",
                             f"untied {link}: the student mean m(n) collapses for different d on "
                             "the fast time t = lr n", ("m", "t", "τ"), fast, fast_wrong, d_max,
                             fast_window, fast_window / d_min,
                             f"; m moves by {format_number(m_range)} over the run (d={d_max}); "
                             "seed means" + regime)
    out = [fast_row,
           slow_row]
    # theory: the fast flow (eq. 28, d → ∞) for m; population and slaved flows for s
    deviation = {}
    for d in dims:
        worst = []
        for run, flow in zip(runs[d], flows[d]):
            early = run.t_ode * run.d <= fast_horizon + 1e-9
            m = student_mean(run)[early]
            theory = np.interp(run.t_ode[early], flow.t_ode, flow.extra["m_fast"])
            worst.append(float(np.max(np.abs(m - theory))) / abs(theory[-1] - m[0]))
        deviation[d] = max(worst)
    # non-increasing up to 0.01 (seed noise of a flat curve)
    decreasing = all(deviation[a] + 0.01 >= deviation[b] for a, b in zip(dims, dims[1:]))
    out.append(_row(
        id=f"p2-untied-fast-phase-theory-{link}", section="§5.3, [P eqs. 28, 36]",
        claim=f"untied {link}: on the fast time the mean follows dm/dt = −(t^A + t^B) ∂Φ/∂m at "
              "frozen moments, as d → ∞",
        expected="relative deviation decreasing in d",
        measured=f"max |m_SGD − m_eq.28|/|Δm| on t ≤ {fast_horizon:g}: {_per_d(deviation)}",
        tolerance="non-increasing in d (up to 0.01)", passed=decreasing,
        note="Δm: the change of m over the window by eq. 28; meanwhile the slow phase moves "
             "m*(q(τ)) by O(t/d), which the population flow of U, V follows (coloured lines "
             "of Figure S4)"))
    def gap(run, theory, end=math.inf):
        """max |s_run − s_theory| on the run's records up to ``end`` (the grids differ by step rounding)."""
        inside = run.t_ode <= min(theory.t_ode[-1], end) + 1e-12
        return float(np.max(np.abs(run.symmetric_overlap[inside] - np.interp(
            run.t_ode[inside], theory.t_ode, theory.symmetric_overlap))))

    end = min(inst_max) if inst_max else horizon
    pop = [gap(run, flow, end) for run, flow in zip(runs[d_max], flows[d_max])]
    pop_all = [gap(run, flow) for run, flow in zip(runs[d_max], flows[d_max])]
    limit = [gap(run, lim, end) for run, lim in zip(runs[d_max], limits)]
    escapes = [(escape_time(run, ESCAPE_OVERLAP), escape_time(flow, ESCAPE_OVERLAP))
               for run, flow in zip(runs[d_max], flows[d_max])]
    rel = [abs(a - b) / b for a, b in escapes if math.isfinite(a) and math.isfinite(b)]
    window = (f"τ ≤ {format_number(end)} (the earliest τ_inst of the population flows: "
              "m = 0 still stable, [P Ass. 5])" if inst_max else f"τ ≤ {horizon:g}")
    out.append(_row(
        id=f"p2-untied-slow-phase-theory-{link}", section="§2.3, §4.3, [P eqs. 29–32]",
        claim=f"untied {link}: SGD's overlap follows the population flow of U, V at its d, and "
              "the slaved (d → ∞) flow as d grows",
        expected="population flow within 0.05", measured=float(np.max(pop)), tolerance=0.05,
        passed=float(np.max(pop)) <= 0.05,
        note=f"max |s_SGD − s_flow| over {window} at d = {d_max}, {len(pop)} replicates; over "
             f"τ ≤ {horizon:g}, across the escape: {format_number(float(np.max(pop_all)))} "
             f"(the escape follows τ_inst, which SGD's noise shifts: |τ_esc,SGD − τ_esc,flow|/"
             f"τ_esc,flow at |s| = {ESCAPE_OVERLAP:g}: median "
             f"{format_number(float(np.median(rel)) if rel else math.nan)}, max "
             f"{format_number(float(np.max(rel)) if rel else math.nan)}); slaved flow from the "
             f"same initial state over the same window: max |s_SGD − s_slaved| = "
             f"{format_number(float(np.max(limit)))} (its finite-d corrections are O(d^-1/2) "
             "with a large prefactor, see aimrepro.paper2.untied)"))
    return out


# --- Figure S5: the dichotomy -------------------------------------------------------------------


def dichotomy_rows(runs: Mapping[tuple[float, int], Sequence[Trajectory]],
                   flows: Mapping[tuple[float, int], Sequence[Trajectory]],
                   fast_states: Mapping[str, np.ndarray], *, link: str, threshold: float,
                   horizon: float, fast_horizon: float) -> list[ClaimRow]:
    """U2 ([P Cor. 4, eqs. 42–49], ``docs/paper2.md`` §5.3): escape time against d and the teacher mean."""
    means = sorted({m2 for m2, _ in runs})
    dims = sorted({d for _, d in runs})
    esc = {key: [escape_time(run, threshold) for run in group] for key, group in runs.items()}
    flow_esc = {key: [escape_time(run, threshold) for run in group]
                for key, group in flows.items()}
    trends = {m2: escape_trend({d: esc[(m2, d)] for d in dims}, horizon) for m2 in means}
    flow_trends = {m2: escape_trend({d: flow_esc[(m2, d)] for d in dims}, horizon)
                   for m2 in means}
    out = []

    def trend_text(trend):
        return (f"dτ_esc/d ln d = {trend['slope']:+.3f} ± {trend['stderr']:.3f}; mean τ_esc "
                + _per_d(trend["means"]))

    symmetric = means[0]
    trend = trends[symmetric]
    out.append(_row(
        id=f"p2-untied-escape-grows-symmetric-{link}", section="§5.3 U2, [P Cor. 4(ii)]",
        claim=f"untied {link}, teacher mean {symmetric:g} (symmetric fast state): the escape "
              "time on τ grows with d (no recovery on the d² log d scale)",
        expected="slope in ln d > 2 s.e.", measured=trend_text(trend),
        tolerance="slope > 2 s.e.", passed=trend["slope"] > 2 * trend["stderr"],
        note=f"{len(dims)} d × {len(runs[(symmetric, dims[0])])} seeds, |s| ≥ {threshold}; "
             f"not escaped by τ = {horizon:g}: {trend['n_censored']} (counted as the horizon); "
             f"population flows from the same initial states: {trend_text(flow_trends[symmetric])}"))
    broken = means[-1]
    trend = trends[broken]
    out.append(_row(
        id=f"p2-untied-escape-flat-broken-{link}", section="§5.3 U2, [P Cor. 4(i), eq. 44]",
        claim=f"untied {link}, teacher mean {broken:g} (the fast state breaks the symmetry): the "
              "escape time on τ does not grow with d",
        expected="slope in ln d ≤ 2 s.e.", measured=trend_text(trend),
        tolerance="slope ≤ 2 s.e.", passed=trend["slope"] <= 2 * trend["stderr"],
        note=f"escape {trends[symmetric]['means'][dims[-1]] / trend['means'][dims[-1]]:.0f}× "
             f"earlier than at teacher mean {symmetric:g} (d = {dims[-1]}); population flows: "
             f"{trend_text(flow_trends[broken])}"))
    # the fast state selected at t = fast_horizon, against m*(q(0))
    rows_m2 = np.asarray(fast_states["m2"])
    curvature_zero = {m2: float(np.interp(m2, rows_m2, fast_states["curvature_zero"]))
                      for m2 in means}
    clear = [m2 for m2 in means if abs(curvature_zero[m2]) >= FAST_CURVATURE_MIN]
    errors, details = [], []
    for m2 in clear:
        predicted = float(np.interp(m2, rows_m2, fast_states["m_star_plus"]))
        measured = [abs(mean_at(run, fast_horizon)) for d in dims for run in runs[(m2, d)]]
        measured = [x for x in measured if math.isfinite(x)]
        if not measured:
            continue
        errors.append(abs(float(np.mean(measured)) - predicted))
        details.append(f"m2={m2:g}: |m| {np.mean(measured):.2f} vs {predicted:.2f}")
    out.append(_row(
        id=f"p2-untied-fast-state-{link}", section="§5.3, [P eqs. 28–29]",
        claim=f"untied {link}: the fast phase selects the mean m*(q(0)): 0 where m = 0 is stable "
              "at the initial moments, ±√(m2² + v2 − 3v1) where it is not",
        expected=0.0, measured=float(max(errors)) if errors else math.nan, tolerance=0.25,
        passed=bool(errors) and max(errors) <= 0.25,
        note=f"|m| at t = {fast_horizon:g} averaged over d and seeds, against the fast-state "
             f"table: {'; '.join(details)}; teacher means with |∂²Φ/∂m²(0)| < "
             f"{FAST_CURVATURE_MIN:g} left out (near the marginal m2 the mean leaves m = 0 too "
             "slowly to be read on the fast time): "
             + (", ".join(f"{m2:g}" for m2 in means if m2 not in clear) or "none")))
    # sign of the recovered overlap, predicted from the initial state: where m = 0 is unstable
    # at q(0) the fast flow takes m(0) to the branch of its own sign
    unstable = [m2 for m2 in clear if curvature_zero[m2] < 0]
    agree, total, skipped = 0, 0, 0
    for (m2, d), group in runs.items():
        if m2 not in unstable:
            continue
        for run in group:
            m0 = float(student_mean(run)[0])
            if not math.isfinite(escape_time(run, threshold)) or m0 == 0.0:
                skipped += 1
                continue
            total += 1
            agree += math.copysign(1, run.symmetric_overlap[-1]) == math.copysign(1, m0 * m2)
    out.append(_row(
        id=f"p2-untied-sign-{link}", section="§5.3, [P eqs. 42, 48]",
        claim=f"untied {link}: the recovered overlap has the sign of m*·m2, m* the fast state "
              "selected from m(0)",
        expected=f"{total}/{total}", measured=f"{agree}/{total}", tolerance="all",
        passed=total > 0 and agree == total,
        note=f"teacher means where m = 0 is unstable at q(0) (∂²Φ/∂m²(0) ≤ −"
             f"{FAST_CURVATURE_MIN:g}): " + (", ".join(f"{m2:g}" for m2 in unstable) or "none")
             + "; there sign(m*) = sign(m(0)), the sign of the O(d^-1/2) initial mean; "
               f"{skipped} run(s) without escape left out"))
    # the per-replicate theory
    pairs = [(s, f) for key in runs for s, f in zip(esc[key], flow_esc.get(key, []))
             if math.isfinite(s) and math.isfinite(f)]
    rel = np.array([abs(s - f) / f for s, f in pairs])
    out.append(_row(
        id=f"p2-untied-flow-escape-{link}", section="§2.3, §4.3",
        claim=f"untied {link}: the population flow of U, V from a replicate's initial state "
              "predicts that replicate's escape time",
        expected=0.0, measured=float(np.median(rel)) if rel.size else math.nan,
        tolerance="median relative difference ≤ 0.25",
        passed=rel.size > 0 and float(np.median(rel)) <= 0.25,
        note=f"{rel.size} replicates of Figure S5 (both escaped); 90th percentile "
             f"{format_number(float(np.quantile(rel, 0.9)) if rel.size else math.nan)}"))
    return out


def _regression(x: Sequence[float], y: Sequence[float]) -> tuple[float, float]:
    """Least-squares slope of y on x and the correlation coefficient (NaN with < 3 points)."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    keep = np.isfinite(x) & np.isfinite(y)
    if keep.sum() < 3 or np.ptp(x[keep]) == 0:
        return math.nan, math.nan
    return (float(np.polyfit(x[keep], y[keep], 1)[0]),
            float(np.corrcoef(x[keep], y[keep])[0, 1]))


def symmetric_stall_rows(flows: Mapping[tuple[float, int], Sequence[Trajectory]], *,
                         link: str, threshold: float, horizon: float,
                         prefactor: float = 0.5) -> list[ClaimRow]:
    """[P Cor. 4] on Figure S5's deterministic population flows: only m₂ = 0 stalls.

    Corollary 4 predicts no threshold in m₂.  Along the uninformative slow flow
    the student variance shrinks until the symmetric fast state m = 0 loses
    stability (the instability time τ_inst,
    :func:`aimrepro.paper2.analysis.instability_time`); with m₂ ≠ 0 the
    teacher factor E σ*'(Z₂) ≠ 0 and a tilt ∝ q₁₂m₂ then carry the overlap
    out, with m₂ = 0 neither (``docs/paper2.md`` §5.3).  Measured per m₂ on
    the population flows from each replicate's initial state.  A stall is an
    escape set by the initial overlap: τ_esc ≈ ln(1/|s(0)|)/rate, which grows
    like ln d because |s(0)| = O(d^-1/2).  The d-slope of τ_esc is the paper's
    statement but needs a wide range of d and many seeds; the sensitivity of
    τ_esc to ln |s(0)| across all replicates and d is the same mechanism with
    the replicates as the sample.  Passes when m₂ = 0 has dτ_esc/d ln|s(0)| < 0
    with correlation r ≤ −0.9, and every m₂ ≠ 0 a sensitivity at most half of
    m₂ = 0's and τ_esc at the largest d at most half m₂ = 0's.  The d-slopes
    (and τ_inst) are reported beside.
    """
    means = sorted({m2 for m2, _ in flows})
    dims = sorted({d for _, d in flows})
    if 0.0 not in means or len(means) < 2 or len(dims) < 2:
        return []
    potential = Potential(MSELoss(make_link(link), make_link(link), prefactor), 1)
    esc = {key: [escape_time(run, threshold) for run in group] for key, group in flows.items()}
    trends = {m2: escape_trend({d: esc[(m2, d)] for d in dims}, horizon) for m2 in means}
    symmetric = trends[0.0]
    d_max = dims[-1]
    details, sensitivity = [], {}
    for m2 in means:
        trend = trends[m2]
        inst = [instability_time(run, potential, m2) for run in flows[(m2, d_max)]]
        initial = [abs(float(run.symmetric_overlap[0])) for d in dims for run in flows[(m2, d)]]
        times = [t for d in dims for t in esc[(m2, d)]]
        slope, r = _regression(np.log(np.maximum(initial, 1e-300)), times)
        sensitivity[m2] = (slope, r)
        text = (f"m2 = {m2:g}: dτ_esc/d ln d = {trend['slope']:+.3f} ± {trend['stderr']:.3f}, "
                f"τ_esc(d = {d_max}) = {format_number(trend['means'][d_max])}, τ_inst = "
                f"{format_number(float(np.nanmean(inst)) if np.any(np.isfinite(inst)) else math.nan)}"
                f", dτ_esc/d ln|s(0)| = {format_number(slope)} (r = {format_number(r, 2)})")
        details.append(text)
    zero_slope, zero_r = sensitivity[0.0]
    stalls_only_at_zero = math.isfinite(zero_slope) and zero_slope < 0 and zero_r <= -0.9
    for m2 in means:
        if m2 == 0.0:
            continue
        slope = sensitivity[m2][0]
        stalls_only_at_zero &= (math.isfinite(slope) and abs(slope) <= 0.5 * abs(zero_slope)
                                and trends[m2]["means"][d_max]
                                <= 0.5 * symmetric["means"][d_max])
    return [_row(
        id=f"p2-untied-only-symmetric-stalls-{link}", section="§5.3 U2, [P Cor. 4], §6 S5",
        claim=f"untied {link}: only the teacher mean m2 = 0 stalls on the slow scale; every "
              "m2 ≠ 0 escapes at τ = O(1) (no threshold in m2)",
        expected="τ_esc set by the initial overlap at m2 = 0 only",
        measured=f"dτ_esc/d ln|s(0)| at m2 = 0: {format_number(zero_slope)} (r = "
                 f"{format_number(zero_r, 2)}); largest |·| at m2 ≠ 0: "
                 f"{format_number(max(abs(sensitivity[m2][0]) for m2 in means if m2))}",
        tolerance="m2 = 0: slope < 0, r ≤ −0.9; m2 ≠ 0: |slope| ≤ ½ m2 = 0's and "
                  "τ_esc(d_max) ≤ ½ τ_esc(0, d_max)",
        passed=bool(stalls_only_at_zero),
        note=f"population flows of U, V from each replicate's initial state (Figure S5, "
             f"d = {', '.join(map(str, dims))}, |s| ≥ {threshold}; not escaped = horizon "
             f"{horizon:g}): " + "; ".join(details) + ". The d-slope at m2 = 0 over these d "
             f"and seeds ({symmetric['slope']:+.3f} ± {symmetric['stderr']:.3f}) does not resolve "
             "the ln d growth (the SGD row p2-untied-escape-grows-symmetric measures it). The "
             "expectation of our earlier notes, a "
             "threshold √(3v1 − v2) below which runs stall, is not the paper's and does not hold: "
             "m = 0 loses stability along the flow (τ_inst) for every m2, and for m2 ≠ 0 the "
             "overlap then escapes")]


def eq42_rows(velocity: Mapping[tuple[str, float, int], Mapping[str, np.ndarray]], *,
              tolerance: float = EQ42_REL_TOL) -> list[ClaimRow]:
    """[P eq. 42] against the slaved slow flow's initial velocity at finite d, as a d-trend.

    ``velocity`` maps (link, m₂, d) to a table of
    :func:`aimrepro.paper2.theory_tables.untied_velocity_table`.  Per
    replicate the relative difference (slaved − eq. 42)/eq. 42 of the
    velocity of q⁽¹⁾₁₂ + q⁽²⁾₁₂; its mean over replicates at each d, with the
    error of the mean, fitted by e∞ + b/d: e∞ within ``tolerance`` and the
    mean |difference| shrinking with d.
    """
    out = []
    for link, m2 in dict.fromkeys((l, m) for l, m, _ in velocity):
        tables = {d: t for (l, m, d), t in velocity.items() if (l, m) == (link, m2)}
        if len(tables) < 2:
            continue
        eq42 = {d: np.asarray(t["eq42"], float) for d, t in tables.items()}
        if any(np.any(np.abs(v) < 1e-12) for v in eq42.values()):
            continue  # no predicted velocity: the relative difference is undefined
        rel = {d: (np.asarray(t["slaved"], float) - eq42[d]) / eq42[d] for d, t in tables.items()}
        dims = sorted(rel)
        stats = [mean_and_sem(rel[d]) for d in dims]
        trend = fit_trend(dims, [m for m, _, _ in stats], [e for _, e, _ in stats],
                          [n for _, _, n in stats])
        stats_abs = [mean_and_sem(np.abs(rel[d])) for d in dims]
        spread = fit_finite_size(dims, [m for m, _, _ in stats_abs],
                                 [e for _, e, _ in stats_abs], [n for _, _, n in stats_abs])
        m_star = np.concatenate([np.abs(np.asarray(t["m_star"], float)) for t in tables.values()])
        out.append(_row(
            id=f"p2-untied-eq42-{link}-m2{m2:g}", section="§5.3 U2, [P eq. 42]",
            claim=f"untied {link}, teacher mean {m2:g}: after the fast phase the overlaps leave "
                  "the uninformative state with dq12/dτ = −2 D1 Q2 g* as d → ∞",
            expected=0.0, measured=trend.limit,
            tolerance=f"|e∞| ≤ {tolerance:g} + 2 s.e., mean |difference| shrinking with d",
            **judge_trend(
                trend, tolerance, trend.within(tolerance) and spread.shrinks(),
                f"relative difference of the slaved slow flow's velocity (at the replicates' "
                f"U(0), V(0), mean slaved to m*) from eq. 42, per d: {trend.per_d_text()}; "
                f"{trend.fit_text()}; mean |difference|: {spread.per_d_text()}; |m*| = "
                f"{format_number(float(m_star.mean()))}. The difference is the mixed "
                "student–teacher moments that freeness (Assumption 6) removes as d → ∞")))
    return out


def plateau_rows(runs: Mapping[int, Sequence[Trajectory]], *, link: str, start: float,
                 threshold: float, tolerance: float = PLATEAU_TOL) -> list[ClaimRow]:
    """Figure 3: without a teacher signal the overlap of ``link`` levels off at a level that falls with d.

    ``runs`` maps d to SGD replicates of Figure 3's problem for ``link``.  The
    plateau is the mean |s| over τ ≥ ``start`` (:func:`aimrepro.paper2.analysis.plateau_level`);
    per d its mean over replicates and error of the mean, fitted by e∞ + b/d.
    The row passes when no run escapes (|s| < threshold), e∞ is within
    ``tolerance`` and the plateau shrinks with d: a finite-d effect, so the
    run stays uninformative on this scale as d → ∞ ([P Cor. 4(ii)]: the
    teacher factor E h'(Z₂) vanishes).
    """
    dims = sorted(runs)
    if len(dims) < 2:
        return []
    levels = {d: np.array([plateau_level(run, start) for run in runs[d]]) for d in dims}
    stats = [mean_and_sem(levels[d]) for d in dims]
    if any(not (math.isfinite(e) and e > 0) for _, e, _ in stats):
        return []
    trend = fit_trend(dims, [m for m, _, _ in stats], [e for _, e, _ in stats],
                      [n for _, _, n in stats])
    escaped = sum(math.isfinite(escape_time(run, threshold)) for d in dims for run in runs[d])
    return [_row(
        id=f"p2-untied-fig3-plateau-{link}", section="§6 Fig. 3, [P Cor. 4(ii)]",
        claim=f"untied {link}, teacher mean 0: SGD does not escape; the small overlap it levels "
              "off at is a finite-d effect that vanishes as d grows",
        expected=0.0, measured=trend.limit,
        tolerance=f"no escape (|s| < {threshold}); |e∞| ≤ {tolerance:g} + 2 s.e.; shrinking",
        **judge_trend(
            trend, tolerance, escaped == 0 and trend.within(tolerance) and trend.shrinks(),
            f"plateau = mean |s| over τ ≥ {start:g}, s normalised by the teacher (Tr(S1+ S2+)/"
            f"Tr(S2+²), the text's overlap up to that constant); per d: {trend.per_d_text()}; "
            f"{trend.fit_text()}; runs escaping: {escaped}. The population flow (Gaussian "
            "equivalent) shows no plateau: it comes from SGD at finite d"))]


# --- Figure 3 -------------------------------------------------------------------------------------


def figure3_rows(runs: Mapping[str, Sequence[Trajectory]], *, threshold: float) -> list[ClaimRow]:
    """[P Fig. 3]: h₁ develops overlap rapidly, h₂ and h₃ increasingly slowly."""
    summary = {}
    for link, group in runs.items():
        times = [escape_time(run, threshold) for run in group]
        horizon = max(run.t_ode[-1] for run in group)
        capped = [t if math.isfinite(t) else horizon for t in times]
        summary[link] = (float(np.mean(capped)), sum(math.isfinite(t) for t in times), len(times),
                         horizon, sum(run.blew_up for run in group))
    order = [link for link in ("h1", "h2", "h3", "linear") if link in summary]
    values = [summary[link][0] for link in order]
    ordered = all(a < b for a, b in zip(values, values[1:]))
    measured = "; ".join(f"{link}: τ_esc {summary[link][0]:.3f} ({summary[link][1]}/"
                         f"{summary[link][2]} escaped)" for link in order)
    blowups = sum(s[4] for s in summary.values())
    return [_row(
        id="p2-untied-fig3-order", section="§6 Fig. 3",
        claim="untied, one token, teacher mean 0: h1 develops overlap rapidly, h2 and h3 escape "
              "increasingly slowly",
        expected="τ_esc(h1) < τ_esc(h2) < τ_esc(h3)", measured=measured,
        tolerance=f"|s| ≥ {threshold}; not escaped = horizon", passed=ordered,
        note=f"horizon τ = {max(s[3] for s in summary.values()):g}"
             + (f"; {blowups} run(s) blew up" if blowups else ""))]


#: The truncation error must exceed SGD's distance from the slow flow by this factor for an order
#: to count as above the finite-d floor (below it the SGD-vs-truncation distance is the floor's).
TRUNCATION_FLOOR_FACTOR = 2.0


def _window_distance(tau: np.ndarray, s: np.ndarray, run: Trajectory) -> float:
    """max over the table's τ grid of |s − s_SGD| (SGD interpolated onto it; inf past its end)."""
    t, s_sgd = run.t_ode, run.symmetric_overlap
    if run.blew_up or t[-1] < tau[-1] - 1e-9 or not np.all(np.isfinite(s)):
        return math.inf
    return float(np.max(np.abs(s - np.interp(tau, t, s_sgd))))


def _geometric_fit(orders: Sequence[int], values: np.ndarray) -> tuple[float, float]:
    """κ and R² of ln v = a − κM."""
    x, y = np.asarray(orders, float), np.log(np.asarray(values, float))
    coef = np.polyfit(x, y, 1)
    residual = y - np.polyval(coef, x)
    total = float(np.sum((y - y.mean()) ** 2))
    return float(-coef[0]), (1.0 - float(np.sum(residual ** 2)) / total if total > 0 else math.nan)


def truncation_rows(tables: Sequence[tuple[Mapping, Mapping[str, np.ndarray]]]) -> list[ClaimRow]:
    """[P Cor. 8]: the untied truncated hierarchy converges to the slow flow as M grows.

    ``tables`` pairs a case (``link``, ``teacher_mean``, ``d``, ``horizon``)
    with its table of :func:`aimrepro.paper2.untied.truncation_table.truncation_error_table`.
    Per replicate and order the error is max over the τ window of |s_M − s_flow|
    (the slaved slow flow from the same U(0), V(0); a truncation that blew up
    counts as infinitely far).  The row passes when the mean error over
    replicates falls strictly with M and a fit ln err = a − κM has κ > 0 with
    R² ≥ 0.8 (geometric convergence inside the radius).
    """
    out = []
    for case, table in tables:
        seed = np.asarray(table["seed"])
        order = np.asarray(table["order"])
        s = np.asarray(table["s"], float)
        orders = sorted(int(m) for m in set(order.tolist()) if m > 0)
        seeds = list(dict.fromkeys(seed.tolist()))
        if len(orders) < 2:
            continue
        err = np.empty((len(orders), len(seeds)))
        for j, sd in enumerate(seeds):
            flow = s[(seed == sd) & (order == 0)]
            for i, m in enumerate(orders):
                diff = np.abs(s[(seed == sd) & (order == m)] - flow)
                err[i, j] = math.inf if not np.all(np.isfinite(diff)) else float(diff.max())
        mean = err.mean(axis=1)
        finite = np.isfinite(mean) & (mean > 0)
        kappa, r2 = math.nan, math.nan
        if finite.sum() >= 2:
            kappa, r2 = _geometric_fit(np.asarray(orders)[finite], mean[finite])
        falls = bool(np.all(finite) and np.all(np.diff(mean) < 0))
        out.append(_row(
            id=f"p2-untied-truncation-{case['link']}-m2{case['teacher_mean']:g}",
            section="§5.3, [P App. F.2, Cor. 8]",
            claim=f"untied {case['link']}, teacher mean {case['teacher_mean']:g}: the truncated "
                  "slow hierarchy of order M converges to the slow flow as M grows",
            expected="error falling geometrically in M",
            measured=f"κ = {format_number(kappa)} per order (R² = {format_number(r2, 3)})",
            tolerance="mean error strictly decreasing in M; κ > 0, R² ≥ 0.8",
            passed=falls and math.isfinite(kappa) and kappa > 0 and r2 >= 0.8,
            note=f"max over τ ≤ {case['horizon']:g} of |s_M − s_flow|, the slaved slow flow from "
                 f"the same U(0), V(0), d = {case['d']}, mean of {len(seeds)} replicates: "
                 + ", ".join(f"M={m}: {format_number(e, 2)}" for m, e in zip(orders, mean))
                 + ". The window lies inside the truncations' radius of convergence; beyond it "
                   "(as in the tied linear case) larger M stops helping"))
    return out


def truncation_sgd_rows(tables: Sequence[tuple[Mapping, Mapping[str, np.ndarray]]],
                        sgd: Sequence[Mapping[int, Trajectory]]) -> list[ClaimRow]:
    """[P Thm 3, eq. 38 with Cor. 8, eq. 908]: the order-M truncation describes SGD on the window.

    ``tables`` as for :func:`truncation_rows`; ``sgd[i]`` maps each replicate
    seed of ``tables[i]`` to its SGD run (the same U(0), V(0), teacher), recorded
    on the table's slow-time grid.  Per replicate, with sup-norms over the window,

        D_M = |s_SGD − s_M|,  F = |s_SGD − s_flow|,  E_M = |s_M − s_flow|.

    The paper proves F → 0 as d → ∞ (Theorem 3) and E_M ≤ C (R/s₋)^{M+1}
    (Corollary 8); it does not compare a truncation with SGD directly.  What
    the two give together is D_M ≤ F + E_M: SGD sees the truncation's own
    geometric error on top of SGD's finite-d distance from the flow.  That
    inequality is the triangle inequality and cannot fail, so the row tests
    what it implies and can fail: over the orders whose mean E_M exceeds
    :data:`TRUNCATION_FLOOR_FACTOR` times the mean floor F (at least two), the
    mean D_M falls strictly in M and geometrically (fit ln D_M = a − κM, κ > 0,
    R² ≥ 0.8).  The floor, the ratios D_M/E_M and the slow flow's κ go in the note.
    """
    out = []
    for (case, table), runs in zip(tables, sgd):
        if not runs:
            continue
        seed = np.asarray(table["seed"])
        order = np.asarray(table["order"])
        tau = np.asarray(table["tau"], float)
        s = np.asarray(table["s"], float)
        orders = sorted(int(m) for m in set(order.tolist()) if m > 0)
        seeds = [sd for sd in dict.fromkeys(seed.tolist()) if sd in runs]
        if len(orders) < 2 or not seeds:
            continue
        D = np.empty((len(orders), len(seeds)))
        E = np.empty_like(D)
        F = np.empty(len(seeds))
        for j, sd in enumerate(seeds):
            mine = seed == sd
            grid = tau[mine & (order == 0)]
            flow = s[mine & (order == 0)]
            F[j] = _window_distance(grid, flow, runs[sd])
            for i, m in enumerate(orders):
                s_m = s[mine & (order == m)]
                D[i, j] = _window_distance(grid, s_m, runs[sd])
                diff = np.abs(s_m - flow)
                E[i, j] = float(diff.max()) if np.all(np.isfinite(diff)) else math.inf
        d_mean, e_mean, floor = D.mean(axis=1), E.mean(axis=1), float(F.mean())
        floor_sem = float(F.std(ddof=1) / math.sqrt(len(seeds))) if len(seeds) > 1 else math.nan
        above = [i for i in range(len(orders))
                 if math.isfinite(e_mean[i]) and e_mean[i] > TRUNCATION_FLOOR_FACTOR * floor]
        kappa, r2, falls = math.nan, math.nan, False
        if len(above) >= 2 and np.all(np.isfinite(d_mean[above])) and np.all(d_mean[above] > 0):
            kappa, r2 = _geometric_fit([orders[i] for i in above], d_mean[above])
            falls = bool(np.all(np.diff(d_mean[above]) < 0))
        k_flow = (_geometric_fit([orders[i] for i in above], e_mean[above])[0]
                  if len(above) >= 2 else math.nan)
        lr = float(case["sgd_runs"][0]["lr"]) if case.get("sgd_runs") else math.nan
        out.append(_row(
            id=f"p2-untied-truncation-sgd-{case['link']}-m2{case['teacher_mean']:g}",
            section="§5.3, [P Thm 3, App. F.2, Cor. 8]",
            claim=f"untied {case['link']}, teacher mean {case['teacher_mean']:g}: the order-M "
                  "truncation describes SGD on the window, |s_SGD − s_M| ≤ |s_SGD − s_flow| + "
                  "|s_M − s_flow| with the last term falling geometrically in M",
            expected="SGD-vs-truncation distance falling geometrically in M down to SGD's "
                     "finite-d distance from the slow flow",
            measured=f"κ_SGD = {format_number(kappa)} per order (R² = {format_number(r2, 3)}) "
                     f"over M = {', '.join(str(orders[i]) for i in above) or 'none'}; floor "
                     f"|s_SGD − s_flow| = {format_number(floor, 2)} ± {format_number(floor_sem, 1)}",
            tolerance=f"≥ 2 orders with truncation error > {TRUNCATION_FLOOR_FACTOR:g}× the floor; "
                      "there the mean distance strictly decreasing in M, κ > 0, R² ≥ 0.8",
            passed=falls and math.isfinite(kappa) and kappa > 0 and r2 >= 0.8,
            note=f"max over τ ≤ {case['horizon']:g}, SGD and the truncations from the same U(0), "
                 f"V(0), d = {case['d']}, mean of {len(seeds)} replicates"
                 + (f", SGD learning rate {lr:g}" if math.isfinite(lr) else "")
                 + ": " + ", ".join(f"M={m}: |s_SGD − s_M| = {format_number(dm, 2)} "
                                    f"(truncation error {format_number(em, 2)})"
                                    for m, dm, em in zip(orders, d_mean, e_mean))
                 + f"; the slow flow's own κ over the same orders {format_number(k_flow)}. "
                   "The bound itself is the triangle inequality (Thm 3 and Cor. 8 say nothing "
                   "more about SGD against a truncation); what can fail is that SGD, which sits "
                   "within the floor of the flow at this d, sees the truncation's geometric error"))
    return out


@dataclass(frozen=True)
class Collapse:
    """Figure S4's replicates: SGD runs, population flows by d, the slaved limit flows of the largest d."""

    runs: Mapping[int, Sequence[Trajectory]]
    flows: Mapping[int, Sequence[Trajectory]]
    limits: Sequence[Trajectory]
    link: str
    fast_horizon: float
    horizon: float
    teacher_mean: float | None = None


@dataclass(frozen=True)
class Dichotomy:
    """Figure S5's replicates by (teacher mean m₂, d): SGD runs, flows, and the fast-state table."""

    runs: Mapping[tuple[float, int], Sequence[Trajectory]]
    flows: Mapping[tuple[float, int], Sequence[Trajectory]]
    fast_states: Mapping[str, np.ndarray]
    link: str
    horizon: float
    fast_horizon: float


@dataclass(frozen=True)
class Plateau:
    """Figure 3's runs of a link without teacher signal, by d: its overlap level from τ = ``start``."""

    runs: Mapping[int, Sequence[Trajectory]]
    link: str
    start: float


@dataclass(frozen=True)
class ReplicateTable:
    """A table over replicates (truncations [P Cor. 8], late decay [P Cor. 9]) and SGD from them.

    ``case`` holds ``link``, ``teacher_mean``, ``d`` (and the decay's ``window_start``);
    ``sgd`` maps replicate seed to SGD run (truncations) or step size to {seed: SGD run} (decay).
    """

    case: Mapping
    table: Mapping[str, np.ndarray]
    sgd: Mapping = field(default_factory=dict)


@dataclass(frozen=True)
class UntiedInputs:
    """What the ``paper2_untied`` topic judges, as its rule reads it.

    ``velocity`` maps (link, m₂, d) to the [P eq. 42] tables.
    """

    figure3: Mapping[str, Sequence[Trajectory]]
    collapse: Collapse
    dichotomy: Dichotomy
    threshold: float
    velocity: Mapping[tuple[str, float, int], Mapping[str, np.ndarray]] = field(default_factory=dict)
    plateau: Plateau | None = None
    truncations: Sequence[ReplicateTable] = ()
    decay: Sequence[ReplicateTable] = ()


def paper2_untied_claims(inputs: UntiedInputs) -> list[ClaimRow]:
    """All rows of the ``paper2_untied`` topic."""
    s4, s5, i = inputs.collapse, inputs.dichotomy, inputs
    truncations = [(t.case, t.table) for t in i.truncations]
    rows = (collapse_rows(s4.runs, s4.flows, s4.limits, link=s4.link, fast_horizon=s4.fast_horizon,
                          horizon=s4.horizon, teacher_mean=s4.teacher_mean)
            + dichotomy_rows(s5.runs, s5.flows, s5.fast_states, link=s5.link, threshold=i.threshold,
                             horizon=s5.horizon, fast_horizon=s5.fast_horizon)
            + symmetric_stall_rows(s5.flows, link=s5.link, threshold=i.threshold, horizon=s5.horizon)
            + eq42_rows(i.velocity)
            + truncation_rows(truncations)
            + truncation_sgd_rows(truncations, [t.sgd for t in i.truncations])
            + untied_rate_rows([(t.case, t.table) for t in i.decay], [t.sgd for t in i.decay])
            + figure3_rows(i.figure3, threshold=i.threshold))
    if i.plateau is not None:
        rows += plateau_rows(i.plateau.runs, link=i.plateau.link, start=i.plateau.start,
                             threshold=i.threshold)
    return rows
