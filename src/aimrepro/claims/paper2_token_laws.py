"""Beyond the papers: paper 2's weak recovery with tokens that are not Gaussian (``docs/paper2.md`` §10).

Figure S3's problem (one token, h₂, tied W and direct S, per-sample rate
η/(d ln d)) with the token law changed; per replicate the SGD run and two
flows from its initial state: the Gaussian population flow (the paper's
prediction) and the flow of the law's population loss (ours: Φ at
q + (κ₄/2) D).  Rows, per parametrisation and law:

``p2-tokens-<param>-<link>-<law>-gaussian-flow``
    SGD on the law's tokens crosses the weak-recovery threshold when the
    Gaussian flow does: the gap T_wr(SGD) − T_wr(Gaussian flow) as a finite-size
    trend (as the Figure S3 rows ``p2-s3-sgd-follows-flow-*``: tolerance 10 % of
    the flow's T_wr at the largest d).  A run that does not cross by its end
    counts at its end, a lower bound of its T_wr.  A gap beyond the tolerance
    by more than two errors of the mean at every d, and not shrinking from the
    smallest to the largest d, is a deviation of order one and fails the row
    without a fit (the only judgement possible with lower bounds).  When SGD
    blows up before crossing on half the runs of the largest d or more, the row
    fails (SGD follows no flow); rarer blow-ups are left out and counted, and a
    smaller d where half the runs or more blew up leaves the trend (its
    survivors are a selected sample: the per-sample rate, largest at the
    smallest d, is outside the law's stable range there).
``p2-tokens-<param>-<link>-<law>-law-flow``
    the same against the law's flow; informational when SGD diverges (the
    law's flow needs E x⁴ < ∞, SGD's loss E x⁸).

Where the flow compared is trapped at the uninformative start (h₂: both
flows of direct S, and the law's flow of tied W with κ₄ = −2), these two rows
are informational by design: the flow's escape time at finite d grows like
ln d, beyond the O(1) times on which a flow describes SGD ([P Thms 2, 4] are
fixed-horizon statements), and the crossing is set at the same order by the
initial overlap and by SGD's noise, which the flow does not carry.  The gap is
measured and reported (its trend too); the claim is the next row.

``p2-tokens-<param>-<link>-<law>-trapped``
    where the law's flow is trapped, the d → ∞ statement that holds is the one
    of [P Cor. 7]: no weak recovery on the time scale of the flow, i.e. SGD's
    T_wr grows with d (slope of the per-d mean against ln d above two s.e.,
    as the Figure S3 row ``p2-direct-flow-twr-grows-*``; three sizes or more).
    It fails only when two s.e. of the slope are below :data:`TRAPPED_RESOLUTION`
    of T_wr at the largest d, i.e. when a growth would have been seen;
    otherwise a slope within two s.e. of 0 is not decisive.
    For tied W with Rademacher tokens this is our prediction (ρ₀ = 0,
    ``docs/paper2.md`` §10), against the flat T_wr of Gaussian tokens.  A run
    that does not cross counts at its end, which can only lower the slope.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence

import numpy as np

from aimrepro.claims.table import FAIL, INFORMATIONAL, PASS, ClaimRow, claim_row
from aimrepro.claims.trends import UNTESTED_FORM, fit_finite_size, judge_trend, log_slope, mean_and_sem
from aimrepro.model import TokenLaw

__all__ = ["FLOW_TWR_REL_TOL", "TRAPPED_RESOLUTION", "paper2_token_laws_claims"]

#: Tolerance of a gap, relative to the reference flow's mean T_wr at the largest d (the Figure S3 rows').
FLOW_TWR_REL_TOL = 0.1

#: A trapped row decides "T_wr does not grow" only when two errors of its slope in ln d are below this
#: fraction of the mean T_wr at the largest d (a growth of 10 % of T_wr per e-fold of d would be seen).
TRAPPED_RESOLUTION = 0.1

_row = functools.partial(claim_row, "paper2")
_SECTION = "§10 (beyond the papers), §5.1–5.2"


def _gaps(summaries: Sequence[Mapping], flow: str) -> tuple[np.ndarray, np.ndarray, int]:
    """Gaps T_wr(SGD) − T_wr(flow) of the replicates where both cross; lower bounds where only the flow does."""
    crossed, bounds, missing = [], [], 0
    for s in summaries:
        flow_time = s[f"{flow}_t_wr"]
        if not math.isfinite(flow_time):
            missing += 1
        elif math.isfinite(s["sgd_t_wr"]):
            crossed.append(s["sgd_t_wr"] - flow_time)
        else:
            bounds.append(s["sgd_end"] - flow_time)
    return np.array(crossed), np.array(bounds), missing


def _flow_times(summaries: Sequence[Mapping], flow: str) -> str:
    times = [s[f"{flow}_t_wr"] for s in summaries]
    finite = [t for t in times if math.isfinite(t)]
    text = f"{np.mean(finite):.3f}" if finite else "none"
    return text + (f" ({len(times) - len(finite)} of {len(times)} not crossing)" if len(finite) < len(times) else "")


def _trapped(param: str, link: str, flow: str, law: TokenLaw) -> bool:
    """The flow keeps the uninformative start (h2, §10): direct S (either flow), tied W's law flow for κ₄ = −2."""
    return link == "h2" and (param == "direct" or (flow == "law_flow" and law.excess_kurtosis <= -2.0 + 1e-12))


def _trapped_row(param: str, link: str, token: str, runs: Mapping[int, Sequence[Mapping]], diverges: str,
                 threshold: float) -> ClaimRow:
    """SGD's T_wr grows with d where the law's flow is trapped (module notes, row ``...-trapped``)."""
    dims = sorted(runs)
    why = ("for tied W only through the tokens: kappa4 = -2 makes the trace part invisible, rho0 = 0 (ours)"
           if param == "tied" else "for every law, as for Gaussian tokens by [P Cor. 7]")
    row = functools.partial(
        _row, id=f"p2-tokens-{param}-{link}-{token}-trapped", section=f"{_SECTION}, [P Cor. 7]",
        claim=(f"{param}, {link}, {token} tokens: the law's flow is trapped at the uninformative start ({why}), "
               f"so SGD's weak-recovery time grows with d"),
        expected="slope in ln d > 2 s.e.", tolerance="slope > 2 s.e.")
    if diverges:
        return row(measured="SGD blew up", verdict=INFORMATIONAL,
                   note=f"SGD blows up before weak recovery ({diverges}): no escape to time")
    # a run not crossing counts at its end: a lower bound of its T_wr, which can only flatten the slope
    times = {d: np.array([s["sgd_t_wr"] if math.isfinite(s["sgd_t_wr"]) else s["sgd_end"] for s in runs[d]])
             for d in dims if runs[d]}
    censored = {d: sum(not math.isfinite(s["sgd_t_wr"]) for s in runs[d]) for d in dims}
    if len(times) < 3:
        return row(measured="fewer than three sizes", verdict=INFORMATIONAL,
                   note=f"a growth in ln d needs three sizes or more; sizes here: {', '.join(map(str, dims))}")
    slope, se, stats = log_slope(times)
    per_d = "; ".join(f"d = {d}: {m:.3f} ± {e:.2g} ({n} runs" + (f", {censored[d]} not crossing by their end"
                                                                 if censored[d] else "") + ")"
                      for d, m, e, n in stats)
    note = f"SGD T_wr (|p12|/p22 >= {threshold:g}) mean ± error of the mean: {per_d}"
    if not math.isfinite(se):
        return row(measured=f"dT_wr/d ln d = {slope:.3f}", verdict=INFORMATIONAL,
                   note=f"{note}; no replicate spread at any d, so no error bar for the slope")
    measured = f"dT_wr/d ln d = {slope:.3f} ± {se:.2g}"
    if slope > 2 * se:
        return row(measured=measured, verdict=PASS, note=note)
    # a flat T_wr is shown only when the slope's error could have seen a growth of TRAPPED_RESOLUTION T_wr
    resolution = TRAPPED_RESOLUTION * stats[-1][1]
    if 2 * se <= resolution:
        return row(measured=measured, verdict=FAIL,
                   note=f"{note}; T_wr does not grow: 2 s.e. = {2 * se:.2g} would have seen a growth of "
                        f"{TRAPPED_RESOLUTION:g} T_wr(d = {stats[-1][0]}) = {resolution:.2g} per e-fold of d")
    return row(measured=measured, verdict=INFORMATIONAL,
               note=f"{note}; not decisive: 2 s.e. = {2 * se:.2g} is above {TRAPPED_RESOLUTION:g} T_wr(d = "
                    f"{stats[-1][0]}) = {resolution:.2g} per e-fold of d, the growth a decision needs to resolve; "
                    f"more replicates or a wider range of d needed")


def _rows_for(param: str, link: str, token: str, runs: Mapping[int, Sequence[Mapping]], threshold: float,
              tolerance: float) -> list[ClaimRow]:
    law = TokenLaw.parse(token)
    dims = sorted(runs)
    rows = []
    # a run that blew up after crossing has a valid T_wr; one that blew up before has none
    blown = {d: [s for s in runs[d] if s["blew_up"] and not math.isfinite(s["sgd_t_wr"])] for d in dims}
    where = ", ".join(f"d={d}: {len(v)} of {len(runs[d])} (first at t = {min(s['t_blowup'] for s in v):.3g})"
                      for d, v in blown.items() if v)
    # SGD does not follow any flow when it blows up on half the runs of the largest d; rarer blow-ups
    # (the largest per-sample rate is at the smallest d) leave the other runs to be judged
    diverges = 2 * len(blown[dims[-1]]) >= len(runs[dims[-1]])
    dropped = ""
    if not diverges:
        # a smaller d where half the runs or more blew up is out of the stable range of the per-sample rate
        # for this law (largest at the smallest d): its survivors are a selected sample, not the d's runs
        unstable = [d for d in dims if 2 * len(blown[d]) >= len(runs[d])]
        if unstable:
            dropped = ("; left out of the trend, where half the runs or more blew up before crossing (the "
                       "survivors are a selected sample): " + ", ".join(f"d={d}" for d in unstable))
        dims = [d for d in dims if d not in unstable]
        runs = {d: [s for s in runs[d] if s not in blown[d]] for d in dims}
    if _trapped(param, link, "law_flow", law):
        rows.append(_trapped_row(param, link, token, runs, where if diverges else "", threshold))
    unit = "t = 4αn/d" if param == "tied" else "t = αn/d"
    for flow, words in (("gaussian_flow", "the Gaussian population flow (the paper's theory)"),
                        ("law_flow", f"the flow of the law's population loss, kappa4 = {law.excess_kurtosis:g} "
                                     f"(ours)")):
        row = functools.partial(
            _row, id=f"p2-tokens-{param}-{link}-{token}-{flow.replace('_', '-')}", section=_SECTION,
            claim=(f"{param}, {link}, {token} tokens: SGD crosses |p12|/p22 >= {threshold:g} when {words}, "
                   f"same initial state, does, as d grows"), expected=0.0)
        times = "; ".join(f"d={d}: {_flow_times(runs[d], flow)}" for d in dims)
        largest = [s[f"{flow}_t_wr"] for s in runs[dims[-1]] if math.isfinite(s[f"{flow}_t_wr"])]
        scale = tolerance * float(np.mean(largest)) if largest else math.nan
        tolerance_text = (f"|e∞| <= {tolerance:g} T_wr(flow, d = {dims[-1]}) = {scale:.3g} + 2 s.e., 1/d form "
                          f"consistent" if largest else f"{tolerance:g} T_wr(flow) (the flow does not cross)")
        if diverges:
            reason = (f"SGD blows up before weak recovery: {where}"
                      + ("; the expected h2 loss is finite only if E x^8 < inf, and this law has E x^8 = inf"
                         if law.name == "student_t" and law.dof <= 8 else ""))
            if flow == "gaussian_flow":
                rows.append(row(measured="SGD blew up", tolerance=tolerance_text, verdict=FAIL,
                                note=f"{reason}; flow T_wr {times}"))
            else:
                rows.append(row(measured="SGD blew up", tolerance=tolerance_text, verdict=INFORMATIONAL,
                                note=f"{reason}; the law's flow (which needs only E x^4 < inf) describes no run; "
                                     f"flow T_wr {times}"))
            continue
        per_d, bounds, missing = {}, {}, {}
        for d in dims:
            per_d[d], bounds[d], missing[d] = _gaps(runs[d], flow)
        counts = "; ".join(f"d={d}: {per_d[d].size} crossed, {bounds[d].size} not by their end, "
                           f"{missing[d]} {'flow' if missing[d] == 1 else 'flows'} not crossing" for d in dims)
        if where:
            counts += f"; left out, blown up before crossing: {where}{dropped}"
        trapped = _trapped(param, link, flow, law)
        if trapped:
            counts += ("; no claim: the flow is trapped at the uninformative start (§10), its escape time grows "
                       "like ln d, beyond the O(1) times on which a flow describes SGD, and SGD's noise sets its "
                       "crossing at the same order as the initial overlap; the claim is the row "
                       f"p2-tokens-{param}-{link}-{token}-trapped")
        censored = any(bounds[d].size for d in dims)
        gaps = {d: mean_and_sem(np.concatenate([per_d[d], bounds[d]])) for d in dims}
        if (len(dims) >= 2 and math.isfinite(scale) and not trapped
                and all(n >= 2 and math.isfinite(se) for _, se, n in gaps.values())):
            first, last = gaps[dims[0]], gaps[dims[-1]]
            above = all(m - 2 * se > scale for m, se, _ in gaps.values())
            below = not censored and all(m + 2 * se < -scale for m, se, _ in gaps.values())
            shrinking = abs(last[0]) < abs(first[0]) - 2 * math.hypot(first[1], last[1])
            if (above or below) and not shrinking:
                rows.append(row(
                    measured=last[0], tolerance=tolerance_text, verdict=FAIL,
                    note=(f"T_wr(SGD) − T_wr(flow) per replicate ({unit}"
                          + ("; a run not crossing counts at its end, a lower bound" if censored else "")
                          + "), mean ± error of the mean: "
                          + "; ".join(f"d = {d}: {'>= ' if bounds[d].size else ''}{m:+.3f} ± {se:.2g}"
                                      for d, (m, se, _) in gaps.items())
                          + f"; beyond the tolerance by more than two errors at every d and not shrinking: "
                            f"a deviation of order one; {counts}; flow T_wr {times}")))
                continue
        usable = {d: v for d, v in per_d.items() if v.size >= 2 and np.std(v) > 0}
        if censored:
            rows.append(row(measured="too few crossings", tolerance=tolerance_text, verdict=INFORMATIONAL,
                            note=f"not every replicate crosses with its flow within the horizon (a longer "
                                 f"horizon is needed): {counts}; flow T_wr {times}"))
            continue
        if len(usable) < 2 or not math.isfinite(scale):
            rows.append(row(measured="fewer than two sizes", tolerance=tolerance_text, verdict=INFORMATIONAL,
                            note=f"a trend needs two sizes with two crossing runs or more (three to test its "
                                 f"form); here: {counts}; flow T_wr {times}"))
            continue
        trend = fit_finite_size(list(usable), [float(v.mean()) for v in usable.values()],
                                [float(v.std(ddof=1) / math.sqrt(v.size)) for v in usable.values()],
                                [v.size for v in usable.values()])
        note = (f"T_wr(SGD) − T_wr(flow) per replicate ({unit}), mean ± error of the mean: {trend.per_d_text()}; "
                f"{trend.fit_text()}; {counts}; flow T_wr {times}")
        if trend.dof < 1 or trapped:
            rows.append(row(measured=trend.limit, tolerance=tolerance_text, verdict=INFORMATIONAL,
                            note=note if trapped else f"{note}; {UNTESTED_FORM}"))
            continue
        if math.isfinite(trend.limit_se) and not trend.within(scale):
            # excluded from the tolerance band by more than two s.e.: decided, however large the s.e.
            rows.append(row(measured=trend.limit, tolerance=tolerance_text, verdict=FAIL,
                            note=f"{note}; e∞ is beyond the tolerance by more than two s.e.: the law's SGD "
                                 f"does not follow this flow as d grows"))
            continue
        rows.append(row(measured=trend.limit, tolerance=tolerance_text, **judge_trend(
            trend, scale, trend.consistent and trend.within(scale), note)))
    return rows


def paper2_token_laws_claims(runs: Mapping[tuple[str, str, str, int], Sequence[Mapping]], *, threshold: float,
                             tolerance: float = FLOW_TWR_REL_TOL) -> list[ClaimRow]:
    """All token-law rows of paper 2 (module notes).

    Parameters
    ----------
    runs : {(param, link, law token, d): per replicate ``analysis.law_run_summary`` dicts};
        Gaussian entries are ignored (their rows are Figure S3's)
    threshold : the weak-recovery threshold on |p12|/p22 the summaries used
    tolerance : the relative tolerance of a gap (:data:`FLOW_TWR_REL_TOL`)
    """
    grouped: dict[tuple[str, str, str], dict[int, Sequence[Mapping]]] = {}
    for (param, link, token, d), summaries in runs.items():
        if TokenLaw.parse(token).is_gaussian or not summaries:
            continue
        grouped.setdefault((param, link, token), {})[int(d)] = summaries
    rows = []
    for (param, link, token), per_d in sorted(grouped.items()):
        rows += _rows_for(param, link, token, per_d, threshold, tolerance)
    return rows
